"""Tests for evaldsl.runs: every input adapter, its errors, answer text and usage.

The traceplay cassettes under tests/fixtures/traceplay/ are byte-for-byte copies of the
shared fixtures (see their README.md); the small files under tests/data/runs/ are ours.
"""

from __future__ import annotations

import doctest
import filecmp
import json
import pickle
from pathlib import Path
from typing import Any

import attrs
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaldsl.language.jsjson import js_json
from evaldsl.runs import (
    MISSING,
    EventStream,
    Run,
    RunError,
    answer_text,
    cassette,
    coerce_run,
    detect,
    events,
    initial_state,
    load_cassette,
    load_run,
    load_state,
    model,
    otel,
    providers,
    read_header,
    run_from_value,
    scan_tool_names,
    state,
    text,
    tool_call_arguments,
    tool_call_name,
    usage_tokens,
    validate_state,
)
from evaldsl.runs.index import Needs, index_events, index_run
from tests.clitools import run_evaldsl

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "traceplay"
SHARED = Path(__file__).resolve().parents[2] / "shared" / "fixtures" / "traceplay"
DATA = ROOT / "tests" / "data" / "runs"
DEMO = FIXTURES / "demo" / "cassette.example.jsonl"


def events_of(run: Run) -> list[dict[str, Any]]:
    assert run.events is not None
    return list(run.events)


def responses(run: Run) -> list[dict[str, Any]]:
    return [e for e in events_of(run) if e.get("type") in ("llm.response", "llm.invoke")]


def final_answer(run: Run) -> str:
    return answer_text(responses(run)[-1].get("output"))


def total_tokens(run: Run) -> int:
    return sum(sum(usage_tokens(e)) for e in responses(run))


def write(tmp_path: Path, name: str, content: bytes | str) -> Path:
    p = tmp_path / name
    p.write_bytes(content.encode() if isinstance(content, str) else content)
    return p


# --- the real traceplay cassettes ------------------------------------------------------------

FIXTURE_TABLE = [
    # folder, file, events, final answer, tokens, tool names
    ("demo", "cassette.example.jsonl", 5, "Xiamen is sunny, 31C.", 144, {"get_weather"}),
    (
        "anthropic",
        "cassette.anthropic.jsonl",
        3,
        "Quantum entanglement is a phenomenon where two particles become correlated such that "
        "measuring one instantly determines the state of the other, regardless of the distance "
        "between them.",
        77,
        set(),
    ),
    (
        "multi-tool",
        "cassette.multi-tool.jsonl",
        7,
        "Xiamen is sunny, 31C with 65% humidity. BTC is currently at $67,234.50, up 2.3% in the "
        "last 24 hours.",
        252,
        {"get_weather", "get_crypto_price"},
    ),
    # event-level camelCase usage wins over the snake_case copy inside `output`: 600, not 1200
    (
        "multistep",
        "cassette.multistep.jsonl",
        8,
        "Final answer: shipped and documented.",
        600,
        {"search"},
    ),
    # the streamed record gives its plain text, real newlines included (docs/language.md §6)
    (
        "streaming",
        "cassette.streaming.jsonl",
        3,
        "Silent keystrokes fall,\nLogic blooms in midnight light,\nShip before the dawn.",
        48,
        set(),
    ),
    # a string output is the answer as it is: the JSON text itself
    (
        "structured",
        "cassette.structured.jsonl",
        4,
        '{"ticket":"TC-4821","priority":"high","assignee":"mina",'
        '"nextStep":"route TC-4821 to mina within 4 hours"}',
        178,
        {"get_ticket"},
    ),
]


@pytest.mark.parametrize(
    ("folder", "name", "count", "answer", "tokens", "tools"),
    FIXTURE_TABLE,
    ids=[row[0] for row in FIXTURE_TABLE],
)
def test_fixture_cassettes_load(
    folder: str, name: str, count: int, answer: str, tokens: int, tools: set[str]
) -> None:
    path = FIXTURES / folder / name
    run = load_run(path)
    assert (run.kind, run.format, run.path) == ("trace", "traceplay", str(path))
    assert isinstance(run.events, EventStream)
    assert len(events_of(run)) == count
    assert len(events_of(run)) == count  # a second pass reads the file again
    assert final_answer(run) == answer
    assert total_tokens(run) == tokens
    assert scan_tool_names(path) == tools
    assert load_cassette(path).format == "traceplay"
    assert read_header(path)["cassette"] == "traceplay"


def test_fixture_copies_match_shared() -> None:
    assert "MIT License" in (FIXTURES / "README.md").read_text(encoding="utf-8")
    if SHARED.is_dir():  # beside the project's shared folder: the copies are byte for byte
        compare = filecmp.dircmp(SHARED, FIXTURES)
        assert not compare.left_only and not compare.right_only
        for folder in compare.common_dirs:
            for f in (SHARED / folder).iterdir():
                assert f.read_bytes() == (FIXTURES / folder / f.name).read_bytes(), f


def test_multistep_answers_per_step() -> None:
    run = load_run(FIXTURES / "multistep" / "cassette.multistep.jsonl")
    texts = [answer_text(e["output"]) for e in responses(run)]
    assert texts == [
        "Draft 1: outline the plan.",
        "Draft 2: fill in the details.",
        "Final answer: shipped and documented.",
    ]


def test_header_is_exposed() -> None:
    header = read_header(DEMO)
    assert header == {
        "cassette": "traceplay",
        "version": 1,
        "recordedAt": "2026-09-01T00:00:00.000Z",
        "redacted": True,
        "providerBaseUrl": "https://api.openai.com/v1",
        "project": "demo",
    }
    stream = load_cassette(DEMO).events
    assert isinstance(stream, EventStream) and stream.header == header


# --- cassette robustness ---------------------------------------------------------------------


def demo_lines() -> list[bytes]:
    return DEMO.read_bytes().splitlines()


def test_bom_crlf_and_blank_lines(tmp_path: Path) -> None:
    lines = demo_lines()
    messy = b"\xef\xbb\xbf" + b"\r\n".join([lines[0], b"", *lines[1:3], b"   \t", *lines[3:]])
    path = write(tmp_path, "messy.jsonl", messy + b"\r\n\r\n")
    run = load_run(path)
    assert events_of(run) == events_of(load_run(DEMO))
    assert read_header(path)["project"] == "demo"


def test_leading_blank_lines_before_header(tmp_path: Path) -> None:
    path = write(tmp_path, "lead.jsonl", b"\n\n" + DEMO.read_bytes())
    assert len(events_of(load_cassette(path))) == 5


def test_corrupted_line_reports_physical_line(tmp_path: Path) -> None:
    lines = demo_lines()
    lines[2] = b'{"id":"e2","seq":1, oops}'
    path = write(tmp_path, "bad.jsonl", b"\n".join(lines))
    run = load_cassette(path)  # the header is fine, so loading succeeds: events stream later
    with pytest.raises(RunError) as info:
        events_of(run)
    err = info.value
    assert (err.line, err.column) == (3, 21)
    assert err.message.startswith("invalid JSON on line 3: ")
    assert str(path) in str(err) and "line 3" in str(err)
    assert err.source_line == '{"id":"e2","seq":1, oops}'
    assert err.hint == "each line must be one JSON object (after a cassette's header line, if any)"
    diag = err.to_diagnostic()
    assert (diag.code, diag.line, diag.column, diag.path) == ("E502", 3, 21, str(path))


def test_line_numbers_count_blank_lines(tmp_path: Path) -> None:
    lines = demo_lines()
    path = write(tmp_path, "bad.jsonl", b"\n".join([*lines[:2], b"", b"", b"nope", *lines[2:]]))
    with pytest.raises(RunError) as info:
        events_of(load_run(path))
    assert info.value.line == 5


def test_event_line_that_is_not_an_object(tmp_path: Path) -> None:
    path = write(tmp_path, "arr.jsonl", b"\n".join([demo_lines()[0], b"[1, 2]"]))
    with pytest.raises(RunError, match=r"line 2 is a list, not an event object") as info:
        events_of(load_run(path))
    assert info.value.line == 2


