"""Keys of JSON values, so that equal values are found by hashing instead of pairwise.

Takes a value and a room (how many of its nodes may be looked at) and gives a hashable
key (`json_key`): two values' keys are equal exactly when `values.json_equal` says the
values are, so a set of keys answers "is there an equal element" in one lookup where
`json_equal` against every element took a pass over the list for each item (`contains
all [..]` of 4,000 objects on a list of 8,000: 70 s). Equal values have the same number
of nodes (a scalar is one, a list or an object one plus its elements' or values'), so a
value with more nodes than the room equals nothing of that size: it gives `TOO_BIG`
without being walked further. A value holding anything but exact JSON types (a `str` or
`dict` subclass, a tuple, `MISSING`) gives `ODD`: `json_equal` has its own answer for it,
which the caller asks.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

#: The key of a value with more nodes than the room: it equals no value of that size.
TOO_BIG: Final = object()
#: The key of a value with a node of a type that is not exact JSON: ask `json_equal`.
ODD: Final = object()

# Tags keep the kinds apart where Python's equality would join them: `true` == 1 and
# hash alike in Python, but `json_equal` says they differ. Texts and null are their own
# keys (a text equals only a text; `None` only `None`).
_NUMBER, _BOOL, _LIST, _OBJECT = 0, 1, 2, 3


class _Stop(Exception):
    def __init__(self, key: object) -> None:
        self.key = key


def json_key(value: Any, room: int) -> object:
    """`value`'s key, `TOO_BIG` when it has more than `room` nodes, or `ODD`.

    >>> json_key(1, 1) == json_key(1.0, 1), json_key(True, 1) == json_key(1, 1)
    (True, False)
    >>> json_key({"a": [1, 2]}, 9) == json_key({"a": [1.0, 2]}, 9), json_key([1, 2], 2) is TOO_BIG
    (True, True)
    """
    left = [room]
    try:
        return _key(value, left)
    except _Stop as stop:
        return stop.key
    except RecursionError:  # nested past Python's stack: no key, json_equal's own answer
        return ODD


def _key(value: Any, left: list[int]) -> object:
    left[0] -= 1
    if left[0] < 0:
        raise _Stop(TOO_BIG)
    kind = type(value)
    if kind is str or value is None:
        return value
    if kind is int:
        return (_NUMBER, value)
    if kind is float:
        # NaN equals nothing, itself included: a key no other key equals
        return (_NUMBER, value) if value == value else object()
    if kind is bool:
        return (_BOOL, value)
    if kind is list:
        return (_LIST, tuple([_key(x, left) for x in value]))
    if kind is dict:
        # keys compared as `json_equal` compares them: by Python's equality (`keys() ==`)
        return (_OBJECT, frozenset([(k, _key(x, left)) for k, x in value.items()]))
    raise _Stop(ODD)


def keys_of(values: Iterable[Any]) -> tuple[list[object], int]:
    """Each value's key (made in its own room: never `TOO_BIG`) and the room a value
    equal to one of them needs (the most nodes of any): what looking values up by key
    needs of the values looked for.

    >>> keys_of([1, [2, 3]]) == ([json_key(1, 1), json_key([2, 3], 3)], 3)
    True
    """
    keys: list[object] = []
    room = 0
    for value in values:
        size = nodes(value)
        keys.append(json_key(value, size))
        room = max(room, size)
    return keys, room


def nodes(value: Any) -> int:
    """How many nodes a value has (the room a key of an equal value needs).

    >>> nodes("a"), nodes([1, {"a": 2, "b": [3]}])
    (1, 6)
    """
    if type(value) is list:
        return 1 + sum(nodes(x) for x in value)
    if type(value) is dict:
        return 1 + sum(nodes(x) for x in value.values())
    return 1
