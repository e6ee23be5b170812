"""What the generated tests of calls call while a pass runs: searches and lookups of many
tests at once.

Takes the regexes, literal texts and expected values of the tests `groupgen.py` decides
together on one path, and gives the objects the generated code holds in its namespace:
RE2 Sets searching for every pattern at once (`regex_set`, in chunks of
`REGEXES_PER_SET` and split again where one is too large for `SET_MEMORY`;
`literal_set`), their raw search (`set_matcher`), and the lookups of values that have no
JSON key (`equal_items`, `objects_at`) or of objects tested whole (`objects_passed`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import re2

from evaldsl.language.regexes import compile_regex
from evaldsl.language.values import json_contains, json_equal

#: The memory an RE2 Set may take, its program and its DFA's states. With RE2's default
#: (8 MiB), ~2,700 regexes of one path made a program too large to compile, and a Set of
#: 3,000 kept its DFA within it only by rebuilding it at nearly every search (3,000
#: regexes over 1,500 calls: 16 s; 6.7 s with this). A bound, not an allocation: the DFA
#: grows only with the states a search visits.
SET_MEMORY = 64 << 20
#: At most this many regexes in one Set: a DFA's states are sets of the patterns' states
#: (each a partial match), and over patterns that overlap (words of one alphabet, as
#: `\b{w}[a-z]*\b` for thousands of words) their number grows past any memory, so the
#: DFA is rebuilt at every search; several smaller Sets each keep theirs. Measured on one
#: path's regexes over 1,500-20,000 calls: 3,000 such regexes 6.7 s in one Set, 1.8 s in
#: Sets of 256 (1.1 s of 64; 2.9 s tested one by one); 877 regexes of `bench.py`'s forms
#: 1.06 s in one Set, 0.88 s in Sets of 256 (1.13 s of 128, 0.2-0.7 s slower of 64).
#: Literal texts (one trie) stay in one Set.
REGEXES_PER_SET = 256


class SetChunks:
    """Patterns in several RE2 Sets: `Match` gives the indices (in the order the patterns
    were given) of those found in a text, as one Set's would."""

    __slots__ = ("parts",)

    def __init__(self, parts: list[tuple[int, Any]]) -> None:
        # (the index of a part's first pattern, its search, whether it takes bytes)
        self.parts = [(start, *set_matcher(found)) for start, found in parts]

    def Match(self, text: str) -> list[int]:  # (the name RE2's Sets answer to)
        data = text.encode()
        return [
            start + i
            for start, match, takes_bytes in self.parts
            for i in match(data if takes_bytes else text) or ()
        ]


def regex_set(patterns: list[tuple[str, str]], *, most: int | None = None) -> Any:
    """One RE2 Set searching for every pattern at once (each with its flags inline, as
    `compile_regex` writes them), or `SetChunks` of at most `most` patterns each
    (`REGEXES_PER_SET`), split again where one is too large for a Set's memory."""
    parts = _sets(patterns, 0, REGEXES_PER_SET if most is None else most)
    return parts[0][1] if len(parts) == 1 else SetChunks(parts)


def _sets(patterns: list[tuple[str, str]], start: int, most: int) -> list[tuple[int, Any]]:
    """The Sets of `patterns` (the first at index `start`), each with its first index."""
    found: Any = None
    if len(patterns) <= most:
        options = re2.Options()
        options.log_errors = False
        options.max_mem = SET_MEMORY
        found = re2.Set.SearchSet(options)
        for pattern, flags in patterns:
            assert not isinstance(compile_regex(pattern, flags), Exception)
            prefix = f"(?{''.join(sorted(set(flags)))})" if flags else ""
            found.Add(prefix + pattern)
        try:
            found.Compile()
        except re2.error:  # too large for one Set: each pattern alone compiles (checked)
            if len(patterns) < 2:
                raise
            found = None
    if found is not None:
        return [(start, found)]
    half = len(patterns) // 2
    return _sets(patterns[:half], start, most) + _sets(patterns[half:], start + half, most)


def literal_set(texts: list[str]) -> Any:
    """One RE2 Set of literal texts (a trie to its DFA: as many as a Set's memory takes)."""
    return regex_set([(re.escape(t), "") for t in texts], most=len(texts))


def set_matcher(found: Any) -> tuple[Callable[[Any], Any], bool]:
    """A compiled RE2 Set's search for the indices of its patterns found in a text, and
    whether it takes the text's UTF-8 bytes (`text.encode()`), not the text itself. It
    runs for every value of every call, so the generated code calls the Set's own `Match`
    (no Python wrapper, whose frame and `encode("utf-8")`, which looks the codec up by
    name, were about half of each search); a wrapper without one is called as it is."""
    inner = getattr(found, "_set", None)
    match = getattr(inner, "Match", None)
    if match is None:
        return found.Match, False
    return match, True


def equal_items(value: Any, entries: tuple[tuple[int, tuple[Any, ...]], ...]) -> list[int]:
    """The tests of `entries` (each a test and its values) with a value `json_equal` to
    `value`: how a value that has no JSON key (`jsonkeys.ODD`) is looked for."""
    return [j for j, items in entries if any(json_equal(value, w) for w in items)]


def objects_at(x: Any, key: str, table: dict[object, dict[int, Any]]) -> dict[int, Any]:
    """The tests of an object table (`GroupWriter.object_tables`) whose object has a value
    `json_equal` to `x` at `key`: how a value without a JSON key (`jsonkeys.ODD`) is looked
    for."""
    return {
        j: item
        for bucket in table.values()
        for j, item in bucket.items()
        if json_equal(x, item[key])
    }


def objects_passed(value: Any, bucket: dict[int, Any], open_: set[int]) -> list[int]:
    """The tests of `bucket` (each test's object by the test) still open whose object
    `value` contains (`json_contains`: each of its keys there with an equal value), taken
    out of it; those decided meanwhile (an object equal to theirs in a list) are dropped."""
    passed: list[int] = []
    for j, item in list(bucket.items()):
        if j not in open_:
            del bucket[j]
        elif json_contains(value, item):
            del bucket[j]
            passed.append(j)
    return passed
