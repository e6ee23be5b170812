"""Limits instead of tracebacks: nesting, integers, numbers, timeouts, long lines, and
memory that grows with the input, not with its square (README, "Limits")."""

from __future__ import annotations

import doctest
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import evaldsl
from evaldsl.language import limits
from evaldsl.language.limits import MAX_NESTING, clip_value, json_depth
from evaldsl.runner.results import AssertionResult
from evaldsl.suites.build import check_text
from evaldsl.syntax.parser import parse
from tests.clitools import ROOT, run_evaldsl
from tests.fuzzing import examples

CASSETTE = ROOT / "tests/fixtures/traceplay/demo/cassette.example.jsonl"


def nested(n: int) -> str:
    return "[" * n + "]" * n


def codes(text: str) -> list[str]:
    try:
        evaldsl.compile(text)
    except evaldsl.EvalDslError as err:
        return [d.code for d in err.diagnostics]
    return []


def test_limits_doctests() -> None:
    assert doctest.testmod(limits).failed == 0


@pytest.mark.parametrize(
    ("text", "code"),
    [
        (f"output == {nested(MAX_NESTING + 1)}", "E105"),
        (f"output == {nested(5000)}", "E105"),
        ("output == " + "{a: " * 3000 + "1" + "}" * 3000, "E105"),
        ("not " * 5000 + 'answer contains "x"', "E105"),
        ("not " * 100 + f"output == {nested(100)}", "E105"),  # counted together
        ("(answer contains 'x' and (" * 300 + "tokens < 1" + "))" * 300, "E105"),
    ],
    ids=["list-201", "list-5000", "object-3000", "not-5000", "not-and-list", "and-300"],
)
def test_nesting_past_the_limit_is_a_diagnostic(text: str, code: str) -> None:
    assert codes(text) == [code]


@pytest.mark.parametrize(
    "text",
    [
        f"output == {nested(MAX_NESTING - 1)}",
        "not " * (MAX_NESTING - 1) + 'answer contains "x"',
        "not " * 99 + f"output == {nested(100)}",
        "(" * 5000 + 'answer contains "x"' + ")" * 5000,  # parentheses alone add nothing
        " and ".join(['answer contains "x"'] * 5000),  # a long chain is flat
    ],
)
def test_nesting_up_to_the_limit_compiles(text: str) -> None:
    assert evaldsl.compile(text).check([{"type": "llm.response", "output": "x"}]).verdicts


def test_one_statement_past_the_limit_leaves_the_others() -> None:
    result = parse(f'answer contains "a"; output == {nested(300)}; tokens < 5')
    assert [d.code for d in result.diagnostics] == ["E105"]
    assert len(result.program.statements) == 2


@pytest.mark.parametrize(
    "text",
    [
        "tool x called " + "9" * 5000 + " times",
        "tokens <= " + "9" * 20,
        "answer[" + "9" * 30 + '] contains "x"',
        "tool x called between 1 and 99999999999999999999 times",
        "answer cites tool x at least 99999999999999999999 values",
        "output[99999999999999999999] == 1",
        "tokens <= 1e400",
        "latency < " + "9" * 400 + "s",
        "cost <= $1" + "0" * 400,
    ],
)
def test_numbers_out_of_range_are_diagnostics(text: str) -> None:
    assert "E209" in codes(text)


def test_largest_integer_is_fine() -> None:
    assert codes(f"tokens <= {limits.MAX_INTEGER}") == []


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("timeout 0s", "more than 0 s"),
        ("timeout 0ms", "more than 0 s"),
        ("timeout -5s", "more than 0 s"),
        ("timeout 25h", "at most 86400 s"),
        ("timeout " + "9" * 400 + "s", "out of range"),
    ],
)
def test_timeouts_that_mean_nothing_are_errors(line: str, message: str) -> None:
    text = f'{line}\ncase "a"\n  run agent:main\n  answer contains "x"\n'
    found = [d for d in check_text(text, str(ROOT / "x.eval")) if d.is_error]
    assert any(message in d.message for d in found), found


@pytest.mark.parametrize(
    ("value", "message"),
    [("0s", "more than 0 s"), (0, "more than 0 s"), ("-1s", "more than 0 s"),
     (-3, "more than 0 s"), (".inf", "at most"), (100000, "at most"), ("0.0", "more than 0")],
)  # fmt: skip
def test_yaml_timeouts_that_mean_nothing_are_errors(value: object, message: str) -> None:
    text = textwrap.dedent(f"""\
        suite: s
        timeout: {value}
        cases:
          - name: a
            run: agent:main
            timeout: {value}
            expect: answer contains "x"
        """)
    found = [d for d in check_text(text, str(ROOT / "x.yaml")) if d.code == "E210"]
    assert len(found) == 2 and all(message in d.message for d in found), found


