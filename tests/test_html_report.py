"""The HTML report: its data and page in Python, then the page itself in a real browser.

Without a browser: the JSON block survives every character that could end a script
element; the page loads nothing and allows only its own inline blocks; timelines are read
from recordings and line up with a `-k` selection; `evaldsl run --html` writes the file.

In Debian's headless Chromium, driven by Playwright with the network cut off: the report
of examples-failing/ shows its counts, the "failed" and "errored" filters and the search
box leave the right rows, and a screenshot is taken; a report whose suite, case names,
answer, tool arguments and judge reason hold markup runs none of it, with the page's
Content-Security-Policy bypassed so the escaping alone is tested; and 10,000 cases render
only the rows on screen while filters and search still count them all.

Where /usr/bin/chromium is missing, `make test` installs it (as root); in CI (`CI=true`)
a missing browser fails these tests instead of skipping them.
"""

from __future__ import annotations

import base64
import doctest
import hashlib
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, sync_playwright
from playwright.sync_api import TimeoutError as PlaywrightTimeout

import evaldsl.reports.html as html_module
from evaldsl.reports import timeline as timeline_module
from evaldsl.reports.common import money
from evaldsl.reports.html import json_for_html, to_html_text, write_html
from evaldsl.reports.timeline import Timeline, read_timeline, timelines
from evaldsl.runner import RunOptions, run_suites
from evaldsl.runner.results import AssertionResult, CaseMetrics, CaseResult, Report, SuiteResult
from evaldsl.suites import load_suite
from tests.clitools import run_evaldsl
from tests.judge_server import JudgeServer, judged

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
FAILING_SUITES = ("failures.eval", "mistakes.eval", "mistakes.yaml")
# Flags that work as root in a container; Playwright adds --headless and a fresh profile.
CHROMIUM_FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOT = ROOT / "docs" / "html-report.png"
DATA_BLOCK = re.compile(r'<script type="application/json" id="evaldsl-data">(.*?)</script>', re.S)


def page_data(html: str) -> dict[str, Any]:
    match = DATA_BLOCK.search(html)
    assert match is not None
    data: dict[str, Any] = json.loads(match.group(1))
    return data


# ---- without a browser ----------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        "</script><script>alert(1)</script>",
        "<!-- <script>",
        "a & b > c",
        "line\u2028para\u2029end",
        "lone \ud800 surrogate",
        {"k</script>": ["\u2028", "<", 1.5, None, True]},
    ],
)
def test_json_for_html_round_trips_and_cannot_end_the_script(value: Any) -> None:
    text = json_for_html(value)
    assert not re.search("[<>&\u2028\u2029\ud800-\udfff]", text)
    assert json.loads(text) == value


def test_the_page_allows_only_its_own_inline_blocks_and_loads_nothing() -> None:
    html = to_html_text(run_suites([load_suite(ROOT / "examples-failing" / "failures.eval")]))
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html)
    assert policy is not None
    rules = dict(rule.strip().split(" ", 1) for rule in policy.group(1).split(";"))
    assert rules["default-src"] == "'none'"
    css = re.search(r"<style>(.*?)</style>", html, re.S)
    script = re.search(r"<script>(.*?)</script>", html, re.S)
    assert css is not None and script is not None

    def sha(text: str) -> str:
        return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"

    assert rules["style-src"] == sha(css.group(1))
    assert rules["script-src"] == sha(script.group(1))
    # no attribute of the page names anything to fetch
    assert not re.search(r"\b(src|href)\s*=", DATA_BLOCK.sub("", html))


