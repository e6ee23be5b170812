"""JSON types: `is string|number|integer|boolean|array|object|null`.

Takes `IsType` nodes and gives their vocabulary entry, build rule, value test and printed
form; the type names are traceplay's answer.shape names (`integer` is a number without a
fraction, and every integer is a `number`).
"""

from __future__ import annotations

from typing import Any, cast

from evaldsl.language import ast
from evaldsl.language.values import Words, has_type
from evaldsl.language.vocabulary import Type, predicate_spec
from evaldsl.predicates.base import BuildKit, CheckContext, Family, FragmentContext, ValueTest

ENTRIES = (
    predicate_spec(
        "is_type",
        "is " + "|".join(ast.JSON_TYPES),
        {"Json"},
        "The JSON type of the value.",
        "answer json $.ticket is string",
    ),
)


def build(kit: BuildKit, c: list[Any]) -> ast.IsType:
    return ast.IsType(cast(Any, kit.text(c[1])), span=kit.span(c))


def check(ctx: CheckContext, pred: ast.IsType, stype: Type, subject: ast.Subject, _: str) -> None:
    pass  # the grammar admits only the seven type names


def value_test(pred: ast.IsType, stype: Type) -> ValueTest:
    wanted = pred.type
    return lambda v: has_type(v, wanted)


def fragment(ctx: FragmentContext, pred: ast.IsType, stype: Type) -> str:
    return f"{ctx.const(has_type)}(v, {ctx.const(pred.type)})"


FAMILY = Family(
    name="types",
    nodes=(ast.IsType,),
    entries=ENTRIES,
    rules={"is_type": build},
    key=lambda pred: "is_type",
    check=check,
    print=lambda p, pred, indent: f"is {pred.type}",
    expected=lambda pred: Words(pred.type),
    fragment=fragment,
    value_test=value_test,
)
