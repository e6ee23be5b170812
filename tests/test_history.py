"""The run history: `evaldsl run` records every run in SQLite (real files, real processes),
assertions keep their identity when a suite is reformatted, old databases are migrated,
concurrent runs both land whole, and a broken or locked database never costs a run its
report. `evaldsl history` shows the runs over time and the assertions that flip."""

from __future__ import annotations

import json
import multiprocessing
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from evaldsl.format.formatter import canonical_statement
from evaldsl.history.snapshots import AssertionKey, keyed, snapshot_of_report, suite_key
from evaldsl.history.store import (
    LOCK_TIMEOUT,
    MIGRATIONS,
    SCHEMA_VERSION,
    GitState,
    History,
    HistoryError,
    git_state,
    record_report,
)
from evaldsl.runner import run_suites
from evaldsl.suites import load_suite
from tests.clitools import ROOT, run_evaldsl
from tests.historytools import checkout, read_json, run_in

WEATHER = ROOT / "examples" / "weather" / "weather.eval"


def history_json(project: Path, *args: str) -> dict:
    result = run_in(project, "history", "--format", "json", *args)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


# ---- identities --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("tool  'get_weather'   called  once", "tool get_weather called once"),
        ('tool get_weather args $.city=="Xiamen"', 'tool get_weather args $.city == "Xiamen"'),
        (
            "tools in order [\n  search,  # first\n  get_weather,\n]",
            "tools in order [search, get_weather]",
        ),
        (
            "(answer contains 'a') or (steps <= 2 and not tokens > 5)",
            'answer contains "a" or steps <= 2 and not tokens > 5',
        ),
        ('answer judged "ok >= 1" >=  0.70', 'answer judged "ok >= 1" >= 0.7'),
    ],
)
def test_canonical_text_is_the_same_for_two_spellings(a: str, b: str) -> None:
    assert canonical_statement(a) == canonical_statement(b) == b.replace("\n", " ")


def test_canonical_text_tells_different_assertions_apart() -> None:
    texts = [
        "steps <= 2",
        "steps < 2",
        "tool a called once",
        "tool a called twice",
        "answer contains 'A'",
    ]
    assert len({canonical_statement(t) for t in texts}) == len(texts)


def test_a_repeated_assertion_gets_its_occurrence() -> None:
    keys = keyed("s.eval", "c", ["steps <= 2", "tokens < 9", "steps  <=  2"])
    assert [(k.text, k.occurrence) for k in keys] == [
        ("steps <= 2", 0),
        ("tokens < 9", 0),
        ("steps <= 2", 1),
    ]


def test_suite_paths_are_keyed_relative_to_the_working_folder(tmp_path: Path) -> None:
    assert suite_key(str(tmp_path / "a" / "b.eval"), tmp_path) == "a/b.eval"
    assert suite_key("./x/y.eval") == "x/y.eval"
    elsewhere = Path("/somewhere/else/z.eval")
    assert suite_key(str(elsewhere), tmp_path) == "/somewhere/else/z.eval"


def test_two_cases_of_one_name_keep_apart(tmp_path: Path) -> None:
    shutil.copy(WEATHER.parent / "cassettes" / "xiamen.jsonl", tmp_path)
    suite = tmp_path / "twice.eval"
    suite.write_text(
        'case "same"\n  cassette "xiamen.jsonl"\n  steps <= 5\n'
        'case "same"\n  cassette "xiamen.jsonl"\n  steps <= 1\n'
    )
    report = run_suites([load_suite(suite)])
    db = tmp_path / "h.sqlite"
    with History.open(db, create=True) as history:
        back = history.snapshot(
            history.record(snapshot_of_report(report), started_at="t", duration_ms=1)
        )
    assert [(c.name, c.assertions[0].status) for c in back.cases] == [
        ("same", "pass"),
        ("same (2)", "fail"),
    ]


def test_reformatting_a_suite_keeps_every_identity(tmp_path: Path) -> None:
    (tmp_path / "cassettes").mkdir()
    shutil.copy(WEATHER.parent / "cassettes" / "xiamen.jsonl", tmp_path / "cassettes")
    text = (
        'suite "w"\ntools get_weather\n'
        'case "c"\n  cassette "cassettes/xiamen.jsonl"\n'
        "  tool  'get_weather'   called 1 time ;answer matches /\\d+\\s*C/\n"
        "  tools in order [\n    get_weather,  # the only one\n  ]\n"
        '  (tool get_weather args $.city=="Xiamen") and steps<=5\n'
    )
    suite = tmp_path / "w.eval"
    suite.write_text(text)
    before = snapshot_of_report(run_suites([load_suite(suite)]))
    assert run_evaldsl("fmt", str(suite)).returncode == 0
    assert suite.read_text() != text
    after = snapshot_of_report(run_suites([load_suite(suite)]))
    keys = [a.key for c in before.cases for a in c.assertions]
    assert keys == [a.key for c in after.cases for a in c.assertions]
    assert [k.text for k in keys] == [
        "tool get_weather called 1 time",
        "answer matches /\\d+\\s*C/",
        "tools in order [get_weather]",
        'tool get_weather args $.city == "Xiamen" and steps <= 5',
    ]


