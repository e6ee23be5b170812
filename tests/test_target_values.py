"""What a live target returns, read as a run: a list with a bad element among events, a
value whose events cannot be read, None (no answer), and a dataset row's input."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from evaldsl.runner.core import run_suites
from evaldsl.runner.live import TargetError
from evaldsl.runner.results import CaseResult
from evaldsl.runner.targets import call_target
from evaldsl.suites.build import load_suite

TARGETS = """
RESPONSE = {"type": "llm.response", "output": "I cannot help"}
CALL = {"type": "tool.call", "name": "search", "arguments": {}}

def junk_last(x=None):
    return [RESPONSE, "junk"]

def none_last(x=None):
    return [RESPONSE, None]

def untyped_last(x=None):
    return [RESPONSE, {"foo": 1}]

def number_in_events(x=None):
    return {"events": [CALL, 5], "output": "done"}

def numbers(x=None):
    return [1, 2]

def bad_usage(x=None):
    return [{"type": "llm.response", "output": "hi", "usage": {"promptTokens": "10"}}]

def nothing(x=None):
    pass

def empty(x=None):
    return ""

def echo(*args):
    return {"args": list(args)}

def memory_number(x=None):
    return {"status": "completed", "memory": 5}

def memory_null(x=None):
    return {"status": "completed", "memory": None}

def memory_kept(x=None):
    return {"status": "completed", "memory": {"n": 1}}
