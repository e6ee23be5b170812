"""Small recordings read once a command: a file's bytes kept from its first open.

Takes the run files `model.open_file` opens and, while `reading_once()` is in force (the
`check` and `run` commands, and one check of a suite's text by `build.check_text`, the
language server's check after each edit), gives every open after the first of a regular
file of at most `HOLD_BYTES` a `HeldFile` over the bytes that first open read. A case's
recording is opened up to seven times in a `run`: at check time to look for Inspect AI
samples, to detect its format, to read its head's events and its tool names; at run
time to detect it again, for the pass and for its first event's time. Each open of a
small file cost ~17 µs on the development machine (open, fstat, two fcntl, a buffer,
close), a `HeldFile` ~1 µs: about a tenth of a `run` of 200 cases on small cassettes.

- Only inside `reading_once()`, and only in the thread that entered it. There a file is
  read as it was at its first open, so the check and the run of one command see the same
  bytes. Between two checks of the language server, or two calls of the API, nothing is
  kept: a file may change between them, and its stat does not tell reliably when (a file
  rewritten within the clock's tick with the same size keeps its size, inode and time).
- Bounded: a file larger than `HOLD_BYTES` is opened every time, as before (a large
  recording is read once by its pass anyway); at most `HOLD_TOTAL` bytes are kept a
  command, and past that no new file is (those kept stay, for their runs).
- A file that cannot be opened is never kept: every open tries it again and gives the
  same `FileProblem`, which the caller words.
- Forked `-j` workers start with what the parent kept, and keep their own.

A reading also holds one larger value at most (`hold`, `held_value`, `let_go`): the run
a case's check read from a document read whole, which the case's run then takes instead
of reading the file again (`runs/heldruns.py` says when).
"""

from __future__ import annotations

import contextlib
import io
import os
import threading
from collections.abc import Callable, Hashable, Iterator
from typing import Any, BinaryIO, TypeVar, cast

T = TypeVar("T")

#: The largest file kept (its bytes, read whole at its first open).
HOLD_BYTES = 64 * 1024
#: The most bytes kept by one command.
HOLD_TOTAL = 32 * 1024 * 1024


class HeldFile(io.BytesIO):
    """A run file's bytes, as read at its first open in this command (no descriptor:
    `fileno()` raises `io.UnsupportedOperation`, an `OSError`)."""


class _Held(threading.local):
    """The files kept by the command in progress in this thread (`kept` None: none), and
    what was learnt from them (`learnt`): the language server checks in a thread of its
    own while its main thread answers."""

    kept: dict[str, bytes] | None = None
    total = 0
    learnt: dict[Hashable, Any] | None = None
    one: object = None  # the one larger value held (`hold`)


_HELD = _Held()


@contextlib.contextmanager
def reading_once() -> Iterator[None]:
    """Keep the small files this thread opens through `model.open_file` until the block
    ends (nested: the outer block's files stay kept)."""
    if _HELD.kept is not None:
        yield
        return
    _HELD.kept, _HELD.total, _HELD.learnt, _HELD.one = {}, 0, {}, None
    try:
        yield
    finally:
        _HELD.kept, _HELD.total, _HELD.learnt, _HELD.one = None, 0, None, None


def learnt(key: Hashable, learn: Callable[[], T]) -> T:
    """`learn()`, once per `key` in a reading (what a file's kept bytes tell, asked by
    many cases of a suite that name the file); outside one, `learn()` every time. What
    `learn` gives is shared, so it must not be changed."""
    memo = _HELD.learnt
    if memo is None:
        return learn()
    try:
        return cast(T, memo[key])
    except KeyError:
        found = memo[key] = learn()
        return found


def held(path: str) -> HeldFile | None:
    """The kept bytes of `path` as a new file at its start, if this command kept them."""
    kept = _HELD.kept
    if kept is None:
        return None
    data = kept.get(path)
    return None if data is None else HeldFile(data)


def keep(path: str, f: BinaryIO) -> BinaryIO:
    """`f` (just opened, at its start) as the file to read: a `HeldFile` over its bytes,
    kept for the next opens, when a command keeps files and it is small enough; else `f`
    itself, still at its start. An `OSError` reading it closes `f` and is raised."""
    kept = _HELD.kept
    if kept is None or _HELD.total >= HOLD_TOTAL:
        return f
    try:
        if os.fstat(f.fileno()).st_size > HOLD_BYTES:
            return f
        data = f.read(HOLD_BYTES + 1)
        if len(data) > HOLD_BYTES:  # it grew since its size was read: read it as a file
            f.seek(0)
            return f
    except BaseException:
        f.close()
        raise
    f.close()
    kept[path] = data
    _HELD.total += len(data)
    return HeldFile(data)


def hold(value: object) -> None:
    """Hold `value` as this reading's one larger value, in place of any held before;
    outside a reading, nothing is held."""
    if _HELD.kept is not None:
        _HELD.one = value


def held_value() -> object:
    """The value this reading holds (`hold`), or None."""
    return _HELD.one


def let_go() -> None:
    """Let go of the value this reading holds, if any."""
    _HELD.one = None
