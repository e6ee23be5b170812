"""Evaluating a case's assertions (`compile/evaluate.py`): an assertion whose checker
raises is an error verdict of its own, and the others are decided as ever, whether the
assertions are evaluated one at a time (`evaluate`) or together (`evaluate_all`, as a
check and a run's cases evaluate them)."""

from __future__ import annotations

from typing import Any

import attrs

import evaldsl
from evaldsl.compile.evaluate import check_run, evaluate, evaluate_all, indexed_run
from evaldsl.runs.index import RunFacts

EVENTS = [
    {"type": "tool.call", "name": "search", "arguments": {"q": "x"}},
    {"type": "llm.response", "output": "done"},
]


def _raising(err: BaseException) -> Any:
    def run(facts: RunFacts) -> Any:
        raise err

    return run


def test_a_checker_that_raises_is_its_own_error_verdict_among_the_others() -> None:
    case = evaldsl.compile(
        'tool search called once\nanswer contains "done"\nno tool delete\nanswer == "x"'
    ).cases[0]
    broken = list(case.assertions)
    broken[1] = attrs.evolve(broken[1], run=_raising(ValueError("bad value")))
    broken[3] = attrs.evolve(broken[3], run=_raising(RecursionError("too deep")))
    facts = indexed_run(case.needs, EVENTS)
    together = evaluate_all(broken, facts)
    assert together == [evaluate(a, facts) for a in broken]
    assert [(v.status, v.message) for v in together] == [
        ("pass", 'tool "search" called 1 time'),
        ("error", "internal error: ValueError: bad value"),
        ("pass", 'tool "delete" was never called'),
        (
            "error",
            "the values this assertion reads are nested too deeply to evaluate "
            "(traces may nest up to 1024 levels)",
        ),
    ]
    assert [v.span for v in together] == [a.node.span for a in broken]
    result = check_run(broken, case.needs, EVENTS)
    assert list(result.verdicts) == together
    assert result.texts == tuple(a.text for a in broken)
