"""Runs of folders and of paths named more than once: a report never overwrites a file the
run reads (a suite found in a folder, a recording, a dataset), a folder walk takes only
suites (never a run's own JSON report or another tool's YAML), a file named twice (or
with its folder) runs once, an empty path is bad usage, and a console whose reader left
(`| head`) still leaves the reports written. Through the real command, in a subprocess.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from evaldsl.suites.files import discover, is_suite_file
from evaldsl.tools.cli import main
from tests.clitools import ROOT, run_evaldsl

WEATHER = ROOT / "examples" / "weather"
TRIAGE = ROOT / "examples" / "triage"

SUITE = """\
suite: demo
cases:
  - name: calls the tool
    cassette: xiamen.jsonl
    expect: tool get_weather called once
"""


def _folder(tmp_path: Path) -> Path:
    """A folder `s` holding a YAML suite and the cassette it reads."""
    folder = tmp_path / "s"
    folder.mkdir()
    shutil.copy(WEATHER / "cassettes" / "xiamen.jsonl", folder)
    (folder / "suite.yaml").write_text(SUITE, encoding="utf-8")
    return folder


# ---- a report path that is a file the run reads --------------------------------------------


@pytest.mark.parametrize("jobs", ["1", "2"])
@pytest.mark.parametrize(
    ("option", "target", "words"),
    [
        ("--json", "suite.yaml", "that is a suite being run"),
        ("--markdown", "xiamen.jsonl", 'that is the cassette case "calls the tool" of'),
    ],
)
def test_a_report_path_the_folder_run_reads_is_refused(
    tmp_path: Path, jobs: str, option: str, target: str, words: str
) -> None:
    folder = _folder(tmp_path)
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    result = run_evaldsl(
        "run",
        "s",
        "--no-history",
        "-j",
        jobs,
        option,
        f"s/{target}",
        "--junit",
        "j.xml",
        cwd=tmp_path,
    )
    assert result.returncode == 2, result.stderr
    assert f"evaldsl: error: {option} s/{target}: {words}" in result.stderr
    assert "name another file" in result.stderr
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    assert not (tmp_path / "j.xml").exists()  # refused before anything ran


def test_a_report_path_that_is_a_recording_not_made_yet_is_refused(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    (folder / "xiamen.jsonl").unlink()  # (the next run would read the report as it)
    result = run_evaldsl("run", "s", "--no-history", "--json", "s/xiamen.jsonl", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert 'that is the cassette case "calls the tool" of' in result.stderr
    assert not (folder / "xiamen.jsonl").exists()


@pytest.mark.parametrize("module", ["agent.py", "pkg/__init__.py"])
def test_a_report_path_that_is_a_run_target_s_module_is_refused(
    tmp_path: Path, module: str
) -> None:
    """The agent's own code: `--json agent.py` wrote the report over it (exit 0)."""
    code = 'def answer(input):\n    return {"answer": f"{input} is 31 C"}\n'
    (tmp_path / module).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / module).write_text(code)
    target = "agent" if module == "agent.py" else "pkg"
    (tmp_path / "s.eval").write_text(
        f'case "live"\n  run {target}:answer\n  input "Xiamen"\n  answer contains "31"\n'
    )
    result = run_evaldsl("run", "s.eval", "--no-history", "--json", module, cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert (
        f'--json {module}: that is the module of the run target {target}:answer of case "live"'
        in result.stderr
    )
    assert (tmp_path / module).read_text() == code
    # another path runs, and the target is found as before
    ran = run_evaldsl("run", "s.eval", "--no-history", "--json", "r.json", cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr


def test_a_report_path_that_is_a_dataset_is_refused(tmp_path: Path) -> None:
    shutil.copytree(TRIAGE, tmp_path / "t")
    before = (tmp_path / "t" / "rows.json").read_bytes()
    result = run_evaldsl("run", "t", "--no-history", "--json", "t/rows.json", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert 'that is the dataset case "triage dataset" of' in result.stderr
    assert (tmp_path / "t" / "rows.json").read_bytes() == before


# ---- a folder walk takes suites only -------------------------------------------------------


CI = "name: CI\non: push\njobs:\n  t:\n    strategy:\n      matrix:\n        cases: [a, b]\n"


def test_a_folder_walk_skips_yaml_and_json_that_are_no_suites(tmp_path: Path) -> None:
    shutil.copytree(WEATHER, tmp_path / "w")
    first = run_evaldsl("run", "w", "--no-history", "-q", "--json", "w/report.json", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    (tmp_path / "w" / "ci.yaml").write_text(CI, encoding="utf-8")
    (tmp_path / "w" / "notes.json").write_text('{"test cases": "cases: a, b"}', encoding="utf-8")
    (tmp_path / "w" / "list.json").write_text('[{"cases": []}]', encoding="utf-8")
    again = run_evaldsl("run", "w", "--no-history", "-q", "--json", "w/report.json", cwd=tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr
    assert json.loads((tmp_path / "w" / "report.json").read_text())["summary"]["cases"] == 10


def test_only_a_top_level_cases_makes_a_yaml_or_json_file_a_suite(tmp_path: Path) -> None:
    texts = {
        "block.yaml": "suite: a\ncases:\n  - name: x\n",
        "flow.yaml": "{suite: a, cases: [{name: x}]}\n",
        "pretty.json": '{\n  "suite": "a",\n  "cases": []\n}\n',
        "comment.json": '# a YAML comment: no JSON, still a suite\n{"cases": []}\n',
        "broken.yaml": "suite: [a\n  cases: x\n",  # (taken: reading it says what is wrong)
        "nested.yaml": CI,
        "nested.json": '{"matrix": {"cases": [1]}}',
        "list.yaml": "- cases: []\n",
        "mention.json": '{"notes": "cases"}',
    }
    for name, text in texts.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    taken = {p.name for p in discover([tmp_path])[0]}
    assert taken == {"block.yaml", "flow.yaml", "pretty.json", "comment.json", "broken.yaml"}
    assert is_suite_file(tmp_path / "flow.yaml") and not is_suite_file(tmp_path / "nested.yaml")


def test_a_suite_whose_cases_key_is_misspelt_is_read_and_says_so(tmp_path: Path) -> None:
    """Found by a tester: a folder run skipped a suite whose `cases:` was written `case:`
    and passed on the others; a top-level key only a suite has makes a file a suite."""
    texts = {
        "typo.yaml": "suite: typo\ncase:\n  - name: a\n",
        "plural.json": '{"Cases": [{"name": "a"}]}',
        "header.yaml": "expect: steps >= 1\ntests: []\n",
        "flow.yaml": "{suite: a, tests: []}\n",
        "other.yaml": "name: x\ntests: [{case: a}]\n",  # (a nested `case:` is no suite's)
        "expected.yaml": "expected: 1\nsuites: [a]\n",
    }
    for name, text in texts.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    taken = {p.name for p in discover([tmp_path])[0]}
    assert taken == {"typo.yaml", "plural.json", "header.yaml", "flow.yaml"}
    ran = run_evaldsl("run", "--no-history", "typo.yaml", cwd=tmp_path)
    assert ran.returncode == 1 and "`case` is not a suite field" in ran.stdout
    assert "did you mean `cases:`?" in ran.stdout


def test_a_json_report_named_directly_is_said_to_be_a_report(tmp_path: Path) -> None:
    shutil.copytree(WEATHER, tmp_path / "w")
    run_evaldsl("run", "w", "--no-history", "-q", "--json", "report.json", cwd=tmp_path)
    result = run_evaldsl("run", "report.json", "--no-history", cwd=tmp_path)
    assert result.returncode == 1
    assert "report.json:1:1: error[E504]: this is an evaldsl run's JSON report" in result.stdout
    assert "evaldsl inspect" not in result.stdout  # (no recording to inspect)


# ---- paths named twice, and empty paths ----------------------------------------------------


def test_a_file_named_twice_or_with_its_folder_runs_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(WEATHER, tmp_path / "w")
    monkeypatch.chdir(tmp_path)
    names = ["w/weather.eval", "w/./weather.eval", "w", "w/weather.yaml"]
    assert discover(names) == ([Path("w/weather.eval"), Path("w/weather.yaml")], [], [])
    ran = run_evaldsl("run", *names, "--no-history", "-q", "--json", "r.json", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert [s["path"] for s in report["suites"]] == ["w/weather.eval", "w/weather.yaml"]
    assert report["summary"]["cases"] == 10
    checked = run_evaldsl("check", "w/weather.eval", "w/weather.eval", cwd=tmp_path)
    assert "1 file checked" in checked.stdout


def test_an_empty_path_is_bad_usage(tmp_path: Path) -> None:
    shutil.copytree(WEATHER, tmp_path / "w")
    for command in (["run", "", "--no-history"], ["check", "w", ""], ["mutate", ""]):
        result = run_evaldsl(*command, cwd=tmp_path)
        assert result.returncode == 2
        assert "no such file or folder: '' (an empty path names nothing" in result.stderr
    report = run_evaldsl("run", "w", "--no-history", "-q", "--json", "", cwd=tmp_path)
    assert report.returncode == 2
    assert "--json '': an empty path names no file" in report.stderr


# ---- a console whose reader left -----------------------------------------------------------


def _closed_stdout(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The command with a standard output whose reader already left (`| head` done)."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run(
            [sys.executable, "-m", "evaldsl.tools.cli", *args],
            cwd=cwd,
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(ROOT)},
            timeout=120,
        )
    finally:
        os.close(write)


@pytest.mark.parametrize("failing", [False, True])
def test_a_closed_console_still_writes_the_reports(tmp_path: Path, failing: bool) -> None:
    shutil.copytree(WEATHER, tmp_path / "w")
    if failing:
        suite = tmp_path / "w" / "weather.eval"
        suite.write_text(suite.read_text().replace("called once", "called twice", 1))
    reports = ["--junit", "p.xml", "--json", "p.json"]
    result = _closed_stdout("run", "w", "--no-history", "-v", *reports, cwd=tmp_path)
    assert result.returncode == (1 if failing else 0), result.stderr
    assert result.stderr == ""  # no traceback, no "Exception ignored"
    assert json.loads((tmp_path / "p.json").read_text())["summary"]["cases"] == 10
    assert (tmp_path / "p.xml").read_text().rstrip().endswith("</testsuites>")


def test_a_report_to_a_closed_stdout_is_a_report_not_written(tmp_path: Path) -> None:
    shutil.copytree(WEATHER, tmp_path / "w")
    result = _closed_stdout(
        "run", "w", "--no-history", "-q", "--json", "-", "--junit", "p.xml", cwd=tmp_path
    )
    assert result.returncode == 2
    said = "evaldsl: error: cannot write the --json report to standard output (-): its reader"
    assert said in result.stderr and "Traceback" not in result.stderr
    assert "Exception ignored" not in result.stderr
    assert (tmp_path / "p.xml").read_text().rstrip().endswith("</testsuites>")


def test_a_linked_folder_is_walked_and_an_unreadable_one_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # `Path.rglob` passed by a linked folder and a folder it could not read, silently:
    # "no suite files found", or a run of the other suites only, and exit 0
    shutil.copytree(WEATHER, tmp_path / "shared" / "weather")
    (tmp_path / "suites").mkdir()
    (tmp_path / "suites" / "weather").symlink_to(tmp_path / "shared" / "weather")
    (tmp_path / "suites" / "loop").symlink_to(tmp_path / "suites")  # (walked once)
    found = discover([tmp_path / "suites"])
    assert [p.name for p in found[0]] == ["weather.eval", "weather.yaml"] and found[1:] == ([], [])
    ran = run_evaldsl("run", "suites", "--no-history", "-q", cwd=tmp_path)
    assert ran.returncode == 0 and "10 passed" in ran.stdout, ran.stdout + ran.stderr
    formatted = run_evaldsl("fmt", "--check", "suites", cwd=tmp_path)
    assert formatted.returncode == 0 and "no .eval files" not in formatted.stderr

    real_scandir = os.scandir

    def refused(path: object) -> object:
        if str(path).endswith("weather"):
            raise PermissionError(13, "Permission denied")
        return real_scandir(path)  # type: ignore[call-overload]

    monkeypatch.setattr(os, "scandir", refused)
    said = f'cannot read folder "{tmp_path}/suites/weather": Permission denied'
    assert discover([tmp_path / "suites"]) == ([], [], [said])
    capsys.readouterr()
    assert main(["run", str(tmp_path / "suites"), "--no-history"]) == 2  # (never exit 0)
    assert f"evaldsl: error: {said}" in capsys.readouterr().err


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_dry_run_says_which_cases_would_run_as_errors(tmp_path: Path, jobs: str) -> None:
    # "2 cases in 1 suite would run" of a suite one of whose cases has check errors: it
    # runs as an error, never its assertions
    shutil.copy(WEATHER / "cassettes" / "xiamen.jsonl", tmp_path)
    (tmp_path / "s.eval").write_text(
        'case "a"\n  cassette "xiamen.jsonl"\n  tool get_weathr calld\n'
        'case "b"\n  cassette "xiamen.jsonl"\n  tool get_weather called\n',
        "utf-8",
    )
    done = run_evaldsl("run", "s.eval", "--dry-run", "-j", jobs, cwd=tmp_path)
    assert done.returncode == 1
    said = "2 cases in 1 suite would run, 1 of them as an error (the check errors above)"
    assert said in done.stdout, done.stdout


def test_a_suite_file_named_with_a_line_break_keeps_its_case_error_on_one_line(
    tmp_path: Path,
) -> None:
    # "not run: 1 check error (first: a<LF>b.eval:2:3: …)" broke the console's line, and
    # the JUnit and JSON reports' error text, in two
    (tmp_path / "a\nb.eval").write_text('case "c"\n  cassette "nope.jsonl"\n  steps > 0\n')
    done = run_evaldsl("run", ".", "--no-history", "--json", "r.json", cwd=tmp_path)
    [line] = [x for x in done.stdout.splitlines() if "not run: 1 check error" in x]
    assert 'first: a\\nb.eval:2:3: file not found: "nope.jsonl"' in line, line
    [case] = json.loads((tmp_path / "r.json").read_text("utf-8"))["suites"][0]["cases"]
    assert "\n" not in case["error"]
