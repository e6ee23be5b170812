"""Changes to the real OTLP traces of `tests/fixtures/realworld/` shared by the OTel tests."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

#: A change to a list of GenAI messages (`gen_ai.input.messages`, decoded).
MessagesChange = Callable[[list[dict[str, Any]]], None]


def spans(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The spans of an OTLP document of one resource and one scope."""
    found: list[dict[str, Any]] = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
    return found


def latitude_history(doc: dict[str, Any], change: MessagesChange) -> None:
    """The Latitude trace (`otel-latitude-otlp`) without its tool span, so that the weather
    call waits and the last model call's history (`gen_ai.input.messages`, its attribute
    10) is read for its result; `change` is made to that history's messages."""
    del spans(doc)[3]
    value = spans(doc)[3]["attributes"][10]["value"]
    messages = json.loads(value["stringValue"])
    change(messages)
    value["stringValue"] = json.dumps(messages)
