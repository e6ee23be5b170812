"""Text helpers the reporters share: durations, values, locations, outcomes.

Takes records from `evaldsl.runner.results` and gives short strings; no reporter formats a
duration or a found/expected value differently from another.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterable
from typing import Any, Protocol

from evaldsl.language.diagnostics import abbreviated
from evaldsl.language.printable import json_visible
from evaldsl.language.printable import visible as visible  # every reporter's escaping
from evaldsl.language.values import MISSING, Words, show
from evaldsl.runner.results import AssertionResult, CaseResult, Report, Summary, report_value
from evaldsl.runner.results import Outcome as Outcome  # (reporters name it from here)

#: How many characters of a found/expected value a report shows before cutting it.
VALUE_LIMIT = 200

#: What a case the run did not reach says, in every report.
NOT_RUN = "not run: the run was interrupted (Ctrl-C or SIGTERM) before this case ran"


class Filed(Protocol):
    """A suite as reports name it: a `SuiteResult`, or the runner's loaded `Suite`."""

    @property
    def name(self) -> str: ...

    @property
    def path(self) -> str: ...


def suite_labels(suites: Iterable[Filed]) -> dict[str, str]:
    """How reports name each suite of a run, by its path: its name, or, when suites of
    other files share it (a suite written in `.eval` and in YAML), its name and its file
    (`weather agent (weather.yaml)`; the whole path when the files' names are alike too),
    so that their cases' lines can be told apart.

    >>> class S:
    ...     def __init__(self, name, path): self.name, self.path = name, path
    >>> suite_labels([S("w", "a/w.eval"), S("w", "a/w.yaml"), S("x", "x.eval")])
    {'a/w.eval': 'w (w.eval)', 'a/w.yaml': 'w (w.yaml)', 'x.eval': 'x'}
    """
    listed = {s.path: s.name for s in suites}
    shared = Counter(listed.values())
    bases = Counter((name, os.path.basename(path)) for path, name in listed.items())
    labels = {}
    for path, name in listed.items():
        if shared[name] < 2:
            labels[path] = name
        else:
            base = os.path.basename(path)
            labels[path] = f"{name} ({base if bases[name, base] < 2 else path})"
    return labels


def duration(ms: float) -> str:
    """A duration for people: `12 ms`, `1.23 s`.

    >>> duration(12.4), duration(1234.0)
    ('12 ms', '1.23 s')
    """
    if ms < 1000:
        return f"{ms:.0f} ms"
    return f"{ms / 1000:.2f} s"


def one_line(text: str) -> str:
    r"""`text` for one line of a report: control characters and line breaks escaped, and
    tabs too (`\t`), which would push the columns after them.

    >>> print(one_line("a\tb\nc\x1b"))
    a\tb\nc\x1b
    """
    return visible(text, newlines=False).replace("\t", "\\t")


def money(dollars: float) -> str:
    """A cost as the HTML report and `evaldsl diff` show it: two significant digits under a
    cent, else cents.

    >>> money(0.0000876), money(0.0042), money(1.5), money(0.0)
    ('$0.000088', '$0.0042', '$1.50', '$0.00')
    """
    if 0 < abs(dollars) < 0.01:
        from decimal import Decimal  # (here: the console's run never needs it, ~5 M instructions)

        return f"${Decimal(f'{dollars:.2g}'):f}"
    return f"${dollars:.2f}"


def headline(text: str, limit: int = VALUE_LIMIT) -> str:
    """An assertion's message as the one line a report heads it with: cut, as its found
    and expected values are, at `limit` characters, saying how many were cut (a literal
    of a megabyte is quoted in its message).

    >>> headline("expected " + "x" * 300 + " here", 40)
    'expected xxxxxxxxxxxxxxxxxxxxxxx… (274 characters not shown) …xxx here'
    """
    return abbreviated(text, limit)


def seconds(ms: float) -> str:
    """Milliseconds as the decimal seconds JUnit's `time` wants: `1234.5` → `1.234`."""
    return f"{max(ms, 0.0) / 1000:.3f}"


def shorten(text: str, limit: int | None = VALUE_LIMIT) -> str:
    """Cut `text` to `limit` characters, marking the cut with `…` (None: never cut)."""
    if limit is None or len(text) <= limit:
        return text
    return text[: max(limit - 1, 0)] + "…"


def value(raw: Any, limit: int | None = VALUE_LIMIT) -> str:
    """A found/expected value as JSON text (strings quoted; what a terminal would act on
    or reorder escaped: `json_visible`), cut to `limit`; an expectation in the language's
    words (`Words`: `exactly 2`, a regex) as written.

    >>> value("sunny"), value([1, 2]), value(None), value(Words("exactly 2"))
    ('"sunny"', '[1, 2]', 'null', 'exactly 2')
    """
    if isinstance(raw, Words):  # (as JSON text a regex's backslashes would be doubled)
        return shorten(str(raw), limit)
    try:
        text = json_visible(json.dumps(raw, ensure_ascii=False, default=repr))
    except (TypeError, ValueError):
        text = repr(raw)  # (which escapes every character it cannot print)
    return shorten(text, limit)


