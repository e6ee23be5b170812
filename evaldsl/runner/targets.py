"""Live targets, run in worker processes: `run package.module:function` → a `Run`.

Takes a target, the case's input, a timeout and the suite's folder, and gives the `Run`
the target's return value stands for. Whatever the target does — raise, exit, abort, be
killed, hang at import or in a C loop, fork, leave threads, change folder, close its
streams, return what JSON cannot hold — is a `TargetError` naming the cause, and nothing
of it reaches the evaldsl process.

The target runs in a worker process (`worker.py`) started in a session of its own; the
timeout covers the import, the call and the non-daemon threads the call leaves, and is
enforced from here by killing the worker's whole process group. The worker dies with
this process (`kill -9` of evaldsl leaves none behind). `TargetWorkers` keeps a worker
between the cases of one suite folder, so a suite of live cases starts one interpreter,
not one per case; a worker the target changed is replaced.
"""

from __future__ import annotations

import codecs
import contextlib
import json
import math
import os
import pickle
import selectors
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType
from typing import Any

import attrs

from evaldsl import jsondata
from evaldsl.judge.config import ENV_API_KEY
from evaldsl.language.printable import visible
from evaldsl.language.values import MISSING, is_number
from evaldsl.runner import worker
from evaldsl.runner.live import TargetError
from evaldsl.runs.detect import run_from_value, run_problems
from evaldsl.runs.model import Reading, Run, RunError, Unrecorded, describe
from evaldsl.runs.state import initial_state, is_state_value

#: Seconds a new worker may take to start (not counted in any case's timeout).
START_TIMEOUT = 30.0
#: Seconds a worker may take to exit by itself (its atexit handlers) when a run ends.
CLOSE_GRACE = 1.0
#: Seconds a worker that closed its answer pipe has to end, so that its exit says why.
EXIT_GRACE = 2.0
#: How often a wait checks that the worker is still alive, in seconds.
_POLL = 0.1
#: Bytes of what a target prints during one case that are shown on evaldsl's stderr (the
#: rest counted, and said): one printing without end filled a CI log, 300 MB in 3 s.
TARGET_OUTPUT_SHOWN = 10 << 20
#: The live target workers' process groups (each a worker's pid, the group it leads),
#: by the pid of the process that started them: each is killed before it is reaped, so
#: no id here can have been reused (`kill_target_groups`).
_GROUPS: dict[int, int] = {}

# `python -c` code that loads the worker by its file path, without the evaldsl package.
_BOOT = """\
import sys
if sys.path[:1] == [""]:  # `-c` puts the working folder first: a json.py there is not json
    del sys.path[0]
import importlib.util
def load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
data = load("evaldsl_worker_jsondata", sys.argv[1])
load("evaldsl_worker", sys.argv[2]).serve(data, sys.argv[3:])
"""


class _Gone(Exception):
    """The worker process ended."""


class _Garbled(Exception):
    """The worker sent something that is not one of its messages."""


class LineBuffer:
    """What a worker's answer pipe gave so far, cut into its lines. Each byte is searched for
    a line break once: a large answer arrives in many 64 KiB chunks, and searching all that
    came before at each one made a 100 MB answer take seconds (quadratic), counted in its
    target's timeout.

    >>> lines = LineBuffer()
    >>> lines.add(b'{"ready": 1}\\n{"pha')
    >>> lines.line(), lines.line()
    (b'{"ready": 1}', None)
    >>> lines.add(b'se": "call"}\\n')
    >>> lines.line()
    b'{"phase": "call"}'
    """

    def __init__(self) -> None:
        self.data = bytearray()
        self.searched = 0  # how much of `data` holds no line break

    def add(self, chunk: bytes) -> None:
        self.data += chunk

    def line(self) -> bytes | None:
        """The next whole line, without its line break; None until one has arrived."""
        end = self.data.find(b"\n", self.searched)
        if end < 0:
            self.searched = len(self.data)
            return None
        line = bytes(self.data[:end])
        del self.data[: end + 1]
        self.searched = 0
        return line


