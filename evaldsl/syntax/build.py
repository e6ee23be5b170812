"""Building the AST: one callback per grammar rule, called by the parser as it reduces.

Takes the children of each grammar rule as Lark gives them (tokens and nodes already
built) and gives AST nodes with spans in whole-text offsets. Statements, declarations,
subjects and values are built here; each predicate family builds its own nodes (its
`rules`, from `evaldsl.predicates.registry`), through the `BuildKit` this builder is. No
rule goes unbuilt: a grammar rule without a callback is an error when this module is
imported, naming the rule, and Lark's own helper rules (named `_…`) are the only ones
inlined into their parent.

Limits are checked as nodes are built (README, "Limits"): an integer literal out of range
and a number that overflows are noted with a stand-in value, and so is nesting deeper than
`MAX_NESTING` (lists and objects, and assertions under `not`, `and`, `or`, counted
together); the parser turns the notes (`problems`) into diagnostics. Nothing here raises
on what the user wrote, and nothing later walks a node deeper than the limit.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any, Literal, NamedTuple, cast

import attrs

from evaldsl.cache.compiled import store, stored
from evaldsl.language import ast
from evaldsl.language.limits import (
    INFINITY_SPELLING,
    MAX_NESTING,
    finite_problem,
    integer_problem,
    nesting_problem,
    timeout_problem,
)
from evaldsl.language.slotinit import respanned
from evaldsl.language.source import Span
from evaldsl.language.vocabulary import SUBJECTS
from evaldsl.predicates.registry import RULES
from evaldsl.syntax.drivetables import Token
from evaldsl.syntax.grammar import cached_grammar
from evaldsl.syntax.literals import decode_string, parse_duration

#: Every AST node class: a child of a rule that is one of these has its span already.
_NODES = frozenset(
    c for c in vars(ast).values() if isinstance(c, type) and attrs.has(c) and hasattr(c, "span")
)

#: Punctuation terminals: dropped when a list or object is built.
PUNCT = frozenset(
    {"LSQB", "RSQB", "LBRACE", "RBRACE", "LPAR", "RPAR", "COMMA", "COLON", "SEMICOLON", "DOT"}
)

# A Span straight from the tuple constructor: the named tuple's own `__new__` is a Python
# function, and spans are made for every node and token.
_new_span = tuple.__new__


class Inline:
    """The children of one of Lark's helper rules (repetitions), inlined into its parent.
    Made by `inline`: a class without an `__init__` is called without a second frame."""

    __slots__ = ("children",)

    children: list[Any]


def inline(children: list[Any]) -> Inline:
    """The holder of a helper rule's children (the fast loop calls it for each)."""
    held = Inline()
    held.children = children
    return held


class Pair(NamedTuple):
    """An object literal's `key: value`, built by `pair` (a class of its own: a plain
    tuple among a rule's children is a token)."""

    key: Token
    value: ast.Value


class MissingRule(Exception):
    """A grammar rule has no build callback (a bug: the grammar and the builder disagree)."""


#: A problem noted while building: (span, code, message).
Problem = tuple[Span, str, str]


