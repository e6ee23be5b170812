"""evaldsl performance benchmark (issue item 10): compile speed, evaluation overhead, memory.

Run:  .venv/bin/python benchmarks/bench.py [--events N] [--statements M]

What it measures, and why:

a. Compile throughput: `evaldsl.compile(text)` (parse + outline + check + compile) on a file
   of M mixed, mostly unique statements, in statements per second, with a breakdown by
   stage. A suite is compiled on every run and on every keystroke in the editor, so it
   must stay cheap (target >= 50,000 distinct statements/s, issue 10; it was 30,000).
b. Evaluation overhead in memory: 20 mixed assertions over N already decoded events via
   `program.cases[0].check(events)` against a hand-written single-pass Python function
   computing the same 20 facts. The language must cost little over code a user would
   write by hand (target <= 1.1x, issue 10). The 20 verdicts must agree with the
   function's booleans.
c. File to verdicts: `program.check(path)`, streaming the cassette from disk, against bare
   decoding of the same file with orjson (GC paused as `evaldsl.gcpause.paused_gc` does).
   Decoding everything is no floor: decode only what is read (target <= 0.8x, issue 10).
d. Peak memory: the file-to-verdicts path in fresh subprocesses (peak RSS, ru_maxrss) for
   assertions that need little, for assertions that keep every call of a frequent tool,
   and for a process that loads all events into a list. Memory must grow with what the
   assertions need, not with the trace. (Measured first, while this process is small, and
   in children started by fork: Linux carries the RSS high-water mark of the memory a
   process execs away from into its ru_maxrss, which under vfork is the parent's. VmHWM
   is printed as a cross-check.)

The cassette (a traceplay v1 cassette with a realistic mix of events) and the `.eval` file
are generated deterministically from a fixed seed and cached under `benchmarks/data/`
(git-ignored); they are regenerated when missing or when the parameters differ.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import os
import platform
import random
import re
import resource
import shlex
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any, TypeVar

import orjson

# Run from a checkout without installing: the checkout's evaldsl comes first.
ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import evaldsl  # noqa: E402
from evaldsl.gcpause import paused_gc  # noqa: E402
from evaldsl.language.diagnostics import forget_suggestions  # noqa: E402
from evaldsl.language.paths import compile_path  # noqa: E402
from evaldsl.language.regexes import compile_regex  # noqa: E402
from evaldsl.suites.build import check_suite, compile_suite  # noqa: E402
from evaldsl.suites.evalfile import read_eval  # noqa: E402
from evaldsl.syntax.outline import outline  # noqa: E402
from evaldsl.syntax.parser import parse  # noqa: E402

Event = dict[str, Any]
T = TypeVar("T")

DATA = ROOT / "benchmarks" / "data"
SEED = 20260901
GENERATOR_VERSION = 5  # bump when the generators change: cached data is then regenerated

# ---- the vocabulary of the generated data ---------------------------------------------------

TOOLS = (
    "search_web",
    "get_weather",
    "read_file",
    "run_sql",
    "fetch_url",
    "get_crypto_price",
    "send_email",
    "calendar_lookup",
    "translate",
    "write_file",
)
TOOL_WEIGHTS = (30, 15, 12, 10, 8, 7, 6, 5, 4, 3)
CITIES = (
    "Paris", "Tokyo", "Xiamen", "Berlin", "Lagos", "Lima", "Oslo", "Cairo", "Delhi", "Quito",
    "Hanoi", "Dakar", "Seoul", "Austin", "Porto", "Perth", "Kyiv", "Accra", "Rome", "Sofia",
)  # fmt: skip
CONDITIONS = ("sunny", "cloudy", "rainy", "windy", "foggy", "snowy", "clear", "stormy")
WORDS = (
    "pricing", "release", "weather", "latency", "invoice", "refund", "roadmap", "budget",
    "outage", "migration", "schema", "forecast", "summary", "contract", "policy", "report",
    "quota", "backlog", "sprint", "deploy", "audit", "metrics", "survey", "renewal",
    "ticket", "upgrade", "onboarding", "churn", "revenue", "pipeline", "dataset", "model",
    "benchmark", "incident", "payroll", "shipping", "warranty", "pricing", "feedback", "alert",
)  # fmt: skip
DIRS = ("sales", "logs", "users", "orders", "reports", "exports", "tmp", "archive")
TABLES = ("orders", "users", "events", "invoices", "sessions", "products")
SYMBOLS = ("BTC", "ETH", "SOL", "ADA", "DOT", "XRP")
DOMAINS = ("example.com", "docs.python.org", "news.ycombinator.com", "api.github.com")
PEOPLE = ("ana", "bo", "chen", "dara", "eli", "fatima", "gus", "hana", "ivo", "jun")
LANGS = ("fr", "de", "es", "ja", "zh", "pt", "it")
MODELS = ("gpt-4o", "gpt-4o-mini", "gpt-4.1-mini")
FORBIDDEN = ("delete_database", "shell_exec", "drop_table", "wire_money", "format_disk")

# ---- the 20 assertions of (b) and (c), and the two sets of (d) ------------------------------

MIXED_20 = r"""
tool search_web called at least 1000 times
tool get_weather called between 10 and 20 times
no tool delete_database
tool send_email never called
tool get_weather args $.city == "Paris"
tool get_weather args $.city == "Atlantis"
every tool get_weather args $.units in ["metric", "imperial"]
tool read_file args $.path matches /^\/data\/[a-z]+\/\d+\.csv$/
tool get_weather result $.temp > 40
answer contains "weather"
answer matches /\d+ C/
answer[1] starts with "The"
answer[-2] not empty
tokens <= 5000000
input tokens > 1000
output tokens < 100
steps >= 100
tool calls <= 100000
errors == 0
not (errors > 1000) and (latency < 200h or steps < 10)
""".strip()

LITTLE_20 = r"""
tool search_web called at least 1000 times
tool get_weather called at most 10 times
tool read_file called
tool run_sql called between 1 and 1000000 times
no tool delete_database
tool send_email never called
tool fetch_url called at least 5 times
tool translate called at most 100000 times
tokens <= 900000000
input tokens > 1000
output tokens < 100000000
steps >= 10
steps <= 5000000
tool calls > 10
tool calls <= 1000000
errors <= 1000
errors == 0
answer contains "the"
answer matches /\d+/
not (answer ends with "?")
""".strip()

# the little set, minus four counts, plus four tests that keep every search_web call's args
ARGS_20 = "\n".join(
    [
        *LITTLE_20.splitlines()[:16],
        "tool search_web args $.limit <= 20",
        "every tool search_web args $.limit >= 1",
        'tool search_web args $.query contains "pricing"',
        "tool search_web args $.query matches /^[a-z]+ [a-z]+ \\d+$/",
    ]
)
CHILD_SETS = {"little": LITTLE_20, "args": ARGS_20, "baseline": LITTLE_20}


# ---- generating the cassette ----------------------------------------------------------------

_EPOCH_MS = int(datetime(2026, 1, 1, tzinfo=UTC).timestamp() * 1000)


def iso_ms(ms: int) -> str:
    """Epoch milliseconds as traceplay writes times: `2026-01-01T00:00:00.000Z`."""
    t = time.gmtime(ms // 1000)
    return (
        f"{t.tm_year:04d}-{t.tm_mon:02d}-{t.tm_mday:02d}T"
        f"{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d}.{ms % 1000:03d}Z"
    )


def tool_arguments(rng: random.Random, name: str) -> dict[str, Any]:
    r = rng.randint
    c = rng.choice
    if name == "search_web":
        return {"query": f"{c(WORDS)} {c(WORDS)} {r(1, 999)}", "limit": r(1, 20)}
    if name == "get_weather":
        return {"city": c(CITIES), "units": c(("metric", "metric", "imperial"))}
    if name == "read_file":
        return {"path": f"/data/{c(DIRS)}/{r(1, 9999)}.csv"}
    if name == "run_sql":
        return {
            "query": f"SELECT * FROM {c(TABLES)} WHERE id = {r(1, 99999)}",
            "db": c(("analytics", "prod")),
            "limit": r(10, 1000),
        }
    if name == "fetch_url":
        return {"url": f"https://{c(DOMAINS)}/{c(WORDS)}/{r(1, 999)}", "timeout": r(1, 60)}
    if name == "get_crypto_price":
        return {"symbol": c(SYMBOLS), "currency": c(("USD", "EUR"))}
    if name == "send_email":
        return {"to": f"{c(PEOPLE)}@example.com", "subject": f"{c(WORDS)} update"}
    if name == "calendar_lookup":
        return {"date": f"2026-{r(1, 12):02d}-{r(1, 28):02d}", "user": c(PEOPLE)}
    if name == "translate":
        return {"text": f"the {c(WORDS)} is ready", "target": c(LANGS)}
    return {"path": f"/data/{c(DIRS)}/{c(WORDS)}.txt", "bytes": r(1, 99999)}


def tool_output(rng: random.Random, name: str, args: dict[str, Any]) -> Any:
    r = rng.randint
    if name == "get_weather":
        return {"city": args["city"], "temp": r(-15, 42), "condition": rng.choice(CONDITIONS)}
    if name == "search_web":
        return {
            "hits": [
                {
                    "title": f"{rng.choice(WORDS).title()} notes {r(1, 99)}",
                    "url": f"https://x.io/{i}",
                }
                for i in range(r(1, 2))
            ]
        }
    if name == "get_crypto_price":
        return f"{args['symbol']}: ${r(1, 99999)}.{r(0, 99):02d}"
    if name == "run_sql":
        return {"rows": r(0, 500), "ms": r(1, 900)}
    if name == "read_file":
        return f"{r(1, 5000)} rows, {r(1, 12)} columns"
    return "ok"


def final_answer(rng: random.Random, used: list[tuple[str, dict[str, Any], Any]]) -> str:
    if not used:
        return f"Here is the {rng.choice(WORDS)} summary you asked for: {rng.randint(1, 99)} items."
    name, args, out = used[-1]
    if name == "get_weather":
        return f"The weather in {args['city']} is {out['temp']} C and {out['condition']}."
    if name == "search_web":
        return f"I found {len(out['hits'])} results about {args['query']}; see the top one."
    if name == "get_crypto_price":
        return f"The current price is {out}."
    if name == "run_sql":
        return f"The query returned {out['rows']} rows in {out['ms']} ms."
    return f"Done: {name} finished for the {rng.choice(WORDS)} task."


def generate_events(n: int, seed: int) -> Iterator[Event]:
    """Conversations: a user message, 1-4 LLM steps, 0-3 tool calls (with linked results)
    between steps, now and then an agent.error; exactly `n` events."""
    rng = random.Random(seed)
    seq = 0
    now = _EPOCH_MS
    call_no = 0
    while True:

        def ev(kind: str, gap: int, **fields: Any) -> Event:
            nonlocal seq, now
            now += gap
            event: Event = {"id": f"e{seq}", "seq": seq, "at": iso_ms(now), "type": kind}
            event.update(fields)
            seq += 1
            return event

        question = f"What about the {rng.choice(WORDS)} of {rng.choice(CITIES)}?"
        yield ev("user.message", rng.randint(500, 20000), content=question)
        model = rng.choice(MODELS)
        steps = rng.randint(1, 4)
        used: list[tuple[str, dict[str, Any], Any]] = []
        for step in range(steps):
            request = ev(
                "llm.request",
                rng.randint(5, 50),
                provider="openai-compatible",
                model=model,
                messages=[{"role": "user", "content": question}],
                requestHash=f"h{rng.getrandbits(48):012x}",
            )
            yield request
            last = step == steps - 1
            if last:
                text = final_answer(rng, used)
            else:
                text = f"Let me check that with {len(used) + 1} more tool call(s)."
            yield ev(
                "llm.response",
                rng.randint(200, 4000),
                requestId=request["id"],
                status=200,
                output={"choices": [{"message": {"role": "assistant", "content": text}}]},
                usage={
                    "promptTokens": rng.randint(50, 2000),
                    "completionTokens": rng.randint(5, 400),
                },
            )
            if last:
                break
            for _ in range(rng.randint(1, 3)):
                name = rng.choices(TOOLS, TOOL_WEIGHTS)[0]
                args = tool_arguments(rng, name)
                call_no += 1
                call_id = f"call_{call_no}"
                yield ev("tool.call", rng.randint(5, 30), name=name, arguments=args, callId=call_id)
                out = tool_output(rng, name, args)
                if rng.random() < 0.01:
                    yield ev(
                        "tool.result", rng.randint(20, 3000), callId=call_id, output="timeout",
                        isError=True,
                    )  # fmt: skip
                else:
                    yield ev("tool.result", rng.randint(20, 3000), callId=call_id, output=out)
                used.append((name, args, out))
        if rng.random() < 0.004:
            yield ev("agent.error", 5, message="rate limited by provider", code=429)


def write_cassette(path: Path, n: int, seed: int) -> dict[str, Any]:
    """Write the cassette; returns statistics (event types, tool counts) for the report."""
    header = {
        "cassette": "traceplay",
        "version": 1,
        "recordedAt": iso_ms(_EPOCH_MS),
        "redacted": True,
        "providerBaseUrl": "https://api.openai.com/v1",
        "project": "evaldsl-bench",
    }
    types: Counter[str] = Counter()
    tools: Counter[str] = Counter()
    dumps = orjson.dumps
    tmp = path.with_suffix(".tmp")
    with open(tmp, "wb") as f:
        f.write(dumps(header) + b"\n")
        buf: list[bytes] = []
        for i, event in enumerate(generate_events(n, seed)):
            if i == n:
                break
            types[event["type"]] += 1
            if event["type"] == "tool.call":
                tools[event["name"]] += 1
            buf.append(dumps(event))
            if len(buf) >= 10000:
                f.write(b"\n".join(buf) + b"\n")
                buf.clear()
        if buf:
            f.write(b"\n".join(buf) + b"\n")
    tmp.replace(path)
    return {"types": dict(types), "tools": dict(tools)}


# ---- generating the .eval file --------------------------------------------------------------


class StatementGen:
    """Mixed, mostly unique statements over the declared tools."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.atoms: list[tuple[int, Callable[[], str]]] = [
            (14, self.count),
            (3, self.no_tool),
            (18, self.args),
            (6, self.result),
            (16, self.answer),
            (16, self.number),
            (5, self.tools_seq),
            (2, self.latency_cost),
        ]
        self.weights = [w for w, _ in self.atoms]
        self.makers = [m for _, m in self.atoms]

    def word(self) -> str:
        return self.rng.choice(WORDS)

    def regex(self) -> str:
        r, w = self.rng, self.word()
        forms = (
            f"/{w}\\s+\\d{{{r.randint(1, 4)}}}/",
            f"/^(The|A|I) [a-z]+ {w}/i",
            f"/\\b{w}[a-z]*\\b/",
            f"/{r.randint(1, 99)}\\s*(C|F)/",
            f"/[A-Z][a-z]+ notes {r.randint(1, 99)}/",
            f"/{w}|{self.word()}/i",
        )
        return r.choice(forms)

    def atom(self) -> str:
        return self.rng.choices(self.makers, self.weights)[0]()

    def statement(self) -> str:
        roll = self.rng.random()
        if roll < 0.70:
            return self.atom()
        if roll < 0.78:
            return f"not {self.atom()}" if self.rng.random() < 0.5 else f"not ({self.atom()})"
        if roll < 0.88:
            return f"{self.atom()} and {self.atom()}"
        if roll < 0.96:
            return f"{self.atom()} or {self.atom()}"
        return f"({self.atom()} or {self.atom()}) and not {self.atom()}"

    def count(self) -> str:
        r = self.rng
        t = r.choice(TOOLS)
        a = r.randint(1, 500)
        forms = (
            f"tool {t} called {a} times",
            f"tool {t} called once",
            f"tool {t} called twice",
            f"tool {t} called",
            f"tool {t} called at least {a} times",
            f"tool {t} called at most {a} times",
            f"tool {t} called between {a} and {a + r.randint(1, 900)} times",
            f"tool {t} never called",
        )
        # the forms without a number repeat by nature: draw them less often
        return r.choices(forms, (4, 1, 1, 1, 4, 4, 4, 1))[0]

    def no_tool(self) -> str:
        return f"no tool {self.rng.choice(FORBIDDEN)}_{self.rng.randint(1, 99)}"

    def args(self) -> str:
        r = self.rng
        every = "every " if r.random() < 0.15 else ""
        forms = (
            f'{every}tool get_weather args $.city == "{r.choice(CITIES)}"',
            f'{every}tool get_weather args $.city in ["{r.choice(CITIES)}", "{r.choice(CITIES)}"]',
            f'{every}tool get_weather args $.units in ["metric", "{self.word()}"]',
            f'{every}tool get_weather args $.units != "{self.word()}"',
            f"{every}tool search_web args $.limit <= {r.randint(1, 50)}",
            f'{every}tool search_web args $.query contains "{self.word()}"',
            f"{every}tool search_web args $.query matches {self.regex()}",
            f"{every}tool read_file args $.path matches /^\\/data\\/{r.choice(DIRS)}\\/\\d+\\.csv/",
            f'{every}tool read_file args $.path contains "{r.choice(DIRS)}/{r.randint(1, 9999)}"',
            f'{every}tool run_sql args $.query contains "FROM {r.choice(TABLES)}"',
            f"{every}tool run_sql args $.limit > {r.randint(1, 1000)}",
            f'{every}tool run_sql args $["limit"] >= {r.randint(10, 1000)}',
            f"{every}tool fetch_url args $.timeout < {r.randint(1, 90)}",
            f"{every}tool fetch_url args $.url matches /^https:\\/\\/{self.word()}/",
            f'{every}tool get_crypto_price args $.symbol in ["{r.choice(SYMBOLS)}", "BTC"]',
            f'{every}tool send_email args $.to == "{r.choice(PEOPLE)}@example.com"',
            f'{every}tool send_email args $.subject == "{self.word()} update"',
            f'{every}tool calendar_lookup args $.date == "2026-{r.randint(1, 12):02d}-'
            f'{r.randint(1, 28):02d}"',
            f'{every}tool translate args $.target in ["{r.choice(LANGS)}", "{r.choice(LANGS)}"]',
            f"{every}tool write_file args $.bytes >= {r.randint(1, 99999)}",
            f'{every}tool write_file args $.path contains "/{r.choice(DIRS)}/{self.word()}"',
            f'{every}tool write_file args contains {{path: "/data/tmp/{self.word()}.txt"}}',
        )
        return r.choice(forms)

    def result(self) -> str:
        r = self.rng
        forms = (
            f"tool get_weather result $.temp > {r.randint(-10, 45)}",
            f'tool get_weather result $.condition == "{r.choice(CONDITIONS)}"',
            f'tool search_web result $.hits[0].title contains "{self.word().title()}"',
            f"tool search_web result $.hits[*].title matches /{self.word()} notes "
            f"{r.randint(1, 99)}/i",
            f"tool run_sql result $.rows >= {r.randint(0, 500)}",
            f'tool get_crypto_price result contains "{r.choice(SYMBOLS)}: $"',
            f"tool read_file result matches /^{r.randint(1, 5000)} rows/",
            f'tool search_web result $..title contains "{self.word().title()} notes"',
        )
        return r.choice(forms)

    def answer(self) -> str:
        r = self.rng
        n = r.randint(1, 40)
        forms = (
            f'answer contains "{self.word()}"',
            f'answer contains "{r.choice(CITIES)}"',
            f"answer matches {self.regex()}",
            f'answer starts with "The weather in {r.choice(CITIES)}"',
            f'answer starts with "I found {r.randint(1, 2)} results about {self.word()}"',
            f'answer ends with "{r.randint(1, 500)} rows in {r.randint(1, 900)} ms."',
            f'answer ends with "{r.randint(1, 99)} items."',
            f'answer[{n}] contains "{self.word()}"',
            f"answer[-{n}] not empty",
            f'answer contains any ["{self.word()}", "{self.word()}"]',
            f'answer contains all ["{r.choice(CITIES)}", "{r.choice(CONDITIONS)}"]',
            f'answer != "{self.word()} {r.randint(1, 999)}"',
            f'answer json $.{self.word()} == "{r.choice(CONDITIONS)}"',
        )
        return r.choice(forms)

    def number(self) -> str:
        r = self.rng
        op = r.choice(("<", "<=", ">", ">=", "==", "!="))
        big = r.randint(1, 900_000_000)
        small = r.randint(1, 5000)
        forms = (
            f"tokens {op} {big}",
            f"input tokens {op} {big}",
            f"output tokens {op} {big}",
            f"steps {op} {r.randint(1, 500_000)}",
            f"tool calls {op} {r.randint(1, 500_000)}",
            f"errors {op} {small}",
        )
        return r.choice(forms)

    def tools_seq(self) -> str:
        r = self.rng
        a, b, c = r.sample(TOOLS, 3)
        forms = (
            f"tools contains {a}",
            f"tools contains all [{a}, {b}]",
            f"tools contains any [{a}, {b}, {c}]",
            f"tools in order [{a}, {b}, {c}]",
            f"tools in order [{a}, {b}]",
        )
        return r.choice(forms)

    def latency_cost(self) -> str:
        r = self.rng
        forms = (
            f"latency < {r.randint(1, 900)}s",
            f"latency <= {r.randint(1, 300)}h",
            f"cost <= ${r.randint(1, 9999)}.{r.randint(0, 99):02d}",
        )
        return r.choice(forms)


