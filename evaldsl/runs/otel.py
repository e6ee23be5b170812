"""Read an OpenTelemetry trace (OTLP JSON) as a trace of synthetic traceplay events.

Takes OTLP JSON (`resourceSpans[].scopeSpans[].spans[]`, format `otel`), or a list of such
documents, and gives the events its spans stand for and the run's latency. Spans are taken in
start order:
- a span with `gen_ai.operation.name` = `execute_tool`, or with a `gen_ai.tool.name`, is a
  `tool.call` (`name` from `gen_ai.tool.name`, `arguments` parsed from
  `gen_ai.tool.call.arguments`, `callId` from `gen_ai.tool.call.id` or the span id), plus
  a `tool.result` when it records `gen_ai.tool.call.result` or failed;
- a span whose operation is `chat`, `text_completion` or `generate_content`, or which names
  a `gen_ai.system`/`gen_ai.provider.name` (other than agent and embedding operations), is
  an `llm.request` at its start and an `llm.response` at its end: usage from
  `gen_ai.usage.input_tokens`/`output_tokens` (or `prompt_tokens`/`completion_tokens`),
  answer text from `gen_ai.output.messages`, `gen_ai.completion`,
  `gen_ai.completion.0.content` or a `gen_ai.choice` span event, status 500 if it failed;
- any span with status code 2 (ERROR) adds an `agent.error` with the status message (or
  the span's `exception.message`);
- other spans are skipped. `at` is the ISO time of the span's start or end, and the run's
  `latency_ms` is the time from the first span's start to the last span's end.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import orjson

from evaldsl.runs.model import Run, RunError
from evaldsl.runs.providers import parse_json_text
from evaldsl.runs.text import normalized_usage

_LLM_OPERATIONS = frozenset({"chat", "text_completion", "generate_content"})
_NOT_LLM_OPERATIONS = frozenset({"execute_tool", "embeddings", "create_agent", "invoke_agent"})
_STATUS_ERROR = (2, "STATUS_CODE_ERROR")


def otel_run(doc: Any, path: str) -> Run:
    """The `Run` an OTLP JSON document read from `path` stands for."""
    events, latency = otel_events(doc, path=path)
    return Run(events=events, path=path, format="otel", latency_ms=latency)


def otel_events(doc: Any, *, path: str = "<value>") -> tuple[list[dict[str, Any]], float | None]:
    """The events an OTLP JSON trace stands for, and its latency in ms (see the module doc)."""
    docs = doc if isinstance(doc, list) else [doc]
    if not docs or not all(isinstance(d, dict) and "resourceSpans" in d for d in docs):
        raise RunError(
            'not an OTLP JSON trace: no "resourceSpans"',
            path=path,
            hint="export spans with the OTLP JSON exporter (resourceSpans[].scopeSpans[].spans[])",
        )
    spans = sorted(
        _spans(docs),
        key=lambda s: (_nanos(s.get("startTimeUnixNano")), _nanos(s.get("endTimeUnixNano"))),
    )
    events: list[dict[str, Any]] = []
    for span in spans:
        events.extend(_span_events(span))
    for seq, event in enumerate(events):
        event["seq"] = seq
    starts = [_nanos(s.get("startTimeUnixNano")) for s in spans if s.get("startTimeUnixNano")]
    ends = [_nanos(s.get("endTimeUnixNano")) for s in spans if s.get("endTimeUnixNano")]
    latency = (max(ends) - min(starts)) / 1e6 if starts and ends else None
    return events, latency


def _spans(docs: list[Any]) -> Iterator[dict[str, Any]]:
    for doc in docs:
        for resource in _list(doc.get("resourceSpans")):
            scopes = resource.get("scopeSpans", resource.get("instrumentationLibrarySpans"))
            for scope in _list(scopes):
                yield from _list(scope.get("spans"))


def _list(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _span_events(span: dict[str, Any]) -> list[dict[str, Any]]:
    attrs_ = attributes(span.get("attributes"))
    operation = attrs_.get("gen_ai.operation.name")
    raw_status = span.get("status")
    status: dict[str, Any] = raw_status if isinstance(raw_status, dict) else {}
    failed = status.get("code") in _STATUS_ERROR
    span_id = str(span.get("spanId") or span.get("name") or "span")
    start, end = _iso(span.get("startTimeUnixNano")), _iso(span.get("endTimeUnixNano"))
    events: list[dict[str, Any]] = []
    if operation == "execute_tool" or "gen_ai.tool.name" in attrs_:
        events += _tool_span(span, attrs_, span_id, start, end, failed)
    elif operation in _LLM_OPERATIONS or (
        operation not in _NOT_LLM_OPERATIONS
        and ("gen_ai.system" in attrs_ or "gen_ai.provider.name" in attrs_)
    ):
        events += _llm_span(span, attrs_, span_id, start, end, failed)
    if failed:
        message = (
            status.get("message")
            or _exception_message(span)
            or (f'span "{span.get("name", span_id)}" failed')
        )
        events.append(
            _stamp({"id": f"{span_id}-error", "type": "agent.error", "message": message}, end)
        )
    return events


def _tool_span(
    span: dict[str, Any],
    a: dict[str, Any],
    span_id: str,
    start: str | None,
    end: str | None,
    failed: bool,
) -> list[dict[str, Any]]:
    name = a.get("gen_ai.tool.name")
    if not isinstance(name, str):
        name = str(span.get("name", "")).removeprefix("execute_tool").strip()
    call_id = str(a.get("gen_ai.tool.call.id") or span_id)
    call: dict[str, Any] = {
        "id": f"{span_id}-call",
        "type": "tool.call",
        "name": name,
        "callId": call_id,
    }
    if "gen_ai.tool.call.arguments" in a:
        call["arguments"] = parse_json_text(a["gen_ai.tool.call.arguments"])
    out = [_stamp(call, start)]
    if "gen_ai.tool.call.result" in a or failed:
        result: dict[str, Any] = {
            "id": f"{span_id}-result",
            "type": "tool.result",
            "callId": call_id,
        }
        result["output"] = parse_json_text(a.get("gen_ai.tool.call.result", ""))
        if failed:
            result["isError"] = True
        out.append(_stamp(result, end))
    return out


def _llm_span(
    span: dict[str, Any],
    a: dict[str, Any],
    span_id: str,
    start: str | None,
    end: str | None,
    failed: bool,
) -> list[dict[str, Any]]:
    request: dict[str, Any] = {"id": f"{span_id}-request", "type": "llm.request"}
    provider = a.get("gen_ai.provider.name", a.get("gen_ai.system"))
    if provider is not None:
        request["provider"] = provider
    if "gen_ai.request.model" in a:
        request["model"] = a["gen_ai.request.model"]
    request["messages"] = _messages(a.get("gen_ai.input.messages", a.get("gen_ai.prompt")))
    response: dict[str, Any] = {
        "id": f"{span_id}-response",
        "type": "llm.response",
        "requestId": request["id"],
        "status": 500 if failed else 200,
        "output": _completion(span, a),
    }
    usage = normalized_usage(
        {k.removeprefix("gen_ai.usage."): v for k, v in a.items() if k.startswith("gen_ai.usage.")}
    )
    if usage is not None:
        response["usage"] = usage
    start_ns, end_ns = _nanos(span.get("startTimeUnixNano")), _nanos(span.get("endTimeUnixNano"))
    if start_ns and end_ns:
        response["latencyMs"] = (end_ns - start_ns) / 1e6
    return [_stamp(request, start), _stamp(response, end)]


def _messages(value: Any) -> list[Any]:
    parsed = parse_json_text(value)
    return parsed if isinstance(parsed, list) else []


def _completion(span: dict[str, Any], a: dict[str, Any]) -> str | None:
    """The answer text an LLM span records, in the newest convention it uses."""
    for key in ("gen_ai.output.messages", "gen_ai.completion"):
        if key in a:
            return _message_text(parse_json_text(a[key]))
    if "gen_ai.completion.0.content" in a:
        return _message_text(a["gen_ai.completion.0.content"])
    for event in _list(span.get("events")):
        if event.get("name") in ("gen_ai.choice", "gen_ai.content.completion"):
            e = attributes(event.get("attributes"))
            for key in ("message", "gen_ai.completion", "content"):
                if key in e:
                    return _message_text(parse_json_text(e[key]))
    return None


def _message_text(value: Any) -> str:
    """Text of a completion: a string, a message, its parts, or the last of a message list."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return _message_text(value[-1]) if value else ""
    if isinstance(value, dict):
        if "parts" in value and isinstance(value["parts"], list):
            return "\n".join(_part_text(p) for p in value["parts"] if _part_text(p))
        for key in ("content", "text"):
            if key in value:
                return _message_text(value[key])
    return "" if value is None else orjson.dumps(value).decode()


