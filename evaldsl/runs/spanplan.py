"""Where an LLM span's indexed output messages are, worked out once per set of keys.

Takes a span's attributes as `RawAttrs` (the typed OTel decoder's, `otlpdecode.py`) and
gives what `otel.py`'s readers of OpenLLMetry's flattened `gen_ai.completion.N.*` and
OpenInference's `llm.output_messages.N.message.*` attributes give: the answer's text
(`None` when OpenInference redacted it: `REDACTED`) and the tool calls (name, arguments,
id), or `None` when the span has neither.

Those readers gather the attributes into one dict per message, then one per content part
and tool call (`otel.indexed`), and read each of them by name: per span a few dicts and
lookups for every message. Which key holds which message's content, which part's text and
which call's name depends on the span's keys alone, and spans of one instrumentation and
one conversation length have the same keys: the plan is made once for a key set (by
`rawattrs.index_plan`, the rule the readers gather by: `output_plan`) and kept with the
key set's other plan (`otel.keys_of`), and a span's output is then read straight from its
attributes, each value read once as the readers read it.

A span the plan does not cover (a key that is a whole list the readers would take as it
is: `gen_ai.completion`, `llm.output_messages`, a message's `tool_calls`, `contents` or
`message.tool_calls`) gives `UNPLANNED`, and `otel.py` reads it with its readers. The
readers stay the reference: `tests/test_otlpdecode.py` compares this with them on random
key sets and with the full reading on random files.
"""

from __future__ import annotations

from typing import Any, Final

from evaldsl.runs.model import MISSING
from evaldsl.runs.providers import add_text, kind_value, link_id, tool_name
from evaldsl.runs.rawattrs import RawAttrs, index_plan

#: A tool call's keys: its name, its arguments and its id (`None`: the span has none).
CallKeys = tuple[str | None, str | None, str | None]
#: A message's keys: its content, its content parts' (type, text) and its tool calls.
MessageKeys = tuple[str | None, tuple[tuple[str | None, str | None], ...], tuple[CallKeys, ...]]
#: A span's output: its text (`None`: redacted, unknown) and its calls (name, arguments as
#: written, id: `otel._span_events` parses the arguments a case reads).
Output = tuple[str | None, list[tuple[str, Any, Any]]]

#: What OpenInference's instrumentations write for a value their `TraceConfig` hides
#: (`REDACTED_VALUE`): `input.value` and `output.value` under OPENINFERENCE_HIDE_INPUTS
#: and OPENINFERENCE_HIDE_OUTPUTS (which drop the messages), a message's text under
#: OPENINFERENCE_HIDE_INPUT_TEXT and OPENINFERENCE_HIDE_OUTPUT_TEXT. Read as not
#: recorded, never as what the model or the tool said.
REDACTED = "__REDACTED__"


def answer_of(text: list[str]) -> str | None:
    """An OpenInference answer from its text pieces: `None` (unknown) when one of them was
    redacted (a piece hidden makes the whole answer unknown, not a shorter one).

    >>> answer_of(["It is sunny."]), answer_of(["It is", REDACTED])
    ('It is sunny.', None)
    """
    return None if REDACTED in text else "\n".join(text)


#: What a tool call of each convention is called in an error, and its name's field.
OPENLLMETRY_CALL = ("name", "an OpenLLMetry tool call (`gen_ai.completion.N.tool_calls.M`)")
OPENINFERENCE_CALL = (
    "tool_call.function.name",
    "an OpenInference tool call (`llm.output_messages.N.message.tool_calls.M`)",
)

#: A tool call's id field in each convention, and the call as an error names it.
OPENLLMETRY_ID = ("id", OPENLLMETRY_CALL[1])
OPENINFERENCE_ID = ("tool_call.id", OPENINFERENCE_CALL[1])

#: What a message of each convention is called in an error, and its content's field; and
#: an OpenInference content part (`llm.output_messages.N.message.contents.M`).
OPENLLMETRY_MESSAGE = ("content", "an OpenLLMetry message (`gen_ai.completion.N`)")
OPENINFERENCE_MESSAGE = ("message.content", "an OpenInference output message")
OPENINFERENCE_PART = "an OpenInference content part"


class _Unplanned:
    """The plan's answer for a span the readers must read themselves."""

    def __repr__(self) -> str:
        return "UNPLANNED"


UNPLANNED: Final = _Unplanned()