def write_eval(path: Path, statements: int, cassette_name: str, seed: int) -> dict[str, Any]:
    """Write the `.eval` file; returns how many statements and how many distinct texts."""
    rng = random.Random(seed + 1)
    gen = StatementGen(rng)
    lines = [
        "# generated by benchmarks/bench.py: mixed, mostly unique statements",
        'suite "evaldsl benchmark"',
        "tools " + ", ".join(TOOLS),
        "",
    ]
    texts: list[str] = []
    case_no = 0
    while len(texts) < statements:
        if len(texts) % 50 == 0:
            case_no += 1
            lines += ["", f'case "case {case_no:04d}"', f'cassette "{cassette_name}"']
        if rng.random() < 0.1 and statements - len(texts) >= 2:
            pair = [gen.statement(), gen.statement()]  # two statements on one line
            texts += pair
            lines.append("; ".join(pair))
        else:
            s = gen.statement()
            texts.append(s)
            lines.append(s)
        if rng.random() < 0.02:
            lines.append(f"# note {case_no}: {gen.word()}")
    tmp = path.with_suffix(".tmp")
    tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tmp.replace(path)
    return {"statements": len(texts), "distinct": len(set(texts)), "cases": case_no}


def spread(times: list[float], digits: int = 0) -> str:
    """The median of `times` (seconds) and their range, in ms to `digits` places."""
    ms = sorted(t * 1000 for t in times)
    return (
        f"median {statistics.median(ms):.{digits}f} ms "
        f"(range {ms[0]:.{digits}f}-{ms[-1]:.{digits}f})"
    )


