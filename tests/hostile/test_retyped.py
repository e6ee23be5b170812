"""Real traces with a value of the wrong JSON type: read as the reference reads them.

Byte-level mangling (`test_properties.py`) mostly makes JSON that does not parse. Here
every real trace of `tests/fixtures/realworld/`, each format's sample of
`tests/data/formats/`, the demo cassette, plain traceplay and verydia event lists and
three cycgraph states stay JSON, in their
own shape, with one to three of their values replaced by a value of another type (a
list for a name, an object for an id, a number for a text, null, ...) or removed, or
with a key readers look for put into an object that lacks it. For each, read with its
format detected and named, a program that reads nearly every subject (of a state, what
a state holds) must give verdicts or the run's error (a `RunError`), never another
exception; and the fast reading (the typed decoders, the generated pass) must give
exactly what the reference reading gives (`EVALDSL_REFERENCE=1`): every verdict,
message, found and expected value, and the same error.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

import evaldsl
from evaldsl.runs.detect import inspect_samples, load_run
from evaldsl.runs.model import RunError
from evaldsl.runs.providers import Items
from evaldsl.runs.summary import summarize
from evaldsl.runs.unreadable import unreadable
from tests.clitools import ROOT
from tests.fuzzing import lenient
from tests.hostile.retyping import CONFUSING, change_once, locations, objects_among, put, value_at

REALWORLD = ROOT / "tests" / "fixtures" / "realworld"
DEMO = ROOT / "tests" / "fixtures" / "traceplay" / "demo" / "cassette.example.jsonl"
#: The formats' own samples (LangSmith, the Agents SDK, OpenLLMetry, ...: their SOURCE.md).
FORMAT_SAMPLES = ROOT / "tests" / "data" / "formats"
ONE_SAMPLE_OF_MANY = {"inspect-two-samples.json"}  # (a case names its sample)
#: Plain event lists, in every container, traceplay's and verydia's.
RUN_SAMPLES = ROOT / "tests" / "data" / "runs"
RUN_SAMPLE_NAMES = [
    "events-lines.jsonl", "events-wrapped.json", "verydia-events.json", "verydia-lines.jsonl",
    "anthropic-responses.json", "openai-response.json", "otel-trace.json",
]  # fmt: skip
STATES = [
    ROOT / "examples" / "research" / "states" / "completed.json",
    ROOT / "examples" / "research" / "states" / "waiting.json",
    ROOT / "tests" / "data" / "runs" / "state-wrapped.json",
]

#: Nearly every subject, over tool names the fixtures use (and one they do not).
PROGRAM = evaldsl.compile(
    "\n".join(
        [
            "tool get_weather called",
            "tool search called at most 3 times",
            "no tool delete_everything",
            "tools contains any [get_weather, search, web_search]",
            'tool get_weather args $.location contains "a"',
            "every tool get_weather args $..unit exists",
            "tool get_weather result not empty",
            "tool search result $[*] exists",
            'answer contains "the"',
            "answer matches /\\d+/",
            "answer[-2] not empty",
            "answer json $.a exists",
            "answer cites tool get_weather",
            "tokens < 1000000",
            "input tokens >= 0",
            "output tokens >= 0",
            "cost < $100",
            "latency < 3600s",
            "steps >= 0",
            "tool calls >= 0",
            "errors == 0",
            "guards == 0",
        ]
    )
).cases[0]

#: What a case reads of a workflow's final state (cycgraph).
STATE_PROGRAM = evaldsl.compile(
    "\n".join(
        [
            'status == "completed"',
            "nodes contains planner",
            "nodes in order [planner, writer]",
            "memory.summary not empty",
            "memory.count == 42",
            "memory.sources is array",
            "state.iteration_count <= 3",
            "tokens within budget",
            "budget > 0",
            "input tokens >= 0",
            "cost <= $1",
        ]
    )
).cases[0]
#: Keys the readers look for, put (with a value of CONFUSING) into objects that lack them.
KEYS = [
    "type", "role", "content", "text", "name", "id", "callId", "tool_call_id", "index",
    "arguments", "input", "output", "result", "usage", "model", "choices", "message",
    "delta", "tool_calls", "function", "attributes", "events", "status", "spans", "parts",
    "startTimeUnixNano", "endTimeUnixNano", "samples", "messages", "stop_reason", "error",
]  # fmt: skip

#: A place in a fixture's decoded documents: the document's index, then the path in it
#: (for an SSE file, `(index, 1, ...)`: its documents are `[kind, payload]` pairs).
Location = tuple[Any, ...]


def _documents(path: Path) -> tuple[str, list[Any]]:
    """A fixture as its JSON values: `json` one document, `lines` one per line (JSONL),
    `sse` the payload of each `data:` line (other lines are kept as text)."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        return "json", [json.loads(text)]
    if path.suffix == ".jsonl":
        return "lines", [json.loads(line) for line in text.splitlines() if line.strip()]
    out: list[Any] = []
    for line in text.splitlines():
        payload = line[len("data:") :].strip() if line.startswith("data:") else None
        try:
            out.append(("data", json.loads(payload)) if payload else ("text", line))
        except json.JSONDecodeError:
            out.append(("text", line))
    return "sse", out


