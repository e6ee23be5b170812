"""Reports: JSON, JUnit XML, Markdown and the console, from hand-built `Report`s."""

# No `from __future__ import annotations` here: it would clash with the imported
# `evaldsl.reports.annotations` module.
import doctest
import io
import json
import re
import shutil
import unicodedata
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import attrs
import pytest

import evaldsl
import evaldsl.reports
from evaldsl.language.diagnostics import Diagnostic
from evaldsl.reports import (
    FORMATS,
    ConsoleReporter,
    annotations,
    common,
    console,
    json_report,
    junit,
    markdown,
    to_json_text,
    to_junit_text,
    to_markdown_text,
    write_json,
    write_junit,
    write_markdown,
)
from evaldsl.runner import run_suites
from evaldsl.runner.results import AssertionResult, CaseMetrics, CaseResult, Report, SuiteResult
from evaldsl.suites import load_suite
from tests.clitools import ROOT, run_evaldsl

SCHEMAS = sorted((Path(__file__).parent / "data" / "junit").glob("*.xsd"))
ANSI = re.compile(r"\x1b\[")

WEATHER = "examples/weather.eval"
RAINY = 'rainy <&"day"> ☔ météo'
LINE_CALLED = "  tool get_weather called"
LINE_MATCHES = '  answer matches /rain|storm/ and answer contains "天気"'
LINE_WIDE = '  天気 == "雨"; steps <= 3'
WIDE_COLUMN = LINE_WIDE.index("steps") + 1


def passed(text: str, line: int) -> AssertionResult:
    return AssertionResult(text, WEATHER, line, 3, "pass", "ok", end_column=3 + len(text))


def report_under_test() -> Report:
    """Every shape a report must cope with, with awkward characters in names and messages."""
    sunny = CaseResult(
        name="sunny day",
        passed=True,
        score=1.0,
        duration_ms=12.0,
        metrics=CaseMetrics(latency_ms=12.0, steps=2, tool_calls=1, input_tokens=30),
        assertions=(passed("tool get_weather called", 3), passed("steps <= 3", 4)),
    )
    rainy = CaseResult(
        name=RAINY,
        passed=False,
        score=1 / 3,
        duration_ms=1500.0,
        assertions=(
            passed("tool get_weather called", 3),
            AssertionResult(
                text="answer matches /rain|storm/",
                path=WEATHER,
                line=7,
                column=3,
                status="fail",
                message='answer does not match /rain|storm/ <&"quoted">',
                actual="Sunny & warm | 25°C",
                expected="/rain|storm/",
                end_column=30,
                source_line=LINE_MATCHES,
            ),
            AssertionResult(
                text="steps <= 3",
                path=WEATHER,
                line=8,
                column=WIDE_COLUMN,
                status="fail",
                message="expected at most 3 steps, found 5",
                actual=5,
                expected=3,
                end_column=WIDE_COLUMN + len("steps <= 3"),
                source_line=LINE_WIDE,
            ),
        ),
    )
    crashed = CaseResult(
        name="crash",
        passed=False,
        score=0.0,
        duration_ms=3.0,
        error="RuntimeError: boom\x00\x1b[31m",
    )
    judged = CaseResult(
        name="judge only",
        passed=True,
        score=1.0,
        duration_ms=1.0,
        assertions=(
            AssertionResult(
                "answer judged 'polite' >= 0.8",
                WEATHER,
                12,
                3,
                "skip",
                "no judge key: skipped",
            ),
        ),
    )
    bounded = CaseResult(
        name="regex bound",
        passed=False,
        score=0.0,
        duration_ms=2.0,
        assertions=(
            AssertionResult(
                "answer matches /(a+)+b/",
                WEATHER,
                15,
                3,
                "error",
                "the regex hit its bound",
                source_line="  answer matches /(a+)+b/",
            ),
        ),
    )
    weather = SuiteResult(
        name="weather",
        path=WEATHER,
        cases=(sunny, rainy, crashed, judged, bounded),
        duration_ms=1518.0,
    )
    empty = SuiteResult(name="empty", path="examples/empty.eval", cases=(), duration_ms=0.0)
    broken = SuiteResult(
        name="broken",
        path="examples/broken.yaml",
        cases=(),
        duration_ms=0.0,
        diagnostics=(
            Diagnostic.in_file(
                "examples/broken.yaml",
                "E301",
                'unknown tool "get_wether"',
                line=4,
                column=9,
                hint='did you mean "get_weather"?',
                source_line="  - tool get_wether called",
            ),
        ),
    )
    return Report(suites=(weather, empty, broken), duration_ms=1234.0)


# -- JSON ----------------------------------------------------------------------------

CASE_KEYS = {"name", "passed", "score", "duration_ms", "error", "metrics", "assertions"}
CASE_KEYS |= {"outcome"}  # (added: passed, failed, error or skipped)
ASSERTION_KEYS = {"text", "location", "status", "message", "actual", "expected"}
SUMMARY_KEYS = {"cases", "passed", "failed", "overall_score", "pass_rate", "assertions"}
SUMMARY_KEYS |= {"duration_ms", "skipped", "errored"}
SUITE_KEYS = {"name", "path", "cases", "summary"}
# Report.to_json() also gives these, beyond what the issue documents; the JSON report is
# exactly Report.to_json(), so they are allowed here and nothing else is.
SUITE_EXTRA = {"diagnostics"}
SUMMARY_EXTRA = {"metrics"}


def check_summary(summary: dict[str, Any]) -> None:
    assert SUMMARY_KEYS <= set(summary) <= SUMMARY_KEYS | SUMMARY_EXTRA
    assert set(summary["assertions"]) == {"pass", "fail", "skip", "error"}


