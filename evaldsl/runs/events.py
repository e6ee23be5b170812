"""Plain event lists: JSON arrays of events, `{"events": [...]}` objects and headerless JSONL.

Takes a `.json` file holding an array of event objects, or an object with an `events` (or
`trace`) array and an optional `output`; or a `.jsonl` file with one event per line and no
traceplay header; or such a list already in memory. Gives a `Run` whose format is
"verydia" when any event is a verydia event, else "events". Also gives the event vocabulary
the rest of evaldsl reads (`TOOL_CALL_TYPES`, `tool_call_name`, ...).

Events are traceplay-style (`user.message`, `llm.request`, `llm.response`, `tool.call`,
`tool.result`, `agent.error`; docs/language.md §9.1) or verydia-style. verydia documents its
event names but not their payloads (docs/language.md §9.1), so evaldsl defines the fields it
reads; every field but `type` is optional:

- `llm.invoke`: one LLM call, request and response in one event:
  `{type, name?, model?, input?, output?, tokensIn?, tokensOut?, latencyMs?, at?}`.
  `output` is the answer, in any shape answer extraction understands (a string, an OpenAI or
  Anthropic body, `{content: "..."}`); `tokensIn`/`tokensOut` are its usage (a `usage`
  object in OpenAI, Anthropic or traceplay spelling is read when they are absent).
  It counts as one step and one response.
- `mcp.call`: one tool call with its result inline:
  `{type, name, arguments?, result?, isError?, at?}`. `tool` is accepted for `name`,
  `args` or `input` for `arguments`, `output` for `result`.
- `policy.evaluate`: one guard check: `{type, name?, decision?, at?}`.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import orjson

from evaldsl.cache.regexes import regex
from evaldsl.runs.cassette import EventStream
from evaldsl.runs.model import (
    MISSING,
    LateFormat,
    Run,
    RunError,
    check_file,
    decode_document,
    decode_text,
    describe,
    is_among,
    locate,
    marked_lines,
    open_file,
    os_error,
    read_bytes,
)

# traceplay event types (docs/language.md §9.1)
USER_MESSAGE = "user.message"
LLM_REQUEST = "llm.request"
LLM_RESPONSE = "llm.response"
TOOL_CALL = "tool.call"
TOOL_RESULT = "tool.result"
AGENT_ERROR = "agent.error"
ERROR = "error"  # a generic error event (other recorders); counts as `errors` too
# verydia event types (docs/language.md §9.1)
LLM_INVOKE = "llm.invoke"
MCP_CALL = "mcp.call"
POLICY_EVALUATE = "policy.evaluate"

VERYDIA_TYPES = frozenset({LLM_INVOKE, MCP_CALL, POLICY_EVALUATE})
#: Events that count as one LLM step (`steps`).
STEP_TYPES = frozenset({LLM_REQUEST, LLM_INVOKE})
#: Events that carry an answer in `output` and usage (`answer`, `tokens`).
RESPONSE_TYPES = frozenset({LLM_RESPONSE, LLM_INVOKE})
#: Events that are one tool call (`tools`, `tool NAME`, `tool calls`).
TOOL_CALL_TYPES = frozenset({TOOL_CALL, MCP_CALL})
#: Events that count as one error (`errors`).
ERROR_TYPES = frozenset({AGENT_ERROR, ERROR})
#: Every event type evaldsl reads; a trace with none of them is not a run.
KNOWN_TYPES = frozenset(
    {USER_MESSAGE, LLM_REQUEST, LLM_RESPONSE, TOOL_CALL, TOOL_RESULT, *ERROR_TYPES, *VERYDIA_TYPES}
)


_NOT_LETTER = regex(r"[\W_]")


def _letters(kind: str) -> str:
    """A type's letters alone, lower case (`toolcall` for `tool.call` and `Tool_Call`)."""
    return _NOT_LETTER.sub("", kind).lower()


#: Each known type by its letters alone.
_BY_LETTERS = {_letters(kind): kind for kind in KNOWN_TYPES}


