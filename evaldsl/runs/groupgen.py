"""Generated tests of calls: the code that tests one path of one tool's calls.

Takes the `args`/`result` tests (`CallProbe`s) a case makes on one path of one tool's
arguments or results, and writes, into the pass `codegen.py` generates, the code that
feeds them one call's value: the values the path finds (its fast form written out as
loops), the first ones kept for messages, and each test still open, inlined from its
family's code fragment (`Family.fragment`) or, for a node without one, a call of the
family's closure. Many tests of one kind are decided together, so K of them cost about
one: `== "text"` by a dict lookup (a text only equals a text, as `compare` says),
`== VALUE` of any other JSON value and `in [..]` by a dict lookup of the value's JSON key
(`jsonkeys.json_key`; pairwise, by `json_equal`, for a value that has none),
`contains {key: "text"}` by a dict lookup per key, any other `contains {..}` by a dict
lookup of the JSON key of one of its values (the one fewest of the tests share), then
tested whole, thresholds by sorted lists popped
from one end (a number compared with the next threshold to pass first; `every`
thresholds by the call's largest or smallest number, failing those it does not pass),
`every … != VALUE` by a dict lookup of the JSON key of a call's value (the tests equal
to every value a call finds fail there), `starts with`/`ends with` by a dict lookup of
the text's first (last) characters, one per length the tests' texts have, `has KEY` by
a dict lookup of each of an object's keys, `contains VALUE` of any other value by a
dict lookup of a list's elements' JSON keys, regexes and
`contains "text"` by one RE2 `Set` (both in one Set when a path has both), searched
through the Set's own `Match` and made again over the tests still open as they are
decided (`groupsets.OpenSet`); each test leaves its structure once decided. What that
code calls as it runs (the Sets, the lookups of values without a JSON key) is
`groupsets.py`; the source's lines and the names its values are read by, `gensource.py`.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

import attrs

from evaldsl.language import ast
from evaldsl.language.jsonkeys import ODD, json_key, keys_of, nodes
from evaldsl.language.paths import STAR, CompiledPath, Descend, Member, compile_path
from evaldsl.language.regexlits import ascii_required_text
from evaldsl.language.values import json_equal
from evaldsl.runs.gensource import Names, Out
from evaldsl.runs.groupsets import (
    OpenSet,
    SetChunks,
    equal_items,
    literal_set,
    objects_at,
    objects_passed,
    regex_set,
    set_matcher,
)
from evaldsl.runs.index import SAMPLE, CallProbe

#: From this many tests of one kind on one path, they are decided together.
BULK_MIN = 4
#: At most this many other tests on one path are inlined; more are fed through a loop.
INLINE_MAX = 16
#: A path of at most this many steps, of which at most `STARS_WRITTEN` are `[*]`, is
#: written out as blocks, one inside the other (a `[*]` is a loop); a longer one is walked
#: by its finder: Python compiles at most 100 levels of indentation and 20 loops nested
#: in a function, and the pass's own blocks (the events, the values, the hits) are
#: around the path's.
STEPS_WRITTEN = 32
STARS_WRITTEN = 8
#: A group's RE2 Set of at most this many open regexes and texts, each with a required
#: text (`regexlits.ascii_required_text`), is searched in an ASCII text only when the text
#: holds one of them (`groupsets.prefilter`; from the start, or once the tests decided
#: leave this many, `groupsets.OpenSet`): a Set's search costs ~0.4 µs (the binding's
#: call, the GIL let go and taken again, a result list), a text's `in` ~20-30 ns, and
#: most values match none of a path's patterns (K = 1000 over 300,000 events: 36,266 of
#: 70,101 searches skipped, ~21,000 of them of `search_web`'s result titles). More texts
#: cost about what the search they spare does.
PREFILTER_MAX = 12
#: A group whose tests include a Set search, on a path finding many values (`[*]`,
#: `..`), keeps the texts its tests decided together have been given, up to this many
#: characters in all: those are any-call tests of one value each (a test a text passes is
#: decided at its first sight), so a text seen before decides none of them anew and is not
#: tested again. A list's items recur (a search's result titles: ~3,800 distinct among
#: ~33,000 in speed.py's 300,000 events), and a set lookup costs a tenth of a Set's search
#: or of a prefilter's `in`s; the room bounds what a stream's group keeps alive.
MEMO_ROOM = 1 << 16


_ORDERS = {"<": "lt", "<=": "le", ">": "gt", ">=": "ge"}
#: Each `every` threshold kind: whether a call's largest number decides it (not its
#: smallest), and the comparison of a threshold with that bound that fails the test.
_EVERY = {
    "all_gt": (True, ">="),  # every v > t fails at a call whose largest number is <= t
    "all_ge": (True, ">"),
    "all_lt": (False, "<="),  # every v < t fails at a call whose smallest is >= t
    "all_le": (False, "<"),
}
#: `every … matches /re/`: a call passes those whose regex one of its values matches, all
#: found by one search of an RE2 Set per value; the others fail at that call.
_EVERY_REGEX = "all_re"
#: `every … != VALUE`: a call fails those whose value equals every value it finds (the
#: first value's JSON key looked up, the others compared with it); the others pass there.
_EVERY_UNEQUAL = "all_ne"
#: The kinds decided once per call (from all the values a path finds there), not value by
#: value as the any-call kinds are.
_PER_CALL = frozenset((*_EVERY, _EVERY_REGEX, _EVERY_UNEQUAL))


@attrs.frozen
class GroupTest:
    """One `args`/`result` test, as the generator places it."""

    index: int  # its position in `Needs.probes`: the tally it fills
    probe: CallProbe
    # ("eq", texts) ("key", JSON values) ("lt"/"le"/"gt"/"ge", number) ("re", …) ("obj",
    # an object) ("pre"/"suf", text) ("haskey", key) ("elem", value); `every` tests:
    # ("all_lt"/…, number) ("all_re", …) ("all_ne", (value,))
    bulk: tuple[str, Any] | None


#: A value that is a number to a threshold: an int or a float, not a bool, not NaN (as
#: `compare`'s tests say; a NaN fails every comparison).
_IS_NUMBER = (
    "(type(v) is int or (type(v) is float and v == v)"
    " or (type(v) is not bool and isinstance(v, (int, float)) and v == v))"
)


def texts_equal(table: Iterable[str], value: Any) -> list[str]:
    """The texts of `table` that `value` (a `str` subclass) equals, as `==` compares them
    (a function: a comprehension in the pass would make `v` a cell in the whole pass)."""
    return [text for text in table if value == text]


def bulk_kind(p: CallProbe) -> tuple[str, Any] | None:
    """Which shared structure a test can be decided in, from its node (any-call tests)."""
    node = p.node
    if node is None:
        return None
    if p.every:
        # `every … < N` (and the other orders): one bound per call, the call's largest
        # (or smallest) number, decides them together; other `every` tests are inlined
        if isinstance(node, ast.Compare) and node.op in _ORDERS and isinstance(node.value, ast.Num):
            return ("all_" + _ORDERS[node.op], ast.to_json(node.value))
        if isinstance(node, ast.Matches):
            return (_EVERY_REGEX, (node.regex.pattern, node.regex.flags))
        if isinstance(node, ast.Compare) and node.op == "!=":
            return (_EVERY_UNEQUAL, (ast.to_json(node.value),))
        return None
    if isinstance(node, ast.Compare):
        if node.op == "==":
            # a text by `compare`'s own rule (`str` itself only); any other value by
            # `json_equal`, as `in [..]` compares each of its items
            expected = ast.to_json(node.value)
            return ("eq", (expected,)) if type(expected) is str else ("key", (expected,))
        if node.op in _ORDERS and isinstance(node.value, ast.Num):
            return (_ORDERS[node.op], ast.to_json(node.value))
    if isinstance(node, ast.ListTest) and node.op == "in":
        return ("key", tuple(ast.to_json(i) for i in node.items.items))
    if isinstance(node, ast.Matches):
        return ("re", (node.regex.pattern, node.regex.flags))
    if isinstance(node, ast.Contains) and isinstance(node.value, ast.Str):
        return ("has", node.value.value)
    if isinstance(node, ast.TextEdge):
        return ("pre" if node.at_start else "suf", node.text.value)
    if isinstance(node, ast.HasKey):
        return ("haskey", node.key)
    if isinstance(node, ast.Contains):
        value = node.value
        if isinstance(value, ast.ObjectLit):
            if len(value.pairs) == 1:
                key, text = value.pairs[0]
                if isinstance(text, ast.Str):
                    return ("sub", (key, text.value))
            # any other object: by one of its values, then whole (`{}` holds for any object)
            return ("obj", ast.to_json(value)) if value.pairs else None
        # a number, a bool, null or a list: an equal element of a list (nothing else holds
        # it); a bare name is a text, a substring of a text besides: inlined
        item = ast.to_json(value)
        if not isinstance(item, str):
            return ("elem", (item,))
    return None


def _thresholds(members: list[GroupTest], *, descending: bool) -> list[tuple[Any, int]]:
    """The tests' thresholds with their tests, sorted so that the next to be decided is
    last (popped from the end)."""
    pairs = [(p.bulk[1], p.index) for p in members]  # type: ignore[index]
    return sorted(pairs, key=lambda x: x[0], reverse=descending)


def _text_table(members: list[GroupTest]) -> dict[str, list[int]]:
    table: dict[str, list[int]] = {}
    for p in members:
        table.setdefault(p.bulk[1], []).append(p.index)  # type: ignore[index]
    return table


class GroupWriter:
    """Writes the code of each group of tests (a path of a tool's arguments or results)
    into a generated pass: `setup` before the loop, `feed` where a call's value is."""

    def __init__(self, names: Names, out: Out) -> None:
        self.names = names
        self.out = out
        self.keys: dict[int, str] = {}
        self.finders: dict[int, str] = {}
        self.steps: dict[int, tuple[object, ...]] = {}
        self.step_finders: dict[int, Callable[[Any], list[Any]]] = {}
        self.plans: dict[int, dict[str, Any]] = {}
        self.set_bytes: dict[str, bool] = {}  # a bound Set search → whether it takes bytes
        self.found: dict[str, Any] = {}  # a bound Set search → its Set
        self.fed: dict[int, str] = {}  # the count of calls fed to each group
        self.whole: set[int] = set()  # the groups that test the whole value (no path)
        self.on_close: dict[int, str] = {}  # a line run when a group's last test is decided

    def bind_set(self, found: Any, note: str) -> str:
        """The name of a compiled RE2 Set's search (`set_matcher`) in the namespace."""
        match, takes_bytes = set_matcher(found)
        if isinstance(found, SetChunks):  # (`inspect --code` says so)
            note = note.replace("one RE2 Set", f"{len(found.parts)} RE2 Sets")
        name = self.names.bind("S", match, note)
        self.set_bytes[name] = takes_bytes
        self.found[name] = found
        return name

    def setup(
        self,
        g: int,
        key: tuple[str, bool, str | None],
        tool_name: str,
        probes: list[GroupTest],
        fed: str | None = None,
    ) -> None:
        """Declare group `g`'s state (`tool_name`: the tool's name in the namespace; `fed`:
        a count the pass keeps that equals the calls fed to the group while it is open, a
        tool's calls for its arguments, so the group keeps no count of its own)."""
        out, names = self.out, self.names
        _, on_result, path = key
        side = "result" if on_result else "args"
        out(f"# group {g}: {len(probes)} test(s) on the {side} of {tool_name}")
        self.fed[g] = fed or f"g{g}_fed"
        out(
            f"g{g}_open = {len(probes)}",
            f"g{g}_found = 0" if fed else f"g{g}_fed = g{g}_found = 0",
            f"g{g}_sample = []",
            f"g{g}_room = {SAMPLE}  # found values still to keep for messages",
        )
        first = probes[0].probe
        if first.key is not None and all(p.probe.key == first.key for p in probes):
            self.keys[g] = names.bind("K", first.key, f"the key {first.key!r}")
        elif path is None:
            self.whole.add(g)  # the value itself (`path_finder(None)`): no finder called
        if self.one_value(g):
            # a call gives such a group one value or none, and most give one: the calls
            # without one are counted, and the values found made from them (`found_now`)
            out(f"g{g}_missed = 0  # calls fed while open that gave no value")
        elif path is not None:
            compiled = compile_path(path)
            if (
                isinstance(compiled, CompiledPath)
                and compiled.steps is not None
                # `.1` (a list's element or an object's key) is left to `find`: rare
                and not any(isinstance(step, Member) for step in compiled.steps)
                # each step is a block inside the one before, each `[*]` a loop: Python
                # compiles at most 100 levels of indentation, and 20 loops in a function
                and len(compiled.steps) <= STEPS_WRITTEN
                and sum(step is STAR for step in compiled.steps) <= STARS_WRITTEN
            ):
                self.steps[g] = compiled.steps  # written out as loops: no call per value
                # (its finder finds a call's values again for a test decided as they are
                # found: `feed`)
                self.step_finders[g] = first.finder
            else:
                self.finders[g] = names.bind(
                    "F", first.finder, f"the path {path!r}" if path else "the whole value"
                )
        kinds: dict[str, list[GroupTest]] = {}
        for p in probes:
            if p.bulk is not None:
                kinds.setdefault(p.bulk[0], []).append(p)
        bulk = {k: v for k, v in kinds.items() if len(v) >= BULK_MIN}
        in_bulk = {p.index for v in bulk.values() for p in v}
        rest = [p for p in probes if p.index not in in_bulk]
        inline, loop = rest[:INLINE_MAX], rest[INLINE_MAX:]
        plan: dict[str, Any] = {"bulk": bulk, "inline": inline, "loop": loop}
        self.plans[g] = plan
        if in_bulk:
            out(f"g{g}_bulk = set({names.const(tuple(sorted(in_bulk)))})  # tests still open")
        for kind, members in bulk.items():
            if kind in _EVERY:
                # the thresholds that fail first last: popped from the end
                ordered = _thresholds(members, descending=not _EVERY[kind][0])
                out(f"g{g}_{kind} = list({names.bind('B', ordered, 'every: thresholds, sorted')})")
            elif kind == "eq":
                table: dict[str, list[int]] = {}
                for p in members:
                    for text in p.bulk[1]:  # type: ignore[index]
                        table.setdefault(text, []).append(p.index)
                out(f"g{g}_eq = dict({names.bind('E', table, 'texts → the tests they pass')})")
            elif kind == "key":
                plan["key"] = self.key_table(g, members)
            elif kind == _EVERY_UNEQUAL:
                ids = names.const(tuple(p.index for p in members))
                plan[kind] = (*self.key_table(g, members, kind), ids)
            elif kind == "obj":
                plan["obj"] = self.object_tables(g, members)
            elif kind in ("pre", "suf", "haskey"):
                table = _text_table(members)
                note = "keys → tests" if kind == "haskey" else "texts → tests"
                out(f"g{g}_{kind} = dict({names.bind('E', table, note)})")
                if kind != "haskey":  # (the lengths of the texts, shortest first)
                    lengths = tuple(sorted({len(text) for text in table}))
                    plan[kind] = names.bind("N", lengths, "the lengths of the texts")
            elif kind == "elem":
                plan["elem"] = self.key_table(g, members, kind)
            elif kind in ("lt", "le", "gt", "ge"):
                ordered = _thresholds(members, descending=kind in ("gt", "ge"))
                out(
                    f"g{g}_{kind} = list({names.bind('B', ordered, 'thresholds, sorted')})",
                    f"g{g}_{kind}_next = g{g}_{kind}[-1][0]  # the next to pass",
                )
            elif kind in ("re", _EVERY_REGEX):
                patterns = [p.bulk[1] for p in members]  # type: ignore[index]
                rs = self.bind_set(regex_set(patterns), "one RE2 Set of the regexes")
                ids = names.const(tuple(p.index for p in members))
                plan[kind] = (rs, ids)
                if kind == _EVERY_REGEX:
                    out(f"g{g}_{kind} = set(range({len(members)}))  # positions still open")
            elif kind == "has":
                texts = [p.bulk[1] for p in members]  # type: ignore[index]
                ls = self.bind_set(literal_set(texts), "one RE2 Set of the texts")
                ids = names.const(tuple(p.index for p in members))
                plan["has"] = (ls, ids, names.bind("H", _text_table(members), "texts → tests"))
        if "sub" in bulk:
            subs: dict[str, dict[str, list[int]]] = {}
            for p in bulk["sub"]:
                field, text = p.bulk[1]  # type: ignore[index]
                subs.setdefault(field, {}).setdefault(text, []).append(p.index)
            names_of = []
            for n, (field, table) in enumerate(subs.items()):
                out(f"g{g}_sub{n} = dict({names.bind('E', table, 'texts at a key → tests')})")
                names_of.append((names.bind("K", field, f"the key {field!r}"), f"g{g}_sub{n}"))
            plan["sub"] = (names_of, names.bind("E", subs, "keys → texts → tests"))
        if "re" in bulk and "has" in bulk:
            both = [(p.bulk[1][0], p.bulk[1][1]) for p in bulk["re"]]  # type: ignore[index]
            both += [(re.escape(p.bulk[1]), "") for p in bulk["has"]]  # type: ignore[index]
            order = tuple(p.index for p in (*bulk["re"], *bulk["has"]))
            plan["both"] = (
                self.bind_set(regex_set(both), "one RE2 Set of the regexes and the texts"),
                names.const(order),
            )
        self.open_set(g, bulk, plan)
        # (a path finding many values only: a list's items recur across calls and results
        # far more than one argument does, and on texts that do not recur the memory
        # costs more than the searches it spares: +2.4% of K = 1000's check when kept
        # for every group, measured on speed.py's events)
        one_value = self.one_value(g)
        plan["memo"] = ("re" in bulk or "has" in bulk) and not one_value
        if plan["memo"]:
            out(
                f"g{g}_seen = set()  # texts already tested by the Set's tests",
                f"g{g}_memo = {MEMO_ROOM}  # characters still to keep there",
            )
        for p in inline:
            out(f"o{p.index} = True")
        if loop:
            entries = tuple((p.index, p.probe.test, p.probe.every) for p in loop)
            out(f"g{g}_loop = list({names.bind('L', entries, 'tests fed through a loop')})")

    def open_set(self, g: int, bulk: dict[str, list[GroupTest]], plan: dict[str, Any]) -> None:
        """Declare the search of the group's RE2 Set that `v` (a text) is searched by
        (`g{g}_search`, its positions' tests `g{g}_at`), made again over the tests still
        open as they are decided (`groupsets.OpenSet`), and its prefilter `g{g}_pre`
        (`groupsets.prefilter`): some open test's required text in `v` (lower-cased under
        `i`) when it is an ASCII `str`, once each open test has one and they are at most
        `PREFILTER_MAX`; None (every value searched) until then. The regexes' Set of a
        path with texts too (`both`), which searches what is not a text, stays whole."""
        regexes, texts = bulk.get("re", []), bulk.get("has", [])
        if "both" in plan:
            found = self.found[plan["both"][0]]
        elif regexes:
            found = self.found[plan["re"][0]]
            texts = []
        elif texts:
            found = self.found[plan["has"][0]]
        else:
            return
        tests = tuple(
            (p.index, *p.bulk[1], ascii_required_text(*p.bulk[1]))  # type: ignore[index]
            for p in regexes
        ) + tuple((p.index, re.escape(p.bulk[1]), "", (p.bulk[1], False)) for p in texts)  # type: ignore[index]
        made = OpenSet(tests, found, most_needs=PREFILTER_MAX, literal=not regexes)
        name = self.names.bind("W", made, "the RE2 Set of the tests still open, made again")
        self.set_bytes[f"g{g}_search"] = made.takes_bytes
        plan["open_set"] = name
        self.out(
            f"# the Set of the tests still open, made again as they are decided ({name})",
            f"g{g}_search, g{g}_at, g{g}_pre, g{g}_left, g{g}_narrow_at = {name}.first",
        )

    def key_table(self, g: int, members: list[GroupTest], table: str = "key") -> tuple[str, str]:
        """Declare `g{g}_{table}`, the tests by the JSON key of each of their values (a
        text is its own key); give the names of the room a value's key is made in (the
        largest value's nodes: a larger value equals none) and of the tests with their
        values, for a value that has no key."""
        names = self.names
        pairs = tuple((p.index, p.bulk[1]) for p in members)  # type: ignore[index]
        keys, room = keys_of(w for _, values in pairs for w in values)
        keyed: dict[object, list[int]] = {}
        tests = (j for j, values in pairs for _ in values)
        for key, j in zip(keys, tests, strict=True):
            keyed.setdefault(key, []).append(j)
        note = "JSON keys → the tests they " + ("fail" if table == _EVERY_UNEQUAL else "pass")
        self.out(f"g{g}_{table} = dict({names.bind('E', keyed, note)})")
        return (
            names.bind("R", room, "the room of a key that can equal a value"),
            names.bind("E", pairs, "tests and their values, for a value without a key"),
        )

    def object_tables(self, g: int, members: list[GroupTest]) -> dict[str, Any]:
        """Declare the tables of the `contains {..}` tests (`obj`): for an object, each
        test under one of its keys and the JSON key of its value there, the pair fewest
        of the tests share (so that a call's value finds few tests to test whole); for a
        list, each test by its whole object's JSON key (an element equal to it). Give the
        names the code that feeds them reads."""
        names, out = self.names, self.out
        items = {p.index: p.bulk[1] for p in members}  # type: ignore[index]
        pairs = {
            j: [(k, json_key(w, nodes(w))) for k, w in item.items()] for j, item in items.items()
        }
        shared = Counter(pair for these in pairs.values() for pair in set(these))
        tables: dict[str, dict[object, dict[int, Any]]] = {}
        room = 0
        for j, these in pairs.items():
            field, key = min(these, key=lambda pair: shared[pair])  # (the first of the rarest)
            room = max(room, nodes(items[j][field]))
            tables.setdefault(field, {}).setdefault(key, {})[j] = items[j]
        keyed = []
        for n, (field, table) in enumerate(tables.items()):
            bound = names.bind("E", table, f"JSON keys at {field!r} → tests → their objects")
            out(f"g{g}_obj{n} = {{jk: dict(b) for jk, b in {bound}.items()}}")
            keyed.append((names.bind("K", field, f"the key {field!r}"), f"g{g}_obj{n}"))
        whole_keys, whole_room = keys_of(items.values())
        whole: dict[object, list[int]] = {}
        for key, j in zip(whole_keys, items, strict=True):
            whole.setdefault(key, []).append(j)
        out(f"g{g}_objw = dict({names.bind('E', whole, 'JSON keys of the objects → tests')})")
        return {
            "keyed": keyed,
            "room": names.bind("R", room, "the room of a key that can equal a value"),
            "whole_room": names.bind("R", whole_room, "the room of an object's key"),
            "whole_pairs": names.bind(
                "E", tuple((j, (item,)) for j, item in items.items()), "tests and their objects"
            ),
        }

    def one_value(self, g: int) -> bool:
        """Whether group `g` reads one value a call (a key of its arguments or result, or
        the whole value): its values found are the calls fed less those without one."""
        return g in self.keys or g in self.whole

    def found_now(self, g: int) -> str:
        """A line setting group `g`'s count of values found, from its calls fed while open
        less those without a value (a group of `one_value`; fed no more once closed)."""
        return f"g{g}_found = {self.fed[g]} - g{g}_missed"

    def decide(self, g: int, j: str, last: str, *, bulk: bool) -> None:
        """Mark test `j` decided at this call (`last`: the values found there)."""
        out = self.out
        if bulk:
            out(f"g{g}_bulk.discard({j})")
        out(f"g{g}_open -= 1", f"dec[{j}] = ({self.fed[g]}, {last})")
        on_close = [self.on_close[g]] if g in self.on_close else []
        if self.one_value(g):
            on_close.append(self.found_now(g))  # (the count it is fed by goes on)
        if on_close:
            out(f"if not g{g}_open:", *(f"    {line}" for line in on_close))

    def test_source(self, p: GroupTest) -> str:
        made = p.probe.fragment(self.names) if p.probe.fragment is not None else None
        if made is None:
            closure = self.names.bind(
                "X", p.probe.test, "a test without a code fragment: its family's closure"
            )
            return f"{closure}(v)"
        return made

    def feed(self, g: int, target: str, *, open_here: bool = False) -> None:
        """The tests of group `g` on one call's value `target` (its arguments or result);
        `open_here`: the code is written where the group is known to be open."""
        out = self.out
        plan = self.plans[g]
        key = self.keys.get(g)
        if not open_here:
            out(f"if g{g}_open:")
            out.indent()
        if self.fed[g] == f"g{g}_fed":
            out(f"g{g}_fed += 1")
        if self.one_value(g):
            if key is not None:
                out(f"if type({target}) is dict and {key} in {target}:")
                out.indent()
                out(f"v = {target}[{key}]")
            else:  # the value itself, if there is one: what `path_finder(None)` finds
                out(f"if {target} is not MISSING:")
                out.indent()
                out(f"v = {target}")
            out(f"if g{g}_room:", f"    g{g}_sample.append(v)", f"    g{g}_room -= 1")
            self.tests_on_value(g, plan, "[v]")
            out.dedent()
            out("else:  # no value (counted first: a test decided here may close the group)")
            out.indent()
            out(f"g{g}_missed += 1")
            everys = [p for p in plan["inline"] if p.probe.every]
            if everys or plan["loop"] or any(kind in _PER_CALL for kind in plan["bulk"]):
                out("# an `every` test fails here")
                self.every_bounds(g, plan, None, "[]")
                self.every_regexes(g, plan, None, "[]")
                self.every_unequal(g, plan, None, "[]")
                for p in everys:
                    out(f"if o{p.index}:", f"    o{p.index} = False")
                    out.indent()
                    self.decide(g, str(p.index), "[]", bulk=False)
                    out.dedent()
                if plan["loop"]:
                    out(f"for entry in [e for e in g{g}_loop if e[2]]:")
                    out.indent()
                    out(f"g{g}_loop.remove(entry)")
                    self.decide(g, "entry[0]", "[]", bulk=False)
                    out.dedent()
            out.dedent()
        elif g in self.steps and self.one_value_each(g, plan):
            # each value tested where the loops find it (no list of them made, nor a
            # second loop over it); a test decided there records the call's values, found
            # again by the path's finder (as `vals` would hold them)
            finder = self.names.bind("F", self.step_finders[g], "a path's finder")

            def each(value: str) -> None:
                if value != "v":  # (a path of no step: the value itself)
                    out(f"v = {value}")
                out(f"g{g}_found += 1")
                out(f"if g{g}_room:", f"    g{g}_sample.append(v)", f"    g{g}_room -= 1")
                self.bulk_once(g, plan, f"{finder}({target})")

            out(f"if {target} is not MISSING:")
            out.indent()
            self.find_steps(target, self.steps[g], 0, each)
            out.dedent()
        else:
            if g in self.steps:
                out("vals = []")
                out(f"if {target} is not MISSING:")
                out.indent()
                self.find_steps(target, self.steps[g], 0)
                out.dedent()
            else:
                finder = self.finders[g]
                out(f"vals = [] if {target} is MISSING else {finder}({target})")
            out("if vals:")
            out(f"    g{g}_found += len(vals)")
            out(f"    if g{g}_room:")
            out(f"        g{g}_sample.extend(vals[:g{g}_room])")
            out(f"        g{g}_room = {SAMPLE} - len(g{g}_sample)")
            self.tests_on_values(g, plan)
        if not open_here:
            out.dedent()

    def one_value_each(self, g: int, plan: dict[str, Any]) -> bool:
        """Whether each test of group `g` takes the values a path finds one at a time
        (tests decided together, none per call: no `every`, no inlined or looped test,
        which ask whether some value passes), on a path written as loops without `..`
        (whose finder fills `vals` itself)."""
        return (
            not plan["inline"]
            and not plan["loop"]
            and not any(kind in _PER_CALL for kind in plan["bulk"])
            and not any(isinstance(step, Descend) for step in self.steps[g])
        )

    def find_steps(
        self,
        value: str,
        steps: tuple[object, ...],
        depth: int,
        each: Callable[[str], None] | None = None,
    ) -> None:
        """A path's fast form as nested loops filling `vals` (what `CompiledPath.find`
        finds, in its order: each step's values in their parents' order), or writing
        `each`'s code for each value found."""
        out = self.out
        if not steps:
            if each is None:
                out(f"vals.append({value})")
            else:
                each(value)
            return
        step, rest = steps[0], steps[1:]
        x = "v" if each is not None and not rest else f"x{depth}"  # (the value `each` tests)
        if isinstance(step, Descend):
            out(f"{self.names.bind('F', step, f'..{step.name}')}.find({value}, vals)")
        elif step is STAR:
            out(f"if isinstance({value}, list):", f"    items{depth} = {value}")
            out(f"elif isinstance({value}, dict):", f"    items{depth} = {value}.values()")
            out("else:", f"    items{depth} = ()")
            out(f"for {x} in items{depth}:")
            out.indent()
            self.find_steps(x, rest, depth + 1, each)
            out.dedent()
        elif isinstance(step, int):
            i = self.names.bind("I", step, f"the index {step}")
            out(f"if isinstance({value}, list) and -len({value}) <= {i} < len({value}):")
            out.indent()
            out(f"{x} = {value}[{i}]")
            self.find_steps(x, rest, depth + 1, each)
            out.dedent()
        else:
            k = self.names.bind("K", step, f"the key {step!r}")
            out(f"if isinstance({value}, dict) and {k} in {value}:")
            out.indent()
            out(f"{x} = {value}[{k}]")
            self.find_steps(x, rest, depth + 1, each)
            out.dedent()

    def tests_on_value(self, g: int, plan: dict[str, Any], last: str) -> None:
        """Every open test of the group on one value `v` (a key's value, or one found)."""
        out = self.out
        for p in plan["inline"]:
            test = self.test_source(p)
            if p.probe.every:
                out(f"if o{p.index} and not {test}:")
            else:
                out(f"if o{p.index} and {test}:")
            out.indent()
            out(f"o{p.index} = False")
            self.decide(g, str(p.index), last, bulk=False)
            out.dedent()
        self.every_bounds(g, plan, "v", last)
        self.every_regexes(g, plan, "v", last)
        self.every_unequal(g, plan, "v", last)
        self.bulk_on_value(g, plan, last)
        if plan["loop"]:
            out(f"for entry in list(g{g}_loop):")
            out.indent()
            out("if entry[1](v) is not entry[2]:")
            out.indent()
            out(f"g{g}_loop.remove(entry)")
            self.decide(g, "entry[0]", last, bulk=False)
            out.dedent()
            out.dedent()

    @staticmethod
    def every_kinds(plan: dict[str, Any]) -> list[str]:
        """The `every` threshold kinds decided together in a group (`_EVERY`)."""
        return [kind for kind in plan["bulk"] if kind in _EVERY]

    def every_bounds(self, g: int, plan: dict[str, Any], found: str | None, last: str) -> None:
        """Fail the `every` thresholds this call does not pass: `found` is the one value
        (`"v"`), the list of the call's numbers (`"nums"`), or None (no value: all fail).
        A call passes `every … >= t` when some value found is a number >= t, so its
        largest number decides: the thresholds above it fail, popped from the end."""
        kinds = self.every_kinds(plan)
        if not kinds:
            return
        out = self.out
        if found is not None:
            bound = {True: "v", False: "v"}  # the call's largest number, its smallest
            if found == "v":
                out(f"if {_IS_NUMBER}:")
                out.indent()
            else:
                out("if nums:")
                out.indent()
                bound = {True: "hi", False: "lo"}
                for largest, name, of in ((True, "hi", "max"), (False, "lo", "min")):
                    if any(_EVERY[k][0] is largest for k in kinds):
                        out(f"{name} = {of}(nums)")
            for kind in kinds:
                largest, fails = _EVERY[kind]
                with out.nested(
                    f"while g{g}_{kind} and g{g}_{kind}[-1][0] {fails} {bound[largest]}:"
                ):
                    self.each_open(g, f"(g{g}_{kind}.pop()[1],)", last)
            out.dedent()
            out("else:  # no number: every threshold fails")
            out.indent()
        for kind in kinds:
            with out.nested(f"while g{g}_{kind}:"):
                self.each_open(g, f"(g{g}_{kind}.pop()[1],)", last)
        if found is not None:
            out.dedent()

    def every_regexes(self, g: int, plan: dict[str, Any], found: str | None, last: str) -> None:
        """Fail the `every … matches` tests this call does not pass: `found` is the one
        value (`"v"`), the values a path found (`"vals"`: a call passes a regex one of
        them matches), or None (no value: all fail). The open ones are positions in the
        group's Set; those it does not find fail."""
        if _EVERY_REGEX not in plan["bulk"]:
            return
        out = self.out
        rs, ids = plan[_EVERY_REGEX]
        open_ = f"g{g}_{_EVERY_REGEX}"
        text = "v if isinstance(v, str) else value_text(v)"  # (as `matches` reads a value)
        with out.nested(f"if {open_}:"):
            if found is None:
                out(f"fails, {open_} = {open_}, set()")
                self.each_open(g, "fails", last, index=ids)
                return
            if found == "v":
                out(f"fails = {open_}.difference({self.set_search(rs, text)})")
            else:
                out("hit = set()", "for v in vals:", f"    hit.update({self.set_search(rs, text)})")
                out(f"fails = {open_}.difference(hit)")
            with out.nested("if fails:"):
                out(f"{open_} -= fails")
                self.each_open(g, "fails", last, index=ids)

    def every_unequal(self, g: int, plan: dict[str, Any], found: str | None, last: str) -> None:
        """Fail the `every … != VALUE` tests this call does not pass: `found` is the one
        value (`"v"`), the values a path found (`"vals"`: a call passes a test when one of
        them differs from its value), or None (no value: all fail). The tests whose value
        equals the (first) value are found by its JSON key, as `== VALUE` finds them; with
        more values, they fail only if every other value equals the first."""
        if _EVERY_UNEQUAL not in plan["bulk"]:
            return
        out = self.out
        table = f"g{g}_{_EVERY_UNEQUAL}"
        room, pairs, ids = plan[_EVERY_UNEQUAL]

        def fail_all() -> None:
            out(f"{table}.clear()")
            self.each_open(g, ids, last)

        with out.nested(f"if {table}:"):
            if found is None:
                fail_all()
                return
            if found == "vals":
                with out.nested("if not vals:  # no value: every one fails"):
                    fail_all()
                out("else:")
                out.indent()
                out("v = vals[0]")
            self.equal_tests("v", room, pairs, table, keep=True)
            if found == "vals":
                equal = self.names.bind("J", json_equal, "json_equal")
                # (a loop, not `all()` over a generator, which would make `v` a cell in the
                # whole pass: read less cheaply at every value)
                out(
                    "if jhits and len(vals) > 1:",
                    "    for later in vals[1:]:",
                    f"        if not {equal}(later, v):",
                    "            jhits = None  # a value differs from the first: passes them all",
                    "            break",
                )
            with out.nested("if jhits:"):
                out(f"if jk is not {self.odd()}:", f"    del {table}[jk]")
                self.each_open(g, "jhits", last)
            if found == "vals":
                out.dedent()

    def odd(self) -> str:
        """The name of `jsonkeys.ODD` (a value without a JSON key) in the namespace."""
        return self.names.bind("J", ODD, "no key: compare pairwise")

    def json_key_of(self, value: str, room: str) -> str:
        """`value`'s JSON key made within `room` (a text is its own key), as an expression."""
        key = self.names.bind("J", json_key, "json_key")
        return f"{value} if type({value}) is str else {key}({value}, {room})"

    def equal_tests(
        self, value: str, room: str, pairs: str, table: str, *, keep: bool = False
    ) -> None:
        """Write `jk`, `value`'s JSON key, and `jhits`, the tests of a key table
        (`key_table`) whose value equals it: found by the key, and taken out of the
        table (`keep`: left in it), or, for a value without one, compared pairwise with
        each test's values (`equal_items`); None or empty when none is."""
        pairwise = self.names.bind("J", equal_items, "equal_items")
        take = f"{table}.get(jk)" if keep else f"{table}.pop(jk, ())"
        self.out(
            f"jk = {self.json_key_of(value, room)}",
            f"jhits = {pairwise}({value}, {pairs}) if jk is {self.odd()} else {take}",
        )

    def bulk_once(self, g: int, plan: dict[str, Any], last: str) -> None:
        """The tests decided together, on one value `v`, unless it is a text they were
        given before (`MEMO_ROOM`: an exact `str` only, whose equal texts test alike; a
        number equals a bool or a float of another JSON text, and a subclass has its own
        methods)."""
        if not plan["memo"]:
            self.bulk_on_value(g, plan, last)
            return
        seen, room = f"g{g}_seen", f"g{g}_memo"
        with self.out.nested(f"if type(v) is not str or v not in {seen}:"):
            self.out(
                f"if type(v) is str and len(v) < {room}:",
                f"    {seen}.add(v)",
                f"    {room} -= len(v)",
            )
            self.bulk_on_value(g, plan, last)

    def bulk_on_value(self, g: int, plan: dict[str, Any], last: str) -> None:
        """The tests decided together, on one value `v`."""
        out = self.out
        bulk = plan["bulk"]
        if "eq" in bulk:
            # `== "text"` holds for a text only (compare's rule); a `str` subclass (a
            # `StrEnum`) is compared with each text as `==` compares it, not hashed
            with out.nested(f"if type(v) is str and v in g{g}_eq:"):
                self.each_open(g, f"g{g}_eq.pop(v)", last)
            equal_in = self.names.bind("F", texts_equal, "texts_equal")
            with out.nested(
                "elif type(v) is not str and isinstance(v, str):",
                f"for t in {equal_in}(g{g}_eq, v):",
            ):
                self.each_open(g, f"g{g}_eq.pop(t)", last)
        if "key" in bulk:
            # a text is its own key; anything else has one made within the room, or
            # none (`ODD`: a `str` subclass, a tuple…), and is then compared pairwise
            room, pairs = plan["key"]
            self.equal_tests("v", room, pairs, f"g{g}_key")
            self.each_open(g, "jhits", last)
        numeric = [k for k in ("lt", "le", "gt", "ge") if k in bulk]
        if numeric:
            # a number, not a bool (int or float first: JSON's own); a NaN fails every
            # comparison, so it passes no threshold, as `is_number` and the NaN test say
            out(
                "if type(v) is int or type(v) is float"
                " or (type(v) is not bool and isinstance(v, (int, float))):"
            )
            out.indent()
            nan = self.names.bind("Z", math.nan, "NaN: no threshold left to pass")
            for kind in numeric:
                op = {"lt": "<", "le": "<=", "gt": ">", "ge": ">="}[kind]
                cmp = {"lt": ">", "le": ">=", "gt": "<", "ge": "<="}[kind]
                # one comparison with the next threshold to pass for most values
                out(f"if v {op} g{g}_{kind}_next:")
                out.indent()
                out(f"while g{g}_{kind} and g{g}_{kind}[-1][0] {cmp} v:")
                out.indent()
                self.each_open(g, f"(g{g}_{kind}.pop()[1],)", last)
                out.dedent()
                out(f"g{g}_{kind}_next = g{g}_{kind}[-1][0] if g{g}_{kind} else {nan}")
                out.dedent()
            out.dedent()
        if "sub" in bulk:
            self.sub_objects(g, plan, last)
        if "obj" in bulk:
            self.objects(g, plan, last)
        for kind in ("pre", "suf"):
            if kind in bulk:
                self.text_edges(g, plan, kind, last)
        if "haskey" in bulk:
            self.keys_held(g, last)
        if "elem" in bulk:
            self.elements(g, plan, last)
        pre = f"g{g}_pre is None or g{g}_pre(v)"  # (the test a value passes to be searched)
        if "both" in plan:  # regexes and texts in one Set: one search of a text for both
            with out.nested("if isinstance(v, str):", f"if {pre}:"):
                self.open_hits(g, "v", last)
            out("elif v is not MISSING:")
            out.indent()
            rs, ids = plan["re"]
            self.set_hits(g, rs, ids, "value_text(v)", last)
            self.texts_in_list(g, plan, last)
            out.dedent()
            return
        if "re" in bulk:
            with out.nested(f"if v is not MISSING and ({pre}):"):
                self.open_hits(g, "v if isinstance(v, str) else value_text(v)", last)
        if "has" in bulk:
            with out.nested("if isinstance(v, str):", f"if {pre}:"):
                self.open_hits(g, "v", last)
            out("else:")
            out.indent()
            self.texts_in_list(g, plan, last)
            out.dedent()

    def each_open(
        self, g: int, tests: str, last: str, *, index: str | None = None, count: str = ""
    ) -> None:
        """Decide each test of `tests` (an expression) still open in the group; with
        `index` (a table's name), `tests` gives positions in it, not tests; `count`: a
        count of open tests to take each one from."""
        out = self.out
        out(f"for {'i' if index else 'j'} in {tests}:")
        out.indent()
        if index:
            out(f"j = {index}[i]")
        out(f"if j in g{g}_bulk:")
        out.indent()
        self.decide(g, "j", last, bulk=True)
        if count:
            out(f"{count} -= 1")
        out.dedent()
        out.dedent()

    def open_hits(self, g: int, text: str, last: str) -> None:
        """Decide the tests of the group's Set of open tests (`open_set`) found in `text`,
        and make the Set again when few enough are left."""
        self.each_open(
            g, self.set_search(f"g{g}_search", text), last, index=f"g{g}_at", count=f"g{g}_left"
        )
        state = f"g{g}_search, g{g}_at, g{g}_pre, g{g}_left, g{g}_narrow_at"
        self.out(
            f"if g{g}_left <= g{g}_narrow_at:",
            f"    {state} = {self.plans[g]['open_set']}.narrowed(g{g}_bulk)",
        )

    def set_hits(self, g: int, matcher: str, ids: str, text: str, last: str) -> None:
        """Decide the tests whose patterns an RE2 Set finds in `text` (a loop over the
        positions it gives, not a list of their tests: that list cost ~7% of a pass of
        1,000 tests, being built for every value of every call)."""
        self.each_open(g, self.set_search(matcher, text), last, index=ids)

    def set_search(self, matcher: str, text: str) -> str:
        """The positions of the patterns an RE2 Set (`bind_set`) finds in `text` (an
        expression), as an expression."""
        if self.set_bytes[matcher]:  # the Set's own search: a list, empty when none is found
            return f"{matcher}({text if text.isidentifier() else f'({text})'}.encode())"
        return f"{matcher}({text}) or ()"

    def sub_objects(self, g: int, plan: dict[str, Any], last: str) -> None:
        """`contains {key: "text"}`: an object with that text at that key, or a list with
        an element equal to `{key: "text"}`."""
        out = self.out
        keyed, table = plan["sub"]
        out("if isinstance(v, dict):")
        out.indent()
        for key, sub in keyed:
            out(f"x = v.get({key}, MISSING)", "if isinstance(x, str):")
            out.indent()
            self.each_open(g, f"{sub}.pop(x, ())", last)
            out.dedent()
        out.dedent()
        heads = ("for k, x in e.items():", "if isinstance(x, str):")
        list_heads = (
            "elif isinstance(v, list):",
            "for e in v:",
            "if isinstance(e, dict) and len(e) == 1:",
        )
        with out.nested(*list_heads, *heads):
            self.each_open(g, f"({table}.get(k) or {{}}).get(x, ())", last)

    def objects(self, g: int, plan: dict[str, Any], last: str) -> None:
        """`contains {..}` (`obj`): an object with each of the keys, each with an equal
        value, or a list with an element equal to the object. In an object, the value at
        each key the tables are kept by looks up the few tests to test whole."""
        out, names = self.out, self.names
        tables = plan["obj"]
        at = names.bind("J", objects_at, "objects_at")
        passed = names.bind("J", objects_passed, "objects_passed")
        with out.nested("if isinstance(v, dict):"):
            for field, table in tables["keyed"]:
                with out.nested(f"if {table} and {field} in v:"):
                    out(
                        f"x = v[{field}]",
                        f"jk = {self.json_key_of('x', tables['room'])}",
                        f"b = {at}(x, {field}, {table}) if jk is {self.odd()} else {table}.get(jk)",
                    )
                    with out.nested("if b:"):
                        self.each_open(g, f"{passed}(v, b, g{g}_bulk)", last)
        with out.nested("elif isinstance(v, list):", "for e in v:", "if isinstance(e, dict):"):
            self.equal_tests("e", tables["whole_room"], tables["whole_pairs"], f"g{g}_objw")
            self.each_open(g, "jhits", last)

    def text_edges(self, g: int, plan: dict[str, Any], kind: str, last: str) -> None:
        """`starts with` (`pre`) or `ends with` (`suf`) a text: a text's first (last)
        characters, as many as each of the tests' texts has, looked up; a `str` subclass
        is asked by its own method, test by test, as `starts with` asks it."""
        out = self.out
        table, lengths = f"g{g}_{kind}", plan[kind]
        method = "startswith" if kind == "pre" else "endswith"
        with out.nested(f"if type(v) is str and {table}:"):
            out("n = len(v)")
            with out.nested(f"for size in {lengths}:"):
                out("if size > n:", "    break")
                part = "v[:size]" if kind == "pre" else "v[n - size:]"
                self.each_open(g, f"{table}.pop({part}, ())", last)
        with out.nested(
            f"elif isinstance(v, str) and {table}:",
            f"for t in list(filter(v.{method}, {table})):",  # (no comprehension: `v` no cell)
        ):
            self.each_open(g, f"{table}.pop(t)", last)

    def keys_held(self, g: int, last: str) -> None:
        """`has KEY`: each key of an object looked up in the tests' keys (or each of
        those asked of it, when there are fewer; a dict subclass is always asked, as
        `has` asks it)."""
        out = self.out
        table = f"g{g}_haskey"
        with out.nested(f"if isinstance(v, dict) and {table}:"):
            with out.nested(f"if type(v) is dict and len(v) < len({table}):", "for k in v:"):
                self.each_open(g, f"{table}.pop(k, ())", last)
            with out.nested("else:", f"for k in [k for k in {table} if k in v]:"):
                self.each_open(g, f"{table}.pop(k)", last)

    def elements(self, g: int, plan: dict[str, Any], last: str) -> None:
        """`contains VALUE` of a number, bool, null or list: a list's element equal to
        it, each element looked up by its JSON key (pairwise when it has none)."""
        room, pairs = plan["elem"]
        with self.out.nested(f"if isinstance(v, list) and g{g}_elem:", "for e in v:"):
            self.equal_tests("e", room, pairs, f"g{g}_elem")
            self.each_open(g, "jhits", last)

    def texts_in_list(self, g: int, plan: dict[str, Any], last: str) -> None:
        """`contains "text"` on a list: an element equal to the text."""
        out = self.out
        _, _, table = plan["has"]
        with out.nested("if isinstance(v, list):", "for e in v:", "if isinstance(e, str):"):
            self.each_open(g, f"{table}.get(e, ())", last)

    def tests_on_values(self, g: int, plan: dict[str, Any]) -> None:
        """Every open test of the group on the values a path found (some value passing
        passes the call)."""
        out = self.out
        for p in plan["inline"]:
            test = self.test_source(p)
            out(f"if o{p.index}:")
            out.indent()
            out(
                "ok = False",
                "for v in vals:",
                f"    if {test}:",
                "        ok = True",
                "        break",
            )
            out(f"if {'not ok' if p.probe.every else 'ok'}:")
            out.indent()
            out(f"o{p.index} = False")
            self.decide(g, str(p.index), "vals", bulk=False)
            out.dedent()
            out.dedent()
        if self.every_kinds(plan):
            # the call's largest and smallest numbers (a NaN, a bool: not numbers)
            out(f"nums = [v for v in vals if {_IS_NUMBER}]")
            self.every_bounds(g, plan, "nums", "vals")
        self.every_regexes(g, plan, "vals", "vals")
        self.every_unequal(g, plan, "vals", "vals")
        if any(kind not in _PER_CALL for kind in plan["bulk"]):
            out("for v in vals:")
            out.indent()
            self.bulk_once(g, plan, "vals")
            out.dedent()
        if plan["loop"]:
            out(f"for entry in list(g{g}_loop):")
            out.indent()
            out("if any(entry[1](v) for v in vals) is not entry[2]:")
            out.indent()
            out(f"g{g}_loop.remove(entry)")
            self.decide(g, "entry[0]", "vals", bulk=False)
            out.dedent()
            out.dedent()
