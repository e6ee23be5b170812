"""JSON data: what a live target returned, as plain JSON values, or a clear error.

Takes any Python value and gives JSON data made of exact built-in types only — `dict`
with text keys, `list`, `str`, `int`, `float`, `bool`, `None` — so nothing of the user's
code travels with it (a subclass's `__eq__`, a `__repr__`, a generator). The target worker
converts a return value with it before sending it to the runner (and `runs.detect` the
output of an `evaldsl.Run` given to `check`), and it imports only the standard library:
the worker loads this file by its path, without the evaldsl package.

What JSON data cannot hold is refused with `NotJsonData`, whose message names the place
(`$.items[2]`) and the reason: a structure that contains itself, nesting deeper than
`MAX_DEPTH`, shared references that expand to more than `MAX_SHARED_VALUES` values
beyond those held once (a list holding one list twice, 60 levels of it, is 2^60 values
as JSON: a structure JSON text cannot write, as a YAML file's alias bomb), an integer of
more than `MAX_INT_DIGITS` digits, a float that is NaN or infinite, text with a lone
surrogate, a key that is not text, a number, a boolean or None, and any other type (named
with its `repr`, or with the error its `repr` raised). Tuples become arrays; number,
boolean and None keys become their JSON text, as `json.dumps` writes them.

    >>> to_json_data({"n": (1, 2.5), 3: None})
    {'n': [1, 2.5], '3': None}
"""

from __future__ import annotations

import math
import re
from typing import Any

#: Arrays and objects nested deeper than this are refused (a value is not a call stack).
MAX_DEPTH = 200
#: The values that references to an array or object already converted add, each such
#: reference expanded (as YAML's aliases are bounded: `language/limits.MAX_YAML_NODES`).
#: A value held once is bounded by the memory holding it; one held by many references
#: is written whole at each, and a few levels of them make more than any machine holds.
MAX_SHARED_VALUES = 1_000_000
#: Integers with more digits than this are refused: Python itself will not print them.
MAX_INT_DIGITS = 4300
_INT_BOUND = 10**MAX_INT_DIGITS

_SURROGATE = re.compile("[\ud800-\udfff]")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
#: The most steps of a refused value's path a message shows whole.
_PATH_SHOWN = 8
#: How much of a refused object's `repr` a message shows.
_REPR_LIMIT = 80
#: How much of an exception's message a case's error keeps (a text in a found value keeps
#: as much): its start and end, the middle counted. A target's exception carried a 10 MB
#: message into a 10 MB console line and every report.
MESSAGE_LIMIT = 10_000


class NotJsonData(Exception):
    """A value that JSON data cannot hold; the message says where and why."""

    def __init__(self, reason: str, steps: tuple[str, ...] = ()) -> None:
        self.reason = reason
        self.steps = steps
        super().__init__(f"{self.where}: {reason}")

    @property
    def where(self) -> str:
        """The JSONPath of the refused value (`$` is the whole value); a path of more than
        `_PATH_SHOWN` steps abbreviated (`$[0][0]…[0] (200 levels)`), never 200 of them.

        >>> NotJsonData("too deep", ("[0]",) * 200).where
        '$[0][0]…[0] (200 levels)'
        """
        steps = self.steps
        if len(steps) <= _PATH_SHOWN:
            return "$" + "".join(steps)
        return f"${steps[0]}{steps[1]}…{steps[-1]} ({len(steps)} levels)"

    def inside(self, step: str) -> NotJsonData:
        """The same error, one level further out (paths are built only on failure)."""
        return NotJsonData(self.reason, (step, *self.steps))


def to_json_data(value: Any) -> Any:
    """`value` as JSON data of exact built-in types, or `NotJsonData`.

    >>> to_json_data([True, "a", {"b": 1.5}])
    [True, 'a', {'b': 1.5}]
    >>> loop = []; loop.append(loop)
    >>> to_json_data({"a": loop})
    Traceback (most recent call last):
    ...
    evaldsl.jsondata.NotJsonData: $.a[0]: it contains itself (a circular structure)
    """
    return _convert(value, 0, _Walk())


class _Walk:
    """What a conversion has met: the arrays and objects it is inside (`open_ids`: one met
    again there contains itself), those it converted (`done`), how many converted again
    it is inside (`again`) and the values converted inside them (`extra`)."""

    __slots__ = ("again", "done", "extra", "open_ids")

    def __init__(self) -> None:
        self.open_ids: set[int] = set()
        self.done: set[int] = set()
        self.again = 0
        self.extra = 0


def run_to_json_data(run: Any, missing: Any) -> dict[str, Any]:
    """The fields of an `evaldsl.Run` as JSON data (`missing` is the `MISSING` marker of a
    run without output, left out); `events` are read into a list."""
    fields: dict[str, Any] = {}
    for name in ("state", "path", "format", "latency_ms"):
        fields[name] = _field(name, getattr(run, name))
    if run.events is not None:
        try:
            events = list(run.events)
        except Exception as err:  # a file-backed stream that cannot be read
            raise NotJsonData(f"its events cannot be read: {describe_error(err)}") from None
        fields["events"] = _field("events", events)
    if run.output is not missing:
        fields["output"] = _field("output", run.output)
    read = run.read
    if read is not None:
        fields["read"] = _field(
            "read",
            {
                "format": read.format,
                "why": read.why,
                "recognised": read.recognised,
                "skipped": read.skipped,
                "notes": list(read.notes),
            },
        )
    left = getattr(run, "unrecorded", None)
    if left is not None:  # (what its recording left out stays unknown in the parent)
        fields["unrecorded"] = _field(
            "unrecorded",
            {
                "how": left.how,
                "responses": left.responses,
                "answers": sorted(left.answers),
                "arguments": {name: sorted(ns) for name, ns in left.arguments.items()},
                "results": dict(left.results),
                "cut": dict(left.cut),
                "answers_why": left.answers_why,
            },
        )
    return fields


