"""Mutation testing: how many small changes to its recorded runs a suite notices.

Takes suite files and gives a `MutationReport`: for each case with a recorded run (a
`cassette`, `trace` or `state`), the run's events are read into a list once, its mutants
(mutants.py) are made from copies, and each mutant is checked with the case's compiled
assertions the way the runner checks a run (indexed once with the case's needs, every
assertion evaluated). A mutant is killed when some assertion fails or errors on it, and
survives when the case still passes. An assertion whose error is the judge's failure (no
verdict: a refused key, a timeout) noticed nothing: a mutant only it errored on is not
measured, neither killed nor a survivor, and the command says the judge failed. The
mutation score is killed ÷ mutants measured, per case, per suite and overall; every
survivor is said in words.

Seeded and bounded: at most `max_mutants` mutants a case, picked at random with `seed`
when there are more, and every choice a mutant makes comes from the same seed, so a run
is repeatable. A case must pass on its recording to be mutated. Live targets (`run
module:function`, datasets) are out of scope: calling the agent again measures the
agent, not the suite, so such cases are listed as not mutated, with the reason.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from typing import Any, TextIO

import attrs

from evaldsl.compile.evaluate import evaluate, evaluate_all
from evaldsl.judge.protocol import Judge, JudgeOutcome
from evaldsl.language.printable import visible
from evaldsl.language.verdicts import Status, all_skipped
from evaldsl.mutation.mutants import Mutant, MutantKind, mutants
from evaldsl.runner.cases import matched_none, selected
from evaldsl.runner.produce import produce_run
from evaldsl.runs.index import index_run
from evaldsl.runs.model import Run, RunError
from evaldsl.suites import Case, Suite, discover, load_suite
from evaldsl.suites.files import discovery_problems

#: Mutants checked per case unless `--max-mutants` says otherwise.
DEFAULT_MAX_MUTANTS = 50
#: The `version` of the JSON `evaldsl mutate --format json` prints.
JSON_VERSION = 1

#: The statuses by which a mutant is noticed.
BAD = ("fail", "error")
#: Why every assertion of a case can be skipped here.
ALL_SKIPPED_WHY = "judge assertions, not judged"

LIVE_REASON = "a live target: mutate reads recorded runs only (live targets are out of scope)"


class JudgeWatch:
    """The command's judge, watched: it answers as the judge does, and counts the judge's
    failures (error outcomes: no verdict), so an assertion that errored because the judge
    failed is told from one that noticed a mutant."""

    def __init__(self, judge: Judge) -> None:
        self.judge = judge
        self.failures = 0
        self.first: str | None = None  # the first failure's message

    def __call__(
        self, text: str, rubric: str, *, model: str | None, threshold: float | None
    ) -> JudgeOutcome:
        outcome = self.judge(text, rubric, model=model, threshold=threshold)
        if outcome.status == "error":
            self.failures += 1
            self.first = self.first or outcome.message
        return outcome


@attrs.frozen
class MutantResult:
    """One mutant and whether the suite noticed it (which assertions did), or could not
    tell (`unmeasured`: the assertions that errored only because the judge failed)."""

    kind: MutantKind
    description: str
    noticed_by: tuple[str, ...]  # the texts of the assertions that failed or errored
    unmeasured: tuple[str, ...] = ()

    @property
    def killed(self) -> bool:
        return bool(self.noticed_by)

    @property
    def measured(self) -> bool:
        return self.killed or not self.unmeasured

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "description": self.description,
            "killed": self.killed,
            "noticed_by": list(self.noticed_by),
        } | ({"not_measured_by_judge": list(self.unmeasured)} if not self.measured else {})


@attrs.frozen
class CaseMutation:
    """One case: its mutants' results, or why it was not mutated."""

    name: str
    results: tuple[MutantResult, ...] = ()
    candidates: int = 0  # mutants there were before the bound picked `results`
    not_mutated: str | None = None  # the reason, when it was not
    skipped: bool = False  # an assertion was skipped on its recording (a judge, off)

    @property
    def killed(self) -> int:
        return sum(1 for r in self.results if r.killed)

    @property
    def measured(self) -> int:
        return sum(1 for r in self.results if r.measured)

    @property
    def score(self) -> float | None:
        return self.killed / self.measured if self.measured else None

    @property
    def survivors(self) -> list[MutantResult]:
        return [r for r in self.results if r.measured and not r.killed]

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "mutated": self.not_mutated is None,
            "reason": self.not_mutated,
            "score": _rounded(self.score),
            "killed": self.killed,
            "total": len(self.results),
            "not_measured": len(self.results) - self.measured,
            "candidates": self.candidates,
            "mutants": [r.to_json() for r in self.results],
        }


