"""AST: the frozen nodes every front end produces and every later stage reads.

Takes nothing: this module only declares nodes. Each node is an `attrs.frozen` class with
typed fields and a keyword-only `span` that does not take part in equality, so two programs
that differ only in layout compare equal (the formatter's safety test relies on that).
The parser builds them from `.eval` text; the suite loaders build them from YAML objects.
"""

from __future__ import annotations

import typing
from typing import Any, Literal, TypeAlias, assert_never

import attrs

from evaldsl.language.slotinit import maker, slot_init
from evaldsl.language.source import Span

NO_SPAN = Span(0, 0)


def _span() -> Span:
    return attrs.field(default=NO_SPAN, kw_only=True, eq=False, repr=False)


def _node_repr(self: object) -> str:
    """attrs' own repr of a node (`Str(value='x')`: its fields but the span), one function
    for every node class (set below): attrs generating and compiling one per class was
    about a third of making the classes, which every start does. Nodes hold no cycles, so
    attrs' guard against them is not needed."""
    cls: Any = type(self)
    shown = ", ".join(
        f"{a.name}={getattr(self, a.name)!r}" for a in attrs.fields(cls) if a.repr is not False
    )
    return f"{cls.__qualname__.rsplit('>.', 1)[-1]}({shown})"


# ---- values ------------------------------------------------------------------------------


@attrs.frozen(repr=False)
class Str:
    """A quoted string: `"Xiamen"`, `'x'`."""

    value: str
    span: Span = _span()


@attrs.frozen(repr=False)
class Num:
    """A number: `42`, `0.7`, `-1`."""

    value: int | float
    span: Span = _span()


@attrs.frozen(repr=False)
class Bool:
    """`true` or `false`."""

    value: bool
    span: Span = _span()


@attrs.frozen(repr=False)
class Null:
    """`null`."""

    span: Span = _span()


@attrs.frozen(repr=False)
class Name:
    """A bare word standing for a name: `completed`, `search`."""

    value: str
    span: Span = _span()


@attrs.frozen(repr=False)
class Duration:
    """A duration, kept in seconds and in the unit it was written in: `250ms`, `2s`, `1.5m`."""

    seconds: float
    text: str
    span: Span = _span()


@attrs.frozen(repr=False)
class Money:
    """An amount of money in dollars: `$0.05`."""

    amount: float
    text: str
    span: Span = _span()


@attrs.frozen(repr=False)
class ListLit:
    """A list: `[a, "b", 3]`."""

    items: tuple[Value, ...]
    span: Span = _span()


@attrs.frozen(repr=False)
class ObjectLit:
    """An object with bare or quoted keys: `{city: "Paris", "odd key": 1}`."""

    pairs: tuple[tuple[str, Value], ...]
    span: Span = _span()


@attrs.frozen(repr=False)
class Regex:
    """A regex literal: `/\\d+ C/i` (pattern text and flags as written)."""

    pattern: str
    flags: str
    span: Span = _span()


Value: TypeAlias = Str | Num | Bool | Null | Name | Duration | Money | ListLit | ObjectLit


# ---- subjects ----------------------------------------------------------------------------


@attrs.frozen(repr=False)
class Key:
    """One step into a JSON value: `.summary`, `["odd key"]` (key) or `[0]` (index)."""

    key: str | int
    span: Span = _span()


SubjectKind = Literal[
    "answer",
    "answer_json",
    "output",
    "memory",
    "state",
    "status",
    "nodes",
    "tools",
    "tool",
    "tokens",
    "input_tokens",
    "output_tokens",
    "steps",
    "tool_calls",
    "guards",
    "errors",
    "latency",
    "cost",
    "budget",
]


@attrs.frozen(repr=False)
class Subject:
    """What an assertion looks at: `answer`, `answer[2]`, `answer json $.x`, `tool search`,
    `memory.a.b`, `state.iteration_count`, `tokens`, …; `kind` is its vocabulary entry."""

    kind: SubjectKind
    name: str | None = None  # the tool of `tool NAME`
    index: int | None = None  # N of `answer[N]`
    path: str | None = None  # the JSONPath of `answer json $.x`
    keys: tuple[Key, ...] = ()  # `.a.b` of memory / output / state
    span: Span = _span()


# ---- predicates --------------------------------------------------------------------------

CountForm = Literal["any", "times", "once", "twice", "never", "at_least", "at_most", "between"]


@attrs.frozen(repr=False)
class Count:
    """How many calls: `2 times`, `once`, `at least 2 times`, `between 1 and 3 times`."""

    form: CountForm
    low: int = 1
    high: int | None = None  # None: no upper bound
    span: Span = _span()


@attrs.frozen(repr=False)
class Called:
    """`called`, `called 2 times`, `never called`, … (Calls)."""

    count: Count
    span: Span = _span()


