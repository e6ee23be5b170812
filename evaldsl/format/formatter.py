"""Format `.eval` text in one canonical layout, keeping every comment and the meaning.

Takes the text of a `.eval` file and gives the same program laid out one way: the text
parses to an equal AST (spans aside) and holds the same comments, and formatting it again
changes nothing. Text with syntax errors is refused (`EvalDslError`), so `fmt` is safe to
run on save. `fmt_command` is the `evaldsl fmt` command.

How it works: the parser gives the statements; comments are found with the grammar's own
terminals (the parser's scanner, which skips strings, regexes and paths), and the text is
cut where the grammar separates statements (`;` and newlines outside brackets), so the
source range of each statement is known, and with it the user's `;` grouping, blank lines
and where each comment sits. Each statement is printed from its AST node, so the spacing,
quoting and parentheses come out canonical whatever the input was. Before returning, the
result is parsed again and compared with the input (AST and comments): a difference is a
formatter bug, raised as `FormatterError` instead of written to disk.

The layout (the README quotes these rules):
- Header lines (suite, tools, nodes, judge, timeout, suite-level assertions) at column 0.
  `case "name"` at column 0 with one blank line before it (and before the comments
  directly above it); every other line of a case is indented two spaces.
- One statement per line, except statements the user joined with `;`: they stay on one
  line, joined by `; `. A `case` line always stands alone on its line.
- One space between words; no space inside `[]`, `{}`, `()`; `, ` between items and
  `key: value` in objects; bare keys and names where they are bare words (a quoted name
  that could be bare loses its quotes: `tool "search"` → `tool search`; `tool "calls"`
  keeps them, as `tool calls` is a subject).
- Strings in double quotes with the fewest escapes JSON needs (`'it\\'s'` → `"it's"`),
  their decoded text unchanged; regexes, JSONPaths, numbers (`1.0` stays `1.0`, `1e5`
  stays `1e5`), judge thresholds, durations and money exactly as written. Counts and
  indexes are plain integers (`called 02 times` → `called 2 times`).
- Line endings as the file's first line has them: `\r\n` throughout if it ends with
  `\r\n`, else `\n`.
- `called 1 time`, `at least 1 value`: the singular for one, the plural otherwise.
- `and`/`or`/`not` with the fewest parentheses the meaning needs (not > and > or):
  `(a and b) or c` → `a and b or c`; `(a or b) and c` keeps them, and so does a chain
  the user grouped inside one of its own kind, `(a or b) or c` (a different tree).
- A list or object written on one line stays on one line, however long (no wrapping).
  One written over several lines (a line break anywhere between its brackets) is written
  one item per line, each item indented two more spaces and followed by a comma, the
  closing bracket on a line of its own; join it onto one line to have it on one line.
  (A list or object with a bare `case` item or key stays on one line: inside brackets, a
  line starting with `case` is where the parser resynchronises after an error.)
- Comments: a comment on a line of its own keeps its place between statements and is
  indented like the line that follows it, except that a comment parted by a blank line
  from the `case` line after it closes the case before and is indented like that case's
  lines. A comment after a statement stays at the end of its line, two spaces after it.
  Comments inside a multi-line list or object stay with their item. A comment inside a
  statement anywhere else (inside parentheses over several lines) moves above that
  statement's line. Comment text is kept as written, trailing spaces removed.
- Blank lines: the user's are kept, at most one in a row (none inside a statement);
  none at the start; the file ends with exactly one newline. Line endings are `\\n`; a
  byte-order mark is dropped.
"""

from __future__ import annotations

import bisect
import math
import re
import unicodedata
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO, assert_never

import attrs

from evaldsl.atomicfile import write_atomically
from evaldsl.gcpause import paused_gc
from evaldsl.language import ast
from evaldsl.language.diagnostics import EvalDslError, lone_carriage_return, not_utf8, render
from evaldsl.language.limits import MAX_SUITE_BYTES
from evaldsl.language.printable import visible
from evaldsl.language.reading import (
    YAML_SUFFIXES,
    broken_suite_link,
    is_folder,
    is_regular,
    present,
    read_regular,
    starts_as_zip,
    walk_folder,
)
from evaldsl.language.source import Span
from evaldsl.predicates import registry
from evaldsl.syntax.parser import parse

