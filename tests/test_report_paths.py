"""Report paths as CI users meet them: a device, a named pipe or a shell's `>(…)` is
written in place (never replaced by a regular file), and a path the report must not or
cannot take (a read-only file, a path under a file, the run's history database, an
empty path, a report of a dry run) is refused before anything runs, with exit 2.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from evaldsl.atomicfile import write_atomically
from tests.clitools import ROOT, run_evaldsl

SUITE = 'case "sunny"\n  cassette "xiamen.jsonl"\n  answer contains "sunny"\n'


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A folder holding `s.eval`, one passing case, and the cassette it reads."""
    shutil.copy(ROOT / "examples" / "weather" / "cassettes" / "xiamen.jsonl", tmp_path)
    (tmp_path / "s.eval").write_text(SUITE, encoding="utf-8")
    return tmp_path


def _read_all(path: Path, into: list[bytes]) -> threading.Thread:
    """A thread reading the named pipe `path` to its end, into `into`."""

    def read() -> None:
        with open(path, "rb") as f:
            into.append(f.read())

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread


# ---- devices and pipes are written in place -------------------------------------------------


def test_a_named_pipe_is_written_in_place_and_stays_a_pipe(folder: Path) -> None:
    fifo = folder / "report.pipe"
    os.mkfifo(fifo)
    read: list[bytes] = []
    reader = _read_all(fifo, read)
    result = run_evaldsl("run", "s.eval", "--no-history", "--json", fifo.name, cwd=folder)
    reader.join(timeout=60)
    assert result.returncode == 0, result.stderr
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    assert json.loads(read[0])["summary"]["cases"] == 1


def _char_device(folder: Path) -> tuple[Path, int | None]:
    """A character device to write to: a null device node made in `folder` (root may make
    one), else a pseudo-terminal's end, with the other end's descriptor to read it."""
    node = folder / "null"
    try:
        os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except PermissionError:
        main, other = os.openpty()
        return Path(os.ttyname(other)), main
    return node, None


def test_a_character_device_is_written_in_place_and_stays_a_device(folder: Path) -> None:
    device, main = _char_device(folder)
    before = device.stat()
    result = run_evaldsl("run", "s.eval", "--no-history", "--junit", str(device), cwd=folder)
    assert result.returncode == 0, result.stderr
    after = device.stat()
    assert stat.S_ISCHR(after.st_mode)
    assert (after.st_ino, after.st_rdev) == (before.st_ino, before.st_rdev)
    if main is not None:
        assert b"<testsuites" in os.read(main, 65536)
    assert sorted(p.name for p in folder.iterdir() if p.name.startswith(".")) == []


def test_a_pipe_named_through_dev_fd_is_written() -> None:
    """`--json >(wc -c)` and `--html /dev/stdout` into a pipe: the path's target is
    `pipe:[N]`, no file at all; it said `cannot write /dev/fd/63: No such file`."""
    read_end, write_end = os.pipe()
    try:
        write_atomically(f"/dev/fd/{write_end}", "report\n")
    finally:
        os.close(write_end)
    with os.fdopen(read_end, "rb") as r:
        assert r.read() == b"report\n"


@pytest.mark.parametrize("path", ["/dev/stdout", "/proc/self/fd/1"])
def test_a_report_to_the_file_stdout_is_is_written_as_to_dash(folder: Path, path: str) -> None:
    """`--json /dev/stdout` is `--json -`: the report alone on standard output, the
    console on stderr; the console's lines were written into the report's stream."""
    result = run_evaldsl("run", "s.eval", "--no-history", "--json", path, cwd=folder)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)  # (nothing else on it)
    assert report["summary"]["passed"] == 1
    assert "✓" in result.stderr


def test_a_report_to_the_file_stdout_was_redirected_to_is_written_to_stdout(
    folder: Path,
) -> None:
    """`evaldsl run … --json r.json > r.json`: the report replaced the file the console
    was still writing to; it is now standard output's, whole, the console on stderr."""
    command = [sys.executable, "-m", "evaldsl.tools.cli", "run", "s.eval", "--no-history"]
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(ROOT)}
    with open(folder / "r.json", "w", encoding="utf-8") as out:
        done = subprocess.run(
            [*command, "--json", "r.json"],
            cwd=folder,
            stdout=out,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            timeout=120,
        )
    assert done.returncode == 0, done.stderr
    assert json.loads((folder / "r.json").read_text())["summary"]["passed"] == 1
    assert "✓" in done.stderr


