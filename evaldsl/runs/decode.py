"""Decoding only what a case reads: typed decoding of a streamed recording's events.

Takes an `EventStream` (a traceplay cassette or a headerless JSONL of events) and the
field names a case's pass reads, and gives its events as small dicts holding only those
fields. msgspec decodes each line into a `TypedDict` of those fields, skipping the others
without building them (a request's messages, a response's choices): ~0.3x the time of
decoding everything with orjson. Large fields a pass reads only for some events (a
call's arguments, a response's output, a tool's result) are given as undecoded
`msgspec.Raw` bytes, which the pass decodes for the calls and answers it reads.

Lines are decoded a chunk (~256 KiB of whole lines) at a time by `Decoder.decode_lines`,
so no Python code runs per line and memory stays bounded whatever the file's length.
Anything the typed decoder cannot take (a line that is not a JSON object, text that is
not UTF-8, a field of an unexpected shape, a value nested deeper than msgspec's recursion
goes: it raises `RecursionError`, from ~1,000 levels) raises `Undecodable`: the caller then reads
the file with the careful full decoder, which names the line and column of the problem
(fail closed: nothing is skipped silently). One deliberate difference: a number too large
for a double in a field no assertion reads is not an error here (it is not read). An
integer past 64 bits is kept whole here (msgspec), as the full decoder keeps it
(`bigints`: orjson alone gives the nearest double): a model named
`1180591620717411303424` is named so in a message, not `1.1805916207174113e+21`.

`kind_events` goes further: each event kind is decoded into a struct of the fields the
pass reads of that kind only (`Reads`, from the generated pass): a call's ids are not
built for a response, nor a response's usage for a call. A kind without a struct of its
own (anything but `KINDS`: an `mcp.call`, a kind no recorder here writes) is
`Undecodable` there, and the caller decodes the file by `typed_events` instead. A
response's `usage` is a struct too (`usage_struct`: the counts' spellings `usage_pair`
reads, anything else in it skipped, not built), or `None`; a usage that is neither an
object nor null is `Undecodable` there. `usage_as_dict` gives the dict the reference reads.
"""

from __future__ import annotations

import contextlib
import itertools
from collections.abc import Iterator
from functools import lru_cache
from typing import Any, TypedDict, Union

import orjson

from evaldsl.language.limits import MAX_LINE_BYTES
from evaldsl.language.values import MISSING
from evaldsl.runs.cassette import EventStream
from evaldsl.runs.events import (
    AGENT_ERROR,
    ERROR,
    LLM_REQUEST,
    LLM_RESPONSE,
    POLICY_EVALUATE,
    TOOL_CALL,
    TOOL_RESULT,
    USER_MESSAGE,
)
from evaldsl.runs.text import GEMINI_MORE, USAGE_FIELDS

CHUNK = 1 << 18  # 256 KiB: the decoded list of one chunk is what memory holds

#: Fields given as undecoded bytes (`msgspec.Raw`).
RAW_FIELDS = frozenset({"arguments", "args", "input", "output", "result", "rawBody"})


#: The event kinds `kind_events` decodes, each into a struct of its own: the kinds whose
#: fields a generated pass reads by name (an `mcp.call`'s are read by helpers, as dicts).
KINDS = (
    TOOL_CALL,
    TOOL_RESULT,
    LLM_REQUEST,
    LLM_RESPONSE,
    USER_MESSAGE,
    AGENT_ERROR,
    ERROR,
    POLICY_EVALUATE,
)

#: What a pass reads of each kind: (kind, ((field, absent is `MISSING`, else `None`), ...)).
Reads = tuple[tuple[str, tuple[tuple[str, bool], ...]], ...]


class Undecodable(Exception):
    """The typed decoder cannot take this file: read it with the full decoder."""


@lru_cache(maxsize=64)
def _decoder(fields: frozenset[str]) -> Any:
    # msgspec is imported on first use: `evaldsl check` never decodes a whole recording,
    # and the import costs ~20 ms at start-up
    import msgspec

    annotations = {f: (msgspec.Raw if f in RAW_FIELDS else Any) for f in sorted(fields)}
    shape = TypedDict("Event", annotations, total=False)  # type: ignore[misc]
    return msgspec.json.Decoder(shape)


