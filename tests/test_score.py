"""`evaldsl score`: traces found, read and scored one by one, in order, in N processes, with
a bounded summary; the command as a subprocess with its formats and exit codes.
(The Dask engine has its own module, `test_score_dask.py`.)"""

from __future__ import annotations

import io
import json
import os
import random
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import cast

import orjson
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import evaldsl
from evaldsl.api import CompiledCase
from evaldsl.compile.evaluate import crashed
from evaldsl.runs import load_run
from evaldsl.runs.model import RunError
from evaldsl.score import ProgramSpec, Summary, items, score_items
from evaldsl.score.engines import Batch, Outcome, batches, checked, in_order
from evaldsl.score.scoring import (
    TraceRecord,
    compiled,
    compiled_program,
    decode_line,
    line_id,
    run_from_line,
    score_batch,
)
from evaldsl.score.sources import Item, missing_paths, walk
from tests.clitools import run_evaldsl
from tests.inspectlogs import write_log
from tests.score_traces import PROGRAM, write_traces
from tests.score_traces import events as score_events

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "runs"
SPEC = ProgramSpec(PROGRAM, "checks.eval")
TWO_CASES = 'case "a"\n  cassette "a.jsonl"\n  steps < 3\ncase "b"\n  cassette "b.jsonl"\n'
SEARCH = b'[{"type": "tool.call", "name": "search"}]'


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("traces")
    write_traces(folder, 600)
    return folder


def serial(folder: Path) -> list[TraceRecord]:
    return list(score_items(SPEC, items([str(folder)])))


# --- finding traces ----------------------------------------------------------------------------


def test_folders_are_walked_for_trace_files_skipping_hidden_ones(tmp_path: Path) -> None:
    names = ["a.json", "b.jsonl", "c.ndjson", "e.sse", "notes.txt", ".hidden.json", "sub/d.json"]
    for name in names:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("[]")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "e.json").write_text("[]")
    found = sorted(Path(i.key).relative_to(tmp_path).as_posix() for i in items([str(tmp_path)]))
    assert found == ["a.json", "b.jsonl", "c.ndjson", "e.sse", "sub/d.json"]


def test_globs_files_and_stdin_in_argument_order(tmp_path: Path) -> None:
    (tmp_path / "x").mkdir()
    for name in ["x/1.json", "x/2.json", "x/skip.txt", "named.txt"]:
        (tmp_path / name).write_text("[]")
    stdin = io.BytesIO(b'[]\n\n  \n{"events": []}\n')
    keys = [
        i.key
        for i in items([str(tmp_path / "named.txt"), "-", str(tmp_path / "**" / "*.json")], stdin)
    ]
    assert keys[:3] == [str(tmp_path / "named.txt"), "<stdin>:1", "<stdin>:4"]
    assert sorted(keys[3:]) == [str(tmp_path / "x" / "1.json"), str(tmp_path / "x" / "2.json")]


def test_a_trace_named_twice_is_scored_once_where_first_named(tmp_path: Path) -> None:
    for name in ["runs/a.json", "runs/sub/b.json", "other/c.json"]:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("[]")
    runs, a, b = (
        tmp_path / "runs",
        tmp_path / "runs" / "a.json",
        tmp_path / "runs" / "sub" / "b.json",
    )
    arguments = [
        str(b),  # a file, then its folder's folder: b is not given again
        str(runs),
        str(runs),  # the same folder twice
        str(tmp_path / "runs" / "sub"),  # a folder inside one walked
        str(tmp_path / "**" / "*.json"),  # a glob over all of them: only c is new
        str(tmp_path / "other" / ".." / "runs" / "a.json"),  # another spelling of a
    ]
    keys = [i.key for i in items(arguments)]
    assert keys == [str(b), str(a), str(tmp_path / "other" / "c.json")]


def test_missing_paths_are_named_but_globs_and_stdin_are_not(tmp_path: Path) -> None:
    assert missing_paths(["-", str(tmp_path), "nope/*.json", "nope.json"]) == ["nope.json"]


def test_a_folder_that_cannot_be_listed_is_an_item_with_its_reason(tmp_path: Path) -> None:
    [item] = list(walk(str(tmp_path / "gone")))
    assert item.problem is not None and "cannot read folder" in item.problem
    [rec] = score_batch(SPEC, [item])
    assert rec["error"] == item.problem and rec["statuses"] == ["error"] * 3


# --- one trace ---------------------------------------------------------------------------------


def line_record(line: bytes, lineno: int = 5) -> TraceRecord:
    return score_batch(SPEC, [Item(f"<stdin>:{lineno}", line, lineno)])[0]


def test_a_file_trace_gets_each_assertion_status_and_the_failures(tmp_path: Path) -> None:
    trace = tmp_path / "t.json"
    calls = [{"type": "tool.call", "name": "execute_shell", "arguments": {}}]
    trace.write_text(json.dumps(calls))
    [rec] = score_batch(SPEC, [Item(str(trace))])
    assert rec["statuses"] == ["fail", "fail", "pass"]
    assert rec["score"] == pytest.approx(1 / 3) and not rec["passed"] and rec["error"] is None
    assert [(f["index"], f["assertion"]) for f in rec["failures"]] == [
        (0, "no tool execute_shell"),
        (1, "tool search called at least 1 time"),
    ]
    assert "execute_shell" in rec["failures"][0]["message"]


