"""The tool names a streamed recording calls, read from a bounded head.

Takes an `EventStream` (a traceplay cassette or a headerless JSONL of events) and gives
the names its `tool.call` and `mcp.call` events call, for the checker's "this tool never
occurs in the recording" warning and its did-you-mean. `check` must not read a large
recording twice (once now, once when it runs), so only the first `HEAD_BYTES` are read:
a file that fits is read whole and the names are exact; for a larger one the names are
`PartialNames`, which answer `name in names` for a name not seen in the head by looking
for its JSON text in the rest of the file (a byte search, no decoding: ~100x cheaper than
a pass), so a warning is never given for a tool the file does call. Did-you-mean
suggestions then come from the head's names.
"""

from __future__ import annotations

import json
import mmap
import os
from collections.abc import Iterator
from typing import Any

import orjson

from evaldsl.runs.cassette import EventStream, first_line, invalid_line
from evaldsl.runs.events import tool_call_name
from evaldsl.runs.heldfiles import HeldFile
from evaldsl.runs.model import RunError, decode_text, open_file
from evaldsl.runs.surrogates import mended_loads

#: How much of a recording `check` reads for tool names.
HEAD_BYTES = 64 * 1024


def tool_lines(block: bytes) -> Iterator[tuple[int, int]]:
    """Where the lines of `block` that mention a tool call (`tool.call`, `mcp.call`)
    begin and end.

    Linear, and at C speed: `.call` is found by a byte search (`bytes.find`), and what
    precedes it is compared with `tool` and `mcp`; a regex for the two words,
    `tool\\.call|mcp\\.call`, has no literal prefix to search for and takes ~6x as long
    (most of reading tool names from 120 cassettes' heads).
    """
    pos = 0
    find = block.find
    while True:
        dot = find(b".call", pos)
        if dot < 0:
            return
        if block.endswith(b"tool", 0, dot) or block.endswith(b"mcp", 0, dot):
            begin = block.rfind(b"\n", 0, dot) + 1
            end = find(b"\n", dot + 5)
            end = len(block) if end < 0 else end
            yield begin, end
            pos = end
        else:
            pos = dot + 5


class PartialNames(frozenset[str]):
    """Tool names read from a file's head; membership also searches the rest of the file."""

    path: str
    offset: int

    def __new__(cls, names: Any, path: str, offset: int) -> PartialNames:
        made = super().__new__(cls, names)
        made.path, made.offset = path, offset
        return made

    def __contains__(self, name: object) -> bool:
        if frozenset.__contains__(self, name):
            return True
        if not isinstance(name, str):
            return False
        return _occurs_after(self.path, self.offset, written_as(name))

    def __reduce__(self) -> Any:  # pickled with its file, not as a plain frozenset
        return (PartialNames, (frozenset(self), self.path, self.offset))


#: The characters of a name every JSON writer writes as they are (Python's `ensure_ascii`
#: escapes what is past ASCII, Go's encoder `<`, `>` and `&`, PHP's `/`: none of these).
_KEPT_AS_WRITTEN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.:@ ")


def _kept_past_ascii(c: str) -> bool:
    """A character past ASCII that a writer keeps as UTF-8 or escapes as `\\uXXXX`; not
    half of a surrogate pair, which UTF-8 cannot hold (a name from `"\\ud800"` in a
    suite: no writer writes it one way, and orjson refused to write it at all)."""
    return not c.isascii() and not "\ud800" <= c <= "\udfff"


def written_as(name: str) -> tuple[bytes, ...]:
    r"""What to look for in a recording's bytes to tell whether it may name the tool
    `name`: its JSON text, where every writer writes it alike (`"get_weather"`); with
    letters past ASCII, that text as written by writers that keep them and by those
    that escape them (`"m\u00e9t\u00e9o"`, in either case of hex); each of these also
    as it is inside JSON text held in a string (`\"get_weather\"`: OTel GenAI's messages,
    a call's arguments). A name with other characters a writer may escape (`/`, `<`, a
    quote): its longest run of characters none escapes, found anywhere. So the search
    may say a tool occurs where it does not (no warning then), never the other way.

    >>> written_as("get_weather")
    (b'"get_weather"', b'\\"get_weather\\"')
    >>> len(written_as("météo")), written_as("météo")[2]
    (7, b'"m\\u00E9t\\u00E9o"')
    >>> written_as("fs/read_file")
    (b'read_file',)
    """
    if not all(c in _KEPT_AS_WRITTEN or _kept_past_ascii(c) for c in name):
        runs = "".join(c if c in _KEPT_AS_WRITTEN else "\0" for c in name).split("\0")
        # (a name of nothing a writer keeps as it is: any file may hold it, no warning)
        return (max(runs, key=len).encode(),)
    texts = [orjson.dumps(name).decode()]
    if not name.isascii():
        escaped = json.dumps(name)  # (`ensure_ascii`: lower-case hex, surrogate pairs)
        # (the name holds no backslash of its own: each `\\u` is an escape's)
        first, *rest = escaped.split("\\u")
        texts += [escaped, first + "".join("\\u" + e[:4].upper() + e[4:] for e in rest)]
    # inside JSON text in a string: its quotes (and backslashes) escaped once more; text
    # kept as UTF-8 inside and escaped by the outer writer is `json.dumps` of it
    inner = [json.dumps(text, ensure_ascii=False)[1:-1] for text in texts]
    if not name.isascii():
        inner.append(json.dumps(texts[0], ensure_ascii=True)[1:-1])
    return tuple(dict.fromkeys(t.encode() for t in (*texts, *inner)))