def test_clip_value_cuts_deep_values_without_recursion() -> None:
    deep: object = "leaf"
    for _ in range(100_000):
        deep = [deep]
    assert json_depth(deep, 10**6) == 100_000
    clipped = clip_value(deep, 3)
    assert clipped == [[["… (nested deeper than 3 levels)"]]]
    shallow = {"a": [1, {"b": 2}]}
    assert clip_value(shallow, 3) is shallow


def test_assertion_results_keep_a_bounded_depth() -> None:
    deep: object = 1
    for _ in range(2000):
        deep = {"k": deep}
    result = AssertionResult("t", "p", 1, 1, "fail", "m", actual=deep, expected=[deep])
    assert json_depth(result.actual, 10_000) == limits.REPORT_DEPTH
    json.dumps(result.to_json())  # no RecursionError


def clipped_by_spec(value: Any, depth: int) -> Any:
    """What `clip_value` must give, written plainly (recursive, for small test values):
    values counted in order, first child first; past the budget each is `…`."""
    left = [limits.REPORT_VALUES]
    items, chars = limits.REPORT_ITEMS, limits.REPORT_CHARS

    def walk(item: Any, level: int) -> Any:
        left[0] -= 1
        if left[0] < 0:
            return "…"
        if isinstance(item, str):
            return (
                item
                if len(item) <= chars
                else f"{item[:chars]}… ({len(item) - chars:,} more characters)"
            )
        if isinstance(item, list | dict) and level >= depth:
            return f"… (nested deeper than {depth} levels)"
        if isinstance(item, list):
            out: Any = [walk(x, level + 1) for x in item[:items]]
            if len(item) > items:
                out.append(f"… ({len(item) - items:,} more items)")
            return out
        if isinstance(item, dict):
            keys = list(item)[:items]
            out = {k: walk(item[k], level + 1) for k in keys}
            if len(item) > items:
                out[f"… ({len(item) - items:,} more keys)"] = "…"
            return out
        return item

    return walk(value, 0)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=9),
    lambda inner: (
        st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=3), inner, max_size=6)
    ),
    max_leaves=60,
)


@settings(max_examples=examples(300), deadline=None)
@given(JSON_VALUES, st.integers(1, 4), st.integers(1, 5), st.integers(1, 6), st.integers(1, 40))
def test_clip_value_cuts_long_values_as_the_plain_spec_says(
    value: Any, depth: int, items: int, chars: int, budget: int
) -> None:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(limits, "REPORT_ITEMS", items)
        patch.setattr(limits, "REPORT_CHARS", chars)
        patch.setattr(limits, "REPORT_VALUES", budget)
        expected = clipped_by_spec(value, depth)
        clipped = clip_value(value, depth)
    assert clipped == expected
    if expected == value:  # within every bound: the value itself, not a copy
        assert clipped is value


def test_a_found_value_as_large_as_the_run_is_cut_in_the_report() -> None:
    names = [f"tool_{k % 7}" for k in range(200_000)]
    answer = "x" * 50_000
    result = AssertionResult("t", "p", 1, 1, "fail", "m", actual=names, expected=answer)
    assert result.actual[: limits.REPORT_ITEMS] == names[: limits.REPORT_ITEMS]
    assert result.actual[limits.REPORT_ITEMS :] == [
        f"… ({200_000 - limits.REPORT_ITEMS:,} more items)"
    ]
    assert (
        result.expected
        == "x" * limits.REPORT_CHARS + f"… ({50_000 - limits.REPORT_CHARS:,} more characters)"
    )
    # 10,201 values (the list, 100 objects, 100 lists, 10,000 numbers), no list too long:
    # counted first child first, the 10,000th is the 99th list's first number; its other
    # 99 numbers and the 100th object are past the budget
    wide = [{"k": list(range(100))} for _ in range(100)]
    kept = AssertionResult("t", "p", 1, 1, "fail", "m", actual=wide).actual
    assert kept[:98] == wide[:98]
    assert kept[98] == {"k": [0] + ["…"] * 99} and kept[99] == "…"


