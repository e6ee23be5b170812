"""`evaldsl diff`: the changes between two runs of the demo agent (examples-failing/diff/)
are exactly one regression, one fix, one assertion added, one removed and the forecast's
metric deltas, in text, JSON and Markdown, whether the runs come from the history or from
`--json` report files; bad run names and report files get clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evaldsl.history.snapshots import REPORT_VERSION, SnapshotError, load_report_file
from evaldsl.runner import run_suites
from evaldsl.suites import load_suite
from tests.clitools import ROOT, run_evaldsl
from tests.historytools import DEMO, checkout, read_json, run_in, without_durations


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo agent run before, then after, its change: runs 1 and 2 of its history,
    with `before.json` and `after.json` reports."""
    where = tmp_path_factory.mktemp("diff") / "project"
    checkout(where, "before")
    run_in(where, "run", "agent.eval", "--json", "before.json")
    checkout(where, "after")
    run_in(where, "run", "agent.eval", "--json", "after.json")
    return where


def diff_json(project: Path, *args: str) -> dict:
    result = run_in(project, "diff", *args, "--format", "json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


EXPECTED = {
    "regressions": [("forecast", 'answer contains "umbrella"', "pass", "fail")],
    "fixes": [("lookup", "answer matches /\\d+ results/", "fail", "pass")],
    "changed": [],
    "added": [("lookup", "steps <= 3", None, "pass")],
    "removed": [("lookup", 'answer contains "sorry"', "pass", None)],
}


def _changes(data: dict, kind: str) -> list[tuple]:
    return [
        (
            c["case"],
            c["assertion"],
            c["before"]["status"] if c["before"] else None,
            c["after"]["status"] if c["after"] else None,
        )
        for c in data[kind]
    ]


def test_the_committed_demo_reports_are_what_the_demo_runs_give(project: Path) -> None:
    # the README shows `evaldsl diff` of these two files: they must be real, current runs
    for name in ("before.json", "after.json"):
        assert without_durations(read_json(project / name)) == without_durations(
            read_json(DEMO / name)
        )


def test_the_last_two_runs_by_default_in_json(project: Path) -> None:
    data = diff_json(project)
    for kind, expected in EXPECTED.items():
        assert _changes(data, kind) == expected, kind
    assert data["summary"] == {
        "regression": 1,
        "fix": 1,
        "changed": 0,
        "added": 1,
        "removed": 1,
        "metric_changes": 3,
    }
    metrics = {(m["case"], m["metric"]): (m["before"], m["after"]) for m in data["metrics"]}
    assert metrics[("forecast", "tokens")] == (340, 380)
    assert metrics[("forecast", "latency_ms")] == pytest.approx((1700.0, 2100.0))
    assert set(metrics) == {
        ("forecast", "tokens"),
        ("forecast", "latency_ms"),
        ("forecast", "cost"),
    }
    tokens = next(m for m in data["metrics"] if m["metric"] == "tokens")
    assert tokens["change"] == pytest.approx(40 / 340, abs=1e-6)
    regression = data["regressions"][0]
    assert regression["after"]["found"] == "Rain in Tokyo today, 12 C: wear a coat."
    assert regression["after"]["line"] == 10
    assert (data["before"]["run_id"], data["after"]["run_id"]) == (1, 2)
    assert data["before"]["score"] == pytest.approx(0.833333)


def test_respelled_assertions_are_the_same_assertion(project: Path) -> None:
    # after/agent.eval writes two assertions differently (spaces, quotes): not added/removed
    data = diff_json(project, "1", "2")
    touched = {c["assertion"] for kind in EXPECTED for c in data[kind]}
    assert "tool get_weather called once" not in touched
    assert 'tool get_weather args $.city == "Tokyo"' not in touched


def test_report_files_and_history_runs_give_the_same_diff(project: Path) -> None:
    from_history = diff_json(project, "last~1", "last")
    from_files = diff_json(project, "before.json", "after.json")
    for data in (from_history, from_files):
        del data["before"], data["after"]
    assert from_history == from_files
    mixed = diff_json(project, "1", "after.json")
    assert mixed["summary"] == from_files["summary"]


def test_text_output(project: Path) -> None:
    result = run_in(project, "diff")
    assert result.returncode == 0
    text = result.stdout
    assert text.startswith("run 1 (")
    assert "→ run 2 (" in text.splitlines()[0]
    assert "1 regression, 1 fix, 0 other changes, 1 added, 1 removed, 3 metric changes" in text
    assert (
        "regressions (passed before; fail or error now):\n"
        '  agent.eval :: forecast :: answer contains "umbrella"\n'
        '    pass → fail: expected answer contains "umbrella"'
    ) in text
    assert "added assertions:\n  agent.eval :: lookup :: steps <= 3\n    pass: steps <= 3" in text
    assert 'removed assertions:\n  agent.eval :: lookup :: answer contains "sorry"\n' in text
    assert "tokens 340 → 380 (+11.8%); latency 1.70s → 2.10s (+23.5%)" in text


def test_markdown_output(project: Path) -> None:
    result = run_in(project, "diff", "--format", "markdown")
    md = result.stdout
    assert md.startswith("## ❌ evaldsl diff: run 1 (")
    for heading in (
        "### ❌ Regressions",
        "### ✅ Fixes",
        "### ➕ Added",
        "### ➖ Removed",
        "### Metrics",
    ):
        assert heading in md
    assert '| `agent.eval` | forecast | `answer contains "umbrella"` | pass | fail |' in md
    assert "| `agent.eval` | lookup | `steps <= 3` | — | pass | steps &lt;= 3 |" in md
    assert "| `agent.eval` | forecast | tokens | 340 | 380 | +11.8% |" in md
    assert "### Other status changes" not in md  # no empty sections


def test_the_markdown_heading_is_no_tick_when_the_score_fell(tmp_path: Path) -> None:
    # every assertion rewritten, all failing now: nothing regressed (no assertion is the
    # same), and the heading said ✅ over a score that went from 0.5 to 0
    project = checkout(tmp_path / "p", "before")
    suite = project / "s.eval"
    case = 'case "forecast"\n  cassette "cassettes/forecast.jsonl"\n'
    suite.write_text(case + '  answer contains "umbrella"\n  tokens <= 1\n')
    run_in(project, "run", "s.eval")
    suite.write_text(case + '  answer contains "zzz"\n  steps <= 0\n')
    run_in(project, "run", "s.eval")
    data = diff_json(project)
    assert data["regressions"] == []
    md = run_in(project, "diff", "--format", "markdown").stdout
    assert md.startswith("## ⚠️ evaldsl diff: run 1 ("), md
    assert "score 0.500 → 0.000" in md
    same = run_in(project, "diff", "last", "last", "--format", "markdown").stdout
    assert same.startswith("## ✅ evaldsl diff:"), same


def test_fail_on_regression(project: Path) -> None:
    assert run_in(project, "diff", "--fail-on-regression").returncode == 1
    assert run_in(project, "diff").returncode == 0
    same = run_in(project, "diff", "2", "2", "--fail-on-regression")
    assert same.returncode == 0
    assert "no changes: every assertion has the same status and no metric moved" in same.stdout
    # backwards, the fix is a regression and the regression a fix
    back = diff_json(project, "2", "1")
    assert _changes(back, "regressions") == [
        ("lookup", "answer matches /\\d+ results/", "pass", "fail")
    ]


def test_min_change_hides_small_metric_moves(project: Path) -> None:
    data = diff_json(project, "--min-change", "15")
    assert [m["metric"] for m in data["metrics"]] == ["latency_ms"]  # +23.5%; tokens +11.8%


@pytest.mark.parametrize("pct", ["nan", "inf", "1e400", "-5", "ten"])
def test_a_min_change_that_is_no_percentage_is_bad_usage(project: Path, pct: str) -> None:
    """Found by a hunt: `--min-change nan` was taken, and since no move is at least NaN it
    hid every metric change ("0 metric changes") without a word."""
    r = run_in(project, "diff", "--min-change", pct)
    assert r.returncode == 2
    assert f"--min-change takes a percentage ≥ 0, not {pct}" in r.stderr
    assert r.stdout == ""


def test_a_crashed_case_regresses_every_assertion_that_passed(tmp_path: Path) -> None:
    project = checkout(tmp_path / "p", "before")
    run_in(project, "run", "agent.eval")
    (project / "cassettes" / "forecast.jsonl").write_text('{"cassette": "traceplay"}\nnot json\n')
    run_in(project, "run", "agent.eval")
    data = diff_json(project)
    regressed = _changes(data, "regressions")
    assert [r[1] for r in regressed] == [
        "tool get_weather called once",
        'tool get_weather args $.city == "Tokyo"',
        'answer contains "umbrella"',
        "tokens <= 500",
    ]
    assert all(r[3] == "error" for r in regressed)
    assert data["regressions"][0]["after"]["message"].startswith("not run: 1 check error")
    assert data["added"] == data["removed"] == []


def test_a_case_not_run_for_its_check_errors_says_so_once(tmp_path: Path) -> None:
    project = checkout(tmp_path / "p", "before")
    run_in(project, "run", "agent.eval")
    suite = project / "agent.eval"
    suite.write_text(suite.read_text().replace("tokens <= 500", "tokens <= 500\n  tool nope caled"))
    run_in(project, "run", "agent.eval")
    data = diff_json(project)
    message = data["regressions"][0]["after"]["message"]
    # was "the case did not run: not run: 1 check error"
    assert message.startswith("not run: ") and "not run: not run" not in message, message
    assert "did not run: not run" not in run_in(project, "diff").stdout


def test_suites_and_cases_one_run_left_out_are_not_compared(tmp_path: Path) -> None:
    db = str(tmp_path / "h.sqlite")
    run_evaldsl("run", "examples/weather", "examples/research", "--history", db)
    run_evaldsl("run", "examples/weather", "--history", db)
    data = json.loads(run_evaldsl("diff", "--history", db, "--format", "json").stdout)
    assert data["summary"]["removed"] == 0
    assert data["suites_only_before"] == [
        "examples/research/research.eval",
        "examples/research/research.yaml",
    ]
    # the score line covers the shared suites only, and says so
    line = run_evaldsl("diff", "--history", db).stdout.splitlines()[1]
    assert "(over the 2 suites both runs ran, not the 2 suites only in run 1);" in line, line
    run_evaldsl("run", "examples/weather", "-k", "Tokyo", "--history", db)
    data = json.loads(run_evaldsl("diff", "--history", db, "--format", "json").stdout)
    assert data["summary"]["removed"] == 0 and data["cases_not_compared"] > 0
    text = run_evaldsl("diff", "--history", db).stdout
    assert "-k 'Tokyo'" in text.splitlines()[0]
    assert "only one run selected" in text


def test_json_reports_record_the_selection_and_diff_reads_it(tmp_path: Path) -> None:
    # the cases -k left out were listed as removed between two --json reports (the
    # history's same runs said "not compared")
    every, some = str(tmp_path / "every.json"), str(tmp_path / "some.json")
    run_evaldsl("run", "examples/weather", "--no-history", "--json", every)
    run_evaldsl("run", "examples/weather", "-k", "Tokyo", "--no-history", "--json", some)
    assert "selection" not in read_json(Path(every))
    assert read_json(Path(some))["selection"] == "Tokyo"
    data = json.loads(run_evaldsl("diff", every, some, "--format", "json").stdout)
    assert data["summary"]["removed"] == 0 and data["cases_not_compared"] > 0
    text = run_evaldsl("diff", every, some).stdout
    assert "-k 'Tokyo'" in text.splitlines()[0] and "only one run selected" in text
    # a selection that is not text is a clear error naming the field
    bad = read_json(Path(some))
    bad["selection"] = 3
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    refused = run_evaldsl("diff", every, str(tmp_path / "bad.json"))
    assert refused.returncode == 2
    assert "bad.json: not a valid JSON report: selection: not text" in refused.stderr


@pytest.mark.parametrize("score", [2**70, -0.5, 1.5])
def test_a_case_score_outside_0_to_1_is_no_report(tmp_path: Path, score: float) -> None:
    """A report edited or written by hand: its case's score was averaged into the run's
    (`score 0.533 → 78706108047827419136.000`, "no changes")."""
    good = str(tmp_path / "good.json")
    run_evaldsl("run", "examples/weather", "--no-history", "--json", good)
    bad = read_json(Path(good))
    bad["suites"][0]["cases"][0]["score"] = score
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    refused = run_evaldsl("diff", good, str(tmp_path / "bad.json"))
    assert (refused.returncode, refused.stdout) == (2, ""), refused.stderr
    said = f"suites[0].cases[0].score: {json.dumps(score)} is not a score from 0 to 1"
    assert f"bad.json: not a valid JSON report: {said}" in refused.stderr


@pytest.mark.parametrize(
    ("field", "value", "said"),
    [
        # each was not read, or read as missing, and `diff` said "no changes"
        ("outcome", "weird", 'outcome: "weird" is not an outcome (passed, failed, error'),
        ("outcome", "failed", 'outcome: "failed", but the case\'s passed, error and assertions'),
        ("duration_ms", 1e999, "duration_ms: a number too large for a report"),
        ("duration_ms", "fast", 'duration_ms: "fast" is not a number'),
        ("duration_ms", -3, "duration_ms: -3 is not a time"),
        ("location", "agent.eval:3", "assertions[0].location: not an object"),
        ("line", "3", 'assertions[0].location.line: "3" is not a line number'),
        ("message", ["no"], "assertions[0].message: not text or null"),
    ],
)
def test_a_case_field_of_the_wrong_kind_is_no_report(
    tmp_path: Path, field: str, value: object, said: str
) -> None:
    good = str(tmp_path / "good.json")
    run_evaldsl("run", "examples/weather", "--no-history", "--json", good)
    bad = read_json(Path(good))
    case = bad["suites"][0]["cases"][0]
    assert case["outcome"] == "passed"
    if field in ("location", "message"):
        case["assertions"][0][field] = value
    elif field == "line":
        case["assertions"][0]["location"]["line"] = value
    else:
        case[field] = value
    # (`1e999` as JSON writes it: Python's `json.dumps` would write `Infinity`)
    (tmp_path / "bad.json").write_text(json.dumps(bad).replace("Infinity", "1e999"))
    refused = run_evaldsl("diff", good, str(tmp_path / "bad.json"))
    assert (refused.returncode, refused.stdout) == (2, ""), refused.stderr
    assert f"bad.json: not a valid JSON report: suites[0].cases[0].{said}" in refused.stderr


def test_runs_that_share_no_suite_are_nothing_to_compare(tmp_path: Path) -> None:
    a, b = str(tmp_path / "a.json"), str(tmp_path / "b.json")
    run_evaldsl("run", "examples/weather", "--no-history", "--json", a)
    run_evaldsl("run", "examples/research", "--no-history", "--json", b)
    result = run_evaldsl("diff", a, b, "--fail-on-regression")
    assert result.returncode == 2 and result.stdout == ""
    assert "nothing to compare: the runs share no suite" in result.stderr
    assert "b.json ran examples/research/research.eval" in result.stderr


# ---- bad inputs --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["99"], "no run 99 in .evaldsl/history.sqlite (it holds 2 runs; the last is run 2)"),
        (["last~5", "last"], "no run last~5 in"),
        # numbers past SQLite's largest integer, and past the digits Python converts
        (["99999999999999999999999"], "no run 99999999999999999999999 in"),
        (["last~99999999999999999999999"], "no run last~99999999999999999999999 in"),
        (["9" * 5000], "(it holds 2 runs; the last is run 2)"),
        (["²"], "'²' is not a run"),
        (
            ["banana"],
            "'banana' is not a run: give a run id, `last`, `last~N`, or a JSON report file",
        ),
        (["1", "2", "3"], "diff compares two runs"),
        (["missing.json", "1"], "missing.json: no such report file"),
        (["cassettes/forecast.jsonl", "1"], "forecast.jsonl:2:1: not a JSON report (invalid JSON"),
    ],
)
def test_bad_run_names_are_clear_errors(project: Path, args: list[str], message: str) -> None:
    result = run_in(project, "diff", *args)
    assert result.returncode == 2
    assert message in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