def _field(name: str, value: Any) -> Any:
    try:
        return to_json_data(value)
    except NotJsonData as err:
        raise err.inside(f".{name}") from None


def _convert(value: Any, depth: int, walk: _Walk) -> Any:
    kind = type(value)
    if value is None or kind is bool:
        return value
    if issubclass(kind, str):
        return _text(str.__str__(value))
    if issubclass(kind, int):
        return _integer(int.__int__(value))
    if issubclass(kind, float):
        number = float.__float__(value)
        if not math.isfinite(number):
            raise NotJsonData(f"{number!r} is not a JSON number")
        return number
    if issubclass(kind, (dict, list, tuple)):
        if depth >= MAX_DEPTH:
            raise NotJsonData(f"nested deeper than {MAX_DEPTH} levels")
        key = id(value)
        if key in walk.open_ids:
            raise NotJsonData("it contains itself (a circular structure)")
        # (the value lives while it is converted: its id names no other meanwhile)
        again = key in walk.done
        walk.done.add(key)
        if again or walk.again:  # (converted again, or inside one that is: counted)
            walk.extra += len(value)
            if walk.extra > MAX_SHARED_VALUES:
                raise NotJsonData(
                    f"shared references expand to more than {MAX_SHARED_VALUES:,} values "
                    "beyond those held once (an array or object held by many references is "
                    "written whole at each: JSON text of it would not fit in memory)"
                )
        walk.open_ids.add(key)
        walk.again += again
        try:
            if issubclass(kind, dict):
                return _object(value, depth, walk)
            items = list.__iter__(value) if issubclass(kind, list) else tuple.__iter__(value)
            return _array(items, depth, walk)
        finally:
            walk.open_ids.discard(key)
            walk.again -= again
    raise NotJsonData(f"{describe(value)} is not JSON data")


def _array(items: Any, depth: int, walk: _Walk) -> list[Any]:
    out = []
    for i, item in enumerate(items):
        try:
            out.append(_convert(item, depth + 1, walk))
        except NotJsonData as err:
            raise err.inside(f"[{i}]") from None
    return out


def _object(value: dict[Any, Any], depth: int, walk: _Walk) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, item in dict.items(value):
        name = _key(key)
        if name in out:
            raise NotJsonData(f"two keys are {name!r} in JSON (one was not text)")
        try:
            out[name] = _convert(item, depth + 1, walk)
        except NotJsonData as err:
            raise err.inside(_step(name)) from None
    return out


def _key(key: Any) -> str:
    kind = type(key)
    if issubclass(kind, str):
        return _text(str.__str__(key))
    if key is None:
        return "null"
    if kind is bool:
        return "true" if key else "false"
    if issubclass(kind, (int, float)):
        return repr(_convert(key, 0, _Walk()))
    raise NotJsonData(f"a key that is {describe(key)} (JSON keys are text)")


def _step(name: str) -> str:
    return f".{name}" if _NAME.match(name) else f"[{name!r}]"


def _text(text: str) -> str:
    found = _SURROGATE.search(text)
    if found is not None:
        raise NotJsonData(
            f"text with a lone surrogate ({found.group()!a} at index {found.start()}), "
            "which is not Unicode"
        )
    return text


def _integer(number: int) -> int:
    if -_INT_BOUND < number < _INT_BOUND:
        return number
    digits = int(number.bit_length() * math.log10(2))
    raise NotJsonData(
        f"an integer of about {digits:,} digits (at most {MAX_INT_DIGITS:,} are allowed)"
    )


def describe(value: Any) -> str:
    """A refused value in words: its type and a short `repr` (or what its `repr` raised)."""
    kind = type(value)
    name = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"
    a = "an" if name[:1].lower() in "aeiou" else "a"  # (an object, an Order: a shop.Cart)
    try:
        shown = repr(value)
    except BaseException as err:  # the user's __repr__: anything may come out of it
        return f"{a} {name} (its repr raised {describe_error(err)})"
    if not isinstance(shown, str):  # pragma: no cover - repr() checks this itself
        return f"{a} {name}"
    shown = clean_text(str.__str__(shown))
    if len(shown) > _REPR_LIMIT:
        shown = shown[: _REPR_LIMIT - 1] + "…"
    return f"{a} {name} ({shown})"


def clean_text(text: str) -> str:
    """`text` with each lone surrogate replaced by U+FFFD, for messages."""
    return _SURROGATE.sub("\ufffd", text)


def describe_error(err: BaseException) -> str:
    """`ValueError: message` for an exception whose `str` may itself raise or be empty; a
    message past `MESSAGE_LIMIT` characters keeps its start and end around the count of
    those cut.

    >>> message = describe_error(ValueError("x" * 20_000))
    >>> len(message), message[8_000:8_050]
    (10045, 'xxxxxxxxxxxx… (10,000 characters not shown) …xxxxx')
    """
    kind = type(err).__name__
    try:
        text = str(err)
    except BaseException:
        text = "(its message cannot be shown)"
    text = clean_text(str.__str__(text))
    if len(text) > MESSAGE_LIMIT:
        # (`diagnostics.abbreviated`'s cut, written out: the worker loads this file
        # without the package, so it imports nothing of evaldsl)
        tail = MESSAGE_LIMIT // 5
        hidden = len(text) - MESSAGE_LIMIT
        text = f"{text[: MESSAGE_LIMIT - tail]}… ({hidden:,} characters not shown) …{text[-tail:]}"
    return f"{kind}: {text}" if text else kind
