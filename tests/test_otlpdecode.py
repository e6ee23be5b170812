"""The typed decoding of OTel JSONL files (`runs/otlpdecode.py`) against the full reading.

Random OTLP JSON documents and flat spans under the GenAI, OpenInference and OpenLLMetry
conventions, one per line, well formed or broken (lines that are not objects or not
JSON, containers of the wrong type, numbers too large, text that is not UTF-8 or holds a
line break `str.splitlines` splits at, another format's items among the first): the run
the typed decoder gives (events, latency, what was read) or the error it leads to must be
the reference's, for a detected and a named format; a file the reference reads must be
read by the typed decoder itself, not handed back.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evaldsl.runs import RunError, detect, load_run, otel, otlpdecode, spanplan, spantree
from evaldsl.runs.providers import BadValue, Trace
from evaldsl.runs.rawattrs import RawAttrs
from tests.fuzzing import examples
from tests.test_realworld import REAL

TEXTS = [
    "",
    "ok",
    "f",
    "g",
    "search",
    "tool",
    "TOOL",
    "LLM",
    "AGENT",
    "chat",
    "execute_tool",
    "completion",
    "embeddings",
    "user",
    "assistant",
    "c1",
    "c2",
    "text/plain",
    "application/json",
    "été ☀",
    '{"x": 1}',
    "not json",
    '[{"role": "assistant", "parts": [{"type": "text", "content": "hi"}, '
    '{"type": "tool_call", "name": "f", "arguments": {"x": 1}, "id": "c1"}]}]',
    '[{"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", '
    '"response": "sunny"}]}]',
    '[{"role": "tool", "parts": [{"type": "\\u0074ool_call_response", "id": "c1", '
    '"response": "escaped"}]}]',
    '[{"role": "user", "parts": [{"type": "text", "content": "a long prompt"}]}]',
    '{"content": "done", "tool_calls": [{"id": "c2", "function": '
    '{"name": "g", "arguments": "{\\"q\\": 2}"}}]}',
    # two choices; a tool the provider ran, its response, parts not read
    '[{"role": "assistant", "parts": [{"type": "text", "content": "one"}]}, '
    '{"role": "assistant", "parts": [{"type": "text", "content": "two"}]}]',
    '[{"role": "assistant", "parts": [{"type": "reasoning", "content": "hm"}, '
    '{"type": "server_tool_call", "id": "s1", "name": "web_search", '
    '"server_tool_call": {"query": "q"}}, {"type": "server_tool_call_response", "id": "s1", '
    '"server_tool_call_response": {"r": 1}}, {"content": "untyped"}]}]',
    "__REDACTED__",  # OpenInference's placeholder for what it hid
]

KEYS = [
    # classification
    "gen_ai.operation.name",
    "gen_ai.tool.name",
    "gen_ai.system",
    "gen_ai.provider.name",
    "openinference.span.kind",
    "traceloop.span.kind",
    "llm.request.type",
    # tools
    "tool.name",
    "traceloop.entity.name",
    "gen_ai.tool.call.id",
    "tool_call.id",
    "gen_ai.tool.call.arguments",
    "input.value",
    "traceloop.entity.input",
    "gen_ai.tool.call.result",
    "gen_ai.tool.result.value",
    "output.value",
    "output.mime_type",
    "traceloop.entity.output",
    "gen_ai.tool.result.is_error",
    "error.type",
    # LLM calls
    "gen_ai.request.model",
    "gen_ai.response.model",
    "llm.model_name",
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.output_tokens",
    "gen_ai.usage.prompt_tokens",
    "llm.token_count.completion",
    "gen_ai.output.messages",
    "gen_ai.input.messages",
    "gen_ai.completion",
    "gen_ai.completion.0.content",
    "gen_ai.completion.0.tool_calls.0.name",
    "gen_ai.completion.0.tool_calls.0.arguments",
    "gen_ai.completion.0.tool_calls.0.id",
    "gen_ai.prompt.0.role",
    "gen_ai.prompt.0.content",
    "gen_ai.prompt.1.role",
    "gen_ai.prompt.1.tool_call_id",
    "gen_ai.prompt.1.name",
    "gen_ai.prompt.01.content",
    "llm.input_messages",
    "llm.input_messages.0.message.role",
    "llm.input_messages.0.message.content",
    "llm.input_messages.0.message.tool_call_id",
    "llm.input_messages.0.message.name",
    "llm.output_messages",
    "llm.output_messages.0.message.content",
    "llm.output_messages.0.message.contents.0.message_content.text",
    "llm.output_messages.0.message.tool_calls.0.tool_call.function.name",
    "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments",
    "llm.output_messages.0.message.tool_calls.0.tool_call.id",
    # read by nobody
    "gen_ai.system_instructions",
    "llm.invocation_parameters",
    "service.name",
]

scalars = st.one_of(
    st.sampled_from(TEXTS),
    st.integers(-2, 300),
    st.booleans(),
    st.none(),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from(["message.role", "message.content", "role", "x"]), inner),
    ),
    max_leaves=6,
)


def any_value(value: Any) -> Any:
    """A value as OTLP JSON writes it."""
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)} if value % 2 else {"intValue": value}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, str):
        return {"stringValue": value}
    if isinstance(value, list):
        return {"arrayValue": {"values": [any_value(v) for v in value]}}
    if isinstance(value, dict):
        return {
            "kvlistValue": {"values": [{"key": k, "value": any_value(v)} for k, v in value.items()]}
        }
    return {}


CALL = '[{"role": "assistant", "parts": [{"type": "tool_call", "name": "f", "id": "c1"}]}]'
ANSWERED = (
    '[{"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": 1}]}]'
)
ESCAPED = ANSWERED.replace("tool_call_response", "\\u0074ool_call_response")
HISTORY = '[{"role": "user", "parts": [{"type": "text", "content": "tool_call_response?"}]}]'

#: A span of each kind in each convention (random attributes are added to them).
CONVENTIONS: list[list[tuple[str, Any]]] = [
    [  # GenAI
        ("gen_ai.operation.name", "chat"),
        ("gen_ai.output.messages", CALL),
        ("gen_ai.usage.input_tokens", 5),
        ("gen_ai.usage.output_tokens", 2),
    ],
    [("gen_ai.operation.name", "chat"), ("gen_ai.input.messages", ANSWERED)],
    [("gen_ai.system", "openai"), ("gen_ai.input.messages", ESCAPED)],
    [("gen_ai.provider.name", "openai"), ("gen_ai.input.messages", HISTORY)],
    [
        ("gen_ai.operation.name", "execute_tool"),
        ("gen_ai.tool.name", "f"),
        ("gen_ai.tool.call.id", "c1"),
        ("gen_ai.tool.call.arguments", '{"x": 1}'),
        ("gen_ai.tool.call.result", "ok"),
    ],
    [  # OpenInference
        ("openinference.span.kind", "LLM"),
        ("llm.output_messages.0.message.tool_calls.0.tool_call.function.name", "f"),
        ("llm.output_messages.0.message.tool_calls.0.tool_call.id", "c1"),
        ("llm.token_count.prompt", 3),
    ],
    [
        ("openinference.span.kind", "LLM"),
        ("llm.input_messages.0.message.role", "user"),
        ("llm.input_messages.0.message.content", "a long prompt"),
        ("llm.input_messages.1.message.role", "tool"),
        ("llm.input_messages.1.message.tool_call_id", "c1"),
        ("llm.input_messages.1.message.content", "sunny"),
        ("llm.output_messages.0.message.content", "It is sunny."),
        ("input.value", '{"messages": []}'),
    ],
    [("openinference.span.kind", "TOOL"), ("tool.name", "f"), ("input.value", '{"x": 2}')],
    [  # OpenLLMetry
        ("llm.request.type", "chat"),
        ("gen_ai.completion.0.tool_calls.0.name", "f"),
        ("gen_ai.completion.0.tool_calls.0.id", "c1"),
        ("gen_ai.completion.0.content", "calling"),
    ],
    [
        ("llm.request.type", "chat"),
        ("gen_ai.prompt.0.role", "user"),
        ("gen_ai.prompt.0.content", "hi"),
        ("gen_ai.prompt.1.role", "tool"),
        ("gen_ai.prompt.1.tool_call_id", "c1"),
        ("gen_ai.prompt.1.content", "from the prompt"),
    ],
    [
        ("traceloop.span.kind", "tool"),
        ("traceloop.entity.name", "f"),
        ("traceloop.entity.input", '{"x": 3}'),
        ("traceloop.entity.output", "done"),
    ],
    [],
]

attribute_items = st.tuples(
    st.sampled_from(CONVENTIONS),
    st.lists(
        st.tuples(
            st.sampled_from(KEYS),
            st.one_of(values, st.sampled_from(["tool", "chat", "execute_tool", "LLM", "TOOL"])),
        ),
        max_size=5,
    ),
).map(lambda pair: pair[0] + pair[1])
#: Integers at and past the ends of orjson's (it gives those past them as doubles), which
#: the typed decoder must give as it does.
EDGE_INTS = [2**64 - 1, 2**64, 10**30, -(2**63), -(2**63) - 1, 2**63, 253_402_300_800 * 10**9]
times = st.one_of(
    st.integers(1_700_000_000_000_000_000, 1_700_000_009_000_000_000).map(str),
    st.integers(1_700_000_000_000_000_000, 1_700_000_009_000_000_000),
    st.sampled_from(["2024-01-11T16:45:17.982858-07:00", "soon", "9" * 40, "-5", None]),
    st.sampled_from(EDGE_INTS),
    st.floats(allow_nan=False, allow_infinity=False),
)
statuses = st.one_of(
    st.none(),
    st.fixed_dictionaries(
        {},
        optional={
            "code": st.sampled_from([0, 1, 2, "STATUS_CODE_ERROR", "ERROR", 2**64 + 2]),
            "message": st.sampled_from(["", "boom", 10**30, [2**64], {"m": -(2**63) - 1}]),
        },
    ),
)
event_names = st.sampled_from(["gen_ai.choice", "gen_ai.content.completion", "exception", "log"])
event_attrs = st.lists(
    st.tuples(
        st.sampled_from(
            ["message", "gen_ai.completion", "content", "tool_calls", "exception.message", "x"]
        ),
        st.sampled_from(TEXTS),
    ),
    max_size=3,
)


SPAN_IDS = [f"a{n}" for n in range(8)]


@st.composite
def otlp_span(draw: st.DrawFn) -> dict[str, Any]:
    span: dict[str, Any] = {}
    if draw(st.booleans()):
        names = (st.sampled_from(TEXTS), st.none(), st.integers(0, 3), st.sampled_from(EDGE_INTS))
        span["name"] = draw(st.one_of(*names))
    if draw(st.booleans()):
        span["spanId"] = draw(st.sampled_from([*SPAN_IDS, "", None, 10**30, 0.5]))
    # (spans of one trace, one spanId written again, parents among them: `spantree`)
    if draw(st.integers(0, 3)):
        span["traceId"] = draw(st.sampled_from(["t1", "t1", "t1", "", None, 7]))
    if draw(st.booleans()):
        span["parentSpanId"] = draw(st.sampled_from([*SPAN_IDS, "", None]))
    for key in ("startTimeUnixNano", "endTimeUnixNano"):
        if draw(st.integers(0, 5)):
            span[key] = draw(times)
    status = draw(statuses)
    if status is not None:
        span["status"] = status
    items = draw(attribute_items)
    if items or draw(st.booleans()):
        span["attributes"] = [{"key": k, "value": any_value(v)} for k, v in items]
        if items and draw(st.integers(0, 9)) == 0:
            span["attributes"].append({"value": {"stringValue": "no key"}})
        if items and draw(st.integers(0, 9)) == 0:
            span["attributes"].append({"key": items[0][0]})  # a key twice, the last one bare
    if draw(st.integers(0, 3)) == 0:
        span["events"] = [
            {
                "name": draw(event_names),
                "attributes": [{"key": k, "value": any_value(v)} for k, v in draw(event_attrs)],
            }
            for _ in range(draw(st.integers(0, 2)))
        ]
    return span


@st.composite
def otlp_document(draw: st.DrawFn) -> dict[str, Any]:
    resources = []
    for _ in range(draw(st.integers(0, 2))):
        key = draw(st.sampled_from(["scopeSpans", "scopeSpans", "instrumentationLibrarySpans"]))
        scopes = [
            {"scope": {"name": "x"}, "spans": draw(st.lists(otlp_span(), max_size=3))}
            for _ in range(draw(st.integers(0, 2)))
        ]
        resources.append({"resource": {"attributes": []}, key: scopes})
    return {"resourceSpans": resources}


#: A flat span's fields beside its attributes are decoded with its line (as values, not
#: undecoded): of every type, integers past orjson's range among them, read as orjson
#: reads them
odd_fields = st.one_of(st.sampled_from(EDGE_INTS), st.none(), values)


@st.composite
def flat_span(draw: st.DrawFn) -> dict[str, Any]:
    odd = draw(st.integers(0, 5)) == 0
    span_id = draw(odd_fields if odd else st.sampled_from(["s1", "s2", ""]))
    span: dict[str, Any] = {
        "name": draw(st.sampled_from(["llm", "tool", "chain", ""])),
        "context": {"trace_id": draw(st.sampled_from(["t", "t", None])), "span_id": span_id},
    }
    if draw(st.booleans()):
        span["parent_id"] = draw(odd_fields if odd else st.sampled_from(["s1", "s2", None]))
    if odd and draw(st.booleans()):
        span["name"] = draw(odd_fields)  # not text: not a span
    if draw(st.booleans()):
        kinds = st.sampled_from(["LLM", "TOOL", "CHAIN", "llm"])
        span["span_kind"] = draw(st.one_of(kinds, odd_fields) if odd else kinds)
    for key in ("start_time", "end_time"):
        if draw(st.integers(0, 5)):
            span[key] = draw(times)
    if draw(st.booleans()):
        codes = st.sampled_from(["OK", "ERROR", None])
        span["status_code"] = draw(st.one_of(codes, odd_fields) if odd else codes)
    if draw(st.booleans()):
        messages = st.sampled_from(["", "it broke"])
        span["status_message"] = draw(st.one_of(messages, odd_fields) if odd else messages)
    if draw(st.integers(0, 3)) == 0:
        odd_status = st.fixed_dictionaries({"status_code": odd_fields, "description": odd_fields})
        span["status"] = (
            draw(st.one_of(odd_fields, odd_status))
            if odd
            else {"status_code": "ERROR", "description": "failed"}
        )
    items = draw(attribute_items)
    if items or draw(st.booleans()):
        span["attributes"] = dict(items)
    if draw(st.integers(0, 3)) == 0:
        span["events"] = [
            {"name": draw(event_names), "attributes": dict(draw(event_attrs))}
            for _ in range(draw(st.integers(0, 2)))
        ]
    return span


def too_large_start(line: str) -> str:
    """A line whose first span starts at a number too large for a double, where the reader
    reads it: the span's own start replaced (a second key would hide the first, and a
    value hidden or skipped, as a scope's, is not an error of the typed reading: see
    otlpdecode's doc), else one put in a span that has none, else in `resourceSpans`."""
    found = re.search(r'"startTimeUnixNano": ("[^"]*"|-?\d+|null)', line)
    if found is not None:
        return line[: found.start(1)] + "1e400" + line[found.end(1) :]
    if '"spans": [{' in line:
        return line.replace('"spans": [{', '"spans": [{"startTimeUnixNano": 1e400, ', 1)
    if '"resourceSpans": [' in line:
        return line.replace('"resourceSpans": [', '"resourceSpans": [1e400, ', 1)
    return line.replace('"name": ', '"startTimeUnixNano": 1e400, "name": ', 1)  # a flat span


