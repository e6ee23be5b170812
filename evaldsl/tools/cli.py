"""The `evaldsl` command.

Takes command-line arguments and gives an exit code: 0 when everything passed, 1 when a
case failed or errored, no case ran (or `check` found an error), 2 for bad usage or
unreadable input, 130 when Ctrl-C stopped it, 143 when SIGTERM did (a run, a score or
a mutate stops at SIGTERM as at Ctrl-C: a cancelled CI job keeps what finished).

    evaldsl run PATH... [--json F] [--junit F] [--markdown F] [--html F] [--fail-under S] [-j N]
                        [-k PAT] [-q] [--history DB | --no-history]
    evaldsl check PATH... [--format full|concise|json|github|sarif] [--max-diagnostics N]
    evaldsl history [PATH...] [--format text|json] [--last N] [--history DB]
    evaldsl diff [A] [B] [--format text|json|markdown] [--fail-on-regression] [--history DB]
    evaldsl mutate PATH... [--seed N] [--max-mutants N] [--format text|json] [--fail-under S]
    evaldsl score PROGRAM TRACES... [--format text|json|jsonl] [-j N | --dask ADDRESS|local[:N]]
    evaldsl convert PATH
    evaldsl fmt PATH... [--check] [--diff]
    evaldsl inspect TRACE [--as FORMAT] [--format text|json]
    evaldsl inspect --code SUITE
    evaldsl schema
    evaldsl lsp
    evaldsl vocabulary
    evaldsl --version

Heavy modules are imported inside the commands that need them, so `--version` and
`--help` start fast.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import errno
import gc
import io
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, cast

from evaldsl.gcpause import paused_gc
from evaldsl.tools.cliargs import parse, parser

if TYPE_CHECKING:  # (imported by the commands that need it: a faster start)
    from evaldsl.runner.results import Report

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report a Ctrl-C
EXIT_TERMINATED = 143  # 128 + SIGTERM, as shells report a `kill`
#: The commands SIGTERM stops as Ctrl-C does (the others end at once, as by default).
STOPPED_BY_SIGTERM = ("run", "score", "mutate")


class Terminated(KeyboardInterrupt):
    """SIGTERM (a cancelled CI job, `kill`): it stops a run where Ctrl-C would."""


class UsageError(Exception):
    """Bad usage found past the argument parser (a judge setting): exit 2 with the message."""


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script (`argv` None: the process ends with it, see
    `_leave`)."""
    code = _command(argv)
    if argv is None:
        _leave(code)
    return code


def _leave(code: int) -> None:
    """End the console script's process now, without Python's teardown, when nothing is
    left to it: the streams are flushed and the `atexit` functions run (the code cache's
    file is written there) as at any exit, but every object the run made is not freed
    one by one, nor every module emptied (5-11 ms of a `check` or `run`, measured from
    `main`'s return to the process's end). A thread still running, or a stream that
    cannot be flushed, leaves the exit to Python, as before; but a command stopped by
    Ctrl-C or SIGTERM ends now, its threads with it (judge calls it abandoned: Python
    would wait for each to end, and a second Ctrl-C would break that wait)."""
    # Either way the last collection would walk every object the process made once more
    # (~20 ms of a 150 ms `check`): frozen objects are left to the exit.
    gc.freeze()
    run_exitfuncs = getattr(atexit, "_run_exitfuncs", None)  # (CPython's, since 2.x)
    threads = sys.modules.get("threading")  # (not loaded: no thread was started with it)
    running = threads is not None and threads.active_count() != 1
    if run_exitfuncs is None or (running and code not in (EXIT_INTERRUPTED, EXIT_TERMINATED)):
        return
    if not _flushed():  # (a closed pipe: Python says so at its exit)
        return
    run_exitfuncs()
    _flushed()  # (what the exit functions wrote)
    os._exit(code)