#: The fields of `usage_struct`: every spelling of the two counts, and Gemini's others.
USAGE_NAMES = tuple(name for pair in (*USAGE_FIELDS, *GEMINI_MORE.values()) for name in pair)


@lru_cache(maxsize=1)
def usage_struct() -> type:
    """The struct a response's `usage` is decoded into by `kind_events`: each of
    `USAGE_NAMES` (`MISSING` when absent), and nothing else of it built. Decoding it is
    ~800 fewer instructions a response than building the dict with its keys."""
    import msgspec  # see `_decoder`

    fields = [(name, Any, MISSING) for name in USAGE_NAMES]
    return msgspec.defstruct("Usage", fields, gc=False)


def usage_as_dict(usage: Any) -> Any:
    """A `usage_struct` as the dict of its counts the reference reads (`usage_pair`
    asks which names are there and reads them; a name given twice in the line is its
    last value in both); anything else as it is."""
    if type(usage) is not usage_struct():
        return usage
    return {name: v for name in USAGE_NAMES if (v := getattr(usage, name)) is not MISSING}


def _field_type(kind: str, field: str) -> Any:
    """The type `kind_events` decodes an event's `field` as."""
    import msgspec  # see `_decoder`

    if field in RAW_FIELDS:
        return msgspec.Raw
    if kind == LLM_RESPONSE and field == "usage":
        return usage_struct() | None
    return Any


#: The fields a struct may hold, in the order traceplay writes them (each kind's in the
#: order of its line): msgspec looks for a key first at the field after the one found
#: last, so a struct in the line's order finds each of its keys at the first try.
_WRITTEN = ("id", "name", "arguments", "callId", "requestId", "output", "usage", "model")


def _written_first(read: tuple[str, bool]) -> tuple[int, str]:
    """A struct field's place: as traceplay writes it, then any other by name."""
    field = read[0]
    return (_WRITTEN.index(field) if field in _WRITTEN else len(_WRITTEN), field)


@lru_cache(maxsize=64)
def _kind_decoder(reads: Reads) -> tuple[Any, dict[str, type]]:
    """The decoder of `reads`' structs, and the struct of each kind in `KINDS`."""
    import msgspec  # see `_decoder`

    wanted = dict(reads)
    structs = []
    for kind in KINDS:
        fields = [
            (f, _field_type(kind, f), MISSING if missing else None)
            for f, missing in sorted(wanted.get(kind, ()), key=_written_first)
        ]
        # the kind is the struct's tag, and a class attribute `type` the pass reads; a
        # decoded event holds no reference cycle, so the garbage collector skips it
        structs.append(
            msgspec.defstruct(
                "Event", fields, tag_field="type", tag=kind, namespace={"type": kind}, gc=False
            )
        )
    # (a union of classes made here: `Union[...]` takes them as a tuple, `|` one by one)
    return msgspec.json.Decoder(Union[tuple(structs)]), dict(zip(KINDS, structs, strict=True))  # noqa: UP007


def raw_type() -> type:
    """The type of the undecoded fields (`msgspec.Raw`)."""
    import msgspec  # see `_decoder`

    return msgspec.Raw


def line_chunks(f: Any, refused: tuple[bytes, ...] = ()) -> Iterator[bytes]:
    """Whole lines, about `CHUNK` bytes at a time; a chunk that is not UTF-8 (which the
    typed decoder would not notice in a field it skips), or not ASCII and holding one of
    `refused`, is `Undecodable`. (`f`: a file that can seek, as `model.open_file` gives.)"""
    while True:
        # Where the chunk ends is found first (its `CHUNK`-th byte and the rest of that
        # byte's line), then the chunk is read whole. Reading `CHUNK` bytes and adding the
        # rest of the line copied the chunk (a 256 KiB copy, ~270,000 instructions counted:
        # ~2% of reading a span file).
        start = f.tell()
        end = start + CHUNK - 1 + _line_length(f, start + CHUNK - 1)
        f.seek(start)
        block = f.read(end - start)
        if not block:
            return
        if not block.isascii():
            try:
                block.decode("utf-8")
            except UnicodeDecodeError:
                raise Undecodable("not UTF-8") from None
            if any(b in block for b in refused):
                raise Undecodable("a refused character")
        yield block


