"""Score traces on a Dask cluster: a bag API for Dask users, and the engine of `score --dask`.

Takes a program (an `evaldsl.Program` or its text) and traces (a dask bag of paths, or the
command's stream of items) and gives one `TraceRecord` per trace, the same dicts the
command prints as JSON lines. Needs `pip install 'evaldsl[dask]'` (dask and distributed).

Workers receive the program's text and compile it once each (`scoring.compiled`), never a
pickled closure. Paths are read by the workers: every worker must see them (a shared file
system; a relative path is relative to the worker's working folder).

    import dask.bag as db
    import evaldsl, evaldsl.dask

    program = evaldsl.compile(open("checks.eval").read(), path="checks.eval")
    paths = db.from_sequence(sorted(glob.glob("traces/*.json")), partition_size=1000)
    results = evaldsl.dask.score(program, paths)          # a bag of records
    failing = results.filter(lambda r: not r["passed"]).pluck("trace").compute()
    summary = evaldsl.dask.summarize(program, results).compute()   # a `Summary`

For the command, `ClusterEngine` sends batches as tasks and reads them back with
`as_completed`; a worker that dies has its tasks run again by the scheduler (up to
`distributed.scheduler.allowed-failures`), and `engines.in_order` lets each batch's records
out once, in order, so no trace is lost or counted twice.
"""

from __future__ import annotations

import functools
import os
import pickle
import time
import uuid
from collections.abc import Iterable, Iterator
from typing import Any

import dask
import dask.bag as db
from dask.delayed import Delayed
from distributed import Client, Future, LocalCluster, as_completed

from evaldsl.api import Program
from evaldsl.score.engines import WINDOW_PER_WORKER, Batch, Outcome, batches, in_order
from evaldsl.score.scoring import (
    ProgramSpec,
    TraceRecord,
    compiled,
    compiled_program,
    score_batch,
)
from evaldsl.score.sources import Item
from evaldsl.score.summary import DEFAULT_SAMPLES, Summary

#: Traces per Dask task: a task costs the scheduler and the client about a millisecond,
#: so a batch is a few hundred milliseconds of work (see the README's measurements).
CLUSTER_BATCH = 1000
#: How many times a batch whose records were lost with a worker is sent again.
RESEND = 4
#: How often the command looks at its client's connection while no task is done.
POLL_SECONDS = 0.01


def spec_of(
    program: Program | str, *, judge: str | None = None, judge_cache: str | None = None
) -> ProgramSpec:
    """What workers compile: a program's text and path, and the judge settings.

    The program is compiled here first, so a mistake is an `EvalDslError` on the client
    and not one error per task.
    """
    if isinstance(program, Program):
        spec = ProgramSpec(program.source.text, program.source.path, judge, judge_cache)
    else:
        spec = ProgramSpec(program, "<string>", judge, judge_cache)
    compiled(spec)
    return spec


def score(
    program: Program | str,
    paths: db.Bag,
    *,
    judge: str | None = None,
    judge_cache: str | None = None,
) -> db.Bag:
    """A bag of `TraceRecord`s, one per path of `paths`, partition by partition.

    Each partition is one task (make partitions of a few hundred traces or more). The
    records are plain dicts: `.to_dataframe()`, `.map(json.dumps).to_textfiles(...)` and
    `.filter(...)` work on them.
    """
    spec = spec_of(program, judge=judge, judge_cache=judge_cache)
    results: db.Bag = paths.map_partitions(score_partition, spec)
    return results


def score_partition(
    paths: Iterable[str | os.PathLike[str]], spec: ProgramSpec
) -> list[TraceRecord]:
    """Score one partition of paths on a worker."""
    return score_batch(spec, [Item(os.fspath(p)) for p in paths])


