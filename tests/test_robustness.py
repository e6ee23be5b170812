"""Bad input of any shape gets verdicts or diagnostics, never an exception: generated YAML
and JSON suites through the loader and runner, and generated programs against generated
events (no assertion may end in an internal error)."""

from __future__ import annotations

import json
from typing import Any

import yaml
from hypothesis import given
from hypothesis import strategies as st

import evaldsl
from evaldsl.runner.core import run_suites
from evaldsl.suites.build import load_suite
from tests.fuzzing import lenient

FIELDS = [
    "name", "kind", "type", "cassette", "state", "run", "input", "each", "expect",
    "assertions", "jsonPath", "equals", "times", "text", "regex", "step", "key", "mode",
    "pattern", "expected", "node_id", "criteria", "threshold", "required", "fields", "tool",
    "minHits", "dataset", "timeout", "format", "trace", "value", "names",
]  # fmt: skip
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.floats(allow_nan=False, width=16),
    st.text(max_size=8),
    st.sampled_from(
        [
            "cassette.jsonl",
            "$.city",
            "tool.called",
            "status_equals",
            "get_weather",
            "{{x}}",
            "x:y",
            "30s",
            "answer contains 'x'",
            "memory_matches",
            "answer.shape",
        ]
    ),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(FIELDS), inner, max_size=5)
    ),
    max_leaves=12,
)
SUITES = st.dictionaries(
    st.sampled_from(
        ["suite", "name", "tools", "nodes", "judge", "timeout", "expect", "cases", "x"]
    ),
    st.one_of(VALUES, st.lists(VALUES, max_size=3)),
    max_size=5,
)
SETTINGS = lenient(250)


@SETTINGS
@given(doc=SUITES, kind=st.sampled_from(["yaml", "json"]))
def test_generated_suites_load_and_run(tmp_path_factory: Any, doc: Any, kind: str) -> None:
    folder = tmp_path_factory.mktemp("suite")
    (folder / "cassette.jsonl").write_text(
        '{"cassette":"traceplay","version":1}\n'
        '{"type":"tool.call","name":"get_weather","arguments":{"city":"x"}}\n',
        encoding="utf-8",
    )
    path = folder / f"s.{kind}"
    path.write_text(yaml.safe_dump(doc) if kind == "yaml" else json.dumps(doc), encoding="utf-8")
    report = run_suites([load_suite(path)])
    assert all(0.0 <= c.score <= 1.0 for c in report.cases)


STATEMENTS = [
    "tool a called", "tool a args $.x == 1", 'tool a args $.x[*] contains "q"',
    "tool a result $.y > 2", "every tool a args $ is object", 'answer contains "x"',
    "answer json $.k is string", "answer[2] matches /a.b/i",
    "answer cites tool a at least 2 values",
    "answer cites tool a $.v", "tokens <= 10", "steps >= 1", "latency < 1s", "cost < $1",
    "tools in order [a, b]", "tools only [a]", "tool calls == 2", "errors == 0", "guards >= 0",
    "answer json has k", "not answer is empty", "output == {a: 1}",
    'answer starts with "x" or answer ends with "y"',
]  # fmt: skip
JSON = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=5)),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(
            st.sampled_from(
                [
                    "x",
                    "y",
                    "k",
                    "v",
                    "content",
                    "choices",
                    "message",
                    "usage",
                    "promptTokens",
                    "text",
                    "type",
                ]
            ),
            inner,
            max_size=3,
        ),
    ),
    max_leaves=8,
)
EVENTS = st.fixed_dictionaries(
    {
        "type": st.sampled_from(
            [
                "tool.call",
                "tool.result",
                "llm.request",
                "llm.response",
                "llm.invoke",
                "mcp.call",
                "policy.evaluate",
                "agent.error",
                "x",
            ]
        )
    },
    optional={
        "name": st.sampled_from(["a", "b", None, 3]),
        "arguments": JSON,
        "output": JSON,
        "callId": st.sampled_from(["c1", "c2", None]),
        "id": st.sampled_from(["c1", "e"]),
        "usage": JSON,
        "at": st.sampled_from(["2026-01-01T00:00:00Z", "2026-01-01T00:00:05", "bad", None, 5]),
        "model": st.sampled_from(["gpt-4o", None, 3]),
        "result": JSON,
        "tokensIn": JSON,
    },
)


@SETTINGS
@given(
    statements=st.lists(st.sampled_from(STATEMENTS), min_size=1, max_size=6),
    events=st.lists(EVENTS, max_size=8),
)
def test_generated_programs_over_generated_events(statements: list[str], events: list[Any]) -> None:
    result = evaldsl.compile("; ".join(statements)).check(events)
    assert len(result.verdicts) == len(statements)
    for verdict in result.verdicts:
        assert not verdict.message.startswith("internal error"), verdict.message
