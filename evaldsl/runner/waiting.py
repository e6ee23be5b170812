"""Cases waiting for their judge answers while a run goes on with the next ones.

Takes nothing; declares what a begun case that waits is (`Waiting`: whether its answers
are in, and its result once they are) and how many such cases a process keeps at once
(`MAX_JUDGING`). The serial runner (`core.py`) reports them in suite order; a `-j`
worker (`parallel.py`) sends each as it finishes. Both read the bound from here at run
time, so a test can lower it.
"""

from __future__ import annotations

from typing import Protocol

from evaldsl.runner.results import CaseResult

#: How many cases a process keeps waiting for their judge answers while it begins the
#: next ones (each holds its run's facts): twice the judge's default concurrency, so its
#: threads stay busy while the first of them is answered.
MAX_JUDGING = 16


class Waiting(Protocol):
    """A case whose run was read and whose judge questions are on their way."""

    def ready(self) -> bool:
        """Whether every answer is in (`finish` would not wait)."""
        ...

    def finish(self) -> CaseResult:
        """Its verdicts, waiting for any answer still missing, scored."""
        ...