def test_the_data_keeps_each_string_once_and_every_assertion() -> None:
    suite = load_suite(ROOT / "examples" / "weather" / "weather.eval")
    report = run_suites([suite])
    data = page_data(to_html_text(report, [suite]))
    strings = data["strings"]
    assert len(strings) == len(set(strings))
    (shown,) = data["suites"]
    assert strings[shown["name"]] == "weather agent"
    assert len(shown["cases"]) == len(report.cases)
    for page_case, case in zip(shown["cases"], report.cases, strict=True):
        assert strings[page_case["name"]] == case.name
        assert [strings[a[0]] for a in page_case["assertions"]] == [a.text for a in case.assertions]
        assert [a[4] for a in page_case["assertions"]] == [a.status for a in case.assertions]
    assert data["summary"]["outcomes"] == {"passed": 5, "failed": 0, "error": 0, "skipped": 0}


def test_a_diagnostic_quoting_a_huge_literal_is_abbreviated_on_the_page(tmp_path: Path) -> None:
    cassette = ROOT / "tests/fixtures/traceplay/multi-tool/cassette.multi-tool.jsonl"
    big = "x" * 1_000_000
    path = tmp_path / "big.eval"
    path.write_text(f'case "c"\ncassette "{cassette}"\nanswer contains {big}\n', "utf-8")
    suite = load_suite(path)
    data = page_data(to_html_text(run_suites([suite]), [suite]))
    strings = data["strings"]
    (diagnostic,) = data["suites"][0]["diagnostics"]
    message, hint = strings[diagnostic[2]], strings[diagnostic[9]]
    assert message == "text must be quoted"
    assert len(hint) < 600 and "… (999,508 characters not shown) …" in hint, hint[:80]
    assert hint.startswith('write "xxx') and hint.endswith('xxx"')


def test_timeline_of_a_recorded_case() -> None:
    suite = load_suite(ROOT / "examples" / "weather" / "weather.eval")
    case = next(c for c in suite.cases if c.name == "answers with the Xiamen forecast")
    timeline = read_timeline(case, suite)
    assert timeline is not None and not timeline.truncated
    steps = [(s.kind, s.name, s.at_ms, s.ms) for s in timeline.steps]
    assert steps == [
        ("user", "user", 0.0, None),
        ("llm", "gpt-4o-mini", 120.0, 490.0),
        ("tool", "get_weather", 640.0, 270.0),
        ("llm", "gpt-4o-mini", 1000.0, 720.0),
    ]
    assert timeline.steps[1].got == "asks for get_weather"
    assert timeline.steps[2].sent == '{"city":"Xiamen","unit":"C"}'
    assert '"sky":"sunny"' in timeline.steps[2].got
    assert timeline.steps[3].got.startswith("It's sunny in Xiamen today")
    assert timeline.steps[3].sent == "240 → 19 tokens"
    limited = read_timeline(case, suite, limit=2)
    assert limited is not None and limited.truncated and len(limited.steps) == 2


def test_timelines_follow_a_selection_and_skip_states_and_live_targets() -> None:
    weather = load_suite(ROOT / "examples" / "weather" / "weather.eval")
    research = load_suite(ROOT / "examples" / "research" / "research.eval")
    live = load_suite(ROOT / "examples" / "live" / "live.eval")
    report = run_suites([weather, research, live], RunOptions(select="tokyo"))
    lines = timelines([weather, research, live], report)
    assert [len(s) for s in lines] == [len(s.cases) for s in report.suites]
    names = [c.name for c in report.suites[0].cases]
    assert names[0] == "streams the Tokyo forecast"
    first = lines[0][0]
    assert first is not None and first.steps[0].sent == "Weather in Tokyo?"
    full = run_suites([research, live])
    assert all(t is None for suite in timelines([research, live], full) for t in suite)


