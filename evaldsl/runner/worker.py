"""The target worker: a process that imports and calls live `run` targets for the runner.

`evaldsl.runner.targets` starts it in a session of its own (so that its whole process
group can be killed) and loads this file by its path, so that it imports only the
standard library and starts as fast as a bare interpreter. It talks to the runner over two
pipes of its own; its standard streams belong to the target (stdout and stderr go to a
pipe that evaldsl relays to its stderr, stdin reads nothing).

Requests are length-prefixed pickles of plain data from the runner (trusted):
    {"path": [...]}                                      first: the import path to use
    {"target": "m:f", "has_input": bool, "input": value} then: one call each
Answers are JSON lines (the runner never unpickles anything user code could shape):
    {"ready": pid}                          the worker is up
    {"phase": "call"}                       the module is imported, the call begins
    {"phase": "threads", "threads": [...]}  it returned; its non-daemon threads still run
    {"value": data, "elapsed_ms": ms, "reuse": bool}
    {"run": fields, "elapsed_ms": ms, "reuse": bool}   (the target returned an evaldsl.Run)
    {"error": message, "reuse": bool}

The runner enforces the deadline from outside, by killing the process group. The worker
only makes sure that nothing a target does reaches the runner: a forked child never
answers, values are JSON data (see `evaldsl/jsondata.py`), the worker dies with its parent, and
a worker that a target changed (working folder, environment variables, import path,
recursion limit, standard streams, a fork, threads or child processes left running) says
`reuse: false` and is given no other case.
"""

from __future__ import annotations

import difflib
import importlib
import json
import os
import pickle
import signal
import struct
import sys
import threading
import time
from pathlib import Path
from types import GeneratorType, ModuleType
from typing import Any

#: Request frames start with their length, as 8 big-endian bytes.
HEADER = struct.Struct(">Q")
#: The exit status of a worker that could no longer send answers (its pipe was closed).
LOST_PIPE = 125
#: Linux's `prctl` option that sends a signal to a process when its parent dies.
_PR_SET_PDEATHSIG = 1
#: How often a worker without `prctl` checks that its parent is still there, in seconds.
_WATCH_INTERVAL = 0.5
#: The code flag of a generator-based coroutine (`@types.coroutine`), as `inspect` has it.
_CO_ITERABLE_COROUTINE = 0x100
# What the worker measures and answers with, taken before any target runs: a target that
# patches `time.perf_counter` (a frozen clock left running) or `json.dumps` in its modules
# changes them for every later case of this worker, whose latency read 0.0 (`latency <
# 2s` passed on a time never measured) under a serial run and not under `-j`.
_clock = time.perf_counter
_dumps = json.dumps
_loads = pickle.loads


def die_with_parent(parent: int) -> None:
    """End this process when process `parent` (its parent) ends, however it ends.

    On Linux the kernel sends SIGKILL (`prctl(PR_SET_PDEATHSIG)`), which works even while
    a C loop holds the GIL; elsewhere a daemon thread checks the parent twice a second.
    A parent already gone when this runs ends the process at once.
    """
    if not _kernel_kills_orphans():
        threading.Thread(
            target=_watch_parent, args=(parent,), name="evaldsl-parent-watch", daemon=True
        ).start()
    if os.getppid() != parent:
        os._exit(1)


def _kernel_kills_orphans() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes  # only on Linux: the watchdog thread needs nothing of it

        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(_WATCH_INTERVAL)
    os._exit(1)


def serve(data: ModuleType, argv: list[str]) -> None:
    """The worker's life: `argv` is the request pipe, the answer pipe and the parent's pid;
    `data` is the `evaldsl/jsondata.py` module (loaded by its path)."""
    requests, answers, parent = (int(a) for a in argv)
    die_with_parent(parent)
    # A target sees Ctrl-C as any Python program does, even when evaldsl's `-j` process
    # that started this one ignores it (an ignored signal stays ignored across exec).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    _Server(data, requests, answers).serve()


