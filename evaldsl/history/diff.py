"""`evaldsl diff`: what changed between two runs.

Takes two `RunSnapshot`s (from the run history or from `--json` report files) and gives a
`RunDiff`: regressions (an assertion that passed and now fails or errors), fixes (failed
or errored, now passes), other status changes (pass → skip, fail → error…), assertions
added and removed, and each case's metric deltas (tokens, latency, cost, steps, tool calls,
guards). Assertions are matched by their stable key (suite path, case name, canonical
text), so a reformatted suite compares cleanly. A case whose run crashed has no verdicts;
its assertions count as errors, as the runner scores them, so a crash is a regression of
every assertion that passed before. Renders the diff as text, JSON or Markdown.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal, TextIO

import attrs

from evaldsl.history.snapshots import (
    AssertionKey,
    AssertionSnapshot,
    CaseSnapshot,
    RunSnapshot,
    SnapshotError,
    load_report_file,
    pass_rate,
)
from evaldsl.history.store import DEFAULT_PATH, History, HistoryError
from evaldsl.history.trends import commit_label, percent, when
from evaldsl.language.printable import visible
from evaldsl.language.reading import is_regular
from evaldsl.reports.markdown import cell, code

ChangeKind = Literal["regression", "fix", "changed", "added", "removed"]
KINDS: tuple[ChangeKind, ...] = ("regression", "fix", "changed", "added", "removed")
_HEADINGS: dict[ChangeKind, str] = {
    "regression": "regressions (passed before; fail or error now)",
    "fix": "fixes (failed or errored before; pass now)",
    "changed": "other status changes",
    "added": "added assertions",
    "removed": "removed assertions",
}
_MD_HEADINGS: dict[ChangeKind, str] = {
    "regression": "❌ Regressions",
    "fix": "✅ Fixes",
    "changed": "Other status changes",
    "added": "➕ Added",
    "removed": "➖ Removed",
}

#: The metrics compared, in the order shown; `tokens` is input + output tokens.
METRICS: tuple[str, ...] = ("tokens", "latency_ms", "cost", "steps", "tool_calls", "guards")
_METRIC_WORDS = {
    "tokens": "tokens",
    "latency_ms": "latency",
    "cost": "cost",
    "steps": "steps",
    "tool_calls": "tool calls",
    "guards": "guards",
}


@attrs.frozen
class Change:
    """One assertion whose status differs between the runs (or that one run lacks)."""

    kind: ChangeKind
    key: AssertionKey
    before: AssertionSnapshot | None
    after: AssertionSnapshot | None

    def to_json(self) -> dict[str, Any]:
        return {
            **self.key.to_json(),
            "before": _verdict(self.before),
            "after": _verdict(self.after),
        }


def _verdict(a: AssertionSnapshot | None) -> dict[str, Any] | None:
    if a is None:
        return None
    return {
        "status": a.status,
        "text": a.text,
        "line": a.line,
        "message": a.message,
        "found": a.found,
        "expected": a.expected,
    }


@attrs.frozen
class MetricChange:
    """One metric of one case that moved."""

    suite: str
    case: str
    metric: str
    before: float
    after: float

    @property
    def relative(self) -> float | None:
        """(after − before) ÷ before; None when before is 0."""
        return (self.after - self.before) / self.before if self.before else None

    def to_json(self) -> dict[str, Any]:
        rel = self.relative
        return {
            "suite": self.suite,
            "case": self.case,
            "metric": self.metric,
            "before": self.before,
            "after": self.after,
            "change": None if rel is None else round(rel, 6),
        }


@attrs.frozen
class RunDiff:
    """Everything that changed from `before` to `after`.

    Only suites both runs ran are compared: a suite one run did not include (another
    PATH was given) is listed in `only_before` or `only_after`, not as assertions added or
    removed. Likewise, when a run chose its cases with `-k`, a case only one run has is
    counted in `not_compared`, not taken apart.
    """

    before: RunSnapshot
    after: RunSnapshot
    changes: tuple[Change, ...]
    metrics: tuple[MetricChange, ...]
    only_before: tuple[str, ...] = ()  # suite paths
    only_after: tuple[str, ...] = ()
    not_compared: int = 0  # cases of a `-k` or an interrupted run only the other ran

    @property
    def interrupted(self) -> list[RunSnapshot]:
        """The runs Ctrl-C stopped (their cases not run are not compared)."""
        return [run for run in (self.before, self.after) if run.interrupted]

    @property
    def compared(self) -> tuple[float, float, float, float]:
        """Score and pass rate before and after, over the suites both runs ran."""
        skip_a, skip_b = set(self.only_before), set(self.only_after)
        a = [c for c in self.before.cases if c.suite not in skip_a]
        b = [c for c in self.after.cases if c.suite not in skip_b]
        return (
            _mean([c.score for c in a]),
            pass_rate(a),
            _mean([c.score for c in b]),
            pass_rate(b),
        )

    @property
    def shared(self) -> int:
        """How many suites both runs ran (the only ones compared)."""
        return len({s.path for s in self.before.suites} - set(self.only_before))

    def of(self, kind: ChangeKind) -> list[Change]:
        return [c for c in self.changes if c.kind == kind]

    @property
    def regressions(self) -> list[Change]:
        return self.of("regression")

    def to_json(self) -> dict[str, Any]:
        return {
            "version": 1,
            "before": _run_json(self.before, self.compared[:2]),
            "after": _run_json(self.after, self.compared[2:]),
            "summary": {
                **{kind: len(self.of(kind)) for kind in KINDS},
                "metric_changes": len(self.metrics),
            },
            **{_plural(kind): [c.to_json() for c in self.of(kind)] for kind in KINDS},
            "metrics": [m.to_json() for m in self.metrics],
            "suites_only_before": list(self.only_before),
            "suites_only_after": list(self.only_after),
            "cases_not_compared": self.not_compared,
        }


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def _plural(kind: ChangeKind) -> str:
    return {"regression": "regressions", "fix": "fixes"}.get(kind, kind)


def _run_json(run: RunSnapshot, compared: tuple[float, float]) -> dict[str, Any]:
    return {
        "label": run.label,
        "run_id": run.run_id,
        "started_at": run.started_at,
        "commit": run.commit,
        "dirty": run.dirty,
        "selection": run.selection,
        "interrupted": run.interrupted,
        "cases": len(run.cases),
        "score": round(compared[0], 6),  # over the suites both runs ran
        "pass_rate": round(compared[1], 6),
    }


# ---- comparing -----------------------------------------------------------------------------


def compare(before: RunSnapshot, after: RunSnapshot, *, min_change: float = 0.0) -> RunDiff:
    """The diff of two runs. A metric moving by less than `min_change` (a fraction: 0.05 is
    5%) is not listed; a metric that was 0 and is not is always listed."""
    suites_a = [s.path for s in before.suites]
    suites_b = [s.path for s in after.suites]
    common = set(suites_a) & set(suites_b)
    cases_a = {(c.suite, c.name): c for c in before.cases if c.suite in common}
    cases_b = {(c.suite, c.name): c for c in after.cases if c.suite in common}
    order = list(cases_b) + [k for k in cases_a if k not in cases_b]
    selected = bool(before.selection or after.selection)
    changes: list[Change] = []
    metrics: list[MetricChange] = []
    not_compared = 0
    for where in order:
        a, b = cases_a.get(where), cases_b.get(where)
        # (a case a `-k` run did not choose, or an interrupted run did not reach, was
        # not run there: neither added nor removed)
        unrun = (a is None and before.interrupted) or (b is None and after.interrupted)
        if (selected or unrun) and (a is None or b is None):
            not_compared += 1
            continue
        changes += _case_changes(a, b)
        if a is not None and b is not None:
            metrics += _metric_changes(a, b, min_change)
    return RunDiff(
        before,
        after,
        tuple(changes),
        tuple(metrics),
        tuple(p for p in suites_a if p not in common),
        tuple(p for p in suites_b if p not in common),
        not_compared,
    )


def _case_changes(a: CaseSnapshot | None, b: CaseSnapshot | None) -> Iterator[Change]:
    before = _verdicts(a, b)
    after = _verdicts(b, a)
    for key, new in after.items():
        old = before.get(key)
        if old is None:
            yield Change("added", key, None, new)
        elif old.status != new.status:
            if old.status == "pass" and new.status in ("fail", "error"):
                kind: ChangeKind = "regression"
            elif old.status in ("fail", "error") and new.status == "pass":
                kind = "fix"
            else:
                kind = "changed"
            yield Change(kind, key, old, new)
    for key, old in before.items():
        if key not in after:
            yield Change("removed", key, old, None)


def _verdicts(
    case: CaseSnapshot | None, other: CaseSnapshot | None
) -> dict[AssertionKey, AssertionSnapshot]:
    """A case's assertions by key; a crashed case's are the other run's, as errors."""
    if case is None:
        return {}
    if case.crashed and other is not None:
        # (a case's error may say "not run: …" itself: said once)
        error = case.error or ""
        message = error if error.startswith("not run") else f"the case did not run: {error}"
        return {
            a.key: AssertionSnapshot(a.key, a.text, "error", message, line=a.line, column=a.column)
            for a in other.assertions
        }
    return {a.key: a for a in case.assertions}


