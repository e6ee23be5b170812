"""Which cases call a live target, and the error a live target gives.

Takes a compiled case and says whether it calls a live target (`run
package.module:function`); `TargetError` is what such a call raises when the target gives
no usable run. Kept apart from `targets.py` (worker processes, pipes, `subprocess`) so a
run of recordings can tell its cases need none of that, and catch the error, without
loading it (~5 ms of its start).
"""

from __future__ import annotations

from evaldsl.suites.model import Case


class TargetError(Exception):
    """A live target that did not give a usable run; the message is the case's error."""


def is_live(case: Case) -> bool:
    """Whether the case calls a live target: only such a case needs target workers
    (`targets.TargetWorkers`)."""
    return case.source is not None and case.source.kind == "run"
