"""Suites: the three front ends, object forms, each/dataset expansion, live targets and
the runner's scoring — loaded from real files in a temporary folder."""

from __future__ import annotations

import pickle
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import evaldsl
from evaldsl.runner.core import RunOptions, run_suites
from evaldsl.runner.results import Summary
from evaldsl.runs.model import LateFormat
from evaldsl.suites.build import load_suite
from evaldsl.suites.model import Suite

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "traceplay"
DEMO = FIXTURES / "demo" / "cassette.example.jsonl"
STRUCTURED = FIXTURES / "structured" / "cassette.structured.jsonl"


def write(tmp: Path, name: str, text: str) -> Path:
    path = tmp / name
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def statuses(suite: Suite) -> list[list[str]]:
    report = run_suites([suite])
    return [[a.status for a in c.assertions] for c in report.cases]


# ---- every traceplay fixture suite runs as traceplay ran it -------------------------------


@pytest.mark.parametrize(
    "suite_file", sorted(FIXTURES.glob("*/suite.*.yaml")), ids=lambda p: p.parent.name
)
def test_traceplay_fixture_suites_pass(suite_file: Path) -> None:
    suite = load_suite(suite_file)
    assert not suite.errors, suite.errors
    report = run_suites([suite])
    assert report.cases and all(c.passed for c in report.cases), [
        (c.name, [a.message for a in c.assertions if a.status != "pass"]) for c in report.cases
    ]


def test_multistep_suite_name_key_and_steps() -> None:
    suite = load_suite(FIXTURES / "multistep" / "suite.multistep.yaml")
    assert suite.name == "multistep-demo"  # `name:` instead of `suite:`
    texts = [a.text for a in suite.cases[0].assertions]
    assert texts[:3] == [
        'answer[1] contains "outline"',
        'answer[2] contains "details"',
        'answer contains "shipped"',
    ]


def test_each_rows_name_cases_and_render_strings() -> None:
    suite = load_suite(FIXTURES / "structured" / "suite.structured.yaml")
    names = [c.name for c in suite.cases]
    assert names[1:] == [
        "every key field is echoed in the answer (data-driven) #1 [value=TC-4821]",
        "every key field is echoed in the answer (data-driven) #2 [value=mina]",
    ]
    # each row's object is rendered, then converted, as traceplay renders it
    assert [c.assertions[0].text for c in suite.cases[1:]] == [
        'answer contains "TC-4821"',
        'answer contains "mina"',
    ]
    assert statuses(suite)[1:] == [["pass"], ["pass"]]


def test_a_rows_dotted_key_renders_its_placeholder_as_traceplay_reads_it(tmp_path: Path) -> None:
    # traceplay looks `{{a.b}}` up as the row's own key "a.b"; evaldsl read only into
    # `{a: {b: …}}`, left the placeholder as written (W509) and failed the case
    rows = '[{"a.b": sunny}, {a: {b: rainy}}, {"a.b": sunny, a: {b: rainy}}]'
    case = f"name: weather, cassette: {DEMO}, each: {rows}"
    text = case + ', assertions: [{kind: answer.contains, text: "{{a.b}}"}]'
    suite = load_suite(write(tmp_path, "s.yaml", "cases: [{" + text + "}]\n"))
    assert not suite.diagnostics, suite.diagnostics
    assert [c.assertions[0].text for c in suite.cases] == [
        'answer contains "sunny"',
        'answer contains "rainy"',  # (evaldsl's own reading into the row)
        'answer contains "sunny"',  # (the row's own key first, as traceplay)
    ]
    assert statuses(suite) == [["pass"], ["fail"], ["pass"]]


# ---- YAML positions ---------------------------------------------------------------------


def test_dsl_errors_in_yaml_point_at_their_own_line_and_column(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "s.yaml",
        f"""
        cases:
          - name: plain
            cassette: {DEMO}
            expect: tool get_weather caled
          - name: quoted list
            cassette: {DEMO}
            expect:
              - "answer contains 'x'"
              - "answer contans 'x'"
          - name: block
            cassette: {DEMO}
            expect: |
              tool get_weather called
                answer matches /(a)\\1/
        """,
    )
    suite = load_suite(path)
    got = {(d.line, d.column, d.code) for d in suite.diagnostics}
    assert (4, 30, "E101") in got  # `caled` in a plain scalar
    assert (9, 17, "E101") in got  # `contans` inside a double-quoted item
    assert (14, 24, "E402") in got  # the regex on the block's second line
    assert all(c.error for c in suite.cases)


def test_a_bracket_never_closed_in_yaml_is_reported_where_it_opens(tmp_path: Path) -> None:
    """An `expect:` item that ends before its `)`: the error is at the `(`, and its
    message names the place in the YAML file."""
    path = write(
        tmp_path,
        "s.yaml",
        f"""
        cases:
          - name: list
            cassette: {DEMO}
            expect:
              - not (tool get_weather called once
              - tool get_weather calledonce
        """,
    )
    suite = load_suite(path)
    got = [(d.line, d.column, d.message) for d in suite.diagnostics if d.code == "E101"]
    assert got == [
        (5, 13, "`(` at 5:13 is never closed"),
        (6, 26, "`calledonce` is written as separate words: `called once`"),
    ]


def test_object_field_problems_point_at_fields(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "s.yaml",
        f"""
        cases:
          - name: objects
            cassette: {DEMO}
            assertions:
              - kind: tool.args
                name: get_weather
                path: $.city
                equals: Xiamen
              - {{kind: tool.called, name: 3}}
              - {{type: memory_match, key: a}}
              - {{text: hello}}
              - {{kind: tool.forbid, name: x}}
              - {{kind: called.tool, name: x}}
              - {{type: answer_contains, text: x}}
              - {{type: tool_called, name: x}}
              - {{kind: status_equals, expected: completed}}
              - {{kind: tool.called, name: x, times: "2"}}
              - {{kind: tool.called, name: x, times: -1}}
              - {{kind: "{{{{k}}}}", name: x}}
        """,
    )
    suite = load_suite(path)
    by_code = {(d.code, d.line): d for d in suite.diagnostics}
    assert by_code[("E508", 7)].hint == "did you mean `jsonPath:`?"
    # a field of the wrong type, in the user's words (it read "not int", "not str")
    assert (
        by_code[("E507", 9)].message
        == "`name` of `tool.called` must be a non-empty string, not a number"
    )
    times = by_code[("E507", 17)]
    assert times.message.endswith('must be a whole number ≥ 0, not the text "2"')
    assert times.hint == "write the number without quotes: `times: 2`"
    # a number of the wrong kind is said as itself (it read "not a number")
    assert by_code[("E507", 18)].message.endswith("must be a whole number ≥ 0, not -1")
    assert by_code[("E505", 10)].hint == "did you mean `memory_matches`?"
    assert ("E506", 11) in by_code  # neither kind nor type
    # a kind the other way round: difflib's nearest was `tool.order`
    assert by_code[("E505", 12)].hint == "did you mean `forbid.tool`?"
    assert by_code[("E505", 13)].hint == "did you mean `tool.called`?"
    # the other front end's kind under this one's field: said as that, before a near one
    # of this front end (`memory_contains` is a cycgraph type one letter-run away)
    traceplay = "traceplay's assertions say `kind:`: did you mean `kind: {}`?"
    assert by_code[("E505", 14)].hint == traceplay.format("answer.contains")
    assert by_code[("E505", 15)].hint == traceplay.format("tool.called")
    cycgraph = "cycgraph's assertions say `type:`: did you mean `type: status_equals`?"
    assert by_code[("E505", 16)].hint == cycgraph
    # a placeholder in `kind:` is never filled (traceplay renders a row into the other
    # strings only): said so, not a did-you-mean of the placeholder's letters
    assert by_code[("E505", 19)].message == "unknown assertion kind `{{k}}`"
    assert by_code[("E505", 19)].hint == (
        "an `each` row's values are not put into `kind:`; "
        "write the kind itself (one assertion for each kind the rows need)"
    )


def test_a_step_that_is_no_number_is_an_error_not_the_last_answer(tmp_path: Path) -> None:
    # traceplay reads a `step` that is no number as the last response, as evaldsl did
    # without a word: `step: "1"` checked the final answer, never the first
    from tests.clitools import run_evaldsl

    (tmp_path / "run.jsonl").write_text(
        (FIXTURES / "multistep" / "cassette.multistep.jsonl").read_text(encoding="utf-8"),
        encoding="utf-8",
    )
    write(
        tmp_path,
        "s.yaml",
        """
        cases:
          - name: first draft
            cassette: run.jsonl
            assertions:
              - {kind: answer.contains, text: outline, step: "1"}
              - {kind: answer.matches, regex: Final, step: true}
          - name: last answer
            cassette: run.jsonl
            assertions:
              - {kind: answer.contains, text: shipped, step: null}
              - {kind: answer.contains, text: shipped, step: 0}
        """,
    )
    done = run_evaldsl("run", "s.yaml", "--no-history", cwd=tmp_path)
    assert done.returncode == 1, done.stdout
    assert (
        "s.yaml:5:48: error[E507]: `step` of `answer.contains` must be a number (1 is the "
        'first response), not the text "1"'
    ) in done.stdout
    assert "hint: write the number without quotes: `step: 1`" in done.stdout
    assert "s.yaml:6:46: error[E507]: `step` of `answer.matches` must be a number" in done.stdout
    assert "1 passed, 0 failed, 1 errored" in done.stdout


def test_unknown_case_and_suite_fields(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "s.yaml",
        f"""
        suit: misspelt
        cases:
          - name: c
            casette: {DEMO}
            expect: steps <= 3
        """,
    )
    suite = load_suite(path)
    hints = {d.line: d.hint for d in suite.diagnostics}
    assert hints[1] == "did you mean `suite:`?"
    assert hints[4] == "did you mean `cassette:`?"