class _Process:
    """One worker process, for targets next to one suite folder."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        request_r, request_w = os.pipe()
        answer_r, answer_w = os.pipe()
        output_r, output_w = os.pipe()
        argv = [sys.executable, "-c", _BOOT, jsondata.__file__, worker.__file__]
        try:
            self.popen = subprocess.Popen(
                [*argv, str(request_r), str(answer_w), str(os.getpid())],
                pass_fds=(request_r, answer_w),
                stdin=subprocess.DEVNULL,
                stdout=output_w,
                stderr=output_w,
                env=_environment(),
                start_new_session=True,  # its own process group, killed whole
            )
        except OSError as err:
            os.close(request_w)
            os.close(answer_r)
            os.close(output_r)
            raise TargetError(f"cannot start a worker process: {err}") from None
        finally:
            os.close(request_r)  # the worker's ends of the pipes
            os.close(answer_w)
            os.close(output_w)
        self.pid = self.popen.pid
        _GROUPS[self.pid] = os.getpid()
        self.requests = request_w
        self.answers = answer_r
        self.buffer = LineBuffer()
        self.output = _Output(output_r)
        self.selector = selectors.DefaultSelector()
        self.selector.register(answer_r, selectors.EVENT_READ)
        self.selector.register(output_r, selectors.EVENT_READ)
        self.closed = False
        try:
            self._handshake(folder)
        except BaseException:  # Ctrl-C while it starts: it must not outlive the run
            self.kill()
            raise

    def _handshake(self, folder: str) -> None:
        try:
            ready = self.next_message(time.monotonic() + START_TIMEOUT)
            if ready is None or "ready" not in ready:
                raise _Gone
            self.send({"path": _import_path(folder)})
        except (_Gone, _Garbled):
            code = self.kill()
            raise TargetError(f"cannot start a worker process ({_ending(code)})") from None

    # -- talking -----------------------------------------------------------------------

    def send(self, message: dict[str, Any]) -> None:
        self.send_bytes(pickle.dumps(message))

    def send_bytes(self, body: bytes) -> None:
        view = memoryview(worker.HEADER.pack(len(body)) + body)
        if self.requests < 0:
            raise _Gone
        try:
            while view:
                view = view[os.write(self.requests, view) :]
        except OSError:
            raise _Gone from None

    def next_message(self, deadline: float) -> dict[str, Any] | None:
        """The worker's next message; None when `deadline` passes first."""
        while True:
            line = self.buffer.line()
            if line is not None:
                return _decode(line)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            ready = {key.fd for key, _ in self.selector.select(min(remaining, _POLL))}
            if self.output.fd in ready and not self.output.relay():
                self.selector.unregister(self.output.fd)  # (its end: never ready again)
            if self.answers in ready:
                chunk = os.read(self.answers, 1 << 16)
                if not chunk:
                    raise _Gone  # the worker and every child that held the pipe are gone
                self.buffer.add(chunk)
            elif not ready and self.exited():
                raise _Gone  # gone, while a child it forked still holds the pipe

    def exited(self) -> bool:
        """Whether the worker has ended, without reaping it (its group id stays ours)."""
        if hasattr(os, "waitid"):
            try:
                found = os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:
                return True
            return found is not None
        return self.popen.poll() is not None

    # -- one call ------------------------------------------------------------------------

    def call(self, target: str, value: Any, timeout: float) -> dict[str, Any]:
        """Run `target` once; its answer, or a `TargetError` with the cause. What it prints
        meanwhile is shown up to `TARGET_OUTPUT_SHOWN`."""
        self.output.start_case()
        try:
            return self.called(target, value, timeout)
        finally:
            self.output.end_case()

    def called(self, target: str, value: Any, timeout: float) -> dict[str, Any]:
        has_input = value is not MISSING
        request = {"target": target, "has_input": has_input, "input": value if has_input else None}
        try:
            body = pickle.dumps(request)
        except Exception as err:  # a YAML input of a type pickle refuses, or too deep
            raise TargetError(
                f"run target {target!r}: the case input cannot be sent to its worker: "
                f"{jsondata.describe_error(err)}"
            ) from None
        phase: str = "import"
        threads: list[str] = []
        try:
            self.send_bytes(body)
        except _Gone:
            code = self.kill()
            raise TargetError(_ended(target, phase, threads, code)) from None
        deadline = time.monotonic() + (timeout if timeout > 0 else 0.0)
        while True:
            try:
                message = self.next_message(deadline)
            except _Garbled:
                self.kill()
                raise TargetError(
                    f"run target {target!r} garbled its worker's answer {_where(target, phase, [])}"
                    " (did it write to a file descriptor it did not open?)"
                ) from None
            except _Gone:
                if not self.wait_exit(min(deadline, time.monotonic() + EXIT_GRACE)):
                    self.kill()
                    raise TargetError(_silent(target, phase, threads)) from None
                code = self.kill()
                raise TargetError(_ended(target, phase, threads, code)) from None
            if message is None:
                self.kill()
                raise TargetError(_timed_out(target, timeout, phase, threads))
            if "phase" in message:
                phase, threads = message["phase"], message.get("threads", [])
                continue
            return message

    def wait_exit(self, deadline: float) -> bool:
        """Whether the worker ends by `deadline` (it is not reaped)."""
        while not self.exited():
            if time.monotonic() >= deadline:
                return False
            self.output.relay()  # (atexit handlers may print more than a pipe holds)
            time.sleep(0.01)
        return True

    # -- ending --------------------------------------------------------------------------

    def kill(self) -> int:
        """Kill the worker's process group (the worker and any child it left); its exit
        status (negative: the signal)."""
        if not self.closed:
            self.closed = True
            _kill_group(self.pid)
            _GROUPS.pop(self.pid, None)  # (killed: now it may be reaped)
            self.selector.close()
            self._close_requests()
            os.close(self.answers)
            code = self.popen.wait()
            self.output.close()  # what the group wrote before it died is shown
            return code
        return self.popen.wait()

    def close(self) -> None:
        """Let an idle worker exit by itself for a moment, then kill what is left."""
        if self.closed:
            return
        self._close_requests()  # the end of requests: the worker exits
        self.wait_exit(time.monotonic() + CLOSE_GRACE)
        self.kill()

    def _close_requests(self) -> None:
        if self.requests >= 0:
            os.close(self.requests)
            self.requests = -1


