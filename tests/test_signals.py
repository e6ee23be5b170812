"""The `evaldsl` command stopped by a signal, as a terminal (Ctrl-C: SIGINT to the process
group) or a cancelled CI job (SIGTERM to it) stops it: the process ends at once, keeps what
finished (its reports say the run was interrupted) and exits 130 or 143, with no
traceback; judge calls on their way are abandoned, never retried."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.clitools import ROOT
from tests.judge_server import JudgeServer, Reply, judged

CASSETTE = ROOT / "tests" / "fixtures" / "traceplay" / "demo" / "cassette.example.jsonl"
KEY = "sk-test-secret-1234567890"
#: A live target: rows 0-2 answer at once, the others after 30 s.
AGENT = "import time\ndef answer(input):\n    time.sleep(float(input['s']))\n    return 'done'\n"
ROWS = ", ".join(f"{{i: {i}, s: {0 if i < 3 else 30}}}" for i in range(6))
SLOW_SUITE = (
    f'suite "slow"\ncase "row {{{{i}}}}"\n  run agent:answer\n  input {{s: "{{{{s}}}}"}}\n'
    f'  each [{ROWS}]\n  answer contains "done"\n'
)


class Command:
    """`evaldsl ARGS` in a process group of its own, its output in files (`script`: the
    Python code that runs the command instead of `-m evaldsl.tools.cli`)."""

    def __init__(
        self,
        tmp: Path,
        *args: str,
        env: dict[str, str] | None = None,
        script: str | None = None,
    ) -> None:
        base = {k: v for k, v in os.environ.items() if not k.startswith("EVALDSL_JUDGE")}
        self.out = tmp / "stdout.txt"
        self.err = tmp / "stderr.txt"
        start = ["-m", "evaldsl.tools.cli"] if script is None else ["-c", script]
        with self.out.open("w") as out, self.err.open("w") as err:
            self.process = subprocess.Popen(
                [sys.executable, *start, *args],
                cwd=tmp,
                stdin=subprocess.PIPE,
                stdout=out,
                stderr=err,
                env={**base, "NO_COLOR": "1", "PYTHONPATH": str(ROOT), **(env or {})},
                start_new_session=True,
            )

    def once(self, ready: Callable[[], bool]) -> None:
        deadline = time.monotonic() + 60
        while not ready():
            assert self.process.poll() is None, self.err.read_text()
            assert time.monotonic() < deadline, "the command never got there"
            time.sleep(0.05)

    def stop(self, number: int) -> float:
        """Send the signal to the process group; the seconds until the process ended."""
        sent = time.monotonic()
        os.killpg(self.process.pid, number)
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
            pytest.fail("the command went on after the signal")
        return time.monotonic() - sent


@pytest.fixture
def slow_server() -> Iterator[JudgeServer]:
    with JudgeServer(Reply(**{**vars(judged(True, 0.9)), "delay": 60})) as server:
        yield server


def test_ctrl_c_abandons_the_judge_calls_on_their_way(
    tmp_path: Path, slow_server: JudgeServer
) -> None:
    suite = tmp_path / "judged.eval"
    suite.write_text(
        "".join(
            f'case "c{n}"\n  cassette "{CASSETTE}"\n  answer judged "rubric {n}" >= 0.7\n'
            for n in range(2)
        )
    )
    env = {"EVALDSL_JUDGE_API_KEY": KEY, "EVALDSL_JUDGE_BASE_URL": slow_server.url}
    command = Command(tmp_path, "run", "judged.eval", "--no-history", "--json", "r.json", env=env)
    command.once(lambda: slow_server.count == 2)  # both questions on their way
    seconds = command.stop(signal.SIGINT)
    # at once: not after the server's 60 s, nor after 4 attempts of 30 s each
    assert command.process.returncode == 130 and seconds < 10
    assert "interrupted: 0 of 2 cases ran" in command.out.read_text()
    assert "Traceback" not in command.err.read_text()
    assert json.loads((tmp_path / "r.json").read_text())["interrupted"] is True
    time.sleep(0.5)
    assert slow_server.count == 2  # no attempt after Ctrl-C


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_sigterm_stops_a_run_as_ctrl_c_does(tmp_path: Path, jobs: str) -> None:
    (tmp_path / "agent.py").write_text(AGENT)
    (tmp_path / "slow.eval").write_text(SLOW_SUITE)
    reports = ["--json", "r.json", "--junit", "r.xml"]
    command = Command(tmp_path, "run", "slow.eval", "--no-history", "-j", jobs, *reports)
    command.once(lambda: command.out.read_text().count("✓") == 3)
    seconds = command.stop(signal.SIGTERM)
    assert command.process.returncode == 143 and seconds < 10, command.err.read_text()
    assert "interrupted: 3 of 6 cases ran" in command.out.read_text()
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["interrupted"] is True
    assert [c["passed"] for s in report["suites"] for c in s["cases"]] == [True] * 3
    junit = (tmp_path / "r.xml").read_text()  # (the cases not run are errors, said so)
    assert junit.count("<testcase") == 6 and junit.count('<error type="interrupted"') == 3
    assert "Traceback" not in command.err.read_text()


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_sigterm_stops_a_score_and_closes_its_output(tmp_path: Path, fmt: str) -> None:
    (tmp_path / "p.eval").write_text('answer contains "sunny"\n')
    command = Command(tmp_path, "score", "p.eval", "-", "--format", fmt)
    assert command.process.stdin is not None
    command.process.stdin.write(b"[]\n")  # one trace, then standard input waits
    command.process.stdin.flush()
    command.once(lambda: "<stdin>:1" in command.out.read_text())
    assert command.stop(signal.SIGTERM) < 10
    assert command.process.returncode == 143
    assert command.err.read_text().endswith("interrupted\n")
    if fmt == "text":
        assert command.out.read_text().endswith("\ninterrupted: 1 trace scored\n")
        return
    scored = json.loads(command.out.read_text())  # whole: closed with the summary
    assert [t["trace"] for t in scored["traces"]] == ["<stdin>:1"]
    assert scored["summary"]["traces"] == 1 and scored["summary"]["interrupted"] is True


#: The console script with a thread of its own that runs for a minute (as a judge call
#: abandoned on its way may): a command that ran to its end leaves the exit to Python,
#: which waits for it; an interrupted one ends at once.
WITH_A_THREAD = """
import sys, threading, time
threading.Thread(target=time.sleep, args=(60,)).start()
sys.argv = ["evaldsl", *sys.argv[1:]]
from evaldsl.tools.cli import main
sys.exit(main())
"""


def test_an_interrupted_command_does_not_wait_for_its_threads(tmp_path: Path) -> None:
    (tmp_path / "p.eval").write_text('answer contains "sunny"\n')
    command = Command(tmp_path, "score", "p.eval", "-", script=WITH_A_THREAD)
    assert command.process.stdin is not None
    command.process.stdin.write(b"[]\n")
    command.process.stdin.flush()
    command.once(lambda: "<stdin>:1" in command.out.read_text())
    assert command.stop(signal.SIGINT) < 10
    assert command.process.returncode == 130
    assert command.err.read_text().endswith("interrupted\n")


def test_sigterm_is_the_parent_s_to_handle_in_a_j_worker(tmp_path: Path) -> None:
    # as Ctrl-C: a worker given SIGTERM alone goes on (its parent, given it too, stops
    # the run and kills its workers); a worker that raised at it would fail its case
    (tmp_path / "agent.py").write_text(AGENT)
    rows = ", ".join(f"{{i: {i}, s: 2}}" for i in range(4))
    (tmp_path / "slow.eval").write_text(SLOW_SUITE.replace(ROWS, rows))
    command = Command(tmp_path, "run", "slow.eval", "--no-history", "-j", "2")
    children = Path(f"/proc/{command.process.pid}/task/{command.process.pid}/children")
    command.once(lambda: len(children.read_text().split()) == 2)
    time.sleep(1)  # the workers are running their first cases
    for worker in children.read_text().split():
        os.kill(int(worker), signal.SIGTERM)
    assert command.process.wait(timeout=60) == 0, command.out.read_text()
    assert "4 passed" in command.out.read_text()


#: A live target that starts a child process of its own (its pid written to a file once
#: started), then waits for it: 30 s.
SPAWNER = """\
import os, subprocess
def answer(input):
    child = subprocess.Popen(["sleep", "30"])
    with open(f"pid{input['i']}.tmp", "w") as out:
        out.write(str(child.pid))
    os.rename(f"pid{input['i']}.tmp", f"pid{input['i']}.txt")  # whole, once there
    child.wait()
    return "done"
