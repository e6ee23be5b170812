"""The runner: cases → results (runs produced or read, scored, in parallel).

`run_suites` and `RunOptions` (in `core`) are the entry points; `results` holds the records
every report reads. The entry points are loaded on first use, so that reading a result
record does not load the machinery of running (processes, asyncio).
"""

from evaldsl.lazyattrs import lazy_attributes

__all__ = ["RunInterrupted", "RunOptions", "run_suites"]

__getattr__ = lazy_attributes(__name__, dict.fromkeys(__all__, "evaldsl.runner.core"))
