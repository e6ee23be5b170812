"""List tests: `contains all [..]`, `contains any [..]`, `in [..]`, `in order [..]` and
`only [..]`.

Takes `ListTest` nodes and gives their vocabulary entries, build rules, check rule (each
item must fit the subject; an empty list makes `contains all` and `in order` always pass
and `contains any`/`in` never pass), value tests and printed forms. `in order` is a subsequence, not
necessarily adjacent (repeated names need repeated items); `only` means nothing outside
the list occurs.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from evaldsl.language import ast
from evaldsl.language.jsonkeys import ODD, TOO_BIG, json_key, keys_of
from evaldsl.language.values import json_contains, json_equal
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
        "contains_all",
        "contains all [..]",
        {"Text", "Json", "Names"},
        "Contains every item.",
        "tools contains all [search, summarize]",
    ),
    predicate_spec(
        "contains_any",
        "contains any [..]",
        {"Text", "Json", "Names"},
        "Contains at least one item.",
        'answer contains any ["sunny", "clear"]',
    ),
    predicate_spec(
        "in_order",
        "in order [..]",
        {"Names"},
        "The items occur in this order (a subsequence; repeated names need repeats).",
        "tools in order [search, summarize]",
    ),
    predicate_spec(
        "in",
        "in [..]",
        {"Text", "Json", "Status", "Number"},
        "The value is one of the items.",
        "status in [completed, waiting]",
    ),
    predicate_spec(
        "only",
        "only [..]",
        {"Names"},
        "Nothing outside the list occurs.",
        "tools only [search, get_weather]",
    ),
)

#: How each operation is written, and its vocabulary entry.
WORDS = {
    "all": "contains all",
    "any": "contains any",
    "in_order": "in order",
    "in": "in",
    "only": "only",
}
KEYS = {"all": "contains_all", "any": "contains_any", "in_order": "in_order", "in": "in"}


def _build(op: Any) -> Any:
    def build(kit: BuildKit, c: list[Any]) -> ast.ListTest:
        return ast.make_list_test(op, c[-1], span=kit.span(c))

    return build


def check(
    ctx: CheckContext, pred: ast.ListTest, stype: Type, subject: ast.Subject, subject_text: str
) -> None:
    for item in pred.items.items:
        ctx.value(item, stype, subject, subject_text, whole=False)
    if not pred.items.items:
        if pred.op in ("all", "in_order"):  # (every sequence holds no names in order)
            ctx.never(pred.span, "fail", "the list is empty")
        elif pred.op in ("any", "in"):
            ctx.never(pred.span, "pass", "the list is empty")


def in_order(seen: list[Any], wanted: list[Any]) -> bool:
    """A subsequence, not necessarily adjacent; repeated names need repeated items.

    >>> in_order(["a", "x", "b"], ["a", "b"]), in_order(["b", "a"], ["a", "b"])
    (True, False)
    """
    it: Iterator[Any] = iter(seen)
    # `w in it` consumes the iterator up to the first equal item: the subsequence test at
    # C speed; only a text equals a text, so it is exact for texts (names, always)
    return all((w in it) if type(w) is str else any(json_equal(x, w) for x in it) for w in wanted)


#: A list test of this many items or more on a list looks for them by passes over the
#: list that stop at the first equal element, as `json_contains` does, only until the
#: passes have looked at twice the list's length; the items left are looked up among
#: the keys of the list's elements (`jsonkeys`), made in one walk. Each item took a pass
#: of its own (4,000 objects looked for in a list of 8,000: 70 s); now the work is at
#: most about four walks of the list. Fewer items: their passes, as before.
KEYED_FROM = 8


class ListItems:
    """The items of `contains all [..]`, `contains any [..]`, `in [..]` or `only [..]`,
    with the tests over a value that the reference states pairwise (`json_contains`,
    `json_equal`) made in time linear in the value and the items when there are many."""

    __slots__ = ("items", "keys", "known", "room", "texts")

    def __init__(self, items: Sequence[Any]) -> None:
        self.items = tuple(items)
        keys, room = keys_of(self.items)
        keyed = len(self.items) >= KEYED_FROM and all(k is not ODD for k in keys)
        #: each item's key (None: the tests are pairwise)
        self.keys = tuple(keys) if keyed else None
        self.known = frozenset(keys) if keyed else frozenset()
        #: a value equal to an item has at most this many nodes
        self.room = room
        #: every item is a text (names): a list's own set finds them
        self.texts = keyed and all(type(w) is str for w in self.items)

    def __repr__(self) -> str:  # (what `evaldsl inspect --code` shows of it)
        return f"ListItems({list(self.items)!r})"

    def _found(self, value: list[Any]) -> tuple[set[object], list[Any]]:
        """The keys of a list's elements that could equal an item, and its odd elements."""
        if self.texts:
            # only a text equals a text (a `str` subclass too, by `==`, as a set finds it):
            # the list's set, made at C speed, or its texts when something in it cannot
            # be hashed (an object, a list: equal to no text)
            try:
                return set(value), []
            except TypeError:
                return {e for e in value if isinstance(e, str)}, []
        found: set[object] = set()
        odd: list[Any] = []
        room = self.room
        for element in value:
            if type(element) is str:
                found.add(element)
                continue
            key = json_key(element, room)
            if key is ODD:
                odd.append(element)
            elif key is not TOO_BIG:
                found.add(key)
        return found, odd

    def all_in(self, value: Any) -> bool:
        """`contains all`: every item is in the value (`json_contains`)."""
        if self.keys is None or type(value) is not list:
            return all(json_contains(value, w) for w in self.items)
        return self._look_up(value, self.keys, want_all=True)

    def any_in(self, value: Any) -> bool:
        """`contains any`: some item is in the value (`json_contains`)."""
        if self.keys is None or type(value) is not list:
            return any(json_contains(value, w) for w in self.items)
        return self._look_up(value, self.keys, want_all=False)

    def _look_up(self, value: list[Any], keys: tuple[object, ...], *, want_all: bool) -> bool:
        """Each item looked for by a pass over the list that stops at its first equal
        element (cheap for items found early), until the passes have looked at twice the
        list's length; the items left, by the keys of the list's elements, made once."""
        budget = 2 * len(value)
        spent = looked = 0
        for w in self.items:
            if spent > budget:
                break
            at = _position(value, w)
            spent += len(value) if at < 0 else at + 1
            if (at >= 0) is not want_all:
                return not want_all  # an item missing (all), or one found (any)
            looked += 1
        if looked == len(self.items):
            return want_all
        found, odd = self._found(value)
        left = zip(self.items[looked:], keys[looked:], strict=True)
        hits = (k in found or any(json_equal(e, w) for e in odd) for w, k in left)
        return all(hits) if want_all else any(hits)

    def has(self, value: Any) -> bool:
        """`in`: the value equals an item (`json_equal`)."""
        key = ODD if self.keys is None else json_key(value, self.room)
        if key is ODD:
            return any(json_equal(value, w) for w in self.items)
        return key in self.known

    def covers(self, value: Any) -> bool:
        """`only`: the value is a list and each element equals an item."""
        return isinstance(value, list) and all(self.has(x) for x in value)


