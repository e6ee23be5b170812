"""Run snapshots: what one run gave, keyed so that two runs can be compared.

Takes a `Report` (a run that just happened) or a `--json` report file, and gives a
`RunSnapshot`: its suites, cases with their metrics, and assertions with their verdicts,
each assertion under a stable `AssertionKey` — the suite's path, the case's name, the
assertion's canonical text (`formatter.canonical_statement`, so reformatting a file keeps
every key) and, for the rare case that says the same thing twice, which occurrence it is.
The run history stores snapshots and `evaldsl diff` compares them; both read this model.

A report file that is not a JSON report, or one of another version, is a `SnapshotError`
naming the file and what was wrong, never a half-read snapshot.
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import attrs

from evaldsl.format.formatter import canonical_statement
from evaldsl.jsontext import NotJSONConstant, refuse_constant
from evaldsl.language.limits import MAX_DOCUMENT_BYTES
from evaldsl.language.reading import FileProblem, read_regular
from evaldsl.language.verdicts import Status, all_skipped, tested_rate
from evaldsl.runner.results import OUTCOMES, STATUSES, CaseMetrics, Outcome, Report

#: The `version` of the `--json` report this code reads (`Report.to_json` writes it).
REPORT_VERSION = 1

#: Case metrics, in the order reports show them (the fields of `CaseMetrics`).
METRICS: tuple[str, ...] = tuple(f.name for f in attrs.fields(CaseMetrics))


class SnapshotError(Exception):
    """A report file that cannot be read as a run: the message names file and problem."""


class AssertionKey(NamedTuple):
    """The identity of one assertion across runs."""

    suite: str  # the suite file's path, relative to the working folder when under it
    case: str
    text: str  # canonical text
    occurrence: int = 0  # 0 for the first assertion with this text in the case, 1 next…

    def label(self) -> str:
        """`suite :: case :: text`, how messages name an assertion."""
        return f"{self.suite} :: {self.case} :: {self.text}"

    def to_json(self) -> dict[str, Any]:
        """The key's fields as JSON outputs name them."""
        return {
            "suite": self.suite,
            "case": self.case,
            "assertion": self.text,
            "occurrence": self.occurrence,
        }


@attrs.frozen
class AssertionSnapshot:
    """One assertion's verdict in one run."""

    key: AssertionKey
    text: str  # as written in the suite
    status: Status
    message: str = ""
    found: Any = None
    expected: Any = None
    line: int = 0
    column: int = 0


@attrs.frozen
class CaseSnapshot:
    """One case of one run: its outcome, its metrics and its assertions."""

    suite: str
    name: str
    passed: bool
    score: float
    error: str | None
    metrics: dict[str, float | int | None]
    assertions: tuple[AssertionSnapshot, ...]

    @property
    def crashed(self) -> bool:
        """The run could not be read or produced, so no assertion was evaluated."""
        return self.error is not None and not self.assertions

    @property
    def skipped(self) -> bool:
        """Every assertion was skipped (a judge without a key): nothing was tested, so the
        case is neither passed nor failed (`CaseResult.outcome`'s rule)."""
        return self.error is None and all_skipped(a.status for a in self.assertions)

    @property
    def outcome(self) -> Outcome:
        """What the case amounts to, by `CaseResult.outcome`'s rule."""
        if self.error is not None or any(a.status == "error" for a in self.assertions):
            return "error"
        if not self.passed:
            return "failed"
        return "skipped" if self.skipped else "passed"


@attrs.frozen
class SuiteSnapshot:
    """One suite file of one run."""

    path: str
    name: str
    cases: tuple[CaseSnapshot, ...]
    errors: int = 0  # error diagnostics found while loading and checking it

    @property
    def passed(self) -> int:
        return sum(1 for c in self.cases if c.passed and not c.skipped)

    @property
    def score(self) -> float:
        """The mean case score (0 for no cases), as the report computes it."""
        return sum(c.score for c in self.cases) / len(self.cases) if self.cases else 0.0

    @property
    def pass_rate(self) -> float:
        return pass_rate(self.cases)