# ---- recording ---------------------------------------------------------------------------


def test_every_run_is_recorded_beside_the_judge_cache(tmp_path: Path) -> None:
    project = checkout(tmp_path / "p", "before")
    assert run_in(project, "run", "agent.eval").returncode == 1  # `lookup` fails on purpose
    db = project / ".evaldsl" / "history.sqlite"
    assert db.is_file()
    with History.open(db) as history:
        (run,) = history.runs()
        assert (run.cases, run.passed) == (2, 1)
        assert run.score == pytest.approx((1.0 + 2 / 3) / 2)
        snap = history.snapshot(run.id)
    lookup = snap.cases[1]
    assert [(a.key.text, a.status) for a in lookup.assertions] == [
        ("tool search called once", "pass"),
        ("answer matches /\\d+ results/", "fail"),
        ('answer contains "sorry"', "pass"),
    ]
    failed = lookup.assertions[1]
    assert failed.found == "I'm sorry: refunds are accepted within 30 days."
    assert failed.expected == "/\\d+ results/"
    assert (failed.line, failed.column) == (16, 3)
    assert snap.cases[0].metrics["input_tokens"] == 290


def test_no_history_records_nothing_and_history_path_chooses_the_file(tmp_path: Path) -> None:
    project = checkout(tmp_path / "p", "before")
    run_in(project, "run", "agent.eval", "--no-history")
    assert not (project / ".evaldsl").exists()
    run_in(project, "run", "agent.eval", "--history", "elsewhere/runs.sqlite")
    assert (project / "elsewhere" / "runs.sqlite").is_file()
    assert not (project / ".evaldsl").exists()


def test_a_recorded_run_reads_back_exactly_as_it_was_reported(tmp_path: Path) -> None:
    report = run_suites(
        [load_suite(WEATHER), load_suite(ROOT / "examples-failing" / "failures.eval")]
    )
    db = tmp_path / "h.sqlite"
    run_id = record_report(report, db, selection="not nothing")
    assert run_id == 1
    with History.open(db) as history:
        back = history.snapshot(run_id)
    expected = snapshot_of_report(report)
    assert back.suites == expected.suites
    assert back.selection == "not nothing"
    crashed = [c for c in back.cases if c.crashed]
    assert len(crashed) == 3 and all(c.error for c in crashed)


def test_history_over_runs_shows_pass_rates_and_the_assertions_that_flip(tmp_path: Path) -> None:
    project = tmp_path / "p"
    for version in ("before", "after", "before"):
        checkout(project, version)
        run_in(project, "run", "agent.eval")
    data = history_json(project)
    assert data["total_runs"] == 3
    assert [(r["id"], r["cases"], r["passed"]) for r in data["runs"]] == [
        (1, 2, 1),
        (2, 2, 1),
        (3, 2, 1),
    ]
    (suite,) = data["suites"]
    assert suite["path"] == "agent.eval" and suite["name"] == "support agent"
    assert [r["score"] for r in suite["runs"]] == pytest.approx([0.833333, 0.875, 0.833333])
    flips = {(f["case"], f["assertion"]): f for f in data["flaky"]}
    assert set(flips) == {
        ("forecast", 'answer contains "umbrella"'),
        ("lookup", "answer matches /\\d+ results/"),
    }
    umbrella = flips[("forecast", 'answer contains "umbrella"')]
    assert umbrella["changes"] == 2
    assert [s["status"] for s in umbrella["statuses"]] == ["pass", "fail", "pass"]
    # `answer contains "sorry"` was not checked in run 2: it has two statuses, no change
    assert ("lookup", 'answer contains "sorry"') not in flips

    text = run_in(project, "history").stdout
    assert "3 runs" in text
    assert "2 changes in 3 runs (pass fail pass)" in text
    assert 'agent.eval :: forecast :: answer contains "umbrella"' in text
    last_two = history_json(project, "--last", "2")
    assert [r["id"] for r in last_two["runs"]] == [2, 3]
    # a count past SQLite's largest integer is any count past the number of runs
    every = history_json(project, "--last", "99999999999999999999999")
    assert [r["id"] for r in every["runs"]] == [1, 2, 3]