class _Refused(Exception):
    """A target that cannot be called: the message is the case's error."""


class _Server:
    def __init__(self, data: ModuleType, requests: int, answers: int) -> None:
        self.data = data
        self.requests = requests
        self.answers = answers
        self.pid = os.getpid()
        self.own_path: list[str] = list(sys.path)  # before the suite's folder is on it
        self.start_cwd = _cwd()  # evaldsl's working folder: the console's paths are from it
        self.forked = False
        self.forker = self.pid
        os.register_at_fork(
            before=self._note_forker,
            after_in_parent=self._note_fork,
            after_in_child=self._child_rules,
        )

    def _note_forker(self) -> None:
        self.forker = os.getpid()

    def _note_fork(self) -> None:
        self.forked = True

    def _child_rules(self) -> None:
        # A child the target forks dies with this worker, as the worker dies with evaldsl.
        # Which process forked it is read from what the forker noted, never from
        # `getppid()`: a child first scheduled after the worker died is already an orphan
        # there (its parent init or a subreaper), and must die at once, not live on as a
        # grandchild would (a grandchild is its own parent's to watch).
        if self.forker == self.pid:
            die_with_parent(self.pid)

    # -- the protocol ----------------------------------------------------------------

    def serve(self) -> None:
        self.send({"ready": self.pid})
        config = self.receive()
        if config is None:
            return
        # Everything the worker needs is imported by now, from the interpreter's own path
        # (kept in `own_path`): a suite's folder holding `json.py` must not break it.
        sys.path[:] = config["path"]
        while (request := self.receive()) is not None:
            self.handle(request)
        # End of requests: the interpreter exits normally (atexit handlers run); the
        # runner kills the group if that takes longer than it waits.

    def receive(self) -> dict[str, Any] | None:
        header = self._read(HEADER.size)
        if header is None:
            return None
        (size,) = HEADER.unpack(header)
        body = self._read(size)
        if body is None:
            return None
        request: dict[str, Any] = _loads(body)
        return request

    def _read(self, size: int) -> bytes | None:
        chunks = bytearray()
        while len(chunks) < size:
            try:
                chunk = os.read(self.requests, size - len(chunks))
            except OSError:
                chunk = b""
            if not chunk:
                return None
            chunks += chunk
        return bytes(chunks)

    def send(self, message: dict[str, Any]) -> None:
        if os.getpid() != self.pid:
            os._exit(0)  # a forked child never answers
        line = (_dumps(message, ensure_ascii=True, allow_nan=False) + "\n").encode("ascii")
        view = memoryview(line)
        try:
            while view:
                view = view[os.write(self.answers, view) :]
        except OSError:
            os._exit(LOST_PIPE)

    # -- one call --------------------------------------------------------------------

    def handle(self, request: dict[str, Any]) -> None:
        target: str = request["target"]
        cwd = _cwd()
        baseline = _thread_ids()
        settings = _settings()
        try:
            fn = self.resolve(target)
        except _Refused as refused:
            reuse = self.reusable(cwd, baseline, settings)
            self.send({"error": str(refused), "reuse": reuse})
            return
        # threads the import started, and the variables and import path it set (a
        # `load_dotenv()`, a `sys.path.insert` at its top), belong to the module
        baseline = _thread_ids()
        settings = _settings()
        self.send({"phase": "call"})
        args = (request["input"],) if request["has_input"] else ()
        started = _clock()
        answer: dict[str, Any]
        try:
            result = fn(*args)
            if _awaitable(result):
                result = _run_awaitable(result, self.own_path)
        except BaseException as err:  # the target's failure is the case's error
            self.leave_if_forked()
            answer = {
                "error": f"run target {target!r} raised {self.data.describe_error(err)}"
                + _raised_where(err, not args, self.start_cwd)
            }
        else:
            self.leave_if_forked()
            elapsed_ms = (_clock() - started) * 1000
            answer = self.convert(target, result)
            answer["elapsed_ms"] = elapsed_ms
        self.wait_for_threads(baseline)
        answer["reuse"] = self.reusable(cwd, baseline, settings)
        self.send(answer)

    def resolve(self, target: str) -> Any:
        module_name, _, attr = target.partition(":")
        try:
            module = importlib.import_module(module_name)
        except BaseException as err:  # SystemExit and KeyboardInterrupt at import too
            self.leave_if_forked()
            raise _Refused(
                f"cannot import {module_name!r} for run target {target!r}: "
                f"{self.data.describe_error(err)}{_raised_where(err, False, self.start_cwd)}"
            ) from None
        fn: Any = module
        for part in attr.split("."):
            owner = fn
            try:
                fn = getattr(fn, part, None)
            except BaseException as err:  # a module's own __getattr__
                raise _Refused(
                    f"run target {target!r}: reading {part!r} raised "
                    f"{self.data.describe_error(err)}"
                ) from None
            if fn is None:
                raise _Refused(
                    f"module {module_name!r} has no {attr!r} (run target {target!r})"
                    + (_shadowed(module_name) or _near_name(part, owner))
                )
        if not callable(fn):
            raise _Refused(f"run target {target!r} is not callable")
        return fn

    def leave_if_forked(self) -> None:
        """A child the target forked that comes back here ends quietly."""
        if os.getpid() != self.pid:
            os._exit(0)

    def convert(self, target: str, result: Any) -> dict[str, Any]:
        data = self.data
        model = sys.modules.get("evaldsl.runs.model")
        try:
            if model is not None and isinstance(result, model.Run):
                return {"run": data.run_to_json_data(result, model.MISSING)}
            return {"value": data.to_json_data(result)}
        except data.NotJsonData as err:
            return {"error": f"run target {target!r} returned a value that is not JSON data: {err}"}
        except BaseException as err:  # a hostile container: __iter__, __index__, …
            return {
                "error": f"run target {target!r} returned a value that cannot be read: "
                f"{data.describe_error(err)}"
            }

    def wait_for_threads(self, baseline: set[int | None]) -> None:
        """Non-daemon threads the call started are waited for, as the interpreter would
        before exiting; the runner's deadline still holds while they run."""
        left = [
            t
            for t in threading.enumerate()
            if t.ident not in baseline and not t.daemon and t.is_alive()
        ]
        if not left:
            return
        names = [self.data.clean_text(t.name) for t in left]
        self.send({"phase": "threads", "threads": names})
        for thread in left:
            thread.join()

    def reusable(
        self, cwd: str | None, baseline: set[int | None], settings: tuple[object, ...]
    ) -> bool:
        """Whether the target left the worker as it found it: its working folder, standard
        streams, threads, children, environment variables and import path (the next case,
        of another target, is promised evaldsl's environment and the suite's path, and
        under `-j` may run in another worker)."""
        if self.forked or cwd is None or _cwd() != cwd or _settings() != settings:
            return False
        for fd in (0, 1, 2):
            try:
                os.fstat(fd)
            except OSError:
                return False
        if any(getattr(s, "closed", True) for s in (sys.stdout, sys.stderr)):
            return False
        if any(t.ident not in baseline for t in threading.enumerate()):
            return False
        return not _has_children()


