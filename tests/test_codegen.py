"""Generated passes agree with the reference pass: random programs × random traces give
the same verdicts, messages and found values, for events in memory (dicts) and streamed
from a file (the typed decoder); each family's code fragment agrees with its closure;
the generated source holds no value from the suite; bad files still fail closed."""

from __future__ import annotations

import contextlib
import enum
import functools
import itertools
import json
import math
import os
import tempfile
import tracemalloc
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import attrs
import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

import evaldsl
from evaldsl.compile.evaluate import evaluate
from evaldsl.language import ast, regexlits
from evaldsl.language import paths as jsonpaths
from evaldsl.language.regexes import compile_regex
from evaldsl.language.values import MISSING, json_equal
from evaldsl.predicates import registry
from evaldsl.predicates.base import Family
from evaldsl.runner.core import metrics_of
from evaldsl.runs import codegen, decode, groupgen, groupsets, load_run, overflow, passes
from evaldsl.runs.cassette import EventStream
from evaldsl.runs.events import RESPONSE_TYPES, tool_call_name
from evaldsl.runs.groupgen import INLINE_MAX
from evaldsl.runs.index import index_events as reference_index_events
from evaldsl.runs.index import index_run as reference_index_run
from evaldsl.runs.model import Run, RunError, Unrecorded
from evaldsl.syntax.parser import parse
from tests.fuzzing import examples
from tests.test_realworld import MUST_FAIL, REAL, TABLE

TRACEPLAY = Path(__file__).resolve().parent / "fixtures" / "traceplay"


@pytest.fixture(autouse=True, scope="module")
def _every_run_generated() -> Iterator[None]:
    """Every run through the generated pass, however small (`passes` indexes a small run
    by the reference until its needs recur, tests/test_pass_tiers.py): these tests compare
    the two, so neither may stand in for the other. A small file is decoded whole however
    much this process decoded before (`TYPED_AFTER`): a test that sets `TYPED_FROM` to 0
    asks for the typed decoder, and its default for whole decoding."""
    with (
        mock.patch.object(passes, "GENERATE_FROM", 0),
        mock.patch.object(passes, "GENERATE_FROM_EVENTS", 0),
        mock.patch.object(passes, "TYPED_AFTER", 1 << 62),
    ):
        yield


TOOLS = ["search", "fetch", "get_weather"]
#: Ids that calls share (as event id or callId) and results name: linking's odd cases.
SHARED_IDS = ["c1", "e1", "x"]
#: A chat completion's usage with prompt-cache counts, and a call in its message.
CHAT_USAGE = {
    "usage": {
        "prompt_tokens": 3,
        "completion_tokens": 4,
        "prompt_tokens_details": {"cached_tokens": 2},
    }
}
CHAT_CALL = {"id": "k1", "type": "function", "function": {"name": "search", "arguments": "{}"}}
CHAT_CALLS = {"content": None, "tool_calls": [CHAT_CALL]}
TOOL_USE = {"content": [{"type": "tool_use", "id": "u1", "name": "search", "input": {}}]}
KEYS = ["city", "limit", "q", "items"]
TEXTS = ["Paris", "Oslo", "rain", "sun", "a", "", "[1, 2]"]
NUMBERS = [-1, 0, 1, 2.5, 7, 10, 100]

# ---- random programs ----------------------------------------------------------------------

texts = st.sampled_from(TEXTS)
numbers = st.sampled_from(NUMBERS)
tools = st.sampled_from(TOOLS)
keys = st.sampled_from(KEYS)
paths = st.one_of(
    keys.map(lambda k: f"$.{k}"),
    # `.1` is a list's element or an object's key "1"; `.01` is the key only
    st.sampled_from(["$.items[*]", "$..city", '$["limit"]', "$.items[0].q", "$.items.1", "$.q.01"]),
)


def _q(text: str) -> str:
    return json.dumps(text)


def _lit(value: Any) -> str:
    """A JSON value as the language writes it (an object's keys bare)."""
    if isinstance(value, list):
        return "[" + ", ".join(map(_lit, value)) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_lit(x)}" for k, x in value.items()) + "}"
    return json.dumps(value)


# literals of every JSON kind: what `== VALUE` and `in [..]` compare by `json_equal`
literal_values = st.recursive(
    st.one_of(texts, numbers, st.booleans(), st.none()),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(KEYS), inner, max_size=2)
    ),
    max_leaves=4,
)
# `== VALUE` (not a text: a text is `compare`'s own rule) and `in [..]` of any values
equal_tests = st.one_of(
    literal_values.filter(lambda v: type(v) is not str).map(lambda v: f"== {_lit(v)}"),
    st.lists(literal_values, max_size=4).map(lambda xs: f"in {_lit(xs)}"),
)

value_tests = st.one_of(
    texts.map(lambda t: f"== {_q(t)}"),
    texts.map(lambda t: f"!= {_q(t)}"),
    st.tuples(st.sampled_from(["<", "<=", ">", ">="]), numbers).map(lambda x: f"{x[0]} {x[1]}"),
    numbers.map(lambda n: f"== {n}"),
    st.lists(texts, min_size=1, max_size=3).map(lambda xs: "in [" + ", ".join(map(_q, xs)) + "]"),
    st.lists(numbers, min_size=1, max_size=3).map(lambda xs: f"in [{', '.join(map(str, xs))}]"),
    texts.filter(bool).map(lambda t: f"contains {_q(t)}"),
    st.sampled_from(["/a/", "/^P/", "/[0-9]/", "/rain|sun/i", "/s$/", "/\\d+/"]).map(
        lambda r: f"matches {r}"
    ),
    # fixed texts (a string method) and a required text before RE2 (`regexlits.py`)
    st.sampled_from(
        ["/^(Paris|Oslo)$/", "/ai|su/", "/(r|s)a/", "/n$/", "/^(O|P)a?/", "/\\d, \\d/", "/^\\[/"]
    ).map(lambda r: f"matches {r}"),
    st.sampled_from(
        ["is empty", "not empty", "is string", "is number", "is integer", "exists", "is json"]
    ),
    texts.filter(bool).map(lambda t: f"starts with {_q(t)}"),
    texts.filter(bool).map(lambda t: f"ends with {_q(t)}"),
    st.just('contains all ["a", "r"]'),
    st.just('contains any ["Oslo", "sun"]'),
    # `contains all/any [..]` of any values, a few or enough to be looked up by key
    # (`lists.KEYED_FROM`)
    st.tuples(st.sampled_from(["all", "any"]), st.lists(literal_values, max_size=10)).map(
        lambda x: f"contains {x[0]} {_lit(x[1])}"
    ),
    st.just("has city"),
    st.just('contains {city: "Paris"}'),
)


@functools.cache
def _compiles(statement: str) -> bool:
    try:
        evaldsl.compile(statement)
    except evaldsl.EvalDslError:
        return False
    return True


call_tests = st.builds(
    lambda every, tool, side, path, test: (
        f"{'every ' if every else ''}tool {tool} {side}{' ' + path if path else ''} {test}"
    ),
    st.booleans(),
    tools,
    st.sampled_from(["args", "args", "result"]),
    st.one_of(st.none(), paths, paths),
    value_tests,
).filter(_compiles)

# many tests of one kind on one path: the shared structures (dict, thresholds, RE2 Sets)
bulk_tests = st.builds(
    lambda tool, side, key, tests: [
        f"every tool {tool} {side} $.{key} {t[6:]}"
        if t.startswith("every ")
        else f"tool {tool} {side} $.{key} {t}"
        for t in tests
    ],
    tools,
    st.sampled_from(["args", "result"]),
    keys,
    st.one_of(
        st.lists(texts.map(lambda t: f"== {_q(t)}"), min_size=4, max_size=8),
        st.lists(
            st.tuples(st.sampled_from(["<", "<=", ">", ">="]), numbers).map(
                lambda x: f"{x[0]} {x[1]}"
            ),
            min_size=4,
            max_size=10,
        ),
        st.lists(
            st.sampled_from(["/a/", "/^P/", "/[0-9]/", "/rain|sun/i", "/s$/", "/o/"]).map(
                lambda r: f"matches {r}"
            ),
            min_size=4,
            max_size=8,
        ),
        st.lists(texts.filter(bool).map(lambda t: f"contains {_q(t)}"), min_size=4, max_size=8),
        st.lists(equal_tests, min_size=4, max_size=8),
        st.lists(
            st.tuples(st.sampled_from(["<", "<=", ">", ">="]), numbers).map(
                lambda x: f"{x[0]} {x[1]}"
            ),
            min_size=4,
            max_size=10,
        ).map(lambda xs: [f"every {x}" for x in xs]),
        st.lists(
            st.sampled_from(["/a/", "/^P/", "/[0-9]/", "/rain|sun/i", "/s$/", "/o/", "/./"]).map(
                lambda r: f"every matches {r}"
            ),
            min_size=4,
            max_size=8,
        ),
        st.lists(literal_values.map(lambda v: f"every != {_lit(v)}"), min_size=4, max_size=8),
        st.lists(
            st.tuples(st.sampled_from(["starts", "ends"]), texts).map(
                lambda x: f"{x[0]} with {_q(x[1])}"
            ),
            min_size=4,
            max_size=8,
        ),
        st.lists(keys.map(lambda k: f"has {k}"), min_size=4, max_size=8),
        st.lists(
            st.tuples(st.sampled_from(["all", "any"]), st.lists(literal_values, max_size=3)).map(
                lambda x: f"contains {x[0]} {_lit(x[1])}"
            ),
            min_size=4,
            max_size=8,
        ),
        st.lists(
            literal_values.filter(lambda v: not isinstance(v, (str, dict))).map(
                lambda v: f"contains {_lit(v)}"
            ),
            min_size=4,
            max_size=8,
        ),
        st.lists(
            st.dictionaries(keys, literal_values, min_size=1, max_size=3).map(
                lambda v: f"contains {_lit(v)}"
            ),
            min_size=4,
            max_size=8,
        ),
    ),
)

# `contains {key: "text"}` on whole arguments or results: a dict lookup per key
sub_bulk = st.builds(
    lambda tool, side, pairs: [f"tool {tool} {side} contains {{{k}: {_q(t)}}}" for k, t in pairs],
    tools,
    st.sampled_from(["args", "result"]),
    st.lists(st.tuples(keys, texts), min_size=4, max_size=8),
)

# `contains {..}` of any object on whole arguments or results: a dict lookup of one value
obj_bulk = st.builds(
    lambda tool, side, objects: [f"tool {tool} {side} contains {_lit(o)}" for o in objects],
    tools,
    st.sampled_from(["args", "result"]),
    st.lists(st.dictionaries(keys, literal_values, min_size=1, max_size=3), min_size=4, max_size=8),
)

# regexes and texts on one path: one RE2 Set for both
mixed_bulk = st.builds(
    lambda tool, side, key, regexes, texts: [
        *(f"tool {tool} {side} $.{key} matches {r}" for r in regexes),
        *(f"tool {tool} {side} $.{key} contains {_q(t)}" for t in texts),
    ],
    tools,
    st.sampled_from(["args", "result"]),
    keys,
    st.lists(st.sampled_from(["/a/", "/^P/", "/[0-9]/", "/rain|sun/i", "/s$/"]), min_size=4),
    st.lists(texts.filter(bool), min_size=4, max_size=6),
)

# K mixed tests on one path, `every` and not, more than are inlined (`INLINE_MAX`): every
# kind decided together beside the inlined tests and the loop over the rest
many_on_one_path = st.builds(
    lambda tool, side, path, tests: [
        f"{'every ' if every else ''}tool {tool} {side} {path} {test}" for every, test in tests
    ],
    tools,
    st.sampled_from(["args", "result"]),
    st.one_of(keys.map(lambda k: f"$.{k}"), st.sampled_from(["$.items[*]", "$..city"])),
    st.lists(st.tuples(st.booleans(), value_tests), min_size=INLINE_MAX, max_size=40),
).map(lambda xs: [x for x in xs if _compiles(x)])

other_statements = st.one_of(
    st.builds(lambda t, n: f"tool {t} called at least {n} times", tools, st.integers(0, 3)),
    st.builds(lambda t: f"tool {t} called", tools),
    st.builds(lambda t: f"no tool {t}", tools),
    texts.filter(bool).map(lambda t: f"answer contains {_q(t)}"),
    st.integers(1, 4).map(lambda n: f"answer[{n}] not empty"),
    st.integers(1, 4).map(lambda n: f'answer[-{n}] contains "a"'),
    st.just("answer json $.x == 1"),
    st.just("tools in order [search, fetch]"),
    st.just("tools contains get_weather"),
    st.just("tools only [search, fetch]"),
    st.just("tools contains any [fetch, other]"),
    st.just("not (tools contains search)"),
    st.just("latency < 5s"),
    st.just("cost <= $1"),
    st.just("tokens > 10"),
    st.just("steps >= 1"),
    st.just("errors == 0"),
    st.builds(lambda t: f"answer cites tool {t}", tools),
)

programs = st.builds(
    lambda a, b, c, d: [*a, *b, *c, *d],
    st.lists(call_tests, max_size=10),
    st.lists(bulk_tests, max_size=2).map(lambda xs: [s for x in xs for s in x]),
    st.one_of(st.just([]), mixed_bulk, sub_bulk, obj_bulk, many_on_one_path),
    st.lists(other_statements, max_size=5),
).filter(bool)


# ---- random traces ------------------------------------------------------------------------

json_leaf = st.one_of(texts, numbers, st.booleans(), st.none())
json_value = st.recursive(
    json_leaf,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(st.sampled_from([*KEYS, "q", "1", "01"]), inner, max_size=3),
    ),
    max_leaves=6,
)
arguments = st.one_of(st.dictionaries(st.sampled_from(KEYS), json_value, max_size=4), json_value)


usage_counts = st.one_of(st.integers(0, 50), st.sampled_from([3, 43, 2**40])).map(
    lambda n: {"promptTokens": n, "completionTokens": 2}
)
# counts the inline common case must not take: fractions are kept, a negative count or one
# that is text is the run's error (and so is a usage that is not an object), other
# spellings are read as the reference reads them
odd_usages = st.sampled_from(
    [
        {"promptTokens": -3, "completionTokens": 2},
        {"promptTokens": 4, "completionTokens": -1},
        {"promptTokens": 2.5, "completionTokens": 1},
        {"promptTokens": "9", "completionTokens": 1},
        {"promptTokens": True, "completionTokens": 1},
        {"promptTokens": 1, "completionTokens": False},
        {"promptTokens": 1, "completionTokens": 0.5},
        {"prompt_tokens": 4, "completion_tokens": 1},
        {"completionTokens": 3},
        {"promptTokens": 3},
        {"promptTokens": None, "completionTokens": 2},
        {"promptTokens": 7.0, "completionTokens": 2},
        [3, 4],
        "12000",
        12000,
    ]
)


# an Anthropic body kept as the output (traceplay's): its prompt-cache counts are added
# to the input the event gives when that is `input_tokens` alone (3 here; usage_counts
# gives it), kept when it counts them (43), the run's error when neither; a bad count
# is the run's error
anthropic_bodies = st.sampled_from(
    [
        {
            "content": [{"type": "text", "text": "x"}],
            "usage": {
                "input_tokens": 3,
                "output_tokens": 2,
                "cache_creation_input_tokens": 30,
                "cache_read_input_tokens": 10,
            },
        },
        {"usage": {"input_tokens": 3, "cache_creation": {"ephemeral_1h_input_tokens": 40}}},
        {"usage": {"input_tokens": 3, "cache_read_input_tokens": 0}},
        {"usage": {"input_tokens": 3, "cache_read_input_tokens": -1}},
        {"usage": {"input_tokens": 3, "cache_creation": 5}},
    ]
)


# an OpenAI body kept as the output (traceplay's): the tokens it read from the prompt
# cache are among its input, priced apart when the event's input is the body's (3 or 43
# here), the run's error when it is another; details that are not an object, or a bad
# cached count, are the run's error; none read (0, as every recent body says) is nothing
openai_bodies = st.sampled_from(
    [
        {
            "choices": [{"message": {"content": "x"}}],
            "usage": {
                "prompt_tokens": 43,
                "completion_tokens": 2,
                "prompt_tokens_details": {"cached_tokens": 40, "audio_tokens": 0},
                "completion_tokens_details": {"reasoning_tokens": 0},
            },
        },
        {"usage": {"input_tokens": 3, "input_tokens_details": {"cached_tokens": 2}}},
        {"usage": {"prompt_tokens": 3, "prompt_tokens_details": {"cached_tokens": 0}}},
        {"usage": {"prompt_tokens": 3, "prompt_tokens_details": {"cached_tokens": 0.0}}},
        {"usage": {"prompt_tokens": 3, "prompt_tokens_details": None}},
        {"usage": {"prompt_tokens": 3, "prompt_tokens_details": 5}},
        {"usage": {"prompt_tokens": 3, "prompt_tokens_details": {"cached_tokens": "2"}}},
        {"usage": {"prompt_tokens": 3, "prompt_tokens_details": {"cached_tokens": 9}}},
        {"usage": {"input_tokens": 3, "input_tokens_details": {"cached_tokens": -1}}},
    ]
)


# a Gemini `generateContent` body kept as the output (a traceplay cassette of a Gemini
# model): its answer is its text parts; a `functionCall` part is a call the response
# holds (`heldcalls`), which no pass may count as none
GEMINI_CALL = {"functionCall": {"name": "search", "args": {"q": "x"}}}
gemini_bodies = st.one_of(
    texts.map(lambda t: {"candidates": [{"content": {"role": "model", "parts": [{"text": t}]}}]}),
    st.just(
        {
            "candidates": [{"content": {"role": "model", "parts": [GEMINI_CALL]}}],
            "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 2},
        }
    ),
    st.just({"candidates": [{"content": {"parts": [{"text": "a"}, {"function_call": {}}]}}]}),
)


def _sse(*events: dict[str, Any], done: bool = False) -> str:
    """An SSE text of `events` (each named by its `type`, as Anthropic and the Responses
    API name them), ending in `[DONE]` if `done`."""
    named = (f"event: {e.get('type', 'x')}\ndata: {json.dumps(e)}\n\n" for e in events)
    return "".join(named) + ("data: [DONE]\n\n" if done else "")


_CHUNK = {"id": "c", "object": "chat.completion.chunk"}
_RESPONSE = {
    "id": "resp_1",
    "object": "response",
    "status": "completed",
    "output": [
        {"type": "function_call", "id": "f", "call_id": "k", "name": "search", "arguments": "{}"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "P"}]},
    ],
}
# the `rawBody` of a stream traceplay recorded as `{"content": ""}` (`rawbody`): an
# Anthropic stream's text and call, a chat stream that only calls, a Responses API stream's
# text and call, and a `rawBody` no reader reads (the run's error, never "")
raw_bodies = st.sampled_from(
    [
        _sse(
            {"type": "message_start", "message": {"id": "m", "content": [], "usage": {}}},
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text"}},
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": "sorry"},
            },
            {"type": "content_block_stop", "index": 0},
            {
                "type": "content_block_start",
                "index": 1,
                "content_block": {"type": "tool_use", "id": "u", "name": "search", "input": {}},
            },
            {"type": "content_block_stop", "index": 1},
            {"type": "message_stop"},
        ),
        _sse(
            {
                **_CHUNK,
                "choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, **CHAT_CALL}]}}],
            },
            {**_CHUNK, "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]},
            done=True,
        ),
        _sse({"type": "response.completed", "response": _RESPONSE}),
        _sse({"type": "message_stop"}),
        "not a stream",
    ]
)