def test_a_tools_found_value_in_the_json_report_is_cut(tmp_path: Path) -> None:
    lines: list[dict[str, Any]] = [{"cassette": "traceplay", "version": 1}]
    lines += [{"type": "tool.call", "name": f"t{k % 3}", "callId": str(k)} for k in range(250)]
    (tmp_path / "many.jsonl").write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    (tmp_path / "s.eval").write_text(
        'case "c"\n  cassette "many.jsonl"\n  tools in order [t2, t9]\n  tool t0 called 84 times\n'
    )
    proc = run_evaldsl("run", "-q", "--no-history", "--json", "r.json", "s.eval", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    first, second = json.loads((tmp_path / "r.json").read_text())["suites"][0]["cases"][0][
        "assertions"
    ]
    assert (first["status"], second["status"]) == ("fail", "pass")
    assert first["actual"] == [f"t{k % 3}" for k in range(100)] + ["… (150 more items)"]
    assert second["actual"] == 84


def write_deep_cassette(folder: Path, depth: int) -> Path:
    value: object = 1
    for _ in range(depth):
        value = [value]
    lines = [
        {"cassette": "traceplay", "version": 1},
        {"type": "llm.request", "at": "2025-01-01T00:00:00Z"},
        {"type": "llm.response", "output": {"deep": value}, "at": "2025-01-01T00:00:01Z"},
        {"type": "tool.call", "name": "t", "callId": "1", "arguments": {"a": value}},
        {"type": "tool.result", "callId": "1", "result": {"r": value}},
    ]
    path = folder / "deep.jsonl"
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 5000))  # only to write the fixture
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("depth", [500, 1020])
def test_deep_json_in_a_trace_never_kills_a_report(tmp_path: Path, depth: int) -> None:
    write_deep_cassette(tmp_path, depth)
    (tmp_path / "s.eval").write_text(
        textwrap.dedent("""\
        case "deep"
          cassette "deep.jsonl"
          answer contains "zzz"
          answer == "x"
          answer json $.deep == 1
          tool t args $.a == 2
          tool t args $..a == 2
          tool t result $.r == 3
          tool t args contains {a: 1}
          answer matches /zzz/
        """),
        encoding="utf-8",
    )
    done = run_evaldsl(
        "run", "s.eval", "--no-history", "--json", "r.json", "--junit", "r.xml",
        "--markdown", "r.md", cwd=tmp_path,
    )  # fmt: skip
    assert "Traceback" not in done.stderr + done.stdout
    assert done.returncode == 1
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    statuses = [a["status"] for a in report["suites"][0]["cases"][0]["assertions"]]
    assert statuses == ["fail"] * 8  # each read the deep values and said what it found
    assert (tmp_path / "r.xml").stat().st_size > 0 and (tmp_path / "r.md").stat().st_size > 0


