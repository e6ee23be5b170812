"""Run history: every `evaldsl run` recorded in a SQLite database, and read back.

Takes the `RunSnapshot` of a finished run (snapshots.py) with the git state of the working
folder, and gives one row per run, suite, case and assertion in `.evaldsl/history.sqlite`
(beside the judge cache) or the file `--history PATH` names. Reads runs back as snapshots
(`evaldsl diff`), and as a window of runs with each assertion's statuses across it
(`evaldsl history`).

The database is in WAL mode, so readers never wait for a writer. A run is written in one
transaction: two runs that finish at once both land whole, one after the other (a writer
waits up to `LOCK_TIMEOUT` seconds for the other). The schema is versioned with `PRAGMA
user_version` and brought up to date by the ordered steps of `MIGRATIONS`, all in one
transaction, when the database is opened; one this process cannot write to is opened
read-only, to read. `record_report` never raises: a corrupted, locked or newer database
is one warning, and the run reports as it would have.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import TracebackType
from typing import Any, TextIO, cast

import attrs

from evaldsl.atomicfile import file_above
from evaldsl.history.snapshots import (
    METRICS,
    AssertionKey,
    AssertionSnapshot,
    CaseSnapshot,
    RunSnapshot,
    SuiteSnapshot,
    snapshot_of_report,
)
from evaldsl.language.reading import is_folder, is_regular, present, starts_as_sqlite
from evaldsl.language.verdicts import Status, tested_rate
from evaldsl.runner.results import Report
from evaldsl.version import __version__

#: Where runs are recorded unless `--history PATH` says otherwise (beside the judge cache).
DEFAULT_PATH = Path(".evaldsl/history.sqlite")
#: Seconds a writer waits for another process's transaction before giving up.
LOCK_TIMEOUT = 5.0
#: Seconds a `git` query may take before the commit is recorded as unknown.
GIT_TIMEOUT = 2.0
#: SQLite's largest INTEGER: no run id, count or offset is larger.
LARGEST_ID = 2**63 - 1

# Each step brings the schema from its index to the next version; a step is a list of
# statements run in the migration's transaction (`executescript` would commit midway).
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    # 0 → 1: runs, suites, cases, assertions; an assertion's identity written on its row
    (
        """CREATE TABLE runs (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            started_at TEXT NOT NULL,
            duration_ms REAL NOT NULL,
            git_commit TEXT,
            git_dirty INTEGER,
            evaldsl_version TEXT NOT NULL,
            selection TEXT
        )""",
        """CREATE TABLE suites (
            id INTEGER PRIMARY KEY,
            run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            path TEXT NOT NULL,
            name TEXT NOT NULL,
            errors INTEGER NOT NULL
        )""",
        """CREATE TABLE cases (
            id INTEGER PRIMARY KEY,
            run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            suite_id INTEGER NOT NULL REFERENCES suites(id) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            name TEXT NOT NULL,
            passed INTEGER NOT NULL,
            score REAL NOT NULL,
            error TEXT,
            latency_ms REAL,
            steps INTEGER,
            tool_calls INTEGER,
            input_tokens INTEGER,
            output_tokens INTEGER,
            cost REAL,
            guards INTEGER
        )""",
        """CREATE TABLE assertions (
            id INTEGER PRIMARY KEY,
            run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            case_id INTEGER NOT NULL REFERENCES cases(id) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            suite_path TEXT NOT NULL,
            case_name TEXT NOT NULL,
            canonical TEXT NOT NULL,
            occurrence INTEGER NOT NULL,
            text TEXT NOT NULL,
            line INTEGER NOT NULL,
            col INTEGER NOT NULL,
            status TEXT NOT NULL,
            message TEXT NOT NULL,
            found TEXT,
            expected TEXT
        )""",
        "CREATE INDEX suites_by_run ON suites(run_id)",
        "CREATE INDEX cases_by_run ON cases(run_id)",
        "CREATE INDEX assertions_by_run ON assertions(run_id)",
    ),
    # 1 → 2: identities in a table of their own, so each key's text is stored once
    # however many runs there are, and an assertion's statuses over runs are one index
    # range (what `evaldsl history` reads for flips)
    (
        """CREATE TABLE identities (
            id INTEGER PRIMARY KEY,
            suite_path TEXT NOT NULL,
            case_name TEXT NOT NULL,
            canonical TEXT NOT NULL,
            occurrence INTEGER NOT NULL,
            UNIQUE (suite_path, case_name, canonical, occurrence)
        )""",
        """INSERT INTO identities (suite_path, case_name, canonical, occurrence)
           SELECT DISTINCT suite_path, case_name, canonical, occurrence FROM assertions
           ORDER BY id""",
        """CREATE TABLE assertions_new (
            id INTEGER PRIMARY KEY,
            run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
            case_id INTEGER NOT NULL REFERENCES cases(id) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            identity_id INTEGER NOT NULL REFERENCES identities(id),
            text TEXT NOT NULL,
            line INTEGER NOT NULL,
            col INTEGER NOT NULL,
            status TEXT NOT NULL,
            message TEXT NOT NULL,
            found TEXT,
            expected TEXT
        )""",
        """INSERT INTO assertions_new
           SELECT a.id, a.run_id, a.case_id, a.position, i.id, a.text, a.line, a.col,
                  a.status, a.message, a.found, a.expected
           FROM assertions a JOIN identities i
             ON i.suite_path = a.suite_path AND i.case_name = a.case_name
            AND i.canonical = a.canonical AND i.occurrence = a.occurrence""",
        "DROP TABLE assertions",
        "ALTER TABLE assertions_new RENAME TO assertions",
        "CREATE INDEX assertions_by_run ON assertions(run_id)",
        "CREATE INDEX assertions_by_identity ON assertions(identity_id, run_id)",
    ),
    # 2 → 3: a case whose assertions were all skipped (a judge without a key) is skipped,
    # as every report counts it: out of the passed cases and of the pass rate
    (
        "ALTER TABLE cases ADD COLUMN skipped INTEGER NOT NULL DEFAULT 0",
        """UPDATE cases SET skipped = 1 WHERE error IS NULL AND id IN (
             SELECT case_id FROM assertions GROUP BY case_id
             HAVING SUM(status != 'skip') = 0)""",
    ),
)
#: The schema version this code writes and reads.
SCHEMA_VERSION = len(MIGRATIONS)


class HistoryError(Exception):
    """The history database cannot be used: the message names the file and says why."""


@attrs.frozen
class GitState:
    """The commit checked out in the working folder, and whether tracked files differ from
    it; both None outside a repository or without git."""

    commit: str | None = None
    dirty: bool | None = None


def _refuse_foreign(db: sqlite3.Connection, path: Path) -> None:
    """A `HistoryError` for a SQLite database of another program: one with tables and no
    schema version of evaldsl's. Opening it made evaldsl's tables among its own and
    switched it to WAL mode (`--history app.sqlite`, even `evaldsl history` did). Its
    version and its tables are read in one statement, so one snapshot: a history another
    evaldsl is making at this moment has both or neither."""
    version, tables = db.execute(
        "SELECT (SELECT user_version FROM pragma_user_version), (SELECT group_concat(name, "
        "', ') FROM (SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE "
        "'sqlite!_%' ESCAPE '!' ORDER BY name))"
    ).fetchone()
    if version == 0 and tables:
        raise HistoryError(
            f"{path} is a SQLite database of another program (its tables: {tables}), not an "
            "evaldsl history: name another file with --history PATH"
        )


def _not_a_database(path: Path) -> bool:
    """Whether `path` is a regular file with something in it that does not start as a
    SQLite database does (one that cannot be looked at is left to SQLite to say why)."""
    try:
        size = path.stat().st_size
    except (OSError, ValueError):
        return False
    return size > 0 and is_regular(path) and not starts_as_sqlite(path)


def _wal(db: sqlite3.Connection) -> Any:
    """Switch to WAL mode; gives the mode the database is in.

    On a database several processes open for the first time at once, SQLite answers the
    switch "database is locked" at once, without waiting as it does for a transaction
    (three runs finishing together lost their history so): try again until the lock
    timeout has passed.
    """
    deadline = time.monotonic() + LOCK_TIMEOUT
    pause = 0.005
    while True:
        try:
            return db.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        except sqlite3.OperationalError as err:
            if "locked" not in str(err) or time.monotonic() + pause > deadline:
                raise
        time.sleep(pause)
        pause = min(pause * 2, 0.1)


def _newer(path: Path, found: int) -> HistoryError:
    """The error for a database of a schema version this evaldsl does not know."""
    return HistoryError(
        f"{path} was written by a newer evaldsl (schema version {found}; this one knows up "
        f"to {SCHEMA_VERSION}): upgrade evaldsl, or name another file with --history PATH"
    )


def _read_only(err: sqlite3.OperationalError) -> bool:
    """Whether SQLite refused as it does when it cannot write the database or beside it
    (where a `-wal` file is there and no `-shm` file can be made: "unable to open")."""
    name = str(getattr(err, "sqlite_errorname", ""))
    return name.startswith("SQLITE_READONLY") or name == "SQLITE_CANTOPEN"


def _reader(path: Path) -> sqlite3.Connection:
    """The database at `path` opened read-only, where this process cannot write to it or
    to its folder.

    SQLite reads a WAL-mode database read-only when its `-shm` and `-wal` files are
    there; where they are not (and cannot be made), it reads the file alone, as
    `immutable`, which is whole only when no `-wal` file holds runs not yet copied into
    it: one that does is a `HistoryError`, never a history without its latest runs.
    """
    uri = path.absolute().as_uri()
    db = sqlite3.connect(f"{uri}?mode=ro", uri=True, isolation_level=None)
    try:
        db.execute("PRAGMA user_version").fetchone()
        return db
    except sqlite3.OperationalError as err:
        db.close()
        if not _read_only(err):
            raise
    wal = Path(f"{path}-wal")
    if present(wal) and wal.stat().st_size > 0:
        raise HistoryError(
            f"{path} cannot be read here: its latest runs are still in {wal.name}, which "
            "SQLite reads only with a file it makes beside it, and this folder cannot be "
            "written to; copy both files to a folder you can write to and name the copy "
            "with --history PATH"
        )
    return sqlite3.connect(f"{uri}?mode=ro&immutable=1", uri=True, isolation_level=None)


def git_state(folder: Path | None = None, timeout: float = GIT_TIMEOUT) -> GitState:
    """The git state of `folder` (the working folder by default), asked of `git` itself.

    Dirty means a tracked file differs from the commit, as `git describe --dirty` says;
    untracked files do not count. No git, no repository or a slow answer gives None.
    """
    commit = _git(["rev-parse", "--verify", "HEAD"], folder, timeout)
    if commit is None:
        return GitState()
    status = _git(["status", "--porcelain", "--untracked-files=no"], folder, timeout)
    return GitState(commit.strip() or None, None if status is None else bool(status.strip()))


def _git(args: list[str], folder: Path | None, timeout: float) -> str | None:
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.SubprocessError):  # no git, or it took too long
        return None
    return done.stdout if done.returncode == 0 else None


@attrs.frozen
class RunInfo:
    """One recorded run, in short: when, on which commit, and its totals."""

    id: int
    started_at: str
    duration_ms: float
    commit: str | None
    dirty: bool | None
    selection: str | None
    evaldsl_version: str
    cases: int
    passed: int
    score: float
    skipped: int = 0  # cases whose assertions were all skipped: out of the pass rate

    @property
    def pass_rate(self) -> float:
        return tested_rate(self.passed, self.cases, self.skipped)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "started_at": self.started_at,
            "duration_ms": round(self.duration_ms, 3),
            "commit": self.commit,
            "dirty": self.dirty,
            "selection": self.selection,
            "evaldsl_version": self.evaldsl_version,
            "cases": self.cases,
            "passed": self.passed,
            "skipped": self.skipped,
            "pass_rate": round(self.pass_rate, 6),
            "score": round(self.score, 6),
        }


@attrs.frozen
class SuiteRow:
    """One suite's totals in one run."""

    run_id: int
    path: str
    name: str
    cases: int
    passed: int
    score: float
    errors: int
    skipped: int = 0

    @property
    def pass_rate(self) -> float:
        return tested_rate(self.passed, self.cases, self.skipped)