"""


def _running(pid: int) -> bool:
    """Whether process `pid` exists and has not ended (a zombie has: its parent died with
    it, and init reaps it in its own time)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_stopped_run_leaves_no_child_of_a_live_target_running(
    tmp_path: Path, jobs: str, number: int
) -> None:
    # the targets' process groups are killed, as a timeout kills them: with -j by each
    # worker, which its stopped parent asks to (killing the worker alone left them)
    (tmp_path / "agent.py").write_text(SPAWNER)
    (tmp_path / "spawn.eval").write_text(
        'case "row {{i}}"\n  run agent:answer\n  input {i: "{{i}}"}\n'
        '  each [{i: 0}, {i: 1}]\n  answer contains "done"\n'
    )
    command = Command(tmp_path, "run", "spawn.eval", "--no-history", "-j", jobs)
    files = [tmp_path / f"pid{i}.txt" for i in range(int(jobs))]  # (serially: one at once)
    command.once(lambda: all(f.exists() for f in files))
    children = [int(f.read_text()) for f in files]
    assert all(_running(pid) for pid in children)
    command.stop(number)
    assert command.process.returncode == 128 + number, command.err.read_text()
    deadline = time.monotonic() + 20
    while any(_running(pid) for pid in children) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = [pid for pid in children if _running(pid)]
    for pid in left:  # (not left behind by a failing test either)
        os.kill(pid, signal.SIGKILL)
    assert not left, f"the targets' child processes {left} outlived the run"


