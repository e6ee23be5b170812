"""Emptiness: `is empty` and `not empty`.

Takes `Emptiness` nodes and gives their vocabulary entries, build rules, value tests and
printed forms. Empty means missing, null, whitespace-only text, `[]` or `{}`; `0` and
`false` are not empty (cycgraph's memory_not_empty).
"""

from __future__ import annotations

from typing import Any

from evaldsl.language import ast
from evaldsl.language.values import Words, is_empty
from evaldsl.language.vocabulary import Type, predicate_spec
from evaldsl.predicates.base import BuildKit, CheckContext, Family, FragmentContext, ValueTest

ENTRIES = (
    predicate_spec(
        "is_empty",
        "is empty",
        {"Text", "Json", "Names"},
        "Empty text (after trimming), [], {}, null or missing.",
        "nodes is empty",
    ),
    predicate_spec(
        "not_empty",
        "not empty",
        {"Text", "Json", "Names"},
        "Present and not empty; 0 and false are not empty.",
        "memory.summary not empty",
    ),
)


def _build(empty: bool) -> Any:
    def build(kit: BuildKit, c: list[Any]) -> ast.Emptiness:
        return ast.Emptiness(empty, span=kit.span(c))

    return build


def check(
    ctx: CheckContext, pred: ast.Emptiness, stype: Type, subject: ast.Subject, _: str
) -> None:
    pass  # nothing to check beyond the subject's type


def value_test(pred: ast.Emptiness, stype: Type) -> ValueTest:
    empty = pred.empty
    return lambda v: is_empty(v) is empty


def fragment(ctx: FragmentContext, pred: ast.Emptiness, stype: Type) -> str:
    test = f"{ctx.const(is_empty)}(v)"
    return test if pred.empty else f"(not {test})"


FAMILY = Family(
    name="emptiness",
    nodes=(ast.Emptiness,),
    entries=ENTRIES,
    rules={"is_empty": _build(True), "not_empty": _build(False)},
    key=lambda pred: "is_empty" if pred.empty else "not_empty",
    check=check,
    print=lambda p, pred, indent: "is empty" if pred.empty else "not empty",
    expected=lambda pred: Words("empty" if pred.empty else "not empty"),
    fragment=fragment,
    value_test=value_test,
)
