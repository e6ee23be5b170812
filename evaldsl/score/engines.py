"""Run the scoring of a stream of traces: in this process, in N processes, or elsewhere.

Takes a `ProgramSpec` and a stream of `Item`s and gives their `TraceRecord`s in the order
of the items, whatever ran them. In this process items are scored one at a time, each
record made as it is wanted. For other processes items are cut into `Batch`es; an
`Engine` runs batches (a process pool here; a Dask cluster in `evaldsl.dask`) and
`in_order` keeps at most `window` batches out at a time, puts finished ones back in order
and lets each batch out exactly once, so memory is bounded by the window, not by the
number of traces, and the output is the serial run's.

Every trace gets exactly one record: a batch that comes back as an exception (a worker
that died twice, a task the cluster gave up on), or with records of other traces than it
was sent with, becomes an error record for each of its traces.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import NamedTuple, Protocol

from evaldsl.api import CompiledCase
from evaldsl.score.scoring import (
    ProgramSpec,
    TraceRecord,
    compiled,
    crashed_record,
    score_batch,
    score_item,
)
from evaldsl.score.sources import Item

#: Traces per task sent to a local worker process: big enough that the round trip is a
#: small part of the work (a small trace takes ~0.1–1 ms), small enough to spread evenly.
LOCAL_BATCH = 100
#: Batches out per worker process: enough that a worker never waits for the parent.
WINDOW_PER_WORKER = 4
#: Tries of a batch whose worker process died (Dask's default `allowed-failures` + 1).
MAX_ATTEMPTS = 4

Outcome = list[TraceRecord] | BaseException


class Batch(NamedTuple):
    """Consecutive items of the stream; `number` counts batches from 0."""

    number: int
    items: list[Item]


class Engine(Protocol):
    """Something that runs batches elsewhere and says which ones finished."""

    def submit(self, batch: Batch) -> None:
        """Start scoring a batch."""

    def completed(self) -> list[tuple[Batch, Outcome]]:
        """Wait until at least one submitted batch is done; give every one done by then."""


def batches(items: Iterable[Item], size: int) -> Iterator[Batch]:
    """The items cut into batches of `size` (the last one shorter)."""
    chunk: list[Item] = []
    index = 0
    for item in items:
        chunk.append(item)
        if len(chunk) == size:
            yield Batch(index, chunk)
            index += 1
            chunk = []
    if chunk:
        yield Batch(index, chunk)


def in_order(
    engine: Engine, work: Iterable[Batch], window: int, case: CompiledCase
) -> Iterator[TraceRecord]:
    """Each batch's records, in batch order, with at most `window` batches out at once.

    A batch counts as out from its submission until its records are let out, so a slow
    batch holds the others back instead of letting finished ones pile up. A batch that
    completes again (a task retried after its first result was in) is ignored.
    """
    source = iter(work)
    out: dict[int, Batch] = {}  # submitted and not yet let out
    done: dict[int, list[TraceRecord]] = {}
    next_index = 0
    exhausted = False
    while True:
        while not exhausted and len(out) < window:
            batch = next(source, None)
            if batch is None:
                exhausted = True
            else:
                out[batch.number] = batch
                engine.submit(batch)
        if not out:
            return
        for batch, outcome in engine.completed():
            if batch.number in out and batch.number not in done:
                done[batch.number] = checked(batch, outcome, case)
        while next_index in done:
            yield from done.pop(next_index)
            del out[next_index]
            next_index += 1


def checked(batch: Batch, outcome: Outcome, case: CompiledCase) -> list[TraceRecord]:
    """The batch's records if they are its items' (`answers`); else error records."""
    if isinstance(outcome, BaseException):
        reason = f"not scored: the worker scoring it failed ({type(outcome).__name__}: {outcome})"
        return [error_record(case, item.key, reason) for item in batch.items]
    if not answers(outcome, batch.items):
        reason = "not scored: its batch came back with the results of other traces"
        return [error_record(case, item.key, reason) for item in batch.items]
    return outcome


def answers(records: list[TraceRecord], items: list[Item]) -> bool:
    """Whether `records` are those of `items`, in order: for each item, one record keyed
    as it is, or one or more keyed `KEY [SAMPLE]` (the samples of an Inspect AI log) or
    `KEY:LINE` (the lines of a file of a trace per line)."""
    at = 0
    for item in items:
        if at < len(records) and records[at]["trace"] == item.key:
            at += 1
            continue
        first = at
        while at < len(records) and _part_of(records[at]["trace"], item.key):
            at += 1
        if at == first:
            return False
    return at == len(records)


def _part_of(trace: str, key: str) -> bool:
    """Whether a record's `trace` is one of the traces the file `key` holds."""
    rest = trace.removeprefix(key)
    return rest != trace and (
        rest.startswith(" [") or (rest[:1] == ":" and rest[1:].isascii() and rest[1:].isdigit())
    )


