"""Recovery: cutting text into statements, so one bad statement never hides the next.

Takes text and gives `(start, end)` statement ranges cut at `;` and newlines outside
strings, regexes, paths and brackets (`split_statements`), using a scanner built from the
grammar's own terminals (`scanner`, also what the formatter finds comments with); and, for
a statement with a bracket never closed, where the broken statement ends and the rest
begins (`recover_unclosed`). Only text with a syntax error is cut this way.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import cast

from lark import Lark
from lark.exceptions import UnexpectedInput, UnexpectedToken

from evaldsl.language.diagnostics import Diagnostic
from evaldsl.language.source import Source, Span
from evaldsl.syntax.build import Builder
from evaldsl.syntax.grammar import Start, plain_parser, spellings
from evaldsl.syntax.wording import syntax_diagnostic


@lru_cache(maxsize=1)
def scanner() -> re.Pattern[str]:
    """A regex over the grammar's own terminals that finds what statement boundaries and
    comments depend on: strings, regexes, paths and comments (`skip`), an unterminated
    string or regex (`bad`), brackets (`open`, `close`) and separators (`sep`)."""
    lark = plain_parser()

    def term(name: str) -> str:
        return str(lark.get_terminal(name).pattern.to_regexp())

    return re.compile(
        "|".join(
            [
                f"(?P<skip>{term('STRING')}|{term('REGEX')}|{term('PATH')}|{term('COMMENT')})",
                r"(?P<bad>[\"'/][^\n]*)",  # an unterminated string or regex: rest of the line
                r"(?P<open>[\[{(])",
                r"(?P<close>[\]})])",
                r"(?P<sep>;|\n)",
            ]
        )
    )


_CASE_LINE = re.compile(r"[ \t]*case\b")


def split_statements(text: str) -> list[tuple[int, int]]:
    """Cut text into `(start, end)` statement ranges at `;` and newlines outside strings,
    regexes, paths and brackets. A newline inside brackets does not cut, unless the next
    line opens a case (so one unclosed bracket cannot swallow the rest of the file).

    >>> split_statements('a; b\\nc [1,\\n2]')
    [(0, 1), (2, 4), (5, 13)]
    """
    pieces: list[tuple[int, int]] = []
    start = 0
    depth = 0
    for m in scanner().finditer(text):
        group = m.lastgroup
        if group == "open":
            depth += 1
        elif group == "close":
            depth = max(0, depth - 1)
        elif group == "sep":
            at = m.start()
            if depth and text[at] == "\n" and _CASE_LINE.match(text, at + 1):
                depth = 0
            if not depth:
                pieces.append((start, at))
                start = at + 1
    pieces.append((start, len(text)))
    return pieces


_CLOSERS = {"[": "]", "{": "}", "(": ")"}
_LINE_WORD = re.compile(r"^[ \t]*([A-Za-z_][A-Za-z0-9_]*)(?=[ \t]|\r?$)", re.M)


@lru_cache(maxsize=1)
def statement_words() -> frozenset[str]:
    """The keywords a statement can start with (`answer`, `tool`, `case`, `not`, …)."""
    lark = plain_parser()
    spell = spellings()
    probe = lark.parse_interactive("", start="file")
    accepts = cast(set[str], probe.accepts())  # type: ignore[no-untyped-call]
    return frozenset(spell[n] for n in accepts if n in spell and spell[n].isalpha())


def recover_unclosed(
    source: Source, begin: int, end: int, start: Start, lark: Lark, builder: Builder
) -> tuple[Diagnostic, list[tuple[int, int]]] | None:
    """Recovery from a bracket that is never closed (only called on a syntax error).

    Inside brackets newlines do not end a statement, so an unclosed `[` would swallow the
    lines after it. When the statement `text[begin:end]` has an unclosed bracket and a later
    line starts like a statement (`answer …`, `tool …`), the broken statement ends there:
    report it (at the bracket when it simply ran out), and give the rest back as statements.
    """
    text = source.text
    stack: list[int] = []
    for m in scanner().finditer(text, begin, end):
        group = m.lastgroup
        if group == "open":
            stack.append(m.start())
        elif group == "close" and stack:
            stack.pop()
    if not stack:
        return None
    bracket = stack[0]
    words = statement_words()
    cut = None
    for line in _LINE_WORD.finditer(text, text.find("\n", bracket, end) + 1 or end, end):
        if line.group(1) in words and line.start() > bracket:
            cut = line.start()
            break
    if cut is None:
        return None
    builder.base = begin
    try:
        lark.parse(text[begin:cut], start=start)
        diagnostic = None  # pragma: no cover - an unclosed bracket never parses
    except UnexpectedInput as err:
        diagnostic = syntax_diagnostic(source, err, begin, cut)
        ran_out = isinstance(err, UnexpectedToken) and err.token.type in ("$END", "_NL")
        if ran_out:
            opener = text[bracket]
            diagnostic = Diagnostic.at(
                source,
                Span(bracket, bracket + 1),
                "E101",
                f"this `{opener}` is never closed",
                f"close it with `{_CLOSERS[opener]}`; a list or object may span lines, "
                "but a statement cannot start inside it",
            )
    if diagnostic is None:  # pragma: no cover
        return None
    rest = [(cut + a, cut + b) for a, b in split_statements(text[cut:end])]
    return diagnostic, rest
