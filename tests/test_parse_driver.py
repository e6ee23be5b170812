"""The parser's fast path gives exactly what Lark's own loop gives: the one-loop driver
(`drive`) produces the same AST as `Lark.parse` for every statement of every `.eval` file
in the project and of generated text, and on broken text it steps aside (None), so Lark
reports the error (kind, position, expected terminals) as it always does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lark.exceptions import UnexpectedInput

from evaldsl.language.parser import _Builder, drive, new_lark

ROOT = Path(__file__).resolve().parents[1]
FILES = sorted(
    p
    for folder in ("examples", "examples-failing", "tests")
    for p in (ROOT / folder).rglob("*.eval")
    if "node_modules" not in p.parts
)
FAST = new_lark(_Builder())
STOCK = new_lark(_Builder())


def driven(text: str) -> object:
    """What `drive` gives, or Lark's error when it steps aside (as `parse` then does)."""
    result = drive(FAST, text, "file")
    return outcome(STOCK, text) if result is None else result


def outcome(lark: Any, text: str) -> object:
    try:
        return lark.parse(text, start="file")
    except UnexpectedInput as err:
        token = getattr(err, "token", None)
        return (
            type(err).__name__,
            getattr(token, "type", None),
            getattr(token, "start_pos", None),
            getattr(err, "pos_in_stream", None),
            sorted(getattr(err, "expected", None) or getattr(err, "allowed", None) or ()),
        )


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_files_parse_the_same(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    for chunk in [text, *text.splitlines()]:
        expected = outcome(STOCK, chunk)
        assert driven(chunk) == expected, chunk
        if not isinstance(expected, tuple):  # it parses: the driver must not step aside
            assert drive(FAST, chunk, "file") is not None, chunk


WORDS = [
    "tool",
    "called",
    "calls",
    "tools",
    "answer",
    "json",
    "contains",
    "matches",
    "not",
    "and",
    "or",
    "case",
    "suite",
    "state",
    "status",
    "==",
    "<=",
    "2",
    "2s",
    "$0.05",
    "$.city",
    '"x"',
    "'y'",
    "/a b/i",
    "[",
    "]",
    "{",
    "}",
    "(",
    ")",
    ",",
    ":",
    ";",
    "\n",
    "#c\n",
    "  ",
    "\t",
    "x",
    "between",
    "times",
    "once",
    "is",
    "empty",
    "string",
    "every",
    "args",
    "result",
    "memory",
    ".",
    "a",
    "@",
    '"unterminated',
    "in",
    "order",
    "judged",
    "by",
    "0.7",
    ">=",
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(WORDS), max_size=14))
def test_token_soup_parses_the_same(words: list[str]) -> None:
    text = " ".join(words)
    assert driven(text) == outcome(STOCK, text)