def test_json_is_report_to_json_with_the_documented_keys() -> None:
    report = report_under_test()
    text = to_json_text(report)
    data = json.loads(text)
    assert data == json.loads(json.dumps(report.to_json()))
    assert set(data) == {"version", "suites", "summary"}
    assert data["version"] == 1
    check_summary(data["summary"])
    for suite in data["suites"]:
        assert SUITE_KEYS <= set(suite) <= SUITE_KEYS | SUITE_EXTRA
        check_summary(suite["summary"])
        for case in suite["cases"]:
            assert set(case) == CASE_KEYS
            for a in case["assertions"]:
                assert set(a) == ASSERTION_KEYS
                assert set(a["location"]) == {"path", "line", "column"}
    assert data["summary"]["cases"] == 5
    assert data["summary"]["assertions"] == {"pass": 3, "fail": 2, "skip": 1, "error": 1}


def test_json_text_keeps_non_ascii_and_indents_by_two() -> None:
    text = to_json_text(report_under_test())
    assert "☔ météo" in text and "25°C" in text
    assert "\\u" not in text.replace("\\u0000", "").replace("\\u001b", "")
    assert text.startswith('{\n  "version": 1,\n  "suites": [\n    {')
    assert text.endswith("}\n")


_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def _stdlib_text(report: Report) -> str:
    return json.dumps(report.to_json(), indent=2, ensure_ascii=False) + "\n"


@pytest.mark.parametrize("suite", ["weather/weather.eval", "research/research.eval"])
def test_json_text_is_the_standard_librarys_but_for_the_spelling_of_numbers(suite: str) -> None:
    # orjson writes the report; the layout, keys and values are the standard library's
    loaded = load_suite(Path(__file__).resolve().parent.parent / "examples" / suite)
    report = run_suites([loaded])
    ours, theirs = to_json_text(report), _stdlib_text(report)
    assert json.loads(ours) == json.loads(theirs)
    numbers = [float(n) for n in _NUMBER.findall(theirs)]
    assert [float(n) for n in _NUMBER.findall(ours)] == numbers
    assert _NUMBER.sub("0", ours) == _NUMBER.sub("0", theirs)


def test_json_text_that_orjson_refuses_is_written_whole() -> None:
    # a lone surrogate and an integer past 64 bits: the standard library writes those
    report = report_under_test()
    odd = AssertionResult(
        "answer == 1", WEATHER, 1, 1, "fail", "x\ud800y", actual=2**70, expected="\udfff"
    )
    case = CaseResult("odd", False, 0.0, 1.0, assertions=(odd,))
    report = attrs.evolve(report, suites=(attrs.evolve(report.suites[0], cases=(case,)),))
    data = json.loads(to_json_text(report))
    (written,) = data["suites"][0]["cases"][0]["assertions"]
    assert written["actual"] == 2**70 and written["message"] == "x\ud800y"


def test_nan_and_the_infinities_are_shown_as_javascript_prints_them() -> None:
    """A Python event list may hold them: messages and the text reports show NaN,
    Infinity and -Infinity, never null; the JSON report (JSON has no word for them) stays
    JSON, holding them as that text."""
    program = evaldsl.compile('tool search args $.q is null; tool search args == {"q": 1}')
    nan, inf = float("nan"), float("inf")
    call = {"type": "tool.call", "name": "search", "arguments": {"q": nan, "n": [inf, -inf]}}
    run = program.check([call, {"type": "llm.response", "output": "x"}])
    assert [v.message.split("; ")[-1] for v in run.verdicts] == [
        "found [NaN]",
        'found [{"q":NaN,"n":[Infinity,-Infinity]}]',
    ]
    odd = AssertionResult(
        "tool search args $.n == 1e999",
        WEATHER,
        1,
        3,
        "fail",
        "x",
        actual=[inf, nan],
        expected=-inf,
    )
    case = CaseResult("odd", False, 0.0, 1.0, assertions=(odd,))
    report = report_under_test()
    report = attrs.evolve(report, suites=(attrs.evolve(report.suites[0], cases=(case,)),))

    def refuse(word: str) -> None:
        raise AssertionError(f"{word} is not JSON")

    for text in (to_json_text(report), _stdlib_text(report)):
        (written,) = json.loads(text, parse_constant=refuse)["suites"][0]["cases"][0]["assertions"]
        assert (written["actual"], written["expected"]) == (["Infinity", "NaN"], "-Infinity")
    console = run_console(io.StringIO(), report, color=False)
    assert "  = found: [Infinity, NaN]\n  = expected: -Infinity\n" in console
    assert "  found: [Infinity, NaN]\n  expected: -Infinity" in to_junit_text(report)
    assert "found `[Infinity, NaN]`<br>expected `-Infinity`" in to_markdown_text(report)


# -- JUnit ---------------------------------------------------------------------------


def junit_root() -> ET.Element:
    return ET.fromstring(to_junit_text(report_under_test()).encode("utf-8"))


def case_named(root: ET.Element, name: str) -> ET.Element:
    found = [c for c in root.iter("testcase") if c.get("name") == name]
    assert len(found) == 1, name
    return found[0]


def test_junit_parses_and_has_one_testcase_per_case() -> None:
    root = junit_root()
    assert root.tag == "testsuites"
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == ["weather", "empty", "broken"]
    weather = suites[0]
    assert [c.get("name") for c in weather.findall("testcase")] == [
        "sunny day",
        RAINY,
        "crash",
        "judge only",
        "regex bound",
    ]
    assert {c.get("classname") for c in weather.findall("testcase")} == {"weather"}
    assert case_named(root, RAINY).get("time") == "1.500"
    assert weather.get("time") == "1.518"
    assert root.get("time") == "1.234"


