"""Which adapter reads a run: format detection by signature, and runs made of values.

Takes a path (and optionally a format name, and for an Inspect AI log a sample id), or a
value already in memory, and gives a `Run` whose `read` says which format was chosen and
why. `load_run` detects the format of a file; `coerce_run` accepts a `Run`, a path, an event
list or a state dict; `run_from_value` turns what a `run` target returned into a run.

Detection reads the file's container first: a first line with a `"cassette"` marker is a
traceplay cassette (streamed); a first line `data:`/`event:` is an SSE stream; a first line
that is a whole JSON value followed by more lines is JSONL; anything else is one JSON
document (an array's elements are its items). Then every format's signature is tried on the
document and on its first items, and exactly one must match:

- `events`/`verydia`: items whose `type` is a traceplay or verydia event type (or an object
  with an `events`/`trace` list); a JSONL of them is streamed, never held in memory;
- `state`: `memory` or `visited_nodes`, or a cycgraph status beside another WorkflowState
  field (a `status` alone is not enough: Responses API bodies and Inspect logs have one);
- `openai`, `anthropic`, `otel`, `openai_agents`, `langsmith`: the shapes their modules
  list (a LangSmith run's own `events` list is not a traceplay event list);
- `inspect`: an object with an `eval` spec beside `samples`/`status`.

None matching, or two, is a `RunError` naming the file's first keys and the candidates, with
the hint to name the format (`trace "…" as FORMAT`). A format named explicitly skips
detection. The format names are declared once, in `evaldsl.vocabulary.RUN_FORMATS`.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import attrs
import orjson

from evaldsl.gcpause import paused_gc
from evaldsl.language.diagnostics import did_you_mean
from evaldsl.language.limits import MAX_LINE_BYTES
from evaldsl.language.reading import ZIP_MAGIC
from evaldsl.language.vocabulary import RUN_FORMATS
from evaldsl.lazyattrs import lazy_attributes
from evaldsl.runs.bigints import may_round
from evaldsl.runs.cassette import (
    LINE_HINT,
    EventStream,
    first_line,
    invalid_line,
    load_cassette,
    not_event_line,
    scan_cassette_tools,
)
from evaldsl.runs.events import (
    KNOWN_TYPES,
    LINE_EXTENSIONS,
    VERYDIA_TYPES,
    check_events,
    events_from_document,
    is_kind,
    load_event_lines,
    load_events,
    nothing_recognised,
    tool_call_name,
    trace_format,
    type_slot,
)
from evaldsl.runs.heldfiles import HOLD_BYTES, HeldFile
from evaldsl.runs.model import (
    BOM,
    MISSING,
    Format,
    Reading,
    Run,
    RunError,
    decode_text,
    describe,
    file_lines,
    gzip_error,
    is_among,
    json_error,
    lone_carriage_return,
    open_file,
    os_error,
    read_bytes,
    strip_bom,
    text_lines,
    utf8_text,
)
from evaldsl.runs.samplelogs import FileKey, file_key, keep, kept_at
from evaldsl.runs.surrogates import mended_loads
from evaldsl.runs.text import BadUsage

if TYPE_CHECKING:
    from evaldsl.runs.providers import Items

# Each format's adapter (`openai`, `otel`, `state`, ...) is imported where a file turns out
# not to be a cassette: `evaldsl check` and most runs read cassettes only, and loading
# every adapter at start cost them more than the rest of this module.

#: Format names `load_run` accepts (aliases included), and the adapter format each means.
FORMATS: dict[str, str] = {
    alias: ("cycgraph" if name == "state" else name)
    for name, (aliases, _) in RUN_FORMATS.items()
    for alias in (name, *aliases)
}

HEAD_ITEMS = 50  # items whose signatures detection reads
#: From this size on an OTel JSONL file is read by the typed decoder (`otlpdecode.py`;
#: below it, importing msgspec costs more than the decoding it saves), unless
#: `EVALDSL_REFERENCE` asks for the reference reading.
OTEL_TYPED_FROM = 1 << 20
HEAD_EVENTS = 1000  # events of a streamed file `check` reads for one it recognises

_KINDS_HINT = 'name the format with `trace "…" as FORMAT` (' + ", ".join(RUN_FORMATS) + ")"
#: For a file read whole that is not JSON (naming its format reads it the same way).
_DOCUMENT_HINT = (
    "a trace that is not JSONL or SSE is one JSON document: fix the JSON at that place "
    "(several documents in one file are JSONL: one on each line)"
)
#: The fields of a verydia dataset's rows (`suites.datasets` reads them).
DATASET_ROW_KEYS = frozenset({"input", "expectedOutput", "expectedBehavior", "metadata"})
_ROWS_TOLD = 20  # the rows looked at to tell a dataset


def is_dataset(values: list[Any]) -> bool:
    """Whether JSON values are a verydia dataset's rows, which a suite runs against a
    target and are never a trace: objects of a row's fields only, not all of them only
    `input` (the first rows told).

    >>> is_dataset([{"input": 1, "expectedOutput": 2}]), is_dataset([{"input": 1}, 2])
    (True, False)
    """
    rows = values[:_ROWS_TOLD]
    return (
        bool(rows)
        and all(isinstance(r, dict) and r and r.keys() <= DATASET_ROW_KEYS for r in rows)
        and any(r.keys() != {"input"} for r in rows)
    )


def dataset_said(name: str, what: str) -> tuple[str, str]:
    """The message and hint for a verydia dataset `name` given where `what` goes."""
    return (
        f"`{name}` is a verydia dataset (rows of `input`, `expectedOutput`, "
        f"`expectedBehavior`, `metadata`), not {what}",
        f'a dataset runs in a suite, against a target: write `dataset "{name}"` beside '
        f"`run module:function` in a case (in YAML, `dataset: {name}` beside `run:`)",
    )


def load_run(
    path: str | os.PathLike[str], format: str | None = None, *, sample: str | None = None
) -> Run:
    """Read the run a file holds, detecting its format unless `format` names one.

    `sample` picks one sample of an Inspect AI log that has several. Every failure is a
    `RunError` (E501 when the file does not exist), never a traceback.

    >>> load_run("tests/fixtures/traceplay/streaming/cassette.streaming.jsonl").format
    'traceplay'
    """
    # A file read whole (any format but a cassette or a JSONL of events, which stream) is
    # decoded and adapted into many small objects that hold no cycles: the collections
    # their allocations would trigger only rescan them (about 40% of reading 200,000
    # OpenAI responses). Not `long_lived`: handing them to the oldest generation gained
    # nothing measurable here (docs/speed.md, "The formats read whole, at scale").
    with paused_gc():
        return _load_run(os.fspath(path), format, sample)


def _load_run(p: str, format: str | None, sample: str | None) -> Run:
    if format is not None:
        return _load_as(p, _canonical_format(format, p), sample)
    found = kept_at(p)
    if found is not None:  # an Inspect AI log of samples, read for another
        return _from_items(found, False, sample)
    first, lineno = read_first_line(p)  # (opening it is `check_file`'s test: one open, not two)
    if not lineno:
        if p.lower().endswith(LINE_EXTENSIONS):
            # (naming its format would not help: nothing was recorded)
            raise RunError(
                "empty cassette",
                path=p,
                hint="the file holds no line: whatever should have recorded the run wrote "
                "nothing; record the run again",
            )
        raise RunError("empty file", path=p, hint="a run file holds JSON, JSONL or SSE text")
    if lineno == 1 and first.startswith(ZIP_MAGIC):  # an Inspect AI `.eval` log
        return _from_items(_zip_items(p, file_key(p)), False, sample)
    if (gzipped := gzip_error(first, p, lineno)) is not None:  # whatever its name
        raise gzipped
    head = None if _one_line_document(p, first, lineno) else _try_object(first)
    if head is None and (lone := _lone_carriage_returns(p, first, lineno)) is not None:
        raise lone
    if head is not None and "cassette" in head:
        # (its header checked from the line read here, not read again)
        run = load_cassette(p, first=(first, lineno))
        return _with_reading(run, "traceplay", 'line 1 is a "cassette" header')
    items, done = _read_items(p, first, head)
    if isinstance(items, Run):
        return items
    return _from_items(items, done, sample)


#: From this size on, `check` reads a JSONL file of a format read whole (OpenAI,
#: Anthropic, LangSmith, Agents SDK, OTel spans) from its head (`read_head`), as it reads
#: a cassette's.
HEAD_FROM = 1 << 20
#: The bytes of such a file `check` reads (more when its first `HEAD_ITEMS` lines are
#: longer, up to `HEAD_MOST`; past that it reads the file whole).
HEAD_BYTES = 64 * 1024
HEAD_MOST = 512 * 1024
#: Formats whose JSONL lines may be read from a head: each line an item the adapter reads
#: (OTel's, a batch of spans; not the streaming formats). The run reads the whole file
#: (OTel's by the typed reader); `check` wants only the tool names, which a head gives.
_HEAD_FORMATS = frozenset({"openai", "anthropic", "langsmith", "openai_agents", "otel"})


def read_head(path: str, format: str | None = None) -> tuple[Run, int] | None:
    """What `check` reads of a large JSONL file of a format read whole: the run its first
    `HEAD_BYTES` of whole lines hold (at least the `HEAD_ITEMS` lines detection reads),
    and where they end; `None` when `check` must read the file as the run will (a small
    file, a document, a cassette, a JSONL of events, OTel spans) or when the head alone
    cannot be read (a line not JSON, a stream cut inside a call, nothing recognised in
    it, a format other than `format`): the reading of the whole file then gives its exact
    error. Later lines are read by the run."""
    if _size(path) < HEAD_FROM:
        return None
    try:  # (an unknown name: the whole reading says so)
        fmt = None if format is None else _canonical_format(format, path)
    except RunError:
        return None
    if fmt is not None and fmt not in _HEAD_FORMATS:
        return None
    values: list[Any] = []
    lines: list[int] = []
    read = 0
    try:
        with open_file(path) as f:
            for lineno, raw in file_lines(f, path):
                if not raw.endswith(b"\n") or read + len(raw) > HEAD_MOST:
                    return None  # the whole file, or lines too long for a head
                read += len(raw)
                value = _try_object(raw.removeprefix(b"\xef\xbb\xbf") if lineno == 1 else raw)
                if value is None and raw.strip(b" \t\r\n\xef\xbb\xbf"):
                    return None  # not JSON, or not an object
                if value is not None:
                    values.append(value)
                    lines.append(lineno)
                    # a cassette, or a JSONL of events (any event in the head: it streams)
                    if (lineno == 1 and "cassette" in value) or _event_types(values[-1:]):
                        return None
                # as many items as detection reads of the whole file, and HEAD_BYTES;
                # OTLP exports are told by their own key, and each line is a batch of
                # spans (~18 KB for a turn's): HEAD_BYTES of them, however few
                if read >= HEAD_BYTES and (len(values) >= HEAD_ITEMS or _exports(values)):
                    break
    except (OSError, RunError):
        return None
    if len(values) < 2:
        return None
    from evaldsl.runs.providers import Items

    items = Items(path, values, "jsonl", lines=lines)
    try:
        if fmt is not None:
            run = _read_as(items, fmt, _named(fmt), False, None)
        else:
            run = _from_items(items, False, None)
    except RunError:
        return None
    return (run, read) if run.format in _HEAD_FORMATS else None


def _exports(values: list[Any]) -> bool:
    """Whether every value is an OTLP export (`{"resourceSpans": [...]}`), which only the
    OTel reader takes: a head of them is OTel spans whatever follows (a line after it
    that is not is the run's error, which its reading gives)."""
    return all(type(v) is dict and "resourceSpans" in v for v in values)


def read_first_line(path: str) -> tuple[bytes, int]:
    """`cassette.first_line` of the file at `path` (its first non-blank line, BOM removed,
    and the line's number), read from the file's first block (`_block_first_line`)."""
    try:
        with open_file(path) as f:
            return _block_first_line(f) or first_line(f, path)
    except OSError as exc:
        raise os_error(path, exc) from None


#: A file's first line is looked for in its first this many bytes, where most end (the
#: rest of a longer one is read in blocks of 16 times as many: `_block_first_line`); a
#: held file (`heldfiles`) is never longer.
FIRST_BLOCK = HOLD_BYTES


def _block_first_line(f: IO[bytes]) -> tuple[bytes, int] | None:
    """`first_line` of the open file `f` (at its start) when its first line is not blank,
    read from its first block (`FIRST_BLOCK` bytes), and when longer than that, by blocks;
    else None, with `f` at its start again. (A line in the first block is taken from it:
    `first_line` read it again, by the buffered reader's `readline` after a seek, ~a fifth
    of looking at a cassette for an Inspect AI log. A JSON document written on one line, as
    most writers write it, is its first line: `readline` reads a 37 MB line at a third of
    `read`'s speed, ~55 ms against ~18, and a detected document's first line is read
    twice.) A line past `MAX_LINE_BYTES` is left to `first_line`, whose error names it."""
    if type(f) is HeldFile or not f.seekable():  # (a held file is no longer than a block)
        return None
    blocks = [f.read(FIRST_BLOCK)]
    size = len(blocks[0])
    end = blocks[0].find(b"\n")
    if 0 <= end <= MAX_LINE_BYTES:  # (`first_line` reads at most the limit and its newline)
        line = strip_bom(blocks[0][: end + 1])
        if line.strip():
            return line, 1
    long = size == FIRST_BLOCK and end < 0  # (else `first_line` reads it)
    while long and size <= MAX_LINE_BYTES:
        block = f.read(FIRST_BLOCK * 16)
        end = block.find(b"\n")
        if end >= 0 or not block:
            blocks.append(block[: end + 1] if end >= 0 else block)
            raw = b"".join(blocks)
            line = strip_bom(raw)
            # (a blank line, its first byte told first: `first_line` reads past it)
            if len(raw) > MAX_LINE_BYTES or (not line[:1].strip() and not line.strip()):
                break
            return line, 1
        blocks.append(block)
        size += len(block)
    f.seek(0)
    return None


def _starts_sse(first: bytes) -> bool:
    """`sse.looks_like_sse` of a file's first line, of which only the start is decoded: a
    document on one line is its first line (a 37 MB OTLP document was decoded to text
    twice a reading to look at its first six characters)."""
    from evaldsl.runs.sse import looks_like_sse

    at = 0
    while first.startswith(BOM, at):  # (what `looks_like_sse` strips, decoded)
        at += len(BOM)
    return looks_like_sse(decode_text(first[at : at + 16]))


def _one_line(path: str, first: bytes, lineno: int) -> bool:
    """Whether the file is its first line alone (but for a BOM, or a few bytes after it):
    a document written compact, as most writers write JSON. Such a file is read as a
    document whatever its line decodes to (a JSONL needs two lines), so the line is not
    decoded to be looked at first (a 37 MB OTLP document was decoded three times: as a
    line to look at, as a JSONL's first line, and as the document)."""
    return lineno == 1 and _size(path) - len(first) <= 3


def _one_line_document(path: str, first: bytes, lineno: int) -> bool:
    """`_one_line`, for a file not named as JSON lines (a JSONL of one line is read as
    one) and not holding the word `"cassette"` (a cassette's header line is looked at)."""
    return (
        _one_line(path, first, lineno)
        and not path.lower().endswith(LINE_EXTENSIONS)
        and b'"cassette"' not in first
    )


def _lone_carriage_returns(path: str, first: bytes, lineno: int) -> RunError | None:
    """The error of a cassette or a JSONL of events whose lines end with a lone CR (old Mac
    line endings), which their readers, streaming lines ended by LF, do not split: its
    first line (up to an LF) holds the header or an event, then a CR, then more; else
    None. (Detection read such a file as lines of JSON items and found it `matches more
    than one format`; the formats read whole, which split at a lone CR too, read theirs.)"""
    at = first.find(b"\r")
    if at < 0 or first[at:].strip() == b"":  # (a line ended by CRLF)
        return None
    piece = _try_object(first[:at])
    if piece is None or not ("cassette" in piece or _event_types([piece])):
        return None
    shown = decode_text(first).rstrip("\r\n")
    return lone_carriage_return(path, lineno, shown, len(shown) + 1)


def _try_object(raw: bytes) -> dict[str, Any] | None:
    try:
        value = mended_loads(raw)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def _with_reading(run: Run, fmt: Format, why: str) -> Run:
    return attrs.evolve(run, read=Reading(fmt, why))


def _read_items(path: str, first: bytes, head: dict[str, Any] | None) -> tuple[Items | Run, bool]:
    """The file's items, or a streamed `Run` for a JSONL of events."""
    from evaldsl.runs.sse import parse_sse

    if _starts_sse(first):
        return parse_sse(utf8_text(read_bytes(path), path), path)
    named_lines = path.lower().endswith(LINE_EXTENSIONS)
    if head is not None or named_lines:
        texts: list[bytes] = []
        lines = _head_lines(path, texts)
        if len(lines) > 1 or named_lines:
            values = [v for v, _ in lines]
            if values and holds_a_trace(values[0]):
                # Known from the first line, before any later one is read: a bad line
                # further on is that line's own trace's problem, never the file's (`score`
                # reads the file a trace per line, as it reads the same lines piped).
                raise trace_per_line(path)
            if _traceplay_types(values):
                for value, at in lines:
                    if not isinstance(value, dict):
                        raise not_event_line(path, at, value)
                run = load_event_lines(path)
                return _with_reading(run, run.given_format, _events_why(values)), False
            typed = _typed_otel(path, values, None, texts)
            return (typed, False) if typed is not None else (_jsonl(path), False)
    key = file_key(path)  # (before reading: a file changed since is not the one kept)
    data = read_bytes(path)
    typed = _typed_otel_document(path, data, None)
    if typed is not None:
        return typed, False
    return _document_items(path, key, data, LINE_HINT if named_lines else _DOCUMENT_HINT), False


def _zip_items(path: str, key: FileKey | None) -> Items:
    """The items of an Inspect AI `.eval` log (a ZIP archive: `inspectzip.py`), kept as a
    JSON log of samples is."""
    from evaldsl.runs.inspectzip import read_eval_zip

    items = read_eval_zip(path)
    keep(key, items)
    return items


def _document_items(path: str, key: FileKey | None, data: bytes, hint: str | None) -> Items:
    """The items of a file read whole as one JSON value (an array's elements, or the
    document), kept when they are an Inspect AI log of samples (`samplelogs`)."""
    from evaldsl.runs.providers import Items

    try:
        doc = mended_loads(data)
    except orjson.JSONDecodeError as exc:
        raise json_error(exc, data, path, hint=hint) from None
    text = decode_text(data)
    if isinstance(doc, list):
        return Items(path, doc, "array", text=text)
    items = Items(path, [doc], "document", text=text)
    keep(key, items)
    return items


def _head_lines(path: str, texts: list[bytes] | None = None) -> list[tuple[Any, int]]:
    """The first JSON values of a file, one per line (fewer when a line is not JSON); the
    text each was decoded from is added to `texts`, when given."""
    out: list[tuple[Any, int]] = []
    try:
        with open_file(path) as f:
            for lineno, raw in itertools.islice(file_lines(f, path), HEAD_ITEMS * 4):
                text = strip_bom(raw)
                if not text.strip():
                    continue
                try:
                    out.append((mended_loads(text), lineno))
                except orjson.JSONDecodeError:
                    break
                if texts is not None:
                    texts.append(text)
                if len(out) >= HEAD_ITEMS:
                    break
    except OSError as exc:
        raise os_error(path, exc) from None
    return out


def _typed_otel(path: str, head: list[Any], named: str | None, texts: list[bytes]) -> Run | None:
    """A large JSONL file of OTel spans read by the typed decoder (`otlpdecode.py`), or
    `None`: a small file, one whose head is not OTel spans, one it cannot read. `named`:
    the reason when the format was named (else detection's, from the first items);
    `texts`: the head's texts (`_head_lines`'), which the decoder need not decode again."""
    if (
        not head
        or not all(isinstance(v, dict) and ("resourceSpans" in v or "context" in v) for v in head)
        or _size(path) < OTEL_TYPED_FROM
        or _reference_only()
    ):
        return None
    from evaldsl.runs.otlpdecode import read_otel_lines

    def why(values: list[Any]) -> str | None:
        return named if named is not None else _otel_only(path, values, "jsonl")

    return read_otel_lines(path, why, HEAD_ITEMS, list(zip(texts, head, strict=True)))


def _typed_otel_document(path: str, data: bytes, named: str | None) -> Run | None:
    """A large OTLP JSON document (or array of them) read by the typed decoder, or `None`
    (as `_typed_otel`). Only documents holding `resourceSpans` and nothing else are
    taken: detection's signatures then see what they would see in `{"resourceSpans": []}`
    (only the OTel one reads that key, and only its type)."""
    if (
        len(data) < OTEL_TYPED_FROM
        or data.lstrip()[:1] not in (b"{", b"[")
        or b'"resourceSpans"' not in data[: 1 << 16]
        or _reference_only()
    ):
        return None
    from evaldsl.runs.otlpdecode import read_otel_document

    def why(container: str, count: int) -> str | None:
        if named is not None:
            return named
        stub: dict[str, Any] = {"resourceSpans": []}
        values = [stub] * min(count, HEAD_ITEMS) if container == "array" else [stub]
        return _otel_only(path, values, container)

    return read_otel_document(path, data, why)


def _otel_only(path: str, values: list[Any], container: str) -> str | None:
    """Detection's reason for `otel` when these items match its signature alone (else
    `None`: the typed decoder leaves such a file to the full reading, which says why)."""
    from evaldsl.runs.providers import Items

    found = candidates(Items(path, values, container))
    return found[0][1] if found and all(f == "otel" for f, _ in found) else None


def _reference_only() -> bool:
    # (imported here: the passes load the index machinery, which detection alone needs not)
    from evaldsl.runs.passes import reference_only

    return reference_only()


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def _jsonl(path: str) -> Items:
    """Every line of a JSONL file as an item (a bad line is an error naming it)."""
    from evaldsl.runs.providers import Items

    values: list[Any] = []
    lines: list[int] = []
    data = read_bytes(path)
    # (looked through once: a line holds a long integer only if the file does, and most
    # files hold none; each line looked through was ~2x its decoding's instructions)
    rounds = may_round(data)
    # (orjson itself first when no line rounds: `mended_loads` only mends what orjson
    # refuses, and a call of it for each of a stream's many short lines was ~2% of its
    # reading; a line orjson refuses is given to it, mended or its error)
    loads = mended_loads if rounds else orjson.loads
    for lineno, raw in enumerate(text_lines(utf8_text(data, path)), 1):
        if not raw.strip():
            continue
        try:
            try:
                values.append(loads(raw))
            except orjson.JSONDecodeError:
                values.append(mended_loads(raw, rounds=rounds))
        except orjson.JSONDecodeError as exc:
            raise invalid_line(path, lineno, exc, raw) from None
        if not isinstance(values[-1], dict):
            raise not_event_line(path, lineno, values[-1], raw)
        lines.append(lineno)
    return Items(path, values, "jsonl", lines=lines)


def _event_types(values: list[Any]) -> set[str]:
    return {
        v["type"] for v in values[:HEAD_ITEMS] if isinstance(v, dict) and is_kind(v, KNOWN_TYPES)
    }


def _traceplay_types(values: list[Any]) -> set[str]:
    """The traceplay event types of the first items: none when their only one is
    `error` in a provider's stream (the API's error event that ended it)."""
    types = _event_types(values)
    return set() if types == {"error"} and _provider_stream(values) else types


def _events_why(values: list[Any]) -> str:
    types = sorted(_event_types(values))
    return "items have event types " + ", ".join(f"`{t}`" for t in types[:5])


# --- signatures ------------------------------------------------------------------------------


def _item_shapes(values: list[Any], shape: Callable[[Any], str | None]) -> list[str]:
    found: list[str] = []
    for v in values[:HEAD_ITEMS]:
        name = shape(v)
        if name is not None and name not in found:
            found.append(name)
    return found


def candidates(items: Items) -> list[tuple[str, str]]:
    """Every format whose signature the items match: (format, why), in a fixed order."""
    from evaldsl.runs.agents import is_agents_batch, is_agents_item
    from evaldsl.runs.anthropic import shape_of as anthropic_shape
    from evaldsl.runs.inspect_ai import is_eval_log
    from evaldsl.runs.langsmith import is_langsmith_run
    from evaldsl.runs.openai import is_plain_request
    from evaldsl.runs.openai import shape_of as openai_shape
    from evaldsl.runs.otel import shape_of as otel_shape
    from evaldsl.runs.state import is_state_document

    values = items.values
    found: list[tuple[str, str]] = []
    doc = values[0] if items.container == "document" else None
    if isinstance(doc, dict):
        if is_state_document(doc):
            found.append(("cycgraph", "an object with cycgraph state fields and status"))
        if is_eval_log(doc):
            found.append(("inspect", "an object with an Inspect AI `eval` spec and samples"))
        if ("events" in doc or "trace" in doc) and not is_langsmith_run(doc):
            listed = doc.get("events", doc.get("trace"))
            events = (
                [e for e in listed[:HEAD_ITEMS] if isinstance(e, dict)]
                if isinstance(listed, list)
                else []
            )
            found.append((trace_format(events), 'an object with an "events"/"trace" list'))
        if is_agents_batch(doc):
            found.append(("openai_agents", 'a {"data": [...]} batch of Agents SDK spans'))
    types = _traceplay_types(values)
    if types:
        fmt = "verydia" if types & VERYDIA_TYPES else "events"
        found.append((fmt, _events_why(values)))
    for fmt, shape in (
        ("openai", openai_shape),
        ("anthropic", anthropic_shape),
        ("otel", otel_shape),
    ):
        shapes = _item_shapes(values, shape)
        if shapes:
            found.append((fmt, "items are " + ", ".join(shapes)))
    if any(is_agents_item(v) for v in values[:HEAD_ITEMS]):
        found.append(("openai_agents", "items are Agents SDK trace.span objects"))
    elif doc is None and any(is_agents_batch(v) for v in values[:HEAD_ITEMS]):
        found.append(("openai_agents", 'items are {"data": [...]} batches of Agents SDK spans'))
    if any(is_langsmith_run(v) for v in values[:HEAD_ITEMS]):
        found.append(("langsmith", "items are LangSmith runs (a `run_type` and `name`)"))
    # (a traceplay `llm.request` event holds the request's `messages` too, and is no
    # request body: an array of events was "openai or anthropic" beside "events")
    if any(
        is_plain_request(v) and not is_kind(v, KNOWN_TYPES) for v in values[:HEAD_ITEMS]
    ) and not any(f in ("openai", "anthropic") for f, _ in found):
        why = "a request whose messages are plain user/assistant text"
        found += [("openai", why), ("anthropic", why)]
    return found


def _provider_stream(values: list[Any]) -> bool:
    """Whether the items hold a provider's stream (Anthropic events, Chat Completions
    chunks, Responses API events): its `{"type": "error", …}` item is then the provider's
    error event that ended it, not a traceplay `error` event."""
    from evaldsl.runs.anthropic import is_stream_event
    from evaldsl.runs.openai import is_chunk, is_response_event

    return any(
        is_stream_event(v) or is_chunk(v) or is_response_event(v) for v in values[:HEAD_ITEMS]
    )


def read_document(value: Any, path: str) -> Run:
    """The run a JSON document already in memory holds, its format detected by the same
    signatures as a file's (`path` names it in messages); a `RunError` when it matches no
    format, or several.

    >>> read_document({"choices": [{"message": {"content": "hi"}}]}, "<line 1>").format
    'openai'
    """
    from evaldsl.runs.providers import Items

    return _from_items(Items(path, [value]), True, None)


def _from_items(items: Items, done: bool, sample: str | None) -> Run:
    from evaldsl.runs.providers import keys_of
    from evaldsl.runs.unreadable import UNEXPECTED, unreadable

    name = items.path.rsplit("/", 1)[-1]
    if items.container == "jsonl" and holds_a_trace(items.values[0] if items.values else None):
        # (an exporter's file, one `{"trace_id", "events"}` per line: no event's line,
        # and no OpenAI body either, as the signatures would have it)
        raise trace_per_line(items.path)
    try:
        found = candidates(items)
    except UNEXPECTED as exc:  # a value of a type a format's signature did not test for
        raise unreadable(items, None, "", exc, candidates) from None
    if not found:
        if not items.values:
            raise RunError(f"`{name}` holds no items: there is nothing to check", path=items.path)
        if items.container == "document" and not isinstance(items.values[0], dict):
            raise RunError(
                f"`{name}` holds {describe(items.values[0])}, not a trace or a state",
                path=items.path,
                hint=_KINDS_HINT,
            )
        from evaldsl.runs.otel import DATAFRAME_HINT, DATAFRAME_SPANS, is_dataframe_span

        if items.values and is_dataframe_span(items.values[0]):
            raise RunError(f"`{name}` is {DATAFRAME_SPANS}", path=items.path, hint=DATAFRAME_HINT)
        if is_dataset(items.values):
            message, hint = dataset_said(name, "a trace or a state")
            raise RunError(message, path=items.path, hint=hint)
        keys = keys_of(items.values)
        if keys == "no keys" and items.container == "document":  # (`{}`)
            raise RunError(
                f"`{name}` holds an empty object, not a trace or a state",
                path=items.path,
                hint=_KINDS_HINT,
            )
        raise RunError(
            f"nothing in `{name}` is a recognised trace or state: the first "
            f"{'lines have' if items.lines else 'items have'} "
            f"{'no keys' if keys == 'no keys' else 'keys ' + keys}",
            path=items.path,
            hint=_KINDS_HINT,
        )
    formats = list(dict.fromkeys(f for f, _ in found))
    if len(formats) > 1:
        listed = "; ".join(f"{f} ({why})" for f, why in found)
        raise RunError(
            f"`{name}` matches more than one format: {listed}",
            path=items.path,
            hint='name the one it is with `trace "…" as FORMAT`',
        )
    return _read_as(items, formats[0], found[0][1], done, sample)


class TracePerLine(RunError):
    """A JSON-lines file each line of which is a whole trace, not one event (`score`
    reads it one trace per line, as it reads standard input)."""


def trace_per_line(path: str) -> TracePerLine:
    """The error of a JSON-lines file whose first line is a whole trace, read as one
    recording (`score` catches it and reads the file a trace per line)."""
    name = path.rsplit("/", 1)[-1]
    return TracePerLine(
        f"`{name}` holds one trace per line (an object with an `events` list), where a "
        "recording holds one event per line",
        path=path,
        hint=f"`evaldsl score PROGRAM {name}` scores each line as a trace; to check or "
        "inspect one, save its line as a `.json` file",
    )


def holds_a_trace(value: Any) -> bool:
    """Whether a JSON value is a whole trace in an object: an `events` (or `trace`) list
    of events (objects with a `type`: an OTel span's `events` have none) beside no
    event's own `type`.

    >>> holds_a_trace({"trace_id": "t", "events": [{"type": "llm.request"}]})
    True
    >>> holds_a_trace({"type": "x"}), holds_a_trace({"name": "s", "events": [{"name": "e"}]})
    (False, False)
    """
    if not isinstance(value, dict) or "type" in value:
        return False
    listed = value.get("events", value.get("trace"))
    return (
        isinstance(listed, list)
        and bool(listed)
        and isinstance(listed[0], dict)
        and isinstance(listed[0].get("type"), str)
    )


def _read_as(items: Items, fmt: str, why: str, done: bool, sample: str | None) -> Run:
    from evaldsl.runs.providers import BadValue
    from evaldsl.runs.unreadable import UNEXPECTED, misread, unreadable

    def again(head: Items) -> Run:
        return _adapt(head, fmt, why, done, sample)

    try:
        return _adapt(items, fmt, why, done, sample)
    except BadUsage as bad:  # usage nobody can count: the run's error, never 0 tokens
        counts = "token counts are whole numbers ≥ 0; fix or re-record the trace"
        raise misread(items, fmt, why, BadUsage(f"an LLM call's {bad}"), again, counts) from None
    except BadValue as bad:  # a value the reader must read and cannot: never a pass
        raise misread(items, fmt, why, bad, again) from None
    except UNEXPECTED as exc:  # a value of a type the adapter did not test for
        raise unreadable(items, fmt, why, exc, again) from None


def _adapt(items: Items, fmt: str, why: str, done: bool, sample: str | None) -> Run:
    from evaldsl.runs.agents import read_agents
    from evaldsl.runs.anthropic import read_anthropic
    from evaldsl.runs.inspect_ai import is_eval_log, read_inspect
    from evaldsl.runs.langsmith import read_langsmith
    from evaldsl.runs.openai import read_openai
    from evaldsl.runs.otel import otel_run
    from evaldsl.runs.state import state_from_document

    path = items.path
    if fmt in ("events", "verydia"):
        doc: Any = items.values[0] if items.container == "document" else items.values
        if isinstance(doc, dict) and "events" not in doc and "trace" not in doc:
            doc = [doc]  # one event object on its own
        run = events_from_document(doc, path=path, text=items.text, format=fmt)
        return _with_reading(run, run.format, why)
    if fmt == "cycgraph":
        run = state_from_document(items.values[0], path=path, text=items.text)
        return _with_reading(run, "state", why)
    if fmt == "openai":
        return read_openai(items, why, done=done).run(items)
    if fmt == "anthropic":
        return read_anthropic(items, why).run(items)
    if fmt == "otel":
        return otel_run(items, why)
    if fmt == "inspect":
        if len(items.values) != 1 or not is_eval_log(items.values[0]):
            raise RunError(
                "an Inspect AI log is one JSON object with `eval` and `samples`", path=path
            )
        trace, latency = read_inspect(items, why, sample)
        return trace.run(items, latency_ms=latency)
    if fmt == "langsmith":
        trace, latency = read_langsmith(items, why)
        return trace.run(items, latency_ms=latency)
    assert fmt == "openai_agents", fmt
    trace, latency = read_agents(items, why)
    return trace.run(items, latency_ms=latency)


def _canonical_format(name: str, path: str) -> str:
    found = FORMATS.get(name.lower())
    if found is None:
        near = did_you_mean(name, FORMATS)
        hint = (f'did you mean "{near}"? ' if near else "") + "formats: " + ", ".join(RUN_FORMATS)
        raise RunError(f'unknown run format "{name}"', path=path, hint=hint)
    return found


def _named(fmt: str) -> str:
    """Why a file is read as `fmt` when the suite names it."""
    return f"named: `as {fmt}`"


def _load_as(path: str, fmt: str, sample: str | None) -> Run:
    why = _named(fmt)
    found = kept_at(path) if fmt == "inspect" else None
    if found is not None:  # (as `_load_run`)
        return _read_as(found, fmt, why, False, sample)
    if fmt == "traceplay":
        return _with_reading(load_cassette(path), fmt, why)
    if fmt in ("events", "verydia"):
        run = load_events(path, "verydia" if fmt == "verydia" else None)
        return _with_reading(run, run.given_format, why)
    if fmt == "cycgraph":
        from evaldsl.runs.state import load_state

        return _with_reading(load_state(path), "state", why)
    first, lineno = read_first_line(path)  # (opening it is `check_file`'s test)
    if not lineno:
        raise RunError("empty file", path=path, hint=f"a {fmt} trace holds JSON, JSONL or SSE")
    if lineno == 1 and first.startswith(ZIP_MAGIC):  # (as `_load_run`)
        return _read_as(_zip_items(path, file_key(path)), fmt, why, False, sample)
    from evaldsl.runs.sse import parse_sse

    if fmt == "otel" and not _starts_sse(first) and _size(path) >= OTEL_TYPED_FROM:
        texts: list[bytes] = []
        looked = not _one_line(path, first, lineno) and _try_object(first) is not None
        lines = _head_lines(path, texts) if looked else []
        typed = (
            _typed_otel(path, [v for v, _ in lines], why, texts)
            if len(lines) > 1
            else _typed_otel_document(path, read_bytes(path), why)
        )
        if typed is not None:
            return typed
    items, done = (
        parse_sse(utf8_text(read_bytes(path), path), path)
        if _starts_sse(first)
        else (_named_items(path, first, lineno), False)
    )
    return _read_as(items, fmt, why, done, sample)


def _named_items(path: str, first: bytes, lineno: int) -> Items:
    if (
        not _one_line(path, first, lineno)
        and _try_object(first) is not None
        and len(_head_lines(path)) > 1
    ):
        return _jsonl(path)
    key = file_key(path)  # (as `_read_items`)
    return _document_items(path, key, read_bytes(path), _DOCUMENT_HINT)


# --- what a file holds, for the checker and the editor -----------------------------------------


def inspect_samples(path: str | os.PathLike[str], format: str | None = None) -> list[str]:
    """The sample ids of an Inspect AI log with more than one sample, else `[]`.

    Reads only files that are one JSON document, pretty-printed or on one line (never a
    cassette or a JSONL file), and never raises: a file that cannot be read is reported
    when its run is loaded. The log read is kept for the cases its samples become
    (`samplelogs.py`).
    """
    p = os.fspath(path)
    if format is not None and FORMATS.get(format.lower()) != "inspect":
        return []
    try:
        items = kept_at(p)
        if items is None:
            items = _log_items(p)
    except RunError:
        return []
    doc: Any = items.values[0] if items is not None and items.container == "document" else None
    if not _eval_log(doc):
        return []
    from evaldsl.runs.inspect_ai import sample_ids

    ids = sample_ids(doc)
    return ids if len(ids) > 1 else []


def _log_items(p: str) -> Items | None:
    """The items of a file that may be an Inspect AI log (a ZIP archive, or one JSON
    document), read (and kept, when they are a log of samples: `samplelogs.keep`); None
    for a file that cannot be one."""
    key = file_key(p)  # (before reading, as `_read_items`)
    first, lineno = read_first_line(p)
    if lineno == 1 and first.startswith(ZIP_MAGIC):
        return _zip_items(p, key)
    if not lineno or not first.lstrip().startswith(b"{"):
        return None
    if _one_line(p, first, lineno):  # (a document on one line: decoded once, if at all)
        return _document_items(p, key, read_bytes(p), None) if _may_be_log(first) else None
    head = _try_object(first)
    if head is not None and (not _eval_log(head) or len(_head_lines(p)) > 1):
        return None  # JSONL, or one object on its line that is no log
    data = read_bytes(p)
    return _document_items(p, key, data, None) if _may_be_log(data) else None


def _may_be_log(data: bytes) -> bool:
    """Whether JSON text may hold an Inspect AI log: a small one, one the check below
    cannot read (the full reading says what it is), or an object with an `eval` key. Most
    large documents looked at for samples are no log (an OTLP export, an OpenAI body):
    their keys are read without building their values, ~20 ms for a 37 MB OTLP document
    that took ~280 ms to decode (msgspec reads escaped keys as JSON does)."""
    if len(data) < OTEL_TYPED_FROM:  # (importing msgspec costs more than decoding it)
        return True
    import msgspec

    try:
        keys = msgspec.json.decode(data, type=dict[str, msgspec.Raw])
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        return True  # (surrogates, big numbers, a depth msgspec's recursion does not reach)
    return "eval" in keys


def _eval_log(doc: Any) -> bool:
    """Whether `doc` is an Inspect AI log (its reader loaded only for an object with an
    `eval` object: never for a cassette's header)."""
    if not isinstance(doc, dict) or not isinstance(doc.get("eval"), dict):
        return False
    from evaldsl.runs.inspect_ai import is_eval_log

    return is_eval_log(doc)


def check_head(run: Run) -> None:
    """Raise the run-time "nothing recognised" `RunError` now, for a streamed trace whose
    first events hold no recognised one and which ends within them (what `check` can
    know without reading a whole large file)."""
    if isinstance(run.events, list):  # (a file's `output` beside no event is no run)
        found = [e.get("type") for e in run.events if isinstance(e, dict)]
        if not any(is_among(t, KNOWN_TYPES) for t in found):
            counts: dict[str | tuple[str] | None, int] = {}
            for t in found:
                slot = type_slot(t)
                counts[slot] = counts.get(slot, 0) + 1
            raise nothing_recognised(counts, run.path or "<value>")
        return
    if not isinstance(run.events, EventStream):
        return
    unknown: dict[str | tuple[str] | None, int] = {}
    events = iter(run.events)  # the careful reader: a bad line is a RunError naming it
    try:
        for event in itertools.islice(events, HEAD_EVENTS + 1):
            kind = event.get("type")
            if is_among(kind, KNOWN_TYPES):
                return
            slot = type_slot(kind)  # (a list there is said as one, never as its repr)
            unknown[slot] = unknown.get(slot, 0) + 1
    finally:
        close = getattr(events, "close", None)
        if close is not None:
            close()
    if sum(unknown.values()) <= HEAD_EVENTS:
        raise nothing_recognised(unknown, run.events.path)


def scan_tool_names(path: str | os.PathLike[str], format: str | None = None) -> frozenset[str]:
    """The names of every tool a recording calls (`tool.call`, verydia `mcp.call`).

    For the checker's "unknown tool" and did-you-mean. A cassette is scanned without
    decoding lines that cannot hold a tool call; any other file goes through `load_run`.

    >>> sorted(scan_tool_names("tests/fixtures/traceplay/multi-tool/cassette.multi-tool.jsonl"))
    ['get_crypto_price', 'get_weather']
    """
    p = os.fspath(path)
    run = load_run(p, format)
    if isinstance(run.events, EventStream) and run.format == "traceplay":
        return scan_cassette_tools(run.events)
    names = {tool_call_name(event) for event in run.events or ()}
    return frozenset(n for n in names if n is not None)


# --- values ----------------------------------------------------------------------------------


def coerce_run(value: object, *, base: Path | None = None) -> Run:
    """Make a `Run` of whatever names or holds one.

    A `Run` is itself; a `str` or path-like is a file (relative to `base` when given) read by
    `load_run`; a list (or tuple) must be event objects; a dict with cycgraph's state
    signature (see `looks_like_state`) is a state (checked like a state file); a dict with an
    `events`/`trace` list is a trace; any other dict is detected as a file holding it would
    be (`read_document`). Anything else (bytes, an open file, a number, None) is a
    `RunError`, as a missing file is: a value that was not read is never a pass. For what a
    `run` target returned, where a string is an answer and not a path, use `run_from_value`.

    >>> coerce_run([{"type": "tool.call", "name": "search"}]).kind
    'trace'
    """
    if isinstance(value, Run):
        problems = run_problems(value)
        if problems:
            raise RunError(f"the evaldsl.Run given is unusable: {problems[0]}", path=VALUE_NAME)
        return _output_as_data(value)
    if isinstance(value, str | os.PathLike):
        p = Path(value)
        if base is not None and not p.is_absolute():
            p = base / p
        return load_run(p)
    if isinstance(value, tuple):
        value = list(value)
    if isinstance(value, list):
        # Not walked here: the index pass reports a non-object element by its index, and
        # the format is told by the first events, so a million in-memory events are read
        # once, not three times.
        head = [e for e in value[:1000] if isinstance(e, dict)]
        return Run(events=value, format=trace_format(head))
    if not isinstance(value, dict):
        raise not_a_run(value)
    from evaldsl.runs.state import looks_like_state, state_from_document

    if looks_like_state(value):
        return state_from_document(value, path=VALUE_NAME)
    if "events" in value or "trace" in value:
        return events_from_document(value, path=VALUE_NAME)
    # an OpenAI or Anthropic body, an OTLP trace, …: or a `RunError` naming its keys, as
    # `evaldsl score` gives for the same object on a line
    return read_document(value, VALUE_NAME)


def run_problems(run: Run) -> list[str]:
    """What is wrong with the fields of a `Run` made outside evaldsl's readers (passed to
    `program.check`, returned by a live target), each as "its state must be …": a wrong
    one failed deep inside (`'str' object has no attribute 'get'`), or gave a verdict on
    what was never read (a state of the wrong shape failed `status == completed`, where a
    file holding it is the run's error). Its events are not walked: the index pass names
    an element that is not an event object by its index.

    >>> run_problems(Run(events="abc"))
    ['its events must be a list of event objects, found a string']
    """
    from evaldsl.language.values import is_number
    from evaldsl.runs.model import LateFormat
    from evaldsl.runs.state import validate_state

    problems = []
    events, state = run.events, run.state
    if events is not None and (
        isinstance(events, str | bytes | bytearray | dict | set | frozenset)
        or not hasattr(events, "__iter__")
    ):
        problems.append(f"its events must be a list of event objects, found {describe(events)}")
    if state is not None:
        if not isinstance(state, dict):
            problems.append(f"its state must be an object, found {describe(state)}")
        else:
            problems.extend(e.message for e in validate_state(state, VALUE_NAME))
    if not isinstance(run.given_format, str | LateFormat):
        problems.append(f"its format must be text, found {describe(run.given_format)}")
    if run.path is not None and not isinstance(run.path, str):
        problems.append(f"its path must be text, found {describe(run.path)}")
    if run.latency_ms is not None and not is_number(run.latency_ms):
        problems.append(f"its latency_ms must be a number, found {describe(run.latency_ms)}")
    output = run.output
    if output is not MISSING and not isinstance(
        output, str | int | float | list | tuple | dict | type(None)
    ):
        # (its repr was read as the answer: `Run(output=b"x")` passed `answer contains "x"`;
        # only its top is looked at, as its events are not walked)
        problems.append(
            "its output must be JSON data (text, a number, a boolean, null, a list or an "
            f"object), found {type(output).__name__}"
        )
    return problems


def _output_as_data(run: Run) -> Run:
    """`run` with its output made JSON data (`evaldsl.jsondata`), as a live target's is in
    its worker: bytes, a set or NaN below its top were read by their repr (`Run(output={"a":
    b"x"})` passed `answer contains "x"`), and now are the run's error, naming their place.
    Walked here, once a check, and not in `run_problems`, which the run a live target
    returned passes too, already made JSON data (a second walk of a large output)."""
    output = run.output
    if output is MISSING or output is None or type(output) is str:  # (the common answers)
        return run
    # imported here: only a `Run` made in memory needs it (a run of recordings never)
    from evaldsl.jsondata import NotJsonData, to_json_data

    try:
        data = to_json_data(output)
    except NotJsonData as err:
        raise RunError(
            f"the evaldsl.Run given is unusable: its output must be JSON data: at {err}",
            path=VALUE_NAME,
            hint="give it text, numbers, booleans, None, lists and dicts with text keys "
            "(decode bytes, make sets lists)",
        ) from None
    return attrs.evolve(run, output=data)


#: How messages name a run passed as a Python value rather than a file.
VALUE_NAME = "<value>"

_RUN_TAKES = (
    "a run is a path (a str or os.PathLike), a list of event objects, a dict holding a "
    "trace or a workflow state, or an evaldsl `Run`"
)


def not_a_run(value: object) -> RunError:
    """The `RunError` for a value `coerce_run` cannot read as a run, saying what it takes.

    >>> str(not_a_run(b"a.jsonl")).split(": ", 1)[1][:46]
    'bytes are not a run: decode them to a str path'
    """
    if isinstance(value, bytes | bytearray):
        what = "bytes are not a run: decode them to a str path, or parse the JSON they hold"
    elif hasattr(value, "read"):
        # `open(path)` passed for `path`: its repr would otherwise become the answer
        what = "an open file is not a run: pass its path instead"
    elif value is None:
        what = "None is not a run"
    else:
        what = f"{describe(value)} is not a run"
    return RunError(f"{what}; {_RUN_TAKES}", path=VALUE_NAME)


def run_from_value(value: object, *, latency_ms: float | None = None) -> Run:
    """The run a `run` target's return value stands for.

    A `Run` is kept; a non-empty list of objects that all have a string `type`, or any of
    whose elements is an event evaldsl reads (a `tool.call`, …), is a trace, and an element
    that is not an object is then a `RunError` naming it (as in a file: a list with one bad
    element is never read as plain output); a dict with `memory` or `visited_nodes`, or a
    `status` that is one of cycgraph's statuses, is a state (a wrong field type is a
    `RunError`), and so is one wrapped as `{"state": …, "output": …}` (with no `status` of
    its own: its `output` kept, as in a file); a dict with an `events`/`trace` event list
    (empty too, beside an `output`) is a trace with its `output`; anything else (text,
    `{"status": "ok"}`, `[]`, `[1, 2]`) is the output value.

    >>> run_from_value("Paris is sunny").output
    'Paris is sunny'
    """
    from evaldsl.runs.state import is_state_value, state_from_document, validate_state

    if isinstance(value, Run):
        run = value
    elif _is_event_list(value):
        events = check_events(value)
        run = Run(events=events, format=trace_format(events))
    elif is_state_value(value):
        assert isinstance(value, dict)
        errors = validate_state(value, "<value>")
        if errors:
            raise errors[0]
        run = Run(events=None, state=value, format="cycgraph")
    elif isinstance(value, dict) and "status" not in value and is_state_value(value.get("state")):
        run = state_from_document(value, path="<value>")  # (`{state, output}`, as in a file)
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
    """Whether a returned value is meant as events: all typed objects, or any one an event
    evaldsl reads (the others are then checked as a file's are, not taken as output)."""
    if not isinstance(value, list) or not value:
        return False
    if all(isinstance(e, dict) and isinstance(e.get("type"), str) for e in value):
        return True
    return any(isinstance(e, dict) and is_kind(e, KNOWN_TYPES) for e in value)


# `detect.otel_events`: the OTLP reader, re-exported without loading it at import
__getattr__ = lazy_attributes(__name__, {"otel_events": "evaldsl.runs.otel"})