#: Ways a line or a file goes wrong (each applied to one line, or the whole text).
BREAKS = [
    lambda line: "[1]",
    lambda line: "3",
    lambda line: "not json",
    lambda line: line[:-1],  # cut
    lambda line: line.replace('"spans": [', '"spans": {"x": [', 1).replace("]}]}", "]}}]}", 1),
    lambda line: line.replace('"attributes": [', '"attributes": 7, "was": [', 1),
    lambda line: line.replace('"resourceSpans": [', '"resourceSpans": [1, ', 1),
    too_large_start,
    lambda line: line.replace('"context": ', '"start_time": 1e400, "context": ', 1),
    lambda line: line.replace('"ok"', '"o\u2028k"', 1),
    lambda line: line.replace('"ok"', '"o\x85k"', 1),
    lambda line: line.replace('"key"', '"key", "key": 3', 1),
    lambda line: line.replace('"attributes": [', '"attributes": [7, ', 1),
    lambda line: line.replace('"key": ', '"key": 5, "was": ', 1),
    lambda line: line.replace('"events": [', '"events": [7, ', 1),
    lambda line: line.replace('"events": [', '"events": {"x": [', 1).replace("]}]}", "]}}]}", 1),
    lambda line: json.dumps({"choices": [{"message": {"content": "hi"}}]}),  # an OpenAI body
    lambda line: json.dumps({"name": "x", "context": "nope"}),
    lambda line: line.replace('"context": ', '"attributes": [7], "context": ', 1),
    lambda line: line.replace('"context": ', '"events": {"name": "e"}, "context": ', 1),
    lambda line: line.replace('"context": ', '"events": [{"attributes": []}], "context": ', 1),
]