def test_a_crashed_case_is_an_error_in_the_flaky_statuses(tmp_path: Path) -> None:
    # A crashed case records no verdicts: its assertions count as errors, as `diff`
    # counts them, where they were left out (pass error pass error read as no change).
    (tmp_path / "ag.py").write_text(
        "import os\n"
        "def go(input):\n"
        "    mode = os.environ['MODE']\n"
        "    if mode == 'crash':\n"
        "        raise RuntimeError('crashed')\n"
        "    return 'hello world' if mode == 'pass' else 'bye'\n"
    )
    (tmp_path / "f.eval").write_text(
        'case "live"\n  run ag:go\n  input {goal: "x"}\n  answer contains "hello"\n'
    )
    for mode in ("pass", "fail", "crash", "fail", "pass"):
        run_evaldsl("run", "f.eval", cwd=tmp_path, env={"MODE": mode})
    (flaky,) = history_json(tmp_path)["flaky"]
    statuses = [(s["run"], s["status"]) for s in flaky["statuses"]]
    assert statuses == [(1, "pass"), (2, "fail"), (3, "error"), (4, "fail"), (5, "pass")]
    assert (flaky["changes"], flaky["runs"]) == (4, 5)
    text = run_in(tmp_path, "history").stdout
    assert "4 changes in 5 runs (pass fail error fail pass)" in text


def test_history_of_some_paths_only(tmp_path: Path) -> None:
    db = tmp_path / "h.sqlite"
    run_evaldsl("run", "examples/weather", "examples/research", "--history", str(db))
    result = run_evaldsl("history", "examples/research", "--history", str(db), "--format", "json")
    paths = [s["path"] for s in json.loads(result.stdout)["suites"]]
    assert paths == ["examples/research/research.eval", "examples/research/research.yaml"]
    missing = run_evaldsl("history", "examples/triage", "--history", str(db))
    assert missing.returncode == 2
    assert "no suite under examples/triage" in missing.stderr


def test_a_history_path_that_is_a_folder_is_named_so(tmp_path: Path) -> None:
    # not "no history at DIR: `evaldsl run` records each run there", which it cannot
    wanted = f"{tmp_path} is a folder, not a history file: name a file with --history PATH"
    for command in (["history"], ["diff"]):
        result = run_evaldsl(*command, "--history", str(tmp_path))
        assert result.returncode == 2
        assert wanted in result.stderr, result.stderr
    ran = run_evaldsl("run", str(WEATHER), "--history", str(tmp_path))
    assert ran.returncode == 0
    assert f"this run is not in the history: {wanted}" in ran.stderr


def test_a_history_path_under_a_file_is_named_so(tmp_path: Path) -> None:
    # it said "cannot open f.eval/sub/h.db: [Errno 17] File exists: 'f.eval'"
    (tmp_path / "f.eval").write_text("", encoding="utf-8")
    database = tmp_path / "f.eval" / "sub" / "h.db"
    ran = run_evaldsl("run", str(WEATHER), "--history", str(database))
    assert ran.returncode == 0
    wanted = (
        f"this run is not in the history: {database}: {tmp_path / 'f.eval'} is a file, not a "
        "folder, so no history can go under it; name a file in a folder with --history PATH"
    )
    assert wanted in ran.stderr, ran.stderr
    assert "Errno" not in ran.stderr


def test_a_history_path_that_is_a_pipe_is_named_so(tmp_path: Path) -> None:
    # (it said "no history at fifo" of a pipe that is there)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for command in (["history"], ["diff"]):
        result = run_evaldsl(*command, "--history", str(fifo))
        assert result.returncode == 2
        assert f"{fifo} is not a regular file (a pipe or a device), so no history" in (
            result.stderr
        )
    ran = run_evaldsl("run", str(WEATHER), "--history", str(fifo))
    assert ran.returncode == 0
    assert f"this run is not in the history: {fifo} is not a regular file" in ran.stderr


def test_history_says_clearly_when_there_is_none(tmp_path: Path) -> None:
    result = run_evaldsl("history", "--history", str(tmp_path / "none.sqlite"))
    assert result.returncode == 2
    assert "no history at" in result.stderr and "none.sqlite" in result.stderr
    for last in ("0", "ten"):
        refused = run_evaldsl("history", "--last", last)
        assert refused.returncode == 2
        assert f"argument --last: takes a number of runs ≥ 1, not {last}" in refused.stderr


# ---- schema versions ---------------------------------------------------------------------