def test_junit_counts_match_the_elements() -> None:
    root = junit_root()
    totals = dict.fromkeys(("tests", "failures", "errors", "skipped"), 0)
    for suite in root.findall("testsuite"):
        cases = suite.findall("testcase")
        counts = {
            "tests": len(cases),
            "failures": sum(1 for c in cases if c.find("failure") is not None),
            "errors": sum(1 for c in cases if c.find("error") is not None),
            "skipped": sum(1 for c in cases if c.find("skipped") is not None),
        }
        for key, count in counts.items():
            assert suite.get(key) == str(count), (suite.get("name"), key)
            totals[key] += count
    for key in ("tests", "failures", "errors"):
        assert root.get(key) == str(totals[key]), key
    assert root.get("skipped") is None  # Jenkins' schema allows none on <testsuites>
    assert totals == {"tests": 6, "failures": 1, "errors": 3, "skipped": 1}
    empty = root.findall("testsuite")[1]
    assert (empty.get("tests"), empty.get("failures"), empty.get("errors")) == ("0", "0", "0")


def test_junit_failure_lists_each_failing_assertion() -> None:
    rainy = case_named(junit_root(), RAINY)
    assert [child.tag for child in rainy] == ["failure"]
    failure = rainy[0]
    assert failure.get("message") == ('answer does not match /rain|storm/ <&"quoted"> (and 1 more)')
    text = failure.text or ""
    assert f"{WEATHER}:7:3: answer matches /rain|storm/" in text
    assert 'fail: answer does not match /rain|storm/ <&"quoted">' in text
    assert 'found: "Sunny & warm | 25°C"' in text
    assert 'expected: "/rain|storm/"' in text
    assert f"{WEATHER}:8:{WIDE_COLUMN}: steps <= 3" in text
    assert "found: 5" in text and "expected: 3" in text
    assert "tool get_weather called" not in text  # passing assertions are not listed


def test_junit_errors_skips_and_passes() -> None:
    root = junit_root()
    crash = case_named(root, "crash")
    assert [child.tag for child in crash] == ["error"]
    assert crash[0].get("type") == "crash"
    # forbidden characters escaped, as the console and Markdown show them
    assert crash[0].get("message") == "RuntimeError: boom\\x00\\x1b[31m"
    bounded = case_named(root, "regex bound")
    assert [child.tag for child in bounded] == ["error"]
    assert f"{WEATHER}:15:3: answer matches /(a+)+b/" in (bounded[0].text or "")
    assert "error: the regex hit its bound" in (bounded[0].text or "")
    judged = case_named(root, "judge only")
    assert [child.tag for child in judged] == ["skipped"]
    assert judged[0].get("message") == "no judge key: skipped"
    assert list(case_named(root, "sunny day")) == []


def test_junit_suite_diagnostics_become_an_error_testcase_named_after_the_file() -> None:
    broken = junit_root().findall("testsuite")[2]
    (case,) = broken.findall("testcase")
    assert case.get("name") == "examples/broken.yaml"
    assert case.get("classname") == "broken"
    error = case.find("error")
    assert error is not None
    assert error.get("message") == 'examples/broken.yaml:4:9: unknown tool "get_wether"'
    assert 'error[E301]: unknown tool "get_wether"' in (error.text or "")
    assert "get_weather" in (error.text or "")


def test_junit_counts_check_errors_every_case_already_tells_once() -> None:
    """`partial.yaml`, one case not run for its check error: it gave tests="2"
    errors="2", the second testcase repeating the same diagnostic."""
    error = Diagnostic.in_file("p.yaml", "E507", "unknown mode `Regex`")
    not_run = CaseResult("flow", False, 0.0, 0.0, error=f"not run: 1 check error ({error.brief})")
    suite = SuiteResult("p", "p.yaml", (not_run,), 0.0, (error,))
    root = ET.fromstring(to_junit_text(Report(suites=(suite,), duration_ms=0.0)))
    element = root.find("testsuite")
    assert element is not None
    assert (element.get("tests"), element.get("errors")) == ("1", "1")
    assert [c.get("name") for c in element.findall("testcase")] == ["flow"]
    out = element.find("system-out")
    assert out is not None and "error[E507]: unknown mode `Regex`" in (out.text or "")
    # a case that ran beside it: the error is still the one case's, told once (it gave
    # errors="2" for one broken case of two, the file's testcase repeating it)
    ran = CaseResult("other", True, 1.0, 1.0)
    both = attrs.evolve(suite, cases=(not_run, ran))
    element = ET.fromstring(to_junit_text(Report(suites=(both,), duration_ms=0.0)))[0]
    assert [c.get("name") for c in element.findall("testcase")] == ["flow", "other"]
    assert (element.get("tests"), element.get("errors")) == ("2", "1")
    # two errors, the case telling one of them: the file's testcase says them
    more = attrs.evolve(both, diagnostics=(error, attrs.evolve(error, message="another")))
    element = ET.fromstring(to_junit_text(Report(suites=(more,), duration_ms=0.0)))[0]
    assert [c.get("name") for c in element.findall("testcase")] == ["flow", "other", "p.yaml"]
    # the broken case deselected (`-k other`): no case tells its error, the file's does
    alone = attrs.evolve(suite, cases=(ran,))
    element = ET.fromstring(to_junit_text(Report(suites=(alone,), duration_ms=0.0)))[0]
    assert [c.get("name") for c in element.findall("testcase")] == ["other", "p.yaml"]
    assert (element.get("tests"), element.get("errors")) == ("2", "1")


def test_junit_warnings_only_go_to_system_out() -> None:
    warned = SuiteResult(
        name="warned",
        path="w.eval",
        cases=(),
        duration_ms=0.0,
        diagnostics=(Diagnostic.in_file("w.eval", "W504", "case with no assertions"),),
    )
    root = ET.fromstring(to_junit_text(Report(suites=(warned,), duration_ms=0.0)))
    suite = root.find("testsuite")
    assert suite is not None and suite.get("tests") == "0" and suite.get("errors") == "0"
    out = suite.find("system-out")
    assert out is not None and "warning[W504]" in (out.text or "")


def test_junit_escapes_characters_xml_forbids_and_markup() -> None:
    text = to_junit_text(report_under_test())
    assert "\x00" not in text and "\x1b" not in text
    assert "&lt;&amp;&quot;day&quot;&gt;" in text  # the case name, as an attribute
    assert text.startswith('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites')
    assert case_named(junit_root(), RAINY).get("name") == RAINY
    assert junit.clean("a\ud800b\ufffec\U0001f600") == "a\\ud800b\\ufffec\U0001f600"