@st.composite
def jsonl_files(draw: st.DrawFn) -> tuple[bytes, bool]:
    """A JSONL file's bytes, and whether it was broken on purpose."""
    lines = [
        json.dumps(draw(st.one_of(otlp_document(), flat_span())), ensure_ascii=draw(st.booleans()))
        for _ in range(draw(st.integers(1, 5)))
    ]
    broken = draw(st.sampled_from([False, False, False, True]))
    if broken:
        at = draw(st.integers(0, len(lines) - 1))
        lines[at] = draw(st.sampled_from(BREAKS))(lines[at])
    if draw(st.integers(0, 4)) == 0:
        lines.insert(draw(st.integers(0, len(lines))), draw(st.sampled_from(["", "  ", "\t"])))
    text = draw(st.sampled_from(["\n", "\r\n"])).join(lines) + draw(st.sampled_from(["", "\n"]))
    data = text.encode()
    if draw(st.integers(0, 9)) == 0:
        data = b"\xef\xbb\xbf" + data
    if draw(st.integers(0, 9)) == 0 and b'"ok"' in data:
        data, broken = data.replace(b'"ok"', b'"o\xffk"', 1), True  # not UTF-8
    return data, broken


def outcome(path: Path, fmt: str | None) -> Any:
    """What reading `path` gives: the run, or the error with everything it says."""
    try:
        return load_run(path, fmt)
    except RunError as err:
        return ("error", err.message, err.line, err.column, err.hint, err.source_line)
    except Exception as err:  # a crash must be the same crash (and is a bug of its own)
        return ("crash", type(err).__name__, str(err))


