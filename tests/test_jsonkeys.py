"""Keys of JSON values (`language/jsonkeys.py`) and the list tests that find items by them
(`predicates/lists.ListItems`): the same answers as `json_equal` and `json_contains`
pairwise, on values of every JSON type and on values that are not JSON at all."""

from __future__ import annotations

import json
import math
from typing import Any
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

import evaldsl
from evaldsl.language.jsonkeys import ODD, TOO_BIG, json_key, nodes
from evaldsl.language.values import MISSING, json_contains, json_equal
from evaldsl.predicates import lists
from evaldsl.predicates.lists import KEYED_FROM, ListItems
from tests.fuzzing import examples


class Text(str):
    """A text that is not exactly `str`: `json_equal` compares it as text."""


# scalars that Python's equality joins and `json_equal` keeps apart (`true` and 1), or
# joins across types (1 and 1.0, an int past a double's range), NaN, and a few values that
# are not JSON (a str subclass, a tuple, MISSING)
scalars = st.sampled_from(
    [0, 1, 1.0, -0.0, True, False, None, "", "a", "1", 2**64 + 1, float(2**64), math.nan]
) | st.sampled_from([Text("a"), (1,), MISSING])
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["a", "b", "1"]), inner, max_size=3)
    ),
    max_leaves=8,
)


def _json_only(value: Any) -> bool:
    if type(value) is list:
        return all(_json_only(x) for x in value)
    if type(value) is dict:
        return all(_json_only(x) for x in value.values())
    return type(value) in (str, int, float, bool) or value is None


@settings(max_examples=examples(400), deadline=None)
@given(values, values)
def test_keys_are_equal_when_json_equal_says_so(a: Any, b: Any) -> None:
    big = nodes(a) + nodes(b)
    ka, kb = json_key(a, big), json_key(b, big)
    assert (ka is ODD) == (not _json_only(a))
    if ka is not ODD and kb is not ODD:
        assert (ka == kb) == json_equal(a, b)
        if ka == kb:
            assert hash(ka) == hash(kb)
    # a value with more nodes than the room is not walked past it
    if _json_only(a):
        assert (json_key(a, nodes(a) - 1) is TOO_BIG) is True
        assert json_key(a, nodes(a)) is not TOO_BIG


def _variant(value: Any) -> Any:
    """An equal value written differently: ints as floats, keys in another order."""
    if type(value) is list:
        return [_variant(x) for x in value]
    if type(value) is dict:
        return {k: _variant(value[k]) for k in reversed(value)}
    if type(value) is int and abs(value) < 2**53:
        return float(value)
    return value


@settings(max_examples=examples(300), deadline=None)
@given(
    # any values, or texts only (names: found by the list's own set)
    st.lists(values, max_size=KEYED_FROM * 2)
    | st.lists(st.text("ab1", max_size=2), min_size=KEYED_FROM, max_size=KEYED_FROM * 2),
    st.lists(values | st.text("ab1", max_size=2).map(Text), max_size=12),
    st.data(),
)
def test_list_items_answer_as_the_pairwise_tests(
    items: list[Any], others: list[Any], data: st.DataObject
) -> None:
    """Below and above `KEYED_FROM` items, with some items' variants among the value's
    elements (so some are found) and values that are not lists."""
    chosen = data.draw(st.lists(st.sampled_from(items), max_size=len(items))) if items else []
    elements = [_variant(x) for x in chosen] + others
    elements = data.draw(st.permutations(elements))
    tests = ListItems(items)
    for value in (elements, *elements[:3], "a text", {"a": 1}):
        assert tests.all_in(value) == all(json_contains(value, w) for w in items)
        assert tests.any_in(value) == any(json_contains(value, w) for w in items)
        assert tests.has(value) == any(json_equal(value, w) for w in items)
        assert tests.covers(value) == (
            isinstance(value, list) and all(any(json_equal(x, w) for w in items) for x in value)
        )


def test_many_items_are_found_by_key_not_pairwise() -> None:
    """4,000 objects wanted in a list of 8,000: the first items by a pass each, until
    they have looked at twice the list, the rest by key: at most three passes' worth of
    comparisons a test (pairwise: 4,000 passes, up to 32 million comparisons), and the
    answers are still exact: one object missing fails it."""
    have = [{"k": i, "v": [i, str(i)]} for i in range(8000)]
    wanted = [{"v": [float(i), str(i)], "k": i} for i in range(4000, 8000)]
    tests = ListItems(wanted)
    with mock.patch.object(lists, "json_equal", wraps=json_equal) as compared:
        assert tests.all_in(have)
        assert tests.any_in(have)
        assert not tests.all_in(have[:-1])
        assert not tests.any_in(have[:4000])
        assert tests.covers(wanted)
        assert not tests.covers([*wanted, {"k": 1}])
        assert compared.call_count <= 3 * 8000 * 4  # at most three passes a test


def test_an_element_without_a_key_is_compared_pairwise() -> None:
    """A text that is a `str` subclass has no key (ODD) but equals the text it spells:
    it is found, past the passes (the numbers are looked for first, and missed), as
    `json_contains` finds it."""
    tests = ListItems([*range(KEYED_FROM), "a"])
    assert tests.keys is not None  # (found by key past the passes)
    value = [(1,), MISSING, Text("a")]
    assert tests.any_in(value) and json_contains(value, "a")
    assert tests.covers([Text("a"), 3]) and not tests.covers([Text("b")])
    assert not tests.any_in([(1,), MISSING, Text("b")])
    assert ListItems([Text("a"), *range(KEYED_FROM)]).keys is None  # an odd item: pairwise


def test_a_long_list_test_gives_the_same_verdicts_in_both_passes() -> None:
    """`contains all`, `contains any` and `in` of many objects through a program: the
    reference pass (a small run) and the generated one (a run past its threshold)."""
    wanted = ", ".join(f"{{k: {i}}}" for i in range(10))
    text = "\n".join(
        [
            f"answer json $.objs contains all [{wanted}]",
            f"answer json $.objs contains any [{wanted}]",
            f"answer json $.objs[0] in [{wanted}]",
            f"answer json $.missing contains all [{wanted}]",
            f"every tool t args $.obj in [{wanted}]",  # (a fragment of the generated pass)
            f"tool t args $.obj in [{wanted}]",
        ]
    )
    case = evaldsl.compile(text).cases[0]

    def events(turns: int, objs: list[Any]) -> list[dict[str, Any]]:
        answer = json.dumps({"objs": objs})
        return [
            {"type": "tool.call", "name": "t", "arguments": {"obj": objs[-1]}},
            *({"type": "llm.response", "output": answer} for _ in range(turns)),
        ]

    everything = [{"k": float(i)} for i in reversed(range(12))]
    some = [{"k": 3}, {"k": 99}]
    for turns in (1, 3000):
        assert [v.status for v in case.check(events(turns, everything)).verdicts] == [
            "pass",
            "pass",
            "fail",  # {k: 11} is not one of them
            "fail",
            "pass",  # {k: 0.0} is
            "pass",
        ]
        assert [v.status for v in case.check(events(turns, some)).verdicts] == [
            "fail",
            "pass",
            "pass",
            "fail",
            "fail",  # {k: 99} is not
            "fail",
        ]
