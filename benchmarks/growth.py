"""How reading a trace (or parsing a file) grows with its length, in layouts that stress it.

Run:  .venv/bin/python benchmarks/growth.py [--scale S] [--runs R] [--only LAYOUT]

Writes files of N/4, N/2 and N turns in each layout and reads each with
`evaldsl.load_run` (the `.eval` layouts: checks it with `evaldsl.diagnose`), the best of R:

- "ids" (N = 8,000): OTLP JSONL, each turn an LLM span whose output asks for a `search`
  call by one id and a tool span that runs it under another, so every call the model
  asked for waits for a result to the end;
- "by name" (N = 40,000): OTLP JSONL, every LLM span first (each asking for a `search`
  call without an id), then every tool span (without a call id): each tool span gives its
  result to the oldest `search` call still waiting, found by the tool's name;
- "name not text" (N = 4,000): an OpenAI request transcript, N calls and then N
  `function` messages whose `name` is a number (no call is found by it);
- "langsmith chain" (N = 8,000): LangSmith runs, each the parent of the next and each
  failing (a failure fails every run above it): the failures are counted where they
  start, once;
- "langsmith tree" (N = 480): one LangSmith run nested N deep in `child_runs`, each named
  by 20,000 characters;
- "anthropic deltas" (N = 200,000): one Anthropic stream message whose text comes in N
  `text_delta`s;
- "unclosed brackets" (N = 4,000): an `.eval` file of N lines, each leaving a bracket
  open (each line is its own broken statement, found after the line before it);
- "case errors" (N = 8,000): an `.eval` file of N cases, each with a syntax error (five
  kinds in turn), each filed under its case;
- "tools lines" (N = 32,000): an `.eval` file declaring its tools on N `tools` lines, one
  name each (the lines are one declaration);
- "no tool lines" (N = 16,000): an `.eval` file of N `no tool` lines, each naming one of
  the N tools its `tools` line declares;
- "misspelt names" (N = 2,000): an `.eval` file whose `tools` line declares N names of
  one shape (`tool_0042`), and N statements each naming one of them misspelt (an error
  with a did-you-mean each);
- "equal tests" (N = 4,000): N `args` tests of one tool's path, each an `== VALUE` or an
  `in [..]` of numbers, objects and lists, over a recording of N calls of that tool (half
  of them equal to some test's value), compiled and checked;
- "every thresholds" (N = 4,000): N `every` tests of one tool's path, each a bound (`>=`,
  `<`, `>`, `<=`) that every one of N calls passes, so none is decided before the end;
- "every regexes" (N = 4,000): N `every … matches /re/` tests of one tool's path, each a
  regex of its own that every one of N calls but the last passes;
- "every unequal" (N = 4,000): N `every … != VALUE` tests of one tool's path (numbers,
  texts, objects, lists) that each of N calls passes, but for the last call, which fails
  one of them;
- "contains objects" (N = 4,000): N `args contains {..}` tests (several keys, numbers,
  lists, nested objects) over N calls, every other one holding what a test asks;
- "edges and keys" (N = 4,000): N `args` tests of one tool, each a `starts with`, an
  `ends with`, a `has KEY` or a `contains NUMBER` of its own, over N calls, every other
  one passing the test of its number;
- "tools tests" (N = 16,000): N tests of the list of tools called (`contains`, `contains
  all/any [..]`, `in order [..]`) over N calls;
- "distinct paths" (N = 4,000): N `args` tests of one tool, each on a path of its own
  (`$.aI.b[*].c`), over N calls each holding one of those paths;
- "inspect samples" (N = 400): an Inspect AI log of N samples and a suite of one case
  naming it, which becomes N cases: expanded, checked and run as `evaldsl run` does
  (`load_suite`, `run_suites`), nothing kept from the reading before;
- "yaml cases" (N = 16,000): a YAML suite of N cases on one small cassette, each with
  traceplay objects and DSL lines, run by `evaldsl run -q` in a process of its own.

N is multiplied by S. A reader whose work per turn does not grow with the trace (with how
many calls wait, how deep the tree is, how long the text so far) reads N turns in about
4x the time of N/4; one that scans or copies what came before (or after), in about 16x. Printed:
the times, and the ratios to the shortest.
"""