@attrs.frozen
class SuiteMutation:
    """One suite file's cases."""

    path: str
    name: str
    cases: tuple[CaseMutation, ...]
    errors: int = 0  # error diagnostics found while loading and checking it

    @property
    def killed(self) -> int:
        return sum(c.killed for c in self.cases)

    @property
    def total(self) -> int:
        return sum(len(c.results) for c in self.cases)

    @property
    def measured(self) -> int:
        return sum(c.measured for c in self.cases)

    @property
    def score(self) -> float | None:
        return self.killed / self.measured if self.measured else None

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "name": self.name,
            "score": _rounded(self.score),
            "killed": self.killed,
            "total": self.total,
            "not_measured": self.total - self.measured,
            "errors": self.errors,
            "cases": [c.to_json() for c in self.cases],
        }


@attrs.frozen
class MutationReport:
    """Every suite's mutation results, and how they were chosen."""

    suites: tuple[SuiteMutation, ...]
    seed: int
    max_mutants: int
    judge: str  # "off" or "live"
    judge_failures: int = 0  # the judge's answers that were errors (no verdict)
    judge_failure: str | None = None  # the first one's message

    @property
    def killed(self) -> int:
        return sum(s.killed for s in self.suites)

    @property
    def total(self) -> int:
        return sum(s.total for s in self.suites)

    @property
    def measured(self) -> int:
        return sum(s.measured for s in self.suites)

    @property
    def score(self) -> float | None:
        return self.killed / self.measured if self.measured else None

    def to_json(self) -> dict[str, Any]:
        return {
            "version": JSON_VERSION,
            "seed": self.seed,
            "max_mutants": self.max_mutants,
            "judge": self.judge,
            "score": _rounded(self.score),
            "killed": self.killed,
            "total": self.total,
            "not_measured": self.total - self.measured,
            "judge_failures": self.judge_failures,
            "judge_failure": self.judge_failure,
            "suites": [s.to_json() for s in self.suites],
        }


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


# ---- running -------------------------------------------------------------------------------


def mutate_case(
    case: Case, suite: Suite, *, seed: int = 0, max_mutants: int = DEFAULT_MAX_MUTANTS
) -> CaseMutation:
    """Mutate one case's recorded run and check every mutant picked; never raises."""
    if case.error is not None:
        # (a case's error says "not run: …" itself: said once)
        said = case.error if case.error.startswith("not run") else f"not run: {case.error}"
        return CaseMutation(case.name, not_mutated=said)
    if case.source is None or case.source.kind == "run":
        return CaseMutation(case.name, not_mutated=LIVE_REASON)
    try:
        run = produce_run(case, suite)
        events = list(run.events) if run.events is not None else None
        original = attrs.evolve(run, events=events)
        statuses = _statuses(case, original)
    except RunError as err:
        return CaseMutation(case.name, not_mutated=f"its run cannot be read: {err}")
    skipped = "skip" in statuses
    if all_skipped(statuses):
        # (nothing is tested: no mutant could be noticed, and counting each as a survivor
        # would pull the score down for what the suite never checked)
        return CaseMutation(
            case.name,
            not_mutated=f"every assertion was skipped on its own recording ({ALL_SKIPPED_WHY}): "
            "nothing is tested, so no mutant could be noticed",
            skipped=True,
        )
    failing = sum(1 for s in statuses if s in BAD)
    if failing:
        return CaseMutation(
            case.name,
            not_mutated=f"it fails on its own recording ({failing} of "
            f"{len(case.assertions)} assertions fail or error): mutants are measured "
            "against a passing case",
            skipped=skipped,
        )
    if events is None and run.state is None:
        return CaseMutation(
            case.name,
            not_mutated="its run has no events and no state to mutate",
            skipped=skipped,
        )
    candidates = mutants(events, run.state, seed=seed)
    picked = _pick(candidates, max_mutants, f"{seed}:{suite.path}:{case.name}")
    watch = suite.judge if isinstance(suite.judge, JudgeWatch) else None
    return CaseMutation(
        case.name,
        tuple(_check(case, original, m, watch) for m in picked),
        candidates=len(candidates),
        skipped=skipped,
    )


