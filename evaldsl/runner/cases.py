"""Which cases `-k` selects, and the judge plan of recorded cases.

Takes compiled cases and their suites, and gives whether a `-k` pattern selects a case
(and what `run` and `mutate` say when it selects none), and the judge calls the recorded
cases would make (`plan_judge`). These are the parts of the runner that `evaldsl check`
needs: this module does not load the machinery of running (worker processes, result
records), which is imported for a live target only.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import attrs

from evaldsl.compile.evaluate import evaluate_all
from evaldsl.runner.produce import NothingToRun, produce_run
from evaldsl.runner.readings import SharedReadings, recorded_for
from evaldsl.runner.selection import selector
from evaldsl.runs.model import RunError
from evaldsl.runs.passes import index_run
from evaldsl.suites.model import Case, Suite

if TYPE_CHECKING:
    from concurrent.futures import Future


@runtime_checkable
class Planner(Protocol):
    """A judge that can record a case's questions, then send them all at once (`submit`
    starts them and returns their futures; `cancel` takes back those not started)."""

    def recording(self) -> AbstractContextManager[list[Any]]: ...

    def submit(self, requests: list[Any]) -> Sequence[Future[Any]]: ...

    def cancel(self) -> None: ...


def selected(suite: Suite, case: Case, pattern: str | None) -> bool:
    """Whether `-k PATTERN` selects `case` by its `suite::case` name (`runner.selection`)."""
    if not pattern:
        return True
    return selector(pattern)(f"{suite.name}::{case.name}".lower(), case.name.lower())


def matched_none(pattern: str, total: int) -> str:
    """What `run` and `mutate` say when `-k PATTERN` selects none of `total` cases.

    >>> matched_none("zzz", 5)
    "-k 'zzz' matches none of the 5 cases"
    """
    return f"-k {pattern!r} matches none of the {total} case{'s' if total != 1 else ''}"


@attrs.frozen
class JudgePlanSummary:
    """How many judge calls a run would make, how many are cached already, and how many
    judge assertions depend on live targets (unknown until they run)."""

    calls: int
    cached: int
    on_live_targets: int

    def describe(self) -> str:
        plural = "s" if self.calls != 1 else ""
        text = f"judge: {self.calls} call{plural} planned, {self.cached} cached"
        if self.on_live_targets:
            text += f"; {self.on_live_targets} on live targets (known when they run)"
        return text


def plan_judge(suites: Sequence[Suite], select: str | None = None) -> JudgePlanSummary | None:
    """Plan the judge calls of recorded cases without running any target: read each
    case's recording, note the judge questions its assertions would ask, and count the
    distinct ones and those already in the cache. None when no case uses the judge."""
    asked: list[Any] = []
    live = 0
    planner = None
    judged = [
        (suite, k)
        for suite in suites
        if isinstance(suite.judge, Planner)
        for k, case in enumerate(suite.cases)
        if case.judged and not case.error and selected(suite, case, select)
    ]
    # cases on one recording read it once, as a run reads it
    shared = SharedReadings((suite, suite.cases[k]) for suite, k in judged)
    for suite, k in judged:
        case = suite.cases[k]
        assert isinstance(suite.judge, Planner)
        planner = suite.judge
        if case.source is not None and case.source.kind == "run":
            live += sum(1 for a in case.assertions if "judged" in a.text)
            continue
        try:  # a recording (live targets were counted above, never called)
            facts = shared.facts(case, suite)
            if facts is None:
                with recorded_for(case, case.needs):
                    facts = index_run(produce_run(case, suite), case.needs)
        except (RunError, NothingToRun):
            continue
        with suite.judge.recording() as questions:
            evaluate_all(case.assertions, facts)
        asked.extend(questions)
    if planner is None:
        return None
    plan = planner.plan(asked) if hasattr(planner, "plan") else None
    calls, cached = (plan.total, plan.cached) if plan is not None else (len(asked), 0)
    return JudgePlanSummary(calls, cached, live)