def best_cpu(runs: int, fn: Callable[[], T]) -> tuple[float, T]:
    """The least CPU time (seconds) of `runs` calls of `fn` (at least one), and what the
    last call gave."""
    started = time.process_time()
    result = fn()
    best = time.process_time() - started
    for _ in range(runs - 1):
        started = time.process_time()
        result = fn()
        best = min(best, time.process_time() - started)
    return best, result


def timed_process(
    cmd: list[str], env: dict[str, str] | None = None, cwd: str | None = None
) -> tuple[float, float]:
    """Wall and CPU seconds (user and system, of the process and the children it waited
    for: less moved than wall time by other work on the machine) of one run of `cmd`;
    exits when it fails (an exit code other than 0 or 1)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, env=env, cwd=cwd, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{shlex.join(cmd)} failed:\n{done.stderr.decode()[-2000:]}")
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


#: What a `-j` parent does before it forks: start, `run`'s imports, reading and expanding
#: the suite (each case is checked and compiled by the worker that runs it); a script for
#: `python -c SCRIPT SUITE` (speed.py section 5, start_ab.py).
BEFORE_FORK = (
    "import os, sys\nfrom evaldsl.tools import cli\nfrom evaldsl.runner import core, parallel\n"
    "from evaldsl.reports import console\nfrom evaldsl.suites.build import load_suite\n"
    "load_suite(sys.argv[1], later=True)\n"
    # the parent forks here and goes on: the interpreter's teardown (~20 ms for all it has
    # loaded) is no part of what it does before forking (the command skips it at its end)
    "sys.stdout.flush()\nos._exit(0)\n"
)


def jobs_suite(cassettes: int = 120, events: int = 5000) -> Path:
    """The -j benchmarks' suite: `cassettes` cases of MIXED_20, each on a cassette of its
    own of `events` events (written, with the cassettes, when missing)."""
    return _cassette_suite(
        f"jobs-{cassettes}x{events}", "jobs.eval", cassettes, events, lambda: MIXED_20
    )


def small_suite(cases: int = 200, events: int = 60, statements: int = 6) -> Path:
    """A suite of `cases` cases, each on a small cassette of its own (`events` events) with
    `statements` statements of bench's generator, distinct from case to case: the shape of
    most regression suites, where a case's own start (checking, loading, indexing its
    recording, its report) is the cost (written, with the cassettes, when missing)."""
    gen = StatementGen(random.Random(SEED + 11))
    return _cassette_suite(
        f"small-{cases}x{events}x{statements}",
        "small.eval",
        cases,
        events,
        lambda: "\n".join(gen.statement() for _ in range(statements)),
    )


def _cassette_suite(
    name: str, file: str, cases: int, events: int, statements: Callable[[], str]
) -> Path:
    """The suite `file` in `DATA/name`: `cases` cases, each on a cassette of its own of
    `events` events, with the statements `statements()` gives (called once a case, in
    order); the cassettes are written when missing, the suite when it differs."""
    folder = DATA / name
    folder.mkdir(parents=True, exist_ok=True)
    body: list[str] = []
    for i in range(cases):
        path = folder / f"c{i:03d}.jsonl"
        if not path.exists():
            write_cassette(path, events, SEED + i)
        body.append(f'case "c{i:03d}"\ncassette "c{i:03d}.jsonl"\n' + statements())
    suite = folder / file
    text = "\n".join(body) + "\n"
    if not suite.exists() or suite.read_text(encoding="utf-8") != text:
        suite.write_text(text, encoding="utf-8")
    return suite


def ensure_data(events: int, statements: int) -> tuple[Path, Path, dict[str, Any]]:
    """The cached cassette and `.eval` file, regenerated when missing or stale."""
    DATA.mkdir(parents=True, exist_ok=True)
    cassette = DATA / f"bench-{events}.jsonl"
    eval_file = DATA / f"bench-{events}-{statements}.eval"  # it names the cassette
    meta_path = DATA / f"bench-{events}-{statements}.meta.json"
    want = {"generator": GENERATOR_VERSION, "seed": SEED, "events": events}
    meta: dict[str, Any] = {}
    if meta_path.exists():
        meta = orjson.loads(meta_path.read_bytes())
    fresh = (
        cassette.exists()
        and eval_file.exists()
        and all(meta.get(k) == v for k, v in want.items())
        and meta.get("statements") == statements
        and meta.get("cassette_bytes") == cassette.stat().st_size
        and meta.get("eval_bytes") == eval_file.stat().st_size
    )
    if fresh:
        print(f"data: cached {cassette.name}, {eval_file.name} (seed {SEED})")
        return cassette, eval_file, meta
    print(f"data: generating {events:,} events and {statements:,} statements (seed {SEED}) ...")
    t0 = time.perf_counter()
    stats = write_cassette(cassette, events, SEED)
    info = write_eval(eval_file, statements, cassette.name, SEED)
    meta = {
        **want,
        **info,
        **stats,
        "statements": statements,
        "cassette_bytes": cassette.stat().st_size,
        "eval_bytes": eval_file.stat().st_size,
    }
    meta_path.write_bytes(orjson.dumps(meta, option=orjson.OPT_INDENT_2))
    print(f"data: written in {time.perf_counter() - t0:.1f} s")
    return cassette, eval_file, meta


# ---- timing helpers -------------------------------------------------------------------------


def best_of(
    runs: int,
    fn: Callable[[], T],
    before: Callable[[], None] | None = None,
    times: list[float] | None = None,
) -> tuple[float, T]:
    """The fastest of `runs` calls (seconds) and the last result; each starts after a full
    collection, with the previous result dropped."""
    best = float("inf")
    result: Any = None
    for _ in range(runs):
        result = None  # the previous result must not weigh on this run's garbage collections
        gc.collect()
        if before is not None:
            before()
        t0 = time.perf_counter()
        result = fn()
        took = time.perf_counter() - t0
        best = min(best, took)
        if times is not None:
            times.append(took)
    return best, result


class GcTimer:
    """Adds up the time the cyclic garbage collector runs while installed (gc.callbacks)."""

    def __init__(self) -> None:
        self.total = 0.0
        self._start = 0.0

    def _callback(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._start = time.perf_counter()
        else:
            self.total += time.perf_counter() - self._start

    def __enter__(self) -> GcTimer:
        gc.callbacks.append(self._callback)
        return self

    def __exit__(self, *exc: object) -> None:
        gc.callbacks.remove(self._callback)


def clear_caches() -> None:
    """Forget compiled regexes and paths, so every compile run pays for its own."""
    compile_regex.cache_clear()
    compile_path.cache_clear()
    forget_suggestions()  # did-you-mean answers are memoised too


# ---- (b) the hand-written single pass -------------------------------------------------------

_READ_PATH = re.compile(r"^/data/[a-z]+/\d+\.csv$")
_DEGREES = re.compile(r"\d+ C")


def _answer(output: Any) -> str:
    return output["choices"][0]["message"]["content"] if output is not None else ""


def hand_written(events: Sequence[Event]) -> list[bool]:
    """The 20 facts of MIXED_20, computed in one plain loop, as a user would write it."""
    n_search = n_weather = n_send = n_delete = 0
    paris = atlantis = hot = read_ok = False
    units_ok = True
    weather_calls: set[str] = set()
    tokens_in = tokens_out = steps = tool_calls = errors = responses = 0
    first_out: Any = None
    prev_out: Any = None
    last_out: Any = None
    first_at: str | None = None
    last_at: str | None = None
    for ev in events:
        at = ev.get("at")
        if at is not None:
            if first_at is None:
                first_at = at
            last_at = at
        kind = ev.get("type")
        if kind == "tool.call":
            tool_calls += 1
            name = ev.get("name")
            if name == "search_web":
                n_search += 1
            elif name == "get_weather":
                n_weather += 1
                args = ev.get("arguments") or {}
                city = args.get("city")
                if city == "Paris":
                    paris = True
                elif city == "Atlantis":
                    atlantis = True
                if args.get("units") not in ("metric", "imperial"):
                    units_ok = False
                weather_calls.add(ev["callId"])
            elif name == "read_file":
                if not read_ok:
                    path = (ev.get("arguments") or {}).get("path")
                    read_ok = isinstance(path, str) and _READ_PATH.search(path) is not None
            elif name == "send_email":
                n_send += 1
            elif name == "delete_database":
                n_delete += 1
        elif kind == "llm.response":
            responses += 1
            usage = ev["usage"]
            tokens_in += usage["promptTokens"]
            tokens_out += usage["completionTokens"]
            out = ev.get("output")
            if responses == 1:
                first_out = out
            prev_out = last_out
            last_out = out
        elif kind == "llm.request":
            steps += 1
        elif kind == "tool.result":
            if not hot and ev.get("callId") in weather_calls:
                temp = ev["output"].get("temp") if isinstance(ev.get("output"), dict) else None
                hot = isinstance(temp, int | float) and temp > 40
        elif kind == "agent.error":
            errors += 1
    answer = _answer(last_out)
    latency = 0.0
    if first_at is not None and last_at is not None:
        latency = (
            datetime.fromisoformat(last_at) - datetime.fromisoformat(first_at)
        ).total_seconds()
    return [
        n_search >= 1000,
        10 <= n_weather <= 20,
        n_delete == 0,
        n_send == 0,
        paris,
        atlantis,
        n_weather > 0 and units_ok,
        read_ok,
        hot,
        "weather" in answer,
        _DEGREES.search(answer) is not None,
        _answer(first_out).startswith("The"),
        _answer(prev_out).strip() != "",
        tokens_in + tokens_out <= 5_000_000,
        tokens_in > 1000,
        tokens_out < 100,
        steps >= 100,
        tool_calls <= 100_000,
        errors == 0,
        not errors > 1000 and (latency < 200 * 3600 or steps < 10),
    ]


# ---- (d) subprocesses -----------------------------------------------------------------------


def maxrss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def hwm_mb() -> float | None:
    """This process's own peak RSS (VmHWM, Linux), a cross-check of ru_maxrss."""
    try:
        for text in Path("/proc/self/status").read_text().splitlines():
            if text.startswith("VmHWM:"):
                return int(text.split()[1]) / 1024
    except OSError:
        pass
    return None