def test_a_recording_many_cases_name_is_stepped_through_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cassette = ROOT / "examples" / "weather" / "cassettes" / "xiamen.jsonl"
    cases = "".join(f'case "c{n}"\n  cassette "{cassette}"\n  steps <= 5\n' for n in range(4))
    (tmp_path / "s.eval").write_text(cases, encoding="utf-8")
    suite = load_suite(tmp_path / "s.eval")
    report = run_suites([suite])
    alone = [read_timeline(c, suite) for c in suite.cases]
    produced: list[str] = []
    real = timeline_module.produce_run

    def counted(case: Any, suite: Any) -> Any:
        produced.append(case.name)
        return real(case, suite)

    monkeypatch.setattr(timeline_module, "produce_run", counted)
    assert timelines([suite], report) == [alone]
    assert produced == ["c0"]
    # the report's bound on steps (4 each here) cuts the second case's and leaves out the
    # rest, which say so (they had no timeline, as a case without a recording has none)
    monkeypatch.setattr(timeline_module, "REPORT_LIMIT", 6)
    (first, second, third, fourth) = timelines([suite], report)[0]
    assert first == alone[0] and second == read_timeline(suite.cases[1], suite, limit=2)
    assert second is not None and second.truncated
    assert third == fourth == timeline_module.LEFT_OUT == Timeline((), truncated=True)


def test_a_case_past_the_reports_events_says_its_timeline_was_left_out(
    browser: Browser, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cassette = ROOT / "examples" / "weather" / "cassettes" / "xiamen.jsonl"
    cases = "".join(f'case "c{n}"\n  cassette "{cassette}"\n  steps <= 5\n' for n in range(3))
    (tmp_path / "s.eval").write_text(cases, encoding="utf-8")
    suite = load_suite(tmp_path / "s.eval")
    monkeypatch.setattr(timeline_module, "REPORT_LIMIT", 6)
    path = tmp_path / "left-out.html"
    write_html(run_suites([suite]), path, suites=[suite])
    opened = Opened(browser, path)
    page = opened.page
    try:
        notes = {}
        for name in ("c1", "c2"):
            page.locator("#rows .row.case", has_text=name).click()
            page.wait_for_function(
                "n => document.querySelector('#detail h1').textContent === n", arg=name
            )
            notes[name] = page.locator("#detail .note").all_inner_texts()
        assert notes == {
            "c1": ["The recording has more events than the report keeps."],
            "c2": [
                "Left out: the report keeps 6 events in all, and the cases before this one "
                "used them up."
            ],
        }
        assert opened.errors == []
    finally:
        opened.close()


def test_run_writes_the_html_report_and_reports_an_unwritable_path(tmp_path: Path) -> None:
    done = run_evaldsl("run", "examples-failing/failures.eval", "--html", str(tmp_path / "r.html"))
    assert done.returncode == 1  # the failures are on purpose
    data = page_data((tmp_path / "r.html").read_text(encoding="utf-8"))
    assert data["summary"]["cases"] == 4
    to_stdout = run_evaldsl("run", "examples/weather/weather.eval", "--html", "-", "-q")
    assert to_stdout.returncode == 0
    assert page_data(to_stdout.stdout)["summary"]["cases"] == 5
    blocked = tmp_path / "file"
    blocked.write_text("")
    bad = run_evaldsl("run", "examples/weather", "--html", str(blocked / "r.html"))
    assert bad.returncode == 2  # (refused before the run: its folder is a file)
    assert f"--html {blocked / 'r.html'}: {blocked} is a file, not a folder" in bad.stderr


# ---- in a real browser ---------------------------------------------------------------


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not CHROMIUM.exists():
        message = "Debian's chromium is not installed (`make test` installs it as root)"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{message}: CI must test the HTML report in a real browser")
        pytest.skip(message)
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_FLAGS)
        yield launched
        launched.close()


class Opened:
    """A report open in a fresh offline context, with every request it made."""

    def __init__(self, browser: Browser, path: Path, *, bypass_csp: bool = False) -> None:
        self.context = browser.new_context(
            viewport={"width": 1360, "height": 900}, offline=True, bypass_csp=bypass_csp
        )
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.page: Page = self.context.new_page()
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.goto(path.resolve().as_uri())
        try:
            self.page.wait_for_selector("body[data-ready=true]", timeout=20_000)
        except PlaywrightTimeout:
            raise AssertionError(f"the page never got ready; its errors: {self.errors}") from None

    def visible_cases(self) -> list[str]:
        return self.page.locator("#rows .row.case .name").all_inner_texts()

    def close(self) -> None:
        self.context.close()