def _raised_where(err: BaseException, no_input: bool, cwd: str | None) -> str:
    """Where in the target's code `err` was raised: ` (at helper, agent/flow.py:12)`, the
    innermost frame in a file under the suite's folder (else the innermost of all), its
    path from `cwd` (evaldsl's working folder, as the console shows every path; absolute
    outside it); or, raised by the call itself (no frame of the target ran), why: a case
    without `input` calls the target with no argument."""
    frames = []
    tb = err.__traceback__
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        # (this worker's own frames, and the import system's: `<frozen importlib…>`)
        if name != __file__ and not name.startswith("<frozen "):
            frames.append(tb)
        tb = tb.tb_next
    if not frames:
        if no_input and isinstance(err, TypeError):
            return "; the case has no `input`, so the target is called with no argument"
        return ""
    home = sys.path[0] if sys.path and sys.path[0] else os.getcwd()
    mine = [t for t in frames if _under(t.tb_frame.f_code.co_filename, home)]
    chosen = (mine or frames)[-1]
    code = chosen.tb_frame.f_code
    return f" (at {code.co_name}, {_shown_path(code.co_filename, cwd)}:{chosen.tb_lineno})"


def _shown_path(path: str, cwd: str | None) -> str:
    """`path` from `cwd` when it is under it, else absolute (a frame's own name, such as
    `<string>`, as it is)."""
    if not os.path.isabs(path):
        return path
    if cwd is not None and _under(path, cwd):
        return os.path.relpath(path, cwd)
    return path


