"""Running cases in worker processes (`-j N`), with nothing done twice.

Takes the (suite, case index) pairs to run, in report order, and a function that runs one
case, and gives each case's result, in that same order (so the report, and the console's
progress lines, are the serial run's). How, and why:

- Workers are forked from the process that loaded the suites, so they inherit them: no
  worker reads a suite file again or repeats a check-time scan of a recording (with 120
  cassettes that redone work made `-j 2` slower than `-j 1`). A suite loaded with its
  checks left for later (`load_suite(later=True)`, what `evaldsl run -j` does) is
  inherited read and expanded only: each worker checks and compiles the cases it runs
  (`Suite.later`) and sends back their own diagnostics with the results, so that part of
  loading runs in the workers, each case once. Before forking, the loaded objects are
  moved out of the garbage collector's reach (`run_suites` runs the cases inside
  `gcpause.frozen_loaded`, `gc.freeze`), so workers do not copy the pages a collection
  would touch, and what every worker would import at its first case is imported once
  before forking.
- The forked workers take their cases from one pipe and send results back on their own
  (`forkpool.py`): no thread, queue or future per case in this process.
- Cases are scheduled largest first (by the size of their recorded run; live targets
  first of all, since their time is unknown), so one big case does not start last and
  leave the other workers idle at the end.
- The cases on one recording go to the workers in at most N runs of consecutive cases
  (`units`), one run to a worker at a time, so each worker reads the recording once for
  the cases of a run that read it alike (`readings.py`), and the cases of one recording
  still spread over every worker. Each case's result is sent as it is made, so a worker
  that dies fails only the cases of its run that had not finished.
- Where processes cannot be forked (Windows), a `ProcessPoolExecutor`'s workers load
  each suite once.
- Never more processes than cases. Each dies with this process, even by `kill -9`, and
  ignores Ctrl-C, which is this process's to handle: on Ctrl-C the workers are stopped
  (each first kills its live targets' process groups, as a serial run's Ctrl-C does: a
  target's own child process is not left running), queued cases never start, and the
  results of the cases that had finished are kept.
- Each worker keeps its own target workers (`TargetWorkers`) for the live cases it runs.
- A case whose judge questions went to the endpoint waits for its answers in its worker
  while the worker runs its next cases (`waiting.MAX_JUDGING` at most, as a serial run
  does), and is sent when they are in; a worker that ends with cases still waiting
  (killed) fails them, never loses them.
"""

from __future__ import annotations

import functools
import os
import signal
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from evaldsl.language.diagnostics import Diagnostic
from evaldsl.runner import waiting
from evaldsl.runner.forkpool import part, run_forked
from evaldsl.runner.live import is_live
from evaldsl.runner.produce import Recording, case_size, recording_named
from evaldsl.runner.readings import SharedReadings, read_alone
from evaldsl.runner.results import CaseResult
from evaldsl.runner.stopsignals import STOP_SIGNALS, sigint_held, sigint_mask
from evaldsl.runner.worker import die_with_parent
from evaldsl.suites.build import load_suite
from evaldsl.suites.model import Case, Suite

if TYPE_CHECKING:  # the process pool is imported only where fork is missing (~3 ms:
    # `concurrent.futures` brings `logging`), not on a forked run's serial path; live
    # targets' machinery only for a live case
    from concurrent.futures import Future

    from evaldsl.runner.targets import TargetWorkers
    from evaldsl.runner.waiting import Waiting

Work = Sequence[tuple[Suite, int]]
#: Begins a case: its result, or the case waiting for its judge answers.
RunCase = Callable[
    [Case, Suite, "TargetWorkers | None", "SharedReadings | None"], "CaseResult | Waiting"
]
#: What a forked worker sends back: the case's result and, for a case of a suite checked
#: later (`Suite.later`), the case's own diagnostics (None: checked before the run).
Done = tuple[CaseResult, tuple[Diagnostic, ...] | None]

