"""`evaldsl score` at scale: traces per second serially, in 2 processes and on a Dask
LocalCluster of 2 workers, the parent's peak memory, and Dask's cost per task.

Run:  .venv/bin/python benchmarks/score_bench.py [--traces N]     (or `make bench-score`)

What it measures, all in one run so the ratios compare like with like:

a. Throughput of `evaldsl score PROGRAM FOLDER --format jsonl` (output to /dev/null) on N
   generated traces (default 100,000; 20-200 events each, as JSON event lists and JSONL
   files): serially, with `-j 2`, and with `--dask local:2`. Each run is the real command
   (`evaldsl.tools.cli.main`) in a fresh child process; traces/s is the command's own figure,
   from its first trace to its summary (the cluster's start-up is reported on its own
   line). Targets: `-j 2` >= 1.7x serial, LocalCluster(2) >= 1.3x serial.
b. The parent's peak memory (VmHWM, the child's own high-water mark) for each engine on
   N/10 and N traces: it must not grow with the number of traces.
c. Dask's overhead per task: empty batches sent through the same engine as the command
   (`ClusterEngine` and `in_order`) on a LocalCluster(2); and the CPU the parent spends per
   trace with `--dask local:2` (client, output, summary, and the scheduler, which a
   LocalCluster runs in the same process), from the N/10 and N runs' difference, so that
   start-up is left out. With the serial cost per trace, these give the
   projection printed at the end (10 nodes, 10^8 traces).

The traces are generated deterministically (fixed seed) under `benchmarks/data/score/`
(git-ignored) and regenerated when missing or when the parameters change. The machine
may be shared: the load average is printed before and after; read the ratios.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import platform
import random
import re
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

DATA = ROOT / "benchmarks" / "data" / "score"
SEED = 20261201
GENERATOR_VERSION = 2
PER_FOLDER = 1000

PROGRAM = """\
# production checks, applied to every trace
tools search, fetch, read_file, execute_shell
no tool execute_shell
tool search called at most 40 times
tool fetch args $.url starts with "https://"
tokens <= 20000
steps <= 40
errors == 0
answer not empty
"""

WORDS = ("weather", "invoice", "refund", "forecast", "report", "latency", "pricing", "status")


# ---- data ------------------------------------------------------------------------------------


def trace(rng: random.Random) -> list[dict[str, Any]]:
    """One agent run of 20-200 events: LLM calls with usage, tool calls and results."""
    target = rng.randint(20, 200)
    events: list[dict[str, Any]] = [{"type": "user.message", "content": rng.choice(WORDS)}]
    step = 0
    while len(events) < target - 2:
        step += 1
        tokens = rng.randint(100, 900)
        events.append({"type": "llm.request", "id": f"r{step}", "model": "gpt-4o-mini"})
        events.append(
            {
                "type": "llm.response",
                "requestId": f"r{step}",
                "usage": {"promptTokens": tokens, "completionTokens": tokens // 8},
                "output": {"content": f"calling tools for {rng.choice(WORDS)}"},
            }
        )
        for n in range(rng.randint(1, 4)):
            name = rng.choices(["search", "fetch", "read_file", "execute_shell"], [6, 3, 3, 0.02])[
                0
            ]
            args: dict[str, Any] = {"q": rng.choice(WORDS)}
            if name == "fetch":
                args = {"url": ("https://" if rng.random() < 0.99 else "http://") + "x.io/a"}
            events.append(
                {"type": "tool.call", "id": f"c{step}.{n}", "name": name, "arguments": args}
            )
            events.append({"type": "tool.result", "callId": f"c{step}.{n}", "result": {"n": n}})
    if rng.random() < 0.005:
        events.append({"type": "agent.error", "message": "tool timed out"})
    events.append(
        {"type": "llm.response", "output": {"content": f"The {rng.choice(WORDS)} is ok."}}
    )
    return events


def ensure_data(count: int) -> Path:
    """`count` traces in folders of PER_FOLDER, generated once and cached."""
    stamp = DATA / "stamp.json"
    want = {"version": GENERATOR_VERSION, "seed": SEED, "count": count}
    if stamp.is_file():
        have = json.loads(stamp.read_text())
        # Trace i is the same whatever the count: a larger set serves a smaller run.
        if {**have, "count": count} == want and have["count"] >= count:
            print(f"data: cached traces in {DATA.relative_to(ROOT)} ({have['count']:,})")
            return DATA
    if stamp.is_file():
        stamp.unlink()
    print(f"data: generating {count:,} traces (seed {SEED}) ...", flush=True)
    begin = time.perf_counter()
    rng = random.Random(SEED)
    size = 0
    for i in range(count):
        folder = DATA / f"{i // PER_FOLDER:04}"
        if i % PER_FOLDER == 0:
            folder.mkdir(parents=True, exist_ok=True)
        events = trace(rng)
        if i % 5 == 4:  # one in five is a JSONL file, one event per line
            data = b"\n".join(orjson.dumps(e) for e in events) + b"\n"
            path = folder / f"t{i:06}.jsonl"
        else:
            data = orjson.dumps(events)
            path = folder / f"t{i:06}.json"
        path.write_bytes(data)
        size += len(data)
    stamp.write_text(json.dumps(want))
    seconds = time.perf_counter() - begin
    print(f"data: {size / 2**20:,.0f} MiB written in {seconds:.1f} s")
    return DATA


def folders(count: int) -> list[str]:
    """The folders holding the first `count` traces."""
    return [str(DATA / f"{i:04}") for i in range((count + PER_FOLDER - 1) // PER_FOLDER)]


# ---- children: one measurement each, in a fresh process ---------------------------------------


def peak_mib() -> float:
    """This process's own peak resident memory (VmHWM: not inherited through exec)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM in /proc/self/status")


