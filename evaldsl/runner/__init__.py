"""The runner: cases → results (runs produced or read, scored, in parallel).

`run_suites` and `RunOptions` (in `core`) are the entry points; `results` holds the records
every report reads. The entry points are loaded on first use, so that reading a result
record does not load the machinery of running (processes, asyncio).
"""

from typing import Any

__all__ = ["RunInterrupted", "RunOptions", "run_suites"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from evaldsl.runner import core

        return getattr(core, name)
    raise AttributeError(f"module 'evaldsl.runner' has no attribute {name!r}")