def child(mode: str, cassette: str) -> None:
    """One memory measurement in a fresh process; prints one JSON line."""
    t0 = time.perf_counter()
    out: dict[str, Any] = {"mode": mode}
    if mode == "list":
        loads = orjson.loads
        with paused_gc(), open(cassette, "rb") as f:
            events = [loads(line) for line in f]
        out["events"] = len(events) - 1
    else:
        program = evaldsl.compile(CHILD_SETS[mode])
        if mode != "baseline":
            result = program.check(cassette)
            out["statuses"] = Counter(result.statuses)
    out["seconds"] = time.perf_counter() - t0
    out["maxrss_mb"] = maxrss_mb()
    out["hwm_mb"] = hwm_mb()
    sys.stdout.write(orjson.dumps(out).decode() + "\n")


def _force_fork() -> None:
    """A `preexec_fn` makes subprocess fork instead of vfork/posix_spawn. Linux folds the
    high-water RSS of the memory a process execs away from into its ru_maxrss; under vfork
    that memory is the parent's, so the child would report the parent's peak."""


def run_child(mode: str, cassette: Path) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--child", mode, "--cassette", str(cassette)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False, preexec_fn=_force_fork)
    if done.returncode != 0:
        raise SystemExit(f"child {mode} failed:\n{done.stderr}")
    result: dict[str, Any] = orjson.loads(done.stdout.strip().splitlines()[-1])
    return result