def error_record(case: CompiledCase, key: str, reason: str) -> TraceRecord:
    """The record of a trace that was never scored, with the reason."""
    return crashed_record(key, None, case, f"{key}: {reason}")


class PoolEngine:
    """Batches scored by N worker processes; each compiles the program once.

    Workers start with `forkserver` (safe in a parent that has threads, as a test process
    running a Dask cluster does). When a worker dies the pool is broken; a new pool takes
    the batches that were out, and a batch out on `MAX_ATTEMPTS` broken pools is given up
    (error records), so a trace that kills its worker cannot stop the run.
    """

    def __init__(self, spec: ProgramSpec, jobs: int) -> None:
        self.spec = spec
        self.jobs = jobs
        self.pool = self._new_pool()
        self.futures: dict[Future[list[TraceRecord]], Batch] = {}
        self.attempts: dict[int, int] = {}
        self.given_up: list[tuple[Batch, Outcome]] = []

    def _new_pool(self) -> ProcessPoolExecutor:
        methods = multiprocessing.get_all_start_methods()
        method = "forkserver" if "forkserver" in methods else "spawn"  # spawn: Windows
        return ProcessPoolExecutor(self.jobs, mp_context=multiprocessing.get_context(method))

    def submit(self, batch: Batch) -> None:
        self.attempts[batch.number] = self.attempts.get(batch.number, 0) + 1
        try:
            self.futures[self.pool.submit(score_batch, self.spec, batch.items)] = batch
        except BrokenProcessPool:  # a worker died since the last look: this one never left
            self.attempts[batch.number] -= 1
            self._restart([batch])

    def _restart(self, unsent: list[Batch]) -> None:
        """Every batch still out on a broken pool is lost with it: start a new pool and
        send them again, or give up on those already sent MAX_ATTEMPTS times."""
        lost = sorted([*self.futures.values(), *unsent])
        self.futures.clear()
        self.pool.shutdown(wait=False, cancel_futures=True)
        self.pool = self._new_pool()
        for batch in lost:
            if self.attempts.get(batch.number, 0) < MAX_ATTEMPTS:
                self.submit(batch)
            else:
                reason = f"a worker process died {MAX_ATTEMPTS} times while scoring this batch"
                self.given_up.append((batch, BrokenProcessPool(reason)))

    def completed(self) -> list[tuple[Batch, Outcome]]:
        results: list[tuple[Batch, Outcome]] = []
        if not self.given_up:
            finished, _ = wait(self.futures, return_when=FIRST_COMPLETED)
            broken = False
            for future in finished:
                error = future.exception()
                if isinstance(error, BrokenProcessPool):
                    broken = True
                else:
                    batch = self.futures.pop(future)
                    results.append((batch, error if error is not None else future.result()))
            if broken:
                self._restart([])
        results += self.given_up
        self.given_up = []
        for batch, _ in results:
            self.attempts.pop(batch.number, None)
        return results

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


def score_items(
    spec: ProgramSpec, items: Iterable[Item], *, jobs: int = 1, batch_size: int = LOCAL_BATCH
) -> Iterator[TraceRecord]:
    """Score every item, in this process (`jobs=1`) or in `jobs` processes; the records
    come in item order either way.

    >>> spec = ProgramSpec("tool search called once")
    >>> calls = b'[{"type": "tool.call", "name": "fetch"}]'
    >>> [r["statuses"] for r in score_items(spec, [Item("<stdin>:1", calls, 1)])]
    [['fail']]
    >>> [r["statuses"] for r in score_items(spec, [Item("<stdin>:2", b"[]", 2)])]
    [['error']]
    """
    case = compiled(spec)
    if jobs <= 1:
        # One trace at a time, not a batch's list: a record is written and let go before
        # the next is made, so records never pile up to outlive the collector's young
        # generations (with thousands of assertions, a batch of them is a million dicts,
        # each full collection then walks the program as well).
        for item in items:
            yield from score_item(case, item)
        return
    engine = PoolEngine(spec, jobs)
    try:
        yield from in_order(engine, batches(items, batch_size), jobs * WINDOW_PER_WORKER, case)
    finally:
        engine.close()
