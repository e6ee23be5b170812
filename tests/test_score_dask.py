"""Scoring on a real Dask cluster: a `distributed.LocalCluster` of two worker processes
gives the serial records, loses and doubles nothing when a worker is killed mid-run, and
serves the bag API and `evaldsl score --dask`.

dask and distributed are in the dev extra: a missing one fails this module, never skips it.
"""

from __future__ import annotations

import json
import logging
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dask.bag as db
import pytest
from distributed import Client, LocalCluster

import evaldsl
import evaldsl.dask
from evaldsl.score import ProgramSpec, cluster, items, score_items
from evaldsl.score.command import quiet_dask_logs
from evaldsl.score.scoring import TraceRecord
from tests.clitools import ROOT, run_evaldsl
from tests.score_traces import PROGRAM, write_traces

SPEC = ProgramSpec(PROGRAM, "checks.eval")
COUNT = 3000


@pytest.fixture(scope="module")
def client() -> Iterator[Client]:
    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        Client(cluster) as c,
    ):
        yield c


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("traces")
    write_traces(folder, COUNT, seed=11)
    return folder


@pytest.fixture(scope="module")
def expected(traces: Path) -> list[TraceRecord]:
    return list(score_items(SPEC, items([str(traces)])))


def test_the_cluster_gives_the_serial_records(
    client: Client, traces: Path, expected: list[TraceRecord]
) -> None:
    assert len(expected) == COUNT
    assert {r["passed"] for r in expected} == {True, False}
    got = list(cluster.score_on_cluster(client, SPEC, items([str(traces)]), batch_size=64))
    assert got == expected


def test_a_worker_killed_mid_run_loses_and_doubles_nothing(
    client: Client, traces: Path, expected: list[TraceRecord]
) -> None:
    pids: dict[str, int] = client.run(os.getpid)
    assert len(pids) == 2
    got: list[TraceRecord] = []
    killed: list[int] = []  # the processes of the workers killed
    lost: list[str] = []  # our tasks the scheduler lost with them
    stream = cluster.score_on_cluster(client, SPEC, items([str(traces)]), batch_size=25)
    for rec in stream:
        got.append(rec)
        if not lost and len(killed) < KILLS and len(got) >= 100 and len(got) % 25 == 1:
            # While this loop holds the stream no batch is taken, so what a worker runs or
            # holds now is mostly still there when it is killed. Looked for at the first
            # record of every batch from the fifth on: the stream gathers every batch done
            # when it waits, and on a quiet machine all that are out may be done. A result
            # gathered in the background between the look and the kill can leave the
            # killed worker holding nothing: then, once the nanny has restarted it, a
            # worker is killed again at a later batch.
            victim = busiest(client, pids)
            if victim:
                killed.append(pids[victim])
                os.kill(pids[victim], signal.SIGKILL)
                lost = lost_with(client, victim)  # (once the scheduler removed it)
                client.wait_for_workers(2, timeout=60)  # the nanny restarted it
                pids = client.run(os.getpid)
    assert killed, "no worker ran or held a scoring task at any batch's first record"
    assert lost, f"none of {len(killed)} workers killed held a scoring task when it died"
    assert got == expected
    assert len({r["trace"] for r in got}) == COUNT
    assert not set(killed) & set(pids.values())


#: Workers killed at most, one at a time, until one is killed holding a scoring task.
KILLS = 4


def lost_with(client: Client, worker: str) -> list[str]:
    """Our tasks the scheduler lost with `worker` (processing there, or results only it
    held), from its `remove-worker` event (waited for: it comes as the scheduler notices)."""
    deadline = time.monotonic() + 30
    while True:
        removed = [m for _, m in client.get_events(worker) if m.get("action") == "remove-worker"]
        if removed or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert removed, f"the scheduler never removed the killed worker {worker}"
    return scoring([*removed[0]["processing-tasks"], *removed[0]["lost-computed-tasks"]])


def busiest(client: Client, pids: dict[str, int]) -> str:
    """The worker that runs or holds the most of our tasks now ("" when none does)."""
    held = {w: len(ours(client, w)) for w in pids}
    victim = max(held, key=lambda w: held[w])
    return victim if held[victim] else ""


def ours(client: Client, worker: str) -> list[str]:
    """The scoring tasks a worker runs or holds the results of."""
    held = client.processing().get(worker, ())
    stored = client.has_what().get(worker, ())
    return scoring([*held, *stored])


def scoring(keys: list[Any]) -> list[str]:
    """The keys of `keys` that are scoring tasks (`ClusterEngine.submit` names them)."""
    return [str(k) for k in keys if str(k).startswith("evaldsl-score-")]


