"""traceplay cassettes (v1, JSONL) and other event-per-line files.

Takes the path of a JSONL file and gives an `EventStream`: a re-iterable that reads the file
again on each pass and yields one decoded event dict per line, so a million-line cassette
never sits in memory. `load_cassette` checks the header eagerly (a bad header fails at load
time, an event line only when the stream reaches it) and gives a `Run`; `read_header` gives
the header object; `scan_cassette_tools` gives the tool names a cassette calls.

Line 1 of a cassette is its header, `{"cassette": "traceplay", "version": 1, ...}` (seed-
semantics §3.2). A UTF-8 BOM is dropped, CRLF line ends are fine and blank lines are
skipped. Unlike traceplay, errors name the physical 1-based line of the file (blank lines
counted), which is the line an editor jumps to.
"""

from __future__ import annotations

import contextlib
import itertools
import os
from collections.abc import Callable, Generator, Iterator
from typing import IO, Any

import orjson

from evaldsl.language.jsjson import js_json
from evaldsl.runs import bigints
from evaldsl.runs.model import (
    Run,
    RunError,
    decode_text,
    describe,
    fast_lines,
    file_lines,
    lone_carriage_return,
    open_file,
    os_error,
    strip_bom,
    undecodable_error,
)
from evaldsl.runs.surrogates import mended_loads

SUPPORTED_VERSIONS = (1,)

HEADER_EXAMPLE = '{"cassette": "traceplay", "version": 1}'
#: The hint of a line that is no JSON object, in a cassette or any JSONL of events (one
#: without a header too: "after the header" misled there).
LINE_HINT = "each line must be one JSON object (after a cassette's header line, if any)"


class EventStream:
    """The events of a JSONL file, decoded one line at a time on every pass.

    With `header=True` (a cassette) the first non-blank line is the header and is checked
    again on each pass; with `header=False` every non-blank line is an event.
    Iterating raises `RunError` at the first line that is not a JSON object.
    """

    __slots__ = ("_has_header", "_header", "path")

    def __init__(self, path: str | os.PathLike[str], *, header: bool = True) -> None:
        self.path = os.fspath(path)
        self._has_header = header
        self._header: dict[str, Any] | None = None

    @property
    def header(self) -> dict[str, Any] | None:
        """The cassette header (read on first use), or `None` for a file without one."""
        if self._has_header and self._header is None:
            self._header = read_header(self.path)
        return self._header

    def __repr__(self) -> str:
        return f"EventStream({self.path!r}, header={self._has_header})"

    def first(self) -> dict[str, Any] | None:
        """The first event, or `None` when there is none; a bad first line raises now.

        Lets a loader fail at load time on a file that is not events at all.
        """
        events = self.__iter__()
        try:
            return next(events, None)
        finally:
            events.close()  # release the file now, not when the generator is collected

    @contextlib.contextmanager
    def fast(self) -> Iterator[Iterator[Any]]:
        """The decoded lines as a C-level iterator (`map(orjson.loads, …)` over the lines
        that are not blank): no Python frame runs per event, which matters at a million
        events. It does not explain errors: a line that is not JSON raises orjson's error
        and a line that is not an object passes through; on either, iterate the stream
        itself (`for _ in stream`) for the `RunError` naming the line.
        """
        with self.body() as f:
            # (a file that may hold an integer past 64 bits, read through once more:
            # decoded line by line, its integers exact)
            loads = bigints.loads if bigints.file_may_round(f) else orjson.loads
            yield map(loads, itertools.filterfalse(bytes.isspace, fast_lines(f)))

    @contextlib.contextmanager
    def body(self) -> Iterator[IO[bytes]]:
        """The file, open at its first event line: after the header (checked again) of a
        cassette, after a UTF-8 BOM of a file without one."""
        path = self.path
        f = open_file(path)
        try:
            if self._has_header:
                self._header, _ = _read_header_from(f, path)
            elif f.read(3) != b"\xef\xbb\xbf":
                f.seek(0)
            yield f
        finally:
            f.close()

    def __iter__(self) -> Generator[dict[str, Any], None, None]:
        path = self.path
        f = open_file(path)
        try:
            lineno = 0
            if self._has_header:
                header, lineno = _read_header_from(f, path)
                self._header = header
            yield from _events(f, path, lineno)
        finally:
            f.close()

    def numbered(self) -> Generator[tuple[int, bytes, dict[str, Any]], None, None]:
        """Each event with its line's number and text, to name an event a pass could not
        read (the error path: `__iter__`'s loop stays free of the bookkeeping). A line
        that is not a JSON object is left out: iterating names those."""
        path = self.path
        with open_file(path) as f:
            after = _read_header_from(f, path)[1] if self._has_header else 0
            for lineno, raw in file_lines(f, path, after):
                line = strip_bom(raw) if lineno == 1 else raw
                try:
                    event = mended_loads(line)
                except orjson.JSONDecodeError:
                    continue
                if type(event) is dict:
                    yield lineno, line, event