from __future__ import annotations

import argparse
import itertools
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import evaldsl  # noqa: E402
from evaldsl.runner import run_suites  # noqa: E402
from evaldsl.runs import samplelogs  # noqa: E402
from evaldsl.suites import load_suite  # noqa: E402


def _attr(key: str, value: str) -> dict[str, Any]:
    return {"key": key, "value": {"stringValue": value}}


def write_turns(path: Path, turns: int) -> None:
    """`turns` lines of OTLP JSON: an LLM span asking for call `mI`, a tool span `tI`."""
    start = 1_700_000_000_000_000_000
    with path.open("w") as f:
        for i in range(turns):
            asked = [
                {
                    "role": "assistant",
                    "parts": [
                        {"type": "tool_call", "id": f"m{i}", "name": "search", "arguments": {}}
                    ],
                }
            ]
            at = start + i * 10_000
            llm = {
                "traceId": "0" * 32,
                "spanId": f"{2 * i:016x}",
                "name": "chat",
                "startTimeUnixNano": str(at),
                "endTimeUnixNano": str(at + 1000),
                "attributes": [
                    _attr("gen_ai.operation.name", "chat"),
                    _attr("gen_ai.output.messages", json.dumps(asked)),
                ],
            }
            tool = {
                "traceId": "0" * 32,
                "spanId": f"{2 * i + 1:016x}",
                "name": "execute_tool search",
                "startTimeUnixNano": str(at + 2000),
                "endTimeUnixNano": str(at + 3000),
                "attributes": [
                    _attr("gen_ai.operation.name", "execute_tool"),
                    _attr("gen_ai.tool.name", "search"),
                    _attr("gen_ai.tool.call.id", f"t{i}"),
                    _attr("gen_ai.tool.call.result", "ok"),
                ],
            }
            spans = [llm, tool]
            f.write(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}) + "\n")


def write_by_name(path: Path, turns: int) -> None:
    """`turns` LLM spans each asking for a `search` call without an id, then `turns` tool
    spans without a call id (one span a line of OTLP JSON)."""
    start = 1_700_000_000_000_000_000
    asked = [{"role": "assistant", "parts": [{"type": "tool_call", "name": "search"}]}]
    llm_attrs = [
        _attr("gen_ai.operation.name", "chat"),
        _attr("gen_ai.output.messages", json.dumps(asked)),
    ]
    tool_attrs = [
        _attr("gen_ai.operation.name", "execute_tool"),
        _attr("gen_ai.tool.name", "search"),
        _attr("gen_ai.tool.call.result", "ok"),
    ]
    with path.open("w") as f:
        for n, (name, attrs) in enumerate(
            [("chat", llm_attrs)] * turns + [("t", tool_attrs)] * turns
        ):
            at = start + n * 10_000
            span = {
                "traceId": "0" * 32,
                "spanId": f"{n:016x}",
                "name": name,
                "startTimeUnixNano": str(at),
                "endTimeUnixNano": str(at + 1000),
                "attributes": attrs,
            }
            f.write(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}) + "\n")


def write_chain(path: Path, turns: int) -> None:
    """`turns` failing LangSmith runs (a JSONL of runs), each the parent of the next."""
    with path.open("w") as f:
        for n in range(turns):
            run = {
                "id": f"r{n}",
                "name": f"step {n}",
                "run_type": "chain",
                "parent_run_id": f"r{n - 1}" if n else None,
                "inputs": {},
                "error": f"failed at step {n}",
            }
            f.write(json.dumps(run) + "\n")


