"""Speed on any assertion mix (issue 10): each target beside its same-run ratio.

Run:  .venv/bin/python benchmarks/speed.py [--events N] [--turns T] [--runs R] [--quick]
      [--only SECTION]
      (`make bench` runs it after bench.py)

What it measures, each against a baseline measured in the same run:

1. Three mixes of 20 assertions over N in-memory events (N = 1,000,000 by default), each
   beside its own hand-written single pass computing the same facts over the same events:
   - "mixed": bench.py's 20 assertions (counts, args and result tests, answers, numbers);
   - "hard": `every` tests that never settle, `only`, an `in order` that fails at the
     end, JSONPath `[*]` and `..`, regexes on answers and results, `cites`,
     `answer json $.x`: nothing a pass can stop early for;
   - "families": one predicate of each family (`budget` reads a workflow state, not a
     trace: left out).
   The verdicts must agree with the hand-written booleans. Target: <= 1.1x.
2. File to verdicts: `program.check(path)` of each mix on the cassette, of "mixed" on
   the same events as a JSONL of events (no header), and the whole
   `evaldsl run` process on a suite naming it, against bare orjson decoding of every
   line (in this process, in turns, wall and CPU time; and a whole process doing only
   that). Target: <= 0.8x. With section 1 too, each mix's ratio for a hand-written
   reader is printed at the end: the typed decoding of the fields its pass reads plus
   its hand-written pass (an estimate: `print_floor`).
3. `evaldsl check` of a small file (examples/weather/weather.eval), whole process,
   median of several runs. Target: <= 150 ms. Beside it: a bare `python -c pass`.
4. K scaling: K = 1, 10, 100, 1000 distinct statements (the generator of bench.py's
   compile file) over the same in-memory events. Target: K=1000 / K=1 <= 3x. Beside it,
   K=1000 / K=10: K=1 is a single count, K=10 already has each kind of work of the mix
   (a regex on every call of a tool, result linking, the responses' usage).
5. -j scaling: 120 cassettes of 5,000 events, one case each, `evaldsl run -j 1` and
   `-j 2`, whole process, median. Target: -j 2 / -j 1 <= 0.6x. Beside them, the parts
   no worker shares: a `run --dry-run` process (a serial run's part before its first
   case), a process doing what a -j parent does before it forks, and the machine's own
   ratio for two processes of pure CPU work; from these, the best -j 2 could do.
6. Compile throughput of distinct statements is bench.py's (a) (target >= 50,000/s), and
   peak memory its (d): `make bench` runs both.
7. OTel spans: `program.check(path)` of 12 assertions on an OTLP JSONL file (`--turns`
   exports, one agent turn each, the GenAI, OpenInference and OpenLLMetry conventions in
   turns: ~18 KiB a line), read by the typed decoder (`runs/otlpdecode.py`) and by the
   full decoding (`EVALDSL_REFERENCE=1`), against bare orjson decoding of every line, the
   three taking turns. Target: the file-to-verdicts one, <= 0.8x.

Timings are medians (and ranges) of `--runs` repetitions; the machine is shared, so read
the ratios, and rerun when the load average printed at the end is high.
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
for where in (ROOT, ROOT / "benchmarks"):
    if str(where) not in sys.path:
        sys.path.insert(0, str(where))

import bench  # noqa: E402

import evaldsl  # noqa: E402
from evaldsl.gcpause import paused_gc  # noqa: E402
from evaldsl.predicates.cites import citable_values  # noqa: E402
from evaldsl.runs.cassette import EventStream  # noqa: E402
from evaldsl.runs.decode import kind_events  # noqa: E402
from evaldsl.runs.passes import pass_for  # noqa: E402

Event = dict[str, Any]
EVALDSL = str(Path(sys.executable).with_name("evaldsl"))
#: The environment of the processes timed: as installed, modules are loaded from their
#: bytecode, so a `PYTHONDONTWRITEBYTECODE` set in the shell is dropped (the warm-up run
#: writes what is missing or stale; with it, an edited module was compiled at every
#: start, ~60 ms of a `run --dry-run` whose bytecode was all missing)
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

ALL_TOOLS = ", ".join(bench.TOOLS)

HARD_20 = rf"""
every tool search_web args $.limit >= 1
every tool get_weather args $.units in ["metric", "imperial"]
every tool run_sql args $.db matches /^(analytics|prod)$/
every tool get_weather result $.temp >= -20
tools only [{ALL_TOOLS}]
tools in order [search_web, get_weather, delete_database]
tool search_web result $.hits[*].title matches /Zzz notes/
tool search_web result $..url contains "x.io/7"
tool fetch_url args $.url matches /^https:\/\/nowhere\//
answer matches /\d+ C/
answer[1] matches /^(The|I|Here)/
answer[-2] matches /tool call/
answer cites tool get_weather
answer json $.x == 1
tool read_file args $.path matches /\/archive\/\d{{5}}\.csv$/
tool get_crypto_price result matches /ZZZ/
tool run_sql result $.rows > 500
tool translate args $.target in ["xx", "yy"]
every tool write_file args $.bytes >= 1
not (tools contains delete_database)
""".strip()

FAMILIES_12 = r"""
tool search_web called at least 1000 times
tool get_weather args $.city == "Paris"
tokens <= 900000000
answer contains "the"
tools contains any [send_email, delete_database]
answer[-2] not empty
tool run_sql args $.limit is integer
answer starts with "The"
answer matches /\d+/
tool get_weather result has condition
answer judged "answers the question"
answer cites tool get_crypto_price
""".strip()

# ---- the hand-written passes --------------------------------------------------------------

_DB = re.compile(r"^(analytics|prod)$")
_ZZZ_NOTES = re.compile(r"Zzz notes")
_NOWHERE = re.compile(r"^https://nowhere/")
_DEGREES = re.compile(r"\d+ C")
_OPENING = re.compile(r"^(The|I|Here)")
_TOOL_CALL = re.compile(r"tool call")
_ARCHIVE = re.compile(r"/archive/\d{5}\.csv$")
_ZZZ = re.compile(r"ZZZ")
_DIGITS = re.compile(r"\d+")
_ALLOWED = frozenset(bench.TOOLS)


def _text(output: Any) -> str:
    return output["choices"][0]["message"]["content"] if output is not None else ""


def _cites(answer: str, results: list[Any]) -> bool:
    lowered = answer.lower()
    return any(leaf.lower() in lowered for leaf in citable_values(results))


def _urls(value: Any) -> list[Any]:
    """Every `url` value anywhere in a result (what `$..url` finds)."""
    found: list[Any] = []
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            for k, x in v.items():
                if k == "url":
                    found.append(x)
                stack.append(x)
        elif isinstance(v, list):
            stack.extend(v)
    return found


def hand_hard(events: Sequence[Event]) -> list[bool]:
    """The 20 facts of HARD_20 in one loop, as a user would write them."""
    limit_ok = units_ok = db_ok = temp_ok = only_ok = bytes_ok = True
    n_search = n_weather = n_sql = n_write = 0
    order_at = 0
    order = ("search_web", "get_weather", "delete_database")
    zzz_title = url7 = nowhere = archive = zzz_price = many_rows = translate_xx = False
    saw_delete = False
    owner: dict[Any, str] = {}
    weather_results: list[Any] = []
    weather_seen_results: set[Any] = set()
    first_out: Any = None
    prev_out: Any = None
    last_out: Any = None
    responses = 0
    for ev in events:
        kind = ev.get("type")
        if kind == "tool.call":
            name = ev.get("name")
            args = ev.get("arguments")
            if name not in _ALLOWED:
                only_ok = False
            if name == "delete_database":
                saw_delete = True
            if order_at < 3 and name == order[order_at]:
                order_at += 1
            if name == "search_web":
                n_search += 1
                limit = args.get("limit") if isinstance(args, dict) else None
                if not (isinstance(limit, int | float) and limit >= 1):
                    limit_ok = False
                owner[ev.get("callId")] = name
            elif name == "get_weather":
                n_weather += 1
                if not (isinstance(args, dict) and args.get("units") in ("metric", "imperial")):
                    units_ok = False
                owner[ev.get("callId")] = name
            elif name == "run_sql":
                n_sql += 1
                db = args.get("db") if isinstance(args, dict) else None
                if not (isinstance(db, str) and _DB.search(db)):
                    db_ok = False
                if not many_rows:  # (found: its results are read no more)
                    owner[ev.get("callId")] = name
            elif name == "fetch_url":
                url = args.get("url") if isinstance(args, dict) else None
                if isinstance(url, str) and _NOWHERE.search(url):
                    nowhere = True
            elif name == "read_file":
                path = args.get("path") if isinstance(args, dict) else None
                if isinstance(path, str) and _ARCHIVE.search(path):
                    archive = True
            elif name == "get_crypto_price":
                owner[ev.get("callId")] = name
            elif name == "translate":
                if isinstance(args, dict) and args.get("target") in ("xx", "yy"):
                    translate_xx = True
            elif name == "write_file":
                n_write += 1
                size = args.get("bytes") if isinstance(args, dict) else None
                if not (isinstance(size, int | float) and size >= 1):
                    bytes_ok = False
        elif kind == "tool.result":
            call = ev.get("callId")
            tool = owner.get(call)
            if tool is None:
                continue
            out = ev.get("output")
            if tool == "get_weather":
                if call not in weather_seen_results:
                    weather_seen_results.add(call)
                    weather_results.append(out)
                    temp = out.get("temp") if isinstance(out, dict) else None
                    if not (isinstance(temp, int | float) and temp >= -20):
                        temp_ok = False
            elif tool == "search_web":
                if isinstance(out, dict):
                    for hit in out.get("hits") or ():
                        title = hit.get("title") if isinstance(hit, dict) else None
                        if isinstance(title, str) and _ZZZ_NOTES.search(title):
                            zzz_title = True
                for url in _urls(out):
                    if isinstance(url, str) and "x.io/7" in url:
                        url7 = True
            elif tool == "get_crypto_price":
                if isinstance(out, str) and _ZZZ.search(out):
                    zzz_price = True
            elif tool == "run_sql":
                rows = out.get("rows") if isinstance(out, dict) else None
                if isinstance(rows, int | float) and rows > 500:
                    many_rows = True
        elif kind == "llm.response":
            responses += 1
            out = ev.get("output")
            if responses == 1:
                first_out = out
            prev_out = last_out
            last_out = out
    answer = _text(last_out)
    try:
        parsed = orjson.loads(answer)
        json_x = isinstance(parsed, dict) and parsed.get("x") == 1
    except orjson.JSONDecodeError:
        json_x = False
    return [
        n_search > 0 and limit_ok,
        n_weather > 0 and units_ok,
        n_sql > 0 and db_ok,
        n_weather > 0 and temp_ok,
        only_ok,
        order_at == 3,
        zzz_title,
        url7,
        nowhere,
        _DEGREES.search(answer) is not None,
        _OPENING.search(_text(first_out)) is not None,
        _TOOL_CALL.search(_text(prev_out)) is not None,
        _cites(answer, weather_results),
        json_x,
        archive,
        zzz_price,
        many_rows,
        translate_xx,
        n_write > 0 and bytes_ok,
        not saw_delete,
    ]


def hand_families(events: Sequence[Event]) -> list[bool | None]:
    """The 12 facts of FAMILIES_12 in one loop (None: the judge, skipped without a key)."""
    n_search = 0
    paris = sql_int = has_condition = send_or_delete = False
    weather_calls: set[Any] = set()
    price_calls: set[Any] = set()
    price_results: list[Any] = []
    tokens = 0
    prev_out: Any = None
    last_out: Any = None
    for ev in events:
        kind = ev.get("type")
        if kind == "tool.call":
            name = ev.get("name")
            if name == "search_web":
                n_search += 1
            elif name == "get_weather":
                if not has_condition:  # (found: its results are read no more)
                    weather_calls.add(ev.get("callId"))
                if not paris and (ev.get("arguments") or {}).get("city") == "Paris":
                    paris = True
            elif name == "run_sql":
                limit = (ev.get("arguments") or {}).get("limit")
                if type(limit) is int:
                    sql_int = True
            elif name == "get_crypto_price":
                price_calls.add(ev.get("callId"))
            elif name in ("send_email", "delete_database"):
                send_or_delete = True
        elif kind == "tool.result":
            call = ev.get("callId")
            if not has_condition and call in weather_calls:
                out = ev.get("output")
                has_condition = isinstance(out, dict) and "condition" in out
            elif call in price_calls:
                price_results.append(ev.get("output"))
        elif kind == "llm.response":
            usage = ev["usage"]
            tokens += usage["promptTokens"] + usage["completionTokens"]
            prev_out = last_out
            last_out = ev.get("output")
    answer = _text(last_out)
    return [
        n_search >= 1000,
        paris,
        tokens <= 900_000_000,
        "the" in answer,
        send_or_delete,
        _text(prev_out).strip() != "",
        sql_int,
        answer.startswith("The"),
        _DIGITS.search(answer) is not None,
        has_condition,
        None,
        _cites(answer, price_results),
    ]


MIXES: dict[str, tuple[str, Callable[[Sequence[Event]], list[Any]]]] = {
    "mixed": (bench.MIXED_20, bench.hand_written),
    "hard": (HARD_20, hand_hard),
    "families": (FAMILIES_12, hand_families),
}

# ---- timing helpers -----------------------------------------------------------------------


def timed(runs: int, fn: Callable[[], Any]) -> tuple[list[float], Any]:
    """Each run's seconds (after a full collection) and the last result."""
    times: list[float] = []
    result: Any = None
    for _ in range(runs):
        result = None
        gc.collect()
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return times, result