def _render(shape: str, docs: list[Any]) -> str:
    if shape == "json":
        return json.dumps(docs[0])
    if shape == "lines":
        return "\n".join(json.dumps(d) for d in docs) + "\n"
    return "\n".join(f"data: {json.dumps(v)}" if k == "data" else v for k, v in docs) + "\n"


FIXTURES = [
    *sorted(p for p in REALWORLD.rglob("*") if p.suffix in (".json", ".jsonl", ".sse", ".txt")),
    *sorted(
        p
        for p in FORMAT_SAMPLES.iterdir()
        if p.suffix in (".json", ".jsonl", ".sse") and p.name not in ONE_SAMPLE_OF_MANY
    ),
    DEMO,
    *STATES,
    *(RUN_SAMPLES / name for name in RUN_SAMPLE_NAMES),
]
PARSED = {p: _documents(p) for p in FIXTURES}
FORMATS = {p: load_run(p).format for p in FIXTURES}
WHERE: dict[Path, list[Location]] = {}
OBJECTS: dict[Path, list[Location]] = {}  # the places of the objects (the roots too)
for _path, (_shape, _docs) in PARSED.items():
    _roots = [
        (i, 1) if _shape == "sse" else (i,)
        for i, doc in enumerate(_docs)
        if _shape != "sse" or doc[0] == "data"
    ]
    WHERE[_path] = [(*r, *loc) for r in _roots for loc in locations(value_at(_docs, r))]
    OBJECTS[_path] = objects_among(_docs, [*_roots, *WHERE[_path]])


@st.composite
def retyped(draw: st.DrawFn) -> tuple[Path, str]:
    """A fixture, and its text with one to three values retyped or removed."""
    fixture = draw(st.sampled_from(FIXTURES))
    shape, original = PARSED[fixture]
    docs = json.loads(json.dumps(original))  # a deep copy (the tuples of `sse` become lists)
    for _ in range(draw(st.integers(1, 3))):
        change_once(draw, docs, WHERE[fixture], OBJECTS[fixture], KEYS)
    return fixture, _render(shape, docs)


def _outcome(path: Path, fmt: str | None) -> Any:
    """What a case of PROGRAM gives on the file: the run's error, or every verdict."""
    try:
        run = load_run(path, fmt)
    except RunError as err:
        return ("unreadable", str(err))
    result = (STATE_PROGRAM if run.state is not None else PROGRAM).check(run)
    return result.error, [(v.status, v.message, v.actual, v.expected) for v in result.verdicts]


def _reference(path: Path, fmt: str | None) -> Any:
    """What the reference reading gives (`EVALDSL_REFERENCE=1`)."""
    with mock.patch.dict(os.environ, {"EVALDSL_REFERENCE": "1"}):
        return _outcome(path, fmt)


@lenient(1000)
@given(retyped())
def test_a_retyped_real_trace_is_read_as_the_reference_reads_it(
    tmp_path_factory: Any, drawn: tuple[Path, str]
) -> None:
    fixture, text = drawn
    path = tmp_path_factory.mktemp("retyped") / fixture.name
    path.write_text(text, encoding="utf-8")
    for fmt in (None, FORMATS[fixture]):
        fast = _outcome(path, fmt)  # raises (fails the test) on anything but a RunError
        assert fast == _reference(path, fmt), (fixture.name, fmt)
    with contextlib.suppress(RunError):  # `evaldsl inspect`: a summary, or the run's error
        summarize(path)