#: The lines decoded by `bigints.loads` (each line's text looked through for a long
#: integer) before the rest of the file is looked through at once: a reader that stops
#: at its first events (the first timestamp, read again after a pass) never scans the
#: whole file for them (a 58 MiB cassette's scan was 74 ms of a 260 ms check).
HEAD_LINES = 8


def _events(f: IO[bytes], path: str, after: int) -> Iterator[dict[str, Any]]:
    """Decode the lines of `f` after physical line `after` (0: from the start), an
    integer past 64 bits exact (`bigints`)."""
    lines = file_lines(f, path, after)
    return itertools.chain.from_iterable(_parts(f, lines, path, after))


def _parts(
    f: IO[bytes], lines: Iterator[tuple[int, bytes]], path: str, after: int
) -> Iterator[Iterator[dict[str, Any]]]:
    """The head's events, then the rest's, decoded by orjson alone when the rest holds
    no run of digits that may round (looked through once the head has been read)."""
    yield _decoded(itertools.islice(lines, HEAD_LINES), path, after, bigints.loads)
    yield _decoded(lines, path, after, bigints.loads if bigints.file_may_round(f) else orjson.loads)


def _decoded(
    lines: Iterator[tuple[int, bytes]], path: str, after: int, loads: Callable[[bytes], Any]
) -> Iterator[dict[str, Any]]:
    """Decode `lines` (numbered, of a file whose events start after line `after`) by
    `loads`.

    The hot loop does one `loads` and one type test per line; blank lines are rare,
    so they are only recognised once the decoder has rejected a line.
    """
    first = after == 0  # no header consumed: the first line may still carry a BOM
    for lineno, raw in lines:
        try:
            event = loads(raw)
        except orjson.JSONDecodeError as exc:
            if first and lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = strip_bom(raw)
                if raw.isspace() or not raw:
                    continue
                try:
                    event = mended_loads(raw)
                except orjson.JSONDecodeError as again:
                    raise _line_error(path, lineno, raw, again) from None
            elif raw.isspace():
                continue
            else:
                try:
                    event = mended_loads(raw)  # (a lone surrogate escape: see surrogates)
                except orjson.JSONDecodeError:
                    raise _line_error(path, lineno, raw, exc) from None
        if type(event) is not dict:
            raise _not_object(path, lineno, raw, event)
        yield event


def invalid_line(
    path: str, lineno: int, exc: orjson.JSONDecodeError, shown: str, hint: str = LINE_HINT
) -> RunError:
    """The error of line `lineno` of a file of JSON lines that is no JSON, where the
    decoder stopped (`shown`: the line as its message shows it)."""
    if (lone := lone_carriage_return(path, lineno, shown, exc.colno)) is not None:
        return lone
    return RunError(
        f"invalid JSON on line {lineno}: {exc.msg}",
        path=path,
        line=lineno,
        column=exc.colno,
        hint=hint,
        source_line=shown,
    )


def not_event_line(
    path: str, lineno: int, value: Any, shown: str = "", column: int = 1
) -> RunError:
    """The error of line `lineno` of a file of events whose JSON `value` is no object."""
    return RunError(
        f"line {lineno} is {describe(value)}, not an event object",
        path=path,
        line=lineno,
        column=column,
        hint=LINE_HINT,
        source_line=shown,
    )


def _line_error(path: str, lineno: int, raw: bytes, exc: orjson.JSONDecodeError) -> RunError:
    if (bad := undecodable_error(exc, raw, path, lineno)) is not None:
        return bad
    return invalid_line(path, lineno, exc, decode_text(raw).rstrip("\r\n"))


def _not_object(path: str, lineno: int, raw: bytes, value: Any) -> RunError:
    column = len(raw) - len(raw.lstrip()) + 1
    return not_event_line(path, lineno, value, decode_text(raw).rstrip("\r\n"), column)


# --- the header ----------------------------------------------------------------------------