def write_unnamed(path: Path, turns: int) -> None:
    """An OpenAI transcript: `turns` function calls, then `turns` function messages whose
    name is a number."""
    call = {"role": "assistant", "content": None, "function_call": {"name": "f"}}
    answer = {"role": "function", "name": 7, "content": "ok"}
    messages = [{"role": "system", "content": "s"}, *[call] * turns, *[answer] * turns]
    path.write_text(json.dumps({"model": "gpt-4o", "messages": messages}))


def write_tree(path: Path, turns: int) -> None:
    """One LangSmith run nested `turns` deep, each run named by 20,000 characters."""
    runs = [
        {"id": f"r{n}", "name": f"step {n} " + "x" * 20_000, "run_type": "chain", "inputs": {}}
        for n in range(turns)
    ]
    runs[-1] |= {"run_type": "tool", "outputs": {"output": "ok"}}
    for parent, child in itertools.pairwise(runs):
        parent["child_runs"] = [child]
    path.write_text(json.dumps(runs[0]))


def write_deltas(path: Path, turns: int) -> None:
    """One Anthropic stream message (JSONL) whose text comes in `turns` deltas."""
    delta = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta"}}
    delta["delta"]["text"] = "tok "
    events = [
        {"type": "message_start", "message": {"model": "claude", "usage": {"input_tokens": 9}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        *[delta] * turns,
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}},
        {"type": "message_stop"},
    ]
    path.write_text("\n".join(json.dumps(e) for e in events) + "\n")


def write_unclosed(path: Path, turns: int) -> None:
    """An `.eval` file of `turns` lines, each leaving a bracket open."""
    lines = (f"answer contains [{n}, {{a: {n}" for n in range(turns))
    path.write_text("\n".join(lines) + "\n")


def write_case_errors(path: Path, turns: int) -> None:
    """An `.eval` file of `turns` cases, each with a syntax error of its own kind (a
    diagnostic each, filed under its case)."""
    broken = ("tool search called 2", "answer == {a 1}", "tools a,", "steps <= 5 and", "not")
    lines = []
    for n in range(turns):
        lines += [f'case "c{n}"', '  trace "t.jsonl"', f"  {broken[n % len(broken)]}"]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_tools_lines(path: Path, turns: int) -> None:
    """An `.eval` file of `turns` `tools` lines, one name each, and a case."""
    lines = [f"tools t{n}" for n in range(turns)]
    path.write_text("\n".join([*lines, 'case "c"', "  tool t0 called"]) + "\n")


def write_no_tool_lines(path: Path, turns: int) -> None:
    """An `.eval` file: a `tools` line of `turns` names, then a `no tool` line for each."""
    names = [f"t{n}" for n in range(turns)]
    lines = [f"tools {', '.join(names)}", *(f"no tool {n}" for n in names)]
    path.write_text("\n".join([*lines, 'case "c"', "  tool t0 called"]) + "\n")


def write_misspelt(path: Path, turns: int) -> None:
    """An `.eval` file: a `tools` line of `turns` names of one shape, then a statement
    naming each of them misspelt."""
    names = [f"tool_{n:04d}" for n in range(turns)]
    lines = [f"tools {', '.join(names)}", 'case "c"', *(f"  tool {n}x called" for n in names)]
    path.write_text("\n".join(lines) + "\n")


def write_tests(path: Path, tests: Iterable[str], arguments: Iterable[Any]) -> None:
    """An `.eval` file of `tests`, and beside it (`.calls.jsonl`) a recording of calls of
    the tool `w`, one with each of `arguments`."""
    path.write_text("\n".join(tests) + "\n")
    calls = ({"type": "tool.call", "name": "w", "arguments": a} for a in arguments)
    path.with_suffix(".calls.jsonl").write_text("".join(json.dumps(c) + "\n" for c in calls))


