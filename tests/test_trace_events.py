"""The events `Trace` (`runs/providers.py`) makes: every key, value and their order.

`Trace.llm`, `call` and `result` make their events whole (a dict literal each) where they
were made, then filled by `_add` (`type` and the event's own keys first, then `id`, `seq`
and `at`). Each combination of what may be given or left out must give the event `_add`
gave, key for key and in that order (a report's JSON shows them in it).
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from evaldsl.runs.model import MISSING
from evaldsl.runs.providers import Trace


def _added(events: list[dict[str, Any]], event: dict[str, Any], at: str | None) -> None:
    """`Trace._add` as it was: the ids and place added to an event after its own keys."""
    event["id"] = f"e{len(events) + 1}"
    event["seq"] = len(events)
    if at is not None:
        event["at"] = at
    events.append(event)


def _items(events: list[dict[str, Any]]) -> list[list[tuple[str, Any]]]:
    return [list(e.items()) for e in events]


#: `Trace.llm`'s keyword arguments, each with what it may be given.
_LLM_GIVEN = {
    "model": (None, "", "m"),
    "start": (None, "t0"),
    "end": (None, "t1"),
    "failed": (False, True),
    "latency_ms": (None, 1.5),
    "cache": (
        None,
        {"write5m": 0, "write1h": 0, "read": 0},
        {"write5m": 2, "write1h": 0, "read": 1},
    ),
}


@pytest.mark.parametrize("usage", [None, (3, 1)])
@pytest.mark.parametrize(
    "given",
    [
        dict(zip(_LLM_GIVEN, values, strict=True))
        for values in itertools.product(*_LLM_GIVEN.values())
    ],
)
def test_an_llm_call_gives_the_events_add_gave(given: dict[str, Any], usage: Any) -> None:
    trace = Trace("otel", "f.jsonl", "why")
    trace.call("t", {}, "c1")  # (events before: ids and places go on from them)
    trace.llm("hi", usage, **given)
    model, start, end, cache = given["model"], given["start"], given["end"], given["cache"]
    expected = [dict(trace.events[0])]
    request: dict[str, Any] = {"type": "llm.request"}
    if model:
        request["model"] = model
    _added(expected, request, start)
    response: dict[str, Any] = {
        "type": "llm.response",
        "requestId": "e2",
        "status": 500 if given["failed"] else 200,
        "output": "hi",
    }
    if usage is not None:
        response["usage"] = {"promptTokens": usage[0], "completionTokens": usage[1]}
    if cache is not None and any(cache.values()):
        response["cacheTokens"] = cache
    if model:
        response["model"] = model
    if given["latency_ms"] is not None:
        response["latencyMs"] = given["latency_ms"]
    _added(expected, response, end if end is not None else start)
    assert _items(trace.events) == _items(expected)


@pytest.mark.parametrize(
    ("name", "arguments", "call_id", "at"),
    list(itertools.product(("t", 7), (MISSING, None, {"a": 1}), (None, "", "c1"), (None, "t0"))),
)
def test_a_call_gives_the_event_add_gave(name: Any, arguments: Any, call_id: Any, at: Any) -> None:
    trace = Trace("otel", "f.jsonl", "why")
    trace.llm("", None)
    cid = trace.call(name, arguments, call_id, at)
    assert cid == (call_id or "call-1")
    expected = [dict(e) for e in trace.events[:2]]
    event: dict[str, Any] = {"type": "tool.call", "name": name}
    if arguments is not MISSING:
        event["arguments"] = arguments
    event["callId"] = cid
    _added(expected, event, at)
    assert _items(trace.events) == _items(expected)
    assert trace.known_call(None, name) == cid  # (filed under its name, or as unnamed)


@pytest.mark.parametrize(
    ("name", "is_error", "at"), list(itertools.product(("t", 7), (False, True), (None, "t1")))
)
def test_a_result_gives_the_event_add_gave(name: Any, is_error: bool, at: Any) -> None:
    trace = Trace("otel", "f.jsonl", "why")
    cid = trace.call(name, {}, "c1")
    trace.result(cid, '{"ok": 1}', is_error=is_error, at=at)
    expected = [dict(trace.events[0])]
    event: dict[str, Any] = {"type": "tool.result", "callId": "c1", "output": {"ok": 1}}
    if is_error:
        event["isError"] = True
    _added(expected, event, at)
    assert _items(trace.events) == _items(expected)
    assert trace.known_call(None, name) is None  # (taken out of every index)