class Builder:
    """Lark callbacks, one per grammar rule or alias, each building one AST node.

    Lark finds them by name (`getattr`), as the fast loop's tables do: the builder needs
    no base class (Lark's `Transformer` would load Lark with it). Tokens are tuples,
    (terminal, text, start, end) (`drivetables.Token`): the fast loop makes them, and
    Lark's parser gives its own tokens as such (`grammar.TokenTuples`); no other child is
    a plain tuple.

    `base` is the offset of the statement being parsed within the whole text, so spans
    come out in whole-text offsets. `problems` collects the limits crossed since `reset`.
    """

    #: What `__default__` makes of the children of Lark's helper rules (the fast parse
    #: loop, `drive.py`, calls it directly).
    helper = staticmethod(inline)

    def __init__(self) -> None:
        self.base = 0
        self.problems: list[Problem] = []
        # Depth of the nested nodes built so far (lists, objects, assertions), by id; the
        # node is kept beside its depth so that an id is never mistaken for another's.
        self._depths: dict[int, tuple[object, int]] = {}
        # The deepest value built since the last assertion: the next one holds it.
        self._pending = 0

    def reset(self, base: int = 0) -> None:
        """Forget the problems and depths of an earlier parse; spans start at `base`."""
        self.base = base
        self.problems.clear()
        self._depths.clear()
        self._pending = 0

    def __default__(self, data: Any, children: list[Any], meta: Any) -> Any:
        # Lark's helper rules (repetitions, named `_…` or `__…`) are inlined into their
        # parent, which only reads `.children`: a slotted holder is enough, not a Tree.
        # Any other rule without a callback is a grammar rule nobody builds.
        if not str(data).startswith("_"):
            raise MissingRule(f"the grammar rule `{data}` has no build callback")
        return inline(children)

    def kind(self, token: Any) -> str:
        """The terminal a token is; "" for a node already built."""
        return str(token[0]) if type(token) is tuple else ""

    def text(self, token: Any) -> str:
        """A token's text as written."""
        text: str = token[1]
        return text

    def string(self, token: Any) -> str:
        """A string literal's decoded text."""
        return decode_string(token[1])

    def integer(self, token: Any) -> int:
        """An INT token's value; one out of range is a problem, and stands as 1."""
        text: str = token[1]
        problem = integer_problem(text)
        if problem is not None:
            self.problems.append((self.token_span(token), "E209", problem))
            return 1
        return int(text)

    # -- nesting

    def _depth(self, node: Any, empty: int) -> int:
        entry = self._depths.get(id(node))
        return entry[1] if entry is not None and entry[0] is node else empty

    def _nested(self, node: Any, children: Sequence[Any], empty: int, what: str) -> None:
        """Note the depth of `node` (one more than its deepest child); the first node past
        the limit on a branch is a problem."""
        # `_depth` of each child written out: this runs for every and, or, not, list and
        # object
        depths = self._depths
        below = 0
        for child in children:
            entry = depths.get(id(child))
            depth = entry[1] if entry is not None and entry[0] is child else empty
            if depth > below:
                below = depth
        depth = below + 1
        self._depths[id(node)] = (node, depth)
        if depth > MAX_NESTING >= below:
            self.problems.append((node.span, "E105", nesting_problem(what)))

    # -- helpers

    # Spans are built for every node: these run once per token, so they stay lean (no
    # `cast` calls, no intermediate spans). Children come in source order, so a node spans
    # from its first child's start to its last child's end.

    def token_span(self, tok: Token) -> Span:
        base = self.base
        return _new_span(Span, (base + tok[2], base + tok[3]))

    def _start(self, item: Any) -> int:
        if type(item) is tuple:  # a token
            return self.base + item[2]  # type: ignore[no-any-return]
        if type(item) is Pair:
            return self._start(item.key)
        return item.span.start  # type: ignore[no-any-return]

    def _end(self, item: Any) -> int:
        if type(item) is tuple:
            return self.base + item[3]  # type: ignore[no-any-return]
        if type(item) is Pair:
            return self._end(item.value)
        return item.span.end  # type: ignore[no-any-return]

    def span(self, children: Sequence[Any]) -> Span:
        # `_start` and `_end` written out: this runs for every node. A child is a token
        # (a tuple), a node already built (with its span) or a pair (`_start`, `_end`).
        first, last = children[0], children[-1]
        kind = type(first)
        if kind is tuple:
            start = self.base + first[2]
        elif kind in _NODES:
            start = first.span[0]
        else:
            start = self._start(first)
        kind = type(last)
        if kind is tuple:
            end = self.base + last[3]
        elif kind in _NODES:
            end = last.span[1]
        else:
            end = self._end(last)
        return _new_span(Span, (start, end))

    def literal(self, item: Any) -> ast.Value:
        if type(item) is not tuple:
            return cast(ast.Value, item)
        kind, text, start, end = item
        base = self.base
        span = _new_span(Span, (base + start, base + end))
        if kind == "STRING":
            return ast.make_str(decode_string(text), span=span)
        if kind == "INT":
            # `integer` written out: most literals are small integers
            if len(text) < 16:
                return ast.make_num(int(text), span=span)
            return ast.make_num(self.integer(item), span=span)
        if kind == "DECIMAL":
            if text.lstrip("+-").lower() == INFINITY_SPELLING:
                # Infinity as evaldsl writes it (YAML's `.inf`): the one overflow meant
                return ast.make_num(float(text), span=span)
            return ast.make_num(self._finite(float(text), text, span), span=span)
        if kind == "NAME":
            return ast.make_name(text, span=span)
        if kind == "TRUE":
            return ast.Bool(True, span=span)
        if kind == "FALSE":
            return ast.Bool(False, span=span)
        if kind == "NULL":
            return ast.Null(span=span)
        if kind == "DURATION":
            return ast.Duration(self._finite(parse_duration(text), text, span), text, span=span)
        if kind == "MONEY":
            return ast.Money(self._finite(float(text[1:]), text, span), text, span=span)
        raise AssertionError(f"unexpected value token {kind}")

    def _finite(self, value: float, text: str, span: Span) -> float:
        problem = finite_problem(value, text)
        if problem is not None:
            self.problems.append((span, "E209", problem))
            return 1.0
        return value

    @staticmethod
    def name(tok: Token) -> str:
        """A name, bare or quoted."""
        kind, text = tok[0], tok[1]
        return decode_string(text) if kind == "STRING" else text

    @staticmethod
    def _nodes(children: Sequence[Any]) -> list[Any]:
        return [c for c in children if type(c) is not tuple]

    # -- programs

    def file(self, c: list[Any]) -> ast.Program:
        stmts = tuple(self._nodes(c))
        span = self.span(stmts) if stmts else Span(self.base, self.base)
        return ast.Program(stmts, span=span)

    statements = file

    # -- declarations

    def suite_decl(self, c: list[Any]) -> ast.SuiteDecl:
        return ast.SuiteDecl(self.string(c[1]), span=self.span(c))

    def _names(self, kind: Literal["tools", "nodes"], c: list[Any]) -> ast.NamesDecl:
        names: list[ast.Name | ast.Str] = []
        for tok in c[1:]:
            terminal, text = tok[0], tok[1]
            if terminal == "NAME":
                names.append(ast.make_name(text, span=self.token_span(tok)))
            elif terminal == "STRING":
                names.append(ast.make_str(decode_string(text), span=self.token_span(tok)))
        return ast.NamesDecl(kind, tuple(names), span=self.span(c))

    def tools_decl(self, c: list[Any]) -> ast.NamesDecl:
        return self._names("tools", c)

    def nodes_decl(self, c: list[Any]) -> ast.NamesDecl:
        return self._names("nodes", c)

    def judge_decl(self, c: list[Any]) -> ast.JudgeDecl:
        return ast.JudgeDecl(self.string(c[2]), span=self.span(c))

    def timeout_decl(self, c: list[Any]) -> ast.TimeoutDecl:
        duration = cast(ast.Duration, self.literal(c[1]))
        problem = timeout_problem(duration.seconds)
        if problem is not None:
            # `timeout 0s` never means "the default": it is an error, as any bad bound
            self.problems.append((duration.span, "E210", problem))
        return ast.TimeoutDecl(duration, span=self.span(c))

    def case_decl(self, c: list[Any]) -> ast.CaseDecl:
        return ast.CaseDecl(self.string(c[1]), span=self.span(c))

    def cassette_src(self, c: list[Any]) -> ast.SourceDecl:
        return ast.SourceDecl("cassette", self.string(c[1]), span=self.span(c))

    def state_src(self, c: list[Any]) -> ast.SourceDecl:
        return ast.SourceDecl("state", self.string(c[1]), span=self.span(c))

    def dataset_src(self, c: list[Any]) -> ast.SourceDecl:
        return ast.SourceDecl("dataset", self.string(c[1]), span=self.span(c))

    def trace_src(self, c: list[Any]) -> ast.SourceDecl:
        return ast.SourceDecl("trace", self.string(c[1]), self.text(c[3]), span=self.span(c))

    def run_src(self, c: list[Any]) -> ast.RunDecl:
        return ast.RunDecl(self.name(c[1]), span=self.span(c))

    def input_src(self, c: list[Any]) -> ast.ValueDecl:
        self._pending = 0
        return ast.ValueDecl("input", self.literal(c[1]), span=self.span(c))

    def each_src(self, c: list[Any]) -> ast.ValueDecl:
        self._pending = 0
        return ast.ValueDecl("each", self.literal(c[1]), span=self.span(c))

    # -- assertions

    def assertion(self, c: list[Any]) -> ast.Expr:
        # A flat `t (and|or) t …` chain: `and` binds tighter than `or`.
        if len(c) == 3:  # `a and b`, `a or b`: most chains, built at once
            first, last = c[0], c[2]
            make = ast.make_and if c[1][0] == "AND" else ast.make_or
            (a, b), (x, y) = first.span, last.span
            node = make((first, last), span=_new_span(Span, (min(a, x), max(b, y))))  # cover
            self._nested(node, (first, last), 1, "this assertion")
            return node
        return self.chain(c)

    def chain(self, c: list[Any]) -> ast.Expr:
        """`assertion` for any chain (the definition; `assertion` builds a chain of two
        at once, and the tests compare it with this)."""
        ors: list[ast.Expr] = []
        ands: list[ast.Expr] = [c[0]]
        for op, term in zip(c[1::2], c[2::2], strict=True):
            if op[0] == "AND":
                ands.append(term)
            else:
                ors.append(self._join(ast.And, ands))
                ands = [term]
        ors.append(self._join(ast.And, ands))
        return self._join(ast.Or, ors)

    def _join(self, kind: type[ast.And] | type[ast.Or], items: list[ast.Expr]) -> ast.Expr:
        if len(items) == 1:
            return items[0]
        node = kind(tuple(items), span=items[0].span.cover(items[-1].span))
        self._nested(node, items, 1, "this assertion")
        return node

    def negation(self, c: list[Any]) -> ast.Not:
        node = ast.make_not(c[1], span=self.span(c))
        self._nested(node, (c[1],), 1, "this assertion")
        return node

    def group(self, c: list[Any]) -> ast.Expr:
        # the span takes in the parentheses, so `not (a)` spans its `)` too
        node = respanned(cast(ast.Expr, c[1]), self.span(c))
        depth = self._depth(c[1], 0)
        if depth:
            self._depths[id(node)] = (node, depth)
        return node

    def _assertion(self, node: ast.Expr) -> None:
        """An assertion holds the values built since the one before it (LALR builds left
        to right, bottom up): its depth is theirs plus one."""
        if self._pending:
            below, self._pending = self._pending, 0
            self._depths[id(node)] = (node, below + 1)
            if below == MAX_NESTING:
                self.problems.append((node.span, "E105", nesting_problem("this assertion")))

    def check(self, c: list[Any]) -> ast.Check:
        subject, predicate = c  # two nodes: the span from the subject's start to the end
        span = _new_span(Span, (subject.span[0], predicate.span[1]))
        node = ast.make_check(subject, predicate, span=span)
        if self._pending:  # most checks hold no list or object: no call for them
            self._assertion(node)
        return node

    def no_tool(self, c: list[Any]) -> ast.NoTool:
        return ast.NoTool(self.name(c[2]), span=self.span(c))

    def node_visited(self, c: list[Any]) -> ast.NodeVisited:
        return ast.NodeVisited(self.name(c[1]), span=self.span(c))

    def every_tool(self, c: list[Any]) -> ast.Check:
        subject = ast.make_subject(
            "tool", name=self.name(c[2]), span=self.token_span(c[1]).cover(self.token_span(c[2]))
        )
        node = ast.make_check(subject, c[3], every=True, span=self.span(c))
        self._assertion(node)
        return node

    # -- subjects

    def _subject(self, kind: ast.SubjectKind, c: list[Any], **kw: Any) -> ast.Subject:
        return ast.make_subject(kind, span=self.span(c), **kw)

    def answer_at(self, c: list[Any]) -> ast.Subject:
        return self._subject("answer", c, index=self.integer(c[2]))

    def answer_json(self, c: list[Any]) -> ast.Subject:
        return self._subject("answer_json", c, path=self.text(c[2]) if len(c) > 2 else None)

    def answer_json_at(self, c: list[Any]) -> ast.Subject:
        # answer [ INT ] json PATH?
        path = self.text(c[5]) if len(c) > 5 else None
        return self._subject("answer_json", c, index=self.integer(c[2]), path=path)

    def output(self, c: list[Any]) -> ast.Subject:
        return self._subject("output", c, keys=tuple(c[1:]))

    def memory(self, c: list[Any]) -> ast.Subject:
        return self._subject("memory", c, keys=tuple(c[1:]))

    def state_field(self, c: list[Any]) -> ast.Subject:
        first = ast.make_key(self.text(c[2]), span=self.token_span(c[2]))
        return self._subject("state", c, keys=(first, *c[3:]))

    def tool(self, c: list[Any]) -> ast.Subject:
        # `tool NAME`: two tokens; `name` and `span` written out (one a tool subject)
        keyword, (kind, text, _, end) = c
        name = decode_string(text) if kind == "STRING" else text
        base = self.base
        return ast.make_subject("tool", name, span=_new_span(Span, (base + keyword[2], base + end)))

    def key_access(self, c: list[Any]) -> ast.Key:
        tok = c[1]
        return ast.make_key(self.name(tok), span=self.span(c))

    def index_access(self, c: list[Any]) -> ast.Key:
        return ast.make_key(self.integer(c[1]), span=self.span(c))

    # -- values

    def list_lit(self, c: list[Any]) -> ast.ListLit:
        # a list comprehension, not a generator (one frame for the whole list); the
        # children are `[`, values, `,` … and `]`
        literal = self.literal
        items = tuple([literal(x) for x in c if not (type(x) is tuple and x[0] in PUNCT)])
        node = ast.make_list_lit(items, span=self.span(c))
        self._value(node, items)
        return node

    def pair(self, c: list[Any]) -> Pair:
        return Pair(c[0], self.literal(c[2]))

    def object_lit(self, c: list[Any]) -> ast.ObjectLit:
        pairs = tuple((self.name(k), v) for k, v in (x for x in c if type(x) is Pair))
        node = ast.ObjectLit(pairs, span=self.span(c))
        self._value(node, [v for _, v in pairs])
        return node

    def _value(self, node: ast.ListLit | ast.ObjectLit, items: Sequence[Any]) -> None:
        self._nested(node, items, 0, "this value")
        depth = self._depths[id(node)][1]
        if depth > self._pending:
            self._pending = depth


