"""Generated index passes: a case's needs → the source of one Python function, the loop
over its events a careful engineer would write by hand for exactly those assertions.

Takes a case's `Needs` (which tools' calls and results its assertions test, and with
what; which answers, times, cost) and gives an `IndexPass`: the function's source, and the
function, which reads a run's events and gives the same `TraceFacts` the reference pass
(`index.py`) gives, so the checkers, closures over those facts, give the same verdicts. A
differential test runs both on random programs and random traces.

What is specialised: only the branches the needs read are written (no answer kept that
no assertion reads, no timestamps or prices unless asked); each tool an assertion tests
gets its own block; each `args`/`result` test is inlined as its family's code fragment
(`Family.fragment`), so testing a call is a few local-variable operations, not calls
through closures. A family without a fragment for a node is called through its closure,
and the source says so. Tests on the same path of the same tool are decided together,
so many tests cost about as much as one (K = 1000 ≈ K = 1):
- equality with text by one dict lookup per value (`== "text"` holds for a text only, as
  `compare` says; `in [..]` follows JSON equality and stays inline),
- `contains {key: "text"}` by one dict lookup per key,
- thresholds (`< <= > >=` a number) by sorted lists popped from one end,
- regexes by one RE2 `Set` per path (one pass over the text for every pattern),
- `contains "text"` by one RE2 `Set` of the literal texts;
each test leaves its structure once decided.

No value from a suite is ever written into the source: tool names, keys, constants,
compiled regexes and paths are names (`T0`, `K1`, `C2`) in the function's namespace, so
the source depends only on the shape of the needs, and compiled code objects are cached
by it. `evaldsl inspect --code SUITE` prints the source of each case's pass, with a
comment saying what each name holds.

Events are dicts; with `raw=True` they come from the typed decoder (`decode.py`), whose
large fields (arguments, outputs, results) are undecoded `msgspec.Raw` bytes, decoded
here only for the calls and answers an assertion reads.
"""

from __future__ import annotations

import math
import re
import threading
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

import attrs
import orjson
import re2

from evaldsl.language import ast
from evaldsl.language.paths import STAR, CompiledPath, Descend, compile_path
from evaldsl.language.regexes import compile_regex
from evaldsl.language.values import MISSING, is_number, json_equal
from evaldsl.language.values import js_text as value_text
from evaldsl.runs.events import (
    ERROR_TYPES,
    RESPONSE_TYPES,
    TOOL_CALL_TYPES,
    inline_result,
    tool_call_arguments,
    tool_call_name,
)
from evaldsl.runs.index import SAMPLE, CallProbe, CallRecord, Needs, Tally, TraceFacts
from evaldsl.runs.prices import price_of
from evaldsl.runs.text import usage_tokens

#: From this many tests of one kind on one path, they are decided together.
BULK_MIN = 4
#: At most this many other tests on one path are inlined; more are fed through a loop.
INLINE_MAX = 16

_CACHE: dict[str, Any] = {}  # source → code object
_LOCK = threading.Lock()


class _Names:
    """The generated function's namespace: each value gets a name the source reads it by
    (the `FragmentContext` families make their fragments in)."""

    def __init__(self) -> None:
        self.namespace: dict[str, Any] = {}
        self.notes: list[str] = []
        self.count = 0
        self._by_id: dict[int, str] = {}

    def bind(self, prefix: str, value: Any, note: str | None = None) -> str:
        key = id(value)
        known = self._by_id.get(key)
        if known is not None and self.namespace[known] is value:
            return known
        self.count += 1
        name = f"{prefix}{self.count}"
        self.namespace[name] = value
        self._by_id[key] = name
        if note is not None:
            self.notes.append(f"{name}: {note}")
        return name

    def const(self, value: Any) -> str:
        shown = getattr(value, "__qualname__", None) if callable(value) else None
        text = shown or repr(value)
        return self.bind("C", value, text if len(text) <= 60 else text[:59] + "…")