def test_a_report_of_another_version_is_refused(tmp_path: Path, project: Path) -> None:
    report = read_json(project / "after.json")
    report["version"] = REPORT_VERSION + 1
    other = tmp_path / "future.json"
    other.write_text(json.dumps(report))
    result = run_evaldsl("diff", str(project / "before.json"), str(other))
    assert result.returncode == 2
    assert f"a JSON report of version {REPORT_VERSION + 1}; this evaldsl reads version 1" in (
        result.stderr
    )


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"cases": []}', 'not an evaldsl JSON report (expected an object with "version"'),
        ("[1, 2]", "not an evaldsl JSON report"),
        ('{"version": 1, "suites": [{"name": "x"}]}', "suites[0].path: missing or not text"),
        (
            '{"version": 1, "suites": [{"name": "x", "path": "a", "diagnostics": [],'
            ' "cases": [{"name": "c", "passed": true, "score": 1, "assertions":'
            ' [{"text": "steps < 2", "status": "maybe"}]}]}]}',
            'cases[0].assertions[0].status: "maybe" is not a verdict status',
        ),
        ("{not json", "not a JSON report (invalid JSON"),
        ('{"version": 1, "n": ' + "9" * 5000 + "}", "a number of too many digits"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        (
            '{"version": 1, "suites": [{"name": "x", "path": "a", "diagnostics": [],'
            ' "cases": [{"name": "c", "passed": true, "score": 1, "assertions": [],'
            ' "metrics": {"input_tokens": 1' + "0" * 400 + "}}]}]}",
            "cases[0].metrics.input_tokens: a number too large for a report",
        ),
        (
            '{"version": 1, "suites": [{"name": "x", "path": "a", "diagnostics": [],'
            ' "cases": [{"name": "c", "passed": true, "score": 1' + "0" * 400 + ","
            ' "assertions": []}]}]}',
            "cases[0].score: a number too large for a report",
        ),
        # a metric of another shape was read as not measured: `"input_tokens": "many"`
        # beside output tokens 41 made `tokens 461 → 41 (-91.1%)`
        (
            '{"version": 1, "suites": [{"name": "x", "path": "a", "diagnostics": [],'
            ' "cases": [{"name": "c", "passed": true, "score": 1, "assertions": [],'
            ' "metrics": {"input_tokens": "many", "output_tokens": 41}}]}]}',
            'cases[0].metrics.input_tokens: "many" is not a number',
        ),
        (
            '{"version": 1, "suites": [{"name": "x", "path": "a", "diagnostics": [],'
            ' "cases": [{"name": "c", "passed": true, "score": 1, "assertions": [],'
            ' "metrics": {"cost": true}}]}]}',
            "cases[0].metrics.cost: true is not a number",
        ),
        # and a crash of another shape as no crash: a regression (pass → error) was said
        # to be an assertion removed, and `--fail-on-regression` passed
        (
            '{"version": 1, "suites": [{"name": "x", "path": "a", "diagnostics": [],'
            ' "cases": [{"name": "c", "passed": false, "score": 0, "assertions": [],'
            ' "error": {"message": "boom"}}]}]}',
            "cases[0].error: not text or null (why the case's run crashed)",
        ),
        # found by a hunt: a hand-edited NaN score was read, and `diff` said
        # `score 1.000 → nan` and `no changes`; no report evaldsl writes holds one
        (
            '{"version": 1, "suites": [{"name": "x", "path": "a", "diagnostics": [],'
            ' "cases": [{"name": "c", "passed": true, "score": NaN, "assertions": []}]}]}',
            "not a JSON report (`NaN`, which JSON has no literal for",
        ),
        (
            '{"version": 1, "suites": [{"name": "x", "path": "a", "diagnostics": [],'
            ' "cases": [{"name": "c", "passed": true, "score": 1, "assertions": [],'
            ' "metrics": {"cost": -Infinity}}]}]}',
            "not a JSON report (`-Infinity`, which JSON has no literal for",
        ),
    ],
)
def test_files_that_are_not_reports_are_refused(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "x.json"
    path.write_text(content)
    with pytest.raises(SnapshotError, match=r"x\.json") as caught:
        load_report_file(path)
    assert message in str(caught.value)


def test_no_history_or_too_few_runs(tmp_path: Path) -> None:
    result = run_evaldsl("diff", cwd=tmp_path)
    assert result.returncode == 2 and "no history at .evaldsl/history.sqlite" in result.stderr
    project = checkout(tmp_path / "p", "before")
    run_in(project, "run", "agent.eval")
    one = run_in(project, "diff")
    assert one.returncode == 2
    assert "diff needs two runs and .evaldsl/history.sqlite holds 1" in one.stderr


def test_report_version_is_the_one_the_runner_writes() -> None:
    report = run_suites([load_suite(ROOT / "examples" / "research" / "research.eval")])
    assert report.to_json()["version"] == REPORT_VERSION
