"""How a `Trace` (`runs/providers.py`) links results to the calls waiting for one.

`Trace.known_call` finds a call with no result yet by its id, or else the oldest of a
tool's name (only those whose callId starts with `call-` when an id was given). The
Trace files waiting calls by name so that this costs the same however many calls wait;
`Reference` below is that rule as a scan of every waiting call in order (the Trace's own
code before the index), and random runs of calls, lookups and results must give the same
answers from both.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from evaldsl.runs.providers import Trace
from tests.calltools import calls_made
from tests.fuzzing import examples


class Reference:
    """The waiting calls as a list scanned in order: the rule `known_call` keeps."""

    def __init__(self) -> None:
        self.calls: dict[Any, Any] = {}  # callId → the tool's name
        self.waiting: list[Any] = []
        self.resolved: set[Any] = set()

    def call(self, name: Any, call_id: Any) -> Any:
        cid = call_id if call_id else f"call-{len(self.calls) + 1}"
        if cid in self.calls:  # the first of cid'2, cid'3, … not taken
            mark = 2
            while f"{cid}'{mark}" in self.calls:
                mark += 1
            cid = f"{cid}'{mark}"
        self.calls[cid] = name
        self.waiting.append(cid)
        return cid

    def known_call(self, call_id: Any, name: Any) -> Any:
        if call_id and call_id in self.calls:
            return call_id if call_id not in self.resolved else None
        if name is not None:
            for cid in self.waiting:
                if self.calls[cid] == name and (not call_id or cid.startswith("call-")):
                    return cid
        return None

    def result(self, call_id: Any) -> None:
        self.resolved.add(call_id)
        if call_id in self.waiting:
            self.waiting.remove(call_id)


NAMES = st.sampled_from(["search", "fetch", "call-1", ""]) | st.sampled_from([None, 5])
IDS = st.sampled_from(
    [None, "", "a", "b", "call-1", "call-2", "call-3", "call-1'2", "a'3", "a'2'2"]
)
STEPS = st.lists(
    st.tuples(st.sampled_from(["call", "known", "result", "result known"]), NAMES, IDS),
    max_size=40,
)


@settings(max_examples=examples(500), deadline=None)
@given(STEPS)
def test_waiting_calls_are_found_as_a_scan_in_order_finds_them(steps: list[Any]) -> None:
    trace = Trace("otel", "trace.jsonl", "a test")
    reference = Reference()
    for step, name, call_id in steps:
        if step == "call":  # (a name that is not text too: not every reader tests it)
            assert trace.call(name, {}, call_id) == reference.call(name, call_id)
        elif step == "known":
            assert trace.known_call(call_id, name) == reference.known_call(call_id, name)
        else:  # a result: for an id given, or for the call found by name
            target = call_id if step == "result" else reference.known_call(call_id, name)
            if target is not None:
                trace.result(target, "done")
                reference.result(target)
        assert trace.awaits_results() == bool(reference.waiting)


def test_a_result_takes_its_call_out_of_every_index() -> None:
    trace = Trace("otel", "trace.jsonl", "a test")
    first = trace.call("search", {}, None)  # call-1: found by name with an id given too
    second = trace.call("search", {}, "x")
    assert trace.known_call("other", "search") == first
    trace.result(first, "done")
    assert trace.known_call("other", "search") is None  # `x` does not start with call-
    assert trace.known_call(None, "search") == second
    trace.result(second, "done")
    assert trace.known_call(None, "search") is None
    assert not trace.awaits_results()


def test_calls_that_all_carry_one_id_get_short_distinct_names() -> None:
    # a file whose calls all carry one id (a log that joins runs, a server that reuses
    # ids): the n-th such call is `call_0'n`, not `call_0` and n - 1 marks, which made
    # such a file quadratic in time and memory
    trace = Trace("openai", "responses.jsonl", "a test")
    names = [trace.call("search", {}, "call_0") for _ in range(5000)]
    assert names[:3] == ["call_0", "call_0'2", "call_0'3"]
    assert names[-1] == "call_0'5000"
    assert len(set(names)) == len(names)
    assert trace.known_call("call_0'4999", None) == "call_0'4999"


def test_a_renamed_call_skips_the_names_the_file_gave() -> None:
    trace = Trace("openai", "responses.jsonl", "a test")
    given = [trace.call("search", {}, cid) for cid in ("a", "a'2", "a'3", "a", "a", "a'2")]
    assert given == ["a", "a'2", "a'3", "a'4", "a'5", "a'2'2"]


def test_many_waiting_calls_given_results_in_any_order() -> None:
    # calls of one tool that all wait, then get their results in a shuffled order, the
    # oldest still waiting asked for before each (by name alone, and with an id, which
    # finds only made-up `call-` ids): a waiting call leaves the index lazily, when it is
    # the oldest asked for, and a call with a result is never found
    import random

    rng = random.Random(7)
    trace = Trace("otel", "trace.jsonl", "a test")
    reference = Reference()
    for n in range(3000):
        call_id = None if n % 3 else f"id{n}"
        assert trace.call("search", {}, call_id) == reference.call("search", call_id)
    order = list(reference.calls)
    rng.shuffle(order)
    for cid in order:
        for asked in (None, "unknown"):
            assert trace.known_call(asked, "search") == reference.known_call(asked, "search")
        trace.result(cid, "done")
        reference.result(cid)
    assert trace.known_call(None, "search") is None
    assert not trace.awaits_results()


@given(
    lead=st.sampled_from(["", " ", "\n\t", "\u00a0", "\u2003", "x"]),
    body=st.sampled_from(['{"temp": 41}', "[1, 2]", '"text"', "2001", "{not json", ""]),
)
@settings(max_examples=80, deadline=None)
def test_a_result_of_json_text_is_its_value_whatever_white_space_leads_it(
    lead: str, body: str
) -> None:
    """`Trace.result` reads JSON text of an object or a list as its value, after any
    leading white space (Unicode's, as `str.lstrip` strips it: the result's first
    character is looked at before that copy is made), and keeps any other text."""
    import orjson

    output = lead + body
    trace = Trace("otel", "x.jsonl", "test")
    trace.result(trace.call("t", {}), output)
    stripped = output.lstrip()
    try:
        parsed = orjson.loads(output) if stripped[:1] in ("{", "[") else None
    except orjson.JSONDecodeError:
        parsed = None
    expected = parsed if isinstance(parsed, (dict, list)) else output
    assert trace.events[-1]["output"] == expected


def test_a_message_of_new_calls_is_given_back_without_comprehensions_beyond_the_search() -> None:
    """`new_calls` looks for echoes of calls read before (a comprehension), and, finding
    none, as in most transcripts, gives the calls back: no generator to add no ids to
    `echoed`, no list of the calls not echoed. With an echo, both are as before."""
    from evaldsl.runs import providers

    trace = Trace("openai", "request.json", "a test")
    trace.call("search", {"q": 1}, "c1")
    echoed: set[str] = set()
    calls: list[Any] = [("search", {"q": 2}, "c2"), ("fetch", {}, None)]
    new, made = calls_made(lambda: trace.new_calls(calls, echoed), providers)
    assert new == calls
    assert echoed == set()
    assert [m for m in made if m.startswith("<")] == ["<listcomp>"]
    # an echo of c1 beside a new call: c1 joins `echoed`, the new call alone is new
    assert trace.new_calls([("search", {"q": 1}, "c1"), *calls], echoed) == calls
    assert echoed == {"c1"}
    assert trace.new_calls([("search", {"q": 1}, "c1")], echoed) is None