def _version_1_database(path: Path) -> None:
    """A database as schema version 1 wrote it, with one run of two assertions."""
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    for statement in MIGRATIONS[0]:
        db.execute(statement)
    db.execute(
        "INSERT INTO runs VALUES (1, '2026-01-02T03:04:05.000Z', 12.5, 'abc123', 0, '0.0.9', NULL)"
    )
    db.execute("INSERT INTO suites VALUES (1, 1, 0, 'agent.eval', 'support agent', 0)")
    db.execute(
        "INSERT INTO cases VALUES (1, 1, 1, 0, 'forecast', 1, 1.0, NULL, 1700.0, 2, 1, 290, 50,"
        " 0.00007, 0)"
    )
    for k, (text, status) in enumerate(
        [("tool get_weather called once", "pass"), ('answer contains "umbrella"', "pass")]
    ):
        db.execute(
            "INSERT INTO assertions VALUES (?, 1, 1, ?, 'agent.eval', 'forecast', ?, 0, ?, ?, 3,"
            " ?, 'ok', NULL, NULL)",
            (k + 1, k, text, text, 8 + k, status),
        )
    db.execute("PRAGMA user_version = 1")
    db.close()


def test_an_old_database_is_migrated_and_keeps_its_runs(tmp_path: Path) -> None:
    assert SCHEMA_VERSION == 3
    project = checkout(tmp_path / "p", "after")
    db = project / ".evaldsl" / "history.sqlite"
    db.parent.mkdir()
    _version_1_database(db)
    result = run_in(project, "run", "agent.eval")
    assert "warning" not in result.stderr
    with History.open(db) as history:
        assert history.version == SCHEMA_VERSION
        old = history.snapshot(1)
        assert [(a.key.text, a.status, a.line) for a in old.cases[0].assertions] == [
            ("tool get_weather called once", "pass", 8),
            ('answer contains "umbrella"', "pass", 9),
        ]
        assert old.commit == "abc123" and old.dirty is False
        assert old.cases[0].metrics["latency_ms"] == 1700.0
    # the old run and the new one share identities: the umbrella flipped between them
    data = history_json(project)
    assert [r["id"] for r in data["runs"]] == [1, 2]
    (umbrella,) = [f for f in data["flaky"] if f["assertion"] == 'answer contains "umbrella"']
    assert [s["status"] for s in umbrella["statuses"]] == ["pass", "fail"]
    raw = sqlite3.connect(db)
    same = raw.execute(
        "SELECT COUNT(*) FROM identities WHERE case_name = 'forecast' "
        "AND canonical = 'tool get_weather called once'"
    ).fetchone()[0]
    assert same == 1
    raw.close()
    diff = run_in(project, "diff", "1", "2", "--format", "json")
    assert [c["assertion"] for c in json.loads(diff.stdout)["regressions"]] == [
        'answer contains "umbrella"'
    ]


def test_a_database_of_a_newer_evaldsl_is_left_alone(tmp_path: Path) -> None:
    project = checkout(tmp_path / "p", "before")
    db = project / ".evaldsl" / "history.sqlite"
    db.parent.mkdir()
    raw = sqlite3.connect(db)
    raw.execute("PRAGMA user_version = 99")
    raw.close()
    result = run_in(project, "run", "agent.eval")
    assert result.returncode == 1  # the suite's own verdict, as without history
    assert "written by a newer evaldsl (schema version 99" in result.stderr
    shown = run_in(project, "history")
    assert shown.returncode == 2 and "newer evaldsl" in shown.stderr


# ---- concurrency and failures ------------------------------------------------------------


def _open_together(path: str, barrier: object) -> str:
    barrier.wait()  # type: ignore[attr-defined]
    try:
        with History.open(Path(path), create=True):
            return "ok"
    except HistoryError as err:
        return str(err)


def test_processes_opening_a_new_history_at_once_all_get_it(tmp_path: Path) -> None:
    """SQLite refuses the switch to WAL at once ("locked", no wait) while another process
    opens the new file: every opener must still get the history (three runs finishing
    together lost theirs)."""
    context = multiprocessing.get_context("fork")
    for trial in range(8):
        db = tmp_path / f"h{trial}.sqlite"
        with context.Manager() as manager:
            barrier = manager.Barrier(4)
            with context.Pool(4) as pool:
                answers = pool.starmap(_open_together, [(str(db), barrier)] * 4)
        assert answers == ["ok"] * 4
    with History.open(db) as history:
        assert history.runs() == []