def summarize(program: Program | str, results: db.Bag, samples: int = DEFAULT_SAMPLES) -> Delayed:
    """A delayed `Summary` of a bag of records: each partition counted where it is, the
    partial summaries merged in partition order."""
    spec = spec_of(program)
    reduced = results.reduction(
        functools.partial(partition_summary, spec, samples), merge_summaries
    )
    delayed: Delayed = reduced.to_delayed()
    return delayed


def partition_summary(spec: ProgramSpec, samples: int, records: Iterable[TraceRecord]) -> Summary:
    """The summary of one partition's records."""
    summary = Summary.of(compiled_program(spec), samples)
    for rec in records:
        summary.add(rec)
    return summary


def merge_summaries(parts: Iterable[Summary]) -> Summary:
    """Partial summaries merged in order."""
    parts = list(parts)
    merged = parts[0]
    for part in parts[1:]:
        merged = merged.merge(part)
    return merged


# --- the command's engine --------------------------------------------------------------------


def connect(address: str) -> tuple[Client, LocalCluster | None]:
    """A client for `--dask ADDRESS` (a scheduler address) or `--dask local[:N]` (a
    `LocalCluster` of N single-threaded worker processes, one per core by default, without
    dashboard or profiler, started here and closed with the client). Sets this process's
    `distributed.admin.low-level-log-length` to 0, so its memory stays flat."""
    # Each connection keeps its last 1,000 messages under 1 MB for debugging, and a
    # task's message carries its batch: ~100 MB per connection, growing with the run until
    # the log is full. This process keeps none (the client's, and a LocalCluster's
    # scheduler's, which runs here).
    dask.config.set({"distributed.admin.low-level-log-length": 0})
    if address == "local" or address.startswith("local:"):
        workers = parse_local(address) or os.cpu_count() or 1
        # The workers' statistical profiler samples every task's stack 100 times a second
        # for a dashboard this cluster does not serve: ~10% of the CPU of scoring, measured.
        with dask.config.set({"distributed.worker.profile.enabled": False}):
            cluster = LocalCluster(
                n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
            )
        return Client(cluster), cluster
    return Client(address), None


def prepare(client: Client, spec: ProgramSpec) -> None:
    """Compile the program on every worker now, imports included, so the first batches do
    not carry that cost and a worker that cannot compile it is found before any trace is
    sent (a worker that joins later compiles on its first batch)."""
    client.run(compile_here, spec)


def compile_here(spec: ProgramSpec) -> None:
    """Compile a spec in this process, keeping it for the batches to come."""
    compiled(spec)


def worker_count(client: Client) -> int:
    """How many workers the client's cluster has now."""
    workers: dict[str, int] = client.nthreads()
    return len(workers)


def close(client: Client, cluster: LocalCluster | None) -> None:
    """Close the client, and the cluster when it was started for the run."""
    client.close()
    if cluster is not None:
        cluster.close()


def parse_local(address: str) -> int | None:
    """The N of `local:N` (None for `local` or an address); a ValueError when N is bad."""
    if not address.startswith("local:"):
        return None
    count = address.partition(":")[2]
    if not count.isdigit() or int(count) < 1:
        raise ValueError(f"--dask local:N takes a number of workers ≥ 1, not {count!r}")
    return int(count)


