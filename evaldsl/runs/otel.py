"""OpenTelemetry spans (OTLP JSON, flat span JSONL) under the GenAI, OpenInference and
OpenLLMetry conventions, as normalised events.

Takes `Items`: OTLP JSON documents (`resourceSpans[].scopeSpans[].spans[]`, as the file
exporter and collectors write them; one document, an array or JSONL of them), or flat spans
(one object per span with `name`, `context.span_id`, `attributes` as an object, ISO
`start_time`/`end_time`: Phoenix's export and the SDK's console exporter). Gives the
events of `providers` (format "otel") and the run's latency.

Spans are taken in start order (file order when a start or end time is not a number of
nanoseconds since 1970 up to the year 9999, or a span ends before it starts: then the run
has no latency, and `latency` is an error rather than 0 or a negative time). The
containers are checked: `resourceSpans`, `scopeSpans`, `spans`, `events` and
`attributes` that are not lists of objects, or an attribute key that is not text, are an
error naming the span, never a trace read as empty; so are a flat span's `attributes`
(and its events') that are not an object, its `events` that are not a list of objects,
and its `span_kind` that is not text. An OTLP `AnyValue` with none of OTLP's kinds
(`{"strValue": "x"}`) is an error naming the span and the attribute when a reader reads
that attribute (never when none does; `{}` is OTLP's no value). Each span is classified:

- a **tool span**: `gen_ai.operation.name` = `execute_tool`, a `gen_ai.tool.name` (or
  the Vercel AI SDK's `ai.toolCall.name`, whose `ai.toolCall.id`, `.args` and `.result`
  are read last below), `openinference.span.kind` = `TOOL` or `traceloop.span.kind` =
  `tool`. Name from
  `gen_ai.tool.name` / `tool.name` / `traceloop.entity.name` (else the span name, less
  GenAI's `execute_tool ` before it, noted; `execute_tool` alone names no tool: an error);
  arguments from `gen_ai.tool.call.arguments` / `input.value` / `traceloop.entity.input`
  (OpenLLMetry's `{args, kwargs}` record of a call by keyword: its `kwargs`; none, and
  no model's call: unknown, as the run's `Unrecorded` says);
  call id from `gen_ai.tool.call.id` / `tool_call.id` (here and in every convention, an id
  that is not text is an error); result from
  `gen_ai.tool.call.result` / `gen_ai.tool.result.value` / `output.value` /
  `traceloop.entity.output` (none: unknown, unless a later history carries it); a failed
  span (or `gen_ai.tool.result.is_error`, or an `error.type`, which GenAI sets only when
  the operation ended in an error, whatever the status) gives an error result. When an
  earlier LLM span asked for this call (same id, or the oldest unanswered call of that
  name), the span gives that call its result instead of a second call;
- an **LLM span**: an operation `chat`, `text_completion`, `generate_content` or
  `completion`, or a `gen_ai.system`/`gen_ai.provider.name` outside agent and embedding
  operations, or `openinference.span.kind` = `LLM`, or `llm.request.type`. One step:
  model from `gen_ai.request.model` / `gen_ai.response.model` / `llm.model_name`; tokens
  from `gen_ai.usage.input_tokens` (older name `prompt_tokens`) and `output_tokens`
  (`completion_tokens`), or `llm.token_count.prompt`/`completion` (each counted once
  whatever spellings a span carries); an Anthropic span's
  `gen_ai.usage.cache_creation.input_tokens`/`cache_read.input_tokens` (counted in its
  input tokens) priced at their rates (`_cache`), and an OpenInference span's
  `llm.token_count.prompt_details.cache_read`/`cache_write` (among the prompt, unless its
  total or its counts say they were left out: then added) priced as its provider bills
  them (`_openinference_cache`); the service tier that billed it,
  `openai.response.service_tier` (older `gen_ai.openai.response.service_tier`), else the
  tier the request asked for (`openai.request.service_tier`, older
  `gen_ai.openai.request.service_tier`) unless "auto" (whichever served it: as a span
  saying none, the standard one), or the Vercel AI SDK's `ai.response.providerMetadata`
  (JSON text: a provider's `serviceTier`, OpenAI's, else its `usage.service_tier`,
  Anthropic's; metadata that is not an object of objects is an error), priced by `cost`
  at that tier (`prices.tier_cost`); the answer and tool calls from the output messages
  in the newest convention the span uses: `gen_ai.output.messages` (parts `text`,
  `tool_call`, `server_tool_call` and its `server_tool_call_response`, others counted;
  its first message, each being a choice: the others counted) on the
  span, else on its `gen_ai.client.inference.operation.details` event (the current
  GenAI convention's place for them), `gen_ai.completion` (JSON),
  OpenLLMetry's `gen_ai.completion.N.content` / `.tool_calls.M.name|arguments|id`,
  `gen_ai.choice` span events, OpenInference's
  `llm.output_messages.N.message.content|contents|tool_calls` (nested lists or flattened
  keys), the Vercel AI SDK's `ai.response.text` and `ai.response.toolCalls` (JSON text of
  `{toolCallId, toolName, args|input}`), else `output.value` when it is text (output
  messages that are neither messages
  nor text, or an OpenLLMetry `gen_ai.completion` list of anything but objects, are an
  error); a span with none of them recorded no content (its instrumentation captures it
  only when asked), and its answer is unknown, as the run's `Unrecorded` says. A first
  `gen_ai.response.finish_reasons` (else the first output message's `finish_reason`)
  that leaves the answer not whole (`length`, `content_filter`, a provider's own word) is
  noted (`_finish_note`), and an output a content filter left no text in has an unknown
  answer, not "" (`_unfiltered`). Tool
  results that the next call's input messages carry (the older convention's
  `gen_ai.tool.message` events of the span: `id`, `content`, as Koog writes them;
  `gen_ai.input.messages`, on the span
  or its details event: `tool_call_response` parts, their output in
  `response` or, as pydantic-ai writes it, `result`, and `tool` messages without parts;
  OpenLLMetry `gen_ai.prompt.N`, or the older GenAI `gen_ai.prompt` list or JSON text,
  with role `tool`; OpenInference
  `llm.input_messages.N` with role `tool`) answer the calls still waiting that they name
  by id (or, without one, by tool name). OpenInference's placeholder for what its
  `TraceConfig` hid (`REDACTED`, in `input.value`, `output.value` or a message's text) is
  not recorded: an answer with a piece of it is unknown, a tool span's arguments or
  result unknown, a tool message's result none (noted, with how to record it);
- any span with status ERROR adds an `agent.error` (its status message, or its
  `exception` event's message);
- every other span (agents, chains, workflows, embeddings, retrievers, spans without
  attributes) is skipped, and counted by reason; so are a span exported again and an
  LLM span with another LLM span under it (one model call: the inner span counts), and
  two different spans of one traceId and spanId are an error (`spantree`).

A file read for one case (`program.check(path)`, `evaldsl run`: `reads.py`) gives the
same events for what the case reads; the arguments of a call of a tool no assertion reads
the arguments of stay as written (JSON text not parsed), so does a result no assertion
reads, and no event is given a time when none is read and the spans give the run's
latency (else the run's latency is its events' first and last times, which the runner's
`latency` metric reads: they are written). Every attribute read is still read (and its
errors raised) as above.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime
from itertools import islice
from types import MappingProxyType
from typing import Any, cast

import msgspec
import orjson
from msgspec import Raw

from evaldsl.bounded import keep
from evaldsl.gcpause import paused_gc
from evaldsl.runs import bigints
from evaldsl.runs.model import MISSING, Run, RunError
from evaldsl.runs.providers import (
    BadValue,
    Items,
    Trace,
    add_text,
    an_object,
    kind_value,
    link_id,
    listed,
    parse_json_text,
    shown,
    text_of_parts,
    tool_name,
)
from evaldsl.runs.rawattrs import MAX_KEPT_KEYS, MAX_PLANS, RawAttrs, as_stored, index_plan
from evaldsl.runs.reads import EVERYTHING, Reads
from evaldsl.runs.reads import current as current_reads
from evaldsl.runs.spanplan import (
    OPENINFERENCE_CALL,
    OPENINFERENCE_ID,
    OPENINFERENCE_MESSAGE,
    OPENLLMETRY_CALL,
    OPENLLMETRY_ID,
    OPENLLMETRY_MESSAGE,
    REDACTED,
    UNPLANNED,
    Plan,
    add_part,
    answer_of,
    indexed_output,
    output_plan,
)
from evaldsl.runs.spantree import REPEATED, WRAPPER, unrepeated, wrappers
from evaldsl.runs.text import BadUsage, count_text, token_count

_LLM_OPERATIONS = frozenset({"chat", "text_completion", "generate_content", "completion"})
_NOT_LLM_OPERATIONS = frozenset(
    {"execute_tool", "embeddings", "create_agent", "invoke_agent", "tool", "retrieval"}
)
#: The Vercel AI SDK's `ai.toolCall` span's tool (a tool span's mark, as `gen_ai.tool.name` is)
AI_SDK_TOOL_NAME = "ai.toolCall.name"
#: The GenAI conventions' class of the error an operation ended with (set only then).
ERROR_TYPE = "error.type"
#: A failed span's status code: OTLP's number (`STATUS_CODE_ERROR`), then as other writers
#: spell it.
STATUS_ERROR_CODE = 2
STATUS_ERROR = (STATUS_ERROR_CODE, "STATUS_CODE_ERROR", "ERROR")


class Span(msgspec.Struct, gc=False):
    """One span, whatever file shape it came in. (A msgspec struct: one is made for every
    span of a file, and its `__init__` runs in C, where an attrs class's is Python; not
    tracked by the collector: a span holds its attributes and events, and nothing they
    hold holds it, so it is in no cycle.)"""

    name: str
    span_id: str
    attrs: dict[str, Any]
    start: int | None  # unix nanoseconds
    end: int | None
    start_text: Any  # as written, for the note on a time that is not a number
    end_text: Any
    events: list[dict[str, Any]]
    failed: bool
    status_message: str | None
    kind: str | None = None  # a flat span's own `span_kind` (Phoenix)
    key: tuple[str, str] | None = None  # (traceId, spanId): see `span_key`
    parent: tuple[str, str] | None = None  # (traceId, parentSpanId)


def span_key(trace_id: Any, span_id: Any) -> tuple[str, str] | None:
    """A span's (or its parent's) key as `spantree` reads it: its traceId and spanId when
    both are text (`None` else: a span without them cannot be told from another).

    >>> span_key("t1", "s1"), span_key("t1", ""), span_key(None, "s1")
    (('t1', 's1'), None, None)
    """
    if type(trace_id) is str and type(span_id) is str and trace_id and span_id:
        return trace_id, span_id
    return None


# --- signatures ------------------------------------------------------------------------------


def is_otlp(d: Any) -> bool:
    """An OTLP JSON document."""
    return isinstance(d, dict) and isinstance(d.get("resourceSpans"), list)


def is_flat_span(d: Any) -> bool:
    """One span as Phoenix or the SDK's console exporter writes it."""
    if not isinstance(d, dict) or not isinstance(d.get("name"), str):
        return False
    context = d.get("context")
    return isinstance(context, dict) and ("span_id" in context or "trace_id" in context)


