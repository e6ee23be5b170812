"""Hostile live targets: whatever a `run` target does — exit, abort, signal itself, exit or
hang at import, hold the GIL in a C loop, leave threads, fork, change folder, close its
streams, return what JSON cannot hold — is that case's error with its cause, the other
cases run, the report is written where it was asked for, and evaldsl ends.

The suite runs once through the real command (a subprocess), every behaviour being a real
process doing it; each test then reads one case of the JSON report.
"""

from __future__ import annotations

import doctest
import json
from pathlib import Path
from typing import Any

import pytest
from clitools import run_evaldsl

from evaldsl import atomicfile, jsondata
from evaldsl.jsondata import MAX_DEPTH, NotJsonData, to_json_data
from evaldsl.language import printable
from evaldsl.runner import targets
from evaldsl.runner.targets import LineBuffer, TargetWorkers, call_target
from evaldsl.runs.model import Run
from evaldsl.tools import outputs
from hostile.processes import kill_all, numbers, survivors

HOSTILE = """
import enum, os, re, signal, sys, threading, time
from pathlib import Path

PIDS = Path(__file__).parent / "pids"


def note(pid):
    PIDS.mkdir(exist_ok=True)
    (PIDS / str(pid)).write_text(str(pid))


def exit_now(x=None):
    os._exit(3)

def abort(x=None):
    os.abort()

def term_self(x=None):
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(30)

def int_self(x=None):
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(30)

def sys_exit(x=None):
    sys.exit(4)

def keyboard(x=None):
    raise KeyboardInterrupt

def gil(x=None):
    # catastrophic backtracking in `re`'s C loop, which never lets go of the GIL
    return re.match(r"(a+)+$", "a" * 64 + "b") is not None

def thread_left(x=None):
    threading.Thread(target=time.sleep, args=(600,), name="spinner").start()
    return "returned"

def thread_ends(x=None):
    threading.Thread(target=time.sleep, args=(0.2,), name="brief").start()
    return "returned"

def daemon_left(x=None):
    threading.Thread(target=time.sleep, args=(600,), daemon=True).start()
    return "returned"

def fork(x=None):
    pid = os.fork()
    if pid == 0:
        return "child"  # comes back through the worker: it must not answer
    os.waitpid(pid, 0)
    return "parent"

def fork_sleeper(x=None):
    pid = os.fork()
    if pid == 0:
        time.sleep(600)
        os._exit(0)
    note(pid)
    return "parent"

def chdir(x=None):
    os.chdir("/")
    return "moved"

def close_stdout(x=None):
    sys.stdout.close()
    os.close(1)
    return "closed"

def print_after(x=None):
    print("the standard streams of a fresh worker work")
    return os.getcwd()

def close_everything(x=None):
    os.closerange(3, 4096)
    return "closed"

def forged(x=None):
    # the worker's answer pipe is its 5th argument: write a line that is no answer
    os.write(int(sys.argv[4]), b"not json\\n")
    return "returned"

def circular(x=None):
    loop = []
    loop.append(loop)
    return {"a": loop}

class BadRepr:
    def __repr__(self):
        raise ValueError("no repr")

def bad_repr(x=None):
    return [BadRepr()]

class BadEqText(str):
    def __eq__(self, other):
        raise ValueError("no eq")
    __hash__ = str.__hash__

def bad_eq_text(x=None):
    return {"text": BadEqText("hi")}

class BadEq:
    def __eq__(self, other):
        raise ValueError("no eq")

def bad_eq(x=None):
    return BadEq()

def huge(x=None):
    return 10 ** 5000

def surrogate(x=None):
    return {"text": "a\\ud800b"}

def nan(x=None):
    return [float("nan")]

def deep(x=None):
    value = []
    for _ in range(1000):
        value = [value]
    return value

class Colour(enum.IntEnum):
    RED = 1

def plain(x=None):
    return {"tuple": (1, 2), 3: Colour.RED, "ok": True}

def ok(x=None):
    return "fine"

def long_message(x=None):
    raise ValueError("<" + "x" * 1_000_000 + ">")

def show_environment(x=None):
    raise RuntimeError(repr(dict(os.environ)))
"""