HEADER_TABLE = [
    ('{"version":1}', 'not a traceplay cassette (line 1 has no "cassette": "traceplay" marker)'),
    ('{"cassette":"agent-vcr","version":1}', "not a traceplay cassette (line 1 has no"),
    ("[1,2]", "not a traceplay cassette"),
    ('{"cassette":"traceplay"}', 'cassette header has no "version"'),
    ('{"cassette":"traceplay","version":"1"}', 'cassette header has a non-numeric ("1") "version"'),
    ('{"cassette":"traceplay","version":true}', "non-numeric (true)"),
    (
        '{"cassette":"traceplay","version":2}',
        "unsupported cassette version 2 (only version 1 is supported)",
    ),
    ('{"cassette":"traceplay","version":1.5}', "unsupported cassette version 1.5"),
    ('{"cassette":"traceplay", version: 1}', "invalid cassette header on line 1: "),
]


@pytest.mark.parametrize(("header", "message"), HEADER_TABLE)
def test_bad_headers_fail_at_load_time(tmp_path: Path, header: str, message: str) -> None:
    path = write(tmp_path, "h.jsonl", header + "\n" + demo_lines()[1].decode())
    for load in (load_cassette, read_header, lambda p: load_run(p, "traceplay")):
        with pytest.raises(RunError) as info:
            load(path)
        assert message in info.value.message
        assert info.value.line == 1 and info.value.path == str(path)


@pytest.mark.parametrize(
    ("first", "outcome"),
    [
        ('{"cassette":"agent-vcr","version":1}', "not a traceplay cassette"),
        ('{"cassette":"traceplay","version":2}', "unsupported cassette version 2"),
        ("[1,2]", "line 1 is a list, not an event object"),
        ('{"type": oops}', "invalid JSON on line 1: "),
        ('{"version":1}', 2),  # no "cassette" key: a headerless event file
    ],
)
def test_detection_of_jsonl_first_lines(tmp_path: Path, first: str, outcome: str | int) -> None:
    path = write(tmp_path, "x.jsonl", first + "\n" + demo_lines()[1].decode())
    if isinstance(outcome, int):
        run = load_run(path)
        assert run.format == "events" and len(events_of(run)) == outcome
        return
    with pytest.raises(RunError) as info:
        load_run(path)  # fails at load time, not when the events are first read
    assert outcome in info.value.message and info.value.line == 1


def test_header_errors_point_at_the_field(tmp_path: Path) -> None:
    path = write(tmp_path, "h.jsonl", '{"cassette":"traceplay","version":3}\n')
    with pytest.raises(RunError) as info:
        load_cassette(path)
    assert info.value.column == len('{"cassette":"traceplay",') + 1
    with pytest.raises(RunError) as info:
        load_cassette(write(tmp_path, "v.jsonl", '{"cassette":"agent-vcr","version":1}\n'))
    assert info.value.hint is not None and '"agent-vcr"' in info.value.hint


def test_version_one_as_float_is_accepted(tmp_path: Path) -> None:
    path = write(tmp_path, "f.jsonl", '{"cassette":"traceplay","version":1.0}\n{"type":"x"}\n')
    assert events_of(load_cassette(path)) == [{"type": "x"}]


@pytest.mark.parametrize("content", [b"", b"\n\n  \r\n", b"\xef\xbb\xbf"])
def test_empty_cassette(tmp_path: Path, content: bytes) -> None:
    path = write(tmp_path, "empty.jsonl", content)
    for load in (load_cassette, load_run):
        with pytest.raises(RunError, match="empty cassette") as info:
            load(path)
        assert info.value.to_diagnostic().code == "E502"
    # (detected: naming a format cannot help a file that recorded nothing)
    assert "record the run again" in (info.value.hint or "")
    assert "as FORMAT" not in (info.value.hint or "")


def test_header_only_cassette_has_no_events(tmp_path: Path) -> None:
    path = write(tmp_path, "h.jsonl", demo_lines()[0])
    assert events_of(load_run(path)) == []


def test_stream_reads_the_file_on_each_pass(tmp_path: Path) -> None:
    path = write(tmp_path, "c.jsonl", b"\n".join(demo_lines()[:2]))
    run = load_cassette(path)
    assert len(events_of(run)) == 1
    path.write_bytes(DEMO.read_bytes())
    assert len(events_of(run)) == 5  # nothing was cached in memory
    assert iter(run.events or []) is not iter(run.events or [])


# --- missing and unreadable files ------------------------------------------------------------


@pytest.mark.parametrize(
    "load",
    [
        load_run,
        load_cassette,
        load_state,
        read_header,
        scan_tool_names,
        events.load_events,
        lambda p: load_run(p, "otel"),
        lambda p: load_run(p, "openai"),
    ],
)
def test_missing_file_is_e501(tmp_path: Path, load: Any) -> None:
    with pytest.raises(RunError) as info:
        load(tmp_path / "nope.jsonl")
    err = info.value
    assert err.code == "E501" and err.to_diagnostic().code == "E501"
    assert "file not found" in err.message and "nope.jsonl" in err.message
    assert err.hint is not None


def test_folder_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(RunError, match="is a folder, not a run file") as info:
        load_run(tmp_path)
    assert info.value.code == "E502"


def test_missing_file_via_coerce_uses_base(tmp_path: Path) -> None:
    with pytest.raises(RunError) as info:
        coerce_run("cassettes/typo.jsonl", base=tmp_path)
    assert info.value.path == str(tmp_path / "cassettes" / "typo.jsonl")
    assert info.value.code == "E501"
    assert coerce_run("demo/cassette.example.jsonl", base=FIXTURES).format == "traceplay"


def test_run_error_pickles() -> None:
    err = RunError("bad", path="x.json", line=4, column=2, hint="h", code="E501")
    back = pickle.loads(pickle.dumps(err))
    assert (back.message, back.path, back.line, back.column, back.hint, back.code) == (
        "bad",
        "x.json",
        4,
        2,
        "h",
        "E501",
    )
    assert str(back) == "x.json:4:2: bad"


# --- JSON event lists and verydia ------------------------------------------------------------


def test_verydia_event_list() -> None:
    path = DATA / "verydia-events.json"
    run = load_run(path)
    assert (run.kind, run.format) == ("trace", "verydia")
    evs = events_of(run)
    assert len(evs) == 5
    assert [tool_call_name(e) for e in evs] == [None, None, "lookup_patient", "schedule", None]
    assert tool_call_arguments(evs[2]) == {"id": 12}
    assert events.inline_result(evs[3]) == "booked"
    assert scan_tool_names(path) == {"lookup_patient", "schedule"}
    assert [usage_tokens(e) for e in responses(run)] == [(50, 10), (80, 12)]
    assert final_answer(run) == "Ada is booked for 09:00."


def test_wrapped_event_list_keeps_output() -> None:
    run = load_run(DATA / "events-wrapped.json")
    assert (run.format, run.output) == ("events", {"summary": "done", "hits": 3})
    assert len(events_of(run)) == 4 and total_tokens(run) == 10
    assert scan_tool_names(DATA / "events-wrapped.json") == {"search"}


def test_trace_key_is_accepted(tmp_path: Path) -> None:
    path = write(tmp_path, "t.json", '{"trace": [{"type": "mcp.call", "name": "a"}]}')
    run = load_run(path)
    assert run.format == "verydia" and run.output is MISSING


def test_headerless_jsonl_events() -> None:
    run = load_run(DATA / "events-lines.jsonl")
    assert (run.format, len(events_of(run))) == ("events", 3)
    assert isinstance(run.events, EventStream) and run.events.header is None
    verydia = load_run(DATA / "verydia-lines.jsonl")
    assert verydia.format == "verydia"
    assert scan_tool_names(DATA / "verydia-lines.jsonl") == {"fetch"}


def test_json_lines_in_a_json_file(tmp_path: Path) -> None:
    path = write(tmp_path, "x.json", '{"type":"tool.call","name":"a"}\n{"type":"llm.response"}\n')
    assert len(events_of(load_run(path))) == 2


