"""Inspect AI logs of samples, read and decoded once while their file is unchanged.

Takes the path of a file about to be read whole (`file_key`: its identity, or None when it
cannot be looked at), and gives the `Items` kept for it (`kept`, `kept_at`) when it is the
log of samples read last and has not changed since: the same device, inode, size
and modification time, the test `linecache` and Python's bytecode cache make. Takes the
`Items` just read from a file (`keep`) and keeps them when they are such a log.

Why: a suite makes a case of each sample of a log, and each case reads its own sample,
once when it is checked and once when it runs, so a log of N samples was read and decoded
2N times (a log of 400 samples, 6.6 MiB: `evaldsl run` took 33 s). One log is kept at
most, so what it holds is what reading it once takes. The kept items are never changed:
reading a sample (`inspect_ai.read_inspect`) builds its events anew.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evaldsl.runs.providers import Items

#: A file's identity: its path, device, inode, size and modification time (ns).
FileKey = tuple[str, int, int, int, int]

_KEPT: list[tuple[FileKey, Items]] = []


def file_key(path: str) -> FileKey | None:
    """The identity of the file at `path` now, or None when it cannot be looked at (its
    reading then reports why)."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (path, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def kept(key: FileKey | None) -> Items | None:
    """The items kept for the file of identity `key`, if any."""
    # (one copy of the list, taken at once: another thread may replace what it holds
    # between two looks, and the items returned must be those of the key compared)
    held = _KEPT[:]
    if key is None or not held or held[0][0] != key:
        return None
    return held[0][1]


def kept_at(path: str) -> Items | None:
    """The items kept for the file at `path`, if it is unchanged (`kept`); its identity is
    looked at only when a log is kept."""
    return kept(file_key(path)) if _KEPT else None


def keep(key: FileKey | None, items: Items) -> None:
    """Keep `items`, read from the file of identity `key` (taken before it was read), when
    they are an Inspect AI log of samples. (One sample too: a suite's expansion, or
    `evaldsl inspect`, looks at a log for its samples before its run is read, and a log of
    one sample was read whole twice, its case's check and run a third time.)"""
    if key is None or items.container != "document" or len(items.values) != 1:
        return
    doc: Any = items.values[0]
    if not isinstance(doc, dict) or not isinstance(doc.get("samples"), list):
        return
    if not doc["samples"]:
        return
    from evaldsl.runs.inspect_ai import is_eval_log

    if is_eval_log(doc):
        _KEPT[:] = [(key, items)]


def forget() -> None:
    """Let go of the log kept (the next reading of any file reads it)."""
    _KEPT.clear()