@attrs.frozen
class RunSnapshot:
    """A whole run: where it came from (a history run or a report file) and its suites."""

    label: str  # "run 12", or the report file's path
    suites: tuple[SuiteSnapshot, ...]
    run_id: int | None = None
    started_at: str | None = None  # UTC, ISO 8601
    commit: str | None = None
    dirty: bool | None = None
    selection: str | None = None  # the `-k` pattern that chose the cases
    interrupted: bool = False  # Ctrl-C stopped it: some chosen cases did not run

    @property
    def cases(self) -> list[CaseSnapshot]:
        return [c for s in self.suites for c in s.cases]

    @property
    def score(self) -> float:
        cases = self.cases
        return sum(c.score for c in cases) / len(cases) if cases else 0.0

    @property
    def pass_rate(self) -> float:
        return pass_rate(self.cases)


def pass_rate(cases: Sequence[CaseSnapshot]) -> float:
    """The share of the tested cases that passed (skipped ones are neither), as every
    report counts it; 0 when no case was tested."""
    skipped = sum(1 for c in cases if c.skipped)
    return tested_rate(sum(1 for c in cases if c.passed and not c.skipped), len(cases), skipped)


def suite_key(path: str, base: Path | None = None) -> str:
    """A suite path as history keys it: relative to `base` (the working folder) when it is
    under it, with `/` separators, without a leading `./`.

    >>> suite_key("./examples/weather/weather.eval")
    'examples/weather/weather.eval'
    """
    p = Path(path)
    if p.is_absolute():
        here = (base or Path.cwd()).resolve()
        if p.resolve().is_relative_to(here):
            p = p.resolve().relative_to(here)
    return p.as_posix()


def keyed(suite: str, case: str, texts: Iterable[str]) -> list[AssertionKey]:
    """The keys of a case's assertions, given their texts as written, in order.

    >>> [k.occurrence for k in keyed("s.eval", "c", ["steps <= 2", "steps  <= 2"])]
    [0, 1]
    """
    seen: dict[str, int] = {}
    keys = []
    for text in texts:
        canonical = _canonical(text)
        n = seen.get(canonical, 0)
        seen[canonical] = n + 1
        keys.append(AssertionKey(suite, case, canonical, n))
    return keys


# Suite-level assertions and `each` rows repeat their text in every case, and a suite's
# texts repeat from run to run: each distinct text is parsed once per process. Room for
# the texts of two large runs (`evaldsl diff` reads both): at 16,384 a diff of two runs of
# 40,000 distinct texts found none of the second run's left and parsed all again.
_canonical = functools.lru_cache(maxsize=1 << 17)(canonical_statement)


def _unique_case_names(names: Iterable[str]) -> list[str]:
    """Case names made unique within a suite: a repeated name gets ` (2)`, ` (3)`…, so
    two cases of one name never share their assertions' keys."""
    seen: dict[str, int] = {}
    out = []
    for name in names:
        n = seen.get(name, 0) + 1
        seen[name] = n
        out.append(name if n == 1 else f"{name} ({n})")
    return out


_SURROGATE = re.compile("[\ud800-\udfff]")


def snapshot_of_report(report: Report, *, label: str = "this run") -> RunSnapshot:
    """The snapshot of a run that just happened (the `Report` the runner gave)."""
    return snapshot_of_json(report.to_json(), label=label)


def load_report_file(path: str | os.PathLike[str]) -> RunSnapshot:
    """A `--json` report file as a snapshot; anything else is a `SnapshotError`."""
    name = os.fspath(path)
    try:
        # (a regular file only: a named pipe was waited on for ever, /dev/zero read until
        # memory ran out)
        raw = read_regular(name, MAX_DOCUMENT_BYTES)
    except FileProblem as err:
        if err.kind == "missing":
            raise SnapshotError(f"{name}: no such report file") from None
        if err.kind == "folder":
            raise SnapshotError(f"{name}: a folder, not a JSON report file") from None
        if err.kind == "unreadable":
            raise SnapshotError(f"{name}: {err.message}") from None
        raise SnapshotError(f"{name}: not a JSON report file: {err.message}") from None
    try:
        data = json.loads(raw.decode("utf-8"), parse_constant=refuse_constant)
    except NotJSONConstant as err:
        raise SnapshotError(
            f"{name}: not a JSON report (`{err.name}`, which JSON has no literal for: "
            "evaldsl writes no such number)"
        ) from None
    except UnicodeDecodeError:
        raise SnapshotError(f"{name}: not a JSON report (not UTF-8 text)") from None
    except json.JSONDecodeError as err:
        raise SnapshotError(
            f"{name}:{err.lineno}:{err.colno}: not a JSON report (invalid JSON: {err.msg})"
        ) from None
    except ValueError:  # an integer past Python's limit of digits (`json.load`'s error)
        raise SnapshotError(f"{name}: not a JSON report (a number of too many digits)") from None
    except RecursionError:
        raise SnapshotError(f"{name}: not a JSON report (nested too deeply)") from None
    if not isinstance(data, dict) or "suites" not in data or "version" not in data:
        raise SnapshotError(
            f"{name}: not an evaldsl JSON report (expected an object with "
            '"version" and "suites", as `evaldsl run --json FILE` writes)'
        )
    version = data["version"]
    if version != REPORT_VERSION:
        raise SnapshotError(
            f"{name}: a JSON report of version {json.dumps(version)}; this evaldsl reads "
            f"version {REPORT_VERSION} (run the suites again with this evaldsl to compare)"
        )
    return snapshot_of_json(data, label=name, where=name)