def test_element_that_is_not_an_event() -> None:
    with pytest.raises(RunError) as info:
        load_run(DATA / "events-bad-element.json")
    err = info.value
    assert err.message == "element [1] of the event list is a string, not an event object"
    assert (err.line, err.column) == (4, 5)


def test_invalid_json_file_position(tmp_path: Path) -> None:
    path = write(tmp_path, "x.json", '[\n  {"type": "a"},\n  {"type": }\n]')
    with pytest.raises(RunError) as info:
        load_run(path)
    assert (info.value.line, info.value.column) == (3, 12)
    assert info.value.message.startswith("invalid JSON on line 3")
    assert info.value.source_line == '  {"type": }'


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"foo": 1}', "nothing in `x.json` is a recognised trace or state"),
        ('"text"', "`x.json` holds a string, not a trace or a state"),
        ('{"events": {"a": 1}}', '"events" is an object, not a list of events'),
        ("  \n", "empty file"),
    ],
)
def test_unrecognised_json(tmp_path: Path, content: str, message: str) -> None:
    with pytest.raises(RunError) as info:
        load_run(write(tmp_path, "x.json", content))
    assert message in info.value.message


def test_explicit_format_names(tmp_path: Path) -> None:
    assert load_run(DATA / "events-wrapped.json", "verydia").format == "verydia"
    assert load_run(DATA / "state-ok.json", "state").format == "cycgraph"
    assert load_run(DEMO, "cassette").format == "traceplay"
    with pytest.raises(RunError) as info:
        load_run(DEMO, "otle")
    assert info.value.message == 'unknown run format "otle"'
    assert info.value.hint is not None and 'did you mean "otel"' in info.value.hint
    with pytest.raises(RunError, match="not a traceplay cassette"):
        load_run(DATA / "verydia-lines.jsonl", "traceplay")


# --- states ----------------------------------------------------------------------------------


def test_state_file() -> None:
    run = load_run(DATA / "state-ok.json")
    assert (run.kind, run.format, run.events, run.output) == ("state", "cycgraph", None, MISSING)
    assert run.state is not None and run.state["visited_nodes"][1] == "researcher"
    assert load_state(DATA / "state-ok.json") == attrs.evolve(run, read=None)
    assert run.read is not None and run.read.format == "state"


def test_wrapped_state_keeps_output() -> None:
    run = load_run(DATA / "state-wrapped.json")
    assert run.state == {"status": "failed", "memory": {}, "visited_nodes": ["start"]}
    assert run.output == {"error": "budget"}


def test_wrong_state_fields_with_positions() -> None:
    path = DATA / "state-bad-types.json"
    text_ = path.read_text(encoding="utf-8")
    import json

    errors = validate_state(json.loads(text_), str(path), text=text_)
    got = [(e.line, e.column, e.message) for e in errors]
    assert got == [
        (3, 3, 'unknown status "complete"'),  # not line 2: that "status" is a memory key
        (4, 30, "visited_nodes[1] must be a node name (text), found a number"),
        (5, 3, '"total_tokens_used" must be a number, found a string ("500")'),
        (6, 3, '"total_input_tokens" must be a number, found a boolean (true)'),
    ]
    assert errors[0].hint is not None and 'did you mean "completed"?' in errors[0].hint
    assert errors[2].hint == "write the number without quotes: 500"
    with pytest.raises(RunError) as info:
        load_state(path)
    assert (info.value.line, info.value.column) == (3, 3)
    assert info.value.source_line == '  "status": "complete",'


@pytest.mark.parametrize(
    ("state_", "message"),
    [
        ({"status": 1}, '"status" must be text, found a number'),
        ({"memory": []}, '"memory" must be an object, found a list'),
        ({"visited_nodes": "a,b"}, '"visited_nodes" must be a list of node names'),
        ({"memory": {}, "goal": 3}, '"goal" must be text'),
        ({"memory": {}, "constraints": ["a", None]}, "constraints[1] must be a constraint"),
        ({"memory": {}, "max_token_budget": "2000"}, '"max_token_budget" must be a number'),
        ({"memory": {}, "total_cost_usd": False}, '"total_cost_usd" must be a number'),
        ({"memory": {}, "iteration_count": None}, '"iteration_count" must be a number'),
    ],
)
def test_state_field_types(state_: dict[str, Any], message: str) -> None:
    errors = validate_state(state_, "<value>")
    assert len(errors) == 1 and message in errors[0].message
    with pytest.raises(RunError, match="must be"):
        coerce_run(state_)


def test_valid_state_shapes() -> None:
    ok: dict[str, Any] = {
        "status": "completed",
        "memory": {},
        "visited_nodes": [],
        "max_token_budget": None,
        "total_tokens_used": 10.0,
        "budget_usd": None,
    }
    assert validate_state(ok, "<value>") == []
    assert coerce_run(ok).kind == "state"


def test_json_object_that_is_not_a_state(tmp_path: Path) -> None:
    with pytest.raises(RunError, match="not a workflow state"):
        load_state(write(tmp_path, "s.json", '{"workflow_id": "x"}'))
    with pytest.raises(RunError, match="must be a JSON object, found a list"):
        load_state(write(tmp_path, "l.json", "[]"))


INITIAL_TABLE = [
    ({}, "Eval case execution", [], None),
    ({"goal": "Summarize AI news"}, "Summarize AI news", [], None),
    ({"goal": 42}, "Eval case execution", [], None),
    (
        {"constraints": ["be fast", 42, "be safe", None]},
        "Eval case execution",
        ["be fast", "be safe"],
        None,
    ),
    ({"constraints": "be fast"}, "Eval case execution", [], None),
    ({"max_token_budget": 1000}, "Eval case execution", [], 1000),
    ({"max_token_budget": 0}, "Eval case execution", [], 0),
    ({"max_token_budget": 2.5}, "Eval case execution", [], 2.5),
    ({"max_token_budget": "1000"}, "Eval case execution", [], None),
    ({"max_token_budget": True}, "Eval case execution", [], None),
]


@pytest.mark.parametrize(("input_", "goal", "constraints", "budget"), INITIAL_TABLE)
def test_initial_state(
    input_: dict[str, Any], goal: str, constraints: list[str], budget: float | None
) -> None:
    s = initial_state(input_)
    assert s["goal"] == goal and s["constraints"] == constraints
    assert s.get("max_token_budget") == budget and ("max_token_budget" in s) == (budget is not None)
    assert s["memory"] == input_ and s["memory"] is not input_  # the whole input, control keys too
    assert s["status"] == "pending" and s["visited_nodes"] == []
    assert s["total_tokens_used"] == s["total_input_tokens"] == s["total_output_tokens"] == 0
    assert s["max_execution_time_ms"] == 60000
    assert validate_state(s, "<value>") == []
    assert initial_state(input_, timeout_ms=5000)["max_execution_time_ms"] == 5000


# --- provider bodies and OTLP ----------------------------------------------------------------


def test_openai_single_response() -> None:
    run = load_run(DATA / "openai-response.json", "openai")
    evs = events_of(run)
    assert [e["type"] for e in evs] == ["llm.request", "llm.response", "tool.call"]
    assert [e["seq"] for e in evs] == [0, 1, 2]
    assert evs[0]["model"] == "gpt-4o-mini" and evs[1]["requestId"] == evs[0]["id"]
    assert evs[1]["usage"] == {"promptTokens": 21, "completionTokens": 9}
    assert (evs[2]["name"], evs[2]["arguments"], evs[2]["callId"]) == (
        "get_weather",
        {"city": "Xiamen"},
        "call_1",
    )
    assert final_answer(run) == "It is 31C in Xiamen."
    assert run.format == "openai" and total_tokens(run) == 30