def process_times(runs: int, cmd: list[str], env: dict[str, str] | None = None) -> list[float]:
    """Wall seconds of a whole process, `runs` times (after one warm-up run)."""
    subprocess.run(cmd, capture_output=True, env=env, check=False)
    return [bench.timed_process(cmd, env)[0] for _ in range(runs)]


def process_times_in_turns(
    runs: int,
    cmds: list[list[str]],
    env: dict[str, str] | None = None,
    cpu: list[list[float]] | None = None,
) -> list[list[float]]:
    """`process_times` of each command (one warm-up run each), the commands taking turns
    in each of the `runs` rounds; `cpu` gets each run's CPU seconds (user and system, of
    the process and the children it waited for), less moved than wall time by other work
    on the machine."""
    for cmd in cmds:
        subprocess.run(cmd, capture_output=True, env=env, check=False)
    times: list[list[float]] = [[] for _ in cmds]
    if cpu is not None:
        cpu[:] = [[] for _ in cmds]
    for _ in range(runs):
        for k, (cmd, column) in enumerate(zip(cmds, times, strict=True)):
            wall, used = bench.timed_process(cmd, env)
            column.append(wall)
            if cpu is not None:
                cpu[k].append(used)
    return times


spread = bench.spread  # (the one format of every benchmark's timings)


