"""A JSONPath whose values multiply is stopped, never a hang: past `MAX_PATH_VALUES` values
(counting those between its steps and those a `..` walks over) its evaluation stops, and
the assertion on it is an error naming the path and the limit, in a run through the CLI
and through the API, while the other assertions and cases run; a path that cannot
multiply is not counted, however many values it finds; `check` warns of one (W405)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

import evaldsl
from evaldsl.language import paths
from evaldsl.language.limits import MAX_PATH_VALUES
from evaldsl.language.paths import TooManyValues, compile_path
from tests.clitools import run_evaldsl


def _nested(depth: int, leaf: Any = 1) -> Any:
    """`{"a": {"a": … leaf}}`, `depth` objects deep."""
    value = leaf
    for _ in range(depth):
        value = {"a": value}
    return value


def _cassette(value: Any) -> list[dict[str, Any]]:
    """A traceplay recording of one call of tool `t` with `value` as its arguments and
    its result, and `value`'s JSON as the answer."""
    return [
        {"cassette": "traceplay", "version": 1},
        {"id": "e1", "seq": 0, "type": "user.message", "content": "hi"},
        {"id": "e2", "seq": 1, "type": "tool.call", "name": "t", "callId": "c1"}
        | {"arguments": value},
        {"id": "e3", "seq": 2, "type": "tool.result", "callId": "c1", "output": value},
        {"id": "e4", "seq": 3, "type": "llm.request", "messages": []},
        {
            "id": "e5",
            "seq": 4,
            "type": "llm.response",
            "requestId": "e4",
            "output": {"choices": [{"message": {"content": json.dumps(value)}}]},
        },
    ]


#: A path of three `..` steps: in an answer nested 150 levels deep it found 551,300 values
#: (seconds and a quarter of a gigabyte); one more `..*` ran for hours.
WIDE = "$..*..*..*"