@attrs.frozen(repr=False)
class Compare:
    """`== VALUE`, `!= VALUE`, `< VALUE`, `<= VALUE`, `> VALUE`, `>= VALUE`."""

    op: Literal["==", "!=", "<", "<=", ">", ">="]
    value: Value
    span: Span = _span()


@attrs.frozen(repr=False)
class Contains:
    """`contains VALUE`."""

    value: Value
    span: Span = _span()


@attrs.frozen(repr=False)
class ListTest:
    """`contains all [..]`, `contains any [..]`, `in order [..]`, `in [..]`, `only [..]`."""

    op: Literal["all", "any", "in_order", "in", "only"]
    items: ListLit
    span: Span = _span()


@attrs.frozen(repr=False)
class Emptiness:
    """`is empty` (empty=True) or `not empty` (empty=False)."""

    empty: bool
    span: Span = _span()


@attrs.frozen(repr=False)
class Exists:
    """`exists`: the subject (or a value its path finds) is there, whatever it is."""

    span: Span = _span()


@attrs.frozen(repr=False)
class IsJson:
    """`is json`: text (or a JSON string) that parses as JSON."""

    span: Span = _span()


JsonType = Literal["string", "number", "integer", "boolean", "array", "object", "null"]
#: The JSON type names of `is TYPE`, in the order the docs list them.
JSON_TYPES: tuple[JsonType, ...] = typing.get_args(JsonType)


@attrs.frozen(repr=False)
class IsType:
    """`is string`, `is number`, `is integer`, `is boolean`, `is array`, `is object`, `is null`."""

    type: JsonType
    span: Span = _span()


@attrs.frozen(repr=False)
class TextEdge:
    """`starts with "x"` (at_start=True) or `ends with "x"`."""

    at_start: bool
    text: Str
    span: Span = _span()


@attrs.frozen(repr=False)
class Matches:
    """`matches /re/flags`."""

    regex: Regex
    span: Span = _span()


@attrs.frozen(repr=False)
class HasKey:
    """`has KEY`: the key is present, whatever its value."""

    key: str
    span: Span = _span()


@attrs.frozen(repr=False)
class Judged:
    """`judged "rubric" [>= 0.7] [by "model"]` (the LLM judge)."""

    rubric: str
    threshold: float | None = None
    op: str | None = None
    model: str | None = None
    span: Span = _span()


@attrs.frozen(repr=False)
class WithinBudget:
    """`within budget` (of `tokens`): cycgraph's token_budget_respected."""

    span: Span = _span()


@attrs.frozen(repr=False)
class Cites:
    """`cites tool NAME [PATH] [at least N values]`: the answer quotes values that tool
    returned (those at PATH in each result, when given)."""

    tool: str
    at_least: int | None = None
    path: str | None = None  # read the citable values at this JSONPath of each result
    span: Span = _span()


ValueTest: TypeAlias = (
    Compare
    | Contains
    | Matches
    | ListTest
    | IsType
    | IsJson
    | Emptiness
    | Exists
    | TextEdge
    | HasKey
)


@attrs.frozen(repr=False)
class CallTest:
    """`args [PATH] TEST` or `result [PATH] TEST`: some call's value satisfies TEST."""

    target: Literal["args", "result"]
    path: str | None
    test: ValueTest
    span: Span = _span()


Predicate: TypeAlias = (
    Called
    | CallTest
    | Compare
    | Contains
    | ListTest
    | Emptiness
    | Exists
    | IsType
    | IsJson
    | TextEdge
    | Matches
    | HasKey
    | Judged
    | WithinBudget
    | Cites
)


# ---- assertions --------------------------------------------------------------------------


@attrs.frozen(repr=False)
class Check:
    """A subject and a predicate: `tool search called 2 times`, `answer matches /x/`."""

    subject: Subject
    predicate: Predicate
    every: bool = False  # `every tool NAME …`: every call, and at least one
    span: Span = _span()


@attrs.frozen(repr=False)
class NoTool:
    """`no tool NAME`: the same as `tool NAME never called`."""

    name: str
    span: Span = _span()


@attrs.frozen(repr=False)
class NodeVisited:
    """`node NAME visited`: the same as `nodes contains NAME`."""

    name: str
    span: Span = _span()


@attrs.frozen(repr=False)
class Not:
    """`not A`."""

    operand: Expr
    span: Span = _span()


@attrs.frozen(repr=False)
class And:
    """`A and B and …`."""

    operands: tuple[Expr, ...]
    span: Span = _span()


@attrs.frozen(repr=False)
class Or:
    """`A or B or …`."""

    operands: tuple[Expr, ...]
    span: Span = _span()


