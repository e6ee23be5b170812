"""Containment: `contains VALUE`.

Takes `Contains` nodes and gives their vocabulary entry, build rule, check rule (the value
must fit the subject; `contains ""` on text can never fail), value test and printed form.
Typed: text in text, an equal element in a list, a sub-object in an object (every given
key present with an equal value).
"""

from __future__ import annotations

from typing import Any

from evaldsl.language import ast
from evaldsl.language.jsjson import js_json
from evaldsl.language.values import js_text, json_contains
from evaldsl.language.vocabulary import Type, predicate_spec
from evaldsl.predicates.base import (
    BuildKit,
    CheckContext,
    Family,
    FragmentContext,
    Printer,
    ValueTest,
)
from evaldsl.predicates.nameindex import NamesTest

ENTRIES = (
    predicate_spec(
        "contains",
        "contains VALUE",
        {"Text", "Json", "Names"},
        "Text: a substring; list: an equal element; object: a sub-object.",
        'answer contains "sunny"',
    ),
)


def build(kit: BuildKit, c: list[Any]) -> ast.Contains:
    return ast.make_contains(kit.literal(c[1]), span=kit.span(c))


def check(
    ctx: CheckContext, pred: ast.Contains, stype: Type, subject: ast.Subject, subject_text: str
) -> None:
    value = pred.value
    ctx.value(value, stype, subject, subject_text, whole=False)
    if stype == "Text" and isinstance(value, ast.Str) and value.value == "":
        ctx.never(
            pred.span, "fail", 'every text contains ""', "say which text the answer must contain"
        )


def value_test(pred: ast.Contains, stype: Type) -> ValueTest:
    item = ast.to_json(pred.value)
    return lambda v: json_contains(v, item)


def fragment(ctx: FragmentContext, pred: ast.Contains, stype: Type) -> str:
    item = ast.to_json(pred.value)
    contains = ctx.const(json_contains)
    if type(item) is str:  # text in text without the call; other containers as ever
        c = ctx.const(item)
        return f"({c} in v if type(v) is str else {contains}(v, {c}))"
    return f"{contains}(v, {ctx.const(item)})"


def names_test(pred: ast.Contains) -> NamesTest | None:
    """`contains NAME` through a list's index: the name is in its set (a list holds a
    text when an element equals it)."""
    item = ast.to_json(pred.value)
    if type(item) is not str:
        return None
    return lambda index: item in index.names


def not_in_text(pred: ast.Predicate, found: Any) -> str:
    """What a failed `contains` adds when it looked for a number or boolean in a text,
    which never holds (containment is typed, where cycgraph searched the JSON text): the
    quoted form that looks for its text ("" for any other failure).

    >>> not_in_text(ast.Contains(ast.Num(42)), "order 42 shipped")
    '; a number is never inside a text: write `contains "42"` to look for its digits'
    """
    if not isinstance(pred, ast.Contains) or type(found) is not str:
        return ""
    item = ast.to_json(pred.value)
    if isinstance(item, bool):
        what, of = "a boolean", "its word"
    elif isinstance(item, int | float):
        what, of = "a number", "its digits"
    else:
        return ""
    quoted = js_json(js_text(item))
    return f"; {what} is never inside a text: write `contains {quoted}` to look for {of}"


def print_contains(p: Printer, pred: ast.Contains, indent: str) -> str:
    return f"contains {p.value(pred.value, indent)}"


FAMILY = Family(
    name="contains",
    nodes=(ast.Contains,),
    entries=ENTRIES,
    rules={"contains": build},
    key=lambda pred: "contains",
    check=check,
    print=print_contains,
    expected=lambda pred: ast.to_json(pred.value),
    fragment=fragment,
    value_test=value_test,
    names_test=names_test,
)