@pytest.mark.parametrize("schema_path", SCHEMAS, ids=lambda p: p.name)
def test_junit_validates_against_the_vendored_schema(schema_path: Path) -> None:
    import xmlschema  # a dev dependency (`make test` installs it)

    schema = xmlschema.XMLSchema(str(schema_path))
    for report in (report_under_test(), Report(suites=(), duration_ms=0.0)):
        schema.validate(to_junit_text(report))


def test_junit_schema_is_vendored() -> None:
    assert SCHEMAS, "tests/data/junit/*.xsd is missing"


# -- Markdown ------------------------------------------------------------------------


def test_markdown_headline_and_totals_table() -> None:
    text = to_markdown_text(report_under_test())
    lines = text.splitlines()
    # the judge-only case is skipped, out of the pass rate; the crash and the regex bound
    # errored (as the console, JUnit and HTML reports say)
    counts = "1 passed, 1 failed, 2 errored, 1 skipped"
    assert lines[0] == f"## ❌ evaldsl: 5 cases: {counts}, 1 suite with errors"
    header = lines.index(
        "| Cases | Passed | Failed | Errored | Skipped | Score | Pass rate"
        " | Assertions pass / fail / skip / error | Duration |"
    )
    assert lines[header + 1].startswith("|---:")
    assert lines[header + 2] == (
        "| 5 | 1 | 1 | 2 | 1 | 0.47 | 25.0% of 4 tested cases | 3 / 2 / 1 / 1 | 1.23 s |"
    )
    assert f"| ❌ weather | `{WEATHER}` | 5 | 1 | 1 | 2 | 1 | 0.47 |" in text
    assert "| ✅ empty | `examples/empty.eval` | 0 | 0 | 0 | 0 | 0 | 0.00 |" in text


def test_markdown_lists_failing_assertions_and_escapes_pipes() -> None:
    text = to_markdown_text(report_under_test())
    assert text.count("<details>") == 3  # rainy, crash, regex bound
    assert '<b>weather › rainy &lt;&amp;"day"&gt; ☔ météo</b>' in text
    row = next(line for line in text.splitlines() if f"`{WEATHER}:7`" in line)
    assert row.startswith(f"| `{WEATHER}:7` | `answer matches /rain\\|storm/` | ")
    assert 'answer does not match /rain\\|storm/ &lt;&amp;"quoted"&gt;' in row
    assert 'found `"Sunny & warm \\| 25°C"`' in row
    # every row has exactly its three cells once escaped pipes are set aside
    assert row.replace("\\|", "").count("|") == 4
    assert f"| `{WEATHER}:8` | `steps <= 3` | expected at most 3 steps, found 5" in text
    assert "```text\nRuntimeError: boom\\x00\\x1b[31m\n```" in text
    assert "\x00" not in text and "\x1b" not in text
    assert "**error:** the regex hit its bound" in text


def test_markdown_counts_passing_cases_without_listing_them() -> None:
    text = to_markdown_text(report_under_test())
    assert "sunny day" not in text and "judge only" not in text
    assert "tool get_weather called" not in text


def test_markdown_lists_suite_diagnostics() -> None:
    text = to_markdown_text(report_under_test())
    assert "### Suite problems" in text
    assert (
        '- `examples/broken.yaml:4:9` error[E301]: unknown tool "get_wether"'
        ' (did you mean "get_weather"?)'
    ) in text


def test_markdown_all_passed() -> None:
    ok = SuiteResult(
        name="ok",
        path="ok.eval",
        cases=(CaseResult("a", True, 1.0, 5.0, assertions=(passed("steps <= 3", 1),)),),
        duration_ms=5.0,
    )
    text = to_markdown_text(Report(suites=(ok,), duration_ms=5.0))
    assert text.startswith("## ✅ evaldsl: all 1 cases passed\n")
    assert "<details>" not in text and "| ok |" not in text  # one suite: no suite table


def test_markdown_crash_traceback_is_a_fenced_block() -> None:
    case = CaseResult("c", False, 0.0, 1.0, error="Traceback:\n  ```\n  boom | <x>")
    text = to_markdown_text(Report((SuiteResult("s", "t.eval", (case,), 1.0),), 1.0))
    assert "````text\nTraceback:\n  ```\n  boom | <x>\n````" in text


def test_markdown_cell_escaping() -> None:
    assert markdown.cell("a|b\nc<d>&") == "a\\|b<br>c&lt;d&gt;&amp;"
    assert markdown.code("x ` y") == "``x ` y``"
    assert markdown.code("`x`") == "`` `x` ``"


# -- Console -------------------------------------------------------------------------


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture(autouse=True)
def a_terminal_that_takes_escapes(monkeypatch: pytest.MonkeyPatch) -> None:
    """`FakeTerminal` a terminal of the usual kind, whatever TERM the tests run under (a
    dumb one takes no colors nor the progress counter: see the test that sets it)."""
    monkeypatch.setenv("TERM", "xterm-256color")


def run_console(stream: io.StringIO, report: Report, **options: Any) -> str:
    reporter = ConsoleReporter(stream, **options)
    reporter.start(len(report.cases))
    for suite in report.suites:
        for case in suite.cases:
            reporter.case_done(suite, case)
    reporter.finish(report)
    return stream.getvalue()


