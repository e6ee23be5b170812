"""Score one trace, or a batch of them, against a program: the work every engine shares.

Takes a `ProgramSpec` (the program's text and path, and the judge settings: plain strings,
so a worker process or a Dask worker receives data, never a pickled closure) and `Item`s
from `sources`, and gives one `TraceRecord` per trace: a JSON-ready dict, the line
`evaldsl score --format jsonl` prints (a file that is an Inspect AI log of several samples
holds a trace per sample: a record each, keyed `PATH [SAMPLE]`; a JSON-lines file of one
whole trace per line, an exporter's, a record per line, keyed `PATH:LINE`). Each process compiles a
spec once (`compiled`) and keeps it for the batches that follow.

A trace that cannot be read, or whose checking breaks in a way nobody foresaw, is a record
with its `error` and every assertion in error: one bad trace never stops the others.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from contextlib import AbstractContextManager, nullcontext
from typing import Any, TypedDict

import attrs
import orjson

from evaldsl.api import CompiledCase, Program, compile
from evaldsl.bounded import keep
from evaldsl.compile.evaluate import evaluate, indexed_run
from evaldsl.gcpause import paused_gc
from evaldsl.judge.plan import judge_from_options
from evaldsl.language.verdicts import Status, all_skipped, status_score
from evaldsl.runs.detect import (
    TracePerLine,
    coerce_run,
    inspect_samples,
    load_run,
    read_document,
)
from evaldsl.runs.index import RunFacts
from evaldsl.runs.model import (
    Run,
    RunError,
    describe,
    not_utf8_error,
    open_file,
    strip_bom,
)
from evaldsl.runs.prices import PriceTableError, table_stamp
from evaldsl.runs.surrogates import mended_loads
from evaldsl.score.sources import Item

#: How standard input is named in messages and records.
STDIN_NAME = "<stdin>"


class Failure(TypedDict):
    """An assertion that failed or errored on one trace."""

    index: int  # 0-based position of the assertion in the program
    assertion: str
    status: Status
    message: str


class TraceRecord(TypedDict):
    """One trace's outcome; the shape of a `--format jsonl` line."""

    trace: str  # the path, or `<stdin>:LINE` (`PATH:LINE`: a file of a trace per line)
    id: str | int | None  # a line's trace's own `trace_id`/`traceId`/`id`
    passed: bool  # nothing failed or errored (true for a skipped trace too, as for cases)
    skipped: bool  # every assertion was skipped (a judge without a key): nothing tested
    score: float
    statuses: list[Status]  # one per assertion, in source order
    failures: list[Failure]  # the failed and errored assertions, with their messages
    error: str | None  # why the trace could not be read


@attrs.frozen
class ProgramSpec:
    """What a worker needs to compile the program itself: text, path, judge settings, and
    the price table of the process that made it (`prices.table_stamp`)."""

    text: str
    path: str = "<string>"
    judge: str | None = None  # `--judge` mode: live, frozen, off (None: live)
    judge_cache: str | None = None
    prices: tuple[str, str] = attrs.field(factory=table_stamp)

    def compile(self) -> Program:
        """Compile the program (raises `EvalDslError` with every diagnostic; and
        `PriceTableError` when it reads `cost` and this process prices by another table
        than the one that made the spec: a Dask worker without the client's
        `EVALDSL_PRICES` would give other costs, never an error)."""
        judge = judge_from_options(self.judge, self.judge_cache)
        program = compile(self.text, path=self.path, judge=judge)
        if any(case.needs.cost for case in program.cases):
            stamp, said = table_stamp()
            if stamp != self.prices[0]:
                raise PriceTableError(
                    f"this process prices `cost` by {said}, the one that sent the program "
                    f"by {self.prices[1]}: set EVALDSL_PRICES alike where the program is "
                    "scored (each Dask worker reads its own environment)"
                )
        return program


class ProgramShapeError(ValueError):
    """A program `score` cannot apply: it has several cases, or no assertion."""


def the_case(program: Program) -> CompiledCase:
    """The one case a scoring program applies (a file without `case` lines, or one case)."""
    if len(program.cases) != 1:
        names = ", ".join(repr(c.name) for c in program.cases)
        raise ProgramShapeError(
            f"score applies one program to every trace, and this one has "
            f"{len(program.cases)} cases ({names}): keep the header and the assertions, "
            "without `case` lines"
        )
    if not program.cases[0].assertions:
        # (every trace would pass: `run` says "no case ran" and `check` W504 where
        # nothing is checked, and scoring nothing is refused as loudly)
        raise ProgramShapeError(
            "this program has no assertions, so every trace would pass: add what each trace must "
            "show, e.g. `tool search called` or `steps <= 10`"
        )
    return program.cases[0]


_COMPILED: dict[ProgramSpec, Program] = {}
_COMPILE_LOCK = threading.Lock()
_KEEP = 8  # programs a long-lived (Dask) worker keeps compiled