Row = tuple[str, str, str, str]
ROWS: list[Row] = []
#: CPU-time medians kept for the floor of file -> verdicts (`print_floor`): bare orjson
#: decoding, each mix's typed decoding of the fields its pass reads, its hand-written pass
FLOOR: dict[str, float] = {}


def row(measure: str, ratio: float, target: float, detail: str, *, at_most: bool = True) -> None:
    ok = ratio <= target if at_most else ratio >= target
    sign = "<=" if at_most else ">="
    ROWS.append((measure, f"{ratio:.2f}", f"{sign} {target:g}", ("met" if ok else "NOT met")))
    print(f"    -> {measure}: {ratio:.2f} (target {sign} {target:g}) {detail}")


# ---- the measurements ---------------------------------------------------------------------


def cpu_timed(fn: Callable[[], Any]) -> tuple[float, float, Any]:
    """One run's wall and CPU seconds (after a full collection), and its result. CPU time
    is what this process itself spent: less moved by other work holding the cores."""
    gc.collect()
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, result


def bench_mixes(events: list[Event], runs: int) -> None:
    print(f"\n1. mixes in memory: {len(events):,} events decoded beforehand, frozen out of the GC")
    for name, (text, hand) in MIXES.items():
        case = evaldsl.compile(text).cases[0]
        t_dsl: list[float] = []
        t_hand: list[float] = []
        c_dsl: list[float] = []
        c_hand: list[float] = []
        for _ in range(runs):  # in turns, so a change of load falls on both alike
            wall, cpu, result = cpu_timed(lambda case=case: case.check(events))
            t_dsl.append(wall)
            c_dsl.append(cpu)
            wall, cpu, facts = cpu_timed(lambda hand=hand: hand(events))
            t_hand.append(wall)
            c_hand.append(cpu)
        got = [None if v.status == "skip" else v.status == "pass" for v in result.verdicts]
        agree = got == facts
        ratio = statistics.median(t_dsl) / statistics.median(t_hand)
        cpu_ratio = statistics.median(c_dsl) / statistics.median(c_hand)
        print(
            f"  {name}: evaldsl {spread(t_dsl)}; hand-written {spread(t_hand)}; verdicts "
            + ("agree" if agree else "!!! DIFFER !!!")
            + f" ({sum(1 for g in got if g)} pass, {sum(1 for g in got if g is False)} fail)"
        )
        print(f"    CPU time: evaldsl {spread(c_dsl)}; hand-written {spread(c_hand)}")
        FLOOR[f"hand {name}"] = statistics.median(c_hand)
        if not agree:
            for line, g, f in zip(text.splitlines(), got, facts, strict=True):
                print(f"      {'  ' if g == f else '!!'} {g!s:5} {f!s:5} {line}")
        row(
            f"{name} mix in memory / hand-written",
            ratio,
            1.1,
            f"(medians of wall time; of CPU time: {cpu_ratio:.2f})",
        )