@st.composite
def traces(draw: st.DrawFn) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    n = draw(st.integers(0, 25))
    call = 0
    for i in range(n):
        kind = draw(
            st.sampled_from(
                ["tool.call", "tool.call", "tool.result", "llm.request", "llm.response",
                 "mcp.call", "user.message", "agent.error", "other.kind", "policy.evaluate",
                 "llm.invoke"]
            )
        )  # fmt: skip
        ev: dict[str, Any] = {"type": kind}
        if draw(st.booleans()):
            ev["at"] = f"2026-01-01T00:00:{i:02d}Z"
        elif not draw(st.integers(0, 8)):  # an `at` that is not a time, or not text
            ev["at"] = draw(st.sampled_from(["not a time", "2026-13-45T99:00:00Z", 5, None]))
        if kind == "tool.call":
            call += 1
            if draw(st.integers(0, 40)):
                ev["name"] = draw(tools)
            elif draw(st.booleans()):  # a name that is not text, none or "": the run's
                ev["name"] = draw(st.sampled_from([None, ["search"], 3, {"n": "search"}, ""]))
            # mostly a callId of its own; sometimes none, or one another call has, or an
            # event id (which a result may name it by) that is another call's id or callId
            call_id = draw(st.sampled_from([f"c{call}"] * 4 + [None, *SHARED_IDS]))
            if call_id is not None:
                ev["callId"] = call_id
            if draw(st.booleans()):
                ev["id"] = draw(st.sampled_from([f"e{i}", *SHARED_IDS]))
            if draw(st.integers(0, 5)):
                ev["arguments"] = draw(arguments)
        elif kind == "mcp.call":
            # (now and then a name that is not text: the run's error where names are read)
            named = (
                draw(tools) if draw(st.integers(0, 40)) else draw(st.sampled_from([["search"], ""]))
            )
            ev[draw(st.sampled_from(["name", "tool"]))] = named
            ev[draw(st.sampled_from(["arguments", "args", "input"]))] = draw(arguments)
            if draw(st.booleans()):
                ev[draw(st.sampled_from(["result", "output"]))] = draw(json_value)
            if draw(st.integers(0, 3)) == 0:  # an id a result may name: files nothing
                ev["callId"] = draw(st.sampled_from(SHARED_IDS))
        elif kind == "tool.result":
            ev["callId"] = draw(
                st.one_of(
                    st.integers(1, max(call, 1) + 1).map(lambda n: f"c{n}"),
                    st.sampled_from([*SHARED_IDS, f"e{max(i - 1, 0)}"]),
                )
            )
            if draw(st.integers(0, 5)):
                ev["output"] = draw(json_value)
        elif kind == "llm.request":
            ev["model"] = draw(st.sampled_from(["gpt-4o", "gpt-4o-mini", "nobody-model"]))
            if draw(st.integers(0, 3)):  # mostly an id its response may name (some alike)
                ev["id"] = draw(st.sampled_from([f"r{i}", f"r{i}", "r0", 7, True, ["r1"], None]))
        elif kind in ("llm.response", "llm.invoke"):  # (an invoke: verydia's request and
            # its response in one event, a step and an answer, read as a response is)
            ev["output"] = draw(
                st.one_of(
                    texts,
                    texts.map(lambda t: {"choices": [{"message": {"content": t}}]}),
                    # (a chat completion with other keys beside `choices`: its usage, with
                    # prompt-cache counts, or its id; and one whose message holds a call)
                    texts.map(lambda t: {"choices": [{"message": {"content": t}}], **CHAT_USAGE}),
                    texts.map(
                        lambda t: {"id": "chatcmpl-1", "choices": [{"message": {"content": t}}]}
                    ),
                    st.just(
                        {"choices": [{"message": {"content": None, "tool_calls": [CHAT_CALL]}}]}
                    ),
                    st.just({"choices": [{"message": {"tool_calls": [CHAT_CALL]}}], **CHAT_USAGE}),
                    # (beside `choices`, a call where another API writes one; a second choice
                    # holding one)
                    texts.map(lambda t: {"choices": [{"message": {"content": t}}], **TOOL_USE}),
                    st.just({"choices": [{"message": {"content": "a"}}, {"message": CHAT_CALLS}]}),
                    st.just('{"x": 1}'),
                    st.just({"usage": {"prompt_tokens": 3, "completion_tokens": 4}}),
                    anthropic_bodies,
                    openai_bodies,
                    gemini_bodies,
                    json_value,
                )
            )
            if not draw(st.integers(0, 4)):  # a stream traceplay kept in its `rawBody`
                ev["output"] = draw(
                    st.sampled_from([{"content": ""}, {"content": "", **CHAT_USAGE}, ev["output"]])
                )
                ev["rawBody"] = draw(st.one_of(raw_bodies, st.none()))
            if draw(st.booleans()):
                ev["usage"] = draw(st.one_of(usage_counts, odd_usages))
            if draw(st.booleans()):  # the request it answers: an earlier one's id, or not
                ev["requestId"] = draw(
                    st.sampled_from([f"r{max(i - 1, 0)}", "r0", "r3", 7, 7.0, ["r1"], None])
                )
            if not draw(st.integers(0, 5)):
                ev["tokensIn"] = draw(st.sampled_from([5, 0, 2.5, -1]))  # verydia's, it wins
            if not draw(st.integers(0, 7)):
                ev["tokensOut"] = draw(st.sampled_from([6, 1.5]))  # (either one wins alone)
        events.append(ev)
    return events


# ---- the comparison -----------------------------------------------------------------------


def _verdicts(case: Any, facts: Any) -> list[tuple[Any, ...]]:
    return [
        (v.status, v.message, v.actual, v.expected)
        for v in (evaluate(a, facts) for a in case.assertions)
    ]


def _both(case: Any, run: Run, fresh: Any) -> tuple[Any, Any]:
    """What the reference and the generated pass give: the verdicts with the case's own
    needs, then the verdicts and the case's metrics with the needs the runner adds."""

    def outcome(index: Any, needs: Any, metrics: bool) -> Any:
        try:
            facts = index(run, needs)
        except RunError as err:
            return ("error", str(err))
        return _verdicts(case, facts), metrics_of(facts) if metrics else None

    runner = attrs.evolve(case.needs, times=True, cost=True, tokens=True, passes={})
    reference = [outcome(reference_index_run, case.needs, False)]
    reference.append(outcome(reference_index_run, runner, True))
    # the generated pass hands only runs it cannot read to the reference: on a run the
    # reference reads, a hand-over would hide a bug of the generated code, so none is allowed
    with mock.patch.object(passes, "index_events", side_effect=AssertionError("handed over")):
        generated = []
        for needs, metrics in ((case.needs, False), (runner, True)):
            try:
                generated.append(outcome(passes.index_run, fresh(needs), metrics))
            except AssertionError:
                assert reference[len(generated)][0] == "error", "a readable run was handed over"
                with mock.patch.object(passes, "index_events", reference_index_events):
                    generated.append(outcome(passes.index_run, fresh(needs), metrics))
    return reference, generated


def _fresh(needs: Any) -> Any:
    """The needs without the passes kept on them: each run makes its pass anew."""
    return attrs.evolve(needs, passes={})


def _compiled(statements: list[str]) -> Any:
    return evaldsl.compile("\n".join(statements)).cases[0]


# found by this test: a callId taken over by a later call of a tool whose result tests
# were decided (or of a tool no test reads) answers that later call in both passes
_SHARED_ID = [
    {"type": "tool.call", "name": "get_weather", "callId": "c1"},
    {"type": "mcp.call", "name": "search", "arguments": {}, "result": "Oslo"},
    {"type": "tool.call", "name": "search", "callId": "c1"},
    {"type": "tool.result", "callId": "c1"},
]
# A tool's result tests decided by an MCP call's own result: its later calls claim no id
# (here `e1`, which then names the get_weather call by its event id), as when a result
# event decides them (found by `make fuzz`: the reference went on wiring them)
_DECIDED_INLINE = [
    {"type": "mcp.call", "name": "search", "arguments": {}, "result": [], "callId": "c1"},
    {"type": "tool.call", "name": "search", "callId": "c1"},
    {"type": "tool.result", "callId": "c1"},
    {"type": "tool.call", "name": "search", "callId": "e1"},
    {"type": "tool.call", "name": "get_weather", "callId": "c11", "id": "e1"},
    {"type": "tool.result", "callId": "e1"},
]


@pytest.mark.parametrize(
    ("answer", "cited"), [("Berlin, say the results", "fail"), ("Paris", "pass")]
)
def test_a_call_answered_twice_cites_its_first_result_as_result_tests_read_it(
    answer: str, cited: str
) -> None:
    """A call's result is the first `tool.result` naming it (docs/language.md §4.1): the
    result `cites` quotes from is the one result tests read, in both passes (a later
    result naming the call again, a retry's or a log's duplicate, is not)."""
    events = [
        {"type": "tool.call", "name": "search", "callId": "c1", "id": "e1"},
        {"type": "tool.result", "callId": "c1", "output": "Paris"},
        {"type": "tool.result", "callId": "c1", "output": "Berlin"},
        {"type": "tool.result", "callId": "e1", "output": "Berlin"},
        {"type": "llm.response", "output": answer},
    ]
    case = _compiled(['tool search result == "Paris"', "answer cites tool search"])
    reference, generated = _both(case, Run(events=events, format="events"), lambda n: n)
    assert generated == reference
    assert [v[0] for v in reference[0][0]] == ["pass", cited]


@settings(max_examples=examples(250), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs, traces())
@example(["tool get_weather result has city", 'every tool search result == "Paris"'], _SHARED_ID)
@example(["tool get_weather result has city", "answer cites tool get_weather"], _SHARED_ID)
@example(['tool search result != "Paris"', 'tool get_weather result == "Paris"'], _DECIDED_INLINE)
def test_generated_pass_agrees_in_memory(statements: list[str], events: list[Any]) -> None:
    case = _compiled(statements)
    reference, generated = _both(case, Run(events=events, format="events"), lambda n: n)
    assert generated == reference, "\n".join(statements)


#: Statements for every real trace besides its own: counts, tokens, cost, latency, answers,
#: the sequence (an error where the trace cannot answer them: then both must say so alike).
_ANY_TRACE = [
    "tokens >= 0",
    "cost < $100",
    "latency < 100000s",
    "steps >= 1",
    "answer matches /[a-z]/",
    "answer[-2] not empty",
    "tools contains any [get_weather, search, never_called_tool]",
]


@pytest.mark.parametrize(
    ("name", "asserts"), [(t[0], t[2]) for t in TABLE], ids=[t[0] for t in TABLE]
)
def test_generated_pass_reads_every_real_trace_as_the_reference(
    name: str, asserts: list[str]
) -> None:
    """The traces of tests/fixtures/realworld are small: a run reads them through the
    reference pass (tests/test_realworld.py). A large one of their formats goes through
    the generated pass: on each, with its own assertions and those that must fail, the
    two read it alike (`_reads_alike`)."""
    _reads_alike(REAL / name, [*asserts, *MUST_FAIL])


@pytest.mark.parametrize(
    "path", sorted(TRACEPLAY.glob("*/cassette*.jsonl")), ids=lambda p: p.parent.name
)
def test_generated_pass_reads_every_traceplay_cassette_as_the_reference(path: Path) -> None:
    """The same for the real traceplay cassettes of tests/fixtures/traceplay."""
    _reads_alike(path, [])


def _reads_alike(path: Path, asserts: list[str]) -> None:
    """`asserts`, `_ANY_TRACE`, and for each tool the trace calls tests of its arguments,
    results and `cites`: the same verdicts, messages, values and metrics from the
    reference and the generated pass, and from a file streamed both whole and by the
    typed decoder."""
    run = load_run(path)
    called = sorted({e.get("name") for e in run.events if e.get("type") == "tool.call"} - {None})
    per_tool = [
        line
        for tool in called
        for line in (
            f'tool "{tool}" args has x',
            f'every tool "{tool}" result != 1',
            f'tool "{tool}" result matches /a/',
            f'answer cites tool "{tool}"',
        )
    ]
    case = _compiled([*asserts, *_ANY_TRACE, *per_tool])
    streamed = isinstance(run.events, EventStream)
    for typed_from in (passes.TYPED_FROM, 0) if streamed else (passes.TYPED_FROM,):
        with mock.patch.object(passes, "TYPED_FROM", typed_from):
            reference, generated = _both(case, run, _fresh)
        assert generated == reference


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs, traces(), st.booleans())
def test_generated_pass_agrees_on_streams(
    statements: list[str], events: list[Any], escaped: bool
) -> None:
    case = _compiled(statements)
    text = "".join(json.dumps(e) + "\n" for e in events)
    if escaped:  # (the same values, each `_` spelled `\u005f`: the typed passes look for
        # names in undecoded text, `tool_calls` and `cache_read_input_tokens` among them)
        text = text.replace("_", "\\u005f")
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "events.jsonl"
        path.write_text(text)
        run = Run(events=EventStream(path, header=False), path=str(path), format="events")
        # small files are decoded whole; from TYPED_FROM on, by the typed decoder: both
        for typed_from in (passes.TYPED_FROM, 0):
            with mock.patch.object(passes, "TYPED_FROM", typed_from):
                reference, generated = _both(case, run, _fresh)
            assert generated == reference, "\n".join(statements)


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs, traces(), st.data())
def test_generated_pass_agrees_on_what_a_recording_left_out(
    statements: list[str], events: list[Any], data: st.DataObject
) -> None:
    """A run whose recording left answers, arguments and results out (an OTel trace
    without message content: `model.Unrecorded`, which both passes hand the checkers
    alike): the same verdicts, error verdicts among them."""
    numbers = st.frozensets(st.integers(1, 4), max_size=3)
    left = Unrecorded(
        "record it again",
        responses=sum(e.get("type") in RESPONSE_TYPES for e in events),
        answers=data.draw(numbers),
        arguments=data.draw(st.dictionaries(tools, numbers, max_size=2)),
        results=data.draw(st.dictionaries(tools, st.integers(1, 3), max_size=2)),
    )
    case = _compiled(statements)
    run = Run(events=events, format="events", unrecorded=left)
    reference, generated = _both(case, run, lambda n: n)
    assert generated == reference, "\n".join(statements)


class _Args(dict):  # type: ignore[type-arg]
    """A dict subclass (arguments a live target may give): a plain key's tests read
    exactly a `dict`, a path's finder any."""


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    programs,
    traces(),
    st.integers(0, 3),
    st.lists(st.sampled_from([*KEYS, "q"]), max_size=3),
)
def test_groups_past_those_written_are_fed_by_key_and_agree(
    statements: list[str], events: list[Any], written: int, odd: list[str]
) -> None:
    """Past `GROUPS_WRITTEN` groups, argument groups of any-call tests whose path starts
    with a plain key are fed by that key (`overflow.py`): the same verdicts, messages and
    values, in memory and from a file, with arguments that are a dict subclass too."""
    events = [
        *events,
        *(
            {"type": "tool.call", "name": t, "arguments": _Args({k: "Paris"})}
            for t, k in zip(TOOLS, odd, strict=False)
        ),
    ]
    with mock.patch.object(overflow, "GROUPS_WRITTEN", written):
        case = _compiled(statements)
        reference, generated = _both(case, Run(events=events, format="events"), lambda n: n)
        assert generated == reference, "\n".join(statements)
        plain = [e for e in events if not any(type(x) is _Args for x in e.values())]
        with tempfile.TemporaryDirectory() as folder:
            reference, generated = _on_stream(case, plain, folder)
        assert generated == reference, "\n".join(statements)


def test_a_result_group_fed_by_key_that_closes_leaves_the_others_linked() -> None:
    # the group of `$.city` (fed by key) closes at the first result; the written one of
    # `$.a` still needs results linked to their calls until the last
    # (every call first, then their results: the calls wait filed meanwhile)
    outputs = [{"city": 1}, {"x": 0}, {"x": 0}, {"a": 9}]
    events: list[Any] = [
        {"type": "tool.call", "name": "search", "callId": f"c{n}"} for n in range(4)
    ]
    events += [
        {"type": "tool.result", "callId": f"c{n}", "output": o} for n, o in enumerate(outputs)
    ]
    with mock.patch.object(overflow, "GROUPS_WRITTEN", 1):
        case = _compiled(["tool search result $.a == 9", "tool search result $.city == 1"])
        assert "overflow_feed(output" in passes.pass_for(case.needs, raw=False).source
        reference, generated = _both(case, Run(events=events, format="events"), lambda n: n)
    assert generated == reference
    assert [v[0] for v in reference[0][0]] == ["pass", "pass"]


def test_a_case_of_thousands_of_paths_writes_a_few_and_feeds_the_rest_by_key() -> None:
    # each group written out is ~70 lines of the pass: 4,000 paths were ~290,000 lines,
    # ~1 GB to compile
    statements = [f'tool w args $.a{i}.b[*].c == "x{i}"' for i in range(2000)]
    statements += [f"tool w args $.a{i} == {i}" for i in range(0, 2000, 7)]
    case = _compiled(statements)
    source = passes.pass_for(case.needs, raw=False).source
    assert source.count("\n") < 100 * overflow.GROUPS_WRITTEN and "overflow_feed(" in source
    events: list[Any] = [
        {"type": "tool.call", "name": "w", "arguments": {f"a{i}": {"b": [{"c": f"x{i}"}]}}}
        for i in range(0, 2000, 3)
    ]
    events += [{"type": "mcp.call", "name": "w", "arguments": {"a14": 14}}]
    # a test fed by key that fails, having found more values than a message shows
    events += [
        {"type": "tool.call", "name": "w", "arguments": {"a1999": {"b": [{"c": "no"}]}}}
    ] * 12
    reference, generated = _both(case, Run(events=events, format="events"), lambda n: n)
    assert generated == reference
    statuses = [v[0] for v in reference[0][0]]
    assert statuses[:4] == ["pass", "fail", "fail", "pass"]
    assert statuses[2000 + 2] == "pass" and statuses[2000 + 1] == "fail"  # $.a14 == 14, $.a7
    assert "(and 2 more)" in reference[0][0][1999][1]


def _on_stream(case: Any, events: list[Any], folder: str) -> tuple[Any, Any]:
    """`_both` on a JSONL file of `events` decoded by the typed decoders (`TYPED_FROM` 0)."""
    path = Path(folder) / "events.jsonl"
    path.write_text("".join(e if isinstance(e, str) else json.dumps(e) + "\n" for e in events))
    run = Run(events=EventStream(path, header=False), path=str(path), format="events")
    with mock.patch.object(passes, "TYPED_FROM", 0):
        return _both(case, run, _fresh)