#: The console script, its loading of `b.eval` held until the test stops it (after
#: `loading-b` appears): a run stopped while it loads its suites.
HELD_LOADING = """
import sys, time
from pathlib import Path
from evaldsl.suites import build
loaded = build.load_suite
def load_suite(path, **options):
    if Path(path).name == "b.eval":
        Path("loading-b").touch()
        time.sleep(60)
    return loaded(path, **options)
build.load_suite = load_suite
sys.argv = ["evaldsl", *sys.argv[1:]]
from evaldsl.tools.cli import main
sys.exit(main())
"""


def _two_suites(tmp_path: Path, b_reads: str = str(CASSETTE), each: str = "") -> None:
    """`a.eval` and `b.eval`, two cases each (`b`'s reading `b_reads`, with `each` rows)."""
    for name, reads, rows in (("a", str(CASSETTE), ""), ("b", b_reads, each)):
        (tmp_path / f"{name}.eval").write_text(
            "".join(f'case "{name}{k}"\n  cassette "{reads}"\n{rows}  steps >= 0\n' for k in (1, 2))
        )


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM])
def test_a_run_stopped_while_loading_reports_the_cases_loaded_as_not_run(
    tmp_path: Path, number: int
) -> None:
    _two_suites(tmp_path)
    (tmp_path / "r.json").write_text('{"stale": "a report of the run before"}')
    reports = ["--json", "r.json", "--junit", "r.xml"]
    command = Command(
        tmp_path, "run", "a.eval", "b.eval", "--no-history", *reports, script=HELD_LOADING
    )
    command.once((tmp_path / "loading-b").exists)
    command.stop(number)
    err = command.err.read_text()
    assert command.process.returncode == 128 + number, err
    assert "interrupted: 0 of 2 cases ran" in command.out.read_text()
    assert "interrupted while loading the suites: 1 suite file not read (first: b.eval)" in err
    assert "Traceback" not in err
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["interrupted"] is True and report["not_run"] == 2
    assert [(s["path"], s["cases"], s["not_run"]) for s in report["suites"]] == [
        ("a.eval", [], ["a1", "a2"])
    ]
    junit = (tmp_path / "r.xml").read_text()
    assert junit.count("<testcase") == 2 and junit.count('<error type="interrupted"') == 2