def _flushed() -> bool:
    """Flush standard output and error; whether both could be."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return False
    return True


def _command(argv: Sequence[str] | None) -> int:
    _stand_in_for_closed_streams()
    _escape_unencodable()
    # building the parser imports evaldsl: many objects, no garbage; collecting while they
    # are made would only walk them again (see gcpause)
    with paused_gc(long_lived=True):
        args = parse(argv)
    stdout = sys.stdout
    sys.stdout = cast(TextIO, StandardOutput(stdout))
    try:
        with _sigterm_stops(args.command in STOPPED_BY_SIGTERM) as terminated:
            code = _dispatch(args)
    finally:
        sys.stdout = stdout
    return EXIT_TERMINATED if code == EXIT_INTERRUPTED and terminated else code


@contextlib.contextmanager
def _sigterm_stops(wanted: bool) -> Iterator[list[int]]:
    """While the block runs (when `wanted`, in the main thread), SIGTERM raises
    `Terminated` as Ctrl-C raises `KeyboardInterrupt`; the list it gives is not empty
    once SIGTERM came."""
    came: list[int] = []
    if not wanted:
        yield came
        return
    import signal  # (here: `--version` and `check` never load it)
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield came
        return

    def stop(signum: int, frame: object) -> None:
        came.append(signum)
        raise Terminated()

    before = signal.signal(signal.SIGTERM, stop)
    try:
        yield came
    finally:
        signal.signal(signal.SIGTERM, before)


def _dispatch(args: argparse.Namespace) -> int:
    try:
        if args.command in ("run", "check"):
            from evaldsl.runs.heldfiles import reading_once

            # a case's recording is opened up to seven times: its bytes are read once
            with reading_once():
                return (cmd_run if args.command == "run" else cmd_check)(args, sys.stdout)
        if args.command == "score":
            from evaldsl.score.command import score_command

            return score_command(args, sys.stdout, sys.stderr)
        if args.command == "convert":
            return cmd_convert(args, sys.stdout)
        if args.command in ("history", "diff", "mutate"):
            return cmd_recorded(args, sys.stdout)
        if args.command == "fmt":
            from evaldsl.format.formatter import fmt_command

            return fmt_command(
                args.paths, check=args.check, diff=args.diff, out=sys.stdout, err=sys.stderr
            )
        if args.command == "inspect":
            from evaldsl.tools.inspect import inspect_command

            return inspect_command(
                args.trace, args.as_format, args.format, sys.stdout, code=args.code
            )
        if args.command == "schema":
            from evaldsl.suites.schema import schema_command

            return schema_command(sys.stdout)
        if args.command == "lsp":
            try:
                from evaldsl.tools.lsp.server import main as lsp_main
            except ImportError as err:
                return _usage_error(
                    f"the language server needs pygls: pip install 'evaldsl[lsp]' ({err})"
                )
            return lsp_main()  # 0 after shutdown then exit, 1 otherwise (LSP)
        if args.command == "vocabulary":
            from evaldsl.vocabulary import help_text

            print(help_text())
            return EXIT_OK
    except UsageError as err:
        return _usage_error(str(err))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # `evaldsl check … | head`: the reader left; say nothing more, like other tools
        from evaldsl.tools.outputs import silence

        silence(sys.stdout)
        return EXIT_FAILED
    except StandardOutputError as err:
        from evaldsl.tools.outputs import silence

        silence(sys.stdout)
        return _usage_error(f"cannot write to standard output: {err.strerror}")
    parser().print_help(sys.stderr)
    return EXIT_USAGE


def _stand_in_for_closed_streams() -> None:
    """Standard output or error closed before the command started (`evaldsl run … >&-`,
    `2>&-`), which Python gives as None: a run broke at its first console line (`'NoneType'
    object has no attribute 'write'`) and wrote none of its reports. Output becomes
    `ClosedOutput` (each write fails as a closed descriptor's does, so a run goes on
    without its console and writes its reports, and a report to `-` is an error); error
    goes nowhere, as the user asked. Each descriptor is held by the null device, so that
    no file the command opens takes it, where a live target would print into that file."""
    for fd, name in ((1, "stdout"), (2, "stderr")):
        if getattr(sys, name) is not None:
            continue
        try:
            os.fstat(fd)
        except OSError:  # (closed indeed, not taken since: hold it)
            null = os.open(os.devnull, os.O_WRONLY)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
    if sys.stdout is None:
        sys.stdout = ClosedOutput()
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 (the process keeps it)


class ClosedOutput(io.TextIOBase):
    """Standard output that was closed when the command started: writing it fails with
    `EBADF`, as writing a closed descriptor does; there is nothing to flush."""

    def write(self, text: str) -> int:
        raise OSError(errno.EBADF, "standard output is closed")

    def flush(self) -> None:
        return


def _escape_unencodable() -> None:
    """Text the terminal's encoding cannot carry (a lone surrogate from a file name or an
    agent's answer) is printed as an escape (`\\udc80`), never a crash mid-report."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")