def _struct_takes(event: dict[str, Any]) -> bool:
    """Whether `decode.kind_events` takes `event`: a kind with a struct of its own, and a
    response's usage an object or null (anything else goes back to dicts, tested below);
    a call whose name is not text is the run's error, found in dicts by the reference."""
    usage = event.get("usage")
    if event["type"] in ("tool.call", "mcp.call") and tool_call_name(event) is None:
        return False
    return event["type"] in decode.KINDS and (usage is None or isinstance(usage, dict))


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs, traces().map(lambda evs: [e for e in evs if _struct_takes(e)]))
def test_the_pass_over_each_kinds_structs_agrees(statements: list[str], events: list[Any]) -> None:
    # only events the structs take: nothing goes back to dicts (a readable run handed to
    # the dict decoder counts as handed over, see `_both`)
    case = _compiled(statements)
    gone_back = AssertionError("decoded into dicts")
    with (
        tempfile.TemporaryDirectory() as folder,
        mock.patch.object(passes, "typed_batches", side_effect=gone_back),
    ):
        reference, generated = _on_stream(case, events, folder)
    assert generated == reference, "\n".join(statements)


_CALL = '{"type": "tool.call", "name": "search", "callId": "c1", "arguments": {"q": "x"}}\n'
_RESULT = '{"type": "tool.result", "callId": "c1", "output": "Paris"}\n'
_ANSWER = '{"type": "llm.response", "output": "It is 20 C in Paris"}\n'


def _used(usage: str) -> str:
    """A response line whose `usage` is the JSON text `usage`."""
    return '{"type": "llm.response", "usage": ' + usage + ', "output": "It is 20 C"}\n'


_TIMED = '{"type": "tool.result", "callId": "c1", "output": "x", "at": "2026-01-01T00:01:00Z"}\n'


@pytest.mark.parametrize(
    "lines",
    [
        [_CALL, '{"type": "mcp.call", "name": "search", "arguments": {}, "result": "x"}\n'],
        [_CALL, _RESULT, '{"type": "other.kind", "output": 1}\n', _ANSWER],
        [_CALL, '{"type": "tool.call", "name": "search", "type": "other.kind"}\n', _ANSWER],
        [_CALL, '{"type": "tool.call", "name": "search", "type": "tool.result"}\n', _RESULT],
        [_CALL, '{"name": "search"}\n', _RESULT, _ANSWER],  # no kind
        [_CALL, '{"type": 5}\n', _ANSWER],
        [_CALL, '{"type": "tool.call", "name": "search", "callId": ["c1"]}\n', _RESULT],
        [_CALL, _RESULT, '{"type": "llm.response", "tokensIn": -1, "output": "x"}\n'],
        [_CALL, '{"type": "tool.call", "name": "search", "id": "c1"}\n', _RESULT, _ANSWER],
        # a response's usage: a struct of the counts' spellings, or back to dicts
        [_CALL, _used("[3, 4]"), _ANSWER],
        [_CALL, _used("7"), _ANSWER],
        [
            _CALL,
            '{"type": "llm.response", "usage": null, "output": {"usage": {"input_tokens": 5}}}\n',
        ],
        [_used('{"promptTokens": 1, "promptTokens": 7, "x": [{}], "completionTokens": 2}')],
        [_used('{"input_tokens": 4, "output_tokens": 1, "completionTokens": -1}')],
        [_used('{"prompt_tokens": 4, "completion_tokens": 1.5}')],
        [_used('{"promptTokenCount": 3, "candidatesTokenCount": 2, "x": 1}')],
        [_used('{}, "tokensOut": 3')],
        # a request no response names (an mcp.call sends the run to dicts): unanswered
        [
            '{"type": "llm.request", "id": "r1"}\n',
            '{"type": "llm.request", "id": "r2"}\n',
            _used('{"promptTokens": 1, "completionTokens": 2}, "requestId": "r2"'),
            '{"type": "mcp.call", "name": "search", "arguments": {}, "result": "x"}\n',
        ],
        # requests named again and answered out of order: the request waiting outside the
        # generated pass's table is filed, replaced or answered as the reference's table
        [
            '{"type": "llm.request", "id": "r0"}\n',
            '{"type": "llm.request", "id": "r1"}\n',
            '{"type": "llm.request", "id": "r0"}\n',
            _used('{"promptTokens": 1, "completionTokens": 2}, "requestId": "r9"'),
        ],
        [
            '{"type": "llm.request", "id": "r0"}\n',
            '{"type": "llm.request", "id": "r1"}\n',
            '{"type": "llm.request", "id": "r0"}\n',
            _used('{"promptTokens": 1, "completionTokens": 2}, "requestId": "r0"'),
            _used('{"promptTokens": 1, "completionTokens": 2}, "requestId": "r1"'),
        ],
        [
            '{"type": "llm.request", "id": "r0"}\n',
            '{"type": "llm.request", "id": "r1"}\n',
            _used('{"promptTokens": 1, "completionTokens": 2}, "requestId": "r0"'),
            '{"type": "llm.request", "id": 1}\n',
            '{"type": "llm.request", "id": "1"}\n',
            _used('{"promptTokens": 1, "completionTokens": 2}, "requestId": 1'),
        ],
        [
            '{"type": "llm.request", "id": "r0"}\n',
            '{"type": "llm.request"}\n',
            '{"type": "llm.request", "id": "r1"}\n',
            _used('{"promptTokens": 1, "completionTokens": 2}, "requestId": "r1"'),
            _used('{"promptTokens": 1, "completionTokens": 2}, "requestId": 1.0'),
        ],
        # the time of the last event: read from its line (blank lines after it skipped)
        ['{"type": "user.message", "at": "2026-01-01T00:00:00Z"}\n', _CALL, _TIMED, "\n \n"],
        [
            '{"type": "user.message", "at": "2026-01-01T00:00:00Z"}\r\n',
            _TIMED.replace("\n", "\r\n"),
        ],
        ['{"type": "user.message", "at": "2026-01-01T00:00:00Z"}\n', _TIMED, _CALL],
        [
            '{"type": "user.message", "at": "2026-01-01T00:00:00Z"}\n',
            _CALL,
            '{"type": "error", "at": 5}\n',
        ],
        # an `at` that is not a time: the first, the last (from its line), past a number
        ['{"type": "user.message", "at": "not a time"}\n', _CALL, _TIMED],
        [
            '{"type": "user.message", "at": "2026-01-01T00:00:00Z"}\n',
            _CALL,
            _TIMED.replace("2026-01-01T00:01:00Z", "2026-13-45T99:00:00Z"),
        ],
        [_TIMED, '{"type": "user.message", "at": "soon"}\n', '{"type": "error", "at": 5}\n'],
        [_TIMED, '{"type": "user.message", "at": "soon"}\n', _TIMED, "\n"],
    ],
)
@pytest.mark.parametrize(
    "statements",
    [
        ["tool search called", "answer matches /Paris/"],
        ['every tool search result == "Paris"', "tool search args has q", "tokens < 10"],
        ["answer cites tool search", "cost < $1", "tools == [search, search]", "latency < 5s"],
    ],
)
def test_what_the_structs_cannot_take_is_read_as_the_reference_reads_it(
    lines: list[str], statements: list[str]
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        reference, generated = _on_stream(_compiled(statements), lines, folder)
    assert generated == reference


# ---- fragments ----------------------------------------------------------------------------

any_value = st.one_of(json_value, st.just(MISSING), st.floats(allow_nan=True))


@settings(max_examples=examples(300), deadline=None)
@given(call_tests, any_value)
def test_every_fragment_agrees_with_its_closure(statement: str, value: Any) -> None:
    node = parse(statement).program.statements[0]
    assert isinstance(node, ast.Check) and isinstance(node.predicate, ast.CallTest)
    pred = node.predicate.test
    names: dict[str, Any] = {}

    class Names:
        def const(self, v: Any) -> str:
            names[f"C{len(names)}"] = v
            return f"C{len(names) - 1}"

    source = registry.fragment(Names(), pred, "Json")
    closure = registry.value_test(pred, "Json")
    if source is None:  # a node without a fragment: the closure is called (tested below)
        return
    made = eval(f"lambda v: {source}", {**names, "MISSING": MISSING})
    assert bool(made(value)) == bool(closure(value)), source


def test_every_family_states_its_fragment() -> None:
    # a required field: a family that does not say cannot be declared at all
    assert "fragment" in {f.name for f in attrs.fields(Family) if f.default is attrs.NOTHING}
    for family in registry.FAMILIES:
        if family.compile is not None:
            assert family.fragment is None, family.name  # reads the run: no value test
        else:
            assert family.fragment is not None, family.name


def test_a_test_without_a_fragment_calls_its_closure() -> None:
    # Every test that applies to JSON values has a fragment today (`in order` and `only`
    # apply to lists of names, never to arguments); the fallback is for a family that
    # has none, made here by hand: the generated code calls the closure, and says so.
    from evaldsl.language.paths import path_finder
    from evaldsl.runs.index import CallProbe, Needs

    def test(v: Any) -> bool:
        return isinstance(v, list) and v[:1] == [1]

    probe = CallProbe("search", False, path_finder("$.items"), test, "items", False)
    needs = Needs(probes=[probe])
    made = passes.pass_for(needs, raw=False)
    (note,) = [n for n in made.notes if "closure" in n]
    assert f"{note.split(':')[0]}(v)" in made.source
    events = [
        {"type": "tool.call", "name": "search", "arguments": {"items": [2]}},
        {"type": "tool.call", "name": "search", "arguments": {"items": [1, 3]}},
    ]
    facts = passes.index_run(Run(events=events), needs)
    reference = reference_index_run(Run(events=events), needs)
    tally, expected = facts.trace.tallies[probe], reference.trace.tallies[probe]  # type: ignore[union-attr]
    assert (tally.decided, tally.first, tally.last) == (True, 2, [[1, 3]])
    assert (tally.decided, tally.first, tally.last) == (
        expected.decided,
        expected.first,
        expected.last,
    )


def test_the_source_holds_no_suite_value_and_is_cached_by_shape() -> None:
    a = _compiled(['tool secret_tool args $.zebra == "hunter2"; answer contains "x"'])
    b = _compiled(['tool other args $.lion == "swordfish"; answer contains "y"'])
    pa, pb = (passes.pass_for(c.needs, raw=True) for c in (a, b))
    for word in ("secret_tool", "zebra", "hunter2"):
        assert word not in pa.source
    assert pa.source == pb.source  # one shape, one code object
    assert pa.run.__code__ is pb.run.__code__


@contextlib.contextmanager
def _chain_of(tools: int) -> Iterator[None]:
    """Passes generated with a chain of at most `tools` name comparisons (the rest found by
    their slot), none kept from before or for after."""
    passes.purge()
    try:
        with mock.patch.object(codegen, "CHAIN_TOOLS", tools):
            yield
    finally:
        passes.purge()


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs, traces(), st.sampled_from([0, 1, 2]))
def test_tools_found_by_their_slot_agree(
    statements: list[str], events: list[Any], chain: int
) -> None:
    case = _compiled(statements)
    with _chain_of(chain):
        reference, generated = _both(case, Run(events=events, format="events"), lambda n: n)
    assert generated == reference, "\n".join(statements)
    kept = [e for e in events if _struct_takes(e)]
    with _chain_of(chain), tempfile.TemporaryDirectory() as folder:
        reference, generated = _on_stream(_compiled(statements), kept, folder)
    assert generated == reference, "\n".join(statements)


#: Many tools: more than the chain compares, most only counted, some tested.
MANY_TOOLS = [f"t{i:02d}" for i in range(30)]
many_tools = st.sampled_from(MANY_TOOLS)
many_tool_programs = st.lists(
    st.one_of(
        st.builds(
            lambda t, n: f"tool {t} called at least {n} times", many_tools, st.integers(0, 2)
        ),
        st.builds(lambda t, n: f"tool {t} called {n} times", many_tools, st.integers(0, 2)),
        many_tools.map(lambda t: f"no tool {t}"),
        st.builds(lambda t, x: f'tool {t} args $.q == "{x}"', many_tools, st.sampled_from("ab")),
        many_tools.map(lambda t: f"every tool {t} args $.q is string"),
        st.builds(
            lambda t, x: f'tool {t} result contains "{x}"', many_tools, st.sampled_from("ab")
        ),
        many_tools.map(lambda t: f"answer cites tool {t}"),
        many_tools.map(lambda t: f"tools contains {t}"),
        st.lists(many_tools, min_size=2, max_size=3).map(
            lambda ts: f"tools in order [{', '.join(ts)}]"
        ),
        st.lists(many_tools, min_size=1, max_size=12).map(
            lambda ts: f"tools only [{', '.join(ts)}]"
        ),
    ),
    min_size=1,
    max_size=40,
)


@st.composite
def many_tool_traces(draw: st.DrawFn) -> list[dict[str, Any]]:
    # names the case names, names it does not, and names that are not text
    names = st.one_of(
        many_tools, many_tools, st.sampled_from(["other", "t99", "T01", ""]),
        st.sampled_from([None, 1, 2.5, True, [1], {"a": 1}]),
    )  # fmt: skip
    events: list[dict[str, Any]] = []
    for i in range(draw(st.integers(0, 30))):
        kind = draw(
            st.sampled_from(["tool.call", "tool.call", "tool.result", "mcp.call", "llm.response"])
        )
        ev: dict[str, Any] = {"type": kind, "id": f"e{i}"}
        if kind == "tool.call":
            ev["name"] = draw(names)
            ev["callId"] = f"c{i}"
            ev["arguments"] = {"q": draw(st.sampled_from(["a", "b", 1]))}
        elif kind == "mcp.call":
            ev[draw(st.sampled_from(["name", "tool"]))] = draw(names)
            ev["arguments"] = {"q": "a"}
            ev["result"] = draw(st.sampled_from(["a", "b"]))
        elif kind == "tool.result":
            ev["callId"] = f"c{draw(st.integers(0, max(i - 1, 0)))}"
            ev["output"] = draw(st.sampled_from(["a", "b", {"q": "a"}]))
        else:
            ev["output"] = draw(st.sampled_from(["a", "b", "no"]))
        events.append(ev)
    return events


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(many_tool_programs, many_tool_traces())
def test_a_case_naming_many_tools_agrees(statements: list[str], events: list[Any]) -> None:
    case = _compiled(statements)
    reference, generated = _both(case, Run(events=events, format="events"), lambda n: n)
    assert generated == reference, "\n".join(statements)
    with tempfile.TemporaryDirectory() as folder:
        reference, generated = _on_stream(_compiled(statements), events, folder)
    assert generated == reference, "\n".join(statements)


def test_a_case_naming_thousands_of_tools_is_generated_and_agrees() -> None:
    # a chain of one `elif` per tool nested as deep as the tools: past ~3,000 tools,
    # compiling the generated source raised RecursionError (a traceback from `run`)
    statements = [f"no tool n{i:05d}" for i in range(5000)]
    statements += [f'tool t{i:03d} args $.q == "a"' for i in range(40)]
    statements += [f'every tool t{i:03d} result == "ok"' for i in range(0, 40, 4)]
    case = _compiled([*statements, "tools contains t039"])
    calls = ["t039", "n04999", "t000", "other", "t004", "n00000"]
    events: list[dict[str, Any]] = []
    for i, name in enumerate(calls):
        events.append(
            {"type": "tool.call", "name": name, "callId": f"c{i}", "arguments": {"q": "a"}}
        )
        events.append({"type": "tool.result", "callId": f"c{i}", "output": "ok" if i % 2 else "no"})
    reference, generated = _both(case, Run(events=events, format="events"), lambda n: n)
    assert generated == reference
    statuses = [v[0] for v in generated[0][0]]
    assert statuses[0] == statuses[4999] == "fail" and statuses[1] == "pass"  # n00000, n04999
    assert statuses[5000] == statuses[5039] == "pass" and statuses[5001] == "fail"