def _kill_group(pid: int) -> None:
    """SIGKILL to the process group worker `pid` leads (the worker and any child it left),
    and to the worker itself should it have left the group."""
    for kill in (os.killpg, os.kill):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            kill(pid, signal.SIGKILL)


def kill_target_groups() -> None:
    """Kill every target worker this process started and has not ended, with every process
    each started (its process group): for a process about to die without unwinding (a
    `-j` worker its stopped parent asks to end), whose targets' children would otherwise
    outlive the run. It only sends signals: safe in a signal handler."""
    me = os.getpid()
    for pid, starter in list(_GROUPS.items()):
        if starter == me:  # (not those of the process this one was forked from)
            _kill_group(pid)


class TargetWorkers:
    """The worker processes of one run (or one process of `-j`): at most one idle worker,
    kept for the next case of the same suite folder; `close()` ends them all.

    >>> with TargetWorkers() as workers:
    ...     pass   # workers.call(...) for each live case
    """

    def __init__(self) -> None:
        self._idle: _Process | None = None

    def __enter__(self) -> TargetWorkers:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def call(self, target: str, value: Any, timeout: float, base_dir: Path) -> dict[str, Any]:
        """The worker's answer to one call: `value` or `run` data, or `error`."""
        folder = str(base_dir.resolve())
        process = self._take(folder)
        try:
            answer = process.call(target, value, timeout)
        except BaseException:  # a timeout, a crash, Ctrl-C: nothing survives the case
            process.kill()
            raise
        if answer.get("reuse") is True:
            self._idle = process
        else:
            process.kill()
        return answer

    def _take(self, folder: str) -> _Process:
        idle, self._idle = self._idle, None
        if idle is not None:
            if idle.folder == folder and not idle.exited():
                return idle
            idle.close()
        return _Process(folder)

    def close(self) -> None:
        """End the idle worker, if any."""
        idle, self._idle = self._idle, None
        if idle is not None:
            idle.close()