def _under(path: str, folder: str) -> bool:
    try:
        return os.path.commonpath([os.path.abspath(path), os.path.abspath(folder)]) == (
            os.path.abspath(folder)
        )
    except ValueError:  # (paths on different drives)
        return False


def _shadowed(module_name: str) -> str:
    """Why the module imported for a target is not the user's: its top-level package was
    loaded already (a standard module the worker itself uses, `json`), so Python gave that
    one where the search path holds the user's file of the same name ("" otherwise)."""
    import importlib.machinery

    top = module_name.partition(".")[0]
    if top not in sys.stdlib_module_names:
        return ""
    loaded = getattr(sys.modules.get(top), "__file__", None)
    try:
        spec = importlib.machinery.PathFinder.find_spec(top)
    except (ImportError, ValueError, OSError):
        return ""
    origin = getattr(spec, "origin", None)
    if not isinstance(loaded, str) or not isinstance(origin, str):
        return ""
    if os.path.realpath(loaded) == os.path.realpath(origin):
        return ""
    return (
        f"; `{top}` is Python's own module, loaded before the target's ({loaded}), so "
        f"{origin} is never imported: rename it"
    )


def _near_name(name: str, owner: Any) -> str:
    """`; did you mean 'answer'?` for a name `owner` lacks, when one of its public names is
    near (difflib: this process imports nothing of evaldsl's but its data module)."""
    try:
        names = [n for n in dir(owner) if not n.startswith("_")]
    except BaseException:  # (an object's own __dir__ may raise)
        return ""
    near = difflib.get_close_matches(name, names, n=1)
    return f"; did you mean {near[0]!r}?" if near else ""


def _cwd() -> str | None:
    try:
        return os.getcwd()
    except OSError:  # the folder was removed
        return None


def _settings() -> tuple[object, ...]:
    """The worker's environment variables, import path and recursion limit, as a target
    may change them (a limit of 60 left the next case's value unreadable: RecursionError)."""
    return dict(os.environ), list(sys.path), sys.getrecursionlimit()


def _thread_ids() -> set[int | None]:
    return {t.ident for t in threading.enumerate()}


def _has_children() -> bool:
    """Whether this process has child processes (Linux; elsewhere it cannot tell)."""
    tasks = Path("/proc/self/task")
    try:
        return any((task / "children").read_text().strip() for task in tasks.iterdir())
    except OSError:
        return False


def _awaitable(value: Any) -> bool:
    """`inspect.isawaitable` without importing `inspect` (a worker starts bare)."""
    if hasattr(type(value), "__await__"):
        return True
    return isinstance(value, GeneratorType) and bool(
        value.gi_code.co_flags & _CO_ITERABLE_COROUTINE
    )


def _run_awaitable(awaitable: Any, own_path: list[str]) -> Any:
    """Await `awaitable` in an event loop of its own. `asyncio` is imported only for async
    targets (a worker starts as a bare interpreter), from the interpreter's own path: an
    `asyncio.py` or `selectors.py` in the suite's folder is not the event loop."""
    suite_path = list(sys.path)
    sys.path[:] = own_path
    try:
        import asyncio
    finally:
        sys.path[:] = suite_path

    async def wait() -> Any:
        return await awaitable

    return asyncio.run(wait())
