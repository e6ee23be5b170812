"""Tests for the Python API's entry points: what `compile`, `Program.check`, `expect`,
`load_run` and `run_suites` accept, and the errors, in the user's words, for what they do
not. What was not read is never a pass."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import evaldsl
from evaldsl.suites import discover, load_suite

ROOT = Path(__file__).resolve().parent.parent
CASSETTE = ROOT / "examples" / "weather" / "cassettes" / "xiamen.jsonl"
SUITE = ROOT / "examples" / "weather" / "weather.eval"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (b"examples/weather/cassettes/xiamen.jsonl", "bytes are not a run"),
        (None, "None is not a run"),
        (5, "a number is not a run"),
        ({"foo": 1}, "is a recognised trace or state: the first items have keys `foo`"),
        ({}, "holds an empty object, not a trace or a state"),
    ],
)
def test_check_of_a_value_that_is_not_a_run_is_an_error_not_a_pass(
    value: Any, message: str
) -> None:
    # every one of these holds "foo", "main" or "None" in its repr: read as an answer, it
    # would pass
    program = evaldsl.compile('answer contains "o"; steps >= 0')
    result = program.check(value)
    assert not result.passed
    assert result.statuses == ["error", "error"]
    assert result.error is not None and message in result.error
    with pytest.raises(AssertionError, match="could not be checked"):
        evaldsl.expect(value, 'answer contains "o"')


def _shared(levels: int) -> list[Any]:
    """A list holding one list twice, `levels` deep: 2^`levels` values as JSON."""
    value: list[Any] = [1]
    for _ in range(levels):
        value = [value, value]
    return value


@pytest.mark.parametrize(
    ("run", "message"),
    [
        # (the first five were tracebacks from the index pass: `'str' object has no
        # attribute 'get'`, `'int' object is not iterable`, `unsupported operand type(s)`)
        (evaldsl.Run(events="abc"), "its events must be a list of event objects, found a string"),
        (evaldsl.Run(events={"type": "tool.call"}), "its events must be a list of event objects"),
        (evaldsl.Run(events=5), "its events must be a list of event objects, found a number"),
        (
            evaldsl.Run(events=[{"type": "tool.call", "name": "get_weather"}], latency_ms="2"),
            "its latency_ms must be a number, found a string",
        ),
        (
            evaldsl.Run(events=[{"type": "tool.call", "name": "get_weather"}], path=5),
            "its path must be text, found a number",
        ),
        # (these were verdicts on what was never read: `fail`, where a file holding the
        # same state is the run's error)
        (evaldsl.Run(events=None, state="completed"), "its state must be an object, found a"),
        (evaldsl.Run(events=None, state={"status": 5}), '"status" must be text, found a number'),
        # (its repr was read as the answer: `answer contains "x"` passed on b"x")
        (evaldsl.Run(events=None, output=b"x"), "its output must be JSON data"),
        (evaldsl.Run(events=None, output=object()), "found object"),
        # (below its top too: `answer contains "x"` passed on {"a": b"x"}, whose JSON text
        # held b'x', and `output.a not empty` on a set or NaN)
        (
            evaldsl.Run(events=None, output={"a": b"x"}),
            "its output must be JSON data: at $.a: a bytes (b'x') is not JSON data",
        ),
        (evaldsl.Run(events=None, output=[1, {"b": {2}}]), "at $[1].b: a set ({2}) is not"),
        (evaldsl.Run(events=None, output={"a": [float("nan")]}), "at $.a[0]: nan is not a JSON"),
        # (a list held twice, 60 levels of it: 2^60 values, walked one by one without end)
        (evaldsl.Run(events=None, output={"a": _shared(60)}), "at $.a[0]"),
        (evaldsl.Run(events=None, output=_shared(60)), "shared references expand to more"),
    ],
)
def test_check_of_a_run_whose_fields_are_wrong_is_an_error(run: Any, message: str) -> None:
    program = evaldsl.compile("tool get_weather called; latency < 5s; status == completed")
    result = program.check(run)
    assert result.statuses == ["error", "error", "error"]
    assert result.error is not None
    assert result.error.startswith("<value>:1:1: the evaldsl.Run given is unusable: ")
    assert message in result.error


@pytest.mark.parametrize("odd", [b"x", {"x"}, object()])
def test_in_memory_values_json_has_no_word_for_are_never_tested_as_text(odd: Any) -> None:
    """Events given in memory holding a value JSON data cannot hold (bytes, a set, an
    object) were read as its Python text: `{"output": {"a": b"x"}}` passed `answer
    contains "x"` (and `not answer contains "y"`). A test that reads such a value as text
    (an answer, a regex on a value) is now an error naming it: in a lazily read answer
    that assertion's, in a value the pass reads the run's; tests that read nothing of it
    are decided as before."""
    answer = [{"type": "llm.response", "output": {"a": odd}}]
    program = evaldsl.compile('answer contains "x"; not answer contains "y"; steps == 0')
    result = program.check(answer)
    assert result.statuses == ["error", "error", "pass"], result
    said = result.verdicts[0].message
    assert f"the events hold a {type(odd).__name__} (" in said and "not JSON data" in said
    called = [
        {"type": "tool.call", "name": "t", "callId": "1", "arguments": {}},
        {"type": "tool.result", "callId": "1", "output": {"a": odd}},
    ]
    for events in (called, called * 3000):  # (the reference pass, and a generated one)
        result = evaldsl.compile("tool t result $.a matches /x/; tool t called").check(events)
        assert result.statuses == ["error", "error"], result
        assert result.error is not None and "not JSON data" in result.error


def test_a_runs_output_is_read_as_json_data_as_a_live_targets_is() -> None:
    # tuples are arrays and a number key its JSON text, as a target's returned value
    run = evaldsl.Run(events=None, output={1: ("a", 2), "b": {"c": None}}, format="value")
    program = evaldsl.compile('output == {"1": ["a", 2], b: {c: null}}; output["1"][0] == "a"')
    assert program.check(run).statuses == ["pass", "pass"]
    assert evaldsl.compile('answer == "x"').check(evaldsl.Run(events=None, output="x")).passed


def test_check_of_an_open_file_asks_for_its_path() -> None:
    with CASSETTE.open() as f:
        result = evaldsl.compile('answer contains "xiamen"').check(f)
    assert result.error is not None
    assert "an open file is not a run: pass its path instead" in result.error
    assert "a run is a path (a str or os.PathLike)" in result.error


def test_check_accepts_what_the_readme_lists() -> None:
    program = evaldsl.compile("tool get_weather called once")
    events = list(evaldsl.load_run(CASSETTE).events or [])
    for run in (str(CASSETTE), CASSETTE, events, tuple(events), evaldsl.load_run(CASSETTE)):
        assert program.check(run).statuses == ["pass"], run
    state = {"status": "completed", "memory": {}}
    assert evaldsl.compile("status == completed").check(state).passed
    assert evaldsl.compile('output == "x"').check({"events": events[:1], "output": "x"}).passed


@pytest.mark.parametrize("text", ["", "# nothing here", "\n\n"])
def test_a_program_of_no_statements_warns_and_check_refuses_it(text: str) -> None:
    program = evaldsl.compile(text)
    assert [d.code for d in program.diagnostics] == ["W510"]
    with pytest.raises(ValueError, match="no assertions, so nothing would be checked: add"):
        program.check(CASSETTE)


@pytest.mark.parametrize("text", ["", "# nothing here"])
def test_expect_of_no_statements_raises(text: str) -> None:
    with pytest.raises(evaldsl.EvalDslError) as raised:
        evaldsl.expect(CASSETTE, text)
    assert [d.code for d in raised.value.diagnostics] == ["W510"]
    assert str(raised.value).startswith("evaldsl: no statements to check\n<expect>:1:1:")


def call_compile(**given: Any) -> Any:
    return evaldsl.compile(**{"text": "steps >= 1", **given})


def call_diagnose(**given: Any) -> Any:
    return evaldsl.diagnose(**{"text": 'case "a"\n  cassette "x.jsonl"\n  steps >= 1', **given})


def test_diagnose_refuses_an_unknown_start() -> None:
    # (a KeyError 'bogus' from the parser's table)
    with pytest.raises(ValueError, match="diagnose\\(\\) takes start= as 'file' or 'statements'"):
        evaldsl.diagnose("steps >= 1", start="bogus")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: evaldsl.compile(None), "compile() takes the program's text as a str, not None"),
        (
            lambda: evaldsl.compile(Path("x.eval")),
            "compile() takes the program's text as a str, not a Path: read the file first",
        ),
        (lambda: evaldsl.compile(b"steps >= 1"), "not bytes: decode them first"),
        (lambda: evaldsl.diagnose(None), "diagnose() takes the program's text as a str, not None"),
        (
            lambda: evaldsl.expect(CASSETTE, None),
            "expect() takes the statements as a str, not None",
        ),
        (lambda: call_compile(judge="gpt-4o"), "judge= takes a judge to call"),
        (lambda: call_compile(path=Path("a.eval")), "compile() takes path= as a str"),
        (lambda: call_compile(base_dir=3), "compile() takes base_dir= as a folder's path"),
        (lambda: evaldsl.expect(CASSETTE, "steps >= 1", base_dir=3), "expect() takes base_dir="),
        (lambda: evaldsl.load_run({"events": []}), "load_run() takes a file's path as a str or"),
        (lambda: evaldsl.load_run(None), "os.PathLike, not None: a run already in memory"),
        (lambda: evaldsl.load_run(CASSETTE, 3), "load_run() takes format= as a str or None"),
        (lambda: call_compile().check(CASSETTE, case=5), "case= takes a case's name as a str"),
        # (these failed deep inside: `'int' object has no attribute 'declared_tools'`,
        # `unsupported operand type(s) for /`, `'int' object is not callable`)
        (lambda: call_compile(env=1), "compile() takes env= as an evaldsl.check.environment"),
        (lambda: call_diagnose(env={}), "diagnose() takes env= as an evaldsl.check.environment"),
        (lambda: call_diagnose(path=1), "diagnose() takes path= as a str naming the text"),
        (lambda: call_diagnose(base_dir=1), "diagnose() takes base_dir= as a folder's path"),
        (lambda: call_diagnose(facts=1), "diagnose() takes facts= as a function reading"),
        (lambda: call_diagnose(source="x"), "diagnose() takes source= as an evaldsl Source"),
        (lambda: load_suite(None), "load_suite() takes a suite file's path as a str or"),
        (lambda: load_suite(b"a.eval"), "not bytes: decode it first"),
        (lambda: load_suite(SUITE, judge="gpt-4o"), "judge= takes a judge to call"),
        (lambda: discover("examples"), "discover() takes a list of paths, not a str: put one"),
        (lambda: discover(None), "discover() takes a list of paths, not None"),
        (lambda: discover([None]), "discover() takes paths as str or os.PathLike, and item 0"),
    ],
)
def test_a_wrong_argument_type_is_a_type_error_saying_what_is_taken(
    call: Any, message: str
) -> None:
    with pytest.raises(TypeError) as raised:
        call()
    assert message in str(raised.value)
    # raised at the entry, in the user's words: nothing of Python's own messages
    assert "object" not in str(raised.value) and "NoneType" not in str(raised.value)


def test_an_unknown_case_name_lists_the_cases() -> None:
    program = evaldsl.compile('case "a"\ncassette "x.jsonl"\nsteps >= 1\n')
    with pytest.raises(KeyError, match="no case named 'b': this program's cases are 'a'"):
        program.check(CASSETTE, case="b")


def test_run_suites_takes_loaded_suites() -> None:
    from evaldsl.runner import RunOptions, run_suites
    from evaldsl.suites import load_suite

    path = ROOT / "examples" / "weather" / "weather.eval"
    with pytest.raises(TypeError, match=r"item 0 is a str: load each file first"):
        run_suites([str(path)])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="takes a list of loaded suites, not a Path"):
        run_suites(path)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"takes options as evaldsl\.runner\.RunOptions"):
        run_suites([load_suite(path)], {"jobs": 2})  # type: ignore[arg-type]
    assert run_suites([load_suite(path)], RunOptions()).cases