@settings(
    max_examples=examples(300),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(jsonl_files())
def test_typed_reading_is_the_reference(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: tuple[bytes, bool]
) -> None:
    data, broken = case
    path = tmp_path / "spans.jsonl"
    path.write_bytes(data)

    def typed_itself(why: str) -> Any:
        def chosen(head: list[Any]) -> str:
            return why

        return otlpdecode.read_otel_lines(str(path), chosen, 50)

    assert_typed_is_reference(path, data, broken, monkeypatch, typed_itself)


def assert_typed_is_reference(
    path: Path,
    data: bytes,
    broken: bool,
    monkeypatch: pytest.MonkeyPatch,
    typed_itself: Callable[[str], Any],
) -> None:
    """The run (or error) of `path` read typed is the full reading's, detected and named
    `otel`; a file that is not broken is read by the typed decoder itself
    (`typed_itself(why)`, with detection's answer), not handed back to the full reader."""
    for fmt in (None, "otel"):
        monkeypatch.setattr(detect, "OTEL_TYPED_FROM", 0)
        monkeypatch.setenv("EVALDSL_REFERENCE", "1")
        reference = outcome(path, fmt)
        monkeypatch.delenv("EVALDSL_REFERENCE")
        typed = outcome(path, fmt)
        assert typed == reference, (fmt, data)
        if not broken and not isinstance(reference, tuple):
            assert typed_itself(reference.read.why) == reference


def test_large_files_are_read_by_the_typed_decoder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file of 1 MiB or more goes to the typed decoder (and gives the reference's run)."""
    history = [{"role": "user", "parts": [{"type": "text", "content": "x" * 2000}]}]
    span = {
        "spanId": "a",
        "name": "chat",
        "startTimeUnixNano": "1700000000000000000",
        "endTimeUnixNano": "1700000001000000000",
        "attributes": [
            {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
            {"key": "gen_ai.input.messages", "value": {"stringValue": json.dumps(history)}},
            {"key": "gen_ai.usage.input_tokens", "value": {"intValue": "5"}},
        ],
    }
    line = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span] * 20}]}]})
    path = tmp_path / "big.jsonl"
    path.write_text("\n".join([line] * 30) + "\n", encoding="utf-8")
    assert path.stat().st_size >= detect.OTEL_TYPED_FROM
    calls: list[Any] = []
    given: list[Any] = []
    read = otlpdecode.read_otel_lines

    def spy(*args: Any) -> Any:
        given.append(args)
        calls.append(read(*args))
        return calls[-1]

    monkeypatch.setattr(otlpdecode, "read_otel_lines", spy)
    typed = load_run(path)
    assert len(calls) == 1 and calls[0] is typed
    # (detection hands over the 30 lines it decoded, with their texts: not decoded again)
    assert [text for text, _ in given[0][3]] == [line.encode() + b"\n"] * 30
    monkeypatch.setenv("EVALDSL_REFERENCE", "1")
    assert load_run(path) == typed and len(calls) == 1
    assert typed.read is not None and typed.read.recognised == {
        "OTLP document": 30,
        "LLM span": 600,
    }


@pytest.mark.parametrize(
    "odd",
    [
        None,
        ("startTimeUnixNano", 1700000000000000000),  # a time as a number
        ("name", None),  # (the full reader names it "None")
        ("spanId", 7),
        ("status", "ERROR"),  # (not an object: no status)
        # an attribute without a key (read past), one with a null key
        ("attributes", [{"value": {"stringValue": "x"}}, {"key": "tool.name", "value": {}}]),
        ("attributes", [{"key": None, "value": {"stringValue": "x"}}]),
    ],
)
def test_spans_of_exporters_types_are_read_as_the_reference_reads_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, odd: tuple[str, Any] | None
) -> None:
    """Lines whose spans have the types exporters write are decoded as such and read
    without type tests (their times of digits not by `nanos`); a block holding a span of
    other types is decoded again, its spans' fields taking anything. Either gives the
    reference's run, with the keys, times, status and events the reference reads."""
    spans = [
        {
            "traceId": "t1",
            "spanId": f"s{n}",
            "parentSpanId": "s0" if n else "",
            "name": "chat" if n % 2 else "execute_tool f",
            "startTimeUnixNano": str(1_700_000_000_000_000_000 + n * 10**9),
            "endTimeUnixNano": str(1_700_000_000_500_000_000 + n * 10**9),
            "status": {"code": 2, "message": "boom"} if n == 3 else {"code": 1},
            "attributes": [
                {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
                {"key": "gen_ai.output.messages", "value": {"stringValue": CALL}},
            ]
            if n % 2
            else [
                {"key": "gen_ai.tool.name", "value": {"stringValue": "f"}},
                {"key": "gen_ai.tool.call.id", "value": {"stringValue": "c1"}},
                {"key": "gen_ai.tool.call.result", "value": {"stringValue": '{"t": 1}'}},
            ],
            "events": [{"name": "exception", "attributes": []}] if n == 3 else [],
        }
        for n in range(6)
    ]
    if odd is not None:
        spans[4][odd[0]] = odd[1]
    if odd == ("name", None):
        del spans[4]["spanId"]
    line = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]})
    path = tmp_path / "spans.jsonl"
    path.write_text(line + "\n" + line.replace('"t1"', '"t2"') + "\n")
    timed: list[Any] = []  # (the times `nanos` reads: those of the spans of other types)
    nanos = otlpdecode.nanos

    def spy(value: Any) -> Any:
        timed.append(value)
        return nanos(value)

    def typed_itself(why: str) -> Any:
        return otlpdecode.read_otel_lines(str(path), lambda head: why, 50)

    monkeypatch.setattr(otlpdecode, "nanos", spy)
    assert_typed_is_reference(path, path.read_bytes(), False, monkeypatch, typed_itself)
    assert bool(timed) is (odd is not None)


#: Span times written as text that `nanos` reads otherwise than `int` (or as `int` does,
#: when at most 21 digits), and one `int` reads as `nanos` does.
ODD_TIMES = [None, "", "-5", "+5", " 5", "5 ", "1_0", "\uff19", "9" * 20, "9" * 21, "0" * 21]


@pytest.mark.parametrize("key", ["startTimeUnixNano", "endTimeUnixNano"])
@pytest.mark.parametrize("odd", [*ODD_TIMES, "soon", "2024-01-11T16:45:17.982858-07:00"])
def test_a_block_of_exporters_types_reads_its_times_as_nanos_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: str, odd: str | None
) -> None:
    """A block of spans of the types exporters write reads its times together, by `int`
    when each is text of 1 to 20 ASCII digits and else each by `nanos`: one time that is
    null, empty, signed, spaced, non-ASCII, too long or not digits (in any span of the
    block, start or end) gives the reference's run, read by the typed decoder itself."""
    spans = [
        {
            "traceId": "t1",
            "spanId": f"s{n}",
            "name": "chat",
            "startTimeUnixNano": str(1_700_000_000_000_000_000 + n * 10**9),
            "endTimeUnixNano": str(1_700_000_000_500_000_000 + n * 10**9),
            "attributes": [
                {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
                {"key": "gen_ai.output.messages", "value": {"stringValue": CALL}},
            ],
        }
        for n in range(4)
    ]
    spans[2][key] = odd
    line = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]})
    path = tmp_path / "spans.jsonl"
    path.write_text(line + "\n" + line.replace('"t1"', '"t2"') + "\n")

    def typed_itself(why: str) -> Any:
        return otlpdecode.read_otel_lines(str(path), lambda head: why, 50)

    assert_typed_is_reference(path, path.read_bytes(), False, monkeypatch, typed_itself)


