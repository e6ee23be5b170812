"""Parse evaldsl text into AST nodes; report syntax errors as diagnostics.

Takes source text (a whole `.eval` file, or the assertion list a YAML suite embeds) and
gives a `ParseResult`: a `Program` holding every statement that parsed, and one
diagnostic per statement that did not. The Lark tree never leaves this module.

How it works, and why:
- Text that parses is parsed by one Lark call (the fast path: one parser state for the
  whole file, about 30% faster than one per statement). Text with an error is cut into
  statements at `;` and newlines (outside strings, regexes, paths and brackets) by a
  scanner built from the grammar's own terminals, and each statement is parsed on its
  own, so one bad statement never hides the next: every syntax error of a file comes out
  of one pass (statement-level recovery) without touching Lark's parser internals. An
  unclosed bracket ends at the next line that starts like a statement.
- The cyclic garbage collector is paused while parsing: the AST holds no cycles, and the
  collections its allocations trigger would rescan the caller's whole heap.
- The AST is built during the parse by an embedded Lark transformer (no parse tree is
  built, about 40% faster than tree + Transformer). Embedded transformers cannot receive
  `meta`, so the grammar keeps every keyword token and spans are read from tokens.
"""

from __future__ import annotations

import gc
import json
import re
import threading
from collections.abc import Iterator, Sequence
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any, Literal, cast

import attrs
from lark import Lark, Token, Transformer
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken
from lark.lexer import ContextualLexer
from lark.parsers.lalr_analysis import Shift

from evaldsl import ast
from evaldsl.diagnostics import Diagnostic, did_you_mean
from evaldsl.source import Source, Span
from evaldsl.vocabulary import SUBJECTS

Start = Literal["file", "statements"]


@attrs.frozen
class ParseResult:
    """What `parse` gives: the program (every statement that parsed) and syntax errors."""

    program: ast.Program
    diagnostics: tuple[Diagnostic, ...]
    source: Source

    @property
    def ok(self) -> bool:
        return not self.diagnostics


def grammar_text() -> str:
    """The grammar, from the source tree or from inside the installed wheel."""
    here = Path(__file__).resolve().parent.parent / "grammar" / "evaldsl.lark"
    if here.is_file():
        return here.read_text(encoding="utf-8")
    return resources.files("evaldsl.grammar").joinpath("evaldsl.lark").read_text(encoding="utf-8")


# ---- tokens to AST --------------------------------------------------------------------

_PUNCT = frozenset(
    {"LSQB", "RSQB", "LBRACE", "RBRACE", "LPAR", "RPAR", "COMMA", "COLON", "SEMICOLON", "DOT"}
)
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
_SINGLE_ESCAPES = re.compile(r"\\'|\\.|\"")


def decode_string(raw: str) -> str:
    """The text a string literal stands for: `"a\\nb"` → a, newline, b; `'it\\'s'` → it's."""
    body = raw[1:-1]
    if "\\" not in body:
        return body
    if raw[0] == "'":
        # Turn the single-quoted body into a JSON string body, then let json decode it
        # (that handles \\uXXXX surrogate pairs exactly as JSON does).
        body = _SINGLE_ESCAPES.sub(
            lambda m: "'" if m.group() == "\\'" else ('\\"' if m.group() == '"' else m.group()),
            body,
        )
    # strict=False: a raw tab inside a string is text, as it is without escapes
    return cast(str, json.loads('"' + body + '"', strict=False))


def parse_duration(text: str) -> float:
    """Seconds in a duration literal: `250ms` → 0.25, `1.5m` → 90.0."""
    number = text.rstrip("smh")
    unit = text[len(number) :]
    return float(number) * _UNITS[unit]


def _number(text: str) -> int | float:
    try:
        return int(text)
    except ValueError:
        return float(text)


# A Span straight from the tuple constructor: the named tuple's own `__new__` is a Python
# function, and spans are made for every node and token.
_new_span = tuple.__new__


class _Inline:
    """The children of a rule Lark inlines into its parent."""

    __slots__ = ("children",)

    def __init__(self, children: list[Any]) -> None:
        self.children = children