def alive_children_cpu() -> float:
    """CPU seconds of this process's children still running, and of the children they
    reaped (a process pool's forkserver outlives the pool; its workers do not)."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == os.getpid():  # fields[1] is the parent's pid
            total += sum(int(f) for f in fields[11:15])  # utime, stime, cutime, cstime
    return total / tick


def child_score(engine: str, count: int, program: str) -> dict[str, Any]:
    """The command on `count` traces with one engine, its output thrown away."""
    from evaldsl.tools.cli import main

    args = ["score", program, *folders(count), "--format", "jsonl"]
    args += {"serial": [], "j2": ["-j", "2"], "dask": ["--dask", "local:2"]}[engine]
    err = io.StringIO()
    before = resource.getrusage(resource.RUSAGE_SELF)
    with (
        open(os.devnull, "w") as out,
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        code = main(args)
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    text = err.getvalue()
    scored = re.search(r"scored ([\d,]+) traces in ([\d.]+) s", text)
    if code not in (0, 1) or scored is None:
        raise RuntimeError(f"evaldsl score failed ({code}): {text}")
    started = re.search(r"LocalCluster started with \d+ workers in ([\d.]+) s", text)
    return {
        "traces": int(scored.group(1).replace(",", "")),
        "seconds": float(scored.group(2)),
        "startup": float(started.group(1)) if started else None,
        "peak_mib": peak_mib(),
        "parent_cpu": cpu,  # this process only: with local:2, the scheduler is in it too
        # CPU of this process and every process under it (pool workers, Dask workers):
        # unlike wall time, it hardly moves with the machine's load.
        "tree_cpu": cpu + children.ru_utime + children.ru_stime + alive_children_cpu(),
    }


def child_overhead(program: str) -> dict[str, Any]:
    """Dask's cost per task: empty batches through the command's engine on a
    LocalCluster(2), so what is timed is scheduling, transfer and collection alone."""
    from distributed import Client, LocalCluster

    from evaldsl.score import ProgramSpec
    from evaldsl.score.cluster import ClusterEngine
    from evaldsl.score.engines import Batch, in_order
    from evaldsl.score.scoring import compiled

    spec = ProgramSpec(Path(program).read_text(), program)
    case = compiled(spec)
    tasks = 3000
    cluster = LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    )
    with cluster, Client(cluster) as client:
        engine = ClusterEngine(client, spec)
        empty = (Batch(i, []) for i in range(50))
        assert list(in_order(engine, empty, engine.window(), case)) == []  # warm up
        begin = time.perf_counter()
        empty = (Batch(i, []) for i in range(tasks))
        assert list(in_order(engine, empty, engine.window(), case)) == []
        task_cost = (time.perf_counter() - begin) / tasks
    return {"task_seconds": task_cost}


def measure(kind: str, *args: str) -> dict[str, Any]:
    """Run one measurement in a fresh interpreter and read its JSON answer."""
    command = [sys.executable, __file__, "--child", kind, *args]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"measurement {kind} {args} failed:\n{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


# ---- the report -------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--traces", type=int, default=100_000)
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    program = str(DATA / "checks.eval")
    if args.child:
        kind, *rest = args.child
        found = (
            child_overhead(program)
            if kind == "overhead"
            else child_score(kind, int(rest[0]), program)
        )
        print(json.dumps(found))
        return

    count = args.traces
    ensure_data(count)
    Path(program).write_text(PROGRAM)
    print(f"python {platform.python_version()}, {os.cpu_count()} cores, {platform.machine()}")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    small = max(count // 10, PER_FOLDER)
    results: dict[tuple[str, int], dict[str, Any]] = {}
    for engine in ("serial", "j2", "dask"):
        for n in (small, count):
            results[engine, n] = measure(engine, str(n))
            r = results[engine, n]
            rate = r["traces"] / r["seconds"]
            print(
                f"  measured {engine:6} {n:>9,} traces: {rate:8,.0f} traces/s, "
                f"parent peak {r['peak_mib']:.0f} MiB",
                flush=True,
            )
    overhead = measure("overhead")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    report(results, overhead, small, count)


def report(
    results: dict[tuple[str, int], dict[str, Any]], overhead: dict[str, Any], small: int, count: int
) -> None:
    def rate(engine: str) -> float:
        r = results[engine, count]
        return float(r["traces"] / r["seconds"])

    serial = rate("serial")
    names = {"serial": "serial", "j2": "-j 2", "dask": "--dask local:2"}
    targets = {"j2": 1.7, "dask": 1.3}
    print()
    print(f"throughput on {count:,} traces (20-200 events each), 7 assertions, --format jsonl:")
    for engine, name in names.items():
        ratio = rate(engine) / serial
        target = targets.get(engine)
        verdict = (
            ""
            if target is None
            else f"  (target >= {target}x: {'met' if ratio >= target else 'NOT met'})"
        )
        print(f"  {name:15} {rate(engine):8,.0f} traces/s  {ratio:.2f}x serial{verdict}")
    startup = results["dask", count]["startup"]
    print(f"  LocalCluster(2) start-up: {startup:.2f} s (not in the figures above)")
    print("CPU per trace, all processes, past start-up (the N/10 and N runs' difference):")
    cpu = {engine: marginal(results, engine, "tree_cpu", small, count) for engine in names}
    for engine, name in names.items():
        parent = marginal(results, engine, "parent_cpu", small, count)
        print(
            f"  {name:15} {cpu[engine] * 1e6:6.0f} µs (parent {parent * 1e6:5.1f} µs)  "
            f"{cpu[engine] / cpu['serial']:.2f}x serial"
            + (
                ""
                if engine == "serial"
                else f"; on 2 idle cores at most {2 * cpu['serial'] / cpu[engine]:.2f}x serial"
            )
        )
    print(f"parent peak memory, {small:,} -> {count:,} traces:")
    for engine, name in names.items():
        a, b = results[engine, small]["peak_mib"], results[engine, count]["peak_mib"]
        print(f"  {name:15} {a:6.1f} MiB -> {b:6.1f} MiB  ({b - a:+.1f} MiB)")
    task = overhead["task_seconds"]
    client = marginal(results, "dask", "parent_cpu", small, count)
    worker = cpu["dask"] - client
    print(f"Dask overhead per task (LocalCluster(2), empty batches): {task * 1000:.2f} ms")
    print(f"--dask local:2 CPU per trace: workers {worker * 1e6:.0f} µs, ", end="")
    print(f"client + scheduler {client * 1e6:.1f} µs")
    project(worker, task, client)


def marginal(
    results: dict[tuple[str, int], dict[str, Any]], engine: str, key: str, small: int, count: int
) -> float:
    """A cost per trace past start-up: the difference between the N and N/10 runs."""
    big, little = results[engine, count], results[engine, small]
    return float((big[key] - little[key]) / (big["traces"] - little["traces"]))


def project(per_trace: float, task: float, client: float) -> None:
    """10 nodes, 10^8 traces, from the measured costs (README: "At scale"): a Dask
    worker's CPU per trace, the cost of a task, the client's CPU per trace. The three
    stages run at the same time, so the slowest one sets the pace."""
    traces, batch = 10**8, 1000
    tasks = traces // batch
    scheduling = tasks * task
    collecting = traces * client
    for cores in (2, 16):
        workers = 10 * cores
        work = traces * per_trace / workers
        pace = max(work, scheduling, collecting)
        print(
            f"projection, 10 nodes x {cores} cores ({workers} workers), 10^8 traces, "
            f"{batch:,} per task: work {work / 3600:.2f} h, scheduling {tasks:,} tasks "
            f"{scheduling / 3600:.2f} h, one client collecting {collecting / 3600:.2f} h "
            f"-> about {pace / 3600:.1f} h"
        )


if __name__ == "__main__":
    main()