def known_spelling(kind: str) -> str | None:
    """The known event type that `kind`, an unknown one, spells another way: the same
    letters in another case or with other separators (`tool_call`, `toolCall`,
    `Tool-Call` for `tool.call`); `None` for any other type.

    >>> known_spelling("tool_call"), known_spelling("LLM.Response"), known_spelling("x.y")
    ('tool.call', 'llm.response', None)
    """
    return _BY_LETTERS.get(_letters(kind))


LINE_EXTENSIONS = (".jsonl", ".ndjson")

_LIST_HINT = 'expected a JSON array of event objects, or an object with an "events" array'


def is_kind(event: dict[str, Any], kinds: frozenset[str]) -> bool:
    """Whether the event's `type` is one of `kinds`: a `type` that is not text (a list, an
    object: anything JSON allows) is none of them (`is_among`), never a `TypeError`.

    >>> is_kind({"type": "llm.invoke"}, VERYDIA_TYPES), is_kind({"type": []}, VERYDIA_TYPES)
    (True, False)
    """
    return is_among(event.get("type"), kinds)


def tool_call_name(event: dict[str, Any]) -> str | None:
    """The tool name of a `tool.call` or `mcp.call` event; `None` for any other event, and
    for a name that is not text or is empty (no tool is named "": the readers of every
    format refuse it, `providers.tool_name`).

    >>> tool_call_name({"type": "mcp.call", "tool": "search"})
    'search'
    """
    kind = event.get("type")
    if kind == TOOL_CALL:
        name = event.get("name")
    elif kind == MCP_CALL:
        name = event.get("name", event.get("tool"))
    else:
        return None
    return name if isinstance(name, str) and name else None


def tool_call_arguments(event: dict[str, Any]) -> Any:
    """The arguments of a tool call event (`MISSING` when it records none)."""
    for key in ("arguments", "args", "input") if event.get("type") == MCP_CALL else ("arguments",):
        if key in event:
            return event[key]
    return MISSING


def inline_result(event: dict[str, Any]) -> Any:
    """The result an `mcp.call` carries itself (`MISSING` if none; `tool.call`s link theirs)."""
    if event.get("type") == MCP_CALL:
        for key in ("result", "output"):
            if key in event:
                return event[key]
    return MISSING


def trace_format(events: Iterable[dict[str, Any]]) -> str:
    """ "verydia" when any event has a verydia type, else "events".

    >>> trace_format([{"type": "llm.request"}, {"type": "mcp.call"}])
    'verydia'
    """
    return "verydia" if any(is_kind(e, VERYDIA_TYPES) for e in events) else "events"


def nothing_recognised(unknown: Mapping[Any, int], path: str) -> RunError:
    """The error of a trace in which no event was recognised: none at all, or only events
    whose types (counted in `unknown`: a type's text, None for no `type`, or `(KIND,)`
    for a value of another kind in its place, `type_slot`) evaldsl does not read."""
    name = path.rsplit("/", 1)[-1]
    if not unknown:
        return RunError(
            f"`{name}` holds no events: there is nothing to check",
            path=path,
            hint="a trace needs at least one event (llm.request, tool.call, …)",
        )
    kinds = ", ".join(f"{_type_words(k)} ×{n}" for k, n in list(unknown.items())[:6])
    return RunError(
        f"nothing in `{name}` is a recognised event: its events have {kinds}",
        path=path,
        hint='name the format with `trace "…" as FORMAT` (`evaldsl vocabulary` lists them), '
        "or record traceplay event types (llm.request, llm.response, tool.call, …)",
    )


def type_slot(kind: Any) -> str | tuple[str] | None:
    """What an event's `type` holds, as a key of `nothing_recognised`'s counts: its text,
    None when there is none, or `(KIND,)` (a list, a number: no type's name).

    >>> type_slot("llm.request"), type_slot(None), type_slot(["llm.request"])
    ('llm.request', None, ('a list',))
    """
    if kind is None or isinstance(kind, str):
        return kind
    return (describe(kind),)


def _type_words(slot: Any) -> str:
    """A `type_slot` in the user's words: "type `x`", "no `type`", "a list where the
    event type goes"."""
    if slot is None:
        return "no `type`"
    if isinstance(slot, tuple):
        return f"{slot[0]} where the event type goes"
    return f"type `{slot}`"


