"""A case naming many tools: the generated pass's time against the number of tools named.

Run:  .venv/bin/python benchmarks/many_tools.py [--events N] [--runs R]

For 5, 50 and 500 tools named in one case (a fifth of them tested by an `args` test, a
fifth by an `every … result` test, the rest only counted: `tool X called at most N
times`, `no tool X`), N in-memory events
(200,000 by default) of calls spread over the named tools and as many unnamed ones, each
followed by its result. Times, in turns, the case's check (its generated pass) and the
reference pass (`evaldsl/runs/index.py`, which finds a call's tool by one dict lookup),
the best of R each, and checks that both give the same verdicts. A pass that compares a
call's name with each tool named takes time in the number of tools; one that looks it up,
about the same time for 500 tools as for 5. Printed: the times, the ratio of the two
passes, and each pass's ratio to its own time for 5 tools.
"""

from __future__ import annotations

import argparse
import gc
import random
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import evaldsl  # noqa: E402
from benchmarks import bench  # noqa: E402
from evaldsl.compile.evaluate import evaluate  # noqa: E402
from evaldsl.runs.index import index_run  # noqa: E402
from evaldsl.runs.model import Run  # noqa: E402

SEED = 20261201


def case_text(tools: int) -> str:
    """`tools` tools named: a fifth tested by their arguments, a fifth by every result
    (which then links each of their calls to its result), the others counted."""
    lines = []
    for i in range(tools):
        name = f"tool_{i:04d}"
        if i % 5 == 0:
            lines.append(f"tool {name} args $.q matches /^query \\d+$/")
        elif i % 5 == 1:
            lines.append(f"every tool {name} result $.ok == true")
        elif i % 2:
            lines.append(f"tool {name} called at most 100000 times")
        else:
            lines.append(f"no tool {name}")
    return "\n".join(lines)


def events(count: int, tools: int) -> list[dict[str, Any]]:
    """Calls (and their results) of the named tools and of as many unnamed ones."""
    rng = random.Random(SEED)
    names = [f"tool_{i:04d}" for i in range(tools)] + [f"other_{i:04d}" for i in range(tools)]
    out: list[dict[str, Any]] = []
    for i in range(count // 2):
        out.append(
            {
                "type": "tool.call",
                "id": f"e{i}",
                "name": rng.choice(names),
                "callId": f"c{i}",
                "arguments": {"q": f"query {i}"},
            }
        )
        out.append({"type": "tool.result", "callId": f"c{i}", "output": {"ok": True}})
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--events", type=int, default=200_000, help="events of each run")
    parser.add_argument("--runs", type=int, default=5, help="checks of each (best)")
    opts = parser.parse_args()
    sizes = (5, 50, 500)
    generated: dict[int, float] = {}
    reference: dict[int, float] = {}
    for tools in sizes:
        case = evaldsl.compile(case_text(tools)).cases[0]
        run = events(opts.events, tools)
        gc.collect()
        gc.freeze()  # (the events live to the end: no collection walks them)
        case.check(run)  # the pass made once, as a suite of cases alike makes it
        took_g, result = bench.best_cpu(opts.runs, lambda case=case, run=run: case.check(run))
        took_r, facts = bench.best_cpu(
            opts.runs, lambda case=case, run=run: index_run(Run(events=run), case.needs)
        )
        mine = [v.status for v in result.verdicts]
        theirs = [evaluate(a, facts).status for a in case.assertions]
        agree = "agree" if mine == theirs else "!!! DIFFER !!!"
        generated[tools], reference[tools] = took_g, took_r
        print(
            f"{tools:>4} tools: generated pass {took_g * 1000:7.1f} ms, reference pass "
            f"{took_r * 1000:7.1f} ms ({took_g / took_r:.2f}x); verdicts {agree}"
        )
        gc.unfreeze()
    first = sizes[0]
    grow = ", ".join(f"{generated[t] / generated[first]:.2f}x" for t in sizes[1:])
    grow_r = ", ".join(f"{reference[t] / reference[first]:.2f}x" for t in sizes[1:])
    print(
        f"time / time for {first} tools (CPU time, best of {opts.runs}): generated {grow}; "
        f"reference {grow_r} (looked up: ~1x; compared one by one: growing with the tools)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
