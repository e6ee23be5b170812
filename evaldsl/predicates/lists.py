"""List tests: `contains all [..]`, `contains any [..]`, `in [..]`, `in order [..]` and
`only [..]`.

Takes `ListTest` nodes and gives their vocabulary entries, build rules, check rule (each
item must fit the subject; an empty list makes `contains all` always pass and `contains
any`/`in` never pass), value tests and printed forms. `in order` is a subsequence, not
necessarily adjacent (repeated names need repeated items); `only` means nothing outside
the list occurs.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from evaldsl.language import ast
from evaldsl.language.values import json_contains, json_equal
from evaldsl.language.vocabulary import Type, predicate_spec
from evaldsl.predicates.base import (
    BuildKit,
    CheckContext,
    Family,
    FragmentContext,
    Printer,
    ValueTest,
)

ENTRIES = (
    predicate_spec(
        "contains_all",
        "contains all [..]",
        {"Text", "Json", "Names"},
        "Contains every item.",
        "tools contains all [search, summarize]",
    ),
    predicate_spec(
        "contains_any",
        "contains any [..]",
        {"Text", "Json", "Names"},
        "Contains at least one item.",
        'answer contains any ["sunny", "clear"]',
    ),
    predicate_spec(
        "in_order",
        "in order [..]",
        {"Names"},
        "The items occur in this order (a subsequence; repeated names need repeats).",
        "tools in order [search, summarize]",
    ),
    predicate_spec(
        "in",
        "in [..]",
        {"Text", "Json", "Status", "Number"},
        "The value is one of the items.",
        "status in [completed, waiting]",
    ),
    predicate_spec(
        "only",
        "only [..]",
        {"Names"},
        "Nothing outside the list occurs.",
        "tools only [search, get_weather]",
    ),
)

#: How each operation is written, and its vocabulary entry.
WORDS = {
    "all": "contains all",
    "any": "contains any",
    "in_order": "in order",
    "in": "in",
    "only": "only",
}
KEYS = {"all": "contains_all", "any": "contains_any", "in_order": "in_order", "in": "in"}


def _build(op: Any) -> Any:
    def build(kit: BuildKit, c: list[Any]) -> ast.ListTest:
        return ast.ListTest(op, c[-1], span=kit.span(c))

    return build


def check(
    ctx: CheckContext, pred: ast.ListTest, stype: Type, subject: ast.Subject, subject_text: str
) -> None:
    for item in pred.items.items:
        ctx.value(item, stype, subject, subject_text, whole=False)
    if not pred.items.items:
        if pred.op == "all":
            ctx.error(pred.span, "W601", "this can never fail: the list is empty")
        elif pred.op in ("any", "in"):
            ctx.error(pred.span, "W602", "this can never pass: the list is empty")


def in_order(seen: list[Any], wanted: list[Any]) -> bool:
    """A subsequence, not necessarily adjacent; repeated names need repeated items.

    >>> in_order(["a", "x", "b"], ["a", "b"]), in_order(["b", "a"], ["a", "b"])
    (True, False)
    """
    it: Iterator[Any] = iter(seen)
    # `w in it` consumes the iterator up to the first equal item: the subsequence test at
    # C speed; only a text equals a text, so it is exact for texts (names, always)
    return all((w in it) if type(w) is str else any(json_equal(x, w) for x in it) for w in wanted)


def _only_names(seen: list[Any], names: frozenset[Any]) -> bool:
    """Every element is one of the names (a text equals only a text: the set's own test
    is exact, at C speed; an element that cannot be hashed is walked)."""
    try:
        return names.issuperset(seen)
    except TypeError:
        return all(type(x) is str and x in names for x in seen)


def value_test(pred: ast.ListTest, stype: Type) -> ValueTest:
    wanted = [ast.to_json(i) for i in pred.items.items]
    match pred.op:
        case "all":
            return lambda v: all(json_contains(v, w) for w in wanted)
        case "any":
            return lambda v: any(json_contains(v, w) for w in wanted)
        case "in":
            return lambda v: any(json_equal(v, w) for w in wanted)
        case "only":
            if all(type(w) is str for w in wanted):  # names: a set lookup per element
                names = frozenset(wanted)
                return lambda v: isinstance(v, list) and _only_names(v, names)
            return lambda v: (
                isinstance(v, list) and all(any(json_equal(x, w) for w in wanted) for x in v)
            )
        case "in_order":
            return lambda v: isinstance(v, list) and in_order(v, wanted)


def fragment(ctx: FragmentContext, pred: ast.ListTest, stype: Type) -> str | None:
    """`in` and `contains all/any` as source; `in order` and `only` walk the value and
    keep their closures."""
    wanted = [ast.to_json(i) for i in pred.items.items]
    if pred.op == "in" and wanted and all(type(w) is str for w in wanted):
        return f"(isinstance(v, str) and v in {ctx.const(frozenset(wanted))})"
    items = ctx.const(tuple(wanted))
    match pred.op:
        case "in":
            return f"any({ctx.const(json_equal)}(v, w) for w in {items})"
        case "all":
            return f"all({ctx.const(json_contains)}(v, w) for w in {items})"
        case "any":
            return f"any({ctx.const(json_contains)}(v, w) for w in {items})"
    return None


def print_list_test(p: Printer, pred: ast.ListTest, indent: str) -> str:
    return f"{WORDS[pred.op]} {p.value(pred.items, indent)}"


FAMILY = Family(
    name="lists",
    nodes=(ast.ListTest,),
    entries=ENTRIES,
    rules={
        "in_list": _build("in"),
        "contains_all": _build("all"),
        "contains_any": _build("any"),
        "in_order": _build("in_order"),
        "only": _build("only"),
    },
    key=lambda pred: KEYS.get(pred.op, pred.op),
    check=check,
    print=print_list_test,
    expected=lambda pred: ast.to_json(pred.items),
    fragment=fragment,
    value_test=value_test,
)
