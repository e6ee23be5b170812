"""Runner: cases → results (runs, scoring, isolation, timeouts, parallelism).

Takes suite files (or loaded `Suite`s) and options, and gives a `Report`. Each case's run
is read from its cassette, trace or state, or produced by calling its `run` target with
its input; its assertions are checked against the run indexed once; its verdicts are
scored as docs/language.md §5 says. A crash (an unreadable run, a target that raises, exits or
times out) fails that case with score 0 and the error, and the other cases go on. Live
targets run in worker processes (`targets.py`), never in this one. With `jobs > 1` cases
run in at most that many processes (never more than cases) that die with this one, and
the report is the same as a serial run's: results are put back in suite and case order.
A serial run goes on with the next cases while a case's judge questions are answered
(`begin_case`, `Judging`), and reports them in order too.
Ctrl-C stops the run at once: `RunInterrupted` carries the report of the cases that ran.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from evaldsl.compile.evaluate import evaluate_all
from evaldsl.gcpause import frozen_loaded
from evaldsl.judge.protocol import Judge
from evaldsl.language.diagnostics import Diagnostic
from evaldsl.language.verdicts import case_passed, score
from evaldsl.runner import waiting
from evaldsl.runner.cases import Planner, selected
from evaldsl.runner.live import TargetError, is_live
from evaldsl.runner.produce import NothingToRun, produce_run, streamed_bytes
from evaldsl.runner.readings import SharedReadings, recorded_for, with_metrics
from evaldsl.runner.results import AssertionResult, CaseMetrics, CaseResult, Report, SuiteResult
from evaldsl.runner.turns import CasesInTurn
from evaldsl.runs.index import RunFacts
from evaldsl.runs.model import RunError, given
from evaldsl.runs.passes import index_run, will_read
from evaldsl.suites.build import assertion_location
from evaldsl.suites.model import Case, Suite

if TYPE_CHECKING:  # live targets' worker processes and pipes: loaded for a live case only
    from concurrent.futures import Future

    from evaldsl.runner.targets import TargetWorkers

JudgeFactory = Callable[[], Judge | None]


@attrs.frozen
class RunOptions:
    """How to run: parallel jobs, case selection, the judge (built per process)."""

    jobs: int = 1
    select: str | None = None
    judge_factory: JudgeFactory | None = None


# ---- one case ------------------------------------------------------------------------


def execute_case(
    case: Case,
    suite: Suite,
    workers: TargetWorkers | None = None,
    readings: SharedReadings | None = None,
) -> CaseResult:
    """Run one case and score it; never raises (but for Ctrl-C). A live target runs in
    one of `workers` (a worker of its own without); a recording other cases of the run
    read too comes from `readings`, read once for all of them."""
    begun = begin_case(case, suite, workers, readings)
    return begun if isinstance(begun, CaseResult) else begun.finish()


@attrs.define
class Judging:
    """A case whose run was read and whose judge questions are on their way: `finish`
    evaluates its assertions (waiting for any answer still missing) and scores it (a
    `waiting.Waiting`)."""

    case: Case
    facts: RunFacts
    started: float
    answers: Sequence[Future[Any]]

    def ready(self) -> bool:
        """Whether every answer is in (`finish` would not wait)."""
        return all(answer.done() for answer in self.answers)

    def finish(self) -> CaseResult:
        return _scored(self.case, self.facts, self.started)


def begin_case(
    case: Case,
    suite: Suite,
    workers: TargetWorkers | None = None,
    readings: SharedReadings | None = None,
) -> CaseResult | Judging:
    """`execute_case` up to its verdicts: the case's result, or (when its judge questions
    went to the endpoint) the `Judging` to finish once they are answered, so that a run
    goes on with the next cases meanwhile. Never raises (but for Ctrl-C)."""
    started = time.perf_counter()
    if case.error is not None:
        return CaseResult(case.name, False, 0.0, 0.0, error=case.error)
    try:
        facts = readings.facts(case, suite) if readings is not None else None
        if facts is None:
            with recorded_for(case, case.needs):
                facts = index_run(produce_run(case, suite, workers), with_metrics(case.needs))
    except RunError as err:
        return _crashed(case, started, _run_error(case, err))
    except (NothingToRun, TargetError) as crash:
        return _crashed(case, started, str(crash))
    planner = suite.judge
    if case.judged and isinstance(planner, Planner):
        # First pass: note every judge question of the case and send the misses to the
        # endpoint, concurrently; then the real pass finds them answered, in source order.
        with planner.recording() as asked:
            evaluate_all(case.assertions, facts)
        judging = Judging(case, facts, started, planner.submit(asked))
        if not judging.ready():
            return judging
    return _scored(case, facts, started)


def _scored(case: Case, facts: RunFacts, started: float) -> CaseResult:
    """The case's verdicts on its run, scored."""
    verdicts = evaluate_all(case.assertions, facts)
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


#: The path of a run read from a value rather than a file (`RunError.in_file`).
_VALUE_PATH = "<value>"


