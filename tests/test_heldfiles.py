"""A command's small recordings read once (`evaldsl/runs/heldfiles.py`).

Inside `reading_once()` a small run file is read at its first open and every later open
gets those bytes; outside it, and for a large file, every open reads the disk. Reading
through kept bytes must give what reading the file gives, for every format and every
reader (detection, the head check, tool names, the passes), errors included; a `check`
or `run` must open each small recording once.
"""

from __future__ import annotations

import errno
import io
import os
from pathlib import Path
from typing import Any

import pytest

from evaldsl.runs import heldfiles
from evaldsl.runs.cassette import EventStream
from evaldsl.runs.detect import check_head, inspect_samples, load_run
from evaldsl.runs.heldfiles import HOLD_BYTES, HeldFile, reading_once
from evaldsl.runs.model import RunError, open_file
from evaldsl.runs.toolnames import recorded_tool_names
from evaldsl.tools.cli import main

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = sorted(
    p
    for folder in ("realworld", "traceplay")
    for p in (ROOT / "tests" / "fixtures" / folder).rglob("*")
    if p.is_file() and p.suffix != ".md" and p.name != "LICENSE"
)

HEADER = b'{"cassette": "traceplay", "version": 1, "project": "p"}\n'


def _event(n: int, name: str = "search") -> bytes:
    return (
        b'{"id": "e%d", "type": "tool.call", "name": "%s", "callId": "c%d", "arguments": {}}\n'
        % (n, name.encode(), n)
    )


def _cassette(path: Path, name: str = "search", events: int = 3) -> Path:
    path.write_bytes(HEADER + b"".join(_event(i, name) for i in range(events)))
    return path


def _outcome(path: Path) -> Any:
    """Everything the readers give for `path` (a `RunError` as its words and place)."""
    try:
        run = load_run(path)
        events = run.events
        head: Any = None
        if isinstance(events, EventStream):
            check_head(run)
            head = sorted(recorded_tool_names(events))
            events = list(events)
        elif events is not None:
            events = list(events)
        return (run.format, events, run.state, repr(run.output), head, inspect_samples(path))
    except RunError as err:
        return ("error", err.message, err.line, err.column, err.hint)


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: str(p.relative_to(ROOT / "tests")))
def test_every_real_trace_reads_the_same_from_its_kept_bytes(path: Path) -> None:
    expected = _outcome(path)
    with reading_once():
        first = _outcome(path)  # (reads the file; a small one is kept)
        again = _outcome(path)  # (from the kept bytes, when it was kept)
        kept = isinstance(open_file(str(path)), HeldFile)
    assert first == expected
    assert again == expected
    assert kept == (path.stat().st_size <= HOLD_BYTES)