#: How much of a large recording's end is read for its last line.
TAIL_BYTES = 64 * 1024


def _check_last_line(f: Any, path: str, whole: bytes | None, after: int) -> None:
    """A recording cut in the middle of a line (a writer that died, a copy cut short) is
    the run's error: `check` says so now, where the head alone looked fine. Only a last
    line without its newline is decoded (`whole`: the events' text when the head is all
    of it; else the file's end is read); one longer than `TAIL_BYTES` is left to the run.
    """
    if whole is None:
        size = os.fstat(f.fileno()).st_size if type(f) is not HeldFile else len(f.getvalue())
        f.seek(size - 1)
        if f.read(1) in (b"\n", b""):  # (most files: one byte read, not the tail)
            return
        f.seek(max(0, size - TAIL_BYTES))
        tail = f.read(TAIL_BYTES)
        cut = tail.rfind(b"\n")
        if cut < 0:
            return
    else:
        tail, cut = whole, whole.rfind(b"\n")
    last = tail[cut + 1 :]
    if not last.strip():
        return
    try:
        mended_loads(last.removeprefix(b"\xef\xbb\xbf"))
    except orjson.JSONDecodeError as exc:
        if whole is not None:
            lineno = after + 1 + whole.count(b"\n")
        else:
            f.seek(0)
            lineno = 1 + sum(block.count(b"\n") for block in iter(lambda: f.read(1 << 20), b""))
        raise invalid_line(
            path,
            lineno,
            exc,
            decode_text(last).rstrip("\r\n"),
            "the file ends in the middle of this line: was it cut short while it was "
            "written or copied? Re-record it, or remove the partial line",
        ) from None


def _occurs_after(path: str, offset: int, needles: tuple[bytes, ...]) -> bool:
    try:
        with open_file(path) as f:  # a regular file only: never waits on a FIFO
            if type(f) is HeldFile:  # (read whole already: no descriptor to map)
                data = f.getvalue()
                return any(data.find(needle, offset) >= 0 for needle in needles)
            if os.fstat(f.fileno()).st_size <= offset:
                return False
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
                return any(mapped.find(needle, offset) >= 0 for needle in needles)
    except (OSError, ValueError, RunError):
        return True  # cannot look: assume it occurs, so no warning is made up


def recorded_tool_names(stream: EventStream, limit: int = HEAD_BYTES) -> frozenset[str]:
    """The tool names the first `limit` bytes of a streamed recording call (exact when
    the file is no longer; else `PartialNames`). The head is read as one block and only
    its lines that mention a tool call are found (`tool_lines`) and decoded; a line cut
    by the limit is left to the search of the rest."""
    with open_file(stream.path) as f:
        after = first_line(f, stream.path)[1] if stream.header is not None else 0
        start = f.tell()
        head = f.read(limit)
        more = bool(f.read(1))
        _check_last_line(f, stream.path, head if not more else None, after)
    if more:
        head = head[: head.rfind(b"\n") + 1]
    names = head_names(head)
    if names is None:  # (a tool line orjson refuses: read as the run reads it, or its error)
        names = _mended_names(head, stream.path, after)
    if more:
        return PartialNames(names, stream.path, start + len(head))
    return frozenset(names)


def head_names(head: bytes) -> set[str] | None:
    r"""The names the tool lines of `head` call, each line decoded by `orjson.loads`
    alone; `None` at the first line it refuses (a lone surrogate escape, a byte-order
    mark, text that is not JSON), which `_mended_names` then reads as before.

    Why alone: what `mended_loads` adds to `orjson.loads` for a line it takes is the
    exact value of an integer past 64 bits (`bigints.exact`), and a name is text, never
    a number, so it reads the same names (`tool_call_name` gives text only); looking
    each line through for such integers (`may_round`) and the calls around it were
    ~40% of reading a head's names.

    >>> sorted(head_names(b'{"type": "tool.call", "name": "a", "n": 18446744073709551617}\n'))
    ['a']
    >>> head_names(b'{"type": "tool.call", "name": "\\ud83d"}\n') is None
    True
    """
    names: set[str] = set()
    loads, refused = orjson.loads, orjson.JSONDecodeError
    for begin, end in tool_lines(head):
        try:
            event = loads(head[begin:end])
        except refused:
            return None
        if type(event) is dict:
            name = tool_call_name(event)
            if name is not None:
                names.add(name)
    return names


def _mended_names(head: bytes, path: str, after: int) -> set[str]:
    """The names the tool lines of `head` call, each line read as the run reads it
    (`mended_loads`: a lone surrogate escape as U+FFFD, a byte-order mark left out); a
    line that is still not JSON is the run's error, at its line (`after`: the lines
    before the head)."""
    names: set[str] = set()
    for begin, end in tool_lines(head):
        raw = head[begin:end]
        try:
            event = mended_loads(raw.removeprefix(b"\xef\xbb\xbf"))
        except orjson.JSONDecodeError as exc:
            lineno = after + 1 + head.count(b"\n", 0, begin)
            raise invalid_line(path, lineno, exc, decode_text(raw).rstrip("\r\n")) from None
        if isinstance(event, dict):
            name = tool_call_name(event)
            if name is not None:
                names.add(name)
    return names