#: The bytes `_line_length` reads at a time.
_AHEAD = 1 << 16


def _line_length(f: Any, at: int) -> int:
    """The length of the line from offset `at` of `f` (its newline too; to the end of the
    file when it has none); `Undecodable` past `MAX_LINE_BYTES + 1`. (Looked for with
    `find` in blocks read: the buffered reader's `readline` looks at each byte, ~55,000
    instructions for the ~9 KB a chunk's last line has left here.)"""
    f.seek(at)
    length = 0
    while length <= MAX_LINE_BYTES + 1:
        ahead = f.read(_AHEAD)
        cut = ahead.find(b"\n")
        if cut >= 0:
            length += cut + 1
            break
        length += len(ahead)
        if len(ahead) < _AHEAD:  # (the end of the file)
            break
    if length > MAX_LINE_BYTES + 1:  # the full decoder names the line too long
        raise Undecodable("a line longer than the limit")
    return length


@contextlib.contextmanager
def typed_events(stream: EventStream, fields: frozenset[str]) -> Iterator[Iterator[Any]]:
    """The stream's events holding only `fields` (a C-level iterator). Iterating raises
    `Undecodable` where the typed decoder cannot go on."""
    with typed_batches(stream, fields) as batches:
        yield itertools.chain.from_iterable(batches)


@contextlib.contextmanager
def typed_batches(stream: EventStream, fields: frozenset[str]) -> Iterator[Iterator[list[Any]]]:
    """`typed_events`, a list of them at a time (a chunk's: a generated pass counts
    them by their lists' lengths, not one by one)."""
    import msgspec  # see `_decoder`

    decode_lines = _decoder(fields).decode_lines
    with stream.body() as f:
        try:
            yield map(decode_lines, line_chunks(f))
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError) as err:
            raise Undecodable(str(err)) from None


class KindEvents:
    """The events of `kind_events`: iterating them gives each decoded chunk's events,
    a list (a generated pass counts them by the lists' lengths, not one by one);
    `last_at()` gives the last event's `at` (decoded from its line); `classes` the
    struct of each kind, which a pass tells an event's kind by (`type(ev) is` one: an
    `ev.type`, a class attribute of a type that changes from one event to the next, is
    a full attribute lookup at every event)."""

    __slots__ = ("_chunks", "_decode_lines", "_last", "classes")

    def __init__(
        self, chunks: Iterator[bytes], decode_lines: Any, classes: dict[str, type]
    ) -> None:
        self._chunks = chunks
        self._decode_lines = decode_lines
        self.classes = classes
        self._last = b""  # the last chunk that held an event

    def _lists(self) -> Iterator[list[Any]]:
        decode_lines = self._decode_lines
        for chunk in self._chunks:
            events = decode_lines(chunk)
            if events:
                self._last = chunk
            yield events

    def __iter__(self) -> Iterator[list[Any]]:
        return self._lists()

    def last_at(self) -> Any:
        """The `at` of the last event read (`None` if it has none, or none was read): the
        one field of every event a run's times read, read here for one event, not all.
        Its line is one the typed decoder took as an object (blank lines it skips);
        decoded in full, as the reference would (a number too large for a double in
        it is `Undecodable`)."""
        for line in reversed(self._last.split(b"\n")):
            if line.strip():
                try:
                    return orjson.loads(line).get("at")
                except orjson.JSONDecodeError:
                    raise Undecodable("the last event") from None
        return None


@contextlib.contextmanager
def kind_events(stream: EventStream, reads: Reads) -> Iterator[KindEvents]:
    """The stream's events as structs, each of its kind's fields in `reads` only (absent
    ones `None` or `MISSING`, as `reads` says), the kind in `type`; see `KindEvents`.
    Iterating raises `Undecodable` at an event of a kind not in `KINDS` too."""
    import msgspec  # see `_decoder`

    with stream.body() as f:
        try:
            decoder, classes = _kind_decoder(reads)
            yield KindEvents(line_chunks(f), decoder.decode_lines, classes)
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError) as err:
            raise Undecodable(str(err)) from None
