"""Server-sent events: the `text/event-stream` body a provider streams, as JSON items.

Takes the text of a saved stream (OpenAI `data: {...}` chunks ending in `data: [DONE]`,
Anthropic and Responses API `event: NAME` / `data: {...}` pairs) and gives `Items` of the
decoded `data:` payloads with their lines, plus whether the `[DONE]` marker was seen. The
rules are the WHATWG event-stream ones: fields `event`, `data`, `id`, `retry`; a line
starting with `:` is a comment; several `data:` lines of one event join with "\\n"; a blank
line ends the event. A payload that is not JSON is a `RunError` at its line.
"""

from __future__ import annotations

import orjson

from evaldsl.runs.bigints import may_round
from evaldsl.runs.model import RunError, text_lines
from evaldsl.runs.providers import Items
from evaldsl.runs.surrogates import mended_loads

_FIELDS = ("data:", "event:", "id:", "retry:", ":")

DONE = "[DONE]"


def looks_like_sse(first_line: str) -> bool:
    """Whether a file's first non-blank line starts an event stream.

    >>> looks_like_sse("data: {}"), looks_like_sse('{"data": 1}')
    (True, False)
    """
    return first_line.lstrip("\ufeff").startswith(_FIELDS)


def parse_sse(text: str, path: str) -> tuple[Items, bool]:
    """The JSON payloads of an event stream, and whether it ended with `[DONE]`.

    >>> items, done = parse_sse('event: ping\\ndata: {"type": "ping"}\\n\\ndata: [DONE]\\n', "s")
    >>> items.values, items.events, items.lines, done
    ([{'type': 'ping'}], ['ping'], [2], True)
    """
    values: list[object] = []
    lines: list[int] = []
    names: list[str | None] = []
    done = False
    data: list[str] = []
    event: str | None = None
    start = 0
    rounds = may_round(text)  # (the whole stream looked through once, as a JSONL file)
    loads = mended_loads if rounds else orjson.loads  # (as `detect`'s JSONL lines)

    def dispatch() -> None:
        nonlocal done, data, event
        if data:
            payload = "\n".join(data)
            if payload.strip() == DONE:
                done = True
            else:
                try:
                    try:
                        values.append(loads(payload))
                    except orjson.JSONDecodeError:  # (mended, or orjson's error again)
                        values.append(mended_loads(payload, rounds=rounds))
                except orjson.JSONDecodeError as exc:
                    raise RunError(
                        f"the data of the event on line {start} is not JSON: {exc.msg}",
                        path=path,
                        line=start,
                        hint="each `data:` payload of a provider stream is one JSON object",
                    ) from None
                lines.append(start)
                names.append(event)
        data, event = [], None

    for lineno, raw in enumerate(text_lines(text.removeprefix("\ufeff")), 1):
        if not raw.strip():
            dispatch()
            continue
        if raw.startswith(":"):
            continue
        field, _, value = raw.partition(":")
        value = value.removeprefix(" ")
        if field == "data":
            if not data:
                start = lineno
            data.append(value)
        elif field == "event":
            event = value
    dispatch()
    return Items(path, values, "sse", lines=lines, events=names), done
