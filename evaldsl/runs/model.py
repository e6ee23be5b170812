"""The run model: what one execution left behind, and the error of reading one.

Takes nothing itself; the adapters of this package (`cassette`, `events`, `state`, `detect`)
build `Run` records and raise `RunError`s. It also holds the few file and JSON helpers every
adapter shares, so that each error anywhere points at the same 1-based line and column:
reading a file's bytes with friendly errors, decoding one JSON document, and finding where
a key or an array element starts in the text (only ever on the error path).
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from pathlib import PurePath
from typing import IO, Any, BinaryIO, Literal

import attrs
import orjson

from evaldsl.cache.regexes import regex
from evaldsl.language.diagnostics import Diagnostic, not_utf8
from evaldsl.language.limits import MAX_DOCUMENT_BYTES, MAX_LINE_BYTES
from evaldsl.language.reading import (
    FileProblem,
    broken_link,
    open_regular,
    read_regular,
    size_text,
)
from evaldsl.language.source import Source
from evaldsl.language.values import MISSING as MISSING  # re-exported: the run model's "no output"
from evaldsl.runs.heldfiles import HOLD_BYTES, HeldFile, held, keep
from evaldsl.runs.surrogates import mended_loads

RunKind = Literal["trace", "state", "value"]
RunErrorCode = Literal["E501", "E502"]

#: Source lines longer than this are not echoed under a diagnostic: a caret under a
#: megabyte of JSON helps nobody, and the line and column still say where to look.
MAX_SOURCE_LINE = 1000

#: The UTF-8 byte-order mark editors on Windows put before a text.
BOM = b"\xef\xbb\xbf"


class RunError(Exception):
    """A run that cannot be read. Carries path, 1-based line and column, message, hint.

    >>> str(RunError("empty cassette", path="a.jsonl"))
    'a.jsonl:1:1: empty cassette'
    """

    def __init__(
        self,
        message: str,
        *,
        path: str,
        line: int = 1,
        column: int = 1,
        hint: str | None = None,
        source_line: str = "",
        code: RunErrorCode = "E502",
    ) -> None:
        self.message = message
        self.path = path
        self.line = line
        self.column = column
        self.hint = hint
        self.source_line = source_line if len(source_line) <= MAX_SOURCE_LINE else ""
        self.code: RunErrorCode = code
        super().__init__(f"{path}:{line}:{column}: {message}")

    def __reduce__(self) -> tuple[Any, ...]:
        # Keyword-only arguments defeat the default exception pickling, and a process-pool
        # runner sends these errors back from its workers.
        return (_rebuild_run_error, (self.message, self._fields()))

    def _fields(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "hint": self.hint,
            "source_line": self.source_line,
            "code": self.code,
        }

    def in_file(self, path: str) -> RunError:
        """The same error named by the file its value was read from (an error raised where
        only the decoded value was at hand says `<value>`)."""
        return RunError(self.message, **{**self._fields(), "path": path})

    def to_diagnostic(self) -> Diagnostic:
        """The same problem as a `Diagnostic` (E501 for a missing file, else E502)."""
        return Diagnostic.in_file(
            self.path,
            self.code,
            self.message,
            line=self.line,
            column=self.column,
            hint=self.hint,
            source_line=self.source_line,
        )

    @classmethod
    def at_offset(
        cls, message: str, *, path: str, text: str, offset: int | None, hint: str | None = None
    ) -> RunError:
        """An error at a code-point offset of a file's text (line 1, column 1 when unknown)."""
        if offset is None:
            return cls(message, path=path, hint=hint)
        source = Source(text, path)
        pos = source.position(offset)
        return cls(
            message,
            path=path,
            line=pos.line,
            column=pos.column,
            hint=hint,
            source_line=source.line_text(pos.line),
        )


def _rebuild_run_error(message: str, fields: dict[str, Any]) -> RunError:
    return RunError(message, **fields)


class LateFormat:
    """A format decided the first time something asks for it, by `decide` (a JSONL of
    events is "verydia" when any of its lines is of a verydia type: a scan of the whole
    file, which checking it needs only where an LLM response holds a call). It is equal
    to, and hashed as, the format it decides on.

    >>> late = LateFormat(lambda: "verydia")
    >>> late.decided, late(), late.decided, late == "verydia" == LateFormat(lambda: "verydia")
    (False, 'verydia', True, True)
    """

    __slots__ = ("_decide", "_format")

    def __init__(self, decide: Callable[[], str]) -> None:
        self._decide = decide
        self._format: str | None = None

    def __call__(self) -> str:
        if self._format is None:
            self._format = self._decide()
        return self._format

    @property
    def decided(self) -> bool:
        """Whether the format is known yet (asking for it before then reads the file)."""
        return self._format is not None

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LateFormat | str):
            return self() == format_of(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self())

    def __repr__(self) -> str:
        return f"LateFormat({self._format or 'not decided yet'})"