class _Builder(Transformer[Token, Any]):
    """Lark callbacks, one per grammar rule or alias, each building one AST node.

    `base` is the offset of the statement being parsed within the whole text, so spans
    come out in whole-text offsets.
    """

    def __init__(self) -> None:
        super().__init__(visit_tokens=False)
        self.base = 0

    def __default__(self, data: Any, children: list[Any], meta: Any) -> Any:
        # Rules with no callback (`_sep`, `_file_stmt`, repetitions) are inlined into their
        # parent, which only reads `.children`: a slotted holder is enough, not a Tree.
        return _Inline(children)

    # -- helpers

    # Spans are built for every node: these run once per token, so they stay lean (no
    # `cast` calls, no intermediate spans). Children come in source order, so a node spans
    # from its first child's start to its last child's end.

    def _tspan(self, tok: Token) -> Span:
        base = self.base
        return _new_span(Span, (base + tok.start_pos, base + tok.end_pos))  # type: ignore[operator]

    def _start(self, item: Any) -> int:
        if isinstance(item, Token):
            return self.base + item.start_pos  # type: ignore[operator]
        if isinstance(item, tuple):  # an object pair: (key token, value)
            return self._start(item[0])
        return item.span.start  # type: ignore[no-any-return]

    def _end(self, item: Any) -> int:
        if isinstance(item, Token):
            return self.base + item.end_pos  # type: ignore[operator]
        if isinstance(item, tuple):
            return self._end(item[1])
        return item.span.end  # type: ignore[no-any-return]

    def _span(self, children: Sequence[Any]) -> Span:
        # `_start` and `_end` written out: this runs for every node
        first, last = children[0], children[-1]
        start = (
            self.base + first.start_pos  # type: ignore[operator]
            if type(first) is Token
            else self._start(first)
        )
        end = (
            self.base + last.end_pos  # type: ignore[operator]
            if type(last) is Token
            else self._end(last)
        )
        return _new_span(Span, (start, end))

    def _value(self, item: Any) -> ast.Value:
        if not isinstance(item, Token):
            return cast(ast.Value, item)
        kind, text, span = item.type, str(item), self._tspan(item)
        if kind == "STRING":
            return ast.Str(decode_string(text), span=span)
        if kind in ("INT", "DECIMAL"):
            return ast.Num(_number(text), span=span)
        if kind == "NAME":
            return ast.Name(text, span=span)
        if kind == "TRUE":
            return ast.Bool(True, span=span)
        if kind == "FALSE":
            return ast.Bool(False, span=span)
        if kind == "NULL":
            return ast.Null(span=span)
        if kind == "DURATION":
            return ast.Duration(parse_duration(text), text, span=span)
        if kind == "MONEY":
            return ast.Money(float(text[1:]), text, span=span)
        raise AssertionError(f"unexpected value token {kind}")

    @staticmethod
    def _name(tok: Token) -> str:
        return decode_string(str(tok)) if tok.type == "STRING" else str(tok)

    @staticmethod
    def _nodes(children: Sequence[Any]) -> list[Any]:
        return [c for c in children if not isinstance(c, Token)]

    # -- programs

    def file(self, c: list[Any]) -> ast.Program:
        stmts = tuple(self._nodes(c))
        span = self._span(stmts) if stmts else Span(self.base, self.base)
        return ast.Program(stmts, span=span)

    statements = file

    # -- declarations

    def suite_decl(self, c: list[Any]) -> ast.SuiteDecl:
        return ast.SuiteDecl(decode_string(c[1]), span=self._span(c))

    def _names(self, kind: Literal["tools", "nodes"], c: list[Any]) -> ast.NamesDecl:
        names: list[ast.Name | ast.Str] = []
        for tok in c[1:]:
            if tok.type == "NAME":
                names.append(ast.Name(str(tok), span=self._tspan(tok)))
            elif tok.type == "STRING":
                names.append(ast.Str(decode_string(tok), span=self._tspan(tok)))
        return ast.NamesDecl(kind, tuple(names), span=self._span(c))

    def tools_decl(self, c: list[Any]) -> ast.NamesDecl:
        return self._names("tools", c)

    def nodes_decl(self, c: list[Any]) -> ast.NamesDecl:
        return self._names("nodes", c)

    def judge_decl(self, c: list[Any]) -> ast.JudgeDecl:
        return ast.JudgeDecl(decode_string(c[2]), span=self._span(c))

    def timeout_decl(self, c: list[Any]) -> ast.TimeoutDecl:
        return ast.TimeoutDecl(cast(ast.Duration, self._value(c[1])), span=self._span(c))

    def case_decl(self, c: list[Any]) -> ast.CaseDecl:
        return ast.CaseDecl(decode_string(c[1]), span=self._span(c))

    def cassette_src(self, c: list[Any]) -> ast.SourceDecl:
        return ast.SourceDecl("cassette", decode_string(c[1]), span=self._span(c))

    def state_src(self, c: list[Any]) -> ast.SourceDecl:
        return ast.SourceDecl("state", decode_string(c[1]), span=self._span(c))

    def dataset_src(self, c: list[Any]) -> ast.SourceDecl:
        return ast.SourceDecl("dataset", decode_string(c[1]), span=self._span(c))

    def trace_src(self, c: list[Any]) -> ast.SourceDecl:
        return ast.SourceDecl("trace", decode_string(c[1]), str(c[3]), span=self._span(c))

    def run_src(self, c: list[Any]) -> ast.RunDecl:
        return ast.RunDecl(self._name(c[1]), span=self._span(c))

    def input_src(self, c: list[Any]) -> ast.ValueDecl:
        return ast.ValueDecl("input", self._value(c[1]), span=self._span(c))

    def each_src(self, c: list[Any]) -> ast.ValueDecl:
        return ast.ValueDecl("each", self._value(c[1]), span=self._span(c))

    # -- assertions

    def assertion(self, c: list[Any]) -> ast.Expr:
        # A flat `t (and|or) t …` chain: `and` binds tighter than `or`.
        ors: list[ast.Expr] = []
        ands: list[ast.Expr] = [c[0]]
        for op, term in zip(c[1::2], c[2::2], strict=True):
            if op.type == "AND":
                ands.append(term)
            else:
                ors.append(self._join(ast.And, ands))
                ands = [term]
        ors.append(self._join(ast.And, ands))
        return self._join(ast.Or, ors)

    def _join(self, kind: type[ast.And] | type[ast.Or], items: list[ast.Expr]) -> ast.Expr:
        if len(items) == 1:
            return items[0]
        return kind(tuple(items), span=items[0].span.cover(items[-1].span))

    def negation(self, c: list[Any]) -> ast.Not:
        return ast.Not(c[1], span=self._span(c))

    def group(self, c: list[Any]) -> ast.Expr:
        # the span takes in the parentheses, so `not (a)` spans its `)` too
        return cast(ast.Expr, attrs.evolve(c[1], span=self._span(c)))

    def check(self, c: list[Any]) -> ast.Check:
        return ast.Check(c[0], c[1], span=self._span(c))

    def no_tool(self, c: list[Any]) -> ast.NoTool:
        return ast.NoTool(self._name(c[2]), span=self._span(c))

    def node_visited(self, c: list[Any]) -> ast.NodeVisited:
        return ast.NodeVisited(self._name(c[1]), span=self._span(c))

    def every_tool(self, c: list[Any]) -> ast.Check:
        subject = ast.Subject(
            "tool", name=self._name(c[2]), span=self._tspan(c[1]).cover(self._tspan(c[2]))
        )
        return ast.Check(subject, c[3], every=True, span=self._span(c))

    # -- subjects

    def _subject(self, kind: ast.SubjectKind, c: list[Any], **kw: Any) -> ast.Subject:
        return ast.Subject(kind, span=self._span(c), **kw)

    def answer(self, c: list[Any]) -> ast.Subject:
        return self._subject("answer", c)

    def answer_at(self, c: list[Any]) -> ast.Subject:
        return self._subject("answer", c, index=int(c[2]))

    def answer_json(self, c: list[Any]) -> ast.Subject:
        return self._subject("answer_json", c, path=str(c[2]) if len(c) > 2 else None)

    def answer_json_at(self, c: list[Any]) -> ast.Subject:
        # answer [ INT ] json PATH?
        path = str(c[5]) if len(c) > 5 else None
        return self._subject("answer_json", c, index=int(c[2]), path=path)

    def output(self, c: list[Any]) -> ast.Subject:
        return self._subject("output", c, keys=tuple(c[1:]))

    def memory(self, c: list[Any]) -> ast.Subject:
        return self._subject("memory", c, keys=tuple(c[1:]))

    def state_field(self, c: list[Any]) -> ast.Subject:
        first = ast.Key(str(c[2]), span=self._tspan(c[2]))
        return self._subject("state", c, keys=(first, *c[3:]))

    def tool(self, c: list[Any]) -> ast.Subject:
        return self._subject("tool", c, name=self._name(c[1]))

    def key_access(self, c: list[Any]) -> ast.Key:
        tok = c[1]
        return ast.Key(self._name(tok), span=self._span(c))

    def index_access(self, c: list[Any]) -> ast.Key:
        return ast.Key(int(c[1]), span=self._span(c))

    # -- predicates

    def called(self, c: list[Any]) -> ast.Called:
        count = c[1] if len(c) > 1 else ast.Count("any", 1, None, span=self._tspan(c[0]))
        return ast.Called(count, span=self._span(c))

    def never_called(self, c: list[Any]) -> ast.Called:
        return ast.Called(ast.Count("never", 0, 0, span=self._span(c)), span=self._span(c))

    def count_exact(self, c: list[Any]) -> ast.Count:
        n = int(c[0])
        return ast.Count("times", n, n, span=self._span(c))

    def count_once(self, c: list[Any]) -> ast.Count:
        return ast.Count("once", 1, 1, span=self._span(c))

    def count_twice(self, c: list[Any]) -> ast.Count:
        return ast.Count("twice", 2, 2, span=self._span(c))

    def count_at_least(self, c: list[Any]) -> ast.Count:
        return ast.Count("at_least", int(c[2]), None, span=self._span(c))

    def count_at_most(self, c: list[Any]) -> ast.Count:
        return ast.Count("at_most", 0, int(c[2]), span=self._span(c))

    def count_between(self, c: list[Any]) -> ast.Count:
        return ast.Count("between", int(c[1]), int(c[3]), span=self._span(c))

    def _call_test(self, target: Literal["args", "result"], c: list[Any]) -> ast.CallTest:
        path = str(c[1]) if len(c) == 3 else None
        return ast.CallTest(target, path, c[-1], span=self._span(c))

    def args(self, c: list[Any]) -> ast.CallTest:
        return self._call_test("args", c)

    def result(self, c: list[Any]) -> ast.CallTest:
        return self._call_test("result", c)

    def compare(self, c: list[Any]) -> ast.Compare:
        return ast.Compare(cast(Any, str(c[0])), self._value(c[1]), span=self._span(c))

    def contains(self, c: list[Any]) -> ast.Contains:
        return ast.Contains(self._value(c[1]), span=self._span(c))

    def matches(self, c: list[Any]) -> ast.Matches:
        raw = str(c[1])
        end = raw.rindex("/")
        regex = ast.Regex(raw[1:end], raw[end + 1 :], span=self._tspan(c[1]))
        return ast.Matches(regex, span=self._span(c))

    def _list_test(self, op: Any, c: list[Any]) -> ast.ListTest:
        return ast.ListTest(op, c[-1], span=self._span(c))

    def in_list(self, c: list[Any]) -> ast.ListTest:
        return self._list_test("in", c)

    def contains_all(self, c: list[Any]) -> ast.ListTest:
        return self._list_test("all", c)

    def contains_any(self, c: list[Any]) -> ast.ListTest:
        return self._list_test("any", c)

    def in_order(self, c: list[Any]) -> ast.ListTest:
        return self._list_test("in_order", c)

    def only(self, c: list[Any]) -> ast.ListTest:
        return self._list_test("only", c)

    def is_type(self, c: list[Any]) -> ast.IsType:
        return ast.IsType(cast(Any, str(c[1])), span=self._span(c))

    def is_empty(self, c: list[Any]) -> ast.Emptiness:
        return ast.Emptiness(True, span=self._span(c))

    def not_empty(self, c: list[Any]) -> ast.Emptiness:
        return ast.Emptiness(False, span=self._span(c))

    def exists(self, c: list[Any]) -> ast.Exists:
        return ast.Exists(span=self._span(c))

    def starts_with(self, c: list[Any]) -> ast.TextEdge:
        text = ast.Str(decode_string(c[2]), span=self._tspan(c[2]))
        return ast.TextEdge(True, text, span=self._span(c))

    def ends_with(self, c: list[Any]) -> ast.TextEdge:
        text = ast.Str(decode_string(c[2]), span=self._tspan(c[2]))
        return ast.TextEdge(False, text, span=self._span(c))

    def has_key(self, c: list[Any]) -> ast.HasKey:
        return ast.HasKey(self._name(c[1]), span=self._span(c))

    def judged(self, c: list[Any]) -> ast.Judged:
        threshold: float | None = None
        op: str | None = None
        model: str | None = None
        i = 2
        if i < len(c) and c[i].type == "CMP_OP":
            op, threshold = str(c[i]), float(c[i + 1])
            i += 2
        if i < len(c) and c[i].type == "BY":
            model = decode_string(c[i + 1])
        return ast.Judged(decode_string(c[1]), threshold, op, model, span=self._span(c))

    def within_budget(self, c: list[Any]) -> ast.WithinBudget:
        return ast.WithinBudget(span=self._span(c))

    def cites(self, c: list[Any]) -> ast.Cites:
        # cites tool NAME PATH? (at least INT value(s))?
        rest = c[3:]
        path = str(rest[0]) if rest and rest[0].type == "PATH" else None
        at_least = int(rest[-2]) if rest and rest[-1].type in ("VALUE", "VALUES") else None
        return ast.Cites(self._name(c[2]), at_least, path, span=self._span(c))

    # -- values

    def list_lit(self, c: list[Any]) -> ast.ListLit:
        items = tuple(self._value(x) for x in c if not (isinstance(x, Token) and x.type in _PUNCT))
        return ast.ListLit(items, span=self._span(c))

    def pair(self, c: list[Any]) -> tuple[Token, ast.Value]:
        return (c[0], self._value(c[2]))

    def object_lit(self, c: list[Any]) -> ast.ObjectLit:
        pairs = tuple((self._name(k), v) for k, v in (x for x in c if isinstance(x, tuple)))
        return ast.ObjectLit(pairs, span=self._span(c))