def test_a_pass_python_cannot_compile_leaves_the_run_to_the_reference(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from evaldsl.tools.cli import main

    statements = ['tool search args $.q == "a"', "tool fetch called", 'answer contains "o"']
    events = [
        {"type": "tool.call", "name": "search", "callId": "c1", "arguments": {"q": "a"}},
        {"type": "tool.result", "callId": "c1", "output": "x"},
        {"type": "llm.response", "output": "done"},
    ]
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    case = _compiled(statements)
    expected = _verdicts(case, reference_index_run(Run(events=events), case.needs))
    too_deep = RecursionError("maximum recursion depth exceeded during compilation")
    passes.purge()
    # a limit of Python's compiler is a SyntaxError of the pass: the reference runs too
    with mock.patch.object(
        codegen, "compiled", side_effect=SyntaxError("too many statically nested blocks")
    ):
        assert _verdicts(case, passes.index_run(Run(events=events), case.needs)) == expected
    passes.purge()
    try:
        with mock.patch.object(codegen, "compiled", side_effect=too_deep) as compiling:
            for run in (
                Run(events=events),
                Run(events=EventStream(path, header=False), path=str(path)),
            ):
                assert _verdicts(case, passes.index_run(run, case.needs)) == expected
            assert compiling.called
            suite = tmp_path / "suite.eval"
            suite.write_text('case "c"\ncassette "run.jsonl"\n' + "\n".join(statements) + "\n")
            assert main(["inspect", "--code", str(suite)]) == 0
    finally:
        passes.purge()
    assert "# no generated pass (the generated pass did not compile: maximum recursion" in (
        capsys.readouterr().out
    )


@pytest.mark.parametrize(
    ("keys", "stars"),
    [(0, groupgen.STARS_WRITTEN), (0, 30), (groupgen.STEPS_WRITTEN - 9, 8), (120, 0)],
)
def test_a_path_of_many_steps_is_walked_however_deep(keys: int, stars: int) -> None:
    # each step written out is a block inside the one before (a `[*]`, a loop), and Python
    # compiles at most 100 levels of indentation and 20 nested loops in a function: past
    # `STEPS_WRITTEN` steps or `STARS_WRITTEN` stars, the path's finder walks it
    path = "$" + ".k" * keys + ".a" + "[*]" * stars
    # every kind of test that loops inside the path's loops (sub-objects and texts in a
    # list, hits of a Set), and an `every` inlined
    deep = [
        *(f"tool w args {path} contains {{k: {_q(t)}}}" for t in "abcd"),
        *(f"tool w args {path} contains {_q(t)}" for t in "abcd"),
        *(f"tool w args {path} matches /{t}/" for t in "abcd"),
        f"every tool w args {path} != 7",
    ]
    case = _compiled([f"tool w args {path} == 1", f"tool w args {path} == 2", *deep])
    source = passes.pass_for(case.needs, raw=False).source  # (TooLarge if not compiled)
    written = stars <= groupgen.STARS_WRITTEN and keys + 1 + stars <= groupgen.STEPS_WRITTEN
    assert ("x0 = " in source) is written
    value: Any = 1
    for _ in range(stars):
        value = [value, [3]]
    arguments: list[Any] = [{"a": v} for v in (value, [3], "x")]
    for _ in range(keys):
        arguments = [{"k": a} for a in arguments]
    events = [{"type": "tool.call", "name": "w", "arguments": a} for a in arguments]
    reference, generated = _both(case, Run(events=events, format="events"), lambda n: n)
    assert generated == reference
    assert [v[0] for v in reference[0][0]][:2] == ["pass", "fail"]


def test_a_call_is_compared_with_a_few_tools_however_many_are_named() -> None:
    tested = [f'tool t{i:03d} args $.q == "a"' for i in range(40)]
    counted = [f"no tool u{i:03d}" for i in range(200)]
    results = [f'tool t{i:03d} result contains "b"' for i in range(0, 40, 3)]
    case = _compiled([*tested, *counted, "tools contains t039", *results])
    source = passes.pass_for(case.needs, raw=False).source
    # the tool.call branch and the mcp.call branch: each compares at most CHAIN_TOOLS names
    assert source.count("name == T") == 2 * codegen.CHAIN_TOOLS
    assert source.count(".get(name) if isinstance(name, str) else None") == 2
    # a result finds its call's tool by a binary search of the slots, not a chain
    assert "elif slot ==" not in source
    linked = [
        {"type": "tool.call", "name": "t039", "callId": "r1", "arguments": {}},
        {"type": "tool.result", "callId": "r1", "output": "abc"},
        {"type": "tool.call", "name": "t036", "callId": "r2", "arguments": {}},
        {"type": "tool.result", "callId": "r2", "output": "xyz"},
    ]
    got = {v.message.split('"')[1]: v.status for v in case.check(linked).verdicts[-len(results) :]}
    assert got["t039"] == "pass" and got["t036"] == got["t000"] == "fail"
    calls = [
        {"type": "tool.call", "name": n, "callId": n, "arguments": {"q": "a"}}
        for n in ("t039", "u007", "t000")
    ]
    verdicts = [v.status for v in case.check(calls).verdicts]
    assert verdicts[0] == verdicts[39] == "pass" and verdicts[1] == "fail"
    assert verdicts[40 + 7] == "fail" and verdicts[40] == "pass" and verdicts[240] == "pass"


def test_many_tests_on_one_path_are_decided_together() -> None:
    cities = [f"City{i}" for i in range(300)]
    statements = [f'tool w args $.city == "{c}"' for c in cities]
    case = _compiled(statements)
    made = passes.pass_for(case.needs, raw=False)
    assert "_eq.pop(v)" in made.source and made.source.count("\n") < 200
    events = [{"type": "tool.call", "name": "w", "arguments": {"city": c}} for c in cities[::2]]
    statuses = case.check(events).statuses
    assert statuses == ["pass" if i % 2 == 0 else "fail" for i in range(300)]


def _nested(depth: int, leaf: Any) -> Any:
    for _ in range(depth):
        leaf = {"a": leaf}
    return leaf


#: A path whose values multiply (three `..`), a value on which it crosses the limit the
#: test sets, and tests on it and beside it.
_WIDE = "$..*..*..*"
_CROSSES = _nested(30, 5)
_ON_WIDE = [
    f"tool search args {_WIDE} == 5",
    f"every tool search args {_WIDE} == 5",
    f"tool search result {_WIDE} == 5",
    f"every tool search result {_WIDE} exists",
    f"tool fetch args {_WIDE} == 5",
    f"tool search args {_WIDE} in [5, 6]",
    "tool search args $.a.a exists",
    f"answer json {_WIDE} exists",
]


@settings(max_examples=examples(40), deadline=None)
@given(
    st.lists(st.sampled_from(_ON_WIDE), min_size=1, max_size=4, unique=True),
    st.lists(
        st.tuples(
            st.sampled_from(["search", "fetch"]),
            st.sampled_from([_nested(3, 5), _nested(3, 4), _CROSSES, {"x": 5}]),
            st.sampled_from([_nested(3, 5), _CROSSES, None]),
        ),
        min_size=1,
        max_size=4,
    ),
)
def test_a_path_past_the_values_limit_is_an_error_in_both_passes(
    statements: list[str], calls: list[tuple[str, Any, Any]]
) -> None:
    """A call on which a path's values pass `MAX_PATH_VALUES` (1,000 here; `$..*..*..*`
    finds 4,960 values 30 levels deep) is stopped there, in the generated pass as in the
    reference: the same error verdicts, and the same verdicts beside them."""
    events: list[dict[str, Any]] = []
    for i, (tool, arguments, result) in enumerate(calls):
        call = {"type": "tool.call", "name": tool, "callId": f"c{i}", "arguments": arguments}
        events.append(call)
        if result is not None:
            events.append({"type": "tool.result", "callId": f"c{i}", "output": result})
    events.append({"type": "llm.response", "output": json.dumps(calls[-1][1])})
    case = _compiled(statements)
    with mock.patch.object(jsonpaths, "MAX_PATH_VALUES", 1000):
        reference, generated = _both(case, Run(events=events, format="events"), _fresh)
    assert generated == reference, "\n".join(statements)
    if not any(_CROSSES in (arguments, result) for _, arguments, result in calls):
        assert all(v[0] != "error" for v in reference[0][0])


@st.composite
def linked_traces(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Calls and results only, every id from a pool of three: calls filed under an id a
    fed call had, results naming calls by event id and by callId, twice."""
    pool = st.sampled_from(["a", "b", "c"])
    events: list[dict[str, Any]] = []
    for _ in range(draw(st.integers(1, 14))):
        if draw(st.booleans()):
            ev: dict[str, Any] = {"type": "tool.call", "name": draw(tools)}
            for field in ("id", "callId"):
                if draw(st.booleans()):
                    ev[field] = draw(pool)
        else:
            ev = {"type": "tool.result", "callId": draw(pool), "output": draw(json_value)}
        events.append(ev)
    return events


result_tests = st.lists(
    st.builds(
        lambda every, tool, path, test: (
            f"{'every ' if every else ''}tool {tool} result{path} {test}"
        ),
        st.booleans(),
        tools,
        st.sampled_from(["", " $.city", " $.items[*]"]),
        value_tests,
    ).filter(_compiles),
    min_size=1,
    max_size=4,
)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(result_tests, linked_traces())
def test_results_are_linked_to_calls_as_the_reference_links_them(
    statements: list[str], events: list[Any]
) -> None:
    """The generated pass files a call only until its result comes (`FedKeys`)."""
    case = _compiled(statements)
    reference, generated = _both(case, Run(events=events, format="events"), lambda n: n)
    assert generated == reference


_CITED = ["Oslo", "Paris", "Rome", "12"]


@st.composite
def cited_traces(draw: st.DrawFn) -> list[dict[str, Any]]:
    """`linked_traces` whose results hold texts an answer at the end may cite: which
    results are linked to which calls (by event id or callId, hidden, the last one kept)
    shows in how many values `cites` finds and which."""
    events = draw(linked_traces())
    for ev in events:
        if ev["type"] == "tool.result":
            ev["output"] = draw(st.sampled_from([*_CITED, {"city": "Bergen"}, ["Oslo", 12]]))
    answer = " ".join(draw(st.lists(st.sampled_from([*_CITED, "Bergen"]), max_size=3)))
    return [*events, {"type": "llm.response", "output": answer}]


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(result_tests, linked_traces(), st.integers(0, 2))
def test_result_groups_fed_by_key_are_linked_as_the_reference_links_them(
    statements: list[str], events: list[Any], written: int
) -> None:
    """Result groups fed by key count in the result groups still open, which keep calls
    filed for their results; each counts the results fed to it."""
    with mock.patch.object(overflow, "GROUPS_WRITTEN", written):
        case = _compiled(
            [*statements, "tool search result $.city == 1", "tool fetch result $.q.r == 2"]
        )
        reference, generated = _both(case, Run(events=events, format="events"), lambda n: n)
    assert generated == reference, "\n".join(statements)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(tools.map(lambda t: f"answer cites tool {t}"), min_size=1, max_size=2),
    st.lists(result_tests, max_size=1).map(lambda xs: [s for x in xs for s in x]),
    cited_traces(),
)
def test_kept_calls_are_linked_as_the_reference_links_them(
    cites: list[str], tests: list[str], events: list[Any]
) -> None:
    """Kept calls are filed under their event ids only when a result names one
    (`codegen._file_event_ids`): the same records, the same results in them."""
    case = _compiled([*cites, *tests])
    reference, generated = _both(case, Run(events=events, format="events"), lambda n: n)
    assert generated == reference


def test_a_kept_calls_event_id_defers_to_what_came_after_it() -> None:
    events = [
        {"type": "tool.call", "name": "search", "id": "a", "callId": "b"},
        {"type": "tool.call", "name": "other", "callId": "a"},  # hides it under "a"
        {"type": "tool.call", "name": "search", "id": "c", "callId": "d"},
        {"type": "tool.call", "name": "search", "callId": "c"},  # takes "c" over
        {"type": "tool.call", "name": "search", "id": "e"},
        {"type": "tool.result", "callId": "e", "output": "Bergen"},  # by its event id
        {"type": "tool.result", "callId": "a", "output": "Oslo"},  # names no kept call
        {"type": "tool.result", "callId": "c", "output": "Rome"},  # the fourth call's
        {"type": "tool.result", "callId": "d", "output": "Paris"},  # the third call's
        {"type": "llm.response", "output": "Oslo, Rome and Paris"},
    ]
    case = _compiled(["answer cites tool search at least 4 values"])
    reference, generated = _both(case, Run(events=events, format="events"), lambda n: n)
    assert generated == reference
    assert reference[0][0][0][1] == (
        'answer cites 2 of 3 values from tool "search": "Paris", "Rome", expected at least 4'
    )


def test_a_kept_call_is_the_record_the_reference_makes() -> None:
    """The pass builds records slot by slot (not through `__init__`): every slot set, to
    what the reference sets it."""
    from evaldsl.runs.index import CallRecord

    events: list[dict[str, Any]] = [
        {"type": "tool.call", "name": "search", "callId": "a", "arguments": {"q": 1}},
        {"type": "tool.result", "callId": "a", "output": "Oslo", "isError": True},
        {"type": "tool.call", "name": "search", "callId": "b"},
        {"type": "mcp.call", "name": "search", "arguments": {}, "result": "Rome"},
    ]
    needs = _compiled(["answer cites tool search"]).needs
    made = passes.pass_for(needs, raw=False).run(events, None, True).calls["search"]
    reference = reference_index_events(events, needs).calls["search"]
    for ours, theirs in zip(made, reference, strict=True):
        for slot in CallRecord.__slots__:
            if slot != "arguments":  # (a kept call's arguments are never read)
                assert getattr(ours, slot) == getattr(theirs, slot), slot
        assert ours.arguments is MISSING


def test_a_call_filed_under_a_fed_calls_id_is_not_found_by_it() -> None:
    events = [
        {"type": "tool.call", "name": "search", "callId": "a"},
        {"type": "tool.result", "callId": "a", "output": {"q": "first"}},
        {"type": "tool.call", "name": "search", "id": "a", "callId": "b"},
        {"type": "tool.result", "callId": "a", "output": {"q": "second"}},  # not linked
        {"type": "tool.call", "name": "search", "id": "c"},
        {"type": "tool.result", "callId": "c", "output": {"q": "third"}},
    ]
    case = _compiled(['tool search result $.q == "second"', 'tool search result $.q == "third"'])
    reference, generated = _both(case, Run(events=events, format="events"), lambda n: n)
    assert generated == reference
    assert [v[0] for v in reference[0][0]] == ["fail", "pass"]


def test_a_fed_call_leaves_the_ids_later_calls_took_from_it() -> None:
    events = [
        {"type": "tool.call", "name": "search", "id": "a", "callId": "b"},
        {"type": "tool.call", "name": "search", "callId": "b"},  # b names this call now
        {"type": "tool.result", "callId": "a", "output": {"q": "first"}},
        {"type": "tool.result", "callId": "b", "output": {"q": "second"}},
    ]
    case = _compiled(['tool search result $.q == "first"', 'tool search result $.q == "second"'])
    reference, generated = _both(case, Run(events=events, format="events"), lambda n: n)
    assert generated == reference
    assert [v[0] for v in reference[0][0]] == ["pass", "pass"]


NAN = float("nan")


@pytest.mark.parametrize(
    "events",
    [
        [  # the waiting call's result names it by its event id
            {"type": "tool.call", "name": "search", "id": "e1", "callId": "c1"},
            {"type": "tool.result", "callId": "e1", "output": {"q": "first"}},
            {"type": "tool.result", "callId": "c1", "output": {"q": "second"}},
        ],
        [  # a later call's callId hides the waiting call
            {"type": "tool.call", "name": "search", "id": "e1", "callId": "c1"},
            {"type": "tool.call", "name": "other", "callId": "c1"},
            {"type": "tool.result", "callId": "c1", "output": {"q": "first"}},
            {"type": "tool.result", "callId": "e1", "output": {"q": "second"}},
        ],
        [  # two calls waiting, their results in the other order
            {"type": "tool.call", "name": "search", "id": "e1", "callId": "c1"},
            {"type": "tool.call", "name": "search", "id": "e2", "callId": "c2"},
            {"type": "tool.result", "callId": "c2", "output": {"q": "second"}},
            {"type": "tool.result", "callId": "c1", "output": {"q": "first"}},
        ],
        [  # one id for both, then a call filed under the fed id
            {"type": "tool.call", "name": "search", "id": "x", "callId": "x"},
            {"type": "tool.result", "callId": "x", "output": {"q": "first"}},
            {"type": "tool.call", "name": "search", "id": "x"},
            {"type": "tool.result", "callId": "x", "output": {"q": "second"}},
        ],
        [  # the same NaN object names the waiting call (a dict finds it by identity)
            {"type": "tool.call", "name": "search", "id": NAN, "callId": "c1"},
            {"type": "tool.result", "callId": NAN, "output": {"q": "first"}},
            {"type": "tool.result", "callId": "c1", "output": {"q": "second"}},
        ],
    ],
)
def test_the_call_waiting_outside_the_table_is_linked_as_the_reference_links_it(
    events: list[dict[str, Any]],
) -> None:
    case = _compiled(['tool search result $.q == "first"', 'tool search result $.q == "second"'])
    reference, generated = _both(case, Run(events=events, format="events"), lambda n: n)
    assert generated == reference


def test_more_tests_on_one_path_than_are_inlined_go_through_a_loop() -> None:
    """The loop over the open tests past `INLINE_MAX` (which `many_on_one_path` draws)."""
    # (kinds not decided together: `every … starts with`, an any-call `!=`)
    statements = [
        f'every tool w args $.city starts with "{c}"'
        if i % 3 == 0
        else f'tool w args $.city != "{c}"'
        for i, c in enumerate("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
    ]
    case = _compiled(statements)
    assert "_loop" in passes.pass_for(case.needs, raw=False).source
    events = [
        {"type": "tool.call", "name": "w", "arguments": {"city": c}}
        for c in ("Accra", "Bern", "Cairo", "Zurich")
    ]
    reference, generated = _both(case, Run(events=events, format="events"), lambda n: n)
    assert generated == reference
    assert {v[0] for v in reference[0][0]} == {"pass", "fail"}


# ---- failing closed -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "lines",
    [
        ['{"type": "tool.call", "name": "search"}', "[1, 2]"],  # not an object
        ['{"type": "tool.call", "name": "search"}', '{"type": "llm.response", "x": "\xff"}'],
        ['{"type": "tool.call", "name": "search"}', "{bad json"],
        ['{"type": "mystery"}', '{"type": "unknown"}'],  # nothing recognised
    ],
)
def test_the_typed_decoder_fails_closed(tmp_path: Path, lines: list[str]) -> None:
    path = tmp_path / "e.jsonl"
    data = "\n".join(lines).encode("utf-8", "surrogateescape").replace(b"\xc3\xbf", b"\xff")
    path.write_bytes(data + b"\n")
    case = _compiled(["tool search called"])
    run = Run(events=EventStream(path, header=False), path=str(path), format="events")
    with mock.patch.object(passes, "TYPED_FROM", 0), pytest.raises(RunError) as fast:
        passes.index_run(run, case.needs)
    with pytest.raises(RunError) as reference:
        reference_index_run(run, case.needs)
    assert str(fast.value) == str(reference.value)


def test_the_reference_can_be_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    case = _compiled(["tool search called"])
    monkeypatch.setenv("EVALDSL_REFERENCE", "1")
    case.check([{"type": "tool.call", "name": "search"}])
    assert not case.needs.passes  # no pass was generated
    monkeypatch.delenv("EVALDSL_REFERENCE")
    case.check([{"type": "tool.call", "name": "search"}])
    assert case.needs.passes
    assert os.environ.get("EVALDSL_REFERENCE") is None


def test_inspect_code_prints_each_cases_pass() -> None:
    import subprocess
    import sys

    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "evaldsl.tools.cli",
            "inspect",
            "--code",
            "examples/weather/weather.eval",
        ],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[1],
    )
    assert done.returncode == 0, done.stderr
    cases = done.stdout.count("\n# case ") + 1
    assert cases == 5  # `each` makes two of one
    # (its names and builtins as parameters the loop reads as locals: codegen.header)
    assert done.stdout.count("def index_pass(\n    events, again, is_list, *,\n") == cases
    assert "T1=T1," in done.stdout and "type=type," in done.stdout
    assert "# T1: tool 'get_weather'" in done.stdout  # what each name holds, beside
    # and when it runs: a small run goes through the reference pass (runs/passes.py)
    assert done.stdout.count("a smaller run is indexed by the reference pass") == cases
    # what is decoded of each kind, a response's usage as its counts (decode.usage_struct)
    assert "# tool.call events decoded with: arguments, callId, id, name\n" in done.stdout
    assert "usage (its token counts only)\n" in done.stdout
    source = done.stdout.split("def index_pass", 1)[1]
    assert "get_weather" not in "\n".join(
        line for line in source.splitlines() if not line.startswith("#")
    )


@settings(max_examples=examples(200), deadline=None)
@given(
    st.sampled_from(["$..city", "$.items..q", "$.items[0]..city", "$..limit", "$['q']..city"]),
    json_value,
)
def test_recursive_descent_is_found_as_jsonpath_ng_finds_it(path: str, value: Any) -> None:
    from jsonpath_ng.ext.parser import parse as ng_parse

    from evaldsl.language.paths import CompiledPath, compile_path

    compiled = compile_path(path)
    assert isinstance(compiled, CompiledPath) and compiled.steps is not None  # the fast form
    assert compiled.find(value) == [m.value for m in ng_parse(path).find(value)]


@settings(max_examples=examples(300), deadline=None)
@given(
    st.sampled_from(["a", "^P", "[0-9]+", "(?i)rain|sun", "s$", "^$", "é.", "\\bx\\b", ""]),
    st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=12),
)
def test_the_plain_search_agrees_with_re2s_own(pattern: str, text: str) -> None:
    from evaldsl.language.regexes import compile_regex, searcher

    compiled = compile_regex(pattern)
    assert searcher(compiled)(text) == (compiled.search(text) is not None)


# pieces of patterns: literal characters, escaped punctuation, classes, anchors,
# repetitions, groups of literal alternatives, `|`, and what only RE2 reads
_PIECES = ["a", "b", "P", "é", " ", "\\.", "\\/", "\\$", "\\n", ".", "\\d", "\\b", "^", "$"]
_PIECES += ["?", "*", "+", "{2}", "{1,}", "??", "(a|b)", "(?:ab|)", "(P|é.)", "|", "(", ")"]
_PIECES += ["[ab]", "\\Q", "{", "x{,2}", "(?i)a"]


@settings(max_examples=examples(1500), deadline=None)
@given(
    st.lists(st.sampled_from(_PIECES), max_size=6).map("".join),
    st.sampled_from(["", "m", "s", "i", "ms"]),
    st.one_of(
        st.text(alphabet="abPé .\n/-$_2", max_size=10),
        st.lists(
            st.sampled_from(["a", "b", "P", "é", " ", ".", "/", "$", "\n", "ab"]), max_size=6
        ).map("".join),
    ),
)
def test_a_regex_of_fixed_texts_is_searched_for_as_re2_searches(
    pattern: str, flags: str, text: str
) -> None:
    from evaldsl.language.regexes import RegexProblem, compile_regex
    from evaldsl.language.regexlits import text_searcher

    compiled = compile_regex(pattern, flags)
    if isinstance(compiled, RegexProblem):
        return  # the checker rejects it
    assert text_searcher(pattern, flags)(text) == (compiled.search(text) is not None)


def test_which_regexes_are_fixed_texts() -> None:
    from evaldsl.language.regexlits import Literals, literal_form, required_text

    assert literal_form("^(analytics|prod)$") == Literals(("analytics", "prod"), True, True)
    assert literal_form("^https:\\/\\/x\\/") == Literals(("https://x/",), True, False)
    assert literal_form("tool call|ZZZ") == Literals(("tool call", "ZZZ"), False, False)
    assert literal_form("(a|b)(c|d)$") == Literals(("ac", "ad", "bc", "bd"), False, True)
    for pattern, flags in [("ZZZ", "i"), ("^a", "m"), ("a+", ""), ("[ab]", ""), ("^a|b", "")]:
        assert literal_form(pattern, flags) is None, pattern
    assert required_text("\\/archive\\/\\d{5}\\.csv$") == "/archive/"
    assert required_text("\\d+ C") == " C"
    assert required_text("ab?c") == "a"  # `b` may be absent
    assert required_text("a|bc") is None and required_text("abc", "i") is None


def test_text_subclasses_are_compared_as_each_test_compares_them() -> None:
    # events from a live target may hold str subclasses (a StrEnum): a text to every test,
    # as JSON equality says (`==` held for `str` itself only, so `== "Paris"` failed
    # where `in ["Paris"]` and `contains {city: "Paris"}` held); a table of texts decided
    # together compares such a value text by text
    import enum

    class City(enum.StrEnum):
        PARIS = "Paris"

    statements = [
        'tool w args $.city == "Paris"',
        'tool w args $.city in ["Paris", "Oslo"]',
        'tool w args $.city contains "ar"',
        'tool w args contains {city: "Paris"}',
        "tool w args $.city matches /^P/",
        'every tool w args $.city != "Paris"',
        'answer == "Paris"',
        *(f'tool w args $.city == "{c}"' for c in ("A", "B", "C", "Paris")),
        *(f'tool w args $.city contains "{c}"' for c in ("x", "y", "z", "ari")),
        *(f"tool w args contains {{city: {_q(c)}}}" for c in ("a", "b", "c", "Paris")),
    ]
    case = _compiled(statements)
    assert "g0_eq" in passes.pass_for(case.needs, raw=False).source  # (the table)
    events = [
        {"type": "tool.call", "name": "w", "arguments": {"city": City.PARIS}},
        {"type": "llm.response", "output": City.PARIS},
    ]
    reference, generated = _both(case, Run(events=events, format="events"), lambda n: n)
    assert generated == reference
    statuses = [v[0] for v in reference[0][0]]
    assert (
        statuses
        == ["pass"] * 5 + ["fail", "pass"] + ["fail"] * 3 + ["pass"] + (["fail"] * 3 + ["pass"]) * 2
    )


def test_a_file_of_no_events_is_not_a_run_whatever_its_output(tmp_path: Path) -> None:
    path = tmp_path / "trace.json"
    for output in ("null", "[]", '"an answer"'):
        path.write_text(f'{{"events": [], "output": {output}}}')
        result = evaldsl.compile("no tool execute_shell").check(path)
        assert result.error is not None and result.statuses == ["error"], output
    # a value run (what a `run` target returned) is its output
    value = {"events": [], "output": "an answer"}
    assert evaldsl.compile('output == "an answer"').check(value).statuses == ["pass"]


def test_a_model_that_is_not_text_prices_as_the_reference_says() -> None:
    # a model id that is not text (here not even hashable) names no price: the cost
    # cannot be computed, in both passes
    case = _compiled(["cost <= $1", "tokens > 1"])
    events = [
        {"type": "llm.request", "model": {"odd": 1}},
        {"type": "llm.response", "usage": {"promptTokens": 5, "completionTokens": 1}},
    ]
    reference, generated = _both(case, Run(events=events, format="events"), lambda n: n)
    assert generated == reference
    assert reference[0][0][0][0] == "error"  # cost: no price known


class _Level(int):
    """An int subclass (an `IntEnum`-like value a live target may put in its events)."""


# every kind of number a threshold meets: bools (not numbers), NaN (passes none), the
# infinities, an int past a double's range, -0.0, subclasses, and values at a threshold
_ODD_NUMBERS = [
    True, False, math.nan, math.inf, -math.inf, 10**30, -(10**30), -0.0, 0, 1, 2.5, 7, 100,
    _Level(7), _Level(-1), "7", None, [7],
]  # fmt: skip


_threshold_ops = st.sampled_from(["<", "<=", ">", ">="])


@settings(max_examples=examples(200), deadline=None)
@given(
    _threshold_ops,
    # (distinct as written: equal tests share one probe, so four equal bounds are one test)
    st.lists(numbers, min_size=4, max_size=8, unique_by=str),
    st.lists(st.tuples(_threshold_ops, numbers), max_size=8),
    st.lists(st.sampled_from(_ODD_NUMBERS), max_size=8),
)
def test_thresholds_decided_together_meet_every_kind_of_number(
    op: str, bounds: list[Any], others: list[tuple[str, Any]], values: list[Any]
) -> None:
    """The sorted thresholds are compared with the next one to pass first (`_next`)."""
    tests = [f"$.n {op} {n}" for n in bounds] + [f"$.n {o} {n}" for o, n in others]
    case = _compiled([f"tool w args {t}" for t in tests])
    assert "_next" in passes.pass_for(case.needs, raw=False).source
    events = [{"type": "tool.call", "name": "w", "arguments": {"n": v}} for v in values]
    reference, generated = _both(case, Run(events=events, format="events"), lambda n: n)
    assert generated == reference


@settings(max_examples=examples(200), deadline=None)
@given(
    _threshold_ops,
    st.lists(numbers, min_size=4, max_size=8, unique_by=str),
    st.lists(st.tuples(_threshold_ops, numbers), max_size=8),
    st.sampled_from(["$.n", "$.n[*]", "$..n"]),
    # each call: its value at `n` (a list of them for the paths finding many), or none
    st.lists(
        st.one_of(
            st.none(),
            st.sampled_from(_ODD_NUMBERS),
            st.lists(st.sampled_from(_ODD_NUMBERS), max_size=3),
        ),
        max_size=8,
    ),
)
def test_every_thresholds_decided_together_meet_every_kind_of_number(
    op: str, bounds: list[Any], others: list[tuple[str, Any]], path: str, values: list[Any]
) -> None:
    """`every` thresholds of one path fail at the first call whose largest (or smallest)
    number does not pass them, popped from a sorted list; a call without a number fails
    them all."""
    tests = [f"{path} {op} {n}" for n in bounds] + [f"{path} {o} {n}" for o, n in others]
    case = _compiled([f"every tool w args {t}" for t in tests])
    assert f"_all_{_ORDER_NAMES[op]}.pop()" in passes.pass_for(case.needs, raw=False).source
    events = [
        {"type": "tool.call", "name": "w", "arguments": {} if v is None else {"n": v}}
        for v in values
    ]
    reference, generated = _both(case, Run(events=events, format="events"), lambda n: n)
    assert generated == reference


_ORDER_NAMES = {"<": "lt", "<=": "le", ">": "gt", ">=": "ge"}


class _Sky(enum.StrEnum):
    """A str subclass (a `StrEnum` a live target may put in its events)."""

    RAIN = "rain"


def _picked_per_call(pool: int) -> st.SearchStrategy[list[Any]]:
    """Each call's value at `n`: a pick from a pool of `pool` values, a list of picks (for
    the paths finding many), or none."""
    return st.lists(
        st.one_of(
            st.none(),
            st.sampled_from(range(pool)),
            st.lists(st.sampled_from(range(pool)), max_size=3),
        ),
        max_size=8,
    )


def _group_of(pool: list[str]) -> st.SearchStrategy[list[str]]:
    """Four to ten distinct tests of a pool: enough of one kind to be decided together."""
    return st.lists(st.sampled_from(pool), min_size=4, max_size=10, unique=True)


def _beside(others: list[tuple[bool, str]]) -> st.SearchStrategy[list[tuple[bool, str]]]:
    """Up to three other tests of the path beside them (whether `every`, the test)."""
    return st.lists(st.sampled_from(others), max_size=3, unique=True)


def _decided_together_agree(
    tests: list[tuple[bool, str]], path: str, picks: list[Any], pool: list[Any], *markers: str
) -> None:
    """Tests (whether `every`, the test) of tool `w`'s arguments at `path`, whose generated
    pass holds each of `markers` (their shared structures), give what the reference gives
    on calls whose `n` is each pick from `pool`."""
    on = f"tool w args {path}".rstrip()
    case = _compiled([f"{'every ' if every else ''}{on} {t}" for every, t in tests])
    source = passes.pass_for(case.needs, raw=False).source
    assert all(marker in source for marker in markers), markers

    def value(pick: Any) -> Any:
        return [pool[i] for i in pick] if isinstance(pick, list) else pool[pick]

    events = [
        {"type": "tool.call", "name": "w", "arguments": {} if v is None else {"n": value(v)}}
        for v in picks
    ]
    reference, generated = _both(case, Run(events=events, format="events"), lambda n: n)
    assert generated == reference


# regexes that values of every kind match or miss: anchors, classes, flags, a value's
# JSON text (`true`, `null`, `[`, `{`), an empty text, a character past ASCII
_EVERY_REGEXES = [
    "/^r/", "/n$/", r"/\d/", "/A/i", "/^$/", "/true/", "/null/", r"/^\[/", r"/\{/",
    "/rain|sun/", "/é/", "/./s", r"/\w+ \w+/", "/^7$/", "/2.5/", "/RAIN/",
]  # fmt: skip
# the values a call's path finds: texts (and a subclass), numbers, JSON's other values
_REGEX_VALUES = [
    "rain", "sun", "", "A1", "é", "a\nb", "7", _Sky.RAIN, 7, 2.5, -0.0, True, False, None,
    [7], {"n": "rain"}, _Level(7), "word word",
]  # fmt: skip


@settings(max_examples=examples(200), deadline=None)
@given(
    _group_of(_EVERY_REGEXES),
    # beside them: any-call, `every` of another kind
    _beside(
        [(False, "matches /rain/"), (True, '== "rain"'), (True, "is string"), (False, "exists")]
    ),
    st.sampled_from(["$.n", "$.n[*]", "$..n", ""]),
    _picked_per_call(len(_REGEX_VALUES)),
)
def test_every_regexes_decided_together_meet_every_kind_of_value(
    regexes: list[str], others: list[tuple[bool, str]], path: str, picks: list[Any]
) -> None:
    """`every … matches` tests of one path are found by one RE2 Set search of each value
    of a call: those a call's values do not match fail there; a call without a value
    fails them all."""
    tests = [(True, f"matches {r}") for r in regexes] + others
    _decided_together_agree(tests, path, picks, _REGEX_VALUES, "_all_re.difference(")


# regexes that each have a required text (`regexlits.ascii_required_text`), under `i` too,
# and texts: a group's Set is searched only in a text holding one (an ASCII `str`)
_PREFILTERED_REGEXES = [
    "/rain/", "/RAIN/i", "/^sun/", "/in$/i", r"/\d+ rain/", r"/ra\w*n/i", r"/k\s*s/i",
    "/(a|r)in/", "/SUN/i", "/é r/", "/N d/i", r"/\[7/",
]  # fmt: skip
# texts of every case, RE2's folds past ASCII (Kelvin's K, the long ſ), texts not ASCII,
# a `str` subclass, and values searched by their JSON text
_PREFILTERED_VALUES = [
    "rain", "Rain", "RAIN day", "sun", "SUN", "ſun", "K", "k s", "\u212a s", "7 rain",
    "é rain", "É RAIN", "", "brain", _Sky.RAIN, 7, [7, "rain"], {"n": "rain"}, None, True,
]  # fmt: skip


@settings(max_examples=examples(200), deadline=None)
@given(
    st.lists(st.sampled_from(_PREFILTERED_REGEXES), min_size=4, max_size=8, unique=True),
    st.lists(st.sampled_from(["rain", "Sun", "é", "7"]), max_size=3, unique=True),
    st.sampled_from(["$.n", "$.n[*]", ""]),
    _picked_per_call(len(_PREFILTERED_VALUES)),
)
# (a text past ASCII that RE2 folds to one: searched, not looked through by `in`)
@example(["/SUN/i", "/rain/", "/^sun/", "/in$/i"], [], "$.n", [_PREFILTERED_VALUES.index("ſun")])
@example(
    [r"/k\s*s/i", "/rain/", "/^sun/", "/in$/i"], [], "", [_PREFILTERED_VALUES.index("\u212a s")]
)
def test_a_set_searched_only_where_a_required_text_is_agrees(
    regexes: list[str], texts: list[str], path: str, picks: list[Any]
) -> None:
    """A group of regexes (and texts) each with a required text searches its RE2 Set
    only in an ASCII text holding one of them (lower-cased under `i`), and anything else
    as before: the verdicts are the reference's."""
    tests = [(False, f"matches {r}") for r in regexes]
    tests += [(False, f"contains {json.dumps(t)}") for t in texts]
    _decided_together_agree(tests, path, picks, _PREFILTERED_VALUES, "_pre(v)")
    case = _compiled([f"tool w args {path} {t}".replace("  ", " ") for _, t in tests])
    assert all(made.first[2] is not None for made in _open_sets(case))


def _open_sets(case: Any) -> list[groupsets.OpenSet]:
    """The Sets of open tests (`groupsets.OpenSet`) a case's generated pass searches."""
    scope = passes.pass_for(case.needs, raw=False).run.__globals__
    return [made for made in scope.values() if isinstance(made, groupsets.OpenSet)]


# the regexes and texts of a group whose Set is made again as its tests are decided:
# with a required text and without (a class, an alternation), under `i`, texts past ASCII
_NARROWED_REGEXES = [
    "/rain/", "/RAIN/i", "/^sun/", "/in$/i", r"/\d+ rain/", r"/k\s*s/i", "/SUN/i", "/é r/",
    "/[0-9]/", "/rain|sun/", "/^$/", "/true/", r"/\[7/", "/N d/i", "/a/", "/^b/",
]  # fmt: skip
_NARROWED_TEXTS = ["rain", "Sun", "é", "7", "brain", "ſ", "day"]


@settings(max_examples=examples(300), deadline=None)
@given(
    st.lists(st.sampled_from(_NARROWED_REGEXES), max_size=14, unique=True),
    st.lists(st.sampled_from(_NARROWED_TEXTS), max_size=7, unique=True),
    _beside([(True, "matches /a|n/"), (False, '== "sun"'), (True, "exists")]),
    st.sampled_from(["$.n", "$.n[*]", ""]),
    # up to 40 calls: tests decided at the first ones, late, or never
    st.lists(
        st.one_of(
            st.none(),
            st.sampled_from(range(len(_PREFILTERED_VALUES))),
            st.lists(st.sampled_from(range(len(_PREFILTERED_VALUES))), max_size=3),
        ),
        max_size=40,
    ),
)
@example(  # every test decided, one call after another: the Set made again down to none
    [f"/{w}/" for w in ("rain", "sun", "K", "7", "day", "\\[7")], [], [], "$.n",
    [0, 3, 6, 9, 7, 16, 0, 3],
)  # fmt: skip
def test_a_set_made_again_over_the_tests_still_open_agrees(
    regexes: list[str],
    texts: list[str],
    others: list[tuple[bool, str]],
    path: str,
    picks: list[Any],
) -> None:
    """A group's RE2 Set is made again over the tests still open as they are decided
    (`groupsets.OpenSet`: a smaller Set, a prefilter once each has a required text and
    they are few, none once none is left), on one value or many, texts of every case,
    texts past ASCII, a subclass and values searched by their JSON text: the verdicts,
    messages and values found are the reference's, decided early, late or never."""
    tests = [(False, f"matches {r}") for r in regexes]
    tests += [(False, f"contains {json.dumps(t)}") for t in texts]
    assume(len(regexes) >= groupgen.BULK_MIN or len(texts) >= groupgen.BULK_MIN)
    _decided_together_agree(tests + others, path, picks, _PREFILTERED_VALUES, "_narrow_at")


@settings(max_examples=examples(200), deadline=None)
@given(
    st.lists(st.sampled_from(_NARROWED_REGEXES), min_size=1, max_size=16, unique=True),
    st.sets(st.integers(0, 15)),
    st.lists(st.sampled_from([v for v in _PREFILTERED_VALUES if isinstance(v, str)])),
)
def test_an_open_set_finds_what_the_whole_set_finds_of_its_open_tests(
    regexes: list[str], still: set[int], texts: list[str]
) -> None:
    """`OpenSet.narrowed` over any tests still open finds, in any text, the open tests
    the whole Set finds there, and its prefilter passes every text one is found in."""
    patterns = [(r[1 : r.rindex("/")], r[r.rindex("/") + 1 :]) for r in regexes]
    tests = tuple(
        (n, pattern, flags, regexlits.ascii_required_text(pattern, flags))
        for n, (pattern, flags) in enumerate(patterns)
    )
    whole = groupsets.regex_set(patterns)
    made = groupsets.OpenSet(tests, whole, most_needs=groupgen.PREFILTER_MAX, literal=False)
    search, at, pre, left, _ = made.narrowed(still)
    assert left == len(at) == len(still & set(range(len(regexes))))
    for text in [*texts, "rain day", "SUN", "k s", "7 rain"]:
        expected = {i for i in whole.Match(text) or () if i in still}
        found = {at[i] for i in search(text.encode()) or ()}
        assert found == expected
        assert not expected or pre is None or pre(text)


def test_a_prefilter_holds_no_suite_text_in_its_code() -> None:
    """`groupsets.prefilter`'s function reads its texts from its namespace: no text of the
    suite is in its code (as in the generated pass's source), and it still tells them."""
    # (a text looked for lower-cased is given lower-cased: `ascii_required_text`)
    pre = groupsets.prefilter([("hunter2", False), ("zebra", True), ("it's", False)])
    assert pre is not None
    assert pre.__code__.co_consts == (None,)
    assert {"hunter2", "zebra", "it's"} <= {v for v in pre.__globals__.values() if type(v) is str}
    assert pre("a hunter2 b") and pre("ZEBRA") and pre("it's") and pre("é") and pre(b"x")
    assert not pre("hunter") and not pre("zebr") and not pre("its")


def test_a_set_with_a_pattern_without_required_text_is_searched_in_every_text() -> None:
    """One pattern of a group with no required text (a class, an alternation of the
    whole), or more of them than `PREFILTER_MAX`: the Set is searched in every text."""
    for regexes in (
        ["/rain/", "/sun/", "/[0-9]/", "/in$/"],
        ["/rain|sun/", "/a/", "/b/", "/c/"],
        [f"/w{n}/" for n in range(groupgen.PREFILTER_MAX + 1)],
    ):
        case = _compiled([f"tool w args $.n matches {r}" for r in regexes])
        (made,) = _open_sets(case)
        assert made.first[2] is None


# texts found again and again (a search's titles), and values equal to them that are not
# exact texts: a subclass, numbers and bools whose JSON texts differ though they are equal
_REPEATED_VALUES = [
    "rain", "Rain day", "sun", "7", "7.0", "true", _Sky.RAIN, 7, 7.0, True, 1, "é rain", "",
]  # fmt: skip

# beside them: `every` tests of the path, decided per call (not per value), which must
# meet every value; another path's group, whose texts are the same
_BESIDE_REPEATED = [
    "every tool w args $.n[*] matches /a/", "every tool w args $.n[*] matches /^7/",
    "every tool w args $.n[*] matches /n/", 'every tool w args $.n[*] == "rain"',
    "tool w args $.m[*] matches /rain/", "tool w args $.m[*] matches /^7$/",
    "tool w args $.m[*] matches /sun/", "tool w args $.m[*] matches /true/",
]  # fmt: skip


@settings(max_examples=examples(200), deadline=None)
@given(
    st.lists(
        st.sampled_from(["/rain/", "/^7$/", r"/^7\.0$/", "/true/i", "/^R/", "/é/", "/^$/"]),
        min_size=4, max_size=7, unique=True,
    ),
    st.lists(st.sampled_from(['"rain"', '"7"', '"sun"']), max_size=2, unique=True),
    st.lists(st.sampled_from(_BESIDE_REPEATED), max_size=5, unique=True),
    st.lists(
        st.tuples(
            st.lists(st.sampled_from(range(len(_REPEATED_VALUES))), max_size=4),
            st.lists(st.sampled_from(range(len(_REPEATED_VALUES))), max_size=3),
        ),
        max_size=10,
    ),
)  # fmt: skip
def test_a_text_tested_before_is_not_tested_again_and_agrees(
    regexes: list[str], texts: list[str], others: list[str], calls: list[Any]
) -> None:
    """A group of regexes and texts on a path finding many values keeps the texts it has
    tested (`groupgen.MEMO_ROOM`): an exact `str` seen before decides none of its tests
    anew. Values equal to a text but not one (a subclass, numbers and bools whose JSON
    texts differ), `every` tests decided per call, and another path's group holding the
    same texts are each tested as before: the verdicts are the reference's."""
    tests = [f"tool w args $.n[*] matches {r}" for r in regexes]
    tests += [f"tool w args $.n[*] contains {t}" for t in texts]
    case = _compiled(tests + others)
    assert "_seen" in passes.pass_for(case.needs, raw=False).source
    events = [
        {
            "type": "tool.call",
            "name": "w",
            "arguments": {
                "n": [_REPEATED_VALUES[i] for i in n],
                "m": [_REPEATED_VALUES[i] for i in m],
            },
        }
        for n, m in calls
    ]
    reference, generated = _both(case, Run(events=events, format="events"), lambda n: n)
    assert generated == reference


def test_a_groups_memory_of_texts_is_bounded() -> None:
    """The texts a group keeps take at most `MEMO_ROOM` characters: a text longer than
    the room left is tested each time it comes, and the verdicts stay the reference's."""
    long = "r" * (groupgen.MEMO_ROOM + 1)
    case = _compiled([f"tool w args $.n[*] matches /{w}/" for w in ("x", "y", "z", "rr$")])
    events = [{"type": "tool.call", "name": "w", "arguments": {"n": [long, "x", long]}}] * 3
    reference, generated = _both(case, Run(events=events, format="events"), lambda n: n)
    assert generated == reference
    made = passes.pass_for(case.needs, raw=False)
    assert "len(v) < g0_memo" in made.source


def _memo_peak(path: Path, calls: int) -> int:
    """The most memory held (traced) while checking a JSONL of `calls` calls of `w`, each
    with two texts of its own in `$.n`, against four regexes none of them matches (a group
    that stays open to the end, keeping every text it is given but for its bound)."""
    with path.open("w") as f:
        for i in range(calls):
            texts = [f"{i:07d}-{side}-" + "q" * 1000 for side in "ab"]
            f.write(json.dumps({"type": "tool.call", "name": "w", "arguments": {"n": texts}}))
            f.write("\n")
    program = evaldsl.compile(
        "\n".join(f"tool w args $.n[*] matches /{w}/" for w in ("x", "y", "z", "rr$"))
    )
    program.check(path)  # (the pass made and compiled before tracing)
    tracemalloc.start()
    try:
        statuses = program.check(path).statuses
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        assert statuses == ["fail"] * 4


def test_a_groups_memory_of_texts_does_not_grow_with_a_streamed_file(tmp_path: Path) -> None:
    """Streamed from a file, a group's kept texts are the only texts a check holds on to:
    unbounded, 12,000 calls of distinct 2 KB texts would hold ~16 MB more than 4,000 do;
    bounded by `MEMO_ROOM`, the peaks are within a megabyte (the decoder's chunk)."""
    small = _memo_peak(tmp_path / "small.jsonl", 4_000)
    large = _memo_peak(tmp_path / "large.jsonl", 12_000)
    assert large < small + (1 << 20), (small, large)


def test_ascii_required_text_folds_only_ascii_texts() -> None:
    """Under `i`, a required text is lower-cased, and none is given when it is not ASCII
    (an ASCII text's case variants past ASCII are RE2's to find); without `i`, it is
    `required_text`'s."""
    from evaldsl.language.regexlits import ascii_required_text

    assert ascii_required_text("Quota notes 5", "i") == ("quota notes 5", True)
    assert ascii_required_text(r"\d+ Rain", "") == (" Rain", False)
    assert ascii_required_text("é rain", "") == ("é rain", False)
    assert ascii_required_text("é", "i") is None
    assert ascii_required_text("rain|sun", "i") is None
    assert ascii_required_text(r"\d+", "") is None


# every kind of value an equality meets: texts and their subclasses (a `==` text holds for
# `str` only; `in [..]` and `== VALUE` follow `json_equal`), bools beside 1 and 0, 1 and
# 1.0, NaN, a tuple (no JSON key: compared pairwise), objects and lists equal but for a
# number's type, and a value with more nodes than any literal
_ODD_VALUES = [
    "rain", _Sky.RAIN, True, False, 1, 1.0, 0, -0.0, math.nan, _Level(7), 7, 2.5, None,
    (7,), [7], [1, 2.5], [1.0, 2.5], {"city": 1}, {"city": 1.0, "q": None}, {"q": None, "city": 1},
    [[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]], {"items": ["rain", {"city": "Oslo"}]},
]  # fmt: skip
_LITERALS = [
    "1", "true", "false", "null", "7", "2.5", "[7]", "[1, 2.5]", "{city: 1}",
    "{city: 1, q: null}", '{items: ["rain", {city: "Oslo"}]}', "[]", "{}",
]  # fmt: skip


@settings(max_examples=examples(200), deadline=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(_LITERALS).map(lambda v: f"== {v}"),
            st.lists(st.sampled_from([*_LITERALS, '"rain"', '"Oslo"']), max_size=4).map(
                lambda xs: f"in [{', '.join(xs)}]"
            ),
        ),
        min_size=4,
        max_size=10,
        unique=True,
    ),
    st.lists(st.sampled_from([*range(len(_ODD_VALUES)), None]), max_size=8),
)
def test_equality_decided_together_meets_every_kind_of_value(
    tests: list[str], picks: list[int | None]
) -> None:
    """`== VALUE` and `in [..]` on one path are looked up by the value's JSON key."""
    case = _compiled([f"tool w args $.n {t}" for t in tests])
    assert "_key.pop(" in passes.pass_for(case.needs, raw=False).source
    events = [
        {"type": "tool.call", "name": "w", "arguments": {} if i is None else {"n": _ODD_VALUES[i]}}
        for i in picks
    ]
    reference, generated = _both(case, Run(events=events, format="events"), lambda n: n)
    assert generated == reference


