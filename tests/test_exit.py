"""How the `evaldsl` command's process ends (`cli.main` as the console script): without
Python's teardown when nothing is left to it, yet with every line of output delivered,
the exit code of the command, and the `atexit` functions run (the code cache's file is
written); with a thread still running, Python's own exit, which waits for it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.clitools import ROOT, fresh_python, run_evaldsl

#: The console script, with a file written but never flushed or closed: Python's teardown
#: flushes it as it frees it, an exit without teardown leaves it empty (and never writes
#: text a command left in a buffer of its own); and a thread when asked.
SCRIPT = r"""
import sys, threading
witness = open(sys.argv[1], "w")
witness.write("teardown ran")
if sys.argv[2] == "thread":
    # it prints once the main thread has ended (the command's output is all out by then,
    # however long the command took): only Python's exit, which waits for it, lets it
    threading.Thread(target=lambda: (threading.main_thread().join(), print("thread done"))).start()
sys.argv = ["evaldsl", *sys.argv[3:]]
from evaldsl.tools.cli import main
sys.exit(main())
"""


def script(*args: str, cache: Path) -> tuple[subprocess.CompletedProcess[str], str]:
    """The script run with `args`, and what its never-flushed file holds."""
    witness = cache / "witness.txt"
    env = {"NO_COLOR": "1", "PYTHONPATH": str(ROOT)}
    done = fresh_python(SCRIPT, cache, str(witness), *args, env=env)
    return done, witness.read_text()


def test_the_process_ends_without_teardown_with_its_output_and_exit_code(
    tmp_path: Path,
) -> None:
    weather = str(ROOT / "examples" / "weather" / "weather.eval")
    done, witness = script("plain", "check", weather, cache=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("1 file checked: 0 errors, 0 warnings\n")
    assert witness == ""
    # the atexit functions ran: the code cache's file was written
    assert list((tmp_path / "evaldsl").glob("code-*.marshal"))


def test_with_a_thread_running_python_ends_the_process(tmp_path: Path) -> None:
    weather = str(ROOT / "examples" / "weather" / "weather.eval")
    done, witness = script("thread", "check", weather, cache=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith("thread done\n")
    assert witness == "teardown ran"


def test_long_output_is_delivered_whole(tmp_path: Path) -> None:
    # ~3,000 diagnostics (all of them: no cap): far more than a pipe holds, all written
    # before the exit
    suite = tmp_path / "many.eval"
    suite.write_text("\n".join(f"tool t{i} called sometimes" for i in range(3000)) + "\n")
    done = run_evaldsl("check", "--format", "concise", "--max-diagnostics", "0", str(suite))
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    assert len(done.stdout) > 200_000
    assert sum(1 for line in lines if "error" in line) >= 3000
    assert lines[-1].startswith("1 file checked: 3,000 errors")


def test_a_standard_output_that_cannot_be_written_is_an_error_and_a_run_goes_on(
    tmp_path: Path,
) -> None:
    """Found by a hunt: standard output on a full disk (`> /dev/full`) was a traceback
    (`OSError: [Errno 28] No space left on device`) in every command, and a run stopped
    at its first console line: its reports were never written. A command now says
    `cannot write to standard output` (exit 2); a run goes on without its console, says
    so once, writes its reports and exits as its outcome says."""
    state = tmp_path / "s.json"
    state.write_text('{"status": "completed", "memory": {}}', encoding="utf-8")
    suite = tmp_path / "s.eval"
    suite.write_text(f'case "c"\n  state "{state}"\n  status == completed\n', "utf-8")
    report = tmp_path / "r.json"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"PYTHONPATH": str(ROOT)}
    commands = {
        ("check", str(suite)): 2,
        ("vocabulary",): 2,
        ("schema",): 2,
        ("run", "--no-history", str(suite), "--json", str(report)): 0,
    }
    for args, code in commands.items():
        with open("/dev/full", "w") as full:
            done = subprocess.run(
                [sys.executable, "-m", "evaldsl.tools.cli", *args],
                stdout=full,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
                cwd=tmp_path,
            )
        assert "Traceback" not in done.stderr, done.stderr
        assert done.returncode == code, (args, done.stderr)
        if code == 2:
            said = "evaldsl: error: cannot write to standard output: No space left on device"
            assert done.stderr.strip() == said, done.stderr
    assert "the console cannot be written (No space left on device)" in done.stderr
    assert json.loads(report.read_text(encoding="utf-8"))["summary"]["passed"] == 1
    # the report itself to that standard output: said as standard output, not as a file `-`
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "evaldsl.tools.cli", "run", str(suite), "--junit", "-"],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=tmp_path,
        )
    assert done.returncode == 2, done.stderr
    said = "evaldsl: error: cannot write the --junit report to standard output (-): No space"
    assert said in done.stderr, done.stderr


def _closing(*fds: int) -> Any:
    """A `preexec_fn` closing `fds` in the child before it runs the command (`>&-`)."""

    def close() -> None:
        for fd in fds:
            os.close(fd)

    return close


def test_a_closed_standard_output_or_error_is_a_console_not_written_and_the_reports_are(
    tmp_path: Path,
) -> None:
    """Found by a hunt: `evaldsl run … --json r.json >&-` (standard output closed before it
    started, which Python gives as None) broke at its first console line, `AttributeError:
    'NoneType' object has no attribute 'write'`, and wrote no report. Now the run says its
    console cannot be written, goes on and writes its reports; a report to `-` and `check`
    say standard output is closed (exit 2); with standard error closed, `--json -` still
    gives the report alone on standard output."""
    state = tmp_path / "s.json"
    state.write_text('{"status": "completed", "memory": {}}', encoding="utf-8")
    suite = tmp_path / "s.eval"
    suite.write_text(f'case "c"\n  state "{state}"\n  status == completed\n', "utf-8")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-m", "evaldsl.tools.cli"]

    def closed(*args: str, fds: tuple[int, ...] = (1,)) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*command, *args],
            stdout=subprocess.PIPE if 1 not in fds else None,
            stderr=subprocess.PIPE if 2 not in fds else None,
            text=True,
            env=env,
            cwd=tmp_path,
            preexec_fn=_closing(*fds),
            timeout=120,
        )

    done = closed("run", "--no-history", str(suite), "--json", "r.json")
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 0, done.stderr
    assert "the console cannot be written (standard output is closed)" in done.stderr
    assert json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))["summary"]["passed"] == 1
    dash = closed("run", "--no-history", str(suite), "--json", "-")
    assert dash.returncode == 2, dash.stderr
    said = "cannot write the --json report to standard output (-): standard output is closed"
    assert said in dash.stderr and "Traceback" not in dash.stderr
    check = closed("check", str(suite))
    assert check.returncode == 2, check.stderr
    said = "evaldsl: error: cannot write to standard output: standard output is closed"
    assert check.stderr.strip() == said
    both = closed("run", "--no-history", str(suite), "--junit", "j.xml", fds=(1, 2))
    assert both.returncode == 0
    assert 'tests="1"' in (tmp_path / "j.xml").read_text(encoding="utf-8")
    quiet = closed("run", "--no-history", str(suite), "--json", "-", fds=(2,))
    assert quiet.returncode == 0
    assert json.loads(quiet.stdout)["summary"]["passed"] == 1  # the report alone