class ClusterEngine:
    """Batches scored as Dask tasks (an `engines.Engine`)."""

    def __init__(self, client: Client, spec: ProgramSpec) -> None:
        self.client = client
        self.spec = spec
        self.token = uuid.uuid4().hex
        self.results = as_completed(with_results=True, raise_errors=False)
        self.batches: dict[str, Batch] = {}
        self.resent: dict[int, int] = {}  # batch number → times sent again

    def submit(self, batch: Batch) -> None:
        # A key of our own per batch and attempt: the scheduler knows each task by it, and
        # a task it retries itself keeps it.
        attempt = self.resent.get(batch.number, 0)
        key = f"evaldsl-score-{self.token}-{batch.number}-{attempt}"
        packed = pickle.dumps(batch.items, protocol=pickle.HIGHEST_PROTOCOL)
        future = self.client.submit(score_packed, self.spec, packed, key=key)
        self.batches[key] = batch
        self.results.add(future)

    def completed(self) -> list[tuple[Batch, Outcome]]:
        found: list[tuple[Batch, Outcome]] = []
        while not found:
            done = [self._next()]
            while self.results.has_ready():
                done.append(next(self.results))
            for future, result in done:
                batch = self.batches.pop(future.key, None)
                future.release()
                if batch is None:
                    continue
                lost = future.status not in ("finished", "error")
                if lost:
                    self._check_connected()
                if lost and self.resent.get(batch.number, 0) < RESEND:
                    # Neither records nor an exception of the task's own: the worker that
                    # held them died before they were fetched (the future ends "lost" or
                    # "cancelled" as the scheduler forgets them), so the batch goes again.
                    self.resent[batch.number] = self.resent.get(batch.number, 0) + 1
                    self.submit(batch)
                    continue
                found.append((batch, outcome(future, result)))
        return found

    def _next(self) -> Any:
        """The next task done, waiting while the client is connected. `as_completed`
        alone waits for good once the scheduler is gone: a task sent again while the
        client reconnects, or after it gave up and closed, never completes."""
        while not self.results.has_ready():
            self._check_connected()
            time.sleep(POLL_SECONDS)
        return next(self.results)  # (a future and its result)

    def _check_connected(self) -> None:
        """Raise `SchedulerLost` unless the client is connected to its scheduler. When the
        connection drops, the client cancels every task it had (they are lost with the
        scheduler's state), then tries to reconnect (`distributed.comm.timeouts.connect`)
        and closes: the batches out can be sent nowhere."""
        status = self.client.status
        if status != "running":
            raise SchedulerLost(
                f"lost the connection to the Dask scheduler (the client is {status}): "
                "the batches out were lost with it"
            )

    def window(self) -> int:
        """Batches to keep out: a few per worker thread of the cluster."""
        per_worker: dict[str, int] = self.client.nthreads()
        threads = sum(per_worker.values())
        return max(WINDOW_PER_WORKER, WINDOW_PER_WORKER * threads)


class SchedulerLost(RuntimeError):
    """The client lost its scheduler mid-run: the command stops, its output closed with
    the summary of what was scored (exit 2)."""


def score_packed(spec: ProgramSpec, packed: bytes) -> bytes:
    """The command's task: a batch of items in, its records out, each pickled into one
    `bytes` value. Dask walks lists and tuples it is given, looking for futures (a
    thousand items and records per task made the client spend more per trace than the
    scoring did); bytes it only moves."""
    records = score_batch(spec, pickle.loads(packed))
    return pickle.dumps(records, protocol=pickle.HIGHEST_PROTOCOL)


def outcome(future: Future[Any], result: Any) -> Outcome:
    """A finished task's records, or the exception it ended with."""
    if future.status == "finished":
        records: list[TraceRecord] = pickle.loads(result)
        return records
    if isinstance(result, BaseException):
        return result
    if isinstance(result, tuple) and len(result) == 3 and isinstance(result[1], BaseException):
        return result[1]  # (type, exception, traceback) of an erred task
    return RuntimeError(f"task ended as {future.status}")


def score_on_cluster(
    client: Client, spec: ProgramSpec, items: Iterable[Item], *, batch_size: int = CLUSTER_BATCH
) -> Iterator[TraceRecord]:
    """Score every item on the client's cluster; records in item order, each once."""
    engine = ClusterEngine(client, spec)
    yield from in_order(engine, batches(items, batch_size), engine.window(), compiled(spec))


def started(address: str) -> tuple[Client, LocalCluster | None, float]:
    """`connect`, and how long it took in seconds."""
    begin = time.perf_counter()
    client, cluster = connect(address)
    return client, cluster, time.perf_counter() - begin