def test_cycgraphs_timeout_ms_is_said_in_milliseconds(tmp_path: Path) -> None:
    # the did-you-mean `timeout:`, with its quick fix, made cycgraph's 5000 ms 5000 s
    path = write(
        tmp_path,
        "s.yaml",
        f"""
        timeout_ms: 30000
        cases:
          - name: c
            cassette: {DEMO}
            timeout_ms: 5000
            expect: steps <= 3
          - name: d
            cassette: {DEMO}
            timeout_ms: soon
            expect: steps <= 3
        """,
    )
    said = {d.line: d for d in load_suite(path).diagnostics if d.code == "E508"}
    tail = "counts milliseconds, and a bare `timeout` number seconds: write `timeout: {}`"
    assert said[1].hint == "cycgraph's `timeout_ms` " + tail.format("30000ms")
    assert said[5].hint == "cycgraph's `timeout_ms` " + tail.format("5000ms")
    assert said[9].hint == "cycgraph's `timeout_ms` " + tail.format("60000ms")
    assert all(d.fix is None for d in said.values())  # no rename to `timeout:`


def test_a_key_that_is_a_list_or_a_mapping_is_an_unknown_field_at_its_place(
    tmp_path: Path,
) -> None:
    """A key that is a collection (`? [x]`) was left out of a suite's and a case's fields:
    no field and no unknown one, so the case ran and passed with it unread; inside an
    assertion it was said at the assertion's first line."""
    path = write(
        tmp_path,
        "s.yaml",
        f"""
        suite: s
        ? [x]
        : 1
        cases:
          - name: c
            cassette: {DEMO}
            ? {{a: 1}}
            : 2
            assertions:
              - kind: answer.contains
                text: sunny
                ? [1]
                : 2
        """,
    )
    suite = load_suite(path)
    found = [(d.code, d.line, d.column, d.message) for d in suite.diagnostics]
    assert found == [
        ("E508", 2, 3, '`["x"]` is not a suite field'),
        ("E508", 7, 7, '`{"a":1}` is not a case field'),
        ("E508", 12, 11, "`[1]` is not a field of `answer.contains`"),
    ]
    (case,) = run_suites([suite]).cases
    assert case.error


def test_a_placeholder_no_row_fills_in_a_source_path_is_checked_at_its_line(
    tmp_path: Path,
) -> None:
    """`cassette "{{p}}.jsonl"` with no row giving `p` was left unread by the check (a
    path with a placeholder was skipped), so `check` passed and `run` failed with an error
    placed at the missing file (`{{p}}.jsonl:1:1`), not at the suite's line."""
    (tmp_path / "paris.jsonl").write_bytes(DEMO.read_bytes())
    path = write(
        tmp_path,
        "s.eval",
        """
        case "no rows"
          cassette "{{p}}.jsonl"
          tool get_weather called
        case "rows"
          cassette "{{city}}.jsonl"
          each [{city: "paris"}, {town: "rome"}]
          tool get_weather called
        """,
    )
    suite = load_suite(path)
    found = [(d.code, d.line, d.column, d.message) for d in suite.diagnostics if d.is_error]
    assert found == [
        ("E501", 2, 3, f'file not found: "{{{{p}}}}.jsonl" (looked in {tmp_path})'),
        ("E501", 5, 3, f'file not found: "{{{{city}}}}.jsonl" (looked in {tmp_path})'),
    ]
    outcomes = _outcomes(suite)
    assert [(name, passed) for name, passed, _ in outcomes] == [
        ("no rows", False),
        ("rows #1 [city=paris]", True),
        ("rows #2 [town=rome]", False),
    ]
    assert all("s.eval:" in (error or "s.eval:") for _, _, error in outcomes), outcomes


def test_json_suites_are_read_with_positions(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "s.json",
        f"""
        {{"suite": "j", "cases": [
          {{"name": "c", "cassette": "{DEMO}",
           "assertions": [{{"kind": "tool.called", "name": "get_weather", "times": 1}},
                          {{"kind": "answer.contains", "text": "rainy"}}]}}
        ]}}
        """,
    )
    suite = load_suite(path)
    assert not suite.diagnostics
    assert statuses(suite) == [["pass", "fail"]]


# ---- object forms compile to the same checks ------------------------------------------


@pytest.mark.parametrize(
    ("obj", "text", "status"),
    [
        ("{kind: tool.called, name: get_weather}", "tool get_weather called", "pass"),
        (
            "{kind: tool.called, name: get_weather, times: 2}",
            "tool get_weather called 2 times",
            "fail",
        ),
        ("{kind: tool.order, names: [get_weather]}", "tools in order [get_weather]", "pass"),
        ("{kind: tool.order, names: []}", "tools in order []", "pass"),
        (
            "{kind: tool.args, name: get_weather, jsonPath: $.city, equals: Beijing}",
            'tool get_weather args $.city == "Beijing"',
            "fail",
        ),
        (
            "{kind: tool.args, name: get_weather, jsonPath: $.city, matches: '^Xia'}",
            "tool get_weather args $.city matches /^Xia/",
            "pass",
        ),
        ("{kind: forbid.tool, name: execute_shell}", "no tool execute_shell", "pass"),
        ("{kind: answer.contains, text: sunny}", 'answer contains "sunny"', "pass"),
        ("{kind: answer.contains, text: sunny, step: 0}", 'answer contains "sunny"', "pass"),
        ("{kind: answer.contains, text: sunny, step: 99}", 'answer[99] contains "sunny"', "fail"),
        ("{kind: answer.matches, regex: '\\d+C'}", "answer matches /\\d+C/", "pass"),
        ("{kind: answer.matches, regex: 'a/b'}", "answer matches /a\\/b/", "fail"),
        ("{kind: budget.maxTokens, value: 500}", "tokens <= 500", "pass"),
        ("{kind: budget.maxTokens, value: 100}", "tokens <= 100", "fail"),
        ("{kind: budget.maxSteps, value: 0}", "steps <= 0", "fail"),
        (
            "{kind: answer.judge, rubric: mentions weather}",
            'answer judged "mentions weather"',
            "skip",
        ),
    ],
)
def test_traceplay_objects(tmp_path: Path, obj: str, text: str, status: str) -> None:
    path = write(
        tmp_path,
        "s.yaml",
        f"cases:\n  - name: c\n    cassette: {DEMO}\n    assertions:\n      - {obj}\n",
    )
    suite = load_suite(path)
    assert not suite.errors, suite.errors
    assert [a.text for a in suite.cases[0].assertions] == [text]
    assert statuses(suite) == [[status]]


def test_a_shape_field_of_several_values_is_not_converted_to_one_that_passes_on_any(
    tmp_path: Path,
) -> None:
    # traceplay's shape-assert test: `$.xs[*]` typed `string` fails on ["ok", 7] (every
    # value found is held to the spec); `answer json $.xs[*] is string` passed on "ok"
    from tests.clitools import run_evaldsl

    write(
        tmp_path,
        "run.jsonl",
        """
        {"cassette": "traceplay", "version": 1}
        {"id": "q", "type": "llm.request", "model": "m"}
        {"id": "r", "type": "llm.response", "requestId": "q", "output": "{\\"xs\\": [\\"ok\\", 7]}"}
        """,
    )
    write(
        tmp_path,
        "s.yaml",
        """
        cases:
          - name: every element is text
            cassette: run.jsonl
            assertions:
              - {kind: answer.shape, required: ["$.xs[*]"], fields: {"$.xs[*]": string}}
          - name: an element exists
            cassette: run.jsonl
            assertions:
              - {kind: answer.shape, required: ["$.xs[*]"], fields: {"$.xs[*]": {}}}
        """,
    )
    done = run_evaldsl("run", "s.yaml", "--no-history", cwd=tmp_path)
    assert done.returncode == 1, done.stdout
    assert "s.yaml:5:53: error[E507]: `$.xs[*]` can find several values" in done.stdout
    assert "check each element's path (`$.xs[0]`, …)" in done.stdout
    assert "1 passed, 0 failed, 1 errored" in done.stdout  # the other case still runs
    converted = run_evaldsl("convert", "s.yaml", cwd=tmp_path)
    assert converted.returncode == 1 and "not_converted" in converted.stdout


STATE = {
    "status": "completed",
    "memory": {
        "result": "hello world",
        "count": 42,
        "nested": {"key": "value"},
        "empty": [],
        "blank": "  ",
        "zero": 0,
        "off": False,
    },
    "visited_nodes": ["start", "middle", "end"],
    "total_tokens_used": 500,
    "max_token_budget": 1000,
}


@pytest.mark.parametrize(
    ("obj", "status"),
    [
        ("{type: status_equals, expected: completed}", "pass"),
        ("{type: status_equals, expected: failed}", "fail"),
        ("{type: node_visited, node_id: middle}", "pass"),
        ("{type: node_visited, node_id: nowhere}", "fail"),
        ("{type: memory_contains, key: empty}", "pass"),
        ("{type: memory_contains, key: constructor}", "fail"),
        ("{type: memory_not_empty, key: empty}", "fail"),
        ("{type: memory_not_empty, key: blank}", "fail"),
        ("{type: memory_not_empty, key: zero}", "pass"),
        ("{type: memory_not_empty, key: 'off'}", "pass"),
        ("{type: memory_not_empty, key: missing}", "fail"),
        ("{type: memory_matches, key: count, mode: exact, pattern: '', expected: 42}", "pass"),
        ("{type: memory_matches, key: count, mode: exact, pattern: '', expected: 99}", "fail"),
        (
            "{type: memory_matches, key: result, mode: contains, pattern: '', expected: hello}",
            "pass",
        ),
        (
            "{type: memory_matches, key: nested, mode: contains, pattern: '', "
            "expected: {key: value}}",
            "pass",
        ),
        ("{type: memory_matches, key: result, mode: regex, pattern: '^hello\\s\\w+$'}", "pass"),
        # cycgraph's regex mode tests text only: the number 42 fails
        ("{type: memory_matches, key: count, mode: regex, pattern: '42'}", "fail"),
        ("{type: token_budget_respected}", "pass"),
        (
            "{type: llm_judge, criteria: is a summary, threshold: 0.7, evaluator_agent_id: judge}",
            "skip",
        ),
    ],
)
def test_cycgraph_objects(tmp_path: Path, obj: str, status: str) -> None:
    import json

    (tmp_path / "state.json").write_text(json.dumps(STATE), encoding="utf-8")
    path = write(
        tmp_path,
        "s.yaml",
        f"cases:\n  - name: c\n    state: state.json\n    assertions:\n      - {obj}\n",
    )
    suite = load_suite(path)
    assert not suite.errors, suite.errors
    assert statuses(suite) == [[status]]


