"""`evaldsl score PROGRAM TRACES...`: one program over many traces, streamed.

Takes the parsed command-line arguments and gives an exit code: 0 when every trace was
read and none failed (a trace whose assertions were all skipped is not a failure), 1
when a trace failed or could not be read, 2 for bad usage (a program with errors,
several cases or no assertion, a path that does not exist, no traces at all, an
unreachable Dask scheduler, `--dask` without dask installed, an engine that stopped: the
output is then closed with the summary of what was scored). Ctrl-C or SIGTERM closes the
output with the summary of what was scored too (`"interrupted": true`), and the command
exits 130 or 143 (`cli`). Records go to standard
output in the chosen format as they come; diagnostics, the cluster's start-up and the
throughput go to standard error, so standard output stays data.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import itertools
import logging
import time
from collections.abc import Iterator
from typing import TextIO

from evaldsl.api import Program
from evaldsl.gcpause import frozen_loaded
from evaldsl.judge.config import ENABLE_HINT, ENV_API_KEY, JudgeConfig, JudgeConfigError
from evaldsl.language.diagnostics import (
    EvalDslError,
    lone_carriage_return,
    not_utf8,
    render,
)
from evaldsl.language.limits import MAX_SUITE_BYTES
from evaldsl.language.printable import visible
from evaldsl.language.reading import FileProblem, read_regular
from evaldsl.score.engines import LOCAL_BATCH, score_items
from evaldsl.score.output import writer
from evaldsl.score.scoring import (
    ProgramShapeError,
    ProgramSpec,
    TraceRecord,
    compiled_program,
    the_case,
)
from evaldsl.score.sources import STDIN, Item, items, missing_paths
from evaldsl.score.summary import Summary

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2

FLUSH_SECONDS = 1.0

DASK_MISSING = "--dask needs dask and distributed: pip install 'evaldsl[dask]'"


def score_command(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Run `evaldsl score` (see the module doc for the exit codes)."""
    problem = _usage_problem(args)
    if problem is not None:
        return _usage(err, problem)
    try:
        # (a regular file only: a FIFO named as the program waited for a writer for ever,
        # and /dev/zero was read until memory ran out)
        raw = read_regular(args.program, MAX_SUITE_BYTES)
    except FileProblem as exc:
        return _usage(err, f"cannot read the program: {exc.message.removeprefix('cannot read ')}")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:  # (where, as `run` says it of a suite file)
        err.write(render([not_utf8(args.program, raw, exc, "the program")]) + "\n")
        return EXIT_USAGE
    lone = lone_carriage_return(args.program, text) if "\r" in text else None
    if lone is not None:  # (read on, its lines ran together: an error at a later word)
        err.write(render([lone]) + "\n")
        return EXIT_USAGE
    spec = ProgramSpec(text, args.program, args.judge, args.judge_cache)
    try:
        program = compiled_program(spec)
    except EvalDslError as exc:
        err.write(render(exc.diagnostics) + "\n")
        return EXIT_USAGE
    except ProgramShapeError as exc:
        return _usage(err, f"{args.program}: {exc}")
    except JudgeConfigError as exc:  # the judge's settings, checked before anything runs
        return _usage(err, str(exc))
    if program.warnings:
        err.write(render(program.warnings) + "\n")
    _own_source_note(err, args.program, program)
    missing = missing_paths(args.traces)
    if missing:
        return _usage(err, "no such file or folder: " + ", ".join(missing))
    stream = items(args.traces)
    first = next(stream, None)
    if first is None:
        return _usage(err, "no traces found in " + " ".join(args.traces))
    work = itertools.chain([first], stream)

    summary = Summary.of(program, args.samples)
    texts = [a.text for a in the_case(program).assertions]
    if args.dask is not None:
        with quiet_dask_logs():  # (what went wrong is said once, in the command's words)
            return _on_dask(args, spec, work, summary, texts, out, err)
    begin = time.perf_counter()
    batch = args.batch_size or LOCAL_BATCH
    records = score_items(spec, work, jobs=args.jobs, batch_size=batch)
    stopped = _write(records, summary, args, texts, out)
    _judge_note(err, spec, program, summary)
    return _finish(err, summary, stopped, time.perf_counter() - begin)


#: The loggers distributed sets up (its `logging` config), with their children: a
#: handler of their own writes their records to standard error, or the root logger's do.
DASK_LOGGERS = ("distributed", "tornado")


@contextlib.contextmanager
def quiet_dask_logs() -> Iterator[None]:
    """distributed's (and tornado's) loggers silenced for `--dask`'s duration, then as they
    were. A scheduler lost mid-run is logged there as tracebacks (a connection closed,
    reconnecting, giving up) while the command says in one line what happened
    (`SchedulerLost`), and a client's or an in-process scheduler's notices are no part of
    the command's output. Each logger with a level of its own is raised above every level
    (the others, made later too, take their parent's), wherever its records would go."""
    # distributed sets its loggers' levels as it is imported: import it first (`_on_dask`
    # would; without it, `--dask` says so and nothing is logged)
    with contextlib.suppress(ImportError):
        import distributed  # noqa: F401
    with contextlib.ExitStack() as stack:
        for logger in _dask_loggers():
            stack.callback(logger.setLevel, logger.level)
            logger.setLevel(logging.CRITICAL + 1)
        yield
    # The client's own tasks left waiting on a lost scheduler fail as the interpreter
    # exits (distributed closes its loop then): silenced then too, first (atexit runs the
    # functions registered last first)
    atexit.register(_silence_dask_logs)


