"""Markdown report: a `Report` as a summary fit for a pull-request comment.

Takes a `Report` and gives GitHub-flavoured Markdown: a headline with ✅ or ❌, a totals
table, a table per suite when there are several, then one collapsed `<details>` block per
failing case listing each failing or erroring assertion (`path:line`, its text, why), and
the suites whose loading or checking found problems. Passing cases are only counted. A
run Ctrl-C stopped says so in its headline and lists the cases that did not run; a run of
no case is ❌. The whole text keeps under `MAX_CHARS` (a comment holds 65,536, a step
summary 1 MiB): at most `MAX_CASES` failing cases of at most `MAX_ROWS` assertions each,
long names and values cut, and what did not fit counted.
"""

from __future__ import annotations

import html
from collections.abc import Iterable

from evaldsl.cache.regexes import regex
from evaldsl.language.diagnostics import Diagnostic
from evaldsl.reports import common
from evaldsl.runner.results import AssertionResult, CaseResult, Report, SuiteResult, Summary

#: Failing cases listed in full; the rest are counted (GitHub cuts comments at 65,536).
MAX_CASES = 50
#: Failing assertions listed per case; the rest are counted.
MAX_ROWS = 20
#: Rows of the suites table at most (failing suites first when there are more).
MAX_SUITE_ROWS = 50
#: Characters of a cell's message, found or expected value before it is cut.
CELL_LIMIT = 160
#: Characters of a crashed case's error (a traceback, say) before it is cut.
ERROR_LIMIT = 1500
#: Characters of the whole report: a pull-request comment holds 65,536, and a step
#: summary 1 MiB. Cases and problems past it are counted, not listed.
MAX_CHARS = 60_000
#: What the notes of what was left out may take, kept out of the listings' share.
_NOTES = 1_000