def case_metrics(case: CaseSnapshot) -> dict[str, float | None]:
    """The metrics `diff` compares, `tokens` (input + output) included."""
    m = case.metrics
    tin, tout = m.get("input_tokens"), m.get("output_tokens")
    tokens = None if tin is None and tout is None else (tin or 0) + (tout or 0)
    values: dict[str, float | None] = {"tokens": tokens}
    for name in METRICS[1:]:
        value = m.get(name)
        values[name] = None if value is None else value
    return values


def _metric_changes(a: CaseSnapshot, b: CaseSnapshot, min_change: float) -> Iterator[MetricChange]:
    before, after = case_metrics(a), case_metrics(b)
    for name in METRICS:
        x, y = before[name], after[name]
        if x is None or y is None or x == y:
            continue
        change = MetricChange(b.suite, b.name, name, x, y)
        rel = change.relative
        if rel is None or abs(rel) >= min_change:
            yield change


# ---- rendering -----------------------------------------------------------------------------


def describe_run(run: RunSnapshot) -> str:
    """`run 5 (2026-11-29 10:05:13, 1ef93a9+)`, or a report file's path (`r.json (-k 'x')`
    when its cases were chosen)."""
    if run.run_id is None:
        return f"{run.label} (-k {run.selection!r})" if run.selection else run.label
    details = [when(run.started_at or "")] if run.started_at else []
    details.append(commit_label(run.commit, run.dirty))
    if run.selection:
        details.append(f"-k {run.selection!r}")
    return f"{run.label} ({', '.join(details)})"


