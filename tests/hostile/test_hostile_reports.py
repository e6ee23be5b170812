"""Hostile report paths and output: reports are written whole or not at all (a full disk
never destroys an earlier report), `--json -` puts only JSON on stdout, two reports on one
path and scores like `nan` are usage errors before anything runs, `fmt` keeps a symlink a
symlink, control characters from a suite are shown as escapes, and a run that runs
nothing says so and exits 1. Everything through the real command, in a subprocess.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest
from clitools import ROOT, fresh_python, run_evaldsl

from evaldsl.language.diagnostics import Diagnostic, render

WEATHER = ROOT / "examples" / "weather" / "weather.eval"

FLOW = """
from pathlib import Path

def noisy(x=None):
    print("noise from the target")
    Path(__file__).with_name("ran").write_text("yes")
    return "hello"

def shouting(x=None):
    raise ValueError("bad \\x1b[2J\\x1b]0;owned\\x07 news")
"""


def _live_suite(folder: Path) -> Path:
    (folder / "flow.py").write_text(FLOW, encoding="utf-8")
    suite = folder / "live.eval"
    suite.write_text(
        'case "says hello"\n  run flow:noisy\n  output == "hello"\n\n'
        'case "says goodbye"\n  run flow:noisy\n  output == "goodbye"\n',
        encoding="utf-8",
    )
    return suite


# ---- written whole or not at all -----------------------------------------------------------


def _limit_file_size(limit: int) -> None:
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


def test_a_full_disk_never_destroys_an_earlier_report(tmp_path: Path) -> None:
    reports = ["--json", "report.json", "--junit", "report.xml", "--no-history"]
    first = run_evaldsl(
        "run", str(WEATHER), "-k", "Xiamen", "--judge", "off", *reports, cwd=tmp_path
    )
    assert first.returncode == 0, first.stderr
    earlier = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert set(earlier) == {"report.json", "report.xml"}
    # The whole suite's reports (5 cases, not 2) are larger than the limit: writing them
    # fails as on a full disk (the kernel refuses to grow a file past RLIMIT_FSIZE).
    limit = min(len(b) for b in earlier.values()) + 100
    env = {k: v for k, v in os.environ.items() if not k.startswith("EVALDSL_JUDGE")}
    full = subprocess.run(
        [
            sys.executable,
            "-m",
            "evaldsl.tools.cli",
            "run",
            str(WEATHER),
            "--judge",
            "off",
            *reports,
        ],
        cwd=tmp_path,
        env={**env, "NO_COLOR": "1", "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=lambda: _limit_file_size(limit),
    )
    assert full.returncode == 2, full.stderr
    assert full.stderr.count("File too large") == 2, full.stderr  # each report said
    assert "Traceback" not in full.stderr
    # the earlier reports are as they were, and no temporary file is left
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == earlier


def test_a_report_written_through_a_symlink_keeps_the_link(tmp_path: Path) -> None:
    (tmp_path / "reports").mkdir()
    link = tmp_path / "latest.json"
    link.symlink_to(tmp_path / "reports" / "run.json")
    result = run_evaldsl("run", str(WEATHER), "--judge", "off", "--no-history", "--json", str(link))
    assert result.returncode == 0, result.stderr
    assert link.is_symlink()
    assert json.loads((tmp_path / "reports" / "run.json").read_text())["version"] == 1


def test_fmt_keeps_a_symlink_a_symlink(tmp_path: Path) -> None:
    real = tmp_path / "real.eval"
    real.write_text('case   "a"\n  output==1\n', encoding="utf-8")
    link = tmp_path / "link.eval"
    link.symlink_to(real)
    result = run_evaldsl("fmt", str(link))
    assert result.returncode == 0, result.stderr
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_text(encoding="utf-8") == 'case "a"\n  output == 1\n'


def test_fmt_names_a_file_with_a_control_character_in_its_name_escaped(tmp_path: Path) -> None:
    # `would reformat` and `reformatted` wrote the name raw: its escape sequence acted
    (tmp_path / "a\x1b[31m\r.eval").write_text('case   "a"\n  output==1\n', encoding="utf-8")
    checked = run_evaldsl("fmt", "--check", ".", cwd=tmp_path)
    assert (checked.returncode, checked.stdout) == (1, "would reformat a\\x1b[31m\\x0d.eval\n")
    done = run_evaldsl("fmt", ".", cwd=tmp_path)
    assert (done.returncode, done.stdout) == (0, "reformatted a\\x1b[31m\\x0d.eval\n")


# ---- standard output -----------------------------------------------------------------------


def test_json_to_stdout_is_only_json(tmp_path: Path) -> None:
    _live_suite(tmp_path)
    result = run_evaldsl(
        "run", "live.eval", "--json", "-", "--junit", "junit.xml", "--no-history", cwd=tmp_path
    )
    assert result.returncode == 1  # one case fails
    report = json.loads(result.stdout)  # nothing but the report
    assert [c["passed"] for c in report["suites"][0]["cases"]] == [True, False]
    # the console and the target's own prints went to stderr
    assert "says goodbye" in result.stderr and "noise from the target" in result.stderr
    assert (tmp_path / "junit.xml").exists()


# ---- usage errors before anything runs -----------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--json", "same.out", "--markdown", "same.out"], "--json and --markdown both write"),
        (["--json", "sub/../same.out", "--junit", "same.out"], "--json and --junit both write"),
        (["--json", "-", "--junit", "-"], "both write standard output (-)"),
        (["--json", "sub"], "--json sub: that is a folder"),
        (["--markdown", "live.eval"], "that is a suite being run"),
        (["--fail-under", "nan"], "--fail-under takes a score between 0 and 1, not nan"),
        (["--fail-under", "inf"], "--fail-under takes a score between 0 and 1, not inf"),
        (["--fail-under=-inf"], "--fail-under takes a score between 0 and 1"),
        (["--fail-under", "1.5"], "--fail-under takes a score between 0 and 1"),
        (["--fail-under", "lots"], "--fail-under takes a score between 0 and 1, not lots"),
    ],
)
def test_bad_report_options_are_usage_errors_before_anything_runs(
    tmp_path: Path, args: list[str], message: str
) -> None:
    suite = _live_suite(tmp_path)
    (tmp_path / "sub").mkdir()
    before = suite.read_bytes()
    result = run_evaldsl("run", "live.eval", "--no-history", *args, cwd=tmp_path)
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert not (tmp_path / "ran").exists()  # no target was called
    assert not (tmp_path / "same.out").exists() and suite.read_bytes() == before


@pytest.mark.parametrize("score", ["nan", "inf", "-1"])
def test_mutate_refuses_a_score_that_is_not_one(score: str) -> None:
    result = run_evaldsl("mutate", str(WEATHER.parent), f"--fail-under={score}")
    assert result.returncode == 2
    assert "--fail-under takes a score between 0 and 1" in result.stderr


# ---- control characters --------------------------------------------------------------------

HOSTILE_TEXT = (
    'case "clear\x1b[2Jscreen"\n'
    '  cassette "cassettes/xiamen.jsonl\x1b]0;title\x07"\n'
    "  tool \x1b[31mred called\n"
)


@pytest.mark.parametrize("style", ["full", "concise", "github"])
def test_check_shows_control_characters_as_escapes(tmp_path: Path, style: str) -> None:
    suite = tmp_path / "evil.eval"
    # (a case of no assertion lines, which check names in its warning: the first case's
    # one line does not parse, and a case whose lines did not parse gets no such warning)
    empty = 'case "clear\x1b[2Jscreen too"\n  cassette "cassettes/xiamen.jsonl"\n'
    suite.write_text(HOSTILE_TEXT + empty, encoding="utf-8")
    result = run_evaldsl("check", str(suite), "--format", style)
    assert result.returncode == 1
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout
    assert "clear\\x1b[2Jscreen" in result.stdout
    assert "unexpected character `\\x1b`" in result.stdout


def test_run_shows_control_characters_as_escapes(tmp_path: Path) -> None:
    (tmp_path / "flow.py").write_text(FLOW, encoding="utf-8")
    (tmp_path / "evil.eval").write_text(
        HOSTILE_TEXT + '\ncase "shout\x1b[5m"\n  run flow:shouting\n  output == 1\n',
        encoding="utf-8",
    )
    result = run_evaldsl("run", "evil.eval", "--no-history", cwd=tmp_path)
    assert result.returncode == 1
    shown = result.stdout + result.stderr
    assert "\x1b" not in shown and "\x07" not in shown
    assert "bad \\x1b[2J\\x1b]0;owned\\x07 news" in shown
    assert "shout\\x1b[5m" in shown


def test_a_caret_stays_under_its_text_after_escapes() -> None:
    d = Diagnostic.in_file(
        "a\x1b.eval", "E301", "unknown tool \x1b", line=1, column=6, source_line="x\x1b = y"
    )
    lines = render([d]).splitlines()
    assert lines[0] == "a\\x1b.eval:1:6: error[E301]: unknown tool \\x1b"
    source, caret = lines[2], lines[3]
    assert source == "1 | x\\x1b = y"
    assert source[caret.index("^")] == "y"


def test_check_shows_a_bidi_control_as_its_escape_under_its_warning(tmp_path: Path) -> None:
    # printed as it is, the terminal would show the line in the order the warning says
    # is misleading (Trojan Source): the source line shows the escape, the caret under it
    suite = tmp_path / "bidi.eval"
    suite.write_text(
        'case "a\u2067b"\n  cassette "cassettes/xiamen.jsonl"\n  answer contains "x\u202ey"\n',
        encoding="utf-8",
    )
    result = run_evaldsl("check", str(suite))
    assert not any(ch in result.stdout for ch in "\u202e\u2067"), result.stdout
    assert "warning[W101]" in result.stdout
    lines = result.stdout.splitlines()
    source = next(i for i, line in enumerate(lines) if line.startswith("3 | "))
    assert lines[source] == '3 |   answer contains "x\\u202ey"'
    caret = lines[source + 1]
    assert lines[source][caret.index("^") :].startswith("\\u202e")
    assert caret.count("^") == len("\\u202e")


def test_run_shows_a_bidi_or_c1_control_in_a_found_value_as_its_json_escape(
    tmp_path: Path,
) -> None:
    # JSON text leaves them raw: U+009B is an 8-bit terminal's CSI, U+202E reorders the
    # line; the found value shows JSON's own escapes, so it still reads as JSON
    (tmp_path / "a.jsonl").write_text(
        '{"type": "llm.response", "output": "pay \\u202e01$ now \\u009b2J"}\n',
        encoding="utf-8",
    )
    (tmp_path / "s.eval").write_text(
        'case "c"\n  cassette "a.jsonl"\n  answer contains "refund"\n', encoding="utf-8"
    )
    result = run_evaldsl("run", "s.eval", "--no-history", "--markdown", "r.md", cwd=tmp_path)
    assert result.returncode == 1
    shown = result.stdout + (tmp_path / "r.md").read_text(encoding="utf-8")
    assert not any(ch in shown for ch in "\u202e\u009b"), shown
    assert '"pay \\u202e01$ now \\u009b2J"' in result.stdout


# ---- a run that runs nothing ---------------------------------------------------------------


def test_a_k_that_matches_no_case_says_so_and_exits_1(tmp_path: Path) -> None:
    _live_suite(tmp_path)
    result = run_evaldsl(
        "run", "live.eval", "-k", "nothing-like-this", "--json", "r.json", cwd=tmp_path
    )
    assert result.returncode == 1
    assert "no case ran: -k 'nothing-like-this' matches none of the 2 cases" in result.stderr
    assert json.loads((tmp_path / "r.json").read_text())["summary"]["cases"] == 0
    assert not (tmp_path / ".evaldsl").exists()  # an empty run is not recorded
    dry = run_evaldsl("run", "live.eval", "-k", "nothing-like-this", "--dry-run", cwd=tmp_path)
    assert dry.returncode == 1 and "0 cases in 1 suite would run" in dry.stdout


#: `evaldsl ARGS` with every open of a file named `locked.eval` refused, as a file of mode
#: 000 is for a user who is not root (the tests may run as root, who may read it anyway)
_LOCKED = """
import errno, os, sys
opened = os.open
def refuse(path, *args, **kwargs):
    if os.fspath(path).endswith("locked.eval"):
        raise PermissionError(errno.EACCES, "Permission denied", path)
    return opened(path, *args, **kwargs)