def snapshot_of_json(data: dict[str, Any], *, label: str, where: str = "report") -> RunSnapshot:
    """A decoded `--json` report as a snapshot, every field checked on the way.

    A lone surrogate (in a case name, an answer, a message) is kept as its escape, the
    text `\\udc80`: SQLite stores UTF-8, which cannot carry one, a run must never be left
    out of the history for it, and a report file and the history must name it alike."""
    text = json.dumps(data, ensure_ascii=False)
    if _SURROGATE.search(text):
        data = json.loads(_SURROGATE.sub(lambda m: f"\\\\u{ord(m.group()):04x}", text))
    reader = _Reader(where)
    suites = []
    for i, suite in enumerate(reader.items(data, "suites", "")):
        at = f"suites[{i}]"
        obj = reader.obj(suite, at)
        path = suite_key(reader.text(obj, "path", at))
        cases_raw = [
            reader.obj(c, f"{at}.cases[{j}]") for j, c in enumerate(reader.items(obj, "cases", at))
        ]
        names = _unique_case_names(
            reader.text(c, "name", f"{at}.cases[{j}]") for j, c in enumerate(cases_raw)
        )
        cases = [
            _case(reader, c, path, name, f"{at}.cases[{j}]")
            for j, (c, name) in enumerate(zip(cases_raw, names, strict=True))
        ]
        diagnostics = reader.items(obj, "diagnostics", at)
        errors = sum(1 for d in diagnostics if isinstance(d, dict) and d.get("severity") == "error")
        suites.append(SuiteSnapshot(path, reader.text(obj, "name", at), tuple(cases), errors))
    selection = data.get("selection")
    if selection is not None and not isinstance(selection, str):
        raise reader.error("selection", "not text (the `-k` pattern that chose the cases)")
    interrupted = data.get("interrupted", False)
    if not isinstance(interrupted, bool):
        raise reader.error("interrupted", "not true or false (whether Ctrl-C stopped the run)")
    return RunSnapshot(label, tuple(suites), selection=selection, interrupted=interrupted)


def _case(reader: _Reader, obj: dict[str, Any], suite: str, name: str, at: str) -> CaseSnapshot:
    raw = [
        reader.obj(a, f"{at}.assertions[{k}]")
        for k, a in enumerate(reader.items(obj, "assertions", at))
    ]
    texts = [reader.text(a, "text", f"{at}.assertions[{k}]") for k, a in enumerate(raw)]
    assertions = []
    for k, (a, key) in enumerate(zip(raw, keyed(suite, name, texts), strict=True)):
        here = f"{at}.assertions[{k}]"
        status = reader.text(a, "status", here)
        if status not in STATUSES:
            raise reader.error(here + ".status", f"{json.dumps(status)} is not a verdict status")
        # (a location or message of another shape was read as none: line 0, no message)
        location = a.get("location")
        if location is None:
            location = {}
        elif not isinstance(location, dict):
            raise reader.error(here + ".location", "not an object (where the assertion is written)")
        message = a.get("message")
        if message is not None and not isinstance(message, str):
            raise reader.error(here + ".message", "not text or null")
        assertions.append(
            AssertionSnapshot(
                key,
                texts[k],
                status,
                message=message or "",
                found=a.get("actual"),
                expected=a.get("expected"),
                line=_position(reader, location, "line", here),
                column=_position(reader, location, "column", here),
            )
        )
    metrics_raw = obj.get("metrics") or {}
    if not isinstance(metrics_raw, dict):
        raise reader.error(at + ".metrics", "not an object")
    metrics: dict[str, float | int | None] = {}
    for m in METRICS:
        value = metrics_raw.get(m)
        if value is None:  # (missing or null: not measured in that run)
            metrics[m] = None
        elif isinstance(value, int | float) and not isinstance(value, bool):
            metrics[m] = _number(reader, value, f"{at}.metrics.{m}")
        else:  # (taken as not measured, `"input_tokens": "many"` made tokens 461 → 41)
            raise reader.error(f"{at}.metrics.{m}", f"{json.dumps(value)} is not a number")
    passed = obj.get("passed")
    score = obj.get("score")
    if not isinstance(passed, bool):
        raise reader.error(at + ".passed", "missing or not true/false")
    if not isinstance(score, int | float) or isinstance(score, bool):
        raise reader.error(at + ".score", "missing or not a number")
    if not 0 <= _number(reader, score, at + ".score") <= 1:
        # (a case's score is the share of its assertions that passed: one outside 0-1 was
        # averaged into the run's, `score 0.533 → 78706108047827419136.000`)
        raise reader.error(at + ".score", f"{json.dumps(score)} is not a score from 0 to 1")
    error = obj.get("error")
    if error is not None and not isinstance(error, str):  # (was read as no crash)
        raise reader.error(at + ".error", "not text or null (why the case's run crashed)")
    _duration(reader, obj, at)
    case = CaseSnapshot(
        suite,
        name,
        passed,
        float(score),
        error,
        metrics,
        tuple(assertions),
    )
    _outcome(reader, obj, case, at)
    return case


