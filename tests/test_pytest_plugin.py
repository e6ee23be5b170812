"""The pytest plugin, run by pytest itself through its `pytester` fixture: off unless asked
for; one item per case and per `each` row; failures with the console's report; a case's
check errors as its failure, the file's as a collection error; skips with their reason;
`-k`, `--lf`, markers, xdist and pytest's JUnit XML; the judge options; and
`evaldsl.expect` inside ordinary tests."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

# pytester's in-process runs forget the modules first imported inside them, and PyYAML's
# C loader keeps the node classes of its first import: the YAML front end is loaded here,
# once, so every inner run sees the same classes.
import evaldsl
import evaldsl.suites.yamlfile
from evaldsl.runner import core, readings
from evaldsl.runs import passes
from tests.hostile.processes import survivors
from tests.judge_server import JudgeServer, Recorded, Reply, judged

# Lark's too: text with an error is parsed again by Lark's own parser, made once and
# kept, and imported at that first error; made inside an inner run, its errors would be
# classes of a forgotten `lark`, which a later `except` of the outer session misses.
with contextlib.suppress(evaldsl.EvalDslError):
    evaldsl.compile("tool x caled")

ROOT = Path(__file__).resolve().parents[1]
CASSETTES = ROOT / "examples" / "weather" / "cassettes"

WEATHER = """\
suite "weather"
tools get_weather

case "answers with the forecast"
  cassette "xiamen.jsonl"
  tool get_weather called once
  answer matches /\\d+ C/

case "wrong expectations"
  cassette "xiamen.jsonl"
  tool get_weather called 2 times
  answer contains "sunny"

case "each city"
  cassette "{{file}}"
  each [{file: "xiamen.jsonl", city: "Xiamen"}, {file: "tokyo-stream.jsonl", city: "Tokyo"}]
  tool get_weather args $.city == "{{city}}"
"""

JUDGED = """\
case "judged only"
  cassette "xiamen.jsonl"
  answer judged "mentions the temperature"
"""

BROKEN = """\
tools get_weather

case "typos"
  cassette "xiamen.jsonl"
  tool get_weather caled once
  latency < 2
"""

YAML_SUITE = """\
suite: yaml weather
cases:
  - name: yaml case
    cassette: xiamen.jsonl
    expect: tool get_weather called once