def metric_value(name: str, value: float) -> str:
    """A metric as people read it: `1.72s`, `$0.00014`, `1,204`.

    >>> metric_value("latency_ms", 1720.0), metric_value("cost", 0.00014)
    ('1.72s', '$0.00014')
    >>> metric_value("tokens", 1204)
    '1,204'
    """
    if name == "latency_ms":
        return f"{value / 1000:.2f}s" if value >= 1000 else f"{value:.0f}ms"
    if name == "cost":
        text = f"{value:.6f}".rstrip("0").rstrip(".")
        return f"${text}"
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.2f}"


def metric_change(m: MetricChange) -> str:
    """`tokens 461 → 517 (+12.1%)`."""
    rel = m.relative
    share = "new" if rel is None else f"{rel:+.1%}"
    return (
        f"{_METRIC_WORDS[m.metric]} {metric_value(m.metric, m.before)} → "
        f"{metric_value(m.metric, m.after)} ({share})"
    )


def _value(value: Any, limit: int = 120) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def summary_line(d: RunDiff) -> str:
    """`1 regression, 1 fix, …` with the score and pass rate before and after."""
    counts = [
        _count(len(d.of("regression")), "regression", "regressions"),
        _count(len(d.of("fix")), "fix", "fixes"),
        _count(len(d.of("changed")), "other change", "other changes"),
        f"{len(d.of('added'))} added",
        f"{len(d.of('removed'))} removed",
        _count(len(d.metrics), "metric change", "metric changes"),
    ]
    score_a, rate_a, score_b, rate_b = d.compared
    return (
        f"score {score_a:.3f} → {score_b:.3f}, pass rate {percent(rate_a)} → "
        f"{percent(rate_b)}{_over(d)}; " + ", ".join(counts)
    )