def _pick(candidates: list[Mutant], bound: int, seed: str) -> list[Mutant]:
    """At most `bound` of the candidates, a seeded random choice kept in their order."""
    if len(candidates) <= bound:
        return candidates
    chosen = sorted(random.Random(seed).sample(range(len(candidates)), bound))
    return [candidates[i] for i in chosen]


def _check(case: Case, original: Run, mutant: Mutant, watch: JudgeWatch | None) -> MutantResult:
    events, state = mutant.make()
    run = attrs.evolve(original, events=events, state=state)
    try:
        noticed, unmeasured = _noticed(case, run, watch)
    except RunError as err:  # the runner would report the case crashed: noticed
        noticed, unmeasured = (f"(the run could not be read: {err})",), ()
    return MutantResult(mutant.kind, mutant.description, noticed, unmeasured)


def _noticed(
    case: Case, run: Run, watch: JudgeWatch | None
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The assertions that fail or error on `run`, checked as the runner checks a case;
    and apart, those that errored because the judge failed while they were checked (they
    noticed nothing)."""
    facts = index_run(run, case.needs)
    noticed: list[str] = []
    unmeasured: list[str] = []
    for a in case.assertions:
        failures = watch.failures if watch is not None else 0
        status = evaluate(a, facts).status
        if status == "error" and watch is not None and watch.failures > failures:
            unmeasured.append(a.text)
        elif status in BAD:
            noticed.append(a.text)
    return tuple(noticed), tuple(unmeasured)


def _statuses(case: Case, run: Run) -> list[Status]:
    """Each assertion's status on `run`, checked as the runner checks a case."""
    facts = index_run(run, case.needs)
    return [v.status for v in evaluate_all(case.assertions, facts)]


def mutate_suites(
    suites: Sequence[Suite],
    *,
    seed: int = 0,
    max_mutants: int = DEFAULT_MAX_MUTANTS,
    select: str | None = None,
    judge: str = "off",
) -> MutationReport:
    """Mutate every selected case of the suites (`select` is `-k`'s pattern)."""
    results = []
    for suite in suites:
        cases = tuple(
            mutate_case(c, suite, seed=seed, max_mutants=max_mutants)
            for c in suite.cases
            if selected(suite, c, select)
        )
        results.append(SuiteMutation(suite.path, suite.name, cases, len(suite.errors)))
    watches = {id(s.judge): s.judge for s in suites if isinstance(s.judge, JudgeWatch)}
    failures = sum(w.failures for w in watches.values())
    first = next((w.first for w in watches.values() if w.first is not None), None)
    return MutationReport(tuple(results), seed, max_mutants, judge, failures, first)


# ---- text ----------------------------------------------------------------------------------


def render_text(report: MutationReport) -> str:
    """The report as `evaldsl mutate` prints it."""
    out: list[str] = []
    live = False
    for suite in report.suites:
        out.append(f"{suite.path}: {suite.name}")
        for case in suite.cases:
            if case.not_mutated is not None:
                live = live or case.not_mutated == LIVE_REASON
                out.append(f"  {case.name}: not mutated: {case.not_mutated}")
                continue
            picked = ""
            if case.candidates > len(case.results):
                picked = f" (picked from {case.candidates} with seed {report.seed})"
            unmeasured = len(case.results) - case.measured
            out.append(
                f"  {case.name}: {case.killed} of {case.measured} mutants killed"
                f"{picked}, score {_score(case.score)}"
                + (f"; {unmeasured} not measured (the judge failed)" if unmeasured else "")
            )
            for r in case.survivors:
                out.append(f"    survived: no assertion noticed when {r.description}")
        if suite.errors:
            errors = f"{suite.errors} error{'s' if suite.errors != 1 else ''}"
            out.append(f"  the suite has {errors}: `evaldsl check` shows them")
        out.append(
            f"  mutation score {_score(suite.score)}: {suite.killed} of {suite.measured} "
            "mutants killed"
            if suite.measured
            else "  nothing mutated"
            if not suite.total
            else "  nothing measured"
        )
        out.append("")
    out.append(
        f"mutation score {_score(report.score)}: {report.killed} of {report.measured} mutants "
        f"killed (seed {report.seed}, at most {report.max_mutants} a case)"
    )
    if report.judge_failure is not None:
        out.append(_judge_failed(report))
    if live:
        out.append("live targets are out of scope: mutate reads recorded runs only")
    if any(c.skipped for s in report.suites for c in s.cases):
        out.append(
            "judge assertions were skipped (--judge live asks the judge of each mutant)"
            if report.judge == "off"
            # (live, yet skipped: no key and no cached verdict; never read as judged)
            else "judge assertions were skipped: no API key and no cached verdict (set "
            "EVALDSL_JUDGE_API_KEY to ask the judge of each mutant)"
        )
    # (suites' and cases' names and what a mutant changed are the suite's and the
    # recording's text: shown, never acted on, as the console of `run` shows them)
    return "".join(visible(line, newlines=False) + "\n" for line in out)


def _judge_failed(report: MutationReport) -> str:
    """What the judge's failures cost the measure, and the first of them."""
    unmeasured = report.total - report.measured
    times = f"{report.judge_failures} time{'s' if report.judge_failures != 1 else ''}"
    mutants = f"{unmeasured} mutant{'s' if unmeasured != 1 else ''}"
    return f"the judge failed {times} ({mutants} not measured): {report.judge_failure}"


def _score(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


# ---- the command ---------------------------------------------------------------------------


def mutate_command(
    paths: Sequence[str],
    *,
    seed: int,
    max_mutants: int,
    select: str | None,
    fmt: str,
    fail_under: float | None,
    judge: Judge | None,
    judge_mode: str,
    out: TextIO,
    err: TextIO,
) -> int:
    """`evaldsl mutate PATH...`: 0 when measured (and at or above `--fail-under`), 1 when
    under it, when nothing could be mutated or a suite has errors, 2 for bad usage."""
    if max_mutants < 1:
        print("evaldsl: error: --max-mutants takes a number ≥ 1", file=err)
        return 2
    if fail_under is not None and not 0 <= fail_under <= 1:
        print("evaldsl: error: --fail-under takes a score between 0 and 1", file=err)
        return 2
    files, missing, unreadable = discover(paths)
    said = discovery_problems(missing, unreadable)
    for problem in said:
        print(f"evaldsl: error: {problem}", file=err)
    if said:
        return 2
    if not files:
        print(f"evaldsl: error: no suite files found in {', '.join(paths)}", file=err)
        return 2
    watch = JudgeWatch(judge) if judge is not None else None
    suites = [load_suite(f, judge=watch) for f in files]
    report = mutate_suites(
        suites, seed=seed, max_mutants=max_mutants, select=select, judge=judge_mode
    )
    if fmt == "json":
        out.write(json.dumps(report.to_json(), indent=2, ensure_ascii=False) + "\n")
    else:
        out.write(render_text(report))
    if any(s.errors for s in report.suites):
        return 1
    if report.judge_failure is not None:  # a measure the judge left unfinished
        print(f"evaldsl: {_judge_failed(report)}", file=err)
        return 1
    if report.score is None:
        total = sum(len(s.cases) for s in suites)
        why = (
            matched_none(select, total)  # as `run -k` says it
            if select and total and not any(s.cases for s in report.suites)
            else "no selected case has a recorded run that passes"
        )
        print(f"evaldsl: nothing was mutated: {why}", file=err)
        return 1
    if fail_under is not None and report.score < fail_under:
        print(
            f"mutation score {report.score:.3f} is below --fail-under {fail_under}",
            file=out if fmt != "json" else err,
        )
        return 1
    return 0