def _simple_subject(kind: ast.SubjectKind) -> Any:
    def build(self: _Builder, c: list[Any]) -> ast.Subject:
        return self._subject(kind, c)

    return build


# Subjects without a syntax of their own (`status`, `tokens`, `tool calls`, …) build
# alike; the vocabulary is the list of them.
for _kind in SUBJECTS:
    if not hasattr(_Builder, _kind):
        setattr(_Builder, _kind, _simple_subject(cast(ast.SubjectKind, _kind)))


class _BracketNewlines:
    """Post-lexer: inside brackets a newline is white space, so lists may span lines."""

    always_accept = ("_NL",)

    def process(self, stream: Iterator[Token]) -> Iterator[Token]:
        depth = 0
        for tok in stream:
            kind = tok.type
            if kind == "_NL":
                if depth:
                    continue
            elif kind in ("LSQB", "LBRACE", "LPAR"):
                depth += 1
            elif kind in ("RSQB", "RBRACE", "RPAR") and depth:
                depth -= 1
            yield tok


def _plans(lexer: ContextualLexer) -> dict[int, tuple[Any, Any, Any]]:
    """Per parser state, what Lark's contextual lexer uses there: its scanner's regexes,
    the ignored terminals and the keyword callbacks (a NAME that spells a keyword accepted
    in that state becomes that keyword), so `drive` makes exactly Lark's tokens."""
    plans: dict[int, tuple[Any, Any, Any]] | None = getattr(lexer, "_evaldsl_plans", None)
    if plans is None:
        plans = {
            state: (sub.scanner._mres, sub.ignore_types, sub.callback)
            for state, sub in cast(dict[int, Any], lexer.lexers).items()
        }
        lexer._evaldsl_plans = plans  # type: ignore[attr-defined]
    return plans