def _over(d: RunDiff) -> str:
    """What the score and pass rate cover when a run ran suites the other did not: the
    shared suites only, which is neither run's own score (said, never left to guess)."""
    only = [
        f"{_count(len(paths), 'suite', 'suites')} only in {run.label}"
        for paths, run in ((d.only_before, d.before), (d.only_after, d.after))
        if paths
    ]
    if not only:
        return ""
    shared = _count(d.shared, "suite", "suites")
    return f" (over the {shared} both runs ran, not the {' and '.join(only)})"


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def render_text(d: RunDiff) -> str:
    """The diff as `evaldsl diff` prints it."""
    out = [f"{describe_run(d.before)} → {describe_run(d.after)}", summary_line(d)]
    for kind in KINDS:
        items = d.of(kind)
        if not items:
            continue
        out += ["", f"{_HEADINGS[kind]}:"]
        for c in items:
            out.append(f"  {c.key.label()}")
            if c.before is not None and c.after is not None:
                out.append(f"    {c.before.status} → {c.after.status}: {_value(c.after.message)}")
            elif c.after is not None:
                out.append(f"    {c.after.status}: {_value(c.after.message)}")
            elif c.before is not None:
                out.append(f"    was {c.before.status}")
    if d.metrics:
        out += ["", "metrics:"]
        for (suite, case), changes in _by_case(d.metrics):
            out.append(f"  {suite} :: {case}")
            out.append("    " + "; ".join(metric_change(m) for m in changes))
    out += _not_compared(d)
    if not d.changes and not d.metrics:
        out += ["", "no changes: every assertion has the same status and no metric moved"]
    # Names, messages and paths are a suite's, a trace's or a judge's text: an escape
    # sequence in a case name must show, not act on the terminal (or break the line).
    return "".join(visible(line, newlines=False) + "\n" for line in out)


def _not_compared(d: RunDiff) -> list[str]:
    out: list[str] = []
    for paths, which in ((d.only_before, d.before), (d.only_after, d.after)):
        if paths:
            out += ["", f"not compared, only {which.label} ran: {', '.join(paths)}"]
    for run in d.interrupted:
        out += [
            "",
            f"{run.label} was interrupted (Ctrl-C or SIGTERM): the cases it did not run are "
            "not compared",
        ]
    if d.not_compared:
        why = "selected" if not d.interrupted else "ran" if not _selected(d) else "selected or ran"
        out += [
            "",
            f"not compared: {_count(d.not_compared, 'case', 'cases')} only one run {why}",
        ]
    return out


def _selected(d: RunDiff) -> bool:
    return bool(d.before.selection or d.after.selection)


def _listed(paths: tuple[str, ...]) -> str:
    return ", ".join(paths) if paths else "no suite"


def _by_case(metrics: tuple[MetricChange, ...]) -> list[tuple[tuple[str, str], list[MetricChange]]]:
    groups: dict[tuple[str, str], list[MetricChange]] = {}
    for m in metrics:
        groups.setdefault((m.suite, m.case), []).append(m)
    return list(groups.items())


def heading_mark(d: RunDiff) -> str:
    """The Markdown heading's mark, from the whole picture: ❌ when an assertion regressed;
    ⚠️ when none did but the score or pass rate fell, or an added assertion fails or errors
    (a suite rewritten so that no assertion is the same regresses nothing, and may fail
    everywhere); ✅ otherwise."""
    if d.regressions:
        return "❌"
    if d.interrupted:  # (what was not run may have regressed)
        return "⚠️"
    score_a, rate_a, score_b, rate_b = d.compared
    new_failures = any(
        c.after is not None and c.after.status in ("fail", "error") for c in d.of("added")
    )
    return "⚠️" if score_b < score_a or rate_b < rate_a or new_failures else "✅"