def test_memory_matches_exact_without_expected_is_a_check_error(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "s.yaml",
        "cases:\n  - name: c\n    state: s.json\n    assertions:\n"
        "      - {type: memory_matches, key: count, mode: exact, pattern: ''}\n",
    )
    (tmp_path / "s.json").write_text('{"status": "completed", "memory": {}}', encoding="utf-8")
    suite = load_suite(path)
    assert [d.code for d in suite.errors] == ["E506"]


# ---- datasets and live targets ----------------------------------------------------------

FLOW = """
import asyncio


def echo(input):
    return {"events": [{"type": "policy.evaluate"}] if input.get("guard") else [],
            "output": {"text": input["text"], "length": len(input["text"])}}


async def slow(input):
    await asyncio.sleep(input.get("seconds", 5))
    return "late"


def boom(input):
    raise RuntimeError("flow exploded")


def workflow(input):
    return {"status": "completed", "memory": {"done": True}, "visited_nodes": ["a"],
            "total_tokens_used": 10}
"""


def test_dataset_rows_become_cases(tmp_path: Path) -> None:
    (tmp_path / "flow.py").write_text(FLOW, encoding="utf-8")
    (tmp_path / "rows.json").write_text(
        """[
          {"input": {"text": "hello"}, "expectedOutput": {"length": 5, "text": "hello"},
           "metadata": {"id": "case-1"}},
          {"input": {"text": "hi", "guard": true}, "expectedOutput": {"text": "hi", "length": 3},
           "expectedBehavior": {"guardEvaluated": true}},
          {"input": {"text": "x"}, "expectedBehavior": {"noGuardEvaluation": true}}
        ]""",
        encoding="utf-8",
    )
    path = write(tmp_path, "s.eval", 'case "rows"\n  run flow:echo\n  dataset "rows.json"\n')
    suite = load_suite(path)
    assert not suite.errors, suite.errors
    report = run_suites([suite])
    assert [c.name for c in report.cases] == ["rows [case-1]", "rows [row 2]", "rows [row 3]"]
    assert [[a.status for a in c.assertions] for c in report.cases] == [
        ["pass"],
        ["fail", "pass"],  # length 3 is wrong; the guard ran
        ["pass"],
    ]
    assert report.summary.pass_rate == pytest.approx(2 / 3)


def test_a_dataset_row_of_both_guard_flags_is_w602_and_fails(tmp_path: Path) -> None:
    """verydia's two flags on one row expect a guard evaluated and none: said at check,
    in the row's words (not as two generated assertions), and the case fails as
    verydia's would, with each cause said once."""
    (tmp_path / "flow.py").write_text(FLOW, encoding="utf-8")
    (tmp_path / "rows.json").write_text(
        """[
          {"input": {"text": "hi", "guard": true},
           "expectedBehavior": {"guardEvaluated": true, "noGuardEvaluation": true}},
          {"input": {"text": "hi"}, "expectedBehavior": {"guardEvaluated": true}}
        ]""",
        encoding="utf-8",
    )
    path = write(
        tmp_path, "s.eval", 'case "rows"\n  run flow:echo\n  dataset "rows.json"\n  guards == 0\n'
    )
    suite = load_suite(path)
    assert not suite.errors, suite.errors
    said = [(d.path.rsplit("/", 1)[-1], d.line, d.code, d.message) for d in suite.diagnostics]
    assert said == [
        (
            "rows.json",
            3,
            "W602",
            "this can never pass: `guardEvaluated` and `noGuardEvaluation` are both true, "
            "and a run evaluates a guard or evaluates none",
        ),
        # a row's bound against its case's own, in another file: the file is named
        ("rows.json", 4, "W602", f"this can never pass: it contradicts `guards == 0` on {path}:4"),
    ]
    report = run_suites([suite])
    assert [[a.status for a in c.assertions] for c in report.cases] == [
        ["fail", "fail"],
        ["pass", "fail"],
    ]
    assert report.cases[0].assertions[1].message == "expected guards == 0, found 1"


def test_a_yaml_cases_assertions_are_held_against_each_other(tmp_path: Path) -> None:
    """A YAML case's assertions are a snippet each: a count or bound that contradicts
    another's is W602 all the same, the other's line named (quoted when written as
    evaldsl text)."""
    path = write(
        tmp_path,
        "s.yaml",
        f"""\
        cases:
          - name: c
            cassette: {DEMO}
            assertions:
              - {{kind: budget.maxTokens, value: 500}}
              - tokens > 1000
              - steps >= 3
              - {{kind: budget.maxSteps, value: 2}}
              - {{kind: tool.called, name: get_weather}}
              - {{kind: forbid.tool, name: get_weather}}
        """,
    )
    suite = load_suite(path)
    said = [(d.line, d.code, d.message) for d in suite.diagnostics]
    assert said == [
        (6, "W602", "this can never pass: it contradicts the bound of `tokens` on line 5"),
        (8, "W602", "this can never pass: it contradicts `steps >= 3` on line 7"),
        (
            10,
            "W602",
            'this can never pass: it contradicts the count of tool "get_weather" on line 9',
        ),
    ]


def test_a_dataset_rows_id_names_its_case_as_written(tmp_path: Path) -> None:
    # the names were Python's: "True", "['a', 'b']", and `id: 0` was no id ("row 1")
    (tmp_path / "flow.py").write_text("def run(x=None):\n    return 'ok'\n", encoding="utf-8")
    (tmp_path / "rows.yaml").write_text(
        "- {metadata: {id: 0}}\n- {metadata: {id: true}}\n- {metadata: {id: 1.0}}\n"
        "- {metadata: {id: [a, b]}}\n- {metadata: {id: {k: 1}}}\n"
        "- {metadata: {id: ' ', name: n}}\n- {metadata: {id: null}}\n- {metadata: {}}\n",
        encoding="utf-8",
    )
    path = write(tmp_path, "s.eval", 'case "r"\n  run flow:run\n  dataset "rows.yaml"\n')
    suite = load_suite(path)
    names = [c.name for c in suite.cases]
    shown = ["0", "true", "1.0", '["a","b"]', '{"k":1}', "n", "row 7", "row 8"]
    assert names == [f"r [{n}]" for n in shown]


def test_live_targets_crash_and_timeout_without_stopping_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # (where an error was raised is said from the working folder)
    (tmp_path / "flow.py").write_text(FLOW, encoding="utf-8")
    path = write(
        tmp_path,
        "s.eval",
        """
        case "boom"
          run flow:boom
          input {}
          output == 1
        case "slow"
          run flow:slow
          input {seconds: 5}
          timeout 100ms
          output == "late"
        case "ok"
          run flow:echo
          input {text: "abc"}
          output.length == 3
        case "state"
          run flow:workflow
          input {goal: "g", constraints: ["a", 1, "b"], max_token_budget: 5}
          status == completed
          memory.goal == "g"
          memory.done == true
          state.constraints == ["a", "b"]
          budget == 5
          not tokens within budget
        """,
    )
    report = run_suites([load_suite(path)])
    boom, slow, ok, state = report.cases
    assert (
        boom.score == 0
        and boom.error
        == "run target 'flow:boom' raised RuntimeError: flow exploded (at boom, flow.py:16)"
    )
    assert slow.score == 0 and slow.error is not None and "timed out after 0.1s" in slow.error
    assert ok.passed and ok.score == 1.0
    assert state.passed, [a.message for a in state.assertions if a.status != "pass"]


def test_scores_follow_the_language(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "s.eval",
        f"""
        case "two of three"
          cassette "{DEMO}"
          tool get_weather called; answer contains "sunny"; steps == 7
        case "only skips"
          cassette "{DEMO}"
          answer judged "x"
        """,
    )
    report = run_suites([load_suite(path)])
    two, skips = report.cases
    assert two.score == pytest.approx(2 / 3) and not two.passed
    assert skips.score == 1.0 and skips.passed  # nothing counted
    assert report.summary.overall_score == pytest.approx((2 / 3 + 1) / 2)
    assert Summary.of([], 0).overall_score == 0.0  # an empty suite scores 0


def test_select_and_parallel_options(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "s.eval",
        f'case "alpha"\n  cassette "{DEMO}"\n  steps >= 1\n'
        f'case "beta"\n  cassette "{DEMO}"\n  steps >= 1\n',
    )
    suite = load_suite(path)
    report = run_suites([suite], RunOptions(select="beta"))
    assert [c.name for c in report.cases] == ["beta"]
    report = run_suites([suite], RunOptions(select="*alph*"))
    assert [c.name for c in report.cases] == ["alpha"]


def test_suite_level_assertions_apply_to_every_case(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "s.eval",
        f"""
        no tool get_weather
        case "a"
          cassette "{DEMO}"
          steps >= 1
        case "b"
          cassette "{STRUCTURED}"
          steps >= 1
        """,
    )
    report = run_suites([load_suite(path)])
    assert [[a.status for a in c.assertions] for c in report.cases] == [
        ["fail", "pass"],
        ["pass", "pass"],
    ]