def test_a_number_too_large_in_an_unread_value_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The one difference (`decode.py`'s too): the reference decodes every value and
    refuses the line; the typed decoder never reads the value, so never sees the number."""
    span = {
        "spanId": "a",
        "name": "chat",
        "attributes": [
            {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
            {"key": "llm.invocation_parameters", "value": {"doubleValue": 0}},
        ],
    }
    line = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]})
    path = tmp_path / "t.jsonl"
    # (after the first 50 lines, which detection decodes in full on either path)
    bad = line.replace('"doubleValue": 0', '"doubleValue": 1e400')
    path.write_text("\n".join([line] * 50 + [bad]))
    monkeypatch.setattr(detect, "OTEL_TYPED_FROM", 0)
    run = load_run(path)
    assert run.read is not None and run.read.recognised == {"OTLP document": 51, "LLM span": 51}
    monkeypatch.setenv("EVALDSL_REFERENCE", "1")
    with pytest.raises(RunError, match="invalid JSON on line 51"):
        load_run(path)


#: Ways an OTLP JSON document (or array of them) goes wrong, or is not one the typed
#: decoder takes (another key beside `resourceSpans`, a flat span among the documents).
DOCUMENT_BREAKS = [
    lambda text: text[:-1],
    lambda text: text + " x",
    lambda text: text.replace('"spans": [', '"spans": {"x": [', 1).replace("]}]}", "]}}]}", 1),
    lambda text: text.replace('"attributes": [', '"attributes": 7, "was": [', 1),
    # (in a value the reader reads: one too large in a value it skips is not read)
    lambda text: text.replace('"spans": [', '"spans": [{"name": 1e400}, ', 1),
    lambda text: text.replace('"resourceSpans": ', '"schemaUrl": "x", "resourceSpans": ', 1),
    lambda text: text.replace('"resourceSpans": [', '"resourceSpans": [1, ', 1),
    lambda text: text.replace('"ok"', '"o\u2028k"', 1),
    lambda text: f'[{text}, {{"name": "llm", "context": {{"span_id": "s"}}}}]',
    lambda text: json.dumps({"choices": [{"message": {"content": "hi"}}]}),
]


@st.composite
def document_files(draw: st.DrawFn) -> tuple[bytes, bool]:
    """An OTLP JSON file's bytes (one document or an array), and whether it was broken."""
    documents = draw(st.lists(otlp_document(), min_size=1, max_size=3))
    value: Any = documents if len(documents) > 1 or draw(st.booleans()) else documents[0]
    text = json.dumps(value, indent=draw(st.sampled_from([None, 2])), ensure_ascii=False)
    broken = draw(st.sampled_from([False, False, False, True]))
    if broken:
        text = draw(st.sampled_from(DOCUMENT_BREAKS))(text)
    data = text.encode()
    if draw(st.integers(0, 9)) == 0:
        data = b"\xef\xbb\xbf" + data
    if draw(st.integers(0, 9)) == 0 and b'"ok"' in data:
        data, broken = data.replace(b'"ok"', b'"o\xffk"', 1), True  # not UTF-8
    if draw(st.integers(0, 5)) == 0 and b'"scope": {"name": "x"}' in data:
        # not UTF-8 where nobody reads (msgspec does not look into what it skips)
        data, broken = data.replace(b'"name": "x"', b'"name": "\xff"', 1), True
    return data, broken


@settings(
    max_examples=examples(200),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(document_files())
def test_typed_document_reading_is_the_reference(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: tuple[bytes, bool]
) -> None:
    data, broken = case
    path = tmp_path / "spans.json"
    path.write_bytes(data)

    def typed_itself(why: str) -> Any:
        def chosen(container: str, count: int) -> str:
            return why

        return otlpdecode.read_otel_document(str(path), data.removeprefix(b"\xef\xbb\xbf"), chosen)

    assert_typed_is_reference(path, data, broken, monkeypatch, typed_itself)


@pytest.mark.parametrize(
    "name",
    [
        "openinference-phoenix-spans/spans.jsonl",
        "openinference-phoenix-spans/spans.otlp.json",
        "otel-latitude-otlp/trace.otlp.json",
    ],
)
def test_real_span_files_read_typed_are_the_reference(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real OTel files of tests/fixtures/realworld, read by the typed decoder as a
    large file of theirs would be: the same run as the full reading, detected and named,
    and read by the typed decoder itself (lines, or a document)."""
    path = REAL / name
    data = path.read_bytes()

    def typed_itself(why: str) -> Any:
        if name.endswith(".jsonl"):
            return otlpdecode.read_otel_lines(str(path), lambda head: why, 50)
        return otlpdecode.read_otel_document(str(path), data, lambda container, count: why)

    assert_typed_is_reference(path, data, False, monkeypatch, typed_itself)
    # (each calls a tool and answers: two empty readings would agree too)
    kinds = {e.get("type") for e in typed_itself("otel").events}
    assert {"tool.call", "llm.response"} <= kinds, kinds


#: Keys spelled every way `otel.indexed` may meet them: indices with leading zeros or
#: non-ASCII digits, nested indices, a trailing dot, newlines inside a key.
_KEY_PARTS = st.sampled_from(["m", "p", "0", "1", "01", "٣", "12", "x", "", "\n", "a.b", "2\n"])
_KEYS = st.lists(st.lists(_KEY_PARTS, min_size=1, max_size=5).map(".".join), max_size=12)


@settings(max_examples=examples(400), deadline=None)
@given(_KEYS, st.sampled_from(["m", "p", "m.0.p", "m.1", "", "a.b", "x.٣", "m\n"]))
def test_raw_entries_are_the_dict_entries(keys: list[str], prefix: str) -> None:
    """`RawAttrs.entries` (undecoded values, its plans kept by keys) gives the entries
    `otel.indexed` gathers from a plain dict, for the same keys read twice."""
    plain = {key: n for n, key in enumerate(keys)}
    want = otel.indexed(plain, prefix)
    for _ in range(2):  # the second time from the kept plan
        raw = RawAttrs({k: msgspec.Raw(json.dumps(v).encode()) for k, v in plain.items()}, _loads)
        got = otel.indexed(raw, prefix)
        assert [dict(e.items()) for e in got] == want
        assert [list(e) for e in got] == [list(e) for e in want]


def _loads(raw: msgspec.Raw) -> Any:
    return orjson.loads(memoryview(raw))


def test_raw_entries_of_keys_holding_newlines() -> None:
    """Keys joined by newlines are not the keys when one holds a newline: such keys neither
    keep a plan nor take the plan of the keys they would join into."""
    for keys in (["m.0.a", "m.1.b"], ["m.0.a\nm.1.b"], ["m.0.a\nm.1.b"], ["m.0.a", "m.1.b"]):
        plain = {key: n for n, key in enumerate(keys)}
        raw = RawAttrs({k: msgspec.Raw(json.dumps(v).encode()) for k, v in plain.items()}, _loads)
        assert [dict(e.items()) for e in otel.indexed(raw, "m")] == otel.indexed(plain, "m")


@given(st.integers(min_value=0, max_value=otel.MAX_NANOS))
def test_span_times_are_written_as_strftime_writes_them(ns: int) -> None:
    """`otel.iso_time`'s texts of minutes (days and minutes of the day), seconds and
    milliseconds put together are `strftime`'s text of the time, made or kept: the time
    again, and the first millisecond of its minute, read from the minute's kept text."""
    for at in (ns, ns, ns - ns % 60_000_000_000):
        seconds = datetime.fromtimestamp(at // 1_000_000_000, tz=UTC).strftime("%Y-%m-%dT%H:%M:%S")
        assert otel.iso_time(at) == (f"{seconds}.{at // 1_000_000 % 1000:03d}Z" if at else None)


def test_small_values_read_again_are_shared_only_when_nobody_can_change_them(
    tmp_path: Path,
) -> None:
    """The typed reader keeps small attribute values it decoded (spans repeat their
    kinds, models, tool names): texts and numbers are shared, but a list or an object
    read twice is two values, so changing one call's arguments changes no other's."""
    args = {"kvlistValue": {"values": [{"key": "city", "value": {"stringValue": "Oslo"}}]}}

    def tool_span(n: int) -> dict[str, Any]:
        return {
            "spanId": f"s{n}",
            "name": "execute_tool",
            "startTimeUnixNano": str(1_700_000_000_000_000_000 + n),
            "attributes": [
                {"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}},
                {"key": "gen_ai.tool.name", "value": {"stringValue": "get_weather"}},
                {"key": "gen_ai.tool.call.id", "value": {"stringValue": f"c{n}"}},
                {"key": "gen_ai.tool.call.arguments", "value": args},
                {"key": "gen_ai.tool.call.result", "value": {"stringValue": "sunny"}},
            ],
        }

    path = tmp_path / "spans.jsonl"
    lines = [{"resourceSpans": [{"scopeSpans": [{"spans": [tool_span(n)]}]}]} for n in (1, 2)]
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    run = otlpdecode.read_otel_lines(str(path), lambda head: "OTLP", 50)
    assert run is not None
    calls = [e for e in run.events if e["type"] == "tool.call"]
    assert [c["arguments"] for c in calls] == [{"city": "Oslo"}] * 2
    assert calls[0]["arguments"] is not calls[1]["arguments"]
    assert calls[0]["name"] is calls[1]["name"]  # (the tool's name, kept and shared)


def test_a_value_its_table_holds_is_read_from_it_and_not_put_back() -> None:
    """A small value read from its decoder's table (which holds only values nobody can
    change) stays undecoded in the attributes, and a second read takes it from the table
    again; a value the table does not hold is decoded and put back, so a list read twice
    is one list, as in a plain dict."""
    table: dict[bytes, Any] = {b'"chat"': "chat"}
    attrs = RawAttrs.reading(msgspec.json.decode, table)()
    attrs["kind"] = msgspec.Raw(b'"chat"')
    attrs["ids"] = msgspec.Raw(b"[1, 2]")
    assert attrs["kind"] == "chat"
    assert attrs.raw("kind") == b'"chat"'  # (still its JSON: not put back)
    assert attrs["kind"] is table[b'"chat"']
    ids = attrs["ids"]
    assert ids == [1, 2] and attrs.raw("ids") is None
    ids.append(3)
    assert attrs["ids"] is ids
    assert dict(attrs.items()) == {"kind": "chat", "ids": [1, 2, 3]}


#: The keys of an LLM span's indexed output messages, spelled every way the readers may
#: meet them: OpenLLMetry's and OpenInference's names, indices with leading zeros or
#: non-ASCII digits, a message, part or call twice under one index, whole lists.
_OUTPUT_LEADS = ["gen_ai.completion", "llm.output_messages"]
_OUTPUT_INDICES = ["0", "1", "01", "٣"]
_OUTPUT_NAMES = {
    "gen_ai.completion": [
        "content",
        "role",
        "tool_calls",
        "tool_calls.0.name",
        "tool_calls.0.arguments",
        "tool_calls.0.id",
        "tool_calls.1.name",
        "tool_calls.00.name",
    ],
    "llm.output_messages": [
        "message.content",
        "message.role",
        "message.contents",
        "message.contents.0.message_content.type",
        "message.contents.0.message_content.text",
        "message.contents.1.message_content.text",
        "message.contents.01.message_content.text",
        "message.tool_calls",
        "message.tool_calls.0.tool_call.function.name",
        "message.tool_calls.0.tool_call.function.arguments",
        "message.tool_calls.0.tool_call.id",
        "message.tool_calls.1.tool_call.function.name",
    ],
}


@st.composite
def _output_keys(draw: st.DrawFn) -> list[str]:
    """Keys of one convention's messages (the other's or a whole list now and then)."""
    lead = draw(st.sampled_from(_OUTPUT_LEADS))
    names = st.sampled_from(_OUTPUT_NAMES[lead])
    keys = [
        f"{lead}.{index}.{name}"
        for index, name in draw(
            st.lists(st.tuples(st.sampled_from(_OUTPUT_INDICES), names), max_size=8)
        )
    ]
    others = st.sampled_from([*_OUTPUT_LEADS, "output.value", "gen_ai.completion.0.content"])
    return keys + draw(st.lists(others, max_size=1 if draw(st.booleans()) else 0))


_OUTPUT_VALUE = st.one_of(
    st.sampled_from(["text", "f", "g", '{"x": 1}', "[1", "", None, 3, True]),
    st.lists(st.sampled_from(["a", 1, None]), max_size=2),
    st.lists(
        st.fixed_dictionaries({"content": st.sampled_from(["nested", 2]), "name": st.just("h")}),
        max_size=2,
    ),
)


@settings(max_examples=examples(600), deadline=None)
@given(
    st.sampled_from([("llm.request.type", "chat"), ("openinference.span.kind", "LLM")]),
    _output_keys(),
    st.data(),
)
def test_planned_output_messages_are_the_readers(
    kind: tuple[str, Any], keys: list[str], data: st.DataObject
) -> None:
    """An LLM span's output (answer text, tool calls) read by the plan of its keys
    (`spanplan`, from undecoded attributes, twice: the second from the plan `otel.keys_of`
    kept) is what `otel.py`'s readers give from a plain dict; only a span with a whole
    list where the readers take one may be left to them."""
    plain = dict([kind, *((key, data.draw(_OUTPUT_VALUE)) for key in keys)])

    def events(attrs: dict[str, Any]) -> list[dict[str, Any]] | str:
        span = otel.Span("chat", "s1", attrs, 1, 2, "1", "2", [], False, None)
        trace = Trace("otel", "<spans>", "test")
        try:
            otel.read_spans([span], trace)
        except BadValue as bad:  # (a tool call's name that is not text: the same error)
            return str(bad)
        return trace.events

    want = events(plain)
    for _ in range(2):
        raw = RawAttrs({k: msgspec.Raw(json.dumps(v).encode()) for k, v in plain.items()}, _loads)
        try:
            attrs = RawAttrs(
                {k: msgspec.Raw(json.dumps(v).encode()) for k, v in plain.items()}, _loads
            )
            planned: Any = spanplan.indexed_output(attrs, spanplan.output_plan(tuple(attrs)))
        except BadValue as bad:  # (the plan refuses a name the readers refuse)
            planned = str(bad)
            assert planned == want
        whole = any(key in plain for key in _OUTPUT_LEADS) or any(
            key.endswith((".tool_calls", ".message.contents", ".message.tool_calls"))
            for key in plain
        )
        assert whole or planned is not spanplan.UNPLANNED
        assert events(raw) == want


def test_spans_of_very_many_keys_are_read_as_the_readers_read_them() -> None:
    """Plans are not kept for spans of more keys than a kept plan may hold (they would
    keep every key alive after the file): such spans are planned each time, and read the
    same, twice over, by `RawAttrs.entries` and by the output plan."""
    plain: dict[str, Any] = {"openinference.span.kind": "LLM"}
    for i in range(300):
        plain[f"llm.input_messages.{i}.message.role"] = "tool" if i % 7 == 0 else "user"
        plain[f"llm.input_messages.{i}.message.content"] = f"m{i}"
    plain["llm.input_messages.0.message.tool_call_id"] = "c1"
    plain["llm.output_messages.0.message.content"] = "done"
    plain["llm.output_messages.0.message.tool_calls.0.tool_call.function.name"] = "f"

    def events(attrs: dict[str, Any]) -> list[dict[str, Any]]:
        trace = Trace("otel", "<spans>", "test")
        trace.call("f", {}, "c1")  # a call waiting: the history is read for its result
        otel.read_spans([otel.Span("chat", "s", attrs, 1, 2, "1", "2", [], False, None)], trace)
        return trace.events

    want = events(plain)
    assert want[-1]["type"] == "tool.call" and want[1]["type"] == "tool.result"
    for _ in range(2):
        raw = RawAttrs({k: msgspec.Raw(json.dumps(v).encode()) for k, v in plain.items()}, _loads)
        assert events(raw) == want
        entries = otel.indexed(raw, "llm.input_messages")
        assert [dict(e.items()) for e in entries] == otel.indexed(plain, "llm.input_messages")


def test_the_head_detection_decoded_is_taken_only_for_its_own_text(tmp_path: Path) -> None:
    """`read_otel_lines` takes a head line's value from detection's (`decoded`) only when
    detection decoded that very text (with or without its newline) and it holds no
    surrogate escape, which detection alone mends: any other line is decoded again."""
    chat = {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}}
    span = {"name": "chat", "spanId": "a", "attributes": [chat]}
    lines = [
        json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [dict(span, name=name)]}]}]})
        for name in ("one", "two", "three\\ud83d", "four")
    ]
    path = tmp_path / "spans.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    texts = [lines[0].encode() + b"\n", lines[1].encode(), lines[2].encode() + b"\n", b"{}\n"]
    kept = [{"kept": i} for i in range(4)]
    heads: list[list[Any]] = []

    def why(head: list[Any]) -> str:
        heads.append(head)
        return "otel"

    run = otlpdecode.read_otel_lines(str(path), why, 50, list(zip(texts, kept, strict=True)))
    assert run is not None
    [head] = heads
    assert head[0] is kept[0] and head[1] is kept[1]  # its own text: detection's value
    assert head[2] is not kept[2] and head[3] is not kept[3]
    assert head[2:] == [orjson.loads(line) for line in lines[2:]]