#: A format, or a `LateFormat` that decides it when asked (`Run.format`, `Reading.format`).
Format = str | LateFormat


def format_of(given: Format) -> str:
    """The format `given` names, decided now if it is a `LateFormat` not yet decided."""
    return given if isinstance(given, str) else given()


@attrs.frozen
class Reading:
    """What an adapter read from a file: the format, why it was chosen, what it recognised
    (source items by kind, e.g. `{"chunk": 18}`), what it skipped (by reason, with counts)
    and notes that change what some subject means (`span times are not numbers`).

    `recognised` is `None` for a stream read lazily (a cassette, a JSONL event file): its
    events are only counted during the index pass, which fails the run when nothing in it
    was recognised.

    >>> Reading("openai", "objects are chat.completion.chunk", {"chunk": 3}).total
    3
    """

    given_format: Format = attrs.field(alias="format")
    why: str
    recognised: dict[str, int] | None = None
    skipped: dict[str, int] = attrs.Factory(dict)
    notes: tuple[str, ...] = ()

    @property
    def format(self) -> str:
        """The format read as (decided now when it was given as a `LateFormat`)."""
        return format_of(self.given_format)

    @property
    def total(self) -> int | None:
        """How many source items were recognised (`None`: not known before indexing)."""
        return None if self.recognised is None else sum(self.recognised.values())


@attrs.frozen
class Unrecorded:
    """What a recording left out that assertions would read: the answers of some LLM
    responses, some tool calls' arguments or results (an OTel trace whose instrumentation
    captured no message content). What is missing is unknown, never `""` or `{}`: an
    assertion that reads it is an error verdict. The reader's adapter makes it; every
    index pass gives it to the checkers alike (`RunFacts.unrecorded`).

    `answers`: the 1-based positions (among the run's `responses` LLM responses) of those
    whose output was not recorded; `arguments`: by tool, the 1-based numbers of its calls
    whose arguments were not; `results`: by tool, how many of its calls ran without their
    result recorded; `how`: how to record them (for the error's message); `cut`: by tool,
    why its calls among `arguments` have none whole, where the run itself cut them (a
    stream stopped by `max_tokens` or by the API's error, in the model's arguments:
    "input is cut, the model ran out of tokens in it"), not a recording that left them out;
    `answers_why`: why those answers are unknown when the recording did not leave them out
    (an OpenAI content filter removed them), said instead of `how` (`""`: it left them out).

    >>> u = Unrecorded("set X=1", responses=3, answers=frozenset({3}))
    >>> u.lacks_answer(-1), u.lacks_answer(1), u.lacks_answer(9)
    (True, False, False)
    """

    how: str
    responses: int = 0
    answers: frozenset[int] = frozenset()
    arguments: dict[str, frozenset[int]] = attrs.Factory(dict)
    results: dict[str, int] = attrs.Factory(dict)
    cut: dict[str, str] = attrs.Factory(dict)
    answers_why: str = ""

    def lacks_answer(self, index: int) -> bool:
        """Whether the answer at `index` (1-based; negative from the end) was not recorded
        (an index out of range is no answer, as it is anywhere: not this)."""
        return (index if index > 0 else self.responses + 1 + index) in self.answers

    def unread(self, tool: str, results: bool) -> int:
        """How many calls of `tool` have arguments (or `results`) not recorded."""
        return self.results.get(tool, 0) if results else len(self.arguments.get(tool, ()))

    def lacks_arguments(self, tool: str, call: int) -> bool:
        """Whether call number `call` (1-based) of `tool` has arguments not recorded."""
        return call in self.arguments.get(tool, ())


