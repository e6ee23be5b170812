"""A tiny live agent for evaldsl's `run` targets (no network, no model: deterministic).

- `answer(input)` plays a weather agent: it "calls" a weather tool and returns the trace
  of what it did as traceplay-style events, so tool and answer assertions apply.
- `plan(input)` plays a cycgraph workflow: it returns a final WorkflowState; evaldsl
  seeds the input into memory and lifts `goal`, `constraints` and `max_token_budget`.
- `slow(input)` is async and sleeps: with a short `timeout` it shows a timed-out case.
"""

from __future__ import annotations

import asyncio
from typing import Any

FORECASTS = {"Xiamen": ("sunny", 31), "Tokyo": ("rainy", 12), "Paris": ("cloudy", 4)}


def answer(input: dict[str, Any]) -> list[dict[str, Any]]:
    city = str(input.get("city", ""))
    sky, temp = FORECASTS.get(city, ("unknown", 0))
    return [
        {"type": "user.message", "content": f"Weather in {city}?"},
        {"type": "llm.request", "model": "gpt-4o-mini", "messages": []},
        {"type": "tool.call", "name": "get_weather", "callId": "c1", "arguments": {"city": city}},
        {"type": "tool.result", "callId": "c1", "output": {"sky": sky, "temp_c": temp}},
        {
            "type": "llm.response",
            "output": {"choices": [{"message": {"content": f"{city}: {sky}, {temp} C"}}]},
            "usage": {"promptTokens": 50, "completionTokens": 9},
        },
    ]


def plan(input: dict[str, Any]) -> dict[str, Any]:
    topic = str(input.get("goal", ""))
    return {
        "status": "completed",
        "memory": {"summary": f"Three findings about {topic}."},
        "visited_nodes": ["planner", "researcher", "writer"],
        "total_tokens_used": 900,
    }


async def slow(input: dict[str, Any]) -> str:
    await asyncio.sleep(float(input.get("seconds", 5)))
    return "done"