# ---- the run a target's answer stands for ---------------------------------------------


def call_target(
    target: str,
    value: Any,
    timeout: float,
    base_dir: Path,
    workers: TargetWorkers | None = None,
) -> Run:
    """Call a target with the case input (sync or async) in a worker, bounded by `timeout`
    seconds (import included), and give the `Run` its return value stands for.

    It may return a workflow state (cycgraph's initial-state rules then apply), a list of
    events, an `evaldsl.Run`, or any other JSON value (the run's output). Anything else —
    an exception, an exit, a signal, a timeout, a value JSON cannot hold — is a
    `TargetError` naming it. Without `workers`, a worker is started for this call only.
    """
    if workers is None:
        with TargetWorkers() as own:
            return call_target(target, value, timeout, base_dir, own)
    answer = workers.call(target, value, timeout, base_dir)
    if "error" in answer:
        raise TargetError(answer["error"])
    elapsed_ms = answer["elapsed_ms"]
    if "run" in answer:
        run = _returned_run(target, answer["run"])
        return run if run.latency_ms is not None else attrs.evolve(run, latency_ms=elapsed_ms)
    result = answer["value"]
    if isinstance(value, dict) and isinstance(result, dict) and is_state_value(result):
        result = _final_state(value, result, timeout)
    try:
        return run_from_value(result, latency_ms=elapsed_ms)
    except RunError as err:
        raise TargetError(
            f"run target {target!r} returned an unusable value: {err.message}"
        ) from None


def _returned_run(target: str, fields: dict[str, Any]) -> Run:
    """The `evaldsl.Run` a target returned, rebuilt from its fields (checked: they are
    the user's)."""
    events = fields.get("events")
    problems = []
    if events is not None and not (
        isinstance(events, list) and all(isinstance(e, dict) for e in events)
    ):
        problems.append(f"its events must be a list of objects, found {describe(events)}")
    read = _reading(fields.get("read"))
    unrecorded = _unrecorded(fields.get("unrecorded"))
    if fields.get("unrecorded") is not None and unrecorded is None:
        problems.append("its unrecorded must be an evaldsl Unrecorded record")
    run = Run(
        events=events,
        state=fields.get("state"),
        output=fields.get("output", MISSING),
        path=fields.get("path"),
        format=fields.get("format"),  # type: ignore[arg-type]  # (checked below)
        latency_ms=fields.get("latency_ms"),
        read=read,
        unrecorded=unrecorded,
    )
    problems += run_problems(run)
    if problems:
        raise TargetError(f"run target {target!r} returned an unusable evaldsl.Run: {problems[0]}")
    return run


def _unrecorded(left: Any) -> Unrecorded | None:
    """What a returned run's recording left out, rebuilt from its JSON data (`None`: none,
    or data that is not such a record)."""
    if not isinstance(left, dict):
        return None
    try:
        return Unrecorded(
            str(left["how"]),
            int(left["responses"]),
            frozenset(int(n) for n in left["answers"]),
            {str(k): frozenset(int(n) for n in ns) for k, ns in left["arguments"].items()},
            {str(k): int(n) for k, n in left["results"].items()},
            {str(k): str(why) for k, why in left["cut"].items()},
            str(left.get("answers_why", "")),
        )
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