def found_expected(a: AssertionResult) -> tuple[Any, Any]:
    """The assertion's found and expected values as the JSON report stores them."""
    data = a.to_json()
    return data["actual"], data["expected"]


def found(a: AssertionResult, limit: int | None = VALUE_LIMIT) -> str:
    """The found value as text reports show it: `nothing (missing)` for a key or path the
    run does not have, which the JSON report stores as null (a found null reads `null`);
    NaN and the infinities bare, as messages show them (the JSON report: as text)."""
    if a.actual is MISSING:
        return show(MISSING)
    return value(report_value(a.actual, floats=True), limit)


def expected(a: AssertionResult, limit: int | None = VALUE_LIMIT) -> str:
    """The expected value as text reports show it (as `found` shows the found one)."""
    return value(report_value(a.expected, floats=True), limit)


def has_values(a: AssertionResult) -> bool:
    """Whether the assertion carries a found or an expected value worth showing."""
    actual, expected = found_expected(a)
    return actual is not None or expected is not None


def location(a: AssertionResult, *, column: bool = True) -> str:
    """`path:line:col` (or `path:line`) of an assertion."""
    if column:
        return f"{a.path}:{a.line}:{a.column}"
    return f"{a.path}:{a.line}"


def span(line: str, column: int, end_column: int, text: str) -> tuple[int, int]:
    """The code points of a source line to underline: 0-based start, exclusive end.

    `column` and `end_column` are 1-based, `end_column` exclusive (0 when unknown: then
    the assertion's text where the line holds it, else one character).

    >>> span("  tool x called", 3, 16, "tool x called"), span("a; b", 4, 0, "b")
    ((2, 15), (3, 4))
    """
    start = min(max(column, 1), len(line) + 1) - 1
    if end_column > column:
        end = min(end_column - 1, len(line))
    elif text and line.startswith(text, start):
        end = start + len(text)
    else:
        end = start + 1
    return start, max(end, start + 1)


def problems(case: CaseResult) -> list[AssertionResult]:
    """The assertions that made a case fail: every `fail` and `error`, in source order."""
    return [a for a in case.assertions if a.status in ("fail", "error")]


def outcome(case: CaseResult) -> Outcome:
    """What one case amounts to for a test report: `CaseResult.outcome` (passed, failed,
    error, skipped), which the run's totals count too."""
    return case.outcome


#: How the console, Markdown and HTML reports word each outcome in their text (the JSON
#: report's `outcome` keeps `error`, and JUnit writes such a case as an `<error>`).
WORDS: dict[Outcome, str] = {
    "passed": "passed",
    "failed": "failed",
    "error": "errored",
    "skipped": "skipped",
}


def counts(summary: Summary) -> list[tuple[Outcome, int]]:
    """The cases of a summary by outcome, as every report counts them: passed and failed
    always, errored and skipped when there are any (`failed` less the errored ones).

    >>> from evaldsl.runner.results import Summary
    >>> counts(Summary(5, 1, 3, 0.5, 0.25, {}, 0.0, {}, skipped=1, errored=2))
    [('passed', 1), ('failed', 1), ('error', 2), ('skipped', 1)]
    """
    found: list[tuple[Outcome, int]] = [
        ("passed", summary.passed),
        ("failed", summary.failed - summary.errored),
        ("error", summary.errored),
        ("skipped", summary.skipped),
    ]
    return [(kind, n) for kind, n in found if n or kind in ("passed", "failed")]


def pass_rate(summary: Summary) -> str:
    """The pass rate as reports write it, saying what it is of when skipped cases are
    left out of it (`Summary`).

    >>> from evaldsl.runner.results import Summary
    >>> def of(passed, failed, skipped):
    ...     n = passed + failed + skipped
    ...     rate = passed / (n - skipped) if n - skipped else 0.0
    ...     return pass_rate(Summary(n, passed, failed, 1.0, rate, {}, 0.0, {}, skipped))
    >>> of(3, 1, 0), of(3, 1, 2), of(0, 0, 1)
    ('75.0%', '75.0% of 4 tested cases', '– (no case tested)')
    """
    tested = summary.cases - summary.skipped
    if not summary.skipped:
        return f"{summary.pass_rate:.1%}"
    if not tested:
        return "– (no case tested)"
    return f"{summary.pass_rate:.1%} of {tested} tested case{'s' if tested != 1 else ''}"


def interruption(report: Report) -> str | None:
    """What every report says of a run Ctrl-C or SIGTERM stopped (None: it was not stopped).

    >>> from evaldsl.runner.results import SuiteResult
    >>> interruption(Report((SuiteResult("s", "s.eval", (), 0.0, not_run=("a", "b")),), 0.0,
    ...                     interrupted=True))
    'interrupted (Ctrl-C or SIGTERM): 2 cases did not run'
    """
    if not report.interrupted:
        return None
    n = report.not_run
    return f"interrupted (Ctrl-C or SIGTERM): {n} case{'s' if n != 1 else ''} did not run"
