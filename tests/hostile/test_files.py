"""Special files and devices: a FIFO, `/dev/stdin`, `/dev/zero`, a folder given as a trace,
suite, dataset or judge cache entry is refused at once with a clear error (never read,
never waited on); a dataset path never echoes a file that is not a dataset; a trace line
past the stated size is an error, not gigabytes of memory."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

import evaldsl
from evaldsl.judge.cache import cache_key, read_cache
from evaldsl.judge.client import LLMJudge
from evaldsl.judge.config import JudgeConfig
from evaldsl.language import reading
from evaldsl.language.limits import MAX_DOCUMENT_BYTES, MAX_LINE_BYTES
from evaldsl.language.reading import FileProblem, read_regular
from evaldsl.runs import model
from evaldsl.runs.detect import load_run
from evaldsl.runs.model import RunError
from tests.clitools import ROOT, run_evaldsl

CASSETTE = ROOT / "tests/fixtures/traceplay/demo/cassette.example.jsonl"


@pytest.fixture
def fifo(tmp_path: Path) -> Iterator[Path]:
    """A named pipe nobody writes to: reading it would block for ever."""
    path = tmp_path / "pipe.jsonl"
    os.mkfifo(path)
    yield path


def test_reading_doctests() -> None:
    import doctest

    assert doctest.testmod(reading).failed == 0


@pytest.mark.parametrize(
    ("name", "kind", "words"),
    [
        ("fifo", "special", "named pipe"),
        ("/dev/zero", "special", "character device"),
        ("/dev/null", "special", "character device"),
        ("folder", "folder", "is a folder"),
        ("missing", "missing", "not found"),
    ],
)
def test_read_regular_refuses_what_is_not_a_file(
    fifo: Path, tmp_path: Path, name: str, kind: str, words: str
) -> None:
    path = {"fifo": fifo, "folder": tmp_path, "missing": tmp_path / "nope"}.get(name, name)
    with pytest.raises(FileProblem) as caught:
        read_regular(path, 100)
    assert caught.value.kind == kind and words in str(caught.value)


def test_read_regular_refuses_a_file_over_its_limit(tmp_path: Path) -> None:
    path = tmp_path / "big"
    path.write_bytes(b"x" * 101)
    with pytest.raises(FileProblem, match="larger than 100 bytes"):
        read_regular(path, 100)
    assert read_regular(path, 101) == b"x" * 101


def test_stdin_as_a_trace_is_refused_whatever_it_is(tmp_path: Path) -> None:
    """`/dev/stdin` is a pipe here (and a terminal at a prompt): never read."""
    done = subprocess.run(
        [*_evaldsl(), "inspect", "/dev/stdin"],
        stdin=subprocess.PIPE,  # left open: a read would wait for ever
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.returncode == 1
    assert "named pipe" in done.stdout + done.stderr
    assert "Traceback" not in done.stderr


def _evaldsl() -> list[str]:
    import sys

    return [sys.executable, "-m", "evaldsl.tools.cli"]


@pytest.mark.parametrize("target", ["fifo", "/dev/zero", "/dev/stdin", "folder"])
@pytest.mark.parametrize("line", ["cassette", "trace", "state"])
def test_a_special_run_file_is_an_error_at_check_and_run(
    fifo: Path, tmp_path: Path, target: str, line: str
) -> None:
    path = {"fifo": str(fifo), "folder": str(tmp_path)}.get(target, target)
    source = f'trace "{path}" as otel' if line == "trace" else f'{line} "{path}"'
    (tmp_path / "s.eval").write_text(f'case "a"\n  {source}\n  steps >= 0\n', encoding="utf-8")
    for command in ("check", "run"):
        history = ["--no-history"] if command == "run" else []  # (never '': a usage error)
        done = run_evaldsl(command, "s.eval", *history, cwd=tmp_path)
        assert done.returncode == 1, done.stderr
        out = done.stdout + done.stderr
        assert ("is a folder" in out) if target == "folder" else ("device" in out or "pipe" in out)
        assert "Traceback" not in out


@pytest.mark.parametrize("target", ["fifo", "/dev/zero", "/dev/stdin"])
def test_a_special_suite_file_is_refused(fifo: Path, tmp_path: Path, target: str) -> None:
    path = str(fifo.with_name("s.eval")) if target == "fifo" else target
    if target == "fifo":
        os.mkfifo(path)
    for command in (["check", path], ["run", path, "--no-history"], ["fmt", path]):
        done = run_evaldsl(*command, cwd=tmp_path)
        assert done.returncode in (1, 2), done
        out = done.stdout + done.stderr
        assert "device" in out or "pipe" in out, out
        assert "Traceback" not in out


@pytest.mark.parametrize("target", ["fifo", "/dev/zero"])
def test_a_special_score_program_is_refused_at_once(
    fifo: Path, tmp_path: Path, target: str
) -> None:
    """`evaldsl score PROGRAM`: a FIFO as the program waited for a writer for ever, and
    /dev/zero was read until memory ran out; the program is read as a suite is."""
    path = str(fifo) if target == "fifo" else target
    done = run_evaldsl("score", path, str(CASSETTE), cwd=tmp_path)
    kind = "named pipe" if target == "fifo" else "character device"
    assert (done.returncode, done.stdout) == (2, ""), done
    assert f'cannot read the program: "{path}" is a {kind}, not a file' in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("target", ["fifo", "/dev/zero"])
def test_a_special_report_given_to_diff_is_refused_at_once(
    fifo: Path, tmp_path: Path, target: str
) -> None:
    """`evaldsl diff a.json PIPE`: the report was opened and read as text, so a FIFO was
    waited on for ever and /dev/zero read until memory ran out."""
    suite = tmp_path / "s.eval"
    suite.write_text(f'case "a"\n  cassette "{CASSETTE}"\n  steps >= 0\n', encoding="utf-8")
    ran = run_evaldsl("run", str(suite), "--no-history", "--json", "a.json", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    path = str(fifo) if target == "fifo" else target
    kind = "named pipe" if target == "fifo" else "character device"
    for refs in (["a.json", path], [path, "a.json"]):
        done = run_evaldsl("diff", *refs, cwd=tmp_path)
        assert (done.returncode, done.stdout) == (2, ""), done
        assert f'{path}: not a JSON report file: "{path}" is a {kind}, not a file' in done.stderr
        assert "Traceback" not in done.stderr


@pytest.mark.parametrize("target", ["fifo", "/dev/zero", "link"])
def test_convert_of_a_special_file_says_so_and_writes_nothing(
    fifo: Path, tmp_path: Path, target: str
) -> None:
    """Once "no such file" (a symlink to /dev/zero), then a bare `suite "NAME"` on
    standard output beside the error, as if it were the file's conversion."""
    path = {"fifo": str(fifo), "link": str(tmp_path / "zero.yaml")}.get(target, target)
    if target == "link":
        os.symlink("/dev/zero", path)
    done = run_evaldsl("convert", path, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (1, ""), done
    kind = "named pipe" if target == "fifo" else "character device"
    assert f'cannot read suite file: "{path}" is a {kind}, not a file' in done.stderr
    assert "regular files only" in done.stderr


def test_a_fifo_in_a_searched_folder_is_skipped(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.eval")
    (tmp_path / "ok.eval").write_text(
        f'case "a"\n  cassette "{CASSETTE}"\n  steps >= 0\n', encoding="utf-8"
    )
    for command in (["fmt", "--check"], ["check"], ["run", "--no-history"]):
        done = run_evaldsl(*command, str(tmp_path), cwd=tmp_path)
        assert done.returncode == 0, done
        assert "pipe.eval" not in done.stdout + done.stderr


def test_a_suite_link_to_nothing_in_a_searched_folder_is_an_error(tmp_path: Path) -> None:
    """A `.eval` link whose suite was moved or deleted was passed by as a pipe is: the run
    passed on the suites left, saying nothing of the one it did not run. Each command
    that searches a folder for suites now says it, as it says a folder it cannot read."""
    (tmp_path / "ok.eval").write_text(
        f'case "a"\n  cassette "{CASSETTE}"\n  steps >= 0\n', encoding="utf-8"
    )
    os.symlink("moved.eval", tmp_path / "gone.eval")
    said = 'it is a link to "moved.eval", which does not exist'
    for command, code in ((["check"], 2), (["run", "--no-history"], 2), (["fmt", "--check"], 1)):
        done = run_evaldsl(*command, str(tmp_path), cwd=tmp_path)
        assert done.returncode == code, done
        assert 'cannot read suite "' in done.stderr and said in done.stderr, done
        assert "Traceback" not in done.stdout + done.stderr


@pytest.mark.parametrize("target", ["fifo", "/dev/zero", "folder"])
def test_a_special_dataset_is_an_error(fifo: Path, tmp_path: Path, target: str) -> None:
    path = {"fifo": str(fifo), "folder": str(tmp_path)}.get(target, target)
    (tmp_path / "s.eval").write_text(
        f'case "a"\n  run agent:main\n  dataset "{path}"\n', encoding="utf-8"
    )
    (tmp_path / "agent.py").write_text("def main(x=None):\n    return x\n", encoding="utf-8")
    done = run_evaldsl("check", "s.eval", cwd=tmp_path)
    assert done.returncode == 1
    assert "cannot read the dataset" in done.stdout
    assert "Traceback" not in done.stdout + done.stderr


@pytest.mark.parametrize(
    "secret",
    [
        "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1::/usr/sbin:/usr/sbin/nologin\n",
        "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n",
        "API_KEY=sk-live-topsecret\n",
        "password: hunter2\nuser: admin\n",
        "- sk-live-topsecret\n- another-secret\n",
        '[{"user": "admin", "password": "hunter2"}]',
        "key: [unclosed sk-live-topsecret\n",
    ],
)
def test_a_dataset_path_never_echoes_a_file_that_is_not_a_dataset(
    tmp_path: Path, secret: str
) -> None:
    (tmp_path / "secret.txt").write_text(secret, encoding="utf-8")
    (tmp_path / "agent.py").write_text("def main(x=None):\n    return x\n", encoding="utf-8")
    (tmp_path / "s.eval").write_text(
        'case "a"\n  run agent:main\n  dataset "secret.txt"\n', encoding="utf-8"
    )
    for command in (["check", "s.eval"], ["run", "s.eval", "--no-history", "--json", "r.json"]):
        done = run_evaldsl(*command, cwd=tmp_path)
        out = done.stdout + done.stderr
        for word in ("hunter2", "topsecret", "root:x", "OPENSSH", "b3Blbn", "another-secret"):
            assert word not in out, (command, out)
        assert done.returncode == 1
    report = (tmp_path / "r.json").read_text(encoding="utf-8")
    assert "hunter2" not in report and "topsecret" not in report


@pytest.mark.parametrize("entry", ["fifo", "folder", "/dev/zero", "big"])
def test_a_judge_cache_entry_that_is_not_a_file_is_a_miss(tmp_path: Path, entry: str) -> None:
    config = JudgeConfig(mode="frozen", cache_dir=tmp_path)
    judge = LLMJudge(config)
    key = cache_key("answer", "rubric", config.model, config.base_url)
    path = tmp_path / f"{key}.json"
    if entry == "fifo":
        os.mkfifo(path)
    elif entry == "folder":
        path.mkdir()
    elif entry == "big":
        path.write_text(json.dumps({"passed": True, "reason": "x" * 2_000_000}), encoding="utf-8")
    else:
        path.symlink_to(entry)
    assert read_cache(path) is None
    outcome = judge("answer", "rubric", model=None, threshold=None)
    assert outcome.status == "error" and f"the cache file {path} was refused" in outcome.message


# ---- lines past the stated size ---------------------------------------------------------

SMALL_LIMIT = 1 << 20  # the limit is 256 MiB; the same code path is tested at 1 MiB


def test_a_trace_line_past_the_limit_is_an_error_not_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A JSONL trace whose second line never ends: read a piece at a time, refused at
    `MAX_LINE_BYTES + 1` bytes, with the line number."""
    monkeypatch.setattr(model, "MAX_LINE_BYTES", SMALL_LIMIT)
    path = tmp_path / "long.jsonl"
    with path.open("wb") as f:
        f.write(b'{"cassette": "traceplay", "version": 1}\n{"type": "llm.response", "x": "')
        f.write(b"a" * (3 * SMALL_LIMIT))
    run = load_run(path)
    assert run.events is not None
    with pytest.raises(RunError) as caught:
        for _ in run.events:
            pass
    assert caught.value.line == 2 and "longer than 1 MiB" in caught.value.message
    # and through the index's fast path, which reads lines at C speed
    result = evaldsl.compile("no tool x; tokens <= 5").check(path)
    assert result.statuses == ["error", "error"]
    assert result.error is not None and "line 2 is longer than 1 MiB" in result.error


def test_a_long_first_line_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(model, "MAX_LINE_BYTES", SMALL_LIMIT)
    path = tmp_path / "one-line.jsonl"
    path.write_bytes(b"[" + b" " * (SMALL_LIMIT + 10))
    with pytest.raises(RunError, match="line 1 is longer than 1 MiB"):
        load_run(path)


def test_the_line_limit_is_the_document_limit() -> None:
    assert MAX_LINE_BYTES == MAX_DOCUMENT_BYTES == 256 * 1024 * 1024


def test_a_nul_in_a_path_is_a_missing_file_not_a_crash(tmp_path: Path) -> None:
    (tmp_path / "s.eval").write_text(
        'case "a"\n  cassette "x\\u0000y"\n  steps >= 0\n'
        f'case "b"\n  cassette "{CASSETTE}"\n  steps >= 0\n',
        encoding="utf-8",
    )
    done = run_evaldsl("check", "s.eval", cwd=tmp_path)
    assert done.returncode == 1 and "not found" in done.stdout
    assert "Traceback" not in done.stderr
    # `run` sized each case's recording to plan its reading: `os.stat` raised ValueError
    ran = run_evaldsl("run", "--no-history", "s.eval", cwd=tmp_path)
    assert "Traceback" not in ran.stderr, ran.stderr[-600:]
    assert ran.returncode == 1 and "1 passed, 0 failed, 1 errored" in ran.stdout


def test_a_path_that_cannot_be_looked_at_is_that_case_s_error(tmp_path: Path) -> None:
    # `Path.exists` raises for a name too long (or a folder that may not be entered): the
    # case names why, the other cases run, the report is written, every command says so
    long = "x" * 300 + ".jsonl"
    (tmp_path / "ok.jsonl").write_bytes(CASSETTE.read_bytes())
    (tmp_path / "two.eval").write_text(
        f'case "long"\n  cassette "{long}"\n  tool get_weather called\n'
        'case "fine"\n  cassette "ok.jsonl"\n  tool get_weather called\n'
    )
    run = run_evaldsl("run", "two.eval", "--no-history", "--json", "r.json", cwd=tmp_path)
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr
    long_case, fine = json.loads((tmp_path / "r.json").read_text())["suites"][0]["cases"]
    assert fine["passed"] and not long_case["passed"]
    assert "File name too long" in long_case["error"]
    check = run_evaldsl("check", "two.eval", cwd=tmp_path)
    assert check.returncode == 1 and "File name too long" in check.stdout + check.stderr
    for command in (["fmt", long[:-6] + ".eval"], ["diff", long + ".json", "r.json"]):
        done = run_evaldsl(*command, cwd=tmp_path)
        assert done.returncode in (1, 2) and "Traceback" not in done.stderr, done.stderr
        assert "File name too long" in done.stderr
    with pytest.raises(evaldsl.EvalDslError):  # the API's own error, not an OSError
        evaldsl.compile(f'cassette "{long}"\ntool x called', base_dir=tmp_path).check(
            tmp_path / long
        )


def test_reading_looks_tell_absence_from_what_cannot_be_looked_at(tmp_path: Path) -> None:
    long = tmp_path / ("x" * 300)
    assert (reading.present(long), reading.is_folder(long), reading.is_regular(long)) == (
        True,
        False,
        False,
    )
    missing = tmp_path / "none"
    assert not (reading.present(missing) or reading.is_folder(missing))
    assert reading.is_folder(tmp_path) and reading.is_regular(CASSETTE)
    assert not reading.present("a\x00b")


def unlookable(folder: Path, kind: str) -> tuple[str, str]:
    """A name in `folder` that `os.stat` refuses, and the reason it gives: one too long
    for the file system, or a loop of two links."""
    if kind == "long":
        return "x" * 300, "File name too long"
    os.symlink("loop2", folder / "loop")
    os.symlink("loop", folder / "loop2")
    return "loop", "Too many levels of symbolic links"


@pytest.mark.parametrize("kind", ["long", "loop"])
def test_a_history_path_that_cannot_be_looked_at_says_why(tmp_path: Path, kind: str) -> None:
    """`--history NAME` with a name too long was a traceback (`Path.is_dir` raised), and
    a loop of links was said to be `a pipe or a device`."""
    name, why = unlookable(tmp_path, kind)
    said = f"{name} is not a regular file (it cannot be looked at: {why}), so no history"
    for command in (["history"], ["diff"]):
        done = run_evaldsl(*command, "--history", name, cwd=tmp_path)
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        assert said in done.stderr, done.stderr
    suite = tmp_path / "s.eval"
    suite.write_text(f'case "a"\n  cassette "{CASSETTE}"\n  steps >= 0\n', encoding="utf-8")
    ran = run_evaldsl("run", "s.eval", "--history", name, cwd=tmp_path)
    assert ran.returncode == 0 and "Traceback" not in ran.stderr, ran.stderr
    assert f"evaldsl: warning: this run is not in the history: {said}" in ran.stderr


@pytest.mark.parametrize("kind", ["long", "loop"])
def test_a_judge_cache_path_that_cannot_be_looked_at_is_refused(tmp_path: Path, kind: str) -> None:
    """`--judge-cache NAME` with a name too long was a traceback (`Path.exists` raised);
    a loop of links was taken, and every write of a verdict failed after it was paid."""
    name, why = unlookable(tmp_path, kind)
    suite = tmp_path / "s.eval"
    suite.write_text(f'case "a"\n  cassette "{CASSETTE}"\n  steps >= 0\n', encoding="utf-8")
    for command in (["check", "s.eval"], ["run", "s.eval", "--no-history"]):
        done = run_evaldsl(*command, "--judge-cache", name, cwd=tmp_path)
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        said = f"--judge-cache {name}: it cannot be looked at ({why}); name a folder"
        assert said in done.stderr, done.stderr