def _reading(read: Any) -> Reading | None:
    if not isinstance(read, dict):
        return None
    try:
        return Reading(
            str(read["format"]),
            str(read["why"]),
            dict(read["recognised"]) if read.get("recognised") is not None else None,
            dict(read.get("skipped") or {}),
            tuple(str(n) for n in read.get("notes") or ()),
        )
    except (KeyError, TypeError, ValueError):
        return None


def _final_state(value: dict[str, Any], returned: dict[str, Any], timeout: float) -> dict[str, Any]:
    """cycgraph's initial state (goal, constraints and max_token_budget lifted from the
    input, the whole input seeded into memory) under what the target returned."""
    timeout_ms = int(timeout * 1000) if math.isfinite(timeout) else None
    state = initial_state(value, timeout_ms=timeout_ms)
    memory = dict(state.get("memory") or {})
    returned_memory = returned.get("memory", {})
    if not isinstance(returned_memory, dict):
        # (the run's error, as in a file: the input's seed in its place answered
        # `memory is not empty` for a memory the target never gave)
        return {**state, **returned}
    memory.update(returned_memory)
    state.update({k: v for k, v in returned.items() if k != "memory"})
    state["memory"] = memory
    return state


# ---- messages --------------------------------------------------------------------------


def _decode(line: bytes) -> dict[str, Any]:
    """One message of the worker, checked: a target could write to the pipe itself."""
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        message = None
    if not isinstance(message, dict) or not _well_formed(message):
        raise _Garbled
    return message


def _well_formed(message: dict[str, Any]) -> bool:
    if "phase" in message:
        threads = message.get("threads", [])
        return isinstance(message["phase"], str) and (
            isinstance(threads, list) and all(isinstance(t, str) for t in threads)
        )
    if "ready" in message:
        return True
    if not isinstance(message.get("reuse"), bool):
        return False
    if "error" in message:
        return isinstance(message["error"], str)
    if not is_number(message.get("elapsed_ms")):
        return False
    return "value" in message or isinstance(message.get("run"), dict)


def _ending(code: int) -> str:
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    if code == worker.LOST_PIPE:
        return f"its answer pipe was closed: {_CLOSED_FDS}"
    return f"exit status {code}"


_CLOSED_FDS = "did the target close file descriptors it did not open?"


def _silent(target: str, phase: str, threads: list[str]) -> str:
    return (
        f"run target {target!r} closed its worker's answer pipe {_where(target, phase, threads)}"
        f" and went on running ({_CLOSED_FDS})"
    )


def _where(target: str, phase: str, threads: list[str]) -> str:
    module = target.partition(":")[0]
    if phase == "import":
        return f"while importing {module!r}"
    if phase == "threads":
        return f"after returning, while its {_threads(threads)} still ran"
    return "before returning"


def _threads(names: list[str]) -> str:
    shown = ", ".join(repr(n) for n in names[:3]) + (", …" if len(names) > 3 else "")
    return f"thread{'s' if len(names) != 1 else ''} {shown}"


def _ended(target: str, phase: str, threads: list[str], code: int) -> str:
    return (
        f"run target {target!r} ended its worker process {_where(target, phase, threads)} "
        f"({_ending(code)})"
    )


def _timed_out(target: str, timeout: float, phase: str, threads: list[str]) -> str:
    text = f"run target {target!r} timed out after {timeout:g}s"
    if phase == "import":
        return f"{text} {_where(target, phase, threads)}"
    if phase == "threads":
        return (
            f"{text}: it returned, but its non-daemon {_threads(threads)} still ran "
            "(they are waited for, as Python waits for them before exiting)"
        )
    return text


# ---- the worker's surroundings --------------------------------------------------------


