"""Parse evaldsl text into AST nodes; report syntax errors as diagnostics.

Takes source text (a whole `.eval` file, or the assertion list a YAML suite embeds) and
gives a `ParseResult`: a `Program` holding every statement that parsed, and one
diagnostic per statement that did not. The Lark tree never leaves `evaldsl.syntax`.

How it works, and why:
- The AST is built during the parse by the builder (`build.py`), embedded in Lark's
  parser: no parse tree is built (about 40% faster than tree + Transformer). Embedded
  builders cannot receive `meta`, so the grammar keeps every keyword token and spans are
  read from tokens.
- Text without an error is parsed in one pass by the fast loop (`drive.py`) over the
  tables shipped for it (`drivetables.py`: no Lark parser is made for such text), else,
  when those do not fit the installed Lark, over Lark's parser where the loop is
  available for that Lark, else by Lark's own loop. Text with an error is cut into
  statements (`recovery.py`) and each statement is parsed on its own (by Lark's parser,
  made then), so one bad statement never hides the next: every syntax error of a
  file comes out of one pass, each said in the user's words (`wording.py`).
- The cyclic garbage collector is paused while parsing: the AST holds no cycles, and the
  collections its allocations trigger would rescan the caller's whole heap.
- Limits (nesting, integer range, `timeout`) are noted by the builder as it builds and
  reported here as diagnostics beside the syntax errors; a statement that crosses one is
  left out of the program, like a statement with a syntax error, so no later stage walks
  a node deeper than the limit.
"""

from __future__ import annotations

import threading
from bisect import bisect_right
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

import attrs

from evaldsl.gcpause import paused_gc
from evaldsl.language import ast
from evaldsl.language.diagnostics import Diagnostic
from evaldsl.language.source import Source, Span
from evaldsl.syntax import drive
from evaldsl.syntax.build import Builder
from evaldsl.syntax.grammar import Start, loaded_drive_tables, new_lark
from evaldsl.syntax.lines import by_lines

if TYPE_CHECKING:
    from lark import Lark

    from evaldsl.syntax.mistakes import Slip

# Lark, and the modules that read its errors (`recovery`, `wording`), are loaded for text
# with an error only: error-free text is parsed with the fast loop's tables without them.

__all__ = ["ParseResult", "Start", "parse"]


@attrs.frozen
class ParseResult:
    """What `parse` gives: the program (every statement that parsed) and syntax errors."""

    program: ast.Program
    diagnostics: tuple[Diagnostic, ...]
    source: Source

    @property
    def ok(self) -> bool:
        return not self.diagnostics


_local = threading.local()


class _Parsers:
    """One thread's parsers, all with the same builder (which carries the offset of the
    statement being parsed, so each thread has its own): the fast loop's tables loaded
    from the shipped file, and Lark's parser, made only when needed (text with an error,
    or no tables that fit)."""

    def __init__(self) -> None:
        self.builder = Builder()
        self.tables = loaded_drive_tables(self.builder)
        self._lark: Lark | None = None
        self.lark_drives = False  # whether `drive` runs on Lark's parser (no tables)

    @property
    def lark(self) -> Lark:
        if self._lark is None:
            self._lark = new_lark(self.builder)
            self.lark_drives = self.tables is None and drive.available(self._lark)
        return self._lark

    def whole(self, text: str, start: Start) -> Any | None:
        """The whole text parsed in one pass, or `None` when it has an error."""
        if self.tables is not None:
            return drive.drive(self.tables, text, start)
        lark = self.lark
        if self.lark_drives:
            return drive.drive(lark, text, start)
        from lark.exceptions import UnexpectedInput

        try:
            return lark.parse(text, start=start)
        except UnexpectedInput:
            return None


def _parsers() -> _Parsers:
    cached: _Parsers | None = getattr(_local, "parsers", None)
    if cached is None:
        cached = _local.parsers = _Parsers()
    return cached


def building_parser() -> tuple[Lark, Builder]:
    """This thread's Lark parser with the AST builder embedded (the builder carries the
    offset of the statement being parsed, so each thread has its own)."""
    parsers = _parsers()
    return parsers.lark, parsers.builder


def parse(
    text: str,
    path: str = "<string>",
    *,
    start: Start = "file",
    source: Source | None = None,
) -> ParseResult:
    """Parse a whole file (`start="file"`) or an assertion list (`start="statements"`).

    >>> r = parse("tool search called 2 times; answer matches /\\\\d+ C/")
    >>> [type(s).__name__ for s in r.program.statements], r.diagnostics
    (['Check', 'Check'], ())
    """
    # Parsing allocates many small objects and no cycles: the cyclic garbage collector,
    # triggered by those allocations, would scan the whole heap again and again (measured:
    # 40% of the parse time beside a large compiled program).
    with paused_gc():
        try:
            return _parse(text, path, start, source)
        finally:
            _parsers().builder.reset()  # the builder keeps no node past its parse


