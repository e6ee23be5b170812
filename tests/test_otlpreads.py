"""A span file checked for what its case reads (`runs/reads.py`: arguments and results of
the tools no assertion reads left unparsed, no times when none is read) gives the
verdicts, messages and found values of the same file read in full (`load_run`, which
knows no case), on random programs over random OTLP files in the three conventions,
read whole and by the typed decoder, through the reference and the generated pass.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

import evaldsl
from evaldsl.runs import detect, load_run, passes
from evaldsl.runs.reads import reading, reads_of
from tests.fuzzing import lenient
from tests.test_codegen import KEYS, TOOLS, json_value, programs
from tests.test_otlpdecode import any_value

#: Call ids that spans share: a tool span may answer a call of another tool by its id.
CALL_IDS = ["c1", "c2", "c3", None]
#: Results as tools write them: JSON text of an object or a list (parsed when read),
#: other text, text led by white space, a value that is not text.
results = st.one_of(
    st.dictionaries(st.sampled_from(KEYS), json_value, max_size=3).map(json.dumps),
    st.lists(json_value, max_size=2).map(json.dumps),
    st.sampled_from(["Paris", "2001", ' {"city": "Oslo"}', "not json {", "", "[1, 2"]),
    json_value,
)
arguments = st.one_of(
    st.dictionaries(st.sampled_from(KEYS), json_value, max_size=3).map(json.dumps),
    st.sampled_from(['{"city": "Paris", "limit": 7}', "{not json", '"Oslo"', "[]"]),
    json_value,
)


@st.composite
def llm_attrs(draw: st.DrawFn) -> list[tuple[str, Any]]:
    """An LLM span's attributes in one of the three conventions: usage, an answer or tool
    calls (arguments as JSON text or a value)."""
    convention = draw(st.integers(0, 2))
    calls = draw(
        st.lists(
            st.tuples(st.sampled_from(TOOLS), arguments, st.sampled_from(CALL_IDS)), max_size=2
        )
    )
    answer = draw(st.sampled_from(["The weather is sun", "rain in Oslo", "", "7 C"]))
    usage = (draw(st.integers(0, 3000)), draw(st.integers(0, 100)))
    if convention == 0:
        parts: list[dict[str, Any]] = [{"type": "text", "content": answer}]
        for name, args, cid in calls:
            part = {"type": "tool_call", "name": name, "arguments": args}
            if cid is not None:
                part["id"] = cid
            parts.append(part)
        out = [{"role": "assistant", "parts": parts}]
        return [
            ("gen_ai.operation.name", "chat"),
            ("gen_ai.request.model", "gpt-4o-mini"),
            ("gen_ai.output.messages", json.dumps(out)),
            ("gen_ai.usage.input_tokens", usage[0]),
            ("gen_ai.usage.output_tokens", usage[1]),
        ]
    if convention == 1:
        lead = "llm.output_messages.0.message"
        items: list[tuple[str, Any]] = [
            ("openinference.span.kind", "LLM"),
            ("llm.token_count.prompt", usage[0]),
            ("llm.token_count.completion", usage[1]),
            (f"{lead}.role", "assistant"),
            (f"{lead}.content", answer),
        ]
        return items + _flattened(calls, f"{lead}.tool_calls.{{}}.tool_call", "function.")
    items = [
        ("llm.request.type", "chat"),
        ("gen_ai.usage.prompt_tokens", usage[0]),
        ("gen_ai.usage.completion_tokens", usage[1]),
        ("gen_ai.completion.0.content", answer),
    ]
    return items + _flattened(calls, "gen_ai.completion.0.tool_calls.{}", "")


def _flattened(
    calls: list[tuple[str, Any, str | None]], lead: str, function: str
) -> list[tuple[str, Any]]:
    """Tool calls as flattened attributes (`lead`: a call's key, `{}` its index;
    `function`: what its name and arguments sit under)."""
    items: list[tuple[str, Any]] = []
    for i, (name, args, cid) in enumerate(calls):
        call = lead.format(i)
        items += [(f"{call}.{function}name", name), (f"{call}.{function}arguments", args)]
        if cid is not None:
            items.append((f"{call}.id", cid))
    return items


@st.composite
def tool_attrs(draw: st.DrawFn) -> list[tuple[str, Any]]:
    """A tool span's attributes in one of the three conventions: its name, call id,
    arguments (read when no model asked for the call) and result (or none)."""
    convention = draw(st.integers(0, 2))
    name = draw(st.sampled_from(TOOLS))
    keys = [
        ("gen_ai.tool.name", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result"),
        ("tool.name", "input.value", "output.value"),
        ("traceloop.entity.name", "traceloop.entity.input", "traceloop.entity.output"),
    ][convention]
    kind = [
        ("gen_ai.operation.name", "execute_tool"),
        ("openinference.span.kind", "TOOL"),
        ("traceloop.span.kind", "tool"),
    ][convention]
    items: list[tuple[str, Any]] = [kind, (keys[0], name)]
    cid = draw(st.sampled_from(CALL_IDS))
    if cid is not None:
        items.append(("gen_ai.tool.call.id", cid))
    if draw(st.booleans()):
        items.append((keys[1], draw(arguments)))
    if draw(st.integers(0, 3)):
        items.append((keys[2], draw(results)))
    return items


@st.composite
def span_files(draw: st.DrawFn) -> list[str]:
    """OTLP JSONL: each line an export of a few spans (model calls, tool spans, failed
    spans, an agent span), times in order or not."""
    lines = []
    clock = 1_700_000_000_000_000_000
    for _ in range(draw(st.integers(1, 4))):
        spans = []
        for _ in range(draw(st.integers(1, 5))):
            attrs = draw(st.one_of(llm_attrs(), tool_attrs(), st.just([("x", 1)])))
            clock += draw(st.sampled_from([1, 1_000_000, 61_000_000_000]))
            span: dict[str, Any] = {
                "traceId": "t1",
                "spanId": f"s{clock}",
                "name": "span",
                "startTimeUnixNano": str(clock),
                "endTimeUnixNano": str(clock + draw(st.sampled_from([0, 5_000_000]))),
                "attributes": [{"key": k, "value": any_value(v)} for k, v in attrs],
            }
            if draw(st.integers(0, 7)) == 0:
                span["status"] = {"code": 2, "message": "tool failed"}
            spans.append(span)
        scope = {"scope": {"name": "x"}, "spans": spans}
        lines.append(json.dumps({"resourceSpans": [{"resource": {}, "scopeSpans": [scope]}]}))
    return lines


def _verdicts(result: Any) -> tuple[Any, ...]:
    return result.error, [(v.status, v.message, v.actual, v.expected) for v in result.verdicts]


@pytest.fixture(params=["whole", "typed"])
def _reading(request: pytest.FixtureRequest) -> Iterator[None]:
    """Files read whole, or by the typed decoder whatever their size."""
    size = 0 if request.param == "typed" else detect.OTEL_TYPED_FROM
    with mock.patch.object(detect, "OTEL_TYPED_FROM", size):
        yield


@pytest.mark.usefixtures("_reading")
@pytest.mark.parametrize("generated", [False, True])
@given(statements=programs, lines=span_files())
@lenient(60)
def test_a_span_file_read_for_its_case_checks_as_one_read_in_full(
    statements: list[str], lines: list[str], generated: bool, tmp_path_factory: Any
) -> None:
    path = tmp_path_factory.mktemp("otlp") / "spans.jsonl"
    path.write_text("\n".join(lines) + "\n")
    program = evaldsl.compile("\n".join(statements))
    bound = 0 if generated else passes.GENERATE_FROM
    with mock.patch.object(passes, "GENERATE_FROM", bound):
        try:
            full = program.check(load_run(path))
        except evaldsl.RunError as err:  # (a file the reader refuses: refused alike)
            full = err
        read = program.check(path)
    if isinstance(full, evaldsl.RunError):
        assert read.error == str(full)
    else:
        assert _verdicts(read) == _verdicts(full)


def test_a_reading_for_a_case_parses_only_what_it_reads(tmp_path: Path) -> None:
    """The reading is narrowed (else the test above compares a reading with itself): a
    call of a tool no assertion reads keeps its arguments and result as written, no
    event has a time; the tools read are parsed, and `load_run` reads everything."""
    attrs = [
        [
            ("gen_ai.operation.name", "execute_tool"),
            ("gen_ai.tool.name", name),
            ("gen_ai.tool.call.arguments", '{"city": "Paris"}'),
            ("gen_ai.tool.call.result", '{"temp": 41}'),
        ]
        for name in ("search", "get_weather")
    ]
    spans = [
        {
            "name": "t",
            "spanId": f"s{i}",
            "traceId": "t1",
            "startTimeUnixNano": str(1_700_000_000_000_000_000 + i),
            "endTimeUnixNano": str(1_700_000_000_000_000_001 + i),
            "attributes": [{"key": k, "value": any_value(v)} for k, v in items],
        }
        for i, items in enumerate(attrs)
    ]
    path = tmp_path / "spans.json"
    path.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}))
    case = evaldsl.compile('tool get_weather args $.city == "Paris"').cases[0]
    with reading(reads_of(case.needs)):
        narrow = load_run(path).events
    assert narrow is not None
    calls = [e for e in narrow if e["type"] in ("tool.call", "tool.result")]
    assert [e.get("arguments", e.get("output")) for e in calls] == [
        '{"city": "Paris"}',
        '{"temp": 41}',
        {"city": "Paris"},
        '{"temp": 41}',
    ]
    assert not any("at" in e for e in narrow)
    full = load_run(path).events
    assert full is not None
    assert [e.get("arguments", e.get("output")) for e in full if "callId" in e] == [
        {"city": "Paris"},
        {"temp": 41},
        {"city": "Paris"},
        {"temp": 41},
    ]
    assert all("at" in e for e in full)