class _Output:
    """A worker's stdout and stderr (one pipe), relayed to evaldsl's stderr (stdout may
    carry a report) with control characters shown as escapes, terminal or not: a target's
    `\x1b[2J` never acts on the terminal, and a log of stderr reads as the console does.
    Once that stream's reader has left (`evaldsl run … 2>&1 | head`), the output is read
    and dropped: the target never writes into a closed pipe, so its output cannot change
    its verdict."""

    #: Whether evaldsl's stderr is gone (its reader left, or it was closed): for all workers.
    gone = False

    def __init__(self, fd: int) -> None:
        self.fd = fd
        os.set_blocking(fd, False)  # read what is there, never wait for a target to write
        self.decoder = codecs.getincrementaldecoder("utf-8")(errors="backslashreplace")
        self.held = ""  # a CR at a chunk's end: the LF of its CRLF may be in the next
        # a case's output shown, and what was not (`TARGET_OUTPUT_SHOWN`); None between cases
        self.shown: int | None = None
        self.dropped = 0
        self.open_line = False  # what was shown last ended inside a line

    def start_case(self) -> None:
        """Count what the target prints from now on against `TARGET_OUTPUT_SHOWN`."""
        self.shown, self.dropped = 0, 0

    def end_case(self) -> None:
        """End a line the target's output left open (the console's line for the case
        was written on after `progress 50%`), and say how much of the case's output was
        not shown, if any."""
        if self.fd >= 0:
            self.relay()  # (what it printed before it answered, and is still in the pipe)
        if self.open_line:
            self.write(b"\n")
        if self.dropped:
            said = (
                f"evaldsl: {self.dropped:,} more bytes the target printed in this case were "
                f"not shown (at most {TARGET_OUTPUT_SHOWN >> 20} MiB of a case's output is)\n"
            )
            self.write(said.encode(_stderr_encoding(), errors="backslashreplace"))
        self.shown, self.dropped = None, 0

    def relay(self) -> bool:
        """Show what the worker wrote so far; False once its pipe has ended."""
        while True:
            try:
                chunk = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                return True
            except OSError:
                return False
            if not chunk:
                self.show(self.decoder.decode(b"", final=True), final=True)
                return False
            self.show(self.decoder.decode(chunk))

    def show(self, text: str, final: bool = False) -> None:
        text = self.held + text
        self.held = ""
        if text.endswith("\r") and not final:
            text, self.held = text[:-1], "\r"
        if not text or _Output.gone:
            return
        data = visible(text).encode(_stderr_encoding(), errors="backslashreplace")
        if self.shown is not None:  # (a target printing without end filled every log)
            room = TARGET_OUTPUT_SHOWN - self.shown
            if len(data) > room:
                cut = max(data.rfind(b"\n", 0, room) + 1, 0) if room > 0 else 0
                self.dropped += len(data) - cut
                data = data[:cut]
            self.shown += len(data)
        self.write(data)

    def write(self, data: bytes) -> None:
        if not data or _Output.gone:
            return
        try:
            sys.stderr.flush()  # evaldsl's own lines first, in their order
            view = memoryview(data)
            while view:
                view = view[os.write(2, view) :]
            self.open_line = not data.endswith(b"\n")
        except (OSError, ValueError):  # its reader left, or it is closed: drop from now on
            _Output.gone = True

    def close(self) -> None:
        """Show what is left in the pipe, then close it (a child in a session of its own
        that still holds it writes into a closed pipe from now on)."""
        if self.fd >= 0:
            self.relay()
            os.close(self.fd)
            self.fd = -1


def _stderr_encoding() -> str:
    return getattr(sys.stderr, "encoding", None) or "utf-8"


def _environment() -> dict[str, str]:
    """evaldsl's environment but the judge's key: it is evaldsl's, not the target's (a
    target's error or output that shows its environment must not carry it into a report)."""
    return {k: v for k, v in os.environ.items() if k != ENV_API_KEY}


def _import_path(folder: str) -> list[str]:
    """The worker's `sys.path`: the suite's folder first, then this process's path, then
    the working folder (where `evaldsl check` also looks for target modules)."""
    cwd = os.getcwd()
    path: list[str] = []
    for entry in [folder, *sys.path, cwd]:
        full = os.path.abspath(entry or cwd)
        if full not in path:
            path.append(full)
    return path