def test_an_unreadable_file_is_an_error_record_and_the_batch_goes_on(tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    good.write_text('[{"type": "tool.call", "name": "search"}]')
    bad = tmp_path / "bad.json"
    bad.write_text('[{"type": "tool.call",\n oops]')
    recs = score_batch(
        SPEC, [Item(str(bad)), Item(str(tmp_path / "missing.json")), Item(str(good))]
    )
    assert recs[0]["error"] is not None and recs[0]["error"].startswith(f"{bad}:2:")
    assert recs[0]["statuses"] == ["error"] * 3 and recs[0]["score"] == 0.0
    assert recs[1]["error"] is not None and "file not found" in recs[1]["error"]
    assert recs[2]["passed"] and recs[2]["error"] is None


@pytest.mark.parametrize(
    ("value", "statuses"),
    [
        ([{"type": "tool.call", "name": "search"}], ["pass", "pass", "pass"]),
        ({"events": [{"type": "tool.call", "name": "execute_shell"}]}, ["fail", "fail", "pass"]),
        ({"trace": [], "output": "hi"}, ["pass", "fail", "pass"]),
    ],
)
def test_a_stdin_line_is_coerced_as_the_api_coerces_values(
    value: object, statuses: list[str]
) -> None:
    rec = line_record(orjson.dumps(value))
    assert rec["statuses"] == statuses
    assert rec == score_batch(SPEC, [Item("<stdin>:5", orjson.dumps(value), 5)])[0]
    program = evaldsl.compile(PROGRAM)
    assert program.check(value).statuses == statuses  # the same coercion as the API's


@pytest.mark.parametrize("value", [{"foo": 1}, {}, 5, "a.jsonl", None])
def test_a_value_score_refuses_on_a_line_check_does_not_pass(value: object) -> None:
    rec = line_record(orjson.dumps(value))
    assert rec["error"] is not None and rec["statuses"] == ["error"] * 3
    # (a str is a path for check, and this one does not exist)
    assert evaldsl.compile(PROGRAM).check(value).statuses == ["error"] * 3


@pytest.mark.parametrize(
    ("fixture", "fmt"),
    [("openai-response.json", "openai"), ("otel-trace.json", "otel"), ("state-ok.json", None)],
)
def test_a_stdin_line_may_hold_a_provider_body_an_otlp_trace_or_a_state(
    fixture: str, fmt: str | None
) -> None:
    value = json.loads((DATA / fixture).read_text())
    run = run_from_line(value, 3)
    expected = evaldsl.load_run(DATA / fixture, fmt)
    assert run.format == expected.format
    assert list(run.events or []) == list(expected.events or [])
    assert run.state == expected.state


def test_an_anthropic_message_line_is_one_llm_call() -> None:
    body = json.loads((DATA / "anthropic-responses.json").read_text())[0]
    run = run_from_line(body, 1)
    assert run.format == "anthropic"
    assert [e["type"] for e in run.events or []] == ["llm.request", "llm.response", "tool.call"]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (b'{"events": [1, }', "<stdin>:5:16: invalid JSON"),
        (
            b'"traces/a.json"',
            "<stdin>:5:1: this line holds a string, not a trace: each line holds one trace, "
            "a JSON object",
        ),
        (b'{"name": "x"}', "<stdin>:5:1: nothing in `<stdin>:5` is a recognised trace or state"),
        (b"42", "<stdin>:5:1: this line holds a number, not a trace: each line holds one trace"),
        (b'{"status": "weird"}', "<stdin>:5:1: "),
        # found by the index, after reading: still the input's line, not `<stdin>:5:1:1`
        (
            b'{"events": [{"type": "llm.response", "usage": {"input_tokens": "x"}}]}',
            "<stdin>:5:1: event [0] of the event list: an LLM response's token usage "
            '`input_tokens` is "x", not a number',
        ),
        # an array is named by its line too, never `<value>:1:1`
        (b"[]", "<stdin>:5:1: `<stdin>:5` holds no events"),
        (b"[1]", "<stdin>:5:1: element [0] of the event list is a number, not an event object"),
        # a field of the wrong type is named, not a TypeError's text
        (
            b'{"type": "message", "content": [{"type": ["text"], "text": "hi"}]}',
            "<stdin>:5:1: the document's `content[0].type` is a list, not text",
        ),
    ],
)
def test_a_bad_stdin_line_is_an_error_record_naming_its_line(line: bytes, message: str) -> None:
    rec = line_record(line)
    assert rec["error"] is not None and message in rec["error"], rec["error"]
    assert rec["statuses"] == ["error"] * 3 and not rec["passed"]


def test_a_stdin_object_may_carry_its_own_id() -> None:
    assert line_record(b'{"trace_id": "t-9", "events": []}')["id"] == "t-9"
    assert line_record(b'{"id": 12, "events": []}')["id"] == 12
    assert line_record(b"[]")["id"] is None


def test_a_program_with_several_cases_is_refused() -> None:
    spec = ProgramSpec(TWO_CASES)
    with pytest.raises(ValueError, match="has 2 cases"):
        compiled(spec)


# --- engines: order, processes, exactly once -------------------------------------------------


def test_n_processes_give_the_serial_records_in_the_same_order(traces: Path) -> None:
    expected = serial(traces)
    assert len(expected) == 600
    assert sum(r["error"] is not None for r in expected) > 0  # unreadable ones are there
    assert {r["passed"] for r in expected} == {True, False}
    parallel = list(score_items(SPEC, items([str(traces)]), jobs=2, batch_size=7))
    assert parallel == expected