Expr: TypeAlias = Check | NoTool | NodeVisited | Not | And | Or


# ---- declarations (header and case lines) ------------------------------------------------


@attrs.frozen(repr=False)
class SuiteDecl:
    """`suite "name"`."""

    name: str
    span: Span = _span()


@attrs.frozen(repr=False)
class NamesDecl:
    """`tools a, b` (kind "tools") or `nodes a, b` (kind "nodes")."""

    kind: Literal["tools", "nodes"]
    names: tuple[Name | Str, ...]
    span: Span = _span()


@attrs.frozen(repr=False)
class JudgeDecl:
    """`judge model "gpt-4o-mini"`."""

    model: str
    span: Span = _span()


@attrs.frozen(repr=False)
class TimeoutDecl:
    """`timeout 30s`."""

    duration: Duration
    span: Span = _span()


@attrs.frozen(repr=False)
class CaseDecl:
    """`case "name"`: the lines after it belong to this case."""

    name: str
    span: Span = _span()


@attrs.frozen(repr=False)
class SourceDecl:
    """`cassette "x.jsonl"`, `state "s.json"`, `dataset "rows.json"`, `trace "t.json" as otel`."""

    kind: Literal["cassette", "state", "dataset", "trace"]
    path: str
    format: str | None = None
    span: Span = _span()


@attrs.frozen(repr=False)
class RunDecl:
    """`run package.module:function`."""

    target: str
    span: Span = _span()


@attrs.frozen(repr=False)
class ValueDecl:
    """`input {…}` (kind "input") or `each [{…}, …]` (kind "each")."""

    kind: Literal["input", "each"]
    value: Value
    span: Span = _span()


Decl: TypeAlias = (
    SuiteDecl | NamesDecl | JudgeDecl | TimeoutDecl | CaseDecl | SourceDecl | RunDecl | ValueDecl
)
Statement: TypeAlias = Decl | Expr


@attrs.frozen(repr=False)
class Program:
    """A parsed file or snippet: its statements in source order."""

    statements: tuple[Statement, ...]
    span: Span = _span()


for _node in [c for c in list(globals().values()) if isinstance(c, type) and attrs.has(c)]:
    _node.__repr__ = _node_repr  # type: ignore[method-assign]
    # the parser makes a node of most grammar rules: about a fifth of making one
    slot_init(_node)

# The nodes every statement is made of, made by plain functions (`slotinit.maker`: the
# same arguments and instance as calling the class, without `type.__call__` packing the
# arguments and every `span=` for `__init__`): the parser and the predicate families make
# them, ~9 a statement.
make_check = maker(Check)
make_subject = maker(Subject)
make_not = maker(Not)
make_and = maker(And)
make_or = maker(Or)
make_str = maker(Str)
make_num = maker(Num)
make_name = maker(Name)
make_key = maker(Key)
make_list_lit = maker(ListLit)
make_compare = maker(Compare)
make_contains = maker(Contains)
make_call_test = maker(CallTest)
make_count = maker(Count)
make_called = maker(Called)
make_list_test = maker(ListTest)
make_regex = maker(Regex)
make_matches = maker(Matches)
make_text_edge = maker(TextEdge)

EXPR_TYPES = (Check, NoTool, NodeVisited, Not, And, Or)


def to_json(value: Value) -> object:
    """The plain JSON value a literal stands for (bare names become strings)."""
    # the common literals first, by their exact type (compiling calls this for every
    # literal, often twice); the `match` below is the definition and takes any other
    kind = type(value)
    if kind is Str or kind is Num or kind is Name or kind is Bool:
        return value.value  # type: ignore[union-attr]
    if kind is ListLit:
        return [to_json(i) for i in value.items]  # type: ignore[union-attr]
    match value:
        case Str(v) | Name(v):
            return v
        case Num(v):
            return v
        case Bool(v):
            return v
        case Null():
            return None
        case Duration(seconds=s):
            return s
        case Money(amount=a):
            return a
        case ListLit(items):
            return [to_json(i) for i in items]
        case ObjectLit(pairs):
            return {k: to_json(v) for k, v in pairs}
    raise AssertionError(f"unhandled value {value!r}")


def value_word(value: Value) -> str:
    """A literal in the user's words, for messages: `the text "x"`, `a duration (2s)`."""
    match value:
        case Str(value=v):
            return f'the text "{v}"'
        case Num(value=v):
            return f"the number {v}"
        case Bool(value=v):
            return "true" if v else "false"
        case Null():
            return "null"
        case Name(value=v):
            return f"the name {v}"
        case Duration(text=t):
            return f"a duration ({t})"
        case Money(text=t):
            return f"an amount of money ({t})"
        case ListLit():
            return "a list"
        case ObjectLit():
            return "an object"
        case _:
            assert_never(value)
