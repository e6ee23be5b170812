"""Generated index passes: a case's needs → the source of one Python function, the loop
over its events a careful engineer would write by hand for exactly those assertions.

Takes a case's `Needs` (which tools' calls and results its assertions test, and with
what; which answers, times, cost) and gives an `IndexPass`: the function's source, and the
function, which reads a run's events and gives the same `TraceFacts` the reference pass
(`index.py`) gives, so the checkers, closures over those facts, give the same verdicts. A
differential test runs both on random programs and random traces.

What is specialised: only the branches the needs read are written (no answer kept that
no assertion reads, no timestamps, prices, token sums or call counts unless asked); each
tool an assertion names gets its own block; the `args`/`result` tests on each path of a
tool are written by `groupgen.py`: inlined from their families' code fragments, and many
of one kind decided together (K of them on one path cost about what one does). Past
`overflow.GROUPS_WRITTEN` groups, groups of any-call tests whose path starts with a
plain key are not written but fed as data, by that key (`overflow.py`).

No value from a suite is ever written into the source: tool names, keys, constants,
compiled regexes and paths are names (`T0`, `K1`, `C2`) in the function's namespace, so
the source depends only on the shape of the needs, and compiled code objects are cached
by it. `evaldsl inspect --code SUITE` prints the source of each case's pass, with a
comment saying what each name holds.

Events are dicts; with `raw=True` they come from the typed decoder (`decode.py`), whose
large fields (arguments, outputs, results) are undecoded `msgspec.Raw` bytes, decoded
here only for the calls and answers an assertion reads. With `by_kind=True` too they are
the structs of `decode.kind_events`, one per event kind, read by attribute: the pass
says in `IndexPass.reads` which fields it reads of which kind (and whether it tells an
absent field from `null`), and the decoder builds only those.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from types import CodeType
from typing import Any

import attrs

from evaldsl.bounded import keep_weighed
from evaldsl.cache.compiled import GENERATED_PASS, compile_cached
from evaldsl.language.paths import CompiledPath, compile_path
from evaldsl.language.values import MISSING, is_number, json_equal
from evaldsl.language.values import js_text as value_text
from evaldsl.runs import overflow
from evaldsl.runs.decode import KINDS, usage_as_dict
from evaldsl.runs.events import (
    ERROR_TYPES,
    LLM_INVOKE,
    LLM_REQUEST,
    LLM_RESPONSE,
    MCP_CALL,
    POLICY_EVALUATE,
    RESPONSE_TYPES,
    TOOL_CALL,
    TOOL_RESULT,
    USER_MESSAGE,
    inline_result,
    tool_call_arguments,
    tool_call_name,
)
from evaldsl.runs.gensource import Names, Out
from evaldsl.runs.groupgen import GroupTest, GroupWriter, bulk_kind
from evaldsl.runs.heldcalls import holds_calls
from evaldsl.runs.index import (
    CallRecord,
    Needs,
    Tally,
    TraceFacts,
    first_unanswered,
    request_sent,
    response_came,
)
from evaldsl.runs.prices import body_tier, cache_premium, long_priced, price_of, tier_cost
from evaldsl.runs.rawbody import streamed_body
from evaldsl.runs.text import (
    CACHE_READ,
    CACHE_SPLIT,
    CACHE_WRITE,
    CHAT_CACHED,
    NO_USAGE,
    RESPONSES_CACHED,
    body_cache,
    usage_tokens,
)

#: The code of generated sources, by source: one a shape of needs (cases whose tests differ
#: only in their values share it). Bounded by the sources' size, as the passes are
#: (`passes._SHARED`): a source and its code hold ~4 bytes a character of source, ~20 kB
#: for a case of three assertions, ~0.4 MB for one of 250 mixed ones, ~1.4 MB for 250
#: `args` tests; the 256 last shapes held up to ~100 MB (~350 MB). This holds ~2 MB.
_CODE: dict[str, CodeType] = {}
_CODE_SOURCE = 512 << 10


def _source_size(source: str, code: CodeType) -> int:
    """A kept code object's weight in `_CODE`: its source's length."""
    return len(source)


def compiled(source: str) -> CodeType:
    """The code object of a generated source, compiled once per shape of needs (kept
    within `_CODE_SOURCE`), and loaded from the code cache (`cache/compiled.py`) when an
    earlier start compiled it: compiling a pass was ~20 M instructions of the first check
    of a case (~1% of a 2,000-export OTel file's), loading it is a lookup in the file
    read at start."""
    code = _CODE.get(source)
    if code is None:
        code = compile_cached(source, GENERATED_PASS)
        keep_weighed(_CODE, source, code, _source_size, _CODE_SOURCE)
    return code


@attrs.frozen
class IndexPass:
    """A generated pass: its source, what its names hold, and the function."""

    source: str
    notes: tuple[str, ...]
    run: Callable[[Iterable[Any], Callable[[], Iterable[Any]] | None, bool], TraceFacts]
    #: (`by_kind` passes) what it reads of each event kind, for `decode.kind_events`
    reads: tuple[tuple[str, tuple[tuple[str, bool], ...]], ...] = ()


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


def _overflow_names(slot: int, on_result: bool) -> str:
    """The prefix of the variables of a tool's groups fed by key (`ov0`, `ovr0`): the
    table by key, `…all`, `…n` (how many are open) and, for results, `…f` (fed)."""
    return f"ovr{slot}" if on_result else f"ov{slot}"


def _first_key(path: str | None) -> str | None:
    """The plain key a path starts with (`$.city…`, `$["limit"]…`), or None."""
    compiled = compile_path(path) if path is not None else None
    if not isinstance(compiled, CompiledPath) or not compiled.steps:
        return None
    first = compiled.steps[0]
    return first if type(first) is str else None


def _first_time(events: Iterable[Any]) -> Any:
    """The first `at` that is text, of events in the order given."""
    return next((e.get("at") for e in events if isinstance(e.get("at"), str)), None)


def _counting(batches: Iterable[list[Any]], seen: list[int]) -> Iterator[list[Any]]:
    """`batches` (lists of a stream's events), adding each one's length to `seen[0]` as
    it passes: a stream's number of events, a list's `len`, so that the pass counts one
    kind of event as what the others leave (`_Generator.epilogue`), not one by one."""
    for batch in batches:
        seen[0] += len(batch)
        yield batch


def _noting_first_time(events: Iterable[Any], found: list[Any]) -> Iterator[Any]:
    """`events`, in order, appending the first `at` that is text to `found` as they go:
    for a stream read once (its first time cannot be read again afterwards). A wrapper
    the pass takes only then, not a test of every event of every run."""
    rest = iter(events)
    for ev in rest:
        yield ev
        at = ev.get("at")
        if isinstance(at, str):
            found.append(at)
            break
    yield from rest


class FedKeys:
    """The ids under which calls whose result was fed were filed, in the order their
    results came (`keys`), for the generated pass's linking of results to calls.

    The reference files every call under its ids for the whole run (`index._link`). The
    pass files a call only until its result comes, so its table stays as small as the
    calls waiting for a result (a table that grows with the run cost a third of a pass
    of 1,000 tests). The one thing a fed call's id still does in the reference is keep
    a later call filed under the same event id (`setdefault`) from being found by it;
    `filed_before` says whether an id was fed before a call was filed, which the pass
    asks only of a result that names a call by its event id, not its `callId`. A call
    found by its callId outside the table (the pass's `p_slot`) adds both of its ids at once,
    its event id `None` when it was filed under none, or equal to its callId: neither
    changes which id came first (no result names a call by `None`).
    """

    __slots__ = ("first", "indexed", "keys")

    def __init__(self) -> None:
        self.keys: list[Any] = []
        self.first: dict[Any, int] = {}
        self.indexed = 0

    def filed_before(self, key: Any, mark: int) -> bool:
        """Whether `key` named one of the first `mark` fed calls."""
        keys, first = self.keys, self.first
        for i in range(self.indexed, len(keys)):
            first.setdefault(keys[i], i)
        self.indexed = len(keys)
        return first.get(key, mark) < mark


def _file_event_ids(by_call_id: dict[Any, Any], unfiled: list[tuple[Any, Any]], key: Any) -> Any:
    """What `by_call_id` holds under `key` once the kept calls' event ids not filed yet
    are: the pass files a kept call under its event id (the reference's `setdefault`)
    only when a result names an id it does not hold, not at every call (inserting
    11,000 event ids nobody named into the table cost ~3% of a pass). Filed later, each
    still defers to what the table got after it (a later call's `callId`, or `None` for
    a hidden call), as it would have kept what the table held before it: such an id was
    in `linked` then, and never listed."""
    for event_id, record in unfiled:
        by_call_id.setdefault(event_id, record)
    unfiled.clear()
    return by_call_id[key]


def _decode_raw(value: Any) -> Any:
    """A `msgspec.Raw` field, decoded as the reference decodes every field: by msgspec,
    which reads JSON as orjson does but for integers past 64 bits, which it keeps exact,
    as the reference does (`bigints`; orjson alone would give the nearest double)."""
    import msgspec  # (loaded: the field is one of its `Raw`s)

    return msgspec.json.decode(value)


def _raw_loads() -> Callable[[Any], Any]:
    """`_decode_raw`'s decoder, for a pass to call inline (msgspec: loaded by a pass whose
    events come from the typed decoder, and only then)."""
    import msgspec

    decode: Callable[[Any], Any] = msgspec.json.decode
    return decode


def _raw_usage(event: dict[str, Any], raw_type: type) -> tuple[float, float]:
    output = event.get("output")
    if type(output) is raw_type:
        event = {**event, "output": _decode_raw(output)}
    return usage_tokens(event)


def _struct_usage(event: Any, raw_type: type) -> tuple[float, float]:
    """`_raw_usage` of a response decoded as a struct (`by_kind`): the fields
    `usage_tokens` reads, as the dict the typed decoder would have given."""
    as_dict = {"type": event.type, "usage": usage_as_dict(event.usage), "output": event.output}
    for key in ("tokensIn", "tokensOut"):
        if getattr(event, key) is not MISSING:
            as_dict[key] = getattr(event, key)
    return _raw_usage(as_dict, raw_type)


def _slow_usage(usage_call: str) -> tuple[str, ...]:
    """A response's counts read as the reference reads them (`usage_call`), counting the
    responses that record none (`NO_USAGE`, the very tuple), as the reference counts them."""
    return (
        f"used = {usage_call}",
        "if used is NO_USAGE:",
        "    unmetered += 1",
        "used_in, used_out = used",
    )


#: The tools a call's name is compared with one by one (`name == T1`, `elif name == T2`,
#: …); the tools past these are found by one dict lookup of the name and a binary search
#: of their slots, so a call costs about log2 of the tools named, not one comparison per
#: tool (a case naming 400 tools made the pass ~11x the reference's time).
CHAIN_TOOLS = 8

#: A call whose name is not text, where the case reads names: the generated pass gives
#: way to the reference (`passes.index_events_fast`), which names the call.
_UNNAMED = 'raise TypeError("a tool call whose name is not text")'

# Which undecoded outputs are decoded to ask about their prompt-cache counts (`body_cache`)
# or their tool calls (`heldcalls.holds_calls`): those whose text may name them, found by
# the underscore of each name and what follows it, or by a `\\u` escape that may spell a
# letter of one (`tool\\u005fcalls`; encoders escape only controls and what is not
# ASCII). Each pattern starts with one byte, which `re` looks for at C speed: one
# alternation of the names, each with its quote, tried every quote of the text (3-8x the
# time: ~0.8-2 us a response, a sixth of a typed check that asks it of every response).
#: The escape of an ASCII character that is not a control.
NAMES_SPELLED = re.compile(rb"\\u00[2-7][0-9a-fA-F]")
#: The ends of `cache_read_input_tokens`, `cache_creation_input_tokens`, `cache_creation`;
#: of OpenAI's `…_tokens_details` whose value is neither an object nor null (the run's
#: error) and of its `cached_tokens` whose value is not a plain 0 (every recent body says
#: `"cached_tokens": 0`: not decoded for that); of `service_tier` whose value is not the
#: standard tier's or null (`body_tier`: every OpenAI body says `"service_tier":
#: "default"`, every Anthropic one `"standard"`, Groq's `"on_demand"`: not decoded for
#: that; the spaces are in the lookahead, which `\s*` before it would otherwise step
#: back out of); and of `"tool_calls"`, `"tool_use"`, `"function_call"` (`heldcalls`).
#: Gemini's `"functionCall"` has no underscore: `GEMINI_CALL` is looked for apart (a
#: second search, ~0.4 us a response, where an alternative of `Call"` in the pattern
#: made each search 7x as long: it loses its one first byte).
_CACHE_ENDS = (
    rb"creation",
    rb"read",
    rb'details"\s*:\s*[^\s{n]',
    rb'(?<=cached_)tokens"\s*:\s*(?:[^\s0]|0\s*[^\s,}])',
    rb'(?<=service_)tier"\s*:(?!\s*(?:"default"|"standard"|"on_demand"|null))',
)
_CALL_ENDS = (rb'calls"', rb'use"', rb'call"')
GEMINI_CALL = re.compile(rb'Call"')


def _kind_local(kind: str) -> str:
    """The local name a `by_kind` pass gives the struct of `kind` (`t_tool_call`)."""
    return "t_" + kind.replace(".", "_")


def _names(ends: tuple[bytes, ...]) -> re.Pattern[bytes]:
    return re.compile(rb"_(?:" + b"|".join(ends) + rb")")


NAMES_CACHE = _names(_CACHE_ENDS)
NAMES_CALL = _names(_CALL_ENDS)
#: Either: a pass that asks both of a response looks through its output once, and again
#: for each only where this finds one (most responses hold neither).
NAMES_EITHER = _names(_CACHE_ENDS + _CALL_ENDS)

#: The kinds a `by_kind` pass reads fields of by name (an `mcp.call` is never one of its
#: events: `decode.KINDS`; its branch is written but never taken).
_CALL = (TOOL_CALL,)
_RESULT = (TOOL_RESULT,)
_REQUEST = (LLM_REQUEST,)
_RESPONSE = (LLM_RESPONSE,)
_MCP = (MCP_CALL,)


#: Whether `x` may name the call waiting outside the table (`p_slot` not None), which
#: then goes into it: its callId or event id, equal or the same object (a dict finds a
#: NaN by identity).
_NAMES_PENDING = "{x} == p_cid or {x} == p_eid or {x} is p_cid or {x} is p_eid"
#: The call waiting outside the table goes into it, filed as it would have been.
_FILE_PENDING = (
    "owner = [p_slot, p_eid, p_cid, p_mark]",
    "if p_eid is not None:",
    "    owners[p_eid] = owner",
    "owners[p_cid] = owner",
    "p_slot = None",
)


#: The builtins a generated pass tests and calls by in its loop (`header`).
LOOP_BUILTINS = ("type", "isinstance", "len", "str", "int", "float", "bool", "dict", "list", "set")
#: The names the loop reads at every event or call (`ev`, `v`, a result's `owner`...),
#: assigned before the rest: a local is numbered at its first assignment, and those past
#: the 256th are read with an `EXTENDED_ARG` first (-4% on the pass of K = 1000 tests).
LOOP_LOCALS = (
    "ev = kind = name = args = v = vals = output = inline = raw = usage = answers = None",
    "owner = slot = key = eid = cid = shadowed = j = jk = i = e = lv = None",
)
#: A namespace of more names than this is not made parameters (`header`): parameters come
#: first among a function's locals, and a local past the 256th is read with an
#: `EXTENDED_ARG` first; a pass has about as many locals of its own as names (a group's
#: counters beside its keys). Every name a parameter made the pass of K = 100 statements
#: 4% slower (its `ev` the 306th local), and with the loop's locals first (`LOOP_LOCALS`)
#: still cost K = 1000 8% (396.7 -> 428.2 M instructions: its groups' counters pushed on).
HEADER_NAMES = 100


def header(namespace: dict[str, Any]) -> list[str]:
    """The generated function's first lines: every name of its namespace and each of
    `LOOP_BUILTINS` is a keyword-only parameter whose default is itself, so the loop
    reads it as a local (`LOAD_FAST`) where it read a global or a builtin
    (`LOAD_GLOBAL`: two dict versions checked, ~20 machine instructions more each): the
    pass tests `type(v) is str`, compares tool names to `T1`, `T2`... at every event.
    The defaults are the namespace's own values, read when the function is made; the
    text holds only the names (which depend on the shape of the needs alone)."""
    names = [name for name in namespace if not name.startswith("__")]
    if len(names) > HEADER_NAMES:
        names = []  # (the builtins alone: see HEADER_NAMES)
    params = [f"{name}={name}," for name in (*names, *LOOP_BUILTINS)]
    lines = ["def index_pass(", "    events, again, is_list, *,"]
    line = "   "
    for param in params:
        if len(line) + len(param) > 87:
            lines.append(line)
            line = "   "
        line += " " + param
    return [*lines, line, "):"]


class _Generator:
    def __init__(
        self, needs: Needs, raw: bool, raw_type: type | None, by_kind: bool = False
    ) -> None:
        self.needs = needs
        self.raw = raw
        self.by_kind = by_kind
        self.reads: dict[str, dict[str, bool]] = {}
        self.names = Names()
        self.out = Out()
        self.raw_type = raw_type
        self.writer = GroupWriter(self.names, self.out)
        ns = self.names.namespace
        ns.update(
            MISSING=MISSING,
            TraceFacts=TraceFacts,
            CallRecord=CallRecord,
            new_record=object.__new__,
            RESPONSE_TYPES=RESPONSE_TYPES,
            ERROR_TYPES=ERROR_TYPES,
            tool_call_name=tool_call_name,
            holds_calls=holds_calls,
            tool_call_arguments=tool_call_arguments,
            inline_result=inline_result,
            usage_tokens=usage_tokens,
            NO_USAGE=NO_USAGE,
            price_of=price_of,
            long_priced=long_priced,
            cache_premium=cache_premium,
            body_cache=body_cache,
            body_tier=body_tier,
            tier_cost=tier_cost,
            names_cache=NAMES_CACHE.search,
            names_call=NAMES_CALL.search,
            names_either=NAMES_EITHER.search,
            gemini_call=GEMINI_CALL.search,
            spelled=NAMES_SPELLED.search,
            make_tally=_make_tally,
            overflow_start=overflow.start,
            overflow_feed=overflow.feed,
            overflow_tallies=overflow.tallies,
            first_time=_first_time,
            noting_first_time=_noting_first_time,
            counting=_counting,
            chain_from_iterable=itertools.chain.from_iterable,
            decode=_decode_raw,
            file_event_ids=_file_event_ids,
            loads=_raw_loads() if raw else None,
            raw_usage=_raw_usage,
            struct_usage=_struct_usage,
            Raw=raw_type,
            value_text=value_text,
            is_number=is_number,
            isnan=math.isnan,
            json_equal=json_equal,
            FedKeys=FedKeys,
            first_unanswered=first_unanswered,
            request_sent=request_sent,
            response_came=response_came,
            streamed_body=streamed_body,
        )

    # -- the parts

    def get(self, field: str, kinds: tuple[str, ...], missing: bool = False, ev: str = "ev") -> str:
        """The expression reading `field` of an event of one of `kinds` (`ev.get(field)`;
        absent, `MISSING` if `missing`, else `None`)."""
        if not self.by_kind:
            return f'{ev}.get("{field}", MISSING)' if missing else f'{ev}.get("{field}")'
        for kind in kinds:
            # one default per field of a kind: the struct holds one (see `IndexPass.reads`)
            if self.reads.setdefault(kind, {}).setdefault(field, missing) != missing:
                raise AssertionError(f"{kind}.{field} read both as MISSING and as None")
        return f"{ev}.{field}"

    def absent(self, field: str, kinds: tuple[str, ...]) -> str:
        """The test that an event of one of `kinds` has no `field`."""
        if not self.by_kind:
            return f'"{field}" not in ev'
        return f"{self.get(field, kinds, missing=True)} is MISSING"

    def decoded(self, var: str) -> None:
        if self.raw:
            # `_decode_raw` inlined: it runs for every argument and result a test reads
            # (~360,000 of 1,000,000 events in the "hard" mix), and its frame was a third
            # of the decoding
            self.out(f"if type({var}) is Raw:", f"    {var} = loads({var})")

    def generate(self) -> tuple[str, dict[str, Any], list[str]]:
        needs, out = self.needs, self.out
        tested = {p.tool for p in needs.probes}
        tools = sorted(
            tested | needs.tool_detail | needs.tool_results | needs.counted,
            key=lambda t: (t not in tested, t),
        )
        self.tool_slot = {t: i for i, t in enumerate(tools)}
        self.tool_names = {t: self.names.bind("T", t, f"tool {t!r}") for t in tools}
        # groups: (tool, on_result, path) → probes
        groups: dict[tuple[str, bool, str | None], list[GroupTest]] = {}
        for i, p in enumerate(needs.probes):
            groups.setdefault((p.tool, p.on_result, p.path), []).append(
                GroupTest(i, p, bulk_kind(p))
            )
        self.groups, self.overflow = self.split_overflow(list(groups.items()))
        self.groups_by: dict[tuple[str, bool], list[int]] = {}
        for g, (key, _) in enumerate(self.groups):
            self.groups_by.setdefault((key[0], key[1]), []).append(g)
        self.want_results = bool(needs.tool_results)
        self.notes_held = needs.held
        self.any_result_probes = any(p.on_result for p in needs.probes)
        self.plan_dispatch(tools)

        out("def index_pass(events, again, is_list):")  # (its names added below: `header`)
        out.indent()
        out(
            "facts = TraceFacts()",
            "counts = facts.call_counts",
            "steps = responses = tool_calls = guards = errors = others = invokes = 0",
            "tokens_in = tokens_out = unmetered = 0",
            "unknown = {}",
            "dec = {}  # test → (the call that decided it, the values it found there)",
            "# the loop's own names, first among the locals: a pass of many tests has",
            "# hundreds, and one past the 256th is read with an EXTENDED_ARG first",
            *LOOP_LOCALS,
        )
        if needs.tool_sequence:
            # (`sequence.append(x)`, not a bound `append` kept in a local: Python 3.11
            # appends to a list in place of that call, ~1/3 less a call of the tools)
            out("sequence = facts.sequence")
        if needs.tokens or needs.cost:
            out(
                "# the llm.requests not answered yet, as the reference keeps them: by id (id",
                "# → step), and the step of the first without one since the last response;",
                "# the request named last by a text id waits outside the table (its response,",
                "# next in most recordings, finds it by comparing ids: no table written),",
                "# never under an id the table holds (index.request_sent, response_came)",
                "open_named = {}",
                "open_unnamed = w_id = w_step = None",
            )
        if needs.cost:
            out(
                "cost = 0.0",
                "unpriced = None",
                "model = None",
                "prices = {}",
                "last_priced = price_in = price_out = None",
            )
        positions = sorted(needs.answers)
        if positions:
            out(f"positions = {self.names.bind('A', frozenset(positions), 'answer positions')}")
            last = self.names.bind("N", max(positions), "the last answer position read")
            out(f"last_position = {last}", "answers_at = facts.answers_at")
        tail = needs.answer_tail
        if tail > 2:
            kept = self.names.bind("N", tail, "how many of the last answers are read")
            out(f"tail = {self.names.bind('D', deque)}(maxlen={kept})")
        elif tail:
            out("before_last = last = MISSING")
        if needs.times:
            out(
                "first_at = None",
                "last_ev = None",
                "times_in_pass = not is_list and again is None",
            )
        if needs.tool_detail or needs.tool_results:
            out("calls = facts.calls")
        if self.notes_held:
            out("holds_no_call = True  # (no response seen may hold a call)")
        if self.want_results:
            # the keys `by_call_id` holds, as a set: most calls and results name no kept
            # call, and a set says so with one probe where the dict takes two (at 1,000,000
            # events its table is cold, and those probes were a twelfth of a pass)
            out(
                "by_call_id = {}",
                "linked = set()",
                "# (event id, record) of kept calls filed under their event id, in order, not",
                "# yet in by_call_id: put there (file_event_ids) only when a result names one",
                "unfiled = []",
            )
        if self.any_result_probes:
            out(
                "# call id → [tool, event id, callId, fed calls before it] of a call waiting for",
                "# its result (None: hidden by a later call with that callId); a fed call's",
                "# ids leave it, so whatever is found in it was never fed",
                "owners = {}",
                "# the call filed last, while it waits outside owners (the common case: its",
                "# result comes next, found by comparing callIds, no table written): its",
                "# tool's slot (None: no call waits), ids and mark; its ids are in no key of",
                "# owners, and it goes in when anything else needs the table",
                "p_slot = p_eid = p_cid = p_mark = None",
                "fed_keys = FedKeys()  # the ids of the calls fed, no longer in owners",
                f"result_groups = {self.result_groups_open()}  # still open",
                "fed_ids = fed_keys.keys",
            )
        for i in range(len(tools)):
            if tools[i] not in self.tallied:
                out(f"c{i} = 0  # calls of {self.tool_names[tools[i]]}")
        if self.tallied:
            out(f"tallied = [0] * {len(self.searched)}  # calls of the tools of {self.slots}")
        for g, (key, probes) in enumerate(self.groups):
            # a group of argument tests is fed every call of its tool while it is open:
            # the tool's count is its count of calls fed
            fed = None if key[1] else f"c{self.tool_slot[key[0]]}"
            self.writer.setup(g, key, self.tool_names[key[0]], probes, fed)
            if key[1]:  # the count of result groups still open, which link results
                self.writer.on_close[g] = "result_groups -= 1"
        for (tool, on_result), specs in self.overflow.items():
            # groups fed by their first key (`overflow.py`): by key, all, how many open,
            # and (results) how many results were fed to them
            v = _overflow_names(self.tool_slot[tool], on_result)
            side = "results" if on_result else "arguments"
            note = f"{len(specs)} groups of {tool!r}'s {side} fed by key"
            out(f"{v}, {v}all = overflow_start({self.names.bind('O', tuple(specs), note)})")
            out(f"{v}n = len({v}all)", *([f"{v}f = 0"] if on_result else []))
        out("ev = None")
        if self.by_kind:  # (`kind_is`)
            out(*(f"{_kind_local(k)} = events.classes[{k!r}]" for k in KINDS))
        # a list's events as they are, a stream's batches (lists) counted as they pass
        # (`counting`): the results' count is what the other kinds leave (`epilogue`)
        out(
            "if is_list:",
            "    each = events",
            "else:",
            "    seen = [0]",
            "    each = chain_from_iterable(counting(events, seen))",
        )
        if needs.times and not self.by_kind:  # (a `by_kind` pass always has `again`)
            out(
                "if times_in_pass:  # its last event is the loop's",
                "    first_times = []",
                "    each = noting_first_time(each, first_times)",
            )
        out("for ev in each:")
        out.indent()
        out("kind = type(ev)" if self.by_kind else 'kind = ev.get("type")')
        self.tool_call_branch(tools)
        self.result_branch()
        self.response_branches()
        out.dedent()
        self.epilogue()
        out.dedent()
        out.lines[: out.lines.index("def index_pass(events, again, is_list):") + 1] = header(
            self.names.namespace
        )
        return "\n".join(out.lines) + "\n", self.names.namespace, self.names.notes

    # -- groups of tests on one path of one tool

    def split_overflow(
        self, groups: list[tuple[tuple[str, bool, str | None], list[GroupTest]]]
    ) -> tuple[
        list[tuple[tuple[str, bool, str | None], list[GroupTest]]],
        dict[tuple[str, bool], list[Any]],
    ]:
        """The groups written out and, past `overflow.GROUPS_WRITTEN`, the last ones that
        can be fed by key (`overflow.py`), as specs by tool and side (results or not):
        groups whose path starts with a plain key, of any-call tests."""
        past = len(groups) - overflow.GROUPS_WRITTEN
        if past <= 0:
            return groups, {}
        moved: dict[int, str] = {}  # a group fed by key → its first key
        for g in range(len(groups) - 1, -1, -1):
            if len(moved) == past:
                break
            (_, _, path), probes = groups[g]
            first = _first_key(path)
            if first is not None and not any(p.probe.every for p in probes):
                moved[g] = first
        specs: dict[tuple[str, bool], list[Any]] = {}
        for g in sorted(moved):
            (tool, on_result, _), probes = groups[g]
            plain = probes[0].probe.key
            if any(p.probe.key != plain for p in probes):
                plain = None
            tests = tuple((p.index, p.probe.test, p.probe) for p in probes)
            specs.setdefault((tool, on_result), []).append(
                (moved[g], plain, probes[0].probe.finder, tests)
            )
        kept = [group for g, group in enumerate(groups) if g not in moved]
        return kept, specs

    def result_groups_open(self) -> int:
        """How many groups of result tests a run starts with, written or fed by key."""
        written = sum(1 for k, _ in self.groups if k[1])
        return written + sum(len(v) for (_, on_result), v in self.overflow.items() if on_result)

    def groups_of(self, tool: str, on_result: bool) -> list[int]:
        """The groups of `tool`'s arguments (or results), in order (looked up: a case
        naming thousands of tools asks it of each)."""
        return self.groups_by.get((tool, on_result), [])

    def open_expr(self, groups: list[int]) -> str:
        return " or ".join(f"g{g}_open" for g in groups) or "False"

    # -- the event kinds

    def tool_call_branch(self, tools: list[str]) -> None:
        """The branch of `tool.call` events, first in the chain (the most common kind);
        an `mcp.call` has a copy of its own near the end (`mcp_call_branch`), so a
        `tool.call` never asks whether it is one."""
        self.tools = tools
        self.out(f"if {self.kind_is(TOOL_CALL)}:")
        self.call_body(mcp=False)

    def mcp_call_branch(self) -> None:
        """The same for `mcp.call` events: name and arguments read through the MCP
        helpers, a result read from the call itself, no callId filed or shadowed (the
        reference files none)."""
        self.out('elif kind == "mcp.call":')
        self.call_body(mcp=True)

    def call_body(self, *, mcp: bool) -> None:
        out, needs, tools = self.out, self.needs, self.tools
        out.indent()
        if not needs.tool_sequence:  # (else the sequence's length: `epilogue`)
            out("tool_calls += 1")
        if (self.any_result_probes or self.want_results) and not mcp:
            # a callId names the latest call that carries it, whatever its tool (as in
            # the reference): a call no result is read for hides an earlier one
            # (The call waiting outside the table is asked only when there is a callId;
            # the tables with no test of `None`, which none of them holds, and only when
            # they hold an id, so a callId that cannot be hashed is an error only where
            # the reference's is.) With results kept for `cites`, read once, here: the
            # blocks below file the call under it. With result tests alone, read only
            # when a call waits to be hidden (most calls come after their result: none
            # does); a call filed reads it where it is filed (`cid`)
            hide = self.any_result_probes and not self.want_results
            if hide:
                out("if p_slot is not None or owners:")
                out.indent()
            out(f"shadowed = {self.get('callId', _CALL)}")
            if self.any_result_probes:
                out(
                    "if p_slot is not None and shadowed is not None and ("
                    + _NAMES_PENDING.format(x="shadowed")
                    + "):",
                    *("    " + line for line in _FILE_PENDING),
                )
            if self.want_results:
                out("if linked and shadowed in linked:", "    by_call_id[shadowed] = None")
            if self.any_result_probes:
                out("if owners and shadowed in owners:", "    owners[shadowed] = None")
            if hide:
                out.dedent()
        if not needs.reads_tool_names():  # (the tools above, or the sequence)
            out.dedent()
            return
        out(f"name = {self.get('name', _CALL)}")
        if mcp:
            out("if name is None:", "    name = tool_call_name(ev)")
        # (only the tools the assertions name are counted and looked at: a name that is
        # not text equals none of them, so only a name none of them equals is asked
        # whether it is text; one that is not (a list, missing, "") is the run's error, as
        # in the reference, which names the call: `index.reads_tool_names`)
        for i, tool in enumerate(self.chained):
            out(f"{'if' if i == 0 else 'elif'} name == {self.tool_names[tool]}:")
            out.indent()
            self.tool_leaf(tool, mcp=mcp)
            out.dedent()
        if self.searched:
            self.tool_search(mcp=mcp)
        out(
            f"{'elif' if tools else 'if'} not isinstance(name, str) or not name:",
            f"    {_UNNAMED}",
        )
        if needs.tool_sequence:
            out("else:", "    sequence.append(name)")
        out.dedent()

    def plan_dispatch(self, tools: list[str]) -> None:
        """How a call finds its tool's block. Up to `CHAIN_TOOLS` tools: a chain of `==`
        in `tools`' order (the tools tests read first). More: the first `CHAIN_TOOLS` of
        those that have a block in the chain, the rest found by their slot (`tool_search`):
        the other tools with a block are the leaves of a binary search of the slots, the
        tools that are only counted are counted in a list by slot."""
        if len(tools) <= CHAIN_TOOLS:
            self.chained, self.leaves, self.tallied = tools, [], {}
        else:
            block = {t: self.has_block(t) for t in tools}
            blocks = [t for t in tools if block[t]]
            self.chained, self.leaves = blocks[:CHAIN_TOOLS], blocks[CHAIN_TOOLS:]
            # (a dict: ordered, and asked of every tool below)
            self.tallied = dict.fromkeys(t for t in tools if not block[t])
        self.searched = [*self.leaves, *self.tallied]  # in slot order
        if self.searched:
            self.slots = self.names.bind(
                "D", {t: i for i, t in enumerate(self.searched)}, "the slot of each tool"
            )
            self.slot_names = self.names.bind("D", tuple(self.searched), "each slot's tool")

    def has_block(self, tool: str) -> bool:
        """Whether a call of `tool` does more than count (tests, records, linking)."""
        needs = self.needs
        return bool(
            self.groups_of(tool, False)
            or (tool, False) in self.overflow
            or self.groups_of(tool, True)
            or (tool, True) in self.overflow
            or tool in needs.tool_detail
            or tool in needs.tool_results
        )

    def feed_results_by_key(self, slot: int, target: str) -> None:
        """A result (`target`) of the tool in `slot` to its result groups fed by key:
        counted as fed while any is open, and the groups it closes leave the count of
        result groups still open (which keeps results linked to calls)."""
        v = _overflow_names(slot, True)
        self.out(
            f"if {v}n:",
            f"    {v}f += 1",
            f"    if isinstance({target}, dict):",
            f"        closed = overflow_feed({target}, {v}, {v}f, dec)",
            f"        {v}n -= closed",
            "        result_groups -= closed",
        )

    def tool_leaf(self, tool: str, *, mcp: bool) -> None:
        """What a call of `tool` does: its count, its place in the sequence, its tests."""
        if self.needs.tool_sequence:
            # the suite's own text, equal to the name: the `tools` tests that read the
            # sequence afterwards hash one text per tool, not one per call
            self.out(f"sequence.append({self.tool_names[tool]})")
        self.out(f"c{self.tool_slot[tool]} += 1")
        self.tool_block(tool, mcp=mcp)

    def tool_search(self, *, mcp: bool) -> None:
        """The tools past the chain, found by their slot: the name looked up once (as the
        reference looks it up: only text), then a binary search of the leaves' slots, or
        the count of a tool that is only counted."""
        out, leaves = self.out, self.leaves
        lookup = f"{self.slots}.get(name) if isinstance(name, str) else None"
        out(f"{'elif' if self.chained else 'if'} (slot := {lookup}) is not None:")
        out.indent()
        tally = ["tallied[slot] += 1"]
        if self.needs.tool_sequence:
            tally.append(f"sequence.append({self.slot_names}[slot])")
        keys = list(range(len(leaves)))
        if leaves and self.tallied:
            with out.nested(f"if slot < {len(leaves)}:"):
                self.by_slot(keys, lambda k: self.tool_leaf(leaves[k], mcp=mcp))
            out("else:", *("    " + line for line in tally))
        elif leaves:
            self.by_slot(keys, lambda k: self.tool_leaf(leaves[k], mcp=mcp))
        else:
            out(*tally)
        out.dedent()

    def by_slot(self, keys: list[int], leaf: Callable[[int], None]) -> None:
        """A binary search of `slot` among `keys` (increasing; `slot` is one of them), each
        leaf written by `leaf(key)`: log2 of the keys compared, not one per key."""
        out = self.out

        def split(a: int, b: int) -> None:
            if b - a == 1:
                leaf(keys[a])
                return
            mid = (a + b) // 2
            with out.nested(f"if slot < {keys[mid]}:" if b - a > 2 else f"if slot == {keys[a]}:"):
                split(a, mid)
            with out.nested("else:"):
                split(mid, b)

        split(0, len(keys))

    def tool_block(self, tool: str, *, mcp: bool) -> None:
        out, needs = self.out, self.needs
        if not self.has_block(tool):
            return
        arg_groups = self.groups_of(tool, False)
        result_groups = self.groups_of(tool, True)
        keep = tool in needs.tool_detail or tool in needs.tool_results
        slot = self.tool_slot[tool]
        fed_by_key = (tool, False) in self.overflow
        results_by_key = (tool, True) in self.overflow
        by_key, results_key = _overflow_names(slot, False), _overflow_names(slot, True)
        if arg_groups or fed_by_key:
            opened = [self.open_expr(arg_groups)] if arg_groups else []
            out(f"if {' or '.join([*opened, *([f'{by_key}n'] if fed_by_key else [])])}:")
            out.indent()
            out(f"args = {self.get('arguments', _CALL, missing=True)}")
            if mcp:
                out("if args is MISSING:", "    args = tool_call_arguments(ev)")
            self.decoded("args")
            for g in arg_groups:
                self.writer.feed(g, "args", open_here=len(arg_groups) == 1 and not fed_by_key)
            if fed_by_key:
                out(
                    f"if {by_key}n and isinstance(args, dict):",
                    f"    {by_key}n -= overflow_feed(args, {by_key}, c{slot}, dec)",
                )
            out.dedent()
        if result_groups or results_by_key:
            opened = [self.open_expr(result_groups)] if result_groups else []
            out(f"if {' or '.join([*opened, *([f'{results_key}n'] if results_by_key else [])])}:")
            out.indent()
            if mcp:
                out("inline = inline_result(ev)")
                self.decoded("inline")
                out("if inline is not MISSING:")
                out.indent()
                for g in result_groups:
                    self.writer.feed(g, "inline")
                if results_by_key:
                    self.feed_results_by_key(slot, "inline")
                out.dedent()
            else:
                # (its callId: read above with results kept for `cites`, else here)
                cid = "shadowed" if self.want_results else self.get("callId", _CALL)
                out(
                    f"eid = {self.get('id', _CALL)}",
                    f"cid = {cid}",
                    "if p_slot is not None:  # (one call waits outside the table at most)",
                )
                out(
                    *("    " + line for line in _FILE_PENDING),
                    "if eid is not None and eid in owners:  # (filed under its event id if free)",
                    "    eid = None",
                    "if cid is None or cid in owners:",
                    f"    owner = [{slot}, eid, cid, len(fed_ids)]",
                    "    if eid is not None:",
                    "        owners[eid] = owner",
                    "    if cid is not None:",
                    "        owners[cid] = owner",
                    "else:  # (no key of owners: it waits outside)",
                    f"    p_slot = {slot}",
                    "    p_eid = eid",
                    "    p_cid = cid",
                    "    p_mark = len(fed_ids)",
                )
            out.dedent()
        if keep:
            # a kept call's arguments are never read (`cites` reads its result): not decoded
            # built without `CallRecord.__init__`: calling a class with a Python
            # `__init__` enters the interpreter anew for every call kept (~3% of the
            # "hard" mix's pass, ~37,000 records at 1,000,000 events); the same slots
            out(
                "record = new_record(CallRecord)",
                "record.name = name",
                "record.arguments = record.result = MISSING",
                "record.is_error = record.answered = False",
            )
            if mcp:
                out("found = inline_result(ev)")
                self.decoded("found")
                out("record.result = found", f"record.is_error = bool({self.get('isError', _MCP)})")
            elif self.want_results:
                out(
                    f"eid = {self.get('id', _CALL)}",
                    "if eid is not None and eid not in linked:  # (setdefault)",
                    "    linked.add(eid)",
                    "    unfiled.append((eid, record))",
                    "cid = shadowed  # (its callId, read above)",
                    "if cid is not None:",
                    "    by_call_id[cid] = record",
                    "    linked.add(cid)",
                )
            out("calls.setdefault(name, []).append(record)")

    def result_branch(self) -> None:
        out = self.out
        out(f"elif {self.kind_is(TOOL_RESULT)}:")
        out.indent()
        if not (self.want_results or self.any_result_probes):
            out("pass  # (counted after the loop: what the other kinds leave)")
        if self.want_results:
            out(
                f"key = {self.get('callId', _RESULT)}",
                "if key in linked:",
                "    try:",
                "        record_for = by_call_id[key]",
                "    except KeyError:  # a kept call's event id, not filed yet",
                "        record_for = file_event_ids(by_call_id, unfiled, key)",
                "    if record_for is not None and not record_for.answered:",
            )
            out.indent()
            out.indent()
            out("record_for.answered = True  # (its first result: a later one is not)")
            out(f"found = {self.get('output', _RESULT, missing=True)}")
            self.decoded("found")
            out(
                "record_for.result = found",
                f"record_for.is_error = bool({self.get('isError', _RESULT)})",
            )
            out.dedent()
            out.dedent()
        if self.any_result_probes:
            out("if p_slot is not None or owners:")
            out.indent()
            if not self.want_results:  # (else read above)
                out(f"key = {self.get('callId', _RESULT)}")
            out(
                "if p_slot is not None and key == p_cid:  # the call waiting outside, by callId",
                "    slot = p_slot",
                "    p_slot = None",
                "    fed_ids += key, p_eid  # (its ids leave the table; FedKeys skips a None)",
                "else:",
            )
            out.indent()
            out(
                f"if p_slot is not None and ({_NAMES_PENDING.format(x='key')}):",
                *("    " + line for line in _FILE_PENDING),
                "slot = None",
                "owner = owners.get(key)",
                "if owner is not None:",
                "    # found by its event id: not if that id had named a fed call before (the",
                "    # reference keeps it filed under that call: FedKeys); an id is the same",
                "    # as a dict finds it (equal, or the same object: a NaN)",
                "    by_eid = key is owner[1] or key == owner[1]",
                "    if (",
                "        not by_eid or key is owner[2] or key == owner[2]",
                "        or not fed_keys.filed_before(key, owner[3])",
                "    ):",
                "        del owners[key]  # one result per call: its ids leave the table",
                "        fed_ids.append(key)",
                "        other = owner[2] if by_eid else owner[1]",
                "        if other is not None and owners.get(other) is owner:",
                "            del owners[other]",
                "            fed_ids.append(other)",
                "        slot = owner[0]",
            )
            out.dedent()
            out("if slot is not None:")
            out.indent()
            out(f"output = {self.get('output', _RESULT, missing=True)}")
            self.decoded("output")
            # a binary search of the slots the calls were filed under (only those of
            # tools with result tests are filed: `slot` is one of them)
            by_slot = {
                self.tool_slot[t]: t
                for t in self.tool_slot
                if self.groups_of(t, True) or (t, True) in self.overflow
            }

            def feed(key: int) -> None:
                for g in self.groups_of(by_slot[key], True):
                    self.writer.feed(g, "output")
                if (by_slot[key], True) in self.overflow:
                    self.feed_results_by_key(key, "output")

            self.by_slot(sorted(by_slot), feed)
            out(
                "if not result_groups:  # nothing reads results",
                "    owners.clear()",
                "    p_slot = None",
            )
            out.dedent()
            out.dedent()
        out.dedent()

    def response_branches(self) -> None:
        out, needs = self.out, self.needs
        out(f"elif {self.kind_is(LLM_REQUEST)}:", "    steps += 1")
        if needs.cost:
            out(f"    model = {self.get('model', _REQUEST)}")
        if needs.tokens or needs.cost:
            out(
                f"    request_id = {self.get('id', _REQUEST)}",
                "    if w_id is None and type(request_id) is str and not open_named:",
                "        w_id = request_id",
                "        w_step = steps",
                "    else:",
                "        w_id, w_step, open_unnamed = request_sent(",
                "            open_named, w_id, w_step, open_unnamed, request_id, steps",
                "        )",
            )
        if self.by_kind:  # (a struct of a kind is an `llm.response`)
            self.response_branch(RESPONSE_TYPES, invoke=False)
        else:
            # an `llm.response` and an `llm.invoke` (a request and its response in one
            # event, also a step) each in a branch of its own, the same lines but for the
            # step: no response asks which it is (one `==` where `in RESPONSE_TYPES` was:
            # no kind asks more than it did)
            self.response_branch(LLM_RESPONSE, invoke=False)
            self.response_branch(LLM_INVOKE, invoke=True)
        self.other_branches()

    def response_branch(self, kinds: str | frozenset[str], *, invoke: bool) -> None:
        """The branch of the responses of `kinds`: `invoke`, those of `llm.invoke`."""
        out, needs = self.out, self.needs
        out(f"elif {self.kind_is(kinds)}:")
        out.indent()
        out("responses += 1")
        if invoke:
            out(*self.invoke_step())
        positions, tail = bool(needs.answers), needs.answer_tail
        # (the output read once, here, where the answers keep it, or where both the note
        # of held calls and the cache tokens read it: not once for each)
        counted = self.reads_tokens
        has_raw = bool(positions or tail) or (self.notes_held and counted)
        if has_raw:
            out(f"raw = {self.get('output', _RESPONSE)}")
        if positions or tail:
            out(*self.streamed_output())
        # (an undecoded answer kept past its chunk is copied: it would keep the chunk)
        copied = "raw.copy() if type(raw) is Raw else raw" if self.raw else "raw"
        if positions:
            out(
                "if responses <= last_position and responses in positions:",
                f"    answers_at[responses] = {copied}",
            )
        if tail > 2:  # (the deque keeps them: no two variables besides)
            out(f"tail.append({copied})")
        elif tail:
            out("before_last = last", "last = raw")
        # (an undecoded output asked both whether it holds a call and whether it holds
        # cache counts is looked through once for either: `NAMES_EITHER`)
        if self.either:
            out(
                "named = type(raw) is Raw and ("
                "names_either(raw) or gemini_call(raw) or spelled(raw))"
            )
        if self.notes_held:
            if not invoke:
                self.held_note(has_raw)
            elif self.bare:
                # (an invoke's output is not asked, so `body_cache` is not told that it
                # is a chat completion of one key)
                out("bare = False")
        if not counted:
            out.dedent()
            return
        out(
            "# it answers the request its requestId names; one without, all before it",
            f"answers = {self.get('requestId', _RESPONSE)}",
            "# (a text equal to the waiting id; not a `str` subclass: the reference takes",
            "# only a text or a whole number as an id, by its type)",
            "if answers == w_id and type(answers) is str:",
            "    w_id = None",
            "else:",
            "    w_id = response_came(open_named, w_id, answers)",
            "open_unnamed = None",
        )
        usage_call = self.usage_call()
        if self.by_kind:  # (the usage is a `decode.usage_struct`, or None)
            out(
                f"usage = {self.get('usage', _RESPONSE)}",
                "# the common case inline (two counts that are ints, neither negative, no",
                "# verydia tokensIn or tokensOut, which win); anything else through the",
                "# reference's reading, which raises BadUsage where it must",
                "if not (",
                "    usage is not None",
                "    and type(used_in := usage.promptTokens) is int",
                "    and type(used_out := usage.completionTokens) is int",
                "    and used_in >= 0 <= used_out",
                f"    and {self.absent('tokensIn', _RESPONSE)}",
                f"    and {self.absent('tokensOut', _RESPONSE)}",
                "):",
                *("    " + line for line in _slow_usage(usage_call)),
            )
        else:
            self.dict_usage(usage_call)
        self.body_cache(has_raw)
        out("tokens_in += used_in", "tokens_out += used_out")
        if needs.cost:
            standard = (
                "    # the reference's (used_in * price[0] + used_out * price[1]) / 1_000_000,",
                "    # the same double: a product is the same either way round, and 1e6 is the",
                "    # int's exact double; a float first takes float's own multiply. The model",
                "    # priced last keeps its price in two variables: no lookup while it lasts",
                "    if priced_as == last_priced and type(priced_as) is str:",
                "        cost += (price_in * used_in + price_out * used_out) / 1e6",
                "    elif type(priced_as) is str and (price := prices.get(priced_as)) is not None:",
                "        last_priced = priced_as",
                "        price_in, price_out = price",
                "        cost += (price_in * used_in + price_out * used_out) / 1e6",
                "    else:",
                "        if type(priced_as) is str and priced_as in prices:",
                "            price = prices[priced_as]  # (None: no price)",
                "        else:",
                "            # a model id that is not text has no price; a model whose long",
                "            # prompts cost more is priced again at each response",
                "            price = price_of(priced_as, used_in)",
                "            if type(priced_as) is str and not long_priced(priced_as):",
                "                prices[priced_as] = price",
                "        if price is None:",
                f'            unpriced = {self.get("model", _RESPONSE)} or model or "(no model)"',
                "        else:",
                "            cost += (used_in * price[0] + used_out * price[1]) / 1_000_000",
                "    # prompt-cache tokens (Anthropic's multiples of the input price, OpenAI's",
                "    # cached-input price): rare, so priced again here, as the reference does",
                "    if cache is not None and (price := price_of(priced_as, used_in)) is not None:",
                "        premium = cache_premium(price[0], cache, priced_as, used_in)",
                "        if premium is None:",
                "            unpriced = priced_as",
                "        else:",
                "            cost += premium",
            )
            out(
                "if used_in or used_out:",
                f'    priced_as = {self.get("model", _RESPONSE)} or model or ""',
                *self.billed_tier(),
                "    else:  # (the standard tier)",
                *("    " + line for line in standard),
            )
        out.dedent()

    def billed_tier(self) -> tuple[str, ...]:
        """The lines that price a response billed at another service tier than the
        standard one as the reference does (`tier_cost`): its reader's `serviceTier`, else
        its body's (`body_tier`: an undecoded body's was read where `NAMES_CACHE` found
        its name; a decoded one's is told by `in` tests and a comparison, most bodies
        saying "default" or none, and a body of one key, none); the standard pricing
        follows in an `else`. One test in the common case, a dict event's (an `in`, not a
        `.get()` call: a `.get()` and its own test were ~2/3 of this block's ~400
        instructions a response in the pass of K = 100 statements)."""
        if self.by_kind:
            said = f"(tier := {self.get('serviceTier', _RESPONSE)}) is not None"
        else:
            said = '"serviceTier" in ev and (tier := ev["serviceTier"]) is not None'
        body: tuple[str, ...] = ("(tier := billed_at) is not None",)
        if not self.raw:
            skip = "not bare and " if self.bare else ""  # (a body of one key: no tier)
            body = (
                f"{skip}type(raw) is dict and (",
                '    ("service_tier" in raw and raw["service_tier"] != "default")',
                '    or ("usage" in raw and type(bu := raw["usage"]) is dict',
                '        and "service_tier" in bu and bu["service_tier"] != "standard")',
                ") and (tier := body_tier(raw)) is not None",
            )
        model = self.get("model", _RESPONSE)
        return (
            "    # a response billed at another service tier: priced as the reference",
            "    # prices it (`tier_cost`), or unpriced; never at the standard price",
            f"    if {said} or (",
            *(f"        {line}" for line in body),
            "    ):",
            "        billed = tier_cost(priced_as, tier, used_in, used_out, cache)",
            "        if type(billed) is float:",
            "            cost += billed",
            "        elif billed is None:  # (the model has no price at all)",
            f"            unpriced = {model} or model or '(no model)'",
            "        else:",
            "            unpriced = billed",
        )

    def streamed_output(self) -> list[str]:
        """An answer's output as the reference reads it: a stream traceplay kept only in
        `rawBody` read from there (`rawbody.streamed_body`; one test of a response without
        a `rawBody`, which the typed decoder gives as undecoded bytes)."""
        body = self.get("rawBody", _RESPONSE)
        # (a dict's `in`, not its `.get`: the test most responses pay; a struct's field)
        held = f"{body} is not None" if self.by_kind else '"rawBody" in ev'
        return [
            f"if {held}:  # (a stream kept only there: `rawbody`)",
            f"    raw = streamed_body(raw, {body})",
        ]

    @property
    def either(self) -> bool:
        """Whether a response's undecoded output is asked both whether it holds a call and
        whether it holds cache counts: then it is looked through once for either."""
        return self.raw and self.notes_held and self.reads_tokens

    @property
    def bare(self) -> bool:
        """Whether the held-call note of a decoded response tells `body_cache` that the
        body is a chat completion of one key (`choices`), which holds no cache counts:
        their test is then skipped for it (a fifth of a response's tests in "mixed")."""
        return not (self.raw or self.by_kind) and self.notes_held and self.reads_tokens

    @property
    def reads_tokens(self) -> bool:
        """Whether a response's counts are read (`tokens` or `cost`)."""
        return bool(self.needs.tokens or self.needs.cost)

    def held_note(self, has_raw: bool) -> None:
        """Whether a response holds a call no call event records (if none does,
        `RunFacts.held_calls` need not read the events again): asked of each response
        until one does. An undecoded output is decoded to ask only where it may name a
        call (`NAMES_CALL`, `GEMINI_CALL`); a decoded chat completion of one key whose
        message has no `tool_calls` is told inline by subscripts (cheaper than `.get`s;
        a shape they do not fit raises, zero-cost until it does), an answer's text holds
        none, and any other output is asked of `holds_calls` (an `llm.invoke`'s is not asked:
        `response_branch`)."""
        bare = self.bare  # (`bare`: a chat completion of one key, told by the note)
        lines = ["if holds_no_call:"]
        if not has_raw:
            lines.append(f"    raw = {self.get('output', _RESPONSE)}")
        if self.raw:
            lines += [
                "    if type(raw) is Raw:",
                f"        if {'named and ' if self.either else ''}"
                "(names_call(raw) or gemini_call(raw) or spelled(raw))"
                " and holds_calls(loads(raw)):",
                "            holds_no_call = False",
                "    elif holds_calls(raw):",
                "        holds_no_call = False",
            ]
        else:
            lines += [
                "    # a body of one key (`choices`: no `content` or `output` items) whose",
                "    # message is an object without `tool_calls` holds none: an exact type,",
                "    # three subscripts and a length (one type test, not two: -20%); an",
                "    # answer's text holds none either, and is not subscripted (it would raise",
                "    # at every response of an OTel span's or a text-only recording)",
                "    if type(raw) is dict:",
                "        try:",
                '            hc = raw["choices"][0]["message"]',
                "        except (LookupError, TypeError):",
                "            hc = None",
            ]
            one_key = 'len(raw) == 1 and type(hc) is dict and "tool_calls" not in hc'
            if bare:  # (its only key is `choices`: no `usage` for `body_cache` to test)
                lines += [
                    f"        if {one_key}:",
                    "            bare = True",
                    "        else:",
                    "            bare = False",
                    "            if holds_calls(raw):",
                    "                holds_no_call = False",
                    "    else:",
                    "        bare = False",
                    "        if type(raw) is not str and holds_calls(raw):",
                    "            holds_no_call = False",
                    "else:",
                    "    bare = False",
                ]
            else:
                lines += [
                    f"        if not ({one_key}) and holds_calls(raw):",
                    "            holds_no_call = False",
                    "    elif type(raw) is not str and holds_calls(raw):",
                    "        holds_no_call = False",
                ]
        self.out(*lines)

    def body_cache(self, has_raw: bool) -> None:
        """The prompt-cache tokens a provider body kept as the output counts (traceplay's
        Anthropic bodies), added to the input as the reference adds them (`body_cache`):
        looked for by the names of their counts, in the decoded output, or in the
        undecoded bytes, which are decoded only where those names are."""
        if not has_raw:
            self.out(f"raw = {self.get('output', _RESPONSE)}")
        if self.raw:
            self.out(
                f"if {'named' if self.either else 'type(raw) is Raw'}"
                " and (names_cache(raw) or spelled(raw)):",
                *(
                    # (the tier a body billed at, where it may say one: `NAMES_CACHE`)
                    ("    body = decode(raw)", "    billed_at = body_tier(body)")
                    if self.needs.cost
                    else ("    body = decode(raw)",)
                ),
                "    used_in, cache = body_cache(body, used_in)",
            )
        else:
            skip = "not bare and " if self.bare else ""
            self.out(
                "# (most outputs are text, or a body without usage: two tests, no call;",
                "# none for a body the held-call note found of one key)",
                f'if {skip}type(raw) is dict and "usage" in raw and (',
                '    type(cached := raw["usage"]) is dict',
                f'    and ("{CACHE_READ}" in cached or "{CACHE_WRITE}" in cached',
                f'         or "{CACHE_SPLIT}" in cached',
                "         # OpenAI's details (a chat completion's, else a Responses object's):",
                "         # read where they are not an object, or count a cached read that is",
                "         # not a plain 0 (every recent body counts 0)",
                f'         or ((od := cached.get("{CHAT_CACHED[0]}",'
                f' cached.get("{RESPONSES_CACHED[0]}"))) is not None',
                "             and (type(od) is not dict",
                '                  or ((oc := od.get("cached_tokens")) is not None',
                "                      and not (type(oc) is int and oc == 0)))))",
                "):",
                "    used_in, cache = body_cache(raw, used_in)",
            )
        if self.needs.cost:  # (what `cost` prices beyond the input price)
            # the event's own counts where the body holds none: read here, in the branch
            # each response takes, not tested again where the response is priced
            cache_tokens = self.get("cacheTokens", _RESPONSE)
            self.out(
                "    if cache is None:",
                f"        cache = {cache_tokens}",
                "else:",
                f"    cache = {cache_tokens}",
                *(("    billed_at = None",) if self.raw else ()),
            )

    def dict_usage(self, usage_call: str) -> None:
        """A response's counts from its `usage` dict (read as `usage_call` when the
        common case is not there)."""
        self.out(
            f"usage = {self.get('usage', _RESPONSE)}",
            "# the common case inline; anything else (verydia's tokensIn, which wins, a",
            "# missing or negative count) through the reference's reading, which raises",
            "# BadUsage where it must. Subscripts in a try, not .get(), and the signs by",
            "# two comparisons, not an int made by `|`: a tenth less of this block's work",
            f"if type(usage) is dict and {self.absent('tokensIn', _RESPONSE)} and "
            f"{self.absent('tokensOut', _RESPONSE)}:",
            "    try:",
            '        used_in = usage["promptTokens"]',
            '        used_out = usage["completionTokens"]',
            "    except KeyError:",
            *("        " + line for line in _slow_usage(usage_call)),
            "    else:",
            "        if not (",
            "            type(used_in) is int and type(used_out) is int",
            "            and used_in >= 0 <= used_out",
            "        ):",
            *("            " + line for line in _slow_usage(usage_call)),
            "else:",
            *("    " + line for line in _slow_usage(usage_call)),
        )

    def usage_call(self) -> str:
        if self.by_kind:
            self.get("output", _RESPONSE)  # read there, as the typed decoder gives it
            return "struct_usage(ev, Raw)"
        return "raw_usage(ev, Raw)" if self.raw else "usage_tokens(ev)"

    def other_branches(self) -> None:
        # (a user's messages first: in most recordings there are more of them than of
        # guards and errors, and each kind asked before them is a test of each one)
        self.out(
            f"elif {self.kind_is(USER_MESSAGE)}:",
            "    others += 1",
            f"elif {self.kind_is(POLICY_EVALUATE)}:",
            "    guards += 1",
            f"elif {self.kind_is(ERROR_TYPES)}:",
            "    errors += 1",
        )
        self.mcp_call_branch()
        self.out(
            "else:  # not read: counted, so a trace in which nothing is recognised is an error",
            *(["    kind = ev.type"] if self.by_kind else []),
            "    unknown[kind] = unknown.get(kind, 0) + 1",
        )

    def invoke_step(self) -> tuple[str, ...]:
        """An `llm.invoke`'s lines: counted apart (`epilogue` takes it out of the
        requests' and responses' counts), and a step, now if the loop reads the steps'
        count (a pass that reads tokens prices a response by its request's step), else
        after the loop (`epilogue`)."""
        return ("invokes += 1", *(["steps += 1"] if self.reads_tokens else []))

    def kind_is(self, kinds: str | frozenset[str]) -> str:
        """The test that the event is of `kinds` (a kind, or `RESPONSE_TYPES` or
        `ERROR_TYPES`): its `kind`, a text, compared; in a `by_kind` pass, `kind` is its
        struct's class, one of `KindEvents.classes` (`type(ev)` and identity: ~110
        instructions an event less than reading the kind from the struct), and a kind
        without a struct is none of its events."""
        if not self.by_kind:
            if isinstance(kinds, str):
                return f"kind == {kinds!r}"
            return f"kind in {'RESPONSE_TYPES' if kinds is RESPONSE_TYPES else 'ERROR_TYPES'}"
        named = [kinds] if isinstance(kinds, str) else sorted(kinds)
        return " or ".join(f"kind is {_kind_local(k)}" for k in named if k in KINDS)

    def epilogue(self) -> None:
        out, needs = self.out, self.needs
        if not self.reads_tokens:  # (`invoke_step`)
            out("steps += invokes")
        if needs.tool_sequence:
            # (a pass that keeps the sequence puts every call in it, or gives the run to
            # the reference: its length is the count, not a sum at every call)
            out("tool_calls = len(sequence)")
        out(
            "facts.steps = steps",
            "facts.responses = responses",
            "facts.tool_calls = tool_calls",
            "facts.guards = guards",
            "facts.errors = errors",
            # every event is of one branch of the loop, each counted but
            # the results', which is what the others leave (no `+= 1` at each result:
            # past 256 each makes an int; results are as many as calls in recordings,
            # and the loop never reads their count); an llm.invoke is both a step and a
            # response, counted twice there
            "facts.results = (len(events) if is_list else seen[0]) - (",
            "    tool_calls + steps + responses - invokes + guards + errors + others",
            "    + sum(unknown.values())",
            ")",
            "facts.others = others",
            "# (not a comprehension, which would make `str` a cell in the whole function)",
            "facts.unknown = dict(zip(map(str, unknown), unknown.values()))",
            "facts.input_tokens = tokens_in",
            "facts.unmetered = unmetered",
            "facts.output_tokens = tokens_out",
        )
        if self.notes_held:
            out("facts.holds_no_call = holds_no_call")
        for i, tool in enumerate(self.tool_slot):
            if tool not in self.tallied:
                out(f"if c{i}:", f"    counts[{self.tool_names[tool]}] = c{i}")
        if self.tallied:
            out(
                f"for tool, n in zip({self.slot_names}, tallied):",
                "    if n:",
                "        counts[tool] = n",
            )
        if needs.tokens or needs.cost:
            out(
                "if w_id is not None:",
                "    open_named[w_id] = w_step",
                "facts.unanswered = first_unanswered(open_named, open_unnamed)",
            )
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
            # (no comprehensions here: one would make each name it reads, `MISSING` or
            # `type`, a cell in the whole function, read less cheaply in the loop)
            if tail > 2:
                out("kept = list(tail)")
            else:
                out("kept = []")
                if tail == 2:
                    out("if before_last is not MISSING:", "    kept.append(before_last)")
                out("if last is not MISSING:", "    kept.append(last)")
            if self.raw:
                out(
                    "for i, a in enumerate(kept):",
                    "    if type(a) is Raw:",
                    "        kept[i] = decode(a)",
                )
            out("facts.answers_tail = kept")
        if needs.times:
            if not self.by_kind:
                out(
                    "if times_in_pass:",
                    "    last_ev = ev",
                    "    first_at = first_times[0] if first_times else None",
                )
            out(
                "last_at = None",
                "if again is not None:",
                "    last_ev = ev",
                "    first_at = first_time(again())",
                "if (times_in_pass or again is not None) and last_ev is not None:",
                "    last_at = " + ("events.last_at()" if self.by_kind else 'last_ev.get("at")'),
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
        if self.groups or self.overflow:
            out("tallies = facts.tallies")
        for tool, on_result in self.overflow:
            slot = self.tool_slot[tool]
            v = _overflow_names(slot, on_result)
            fed = f"{v}f" if on_result else f"c{slot}"  # results fed to them; calls
            out(f"overflow_tallies({v}all, tallies, dec, {fed}, make_tally)")
        for g, (_, probes) in enumerate(self.groups):
            members = tuple((p.index, p.probe, p.probe.every) for p in probes)
            table = self.names.bind("G", members, f"group {g}'s tests (whose tallies they fill)")
            if self.writer.one_value(g):  # (a closed group's was set as it closed)
                out(f"if g{g}_open:", f"    {self.writer.found_now(g)}")
            out(
                f"for j, probe, every in {table}:",
                f"    tallies[probe] = make_tally(dec.get(j), {self.writer.fed[g]}, g{g}_found, "
                f"g{g}_sample, every)",
            )
        out("return facts")


def generate(
    needs: Needs,
    *,
    raw: bool = False,
    raw_type: type | None = None,
    by_kind: bool = False,
) -> IndexPass:
    """The generated pass for `needs` (`raw`: events from the typed decoder, whose large
    fields are `raw_type` bytes; `by_kind`: the `decode.KindEvents` of a streamed
    recording, whose last event's time is read by `last_at`)."""
    made = _Generator(needs, raw or by_kind, raw_type, by_kind)
    source, namespace, notes = made.generate()
    code = compiled(source)
    scope = dict(namespace)
    exec(code, scope)
    reads = tuple(sorted((k, tuple(sorted(f.items()))) for k, f in made.reads.items()))
    return IndexPass(source, tuple(notes), scope["index_pass"], reads)
