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

from evaldsl.syntax.build import Builder
from evaldsl.syntax.drive import drive
from evaldsl.syntax.grammar import new_lark

ROOT = Path(__file__).resolve().parents[1]
FILES = sorted(
    p
    for folder in ("examples", "examples-failing", "tests")
    for p in (ROOT / folder).rglob("*.eval")
    if "node_modules" not in p.parts
)
FAST = new_lark(Builder())
STOCK = new_lark(Builder())


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


def parsed_in_new_thread(texts: list[str]) -> list[object]:
    """Each text parsed by a parser built in a fresh thread (parsers are per thread)."""
    import threading

    from evaldsl.syntax.parser import parse

    results: list[object] = []

    def work() -> None:
        for text in texts:
            r = parse(text)
            results.append(
                (r.program, [(d.code, d.line, d.column, d.message) for d in r.diagnostics])
            )

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    return results


def test_the_corpus_parses_the_same_without_the_fast_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    # When the Lark in use is not one `drive` was written for, Lark's own loop parses
    # everything: the same programs and the same diagnostics, error-free or not.
    from evaldsl.syntax import drive as drive_module

    texts = [p.read_text(encoding="utf-8") for p in FILES]
    texts += ["tool a caled\nlatency < 2", "answer contains [1,\ntool b called"]
    fast = parsed_in_new_thread(texts)
    calls: list[object] = []
    monkeypatch.setattr(drive_module, "drive", lambda *a: calls.append(a))
    monkeypatch.setattr(drive_module, "available", lambda lark: False)
    assert parsed_in_new_thread(texts) == fast
    assert calls == []  # the fast loop was never used


def test_the_fast_loop_is_used_with_the_lark_it_was_written_for() -> None:
    from evaldsl.syntax import drive as drive_module

    assert drive_module.available(FAST)