def test_console_prints_a_line_per_case_and_rustc_style_failures() -> None:
    out = run_console(io.StringIO(), report_under_test(), color=False)
    lines = out.splitlines()
    assert not ANSI.search(out)
    assert re.search(r"^✓ weather › sunny day +1\.00 +12 ms$", out, re.M)
    assert re.search(r"^✗ weather › " + re.escape(RAINY) + r" +0\.33 +1\.50 s$", out, re.M)
    assert re.search(r"^! weather › crash +0\.00 +3 ms$", out, re.M)
    assert re.search(r"^○ weather › judge only +1\.00 +1 ms$", out, re.M)
    assert re.search(r"^! weather › regex bound +0\.00 +2 ms$", out, re.M)
    head = lines.index(f'{WEATHER}:7:3: fail: answer does not match /rain|storm/ <&"quoted">')
    assert lines[head + 1 : head + 6] == [
        "  |",
        f"7 | {LINE_MATCHES}",
        "  |   " + "^" * len("answer matches /rain|storm/"),
        '  = found: "Sunny & warm | 25°C"',
        '  = expected: "/rain|storm/"',
    ]
    assert f"{WEATHER}:15:3: error: the regex hit its bound" in lines
    # control characters from the run are shown as escapes, never sent to the terminal
    assert "  error: RuntimeError: boom\\x00\\x1b[31m" in lines
    assert "\x00" not in out