def _run_error(case: Case, err: RunError) -> str:
    """The case's error for a run that cannot be read: a file's with its position; a live
    target's value (no file, no position) said as the target's other return errors are:
    `run target 'm:f' returned an unusable value: event [0] of the event list: …`."""
    spec = case.source
    if spec is None or spec.kind != "run" or err.path != _VALUE_PATH:
        return str(err)
    message = err.message.replace(f"`{_VALUE_PATH}`", "the value")
    return f"run target {spec.target!r} returned an unusable value: {message}"


def _crashed(case: Case, started: float, message: str) -> CaseResult:
    return CaseResult(case.name, False, 0.0, (time.perf_counter() - started) * 1000, error=message)


def metrics_of(facts: RunFacts) -> CaseMetrics:
    trace, state = facts.trace, facts.state
    latency = facts.latency_seconds
    if latency is None and trace is not None:
        latency = trace.wall_seconds()
    if trace is not None:
        # (usage that no response recorded is unknown, not 0 tokens)
        unknown = trace.usage_unrecorded
        return CaseMetrics(
            latency_ms=latency * 1000 if latency is not None else None,
            steps=trace.steps,
            tool_calls=trace.tool_calls,
            input_tokens=None if unknown else trace.input_tokens,
            output_tokens=None if unknown else trace.output_tokens,
            cost=None if unknown else trace.cost,
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


# ---- whole runs ------------------------------------------------------------------------


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C during `run_suites`: `report` holds the cases that finished (and says it
    was interrupted); the cases queued or running were not run."""

    def __init__(self, report: Report) -> None:
        super().__init__("interrupted")
        self.report = report


Results = dict[tuple[int, int], CaseResult]
#: The own diagnostics of the cases checked where they ran (`Suite.later`).
Own = dict[tuple[int, int], tuple[Diagnostic, ...]]
OnCase = Callable[[Suite, CaseResult], None] | None


def run_suites(
    suites: Sequence[Suite],
    options: RunOptions = RunOptions(),
    *,
    on_case: OnCase = None,
) -> Report:
    """Run every selected case of the suites; the report keeps suite and case order.

    Ctrl-C raises `RunInterrupted` (a `KeyboardInterrupt`) with the report of the cases
    that finished; queued cases do not start and running ones are stopped.
    """
    check_arguments(suites, options)
    started = time.perf_counter()
    results: Results = {}
    own: Own = {}
    try:  # (from here: a stop while the recordings were looked at left no report)
        work = _selected(suites, options.select)
        parallel = options.jobs > 1 and len(work) > 1
        if parallel and not _can_fork() and any(s.later is not None for s in suites):
            # cases left to check where they run (`load_suite(later=True)`): a pool's spawned
            # workers load their suites whole, so they are checked here; a serial run checks
            # each when it comes to its recording (`turns.py`), a forked worker those it runs
            suites = [s.later.built() if s.later is not None else s for s in suites]
            work = _selected(suites, options.select)
        # many small recordings: the typed decoder set up now (before forking, with `-j`,
        # so the workers share it), not after each process has decoded 3 MiB in full
        will_read(streamed_bytes(work))
        # what was loaded (suites, modules) is not walked by collections while cases run
        with frozen_loaded():
            if parallel:
                _run_parallel(work, options, results, on_case, own)
            else:
                _run_serial(work, results, on_case, own)
    except KeyboardInterrupt:
        report = _report(suites, results, own, started, options.select, interrupted=True)
        raise RunInterrupted(report) from None
    return _report(suites, results, own, started, options.select)


def not_run(suites: Sequence[Suite], options: RunOptions = RunOptions()) -> Report:
    """The report of a run of `suites` stopped (Ctrl-C, SIGTERM) before its first case,
    while its suites were loaded: every selected case not run, as `RunInterrupted`'s
    report says of the cases a stopped run never came to."""
    check_arguments(suites, options)
    return _report(suites, {}, {}, time.perf_counter(), options.select, interrupted=True)


def check_arguments(suites: object, options: object) -> None:
    """A `TypeError` at `run_suites`' entry for a path where a loaded suite belongs (it
    failed deep inside, in Python's words), or options that are not `RunOptions`."""
    fix = "load each file first: run_suites([evaldsl.suites.load_suite(path), ...])"
    if isinstance(suites, str | bytes | os.PathLike) or not isinstance(suites, Sequence):
        raise TypeError(f"run_suites() takes a list of loaded suites, not {given(suites)}: {fix}")
    for i, suite in enumerate(suites):
        if not isinstance(suite, Suite):
            raise TypeError(
                f"run_suites() takes loaded suites, and item {i} is {given(suite)}: {fix}"
            )
    if not isinstance(options, RunOptions):
        raise TypeError(
            f"run_suites() takes options as evaldsl.runner.RunOptions(...), not {given(options)}"
        )


def _run_serial(work: list[tuple[Suite, int]], results: Results, on_case: OnCase, own: Own) -> None:
    """The cases one after the other in this process; `results` gets each, in order, and
    `own` the diagnostics of those checked here (a suite that left its cases' checks to
    the run: each checked when the run comes to its recording, `turns.py`). A case whose
    judge questions went to the endpoint waits for its answers while the next cases run
    (at most `waiting.MAX_JUDGING` of them), so the judge's calls overlap across cases as
    they do within one; on Ctrl-C the questions not sent yet are taken back."""
    turns = CasesInTurn(work)
    begun_cases: deque[tuple[Suite, int, CaseResult | Judging]] = deque()

    def settle(keep: int) -> None:
        # report the cases at the head whose answers are in; wait for the head while
        # more than `keep` cases wait
        while begun_cases:
            s, i, begun = begun_cases[0]
            if isinstance(begun, Judging):
                if len(begun_cases) <= keep and not begun.ready():
                    return
                begun = begun.finish()
            begun_cases.popleft()
            results[(id(s), i)] = begun
            if on_case:
                on_case(s, begun)

    try:
        with _target_workers(work) as workers:
            for position, (s, i) in enumerate(work):
                case, readings = turns.case(position)
                begun_cases.append((s, i, begin_case(case, s, workers, readings)))
                settle(waiting.MAX_JUDGING)
            settle(0)
    except BaseException:
        for s, _, begun in begun_cases:
            if isinstance(begun, Judging) and isinstance(s.judge, Planner):
                s.judge.cancel()
        raise
    finally:
        for position, diagnostics in turns.own.items():
            s, i = work[position]
            own[(id(s), i)] = diagnostics


def _selected(suites: Sequence[Suite], select: str | None) -> list[tuple[Suite, int]]:
    """The (suite, case index) pairs `-k` selects, in report order."""
    return [(s, i) for s in suites for i, c in enumerate(s.cases) if selected(s, c, select)]


def _can_fork() -> bool:
    # imported here: `check` and serial runs never load the process machinery
    from evaldsl.runner.parallel import can_fork

    return can_fork()


def _target_workers(
    work: list[tuple[Suite, int]],
) -> contextlib.AbstractContextManager[TargetWorkers | None]:
    """The target workers of a serial run: made only when a case calls a live target, so
    a run of recordings does not load their machinery (`targets.py`, `subprocess`, ~5 ms
    of its start)."""
    if not any(is_live(s.cases[i]) for s, i in work):
        return contextlib.nullcontext()
    from evaldsl.runner.targets import TargetWorkers

    return TargetWorkers()


def _run_parallel(
    work: list[tuple[Suite, int]],
    options: RunOptions,
    results: Results,
    on_case: OnCase,
    own: Own,
) -> None:
    """Cases in `-j` processes; `results` gets each in report order (on Ctrl-C, also the
    ones that had finished out of order), `own` the diagnostics of those checked where
    they ran."""
    # Imported here: the process pool costs ~15 ms to import, which `check` and serial
    # runs skip.
    from evaldsl.runner.parallel import run_parallel

    done: dict[int, CaseResult] = {}
    checked: dict[int, tuple[Diagnostic, ...]] = {}

    def announce(position: int) -> None:
        suite, index = work[position]
        results[(id(suite), index)] = done[position]
        if on_case:
            on_case(suite, done[position])

    try:
        run_parallel(work, options.jobs, begin_case, options.judge_factory, done, announce, checked)
    finally:
        for position, result in done.items():
            suite, index = work[position]
            results[(id(suite), index)] = result
        for position, diagnostics in checked.items():
            suite, index = work[position]
            own[(id(suite), index)] = diagnostics


def _report(
    suites: Sequence[Suite],
    results: Results,
    own: Own,
    started: float,
    selection: str | None,
    *,
    interrupted: bool = False,
) -> Report:
    suite_results = []
    for s in suites:
        cases = tuple(results[(id(s), i)] for i in range(len(s.cases)) if (id(s), i) in results)
        not_run = tuple(
            c.name
            for i, c in enumerate(s.cases)
            if interrupted and (id(s), i) not in results and selected(s, c, selection)
        )
        suite_results.append(
            SuiteResult(
                s.name,
                s.path,
                cases,
                sum(c.duration_ms for c in cases),
                _diagnostics(s, own, interrupted=interrupted),
                not_run,
            )
        )
    duration_ms = (time.perf_counter() - started) * 1000
    return Report(tuple(suite_results), duration_ms, interrupted=interrupted, selection=selection)


def _diagnostics(suite: Suite, own: Own, *, interrupted: bool = False) -> tuple[Diagnostic, ...]:
    """The suite's diagnostics; of a suite checked where its cases ran, made of each
    case's own: as the run found them, else (a case not selected, or whose worker died)
    checked here. After Ctrl-C, a case the run never came to is not checked (it would
    read its recording: the run stops at once), and has none."""
    later = suite.later
    if later is None:
        return suite.diagnostics
    found = [own.get((id(suite), i)) for i in range(len(suite.cases))]
    if interrupted:
        return later.diagnostics([d or () for d in found])
    return later.diagnostics([d if d is not None else later.own(i) for i, d in enumerate(found)])