class _Out:
    """Source lines with indentation."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.depth = 0

    def __call__(self, *lines: str) -> None:
        for line in lines:
            self.lines.append("    " * self.depth + line)

    def indent(self) -> _Out:
        self.depth += 1
        return self

    def dedent(self) -> None:
        self.depth -= 1


@attrs.frozen
class _Probe:
    """One `args`/`result` test, as the generator places it."""

    index: int  # its position in `Needs.probes`: the tally it fills
    probe: CallProbe
    bulk: tuple[str, Any] | None  # ("eq", texts) ("lt"/"le"/"gt"/"ge", number) ("re", …)


def _bulk_kind(p: CallProbe) -> tuple[str, Any] | None:
    """Which shared structure a test can be decided in, from its node (any-call tests)."""
    node = p.node
    if p.every or node is None:
        return None
    if isinstance(node, ast.Compare):
        if node.op == "==" and isinstance(node.value, ast.Str):
            return ("eq", (node.value.value,))
        if node.op in ("<", "<=", ">", ">=") and isinstance(node.value, ast.Num):
            op = {"<": "lt", "<=": "le", ">": "gt", ">=": "ge"}[node.op]
            return (op, ast.to_json(node.value))
    if isinstance(node, ast.Matches):
        return ("re", (node.regex.pattern, node.regex.flags))
    if isinstance(node, ast.Contains) and isinstance(node.value, ast.Str):
        return ("has", node.value.value)
    if (
        isinstance(node, ast.Contains)
        and isinstance(node.value, ast.ObjectLit)
        and len(node.value.pairs) == 1
        and isinstance(node.value.pairs[0][1], ast.Str)
    ):
        key, text = node.value.pairs[0]
        return ("sub", (key, text.value))  # type: ignore[union-attr]
    return None


@attrs.frozen
class IndexPass:
    """A generated pass: its source, what its names hold, and the function."""

    source: str
    notes: tuple[str, ...]
    run: Callable[[Iterable[Any], Callable[[], Iterable[Any]] | None, bool], TraceFacts]


def _make_tally(decided: Any, fed: int, found: int, sample: list[Any], every: bool) -> Tally:
    """A test's tally as the reference pass leaves it, for the checkers that read it."""
    tally = Tally()
    if decided is not None:
        tally.decided = True
        tally.first, tally.last = decided
        tally.fed = tally.first
        tally.good = tally.first - 1 if every else 1
    else:
        tally.fed = fed
        tally.good = fed if every else 0
    tally.found = found
    tally.sample = list(sample)
    return tally


def _first_time(events: Iterable[Any]) -> Any:
    """The first `at` that is text, of events in the order given."""
    return next((e.get("at") for e in events if isinstance(e.get("at"), str)), None)


def _decode_raw(value: Any) -> Any:
    """A `msgspec.Raw` field, decoded as the reference decodes every field (orjson)."""
    return orjson.loads(bytes(value))


def _raw_usage(event: dict[str, Any], raw_type: type) -> tuple[int, int]:
    output = event.get("output")
    if type(output) is raw_type:
        event = {**event, "output": _decode_raw(output)}
    return usage_tokens(event)


def _regex_set(patterns: list[tuple[str, str]]) -> Any:
    """One RE2 Set searching for every pattern at once (each with its flags inline, as
    `compile_regex` writes them)."""
    options = re2.Options()
    options.log_errors = False
    found = re2.Set.SearchSet(options)
    for pattern, flags in patterns:
        assert not isinstance(compile_regex(pattern, flags), Exception)
        prefix = f"(?{''.join(sorted(set(flags)))})" if flags else ""
        found.Add(prefix + pattern)
    found.Compile()
    return found


def _literal_set(texts: list[str]) -> Any:
    return _regex_set([(re.escape(t), "") for t in texts])


def _set_matcher(found: Any) -> Callable[[str], Any]:
    """The indices of a compiled RE2 Set's patterns found in a text (`Set.Match`, without
    its Python wrapper: it runs for every value of every call)."""
    inner = getattr(found, "_set", None)
    match = getattr(inner, "Match", None)
    if match is None:
        return found.Match  # type: ignore[no-any-return]
    return lambda text: match(text.encode("utf-8"))


