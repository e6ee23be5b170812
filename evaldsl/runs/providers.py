"""Read OpenAI and Anthropic response bodies as a trace of synthetic traceplay events.

Takes one provider response body, or a list of them (formats `openai` and `anthropic`), and
gives the events they stand for. Each body becomes an `llm.request` (so it counts as a step)
and an `llm.response` whose `output` is the body and whose `usage` is normalised as traceplay
records it (`promptTokens`, `completionTokens`), followed by a `tool.call` for each tool call
the body asks for (OpenAI `message.tool_calls`, Anthropic `tool_use` blocks; `callId` is the
provider's call id). A body without the provider's `choices`/`content` list is a `RunError`
pointing at it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson

from evaldsl.runs.events import locate_in
from evaldsl.runs.model import RunError, describe
from evaldsl.runs.text import normalized_usage


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
            args = parse_json_text(function.get("arguments", {}))
            yield _tool_call(function.get("name"), args, call.get("id"))
    legacy = message.get("function_call")
    if isinstance(legacy, dict):
        yield _tool_call(legacy.get("name"), parse_json_text(legacy.get("arguments", {})), None)


def _tool_call(name: Any, arguments: Any, call_id: Any) -> dict[str, Any]:
    event: dict[str, Any] = {"type": "tool.call", "name": name, "arguments": arguments}
    if isinstance(call_id, str):
        event["callId"] = call_id
    return event


def parse_json_text(value: Any) -> Any:
    """Providers send tool arguments as JSON text; keep the text when it is not JSON.

    >>> parse_json_text('{"q": 1}'), parse_json_text("not json"), parse_json_text(2)
    ({'q': 1}, 'not json', 2)
    """
    if not isinstance(value, str):
        return value
    try:
        return orjson.loads(value)
    except orjson.JSONDecodeError:
        return value