def wait_shown(page: Page, count: int) -> None:
    """Wait until the list says it shows `count` cases (the search waits a moment)."""
    page.wait_for_function(
        "n => document.querySelector('#shown').textContent.startsWith(`Showing ${n} `)",
        arg=f"{count:,}",
    )


def test_failing_examples_in_the_browser(browser: Browser, tmp_path: Path) -> None:
    report = tmp_path / "failing.html"
    # the failing examples (not the before/after demo of `evaldsl diff` beside them)
    suites = [f"examples-failing/{name}" for name in FAILING_SUITES]
    done = run_evaldsl("run", *suites, "--html", str(report), "--json", str(tmp_path / "r.json"))
    assert done.returncode == 1
    summary = json.loads((tmp_path / "r.json").read_text())["summary"]
    opened = Opened(browser, report)
    page = opened.page
    try:
        # the counts shown: 9 cases, 2 passed, 1 failed, 6 errored (crashes and check errors)
        assert page.inner_text("#card-cases .big") == str(summary["cases"]) == "9"
        tally = page.locator("#card-cases .tally span").all_inner_texts()
        assert tally == ["2 passed", "1 failed", "6 errored", "0 skipped"]
        assert page.inner_text("#card-rate .big") == f"{summary['pass_rate']:.1%}" == "22.2%"
        assert page.inner_text("#card-score .big") == f"{summary['overall_score']:.2f}"
        filters = page.locator("#filters button").all_inner_texts()
        assert [" ".join(f.split()) for f in filters] == [
            "All 9",
            "Failed 1",
            "Errored 6",
            "Skipped 0",
            "Passed 2",
        ]
        assert page.inner_text("#shown") == "Showing 9 of 9 cases"
        assert len(opened.visible_cases()) == 9
        # the first failing case is open, with each failing assertion as the console shows it
        assert page.inner_text("#detail h1") == "wrong expectations"
        failing = page.locator("#detail .a.fail")
        assert failing.count() == 4
        first = failing.first
        assert first.locator(".src .hl").inner_text() == "tool get_weather called 2 times"
        assert first.locator(".src .carets").inner_text() == "^" * 31
        assert first.locator(".found code").inner_text() == "1"
        # an expectation in the language's words as written: a count, a regex (as JSON
        # text it read with its backslash doubled); a value as JSON
        expected = failing.locator(".expected code").all_inner_texts()
        assert expected[:3] == ["exactly 2", '"Beijing"', "/\\d+ F/"]
        assert page.locator("#detail .timeline .t-name").all_inner_texts() == [
            "user",
            "gpt-4o-mini",
            "get_weather",
            "gpt-4o-mini",
        ]
        # the timeline counts the events it shows, not the `steps` metric (LLM requests)
        headings = page.locator("#detail h3").all_text_contents()
        assert "Timeline · 4 events" in headings
        assert "2 steps" in page.locator("#detail .chip").all_inner_texts()
        page.screenshot(path=screenshot_path(tmp_path), full_page=True)

        page.click("#filters button[data-filter=failed]")
        assert opened.visible_cases() == ["wrong expectations"]
        assert page.inner_text("#shown") == "Showing 1 of 9 cases"
        page.click("#filters button[data-filter=error]")
        assert len(opened.visible_cases()) == 6
        page.click("#filters button[data-filter=all]")

        page.fill("#search", "target")
        wait_shown(page, 2)
        assert opened.visible_cases() == ["a target that raises", "a target that never returns"]
        page.fill("#search", "Atlantis")  # found in the crash message, not the name
        wait_shown(page, 1)
        page.click("#rows .row.case")
        assert "no forecast for 'Atlantis'" in page.inner_text("#detail .crash")
        page.fill("#search", "no such words anywhere")
        page.wait_for_selector("#empty:not([hidden])")
        assert opened.visible_cases() == []

        # the suites' check problems are listed, every one
        page.click("#problems summary")
        assert page.locator("#problems-list .diag").count() == 11
        assert opened.requests == [report.resolve().as_uri()]
        assert opened.errors == []
    finally:
        opened.close()