def now_utc() -> str:
    """The time now, as the history writes times: UTC, ISO 8601, milliseconds, `Z`."""
    return _iso(datetime.now(UTC))


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _what_is_there(path: Path) -> str:
    """What is at a path that is there but no regular file or folder: a pipe or a device,
    or why it cannot be looked at (a loop of links, a name too long)."""
    try:
        os.stat(path)
    except OSError as err:
        return f"it cannot be looked at: {err.strerror or type(err).__name__}"
    return "a pipe or a device"


class History:
    """An open history database. Use `History.open(path)` as a context manager."""

    def __init__(self, connection: sqlite3.Connection, path: Path) -> None:
        self._db = connection
        self.path = path

    # -- opening

    @classmethod
    def open(cls, path: Path, *, create: bool = False) -> History:
        """Open (with `create`, make) the database at `path` and bring its schema up to date.

        Raises `HistoryError` for a missing file (without `create`), a file that is not a
        SQLite database, a database of a newer evaldsl, or one locked past `LOCK_TIMEOUT`.
        """
        if is_folder(path):  # (`Path.is_dir` raised for a name too long)
            # (with or without `create`: SQLite would say "unable to open database file")
            raise HistoryError(
                f"{path} is a folder, not a history file: name a file with --history PATH "
                f"(e.g. --history {path / 'history.sqlite'})"
            )
        if present(path) and not is_regular(path):
            # (a pipe or a device: "no history at" it said of something that is there, and
            # a run said "disk I/O error"; a loop of links, a name too long: why it is not)
            raise HistoryError(
                f"{path} is not a regular file ({_what_is_there(path)}), so no history: a "
                "history is a SQLite file; name one with --history PATH"
            )
        if not create and not is_regular(path):
            raise HistoryError(
                f"no history at {path}: `evaldsl run` records each run there "
                "(unless --no-history); name another file with --history PATH"
            )
        if _not_a_database(path):
            # (SQLite itself takes a file of one byte for an empty database, and writes
            # one over it: a user's file named by mistake was lost)
            raise HistoryError(
                f"{path} is not a readable history database (it does not start as a SQLite "
                "file does); move it away to start a new history"
            )
        above = file_above(path) if create else None
        if above is not None:  # (else "[Errno 17] File exists", or "Not a directory")
            raise HistoryError(
                f"{path}: {above} is a file, not a folder, so no history can go under it; "
                "name a file in a folder with --history PATH"
            )
        try:
            if create:
                path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(path, timeout=LOCK_TIMEOUT, isolation_level=None)
        except (OSError, sqlite3.Error) as err:
            raise HistoryError(f"cannot open {path}: {err}") from None
        history = cls(db, path)
        try:
            with history._errors():
                try:
                    _refuse_foreign(db, path)
                    mode = _wal(db)
                    if str(mode).lower() != "wal":
                        raise HistoryError(
                            f"{path}: cannot switch the database to WAL mode ({mode})"
                        )
                    db.execute("PRAGMA foreign_keys=ON")
                    db.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: never corrupt
                    history._migrate()
                except sqlite3.OperationalError as err:
                    if create or not _read_only(err):
                        raise
                    # a history to read in a folder this process cannot write to (another
                    # user's checkout, a read-only mount): SQLite could not even read it so,
                    # as WAL mode keeps its index in a file beside it
                    db.close()
                    db = _reader(path)
                    history = cls(db, path)
                    _refuse_foreign(db, path)
                    history._check_read_only()
        except BaseException:
            db.close()
            raise
        return history

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> History:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    @contextmanager
    def _errors(self) -> Iterator[None]:
        """SQLite's errors as `HistoryError`s that name the file and what to do."""
        try:
            yield
        except sqlite3.OperationalError as err:
            text = str(err)
            if "locked" in text or "busy" in text:
                raise HistoryError(
                    f"{self.path} is locked by another process (waited {LOCK_TIMEOUT:g}s)"
                ) from None
            raise HistoryError(f"{self.path}: {text}") from None
        except (sqlite3.DatabaseError, UnicodeDecodeError) as err:
            # (UnicodeDecodeError: text SQLite gives back that is not UTF-8, a damaged file)
            raise HistoryError(
                f"{self.path} is not a readable history database ({err}); "
                "move it away to start a new history"
            ) from None

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction: taken at once (`IMMEDIATE`), so a second writer waits
        at the start instead of failing midway; rolled back on any error."""
        db = self._db
        with self._errors():
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    @property
    def version(self) -> int:
        """The schema version of the database (`PRAGMA user_version`)."""
        with self._errors():
            return int(self._db.execute("PRAGMA user_version").fetchone()[0])

    def _check_read_only(self) -> None:
        """A `HistoryError` for a read-only database whose schema is not this evaldsl's:
        it cannot be brought up to date where it is."""
        found = self.version
        if found > SCHEMA_VERSION:
            raise _newer(self.path, found)
        if found < SCHEMA_VERSION:
            raise HistoryError(
                f"{self.path} was written by an older evaldsl (schema version {found}) and "
                "cannot be written here to bring it up to date: copy it to a folder you can "
                "write to and name the copy with --history PATH"
            )

    def _migrate(self) -> None:
        if self.version == SCHEMA_VERSION:
            return
        with self._transaction() as db:
            # read again inside the transaction: another process may have migrated meanwhile
            found = int(db.execute("PRAGMA user_version").fetchone()[0])
            if found > SCHEMA_VERSION:
                raise _newer(self.path, found)
            for step in MIGRATIONS[found:]:
                for statement in step:
                    db.execute(statement)
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    # -- writing

    def record(
        self,
        run: RunSnapshot,
        *,
        started_at: str,
        duration_ms: float,
        git: GitState = GitState(),
        selection: str | None = None,
    ) -> int:
        """Write a run whole, in one transaction; gives its id."""
        with self._transaction() as db:
            cursor = db.execute(
                "INSERT INTO runs (started_at, duration_ms, git_commit, git_dirty, "
                "evaldsl_version, selection) VALUES (?, ?, ?, ?, ?, ?)",
                (started_at, duration_ms, git.commit, _flag(git.dirty), __version__, selection),
            )
            run_id = _rowid(cursor)
            identities = self._identities(db, run)
            for position, suite in enumerate(run.suites):
                suite_id = _rowid(
                    db.execute(
                        "INSERT INTO suites (run_id, position, path, name, errors) "
                        "VALUES (?, ?, ?, ?, ?)",
                        (run_id, position, suite.path, suite.name, suite.errors),
                    )
                )
                for case_position, case in enumerate(suite.cases):
                    case_id = _rowid(
                        db.execute(
                            "INSERT INTO cases (run_id, suite_id, position, name, passed, "
                            "skipped, score, error, " + ", ".join(METRICS) + ") VALUES "
                            "(?, ?, ?, ?, ?, ?, ?, ?" + ", ?" * len(METRICS) + ")",
                            (
                                run_id,
                                suite_id,
                                case_position,
                                case.name,
                                int(case.passed),
                                int(case.skipped),
                                case.score,
                                case.error,
                                *(case.metrics.get(m) for m in METRICS),
                            ),
                        )
                    )
                    rows = [
                        (
                            run_id,
                            case_id,
                            k,
                            identities[a.key],
                            a.text,
                            a.line,
                            a.column,
                            a.status,
                            a.message,
                            _dump(a.found),
                            _dump(a.expected),
                        )
                        for k, a in enumerate(case.assertions)
                    ]
                    db.executemany(
                        "INSERT INTO assertions (run_id, case_id, position, identity_id, text, "
                        "line, col, status, message, found, expected) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        rows,
                    )
        return run_id

    @staticmethod
    def _identities(db: sqlite3.Connection, run: RunSnapshot) -> dict[AssertionKey, int]:
        """The id of every assertion key of the run, adding the keys never seen before."""
        keys = {a.key for s in run.suites for c in s.cases for a in c.assertions}
        db.executemany(
            "INSERT INTO identities (suite_path, case_name, canonical, occurrence) "
            "VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
            [tuple(k) for k in keys],
        )
        ids: dict[AssertionKey, int] = {}
        # the run's own cases, each by a prefix of the keys' unique index: all of a suite's
        # identities ever stored were read, which grows with the history where case names
        # change between runs (`each` rows, datasets, Inspect AI samples)
        for path, case in {(k.suite, k.case) for k in keys}:
            for row in db.execute(
                "SELECT id, canonical, occurrence FROM identities "
                "WHERE suite_path = ? AND case_name = ?",
                (path, case),
            ):
                ids[AssertionKey(path, case, row[1], row[2])] = row[0]
        return ids

    # -- reading

    def runs(self, last: int | None = None) -> list[RunInfo]:
        """The recorded runs, oldest first; with `last`, only the last that many."""
        query = (
            "SELECT r.id, r.started_at, r.duration_ms, r.git_commit, r.git_dirty, "
            "r.selection, r.evaldsl_version, COUNT(c.id), "
            "COALESCE(SUM(c.passed AND NOT c.skipped), 0), COALESCE(AVG(c.score), 0.0), "
            "COALESCE(SUM(c.skipped), 0) FROM runs r LEFT JOIN cases c ON c.run_id = r.id "
            "GROUP BY r.id ORDER BY r.id DESC"
        )
        params: tuple[Any, ...] = ()
        if last is not None:
            query += " LIMIT ?"
            # (a count past SQLite's largest integer asks for every run, as any count
            # past the number of runs does)
            params = (min(last, LARGEST_ID),)
        with self._errors():
            rows = self._db.execute(query, params).fetchall()
        return [
            RunInfo(
                id=r[0],
                started_at=r[1],
                duration_ms=r[2],
                commit=r[3],
                dirty=None if r[4] is None else bool(r[4]),
                selection=r[5],
                evaldsl_version=r[6],
                cases=r[7],
                passed=r[8],
                score=r[9],
                skipped=r[10],
            )
            for r in reversed(rows)
        ]

    def count(self) -> int:
        """How many runs the history holds."""
        with self._errors():
            return int(self._db.execute("SELECT COUNT(*) FROM runs").fetchone()[0])

    def resolve(self, ref: str) -> int:
        """A run's id from `ID`, `last` or `last~N` (N runs before the last).

        Raises `HistoryError` naming what exists when there is no such run.
        """
        text = ref.strip()
        with self._errors():
            if text.isascii() and text.isdigit():
                run_id = _number(text)
                # (an id past SQLite's largest integer names no run: said as for any other)
                if (
                    run_id <= LARGEST_ID
                    and self._db.execute("SELECT 1 FROM runs WHERE id = ?", (run_id,)).fetchone()
                ):
                    return run_id
                raise HistoryError(f"no run {text} in {self.path} ({self._holds()})")
            back = _steps_back(text)
            if back is None:
                raise HistoryError(
                    f"{ref!r} is not a run: give a run id, `last`, `last~N`, or a JSON report file"
                )
            row = None
            if back <= LARGEST_ID:
                row = self._db.execute(
                    "SELECT id FROM runs ORDER BY id DESC LIMIT 1 OFFSET ?", (back,)
                ).fetchone()
        if row is None:
            raise HistoryError(f"no run {text} in {self.path} ({self._holds()})")
        return int(row[0])

    def _holds(self) -> str:
        n = self.count()
        if n == 0:
            return "it holds no runs yet"
        last = self._db.execute("SELECT MAX(id) FROM runs").fetchone()[0]
        return f"it holds {n} run{'s' if n != 1 else ''}; the last is run {last}"

    def snapshot(self, run_id: int) -> RunSnapshot:
        """A recorded run, whole, as a snapshot (`resolve` gives ids)."""
        with self._errors():
            db = self._db
            run = db.execute(
                "SELECT started_at, git_commit, git_dirty, selection FROM runs WHERE id = ?",
                (run_id,),
            ).fetchone()
            if run is None:
                raise HistoryError(f"no run {run_id} in {self.path} ({self._holds()})")
            assertions: dict[int, list[AssertionSnapshot]] = {}
            for row in db.execute(
                "SELECT a.case_id, i.suite_path, i.case_name, i.canonical, i.occurrence, a.text, "
                "a.status, a.message, a.found, a.expected, a.line, a.col FROM assertions a "
                "JOIN identities i ON i.id = a.identity_id WHERE a.run_id = ? "
                "ORDER BY a.case_id, a.position",
                (run_id,),
            ):
                assertions.setdefault(row[0], []).append(
                    AssertionSnapshot(
                        AssertionKey(row[1], row[2], row[3], row[4]),
                        row[5],
                        cast(Status, row[6]),
                        message=row[7],
                        found=_load(row[8]),
                        expected=_load(row[9]),
                        line=row[10],
                        column=row[11],
                    )
                )
            cases: dict[int, list[CaseSnapshot]] = {}
            for row in db.execute(
                "SELECT c.id, c.suite_id, s.path, c.name, c.passed, c.score, c.error, "
                + ", ".join(f"c.{m}" for m in METRICS)
                + " FROM cases c JOIN suites s ON s.id = c.suite_id WHERE c.run_id = ? "
                "ORDER BY c.suite_id, c.position",
                (run_id,),
            ):
                metrics = dict(zip(METRICS, row[7:], strict=True))
                cases.setdefault(row[1], []).append(
                    CaseSnapshot(
                        row[2],
                        row[3],
                        bool(row[4]),
                        row[5],
                        row[6],
                        metrics,
                        tuple(assertions.get(row[0], ())),
                    )
                )
            suites = tuple(
                SuiteSnapshot(path, name, tuple(cases.get(suite_id, ())), errors)
                for suite_id, path, name, errors in db.execute(
                    "SELECT id, path, name, errors FROM suites WHERE run_id = ? ORDER BY position",
                    (run_id,),
                )
            )
        return RunSnapshot(
            f"run {run_id}",
            suites,
            run_id=run_id,
            started_at=run[0],
            commit=run[1],
            dirty=None if run[2] is None else bool(run[2]),
            selection=run[3],
        )

    def suite_rows(self, first: int, last: int) -> list[SuiteRow]:
        """Each suite's totals in each run with an id from `first` to `last`."""
        with self._errors():
            rows = self._db.execute(
                "SELECT s.run_id, s.path, s.name, COUNT(c.id), "
                "COALESCE(SUM(c.passed AND NOT c.skipped), 0), COALESCE(AVG(c.score), 0.0), "
                "s.errors, COALESCE(SUM(c.skipped), 0) FROM suites s "
                # joined by run too, so the cases come by their index (by suite alone,
                # SQLite made a temporary index of every case of the history each time)
                "LEFT JOIN cases c ON c.run_id = s.run_id AND c.suite_id = s.id "
                "WHERE s.run_id BETWEEN ? AND ? "
                "GROUP BY s.id ORDER BY s.run_id, s.position",
                (first, last),
            ).fetchall()
        return [SuiteRow(*row) for row in rows]

    def crashed_cases(self, first: int, last: int) -> set[tuple[str, str, int]]:
        """The cases that crashed (an error, no verdict) in the runs with an id from
        `first` to `last`: (suite path, case name, run id) each."""
        with self._errors():
            rows = self._db.execute(
                "SELECT s.path, c.name, c.run_id FROM cases c JOIN suites s ON s.id = c.suite_id "
                "WHERE c.run_id BETWEEN ? AND ? AND c.error IS NOT NULL "
                "AND NOT EXISTS (SELECT 1 FROM assertions a WHERE a.case_id = c.id)",
                (first, last),
            ).fetchall()
        return {(row[0], row[1], row[2]) for row in rows}

    def statuses(self, first: int, last: int) -> dict[AssertionKey, list[tuple[int, Status]]]:
        """Each assertion's status in each run with an id from `first` to `last`, in run
        order (a run where it was not checked is absent from its list)."""
        found: dict[AssertionKey, list[tuple[int, Status]]] = {}
        with self._errors():
            for row in self._db.execute(
                "SELECT i.suite_path, i.case_name, i.canonical, i.occurrence, a.run_id, a.status "
                "FROM assertions a JOIN identities i ON i.id = a.identity_id "
                "WHERE a.run_id BETWEEN ? AND ? ORDER BY a.identity_id, a.run_id",
                (first, last),
            ):
                key = AssertionKey(row[0], row[1], row[2], row[3])
                found.setdefault(key, []).append((row[4], cast(Status, row[5])))
        return found


