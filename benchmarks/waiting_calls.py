"""Reading a trace whose calls never get their results: time against the trace's length.

Run:  .venv/bin/python benchmarks/waiting_calls.py [--turns N] [--runs R]

Writes OTLP JSONL files of N/4, N/2 and N turns (N = 8,000 by default), each turn an LLM
span whose output asks for a `search` call by one id and a tool span that runs it under
another, so every call the model asked for waits for a result to the end, and reads each
with `evaldsl.load_run` (the best of R). A reader that links results to waiting calls in
a time that does not grow with how many wait reads N turns in about 4x the time of N/4;
one that scans them, in about 16x. Printed: the times, and the ratios to the shortest.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import evaldsl  # noqa: E402


def _attr(key: str, value: str) -> dict[str, Any]:
    return {"key": key, "value": {"stringValue": value}}


def write_turns(path: Path, turns: int) -> None:
    """`turns` lines of OTLP JSON: an LLM span asking for call `mI`, a tool span `tI`."""
    start = 1_700_000_000_000_000_000
    with path.open("w") as f:
        for i in range(turns):
            asked = [
                {
                    "role": "assistant",
                    "parts": [
                        {"type": "tool_call", "id": f"m{i}", "name": "search", "arguments": {}}
                    ],
                }
            ]
            at = start + i * 10_000
            llm = {
                "traceId": "0" * 32,
                "spanId": f"{2 * i:016x}",
                "name": "chat",
                "startTimeUnixNano": str(at),
                "endTimeUnixNano": str(at + 1000),
                "attributes": [
                    _attr("gen_ai.operation.name", "chat"),
                    _attr("gen_ai.output.messages", json.dumps(asked)),
                ],
            }
            tool = {
                "traceId": "0" * 32,
                "spanId": f"{2 * i + 1:016x}",
                "name": "execute_tool search",
                "startTimeUnixNano": str(at + 2000),
                "endTimeUnixNano": str(at + 3000),
                "attributes": [
                    _attr("gen_ai.operation.name", "execute_tool"),
                    _attr("gen_ai.tool.name", "search"),
                    _attr("gen_ai.tool.call.id", f"t{i}"),
                    _attr("gen_ai.tool.call.result", "ok"),
                ],
            }
            spans = [llm, tool]
            f.write(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}) + "\n")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--turns", type=int, default=8_000, help="turns of the longest file")
    parser.add_argument("--runs", type=int, default=3, help="readings of each file (best)")
    opts = parser.parse_args()
    sizes = [opts.turns // 4, opts.turns // 2, opts.turns]
    best: dict[int, float] = {}
    with tempfile.TemporaryDirectory() as folder:
        for turns in sizes:
            path = Path(folder) / f"waiting-{turns}.jsonl"
            write_turns(path, turns)
            times = []
            for _ in range(opts.runs):
                started = time.perf_counter()
                run = evaldsl.load_run(str(path))
                times.append(time.perf_counter() - started)
            calls = sum(1 for e in run.events if e.get("type") == "tool.call")
            best[turns] = min(times)
            print(f"{turns:>7,} turns ({calls:,} calls): {best[turns] * 1000:8.0f} ms")
    shortest = best[sizes[0]]
    ratios = ", ".join(f"{best[t] / shortest:.1f}x" for t in sizes[1:])
    print(f"time / time of {sizes[0]:,} turns: {ratios} (linear: 2x, 4x; quadratic: 4x, 16x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