@attrs.frozen
class Run:
    """What one execution left behind.

    `events` is re-iterable (a list, or an `EventStream` that reads its file again on each
    pass) and `None` for a pure state or value. `format` names the adapter that made it:
    "traceplay", "verydia", "events", "openai", "anthropic", "otel", "inspect",
    "openai_agents", "langsmith", "cycgraph" or "value". `read` says what the adapter read
    (`None` for values made in memory).

    >>> Run(events=[{"type": "tool.call", "name": "search"}]).kind
    'trace'
    >>> Run(events=None, output=42, format="value").kind
    'value'
    """

    events: Iterable[dict[str, Any]] | None
    state: dict[str, Any] | None = None
    output: Any = MISSING
    path: str | None = None
    #: the format, or a `LateFormat` deciding it when asked (`format`)
    given_format: Format = attrs.field(default="events", alias="format")
    latency_ms: float | None = None
    read: Reading | None = None
    unrecorded: Unrecorded | None = None  # what the recording left out (see `Unrecorded`)

    @property
    def format(self) -> str:
        """The adapter's format (decided now when it was given as a `LateFormat`)."""
        return format_of(self.given_format)

    @property
    def kind(self) -> RunKind:
        """What the run can answer about: a state wins over a trace, a trace over a value."""
        if self.state is not None:
            return "state"
        if self.events is not None:
            return "trace"
        return "value"

    @property
    def has_output(self) -> bool:
        return self.output is not MISSING


def is_among(value: Any, choices: AbstractSet[Any]) -> bool:
    """`value in choices` for any JSON value: a list or an object (which no set can hold,
    and which a set lookup would raise on) is in none.

    >>> is_among("tool", frozenset({"tool"})), is_among(["tool"], frozenset({"tool"}))
    (True, False)
    """
    try:
        return value in choices
    except TypeError:
        return False