SHAPES = {"OTLP JSON": is_otlp, "span": is_flat_span}


def is_dataframe_span(d: Any) -> bool:
    """One row of Phoenix's spans DataFrame (`get_spans_dataframe()`) written by pandas
    (`to_json(orient="records", lines=True)`): a span's fields as flat dotted columns
    (`context.span_id`, `attributes.llm.output_messages`) beside its `name` or `span_kind`.

    >>> is_dataframe_span({"name": "llm", "context.span_id": "1", "attributes.x": 2})
    True
    """
    return (
        isinstance(d, dict)
        and ("name" in d or "span_kind" in d)
        and any(isinstance(k, str) and k.startswith(("context.", "attributes.")) for k in d)
    )


#: What a Phoenix spans DataFrame is, and how to export its spans as evaldsl reads them.
#: (Not read as the nested spans are: pandas writes its times as epoch milliseconds by
#: default, which a span's times cannot be told from, an empty column as null, and the
#: DataFrame's index, `context.span_id`, not at all.)
DATAFRAME_SPANS = (
    "a Phoenix spans DataFrame written by pandas (flat columns such as `context.span_id` "
    "and `attributes.llm.output_messages`), which evaldsl does not read"
)
DATAFRAME_HINT = (
    "export the spans in Phoenix's span JSON instead, one object a line with `context` and "
    "`attributes` as objects: the spans Phoenix's client or REST API gives "
    "(`get_spans`, `GET /v1/projects/{project}/spans`), written with `json.dumps`"
)


def shape_of(d: Any) -> str | None:
    """The OTel shape of one item, or `None`."""
    for name, test in SHAPES.items():
        if test(d):
            return name
    return None


# --- spans from either shape -----------------------------------------------------------------


def attributes(items: Any) -> dict[str, Any]:
    """OTLP `[{key, value: {stringValue: ...}}]` as a plain dict (intValue strings → int).

    >>> attributes([{"key": "n", "value": {"intValue": "3"}}])
    {'n': 3}
    """
    out: dict[str, Any] = {}
    for item in _list(items):
        key = item.get("key")
        if isinstance(key, str):
            out[key] = any_value(item.get("value"))
    return out


def any_value(value: Any) -> Any:
    """An OTLP `AnyValue` (`{"stringValue": ...}`, `{"arrayValue": ...}`, ...) as a value.

    >>> any_value({"arrayValue": {"values": [{"intValue": "2"}]}}), any_value({"arrayValue": {}})
    ([2], [])
    """
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
    # an array or a list of key-values of another shape (`{"arrayValue": "x"}`, values
    # that are no list) is a value of no known kind, as a misspelt kind is: the run's
    # error when a reader reads it (an absent or null `values` is OTLP's empty one)
    if "arrayValue" in value:
        array = value["arrayValue"] or {}
        items = array.get("values") or [] if isinstance(array, dict) else None
        if not isinstance(items, list):
            raise UnknownKind(value)
        return [any_value(v) for v in items]
    if "kvlistValue" in value:
        kvlist = value["kvlistValue"] or {}
        pairs = kvlist.get("values") or [] if isinstance(kvlist, dict) else None
        if not isinstance(pairs, list) or not all(isinstance(p, dict) for p in pairs):
            raise UnknownKind(value)
        return attributes(pairs)
    if not value:  # OTLP's empty AnyValue, `{}`: no value, as OTLP defines it
        return None
    raise UnknownKind(value)


class UnknownKind(BadValue):
    """An OTLP `AnyValue` with keys but none of OTLP's kinds (`{"strValue": "x"}`): a
    value written that evaldsl cannot read. OTLP/JSON receivers ignore unknown fields,
    which would make it an empty value, "no value"; a tool name or a message read as
    none would let `no tool X` pass on a trace nobody read. Raised when an attribute is
    read (`RawAttrs` decodes on read; `_attribute_list` defers such a value), so one on
    an attribute no reader reads is no error; `read_spans` names the span and the key."""

    def __init__(self, value: dict[str, Any]) -> None:
        super().__init__(_unknown_kind(value, "an attribute"))
        self.value = value

    def of(self, span: Span) -> BadValue:
        """The error, naming `span` and the attribute that holds the value."""
        key = _unread_key(span, self.value)
        return BadValue(_unknown_kind(self.value, f'span "{span.name}"\'s `{key}`'))


def _unknown_kind(value: dict[str, Any], what: str) -> str:
    for kind, of in (("arrayValue", "values"), ("kvlistValue", "{key, value} objects")):
        if kind in value:  # (a kind OTLP defines, of another shape)
            return f"{what} is {shown(value)}: an OTLP `{kind}` holds `values`, a list of {of}"
    kinds = ", ".join(f"`{k}`" for k in _KINDS)
    return f"{what} is {shown(value)}: an OTLP AnyValue has one of {kinds} (or none: no value)"


#: The kinds of an OTLP `AnyValue`, as OTLP/JSON spells them.
_KINDS = (
    "stringValue",
    "boolValue",
    "intValue",
    "doubleValue",
    "arrayValue",
    "kvlistValue",
    "bytesValue",
)


def _unread_key(span: Span, value: dict[str, Any]) -> str:
    """The key of the span's (or its events') attribute whose value holds the `AnyValue`
    `value` of no known kind: the one read (on the way to the error only)."""
    for a in (span.attrs, *(e["attrs"] for e in span.events)):
        for key in list(a) if isinstance(a, RawAttrs) else ():
            if a.raw(key) is not None:
                try:
                    a.get(key)
                except UnknownKind as found:
                    if found.value == value:
                        return key
                except ValueError:  # (another value it cannot read: not this one)
                    continue
    return "an attribute"


def _unread_value(raw: Raw) -> Any:
    """The value of an attribute `_attribute_list` deferred: the run's error when read."""
    return any_value(bigints.loads(memoryview(raw)))


