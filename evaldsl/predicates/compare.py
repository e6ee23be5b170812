"""Comparisons: `== != < <= > >= VALUE`.

Takes `Compare` nodes and gives their vocabulary entry, build rule, check rule (order
comparisons apply to numbers, durations and money, and to JSON numbers; the literal must
fit the subject's type and units; counts compared with a negative number are always true
or always false), value test and printed form. Equality is structural with strict types
(`true` ≠ `1`, `"42"` ≠ `42`, `1` = `1.0`, key order ignored); an order comparison holds
only between numbers (NaN never).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

from evaldsl.language import ast
from evaldsl.language.values import is_number, json_equal
from evaldsl.language.vocabulary import TYPE_WORDS, Type, predicate_spec
from evaldsl.predicates.base import (
    BuildKit,
    CheckContext,
    Family,
    FragmentContext,
    Printer,
    ValueTest,
)

ORDERED: frozenset[Type] = frozenset({"Number", "Duration", "Money", "Json"})

ENTRIES = (
    predicate_spec(
        "compare",
        "== != < <= > >= VALUE",
        {"Text", "Json", "Status", "Names", "Number", "Duration", "Money"},
        "Equality (structural for JSON) or order (numbers, durations, money).",
        "tokens <= 2000",
    ),
)

_ORDER: dict[str, Callable[[Any, Any], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


def build(kit: BuildKit, c: list[Any]) -> ast.Compare:
    op: Any = kit.text(c[0])  # CMP_OP: one of the operators `ast.Compare` names
    return ast.make_compare(op, kit.literal(c[1]), span=kit.span(c))


def check(
    ctx: CheckContext, pred: ast.Compare, stype: Type, subject: ast.Subject, subject_text: str
) -> None:
    op, value = pred.op, pred.value
    if op not in ("==", "!=") and stype not in ORDERED:
        ctx.error(
            pred.span,
            "E201",
            f"`{op}` does not apply to `{subject_text}` ({TYPE_WORDS[stype]})",
            "order comparisons apply to numbers, durations and money",
        )
        return
    if op not in ("==", "!=") and stype == "Json" and not isinstance(value, ast.Num):
        ctx.error(value.span, "E205", f"`{op}` compares numbers; found {ast.value_word(value)}")
        return
    ctx.value(value, stype, subject, subject_text, whole=True)
    # counts, token sums, durations and costs are never negative
    if stype == "Number" and isinstance(value, ast.Num):
        n: float = value.value
    elif stype == "Duration" and isinstance(value, ast.Duration):
        n = value.seconds
    elif stype == "Money" and isinstance(value, ast.Money):
        n = value.amount
    else:
        return
    if (op == ">=" and n <= 0) or (op == ">" and n < 0):
        ctx.never(pred.span, "fail", f"`{subject.kind}` is never negative")
    elif (op == "<" and n <= 0) or (op == "<=" and n < 0):
        ctx.never(pred.span, "pass", f"`{subject.kind}` is never negative")


def value_test(pred: ast.Compare, stype: Type) -> ValueTest:
    expected = ast.to_json(pred.value)
    if pred.op in ("==", "!="):
        same = pred.op == "=="
        if type(expected) is str:  # json_equal's answer, without its dispatch
            # (a `str` subclass, as a `StrEnum` a live target returns, is a text there)
            return lambda v: (
                (v == expected if type(v) is str else isinstance(v, str) and v == expected) is same
            )
        return lambda v: json_equal(v, expected) is same
    order = _ORDER[pred.op]
    return lambda v: (
        is_number(v) and not (isinstance(v, float) and math.isnan(v)) and order(v, expected)
    )


def fragment(ctx: FragmentContext, pred: ast.Compare, stype: Type) -> str:
    """`value_test` as source: the same tests, without the closure call."""
    expected = ast.to_json(pred.value)
    c = ctx.const(expected)
    if pred.op in ("==", "!="):
        if type(expected) is str:
            same = f"(v == {c} if type(v) is str else isinstance(v, str) and v == {c})"
        else:
            same = f"{ctx.const(json_equal)}(v, {c})"
        return same if pred.op == "==" else f"(not {same})"
    # `is_number(v)` and not NaN, without the calls: a number that is not a bool, and a
    # float that equals itself; a plain int or float first, compared at once (a NaN
    # fails every order comparison, as `value_test` says it must)
    return (
        f"(v {pred.op} {c} if type(v) is int or type(v) is float"
        f" else isinstance(v, (int, float)) and type(v) is not bool"
        f" and not (isinstance(v, float) and v != v) and v {pred.op} {c})"
    )


def print_compare(p: Printer, pred: ast.Compare, indent: str) -> str:
    return f"{pred.op} {p.value(pred.value, indent)}"


FAMILY = Family(
    name="compare",
    nodes=(ast.Compare,),
    entries=ENTRIES,
    rules={"compare": build},
    key=lambda pred: "compare",
    check=check,
    print=print_compare,
    expected=lambda pred: ast.to_json(pred.value),
    fragment=fragment,
    value_test=value_test,
)