# ---- the report -----------------------------------------------------------------------------

Row = tuple[str, str, str, str, str]


def verdict(ok: bool | None) -> str:
    return "" if ok is None else ("PASS" if ok else "MISS")


def print_table(rows: list[Row]) -> None:
    head: Row = ("metric", "value", "target", "ratio", "")
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(5)]
    line = "  ".join("-" * w for w in widths)
    print(line)
    print("  ".join(h.ljust(w) for h, w in zip(head, widths, strict=True)))
    print(line)
    for row in rows:
        cells = [row[0].ljust(widths[0])] + [
            c.rjust(w) for c, w in zip(row[1:], widths[1:], strict=True)
        ]
        print("  ".join(cells))
    print(line)


def machine() -> str:
    model = ""
    try:
        for text in Path("/proc/cpuinfo").read_text().splitlines():
            if text.startswith("model name"):
                model = text.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    versions = ", ".join(
        f"{pkg} {metadata.version(pkg)}" for pkg in ("lark", "orjson", "google-re2")
    )
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return (
        f"machine: nproc {len(os.sched_getaffinity(0))} ({model or platform.machine()}), "
        f"load average {load}, "
        f"Python {platform.python_version()} ({platform.python_implementation()}), "
        f"{platform.system()} {platform.release()}; {versions}"
    )


