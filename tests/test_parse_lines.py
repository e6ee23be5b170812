"""A text whose lines repeat is parsed line by line, each distinct line once
(`evaldsl/syntax/lines.py`): the program and the diagnostics, every node and span, are
what the one pass over the whole text gives, for every `.eval` file of the project
(repeated, with Windows line ends, with a statement over several lines, an error or a
limit crossed among the repeated lines) and for generated programs; and a distinct line
is parsed once however often it comes."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evaldsl.language import ast
from evaldsl.language.source import Source, Span
from evaldsl.syntax import lines, parser
from evaldsl.syntax.build import Builder
from evaldsl.syntax.drive import drive
from evaldsl.syntax.grammar import loaded_drive_tables
from evaldsl.syntax.lines import by_lines, moved
from evaldsl.syntax.parser import ParseResult, parse
from tests.fuzzing import examples
from tests.test_parse_driver import FILES, ROOT, full
from tests.test_parser_properties import program


@contextmanager
def line_by_line(always: bool) -> Iterator[None]:
    """Every text parsed line by line (`always`), or none (the whole text's pass)."""
    worth_it = lines.worth_it
    lines.worth_it = lambda found: always  # type: ignore[assignment]
    try:
        yield
    finally:
        lines.worth_it = worth_it  # type: ignore[assignment]


def both(text: str, start: parser.Start = "file") -> tuple[ParseResult, ParseResult]:
    with line_by_line(False):
        whole = parse(text, "x.eval", start=start)
    with line_by_line(True):
        by_line = parse(text, "x.eval", start=start)
    return whole, by_line


def same(text: str, start: parser.Start = "file") -> None:
    whole, by_line = both(text, start)
    assert full(by_line.program) == full(whole.program), text
    assert by_line.diagnostics == whole.diagnostics, text


def variants(text: str) -> list[str]:
    """The text, repeated, with Windows line ends, and with a list over two lines, an
    error and a limit crossed among its repeated lines."""
    return [
        text,
        text * 3,
        text.replace("\n", "\r\n") * 2,
        text + "\ninput {a: [1,\n 2]}\n" + text,
        text + "\ntool a caled\n" + text,
        text + "\ntool a called 99999999999999999999999 times\n" + text * 2,
    ]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_files_parse_the_same_line_by_line(path: Path) -> None:
    for text in variants(path.read_text(encoding="utf-8")):
        same(text)


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program(), st.lists(st.integers(0, 7), min_size=1, max_size=12))
def test_generated_programs_parse_the_same_line_by_line(
    made: tuple[str, list[ast.Statement]], order: list[int]
) -> None:
    text, _ = made
    pieces = text.split("\n")
    # its lines again in another order, some more than once
    repeated = "\n".join(pieces[i % len(pieces)] for i in order)
    for start in ("file", "statements"):
        same(f"{text}\n{repeated}", start)  # type: ignore[arg-type]


def test_a_repeated_line_is_parsed_once() -> None:
    text = 'case "a"\ncassette "a.jsonl"\ntool t called 2 times\n\nanswer contains "x"\n' * 30
    assert lines.worth_it(text.split("\n"))
    builder = Builder()
    tables = loaded_drive_tables(builder)
    parsed: list[str] = []

    def whole(piece: str, start: parser.Start) -> Any:
        parsed.append(piece)
        return drive(tables, piece, start)  # type: ignore[arg-type]

    statements = by_lines(whole, builder, text, "file", text.split("\n"))
    assert statements is not None
    assert sorted(parsed) == sorted(set(text.split("\n")) - {""})
    assert full(tuple(statements)) == full(both(text)[0].program.statements)


def test_a_short_or_unrepeated_text_is_parsed_as_a_whole() -> None:
    assert not lines.worth_it(["tool t called"] * (lines.MIN_LINES - 1))
    assert not lines.worth_it([f"tool t{i} called" for i in range(200)])
    assert lines.worth_it(["tool t called", "answer contains 'x'"] * 40)


def test_a_moved_node_is_the_node_parsed_there() -> None:
    text = 'tool t args $.a == {k: [1, "x", null]} and not (answer matches /a/i)'
    node = parse(text).program.statements[0]
    there = parse(" " * 17 + text).program.statements[0]
    assert full(moved(node, 17)) == full(there)
    assert moved(ast.Name("x", span=Span(3, 4)), -3).span == Span(0, 1)


@pytest.mark.parametrize("text", ["", "\n", "a", "a\nbc\n", "x\r\n\r\ny\n\nz", "é\u2028ü\nq"])
def test_a_source_given_its_lines_is_the_source_of_its_text(text: str) -> None:
    # the parser splits a text once, for its line table and its parse by lines
    given, made = Source(text, lines=text.split("\n")), Source(text)
    assert given.line_count() == made.line_count()
    for offset in range(len(text) + 1):
        assert given.position(offset) == made.position(offset)
    assert parse(text + "\ntool t called").source.line_count() == made.line_count() + 1