def test_a_path_whose_values_multiply_is_its_assertions_error_through_the_cli(
    tmp_path: Path,
) -> None:
    lines = _cassette(_nested(150))
    (tmp_path / "deep.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    (tmp_path / "s.eval").write_text(
        f'suite "s"\ntools t\ncase "answer"\n  cassette "deep.jsonl"\n'
        f'  answer json {WIDE}..* exists\n  answer contains "a"\n'
        f'case "calls"\n  cassette "deep.jsonl"\n'
        f"  tool t args {WIDE} exists\n  every tool t result {WIDE} == 5\n"
        f"  tool t args $.a.a exists\n"
    )
    done = run_evaldsl("run", "s.eval", "--json", "out.json", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    report = json.loads((tmp_path / "out.json").read_text())
    (suite,) = report["suites"]
    statuses = {
        case["name"]: [(a["status"], a["message"]) for a in case["assertions"]]
        for case in suite["cases"]
    }
    limit = f"{MAX_PATH_VALUES:,} values"
    (answer_json, contains) = statuses["answer"]
    assert answer_json[0] == "error"
    assert f"`{WIDE}..*`" in answer_json[1] and limit in answer_json[1]
    assert "use one `..`" in answer_json[1]
    assert contains[0] == "pass"
    args, results, plain = statuses["calls"]
    for status, message in (args, results):
        assert status == "error"
        assert 'tool "t"' in message and WIDE in message and limit in message
    assert plain[0] == "pass"
    assert report["summary"]["assertions"] == {"pass": 2, "fail": 0, "skip": 0, "error": 3}


@pytest.fixture
def small_limit() -> Any:
    """`MAX_PATH_VALUES` of 1,000: the API's tests cross it in milliseconds."""
    with mock.patch.object(paths, "MAX_PATH_VALUES", 1000):
        yield


def _check(statements: list[str], calls: list[Any]) -> list[tuple[str, str]]:
    """The verdicts of `statements` on a run of one call of tool `t` per value of
    `calls` (its arguments and its result), answered with the last one's JSON."""
    events: list[dict[str, Any]] = []
    for i, value in enumerate(calls):
        events.append({"type": "tool.call", "name": "t", "callId": f"c{i}", "arguments": value})
        events.append({"type": "tool.result", "callId": f"c{i}", "output": value})
    events.append({"type": "llm.response", "output": json.dumps(calls[-1])})
    result = evaldsl.compile("\n".join(statements)).check(events)
    return [(v.status, v.message) for v in result.verdicts]


def test_the_api_says_which_assertion_crossed_and_runs_the_others(small_limit: Any) -> None:
    deep = _nested(40)  # `$..*..*..*` finds 11,480 values in it
    verdicts = _check(
        [f"answer json {WIDE} exists", f"tool t result {WIDE} exists", "tool t called once"],
        [deep],
    )
    assert [s for s, _ in verdicts] == ["error", "error", "pass"]
    assert verdicts[0][1].startswith(f"the JSONPath `{WIDE}` found more than 1,000 values")
    assert verdicts[1][1].startswith(
        f'whether tool "t" result {WIDE} exists is unknown: its path found more than 1,000'
    )


#: A call on whose arguments `WIDE` finds 5 (three times), and one on which it crosses.
FIVE, CROSSES = _nested(3, 5), _nested(40)


@pytest.mark.parametrize(
    ("statement", "calls", "status"),
    [
        # a call that passed decides, before or after the call that crossed
        (f"tool t args {WIDE} == 5", [FIVE, CROSSES], "pass"),
        (f"tool t args {WIDE} == 5", [CROSSES, FIVE], "pass"),
        # nothing else passed: unknown, never a fail
        (f"tool t args {WIDE} == 5", [{"x": 5}, CROSSES], "error"),
        (f"not tool t args {WIDE} == 5", [CROSSES], "error"),
        # `every`: the call that crossed is not known to pass
        (f"every tool t args {WIDE} == 5", [FIVE, CROSSES], "error"),
        (f"every tool t result {WIDE} == 5", [CROSSES, FIVE], "error"),
        (f"every tool t args {WIDE} == 5", [FIVE, FIVE], "pass"),
        # a call that failed before decides `every`: the path is not walked again
        (f"every tool t args {WIDE} == 5", [{"x": 5}, CROSSES], "fail"),
    ],
)
def test_a_call_whose_values_cross_decides_nothing(
    small_limit: Any, statement: str, calls: list[Any], status: str
) -> None:
    assert [s for s, _ in _check([statement], calls)] == [status]


def test_an_every_test_failed_on_values_found_before_the_crossing_fails(small_limit: Any) -> None:
    """The other test keeps walking the path (its group is open) to the call that crosses;
    the `every` test failed before, on a value its path found: that verdict stands."""
    statements = [f"every tool t args {WIDE} == 5", f"tool t args {WIDE} == 6"]
    verdicts = _check(statements, [_nested(3, 4), CROSSES])
    assert [s for s, _ in verdicts] == ["fail", "error"]


def test_a_path_that_cannot_multiply_is_not_counted(small_limit: Any) -> None:
    """Each of its values is found once (one `..`; plain steps): however many values it
    finds, the path's own work, it is not stopped."""
    wide = {"items": [{"id": i, "x": {"y": i}} for i in range(3000)]}
    for path in ["$..x.y", "$.items[*].x.y", "$..y", "$.items[?(@.id >= 0)].x"]:
        compiled = compile_path(path)
        assert not isinstance(compiled, paths.PathProblem) and not compiled.multiplies
        assert len(compiled.find(wide)) == 3000, path


@pytest.mark.parametrize(
    "path", [WIDE, "$..a..a", "$..a[?(@..a)]", "$.a[*].`parent`[*].`parent`[*]"]
)
def test_a_path_whose_values_multiply_is_counted(small_limit: Any, path: str) -> None:
    compiled = compile_path(path)
    assert not isinstance(compiled, paths.PathProblem) and compiled.multiplies
    with pytest.raises(TooManyValues) as crossed:
        compiled.find({"a": list(range(200))} if "parent" in path else _nested(60))
    assert crossed.value.path == path


def test_below_the_limit_a_counted_path_finds_what_jsonpath_ng_finds() -> None:
    from jsonpath_ng.ext.parser import parse

    value = {"a": [_nested(6), {"b": [1, {"a": 2}]}]}
    for path in [WIDE, "$..a..b", "$..a[?(@..a)]", "$.a[*].`parent`[0]"]:
        compiled = compile_path(path)
        assert not isinstance(compiled, paths.PathProblem) and compiled.multiplies
        assert compiled.find(value) == [m.value for m in parse(path).find(value)], path


def test_check_warns_of_a_path_whose_values_can_multiply() -> None:
    *_, diagnostics = evaldsl.diagnose(f"answer json {WIDE} exists\nanswer json $..a exists")
    assert [(d.code, d.line, d.column) for d in diagnostics] == [("W405", 1, 13)]