def test_two_reports_to_stdout_by_name_and_by_dash_are_refused(folder: Path) -> None:
    result = run_evaldsl(
        "run", "s.eval", "--no-history", "--json", "-", "--junit", "/dev/stdout", cwd=folder
    )
    assert result.returncode == 2
    assert "--json and --junit both write standard output (-)" in result.stderr


# ---- paths refused before the run ----------------------------------------------------------


def test_a_read_only_report_file_is_refused_and_kept(folder: Path) -> None:
    kept = folder / "r.json"
    kept.write_text("earlier\n")
    kept.chmod(0o444)
    result = run_evaldsl(
        "run", "s.eval", "--no-history", "--json", "r.json", "--junit", "j.xml", cwd=folder
    )
    assert result.returncode == 2, result.stderr
    assert "evaldsl: error: --json r.json: that file is read-only" in result.stderr
    assert kept.read_text() == "earlier\n"
    assert not (folder / "j.xml").exists()  # refused before anything ran
    with pytest.raises(PermissionError, match="read-only"):
        write_atomically(kept, "new\n")  # (root may write it: it is still refused)
    assert kept.read_text() == "earlier\n"


@pytest.mark.parametrize("path", ["s.eval/r.xml", "s.eval/deeper/r.xml"])
def test_a_report_under_a_file_is_refused_saying_the_parent_is_a_file(
    folder: Path, path: str
) -> None:
    result = run_evaldsl("run", "s.eval", "--no-history", "--junit", path, cwd=folder)
    assert result.returncode == 2, result.stderr
    said = f"evaldsl: error: --junit {path}: {folder / 's.eval'} is a file, not a folder"
    assert said in result.stderr
    assert "✓" not in result.stdout  # before the run


def test_the_history_database_is_no_report_path(folder: Path) -> None:
    first = run_evaldsl("run", "s.eval", cwd=folder)  # makes .evaldsl/history.sqlite
    assert first.returncode == 0, first.stderr
    database = folder / ".evaldsl" / "history.sqlite"
    before = database.read_bytes()
    result = run_evaldsl("run", "s.eval", "--json", ".evaldsl/history.sqlite", cwd=folder)
    assert result.returncode == 2, result.stderr
    assert "--json .evaldsl/history.sqlite: that is the history database" in result.stderr
    assert database.read_bytes() == before
    named = run_evaldsl("run", "s.eval", "--history", "h.db", "--markdown", "h.db", cwd=folder)
    assert named.returncode == 2, named.stderr
    assert "--markdown h.db: that is the history database the run records to" in named.stderr
    assert not (folder / "h.db").exists()
    # with --no-history the database is not recorded to, but is still no report's to take
    other = run_evaldsl("run", "s.eval", "--no-history", "--json", str(database), cwd=folder)
    assert other.returncode == 2, other.stderr
    assert "that is an SQLite database" in other.stderr
    assert database.read_bytes() == before
    sqlite3.connect(database).close()


def test_a_symbolic_link_that_loops_is_refused_before_the_run(folder: Path) -> None:
    # it was found only when the report was written, once every case had run
    (folder / "loop.json").symlink_to("loop.json")
    result = run_evaldsl("run", "s.eval", "--no-history", "--json", "loop.json", cwd=folder)
    assert result.returncode == 2, result.stderr
    said = "--json loop.json: that is a symbolic link that leads back to itself"
    assert said in result.stderr
    assert "✓" not in result.stdout  # before the run


def test_a_symbolic_link_into_folders_not_made_yet_is_written_where_it_points(
    folder: Path,
) -> None:
    # `latest.json -> runs/today/report.json`: the run ended 'cannot write latest.json: No
    # such file or directory', its report lost, where a plain path's folders are made
    (folder / "latest.json").symlink_to(Path("runs", "today", "report.json"))
    result = run_evaldsl("run", "s.eval", "--no-history", "--junit", "latest.json", cwd=folder)
    assert result.returncode == 0, result.stderr
    assert (folder / "latest.json").is_symlink()
    written = (folder / "runs" / "today" / "report.json").read_text(encoding="utf-8")
    assert 'tests="1"' in written
    # one pointing under a file is refused before the run, as a plain path under a file is
    (folder / "under.json").symlink_to(Path("s.eval", "report.json"))
    refused = run_evaldsl("run", "s.eval", "--no-history", "--json", "under.json", cwd=folder)
    assert refused.returncode == 2, refused.stderr
    assert f"--json under.json: {folder / 's.eval'} is a file, not a folder" in refused.stderr
    assert "✓" not in refused.stdout