def bench_compile(eval_file: Path, n: int, runs: int, warm: float) -> list[Row]:
    """(a) statements compiled per second, and the stages."""
    text = eval_file.read_text(encoding="utf-8")
    path = str(eval_file)
    spread: list[float] = []
    t_all, program = best_of(
        runs, lambda: evaldsl.compile(text, path=path), clear_caches, times=spread
    )
    compiled = sum(len(c.assertions) for c in program.cases)
    assert compiled == n, f"compiled {compiled} assertions, generated {n}"
    del program
    gc_times: list[float] = []
    cpu_times: list[float] = []  # process time: what other processes on the machine skew less
    for _ in range(runs):  # how much of a compile is the cyclic GC's
        gc.collect()
        clear_caches()
        with GcTimer() as timer:
            t0, c0 = time.perf_counter(), time.process_time()
            kept = evaldsl.compile(text, path=path)
            took = time.perf_counter() - t0
            cpu_times.append(time.process_time() - c0)
        # freed after the timing, as `best_of` frees each result: freeing a program of
        # 10,000 statements is not compiling it (about a tenth of it)
        del kept
        gc_times.append(timer.total / took)
    gc_share = min(gc_times)
    # The stages one by one, with the GC paused around them as evaldsl.compile does.
    with paused_gc():
        t_parse, parsed = best_of(runs, lambda: parse(text, path))
        t_outline, _ = best_of(runs, lambda: outline(parsed.program, parsed.source))
        draft = read_eval(text, path, standalone=True).draft
        t_check, checked = best_of(
            runs, lambda: check_suite(draft, read=None, targets=False), clear_caches
        )
        t_compile, _ = best_of(runs, lambda: compile_suite(checked))
    # the same statements as one implicit case (no `case`/`cassette` lines)
    flat = "\n".join(x for x in text.splitlines() if not x.startswith(("case ", "cassette ")))
    t_flat, _ = best_of(runs, lambda: evaldsl.compile(flat, path=path), clear_caches)
    rate = n / t_all
    print(
        f"\n(a) compile: {n:,} statements in {t_all * 1000:.0f} ms, best of {runs} (runs: "
        + ", ".join(f"{t * 1000:.0f}" for t in spread)
        + " ms; regex and path caches cleared before each run; the Lark parser was built "
        f"beforehand: first compile in this process {warm * 1000:.0f} ms)"
    )
    print(
        f"    stages, each alone with the GC paused as compile pauses it: parse "
        f"{t_parse * 1000:.0f} ms, outline {t_outline * 1000:.0f} ms, check "
        f"{t_check * 1000:.0f} ms, compile {t_compile * 1000:.0f} ms; cyclic GC runs inside "
        f"evaldsl.compile(): {gc_share:.0%} of its time (gc.callbacks)"
    )
    print(f"    the same statements without case lines (one implicit case): {t_flat * 1000:.0f} ms")
    t_cpu = min(cpu_times)
    print(
        f"    process (CPU) time of a compile, best of {runs}: {t_cpu * 1000:.0f} ms, "
        f"{n / t_cpu:,.0f} statements/s (a loaded machine stretches wall time more)"
    )
    rows: list[Row] = [
        (
            "(a) compile: statements/s",
            f"{rate:,.0f}/s",
            ">= 50,000/s",
            f"{rate / 50000:.2f}",
            verdict(rate >= 50000),
        )
    ]
    stages = (("parse", t_parse), ("outline", t_outline), ("check", t_check))
    for label, t in (*stages, ("compile", t_compile)):
        rows.append((f"    {label} only", f"{n / t:,.0f}/s", "", f"{t / t_all:.0%} of all", ""))
    rows.append(("    (cyclic GC inside compile)", f"{gc_share:.0%}", "", "", ""))
    rows.append(
        (
            "    (info) process time",
            f"{n / t_cpu:,.0f}/s",
            ">= 50,000/s",
            f"{n / t_cpu / 50000:.2f}",
            "",
        )
    )
    rows.append(
        (
            "    (info) without case lines",
            f"{n / t_flat:,.0f}/s",
            ">= 50,000/s",
            f"{n / t_flat / 50000:.2f}",
            "",
        )
    )
    return rows


