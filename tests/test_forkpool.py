"""The forked pool of `-j` (`runner/forkpool.py`): every position runs exactly once, in
some worker; results arrive whole; a worker that dies or a case that raises is a crash
for that case only, and a case no worker was left to run is a crash, never lost."""

from __future__ import annotations

import io
import os
import signal
import sys
import time
from pathlib import Path

import pytest

from evaldsl.runner import forkpool
from evaldsl.runner.forkpool import part, run_forked
from evaldsl.runner.results import CaseResult

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="forked workers only")


def _result(position: int, size: int = 0) -> CaseResult:
    return CaseResult(f"case {position}", True, 1.0, 0.0, error="x" * size or None)


def _crash(position: int, why: str) -> CaseResult:
    return CaseResult(f"case {position}", False, 0.0, 0.0, error=why)


def _run(order: list[int], processes: int, run_case: object) -> dict[int, CaseResult]:
    got: dict[int, CaseResult] = {}

    def arrived(position: int, result: CaseResult) -> None:
        assert position not in got, f"position {position} arrived twice"
        got[position] = result

    run_forked(order, processes, run_case, lambda: None, arrived, _crash)  # type: ignore[arg-type]
    return got


def test_every_position_runs_once_in_another_process() -> None:
    parent = os.getpid()

    def run_case(position: int) -> CaseResult:
        assert os.getpid() != parent
        return _result(position, size=position % 7 * 30_000)  # results of up to ~200 KB

    order = list(range(300))[::-1]
    got = _run(order, 3, run_case)
    assert got == {k: _result(k, size=k % 7 * 30_000) for k in order}


def test_more_positions_than_the_task_pipe_holds() -> None:
    # 4 bytes each: 40,000 positions do not fit in a 64 KiB pipe at once
    got = _run(list(range(40_000)), 2, _result)
    assert len(got) == 40_000 and all(r.passed for r in got.values())


def test_a_case_that_raises_is_a_crash_of_that_case_only() -> None:
    def run_case(position: int) -> CaseResult:
        if position == 5:
            raise ValueError("bad case")
        return _result(position)

    got = _run(list(range(20)), 2, run_case)
    assert got[5].error == "worker failed: ValueError: bad case"
    assert all(got[k].passed for k in range(20) if k != 5)


def test_a_worker_that_dies_crashes_its_case_and_the_others_go_on() -> None:
    def run_case(position: int) -> CaseResult:
        if position == 3:
            os.kill(os.getpid(), signal.SIGKILL)
        return _result(position)

    got = _run(list(range(40)), 2, run_case)
    assert got[3].error == "worker failed: the worker was killed by signal 9 (SIGKILL)"
    assert all(got[k].passed for k in range(40) if k != 3)


def test_a_task_sends_its_parts_as_they_are_made_and_keeps_them_if_it_dies() -> None:
    got: list[tuple[int, list[str]]] = []

    def run_task(position: int) -> list[str]:
        part([f"{position}.a"])
        part([f"{position}.b"])
        if position == 1:
            os._exit(3)  # after two parts: they arrived, the task's end did not
        return [f"{position}.end"]

    def crashed(position: int, why: str) -> list[str]:
        return [f"{position} crashed: {why}"]

    run_forked([0, 1, 2], 2, run_task, lambda: None, lambda k, r: got.append((k, r)), crashed)
    by_task = {k: [item for j, r in got if j == k for item in r] for k in range(3)}
    assert by_task[0] == ["0.a", "0.b", "0.end"] and by_task[2] == ["2.a", "2.b", "2.end"]
    assert by_task[1] == ["1.a", "1.b", "1 crashed: worker failed: the worker exited with status 3"]


def test_cases_no_worker_was_left_to_run_are_crashes() -> None:
    def run_case(position: int) -> CaseResult:
        os._exit(3)  # every worker dies on its first case

    got = _run(list(range(10)), 2, run_case)
    assert sorted(got) == list(range(10))
    died = [r for r in got.values() if r.error == "worker failed: the worker exited with status 3"]
    assert len(died) == 2
    assert all(
        r.error in ("worker failed: no worker was left to run it", died[0].error)
        for r in got.values()
    )


def test_no_more_processes_than_positions(tmp_path: Path) -> None:
    def started() -> None:  # each worker, once
        (tmp_path / str(os.getpid())).touch()

    run_forked([0, 1], 8, _result, started, lambda position, result: None, _crash)
    assert len(list(tmp_path.iterdir())) == 2


def test_what_cases_print_is_written_once(
    capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # a line the parent buffered before forking is not written again by each worker; what
    # a worker prints is flushed before it exits (`os._exit` flushes nothing)
    buffered = io.TextIOWrapper(io.BufferedWriter(io.FileIO(os.dup(1), "w"), 1 << 16))
    monkeypatch.setattr(sys, "stdout", buffered)
    sys.stdout.write("parent's line\n")

    def run_case(position: int) -> CaseResult:
        sys.stdout.write(f"printed by case {position}\n")
        return _result(position)

    _run(list(range(6)), 2, run_case)
    buffered.close()
    out = capfd.readouterr().out.splitlines()
    assert sorted(out) == sorted(["parent's line", *(f"printed by case {k}" for k in range(6))])


def _interrupted_run(tmp_path: Path, stopping: object, then: object = None) -> None:
    """Two workers, the parent stopped (Ctrl-C) by the first result while the other
    worker runs its case (its pid in `tmp_path / "running"`); `then()`, if given, is
    called just before."""
    running = tmp_path / "running"

    def run_case(position: int) -> CaseResult:
        if position == 1:
            running.with_suffix(".tmp").write_text(str(os.getpid()))
            running.with_suffix(".tmp").rename(running)
            time.sleep(60)
        deadline = time.monotonic() + 30
        while not running.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        return _result(position)

    def arrived(position: int, result: CaseResult) -> None:
        if callable(then):
            then()
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_forked([0, 1], 2, run_case, lambda: None, arrived, _crash, None, stopping)  # type: ignore[arg-type]


def test_a_stopped_parent_asks_its_workers_to_end_what_they_started(tmp_path: Path) -> None:
    def stopping() -> None:  # in the worker, from the signal's handler
        (tmp_path / f"stopped {os.getpid()}").touch()

    _interrupted_run(tmp_path, stopping)
    assert (tmp_path / f"stopped {(tmp_path / 'running').read_text()}").exists()


def test_a_worker_that_does_not_end_when_asked_is_killed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(forkpool, "STOP_GRACE", 0.2)
    _interrupted_run(tmp_path, lambda: time.sleep(60))  # (killed: the test ends)
    worker = int((tmp_path / "running").read_text())
    assert not Path(f"/proc/{worker}").exists()  # killed and reaped


def test_a_second_ctrl_c_while_workers_are_asked_to_end_kills_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second Ctrl-C in the grace the workers have to end (a user pressing it again when
    the stop seems slow) once left them unkilled, and the parent waited for each to end on
    its own (forever, for a worker stuck in a C call): it kills them now."""
    monkeypatch.setattr(forkpool, "STOP_GRACE", 60.0)
    survived = tmp_path / "survived"

    def stopping() -> None:  # a worker that ends, but long after the second Ctrl-C
        time.sleep(3)
        survived.touch()

    def second_ctrl_c(number: int, frame: object) -> None:
        raise KeyboardInterrupt

    before = signal.signal(signal.SIGALRM, second_ctrl_c)
    try:  # (the second Ctrl-C 0.3 s after the first, in the grace)
        _interrupted_run(tmp_path, stopping, lambda: signal.setitimer(signal.ITIMER_REAL, 0.3))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, before)
    assert not survived.exists()
