"""Runner: cases → results (runs, scoring, isolation, timeouts, parallelism).

Takes suite files (or loaded `Suite`s) and options, and gives a `Report`. Each case's run
is read from its cassette, trace or state, or produced by calling its `run` target with
its input; its assertions are checked against the run indexed once; its verdicts are
scored as LANGUAGE.md §5 says. A crash (an unreadable run, a target that raises or times
out) fails that case with score 0 and the error, and the other cases go on. With `jobs >
1` cases run in worker processes and the report is the same as a serial run's: results
are put back in suite and case order.
"""

from __future__ import annotations

import fnmatch
import importlib
import sys
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import attrs

from evaldsl.compile.evaluate import evaluate
from evaldsl.judge.protocol import Judge
from evaldsl.language.values import MISSING
from evaldsl.language.verdicts import case_passed, score
from evaldsl.runner.results import AssertionResult, CaseMetrics, CaseResult, Report, SuiteResult
from evaldsl.runs.detect import load_run, run_from_value
from evaldsl.runs.index import Needs, RunFacts
from evaldsl.runs.model import Run, RunError
from evaldsl.runs.passes import index_run
from evaldsl.runs.state import initial_state, is_state_value
from evaldsl.suites.build import assertion_location
from evaldsl.suites.model import Case, Suite


@runtime_checkable
class Planner(Protocol):
    """A judge that can record a case's questions, then fetch them all at once."""

    def recording(self) -> AbstractContextManager[list[Any]]: ...

    def prefetch(self, requests: list[Any]) -> int: ...


DEFAULT_TIMEOUT = 60.0  # seconds, for `run` targets (cycgraph's timeout_ms default)

JudgeFactory = Callable[[], Judge | None]


@attrs.frozen
class RunOptions:
    """How to run: parallel jobs, case selection, the judge (built per process)."""

    jobs: int = 1
    select: str | None = None
    judge_factory: JudgeFactory | None = None


def selected(suite: Suite, case: Case, pattern: str | None) -> bool:
    """`-k PATTERN`: a case whose `suite::case` name contains the pattern (case-insensitive),
    or matches it as a glob when it has `*`, `?` or `[`; `not PATTERN` inverts it."""
    if not pattern:
        return True
    negate = pattern.startswith("not ")
    pat = pattern[4:].strip() if negate else pattern
    full = f"{suite.name}::{case.name}".lower()
    if any(ch in pat for ch in "*?["):
        hit = fnmatch.fnmatch(full, pat.lower()) or fnmatch.fnmatch(case.name.lower(), pat.lower())
    else:
        hit = pat.lower() in full
    return hit != negate


# ---- one case ------------------------------------------------------------------------


def execute_case(case: Case, suite: Suite) -> CaseResult:
    """Run one case and score it; never raises."""
    started = time.perf_counter()
    if case.error is not None:
        return CaseResult(case.name, False, 0.0, 0.0, error=case.error)
    try:
        run = produce_run(case, suite)
        facts = index_run(run, _with_metrics(case.needs))
    except RunError as err:
        return _crashed(case, started, str(err))
    except _Crash as crash:
        return _crashed(case, started, str(crash))
    planner = suite.judge
    if case.judged and isinstance(planner, Planner):
        # First pass: note every judge question of the case; fetch the misses
        # concurrently; then the real pass finds them answered, in source order.
        with planner.recording() as asked:
            for a in case.assertions:
                evaluate(a, facts)
        planner.prefetch(asked)
    verdicts = [evaluate(a, facts) for a in case.assertions]
    results = []
    for assertion, source, verdict in zip(case.assertions, case.sources, verdicts, strict=True):
        path, line, column, end_column, source_line = assertion_location(assertion, source)
        results.append(
            AssertionResult(
                text=assertion.text,
                path=path,
                line=line,
                column=column,
                status=verdict.status,
                message=verdict.message,
                actual=verdict.actual,
                expected=verdict.expected,
                end_column=end_column,
                source_line=source_line,
            )
        )
    return CaseResult(
        case.name,
        case_passed(verdicts),
        score(verdicts),
        (time.perf_counter() - started) * 1000,
        None,
        metrics_of(facts),
        tuple(results),
    )


class _Crash(Exception):
    """A run target raised or timed out."""


def _crashed(case: Case, started: float, message: str) -> CaseResult:
    return CaseResult(case.name, False, 0.0, (time.perf_counter() - started) * 1000, error=message)


