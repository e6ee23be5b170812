"""Recovery: cutting text into statements, so one bad statement never hides the next.

Takes text and gives `(start, end)` statement ranges cut at `;` and newlines outside
strings, regexes, paths and brackets (`split_statements`), using a scanner built from the
grammar's own terminals (`scanner`, also what the formatter finds comments with); the same
cuts of any part of a text from one scan of it (`Cuts`); and, for a statement with a
bracket never closed, where the broken statement ends and the rest begins
(`recover_unclosed`). Only text with a syntax error is cut this way.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Iterator
from functools import lru_cache
from typing import cast

from lark import Lark
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken

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


class Cuts:
    """Where one text's statements may end, found in one scan, for recovery's questions.

    Recovery asks for the statements of a part of the text again and again (after each
    unclosed bracket, the rest of its statement), and for the first bracket a part leaves
    open. Scanning the part for each answer made a text whose every line leaves a bracket
    open quadratic (2,000 such lines: 16 s). The scanner's tokens do not depend on where a
    scan starts (none spans a newline, and a part starts after a separator), so one scan
    of the whole text answers them all: each bracket's closer is matched once, as a stack
    matches them, and a statement's end is found by jumping from a bracket to its closer.
    `pieces(p, e)` is `split_statements(text[p:e])` moved by `p` (the statements of a
    part as the part alone would be cut); `first_unclosed(b, e)` is the first bracket of
    `text[b:e]` still open at `e`.
    """

    def __init__(self, text: str) -> None:
        self.seps: list[int] = []
        self.openers: list[int] = []
        #: an opener's closer; an opener never closed is not a key
        self.closer: dict[int, int] = {}
        #: newlines followed by a line that opens a case: they end a statement at any depth
        self.case_breaks: list[int] = []
        stack: list[int] = []
        for m in scanner().finditer(text):
            group = m.lastgroup
            at = m.start()
            if group == "open":
                self.openers.append(at)
                stack.append(at)
            elif group == "close":
                # a closer with nothing open is ignored (a statement's depth stops at 0):
                # brackets opened after a part's start match the same way whether the
                # scan starts there or at the start of the text
                if stack:
                    self.closer[stack.pop()] = at
            elif group == "sep":
                self.seps.append(at)
                if text[at] == "\n" and _CASE_LINE.match(text, at + 1):
                    self.case_breaks.append(at)

    def piece_end(self, p: int, e: int) -> int:
        """Where the statement starting at `p` ends, the text ending at `e`."""
        limit = e
        k = bisect_left(self.case_breaks, p)
        if k < len(self.case_breaks) and self.case_breaks[k] < e:
            limit = self.case_breaks[k]
        seps, openers = self.seps, self.openers
        x = p
        while True:
            i = bisect_left(seps, x)
            sep = seps[i] if i < len(seps) else e
            j = bisect_left(openers, x)
            if j == len(openers) or sep < openers[j]:
                return min(sep, limit)  # a separator outside brackets
            opener = openers[j]
            if opener >= limit:
                return limit
            closer = self.closer.get(opener)
            if closer is None or closer >= limit:
                return limit  # open to the end (or to the next case)
            x = closer + 1  # the bracket and all inside it are one piece of the statement

    def pieces(self, p: int, e: int) -> Iterator[tuple[int, int]]:
        """The statements of `text[p:e]` as `(start, end)` in the whole text."""
        while True:
            end = self.piece_end(p, e)
            yield p, end
            if end >= e:
                return
            p = end + 1

    def first_unclosed(self, begin: int, end: int) -> int | None:
        """The first bracket of `text[begin:end]` that is not closed before `end`."""
        openers = self.openers
        for j in range(bisect_left(openers, begin), len(openers)):
            opener = openers[j]
            if opener >= end:
                break
            closer = self.closer.get(opener)
            if closer is None or closer >= end:
                return opener
        return None


def split_statements(text: str) -> list[tuple[int, int]]:
    """Cut text into `(start, end)` statement ranges at `;` and newlines outside strings,
    regexes, paths and brackets. A newline inside brackets does not cut, unless the next
    line opens a case (so one unclosed bracket cannot swallow the rest of the file).

    >>> split_statements('a; b\\nc [1,\\n2]')
    [(0, 1), (2, 4), (5, 13)]
    """
    return list(Cuts(text).pieces(0, len(text)))


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
    source: Source,
    cuts: Cuts,
    begin: int,
    end: int,
    start: Start,
    lark: Lark,
    builder: Builder,
    failed: UnexpectedInput,
) -> tuple[Diagnostic, int] | None:
    """Recovery from a bracket that is never closed (only called on a syntax error,
    `failed`, of the statement `text[begin:end]`).

    Inside brackets newlines do not end a statement, so an unclosed `[` would swallow the
    lines after it. When the statement has an unclosed bracket, the broken statement ends
    at the first later line that starts like a statement (`answer …`, `tool …`), else at
    its end. Its error is the bracket's, reported where the bracket opens, when the
    statement ran out before a `)` came, or failed at the first word of a line after the
    bracket's (where the statement would have ended, the bracket closed): the rest starts
    at that line. Another error is reported where it is. Gives the diagnostic and where
    the rest starts (its statements are `cuts.pieces(rest, end)`); `None` for a statement
    without an unclosed bracket, or whose error is another one and no line ends it early
    (the caller reports that error, as any other).
    """
    text = source.text
    bracket = cuts.first_unclosed(begin, end)
    if bracket is None:
        return None
    words = statement_words()
    cut = None
    for line in _LINE_WORD.finditer(text, text.find("\n", bracket, end) + 1 or end, end):
        if line.group(1) in words and line.start() > bracket:
            cut = line.start()
            break
    err = failed
    if cut is not None:
        builder.base = begin
        try:
            lark.parse(text[begin:cut], start=start)
            return None  # pragma: no cover - an unclosed bracket never parses
        except UnexpectedInput as found:
            err = found
    stop = end if cut is None else cut
    rest = _rest_after_unclosed(text, err, begin, stop, bracket)
    if rest is not None:
        return _never_closed(source, bracket), rest
    if cut is None:
        return None
    return syntax_diagnostic(source, err, begin, cut), cut


def _rest_after_unclosed(
    text: str, err: UnexpectedInput, begin: int, stop: int, bracket: int
) -> int | None:
    """Where the text after a statement with a bracket never closed starts, when `err`
    is that bracket's error: the statement's end when it ran out, or the start of the
    line whose first word it failed at, a line after the bracket's. `None` for an error
    of another kind."""
    if isinstance(err, UnexpectedToken):
        if err.token.type in ("$END", "_NL"):
            return stop
        at = begin + (err.token.start_pos or 0)
    elif isinstance(err, UnexpectedCharacters):
        at = begin + (err.pos_in_stream or 0)
    else:  # pragma: no cover - LALR reports the end as a token
        return None
    line_start = text.rfind("\n", 0, at) + 1
    if line_start > bracket and not text[line_start:at].strip():
        return line_start
    return None


def _never_closed(source: Source, bracket: int) -> Diagnostic:
    """The error of a bracket never closed, where it opens."""
    opener = source.text[bracket]
    where = source.position(bracket)
    return Diagnostic.at(
        source,
        Span(bracket, bracket + 1),
        "E101",
        f"`{opener}` at {where.line}:{where.column} is never closed",
        f"close it with `{_CLOSERS[opener]}`; a list or object may span lines, "
        "but a statement cannot start inside it",
    )
