"""Results: what a run of suites produced, as plain records every report reads.

Takes nothing itself: the runner builds these records from verdicts, and the reporters
(JSON, JUnit, Markdown, console) only read them. The JSON shape `to_json` gives is the
documented `--json` report (README, "Reports").
"""

from __future__ import annotations

import math
from typing import Any, Literal

import attrs

from evaldsl.language.diagnostics import Diagnostic
from evaldsl.language.limits import clip_value
from evaldsl.language.values import to_report
from evaldsl.language.verdicts import Status, all_skipped, tested_rate

STATUSES: tuple[Status, ...] = ("pass", "fail", "skip", "error")

#: What a case amounts to in every report (`CaseResult.outcome`); the console, Markdown
#: and HTML reports write `error` as "errored".
Outcome = Literal["passed", "failed", "error", "skipped"]
OUTCOMES: tuple[Outcome, ...] = ("passed", "failed", "error", "skipped")


@attrs.frozen
class AssertionResult:
    """One statement's verdict with where it is written (1-based line and column).

    `actual` and `expected` keep at most `REPORT_DEPTH` levels of nesting, and are cut to
    `REPORT_ITEMS` entries a list or object, `REPORT_CHARS` characters a text and
    `REPORT_VALUES` values in all, saying so (`limits.clip_value`): a trace may hold JSON
    1,000 levels deep, a found value may be as large as the run (every call's name), and
    every report, the history and the worker processes' pickles must take what this
    record holds.
    """

    text: str
    path: str
    line: int
    column: int
    status: Status
    message: str
    actual: Any = attrs.field(default=None, converter=clip_value)
    expected: Any = attrs.field(default=None, converter=clip_value)
    end_column: int = 0
    source_line: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "location": {"path": self.path, "line": self.line, "column": self.column},
            "status": self.status,
            "message": self.message,
            "actual": report_value(self.actual),
            "expected": report_value(self.expected),
        }


@attrs.frozen
class CaseMetrics:
    """What a case's run measured (None where the run cannot say)."""

    latency_ms: float | None = None
    steps: int | None = None
    tool_calls: int | None = None
    input_tokens: float | None = None  # whole unless a recording counted fractions
    output_tokens: float | None = None
    cost: float | None = None
    guards: int | None = None

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self)


@attrs.frozen
class CaseResult:
    """One case: passed when no assertion failed or errored and the run did not crash
    (docs/language.md §5); `outcome` says whether it is also skipped."""

    name: str
    passed: bool
    score: float
    duration_ms: float
    error: str | None = None
    metrics: CaseMetrics = CaseMetrics()
    assertions: tuple[AssertionResult, ...] = ()

    @property
    def outcome(self) -> Outcome:
        """What the case amounts to, the same in every report and the pytest plugin.

        `error` when the run crashed or an assertion could not be evaluated (it should have
        been, docs/language.md §5), else `failed` when the case did not pass, else `skipped` when
        every assertion was skipped (a judge without a key: nothing was tested, so it is
        neither passed nor failed), else `passed`.
        """
        if self.error is not None or any(a.status == "error" for a in self.assertions):
            return "error"
        if not self.passed:
            return "failed"
        if all_skipped(a.status for a in self.assertions):
            return "skipped"
        return "passed"

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "passed": self.passed,
            "outcome": self.outcome,
            "score": round(self.score, 6),
            "duration_ms": round(self.duration_ms, 3),
            "error": self.error,
            "metrics": self.metrics.to_json(),
            "assertions": [a.to_json() for a in self.assertions],
        }


@attrs.frozen
class Summary:
    """Totals over cases: counts, the mean score, the pass rate, assertion counts.

    `cases` = `passed` + `failed` + `skipped`; `failed` includes the `errored` cases
    (crashed, or an assertion in error). The pass rate is of the cases that were tested:
    `passed / (cases - skipped)`, 0 when none was.
    """

    cases: int
    passed: int
    failed: int
    overall_score: float
    pass_rate: float
    assertions: dict[str, int]
    duration_ms: float
    metrics: dict[str, float | int | None]
    skipped: int = 0
    errored: int = 0

    @classmethod
    def of(cls, cases: list[CaseResult], duration_ms: float) -> Summary:
        n = len(cases)
        outcomes: dict[Outcome, int] = dict.fromkeys(OUTCOMES, 0)
        for c in cases:
            outcomes[c.outcome] += 1
        passed, skipped = outcomes["passed"], outcomes["skipped"]
        tested = n - skipped
        counts: dict[str, int] = {s: 0 for s in STATUSES}
        for c in cases:
            for a in c.assertions:
                counts[a.status] += 1
        return cls(
            cases=n,
            passed=passed,
            failed=tested - passed,
            # an empty suite scores 0 (cycgraph), and so does an empty run
            overall_score=sum(c.score for c in cases) / n if n else 0.0,
            pass_rate=tested_rate(passed, n, skipped),
            assertions=counts,
            duration_ms=duration_ms,
            metrics=_totals(cases),
            skipped=skipped,
            errored=outcomes["error"],
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "cases": self.cases,
            "passed": self.passed,
            "failed": self.failed,
            "skipped": self.skipped,
            "errored": self.errored,
            "overall_score": round(self.overall_score, 6),
            "pass_rate": round(self.pass_rate, 6),
            "assertions": dict(self.assertions),
            "duration_ms": round(self.duration_ms, 3),
            "metrics": self.metrics,
        }