#: The work of the current parallel run, read by forked workers (set before forking).
_SHARED: list[tuple[Suite, int]] = []
#: Its units: the positions each task runs (`units`).
_UNITS: list[list[int]] = []
_RUN_CASE: list[RunCase] = []
#: Suites a spawned worker loaded (where fork is not available).
_LOADED: dict[str, Suite] = {}
#: This worker process's own target workers (made at its first live case: never
#: inherited, and never made by a run of recordings).
_TARGETS: list[TargetWorkers] = []
#: This worker's cases waiting for their judge answers: position, case, own diagnostics.
_WAITING: list[tuple[int, Waiting, tuple[Diagnostic, ...] | None]] = []


def largest_first(work: Work) -> list[int]:
    """The positions of `work`, in the order to start them: largest case first (ties in
    report order)."""
    sizes = [case_size(s, s.cases[i]) for s, i in work]
    return sorted(range(len(work)), key=lambda k: -sizes[k])


def units(work: Work, processes: int) -> list[list[int]]:
    """The positions of `work` as the tasks to run, in the order to start them: the cases
    on one recording in at most `processes` runs of consecutive cases (a run's cases can
    share a reading of it), each other case alone (every case, with
    `EVALDSL_READ_ALONE`); the largest tasks first (the sizes of their cases added up;
    ties in report order)."""
    on: dict[Recording, list[int]] = {}
    tasks: list[list[int]] = []
    alone = read_alone()
    for position, (suite, index) in enumerate(work):
        recording = recording_named(suite.cases[index], suite)
        if recording is None or alone:
            tasks.append([position])
        else:
            on.setdefault(recording, []).append(position)
    for positions in on.values():
        parts = min(processes, len(positions))
        cut = [len(positions) * k // parts for k in range(parts + 1)]
        tasks.extend(positions[cut[k] : cut[k + 1]] for k in range(parts))
    sizes = [case_size(s, s.cases[i]) for s, i in work]
    tasks.sort(key=lambda task: (-sum(sizes[k] for k in task), task[0]))
    return tasks


def _worker_started(parent: int) -> None:
    """Each worker: Ctrl-C and SIGTERM are its parent's to handle (they stop the run,
    and the parent kills its workers), it dies with its parent (pid `parent`, noted
    before the worker was made), even by `kill -9`, and it has target workers of its
    own (`_targets`)."""
    for number in STOP_SIGNALS:
        signal.signal(number, signal.SIG_IGN)
    sigint_mask(signal.SIG_UNBLOCK)
    # Not `os.getppid()`: a worker first scheduled after its parent died would read its
    # new parent there (init or a subreaper) and watch that one; it would take a case
    # from the task pipe and end only when it said so to the dead parent (a broken pipe).
    die_with_parent(parent)
    _TARGETS.clear()
    _WAITING.clear()


def _targets(case: Case) -> TargetWorkers | None:
    """This worker's own target workers for a live case (made at its first one, kept for
    the next); None for a recorded case."""
    if not is_live(case):
        return None
    if not _TARGETS:
        from evaldsl.runner.targets import TargetWorkers

        _TARGETS.append(TargetWorkers())
    return _TARGETS[0]


def _worker_stopping() -> None:  # in a forked worker its stopped parent ends
    """Kill the live targets this worker started, with the processes they started (their
    process groups): the worker dies next, and would leave those running."""
    if _TARGETS:
        from evaldsl.runner.targets import kill_target_groups

        kill_target_groups()


def _forked_task(task: int) -> list[tuple[int, Done]]:  # in a forked worker
    """Run the cases of a task: each checked and compiled here if its suite left that to
    the worker that runs it, and those on one recording read it once where they can."""
    cases: list[tuple[int, Case, Suite, tuple[Diagnostic, ...] | None]] = []
    for position in _UNITS[task]:
        suite, index = _SHARED[position]
        if suite.later is None:
            cases.append((position, suite.cases[index], suite, None))
        else:  # checked and compiled here, by the one worker that runs it
            checked, diagnostics = suite.later.case(index)
            cases.append((position, checked, suite, diagnostics))
    readings = SharedReadings((s, c) for _, c, s, _ in cases) if len(cases) > 1 else None
    for position, case, suite, own in cases:
        try:
            begun = _RUN_CASE[0](case, suite, _targets(case), readings)
        except Exception as err:  # as the pool says of a case whose runner raised
            begun = _crash(*_SHARED[position], _failed(err))
            own = None
        if isinstance(begun, CaseResult):
            part([(position, (begun, own))])  # sent now: a worker that dies keeps it
        else:
            _WAITING.append((position, begun, own))
        _send_answered(waiting.MAX_JUDGING)
    return []


def _send_answered(keep: int) -> None:  # in a forked worker
    """Send the waiting cases whose answers are in, and finish the longest waiting while
    more than `keep` wait (the parent puts results back in order)."""
    still: list[tuple[int, Waiting, tuple[Diagnostic, ...] | None]] = []
    for k, (position, begun, own) in enumerate(_WAITING):
        if begun.ready() or len(_WAITING) - k + len(still) > keep:
            try:
                done: Done = (begun.finish(), own)
            except Exception as err:  # as the pool says of a case whose runner raised
                done = (_crash(*_SHARED[position], _failed(err)), None)
            part([(position, done)])
        else:
            still.append((position, begun, own))
    _WAITING[:] = still


def _ending() -> None:  # in a forked worker, when no task is left
    _send_answered(0)


def _failed(err: Exception) -> str:
    return f"worker failed: {type(err).__name__}: {err}"


def _spawned_case(path: str, index: int, judge_factory: Any, run_case: RunCase) -> CaseResult:
    suite = _LOADED.get(path)
    if suite is None:
        judge = judge_factory() if judge_factory is not None else None
        suite = _LOADED[path] = load_suite(path, judge=judge)
    case = suite.cases[index]
    begun = run_case(case, suite, _targets(case), None)
    return begun if isinstance(begun, CaseResult) else begun.finish()


def _import_for_workers(work: Work) -> None:
    """Import, once, before forking, what each worker would otherwise import by itself
    at its first case: the pass generator (loaded by a run's first case, not at start)
    and `ctypes` (for `prctl`, `die_with_parent`); ~12 ms of each worker's CPU, measured
    as ~18 ms less CPU for a `-j 2` run of 120 cases (medians of 11, same run). Where the
    workers check the cases (`Suite.later`), also what checking loads when it first
    needs it: `difflib`, for did-you-mean (~1.5 ms). (The typed decoder, for many small
    recordings, is set up before this, by `run_suites`: `passes.will_read`.)"""
    import ctypes  # noqa: F401

    import evaldsl.runs.codegen  # noqa: F401

    if any(suite.later is not None for suite, _ in work):
        import difflib  # noqa: F401


def can_fork() -> bool:
    """Whether workers can be forked (and so inherit the loaded suites)."""
    return hasattr(os, "fork")


def run_parallel(
    work: Work,
    jobs: int,
    run_case: RunCase,
    judge_factory: Any,
    done: dict[int, CaseResult],
    announce: Callable[[int], None],
    own: dict[int, tuple[Diagnostic, ...]] | None = None,
) -> None:
    """Run every case of `work` in at most `jobs` processes, putting each result in
    `done` (by position in `work`) and calling `announce(position)` in `work` order; a
    case of a suite checked later (`Suite.later`, forked workers only) is checked and
    compiled by the worker that runs it, and its own diagnostics go in `own`.

    A worker that dies makes its case's result a crash naming why, never a lost case
    (and gives no diagnostics). On Ctrl-C the workers are stopped (their live targets'
    process groups killed), `done` gets the cases
    that had finished (announced or not), and the `KeyboardInterrupt` goes on.
    """
    processes = min(jobs, len(work))
    if not can_fork():
        _run_spawned(work, processes, (judge_factory, run_case), done, announce)
        return
    _SHARED[:] = list(work)
    _UNITS[:] = units(work, processes)
    _RUN_CASE[:] = [run_case]
    # The loaded suites stay out of every collection: `run_suites` runs this inside
    # `gcpause.frozen_loaded`, so the workers share them, not copy them. No full
    # collection first: it would walk every loaded object (~40 ms for 120 cases, on the
    # critical path) for little garbage (suites are built with the collector paused).
    _import_for_workers(work)
    announced = [0]  # how many positions, from the first, have been announced

    def arrived(task: int, sent: list[tuple[int, Done]]) -> None:
        for position, (result, diagnostics) in sent:
            if diagnostics is not None and own is not None:
                own[position] = diagnostics
            done[position] = result
        while announced[0] < len(work) and announced[0] in done:
            announced[0] += 1
            announce(announced[0] - 1)

    def crashed(task: int, why: str) -> list[tuple[int, Done]]:
        # the cases of the task whose results had not come
        return _crashes(work, [k for k in _UNITS[task] if k not in done], why)

    # a run of recordings has nothing its workers must end first: they are killed at once
    live = any(is_live(suite.cases[index]) for suite, index in work)
    try:
        started = functools.partial(_worker_started, os.getpid())
        run_forked(
            range(len(_UNITS)),
            processes,
            _forked_task,
            started,
            arrived,
            crashed,
            _ending,
            _worker_stopping if live else None,
        )
    finally:
        _SHARED.clear()
        _UNITS.clear()
        _RUN_CASE.clear()
    # a worker killed while its cases waited for their judge answers had sent its tasks'
    # own results (they ended when the cases were begun): those cases failed
    why = "worker failed: the worker ended while the case waited for its judge answers"
    lost = [k for k in range(len(work)) if k not in done]
    if lost:
        arrived(-1, _crashes(work, lost, why))


def _run_spawned(
    work: Work,
    processes: int,
    spawn: tuple[Any, RunCase],
    done: dict[int, CaseResult],
    announce: Callable[[int], None],
) -> None:
    """Where processes cannot be forked: a process pool whose workers load each suite
    once (`_spawned_case`)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    before = set(multiprocessing.active_children())
    pool = ProcessPoolExecutor(
        max_workers=processes,
        mp_context=multiprocessing.get_context(),
        initializer=_worker_started,
        initargs=(os.getpid(),),
    )
    ours: list[Any] = []
    futures: dict[int, Future[CaseResult]] = {}
    try:
        with sigint_held():
            for k in largest_first(work):
                suite, index = work[k]
                futures[k] = pool.submit(_spawned_case, suite.path, index, *spawn)
            ours = [p for p in multiprocessing.active_children() if p not in before]
        for k in range(len(work)):
            done[k] = _outcome(futures[k], work[k][1], work[k][0])
            announce(k)
    except KeyboardInterrupt:
        for process in ours:
            process.kill()  # its target workers die with it
        pool.shutdown(wait=True, cancel_futures=True)
        for k, future in futures.items():
            finished = future.done() and not future.cancelled() and not future.exception()
            if finished and k not in done:
                done[k] = future.result()
        raise
    pool.shutdown()


def _outcome(future: Future[CaseResult], index: int, suite: Suite) -> CaseResult:
    try:
        return future.result()
    except Exception as err:  # a worker that died: that case crashed
        return _crash(suite, index, f"worker failed: {type(err).__name__}: {err}")


def _crashes(work: Work, positions: list[int], why: str) -> list[tuple[int, Done]]:
    """The cases at `positions` crashed for `why`, as a worker would send them."""
    return [(k, (_crash(*work[k], why), None)) for k in positions]


def _crash(suite: Suite, index: int, why: str) -> CaseResult:
    return CaseResult(suite.cases[index].name, False, 0.0, 0.0, error=why)