def write_equal_tests(path: Path, turns: int) -> None:
    """An `.eval` file of `turns` equality tests on `$.n`, and beside it (`.calls.jsonl`)
    a recording of `turns` calls whose `n` has each test's kind of value."""
    forms = ("== {n}", 'in [{n}, "x{n}"]', "== {{a: {n}, b: [1, 2]}}", "in [[{n}], null]")
    values = (lambda n: n, lambda n: f"x{n}", lambda n: {"a": n, "b": [1, 2]}, lambda n: [n])
    tests = (f"tool w args $.n {forms[n % 4].format(n=n)}" for n in range(turns))
    write_tests(path, tests, ({"n": values[n % 4](n - n % 2)} for n in range(turns)))


def write_every_thresholds(path: Path, turns: int) -> None:
    """An `.eval` file of `turns` `every` bounds on `$.n` that each of `turns` calls (beside
    it, `.calls.jsonl`) passes."""
    forms = (">= -{i}", "< {far}", "> -{i}", "<= {far}")
    tests = (
        f"every tool w args $.n {forms[i % 4].format(i=i + 1, far=turns + i)}" for i in range(turns)
    )
    write_tests(path, tests, ({"n": n} for n in range(turns)))


def write_every_regexes(path: Path, turns: int) -> None:
    """An `.eval` file of `turns` `every` regexes on `$.q` that each of `turns` calls
    (beside it, `.calls.jsonl`) passes, but for the last call, which fails one in four."""
    forms = (r"/^item \d+|k{i}k/", "/ITEM|k{i}k/i", "/of the|k{i}k/", r"/\d+ of|k{i}k/")
    tests = (f"every tool w args $.q matches {forms[i % 4].format(i=i)}" for i in range(turns))
    texts = [f"item {n} of the list" for n in range(turns - 1)] + ["ITEM k3k"]
    write_tests(path, tests, ({"q": q} for q in texts))


def write_every_unequal(path: Path, turns: int) -> None:
    """An `.eval` file of `turns` `every … != VALUE` tests on `$.n` that each of `turns`
    calls (beside it, `.calls.jsonl`) passes, but for the last call, equal to one."""
    forms = ("{i}", '"x{i}"', "{{a: {i}}}", "[{i}, 1]")
    tests = (f"every tool w args $.n != {forms[i % 4].format(i=i)}" for i in range(turns))
    write_tests(path, tests, ({"n": f"call {n}" if n < turns - 1 else 4} for n in range(turns)))


def write_taking_turns(
    path: Path,
    turns: int,
    forms: tuple[str, ...],
    held: Callable[[int], Any],
    other: Callable[[int], Any],
) -> None:
    """An `.eval` file of `turns` tests of tool `w`'s arguments, each of `forms` in turn
    (`{i}`: the test's number; `{m}`: that modulo 10), and beside it (`.calls.jsonl`)
    `turns` calls: call n holds `held(n)` when n is even (what the test of its number
    asks), else `other(n)`."""
    tests = (f"tool w args {forms[i % len(forms)].format(i=i, m=i % 10)}" for i in range(turns))
    write_tests(path, tests, (other(n) if n % 2 else held(n) for n in range(turns)))


def write_contains_objects(path: Path, turns: int) -> None:
    """`args contains {..}` tests of several keys, numbers, lists and nested objects."""
    forms = (
        'contains {{q: "x{i}", limit: {m}}}',
        "contains {{limit: {i}}}",
        'contains {{q: "x{i}", tags: ["a", {i}]}}',
        "contains {{meta: {{id: {i}}}}}",
    )
    write_taking_turns(
        path,
        turns,
        forms,
        lambda n: {"q": f"x{n}", "limit": n % 10, "tags": ["a", n], "meta": {"id": n}},
        lambda n: {"q": f"y{n}", "limit": -1, "tags": [], "meta": {}},
    )