_new_str = str.__new__
_OPEN_TYPES = frozenset({"LSQB", "LBRACE", "LPAR"})
_CLOSE_TYPES = frozenset({"RSQB", "RBRACE", "RPAR"})


def _tables(frontend: Any) -> dict[int, dict[str, tuple[bool, Any]]]:
    """Lark's parse table for `drive`: plain-string keys (Lark's rule names are Tokens,
    whose Python `__eq__` would run at every goto), and each entry `(shift?, target)`
    where a reduce's target is already (rule length, callback, origin name) (Lark's rules
    hash in Python too)."""
    cached = getattr(frontend, "_evaldsl_tables", None)
    if cached is None:
        parser = frontend.parser.parser
        callbacks = parser.callbacks
        cached = {
            state: {
                str(name): (True, arg)
                if action is Shift
                else (False, (len(arg.expansion), callbacks[arg], str(arg.origin.name)))
                for name, (action, arg) in row.items()
            }
            for state, row in parser.parse_table.states.items()
        }
        frontend._evaldsl_tables = cached
    return cast(dict[int, dict[str, tuple[bool, Any]]], cached)


def drive(lark: Lark, text: str, start: Start) -> Any | None:
    """Parse text that has no error in one loop over Lark's own LALR tables: the same
    per-state scanners as Lark's contextual lexer, the bracket rule of `_BracketNewlines`,
    and Lark's shift/reduce steps with the same callbacks (so the same AST), without the
    generators and method calls between them. None at the first thing that does not fit:
    the caller then parses with Lark's loop, which reports the error as Lark does. A test
    compares the two on every `.eval` file of the project and on generated text.
    """
    frontend = lark.parser
    parser = frontend.parser.parser
    table = parser.parse_table
    states = _tables(frontend)
    plans = _plans(frontend.lexer.lexer)
    state_stack: list[int] = [table.start_states[start]]
    value_stack: list[Any] = []
    end_state = table.end_states[start]
    pos, end = 0, len(text)
    depth = 0
    while True:
        if pos < end:
            char = text[pos]
            if char == " " or char == "\t":
                pos += 1
                continue
            scanners, ignore, token_callbacks = plans[state_stack[-1]]
            m = None
            for mre in scanners:
                m = mre.match(text, pos)
                if m:
                    break
            if m is None:
                return None
            kind = m.lastgroup
            after = m.end()
            if kind in ignore:
                pos = after
                continue
            # Token's own constructor, minus its argument shuffling: it runs once per token
            value = m.group(0)
            tok = _new_str(Token, value)
            tok.type = kind
            tok.start_pos = pos
            tok.value = value
            tok.line = tok.column = tok.end_line = tok.end_column = None
            tok.end_pos = after
            callback = token_callbacks.get(kind)
            if callback is not None:
                tok = callback(tok)
                kind = tok.type
            pos = after
            if kind == "_NL":
                if depth:
                    continue
            elif kind in _OPEN_TYPES:
                depth += 1
            elif kind in _CLOSE_TYPES and depth:
                depth -= 1
        else:
            kind, tok = "$END", None  # the end of the text: reduce what is left
        while True:
            entry = states[state_stack[-1]].get(kind)
            if entry is None:
                return None
            shift, target = entry
            if shift:
                if tok is None:
                    return None  # the end is never shifted
                state_stack.append(target)
                value_stack.append(tok)
                break
            size, build, origin = target
            if size:
                children = value_stack[-size:]
                del state_stack[-size:]
                del value_stack[-size:]
            else:
                children = []
            value = build(children)
            state_stack.append(states[state_stack[-1]][origin][1])
            value_stack.append(value)
            if tok is None and state_stack[-1] == end_state:
                return value_stack[-1]