def describe(value: Any) -> str:
    """A JSON value's kind in the user's words, for messages: "a list", "a string", "null".

    >>> describe([1]), describe(True), describe(None)
    ('a list', 'a boolean', 'null')
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "a list"
    return "an object" if isinstance(value, dict) else f"a {type(value).__name__}"


def given(value: object) -> str:
    """How a Python argument of the wrong type is named in a public function's
    `TypeError`: "None", "a dict" (where `describe` names JSON values).

    >>> given(None), given(PurePath("a.eval")), given(3)
    ('None', 'a Path', 'an int')
    """
    if value is None:
        return "None"
    if isinstance(value, bytes | bytearray):
        return "bytes"
    if isinstance(value, PurePath):
        return "a Path"
    name = type(value).__name__
    return f"{'an' if name[0] in 'aeiou' else 'a'} {name}"


# --- files --------------------------------------------------------------------------------


def file_error(problem: FileProblem) -> RunError:
    """The `RunError` for a file that cannot be read as a run (E501 when it is missing)."""
    path = problem.path
    if problem.kind == "missing":
        return RunError(
            f'file not found: "{path}"',
            path=path,
            code="E501",
            hint=broken_link(path)
            or "check the spelling; relative paths start at the suite file's folder",
        )
    if problem.kind == "folder":
        return RunError(
            f'"{path}" is a folder, not a run file',
            path=path,
            hint="name one file: a .jsonl cassette, a .json event list or a .json state",
        )
    if problem.kind == "special":
        return RunError(
            problem.message,
            path=path,
            hint="evaldsl reads runs from regular files only: save the stream to a file first",
        )
    return RunError(problem.message, path=path)


def open_file(path: str) -> BinaryIO:
    """A run file opened for reading in binary: a regular file, else a `RunError` (a FIFO
    or a device is refused at once, never read or waited on). Within a command that reads
    its small files once (`heldfiles.reading_once`), their bytes as read the first time."""
    again = held(path)
    if again is not None:
        return again
    try:
        f = open_regular(path)
    except FileProblem as problem:
        raise file_error(problem) from None
    try:
        return keep(path, f)
    except OSError as exc:  # (reading it whole failed: worded as its readers word it)
        raise os_error(path, exc) from None


def check_file(path: str) -> None:
    """Raise a `RunError` unless `path` names a regular file we may read.

    A missing file is E501 (what the checker reports for `cassette "typo.jsonl"`); a folder,
    a pipe, a device or an unreadable file is E502.
    """
    open_file(path).close()


def os_error(path: str, exc: OSError) -> RunError:
    """A `RunError` for an `OSError` met while opening or reading `path`."""
    if isinstance(exc, FileNotFoundError):
        return RunError(f'file not found: "{path}"', path=path, code="E501")
    if isinstance(exc, IsADirectoryError):
        return RunError(f'"{path}" is a folder, not a run file', path=path)
    reason = exc.strerror or type(exc).__name__
    return RunError(f'cannot read "{path}": {reason}', path=path)


def read_bytes(path: str) -> bytes:
    """The bytes of a run file read whole (at most `MAX_DOCUMENT_BYTES`), with a leading
    UTF-8 BOM removed."""
    try:
        data = read_regular(path, MAX_DOCUMENT_BYTES)
    except FileProblem as problem:
        error = file_error(problem)
        if problem.kind == "too-large":
            error.hint = "a JSONL file (one event per line) is read a line at a time, at any size"
        raise error from None
    return strip_bom(data)


def file_lines(f: IO[bytes], path: str, after: int = 0) -> Iterator[tuple[int, bytes]]:
    """The lines of an open file with their physical 1-based numbers (from `after + 1`),
    each read in one piece of at most `MAX_LINE_BYTES`: a longer line is a `RunError`
    naming it, never gigabytes of memory.
    """
    if _small(f):  # no line can be longer than the file: the file's own C-level lines
        yield from enumerate(f, after + 1)
        return
    readline = f.readline
    lineno = after
    while True:
        raw = readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        lineno += 1
        if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
            raise RunError(
                f"line {lineno} is longer than {size_text(MAX_LINE_BYTES)}, the most evaldsl "
                "reads of one line",
                path=path,
                line=lineno,
                hint="each line of a JSONL trace is one event; is this file JSONL?",
            )
        yield lineno, raw


def fast_lines(f: IO[bytes]) -> Iterator[bytes]:
    """The lines of an open file, read at C speed (no Python frame per line), none longer
    than `MAX_LINE_BYTES + 1` bytes: a longer one comes as pieces, which do not decode,
    and `file_lines` then names it. A file no larger than that is iterated as it is."""
    if _small(f):
        return iter(f)
    return iter(functools.partial(f.readline, MAX_LINE_BYTES + 1), b"")


#: The bytes `marked_lines` reads at a time.
MARK_BLOCK = 1 << 20


def marked_lines(f: IO[bytes], marks: Sequence[bytes]) -> Iterator[bytes]:
    """The lines of an open file (each with its line break) that hold one of `marks`, in
    their order, read a block at a time and looked for with `bytes.find` (~1.7 GB/s a
    mark; a regex alternation of them went ~8x slower): no Python code runs for a line
    without one. A line longer than `MAX_LINE_BYTES` comes as pieces, as `fast_lines`
    gives it (which do not decode).

    >>> import io
    >>> list(marked_lines(io.BytesIO(b'{"a": 1}\\n{"b": "x"}\\n{"c": 2}'), [b'"c"', b'"b"']))
    [b'{"b": "x"}\\n', b'{"c": 2}']
    """
    carry = b""
    while True:
        block = f.read(MARK_BLOCK)
        data = carry + block
        # (whole lines only, but at the end, or when a line outgrows what one may be)
        cut = len(data) if not block or len(data) > MAX_LINE_BYTES else data.rfind(b"\n") + 1
        carry = data[cut:]
        starts: set[int] = set()
        for mark in marks:
            at = data.find(mark, 0, cut)
            while at >= 0:
                start = data.rfind(b"\n", 0, at) + 1
                starts.add(start)
                end = data.find(b"\n", at, cut)  # (the next mark is past this line)
                at = -1 if end < 0 else data.find(mark, end, cut)
        for start in sorted(starts):
            end = data.find(b"\n", start, cut)
            yield data[start : cut if end < 0 else end + 1]
        if not block:
            return


def _small(f: IO[bytes]) -> bool:
    """Whether an open file is no longer than one line may be (then no line is too long)."""
    if type(f) is HeldFile:  # (it has no descriptor to ask)
        return HOLD_BYTES <= MAX_LINE_BYTES
    try:
        return os.fstat(f.fileno()).st_size <= MAX_LINE_BYTES
    except (OSError, ValueError):  # not a real file: read it line by bounded line
        return False


def strip_bom(data: bytes) -> bytes:
    """`data` without a leading UTF-8 byte-order mark (editors on Windows add one)."""
    return data[3:] if data.startswith(BOM) else data


def decode_text(data: bytes) -> str:
    """Text for positions and source lines; invalid UTF-8 must not hide the real error."""
    return data.decode("utf-8", errors="replace")


def utf8_text(data: bytes, path: str) -> str:
    """A whole file's text to read (JSONL or SSE read whole), or the `RunError` naming the
    first byte that is not UTF-8, as a cassette's reader names it (a replaced byte would
    be read as if it were there: a model, a tool name, an answer misspelt silently)."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        bad = not_utf8_error(data, path)
        assert bad is not None
        raise bad from None


