"""Presence: `exists`.

Takes `Exists` nodes and gives their vocabulary entry, build rule, value test and printed
form: a value is there (the subject is present, or a JSONPath finds one), whatever it is —
`null`, `[]` and `{}` too. It is how traceplay's `answer.shape` existence test reads, and
what `is empty`/`not empty` cannot say about a value that is present but empty.
"""

from __future__ import annotations

from typing import Any

from evaldsl.language import ast
from evaldsl.language.values import MISSING, Words
from evaldsl.language.vocabulary import Type, predicate_spec
from evaldsl.predicates.base import BuildKit, CheckContext, Family, FragmentContext, ValueTest

ENTRIES = (
    predicate_spec(
        "exists",
        "exists",
        {"Json"},
        "A value is there (a JSONPath finds one), whatever it is: null, [] and {} too.",
        "answer json $.items[0] exists",
    ),
)


def build(kit: BuildKit, c: list[Any]) -> ast.Exists:
    return ast.Exists(span=kit.span(c))


def check(ctx: CheckContext, pred: ast.Exists, stype: Type, _: ast.Subject, __: str) -> None:
    pass  # nothing to check beyond the subject's type


def value_test(pred: ast.Exists, stype: Type) -> ValueTest:
    return lambda v: v is not MISSING


def fragment(ctx: FragmentContext, pred: ast.Exists, stype: Type) -> str:
    return f"(v is not {ctx.const(MISSING)})"


FAMILY = Family(
    name="exists",
    nodes=(ast.Exists,),
    entries=ENTRIES,
    rules={"exists": build},
    key=lambda pred: "exists",
    check=check,
    print=lambda p, pred, indent: "exists",
    expected=lambda pred: Words("present"),
    fragment=fragment,
    value_test=value_test,
)