def test_two_runs_at_once_both_land_whole(tmp_path: Path) -> None:
    db = tmp_path / "h.sqlite"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("EVALDSL_JUDGE")},
        "PYTHONPATH": str(ROOT),
        "NO_COLOR": "1",
    }
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "evaldsl.tools.cli",
                "run",
                "examples/weather",
                "examples/research",
                "--history",
                str(db),
                "--json",
                str(tmp_path / f"r{i}.json"),
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(3)
    ]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        assert "warning" not in err
    report = read_json(tmp_path / "r0.json")
    cases = report["summary"]["cases"]
    assertions = sum(report["summary"]["assertions"].values())
    with History.open(db) as history:
        runs = history.runs()
        assert len(runs) == 3
        for run in runs:
            snap = history.snapshot(run.id)
            assert len(snap.cases) == cases
            assert sum(len(c.assertions) for c in snap.cases) == assertions
    raw = sqlite3.connect(db)
    assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    raw.close()


def test_a_corrupted_database_is_a_warning_and_the_run_still_reports(tmp_path: Path) -> None:
    project = checkout(tmp_path / "p", "before")
    db = project / ".evaldsl" / "history.sqlite"
    db.parent.mkdir()
    db.write_bytes(b"this is not a database, it is a shopping list\n" * 100)
    result = run_in(project, "run", "agent.eval", "--json", "report.json")
    assert result.returncode == 1  # `lookup` fails, as it would without history
    assert "1 passed, 1 failed" in result.stdout
    assert "warning: this run is not in the history" in result.stderr
    assert "not a readable history database" in result.stderr
    assert "Traceback" not in result.stderr
    assert read_json(project / "report.json")["summary"]["cases"] == 2
    passing = run_in(project, "run", "agent.eval", "-k", "forecast")
    assert passing.returncode == 0 and "warning" in passing.stderr


def test_a_locked_database_is_a_warning_after_a_bounded_wait(tmp_path: Path) -> None:
    project = checkout(tmp_path / "p", "before")
    assert run_in(project, "run", "agent.eval").returncode == 1
    db = project / ".evaldsl" / "history.sqlite"
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        started = time.monotonic()
        result = run_in(project, "run", "agent.eval", "-k", "forecast")
        waited = time.monotonic() - started
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert result.returncode == 0
    assert "1 passed, 0 failed" in result.stdout
    assert "is locked by another process" in result.stderr
    assert waited >= LOCK_TIMEOUT
    with History.open(db) as history:
        assert history.count() == 1  # nothing half-written


def test_an_unwritable_history_folder_is_a_warning(tmp_path: Path) -> None:
    project = checkout(tmp_path / "p", "before")
    (project / "blocker").write_text("a file where a folder should be")
    result = run_in(project, "run", "agent.eval", "--history", "blocker/h.sqlite")
    assert result.returncode == 1
    assert "warning: this run is not in the history" in result.stderr


