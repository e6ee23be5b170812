"""The user's private cache folder: where evaldsl keeps what it made once and may reuse.

Takes a file name in the folder (`$XDG_CACHE_HOME/evaldsl`, else `~/.cache/evaldsl`) and
gives its bytes, or writes them. Used for the parser's tables when the shipped ones do not
fit (`syntax/tables.py`) and for compiled code (`cache/compiled.py`).

What is read from here is trusted (the tables are data, but compiled code runs), so the
folder is made private (0700) and a file is read only when it and its folder belong to
this user and nobody else may write them: on a multi-user host nobody else can put
anything here for evaldsl to load. A file that cannot be read is `None`, a write that
fails is skipped: a cache is never an error.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path


def cache_dir() -> Path:
    """The user's own cache folder for evaldsl."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "evaldsl"


def is_private(path: Path) -> bool:
    """Owned by this user and writable by nobody else (on systems with owners)."""
    if not hasattr(os, "getuid"):
        return True
    try:
        info = path.stat()
    except OSError:
        return False
    return info.st_uid == os.getuid() and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def read_private(path: Path) -> bytes | None:
    """The bytes of `path` when it and its folder are private (else, or unreadable, None)."""
    if not (is_private(path.parent) and is_private(path)):
        return None
    try:
        return path.read_bytes()
    except OSError:
        return None


def write_private(path: Path, data: bytes) -> None:
    """Write `path` atomically in a private folder (made when missing); any failure is
    ignored."""
    import tempfile  # only when something is written: most starts write nothing

    with contextlib.suppress(OSError):
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not is_private(path.parent):
            return
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}-", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
