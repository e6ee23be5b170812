"""Processes of a run: `-j N` starts no more processes than cases; `kill -9` of evaldsl
leaves no process behind (its `-j` processes, their target workers, a child a target
forked); Ctrl-C (SIGINT to the process group, as a terminal sends it) stops queued and
running cases at once, writes the report of what ran and exits 130.

Real processes throughout: evaldsl runs as a command in a session of its own, targets
write their pids to files, and the test kills or interrupts the command for real.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from clitools import ROOT

from hostile.processes import kill_all, numbers, survivors, wait_for_files

NAP = """
import os, time
from pathlib import Path

MARKS = Path(__file__).parent / "started"


def nap(x):
    child = ""
    if x.get("fork"):
        pid = os.fork()
        if pid == 0:
            time.sleep(600)
            os._exit(0)
        child = f" {pid}"
    MARKS.mkdir(exist_ok=True)
    mark = f"{os.getpid()} {os.getppid()}{child}"
    (MARKS / f"{x['name']}-{os.getpid()}").write_text(mark)
    time.sleep(x["seconds"])
    return "done"


def siblings(x=None):
    # this worker's parent is a -j process, whose parent is evaldsl: count evaldsl's children
    def parent_of(pid):
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    evaldsl = parent_of(os.getppid())
    found = 0
    for entry in os.listdir("/proc"):
        try:
            found += entry.isdigit() and parent_of(entry) == evaldsl
        except OSError:
            pass
    return found
"""

SLOW = 600  # seconds a slow case sleeps: far longer than any test waits


def _suite(folder: Path, *, fork: bool = False) -> Path:
    (folder / "nap.py").write_text(NAP, encoding="utf-8")
    cases = ['case "quick"\n  run nap:nap\n  input {name: quick, seconds: 0}\n  output == "done"\n']
    for n in (1, 2, 3):
        forks = ", fork: true" if fork else ""
        cases.append(
            f'case "slow {n}"\n  run nap:nap\n  input {{name: slow{n}, seconds: {SLOW}{forks}}}\n'
            f'  timeout {SLOW * 2}s\n  output == "done"\n'
        )
    path = folder / "naps.eval"
    path.write_text("\n".join(cases), encoding="utf-8")
    return path


def _start(folder: Path, *args: str) -> subprocess.Popen[str]:
    """evaldsl as a command in a session of its own (so the test can signal its group)."""
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(ROOT)}
    env = {k: v for k, v in env.items() if not k.startswith("EVALDSL_JUDGE")}
    return subprocess.Popen(
        [sys.executable, "-m", "evaldsl.tools.cli", "run", "naps.eval", "--no-history", *args],
        cwd=folder,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def _started(folder: Path, jobs: int) -> set[int]:
    """Wait until the slow cases that can run are running; the pids they recorded
    (target workers, their parents, the children they forked)."""
    running = 2 if jobs == 1 else 3  # quick and slow 1; with -j 2 also slow 2
    wait_for_files(folder / "started", running)
    return numbers(folder / "started")


def _read_until(command: subprocess.Popen[str], text: str, within: float = 60.0) -> str:
    """What the command printed up to a line holding `text` (an error after `within`)."""
    assert command.stdout is not None
    fd = command.stdout.fileno()
    seen = b""
    deadline = time.monotonic() + within
    while text.encode() not in seen:
        remaining = deadline - time.monotonic()
        ready, _, _ = select.select([fd], [], [], max(remaining, 0))
        chunk = os.read(fd, 4096) if ready else b""
        if not chunk:
            raise AssertionError(f"{text!r} never printed; printed: {seen.decode()!r}")
        seen += chunk
    return seen.decode()


@pytest.mark.parametrize("jobs", [1, 2])
def test_kill_9_of_evaldsl_leaves_no_process_behind(tmp_path: Path, jobs: int) -> None:
    _suite(tmp_path, fork=True)
    command = _start(tmp_path, "-j", str(jobs))
    pids: set[int] = set()
    try:
        pids = _started(tmp_path, jobs) - {command.pid}
        assert pids, "no target recorded its pid"
        command.kill()  # SIGKILL: evaldsl can clean nothing up itself
        command.communicate(timeout=30)
        assert survivors(pids) == []
    finally:
        command.kill()
        kill_all(pids)


@pytest.mark.parametrize("jobs", [1, 2])
def test_ctrl_c_stops_the_run_writes_what_ran_and_exits_130(tmp_path: Path, jobs: int) -> None:
    _suite(tmp_path)
    command = _start(tmp_path, "-j", str(jobs), "--json", "report.json", "--junit", "junit.xml")
    pids: set[int] = set()
    try:
        pids = _started(tmp_path, jobs) - {command.pid}
        shown = _read_until(command, "naps › quick")  # its result reached evaldsl
        os.killpg(command.pid, signal.SIGINT)  # what a terminal sends on Ctrl-C
        out, err = command.communicate(timeout=60)  # far less than one slow case
        out = shown + out
        assert command.returncode == 130, (out, err)
        assert "Traceback" not in err
        assert "interrupted:" in out
        report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
        assert report["interrupted"] is True
        ran = [c["name"] for s in report["suites"] for c in s["cases"]]
        assert "quick" in ran and not [n for n in ran if n.startswith("slow")]
        assert (tmp_path / "junit.xml").read_text(encoding="utf-8").startswith("<?xml")
        assert survivors(pids) == []
    finally:
        command.kill()
        kill_all(pids)


def test_j_starts_no_more_processes_than_cases(tmp_path: Path) -> None:
    (tmp_path / "nap.py").write_text(NAP, encoding="utf-8")
    (tmp_path / "naps.eval").write_text(
        'case "one"\n  run nap:siblings\n  output >= 1; output <= 2\n\n'
        'case "two"\n  run nap:siblings\n  output >= 1; output <= 2\n',
        encoding="utf-8",
    )
    command = _start(tmp_path, "-j", "8", "--json", "report.json")
    out, err = command.communicate(timeout=120)
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    # at most 2 -j processes at any time (a worker with no case left exits at once, so a
    # case may count only its own)
    found = [a["actual"] for c in report["suites"][0]["cases"] for a in c["assertions"]]
    assert command.returncode == 0 and all(n in (1, 2) for n in found), (found, out, err)