def _position(value: list[Any], item: Any) -> int:
    """Where the first element equal to `item` is (`json_equal`), or -1: `json_contains`'s
    pass over a list, telling how far it went."""
    if type(item) is str:  # only a text equals a text: the list's own (C) search
        try:
            return value.index(item)
        except ValueError:
            return -1
    for at, element in enumerate(value):
        if json_equal(element, item):
            return at
    return -1


def _only_names(seen: list[Any], names: frozenset[Any]) -> bool:
    """Every element is one of the names (a text equals only a text: the set's own test
    is exact, at C speed; an element that cannot be hashed is walked)."""
    try:
        return names.issuperset(seen)
    except TypeError:
        return all(type(x) is str and x in names for x in seen)


def value_test(pred: ast.ListTest, stype: Type) -> ValueTest:
    wanted = [ast.to_json(i) for i in pred.items.items]
    match pred.op:
        case "all":
            return ListItems(wanted).all_in
        case "any":
            return ListItems(wanted).any_in
        case "in":
            return ListItems(wanted).has
        case "only":
            if all(type(w) is str for w in wanted):  # names: a set lookup per element
                names = frozenset(wanted)
                return lambda v: isinstance(v, list) and _only_names(v, names)
            return ListItems(wanted).covers
        case "in_order":
            return lambda v: isinstance(v, list) and in_order(v, wanted)


def names_test(pred: ast.ListTest) -> NamesTest | None:
    """`contains all/any`, `only` and `in order` of names through a list's index (items
    that are all texts; `in` tests one value, not a list)."""
    items = [ast.to_json(i) for i in pred.items.items]
    wanted = [w for w in items if isinstance(w, str)]  # (names: exact texts)
    if len(wanted) != len(items):
        return None
    match pred.op:
        case "all":
            return lambda index: index.names.issuperset(wanted)
        case "any":
            return lambda index: not index.names.isdisjoint(wanted)
        case "only":
            allowed = frozenset(wanted)
            return lambda index: allowed.issuperset(index.names)
        case "in_order":
            return lambda index: index.in_order(wanted)
    return None


#: The `ListItems` test a fragment calls for each operation that has one (the same as
#: `value_test`'s closures).
_METHODS = {"in": "has", "all": "all_in", "any": "any_in"}


def fragment(ctx: FragmentContext, pred: ast.ListTest, stype: Type) -> str | None:
    """`in` and `contains all/any` as source; `in order` and `only` walk the value and
    keep their closures."""
    wanted = [ast.to_json(i) for i in pred.items.items]
    if pred.op == "in" and wanted and all(type(w) is str for w in wanted):
        return f"(isinstance(v, str) and v in {ctx.const(frozenset(wanted))})"
    method = _METHODS.get(pred.op)
    return None if method is None else f"{ctx.const(ListItems(wanted))}.{method}(v)"


def print_list_test(p: Printer, pred: ast.ListTest, indent: str) -> str:
    return f"{WORDS[pred.op]} {p.value(pred.items, indent)}"


FAMILY = Family(
    name="lists",
    nodes=(ast.ListTest,),
    entries=ENTRIES,
    rules={
        "in_list": _build("in"),
        "contains_all": _build("all"),
        "contains_any": _build("any"),
        "in_order": _build("in_order"),
        "only": _build("only"),
    },
    key=lambda pred: KEYS.get(pred.op, pred.op),
    check=check,
    print=print_list_test,
    expected=lambda pred: ast.to_json(pred.items),
    fragment=fragment,
    value_test=value_test,
    names_test=names_test,
)