def test_case_with_check_error_is_reported_and_others_run(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "s.eval",
        f'case "bad"\n  cassette "{DEMO}"\n  answer matches /(a)\\1/\n'
        f'case "good"\n  cassette "{DEMO}"\n  steps >= 1\n',
    )
    report = run_suites([load_suite(path)])
    bad, good = report.cases
    assert (
        bad.error is not None and bad.error.startswith("not run: 1 check error") and bad.score == 0
    )
    assert good.passed


def test_a_run_target_whose_module_cannot_be_found_is_a_check_error(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text("def run(x):\n    return x\n")
    suite = tmp_path / "s.eval"
    suite.write_text(
        'case "found"\nrun agent:run\noutput == 1\n\n'
        'case "missing"\nrun nowhere_at_all.agent:run\noutput == 1\n'
    )
    loaded = load_suite(suite)
    codes = [(d.code, d.line) for d in loaded.diagnostics]
    assert codes == [("E509", 6)]
    assert "nowhere_at_all.agent" in loaded.diagnostics[0].message
    found, missing = loaded.cases
    assert found.error is None and missing.error is not None


# ---- two cases of one name -----------------------------------------------------------------


def _w507(suite: Suite) -> list[tuple[int, str]]:
    return [(d.line, d.message) for d in suite.diagnostics if d.code == "W507"]


def test_two_cases_of_one_name_are_a_warning_in_every_front_end(tmp_path: Path) -> None:
    """Reports, `-k`, `diff` and the history tell a suite's cases apart by name: a second
    case of one name is W507 at its line, naming the first (a warning: both still run)."""
    eval_file = write(
        tmp_path,
        "twice.eval",
        f"""
        case "same"
          cassette "{DEMO}"
          tool get_weather called once
        case "other"
          cassette "{DEMO}"
          tool get_weather called once
        case "same"
          cassette "{DEMO}"
          tool get_weather called twice
        """,
    )
    suite = load_suite(eval_file)
    assert _w507(suite) == [
        (
            7,
            'case "same" is named like the case at line 1: reports, `-k`, `evaldsl diff` '
            "and the run history tell cases apart by their names",
        )
    ]
    assert not suite.errors and len(run_suites([suite]).cases) == 3
    yaml_file = write(
        tmp_path,
        "twice.yaml",
        f"""
        suite: twice
        cases:
          - name: same
            cassette: {DEMO}
            assertions: [{{kind: tool.called, name: get_weather}}]
          - name: same
            cassette: {DEMO}
            assertions: [{{kind: tool.called, name: get_weather}}]
        """,
    )
    ((line, message),) = _w507(load_suite(yaml_file))
    assert line == 6 and "at line 3" in message
    # `each` rows are numbered, so one case's rows never share a name
    rows = write(
        tmp_path,
        "rows.eval",
        f"""
        case "row"
          cassette "{DEMO}"
          each [{{n: 1}}, {{n: 1}}]
          tool get_weather called at least once
        """,
    )
    assert _w507(load_suite(rows)) == []


def test_dataset_rows_of_one_id_are_two_cases_of_one_name(tmp_path: Path) -> None:
    (tmp_path / "flow.py").write_text("def run(x):\n    return {'answer': 'ok'}\n")
    (tmp_path / "rows.json").write_text(
        '[{"input": {"q": 1}, "metadata": {"id": "a"}},'
        ' {"input": {"q": 2}, "metadata": {"id": "a"}}]'
    )
    suite = load_suite(
        write(tmp_path, "d.eval", 'case "rows"\n  run flow:run\n  dataset "rows.json"\n')
    )
    assert [m for _, m in _w507(suite)] == [
        'two rows of the dataset of the case at line 1 are both named "rows [a]": reports, '
        "`-k`, `evaldsl diff` and the run history tell cases apart by their names"
    ]
    (hint,) = [d.hint for d in suite.diagnostics if d.code == "W507"]
    assert hint == "give each row of the dataset a `metadata.id` of its own"


def test_a_case_listed_again_by_a_yaml_alias_is_said_so(tmp_path: Path) -> None:
    # both at the anchor's line, it was said to be "two rows of the dataset", with a
    # `metadata.id` hint, in a suite of no dataset
    case = f"&c {{name: same, cassette: {DEMO}, expect: steps <= 3}}"
    suite = load_suite(write(tmp_path, "s.yaml", f"cases:\n  - {case}\n  - *c\n"))
    assert [c.name for c in suite.cases] == ["same", "same"]  # both run, as traceplay runs them
    assert _w507(suite) == [
        (
            2,
            'the case "same" at line 2 is listed twice (a YAML alias): reports, `-k`, '
            "`evaldsl diff` and the run history tell cases apart by their names",
        )
    ]
    (hint,) = [d.hint for d in suite.diagnostics if d.code == "W507"]
    assert hint == "write the second one out with a name of its own, or remove the alias"


# ---- a dataset or rows that were not all read --------------------------------------------


def _dataset_suite(tmp_path: Path, rows: str) -> Suite:
    """A case running a target that passes on anything, even on no input at all, over a
    dataset of `rows` (JSON text)."""
    (tmp_path / "anyflow.py").write_text(
        "def run(input=None):\n    return {'queue': 'billing'}\n", encoding="utf-8"
    )
    (tmp_path / "rows.json").write_text(rows, encoding="utf-8")
    return load_suite(
        write(tmp_path, "d.eval", 'case "rows"\n  run anyflow:run\n  dataset "rows.json"\n')
    )


def _outcomes(suite: Suite) -> list[tuple[str, bool, str | None]]:
    return [(c.name, c.passed, c.error) for c in run_suites([suite]).cases]


def test_a_dataset_rows_problem_keeps_that_row_from_running(tmp_path: Path) -> None:
    """Found by hand: a row whose `expectedBehavior` held a misspelt flag was reported
    as an error of the suite, and its case ran and passed on the expectations left."""
    suite = _dataset_suite(
        tmp_path,
        '[{"input": 1, "expectedOutput": {"queue": "billing"},'
        ' "expectedBehavior": {"guardEvaluatedd": true}, "metadata": {"id": "typo"}},'
        ' {"input": 2, "expectedOutput": {"queue": "billing"},'
        ' "expectedBehavior": {"guardEvaluated": "yes"}, "metadata": {"id": "text"}},'
        ' {"input": 3, "expectedOutput": {"queue": "billing"}, "metadata": {"id": "ok"}}]',
    )
    (typo, text, ok) = _outcomes(suite)
    assert typo[:2] == ("rows [typo]", False) and typo[2] is not None
    assert "`guardEvaluatedd` is not an expectedBehavior field" in typo[2]
    assert text[:2] == ("rows [text]", False) and text[2] is not None
    assert "`guardEvaluated` must be true or false" in text[2]
    assert ok == ("rows [ok]", True, None)


@pytest.mark.parametrize(
    ("rows", "said"),
    [
        (None, 'dataset not found: "rows.json"'),
        ('{"input": 1}', "a dataset is a list of rows"),
    ],
)
def test_a_dataset_file_that_was_not_read_keeps_its_case_from_running(
    tmp_path: Path, rows: str | None, said: str
) -> None:
    """Before, a missing dataset left its case to run its target with no input (a target
    that takes none passed), and a row that is not an object was skipped beside the
    others, which ran."""
    suite = _dataset_suite(tmp_path, rows or "[]")
    if rows is None:
        (tmp_path / "rows.json").unlink()
        suite = load_suite(tmp_path / "d.eval")
    outcomes = _outcomes(suite)
    assert outcomes and all(not passed and error and said in error for _, passed, error in outcomes)


def test_a_dataset_row_that_is_not_an_object_errors_alone(tmp_path: Path) -> None:
    """A row that is not an object (`42` among objects) was an error of the whole file,
    which kept every row of the dataset from running: one bad case stopped the others.
    (It had been skipped without a word before that.) It is its case's own error now,
    named as the rows are, saying where it is, what it is, and the fix; the others run."""
    suite = _dataset_suite(tmp_path, '[{"input": "a"},\n 42,\n {"input": "b"}, null, [1]]')
    errored = {2: ("2:2", "a number"), 4: ("3:18", "null"), 5: ("3:24", "a list")}
    outcomes = _outcomes(suite)
    assert [(name, passed) for name, passed, _ in outcomes] == [
        (f"rows [row {i}]", i not in errored) for i in range(1, 6)
    ]
    for i, (where, found) in errored.items():
        error = outcomes[i - 1][2]
        assert error is not None and error.startswith("not run: 1 check error"), error
        said = f"rows.json:{where}: dataset row {i} must be an object, found {found})"
        assert error.endswith(said), error
    (row,) = [d for d in suite.diagnostics if d.line == 2]
    assert (row.code, row.path, row.column) == ("E507", str(tmp_path / "rows.json"), 2)
    assert row.hint == 'a row is {"input": …, "expectedOutput": …}: write this value as its "input"'


def test_rows_that_are_none_are_a_warning_and_no_case(tmp_path: Path) -> None:
    """An empty dataset ran its case once with no input; `each []` dropped its case
    without a word. Both are W508 at the case, and give no case (pytest's empty
    parameter set)."""
    suite = _dataset_suite(tmp_path, "[]")
    assert _outcomes(suite) == []
    assert [(d.code, d.line, d.message) for d in suite.diagnostics] == [
        ("W508", 1, 'its dataset has no rows: case "rows" is never run')
    ]
    each = load_suite(
        write(
            tmp_path,
            "e.eval",
            f"""
            case "none"
              cassette "{DEMO}"
              each []
              tool get_weather called
            case "one"
              cassette "{DEMO}"
              tool get_weather called
            """,
        )
    )
    assert [c.name for c in run_suites([each]).cases] == ["one"]
    assert [(d.code, d.line, d.message) for d in each.diagnostics] == [
        ("W508", 1, '`each []` has no rows: case "none" is never run')
    ]


def test_a_placeholder_a_row_has_no_value_for_is_a_warning(tmp_path: Path) -> None:
    """An unknown `{{key}}` is left as written, as traceplay leaves it; a test of absence
    passes on it (`not answer contains "{{cty}}"`), so the row that lacks it is named."""
    suite = load_suite(
        write(
            tmp_path,
            "rows.eval",
            f"""
            case "rows"
              cassette "{DEMO}"
              each [{{city: "Xiamen"}}, {{town: "Paris"}}]
              not answer contains "{{{{city}}}}"
              tool get_weather args $.unit == "{{{{unit.name}}}}"
            """,
        )
    )
    # each at the first placeholder the row lacks, where the typo is written
    assert [(d.code, d.line, d.column, d.end_column, d.message, d.hint)
            for d in suite.diagnostics] == [
        ("W509", 4, 24, 32, 'row #2 of case "rows" has no value for `{{city}}`, '
         "`{{unit.name}}`: left as written", "the row has `town`"),
        ("W509", 5, 36, 49, 'row #1 of case "rows" has no value for `{{unit.name}}`: '
         "left as written", "the row has `city`"),
    ]  # fmt: skip


def test_a_problem_a_row_rendered_names_the_rows_case(tmp_path: Path) -> None:
    """A row whose value makes an invalid regex of a template (`/x{{k}}/` with `k: "("`):
    the error named the pattern only, at the template, which every row shares, so which
    row to fix was not said. A problem of the template itself is still said once."""
    suite = load_suite(
        write(
            tmp_path,
            "rows.eval",
            f"""
            case "row {{{{k}}}}"
              cassette "{DEMO}"
              each [{{k: "a"}}, {{k: "("}}, {{k: "b"}}]
              answer matches /x{{{{k}}}}/
              answer matches /a(/
            """,
        )
    )
    assert [(d.code, d.line, d.message) for d in suite.diagnostics] == [
        ("E401", 4, 'in case "row ( #2 [k=(]": invalid regex: missing ): x('),
        ("E401", 5, "invalid regex: missing ): a("),
    ]


def test_a_problem_a_row_rendered_in_a_traceplay_object_names_the_rows_case(
    tmp_path: Path,
) -> None:
    suite = load_suite(
        write(
            tmp_path,
            "rows.yaml",
            f"""
            cases:
              - name: rows
                cassette: {DEMO}
                each: [{{k: "("}}, {{k: "a"}}]
                assertions:
                  - kind: answer.matches
                    regex: "x{{{{k}}}}"
            """,
        )
    )
    assert [(d.code, d.line, d.message) for d in suite.diagnostics] == [
        ("E401", 7, 'in case "rows #1 [k=(]": invalid regex (JavaScript): unterminated group')
    ]


def test_diagnostics_of_one_place_come_in_one_order_whatever_the_hash_seed(
    tmp_path: Path,
) -> None:
    """Two problems of one code at one place (here W509 for two rows at one placeholder)
    were ordered by a set of diagnostics, so by the run's string hashes: `check` printed
    them in another order from run to run."""
    from tests.clitools import run_evaldsl

    write(
        tmp_path,
        "rows.eval",
        f"""
        case "rows"
          cassette "{DEMO}"
          each [{{a: 1}}, {{b: 1}}, {{c: 1}}, {{d: 1}}, {{e: 1}}]
          not answer contains "{{{{x}}}}"
        """,
    )
    outputs = {
        run_evaldsl("check", "rows.eval", cwd=tmp_path, env={"PYTHONHASHSEED": str(seed)}).stdout
        for seed in range(6)
    }
    (only,) = outputs
    assert [line[:20] for line in only.splitlines() if "W509" in line] == [
        "rows.eval:4:24: warn" for _ in range(5)
    ]
    rows = [line.split("row #")[1][0] for line in only.splitlines() if "W509" in line]
    assert rows == ["1", "2", "3", "4", "5"]


@pytest.mark.parametrize(("name", "text"), [("s.yaml", "suite: x\ncases: []\n"),
                                            ("s.json", '{"suite": "x", "cases": []}')])  # fmt: skip
def test_a_suite_of_no_cases_is_a_warning(tmp_path: Path, name: str, text: str) -> None:
    """Beside other suites, a suite whose `cases` is empty vanished from the run without a
    word: W510 at its `cases`, as a case of no assertions is W504."""
    suite = load_suite(write(tmp_path, name, text))
    assert [(d.code, d.line, d.message) for d in suite.diagnostics] == [
        ("W510", 2 if name.endswith("yaml") else 1, '`cases` is empty: suite "x" runs nothing')
    ]
    assert not suite.errors and suite.cases == ()


def test_a_targets_error_says_where_in_its_code_it_was_raised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # (where an error was raised is said from the working folder)
    (tmp_path / "deep.py").write_text(
        "import json\n\n"
        "def helper(x):\n    return x['missing']\n\n"
        "def nested(i):\n    return helper(i)\n\n"
        "def needs_one(i):\n    return i\n\n"
        "def in_the_library(i):\n    return json.loads('{')\n",
        encoding="utf-8",
    )
    path = write(
        tmp_path,
        "s.eval",
        """
        case "nested"
          run deep:nested
          input {a: 1}
          output == 1
        case "no input"
          run deep:needs_one
          output == 1
        case "library"
          run deep:in_the_library
          input {}
          output == 1
        """,
    )
    nested, no_input, library = run_suites([load_suite(path)]).cases
    assert (
        nested.error == "run target 'deep:nested' raised KeyError: 'missing' (at helper, deep.py:4)"
    )
    assert no_input.error == (
        "run target 'deep:needs_one' raised TypeError: needs_one() missing 1 required "
        "positional argument: 'i'; the case has no `input`, so the target is called with no "
        "argument"
    )
    # the innermost frame of the suite's own code, not json's
    assert library.error is not None
    assert library.error.endswith("(at in_the_library, deep.py:13)"), library.error


def test_node_visited_is_said_once_in_its_verdict(tmp_path: Path) -> None:
    (tmp_path / "state.json").write_text(
        '{"status": "completed", "visited_nodes": ["planner", "writer"], "memory": {}}',
        encoding="utf-8",
    )
    path = write(
        tmp_path,
        "s.eval",
        """
        case "n"
          state "state.json"
          node approval_gate visited
          node writer visited
        """,
    )
    (case,) = run_suites([load_suite(path)]).cases
    missing, present = case.assertions
    assert missing.message == 'expected node approval_gate visited, found ["planner","writer"]'
    assert present.message == "node writer visited"


def _codes(suite: Suite) -> list[tuple[str, int, str]]:
    return [(d.code, d.line, d.message) for d in suite.diagnostics]


def test_a_yaml_case_whose_text_holds_no_assertion_is_w504_as_in_eval(tmp_path: Path) -> None:
    """`assertions: [""]`, a block of comments and `expect: ""` checked nothing and passed
    without a word, where `.eval` and `expect: []` say W504; a line that does not parse
    says so instead (E1xx), as in `.eval`."""
    suite = load_suite(
        write(
            tmp_path,
            "e.yaml",
            f"""
            cases:
              - name: a
                cassette: {DEMO}
                assertions: [""]
              - name: b
                cassette: {DEMO}
                expect: |
                  # tool execute_shell never called
              - name: c
                cassette: {DEMO}
                expect: ""
              - name: d
                cassette: {DEMO}
                expect: "tool called"
            """,
        )
    )
    found = [(code, line) for code, line, _ in _codes(suite)]
    assert found == [("W504", 2), ("W504", 5), ("W504", 9), ("E101", 14)], _codes(suite)
    assert _codes(suite)[0][2] == (
        'case "a" has no assertions: it checks nothing '
        "(a case without assertions passes when its run succeeds)"
    )


def test_dataset_rows_that_expect_nothing_are_w504(tmp_path: Path) -> None:
    """A verydia row with `guardEvaluated: false`, or with no expectation, in a case of
    no assertions of its own passed on 0 assertions without a word."""
    suite = _dataset_suite(
        tmp_path,
        '[{"input": 1, "expectedBehavior": {"guardEvaluated": false}},'
        ' {"input": 2}, {"input": 3, "expectedOutput": {"queue": "billing"}}]',
    )
    assert _codes(suite) == [
        ("W504", 1, 'case "rows" has no assertions and 2 of the 3 rows of its dataset expect '
         'nothing ("row 1", "row 2"): those cases always pass'),
    ]  # fmt: skip
    # a row with an error does not run, so it is not among those that always pass
    errored = _dataset_suite(
        tmp_path, '[{"input": 1}, 5, {"input": 2, "expectedBehavior": {"guardEvaluated": "yes"}}]'
    )
    assert [m for c, _, m in _codes(errored) if c == "W504"] == [
        'case "rows" has no assertions and 1 of the 3 rows of its dataset expect nothing '
        '("row 1"): those cases always pass'
    ]
    assert [c for c, _, _ in _codes(_dataset_suite(tmp_path, "[5]"))] == ["E507"]  # no W504
    # an error of the file (a key written twice) is every row's: none runs, none passes
    twice = _dataset_suite(tmp_path, '[{"input": 1, "input": 2}, {"input": 3}]')
    assert [c for c, _, _ in _codes(twice)] == ["E504"]
    every = _dataset_suite(tmp_path, '[{"input": 1}]')
    assert [m for _, _, m in _codes(every)] == [
        'case "rows" has no assertions and no row of its dataset expects anything ("row 1"): '
        "those cases always pass"
    ]
    (tmp_path / "own.eval").write_text(
        'case "rows"\n  run anyflow:run\n  dataset "rows.json"\n  output.queue == "billing"\n',
        encoding="utf-8",
    )
    assert load_suite(tmp_path / "own.eval").diagnostics == ()  # its own assertion checks


def test_yaml_refuses_fields_eval_refuses(tmp_path: Path) -> None:
    """`input` on a state or cassette case and `format` beside `cassette` were taken
    without a word: the errors `.eval` gives for `input` and `cassette … as`. A bare
    `timeout` is seconds (as the schema says), but `timeout: 5000` ran for 83 minutes
    where a cycgraph user meant milliseconds: said, unless a unit is written."""
    state = ROOT / "examples" / "research" / "states" / "completed.json"
    suite = load_suite(
        write(
            tmp_path,
            "s.yaml",
            f"""
            timeout: 5000
            cases:
              - name: seeded
                state: {state}
                input: {{topic: x}}
                expect: memory has topic
              - name: c
                cassette: {DEMO}
                format: otel
                timeout: 2.5
                expect: tool get_weather called
              - name: t
                trace: {DEMO}
                format: traceplay
                timeout: 5000s
                expect: tool get_weather called
            """,
        )
    )
    assert [(d.code, d.line, d.column, d.message, d.hint) for d in suite.diagnostics] == [
        ("W511", 1, 10, "`timeout: 5000` is 5000 seconds (about 83 minutes): a bare number "
         "is seconds", "write `5000s` if you mean it, or `5000ms` for milliseconds"),
        ("E206", 5, 5, "`input` is the input of a `run` target, and this case has none",
         "add `run: package.module:function`, or remove `input`"),
        ("E206", 9, 5, "`format` names the format of a `trace:` file, and a `cassette` case "
         "has none", "write `trace: FILE` with `format: NAME`, or remove `format` (a "
         "`cassette:` file's format is detected)"),
        # (a case's timeout bounds a `run` target: on a recording it limits nothing)
        ("W514", 10, 5, "`timeout` limits a `run` target's call, and this case reads a "
         "recorded run: it limits nothing", "remove it; `latency < 5s` tests the time the "
         "recorded run took"),
        ("W514", 15, 5, "`timeout` limits a `run` target's call, and this case reads a "
         "recorded run: it limits nothing", "remove it; `latency < 5s` tests the time the "
         "recorded run took"),
    ]  # fmt: skip
    assert [c.timeout for c in suite.cases] == [5000.0, 2.5, 5000.0]


def test_a_case_name_is_its_text_and_each_fills_it_in(tmp_path: Path) -> None:
    """`name: 42` became `case #1`; `{{city}}` in a case name stayed as written, where
    `each` replaces it in every string of the case (docs/language.md §2.4)."""
    numbered = load_suite(
        write(
            tmp_path,
            "n.yaml",
            f"""
            cases:
              - {{name: 42, cassette: {DEMO}, expect: tool get_weather called}}
              - {{name: [a], cassette: {DEMO}, expect: tool get_weather called}}
              - name: "city {{{{city}}}}"
                cassette: {DEMO}
                each: [{{city: Xiamen}}, {{town: Paris}}]
                expect: tool get_weather called
            """,
        )
    )
    assert [c.name for c in numbered.cases] == [
        "42",
        "case #2",
        "city Xiamen #1 [city=Xiamen]",
        "city {{city}} #2 [town=Paris]",
    ]
    assert [(d.code, d.line, d.message) for d in numbered.diagnostics] == [
        ("E507", 3, "`name` must be text"),
        ("W509", 4, 'row #2 of case "city {{city}}" has no value for `{{city}}`: left as written'),
    ]  # fmt: skip
    dsl = load_suite(
        write(
            tmp_path,
            "nm.eval",
            f"""
            case "city {{{{city}}}}"
              cassette "{DEMO}"
              each [{{city: "Xiamen"}}, {{city: "Tokyo"}}]
              tool get_weather called
            """,
        )
    )
    assert [c.name for c in dsl.cases] == [
        "city Xiamen #1 [city=Xiamen]",
        "city Tokyo #2 [city=Tokyo]",
    ]


def test_suffixes_are_compared_whatever_their_case(tmp_path: Path) -> None:
    """`b.YAML` was read as `.eval` text (an error at each YAML line), and a folder run
    passed over `.YAML` and `.EVAL` files without a word."""
    from evaldsl.suites.files import discover

    write(tmp_path, "b.YAML", f"cases:\n  - {{name: a, cassette: {DEMO}, expect: tool x called}}\n")
    write(tmp_path, "c.EVAL", f'case "c"\n  cassette "{DEMO}"\n  tool get_weather called\n')
    write(tmp_path, "d.Json", '{"cases": [{"name": "d", "cassette": "x.jsonl", "expect": 1}]}')
    assert [p.name for p in discover([tmp_path])[0]] == ["b.YAML", "c.EVAL", "d.Json"]
    yaml_suite = load_suite(tmp_path / "b.YAML")
    assert [c.name for c in yaml_suite.cases] == ["a"]
    assert yaml_suite.diagnostics == ()
    assert [c.name for c in load_suite(tmp_path / "c.EVAL").cases] == ["c"]
    assert "E501" in {d.code for d in load_suite(tmp_path / "d.Json").diagnostics}


@pytest.mark.parametrize("written", ['cassette: ""', "state: 3", "run: [a]"])
def test_a_yaml_source_written_wrong_is_said_once(tmp_path: Path, written: str) -> None:
    # (not also "has no source": the case has one, written wrong)
    path = tmp_path / "s.yaml"
    path.write_text(f"suite: s\ncases:\n  - name: a\n    {written}\n    expect: steps >= 1\n")
    found = [(d.code, d.line) for d in load_suite(path).diagnostics]
    assert found == [("E507", 4)]


def test_a_dataset_rows_problems_are_at_their_field(tmp_path: Path) -> None:
    (tmp_path / "anyflow.py").write_text("def run(input=None):\n    return 1\n", encoding="utf-8")
    (tmp_path / "rows.yaml").write_text(
        "- input: 1\n"
        "  expectedOutput: 1\n"
        "  expectedBehavior: {guardEvaluated: yes}\n"
        "- input: 2\n"
        "  expectedOutput: 1\n"
        "  expectedBehavior:\n"
        "    guardEvaluatedd: true\n"
        "  metdata: {id: x}\n",
        encoding="utf-8",
    )
    suite = load_suite(
        write(tmp_path, "d.eval", 'case "rows"\n  run anyflow:run\n  dataset "rows.yaml"\n')
    )
    found = sorted(
        (d.line, d.column, d.message, d.hint)
        for d in suite.diagnostics
        if d.path.endswith("rows.yaml")
    )
    assert [(line, column) for line, column, *_ in found] == [(3, 38), (7, 5), (8, 3)]
    assert found[0][2:] == (
        "`guardEvaluated` must be true or false",
        'YAML 1.2, as evaldsl reads it, takes `yes` as the text "yes": write true or false',
    )


def test_a_suite_of_lone_carriage_returns_is_one_error_at_the_first(tmp_path: Path) -> None:
    # (its lines are not where an editor shows them: refused, as fmt and the editor do)
    path = tmp_path / "mac.eval"
    path.write_bytes(b'case "a"\r\n  cassette "x.jsonl"\r  steps >= 1\r')
    (d,) = load_suite(path).diagnostics
    assert (d.code, d.line, d.column) == ("E504", 2, 21)
    assert d.message == "a line ends with a lone carriage return (CR, an old Mac line ending)"


# ---- a YAML problem inside one case ------------------------------------------------------


@pytest.mark.parametrize(
    ("middle", "said"),
    [
        (
            "{ kind: tool.called, name: get_weather, name: get_crypto_price }",
            "5:58: duplicate key `name` in this mapping",
        ),
        ("{ kind: answer.contains, text: !secret api_key }", "5:49: the YAML tag `!secret`"),
        ("{ kind: answer.contains, text: &a [*a] }", "5:49: a recursive alias"),
    ],
)
def test_a_yaml_problem_inside_one_case_keeps_only_that_case_from_running(
    tmp_path: Path, middle: str, said: str
) -> None:
    """Found by a tester: a duplicate key inside one case stopped every case ("the
    suite's header has errors"), and a YAML tag inside one dropped every case from the
    report; the others now run, and the case says its problem at its line and column."""
    path = write(
        tmp_path,
        "s.yaml",
        f"""
        cases:
          - {{ name: first, cassette: "{DEMO}", expect: steps <= 9 }}
          - name: middle
            cassette: "{DEMO}"
            assertions: [{middle}]
          - {{ name: last, cassette: "{DEMO}", assertions: [{{ kind: forbid.tool, name: rm }}] }}
        """,
    )
    outcomes = _outcomes(load_suite(path))
    assert [(name, passed) for name, passed, _ in outcomes] == [
        ("first", True),
        ("middle", False),
        ("last", True),
    ]
    error = outcomes[1][2]
    assert error is not None and error.startswith("not run: 1 check error") and said in error


def test_a_refused_yaml_value_outside_the_cases_still_stops_the_suite(tmp_path: Path) -> None:
    """A tag in the suite's header (or an alias into a refused case from another) is the
    whole file's problem: no case of it is read."""
    path = write(
        tmp_path,
        "s.yaml",
        f"""
        description: !secret x
        cases:
          - {{ name: first, cassette: "{DEMO}", expect: steps <= 9 }}
        """,
    )
    suite = load_suite(path)
    assert not suite.cases and [d.code for d in suite.diagnostics] == ["E510"]


# ---- calls an LLM response holds that no tool.call event records -------------------------

HELD = ROOT / "tests" / "fixtures" / "held" / "calls_in_responses.jsonl"


def test_a_tool_test_that_would_pass_on_calls_only_a_response_holds_is_an_error(
    tmp_path: Path,
) -> None:
    """Found by a tester: a cassette whose get_weather call is recorded only inside the
    response (`choices[0].message.tool_calls`, no tool.call event) passed `no tool
    get_weather`, as traceplay does: a pass on a recorded call never read."""
    lines = [
        "no tool get_weather",
        "tool get_weather called at most 0 times",
        "tools is empty",
        "tool calls == 0",
        "not tools contains get_weather",
        "tool get_weather called at most 1 time",  # (holds with the held call too)
        "no tool search",
        "tool get_weather called",  # (fails: not counted, never a pass)
    ]
    text = f'case "c"\n  cassette "{HELD}"\n' + "".join(f"  {t}\n" for t in lines)
    (case,) = run_suites([load_suite(write(tmp_path, "s.eval", text))]).cases
    got = [a.status for a in case.assertions]
    assert got == ["error"] * 5 + ["pass", "pass", "fail"]
    said = case.assertions[0].message
    assert "the LLM responses hold calls no tool.call event records (get_weather: 1)" in said
    assert "record each call as a tool.call event" in said


# A traceplay cassette of a Gemini model: traceplay keeps the parsed body, whose call is a
# `functionCall` part of `candidates[0].content.parts` (generateContent's REST response)
GEMINI_HELD = [
    '{"cassette": "traceplay", "version": 1, "recordedAt": "2026-09-01T00:00:00.000Z"}',
    '{"id": "r1", "seq": 0, "type": "llm.request", "provider": "gemini", "model": '
    '"gemini-2.0-flash", "messages": [], "requestHash": "h1"}',
    '{"id": "r2", "seq": 1, "type": "llm.response", "requestId": "r1", "status": 200, '
    '"output": {"candidates": [{"content": {"role": "model", "parts": [{"functionCall": '
    '{"name": "get_weather", "args": {"city": "Oslo"}}}]}, "finishReason": "STOP"}], '
    '"usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5}}, '
    '"usage": {"promptTokens": 10, "completionTokens": 5}}',
]


@pytest.mark.parametrize("reference", [False, True], ids=["generated", "reference"])
@pytest.mark.parametrize("typed", [False, True], ids=["whole", "typed"])
def test_a_call_only_a_gemini_response_holds_is_no_pass_of_no_tool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reference: bool, typed: bool
) -> None:
    """Found by the agents hunt: a cassette of a Gemini model whose get_weather call is
    only a `functionCall` part of the response passed `no tool get_weather` and `tools is
    empty` (the held calls were read from OpenAI's and Anthropic's bodies only, and the
    typed pass looked for `_calls"`, `_use"`, `_call"`): an error verdict now, in both
    passes, whole or by the typed decoder."""
    from evaldsl.runs import passes
    from evaldsl.runs.detect import load_run

    monkeypatch.setattr(passes, "GENERATE_FROM", 0)
    monkeypatch.setattr(passes, "GENERATE_FROM_EVENTS", 0)
    monkeypatch.setattr(passes, "TYPED_FROM", 0 if typed else 1 << 62)
    if reference:
        monkeypatch.setenv("EVALDSL_REFERENCE", "1")
    path = write(tmp_path, "gemini.jsonl", "\n".join(GEMINI_HELD) + "\n")
    program = evaldsl.compile("no tool get_weather\ntools is empty\nno tool search")
    verdicts = program.check(load_run(path))
    assert verdicts.statuses == ["error", "error", "pass"]
    assert "(get_weather: 1)" in verdicts.verdicts[0].message