def _simple_subject(kind: ast.SubjectKind) -> Any:
    def build(self: Builder, c: list[Any]) -> ast.Subject:
        # keywords only (`steps`, `tool calls`): the span from the first token to the last
        base = self.base
        return ast.make_subject(kind, span=_new_span(Span, (base + c[0][2], base + c[-1][3])))

    return build


# Subjects without a syntax of their own (`status`, `tokens`, `tool calls`, …) build
# alike; the vocabulary is the list of them.
for _kind in SUBJECTS:
    if not hasattr(Builder, _kind):
        setattr(Builder, _kind, _simple_subject(cast(ast.SubjectKind, _kind)))


# Predicates: each family builds its own nodes.
for _rule, _build in RULES.items():
    if hasattr(Builder, _rule):
        raise MissingRule(f"the predicate rule `{_rule}` clashes with a builder method")
    setattr(Builder, _rule, _build)


def grammar_rules(grammar: str) -> set[str]:
    """The rule and alias names of a grammar that get a callback: every `-> alias`, and
    every rule not named `_…` or `?…` that has an alternative without an alias.

    >>> sorted(grammar_rules('a: "x" -> b | "y"\\nc: "z" -> d\\n?e: f -> g | h'))
    ['a', 'b', 'd', 'g']
    """
    names: set[str] = set()
    definitions = list(re.finditer(r"^(\??)([a-z_][a-z0-9_]*)\s*:", grammar, re.M))
    for n, found in enumerate(definitions):
        end = definitions[n + 1].start() if n + 1 < len(definitions) else len(grammar)
        body = _strip_literals(grammar[found.end() : end])
        alternatives = _top_level_alternatives(body)
        names.update(re.findall(r"->\s*([a-z][a-z0-9_]*)", body))
        inlined = found.group(1) == "?" or found.group(2).startswith("_")
        if not inlined and any("->" not in alt for alt in alternatives):
            names.add(found.group(2))
    return names