def worker_pids() -> list[int]:
    """The pool's worker processes: the children of this process's forkserver."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            state, ppid = stat.rsplit(")", 1)[1].split()[:2]
            if state != "Z":  # a worker of an earlier pool, exited and not yet reaped
                children.setdefault(int(ppid), []).append(int(entry))
    return [w for server in children.get(os.getpid(), []) for w in children.get(server, [])]


def test_a_killed_worker_process_loses_and_doubles_nothing(traces: Path) -> None:
    expected = serial(traces)
    got: list[TraceRecord] = []
    killed = None
    for rec in score_items(SPEC, items([str(traces)]), jobs=2, batch_size=5):
        got.append(rec)
        if len(got) == 50:
            pids = worker_pids()
            assert pids
            killed = pids[0]
            os.kill(killed, signal.SIGKILL)
    assert killed is not None
    assert got == expected


class ScrambledEngine:
    """Completes batches late, in reverse, and some twice: what `in_order` must undo."""

    def __init__(self) -> None:
        self.out: list[Batch] = []
        self.most_out = 0
        self.submitted = 0

    def submit(self, batch: Batch) -> None:
        self.out.append(batch)
        self.submitted += 1
        self.most_out = max(self.most_out, len(self.out))

    def completed(self) -> list[tuple[Batch, Outcome]]:
        done = self.out[::-1][:2]
        self.out = [b for b in self.out if b not in done]
        twice = [done[0]] * 2 + done
        return [(b, score_batch(SPEC, b.items)) for b in twice]


def lines(n: int) -> Iterator[Item]:
    for i in range(1, n + 1):
        yield Item(
            f"<stdin>:{i}", b"[]" if i % 3 else b'[{"type": "tool.call", "name": "search"}]', i
        )


def test_in_order_restores_order_drops_doubles_and_bounds_what_is_out() -> None:
    engine = ScrambledEngine()
    got = list(in_order(engine, batches(lines(103), 4), 5, compiled(SPEC)))
    assert [r["trace"] for r in got] == [f"<stdin>:{i}" for i in range(1, 104)]
    assert got == list(score_items(SPEC, lines(103)))
    assert engine.submitted == 26 and engine.most_out <= 5


def test_a_batch_that_comes_back_broken_is_an_error_record_per_trace() -> None:
    case = compiled(SPEC)
    batch = Batch(0, list(lines(3)))
    failed = checked(batch, RuntimeError("worker gone"), case)
    assert [r["trace"] for r in failed] == ["<stdin>:1", "<stdin>:2", "<stdin>:3"]
    assert all("worker gone" in (r["error"] or "") for r in failed)
    other = score_batch(SPEC, list(lines(4))[1:])
    mixed = checked(batch, other, case)
    assert all("results of other traces" in (r["error"] or "") for r in mixed)


LOOKUP = ProgramSpec("tool lookup called once\ntokens < 100\n", "lookup.eval")


@pytest.mark.parametrize("indent", [2, None], ids=["pretty", "one-line"])
def test_an_inspect_log_of_several_samples_is_scored_sample_by_sample(
    tmp_path: Path, indent: int | None
) -> None:
    log = tmp_path / "log.json"
    ids = write_log(log, 5, indent=indent)
    single = tmp_path / "single.json"
    write_log(single, 1)  # one sample: one trace, keyed as the file
    records = score_batch(LOOKUP, [Item(str(log)), Item(str(single))])
    assert [r["trace"] for r in records] == [*(f"{log} [{i}]" for i in ids), str(single)]
    assert [r["passed"] for r in records] == [True, False, True, False, True, True]
    assert all(r["error"] is None for r in records)
    # each as the sample read by itself; the file is not one trace
    case = compiled(LOOKUP)
    assert "name one" in (case.check(str(log)).error or "")
    for sample, rec in zip(ids, records, strict=False):
        assert rec["statuses"] == case.check(load_run(log, sample=sample)).statuses


def test_the_samples_of_a_log_come_back_in_order_from_worker_processes(tmp_path: Path) -> None:
    for k in range(4):
        write_log(tmp_path / f"log{k}.json", 3 + k)
        (tmp_path / f"t{k}.json").write_bytes(SEARCH)
    found = list(items([str(tmp_path)]))
    serial_records = list(score_items(LOOKUP, found))
    assert len(serial_records) == 3 + 4 + 5 + 6 + 4
    parallel = list(score_items(LOOKUP, found, jobs=2, batch_size=1))
    assert parallel == serial_records
    # a batch whose records are not its items' (a sample of another file) is refused
    case = compiled(LOOKUP)
    batch = Batch(0, [Item(str(tmp_path / "log0.json"))])
    other = score_batch(LOOKUP, [Item(str(tmp_path / "log1.json"))])
    assert all("results of other traces" in (r["error"] or "") for r in checked(batch, other, case))


# --- the one-pass record against `case.check`'s `Result` --------------------------------------

#: Statements of every family and status on the generated lines: `answer judged` skips (the
#: judge is off), `output`, `latency` and `status` error on some runs, and so on.
ATOMS = [
    "tool search called at least 1 time",
    "tool search called once",
    "no tool execute_shell",
    "tool fetch never called",
    "tokens <= 4000",
    "steps < 3",
    "errors == 0",
    'answer contains "done"',
    "answer matches /step \\d/",
    "answer json $.x == 1",
    "output == 1",
    "latency < 10s",
    'answer judged "is polite"',
    'tool search args $.q contains "x"',
    "every tool search result $.ok == true",
    "tools in order [search, fetch]",
    'status == "completed"',
    'memory.user == "ana"',
    "answer not empty",
]
ATOM = st.sampled_from(ATOMS)
STATEMENT = st.one_of(
    ATOM,
    ATOM.map(lambda a: f"not ({a})"),
    st.tuples(ATOM, ATOM).map(" and ".join),
    st.tuples(ATOM, ATOM, ATOM).map(" or ".join),
    st.tuples(ATOM, ATOM, ATOM).map(lambda t: f"({t[0]} or {t[1]}) and not {t[2]}"),
)


def test_the_atoms_give_every_status() -> None:
    """(So the differential below meets skips and errors, not passes and failures alone.)"""
    spec = ProgramSpec("tools search, fetch, execute_shell\n" + "\n".join(ATOMS), judge="off")
    lines = [orjson.dumps(score_events(random.Random(n))) for n in range(5)]
    lines.append(b'{"status": "completed", "memory": {"user": "ana"}}')
    records = score_batch(spec, [Item(f"<stdin>:{n}", line, n) for n, line in enumerate(lines)])
    assert {s for r in records for s in r["statuses"]} == {"pass", "fail", "skip", "error"}


@st.composite
def trace_line(draw: st.DrawFn) -> bytes:
    """A standard-input line: events (a list, or an object with an id and an output), a
    workflow state, or a line that is no trace at all (bad JSON, a number, an object of no
    known shape)."""
    kind = draw(st.sampled_from(["list", "object", "state", "bad", "number", "unknown"]))
    events = score_events(random.Random(draw(st.integers(0, 10**6))))
    if kind == "list":
        value: object = events
    elif kind == "object":
        value = {
            "id": draw(st.integers(0, 99)),
            "events": events,
            "output": draw(st.integers(0, 2)),
        }
    elif kind == "state":
        status = draw(st.sampled_from(["completed", "failed"]))
        value = {"status": status, "memory": {"user": draw(st.sampled_from(["ana", "bo"]))}}
    elif kind == "bad":
        return b'[{"type": "tool.call",'
    elif kind == "unknown":  # an error record that keeps the line's id
        value = {"id": f"t-{draw(st.integers(0, 9))}", "what": "no trace"}
    else:
        value = 7
    return orjson.dumps(value)


def reference_record(case: CompiledCase, item: Item) -> TraceRecord:
    """A standard-input line's record as `score` made it before it was made in one pass:
    from `case.check`'s `Result`, each of its walks (statuses, passed, score) and a walk of
    the verdicts for the failures."""
    assert item.line is not None
    trace_id = None
    try:
        value = decode_line(item.line, item.lineno)
        trace_id = line_id(value)
        result = case.check(run_from_line(value, item.lineno))
    except RunError as err:
        result = crashed(case.assertions, str(err))
    failures = [
        {"index": n, "assertion": a.text, "status": v.status, "message": v.message}
        for n, (a, v) in enumerate(zip(case.assertions, result.verdicts, strict=True))
        if result.error is None and v.status in ("fail", "error")
    ]
    return cast(
        TraceRecord,
        {
            "trace": item.key,
            "id": trace_id,
            "passed": result.passed,
            "skipped": result.error is None and set(result.statuses) == {"skip"},
            "score": result.score,
            "statuses": result.statuses,
            "failures": failures,
            "error": result.error,
        },
    )


@settings(max_examples=60, deadline=None)
@example(  # every assertion skipped: nothing counted, a score of 1.0
    statements=['answer judged "is polite"', 'not answer judged "is polite"'],
    lines=[orjson.dumps(score_events(random.Random(0)))],
    samples=1,
)
@given(
    statements=st.lists(STATEMENT, min_size=1, max_size=12),
    lines=st.lists(trace_line(), min_size=1, max_size=8),
    samples=st.integers(0, 2),
)
def test_the_one_pass_record_and_summary_are_the_results(
    statements: list[str], lines: list[bytes], samples: int
) -> None:
    spec = ProgramSpec("tools search, fetch, execute_shell\n" + "\n".join(statements), judge="off")
    case = compiled(spec)
    found = [Item(f"<stdin>:{n}", line, n) for n, line in enumerate(lines, 1)]
    records = score_batch(spec, found)
    reference = [reference_record(case, item) for item in found]
    # byte for byte, as the command writes them (a score's float included)
    assert [orjson.dumps(r) for r in records] == [orjson.dumps(r) for r in reference]
    assert list(score_items(spec, found)) == records  # the serial engine, trace by trace
    summary = Summary.of(compiled_program(spec), samples)
    for rec in records:
        summary.add(rec)
    for n, tally in enumerate(summary.assertions):
        column = [r["statuses"][n] for r in reference]
        assert tally.counts == {s: column.count(s) for s in ("pass", "fail", "skip", "error")}
        first = [
            r["trace"]
            for r, status in zip(reference, column, strict=True)
            if r["error"] is None and status in ("fail", "error")
        ]
        assert [f["trace"] for f in tally.failing] == first[:samples]
    skipped = sum(r["error"] is None and set(r["statuses"]) == {"skip"} for r in reference)
    passed = sum(r["passed"] for r in reference) - skipped  # a skipped trace is not passed
    assert (summary.traces, summary.passed, summary.skipped) == (len(found), passed, skipped)
    assert summary.unreadable == sum(r["error"] is not None for r in reference)


def test_file_records_are_the_results_of_the_files(traces: Path) -> None:
    """The same over the generated trace files (unreadable ones included), read by path."""
    case = compiled(SPEC)
    records = serial(traces)
    assert len(records) == 600 and any(r["error"] for r in records)
    for rec in records:
        result = case.check(rec["trace"])
        assert rec["statuses"] == result.statuses
        assert (rec["passed"], rec["score"], rec["error"]) == (
            result.passed,
            result.score,
            result.error,
        )
        assert [(f["index"], f["status"], f["message"]) for f in rec["failures"]] == [
            (n, v.status, v.message)
            for n, v in enumerate(result.verdicts)
            if result.error is None and v.status in ("fail", "error")
        ]


# --- the summary -------------------------------------------------------------------------------


def test_the_summary_counts_rates_and_keeps_only_a_few_samples(traces: Path) -> None:
    records = serial(traces)
    program = evaldsl.compile(PROGRAM, path="checks.eval")
    summary = Summary.of(program, samples=2)
    for rec in records:
        summary.add(rec)
    data = summary.to_json()
    assert data["traces"] == 600 == data["passed"] + data["failed"] + data["unreadable"]
    assert data["unreadable"] == sum(r["error"] is not None for r in records)
    for n, tally in enumerate(data["assertions"]):
        statuses = [r["statuses"][n] for r in records]
        assert [tally[s] for s in ("pass", "fail", "skip", "error")] == [
            statuses.count(s) for s in ("pass", "fail", "skip", "error")
        ]
        assert tally["pass_rate"] == pytest.approx(tally["pass"] / (600 - tally["skip"]))
        first = [r["trace"] for r in records if r["error"] is None and r["statuses"][n] == "fail"]
        assert [s["trace"] for s in tally["failing"]] == first[:2]
    assert data["assertions"][0]["location"] == "checks.eval:3:1"
    assert len(data["unreadable_samples"]) == 2
    mean = sum(r["score"] for r in records) / 600
    assert data["mean_score"] == pytest.approx(mean)


def test_summaries_of_parts_merge_into_the_summary_of_the_whole(traces: Path) -> None:
    records = serial(traces)
    program = evaldsl.compile(PROGRAM, path="checks.eval")
    whole, first, second = (Summary.of(program) for _ in range(3))
    for n, rec in enumerate(records):
        whole.add(rec)
        (first if n < 250 else second).add(rec)
    merged = first.merge(second).to_json()
    assert merged == {**whole.to_json(), "mean_score": pytest.approx(whole.to_json()["mean_score"])}


# --- the command -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def program_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("program") / "checks.eval"
    path.write_text(PROGRAM)
    return path


def test_jsonl_is_one_line_per_trace_then_the_summary(traces: Path, program_file: Path) -> None:
    result = run_evaldsl("score", str(program_file), str(traces), "--format", "jsonl")
    assert result.returncode == 1, result.stderr  # some traces fail
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert lines[:-1] == serial(traces)
    assert lines[-1]["summary"]["traces"] == 600
    assert "scored 600 traces in" in result.stderr


def test_json_is_one_whole_document(traces: Path, program_file: Path) -> None:
    result = run_evaldsl("score", str(program_file), str(traces), "--format", "json", "-j", "2")
    doc = json.loads(result.stdout)
    assert doc["program"] == str(program_file)
    assert doc["assertions"] == [
        "no tool execute_shell",
        "tool search called at least 1 time",
        "tokens <= 4000",
    ]
    assert doc["traces"] == serial(traces)
    assert doc["summary"]["traces"] == 600


def test_a_trace_named_with_bytes_that_are_not_utf8_is_scored_in_every_format(
    program_file: Path, tmp_path: Path
) -> None:
    # orjson refused the lone surrogate such a name is read as: the run stopped at that
    # trace, "TypeError: str is not valid UTF-8", exit 2
    name = os.fsdecode(b"bad\xff.json")
    (tmp_path / name).write_text('[{"type": "tool.call", "name": "execute_shell"}]')
    for fmt in ("json", "jsonl"):
        result = run_evaldsl("score", str(program_file), name, "--format", fmt, cwd=tmp_path)
        assert result.returncode == 1, result.stderr
        first = result.stdout.splitlines()[0 if fmt == "jsonl" else 2]
        assert first.lstrip().startswith('{"trace":"bad\\udcff.json","id":null,"passed":false')
        json.loads(result.stdout if fmt == "json" else first)  # (orjson reads no lone escape)


def test_text_shows_controls_in_names_and_messages_as_escapes(
    program_file: Path, tmp_path: Path
) -> None:
    # a trace's file name with an escape sequence and a carriage return was written raw
    name = "a\x1b[2J\rb.json"
    (tmp_path / name).write_text('[{"type": "tool.call", "name": "execute_shell\u009b"}]')
    result = run_evaldsl("score", str(program_file), name, cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert "FAIL a\\x1b[2J\\x0db.json  score " in result.stdout
    assert "        fail: a\\x1b[2J\\x0db.json: " in result.stdout
    assert not any(c in result.stdout for c in "\x1b\r\x9b")


def test_text_shows_failing_traces_and_the_summary(program_file: Path, tmp_path: Path) -> None:
    (tmp_path / "ok.json").write_text('[{"type": "tool.call", "name": "search"}]')
    (tmp_path / "shell.json").write_text(
        '[{"type": "tool.call", "name": "search"}, {"type": "tool.call", "name": "execute_shell"}]'
    )
    (tmp_path / "broken.json").write_text("[")
    result = run_evaldsl("score", str(program_file), str(tmp_path))
    assert result.returncode == 1
    out = result.stdout
    assert f"FAIL {tmp_path / 'shell.json'}  score 0.67" in out
    assert '  fail: no tool execute_shell: tool "execute_shell" called 1 time' in out
    assert f"ERROR {tmp_path / 'broken.json'}" in out
    assert "ok.json" not in out  # passing traces are counted, not listed
    assert "3 traces: 1 passed, 1 failed, 1 unreadable; mean score 0.556" in out
    assert " 33.3%  1 pass, 1 fail, 0 skip, 1 error  " in out


def test_stdin_traces_and_an_all_passing_run_exit_0(program_file: Path) -> None:
    body = SEARCH + b'\n{"events": ' + SEARCH + b"}\n"
    result = run_with_stdin(["score", str(program_file), "-", "--format", "jsonl"], body)
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["trace"] for r in lines[:-1]] == ["<stdin>:1", "<stdin>:2"]
    assert lines[-1]["summary"]["passed"] == 2


def test_a_bom_before_the_first_trace_line_is_dropped_as_a_files_is(
    tmp_path: Path, program_file: Path
) -> None:
    """Found by a hunt: a trace file with a UTF-8 BOM was read, but the BOM (PowerShell
    pipes and Windows editors write one) made the first line of standard input, or of a
    file of a trace per line, an "invalid JSON" error record."""
    body = b"\xef\xbb\xbf" + (b'{"events": ' + SEARCH + b"}\n") * 2
    piped = run_with_stdin(["score", str(program_file), "-", "--format", "jsonl"], body)
    (tmp_path / "lines.jsonl").write_bytes(body)
    named = run_evaldsl("score", str(program_file), str(tmp_path / "lines.jsonl"), "-j", "2")
    assert piped.returncode == 0, piped.stdout
    assert [json.loads(line)["error"] for line in piped.stdout.splitlines()[:-1]] == [None] * 2
    assert named.returncode == 0 and "2 traces: 2 passed" in named.stdout, named.stdout


def test_a_bad_stdin_line_is_named_once_by_its_line(program_file: Path) -> None:
    body = SEARCH + b'\n[]\n{"events": [{"type": "llm.response", "usage": {"input_tokens": -1}}]}\n'
    result = run_with_stdin(["score", str(program_file), "-"], body)
    assert result.returncode == 1, result.stderr
    out = result.stdout.decode()
    assert "<stdin>:2:1: `<stdin>:2` holds no events" in out
    assert (
        "<stdin>:3:1: event [0] of the event list: an LLM response's token usage "
        "`input_tokens` is -1" in out
    )
    assert "<value>" not in out and ":1:1:" not in out


def test_a_stdin_line_that_is_not_utf8_is_said_at_its_byte(program_file: Path) -> None:
    """orjson's words for it, `invalid JSON: str is not valid UTF-8: surrogates not
    allowed` at column 1, said neither what is wrong nor where; a file says both."""
    body = SEARCH + b'\n{"events": [{"type": "tool.call", "name": "caf\xe9"}]}\n'
    result = run_with_stdin(["score", str(program_file), "-", "--format", "jsonl"], body)
    assert result.returncode == 1, result.stderr
    second = json.loads(result.stdout.splitlines()[1])
    assert second["error"] == "<stdin>:2:47: this line is not UTF-8 text: byte 0xe9 is not UTF-8"
    assert json.loads(result.stdout.splitlines()[0])["error"] is None


def test_a_file_of_a_trace_per_line_is_scored_as_its_pipe_is(tmp_path: Path) -> None:
    # the shipped exporter's file: named, each line is a trace, keyed PATH:LINE
    exported = ROOT / "examples-production" / "exported.jsonl"
    checks = str(ROOT / "examples-production" / "checks.eval")
    named = run_evaldsl("score", checks, str(exported), "--format", "jsonl")
    piped = run_with_stdin(["score", checks, "-", "--format", "jsonl"], exported.read_bytes())
    records = [json.loads(line) for line in named.stdout.splitlines()]
    assert [r["trace"] for r in records[:-1]] == [f"{exported}:{n}" for n in (1, 2, 3)]
    assert [r["id"] for r in records[:-1]] == ["conv-8812", "conv-8813", "chatcmpl-9Qx2"]
    through_pipe = [json.loads(line) for line in piped.stdout.splitlines()]
    assert [r["statuses"] for r in records[:-1]] == [r["statuses"] for r in through_pipe[:-1]]
    assert named.returncode == piped.returncode == 1
    assert "scored 3 traces in" in named.stderr
    # worker processes give the same records (a batch's records are checked against its
    # items: a file's lines are its own)
    pooled = run_evaldsl("score", checks, str(exported), "-j", "2", "--format", "jsonl")
    assert [json.loads(line) for line in pooled.stdout.splitlines()] == records
    one = run_evaldsl("score", checks, str(ROOT / "examples-production" / "traces"), "-j", "1")
    assert "scored 4 traces in" in one.stderr
    single = next((ROOT / "examples-production" / "traces").glob("*.json"))
    assert "scored 1 trace in" in run_evaldsl("score", checks, str(single)).stderr
    # one bad line costs its trace, named by the file's line
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_bytes(b'{"events": ' + SEARCH + b'}\n\n{"events": [], "id": 2}\n')
    result = run_evaldsl("score", checks, str(mixed), "--format", "jsonl")
    first, third = (json.loads(line) for line in result.stdout.splitlines()[:2])
    assert (first["trace"], first["error"]) == (f"{mixed}:1", None)
    assert third["trace"] == f"{mixed}:3" and f"{mixed}:3:1:" in third["error"]


@pytest.mark.parametrize(
    ("bad", "error"),
    [
        # a last line cut short, as an exporter killed mid-write leaves it
        (b'{"trace_id": "t9", "events": [{"type": "tool.ca', ":4:48: invalid JSON: "),
        # a line that is no object: what a line must be, not "not an event object"
        (b"42", ":4:1: this line holds a number, not a trace: each line holds one trace"),
    ],
)
def test_one_bad_line_of_a_file_of_a_trace_per_line_costs_its_trace_only(
    tmp_path: Path, bad: bytes, error: str
) -> None:
    good = b'{"trace_id": "t1", "events": ' + SEARCH + b"}\n"
    data = good + b"\n" + good + bad + b"\n" + good
    path = tmp_path / "exported.jsonl"
    path.write_bytes(data)
    checks = str(ROOT / "examples-production" / "checks.eval")
    piped = run_with_stdin(["score", checks, "-", "--format", "jsonl"], data)
    through_pipe = [json.loads(line) for line in piped.stdout.splitlines()]
    for jobs in ("1", "2"):
        named = run_evaldsl("score", checks, str(path), "-j", jobs, "--format", "jsonl")
        records = [json.loads(line) for line in named.stdout.splitlines()]
        assert [r["trace"] for r in records[:-1]] == [f"{path}:{n}" for n in (1, 3, 4, 5)]
        assert [r.get("statuses") for r in records] == [r.get("statuses") for r in through_pipe]
        counts = ("traces", "passed", "failed", "unreadable", "mean_score")
        summary, piped_summary = records[-1]["summary"], through_pipe[-1]["summary"]
        assert [summary[k] for k in counts] == [piped_summary[k] for k in counts]
        assert (summary["traces"], summary["unreadable"]) == (4, 1)
        assert records[2]["error"].startswith(f"{path}{error}"), records[2]["error"]
        assert through_pipe[2]["error"].startswith(f"<stdin>{error}")
        assert named.returncode == piped.returncode == 1


def run_with_stdin(args: list[str], data: bytes) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "evaldsl.tools.cli", *args],
        input=data,
        capture_output=True,
        cwd=ROOT,
        env=env,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nope.json"], "no such file or folder: nope.json"),
        (["-j", "0", "."], "-j/--jobs: takes a number of processes ≥ 1, or auto"),
        (["-j", "two", "."], "-j/--jobs: takes a number of processes ≥ 1, or auto"),
        (["-j", "2", "--dask", "local", "."], "-j and --dask do not go together"),
        (["-", "-"], "standard input (-) can be read once"),
        (["--dask", "local:0", "."], "--dask local:N takes a number of workers"),
        (["--batch-size", "0", "."], "--batch-size: takes a number of traces per task ≥ 1, not 0"),
        (["--batch-size", "ten", "."], "--batch-size: takes a number of traces per task ≥ 1"),
        (["--samples", "abc", "."], "--samples: takes how many failing traces to show"),
        (["--samples", "-1", "."], "a whole number ≥ 0, not -1"),
    ],
)
def test_bad_usage_exits_2(program_file: Path, args: list[str], message: str) -> None:
    result = run_evaldsl("score", str(program_file), *args)
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert result.stdout == ""


def test_no_traces_found_exits_2(program_file: Path, tmp_path: Path) -> None:
    result = run_evaldsl("score", str(program_file), str(tmp_path))
    assert result.returncode == 2 and "no traces found in" in result.stderr


def test_a_program_with_errors_exits_2_with_its_diagnostics(tmp_path: Path) -> None:
    bad = tmp_path / "bad.eval"
    bad.write_text("tool x caled once\n")
    result = run_evaldsl("score", str(bad), str(tmp_path))
    assert result.returncode == 2
    assert f"{bad}:1:8: error[E101]" in result.stderr


@pytest.mark.parametrize(
    ("raw", "where", "message"),
    [
        (b"no tool x\ntool caf\xe9 called\n", "2:9", "the program is not UTF-8 text: byte 0xe9"),
        (b"no tool x\rtokens <= 5\r", "1:10", "a line ends with a lone carriage return"),
    ],
)
def test_a_program_that_is_no_text_is_said_at_its_place(
    tmp_path: Path, raw: bytes, where: str, message: str
) -> None:
    """Once `checks.eval is not UTF-8 text` with no place, and a lone CR an E101 at a
    word its line ran into: said as `run` says it of a suite file."""
    program = tmp_path / "checks.eval"
    program.write_bytes(raw)
    result = run_evaldsl("score", str(program), str(tmp_path))
    assert result.returncode == 2 and result.stdout == ""
    assert f"{program}:{where}: error[E504]: {message}" in result.stderr, result.stderr


def test_a_program_with_cases_exits_2(tmp_path: Path) -> None:
    cases = tmp_path / "cases.eval"
    cases.write_text(TWO_CASES)
    result = run_evaldsl("score", str(cases), str(tmp_path))
    assert result.returncode == 2 and "without `case` lines" in result.stderr


def test_a_cases_own_recording_is_said_not_read(tmp_path: Path) -> None:
    # (a suite's case given as the program was applied to the traces named in silence,
    # its own cassette never looked at)
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "a.jsonl").write_text(
        '{"type": "tool.call", "name": "search", "callId": "c1", "arguments": {}}\n'
    )
    one = tmp_path / "one.eval"
    one.write_text('case "c"\n  cassette "elsewhere.jsonl"\n  tool search called once\n')
    result = run_evaldsl("score", str(one), str(tmp_path / "t"))
    assert result.returncode == 0, result.stderr
    assert (
        f'note: {one}:2:3: `cassette "elsewhere.jsonl"` is not read: score applies the program '
        "to the traces named\n"
    ) in result.stderr
    plain = tmp_path / "plain.eval"
    plain.write_text("tool search called once\n")
    alone = run_evaldsl("score", str(plain), str(tmp_path / "t"))
    assert alone.returncode == 0 and "note:" not in alone.stderr


@pytest.mark.parametrize(
    "text", ["# nothing\ntools search\n", 'case "c"\n  cassette "x.json"\n'], ids=["header", "case"]
)
def test_a_program_without_assertions_exits_2_naming_it(
    tmp_path: Path, traces: Path, text: str
) -> None:
    # (every trace would pass: nothing would have been checked)
    empty = tmp_path / "noassert.eval"
    empty.write_text(text)
    result = run_evaldsl("score", str(empty), str(traces))
    assert result.returncode == 2 and result.stdout == ""
    assert f"{empty}: this program has no assertions, so every trace would pass" in (result.stderr)


def test_dask_missing_says_how_to_install(program_file: Path, traces: Path) -> None:
    # The command as a user without the extra has it: dask and distributed not importable.
    code = (
        "import sys; sys.modules['dask'] = None; sys.modules['distributed'] = None\n"
        "from evaldsl.tools.cli import main\n"
        f"sys.exit(main(['score', {str(program_file)!r}, {str(traces)!r}, '--dask', 'local']))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert result.returncode == 2
    assert "pip install 'evaldsl[dask]'" in result.stderr


@pytest.mark.parametrize(
    ("mode", "why"),
    [
        ([], "no EVALDSL_JUDGE_API_KEY, and no cached verdict): set EVALDSL_JUDGE_API_KEY"),
        (["--judge", "off"], "skipped on purpose (--judge off)"),
    ],
)
def test_a_trace_whose_judge_never_ran_is_skipped_not_passed(
    tmp_path: Path, mode: list[str], why: str
) -> None:
    program = tmp_path / "judged.eval"
    program.write_text('answer judged "says the weather" >= 0.5\ntokens <= 4000\n')
    judged_only = tmp_path / "only.eval"
    judged_only.write_text('answer judged "says the weather" >= 0.5\n')
    folder = tmp_path / "traces"
    folder.mkdir()
    for name in ("a.json", "b.json"):
        (folder / name).write_bytes(SEARCH)
    cache = ["--judge-cache", str(tmp_path / "cache"), *mode]
    result = run_evaldsl("score", str(judged_only), str(folder), "--format", "jsonl", *cache)
    assert result.returncode == 0, result.stderr  # nothing failed
    *records, last = (json.loads(line) for line in result.stdout.splitlines())
    assert [(r["passed"], r["skipped"], r["statuses"]) for r in records] == [
        (True, True, ["skip"])
    ] * 2
    summary = last["summary"]
    assert (summary["passed"], summary["failed"], summary["skipped"]) == (0, 0, 2)
    assert result.stderr.count("note: judge assertions were skipped") == 1
    assert why in result.stderr
    text = run_evaldsl("score", str(judged_only), str(folder), *cache)
    assert "2 traces: 0 passed, 0 failed, 2 skipped, 0 unreadable" in text.stdout
    # a trace that something else tested is passed, and the note still says why
    mixed = run_evaldsl("score", str(program), str(folder), "--format", "jsonl", *cache)
    *records, last = (json.loads(line) for line in mixed.stdout.splitlines())
    assert [(r["passed"], r["skipped"]) for r in records] == [(True, False)] * 2
    assert (last["summary"]["passed"], last["summary"]["skipped"]) == (2, 0)
    assert why in mixed.stderr


def test_a_file_that_is_not_utf8_text_is_named_at_its_byte(tmp_path: Path) -> None:
    binary = tmp_path / "binary.json"
    binary.write_bytes(b"\xff\xfe\x00abc")
    second = tmp_path / "events.jsonl"  # a JSONL recording whose second line is not text
    second.write_bytes(b'{"type": "tool.call", "name": "search"}\n{"x": "caf\xe9"}\n')
    result = run_evaldsl("score", str(ROOT / "examples-production" / "checks.eval"), str(tmp_path))
    assert result.returncode == 1
    assert f"{binary}:1:1: this file is not UTF-8 text: byte 0xff is not UTF-8" in result.stdout
    assert f"{second}:2:11: this file is not UTF-8 text: byte 0xe9 is not UTF-8" in result.stdout
    assert "surrogates" not in result.stdout and "str is not" not in result.stdout
