"""Compile throughput of this checkout against another tree, measured in the same run.

Run:  .venv/bin/python benchmarks/compile_ab.py OTHER_TREE [--rounds R] [--compiles C]
      (OTHER_TREE: a checkout of another commit, e.g. `git archive REV | tar -x -C DIR`)

Compiles bench.py's file of 10,000 mixed, mostly unique statements (section (a): the same
file, generated from the same seed) with each tree's evaldsl, in a fresh process per tree
and round, the trees alternating so that both meet the same load. Each process compiles
once to warm up, then C times (the regex, path and did-you-mean caches cleared before each
compile, each program freed after its timing, as bench.py does) and reports its best wall
and process time. Printed: per tree, the median over the R rounds (and the range) of the
statements per second, in wall time and in process time (the figure a loaded machine
stretches less), the ratio of the medians, and the load average.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.bench import ensure_data  # noqa: E402

CHILD = r"""
import gc, sys, time
sys.path.insert(0, sys.argv[1])
import evaldsl
from evaldsl.language.diagnostics import forget_suggestions
from evaldsl.language.paths import compile_path
from evaldsl.language.regexes import compile_regex
path, compiles = sys.argv[2], int(sys.argv[3])
text = open(path, encoding="utf-8").read()
evaldsl.compile(text, path=path)
wall, cpu = [], []
for _ in range(compiles):
    compile_regex.cache_clear(); compile_path.cache_clear(); forget_suggestions()
    gc.collect()
    t0, c0 = time.perf_counter(), time.process_time()
    kept = evaldsl.compile(text, path=path)
    wall.append(time.perf_counter() - t0)
    cpu.append(time.process_time() - c0)
    del kept
assert evaldsl.__file__.startswith(sys.argv[1]), evaldsl.__file__
print(min(wall), min(cpu))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("other", type=Path, help="the other tree (a checkout)")
    parser.add_argument("--rounds", type=int, default=5, help="fresh processes per tree")
    parser.add_argument("--compiles", type=int, default=5, help="timed compiles per process")
    args = parser.parse_args()
    _, eval_file, meta = ensure_data(20_000, 10_000)
    n = int(meta["statements"])
    trees = {"other": args.other.resolve(), "this": ROOT}
    times: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in trees}
    for _ in range(args.rounds):
        for name, tree in trees.items():
            out = subprocess.run(
                [sys.executable, "-c", CHILD, str(tree), str(eval_file), str(args.compiles)],
                capture_output=True,
                text=True,
                check=True,
                cwd=tree,
            ).stdout.split()
            times[name][0].append(float(out[0]))
            times[name][1].append(float(out[1]))
    medians: dict[str, tuple[float, float]] = {}
    for name, tree in trees.items():
        wall, cpu = times[name]
        medians[name] = (n / statistics.median(wall), n / statistics.median(cpu))
        print(
            f"{name} ({tree}): wall {medians[name][0]:,.0f}/s "
            f"({n / max(wall):,.0f}-{n / min(wall):,.0f}), process time "
            f"{medians[name][1]:,.0f}/s ({n / max(cpu):,.0f}-{n / min(cpu):,.0f})"
        )
    print(
        f"this / other: wall {medians['this'][0] / medians['other'][0]:.2f}x, process time "
        f"{medians['this'][1] / medians['other'][1]:.2f}x; {args.rounds} rounds of "
        f"{args.compiles} compiles of {n:,} statements; load average "
        + ", ".join(f"{x:.2f}" for x in os.getloadavg())
    )


if __name__ == "__main__":
    main()