def test_every_fixture_is_read_and_offers_places_to_retype() -> None:
    """The property's ground: each fixture reads as its format, with values to change."""
    assert len(FIXTURES) >= 38
    for fixture in FIXTURES:
        assert FORMATS[fixture] in (
            *("traceplay", "openai", "anthropic", "otel", "inspect", "langsmith"),
            *("openai_agents", "cycgraph", "events", "verydia"),
        )
        assert len(WHERE[fixture]) >= 5, fixture
        error, verdicts = _outcome(fixture, None)
        program = STATE_PROGRAM if FORMATS[fixture] == "cycgraph" else PROGRAM
        assert error is None and len(verdicts) == len(program.assertions), fixture


# ---- what the property found, pinned ------------------------------------------------------


def _retype(folder: Path, fixture: Path, where: Location, value: Any) -> Path:
    shape, original = PARSED[fixture]
    docs = json.loads(json.dumps(original))
    put(docs, where, value)
    path = folder / fixture.name
    path.write_text(_render(shape, docs), encoding="utf-8")
    return path


ANTHROPIC_STREAM = REALWORLD / "anthropic-stream-tooluse" / "events.jsonl"
OPENAI_STREAM = REALWORLD / "openai-chat-stream" / "chunks.jsonl"
OPENAI_CALLS = REALWORLD / "openai-chat-tools" / "response-toolcalls.json"
OPENAI_REQUEST = REALWORLD / "openai-chat-messages" / "request-with-tool-results.json"
PHOENIX = REALWORLD / "openinference-phoenix-spans" / "spans.jsonl"


def test_a_value_no_reader_tests_is_the_runs_error_at_its_item() -> None:
    """The net under every reader (`unreadable`): a value of a type a reader did not test
    is the run's error at the item that holds it, found by reading heads of the items."""

    def read(items: Items) -> None:
        for value in items:
            {}.get(value["index"])  # (a list is no key: a TypeError, as a reader's lookup)

    values = [{"index": 0}, {"index": 1}, {"index": 2}, {"index": []}, {"index": 4}]
    items = Items("s.jsonl", values, "jsonl", lines=[1, 2, 3, 5, 6])
    with pytest.raises(TypeError) as raised:
        read(items)
    error = unreadable(items, "anthropic", "items are stream events", raised.value, read)
    assert str(error) == (
        "s.jsonl:5:1: line 5 holds a value of a type the anthropic reader does not expect "
        "there (TypeError: unhashable type: 'list')"
    )
    assert "read as anthropic (items are stream events)" in (error.hint or "")
    one = Items("<stdin>:3", [values[3]])  # one item: no head to read, it is named whole
    assert str(unreadable(one, "anthropic", "", raised.value, read)).startswith(
        "<stdin>:3:1:1: the document holds a value"
    )


def test_a_streamed_blocks_index_is_tested_where_it_is_read(tmp_path: Path) -> None:
    """A delta's block `index` that is a list (the reader looked it up in a dict) was the
    net's "line 10 holds a value of a type the anthropic reader does not expect there
    (TypeError: unhashable type: 'list')"; the reader now names the field."""
    path = _retype(tmp_path, ANTHROPIC_STREAM, (9, "index"), [])
    with pytest.raises(RunError) as info:
        load_run(path)
    assert str(info.value) == f"{path}:10:1: line 10's `index` is a list, not a whole number"
    assert "whole-number `index`" in (info.value.hint or "")
    assert _outcome(path, None) == _reference(path, None) == ("unreadable", str(info.value))


ANTHROPIC_MESSAGE = REALWORLD / "anthropic-message-tooluse" / "message.json"
INSPECT_LOG = REALWORLD / "inspect-ai-eval-log" / "log_read_sample.json"
ANTHROPIC_REQUEST = FORMAT_SAMPLES / "anthropic-request.json"
RESPONSES_CALL = REALWORLD / "openai-responses-api" / "response-function-call.json"
RESPONSES_MESSAGE = REALWORLD / "openai-responses-api" / "response-message.json"