def bare_decode(path: Path) -> int:
    loads = orjson.loads
    count = 0
    with paused_gc(), open(path, "rb") as f:
        for line in f:
            loads(line)
            count += 1
    return count


def typed_decode(path: Path, reads: Any) -> int:
    """Decode the file as a mix's pass has it decoded (each kind's struct of the fields the
    pass reads; large fields left as raw bytes), reading nothing of it."""
    count = 0
    with paused_gc(), kind_events(EventStream(path, header=True), reads) as decoded:
        for _ in decoded:
            count += 1
    return count


def events_jsonl(cassette: Path) -> Path:
    """The cassette's events without its header line, as a JSONL of events (made when
    missing, beside it)."""
    path = cassette.with_name(cassette.stem + ".events.jsonl")
    if not path.exists():
        part = path.with_suffix(".part")
        with open(cassette, "rb") as source, open(part, "wb") as out:
            source.readline()
            while block := source.read(1 << 20):
                out.write(block)
        part.replace(path)
    return path


def whole_run(runs: int, data: Path, suite_text: str, suite_name: str, measure: str) -> None:
    """Time an `evaldsl run -q --no-history` process of `suite_text` (a suite reading the
    JSONL file `data`) and a process decoding every line of `data` with orjson, in turns,
    and print the ratio as `measure`."""
    decode = (
        "import orjson, gc, sys\ngc.disable()\n"
        "for line in open(sys.argv[1], 'rb'): orjson.loads(line)\n"
    )
    with tempfile.TemporaryDirectory() as folder:
        suite = Path(folder) / "speed.eval"
        suite.write_text(suite_text)
        t_proc, t_run = process_times_in_turns(
            runs,
            [
                [sys.executable, "-c", decode, str(data)],
                [EVALDSL, "run", "-q", "--no-history", str(suite)],
            ],
            ENV,
        )
    print(f"  process decoding every line with orjson: {spread(t_proc)}")
    print(f"  `evaldsl run -q --no-history` of {suite_name}: {spread(t_run)}")
    row(measure, statistics.median(t_run) / statistics.median(t_proc), 0.8, "")


def bench_files(cassette: Path, runs: int) -> None:
    print(f"\n2. file to verdicts: {cassette.name} ({cassette.stat().st_size / 2**20:.0f} MiB)")
    programs = {name: evaldsl.compile(text) for name, (text, _) in MIXES.items()}
    reads = {
        name: pass_for(program.cases[0].needs, raw=True, by_kind=True).reads
        for name, program in programs.items()
    }
    typed: dict[str, list[float]] = {name: [] for name in programs}
    # the same events as a JSONL of events without the cassette's header (a trace file,
    # told from a verydia one by a look through the whole file): "mixed" on it too
    events_file = events_jsonl(cassette)
    # in turns, so a change of load falls on each alike; CPU time beside wall time (what
    # this process itself spent: less moved by other work holding the cores)
    wall: dict[str, list[float]] = {name: [] for name in ("orjson", *programs, "events")}
    cpu: dict[str, list[float]] = {name: [] for name in wall}
    lines = 0
    for _ in range(runs):
        took, spent, lines = cpu_timed(lambda: bare_decode(cassette))
        wall["orjson"].append(took)
        cpu["orjson"].append(spent)
        for name, program in programs.items():
            took, spent, _ = cpu_timed(lambda program=program: program.check(cassette))
            wall[name].append(took)
            cpu[name].append(spent)
            _, spent, _ = cpu_timed(lambda name=name: typed_decode(cassette, reads[name]))
            typed[name].append(spent)
        took, spent, _ = cpu_timed(lambda: programs["mixed"].check(events_file))
        wall["events"].append(took)
        cpu["events"].append(spent)
    print(f"  bare orjson decoding of every line ({lines:,} lines): {spread(wall['orjson'])}")
    print(f"    CPU time: {spread(cpu['orjson'])}")
    bare, bare_cpu = statistics.median(wall["orjson"]), statistics.median(cpu["orjson"])
    FLOOR["orjson"] = bare_cpu
    for name in programs:
        FLOOR[f"typed {name}"] = statistics.median(typed[name])
    for name in (*programs, "events"):
        print(f"  {name}: program.check(path) {spread(wall[name])}; CPU time {spread(cpu[name])}")
        row(
            f"{name}: API file->verdicts / orjson"
            + (" (mixed, a JSONL of events)" if name == "events" else ""),
            statistics.median(wall[name]) / bare,
            0.8,
            f"(medians of wall time; of CPU time: {statistics.median(cpu[name]) / bare_cpu:.2f})",
        )
    # whole processes: `evaldsl run` on a suite naming the cassette vs decoding alone
    whole_run(
        runs,
        cassette,
        f'case "mixed"\ncassette "{cassette}"\n{bench.MIXED_20}\n',
        "the mixed suite",
        "evaldsl run (process) / orjson process",
    )