__all__ = [
    "FormatterError",
    "canonical_statement",
    "check_text",
    "fmt_command",
    "format_text",
    "quote",
    "unified_diff",
]

_WS = " \t\f\r\n\ufeff"
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_TARGET = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*\Z")
_CMP = re.compile(r"==|!=|<=|>=|<|>")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?")
_INDENT = "  "
_SEPARATORS = re.compile(r"[;\n()\[\]{}]")

# Words a name cannot be written as, bare, in one place: after `tool`, `calls` is the
# subject `tool calls`. Everywhere else a name position accepts only a name or a string,
# and the contextual lexer reads any bare word there as a name.
_TOOL_SUBJECT_WORDS = frozenset({"calls"})

_SUBJECT_WORDS: dict[ast.SubjectKind, str] = {
    "status": "status",
    "nodes": "nodes",
    "tools": "tools",
    "tokens": "tokens",
    "input_tokens": "input tokens",
    "output_tokens": "output tokens",
    "steps": "steps",
    "tool_calls": "tool calls",
    "guards": "guards",
    "errors": "errors",
    "latency": "latency",
    "cost": "cost",
    "budget": "budget",
}


class FormatterError(Exception):
    """The formatted text would not mean what the input meant (a formatter bug): nothing is
    written. The message says what differed."""


# ---- small printers ------------------------------------------------------------------