def _with_metrics(needs: Needs) -> Needs:
    """Metrics want timestamps and priced usage whatever the assertions read."""
    return attrs.evolve(needs, times=True, cost=True, tokens=True)


def metrics_of(facts: RunFacts) -> CaseMetrics:
    trace, state = facts.trace, facts.state
    latency = facts.latency_seconds
    if latency is None and trace is not None:
        latency = trace.wall_seconds()
    if trace is not None:
        return CaseMetrics(
            latency_ms=latency * 1000 if latency is not None else None,
            steps=trace.steps,
            tool_calls=trace.tool_calls,
            input_tokens=trace.input_tokens,
            output_tokens=trace.output_tokens,
            cost=trace.cost,
            guards=trace.guards,
        )
    if state is not None:
        cost = state.get("total_cost_usd")
        return CaseMetrics(
            latency_ms=latency * 1000 if latency is not None else None,
            input_tokens=_int(state.get("total_input_tokens")),
            output_tokens=_int(state.get("total_output_tokens")),
            cost=float(cost)
            if isinstance(cost, (int, float)) and not isinstance(cost, bool)
            else None,
        )
    return CaseMetrics(latency_ms=latency * 1000 if latency is not None else None)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def produce_run(case: Case, suite: Suite) -> Run:
    """Read the case's recorded run, or call its target."""
    spec = case.source
    if spec is None:
        raise _Crash("this case has no source to check")
    if spec.kind == "run":
        assert spec.target is not None
        return call_target(spec.target, case.input, case.timeout or DEFAULT_TIMEOUT, suite.base_dir)
    assert spec.path is not None
    fmt = spec.format if spec.kind == "trace" else ("state" if spec.kind == "state" else None)
    return load_run(suite.base_dir / spec.path, fmt, sample=spec.sample)


# ---- live targets ---------------------------------------------------------------------


def resolve_target(target: str, base_dir: Path) -> Callable[..., Any]:
    """Import `package.module:function`, looking next to the suite first."""
    module_name, _, attr = target.partition(":")
    folder = base_dir.resolve()
    # The suite's folder goes first on sys.path, and a module of the same name imported
    # earlier from another suite's folder (two examples with a `flow.py`) is forgotten,
    # so each suite gets the module that sits next to it.
    if str(folder) in sys.path:
        sys.path.remove(str(folder))
    sys.path.insert(0, str(folder))
    _forget_shadowed(module_name, folder)
    try:
        module = importlib.import_module(module_name)
    except Exception as err:
        raise _Crash(
            f"cannot import {module_name!r} for run target {target!r}: {type(err).__name__}: {err}"
        ) from None
    fn = module
    for part in attr.split("."):
        fn = getattr(fn, part, None)  # type: ignore[assignment]
        if fn is None:
            raise _Crash(f"module {module_name!r} has no {attr!r} (run target {target!r})")
    if not callable(fn):
        raise _Crash(f"run target {target!r} is not callable")
    return fn


def _forget_shadowed(module_name: str, folder: Path) -> None:
    top = module_name.split(".")[0]
    local = folder / top
    if not (local.with_suffix(".py").is_file() or (local / "__init__.py").is_file()):
        return
    loaded = sys.modules.get(top)
    origin = getattr(loaded, "__file__", None)
    if loaded is None or (origin and Path(origin).resolve().is_relative_to(folder)):
        return
    for name in [n for n in sys.modules if n == top or n.startswith(top + ".")]:
        del sys.modules[name]


