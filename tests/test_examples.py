"""The examples: every suite under examples/ checks clean and passes; each `.eval` file
and its YAML twin give the same cases and verdicts; the examples under
examples-failing/ fail exactly as they mean to."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from evaldsl.runner.core import run_suites
from evaldsl.suites.build import load_suite
from evaldsl.suites.files import discover

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted(discover([ROOT / "examples"])[0])


def test_every_example_kind_is_there() -> None:
    names = {p.relative_to(ROOT / "examples").as_posix() for p in EXAMPLES}
    for folder in ("weather", "research", "triage", "live"):
        stem = {"weather": "weather", "research": "research", "triage": "triage", "live": "live"}[
            folder
        ]
        assert f"{folder}/{stem}.eval" in names and f"{folder}/{stem}.yaml" in names


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_example_checks_clean_and_passes(path: Path) -> None:
    suite = load_suite(path)
    assert not suite.diagnostics, suite.diagnostics
    report = run_suites([suite])
    failing = [
        (c.name, c.error, [a.message for a in c.assertions if a.status in ("fail", "error")])
        for c in report.cases
        if not c.passed
    ]
    assert report.cases and not failing


@pytest.mark.parametrize(
    "stem", ["weather/weather", "research/research", "triage/triage", "live/live"]
)
def test_eval_and_yaml_twins_agree(stem: str) -> None:
    a = run_suites([load_suite(ROOT / "examples" / f"{stem}.eval")])
    b = run_suites([load_suite(ROOT / "examples" / f"{stem}.yaml")])
    assert [c.name for c in a.cases] == [c.name for c in b.cases]
    assert [[x.status for x in c.assertions] for c in a.cases] == [
        [x.status for x in c.assertions] for c in b.cases
    ]


def test_failing_examples_fail_as_documented() -> None:
    report = run_suites([load_suite(ROOT / "examples-failing" / "failures.eval")])
    wrong, corrupted, raises, hangs = report.cases
    assert [a.status for a in wrong.assertions] == ["fail", "fail", "fail", "fail", "pass"]
    assert wrong.score == pytest.approx(0.2)
    assert corrupted.error is not None and "corrupted.jsonl:4:" in corrupted.error
    assert (
        raises.error
        == "run target 'agent_failures:explode' raised ValueError: no forecast for 'Atlantis'"
        " (at explode, examples-failing/agent_failures.py:10)"  # (from the working folder)
    )
    assert hangs.error == "run target 'agent_failures:hang' timed out after 0.2s"
    assert report.summary.passed == 0


def test_mistakes_leave_the_good_case_running() -> None:
    for name in ("mistakes.eval", "mistakes.yaml"):
        suite = load_suite(ROOT / "examples-failing" / name)
        report = run_suites([suite])
        good = [c for c in report.cases if c.passed]
        assert len(good) == 1, name
        assert all(c.error and c.error.startswith("not run") for c in report.cases if not c.passed)


def test_a_cases_check_errors_are_named_and_printed_in_the_readers_order() -> None:
    # the YAML front end finds its fields' errors (lines 7-9) after the text's (line 12)
    path = ROOT / "examples-failing" / "mistakes.yaml"
    typos = next(c for c in load_suite(path).cases if c.name == "field typos")
    assert typos.error is not None
    assert typos.error.startswith("not run: 4 check errors (first: ")
    assert ":7:47: `path` is not a field of `tool.args`)" in typos.error
    done = subprocess.run(
        [sys.executable, "-m", "evaldsl.tools.cli", "convert", str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
        check=False,
    )
    lines = [int(m) for m in re.findall(r"mistakes\.yaml:(\d+):\d+: ", done.stderr)]
    assert lines == sorted(lines) and len(lines) >= 4, done.stderr