@pytest.mark.parametrize(
    ("reads", "each"),
    [("rec.jsonl", ""), ("{{f}}.jsonl", "  each [{f: rec}]\n")],
    ids=["path", "template"],
)
def test_a_run_stopped_while_loading_overwrites_no_file_the_unread_suites_read(
    tmp_path: Path, reads: str, each: str
) -> None:
    # b.eval was not loaded: its draft says what it reads (a path of its rows, unexpanded,
    # stands for every path it may render to); the run that was not stopped refuses too
    _two_suites(tmp_path, reads, each)
    recording = CASSETTE.read_bytes()
    (tmp_path / "rec.jsonl").write_bytes(recording)
    run = ["run", "a.eval", "b.eval", "--no-history", "--json", "rec.jsonl"]
    command = Command(tmp_path, *run, script=HELD_LOADING)
    command.once((tmp_path / "loading-b").exists)
    command.stop(signal.SIGINT)
    err = command.err.read_text()
    assert command.process.returncode == 2, err
    assert f"--json rec.jsonl: that is {'a file ' if each else 'the '}" in err
    assert "of b.eval" in err and "name another file" in err
    assert (tmp_path / "rec.jsonl").read_bytes() == recording


#: The console script, a stop (the signal `sys.argv[2]`) sent to itself as `sys.argv[1]`
#: is called: `refuse_inputs` (after loading, before the run), `streamed_bytes` (the run
#: looking at its recordings before its first case) or `write_outputs` (the cases all
#: ran, the reports not written yet).
STOP_AT = """
import os, sys
import evaldsl.runner.core as core
import evaldsl.tools.outputs as outputs
where, number = sys.argv[1], int(sys.argv[2])
module = core if where == "streamed_bytes" else outputs
real = getattr(module, where)
def stopped_here(*args, **options):
    os.kill(os.getpid(), number)
    return real(*args, **options)
setattr(module, where, stopped_here)
sys.argv = ["evaldsl", *sys.argv[3:]]
from evaldsl.tools.cli import main
sys.exit(main())
"""


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("where", ["refuse_inputs", "streamed_bytes", "write_outputs"])
def test_a_run_stopped_between_loading_and_reporting_writes_its_reports(
    tmp_path: Path, where: str, number: int
) -> None:
    # a stop at these moments once left no report at all (or, while they were written,
    # some of them): the stop before the run now stops it before its first case, one
    # while the reports are written comes once they are
    _two_suites(tmp_path)
    reports = ["--json", "r.json", "--junit", "r.xml", "--html", "r.html"]
    run = [where, str(int(number)), "run", "a.eval", "--no-history", *reports]
    command = Command(tmp_path, *run, script=STOP_AT)
    code = command.process.wait(timeout=60)
    err = command.err.read_text()
    assert code == 128 + number, err
    assert all((tmp_path / name).exists() for name in ("r.json", "r.xml", "r.html")), err
    report = json.loads((tmp_path / "r.json").read_text())
    if where == "write_outputs":  # (the cases had all run: the report says so)
        assert report.get("interrupted") is None and len(report["suites"][0]["cases"]) == 2
    else:
        assert report["interrupted"] is True and report["not_run"] == 2


#: The console script, its `-j` workers deaf to their stopped parent's request to end
#: what they started (as one stuck in a C call is): the parent ends it for them.
DEAF_WORKERS = """
import signal, sys
from evaldsl.runner import forkpool
real = signal.signal
def deaf(number, handler):
    return real(number, signal.SIG_IGN if number == forkpool.STOP_ASKED else handler)
signal.signal = deaf
sys.argv = ["evaldsl", *sys.argv[1:]]
from evaldsl.tools.cli import main
sys.exit(main())
"""


def test_a_worker_that_does_not_end_its_targets_has_them_ended_by_the_run(
    tmp_path: Path,
) -> None:
    (tmp_path / "agent.py").write_text(SPAWNER)
    (tmp_path / "spawn.eval").write_text(
        'case "row {{i}}"\n  run agent:answer\n  input {i: "{{i}}"}\n'
        '  each [{i: 0}, {i: 1}]\n  answer contains "done"\n'
    )
    run = ["run", "spawn.eval", "--no-history", "-j", "2"]
    command = Command(tmp_path, *run, script=DEAF_WORKERS)
    files = [tmp_path / f"pid{i}.txt" for i in range(2)]
    command.once(lambda: all(f.exists() for f in files))
    children = [int(f.read_text()) for f in files]
    command.stop(signal.SIGINT)  # (the workers ignore the request: killed after 2 s)
    assert command.process.returncode == 130, command.err.read_text()
    deadline = time.monotonic() + 20
    while any(_running(pid) for pid in children) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = [pid for pid in children if _running(pid)]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, f"the targets' child processes {left} outlived the run"