def screenshot_path(tmp_path: Path) -> Path:
    """docs/html-report.png when asked (`make screenshot`), else a throwaway file: the
    picture changes with every run's durations, and a test run leaves the tree clean."""
    if os.environ.get("EVALDSL_UPDATE_SCREENSHOT") == "1":
        return SCREENSHOT
    return tmp_path / "html-report.png"


HOSTILE_SUITE = """\
suite "<script>window.__pwned = 'suite'</script>"
tools get_weather

case "</script><img src=x onerror=\\"window.__pwned = 'case'\\">"
  cassette "hostile.jsonl"
  answer contains "sunny"
  answer judged "is <b>polite</b>" >= 0.5
  tool get_weather called
"""

ANSWER = "<script>window.__pwned = 'answer'</script> 31 C &lt;ok&gt;\u2028next \u202e1$"
REASON = "<img src=x onerror=\"window.__pwned = 'judge'\"> polite enough"


def hostile_events() -> list[dict[str, Any]]:
    at = "2026-11-20T09:00:0{}.000Z".format
    return [
        {"cassette": "traceplay", "version": 1},
        {
            "id": "e1",
            "at": at(0),
            "type": "user.message",
            "content": "<b onmouseover=x>hi\u202e</b>",
        },
        {"id": "e2", "at": at(1), "type": "llm.request", "model": "gpt-4o-mini"},
        {
            "id": "e3",
            "at": at(2),
            "type": "tool.call",
            "name": "get_weather",
            "callId": "c1",
            "arguments": {"city": "</script><script>window.__pwned = 'args'</script>"},
        },
        {
            "id": "e4",
            "at": at(3),
            "type": "tool.result",
            "callId": "c1",
            "output": "<svg onload=x>",
        },
        {
            "id": "e5",
            "at": at(4),
            "type": "llm.response",
            "requestId": "e2",
            "output": ANSWER,
            "usage": {"promptTokens": 10, "completionTokens": 5},
        },
    ]


def test_markup_in_suites_and_runs_shows_as_text_and_never_runs(
    browser: Browser, tmp_path: Path
) -> None:
    (tmp_path / "hostile.jsonl").write_text(
        "\n".join(json.dumps(e) for e in hostile_events()) + "\n", encoding="utf-8"
    )
    (tmp_path / "hostile.eval").write_text(HOSTILE_SUITE, encoding="utf-8")
    with JudgeServer(judged(True, 0.8, REASON)) as server:
        done = run_evaldsl(
            "run",
            "hostile.eval",
            "--html",
            "hostile.html",
            "--judge-cache",
            "cache",
            cwd=tmp_path,
            env={"EVALDSL_JUDGE_API_KEY": "sk-test", "EVALDSL_JUDGE_BASE_URL": server.url},
        )
    assert done.returncode == 1, done.stdout + done.stderr  # `contains "sunny"` fails
    html = (tmp_path / "hostile.html").read_text(encoding="utf-8")
    assert "window.__pwned" not in DATA_BLOCK.sub("", html)  # only ever inside the data
    # the policy would stop an injected script by itself: bypass it, so only escaping counts
    opened = Opened(browser, tmp_path / "hostile.html", bypass_csp=True)
    page = opened.page
    try:
        assert page.evaluate("typeof window.__pwned") == "undefined"
        assert page.evaluate("document.scripts.length") == 2
        assert page.evaluate("document.querySelectorAll('img, svg image').length") == 0
        assert (
            page.evaluate("document.querySelectorAll('[onerror],[onload],[onmouseover]').length")
            == 0
        )
        # ...and every string shows as written
        case_name = "</script><img src=x onerror=\"window.__pwned = 'case'\">"
        assert opened.visible_cases() == [case_name]
        assert page.inner_text("#detail h1") == case_name
        assert (
            page.inner_text("#rows .row.suite .name") == "<script>window.__pwned = 'suite'</script>"
        )
        # (a bidirectional control shows as its escape, as the console shows it: raw, it
        # would show the text around it in another order than it holds)
        found = page.locator("#detail .a.fail .found code").inner_text()
        assert found == json.dumps(ANSWER, ensure_ascii=False).replace("\u202e", "\\u202e")
        judge = page.locator("#detail .a.pass .judge")
        assert judge.locator(".reason").inner_text() == REASON
        assert "judge: score 0.8 ≥ 0.5" in judge.inner_text()
        steps = page.locator("#detail .timeline .t-io").all_inner_texts()
        assert steps[0] == "<b onmouseover=x>hi\\u202e</b>"
        assert (
            '{"city":"</script><script>window.__pwned = \'args\'</script>"} → <svg onload=x>'
            in steps
        )
        # markup typed into the search box is text too
        page.fill("#search", "<script>")
        wait_shown(page, 1)
        assert page.evaluate("typeof window.__pwned") == "undefined"
        assert opened.errors == []
    finally:
        opened.close()