@pytest.mark.parametrize("reference", [False, True], ids=["generated", "reference"])
@pytest.mark.parametrize("verydia_late", [False, True], ids=["events", "verydia-at-the-end"])
def test_an_events_file_decides_its_format_only_when_a_held_call_asks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reference: bool, verydia_late: bool
) -> None:
    """A JSONL of events is "verydia" when any line is of a verydia type, which only a
    scan of the whole file can tell. A check reads the format only where an LLM response
    holds a call (in a verydia file such calls are not the recording's to count): the
    scan is made then, a verydia line at the very end still counts, and a generated
    pass over a file whose responses hold no call never makes it (the reference pass,
    which makes no such note, reads the file again for held calls, and decides it)."""
    from evaldsl.runs.detect import load_run

    if reference:
        monkeypatch.setenv("EVALDSL_REFERENCE", "1")
    events = [line for line in HELD.read_text().splitlines()[1:] if line.strip()]
    filler = '{"type": "user.message", "content": "%s"}' % ("more " * 60)
    tail = ['{"type": "policy.evaluate", "policy": "p"}'] if verydia_late else []
    # (2,100 events, 650 KB: a smaller file is indexed by the reference pass)
    held = write(tmp_path, "held.jsonl", "\n".join(events + [filler] * 2100 + tail) + "\n")
    program = evaldsl.compile("no tool get_weather\ntool get_weather called at most 0 times")
    run = load_run(held)
    assert run.given_format == ("verydia" if verydia_late else "events")
    run = load_run(held)
    verdicts = program.check(run)
    assert run.format == ("verydia" if verydia_late else "events")
    want = "pass" if verydia_late else "error"
    assert verdicts.statuses == [want, want]
    # the same events with no call in any response: the check never decides the format
    plain = [e for e in events if not ('"llm.response"' in e and "tool_calls" in e)]
    quiet = write(tmp_path, "quiet.jsonl", "\n".join(plain + [filler] * 2100 + tail) + "\n")
    run = load_run(quiet)
    assert program.check(run).statuses == ["pass", "pass"]
    assert isinstance(run.given_format, LateFormat) and run.given_format.decided is reference
    assert run.read is not None and run.read.format == ("verydia" if verydia_late else "events")
    assert run.given_format.decided
    # (a run sent to a worker keeps its format, decided or not)
    assert pickle.loads(pickle.dumps(load_run(quiet))).format == run.format


