"""A run of judged cases: the judge's calls overlapped across cases, against one
case at a time.

Run:  .venv/bin/python benchmarks/judge_runs.py [--cases C] [--delay S] [--runs R]

A chat-completions server on 127.0.0.1 (its own, here) answers every question after
`--delay` seconds (0.3 by default: a quick model). A suite of C cases (24 by default) on
the demo cassette, each with one judged assertion of its own rubric and a tool count, is
run by `run_suites` in this process, serially, each time with an empty judge cache:

- "overlapped": as the runner runs it (a case waits for its answers while the next cases
  run, `MAX_JUDGING` of them at most; 8 calls at once, the judge's default);
- "one case at a time": the same run with `MAX_JUDGING = 0`, so each case waits for its
  answers before the next begins (the runner before the overlap: concurrent within a
  case only);
- the same two with `-j 2` (each forked worker overlapping its own cases' calls, or not).

Prints the medians of wall time beside their ratio, the floor the judge's concurrency
allows (C / 8 rounds of the delay), and checks that both give the same results (times
aside).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import evaldsl.runner.waiting  # noqa: E402
from evaldsl.judge.client import LLMJudge  # noqa: E402
from evaldsl.judge.config import JudgeConfig  # noqa: E402
from evaldsl.judge.plan import TwoPhaseJudge  # noqa: E402
from evaldsl.runner.core import RunOptions, run_suites  # noqa: E402
from evaldsl.suites.build import load_suite  # noqa: E402

CASSETTE = ROOT / "tests/fixtures/traceplay/demo/cassette.example.jsonl"


@contextmanager
def judge_server(delay: float) -> Iterator[str]:
    """A chat-completions endpoint answering `{"passed": true, "score": 0.9}` after
    `delay` seconds; yields its base URL."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            time.sleep(delay)
            verdict = json.dumps({"passed": True, "score": 0.9, "reason": "ok"})
            body = json.dumps({"choices": [{"message": {"content": verdict}}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def run_once(
    suite_path: Path, url: str, cache: Path, waiting: int, jobs: int = 1
) -> tuple[float, Any]:
    config = JudgeConfig(api_key="sk-bench", base_url=url, cache_dir=cache, retries=0)
    judge = LLMJudge(config)
    suite = load_suite(suite_path, judge=TwoPhaseJudge(judge))
    evaldsl.runner.waiting.MAX_JUDGING = waiting
    started = time.perf_counter()
    report = run_suites([suite], RunOptions(jobs=jobs))
    took = time.perf_counter() - started
    judge.close()
    results = [
        (c.name, c.passed, [(a.status, a.message) for a in c.assertions]) for c in report.cases
    ]
    return took, results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=24)
    parser.add_argument("--delay", type=float, default=0.3)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    overlapped = evaldsl.runner.waiting.MAX_JUDGING
    variants = {
        "overlapped": (overlapped, 1),
        "one case at a time": (0, 1),
        "-j 2, overlapped in each worker": (overlapped, 2),
        "-j 2, one case at a time in each worker": (0, 2),
    }
    times: dict[str, list[float]] = {name: [] for name in variants}
    print(f"judged cases: {args.cases} cases, replies after {args.delay} s")
    with judge_server(args.delay) as url, tempfile.TemporaryDirectory() as folder:
        suite = Path(folder) / "judged.eval"
        suite.write_text(
            "".join(
                f'case "c{i}"\n  cassette "{CASSETTE}"\n  tool get_weather called\n'
                f'  answer judged "rubric {i}" >= 0.5\n'
                for i in range(args.cases)
            )
        )
        seen = []
        for _ in range(args.runs):  # in turns, each with an empty cache
            for name, (waiting, jobs) in variants.items():
                cache = Path(folder) / f"cache-{len(seen)}"
                took, results = run_once(suite, url, cache, waiting, jobs)
                times[name].append(took)
                seen.append(results)
    evaldsl.runner.waiting.MAX_JUDGING = overlapped
    assert all(r == seen[0] for r in seen), "the two runs disagree"
    for name, spent in times.items():
        ranged = f"{min(spent) * 1000:,.0f}-{max(spent) * 1000:,.0f}"
        print(f"  {name}: median {statistics.median(spent) * 1000:,.0f} ms (range {ranged})")
    median = {name: statistics.median(spent) for name, spent in times.items()}
    ratio = median["overlapped"] / median["one case at a time"]
    jobs = (
        median["-j 2, overlapped in each worker"]
        / median["-j 2, one case at a time in each worker"]
    )
    floor = -(-args.cases // 8) * args.delay
    print(f"  overlapped / one case at a time: {ratio:.2f}x; with -j 2: {jobs:.2f}x (same results)")
    print(f"  the floor at 8 calls at once: {floor * 1000:,.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
