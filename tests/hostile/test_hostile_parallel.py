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

from hostile.processes import kill_all, numbers, stat_fields, survivors, wait_for_files

NAP = """
import os, signal, time
from pathlib import Path

MARKS = Path(__file__).parent / "started"


def nap(x):
    child = ""
    if x.get("fork"):
        pid = os.fork()
        if pid == 0:
            time.sleep(600)
            os._exit(0)
        if x.get("stop_child"):
            # stopped before it is first scheduled (the parent runs first after a fork), so
            # it runs nothing, the fork's handlers neither, until the test continues it
            os.kill(pid, signal.SIGSTOP)
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


def _start(folder: Path, *args: str, **extra: str) -> subprocess.Popen[str]:
    """evaldsl as a command in a session of its own (so the test can signal its group),
    with the environment variables `extra` too."""
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(ROOT), **extra}
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


def test_a_forked_child_dies_with_its_worker_even_when_it_starts_after_the_worker_died(
    tmp_path: Path,
) -> None:
    # A child the target forks must die with the worker whether or not it ran before the
    # worker died: one first scheduled after (a loaded machine) found itself an orphan and
    # was taken for a child of someone else, so it lived on, holding evaldsl's stderr.
    (tmp_path / "nap.py").write_text(NAP, encoding="utf-8")
    (tmp_path / "naps.eval").write_text(
        'case "slow"\n  run nap:nap\n'
        f"  input {{name: slow, seconds: {SLOW}, fork: true, stop_child: true}}\n"
        f'  timeout {SLOW * 2}s\n  output == "done"\n',
        encoding="utf-8",
    )
    command = _start(tmp_path)
    pids: set[int] = set()
    try:
        (mark,) = wait_for_files(tmp_path / "started", 1)
        worker, _, child = (int(n) for n in mark.read_text().split())
        pids = {worker, child}
        command.kill()
        assert survivors([worker]) == []
        os.kill(child, signal.SIGCONT)  # its parent is gone before it runs a thing
        assert survivors([child]) == []
        command.communicate(timeout=30)
    finally:
        command.kill()
        kill_all(pids)


#: Loaded at evaldsl's start: every process evaldsl forks stops itself at once, before it
#: runs anything of its own (its processes started by exec run no fork handlers)
STOP_FORKED = """
import os, signal

if os.environ.pop("STOP_FORKED", None):
    os.register_at_fork(after_in_child=lambda: os.kill(os.getpid(), signal.SIGSTOP))
"""


def _children_stopped(parent: int, count: int, within: float = 60.0) -> list[int]:
    deadline = time.monotonic() + within
    while True:
        found = []
        for entry in filter(str.isdigit, os.listdir("/proc")):
            fields = stat_fields(entry)
            if fields is not None and int(fields[1]) == parent and fields[0] == "T":
                found.append(int(entry))
        if len(found) >= count:
            return found
        assert time.monotonic() < deadline, f"{len(found)} of {count} -j processes stopped"
        time.sleep(0.05)


def test_a_j_process_first_scheduled_after_evaldsl_died_runs_nothing(tmp_path: Path) -> None:
    # A -j process first scheduled after evaldsl was killed (a loaded machine) finds
    # itself an orphan and the cases evaldsl wrote in the task pipe: it must start none
    # (a live target's effects for no one) and die at once.
    _suite(tmp_path)
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(STOP_FORKED, encoding="utf-8")
    site = f"{tmp_path / 'site'}{os.pathsep}{ROOT}"
    command = _start(tmp_path, "-j", "2", PYTHONPATH=site, STOP_FORKED="1")
    workers: list[int] = []
    try:
        workers = _children_stopped(command.pid, 2)
        command.kill()
        command.wait(timeout=30)
        for pid in workers:
            os.kill(pid, signal.SIGCONT)
        assert survivors(workers) == []
        command.communicate(timeout=30)
        assert not (tmp_path / "started").exists()  # no case ran
    finally:
        command.kill()
        kill_all(workers)
        if (tmp_path / "started").exists():
            kill_all(numbers(tmp_path / "started"))


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