BAD: dict[str, bytes] = {
    "a line that is not JSON": HEADER + _event(0) + b"{not json\n" + _event(2),
    "a line that is not an object": HEADER + b"[1, 2]\n",
    "a bad header": b'{"cassette": "other", "version": 1}\n' + _event(0),
    "nothing recognised": HEADER + b'{"type": "x.y"}\n' * 3,
    "a bad tool-call line": HEADER + b'{"type": "tool.call", "name": "s"\n',
    "empty": b"",
    "blank lines only": b"\n \n\t\n",
    "a BOM before the header": b"\xef\xbb\xbf" + HEADER + _event(0),
    "CRLF lines": (HEADER + _event(0) + _event(1)).replace(b"\n", b"\r\n"),
    "no newline at the end": HEADER + _event(0).rstrip(b"\n"),
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_a_bad_or_odd_file_gives_the_same_error_from_its_kept_bytes(
    name: str, tmp_path: Path
) -> None:
    path = tmp_path / "run.jsonl"
    path.write_bytes(BAD[name])
    expected = _outcome(path)
    with reading_once():
        assert _outcome(path) == expected
        assert _outcome(path) == expected


def test_inside_a_command_a_file_is_read_as_it_was_first_opened(tmp_path: Path) -> None:
    path = _cassette(tmp_path / "c.jsonl", "search")
    with reading_once():
        assert sorted(recorded_tool_names(EventStream(str(path)))) == ["search"]
        _cassette(path, "fetch")  # rewritten while the command runs
        assert sorted(recorded_tool_names(EventStream(str(path)))) == ["search"]
    # outside a command every open reads the disk: a long-lived process sees the change
    assert sorted(recorded_tool_names(EventStream(str(path)))) == ["fetch"]
    _cassette(path, "write")
    assert sorted(recorded_tool_names(EventStream(str(path)))) == ["write"]


def test_a_large_file_is_read_from_disk_at_every_open(tmp_path: Path) -> None:
    path = _cassette(tmp_path / "big.jsonl", "search", events=HOLD_BYTES // 80 + 10)
    assert path.stat().st_size > HOLD_BYTES
    with reading_once():
        first = open_file(str(path))
        assert not isinstance(first, HeldFile)
        assert first.read() == path.read_bytes()  # (handed over at its start)
        first.close()
        _cassette(path, "fetch", events=HOLD_BYTES // 80 + 10)
        assert sorted(recorded_tool_names(EventStream(str(path)))) == ["fetch"]


def test_past_the_total_no_new_file_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    one = _cassette(tmp_path / "one.jsonl", "search")
    monkeypatch.setattr(heldfiles, "HOLD_TOTAL", one.stat().st_size)
    two = _cassette(tmp_path / "two.jsonl", "search")
    with reading_once():
        open_file(str(one)).close()
        open_file(str(two)).close()
        assert isinstance(open_file(str(one)), HeldFile)
        assert not isinstance(open_file(str(two)), HeldFile)


def test_a_file_that_cannot_be_opened_is_tried_again(tmp_path: Path) -> None:
    path = tmp_path / "late.jsonl"
    with reading_once():
        with pytest.raises(RunError, match="file not found"):
            open_file(str(path))
        _cassette(path)
        f = open_file(str(path))
        assert f.read() == path.read_bytes()
        folder = tmp_path / "folder.jsonl"
        folder.mkdir()
        for _ in range(2):
            with pytest.raises(RunError, match="is a folder"):
                open_file(str(folder))


class _Failing(io.FileIO):
    """A file whose reads fail, as a disk's input/output error makes them."""

    def read(self, size: int | None = -1) -> bytes:
        raise OSError(errno.EIO, "Input/output error")


def test_a_read_that_fails_is_a_run_error_and_keeps_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import evaldsl.runs.model as model

    path = _cassette(tmp_path / "c.jsonl")
    failing = _Failing(path)
    monkeypatch.setattr(model, "open_regular", lambda p: failing)
    with reading_once():
        with pytest.raises(RunError, match=r"cannot read .*Input/output error"):
            open_file(str(path))
        assert failing.closed
        assert heldfiles.held(str(path)) is None
        monkeypatch.undo()
        assert open_file(str(path)).read() == path.read_bytes()
        assert heldfiles.held(str(path)) is not None  # (read whole now, and kept)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_a_named_pipe_is_refused_without_waiting(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    with reading_once():
        for _ in range(2):
            with pytest.raises(RunError, match="named pipe"):
                open_file(str(fifo))


def test_nested_blocks_keep_the_outer_files(tmp_path: Path) -> None:
    path = _cassette(tmp_path / "c.jsonl")
    with reading_once():
        with reading_once():
            open_file(str(path)).close()
        assert isinstance(open_file(str(path)), HeldFile)
    assert not isinstance(open_file(str(path)), HeldFile)


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths opened from disk (by `model.open_regular`) while the test runs."""
    import evaldsl.runs.model as model

    paths: list[str] = []
    real = model.open_regular

    def counting(path: Any) -> Any:
        paths.append(os.fspath(path))
        return real(path)

    monkeypatch.setattr(model, "open_regular", counting)
    return paths


def _suite(tmp_path: Path, cases: int) -> Path:
    lines = []
    for i in range(cases):
        _cassette(tmp_path / f"c{i}.jsonl", "search" if i % 2 else "fetch")
        lines += [f'case "c{i}"', f'cassette "c{i}.jsonl"', "tool search called 3 times"]
    suite = tmp_path / "suite.eval"
    suite.write_text("\n".join(lines) + "\n")
    return suite


@pytest.mark.parametrize("command", ["check", "run"])
def test_a_command_opens_each_small_recording_once(
    command: str, tmp_path: Path, opened: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    suite = _suite(tmp_path, 4)
    extra = ["-q", "--no-history", "--judge", "off"] if command == "run" else []
    code = main([command, *extra, str(suite)])
    out = capsys.readouterr().out
    assert code == (1 if command == "run" else 0), out
    if command == "run":  # the verdicts themselves: two cases pass, two fail
        assert "2 passed, 2 failed" in out
    recordings = sorted(p for p in opened if p.endswith(".jsonl"))
    assert recordings == sorted(str(tmp_path / f"c{i}.jsonl") for i in range(4))


def test_a_block_keeps_the_files_of_its_own_thread_only(tmp_path: Path) -> None:
    import threading

    path = _cassette(tmp_path / "c.jsonl")
    seen: list[bool] = []

    def other() -> None:  # (outside any block: reads the disk)
        seen.extend(isinstance(open_file(str(path)), HeldFile) for _ in range(2))

    with reading_once():
        open_file(str(path)).close()
        thread = threading.Thread(target=other)
        thread.start()
        thread.join()
        assert isinstance(open_file(str(path)), HeldFile)
    assert seen == [False, False]


def test_each_check_of_a_suites_text_reads_the_recordings_anew(
    tmp_path: Path, opened: list[str]
) -> None:
    from evaldsl.suites.build import check_text

    lines = []
    for i in range(3):
        _cassette(tmp_path / f"c{i}.jsonl", "fetch")
        lines += [f'case "c{i}"', f'cassette "c{i}.jsonl"', "tool fetc called 3 times"]
    suite = tmp_path / "suite.eval"
    text = "\n".join(lines) + "\n"
    never = 'tool "fetc" never occurs in this cassette'
    assert [d.message for d in check_text(text, str(suite))] == [never] * 3
    assert sorted(opened) == sorted(str(tmp_path / f"c{i}.jsonl") for i in range(3))
    # the language server checks again after each edit: a recording changed since is read
    for i in range(3):
        _cassette(tmp_path / f"c{i}.jsonl", "fetc")
    assert check_text(text, str(suite)) == []
    assert len(opened) == 6


def test_what_a_reading_learns_is_learnt_once_a_reading() -> None:
    from evaldsl.runs.heldfiles import learnt

    calls: list[str] = []

    def learn() -> str:
        calls.append("x")
        return f"answer {len(calls)}"

    assert learnt("k", learn) == "answer 1" and learnt("k", learn) == "answer 2"  # outside
    with reading_once():
        assert learnt("k", learn) == "answer 3"
        assert learnt("k", learn) == "answer 3"
        assert learnt("other", learn) == "answer 4"
    with reading_once():  # a new reading learns anew
        assert learnt("k", learn) == "answer 5"
    assert learnt("k", learn) == "answer 6"  # and outside again, every time
    assert len(calls) == 6


def test_cases_naming_one_file_read_its_facts_once_each_with_its_own_diagnostic(
    tmp_path: Path, source_loads: list[str]
) -> None:
    from evaldsl.suites.build import check_text

    loads = source_loads
    _cassette(tmp_path / "shared.jsonl", "fetch")
    (tmp_path / "broken.jsonl").write_bytes(HEADER + b"{not json\n")
    lines = []
    for i in range(4):
        lines += [f'case "s{i}"', 'cassette "shared.jsonl"', "tool fetc called 3 times"]
        lines += [f'case "b{i}"', 'cassette "broken.jsonl"', "tool fetch called"]
    suite = tmp_path / "suite.eval"
    found = check_text("\n".join(lines) + "\n", str(suite))
    assert sorted(loads) == sorted(str(tmp_path / n) for n in ("shared.jsonl", "broken.jsonl"))
    # every case still has its own diagnostics, at its own lines
    never = [d.line for d in found if "never occurs" in d.message]
    broken = [d.line for d in found if d.message.startswith('cannot read "broken.jsonl"')]
    assert never == [3, 9, 15, 21] and broken == [5, 11, 17, 23]
