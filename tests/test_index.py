"""The index pass: the fast path over a cassette file gives the same facts as the same
events in a list, and its error and timing edge cases."""

from __future__ import annotations

import gc
import json
import os
from collections.abc import Callable
from pathlib import Path
from unittest import mock

import orjson
import pytest

import evaldsl
from evaldsl.compile import compiler
from evaldsl.language.paths import path_finder
from evaldsl.language.values import show
from evaldsl.predicates import calls, json_text
from evaldsl.runs import index, passes
from evaldsl.runs.cassette import EventStream
from evaldsl.runs.index import Needs, index_events
from evaldsl.runs.model import Run, RunError
from evaldsl.runs.summary import render_text, summarize
from evaldsl.runs.text import answer_text

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "traceplay"
HEADER = '{"cassette":"traceplay","version":1}'

EVERYTHING = """
tool get_weather called; tools contains get_weather; answer not empty; answer[1] not empty
tokens >= 0; steps >= 0; tool calls >= 0; latency >= 0s; errors == 0
tool get_weather args $.city == "Xiamen"; tool get_weather result contains "sunny"
"""


@pytest.mark.parametrize("cassette", sorted(FIXTURES.glob("*/*.jsonl")), ids=lambda p: p.name)
def test_file_and_list_give_the_same_verdicts(cassette: Path) -> None:
    case = evaldsl.compile(EVERYTHING).cases[0]
    events = list(EventStream(cassette))
    from_file = case.check(str(cassette))
    from_list = case.check(events)
    assert [(v.status, v.message) for v in from_file.verdicts] == [
        (v.status, v.message) for v in from_list.verdicts
    ]