@pytest.mark.parametrize(
    ("fixture", "where", "value", "message"),
    [
        # was the net's "the file holds a value of a type the anthropic reader does not
        # expect there (TypeError: unhashable type: 'list')", for each of the first two
        (ANTHROPIC_MESSAGE, ("content", 0, "type"), [], "`content[0].type` is a list, not text"),
        (ANTHROPIC_MESSAGE, ("content", 2, "id"), ["x"], "`content[2].id` is a list, not text"),
        # the rest were read as something they are not: a tool named "{'a': 1}", a block
        # skipped as of type `None`, no token counts, the answer "{'type': 'text'}"
        (ANTHROPIC_MESSAGE, ("content", 2, "name"), {"a": 1}, "`content[2].name` is an object"),
        (ANTHROPIC_MESSAGE, ("content", 1), 5, "`content[1]` is a number, not a content block"),
        (ANTHROPIC_MESSAGE, ("usage",), 5, "`usage` is a number, not an object"),
        (
            ANTHROPIC_REQUEST,
            ("messages", 3, "content"),
            {"type": "text"},
            "`messages[3].content` is an object, not text or a list of content blocks",
        ),
        # OpenAI: the net's "… the openai reader does not expect there (TypeError:
        # unhashable type: 'list')" or "('int' object is not iterable)", each of them
        (
            OPENAI_CALLS,
            ("choices", 0, "message", "tool_calls", 0, "id"),
            ["x"],
            "`choices[0].message.tool_calls[0].id` is a list, not text",
        ),
        (
            OPENAI_CALLS,
            ("choices", 0, "message", "tool_calls"),
            5,
            "`choices[0].message.tool_calls` is a number, not a list",
        ),
        (
            OPENAI_REQUEST,
            ("messages", 2, "tool_calls"),
            True,
            "`messages[2].tool_calls` is a boolean",
        ),
        (RESPONSES_CALL, ("output", 0, "type"), {}, "`output[0].type` is an object, not text"),
        (RESPONSES_MESSAGE, ("output", 0, "content"), 5, "`output[0].content` is a number"),
        # Inspect AI: the net's "('int' object is not iterable)", "('int' object is not
        # subscriptable)" and "(KeyError: 0)"
        (INSPECT_LOG, ("samples", 0, "events"), 5, "`samples[0].events` is a number, not a list"),
        (
            INSPECT_LOG,
            ("samples", 0, "events", 8, "output", "choices"),
            {"a": 5},
            "`samples[0].events[8].output.choices` is an object, not a list",
        ),
    ],
)
def test_a_provider_field_of_the_wrong_type_is_named(
    tmp_path: Path, fixture: Path, where: tuple[Any, ...], value: Any, message: str
) -> None:
    path = _retype(tmp_path, fixture, (0, *where), value)
    with pytest.raises(RunError) as info:
        load_run(path)
    assert str(info.value).startswith(f"{path}:"), info.value
    assert f"the document's {message}" in info.value.message
    assert "does not expect" not in info.value.message
    line = path.read_text(encoding="utf-8").splitlines()[info.value.line - 1]
    assert line[info.value.column - 1 :].startswith(json.dumps(value))  # at the value itself
    assert _outcome(path, None) == _reference(path, None) == ("unreadable", str(info.value))


def test_a_streamed_calls_index_is_tested_where_it_is_read(
    tmp_path: Path,
) -> None:
    """A streamed tool call's `index` of null failed only when the calls were put in
    order at the end of the stream (and only beside a second call), so the line named
    was a later one; the reader now tests the index where it reads it."""
    docs = PARSED[OPENAI_STREAM][1]
    line = next(
        i for i, d in enumerate(docs) if (d["choices"][0]["delta"].get("tool_calls") or [None])[0]
    )
    path = _retype(
        tmp_path, OPENAI_STREAM, (line, "choices", 0, "delta", "tool_calls", 0, "index"), None
    )
    with pytest.raises(RunError) as info:
        load_run(path)
    assert info.value.line == line + 1
    assert str(info.value) == (
        f"{path}:{line + 1}:1: a streamed tool call's `index` is null, not a whole number"
    )


@pytest.mark.parametrize(
    ("where", "value", "message"),
    [
        # the net named the line the stream ended on (17), where the call was made
        (("tool_calls", 0, "id"), ["x"], "`choices[0].delta.tool_calls[0].id` is a list, not text"),
        # the net's "('int' object is not iterable)"
        (("tool_calls",), 5, "`choices[0].delta.tool_calls` is a number, not a list"),
    ],
)
def test_a_streamed_calls_fields_are_tested_where_they_are_read(
    tmp_path: Path, where: tuple[Any, ...], value: Any, message: str
) -> None:
    docs = PARSED[OPENAI_STREAM][1]
    line = next(i for i, d in enumerate(docs) if d["choices"][0]["delta"].get("tool_calls"))
    path = _retype(tmp_path, OPENAI_STREAM, (line, "choices", 0, "delta", *where), value)
    with pytest.raises(RunError) as info:
        load_run(path)
    assert str(info.value) == f"{path}:{line + 1}:1: line {line + 1}'s {message}"
    assert _outcome(path, None) == _reference(path, None)


