"""HTML report: a `Report` as one self-contained page to read in a browser.

Takes a `Report` (and, to show tool timelines, the loaded suites it came from) and gives
one HTML file with its CSS and JavaScript inline: it opens from `file://` and asks the
network for nothing (its Content-Security-Policy forbids it, and allows only its own two
inline blocks, by hash). The page shows a summary (pass rate, score, counts, duration,
totals), a pass-rate chart per suite, the suites' check problems, and the cases in a
list with filters (all, failed, errored, skipped, passed) and a text search; a case's
details show each failing assertion as the console does (source line, caret span, found
and expected), every other assertion's verdict, judge scores with their reasons, the
case's metrics and, for a recorded run, its tool timeline (`evaldsl.reports.timeline`).

Every string from a suite or a run reaches the page as data, never as markup: the report
is JSON inside `<script type="application/json">` with `<`, `>`, `&`, U+2028, U+2029 and
lone surrogates escaped, and the page builds its DOM with `textContent` only; control
characters and bidirectional controls in them show as escapes (`\\u202e`), as the console
shows them. Repeated strings (paths, source lines, assertion texts, messages) are stored
once in a string table, and the case list renders only the rows on screen, so 10,000
cases stay quick.

The data's shape (`DATA_VERSION`), read by `html_assets/report.js`:

    {"version", "title", "generated", "evaldsl", "event_limit", "strings": [...],
     "summary": {...Summary.to_json(), "outcomes": {passed, failed, error, skipped},
                 "suites_with_errors", "interrupted": text | null,
                 "not_run": [[suite, case], ...]},
     "suites": [{"name", "path", "diagnostics": [D...], "cases": [C...]}]}

where strings are indexes into `strings`, and
    C = {"name", "outcome", "score", "ms", "error",
         "metrics": [latency_ms, steps, tool_calls, input_tokens, output_tokens, cost,
                     guards], "assertions": [A...], "timeline": T | null}
    A = [text, path, line, column, status, message, found, expected, source_line,
         span_start, span_end, judge]   (span: code points of source_line to underline,
                                        as the console does; judge: null or
                                        [score, threshold, reason])
    T = [truncated, [[kind, name, at_ms, ms, sent, got, error], ...]]  (truncated and no
                                        step: left out, the report's `event_limit` steps
                                        kept before this case)
    D = [severity, code, message, path, line, column, source_line, span_start,
         span_end, hint]
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
from collections.abc import Sequence
from datetime import UTC, datetime
from importlib import resources
from typing import Any

from evaldsl.language.diagnostics import Diagnostic, abbreviated
from evaldsl.language.printable import json_escape
from evaldsl.reports import common, write_text
from evaldsl.reports import timeline as timeline_module
from evaldsl.reports.timeline import Timeline, timelines
from evaldsl.runner.results import AssertionResult, CaseResult, Report
from evaldsl.suites import Suite
from evaldsl.version import __version__

DATA_VERSION = 1

#: How many characters of a found or expected value the page keeps.
VALUE_LIMIT = 2000

# Characters that must not appear raw inside the page's JSON block: `<`, `>` and `&`
# could close the script element or start markup; U+2028/U+2029 end lines in older
# JavaScript; lone surrogates cannot be written as UTF-8.
_UNSAFE = re.compile("[<>&\u2028\u2029\ud800-\udfff]")

_OUTCOMES = ("passed", "failed", "error", "skipped")


def to_html_text(
    report: Report,
    suites: Sequence[Suite] | None = None,
    *,
    title: str = "evaldsl report",
) -> str:
    """The HTML report as text; with `suites` (those the report ran), recorded cases show
    their tool timelines.

    >>> page = to_html_text(Report(suites=(), duration_ms=0.0))
    >>> page.startswith("<!doctype html>"), 'id="evaldsl-data"' in page
    (True, True)
    """
    lines = timelines(suites, report) if suites is not None else None
    data = _Data().report(report, lines, title)
    return _page(json_for_html(data), title)


def write_html(
    report: Report,
    path: str | os.PathLike[str],
    *,
    suites: Sequence[Suite] | None = None,
) -> None:
    """Write the HTML report: `write_html(report, "out/report.html", suites=loaded)`.

    Parent folders are made; `-` writes to standard output; raises OSError when the file
    cannot be written.
    """
    write_text(to_html_text(report, suites), path)


def json_for_html(value: Any) -> str:
    r"""Compact JSON that is safe inside a `<script>` element: no `<`, `>` or `&` (so no
    `</script>` and no comment opener), no raw line or paragraph separators, no lone
    surrogates; JSON.parse gives back the same value.

    >>> json_for_html({"answer": "</script><b>&"})
    '{"answer":"\\u003c/script\\u003e\\u003cb\\u003e\\u0026"}'
    """
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return _UNSAFE.sub(json_escape, text)


class _Data:
    """Builds the page's data, with one string table for the whole report."""

    def __init__(self) -> None:
        self.strings: list[str] = []
        self.index: dict[str, int] = {}

    def s(self, text: str | None) -> int | None:
        """The string's index in the table (None stays None), as the page shows it:
        control characters and bidirectional controls as escapes (`common.visible`), as
        every other reporter shows them (a browser would reorder the text around a
        U+202E as a terminal does, and show what the text does not hold)."""
        if text is None:
            return None
        found = self.index.get(text)
        if found is None:
            found = self.index[text] = len(self.strings)
            self.strings.append(common.visible(text))
        return found

    def report(
        self, report: Report, lines: list[list[Timeline | None]] | None, title: str
    ) -> dict[str, Any]:
        outcomes = dict.fromkeys(_OUTCOMES, 0)
        suites = []
        labels = common.suite_labels(report.suites)  # (suites of one name: with their files)
        for i, suite in enumerate(report.suites):
            cases = []
            for j, case in enumerate(suite.cases):
                outcomes[common.outcome(case)] += 1
                timeline = lines[i][j] if lines is not None else None
                cases.append(self.case(case, timeline))
            suites.append(
                {
                    "name": self.s(labels[suite.path]),
                    "path": self.s(suite.path),
                    "diagnostics": [self.diagnostic(d) for d in suite.diagnostics],
                    "cases": cases,
                }
            )
        summary = report.summary.to_json()
        summary["outcomes"] = outcomes
        summary["suites_with_errors"] = sum(1 for s in report.suites if s.errors)
        # (Ctrl-C: the page says so, and names the cases that did not run)
        summary["interrupted"] = common.interruption(report)
        summary["not_run"] = [
            [self.s(labels[s.path]), self.s(name)] for s in report.suites for name in s.not_run
        ]
        return {
            "version": DATA_VERSION,
            "title": common.visible(title),
            "generated": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
            "evaldsl": __version__,
            "event_limit": timeline_module.REPORT_LIMIT,  # (read now: a test lowers it)
            "summary": summary,
            "suites": suites,
            "strings": self.strings,
        }

    def case(self, case: CaseResult, timeline: Timeline | None) -> dict[str, Any]:
        m = case.metrics
        return {
            "name": self.s(case.name),
            "outcome": common.outcome(case),
            "score": round(case.score, 4),
            "ms": round(case.duration_ms, 2),
            "error": self.s(case.error),
            "metrics": [
                m.latency_ms,
                m.steps,
                m.tool_calls,
                m.input_tokens,
                m.output_tokens,
                m.cost,
                m.guards,
            ],
            "assertions": [self.assertion(a) for a in case.assertions],
            "timeline": self.timeline(timeline) if timeline is not None else None,
        }

    def assertion(self, a: AssertionResult) -> list[Any]:
        has_values = common.has_values(a)
        start, end = common.span(a.source_line, a.column, a.end_column, a.text)
        return [
            self.s(a.text),
            self.s(a.path),
            a.line,
            a.column,
            a.status,
            self.s(a.message),
            self.s(common.found(a, VALUE_LIMIT)) if has_values else None,
            self.s(common.expected(a, VALUE_LIMIT)) if has_values else None,
            self.s(a.source_line),
            start,
            end,
            self.judge(a),
        ]

    def judge(self, a: AssertionResult) -> list[Any] | None:
        """Score, threshold and reason of a `judged` assertion the judge answered."""
        if not a.message.startswith("judge:") or " judged " not in f" {a.text} ":
            return None
        score = a.actual if isinstance(a.actual, int | float) else None
        threshold = a.expected if isinstance(a.expected, int | float) else None
        # the judge's message is `judge: PASS (score 0.9 ≥ 0.7) — its reason`
        _, dash, reason = a.message.partition(" — ")
        return [score, threshold, self.s(reason if dash else a.message)]

    def timeline(self, timeline: Timeline) -> list[Any]:
        return [
            timeline.truncated,
            [
                [
                    step.kind,
                    self.s(step.name),
                    _ms(step.at_ms),
                    _ms(step.ms),
                    self.s(step.sent),
                    self.s(step.got),
                    step.error,
                ]
                for step in timeline.steps
            ],
        ]

    def diagnostic(self, d: Diagnostic) -> list[Any]:
        end = d.end_column if d.end_line == d.line else len(d.source_line) + 1
        start, stop = common.span(d.source_line, d.column, end, "")
        return [
            d.severity,
            d.code,
            self.s(abbreviated(d.message)),  # (as the console shows it: one may quote MBs)
            self.s(d.path),
            d.line,
            d.column,
            self.s(d.source_line),
            start,
            stop,
            self.s(abbreviated(d.hint) if d.hint else d.hint),
        ]


def _ms(value: float | None) -> float | None:
    return round(value, 1) if value is not None else None


def _asset(name: str) -> str:
    return resources.files("evaldsl.reports").joinpath("html_assets", name).read_text("utf-8")


def _csp_hash(text: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return "'sha256-" + base64.b64encode(digest).decode("ascii") + "'"


def _page(data: str, title: str) -> str:
    """The page around the data: the template with its CSS, script and policy filled in."""
    css, script = _asset("report.css"), _asset("report.js")
    # Nothing may load from anywhere: no network, no other script or style than these two.
    policy = (
        f"default-src 'none'; style-src {_csp_hash(css)}; script-src {_csp_hash(script)}; "
        "img-src data:; base-uri 'none'; form-action 'none'"
    )
    template = _asset("report.html")
    filled = {
        "{{policy}}": policy,
        "{{title}}": _escape_html(title),
        "{{css}}": css,
        "{{data}}": data,
        "{{script}}": script,
    }
    return re.sub(r"\{\{\w+\}\}", lambda m: filled[m.group()], template)


def _escape_html(text: str) -> str:
    for raw, escaped in (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ('"', "&quot;")):
        text = text.replace(raw, escaped)
    return text
