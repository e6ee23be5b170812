"""What an OTel trace records of its messages: the GenAI details event, and content never
captured.

The current GenAI conventions put an inference's messages either on its span
(`gen_ai.input.messages`, `gen_ai.output.messages`) or on the span's
`gen_ai.client.inference.operation.details` event: both are read alike. Instrumentations
capture message content only when asked; a span that records none has an unknown answer
(and a tool span without arguments unknown arguments), an error verdict, never "" or {}.
Each trace is read by the full reader and the typed decoder (document and JSONL), which
must agree.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evaldsl.runs import detect, otlpdecode
from evaldsl.runs.detect import load_run
from evaldsl.runs.model import Run

TRACE_ID = "0af7651916cd43dd8448eb211c80319c"


def _text(value: str) -> dict[str, Any]:
    return {"stringValue": value}


def _attrs(**values: Any) -> list[dict[str, Any]]:
    """OTLP attributes from keyword arguments (`__` for `.`), text or whole numbers."""
    out = []
    for key, value in values.items():
        v = {"intValue": str(value)} if isinstance(value, int) else _text(value)
        out.append({"key": key.replace("__", "."), "value": v})
    return out


def _span(n: int, name: str, attributes: list[dict[str, Any]], **more: Any) -> dict[str, Any]:
    start = 1_730_000_000_000_000_000 + n * 1_000_000_000
    return {
        "traceId": TRACE_ID,
        "spanId": f"{n:016x}",
        "name": name,
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + 500_000_000),
        "attributes": attributes,
        **more,
    }


def _chat(n: int, *, events: list[dict[str, Any]] | None = None, **extra: Any) -> dict[str, Any]:
    attributes = _attrs(
        gen_ai__operation__name="chat",
        gen_ai__request__model="gpt-4o",
        gen_ai__usage__input_tokens=50,
        gen_ai__usage__output_tokens=20,
        **extra,
    )
    return _span(n, "chat gpt-4o", attributes, **({"events": events} if events else {}))


def _tool(n: int, **extra: Any) -> dict[str, Any]:
    attributes = _attrs(
        gen_ai__operation__name="execute_tool",
        gen_ai__tool__name="get_weather",
        gen_ai__tool__call__id="call_1",
        **extra,
    )
    return _span(n, "execute_tool get_weather", attributes)


def _document(*spans: dict[str, Any]) -> dict[str, Any]:
    return {
        "resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {}, "spans": list(spans)}]}]
    }


def _read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, doc: dict[str, Any]) -> Run:
    """`doc` read by the full reader and by the typed decoder, as a document and as JSONL
    (which must all agree)."""
    path = tmp_path / "trace.otlp.json"
    path.write_text(json.dumps(doc, indent=1), encoding="utf-8")
    lines = tmp_path / "trace.otlp.jsonl"
    lines.write_text(json.dumps(doc) + "\n", encoding="utf-8")
    monkeypatch.setattr(detect, "OTEL_TYPED_FROM", 0)
    typed = otlpdecode.read_otel_document(str(path), path.read_bytes(), lambda *_: "test")
    typed_lines = otlpdecode.read_otel_lines(str(lines), lambda _: "test", 1)
    assert typed is not None and typed_lines is not None, "the typed decoder gave the file up"
    with monkeypatch.context() as m:
        m.setenv("EVALDSL_REFERENCE", "1")
        full = load_run(path)
    assert full.events == typed.events == typed_lines.events
    assert full.read is not None and typed.read is not None and typed_lines.read is not None
    assert full.read.notes == typed.read.notes == typed_lines.read.notes
    return full


def _of(run: Run, kind: str) -> list[dict[str, Any]]:
    assert isinstance(run.events, list)
    return [e for e in run.events if e["type"] == kind]


OUTPUT = [
    {
        "role": "assistant",
        "parts": [
            {
                "type": "tool_call",
                "id": "call_1",
                "name": "get_weather",
                "arguments": {"city": "Paris"},
            },
            {"type": "text", "content": "Checking the weather."},
        ],
        "finish_reason": "tool_call",
    }
]
INPUT = [{"role": "user", "parts": [{"type": "text", "content": "Weather in Paris?"}]}]


def _details(**messages: Any) -> dict[str, Any]:
    """A `gen_ai.client.inference.operation.details` event carrying `messages` (as JSON)."""
    attributes = [
        {"key": key.replace("__", "."), "value": _text(json.dumps(value))}
        for key, value in messages.items()
    ]
    return {
        "name": "gen_ai.client.inference.operation.details",
        "timeUnixNano": "1730000001000000000",
        "attributes": attributes,
    }


def test_the_details_event_s_output_messages_are_the_span_s(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    event = _details(gen_ai__input__messages=INPUT, gen_ai__output__messages=OUTPUT)
    run = _read(tmp_path, monkeypatch, _document(_chat(1, events=[event])))
    (response,) = _of(run, "llm.response")
    assert response["output"] == "Checking the weather."
    (call,) = _of(run, "tool.call")
    assert (call["name"], call["arguments"], call["callId"]) == (
        "get_weather",
        {"city": "Paris"},
        "call_1",
    )


def test_the_details_event_s_input_messages_answer_a_waiting_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tool's result in the next inference's history, on its details event."""
    history = [
        *INPUT,
        OUTPUT[0],
        {
            "role": "tool",
            "parts": [{"type": "tool_call_response", "id": "call_1", "response": "sunny"}],
        },
    ]
    answer = [{"role": "assistant", "parts": [{"type": "text", "content": "Sunny."}]}]
    first = _details(gen_ai__input__messages=INPUT, gen_ai__output__messages=OUTPUT)
    second = _details(gen_ai__input__messages=history, gen_ai__output__messages=answer)
    run = _read(
        tmp_path, monkeypatch, _document(_chat(1, events=[first]), _chat(2, events=[second]))
    )
    (result,) = _of(run, "tool.result")
    assert (result["callId"], result["output"]) == ("call_1", "sunny")
    assert [r["output"] for r in _of(run, "llm.response")] == ["Checking the weather.", "Sunny."]


def test_the_span_s_own_output_messages_win_over_the_event_s(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    own = [{"role": "assistant", "parts": [{"type": "text", "content": "own"}]}]
    event = _details(gen_ai__output__messages=OUTPUT)
    span = _chat(1, events=[event], gen_ai__output__messages=json.dumps(own))
    run = _read(tmp_path, monkeypatch, _document(span))
    assert [r["output"] for r in _of(run, "llm.response")] == ["own"]