def test_anthropic_response_list() -> None:
    run = load_run(DATA / "anthropic-responses.json", "anthropic")
    evs = events_of(run)
    assert [e["type"] for e in evs] == [
        "llm.request",
        "llm.response",
        "tool.call",
        "llm.request",
        "llm.response",
    ]
    assert evs[2]["arguments"] == {"q": "entanglement"} and evs[2]["callId"] == "toolu_1"
    assert [e["usage"] for e in responses(run)] == [
        {"promptTokens": 40, "completionTokens": 15},
        {"promptTokens": 90, "completionTokens": 20},
    ]
    assert (
        final_answer(run) == "Entangled particles share one state.\nMeasuring one fixes the other."
    )
    # a tool_use block has no text (docs/language.md §6; traceplay gave its JSON text)
    assert answer_text(responses(run)[0]["output"]) == "Let me look that up."


def test_provider_body_shape_errors(tmp_path: Path) -> None:
    with pytest.raises(RunError, match="not an OpenAI body"):
        load_run(DATA / "anthropic-responses.json", "openai")
    path = write(tmp_path, "r.json", '[\n {"content": []},\n {"error": {"message": "x"}}\n]')
    with pytest.raises(RunError) as info:
        load_run(path, "anthropic")
    assert info.value.message == "element [1] is an error body, not an Anthropic message: x"
    assert info.value.line == 3


def test_otel_trace() -> None:
    run = load_run(DATA / "otel-trace.json", "otel")
    assert load_run(DATA / "otel-trace.json").format == "otel"  # detected by resourceSpans
    evs = events_of(run)
    assert [e["type"] for e in evs] == [
        "llm.request",
        "llm.response",
        "tool.call",
        "tool.result",
        "llm.request",
        "llm.response",
        "agent.error",
    ]
    assert [e["seq"] for e in evs] == list(range(7))
    assert evs[0]["at"] == "2026-09-01T00:00:01.000Z" and evs[0]["model"] == "gpt-4o-mini"
    assert evs[1]["latencyMs"] == 750.0 and evs[1]["at"] == "2026-09-01T00:00:01.750Z"
    assert (evs[2]["name"], evs[2]["arguments"], evs[2]["callId"]) == (
        "get_weather",
        {"city": "Xiamen"},
        "call_1",
    )
    assert (evs[3]["callId"], evs[3]["output"]) == ("call_1", "sunny, 31C")
    assert evs[6]["message"] == "publish failed: 503"
    assert final_answer(run) == "Xiamen is sunny, 31C."
    assert total_tokens(run) == 120 + 14 + 200 + 24
    assert run.latency_ms == 4500.0
    assert scan_tool_names(DATA / "otel-trace.json") == {"get_weather"}


def test_otel_small_variants() -> None:
    span = {
        "spanId": "s1",
        "name": "chat",
        "attributes": [
            {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
            {"key": "gen_ai.completion", "value": {"stringValue": "plain answer"}},
        ],
        "status": {"code": "STATUS_CODE_ERROR"},
        "events": [
            {
                "name": "exception",
                "attributes": [
                    {"key": "exception.message", "value": {"stringValue": "rate limited"}}
                ],
            }
        ],
    }
    evs, latency = detect.otel_events({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]})
    assert [e["type"] for e in evs] == ["llm.request", "llm.response", "agent.error"]
    assert evs[1]["status"] == 500 and answer_text(evs[1]["output"]) == "plain answer"
    assert evs[2]["message"] == "rate limited" and latency is None
    with pytest.raises(RunError, match="not an OTLP JSON trace"):
        detect.otel_events({"spans": []})


def _otel_span(n: int, **attributes: Any) -> dict[str, Any]:
    """An OTLP span `n` seconds into a run, of the given attributes (text and numbers)."""
    start = 1_700_000_000_000_000_000 + n * 1_000_000_000
    return {
        "spanId": f"s{n}",
        "name": "span",
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + 1_000_000),
        "attributes": [
            {"key": k.replace("__", "."), "value": {"stringValue": v}}
            for k, v in attributes.items()
        ],
    }


def _results(*spans: dict[str, Any]) -> list[tuple[str, Any]]:
    evs, _ = detect.otel_events({"resourceSpans": [{"scopeSpans": [{"spans": list(spans)}]}]})
    return [(e["callId"], e["output"]) for e in evs if e["type"] == "tool.result"]


def _llm_calling(n: int, *ids: str) -> dict[str, Any]:
    calls = {}
    for i, cid in enumerate(ids):
        calls[f"gen_ai__completion__0__tool_calls__{i}__id"] = cid
        calls[f"gen_ai__completion__0__tool_calls__{i}__name"] = "f"
    return _otel_span(n, llm__request__type="chat", **calls)


def _llm_answered(n: int, **outputs: str) -> dict[str, Any]:
    """An LLM span whose history holds a tool message for each call id (OpenLLMetry)."""
    history: dict[str, str] = {"gen_ai__prompt__0__role": "user", "gen_ai__prompt__0__content": "q"}
    for i, (cid, out) in enumerate(outputs.items(), 1):
        history[f"gen_ai__prompt__{i}__role"] = "tool"
        history[f"gen_ai__prompt__{i}__tool_call_id"] = cid
        history[f"gen_ai__prompt__{i}__content"] = out
    return _otel_span(n, llm__request__type="chat", **history)


def _tool_span(n: int, cid: str, out: str) -> dict[str, Any]:
    return _otel_span(
        n, gen_ai__operation__name="execute_tool", gen_ai__tool__name="f",
        gen_ai__tool__call__id=cid, gen_ai__tool__call__result=out,
    )  # fmt: skip


def test_otel_history_gives_waiting_calls_their_results() -> None:
    # no tool spans: the next LLM span's history holds the results
    assert _results(_llm_calling(1, "c1", "c2"), _llm_answered(2, c1="one", c2="two")) == [
        ("c1", "one"),
        ("c2", "two"),
    ]
    # c1's tool span came first: the history gives c2 its result, and c1 no second one
    spans = (
        _llm_calling(1, "c1", "c2"),
        _tool_span(2, "c1", "from the tool"),
        _llm_answered(3, c1="from the history", c2="two"),
    )
    assert _results(*spans) == [("c1", "from the tool"), ("c2", "two")]
    # every call answered by its tool span: the history adds nothing (it is not read)
    spans = (
        _llm_calling(1, "c1"),
        _tool_span(2, "c1", "from the tool"),
        _llm_answered(3, c1="from the history"),
        _llm_calling(4, "c3"),
        _llm_answered(5, c1="again", c3="three"),
    )
    assert _results(*spans) == [("c1", "from the tool"), ("c3", "three")]


def _read_spans(*spans: tuple[str, dict[str, Any], int, int]) -> providers.Trace:
    """The trace of spans (name, attributes, start, end) read as a file's."""
    trace = providers.Trace("otel", "<spans>", "test")
    otel.read_spans(
        [
            otel.Span(name, f"s{i}", attrs, start, end, str(start), str(end), [], False, None)
            for i, (name, attrs, start, end) in enumerate(spans)
        ],
        trace,
    )
    return trace


def test_otel_spans_are_read_by_start_then_end_whatever_their_file_order() -> None:
    """Spans written out of start order (a later start first, or equal starts with the
    later end first) are put in it; spans whose starts rise are read as written."""

    def called(*times: tuple[int, int]) -> list[str]:
        spans = [
            (name, {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name}, *t)
            for name, t in zip("abc", times, strict=False)
        ]
        trace = _read_spans(*spans)
        return [e["name"] for e in trace.events if e["type"] == "tool.call"]

    assert called((3, 4), (1, 9), (2, 3)) == ["b", "c", "a"]
    assert called((1, 5), (1, 3), (2, 6)) == ["b", "a", "c"]
    assert called((1, 5), (2, 3), (3, 4)) == ["a", "b", "c"]


