"""The tool names a recording's head calls (`evaldsl/runs/toolnames.py`).

`recorded_tool_names` decodes each tool line of the head by `orjson.loads` alone
(`head_names`) and goes back to reading every line as the run reads it
(`mended_loads`: lone surrogate escapes as U+FFFD, a byte-order mark left out, a line
that is not JSON the run's error at its line) at the first line orjson refuses. Both
must give the names a line-by-line reading as the run reads it gives, and the error it
gives, whatever the head holds.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import orjson
import pytest

from evaldsl.runs import toolnames
from evaldsl.runs.cassette import EventStream
from evaldsl.runs.events import tool_call_name
from evaldsl.runs.model import RunError
from evaldsl.runs.surrogates import mended_loads
from evaldsl.runs.toolnames import recorded_tool_names

HEADER = b'{"cassette": "traceplay", "version": 1, "project": "p"}\n'

#: Tool lines (and lines around them) of every shape the head's reading must agree on.
LINES: list[bytes] = [
    b'{"id": "e1", "type": "tool.call", "name": "search", "arguments": {"q": "x"}}',
    b'{"type": "tool.call", "name": "fetch", "n": 18446744073709551617}',
    b'{"type": "tool.call", "name": "big", "n": -9223372036854775809}',
    b'{"type": "mcp.call", "tool": "files"}',
    b'{"type": "mcp.call", "name": null, "tool": "hidden"}',
    b'{"type": "mcp.call", "name": "named", "tool": "other"}',
    b'{"type": "tool.call", "name": ""}',
    b'{"type": "tool.call", "name": 7}',
    b'{"type": "tool.call", "name": "dup", "name": "last"}',
    b'{"type": "tool.result", "callId": "c1", "output": "no tool.call here"}',
    b'["tool.call", "not an object"]',
    b'"mcp.call"',
    b'{"type": "llm.response", "output": {"content": "x"}}',
    b'{"type": "tool.call", "name": "caf\\u00e9"}',
    b'{"type": "tool.call", "name": "cut \\ud83d"}',
    b'{"type": "tool.call", "name": "pair \\ud83d\\ude00"}',
    b'\xef\xbb\xbf{"type": "tool.call", "name": "after a mark"}',
    b'{"type": "tool.call", "name": "crlf"}\r',
    b'{"type": "tool.call", "name": "huge", "m": 1e400}',  # (past a double: not JSON to orjson)
]


def line_by_line(head: bytes) -> Any:
    """The names the head's tool lines call, each line read as the run reads it; or the
    line number and text of the first tool line that is not JSON."""
    names = set()
    for number, line in enumerate(head.split(b"\n"), 2):  # (the header is line 1)
        if b"tool.call" not in line and b"mcp.call" not in line:
            continue
        try:
            event = mended_loads(line.removeprefix(b"\xef\xbb\xbf"))
        except orjson.JSONDecodeError:
            return ("error", number)
        if isinstance(event, dict) and (name := tool_call_name(event)) is not None:
            names.add(name)
    return sorted(names)


def read(path: Path) -> Any:
    try:
        return sorted(recorded_tool_names(EventStream(str(path))))
    except RunError as err:
        return ("error", err.line)


@pytest.mark.parametrize("seed", range(40))
def test_the_heads_names_are_those_each_line_read_as_the_run_reads_it_gives(
    seed: int, tmp_path: Path
) -> None:
    rng = random.Random(seed)
    lines = [rng.choice(LINES) for _ in range(rng.randint(1, 12))]
    if seed % 5 == 0:  # a tool line that is not JSON, anywhere
        lines.insert(rng.randint(0, len(lines)), b'{"type": "tool.call", "name": "s"')
    head = b"\n".join(lines) + b"\n"
    path = tmp_path / "run.jsonl"
    path.write_bytes(HEADER + head)
    assert read(path) == line_by_line(head)


def test_a_clean_head_is_read_by_orjson_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # (each line through `mended_loads`, which looked it through for long integers, was
    # ~40% of reading a head's names)
    calls: list[bytes] = []

    def counted(text: bytes, **options: Any) -> Any:
        calls.append(text)
        return mended_loads(text, **options)

    monkeypatch.setattr(toolnames, "mended_loads", counted)
    path = tmp_path / "run.jsonl"
    path.write_bytes(HEADER + b"\n".join(LINES[:9]) + b"\n")
    assert read(path) == ["big", "fetch", "files", "last", "named", "search"]
    assert calls == []
    # a line orjson refuses sends the whole head the run's way
    path.write_bytes(HEADER + LINES[0] + b"\n" + LINES[14] + b"\n")
    assert read(path) == ["cut \ufffd", "search"]
    assert len(calls) == 2


def test_head_names_gives_way_at_a_line_orjson_refuses() -> None:
    head_names = toolnames.head_names
    assert head_names(b'{"type": "tool.call", "name": "a"}\n') == {"a"}
    assert head_names(LINES[0] + b"\n" + LINES[16] + b"\n") is None
    assert head_names(b'{"type": "tool.call", "name": "a"\n') is None
    assert head_names(b"") == set()