def _steps_back(text: str) -> int | None:
    """`last` → 0, `last~3` → 3; anything else → None."""
    if text == "last":
        return 0
    head, sep, count = text.partition("~")
    if head == "last" and sep and count.isascii() and count.isdigit():
        return _number(count)
    return None


def _number(digits: str) -> int:
    """The number ASCII `digits` write, or `LARGEST_ID + 1` for any larger one (Python
    refuses to convert more than 4,300 digits: no such number is needed to say so).

    >>> _number("12"), _number("9" * 5000) == LARGEST_ID + 1
    (12, True)
    """
    digits = digits.lstrip("0") or "0"
    if len(digits) > len(str(LARGEST_ID)):
        return LARGEST_ID + 1
    return min(int(digits), LARGEST_ID + 1)


def _rowid(cursor: sqlite3.Cursor) -> int:
    assert cursor.lastrowid is not None  # an INSERT into a rowid table always sets it
    return cursor.lastrowid


def _flag(value: bool | None) -> int | None:
    return None if value is None else int(value)


def _dump(value: Any) -> str | None:
    return None if value is None else json.dumps(value, ensure_ascii=False)


def _load(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def record_report(
    report: Report,
    path: Path = DEFAULT_PATH,
    *,
    selection: str | None = None,
    err: TextIO = sys.stderr,
) -> int | None:
    """Record a finished run in the history at `path`; gives the run's id.

    Never raises: whatever goes wrong (a corrupted or locked database, a full disk) is one
    warning on `err` and None, so recording can never fail a run or lose its report.
    """
    try:
        started = _iso(datetime.now(UTC) - timedelta(milliseconds=report.duration_ms))
        snapshot = snapshot_of_report(report)
        git = git_state()
        with History.open(path, create=True) as history:
            return history.record(
                snapshot,
                started_at=started,
                duration_ms=report.duration_ms,
                git=git,
                selection=selection,
            )
    except HistoryError as problem:
        print(f"evaldsl: warning: this run is not in the history: {problem}", file=err)
    except Exception as problem:  # never let recording cost the user the run
        print(
            f"evaldsl: warning: this run is not in the history ({path}): "
            f"{type(problem).__name__}: {problem}",
            file=err,
        )
    return None