def quote(value: str) -> str:
    """A string literal for `value`: double quotes, the fewest JSON escapes.

    >>> quote('say "hi"\\n'), quote("café")
    ('"say \\\\"hi\\\\"\\\\n"', '"café"')
    """
    out = ['"']
    for at, ch in enumerate(value):
        code = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\b":
            out.append("\\b")
        elif ch == "\f":
            out.append("\\f")
        elif _unseen(ch, first=at == 0):
            if code > 0xFFFF:  # (JSON's escapes are UTF-16: a pair of surrogates)
                high, low = divmod(code - 0x10000, 0x400)
                out.append(f"\\u{0xD800 + high:04x}\\u{0xDC00 + low:04x}")
            else:
                out.append(f"\\u{code:04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _unseen(ch: str, *, first: bool) -> bool:
    """Whether `ch` is written as a `\\u` escape in a string literal: a character that
    cannot be seen, or changes what is seen around it, or cannot be written as UTF-8.

    Control characters (C0, DEL, C1: U+0085 ends a line for some editors), lone
    surrogates, format characters (Cf: bidi controls such as U+202E reorder the text
    around them, "Trojan Source"; zero-width characters; U+FEFF), separators other than
    the space (U+00A0, U+2028, U+2029), and a combining mark first in the literal (it
    would sit on the opening quote).
    """
    code = ord(ch)
    if code < 0x20 or 0x7F <= code <= 0x9F or 0xD800 <= code <= 0xDFFF:
        return True
    category = unicodedata.category(ch)
    return category == "Cf" or (category[0] == "Z" and ch != " ") or (first and category[0] == "M")


def _name(value: str, reserved: frozenset[str] = frozenset()) -> str:
    """A name bare where it is a bare word, quoted otherwise: `search`, `"web-search"`."""
    if _NAME.match(value) and value not in reserved:
        return value
    return quote(value)


# ---- what the source says besides the AST ----------------------------------------------


@attrs.frozen
class Comment:
    """`# text` at `[start, end)` of the source (end before any `\\r`)."""

    start: int
    end: int
    text: str


def scan_comments(text: str) -> tuple[list[Comment], str]:
    """The comments of a text, and the text masked: comments turned to spaces, strings,
    regexes and paths turned to `_` (same length, same newlines)."""
    # (imported here: the scanner is made from Lark's terminals, and the run history keys
    # assertions by `canonical_statement`, which needs neither: a run would load Lark)
    from evaldsl.syntax.recovery import scanner

    comments: list[Comment] = []
    masked = list(text)
    for m in scanner().finditer(text):
        if m.lastgroup not in ("skip", "bad"):
            continue
        start, end = m.span()
        if text[start] == "#":
            body = text[start:end].rstrip()
            comments.append(Comment(start, start + len(body), body))
            masked[start:end] = " " * (end - start)
        else:
            masked[start:end] = "_" * (end - start)
    return comments, "".join(masked)


@attrs.frozen
class _Stmt:
    """A statement and where its text is: `[start, end)` without white space or a comment
    after it."""

    node: ast.Statement
    start: int
    end: int


@attrs.define
class _Line:
    """Statements printed on one line, joined by `; `, and the comment that ends the line."""

    stmts: list[_Stmt]
    trailing: Comment | None = None

    @property
    def start(self) -> int:
        return self.stmts[0].start

    @property
    def end(self) -> int:
        return self.trailing.end if self.trailing else self.stmts[-1].end

    @property
    def is_case(self) -> bool:
        return isinstance(self.stmts[0].node, ast.CaseDecl)


_Element = _Line | Comment


# ---- printing statements -----------------------------------------------------------------


class _Printer:
    """Prints AST nodes as canonical text; places the comments found inside multi-line lists
    and objects (it `claims` them); reads numbers as written from the source."""

    def __init__(
        self, text: str, masked: str, comments: Sequence[Comment], *, flat: bool = False
    ) -> None:
        self.text = text
        self.masked = masked
        self.comments = comments
        # `canonical_statement`: every list and object on one line, thresholds as plain
        # numbers (neither needs the masked text nor the comments)
        self.flat = flat
        self._starts = [c.start for c in comments]
        self.claimed: set[int] = set()  # indexes into comments

    def comments_in(self, start: int, end: int) -> list[int]:
        """Indexes of the comments that start within `[start, end)`."""
        lo = bisect.bisect_left(self._starts, start)
        hi = bisect.bisect_left(self._starts, end)
        return list(range(lo, hi))

    # -- statements

    def statement(self, node: ast.Statement, indent: str) -> str:
        match node:
            case ast.SuiteDecl(name=name):
                return f"suite {quote(name)}"
            case ast.NamesDecl(kind=kind, names=names):
                return f"{kind} " + ", ".join(self.value(n, indent) for n in names)
            case ast.JudgeDecl(model=model):
                return f"judge model {quote(model)}"
            case ast.TimeoutDecl(duration=duration):
                return f"timeout {duration.text}"
            case ast.CaseDecl(name=name):
                return f"case {quote(name)}"
            case ast.SourceDecl(kind=kind, path=path, format=fmt):
                return f"{kind} {quote(path)}" + (f" as {fmt}" if fmt is not None else "")
            case ast.RunDecl(target=target):
                return "run " + (target if _TARGET.match(target) else quote(target))
            case ast.ValueDecl(kind=kind, value=value):
                return f"{kind} {self.value(value, indent)}"
            case ast.Check() | ast.NoTool() | ast.NodeVisited() | ast.Not() | ast.And() | ast.Or():
                return self.expr(node, indent)
            case _:
                assert_never(node)

    # -- assertions

    def expr(self, node: ast.Expr, indent: str) -> str:
        match node:
            case ast.Or(operands=ops):
                return " or ".join(self._operand(op, indent, (ast.Or,)) for op in ops)
            case ast.And(operands=ops):
                return " and ".join(self._operand(op, indent, (ast.Or, ast.And)) for op in ops)
            case ast.Not(operand=op):
                return "not " + self._operand(op, indent, (ast.Or, ast.And))
            case ast.NoTool(name=name):
                return f"no tool {_name(name)}"
            case ast.NodeVisited(name=name):
                return f"node {_name(name)} visited"
            case ast.Check(subject=subject, predicate=predicate, every=every):
                head = f"every tool {_name(subject.name or '')}" if every else self.subject(subject)
                return f"{head} {self.predicate(predicate, indent)}"
            case _:
                assert_never(node)

    def _operand(
        self,
        node: ast.Expr,
        indent: str,
        grouped: tuple[type[ast.Or] | type[ast.And], ...],
    ) -> str:
        text = self.expr(node, indent)
        return f"({text})" if isinstance(node, grouped) else text

    def subject(self, s: ast.Subject) -> str:
        kind = s.kind
        match kind:
            case "answer":
                return "answer" if s.index is None else f"answer[{s.index}]"
            case "answer_json":
                head = "answer" if s.index is None else f"answer[{s.index}]"
                return f"{head} json" + (f" {s.path}" if s.path is not None else "")
            case "output" | "memory":
                return kind + self.keys(s.keys)
            case "state":
                first, *rest = s.keys
                return f"state.{first.key}" + self.keys(rest)
            case "tool":
                return f"tool {_name(s.name or '', _TOOL_SUBJECT_WORDS)}"
            case (
                "status"
                | "nodes"
                | "tools"
                | "tokens"
                | "input_tokens"
                | "output_tokens"
                | "steps"
                | "tool_calls"
                | "guards"
                | "errors"
                | "latency"
                | "cost"
                | "budget"
            ):
                return _SUBJECT_WORDS[kind]
            case _:
                assert_never(kind)

    @staticmethod
    def keys(keys: Sequence[ast.Key]) -> str:
        parts: list[str] = []
        for k in keys:
            if isinstance(k.key, int):
                parts.append(f"[{k.key}]")
            elif _NAME.match(k.key):
                parts.append(f".{k.key}")
            else:
                parts.append(f"[{quote(k.key)}]")
        return "".join(parts)

    # -- predicates: each family prints its own (the `Printer` protocol)

    def predicate(self, p: ast.Predicate, indent: str) -> str:
        return registry.family_of(p).print(self, p, indent)

    @staticmethod
    def quote(value: str) -> str:
        return quote(value)

    @staticmethod
    def name(value: str) -> str:
        return _name(value)

    def number(self, value: float, span: Span) -> str:
        """The number after the first comparison within `span`, as written (`0.70` stays
        `0.70`), strings and comments masked out."""
        op = None if self.flat else _CMP.search(self.masked, span.start, span.end)
        if op is not None:
            at = op.end()
            while at < span.end and self.masked[at] in _WS:
                at += 1
            number = _NUMBER.match(self.text, at)
            if number is not None and float(number.group()) == value:
                return number.group()
        if math.isinf(value):
            return "1e999" if value > 0 else "-1e999"
        return repr(value)

    # -- values

    def value(self, v: ast.Value, indent: str, *, flat: bool = False) -> str:
        match v:
            case ast.Str(value=s):
                return quote(s)
            case ast.Name(value=name):
                return name
            case ast.Num(value=n):
                written = self.text[v.span.start : v.span.end]
                if _NUMBER.fullmatch(written) and _same_number(written, n):
                    return written
                return repr(n)
            case ast.Bool(value=b):
                return "true" if b else "false"
            case ast.Null():
                return "null"
            case ast.Duration(text=text) | ast.Money(text=text):
                return text
            case ast.ListLit() | ast.ObjectLit():
                return self.literal(v, indent, flat=flat)
            case _:
                assert_never(v)

    def literal(self, v: ast.ListLit | ast.ObjectLit, indent: str, *, flat: bool) -> str:
        if isinstance(v, ast.ListLit):
            keys: list[str | None] = [None] * len(v.items)
            values = list(v.items)
            brackets = "[]"
        else:
            keys = [k for k, _ in v.pairs]
            values = [x for _, x in v.pairs]
            brackets = "{}"
        start, end = v.span.start, v.span.end
        inside = self.comments_in(start + 1, end - 1) if end > start else []
        spread = end > start and "\n" in self.text[start:end] and (values or inside)
        bare_case = any(
            (k is None and isinstance(x, ast.Name) and x.value == "case")
            or (k is not None and k == "case")
            for k, x in zip(keys, values, strict=True)
        )
        if flat or self.flat or not spread or bare_case:
            # One line. (A line that starts with a bare `case` inside brackets would open
            # a case in the parser's eyes, hence bare_case.)
            items = [self._item(k, x, indent, flat=True) for k, x in zip(keys, values, strict=True)]
            return brackets[0] + ", ".join(items) + brackets[1]
        inner = indent + _INDENT
        items = [self._item(k, x, inner, flat=False) for k, x in zip(keys, values, strict=True)]
        # Place the comments nested literals did not take: after the opening bracket, on
        # the line before an item, after an item, or before the closing bracket.
        ends = [x.span.end for x in values]
        # (items are in the text's order and do not overlap: the item a comment is inside
        # is the last to start before it, found by halving, where a scan of every item
        # for every comment made a long list with comments quadratic)
        starts = [x.span.start for x in values]
        opening: list[Comment] = []
        before: list[list[Comment]] = [[] for _ in values]
        after: list[list[Comment]] = [[] for _ in values]
        closing: list[Comment] = []
        for i in inside:
            if i in self.claimed:
                continue
            self.claimed.add(i)
            c = self.comments[i]
            within = bisect.bisect_right(starts, c.start) - 1
            if within >= 0 and c.start < ends[within]:
                before[within].append(c)
                continue
            k = bisect.bisect_right(ends, c.start)
            if k == 0:
                if "\n" not in self.text[start : c.start]:
                    opening.append(c)
                else:
                    (before[0] if values else closing).append(c)
            elif "\n" not in self.text[ends[k - 1] : c.start]:
                after[k - 1].append(c)
            elif k < len(values):
                before[k].append(c)
            else:
                closing.append(c)
        lines = [brackets[0] + "".join("  " + c.text for c in opening)]
        for k, item in enumerate(items):
            lines += [inner + c.text for c in before[k]]
            lines.append(inner + item + "," + "".join("  " + c.text for c in after[k]))
        lines += [inner + c.text for c in closing]
        lines.append(indent + brackets[1])
        return "\n".join(lines)

    def _item(self, key: str | None, value: ast.Value, indent: str, *, flat: bool) -> str:
        text = self.value(value, indent, flat=flat)
        return text if key is None else f"{_name(key)}: {text}"


def _same_number(written: str, value: int | float) -> bool:
    try:
        parsed: int | float = int(written)
    except ValueError:
        parsed = float(written)
    return parsed == value and type(parsed) is type(value)


# ---- laying out a file -----------------------------------------------------------------


def _pieces(masked: str) -> list[tuple[int, int]]:
    """Cut masked text at `;` and newlines outside brackets, as the grammar separates
    statements (inside brackets a newline is white space)."""
    pieces: list[tuple[int, int]] = []
    start = depth = 0
    for m in _SEPARATORS.finditer(masked):
        ch = m.group()
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(0, depth - 1)
        elif not depth:
            pieces.append((start, m.start()))
            start = m.end()
    pieces.append((start, len(masked)))
    return pieces


def _statements(masked: str, program: ast.Program) -> list[_Stmt]:
    """Each statement with the range of its text: the piece of text it was cut from,
    without the white space and comment around it."""
    pieces = _pieces(masked)
    starts = [b for b, _ in pieces]
    out: list[_Stmt] = []
    used: set[int] = set()
    for node in program.statements:
        i = bisect.bisect_right(starts, node.span.start) - 1
        if i in used:  # pragma: no cover - one statement per piece, by the grammar
            raise FormatterError("two statements in one piece of text (a formatter bug)")
        used.add(i)
        b, e = pieces[i]
        piece = masked[b:e]
        start = b + len(piece) - len(piece.lstrip(_WS))
        end = b + len(piece.rstrip(_WS))
        out.append(_Stmt(node, start, end))
    return out


def _elements(text: str, stmts: list[_Stmt], comments: list[Comment]) -> list[_Element]:
    """Lines (statements joined by `;` on one source line) and comments on lines of their
    own, in source order."""
    lines: list[_Line] = []
    owner: list[_Line] = []  # the line of each statement
    for s in stmts:
        prev = lines[-1] if lines else None
        if (
            prev is not None
            and not prev.is_case
            and not isinstance(s.node, ast.CaseDecl)
            and "\n" not in text[prev.stmts[-1].end : s.start]
        ):
            prev.stmts.append(s)
        else:
            lines.append(_Line([s]))
        owner.append(lines[-1])
    ends = [s.end for s in stmts]
    elements: list[_Element] = list(lines)
    for c in comments:
        k = bisect.bisect_right(ends, c.start)  # statements ending before the comment
        if k < len(stmts) and stmts[k].start <= c.start:
            continue  # inside a statement: the printer places it
        if k and "\n" not in text[ends[k - 1] : c.start]:
            owner[k - 1].trailing = c
        else:
            elements.append(c)
    elements.sort(key=lambda el: el.start)
    return elements


def _layout(text: str, elements: list[_Element], printer: _Printer) -> str:
    def blank_between(i: int) -> bool:
        return text.count("\n", elements[i - 1].end, elements[i].start) >= 2

    blank = [i > 0 and blank_between(i) for i in range(len(elements))]
    for i, el in enumerate(elements):
        if isinstance(el, _Line) and el.is_case:
            # a blank line before the case, above the comments right on top of it
            j = i
            while j > 0 and isinstance(elements[j - 1], Comment) and not blank[j]:
                j -= 1
            if j > 0:
                blank[j] = True

    # Indentation: a case line at column 0, the lines after it two spaces in. A comment is
    # indented like the line after it; but when a blank line parts it from the case line
    # that follows, it ends the case before, and is indented like that case's lines.
    indents: list[str] = []
    in_case = False
    for el in elements:
        if isinstance(el, _Line) and el.is_case:
            in_case = True
            indents.append("")
        else:
            indents.append(_INDENT if in_case else "")
    following, to_case, parted = (_INDENT if in_case else ""), False, False
    for i in range(len(elements) - 1, -1, -1):
        el = elements[i]
        if isinstance(el, _Line):
            following, to_case, parted = indents[i], el.is_case, blank[i]
            continue
        if not (to_case and parted):
            indents[i] = following
        parted = parted or blank[i]

    out: list[str] = []
    for i, el in enumerate(elements):
        if blank[i]:
            out.append("")
        indent = indents[i]
        if isinstance(el, Comment):
            out.append(indent + el.text)
            continue
        body = "; ".join(printer.statement(s.node, indent) for s in el.stmts)
        for s in el.stmts:  # comments inside the statement that no literal took: above it
            for k in printer.comments_in(s.start, s.end):
                if k not in printer.claimed:
                    printer.claimed.add(k)
                    out.append(indent + printer.comments[k].text)
        trailing = f"  {el.trailing.text}" if el.trailing else ""
        out.append(indent + body + trailing)
    return "\n".join(out) + "\n" if out else ""


# ---- the entry points -------------------------------------------------------------------


def format_text(text: str, path: str = "<string>") -> str:
    """`text` in the canonical layout. Raises `EvalDslError` when it has syntax errors,
    `FormatterError` if the result would not mean the same (a bug; nothing to write).

    >>> format_text("case 'a'\\ncassette 'x.jsonl'\\ntool  a called;answer contains 'x'")
    'case "a"\\n  cassette "x.jsonl"\\n  tool a called; answer contains "x"\\n'

    The file's line ending is kept: text whose first line ends with `\\r\\n` comes back
    with `\\r\\n` after every line (a Windows checkout stays as git wrote it).

    >>> format_text("case 'a'\\r\\n steps>=1\\n")
    'case "a"\\r\\n  steps >= 1\\r\\n'
    """
    text = text.removeprefix("\ufeff")
    lone = lone_carriage_return(path, text)
    if lone is not None:  # (an old Mac file: one line for evaldsl, many for its editor)
        raise EvalDslError([lone])
    first, newline, _ = text.partition("\n")
    crlf = bool(newline) and first.endswith("\r")
    with paused_gc():  # many small objects, no cycles (see gcpause)
        result = parse(text, path)
        if result.diagnostics:
            raise EvalDslError(result.diagnostics)
        comments, masked = scan_comments(text)
        printer = _Printer(text, masked, comments)
        stmts = _statements(masked, result.program)
        formatted = _layout(text, _elements(text, stmts, comments), printer)
        _verify(result.program, comments, formatted, path)
    # (every newline of the layout is one the printer wrote: strings, regexes and
    # comments never hold one)
    return formatted.replace("\n", "\r\n") if crlf else formatted


def _verify(program: ast.Program, comments: list[Comment], formatted: str, path: str) -> None:
    """The formatted text parses to the same program and holds the same comments."""
    again = parse(formatted, path)
    if again.diagnostics:
        raise FormatterError(
            "formatting would break the file (a formatter bug):\n" + render(again.diagnostics)
        )
    if again.program != program:
        for k, (a, b) in enumerate(zip(program.statements, again.program.statements, strict=False)):
            if a != b:
                raise FormatterError(
                    f"formatting would change statement {k + 1} (a formatter bug): "
                    f"{a!r} became {b!r}"
                )
        raise FormatterError("formatting would change the number of statements (a formatter bug)")
    # (Comments moved above a statement may change order with ones kept inside it.)
    if sorted(c.text for c in scan_comments(formatted)[0]) != sorted(c.text for c in comments):
        raise FormatterError("formatting would lose comments (a formatter bug)")


def canonical_statement(text: str) -> str:
    """One assertion's text in the canonical form, on one line: what `evaldsl fmt` prints
    for it, with lists and objects written over several lines joined onto one, a judge
    threshold as a plain number (`0.70` → `0.7`) and comments left out. Two spellings of
    one assertion give the same text, so it identifies an assertion across reformatting
    (the run history keys on it). Text that is not exactly one assertion comes back with
    its white space squeezed.

    >>> canonical_statement("tool  'get_weather'   called 1 times")
    'tool get_weather called 1 time'
    >>> canonical_statement('tools in order [\\n  search,  # first\\n  get_weather,\\n]')
    'tools in order [search, get_weather]'
    """
    text = text.removeprefix("\ufeff")
    result = parse(text)
    statements = result.program.statements
    if result.diagnostics or len(statements) != 1:
        return " ".join(text.split())
    node = statements[0]
    if not isinstance(node, ast.Check | ast.NoTool | ast.NodeVisited | ast.Not | ast.And | ast.Or):
        return " ".join(text.split())
    return _Printer(text, text, (), flat=True).expr(node, "")


def check_text(text: str, path: str = "<string>") -> bool:
    """Whether `text` is already in the canonical layout (raises like `format_text`)."""
    return format_text(text, path) == text


def _lines(text: str) -> list[str]:
    """Lines with their newline (only `\\n` ends a line, as in the parser)."""
    parts = text.split("\n")
    return [p + "\n" for p in parts[:-1]] + ([parts[-1]] if parts[-1] else [])


def unified_diff(old: str, new: str, path: str) -> str:
    """A unified diff from `old` to `new`, as `diff -u` and `git apply` read it.

    >>> print(unified_diff("a\\nb", "a\\nc\\n", "x.eval"), end="")
    --- x.eval
    +++ x.eval
    @@ -1,2 +1,2 @@
     a
    -b
    \\ No newline at end of file
    +c
    """
    import difflib  # (only `fmt --diff` shows one: the run history imports this module)

    out: list[str] = []
    for line in difflib.unified_diff(_lines(old), _lines(new), fromfile=path, tofile=path):
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def _eval_files(root: Path) -> tuple[list[Path], list[str]]:
    """The `.eval` suites under a folder, walked as `run` walks one (`walk_folder`), and
    why each folder under it that cannot be read was not."""
    files, unreadable = walk_folder(root)
    found = [
        sub
        for sub in map(Path, files)
        # (an Inspect AI log is no suite)
        if sub.suffix.lower() == ".eval" and is_regular(sub) and not starts_as_zip(sub)
    ]
    unreadable += [why for sub in files if (why := broken_suite_link(sub)) is not None]
    return found, unreadable


def _said(path: str | Path) -> str:
    """A path as `fmt`'s messages name it: a control character in a file's name shown as
    its escape, never acted on by the terminal (the diff keeps it: `git apply` reads it)."""
    return visible(str(path), newlines=False)


def fmt_command(paths: list[str], *, check: bool, diff: bool, out: TextIO, err: TextIO) -> int:
    """`evaldsl fmt PATH... [--check] [--diff]`: format `.eval` files (folders are searched,
    hidden folders skipped).

    Rewrites each file that changes in place and prints `reformatted PATH`. With `check`,
    prints `would reformat PATH` instead, and with `diff` a unified diff (then the `would
    reformat` lines go to `err`); neither writes.
    A file with syntax errors is reported (rendered diagnostics on `err`) and left alone,
    as is a YAML or JSON suite or an Inspect AI log named explicitly (said as what it is).
    A folder holding no `.eval` file is said on `err` (the exit stays 0: nothing to do).
    Exit code: 0 all fine (or all rewritten); 1 a file would change (`check`/`diff`) or
    could not be formatted; 2 a path does not exist.
    """
    files: list[Path] = []
    missing = [p for p in paths if not present(p)]
    for m in missing:
        print(f"evaldsl: error: no such file or folder: {_said(m)}", file=err)
    if missing:
        return 2
    status = 0
    for raw in paths:
        p = Path(raw)
        if is_folder(p):
            found, unreadable = _eval_files(p)  # (Inspect AI logs passed by)
            for said in unreadable:  # (its suites would go unformatted, unsaid)
                print(f"evaldsl: error: {said}", file=err)
                status = 1
            if not found:
                # (a folder named by mistake, or suites spelt `.yaml`: silence said "all
                # formatted" of files never looked at; the exit stays 0, nothing to do)
                print(f"evaldsl fmt: no .eval files in {_said(p)}: nothing to format", file=err)
            files.extend(found)
        elif starts_as_zip(p):
            print(
                f"evaldsl: error: not formatted: {_said(p)} is an Inspect AI log, not a suite",
                file=err,
            )
            status = 1
        elif p.suffix.lower() in YAML_SUFFIXES:
            # (read as `.eval` text it failed at its first `key:`, as a syntax error)
            print(
                f"evaldsl: error: not formatted: {_said(p)} is a YAML or JSON suite; fmt lays out "
                f"`.eval` files (`evaldsl convert {_said(p)}` prints it as one)",
                file=err,
            )
            status = 1
        else:
            files.append(p)
    for f in files:
        try:  # a regular file only: a pipe or a device is refused, never waited on
            data = read_regular(f, MAX_SUITE_BYTES)
            text = data.decode("utf-8")
        except OSError as error:
            print(f"evaldsl: error: cannot read {_said(f)}: {error}", file=err)
            status = 1
            continue
        except UnicodeDecodeError as error:  # (said as `check` says it)
            print(render([not_utf8(str(f), data, error)]), file=err)
            print(f"evaldsl: error: not formatted: {_said(f)}", file=err)
            status = 1
            continue
        try:
            formatted = format_text(text, str(f))
        except EvalDslError as error:
            print(render(error.errors or error.diagnostics), file=err)
            print(f"evaldsl: error: not formatted (syntax errors): {_said(f)}", file=err)
            status = 1
            continue
        except FormatterError as error:
            print(f"evaldsl: error: not formatted: {_said(f)}: {error}", file=err)
            status = 1
            continue
        if formatted == text:
            continue
        if diff:  # the diff alone on `out`, so it can be piped to `git apply`
            out.write(unified_diff(text, formatted, str(f)))
        if check:
            print(f"would reformat {_said(f)}", file=err if diff else out)
        if check or diff:
            status = 1
            continue
        try:
            write_atomically(f, formatted)  # a symlink stays a symlink
        except OSError as error:
            print(f"evaldsl: error: cannot write {_said(f)}: {error}", file=err)
            status = 1
            continue
        print(f"reformatted {_said(f)}", file=out)
    return status