def bench_start(runs: int) -> None:
    print("\n3. start-up: whole processes")
    small = str(ROOT / "examples" / "weather" / "weather.eval")
    t_check = process_times(runs, [EVALDSL, "check", small], ENV)
    t_bare = process_times(runs, [sys.executable, "-c", "pass"], ENV)
    print(f"  evaldsl check examples/weather/weather.eval: {spread(t_check)}")
    print(f"  python -c pass: {spread(t_bare)}")
    median_ms = statistics.median(t_check) * 1000
    row("check, small file, median ms", median_ms, 150, "", at_most=True)


def k_statements(k: int) -> str:
    """K distinct statements from bench.py's generator (its compile file's mix)."""
    gen = bench.StatementGen(bench.random.Random(bench.SEED + 7))
    seen: dict[str, None] = {}
    while len(seen) < k:
        seen.setdefault(gen.statement(), None)
    return "\n".join(seen)


def bench_k(events: list[Event], runs: int) -> None:
    print("\n4. K distinct assertions over the same in-memory events")
    ks = (1, 10, 100, 1000)
    cases = {k: evaldsl.compile(k_statements(k)).cases[0] for k in ks}
    times: dict[int, list[float]] = {k: [] for k in ks}
    cpu_times: dict[int, list[float]] = {k: [] for k in ks}
    for _ in range(runs):  # in turns, so a change of load falls on every K alike
        for k in ks:
            wall, cpu, _ = cpu_timed(lambda case=cases[k]: case.check(events))
            times[k].append(wall)
            cpu_times[k].append(cpu)
    base = statistics.median(times[1])
    cpu_base = statistics.median(cpu_times[1])
    for k in ks:
        median = statistics.median(times[k])
        cpu_median = statistics.median(cpu_times[k])
        print(
            f"  K={k}: {spread(times[k])} ({median / base:.2f}x K=1); "
            f"CPU time {spread(cpu_times[k])} ({cpu_median / cpu_base:.2f}x K=1)"
        )
    # K=1 is one count; from K=10 on, every kind of work the mix has is there, so this
    # ratio is what more statements of the same kinds cost (the target stays K=1's)
    print(
        f"  K=1000 / K=10: {median / statistics.median(times[10]):.2f}x "
        f"(CPU time {cpu_median / statistics.median(cpu_times[10]):.2f}x)"
    )
    row(
        "K=1000 / K=1",
        median / base,
        3.0,
        f"(medians of wall time; of CPU time: {cpu_median / cpu_base:.2f})",
    )


def bench_jobs(runs: int, cassettes: int = 120, events: int = 5000) -> None:
    print(f"\n5. -j: {cassettes} cassettes of {events:,} events, one case each")
    suite = bench.jobs_suite(cassettes, events)
    run = [EVALDSL, "run", "-q", "--no-history"]
    before_fork = bench.BEFORE_FORK
    # in turns, so a change of load falls on each alike; `--dry-run` loads and checks the
    # whole suite (reading every cassette's head) and runs nothing: a serial run's part
    # before its first case
    cpu: list[list[float]] = []
    # two serial runs at once: what two processes of this very work take together, where
    # they share the cores' caches and memory bandwidth (a spin loop, below, shares little)
    serial_run = shlex.join([*run, "-j", "1", str(suite)])
    t_load, t_fork, t1, t2, t_pair = process_times_in_turns(
        runs,
        [
            [*run, "--dry-run", str(suite)],
            [sys.executable, "-c", before_fork, str(suite)],
            [*run, "-j", "1", str(suite)],
            [*run, "-j", "2", str(suite)],
            ["/bin/sh", "-c", f"{serial_run} & {serial_run}; wait"],
        ],
        ENV,
        cpu,
    )
    print(f"  -j 1: {spread(t1)}; -j 2: {spread(t2)}")
    print(
        "  CPU time (the process and its workers): "
        + "; ".join(
            f"{name} {spread(times)}"
            for name, times in zip(
                ("--dry-run", "before forking", "-j 1", "-j 2", "two -j 1 at once"),
                cpu,
                strict=True,
            )
        )
    )
    # what the machine gives two processes right now: pure CPU work, 2 processes vs 1
    spin = "import sys\nx = 0\nfor i in range(4_000_000): x += i\n"
    one = process_times(runs, [sys.executable, "-c", spin + spin])
    two: list[float] = []
    for _ in range(runs):
        t0 = time.perf_counter()
        procs = [subprocess.Popen([sys.executable, "-c", spin]) for _ in range(2)]
        for p in procs:
            p.wait()
        two.append(time.perf_counter() - t0)
    machine = statistics.median(two) / statistics.median(one)
    print(
        f"  the machine now: the same CPU work in 2 processes takes {machine:.2f}x the time "
        "of 1 process (0.5 on two idle cores; higher when other work holds the cores)"
    )
    # this work's own ratio: two serial runs at once against twice one (0.5 on two cores
    # that share nothing)
    own = statistics.median(t_pair) / (2 * statistics.median(t1))
    print(
        f"  two `-j 1` runs at once: {spread(t_pair)}, {own:.2f}x the time of the two one "
        "after the other (this work's own 2-process ratio)"
    )
    serial = statistics.median(t_fork)
    work = statistics.median(t1) - serial
    best = (serial + machine * work) / statistics.median(t1)
    best_own = (serial + own * work) / statistics.median(t1)
    print(
        f"  a serial run's part before its first case (`run --dry-run`: start, imports, "
        f"loading and checking the suite): {spread(t_load)}"
    )
    print(
        f"  the -j parent's part before it forks (start, imports, reading and expanding the "
        f"suite): {spread(t_fork)}; so -j 1 does ~{work * 1000:.0f} ms of work after it, "
        f"and -j 2 at the machine's ratio would take at best {best:.2f}x -j 1 (0.6 needs a "
        f"part before forking of at most ~{max(0.0, (0.6 - machine) * work / 0.4) * 1000:.0f} ms); "
        f"at this work's own ratio, at best {best_own:.2f}x (0.6 needs at most "
        f"~{max(0.0, (0.6 - own) * work / 0.4) * 1000:.0f} ms)"
    )
    row(
        "-j 2 / -j 1 (wall)",
        statistics.median(t2) / statistics.median(t1),
        0.6,
        f"(2-process ratio now: a spin loop's {machine:.2f}, this work's {own:.2f}; at best "
        f"{best_own:.2f} with the parent's part before forking)",
    )


