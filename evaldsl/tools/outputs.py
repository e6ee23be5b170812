"""Where `evaldsl run` writes its reports: paths checked before anything runs, and written.

Takes the `--json`, `--junit`, `--markdown` and `--html` options and gives `Output`s whose
paths are absolute (resolved against the working folder when the command starts, whatever
a target does later), or a `UsageError` saying what is wrong: two formats on one path (or
both on standard output), an empty path, a path that is a folder, a read-only file, a
path under a file, the run's history database (or any SQLite file), the price table
(`EVALDSL_PRICES`), a path that is a file the run reads (`refuse_inputs`, once the
suites are loaded: a suite, a recording, a dataset, a run target's module).
`write_outputs` writes each report whole or not at all and says which could not be
written (standard output too, when its reader left: `silence`).
"""

from __future__ import annotations

import errno
import os
import re
import stat
import sys
from collections.abc import Sequence
from typing import TextIO

import attrs

from evaldsl.atomicfile import existing_above, file_above, writable
from evaldsl.check.environment import target_file
from evaldsl.language.reading import starts_as_sqlite
from evaldsl.reports import write
from evaldsl.runner.results import Report
from evaldsl.runs.prices import PRICES_VARIABLE, USER_TABLE
from evaldsl.suites.model import Suite, SuiteDraft
from evaldsl.suites.templates import any_rendering

#: The report options of `evaldsl run`, with the format each writes.
REPORT_OPTIONS = (
    ("--json", "json"),
    ("--junit", "junit"),
    ("--markdown", "markdown"),
    ("--html", "html"),
)

STDOUT = "-"


class UsageError(Exception):
    """Report options that cannot be honoured; the message says why."""


@attrs.frozen
class Output:
    """One report to write: its option, its format and its path (absolute, or `-`)."""

    option: str
    fmt: str
    path: str
    given: str = attrs.field(default="", eq=False)  # the path as the user wrote it

    @property
    def to_stdout(self) -> bool:
        return self.path == STDOUT


def plan_outputs(
    requested: dict[str, str | None], inputs: Sequence[str] = (), history: str | None = None
) -> list[Output]:
    """The reports `requested` (option → path or None) asks for, checked: `UsageError`
    when two share a path, a path cannot be written (`refuse_path`), or a path is one of
    the `inputs` or the `history` database the run records to.

    >>> [o.fmt for o in plan_outputs({"--json": "-", "--junit": None})]
    ['json']
    >>> plan_outputs({"--json": "r.out", "--markdown": "./r.out"})
    Traceback (most recent call last):
    ...
    evaldsl.tools.outputs.UsageError: --json and --markdown both write ./r.out (one file each)
    """
    outputs: list[Output] = []
    seen: dict[str, Output] = {}
    suites = {os.path.realpath(p) for p in inputs if os.path.isfile(p)}
    database = os.path.realpath(history) if history else None
    # (read when the run started, and again by every later run: a report over it leaves
    # the next run a table that cannot be used, and the user's prices lost)
    prices = _real(USER_TABLE) if USER_TABLE else None
    for option, fmt in REPORT_OPTIONS:
        given = requested.get(option)
        if given is None:
            continue
        if not given:  # (else the working folder: a folder, refused, and not why)
            raise UsageError(
                f"{option} '': an empty path names no file; name a file for the report"
            )
        # (a path to the very file standard output is, `/dev/stdout` or `>(…)`'s of the
        # same pipe, is standard output: the console then goes to stderr, as for `-`,
        # where it would have been written into the report's stream between its lines)
        to_stdout = given == STDOUT or is_stdout(given)
        path = STDOUT if to_stdout else os.path.abspath(given)
        key = path if to_stdout else os.path.realpath(path)
        if key in seen:
            where = "standard output (-)" if to_stdout else given
            raise UsageError(f"{seen[key].option} and {option} both write {where} (one file each)")
        if key == database:
            raise UsageError(
                f"{option} {given}: that is the history database the run records to; "
                "name another file"
            )
        if key == prices:
            raise UsageError(
                f"{option} {given}: that is the price table the run prices by "
                f"({PRICES_VARIABLE}={USER_TABLE}); name another file"
            )
        if not to_stdout:
            refuse_path(f"{option} {given}", path)
        if key in suites:
            raise UsageError(f"{option} {given}: that is a suite being run; name another file")
        seen[key] = Output(option, fmt, path, given)
        outputs.append(seen[key])
    return outputs