def _outcome(reader: _Reader, obj: dict[str, Any], case: CaseSnapshot, at: str) -> None:
    """Refuses a case's `outcome` that is not one, or not the one its other fields give
    (`"weird"` was not read at all, and `diff` said "no changes"). A report written by
    hand may leave it out: it follows from `passed`, `error` and the assertions."""
    outcome = obj.get("outcome")
    if outcome is None:
        return
    if outcome not in OUTCOMES:
        names = ", ".join(OUTCOMES)
        raise reader.error(at + ".outcome", f"{json.dumps(outcome)} is not an outcome ({names})")
    if outcome != case.outcome:
        raise reader.error(
            at + ".outcome",
            f"{json.dumps(outcome)}, but the case's passed, error and assertions make it "
            f"{json.dumps(case.outcome)}",
        )


def _duration(reader: _Reader, obj: dict[str, Any], at: str) -> None:
    """Refuses a case's `duration_ms` that is not a time (`1e999` was read as nothing)."""
    value = obj.get("duration_ms")
    if value is None:
        return
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise reader.error(at + ".duration_ms", f"{json.dumps(value)} is not a number")
    if _number(reader, value, at + ".duration_ms") < 0:
        raise reader.error(at + ".duration_ms", f"{json.dumps(value)} is not a time (below 0)")


def _number(reader: _Reader, value: int | float, at: str) -> int | float:
    """`value`, a number a report can hold: one past a float's range (`10**400`, or
    `1e999`, which JSON decoding makes infinite) cannot be compared or shown as the
    report's numbers are."""
    try:
        finite = math.isfinite(float(value))
    except OverflowError:
        finite = False
    if not finite:
        raise reader.error(at, "a number too large for a report")
    return value


class _Reader:
    """Field access on a decoded report that fails with the path of the field at fault."""

    def __init__(self, where: str) -> None:
        self.where = where

    def error(self, at: str, problem: str) -> SnapshotError:
        return SnapshotError(f"{self.where}: not a valid JSON report: {at}: {problem}")

    def obj(self, value: Any, at: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.error(at, "expected an object")
        return value

    def items(self, obj: dict[str, Any], key: str, at: str) -> list[Any]:
        value = obj.get(key)
        if not isinstance(value, list):
            raise self.error(_join(at, key), "missing or not a list")
        return value

    def text(self, obj: dict[str, Any], key: str, at: str) -> str:
        value = obj.get(key)
        if not isinstance(value, str):
            raise self.error(_join(at, key), "missing or not text")
        return value


def _position(reader: _Reader, location: dict[str, Any], key: str, at: str) -> int:
    """A location's 1-based line or column; 0 when the report leaves it out."""
    value = location.get(key)
    if value is None:
        return 0
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise reader.error(f"{at}.location.{key}", f"{json.dumps(value)} is not a {key} number")
    return value


def _join(at: str, key: str) -> str:
    return f"{at}.{key}" if at else key