def big_report(cases: int, suites: int) -> Report:
    """`cases` cases over `suites` suites: every 7th fails, every 11th errors, every 13th
    skips; names are unique, so a search can find exactly one."""
    per = cases // suites
    built = []
    for s in range(suites):
        results = []
        for i in range(per):
            n = s * per + i
            status = "fail" if n % 7 == 0 else "skip" if n % 13 == 0 else "pass"
            assertion = AssertionResult(
                text="answer matches /\\d+ C/",
                path=f"suite{s}.eval",
                line=4,
                column=3,
                status=status,  # type: ignore[arg-type]
                message="expected answer matches /\\d+ C/" if status == "fail" else "ok",
                actual="no number here" if status == "fail" else None,
                expected="/\\d+ C/" if status == "fail" else None,
                end_column=26,
                source_line="  answer matches /\\d+ C/",
            )
            error = "run target 'agent:run' timed out after 1s" if n % 11 == 0 else None
            results.append(
                CaseResult(
                    name=f"case number {n:05d}",
                    passed=status != "fail" and error is None,
                    score=0.0 if status == "fail" or error else 1.0,
                    duration_ms=1.0,
                    error=error,
                    metrics=CaseMetrics(latency_ms=12.0, steps=2, input_tokens=100),
                    assertions=() if error else (assertion,),
                )
            )
        built.append(SuiteResult(f"suite {s}", f"suite{s}.eval", tuple(results), float(per)))
    return Report(tuple(built), 1000.0)


def test_ten_thousand_cases_render_only_the_rows_on_screen(
    browser: Browser, tmp_path: Path
) -> None:
    report = big_report(10_000, 5)
    path = tmp_path / "big.html"
    write_html(report, path)
    expected = {"failed": 0, "error": 0, "skipped": 0, "passed": 0}
    for case in report.cases:
        if case.error:
            expected["error"] += 1
        elif not case.passed:
            expected["failed"] += 1
        elif case.assertions[0].status == "skip":
            expected["skipped"] += 1
        else:
            expected["passed"] += 1
    opened = Opened(browser, path)
    page = opened.page
    try:
        assert page.inner_text("#shown") == "Showing 10,000 of 10,000 cases"
        rendered = page.locator("#rows .row").count()
        assert 0 < rendered < 80  # of 10,005 rows (cases and suite headings)
        page.eval_on_selector("#list", "list => { list.scrollTop = list.scrollHeight }")
        page.wait_for_function(
            "() => [...document.querySelectorAll('#rows .row.case .name')]"
            ".some(n => n.textContent === 'case number 09999')"
        )
        assert page.locator("#rows .row").count() < 80
        page.click("#filters button[data-filter=failed]")
        assert page.inner_text("#shown") == f"Showing {expected['failed']:,} of 10,000 cases"
        assert set(
            page.locator("#rows .row.case").evaluate_all("rows => rows.map(r => r.dataset.outcome)")
        ) == {"failed"}
        page.click("#filters button[data-filter=skipped]")
        assert page.inner_text("#shown") == f"Showing {expected['skipped']:,} of 10,000 cases"
        page.click("#filters button[data-filter=all]")
        page.fill("#search", "number 04242")
        wait_shown(page, 1)
        assert opened.visible_cases() == ["case number 04242"]
        page.keyboard.press("Escape")
        page.click("#rows .row.case")
        assert page.inner_text("#detail h1") == "case number 04242"
        assert opened.errors == []
    finally:
        opened.close()