def test_a_streamed_output_item_is_tested_where_it_is_in_the_file(tmp_path: Path) -> None:
    """An output item's `type` that is a list, in a Responses API stream: the net named
    the terminal event (line 29), where the body the stream ends in was read; the reader
    now tests each item at its `response.output_item.done` event."""
    stream = FORMAT_SAMPLES / "responses-stream.sse"
    docs = PARSED[stream][1]
    done = "response.output_item.done"
    at = next(i for i, (k, d) in enumerate(docs) if k == "data" and d.get("type") == done)
    path = _retype(tmp_path, stream, (at, 1, "item", "type"), ["x"])
    with pytest.raises(RunError) as info:
        load_run(path)
    assert str(info.value) == f"{path}:{at + 1}:1: line {at + 1}'s `item.type` is a list, not text"
    assert _outcome(path, None) == _reference(path, None)


def test_an_inspect_log_whose_samples_are_no_list_has_no_samples(tmp_path: Path) -> None:
    """`samples: true` in an Inspect AI log written on one line: listing its samples (a
    suite's expansion, `evaldsl inspect`) iterated the `true`; it holds no samples, and
    reading it says so, fast and reference alike."""
    path = _retype(tmp_path, INSPECT_LOG, (0, "samples"), True)
    assert len(path.read_text(encoding="utf-8").splitlines()) == 1
    assert inspect_samples(path) == []
    with pytest.raises(RunError, match="has no samples"):
        load_run(path)
    with pytest.raises(RunError, match="has no samples"):
        summarize(path)
    assert _outcome(path, None) == _reference(path, None)


def test_format_detection_takes_a_role_of_any_type(tmp_path: Path) -> None:
    """A message `role` that is a list made OpenAI's request signature raise; it is now
    no role of that set, and the transcript's other messages still say what it is. The
    reader then reads the role, and a message nobody can tell is the assistant's or not
    is the run's error (it may hold the calls `no tool X` is about)."""
    path = _retype(tmp_path, OPENAI_REQUEST, (0, "messages", 0, "role"), ["system"])
    with pytest.raises(RunError, match=r'a message\'s `role` is \["system"\] \(a list\)'):
        load_run(path)
    assert _outcome(path, None) == _reference(path, None)


def test_a_span_that_ends_at_time_zero_is_read(tmp_path: Path) -> None:
    """`end_time: 0` (before its start) made the backwards-span note raise StopIteration
    (a time of 0 is false); now the span is named and `latency` is not measured."""
    path = _retype(tmp_path, PHOENIX, (0, "end_time"), 0)
    run = load_run(path)
    assert any("ends before it starts" in note for note in run.read.notes)
    error, verdicts = _outcome(path, None)
    assert error is None
    latency = next(
        v for a, v in zip(PROGRAM.assertions, verdicts, strict=True) if "latency" in a.text
    )
    assert latency[0] != "pass"


# ---- large files: the typed decoders -------------------------------------------------------

#: Files of 1 MiB or more are read by the typed decoders (only the fields a pass or the
#: OTel reader reads, `decode.py`, `otlpdecode.py`); these are made of a real trace's
#: items repeated past that size (ids repeat too: the linking rules are met).
LARGE_SIZE = (1 << 20) + (64 << 10)
MULTI_TOOL = REALWORLD / "traceplay-multi-tool" / "cassette.multi-tool.jsonl"
LATITUDE = REALWORLD / "otel-latitude-otlp" / "trace.otlp.json"
PHOENIX_OTLP = REALWORLD / "openinference-phoenix-spans" / "spans.otlp.json"


