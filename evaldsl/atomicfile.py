"""Files written whole or not at all: reports (`--json`, `--junit`, `--markdown`) and `fmt`.

Takes a path and text, and gives a file that holds all of the text or — when writing
fails (a full disk, a size limit, Ctrl-C) — the file as it was before, with no temporary
file left behind. The text goes to a temporary file beside the target, is flushed to the
disk, and is renamed over the target, so a reader sees the old file or the new one,
never half of one.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path


def write_atomically(path: str | os.PathLike[str], text: str) -> None:
    """Write `text` (UTF-8, newlines as given) to `path` whole or not at all.

    A symlink stays a symlink (the file it points to is replaced); an existing file keeps
    its permission bits, a new one gets the usual ones (0666 less the umask). Text that
    UTF-8 cannot hold (a lone surrogate) is written as a `\\udXXX` escape, never refused.
    Raises `OSError` when the file cannot be written; the old file is then untouched.

    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> write_atomically(folder / "r.txt", "ok\\n")
    >>> (folder / "r.txt").read_text(), sorted(p.name for p in folder.iterdir())
    ('ok\\n', ['r.txt'])
    """
    target = Path(os.path.realpath(path))
    try:
        mode = stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        mode = 0o666 & ~_umask()
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


def _umask() -> int:
    # The only way to read the umask is to set it; it is set straight back.
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
