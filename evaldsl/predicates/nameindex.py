"""A list of names indexed once for all the tests of it in a run: `tools`, `nodes`.

Takes a list (the names a trace's calls made, in order, or a state's visited nodes) and
gives its `NameIndex`: the set of its names. The list tests of a case (`contains X`,
`contains all/any [..]`, `only [..]`, `in order [..]`) each walked the list: K of them
over a trace of n calls cost K × n (1,000 `tools contains` over 75,000 calls: ~0.5 s).
Through the index each costs about its own items (`in order` searches the list only when
every name it asks for is there), and the index is made once per run and subject
(`RunFacts.shared`), for a case with three tests of the list or more (the compiler's
`NAMES_INDEXED_FROM`: fewer walk it, each stopping where it is decided).

A list whose set holds anything but exact `str` elements has no index (`name_index` gives
None): its tests walk it as their closures do. For names the index answers what those
closures answer: only a text equals a text, and an exact `str` hashes as it compares.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from evaldsl.runs.index import RunFacts


class NameIndex:
    """The names of a list, as a set."""

    __slots__ = ("_names", "names")

    def __init__(self, names: list[str]) -> None:
        self._names = names
        self.names = frozenset(names)

    def in_order(self, wanted: Sequence[str]) -> bool:
        """`wanted` is a subsequence of the list (each at the first place after the one
        before it: repeated names need repeated places), as `lists.in_order` says: a name
        the list lacks answers at once, else the list's own search finds each after the
        last (listing every name's places took longer than the searches it saved, ~10 ms
        for a list of 75,000 names against 29 searches)."""
        if not self.names.issuperset(wanted):
            return False
        names, at = self._names, -1
        try:
            for name in wanted:
                at = names.index(name, at + 1)
        except ValueError:
            return False
        return True


#: A test of a list of names read through its index.
NamesTest = Callable[[NameIndex], bool]


def name_index(facts: RunFacts, subject: str, value: list[Any]) -> NameIndex | None:
    """The index of `value`, the subject `subject` of this run (made at its first test,
    kept in `facts.shared` with the list it is of); None when it holds anything but exact
    texts."""
    key = ("names", subject)
    kept = facts.shared.get(key)
    if kept is not None and kept[0] is value:
        made: NameIndex | None = kept[1]
        return made
    # The types of the set's elements, not of every element: the type of each of a
    # trace's 15,000 names cost more than twice the set's making (3.4 M instructions
    # against 1.4 M). An element that is not an exact `str` is left out of the set only
    # when it equals a text before it and hashes as that text does: it then equals what
    # that text equals (for any value whose equality keeps to its hash and is transitive),
    # and the closures, which stop at the first equal element, meet the text first.
    try:
        index: NameIndex | None = NameIndex(value)
    except Exception:  # an element that cannot be hashed (a list, a dict): walked
        index = None
    if index is not None and not set(map(type, index.names)) <= {str}:
        index = None
    facts.shared[key] = (value, index)
    return index