def to_markdown_text(report: Report) -> str:
    """The `--markdown` report, ending in a newline, of at most `MAX_CHARS` characters.

    >>> to_markdown_text(Report(suites=(), duration_ms=0.0)).splitlines()[0]
    '## ❌ evaldsl: no cases ran'
    """
    summary = report.summary
    mark = "✅" if report.ok else "❌"
    out: list[str] = [f"## {mark} evaldsl: {_headline(report, summary)}", ""]
    out += _totals(summary)
    budget = _Budget(MAX_CHARS - _NOTES - _size(out))
    if len(report.suites) > 1:
        header, rule, *rows = _suites_table(report)
        red = [_failing(s) for s in report.suites]
        failing_suites = sum(red)
        if len(rows) > MAX_SUITE_ROWS:
            # (300 suites' rows took the whole comment, and no failing case was listed):
            # the failing suites first, and the table in a share of the budget
            order = sorted(range(len(rows)), key=lambda i: not red[i])[:MAX_SUITE_ROWS]
            rows, red = [rows[i] for i in order], [red[i] for i in order]
        share = min(budget.left, MAX_CHARS // 4)
        table = _Budget(share)
        shown = table.take([[row] for row in rows])
        budget.left -= share - table.left
        out += ["", header, rule, *(row for rows_ in shown for row in rows_)]
        left = len(report.suites) - len(shown)
        if left:
            failed = failing_suites - sum(red[: len(shown)])
            which = f", {failed} of them failing" if failed else ", all passed"
            out += ["", f"…and {left} more suites{which} (the JSON report has all)."]
    labels = common.suite_labels(report.suites)
    if report.interrupted:
        _end_block(out)
        out += _not_run(report, labels, budget)
    failing = [(labels[s.path], c) for s in report.suites for c in s.cases if not c.passed]
    if failing:
        _end_block(out)
        out += ["### Failing cases", ""]
        blocks = budget.take(_case_block(name, case) for name, case in failing[:MAX_CASES])
        out += [line for block in blocks for line in block]
        if len(failing) > len(blocks):
            out += [f"…and {len(failing) - len(blocks)} more failing cases{budget.why}.", ""]
    problems = [d for s in report.suites for d in s.diagnostics]
    if problems:
        _end_block(out)
        out += ["### Suite problems", ""]
        lines = budget.take([_problem(d)] for d in problems)
        out += [line for block in lines for line in block]
        if len(lines) < len(problems):
            out.append(f"- …and {len(problems) - len(lines)} more problems{budget.why}")
    while out and out[-1] == "":
        out.pop()
    return "\n".join(out) + "\n"


class _Budget:
    """The characters the report's listings may still take: each listing takes its
    blocks (lists of lines) in order while they fit, and says when one did not."""

    def __init__(self, left: int) -> None:
        self.left = left
        self.full = False

    def take(self, blocks: Iterable[list[str]]) -> list[list[str]]:
        taken: list[list[str]] = []
        for block in blocks:
            size = _size(block)
            if self.full or size > self.left:
                self.full = True
                break
            self.left -= size
            taken.append(block)
        return taken

    @property
    def why(self) -> str:
        """Why a listing stops short: the report's size, or (empty) its count limit."""
        return f" (the report keeps under {MAX_CHARS:,} characters)" if self.full else ""


def _size(lines: list[str]) -> int:
    return sum(len(line) + 1 for line in lines)


def _problem(d: Diagnostic) -> str:
    where = f"{d.path}:{d.line}:{d.column}"
    hint = f" ({_inline(common.shorten(d.hint, CELL_LIMIT))})" if d.hint else ""
    message = _inline(common.shorten(d.message, ERROR_LIMIT // 5))
    return f"- {code(where)} {d.severity}[{d.code}]: {message}{hint}"


def cell(text: str, limit: int | None = CELL_LIMIT) -> str:
    """Text made safe for a table cell: `|` escaped, newlines as `<br>`, HTML escaped,
    mentions and references quiet (`_quiet`).

    >>> cell("a|b\\n<c>")
    'a\\\\|b<br>&lt;c&gt;'
    """
    text = _quiet(html.escape(common.visible(common.shorten(text, limit)), quote=False))
    return text.replace("|", "\\|").replace("\r\n", "\n").replace("\n", "<br>")


#: What GitHub links in a comment's text: `@user`, `@org/team`, `#123`, `GH-123`.
_LINKED = regex(r"(?<![\w&`])(?:[@#][\w][\w./-]*|GH-\d+)")


def _quiet(text: str) -> str:
    """Escaped text whose mentions and issue references are code, which GitHub neither
    links nor notifies: an answer that says `@alice` or `#12`, quoted in a failure of a
    pull-request comment, pinged a stranger or linked an unrelated issue.

    >>> _quiet("ask @alice about #12 and case #2")
    'ask <code>@alice</code> about <code>#12</code> and case <code>#2</code>'
    """
    return _LINKED.sub(lambda m: f"<code>{m.group(0)}</code>", text)


def code(text: str, limit: int | None = CELL_LIMIT, *, table: bool = False) -> str:
    """Text as an inline code span that survives backticks and newlines (and `|` in tables).

    >>> code("a`b"), code("a|b", table=True)
    ('``a`b``', '`a\\\\|b`')
    """
    text = common.shorten(common.visible(" ".join(text.split())), limit)
    fence = "`"
    while fence in text:
        fence += "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    if table:
        # GFM splits table rows on `|` even inside code spans; `\|` renders as `|` there.
        text = text.replace("|", "\\|")
    return f"{fence}{pad}{text}{pad}{fence}"


def fenced(text: str, limit: int = ERROR_LIMIT) -> list[str]:
    """Text as a fenced code block whose fence no line of the text can close.

    >>> fenced("boom")
    ['```text', 'boom', '```']
    """
    body = common.visible(common.shorten(text, limit)).splitlines() or [""]
    fence = "```"
    while any(line.lstrip().startswith(fence) for line in body):
        fence += "`"
    return [f"{fence}text", *body, fence]


def _end_block(out: list[str]) -> None:
    """End what `out` holds with exactly one empty line."""
    while out and out[-1] == "":
        out.pop()
    out.append("")


def _inline(text: str) -> str:
    return _quiet(html.escape(common.visible(" ".join(text.split())), quote=False))


def _headline(report: Report, summary: Summary) -> str:
    broken = sum(1 for s in report.suites if s.errors)
    suites = f", {broken} suite{'s' if broken != 1 else ''} with errors" if broken else ""
    stopped = common.interruption(report)
    if stopped is not None:
        suites += f"; {stopped}"
    if summary.cases == 0:
        return "no cases ran" + suites
    if summary.failed == 0 and summary.skipped == 0:
        if report.interrupted:
            return f"the {summary.cases} cases that ran passed" + suites
        return f"all {summary.cases} cases passed" + suites
    counted = ", ".join(f"{n} {common.WORDS[kind]}" for kind, n in common.counts(summary))
    return f"{summary.cases} case{'s' if summary.cases != 1 else ''}: {counted}" + suites


def _not_run(report: Report, labels: dict[str, str], budget: _Budget) -> list[str]:
    """The cases Ctrl-C kept from running: named, at most `MAX_CASES`, the rest counted."""
    names = [f"{labels[s.path]} › {name}" for s in report.suites for name in s.not_run]
    listed = budget.take([f"- {code(name)}"] for name in names[:MAX_CASES])
    out = ["### Not run (interrupted)", "", *(line for lines in listed for line in lines)]
    if len(listed) < len(names):
        out.append(f"- …and {len(names) - len(listed)} more{budget.why}")
    return [*out, ""]


def _totals(summary: Summary) -> list[str]:
    counts = summary.assertions
    return [
        "| Cases | Passed | Failed | Errored | Skipped | Score | Pass rate"
        " | Assertions pass / fail / skip / error | Duration |",
        "|---:|---:|---:|---:|---:|---:|---:|:---:|---:|",
        f"| {summary.cases} | {summary.passed} | {summary.failed - summary.errored} "
        f"| {summary.errored} | {summary.skipped} "
        f"| {summary.overall_score:.2f} | {common.pass_rate(summary)} "
        f"| {counts['pass']} / {counts['fail']} / {counts['skip']} / {counts['error']} "
        f"| {common.duration(summary.duration_ms)} |",
    ]


def _suites_table(report: Report) -> list[str]:
    rows = [
        "| Suite | File | Cases | Passed | Failed | Errored | Skipped | Score |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for suite in report.suites:
        s = suite.summary
        mark = "❌" if _failing(suite) else "✅"
        rows.append(
            f"| {mark} {cell(suite.name)} | {code(suite.path, table=True)} "
            f"| {s.cases} | {s.passed} | {s.failed - s.errored} | {s.errored} | {s.skipped} "
            f"| {s.overall_score:.2f} |"
        )
    return rows


def _failing(suite: SuiteResult) -> bool:
    """Whether a suite's row is ❌: a case that did not pass, or an error of its own."""
    return bool(suite.summary.failed or suite.errors)


def _case_block(suite_name: str, case: CaseResult) -> list[str]:
    problems = common.problems(case)
    counted = sum(1 for a in case.assertions if a.status != "skip")
    why = (
        f"{common.WORDS['error']}: the run crashed"
        if case.error is not None
        else f"{len(problems)} of {counted} assertions did not pass"
    )
    title = _inline(common.shorten(f"{suite_name} › {case.name}", CELL_LIMIT))
    out = [
        "<details>",
        f"<summary>❌ <b>{title}</b> — score {case.score:.2f}, {why}</summary>",
        "",
    ]
    if case.error is not None:
        out += [*fenced(case.error), ""]
    if problems:
        out += ["| Where | Assertion | Why |", "|---|---|---|"]
        for a in problems[:MAX_ROWS]:
            out.append(
                f"| {code(common.location(a, column=False), table=True)} "
                f"| {code(a.text, table=True)} | {_why(a)} |"
            )
        if len(problems) > MAX_ROWS:
            out.append(f"| | …and {len(problems) - MAX_ROWS} more | (the JSON report has all) |")
        out.append("")
    out += ["</details>", ""]
    return out


def _why(a: AssertionResult) -> str:
    parts = [cell(a.message) if a.status == "fail" else f"**error:** {cell(a.message)}"]
    if common.has_values(a):
        parts.append(f"found {code(common.found(a), table=True)}")
        parts.append(f"expected {code(common.expected(a), table=True)}")
    return "<br>".join(parts)