# ---- the parser instances --------------------------------------------------------------

_local = threading.local()


@lru_cache(maxsize=1)
def _grammar() -> str:
    return grammar_text()


def _lark(with_builder: bool) -> tuple[Lark, _Builder | None]:
    """One Lark instance per thread (the builder carries per-parse state)."""
    key = "builder" if with_builder else "plain"
    cached = getattr(_local, key, None)
    if cached is None:
        builder = _Builder() if with_builder else None
        cached = (new_lark(builder), builder)
        setattr(_local, key, cached)
    return cast(tuple[Lark, _Builder | None], cached)


def new_lark(builder: _Builder | None) -> Lark:
    """A Lark LALR parser for the grammar (the AST built during the parse when a builder
    is given)."""
    return Lark(
        _grammar(),
        parser="lalr",
        lexer="contextual",
        start=["file", "statements"],
        keep_all_tokens=True,
        maybe_placeholders=False,
        postlex=_BracketNewlines(),
        transformer=builder,
    )


def interactive(text: str, start: Start = "file") -> Any:
    """A Lark interactive parser over `text` (for completion in the editor)."""
    lark, _ = _lark(False)
    return lark.parse_interactive(text, start=start)


# ---- cutting text into statements ------------------------------------------------------


@lru_cache(maxsize=1)
def _scanner() -> re.Pattern[str]:
    lark, _ = _lark(False)

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
    for m in _scanner().finditer(text):
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
def _statement_words() -> frozenset[str]:
    """The keywords a statement can start with (`answer`, `tool`, `case`, `not`, …)."""
    lark, _ = _lark(False)
    spell = _spellings()
    probe = lark.parse_interactive("", start="file")
    accepts = cast(set[str], probe.accepts())  # type: ignore[no-untyped-call]
    return frozenset(spell[n] for n in accepts if n in spell and spell[n].isalpha())