@settings(max_examples=examples(200), deadline=None)
@given(
    _group_of([*_LITERALS, '"rain"']),
    _beside([(False, "== 1"), (True, "== 1"), (True, "is string"), (False, "exists")]),
    st.sampled_from(["$.n", "$.n[*]", "$..n", ""]),
    _picked_per_call(len(_ODD_VALUES)),
)
def test_every_unequal_decided_together_meets_every_kind_of_value(
    literals: list[str], others: list[tuple[bool, str]], path: str, picks: list[Any]
) -> None:
    """`every … != VALUE` tests of one path are looked up by the JSON key of a call's
    value: those equal to every value the call finds fail there (a call passes a test
    when one of its values differs), and a call without a value fails them all."""
    tests = [(True, f"!= {v}") for v in literals] + others
    _decided_together_agree(tests, path, picks, _ODD_VALUES, "g0_all_ne.get(jk)")


# texts (a `StrEnum`, an empty one, one past ASCII, one that is its own prefix), values that
# are not texts, objects (a dict subclass among them) and lists for `has` and `contains`
_EDGE_VALUES = [
    "rain", "rainy", "", "é rain", "a", _Sky.RAIN, 7, None, ["rain", 7], {"city": 1},
    {"q": None, "rain": 2}, [1, [7], None, True], [1.0, False], [[1, 2.5]], [_Level(7)],
]  # fmt: skip
_EDGE_TESTS = [
    'starts with "rain"', 'starts with "r"', 'starts with ""', 'starts with "é"',
    'starts with "rainy"', 'ends with "in"', 'ends with "y"', 'ends with ""', 'ends with "rain"',
    'ends with "é rain"', "has city", "has q", "has rain", "has n", "contains 7",
    "contains [7]", "contains true", "contains null", "contains 1", "contains [1, 2.5]",
]  # fmt: skip


