"""The Markdown report keeps under `MAX_CHARS` (a pull-request comment holds 65,536
characters, a GitHub step summary 1 MiB) however large the run: rows per case, cases,
suites and problems past the bound are counted and the report says so; long names and
values are cut.
"""

from __future__ import annotations

import pytest

from evaldsl.language.diagnostics import Diagnostic
from evaldsl.reports import markdown
from evaldsl.reports.markdown import MAX_CHARS, MAX_ROWS, to_markdown_text
from evaldsl.runner.results import AssertionResult, CaseResult, Report, SuiteResult

LONG = "v" * 5000


def failing_case(i: int, assertions: int = 30) -> CaseResult:
    """A case of a long name whose every assertion fails with long values."""
    return CaseResult(
        f"case {i} " + "N" * 3000,
        False,
        0.0,
        1.0,
        assertions=tuple(
            AssertionResult(
                f'answer contains "{j} {LONG}"',
                "big.eval",
                j + 4,
                3,
                "fail",
                f'expected answer contains "{j} {LONG}"',
                actual="It's sunny",
                expected=f"{j} {LONG}",
            )
            for j in range(assertions)
        ),
    )


def test_a_huge_run_keeps_under_the_limit_and_says_what_was_left_out() -> None:
    """The tester's 60 cases of 30 failing assertions of 600 characters: 903,389 bytes."""
    suite = SuiteResult("big", "big.eval", tuple(failing_case(i) for i in range(60)), 1.0)
    text = to_markdown_text(Report((suite,), 1.0))
    assert len(text) <= MAX_CHARS
    assert f"| | …and {30 - MAX_ROWS} more | (the JSON report has all) |" in text
    assert "more failing cases (the report keeps under 60,000 characters)." in text
    assert "N" * 200 not in text and "v" * 200 not in text  # names and values cut
    assert text.count("<details>") == text.count("</details>") >= 1


def test_many_suites_and_problems_keep_under_the_limit() -> None:
    problems = tuple(
        Diagnostic("E101", "error", "bad " + "w" * 2000, f"s{i}.eval", 1, 1, 1, 2, "h" * 900)
        for i in range(200)
    )
    suites = tuple(
        SuiteResult(f"suite {i} " + "S" * 500, f"s{i}.eval", (failing_case(i, 2),), 1.0, problems)
        for i in range(300)
    )
    text = to_markdown_text(Report(suites, 1.0))
    assert len(text) <= MAX_CHARS
    shown = sum(1 for line in text.splitlines() if line.startswith("| ❌ suite "))
    left = 300 - shown
    assert f"…and {left} more suites, {left} of them failing (the JSON report has all)." in text
    assert "more problems (the report keeps under 60,000 characters)" in text
    # the suites' table takes a share of the report: failing cases are listed too (the
    # table once took all of it, and none was)
    assert "<details>" in text


def test_the_failing_suite_of_many_is_in_the_table_and_its_cases_listed() -> None:
    passing = [SuiteResult(f"ok {i}", f"ok{i}.eval", (), 1.0) for i in range(299)]
    failing = SuiteResult("the broken one", "broken.eval", (failing_case(0, 2),), 1.0)
    text = to_markdown_text(Report((*passing, failing), 1.0))
    lines = text.splitlines()
    rows = [line for line in lines if line.startswith(("| ✅ ", "| ❌ "))]
    assert len(rows) == markdown.MAX_SUITE_ROWS and rows[0].startswith("| ❌ the broken one")
    assert f"…and {300 - len(rows)} more suites, all passed (the JSON report has all)." in text
    assert text.count("<details>") == 1


def test_a_small_run_is_listed_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    suite = SuiteResult("s", "s.eval", (failing_case(0, 3), failing_case(1, 3)), 1.0)
    text = to_markdown_text(Report((suite,), 1.0))
    assert "more" not in text and text.count("<details>") == 2
    monkeypatch.setattr(markdown, "MAX_CHARS", len(text) - 10)  # the second case cannot fit
    cut = to_markdown_text(Report((suite,), 1.0))
    assert cut.count("<details>") == 1
    assert "…and 1 more failing cases (the report keeps under" in cut
