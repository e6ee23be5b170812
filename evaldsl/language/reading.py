"""Reading files the user names: regular files only, and never more than a limit.

Takes a path and a size limit and gives the file's bytes (`read_regular`) or an open
binary file (`open_regular`), or raises `FileProblem` saying in the user's words what is
wrong: missing, a folder, a named pipe, a device or a socket (`/dev/stdin`, `/dev/zero`, a
FIFO), unreadable, or larger than the limit. A FIFO or a device is refused before a byte
is read, so naming one never blocks a command, the judge cache or the language server:
the file is opened without blocking and checked on the open descriptor (no race between a
check and the open). It also says what a file is by its name or its first bytes: a YAML or
JSON suite (`YAML_SUFFIXES`), a ZIP archive (`starts_as_zip`); and walks a folder the user
names for its files (`walk_folder`: linked folders too, unreadable ones said).

    >>> try:
    ...     read_regular("/dev/zero", 10)
    ... except FileProblem as why:
    ...     print(why.kind, why)
    special "/dev/zero" is a character device, not a file
"""

from __future__ import annotations

import os
import stat
from typing import BinaryIO, Literal

ProblemKind = Literal["missing", "folder", "special", "unreadable", "too-large"]

_PIECE = 1 << 20  # what is read at a time past the size a file says it has

