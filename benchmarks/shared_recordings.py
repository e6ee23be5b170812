"""Cases on one recording: one shared reading for them, against each case reading alone.

Run:  .venv/bin/python benchmarks/shared_recordings.py [--events N] [--cases C] [--runs R]

Four suites of C cases (40 by default) on bench.py's cassette of N events (20,000 by
default, ~4 MB), each case six statements of bench.py's generator:

- "no results": statements drawn from every family but `result` tests (counts, `no
  tool`, arguments, answers, numbers, `tools` sequences, latency and cost);
- "each rows": an `each` of C rows, each row its own city and word in the statements,
  and one `result` test alike in every row;
- "own results": every case with `result` tests of its own; they share a reading when no
  two calls of the recording carry one id (bench.py's cassette);
- "ids shared": the same cases on a copy of the cassette whose calls all carry one event
  `id`: which call a result is linked to may then depend on the results a pass reads,
  so they cannot share (the control: both sides read the recording once a case).

Times, in turns, the run as the runner makes it (`run_suites`: cases that read one
recording alike share one reading) and the same cases each read alone (`execute_case`),
CPU time, best of R each; checks that both give the same results (times aside); prints
the readings each makes (counted) and the ratio of the times.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest import mock

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import attrs  # noqa: E402
import orjson  # noqa: E402

from benchmarks import bench  # noqa: E402
from evaldsl.runner import core  # noqa: E402
from evaldsl.runner import readings as shared_readings  # noqa: E402
from evaldsl.runner.core import execute_case, run_suites  # noqa: E402
from evaldsl.suites.build import load_suite  # noqa: E402
from evaldsl.suites.model import Suite  # noqa: E402

SEED = 20261202
PER_CASE = 6


def no_results(gen: bench.StatementGen) -> str:
    """A statement of any family but `result` tests."""
    while True:
        text = gen.statement()
        if " result " not in text:
            return text


def own_results(gen: bench.StatementGen) -> list[str]:
    """Six statements, two of them `result` tests (drawn per case: its own)."""
    return [gen.result(), gen.result(), *(no_results(gen) for _ in range(PER_CASE - 2))]


def suite_texts(cases: int, cassette: str) -> dict[str, str]:
    rng = random.Random(SEED)
    gen = bench.StatementGen(rng)

    def case(k: int, statements: list[str]) -> str:
        body = "".join(f"  {s}\n" for s in statements)
        return f'case "case {k:03d}"\n  cassette "{cassette}"\n{body}\n'

    plain = "".join(case(k, [no_results(gen) for _ in range(PER_CASE)]) for k in range(cases))
    own_cases = [own_results(gen) for _ in range(cases)]
    own = "".join(case(k, statements) for k, statements in enumerate(own_cases))
    same_ids = "".join(
        case(k, statements).replace(cassette, shared_ids(cassette))
        for k, statements in enumerate(own_cases)
    )
    rows = ", ".join(
        f'{{city: "{rng.choice(bench.CITIES)}", word: "{rng.choice(bench.WORDS)}{k}"}}'
        for k in range(cases)
    )
    each = (
        f'case "row"\n  cassette "{cassette}"\n  each [{rows}]\n'
        '  tool get_weather args $.city == "{{city}}"\n'
        '  answer contains "{{word}}"\n'
        "  tool search_web result $.hits[*].title matches /refund notes 98/i\n"
        "  tool calendar_lookup called at least 3 times\n"
        "  tokens <= 900000000\n"
        "  tools contains all [read_file, search_web]\n"
    )
    return {"no results": plain, "each rows": each, "own results": own, "ids shared": same_ids}


def shared_ids(name: str) -> str:
    """The name of the copy of cassette `name` whose calls all carry one event id."""
    return name.replace(".jsonl", "-ids.jsonl")


def write_shared_ids(cassette: Path) -> None:
    copy = cassette.with_name(shared_ids(cassette.name))
    if copy.exists() and copy.stat().st_mtime >= cassette.stat().st_mtime:
        return
    with cassette.open("rb") as source, copy.open("wb") as out:
        for line in source:
            event = orjson.loads(line)
            if event.get("type") == "tool.call":
                event["id"] = "shared"
            out.write(orjson.dumps(event) + b"\n")


def readings(suite: Suite) -> int:
    """How many times a run of `suite` reads a recording (counted)."""
    read: list[Any] = []
    index_run = core.index_run

    def counted(run: Any, needs: Any) -> Any:
        read.append(run)
        return index_run(run, needs)

    with (
        mock.patch.object(shared_readings, "index_run", counted),
        mock.patch.object(core, "index_run", counted),
    ):
        run_suites([suite])
    return len(read)


def timeless(results: list[Any]) -> list[Any]:
    return [attrs.evolve(r, duration_ms=0.0) for r in results]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--cases", type=int, default=40)
    parser.add_argument("--runs", type=int, default=5)
    opts = parser.parse_args()
    cassette, _, _ = bench.ensure_data(opts.events, 10_000)
    write_shared_ids(cassette)
    folder = bench.DATA / f"shared-{opts.events}-{opts.cases}"
    folder.mkdir(parents=True, exist_ok=True)
    print(bench.machine())
    print(f"{opts.cases} cases on {cassette.name} ({cassette.stat().st_size / 1e6:.1f} MB)")
    print(f"{'suite':<12} {'readings':>14} {'alone ms':>9} {'shared ms':>10} {'ratio':>6}")
    for name, text in suite_texts(opts.cases, f"../{cassette.name}").items():
        path = folder / (name.replace(" ", "-") + ".eval")
        path.write_text(text, encoding="utf-8")
        suite = load_suite(str(path))
        bad = [c.name for c in suite.cases if c.error]
        if bad or any(d.is_error for d in suite.diagnostics):
            raise SystemExit(f"{path}: the generated suite does not check: {bad}")

        def alone(suite: Suite = suite) -> list[Any]:
            return [execute_case(case, suite) for case in suite.cases]

        def shared(suite: Suite = suite) -> list[Any]:
            return list(run_suites([suite]).suites[0].cases)

        best: dict[str, float] = {}
        outcome: dict[str, list[Any]] = {}
        runs: tuple[tuple[str, Callable[[], list[Any]]], ...] = (
            ("alone", alone),
            ("shared", shared),
        )
        for _ in range(opts.runs):  # in turns: the machine's drift falls on both
            for side, fn in runs:
                started = time.process_time()
                outcome[side] = fn()
                spent = time.process_time() - started
                best[side] = min(best.get(side, spent), spent)
        if timeless(outcome["alone"]) != timeless(outcome["shared"]):
            raise SystemExit(f"{name}: shared and alone results differ")
        ratio = best["shared"] / best["alone"]
        counts = f"{len(suite.cases)} -> {readings(suite)}"
        print(
            f"{name:<12} {counts:>14} {best['alone'] * 1000:>9.0f} "
            f"{best['shared'] * 1000:>10.0f} {ratio:>5.2f}x"
        )
    print("(CPU time, best of each side in turns; results equal both ways, times aside)")


if __name__ == "__main__":
    main()