#: The breaks `str.splitlines` ends a line at that a valid line of JSON text holds, inside
#: a string (`json.dumps(…, ensure_ascii=False)` and JavaScript's `JSON.stringify` write
#: them as they are). (Its other breaks, `\x0b`, `\x0c`, `\x1c`-`\x1e`, are in no valid
#: line at all, raw: where it ends a line at one, that line is an error either way.)
_TEXT_BREAKS = ("\x85", "\u2028", "\u2029")
#: The line breaks of JSON lines and of server-sent events: LF, CRLF, and a lone CR.
_LINE_BREAK = regex("\r\n|\r|\n")


def text_lines(text: str) -> list[str]:
    """The lines of a trace's text (JSONL, or server-sent events), ended at LF, CRLF or a
    lone CR only: `str.splitlines` also ends one at U+2028 inside a JSON string, and the
    line was then invalid JSON (`unexpected end of data`).

    >>> text_lines("a" + chr(0x2028) + "b" + chr(13) + chr(10) + "c" + chr(13) + "d")
    ['a\\u2028b', 'c', 'd']
    """
    # (`isascii` reads a flag the text keeps, and each `in` is a search at C speed: nearly
    # every file holds none, and `splitlines` is quicker than a regex's split)
    if text.isascii() or not any(mark in text for mark in _TEXT_BREAKS):
        return text.splitlines()
    lines = _LINE_BREAK.split(text)
    if lines and not lines[-1]:  # (as splitlines: a last line break ends a line)
        lines.pop()
    return lines


def lone_carriage_return(path: str, lineno: int, shown: str, column: int) -> RunError | None:
    """The error of line `lineno` of JSON lines (`shown`, its text without its line break)
    that the decoder refused at `column` after a lone CR in it: the file's lines end with
    old Mac line endings, which the readers of JSON lines do not end a line at (a
    cassette's whole text was its header line, `unexpected content after document`);
    else None.

    >>> lone_carriage_return("c.jsonl", 1, '{"a": 1}' + chr(13) + '{"b": 2}', 9).column
    9
    """
    at = shown.find("\r")
    if at < 0 or column <= at:
        return None
    return RunError(
        f"line {lineno} holds a lone carriage return (CR, an old Mac line ending): lines of "
        "JSON end at LF or CRLF only",
        path=path,
        line=lineno,
        column=at + 1,
        hint="save the file with LF or CRLF line endings",
        source_line=shown[:at],
    )


def decode_document(data: bytes, path: str, *, hint: str | None = None) -> Any:
    """One JSON document from a file's bytes, or a `RunError` at the decoder's position.

    orjson reports 1-based line and code-point column like the stdlib decoder, so the
    position goes straight into the error.
    """
    if not data.strip():
        raise RunError("empty file", path=path, hint=hint or "a run file holds one JSON value")
    try:
        return mended_loads(data)
    except orjson.JSONDecodeError as exc:
        raise json_error(exc, data, path, hint=hint) from None


#: The first two bytes of a gzip file (RFC 1952, ID1 and ID2).
GZIP_MAGIC = b"\x1f\x8b"


def gzip_error(data: bytes, path: str, first_line: int = 1) -> RunError | None:
    """The `RunError` for a gzip-compressed file (`data` from its line `first_line`: only
    line 1 can start it), saying how to decompress it; None for any other bytes."""
    if first_line != 1 or not data.startswith(GZIP_MAGIC):
        return None
    return RunError(
        "this file is gzip-compressed, not JSON text",
        path=path,
        line=1,
        column=1,
        hint=_gunzip_hint(os.path.basename(path)),
    )


def _gunzip_hint(name: str) -> str:
    """How to decompress the gzip file `name` into a file evaldsl reads.

    >>> _gunzip_hint("run.jsonl.gz")
    'decompress it first: `gunzip -k run.jsonl.gz` writes run.jsonl, the file to name'
    """
    if name.endswith(".gz") and len(name) > 3:
        return f"decompress it first: `gunzip -k {name}` writes {name[:-3]}, the file to name"
    return f"decompress it first (`gunzip -c {name} > trace.json`) and name the file written"


