"""Any bytes given as DSL, YAML, JSON or JSONL give diagnostics or results, never an
exception: generated inputs (raw bytes, mangled valid ones, text built from the
language's own words and from JSON) through the same entry points the command uses."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

import evaldsl
from evaldsl.runner.core import run_suites
from evaldsl.runs.detect import load_run
from evaldsl.runs.model import RunError
from evaldsl.suites.build import load_suite
from tests.clitools import ROOT
from tests.fuzzing import lenient

SETTINGS = lenient(250)
CASSETTE = ROOT / "tests/fixtures/traceplay/demo/cassette.example.jsonl"

WORDS = [
    "tool", "search", "called", "times", "once", "answer", "contains", "matches", "json",
    "args", "result", "not", "and", "or", "every", "no", "tokens", "latency", "cost", "<=",
    "==", "!=", ">", "in", "order", "only", "is", "empty", "judged", "by", "cites", "at",
    "least", "case", "cassette", "state", "trace", "as", "otel", "run", "input", "each",
    "timeout", "suite", "tools", "memory", "output", "status", "nodes", "node", "visited",
    "$.a", "$..b", "$.a[?(@.b =~ \"(x+)+y\")]", "$[0]", "/a+/i", "/(a)\\1/", '"x"', "'y'",
    '"\\ud800"', "1", "-5", "99999999999999999999", "1e400", "2s", "0s", "$0.05", "[", "]",
    "{", "}", "(", ")", ",", ":", ";", "\n", "#", "\t", "\x00", "\ufeff", "é", "😀",
]  # fmt: skip

DSL = st.lists(st.sampled_from(WORDS), max_size=40).map(" ".join)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=20,
)


@st.composite
def mangled(draw: Any, base: bytes) -> bytes:
    """`base` with bytes changed, cut or inserted."""
    out = bytearray(base)
    for _ in range(draw(st.integers(0, 6))):
        if not out:
            break
        at = draw(st.integers(0, len(out) - 1))
        kind = draw(st.sampled_from(["flip", "cut", "insert"]))
        if kind == "flip":
            out[at] = draw(st.integers(0, 255))
        elif kind == "cut":
            del out[at : at + draw(st.integers(1, 20))]
        else:
            out[at:at] = draw(st.binary(max_size=8))
    return bytes(out)


SUITE_EVAL = (
    f'suite "s"\ntools search\ncase "a"\n  cassette "{CASSETTE}"\n'
    '  tool search called; answer contains "x"\n  answer json $.a == [1, {b: 2}]\n'
).encode()
SUITE_YAML = (
    f"suite: s\ncases:\n  - name: a\n    cassette: {CASSETTE}\n    expect: |\n"
    "      tool search called\n    assertions:\n      - {kind: tool.called, name: x, times: 2}\n"
).encode()


def write(folder: Path, name: str, data: bytes) -> Path:
    path = folder / name
    path.write_bytes(data)
    return path


def load_and_run(path: Path) -> None:
    """What `evaldsl run` does with a suite file: every problem a diagnostic or a verdict."""
    suite = load_suite(path)
    report = run_suites([suite])
    assert all(0.0 <= c.score <= 1.0 for c in report.cases)
    for diagnostic in suite.diagnostics:
        assert diagnostic.code and diagnostic.line >= 1


@SETTINGS
@given(data=st.binary(max_size=300) | mangled(SUITE_EVAL) | DSL.map(str.encode))
def test_any_bytes_as_an_eval_suite(tmp_path_factory: Any, data: bytes) -> None:
    load_and_run(write(tmp_path_factory.mktemp("dsl"), "s.eval", data))


@SETTINGS
@given(text=DSL | st.text(max_size=200))
def test_any_text_as_a_program(text: str) -> None:
    try:
        program = evaldsl.compile(text)
    except evaldsl.EvalDslError as err:
        assert err.diagnostics
        return
    try:
        program.check(CASSETTE)
    except ValueError as err:  # no statement: nothing would be checked (README, Python API)
        assert "this program has no assertions" in str(err)
        assert any(d.code == "W510" for d in program.diagnostics)


@SETTINGS
@given(
    data=st.binary(max_size=300)
    | mangled(SUITE_YAML)
    | JSON_VALUES.map(lambda v: json.dumps({"suite": "s", "cases": [v]}).encode()),
    kind=st.sampled_from(["yaml", "json"]),
)
def test_any_bytes_as_a_yaml_or_json_suite(tmp_path_factory: Any, data: bytes, kind: str) -> None:
    load_and_run(write(tmp_path_factory.mktemp("yaml"), f"s.{kind}", data))


TRACE = CASSETTE.read_bytes()
OTEL = json.dumps(
    {"resourceSpans": [{"scopeSpans": [{"spans": [{"name": "execute_tool search",
     "startTimeUnixNano": "1", "endTimeUnixNano": "2",
     "attributes": [{"key": "gen_ai.tool.name", "value": {"stringValue": "search"}}]}]}]}]}
).encode()  # fmt: skip


@SETTINGS
@given(
    data=st.binary(max_size=300)
    | mangled(TRACE)
    | mangled(OTEL)
    | JSON_VALUES.map(lambda v: json.dumps(v).encode())
    | st.lists(JSON_VALUES, max_size=5).map(
        lambda vs: b"\n".join(json.dumps(v).encode() for v in vs)
    ),
    name=st.sampled_from(["t.json", "t.jsonl", "t.sse", "t"]),
    fmt=st.sampled_from([None, "otel", "openai", "anthropic", "events", "state", "inspect"]),
)
def test_any_bytes_as_a_trace(tmp_path_factory: Any, data: bytes, name: str, fmt: Any) -> None:
    path = write(tmp_path_factory.mktemp("trace"), name, data)
    program = evaldsl.compile(
        'no tool x; tokens <= 10; answer contains "a"; latency < 1s; tool search args $.a == 1'
    )
    try:
        run = load_run(path, fmt)
    except RunError as err:
        assert err.message and err.line >= 1
        return
    result = program.check(run)  # an unreadable event is an error verdict, not an exception
    assert len(result.verdicts) == 5
