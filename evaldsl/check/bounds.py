"""Bounds of a run's measures that a case's assertions set together.

Takes top-level assertions (`tokens < 100`, `latency >= 2s`, `guards == 0`) and gives, for
each one that bounds a measure of the run by a literal, the measure's name and the bound;
`Narrowing` holds a case's bounds of one measure so that the checker can say when a later
assertion leaves no value that meets them all (`tokens < 100` beside `tokens > 200`: W602,
it can never pass). Counts (tokens, steps, guards, …) are whole numbers, so `steps > 1`
beside `steps < 2` leaves none either; `latency` and `cost` are any number.
"""

from __future__ import annotations

import math
from typing import Any

from evaldsl.language import ast

#: The measures a comparison with a number bounds, and whether their values are whole.
MEASURES: dict[str, bool] = {
    "tokens": True,
    "input_tokens": True,
    "output_tokens": True,
    "steps": True,
    "tool_calls": True,
    "guards": True,
    "errors": True,
    "latency": False,
    "cost": False,
}


#: One side of a measure's range: its value, whether the value itself is out (`<`, `>`),
#: and what set it (the caller's: the checker's assertion and its source, turned into
#: words only when a contradiction is said). Tuples, not classes: every comparison of a
#: measure in a suite makes one or two (a class's `__init__` was 5% of compiling).
Bound = tuple[float, bool, Any]


def measure_bounds(
    expr: ast.Expr, where: Any = None
) -> tuple[str, Bound | None, Bound | None] | None:
    """The measure `expr` bounds and its (least, most) bounds (None: unbounded), each
    set by `where`, or None for an assertion that bounds no measure by a literal (`!=`
    excludes one value and bounds nothing; a comparison under `not`, `and` or `or` is
    never asked).

    >>> e = ast.Check(ast.Subject("steps"), ast.Compare(">", ast.Num(1)))
    >>> measure_bounds(e, "line 3")
    ('steps', (2, False, 'line 3'), None)
    """
    if type(expr) is not ast.Check or expr.subject.keys:
        return None
    kind = expr.subject.kind
    whole = MEASURES.get(kind)
    pred = expr.predicate
    if whole is None or type(pred) is not ast.Compare or pred.op == "!=":
        return None
    value = _number(pred.value)
    if value is None or not math.isfinite(value):
        return None
    op = pred.op
    low: Bound | None = None
    high: Bound | None = None
    if op != "<" and op != "<=":  # (`>`, `>=`, `==`)
        strict = op == ">"
        if whole:  # (a whole number above 1.5 is at least 2: said as a closed bound)
            value_low = math.floor(value) + 1 if strict else math.ceil(value)
            low = (value_low, False, where) if value_low > 0 else None
        elif value > 0 or (strict and value == 0):
            low = (value, strict, where)
        # (no measure is below 0: a least bound every value meets narrows nothing)
    if op != ">" and op != ">=":  # (`<`, `<=`, `==`)
        strict = op == "<"
        value_high: float
        if whole:
            value_high = math.ceil(value) - 1 if strict else math.floor(value)
            strict = False
        else:
            value_high = value
        if value_high < 0 or (value_high == 0 and strict):
            return None  # no value meets it: its own W602 already (`tokens < 0`)
        high = (value_high, strict, where)
    if low is None and high is None:
        return None
    return kind, low, high


class Narrowing:
    """A measure's bounds so far in a case: the greatest least bound and the smallest
    most bound."""

    __slots__ = ("high", "low")

    def __init__(self) -> None:
        self.low: Bound | None = None
        self.high: Bound | None = None

    def copy(self) -> Narrowing:
        """The same bounds, to be narrowed apart."""
        twin = Narrowing()
        twin.low, twin.high = self.low, self.high
        return twin

    def add(self, low: Bound | None, high: Bound | None) -> Bound | None:
        """Narrow by one assertion's bounds; the earlier bound it contradicts (and then
        nothing is narrowed), else None."""
        if low is not None and self.high is not None and _apart(low, self.high):
            return self.high
        if high is not None and self.low is not None and _apart(self.low, high):
            return self.low
        if low is not None and (self.low is None or _tighter_low(low, self.low)):
            self.low = low
        if high is not None and (self.high is None or _tighter_high(high, self.high)):
            self.high = high
        return None


def _number(value: ast.Value) -> float | None:
    if type(value) is ast.Num and not isinstance(value.value, bool):
        return value.value
    if type(value) is ast.Duration:
        return value.seconds
    if type(value) is ast.Money:
        return value.amount
    return None


def _apart(low: Bound, high: Bound) -> bool:
    """No value is at least `low` and at most `high`."""
    return low[0] > high[0] or (low[0] == high[0] and (low[1] or high[1]))


def _tighter_low(new: Bound, old: Bound) -> bool:
    return new[0] > old[0] or (new[0] == old[0] and new[1] and not old[1])


def _tighter_high(new: Bound, old: Bound) -> bool:
    return new[0] < old[0] or (new[0] == old[0] and new[1] and not old[1])
