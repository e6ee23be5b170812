"""Streamed responses whose answer and calls traceplay kept only in `rawBody`.

Takes an LLM response's `output` and `rawBody` (decoded, or `msgspec.Raw` bytes as the
typed decoder gives them) and gives the output a pass reads. traceplay's recorder writes a
streamed response as `{"content": <every choices[0].delta.content joined>, "usage": …}`
beside the raw SSE text (docs/language.md §6), so an Anthropic or Responses API stream, or
a chat stream that only calls tools, is recorded as `"content": ""`: its text and its calls
are only in `rawBody`. Such a response (`content` exactly "", `rawBody` text) is read by
what `rawBody` says, with the `openai` and `anthropic` formats' own readers (`sse`,
`openai`, `anthropic`), as an Anthropic-shaped body: its text as one text block, each call
as a `tool_use` block, the record's other keys (its `usage`) kept, so that `answer_text`
reads it as any body. The passes read it where they read answers (`index`, `codegen`); the
held-call read (`heldcalls`) does not yet. A `rawBody` those readers do not read, that
holds no response, or whose stream ended in an error is an `UnreadStream` (the run's
error, never an empty answer). Any other output is given back as it is, unread: a record
whose `content` is not "" is what traceplay read, and `rawBody` is not compared with it.
"""

from __future__ import annotations

from typing import Any

#: The tool calls a rebuilt body holds, as `tool_use` blocks (`heldcalls` names them).
_CALL = "tool_use"


class UnreadStream(ValueError):
    """A streamed response whose `rawBody` cannot be read: the message says why."""


def streamed_body(output: Any, raw_body: Any) -> Any:
    """The output a pass reads of a response with this `output` and `rawBody`.

    >>> sse = 'data: {"object": "chat.completion.chunk", "choices": [{"index": 0, '
    >>> sse += '"delta": {"content": "Hi"}}]}\\n\\ndata: [DONE]\\n'
    >>> streamed_body({"content": ""}, sse)
    {'content': [{'type': 'text', 'text': 'Hi'}]}
    >>> streamed_body({"content": "Hi"}, "not read")
    {'content': 'Hi'}
    """
    raw_type = type(output) if type(output).__name__ == "Raw" else None
    decoded = output
    if raw_type is not None:
        if b'""' not in bytes(output):  # (no "" anywhere: not a record of an empty answer)
            return output
        decoded = _decode(output)
    if not (isinstance(decoded, dict) and decoded.get("content") == ""):
        return output
    if raw_body is not None and type(raw_body).__name__ == "Raw":
        raw_body = _decode(raw_body)
    if not isinstance(raw_body, str):
        return output
    body = {**decoded, "content": stream_blocks(raw_body)}
    if raw_type is None:
        return body
    import msgspec  # (loaded: the output is one of its `Raw`s)

    return raw_type(msgspec.json.encode(body))


def stream_blocks(text: str) -> list[dict[str, Any]]:
    """The text and calls of the one response an SSE text streams, as Anthropic blocks;
    `UnreadStream` if the `openai` and `anthropic` readers read no response in it."""
    # (imported here: only a response recorded this way loads the readers)
    from evaldsl.runs.anthropic import is_stream_event, read_anthropic
    from evaldsl.runs.model import RunError
    from evaldsl.runs.openai import read_openai
    from evaldsl.runs.sse import parse_sse
    from evaldsl.runs.unreadable import UNEXPECTED

    try:
        items, done = parse_sse(text, "rawBody")
        if not items.values:
            raise UnreadStream(
                "its `rawBody` holds no event stream (`data:` lines), so its answer and "
                "calls were never read"
            )
        if is_stream_event(items.values[0]):
            trace = read_anthropic(items, "an Anthropic stream")
        else:
            trace = read_openai(items, "an OpenAI stream", done=done)
    except UnreadStream:
        raise
    except RunError as err:
        raise UnreadStream(f"its `rawBody` is not a stream evaldsl reads: {err.message}") from None
    except UNEXPECTED as err:  # (a value the readers cannot read: `BadValue`, `BadUsage`, …)
        raise UnreadStream(f"its `rawBody` is not a stream evaldsl reads: {err}") from None
    answers = [e for e in trace.events if e.get("type") == "llm.response"]
    if len(answers) != 1:
        raise UnreadStream(f"its `rawBody` streams {len(answers)} responses, not one")
    failed = [e.get("message") for e in trace.events if e.get("type") == "agent.error"]
    if failed:
        raise UnreadStream(f"its `rawBody` stream ended in an error: {failed[0]}")
    text_of = answers[0].get("output")
    blocks: list[dict[str, Any]] = [
        {"type": "text", "text": text_of if isinstance(text_of, str) else ""}
    ]
    for event in trace.events:
        if event.get("type") == "tool.call":
            blocks.append(
                {"type": _CALL, "name": event.get("name"), "input": event.get("arguments")}
            )
    return blocks


def unread_stream(event: Any) -> str | None:
    """Why a response event's `rawBody` cannot be read (`UnreadStream`'s message), or None:
    to find the event a pass raised it for (a pass keeps no places)."""
    if not isinstance(event, dict) or "rawBody" not in event:
        return None
    try:
        streamed_body(event.get("output"), event["rawBody"])
    except UnreadStream as why:
        return str(why)
    return None


def _decode(value: Any) -> Any:
    """A `msgspec.Raw` field, decoded as a pass decodes one."""
    import msgspec  # (loaded: the field is one of its `Raw`s)

    return msgspec.json.decode(value)