def load_events(cassette: Path, limit: int | None = None) -> list[Event]:
    """Every event of the cassette (or its first `limit`) in a list (GC paused, as
    evaldsl decodes)."""
    loads = orjson.loads
    with paused_gc(), open(cassette, "rb") as f:
        f.readline()  # the header
        return [loads(line) for line in itertools.islice(f, limit)]


def bench_memory(cassette: Path, mixed: evaldsl.Program, runs: int) -> tuple[list[Row], list[bool]]:
    """(b) the 20 assertions over decoded events vs the hand-written pass."""
    case = mixed.cases[0]
    t0 = time.perf_counter()
    events = load_events(cassette)
    gc.collect()
    gc.freeze()  # keep the decoded events out of later collections, for both contenders
    t_load = time.perf_counter() - t0
    try:
        t_dsl, result = best_of(runs, lambda: case.check(events))
        t_hand, facts = best_of(runs, lambda: hand_written(events))
    finally:
        gc.unfreeze()
    got = [v.status == "pass" for v in result.verdicts]
    print(
        f"\n(b) in memory: {len(events):,} events decoded beforehand in {t_load:.2f} s "
        f"(GC paused while decoding, then the list frozen out of the GC); 20 assertions, "
        f"best of {runs}:"
    )
    print(
        f"    evaldsl case.check(events) {t_dsl * 1000:.0f} ms, hand-written single pass "
        f"{t_hand * 1000:.0f} ms"
    )
    agree = got == facts
    if agree:
        print(
            f"    verdicts agree with the hand-written function: {sum(got)} pass, "
            f"{20 - sum(got)} fail"
        )
    else:
        print("    !!!!!!!! MISMATCH between evaldsl and the hand-written function !!!!!!!!")
    for line, v, want in zip(MIXED_20.splitlines(), result.verdicts, facts, strict=True):
        mark = "  " if (v.status == "pass") == want else "!!"
        print(f"    {mark} {v.status:<5} {line}")
    ratio = t_dsl / t_hand
    rows: list[Row] = [
        (
            "(b) 20 assertions in memory vs hand",
            f"{ratio:.2f}x",
            "<= 1.1x",
            f"{t_dsl * 1000:.0f}/{t_hand * 1000:.0f} ms",
            verdict(ratio <= 1.1),
        ),
        (
            "    verdicts agree with hand-written",
            "yes" if agree else "NO",
            "yes",
            "",
            verdict(agree),
        ),
    ]
    return rows, facts