@pytest.mark.parametrize(
    ("given", "reason"),
    [
        ("a" * 300 + ".json", "File name too long"),  # (255 bytes at most, on Linux)
        ("/proc/report.json", "No such file or directory"),  # (a folder no file is made in)
        ("/proc/self/new/report.json", "No such file or directory"),  # (its folders neither)
    ],
)
def test_a_place_no_file_can_be_made_in_is_refused_before_the_run(
    folder: Path, given: str, reason: str
) -> None:
    # it was found only when the report was written, once every case had run
    result = run_evaldsl("run", "s.eval", "--no-history", "--markdown", given, cwd=folder)
    assert result.returncode == 2, result.stderr
    said = f"--markdown {given}: no file can be made there ({reason}); name a file in a folder"
    assert said in result.stderr
    assert "✓" not in result.stdout  # before the run
    assert sorted(p.name for p in folder.iterdir()) == ["s.eval", "xiamen.jsonl"]  # none left
    # a report that can be made leaves no trace of the trying but itself
    done = run_evaldsl("run", "s.eval", "--no-history", "--markdown", "r.md", cwd=folder)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in folder.iterdir()) == ["r.md", "s.eval", "xiamen.jsonl"]


@pytest.mark.parametrize("given", ["prices.json", "./prices.json", "link.json"])
def test_the_price_table_is_no_report_path(folder: Path, given: str) -> None:
    # the table EVALDSL_PRICES names is read by this run and by every later one: a report
    # written over it lost the user's prices, and the next run priced nothing
    table = '{"models": {"my-model": {"input": 1, "output": 2}}}\n'
    (folder / "prices.json").write_text(table, encoding="utf-8")
    (folder / "link.json").symlink_to("prices.json")
    env = {"EVALDSL_PRICES": "prices.json"}
    result = run_evaldsl("run", "s.eval", "--no-history", "--junit", given, cwd=folder, env=env)
    assert result.returncode == 2, result.stderr
    said = (
        f"--junit {given}: that is the price table the run prices by (EVALDSL_PRICES=prices.json)"
    )
    assert said in result.stderr
    assert "✓" not in result.stdout  # before the run
    assert (folder / "prices.json").read_text(encoding="utf-8") == table


@pytest.mark.parametrize(
    "options",
    [
        ("run", "s.eval", "--history", ""),
        ("run", "s.eval", "--no-history", "--judge-cache", ""),
        ("check", "s.eval", "--judge-cache", ""),
        ("history", "--history", ""),
        ("diff", "--history", ""),
    ],
)
def test_an_empty_history_or_judge_cache_path_is_refused(
    folder: Path, options: tuple[str, ...]
) -> None:
    result = run_evaldsl(*options, cwd=folder)
    assert result.returncode == 2, result.stderr
    assert "an empty path names no file or folder" in result.stderr
    assert sorted(p.name for p in folder.iterdir()) == ["s.eval", "xiamen.jsonl"]


def test_a_dry_run_with_a_report_is_refused(folder: Path) -> None:
    result = run_evaldsl("run", "s.eval", "--dry-run", "--json", "r.json", cwd=folder)
    assert result.returncode == 2, result.stderr
    assert "--dry-run runs no case, so it writes no report: drop --json" in result.stderr


@pytest.mark.parametrize("written", ["x\\u0000y", "x\\ud800y"])
def test_a_source_path_no_file_can_have_does_not_stop_the_reports(
    folder: Path, written: str
) -> None:
    """Before writing reports, the run makes sure none is a file a case reads; a path with
    a NUL or half a surrogate pair (`cassette "x\\ud800y"`, or an `each` row's) made
    `os.path.realpath` raise ValueError: a traceback, and no report at all."""
    (folder / "s.eval").write_text(
        SUITE + f'case "odd"\n  cassette "{written}"\n  steps >= 1\n'
        f'case "rows"\n  run agent:answer\n  dataset "{written}"\n  steps >= 1\n',
        encoding="utf-8",
    )
    (folder / "report.json").write_text("{}", encoding="utf-8")  # (its datasets are read too)
    done = run_evaldsl("run", "--no-history", "--json", "report.json", "s.eval", cwd=folder)
    assert "Traceback" not in done.stderr, done.stderr[-600:]
    assert done.returncode == 1
    report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    assert report["summary"]["cases"] == 3 and report["summary"]["passed"] == 1