def compiled_program(spec: ProgramSpec) -> Program:
    """The spec compiled once per process (a lock: Dask workers have threads)."""
    program = _COMPILED.get(spec)
    if program is not None:
        return program
    with _COMPILE_LOCK:
        program = _COMPILED.get(spec)
        if program is None:
            program = keep(_COMPILED, spec, spec.compile(), _KEEP)
            the_case(program)  # a program score cannot apply fails here, once
    return program


def compiled(spec: ProgramSpec) -> CompiledCase:
    """The spec's one case, compiled once per process."""
    return the_case(compiled_program(spec))


def score_batch(spec: ProgramSpec, items: Iterable[Item]) -> list[TraceRecord]:
    """Score a batch of traces in this process: the task every engine sends out. Each
    item gives one record, or one per sample of an Inspect AI log of several."""
    case = compiled(spec)
    with collector_paused(case):
        return [record for item in items for record in score_item(case, item)]


def score_item(case: CompiledCase, item: Item) -> list[TraceRecord]:
    """Score one trace (one record), or each sample of a file that is an Inspect AI log
    of several (a record each, keyed `PATH [SAMPLE]` as a suite names the cases such a
    log becomes); never raises."""
    with collector_paused(case):
        return _score_item(case, item)


def collector_paused(case: CompiledCase) -> AbstractContextManager[None]:
    """The collector paused while traces are scored against `case`, for a batch or a
    trace: a batch's records (a dict per failure) are kept until it is sent back, so each
    young collection would find them alive and move them on, and the full collections
    that follow walk the whole compiled program each time (with thousands of assertions,
    most of a run). Records and verdicts hold no cycles. Not when an assertion asks the
    judge: its calls wait on the network, in threads, and their garbage is theirs."""
    return nullcontext() if case.judged else paused_gc()


def _score_item(case: CompiledCase, item: Item) -> list[TraceRecord]:
    trace_id: str | int | None = None
    try:
        if item.problem is not None:
            return [crashed_record(item.key, None, case, item.problem)]
        if item.line is None:
            try:
                facts = indexed_run(case.needs, item.key)
            except TracePerLine:
                return _line_records(case, item.key)
            except RunError:
                # one reading of several samples cannot be one (the log just read is kept)
                samples = inspect_samples(item.key)
                if samples:
                    return [_sample_record(case, item.key, sample) for sample in samples]
                raise
        else:
            return [_line_record(case, item.key, item.line, item.lineno)]
    except Exception as err:  # an adapter bug must cost one trace, not the run
        return [crashed_record(item.key, trace_id, case, _raised(item.key, err))]
    return [scored(item.key, trace_id, case, facts)]


def _line_record(
    case: CompiledCase, key: str, line: bytes, lineno: int, source: str = STDIN_NAME
) -> TraceRecord:
    """The record of one line that holds a whole trace, of standard input or of the file
    `source`; never raises."""
    trace_id: str | int | None = None
    try:
        value = decode_line(line, lineno, source)
        trace_id = line_id(value)
        facts = line_facts(case, value, lineno, source)
    except Exception as err:  # (as `score_item`)
        return crashed_record(key, trace_id, case, _raised(key, err))
    return scored(key, trace_id, case, facts)


def _line_records(case: CompiledCase, path: str) -> list[TraceRecord]:
    """A record per non-blank line of a JSON-lines file of a trace per line (an
    exporter's), keyed `PATH:LINE` as standard input's lines are `<stdin>:LINE`: the
    file named reads as it reads piped."""
    with open_file(path) as f:
        return [
            _line_record(case, f"{path}:{lineno}", line, lineno, path)
            for lineno, line in enumerate(f, 1)
            if line.strip()
        ]


def _sample_record(case: CompiledCase, path: str, sample: str) -> TraceRecord:
    """The record of one sample of an Inspect AI log; never raises."""
    key = f"{path} [{sample}]"
    try:
        facts = indexed_run(case.needs, load_run(path, sample=sample))
    except Exception as err:  # (as `score_item`)
        return crashed_record(key, None, case, _raised(path, err))
    return scored(key, None, case, facts)


def _raised(key: str, err: Exception) -> str:
    """Why a trace whose reading or checking raised `err` has no verdicts: its `RunError`,
    or anything else as an internal error naming the trace."""
    if isinstance(err, RunError):
        return str(err)
    return f"{key}: internal error: {type(err).__name__}: {err}"


def scored(
    key: str, trace_id: str | int | None, case: CompiledCase, facts: RunFacts
) -> TraceRecord:
    """The record of a trace read and indexed: what `case.check` gives, made in one pass.

    Each verdict is reduced to its status (and a failure's message) as soon as it is made
    and let go: a trace of M assertions no longer holds M verdicts (and their children)
    for the four walks a `Result` takes (statuses, failures, passed, score), so with many
    assertions the collector has little to scan. `passed` and `score` come from the
    statuses (no failure listed; `verdicts.status_score`).
    """
    statuses: list[Status] = []
    failures: list[Failure] = []
    add = statuses.append
    for index, assertion in enumerate(case.assertions):
        verdict = evaluate(assertion, facts)
        status = verdict.status
        add(status)
        if status == "fail" or status == "error":
            # (a literal: calling the TypedDict, a dict of keywords, costs 3x as much)
            failures.append(
                {
                    "index": index,
                    "assertion": assertion.text,
                    "status": status,
                    "message": verdict.message,
                }
            )
    return TraceRecord(
        trace=key,
        id=trace_id,
        passed=not failures,
        skipped=all_skipped(statuses),
        score=status_score(statuses),
        statuses=statuses,
        failures=failures,
        error=None,
    )


