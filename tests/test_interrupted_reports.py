"""A run Ctrl-C stopped, and a run of no case, as every report shows them: never as a
clean pass. Each report says the run was interrupted and which chosen cases did not run
(JUnit: an error per case not run), and `evaldsl diff` leaves the cases not run out of
the comparison (not "removed") and fails `--fail-on-regression`, which cannot rule out a
regression in them.
"""

from __future__ import annotations

import io
import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from evaldsl.history.diff import diff_command
from evaldsl.reports.html import to_html_text
from evaldsl.reports.junit import to_junit_text
from evaldsl.reports.markdown import to_markdown_text
from evaldsl.runner.core import RunInterrupted, RunOptions, run_suites
from evaldsl.runner.results import CaseResult, Report
from evaldsl.suites.build import load_suite
from evaldsl.suites.model import Suite
from tests.clitools import ROOT, run_evaldsl
from tests.test_html_report import page_data

CASES = "".join(
    f'case "{name}"\n  cassette "xiamen.jsonl"\n  answer contains "sunny"\n\n'
    for name in ("a", "b", "c", "d")
)
NOT_RUN = "not run: the run was interrupted (Ctrl-C or SIGTERM) before this case ran"


@pytest.fixture
def suite(tmp_path: Path) -> Suite:
    """Four passing cases, `a` to `d`, of one recording."""
    shutil.copy(ROOT / "examples" / "weather" / "cassettes" / "xiamen.jsonl", tmp_path)
    (tmp_path / "s.eval").write_text(CASES, encoding="utf-8")
    return load_suite(tmp_path / "s.eval")


def interrupted(suite: Suite) -> Report:
    """The report of a run of the cases but `d` (`-k 'not d'`) that Ctrl-C stopped as
    its first case was done."""

    def stop(_: Suite, __: CaseResult) -> None:
        raise KeyboardInterrupt

    with pytest.raises(RunInterrupted) as stopped:
        run_suites([suite], RunOptions(select="not d"), on_case=stop)
    return stopped.value.report


def test_the_report_names_the_chosen_cases_that_did_not_run(suite: Suite) -> None:
    report = interrupted(suite)
    assert [c.name for c in report.cases] == ["a"]
    assert report.suites[0].not_run == ("b", "c")  # (d was not chosen)
    assert report.not_run == 2
    data = report.to_json()
    assert (data["interrupted"], data["not_run"]) == (True, 2)
    assert data["suites"][0]["not_run"] == ["b", "c"]
    finished = run_suites([suite])
    assert "not_run" not in finished.to_json() and "not_run" not in finished.to_json()["suites"][0]


def test_markdown_says_interrupted_and_lists_the_cases_not_run(suite: Suite) -> None:
    text = to_markdown_text(interrupted(suite))
    headline = text.splitlines()[0]
    assert headline == (
        "## ❌ evaldsl: the 1 cases that ran passed; "
        "interrupted (Ctrl-C or SIGTERM): 2 cases did not run"
    )
    assert "### Not run (interrupted)\n\n- `s › b`\n- `s › c`\n" in text


def test_junit_gives_each_case_not_run_an_error(suite: Suite) -> None:
    root = ET.fromstring(to_junit_text(interrupted(suite)))
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("3", "0", "2")
    cases = root.findall("testsuite/testcase")
    assert [c.get("name") for c in cases] == ["a", "b", "c"]
    for case in cases[1:]:
        error = case.find("error")
        assert error is not None
        assert (error.get("type"), error.get("message")) == ("interrupted", NOT_RUN)
    assert cases[0].find("error") is None


def test_the_html_data_says_interrupted_and_names_the_cases_not_run(suite: Suite) -> None:
    data = page_data(to_html_text(interrupted(suite)))
    summary = data["summary"]
    strings = data["strings"]
    assert summary["interrupted"] == "interrupted (Ctrl-C or SIGTERM): 2 cases did not run"
    assert [[strings[s], strings[c]] for s, c in summary["not_run"]] == [["s", "b"], ["s", "c"]]
    assert page_data(to_html_text(run_suites([suite])))["summary"]["interrupted"] is None


def _diff(*refs: str, fail: bool) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = diff_command(
        list(refs),
        database=None,
        fmt="text",
        fail_on_regression=fail,
        min_change=1e9,
        out=out,
        err=err,
    )
    return code, out.getvalue(), err.getvalue()


def test_diff_leaves_the_cases_not_run_uncompared_and_fails_the_gate(
    suite: Suite, tmp_path: Path
) -> None:
    full, cut = tmp_path / "full.json", tmp_path / "cut.json"
    full.write_text(json.dumps(run_suites([suite]).to_json()))
    cut.write_text(json.dumps(interrupted(suite).to_json()))
    code, out, err = _diff(str(full), str(cut), fail=False)
    assert code == 0, err
    assert "0 removed" in out and "Removed" not in out
    assert (
        f"{cut} was interrupted (Ctrl-C or SIGTERM): the cases it did not run are not compared"
        in out
    )
    assert "not compared: 3 cases only one run selected or ran" in out  # (-k and Ctrl-C)
    code, _, err = _diff(str(full), str(cut), fail=True)
    assert code == 1
    assert "a regression in the cases it did not run cannot be ruled out" in err
    # the other way round: the cases the interrupted run did not reach are not "added"
    code, out, _ = _diff(str(cut), str(full), fail=False)
    assert code == 0 and "0 added" in out


# ---- a run of no case ----------------------------------------------------------------------


def test_a_run_of_no_case_is_no_pass_in_the_markdown(tmp_path: Path) -> None:
    assert not Report(suites=(), duration_ms=0.0).ok
    shutil.copy(ROOT / "examples" / "weather" / "cassettes" / "xiamen.jsonl", tmp_path)
    (tmp_path / "s.eval").write_text(CASES, encoding="utf-8")
    result = run_evaldsl(
        "run", "s.eval", "--no-history", "-k", "nomatch", "--markdown", "r.md", cwd=tmp_path
    )
    assert result.returncode == 1, result.stderr
    assert (tmp_path / "r.md").read_text().startswith("## ❌ evaldsl: no cases ran\n")