def test_inspect_notes_the_calls_only_a_response_holds() -> None:
    from evaldsl.runs import index, passes
    from evaldsl.runs.cassette import load_cassette
    from evaldsl.runs.summary import summarize

    for index_run in (index.index_run, passes.index_run):  # (the reference, the generated)
        facts = index_run(load_cassette(HELD), index.Needs(counted={"get_weather"}))
        assert facts.held_calls() == {"get_weather": 1}
    demo = index.index_run(load_cassette(DEMO), index.Needs())  # (its call has its event)
    assert demo.held_calls() == {}
    (summary,) = summarize(str(HELD))
    assert any("no tool.call event records (get_weather: 1)" in n for n in summary.notes)


def _held_as_said(events: list[Any]) -> dict[str, int]:
    """`heldcalls.held_calls` as its docstring says it, read the plain way: every call
    event named and counted, every response's output walked whole."""
    held: dict[str, int] = {}
    called: dict[str, int] = {}
    for event in events:
        if event.get("type") == "llm.response":
            output = event.get("output")
            names: list[Any] = []
            if isinstance(output, dict):
                choices = output.get("choices")
                if isinstance(choices, list) and choices and isinstance(choices[0], dict):
                    message = choices[0].get("message")
                    calls = message.get("tool_calls") if isinstance(message, dict) else None
                    for call in calls if isinstance(calls, list) else ():
                        function = call.get("function") if isinstance(call, dict) else None
                        names.append(function.get("name") if isinstance(function, dict) else 0)
                for key, kind in (("content", "tool_use"), ("output", "function_call")):
                    items = output.get(key)
                    for item in items if isinstance(items, list) else ():
                        if isinstance(item, dict) and item.get("type") == kind:
                            names.append(item.get("name"))
                candidates = output.get("candidates")
                if isinstance(candidates, list) and candidates and isinstance(candidates[0], dict):
                    content = candidates[0].get("content")
                    parts = content.get("parts") if isinstance(content, dict) else None
                    for part in parts if isinstance(parts, list) else ():
                        if isinstance(part, dict):
                            made = part.get("functionCall", part.get("function_call"))
                            names.append(made.get("name") if isinstance(made, dict) else 0)
            for name in names:
                if isinstance(name, str) and name:
                    held[name] = held.get(name, 0) + 1
        else:
            kind = event.get("type")
            name = event.get("name") if kind == "tool.call" else None
            if kind == "mcp.call":
                name = event.get("name", event.get("tool"))
            if isinstance(name, str) and name:
                called[name] = called.get(name, 0) + 1
    return {n: k - called.get(n, 0) for n, k in held.items() if k > called.get(n, 0)}


