"""Keys: `has KEY`.

Takes `HasKey` nodes and gives their vocabulary entry, build rule, value test and printed
form: the key is an own key of a JSON object, whatever its value (`[]`, `""`, `null`
included).
"""

from __future__ import annotations

from typing import Any

from evaldsl.language import ast
from evaldsl.language.vocabulary import Type, predicate_spec
from evaldsl.predicates.base import BuildKit, CheckContext, Family, FragmentContext, ValueTest

ENTRIES = (
    predicate_spec(
        "has",
        "has KEY",
        {"Json"},
        "The key is present, whatever its value.",
        "memory has summary",
    ),
)


def build(kit: BuildKit, c: list[Any]) -> ast.HasKey:
    return ast.HasKey(kit.name(c[1]), span=kit.span(c))


def check(ctx: CheckContext, pred: ast.HasKey, stype: Type, subject: ast.Subject, _: str) -> None:
    pass  # any name is a key


def value_test(pred: ast.HasKey, stype: Type) -> ValueTest:
    key = pred.key
    return lambda v: isinstance(v, dict) and key in v


def fragment(ctx: FragmentContext, pred: ast.HasKey, stype: Type) -> str:
    return f"(isinstance(v, dict) and {ctx.const(pred.key)} in v)"


FAMILY = Family(
    name="keys",
    nodes=(ast.HasKey,),
    entries=ENTRIES,
    rules={"has_key": build},
    key=lambda pred: "has",
    check=check,
    print=lambda p, pred, indent: f"has {p.name(pred.key)}",
    expected=lambda pred: pred.key,
    fragment=fragment,
    value_test=value_test,
)