def _part_text(part: Any) -> str:
    if isinstance(part, dict) and part.get("type", "text") == "text":
        text = part.get("content", part.get("text"))
        return text if isinstance(text, str) else ""
    return ""


def _exception_message(span: dict[str, Any]) -> str | None:
    for event in _list(span.get("events")):
        if event.get("name") == "exception":
            message = attributes(event.get("attributes")).get("exception.message")
            if isinstance(message, str):
                return message
    return None


def attributes(items: Any) -> dict[str, Any]:
    """OTLP `[{key, value: {stringValue: ...}}]` as a plain dict (intValue strings → int).

    >>> attributes([{"key": "n", "value": {"intValue": "3"}}])
    {'n': 3}
    """
    out: dict[str, Any] = {}
    for item in _list(items):
        key = item.get("key")
        if isinstance(key, str):
            out[key] = _any_value(item.get("value"))
    return out


def _any_value(value: Any) -> Any:
    if not isinstance(value, dict):
        return value
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        try:
            return int(value["intValue"])  # OTLP JSON writes 64-bit integers as strings
        except (TypeError, ValueError):
            return value["intValue"]
    for key in ("doubleValue", "boolValue", "bytesValue"):
        if key in value:
            return value[key]
    if "arrayValue" in value:
        return [_any_value(v) for v in (value["arrayValue"] or {}).get("values", [])]
    if "kvlistValue" in value:
        return attributes((value["kvlistValue"] or {}).get("values"))
    return None


def _nanos(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def _iso(value: Any) -> str | None:
    """Unix nanoseconds as traceplay writes times: `2026-09-01T00:00:02.000Z`."""
    ns = _nanos(value)
    if not ns:
        return None
    moment = datetime.fromtimestamp(ns // 1_000_000_000, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + f".{ns // 1_000_000 % 1000:03d}Z"


def _stamp(event: dict[str, Any], at: str | None) -> dict[str, Any]:
    if at is not None:
        event["at"] = at
    return event
