"""A pool of forked worker processes for `-j N`: each takes the next case from one pipe
and sends its result back on its own, with nothing in between.

Takes the positions of the cases to run (in the order to start them), a number of
processes, and a function that runs the case at a position (forked workers inherit
the work the parent loaded, so a position is all a worker needs); gives each
position's result (a `CaseResult`, or whatever `run_case` gives) to a callback as it
arrives. How, and why:

- The parent writes every position (4 bytes each) into one pipe, and closes it when
  all are written. A worker that is free reads the next 4 bytes: a pipe read that small
  is atomic, so each position goes to exactly one worker, and a free worker starts its
  next case at once, without a round trip through the parent. At the pipe's end the
  workers exit.
- Each worker has a pipe of its own to the parent: it says which case it starts, then
  sends the case's result (a pickle; the parent unpickles only what its own forked
  children send). The parent waits on all of them with one `select`. A task of several
  cases can send each one's result as it is made (`part`), before the task's own.
- `concurrent.futures.ProcessPoolExecutor` does the same through a management thread,
  a feeder thread, a call queue and a future per case: measured, ~0.3 ms of the
  parent's time and ~0.1 ms of a worker's per case, on the run's critical path when
  cases are small (600 cases of 0.5 ms took ~2x the wall time they take here).
- Never a lost case: a worker that dies (killed, out of memory) makes the case it was
  running a crash that says how it died, the other workers go on with the rest, and a
  case no worker was left to run is a crash too.
- The workers ignore Ctrl-C (the caller's `started` runs first in each) and die with
  the parent, even by `kill -9`. On Ctrl-C in the parent they are asked to stop
  (`STOP_ASKED`: each ends what it started, the caller's `stopping`, and exits at once)
  and killed if they have not within `STOP_GRACE` seconds (first the process groups
  their children lead, as `stopping` would have); the results that had arrived
  were already given to the callback.
"""

from __future__ import annotations

import contextlib
import functools
import os
import pickle
import signal
import struct
import sys
import time
from collections.abc import Callable, Sequence
from typing import TypeVar

from evaldsl.runner.stopsignals import sigint_held

#: What a worker gives for a case (a `CaseResult`, with whatever the caller adds).
T = TypeVar("T")

#: A position, as the task pipe carries it.
POSITION = struct.Struct("<I")
#: A worker's message: its kind, the case's position, the payload's length.
HEADER = struct.Struct("<BII")
STARTED, RESULT, FAILED, PART = 0, 1, 2, 3
#: In a worker: the pipe to the parent and the position of the task it runs (`part`).
_RUNNING: list[int] = []
#: Positions written to the task pipe at once: a write of at most PIPE_BUF (4096 bytes
#: on Linux, 512 at least by POSIX) is atomic, so a position is never split.
_BATCH = 512 // POSITION.size
#: The signal a stopped parent sends its workers, so that each ends what it started (its
#: live targets' processes: `stopping`) before it dies.
STOP_ASKED = signal.SIGUSR1
#: Seconds the workers asked to stop have to end before they are killed (a worker in a
#: long C call cannot act on the signal until it returns).
STOP_GRACE = 2.0


def run_forked(
    order: Sequence[int],
    processes: int,
    run_case: Callable[[int], T],
    started: Callable[[], None],
    arrived: Callable[[int, T], None],
    crashed: Callable[[int, str], T],
    ending: Callable[[], None] | None = None,
    stopping: Callable[[], None] | None = None,
) -> None:
    """Run the case at each position of `order` in at most `processes` forked workers
    (each calls `started()` first, then `run_case(position)` for each case it takes,
    then `ending()` when no case is left: it may still send `part`s, as of its last
    case); call `arrived(position, result)` in this process as each result comes back.
    A case whose worker died, or that raised, or that no worker was left to run, arrives
    as `crashed(position, why)`. When this process is stopped (Ctrl-C), each worker calls
    `stopping()` (from a signal handler: it must only end what the worker started) and
    exits."""
    given: set[int] = set()

    def deliver(position: int, result: T) -> None:
        given.add(position)
        arrived(position, result)

    tasks = _Tasks(b"".join(POSITION.pack(k) for k in order))
    workers: dict[int, _Worker] = {}  # by the file descriptor the parent reads
    try:
        with sigint_held():  # each worker starts with Ctrl-C held; `started` ignores it
            for _ in range(min(processes, len(order))):
                worker = _fork(tasks, workers, run_case, (started, ending, stopping))
                workers[worker.fd] = worker
        tasks.close_reading()
        _serve(tasks, workers, deliver, crashed)
    except BaseException:  # Ctrl-C (or a bug): no worker outlives the run
        _stop(list(workers.values()), asked=stopping is not None)
        raise
    finally:
        tasks.close()
        for worker in workers.values():
            worker.close()
    for position in order:
        if position not in given:  # taken by a worker that died before it said so
            deliver(position, crashed(position, "worker failed: no worker was left to run it"))


