"""Cases that read one recording share one reading of it (`runner/readings.py`): the same
results as each case reading it alone, one reading a recording, errors as each case's own
reading gives them, and the facts let go after the last case."""

from __future__ import annotations

import gc
import json
import tempfile
import weakref
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evaldsl.judge.plan import RecordingJudge, TwoPhaseJudge
from evaldsl.runner import cases, core, parallel, readings
from evaldsl.runner.cases import plan_judge
from evaldsl.runner.core import execute_case, run_suites
from evaldsl.runner.produce import produce_run
from evaldsl.runner.readings import SharedReadings, calls_own_their_ids, sharing
from evaldsl.runner.results import CaseResult
from evaldsl.runs import passes
from evaldsl.runs.detect import load_run
from evaldsl.runs.index import Needs
from evaldsl.runs.model import Run
from evaldsl.suites.build import load_suite
from evaldsl.suites.model import Suite
from tests.fuzzing import examples
from tests.test_codegen import programs, traces

HEADER = {"cassette": "traceplay", "version": 1}


def write_cassette(path: Path, events: list[Any]) -> None:
    path.write_text("".join(json.dumps(e) + "\n" for e in [HEADER, *events]))


def write_suite(folder: Path, cases: list[tuple[str, list[str]]]) -> Suite:
    """A suite of `cases` (each its cassette and statements) in `folder`."""
    text = "".join(
        f'case "c{k}"\n  cassette "{name}"\n' + "".join(f"  {s}\n" for s in statements)
        for k, (name, statements) in enumerate(cases)
    )
    (folder / "s.eval").write_text(text)
    return load_suite(str(folder / "s.eval"))


def timeless(result: CaseResult) -> CaseResult:
    return attrs.evolve(result, duration_ms=0.0)


def alone(suite: Suite) -> list[CaseResult]:
    """Each case reading its recording by itself (no shared readings)."""
    return [timeless(execute_case(case, suite)) for case in suite.cases]


def together(suite: Suite) -> list[CaseResult]:
    report = run_suites([suite])
    return [timeless(r) for r in report.suites[0].cases]


@pytest.fixture
def read() -> Iterator[list[Needs]]:
    """The needs of each reading of a run (shared, alone, or for the judge plan)."""
    needs_read: list[Needs] = []

    def counted(run: Any, needs: Needs) -> Any:
        needs_read.append(needs)
        return passes.index_run(run, needs)

    with (
        mock.patch.object(readings, "index_run", counted),
        mock.patch.object(core, "index_run", counted),
        mock.patch.object(cases, "index_run", counted),
    ):
        yield needs_read


@pytest.fixture(params=["reference", "generated"])
def tier(request: pytest.FixtureRequest) -> Iterator[None]:
    """Small runs through the reference pass (as the runner reads them), or through the
    generated pass however small."""
    if request.param == "reference":
        yield
        return
    with (
        mock.patch.object(passes, "GENERATE_FROM", 0),
        mock.patch.object(passes, "GENERATE_FROM_EVENTS", 0),
    ):
        yield