def write_edges_and_keys(path: Path, turns: int) -> None:
    """Tests of text edges, keys and list elements."""
    forms = (
        '$.q starts with "item {i} "',
        '$.q ends with " of {i}"',
        "has k{i}",
        "$.ids contains {i}",
    )
    write_taking_turns(
        path,
        turns,
        forms,
        lambda n: {"q": f"item {n} of {n}", f"k{n}": True, "ids": [n, -n - 1]},
        lambda n: {"q": f"other {n}", "ids": [-n - 1]},
    )


def write_tools_tests(path: Path, turns: int) -> None:
    """An `.eval` file of `turns` tests of `tools`, and beside it (`.calls.jsonl`) `turns`
    calls of `w`: the tests naming `w` alone, or any of two, pass."""
    forms = (
        "tools contains t{i}",
        "tools in order [w, t{i}]",
        "tools contains any [t{i}, w]",
        "tools contains all [w, t{i}]",
    )
    write_tests(path, (forms[i % 4].format(i=i) for i in range(turns)), ({} for _ in range(turns)))


def write_distinct_paths(path: Path, turns: int) -> None:
    """An `.eval` file of `turns` tests, each on a path of its own, and beside it
    (`.calls.jsonl`) `turns` calls, each holding one of those paths (every other one
    with the value its test asks)."""
    tests = (f'tool w args $.a{n}.b[*].c == "x{n}"' for n in range(turns))
    write_tests(path, tests, ({f"a{n}": {"b": [{"c": f"x{n - n % 2}"}]}} for n in range(turns)))


def write_samples(path: Path, turns: int) -> None:
    """An Inspect AI log of `turns` samples (the two of the test data's two-sample log in
    turns, each an id of its own), pretty-printed as Inspect AI writes it, and beside it
    (`.eval`) a suite of one case naming it."""
    data = ROOT / "tests" / "data" / "formats" / "inspect-two-samples.json"
    log = json.loads(data.read_text(encoding="utf-8"))
    two = log["samples"]
    log["samples"] = [{**two[n % 2], "id": f"s{n}"} for n in range(turns)]
    path.write_text(json.dumps(log, indent=2), encoding="utf-8")
    path.with_suffix(".eval").write_text(
        f'case "c"\n  cassette "{path.name}"\n  answer matches /^(Paris|Berlin)$/\n'
        "  tokens < 100\n",
        encoding="utf-8",
    )


def run_samples(path: Path) -> str:
    """Expand, check and run the suite beside `path` as `evaldsl run` does, with no log
    kept from an earlier reading; say how many cases passed."""
    samplelogs.forget()
    report = run_suites([load_suite(path.with_suffix(".eval"))])
    return f"{sum(c.passed for c in report.suites[0].cases):,} cases passed"


def write_yaml_cases(path: Path, turns: int) -> None:
    """A YAML suite (`.yaml`) of `turns` cases on one small cassette (the weather
    example's), each with traceplay objects and DSL lines under `expect:`."""
    cassette = ROOT / "examples" / "weather" / "cassettes" / "xiamen.jsonl"
    lines = ["suite: many", "cases:"]
    for n in range(turns):
        lines += [
            f"  - name: case {n}",
            f"    cassette: {cassette}",
            "    assertions:",
            "      - { kind: tool.called, name: get_weather, times: 1 }",
            "      - { kind: tool.args, name: get_weather, jsonPath: $.city, equals: Xiamen }",
            "      - { kind: answer.contains, text: C }",
            "    expect: [tokens <= 2000, 'answer matches /\\d+/', steps <= 5]",
        ]
    path.with_suffix(".yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")


def run_yaml_cases(path: Path) -> str:
    """`evaldsl run` of the suite beside `path`, a process of its own (what a process
    has collected before decides when the collector walks everything: a fresh one)."""
    command = [sys.executable, "-m", "evaldsl.tools.cli", "run", "-q", "--no-history"]
    done = subprocess.run(
        [*command, str(path.with_suffix(".yaml"))], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"evaldsl run failed: {done.stderr[-2000:]}")
    return done.stdout.strip().splitlines()[-2]