def crashed_record(
    key: str, trace_id: str | int | None, case: CompiledCase, message: str
) -> TraceRecord:
    """The record of a trace that could not be read or scored (`evaluate.crashed`'s
    result): every assertion in error, no failures listed, score 0, and why."""
    return TraceRecord(
        trace=key,
        id=trace_id,
        passed=False,
        skipped=False,
        score=0.0,
        statuses=["error"] * len(case.assertions),
        failures=[],
        error=message,
    )


# --- standard input: one trace per line ------------------------------------------------------

_LINE_HINT = (
    "each line holds one trace: a JSON array of events, an object with an `events` (or "
    "`trace`) array, a workflow state, an OTLP JSON trace (`resourceSpans`), or an OpenAI "
    "chat completion or Anthropic message body"
)


def decode_line(line: bytes, lineno: int, source: str = STDIN_NAME) -> Any:
    """The JSON value of one line of standard input (or of the file `source`), or a
    `RunError` at its line and column. The first line may start with a UTF-8 BOM (a
    Windows editor's or PowerShell's), dropped as a trace file's is."""
    try:
        return mended_loads(strip_bom(line) if lineno == 1 else line)
    except orjson.JSONDecodeError as exc:
        # (orjson's words for bytes that are not UTF-8, "str is not valid UTF-8:
        # surrogates not allowed", say neither what is wrong nor where)
        if "UTF-8" in exc.msg and (bad := not_utf8_error(line, source, lineno, "this line")):
            raise bad from None
        raise RunError(
            f"invalid JSON: {exc.msg}", path=source, line=lineno, column=exc.colno
        ) from None


def run_from_line(value: Any, lineno: int, source: str = STDIN_NAME) -> Run:
    """The run one line of standard input holds.

    An object is read as a file holding it would be: its format detected by signature
    (`load_run`'s detection: an event list, a workflow state, an OTLP trace, an OpenAI or
    Anthropic body, an Inspect AI log, …); an array is an event list, as the API's own
    coercion takes it. Anything else is an error, not a run made of nothing (a string is
    not taken as a path here).
    """
    where = f"{source}:{lineno}"
    try:
        if isinstance(value, dict):
            return read_document(value, where)
        if isinstance(value, list):
            run = coerce_run(value)
            if run.kind != "value":
                # named as an object's run is, so that the index's errors name the line
                return attrs.evolve(run, path=where)
    except RunError as err:
        raise on_line(err, lineno, source) from None
    shown = describe(value)
    if not isinstance(value, dict | list):
        # (a string, a number: the line is no trace at all, whatever a file of events
        # would make of it; the message says what a line must be, as records show no hint)
        raise RunError(
            f"this line holds {shown}, not a trace: each line holds one trace, a JSON "
            "object (with an `events` list, a workflow state, an OTLP trace, an OpenAI or "
            "Anthropic body) or an array of events",
            path=source,
            line=lineno,
            hint=_LINE_HINT,
        )
    if isinstance(value, dict):
        keys = ", ".join(list(value)[:6])
        shown += f" with keys {keys}" if keys else " with no keys"
    raise RunError(
        f"cannot tell what kind of trace this line holds ({shown})",
        path=source,
        line=lineno,
        hint=_LINE_HINT,
    )


def line_facts(case: CompiledCase, value: Any, lineno: int, source: str = STDIN_NAME) -> RunFacts:
    """The run one line of standard input (or of the file `source`) holds, indexed for
    `case`; a `RunError` at that line, whether reading or indexing found it."""
    try:
        return indexed_run(case.needs, run_from_line(value, lineno, source))
    except RunError as err:
        raise on_line(err, lineno, source) from None


def on_line(err: RunError, lineno: int, source: str = STDIN_NAME) -> RunError:
    """`err` at line `lineno` of standard input. Readers and the index name a line's value
    by the run it became (`<stdin>:LINE`, or `<value>`), at its line 1, which printed
    after it made `<stdin>:LINE:1:1`: the line of the input says where."""
    if err.path == source:
        return err
    return RunError(err.message, path=source, line=lineno, hint=err.hint, code=err.code)


def line_id(value: Any) -> str | int | None:
    """A trace's own id, when its line is an object that has one."""
    if not isinstance(value, dict):
        return None
    for key in ("trace_id", "traceId", "id"):
        found = value.get(key)
        if isinstance(found, str | int) and not isinstance(found, bool):
            return found
    return None
