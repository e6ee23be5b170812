"""Values: the exact semantics of JSON equality, containment, emptiness and types.

Takes plain Python values decoded from JSON (dict, list, str, int, float, bool, None, or
`MISSING` for a key that is not there) and gives the answers docs/language.md §6 fixes:
- equality is structural: key order ignored, array order kept, types strict
  (`true` ≠ `1`, `"42"` ≠ `42`, `1` = `1.0`);
- `contains`: text in text, an equal element in a list, a sub-object in an object (the
  typed version of cycgraph's JSON-text comparison);
- empty: missing, null, whitespace-only text (whitespace as JavaScript's `trim()` has it),
  `[]`, `{}`; `0` and `false` are not empty;
- JSON types as traceplay's answer.shape names them.
"""

from __future__ import annotations

import enum
import json
import math
from typing import Any, Literal

import orjson

from evaldsl.language.jsjson import js_json, js_trim
from evaldsl.language.limits import clip_value


class _Missing(enum.Enum):
    """The type of `MISSING`; an enum so that `value is MISSING` narrows for mypy."""

    MISSING = "MISSING"

    def __repr__(self) -> str:
        return "MISSING"

    __str__ = __repr__

    def __bool__(self) -> bool:
        return False


#: A key that is not there, or a run with no output: distinct from `None` (JSON null).
MISSING = _Missing.MISSING
Missing = Literal[_Missing.MISSING]


def is_number(value: Any) -> bool:
    """A JSON number: int or float, never a bool."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def json_equal(a: Any, b: Any) -> bool:
    """Structural JSON equality with strict types.

    >>> json_equal({"a": [1, 2]}, {"a": [1.0, 2]}), json_equal(True, 1), json_equal("42", 42)
    (True, False, False)
    """
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if is_number(a) and is_number(b):
        return bool(a == b)
    if isinstance(a, str) or isinstance(b, str):
        return isinstance(a, str) and isinstance(b, str) and a == b
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    return False


def json_contains(container: Any, item: Any) -> bool:
    """Text: a substring; list: an equal element; object: a sub-object.

    >>> json_contains({"a": 1, "b": 2}, {"a": 1}), json_contains([1, [2]], [2])
    (True, True)
    >>> json_contains("hello", "ell"), json_contains({"a": 1}, "a")
    (True, False)
    """
    if isinstance(container, str):
        return isinstance(item, str) and item in container
    if isinstance(container, list):
        if type(item) is str:  # only a text equals a text: the list's own (C) search
            return item in container
        return any(json_equal(element, item) for element in container)
    if isinstance(container, dict):
        return isinstance(item, dict) and all(
            k in container and json_equal(container[k], v) for k, v in item.items()
        )
    return False


def is_empty(value: Any) -> bool:
    """Missing, null, whitespace-only text, `[]` or `{}`; `0` and `false` are not empty."""
    if value is MISSING or value is None:
        return True
    if isinstance(value, str):
        # whitespace as JavaScript's trim() has it, as cycgraph's memory_not_empty does
        return js_trim(value) == ""
    if isinstance(value, (list, dict)):
        return len(value) == 0
    return False


def json_type(value: Any) -> str:
    """The JSON type word of a value: string, integer, number, boolean, array, object, null."""
    if value is MISSING:
        return "missing"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def has_type(value: Any, wanted: str) -> bool:
    """`is number` holds for finite numbers (integers too); `is integer` for whole ones."""
    found = json_type(value)
    if wanted == "number":
        # ints are always finite (and may be too big for a float: no math.isfinite)
        return found == "integer" or (found == "number" and math.isfinite(value))
    return found == wanted


def js_text(value: Any) -> str:
    """A text as itself, any other value as the compact JSON text JavaScript's
    JSON.stringify writes (`1.0` → `1`, `1e21` → `1e+21`, integers of any size), for
    matching regexes against non-text values and for judging them.

    >>> js_text("a"), js_text({"n": 1.0, "big": 2**70})
    ('a', '{"n":1,"big":1180591620717411303424}')
    """
    if isinstance(value, str):
        return value
    return js_json(value, strict=True)


#: How many characters a message shows of a value (and so the elements of a list it writes)
SHOW_LIMIT = 80


def show(value: Any, limit: int = SHOW_LIMIT) -> str:
    """A value as a message shows it: JSON, shortened."""
    if value is MISSING:
        return "nothing (missing)"
    if isinstance(value, list) and len(value) > limit:
        # only what is shown is written: each element takes 2 characters at least
        # ("1,"), so the first `limit` elements already fill the text that is cut
        value = value[:limit]
    elif type(value) is str and len(value) > limit and value.isascii():
        # (so too of a text: each character writes one at least, and an ASCII text holds
        # no lone surrogate, which would fail the whole text; 1,000 failed assertions on a
        # 170 KB answer wrote it whole 1,000 times to show its first 79 characters)
        value = value[:limit]
    try:
        text = orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
        if "null" in text and holds_non_finite(value):
            # (orjson writes them as null: a Python value, such as a live target's, shows
            # NaN, Infinity and -Infinity as JavaScript and Python print them)
            text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        # not JSON, a lone surrogate, or nested past orjson's 255 levels (or the stack)
        shallow = clip_value(value, 16)
        try:
            text = orjson.dumps(shallow, option=orjson.OPT_NON_STR_KEYS).decode()
        except TypeError:
            try:
                # an integer past 64 bits (a state's or an answer's, read exact) is JSON
                # that orjson does not write: Python's writer does, where `repr` showed
                # the whole value in Python's words (`{'n': None}`). (A lone surrogate,
                # which UTF-8 cannot carry, still goes to `repr`, which escapes it.)
                text = json.dumps(shallow, ensure_ascii=False, separators=(",", ":"))
                text.encode("utf-8")
            except (TypeError, ValueError, RecursionError):
                try:
                    text = repr(shallow)
                except Exception:  # a value whose repr raises: say what it is, never crash
                    text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def holds_non_finite(value: Any) -> bool:
    """Whether `value` is or holds (at any depth) a float NaN or infinity, which JSON has
    no number for: only a Python value can (a live target's, `program.check([...])`).

    >>> holds_non_finite({"q": [1, float("nan")]}), holds_non_finite([1e308, None])
    (True, False)
    """
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float):
            if not math.isfinite(item):
                return True
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return False


class Words(str):
    """An expectation in the language's words, not a value: `exactly 2`, `not empty`,
    `/\\d+ F/`. A report shows it as written; JSON carries it as text (it is a `str`).

    >>> Words("exactly 2") == "exactly 2"
    True
    """

    __slots__ = ()


def to_report(value: Any) -> Any:
    """A value as a JSON report stores it (`MISSING` becomes null)."""
    if value is MISSING:
        return None
    return value
