"""Whole-process start-up of this checkout against another tree, measured in the same run.

Run:  .venv/bin/python benchmarks/start_ab.py OTHER_TREE [--rounds R]
      (OTHER_TREE: a checkout of another commit, e.g. `git archive REV | tar -x -C DIR`)

Times, as whole processes, what a start costs: `evaldsl check` of the weather example,
`evaldsl run --dry-run` of `speed.py`'s 120-case suite (start, imports, loading and
checking the suite: a serial run's part before its first case), and what a `-j` parent
does before it forks (start, `run`'s imports, reading and expanding that suite), and
`evaldsl run` of a suite of 200 cases on small cassettes of their own (`bench.small_suite`:
60 events and six distinct statements a case, where each case's own start is the cost),
and `evaldsl run` of that 120-case suite (cassettes of 0.94 MiB: many small recordings). Each
command runs with each tree first on `PYTHONPATH`, from a folder outside both (`python -m`
would put the current folder first), the trees alternating in every round so that both
meet the same load, after one untimed run of each (bytecode, and any cache evaldsl keeps,
written as an installed copy has them). `PYTHONDONTWRITEBYTECODE` is dropped, as
`speed.py` drops it. Printed per command: the median (and range) of wall and CPU time of
each tree, the ratio of the medians, the median of the paired ratios, and the load.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import bench  # noqa: E402

#: Says which evaldsl a process imported (the tree must be the one timed).
WHERE = "import evaldsl, sys; sys.stdout.write(evaldsl.__file__)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("other", type=Path, help="the other tree (a checkout)")
    parser.add_argument("--rounds", type=int, default=20, help="timed runs per tree and command")
    args = parser.parse_args()
    trees = {"this": ROOT, "other": args.other.resolve()}
    evaldsl = str(Path(sys.executable).with_name("evaldsl"))
    suite = str(bench.jobs_suite())
    commands = {
        "check weather.eval": [evaldsl, "check", str(ROOT / "examples/weather/weather.eval")],
        "run --dry-run, 120 cases": [evaldsl, "run", "-q", "--no-history", "--dry-run", suite],
        "-j parent before forking": [sys.executable, "-c", bench.BEFORE_FORK, suite],
        "run, 200 small cassettes": [
            *(evaldsl, "run", "-q", "--no-history", "--judge", "off"),
            str(bench.small_suite()),
        ],
        "run, 120 cassettes of 0.94 MiB": [evaldsl, "run", "-q", "--no-history", suite],
    }
    base = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    envs = {name: {**base, "PYTHONPATH": str(tree)} for name, tree in trees.items()}
    with tempfile.TemporaryDirectory() as outside:
        for name, env in envs.items():
            found = subprocess.run(
                [sys.executable, "-c", WHERE], env=env, cwd=outside, capture_output=True, text=True
            ).stdout
            if not found.startswith(str(trees[name])):
                raise SystemExit(f"{name}: evaldsl was imported from {found}, not {trees[name]}")
        print(f"this: {trees['this']}\nother: {trees['other']}\nrounds: {args.rounds}")
        for label, cmd in commands.items():
            for env in envs.values():
                bench.timed_process(cmd, env, outside)  # untimed: bytecode and caches as installed
            wall: dict[str, list[float]] = {name: [] for name in trees}
            cpu: dict[str, list[float]] = {name: [] for name in trees}
            for i in range(args.rounds):
                order = list(trees) if i % 2 == 0 else list(reversed(trees))
                for name in order:
                    w, c = bench.timed_process(cmd, envs[name], outside)
                    wall[name].append(w)
                    cpu[name].append(c)
            print(f"\n{label}:")
            for name in trees:
                shown = f"wall {bench.spread(wall[name], 1)}, CPU {bench.spread(cpu[name], 1)}"
                print(f"  {name}: {shown}")
            for kind, times in (("wall", wall), ("CPU", cpu)):
                medians = statistics.median(times["this"]) / statistics.median(times["other"])
                paired = statistics.median(
                    a / b for a, b in zip(times["this"], times["other"], strict=True)
                )
                print(f"  this / other, {kind}: {medians:.3f} (paired: {paired:.3f})")
    print(f"\nload average: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
