"""Held calls: the tool calls a recording's LLM responses hold that no call event records.

Takes a run's events (a traceplay cassette's, or an `events` trace's) and gives, by tool,
how many calls the `llm.response` outputs hold (OpenAI's `choices[0].message.tool_calls`,
Anthropic's `tool_use` blocks, the Responses API's `function_call` items, Gemini's
`functionCall` parts of `candidates[0].content.parts`) beyond the
`tool.call` and `mcp.call` events of that tool. evaldsl counts call events, as traceplay
does; a recorder that wrote a call only inside the response leaves a call that `no tool
X` would pass on, unread: the checkers make such a test an error verdict
(`RunFacts.held_calls`), and `evaldsl inspect` notes the calls.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from evaldsl.runs.events import LLM_RESPONSE, MCP_CALL, TOOL_CALL, tool_call_name


def response_call_names(output: Any) -> list[str]:
    """The names of the tool calls one LLM response's output holds.

    >>> response_call_names({"choices": [{"message": {"tool_calls": [
    ...     {"function": {"name": "get_weather"}}]}}]})
    ['get_weather']
    >>> response_call_names({"content": [{"type": "tool_use", "name": "search"}]})
    ['search']
    >>> response_call_names({"candidates": [{"content": {"parts": [
    ...     {"functionCall": {"name": "get_weather", "args": {}}}]}}]})
    ['get_weather']
    """
    # (a list, not a generator: it is asked of every response of a run, and most hold
    # no call; a generator's frame made and ended for each was most of the work)
    names: list[str] = []
    if not isinstance(output, dict):
        return names
    choices = output.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        message = choices[0].get("message")
        calls = message.get("tool_calls") if isinstance(message, dict) else None
        if isinstance(calls, list):
            for call in calls:
                function = call.get("function") if isinstance(call, dict) else None
                name = function.get("name") if isinstance(function, dict) else None
                if isinstance(name, str) and name:
                    names.append(name)
    # (Anthropic's `tool_use` blocks, the Responses API's `function_call` items)
    items = output.get("content")
    if isinstance(items, list):
        names += _items_named(items, "tool_use")
    items = output.get("output")
    if isinstance(items, list):
        names += _items_named(items, "function_call")
    candidates = output.get("candidates")
    if isinstance(candidates, list) and candidates and isinstance(candidates[0], dict):
        names += _gemini_calls(candidates[0].get("content"))
    return names


def _gemini_calls(content: Any) -> list[str]:
    """The names of the `functionCall` parts of a Gemini candidate's `content` (the REST
    body's spelling, or `function_call` as Google's Python SDK dumps it)."""
    names: list[str] = []
    parts = content.get("parts") if isinstance(content, dict) else None
    for part in parts if isinstance(parts, list) else ():
        if isinstance(part, dict):
            call = part.get("functionCall", part.get("function_call"))
            name = call.get("name") if isinstance(call, dict) else None
            if isinstance(name, str) and name:
                names.append(name)
    return names


def _items_named(items: list[Any], kind: str) -> list[str]:
    """The names of the items of `kind` (a call's type) among an output's `items`."""
    names: list[str] = []
    for item in items:
        if isinstance(item, dict) and item.get("type") == kind:
            name = item.get("name")
            if isinstance(name, str) and name:
                names.append(name)
    return names


def held_calls(events: Iterable[dict[str, Any]]) -> dict[str, int]:
    """By tool, the calls the responses hold beyond the call events of that tool (one
    more pass over the events).

    >>> held_calls([{"type": "llm.response", "output": {"content": [
    ...     {"type": "tool_use", "name": "a"}, {"type": "tool_use", "name": "b"}]}},
    ...     {"type": "tool.call", "name": "a"}])
    {'b': 1}
    """
    # The read runs wherever a passing `no tool`, `called at most` or `tools` test asks
    # and the pass could not tell that no response holds a call, over every event of the
    # run: each event's type, a call's name counted inline (`tool_call_name`'s frame at
    # every event was a third of the read), a response's output passed over by its keys
    # when it cannot hold a call (`may_hold_calls`; `response_call_names` was a generator
    # made and ended for every response, most of the read). The events may be a stream:
    # nothing of them is kept, only a count of the calls by name.
    held: dict[str, int] = {}
    events_of: dict[str, int] = {}
    for event in events:
        kind = event.get("type")
        if kind == LLM_RESPONSE:
            output = event.get("output")
            if may_hold_calls(output):
                for name in response_call_names(output):
                    held[name] = held.get(name, 0) + 1
        elif kind == TOOL_CALL:
            called = event.get("name")
            if isinstance(called, str) and called:
                events_of[called] = events_of.get(called, 0) + 1
        elif kind == MCP_CALL:
            called = tool_call_name(event)
            if called is not None:
                events_of[called] = events_of.get(called, 0) + 1
    left = {name: n - events_of.get(name, 0) for name, n in held.items()}
    return {name: n for name, n in left.items() if n > 0}


def may_hold_calls(output: Any) -> bool:
    """Whether an `llm.response`'s output may hold a call (`response_call_names` may name
    one); False for most, told at a fraction of its work.

    >>> may_hold_calls({"choices": [{"message": {"content": "It is sunny."}}]})
    False
    """
    return isinstance(output, dict) and not _no_calls(output)


def holds_calls(output: Any) -> bool:
    """Whether an `llm.response`'s output holds a call (`response_call_names` names one):
    the generated pass asks it of each response until one does, so that a run whose
    responses hold none (an Anthropic text reply too, which `may_hold_calls` cannot tell
    by its keys) needs no second read (`RunFacts.held_calls`).

    >>> holds_calls({"content": [{"type": "text", "text": "It is sunny."}]})
    False
    """
    return may_hold_calls(output) and bool(response_call_names(output))


def _no_calls(output: dict[str, Any]) -> bool:
    """Whether `output` is a chat completion's whose message holds no `tool_calls`, and
    nothing else (the common response without a call, told by exact types and keys at a
    fraction of `response_call_names`' work; any other output is asked of it)."""
    if (
        type(output) is not dict
        or "content" in output
        or "output" in output
        or "candidates" in output  # (Gemini's: its parts may call)
    ):
        return False
    choices = output.get("choices")
    if type(choices) is not list or not choices:  # (a subclass's items: asked of it)
        return not choices or not isinstance(choices, list)
    first = choices[0]
    message = first.get("message") if type(first) is dict else None
    return type(message) is dict and "tool_calls" not in message


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
