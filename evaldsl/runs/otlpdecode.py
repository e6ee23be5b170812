"""Decoding only what the OTel reader reads: typed decoding of large OTel span files.

Takes the path of a JSONL file of OTLP JSON documents (`resourceSpans[].scopeSpans[]
.spans[]`, one export per line) and/or flat spans (Phoenix, the SDK's console exporter)
(`read_otel_lines`), or the bytes of one OTLP JSON document or an array of them
(`read_otel_document`), and gives its `Run` as `otel.py` reads it, or `None` when this
decoder cannot take the file (the caller then reads it in full, as it reads a small one).

msgspec decodes each line into structs of the containers `otel.py` walks (resources,
scopes, spans, their events) with each attribute as its key and its value undecoded
(`msgspec.Raw`), and a span's name, id, times and status, which are always read, as
values (integers past 64 bits exact, as `bigints` reads them); everything else on
the line (resource attributes, ids, links) is
skipped without being built. The attributes go to `otel.py` as `RawAttrs`, which decode a
value when the reader reads it, with the decoder of a file read whole (`bigints.loads`, then
`otel.any_value`): a span's input messages, prompt, tool definitions and parameters are
skipped unless the reader looks into them (see `otel._may_hold`). Lines are decoded a
chunk (~256 KiB of whole lines) at a time; a document, whole (as the full reader does).

Failing closed, as `decode.py` does: a line that is not a JSON object, text that is not
UTF-8 (or holds U+0085, U+2028 or U+2029, where the full reader splits lines), a
container of an unexpected type (a `spans` that is not a list of objects, an attribute
that is not a `{key, value}` object), a line that is neither an OTLP document nor a
span, a value the reader reads that orjson refuses, a usage nobody can count, a file
whose first items match another format too: any of them gives `None`, and the full
reader reads the file and reports the problem with its line and column, as before. The
one difference is `decode.py`'s: a number too large for a double in a value the reader
never reads is not an error (it is not read).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, cast

import msgspec

from evaldsl.bounded import keep
from evaldsl.gcpause import paused_gc
from evaldsl.language.limits import MAX_DOCUMENT_BYTES
from evaldsl.runs import bigints
from evaldsl.runs.decode import Undecodable, line_chunks
from evaldsl.runs.model import BOM, Run, open_file
from evaldsl.runs.otel import (
    STATUS_ERROR,
    STATUS_ERROR_CODE,
    Span,
    any_value,
    flat_kind,
    nanos,
    read_spans,
    span_key,
)
from evaldsl.runs.providers import Trace
from evaldsl.runs.rawattrs import RawAttrs

_ABSENT = msgspec.Raw(b"")  # a field the line does not have (JSON has no empty value)


class _KeyValue(msgspec.Struct, gc=False):
    key: str | None = None
    value: msgspec.Raw = _ABSENT


class _Event(msgspec.Struct, gc=False):
    name: msgspec.Raw = _ABSENT
    attributes: list[_KeyValue] | None = None


class _OtlpSpan(msgspec.Struct, gc=False):
    # Every span's name, id, times and status are read: decoded with the line, as values
    # (`Any`: what the full reader gives, integers past 64 bits exact too), not as
    # `Raw` for a call to orjson each (four a span: ~6% of reading an OTLP file)
    name: Any = msgspec.UNSET
    spanId: Any = msgspec.UNSET  # (OTLP spells its fields in camelCase)
    traceId: Any = msgspec.UNSET
    parentSpanId: Any = msgspec.UNSET
    startTimeUnixNano: Any = msgspec.UNSET
    endTimeUnixNano: Any = msgspec.UNSET
    status: Any = msgspec.UNSET
    attributes: list[_KeyValue] | None = None
    events: list[_Event] | None = None


class _Scope(msgspec.Struct, gc=False):
    spans: list[_OtlpSpan] | None = None


class _Resource(msgspec.Struct, gc=False):
    scopeSpans: list[_Scope] | msgspec.UnsetType | None = msgspec.UNSET
    instrumentationLibrarySpans: list[_Scope] | None = None


class _FlatEvent(msgspec.Struct, gc=False):
    name: msgspec.Raw = _ABSENT
    attributes: dict[str, msgspec.Raw] | None = None


class _Line(msgspec.Struct, gc=False):
    """One line: an OTLP document (`resourceSpans`) or a flat span (the rest)."""

    resourceSpans: list[_Resource] | None = None
    # A flat span's name, context, kind, times and status are read for every span:
    # decoded with the line, as values (see `_OtlpSpan`), not as `Raw` for a call to
    # orjson each (ten a span, a fifth of reading a file of Phoenix spans)
    name: Any = msgspec.UNSET
    context: Any = msgspec.UNSET
    span_kind: Any = msgspec.UNSET
    start_time: Any = msgspec.UNSET
    end_time: Any = msgspec.UNSET
    status: Any = msgspec.UNSET
    status_code: Any = msgspec.UNSET
    status_message: Any = msgspec.UNSET
    parent_id: Any = msgspec.UNSET
    attributes: dict[str, msgspec.Raw] | None = None
    events: list[_FlatEvent] | None = None


class _Document(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """A whole OTLP JSON document of `resourceSpans` alone (see `read_otel_document`)."""

    resourceSpans: list[_Resource]  # (OTLP spells its fields in camelCase)


class _Status(msgspec.Struct, gc=False):
    code: Any = None
    message: Any = None


class _PlainKeyValue(msgspec.Struct, gc=False):
    key: str  # (an attribute without a key, or a null one, is read past: `_KeyValue`'s)
    value: msgspec.Raw = _ABSENT


class _PlainSpan(msgspec.Struct, gc=False):
    """A span as OTLP exporters write it: its name and ids as text, its times as text or
    null, its status an object (see `_PlainLine`)."""

    name: str = ""
    spanId: str = ""  # (absent or "": no id, as the full reader reads either)
    traceId: str = ""
    parentSpanId: str = ""
    startTimeUnixNano: str | None = None
    endTimeUnixNano: str | None = None
    status: _Status | None = None
    attributes: list[_PlainKeyValue] | None = None
    events: list[_Event] | None = None


class _PlainScope(msgspec.Struct, gc=False):
    spans: list[_PlainSpan] | None = None


class _PlainResource(msgspec.Struct, gc=False):
    scopeSpans: list[_PlainScope]


class _PlainLine(msgspec.Struct, gc=False):
    """A line of an OTLP document whose spans have the types exporters write (text where
    `_OtlpSpan` takes anything): their fields need no test of their types. A block of
    lines of which one does not fit (a flat span, a number for a time, `null` for a name)
    is decoded again as `_Line`s, whose spans take anything the full reader does."""

    resourceSpans: list[_PlainResource]


_DECODE_PLAIN = msgspec.json.Decoder(_PlainLine).decode_lines
_DECODE_LINES = msgspec.json.Decoder(_Line).decode_lines
_DECODE_DOCUMENT = msgspec.json.Decoder(_Document | list[_Document]).decode
_MISSING = object()
#: A value's decoder: as the full reader's (see `_load`).
_DECODE = msgspec.json.decode


def _load(raw: msgspec.Raw) -> Any:
    """A field's value as the full reader decodes it (msgspec reads JSON as orjson does,
    and integers past 64 bits exactly, as `bigints.loads` does)."""
    return _DECODE(raw)


def _get(raw: msgspec.Raw, default: Any = None) -> Any:
    """`dict.get` of a field: its value, or `default` when the line does not have it."""
    return default if raw is _ABSENT or not len(raw) else _load(raw)


def _field(value: Any, absent: Any = None) -> Any:
    """A span's field decoded with its line, as the full reader gives it (`absent` when
    the line does not have it)."""
    return absent if value is msgspec.UNSET else value


def _any_value(data: bytes | memoryview | msgspec.Raw) -> Any:
    value = _DECODE(data) if len(data) else None
    if type(value) is dict and "stringValue" in value:  # most are: `any_value`'s first case
        return value["stringValue"]
    return any_value(value)


#: Small attribute values decoded before are kept by their JSON: spans repeat their
#: kinds, operations, models, roles and tool names, and a lookup is a third of a
#: decoding. Only values nobody can change are kept (text, numbers, `true`, `false`,
#: `null`): a list or an object is decoded anew each time.
_SMALL_MAX = 4096
_SHAREABLE = frozenset({str, int, float, bool, type(None)})


def _kept(decode: Callable[[Any], Any], small: dict[bytes, Any]) -> Callable[[bytes], Any]:
    """`decode` of a small value's JSON (`SMALL_BYTES` at most) that `small`, the table of
    its decoder's values, does not hold: kept there when nobody can change it (one table a
    decoder: the same JSON is an AnyValue in OTLP, a plain value in a flat span)."""

    def kept(data: bytes) -> Any:
        value = decode(data)
        if type(value) in _SHAREABLE:
            keep(small, data, value, _SMALL_MAX)
        return value

    return kept


#: An OTLP attribute's `AnyValue` as `otel.attributes` gives it; a flat span's (Phoenix)
#: attribute value, plain JSON (`"LLM"`, `259`); and the small values each keeps. A
#: span's (or its event's) attributes decode a large value from its `Raw` (a buffer: no
#: memoryview, no call of a wrapper), and a small one its table does not hold by `_kept`
#: straight from the JSON it looked up (no second lookup).
_OTLP_SMALL: dict[bytes, Any] = {}
_FLAT_SMALL: dict[bytes, Any] = {}
_OtlpAttrs = RawAttrs.reading(_any_value, _OTLP_SMALL, _kept(_any_value, _OTLP_SMALL))
_FlatAttrs = RawAttrs.reading(_DECODE, _FLAT_SMALL, _kept(_DECODE, _FLAT_SMALL))


def _otlp_attrs(items: list[_KeyValue] | None) -> RawAttrs:
    attrs = _OtlpAttrs()
    for kv in items or ():  # (filled in place: a dict made, then copied, took ~30% more)
        key = kv.key
        if key is not None:
            attrs[key] = kv.value
    return attrs


def read_otel_lines(
    path: str,
    why: Callable[[list[Any]], str | None],
    head_items: int,
    decoded: Sequence[tuple[bytes, Any]] = (),
) -> Run | None:
    """The run of the OTel JSONL file at `path`, or `None` when the typed decoder cannot
    read it (see the module doc). `why` gives the reason detection chose `otel` from the
    file's first `head_items` items (decoded as the full reader decodes them), or `None`
    if it would not have. `decoded`: the first lines' texts as detection decoded them, with
    their values (see `_head_values`)."""
    try:
        # many small objects, no cycles (see gcpause); the run's events outlive the block:
        # handed to the oldest generation, not traversed by the next young collection
        with paused_gc(long_lived=True):
            return _read(path, why, head_items, decoded)
    except Exception:  # anything at all: the full reader says what it is
        return None


def _read(
    path: str,
    why: Callable[[list[Any]], str | None],
    head_items: int,
    decoded: Sequence[tuple[bytes, Any]],
) -> Run:
    info = os.stat(path)
    if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_DOCUMENT_BYTES:
        raise Undecodable("not a regular file the full reader takes")
    spans: list[Span] = []
    documents = 0
    head: list[bytes] = []
    with open_file(path) as f:
        for block in _blocks(f):
            if len(head) < head_items:
                head += _first_lines(block, head_items - len(head))
            try:
                plain = _DECODE_PLAIN(block)
            except msgspec.ValidationError:  # (a line of other types: all read as `_Line`s)
                plain = None
            if plain is not None:
                documents += len(plain)
                _plain_spans(plain, spans)
                continue
            for line in _DECODE_LINES(block):
                if line.resourceSpans is not None:
                    documents += 1
                    spans += _otlp_spans(line.resourceSpans)
                else:
                    spans.append(_flat_span(line))
    return _run(path, why(_head_values(head, decoded)), spans, documents)


def _first_lines(block: bytes, n: int) -> list[bytes]:
    """The first `n` lines of `block` that hold more than white space (those of
    `block.split(b"\\n")`), each found by `find`: splitting the whole block looked at
    each of its bytes (~5 M instructions for a file's first 50 lines of ~18 KB)."""
    lines: list[bytes] = []
    start = 0
    while len(lines) < n:
        end = block.find(b"\n", start)
        line = block[start:] if end < 0 else block[start:end]
        if line.strip():
            lines.append(line)
        if end < 0:
            break
        start = end + 1
    return lines


def _head_values(lines: list[bytes], decoded: Sequence[tuple[bytes, Any]]) -> list[Any]:
    """The values of the file's first `lines` as the full reader decodes them (`bigints
    .loads`), each taken from `decoded` (detection's texts and values, in order) when that
    text is the line's, with or without its newline, and holds no `\\ud` or `\\uD`:
    detection decodes by `surrogates.mended_loads`, which is `bigints.loads` for any text
    orjson takes, and mends only lone surrogate escapes in one it refuses, where the full
    reader refuses the line. (Decoding the 50 lines again was ~73 M instructions of a 2,000
    export file's ~1,950 M.)"""
    values = []
    for i, line in enumerate(lines):
        if i < len(decoded):
            text, value = decoded[i]
            same = text == line or (text[-1:] == b"\n" and text[:-1] == line)
            if same and b"\\ud" not in text and b"\\uD" not in text:
                values.append(value)
                continue
        values.append(bigints.loads(line))
    return values


def read_otel_document(path: str, data: bytes, why: Callable[[str, int], str | None]) -> Run | None:
    """The run of an OTLP JSON document, or an array of them, from the file's bytes (`data`,
    as `model.read_bytes` gives them), or `None` when the typed decoder cannot read it:
    anything but `resourceSpans` in a document, or the reasons of the module doc. `why`
    gives, from the container ("document" or "array") and the number of documents, the
    reason detection chose `otel` (`None`: it would not have)."""
    try:
        with paused_gc(long_lived=True):  # (as `read_otel_lines`)
            return _read_document(path, data, why)
    except Exception:  # anything at all: the full reader says what it is
        return None


def _read_document(path: str, data: bytes, why: Callable[[str, int], str | None]) -> Run:
    if not data.isascii():
        data.decode("utf-8")  # (msgspec does not look into what it skips)
    decoded = _DECODE_DOCUMENT(data)
    documents = decoded if isinstance(decoded, list) else [decoded]
    reason = why("array" if isinstance(decoded, list) else "document", len(documents))
    spans = (span for d in documents for span in _otlp_spans(d.resourceSpans))
    return _run(path, reason, spans, len(documents))


def _run(path: str, reason: str | None, spans: Iterable[Span], documents: int) -> Run:
    """The run of the spans read, as `otel.py` makes it; `reason`: why detection chose
    `otel` (`None`: it would not have, and the full reader is left to say why; the spans
    are then not made)."""
    if reason is None:
        raise Undecodable("detection would not choose otel")
    trace = Trace("otel", path, reason)
    if documents:
        trace.saw("OTLP document", documents)
    latency = read_spans(spans if isinstance(spans, list) else list(spans), trace)
    return trace.run(None, latency_ms=latency)


def _blocks(f: Any) -> Iterator[bytes]:
    """`decode.line_chunks` without the file's BOM. (U+0085, U+2028 and U+2029 inside a
    JSON string are text to both readers: `model.text_lines` ends no line at them.)"""
    first = True
    for block in line_chunks(f):
        if first:
            block, first = block.removeprefix(BOM), False
        yield block


def _otlp_events(events: list[_Event] | None) -> list[dict[str, Any]]:
    """A span's OTLP events as `otel._events` reads them."""
    return [{"name": _get(e.name), "attrs": _otlp_attrs(e.attributes)} for e in events or ()]


def _times(
    starts: list[str | None], ends: list[str | None]
) -> tuple[Iterable[int | None], Iterable[int | None]]:
    """The nanoseconds of a block's span times as `nanos` reads them: when every time is
    as OTLP writes them, text of 1 to 20 ASCII digits, by `int` in C (`map`), the block's
    texts tested at once; else each by `nanos`. (Testing each span's two texts in its
    loop and calling `int` for each from bytecode was ~580 instructions a span more.)"""
    if all(starts) and all(ends):  # (neither null nor "")
        texts = cast("list[str]", starts + ends)
        digits = "".join(texts)
        if (
            max(map(len, texts), default=0) <= 20
            and digits.isascii()
            # (ASCII text: its bytes' `isdigit` is the text's, a table look-up a byte
            # where the text's looks each character up in Unicode's data; b"" is none)
            and digits.encode().isdigit()
        ):
            return map(int, cast("list[str]", starts)), map(int, cast("list[str]", ends))
    return map(nanos, starts), map(nanos, ends)


def _plain_spans(lines: list[_PlainLine], spans: list[Span]) -> None:
    """Add the spans of a block's `lines` to `spans`, as `_otlp_spans` makes them (their
    types did its tests: only their times' digits are looked at)."""
    block: list[_PlainSpan] = []
    for line in lines:
        for resource in line.resourceSpans:
            for scope in resource.scopeSpans:
                block += scope.spans or ()
    # (comprehensions: `map` of an `attrgetter` reads a struct's field by the generic
    # lookup, ~330 instructions a span where the loop's specialised read is ~140)
    starts = [s.startTimeUnixNano for s in block]
    ends = [s.endTimeUnixNano for s in block]
    append = spans.append
    for s, start, end, start_ns, end_ns in zip(
        block, starts, ends, *_times(starts, ends), strict=True
    ):
        # (the attributes put in here, not by `_otlp_attrs`: a call a span less)
        attrs = _OtlpAttrs()
        for kv in s.attributes or ():  # (each with its key: no test for one)
            attrs[kv.key] = kv.value
        status = s.status
        trace_id = s.traceId
        span_id = s.spanId
        parent = s.parentSpanId
        append(
            Span(
                s.name,
                span_id or s.name or "span",
                attrs,
                start_ns,
                end_ns,
                start,
                end,
                _otlp_events(s.events) if s.events else [],
                # (an integer code tested as one: OTLP writes its codes as numbers)
                status is not None
                and (
                    code == STATUS_ERROR_CODE
                    if type(code := status.code) is int
                    else code in STATUS_ERROR
                ),
                (status.message or None) if status is not None else None,
                None,
                (trace_id, span_id) if trace_id and span_id else None,
                (trace_id, parent) if trace_id and parent else None,
            )
        )


def _otlp_spans(resources: list[_Resource]) -> Iterator[Span]:
    """`otel._otlp_spans` of the structs (their types did its checks)."""
    for resource in resources:
        scopes = (
            resource.scopeSpans
            if resource.scopeSpans is not msgspec.UNSET
            else resource.instrumentationLibrarySpans
        )
        for scope in scopes or ():
            for s in scope.spans or ():
                # (only the status's code and message are read)
                status: dict[str, Any] = s.status if type(s.status) is dict else {}
                message = status.get("message")
                # (text, as OTLP writes these, taken as it is; anything else by `_field`)
                trace_id = s.traceId
                keyed = type(trace_id) is str and trace_id
                name = s.name if type(s.name) is str else _field(s.name, _MISSING)
                span_id = s.spanId if type(s.spanId) is str else _field(s.spanId, None)
                if not span_id or type(span_id) is not str:
                    span_id = str(span_id or (None if name is _MISSING else name) or "span")
                if type(name) is not str:
                    name = str("" if name is _MISSING else name)
                start = s.startTimeUnixNano
                start = start if type(start) is str else _field(start, None)
                end = s.endTimeUnixNano
                end = end if type(end) is str else _field(end, None)
                # (the spans of the files exporters write are read by `_plain_spans`: these
                # are the rare others, their times read by `nanos` itself)
                yield Span(
                    name,
                    span_id,
                    _otlp_attrs(s.attributes),
                    nanos(start),
                    nanos(end),
                    start,
                    end,
                    _otlp_events(s.events),
                    status.get("code") in STATUS_ERROR,
                    message or None,
                    None,
                    # (`span_key`'s test written out: two calls a span less)
                    (trace_id, s.spanId) if keyed and type(s.spanId) is str and s.spanId else None,
                    (trace_id, parent)
                    if keyed and type(parent := s.parentSpanId) is str and parent
                    else None,
                )


def _flat_span(s: _Line) -> Span:
    """`otel._flat_span` of the struct; a line that is not a span is `Undecodable`."""
    name = _field(s.name)
    context = _field(s.context)
    if not (
        isinstance(name, str)
        and isinstance(context, dict)
        and ("span_id" in context or "trace_id" in context)
    ):
        raise Undecodable("neither an OTLP document nor a span")
    raw_status = _field(s.status)
    status: dict[str, Any] = raw_status if isinstance(raw_status, dict) else {}
    code = _field(s.status_code, status.get("status_code"))
    kind = _field(s.span_kind)
    if kind is not None and type(kind) is not str:
        flat_kind(kind, name)  # (the run's error, as the full reader makes it)
    start = _field(s.start_time)
    end = _field(s.end_time)
    return Span(
        name=name,
        span_id=str(context.get("span_id") or name or "span"),
        attrs=_FlatAttrs(s.attributes or {}),
        start=nanos(start),
        end=nanos(end),
        start_text=start,
        end_text=end,
        events=[
            {"name": _get(e.name), "attrs": _FlatAttrs(e.attributes or {})} for e in s.events or ()
        ],
        failed=code in STATUS_ERROR,
        status_message=_field(s.status_message) or status.get("description") or None,
        kind=kind,
        key=span_key(context.get("trace_id"), context.get("span_id")),
        parent=span_key(context.get("trace_id"), _field(s.parent_id)),
    )