def read_header(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The header object of a traceplay cassette, checked; `RunError` when it is not one.

    >>> read_header("tests/fixtures/traceplay/demo/cassette.example.jsonl")["project"]
    'demo'
    """
    p = os.fspath(path)
    try:
        with open_file(p) as f:
            return _read_header_from(f, p)[0]
    except OSError as exc:
        raise os_error(p, exc) from None


def first_line(f: IO[bytes], path: str) -> tuple[bytes, int]:
    """The first non-blank line of a file (BOM removed) and its physical line number.

    `(b"", 0)` for a file with no such line; a line past the size limit is a `RunError`.
    """
    for lineno, raw in file_lines(f, path):
        line = strip_bom(raw) if lineno == 1 else raw
        if line.strip():
            return line, lineno
    return b"", 0


def _read_header_from(f: IO[bytes], path: str) -> tuple[dict[str, Any], int]:
    raw, lineno = first_line(f, path)
    if not lineno:
        raise RunError(
            "empty cassette",
            path=path,
            hint=f"a traceplay cassette starts with a header line like {HEADER_EXAMPLE}",
        )
    return check_header(raw, lineno, path), lineno


def check_header(raw: bytes, lineno: int, path: str) -> dict[str, Any]:
    """The header decoded from line `lineno`, or the `RunError` that says what is wrong."""
    text = decode_text(raw).rstrip("\r\n")

    def error(message: str, key: str | None = None, hint: str | None = None) -> RunError:
        column = text.find(f'"{key}"') + 1 if key else 0
        return RunError(
            message,
            path=path,
            line=lineno,
            column=column or 1,
            hint=hint or f"a traceplay cassette starts with a header line like {HEADER_EXAMPLE}",
            source_line=text,
        )

    try:
        header = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        if (bad := undecodable_error(exc, raw, path, lineno)) is not None:
            raise bad from None
        if (lone := lone_carriage_return(path, lineno, text, exc.colno)) is not None:
            raise lone from None
        raise RunError(
            f"invalid cassette header on line {lineno}: {exc.msg}",
            path=path,
            line=lineno,
            column=exc.colno,
            hint=f"a traceplay cassette starts with a header line like {HEADER_EXAMPLE}",
            source_line=text,
        ) from None
    marker = header.get("cassette") if isinstance(header, dict) else None
    if not isinstance(header, dict) or marker != "traceplay":
        hint = None
        if marker is not None:
            hint = f"its marker is {js_json(marker)}; expected {HEADER_EXAMPLE}"
        raise error(
            f'not a traceplay cassette (line {lineno} has no "cassette": "traceplay" marker)',
            "cassette" if marker is not None else None,
            hint,
        )
    version = header.get("version")
    if isinstance(version, bool) or not isinstance(version, int | float):
        found = "no" if version is None else f"a non-numeric ({js_json(version)})"
        raise error(
            f'cassette header has {found} "version"', "version" if version is not None else None
        )
    if version not in SUPPORTED_VERSIONS:
        raise error(
            f"unsupported cassette version {js_json(version)} (only version 1 is supported)",
            "version",
            "re-record the cassette with a traceplay release that writes version 1",
        )
    return header


# --- loading -------------------------------------------------------------------------------


def load_cassette(path: str | os.PathLike[str], *, first: tuple[bytes, int] | None = None) -> Run:
    """A traceplay cassette as a `Run`: the header is checked now, the events streamed later.
    `first`: the file's first line and its number (`first_line`'s), when the caller read
    it already (the header is checked from it, the file not opened again).

    >>> run = load_cassette("tests/fixtures/traceplay/demo/cassette.example.jsonl")
    >>> run.format, sum(1 for _ in run.events or ())
    ('traceplay', 5)
    """
    p = os.fspath(path)
    stream = EventStream(p)
    if first is not None:
        stream._header = check_header(*first, p)
    else:
        stream._header = read_header(p)
    return Run(events=stream, path=p, format="traceplay")


def scan_cassette_tools(stream: EventStream) -> frozenset[str]:
    """The names of the tools a cassette's `tool.call` events call (a did-you-mean list).

    >>> path = "tests/fixtures/traceplay/multi-tool/cassette.multi-tool.jsonl"
    >>> sorted(scan_cassette_tools(EventStream(path)))
    ['get_crypto_price', 'get_weather']
    """
    # Only lines that mention a tool call are decoded: the substring test is ~50x cheaper
    # than decoding, and an event type written with escapes ("tool\u002ecall") is not worth
    # the cost for a did-you-mean list.
    names: set[str] = set()
    with open_file(stream.path) as f:
        _, header_line = _read_header_from(f, stream.path)
        for lineno, raw in file_lines(f, stream.path, header_line):
            if b"tool.call" not in raw:
                continue
            try:
                event = mended_loads(raw)
            except orjson.JSONDecodeError as exc:
                raise _line_error(stream.path, lineno, raw, exc) from None
            if isinstance(event, dict) and event.get("type") == "tool.call":
                name = event.get("name")
                if isinstance(name, str):
                    names.add(name)
    return frozenset(names)