def test_the_head_is_the_first_lines_holding_more_than_white_space(tmp_path: Path) -> None:
    """The head detection's reason is given is the file's first lines that hold more than
    white space, as many as asked, the last one read without a newline too."""
    chat = {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}}
    lines = [
        json.dumps(
            {
                "resourceSpans": [
                    {"scopeSpans": [{"spans": [{"name": n, "spanId": n, "attributes": [chat]}]}]}
                ]
            }
        )
        for n in ("one", "two", "three")
    ]
    path = tmp_path / "spans.jsonl"
    path.write_text(f"\n \t\n{lines[0]}\n\r\n\n{lines[1]}\n  \n{lines[2]}", encoding="utf-8")
    heads: list[list[Any]] = []

    def why(head: list[Any]) -> str:
        heads.append(head)
        return "otel"

    for asked in (1, 2, 3, 50):
        run = otlpdecode.read_otel_lines(str(path), why, asked)
        assert run is not None and len(run.events) == 6
        assert heads.pop() == [orjson.loads(line) for line in lines[:asked]]


def test_a_lone_surrogate_in_the_head_is_read_as_the_full_reader_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Detection reads a lone surrogate escape as U+FFFD; the typed reader gives the full
    reader's run or error for a head line holding one, read or not."""
    for key in ("gen_ai.output.messages", "unread.attribute"):
        span = {
            "name": "chat",
            "spanId": "a",
            "attributes": [
                {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
                {"key": key, "value": {"stringValue": "cut \\ud83d"}},
            ],
        }
        line = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]})
        data = (line.replace("\\\\ud83d", "\\ud83d") + "\n").encode() * 2
        assert b"\\ud83d" in data and b"\\\\ud83d" not in data
        path = tmp_path / "spans.jsonl"
        path.write_bytes(data)
        assert_typed_is_reference(path, data, True, monkeypatch, lambda why: None)


