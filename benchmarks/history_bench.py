"""What recording, diffing and mutating cost, beside what running costs, in one process.

Run:  .venv/bin/python benchmarks/history_bench.py [--cases N] [--runs R]

a. Recording: a generated suite of N cases (each on the Xiamen cassette, with 10
   assertions, every text distinct: the worst case, as each text is parsed again for its
   canonical form) is run with `run_suites`; then `record_report` writes the run to a
   SQLite history (identities, git state, one transaction), first in a fresh process
   state, then again (texts seen before are not parsed again). Printed: the run's time,
   the recording's and their ratio. The cassette is tiny, so the run is as cheap as a
   run gets; the ratio is an upper bound.
b. Reading back and comparing: `History.snapshot` of the last run, and `diff.compare` of
   the last two, against the same run time.
c. Mutating: the mutants of one case checked one by one (`mutate_case`), per mutant,
   against checking the case's recorded run once (`run_suites` of that case alone): each
   mutant should cost about one check of the run.
d. A long history: histories of H = 100, 200 and 400 runs of a suite of 100 cases (10
   assertions each) whose case names change from run to run, as `each` rows, datasets and
   Inspect AI samples do, recorded straight from snapshots. Printed for each H: recording
   one more run, and the suites' rows of the last 20 runs (what `evaldsl history` shows).
   Neither should grow with H.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from evaldsl.history.diff import compare  # noqa: E402
from evaldsl.history.snapshots import (  # noqa: E402
    AssertionKey,
    AssertionSnapshot,
    CaseSnapshot,
    RunSnapshot,
    SuiteSnapshot,
    snapshot_of_report,
)
from evaldsl.history.store import History, record_report  # noqa: E402
from evaldsl.mutation.mutate import mutate_case  # noqa: E402
from evaldsl.runner import RunOptions, run_suites  # noqa: E402
from evaldsl.suites import load_suite  # noqa: E402

ASSERTIONS = [  # {i} makes every text distinct
    "tool get_weather called at most {i} times",
    'tool get_weather args $.city != "Xiamen{i}"',
    'tool get_weather result $.sky != "sunny{i}"',
    "answer matches /\\d+\\s*C|x{i}/",
    "answer cites tool get_weather at least 2 values or steps > {i}",
    "steps <= {i}",
    "latency < {i}s",
    "tokens <= {i}",
    "no tool execute_shell_{i}",
    'not answer contains "Xiamen{i}"',
]


def best(fn: Callable[[], object], repeat: int) -> float:
    """The fastest of `repeat` timings of `fn`, in seconds (the least disturbed by others)."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return min(times)


def renamed_run(run: int, cases: int = 100, assertions: int = 10) -> RunSnapshot:
    """A run whose case names are its own (`case 7 of run 12`), statuses varying."""
    metrics = {"latency_ms": 1.0, "steps": 2, "tool_calls": 1, "input_tokens": 1}
    made = []
    for c in range(cases):
        name = f"case {c} of run {run}"
        checked = tuple(
            AssertionSnapshot(
                AssertionKey("long.eval", name, f"steps <= {k}", 0),
                f"steps <= {k}",
                "pass" if (run + c + k) % 3 else "fail",
                message="m",
                found=2,
                expected=k,
                line=k + 3,
                column=3,
            )
            for k in range(assertions)
        )
        passed = all(a.status == "pass" for a in checked)
        made.append(CaseSnapshot("long.eval", name, passed, 0.5, None, metrics, checked))
    return RunSnapshot(f"run {run}", (SuiteSnapshot("long.eval", "long", tuple(made)),))


def long_history(folder: Path, repeat: int) -> None:
    """d.: recording a run and the last 20 runs' suite rows, as the history grows."""
    db = folder / "long.sqlite"
    print("d. a history whose case names change every run (100 cases x 10 assertions)")
    recorded = 0
    for runs in (100, 200, 400):
        with History.open(db, create=True) as history:
            while recorded < runs:
                history.record(renamed_run(recorded), started_at="x", duration_ms=1.0)
                recorded += 1

        timings = []
        for _ in range(repeat):
            copy = folder / "copy.sqlite"
            shutil.copy(db, copy)  # each timing records into the same history
            with History.open(copy) as history:
                started = time.perf_counter()
                history.record(renamed_run(runs), started_at="x", duration_ms=1.0)
                timings.append(time.perf_counter() - started)
        record_s = min(timings)
        with History.open(db) as history:
            last = history.resolve("last")
            rows_s = best(lambda h=history, n=last: h.suite_rows(n - 19, n), repeat)
        print(
            f"   {runs} runs: record one more {record_s * 1000:7.1f} ms, "
            f"suite rows of the last 20 {rows_s * 1000:7.2f} ms"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=500)
    parser.add_argument("--runs", type=int, default=5, help="timings per figure (best kept)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        shutil.copy(ROOT / "examples/weather/cassettes/xiamen.jsonl", folder / "x.jsonl")
        lines = ['suite "bench"']
        for i in range(args.cases):
            lines += [f'case "case {i}"', '  cassette "x.jsonl"']
            lines += ["  " + a.replace("{i}", str(i + 5000)) for a in ASSERTIONS]
        (folder / "bench.eval").write_text("\n".join(lines) + "\n")
        suite = load_suite(folder / "bench.eval")
        assertions = args.cases * len(ASSERTIONS)

        report = run_suites([suite])
        run_s = best(lambda: run_suites([suite]), args.runs)
        db = folder / "h.sqlite"
        first_s = best(lambda: record_report(report, db), 1)  # every text parsed
        record_s = best(lambda: record_report(report, db), args.runs)
        print(f"a. {args.cases} cases, {assertions} distinct assertions")
        print(f"   run_suites:            {run_s * 1000:8.1f} ms")
        print(
            f"   record_report, first:  {first_s * 1000:8.1f} ms  "
            f"({first_s / run_s:.2f}x the run; {assertions / first_s:,.0f} assertions/s)"
        )
        print(
            f"   record_report, again:  {record_s * 1000:8.1f} ms  "
            f"({record_s / run_s:.2f}x the run; {assertions / record_s:,.0f} assertions/s)"
        )

        with History.open(db) as history:
            last = history.resolve("last")
            snap_s = best(lambda: history.snapshot(last), args.runs)
            a, b = history.snapshot(last - 1), history.snapshot(last)
        diff_s = best(lambda: compare(a, b), args.runs)
        snap_of_s = best(lambda: snapshot_of_report(report), args.runs)
        print(f"b. History.snapshot:      {snap_s * 1000:8.1f} ms  ({snap_s / run_s:.2f}x the run)")
        print(f"   snapshot_of_report:    {snap_of_s * 1000:8.1f} ms  (keys: canonical texts)")
        print(f"   diff.compare:          {diff_s * 1000:8.1f} ms  ({diff_s / run_s:.2f}x the run)")

        weather = load_suite(ROOT / "examples/weather/weather.eval")
        case = weather.cases[0]
        mutated = mutate_case(case, weather)
        n = len(mutated.results)
        only = RunOptions(select=case.name)
        one = best(lambda: run_suites([weather], only), args.runs)
        per = [best(lambda: mutate_case(case, weather), 1) / n for _ in range(args.runs)]
        print(f"c. {n} mutants of {case.name!r}")
        print(f"   one run of the case:   {one * 1000:8.2f} ms")
        print(
            f"   per mutant:            {min(per) * 1000:8.2f} ms  "
            f"({min(per) / one:.2f}x one run; median {statistics.median(per) / one:.2f}x)"
        )
        long_history(folder, args.runs)


if __name__ == "__main__":
    main()