"""


def _run(tmp_path: Path, body: str) -> list[CaseResult]:
    (tmp_path / "agent.py").write_text(TARGETS, encoding="utf-8")
    path = tmp_path / "s.eval"
    path.write_text('suite "s"\n' + textwrap.dedent(body).lstrip("\n"), encoding="utf-8")
    return list(run_suites([load_suite(path)]).cases)


def test_a_returned_event_list_with_a_bad_element_is_the_cases_error(tmp_path: Path) -> None:
    cases = _run(
        tmp_path,
        "".join(
            f'case "{name}"\n  run agent:{name}\n  answer contains "cannot help"\n'
            for name in ("junk_last", "none_last", "untyped_last", "number_in_events")
        )
        + 'case "numbers"\n  run agent:numbers\n  output == [1, 2]\n',
    )
    errors = {c.name: c.error for c in cases}
    assert errors == {
        "junk_last": "run target 'agent:junk_last' returned an unusable value: "
        "element [1] of the event list is a string, not an event object",
        "none_last": "run target 'agent:none_last' returned an unusable value: "
        "element [1] of the event list is null, not an event object",
        "untyped_last": "run target 'agent:untyped_last' returned an unusable value: "
        "event [1] of the event list: an event without a `type`, so what it records "
        "cannot be told",
        "number_in_events": "run target 'agent:number_in_events' returned an unusable value: "
        "element [1] of the event list is a number, not an event object",
        # a list with no event in it is plain output
        "numbers": None,
    }
    assert not any(c.passed for c in cases[:4]) and cases[4].passed


def test_an_unreadable_returned_event_says_the_target_not_a_file_position(
    tmp_path: Path,
) -> None:
    (case,) = _run(tmp_path, 'case "c"\n  run agent:bad_usage\n  answer == "hi"\n')
    assert case.error == (
        "run target 'agent:bad_usage' returned an unusable value: event [0] of the event "
        'list: an LLM response\'s token usage `promptTokens` is "10", not a number'
    )


def test_a_returned_state_whose_memory_is_not_an_object_is_the_cases_error(
    tmp_path: Path,
) -> None:
    # The input's seed stood in for it: `memory not empty` passed on a memory never given.
    cases = _run(
        tmp_path,
        "".join(
            f'case "{name}"\n  run agent:{name}\n  input {{goal: "g"}}\n  memory not empty\n'
            for name in ("memory_number", "memory_null", "memory_kept")
        ),
    )
    assert [c.error for c in cases[:2]] == [
        "run target 'agent:memory_number' returned an unusable value: "
        '"memory" must be an object, found a number',
        "run target 'agent:memory_null' returned an unusable value: "
        '"memory" must be an object, found null',
    ]
    assert cases[2].passed  # an object is merged over the input's seed, as before


def test_a_target_that_returned_none_has_no_answer(tmp_path: Path) -> None:
    cases = _run(
        tmp_path,
        """
        case "none"
          run agent:nothing
          answer is empty
          not answer contains "error"
          answer json exists
          answer[1] == ""
          output == null
        case "empty"
          run agent:empty
          answer is empty
        """,
    )
    none, empty = cases
    assert [a.status for a in none.assertions] == ["error"] * 4 + ["pass"]
    message = none.assertions[0].message
    assert "returned None" in message and "forget `return`" in message, message
    assert empty.passed  # an empty text is an answer


def test_a_dataset_row_without_input_calls_the_target_with_no_argument(tmp_path: Path) -> None:
    rows = [
        {"expectedOutput": {"args": []}, "metadata": {"id": "none"}},
        {"input": None, "expectedOutput": {"args": [None]}, "metadata": {"id": "null"}},
        {"input": 3, "expectedOutput": {"args": [3]}, "metadata": {"id": "three"}},
    ]
    (tmp_path / "rows.json").write_text(json.dumps(rows), encoding="utf-8")
    cases = _run(tmp_path, 'case "d"\n  run agent:echo\n  dataset "rows.json"\n')
    assert [(c.name, c.passed, c.error) for c in cases] == [
        ("d [none]", True, None),
        ("d [null]", True, None),
        ("d [three]", True, None),
    ]


def _diagnostics(tmp_path: Path, body: str) -> list[str]:
    (tmp_path / "agent.py").write_text(TARGETS, encoding="utf-8")
    path = tmp_path / "m.eval"
    path.write_text('suite "m"\n' + textwrap.dedent(body).lstrip("\n"), encoding="utf-8")
    return [f"{d.line}:{d.code}: {d.message}" for d in load_suite(path).diagnostics]


def test_a_case_that_cannot_run_is_not_also_said_to_always_pass_or_lack_a_source(
    tmp_path: Path,
) -> None:
    found = _diagnostics(
        tmp_path,
        """
        case "big"
          run agent:echo
          output == 12345678901234567890
        case "bad run"
          run agent
          output == 1
        case "two inputs"
          run agent:echo
          input 1
          input 2
          output == 1
        case "nothing"
          run agent:echo
        """,
    )
    assert not any("always passes" in d for d in found[:-1]), found
    assert not any("has no source" in d for d in found), found
    assert "11:E503: this case already has `input` on line 10; a case has one input" in found
    assert found[-1] == (
        '13:W504: case "nothing" has no assertions: it checks nothing '
        "(a case without assertions passes when its run succeeds)"
    )


def test_a_value_nested_too_deep_is_said_with_its_path_abbreviated(tmp_path: Path) -> None:
    (tmp_path / "deep.py").write_text(
        "def f(x=None):\n    v = 1\n    for _ in range(300):\n        v = [v]\n    return v\n"
    )
    with pytest.raises(TargetError) as raised:
        call_target("deep:f", None, 30, tmp_path)
    assert str(raised.value).endswith("$[0][0]…[0] (200 levels): nested deeper than 200 levels")


def test_a_value_of_shared_references_is_bounded_as_a_file_is(tmp_path: Path) -> None:
    """A returned value holding one list twice, 60 levels of it, is 2^60 values as JSON:
    the worker walked every path (a hang, then an exhausted machine). Now the values
    that shared references add are bounded (`jsondata.MAX_SHARED_VALUES`), as a YAML
    file's aliases are: the case's error naming the place; a value shared a few times
    is JSON data as it always was."""
    (tmp_path / "dag.py").write_text(
        "def bomb(x=None):\n    v = [1]\n    for _ in range(60):\n        v = [v, v]\n"
        "    return {'output': v}\n"
        "def shared(x=None):\n    v = [1, 2]\n    return {'a': v, 'b': [v, v]}\n"
    )
    with pytest.raises(TargetError) as raised:
        call_target("dag:bomb", None, 60, tmp_path)
    said = str(raised.value)
    assert "$.output[0]" in said and "shared references expand to more than 1,000,000" in said
    run = call_target("dag:shared", None, 30, tmp_path)
    assert run.output == {"a": [1, 2], "b": [[1, 2], [1, 2]]}