def console_width(text: str) -> int:
    """Terminal columns of `text` (its East Asian wide characters take two)."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def console_lines(stream: io.StringIO, report: Report) -> list[str]:
    """The case lines of `report` as `start(…, suites)` lays them out (as `run` calls it)."""
    reporter = ConsoleReporter(stream, color=False)
    reporter.start(len(report.cases), report.suites)
    for suite in report.suites:
        for case in suite.cases:
            reporter.case_done(suite, case)
    return [line for line in stream.getvalue().splitlines() if line[:2] in ("✓ ", "✗ ")]


def test_console_lines_up_scores_past_the_least_width_and_within_the_terminal() -> None:
    long = "each city is in the request #2 [file=tokyo-stream.jsonl, city=Tokyo] 东京"
    cases = tuple(
        CaseResult(name=name, passed=True, score=1.0, duration_ms=3.0)
        for name in ("short", long, "middling name of a case")
    )
    report = Report(
        suites=(SuiteResult(name="weather", path="w.eval", cases=cases, duration_ms=9.0),),
        duration_ms=9.0,
    )

    def score_columns(lines: list[str]) -> set[int]:
        # (in terminal columns: the two wide characters of the long name take two each)
        return {console_width(line[: line.index(" 1.00 ")]) for line in lines}

    lines = console_lines(io.StringIO(), report)
    assert len(lines) == 3 and len(score_columns(lines)) == 1  # one column for all
    assert console_width(lines[1]) > 60 + 15  # past the least width, for the long name
    # a short run keeps the least width: names padded to 60 columns
    short = attrs.evolve(report, suites=(attrs.evolve(report.suites[0], cases=cases[:1]),))
    assert score_columns(console_lines(io.StringIO(), short)) == {2 + 60 - 1}
    # on a terminal of 90 columns the column stops where lines would wrap; the long name
    # alone overflows it, with two blanks before its score
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("COLUMNS", "90")
        lines = console_lines(FakeTerminal(), report)
    widths = [console_width(line) for line in lines]
    assert widths[0] == widths[2] == 90 and widths[1] > 90
    assert re.search(r"東京|东京  1\.00 ", lines[1])


class FlushCounter(io.StringIO):
    """A stream that counts flushes and what was written since the last one."""

    def __init__(self) -> None:
        super().__init__()
        self.flushes = 0
        self.unflushed = 0

    def write(self, text: str) -> int:
        self.unflushed += len(text)
        return super().write(text)

    def flush(self) -> None:
        self.flushes += 1
        self.unflushed = 0


def test_console_flushes_once_per_case_and_leaves_nothing_unflushed() -> None:
    stream = FlushCounter()
    reporter = ConsoleReporter(stream, color=False)
    report = report_under_test()
    reporter.start(len(report.cases))
    for case in report.suites[0].cases:
        before = stream.flushes
        reporter.case_done("weather", case)
        # a failing case prints several lines: still one flush, after the last of them
        assert (stream.flushes - before, stream.unflushed) == (1, 0), case.name
    assert stream.getvalue().count("\n") > 2 * len(report.suites[0].cases)
    reporter.problems(report.suites[0].cases[1])
    assert stream.unflushed == 0
    reporter.finish(report)
    assert stream.unflushed == 0 and "assertions: 3 passed" in stream.getvalue()


def test_console_caret_counts_wide_characters_twice() -> None:
    out = run_console(io.StringIO(), report_under_test(), color=False)
    lines = out.splitlines()
    head = lines.index(f"{WEATHER}:8:{WIDE_COLUMN}: fail: expected at most 3 steps, found 5")
    source, caret = lines[head + 2], lines[head + 3]
    assert source == f"8 | {LINE_WIDE}"
    # the three CJK characters before `steps` take two terminal columns each
    prefix = LINE_WIDE[: WIDE_COLUMN - 1]
    assert caret == "  | " + " " * (len(prefix) + 3) + "^" * len("steps <= 3")


def test_console_summary_line() -> None:
    lines = run_console(io.StringIO(), report_under_test(), color=False).splitlines()
    assert lines[-2] == (
        "1 passed, 1 failed, 2 errored, 1 skipped, 1 suite with errors in 1.23s · score 0.47"
        " · pass rate 25.0% of 4 tested cases"
    )
    assert lines[-1] == "assertions: 3 passed, 2 failed, 1 skipped, 1 errored"


def test_console_prints_suite_diagnostics() -> None:
    out = run_console(io.StringIO(), report_under_test(), color=False)
    assert 'examples/broken.yaml:4:9: error[E301]: unknown tool "get_wether"' in out
    assert "  - tool get_wether called" in out


def test_console_can_leave_diagnostics_to_the_caller() -> None:
    out = run_console(io.StringIO(), report_under_test(), color=False, diagnostics=False)
    assert "E301" not in out
    assert "1 suite with errors" in out


def test_console_quiet_prints_only_failures_and_the_summary() -> None:
    out = run_console(io.StringIO(), report_under_test(), color=False, quiet=True)
    assert "sunny day" not in out and "judge only" not in out
    assert RAINY in out and "crash" in out
    assert "assertions: 3 passed" in out


def test_console_verbose_lists_every_assertion_and_metrics() -> None:
    out = run_console(io.StringIO(), report_under_test(), color=False, verbose=True)
    assert f"  pass: {WEATHER}:3:3: tool get_weather called" in out
    assert "    no judge key: skipped" in out
    assert "  latency 12 ms, steps 2, tool calls 1, input tokens 30\n" in out


def test_console_verbose_metrics_show_a_cost_as_money() -> None:
    # a cost under a cent keeps its digits, as the HTML report and `evaldsl diff` show it
    metrics = CaseMetrics(latency_ms=1720.0, steps=2, cost=0.0000876)
    case = CaseResult("c", True, 1.0, 1.0, metrics=metrics, assertions=(passed("x", 1),))
    report = Report((SuiteResult("s", "s.eval", (case,), 1.0),), 1.0)
    out = run_console(io.StringIO(), report, color=False, verbose=True)
    assert "  latency 1.72 s, steps 2, cost $0.000088\n" in out


def test_console_prints_cases_the_runner_did_not_report() -> None:
    stream = io.StringIO()
    reporter = ConsoleReporter(stream, color=False)
    report = report_under_test()
    reporter.start(5)
    reporter.case_done("weather", report.suites[0].cases[0])
    reporter.finish(report)
    out = stream.getvalue()
    assert out.count("sunny day") == 1
    assert RAINY in out and "regex bound" in out


def test_console_prints_a_twin_suites_cases_once_each() -> None:
    report = report_under_test()
    twin = attrs.evolve(report.suites[0], path="examples/weather.yaml")
    report = Report((report.suites[0], twin), 1.0)
    stream = io.StringIO()
    reporter = ConsoleReporter(stream, color=False)
    reporter.start(10)
    for case in report.suites[0].cases:
        reporter.case_done("weather", case)  # the twin's cases never reported
    reporter.finish(report)
    assert stream.getvalue().count("sunny day") == 2


def test_console_takes_any_suite_with_a_name() -> None:
    class LoadedSuite:  # what the runner hands over: a loaded suite, not a result
        name = "weather"

    stream = io.StringIO()
    reporter = ConsoleReporter(stream, color=False)
    report = report_under_test()
    reporter.start(5)
    for case in report.suites[0].cases:
        reporter.case_done(LoadedSuite(), case)
    reporter.finish(report)
    assert stream.getvalue().count("sunny day") == 1


def test_console_no_progress_or_color_off_a_terminal() -> None:
    many = many_cases(30)
    out = run_console(io.StringIO(), many)
    assert "\r" not in out and not ANSI.search(out) and "[1/30]" not in out


def test_console_progress_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    out = run_console(FakeTerminal(), many_cases(30))
    assert "[1/30] s › case 0" in out and "[29/30]" in out and "[30/30]" not in out
    assert "\r\x1b[2K" in out
    assert not re.search(r"\x1b\[[0-9;]*m", out)  # NO_COLOR: no colors
    # after the progress line is cleared, every printed line is whole
    visible = re.sub(r"\[\d+/30\][^\r]*\r\x1b\[2K", "", out)
    assert "\r" not in visible
    assert visible.splitlines()[-2].startswith("30 passed, 0 failed in")


def test_console_progress_fits_the_terminals_width(monkeypatch: pytest.MonkeyPatch) -> None:
    # one row only (a wrapped line would survive the rewrite): shortened to COLUMNS - 1
    monkeypatch.setenv("NO_COLOR", "1")
    name = "a case with a long name " * 4

    def progress_lines(columns: str) -> list[str]:
        monkeypatch.setenv("COLUMNS", columns)
        out = run_console(FakeTerminal(), many_cases(30, name))
        return re.findall(r"(\[\d+/30\][^\r]*)\r\x1b\[2K", out)

    shown = progress_lines("24")
    assert len(shown) == 29 and max(len(line) for line in shown) == 23
    shown = progress_lines("300")
    assert len(shown) == 29 and all(name.strip() in line for line in shown)


def test_console_short_runs_show_no_progress() -> None:
    out = run_console(FakeTerminal(), many_cases(3), color=False)
    assert "[1/3]" not in out and "\r" not in out


def test_console_colors_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert console.wants_color(FakeTerminal())
    assert not console.wants_color(io.StringIO())
    assert console.wants_color(io.StringIO(), color=True)
    monkeypatch.setenv("NO_COLOR", "1")
    assert not console.wants_color(FakeTerminal())
    assert console.wants_color(FakeTerminal(), color=True)
    out = run_console(io.StringIO(), report_under_test(), color=True)
    assert "\x1b[1;32m✓\x1b[0m" in out and "\x1b[1;31m✗\x1b[0m" in out


def test_console_no_progress_or_color_on_a_dumb_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    # TERM=dumb (Emacs' shell, some CI log viewers): escapes it shows as text, `[1;32m✓`
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "dumb")
    assert not console.wants_color(FakeTerminal())
    assert console.wants_color(FakeTerminal(), color=True)  # (asked for: given)
    out = run_console(FakeTerminal(), many_cases(30))
    assert "\x1b" not in out and "\r" not in out and "[1/30]" not in out
    assert out.splitlines()[-2].startswith("30 passed, 0 failed in")


def test_console_escapes_control_characters_and_keeps_the_caret_aligned() -> None:
    line = "\x1b[2Jx == 1"
    bad = AssertionResult("x == 1", "t.eval", 1, 5, "fail", "no", source_line=line, end_column=11)
    case = CaseResult("a\nb", False, 0.0, 1.0, assertions=(bad,))
    report = Report((SuiteResult("s", "t.eval", (case,), 1.0),), 1.0)
    lines = run_console(io.StringIO(), report, color=False).splitlines()
    assert lines[0].startswith("✗ s › a\\nb ")
    source = lines.index("1 | \\x1b[2Jx == 1")
    assert lines[source + 1] == "  | " + " " * len("\\x1b[2J") + "^" * 6


def test_console_escapes_a_tab_in_a_name_as_other_control_characters() -> None:
    case = CaseResult("a\tb", True, 1.0, 1.0, assertions=(passed("x", 1),))
    report = Report((SuiteResult("t\tab", "t.yaml", (case,), 1.0),), 1.0)
    lines = run_console(io.StringIO(), report, color=False, verbose=True).splitlines()
    assert lines[0].startswith("✓ t\\tab › a\\tb ")
    assert "\t" not in "\n".join(lines)


def huge_failure() -> Report:
    """A case whose failing assertion's message quotes a literal of 300,000 characters."""
    literal = "x" * 300_000
    message = f'expected answer contains "{literal}"'
    bad = AssertionResult(
        f'answer contains "{literal}"', "h.eval", 4, 3, "fail", message, "Sunny", literal
    )
    case = CaseResult("c", False, 0.0, 1.0, assertions=(bad,))
    return Report((SuiteResult("h", "h.eval", (case,), 1.0),), 1.0)