def is_stdout(path: str) -> bool:
    """Whether `path` names the file this process's standard output is (the same device
    and inode: `/dev/stdout`, `/proc/self/fd/1`, the file stdout was redirected to)."""
    try:
        named, out = os.stat(path), os.fstat(1)
    except (OSError, ValueError):
        return False
    return (named.st_dev, named.st_ino) == (out.st_dev, out.st_ino)


def refuse_path(said: str, path: str) -> None:
    """`UsageError` (its message starts with `said`, the option and the path as given)
    when a report cannot or must not be written at `path` (absolute; symlinks followed):
    a folder, a read-only file, a path under a file, a symbolic link that loops, an
    SQLite database, or a place no file can be made (`_try_making`). A device or a pipe
    is fine: it is written in place (`atomicfile`)."""
    try:
        found = os.stat(path)
    except OSError as err:
        if err.errno == errno.ELOOP:  # (else refused only once the run had ended)
            raise UsageError(
                f"{said}: that is a symbolic link that leads back to itself; name another file"
            ) from None
        # (a symbolic link to no file yet is written where it points: those folders)
        _refuse_parent(said, os.path.realpath(path))
        _try_making(said, os.path.realpath(path))
        return
    if stat.S_ISDIR(found.st_mode):
        raise UsageError(f"{said}: that is a folder; name a file")
    if not stat.S_ISREG(found.st_mode):
        return
    if not writable(path, found):
        raise UsageError(
            f"{said}: that file is read-only; make it writable (chmod u+w) or name another file"
        )
    if starts_as_sqlite(path):
        raise UsageError(f"{said}: that is an SQLite database (run history?); name another file")
    _try_making(said, os.path.realpath(path))