@pytest.mark.parametrize("separator", ["\x85", "\u2028", "\u2029"])
@pytest.mark.parametrize("other", ["", "é", "—"])
def test_a_line_separator_inside_a_string_is_read_as_the_full_reader_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, separator: str, other: str
) -> None:
    """U+0085, U+2028 and U+2029 are text inside a JSON string: both readers read the
    span (the full reader's `str.splitlines` once ended its line there, an error), whatever
    other non-ASCII text (`é` leads with C3, `—` with E2, as U+2028 does) is on the line."""
    span = {
        "name": "chat",
        "attributes": [
            {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
            {"key": "gen_ai.output.messages", "value": {"stringValue": f"o{separator}k{other}"}},
        ],
    }
    document = {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}
    data = (json.dumps(document, ensure_ascii=False) + "\n").encode() * 2  # JSONL
    path = tmp_path / "spans.jsonl"
    path.write_bytes(data)

    def typed_itself(why: str) -> Any:
        return otlpdecode.read_otel_lines(str(path), lambda head: why, 50)

    assert_typed_is_reference(path, data, False, monkeypatch, typed_itself)
    monkeypatch.setattr(detect, "OTEL_TYPED_FROM", 0)
    run = outcome(path, "otel")
    assert not isinstance(run, tuple), run  # a run, not an error
    assert f"o{separator}k{other}" in [e.get("output") for e in run.events], run.events


def _phoenix(span_id: str, kind: str, parent: str | None, **attributes: Any) -> dict[str, Any]:
    """A flat span as Phoenix exports it, of the OpenInference `kind`, a second apart."""
    second = int(span_id[1:])
    return {
        "name": kind.lower(),
        "context": {"trace_id": "t1", "span_id": span_id},
        "parent_id": parent,
        "span_kind": kind,
        "start_time": f"2024-12-03T21:00:0{second}+00:00",
        "end_time": f"2024-12-03T21:00:0{second}.5+00:00",
        "attributes": {"openinference.span.kind": kind, **attributes},
    }


def test_flat_spans_written_twice_or_around_another_call_are_read_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Phoenix's span JSONL, read typed as the full reader reads it: a span exported again
    is read once, an LLM span around another (by `parent_id`) is left out."""
    answer = {"llm.output_messages.0.message.content": "hi", "llm.token_count.prompt": 5}
    spans = [
        _phoenix("s1", "AGENT", None),
        _phoenix("s2", "LLM", "s1", **answer),
        _phoenix("s3", "LLM", "s2", **answer),
        _phoenix("s4", "LLM", "s1", **answer),
    ]
    data = "".join(json.dumps(s) + "\n" for s in [*spans, spans[2]]).encode()
    path = tmp_path / "spans.jsonl"
    path.write_bytes(data)

    def typed_itself(why: str) -> Any:
        return otlpdecode.read_otel_lines(str(path), lambda head: why, 50)

    assert_typed_is_reference(path, data, False, monkeypatch, typed_itself)
    run = typed_itself("otel")
    assert [e["type"] for e in run.events].count("llm.response") == 2
    assert run.read.skipped == {
        "`AGENT` spans (OpenInference)": 1,
        spantree.REPEATED: 1,
        spantree.WRAPPER: 1,
    }


#: The keys the OTel readers look for, each group in the order the readers take the first
#: of them (as the module doc of `otel.py` lists them), and what `SpanKeys` calls it.
_LOOKED_FOR = {
    "tool_names": ("gen_ai.tool.name", "tool.name", "traceloop.entity.name"),
    "call_ids": ("gen_ai.tool.call.id", "tool_call.id"),
    "tool_results": (
        "gen_ai.tool.call.result",
        "gen_ai.tool.result.value",
        "output.value",
        "traceloop.entity.output",
    ),
    "tool_arguments": ("gen_ai.tool.call.arguments", "input.value", "traceloop.entity.input"),
    "models": ("gen_ai.request.model", "gen_ai.response.model", "llm.model_name"),
    "tokens_in": (
        "gen_ai.usage.input_tokens",
        "gen_ai.usage.prompt_tokens",
        "llm.token_count.prompt",
    ),
    "tokens_out": (
        "gen_ai.usage.output_tokens",
        "gen_ai.usage.completion_tokens",
        "llm.token_count.completion",
    ),
    "providers": ("gen_ai.provider.name", "gen_ai.system"),
}
_TESTED = {
    "oi_kind": ("openinference.span.kind",),
    "tl_kind": ("traceloop.span.kind",),
    "operation": ("gen_ai.operation.name",),
    "tool_name": ("gen_ai.tool.name",),
    "request_type": ("llm.request.type",),
    "output_messages": ("gen_ai.output.messages",),
    "completion": ("gen_ai.completion",),
    "finish": ("gen_ai.response.finish_reasons",),
    "is_error": ("gen_ai.tool.result.is_error",),
    "error_type": ("error.type",),
}
_SPAN_KEYS = sorted(
    {k for keys in (*_LOOKED_FOR.values(), *_TESTED.values()) for k in keys}
    | {"session.id", "gen_ai.completion.0.content", "llm.input_messages.0.message.role"}
)


@given(keys=st.lists(st.sampled_from(_SPAN_KEYS), unique=True, max_size=12))
@settings(max_examples=300, deadline=None)
def test_a_key_sets_plan_says_what_testing_each_key_says(keys: list[str]) -> None:
    """`otel.keys_of` works out once per key set which of the keys the readers look for a
    span has (the readers then test none of them on each span): each flag must be what a
    test of its keys gives, and each group the keys of it the span has, in the readers'
    order; the same again from the kept plan, after other key sets' plans were made."""
    for order in (keys, keys[::-1], keys):
        a = dict.fromkeys(order, "v")
        has = otel.keys_of(a)
        assert has.keys == tuple(order)
        for field, names in _LOOKED_FOR.items():
            assert getattr(has, field) == tuple(n for n in names if n in a), field
        for field, names in _TESTED.items():
            assert getattr(has, field) == any(n in a for n in names), field


@pytest.mark.parametrize("flat_first", [False, True])
def test_a_kind_kept_by_its_json_is_kept_per_decoding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flat_first: bool
) -> None:
    """A span's kind is kept by its kind attributes' JSON undecoded (`otel._kind`): the
    same JSON is an AnyValue in an OTLP span (the text `TOOL`) and an object in a flat span
    of the same keys (a kind that is not text: the run's error), read either way first."""
    value = {"stringValue": "TOOL"}
    otlp = {
        "resourceSpans": [
            {
                "scopeSpans": [
                    {
                        "spans": [
                            {
                                "name": "t",
                                "spanId": "s1",
                                "attributes": [{"key": "openinference.span.kind", "value": value}],
                            }
                        ]
                    }
                ]
            }
        ]
    }
    flat = {
        "name": "f",
        "context": {"trace_id": "t1", "span_id": "s2"},
        "attributes": {"openinference.span.kind": value},
    }
    lines = [flat, otlp] if flat_first else [otlp, flat]
    data = b"".join(orjson.dumps(line) + b"\n" for line in lines)  # (compact: one JSON)
    path = tmp_path / "spans.jsonl"
    path.write_bytes(data)
    assert_typed_is_reference(path, data, False, monkeypatch, lambda why: None)
    found = outcome(path, "otel")
    assert found[0] == "error" and "openinference.span.kind" in found[1], found