def _recover_unclosed(
    source: Source, begin: int, end: int, start: Start
) -> tuple[Diagnostic, list[tuple[int, int]]] | None:
    """Recovery from a bracket that is never closed (only called on a syntax error).

    Inside brackets newlines do not end a statement, so an unclosed `[` would swallow the
    lines after it. When the statement `text[begin:end]` has an unclosed bracket and a later
    line starts like a statement (`answer …`, `tool …`), the broken statement ends there:
    report it (at the bracket when it simply ran out), and give the rest back as statements.
    """
    text = source.text
    stack: list[int] = []
    for m in _scanner().finditer(text, begin, end):
        group = m.lastgroup
        if group == "open":
            stack.append(m.start())
        elif group == "close" and stack:
            stack.pop()
    if not stack:
        return None
    bracket = stack[0]
    words = _statement_words()
    cut = None
    for line in _LINE_WORD.finditer(text, text.find("\n", bracket, end) + 1 or end, end):
        if line.group(1) in words and line.start() > bracket:
            cut = line.start()
            break
    if cut is None:
        return None
    lark, builder = _lark(True)
    assert builder is not None
    builder.base = begin
    try:
        lark.parse(text[begin:cut], start=start)
        diagnostic = None  # pragma: no cover - an unclosed bracket never parses
    except UnexpectedInput as err:
        diagnostic = _syntax_diagnostic(source, err, begin, cut)
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


# ---- errors in the user's words --------------------------------------------------------

_WORDS: dict[str, str] = {
    "STRING": "a quoted string",
    "INT": "a number",
    "DECIMAL": "a number",
    "DURATION": "a duration such as `2s`",
    "MONEY": "an amount such as `$0.05`",
    "NAME": "a name",
    "REGEX": "a regex such as `/x/`",
    "PATH": "a JSONPath such as `$.city`",
    "CMP_OP": "a comparison (`==`, `!=`, `<`, `<=`, `>`, `>=`)",
    "JSON_TYPE": (
        "a JSON type (`string`, `number`, `integer`, `boolean`, `array`, `object`, `null`)"
    ),
    "TARGET": "a target such as `package.module:function`",
    "_NL": "the end of the statement",
    "SEMICOLON": "the end of the statement",
    "$END": "the end of the statement",
}

# Terminal sets that stand for one idea: said as that idea instead of a long list of words.
# (A statement or an assertion can start here; a predicate is expected; a value is expected.)
_SUBJECT_STARTS = frozenset({"ANSWER", "TOOL", "TOKENS", "MEMORY", "STATUS", "LATENCY"})
_STATEMENT_STARTS = frozenset({"CASE", "CASSETTE", "SUITE", "TOOLS"})
_PREDICATE_STARTS = frozenset({"CALLED", "CONTAINS", "MATCHES", "JUDGED"})
_VALUE_STARTS = frozenset({"STRING", "INT", "LSQB", "LBRACE"})
_JSON_TYPES = ["string", "number", "integer", "boolean", "array", "object", "null"]
_VALUE_TERMINALS = frozenset(
    {"STRING", "INT", "DECIMAL", "DURATION", "MONEY", "NAME", "TRUE", "FALSE", "NULL"}
    | {"LSQB", "LBRACE"}
)


def _keyword_spellings(lark: Lark) -> dict[str, str]:
    return {t.name: str(t.pattern.value) for t in lark.terminals if t.pattern.type == "str"}


@lru_cache(maxsize=1)
def _spellings() -> dict[str, str]:
    lark, _ = _lark(False)
    return _keyword_spellings(lark)