def check_equal_tests(path: Path) -> str:
    """Compile the tests and check them against their recording (`.calls.jsonl`); say
    how many pass."""
    result = evaldsl.compile(path.read_text()).check(path.with_suffix(".calls.jsonl"))
    return f"{result.statuses.count('pass'):,} passes"


def read_trace(fmt: str | None) -> Callable[[Path], str]:
    """Read a trace as `fmt` (`None`: detected); say how many calls it has."""

    def read(path: Path) -> str:
        run = evaldsl.load_run(str(path), fmt)
        return f"{sum(1 for e in run.events if e.get('type') == 'tool.call'):,} calls"

    return read


def diagnose_file(path: Path) -> str:
    """Parse and check an `.eval` file, as `evaldsl check` and the editor do; say how many
    diagnostics it has."""
    diagnostics = evaldsl.diagnose(path.read_text(), str(path))[3]
    return f"{len(diagnostics):,} diagnostics"


#: Each layout: its writer, its N, and how its file is read.
LAYOUTS: dict[str, tuple[Callable[[Path, int], None], int, Callable[[Path], str]]] = {
    "ids": (write_turns, 8_000, read_trace(None)),
    "by name": (write_by_name, 40_000, read_trace(None)),
    "name not text": (write_unnamed, 4_000, read_trace("openai")),
    "langsmith chain": (write_chain, 8_000, read_trace("langsmith")),
    "langsmith tree": (write_tree, 480, read_trace("langsmith")),
    "anthropic deltas": (write_deltas, 200_000, read_trace("anthropic")),
    "unclosed brackets": (write_unclosed, 4_000, diagnose_file),
    "case errors": (write_case_errors, 8_000, diagnose_file),
    "tools lines": (write_tools_lines, 32_000, diagnose_file),
    "no tool lines": (write_no_tool_lines, 16_000, diagnose_file),
    "misspelt names": (write_misspelt, 2_000, diagnose_file),
    "equal tests": (write_equal_tests, 4_000, check_equal_tests),
    "every thresholds": (write_every_thresholds, 4_000, check_equal_tests),
    "every regexes": (write_every_regexes, 4_000, check_equal_tests),
    "every unequal": (write_every_unequal, 4_000, check_equal_tests),
    "contains objects": (write_contains_objects, 4_000, check_equal_tests),
    "edges and keys": (write_edges_and_keys, 4_000, check_equal_tests),
    "tools tests": (write_tools_tests, 16_000, check_equal_tests),
    "distinct paths": (write_distinct_paths, 4_000, check_equal_tests),
    "inspect samples": (write_samples, 400, run_samples),
    "yaml cases": (write_yaml_cases, 16_000, run_yaml_cases),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--scale", type=float, default=1.0, help="each layout's N × this")
    parser.add_argument("--runs", type=int, default=3, help="readings of each file (best)")
    parser.add_argument(
        "--only", action="append", choices=sorted(LAYOUTS), help="this layout only (repeatable)"
    )
    opts = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        for layout, (write, most, read) in LAYOUTS.items():
            if opts.only and layout not in opts.only:
                continue
            most = max(4, int(most * opts.scale))
            sizes = [most // 4, most // 2, most]
            best: dict[int, float] = {}
            print(f"{layout}:")
            for turns in sizes:
                path = Path(folder) / f"growth-{turns}.jsonl"
                write(path, turns)
                times = []
                for _ in range(opts.runs):
                    started = time.perf_counter()
                    found = read(path)
                    times.append(time.perf_counter() - started)
                best[turns] = min(times)
                print(f"  {turns:>7,} turns ({found}): {best[turns] * 1000:8.0f} ms")
            shortest = best[sizes[0]]
            ratios = ", ".join(f"{best[t] / shortest:.1f}x" for t in sizes[1:])
            print(
                f"  time / time of {sizes[0]:,} turns: {ratios} "
                "(linear: 2x, 4x; quadratic: 4x, 16x)"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
