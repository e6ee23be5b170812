"""`decode.line_chunks` against the reading it replaced: the chunks a file is cut into (whole
lines, each chunk its first `CHUNK` bytes and the rest of the line its last byte is on),
where a line too long is refused, and a chunk holding a refused sequence (the OTel
reader's line breaks), on random files and small chunk sizes, limits and blocks read
ahead, from a file on disk and from bytes held in memory (`model.open_file` gives
either)."""

from __future__ import annotations

import io
import tempfile
from typing import Any
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from evaldsl.runs import decode
from evaldsl.runs.decode import Undecodable, line_chunks


def _joined_chunks(f: Any, chunk: int, limit: int, refused: tuple[bytes, ...]) -> list[bytes] | str:
    """The chunks as `line_chunks` made them before: `chunk` bytes read, then the rest of
    the last line read and added (`"too long"`: that rest was longer than `limit`); a
    chunk holding one of `refused` is `"refused"` (as `otlpdecode` looked for them)."""
    chunks = []
    while block := f.read(chunk):
        if not block.endswith(b"\n"):
            rest = f.readline(limit + 1)
            if len(rest) > limit:
                return "too long"
            block += rest
        if any(b in block for b in refused):
            return "refused"
        chunks.append(block)
    return chunks


def _chunks(
    f: Any, chunk: int, limit: int, ahead: int, refused: tuple[bytes, ...]
) -> list[bytes] | str:
    with (
        mock.patch.object(decode, "CHUNK", chunk),
        mock.patch.object(decode, "MAX_LINE_BYTES", limit),
        mock.patch.object(decode, "_AHEAD", ahead),
    ):
        try:
            return list(line_chunks(f, refused))
        except Undecodable as why:
            return "refused" if "refused" in str(why) else "too long"


_LINES = st.lists(
    st.text(alphabet="ab{}\u0085\u2028\u00e9\u20ac", max_size=12).map(str.encode), max_size=12
)
#: What the OTel reader refuses inside a line (U+0085, U+2028, U+2029), or nothing.
_REFUSED = st.sampled_from([(), tuple(c.encode() for c in "\u0085\u2028\u2029")])


@settings(max_examples=400, deadline=None)
@given(_LINES, st.booleans(), st.integers(1, 20), st.integers(0, 15), st.integers(1, 8), _REFUSED)
def test_chunks_are_cut_where_they_were(
    lines: list[bytes],
    last_newline: bool,
    chunk: int,
    limit: int,
    ahead: int,
    refused: tuple[bytes, ...],
) -> None:
    data = b"\n".join(lines) + (b"\n" if last_newline and lines else b"")
    expected = _joined_chunks(io.BytesIO(data), chunk, limit, refused)
    assert _chunks(io.BytesIO(data), chunk, limit, ahead, refused) == expected
    with tempfile.TemporaryFile() as f:
        f.write(data)
        f.seek(0)
        assert _chunks(f, chunk, limit, ahead, refused) == expected