def _one_of(parts: list[str]) -> str:
    """`a`; `a or b`; `a, b or c` (and `…` past twelve)."""
    if len(parts) > 12:
        parts = [*parts[:11], "…"]
    if len(parts) == 1:
        return parts[0]
    return ", ".join(parts[:-1]) + " or " + parts[-1]


def _describe_expected(names: set[str]) -> tuple[str, list[str]]:
    """User words for a set of terminal names, and the keyword spellings among them.

    Never a terminal's name: a terminal without user words is left out.
    >>> _describe_expected({"TIME", "TIMES"})[0]
    '`time` or `times`'
    """
    spell = _spellings()
    keywords = sorted(spell[n] for n in names if n in spell and spell[n].isalpha())
    if "JSON_TYPE" in names:
        keywords += _JSON_TYPES
    if names >= _SUBJECT_STARTS:
        if names >= _STATEMENT_STARTS:
            return (
                'a statement: an assertion such as `answer contains "x"` or `tool search called`, '
                'or a line such as `case "name"` or `cassette "x.jsonl"`',
                keywords,
            )
        return (
            'an assertion such as `answer contains "x"`, `tool search called` or `not …`',
            keywords,
        )
    if names >= _PREDICATE_STARTS:
        return (
            "a predicate such as `contains`, `matches`, `==`, `called`, `is empty` or `judged`",
            keywords,
        )
    rest = set(names)
    parts: list[str] = []
    if names >= _VALUE_STARTS:
        rest -= _VALUE_TERMINALS
        parts.append(
            'a value (`"text"`, `42`, `2s`, `$0.05`, `true`, `null`, `[…]`, `{…}`, a name)'
        )
    parts += [
        f"`{spell[n]}`"
        for n in sorted(rest, key=lambda n: spell.get(n, n))
        if n in spell and spell[n].isalpha()
    ]
    parts += [
        f"`{spell[n]}`"
        for n in sorted(rest)
        if n in spell and not spell[n].isalpha() and n != "SEMICOLON"
    ]
    words: list[str] = []
    for n in sorted(rest, key=lambda n: (n in ("_NL", "SEMICOLON", "$END"), n)):
        if n in _WORDS and _WORDS[n] not in words:
            words.append(_WORDS[n])
    parts += words
    if not parts:
        return "something else", keywords
    return _one_of(parts), keywords


def _describe_found(tok: Token) -> str:
    if tok.type in ("$END", "_NL", "SEMICOLON"):
        return "the end of the statement"
    text = str(tok)
    return f"`{text}`" if len(text) <= 40 else f"`{text[:37]}...`"


_WORD_AT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _syntax_diagnostic(source: Source, err: UnexpectedInput, base: int, stop: int) -> Diagnostic:
    """One diagnostic for the first syntax error of the statement `text[base:stop]`."""
    text = source.text
    if isinstance(err, UnexpectedToken):
        tok = err.token
        expected = set(err.accepts or err.expected)
        at_end = tok.type in ("$END", "_NL", "SEMICOLON")
        if at_end:
            where = stop if tok.type == "$END" else base + (tok.start_pos or 0)
            start = _end_of_statement(text, where)
        else:
            start = base + (tok.start_pos or 0)
        end = start + (len(str(tok)) if not at_end else 1)
        wanted, keywords = _describe_expected(expected)
        glued = None if at_end else _glued_word(text, start)
        if glued is not None:
            # A keyword ran into the next letters (`bye` lexed as `by` + `e`): the word the
            # user wrote is the whole run of letters, and it is no keyword.
            start, end = glued
            word = text[start:end]
            guess = did_you_mean(word, [w for w in _spellings().values() if w.isalpha()])
            hint = f"did you mean `{guess}`?" if guess and guess != word else None
            return Diagnostic.at(source, Span(start, end), "E101", f"unknown word `{word}`", hint)
        hint = None
        if tok.type == "NAME" or (tok.type in _spellings() and str(tok).isalpha()):
            guess = did_you_mean(str(tok), keywords)
            if guess and guess != str(tok):
                hint = f"did you mean `{guess}`?"
        if hint is None and tok.type == "NAME" and "STRING" in expected and at_end is False:
            hint = f'text is quoted: "{tok}"'
        found = _describe_found(tok)
        return Diagnostic.at(
            source, Span(start, end), "E101", f"expected {wanted}, found {found}", hint
        )
    if isinstance(err, UnexpectedCharacters):
        pos = base + (err.pos_in_stream or 0)
        char = text[pos] if pos < len(text) else ""
        expected = set(err.allowed or ())
        wanted, keywords = _describe_expected(expected)
        if char in "\"'":
            return _string_diagnostic(source, pos, char)
        if char == "/":
            return Diagnostic.at(
                source,
                Span(pos, _line_end(text, pos)),
                "E102",
                "unterminated regex",
                "close it with / on the same line; write a literal / as \\/",
            )
        at_word = _WORD_AT.match(text, pos)
        if at_word:
            glued = _glued_word(text, pos)
            if glued is not None:  # `calledx`: a keyword ran into the next letters
                found_word = text[glued[0] : glued[1]]
                pool = [w for w in _spellings().values() if w.isalpha()]
                at = glued
            else:
                found_word, pool, at = at_word.group(), keywords, (pos, at_word.end())
            guess = did_you_mean(found_word, pool)
            hint = f"did you mean `{guess}`?" if guess and guess != found_word else None
            message = (
                f"unknown word `{found_word}`"
                if glued is not None
                else f"expected {wanted}, found `{found_word}`"
            )
            return Diagnostic.at(source, Span(*at), "E101", message, hint)
        shown = repr(char) if char.isspace() or not char else f"`{char}`"
        return Diagnostic.at(
            source, Span(pos, pos + 1), "E103", f"unexpected character {shown}; expected {wanted}"
        )
    if isinstance(err, UnexpectedEOF):  # pragma: no cover - LALR reports $END as a token
        return Diagnostic.at(source, Span(len(text), len(text)), "E101", "unexpected end of input")
    raise err  # pragma: no cover