@settings(max_examples=examples(200), deadline=None)
@given(
    st.lists(st.sampled_from(_EDGE_TESTS), min_size=4, max_size=14, unique=True),
    st.sampled_from(["$.n", "$.n[*]", ""]),
    _picked_per_call(len(_EDGE_VALUES)),
)
@example(
    ["has city", "has q", "has rain", "has n"], "$.n", [_EDGE_VALUES.index({"q": None, "rain": 2})]
)
def test_text_edges_keys_and_elements_decided_together_agree(
    tests: list[str], path: str, picks: list[Any]
) -> None:
    """`starts with`/`ends with` (a text's first or last characters looked up, one length
    at a time), `has KEY` (an object's keys looked up) and `contains VALUE` of values that
    are not texts (a list's elements looked up by their JSON keys), four or more of one
    kind, give what the reference gives; a kind with fewer is inlined beside them."""
    kinds = Counter(t.split()[0] for t in tests)
    markers = [
        marker
        for word, marker in [
            ("starts", "g0_pre.pop("),
            ("ends", "g0_suf.pop("),
            ("has", "g0_haskey.pop("),
            ("contains", "g0_elem.pop("),
        ]
        if kinds[word] >= 4
    ]
    _decided_together_agree([(False, t) for t in tests], path, picks, _EDGE_VALUES, *markers)


class _Record(dict[str, Any]):
    """A dict subclass (a live target's own mapping): no JSON key, compared pairwise."""


# objects `contains {..}` looks for: one key or several, values of every kind (1 beside
# 1.0 and true, null, texts, lists, objects)
_OBJECT_LITERALS = [
    "{city: 1}", "{city: 1, q: null}", "{q: null}", '{city: "rain", q: null}', "{city: true}",
    '{items: ["rain", {city: "Oslo"}]}', "{city: [1, 2.5]}", "{city: {q: null}}",
    '{q: "rain", city: 1.0}', "{n: 7}", '{city: "rain", n: 7}', "{q: 2.5, n: 7, city: 1}",
]  # fmt: skip
# an object whose value at the key a test is looked up by has no JSON key (an int
# subclass): the tests are found by comparing it with each of theirs
_ODD_AT_KEY = {"n": _Level(7)}
# what a call's value is: objects with those keys (equal values of other types, a
# `StrEnum`, an int subclass, NaN), a dict subclass, lists of objects (an element equal to
# the object), and values that are no container of objects
_OBJECT_VALUES = [
    {"city": 1}, {"city": 1.0, "q": None}, {"city": True}, {"city": "rain"},
    {"city": _Sky.RAIN}, {"city": [1, 2.5]}, {"city": {"q": None}}, {"city": math.nan},
    {"items": ["rain", {"city": "Oslo"}]}, {"q": "rain", "city": 1, "n": 7}, _ODD_AT_KEY,
    {"q": 2.5, "n": 7.0, "city": 1}, _Record(city=1, q=None), [{"city": 1}], [7, {"q": None}],
    [{"q": None, "city": 1}, {"city": "rain"}], [_Record(n=7)], [[{"city": 1}]], "city", 7,
    None, [], {},
]  # fmt: skip


@settings(max_examples=examples(200), deadline=None)
@given(
    _group_of(_OBJECT_LITERALS),
    # beside them: inlined, `contains {key: "text"}` decided by its own table, an `every`
    # test
    _beside([(False, 'contains {city: "rain"}'), (True, "is object"), (False, "has n")]),
    st.sampled_from(["$.n", "$.n[*]", ""]),
    st.lists(st.one_of(st.none(), st.sampled_from(range(len(_OBJECT_VALUES)))), max_size=8),
)
@example(
    ["{n: 7}", "{city: 1}", "{q: null}", "{city: true}"],
    [],
    "$.n",
    [_OBJECT_VALUES.index(_ODD_AT_KEY)],
)
def test_objects_contained_decided_together_meet_every_kind_of_value(
    literals: list[str], others: list[tuple[bool, str]], path: str, picks: list[int | None]
) -> None:
    """`contains {..}` tests of one path are looked up by the JSON key of one of their
    values in an object (then tested whole), or by their whole object's key in a list."""
    tests = [(False, f"contains {v}") for v in literals] + others
    on = f"tool w args {path}".rstrip()
    case = _compiled([f"{'every ' if every else ''}{on} {t}" for every, t in tests])
    assert "g0_objw.pop(jk, ())" in passes.pass_for(case.needs, raw=False).source

    def arguments(i: int | None) -> Any:
        if path == "":
            return {} if i is None else _OBJECT_VALUES[i]
        return {} if i is None else {"n": _OBJECT_VALUES[i]}

    events = [{"type": "tool.call", "name": "w", "arguments": arguments(i)} for i in picks]
    reference, generated = _both(case, Run(events=events, format="events"), lambda n: n)
    assert generated == reference


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs, traces())
def test_a_stream_read_once_has_its_times_noted_as_it_goes(
    statements: list[str], events: list[Any]
) -> None:
    """A pass over events it cannot read again notes the first time as they go
    (`noting_first_time`); the last is its last event's."""
    needs = attrs.evolve(_compiled(statements).needs, times=True, cost=True, passes={})
    made = passes.pass_for(needs, raw=False)

    def outcome(index: Any) -> Any:
        try:
            facts = index(iter(events))
        except Exception as err:  # a bad token count: the same error from both
            return type(err), str(err)
        return facts.first_at, facts.last_at, facts.steps, facts.tool_calls, facts.cost

    generated = outcome(lambda it: made.run(passes.batches(it), None, False))
    reference = outcome(lambda it: reference_index_events(it, needs))
    if generated[0] is TypeError:  # a call's name not text: the pass gives way to the
        assert reference[0] is RunError  # reference (`index_events_fast`), which says so
    else:
        assert generated == reference


def _together_and_alone(statements: list[str], events: list[Any]) -> tuple[Any, list[Any]]:
    """The statements' result checked as one case on the events, and each one's alone."""
    run = Run(events=events, format="events")
    return _compiled(statements).check(run), [_compiled([s]).check(run) for s in statements]


def _said(results: list[Any]) -> list[Any]:
    """What the results' verdicts say (not where: a verdict's span is where it is written)."""
    return [(v.status, v.message, v.actual, v.expected) for r in results for v in r.verdicts]


def _event_id_shared(events: list[Any]) -> bool:
    """Whether a call's event id is another call's id too (its callId or event id): which
    call a result naming it answers then depends on the calls a case keeps (README,
    Limits)."""
    calls = [e for e in events if e.get("type") in ("tool.call", "mcp.call")]
    return any(
        e.get("id") is not None and e.get("id") in (other.get("callId"), other.get("id"))
        for i, e in enumerate(calls)
        for j, other in enumerate(calls)
        if i != j
    )


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs, traces())
def test_a_statement_says_in_a_case_what_it_says_alone(
    statements: list[str], events: list[Any]
) -> None:
    """A statement's verdict does not depend on the statements beside it: what they make
    the pass read (kept calls, results, sequences, shared structures, memos) changes
    nothing of it. (A run whose error one of them raises, a token count it reads that
    cannot be read, fails them all: not compared.)"""
    assume(not _event_id_shared(events))
    together, alone = _together_and_alone(statements, events)
    assume(together.error is None and all(r.error is None for r in alone))
    assert _said([together]) == _said(alone)


# `cites` of one tool (the calls a case keeps decide which call an ambiguous id names; see
# the example below for several tools): other answers, paths and counts
cites_statements = st.builds(
    lambda subject, path, least: (
        f"{subject} cites tool search{path}{'' if least is None else f' at least {least} values'}"
    ),
    st.sampled_from(["answer", "answer[1]", "answer[-2]"]),
    st.sampled_from(["", " $.q", " $.items[*]"]),
    st.one_of(st.none(), st.integers(1, 3)),
)


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(cites_statements, min_size=2, max_size=8), traces())
@example(
    [
        "answer cites tool search at least 2 values",
        "answer cites tool search $.q",
        "answer[1] cites tool search at least 2 values",
        "answer cites tool fetch",
        "answer cites tool search at least 3 values",
    ],
    [
        {"type": "llm.response", "output": "Looking up Oslo"},
        {"type": "tool.call", "name": "search", "callId": "c1"},
        {"type": "tool.result", "callId": "c1", "output": {"q": "Oslo", "items": ["rain", 7]}},
        {"type": "tool.call", "name": "fetch", "callId": "c2"},
        {"type": "tool.result", "callId": "c2", "output": "sunny spells"},
        {"type": "llm.response", "output": "Oslo has rain, 7 C"},
    ],
)
def test_citations_worked_out_once_say_what_each_alone_says(
    statements: list[str], events: list[Any]
) -> None:
    """`cites` statements of one run share the values a tool gave and those an answer
    quotes (`RunFacts.shared`, by tool, path and answer): each says what it says alone."""
    together, alone = _together_and_alone(statements, events)
    assert _said([together]) == _said(alone)


def _citable_by_isinstance(results: list[Any]) -> set[str]:
    """`citable_values` as first written (an isinstance chain per value): the rule the
    exact-type dispatch must keep."""
    from evaldsl.language.jsjson import js_number, js_trim

    leaves: set[str] = set()
    stack = list(results)
    while stack:
        v = stack.pop()
        if isinstance(v, bool) or v is None:
            continue
        if isinstance(v, int):
            leaves.add(str(v))
        elif isinstance(v, float):
            if v == v and v not in (float("inf"), float("-inf")):
                leaves.add(js_number(v))
        elif isinstance(v, str):
            t = js_trim(v)
            # JavaScript's length: UTF-16 units
            if 3 <= len(t.encode("utf-16-le", "surrogatepass")) // 2 <= 120:
                leaves.add(t)
        elif isinstance(v, list):
            stack.extend(v)
        elif isinstance(v, dict):
            stack.extend(v.values())
    return leaves