_NAMES = st.sampled_from(["a", "b", "", 3, None])
_CALLISH = st.one_of(
    st.builds(lambda n: {"function": {"name": n}}, _NAMES),
    st.builds(
        lambda t, n: {"type": t, "name": n},
        st.sampled_from(["tool_use", "function_call", "text"]),
        _NAMES,
    ),
    st.sampled_from([None, "x", 1, [], {}]),
)
_LISTS = st.one_of(st.lists(_CALLISH, max_size=3), st.sampled_from([None, "text", {}]))
_MESSAGE = st.one_of(
    st.builds(lambda c: {"role": "assistant", "tool_calls": c}, _LISTS),
    st.builds(lambda: {"role": "assistant", "content": "hi"}),
    st.sampled_from([None, "m", []]),
)
_OUTPUT = st.one_of(
    st.builds(lambda m: {"choices": [{"message": m}]}, _MESSAGE),
    st.builds(
        lambda c: {"choices": c},
        st.one_of(
            st.lists(st.builds(lambda m: {"message": m}, _MESSAGE), max_size=2),
            st.sampled_from([None, "c", [], [1]]),
        ),
    ),
    st.fixed_dictionaries(
        {},
        optional={
            "choices": st.just([{"message": {"content": "x"}}]),
            "content": _LISTS,
            "output": _LISTS,
        },
    ),
    st.builds(  # (Gemini's: `functionCall` parts, or `function_call` as its SDK dumps them)
        lambda k, n: {"candidates": [{"content": {"parts": [{"text": "t"}, {k: {"name": n}}]}}]},
        st.sampled_from(["functionCall", "function_call", "text"]),
        _NAMES,
    ),
    st.sampled_from(["an answer", None, 7, []]),
)
_EVENT = st.one_of(
    st.builds(lambda o: {"type": "llm.response", "output": o}, _OUTPUT),
    st.builds(lambda n: {"type": "tool.call", "name": n}, _NAMES),
    st.builds(
        lambda t, n: {"type": "mcp.call", "tool": t, **({"name": n} if n != 3 else {})},
        _NAMES,
        _NAMES,
    ),
    st.sampled_from([{"type": "tool.result"}, {"type": "llm.request"}, {"type": ["x"]}, {}]),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_EVENT, max_size=12))
