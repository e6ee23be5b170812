"""`answer cites tool NAME` on long answers: time against the answer's length.

Run:  .venv/bin/python benchmarks/long_answers.py [--values N] [--runs R]

A run whose tool returned N citable values (20,000 by default) and whose answer is 10 KB,
100 KB or 1 MB of text quoting a few of them. Times, in turns, the checker of `answer
cites tool search at least 3 values` (the citable values gathered, then found in the
answer) and, as the baseline, the same values found by searching the answer for each
(`value.lower() in answer`, the rule before the RE2 Set), the best of R each; checks that
both find the same values. Searching for each value takes time in values x length; one
pass of a Set over the answer, in length plus the Set's making. Printed: the times and
their ratio.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import evaldsl  # noqa: E402
from benchmarks import bench  # noqa: E402
from evaldsl.predicates.cites import citable_values  # noqa: E402

SEED = 20261201


def run_of(values: int, length: int) -> tuple[list[dict[str, Any]], list[str]]:
    rng = random.Random(SEED)
    hits = [{"title": f"Result {i:06d}", "score": 1000 + i} for i in range(values // 2)]
    filler = " ".join(
        rng.choice(["lorem", "ipsum", "dolor", "sit", "amet"]) for _ in range(length // 5)
    )
    quoted = ["RESULT 000042", "result 009999", "1077"]
    answer = (" ".join(quoted) + " " + filler)[:length]
    events = [
        {"type": "tool.call", "name": "search", "callId": "c1", "arguments": {"q": "x"}},
        {"type": "tool.result", "callId": "c1", "output": {"hits": hits}},
        {"type": "llm.response", "output": answer},
    ]
    return events, [answer]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--values", type=int, default=20_000, help="citable values")
    parser.add_argument("--runs", type=int, default=3, help="checks of each (best)")
    opts = parser.parse_args()
    program = evaldsl.compile("answer cites tool search at least 3 values")
    for length in (10_000, 100_000, 1_000_000):
        events, (answer,) = run_of(opts.values, length)
        leaves = citable_values([events[1]["output"]])
        lowered = answer.lower()
        took, result = bench.best_cpu(opts.runs, lambda events=events: program.check(events))
        took_each, found = bench.best_cpu(
            opts.runs,
            lambda leaves=leaves, lowered=lowered: sorted(
                leaf for leaf in leaves if leaf.lower() in lowered
            ),
        )
        (verdict,) = result.verdicts
        agree = "agree" if verdict.actual == found else "!!! DIFFER !!!"
        print(
            f"{length:>9,} characters, {len(leaves):,} values: cites {took * 1000:8.1f} ms; "
            f"a search for each value {took_each * 1000:8.1f} ms "
            f"({took / took_each:.2f}x); found values {agree} ({len(found)})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