class _Tasks:
    """The task pipe, from the parent's side: the positions not yet written."""

    def __init__(self, pending: bytes) -> None:
        self.pending = pending
        self.read, self.write = os.pipe()

    def feed(self) -> None:
        """Write what fits (whole batches of positions); close the pipe when all are in."""
        step = _BATCH * POSITION.size
        while self.pending:
            try:
                os.write(self.write, self.pending[:step])
            except BlockingIOError:
                return
            except BrokenPipeError:  # no worker is left to read: the rest is never run
                self.pending = b""
                break
            self.pending = self.pending[step:]
        self.close()

    def close_reading(self) -> None:
        if self.read >= 0:
            os.close(self.read)
            self.read = -1

    def close(self) -> None:
        """Close the parent's ends (the workers see the end of the pipe)."""
        self.close_reading()
        if self.write >= 0:
            os.close(self.write)
            self.write = -1


class _Worker:
    """The parent's view of one forked worker: its pid, its pipe, what it runs now."""

    def __init__(self, pid: int, fd: int) -> None:
        self.pid = pid
        self.fd = fd
        self.buffer = b""
        self.running: int | None = None
        self.status: int | None = None

    def kill(self, number: int = signal.SIGKILL) -> None:
        if self.status is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, number)

    def ended_by(self, deadline: float) -> bool:
        """Whether the process has ended (reaped) by `deadline` (monotonic seconds)."""
        while self.status is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.status = status
            elif time.monotonic() >= deadline:
                return False
            else:
                time.sleep(0.005)
        return True

    def reap(self) -> str:
        """Wait for the process to end; how it ended, in words."""
        if self.status is None:
            _, self.status = os.waitpid(self.pid, 0)
        if os.WIFSIGNALED(self.status):
            number = os.WTERMSIG(self.status)
            return f"was killed by signal {number} ({signal.Signals(number).name})"
        return f"exited with status {os.waitstatus_to_exitcode(self.status)}"

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
        if self.status is None:
            self.reap()


def _stop(workers: list[_Worker], *, asked: bool) -> None:
    """End the workers of a stopped run: asked first (`STOP_ASKED`), when they have
    something to end, and killed if they have not ended within `STOP_GRACE` seconds, or
    at once when a second Ctrl-C or SIGTERM comes in that grace (else none was killed, and
    closing them waited for each to end: forever, for one stuck in a C call)."""
    try:
        if asked:
            for worker in workers:
                worker.kill(STOP_ASKED)
            deadline = time.monotonic() + STOP_GRACE
            workers = [w for w in workers if not w.ended_by(deadline)]
    finally:
        for worker in workers:  # (a worker ended and reaped is not signalled: `kill`)
            if asked and worker.status is None:
                # one that did not end what it started (stuck in a C call, the request
                # ignored): the process groups its children lead, ended for it, before
                # they are init's and cannot be told from any other process's
                for group in _child_groups(worker.pid):
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.killpg(group, signal.SIGKILL)
            worker.kill()


def _child_groups(pid: int) -> list[int]:
    """The process groups that the children of process `pid` lead (a `-j` worker's live
    targets each lead one), read from Linux's /proc (elsewhere: none known)."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    found = []
    for entry in entries:
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as stat:
                    # after the command's name in parentheses: state, parent, group
                    fields = stat.read().rpartition(b")")[2].split()
            except OSError:  # (ended meanwhile)
                continue
            if len(fields) > 2 and int(fields[1]) == pid and int(fields[2]) == int(entry):
                found.append(int(entry))
    return found


def _fork(
    tasks: _Tasks,
    others: dict[int, _Worker],
    run_case: Callable[[int], T],
    hooks: tuple[Callable[[], None], Callable[[], None] | None, Callable[[], None] | None],
) -> _Worker:
    """A worker (`hooks`: what it calls when it starts, when no case is left, and when
    its parent stops it: `run_forked`'s `started`, `ending` and `stopping`)."""
    started, ending, stopping = hooks
    result_read, result_write = os.pipe()
    _flush_std_streams()  # else the worker would write again what this process buffered
    pid = os.fork()
    if pid == 0:  # the worker: it never returns into the parent's code
        code = 1
        try:
            for fd in (tasks.write, result_read, *others):
                os.close(fd)
            if stopping is not None:
                signal.signal(STOP_ASKED, functools.partial(_stopped, stopping))
            started()
            _work(tasks.read, result_write, run_case)
            if ending is not None and _RUNNING:
                ending()
            code = 0
        finally:
            _flush_std_streams()  # what the cases printed (`os._exit` flushes nothing)
            os._exit(code)
    os.close(result_write)
    return _Worker(pid, result_read)


def _stopped(stopping: Callable[[], None], number: int, frame: object) -> None:
    """In a worker its parent stops: end what it started, then the worker, at once (as
    the kill it replaces would: nothing more is sent, nothing unwound)."""
    try:
        stopping()
    finally:
        os._exit(1)


def _flush_std_streams() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):  # closed, replaced, or a broken pipe
            if stream is not None:
                stream.flush()