def _usage_error(message: str) -> int:
    print(f"evaldsl: error: {message}", file=sys.stderr)
    return EXIT_USAGE


class StandardOutputError(OSError):
    """Standard output could not be written (a full disk, `> /dev/full`, an I/O error),
    but its reader is there: an error said in one line, not a traceback."""


class StandardOutput:
    """Standard output as a command writes it: its write errors other than a reader that
    left (`BrokenPipeError`) raised as `StandardOutputError`, told apart from an error
    of a file the command reads; everything else is the stream's own."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        try:
            return self.stream.write(text)
        except BrokenPipeError:
            raise
        except OSError as err:
            raise StandardOutputError(err.errno, err.strerror or str(err)) from None

    def flush(self) -> None:
        try:
            self.stream.flush()
        except BrokenPipeError:
            raise
        except OSError as err:
            raise StandardOutputError(err.errno, err.strerror or str(err)) from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


class ReaderMayLeave(io.TextIOBase):
    """The console of a run, whose reader may leave before its end (`evaldsl run … |
    head`, a pager quit) or that cannot be written (a full disk, `> /dev/full`): what is
    written after that is dropped (the second said once on stderr), and the run goes on
    to its end, writes its reports and gives the exit code of its outcome."""

    def __init__(self, stream: TextIO) -> None:
        super().__init__()
        self.stream = stream
        self.left = False

    def write(self, text: str) -> int:
        if not self.left:
            try:
                self.stream.write(text)
            except OSError as err:
                self._reader_left(err)
        return len(text)

    def flush(self) -> None:
        if not self.left:
            try:
                self.stream.flush()
            except OSError as err:
                self._reader_left(err)

    def isatty(self) -> bool:
        return self.stream.isatty()

    def _reader_left(self, err: OSError) -> None:
        from evaldsl.tools.outputs import silence

        self.left = True
        silence(self.stream)
        if not isinstance(err, BrokenPipeError):  # (a reader that left is no error)
            print(
                f"evaldsl: warning: the console cannot be written ({err.strerror or err}):"
                " the run goes on without it and writes its reports",
                file=sys.stderr,
            )


def _judge_factory(args: argparse.Namespace) -> object | None:
    """A picklable factory for the judge (worker processes build their own)."""
    import functools

    from evaldsl.judge.config import JudgeConfig, JudgeConfigError
    from evaldsl.judge.plan import judge_from_options

    try:  # settings from the environment, checked before anything runs
        JudgeConfig.from_env(mode=args.judge, cache_dir=args.judge_cache)
    except JudgeConfigError as err:
        raise UsageError(str(err)) from None
    return functools.partial(judge_from_options, mode=args.judge, cache_dir=args.judge_cache)


class Loading:
    """What a command found to load (None: not known yet) and what it loaded so far: kept
    when Ctrl-C or SIGTERM stops the loading, so that `run` reports the cases loaded as not
    run, and checks its reports overwrite no file the rest would have read."""

    def __init__(self) -> None:
        self.files: list[Path] | None = None
        self.loaded: list[object] = []

    def unread(self) -> list[Path]:
        """The suite files not loaded (in the order they would have been)."""
        return (self.files or [])[len(self.loaded) :]


def _load(
    paths: Sequence[str],
    args: argparse.Namespace,
    *,
    later: bool = False,
    into: Loading | None = None,
) -> tuple[list[object], int | None]:
    """The suites of `paths` (`later`: each case checked and compiled by the run, where
    it runs; see `suites.build.CaseChecks`), or an exit code; `into` gets the files found
    and each suite as it is loaded."""
    with paused_gc(long_lived=True):  # imports make many objects, no garbage: see gcpause
        from evaldsl.suites.build import load_suite
        from evaldsl.suites.files import discover, discovery_problems

    loading = into if into is not None else Loading()
    files, missing, unreadable = discover(paths)
    said = discovery_problems(missing, unreadable)
    for problem in said:  # (a folder not read: its suites would go unrun, unsaid)
        print(f"evaldsl: error: {problem}", file=sys.stderr)
    if said:
        return [], EXIT_USAGE
    if not files:
        print(
            "evaldsl: error: no suite files found (.eval, or YAML/JSON with `cases:`) in "
            + ", ".join(paths),
            file=sys.stderr,
        )
        return [], EXIT_USAGE
    loading.files = files
    factory = _judge_factory(args)
    judge = factory() if callable(factory) else None
    for f in files:
        loading.loaded.append(load_suite(f, judge=judge, later=later))
    return loading.loaded, None


def cmd_run(args: argparse.Namespace, out: TextIO) -> int:
    with paused_gc(long_lived=True):  # imports make many objects, no garbage: see gcpause
        from evaldsl.language.diagnostics import render
        from evaldsl.reports.console import ConsoleReporter
        from evaldsl.runner.core import RunInterrupted, RunOptions, not_run, run_suites
        from evaldsl.runner.stopsignals import stops_deferred
        from evaldsl.suites.files import read_draft
        from evaldsl.suites.model import Suite
        from evaldsl.tools.outputs import UsageError, plan_outputs, refuse_inputs, write_outputs

    try:
        requested = {
            "--json": args.json,
            "--junit": args.junit,
            "--markdown": args.markdown,
            "--html": args.html,
        }
        outputs = plan_outputs(requested, args.paths, history=_history_path(args))
    except UsageError as err:
        return _usage_error(str(err))
    if args.dry_run and outputs:  # (else no report, and no word of why)
        return _usage_error(
            f"--dry-run runs no case, so it writes no report: drop {outputs[0].option} or --dry-run"
        )
    if any(o.to_stdout for o in outputs):
        out = sys.stderr  # standard output carries the report, and nothing else
    out = cast(TextIO, ReaderMayLeave(out))
    # each case is checked and compiled where it runs: with -j in the workers (the part
    # of a run no worker shares is then reading and expanding the files: docs/speed.md,
    # "-j"), serially when the run comes to its recording, so that a document the check
    # reads whole is held for its cases' run, not read again (`runner/turns.py`)
    loading = Loading()
    try:
        _, code = _load(args.paths, args, later=not args.dry_run, into=loading)
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM while loading: as a run stopped then
        if args.dry_run or loading.files is None:
            raise  # (no report: none is asked, or no file is known yet)
        code = None
        stopped = True
    else:
        stopped = False
    if code is not None:
        return code
    suites = [s for s in loading.loaded if isinstance(s, Suite)]
    unread = loading.unread()
    refused: UsageError | None = None
    try:
        # (a stop until the run starts waits for this block's end, then stops the run as
        # one while loading does: it left no report at all)
        with stops_deferred():
            # the files left unread: their own paths, recordings, modules and datasets,
            # read from their drafts (not loaded: not expanded nor checked), are not
            # overwritten either
            drafts = (
                [read_draft(f) for f in unread] if any(not o.to_stdout for o in outputs) else []
            )
            try:  # (before anything runs: a suite found in a folder, a recording, a dataset)
                refuse_inputs(outputs, [*suites, *drafts])
            except UsageError as err:
                refused = err
            if refused is None and not args.dry_run:
                factory = _judge_factory(args)
                options = RunOptions(
                    jobs=args.jobs,
                    select=args.select,
                    judge_factory=factory if callable(factory) else None,
                )
                color = False if args.no_color or os.environ.get("NO_COLOR") else None
                reporter = ConsoleReporter(out, color=color, quiet=args.quiet, verbose=args.verbose)
                total = sum(len(s.cases) for s in suites)
                reporter.start(total, suites)
    except KeyboardInterrupt:
        if args.dry_run or refused is not None:
            raise
        stopped = True
    if refused is not None:
        return _usage_error(str(refused))
    if args.dry_run:
        for s in suites:
            if s.diagnostics:
                print(render(s.diagnostics), file=out)
        return _dry_run(suites, args, out)
    try:
        if stopped:  # (the report of a run stopped before its first case)
            report = not_run(suites, options)
        else:
            report = run_suites(suites, options, on_case=reporter.case_done)
    except RunInterrupted as stop:
        report = stop.report
    # a stop now comes once every report asked for is written (it cut them short: a
    # report half written, or none, for a run whose cases had all run)
    with stops_deferred():
        reporter.finish(report)
        if unread:
            files = f"{len(unread)} suite file{'s' if len(unread) != 1 else ''}"
            print(
                f"evaldsl: interrupted while loading the suites: {files} not read "
                f"(first: {unread[0]}), so not in the report",
                file=sys.stderr,
            )
        ran = len(report.cases)
        if not args.no_history and ran and not report.interrupted:
            from evaldsl.history.store import DEFAULT_PATH, record_report

            database = Path(args.history) if args.history else DEFAULT_PATH
            record_report(report, database, selection=args.select, err=sys.stderr)
        written = write_outputs(report, outputs, sys.stderr, suites)
    if not written:
        return EXIT_USAGE
    if report.interrupted:
        return EXIT_INTERRUPTED
    if not ran:
        print(f"evaldsl: no case ran: {_nothing_ran(args, total, report)}", file=sys.stderr)
        return EXIT_FAILED
    if not report.ok:
        return EXIT_FAILED
    if args.fail_under is not None and report.summary.overall_score < args.fail_under:
        print(
            f"overall score {report.summary.overall_score:.3f} is below --fail-under "
            f"{args.fail_under}",
            file=out,
        )
        return EXIT_FAILED
    return EXIT_OK


def _history_path(args: argparse.Namespace) -> str | None:
    """The history database `run` records to (None: `--no-history`)."""
    if args.no_history:
        return None
    from evaldsl.history.store import DEFAULT_PATH

    return str(DEFAULT_PATH) if args.history is None else str(args.history)


def _nothing_ran(args: argparse.Namespace, total: int, report: Report) -> str:
    """Why a run ran no case: its `-k` matched none, a suite file that could not be read
    or checked gave none, or its suites have none. (The report's suites, not the loaded
    ones: with `-j` a suite's problems are known once its workers checked it.)"""
    if args.select and total:
        from evaldsl.runner.cases import matched_none

        return matched_none(args.select, total)
    broken = [s for s in report.suites if s.errors and not s.cases]
    if broken:
        first = broken[0].errors[0]
        files = "a suite file" if len(broken) == 1 else f"{len(broken)} suite files"
        return f"{files} with errors gave no case (first: {first.brief})"
    return (
        "the suites hold no case (a `.eval` file of no assertions, `cases: []`, or an "
        "`each []` or a dataset of no rows, which expands to none)"
    )


def _dry_run(suites: Sequence[object], args: argparse.Namespace, out: TextIO) -> int:
    from evaldsl.runner.cases import selected
    from evaldsl.suites.model import Suite

    cases = broken = 0
    for s in suites:
        assert isinstance(s, Suite)
        for c in s.cases:
            if selected(s, c, args.select):
                cases += 1
                broken += c.error is not None
    # (a case with check errors runs as an error, never as its assertions: said apart)
    said = "as an error" if broken == 1 else "as errors"
    errors_too = f", {broken} of them {said} (the check errors above)" if broken else ""
    print(
        f"{cases} case{'s' if cases != 1 else ''} in {len(suites)} suite"
        f"{'s' if len(suites) != 1 else ''} would run{errors_too}",
        file=out,
    )
    _print_judge_plan([s for s in suites if isinstance(s, Suite)], args.select, out)
    errors = sum(len(s.errors) for s in suites if isinstance(s, Suite))
    return EXIT_FAILED if errors or not cases else EXIT_OK


def _print_judge_plan(suites: Sequence[Any], select: str | None, out: TextIO) -> None:
    from evaldsl.runner.cases import plan_judge

    plan = plan_judge(suites, select)
    if plan is not None:
        print(plan.describe(), file=out)


def cmd_check(args: argparse.Namespace, out: TextIO) -> int:
    # Checking imports most of evaldsl and builds the suites: many objects that live until
    # the process ends, and no garbage cycles; collections would only walk them again.
    with paused_gc(long_lived=True):
        return _check(args, out)


def _check(args: argparse.Namespace, out: TextIO) -> int:
    from evaldsl.language.diagnostics import MAX_SHOWN, counted, render, to_json
    from evaldsl.suites.model import Suite

    loaded, code = _load(args.paths, args)
    if code is not None:
        return code
    diags = [d for s in loaded if isinstance(s, Suite) for d in s.diagnostics]
    fmt = args.format
    if fmt in ("full", "concise"):
        if diags:
            wanted = MAX_SHOWN if args.max_diagnostics is None else args.max_diagnostics
            most = wanted or None  # (0: no limit)
            lift = "--max-diagnostics 0 shows them all"
            print(render(diags, style=fmt, most=most, lift=lift), file=out)
        files = len(loaded)
        print(f"{files:,} file{'s' if files != 1 else ''} checked: {counted(diags)}", file=out)
        _print_judge_plan([s for s in loaded if isinstance(s, Suite)], None, out)
    elif fmt == "json":
        print(to_json(diags), file=out)
    else:
        try:
            from evaldsl.reports import annotations
        except ImportError:
            return _usage_error(f"--format {fmt} is not available in this build")
        print(annotations.render(diags, fmt), file=out)
    return EXIT_FAILED if any(d.is_error for d in diags) else EXIT_OK


def cmd_recorded(args: argparse.Namespace, out: TextIO) -> int:
    """`history`, `diff` and `mutate` (each implemented in its own module)."""
    if args.command == "history":
        from evaldsl.history.trends import history_command

        return history_command(
            args.paths,
            database=args.history,
            last=args.last,
            fmt=args.format,
            out=out,
            err=sys.stderr,
        )
    if args.command == "diff":
        from evaldsl.history.diff import diff_command

        return diff_command(
            args.runs,
            database=args.history,
            fmt=args.format,
            fail_on_regression=args.fail_on_regression,
            min_change=args.min_change,
            out=out,
            err=sys.stderr,
        )
    from evaldsl.mutation.mutate import mutate_command

    factory = _judge_factory(args)
    return mutate_command(
        args.paths,
        seed=args.seed,
        max_mutants=args.max_mutants,
        select=args.select,
        fmt=args.format,
        fail_under=args.fail_under,
        judge=factory() if callable(factory) else None,
        judge_mode=args.judge,
        out=out,
        err=sys.stderr,
    )


def cmd_convert(args: argparse.Namespace, out: TextIO) -> int:
    from evaldsl.language.diagnostics import render
    from evaldsl.language.reading import present
    from evaldsl.suites.convert import NOT_CONVERTED, to_eval
    from evaldsl.suites.files import read_draft

    path = Path(args.path)
    if not present(path):
        return _usage_error(f"no such file: {args.path}")
    draft = read_draft(path)
    text, problems = to_eval(draft)
    if problems:
        print(render(problems), file=sys.stderr)
    failed = any(d.is_error for d in problems)
    # A file that could not be read as a suite at all (a device, not UTF-8, not YAML)
    # converts to nothing: a bare `suite "NAME"` would look like its conversion.
    if draft.cases or not failed:
        out.write(text)
        stops = text.count(NOT_CONVERTED)
        if stops:
            print(
                f"evaldsl: {stops} place{'s' if stops != 1 else ''} could not be converted: each "
                f"is a comment and a `not_converted` line, which keeps its case (in the header: "
                f"the suite) from running until it is rewritten in evaldsl",
                file=sys.stderr,
            )
    return EXIT_FAILED if failed else EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