def _cassette(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "c.jsonl"
    path.write_text("\n".join([HEADER, *lines]) + "\n", encoding="utf-8")
    return path


def test_latency_when_the_last_event_has_no_time(tmp_path: Path) -> None:
    path = _cassette(
        tmp_path,
        [
            '{"type":"user.message","at":"2026-01-01T00:00:00Z"}',
            '{"type":"llm.request","at":"2026-01-01T00:00:03Z"}',
            '{"type":"llm.response","output":"hi"}',
        ],
    )
    needs = Needs(times=True)
    facts = index_events(EventStream(path), needs)
    assert facts.wall_seconds() == 3.0
    assert index_events(list(EventStream(path)), needs).wall_seconds() == 3.0


_TIMED = '{"type":"llm.request","at":"2026-09-01T00:00:0%dZ"}'
_SOON = '{"type":"llm.request","at":"soon"}'


@pytest.mark.parametrize(
    ("lines", "line", "bad"),
    [
        # the last event's time is read from its own line, the first's in the pass
        ([_TIMED % 1, _TIMED % 2, '{"type":"llm.response","at":"not a time"}'], 4, "not a time"),
        (['{"type":"llm.request","at":"not a time"}', _TIMED % 2, _TIMED % 3], 2, "not a time"),
        ([_TIMED % 1, '{"type":"error","at":"2026-13-45T99:00:00Z"}'], 3, "2026-13-45T99:00:00Z"),
        # the first `at` that is text is read: the event before it has none
        (['{"type":"user.message"}', _SOON, _TIMED % 3], 3, "soon"),
        # the last one that is text, past one that is a number
        ([_TIMED % 1, _SOON, '{"type":"error","at":5}'], 3, "soon"),
    ],
)
def test_an_at_latency_reads_that_is_not_a_time_is_the_runs_error(
    tmp_path: Path, lines: list[str], line: int, bad: str
) -> None:
    """Not "no timing": the line and the value, alike from the reference and the
    generated pass (typed decoding too), and from the events in a list."""
    path = _cassette(tmp_path, lines)
    said = f'`at` "{bad}" is not a time (ISO 8601, e.g. 2026-09-01T00:00:01Z)'
    case = evaldsl.compile("latency < 30s; steps >= 0").cases[0]
    whole, typed = passes.TYPED_FROM, 0
    for indexed, typed_from in (
        (index.index_run, whole),
        (passes.index_run, whole),
        (passes.index_run, typed),
    ):
        with mock.patch.object(passes, "TYPED_FROM", typed_from):
            facts = indexed(Run(events=EventStream(path), path=str(path)), case.needs)
        assert facts.trace is not None and facts.trace.bad_time == f"line {line}: {said}"
    (latency, _) = case.check(str(path)).verdicts
    assert (latency.status, latency.message) == ("error", f"line {line}: {said}")
    (latency, _) = case.check(list(EventStream(path))).verdicts
    assert latency.message == f"event [{line - 2}] of the event list: {said}"


@pytest.mark.parametrize(
    "last", ['{"type":"error","at":5}', '{"type":"error"}', '{"type":"error","at":null}']
)
def test_an_at_latency_does_not_read_is_not_its_error(tmp_path: Path, last: str) -> None:
    """A time in the middle (not read), or the last event's that is missing or not text
    (skipped: the time before it is the last one): latency from the times read."""
    path = _cassette(tmp_path, [_TIMED % 1, _SOON, _TIMED % 4, last])
    (verdict,) = evaldsl.compile("latency == 3s").cases[0].check(str(path)).verdicts
    assert verdict.status == "pass", verdict.message


@pytest.mark.parametrize(
    ("line", "words"),
    [('{"type": "llm.request"', "invalid JSON on line 3"), ("[1, 2]", "line 3")],
)
def test_a_bad_line_is_named_by_the_fast_path(tmp_path: Path, line: str, words: str) -> None:
    path = _cassette(tmp_path, ['{"type":"llm.request"}', line, '{"type":"llm.request"}'])
    with pytest.raises(RunError) as err:
        index_events(EventStream(path), Needs())
    assert words in str(err.value)
    assert str(path) in str(err.value)


@pytest.mark.parametrize("depth", [1000, 1020, 10_000])
def test_a_value_nested_past_msgspec_s_recursion_is_read_as_the_reference_reads_it(
    tmp_path: Path, depth: int
) -> None:
    """msgspec decodes nesting by recursion and raised `RecursionError` from ~1,000 levels
    out of the typed decoders (a traceback from `evaldsl run` of a cassette past 1 MiB
    with such a result), where orjson reads up to 1,024 levels. Such a line is now the
    typed decoder's `Undecodable`: the full reader reads it, or names its line."""
    nested = "[" * depth + "]" * depth
    filler = json.dumps({"type": "user.message", "content": "x" * 1000})
    path = _cassette(
        tmp_path,
        [
            '{"type":"tool.call","id":"c1","name":"f","arguments":{"q":1}}',
            json.dumps({"type": "tool.result", "callId": "c1", "output": {"deep": "@"}}).replace(
                '"@"', nested
            ),
            *[filler] * (passes.TYPED_FROM // 1000),  # (the typed decoders' size)
            '{"type":"llm.response","output":"done"}',
        ],
    )
    case = evaldsl.compile("tool f called; tool f result $.deep is array; errors == 0").cases[0]
    outcomes = []
    for reference in ("", "1"):
        with mock.patch.dict(os.environ, {"EVALDSL_REFERENCE": reference}):
            result = case.check(str(path))
        outcomes.append((result.error, [v.status for v in result.verdicts]))
    assert outcomes[0] == outcomes[1]
    if depth > 1024:  # (past orjson's depth: the full reader's error, at its line)
        assert "c.jsonl:3:" in outcomes[0][0] and "depth limit exceeded" in outcomes[0][0]
    else:
        assert outcomes[0] == (None, ["pass", "pass", "pass"])


def test_blank_lines_crlf_and_bom_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    body = "\r\n".join(
        [json.dumps({"type": "llm.request"}), "", "   ", json.dumps({"type": "llm.request"})]
    )
    path.write_bytes(b"\xef\xbb\xbf" + body.encode())
    facts = index_events(EventStream(path, header=False), Needs())
    assert facts.steps == 2


def test_an_answer_s_text_is_made_once_for_all_its_assertions() -> None:
    """Every assertion on an answer asks for its text; an output without a text is made
    into one from its JSON, once per answer, not once per assertion."""
    output = {f"k{i}": {"v": i} for i in range(50)}
    events = [{"type": "llm.response", "output": output}]
    text = "\n".join([*(f'answer contains "k{i}"' for i in range(50)), 'answer[1] contains "k7"'])
    case = evaldsl.compile(text).cases[0]
    with mock.patch.object(index, "answer_text", wraps=answer_text) as made:
        verdicts = case.check(events).verdicts
    assert [v.status for v in verdicts] == ["pass"] * 51
    assert made.call_count == 2  # the last answer, and the first (the same one)
    facts = index_events(events, Needs(answers={1, 2}, answer_tail=2))
    assert facts.answer(-1) == facts.answer(1) == answer_text(output)
    assert facts.answer(2) == facts.answer(-2) == ""


def test_a_value_run_s_answer_is_made_once_for_all_its_assertions() -> None:
    """A value run's answer is its output's text: made once, as a trace's answers are."""
    output = {f"k{i}": i for i in range(20)}
    text = "\n".join(f'answer contains "k{i}"' for i in range(20))
    case = evaldsl.compile(text).cases[0]
    with mock.patch.object(index, "answer_text", wraps=answer_text) as made:
        verdicts = case.check(Run(events=None, output=output, format="value")).verdicts
    assert [v.status for v in verdicts] == ["pass"] * 20
    assert made.call_count == 1


def test_an_answer_s_json_is_parsed_once_for_all_its_assertions() -> None:
    """`answer json` assertions on one answer parse it once (40 of them on a 1.1 MB answer
    parsed it 40 times); an answer that is not JSON fails each of them with its message."""
    answer = orjson.dumps({"items": [{"x": i} for i in range(30)], "total": 30}).decode()
    events = [{"type": "llm.response", "output": answer}, {"type": "llm.response", "output": "{"}]
    text = "\n".join(
        [
            *(f"answer[1] json $.items[{i}].x == {i}" for i in range(30)),
            "answer json $.items[0].x == 0",  # on answer[-1]: not JSON
            "answer json is object",
            "answer[1] json $.total == 29",  # a failure's found value from the same parse
            "answer[1] json is object",
        ]
    )
    case = evaldsl.compile(text).cases[0]
    with mock.patch.object(orjson, "loads", wraps=orjson.loads) as parsed:
        verdicts = case.check(events).verdicts
    assert [v.status for v in verdicts] == ["pass"] * 30 + ["fail", "fail", "fail", "pass"]
    assert verdicts[30].message == verdicts[31].message == 'answer is not valid JSON: "{"'
    assert verdicts[32].actual == 30
    assert parsed.call_count == 2  # each answer once


def test_a_long_text_is_tested_for_json_with_the_collector_paused() -> None:
    """`is json` parses the text: a long one (`json_text.PAUSED_FROM`) with the collector
    paused (`answer is json` of a 2.2 MB answer: 0.23 s, 0.09 s paused), a short one
    without the pause's cost (a call's arguments are tested in the pass, paused whole)."""
    enabled: list[bool] = []
    parse = orjson.loads

    def loads(text: str) -> object:
        enabled.append(gc.isenabled())
        return parse(text)

    long = orjson.dumps([{"n": i} for i in range(json_text.PAUSED_FROM // 8)]).decode()
    assert len(long) >= json_text.PAUSED_FROM
    events = [{"type": "llm.response", "output": "[1]"}, {"type": "llm.response", "output": long}]
    case = evaldsl.compile("answer is json\nanswer[1] is json").cases[0]
    with mock.patch.object(orjson, "loads", loads):
        assert case.check(events).passed
    assert enabled == [False, True]
    assert gc.isenabled()


def test_an_answer_that_is_not_json_is_shown_once_for_all_its_assertions() -> None:
    """The message of an answer that is not JSON shows its text (written whole when it is
    not ASCII): written once for all the `answer json` assertions that read it."""
    events = [{"type": "llm.response", "output": "é" * 5_000}]
    case = evaldsl.compile("\n".join(f"answer json $.a == {i}" for i in range(20))).cases[0]
    with mock.patch.object(orjson, "dumps", wraps=orjson.dumps) as written:
        verdicts = case.check(events).verdicts
    assert {v.message for v in verdicts} == {f'answer is not valid JSON: "{"é" * 78}…'}
    assert written.call_count == 1


def test_what_a_path_finds_in_an_answer_s_json_is_found_once_for_its_assertions() -> None:
    """`answer json PATH` assertions on one path walk the parsed answer once (`$..x`
    walks all of it: 20 of them on a 2.2 MB answer walked it 20 times)."""
    walks: list[str | None] = []

    def finder(path: str | None) -> Callable[[object], list[object]]:
        find = path_finder(path)

        def walk(value: object) -> list[object]:
            walks.append(path)
            return find(value)

        return walk

    answer = orjson.dumps({"a": [{"x": i} for i in range(5)], "b": {"x": 9}}).decode()
    events = [{"type": "llm.response", "output": answer}]
    lines = [*(f"answer json $..x == {i}" for i in range(12)), "answer json $.b.x == 9"]
    with mock.patch.object(compiler, "path_finder", finder):
        case = evaldsl.compile("\n".join([*lines, "answer json $..x > 8"])).cases[0]
    verdicts = case.check(events).verdicts
    passing = {0, 1, 2, 3, 4, 9, 12, 13}  # the values found are 0 to 4 and 9
    assert [v.status == "pass" for v in verdicts] == [i in passing for i in range(14)]
    assert verdicts[5].message == "expected answer json $..x == 5, found [0,1,2,3,4,9]"
    assert sorted(walks) == ["$..x", "$.b.x"]


def test_an_answer_s_json_is_parsed_with_the_collector_paused() -> None:
    """Parsing a large JSON answer makes many small objects and no cycles: the collections
    their allocations set off would only walk the growing heap again (a 4.5 MB answer's
    parse took 0.41 s, 0.11 s paused), so the collector is paused while it is parsed:
    from `json_text.PAUSED_FROM` characters, as for `is json` (a short answer's parse
    sets off no collection, and the pause would cost more)."""
    enabled: list[bool] = []
    parse = orjson.loads

    def loads(text: str) -> object:
        enabled.append(gc.isenabled())
        return parse(text)

    long = orjson.dumps({"n": list(range(json_text.PAUSED_FROM // 4)), "total": 1}).decode()
    assert len(long) >= json_text.PAUSED_FROM
    events = [{"type": "llm.response", "output": '{"total": 3}'}]
    events.append({"type": "llm.response", "output": long})
    case = evaldsl.compile("answer[1] json $.total == 3\nanswer json $.total == 1").cases[0]
    assert gc.isenabled()
    with mock.patch.object(orjson, "loads", loads):
        assert case.check(events).passed
    assert enabled == [True, False]
    assert gc.isenabled()


def test_a_value_failed_assertions_show_is_written_once_for_them_all() -> None:
    """A failure's message shows what it found, written as JSON to show 80 characters of
    it: failed assertions that show the same value (a tool's results, an answer's JSON, a
    long text) write it once, with the messages of one written for each."""
    items = [{"x": i, "t": f"é{i}"} for i in range(200)]
    answer = orjson.dumps({"items": items, "total": 1}).decode()
    events: list[dict[str, object]] = [{"type": "llm.response", "output": answer}]
    for i in range(3):
        events.append({"type": "tool.call", "name": "s", "callId": f"c{i}", "arguments": {}})
        events.append({"type": "tool.result", "callId": f"c{i}", "output": {"items": items}})
    text = "\n".join(
        [
            *(f'tool s result contains "zzz{i}"' for i in range(10)),  # the 3 results
            *(f'every tool s result contains "zzz{i}"' for i in range(5)),  # [the first]
            *(f"tool s result $.items[*] == {-i}" for i in range(5)),  # 200 of them
            *(f"answer json contains {{total: {i + 2}}}" for i in range(5)),  # the object
            *(f"answer json $.items == [{i}]" for i in range(5)),  # its list
            *(f'answer contains "zzz{i}"' for i in range(5)),  # the text, not ASCII
            "answer json $.total == 5",  # a number: shown as it is
            "answer json $.total == 6",
        ]
    )
    case = evaldsl.compile(text).cases[0]
    with mock.patch.object(orjson, "dumps", wraps=orjson.dumps) as written:
        verdicts = case.check(events).verdicts
    assert {v.status for v in verdicts} == {"fail"}
    assert written.call_count == 8  # each value once, the number twice

    def each(facts: object, value: object, empty: str | None = None) -> str:
        # as messages were written before: each value whole, each time
        if empty is not None and isinstance(value, list) and not value:
            return empty
        return show(value)

    with (
        mock.patch.object(compiler, "found_text", each),
        mock.patch.object(calls, "found_text", each),
    ):
        alone = case.check(events).verdicts
    assert [v.message for v in verdicts] == [v.message for v in alone]
    assert verdicts[0].message.startswith('no call of tool "s" has result contains "zzz0"')


# ---- a request no response answers ---------------------------------------------------------

_CUT = [  # a run cut after a tool result: its request's response was never recorded
    '{"id":"m2","type":"llm.request","model":"gpt-4o"}',
    '{"id":"m3","type":"tool.call","name":"get_weather","arguments":{"city":"Xiamen"}}',
    '{"id":"m4","type":"tool.result","callId":"m3","output":"sunny, 31C"}',
]
_USAGE = '"usage":{"promptTokens":10,"completionTokens":2}'


def test_a_request_without_a_response_makes_tokens_and_cost_unknown(tmp_path: Path) -> None:
    """Its tokens were 0 and its cost $0, so `tokens <= 100` passed: they are unknown now,
    each assertion on them an error naming the request, and `inspect` says so."""
    path = _cassette(tmp_path, _CUT)
    program = evaldsl.compile(
        "tokens <= 100; input tokens <= 100; output tokens <= 100; cost < $0.0001; steps == 1"
    )
    result = program.check(str(path))
    assert result.statuses == ["error", "error", "error", "error", "pass"]
    why = 'the llm.request "m2" (step 1) has no llm.response, so its token usage was never recorded'
    assert result.verdicts[0].message == f"`tokens` cannot be measured: {why}"
    assert result.verdicts[3].message == f"`cost` cannot be measured: {why}"
    assert program.check(list(EventStream(path))).statuses == result.statuses
    (shown,) = summarize(path)
    assert (shown.input_tokens, shown.output_tokens, shown.cost) == (None, None, None)
    text = render_text(shown)
    assert f"  tokens      unknown: {why}\n" in text
    assert f"  cost        unknown: {why}\n" in text


@pytest.mark.parametrize(
    ("lines", "unanswered"),
    [
        # a response names the request it answers: the other one has none, wherever it is
        (
            [
                '{"id":"r1","type":"llm.request"}',
                '{"id":"r2","type":"llm.request"}',
                '{"type":"llm.response","requestId":"r2",' + _USAGE + "}",
            ],
            (1, "r1"),
        ),
        (
            [
                '{"id":"r1","type":"llm.request"}',
                '{"type":"llm.response","requestId":"r1",' + _USAGE + "}",
                '{"id":"r2","type":"llm.request"}',
                '{"type":"llm.response","requestId":"r2",' + _USAGE + "}",
            ],
            None,
        ),
        # without requestIds, by position: a request after the last response
        (
            [
                '{"type":"llm.request"}',
                '{"type":"llm.response",' + _USAGE + "}",
                '{"type":"llm.request"}',
            ],
            (2, None),
        ),
        (
            ['{"type":"llm.request"}', '{"type":"llm.request"}', '{"type":"llm.response"}'],
            None,
        ),
        # verydia's calls are steps and answers at once: no request waits for an answer
        (['{"type":"llm.invoke","output":"hi","tokensIn":5,"tokensOut":1}'], None),
    ],
    ids=["by-id", "by-id-all", "by-position", "by-position-all", "verydia"],
)
def test_which_request_a_response_answers(
    tmp_path: Path, lines: list[str], unanswered: tuple[int, str | None] | None
) -> None:
    path = _cassette(tmp_path, lines)
    for events in (EventStream(path), list(EventStream(path))):
        facts = index_events(events, Needs(tokens=True))
        assert facts.unanswered == unanswered
        assert facts.usage_unrecorded is (unanswered is not None or facts.unmetered > 0)
    if unanswered is None and ("usage" in lines[-1] or "tokensIn" in lines[-1]):
        assert evaldsl.compile("tokens > 0").check(str(path)).statuses == ["pass"]


def test_a_probe_reads_a_path_of_one_key_by_the_key() -> None:
    # a call test of `$.city` reads its value with a dict lookup (`CallProbe.key`), others
    # with their finder; a test met again shares its probe, key and all
    program = evaldsl.compile(
        'tool t args $.city == "x"\ntool t args $.a.b == 1\ntool t result == 1\n'
        'tool t args $["ci ty"] == 2\ntool t args $[0] == 3\ntool t args $.city == "x"'
    )
    probes = program.cases[0].needs.probes
    assert [(p.key, p.path) for p in probes] == [
        ("city", "$.city"),
        (None, "$.a.b"),
        (None, None),
        ("ci ty", '$["ci ty"]'),
        (None, "$[0]"),
    ]