def bench_file(cassette: Path, mixed: evaldsl.Program, facts: list[bool], runs: int) -> list[Row]:
    """(c) file to verdicts vs bare decoding of the same file."""
    loads = orjson.loads

    def bare_decode() -> int:
        count = 0
        with paused_gc(), open(cassette, "rb") as f:
            for line in f:
                loads(line)
                count += 1
        return count

    t_file, result = best_of(runs, lambda: mixed.check(cassette))
    little = evaldsl.compile(LITTLE_20)
    t_little, _ = best_of(runs, lambda: little.check(cassette))
    t_bare, lines = best_of(runs, bare_decode)
    agree = [v.status == "pass" for v in result.verdicts] == facts
    ratio = t_file / t_bare
    print(
        f"\n(c) file to verdicts, best of {runs}: program.check(path) {t_file * 1000:.0f} ms; "
        f"bare decode {t_bare * 1000:.0f} ms (`for line in open(path, 'rb'): orjson.loads(line)`, "
        f"{lines:,} lines, with the GC paused like evaldsl.gcpause.paused_gc); verdicts "
        + ("agree" if agree else "!!!!!!!! DIFFER from the hand-written function !!!!!!!!")
    )
    print(
        f"    the 20 little-needs assertions of (d) (counts, tokens, last answer): "
        f"{t_little * 1000:.0f} ms"
    )
    return [
        (
            "(c) file to verdicts vs bare decode",
            f"{ratio:.2f}x",
            "<= 0.8x",
            f"{t_file * 1000:.0f}/{t_bare * 1000:.0f} ms",
            verdict(ratio <= 0.8),
        ),
        ("    file verdicts agree", "yes" if agree else "NO", "yes", "", verdict(agree)),
        (
            "    (info) 20 little-needs assertions",
            f"{t_little / t_bare:.2f}x",
            "<= 0.8x",
            f"{t_little * 1000:.0f}/{t_bare * 1000:.0f} ms",
            "",
        ),
    ]


def bench_rss(cassette: Path, meta: dict[str, Any]) -> list[Row]:
    """(d) peak RSS of fresh processes: compile only, little needs, one tool's args, a list."""
    size_mb = cassette.stat().st_size / 2**20
    base = run_child("baseline", cassette)
    little = run_child("little", cassette)
    args = run_child("args", cassette)
    whole = run_child("list", cassette)
    kept = meta["tools"].get("search_web", 0)

    def hwm(r: dict[str, Any]) -> str:
        return "n/a" if r.get("hwm_mb") is None else f"{r['hwm_mb']:.0f}"

    print(
        f"\n(d) peak RSS of fresh processes: ru_maxrss (VmHWM {hwm(base)}/{hwm(little)}/"
        f"{hwm(args)}/{hwm(whole)} MiB as a cross-check); cassette {size_mb:.0f} MiB on disk:\n"
        f"    import + compile only: {base['maxrss_mb']:.0f} MiB\n"
        f"    20 little-needs assertions (counts, tokens, last answer): "
        f"{little['maxrss_mb']:.0f} MiB, {little['seconds']:.2f} s, {little['statuses']}\n"
        f"    16 of those + 4 reading every search_web call's arguments ({kept:,} calls kept): "
        f"{args['maxrss_mb']:.0f} MiB, {args['seconds']:.2f} s, {args['statuses']}\n"
        f"    all events decoded into a list (orjson, GC paused; no evaldsl): "
        f"{whole['maxrss_mb']:,.0f} MiB, {whole['seconds']:.2f} s"
    )
    grow_little = little["maxrss_mb"] - base["maxrss_mb"]
    grow_args = args["maxrss_mb"] - base["maxrss_mb"]
    per_call = (grow_args - grow_little) * 2**20 / kept if kept else 0.0
    in_list = max(whole["maxrss_mb"] - base["maxrss_mb"], 1.0)
    return [
        ("(d) peak RSS: import + compile", f"{base['maxrss_mb']:.0f} MiB", "", "", ""),
        (
            "    20 little-needs assertions",
            f"{grow_little:+.1f} MiB",
            f"<= 2% of file ({size_mb * 0.02:.0f} MiB)",
            f"{grow_little / size_mb:.1%} of file",
            verdict(grow_little <= size_mb * 0.02),
        ),
        (
            "    with every search_web call's args",
            f"{grow_args:+.1f} MiB",
            "<= 10% of list",
            f"{grow_args / in_list:.1%} of list",
            verdict(grow_args <= in_list * 0.10),
        ),
        ("      per kept call", f"{per_call:,.0f} B", "", "", ""),
        (
            "    all events in a list (no evaldsl)",
            f"{in_list:+,.0f} MiB",
            "",
            f"{in_list / size_mb:.1f}x file",
            "",
        ),
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--events", type=int, default=1_000_000, help="events in the cassette")
    parser.add_argument("--statements", type=int, default=10_000, help="statements to compile")
    parser.add_argument("--runs", type=int, default=3, help="best of how many runs")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--cassette", help=argparse.SUPPRESS)
    opts = parser.parse_args(argv)
    if opts.child:
        child(opts.child, opts.cassette)
        return 0

    started = time.perf_counter()
    runs: int = opts.runs
    print("evaldsl benchmark")
    print("command: " + shlex.join([sys.executable, *sys.argv]))
    print(machine())
    cassette, eval_file, meta = ensure_data(opts.events, opts.statements)
    print(
        f"cassette: {cassette} ({opts.events:,} events, {cassette.stat().st_size / 2**20:.0f} "
        "MiB): " + ", ".join(f"{k} {v:,}" for k, v in sorted(meta["types"].items()))
    )
    print("  tool calls: " + ", ".join(f"{k} {v:,}" for k, v in meta["tools"].items()))
    print(
        f"eval file: {eval_file} ({meta['statements']:,} statements, "
        f"{meta['distinct']:,} distinct statement texts, {meta['cases']} cases, each with a "
        "cassette line)"
    )
    t0 = time.perf_counter()
    evaldsl.compile("steps < 1")  # the first compile builds the Lark parser
    warm = time.perf_counter() - t0
    # (d) first, while this process is small: a child's ru_maxrss can never be below what
    # it inherited when it was forked
    rss_rows = bench_rss(cassette, meta)
    mixed = evaldsl.compile(MIXED_20)
    rows = bench_compile(eval_file, meta["statements"], runs, warm)
    memory_rows, facts = bench_memory(cassette, mixed, runs)
    rows += memory_rows
    gc.collect()
    rows += bench_file(cassette, mixed, facts, runs)
    rows += rss_rows
    print(
        "\nratio column: (a) value/target, stage share of the whole compile; (b), (c) "
        "evaldsl ms / baseline ms; (d) growth over import+compile"
    )
    print_table(rows)
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"total benchmark time {time.perf_counter() - started:.0f} s; load average now {load} "
        "(other processes on the machine skew every timing: compare ratios, rerun if high)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