def _strip_literals(body: str) -> str:
    """A rule body without comments, quoted literals and terminal definitions after it."""
    body = re.split(r"^[A-Z_][A-Z0-9_]*(?:\.\d+)?\s*:", body, maxsplit=1, flags=re.M)[0]
    body = re.sub(r"//[^\n]*", "", body)
    return re.sub(r'"(?:[^"\\]|\\.)*"', '""', body)


def _top_level_alternatives(body: str) -> list[str]:
    alternatives: list[str] = []
    current: list[str] = []
    depth = 0
    for ch in body:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "|" and depth == 0:
            alternatives.append("".join(current))
            current = []
        else:
            current.append(ch)
    alternatives.append("".join(current))
    return alternatives


def check_rules(grammar: str, rules: Iterable[str] | None = None) -> None:
    """`MissingRule` naming every rule of `grammar` (`rules`: its `grammar_rules`, when
    known) that has no build callback."""
    names = grammar_rules(grammar) if rules is None else rules
    missing = sorted(r for r in names if not hasattr(Builder, r))
    if missing:
        raise MissingRule(
            "grammar rules without a build callback: "
            + ", ".join(f"`{r}`" for r in missing)
            + " (add a method to evaldsl/syntax/build.py, or a rule to a predicate family)"
        )


def known_rules(grammar: str) -> frozenset[str]:
    """`grammar_rules(grammar)`, kept between starts in the user's cache file under the
    grammar's text: reading the rules out of the grammar (its regexes compiled, its text
    walked a character at a time) was ~1 ms of every start that parses."""
    key = f"grammar rules\0{grammar}"
    rules = stored(key)
    if type(rules) is not frozenset:
        rules = frozenset(grammar_rules(grammar))
        store(key, rules)
    return rules


check_rules(cached_grammar(), known_rules(cached_grammar()))
