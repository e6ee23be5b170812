"""Which adapter reads a run: format detection, plus the provider-body and OTLP adapters.

Takes a path (and optionally a format name), or a value already in memory, and gives a
`Run`. `load_run` detects the format of a file; `coerce_run` accepts a `Run`, a path, an
event list or a state dict; `run_from_value` turns what a `run` target returned into a run.

Detection, in order: a file whose first non-blank line is an object with a `"cassette"` key
is a traceplay cassette; another `.jsonl`/`.ndjson` file holds one event per line; otherwise
the file is one JSON document: an array is an event list, an object with `status`, `memory`
or `visited_nodes` a cycgraph state, an object with an `events` or `trace` array an event
list, and an object with `resourceSpans` an OTLP trace. (A `.json` file whose lines are
separate objects is read as JSONL too.) Named formats skip detection:
`traceplay`/`cassette`, `events`, `verydia`, `state`/`cycgraph`, `openai`, `anthropic`, `otel`.

`openai`/`anthropic`: the file holds one provider response body, or a list of them. Each
becomes an `llm.request` (so it counts as a step) and an `llm.response` whose `output` is
the body and whose `usage` is normalised as traceplay records it (`promptTokens`,
`completionTokens`), followed by a `tool.call` for each tool call the body asks for (OpenAI
`message.tool_calls`, Anthropic `tool_use` blocks; `callId` is the provider's call id).

`otel`: OTLP JSON (`resourceSpans[].scopeSpans[].spans[]`), spans taken in start order:
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

import os
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import attrs
import orjson

from evaldsl.diagnostics import did_you_mean
from evaldsl.runs.cassette import EventStream, first_line, load_cassette
from evaldsl.runs.events import (
    LINE_EXTENSIONS,
    events_from_document,
    load_event_lines,
    load_events,
    locate_in,
    trace_format,
)
from evaldsl.runs.model import (
    Run,
    RunError,
    check_file,
    decode_document,
    decode_text,
    describe,
    json_error,
    os_error,
    read_bytes,
)
from evaldsl.runs.state import (
    is_state_value,
    load_state,
    looks_like_state,
    state_from_document,
    validate_state,
)
from evaldsl.runs.text import normalized_usage

#: Format names `load_run` accepts, and the adapter format each one means.
FORMATS: dict[str, str] = {
    "traceplay": "traceplay",
    "cassette": "traceplay",
    "events": "events",
    "verydia": "verydia",
    "state": "cycgraph",
    "cycgraph": "cycgraph",
    "openai": "openai",
    "anthropic": "anthropic",
    "otel": "otel",
}

_KINDS_HINT = (
    'expected a traceplay cassette, a JSON array of events, an object with an "events" '
    "array, or a workflow state; name another format with `as FORMAT` (openai, anthropic, otel)"
)


def load_run(path: str | os.PathLike[str], format: str | None = None) -> Run:
    """Read the run a file holds, detecting its format unless `format` names one.

    Every failure is a `RunError` (E501 when the file does not exist), never a traceback.

    >>> load_run("tests/fixtures/traceplay/streaming/cassette.streaming.jsonl").format
    'traceplay'
    """
    p = os.fspath(path)
    if format is not None:
        return _load_as(p, _canonical_format(format, p))
    check_file(p)
    first, lineno = _first_line(p)
    if not lineno:
        raise RunError(
            "empty cassette" if p.lower().endswith(LINE_EXTENSIONS) else "empty file",
            path=p,
            hint=_KINDS_HINT,
        )
    head = _try_object(first)
    if head is not None and "cassette" in head:
        return load_cassette(p)
    if p.lower().endswith(LINE_EXTENSIONS):
        run = load_event_lines(p)
        if head is None and isinstance(run.events, EventStream):
            run.events.first()  # a first line that is no event fails now, not on first read
        return run
    data = read_bytes(p)
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        if head is not None and exc.lineno > lineno:
            return load_event_lines(p)  # one object per line in a file not named .jsonl
        raise json_error(exc, data, p, hint=_KINDS_HINT) from None
    return _from_document(doc, p, decode_text(data))


def _first_line(path: str) -> tuple[bytes, int]:
    try:
        with open(path, "rb") as f:
            return first_line(f)
    except OSError as exc:
        raise os_error(path, exc) from None


def _try_object(raw: bytes) -> dict[str, Any] | None:
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def _from_document(doc: Any, path: str, text: str) -> Run:
    if isinstance(doc, list):
        return events_from_document(doc, path=path, text=text)
    if looks_like_state(doc):
        return state_from_document(doc, path=path, text=text)
    if isinstance(doc, dict) and ("events" in doc or "trace" in doc):
        return events_from_document(doc, path=path, text=text)
    if isinstance(doc, dict) and "resourceSpans" in doc:
        return _otel_run(doc, path)
    raise RunError(
        f"cannot tell what kind of run this is ({describe(doc)})", path=path, hint=_KINDS_HINT
    )


def _canonical_format(name: str, path: str) -> str:
    found = FORMATS.get(name.lower())
    if found is None:
        near = did_you_mean(name, FORMATS)
        hint = (f'did you mean "{near}"? ' if near else "") + "formats: " + ", ".join(FORMATS)
        raise RunError(f'unknown run format "{name}"', path=path, hint=hint)
    return found


def _load_as(path: str, fmt: str) -> Run:
    if fmt == "traceplay":
        return load_cassette(path)
    if fmt in ("events", "verydia"):
        return load_events(path, "verydia" if fmt == "verydia" else None)
    if fmt == "cycgraph":
        return load_state(path)
    data = read_bytes(path)
    text = decode_text(data)
    doc = decode_document(data, path)
    if fmt == "otel":
        return _otel_run(doc, path)
    return Run(events=provider_events(doc, fmt, path=path, text=text), path=path, format=fmt)


# --- values ----------------------------------------------------------------------------------


def coerce_run(value: object, *, base: Path | None = None) -> Run:
    """Make a `Run` of whatever names or holds one.

    A `Run` is itself; a `str` or path-like is a file (relative to `base` when given) read by
    `load_run`; a list must be event objects; a dict with `status`, `memory` or
    `visited_nodes` is a state (checked like a state file); a dict with an `events`/`trace`
    list is a trace; any other value is the run's output. For what a `run` target returned,
    where a string is an answer and not a path, use `run_from_value`.

    >>> coerce_run([{"type": "tool.call", "name": "search"}]).kind
    'trace'
    """
    if isinstance(value, Run):
        return value
    if isinstance(value, str | os.PathLike):
        p = Path(value)
        if base is not None and not p.is_absolute():
            p = base / p
        return load_run(p)
    if isinstance(value, list):
        # Not walked here: the index pass reports a non-object element by its index, and
        # the format is told by the first events, so a million in-memory events are read
        # once, not three times.
        head = [e for e in value[:1000] if isinstance(e, dict)]
        return Run(events=value, format=trace_format(head))
    if isinstance(value, dict) and looks_like_state(value):
        return state_from_document(value, path="<value>")
    if isinstance(value, dict) and ("events" in value or "trace" in value):
        return events_from_document(value, path="<value>")
    return Run(events=None, output=value, format="value")


def run_from_value(value: object, *, latency_ms: float | None = None) -> Run:
    """The run a `run` target's return value stands for.

    A `Run` is kept; a non-empty list of objects that all have a string `type` is a trace;
    a dict with `memory` or `visited_nodes`, or a `status` that is one of cycgraph's
    statuses, is a state (a wrong field type is a `RunError`); a dict with an
    `events`/`trace` event list (empty too, beside an `output`) is a trace with its
    `output`; anything else (text,
    `{"status": "ok"}`, `[]`) is the output value.

    >>> run_from_value("Paris is sunny").output
    'Paris is sunny'
    """
    if isinstance(value, Run):
        run = value
    elif _is_event_list(value):
        assert isinstance(value, list)
        run = Run(events=value, format=trace_format(value))
    elif is_state_value(value):
        assert isinstance(value, dict)
        errors = validate_state(value, "<value>")
        if errors:
            raise errors[0]
        run = Run(events=None, state=value, format="cycgraph")
    elif isinstance(value, dict) and any(
        _is_event_list(value.get(k)) or (value.get(k) == [] and "output" in value)
        for k in ("events", "trace")
    ):
        run = events_from_document(value, path="<value>")
    else:
        run = Run(events=None, output=value, format="value")
    if latency_ms is not None and run.latency_ms is None:
        run = attrs.evolve(run, latency_ms=latency_ms)
    return run


def _is_event_list(value: object) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(e, dict) and isinstance(e.get("type"), str) for e in value)
    )


# --- provider response bodies ----------------------------------------------------------------


def provider_events(
    doc: Any, provider: str, *, path: str = "<value>", text: str | None = None
) -> list[dict[str, Any]]:
    """Synthetic traceplay events for one OpenAI/Anthropic response body or a list of them.

    >>> body = {"choices": [{"message": {"content": "hi"}}], "usage": {"prompt_tokens": 3}}
    >>> [(e["type"], e.get("usage")) for e in provider_events(body, "openai")]
    [('llm.request', None), ('llm.response', {'promptTokens': 3, 'completionTokens': 0})]
    """
    bodies = doc if isinstance(doc, list) else [doc]
    events: list[dict[str, Any]] = []
    for index, body in enumerate(bodies):
        _check_body(body, provider, path, text, [index] if isinstance(doc, list) else [])
        request_id = f"req-{index + 1}"
        request: dict[str, Any] = {
            "id": request_id,
            "type": "llm.request",
            "provider": "anthropic" if provider == "anthropic" else "openai-compatible",
            "messages": [],
        }
        if isinstance(body.get("model"), str):
            request["model"] = body["model"]
        response: dict[str, Any] = {
            "id": f"res-{index + 1}",
            "type": "llm.response",
            "requestId": request_id,
            "status": 200,
            "output": body,
        }
        usage = normalized_usage(body.get("usage"))
        if usage is not None:
            response["usage"] = usage
        events += [request, response]
        for n, call in enumerate(_tool_calls(body, provider), 1):
            events.append({"id": f"call-{index + 1}-{n}", **call})
    for seq, event in enumerate(events):
        event["seq"] = seq
    return events


def _check_body(body: Any, provider: str, path: str, text: str | None, at: list[int]) -> None:
    key, name = ("choices", "an OpenAI chat completion")
    if provider == "anthropic":
        key, name = ("content", "an Anthropic message")
    if isinstance(body, dict) and isinstance(body.get(key), list):
        return
    where = f"element [{at[0]}] is" if at else "the file holds"
    found = describe(body)
    if isinstance(body, dict):
        found = "an error body" if "error" in body else f'an object without a "{key}" list'
    message = f"{where} {found}, not {name}"
    hint = f'a {provider} response body has a "{key}" list'
    offset = locate_in(text, at)
    if text is None:
        raise RunError(message, path=path, hint=hint)
    raise RunError.at_offset(message, path=path, text=text, offset=offset, hint=hint)


def _tool_calls(body: dict[str, Any], provider: str) -> Iterator[dict[str, Any]]:
    if provider == "anthropic":
        for block in body.get("content") or []:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                yield _tool_call(block.get("name"), block.get("input", {}), block.get("id"))
        return
    choices = body.get("choices") or [None]
    message = choices[0].get("message") if isinstance(choices[0], dict) else None
    if not isinstance(message, dict):
        return
    for call in message.get("tool_calls") or []:
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict):
            args = _parse_json_text(function.get("arguments", {}))
            yield _tool_call(function.get("name"), args, call.get("id"))
    legacy = message.get("function_call")
    if isinstance(legacy, dict):
        yield _tool_call(legacy.get("name"), _parse_json_text(legacy.get("arguments", {})), None)


def _tool_call(name: Any, arguments: Any, call_id: Any) -> dict[str, Any]:
    event: dict[str, Any] = {"type": "tool.call", "name": name, "arguments": arguments}
    if isinstance(call_id, str):
        event["callId"] = call_id
    return event


def _parse_json_text(value: Any) -> Any:
    """Providers send tool arguments as JSON text; keep the text when it is not JSON."""
    if not isinstance(value, str):
        return value
    try:
        return orjson.loads(value)
    except orjson.JSONDecodeError:
        return value


# --- OpenTelemetry (OTLP JSON) ---------------------------------------------------------------

_LLM_OPERATIONS = frozenset({"chat", "text_completion", "generate_content"})
_NOT_LLM_OPERATIONS = frozenset({"execute_tool", "embeddings", "create_agent", "invoke_agent"})
_STATUS_ERROR = (2, "STATUS_CODE_ERROR")


def _otel_run(doc: Any, path: str) -> Run:
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
        call["arguments"] = _parse_json_text(a["gen_ai.tool.call.arguments"])
    out = [_stamp(call, start)]
    if "gen_ai.tool.call.result" in a or failed:
        result: dict[str, Any] = {
            "id": f"{span_id}-result",
            "type": "tool.result",
            "callId": call_id,
        }
        result["output"] = _parse_json_text(a.get("gen_ai.tool.call.result", ""))
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
    parsed = _parse_json_text(value)
    return parsed if isinstance(parsed, list) else []


def _completion(span: dict[str, Any], a: dict[str, Any]) -> str | None:
    """The answer text an LLM span records, in the newest convention it uses."""
    for key in ("gen_ai.output.messages", "gen_ai.completion"):
        if key in a:
            return _message_text(_parse_json_text(a[key]))
    if "gen_ai.completion.0.content" in a:
        return _message_text(a["gen_ai.completion.0.content"])
    for event in _list(span.get("events")):
        if event.get("name") in ("gen_ai.choice", "gen_ai.content.completion"):
            e = attributes(event.get("attributes"))
            for key in ("message", "gen_ai.completion", "content"):
                if key in e:
                    return _message_text(_parse_json_text(e[key]))
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
