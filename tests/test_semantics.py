"""Data-driven tests of the language's semantics (docs/language.md §3-§6).

Each table in tests/cases/*.yaml (except runs.yaml, which names the runs) is a list of rows:

    - assert: 'tool get_weather called once'     # one statement of the language
      run: demo                                  # a run name from runs.yaml, or an inline run
      expect: pass                               # pass | fail | skip | error, or a diagnostic
                                                 #   code (E404: compiling must fail with it)
      message: 'called 1 time'                   # optional: a substring of the verdict message
      actual: 1                                  # optional: the verdict's `actual` (JSON-equal)
      judge: 'sunny'                             # optional: a fake judge that passes when the
                                                 #   judged text contains this substring
      xfail: 'why'                               # optional: a known bug in a file we don't own

or the same statement against several runs at once (`message` may be a mapping too):

    - assert: 'tools contains get_weather'
      expect: {demo: pass, multistep: fail, state: error}

A file may set `run:` at its top level as the default run of its rows. Every expected value
in the tables was worked out from docs/language.md and from how traceplay, cycgraph and
verydia behave, by hand.

The Python tests below cover what a table cannot say well: scores, crashes, the catastrophic
regex, and traceplay's mutation catalog applied to real fixtures.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import attrs
import pytest
import yaml

import evaldsl
from evaldsl import EvalDslError, Run
from evaldsl.api import Result
from evaldsl.judge.protocol import JudgeOutcome
from evaldsl.language.source import Span
from evaldsl.language.values import json_equal
from evaldsl.language.verdicts import Status, Verdict, combine, negate
from evaldsl.language.vocabulary import SUBJECTS
from evaldsl.predicates.registry import PREDICATES, predicate_key
from evaldsl.runs import coerce_run, load_run
from evaldsl.syntax.parser import parse

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "tests" / "cases"
FIXTURES = ROOT / "tests" / "fixtures" / "traceplay"
STATUSES = ("pass", "fail", "skip", "error")


def _load(path: Path) -> Any:
    with path.open(encoding="utf-8") as f:
        return yaml.safe_load(f)


RUNS: dict[str, Any] = _load(CASES / "runs.yaml")


# ---- runs ----------------------------------------------------------------------------------


def run_spec(run: Any) -> dict[str, Any]:
    if isinstance(run, str):
        if run not in RUNS:
            raise KeyError(f"unknown run {run!r} (runs.yaml names {', '.join(RUNS)})")
        return dict(RUNS[run])
    if not isinstance(run, dict):
        raise TypeError(f"a run is a name or a mapping, not {run!r}")
    return dict(run)


def build_run(run: Any, tmp: Path | None = None) -> Any:
    """What `Program.check` is given for a run spec (a path, a list, a dict or a `Run`)."""
    spec = run_spec(run)
    if "fixture" in spec:
        return str(FIXTURES / spec["fixture"])
    if "file" in spec:
        if "format" in spec:
            return load_run(ROOT / spec["file"], spec["format"])
        return str(ROOT / spec["file"])
    if "events" in spec:
        events = copy.deepcopy(spec["events"])
        if "output" in spec:
            return Run(events=events, output=spec["output"], format="events")
        return events
    if "state" in spec:
        return copy.deepcopy(spec["state"])
    if "output" in spec:
        output = copy.deepcopy(spec["output"])
        return Run(events=None, output=output, format="value", latency_ms=spec.get("latency_ms"))
    if "answers" in spec:
        return [{"type": "llm.response", "output": a} for a in copy.deepcopy(spec["answers"])]
    if "lines" in spec:
        assert tmp is not None, "a `lines` run needs a temporary folder"
        path = tmp / spec.get("name", "run.jsonl")
        path.write_text(spec["lines"], encoding="utf-8")
        return str(path)
    raise ValueError(f"cannot build a run from {spec!r}")


def adapter_of(run: Any) -> str:
    """Which adapter reads a run spec: traceplay, verydia, events, cycgraph, value, …"""
    spec = run_spec(run)
    if "lines" in spec:
        return "file"
    built = build_run(spec)
    if isinstance(built, str):
        return load_run(built).format
    return coerce_run(built).format


# ---- rows ----------------------------------------------------------------------------------


@attrs.frozen
class Row:
    file: str
    number: int
    text: str
    run: Any
    run_name: str
    expect: str
    message: str | None = None
    actual: Any = attrs.field(default=None)
    has_actual: bool = False
    judge: str | None = None
    xfail: str | None = None

    @property
    def id(self) -> str:
        return f"{self.file}:{self.number}:{self.text}@{self.run_name}"


def _rows_of(path: Path) -> Iterator[Row]:
    doc = _load(path)
    default_run = doc.get("run")
    for number, raw in enumerate(doc["cases"], 1):
        text = raw["assert"]
        expect = raw["expect"]
        pairs: list[tuple[Any, str, Any]]
        if isinstance(expect, dict):
            pairs = [(name, name, status) for name, status in expect.items()]
        else:
            run = raw.get("run", default_run)
            assert run is not None, f"{path.name} row {number}: no run"
            name = run if isinstance(run, str) else "inline"
            pairs = [(run, name, expect)]
        for run, name, status in pairs:
            message = raw.get("message")
            if isinstance(message, dict):
                message = message.get(name)
            actual = raw.get("actual")
            has_actual = "actual" in raw
            if isinstance(actual, dict) and "by_run" in actual:
                has_actual = name in actual["by_run"]
                actual = actual["by_run"].get(name)
            yield Row(
                file=path.stem,
                number=number,
                text=text,
                run=run,
                run_name=name,
                expect=str(status),
                message=message,
                actual=actual,
                has_actual=has_actual,
                judge=raw.get("judge"),
                xfail=raw.get("xfail"),
            )


def all_rows() -> list[Row]:
    rows: list[Row] = []
    for path in sorted(CASES.glob("*.yaml")):
        if path.name != "runs.yaml":
            rows.extend(_rows_of(path))
    return rows


ROWS = all_rows()


def _param(row: Row) -> Any:
    marks = [pytest.mark.xfail(reason=row.xfail, strict=True)] if row.xfail else []
    return pytest.param(row, id=row.id, marks=marks)


class SubstringJudge:
    """A fake judge: passes when the judged text contains `needle` (so the test sees which
    text reached the judge), and records what it was asked."""

    def __init__(self, needle: str) -> None:
        self.needle = needle
        self.seen: list[str] = []
        self.asked: list[tuple[str, str | None, float | None]] = []

    def __call__(
        self, text: str, rubric: str, *, model: str | None, threshold: float | None
    ) -> JudgeOutcome:
        self.seen.append(text)
        self.asked.append((rubric, model, threshold))
        ok = self.needle in text
        return JudgeOutcome("pass" if ok else "fail", f"judge saw {text!r}", 1.0 if ok else 0.0)


def check_row(row: Row, tmp: Path) -> Result | None:
    judge = SubstringJudge(row.judge) if row.judge is not None else None
    if row.expect not in STATUSES:
        with pytest.raises(EvalDslError) as raised:
            evaldsl.compile(row.text)
        codes = [d.code for d in raised.value.diagnostics]
        assert row.expect in codes, f"expected diagnostic {row.expect}, got {raised.value}"
        if row.message is not None:
            assert row.message in str(raised.value)
        return None
    program = evaldsl.compile(row.text, judge=judge)
    result = program.check(build_run(row.run, tmp))
    assert len(result.verdicts) == 1, "one statement per row"
    verdict = result.verdicts[0]
    assert verdict.status == row.expect, f"{verdict.status}: {verdict.message}"
    if row.message is not None:
        assert row.message in verdict.message
    if row.has_actual:
        assert json_equal(verdict.actual, row.actual), f"actual was {verdict.actual!r}"
    return result


@pytest.mark.parametrize("row", [_param(r) for r in ROWS])
def test_row(row: Row, tmp_path: Path) -> None:
    check_row(row, tmp_path)


# ---- the tables themselves --------------------------------------------------------------


def test_tables_are_big_enough() -> None:
    assert len(ROWS) >= 300


def _predicate_keys(text: str) -> set[str]:
    """The vocabulary keys of the predicates a statement uses."""
    from evaldsl.language import ast

    keys: set[str] = set()
    parsed = parse(text)
    stack: list[Any] = list(parsed.program.statements)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Check):
            keys.add(predicate_key(node.predicate))
            if isinstance(node.predicate, ast.CallTest):
                keys.add(predicate_key(node.predicate.test))
        elif isinstance(node, ast.NoTool):
            keys.add("never_called")
        elif isinstance(node, ast.NodeVisited):
            keys.add("contains")
        elif isinstance(node, ast.Not):
            stack.append(node.operand)
        elif isinstance(node, ast.And | ast.Or):
            stack.extend(node.operands)
    return keys


_KIND_OF_ADAPTER = {"traceplay": "trace", "verydia": "trace", "events": "trace"}
_KIND_OF_ADAPTER |= {"cycgraph": "state", "value": "value"}


def _applies(predicate: str, kind: str) -> bool:
    spec = PREDICATES[predicate]
    if predicate == "within_budget":
        return kind == "state"
    if spec.applies_to == frozenset({"Calls"}):
        return kind == "trace"
    return any(kind in s.sources and s.type in spec.applies_to for s in SUBJECTS.values())


def test_every_predicate_meets_every_adapter() -> None:
    """§4 × adapters: each predicate is evaluated (pass or fail) on each adapter it applies to
    (traceplay cassette, verydia events, plain events, cycgraph state, value), and each
    predicate both passes and fails somewhere."""
    adapters: dict[Any, str] = {}
    seen: dict[tuple[str, str], set[str]] = {}
    for row in ROWS:
        if row.expect not in ("pass", "fail") or row.xfail:
            continue
        key = repr(row.run)
        if key not in adapters:
            adapters[key] = adapter_of(row.run)
        for predicate in _predicate_keys(row.text):
            seen.setdefault((predicate, adapters[key]), set()).add(row.expect)
    missing = []
    for predicate in PREDICATES:
        for adapter, kind in _KIND_OF_ADAPTER.items():
            if _applies(predicate, kind) and (predicate, adapter) not in seen:
                missing.append(f"{predicate} on {adapter}")
        outcomes = set().union(*(v for (p, _), v in seen.items() if p == predicate))
        if outcomes != {"pass", "fail"}:
            missing.append(f"{predicate} never {({'pass', 'fail'} - outcomes).pop()}s")
    assert not missing, "uncovered: " + "; ".join(missing)


def test_fake_judge_sees_the_answer_text(tmp_path: Path) -> None:
    judge = SubstringJudge("sunny")
    program = evaldsl.compile('answer judged "mentions the weather"', judge=judge)
    result = program.check(build_run("demo", tmp_path))
    assert result.statuses == ["pass"]
    assert judge.seen == ["Xiamen is sunny, 31C."]
    assert judge.asked == [("mentions the weather", None, None)]


def test_judge_gets_rubric_threshold_and_model() -> None:
    judge = SubstringJudge("Ada")
    text = 'answer judged "names the patient" >= 0.7 by "gpt-4o"; answer[1] judged "x"'
    result = evaldsl.compile(text, judge=judge).check(build_run("verydia"))
    assert result.statuses == ["pass", "fail"]
    assert judge.seen == ["Ada (36) is booked for 09:00.", "Looking up patient 12."]
    assert judge.asked == [("names the patient", "gpt-4o", 0.7), ("x", None, None)]


# ---- scores (§5) -----------------------------------------------------------------------------


def scored(text: str, run: Any, tmp: Path | None = None) -> Result:
    return evaldsl.compile(text).check(build_run(run, tmp))


def test_score_counts_pass_fail_error_not_skip() -> None:
    # pass, fail, error (status on a trace), skip (judge without a key)
    result = scored(
        'tool get_weather called; answer contains "rainy"; status == completed; '
        'answer judged "polite"',
        "demo",
    )
    assert result.statuses == ["pass", "fail", "error", "skip"]
    assert result.score == pytest.approx(1 / 3)
    assert result.passed is False
    assert result.error is None


def test_score_two_of_three() -> None:
    result = scored("memory has result; memory has count; memory has missing", "seed_state")
    assert result.statuses == ["pass", "pass", "fail"]
    assert result.score == pytest.approx(2 / 3)
    assert round(result.score, 4) == 0.6667  # cycgraph's runner test


def test_score_one_pass_one_fail_is_half() -> None:
    result = scored("status == completed; status == failed", "seed_state")
    assert result.score == 0.5
    assert not result.passed


def test_all_pass_scores_one() -> None:
    result = scored("status == completed; node middle visited; tokens within budget", "seed_state")
    assert result.statuses == ["pass", "pass", "pass"]
    assert result.score == 1.0
    assert result.passed


@pytest.mark.parametrize(
    ("state", "statuses", "said"),
    [
        # a state with no counters did not count: never 0 tokens, which passed `< 100`
        ({}, ["error", "error", "pass"], "the state records no `total_tokens_used`"),
        # cycgraph fails `undefined <= budget`; the count is unknown: an error, never a pass
        ({"max_token_budget": 100}, ["error", "error", "error"], "a budget of 100 tokens"),
        ({"total_tokens_used": 40, "max_token_budget": 100}, ["pass", "error", "pass"], None),
        ({"total_tokens_used": 0, "total_input_tokens": 0}, ["pass", "pass", "pass"], None),
    ],
)
def test_a_states_uncounted_tokens_are_unknown(
    state: dict[str, Any], statuses: list[str], said: str | None
) -> None:
    run = {"status": "completed", "memory": {}, **state}
    result = evaldsl.compile("tokens < 100; input tokens < 100; tokens within budget").check(run)
    assert result.statuses == statuses
    if said is not None:
        assert any(said in v.message for v in result.verdicts), result.verdicts


def test_only_skips_score_one_and_pass() -> None:
    result = scored('answer judged "polite"; answer judged "short"', "demo")
    assert result.statuses == ["skip", "skip"]
    assert result.score == 1.0
    assert result.passed


def test_error_alone_fails_the_case() -> None:
    result = scored("status == completed", "demo")
    assert result.statuses == ["error"]
    assert result.score == 0.0
    assert not result.passed


def test_no_assertions_scores_one() -> None:
    # (the case's rule, as a suite runs it; `Program.check` refuses such a program)
    result = evaldsl.compile("").cases[0].check(build_run("demo"))
    assert result.verdicts == ()
    assert result.score == 1.0
    assert result.passed


CORRUPT = (
    '{"cassette":"traceplay","version":1,"recordedAt":"2026-09-01T00:00:00.000Z"}\n'
    '{"id":"e1","seq":0,"type":"tool.call","name":"get_weather","arguments":{}}\n'
    '{"id":"e2","seq":1,"type":"llm.response","output":"sunny"\n'
    '{"id":"e3","seq":2,"type":"llm.request"}\n'
)


def test_corrupted_cassette_crashes_the_case(tmp_path: Path) -> None:
    run = {"lines": CORRUPT, "name": "broken.jsonl"}
    result = scored('tool get_weather called; answer contains "sunny"', run, tmp_path)
    assert result.statuses == ["error", "error"]
    assert result.error is not None
    assert "line 3" in result.error
    assert all(v.message == result.error for v in result.verdicts)
    assert result.score == 0.0
    assert not result.passed


def test_missing_run_file_crashes_the_case(tmp_path: Path) -> None:
    result = evaldsl.compile("tool search called").check(str(tmp_path / "nope.jsonl"))
    assert result.statuses == ["error"]
    assert result.error is not None and "not found" in result.error
    assert result.score == 0.0


def test_crash_score_is_zero_even_when_nothing_would_count(tmp_path: Path) -> None:
    run = {"lines": CORRUPT, "name": "broken.jsonl"}
    result = scored('answer judged "x"', run, tmp_path)
    assert result.statuses == ["error"]
    assert result.score == 0.0


# ---- regexes that must not hang (§6) ---------------------------------------------------------


def test_catastrophic_regex_returns_a_verdict() -> None:
    text = "a" * 30_000 + "!"
    program = evaldsl.compile("answer matches /^(a+)+$/; answer matches /^(a|aa)+!$/")
    result = program.check(Run(events=None, output=text))
    # `^(a+)+$` cannot match (the text ends in "!"); `^(a|aa)+!$` does
    assert result.statuses == ["fail", "pass"]


def test_catastrophic_regex_on_tool_arguments() -> None:
    events = [{"type": "tool.call", "name": "t", "arguments": {"q": "x" * 30_000 + "y"}}]
    program = evaldsl.compile(r"tool t args $.q matches /^(x+x+)+$/")
    assert program.check(events).statuses == ["fail"]


# ---- traceplay's mutation catalog as negative tests ----------------------------------------


def fixture_events(name: str) -> list[dict[str, Any]]:
    run = load_run(FIXTURES / RUNS[name]["fixture"])
    assert run.events is not None
    return [copy.deepcopy(e) for e in run.events]


def statuses(text: str, events: list[dict[str, Any]]) -> list[str]:
    return list(evaldsl.compile(text).check(events).statuses)


def _final_response(events: list[dict[str, Any]]) -> dict[str, Any]:
    return [e for e in events if e["type"] == "llm.response"][-1]


@pytest.mark.parametrize(
    ("fixture", "text"),
    [
        ("demo", 'answer contains "sunny"'),
        ("multi_tool", 'answer contains "BTC"'),
        ("streaming", 'answer contains "keystrokes"'),
        ("anthropic", 'answer contains "entanglement"'),
        ("structured", 'answer json $.ticket == "TC-4821"'),
        ("multistep", 'answer contains "shipped"'),
    ],
)
def test_mutation_replaced_answer(fixture: str, text: str) -> None:
    events = fixture_events(fixture)
    assert statuses(text, events) == ["pass"]
    _final_response(events)["output"] = "__TRACEPLAY_MUTATED_ANSWER__"
    assert statuses(text, events) == ["fail"]


@pytest.mark.parametrize("fixture", ["demo", "multi_tool", "streaming", "anthropic"])
def test_mutation_emptied_answer(fixture: str) -> None:
    events = fixture_events(fixture)
    assert statuses("answer not empty", events) == ["pass"]
    _final_response(events)["output"] = ""
    assert statuses("answer not empty; answer is empty", events) == ["fail", "pass"]


@pytest.mark.parametrize(
    ("fixture", "tool", "text"),
    [
        ("demo", "get_weather", 'tool get_weather result contains "sunny"'),
        ("multi_tool", "get_crypto_price", "tools in order [get_weather, get_crypto_price]"),
        ("multistep", "search", 'tool search args $.topic == "release"'),
        ("structured", "get_ticket", "answer cites tool get_ticket at least 2 values"),
    ],
)
def test_mutation_dropped_tool_call(fixture: str, tool: str, text: str) -> None:
    events = fixture_events(fixture)
    assert statuses(f"tool {tool} called; {text}", events) == ["pass", "pass"]
    call = next(e for e in events if e["type"] == "tool.call" and e["name"] == tool)
    link = call.get("callId", call.get("id"))
    events = [
        e
        for e in events
        if e is not call and not (e["type"] == "tool.result" and e.get("callId") == link)
    ]
    assert statuses(f"tool {tool} called; {text}", events) == ["fail", "fail"]


@pytest.mark.parametrize("fixture", ["demo", "multi_tool", "multistep", "structured"])
def test_mutation_injected_forbidden_tool(fixture: str) -> None:
    text = "no tool execute_shell; tool execute_shell never called; tools only [{}]"
    events = fixture_events(fixture)
    names = sorted({e["name"] for e in events if e["type"] == "tool.call"})
    text = text.format(", ".join(names))
    assert statuses(text, events) == ["pass", "pass", "pass"]
    events.insert(1, {"type": "tool.call", "name": "execute_shell", "arguments": {"cmd": "rm"}})
    assert statuses(text, events) == ["fail", "fail", "fail"]


def _perturb(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int | float):
        return value + 1
    if isinstance(value, str):
        return value + "__mutated"
    if isinstance(value, list):
        return [_perturb(v) for v in value]
    if isinstance(value, dict):
        return {k: _perturb(v) for k, v in value.items()}
    return value


@pytest.mark.parametrize(
    ("fixture", "text"),
    [
        ("demo", 'tool get_weather args $.city == "Xiamen"'),
        ("demo", 'tool get_weather args == {city: "Xiamen"}'),
        ("multi_tool", 'tool get_crypto_price args contains {symbol: "BTC"}'),
        ("multistep", "tool search args $.topic matches /^release$/"),
        ("structured", 'tool get_ticket args $.id in ["TC-4821"]'),
    ],
)
def test_mutation_perturbed_arguments(fixture: str, text: str) -> None:
    events = fixture_events(fixture)
    assert statuses(text, events) == ["pass"]
    for e in events:
        if e["type"] == "tool.call":
            e["arguments"] = _perturb(e["arguments"])
    assert statuses(text, events) == ["fail"]


def test_perturb_flips_every_primitive() -> None:
    args = {"n": 1, "x": 1.5, "b": True, "s": "a", "l": [False], "z": None}
    assert _perturb(args) == {
        "n": 2,
        "x": 2.5,
        "b": False,
        "s": "a__mutated",
        "l": [True],
        "z": None,
    }
    events = [{"type": "tool.call", "name": "t", "arguments": _perturb(args)}]
    assert statuses("tool t args $.b == true; tool t args $.l[0] == true", events) == [
        "fail",
        "pass",
    ]


@pytest.mark.parametrize(
    ("fixture", "budget"),
    [("demo", 500), ("multi_tool", 500), ("multistep", 2000), ("streaming", 100)],
)
def test_mutation_usage_times_100(fixture: str, budget: int) -> None:
    events = fixture_events(fixture)
    text = f"tokens <= {budget}"
    assert statuses(text, events) == ["pass"]
    for e in events:
        if e["type"] == "llm.response" and isinstance(e.get("usage"), dict):
            e["usage"] = {k: v * 100 for k, v in e["usage"].items()}
    assert statuses(text, events) == ["fail"]


@pytest.mark.parametrize(
    ("fixture", "steps"), [("demo", 1), ("multi_tool", 1), ("multistep", 3), ("anthropic", 1)]
)
def test_mutation_extra_llm_pair(fixture: str, steps: int) -> None:
    events = fixture_events(fixture)
    text = (
        f"steps <= {steps}; steps == {steps}; answer[{steps + 1}] is empty; "
        'not answer contains "an extra turn"'
    )
    assert statuses(text, events) == ["pass", "pass", "pass", "pass"]
    events += [
        {"type": "llm.request", "model": "demo", "messages": []},
        {"type": "llm.response", "status": 200, "output": "an extra turn"},
    ]
    assert statuses(text, events) == ["fail", "fail", "fail", "fail"]


# ---- verdict combination (§5), exhaustively over the four statuses ---------------------------

# Statements with a known verdict on the demo cassette, one per status.
BY_STATUS = {
    "pass": 'answer contains "sunny"',
    "fail": 'answer contains "rainy"',
    "skip": 'answer judged "polite"',
    "error": "status == completed",
}
KLEENE_AND = {"fail": 0, "error": 1, "skip": 2, "pass": 3}  # the first present wins
KLEENE_OR = {"pass": 0, "error": 1, "skip": 2, "fail": 3}


@pytest.mark.parametrize("a", STATUSES)
@pytest.mark.parametrize("b", STATUSES)
def test_kleene_and_or(a: str, b: str) -> None:
    text = f"({BY_STATUS[a]}) and ({BY_STATUS[b]}); ({BY_STATUS[a]}) or ({BY_STATUS[b]})"
    got = evaldsl.compile(text).check(build_run("demo")).statuses
    assert got == [min(a, b, key=KLEENE_AND.get), min(a, b, key=KLEENE_OR.get)]


@pytest.mark.parametrize("a", STATUSES)
def test_not(a: str) -> None:
    got = evaldsl.compile(f"not ({BY_STATUS[a]})").check(build_run("demo")).statuses
    assert got == [{"pass": "fail", "fail": "pass"}.get(a, a)]


def reference_negate(inner: Verdict, span: Span) -> Verdict:
    """`verdicts.negate` as first written: the reference of the one that is used."""
    flipped = {"pass": "fail", "fail": "pass"}.get(inner.status, inner.status)
    if flipped == "fail":
        message = f"expected the opposite, but: {inner.message}"
    elif flipped == "pass":
        message = f"as expected, not: {inner.message}"
    else:
        message = inner.message
    return Verdict(flipped, message, span, inner.actual, inner.expected, (inner,))  # type: ignore[arg-type]


def reference_combine(kind: Literal["and", "or"], parts: list[Verdict], span: Span) -> Verdict:
    """`verdicts.combine` as first written (a set of statuses, generators)."""
    statuses = {p.status for p in parts}
    decisive = "fail" if kind == "and" else "pass"
    if decisive in statuses:
        status = decisive
    elif "error" in statuses:
        status = "error"
    elif "skip" in statuses:
        status = "skip"
    else:
        status = "pass" if kind == "and" else "fail"
    chosen = [p for p in parts if p.status == status] or list(parts)
    if (status == "pass" and kind == "and") or (status == "fail" and kind == "or"):
        message = f" {kind} ".join(p.message for p in parts)
    else:
        # (a cause is said once however many parts share it)
        message = "; ".join(
            sorted({p.message for p in chosen}, key=[p.message for p in chosen].index)
        )
    return Verdict(status, message, span, children=tuple(parts))


def verdict_fields(v: Verdict) -> tuple[Any, ...]:
    return tuple(getattr(v, f.name) for f in attrs.fields(Verdict))


@pytest.mark.parametrize("kind", ["and", "or"])
@pytest.mark.parametrize("count", [0, 1, 2, 3])
def test_combine_and_negate_are_the_reference_for_every_status(
    kind: Literal["and", "or"], count: int
) -> None:
    # every status of every part, in every order: status, message, children, all the same
    span = Span(3, 9)
    every: tuple[Status, ...] = ("pass", "fail", "skip", "error")
    parts = [Verdict(s, f"{s} {n}", Span(n, n + 1), n, -n) for n, s in enumerate(every)]
    for chosen in itertools.product(parts, repeat=count):
        got, want = combine(kind, chosen, span), reference_combine(kind, list(chosen), span)
        assert verdict_fields(got) == verdict_fields(want), [p.status for p in chosen]
        assert verdict_fields(negate(got, span)) == verdict_fields(reference_negate(want, span))
    for part in parts:
        assert verdict_fields(negate(part, span)) == verdict_fields(reference_negate(part, span))


def test_and_or_precedence() -> None:
    # not > and > or: `P or F and F` is `P or (F and F)` = pass; `(P or F) and F` = fail
    p, f = BY_STATUS["pass"], BY_STATUS["fail"]
    got = evaldsl.compile(f"{p} or {f} and {f}; ({p} or {f}) and {f}; not {f} and {p}")
    assert got.check(build_run("demo")).statuses == ["pass", "fail", "pass"]


# ---- subjects a source cannot provide are check-time errors (§3) --------------------------


@pytest.mark.parametrize(
    ("source", "text"),
    [
        ('cassette "demo/cassette.example.jsonl"', "status == completed"),
        ('cassette "demo/cassette.example.jsonl"', "memory has summary"),
        ('cassette "demo/cassette.example.jsonl"', "tokens within budget"),
        ('cassette "demo/cassette.example.jsonl"', "node start visited"),
        ('state "../../data/runs/state-ok.json"', "tool search called"),
        ('state "../../data/runs/state-ok.json"', 'answer contains "x"'),
        ('state "../../data/runs/state-ok.json"', "steps <= 3"),
    ],
)
def test_unavailable_subject_is_a_check_time_error(source: str, text: str) -> None:
    program = f'case "c"\n  {source}\n  {text}\n'
    with pytest.raises(EvalDslError) as raised:
        evaldsl.compile(program, base_dir=FIXTURES)
    assert [d.code for d in raised.value.errors] == ["E303"]
    # the same assertion through the API, with no source to check against: an error verdict
    run = build_run("demo" if source.startswith("cassette") else "state_file")
    assert evaldsl.compile(text).check(run).statuses == ["error"]


def test_doctests_of_the_semantic_modules() -> None:
    import doctest

    from evaldsl.compile import compiler
    from evaldsl.language import values, verdicts
    from evaldsl.runs import index

    for module in (values, verdicts, index, compiler):
        failed, _ = doctest.testmod(module)
        assert failed == 0, module.__name__