def test_skipped_cases_and_twin_suites_in_the_browser(browser: Browser, tmp_path: Path) -> None:
    def case(name: str, status: str) -> CaseResult:
        a = AssertionResult("answer judged 'polite'", "x.eval", 3, 3, status, "ok")  # type: ignore[arg-type]
        return CaseResult(
            name, status != "fail", 1.0 if status != "fail" else 0.0, 1.0, assertions=(a,)
        )

    # one suite before and after a change (examples-failing/diff/): the labels have the
    # same start and the same end, and differ in their folders
    folder = "examples/a-folder-with-a-long-name"
    one = (case("a", "pass"), case("b", "skip"))
    twins = (
        SuiteResult("support agent", f"{folder}/before/agent.eval", one, 2.0),
        SuiteResult("support agent", f"{folder}/after/agent.eval", (case("c", "fail"),), 1.0),
    )
    path = tmp_path / "skipped.html"
    write_html(Report(twins, 3.0), path)
    opened = Opened(browser, path)
    page = opened.page
    try:
        # the skipped case is in neither side of the pass rate, and says so
        assert page.inner_text("#card-rate .big") == "50.0%"
        assert page.inner_text("#card-rate .sub") == "1 of 2 tested cases passed, 1 skipped"
        labels = page.locator("#chart text.label")
        shown = [labels.nth(i).evaluate("t => t.firstChild.textContent") for i in range(2)]
        assert len(shown[0]) < 40 and "before" in shown[0] and "after" in shown[1], shown
        titles = page.locator("#chart text.label title").all_text_contents()
        assert [
            f"{folder}/{when}/agent.eval" in t
            for t, when in zip(titles, ("before", "after"), strict=True)
        ] == [True] * 2
        values = page.locator("#chart text.value").all_text_contents()
        assert values == ["100% · 1/1", "0% · 0/1"]
        assert page.locator("#rows .row.suite .num").all_inner_texts() == [
            "1/1 passed",
            "0/1 passed",
        ]
        assert opened.errors == []
    finally:
        opened.close()


@pytest.mark.parametrize("cost", [0.0, 0.005, 0.0042, 0.0000876, 1.5e-7, 1e-7, 0.0099, 0.01, 1.5])
def test_a_cost_is_written_as_the_other_reports_write_it(
    browser: Browser, tmp_path: Path, cost: float
) -> None:
    a = AssertionResult("tokens < 10", "x.eval", 3, 3, "pass", "ok")
    case = CaseResult("priced", True, 1.0, 1.0, assertions=(a,), metrics=CaseMetrics(cost=cost))
    path = tmp_path / "cost.html"
    write_html(Report((SuiteResult("s", "x.eval", (case,), 1.0),), 1.0), path)
    opened = Opened(browser, path)
    try:
        # (the console's -v, diff and Markdown write common.money's text)
        assert opened.page.inner_text("#card-tokens .sub") == f"cost {money(cost)}"
        assert opened.errors == []
    finally:
        opened.close()


def test_docstring_examples() -> None:
    result = doctest.testmod(html_module)
    assert (result.failed, result.attempted > 0) == (0, True)