def _try_making(said: str, real: str) -> None:
    """`UsageError` when no file can be made where the report goes (a folder the user may
    not write, a read-only file system, `/proc`, a name longer than the file system
    takes): found by making one and removing it at once, before the run, where the
    report's write found it once every case had run. The file made is the report itself
    when it does not exist yet in an existing folder (its name is tried too), else a
    temporary file in the nearest existing folder (as the atomic write makes one)."""
    folder = existing_above(real)  # (a folder: `_refuse_parent` refused a file there)
    try:
        if folder == os.path.dirname(real) and not os.path.lexists(real):
            os.close(os.open(real, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            os.unlink(real)
        else:
            import tempfile  # (as in `atomicfile`: only when a report is asked for)

            fd, made = tempfile.mkstemp(prefix=".evaldsl-", suffix=".tmp", dir=folder)
            os.close(fd)
            os.unlink(made)
    except OSError as err:
        reason = err.strerror or type(err).__name__
        raise UsageError(
            f"{said}: no file can be made there ({reason}); name a file in a folder you may write"
        ) from None


def _refuse_parent(said: str, path: str) -> None:
    """`UsageError` when the nearest existing folder above a report that does not exist
    yet is a file (`--junit md.eval/r.xml`): its folders could not be made."""
    folder = file_above(path)
    if folder is not None:
        raise UsageError(
            f"{said}: {folder} is a file, not a folder, so the report cannot go under it; "
            "name a path in a folder"
        )


def _real(path: str | os.PathLike[str]) -> str | None:
    """`os.path.realpath(path)`, or None for a path no file can have: one with a NUL, or
    with half a surrogate pair (`cassette "{{p}}"` of a row `{p: "\\ud800"}`), for which
    `realpath` raises ValueError. No report can be written over such a file."""
    try:
        return os.path.realpath(path)
    except ValueError:  # (UnicodeEncodeError is one)
        return None


def refuse_inputs(outputs: Sequence[Output], suites: Sequence[Suite | SuiteDraft]) -> None:
    """`UsageError` when a report would overwrite a file the run of `suites` reads: a
    suite (found in a folder too), a case's recording or state, or a dataset.

    The suites' own paths and their cases' sources are known from the loaded suites (a
    recording not there yet too: the next run would read the report as it); datasets
    only from the files' drafts, read again only when a report path is an existing file
    that is none of those (a report rewritten by a run again, most often). A suite left
    unloaded (a run stopped while loading) is given as its draft: its rows not expanded,
    a source path that is a template of them stands for every path it may render to."""
    files = [o for o in outputs if not o.to_stdout]
    if not files:
        return
    read: dict[str, str] = {}
    templated: list[tuple[re.Pattern[str], str]] = []
    for suite in suites:
        for case in suite.cases:
            spec = case.source
            if spec is None:
                continue
            if spec.path is not None and "{{" in spec.path and isinstance(suite, SuiteDraft):
                what = f'a file the {spec.kind} case "{case.name}" of {suite.path} may read'
                full = os.path.join(os.path.realpath(suite.base_dir), spec.path)
                templated.append((any_rendering(full), f"{what} ({spec.path})"))
            elif spec.path is not None:
                what = f'the {spec.kind} case "{case.name}" of {suite.path} reads'
                real = _real(suite.base_dir / spec.path)
                if real is not None:
                    read.setdefault(real, what)
            elif spec.target is not None:
                # (the agent's own code: a report over it would lose the user's work)
                module = target_file(spec.target, suite.base_dir)
                if module is not None:
                    what = f'the module of the run target {spec.target} of case "{case.name}"'
                    read.setdefault(os.path.realpath(module), what)
        read[os.path.realpath(suite.path)] = "a suite being run"
    if any(os.path.realpath(o.path) not in read and os.path.isfile(o.path) for o in files):
        from evaldsl.suites.files import read_draft

        for suite in suites:
            draft = suite if isinstance(suite, SuiteDraft) else read_draft(suite.path)
            for drafted in draft.cases:
                if drafted.dataset is not None and drafted.dataset.path is not None:
                    what = f'the dataset case "{drafted.name}" of {suite.path} reads'
                    real = _real(draft.base_dir / drafted.dataset.path)
                    if real is not None:
                        read.setdefault(real, what)
    for output in files:
        real = os.path.realpath(output.path)
        reader = read.get(real) or next((w for p, w in templated if p.fullmatch(real)), None)
        if reader is not None:
            raise UsageError(f"{output.option} {output.given}: that is {reader}; name another file")


def write_outputs(
    report: Report, outputs: Sequence[Output], err: TextIO, suites: Sequence[Suite] = ()
) -> bool:
    """Write every report (each whole or not at all); False when one could not be
    written (each failure is said on `err`, and the others are still written). The HTML
    report reads the `suites` again for each case's tool timeline."""
    ok = True
    for output in outputs:
        try:
            if output.fmt == "html":
                from evaldsl.reports.html import write_html  # only when asked: a large module

                write_html(report, output.path, suites=suites)
            else:
                write(report, output.fmt, output.path)
        except BrokenPipeError:  # (`--json - | head`: the reader left before its end)
            silence(sys.stdout)
            where = f"the {output.option} report to standard output (-)"
            print(f"evaldsl: error: cannot write {where}: its reader closed it", file=err)
            ok = False
        except OSError as error:
            reason = error.strerror or type(error).__name__
            # (`-` is standard output, not a file of that name: `> /dev/full`, a full disk)
            where = (
                f"the {output.option} report to standard output (-)"
                if output.to_stdout
                else output.path
            )
            print(f"evaldsl: error: cannot write {where}: {reason}", file=err)
            ok = False
    return ok


def silence(stream: TextIO) -> None:
    """Send what is still buffered for a stream whose reader left (a closed pipe), and
    Python's flush at the exit, to the null device: quietly, not as an error at exit."""
    try:
        fd = stream.fileno()
    except (OSError, ValueError):  # (not a file: a test's StringIO)
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)