IMPORTS = {
    # importing evaldsl takes a while: only this module does it
    "returns_run.py": "import evaldsl\n\ndef a_run(x=None):\n    return evaldsl.Run("
    "events=[{'type': 'tool.call', 'name': 'search', 'arguments': {}}])\n",
    "hang_import.py": "import time\ntime.sleep(600)\ndef f(x=None):\n    return 1\n",
    # (each defines the function it never reaches: check reads a module's top level)
    "exit_import.py": "import sys\nsys.exit(2)\ndef f(x=None):\n    return 1\n",
    "keyboard_import.py": "raise KeyboardInterrupt\ndef f(x=None):\n    return 1\n",
    "abort_import.py": "import os\nos.abort()\ndef f(x=None):\n    return 1\n",
}

TIMEOUT = 2  # seconds; only the cases that hang wait for it
KEY, SECRET = "EVALDSL_JUDGE_API_KEY", "sk-hostile-0123456789"  # the judge's key, for evaldsl

# case → (assertion on its output, the error expected: None for a case that passes)
CASES: dict[str, tuple[str, str | None]] = {
    "exit_now": ('output == "x"', "ended its worker process before returning (exit status 3)"),
    "abort": ('output == "x"', "ended its worker process before returning (killed by SIGABRT)"),
    "term_self": ('output == "x"', "before returning (killed by SIGTERM)"),
    "int_self": ('output == "x"', "run target 'hostile:int_self' raised KeyboardInterrupt"),
    "sys_exit": ('output == "x"', "run target 'hostile:sys_exit' raised SystemExit: 4"),
    "keyboard": ('output == "x"', "run target 'hostile:keyboard' raised KeyboardInterrupt"),
    "gil": ('output == "x"', f"run target 'hostile:gil' timed out after {TIMEOUT}s"),
    "thread_left": (
        'output == "returned"',
        f"timed out after {TIMEOUT}s: it returned, but its non-daemon thread 'spinner' still ran",
    ),
    "thread_ends": ('output == "returned"', None),
    "daemon_left": ('output == "returned"', None),
    "fork": ('output == "parent"', None),
    "fork_sleeper": ('output == "parent"', None),
    "chdir": ('output == "moved"', None),
    "close_stdout": ('output == "closed"', None),
    "print_after": ("output is string", None),
    "close_everything": ('output == "closed"', "its answer pipe was closed"),
    "show_environment": ('output == "x"', "raised RuntimeError: {"),
    "forged": ('output == "returned"', "run target 'hostile:forged' garbled its worker's answer"),
    "circular": (
        'output == "x"',
        "returned a value that is not JSON data: $.a[0]: it contains itself (a circular",
    ),
    "bad_repr": ('output == "x"', "$[0]: a hostile.BadRepr (its repr raised ValueError: no repr)"),
    "bad_eq_text": ('output.text == "hi"', None),
    "bad_eq": ('output == "x"', "$: a hostile.BadEq (<hostile.BadEq object at"),
    "huge": ('output == "x"', "$: an integer of about 5,000 digits (at most 4,300 are allowed)"),
    "surrogate": ('output == "x"', "$.text: text with a lone surrogate ('\\ud800' at index 1)"),
    "nan": ('output == "x"', "$[0]: nan is not a JSON number"),
    "deep": ('output == "x"', f"nested deeper than {MAX_DEPTH} levels"),
    # (a megabyte's message was the case's error whole: a megabyte's line on the console)
    "long_message": ('output == "x"', "xxx… (990,002 characters not shown) …xxx"),
    "plain": ('output == {tuple: [1, 2], "3": 1, ok: true}', None),
}
IMPORT_CASES: dict[str, str] = {
    "hang_import": f"run target 'hang_import:f' timed out after {TIMEOUT}s while importing",
    "exit_import": "cannot import 'exit_import' for run target 'exit_import:f': SystemExit: 2",
    "keyboard_import": "cannot import 'keyboard_import' for run target 'keyboard_import:f': "
    "KeyboardInterrupt",
    "abort_import": "run target 'abort_import:f' ended its worker process while importing "
    "'abort_import' (killed by SIGABRT)",
}


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The hostile suite, run once by the real command; the report and what it printed."""
    folder = tmp_path_factory.mktemp("hostile")
    (folder / "hostile.py").write_text(HOSTILE, encoding="utf-8")
    for name, text in IMPORTS.items():
        (folder / name).write_text(text, encoding="utf-8")
    lines = [f'suite "hostile"\ntimeout {TIMEOUT}s\n']
    for name, (assertion, _) in CASES.items():
        lines.append(f'case "{name}"\n  run hostile:{name}\n  {assertion}\n')
    for name in IMPORT_CASES:
        lines.append(f'case "{name}"\n  run {name}:f\n  output == 1\n')
    # importing evaldsl counts in the timeout: a loaded machine may take seconds
    lines.append(
        'case "a_run"\n  run returns_run:a_run\n  timeout 120s\n  tool search called once\n'
    )
    lines.append('case "last"\n  run hostile:ok\n  output == "fine"\n')
    (folder / "hostile.eval").write_text("\n".join(lines), encoding="utf-8")
    try:
        # a relative report path: a target that changes folder must not move it
        result = run_evaldsl(
            "run", "hostile.eval", "--json", "out/report.json", cwd=folder, env={KEY: SECRET}
        )
    finally:
        leftovers = numbers(folder / "pids") if (folder / "pids").exists() else set()
    report = json.loads((folder / "out" / "report.json").read_text(encoding="utf-8"))
    cases = {c["name"]: c for c in report["suites"][0]["cases"]}
    return {"result": result, "cases": cases, "folder": folder, "forked": leftovers}


@pytest.mark.parametrize("name", [n for n, (_, e) in CASES.items() if e is not None])
def test_a_hostile_target_is_its_case_error(ran: dict[str, Any], name: str) -> None:
    case = ran["cases"][name]
    expected = CASES[name][1]
    assert case["passed"] is False and case["score"] == 0
    assert expected is not None and expected in case["error"], case["error"]


@pytest.mark.parametrize("name", [n for n, (_, e) in CASES.items() if e is None])
def test_a_target_that_returns_is_checked_whatever_it_did(ran: dict[str, Any], name: str) -> None:
    case = ran["cases"][name]
    assert case["error"] is None and case["passed"], case


@pytest.mark.parametrize("name", list(IMPORT_CASES))
def test_a_hostile_import_is_its_case_error(ran: dict[str, Any], name: str) -> None:
    case = ran["cases"][name]
    assert case["score"] == 0 and IMPORT_CASES[name] in case["error"], case["error"]


def test_the_other_cases_run_and_evaldsl_ends(ran: dict[str, Any]) -> None:
    result = ran["result"]
    assert result.returncode == 1, result.stderr  # failed cases, not a crash
    assert "Traceback" not in result.stdout + result.stderr
    assert ran["cases"]["last"]["passed"]
    assert ran["cases"]["a_run"]["passed"]  # an evaldsl.Run comes back as itself
    assert len(ran["cases"]) == len(CASES) + len(IMPORT_CASES) + 2


def test_a_long_exception_message_is_cut_in_its_middle(ran: dict[str, Any]) -> None:
    error = ran["cases"]["long_message"]["error"]
    assert error.startswith("run target 'hostile:long_message' raised ValueError: <xxx")
    assert len(error) < jsondata.MESSAGE_LIMIT + 200  # (and the place it was raised)
    assert max(len(line) for line in ran["result"].stdout.splitlines()) < 11_000


def test_a_target_never_sees_the_judges_key(ran: dict[str, Any]) -> None:
    shown = ran["cases"]["show_environment"]["error"]
    assert "PATH" in shown and KEY not in shown and SECRET not in shown
    report = (ran["folder"] / "out" / "report.json").read_text(encoding="utf-8")
    assert SECRET not in report + ran["result"].stdout + ran["result"].stderr


def test_a_target_that_changed_folder_leaves_the_next_case_where_evaldsl_is(
    ran: dict[str, Any],
) -> None:
    # `print_after` runs after `chdir` and `close_stdout`: a fresh worker, in evaldsl's folder
    assert ran["cases"]["print_after"]["passed"]
    assert "the standard streams of a fresh worker work" in ran["result"].stderr


def test_a_forked_child_left_sleeping_is_killed(ran: dict[str, Any]) -> None:
    forked = ran["forked"]
    assert forked, "the fork_sleeper target did not record its child"
    try:
        assert survivors(forked, within=10) == []
    finally:
        kill_all(forked)


# ---- in the evaldsl process: the worker pool and the JSON data of values ---------------


def test_a_worker_serves_the_cases_of_one_folder_and_is_replaced_for_another(
    tmp_path: Path,
) -> None:
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "flow.py").write_text(
            f"import os\ndef who(x=None):\n    return ['{name}', os.getpid()]\n"
        )
    with TargetWorkers() as workers:
        first = [call_target("flow:who", None, 10, tmp_path / "a", workers) for _ in range(2)]
        other = call_target("flow:who", None, 10, tmp_path / "b", workers)
    assert [r.output[0] for r in first] == ["a", "a"] and other.output[0] == "b"
    assert first[0].output[1] == first[1].output[1]  # one interpreter for the suite
    assert other.output[1] != first[0].output[1]  # the module next to its own suite


SETTINGS = """
import os, sys