os.open = refuse
from evaldsl.tools.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.parametrize(
    ("name", "jobs"), [("locked.eval", "1"), ("locked.eval", "2"), ("zero", "1")]
)
def test_a_suite_that_cannot_be_read_says_why_no_case_ran(
    tmp_path: Path, name: str, jobs: str
) -> None:
    """Once "the suites hold no case (an `each []` expands to none)": the file's read error
    is the reason, and it is said again where the run says that nothing ran."""
    path = tmp_path / name
    if name == "zero":
        path.symlink_to("/dev/zero")
    else:
        path.write_text('case "a"\n  run flow:noisy\n  output == "hello"\n', encoding="utf-8")
    args = ("run", "--no-history", "-j", jobs, str(path))
    result = fresh_python(_LOCKED, tmp_path / "cache", *args)
    assert result.returncode == 1, result.stderr
    why = "Permission denied" if name == "locked.eval" else "is a character device, not a file"
    assert f'{path}:1:1: error[E501]: cannot read suite file: "{path}"' in result.stdout
    assert why in result.stdout and "cannot read suite file: cannot read" not in result.stdout
    assert (
        f"no case ran: a suite file with errors gave no case (first: {path}:1:1: cannot read "
        f'suite file: "{path}"'
    ) in result.stderr and why in result.stderr
    assert (
        "each" not in result.stderr and "cannot read suite file: cannot read" not in result.stdout
    )


def test_an_empty_each_says_so_and_exits_1(tmp_path: Path) -> None:
    _live_suite(tmp_path)
    (tmp_path / "none.eval").write_text(
        'case "for {{x}}"\n  each []\n  run flow:noisy\n  output == "hello"\n', encoding="utf-8"
    )
    result = run_evaldsl("run", "none.eval", "--no-history", cwd=tmp_path)
    assert result.returncode == 1
    assert "no case ran" in result.stderr
