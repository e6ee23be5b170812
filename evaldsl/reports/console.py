"""Console reporter: cases as they finish, why they failed, and a pytest-like summary.

Takes the runner's progress calls (`start`, `case_done`, `finish`) and writes text to a
stream:

- one line per case: `✓` passed, `✗` failed, `!` crashed or errored, `○` every assertion
  skipped, then suite › case, score and duration (quiet mode: failing cases only);
- under a failing case, each failing or erroring assertion rustc-style —
  `path:line:col: fail: message`, the source line with a caret underline, `found:` and
  `expected:`;
- a progress counter (`[37/120]`, rewritten in place) on long runs, on a terminal only;
- the suites' load and check diagnostics (at most `diagnostics.MAX_SHOWN` a suite, then
  how many more), then a summary:
  `3 passed, 1 failed, 1 errored, 2 skipped in 1.23s · score 0.88 · pass rate 60.0% of 5
  tested cases` (counts that are 0 left out but passed and failed) and the assertion counts.

Colors only on a terminal with `NO_COLOR` unset, unless `color=` says otherwise, and neither
colors nor the progress counter on a dumb one (`TERM=dumb`).
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Sequence
from typing import Protocol, TextIO

from evaldsl.language.diagnostics import MAX_SHOWN, render
from evaldsl.language.printable import columns
from evaldsl.language.source import line_window
from evaldsl.reports import common
from evaldsl.runner.results import AssertionResult, CaseResult, Report
from evaldsl.terminal import terminal_columns

#: A run shows the progress counter once it has this many cases, or has lasted this long.
PROGRESS_MIN_CASES = 10
PROGRESS_MIN_SECONDS = 1.0
#: Case names are padded to at least this width so scores and durations line up; a run
#: whose names are longer widens the column to its longest name, up to the terminal's
#: width less the score and duration (`WIDE_NAMES` when the stream is not a terminal).
NAME_WIDTH = 60
WIDE_NAMES = 100
#: The columns of a case's line beside its padded name: the symbol and a blank, the
#: score and a blank, the duration.
_BESIDE_NAME = len("✓ ") + len("1.00 ") + 8

_SYMBOLS = {"passed": "✓", "failed": "✗", "error": "!", "skipped": "○"}
_COLORS = {"passed": "32", "failed": "31", "error": "33", "skipped": "36"}
_RESET = "\x1b[0m"
_CLEAR_LINE = "\r\x1b[2K"


class Named(Protocol):
    """Anything with a suite's name: a `SuiteResult`, or the runner's loaded `Suite`."""

    @property
    def name(self) -> str: ...


class Listed(common.Filed, Protocol):
    """A suite and its cases' names: a `SuiteResult`, or the runner's loaded `Suite`."""

    @property
    def cases(self) -> Sequence[Named]: ...


def wants_color(stream: TextIO, color: bool | None = None) -> bool:
    """Whether to color: `color` when given, else a terminal with `NO_COLOR` unset or empty
    that is no dumb terminal (`TERM=dumb`)."""
    if color is not None:
        return color
    return _isatty(stream) and not os.environ.get("NO_COLOR") and not dumb_terminal()


def dumb_terminal() -> bool:
    """Whether the terminal says it takes no escape sequences (`TERM=dumb`: Emacs' shell
    mode, some CI log viewers), which it would show as text (`[1;32m✓[0m`), as pytest
    and less take it."""
    return os.environ.get("TERM") == "dumb"


def _isatty(stream: TextIO) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # closed or not a real file
        return False


class ConsoleReporter:
    """Writes a run's progress, failures and summary to `stream`.

    >>> import io
    >>> out = io.StringIO()
    >>> reporter = ConsoleReporter(out, color=False)
    >>> reporter.start(0)
    >>> reporter.finish(Report(suites=(), duration_ms=1234.0))
    >>> out.getvalue().splitlines()[-2]
    '0 passed, 0 failed in 1.23s · score 0.00 · pass rate 0.0%'
    """

    def __init__(
        self,
        stream: TextIO,
        *,
        color: bool | None = None,
        quiet: bool = False,
        verbose: bool = False,
        diagnostics: bool = True,
    ) -> None:
        """`diagnostics=False` leaves the suites' load and check diagnostics out of
        `finish`, for a caller that has printed them already."""
        self.stream = stream
        self.color = wants_color(stream, color)
        self.quiet = quiet
        self.verbose = verbose
        self.diagnostics = diagnostics
        self._tty = _isatty(stream)
        self._total = 0
        self._done = 0
        self._started = time.monotonic()
        self._progress_shown = False
        # (suite, case) names printed by case_done; a Counter, for twins with one name
        self._printed: Counter[tuple[str, str]] = Counter()
        self._labels: dict[str, str] = {}  # suite path → how its lines name it (`start`)
        self._name_width = NAME_WIDTH  # the names' column (`start`)
        self._after_blank = True  # nothing written yet: no blank line needed first

    # -- the runner's calls ------------------------------------------------------------

    def start(self, total_cases: int, suites: Sequence[Listed] = ()) -> None:
        """A run of `total_cases` cases begins, of `suites` (named in its lines by
        `common.suite_labels`: with their files when two share a name). The names'
        column fits the longest of their cases' names, within the terminal's width."""
        self._total = total_cases
        self._labels = common.suite_labels(suites)
        self._done = 0
        self._started = time.monotonic()
        longest = max(
            (
                columns(common.one_line(f"{self._labels[s.path]} › {c.name}"))
                for s in suites
                for c in s.cases
            ),
            default=0,
        )
        room = terminal_columns() - _BESIDE_NAME if self._tty else WIDE_NAMES
        self._name_width = max(NAME_WIDTH, min(longest + 2, room))

    def case_done(self, suite: Named | str, case: CaseResult) -> None:
        """One case finished: print its line (and why it failed), then the progress.

        `suite` is the case's suite (anything with a `name`) or that name.
        """
        suite_name = suite if isinstance(suite, str) else suite.name
        self._done += 1
        self._printed[suite_name, case.name] += 1
        self._clear_progress()
        label = self._label(suite)
        self._case(label, case)
        self._progress(label, case)
        self.stream.flush()  # one case's lines at once (a flush per line cost a write each)

    def _label(self, suite: Named | str) -> str:
        """How a case's line names its suite (`start`'s labels: with its file when
        suites of other files share its name)."""
        if isinstance(suite, str):
            return suite
        path = getattr(suite, "path", None)  # (a `Named` of the caller's may have none)
        return self._labels.get(path, suite.name) if isinstance(path, str) else suite.name

    def finish(self, report: Report) -> None:
        """The run ended: print cases not yet printed, suite diagnostics and the summary."""
        self._clear_progress()
        for suite in report.suites:
            for case in suite.cases:
                for key in ((suite.name, case.name), (suite.path, case.name)):
                    if self._printed[key] > 0:
                        self._printed[key] -= 1
                        break
                else:
                    self._case(self._labels.get(suite.path, suite.name), case)
        for suite in report.suites:
            shown = suite.errors if self.quiet else list(suite.diagnostics)
            if shown and self.diagnostics:
                self._blank()
                # (as many as `check` prints: a suite may hold thousands)
                lift = f"`evaldsl check {suite.path} --max-diagnostics 0` shows them all"
                text = render(shown, style="full", most=MAX_SHOWN, lift=lift)
                self._write(common.visible(text))
        self._blank()
        self._summary(report)
        self.stream.flush()

    # -- what a case prints ------------------------------------------------------------

    def _case(self, suite_name: str, case: CaseResult) -> None:
        kind = common.outcome(case)
        if self.quiet and kind in ("passed", "skipped"):
            return
        name = common.one_line(f"{suite_name} › {case.name}")
        pad = " " * max(self._name_width - columns(name), 2)
        symbol = self._paint(_SYMBOLS[kind], _COLORS[kind], bold=True)
        score = f"{case.score:.2f}"
        took = self._paint(f"{common.duration(case.duration_ms):>8}", "2")
        self._write(f"{symbol} {name}{pad}{score} {took}")
        self._run_error(case)
        for a in case.assertions:
            if a.status in ("fail", "error"):
                self._assertion(a)
            elif self.verbose:
                text = common.one_line(a.text)
                self._write(f"  {a.status}: {common.location(a)}: {text}")
                if a.status == "skip" and a.message:
                    self._write(f"    {common.one_line(common.headline(a.message))}")
        if self.verbose:
            self._metrics(case)
        if kind in ("failed", "error"):
            self._blank()

    def problems(self, case: CaseResult) -> None:
        """Print why a case failed, as under its line: the run's error, then each failing
        or erroring assertion (for callers that show the case's name themselves)."""
        self._run_error(case)
        for a in common.problems(case):
            self._assertion(a)
        self.stream.flush()

    def _run_error(self, case: CaseResult) -> None:
        if case.error is not None:
            label = self._paint("error", "31", bold=True)
            message = common.visible(case.error).replace("\n", "\n    ")
            self._write(f"  {label}: {message}")

    def _assertion(self, a: AssertionResult) -> None:
        """`path:line:col: fail: message`, the source line, a caret, found and expected."""
        label = self._paint(a.status, "31" if a.status == "fail" else "33", bold=True)
        where = self._paint(common.one_line(common.location(a)), "1")
        self._write(f"{where}: {label}: {common.visible(common.headline(a.message))}")
        gutter = str(a.line)
        pad = " " * len(gutter)
        bar = self._paint("|", "34", bold=True)
        if a.source_line:
            shown, column, end_column = line_window(a.source_line, a.column, a.end_column)
            raw = shown.replace("\t", " ")
            line = common.one_line(raw)
            start, width = _underline(raw, column, end_column, a.text)
            carets = self._paint("^" * width, "31" if a.status == "fail" else "33", bold=True)
            self._write(f"{pad} {bar}")
            self._write(f"{self._paint(gutter, '34', bold=True)} {bar} {line}")
            self._write(f"{pad} {bar} {' ' * start}{carets}")
        if common.has_values(a):
            limit = None if self.verbose else common.VALUE_LIMIT
            eq = self._paint("=", "34", bold=True)
            self._write(f"{pad} {eq} found: {common.found(a, limit)}")
            self._write(f"{pad} {eq} expected: {common.expected(a, limit)}")

    def _metrics(self, case: CaseResult) -> None:
        m = case.metrics
        parts = [
            f"{label} {value}"
            for label, value in (
                ("latency", None if m.latency_ms is None else common.duration(m.latency_ms)),
                ("steps", m.steps),
                ("tool calls", m.tool_calls),
                ("input tokens", m.input_tokens),
                ("output tokens", m.output_tokens),
                ("cost", None if m.cost is None else common.money(m.cost)),
                ("guards", m.guards),
            )
            if value is not None
        ]
        if parts:
            self._write(self._paint("  " + ", ".join(parts), "2"))

    # -- the end ---------------------------------------------------------------------

    def _summary(self, report: Report) -> None:
        s = report.summary
        parts = [
            self._paint(
                f"{n} {common.WORDS[kind]}", _COLORS[kind], bold=n > 0 and kind != "skipped"
            )
            for kind, n in common.counts(s)
        ]
        broken = sum(1 for suite in report.suites if suite.errors)
        if broken:
            parts.append(
                self._paint(f"{broken} suite{'s' if broken != 1 else ''} with errors", "31")
            )
        took = f"{report.duration_ms / 1000:.2f}s"
        self._write(
            f"{', '.join(parts)} in {took}"
            f" · score {s.overall_score:.2f} · pass rate {common.pass_rate(s)}"
        )
        n = s.assertions
        self._write(
            f"assertions: {n['pass']} passed, {n['fail']} failed,"
            f" {n['skip']} skipped, {n['error']} errored"
        )
        if report.interrupted:
            planned = f" of {self._total}" if self._total >= s.cases else ""
            self._write(self._paint(f"interrupted: {s.cases}{planned} cases ran", "33", bold=True))

    # -- output plumbing -------------------------------------------------------------

    def _progress(self, suite_name: str, case: CaseResult) -> None:
        # (rewritten in place by an escape sequence, which a dumb terminal shows as text)
        if not self._tty or dumb_terminal() or self._done >= self._total:
            return
        long_run = self._total >= PROGRESS_MIN_CASES or (
            time.monotonic() - self._started >= PROGRESS_MIN_SECONDS
        )
        if not long_run:
            return
        text = common.one_line(f"[{self._done}/{self._total}] {suite_name} › {case.name}")
        # one row only: a wrapped line would survive the in-place rewrite
        room = terminal_columns()
        self.stream.write(self._paint(common.shorten(text, max(room - 1, 10)), "2"))
        self.stream.flush()
        self._progress_shown = True

    def _clear_progress(self) -> None:
        if self._progress_shown:
            self.stream.write(_CLEAR_LINE)
            self._progress_shown = False

    def _write(self, line: str) -> None:
        """One line; the public methods flush the stream when their lines are written."""
        self.stream.write(line + "\n")
        self._after_blank = not line

    def _blank(self) -> None:
        """One empty line between blocks, never two in a row, none at the top."""
        if not self._after_blank:
            self._write("")

    def _paint(self, text: str, code: str, *, bold: bool = False) -> str:
        if not self.color or not text:
            return text
        return f"\x1b[{'1;' if bold else ''}{code}m{text}{_RESET}"


def _underline(line: str, column: int, end_column: int, text: str) -> tuple[int, int]:
    """Where the caret underline starts and how wide it is, in terminal columns (as shown).

    `column` and `end_column` are 1-based code points, `end_column` exclusive (0 when
    unknown: then the assertion's text when the line holds it there, else one caret).
    """
    start, end = common.span(line, column, end_column, text)
    shown = (common.one_line(part) for part in (line[:start], line[start:end]))
    before, under = (columns(part) for part in shown)
    return before, max(under, 1)