def test_timeline_of_verydia_events_guards_and_errors(tmp_path: Path) -> None:
    events = [
        {"type": "llm.invoke", "model": "m1", "input": "hi", "output": "hello",
         "tokensIn": 3, "tokensOut": 2, "latencyMs": 40, "at": "2026-01-01T00:00:00Z"},
        {"type": "mcp.call", "tool": "crm", "args": {"id": 7}, "result": {"ok": False},
         "isError": True, "at": "2026-01-01T00:00:00.050Z"},
        {"type": "policy.evaluate", "name": "pii", "decision": "allow"},
        {"type": "agent.error", "message": "gave up " + "x" * 300},
    ]  # fmt: skip
    (tmp_path / "run.json").write_text(json.dumps(events), encoding="utf-8")
    (tmp_path / "s.eval").write_text('case "c"\n  cassette "run.json"\n  guards == 1\n')
    suite = load_suite(tmp_path / "s.eval")
    timeline = read_timeline(suite.cases[0], suite)
    assert timeline is not None
    llm, tool, guard, error = timeline.steps
    assert (llm.kind, llm.name, llm.sent, llm.got) == ("llm", "m1", "3 → 2 tokens", "hello")
    assert llm.ms == 40.0
    assert (tool.kind, tool.name, tool.sent, tool.got, tool.error) == (
        "tool", "crm", '{"id":7}', '{"ok":false}', True
    )  # fmt: skip
    assert tool.at_ms == 50.0
    assert (guard.kind, guard.name, guard.got, guard.at_ms) == ("guard", "pii", "allow", None)
    assert error.error and error.got.startswith("gave up x") and len(error.got) == 160


def test_a_timeline_of_ids_that_are_lists_or_objects_links_nothing(tmp_path: Path) -> None:
    # a case that links results to calls makes such an id its error, one that counts
    # calls does not read it; either way the timeline shows the steps unlinked (it raised
    # a TypeError, and the HTML report was never written)
    events = [
        {"type": "llm.request", "id": {"r": 1}, "model": "m1"},
        {"type": "llm.response", "requestId": {"r": 1}, "output": "calling"},
        {"type": "tool.call", "name": "lookup", "callId": {"a": 1}, "id": [1]},
        {"type": "tool.result", "callId": ["a"], "output": "found"},
    ]
    (tmp_path / "run.json").write_text(json.dumps(events), encoding="utf-8")
    (tmp_path / "s.eval").write_text(
        'case "counts"\n  cassette "run.json"\n  tool lookup called\n'
        'case "links"\n  cassette "run.json"\n  tool lookup result == "found"\n'
    )
    suite = load_suite(tmp_path / "s.eval")
    timeline = read_timeline(suite.cases[0], suite)
    assert timeline is not None
    assert [(s.kind, s.name, s.got) for s in timeline.steps] == [
        ("llm", "m1", "calling"),
        ("tool", "lookup", ""),
    ]
    counts, links = run_suites([suite]).cases
    assert counts.passed and links.error is not None and "is an object, not text" in links.error
    assert "lookup" in to_html_text(run_suites([suite]), [suite])


def test_an_interrupted_run_says_so_on_the_page(browser: Browser, tmp_path: Path) -> None:
    passed = CaseResult("a", True, 1.0, 1.0)
    suite = SuiteResult("s", "s.eval", (passed,), 1.0, not_run=("b", "c"))
    report = tmp_path / "r.html"
    write_html(Report((suite,), 1.0, interrupted=True), report)
    opened = Opened(browser, report)
    try:
        page = opened.page
        assert page.inner_text("#card-interrupted .big") == "2"
        assert page.inner_text("#card-interrupted .sub") == (
            "interrupted (Ctrl-C or SIGTERM): 2 cases did not run: s › b, s › c"
        )
        assert page.title().endswith("2 not run (interrupted)")
        assert opened.errors == []
    finally:
        opened.close()
