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

import mmap
import os
from typing import Any

import orjson

from evaldsl.runs.cassette import EventStream, first_line
from evaldsl.runs.events import tool_call_name
from evaldsl.runs.model import RunError, decode_text, os_error

#: How much of a recording `check` reads for tool names.
HEAD_BYTES = 64 * 1024

_MARKERS = (b"tool.call", b"mcp.call")


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
        return _occurs_after(self.path, self.offset, orjson.dumps(name))

    def __reduce__(self) -> Any:  # pickled with its file, not as a plain frozenset
        return (PartialNames, (frozenset(self), self.path, self.offset))


def _occurs_after(path: str, offset: int, needle: bytes) -> bool:
    try:
        with open(path, "rb") as f:
            if os.fstat(f.fileno()).st_size <= offset:
                return False
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
                return data.find(needle, offset) >= 0
    except (OSError, ValueError):
        return True  # cannot look: assume it occurs, so no warning is made up


def recorded_tool_names(stream: EventStream, limit: int = HEAD_BYTES) -> frozenset[str]:
    """The tool names the first `limit` bytes of a streamed recording call (exact when
    the file is no longer; else `PartialNames`). Lines that cannot name a tool call are
    not decoded; a line cut by the limit is not read (a later search finds its name)."""
    names: set[str] = set()
    try:
        f = open(stream.path, "rb")  # noqa: SIM115 - closed below
    except OSError as exc:
        raise os_error(stream.path, exc) from None
    with f:
        after = first_line(f)[1] if stream.header is not None else 0  # the header line
        read = f.tell()
        for lineno, raw in enumerate(f, after + 1):
            read += len(raw)
            if read > limit:
                return PartialNames(names, stream.path, read - len(raw))
            if not any(m in raw for m in _MARKERS):
                continue
            try:
                event = orjson.loads(raw.removeprefix(b"\xef\xbb\xbf"))
            except orjson.JSONDecodeError as exc:
                raise RunError(
                    f"invalid JSON on line {lineno}: {exc.msg}",
                    path=stream.path,
                    line=lineno,
                    column=exc.colno,
                    hint="each line after the header must be one JSON object",
                    source_line=decode_text(raw).rstrip("\r\n"),
                ) from None
            if isinstance(event, dict):
                name = tool_call_name(event)
                if name is not None:
                    names.add(name)
    return frozenset(names)