def _large(fixture: Path, headerless: bool = False) -> tuple[str, Any, list[Any]]:
    """(shape, what stays as it is, the items repeated past LARGE_SIZE): `lines` with the
    cassette header (or none), `document` with the document's other keys."""
    shape, docs = PARSED[fixture]
    if shape == "lines":
        head = [] if headerless or "cassette" not in docs[0] else [docs[0]]
        body = docs[len(head) :] if head or "cassette" not in docs[0] else docs[1:]
        unit = sum(len(json.dumps(d)) + 1 for d in body)
        return "lines", head, body * (LARGE_SIZE // unit + 1)
    document = docs[0]
    unit = len(json.dumps(document["resourceSpans"]))
    rest = {k: v for k, v in document.items() if k != "resourceSpans"}
    return "document", rest, document["resourceSpans"] * (LARGE_SIZE // unit + 1)


LARGE = {
    "cassette.jsonl": _large(MULTI_TOOL),
    "events.jsonl": _large(MULTI_TOOL, headerless=True),
    "spans.jsonl": _large(PHOENIX),
    "latitude.otlp.json": _large(LATITUDE),
    "phoenix.otlp.json": _large(PHOENIX_OTLP),
}


@st.composite
def retyped_large(draw: st.DrawFn) -> tuple[str, str]:
    """A large file's name, and its text with one to three values retyped, removed or
    added, anywhere in it."""
    name = draw(st.sampled_from(sorted(LARGE)))
    shape, kept, items = LARGE[name]
    items = list(items)  # (the items changed are copied: the rest stay shared)
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(items) - 1))
        item = items[at] = json.loads(json.dumps(items[at]))
        places = list(locations(item))
        change_once(draw, item, places, objects_among(item, places), KEYS, CONFUSING)
    if shape == "lines":
        return name, "".join(json.dumps(d) + "\n" for d in [*kept, *items])
    return name, json.dumps({**kept, "resourceSpans": items})


@lenient(25)
@given(retyped_large())
def test_a_large_retyped_trace_is_read_as_the_reference_reads_it(
    tmp_path_factory: Any, drawn: tuple[str, str]
) -> None:
    name, text = drawn
    path = tmp_path_factory.mktemp("large") / name
    path.write_text(text, encoding="utf-8")
    assert path.stat().st_size >= 1 << 20  # (the typed decoders' size)
    named = "otel" if "spans" in name or "otlp" in name else None
    for fmt in dict.fromkeys((None, named)):
        assert _outcome(path, fmt) == _reference(path, fmt), (name, fmt)


@pytest.mark.parametrize(
    ("index", "key"), [(7, "gen_ai.request.temperature"), (19, "gen_ai.response.finish_reasons")]
)
def test_a_malformed_array_is_read_alike_fast_and_in_full(
    tmp_path: Path, index: int, key: str
) -> None:
    """Found by the large-file property: an `arrayValue` that is text (an attribute no
    reader read then: `gen_ai.response.finish_reasons`) made the full OTLP reading raise,
    while the typed decoder, which never decoded that attribute, read the file. An
    array or key-value list of another shape is now no value (None), as an AnyValue of
    no known kind is, and both readings give the same verdicts: on an attribute no
    reader reads (the temperature), the file reads; on one read (the finish reasons,
    for the note of a cut answer), both give the same outcome. (The span changed is
    put in a trace of its own: the file repeats the fixture's spans, and a copy that
    differs from the others under one traceId and spanId is an error, `spantree`.)"""
    _, kept, items = LARGE["latitude.otlp.json"]
    item = json.loads(json.dumps(items[0]))
    attribute = ("scopeSpans", 0, "spans", 0, "attributes", index)
    assert value_at(item, (*attribute, "key")) == key
    put(item, (*attribute, "value", "arrayValue"), "tool_use")
    put(item, ("scopeSpans", 0, "spans", 0, "traceId"), "f" * 32)
    path = tmp_path / "latitude.otlp.json"
    path.write_text(json.dumps({**kept, "resourceSpans": [item, *items[1:]]}), encoding="utf-8")
    for fmt in (None, "otel"):
        fast = _outcome(path, fmt)
        assert fast == _reference(path, fmt)
        assert fast[0] is None or index == 19, fast


def test_an_integer_past_64_bits_is_kept_whole_by_every_decoder(tmp_path: Path) -> None:
    """A model named by an integer past 64 bits is that integer read fast and in full
    (`bigints`: orjson alone gave the full reader the nearest double)."""
    _, kept, items = LARGE["cassette.jsonl"]
    request = next(i for i, e in enumerate(items) if e.get("type") == "llm.request")
    changed = list(items)
    changed[request] = {**items[request], "model": 2**70}
    path = tmp_path / "cassette.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in [*kept, *changed]), encoding="utf-8")
    fast, full = _outcome(path, None), _reference(path, None)
    cost = [a.text for a in PROGRAM.assertions].index("cost < $100")
    assert fast[1][cost][1].startswith(
        f"no price known for model {2**70}, so `cost` cannot be computed: name a price table"
    )
    assert full[1][cost][1] == fast[1][cost][1]
    assert [v for i, v in enumerate(fast[1]) if i != cost] == [
        v for i, v in enumerate(full[1]) if i != cost
    ]