@pytest.mark.parametrize("length", [201, 210, 225, 240, 260, 10_000])
def test_a_message_is_cut_only_when_that_makes_it_shorter(length: int) -> None:
    """A 201-225 character message came out longer, with "(1 characters not shown)"."""
    from evaldsl.language.diagnostics import abbreviated

    text = "m" * length
    shown = abbreviated(text, 200)
    assert len(shown) <= length
    assert shown == text or f"({length - 200:,} characters not shown)" in shown
    assert (shown == text) == (length <= 229)  # (the note takes 29 characters)


def test_console_cuts_a_huge_failure_message_saying_how_much() -> None:
    lines = run_console(io.StringIO(), huge_failure(), color=False).splitlines()
    (head,) = [line for line in lines if line.startswith("h.eval:4:3: fail: ")]
    assert len(head) < 300
    assert "… (299,827 characters not shown) …" in head
    assert max(len(line) for line in lines) < 300


def test_junit_message_of_a_huge_failure_is_cut_and_its_text_kept() -> None:
    root = ET.fromstring(to_junit_text(huge_failure()).encode("utf-8"))
    failure = root.find("testsuite/testcase/failure")
    assert failure is not None
    message = failure.get("message", "")
    assert len(message) < 300 and "characters not shown" in message
    assert "x" * 300_000 in (failure.text or "")  # the element's text keeps it whole


def test_console_multiline_crash_is_indented_and_blocks_are_single_spaced() -> None:
    case = CaseResult("c", False, 0.0, 1.0, error="Traceback:\r\n  boom")
    report = Report((SuiteResult("s", "t.eval", (case,), 1.0),), 1.0)
    out = run_console(io.StringIO(), report, color=False)
    assert "  error: Traceback:\n      boom\n" in out
    assert "\n\n\n" not in out and not out.startswith("\n")


def many_cases(n: int, name: str = "case") -> Report:
    cases = tuple(CaseResult(f"{name} {i}", True, 1.0, 1.0) for i in range(n))
    return Report(suites=(SuiteResult("s", "s.eval", cases, float(n)),), duration_ms=float(n))


# -- writing files -------------------------------------------------------------------


def test_writers_make_folders_and_write_utf8(tmp_path: Path) -> None:
    report = report_under_test()
    write_json(report, tmp_path / "out" / "r.json")
    write_junit(report, tmp_path / "out" / "junit.xml")
    write_markdown(report, tmp_path / "out" / "summary.md")
    assert json.loads((tmp_path / "out" / "r.json").read_text("utf-8")) == json.loads(
        to_json_text(report)
    )
    ET.parse(tmp_path / "out" / "junit.xml")
    assert "☔" in (tmp_path / "out" / "summary.md").read_text("utf-8")
    assert set(FORMATS) == {"json", "junit", "markdown"}


def test_write_dash_goes_to_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    evaldsl.reports.write(Report(suites=(), duration_ms=0.0), "json", "-")
    assert json.loads(capsys.readouterr().out)["version"] == 1


@pytest.mark.parametrize(
    "module", [evaldsl.reports, common, annotations, console, json_report, junit, markdown]
)
def test_docstring_examples(module: Any) -> None:
    result = doctest.testmod(module)
    assert result.failed == 0