class _Text(str):
    pass


class _Number(int):
    pass


cite_leaf = st.one_of(
    st.text(" ab\t", max_size=6),
    st.text(min_size=118, max_size=124),
    st.text("a\U0001f600\u00e9", min_size=1, max_size=100),
    st.integers(-(10**30), 10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.none(),
    st.sampled_from([_Text(" Paris "), _Number(7), _Text("ab")]),
)


@settings(max_examples=examples(400), deadline=None)
@given(
    st.lists(
        st.recursive(
            cite_leaf,
            lambda inner: st.one_of(
                st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=2), inner, max_size=4)
            ),
            max_leaves=12,
        ),
        max_size=4,
    )
)
def test_citable_values_by_exact_type_keeps_the_isinstance_rule(results: list[Any]) -> None:
    from evaldsl.predicates.cites import citable_values

    assert citable_values(results) == _citable_by_isinstance(results)


class _Object(dict[str, Any]):
    pass


class _Array(list[Any]):
    pass


def _descend_by_isinstance(name: str, value: Any) -> list[Any]:
    """`..name` as first written (containers told by `isinstance` alone): the rule the
    exact-type dispatch of `Descend.find` must keep."""
    out: list[Any] = []
    stack = [iter([value])]
    while stack:
        for v in stack[-1]:
            if isinstance(v, dict):
                if name in v:
                    out.append(v[name])
                stack.append(iter(v.values()))
                break
            if isinstance(v, list):
                stack.append(iter(v))
                break
        else:
            stack.pop()
    return out


@settings(max_examples=examples(400), deadline=None)
@given(
    st.recursive(
        st.one_of(cite_leaf, st.sampled_from([1.5, 0, -3])),
        lambda inner: st.one_of(
            st.lists(inner, max_size=3),
            st.lists(inner, max_size=3).map(_Array),
            st.dictionaries(st.sampled_from(["city", "q"]), inner, max_size=3),
            st.dictionaries(st.sampled_from(["city", "q"]), inner, max_size=3).map(_Object),
        ),
        max_leaves=10,
    )
)
def test_descent_by_exact_type_keeps_the_isinstance_rule(value: Any) -> None:
    from evaldsl.language.paths import Descend

    found: list[Any] = []
    Descend("city").find(value, found)
    expected = _descend_by_isinstance("city", value)
    assert len(found) == len(expected) and all(a is b for a, b in zip(found, expected, strict=True))


def test_cites_shows_its_hits_in_order_of_the_sorted_leaves() -> None:
    events = [
        {"type": "tool.call", "name": "get_weather", "callId": "c1"},
        {"type": "tool.result", "callId": "c1", "output": {"t": 31, "sky": "clear", "c": "Oslo"}},
        {"type": "tool.call", "name": "get_weather", "callId": "c2"},
        {"type": "tool.result", "callId": "c2", "output": ["Bergen", 4.0, "rain"]},
        {
            "type": "llm.response",
            "output": {"choices": [{"message": {"content": "Oslo: 31, clear; Bergen 4"}}]},
        },
    ]
    verdict = evaldsl.compile("answer cites tool get_weather at least 6 values").check(events)
    (v,) = verdict.verdicts
    assert v.status == "fail"
    assert v.actual == ["31", "4", "Bergen", "Oslo", "clear"]  # sorted: digits, capitals first
    assert v.message == (
        'answer cites 5 of 6 values from tool "get_weather": "31", "4", "Bergen", "Oslo", '
        '"clear", expected at least 6'
    )


#: Texts for citations: letters whose lowercase differs in length or kind (İ, ẞ, Σ), a
#: lone surrogate, digits, spaces, and a few of each so values overlap and repeat.
# words of one small alphabet: patterns that overlap everywhere in a text of them
_WORDS = ["".join(w) for w in itertools.product("abc", repeat=4)][:60]
_HEAVY = [
    f"\\b{a}[a-z]*\\s+\\d{{1,{1 + n % 3}}}|{b}{c}"
    for n, (a, b, c) in enumerate(zip(_WORDS, _WORDS[7:], _WORDS[13:], strict=False))
]


@settings(max_examples=examples(40), deadline=None)
@given(st.lists(st.sampled_from([*_WORDS, "12", "7", "Paris"]), max_size=30).map(" ".join))
def test_regexes_past_one_sets_memory_or_count_are_split_and_found_as_one_set_finds_them(
    text: str,
) -> None:
    """A Set too large for its memory is split in halves (`_sets`), and more regexes than
    `REGEXES_PER_SET` go in Sets of that many: their matches are each regex's own."""
    patterns = [(p, "i" if n % 5 == 0 else "") for n, p in enumerate(_HEAVY)]
    expected = [n for n, (p, f) in enumerate(patterns) if compile_regex(p, f).search(text)]
    with mock.patch.object(groupsets, "SET_MEMORY", 64 << 10):  # too small for all of them
        small = groupsets.regex_set(patterns, most=len(patterns))
    by_count = groupsets.regex_set(patterns, most=7)
    for found in (small, by_count):
        assert isinstance(found, groupsets.SetChunks) and len(found.parts) >= 2
        assert sorted(found.Match(text)) == expected
    # and through a generated pass: more regexes on one path than go in one Set
    with mock.patch.object(groupsets, "REGEXES_PER_SET", 7):
        case = _compiled([f"tool w args $.q matches /{p}/{f}" for p, f in patterns])
        made = passes.pass_for(case.needs, raw=False)
    assert any(" RE2 Sets of the regexes" in note for note in made.notes), made.notes
    events = [{"type": "tool.call", "name": "w", "arguments": {"q": text}}]
    reference, generated = _both(case, Run(events=events, format="events"), lambda n: n)
    assert generated == reference
    assert [v[0] for v in reference[0][0]].count("pass") == len(expected)


_CITE_CHARS = st.sampled_from(list("abAB 1.\u0130\u1e9e\u03a3\u03c3\ud800\u00e9e\u0301\U0001f600"))


@settings(max_examples=examples(600), deadline=None)
@given(
    st.sets(st.text(_CITE_CHARS, min_size=1, max_size=5), max_size=12),
    st.text(_CITE_CHARS, max_size=40),
)
def test_values_found_by_one_set_are_those_each_search_finds(leaves: set[str], answer: str) -> None:
    from evaldsl.predicates import cites

    lowered = answer.lower()
    expected = sorted(leaf for leaf in leaves if leaf.lower() in lowered)
    match = cites.re2.Set.Match
    with (
        mock.patch.object(cites, "SET_FROM_CHARS", 0),
        mock.patch.object(cites, "SET_FROM_WORK", 0),
        mock.patch.object(cites.re2.Set, "Match", autospec=True, side_effect=match) as searched,
    ):
        assert cites.quoted(leaves, lowered) == expected
    # searched by the Set itself, lone surrogates included: none was left to the fallback
    assert searched.called


def test_a_long_answer_is_searched_by_one_set_and_cites_as_before() -> None:
    from evaldsl.predicates import cites

    values = [f"ticket-{i:05d}" for i in range(2000)]
    answer = ("Resolved TICKET-00042 and ticket-01999; " + "lorem ipsum " * 3000).upper()
    assert len(answer) >= cites.SET_FROM_CHARS
    assert len(answer) * len(values) >= cites.SET_FROM_WORK
    events = [
        {"type": "tool.call", "name": "tickets", "callId": "c1"},
        {"type": "tool.result", "callId": "c1", "output": values},
        {"type": "llm.response", "output": answer},
    ]
    program = evaldsl.compile("answer cites tool tickets at least 2 values")
    searchset = cites.re2.Set.SearchSet
    with mock.patch.object(cites.re2.Set, "SearchSet", wraps=searchset) as made:
        (v,) = program.check(events).verdicts
    assert made.called  # (one Set of the values, not a search of the answer for each)
    assert v.status == "pass" and v.actual == ["ticket-00042", "ticket-01999"]


# --- cases that repeat their assertions share their probes and their pass ---------------

_REPEATED = [
    "tool w args $.n > 2",
    "every tool w args $.n >= 0",
    'tool w result $.city == "Oslo"',
    "tool w args $.n > 2",  # the same test again, spelled alike
    "tool w args $.n  >  2",  # and spelled otherwise
]


def _calls(*ns: Any) -> Run:
    events: list[dict[str, Any]] = []
    for i, n in enumerate(ns):
        events.append({"type": "tool.call", "name": "w", "callId": f"c{i}", "arguments": {"n": n}})
        city = "Oslo" if n == 5 else "Paris"
        events.append({"type": "tool.result", "callId": f"c{i}", "output": {"city": city}})
    return Run(events=events, format="events")


def test_cases_that_repeat_their_assertions_share_one_pass() -> None:
    text = "\n".join(
        f'case "{name}"\ncassette "{name}.jsonl"\n' + "\n".join(_REPEATED)
        for name in ("first", "second", "third")
    )
    first, second, third = evaldsl.compile(text).cases
    # equal tests share one probe, applied once in a case: three tests here
    assert len(first.needs.probes) == 3 and first.needs.probes == second.needs.probes
    assert first.needs == second.needs
    assert passes.pass_for(first.needs, raw=False) is passes.pass_for(third.needs, raw=False)
    # each case's verdicts are its own run's, as the reference gives them
    runs = {"first": _calls(1, 5), "second": _calls(-1), "third": _calls(3, 4)}
    seen = []
    for case in (first, second, third):
        reference, generated = _both(case, runs[case.name], lambda n: n)
        assert generated == reference
        verdicts = reference[0][0]
        # the repeated test: its own verdict, each message in its own words
        assert verdicts[0] == verdicts[3]
        assert verdicts[4][0] == verdicts[0][0] and verdicts[4][2:] == verdicts[0][2:]
        assert "$.n  >  2" in verdicts[4][1]
        seen.append([v[0] for v in verdicts])
    assert seen == [
        ["pass", "pass", "pass", "pass", "pass"],
        ["fail", "fail", "fail", "fail", "fail"],
        ["pass", "pass", "fail", "pass", "pass"],
    ]


def test_only_the_same_tests_share_a_probe() -> None:
    case = _compiled(
        [
            "tool w args $.n == 1",
            "tool w args $.n == 1.0",  # the same test: equal JSON values pass it
            "tool w args $.n == 1e0",
            'tool w args $.n == "1"',
            "tool w args $.n == true",
            "every tool w args $.n == 1",
            "tool w result $.n == 1",
            "tool v args $.n == 1",
            "tool w args $.m == 1",
            "tool w args $.n in [1, 2]",
            "tool w args $.n in [1.0, 2]",
        ]
    )
    assert len(case.needs.probes) == 8
    assert len({id(p) for p in case.needs.probes}) == 8
    # a test served by another's probe passes exactly the values it is true of
    for n in (1, 1.0, True, "1", 2, 0, [1]):
        reference, generated = _both(case, _calls(n), lambda needs: needs)
        assert generated == reference
        status = [v[0] for v in reference[0][0]]
        assert status[1] == status[2] == ("pass" if json_equal(n, 1.0) else "fail")
        in_list = any(json_equal(n, x) for x in (1.0, 2))
        assert status[10] == ("pass" if in_list else "fail")


def test_prompt_cache_tokens_are_priced_alike_by_both_passes() -> None:
    """A response's `cacheTokens` (Anthropic's cache writes and reads, among its input
    tokens) cost their multiples of the input price in the generated pass as in the
    reference, in memory and from a file (whole and by the typed decoder); a cache count
    that is not a number is an error in both, never $0."""
    cached = {"write5m": 20000, "write1h": 0, "read": 80000}
    usage = {"promptTokens": 100100, "completionTokens": 50}
    response = {"type": "llm.response", "model": "claude-sonnet-4", "usage": usage}
    events: list[Any] = [
        {"type": "llm.request", "model": "claude-sonnet-4"},
        {**response, "cacheTokens": cached},
        {"type": "llm.request", "model": "claude-sonnet-4"},
        {**response, "cacheTokens": {"read": "many"}},
    ]
    case = _compiled(["cost > $0.100049", "cost < $0.100051", "tokens > 0"])
    reference, generated = _both(case, Run(events=events[:2], format="events"), lambda n: n)
    assert generated == reference
    assert [v[0] for v in reference[0][0]] == ["pass", "pass", "pass"]
    with tempfile.TemporaryDirectory() as folder:
        for held in (events[:2], events):
            for reference, generated in _from_a_file(case, held, Path(folder)):
                assert generated == reference
    reference, _ = _both(case, Run(events=events, format="events"), lambda n: n)
    assert "cacheTokens.read" in str(reference)


def _from_a_file(case: Any, events: list[Any], folder: Path) -> Iterator[tuple[str, str]]:
    """The verdicts of the reference and of the generated pass for `events` read from a
    JSONL file in `folder`, whole and by the typed decoder, written out with the file's
    path as `<value>` (as a run in memory names it)."""
    path = folder / "events.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    run = Run(events=EventStream(path, header=False), path=str(path), format="events")
    for typed_from in (passes.TYPED_FROM, 0):
        with mock.patch.object(passes, "TYPED_FROM", typed_from):
            reference, generated = _both(case, run, _fresh)
        yield (
            str(reference).replace(str(path), "<value>"),
            str(generated).replace(str(path), "<value>"),
        )


def _alike(case: Any, events: list[Any], folder: str) -> Any:
    """The reference's verdicts for `events`, which the generated pass gives too, in memory
    and from a file in `folder` (whole and by the typed decoder)."""
    reference, generated = _both(case, Run(events=events, format="events"), lambda n: n)
    assert generated == reference
    for from_file, generated in _from_a_file(case, events, Path(folder)):
        assert generated == from_file == str(reference)
    return reference


def test_openai_cached_input_is_priced_alike_by_both_passes() -> None:
    """OpenAI's prompt-cache reads (`cacheTokens.cached`, among the input tokens) cost the
    model's cached-input price in the generated pass as in the reference, in memory and
    from a file; a model the table gives no such price has no cost (an error naming it),
    and a count that is not a number is the run's error, never $0."""
    usage = {"promptTokens": 100000, "completionTokens": 25}
    response = {"type": "llm.response", "model": "gpt-4o-mini", "usage": usage}
    priced: list[Any] = [
        {"type": "llm.request", "model": "gpt-4o-mini"},
        {**response, "cacheTokens": {"cached": 80000}},
    ]
    # 20,000 input at $0.15, 80,000 cached at $0.075 and 25 output at $0.60 a million
    case = _compiled(["cost > $0.009014", "cost < $0.009016", "tokens > 0"])
    unpriced = [{**e, "model": "gpt-3.5-turbo"} for e in priced]
    broken = [priced[0], {**response, "cacheTokens": {"cached": "many"}}]
    expected = {id(priced): ["pass", "pass", "pass"], id(unpriced): ["error", "error", "pass"]}
    with tempfile.TemporaryDirectory() as folder:
        for events in (priced, unpriced, broken):
            reference, generated = _both(case, Run(events=events, format="events"), lambda n: n)
            assert generated == reference
            for from_file, generated in _from_a_file(case, events, Path(folder)):
                assert generated == from_file
                # (the error names the response's line, the result its event)
                assert from_file == str(reference) or "<value>:2:1: an LLM" in from_file
            if events is not broken:
                assert [v[0] for v in reference[0][0]] == expected[id(events)], reference
    reference, _ = _both(case, Run(events=unpriced, format="events"), lambda n: n)
    assert "no `cached_input` price is known for it" in str(reference)
    reference, _ = _both(case, Run(events=broken, format="events"), lambda n: n)
    assert '`cacheTokens.cached` is "many", not a number' in str(reference)


def test_more_prompt_cache_tokens_than_input_is_the_run_s_error_at_its_event() -> None:
    """A response's `cacheTokens` are among its input tokens: more of them than it has
    (`{"cached": 2000000}` of 1,000,000 input, Anthropic's reads and writes alike) priced
    the rest below nothing, a negative cost that passed `cost < $0.01`, at any service
    tier; now it is the run's error in both passes, in memory and from a file, at the line
    of that response (a bad `cacheTokens` count was said at line 1, or at another event)."""
    usage = {"promptTokens": 1_000_000, "completionTokens": 0}
    good = {"type": "llm.response", "model": "gpt-5", "usage": usage}
    case = _compiled(["cost < $0.01", "tokens > 0"])
    alone = [{**good, "cacheTokens": {"cached": 2_000_000}}]  # (it passed at -$1.00)
    reference, generated = _both(case, Run(events=alone, format="events"), lambda n: n)
    assert generated == reference and reference[0][0] == "error", reference
    for cache, said in [
        ({"cached": 2_000_000}, "counts 2000000 prompt-cache tokens, more than its input"),
        ({"read": 1_000_001}, "counts 1000001 prompt-cache tokens"),
        ({"write5m": 600_000, "read": 600_000}, "counts 1200000 prompt-cache tokens"),
        ({"cached": "many"}, '`cacheTokens.cached` is "many", not a number'),
    ]:
        for tier in ({}, {"serviceTier": "flex"}, {"serviceTier": "priority"}):
            events = [
                {"type": "llm.request", "model": "gpt-5"},
                # (an earlier response with the same kind of fault, whose model has no
                # price: `cost` reads no counts of it, so it is not the error's place)
                {
                    **good,
                    "model": "no-such-model",
                    "cacheTokens": {"cached": 5},
                    "usage": {"promptTokens": 1, "completionTokens": 0},
                },
                {**good, "cacheTokens": cache, **tier},
            ]
            reference, generated = _both(case, Run(events=events, format="events"), lambda n: n)
            assert generated == reference
            assert reference[0][0] == "error" and said in reference[0][1], reference
            assert "event [2] of the event list" in reference[0][1], reference
            with tempfile.TemporaryDirectory() as folder:
                for from_file, generated in _from_a_file(case, events, Path(folder)):
                    assert generated == from_file
                    assert "<value>:3:1: an LLM response" in from_file, from_file
    # as many as the input: all of it read from the cache, at the cached-input price
    events = [{**good, "cacheTokens": {"cached": 1_000_000}}]
    reference, generated = _both(
        _compiled(["cost > $0.1249", "cost < $0.1251"]), Run(events=events), lambda n: n
    )
    assert generated == reference and [v[0] for v in reference[0][0]] == ["pass", "pass"]


