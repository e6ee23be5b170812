"""Generated production-like traces for the `evaldsl score` tests: deterministic, varied
(event lists, `{events}` objects, headerless JSONL, unreadable files), some passing the
test program and some failing each of its assertions."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

PROGRAM = """\
# applied to every generated trace
tools search, fetch, execute_shell
no tool execute_shell
tool search called at least 1 time
tokens <= 4000
"""


def events(rng: random.Random) -> list[dict[str, Any]]:
    """One agent run: a question, a few LLM calls, tool calls with results, an answer."""
    out: list[dict[str, Any]] = [{"type": "user.message", "content": "what is new?"}]
    for step in range(rng.randint(1, 4)):
        tokens = rng.randint(50, 1500)
        out.append({"type": "llm.request", "id": f"r{step}", "model": "gpt-4o-mini"})
        out.append(
            {
                "type": "llm.response",
                "requestId": f"r{step}",
                "usage": {"promptTokens": tokens, "completionTokens": tokens // 10},
                "output": {"content": f"step {step}"},
            }
        )
        for n in range(rng.randint(0, 3)):
            name = rng.choice(["search", "search", "fetch", "execute_shell"] if n else ["search"])
            if rng.random() < 0.1:
                name = "fetch"
            out.append({"type": "tool.call", "id": f"c{step}{n}", "name": name, "arguments": {}})
            out.append({"type": "tool.result", "callId": f"c{step}{n}", "result": {"ok": True}})
    out.append({"type": "llm.response", "output": {"content": "done"}})
    return out


def write_traces(folder: Path, count: int, seed: int = 7) -> list[Path]:
    """`count` trace files under `folder` (in two sub-folders), about 1 in 100 unreadable."""
    rng = random.Random(seed)
    paths = []
    for i in range(count):
        sub = folder / ("a" if i % 2 else "b")
        sub.mkdir(parents=True, exist_ok=True)
        kind = rng.random()
        if kind < 0.01:
            path = sub / f"t{i:05}.json"
            path.write_text('{"events": [1, ', encoding="utf-8")
        elif kind < 0.2:
            path = sub / f"t{i:05}.jsonl"
            lines = (json.dumps(e) for e in events(rng))
            path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        elif kind < 0.4:
            path = sub / f"t{i:05}.json"
            path.write_text(json.dumps({"id": i, "events": events(rng)}), encoding="utf-8")
        else:
            path = sub / f"t{i:05}.json"
            path.write_text(json.dumps(events(rng)), encoding="utf-8")
        paths.append(path)
    return paths