def test_held_calls_are_what_a_plain_reading_of_every_event_finds(events: list[Any]) -> None:
    """`held_calls` names the call events only when a response holds a call, and passes
    over a chat completion without `tool_calls` by its keys: the same counts, in the same
    order, as naming every event and walking every output."""
    from evaldsl.runs.heldcalls import held_calls

    got = held_calls(events)
    want = _held_as_said(events)
    assert got == want and list(got) == list(want)


def test_the_tests_a_held_call_could_break_have_the_pass_note_responses_holding_calls() -> None:
    import evaldsl
    from evaldsl.runs.cassette import load_cassette
    from evaldsl.runs.codegen import generate
    from evaldsl.runs.index import RunFacts

    for text, held in [
        ("no tool a", True),
        ("tool a called at most 2 times", True),
        ("tool a never called", True),
        ("tool a called", False),
        ("tool a called at least 2 times", False),
        ("tools contains a", True),
        ("tool calls == 0", True),
        ("steps > 1", False),
    ]:
        assert evaldsl.compile(text).cases[0].needs.held is held, text
    stream = load_cassette(HELD).events
    assert stream is not None
    events = list(stream)  # (the pass takes a list as it is, a stream in lists)
    needs = evaldsl.compile("no tool get_weather").cases[0].needs
    trace = generate(needs).run(events, None, True)
    assert not trace.holds_no_call
    assert RunFacts(trace, None, None, None, events=events).held_calls() == {"get_weather": 1}


# a response that holds a call in each of the three shapes, or names one without holding
# it (no name, a text that says `tool_calls`, a type that is no call): the note must tell
_SHAPED = st.builds(
    lambda shape, name: {
        "type": "llm.response",
        "output": [
            {"choices": [{"message": {"tool_calls": [{"function": {"name": name}}]}}]},
            {"content": [{"type": "tool_use", "name": name}]},
            {"output": [{"type": "function_call", "name": name}]},
            {"choices": [{"message": {"content": f"no tool_calls here, {name}"}}]},
            {"output": [{"type": "function_call_output", "name": name}]},
            # (a chat completion's plain message beside items that hold a call)
            {
                "choices": [{"message": {"content": "x"}}],
                "output": [{"type": "function_call", "name": name}],
            },
            {
                "choices": [{"message": {"content": "x"}}],
                "content": [{"type": "tool_use", "name": name}],
            },
            # (what the dict pass tells inline, beside what it asks `holds_calls`: a
            # message that is a text naming `tool_calls`, a body of more keys than
            # `choices`, no choice at all, a choice that is a text)
            {"choices": [{"message": f"tool_calls {name}"}]},
            {"choices": [{"message": {"tool_calls": [{"function": {"name": name}}]}}], "id": 1},
            {"choices": [{"message": {"content": name}}], "usage": {"prompt_tokens": 1}},
            {"choices": []},
            {"choices": [name]},
        ][shape],
    },
    st.integers(0, 11),
    st.sampled_from(["a", "b", ""]),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_SHAPED, _EVENT), max_size=12), st.booleans())
def test_a_generated_pass_that_sees_no_response_hold_a_call_spares_the_second_read(
    events: list[Any], answers: bool
) -> None:
    """A generated pass for a test a held call could break notes whether any response
    may hold a call; when none may, `RunFacts.held_calls` answers without reading the
    events again, and always what the read finds (with the answers read by the pass or
    not: the output is then read once)."""
    from evaldsl.runs.codegen import generate
    from evaldsl.runs.heldcalls import held_calls, response_call_names
    from evaldsl.runs.index import Needs, RunFacts

    needs = Needs(counted={"a"}, held=True, answer_tail=3 if answers else 0)
    try:
        trace = generate(needs).run(events, None, True)
    except TypeError:  # (a call named by no text: the run's error, never read further)
        return
    facts = RunFacts(trace, None, None, None, events=events)
    assert facts.held_calls() == held_calls(events)
    # (exactly when no response holds a call: an Anthropic text reply is no call)
    responses = [e.get("output") for e in events if e.get("type") == "llm.response"]
    assert trace.holds_no_call is not any(map(response_call_names, responses))
    if trace.holds_no_call:
        assert held_calls(events) == {}


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.one_of(_SHAPED, _EVENT), max_size=12), st.booleans(), st.booleans(), st.booleans()
)
def test_a_pass_over_typed_decoded_events_notes_responses_holding_calls_exactly(
    events: list[Any], escaped: bool, answers: bool, tokens: bool
) -> None:
    """The passes over a recording decoded by the typed decoder (each kind a struct, or
    dicts) keep a response's output undecoded, and decode it to ask whether it holds a
    call only where its text may name one (`codegen.NAMES_CALL`): the note is exact
    there too, a key or type spelled with `\\u` escapes included, so that a passing
    `no tool` never needs the recording read again, and never passes on a held call
    (with `tokens` read too, each output is first looked through once for either
    question: `codegen.NAMES_EITHER`)."""
    import json
    import tempfile

    from evaldsl.runs import passes
    from evaldsl.runs.cassette import EventStream
    from evaldsl.runs.decode import Undecodable, kind_events, typed_batches
    from evaldsl.runs.heldcalls import held_calls, response_call_names
    from evaldsl.runs.index import Needs, RunFacts

    lines = [json.dumps(event) for event in events]
    if escaped:  # (JSON may spell any letter as \uXXXX: `tool_calls` as `tool\u005fcalls`)
        lines = [line.replace("_", "\\u005f") for line in lines]
    responses = [e.get("output") for e in events if e.get("type") == "llm.response"]
    holds = any(map(response_call_names, responses))
    needs = Needs(counted={"a"}, held=True, answer_tail=3 if answers else 0, tokens=tokens)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "events.jsonl"
        path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        stream = EventStream(path, header=False)
        by_kind = passes.pass_for(needs, raw=True, by_kind=True)
        as_dicts = passes.pass_for(needs, raw=True)
        for made, decoder in (
            (by_kind, lambda: kind_events(stream, by_kind.reads)),
            (as_dicts, lambda: typed_batches(stream, passes.read_fields(needs))),
        ):
            try:
                with decoder() as decoded:
                    trace = made.run(decoded, stream.__iter__, False)
            except (Undecodable, TypeError):  # (the careful reader's to report)
                continue
            assert trace.holds_no_call is not holds
            facts = RunFacts(trace, None, None, None, events=events)
            assert facts.held_calls() == held_calls(events)


@pytest.mark.parametrize(
    ("written", "said"),
    [
        ("memory.summary contains 42", 'a number is never inside a text: write `contains "42"`'),
        ("memory.flag contains true", 'a boolean is never inside a text: write `contains "true"`'),
        ("memory.n contains 4", None),  # (a number in a number: no text to quote)
        ('memory.summary contains "43"', None),
    ],
)
def test_a_number_looked_for_in_a_text_says_to_quote_it(
    tmp_path: Path, written: str, said: str | None
) -> None:
    """Found by a tester: `expected memory.summary contains 42, found "order 42 shipped"`
    did not say why (containment is typed, where cycgraph searched the JSON text)."""
    (tmp_path / "s.json").write_text(
        '{"status": "completed", "memory": {"summary": "order 42 shipped", "flag": "true",'
        ' "n": 42}}'
    )
    suite = write(tmp_path, "s.eval", f'case "c"\n  state "s.json"\n  {written}\n')
    (case,) = run_suites([load_suite(suite)]).cases
    (verdict,) = case.assertions
    assert verdict.status == "fail"
    assert (said in verdict.message) if said else ("never inside" not in verdict.message)


@pytest.mark.parametrize("line", ["cassette", 'cassette "a.jsonl" "b"', "cassette 3"])
def test_a_source_line_that_does_not_parse_is_not_also_no_source(line: str) -> None:
    """A case whose source line has a syntax error gets that error, not also "has no
    source" (E503): the file's lines, split only when a syntax error asks, tell that the
    broken line is a source line."""
    from evaldsl.suites.build import check_text

    text = f'case "a"\n  {line}\n  tool x called\n'
    assert [d.code for d in check_text(text, "s.eval")] == ["E101"]


def test_a_yaml_1_1_merge_key_is_said_to_merge_nothing(tmp_path: Path) -> None:
    # `{<<: *base, times: 1}` merges the anchored fields in YAML 1.1; YAML 1.2 (evaldsl's
    # reader, and traceplay's) has no merge keys: it said only "needs `kind:`"
    from tests.clitools import run_evaldsl

    (tmp_path / "run.jsonl").write_text(
        (ROOT / "examples" / "weather" / "cassettes" / "xiamen.jsonl").read_text("utf-8")
    )
    (tmp_path / "s.yaml").write_text(
        "x-base: &base\n  kind: tool.called\n  name: get_weather\n"
        "x-case: &case\n  cassette: run.jsonl\n"
        "cases:\n  - name: one\n    cassette: run.jsonl\n    assertions:\n"
        "      - {<<: *base, times: 1}\n"
        "  - <<: *case\n    name: two\n    expect: [tool get_weather called]\n"
    )
    done = run_evaldsl("check", "s.yaml", cwd=tmp_path)
    assert "s.yaml:10:10: error[E506]: an assertion object needs `kind:`" in done.stdout
    assert "s.yaml:11:5: error[E508]: `<<` is not a case field: YAML 1.2 has no merge keys" in (
        done.stdout
    )
    assert done.stdout.count("anchor the whole object") == 2, done.stdout