def call_target(target: str, value: Any, timeout: float, base_dir: Path) -> Run:
    """Call a target with the case input (sync or async), bounded by `timeout` seconds.

    It may return a workflow state (cycgraph's initial-state rules then apply), a list of
    events, an `evaldsl.Run`, or any other value (the run's output). A raised exception or
    a timeout is a crash naming it.
    """
    import asyncio  # only live targets need these (`check` and recorded runs never do)
    import inspect

    fn = resolve_target(target, base_dir)
    args = () if value is MISSING else (value,)
    started = time.perf_counter()
    outcome: dict[str, Any] = {}

    def call() -> None:
        try:
            result = fn(*args)
            if inspect.isawaitable(result):
                result = asyncio.run(_bounded(result, timeout))
            outcome["value"] = result
        except BaseException as err:  # reported as the case's crash, never re-raised
            outcome["error"] = err

    # A daemon thread: a sync target that never returns cannot be stopped, but it can be
    # abandoned, so the run goes on (the process exits without waiting for it).
    worker = threading.Thread(target=call, name=f"evaldsl-target-{target}", daemon=True)
    worker.start()
    worker.join(timeout)
    elapsed_ms = (time.perf_counter() - started) * 1000
    if worker.is_alive():
        raise _Crash(f"run target {target!r} timed out after {timeout:g}s")
    if "error" in outcome:
        err = outcome["error"]
        if isinstance(err, asyncio.TimeoutError | TimeoutError):
            raise _Crash(f"run target {target!r} timed out after {timeout:g}s")
        raise _Crash(f"run target {target!r} raised {type(err).__name__}: {err}")
    result = outcome.get("value")
    if isinstance(result, Run):
        return (
            result if result.latency_ms is not None else attrs.evolve(result, latency_ms=elapsed_ms)
        )
    if isinstance(value, dict) and isinstance(result, dict) and is_state_value(result):
        result = _final_state(value, result, timeout)
    try:
        return run_from_value(result, latency_ms=elapsed_ms)
    except RunError as err:
        raise _Crash(f"run target {target!r} returned an unusable value: {err.message}") from None


async def _bounded(awaitable: Any, timeout: float) -> Any:
    import asyncio  # see `call_target`

    return await asyncio.wait_for(awaitable, timeout)


def _final_state(value: dict[str, Any], returned: dict[str, Any], timeout: float) -> dict[str, Any]:
    """cycgraph's initial state (goal, constraints and max_token_budget lifted from the
    input, the whole input seeded into memory) under what the target returned."""
    state = initial_state(value, timeout_ms=int(timeout * 1000))
    memory = dict(state.get("memory") or {})
    if isinstance(returned.get("memory"), dict):
        memory.update(returned["memory"])
    state.update({k: v for k, v in returned.items() if k != "memory"})
    state["memory"] = memory
    return state


# ---- whole runs ------------------------------------------------------------------------


def run_suites(
    suites: Sequence[Suite],
    options: RunOptions = RunOptions(),
    *,
    on_case: Callable[[Suite, CaseResult], None] | None = None,
) -> Report:
    """Run every selected case of the suites; the report keeps suite and case order."""
    started = time.perf_counter()
    work = [(s, i) for s in suites for i, c in enumerate(s.cases) if selected(s, c, options.select)]
    results: dict[tuple[int, int], CaseResult] = {}
    if options.jobs > 1 and len(work) > 1:
        # workers inherit the loaded suites; largest cases start first. Imported here:
        # the process pool costs ~15 ms to import, which `check` and serial runs skip.
        from evaldsl.runner.parallel import run_parallel

        done = run_parallel(work, options.jobs, execute_case, options.judge_factory)
        for (s, i), result in zip(work, done, strict=True):
            results[(id(s), i)] = result
            if on_case:
                on_case(s, result)
    else:
        for s, i in work:
            result = execute_case(s.cases[i], s)
            results[(id(s), i)] = result
            if on_case:
                on_case(s, result)
    suite_results = []
    for s in suites:
        cases = tuple(results[(id(s), i)] for i in range(len(s.cases)) if (id(s), i) in results)
        suite_results.append(
            SuiteResult(
                s.name,
                s.path,
                cases,
                sum(c.duration_ms for c in cases),
                s.diagnostics,
            )
        )
    return Report(tuple(suite_results), (time.perf_counter() - started) * 1000)


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
    for suite in suites:
        if not isinstance(suite.judge, Planner):
            continue
        for case in suite.cases:
            if not case.judged or case.error or not selected(suite, case, select):
                continue
            planner = suite.judge
            if case.source is not None and case.source.kind == "run":
                live += sum(1 for a in case.assertions if "judged" in a.text)
                continue
            try:
                facts = index_run(produce_run(case, suite), case.needs)
            except (RunError, _Crash):
                continue
            with suite.judge.recording() as questions:
                for a in case.assertions:
                    evaluate(a, facts)
            asked.extend(questions)
    if planner is None:
        return None
    plan = planner.plan(asked) if hasattr(planner, "plan") else None
    calls, cached = (plan.total, plan.cached) if plan is not None else (len(asked), 0)
    return JudgePlanSummary(calls, cached, live)