def _parse(text: str, path: str, start: Start, source: Source | None) -> ParseResult:
    # (split once: the line table of the source and the parse by lines read the lines)
    lines = text.split("\n")
    src = source or Source(text, path, lines=lines)
    parsers = _parsers()
    builder = parsers.builder
    span = Span(0, len(text))
    # Most text parses: one pass over all of it is the fast path (one parser and lexer
    # state instead of one per statement). Only text with an error is parsed again,
    # statement by statement, to report every error of it.
    builder.reset()
    # (a text whose lines repeat, as a suite's cases repeat their assertions, is parsed
    # line by line, each distinct line once: `lines.py`)
    made = by_lines(parsers.whole, builder, text, start, lines)
    del lines  # (not held through a parse of the whole text: a large file's lines)
    if made is None:
        builder.reset()
        whole = parsers.whole(text, start)
        made = whole.statements if whole is not None else None
    if made is not None:
        if builder.problems:
            kept, limits = _limits(src, builder, made)
            return ParseResult(ast.Program(kept, span=span), limits, src)
        return ParseResult(ast.Program(tuple(made), span=span), (), src)
    builder.reset()  # what the failed whole pass noted is noted again statement by statement
    from lark.exceptions import UnexpectedInput

    from evaldsl.syntax.recovery import Cuts, recover_unclosed
    from evaldsl.syntax.wording import explained

    lark = parsers.lark
    statements: list[ast.Statement] = []
    diagnostics: list[Diagnostic] = []
    cuts = Cuts(text)
    # The statements of the parts of the text still to read, the innermost last: recovery
    # from an unclosed bracket cuts the rest of the broken statement again, and its
    # statements come before those after it.
    parts = [cuts.pieces(0, len(text))]
    while parts:
        piece = next(parts[-1], None)
        if piece is None:
            parts.pop()
            continue
        begin, end = piece
        chunk = text[begin:end]
        if not chunk or chunk.isspace():
            continue
        builder.base = begin
        # Each statement by the fast loop first, as the whole text was: one error made
        # every statement of the file go through Lark's own loop (~4x the time of the
        # whole text), and an editor's buffer has one after most keystrokes. Lark's
        # parse runs where the fast loop fails, and it reports the error.
        noted = len(builder.problems)
        program = parsers.whole(chunk, start)
        if program is None:
            del builder.problems[noted:]  # Lark's parse notes them again
            try:
                program = cast(ast.Program, lark.parse(chunk, start=start))
            except UnexpectedInput as err:
                recovered = recover_unclosed(src, cuts, begin, end, start, lark, builder, err)
                if recovered is None:
                    diagnostic, found = explained(src, err, begin, end, start)
                    diagnostics.append(diagnostic)
                    if found is not None:
                        statements.extend(_recovered_line(found, text, begin, end, start))
                else:
                    diagnostic, rest = recovered
                    diagnostics.append(diagnostic)
                    parts.append(cuts.pieces(rest, end))
                continue
        statements.extend(program.statements)
    kept = tuple(statements)
    if builder.problems:
        kept, limits = _limits(src, builder, kept)
        diagnostics.extend(limits)
        diagnostics.sort(key=lambda d: (d.line, d.column))
    return ParseResult(ast.Program(kept, span=span), tuple(diagnostics), src)


#: The lines kept, as their fix reads them, when they are a known mistake: a header or
#: case line whose only span is the line's (the lines after a `case weather` belong to that
#: case, and a case whose `cassette: "x.jsonl"` is wrong still has its source: neither
#: gives a second error). Assertions with a mistake are left out, as other broken ones.
_RECOVERED = (ast.CaseDecl, ast.SuiteDecl, ast.SourceDecl, ast.RunDecl, ast.JudgeDecl)


def _recovered_line(
    found: Slip, text: str, begin: int, end: int, start: Start
) -> tuple[ast.Statement, ...]:
    """The header or case line a known mistake's fix gives, spanning the line as written."""
    from lark.exceptions import UnexpectedInput

    parsers = _parsers()
    lark, builder = parsers.lark, parsers.builder
    noted = len(builder.problems)
    builder.base = begin
    try:
        program = cast(ast.Program, lark.parse(found.corrected, start=start))
    except UnexpectedInput:  # pragma: no cover - a slip's fix parses
        return ()
    finally:
        del builder.problems[noted:]
    statements = program.statements
    if len(statements) != 1 or not isinstance(statements[0], _RECOVERED):
        return ()
    line = text[begin:end]
    lead = len(line) - len(line.lstrip())
    span = Span(begin + lead, min(begin + lead + len(found.corrected), begin + len(line.rstrip())))
    return (attrs.evolve(statements[0], span=span),)


def _limits(
    source: Source, builder: Builder, statements: Sequence[ast.Statement]
) -> tuple[tuple[ast.Statement, ...], tuple[Diagnostic, ...]]:
    """The statements that crossed no limit, and the limits crossed as diagnostics."""
    found = tuple(
        Diagnostic.at(source, sp, code, message) for sp, code, message in builder.problems
    )
    starts = [s.span.start for s in statements]
    dropped: set[int] = set()
    for sp, _, _ in builder.problems:
        # statements are in source order and do not overlap: the one holding the problem
        # is the last one starting at or before it
        i = bisect_right(starts, sp.start) - 1
        if i >= 0 and sp.end <= statements[i].span.end:
            dropped.add(i)
    builder.reset()
    return tuple(s for i, s in enumerate(statements) if i not in dropped), found