def test_otel_spans_of_one_key_set_are_each_of_the_kind_their_values_say() -> None:
    """A span's kind is kept by its key set and kind values, never by its key set alone:
    spans of the same keys and other kind values (and of `llm.request.type` values, which
    decide it last) are each classified as their values say, first seen or not."""
    kinds = ["CHAIN", "LLM", "CHAIN", "RETRIEVER", "LLM", "chain"]
    types = ["chat", "embedding", "completion", "chat", "rerank"]
    trace = _read_spans(
        *((f"o{i}", {"openinference.span.kind": k}, i + 1, i + 2) for i, k in enumerate(kinds)),
        *((f"r{i}", {"llm.request.type": t}, i + 10, i + 11) for i, t in enumerate(types)),
    )
    assert trace.recognised == {"LLM span": 5}
    assert trace.skipped == {
        "`CHAIN` spans (OpenInference)": 3,
        "`RETRIEVER` spans (OpenInference)": 1,
        "spans with no GenAI, OpenInference or OpenLLMetry kind": 2,
    }


# --- values ----------------------------------------------------------------------------------


def test_coerce_run() -> None:
    run = Run(events=[])
    assert coerce_run(run) is run
    listed = coerce_run([{"type": "tool.call", "name": "a"}])
    assert (listed.kind, listed.format) == ("trace", "events")
    assert coerce_run({"status": "completed", "memory": {}}).kind == "state"
    assert coerce_run({"events": [], "output": 3}).output == 3
    assert coerce_run(DEMO).format == "traceplay"
    # a list is not walked when it is coerced: the index pass names the bad element
    import evaldsl

    result = evaldsl.compile("steps >= 0").check([{"type": "llm.request"}, 1])
    assert result.error is not None
    assert "element [1] of the event list is a number" in result.error
    # a value that names or holds no run is an error, as a missing file is: never a pass
    # on the value's repr
    with pytest.raises(RunError, match="a number is not a run"):
        coerce_run(42)


def test_run_from_value() -> None:
    assert run_from_value("answer").output == "answer"
    assert run_from_value({"status": "ok"}).kind == "value"
    assert run_from_value([]).kind == "value"
    assert run_from_value([1, 2]).output == [1, 2]
    assert run_from_value({"status": "completed"}).kind == "state"
    assert run_from_value([{"type": "llm.invoke"}]).format == "verydia"
    assert run_from_value({"events": [{"type": "x"}], "output": 1}).output == 1
    assert run_from_value(None).output is None
    assert run_from_value("x", latency_ms=12.5).latency_ms == 12.5
    with pytest.raises(RunError, match="unknown status"):
        run_from_value({"status": "done", "memory": {}})


def test_a_state_a_target_returns_wrapped_with_its_output_is_that_state() -> None:
    """Found by the agents hunt: a state file may be `{"state": {...}, "output": ...}`
    (docs/language.md §9.4, README's formats table), but a `run` target returning the same
    value got a plain output: `status == completed` and `node plan visited` were errors
    ("this run has no workflow state"), and the answer was the whole value's JSON text, so
    `answer == "done"` failed. It is the state with its output now, checked as a file's
    is (a status cycgraph does not have is the case's error); a dict with a `status` of
    its own stays what it was."""
    import evaldsl

    # (WorkflowState fields as cycgraph's state.ts names them, reference §1.1)
    state = {
        "status": "completed",
        "memory": {"count": 42},
        "visited_nodes": ["plan", "act"],
        "total_tokens_used": 500,
        "max_token_budget": 1000,
    }
    run = run_from_value({"state": state, "output": "done"})
    said = 'status == completed; node plan visited; memory.count == 42; answer == "done"'
    assert evaldsl.compile(said).check(run).statuses == ["pass"] * 4
    with pytest.raises(RunError, match='unknown status "done"'):
        run_from_value({"state": {**state, "status": "done"}, "output": "x"})
    assert run_from_value({"state": state, "status": "ok"}).kind == "value"
    assert run_from_value({"state": {"phase": 2}, "output": "x"}).kind == "value"


def test_a_value_whose_events_are_none_evaldsl_reads_is_an_error_beside_its_output() -> None:
    import evaldsl

    case = evaldsl.compile('steps == 0\nno tool search\noutput == "hi"').cases[0]
    # (it passed all three: the events were never read, and the output was)
    unread = case.check(run_from_value({"events": [{"type": "custom.step"}], "output": "hi"}))
    assert unread.error is not None
    assert "nothing in `<value>` is a recognised event: its events have type `custom.step`" in (
        unread.error
    )
    # an empty list beside an output is that output, and one recognised event reads the rest
    assert case.check(run_from_value({"events": [], "output": "hi"})).passed
    read = [{"type": "custom.step"}, {"type": "llm.response", "output": "hi"}]
    assert case.check(run_from_value({"events": read, "output": "hi"})).error is None


def test_run_kind_and_missing() -> None:
    assert Run(events=None).kind == "value"
    assert Run(events=[], state={}).kind == "state"
    assert Run(events=[]).output is MISSING and not Run(events=[]).has_output
    assert Run(events=None, output=None).has_output
    assert repr(MISSING) == "MISSING" and not MISSING


# --- answer text, JSON text, usage -----------------------------------------------------------

ANSWER_TABLE: list[tuple[Any, str]] = [
    (None, ""),
    ("plain", "plain"),
    ("", ""),
    ({"choices": [{"message": {"content": "hi"}}]}, "hi"),
    ({"choices": [{"message": {"content": [{"type": "text", "text": "a"}, "b"]}}]}, "a\nb"),
    ({"choices": [{"text": "legacy"}]}, "legacy"),
    # a message with `content: null` only calls tools: no text, never the body's JSON
    ({"choices": [{"message": {"content": None}}], "text": "t"}, ""),
    ({"content": [{"type": "text", "text": "a"}, {"type": "tool_use", "id": "t1"}]}, "a"),
    ({"content": [{"type": "text", "text": "x"}, {"type": "text", "text": "y"}]}, "x\ny"),
    ({"content": []}, ""),
    ({"content": "streamed\ntext", "usage": {"prompt_tokens": 1}}, "streamed\ntext"),
    ({"text": "gemini-ish"}, "gemini-ish"),
    # a Gemini generateContent body (a traceplay cassette of a Gemini model keeps it): its
    # text parts joined as Google's SDKs' `.text` joins them, a thought part and a
    # functionCall part left out; one that only calls a function, or was blocked, has ""
    (
        {
            "candidates": [
                {
                    "content": {
                        "role": "model",
                        "parts": [
                            {"text": "thinking...", "thought": True},
                            {"text": "Oslo is "},
                            {"functionCall": {"name": "get_weather", "args": {}}},
                            {"text": "rainy."},
                        ],
                    },
                    "finishReason": "STOP",
                }
            ],
            "usageMetadata": {"promptTokenCount": 3, "candidatesTokenCount": 4},
        },
        "Oslo is rainy.",
    ),
    ({"candidates": [{"content": {"parts": [{"functionCall": {"name": "f"}}]}}]}, ""),
    ({"candidates": [{"finishReason": "SAFETY"}]}, ""),
    # a Responses API body (`object: response`): its messages' output_text parts joined as
    # the SDK's `output_text` joins them; its refusal when it has no text; a body that only
    # calls a function has ""
    (
        {
            "id": "resp_1",
            "object": "response",
            "status": "completed",
            "output": [
                {"type": "reasoning", "id": "rs_1", "summary": []},
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [
                        {"type": "output_text", "text": "It is ", "annotations": []},
                        {"type": "output_text", "text": "12 C.", "annotations": []},
                    ],
                },
            ],
            "text": {"format": {"type": "text"}},
            "usage": {"input_tokens": 5, "output_tokens": 3},
        },
        "It is 12 C.",
    ),
    (
        {
            "object": "response",
            "output": [{"type": "message", "content": [{"type": "refusal", "refusal": "No."}]}],
        },
        "No.",
    ),
    (
        {
            "object": "response",
            "output": [{"type": "function_call", "name": "f", "arguments": "{}", "call_id": "c"}],
        },
        "",
    ),
    ({"choices": []}, '{"choices":[]}'),
    ({"score": 1.0, "ok": True}, '{"score":1,"ok":true}'),
    ([1, "é"], '[1,"é"]'),
    (2.0, "2"),
    (False, "false"),
]


@pytest.mark.parametrize(("output", "expected"), ANSWER_TABLE)
def test_answer_text(output: Any, expected: str) -> None:
    assert answer_text(output) == expected


