"""Files written whole or not at all: reports (`--json`, `--junit`, `--markdown`) and `fmt`.

Takes a path and text, and gives a file that holds all of the text or — when writing
fails (a full disk, a size limit, Ctrl-C) — the file as it was before, with no temporary
file left behind. The text goes to a temporary file beside the target, is flushed to the
disk, and is renamed over the target, so a reader sees the old file or the new one,
never half of one. A path that exists and is no regular file (a device, a named pipe,
`/dev/stdout`, a shell's `>(…)`) is written in place, as `tee` does: renaming a file
over it would put a regular file where the device or pipe was.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path


def write_atomically(path: str | os.PathLike[str], text: str) -> None:
    """Write `text` (UTF-8, newlines as given) to `path` whole or not at all.

    A symlink stays a symlink (the file it points to is replaced); an existing file keeps
    its permission bits, a new one gets the usual ones (0666 less the umask). Text that
    UTF-8 cannot hold (a lone surrogate) is written as a `\\udXXX` escape, never refused.
    Raises `OSError` when the file cannot be written; the old file is then untouched. A
    read-only file (no write permission bit) is refused (`PermissionError`), not replaced,
    even by root; a device or a pipe is opened and written (`write_in_place`).

    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> write_atomically(folder / "r.txt", "ok\\n")
    >>> (folder / "r.txt").read_text(), sorted(p.name for p in folder.iterdir())
    ('ok\\n', ['r.txt'])
    """
    try:
        found = os.stat(path)  # (through a symlink: /dev/stdout is a link to a pipe)
    except FileNotFoundError:
        mode = 0o666 & ~_umask()
    else:
        if not stat.S_ISREG(found.st_mode) and not stat.S_ISDIR(found.st_mode):
            write_in_place(path, text)
            return
        mode = stat.S_IMODE(found.st_mode)
        if not writable(path, found):
            raise PermissionError(errno.EACCES, "the file is read-only", os.fspath(path))
    target = Path(os.path.realpath(path))
    import tempfile  # only when a report is written: `run` imports this module every time

    data = text.encode("utf-8", errors="backslashreplace")
    fd, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())  # a full disk fails here, before the rename
        os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


def write_in_place(path: str | os.PathLike[str], text: str) -> None:
    """Open `path` and write `text` (UTF-8) to it: for a device or a pipe, which has no
    folder entry to rename over and no disk to flush to."""
    with open(path, "wb") as f:
        f.write(text.encode("utf-8", errors="backslashreplace"))


def writable(path: str | os.PathLike[str], found: os.stat_result) -> bool:
    """Whether the existing file `path` (its `found` status) may be written: the user may
    write it and some write permission bit is set (root may write any file; a file whose
    owner made it read-only is still not to be replaced)."""
    return bool(found.st_mode & 0o222) and os.access(path, os.W_OK)


def existing_above(path: str | os.PathLike[str]) -> str:
    """The nearest path above `path` that exists: its folder, or the first folder above
    it that was made (its folders are made when the file is written), or a file there.

    >>> existing_above("/no/such/folder/r.json")
    '/'
    """
    folder = os.path.dirname(os.path.abspath(path))
    while not os.path.lexists(folder) and os.path.dirname(folder) != folder:
        folder = os.path.dirname(folder)
    return folder


def file_above(path: str | os.PathLike[str]) -> str | None:
    """The nearest existing path above `path` when it is a file, under which no folder
    can be made (`md.eval/r.xml`); None when it is a folder.

    >>> file_above("/no/such/folder/r.json") is None, file_above(__file__ + "/r.json") == __file__
    (True, True)
    """
    above = existing_above(path)
    return above if os.path.exists(above) and not os.path.isdir(above) else None


def _umask() -> int:
    # The only way to read the umask is to set it; it is set straight back.
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