def _as_another_user(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`evaldsl ARGS` as a process that cannot write to `cwd`: as user `nobody` (util-linux's
    `setpriv`) when the tests run as root, who may write anywhere."""
    drop = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
    return subprocess.run(
        [*(drop if os.geteuid() == 0 else []), sys.executable, "-m", "evaldsl.tools.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={"PATH": os.environ["PATH"], "NO_COLOR": "1", "PYTHONPATH": str(ROOT)},
        timeout=120,
    )


@pytest.fixture
def shared_folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A folder another user can enter and read (pytest's own are its user's alone)."""
    made = Path(tempfile.mkdtemp(prefix="evaldsl-read-only-"))
    made.chmod(0o755)
    yield made
    made.chmod(0o755)
    shutil.rmtree(made)


def test_a_history_in_a_folder_that_cannot_be_written_is_read(
    tmp_path: Path, shared_folder: Path
) -> None:
    # `evaldsl history` and `diff` of a history in a read-only folder (another user's
    # checkout, a read-only mount) said "attempt to write a readonly database", exit 2:
    # SQLite makes a file beside a WAL database to read it
    project = checkout(tmp_path / "p", "before")
    assert run_in(project, "run", "agent.eval").returncode == 1
    checkout(project, "after")
    assert run_in(project, "run", "agent.eval").returncode == 1
    shutil.copy(project / ".evaldsl" / "history.sqlite", shared_folder / "h.sqlite")
    (shared_folder / "h.sqlite").chmod(0o444)
    shared_folder.chmod(0o555)
    shown = _as_another_user("history", "--history", "h.sqlite", cwd=shared_folder)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("h.sqlite: 2 runs\n")
    diff = _as_another_user("diff", "--history", "h.sqlite", "--format", "json", cwd=shared_folder)
    assert diff.returncode == 0, diff.stderr
    assert [c["assertion"] for c in json.loads(diff.stdout)["regressions"]] == [
        'answer contains "umbrella"'
    ]
    assert sorted(p.name for p in shared_folder.iterdir()) == ["h.sqlite"]


def test_a_read_only_history_that_cannot_be_read_whole_or_migrated_says_so(
    tmp_path: Path, shared_folder: Path
) -> None:
    old = shared_folder / "old.sqlite"
    _version_1_database(old)
    # runs still in the `-wal` file beside it: copied while a writer holds them there
    project = checkout(tmp_path / "p", "before")
    assert run_in(project, "run", "agent.eval").returncode == 1
    writer = sqlite3.connect(project / ".evaldsl" / "history.sqlite", isolation_level=None)
    writer.execute("PRAGMA wal_autocheckpoint = 0")
    writer.execute("UPDATE runs SET selection = 'x'")
    for name in ("history.sqlite", "history.sqlite-wal"):
        shutil.copy(project / ".evaldsl" / name, shared_folder / name.replace("history", "w"))
    writer.close()
    assert (shared_folder / "w.sqlite-wal").stat().st_size > 0
    shared_folder.chmod(0o555)
    migrated = _as_another_user("history", "--history", "old.sqlite", cwd=shared_folder)
    assert migrated.returncode == 2
    assert "old.sqlite was written by an older evaldsl (schema version 1)" in migrated.stderr
    assert "copy it to a folder you can write to" in migrated.stderr
    walled = _as_another_user("diff", "--history", "w.sqlite", cwd=shared_folder)
    assert walled.returncode == 2
    assert "its latest runs are still in w.sqlite-wal" in walled.stderr
    for done in (migrated, walled):
        assert "Traceback" not in done.stderr


def test_history_open_refuses_garbage_with_a_clear_error(tmp_path: Path) -> None:
    db = tmp_path / "h.sqlite"
    db.write_bytes(b"\x00" * 10 + b"garbage" * 1000)
    with pytest.raises(HistoryError, match="not a readable history database"):
        History.open(db)


def test_a_database_of_another_program_is_left_as_it_was(tmp_path: Path) -> None:
    # `--history app.sqlite` made evaldsl's tables among the app's and switched the file to
    # WAL mode, `evaldsl history` too; with a table of one of evaldsl's names, it said
    # "table runs already exists"
    project = checkout(tmp_path / "p", "before")
    for tables in (["users"], ["runs", "cart"]):
        db = project / f"{tables[0]}.sqlite"
        with sqlite3.connect(db) as raw:
            for table in tables:
                raw.execute(f"CREATE TABLE {table} (x)")
        said = (
            f"{db.name} is a SQLite database of another program (its tables: "
            f"{', '.join(sorted(tables))}), not an evaldsl history: name another file with "
            "--history PATH"
        )
        ran = run_in(project, "run", "agent.eval", "--history", db.name)
        assert ran.returncode == 1 and f"warning: this run is not in the history: {said}" in (
            ran.stderr
        )
        for command in (["history"], ["diff"]):
            result = run_in(project, *command, "--history", db.name)
            assert result.returncode == 2 and f"evaldsl: error: {said}\n" == result.stderr
        raw = sqlite3.connect(db)
        assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
        assert sorted(t for (t,) in raw.execute("SELECT name FROM sqlite_master")) == sorted(tables)
        raw.close()


@pytest.mark.parametrize("create", [True, False])
def test_a_file_of_one_byte_named_as_the_history_is_refused_and_kept(
    tmp_path: Path, create: bool
) -> None:
    """SQLite takes a file of one byte for an empty database: `run --history notes`
    wrote a database over it, and the user's file was lost."""
    db = tmp_path / "notes"
    db.write_bytes(b"x")
    with pytest.raises(HistoryError, match="not a readable history database"):
        History.open(db, create=create)
    assert db.read_bytes() == b"x"


def test_run_with_a_one_byte_history_file_warns_and_keeps_it(tmp_path: Path) -> None:
    project = checkout(tmp_path / "p", "before")
    (project / "notes").write_bytes(b"x")
    result = run_in(project, "run", "agent.eval", "--history", "notes")
    assert "warning: this run is not in the history" in result.stderr
    assert "not a readable history database" in result.stderr
    assert (project / "notes").read_bytes() == b"x"


def test_an_empty_file_named_as_the_history_becomes_one(tmp_path: Path) -> None:
    db = tmp_path / "h.sqlite"
    db.write_bytes(b"")
    with History.open(db, create=True):
        pass
    assert db.read_bytes().startswith(b"SQLite format 3\x00")


def test_a_history_whose_schema_text_is_damaged_is_a_clear_error(tmp_path: Path) -> None:
    # a byte of the schema's text that is not UTF-8: SQLite gives it back, Python cannot
    # decode it (a UnicodeDecodeError, not one of SQLite's errors)
    project = checkout(tmp_path / "p", "before")
    assert run_in(project, "run", "agent.eval").returncode == 1
    db = project / ".evaldsl" / "history.sqlite"
    with sqlite3.connect(db) as raw:
        raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = bytearray(db.read_bytes())
    at = data.index(b"REFERENCES runs(id)") + len(b"REFERENC")  # in a table's text
    data[at] = 0xBA
    db.write_bytes(bytes(data))
    for command in (["history"], ["diff"]):
        result = run_in(project, *command)
        assert result.returncode == 2, result.stderr
        assert "not a readable history database" in result.stderr
        assert "Traceback" not in result.stderr


# ---- git -----------------------------------------------------------------------------------


def _git(folder: Path, *args: str) -> str:
    assert shutil.which("git"), "git is needed for these tests (the CI machine has it)"
    done = subprocess.run(["git", *args], cwd=folder, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def test_the_commit_and_dirty_flag_are_recorded_inside_a_repository(tmp_path: Path) -> None:
    project = checkout(tmp_path / "repo", "before")
    _git(project, "init", "-q")
    _git(project, "-c", "user.name=t", "-c", "user.email=t@example.org", "add", ".")
    _git(project, "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-q", "-m", "x")
    head = _git(project, "rev-parse", "HEAD")
    run_in(project, "run", "agent.eval")  # .evaldsl/ is untracked: not dirty
    (project / "notes.txt").write_text("untracked")
    run_in(project, "run", "agent.eval")
    with (project / "agent.eval").open("a") as f:
        f.write("\n# edited\n")
    run_in(project, "run", "agent.eval")
    runs = history_json(project)["runs"]
    assert [(r["commit"], r["dirty"]) for r in runs] == [
        (head, False),
        (head, False),
        (head, True),
    ]
    assert "+" in run_in(project, "history").stdout  # the dirty mark


def test_no_repository_or_no_git_records_no_commit(tmp_path: Path) -> None:
    outside = tmp_path / "plain"
    outside.mkdir()
    env_ceiling = os.environ.get("GIT_CEILING_DIRECTORIES")
    os.environ["GIT_CEILING_DIRECTORIES"] = str(tmp_path)
    try:
        assert git_state(outside) == GitState(None, None)
    finally:
        if env_ceiling is None:
            del os.environ["GIT_CEILING_DIRECTORIES"]
        else:
            os.environ["GIT_CEILING_DIRECTORIES"] = env_ceiling
    # no git at all: PATH without it (the interpreter is named by its full path)
    project = checkout(tmp_path / "p", "before")
    result = run_evaldsl("run", "agent.eval", cwd=project, env={"PATH": str(tmp_path / "empty")})
    assert "warning" not in result.stderr
    with History.open(project / ".evaldsl" / "history.sqlite") as history:
        (run,) = history.runs()
    assert (run.commit, run.dirty) == (None, None)


def test_keys_of_a_run_name_suite_case_and_text(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    report = run_suites([load_suite(WEATHER)])
    snap = snapshot_of_report(report)
    first = snap.cases[0].assertions[0].key
    assert first == AssertionKey(
        "examples/weather/weather.eval",
        "answers with the Xiamen forecast",
        "no tool execute_shell",
        0,
    )
    assert first.label().startswith("examples/weather/weather.eval :: answers with")


# ---- the README -----------------------------------------------------------------------------


def _squeezed(text: str) -> list[str]:
    """Lines with times, commits and runs of spaces made alike (they differ on every run)."""
    text = re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", "TIME", text)
    text = re.sub(r"\b[0-9a-f]{7}\b", "COMMIT", text)
    return [" ".join(line.split()) for line in text.strip().splitlines()]


def test_the_readme_history_is_real_output(tmp_path: Path) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    (block,) = [
        b
        for b in re.findall(r"^```console\n(.*?)^```", readme, flags=re.S | re.M)
        if b.startswith("$ evaldsl history\n")
    ]
    shown = block.split("\n", 1)[1]
    # the README's story: before a change (committed), after it (committed), then the old
    # files back without a commit
    project = checkout(tmp_path / "project", "before")
    who = ["-c", "user.name=dev", "-c", "user.email=dev@example.org"]
    _git(project, "init", "-q")
    _git(project, *who, "add", ".")
    _git(project, *who, "commit", "-q", "-m", "before")
    run_in(project, "run", "agent.eval")
    checkout(project, "after")
    _git(project, *who, "add", "-A")
    _git(project, *who, "commit", "-q", "-m", "after")
    run_in(project, "run", "agent.eval")
    checkout(project, "before")
    run_in(project, "run", "agent.eval")
    real = run_in(project, "history").stdout
    assert _squeezed(shown) == _squeezed(real)


def test_a_skipped_case_is_out_of_the_historys_pass_rate_as_of_the_reports(
    tmp_path: Path,
) -> None:
    """A case whose assertions were all skipped (a judge without a key) is neither passed
    nor failed in `history` and `diff`, as in every report; a database of version 2 learns
    which of its cases were."""
    shutil.copy(ROOT / "examples" / "weather" / "cassettes" / "xiamen.jsonl", tmp_path)
    (tmp_path / "s.eval").write_text(
        'suite "s"\ncase "judged"\n  cassette "xiamen.jsonl"\n'
        '  answer judged "says the weather"\n'
        'case "counted"\n  cassette "xiamen.jsonl"\n  tool get_weather called once\n'
        'case "failing"\n  cassette "xiamen.jsonl"\n  tool get_weather called twice\n',
        encoding="utf-8",
    )
    for _ in range(2):
        assert run_in(tmp_path, "run", "s.eval").returncode == 1
    report = json.loads(run_in(tmp_path, "run", "--no-history", "--json", "-", "s.eval").stdout)
    expected = report["summary"]["pass_rate"]
    assert expected == 0.5 and report["summary"]["skipped"] == 1
    db = tmp_path / ".evaldsl" / "history.sqlite"
    raw = sqlite3.connect(db)  # the first run as version 2 wrote it: nothing skipped
    raw.execute("UPDATE cases SET skipped = 0")
    raw.execute("ALTER TABLE cases DROP COLUMN skipped")
    raw.execute("PRAGMA user_version = 2")
    raw.commit()
    raw.close()
    runs = history_json(tmp_path)["runs"]
    assert [(r["cases"], r["passed"], r["skipped"], r["pass_rate"]) for r in runs] == [
        (3, 1, 1, expected),
        (3, 1, 1, expected),
    ]
    diff = json.loads(run_in(tmp_path, "diff", "1", "2", "--format", "json").stdout)
    assert [diff["before"]["pass_rate"], diff["after"]["pass_rate"]] == [expected, expected]


def test_history_and_diff_show_control_characters_in_names_as_escapes(tmp_path: Path) -> None:
    # A case name (from a JSON suite, as a dataset or a recording can give one) holding an
    # escape sequence, a carriage return and a line break was printed raw by `history`
    # and `diff`: it cleared the screen, recoloured it and broke the line, as the console
    # of `run` never lets it.
    name = "c\x1b[2J\x1b[31mX\x07\rY\u202e\nnl"
    suite = {
        "suite": "s",
        "cases": [{"name": name, "cassette": "t.jsonl", "expect": 'answer contains "X"'}],
    }
    (tmp_path / "s.json").write_text(json.dumps(suite), encoding="utf-8")
    head = {"cassette": "traceplay", "version": 1, "recordedAt": "2026-11-20T11:00:00.000Z"}
    for answer in ("X", "no", "X"):
        reply = {"type": "llm.response", "output": answer, "seq": 0, "id": "e1"}
        lines = [json.dumps(head), json.dumps(reply)]
        (tmp_path / "t.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        run_in(tmp_path, "run", "s.json")
    shown = 's.json :: c\\x1b[2J\\x1b[31mX\\x07\\x0dY\\u202e\\nnl :: answer contains "X"'
    history = run_in(tmp_path, "history")
    diff = run_in(tmp_path, "diff")
    for done in (history, diff):
        assert done.returncode == 0, done.stderr
        assert f"    {shown}\n" in done.stdout or f"  {shown}\n" in done.stdout, done.stdout
        assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202e]", done.stdout)


@pytest.mark.parametrize("command", ["run", "history", "diff"])
def test_a_history_of_dash_is_refused_not_made_in_a_file_named_dash(
    tmp_path: Path, command: str
) -> None:
    # every other option reads `-` as standard output; `--history -` made an SQLite file
    # named `-` in the working folder
    extra = [str(WEATHER)] if command == "run" else []
    done = run_evaldsl(command, *extra, "--history", "-", cwd=tmp_path)
    assert done.returncode == 2 and "not standard output (-)" in done.stderr, done.stderr
    assert not (tmp_path / "-").exists()