def _dask_loggers() -> list[logging.Logger]:
    """distributed's and tornado's loggers that have a level of their own."""
    return [
        logger
        for name, logger in [*logging.root.manager.loggerDict.items()]
        if isinstance(logger, logging.Logger)  # (not a placeholder: it has no level)
        and (
            name in DASK_LOGGERS
            or (name.partition(".")[0] in DASK_LOGGERS and logger.level != logging.NOTSET)
        )
    ]


def _silence_dask_logs() -> None:
    for logger in _dask_loggers():
        logger.setLevel(logging.CRITICAL + 1)


def _usage_problem(args: argparse.Namespace) -> str | None:
    if args.dask is not None and args.jobs > 1:
        return "-j and --dask do not go together: the cluster's workers are the processes"
    if args.samples < 0:
        return "--samples takes a number ≥ 0"
    if args.traces.count(STDIN) > 1:
        return "standard input (-) can be read once"
    return None


def _write(
    records: Iterator[TraceRecord],
    summary: Summary,
    args: argparse.Namespace,
    texts: list[str],
    out: TextIO,
) -> str | None:
    """Write every record and the summary; the reason the engine stopped, if it did."""
    w = writer(args.format, out, args.program, texts)
    flushed = time.monotonic()
    stopped = None
    # What is loaded, the program above all (objects by the thousand per assertion), is
    # frozen for the run: the records' dicts that live through young collections bring
    # about full ones, which then walk what is new, not the program each time.
    with frozen_loaded():
        try:
            for rec in records:
                w.trace(rec)
                summary.add(rec)
                if summary.traces % 256 == 0 and time.monotonic() - flushed > FLUSH_SECONDS:
                    out.flush()  # a reader at the end of a pipe sees records as they come
                    flushed = time.monotonic()
        except Exception as exc:  # a lost scheduler, a pool that cannot start: say so below
            stopped = f"{type(exc).__name__}: {exc}"
        except KeyboardInterrupt:  # Ctrl-C or SIGTERM: what was scored, said to be all
            summary.interrupted = True
            w.finish(summary)
            raise
    w.finish(summary)  # the output is whole either way, with what was scored
    return stopped


def _on_dask(
    args: argparse.Namespace,
    spec: ProgramSpec,
    work: Iterator[Item],
    summary: Summary,
    texts: list[str],
    out: TextIO,
    err: TextIO,
) -> int:
    try:
        from evaldsl.score import cluster as on_dask
    except ImportError:
        return _usage(err, DASK_MISSING)
    try:
        on_dask.parse_local(args.dask)
    except ValueError as exc:
        return _usage(err, str(exc))
    try:
        client, cluster, seconds = on_dask.started(args.dask)
    except (OSError, TimeoutError, ValueError) as exc:  # ValueError: a malformed address
        return _usage(err, f"cannot reach the Dask scheduler at {args.dask}: {exc}")
    try:
        begin = time.perf_counter()
        try:
            on_dask.prepare(client, spec)
        except Exception as exc:  # a worker without evaldsl, or another version of it
            return _usage(err, f"the Dask workers cannot compile the program: {exc}")
        seconds += time.perf_counter() - begin
        workers = on_dask.worker_count(client)
        what = "LocalCluster started" if cluster is not None else f"connected to {args.dask}"
        err.write(
            f"dask: {what} with {workers} workers in {seconds:.2f} s (program compiled on each)\n"
        )
        begin = time.perf_counter()
        batch = args.batch_size or on_dask.CLUSTER_BATCH
        records = on_dask.score_on_cluster(client, spec, work, batch_size=batch)
        stopped = _write(records, summary, args, texts, out)
    finally:
        on_dask.close(client, cluster)
    _judge_note(err, spec, compiled_program(spec), summary)
    return _finish(err, summary, stopped, time.perf_counter() - begin)


def _own_source_note(err: TextIO, path: str, program: Program) -> None:
    """Say that the one case's own `cassette`, `trace`, `state`, `run` or `dataset` line is
    not read: `score` applies the program to the traces named, and a suite's case given as
    the program ran against them in silence (its recording never looked at)."""
    case = program.outline.cases[0] if program.outline.cases else None
    decl = None if case is None else case.source or case.dataset
    if decl is None:
        return
    where = program.source.position(decl.span.start)
    written = visible(program.source.text[decl.span.start : decl.span.end], newlines=False)
    err.write(
        f"note: {path}:{where.line}:{where.column}: `{written}` is not read: score applies "
        "the program to the traces named\n"
    )


def _judge_note(err: TextIO, spec: ProgramSpec, program: Program, summary: Summary) -> None:
    """Say once why judge assertions were skipped, when some were: each record says only
    `skip`, and a run that judged nothing must not read as one that judged and passed."""
    if not the_case(program).judged or not any(t.counts["skip"] for t in summary.assertions):
        return
    config = JudgeConfig.from_env(mode=spec.judge, cache_dir=spec.judge_cache)
    if config.mode == "off":
        err.write("note: judge assertions were skipped on purpose (--judge off)\n")
    elif config.api_key is None:
        err.write(
            f"note: judge assertions were skipped (no {ENV_API_KEY}, and no cached verdict): "
            f"{ENABLE_HINT} to judge them\n"
        )


def _finish(err: TextIO, summary: Summary, stopped: str | None, seconds: float) -> int:
    """The throughput line, and the exit code."""
    rate = summary.traces / seconds if seconds > 0 else 0.0
    traces = f"{summary.traces:,} trace{'s' if summary.traces != 1 else ''}"
    err.write(f"scored {traces} in {seconds:.2f} s ({rate:,.0f} traces/s)\n")
    if stopped is not None:
        return _usage(err, f"the run stopped after {summary.traces:,} traces: {stopped}")
    return EXIT_OK if summary.ok else EXIT_FAILED


def _usage(err: TextIO, message: str) -> int:
    err.write(f"evaldsl: error: {message}\n")
    return EXIT_USAGE
