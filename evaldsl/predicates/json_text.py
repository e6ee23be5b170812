"""JSON text: `is json`.

Takes `IsJson` nodes and gives their vocabulary entry, build rule, value test and printed
form: the value is text that parses as one JSON document (`answer is json`, or a tool
argument that carries JSON as a string: `tool x args $.payload is json`). A value that is
not text is not JSON text, whatever it is. promptfoo's `is-json` is the same test.
"""

from __future__ import annotations

from typing import Any

import orjson

from evaldsl.gcpause import paused_gc
from evaldsl.language import ast
from evaldsl.language.values import Words
from evaldsl.language.vocabulary import Type, predicate_spec
from evaldsl.predicates.base import BuildKit, CheckContext, Family, FragmentContext, ValueTest

ENTRIES = (
    predicate_spec(
        "is_json",
        "is json",
        {"Text", "Json"},
        "Text (or a JSON string) that parses as one JSON document.",
        "answer is json",
    ),
)


def build(kit: BuildKit, c: list[Any]) -> ast.IsJson:
    return ast.IsJson(span=kit.span(c))


def check(ctx: CheckContext, pred: ast.IsJson, stype: Type, _: ast.Subject, __: str) -> None:
    pass  # any text may or may not be JSON


#: From this length on a text is parsed with the garbage collector paused: the collections
#: the parse's objects set off walked the growing heap again and again (`answer is json`
#: of a 2.2 MB answer: 0.23 s, 0.05 s paused), where a short text's parse sets off none
PAUSED_FROM = 65_536


def parses(value: Any) -> bool:
    """Whether `value` is text holding one JSON document.

    >>> parses('{"a": [1, 2]}'), parses("  42 "), parses("{a: 1}"), parses({"a": 1})
    (True, True, False, False)
    """
    if not isinstance(value, str):
        return False
    try:
        json_loads(value)
    except orjson.JSONDecodeError:
        return False
    return True


def json_loads(text: str) -> Any:
    """`orjson.loads(text)`; a text of `PAUSED_FROM` characters or more is parsed with the
    garbage collector paused (many small objects, no cycles: see gcpause), where pausing
    a short one's cost more than the collections it sets off (none)."""
    if len(text) < PAUSED_FROM:
        return orjson.loads(text)
    with paused_gc():
        return orjson.loads(text)


def value_test(pred: ast.IsJson, stype: Type) -> ValueTest:
    return parses


def fragment(ctx: FragmentContext, pred: ast.IsJson, stype: Type) -> str:
    return f"{ctx.const(parses)}(v)"


FAMILY = Family(
    name="json text",
    nodes=(ast.IsJson,),
    entries=ENTRIES,
    rules={"is_json": build},
    key=lambda pred: "is_json",
    check=check,
    print=lambda p, pred, indent: "is json",
    expected=lambda pred: Words("JSON text"),
    fragment=fragment,
    value_test=value_test,
)
