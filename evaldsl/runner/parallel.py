"""Running cases in worker processes (`-j N`), with nothing done twice.

Takes the (suite, case index) pairs to run, in report order, and a function that runs one
case, and gives each case's result, in that same order (so the report, and the console's
progress lines, are the serial run's). How, and why:

- Workers are forked from the process that loaded the suites, so they inherit the loaded,
  checked and compiled suites: no worker reads a suite file again or repeats a check-time
  scan of a recording (with 120 cassettes that redone work made `-j 2` slower than
  `-j 1`). Before forking, the loaded objects are moved out of the garbage collector's
  reach (`gc.freeze`), so workers do not copy the pages a collection would touch.
- Cases are scheduled largest first (by the size of their recorded run; live targets
  first of all, since their time is unknown), so one big case does not start last and
  leave the other workers idle at the end.
- Where processes cannot be forked (Windows, or a platform whose default is `spawn`
  with fork unavailable), each worker loads each suite once, as before.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any

from evaldsl.runner.results import CaseResult
from evaldsl.suites.build import load_suite
from evaldsl.suites.model import Case, Suite

Work = Sequence[tuple[Suite, int]]
RunCase = Callable[[Case, Suite], CaseResult]

#: The work of the current parallel run, read by forked workers (set before forking).
_SHARED: list[tuple[Suite, int]] = []
_RUN_CASE: list[RunCase] = []
#: Suites a spawned worker loaded (where fork is not available).
_LOADED: dict[str, Suite] = {}


def case_size(suite: Suite, case: Case) -> float:
    """How long a case is expected to take, for scheduling: its recording's size in
    bytes; a live target (unknown) counts as the largest."""
    spec = case.source
    if spec is None or case.error is not None:
        return 0.0
    if spec.kind == "run":
        return float("inf")
    if spec.path is None:
        return 0.0
    try:
        return float(os.stat(suite.base_dir / spec.path).st_size)
    except OSError:
        return 0.0


def largest_first(work: Work) -> list[int]:
    """The positions of `work`, in the order to start them: largest case first (ties in
    report order)."""
    sizes = [case_size(s, s.cases[i]) for s, i in work]
    return sorted(range(len(work)), key=lambda k: -sizes[k])


def _forked_case(position: int) -> CaseResult:
    suite, index = _SHARED[position]
    return _RUN_CASE[0](suite.cases[index], suite)


def _spawned_case(path: str, index: int, judge_factory: Any, run_case: RunCase) -> CaseResult:
    suite = _LOADED.get(path)
    if suite is None:
        judge = judge_factory() if judge_factory is not None else None
        suite = _LOADED[path] = load_suite(path, judge=judge)
    return run_case(suite.cases[index], suite)


def can_fork() -> bool:
    """Whether workers can be forked (and so inherit the loaded suites)."""
    return "fork" in multiprocessing.get_all_start_methods()


def run_parallel(
    work: Work, jobs: int, run_case: RunCase, judge_factory: Any = None
) -> Iterator[CaseResult]:
    """Run every case of `work` in `jobs` processes; yield the results in `work` order.

    A worker that dies makes its case's result a crash naming why, never a lost case.
    """
    order = largest_first(work)
    futures: dict[int, Future[CaseResult]] = {}
    if can_fork():
        _SHARED[:] = list(work)
        _RUN_CASE[:] = [run_case]
        # the loaded suites stay out of every collection: shared, not copied (unless the
        # application froze objects itself, whose frozen set is never disturbed)
        freeze = gc.get_freeze_count() == 0
        if freeze:
            gc.collect()
            gc.freeze()
        try:
            context = multiprocessing.get_context("fork")
            with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
                for k in order:
                    futures[k] = pool.submit(_forked_case, k)
                yield from _in_order(work, futures)
        finally:
            if freeze:
                gc.unfreeze()
            _SHARED.clear()
            _RUN_CASE.clear()
        return
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        for k in order:
            suite, index = work[k]
            futures[k] = pool.submit(_spawned_case, suite.path, index, judge_factory, run_case)
        yield from _in_order(work, futures)


def _in_order(work: Work, futures: dict[int, Future[CaseResult]]) -> Iterator[CaseResult]:
    for k, (suite, index) in enumerate(work):
        try:
            yield futures[k].result()
        except Exception as err:  # a worker that died: that case crashed
            yield CaseResult(
                suite.cases[index].name,
                False,
                0.0,
                0.0,
                error=f"worker failed: {type(err).__name__}: {err}",
            )
