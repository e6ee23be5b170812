"""Pausing the cyclic garbage collector around bulk work.

Takes a block of code (a `with` statement) and runs it with the collector paused: decoding a
million events or compiling a large file builds many small objects and no cycles, and the
collections their allocations would trigger only rescan the growing heap. Used by the run
index (decoding) and by compiling (programs and suites).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


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
        if long_lived and gc.get_freeze_count() == 0:
            gc.freeze()
            gc.unfreeze()
        if was_enabled:
            gc.enable()
