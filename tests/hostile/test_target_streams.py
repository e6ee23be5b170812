"""A live target's surroundings: its output (relayed to evaldsl's stderr, escaped, dropped
once that stream's reader has left), a suite folder whose modules shadow the standard
library's, and where an error in the target's code is said to be.

Each behaviour is a real process doing it: the `evaldsl` command in a subprocess, or a
worker started by `call_target`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from clitools import ROOT, run_evaldsl

from evaldsl.runner.live import TargetError
from evaldsl.runner.targets import call_target

PRINTS = 'def f(x=None):\n    print("hello")\n    return "ok"\n'


def _suite(folder: Path, cases: dict[str, str]) -> None:
    """`folder/s.eval`, one case per target, each asserting `output == "ok"`."""
    text = 'suite "s"\n' + "".join(
        f'case "{name}"\n  run {target}\n  output == "ok"\n' for name, target in cases.items()
    )
    (folder / "s.eval").write_text(text, encoding="utf-8")


def test_a_target_that_prints_passes_after_the_consoles_reader_left(tmp_path: Path) -> None:
    (tmp_path / "quiet.py").write_text('def f(x=None):\n    return "ok"\n', encoding="utf-8")
    (tmp_path / "loud.py").write_text(PRINTS, encoding="utf-8")
    _suite(tmp_path, {"a": "quiet:f", "b": "loud:f", "c": "loud:f"})
    # `evaldsl run s.eval --json r.json 2>&1 | head -1`: a real pipe whose reader leaves
    # after the first line
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(ROOT)}
    with subprocess.Popen(
        [sys.executable, "-m", "evaldsl.tools.cli", "run", "s.eval", "--json", "r.json"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
    ) as evaldsl:
        assert evaldsl.stdout is not None
        evaldsl.stdout.readline()
        evaldsl.stdout.close()
        code = evaldsl.wait(timeout=120)
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    cases = report["suites"][0]["cases"]
    assert [(c["name"], c["passed"], c["error"]) for c in cases] == [
        ("a", True, None),
        ("b", True, None),
        ("c", True, None),
    ]
    assert code == 0


def test_a_targets_output_reaches_stderr_with_its_controls_escaped(tmp_path: Path) -> None:
    (tmp_path / "esc.py").write_text(
        "import sys\ndef f(x=None):\n"
        '    sys.stdout.write("a\\x1b[2J\\x1b]0;title\\x07\\tb\\r\\nc\\n")\n'
        '    sys.stderr.write("d\\x1b[31m\\n")\n'
        '    return "ok"\n',
        encoding="utf-8",
    )
    _suite(tmp_path, {"a": "esc:f"})
    done = run_evaldsl("run", "s.eval", "--json", "-", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stderr and "\x07" not in done.stderr
    # tabs and line breaks are kept: the output still reads as it was written
    assert "a\\x1b[2J\\x1b]0;title\\x07\tb\nc\n" in done.stderr
    assert "d\\x1b[31m\n" in done.stderr
    assert "hello" not in done.stdout and json.loads(done.stdout)["summary"]


def test_a_targets_unended_line_is_ended_before_the_consoles_next(tmp_path: Path) -> None:
    """A target that prints `progress 50%` and no line break: the console's line for the
    case was written on after it (`progress 50%✓ s › a …`), where a reader of the log
    looks for it at the start of a line. (Serial: under `-j` the workers' writes and the
    console's are not ordered, one worker's line against another's.)"""
    (tmp_path / "partial.py").write_text(
        'import sys\ndef f(x=None):\n    sys.stdout.write("progress 50%")\n    return "ok"\n',
        encoding="utf-8",
    )
    _suite(tmp_path, {"a": "partial:f", "b": "partial:f"})
    done = run_evaldsl("run", "s.eval", "--json", "-", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.splitlines()
    assert lines.count("progress 50%") == 2, done.stderr
    assert sum(line.startswith("✓ s › ") for line in lines) == 2, done.stderr


SHADOWS = ("json", "pickle", "threading", "signal", "struct", "difflib", "asyncio", "selectors")


def test_a_suite_folder_shadowing_the_standard_library_leaves_the_worker_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in SHADOWS:
        (tmp_path / f"{name}.py").write_text(f"raise RuntimeError('shadow {name}')\n")
    (tmp_path / "agent.py").write_text(
        "def f(x=None):\n    return 'mine'\nasync def g(x=None):\n    return 'awaited'\n"
    )
    # evaldsl run from that folder: the worker's `python -c` puts it first on its path.
    # (A relative PYTHONPATH, `PYTHONPATH=.` for a checkout, would name that folder too
    # once there, and import the shadows as Python would for any program: made absolute.)
    if os.environ.get("PYTHONPATH"):
        entries = os.environ["PYTHONPATH"].split(os.pathsep)
        monkeypatch.setenv("PYTHONPATH", os.pathsep.join(map(os.path.abspath, entries)))
    monkeypatch.chdir(tmp_path)
    assert call_target("agent:f", None, 30, tmp_path).output == "mine"
    assert call_target("agent:g", None, 30, tmp_path).output == "awaited"
    # a near name is offered (difflib) from the worker's own copy
    with pytest.raises(TargetError, match="did you mean 'f'"):
        call_target("agent:ff", None, 30, tmp_path)


def test_a_target_module_named_as_a_module_the_worker_loaded_says_so(tmp_path: Path) -> None:
    """`run json:f` beside a `json.py`: Python gives its own `json` (the worker loaded it
    first). It said only "module 'json' has no 'f'", of a module the user never wrote; a
    module the worker has not loaded (`code.py`) is the user's, and runs."""
    (tmp_path / "json.py").write_text("def f(x=None):\n    return 'mine'\n")
    (tmp_path / "code.py").write_text("def f(x=None):\n    return 'mine'\n")
    with pytest.raises(TargetError) as raised:
        call_target("json:f", None, 30, tmp_path)
    message = str(raised.value)
    assert message.startswith("module 'json' has no 'f' (run target 'json:f'); `json` is")
    assert message.endswith(f"so {tmp_path / 'json.py'} is never imported: rename it")
    assert call_target("code:f", None, 30, tmp_path).output == "mine"
    with pytest.raises(TargetError) as near:  # (a name that is not there: as before)
        call_target("code:ff", None, 30, tmp_path)
    assert "never imported" not in str(near.value)


def test_a_module_that_shadows_what_the_target_imports_is_its_import_error(
    tmp_path: Path,
) -> None:
    (tmp_path / "csv.py").write_text("x = 1\nraise RuntimeError('my csv')\n")
    (tmp_path / "agent.py").write_text("import csv\ndef f(x=None):\n    return 'ok'\n")
    with pytest.raises(TargetError) as raised:
        call_target("agent:f", None, 30, tmp_path)
    message = str(raised.value)
    assert message.startswith("cannot import 'agent' for run target 'agent:f': RuntimeError")
    assert message.endswith(f"(at <module>, {tmp_path / 'csv.py'}:2)")


def test_an_import_error_says_where_and_paths_are_from_the_working_folder(
    tmp_path: Path,
) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "importraise.py").write_text("import nosuchmodule_abc\ndef f(x=None): return 1\n")
    (suite / "raises.py").write_text("def f(x=None):\n    raise ValueError('boom')\n")
    _suite(suite, {"i": "importraise:f", "r": "raises:f"})
    done = run_evaldsl("run", "suite/s.eval", "--json", "-", cwd=tmp_path)
    errors = [c["error"] for c in json.loads(done.stdout)["suites"][0]["cases"]]
    assert errors == [
        "cannot import 'importraise' for run target 'importraise:f': ModuleNotFoundError: "
        "No module named 'nosuchmodule_abc' (at <module>, suite/importraise.py:1)",
        "run target 'raises:f' raised ValueError: boom (at f, suite/raises.py:2)",
    ]