JS_TABLE: list[tuple[Any, str]] = [
    ({"a": 1.0, "b": [0.5, -0.0]}, '{"a":1,"b":[0.5,0]}'),
    ({"b": 1, "2": 2, "1": 3, "01": 4}, '{"1":3,"2":2,"b":1,"01":4}'),
    (1e21, "1e+21"),
    (1e20, "100000000000000000000"),
    (1.5e-7, "1.5e-7"),
    (0.000001, "0.000001"),
    (float("nan"), "null"),
    ('a\nb"é\u2028', '"a\\nb\\"é\u2028"'),
    ((1, 2), "[1,2]"),
]


@pytest.mark.parametrize(("value", "expected"), JS_TABLE)
def test_js_json(value: Any, expected: str) -> None:
    assert js_json(value) == expected


USAGE_TABLE: list[tuple[dict[str, Any], tuple[int, int]]] = [
    ({"usage": {"promptTokens": 120, "completionTokens": 24}}, (120, 24)),
    ({"usage": {"prompt_tokens": 5, "completion_tokens": 6}}, (5, 6)),
    ({"usage": {"input_tokens": 7, "output_tokens": 8}}, (7, 8)),
    ({"usage": {"promptTokens": 9}}, (9, 0)),
    ({"output": {"usage": {"prompt_tokens": 1, "completion_tokens": 2}}}, (1, 2)),
    ({"output": {"usage": {"input_tokens": 3, "output_tokens": 4}}}, (3, 4)),
    (
        {
            "usage": {"promptTokens": 1, "completionTokens": 1},
            "output": {"usage": {"prompt_tokens": 100, "completion_tokens": 100}},
        },
        (1, 1),
    ),
    ({"usage": {"promptTokens": 7, "completionTokens": None}}, (7, 0)),
    # fractions are kept, as traceplay adds them (2.6 is not rounded to 3)
    ({"usage": {"promptTokens": 3.0, "completionTokens": 2.6}}, (3, 2.6)),
    ({"output": "text only"}, (0, 0)),
    ({}, (0, 0)),
    ({"type": "llm.invoke", "tokensIn": 50, "tokensOut": 10}, (50, 10)),
    ({"type": "llm.invoke", "usage": {"prompt_tokens": 2, "completion_tokens": 3}}, (2, 3)),
]


@pytest.mark.parametrize(("event", "expected"), USAGE_TABLE)
def test_usage_tokens(event: dict[str, Any], expected: tuple[int, int]) -> None:
    assert usage_tokens({"type": "llm.response", **event}) == expected


@pytest.mark.parametrize(
    "event",
    [
        {"usage": {"promptTokens": "100", "completionTokens": 20}},
        {"usage": {"promptTokens": True, "completionTokens": None}},
        {"usage": {"prompt_tokens": -5, "completion_tokens": 1}},
        {"usage": {"input_tokens": 1, "output_tokens": -0.5}},
        {"usage": {"input_tokens": [1], "output_tokens": 1}},
        {"type": "llm.invoke", "tokensIn": "50"},
        # a usage that is not an object: counted 0 tokens before, so `tokens <= 100` passed
        {"usage": "12000"},
        {"usage": 12000},
        {"usage": [5, 7]},
    ],
)
def test_usage_that_is_not_a_count_is_an_error(event: dict[str, Any]) -> None:
    # neither 0 nor a string's digits: a count nobody can read fails the run
    with pytest.raises(text.BadUsage):
        usage_tokens({"type": "llm.response", **event})


# --- documentation examples --------------------------------------------------------------------


