"""A small verydia-style flow: triage a support message, with a policy guard.

`run(input)` returns a list of trace events (an `llm.invoke`, a `policy.evaluate` guard
when the message mentions money, an `mcp.call` to look the customer up) plus the flow's
output, as a dict `{"events": [...], "output": {...}}`.
"""

from __future__ import annotations

from typing import Any


def run(input: dict[str, Any]) -> dict[str, Any]:
    text = str(input.get("text", ""))
    events: list[dict[str, Any]] = [
        {"type": "llm.invoke", "model": "gpt-4o-mini", "output": f"triaging: {text}",
         "tokensIn": 40 + len(text), "tokensOut": 12},
    ]
    if any(word in text.lower() for word in ("refund", "charge", "invoice")):
        events.append({"type": "policy.evaluate", "name": "money-guard", "decision": "allow"})
        queue = "billing"
    else:
        queue = "support"
    customer = input.get("customer")
    if customer:
        events.append({"type": "mcp.call", "name": "crm_lookup", "arguments": {"id": customer},
                       "result": {"id": customer, "tier": "gold"}})
    return {"events": events, "output": {"queue": queue, "length": len(text)}}