def test_long_prompts_and_a_model_s_own_cache_read_price_are_priced_alike_by_both_passes() -> None:
    """A model whose long prompts cost more (`long_prompt`) prices each response by its own
    input tokens, cached ones included: the same model's responses on either side of its
    threshold, in a row, cost each its own price in the generated pass (which keeps a flat
    model's price between responses) as in the reference, in memory and from a file; and an
    Anthropic model whose cache reads have a price of their own (claude-opus-5-5: $0.20, not
    a tenth of $4) is priced at it, and a long prompt's reads at the multiple of its input
    price."""

    def turn(model: str, prompt: int, out: int, cache: Any = None) -> list[Any]:
        response: dict[str, Any] = {
            "type": "llm.response",
            "model": model,
            "usage": {"promptTokens": prompt, "completionTokens": out},
        }
        if cache is not None:
            response["cacheTokens"] = cache
        return [{"type": "llm.request", "model": model}, response]

    def bounds(dollars: float) -> list[str]:
        return [f"cost > ${dollars - 1e-6:.6f}", f"cost < ${dollars + 1e-6:.6f}"]

    sonnet = "claude-sonnet-4-20250514"
    runs: list[tuple[list[Any], float]] = [
        # 200,000 at $3 and 1,000 at $15; then 200,001 at $6 and 1,000 at $22.50 (past the
        # threshold, the whole response, output too); then 100 at $3 again
        (
            turn(sonnet, 200_000, 1000) + turn(sonnet, 200_001, 1000) + turn(sonnet, 100, 0),
            0.6 + 0.015 + 1.200006 + 0.0225 + 0.0003,
        ),
        # a long prompt first, then short ones of the same model: never the long price kept
        (turn(sonnet, 300_000, 0) + turn(sonnet, 1000, 0) + turn(sonnet, 1000, 0), 1.8 + 0.006),
        # gpt-5.4 past 272,000: 2x input, 1.5x output, and its cached reads 2x too
        (turn("gpt-5.4", 300_000, 100, {"cached": 100_000}), 1.0 + 0.05 + 0.00225),
        # claude-opus-5-5's reads at $0.20: 10,000 input at $4 and 90,000 read
        (turn("claude-opus-5-5", 100_000, 0, {"read": 90_000}), 0.04 + 0.018),
        # claude-sonnet-4's reads past 200,000: a tenth of the long input price ($0.60)
        (turn(sonnet, 300_000, 0, {"read": 250_000}), 0.3 + 0.15),
    ]
    with tempfile.TemporaryDirectory() as folder:
        for events, dollars in runs:
            case = _compiled([*bounds(dollars), "tokens > 0"])
            reference = _alike(case, events, folder)
            assert [v[0] for v in reference[0][0]] == ["pass", "pass", "pass"], (dollars, reference)


def test_a_response_s_service_tier_is_priced_alike_by_both_passes() -> None:
    """A response billed at another service tier than the standard one costs what that
    tier costs in the generated pass as in the reference, in memory and from a file (whole
    and by the typed decoder): its reader's `serviceTier` or a traceplay body's own
    `service_tier` (OpenAI's top-level, Anthropic's in `usage`), flex and batch at half the
    standard price (cache included), priority at the table's price for it, a tier with no
    price an error naming it; "default" and "standard" at the standard price."""

    def turn(model: str, prompt: int, out: int, **more: Any) -> list[Any]:
        response: dict[str, Any] = {
            "type": "llm.response",
            "model": model,
            "usage": {"promptTokens": prompt, "completionTokens": out},
            **more,
        }
        return [{"type": "llm.request", "model": model}, response]

    def openai(tier: str, prompt: int = 1_000_000) -> dict[str, Any]:  # (as recorded)
        return {
            "object": "response",
            "model": "gpt-5-2025-08-07",
            "output": [],
            "service_tier": tier,
            "usage": {
                "input_tokens": prompt,
                "input_tokens_details": {"cached_tokens": 0},
                "output_tokens": 0,
            },
        }

    def anthropic(tier: str) -> dict[str, Any]:  # (a message, as recorded)
        usage = {"input_tokens": 100_000, "cache_read_input_tokens": 0, "output_tokens": 0}
        return {"type": "message", "content": [], "usage": {**usage, "service_tier": tier}}

    def bounds(dollars: float) -> list[str]:
        return [f"cost > ${dollars - 1e-6:.6f}", f"cost < ${dollars + 1e-6:.6f}"]

    gpt5, sonnet = "gpt-5-2025-08-07", "claude-sonnet-4-5-20250929"
    priced: list[tuple[list[Any], float]] = [
        # 1M input of gpt-5 ($1.25 standard), 100,000 output ($10, $20 priority); priority
        # of 100,000 input ($2.50 a million: its prices are for prompts up to 128,000)
        (turn(gpt5, 100_000, 100_000, serviceTier="priority"), 0.25 + 2.0),
        (turn(gpt5, 1_000_000, 100_000, serviceTier="flex"), (1.25 + 1.0) / 2),
        # flex with cached reads: half of 200,000 at $1.25 and 800,000 at $0.125
        (
            turn(gpt5, 1_000_000, 0, serviceTier="flex", cacheTokens={"cached": 800_000}),
            (0.25 + 0.1) / 2,
        ),
        # priority with cached reads: at the tier's own cached-input price ($0.25)
        (
            turn(gpt5, 100_000, 0, serviceTier="priority", cacheTokens={"cached": 80_000}),
            0.05 + 0.02,
        ),
        # gpt-5.4 past 272,000 input tokens: flex at half its long-context price ($5)
        (turn("gpt-5.4", 300_000, 0, serviceTier="flex"), 0.75),
        # (Sonnet 4.5 under its long-prompt threshold: 100,000 input at $3)
        (turn(sonnet, 100_000, 0, serviceTier="batch"), 0.15),
        # the body's tier, a standard response before it priced as ever
        (
            turn(gpt5, 1_000_000, 0) + turn(gpt5, 100_000, 0, output=openai("priority", 100_000)),
            1.25 + 0.25,
        ),
        (turn(gpt5, 1_000_000, 0, output=openai("flex")), 0.625),
        (turn(gpt5, 1_000_000, 0, output=openai("default")), 1.25),
        # Groq's standard tier (its OpenAI-compatible bodies say it)
        (turn(gpt5, 1_000_000, 0, output=openai("on_demand")), 1.25),
        # an event written by hand with a standard tier's name: the standard price
        (turn(gpt5, 1_000_000, 0, serviceTier="default"), 1.25),
        (turn(sonnet, 100_000, 0, serviceTier="standard", cacheTokens={"read": 0}), 0.3),
        (turn(sonnet, 100_000, 0, output=anthropic("batch")), 0.15),
        (turn(sonnet, 100_000, 0, output=anthropic("standard")), 0.3),
        # a tier named as a user's table may name it, in any case, spaces around: the
        # table's lookup (its "Priority" is "priority"), not a tier of no price
        (turn(gpt5, 100_000, 100_000, serviceTier="Priority"), 0.25 + 2.0),
        (turn(gpt5, 1_000_000, 0, serviceTier=" FLEX "), 0.625),
        (turn(gpt5, 1_000_000, 0, serviceTier="Default"), 1.25),
        (turn(gpt5, 1_000_000, 0, output=openai("Default")), 1.25),
    ]
    unpriced: list[tuple[list[Any], str]] = [
        (turn(sonnet, 1_000_000, 0, serviceTier="priority"), '"priority"'),
        (turn(gpt5, 1_000_000, 0, serviceTier="scale"), '"scale"'),
        # a prompt longer than the tier's prices are for (priority's 128,000; gpt-5.4's
        # long prompts, past 272,000): no known price, never the shorter prompt's
        (turn(gpt5, 200_000, 0, serviceTier="priority"), "past the 128,000"),
        (turn("gpt-5.4", 300_000, 0, output=openai("priority", 300_000)), "past the 128,000"),
        (turn(gpt5, 10, 0, output=openai("auto")) + turn(gpt5, 10, 0), '"auto"'),
        (turn(sonnet, 100_000, 0, output=anthropic("priority")), '"priority"'),
        # a tier that is no text: an error saying so, in both passes
        (turn(gpt5, 10, 0, serviceTier=["priority"]), "which is not a tier"),
        (turn(gpt5, 10, 0, output={**openai("default"), "service_tier": 2}), "tier 2,"),
        # an empty name: no table can price it (one refuses a tier of no name)
        (turn(gpt5, 10, 0, serviceTier=" "), "(a text not empty)"),
    ]
    with tempfile.TemporaryDirectory() as folder:
        runs = [(events, bounds(dollars), "pass") for events, dollars in priced]
        runs += [(events, ["cost < $100"], said) for events, said in unpriced]
        for events, statements, said in runs:
            case = _compiled([*statements, "tokens > 0"])
            reference = _alike(case, events, folder)
            verdicts = [v[0] for v in reference[0][0]]
            if said == "pass":
                assert verdicts == ["pass"] * len(verdicts), (events, reference)
            else:  # (an error naming the tier, never the standard price's pass)
                assert verdicts[0] == "error" and said in str(reference[0][0][0]), reference


def test_gemini_s_thinking_and_tool_use_prompt_are_counted_alike_by_both_passes() -> None:
    """Gemini's `usageMetadata` counts four disjoint parts (`totalTokenCount` is their
    sum): the tool-use prompt is input and the thinking output, as Google bills it, beside
    `promptTokenCount` and `candidatesTokenCount`; in the event's `usage` or its output's,
    camelCase or the Python SDK's snake_case, in memory and from a file (whole and by the
    typed decoder, whose usage struct holds them)."""
    camel = {
        "promptTokenCount": 100,
        "candidatesTokenCount": 20,
        "toolUsePromptTokenCount": 5,
        "thoughtsTokenCount": 30,
        "totalTokenCount": 155,
    }
    snake = {
        "prompt_token_count": 100,
        "candidates_token_count": 20,
        "tool_use_prompt_token_count": 5,
        "thoughts_token_count": 30,
    }
    text = {"candidates": [{"content": {"parts": [{"text": "ok"}], "role": "model"}}]}
    shapes: list[dict[str, Any]] = [
        {"usage": camel},
        {"usage": snake},
        {"output": {**text, "usageMetadata": camel}},
        {"output": {**text, "usage_metadata": snake}},
    ]
    case = _compiled(["tokens == 155", "input tokens == 105", "output tokens == 50"])
    with tempfile.TemporaryDirectory() as folder:
        for shape in shapes:
            events = [{"type": "llm.request"}, {"type": "llm.response", **shape}]
            reference = _alike(case, events, folder)
            assert [v[0] for v in reference[0][0]] == ["pass", "pass", "pass"], (shape, reference)


def test_a_chat_completion_beside_its_cache_counts_has_them_read_with_the_held_note() -> None:
    """The held-call note tells the prompt-cache test that a decoded body is a chat
    completion of one key (`choices`), which holds no counts; a chat completion beside a
    `usage` of cache counts is not one, and its counts are added as the reference adds
    them (in a pass that notes held calls, for `no tool`, and reads tokens)."""
    message = {"choices": [{"message": {"role": "assistant", "content": "x"}}]}
    body = {**message, "usage": {"input_tokens": 3, "cache_read_input_tokens": 10}}
    usage = {"promptTokens": 3, "completionTokens": 1}
    events: list[Any] = [
        {"type": "llm.request", "id": "r1"},
        {"type": "llm.response", "requestId": "r1", "output": message, "usage": usage},
        {"type": "llm.request", "id": "r2"},
        {"type": "llm.response", "requestId": "r2", "output": body, "usage": usage},
    ]
    case = _compiled(["no tool search", "input tokens == 16"])
    reference, generated = _both(case, Run(events=events, format="events"), _fresh)
    assert generated == reference
    assert [v[0] for v in reference[0][0]] == ["pass", "pass"]


def test_the_pass_reads_its_names_and_builtins_as_locals() -> None:
    """`codegen.header`: every value the loop reads by a name (tools, keys, constants,
    helpers) and the builtins it tests by are parameters, read as locals (no global or
    builtin lookup in the pass), and each holds what its name was bound to."""
    import dis

    case = _compiled(
        [
            'tool w args $.q == "a"',
            "every tool w args $.n > 2",
            "tool v result $.ok == true",
            "tools contains w",
            "tokens < 5",
            "answer contains 'x'",
        ]
    )
    made = codegen.generate(case.needs)
    run = made.run
    defaults = run.__kwdefaults__
    assert defaults is not None
    assert defaults["T1"] in ("w", "v") and defaults["type"] is type and defaults["len"] is len
    globals_read = {
        i.argval
        for code in (run.__code__, *(c for c in run.__code__.co_consts if hasattr(c, "co_code")))
        for i in dis.get_instructions(code)
        if i.opname == "LOAD_GLOBAL"
    }
    assert not globals_read & (set(defaults) - {"events", "again", "is_list"})
    events = [
        {"type": "tool.call", "name": "w", "callId": "c1", "arguments": {"q": "a", "n": 3}},
        {"type": "tool.call", "name": "v", "callId": "c2", "arguments": {}},
        {"type": "tool.result", "callId": "c2", "output": {"ok": True}},
        {
            "type": "llm.response",
            "output": "x",
            "usage": {"promptTokens": 1, "completionTokens": 2},
        },
    ]
    reference, generated = _both(case, Run(events=events, format="events"), lambda n: n)
    assert generated == reference


def test_a_response_naming_its_request_by_a_str_subclass_answers_it_as_the_reference() -> None:
    """The reference links a response to a request by a `requestId` that is exactly text
    or a whole number: a `str` subclass equal to the waiting request's id answers nothing
    (the request stays unanswered), in the generated pass too (it compared ids alone)."""
    case = _compiled(["tokens <= 100"])
    usage = {"promptTokens": 1, "completionTokens": 2}
    events = [
        {"type": "llm.request", "id": "r1"},
        {"type": "llm.response", "requestId": _Text("r1"), "usage": usage},
    ]
    reference, generated = _both(case, Run(events=events, format="events"), lambda n: n)
    assert generated == reference
    assert "r1" in str(reference)  # (the unanswered request, in the verdict's message)


_COUNTED_KINDS = [
    {"type": "tool.call", "name": "a", "callId": "c"},
    {"type": "mcp.call", "tool": "b"},
    {"type": "tool.result", "callId": "c", "output": 1},
    {"type": "llm.request", "id": "r"},
    {"type": "llm.response", "requestId": "r", "output": "x"},
    {"type": "llm.invoke", "output": "y", "tokensIn": 1, "tokensOut": 2},
    {"type": "user.message"},
    {"type": "policy.evaluate"},
    {"type": "error"},
    {"type": "something.else"},
]


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(st.integers(0, len(_COUNTED_KINDS) - 1), max_size=40), st.booleans())
def test_each_kinds_count_is_the_references_results_counted_as_what_the_others_leave(
    picks: list[int], tokens: bool
) -> None:
    """The pass counts results as the events less every other kind (`llm.invoke` both a
    step and a response), a list by its length and a stream by its lists' lengths; the
    steps' count takes each `llm.invoke` in the loop (tokens) or after it."""
    events = [dict(_COUNTED_KINDS[i]) for i in picks]
    needs = attrs.evolve(_compiled(["tool a called"]).needs, tokens=tokens, passes={})
    made = passes.pass_for(needs, raw=False)
    names = ("steps", "responses", "tool_calls", "guards", "errors", "results", "others")

    def counts(facts: Any) -> Any:
        return [getattr(facts, n) for n in names], facts.unknown

    expected = counts(reference_index_events(events, needs))
    assert counts(made.run(events, None, True)) == expected
    assert counts(made.run(passes.batches(iter(events)), None, False)) == expected


def test_a_one_value_groups_values_found_are_its_calls_fed_less_those_without_one() -> None:
    # A group on a key (or the whole value) counts the calls it was fed that gave no
    # value, and its values found are the others, as the reference counts an open test's
    # (a closed group's count is set as it closes). Calls without the key before and
    # after tests are decided; a result group, counted by its own feeds; a whole value.
    case = _compiled(
        [
            'tool search args $.q == "a"',
            'tool search args $.q == "b"',
            "every tool search args $.q matches /^[a-z]$/",
            "tool search args $.n > 100",
            "tool search result $.hits > 5",
            "tool search result $.hits > 50",
            'tool fetch args contains "zz"',
        ]
    )

    def call(n: int, args: Any) -> dict[str, Any]:
        return {
            "type": "tool.call",
            "name": "search",
            "id": f"e{n}",
            "callId": f"c{n}",
            "arguments": args,
        }

    def result(n: int, output: Any) -> dict[str, Any]:
        return {"type": "tool.result", "callId": f"c{n}", "output": output}

    events: list[Any] = [
        call(1, {"n": 1}),
        result(1, {"hits": 1}),
        call(2, {"q": "a", "n": 2}),
        result(2, {}),
        call(3, {}),
        result(3, {"hits": 9}),
        call(4, {"q": "b"}),
        result(4, "no hits"),
        call(5, {"n": 3}),
        result(5, {"hits": 2}),
        call(6, {"q": "c", "n": 4}),
        result(6, {"hits": 3}),
        {"type": "tool.call", "name": "fetch", "arguments": {"u": 1}},
        {"type": "tool.call", "name": "fetch"},
        {"type": "tool.call", "name": "fetch", "arguments": "x"},
    ]
    made = passes.pass_for(case.needs, raw=False)
    assert "_missed += 1" in made.source and "_found += 1" not in made.source
    for cut in range(1, len(events) + 1):
        run = Run(events=events[:cut])
        facts = passes.index_run(run, case.needs)
        reference = reference_index_run(run, case.needs)
        for probe in case.needs.probes:
            tally = facts.trace.tallies[probe]  # type: ignore[union-attr]
            expected = reference.trace.tallies[probe]  # type: ignore[union-attr]
            assert (tally.decided, tally.first, tally.last) == (
                expected.decided,
                expected.first,
                expected.last,
            ), (cut, probe.path)
            if not tally.decided:  # (a decided test's messages read its decision)
                assert (tally.found, tally.fed, tally.sample) == (
                    expected.found,
                    expected.fed,
                    expected.sample,
                ), (cut, probe.path)


_RESPONSES_AND_INVOKES = [
    {"type": "llm.request", "id": "r"},
    {
        "type": "llm.response",
        "requestId": "r",
        "output": "the x",
        "usage": {"promptTokens": 2, "completionTokens": 1},
    },
    {"type": "llm.response", "output": {"choices": [{"message": {"content": "x"}}]}},
    {"type": "llm.response", "output": {"choices": [{"message": CHAT_CALLS}]}},
    {"type": "llm.invoke", "output": "y", "tokensIn": 1, "tokensOut": 2},
    {"type": "llm.invoke", "output": {"choices": [{"message": CHAT_CALLS}]}, "tokensIn": 3},
    {"type": "llm.invoke", "output": {"choices": [{"message": {"content": "x"}}]}},
    {"type": "tool.call", "name": "search", "callId": "c"},
    {"type": "user.message"},
]


@settings(max_examples=examples(100), deadline=None)
@given(st.lists(st.integers(0, len(_RESPONSES_AND_INVOKES) - 1), max_size=30))
def test_an_llm_invoke_is_a_branch_of_its_own_read_as_the_reference_reads_it(
    picks: list[int],
) -> None:
    """A dict pass asks no response whether it is an `llm.invoke`: each kind is a branch
    of its own, with the same lines but for the step an `llm.invoke` is (its output is no
    held call's: the reference reads only `llm.response`s for those), and the verdicts
    and metrics are the reference's on responses and invokes mixed."""
    statements = [
        "tokens < 6",
        "steps >= 2",
        "tools contains search",
        'answer contains "x"',
        "answer[-2] not empty",
        "answer[1] not empty",
    ]
    case = _compiled(statements)
    source = codegen.generate(case.needs).source
    assert "elif kind == 'llm.response':" in source and "elif kind == 'llm.invoke':" in source
    assert "RESPONSE_TYPES:" not in source and '"llm.invoke"' not in source
    events = [dict(_RESPONSES_AND_INVOKES[i]) for i in picks]
    reference, generated = _both(case, Run(events=events, format="events"), lambda n: n)
    assert generated == reference, "\n".join(statements)
