"""Pausing the cyclic garbage collector around bulk work.

Takes a block of code (a `with` statement) and runs it with the collector paused: decoding a
million events or compiling a large file builds many small objects and no cycles, and the
collections their allocations would trigger only rescan the growing heap. Used by the run
index (decoding), reading a file whole and compiling (programs and suites); and the frozen
set a run's cases run under, and `-j` forks its workers in (`frozen_loaded`).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

#: Whether this process's frozen set is known not to be empty: inside `frozen_loaded`,
#: and in every process forked there.
_FROZEN_HERE = False


@contextmanager
def frozen_loaded() -> Iterator[None]:
    """Freeze every object now, for the block: what a run loaded before its cases (the
    suites, the modules) is never traversed by a collection while they run, and the
    processes forked in the block share it with their parent instead of copying the pages
    a collection would touch. Left as it is when the application froze objects itself,
    or when the block is inside another.

    A serial run needs it as much as `-j` does: `paused_gc(long_lived=True)` hands what it
    built to the oldest generation without CPython counting it there, so the interpreter
    still takes the heap for small, and after ten or so middle collections of a run's own
    garbage it collected the oldest generation in full, walking every loaded object once:
    3.6 s of 5.4 M objects in a run of 16,000 YAML cases, a run's cost growing faster than
    its cases.

    In the block, and in the processes forked in it, `paused_gc(long_lived=True)` knows
    that the frozen set is not empty without asking `gc.get_freeze_count()`, which counts
    it object by object: in a forked worker, a walk over every object it shares with its
    parent at each compile and each reading, and a copy of each page it touched."""
    global _FROZEN_HERE
    if _FROZEN_HERE:
        yield
        return
    freeze = gc.get_freeze_count() == 0
    if freeze:
        gc.freeze()
    _FROZEN_HERE = True
    try:
        yield
    finally:
        _FROZEN_HERE = False
        if freeze:
            gc.unfreeze()


@contextmanager
def paused_gc(*, long_lived: bool = False) -> Iterator[None]:
    """Pause the cyclic garbage collector around bulk work: it is 70-75% of the cost of
    materialising many small dicts, and decoded events hold no cycles.

    `long_lived=True` is for what outlives the block (a compiled program): its objects are
    handed straight to the oldest generation (`gc.freeze()` then `gc.unfreeze()`, two list
    splices), instead of being traversed by the young collections that would otherwise
    follow, which cost a sixth of compiling a large file. Skipped when the application has
    frozen objects itself (a pre-fork server), so its frozen set is never disturbed.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if long_lived and not _FROZEN_HERE and gc.get_freeze_count() == 0:
            gc.freeze()
            gc.unfreeze()
        if was_enabled:
            gc.enable()