def not_utf8_error(
    data: bytes, path: str, first_line: int = 1, what: str = "this file"
) -> RunError | None:
    """The `RunError` for bytes that are not UTF-8 text, at the line and column of the first
    byte that is not (`data` starting at line `first_line` of the file); None when they are.
    (orjson's words for them, "str is not valid UTF-8: surrogates not allowed", say neither
    what is wrong nor where.)

    >>> not_utf8_error(bytes([91, 0xFF, 93]), "t.json").message
    'this file is not UTF-8 text: byte 0xff is not UTF-8'

    A gzip-compressed file (its first bytes 1f 8b) is said to be one, with how to
    decompress it: evaldsl reads traces as text and does not decompress them itself.
    """
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as bad:
        if (gzipped := gzip_error(data, path, first_line)) is not None:
            return gzipped
        d = not_utf8(path, data, bad, what)
        return RunError(
            d.message,
            path=path,
            line=d.line + first_line - 1,
            column=d.column,
            hint="a trace is JSON text, saved as UTF-8",
            source_line=d.source_line,
        )
    return None


def undecodable_error(
    exc: orjson.JSONDecodeError, data: bytes, path: str, first_line: int = 1
) -> RunError | None:
    """The `RunError` for bytes the decoder refused that are not JSON text at all (`data`
    from line `first_line` of the file): a gzip file, or bytes that are not UTF-8; None
    for any other decoder error (then invalid JSON, at its place)."""
    if (gzipped := gzip_error(data, path, first_line)) is not None:
        return gzipped
    return not_utf8_error(data, path, first_line) if "UTF-8" in exc.msg else None


def json_error(
    exc: orjson.JSONDecodeError, data: bytes, path: str, *, hint: str | None = None
) -> RunError:
    """The `RunError` for a decoder error over a whole file's bytes."""
    if (bad := undecodable_error(exc, data, path)) is not None:
        return bad
    source = Source(decode_text(data), path)
    return RunError(
        f"invalid JSON on line {exc.lineno}: {exc.msg}",
        path=path,
        line=exc.lineno,
        column=exc.colno,
        hint=hint,
        source_line=source.line_text(exc.lineno),
    )


# --- where things are in a JSON text (error path only) -------------------------------------

_decoder = json.JSONDecoder()
_WS = " \t\r\n"


def _skip_ws(text: str, i: int) -> int:
    while i < len(text) and text[i] in _WS:
        i += 1
    return i


def object_members(text: str, start: int) -> dict[str, tuple[int, int]]:
    """Each direct key of the object at `start`, with the offsets of the key and its value.

    The stdlib decoder's `raw_decode` skips each value exactly, so nested objects that use
    the same key names (`memory.status`) never shadow the object's own keys.
    """
    found: dict[str, tuple[int, int]] = {}
    i = _skip_ws(text, start)
    if not text.startswith("{", i):
        return found
    i = _skip_ws(text, i + 1)
    try:
        while i < len(text) and text[i] != "}":
            key, after_key = _decoder.raw_decode(text, i)
            colon = _skip_ws(text, after_key)
            value_at = _skip_ws(text, colon + 1)
            _, after_value = _decoder.raw_decode(text, value_at)
            if isinstance(key, str):
                found.setdefault(key, (i, value_at))
            i = _skip_ws(text, after_value)
            if text.startswith(",", i):
                i = _skip_ws(text, i + 1)
    except ValueError:
        pass  # a position is a courtesy; the document itself already decoded
    return found


def array_elements(text: str, start: int) -> list[int]:
    """The offset of each element of the array at `start`."""
    offsets: list[int] = []
    i = _skip_ws(text, start)
    if not text.startswith("[", i):
        return offsets
    i = _skip_ws(text, i + 1)
    try:
        while i < len(text) and text[i] != "]":
            offsets.append(i)
            _, after = _decoder.raw_decode(text, i)
            i = _skip_ws(text, after)
            if text.startswith(",", i):
                i = _skip_ws(text, i + 1)
    except ValueError:
        pass
    return offsets


def locate(text: str, steps: Sequence[str | int], *, at_key: bool = False) -> int | None:
    """The offset of the value reached by `steps` (keys and indices) from the root.

    With `at_key`, the offset of the last key instead (where a field's name is written).
    `None` when a step is not found.

    >>> locate('{"a": [1, {"b": 2}]}', ["a", 1, "b"])
    16
    """
    at = _skip_ws(text, 0)
    for n, step in enumerate(steps):
        if isinstance(step, int):
            elements = array_elements(text, at)
            if not 0 <= step < len(elements):
                return None
            at = elements[step]
            continue
        members = object_members(text, at)
        if step not in members:
            return None
        key_at, at = members[step]
        if at_key and n == len(steps) - 1:
            return key_at
    return at