_KINDS = (
    (stat.S_ISFIFO, "a named pipe"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class FileProblem(OSError):
    """Why a named file cannot be read; `kind` says which way (`missing`, `folder`, …)."""

    def __init__(self, message: str, kind: ProblemKind, path: str) -> None:
        super().__init__(message)
        self.message = message
        self.kind: ProblemKind = kind
        self.path = path

    def __str__(self) -> str:
        return self.message

    def __reduce__(self) -> tuple[object, ...]:
        return (FileProblem, (self.message, self.kind, self.path))


def size_text(size: int) -> str:
    """A byte count for messages: `64 MiB`, `1 KiB`, `12 bytes`."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size:,} bytes"


def _what(mode: int) -> str | None:
    for test, name in _KINDS:
        if test(mode):
            return name
    return None


#: Entries of a folder read for a hint that names what is near (a missing file's slip, a
#: module's): a larger folder is not read past them (it can hold millions).
NEAR_ENTRIES = 10_000


def near_entries(folder: str | os.PathLike[str]) -> list[os.DirEntry[str]]:
    """The first `NEAR_ENTRIES` entries of `folder`, [] where it cannot be read (a hint is
    then not given; the error it was for stays)."""
    found: list[os.DirEntry[str]] = []
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                if len(found) == NEAR_ENTRIES:
                    break
                found.append(entry)
    except OSError:
        return []
    return found


def present(path: str | os.PathLike[str]) -> bool:
    """Whether something is at `path`, for a command that reads it next: True also when
    it cannot be looked at for another reason than its absence (a name too long, a
    folder that may not be entered, a loop of links), so that reading it says why
    (`open_regular`), where `Path.exists` raises.

    >>> present("/"), present("/no/such/file"), present("x" * 300)
    (True, False, True)
    """
    try:
        os.stat(path)
    except (FileNotFoundError, NotADirectoryError, ValueError):  # (ValueError: a NUL)
        return False
    except OSError:
        return True
    return True


def broken_link(path: str | os.PathLike[str]) -> str | None:
    """Why a path that is not `present` is missing, when it is a link to nothing: the hint
    that names the link's target (a did-you-mean would offer the link's own name)."""
    try:
        target = os.readlink(path)
    except (OSError, ValueError):  # (not a link, or cannot be looked at)
        return None
    return (
        f'"{os.fsdecode(path)}" is a link to "{os.fsdecode(target)}", which does not exist: '
        "fix the link, or name the file it should point to"
    )


#: Folders a walk for suites passes by: hidden ones (`.git`, `.venv`) and what package
#: tools fill.
PASSED_BY = ("node_modules", "__pycache__")


def broken_suite_link(path: str | os.PathLike[str]) -> str | None:
    """Why a `.eval` file a folder holds cannot be read when it is a link to nothing (a
    suite moved or deleted, its link left behind): its suite would not run, and a run
    that passed without it would say nothing. Other files that are not regular (a pipe,
    a device) are passed by, as every file that holds no suite is."""
    if (
        not os.fspath(path).lower().endswith(".eval")
        or not os.path.islink(path)
        or os.path.exists(path)
    ):
        return None
    try:
        target = os.readlink(path)
    except OSError:  # (gone since: nothing to say of it)
        return None
    return f'cannot read suite "{path}": it is a link to "{target}", which does not exist'


def walk_folder(root: str | os.PathLike[str]) -> tuple[list[str], list[str]]:
    """The files under folder `root` (paths as `root` joined with the names walked, in
    the order `sorted(Path.rglob("*"))` gives), hidden entries and `PASSED_BY` folders
    passed by, and why each folder under it that cannot be read was not (`cannot read
    folder "X": Permission denied`). A linked folder outside `root` is walked too, each
    folder once (a link back to a folder above would never end); one inside it is its
    folder's other name, passed by. `Path.rglob` passed every linked folder by, and
    every unreadable one, silently: the suites in them were never run.

    >>> import tempfile, pathlib
    >>> top, away = pathlib.Path(tempfile.mkdtemp()), pathlib.Path(tempfile.mkdtemp())
    >>> for folder in (top / "b", away / "c"):
    ...     folder.mkdir(); (folder / "x.eval").touch()
    >>> (top / "a").symlink_to(top / "b"); (top / "c").symlink_to(away / "c")
    >>> (away / "c" / "up").symlink_to(top)
    >>> [p.removeprefix(str(top)) for p in walk_folder(top)[0]]
    ['/b/x.eval', '/c/x.eval']
    >>> import shutil; shutil.rmtree(top); shutil.rmtree(away)
    """
    files: list[tuple[tuple[str, ...], str]] = []
    unreadable: list[str] = []
    top = os.path.realpath(root)
    walked: set[tuple[int, int]] = set()
    stack: list[tuple[str, tuple[str, ...]]] = [(os.fspath(root), ())]
    while stack:
        folder, parts = stack.pop()
        try:
            found = os.stat(folder)
            if (found.st_dev, found.st_ino) in walked:
                continue  # (a folder reached again through a link: walked once)
            walked.add((found.st_dev, found.st_ino))
            entries = list(os.scandir(folder))
        except OSError as err:
            unreadable.append(f'cannot read folder "{folder}": {err.strerror or err}')
            continue
        for entry in entries:
            name = entry.name
            if name.startswith(".") or name in PASSED_BY:
                continue
            try:
                is_dir = entry.is_dir()  # (a link to a folder too)
                if is_dir and entry.is_symlink():
                    target = os.path.realpath(entry.path)
                    if target == top or target.startswith(top.rstrip(os.sep) + os.sep):
                        continue  # (a folder of the walk's own, by another name)
            except OSError:
                is_dir = False
            if is_dir:
                stack.append((entry.path, (*parts, name)))
            else:
                files.append(((*parts, name), entry.path))
    return [path for _, path in sorted(files)], sorted(unreadable)


def is_folder(path: str | os.PathLike[str]) -> bool:
    """`Path.is_dir`, False where the path cannot be looked at (where `Path.is_dir`
    raises: a name too long, a folder that may not be entered); reading it says why."""
    return stat.S_ISDIR(_mode(path))


def is_regular(path: str | os.PathLike[str]) -> bool:
    """`Path.is_file`, False where the path cannot be looked at (see `is_folder`)."""
    return stat.S_ISREG(_mode(path))


def _mode(path: str | os.PathLike[str]) -> int:
    """The mode `os.stat` gives, 0 (nothing) where the path cannot be looked at."""
    try:
        return os.stat(path).st_mode
    except (OSError, ValueError):  # (ValueError: a NUL)
        return 0


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """`path` opened for reading in binary, when it is a regular file; else `FileProblem`."""
    shown = os.fsdecode(path)
    try:
        # O_NONBLOCK: opening a FIFO with no writer would wait forever without it
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise FileProblem(f'file not found: "{shown}"', "missing", shown) from None
    except IsADirectoryError:
        raise FileProblem(f'"{shown}" is a folder, not a file', "folder", shown) from None
    except OSError as err:
        reason = err.strerror or type(err).__name__
        raise FileProblem(f'cannot read "{shown}": {reason}', "unreadable", shown) from None
    except ValueError:  # a NUL character: no file has such a name
        shown = shown.replace("\x00", "\\x00")
        raise FileProblem(f'file not found: "{shown}"', "missing", shown) from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise FileProblem(f'"{shown}" is a folder, not a file', "folder", shown)
        what = _what(mode)
        if what is not None or not stat.S_ISREG(mode):
            raise FileProblem(
                f'"{shown}" is {what or "not a regular file"}, not a file', "special", shown
            )
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: str | os.PathLike[str], limit: int) -> bytes:
    """The bytes of a regular file of at most `limit` bytes; else `FileProblem`.

    Reads at most `limit + 1` bytes whatever the file claims, so a file that grows while
    it is read is refused too.
    """
    shown = os.fsdecode(path)
    with open_regular(path) as f:
        try:
            size = os.fstat(f.fileno()).st_size
            if size > limit:
                raise _too_large(shown, limit)
            # `read(n)` allocates n bytes at once: ask for the size the file says it has
            # (and one byte more, to see it grow), then in pieces (files in /proc say 0)
            parts: list[bytes] = []
            total, want = 0, size + 1
            while total <= limit:
                part = f.read(min(want, limit + 1 - total))
                if not part:
                    break
                parts.append(part)
                total += len(part)
                want = _PIECE
        except FileProblem:
            raise
        except OSError as err:
            reason = err.strerror or type(err).__name__
            raise FileProblem(f'cannot read "{shown}": {reason}', "unreadable", shown) from None
    if total > limit:
        raise _too_large(shown, limit)
    return parts[0] if len(parts) == 1 else b"".join(parts)


def _too_large(shown: str, limit: int) -> FileProblem:
    return FileProblem(
        f'"{shown}" is larger than {size_text(limit)}, the most evaldsl reads of such a file',
        "too-large",
        shown,
    )


#: The first bytes of a ZIP archive (a local file header): an Inspect AI `.eval` log is
#: one, and an evaldsl suite never is (`runs/inspectzip.py`).
#: The names of YAML and JSON suite files, which the YAML front end reads (any other name
#: is `.eval` text, or a file of another kind).
YAML_SUFFIXES = (".yaml", ".yml", ".json")

ZIP_MAGIC = b"PK\x03\x04"


#: How every SQLite database file starts (the first 16 bytes of its header).
SQLITE_MAGIC = b"SQLite format 3\x00"


def starts_as_sqlite(path: str | os.PathLike[str]) -> bool:
    """Whether `path` is a regular file that starts as a SQLite database does (False for
    anything that cannot be read)."""
    try:
        with open_regular(path) as f:
            return f.read(len(SQLITE_MAGIC)) == SQLITE_MAGIC
    except (FileProblem, OSError):
        return False


def starts_as_zip(path: str | os.PathLike[str]) -> bool:
    """Whether `path` is a regular file that starts as a ZIP archive (False for anything
    that cannot be read: its reading says why)."""
    try:
        with open_regular(path) as f:
            return f.read(len(ZIP_MAGIC)) == ZIP_MAGIC
    except (FileProblem, OSError):
        return False