def render_markdown(d: RunDiff) -> str:
    """The diff as Markdown, for a pull-request comment."""
    mark = heading_mark(d)
    out = [
        f"## {mark} evaldsl diff: {cell(describe_run(d.before))} → {cell(describe_run(d.after))}",
        "",
        cell(summary_line(d), None),
    ]
    for kind in KINDS:
        items = d.of(kind)
        if not items:
            continue
        out += ["", f"### {_MD_HEADINGS[kind]}", ""]
        out += [
            "| suite | case | assertion | before | after | message |",
            "|---|---|---|---|---|---|",
        ]
        for c in items:
            now = c.after or c.before
            assert now is not None
            out.append(
                f"| {code(c.key.suite, table=True)} | {cell(c.key.case)} | "
                f"{code(c.key.text, table=True)} | {c.before.status if c.before else '—'} | "
                f"{c.after.status if c.after else '—'} | {cell(now.message)} |"
            )
    if d.metrics:
        out += ["", "### Metrics", "", "| suite | case | metric | before | after | change |"]
        out.append("|---|---|---|---|---:|---:|")
        for m in d.metrics:
            rel = m.relative
            out.append(
                f"| {code(m.suite, table=True)} | {cell(m.case)} | {_METRIC_WORDS[m.metric]} | "
                f"{metric_value(m.metric, m.before)} | {metric_value(m.metric, m.after)} | "
                f"{'new' if rel is None else f'{rel:+.1%}'} |"
            )
    out += _not_compared(d)
    if not d.changes and not d.metrics:
        out += ["", "No changes: every assertion has the same status and no metric moved."]
    return "\n".join(out) + "\n"


# ---- the command ---------------------------------------------------------------------------


def names_file(ref: str) -> bool:
    """Whether a run named on the command line is a JSON report file (a file, a `.json`
    name, a path with a folder), not a run of the history (`last`, `last~1`, an id)."""
    return is_regular(ref) or Path(ref).suffix.lower() == ".json" or "/" in ref or "\\" in ref


def load(ref: str, history: History | None) -> RunSnapshot:
    """A run named on the command line: a JSON report file, or a run of the history."""
    if names_file(ref):
        return load_report_file(ref)
    if history is None:
        raise HistoryError(f"{ref!r} names a run of the history, and there is none")
    return history.snapshot(history.resolve(ref))


def diff_command(
    refs: list[str],
    *,
    database: str | None,
    fmt: str,
    fail_on_regression: bool,
    min_change: float,
    out: TextIO,
    err: TextIO,
) -> int:
    """`evaldsl diff [A] [B]`: 0; 1 with `--fail-on-regression` when something regressed;
    2 when a run cannot be found or read, or the runs share no suite."""
    if len(refs) > 2:
        print("evaldsl: error: diff compares two runs: give at most A and B", file=err)
        return 2
    if not min_change >= 0:  # (NaN too: no move is at least NaN, so it hid them all)
        print("evaldsl: error: --min-change takes a percentage ≥ 0", file=err)
        return 2
    a, b = ["last~1", "last"] if not refs else [refs[0], "last"] if len(refs) == 1 else refs
    history: History | None = None
    try:
        if any(not names_file(r) for r in (a, b)):
            history = History.open(Path(database) if database else DEFAULT_PATH)
            if not refs and history.count() < 2:
                raise HistoryError(
                    f"diff needs two runs and {history.path} holds {history.count()}: "
                    "run the suites again, or name two JSON report files"
                )
        before, after = load(a, history), load(b, history)
    except (HistoryError, SnapshotError) as problem:
        print(f"evaldsl: error: {problem}", file=err)
        return 2
    finally:
        if history is not None:
            history.close()
    d = compare(before, after, min_change=min_change / 100)
    if d.shared == 0 and (d.only_before or d.only_after):
        # (every line would be "not compared" and the scores those of nothing: "no
        # changes" would pass a `--fail-on-regression` that compared nothing)
        print(
            f"evaldsl: error: nothing to compare: the runs share no suite ({before.label} "
            f"ran {_listed(d.only_before)}; {after.label} ran {_listed(d.only_after)})\n"
            "  = hint: diff two runs of the same suites: run them again with the same paths, "
            "or name two reports of them",
            file=err,
        )
        return 2
    if fmt == "json":
        out.write(json.dumps(d.to_json(), indent=2, ensure_ascii=False) + "\n")
    elif fmt == "markdown":
        out.write(render_markdown(d))
    else:
        out.write(render_text(d))
    if fail_on_regression and d.regressions:
        return 1
    if fail_on_regression and d.interrupted:
        # (a gate that passed what it never compared would pass a half-run)
        print(
            f"evaldsl: {d.interrupted[0].label} was interrupted (Ctrl-C or SIGTERM): a "
            "regression in the cases it did not run cannot be ruled out (exit 1 with "
            "--fail-on-regression)",
            file=err,
        )
        return 1
    return 0
