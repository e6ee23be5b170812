"""`decode.line_chunks` against the reading it replaced: the chunks a file is cut into (whole
lines, each chunk its first `CHUNK` bytes and the rest of the line its last byte is on),
and where a line too long is refused, on random files and small chunk sizes and limits,
from a file on disk and from bytes held in memory (`model.open_file` gives either)."""

from __future__ import annotations

import io
import tempfile
from typing import Any
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from evaldsl.runs import decode
from evaldsl.runs.decode import Undecodable, line_chunks


def _joined_chunks(f: Any, chunk: int, limit: int) -> list[bytes] | str:
    """The chunks as `line_chunks` made them before: `chunk` bytes read, then the rest of
    the last line read and added (`"too long"`: that rest was longer than `limit`)."""
    chunks = []
    while block := f.read(chunk):
        if not block.endswith(b"\n"):
            rest = f.readline(limit + 1)
            if len(rest) > limit:
                return "too long"
            block += rest
        chunks.append(block)
    return chunks


def _chunks(f: Any, chunk: int, limit: int) -> list[bytes] | str:
    with (
        mock.patch.object(decode, "CHUNK", chunk),
        mock.patch.object(decode, "MAX_LINE_BYTES", limit),
    ):
        try:
            return list(line_chunks(f))
        except Undecodable:
            return "too long"


_LINES = st.lists(st.binary(max_size=12).map(lambda b: b.replace(b"\n", b"")), max_size=12)


@settings(max_examples=300, deadline=None)
@given(_LINES, st.booleans(), st.integers(1, 20), st.integers(0, 15))
def test_chunks_are_cut_where_they_were(
    lines: list[bytes], last_newline: bool, chunk: int, limit: int
) -> None:
    data = b"\n".join(lines) + (b"\n" if last_newline and lines else b"")
    data = data.decode("ascii", "replace").encode("ascii", "replace")  # (UTF-8 checked apart)
    expected = _joined_chunks(io.BytesIO(data), chunk, limit)
    assert _chunks(io.BytesIO(data), chunk, limit) == expected
    with tempfile.TemporaryFile() as f:
        f.write(data)
        f.seek(0)
        assert _chunks(f, chunk, limit) == expected