"""


# pytest-asyncio, installed here, warns in every inner session that does not set this
INI = "[pytest]\nasyncio_default_fixture_loop_scope = function\n"


def lit(text: str) -> str:
    """`text` as an fnmatch pattern matching itself (brackets are character classes)."""
    return re.sub(r"[\[\]]", lambda m: f"[{m.group()}]", text)


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    """A folder with the weather cassettes and a suite with passing and failing cases."""
    for name in ("EVALDSL_JUDGE_API_KEY", "EVALDSL_JUDGE_BASE_URL", "EVALDSL_JUDGE_MODEL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)
    for cassette in CASSETTES.glob("*.jsonl"):
        shutil.copy(cassette, pytester.path / cassette.name)
    pytester.makefile(".eval", weather=WEATHER)
    pytester.makeini(INI)
    return pytester


def test_off_unless_asked_for(project: pytest.Pytester) -> None:
    result = project.runpytest()
    assert result.ret == pytest.ExitCode.NO_TESTS_COLLECTED
    result.assert_outcomes()
    # the options are there all the same, so `addopts` can name them
    help_text = project.runpytest("--help").stdout.str()
    assert "--evaldsl-judge={live,frozen,off}" in help_text
    assert "--evaldsl-judge-cache=DIR" in help_text


def test_dash_p_collects_one_item_per_case_and_each_row(project: pytest.Pytester) -> None:
    result = project.runpytest("-p", "evaldsl", "--collect-only", "-q")
    result.stdout.fnmatch_lines(
        [
            "weather.eval::answers with the forecast",
            "weather.eval::wrong expectations",
            "weather.eval::each city #1 [[]file=xiamen.jsonl, city=Xiamen[]]",
            "weather.eval::each city #2 [[]file=tokyo-stream.jsonl, city=Tokyo[]]",
        ]
    )


def test_a_failing_case_shows_the_console_report(project: pytest.Pytester) -> None:
    result = project.runpytest("-p", "evaldsl")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*_ weather › wrong expectations _*",
            "1 of 2 assertions failed (score 0.50)",
            'weather.eval:11:3: fail: tool "get_weather" called 1 time, expected exactly 2',
            "   |",
            "11 |   tool get_weather called 2 times",
            "   |   ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
            "   = found: 1",
            "   = expected: exactly 2",
            "FAILED weather.eval::wrong expectations - 1 of 2 assertions failed (score 0.50)",
        ]
    )
    # the passing assertion of the failing case is not reported
    assert 'answer contains "sunny"' not in result.stdout.str()


def test_cases_on_one_recording_read_it_once(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    read: list[str] = []

    def counted(run: Any, needs: Any) -> Any:
        read.append(Path(run.path).name)
        return passes.index_run(run, needs)

    monkeypatch.setattr(readings, "index_run", counted)
    monkeypatch.setattr(core, "index_run", counted)
    result = project.runpytest("-p", "evaldsl")
    result.assert_outcomes(passed=3, failed=1)
    # three cases on xiamen.jsonl read it once; the Tokyo row reads its own
    assert sorted(read) == ["tokyo-stream.jsonl", "xiamen.jsonl"]


def test_ini_switch_and_yaml_globs(project: pytest.Pytester) -> None:
    suites = project.mkdir("suites")
    (suites / "weather.yaml").write_text(YAML_SUITE.replace("xiamen", "../xiamen"))
    (project.path / "other.yaml").write_text(YAML_SUITE)  # not matched by the glob
    project.makeini(INI + "evaldsl_suites = suites/*.yaml\n")
    result = project.runpytest("--collect-only", "-q")
    lines = result.stdout.str()
    assert "suites/weather.yaml::yaml case" in lines
    assert "other.yaml" not in lines
    assert "weather.eval::answers with the forecast" in lines  # the glob turns it on

    project.makeini(INI + "evaldsl = true\n")
    result = project.runpytest("--collect-only", "-q")
    assert "weather.eval::answers with the forecast" in result.stdout.str()
    assert "yaml case" not in result.stdout.str()
    # a YAML suite named on the command line is collected without a glob
    named = project.runpytest("other.yaml")
    named.assert_outcomes(passed=1)


def test_a_yaml_glob_names_suites_in_a_linked_folder(project: pytest.Pytester) -> None:
    # `suites` a symbolic link to suites kept elsewhere: the glob was matched against the
    # resolved path, outside the rootdir, so they were not collected, and nothing said so
    shared = project.path.parent / f"{project.path.name}-shared"
    shared.mkdir()
    (shared / "weather.yaml").write_text(YAML_SUITE)
    shutil.copy(CASSETTES / "xiamen.jsonl", shared)
    (project.path / "suites").symlink_to(shared, target_is_directory=True)
    project.makeini(INI + "evaldsl_suites = suites/*.yaml\n")
    result = project.runpytest("suites", "-v")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["suites/weather.yaml::yaml case PASSED*"])


def test_a_case_with_check_errors_fails_alone_and_the_others_run(
    project: pytest.Pytester,
) -> None:
    # one case's check errors (a typo, a bad regex, a missing cassette) made the whole
    # file a collection error, and pytest then ran nothing of the session: now that case
    # fails with them, as `evaldsl run` reports it ("not run: …"), and the others run
    project.makefile(
        ".eval",
        broken='tools get_weather\n\ncase "first good"\n  cassette "xiamen.jsonl"\n'
        "  tool get_weather called once\n\n"
        + BROKEN.removeprefix("tools get_weather\n\n")
        + '\ncase "bad regex"\n  cassette "xiamen.jsonl"\n  answer matches /(/\n'
        '\ncase "no cassette"\n  cassette "nope.jsonl"\n  steps >= 1\n'
        '\ncase "second good"\n  cassette "xiamen.jsonl"\n  steps >= 1\n',
    )
    result = project.runpytest_subprocess("-p", "evaldsl", "broken.eval", "-v")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.assert_outcomes(passed=2, failed=3)
    result.stdout.fnmatch_lines(
        [
            "broken.eval::first good PASSED*",
            "broken.eval::typos FAILED*",
            "broken.eval::bad regex FAILED*",
            "broken.eval::no cassette FAILED*",
            "broken.eval::second good PASSED*",
            "*_ broken › typos _*",
            "error: not run: 2 check errors (first: broken.eval:9:20: expected a predicate*",
            lit("broken.eval:9:20: error[E101]: expected a predicate") + "*found `caled`",
            "9 |   tool get_weather caled once",
            "  |                    ^^^^^",
            "  = hint: did you mean `called`?",
            lit("broken.eval:10:13: error[E202]: `latency` is a duration: give the number a unit"),
            "   = hint: write `2s` or `2ms`",
            "*_ broken › bad regex _*",
            "error: not run: 1 check error (first: broken.eval:14:18: invalid regex: *",
            lit("broken.eval:14:18: error[E401]: invalid regex: ") + "*",
            "*_ broken › no cassette _*",
            lit("broken.eval:17:3: error[E501]: file not found: ") + '"nope.jsonl"*',
            "FAILED broken.eval::typos - error: not run: 2 check errors*",
        ]
    )
    # a case's errors are its failure, not pytest warnings as well
    assert "warnings summary" not in result.stdout.str()
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    # pytest's JUnit XML carries the failure's message and the diagnostics
    project.runpytest("-p", "evaldsl", "broken.eval", "--junitxml=j.xml")
    cases = {c.get("name"): c for c in ET.parse(project.path / "j.xml").getroot().iter("testcase")}
    failure = cases["typos"].find("failure")
    assert failure is not None and failure.text is not None
    assert (failure.get("message") or "").startswith("error: not run: 2 check errors (first: ")
    assert "9 |   tool get_weather caled once" in failure.text
    assert cases["first good"].find("failure") is None
    # and `--lf` runs the three again
    again = project.runpytest("-p", "evaldsl", "broken.eval", "--lf")
    again.assert_outcomes(failed=3, deselected=2)


def test_a_yaml_case_with_check_errors_fails_alone(project: pytest.Pytester) -> None:
    (project.path / "mixed.yaml").write_text(
        YAML_SUITE
        + "  - name: misspelt\n    cassete: xiamen.jsonl\n    expect: steps >= 1\n"
        + "  - name: fine\n    cassette: xiamen.jsonl\n    expect: steps >= 1\n"
    )
    result = project.runpytest("-p", "evaldsl", "mixed.yaml")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*_ yaml weather › misspelt _*",
            'error: not run: 2 check errors (first: mixed.yaml:6:5: case "misspelt" has no source)',
            lit("mixed.yaml:6:5: error[E503]") + "*",
            lit("mixed.yaml:7:5: error[E508]: `cassete` is not a case field"),
        ]
    )


def test_errors_of_the_whole_file_are_a_collection_error_listing_every_diagnostic(
    project: pytest.Pytester,
) -> None:
    # a suite-level assertion with errors stops every case of its file: no case is to
    # blame, so the file is a collection error, as is a YAML file that is no suite
    project.makefile(".eval", broken="tools get_weather\ntool get_weather caled once\n" + WEATHER)
    (project.path / "notes.yaml").write_text("cases: 3\n")
    result = project.runpytest(
        "-p",
        "evaldsl",
        "--continue-on-collection-errors",
        "notes.yaml",
        "broken.eval",
        "weather.eval",
    )
    result.assert_outcomes(passed=3, failed=1, errors=2)
    result.stdout.fnmatch_lines(
        [
            "*ERROR collecting notes.yaml*",
            "1 check error in notes.yaml: no case of this file was run",
            "*ERROR collecting broken.eval*",
            "1 check error in broken.eval: no case of this file was run",
            lit("broken.eval:2:18: error[E101]: expected a predicate") + "*found `caled`",
            "2 | tool get_weather caled once",
            "  |                  ^^^^^",
            "  = hint: did you mean `called`?",
        ]
    )
    # without the flag pytest stops before running anything, as for any collection error
    stopped = project.runpytest("-p", "evaldsl", "broken.eval", "weather.eval")
    assert stopped.ret == pytest.ExitCode.INTERRUPTED
    stopped.assert_outcomes(errors=1)


def test_check_warnings_become_pytest_warnings_at_their_line(project: pytest.Pytester) -> None:
    project.makefile(
        ".eval",
        warned='case "w"\n  cassette "xiamen.jsonl"\n  no tool get_wether\n'
        "  tool get_weather called\n",
    )
    # the same slip in a YAML suite: its line is the list item's
    (project.path / "warned.yaml").write_text(
        "cases:\n  - name: w\n    cassette: xiamen.jsonl\n    expect:\n"
        "      - tool get_weather called\n      - no tool get_wether\n"
    )
    result = project.runpytest("-p", "evaldsl", "warned.eval", "warned.yaml")
    result.assert_outcomes(passed=2, warnings=2)
    result.stdout.fnmatch_lines(
        [
            "warned.eval:3",
            "*warned.eval:3: EvalDslWarning: " + lit("warned.eval:3:3: warning[W301]") + "*",
            "  3 |   no tool get_wether",
            "warned.yaml:6",
            "*warned.yaml:6: EvalDslWarning: " + lit("warned.yaml:6:9: warning[W301]") + "*",
        ]
    )


def test_a_case_s_warnings_made_errors_fail_that_case_alone(project: pytest.Pytester) -> None:
    # `-W error` (a project's `filterwarnings = error`): the first warning was raised out
    # of the plugin, a traceback of its own frame, and the warnings after it went unsaid;
    # then every case of the file was a collection error, which stopped the session for
    # one case's slip. Now the case fails with each of its warnings, and the others run.
    project.makefile(
        ".eval",
        warned='case "w"\n  cassette "xiamen.jsonl"\n  no tool get_wether\n'
        "  no tool get_wheather\n  tool get_weather called\n"
        'case "fine"\n  cassette "xiamen.jsonl"\n  tool get_weather called\n',
    )
    result = project.runpytest("-p", "evaldsl", "-W", "error", "warned.eval")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "*not run: 2 check warnings made errors by the warning filters (-W error, "
            "filterwarnings)",
            lit("warned.eval:3:3: warning[W301]") + "*",
            lit("warned.eval:4:3: warning[W301]") + "*",
        ]
    )
    assert "pytest_collect.py" not in result.stdout.str()
    # a filter for another warning leaves them warnings
    other = project.runpytest("-p", "evaldsl", "-W", "error::DeprecationWarning", "warned.eval")
    other.assert_outcomes(passed=2, warnings=2)
    # a case's check error beside them: each case fails with its own
    project.makefile(
        ".eval",
        both='case "bad"\n  cassette "nope.jsonl"\n  steps >= 1\n'
        + ('case "w"\n  cassette "xiamen.jsonl"\n  no tool get_wether\n  steps >= 1\n'),
    )
    both = project.runpytest("-p", "evaldsl", "-W", "error", "both.eval")
    both.assert_outcomes(failed=2)
    both.stdout.fnmatch_lines(
        [
            "*not run: 1 check error (first: both.eval:2:3: file not found*",
            lit("both.eval:2:3: error[E501]") + "*",
            "*not run: 1 check warning made error by the warning filters*",
            lit("both.eval:6:3: warning[W301]") + "*",
        ]
    )


def test_a_file_s_own_warning_made_an_error_is_a_collection_error(
    project: pytest.Pytester,
) -> None:
    # a warning no case carries (a YAML suite of no cases) stops its file, as an error
    # no case carries does, and names itself
    (project.path / "empty.yaml").write_text("name: empty\ncases: []\n")
    result = project.runpytest("-p", "evaldsl", "-W", "error", "empty.yaml")
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(
        [
            "*ERROR collecting empty.yaml*",
            "1 warning in empty.yaml, made errors by the warning filters (-W error, "
            "filterwarnings): no case of this file was run",
            lit("empty.yaml:2:8: warning[W510]") + "*",
        ]
    )


def test_a_case_whose_assertions_all_skip_is_skipped_with_the_reason(
    project: pytest.Pytester,
) -> None:
    project.makefile(".eval", judged=JUDGED)
    result = project.runpytest("-p", "evaldsl", "judged.eval", "-rs")
    result.assert_outcomes(skipped=1)
    # reported at the case's line, not inside the plugin
    result.stdout.fnmatch_lines(
        [lit("SKIPPED [1] judged.eval:1: judge: skipped, no API key") + "*EVALDSL_JUDGE_API_KEY*"]
    )


def test_judge_options(project: pytest.Pytester) -> None:
    project.makefile(".eval", judged=JUDGED)
    cache = project.path / "cache"
    off = project.runpytest("-p", "evaldsl", "judged.eval", "--evaldsl-judge", "off", "-rs")
    off.assert_outcomes(skipped=1)
    frozen = project.runpytest(
        "-p", "evaldsl", "judged.eval", "--evaldsl-judge=frozen", f"--evaldsl-judge-cache={cache}"
    )
    frozen.assert_outcomes(failed=1)  # a cache miss in frozen mode is an error, never a pass
    frozen.stdout.fnmatch_lines(["*judged.eval:3:3: error: *"])

    with JudgeServer(judged(True, 0.9, "mentions 31 C")) as server:
        env = {"EVALDSL_JUDGE_API_KEY": "sk-test", "EVALDSL_JUDGE_BASE_URL": server.url}
        with pytest.MonkeyPatch.context() as mp:
            for key, value in env.items():
                mp.setenv(key, value)
            live = project.runpytest(
                "-p", "evaldsl", "judged.eval", "--evaldsl-judge-cache", "cache"
            )
        live.assert_outcomes(passed=1)
        assert server.count == 1
    assert len(list(cache.glob("*.json"))) == 1
    # the server is gone and there is no key: the cache the live run wrote answers
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("EVALDSL_JUDGE_BASE_URL", server.url)  # part of the cache key
        again = project.runpytest(
            "-p",
            "evaldsl",
            "judged.eval",
            "--evaldsl-judge",
            "frozen",
            f"--evaldsl-judge-cache={cache}",
        )
    again.assert_outcomes(passed=1)


@pytest.mark.parametrize(
    ("options", "env", "said"),
    [
        (
            ("--evaldsl-judge-cache", "judged.eval"),
            {},
            "ERROR: --evaldsl-judge-cache */judged.eval: that is a file; name a folder",
        ),
        (
            ("--evaldsl-judge-cache=",),
            {},
            "ERROR: --evaldsl-judge-cache '': an empty path names no folder; name the judge's*",
        ),
        (
            (),
            {"EVALDSL_JUDGE_BASE_URL": "ftp://x"},
            "ERROR: EVALDSL_JUDGE_BASE_URL cannot be used*",
        ),
        ((), {"EVALDSL_JUDGE_API_KEY": "sk x"}, "ERROR: EVALDSL_JUDGE_API_KEY cannot be used*"),
    ],
)
def test_judge_settings_that_cannot_be_used_are_a_usage_error(
    project: pytest.Pytester, options: tuple[str, ...], env: dict[str, str], said: str
) -> None:
    # each was a JudgeConfigError traceback through the plugin, in every file's collection
    # (an empty cache folder was the folder pytest started in, written into)
    project.makefile(".eval", judged=JUDGED)
    with pytest.MonkeyPatch.context() as mp:
        for key, value in env.items():
            mp.setenv(key, value)
        result = project.runpytest_subprocess("-p", "evaldsl", *options)
        helped = project.runpytest_subprocess("-p", "evaldsl", *options, "--help")
    assert helped.ret == pytest.ExitCode.OK  # (the help is no session: it still shows)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([said])
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    assert "pytest_collect.py" not in result.stdout.str()


def slow_verdicts(request: Recorded) -> Reply:
    return Reply(**{**vars(judged(True, 0.9, "fine")), "delay": 0.3})


def test_judged_cases_overlap_their_calls_and_ask_only_what_runs(
    project: pytest.Pytester,
) -> None:
    cases = "".join(
        f'case "c{n}"\n  cassette "xiamen.jsonl"\n  answer judged "rubric {n}"\n' for n in range(6)
    )
    project.makefile(".eval", judged=cases)
    with JudgeServer(slow_verdicts) as server, pytest.MonkeyPatch.context() as mp:
        mp.setenv("EVALDSL_JUDGE_API_KEY", "sk-test")
        mp.setenv("EVALDSL_JUDGE_BASE_URL", server.url)
        picked = project.runpytest("-p", "evaldsl", "judged.eval", "-k", "c1 or c4", "-v")
        picked.assert_outcomes(passed=2, deselected=4)
        assert server.count == 2  # the deselected cases asked nothing
        every = project.runpytest("-p", "evaldsl", "judged.eval", "--evaldsl-judge-cache=c2")
        every.assert_outcomes(passed=6)
        assert server.count == 8
        # one question a case, and more than one at once: each case began the next ones
        assert server.max_in_flight >= 2


def test_dash_k_selects_cases(project: pytest.Pytester) -> None:
    result = project.runpytest("-p", "evaldsl", "-k", "Tokyo or forecast")
    result.assert_outcomes(passed=2, deselected=2)
    result = project.runpytest("-p", "evaldsl", "-k", "not each", "-v")
    result.assert_outcomes(passed=1, failed=1, deselected=2)
    result.stdout.fnmatch_lines(["weather.eval::answers with the forecast PASSED*"])


def test_dash_k_selects_by_suite_name(project: pytest.Pytester) -> None:
    project.makefile(
        ".eval", named='suite "outlook"\ncase "one"\n  cassette "xiamen.jsonl"\n  steps >= 1\n'
    )
    result = project.runpytest("-p", "evaldsl", "-k", "outlook", "-v")
    result.assert_outcomes(passed=1, deselected=4)
    result.stdout.fnmatch_lines(["named.eval::one PASSED*"])


def test_last_failed_and_failed_first_find_a_failed_each_row(project: pytest.Pytester) -> None:
    # a row's id ends in `[city=Tokyo]`, which pytest reads back as parameters
    project.makefile(
        ".eval",
        rows='case "city"\n  cassette "xiamen.jsonl"\n'
        '  each [{city: "Xiamen"}, {city: "Tokyo"}]\n'
        '  tool get_weather args $.city == "{{city}}"\n',
    )
    project.runpytest("-p", "evaldsl").assert_outcomes(passed=4, failed=2)
    rerun = project.runpytest("-p", "evaldsl", "--lf", "-v")
    rerun.assert_outcomes(failed=2)
    rerun.stdout.fnmatch_lines(["run-last-failure: rerun previous 2 failures"])
    assert sorted(re.findall(r"^(\S.*) FAILED", rerun.stdout.str(), re.M)) == [
        "rows.eval::city #2 [city=Tokyo]",
        "weather.eval::wrong expectations",
    ]
    first = project.runpytest("-p", "evaldsl", "--ff", "-v")
    first.assert_outcomes(passed=4, failed=2)
    ran = re.findall(r"^(\S.*) (?:PASSED|FAILED)", first.stdout.str(), re.M)
    assert sorted(ran[:2]) == sorted(re.findall(r"^(\S.*) FAILED", first.stdout.str(), re.M))


def test_a_case_name_with_double_colons_gets_an_id_that_runs_it(project: pytest.Pytester) -> None:
    project.makefile(
        ".eval", colons='case "lookup::retry"\n  cassette "xiamen.jsonl"\n  steps >= 1\n'
    )
    listed = project.runpytest("-p", "evaldsl", "colons.eval", "--collect-only", "-q")
    listed.stdout.fnmatch_lines(["colons.eval::lookup: :retry"])
    result = project.runpytest("-p", "evaldsl", "colons.eval::lookup: :retry", "--junitxml=j.xml")
    result.assert_outcomes(passed=1)
    case = ET.parse(project.path / "j.xml").getroot().find("testsuite/testcase")
    assert case is not None
    assert (case.get("classname"), case.get("name")) == ("colons.eval", "lookup: :retry")


def test_a_bracket_in_a_case_name_keeps_its_id_in_the_summary_and_junit(
    project: pytest.Pytester,
) -> None:
    # pytest reads an id's first `[` as its parameters' and closes them at the end: case
    # `retry [slow] path` was `retry [slow] path]` in the summary and in JUnit XML, an id
    # that found nothing when given back
    project.makefile(
        ".eval",
        brackets='case "retry [slow] path"\n  cassette "xiamen.jsonl"\n  steps >= 9\n'
        'case "row [a]"\n  cassette "xiamen.jsonl"\n  steps >= 9\n',
    )
    result = project.runpytest("-p", "evaldsl", "brackets.eval", "--junitxml=j.xml", "-rf")
    result.assert_outcomes(failed=2)
    summary = re.findall(r"^FAILED (.*?) - ", result.stdout.str(), re.M)
    assert summary == ["brackets.eval::retry \\x5bslow] path", "brackets.eval::row [a]"]
    cases = ET.parse(project.path / "j.xml").getroot().iter("testcase")
    assert [c.get("name") for c in cases] == ["retry \\x5bslow] path", "row [a]"]
    for printed in summary:
        project.runpytest("-p", "evaldsl", printed).assert_outcomes(failed=1)
    rerun = project.runpytest("-p", "evaldsl", "--lf", "-rf")
    rerun.assert_outcomes(failed=2)  # both found again from the `--lf` cache


def test_control_characters_in_names_and_errors_show_as_escapes(
    project: pytest.Pytester,
) -> None:
    # a case's name and a target's message were printed raw in the item's id, the
    # failure's title and its error: an escape sequence acted on the terminal
    (project.path / "hostile.py").write_text('def f():\n    raise ValueError("\\x1b[2J!")\n')
    project.makefile(
        ".eval",
        clear='case "clear\\u001b[2J\\rnow"\n  run hostile:f\n  output == 1\n',
    )
    result = project.runpytest("-p", "evaldsl", "clear.eval", "-v")
    result.assert_outcomes(failed=1)
    text = result.stdout.str()
    assert "\x1b" not in text and "\r" not in text
    assert "clear.eval::clear\\x1b\\x5b2J\\x0dnow FAILED" in text
    assert "_ clear › clear\\x1b[2J\\x0dnow _" in text
    assert "error: run target 'hostile:f' raised ValueError: \\x1b[2J! (at f, " in text
    # the id as printed runs the case again
    again = project.runpytest("-p", "evaldsl", "clear.eval::clear\\x1b\\x5b2J\\x0dnow")
    again.assert_outcomes(failed=1)


def test_last_failed_reruns_only_the_failing_case(project: pytest.Pytester) -> None:
    first = project.runpytest("-p", "evaldsl")
    first.assert_outcomes(passed=3, failed=1)
    rerun = project.runpytest("-p", "evaldsl", "--lf", "-v")
    rerun.assert_outcomes(failed=1)
    rerun.stdout.fnmatch_lines(
        [
            "collecting ... collected 1 item",
            "run-last-failure: rerun previous 1 failure",
            "weather.eval::wrong expectations FAILED*",
        ]
    )


def test_markers_select_and_strict_markers_accept_them(project: pytest.Pytester) -> None:
    project.makefile(".eval", judged=JUDGED)
    (project.path / "agent.py").write_text("def answer():\n    return 'hello'\n")
    project.makefile(".eval", live='case "live"\n  run agent:answer\n  output == "hello"\n')
    everything = project.runpytest("-p", "evaldsl", "-m", "evaldsl", "--strict-markers")
    everything.assert_outcomes(passed=4, failed=1, skipped=1)
    no_judge = project.runpytest("-p", "evaldsl", "-m", "not evaldsl_judge", "--strict-markers")
    no_judge.assert_outcomes(passed=4, failed=1, deselected=1)
    live = project.runpytest("-p", "evaldsl", "-m", "evaldsl_live", "-v")
    live.assert_outcomes(passed=1, deselected=5)
    live.stdout.fnmatch_lines(["live.eval::live PASSED*"])


def test_live_cases_share_their_target_worker_and_it_ends_with_the_session(
    project: pytest.Pytester,
) -> None:
    # one worker kept between the cases of a folder, as `evaldsl run` keeps it (a worker
    # per case started and imported the target again for each: ~77 ms a trivial case)
    (project.path / "counter.py").write_text(
        "import os\n"
        "calls = 0\n"
        "def count():\n"
        "    global calls\n"
        "    calls += 1\n"
        "    with open('pids.txt', 'a') as f:\n"
        "        f.write(f'{os.getpid()}\\n')\n"
        "    return calls\n"
    )
    cases = "".join(f'case "call {n}"\n  run counter:count\n  output == {n}\n' for n in (1, 2, 3))
    project.makefile(".eval", live=cases)
    result = project.runpytest("-p", "evaldsl", "live.eval", "-v")
    result.assert_outcomes(passed=3)
    pids = {int(line) for line in (project.path / "pids.txt").read_text().split()}
    assert len(pids) == 1  # the same worker answered the three
    assert survivors(pids) == []  # and it ended with the session


#: The files this process opens while a test counts them (an audit hook cannot be
#: removed: it notes nothing while this is None).
OPENED: list[list[str]] = []


def _note_opens(event: str, args: tuple[Any, ...]) -> None:
    if OPENED and event == "open" and isinstance(args[0], (str, os.PathLike)):
        OPENED[0].append(os.path.basename(args[0]))


sys.addaudithook(_note_opens)


def test_collecting_reads_each_recording_once(project: pytest.Pytester) -> None:
    # checking a file's cases reads a small recording once for them all, as `evaldsl check`
    cases = "".join(
        f'case "c{n}"\n  cassette "xiamen.jsonl"\n  tool get_weather called\n' for n in range(5)
    )
    project.makefile(".eval", many=cases)
    OPENED.append([])
    try:
        result = project.runpytest("-p", "evaldsl", "many.eval", "--collect-only")
        opened = OPENED[0]
    finally:
        OPENED.clear()
    result.assert_outcomes()
    assert opened.count("xiamen.jsonl") == 1


def test_twin_case_names_get_distinct_node_ids(project: pytest.Pytester) -> None:
    project.makefile(
        ".eval",
        twins='case "same"\n  cassette "xiamen.jsonl"\n  tool get_weather called\n'
        'case "same"\n  cassette "xiamen.jsonl"\n  tool get_weather called 2 times\n',
    )
    result = project.runpytest("-p", "evaldsl", "twins.eval", "-v")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["twins.eval::same PASSED*", "twins.eval::same (2) FAILED*"])


def test_a_twins_node_id_is_never_another_cases_name(project: pytest.Pytester) -> None:
    # a case written `ok (2)` beside two cases `ok`: the second twin was `ok (2)` too, one
    # node id for two items, and `--lf` ran the passing `ok (2)` again with the failing one
    project.makefile(
        ".eval",
        twins='case "ok (2)"\n  cassette "xiamen.jsonl"\n  tool get_weather called\n'
        'case "ok"\n  cassette "xiamen.jsonl"\n  tool get_weather called\n'
        'case "ok"\n  cassette "xiamen.jsonl"\n  tool get_weather called 2 times\n',
    )
    result = project.runpytest("-p", "evaldsl", "twins.eval", "-v")
    result.assert_outcomes(passed=2, failed=1)
    result.stdout.fnmatch_lines(
        [
            "twins.eval::ok (2) PASSED*",
            "twins.eval::ok PASSED*",
            "twins.eval::ok (3) FAILED*",
        ]
    )
    again = project.runpytest("-p", "evaldsl", "twins.eval", "--lf", "-v")
    again.assert_outcomes(failed=1, deselected=2)
    alone = project.runpytest("-p", "evaldsl", "twins.eval::ok (2)", "-v")
    alone.assert_outcomes(passed=1)


def test_xdist_runs_the_cases_in_two_workers(project: pytest.Pytester) -> None:
    result = project.runpytest_subprocess("-p", "evaldsl", "-n", "2", "-v")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(["*2 workers [[]4 items[]]*"])
    # the failure report crosses the process boundary whole
    result.stdout.fnmatch_lines(["11 |   tool get_weather called 2 times", "   = found: 1"])
    assert "[gw0]" in result.stdout.str() and "[gw1]" in result.stdout.str()


def test_junit_xml_from_pytest(project: pytest.Pytester) -> None:
    project.makefile(".eval", judged=JUDGED)
    result = project.runpytest("-p", "evaldsl", "--junitxml=junit.xml")
    result.assert_outcomes(passed=3, failed=1, skipped=1)
    root = ET.parse(project.path / "junit.xml").getroot()
    suite = root.find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("5", "1", "1")
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert set(cases) == {
        "answers with the forecast",
        "wrong expectations",
        "each city #1 [file=xiamen.jsonl, city=Xiamen]",
        "each city #2 [file=tokyo-stream.jsonl, city=Tokyo]",
        "judged only",
    }
    failure = cases["wrong expectations"].find("failure")
    assert failure is not None and failure.text is not None
    assert (failure.get("message") or "").startswith("1 of 2 assertions failed (score 0.50)\n")
    assert "11 |   tool get_weather called 2 times" in failure.text
    assert "^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^" in failure.text
    scores = {
        name: {p.get("name"): p.get("value") for p in case.iter("property")}
        for name, case in cases.items()
    }
    assert scores["wrong expectations"] == {"evaldsl_score": "0.500"}
    assert scores["answers with the forecast"] == {"evaldsl_score": "1.000"}
    skipped = cases["judged only"].find("skipped")
    assert skipped is not None and "EVALDSL_JUDGE_API_KEY" in (skipped.get("message") or "")


def test_a_crashed_run_fails_with_its_error(project: pytest.Pytester) -> None:
    project.makefile(".eval", gone='case "gone"\n  run agent:missing_function\n  output == 1\n')
    # (names bound through globals() are out of check's sight: the run finds it missing)
    (project.path / "agent.py").write_text("def other():\n    return 1\n\nglobals().update()\n")
    result = project.runpytest("-p", "evaldsl", "gone.eval")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["error: module 'agent' has no 'missing_function' (run target 'agent:missing_function')"]
    )


def test_expect_in_an_ordinary_test(project: pytest.Pytester) -> None:
    project.makepyfile(
        test_agent=r"""
        import evaldsl

        def test_good():
            result = evaldsl.expect("xiamen.jsonl", "tool get_weather called once")
            assert result.statuses == ["pass"]

        def test_bad():
            evaldsl.expect("xiamen.jsonl", r"tool get_weather called once; answer matches /\d+ F/")
        """
    )
    result = project.runpytest("test_agent.py")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "E       AssertionError: evaldsl: 1 of 2 statements failed",
            "E       <expect>:1:31: fail: expected answer matches /\\d+ F/, found*",
            "E       1 | tool get_weather called once; answer matches /\\d+ F/",
            "E         |                               ^^^^^^^^^^^^^^^^^^^^^^",
            'E         = found: "It\'s sunny in Xiamen today, 31 C with 65% humidity."',
        ]
    )


def test_expect_with_bad_text_shows_the_errors_at_the_tests_line(
    project: pytest.Pytester,
) -> None:
    project.makepyfile(
        test_typo="""
        import evaldsl

        def test_typo():
            evaldsl.expect("xiamen.jsonl", "tool get_weather caled")
        """
    )
    result = project.runpytest("test_typo.py")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            '>       evaldsl.expect("xiamen.jsonl", "tool get_weather caled")',
            "E   *: evaldsl: 1 error in the statements",
            "E       <expect>:1:18: error" + lit("[E101]") + ": *found `caled`",
            "E       1 | tool get_weather caled",
            "E         |                  ^^^^^",
            "E         = hint: did you mean `called`?",
            "",
            "test_typo.py:4: *",
        ]
    )
    # none of evaldsl's own frames
    assert "def compile(" not in result.stdout.str()
    assert "api.py" not in result.stdout.str()


def test_the_collector_is_registered_only_when_asked_for(project: pytest.Pytester) -> None:
    def registered(*args: str) -> bool:
        config = project.parseconfigure(*args)
        return config.pluginmanager.get_plugin("evaldsl-suites") is not None

    assert not registered()
    assert registered("-p", "evaldsl")
    project.makeini(INI + "evaldsl = true\n")
    assert registered()
    assert not registered("-p", "no:evaldsl")


def test_expect_returns_the_result_or_raises_with_the_report() -> None:
    cassette = str(CASSETTES / "xiamen.jsonl")
    result = evaldsl.expect(cassette, 'tool get_weather called once; answer judged "x"')
    assert result.statuses == ["pass", "skip"]
    with pytest.raises(AssertionError) as failed:
        evaldsl.expect(cassette, "tokens <= 100\nsteps <= 5")
    assert str(failed.value).splitlines() == [
        "evaldsl: 1 of 2 statements failed",
        "<expect>:1:1: fail: expected tokens <= 100, found 461",
        "  |",
        "1 | tokens <= 100",
        "  | ^^^^^^^^^^^^^",
        "  = found: 461",
        "  = expected: 100",
    ]


def test_expect_with_an_unreadable_run_or_bad_text() -> None:
    with pytest.raises(AssertionError, match=r"could not be checked: .*file not found"):
        evaldsl.expect("no-such-cassette.jsonl", "tool get_weather called")
    with pytest.raises(evaldsl.EvalDslError) as bad:
        evaldsl.expect([], "tool x caled; latency < 2")
    assert [d.code for d in bad.value.diagnostics] == ["E101", "E202"]
    # relative paths start at base_dir
    assert evaldsl.expect("xiamen.jsonl", "steps == 2", base_dir=CASSETTES).passed


def test_expect_docstring_examples() -> None:
    import doctest

    import evaldsl.expectation

    failed, tried = doctest.testmod(evaldsl.expectation)
    assert (failed, tried > 0) == (0, True)


def test_the_readme_shows_real_pytest_output() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```console\n(.*?)^```", readme, flags=re.S | re.M)
    (block,) = [b for b in blocks if b.startswith("$ pytest -p evaldsl")]
    command, *shown = block.splitlines()
    done = subprocess.run(
        [sys.executable, "-m", *command.removeprefix("$ ").split(), "-p", "no:cacheprovider"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "80", "NO_COLOR": "1", "PYTEST_ADDOPTS": ""},
        timeout=120,
    )
    assert done.returncode == 1, done.stdout + done.stderr

    def same(text: str) -> str:
        return re.sub(r"in \d+\.\d+s", "in …s", text)

    real = same(done.stdout).splitlines()
    for line in shown:
        if line != "…":
            assert same(line) in real, line


def test_dataset_rows_are_items_with_their_ids(pytester: pytest.Pytester) -> None:
    for path in (ROOT / "examples" / "triage").iterdir():
        if path.is_file():
            shutil.copy(path, pytester.path / path.name)
    pytester.makeini(INI)
    result = pytester.runpytest("-p", "evaldsl", "triage.eval", "-v")
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines_random(
        [
            lit("triage.eval::triage dataset [double-charge] PASSED") + "*",
            lit("triage.eval::triage dataset [password-reset] PASSED") + "*",
            lit("triage.eval::triage dataset [invoice] PASSED") + "*",
        ]
    )


def test_with_autoloading_off_dash_p_still_turns_it_on(
    project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    project.makeini("[pytest]\n")  # no pytest-asyncio option: that plugin is not loaded now
    project.runpytest("-p", "evaldsl").assert_outcomes(passed=3, failed=1)
    assert project.runpytest().ret == pytest.ExitCode.NO_TESTS_COLLECTED


def test_the_failure_header_says_errored_for_an_errored_assertion() -> None:
    from evaldsl.runner.results import AssertionResult
    from evaldsl.tools.pytest_collect import bad_counts

    def made(status: Any) -> AssertionResult:
        return AssertionResult("steps < 3", "s.eval", 1, 1, status, "")

    # was "1 of 1 assertions failed" for an assertion that errored
    assert bad_counts([made("error")]) == "1 of 1 assertions errored"
    assert bad_counts([made("fail"), made("error")]) == "1 of 2 assertions failed, 1 errored"
    assert bad_counts([made("fail"), made("pass")]) == "1 of 2 assertions failed"


#: Counts the opens of the project's `rec.json` (an audit hook: a subprocess's own).
_COUNT_OPENS = """\
import os, sys