sys.path.insert(0, "/at-import")  # the module's own set-up: kept with the worker
os.environ["SET_AT_IMPORT"] = "1"

def seen(x=None):
    deep = "leaf"
    for _ in range(40):
        deep = [deep]
    return [os.getpid(), os.environ.get("HUNT_FLAG", "unset"), sys.path[0], deep]

def set_variable(x=None):
    os.environ["HUNT_FLAG"] = "set"
    return os.getpid()

def set_path(x=None):
    sys.path[:] = ["/elsewhere"]
    return os.getpid()

def set_and_restore(x=None):
    os.environ["HUNT_FLAG"] = "brief"
    del os.environ["HUNT_FLAG"]
    return os.getpid()

def lower_limit(x=None):
    sys.setrecursionlimit(60)  # the next case's value of 40 levels was a RecursionError
    return os.getpid()

def freeze_clock(x=None):
    import time
    time.perf_counter = lambda: 0.0  # a frozen clock (a mock) left in place
    return os.getpid()

def nap(x=None):
    import time
    time.sleep(0.2)
    return os.getpid()
"""


@pytest.mark.parametrize("changer", ["set_variable", "set_path", "lower_limit"])
def test_a_target_that_changed_the_environment_or_path_leaves_the_next_case_evaldsls(
    tmp_path: Path, changer: str
) -> None:
    # The worker was kept: the next case saw HUNT_FLAG=set (or imported from /elsewhere),
    # in a serial run, and not under -j when another worker took it.
    (tmp_path / "settings.py").write_text(SETTINGS, encoding="utf-8")
    with TargetWorkers() as workers:
        changed = call_target(f"settings:{changer}", None, 10, tmp_path, workers).output
        after = call_target("settings:seen", None, 10, tmp_path, workers).output
        again = call_target("settings:seen", None, 10, tmp_path, workers).output
        restored = call_target("settings:set_and_restore", None, 10, tmp_path, workers).output
        last = call_target("settings:seen", None, 10, tmp_path, workers).output
    assert after[0] != changed and after[1:3] == ["unset", "/at-import"]
    assert again[0] == after[0]  # what the module set at import does not replace it
    assert restored == last[0] == again[0]  # nor a change the target undid


def test_a_target_that_froze_the_clock_leaves_the_next_cases_latency_measured(
    tmp_path: Path,
) -> None:
    # The worker measured with the time module's perf_counter as the target left it: the
    # next case's latency read 0.0 (`latency < 2s` passed on a time never measured), in a
    # serial run only (under -j another worker may take it).
    (tmp_path / "settings.py").write_text(SETTINGS, encoding="utf-8")
    with TargetWorkers() as workers:
        runs = [call_target(f"settings:{t}", None, 10, tmp_path, workers) for t in CLOCKED]
    assert runs[1].latency_ms is not None and runs[1].latency_ms > 100  # it slept 0.2 s


CLOCKED = ("freeze_clock", "nap")


def test_a_call_without_a_pool_has_a_worker_of_its_own(tmp_path: Path) -> None:
    (tmp_path / "flow.py").write_text("async def echo(x):\n    return {'got': x}\n")
    run = call_target("flow:echo", {"n": 1}, 10, tmp_path)
    assert isinstance(run, Run) and run.output == {"got": {"n": 1}}
    assert run.latency_ms is not None and run.latency_ms >= 0


class _CountedBytes(bytearray):
    """A buffer that counts the bytes its line-break searches go over."""

    searched = 0

    def find(self, sub: Any, start: Any = 0, *args: Any) -> int:
        found = super().find(sub, start, *args)
        _CountedBytes.searched += (len(self) if found < 0 else found + 1) - start
        return found


def test_a_large_answer_is_searched_for_its_line_break_once() -> None:
    # A 100 MB answer came in 1,600 chunks, and each searched all the buffer held: seconds
    # of the target's timeout spent after it returned ("timed out" at 200 MB in 3 s).
    lines = LineBuffer()
    lines.data = _CountedBytes()
    _CountedBytes.searched = 0
    chunk = b"x" * 65536
    for _ in range(400):
        lines.add(chunk)
        assert lines.line() is None
    lines.add(b"y\n{}\n")
    assert lines.line() == chunk * 400 + b"y"
    assert lines.line() == b"{}" and lines.line() is None
    assert _CountedBytes.searched <= len(chunk) * 400 + 10  # each byte once (was 200×)


def test_a_large_return_value_comes_back_whole(tmp_path: Path) -> None:
    (tmp_path / "big.py").write_text("def text(n):\n    return 'z' * n\n")
    run = call_target("big:text", 20_000_000, 120, tmp_path)
    assert run.output == "z" * 20_000_000


class _SneakyList(list[int]):
    def __iter__(self) -> Any:
        raise AssertionError("a subclass's __iter__ must not be called")


def test_json_data_keeps_only_built_in_types() -> None:
    converted = to_json_data({"a": _SneakyList([1, 2]), 1.5: (True, None), None: "n"})
    assert converted == {"a": [1, 2], "1.5": [True, None], "null": "n"}
    assert type(converted["a"]) is list


@pytest.mark.parametrize(
    ("value", "where", "reason"),
    [
        ({1: "a", "1": "b"}, "$", "two keys are '1'"),
        ({("t",): 1}, "$", "a key that is a tuple"),
        ({"x y": {1, 2}}, "$['x y']", "a set ({1, 2}) is not JSON data"),
        ([0, [float("inf")]], "$[1][0]", "inf is not a JSON number"),
        ({"b": b"bytes"}, "$.b", "a bytes (b'bytes') is not JSON data"),
        ([object()], "$[0]", "an object (<object object at "),
        ({"e": ...}, "$.e", "an ellipsis (Ellipsis) is not JSON data"),
    ],
)
def test_json_data_refuses_what_json_cannot_hold(value: Any, where: str, reason: str) -> None:
    with pytest.raises(NotJsonData) as refused:
        to_json_data(value)
    assert refused.value.where == where and reason in refused.value.reason


def test_json_data_takes_the_limits_it_states() -> None:
    nested: Any = "leaf"
    for _ in range(MAX_DEPTH):
        nested = [nested]
    assert to_json_data(nested) == nested  # MAX_DEPTH levels of arrays hold
    with pytest.raises(NotJsonData, match="nested deeper"):
        to_json_data([nested])
    assert to_json_data(-(10**4300 - 1)) == -(10**4300 - 1)
    with pytest.raises(NotJsonData, match="integer"):
        to_json_data(10**4300)


def test_the_worker_modules_import_nothing_of_evaldsl() -> None:
    # The worker is loaded by path and starts as a bare interpreter: importing the
    # evaldsl package there would cost half a second a worker.
    root = Path(__file__).resolve().parents[2] / "evaldsl"
    for name in ("runner/worker.py", "jsondata.py"):
        text = (root / name).read_text(encoding="utf-8")
        imports = [line for line in text.splitlines() if line.startswith(("import ", "from "))]
        assert not [line for line in imports if "evaldsl" in line], (name, imports)


def test_doctests_of_the_new_modules() -> None:
    for module in (jsondata, targets, atomicfile, outputs, printable):
        assert doctest.testmod(module).failed == 0, module.__name__


def test_what_a_target_prints_is_shown_up_to_its_limit_a_case(tmp_path: Path) -> None:
    # A target printing without end wrote all of it to evaldsl's stderr (300 MB in 3 s,
    # a CI log filled): each case shows TARGET_OUTPUT_SHOWN bytes, and says how many not.
    (tmp_path / "loud.py").write_text(
        "import sys\n"
        "def shout(x):\n"
        "    for _ in range(12 * 1024):\n"
        "        sys.stdout.write('x' * 1023 + '\\n')\n"
        "    print('after the limit')\n"
        "    return x\n",
        encoding="utf-8",
    )
    (tmp_path / "s.eval").write_text(
        "".join(f'case "{n}"\n  run loud:shout\n  input "ok"\n  output == "ok"\n' for n in "ab"),
        encoding="utf-8",
    )
    done = run_evaldsl("run", "s.eval", "--no-history", "-q", cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:]
    err = done.stderr
    assert "after the limit" not in err
    assert err.count("x" * 1023 + "\n") == 2 * (targets.TARGET_OUTPUT_SHOWN // 1024)
    assert err.count("bytes the target printed in this case were not shown") == 2
    assert len(err) < 2 * targets.TARGET_OUTPUT_SHOWN + 10_000