@pytest.mark.parametrize(
    "module",
    [model, text, cassette, events, state, detect, providers, otel],
    ids=lambda m: m.__name__,
)
def test_docstring_examples(module: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # the examples name fixture files relative to the project root
    result = doctest.testmod(module)
    assert result.attempted > 0 and result.failed == 0


# ---- a list or an object where the pass looks events up ---------------------------------

UNKEYABLE = [
    # (events, the field named, what it holds)
    ([{"type": "tool.call", "name": "x"}, {"type": {}}], "type", "an object", "not text"),
    (
        [{"type": "llm.response", "output": "hi"}, {"type": ["tool.call"], "name": "x"}],
        "type",
        "a list",
        "not text",
    ),
    (
        [{"type": "tool.call", "name": "x", "callId": ["a"]}, {"type": "tool.result"}],
        "callId",
        "a list",
        "not text or a number",
    ),
    (
        [{"type": "llm.response", "output": "hi"}, {"type": "tool.call", "name": "x", "id": {}}],
        "id",
        "an object",
        "not text or a number",
    ),
]


def test_an_unkeyable_field_after_a_lone_surrogate_is_the_runs_error_too(tmp_path: Path) -> None:
    """Found in review: a line the fast loop cannot decode (a lone surrogate escape) sends
    the recording to the careful loop, whose `TypeError` on a `type` that is a list was a
    traceback out of `evaldsl run`; it is the run's error at its line, as without it."""
    path = write(
        tmp_path,
        "t.jsonl",
        '{"type": "user.message", "content": "\\ud800"}\n{"type": ["x"], "id": 1}\n',
    )
    with pytest.raises(RunError) as info:
        index_events(load_run(path).events, Needs())
    assert str(info.value) == f"{path}:2:1: its `type` is a list, not text"


@pytest.mark.parametrize(("events", "field", "kind", "expected"), UNKEYABLE)
@pytest.mark.parametrize("shape", ["document", "lines"])
def test_an_unkeyable_field_is_the_runs_error_naming_the_event(
    tmp_path: Path, events: list[Any], field: str, kind: str, expected: str, shape: str
) -> None:
    """Found by `make fuzz`: a `type` that is a list made `check` and `run` print a
    `TypeError` traceback, and a list `callId` was reported as a `type` that is not text.
    Now each names the file, the event (its element, or its line and text) and the field."""
    import evaldsl

    bad = next(i for i, e in enumerate(events) if isinstance(e.get(field), list | dict))
    if shape == "document":
        path = write(tmp_path, "t.json", json_dumps(events))
        where, line = f"event [{bad}] of the event list: ", 1
    else:  # a blank line first: the line is the file's, not the event's position
        path = write(tmp_path, "t.jsonl", "\n" + "\n".join(json_dumps(e) for e in events))
        where, line = "", bad + 2  # (the location says the line: not said again)
    # (ids are looked up where results are linked to their calls: `result` tests)
    program = evaldsl.compile("tool x called; tool x result exists; tokens < 10")
    result = program.check(load_run(path, "events"))
    assert result.error is not None and "pass" not in result.statuses
    assert result.error.startswith(f"{path}:{line}:1: {where}its `{field}` is {kind}, ")
    assert result.error.endswith(expected)
    # format detection may reject the file first (nothing recognised): an error all the same
    detected = program.check(path)
    assert detected.error is not None and "pass" not in detected.statuses
    with pytest.raises(RunError) as info:
        index_run(load_run(path, "events"), program.cases[0].needs)  # the reference pass
    assert info.value.path == str(path) and info.value.line == line
    assert info.value.source_line == (json_dumps(events[bad]) if shape == "lines" else "")
    suite = write(
        tmp_path,
        "s.eval",
        f'trace "{path.name}" as events\ntool x called\ntool x result exists\n',
    )
    done = run_evaldsl("run", "--no-history", str(suite))
    assert done.returncode == 1 and "Traceback" not in done.stdout + done.stderr
    assert f"{path.name}:{line}:1: {where}its `{field}` is {kind}" in done.stdout


# ---- a tool call whose name is not text ---------------------------------------------------

UNNAMED = [
    # (the call, how the error names its field)
    (
        {"type": "tool.call", "name": ["execute_shell"], "arguments": {}},
        "`name` is a list, not text",
    ),
    ({"type": "tool.call", "name": 7}, "`name` is a number, not text"),
    ({"type": "tool.call", "name": {"id": "execute_shell"}}, "`name` is an object, not text"),
    ({"type": "tool.call", "arguments": {"cmd": "ls"}}, "`name` is missing"),
    ({"type": "tool.call", "name": None}, "`name` is null, not text"),
    (
        {"type": "mcp.call", "tool": ["execute_shell"], "arguments": {}},
        "`tool` is a list, not text",
    ),
    ({"type": "mcp.call", "name": None, "tool": "execute_shell"}, "`name` is null, not text"),
    ({"type": "mcp.call", "arguments": {}}, "`tool` is missing"),
    # no tool is named "": the readers of every format refuse it too
    ({"type": "tool.call", "name": "", "arguments": {"cmd": "ls"}}, "`name` is empty"),
    ({"type": "mcp.call", "name": "", "tool": "execute_shell"}, "`name` is empty"),
]
#: Programs that read a call's name (a count, a test, a record, the sequence), each
#: passing on these events were the call unread, and programs that read none.
READS_NAMES = [
    "no tool execute_shell",
    "tool search called 0 times",
    "tools == [search]",
    "tool search args has q",
    "answer cites tool search",
]
READS_NO_NAME = ["tool calls == 2", 'answer contains "done"']


def events_file(tmp_path: Path, events: list[dict[str, Any]], shape: str) -> Path:
    """`events` as a JSON array (`document`) or one per line (`lines`)."""
    if shape == "document":
        return write(tmp_path, "t.json", json_dumps(events))
    return write(tmp_path, "t.jsonl", "\n".join(json_dumps(e) for e in events))


def through_pass(monkeypatch: pytest.MonkeyPatch, generated: bool) -> None:
    """Every run through the generated pass (`GENERATE_FROM`), or through the reference."""
    from evaldsl.runs import passes

    monkeypatch.setattr(passes, "GENERATE_FROM", 0 if generated else 1 << 40)
    monkeypatch.setattr(passes, "GENERATE_FROM_EVENTS", 0 if generated else 1 << 40)


@pytest.mark.parametrize(("call", "said"), UNNAMED)
@pytest.mark.parametrize("shape", ["document", "lines"])
@pytest.mark.parametrize("generated", [False, True], ids=["reference", "generated"])
def test_a_call_whose_name_is_not_text_is_the_runs_error_where_names_are_read(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    call: dict[str, Any],
    said: str,
    shape: str,
    generated: bool,
) -> None:
    """Found by the hostile hunt: `{"name": ["execute_shell"]}` was counted as a call of
    no tool, so `no tool execute_shell` passed on a trace that ran it. Where a case reads
    names, the call is now the run's error, naming its line; where it reads none (the
    calls' count), the run is read as before."""
    import evaldsl

    events = [
        {"type": "tool.call", "name": "search", "arguments": {"q": "x"}, "callId": "c1"},
        call,
        {"type": "llm.response", "output": "done"},
    ]
    path = events_file(tmp_path, events, shape)
    # (a recording's line is the error's location, not said again in its words)
    where, line = ("event [1] of the event list: ", 1) if shape == "document" else ("", 2)
    through_pass(monkeypatch, generated)
    for statement in READS_NAMES:
        result = evaldsl.compile(statement).check(load_run(path, "events"))
        assert result.error is not None and "pass" not in result.statuses, statement
        assert result.error.startswith(f"{path}:{line}:1: {where}a `{call['type']}` ")
        assert said + ", so the tool it called" in result.error, statement
    for statement in READS_NO_NAME:
        result = evaldsl.compile(statement).check(load_run(path, "events"))
        assert result.error is None and result.statuses == ["pass"], statement


def test_a_call_whose_name_is_not_text_fails_the_cli_run(tmp_path: Path) -> None:
    """The hunt's reproducer, through `evaldsl run`: the case is the run's error (exit 1),
    and the case beside it that reads no name still passes."""
    write(
        tmp_path,
        "t.jsonl",
        '{"type":"llm.request","model":"gpt-4o"}\n'
        '{"type":"tool.call","name":["execute_shell"],"arguments":{"cmd":"rm -rf /"}}\n'
        '{"type":"llm.response","output":"done"}\n',
    )
    suite = write(
        tmp_path,
        "s.eval",
        'case "guard"\n  cassette "t.jsonl"\n  no tool execute_shell\n'
        'case "count"\n  cassette "t.jsonl"\n  tool calls == 1\n',
    )
    done = run_evaldsl("run", "--no-history", str(suite))
    assert done.returncode == 1 and "Traceback" not in done.stdout + done.stderr
    assert "1 passed, 0 failed, 1 errored" in done.stdout
    assert "t.jsonl:2:1: a `tool.call` whose `name` is a list, not text" in done.stdout


@pytest.mark.parametrize(
    ("kind", "known"),
    [
        ("tool_call", "tool.call"),
        ("toolCall", "tool.call"),
        ("Tool-Result", "tool.result"),
        ("LLM_RESPONSE", "llm.response"),
        ("agent_error", "agent.error"),
        ("mcp call", "mcp.call"),
    ],
)
@pytest.mark.parametrize("shape", ["document", "lines"])
@pytest.mark.parametrize("generated", [False, True], ids=["reference", "generated"])
def test_an_event_type_spelt_another_way_is_the_runs_error(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    kind: str,
    known: str,
    shape: str,
    generated: bool,
) -> None:
    """Found by the hostile hunt: a call recorded as `"type": "tool_call"` was an event of
    a type evaldsl does not read, and the run beside it recognised, so `no tool X` passed.
    A type that is a known one in another case or with other separators is now the run's
    error at its line; any other unknown type is counted and skipped, as before."""
    import evaldsl

    odd = {"type": kind, "name": "execute_shell", "arguments": {}, "output": "done"}
    events = [{"type": "llm.request"}, odd, {"type": "llm.response", "output": "ok"}]
    path = events_file(tmp_path, events, shape)
    where, line = ("event [1] of the event list: ", 1) if shape == "document" else ("", 2)
    through_pass(monkeypatch, generated)
    for statement in ["no tool execute_shell", "tool calls == 0", 'answer contains "ok"']:
        result = evaldsl.compile(statement).check(load_run(path, "events"))
        assert result.error is not None and "pass" not in result.statuses, statement
        assert result.error == (
            f"{path}:{line}:1: {where}an event of type `{kind}` is not one evaldsl reads: "
            f"it reads `{known}`"
        )
    other = dict(odd, type="agent.thought")  # a type of its own: skipped, as traceplay does
    path = events_file(tmp_path, [events[0], other, events[2]], shape)
    result = evaldsl.compile("no tool execute_shell").check(load_run(path, "events"))
    assert result.error is None and result.statuses == ["pass"]


@pytest.mark.parametrize(
    ("odd", "said"),
    [
        ({"name": "execute_shell", "arguments": {}}, "without a `type`"),
        ({"type": None, "name": "execute_shell"}, "without a `type`"),
        ({"type": 5, "name": "execute_shell"}, "whose `type` is a number"),
        ({"type": True}, "whose `type` is a boolean"),
    ],
)
@pytest.mark.parametrize("shape", ["document", "lines"])
@pytest.mark.parametrize("generated", [False, True], ids=["reference", "generated"])
def test_an_event_whose_type_is_not_text_beside_recognised_ones_is_the_runs_error(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    odd: dict[str, Any],
    said: str,
    shape: str,
    generated: bool,
) -> None:
    """A call recorded without its `type` was skipped beside the events read, so `no tool
    execute_shell` passed. It is now the run's error at its line; a file of only such
    events is still "nothing recognised", and a type whose text is "None" or "5" is an
    unknown type like any other."""
    import evaldsl

    events = [{"type": "llm.request"}, odd, {"type": "llm.response", "output": "ok"}]
    path = events_file(tmp_path, events, shape)
    where, line = ("event [1] of the event list: ", 1) if shape == "document" else ("", 2)
    through_pass(monkeypatch, generated)
    result = evaldsl.compile("no tool execute_shell").check(load_run(path, "events"))
    assert result.error == (
        f"{path}:{line}:1: {where}an event {said}, so what it records cannot be told"
    )
    for spelt in ("None", "5", "True"):
        path = events_file(tmp_path, [events[0], dict(odd, type=spelt), events[2]], shape)
        result = evaldsl.compile("no tool execute_shell").check(load_run(path, "events"))
        assert result.error is None and result.statuses == ["pass"], spelt
    path = events_file(tmp_path, [odd, odd], shape)
    result = evaldsl.compile("no tool execute_shell").check(load_run(path, "events"))
    assert result.error is not None and "is a recognised event" in result.error


@pytest.mark.parametrize(
    ("usages", "expected"),
    [
        # no response records usage: unknown, an error (it was 0, and passed)
        ([None, None], "error"),
        ([{}, None], "error"),  # an object of none of the known counts records none
        ([{"total_tokens": 50}, None], "error"),
        # one that records any count: the others add 0, as before
        ([{"promptTokens": 0}, None], "pass"),
        ([None, {"input_tokens": 30, "output_tokens": 20}], "pass"),
        (["tokensIn", None], "pass"),  # verydia's event-level count
    ],
)
@pytest.mark.parametrize("shape", ["document", "lines"])
@pytest.mark.parametrize("generated", [False, True], ids=["reference", "generated"])
def test_tokens_no_response_recorded_are_unknown_not_zero(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    usages: list[Any],
    expected: str,
    shape: str,
    generated: bool,
) -> None:
    """An OpenAI stream recorded without its usage chunk, or a log that drops usage,
    summed to 0 tokens, so `tokens <= 100` and `cost < $0.01` passed on what was never
    measured. Where no response records usage they are now errors, and the run's
    metrics leave them out; a response without usage beside one with it still adds 0."""
    import evaldsl
    from evaldsl.runner.core import metrics_of

    events: list[dict[str, Any]] = []
    for usage in usages:
        events.append({"type": "llm.request", "model": "gpt-4o"})
        response: dict[str, Any] = {"type": "llm.response", "output": "ok"}
        if usage == "tokensIn":
            response["tokensIn"] = 7
        elif usage is not None:
            response["usage"] = usage
        events.append(response)
    path = events_file(tmp_path, events, shape)
    through_pass(monkeypatch, generated)
    program = evaldsl.compile("tokens <= 100; output tokens < 100; cost < $0.01; steps == 2")
    result = program.check(load_run(path, "events"))
    assert result.statuses == [expected, expected, expected, "pass"], result.verdicts
    if expected == "error":
        assert result.verdicts[0].message == (
            "`tokens` cannot be measured: none of the run's 2 LLM responses records token usage"
        )
    needs = attrs.evolve(program.cases[0].needs, tokens=True, cost=True, passes={})
    metrics = metrics_of(index_run(load_run(path, "events"), needs))
    assert (metrics.input_tokens is None) is (expected == "error")
    assert (metrics.cost is None) is (expected == "error")


def test_a_usage_that_is_not_an_object_names_its_line(tmp_path: Path) -> None:
    """`"usage": "12000"` counted 0 tokens, so `tokens <= 100` passed. It is now the run's
    error, at the response's line (the pass that finds it keeps no line numbers), or at
    its element in a list of events."""
    import evaldsl

    events = [
        {"type": "llm.request", "model": "gpt-4o"},
        {"type": "llm.response", "output": "hi", "usage": {"promptTokens": 1}},
        {"type": "llm.response", "output": "done", "usage": "12000"},
    ]
    path = write(tmp_path, "t.jsonl", "\n\n" + "\n".join(json_dumps(e) for e in events))
    program = evaldsl.compile("tokens <= 100")
    with pytest.raises(RunError) as info:
        index_run(load_run(path, "events"), program.cases[0].needs)
    assert info.value.line == 5 and info.value.source_line == json_dumps(events[2])
    assert 'token usage is "12000", not an object of counts' in str(info.value)
    listed = program.check({"events": events})
    assert listed.error is not None and "pass" not in listed.statuses
    assert "event [2] of the event list: an LLM response's token usage is" in listed.error
    # nobody reads the usage: not the run's error
    assert evaldsl.compile('answer contains "done"').check(path).statuses == ["pass"]


def json_dumps(value: Any) -> str:
    import json

    return json.dumps(value)


def test_loading_a_cassette_opens_it_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`load_run` reads a cassette's first line once: the check that it is a file we may
    read, detection and the header's check all take that one opening (its header after
    blank lines and a BOM is checked at its own line, as `read_header` checks it)."""
    from evaldsl.runs import model

    opened: list[str] = []
    real = model.open_regular
    monkeypatch.setattr(model, "open_regular", lambda p: opened.append(str(p)) or real(p))
    path = write(tmp_path, "c.jsonl", "\ufeff\n\n" + b"\n".join(demo_lines()).decode() + "\n")
    run = load_run(path)
    assert run.format == "traceplay" and opened == [str(path)]
    bad = write(tmp_path, "bad.jsonl", '\n{"cassette":"traceplay","version":2}\n')
    with pytest.raises(RunError) as info:
        load_run(bad)
    assert info.value.line == 2 and "unsupported cassette version 2" in info.value.message


def test_a_file_read_whole_is_read_with_the_collector_paused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # adapting a large file makes many small objects that hold no cycles: the collections
    # their allocations trigger only rescan them (~40% of reading OpenAI responses)
    import gc

    import evaldsl.runs.openai as openai_adapter

    real = openai_adapter.read_openai
    seen: list[bool] = []

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(gc.isenabled())
        return real(*args, **kwargs)

    monkeypatch.setattr(openai_adapter, "read_openai", spy)
    fixture = Path("tests/fixtures/realworld/openai-chat-jsonl/responses.jsonl")
    assert gc.isenabled()
    assert load_run(fixture).format == "openai"
    assert seen == [False]
    assert gc.isenabled()  # on again after it, and after a file that cannot be read
    bad = tmp_path / "bad.json"
    bad.write_text('{"choices": [', encoding="utf-8")
    with pytest.raises(RunError):
        load_run(bad)
    assert gc.isenabled()
    gc.disable()  # and left off when it was off
    try:
        load_run(fixture)
        assert not gc.isenabled()
    finally:
        gc.enable()


@pytest.mark.parametrize(
    ("event", "said"),
    [
        ({"id": "a"}, "its events have no `type` ×1"),
        ({"id": "a", "type": ["llm.request"]}, "a list where the event type goes ×1"),
        ({"id": "a", "type": "zz"}, "its events have type `zz` ×1"),
    ],
)
def test_types_that_no_event_reads_are_said_in_words(
    tmp_path: Path, event: dict[str, Any], said: str
) -> None:
    # (what `check` says of a cassette: never Python's `None` or `['llm.request']`)
    path = tmp_path / "c.jsonl"
    path.write_text('{"cassette": "traceplay", "version": 1}\n' + json.dumps(event) + "\n")
    with pytest.raises(RunError) as raised:
        detect.check_head(load_run(str(path)))
    assert said in raised.value.message and "`None`" not in raised.value.message
    assert "['llm.request']" not in raised.value.message
    # and as the pass that indexes a run says it (`inspect`, a run's error)
    import evaldsl

    if "list" not in said:  # (a list is refused before: "its `type` is a list, not text")
        error = evaldsl.compile("steps >= 1").check(load_run(str(path))).error
        assert error is not None and said in error and "`None`" not in error


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from([b"a", b"mark", b"ma", b"rk", b"\n", b"x\n", b"markmark"]), max_size=40
    ),
    st.integers(1, 9),
)
def test_marked_lines_are_the_lines_that_hold_a_mark_whatever_the_blocks(
    pieces: list[bytes], block: int
) -> None:
    """`model.marked_lines` (how an events file is told from a verydia one without a
    Python step a line) gives the lines `fast_lines` gives that hold a mark, in order,
    with a block of any size cutting lines and marks anywhere."""
    import io
    from unittest import mock

    from evaldsl.runs import model

    data = b"".join(pieces)
    marks = (b"mark", b"x")
    want = [line for line in io.BytesIO(data) if any(m in line for m in marks)]
    with mock.patch.object(model, "MARK_BLOCK", block):
        assert list(model.marked_lines(io.BytesIO(data), marks)) == want
