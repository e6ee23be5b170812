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


def never(_value: Any) -> bool:
    """The prefilter of a Set none of whose tests is open: no value is searched."""
    return False


def prefilter(needs: list[tuple[str, bool]] | None) -> Callable[[Any], bool] | None:
    """Whether a value is to be searched by a Set whose every pattern requires one of
    `needs` (each a text, and whether it is looked for in the value lower-cased:
    `regexlits.ascii_required_text`): anything but an ASCII `str` is (a `str` subclass, a
    text past ASCII, whose letters RE2 folds past ASCII, a value searched by its JSON
    text), an ASCII `str` when it holds one of them; None (every value is) when `needs` is
    None. Written as the generated pass writes its tests (`in` by `in`, the lower-cased
    text made once): ~0.3 µs a value against a Set's ~1.3 µs."""
    if needs is None:
        return None
    needs = list(dict.fromkeys(needs))
    # the texts are names of the function's namespace (`t0`, `t1`, …), never spliced into
    # its source, as the generated pass holds its constants
    texts = {f"t{n}": text for n, (text, _) in enumerate(needs)}
    plain = [f"t{n}" for n, (_, folded) in enumerate(needs) if not folded]
    lowered = [f"t{n}" for n, (_, folded) in enumerate(needs) if folded]
    tests = ["type(v) is not str", "not v.isascii()", *(f"{t} in v" for t in plain)]
    if lowered:
        tests.append(f"{lowered[0]} in (lv := v.lower())")
        tests += [f"{t} in lv" for t in lowered[1:]]
    made: Callable[[Any], bool] = eval(f"lambda v: {' or '.join(tests)}", {"str": str, **texts})
    return made


#: What a pass searches a group's values with: the search (`set_matcher`'s), the tests of
#: its positions, the prefilter (`prefilter`: None, every value), the tests counted open,
#: and the count at which the Set is made again over the tests still open.
SetState = tuple[Callable[[Any], Any], tuple[int, ...], Callable[[Any], bool] | None, int, int]


class OpenSet:
    """The regexes and texts of one group's RE2 Set (`regex_set`), each with its test and
    the text it requires (None: none known), searched by a pass over the tests still
    open: as tests are decided, the Set is made again over those left (`narrowed`), a
    smaller Set, with a prefilter once they all have a required text and are at most
    `most_needs`, and none searched once none is left. A Set's search costs about the
    same whatever it holds once its DFA has its states (~5,000 instructions, most of it
    the binding's call), so the gain is the prefilter (a few `in`s, ~300 instructions
    each) and the searches it spares, and fewer DFA states to build in a first run. Made
    again each time the count open falls to three quarters of what it was (and to
    `most_needs`, where a prefilter may start): a few dozen times at most for hundreds of
    tests. The Sets made are kept by the tests they hold (`KEPT` of them), so a case
    checked on many runs makes each once."""

    KEPT = 32

    __slots__ = ("first", "literal", "made", "most_needs", "takes_bytes", "tests")

    def __init__(
        self,
        tests: tuple[tuple[int, str, str, tuple[str, bool] | None], ...],
        found: Any,
        *,
        most_needs: int,
        literal: bool,
    ) -> None:
        # each test: (its index, pattern, flags, required text), in the order of `found`
        self.tests = tests
        self.most_needs = most_needs
        self.literal = literal  # (texts: one Set, as `literal_set` makes it)
        match, self.takes_bytes = set_matcher(found)
        self.made: dict[tuple[int, ...], SetState] = {}
        self.first = self.state(tuple(t[0] for t in tests), match)

    def state(self, ids: tuple[int, ...], match: Callable[[Any], Any]) -> SetState:
        """The search of the tests `ids` by `match`, with their prefilter and count."""
        chosen = set(ids)  # (a group may have thousands)
        needs = [t[3] for t in self.tests if t[0] in chosen]
        known = list(dict.fromkeys(n for n in needs if n is not None))
        ok = len(known) <= self.most_needs and None not in needs
        pre = prefilter(known) if ok else None
        left = len(ids)
        return match, ids, pre, left, _next_at(left, self.most_needs)

    def narrowed(self, still: Any) -> SetState:
        """The search of the tests of the Set still open (in the container `still`)."""
        ids = tuple(t[0] for t in self.tests if t[0] in still)
        known = self.made.get(ids)
        if known is not None:
            return known
        if not ids:
            made: SetState = (_none_found, ids, never, 0, -1)
        else:
            patterns = [(t[1], t[2]) for t in self.tests if t[0] in still]
            found = regex_set(patterns, most=len(patterns) if self.literal else None)
            match, takes_bytes = set_matcher(found)
            if takes_bytes is not self.takes_bytes:  # (the pass calls it one way)
                match = found.Match if self.takes_bytes is False else _on_text(found)
            made = self.state(ids, match)
        if len(self.made) < self.KEPT:
            self.made[ids] = made
        return made


def _next_at(left: int, most_needs: int) -> int:
    """The count of open tests at which a Set of `left` is made again."""
    at = left * 3 // 4
    return max(at, most_needs) if left > most_needs else at


def _none_found(_data: Any) -> tuple[()]:
    return ()


def _on_text(found: Any) -> Callable[[bytes], Any]:
    """A search of UTF-8 bytes by Sets that take a text (`SetChunks`)."""
    return lambda data: found.Match(data.decode())