def _list(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


#: The last nanosecond of the year 9999: a later time (or one before 1970) is not a time.
MAX_NANOS = 253_402_300_799_999_999_999


def nanos(value: Any) -> int | None:
    """Unix nanoseconds from OTLP digits or an ISO time; `None` when it is neither, or
    when it is outside 1970 to 9999.

    >>> nanos("1700000000000000000"), nanos("-5"), nanos("9" * 40), nanos(1e300)
    (1700000000000000000, None, None, None)
    """
    if type(value) is not str:  # (OTLP writes its times as text of digits: those first)
        if isinstance(value, bool):
            return None
        if isinstance(value, int):
            return value if 0 <= value <= MAX_NANOS else None
    if isinstance(value, str):
        if value.isdigit() and value.isascii():
            found = int(value) if len(value) <= 21 else MAX_NANOS + 1
            return found if found <= MAX_NANOS else None
        try:
            moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        try:
            found = int(moment.timestamp()) * 1_000_000_000 + moment.microsecond * 1000
        except (OverflowError, ValueError):  # a time the platform cannot place
            return None
        return found if 0 <= found <= MAX_NANOS else None
    return None


def _objects(value: Any, what: str, where: str) -> list[dict[str, Any]]:
    """`value` as a list of objects; anything else is an error naming where it is."""
    if value is None:
        return []
    if isinstance(value, list) and all(isinstance(v, dict) for v in value):
        return value
    at = f"{where}: " if where else ""
    raise ValueError(f"{at}`{what}` must be a list of objects, not {_shown(value)}")


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"


def _otlp_spans(doc: dict[str, Any]) -> Iterator[Span]:
    """The spans of an OTLP document; a container of the wrong type is a `ValueError`
    saying where (the caller turns it into the run's error)."""
    for r, resource in enumerate(_objects(doc.get("resourceSpans"), "resourceSpans", "")):
        at = f"resourceSpans[{r}]"
        key = "scopeSpans" if "scopeSpans" in resource else "instrumentationLibrarySpans"
        for c, scope in enumerate(_objects(resource.get(key), key, at)):
            where = f"{at}.{key}[{c}]"
            for n, s in enumerate(_objects(scope.get("spans"), "spans", where)):
                try:
                    attrs = _attribute_list(s.get("attributes"))
                    events = _events(s.get("events"))
                except ValueError as why:
                    raise ValueError(f"{where}.spans[{n}]: {why}") from None
                raw_status = s.get("status")
                status: dict[str, Any] = raw_status if isinstance(raw_status, dict) else {}
                start, end = s.get("startTimeUnixNano"), s.get("endTimeUnixNano")
                trace_id = s.get("traceId")
                yield Span(
                    name=str(s.get("name", "")),
                    span_id=str(s.get("spanId") or s.get("name") or "span"),
                    attrs=attrs,
                    start=nanos(start),
                    end=nanos(end),
                    start_text=start,
                    end_text=end,
                    events=events,
                    failed=status.get("code") in STATUS_ERROR,
                    status_message=status.get("message") or None,
                    key=span_key(trace_id, s.get("spanId")),
                    parent=span_key(trace_id, s.get("parentSpanId")),
                )


def _attribute_list(items: Any, first: int = 0, defer: bool = True) -> dict[str, Any]:
    """A span's or an event's OTLP `attributes` as `attributes` gives them; a list holding
    anything but objects, or a key that is neither text nor null, is a `ValueError` (as
    the typed reading refuses them), never an attribute dropped unread. (A key that is
    absent or null is skipped, by both: OTLP JSON may leave out an empty key.) A value of
    no known kind is deferred (`_deferring`); with `defer` false, an `UnknownKind` (`first`:
    the index of the first item, for the messages)."""
    if items is None:
        return {}
    if not isinstance(items, list):
        raise ValueError(
            f"`attributes` must be a list of {{key, value}} objects, not {_shown(items)}"
        )
    out: dict[str, Any] = {}
    try:  # (one `try` for the list, not one an attribute: the common case pays nothing)
        for n, item in enumerate(items, first):
            key = item.get("key") if isinstance(item, dict) else _NOT_AN_OBJECT
            if isinstance(key, str):
                out[key] = any_value(item.get("value"))
            elif key is _NOT_AN_OBJECT:  # (the messages made only here: this runs for each)
                raise ValueError(
                    f"`attributes[{n}]` is {_shown(item)}, not a {{key, value}} object"
                )
            elif key is not None:
                raise ValueError(f"`attributes[{n}].key` is {_shown(key)}, not text")
    except UnknownKind:
        if not defer:
            raise
        return _deferring(items)
    return out


def _deferring(items: list[Any]) -> RawAttrs:
    """`_attribute_list` of attributes of which one or more has an `AnyValue` of no known
    kind: those stay undecoded (their JSON), to be the run's error when read, as the
    typed reading's `RawAttrs` gives it, never when no reader reads them."""
    out = RawAttrs({}, _unread_value)
    for n, item in enumerate(items):
        try:
            out.update(_attribute_list([item], n, defer=False))
        except UnknownKind:
            # (its JSON, as the typed reading keeps it: `_may_hold` looks into it)
            value = orjson.dumps(item.get("value"), default=repr, option=orjson.OPT_NON_STR_KEYS)
            out[item["key"]] = Raw(value)
    return out


_NOT_AN_OBJECT = object()


def _events(items: Any) -> list[dict[str, Any]]:
    """A span's OTLP `events`, their attributes as `_attribute_list` reads them."""
    events = []
    for n, e in enumerate(_objects(items, "events", "")):
        try:
            events.append({"name": e.get("name"), "attrs": _attribute_list(e.get("attributes"))})
        except ValueError as why:
            raise ValueError(f"events[{n}]: {why}") from None
    return events


def _flat_span(s: dict[str, Any]) -> Span:
    context = s.get("context") if isinstance(s.get("context"), dict) else {}
    assert isinstance(context, dict)
    status = s.get("status") if isinstance(s.get("status"), dict) else {}
    assert isinstance(status, dict)
    code = s.get("status_code", status.get("status_code"))
    raw_attrs = s.get("attributes")
    if raw_attrs is not None and not isinstance(raw_attrs, dict):
        # (as the typed reading refuses them: never a span read as one without attributes)
        an_object(raw_attrs, f'span "{s.get("name")}"\'s `attributes`')
    kind = s.get("span_kind")
    if kind is not None and type(kind) is not str:
        flat_kind(kind, s.get("name"))
    raw_events = s.get("events")
    return Span(
        name=str(s.get("name", "")),
        span_id=str(context.get("span_id") or s.get("name") or "span"),
        attrs=raw_attrs or {},
        start=nanos(s.get("start_time")),
        end=nanos(s.get("end_time")),
        start_text=s.get("start_time"),
        end_text=s.get("end_time"),
        events=[] if raw_events is None else _flat_events(raw_events, s.get("name")),
        failed=code in STATUS_ERROR,
        status_message=s.get("status_message") or status.get("description") or None,
        kind=kind,
        key=span_key(context.get("trace_id"), context.get("span_id")),
        parent=span_key(context.get("trace_id"), s.get("parent_id")),
    )


def _flat_events(items: Any, name: Any) -> list[dict[str, Any]]:
    """A flat span's `events`; anything but a list of objects whose `attributes` are an
    object or null is a `BadValue` (as the typed reading refuses them), never an event,
    an exception's message among them, read as none."""
    if isinstance(items, list):
        events = []
        for e in items:
            attrs = e.get("attributes") if isinstance(e, dict) else _NOT_AN_OBJECT
            if attrs is not None and not isinstance(attrs, dict):
                break
            events.append({"name": e.get("name"), "attrs": attrs or {}})
        else:
            return events
    what = f'span "{name}"'  # (worded only here: every span's events are read)
    for e in listed(items, "events", what):
        event = an_object(e, f"an event of {what}")
        if event.get("attributes") is not None:
            an_object(event["attributes"], f"{what}'s event's `attributes`")
    raise AssertionError("unreachable: a refused event was found above")


def flat_kind(kind: Any, name: Any) -> str | None:
    """A flat span's `span_kind`: text or none; anything else (a list, a number) is a
    `BadValue`, never a span skipped as one of no kind (worded only here: every flat
    span's kind is read)."""
    return kind_value(kind, "span_kind", f'span "{name}"')


def iso_time(ns: int | None) -> str | None:
    """Unix nanoseconds as traceplay writes times: `2026-09-01T00:00:02.000Z`, put together
    from texts made once: its minute's (kept: `2026-09-01T00:00:`), its second's and its
    millisecond's (two a span: one `strftime` was ~2.5 µs, a cache of whole seconds
    missed at each new second, and one of seconds of the day at most of them).

    >>> iso_time(1_788_220_802_000_000_000), iso_time(None)
    ('2026-09-01T00:00:02.000Z', None)
    """
    if not ns:
        return None
    ms = ns // 1_000_000
    minute = ms // 60_000
    prefix = _MINUTES.get(minute)
    if prefix is None:
        prefix = keep(_MINUTES, minute, _minute_text(minute), _MAX_TEXTS)
    ms -= minute * 60_000  # (divisions, not `divmod`: no tuple made and taken apart)
    texts = _TEXTS or _texts()
    return prefix + texts[1][ms // 1000] + texts[2][ms % 1000]


def _minute_text(minute: int) -> str:
    """The text of a minute since 1970 (`2026-09-01T00:00:`): its day's (kept) and its
    minute of the day's."""
    days, minute = divmod(minute, 1440)
    day = _DAYS.get(days)
    if day is None:
        text = datetime.fromtimestamp(days * 86_400, tz=UTC).strftime("%Y-%m-%dT")
        day = keep(_DAYS, days, text, _MAX_TEXTS)
    return day + (_TEXTS or _texts())[0][minute]


#: `iso_time`'s texts of a day (`2026-09-01T`) and of a minute since 1970
#: (`2026-09-01T00:00:`), kept as met.
_DAYS: dict[int, str] = {}
_MINUTES: dict[int, str] = {}
_MAX_TEXTS = 4096
#: Its texts of a minute of the day (`00:00:`), a second (`02`) and a millisecond
#: (`.000Z`), made at the first time written.
_TEXTS: list[list[str]] = []


def _texts() -> list[list[str]]:
    _TEXTS.append([f"{m // 60:02d}:{m % 60:02d}:" for m in range(1440)])
    _TEXTS.append([f"{s:02d}" for s in range(60)])
    _TEXTS.append([f".{ms:03d}Z" for ms in range(1000)])
    return _TEXTS


# --- attribute readers -----------------------------------------------------------------------


def indexed(a: dict[str, Any], prefix: str, what: str | None = None) -> list[dict[str, Any]]:
    """The list under `prefix`: a nested list (Phoenix), or flattened `prefix.N.key`
    attributes (OTLP) gathered into one dict per index. With `what` (what holds it, for
    the message), a `prefix` that is neither a list nor null, or a list of anything but
    objects, is a `BadValue`, never a list read as empty.

    >>> indexed({"m.0.role": "user", "m.1.role": "tool", "m.1.content": "x"}, "m")
    [{'role': 'user'}, {'role': 'tool', 'content': 'x'}]
    """
    value = a.get(prefix)
    if isinstance(value, list):
        if what is None:
            return [v for v in value if isinstance(v, dict)]
        for v in value:
            if not isinstance(v, dict):  # (worded only here: every message is tested)
                an_object(v, f"an entry of {what}'s `{prefix}`")
        return value
    if what is not None and value is not None:
        listed(value, prefix, what)
    if isinstance(a, RawAttrs):  # the entries' values stay undecoded until read
        return a.entries(prefix)
    lead = prefix + "."
    # (most dicts asked, a nested message's, have no such key: one search in C for the
    # prefix in all their keys, JSON's texts, as `RawAttrs.entries` does, instead of a
    # loop over them)
    if lead not in "\n".join(a):
        return []
    return [{name: a[key] for name, key in entry} for entry in index_plan(lead, a)]


def _first(a: dict[str, Any], keys: tuple[str, ...]) -> Any:
    """The first of `keys` that `a` holds a value other than null under (`None`: none).
    (`keys` a tuple, not `*keys`: the readers of every span pass their constants as
    they are, no tuple made at each call.)"""
    for key in keys:
        if key in a:  # (read once: a `RawAttrs` read is a call, its decoding kept)
            value = a[key]
            if value is not None:
                return value
    return None


#: A span's input and output token counts, as each convention spells them (first found).
_TOKENS_IN = ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.token_count.prompt")
_TOKENS_OUT = (
    "gen_ai.usage.output_tokens",
    "gen_ai.usage.completion_tokens",
    "llm.token_count.completion",
)


def _usage(a: dict[str, Any], has: SpanKeys) -> tuple[float, float] | None:
    # (each LLM span's: the two counts of the keys the span has, no list made for them)
    got_in = a[k[0]] if len(k := has.tokens_in) == 1 else _present(a, k)
    got_out = a[k[0]] if len(k := has.tokens_out) == 1 else _present(a, k)
    if got_in is None and got_out is None:
        return None
    if type(got_in) is int and type(got_out) is int and got_in >= 0 <= got_out:
        return got_in, got_out  # (what `token_count` gives them, without its two calls)
    try:
        return token_count(got_in), token_count(got_out)
    except BadUsage:  # (named as the span spells it: looked up only for the message)
        return token_count(got_in, _read_key(a, _TOKENS_IN)), token_count(
            got_out, _read_key(a, _TOKENS_OUT)
        )


#: Where a GenAI or OpenLLMetry span names its provider (first found).
_PROVIDERS = ("gen_ai.provider.name", "gen_ai.system")
#: The service tier an OpenAI span's response says billed it (the semconv's name, then its
#: older one), and the tier its request asked for.
_TIERS = (
    "openai.response.service_tier",
    "gen_ai.openai.response.service_tier",
    "ai.response.providerMetadata",
)
#: Where the Vercel AI SDK's model-call spans keep the provider's metadata of the response
#: (JSON text of `{"openai": {"serviceTier": …}}`, `{"anthropic": {"usage": {…}}}`).
AI_SDK_METADATA = _TIERS[2]
_ASKED_TIERS = ("openai.request.service_tier", "gen_ai.openai.request.service_tier")
#: An Anthropic span's prompt-cache counts (the semconv's names, then OpenLLMetry's older ones).
_CACHE_WRITE = (
    "gen_ai.usage.cache_creation.input_tokens",
    "gen_ai.usage.cache_creation_input_tokens",
)
_CACHE_READ = ("gen_ai.usage.cache_read.input_tokens", "gen_ai.usage.cache_read_input_tokens")


def _cache(
    a: dict[str, Any], usage: tuple[float, float] | None, providers: tuple[str, ...]
) -> dict[str, float] | None:
    """The prompt-cache tokens of an Anthropic LLM span (`gen_ai.provider.name` or
    `gen_ai.system` `anthropic`), `{write5m, write1h, read}`, or of an OpenAI one
    (`openai`: its reads, `{cached}`, billed at the model's cached-input price), for
    `cost`; `None` for another provider's span or one without them. The semantic
    conventions count them in `gen_ai.usage.input_tokens`: counts beyond it are a
    `BadUsage` (a span that left them out, whose input would be read short), never tokens
    taken as 0. A span does not say how long its writes are kept: they are priced as
    5-minute writes. (`providers`: the keys of `_PROVIDERS` the span has.)"""
    provider = _present(a, providers)
    if provider not in ("anthropic", "openai"):
        return None
    # (OpenAI's cache is written by no request of the user's: its reads alone)
    write = _first(a, _CACHE_WRITE) if provider == "anthropic" else None
    read = _first(a, _CACHE_READ)
    if write is None and read is None:
        return None
    written = token_count(write, _read_key(a, _CACHE_WRITE))
    reads = token_count(read, _read_key(a, _CACHE_READ))
    if usage is None or written + reads > usage[0]:
        said = (
            f"tokens ({written} written, {reads} read)"
            if provider == "anthropic"
            else f"reads ({reads})"
        )
        raise BadUsage(
            f"the span's prompt-cache {said} are more than its input tokens "
            f"({usage[0] if usage else 'none'}), which count them: its input tokens cannot "
            "be known"
        )
    if provider == "openai":
        return {"cached": reads} if reads else None
    return {"write5m": written, "write1h": 0, "read": reads}


#: An OpenInference span's prompt-cache counts, its total, and where it names its provider.
_OI_CACHE_READ = "llm.token_count.prompt_details.cache_read"
_OI_CACHE_WRITE = "llm.token_count.prompt_details.cache_write"
_OI_TOTAL = "llm.token_count.total"
_OI_PROVIDERS = ("llm.provider", "llm.system")


def _openinference_cache(
    a: dict[str, Any], usage: tuple[float, float] | None, model: Any
) -> tuple[tuple[float, float] | None, dict[str, float] | None]:
    """The usage and prompt-cache tokens of an OpenInference LLM span that counts them
    (`llm.token_count.prompt_details.cache_read`, `cache_write`), for `cost`. By the
    convention they are among `llm.token_count.prompt` (`prompt + completion == total`);
    a span whose `llm.token_count.total` counts them beside the prompt, or, with no total,
    whose counts are more than its prompt (which cannot hold them), left them out (an
    instrumentation that wrote Anthropic's `input_tokens` as the prompt): they are added
    to the input. A total that says the prompt holds more than it does is a `BadUsage`.
    Anthropic's (`llm.provider` or `llm.system` `anthropic`, or a Claude model on any
    provider) are priced at its multiples of the input price; anyone else's reads at the
    model's cached-input price, and its writes as input."""
    read = token_count(a.get(_OI_CACHE_READ), _OI_CACHE_READ)
    write = token_count(a.get(_OI_CACHE_WRITE), _OI_CACHE_WRITE)
    if usage is None or not (read or write):  # (no input to price them among)
        return usage, None
    given, out = usage
    total = a.get(_OI_TOTAL)
    if total is None:
        apart = read + write > given
    else:
        apart = token_count(total, _OI_TOTAL) == given + out + read + write
    if apart:
        given += read + write
    elif read + write > given:
        raise BadUsage(
            f"`llm.token_count.prompt_details` counts {count_text(read + write)} prompt-cache "
            f"tokens, more than its `llm.token_count.prompt` ({count_text(given)}), which "
            f"its `{_OI_TOTAL}` says counts them: its input tokens cannot be known"
        )
    provider = _first(a, _OI_PROVIDERS)
    if provider == "anthropic" or (isinstance(model, str) and "claude" in model.lower()):
        return (given, out), {"write5m": write, "write1h": 0, "read": read}
    return (given, out), ({"cached": read} if read else None)


class SpanKeys(msgspec.Struct, frozen=True, gc=False):
    """Which of the keys the readers look for a span has, worked out once per key set
    (`keys_of`): for each `_first` of the readers, the keys of its tuple the span has, in
    order (`_present` reads them); for each test of one key, whether it has it. (Spans of
    one instrumentation and one conversation length have the same keys; and a test of a
    key in a `RawAttrs`, a `dict` subclass, goes through its type, ~300 instructions where
    a `dict`'s own takes ~60: ~11 of them a span.)"""

    keys: tuple[str, ...]  # the span's keys (`spanplan`'s key set too)
    oi_kind: bool  # `openinference.span.kind`
    tl_kind: bool  # `traceloop.span.kind`
    operation: bool  # `gen_ai.operation.name`
    tool_name: bool  # `gen_ai.tool.name` (or the Vercel AI SDK's `AI_SDK_TOOL_NAME`)
    request_type: bool  # `llm.request.type`
    output_messages: bool  # `gen_ai.output.messages`
    completion: bool  # `gen_ai.completion`
    finish: bool  # `FINISH_REASONS`
    is_error: bool  # `gen_ai.tool.result.is_error`
    error_type: bool  # `error.type`
    tool_names: tuple[str, ...]
    call_ids: tuple[str, ...]
    tool_results: tuple[str, ...]
    tool_arguments: tuple[str, ...]
    models: tuple[str, ...]
    tokens_in: tuple[str, ...]
    tokens_out: tuple[str, ...]
    providers: tuple[str, ...]
    tiers: tuple[str, ...]
    asked_tiers: tuple[str, ...]
    oi_cache: bool  # OpenInference's `llm.token_count.prompt_details.cache_read`/`_write`
    output: Plan  # where its indexed output messages are (`spanplan`: one lookup a span)
    # the kinds of its spans by their kinds' values (`_kind`), as met
    kinds: dict[tuple[Any, ...], str]


#: `keys_of`'s plans by key set (bounded as `rawattrs`' plans are).
_KEY_PLANS: dict[tuple[str, ...], SpanKeys] = {}


def keys_of(a: dict[str, Any]) -> SpanKeys:
    """What the readers look for in `a`, by its key set (see `SpanKeys`).

    >>> has = keys_of({"gen_ai.system": "openai", "llm.model_name": "m"})
    >>> has.providers, has.models, has.tool_name
    (('gen_ai.system',), ('llm.model_name',), False)
    """
    keys = tuple(a)  # (its keys: a `RawAttrs` iterates as its `dict`)
    found = _KEY_PLANS.get(keys)
    if found is None:
        found = _plan_keys(keys)
        if len(keys) <= MAX_KEPT_KEYS:
            keep(_KEY_PLANS, keys, found, MAX_PLANS)
    return found


def _plan_keys(keys: tuple[str, ...]) -> SpanKeys:
    has = frozenset(keys)

    def present(names: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(name for name in names if name in has)

    return SpanKeys(
        keys,
        "openinference.span.kind" in has,
        "traceloop.span.kind" in has,
        "gen_ai.operation.name" in has,
        "gen_ai.tool.name" in has or AI_SDK_TOOL_NAME in has,
        "llm.request.type" in has,
        OUTPUT_MESSAGES in has,
        "gen_ai.completion" in has,
        FINISH_REASONS in has,
        "gen_ai.tool.result.is_error" in has,
        ERROR_TYPE in has,
        present(_TOOL_NAMES),
        present(_CALL_IDS),
        present(_TOOL_RESULTS),
        present(_TOOL_ARGUMENTS),
        present(_MODELS),
        present(_TOKENS_IN),
        present(_TOKENS_OUT),
        present(_PROVIDERS),
        present(_TIERS),
        present(_ASKED_TIERS),
        _OI_CACHE_READ in has or _OI_CACHE_WRITE in has,
        output_plan(keys),
        {},
    )


def _tier(a: dict[str, Any], has: SpanKeys) -> Any:
    """The service tier an LLM span says billed it (`_TIERS`), else the one its request
    asked for (`_ASKED_TIERS`) unless "auto", which says nothing of the tier that served it
    (read as a span that says none is: the standard one)."""
    tier = None
    for key in has.tiers:
        tier = a[key]
        if key == AI_SDK_METADATA and tier is not None:
            tier = _metadata_tier(tier)
        if tier is not None:
            break
    if tier is None:
        tier = _present(a, has.asked_tiers)
        return None if tier == "auto" else tier
    return tier


def _metadata_tier(metadata: Any) -> Any:
    """The service tier a Vercel AI SDK span's `ai.response.providerMetadata` says billed
    it: a provider's `serviceTier` (OpenAI's), else its `usage.service_tier` (Anthropic's
    body's); None when it says none. Metadata that is not an object of objects is a
    `BadValue` naming it: a tier it may hold cannot be read, and a response billed at
    another tier is never priced at the standard one."""
    found = parse_json_text(metadata) if isinstance(metadata, str) else metadata
    if not isinstance(found, dict) or not all(isinstance(v, dict) for v in found.values()):
        raise BadValue(
            f"`{AI_SDK_METADATA}` is {shown(found)}, not an object of each provider's metadata"
        )
    for entry in found.values():
        tier = entry.get("serviceTier")
        if tier is None and type(usage := entry.get("usage")) is dict:
            tier = usage.get("service_tier")
        if tier is not None:
            return tier
    return None


def _present(a: dict[str, Any], keys: tuple[str, ...]) -> Any:
    """`_first` of keys `a` has (a `SpanKeys` tuple): the first whose value is not null.
    (The readers of every span read a tuple of one key, as most spans have, themselves:
    `a[k[0]] if len(k) == 1`, a call a read less, ~40,000 a check of a 2,000-turn file.)"""
    for key in keys:
        value = a[key]
        if value is not None:
            return value
    return None


def _read_key(a: dict[str, Any], keys: tuple[str, ...]) -> str:
    """The key `_first` read among `keys` (for a message: a count that is not one is named
    as the span spells it, `llm.token_count.prompt`, not as the first spelling is)."""
    return next((key for key in keys if key in a and a[key] is not None), keys[0])


#: `_Output.unread` of an output that left nothing unread.
_NOTHING_UNREAD: Mapping[str, int] = MappingProxyType({})


class _Output(msgspec.Struct, frozen=True):
    """An LLM span's output messages as read. (A msgspec struct, as `Span` is: one is made
    for every LLM span, and an attrs frozen class's `__init__` was ~50 bytecodes.)"""

    text: str | None  # `None`: redacted (OpenInference's `REDACTED`), unknown
    # name, arguments as written (JSON text is parsed by `_span_events`, for the calls whose
    # arguments a case reads: `reads.Reads`), id
    calls: list[tuple[str, Any, str | None]]
    others: int = 0  # choices after the first, not read (`gen_ai.output.messages`)
    # the results of calls the provider ran (GenAI server tool calls): (call id, output);
    # and the parts not read, by reason. (Defaults shared, never changed: most outputs
    # have neither, and a list and a dict made and freed for each LLM span were ~2% of
    # reading a file.)
    results: Sequence[tuple[str | None, Any]] = ()
    unread: Mapping[str, int] = _NOTHING_UNREAD
    finish: str | None = None  # the first GenAI output message's `finish_reason`


def _genai_messages(value: Any, field: str) -> _Output | None:
    """Text and tool calls of GenAI `gen_ai.output.messages` (parts) or message JSON
    (`field`: where they are, for a message); `None` for null. Text that is not JSON of
    messages or a message is the answer; anything else that is not messages, a message
    that is neither text nor an object among them, is a `BadValue`, never an answer
    read as none. Each of `gen_ai.output.messages` is one choice (the semconv's
    `OutputMessage`: "choice, candidate", each with its `finish_reason`): the first is
    read, as the OpenAI adapter reads a body of n > 1 choices, and the others counted."""
    messages = parse_json_text(value)
    others = 0
    if isinstance(messages, dict):
        messages = [messages]
    elif not isinstance(messages, list):
        if isinstance(value, str):  # ("42", "null": text the model wrote)
            return _Output(value, [])
        if value is None:
            return None
        raise BadValue(f"an LLM span's `{field}` is {shown(value)}, not a list of messages")
    elif field == OUTPUT_MESSAGES and len(messages) > 1:
        messages, others = messages[:1], len(messages) - 1
    text: list[str] = []
    calls: list[tuple[str, Any, str | None]] = []
    results: list[tuple[str | None, Any]] = []
    unread: dict[str, int] = {}
    finish = None
    for message in messages:
        if isinstance(message, str):
            text.append(message)
            continue
        if not isinstance(message, dict):
            raise BadValue(f"an output message is {shown(message)}, not text or an object")
        if finish is None and type(message.get("finish_reason")) is str:
            finish = message["finish_reason"]  # (the choice's: the semconv's OutputMessage)
        if isinstance(message.get("message"), dict):  # a choice: {index, message, …}
            message = message["message"]
        parts = message.get("parts")
        if isinstance(parts, list):
            for part in parts:
                if type(part) is not dict:  # (tested here: a call a part less)
                    part = an_object(part, "a message part")
                _part(part, text, calls, results, unread)
        elif parts is not None:
            listed(parts, "parts", "an output message")
        else:
            content = text_of_parts(message.get("content"))
            if content:
                text.append(content)
            for call in _list(message.get("tool_calls")):
                function: dict[str, Any] = (
                    call["function"] if isinstance(call.get("function"), dict) else call
                )
                name = tool_name(function.get("name", MISSING), "name", "a message's tool call")
                call_id = link_id(call.get("id"), "id", "a message's tool call")
                calls.append((name, function.get("arguments"), call_id))
    return _Output("\n".join(text), calls, others, results, unread, finish)


#: Where each kind of GenAI tool-call part holds its arguments (a request) or its output
#: (a response): the semconv's ToolCallRequestPart, ServerToolCallPart (a tool the
#: provider ran, such as `web_search`: its details are its arguments),
#: ToolCallResponsePart and ServerToolCallResponsePart.
_CALL_PARTS = {"tool_call": "arguments", "server_tool_call": "server_tool_call"}
_RESULT_PARTS = {
    "tool_call_response": "response",
    "server_tool_call_response": "server_tool_call_response",
}


def _part(
    part: dict[str, Any],
    text: list[str],
    calls: list[tuple[str, Any, str | None]],
    results: list[tuple[str | None, Any]],
    unread: dict[str, int],
) -> None:
    """Read one GenAI output message part into `text`, `calls` or `results`; a part of
    another type (`reasoning`, `blob`, `file`, `uri`, a provider's own) is counted in
    `unread`, by type, never dropped unsaid."""
    # (each field's type tested here, and the functions that word its error called only
    # for a field of another: most parts are a text or a call whose fields are text)
    kind = part.get("type")
    if kind is not None and type(kind) is not str:
        kind = kind_value(kind, "type", "a message part")  # (never read past)
    if kind == "text":
        content = part.get("content", MISSING)
        if content is MISSING:
            # (the convention's TextPart writes `content`; a part written as the providers'
            # own content parts are, `{"type": "text", "text": …}`, is the same text, and
            # one with neither holds an answer nobody can read: never "")
            if "text" not in part:
                raise BadValue("a `text` message part has no `content` (nor `text`)")
            add_text(text, part["text"], "text", "a `text` part")
        else:
            add_text(text, content, "content", "a `text` part")
    elif kind in _CALL_PARTS:
        name = part.get("name", MISSING)
        if type(name) is not str or not name:
            name = tool_name(name, "name", f"a `{kind}` part")
        call_id = part.get("id")
        if call_id is not None and type(call_id) is not str:
            call_id = link_id(call_id, "id", f"a `{kind}` part")
        calls.append((name, part.get(_CALL_PARTS[kind]), call_id))
    elif kind in _RESULT_PARTS:
        call_id = link_id(part.get("id"), "id", f"a `{kind}` part")
        results.append((call_id, part.get(_RESULT_PARTS[kind])))
    else:
        reason = f"`{kind}` message parts" if kind else "message parts without a type"
        unread[reason] = unread.get(reason, 0) + 1


def _openinference_output(a: dict[str, Any]) -> _Output | None:
    messages = indexed(a, "llm.output_messages", "an OpenInference LLM span")
    if not messages:
        return None
    text: list[str] = []
    calls: list[tuple[str, Any, str | None]] = []
    for m in messages:
        add_text(text, m.get("message.content"), *OPENINFERENCE_MESSAGE)
        for part in indexed(m, "message.contents", OPENINFERENCE_MESSAGE[1]):
            add_part(text, part.get("message_content.type", "text"), part, "message_content.text")
        for call in indexed(m, "message.tool_calls", OPENINFERENCE_MESSAGE[1]):
            name = tool_name(call.get("tool_call.function.name", MISSING), *OPENINFERENCE_CALL)
            args = call.get("tool_call.function.arguments")
            call_id = link_id(call.get("tool_call.id"), *OPENINFERENCE_ID)
            calls.append((name, args, call_id))
    return _Output(answer_of(text), calls)


def _openllmetry_output(a: dict[str, Any]) -> _Output | None:
    completions = indexed(a, "gen_ai.completion", "an OpenLLMetry LLM span")
    if not completions:
        return None
    text: list[str] = []
    calls: list[tuple[str, Any, str | None]] = []
    for c in completions:
        add_text(text, c.get("content"), *OPENLLMETRY_MESSAGE)
        for call in indexed(c, "tool_calls", OPENLLMETRY_MESSAGE[1]):
            name = tool_name(call.get("name", MISSING), *OPENLLMETRY_CALL)
            call_id = link_id(call.get("id"), *OPENLLMETRY_ID)
            calls.append((name, call.get("arguments"), call_id))
    return _Output("\n".join(text), calls)


def _output(span: Span, has: SpanKeys) -> _Output | None:
    """The answer and tool calls of an LLM span's output messages; `None` when it records
    none in any form read here (its instrumentation captured no content: the answer is
    unknown, never "")."""
    a = span.attrs
    if has.output_messages:
        found = _genai_messages(a[OUTPUT_MESSAGES], OUTPUT_MESSAGES)
        if found is not None:
            return found
    # `gen_ai.completion` as one JSON text is the older GenAI name; OpenLLMetry's indexed
    # `gen_ai.completion.N.*` attributes are read below
    if has.completion and isinstance(a["gen_ai.completion"], str):
        found = _genai_messages(a["gen_ai.completion"], "gen_ai.completion")
        if found is not None:
            return found
    details = _details(span) if span.events else None  # (most have none: no call)
    if details is not None and OUTPUT_MESSAGES in details:
        # the current GenAI convention's event: the same messages as on the span
        found = _genai_messages(details[OUTPUT_MESSAGES], OUTPUT_MESSAGES)
        if found is not None:
            return found
    planned = indexed_output(a, has.output) if isinstance(a, RawAttrs) else UNPLANNED
    if isinstance(planned, tuple):  # the typed reading's: as the two readers below read
        return _Output(*planned)
    if planned is UNPLANNED:
        for reader in (_openllmetry_output, _openinference_output):
            found = reader(a)
            if found is not None:
                return found
    for event in span.events:
        if event.get("name") in ("gen_ai.choice", "gen_ai.content.completion"):
            e = event["attrs"] if isinstance(event.get("attrs"), dict) else {}
            for key in ("message", "gen_ai.completion", "content"):
                if key in e:
                    found = _genai_messages(e[key], key)
                    if found is not None:
                        return found
            if "tool_calls" in e:
                found = _genai_messages({"tool_calls": parse_json_text(e["tool_calls"])}, "")
                if found is not None:
                    return found
    found = _ai_sdk_output(a)
    if found is not None:
        return found
    value = a.get("output.value")
    if value == REDACTED:  # (its mime type is dropped with it)
        return _Output(None, [])
    if isinstance(value, str) and a.get("output.mime_type", "text/plain") == "text/plain":
        return _Output(value, [])
    return None


#: Where the Vercel AI SDK's model-call spans (`ai.generateText.doGenerate`,
#: `ai.streamText.doStream`) keep their output: its text, and its tool calls as JSON text.
AI_SDK_TEXT = "ai.response.text"
AI_SDK_CALLS = "ai.response.toolCalls"
_AI_SDK_CALL = "a tool call of `ai.response.toolCalls`"


def _ai_sdk_output(a: dict[str, Any]) -> _Output | None:
    """The answer and tool calls of a Vercel AI SDK model-call span (`ai.response.text`,
    `ai.response.toolCalls`: a JSON list of `{toolCallId, toolName, args}`, `input` in
    v5), or `None` when it records neither (no content: the answer is unknown). A step
    that only called tools writes no text: its answer is "", as a chat completion's."""
    text = a.get(AI_SDK_TEXT)
    listed_calls = a.get(AI_SDK_CALLS)
    if text is None and listed_calls is None:
        return None
    if text is not None and not isinstance(text, str):
        raise BadValue(f"`{AI_SDK_TEXT}` is {shown(text)}, not text")
    calls: list[tuple[str, Any, str | None]] = []
    if listed_calls is not None:
        found = parse_json_text(listed_calls) if isinstance(listed_calls, str) else listed_calls
        for call in listed(found, AI_SDK_CALLS, "a Vercel AI SDK model-call span"):
            call = an_object(call, _AI_SDK_CALL)
            name = tool_name(call.get("toolName", MISSING), "toolName", _AI_SDK_CALL)
            args = call["input"] if "input" in call else call.get("args")
            calls.append((name, args, link_id(call.get("toolCallId"), "toolCallId", _AI_SDK_CALL)))
    return _Output(text or "", calls)


#: How `inspect` counts the output messages after the first (as the OpenAI adapter does).
CHOICES = "choices after the first (n > 1)"

#: The GenAI event that carries an inference's messages apart from the span's
#: attributes (`gen_ai.input.messages`, `gen_ai.output.messages`, …), and the key of
#: its output messages.
DETAILS_EVENT = "gen_ai.client.inference.operation.details"
OUTPUT_MESSAGES = "gen_ai.output.messages"


def _details(span: Span) -> dict[str, Any] | None:
    """The attributes of a span's first `gen_ai.client.inference.operation.details`
    event (read as the span's own attributes are), or `None` when it has none."""
    for event in span.events:
        if event.get("name") == DETAILS_EVENT:
            e = event.get("attrs")
            return e if isinstance(e, dict) else None
    return None


def _input_results(a: dict[str, Any]) -> list[tuple[str | None, Any, Any]]:
    """Tool results an LLM span's input messages carry: (call id, tool name, output).

    GenAI's `gen_ai.input.messages`: `tool_call_response` parts (their output in
    `response`, as the conventions name it, else in `result`, as pydantic-ai and Logfire
    write it), and `tool` messages without parts (`content`, `tool_call_id`: OpenAI's
    shape, as older instrumentations wrote them); OpenLLMetry's `gen_ai.prompt.N` (or
    the older GenAI `gen_ai.prompt`, a list or its JSON text) and OpenInference's
    `llm.input_messages.N` with role `tool`. A call id that is not text is a `BadValue`.
    """
    found: list[tuple[str | None, Any, Any]] = []
    messages = (
        parse_json_text(a.get("gen_ai.input.messages"))
        if _may_hold(a, "gen_ai.input.messages", *_TOOL_TEXTS)
        else None
    )
    for message in messages if isinstance(messages, list) else []:
        parts = message.get("parts") if isinstance(message, dict) else None
        for part in _list(parts):
            if part.get("type") == "tool_call_response":
                output = part["response"] if "response" in part else part.get("result")
                call_id = link_id(part.get("id"), "id", "a `tool_call_response` part")
                found.append((call_id, part.get("name"), output))
        if parts is None and isinstance(message, dict) and message.get("role") == "tool":
            call_id = link_id(message.get("tool_call_id"), "tool_call_id", "a `tool` message")
            found.append((call_id, message.get("name"), message.get("content")))
    for p in _prompt(a):
        if p.get("role") == "tool":
            call_id = link_id(p.get("tool_call_id"), "tool_call_id", _PROMPT_TOOL_MESSAGE)
            found.append((call_id, p.get("name"), p.get("content")))
    for m in indexed(a, "llm.input_messages"):
        if m.get("message.role") == "tool":
            call_id = link_id(
                m.get("message.tool_call_id"), "message.tool_call_id", _INPUT_TOOL_MESSAGE
            )
            found.append((call_id, m.get("message.name"), m.get("message.content")))
    return found


#: The older GenAI convention's event for a tool message of an LLM call's input (a tool's
#: result sent back: `content`, and the call's `id`), which Koog writes on its spans.
TOOL_MESSAGE_EVENT = "gen_ai.tool.message"
_TOOL_MESSAGE = "a `gen_ai.tool.message` event"


def _event_results(span: Span) -> list[tuple[str | None, Any, Any]]:
    """Tool results an LLM span's `gen_ai.tool.message` events carry: (call id, tool
    name, output), from the event's attributes (`id`, `content`; Koog's, as the SDK
    without event bodies writes them) or its `body` (a JSON object of them)."""
    found: list[tuple[str | None, Any, Any]] = []
    for event in span.events:
        if event.get("name") == TOOL_MESSAGE_EVENT:
            e = event.get("attrs")
            fields = e if isinstance(e, dict) else {}
            body = fields.get("body")
            body = parse_json_text(body) if isinstance(body, str) else body
            if isinstance(body, dict):
                fields = body
            call_id = link_id(fields.get("id"), "id", _TOOL_MESSAGE)
            found.append((call_id, fields.get("name"), fields.get("content")))
    return found


#: What the JSON of a history holding a tool's result holds: a `tool_call_response` part,
#: or a message of role `tool` (in JSON text, or a structured value).
_TOOL_TEXTS = (b"tool_call_response", b'tool\\"', b'tool"')
_PROMPT_TOOL_MESSAGE = "a tool message of `gen_ai.prompt`"
_INPUT_TOOL_MESSAGE = "an OpenInference tool message (`llm.input_messages.N`)"


def _prompt(a: dict[str, Any]) -> list[dict[str, Any]]:
    """The messages of `gen_ai.prompt`: OpenLLMetry's `gen_ai.prompt.N.*`, or the older
    GenAI attribute itself, a list or its JSON text (as `gen_ai.completion` is read)."""
    value = a.get("gen_ai.prompt")
    if isinstance(value, str):
        value = parse_json_text(value)
        return [m for m in value if isinstance(m, dict)] if isinstance(value, list) else []
    return indexed(a, "gen_ai.prompt")


def _may_hold(a: dict[str, Any], key: str, *texts: bytes) -> bool:
    """Whether `key`'s value may hold one of `texts` once decoded: `False` only for an
    undecoded value (`RawAttrs`) whose JSON holds none of them nor an escape (`\\u`) that
    could spell one, at any depth of JSON in JSON text (the message history an LLM span
    carries is read only for its tool results, and most of them have none)."""
    raw = a.raw(key) if isinstance(a, RawAttrs) else None
    return raw is None or b"\\u" in raw or any(text in raw for text in texts)


# --- classification and reading --------------------------------------------------------------


def _kind(span: Span, has: SpanKeys) -> str:
    a = span.attrs
    # The kind follows from these values, the span's own kind and its key set, unless
    # `llm.request.type`'s value decides it: kept per key set for the values met (spans
    # of one instrumentation repeat them), so a span's kind is one lookup. A value not
    # yet decoded (a typed reading's `Raw`) is looked up by its JSON, with the class of
    # its attributes (the same JSON is an AnyValue in OTLP, a plain value in a flat
    # span), and left undecoded: a first read is ~2,900 instructions, its JSON's copy
    # ~450. (Each read only when the span has it: a span has one convention's kind. A
    # span's attributes are a plain `RawAttrs` only when `_attribute_list` deferred them,
    # whose undecoded values are each an error when read: never a kind kept, so a class
    # stands for one decoding.)
    values = (
        as_stored(a, "openinference.span.kind") if has.oi_kind else None,
        as_stored(a, "traceloop.span.kind") if has.tl_kind else None,
        as_stored(a, "gen_ai.operation.name") if has.operation else None,
        span.kind,
        type(a),
    )
    try:
        known = has.kinds.get(values)
    except TypeError:  # (a kind that is a list or an object: the run's error, below)
        known = None
    if known is not None:
        return known
    oi_kind = a["openinference.span.kind"] if has.oi_kind else None
    tl_kind = a["traceloop.span.kind"] if has.tl_kind else None
    op = a["gen_ai.operation.name"] if has.operation else None
    if not (
        (oi_kind is None or isinstance(oi_kind, str))
        and (tl_kind is None or isinstance(tl_kind, str))
        and (op is None or isinstance(op, str))
    ):
        # a kind that is not text is the run's error, never a span read past as another
        # kind (its message made only here: this runs for every span)
        what = f'span "{span.name}"'
        for key in ("openinference.span.kind", "traceloop.span.kind", "gen_ai.operation.name"):
            kind_value(a.get(key), key, what)
    # (cased only when there is one: most spans have one convention's kind, or none)
    oi = oi_kind or span.kind
    oi = oi.upper() if oi else ""
    tl = tl_kind.lower() if tl_kind else ""
    if (
        op == "execute_tool"
        or oi == "TOOL"
        or tl == "tool"
        or (has.tool_name and op not in _LLM_OPERATIONS)
    ):
        kind = "tool"
    elif (
        op in _LLM_OPERATIONS
        or oi == "LLM"
        or (op not in _NOT_LLM_OPERATIONS and has.providers)  # (`gen_ai.system` too)
    ):
        kind = "llm"
    elif not oi and not tl and has.request_type:  # (decided by a value read: not kept)
        if a["llm.request.type"] in ("chat", "completion"):
            return "llm"
        return _skipped_kind(has, oi, tl, op)
    else:
        kind = _skipped_kind(has, oi, tl, op)
    keep(has.kinds, values, kind, _MAX_KINDS)
    return kind


#: The kinds kept for one key set's values (`_kind`; most files meet a few).
_MAX_KINDS = 64


def _skipped_kind(has: SpanKeys, oi: str, tl: str, op: str | None) -> str:
    """The kind of a span read past (how `inspect` counts it), from its cased kinds."""
    if not has.keys:
        return "spans without attributes"
    if oi:
        return f"`{oi}` spans (OpenInference)"
    if tl:
        return f"`{tl}` spans (OpenLLMetry)"
    if op:
        return f"`{op}` spans"
    return "spans with no GenAI, OpenInference or OpenLLMetry kind"


def read_otel(items: Items, why: str) -> tuple[Trace, float | None]:
    """The events of OTel items (see the module doc) and the run's latency in ms."""
    with paused_gc():  # many small objects, no cycles (see gcpause)
        return _read_otel(items, why)


def _read_otel(items: Items, why: str) -> tuple[Trace, float | None]:
    trace = Trace("otel", items.path, why)
    spans: list[Span] = []
    for index, item in enumerate(items):
        if is_otlp(item):
            trace.saw("OTLP document")
            try:
                spans.extend(_otlp_spans(item))
            except ValueError as why:
                raise items.error(
                    index,
                    f"{items.where(index)} is not OTLP JSON: {why}",
                    "resourceSpans[].scopeSpans[].spans[] are lists of objects",
                ) from None
        elif is_flat_span(item):
            spans.append(_flat_span(item))
        elif is_dataframe_span(item):
            where = items.where(index)
            raise items.error(index, f"{where} is a row of {DATAFRAME_SPANS}", DATAFRAME_HINT)
        else:
            raise items.error(
                index,
                f"{items.where(index)} is not an OTLP JSON document or a span",
                "OTLP JSON has `resourceSpans`; a flat span has `name`, `context.span_id` "
                "and `attributes`",
            )
    return trace, read_spans(spans, trace)


def read_spans(spans: list[Span], trace: Trace) -> float | None:
    """Add the events of `spans` (read from a file, in file order) to `trace`, and give
    the run's latency in ms (see the module doc)."""
    spans, repeats, keys = unrepeated(spans)
    if repeats:
        trace.skip(REPEATED, repeats)
    times = [s.start for s in spans]
    ends = [s.end for s in spans]
    bad = None
    unknown = None in times or None in ends  # (most files: every time known, told in C)
    if unknown:
        bad = next((_shown(t) for s in spans for t in _unread_times(s)), None)
    if bad is not None:
        trace.note(
            f"span times are not numbers of nanoseconds since 1970 up to 9999 ({bad}): spans "
            "are taken in file order and `latency` cannot be measured"
        )
    elif (
        backwards := next(
            (s for s in spans if s.start is not None and s.end is not None and s.end < s.start),
            None,
        )
        # (every time known: tested in C, each an int)
        if unknown or any(map(operator.lt, cast("list[int]", ends), cast("list[int]", times)))
        else None
    ) is not None:  # (a time of 0 is a time: the test is `is not None`, not truth)
        bad = backwards.name
        trace.note(f'span "{backwards.name}" ends before it starts: `latency` cannot be measured')
    elif None not in times and not _rising(cast("list[int]", times)):
        # (by start, then end, a missing end first: the key made in C when every span
        # has both, as most files have them)
        spans.sort(key=_START_END if None not in ends else lambda s: (s.start or 0, s.end or 0))
    clock = bad is None
    latency = None
    starts = [t for t in times if t is not None] if unknown else cast("list[int]", times)
    known_ends = [t for t in ends if t is not None] if unknown else cast("list[int]", ends)
    if clock and starts and known_ends:
        latency = (max(known_ends) - min(starts)) / 1e6
    reads = current_reads() or EVERYTHING
    if latency is None and not reads.times:
        # (a run's latency is then its events' first and last times, and the runner's
        # `latency` metric reads them whatever its assertions read: they are written)
        reads = Reads(reads.arguments, reads.results, True)
    trace.results_read = reads.results
    span = None
    trace.capture_hint = CAPTURE_HINT
    try:  # (one `try` for the file: an `AnyValue` of no known kind is rare)
        # (`keys_of` called only for a key set met first: a call a span less)
        kept = _KEY_PLANS.get
        plans = [kept(tuple(span.attrs)) or keys_of(span.attrs) for span in spans]
        kinds: list[str] = []
        append = kinds.append
        for span, has in zip(spans, plans, strict=True):  # (`span`: the one an error names)
            append(_kind(span, has))
        for i in wrappers(spans, kinds, keys):
            kinds[i] = WRAPPER  # (skipped: the span under it is the same model call)
        # the spans read, counted at once, in the order each kind first comes (as counting
        # them one at a time, a call for each span, put them)
        for kind in dict.fromkeys(kinds):
            if kind in _SEEN_AS:
                trace.saw(_SEEN_AS[kind], kinds.count(kind))
        for span, kind, has in zip(spans, kinds, plans, strict=True):
            _span_events(span, kind, has, trace, clock, reads)
    except UnknownKind as unread:
        assert span is not None
        raise unread.of(span) from None
    _note_unrecorded(trace)
    return latency


def _rising(times: list[int]) -> bool:
    """Whether each of `times` is later than the one before: spans so started are in start
    order already, as most files write them (told in C, where sorting made a key for each
    span and compared them: ~1% of reading a file)."""
    return all(map(operator.lt, times, islice(times, 1, None)))


#: A span's start and end, its sort key when both are known.
_START_END = operator.attrgetter("start", "end")


#: How to record what a trace left out (the end of an error verdict's message).
CAPTURE_HINT = (
    "turn on its instrumentation's content capture (OTel GenAI: "
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true) and record it again"
)


def _note_unrecorded(trace: Trace) -> None:
    """Say in the reading what the trace left out (`evaldsl inspect` shows it)."""
    left = trace.unrecorded()
    if left is None:
        return
    if left.answers:
        n = len(left.answers)
        lead = (
            "the LLM span records"
            if n == left.responses == 1
            else f"{n} of {left.responses} LLM spans record"
        )
        if left.answers_why:  # (a content filter removed an answer: `_unfiltered`)
            trace.note(f"{lead} no answer: {left.answers_why}; `answer` on it is an error")
        else:
            trace.note(
                f"{lead} no output messages (no message content): their answers are "
                "unknown, and `answer` on them is an error"
            )
    if left.arguments:
        n = sum(map(len, left.arguments.values()))
        trace.note(
            f"{_count(n, 'tool call')} no arguments (no message content): "
            "`args` tests on them are errors"
        )
    if left.results:
        n = sum(left.results.values())
        trace.note(
            f"{_count(n, 'tool span')} no result (no message content): "
            "`result` tests on them are errors"
        )


#: How to record what OpenInference redacted (the end of an error verdict's message).
REDACTED_HINT = "turn off its OpenInference hiding (OPENINFERENCE_HIDE_*) and record it again"


def _redacted(trace: Trace) -> None:
    """Say that an OpenInference value read was `REDACTED` (hidden by its `TraceConfig`):
    read as not recorded, and recorded again only with the hiding turned off."""
    trace.capture_hint = REDACTED_HINT
    trace.note(
        f'OpenInference redacted message content ("{REDACTED}": OPENINFERENCE_HIDE_INPUTS, '
        "OPENINFERENCE_HIDE_OUTPUTS or their `_TEXT` settings): what it hid is read as not "
        "recorded"
    )


FINISH_REASONS = "gen_ai.response.finish_reasons"
#: Finish reasons that leave the answer not whole, by the semconv's words and the raw
#: words of providers (their instrumentations pass them on): what the note says of each.
_NOT_WHOLE = {
    "length": "stopped at its token limit",
    "max_tokens": "stopped at its token limit",
    "MAX_TOKENS": "stopped at its token limit",
    "content_filter": "was stopped by a content filter",
    "SAFETY": "was stopped by a content filter",
    "content-filter": "was stopped by a content filter",  # (the Vercel AI SDK's word)
}


#: The finish reasons of a content filter (the semconv's, Gemini's, the AI SDK's) among
#: `_NOT_WHOLE`.
_FILTERS = frozenset({"content_filter", "SAFETY", "content-filter"})


def _unfiltered(reasons: Any, trace: Trace) -> str | None:
    """The answer of an LLM span whose output has no text, by its first finish reason:
    "", unless a content filter stopped it, which removed the answer: unknown (`None`),
    never "" (`not answer contains "…"` would pass on what it removed), as the `openai`
    format reads such a response."""
    first = reasons[0] if isinstance(reasons, list) and reasons else reasons
    if not isinstance(first, str) or first not in _FILTERS:
        return ""
    trace.answers_why = f"a content filter removed it (finish reason `{first}`)"
    return None


def _finish_note(reasons: Any, trace: Trace, where: str = FINISH_REASONS) -> None:
    """Note an LLM span whose first choice (the answer: `_genai_messages`) has a finish
    reason that leaves it not whole, as the OpenAI and Anthropic readers note theirs:
    `gen_ai.response.finish_reasons` is one reason a choice (a lone text: one choice);
    `where`: the field that says it."""
    first = reasons[0] if isinstance(reasons, list) and reasons else reasons
    said = _NOT_WHOLE.get(first) if isinstance(first, str) else None
    if said is not None:
        trace.note(f"a model call {said} ({where} `{first}`): its answer may be cut")


def _count(n: int, what: str) -> str:
    """`n` things record, in words: "1 tool call records", "2 tool calls record"."""
    return f"1 {what} records" if n == 1 else f"{n} {what}s record"


def _unread_times(span: Span) -> Iterator[Any]:
    """The times a span writes that are not times (as written)."""
    if span.start is None and span.start_text is not None:
        yield span.start_text
    if span.end is None and span.end_text is not None:
        yield span.end_text


def _span_events(
    span: Span, kind: str, has: SpanKeys, trace: Trace, clock: bool, reads: Reads
) -> None:
    """The events of one span; `clock`: its times can be read (`read_spans`); `reads`:
    what the case reads (events get no times when it reads none)."""
    a = span.attrs
    # (a time's text is made only where an event is placed at it: a skipped span's times
    # are read only when it failed, a tool span's start only for a call no span asked for)
    stamp = clock and reads.times
    end = iso_time(span.end) if stamp and (kind in _READ_KINDS or span.failed) else None
    if kind == "tool":
        _tool_span(span, has, trace, span.start if stamp else None, end, reads)
    elif kind == "llm":
        start = iso_time(span.start) if stamp else None
        # The tool messages of the span's history give results to calls still waiting for
        # theirs; with none waiting (every call's tool span came before, as most traces
        # have them) they give nothing, and the history is not read: a conversation's
        # history grows with every step, and reading each span's was ~15% of a file.
        if trace.awaits_results():
            details = _details(span)
            histories = (a,) if details is None else (a, details)
            for history in histories:  # (loops, not a generator made for each span)
                for call_id, name, output in _input_results(history):
                    if output == REDACTED:  # (a result hidden is no result: the call waits)
                        _redacted(trace)
                        continue
                    found = trace.known_call(call_id, name)
                    if found is not None:
                        trace.result(found, output, at=start)
            if span.events:  # (the older GenAI convention's `gen_ai.tool.message` events)
                for call_id, name, output in _event_results(span):
                    found = trace.known_call(call_id, name)
                    if found is not None:
                        trace.result(found, output, at=start)
        out = _output(span, has)
        model = a[k[0]] if len(k := has.models) == 1 else _present(a, k)
        latency = (span.end - span.start) / 1e6 if clock and span.start and span.end else None
        usage = _usage(a, has)
        cache = _cache(a, usage, has.providers) if has.providers else None
        if has.oi_cache and cache is None:  # (most spans: neither, one test)
            usage, cache = _openinference_cache(a, usage, model)
        text = out.text if out is not None else None
        if out is not None and text is None:
            _redacted(trace)
        elif out is not None and text == "" and (has.finish or out.finish is not None):
            text = _unfiltered(a[FINISH_REASONS] if has.finish else out.finish, trace)
        trace.llm(
            text,
            usage,
            model=model if isinstance(model, str) else None,
            start=start,
            end=end,
            failed=span.failed,
            latency_ms=latency,
            cache=cache,
            # (most spans say no tier: two tests of empty tuples, no read)
            tier=_tier(a, has) if has.tiers or has.asked_tiers else None,
        )
        if out is not None:
            for name, args, call_id in out.calls:  # (each id read as text or null: `link_id`)
                # (arguments no assertion reads stay as written: parsing JSON text never
                # fails, so leaving it out changes nothing the case reads)
                parsed = parse_json_text(args) if reads.reads_arguments(name) else args
                trace.call(name, parsed, call_id, end)
            if out.results or out.others or out.unread:  # (most outputs: none of them)
                _output_rest(out, trace, end)
        if has.finish:  # (most spans write none: no call to note nothing)
            _finish_note(a[FINISH_REASONS], trace)
        elif out is not None and out.finish is not None:
            _finish_note(out.finish, trace, "its output message's `finish_reason`")
    else:
        trace.skip(kind)
    if span.failed:
        message = span.status_message or _exception_message(span) or f'span "{span.name}" failed'
        trace.error(message, end)


def _output_rest(out: _Output, trace: Trace, end: str | None) -> None:
    """The results of the calls an LLM span's provider ran (after the output's calls), and
    what the output left unread."""
    for call_id, output in out.results:
        found = trace.known_call(call_id) if call_id else None
        if found is None:  # (a response to no call read: it answers nothing)
            trace.skip("tool call responses in output messages of no call read")
        else:
            trace.result(found, output, at=end)
    if out.others:
        trace.skip(CHOICES, out.others)
    for reason, n in out.unread.items():
        trace.skip(reason, n)


#: The kinds of span whose events are read, and how `Trace.saw` counts them.
_READ_KINDS = frozenset({"tool", "llm"})
_SEEN_AS = {"tool": "tool span", "llm": "LLM span"}


def _tool_span(
    span: Span, has: SpanKeys, trace: Trace, start_ns: int | None, end: str | None, reads: Reads
) -> None:
    """The events of a tool span (`start_ns`: its start, `None` when its events get no
    time); the arguments and result of a tool whose `reads` does not name stay as written."""
    a = span.attrs
    found = a[k[0]] if len(k := has.tool_names) == 1 else _present(a, k)
    if type(found) is str and found:
        name = found
    elif found is not None:  # (a name that is not text: the run's error, not the span's name)
        name = tool_name(found, _read_key(a, _TOOL_NAMES), f'tool span "{span.name}"')
    else:
        name = _named_by_span(span, trace)
    call_id = a[k[0]] if len(k := has.call_ids) == 1 else _present(a, k)
    if call_id is not None and type(call_id) is not str:  # never a result linked to no call
        link_id(call_id, _read_key(a, _CALL_IDS), f'tool span "{span.name}"')
    result = a[k[0]] if len(k := has.tool_results) == 1 else _present(a, k)
    # (GenAI's `error.type` is set "if the operation ended in an error", whatever the
    # span's status says: a tool span with one and no ERROR status was a success)
    is_error = (
        span.failed
        or (has.is_error and a["gen_ai.tool.result.is_error"] is True)
        or (has.error_type and a[ERROR_TYPE] is not None)
    )
    if result == REDACTED:
        result = None
        _redacted(trace)
    cid = trace.known_call(call_id, name)
    if cid is None:
        args = _present(a, has.tool_arguments)
        if args == REDACTED:
            args = None
            _redacted(trace)
        # arguments recorded nowhere (no attribute, no model's call) are unknown, not {}
        read = reads.reads_arguments(name)
        arguments = MISSING if args is None else parse_json_text(args) if read else args
        if read and type(arguments) is dict and arguments.keys() == _ENTITY_INPUT:
            arguments = _entity_arguments(a, arguments, name, trace)
        cid = trace.call(name, arguments, call_id, iso_time(start_ns))
    if result is not None or is_error:
        trace.result(cid, result if result is not None else "", is_error=is_error, at=end)
    else:  # unknown, unless a later model call's history carries it
        trace.unread_result(cid)


#: Where a tool span names its tool, the call it runs, its result and its arguments
#: (first found); where an LLM span names its model.
#: (The Vercel AI SDK's `ai.toolCall` spans, last: its own names, `ai.toolCall.*`.)
_TOOL_NAMES = ("gen_ai.tool.name", "tool.name", "traceloop.entity.name", AI_SDK_TOOL_NAME)
_CALL_IDS = ("gen_ai.tool.call.id", "tool_call.id", "ai.toolCall.id")
_TOOL_RESULTS = (
    "gen_ai.tool.call.result",
    "gen_ai.tool.result.value",
    "output.value",
    "traceloop.entity.output",
    "ai.toolCall.result",
)
#: The keys of OpenLLMetry's `traceloop.entity.input`: a decorated function's call.
_ENTITY_INPUT = {"args", "kwargs"}


def _entity_arguments(a: Any, given: dict[str, Any], name: str, trace: Trace) -> Any:
    """A tool span's arguments that are OpenLLMetry's record of its function's call
    (`traceloop.entity.input`: `{"args": [...], "kwargs": {...}}`, as its `@tool`
    decorator writes it): a call by keyword has its `kwargs` as arguments, as the model's
    call named them; one with positional values keeps the record, noted (their names are
    not in it). The same keys under another attribute are the arguments as they are."""
    if _read_key(a, _TOOL_ARGUMENTS) != "traceloop.entity.input":
        return given
    if given["args"] == [] and isinstance(given["kwargs"], dict):
        return given["kwargs"]
    trace.note(
        f"tool `{name}` was called with positional arguments (traceloop.entity.input): its "
        "arguments are read as OpenLLMetry recorded them, `{args, kwargs}`"
    )
    return given


_TOOL_ARGUMENTS = (
    "gen_ai.tool.call.arguments",
    "input.value",
    "traceloop.entity.input",
    "ai.toolCall.args",
)
_MODELS = ("gen_ai.request.model", "gen_ai.response.model", "llm.model_name")


def _named_by_span(span: Span, trace: Trace) -> str:
    """The tool of a tool span that has none of `_TOOL_NAMES`: GenAI names the span
    `execute_tool {gen_ai.tool.name}`, so the words after `execute_tool`; another name
    (OpenInference's and most frameworks' tool spans are named after the tool) whole.
    A name that names no tool (`execute_tool` alone, blank) is a `BadValue`; the reading
    notes that a tool was named by its span."""
    words = span.name.split(maxsplit=1)
    name = (words[1] if len(words) > 1 else "") if words[:1] == ["execute_tool"] else span.name
    if not name.strip():
        keys = ", ".join(f"`{k}`" for k in _TOOL_NAMES)
        raise BadValue(
            f'tool span "{span.name}" has none of {keys} and its name names no tool: '
            "the tool it calls cannot be named"
        )
    trace.note(
        "a tool span without `gen_ai.tool.name`, `tool.name` or `traceloop.entity.name` "
        "names its tool by the span's name (GenAI's `execute_tool NAME`: NAME)"
    )
    return name.strip()


def _exception_message(span: Span) -> str | None:
    for event in span.events:
        if event.get("name") == "exception":
            e = event["attrs"] if isinstance(event.get("attrs"), dict) else {}
            message = e.get("exception.message")
            if isinstance(message, str):
                return message
    return None


def otel_events(doc: Any, *, path: str = "<value>") -> tuple[list[dict[str, Any]], float | None]:
    """The events an OTLP JSON document (or a list of them) stands for, and its latency:
    the events alone, without what the trace left out (a `Run` from `otel_run` or
    `load_run` carries that: `Run.unrecorded`)."""
    docs = doc if isinstance(doc, list) else [doc]
    if not docs or not all(is_otlp(d) for d in docs):
        raise RunError(
            'not an OTLP JSON trace: no "resourceSpans"',
            path=path,
            hint="export spans with the OTLP JSON exporter (resourceSpans[].scopeSpans[].spans[])",
        )
    trace, latency = read_otel(Items(path, docs, "array"), "named otel")
    return trace.events, latency


def otel_run(items: Items, why: str) -> Run:
    """The `Run` of OTel items."""
    trace, latency = read_otel(items, why)
    return trace.run(items, latency_ms=latency)