def test_suites_of_one_name_are_told_apart_by_their_files(tmp_path: Path) -> None:
    """The examples write each suite twice, in `.eval` and in YAML, under one name: every
    report names such suites with their files, so their cases' lines can be told apart
    (a suite whose name no other shares is named as before)."""
    from tests.test_html_report import page_data

    json_out, junit_out, md_out = (tmp_path / n for n in ("r.json", "r.xml", "r.md"))
    html_out = tmp_path / "r.html"
    done = run_evaldsl(
        "run", "examples/weather", "examples/research/research.eval", "--no-history",
        "--json", str(json_out), "--junit", str(junit_out), "--markdown", str(md_out),
        "--html", str(html_out),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    lines = [line for line in done.stdout.splitlines() if " › " in line]
    assert len(lines) == 12 and len(set(lines)) == 12
    assert sum("weather agent (weather.eval) › streams the Tokyo forecast" in x for x in lines) == 1
    assert sum("weather agent (weather.yaml) › streams the Tokyo forecast" in x for x in lines) == 1
    assert sum(x.startswith("✓ research pipeline › ") for x in lines) == 2
    suites = ET.parse(junit_out).getroot().findall("testsuite")
    assert [
        (s.get("name"), {c.get("classname") for c in s.findall("testcase")}) for s in suites
    ] == [
        ("weather agent (weather.eval)", {"weather agent (weather.eval)"}),
        ("weather agent (weather.yaml)", {"weather agent (weather.yaml)"}),
        ("research pipeline", {"research pipeline"}),
    ]
    page = page_data(html_out.read_text(encoding="utf-8"))
    assert [page["strings"][s["name"]] for s in page["suites"]] == [
        "weather agent (weather.eval)",
        "weather agent (weather.yaml)",
        "research pipeline",
    ]
    # the JSON report keeps each suite's own name beside its path
    assert [s["name"] for s in json.loads(json_out.read_text())["suites"]] == [
        "weather agent",
        "weather agent",
        "research pipeline",
    ]


def test_markdown_names_failing_cases_of_suites_of_one_name_with_their_files() -> None:
    report = report_under_test()
    twin = attrs.evolve(report.suites[0], path="other/weather.yaml")
    text = to_markdown_text(Report((report.suites[0], twin), 1.0))
    own = f"weather ({Path(WEATHER).name})"
    assert f"<b>{own} › crash</b>" in text and "<b>weather (weather.yaml) › crash</b>" in text


def test_a_case_whose_assertions_were_all_skipped_is_skipped_in_every_report(
    tmp_path: Path,
) -> None:
    # a judge without a key skips its assertion: the case does not fail (docs/language.md §5),
    # but nothing was tested, so no report may count it as passed
    cassette = Path(__file__).resolve().parent.parent / "examples/weather/cassettes/xiamen.jsonl"
    suite = tmp_path / "judgeonly.eval"
    suite.write_text(
        f'suite "judge only"\ncase "c"\n  cassette "{cassette}"\n'
        '  answer judged "is about the weather"\n'
        f'case "tested"\n  cassette "{cassette}"\n  steps >= 1\n'
    )
    out = {name: tmp_path / name for name in ("r.json", "r.xml", "r.md")}
    done = run_evaldsl(
        "run", str(suite), "--no-history", "--json", str(out["r.json"]),
        "--junit", str(out["r.xml"]), "--markdown", str(out["r.md"]),
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr  # a skip fails nothing
    assert "1 passed, 0 failed, 1 skipped in " in done.stdout
    assert "pass rate 100.0% of 1 tested case\n" in done.stdout
    data = json.loads(out["r.json"].read_text())
    skipped, tested = data["suites"][0]["cases"]
    assert (skipped["passed"], skipped["outcome"]) == (True, "skipped")
    assert (tested["passed"], tested["outcome"]) == (True, "passed")
    summary = data["summary"]
    assert (summary["passed"], summary["failed"], summary["skipped"]) == (1, 0, 1)
    assert (summary["errored"], summary["pass_rate"]) == (0, 1.0)
    root = ET.fromstring(out["r.xml"].read_bytes())
    assert root.find("testsuite").get("skipped") == "1"  # type: ignore[union-attr]
    markdown_text = out["r.md"].read_text()
    assert markdown_text.startswith("## ✅ evaldsl: 2 cases: 1 passed, 0 failed, 1 skipped\n")
    assert "| 2 | 1 | 0 | 0 | 1 | 1.00 | 100.0% of 1 tested case |" in markdown_text


def test_a_run_of_skipped_cases_only_has_no_pass_rate() -> None:
    judged = report_under_test().suites[0].cases[3]
    assert judged.outcome == "skipped"
    report = Report((SuiteResult("s", "s.eval", (judged,), 1.0),), 1.0)
    assert (report.summary.passed, report.summary.skipped, report.summary.pass_rate) == (0, 1, 0)
    lines = run_console(io.StringIO(), report, color=False).splitlines()
    assert lines[-2].startswith("0 passed, 0 failed, 1 skipped in ")
    assert lines[-2].endswith(" · pass rate – (no case tested)")
    assert report.ok  # (exit 0: nothing failed)
    assert to_markdown_text(report).startswith(
        "## ✅ evaldsl: 1 case: 0 passed, 0 failed, 1 skipped"
    )


def test_a_missing_value_is_found_nothing_and_a_null_is_null(tmp_path: Path) -> None:
    (tmp_path / "state.json").write_text(
        '{"status": "completed", "memory": {"empty": null}}', encoding="utf-8"
    )
    (tmp_path / "s.eval").write_text(
        'case "c"\nstate "state.json"\nmemory.gone == 3\nmemory.empty == 3\n', encoding="utf-8"
    )
    junit, markdown, html = tmp_path / "r.xml", tmp_path / "r.md", tmp_path / "r.html"
    done = run_evaldsl(
        "run", "--no-history", "--junit", str(junit), "--markdown", str(markdown),
        "--html", str(html), str(tmp_path / "s.eval"),
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    texts = {
        "console": done.stdout,
        "junit": junit.read_text(encoding="utf-8"),
        "markdown": markdown.read_text(encoding="utf-8"),
    }
    for name, text in texts.items():
        # (the messages say it too: only the found lines are read here)
        found = re.findall(r"found(?:: | `)(nothing \(missing\)|null)", text)
        assert found == ["nothing (missing)", "null"], (name, text)
    # the HTML report's data: the found texts as strings of their own (`"null"` is also
    # the found null's text there)
    page = html.read_text(encoding="utf-8")
    assert page.count('"nothing (missing)"') == 1 and '"null"' in page


def test_markdown_mentions_and_references_are_code(tmp_path: Path) -> None:
    # a pull-request comment pinged whoever a failure's text named (`@alice`, a team) and
    # linked issue #12: in code they are text, neither linked nor notified
    shutil.copy(ROOT / "examples/weather/cassettes/xiamen.jsonl", tmp_path)
    suite = tmp_path / "s.eval"
    suite.write_text(
        'case "ask @ops/oncall"\n  cassette "xiamen.jsonl"\n  answer contains "@alice see #12"\n',
        "utf-8",
    )
    done = run_evaldsl("run", "s.eval", "--no-history", "--markdown", "r.md", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    text = (tmp_path / "r.md").read_text("utf-8")
    assert "<code>@ops/oncall</code>" in text and "<code>@alice</code>" in text
    assert "<code>#12</code>" in text
    # outside code spans and <code> elements, no mention or reference is left
    bare = re.sub(r"<code>.*?</code>|(`+).*?\1", "", text)
    assert not re.search(r"(?<![\w&])[@#]\w", bare), bare