_LOOSE_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'')
_ESCAPE = re.compile(r"\\(?:u[0-9a-fA-F]{4}|.)")
_GOOD_ESCAPES = {'"': frozenset('"\\/bfnrt'), "'": frozenset("'\"\\/bfnrt")}


def _string_diagnostic(source: Source, pos: int, quote: str) -> Diagnostic:
    """A string the lexer refused: an escape JSON does not know, or no closing quote."""
    text = source.text
    closed = _LOOSE_STRING.match(text, pos)
    if closed is not None:
        good = _GOOD_ESCAPES[quote]
        for bad in _ESCAPE.finditer(text, pos, closed.end()):
            if len(bad.group()) > 2 or bad.group()[1] in good:
                continue
            shown = bad.group()
            others = r" (and \' in single quotes)" if quote == "'" else ""
            return Diagnostic.at(
                source,
                Span(bad.start(), bad.start() + 2),
                "E104",
                f"unknown escape `{shown}` in a string",
                r"strings take JSON escapes: \n \t \r \" \\ \/ \b \f \uXXXX"
                + others
                + r"; write a backslash as \\",
            )
    return Diagnostic.at(
        source,
        Span(pos, _line_end(text, pos)),
        "E102",
        "unterminated string",
        f"close it with {quote} on the same line",
    )


def _is_word_char(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def _glued_word(text: str, pos: int) -> tuple[int, int] | None:
    """The whole word around `pos` when letters run on from the character before it."""
    if pos <= 0 or pos >= len(text) or not _is_word_char(text[pos]):
        return None
    if not _is_word_char(text[pos - 1]):
        return None
    start = pos
    while start > 0 and _is_word_char(text[start - 1]):
        start -= 1
    end = pos
    while end < len(text) and _is_word_char(text[end]):
        end += 1
    return start, end


def _line_end(text: str, pos: int) -> int:
    end = text.find("\n", pos)
    return end if end >= 0 else len(text)


def _end_of_statement(text: str, pos: int) -> int:
    """Where to point when a statement ends too early: just after its last character."""
    pos = min(pos, len(text))
    while pos > 0 and text[pos - 1] in " \t\r\n;":
        pos -= 1
    return pos


# ---- the entry point --------------------------------------------------------------------


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
    # 40% of the parse time beside a large compiled program). Pause it, as index.py does.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _parse(text, path, start, source)
    finally:
        if was_enabled:
            gc.enable()


def _parse(text: str, path: str, start: Start, source: Source | None) -> ParseResult:
    src = source or Source(text, path)
    lark, builder = _lark(True)
    assert builder is not None
    span = Span(0, len(text))
    # Most text parses: one Lark call for all of it is the fast path (one parser and lexer
    # state instead of one per statement). Only text with an error is parsed again,
    # statement by statement, to report every error of it.
    builder.base = 0
    whole = drive(lark, text, start)
    if whole is not None:
        return ParseResult(ast.Program(whole.statements, span=span), (), src)
    statements: list[ast.Statement] = []
    diagnostics: list[Diagnostic] = []
    pieces = split_statements(text)
    i = 0
    while i < len(pieces):
        begin, end = pieces[i]
        i += 1
        chunk = text[begin:end]
        if not chunk or chunk.isspace():
            continue
        builder.base = begin
        try:
            program = cast(ast.Program, lark.parse(chunk, start=start))
        except UnexpectedInput as err:
            recovered = _recover_unclosed(src, begin, end, start)
            if recovered is None:
                diagnostics.append(_syntax_diagnostic(src, err, begin, end))
            else:
                diagnostic, rest = recovered
                diagnostics.append(diagnostic)
                pieces[i:i] = rest
            continue
        statements.extend(program.statements)
    return ParseResult(ast.Program(tuple(statements), span=span), tuple(diagnostics), src)