class _Generator:
    def __init__(self, needs: Needs, raw: bool, raw_type: type | None) -> None:
        self.needs = needs
        self.raw = raw
        self.names = _Names()
        self.out = _Out()
        self.raw_type = raw_type
        self.keys: dict[int, str] = {}
        self.finders: dict[int, str] = {}
        self.steps: dict[int, tuple[object, ...]] = {}
        self.plans: dict[int, dict[str, Any]] = {}
        ns = self.names.namespace
        ns.update(
            MISSING=MISSING,
            TraceFacts=TraceFacts,
            CallRecord=CallRecord,
            CALL_TYPES=TOOL_CALL_TYPES,
            RESPONSE_TYPES=RESPONSE_TYPES,
            ERROR_TYPES=ERROR_TYPES,
            tool_call_name=tool_call_name,
            tool_call_arguments=tool_call_arguments,
            inline_result=inline_result,
            usage_tokens=usage_tokens,
            price_of=price_of,
            make_tally=_make_tally,
            first_time=_first_time,
            decode=_decode_raw,
            raw_usage=_raw_usage,
            Raw=raw_type,
            value_text=value_text,
            is_number=is_number,
            isnan=math.isnan,
            json_equal=json_equal,
        )

    # -- the parts

    def decoded(self, var: str) -> None:
        if self.raw:
            self.out(f"if type({var}) is Raw:", f"    {var} = decode({var})")

    def generate(self) -> tuple[str, dict[str, Any], list[str]]:
        needs, out = self.needs, self.out
        tools = sorted(
            {p.tool for p in needs.probes} | needs.tool_detail | needs.tool_results | needs.counted,
            key=lambda t: (t not in {p.tool for p in needs.probes}, t),
        )
        self.tool_slot = {t: i for i, t in enumerate(tools)}
        self.tool_names = {t: self.names.bind("T", t, f"tool {t!r}") for t in tools}
        # groups: (tool, on_result, path) → probes
        groups: dict[tuple[str, bool, str | None], list[_Probe]] = {}
        for i, p in enumerate(needs.probes):
            groups.setdefault((p.tool, p.on_result, p.path), []).append(_Probe(i, p, _bulk_kind(p)))
        self.groups = list(groups.items())
        self.want_results = bool(needs.tool_results)
        self.any_result_probes = any(p.on_result for p in needs.probes)

        out("def index_pass(events, again, is_list):")
        out.indent()
        out(
            "facts = TraceFacts()",
            "counts = facts.call_counts",
            "steps = responses = tool_calls = guards = errors = results = others = 0",
            "tokens_in = tokens_out = 0",
            "unknown = {}",
            "dec = {}  # test → (the call that decided it, the values it found there)",
        )
        if needs.tool_sequence:
            out("sequence = facts.sequence")
        if needs.cost:
            out("cost = 0.0", "unpriced = None", "model = None")
        positions = sorted(needs.answers)
        if positions:
            out(f"positions = {self.names.bind('A', frozenset(positions), 'answer positions')}")
            last = self.names.bind("N", max(positions), "the last answer position read")
            out(f"last_position = {last}", "answers_at = facts.answers_at")
        tail = needs.answer_tail
        if tail:
            out("before_last = last = MISSING")
            if tail > 2:
                kept = self.names.bind("N", tail, "how many of the last answers are read")
                out(f"tail = {self.names.bind('D', deque)}(maxlen={kept})")
        if needs.times:
            out(
                "first_at = None",
                "last_ev = None",
                "times_in_pass = not is_list and again is None",
            )
        if needs.tool_detail or needs.tool_results:
            out("calls = facts.calls")
        if self.want_results:
            out("by_call_id = {}")
        if self.any_result_probes:
            out("owners = {}  # call id → [tool, its result already fed]")
        for i in range(len(tools)):
            out(f"c{i} = 0  # calls of {self.tool_names[tools[i]]}")
        for g, (key, probes) in enumerate(self.groups):
            self.group_setup(g, key, probes)
        out("ev = None")
        out("for ev in events:")
        out.indent()
        out('kind = ev.get("type")')
        if needs.times:
            out(
                "if times_in_pass:",
                "    last_ev = ev",
                "    if first_at is None:",
                '        at = ev.get("at")',
                "        if isinstance(at, str):",
                "            first_at = at",
            )
        self.tool_call_branch(tools)
        self.result_branch()
        self.response_branches()
        out.dedent()
        self.epilogue()
        out.dedent()
        return "\n".join(out.lines) + "\n", self.names.namespace, self.names.notes

    # -- groups of tests on one path of one tool

    def group_setup(self, g: int, key: tuple[str, bool, str | None], probes: list[_Probe]) -> None:
        out, names = self.out, self.names
        tool, on_result, path = key
        side = "result" if on_result else "args"
        out(f"# group {g}: {len(probes)} test(s) on the {side} of {self.tool_names[tool]}")
        out(
            f"g{g}_open = {len(probes)}",
            f"g{g}_fed = g{g}_found = 0",
            f"g{g}_sample = []",
            f"g{g}_room = {SAMPLE}  # found values still to keep for messages",
        )
        first = probes[0].probe
        if first.key is not None and all(p.probe.key == first.key for p in probes):
            self.keys[g] = names.bind("K", first.key, f"the key {first.key!r}")
        else:
            compiled = compile_path(path) if path is not None else None
            if isinstance(compiled, CompiledPath) and compiled.steps is not None:
                self.steps[g] = compiled.steps  # written out as loops: no call per value
            else:
                self.finders[g] = names.bind(
                    "F", first.finder, f"the path {path!r}" if path else "the whole value"
                )
        kinds: dict[str, list[_Probe]] = {}
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
            if kind == "eq":
                table: dict[str, list[int]] = {}
                for p in members:
                    for text in p.bulk[1]:  # type: ignore[index]
                        table.setdefault(text, []).append(p.index)
                out(f"g{g}_eq = dict({names.bind('E', table, 'texts → the tests they pass')})")
            elif kind in ("lt", "le", "gt", "ge"):
                descending = kind in ("gt", "ge")
                ordered = sorted(
                    ((p.bulk[1], p.index) for p in members),  # type: ignore[index]
                    key=lambda x: x[0],
                    reverse=descending,
                )
                out(f"g{g}_{kind} = list({names.bind('B', ordered, 'thresholds, sorted')})")
            elif kind == "re":
                patterns = [p.bulk[1] for p in members]  # type: ignore[index]
                rs = names.bind(
                    "S", _set_matcher(_regex_set(patterns)), "one RE2 Set of the regexes"
                )
                ids = names.const(tuple(p.index for p in members))
                plan["re"] = (rs, ids)
            elif kind == "has":
                texts = [p.bulk[1] for p in members]  # type: ignore[index]
                ls = names.bind("S", _set_matcher(_literal_set(texts)), "one RE2 Set of the texts")
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
            matcher = _set_matcher(_regex_set(both))
            order = tuple(p.index for p in (*bulk["re"], *bulk["has"]))
            plan["both"] = (
                names.bind("S", matcher, "one RE2 Set of the regexes and the texts"),
                names.const(order),
            )
        for p in inline:
            out(f"o{p.index} = True")
        if loop:
            entries = tuple((p.index, p.probe.test, p.probe.every) for p in loop)
            out(f"g{g}_loop = list({names.bind('L', entries, 'tests fed through a loop')})")

    def decide(self, g: int, j: str, last: str, *, bulk: bool) -> None:
        """Mark test `j` decided at this call (`last`: the values found there)."""
        out = self.out
        if bulk:
            out(f"g{g}_bulk.discard({j})")
        out(f"g{g}_open -= 1", f"dec[{j}] = (g{g}_fed, {last})")

    def test_source(self, p: _Probe) -> str:
        made = p.probe.fragment(self.names) if p.probe.fragment is not None else None
        if made is None:
            closure = self.names.bind(
                "X", p.probe.test, "a test without a code fragment: its family's closure"
            )
            return f"{closure}(v)"
        return made

    def feed_group(self, g: int, target: str) -> None:
        """The tests of group `g` on one call's value `target` (its arguments or result)."""
        out = self.out
        plan = self.plans[g]
        key = self.keys.get(g)
        out(f"if g{g}_open:")
        out.indent()
        out(f"g{g}_fed += 1")
        if key is not None:
            out(f"if type({target}) is dict and {key} in {target}:")
            out.indent()
            out(f"v = {target}[{key}]", f"g{g}_found += 1")
            out(f"if g{g}_room:", f"    g{g}_sample.append(v)", f"    g{g}_room -= 1")
            self.tests_on_value(g, plan, "[v]")
            out.dedent()
            everys = [p for p in plan["inline"] if p.probe.every]
            if everys or plan["loop"]:
                out("else:  # no value: an `every` test fails here")
                out.indent()
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
        out.dedent()

    def find_steps(self, value: str, steps: tuple[object, ...], depth: int) -> None:
        """A path's fast form as nested loops filling `vals` (what `CompiledPath.find`
        finds, in its order: each step's values in their parents' order)."""
        out = self.out
        if not steps:
            out(f"vals.append({value})")
            return
        step, rest, x = steps[0], steps[1:], f"x{depth}"
        if isinstance(step, Descend):
            out(f"{self.names.bind('F', step, f'..{step.name}')}.find({value}, vals)")
        elif step is STAR:
            out(f"if isinstance({value}, list):", f"    items{depth} = {value}")
            out(f"elif isinstance({value}, dict):", f"    items{depth} = {value}.values()")
            out("else:", f"    items{depth} = ()")
            out(f"for {x} in items{depth}:")
            out.indent()
            self.find_steps(x, rest, depth + 1)
            out.dedent()
        elif isinstance(step, int):
            i = self.names.bind("I", step, f"the index {step}")
            out(f"if isinstance({value}, list) and -len({value}) <= {i} < len({value}):")
            out.indent()
            out(f"{x} = {value}[{i}]")
            self.find_steps(x, rest, depth + 1)
            out.dedent()
        else:
            k = self.names.bind("K", step, f"the key {step!r}")
            out(f"if isinstance({value}, dict) and {k} in {value}:")
            out.indent()
            out(f"{x} = {value}[{k}]")
            self.find_steps(x, rest, depth + 1)
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

    def bulk_on_value(self, g: int, plan: dict[str, Any], last: str) -> None:
        out = self.out
        bulk = plan["bulk"]
        if "eq" in bulk:
            out("if type(v) is str:")
            out.indent()
            out(f"hit = g{g}_eq.pop(v, None)")
            out("if hit is not None:")
            out.indent()
            out("for j in hit:")
            out(f"    if j in g{g}_bulk:")
            out.depth += 2
            self.decide(g, "j", last, bulk=True)
            out.depth -= 2
            out.dedent()
            out.dedent()
        numeric = [k for k in ("lt", "le", "gt", "ge") if k in bulk]
        if numeric:
            out(
                "if isinstance(v, (int, float)) and type(v) is not bool"
                " and not (isinstance(v, float) and v != v):"
            )
            out.indent()
            for kind in numeric:
                cmp = {"lt": ">", "le": ">=", "gt": "<", "ge": "<="}[kind]
                out(f"while g{g}_{kind} and g{g}_{kind}[-1][0] {cmp} v:")
                out.indent()
                out(f"j = g{g}_{kind}.pop()[1]")
                out(f"if j in g{g}_bulk:")
                out.indent()
                self.decide(g, "j", last, bulk=True)
                out.dedent()
                out.dedent()
            out.dedent()
        if "sub" in bulk:
            self.sub_objects(g, plan, last)
        if "both" in plan:  # regexes and texts in one Set: one search of a text for both
            both, ids = plan["both"]
            out("if isinstance(v, str):")
            out.indent()
            out(f"for i in {both}(v) or ():")
            out.indent()
            out(f"j = {ids}[i]")
            out(f"if j in g{g}_bulk:")
            out.indent()
            self.decide(g, "j", last, bulk=True)
            out.dedent()
            out.dedent()
            out.dedent()
            out("elif v is not MISSING:")
            out.indent()
            self.regex_on_text(g, plan, last, "value_text(v)")
            self.texts_in_list(g, plan, last)
            out.dedent()
            return
        if "re" in bulk:
            out("if v is not MISSING:")
            out.indent()
            self.regex_on_text(g, plan, last, "v if isinstance(v, str) else value_text(v)")
            out.dedent()
        if "has" in bulk:
            ls, ids, _ = plan["has"]
            out("if isinstance(v, str):")
            out.indent()
            out(f"for i in {ls}(v) or ():")
            out.indent()
            out(f"j = {ids}[i]")
            out(f"if j in g{g}_bulk:")
            out.indent()
            self.decide(g, "j", last, bulk=True)
            out.dedent()
            out.dedent()
            out.dedent()
            out("else:")
            out.indent()
            self.texts_in_list(g, plan, last)
            out.dedent()

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
            out(f"hit = {sub}.pop(x, None)", "if hit is not None:")
            out.indent()
            out("for j in hit:", f"    if j in g{g}_bulk:")
            out.depth += 2
            self.decide(g, "j", last, bulk=True)
            out.depth -= 2
            out.dedent()
            out.dedent()
        out.dedent()
        out("elif isinstance(v, list):")
        out.indent()
        out("for e in v:")
        out.indent()
        out("if isinstance(e, dict) and len(e) == 1:")
        out.indent()
        out("for k, x in e.items():")
        out(f"    for j in (({table}.get(k) or {{}}).get(x) or ()) if isinstance(x, str) else ():")
        out(f"        if j in g{g}_bulk:")
        out.depth += 3
        self.decide(g, "j", last, bulk=True)
        out.depth -= 3
        out.dedent()
        out.dedent()
        out.dedent()

    def regex_on_text(self, g: int, plan: dict[str, Any], last: str, text: str) -> None:
        out = self.out
        rs, ids = plan["re"]
        out(f"for i in {rs}({text}) or ():")
        out.indent()
        out(f"j = {ids}[i]")
        out(f"if j in g{g}_bulk:")
        out.indent()
        self.decide(g, "j", last, bulk=True)
        out.dedent()
        out.dedent()

    def texts_in_list(self, g: int, plan: dict[str, Any], last: str) -> None:
        """`contains "text"` on a list: an element equal to the text."""
        out = self.out
        _, _, table = plan["has"]
        out("if isinstance(v, list):")
        out.indent()
        out("for e in v:")
        out(f"    for j in (({table}.get(e) or ()) if isinstance(e, str) else ()):")
        out(f"        if j in g{g}_bulk:")
        out.depth += 3
        self.decide(g, "j", last, bulk=True)
        out.depth -= 3
        out.dedent()

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
        if plan["bulk"]:
            out("for v in vals:")
            out.indent()
            self.bulk_on_value(g, plan, "vals")
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

    def groups_of(self, tool: str, on_result: bool) -> list[int]:
        return [g for g, (k, _) in enumerate(self.groups) if k[0] == tool and k[1] == on_result]

    def open_expr(self, groups: list[int]) -> str:
        return " or ".join(f"g{g}_open" for g in groups) or "False"

    # -- the event kinds

    def tool_call_branch(self, tools: list[str]) -> None:
        out, needs = self.out, self.needs
        out("if kind in CALL_TYPES:")
        out.indent()
        out("tool_calls += 1")
        if not (tools or needs.tool_sequence):
            out.dedent()
            return
        out(
            'name = ev.get("name")',
            'if name is None and kind == "mcp.call":',
            "    name = tool_call_name(ev)",
        )
        if needs.tool_sequence:
            out("if not isinstance(name, str):", "    continue", "sequence.append(name)")
        # (only the tools the assertions name are counted and looked at: a name that is
        # not text equals none of them)
        for i, tool in enumerate(tools):
            out(f"{'if' if i == 0 else 'elif'} name == {self.tool_names[tool]}:")
            out.indent()
            out(f"c{i} += 1")
            self.tool_block(tool)
            out.dedent()
        out.dedent()

    def tool_block(self, tool: str) -> None:
        out, needs = self.out, self.needs
        arg_groups = self.groups_of(tool, False)
        result_groups = self.groups_of(tool, True)
        keep = tool in needs.tool_detail or tool in needs.tool_results
        if not (arg_groups or result_groups or keep):
            return
        if arg_groups:
            out(f"if {self.open_expr(arg_groups)}:")
            out.indent()
            out('args = ev.get("arguments", MISSING)')
            out('if args is MISSING and kind == "mcp.call":', "    args = tool_call_arguments(ev)")
            self.decoded("args")
            for g in arg_groups:
                self.feed_group(g, "args")
            out.dedent()
        if result_groups:
            out(f"if {self.open_expr(result_groups)}:")
            out.indent()
            out('if kind == "mcp.call":')
            out.indent()
            out("inline = inline_result(ev)")
            self.decoded("inline")
            out("if inline is not MISSING:")
            out.indent()
            for g in result_groups:
                self.feed_group(g, "inline")
            out.dedent()
            out.dedent()
            out("else:")
            out.indent()
            slot = self.tool_slot[tool]
            out(
                f"owner = [{slot}, False]",
                'eid = ev.get("id")',
                "if eid is not None:",
                "    owners.setdefault(eid, owner)",
                'cid = ev.get("callId")',
                "if cid is not None:",
                "    owners[cid] = owner",
            )
            out.dedent()
            out.dedent()
        if keep:
            # a kept call's arguments are never read (`cites` reads its result): not decoded
            out("record = CallRecord(name, MISSING)")
            out('if kind == "mcp.call":')
            out.indent()
            out("found = inline_result(ev)")
            self.decoded("found")
            out("record.result = found", 'record.is_error = bool(ev.get("isError"))')
            out.dedent()
            if self.want_results:
                out(
                    "else:",
                    '    eid = ev.get("id")',
                    "    if eid is not None:",
                    "        by_call_id.setdefault(eid, record)",
                    '    cid = ev.get("callId")',
                    "    if cid is not None:",
                    "        by_call_id[cid] = record",
                )
            out("calls.setdefault(name, []).append(record)")

    def result_branch(self) -> None:
        out = self.out
        out('elif kind == "tool.result":')
        out.indent()
        out("results += 1")
        if self.want_results:
            out('record_for = by_call_id.get(ev.get("callId"))', "if record_for is not None:")
            out.indent()
            out('found = ev.get("output", MISSING)')
            self.decoded("found")
            out("record_for.result = found", 'record_for.is_error = bool(ev.get("isError"))')
            out.dedent()
        if self.any_result_probes:
            out("if owners:")
            out.indent()
            out('owner = owners.get(ev.get("callId"))', "if owner is not None and not owner[1]:")
            out.indent()
            out("owner[1] = True", 'output = ev.get("output", MISSING)')
            self.decoded("output")
            tools = [t for t in self.tool_slot if self.groups_of(t, True)]
            every_open = []
            for n, tool in enumerate(tools):
                groups = self.groups_of(tool, True)
                every_open.extend(groups)
                out(f"{'if' if n == 0 else 'elif'} owner[0] == {self.tool_slot[tool]}:")
                out.indent()
                for g in groups:
                    self.feed_group(g, "output")
                out.dedent()
            out(
                f"if not ({self.open_expr(every_open)}):",
                "    owners.clear()  # nothing reads results",
            )
            out.dedent()
            out.dedent()
        out.dedent()

    def response_branches(self) -> None:
        out, needs = self.out, self.needs
        out('elif kind == "llm.request":', "    steps += 1")
        if needs.cost:
            out('    model = ev.get("model")')
        out("elif kind in RESPONSE_TYPES:")
        out.indent()
        out("responses += 1", 'if kind == "llm.invoke":', "    steps += 1")
        positions, tail = bool(needs.answers), needs.answer_tail
        if positions or tail:
            out('raw = ev.get("output")')
        # (an undecoded answer kept past its chunk is copied: it would keep the chunk)
        copied = "raw.copy() if type(raw) is Raw else raw" if self.raw else "raw"
        if positions:
            out(
                "if responses <= last_position and responses in positions:",
                f"    answers_at[responses] = {copied}",
            )
        if tail:
            out("before_last = last", "last = raw")
            if tail > 2:
                out(f"tail.append({copied})")
        if not (needs.tokens or needs.cost):
            out.dedent()
            self.other_branches()
            return
        out(
            'usage = ev.get("usage")',
            "if (",
            "    type(usage) is dict",
            '    and type(p := usage.get("promptTokens")) is int',
            '    and type(c := usage.get("completionTokens")) is int',
            "):",
            "    used_in, used_out = p, c",
            "else:",
            "    used_in, used_out = " + ("raw_usage(ev, Raw)" if self.raw else "usage_tokens(ev)"),
            "tokens_in += used_in",
            "tokens_out += used_out",
        )
        if needs.cost:
            out(
                "if used_in or used_out:",
                '    price = price_of(ev.get("model") or model or "")',
                "    if price is None:",
                '        unpriced = ev.get("model") or model or "(no model)"',
                "    else:",
                "        cost += (used_in * price[0] + used_out * price[1]) / 1_000_000",
            )
        out.dedent()
        self.other_branches()

    def other_branches(self) -> None:
        self.out(
            'elif kind == "policy.evaluate":',
            "    guards += 1",
            "elif kind in ERROR_TYPES:",
            "    errors += 1",
            'elif kind == "user.message":',
            "    others += 1",
            "else:  # not read: counted, so a trace in which nothing is recognised is an error",
            "    unknown[kind] = unknown.get(kind, 0) + 1",
        )

    def epilogue(self) -> None:
        out, needs = self.out, self.needs
        out(
            "facts.steps = steps",
            "facts.responses = responses",
            "facts.tool_calls = tool_calls",
            "facts.guards = guards",
            "facts.errors = errors",
            "facts.results = results",
            "facts.others = others",
            "facts.unknown = {str(k): n for k, n in unknown.items()}",
            "facts.input_tokens = tokens_in",
            "facts.output_tokens = tokens_out",
        )
        for i, tool in enumerate(self.tool_slot):
            out(f"if c{i}:", f"    counts[{self.tool_names[tool]}] = c{i}")
        if needs.cost:
            out(
                "facts.cost = cost if unpriced is None else None", "facts.unpriced_model = unpriced"
            )
        if self.raw and needs.answers:
            out(
                "for at, value in answers_at.items():",
                "    if type(value) is Raw:",
                "        answers_at[at] = decode(value)",
            )
        tail = needs.answer_tail
        if tail:
            kept = (
                "list(tail)"
                if tail > 2
                else f"[a for a in (before_last, last)[{2 - tail}:] if a is not MISSING]"
            )
            out(f"kept = {kept}")
            if self.raw:
                out("kept = [decode(a) if type(a) is Raw else a for a in kept]")
            out("facts.answers_tail = kept")
        if needs.times:
            out(
                "last_at = None",
                "if again is not None:",
                "    last_ev = ev",
                "    first_at = first_time(again())",
                "if (times_in_pass or again is not None) and last_ev is not None:",
                '    last_at = last_ev.get("at")',
                "    if not isinstance(last_at, str) and again is not None:",
                "        for e in again():",
                '            at = e.get("at")',
                "            if isinstance(at, str):",
                "                last_at = at",
                "if not times_in_pass and again is None:",
                "    first_at = first_time(events)",
                "    last_at = first_time(reversed(events))",
                "if isinstance(first_at, str) and isinstance(last_at, str):",
                "    facts.first_at, facts.last_at = first_at, last_at",
            )
        if self.groups:
            out("tallies = facts.tallies")
        for g, (_, probes) in enumerate(self.groups):
            members = tuple((p.index, p.probe, p.probe.every) for p in probes)
            table = self.names.bind("G", members, f"group {g}'s tests (whose tallies they fill)")
            out(
                f"for j, probe, every in {table}:",
                f"    tallies[probe] = make_tally(dec.get(j), g{g}_fed, g{g}_found, "
                f"g{g}_sample, every)",
            )
        out("return facts")


def _text_table(members: list[_Probe]) -> dict[str, list[int]]:
    table: dict[str, list[int]] = {}
    for p in members:
        table.setdefault(p.bulk[1], []).append(p.index)  # type: ignore[index]
    return table


def generate(needs: Needs, *, raw: bool = False, raw_type: type | None = None) -> IndexPass:
    """The generated pass for `needs` (`raw`: events from the typed decoder, whose large
    fields are `raw_type` bytes)."""
    source, namespace, notes = _Generator(needs, raw, raw_type).generate()
    with _LOCK:
        code = _CACHE.get(source)
        if code is None:
            code = _CACHE[source] = compile(source, "<evaldsl generated pass>", "exec")
    scope = dict(namespace)
    exec(code, scope)
    return IndexPass(source, tuple(notes), scope["index_pass"])