def test_the_bag_api_scores_a_bag_of_paths(
    client: Client, traces: Path, expected: list[TraceRecord]
) -> None:
    paths = [r["trace"] for r in expected]
    program = evaldsl.compile(PROGRAM, path="checks.eval")
    bag = db.from_sequence(paths, partition_size=300)
    results = evaldsl.dask.score(program, bag)
    assert results.compute() == expected
    summary = evaldsl.dask.summarize(program, results).compute()
    serial = evaldsl.score.Summary.of(program)
    for rec in expected:
        serial.add(rec)
    assert summary.to_json() == {
        **serial.to_json(),
        "mean_score": pytest.approx(serial.to_json()["mean_score"]),
    }
    failing = results.filter(lambda r: not r["passed"]).pluck("trace").compute()
    assert failing == [r["trace"] for r in expected if not r["passed"]]


def test_the_bag_api_refuses_a_program_with_errors_on_the_client() -> None:
    with pytest.raises(evaldsl.EvalDslError):
        evaldsl.dask.score("tool x caled", db.from_sequence(["a.json"]))


def test_the_command_on_a_scheduler_address(client: Client, traces: Path, tmp_path: Path) -> None:
    program = tmp_path / "checks.eval"
    program.write_text(PROGRAM)
    address = client.scheduler.address
    serial = run_evaldsl("score", str(program), str(traces), "--format", "jsonl")
    cluster = run_evaldsl(
        "score", str(program), str(traces), "--format", "jsonl", "--dask", address
    )
    assert cluster.returncode == serial.returncode == 1, cluster.stderr
    assert cluster.stdout == serial.stdout
    assert f"dask: connected to {address} with 2 workers" in cluster.stderr


def test_the_command_starts_a_local_cluster(tmp_path: Path) -> None:
    program = tmp_path / "checks.eval"
    program.write_text(PROGRAM)
    write_traces(tmp_path / "t", 40, seed=3)
    serial = run_evaldsl("score", str(program), str(tmp_path / "t"), "--format", "json")
    local = run_evaldsl(
        "score", str(program), str(tmp_path / "t"), "--format", "json", "--dask", "local:2"
    )
    assert local.returncode == serial.returncode, local.stderr
    assert json.loads(local.stdout) == json.loads(serial.stdout)
    assert "dask: LocalCluster started with 2 workers in" in local.stderr