# (the fixture only patches the tier's bounds: the same for every example)
@settings(
    max_examples=examples(120),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(st.lists(programs, min_size=2, max_size=4), traces(), traces())
def test_cases_sharing_a_recording_get_what_each_gets_alone(
    tier: None, cases: list[list[str]], first: list[Any], second: list[Any]
) -> None:
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        write_cassette(folder / "a.jsonl", first)
        write_cassette(folder / "b.jsonl", second)
        # most cases on a.jsonl, the last on b.jsonl when there are three or more: two
        # recordings shared or not, their cases interleaved with the other's
        named = [("b.jsonl" if k == 2 else "a.jsonl", s) for k, s in enumerate(cases)]
        suite = write_suite(folder, named)
        assert together(suite) == alone(suite), "\n\n".join("\n".join(s) for s in cases)


ANSWERS = [
    {"type": "llm.request", "model": "gpt-4o"},
    {"type": "llm.response", "output": "It is 20 C in Paris", "usage": {"prompt_tokens": 3}},
    {"type": "tool.call", "name": "search", "callId": "c1", "arguments": {"q": "Paris"}},
    {"type": "tool.result", "callId": "c1", "output": {"hits": ["Paris"]}},
    {"type": "llm.response", "output": "Sunny, 21 C"},
]
STATEMENTS = [
    ["tool search called once", 'answer contains "21"'],
    ['tool search args $.q == "Paris"', "answer cites tool search"],
    ["answer[1] matches /Paris/", "tokens <= 3", "tools only [search]"],
    ["steps == 1"],
]


def test_a_recording_is_read_once_for_all_its_cases(tmp_path: Path, read: list[Needs]) -> None:
    write_cassette(tmp_path / "a.jsonl", ANSWERS)
    write_cassette(tmp_path / "b.jsonl", ANSWERS[:2])
    names = ["a.jsonl", "b.jsonl", "a.jsonl", "a.jsonl"]
    suite = write_suite(tmp_path, list(zip(names, STATEMENTS, strict=True)))
    shared = together(suite)
    # a.jsonl once for its three cases (for what any of them reads), b.jsonl alone
    assert len(read) == 2
    assert (read[0].counted, read[0].tool_sequence, read[0].answers) == ({"search"}, True, {1})
    assert read[1].probes and not read[1].tool_sequence  # b.jsonl: its case's own needs
    assert shared == alone(suite)
    assert [r.passed for r in shared] == [True, False, True, True]


# A result naming its call by an event id two calls carry goes to the first call filed
# for results under it, and a tool's calls are filed while a result test of it is open:
# once "Paris" is found, the first case stops filing fetch's calls, so the result of e1
# is search's; with the second case's fetch test open, fetch's call takes e1 first.
SHARED_EVENT_ID = [
    {"type": "tool.call", "name": "fetch", "callId": "c1", "id": "e0"},
    {"type": "tool.result", "callId": "c1", "output": {"city": "Paris"}},
    {"type": "tool.call", "name": "fetch", "callId": "c2", "id": "e1"},
    {"type": "tool.call", "name": "search", "callId": "c3", "id": "e1"},
    {"type": "tool.result", "callId": "e1", "output": "Paris"},
]


SEARCH_PARIS = 'tool search result == "Paris"'
#: Cases reading results in two ways, and one reading none (it joins one group that does)
RESULTS_TWO_WAYS = [
    ['tool fetch result $.city == "Paris"', SEARCH_PARIS],
    ['tool fetch result $.city == "Oslo"', SEARCH_PARIS],
    ["tool fetch called twice"],
]


def test_cases_reading_other_results_do_not_share_where_two_calls_share_an_id(
    tmp_path: Path,
) -> None:
    write_cassette(tmp_path / "a.jsonl", SHARED_EVENT_ID)
    statements = RESULTS_TWO_WAYS
    suite = write_suite(tmp_path, [("a.jsonl", s) for s in statements])
    shared = together(suite)
    assert shared == alone(suite)
    assert [[a.status for a in r.assertions] for r in shared] == [
        ["pass", "pass"],
        ["fail", "fail"],  # the same search test: its result went to fetch's call
        ["pass"],
    ]
    two = write_suite(tmp_path, [("a.jsonl", statements[0]), ("a.jsonl", statements[2])])
    assert [len(g) for g in sharing(list(two.cases))] == [2]
    assert sharing(list(suite.cases)) == []  # two ways of reading results: no group


# The same, but search's call has an event id of its own (and fetch's second call a result)
UNIQUE_IDS = [
    *SHARED_EVENT_ID[:3],
    {**SHARED_EVENT_ID[3], "id": "e2"},
    {**SHARED_EVENT_ID[4], "callId": "e2"},
    {"type": "tool.result", "callId": "c2", "output": {"city": "Oslo"}},
]


def test_cases_reading_other_results_share_when_no_two_calls_share_an_id(
    tmp_path: Path, read: list[Needs]
) -> None:
    write_cassette(tmp_path / "a.jsonl", UNIQUE_IDS)
    statements = [
        *RESULTS_TWO_WAYS,
        ['every tool fetch result $.city == "Paris"', "answer cites tool search"],
    ]
    suite = write_suite(tmp_path, [("a.jsonl", s) for s in statements])
    produced: list[Any] = []

    def produce(case: Any, suite: Any) -> Any:
        produced.append(case)
        return produce_run(case, suite)

    with mock.patch.object(readings, "produce_run", produce):
        shared = together(suite)
    assert len(read) == 1 and len(read[0].probes) == 4  # every case's tests, one reading
    assert len(produced) == 1  # loaded once: to look at its ids, then read
    assert shared == alone(suite)
    assert [[a.status for a in r.assertions] for r in shared] == [
        ["pass", "pass"],
        ["pass", "pass"],
        ["pass"],
        ["fail", "fail"],
    ]


def events_run(events: list[Any]) -> Run:
    return Run(events=events, format="events")


def test_whether_calls_own_their_ids(tmp_path: Path) -> None:
    def call(**ids: Any) -> dict[str, Any]:
        return {"type": "tool.call", "name": "t", **ids}

    assert calls_own_their_ids(events_run([call(callId="a", id="x"), call(callId="b", id="y")]))
    # a result naming a call, an id on another kind of event: no call shares it
    result = {"type": "tool.result", "callId": "a"}
    assert calls_own_their_ids(events_run([call(callId="a"), result, {"type": "x", "id": "a"}]))
    assert calls_own_their_ids(events_run([]))
    for clash in (
        [call(callId="a"), call(callId="a")],
        [call(id="x"), call(id="x")],
        [call(callId="a", id="x"), call(callId="x")],  # one's event id, the other's callId
        [call(callId="x"), {"type": "mcp.call", "name": "t", "id": "x"}],
        [call(id=[1]), call(id=[2])],  # an id a table cannot hold: no
    ):
        assert not calls_own_their_ids(events_run(clash)), clash
    # streams: small ones decoded whole, large ones by the typed decoder; a bad line is a no
    write_cassette(tmp_path / "a.jsonl", UNIQUE_IDS)
    write_cassette(tmp_path / "b.jsonl", SHARED_EVENT_ID)
    (tmp_path / "bad.jsonl").write_text(json.dumps(HEADER) + "\n" + '{"type": \n')
    for typed_from in (passes.TYPED_FROM, 0):
        with (
            mock.patch.object(passes, "TYPED_FROM", typed_from),
            mock.patch.object(passes, "TYPED_AFTER", 1 << 62),
        ):
            seen = [
                calls_own_their_ids(load_run(tmp_path / f"{f}.jsonl", None))
                for f in ("a", "b", "bad")
            ]
        assert seen == [True, False, False]


def test_a_shared_reading_that_fails_leaves_each_case_its_own_error(tmp_path: Path) -> None:
    write_cassette(tmp_path / "bad.jsonl", ANSWERS)
    with (tmp_path / "bad.jsonl").open("a") as out:
        out.write('{"type": "tool.call", "name": \n')
    suite = write_suite(
        tmp_path, [("bad.jsonl", s) for s in STATEMENTS[:2]] + [("gone.jsonl", ["steps == 2"])] * 2
    )
    shared = together(suite)
    assert shared == alone(suite)
    assert all(r.error and not r.passed for r in shared)
    assert "bad.jsonl" in (shared[0].error or "") and "line 7" in (shared[0].error or "")
    assert "gone.jsonl" in (shared[2].error or "")


def test_evaldsl_read_alone_makes_every_case_read_alone(
    tmp_path: Path, read: list[Needs], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_cassette(tmp_path / "a.jsonl", ANSWERS)
    suite = write_suite(tmp_path, [("a.jsonl", s) for s in STATEMENTS])
    work = [(suite, k) for k in range(len(suite.cases))]
    assert parallel.units(work, 2) == [[0, 1], [2, 3]]
    monkeypatch.setenv("EVALDSL_READ_ALONE", "1")
    assert together(suite) == alone(suite)
    assert len(read) == len(STATEMENTS) * 2  # each case, in the run and alone
    assert parallel.units(work, 2) == [[0], [1], [2], [3]]


def test_the_judge_plan_reads_a_recording_once_for_its_cases(
    tmp_path: Path, read: list[Needs]
) -> None:
    write_cassette(tmp_path / "a.jsonl", ANSWERS)
    judged = ['answer judged "gives the temperature"', 'answer[1] judged "names the city"']
    (tmp_path / "s.eval").write_text(
        "".join(f'case "c{k}"\n  cassette "a.jsonl"\n  {j}\n' for k, j in enumerate(judged))
    )
    suite = load_suite(str(tmp_path / "s.eval"), judge=TwoPhaseJudge(RecordingJudge()))
    plan = plan_judge([suite])
    assert len(read) == 1 and read[0].answers == {1} and read[0].answer_tail == 1
    assert plan is not None and (plan.calls, plan.on_live_targets) == (2, 0)


def test_the_facts_of_a_recording_go_after_its_last_case(tmp_path: Path) -> None:
    write_cassette(tmp_path / "a.jsonl", ANSWERS)
    suite = write_suite(tmp_path, [("a.jsonl", s) for s in STATEMENTS[:3]])
    shared = SharedReadings((suite, case) for case in suite.cases)
    facts = shared.facts(suite.cases[0], suite)
    assert facts is not None and shared.facts(suite.cases[1], suite) is facts
    kept = weakref.ref(facts)
    assert shared.facts(suite.cases[2], suite) is facts
    del facts
    gc.collect()
    assert kept() is None
    # a case the run did not plan for, or one whose recording no other case reads
    assert shared.facts(suite.cases[0], suite) is None
    single = SharedReadings([(suite, suite.cases[0])])
    assert single.facts(suite.cases[0], suite) is None


def test_joined_needs_read_what_each_reads() -> None:
    one = Needs(tool_detail={"a"}, answers={1}, answer_tail=1, times=True, counted={"a"})
    two = Needs(tool_results={"b"}, tool_sequence=True, answer_tail=2, cost=True, tokens=True)
    two.held = True
    joined = Needs.joined([one, two])
    assert joined == Needs(
        tool_detail={"a"},
        tool_results={"b"},
        tool_sequence=True,
        answers={1},
        answer_tail=2,
        times=True,
        cost=True,
        tokens=True,
        counted={"a"},
        held=True,
    )
    every = {f.name for f in attrs.fields(Needs) if f.eq}
    assert every == {
        "tool_detail", "tool_results", "probes", "tool_sequence", "answers", "answer_tail",
        "times", "cost", "tokens", "counted", "held",
    }, "a new field of Needs: teach Needs.joined (and this test) how it joins"  # fmt: skip