@pytest.mark.parametrize("typed", [False, True])
@pytest.mark.parametrize(("error_type", "is_error"), [(None, False), ("timeout", True)])
def test_a_tool_span_with_an_error_type_is_an_error_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, typed: bool, error_type: Any, is_error: bool
) -> None:
    """An `execute_tool` span with `error.type` (set, the GenAI conventions say, only "if
    the operation ended in an error") and no ERROR status gave a successful result, in the
    full reader and the typed decoder alike."""
    attributes = [
        {"key": "gen_ai.operation.name", "value": {"stringValue": "execute_tool"}},
        {"key": "gen_ai.tool.name", "value": {"stringValue": "search"}},
        {"key": "gen_ai.tool.call.result", "value": {"stringValue": "partial"}},
    ]
    if error_type is not None:
        attributes.append({"key": "error.type", "value": {"stringValue": error_type}})
    span = {
        "traceId": "t1",
        "spanId": "a",
        "name": "execute_tool search",
        "startTimeUnixNano": "1700000000000000000",
        "endTimeUnixNano": "1700000001000000000",
        "attributes": attributes,
    }
    path = tmp_path / "spans.jsonl"
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}) + "\n")
    if typed:
        monkeypatch.setattr(detect, "OTEL_TYPED_FROM", 0)
    else:
        monkeypatch.setenv("EVALDSL_REFERENCE", "1")
    run = load_run(path)
    results = [e for e in run.events or () if e["type"] == "tool.result"]
    assert [(r["output"], bool(r.get("isError"))) for r in results] == [("partial", is_error)]
