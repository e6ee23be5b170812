"""How the `evaldsl` command's process ends (`cli.main` as the console script): without
Python's teardown when nothing is left to it, yet with every line of output delivered,
the exit code of the command, and the `atexit` functions run (the code cache's file is
written); with a thread still running, Python's own exit, which waits for it."""

from __future__ import annotations

import subprocess
from pathlib import Path

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