def _totals(cases: list[CaseResult]) -> dict[str, float | int | None]:
    totals: dict[str, float | int | None] = {}
    for field in attrs.fields(CaseMetrics):
        values = [getattr(c.metrics, field.name) for c in cases]
        present = [v for v in values if v is not None]
        totals[field.name] = sum(present) if present else None
    return totals


@attrs.frozen
class SuiteResult:
    """One suite file's cases, and the problems found while loading and checking it.
    `not_run`: the names of the cases chosen to run that did not (Ctrl-C stopped the run
    first)."""

    name: str
    path: str
    cases: tuple[CaseResult, ...]
    duration_ms: float
    diagnostics: tuple[Diagnostic, ...] = ()
    not_run: tuple[str, ...] = ()

    @property
    def summary(self) -> Summary:
        return Summary.of(list(self.cases), self.duration_ms)

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.is_error]

    def to_json(self) -> dict[str, Any]:
        shape = {
            "name": self.name,
            "path": self.path,
            "cases": [c.to_json() for c in self.cases],
            "diagnostics": [d.to_json() for d in self.diagnostics],
            "summary": self.summary.to_json(),
        }
        if self.not_run:  # (present when set, as the report's `interrupted`)
            shape["not_run"] = list(self.not_run)
        return shape


@attrs.frozen
class Report:
    """A whole `evaldsl run`: every suite, and the totals. `interrupted`: Ctrl-C stopped
    it, and only the cases that finished are in it. `selection`: the `-k` pattern that
    chose the cases, if one did."""

    suites: tuple[SuiteResult, ...]
    duration_ms: float
    interrupted: bool = False
    selection: str | None = None

    @property
    def cases(self) -> list[CaseResult]:
        return [c for s in self.suites for c in s.cases]

    @property
    def summary(self) -> Summary:
        return Summary.of(self.cases, self.duration_ms)

    @property
    def not_run(self) -> int:
        """How many of the cases chosen to run did not (Ctrl-C stopped the run first)."""
        return sum(len(s.not_run) for s in self.suites)

    @property
    def ok(self) -> bool:
        """Some case ran, every case passed, no suite had an error, and the run was not
        interrupted (as `evaldsl run` exits 0)."""
        return (
            not self.interrupted
            and bool(self.cases)
            and all(c.passed for c in self.cases)
            and not any(s.errors for s in self.suites)
        )

    def to_json(self) -> dict[str, Any]:
        shape: dict[str, Any] = {
            "version": 1,
            "suites": [s.to_json() for s in self.suites],
            "summary": self.summary.to_json(),
        }
        if self.interrupted:
            shape["interrupted"] = True
            shape["not_run"] = self.not_run
        if self.selection is not None:
            # (a key of its own, present when set, as `interrupted`: a version 1 report
            # without it is still read, as a run that selected every case)
            shape["selection"] = self.selection
        return shape


def report_value(value: Any, *, floats: bool = False) -> Any:
    """A found or expected value as the JSON report stores it: `MISSING` as null, tuples
    as lists, keys as text, what JSON has no type for as its repr, and NaN and the
    infinities, which JSON has no number for (only a Python value holds them), as the
    text JavaScript and Python print: "NaN", "Infinity", "-Infinity". With `floats`
    they stay floats, for the text reports to print bare (`found: [NaN]`).

    >>> report_value({1: (float("nan"), -float("inf"), 0.5)})
    {'1': ['NaN', '-Infinity', 0.5]}
    """
    value = to_report(value)
    if isinstance(value, float) and not floats and not math.isfinite(value):
        return repr(value).replace("inf", "Infinity").replace("nan", "NaN")
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, (list, tuple)):
        return [report_value(v, floats=floats) for v in value]
    if isinstance(value, dict):
        return {str(k): report_value(v, floats=floats) for k, v in value.items()}
    return repr(value)