@pytest.mark.parametrize("address", ["tcp://127.0.0.1:9", "weird://127.0.0.1:9"])
def test_an_unreachable_scheduler_exits_2(tmp_path: Path, address: str) -> None:
    program = tmp_path / "checks.eval"
    program.write_text(PROGRAM)
    (tmp_path / "t.json").write_text("[]")
    result = run_evaldsl(
        "score",
        str(program),
        str(tmp_path / "t.json"),
        "--dask",
        address,
        env={"DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "2s"},
    )
    assert result.returncode == 2, result.stderr
    assert f"cannot reach the Dask scheduler at {address}: " in result.stderr
    assert "Traceback" not in result.stderr


def test_a_file_of_a_trace_per_line_with_a_bad_line_scores_as_in_this_process(
    client: Client, tmp_path: Path
) -> None:
    # a bad line is its own trace's error record on the workers too, not the file's
    good = b'{"trace_id": "t1", "events": [{"type": "tool.call", "name": "search"}]}\n'
    path = tmp_path / "exported.jsonl"
    path.write_bytes(good + b"42\n" + good + b'{"events": [')
    expected = list(score_items(SPEC, items([str(path)])))
    assert [r["trace"] for r in expected] == [f"{path}:{n}" for n in (1, 2, 3, 4)]
    assert [r["error"] is None for r in expected] == [True, False, True, False]
    got = list(cluster.score_on_cluster(client, SPEC, items([str(path)]), batch_size=1))
    assert got == expected


DASK_SCHEDULER = [sys.executable, "-m", "distributed.cli.dask_scheduler"]
#: The client gives up reconnecting after this (`distributed.comm.timeouts.connect`).
QUICK = {"DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "2s", "NO_COLOR": "1"}


def test_a_scheduler_lost_mid_run_ends_the_command_with_exit_2_and_closed_output(
    traces: Path, tmp_path: Path
) -> None:
    # A scheduler of its own, in a process this test kills; the command waited for good
    # (as_completed on tasks that would never finish) with its output cut mid-array.
    env = {**os.environ, **QUICK, "PYTHONPATH": str(ROOT)}
    started: list[subprocess.Popen[str]] = []
    try:
        scheduler = subprocess.Popen(
            [*DASK_SCHEDULER, "--host", "127.0.0.1", "--port", "0", "--no-dashboard"],
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        started.append(scheduler)
        address = scheduler_address(scheduler)
        worker = [sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads"]
        started.append(
            subprocess.Popen([*worker, "1", "--no-dashboard"], stderr=subprocess.DEVNULL, env=env)
        )
        with Client(address, timeout=30) as watcher:
            watcher.wait_for_workers(1, timeout=30)
        program = tmp_path / "checks.eval"
        program.write_text(PROGRAM)
        dask = ["--dask", address]
        command = [sys.executable, "-m", "evaldsl.tools.cli", "score", str(program)]
        log = tmp_path / "stderr.txt"
        with log.open("w") as stderr:
            score = subprocess.Popen(
                [*command, str(traces), "--format", "json", "--batch-size", "5", *dask],
                stdout=subprocess.PIPE,
                stderr=stderr,
                text=True,
                env=env,
            )
        started.append(score)
        assert score.stdout is not None
        head = [score.stdout.readline() for _ in range(60)]  # records come: kill mid-run
        scheduler.kill()
        rest: list[str] = []  # read to its end in a thread: the command hung here
        reader = threading.Thread(target=lambda: rest.append(score.stdout.read()), daemon=True)
        reader.start()
        reader.join(timeout=40)
        assert rest, "the command still runs 40 s after its scheduler was killed"
        score.wait(timeout=10)
        err = log.read_text()
    finally:
        for process in started:
            process.kill()
            process.wait()
    assert score.returncode == 2, err
    document = json.loads("".join(head) + rest[0])  # closed: a whole document
    scored = len(document["traces"])
    assert 0 < scored < COUNT
    assert document["summary"]["traces"] == scored
    assert f"the run stopped after {scored:,} traces: SchedulerLost: lost the connection" in err
    # said once, in the command's words: none of distributed's logged tracebacks
    assert "Traceback" not in err and "distributed." not in err, err


def test_distributeds_logs_are_quiet_for_the_command_then_as_they_were(
    caplog: pytest.LogCaptureFixture,
) -> None:
    logger = logging.getLogger("distributed.batched")  # (it takes distributed's level)
    before = logging.getLogger("distributed").level
    with quiet_dask_logs():
        logger.error("Batched Comm Closed", exc_info=ValueError("lost"))
        logging.getLogger("distributed.client").error("Failed to reconnect")
    assert caplog.records == []
    assert logging.getLogger("distributed").level == before
    logger.error("Batched Comm Closed")
    assert [r.getMessage() for r in caplog.records] == ["Batched Comm Closed"]


def scheduler_address(scheduler: subprocess.Popen[str]) -> str:
    """The address a `dask scheduler --port 0` says it listens at."""
    assert scheduler.stderr is not None
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        found = re.search(r"Scheduler at:\s+(\S+)", scheduler.stderr.readline())
        if found:
            return found.group(1)
    raise AssertionError("the scheduler never said where it listens")


def test_workers_that_price_by_another_table_are_an_error_not_other_costs(
    client: Client, tmp_path: Path
) -> None:
    # the cluster's workers read their own environment, without the client's
    # EVALDSL_PRICES: a program that reads `cost` would be priced by the shipped table
    # there, and by the user's here (a cost that depends on where a trace was scored)
    trace = tmp_path / "t" / "run.jsonl"
    trace.parent.mkdir()
    trace.write_bytes((ROOT / "examples/weather/cassettes/xiamen.jsonl").read_bytes())
    table = tmp_path / "prices.json"
    table.write_text(json.dumps({"models": {"gpt-4o-mini": {"input": 10, "output": 10}}}))
    address = client.scheduler.address
    for statement, refused in (("cost < $1", True), ("tokens < 100000", False)):
        program = tmp_path / "checks.eval"
        program.write_text(statement + "\n")
        done = run_evaldsl(
            "score",
            str(program),
            str(trace.parent),
            "--format",
            "jsonl",
            "--dask",
            address,
            env={"EVALDSL_PRICES": str(table)},
        )
        if refused:
            assert done.returncode == 2, done.stderr
            assert (
                "the Dask workers cannot compile the program: this process prices `cost` "
                "by the shipped table, the one that sent the program by "
                f"EVALDSL_PRICES={table}: set EVALDSL_PRICES alike" in done.stderr
            ), done.stderr
        else:
            assert done.returncode == 0, done.stderr
            assert json.loads(done.stdout.splitlines()[0])["passed"] is True