# ---- 7. OTel spans: an OTLP JSONL file to verdicts ---------------------------------------

OTLP_MIX = r"""
tool search_web called at least 100 times
tool get_weather args $.city == "Paris"
every tool get_weather args $.units in ["metric", "imperial"]
tool get_weather result $.temp > 40
no tool delete_database
tools contains any [search_web, read_file]
answer contains "weather"
answer matches /\d+ C/
input tokens > 1000
output tokens < 100000000
steps >= 100
errors == 0
""".strip()

_SYSTEM = (
    "You are a careful assistant. Answer with the facts the tools give; cite them; never "
    "guess a number. " * 12
)
_OTLP_VERSION = 1  # bump when the generator changes: the cached file is made again


def _anyvalue(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    return {"stringValue": value}


def _otlp_line(rng: Any, turn: int) -> dict[str, Any]:
    """One export (one agent turn: an agent span, 1-4 model calls with a tool call each,
    a last model call with the answer) in one of three conventions, taking turns."""
    convention = turn % 3
    trace_id = f"{rng.getrandbits(128):032x}"
    clock = 1_700_000_000_000_000_000 + turn * 60_000_000_000
    spans: list[dict[str, Any]] = []

    def span(name: str, attrs: list[tuple[str, Any]], ms: int) -> None:
        nonlocal clock
        spans.append(
            {
                "traceId": trace_id,
                "spanId": f"{rng.getrandbits(64):016x}",
                "parentSpanId": f"{rng.getrandbits(64):016x}",
                "name": name,
                "kind": 1,
                "startTimeUnixNano": str(clock),
                "endTimeUnixNano": str(clock + ms * 1_000_000),
                "attributes": [{"key": k, "value": _anyvalue(v)} for k, v in attrs],
                "status": {"code": 1},
            }
        )
        clock += ms * 1_000_000 + 1_000_000

    agent_kind = ("gen_ai.operation.name", "invoke_agent")
    span(
        "agent",
        [
            (("openinference.span.kind", "CHAIN"), ("traceloop.span.kind", "workflow"), agent_kind)[
                convention
            ],
            ("session.id", f"s{turn}"),
        ],
        5,
    )
    history: list[tuple[str, str]] = [
        ("system", _SYSTEM),
        ("user", f"What is the weather in Paris, and what did search say? (turn {turn})"),
    ]
    steps = 1 + rng.randrange(4)
    for step in range(steps + 1):
        last = step == steps
        tool = ("get_weather", "search_web", "read_file")[rng.randrange(3)]
        call_id = f"call_{turn}_{step}"
        args = (
            {"city": "Paris" if rng.random() < 0.3 else "Oslo", "units": "metric"}
            if tool == "get_weather"
            else {"q": f"weather report {turn}", "limit": 5}
            if tool == "search_web"
            else {"path": f"/data/logs/{turn}.csv"}
        )
        answer = f"The weather in Paris is {rng.randrange(30)} C, as the tools say." if last else ""
        usage = (1200 + 300 * step, 40 + rng.randrange(60))
        attrs: list[tuple[str, Any]]
        if convention == 0:  # GenAI
            inputs = [{"role": r, "parts": [{"type": "text", "content": c}]} for r, c in history]
            out = (
                [{"role": "assistant", "parts": [{"type": "text", "content": answer}]}]
                if last
                else [
                    {
                        "role": "assistant",
                        "parts": [
                            {"type": "tool_call", "id": call_id, "name": tool, "arguments": args}
                        ],
                    }
                ]
            )
            attrs = [
                ("gen_ai.operation.name", "chat"),
                ("gen_ai.provider.name", "openai"),
                ("gen_ai.request.model", "gpt-4o-mini"),
                ("gen_ai.input.messages", orjson.dumps(inputs).decode()),
                ("gen_ai.output.messages", orjson.dumps(out).decode()),
                ("gen_ai.usage.input_tokens", usage[0]),
                ("gen_ai.usage.output_tokens", usage[1]),
            ]
        elif convention == 1:  # OpenInference
            attrs = [("openinference.span.kind", "LLM"), ("llm.model_name", "gpt-4o-mini")]
            for i, (r, c) in enumerate(history):
                attrs += [
                    (f"llm.input_messages.{i}.message.role", r),
                    (f"llm.input_messages.{i}.message.content", c),
                ]
            attrs += [
                ("input.value", orjson.dumps({"messages": history}).decode()),
                ("llm.invocation_parameters", '{"temperature": 0}'),
                ("llm.token_count.prompt", usage[0]),
                ("llm.token_count.completion", usage[1]),
            ]
            prefix = "llm.output_messages.0.message"
            attrs += [(f"{prefix}.role", "assistant")]
            attrs += (
                [(f"{prefix}.content", answer)]
                if last
                else [
                    (f"{prefix}.tool_calls.0.tool_call.id", call_id),
                    (f"{prefix}.tool_calls.0.tool_call.function.name", tool),
                    (
                        f"{prefix}.tool_calls.0.tool_call.function.arguments",
                        orjson.dumps(args).decode(),
                    ),
                ]
            )
        else:  # OpenLLMetry
            attrs = [
                ("llm.request.type", "chat"),
                ("gen_ai.system", "openai"),
                ("gen_ai.request.model", "gpt-4o-mini"),
            ]
            for i, (r, c) in enumerate(history):
                attrs += [(f"gen_ai.prompt.{i}.role", r), (f"gen_ai.prompt.{i}.content", c)]
            attrs += [
                ("gen_ai.usage.prompt_tokens", usage[0]),
                ("gen_ai.usage.completion_tokens", usage[1]),
                ("gen_ai.completion.0.role", "assistant"),
            ]
            attrs += (
                [("gen_ai.completion.0.content", answer)]
                if last
                else [
                    ("gen_ai.completion.0.tool_calls.0.id", call_id),
                    ("gen_ai.completion.0.tool_calls.0.name", tool),
                    ("gen_ai.completion.0.tool_calls.0.arguments", orjson.dumps(args).decode()),
                ]
            )
        span("chat gpt-4o-mini", attrs, 400 + rng.randrange(800))
        if last:
            break
        result = (
            {"temp": rng.randrange(-10, 45), "sky": "clear " * 20}
            if tool == "get_weather"
            else {
                "hits": [
                    {"title": f"Report {i}", "url": f"https://x.io/{i}", "snippet": "weather " * 20}
                    for i in range(3)
                ]
            }
        )
        text = orjson.dumps(result).decode()
        tool_attrs = [
            [
                ("gen_ai.operation.name", "execute_tool"),
                ("gen_ai.tool.name", tool),
                ("gen_ai.tool.call.id", call_id),
                ("gen_ai.tool.call.arguments", orjson.dumps(args).decode()),
                ("gen_ai.tool.call.result", text),
            ],
            [
                ("openinference.span.kind", "TOOL"),
                ("tool.name", tool),
                ("input.value", orjson.dumps(args).decode()),
                ("output.value", text),
            ],
            [
                ("traceloop.span.kind", "tool"),
                ("traceloop.entity.name", tool),
                ("traceloop.entity.input", orjson.dumps(args).decode()),
                ("traceloop.entity.output", text),
            ],
        ][convention]
        span(f"execute_tool {tool}", tool_attrs, 50 + rng.randrange(300))
        history += [("assistant", f"calling {tool} {orjson.dumps(args).decode()}"), ("tool", text)]
    resource = [
        ("service.name", "agent"),
        ("telemetry.sdk.language", "python"),
        ("telemetry.sdk.version", "1.27.0"),
        ("host.name", f"worker-{turn % 7}"),
    ]
    return {
        "resourceSpans": [
            {
                "resource": {
                    "attributes": [{"key": k, "value": _anyvalue(v)} for k, v in resource]
                },
                "scopeSpans": [
                    {"scope": {"name": "agent.instrumentation", "version": "0.1"}, "spans": spans}
                ],
            }
        ]
    }


def ensure_otlp(turns: int) -> Path:
    """The cached OTLP JSONL file of `turns` agent turns (one export per line)."""
    path = bench.DATA / f"otlp-{turns}-v{_OTLP_VERSION}.jsonl"
    if not path.exists():
        bench.DATA.mkdir(parents=True, exist_ok=True)
        rng = bench.random.Random(bench.SEED)
        part = path.with_suffix(".part")
        with open(part, "wb") as f:
            for turn in range(turns):
                f.write(orjson.dumps(_otlp_line(rng, turn)) + b"\n")
        part.replace(path)
    return path


def bench_otlp(turns: int, runs: int) -> None:
    path = ensure_otlp(turns)
    size = path.stat().st_size / 2**20
    print(f"\n7. OTel spans to verdicts: {path.name} ({size:.0f} MiB, {turns:,} exports)")
    program = evaldsl.compile(OTLP_MIX)
    timings: dict[str, list[float]] = {"orjson": [], "typed": [], "full": []}
    cpu: dict[str, list[float]] = {"orjson": [], "typed": [], "full": []}
    verdicts: dict[str, list[str]] = {}

    def check() -> list[str]:
        return program.check(path).statuses

    for _ in range(runs):  # in turns, so a change of load falls on all three alike
        for name in timings:
            if name == "full":
                os.environ["EVALDSL_REFERENCE"] = "1"
            try:
                fn = (lambda: bare_decode(path)) if name == "orjson" else check
                wall, spent, result = cpu_timed(fn)
            finally:
                os.environ.pop("EVALDSL_REFERENCE", None)
            timings[name].append(wall)
            cpu[name].append(spent)
            if name != "orjson":
                verdicts[name] = result
    agree = verdicts["typed"] == verdicts["full"]
    print(f"  bare orjson decoding of every line: {spread(timings['orjson'])}")
    print(f"  program.check(path), typed decoding: {spread(timings['typed'])}")
    print(f"  program.check(path), full decoding (EVALDSL_REFERENCE=1): {spread(timings['full'])}")
    print(
        "  verdicts "
        + ("agree" if agree else "!!! DIFFER !!!")
        + f": {verdicts['typed'].count('pass')} pass, {verdicts['typed'].count('fail')} fail"
    )
    bare = statistics.median(timings["orjson"])
    cpu_bare = statistics.median(cpu["orjson"])
    print("    CPU time: " + "; ".join(f"{name} {spread(times)}" for name, times in cpu.items()))
    row(
        "OTLP JSONL file->verdicts / orjson",
        statistics.median(timings["typed"]) / bare,
        0.8,
        f"(CPU time: {statistics.median(cpu['typed']) / cpu_bare:.2f}; with full decoding "
        f"{statistics.median(timings['full']) / bare:.2f}, CPU "
        f"{statistics.median(cpu['full']) / cpu_bare:.2f})",
    )
    # whole processes, as for the cassette (section 2): `evaldsl run` of a suite of the mix
    # over the file (its check reads the file's head, its run the file) vs decoding alone
    whole_run(
        runs,
        path,
        f'case "otlp"\ntrace "{path}" as otel\n{OTLP_MIX}\n',
        "the OTLP suite",
        "OTLP: evaldsl run (process) / orjson process",
    )


#: The sections `--only` can pick, in the order they run.
SECTIONS = ("start", "jobs", "files", "mixes", "k", "otlp")


def print_floor() -> None:
    """What file -> verdicts would take a hand-written reader with evaldsl's decoder, for
    each mix, as a ratio to bare orjson: the typed decoding of the fields its pass reads
    (section 2) plus its hand-written pass over events already decoded (section 1), both
    CPU time. An estimate, not a bound: the hand-written pass reads dicts, which cost
    more to read than the decoder's structs (the generated "mixed" pass beats it), and
    it decodes nothing, where a real pass decodes the large fields it reads (left as
    bytes by the typed decoding). Printed when both sections ran."""
    names = [n for n in MIXES if f"typed {n}" in FLOOR and f"hand {n}" in FLOOR]
    if not names or "orjson" not in FLOOR:
        return
    print("\nfile -> verdicts, a hand-written reader's estimate (typed decoding + the")
    print("hand-written pass over decoded events, CPU time; see `print_floor`):")
    for name in names:
        typed, hand = FLOOR[f"typed {name}"], FLOOR[f"hand {name}"]
        print(
            f"  {name}: typed decoding {typed * 1000:.0f} ms + hand-written pass "
            f"{hand * 1000:.0f} ms = {(typed + hand) / FLOOR['orjson']:.2f}x bare orjson"
        )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--events", type=int, default=1_000_000, help="events of the cassette")
    parser.add_argument("--runs", type=int, default=5, help="repetitions (medians)")
    parser.add_argument(
        "--turns", type=int, default=6_000, help="agent turns (lines) of the OTLP file"
    )
    parser.add_argument("--quick", action="store_true", help="300,000 events, 3 runs")
    parser.add_argument(
        "--only",
        action="append",
        choices=SECTIONS,
        help="run only this section (repeatable): " + ", ".join(SECTIONS),
    )
    opts = parser.parse_args(argv)
    only = set(opts.only or SECTIONS)
    if opts.quick:
        opts.events, opts.runs, opts.turns = 300_000, 3, 2_000
    started = time.perf_counter()
    print("evaldsl speed benchmark (issue 10)")
    print("command: " + shlex.join([sys.executable, *sys.argv]))
    print(bench.machine())
    if only - {"otlp", "start", "jobs"}:
        cassette, _, _ = bench.ensure_data(opts.events, 10_000)
    if "start" in only:
        bench_start(max(opts.runs, 9))
    if "jobs" in only:
        bench_jobs(opts.runs)
    if "files" in only:
        bench_files(cassette, opts.runs)
    if only & {"mixes", "k"}:
        events = bench.load_events(cassette)
        gc.collect()
        gc.freeze()
        try:
            if "mixes" in only:
                bench_mixes(events, opts.runs)
            if "k" in only:
                bench_k(events, opts.runs)
        finally:
            gc.unfreeze()
    if "otlp" in only:
        bench_otlp(opts.turns, opts.runs)
    print_floor()
    width = max(len(r[0]) for r in ROWS)
    print("\nmeasure".ljust(width + 1) + "  ratio   target    ")
    for measure, ratio, target, verdict in ROWS:
        print(f"{measure.ljust(width)}  {ratio:>6}  {target:<8}  {verdict}")
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"total {time.perf_counter() - started:.0f} s; load average now {load}; compile "
        "throughput and peak memory: benchmarks/bench.py (a) and (d)"
    )
    return 0 if all(not math.isnan(float(r[1])) for r in ROWS) else 1


if __name__ == "__main__":
    sys.exit(main())
