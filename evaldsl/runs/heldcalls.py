"""Held calls: the tool calls a recording's LLM responses hold that no call event records.

Takes a run's events (a traceplay cassette's, or an `events` trace's) and gives, by tool,
how many calls the `llm.response` outputs hold (OpenAI's `choices[0].message.tool_calls`,
Anthropic's `tool_use` blocks, the Responses API's `function_call` items) beyond the
`tool.call` and `mcp.call` events of that tool. evaldsl counts call events, as traceplay
does; a recorder that wrote a call only inside the response leaves a call that `no tool
X` would pass on, unread: the checkers make such a test an error verdict
(`RunFacts.held_calls`), and `evaldsl inspect` notes the calls.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from evaldsl.runs.events import LLM_RESPONSE, tool_call_name


def response_call_names(output: Any) -> Iterator[str]:
    """The names of the tool calls one LLM response's output holds.

    >>> list(response_call_names({"choices": [{"message": {"tool_calls": [
    ...     {"function": {"name": "get_weather"}}]}}]}))
    ['get_weather']
    >>> list(response_call_names({"content": [{"type": "tool_use", "name": "search"}]}))
    ['search']
    """
    if not isinstance(output, dict):
        return
    choices = output.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        message = choices[0].get("message")
        calls = message.get("tool_calls") if isinstance(message, dict) else None
        for call in calls if isinstance(calls, list) else ():
            function = call.get("function") if isinstance(call, dict) else None
            name = function.get("name") if isinstance(function, dict) else None
            if isinstance(name, str) and name:
                yield name
    for key, kind in (("content", "tool_use"), ("output", "function_call")):
        items = output.get(key)
        for item in items if isinstance(items, list) else ():
            if isinstance(item, dict) and item.get("type") == kind:
                name = item.get("name")
                if isinstance(name, str) and name:
                    yield name


def held_calls(events: Iterable[dict[str, Any]]) -> dict[str, int]:
    """By tool, the calls the responses hold beyond the call events of that tool (one
    more pass over the events).

    >>> held_calls([{"type": "llm.response", "output": {"content": [
    ...     {"type": "tool_use", "name": "a"}, {"type": "tool_use", "name": "b"}]}},
    ...     {"type": "tool.call", "name": "a"}])
    {'b': 1}
    """
    held: dict[str, int] = {}
    events_of: dict[str, int] = {}
    for event in events:
        if event.get("type") == LLM_RESPONSE:
            for name in response_call_names(event.get("output")):
                held[name] = held.get(name, 0) + 1
        else:
            called = tool_call_name(event)
            if called is not None:
                events_of[called] = events_of.get(called, 0) + 1
    left = {name: n - events_of.get(name, 0) for name, n in held.items()}
    return {name: n for name, n in left.items() if n > 0}


def held_said(held: dict[str, int]) -> str:
    """The held calls in words: `get_weather: 1, search: 2`."""
    return ", ".join(f"{name}: {n}" for name, n in held.items())


def held_error(what: str, held: dict[str, int]) -> str:
    """Why `what` (a subject, a count) cannot be told on a run with `held` calls.

    >>> held_error("`tools`", {"get_weather": 1})[:60]
    '`tools` cannot be told: the LLM responses hold calls no tool'
    """
    return (
        f"{what} cannot be told: the LLM responses hold calls no tool.call event records "
        f"({held_said(held)}); record each call as a tool.call event, as traceplay's "
        "recorder does"
    )