#: Where a span's output messages are (`output_plan`): whether they are OpenLLMetry's (else
#: OpenInference's: how an error names them) and the messages' keys (none: neither
#: convention has a message); or `UNPLANNED`.
Plan = tuple[bool, tuple[MessageKeys, ...]] | _Unplanned


def indexed_output(a: RawAttrs, plan: Plan) -> Output | _Unplanned | None:
    """The text and calls of `a`'s OpenLLMetry (first) or OpenInference output messages,
    `None` when it has neither, `UNPLANNED` when `otel.py`'s readers must read it.
    `plan`: `output_plan` of `a`'s keys."""
    if isinstance(plan, _Unplanned):
        return plan
    openllmetry, messages = plan
    if not messages:
        return None
    get = a.__getitem__  # (every key of the plan is one of the span's)
    text: list[str] = []
    calls: list[tuple[str, Any, Any]] = []
    for content, parts, tool_calls in messages:
        if content is not None:
            value = get(content)
            if isinstance(value, str):
                text.append(value)
            elif value is not None:  # the run's error, worded as the readers word it
                add_text(
                    text, value, *(OPENLLMETRY_MESSAGE if openllmetry else OPENINFERENCE_MESSAGE)
                )
        for kind, part_text in parts:
            # (a part without a type is text, as `part.get("…type", "text")` says)
            add_part(text, get(kind) if kind is not None else "text", a, part_text)
        for name_key, arguments, call_id in tool_calls:
            name = get(name_key) if name_key is not None else MISSING
            if type(name) is not str or not name:
                # the run's error, as the readers make it, worded in the span's convention
                name = tool_name(name, *(OPENLLMETRY_CALL if openllmetry else OPENINFERENCE_CALL))
            args = get(arguments) if arguments is not None else None
            cid = get(call_id) if call_id is not None else None
            if cid is not None and type(cid) is not str:  # as the readers refuse it
                link_id(cid, *(OPENLLMETRY_ID if openllmetry else OPENINFERENCE_ID))
            calls.append((name, args, cid))
    return ("\n".join(text) if openllmetry else answer_of(text)), calls


def add_part(text: list[str], kind: Any, part: dict[str, Any], text_key: str | None) -> None:
    """Add an OpenInference content part's text to `text` (`kind`: its type as read, text
    when it has none; `text_key`: where in `part` its text is). Its text is read only for
    a text part; a type or a text of the wrong type is a `BadValue`."""
    if kind == "text":
        if text_key is not None:
            add_text(text, part.get(text_key), "message_content.text", OPENINFERENCE_PART)
    elif kind is not None and not isinstance(kind, str):
        kind_value(kind, "message_content.type", OPENINFERENCE_PART)


def output_plan(keys: tuple[str, ...]) -> Plan:
    """Where the output messages of a span of `keys` (its keys, in order) are. (Made once
    for a key set, and kept with what else the readers look for in it: `otel.keys_of`.)"""
    for prefix, openinference in (("gen_ai.completion", False), ("llm.output_messages", True)):
        if prefix in keys:  # a whole list, which the readers take as it is
            return UNPLANNED
        entries = [dict(entry) for entry in index_plan(prefix + ".", keys)]
        if not entries:
            continue
        messages: list[MessageKeys] = []
        for entry in entries:
            if openinference:
                if "message.contents" in entry or "message.tool_calls" in entry:
                    return UNPLANNED
                parts = tuple(
                    (part.get("message_content.type"), part.get("message_content.text"))
                    for part in _nested(entry, "message.contents.")
                )
                calls = tuple(
                    (
                        c.get("tool_call.function.name"),
                        c.get("tool_call.function.arguments"),
                        c.get("tool_call.id"),
                    )
                    for c in _nested(entry, "message.tool_calls.")
                )
                messages.append((entry.get("message.content"), parts, calls))
            else:
                if "tool_calls" in entry:
                    return UNPLANNED
                calls = tuple(
                    (c.get("name"), c.get("arguments"), c.get("id"))
                    for c in _nested(entry, "tool_calls.")
                )
                messages.append((entry.get("content"), (), calls))
        return not openinference, tuple(messages)
    return False, ()


def _nested(entry: dict[str, str], lead: str) -> list[dict[str, str]]:
    """The entries under `lead` of one message (its names to the span's keys), gathered
    as `otel.indexed` gathers them from the message's own dict."""
    return [{name: entry[inner] for name, inner in nested} for nested in index_plan(lead, entry)]