# --- loading -------------------------------------------------------------------------------


def load_events(path: str | os.PathLike[str], format: str | None = None) -> Run:
    """An event-list file as a `Run`: JSONL when the name ends in .jsonl/.ndjson, else JSON.

    `format="verydia"` names the format instead of deciding it from the events.
    """
    p = os.fspath(path)
    if p.lower().endswith(LINE_EXTENSIONS):
        return load_event_lines(p, format)
    data = read_bytes(p)
    doc = decode_document(data, p, hint=_LIST_HINT)
    return events_from_document(doc, path=p, text=decode_text(data), format=format)


def load_event_lines(path: str | os.PathLike[str], format: str | None = None) -> Run:
    """A headerless JSONL file, one event per line, streamed like a cassette.

    Deciding "verydia" needs one pass, made the first time the format is asked for; it
    decodes only the lines that mention a verydia type.
    """
    p = os.fspath(path)
    check_file(p)
    stream = EventStream(p, header=False)
    # (decided only when asked: a check asks only where an LLM response holds a call)
    given = format if format else LateFormat(functools.partial(_lines_format, p))
    return Run(events=stream, path=p, format=given)


#: The verydia event types as they are written in a line (escaped, they are not seen).
_VERYDIA_MARKS = tuple(sorted(t.encode() for t in VERYDIA_TYPES))


def _lines_format(path: str) -> str:
    # (this pass reads the whole file: only the lines that mention a verydia type are
    # found, a block at a time at C speed; a generator over every line's markers took
    # 1.6x the whole check of an events file of 300,000 lines)
    try:
        with open_file(path) as f:
            for raw in marked_lines(f, _VERYDIA_MARKS):
                try:
                    event = orjson.loads(raw)
                except orjson.JSONDecodeError:
                    continue  # the stream reports bad lines, with their numbers, when read
                if isinstance(event, dict) and is_kind(event, VERYDIA_TYPES):
                    return "verydia"
    except OSError as exc:
        raise os_error(path, exc) from None
    return "events"


def events_from_document(
    doc: Any, *, path: str, text: str | None = None, format: str | None = None
) -> Run:
    """A decoded JSON document (array, or object with `events`/`trace`) as a `Run`.

    `text` is the file's text, used only to put a line and column on errors.
    """
    key: str | None = None
    output: Any = MISSING
    if isinstance(doc, dict):
        key = next((k for k in ("events", "trace") if k in doc), None)
        if key is None:
            raise RunError(
                'no event list: the object has no "events" or "trace" array',
                path=path,
                hint=_LIST_HINT,
            )
        output = doc.get("output", MISSING)
        items = doc[key]
    else:
        items = doc
    events = check_events(items, path=path, text=text, at=(key,) if key else ())
    return Run(events=events, output=output, path=path, format=format or trace_format(events))


def check_events(
    items: Any, *, path: str = "<value>", text: str | None = None, at: Sequence[str] = ()
) -> list[dict[str, Any]]:
    """`items` as a list of event objects, or a `RunError` naming the element that is not one.

    `at` is where the list sits in the document (`("events",)`), to find its line in `text`.
    """
    if not isinstance(items, list):
        where = f'"{at[0]}" is' if at else "the file holds"
        raise _error(
            f"{where} {describe(items)}, not a list of events", path, text, locate_in(text, at)
        )
    for index, item in enumerate(items):
        if not isinstance(item, dict):
            raise _error(
                f"element [{index}] of the event list is {describe(item)}, not an event object",
                path,
                text,
                locate_in(text, [*at, index]),
            )
    return items


def locate_in(text: str | None, steps: Sequence[str | int]) -> int | None:
    """`locate` that tolerates a missing text (values that never were a file)."""
    return None if text is None else locate(text, steps)


def _error(message: str, path: str, text: str | None, offset: int | None) -> RunError:
    if text is None:
        return RunError(message, path=path, hint=_LIST_HINT)
    return RunError.at_offset(message, path=path, text=text, offset=offset, hint=_LIST_HINT)
