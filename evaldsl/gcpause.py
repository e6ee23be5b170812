"""Pausing the cyclic garbage collector around bulk work.

Takes a block of code (a `with` statement) and runs it with the collector paused: decoding a
million events or compiling a large file builds many small objects and no cycles, and the
collections their allocations would trigger only rescan the growing heap. Used by the run
index (decoding), reading a file whole and compiling (programs and suites); and the frozen
set `-j` forks its workers under (`frozen_for_workers`).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

#: Whether this process's frozen set is known not to be empty: inside `frozen_for_workers`,
#: and in every process forked there.
_FROZEN_HERE = False


@contextmanager
def frozen_for_workers() -> Iterator[None]:
    """Freeze every object now, for the processes forked in the block: frozen objects are
    never collected, so a worker shares them with its parent instead of copying the pages
    a collection would touch. Left as it is when the application froze objects itself.

    In the block, and in the processes forked in it, `paused_gc(long_lived=True)` knows
    that the frozen set is not empty without asking `gc.get_freeze_count()`, which counts
    it object by object: in a forked worker, a walk over every object it shares with its
    parent at each compile and each reading, and a copy of each page it touched."""
    global _FROZEN_HERE
    freeze = gc.get_freeze_count() == 0
    if freeze:
        gc.freeze()
    was, _FROZEN_HERE = _FROZEN_HERE, True
    try:
        yield
    finally:
        _FROZEN_HERE = was
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