def part(result: object) -> None:
    """In a worker, within `run_case`: send `result` to the parent now, as a result of
    the task it runs (the parent gives it to `arrived`), before the task's own result.
    A task of several cases sends each case's this way, so a worker that dies keeps
    what it had done."""
    out, position = _RUNNING
    _send(out, PART, position, pickle.dumps(result, pickle.HIGHEST_PROTOCOL))


def _work(tasks: int, out: int, run_case: Callable[[int], T]) -> None:
    """A worker's loop: the next position, until the task pipe ends."""
    while True:
        got = os.read(tasks, POSITION.size)
        if len(got) < POSITION.size:  # the end (writes are whole positions: never cut)
            return
        (position,) = POSITION.unpack(got)
        _send(out, STARTED, position, b"")
        _RUNNING[:] = [out, position]
        try:
            kind, payload = RESULT, pickle.dumps(run_case(position), pickle.HIGHEST_PROTOCOL)
        except Exception as err:  # the case's runner raised, or its result is not a pickle
            kind, payload = FAILED, f"{type(err).__name__}: {err}".encode("utf-8", "replace")
        _send(out, kind, position, payload)


def _send(fd: int, kind: int, position: int, payload: bytes) -> None:
    data = memoryview(HEADER.pack(kind, position, len(payload)) + payload)
    while data:
        data = data[os.write(fd, data) :]


def _serve(
    tasks: _Tasks,
    workers: dict[int, _Worker],
    arrived: Callable[[int, T], None],
    crashed: Callable[[int, str], T],
) -> None:
    """The parent's loop: feed the task pipe, act on every worker's messages, until no
    worker is left."""
    import selectors  # (the parent's only, after it forked: no worker waits on a selector)

    selector = selectors.DefaultSelector()
    try:
        for worker in workers.values():
            selector.register(worker.fd, selectors.EVENT_READ, worker)
        os.set_blocking(tasks.write, False)
        tasks.feed()
        if tasks.write >= 0:
            selector.register(tasks.write, selectors.EVENT_WRITE, None)
        alive = len(workers)
        while alive:
            for key, _ in selector.select():
                worker = key.data
                if worker is None:  # the task pipe has room again
                    selector.unregister(tasks.write)
                    tasks.feed()
                    if tasks.write >= 0:
                        selector.register(tasks.write, selectors.EVENT_WRITE, None)
                    continue
                chunk = os.read(worker.fd, 1 << 16)
                if chunk:
                    worker.buffer += chunk
                    _messages(worker, arrived, crashed)
                    continue
                selector.unregister(worker.fd)  # the worker ended: how?
                alive -= 1
                why = worker.reap()
                if worker.running is not None:
                    position, worker.running = worker.running, None
                    arrived(position, crashed(position, f"worker failed: the worker {why}"))
    finally:
        selector.close()


def _messages(
    worker: _Worker,
    arrived: Callable[[int, T], None],
    crashed: Callable[[int, str], T],
) -> None:
    """Act on every whole message in the worker's buffer."""
    buffer = worker.buffer
    while len(buffer) >= HEADER.size:
        kind, position, size = HEADER.unpack_from(buffer)
        end = HEADER.size + size
        if len(buffer) < end:
            break
        payload, buffer = buffer[HEADER.size : end], buffer[end:]
        if kind == STARTED:
            worker.running = position
            continue
        if kind == PART:  # one of the task's results: the task goes on
            arrived(position, pickle.loads(payload))
            continue
        worker.running = None
        if kind == RESULT:
            arrived(position, pickle.loads(payload))
        else:
            arrived(position, crashed(position, "worker failed: " + payload.decode("utf-8")))
    worker.buffer = buffer
