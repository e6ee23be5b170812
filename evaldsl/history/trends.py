"""`evaldsl history`: the recorded runs over time, per suite, and the assertions that flip.

Takes an open `History` (history.py), a window (the last N runs) and optional suite paths,
and gives a `Trends` record: the runs with their totals, each suite's pass rate and score
in each run, and the flaky assertions — those whose status changed most often between the
runs of the window that checked them — with the sequence of their statuses. Renders it as
text or JSON.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

import attrs

from evaldsl.history.snapshots import AssertionKey, suite_key
from evaldsl.history.store import DEFAULT_PATH, History, HistoryError, RunInfo, SuiteRow
from evaldsl.language.printable import visible
from evaldsl.language.verdicts import Status

#: Runs shown unless `--last N` says otherwise.
DEFAULT_WINDOW = 20
#: Flaky assertions listed in text (JSON lists every one that changed).
FLAKY_SHOWN = 10


@attrs.frozen
class Flaky:
    """An assertion whose status changed between runs, with its statuses in run order."""

    key: AssertionKey
    statuses: tuple[tuple[int, Status], ...]

    @property
    def changes(self) -> int:
        s = [status for _, status in self.statuses]
        return sum(1 for a, b in itertools.pairwise(s) if a != b)

    def to_json(self) -> dict[str, Any]:
        return {
            **self.key.to_json(),
            "changes": self.changes,
            "runs": len(self.statuses),
            "statuses": [{"run": r, "status": s} for r, s in self.statuses],
        }


@attrs.frozen
class Trends:
    """What `evaldsl history` shows."""

    database: str
    total_runs: int
    runs: tuple[RunInfo, ...]
    suites: dict[str, tuple[SuiteRow, ...]]  # path → one row per run of the window
    flaky: tuple[Flaky, ...]
    filtered: bool = False  # limited to some paths

    def to_json(self) -> dict[str, Any]:
        return {
            "database": self.database,
            "total_runs": self.total_runs,
            "runs": [r.to_json() for r in self.runs],
            "suites": [
                {
                    "path": path,
                    "name": rows[-1].name,
                    "runs": [
                        {
                            "run": row.run_id,
                            "cases": row.cases,
                            "passed": row.passed,
                            "skipped": row.skipped,
                            "pass_rate": round(row.pass_rate, 6),
                            "score": round(row.score, 6),
                            "errors": row.errors,
                        }
                        for row in rows
                    ],
                }
                for path, rows in self.suites.items()
            ],
            "flaky": [f.to_json() for f in self.flaky],
        }


def in_paths(suite: str, filters: Sequence[str]) -> bool:
    """Whether a suite path is one of `filters` or inside one of them (no filter: all).

    >>> in_paths("examples/weather/weather.eval", ["examples/weather"])
    True
    """
    if not filters:
        return True
    for f in filters:
        if f in (".", "") or suite == f or suite.startswith(f.rstrip("/") + "/"):
            return True
    return False


def trends(history: History, *, last: int = DEFAULT_WINDOW, paths: Sequence[str] = ()) -> Trends:
    """The last `last` runs of the history, limited to the suites under `paths`."""
    filters = [suite_key(p) for p in paths]
    runs = history.runs(last)
    suites: dict[str, list[SuiteRow]] = {}
    flaky: list[Flaky] = []
    if runs:
        first, final = runs[0].id, runs[-1].id
        for row in history.suite_rows(first, final):
            if in_paths(row.path, filters):
                suites.setdefault(row.path, []).append(row)
        crashed = history.crashed_cases(first, final)
        for key, statuses in history.statuses(first, final).items():
            if in_paths(key.suite, filters):
                item = Flaky(key, with_crashes(key, statuses, crashed, runs))
                if item.changes:
                    flaky.append(item)
    flaky.sort(key=lambda f: (-f.changes, f.key))
    if filters and runs and not suites:
        raise HistoryError(
            f"no suite under {', '.join(paths)} in the last {len(runs)} runs of {history.path}"
        )
    return Trends(
        str(history.path),
        history.count(),
        tuple(runs),
        {path: tuple(rows) for path, rows in suites.items()},
        tuple(flaky),
        bool(filters),
    )


def with_crashes(
    key: AssertionKey,
    statuses: list[tuple[int, Status]],
    crashed: set[tuple[str, str, int]],
    runs: Sequence[RunInfo],
) -> tuple[tuple[int, Status], ...]:
    """An assertion's statuses with an `error` in each run where its case crashed: such
    a case has no verdicts recorded, and every assertion of a crashed case is an error
    (as the runner scores it, and `diff` compares it), so pass → crash → pass is flaky."""
    found = dict(statuses)
    for run in runs:
        if run.id not in found and (key.suite, key.case, run.id) in crashed:
            found[run.id] = "error"
    return tuple(sorted(found.items()))


# ---- text ----------------------------------------------------------------------------------


def when(started_at: str) -> str:
    """A recorded time as the text output shows it: `2026-11-29 10:05:13` (UTC)."""
    return started_at.replace("T", " ")[:19]


def commit_label(commit: str | None, dirty: bool | None) -> str:
    """A short commit, `+` when the working tree had changes; `-` outside a repository.

    >>> commit_label("1ef93a9c0ffee", True), commit_label(None, None)
    ('1ef93a9+', '-')
    """
    if commit is None:
        return "-"
    return commit[:7] + ("+" if dirty else "")


def percent(value: float) -> str:
    return f"{100 * value:.1f}%"


def render_text(t: Trends) -> str:
    """`evaldsl history` as text."""
    if not t.runs:
        return f"{t.database}: no runs recorded yet\n"
    shown = len(t.runs)
    head = f"{t.database}: {t.total_runs} run{'s' if t.total_runs != 1 else ''}"
    if shown < t.total_runs:
        head += f", the last {shown} shown"
    out = [head, ""]
    rows = [["run", "started (UTC)", "commit", "cases", "pass rate", "score"]]
    for r in t.runs:
        rows.append(
            [
                str(r.id),
                when(r.started_at),
                commit_label(r.commit, r.dirty),
                str(r.cases),
                percent(r.pass_rate),
                f"{r.score:.3f}",
            ]
        )
    out += _table(rows, right={0, 3, 4, 5})
    # one suite and no PATH: its table would repeat the runs table
    per_suite = t.suites if len(t.suites) > 1 or t.filtered else {}
    for path, suite_rows in per_suite.items():
        out += ["", f"{path}: {suite_rows[-1].name}"]
        table = [["run", "cases", "pass rate", "score"]]
        for row in suite_rows:
            table.append(
                [str(row.run_id), str(row.cases), percent(row.pass_rate), f"{row.score:.3f}"]
            )
        out += ["  " + line for line in _table(table, right={0, 1, 2, 3})]
    out.append("")
    if not t.flaky:
        out.append("flaky: no assertion changed status in these runs")
    else:
        out.append("flaky: the assertions whose status changed most often")
        for f in t.flaky[:FLAKY_SHOWN]:
            sequence = " ".join(status for _, status in f.statuses)
            s = "s" if f.changes != 1 else ""
            out.append(f"  {f.changes} change{s} in {len(f.statuses)} runs ({sequence})")
            out.append(f"    {f.key.label()}")
        if len(t.flaky) > FLAKY_SHOWN:
            out.append(f"  …and {len(t.flaky) - FLAKY_SHOWN} more (--format json lists them all)")
    # (a suite's and a case's names are the suite's text: shown, never acted on, as the
    # console shows them)
    return "".join(visible(line, newlines=False) + "\n" for line in out)


def _table(rows: list[list[str]], *, right: set[int]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = []
    for r in rows:
        cells = [c.rjust(widths[i]) if i in right else c.ljust(widths[i]) for i, c in enumerate(r)]
        lines.append("  ".join(cells).rstrip())
    return lines


# ---- the command ---------------------------------------------------------------------------


def history_command(
    paths: Sequence[str],
    *,
    database: str | None,
    last: int,
    fmt: str,
    out: TextIO,
    err: TextIO,
) -> int:
    """`evaldsl history [PATH...]`: 0, or 2 when the history cannot be read."""
    if last < 1:
        print("evaldsl: error: --last takes a number of runs ≥ 1", file=err)
        return 2
    try:
        with History.open(Path(database) if database else DEFAULT_PATH) as history:
            found = trends(history, last=last, paths=paths)
    except HistoryError as problem:
        print(f"evaldsl: error: {problem}", file=err)
        return 2
    if fmt == "json":
        out.write(json.dumps(found.to_json(), indent=2, ensure_ascii=False) + "\n")
    else:
        out.write(render_text(found))
    return 0