def test_lone_surrogates_of_a_suite_reach_every_report_as_u_fffd(tmp_path: Path) -> None:
    """A suite's lone surrogate escapes (`case "bad \\udc80 name"`) were kept, and each
    report escaped them; they are read as U+FFFD now, as recordings read them, so every
    report is UTF-8 a strict reader takes, and the history the same names. (Reports still
    escape a lone half given through the API: test_reports, test_html_report.)"""
    (tmp_path / "s.eval").write_text(
        f'case "bad \\udc80 name"\n  cassette "{CASSETTE}"\n'
        '  answer == "\\ud800"\n  answer contains "\\udfff"\n',
        encoding="utf-8",
    )
    done = run_evaldsl(
        "run", "s.eval", "--history", "h.sqlite", "--json", "r.json", "--junit", "r.xml",
        "--markdown", "r.md", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert "not in the history" not in done.stderr  # recorded
    assert "bad \ufffd name" in done.stdout
    shown = run_evaldsl("diff", "--history", "h.sqlite", "1", "r.json", cwd=tmp_path)
    assert shown.returncode == 0 and "no changes" in shown.stdout  # the same names both ways
    report = orjson.loads((tmp_path / "r.json").read_bytes())
    (case,) = report["suites"][0]["cases"]
    assert case["name"] == "bad \ufffd name" and case["passed"] is False
    for name in ("r.xml", "r.md"):  # valid UTF-8 all through
        assert "bad \ufffd name" in (tmp_path / name).read_text(encoding="utf-8")


# ---- memory grows with the input --------------------------------------------------------

_PEAK = """
import sys, tracemalloc
from evaldsl.suites.build import load_suite
tracemalloc.start()
load_suite(sys.argv[1])
print(tracemalloc.get_traced_memory()[1])
"""


def peak_bytes(path: Path) -> int:
    """Peak traced memory of loading and checking one suite, in a fresh process."""
    done = subprocess.run(
        [sys.executable, "-c", _PEAK, str(path)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        timeout=300,
    )
    return int(done.stdout.split()[-1])


def yaml_suite(folder: Path, cases: int) -> Path:
    path = folder / f"big{cases}.yaml"
    with path.open("w", encoding="utf-8") as f:
        f.write("suite: big\ncases:\n")
        for i in range(cases):
            f.write(
                f"  - name: case {i}\n    cassette: {CASSETTE}\n    expect: |\n"
                f"      tool t{i} called\n      tokens <= {i}\n"
            )
    return path


def test_yaml_suite_memory_is_linear(tmp_path: Path) -> None:
    """Four times the cases take about four times the memory (each snippet once copied
    every line of the file: sixteen times, and 18.9 GB at 20,000 cases)."""
    small = peak_bytes(yaml_suite(tmp_path, 400))
    large = peak_bytes(yaml_suite(tmp_path, 1600))
    assert large < 7 * small, (small, large)


def test_many_statements_on_one_line_stay_small(tmp_path: Path) -> None:
    """10,000 failing `;`-joined statements on one line: each result once held its own
    copy of the 190 KB line (1.9 GB), and the console printed it 10,000 times."""
    line = "; ".join(f"tool t{i} called" for i in range(10_000))
    suite = tmp_path / "one-line.eval"
    suite.write_text(f'case "x"\n  cassette "{CASSETTE}"\n  {line}\n', encoding="utf-8")
    assert peak_bytes(suite) < 200 * len(line)
    done = run_evaldsl("run", str(suite), "--no-history", cwd=tmp_path)
    assert done.returncode == 1
    assert len(done.stdout) < 10_000 * 1_000  # a window of the line per failure, not all of it


def test_a_long_string_literal_takes_memory_in_proportion(tmp_path: Path) -> None:
    """A 4 MB string literal: the lexer's regex once kept a backtracking record per
    character (950 MB)."""
    suite = tmp_path / "long.eval"
    size = 4_000_000
    suite.write_text(
        f'case "x"\n  cassette "{CASSETTE}"\n  answer contains "{"a" * size}"\n'
        f"  answer matches /{'b' * size}/\n",
        encoding="utf-8",
    )
    assert peak_bytes(suite) < 20 * size


@pytest.mark.parametrize("text", ["tokens <= 1e999", "output.x > -1e999", "tokens <= 1E999"])
def test_infinity_as_evaldsl_writes_it_is_not_out_of_range(text: str) -> None:
    # `evaldsl convert` writes YAML's `.inf` as 1e999 (Infinity in JavaScript too)
    assert "E209" not in codes(text)
    assert "E209" in codes(text.replace("999", "400"))


@pytest.mark.parametrize(
    "text",
    [
        "tokens <= 1e-400",
        "output.x == -2.4e-324",
        "output == {a: [1E-999]}",
        f"latency > 0.{'0' * 400}1s",
        f"cost > $0.{'0' * 400}1",
        'answer judged "good" >= 1e-400',  # (read as `>= 0`: every score passed)
    ],
)
def test_a_number_that_underflows_to_zero_is_out_of_range(text: str) -> None:
    # (a comparison with 0 the user never wrote: float("1e-400") is 0.0)
    try:
        evaldsl.compile(text)
    except evaldsl.EvalDslError as err:
        (found,) = err.diagnostics
        assert found.code == "E209"
        assert "nearer 0 than a 64-bit float holds" in found.message
        assert "write 0, or a number whose size a double holds" in found.message
    else:
        raise AssertionError(f"{text!r} compiled")


@pytest.mark.parametrize(
    "text", ["tokens >= 0e-400", "output.x == -0.000e-999", "tokens >= 5e-324", "tokens >= 0"]
)
def test_zero_and_the_least_double_are_in_range(text: str) -> None:
    assert codes(text) == []


@pytest.mark.parametrize(
    ("value", "message", "runs"),
    [
        ("9" * 5000, "an integer of 5,000 digits is out of range", True),
        (nested(900), "values nested more than 200 levels deep", True),
        (nested(100_000), "exceeded maximum nesting depth", False),
    ],
)
def test_a_json_suite_past_pythons_json_limits_is_said_at_its_place(
    tmp_path: Path, value: str, message: str, runs: bool
) -> None:
    """A `.json` suite is first checked as strict JSON by Python's decoder: an integer of
    more than 4,300 digits raised its ValueError, and nesting 100,000 deep its
    RecursionError, as a traceback from `evaldsl check` and `run`. The YAML reader now
    says each at its place, as it does for a `.yaml` suite, and the other case runs
    (where the file can be read at all: 100,000 levels are past the YAML reader's)."""
    case = {"name": "one", "cassette": str(CASSETTE), "expect": "steps < 9"}
    text = json.dumps({"suite": "s", "cases": [{**case, "input": 0}, {**case, "name": "two"}]})
    suite = tmp_path / "s.json"
    suite.write_text(text.replace('"input": 0', f'"input": {value}'), encoding="utf-8")
    checked = run_evaldsl("check", str(suite))
    ran = run_evaldsl("run", "--no-history", str(suite))
    for done in (checked, ran):
        assert "Traceback" not in done.stderr, done.stderr[-800:]
        assert done.returncode == 1
        said = done.stdout + done.stderr
        assert "s.json:1:" in said and message in said, said[-800:]
    assert ("1 passed" in ran.stdout) == runs, ran.stdout[-800:]