TARGET = os.path.abspath("rec.json")
OPENS = []


def _hook(event, args):
    if event == "open" and args and isinstance(args[0], str):
        if os.path.abspath(args[0]) == TARGET:
            OPENS.append(args[0])


sys.addaudithook(_hook)
"""


def test_a_large_json_recording_is_read_as_often_as_evaldsl_run_reads_it(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A JSON document larger than the files kept whole (`heldfiles.HOLD_BYTES`) was read
    three times for one case by the plugin: to look for Inspect AI samples, by the case's
    check (which holds the run it read for the case's run: `heldruns`), and again by the
    run, which the plugin began outside the reading that held it. `evaldsl run` reads it
    twice (the run takes the check's). Now the plugin's run takes it too."""
    monkeypatch.delenv("PYTEST_ADDOPTS", raising=False)
    events = [{"type": "user.message", "output": "weather?"}]
    for n in range(800):
        events.append(
            {
                "type": "tool.call",
                "name": "get_weather",
                "callId": f"c{n}",
                "arguments": {"city": f"city number {n}", "units": "metric"},
            }
        )
        events.append({"type": "tool.result", "callId": f"c{n}", "output": {"temp": n}})
    events.append({"type": "llm.response", "output": "It is 21 C."})
    (pytester.path / "rec.json").write_text(json.dumps({"events": events}), "utf-8")
    assert (pytester.path / "rec.json").stat().st_size > 64 * 1024
    suite = 'case "one"\n  cassette "rec.json"\n  tool get_weather called 800 times\n'
    pytester.makefile(".eval", s=suite)
    pytester.makeconftest(
        _COUNT_OPENS
        + '\n\ndef pytest_sessionfinish(session):\n    print(f"\\nopens: {len(OPENS)}")\n'
    )
    result = pytester.runpytest_subprocess("-p", "evaldsl", "-s", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    plugin = int(re.findall(r"opens: (\d+)", result.stdout.str())[-1])
    script = pytester.path / "cli_opens.py"
    script.write_text(
        _COUNT_OPENS
        + "from evaldsl.tools.cli import main\n"
        + "try:\n    main(['run', 's.eval', '--no-history'])\nexcept SystemExit:\n    pass\n"
        + 'print(f"opens: {len(OPENS)}")\n',
        "utf-8",
    )
    done = subprocess.run(
        [sys.executable, str(script)], cwd=pytester.path, capture_output=True, text=True
    )
    cli = int(re.findall(r"opens: (\d+)", done.stdout)[-1])
    assert 0 < plugin == cli, (plugin, cli, done.stdout, done.stderr)
