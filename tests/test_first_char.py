"""The fast parse loop's first-character dispatch (`syntax/firstchar.py`) matches what the
whole scanner regex matches: on every scanner of the grammar (the shipped tables' and Lark's
own), at every position of the example suites and of texts made of every ASCII character
and a few others, the same terminal and the same end, or no match for both. And
`first_chars` over-approximates: a pattern never matches text beginning with a character it
left out."""

from __future__ import annotations

import re
import string
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaldsl.syntax import firstchar
from evaldsl.syntax.build import Builder
from evaldsl.syntax.grammar import loaded_drive_tables, new_lark

ROOT = Path(__file__).resolve().parent.parent


def _texts() -> list[str]:
    suites = sorted((ROOT / "examples").rglob("*.eval"))[:6]
    texts = [p.read_text(encoding="utf-8")[:3000] for p in suites]
    chars = string.printable + "\ufeffé日\u00a0"
    # every character after each of a few leads: a blank, two, a tab, a letter, a quote
    for lead in ("", " ", "  ", "\t", "a", '"', "1", "$", "/"):
        texts.append("".join(lead + c + " x1 " for c in chars))
    return texts


TEXTS = _texts()


def _scanners() -> list[tuple[str, int]]:
    tables = loaded_drive_tables(Builder())
    assert tables is not None
    found: set[tuple[str, int]] = set()
    for state in range(len(tables.lexing.lexer_of)):
        scanners, _, _ = tables.lexing[state]
        found.update((str(p), int(f)) for p, f in scanners)
    lark: Any = new_lark(Builder())
    for sub in lark.parser.lexer.lexer.lexers.values():
        for regex in sub.scanner._mres:
            found.add((regex.pattern, regex.flags))
    return sorted(found)


SCANNERS = _scanners()


def _blank_first(pattern: str, flags: int) -> re.Pattern[str]:
    return re.compile(f"[ \t]*+(?:{pattern})", flags)


def _outcome(m: Any) -> object:
    return None if m is None else (m.lastgroup, m.end())


@pytest.mark.parametrize("index", range(len(SCANNERS)))
def test_dispatch_matches_whole(index: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(firstchar, "WARM_UP", 0)  # dispatch from the first token
    pattern, flags = SCANNERS[index]
    whole = _blank_first(pattern, flags)
    by_first = firstchar.dispatch(whole, pattern, lambda text: _blank_first(text, flags).match)
    by_first["a"]
    assert by_first.pieces is not None, "every scanner of the grammar is split"
    for text in TEXTS:
        for pos in range(len(text)):
            first = text[pos]
            if first == " " and pos + 1 < len(text):
                first = text[pos + 1]
            got = _outcome(by_first[first](text, pos))
            assert got == _outcome(whole.match(text, pos)), (pattern, text[pos : pos + 20])


def test_split_is_exact() -> None:
    assert firstchar.split_terminals("(?P<A>a)|(?P<B>b|c)", ["A", "B"]) == [
        "(?P<A>a)",
        "(?P<B>b|c)",
    ]
    assert firstchar.split_terminals("(?P<A>a)|(?P<B>b)", ["B", "A"]) is None


PIECES = ["a", "b", "ab", "\\d", "\\w", "\\s", "[a-c]", "[^a]", ".", "x*", "y+", "z?", "(?:",
          ")", "|", "(?=a)", "(?!b)", "\\b", "^", "$", "(?i:a)", "[\\W]", "a{0,2}", "(?>a)",
          "a*+", "\\$", "-?", "[ \t]"]  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(PIECES), min_size=1, max_size=6), st.text(max_size=4))
def test_first_chars_cover_every_match(parts: list[str], tail: str) -> None:
    pattern = "".join(parts)
    try:
        regex = re.compile(pattern)
    except re.error:
        return
    chars = firstchar.first_chars(pattern, regex.flags)
    if chars is None:
        return
    for code in range(128):
        c = chr(code)
        if c not in chars:
            assert regex.match(c + tail) is None, (pattern, c + tail)
