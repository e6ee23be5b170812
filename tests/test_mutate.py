"""`evaldsl mutate`: typed mutants of recorded runs, each checked as the runner checks a
run. The examples' survivors are derived by reading their assertions (comments below say
why each survives) and asserted; a differential test writes every mutant to a file and
runs it through the runner; seeds and bounds make runs repeatable; live targets are out of
scope and said to be."""

from __future__ import annotations

import copy
import json
import math
import sys
from pathlib import Path

import pytest

import evaldsl
from evaldsl.mutation.mutants import KINDS, mutants, perturb, with_answer
from evaldsl.mutation.mutate import LIVE_REASON, mutate_suites
from evaldsl.runner import run_suites
from evaldsl.runs.text import answer_text, usage_tokens
from evaldsl.suites import load_suite
from tests.clitools import ROOT, run_evaldsl
from tests.judge_server import JudgeServer, Reply, judged

EXAMPLES = ROOT / "examples"


def survivors(path: Path) -> dict[str, list[str]]:
    report = mutate_suites([load_suite(path)])
    (suite,) = report.suites
    return {c.name: [r.description for r in c.survivors] for c in suite.cases}


# Why each survives: no assertion of the case reads what the mutant changed.
WEATHER_SURVIVORS = {
    "answers with the Xiamen forecast": [
        # only $.city is asserted
        '`get_weather`\'s `$.unit` changed from "C" to "C_"',
        # /\d+\s*C/ and the two cited values (Xiamen, sunny) are still in the answer
        'the answer became a near miss ("in" → "io")',
        "the answer's digits changed (31 → 42, 65 → 76)",
        "tokens doubled (461 → 922)",  # under the 2000 of the header
        "steps doubled (2 → 4: every LLM call made twice)",  # steps <= 5
    ],
    "streams the Tokyo forecast": [
        "the call to `get_weather` was made twice",  # `called`, with no count
        '`get_weather`\'s `$.city` changed from "Tokyo" to "Tokyo_"',
        "the result of the call to `get_weather` was dropped",
        'the answer became a near miss ("take" → "uake")',
        "the answer's digits changed (12 → 23)",  # /\d+ C/ still matches
        "tokens doubled (106 → 212)",
        "steps doubled (1 → 2: every LLM call made twice)",
    ],
    "answers from Anthropic content blocks": [
        "the call to `get_weather` was made twice",  # every call still has unit C
        '`get_weather`\'s `$.city` changed from "Paris" to "Paris_"',
        "the result of the call to `get_weather` was dropped",
        'the answer became a near miss ("and" → "bnd")',
        "the answer's digits changed (4 → 5)",
        "tokens doubled (81 → 162)",  # cost stays under $0.01
        "steps doubled (1 → 2: every LLM call made twice)",
    ],
    "each city is in the request #1 [file=xiamen.jsonl, city=Xiamen]": [
        "the call to `get_weather` was made twice",
        '`get_weather`\'s `$.unit` changed from "C" to "C_"',
        "the result of the call to `get_weather` was dropped",
        'the answer became a near miss ("in" → "io")',
        "the answer's digits changed (31 → 42, 65 → 76)",
        'the answer was cut to its first half ("It\'s sunny in Xiamen toda")',  # has Xiamen
        "tokens doubled (461 → 922)",
        "steps doubled (2 → 4: every LLM call made twice)",
    ],
    "each city is in the request #2 [file=tokyo-stream.jsonl, city=Tokyo]": [
        "the call to `get_weather` was made twice",
        "the result of the call to `get_weather` was dropped",
        'the answer became a near miss ("take" → "uake")',
        "the answer's digits changed (12 → 23)",
        'the answer was cut to its first half ("Tokyo is rainy today,\\n1")',
        "tokens doubled (106 → 212)",
        "steps doubled (1 → 2: every LLM call made twice)",
    ],
}

RESEARCH_SURVIVORS = {
    "research pipeline completes": [
        # `nodes in order [planner, researcher, writer]` holds without the reviewer
        "node `reviewer` was dropped from the visited nodes",
        "memory key `goal` was removed",  # no assertion reads memory.goal
        'memory `goal` changed from "Summarize recent AI news" to "Summarize recent AI news_"',
        'memory `summary` changed from "…lished guidance on agent audits." to '
        '"…lished guidance on agent audits._"',  # still not empty
        'memory `sources` changed from ["https://example.org/a", "https://exam… to '
        '["https://example.org/a"]',  # still an array
        'memory `draft` changed from "" to "_"',  # `memory has draft` only
        'memory `review` changed from {"approved": true, "reviewer": "editor"} to '
        '{"approved": true}',  # still contains {approved: true}
    ],
    "approval waits for a human": [
        'the status changed from "waiting" to "running"',  # status in [waiting, running]
        "node `planner` was dropped from the visited nodes",
        "node `writer` was dropped from the visited nodes",
        "memory key `approver` was removed",
        'memory `digest` changed from "Draft ready for approval." to '
        '"Draft ready for approval._"',  # still starts with Draft
        'memory `approver` changed from null to "_"',
        "tokens doubled (total_tokens_used 2300 → 4600)",  # a budget of 0 is no budget
        "steps doubled (iteration_count 1 → 2)",
    ],
}


def test_weather_survivors() -> None:
    assert survivors(EXAMPLES / "weather" / "weather.eval") == WEATHER_SURVIVORS


def test_research_survivors() -> None:
    assert survivors(EXAMPLES / "research" / "research.eval") == RESEARCH_SURVIVORS


@pytest.mark.parametrize("stem", ["weather/weather", "research/research"])
def test_yaml_twins_score_the_same(stem: str) -> None:
    a = mutate_suites([load_suite(EXAMPLES / f"{stem}.eval")]).to_json()
    b = mutate_suites([load_suite(EXAMPLES / f"{stem}.yaml")]).to_json()
    for report in (a, b):
        for suite in report["suites"]:
            del suite["path"]
            for case in suite["cases"]:
                for m in case["mutants"]:
                    del m["noticed_by"]  # the texts differ (objects vs DSL), not the verdicts
    assert a == b


def test_scores_per_case_and_suite() -> None:
    report = mutate_suites([load_suite(EXAMPLES / "research" / "research.eval")])
    (suite,) = report.suites
    assert [(c.killed, len(c.results)) for c in suite.cases] == [(19, 26), (9, 17)]
    assert suite.score == pytest.approx(28 / 43)
    assert report.score == suite.score
    killed = next(r for r in suite.cases[0].results if r.kind == "double-steps")
    assert killed.killed and killed.noticed_by == ("state.iteration_count <= 3",)


def test_every_kind_appears_on_the_examples() -> None:
    report = mutate_suites(
        [
            load_suite(EXAMPLES / "weather" / "weather.eval"),
            load_suite(EXAMPLES / "research" / "research.eval"),
        ]
    )
    seen = {r.kind for s in report.suites for c in s.cases for r in c.results}
    assert seen == set(KINDS) - {"swap-calls"}  # no example case calls two tools
    two_calls = [
        {"type": "tool.call", "name": "search", "callId": "a", "arguments": {"q": "x"}},
        {"type": "tool.call", "name": "get_weather", "callId": "b", "arguments": {"city": "Oslo"}},
    ]
    (swap,) = [m for m in mutants(two_calls, None) if m.kind == "swap-calls"]
    assert swap.description == ("the call to `search` and the call to `get_weather` swapped places")
    events, _ = swap.make()
    assert [e["name"] for e in events] == ["get_weather", "search"]


# ---- the same path as the runner ---------------------------------------------------------


def _write_suite(folder: Path, tools: str, source_line: str, texts: list[str]) -> Path:
    lines = ['suite "mutant"', tools, 'case "m"', "  " + source_line, *("  " + t for t in texts)]
    path = folder / "m.eval"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize(
    ("suite_path", "case_index"),
    [("weather/weather.eval", 0), ("research/research.eval", 0), ("research/research.eval", 1)],
)
def test_mutants_are_killed_exactly_when_the_runner_fails_them(
    tmp_path: Path, suite_path: str, case_index: int
) -> None:
    suite = load_suite(EXAMPLES / suite_path)
    case = suite.cases[case_index]
    results = mutate_suites([suite], select=case.name).suites[0].cases[0].results
    run = evaldsl.load_run(suite.base_dir / case.source.path)  # type: ignore[union-attr]
    events = list(run.events) if run.events is not None else None
    candidates = mutants(events, run.state)
    assert [m.description for m in candidates] == [r.description for r in results]
    texts = [a.text for a in case.assertions]
    for k, (mutant, result) in enumerate(zip(candidates, results, strict=True)):
        folder = tmp_path / str(k)
        folder.mkdir()
        new_events, new_state = mutant.make()
        if new_state is not None:
            (folder / "run.json").write_text(json.dumps(new_state))
            path = _write_suite(folder, "", 'state "run.json"', texts)
        else:
            header = (suite.base_dir / case.source.path).read_text().splitlines()[0]  # type: ignore[union-attr]
            body = "\n".join(json.dumps(e) for e in new_events or [])
            (folder / "run.jsonl").write_text(header + "\n" + body + "\n")
            path = _write_suite(
                folder, "tools get_weather, search, summarize", 'cassette "run.jsonl"', texts
            )
        (outcome,) = run_suites([load_suite(path)]).cases
        assert outcome.passed is not result.killed, mutant.description
        failing = tuple(a.text for a in outcome.assertions if a.status in ("fail", "error"))
        assert failing == result.noticed_by


# ---- what is not mutated ------------------------------------------------------------------


def test_live_targets_are_out_of_scope_and_said_to_be() -> None:
    report = mutate_suites([load_suite(EXAMPLES / "live" / "live.eval")])
    assert all(c.not_mutated == LIVE_REASON for c in report.suites[0].cases)
    assert report.score is None
    result = run_evaldsl("mutate", "examples/live")
    assert result.returncode == 1
    assert "live targets are out of scope: mutate reads recorded runs only" in result.stdout
    assert "nothing was mutated" in result.stderr


def test_failing_and_unreadable_cases_are_not_mutated() -> None:
    report = mutate_suites([load_suite(ROOT / "examples-failing" / "failures.eval")])
    reasons = [c.not_mutated for c in report.suites[0].cases]
    assert reasons[0] == (
        "it fails on its own recording (4 of 5 assertions fail or error): mutants are "
        "measured against a passing case"
    )
    assert reasons[1] is not None and reasons[1].startswith("its run cannot be read: ")
    assert "corrupted.jsonl:4:" in reasons[1]
    assert reasons[2:] == [LIVE_REASON, LIVE_REASON]


# ---- seeds, bounds, the command -----------------------------------------------------------


def test_seeded_and_bounded() -> None:
    suite = load_suite(EXAMPLES / "research" / "research.eval")
    everything = mutate_suites([suite]).suites[0].cases
    a = mutate_suites([suite], max_mutants=4, seed=7).to_json()
    assert a == mutate_suites([suite], max_mutants=4, seed=7).to_json()
    b = mutate_suites([suite], max_mutants=4, seed=8).to_json()
    assert a != b
    for report in (a, b):
        for case, full in zip(report["suites"][0]["cases"], everything, strict=True):
            assert case["total"] == 4 and case["candidates"] == len(full.results)
            picked = [m["description"] for m in case["mutants"]]
            order = [r.description for r in full.results]
            assert picked == [d for d in order if d in picked]  # kept in order
    text = run_evaldsl("mutate", "examples/research/research.eval", "--max-mutants", "4").stdout
    assert "(picked from 26 with seed 0)" in text


def test_the_near_miss_follows_the_seed() -> None:
    events = list(
        evaldsl.load_run(EXAMPLES / "weather" / "cassettes" / "xiamen.jsonl").events or []
    )
    misses = {
        next(m.description for m in mutants(events, None, seed=s) if m.kind == "answer-near-miss")
        for s in range(8)
    }
    assert len(misses) > 1
    again = [m.description for m in mutants(events, None, seed=3)]
    assert again == [m.description for m in mutants(events, None, seed=3)]


def test_the_command_text_json_and_fail_under() -> None:
    result = run_evaldsl("mutate", "examples/research/research.eval")
    assert result.returncode == 0
    assert "  research pipeline completes: 19 of 26 mutants killed, score 0.73" in result.stdout
    assert "    survived: no assertion noticed when memory key `goal` was removed" in result.stdout
    assert (
        "mutation score 0.65: 28 of 43 mutants killed (seed 0, at most 50 a case)" in result.stdout
    )
    data = json.loads(run_evaldsl("mutate", "examples/research", "--format", "json").stdout)
    assert (data["version"], data["seed"], data["max_mutants"], data["judge"]) == (1, 0, 50, "off")
    assert (data["killed"], data["total"]) == (56, 86)
    case = data["suites"][0]["cases"][0]
    assert set(case) == {
        "name",
        "mutated",
        "reason",
        "score",
        "killed",
        "total",
        "not_measured",
        "candidates",
        "mutants",
    }
    assert set(case["mutants"][0]) == {"kind", "description", "killed", "noticed_by"}
    under = run_evaldsl("mutate", "examples/research/research.eval", "--fail-under", "0.7")
    assert under.returncode == 1 and "below --fail-under 0.7" in under.stdout
    assert (
        run_evaldsl("mutate", "examples/research/research.eval", "--fail-under", "0.6").returncode
        == 0
    )
    only = run_evaldsl("mutate", "examples/research/research.eval", "-k", "approval")
    assert "research pipeline completes" not in only.stdout and "9 of 17" in only.stdout


def test_a_k_pattern_that_matches_no_case_is_said_as_run_says_it() -> None:
    suite = "examples/research/research.eval"
    mutated = run_evaldsl("mutate", suite, "-k", "nothing-like-this")
    ran = run_evaldsl("run", "--no-history", suite, "-k", "nothing-like-this")
    said = "-k 'nothing-like-this' matches none of the 2 cases"
    assert f"no case ran: {said}" in ran.stderr
    assert f"nothing was mutated: {said}" in mutated.stderr
    assert mutated.returncode == ran.returncode == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["no/such/suite.eval"], "no such file or folder: no/such/suite.eval"),
        (["examples/research", "--max-mutants", "0"], "--max-mutants takes a number ≥ 1"),
        (["examples/research", "--fail-under", "2"], "--fail-under takes a score between 0 and 1"),
    ],
)
def test_bad_usage(args: list[str], message: str) -> None:
    result = run_evaldsl("mutate", *args)
    assert result.returncode == 2 and message in result.stderr


# ---- the mutants themselves ---------------------------------------------------------------


VERYDIA = [
    {"type": "llm.invoke", "output": "The total is 42 EUR", "tokensIn": 10, "tokensOut": 5},
    {
        "type": "mcp.call",
        "name": "lookup",
        "args": {"id": 7, "tags": ["a"]},
        "result": {"ok": True},
    },
    {
        "type": "mcp.call",
        "name": "pay",
        "arguments": {"amount": 42.5, "confirm": False, "note": None},
    },
]


def test_mutants_never_change_the_original() -> None:
    xiamen = list(
        evaldsl.load_run(EXAMPLES / "weather" / "cassettes" / "xiamen.jsonl").events or []
    )
    state = evaldsl.load_run(EXAMPLES / "research" / "states" / "completed.json").state
    for events, st in ((xiamen, None), (VERYDIA, None), (None, state)):
        before = copy.deepcopy((events, st))
        for m in mutants(events, st):
            made = m.make()
            assert made != (events, st), m.description
        assert (events, st) == before


def test_verydia_events_are_mutated_through_their_own_fields() -> None:
    by_kind: dict[str, list] = {}
    for m in mutants(VERYDIA, None):
        by_kind.setdefault(m.kind, []).append(m)
    assert len(by_kind["swap-calls"]) == 1 and len(by_kind["drop-call"]) == 2
    changes = [m.description for m in by_kind["change-argument"]]
    assert changes == [
        "`lookup`'s `$.id` changed from 7 to 8",
        '`lookup`\'s `$.tags[0]` changed from "a" to "a_"',
        "`pay`'s `$.amount` changed from 42.5 to 43.5",
        "`pay`'s `$.confirm` changed from false to true",
        '`pay`\'s `$.note` changed from null to "_"',
    ]
    events, _ = by_kind["change-argument"][1].make()
    assert events[1]["args"] == {"id": 7, "tags": ["a_"]}
    (drop,) = by_kind["drop-result"]
    events, _ = drop.make()
    assert "result" not in events[1]
    events, _ = by_kind["double-tokens"][0].make()
    assert usage_tokens(events[0]) == (20, 10)
    events, _ = by_kind["double-steps"][0].make()
    assert evaldsl.compile("steps == 2").check(events).passed
    digits = next(m for m in by_kind["answer-digits"])
    events, _ = digits.make()
    assert events[0]["output"] == "The total is 53 EUR"


def test_calls_of_a_tool_called_more_than_once_are_numbered() -> None:
    events = [
        {"type": "tool.call", "name": "search", "arguments": {"q": "a"}, "callId": "1"},
        {"type": "tool.call", "name": "fetch", "arguments": {"url": "u"}, "callId": "2"},
        {"type": "tool.call", "name": "search", "arguments": {"q": "b"}, "callId": "3"},
        {"type": "tool.result", "callId": "3", "output": "ok"},
    ]
    described = [m.description for m in mutants(events, None)]
    assert described[:7] == [
        "call 1 of `search` was dropped (it had no result)",
        "call 1 of `search` was made twice",
        "the call to `fetch` was dropped (it had no result)",
        "the call to `fetch` was made twice",
        "call 2 of `search` was dropped, with its result",
        "call 2 of `search` was made twice",
        "call 1 of `search` and the call to `fetch` swapped places",
    ]
    assert [d for d in described if "changed" in d or "result of" in d] == [
        '`search`\'s `$.q` changed from "a" to "a_" in call 1',
        '`fetch`\'s `$.url` changed from "u" to "u_"',
        '`search`\'s `$.q` changed from "b" to "b_" in call 2',
        "the result of call 2 of `search` was dropped",
    ]


def test_a_result_belongs_to_the_latest_call_before_it_with_its_id() -> None:
    # as the run index links them: calls that all reuse one id (a log that joins runs)
    # each have their own result, where every result was linked to every call (N² mutants)
    events: list[dict[str, object]] = []
    for n in range(1, 4):
        events.append({"type": "tool.call", "name": "search", "arguments": {"q": n}, "callId": "c"})
        events.append({"type": "tool.result", "callId": "c", "output": f"r{n}"})
    events.insert(0, {"type": "tool.result", "callId": "c", "output": "before any call"})
    # an event id is filed where no call is yet, and a callId hides it from then on
    events += [
        {"type": "tool.call", "name": "fetch", "arguments": {}, "id": "e", "callId": "f"},
        {"type": "tool.result", "callId": "e", "output": "by its event id"},
        {"type": "tool.call", "name": "fetch", "arguments": {}, "callId": "e"},
        {"type": "tool.result", "callId": "e", "output": "the second fetch's"},
    ]
    found = {m.description: m for m in mutants(events, None)}
    dropped = [d for d in found if "result of" in d]
    assert dropped == [
        "the result of call 1 of `search` was dropped",
        "the result of call 2 of `search` was dropped",
        "the result of call 3 of `search` was dropped",
        "the result of call 1 of `fetch` was dropped",
        "the result of call 2 of `fetch` was dropped",
    ]
    kept, _ = found["call 2 of `search` was dropped, with its result"].make()
    assert kept is not None
    assert [ev.get("output") for ev in kept if ev["type"] == "tool.result"] == [
        "before any call",
        "r1",
        "r3",
        "by its event id",
        "the second fetch's",
    ]
    program = evaldsl.compile("every tool search result matches /^r[0-9]$/")
    assert program.check(events).statuses == ["pass"]  # the index reads them alike


def test_a_duplicated_call_has_its_own_result() -> None:
    events = list(
        evaldsl.load_run(EXAMPLES / "weather" / "cassettes" / "xiamen.jsonl").events or []
    )
    (dup,) = [m for m in mutants(events, None) if m.kind == "duplicate-call"]
    twice, _ = dup.make()
    program = evaldsl.compile(
        'tool get_weather called twice; every tool get_weather result $.sky == "sunny"'
    )
    assert program.check(twice).statuses == ["pass", "pass"]


@pytest.mark.parametrize(
    "output",
    [
        "plain",
        {"choices": [{"message": {"content": "openai"}}]},
        {"choices": [{"text": "completion"}]},
        {"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
        {"content": "streamed", "usage": {"promptTokens": 1}},
        {"text": "text field"},
    ],
)
def test_answers_are_rewritten_in_their_own_shape(output: object) -> None:
    new = with_answer(output, "a new answer")
    assert answer_text(new) == "a new answer"
    assert type(new) is type(output)


def test_perturbed_values_differ() -> None:
    for value in ["", "x", 0, 1.5, True, False, None, [], [1], {}, {"a": 1}]:
        assert perturb(value) != value
    # (found by a hunt: a float from 2**53 on did not change by 1)
    for big in [2.0**53, 1.7e16, 1e300, -1e300, sys.float_info.max, -sys.float_info.max]:
        assert perturb(big) != big and math.isfinite(perturb(big))


def test_a_large_float_in_memory_is_a_mutant_the_suite_notices(tmp_path: Path) -> None:
    """Found by a hunt: `memory.big == 1e300` survived "memory `big` changed from 1e+300
    to 1e+300", a mutant equal to the original, which no assertion can notice."""
    (tmp_path / "s.json").write_text('{"status": "completed", "memory": {"big": 1e300}}')
    suite = tmp_path / "m.eval"
    suite.write_text('case "c"\n  state "s.json"\n  memory.big == 1e300\n')
    (case,) = mutate_suites([load_suite(suite)]).suites[0].cases
    altered = [r for r in case.results if r.kind == "alter-memory-key"]
    assert [r.killed for r in altered] == [True]
    assert altered[0].description == "memory `big` changed from 1e+300 to 1.0000000000000002e+300"


def test_a_case_with_a_check_error_is_said_once_in_words(tmp_path: Path) -> None:
    suite = tmp_path / "s.eval"
    suite.write_text('suite "x"\ncase "c"\n  cassette "missing.jsonl"\n  steps >= 1\n')
    text = run_evaldsl("mutate", str(suite)).stdout
    assert "c: not mutated: not run: 1 check error (first: " in text
    assert "not run: not run:" not in text
    assert "the suite has 1 error: `evaldsl check` shows them" in text


def test_a_case_whose_assertions_were_all_skipped_is_not_mutated(tmp_path: Path) -> None:
    # judge-only without a judge: nothing is tested, where its 10 mutants counted as
    # survivors (score 0.00) and pulled the overall score down
    cassette = EXAMPLES / "weather" / "cassettes" / "xiamen.jsonl"
    suite = tmp_path / "m.eval"
    suite.write_text(
        f'case "judgeonly"\n  cassette "{cassette}"\n  answer judged "nice" >= 0.5\n'
        f'case "counted"\n  cassette "{cassette}"\n  tool get_weather called once\n'
    )
    result = run_evaldsl("mutate", str(suite), "--format", "json")
    judged, counted = json.loads(result.stdout)["suites"][0]["cases"]
    assert (judged["mutated"], judged["total"]) == (False, 0)
    assert judged["reason"].startswith("every assertion was skipped on its own recording")
    assert counted["mutated"] and counted["total"] > 0
    text = run_evaldsl("mutate", str(suite)).stdout
    assert "  judgeonly: not mutated: every assertion was skipped" in text
    assert f": {counted['killed']} of {counted['total']} mutants killed (seed 0" in text
    assert "judge assertions were skipped (--judge live asks" in text


def test_the_judge_note_only_when_an_assertion_was_skipped() -> None:
    text = run_evaldsl("mutate", "examples/research/research.eval").stdout
    assert "judge assertions were skipped" not in text


def test_judge_assertions_skipped_under_judge_live_are_said(tmp_path: Path) -> None:
    """Found by a hunt: `--judge live` without a key skipped the judge assertions (as
    `run` does, saying so), but mutate's output said nothing: its score read as judged.
    It now says they were skipped, and why."""
    cassette = EXAMPLES / "weather" / "cassettes" / "xiamen.jsonl"
    suite = tmp_path / "m.eval"
    suite.write_text(
        f'case "both"\n  cassette "{cassette}"\n  answer judged "nice" >= 0.5\n'
        "  tool get_weather called once\n"
    )
    text = run_evaldsl("mutate", str(suite), "--judge", "live", cwd=tmp_path).stdout
    assert text.endswith(
        "judge assertions were skipped: no API key and no cached verdict (set "
        "EVALDSL_JUDGE_API_KEY to ask the judge of each mutant)\n"
    ), text


def test_a_mutant_only_a_failed_judge_errored_on_is_not_measured(tmp_path: Path) -> None:
    # the judge answers the original's question, then refuses every call (a spent quota):
    # its errors noticed nothing, where they counted as kills with exit 0
    cassette = EXAMPLES / "weather" / "cassettes" / "xiamen.jsonl"
    suite = tmp_path / "m.eval"
    suite.write_text(
        f'case "judged"\n  cassette "{cassette}"\n  answer judged "nice" >= 0.5\n'
        "  tool get_weather called once\n"
    )
    refused = Reply(401, {"error": {"message": "quota exceeded"}})
    with JudgeServer([judged(True, 0.9), refused]) as server:
        env = {"EVALDSL_JUDGE_API_KEY": "sk-test-1234567890", "EVALDSL_JUDGE_BASE_URL": server.url}
        args = ["mutate", str(suite), "--judge", "live", "--judge-cache", str(tmp_path / "c")]
        result = run_evaldsl(*args, "--format", "json", env=env)
        text = run_evaldsl(*args, env=env)
    assert result.returncode == 1 and text.returncode == 1
    data = json.loads(result.stdout)
    (case,) = data["suites"][0]["cases"]
    unmeasured = [m for m in case["mutants"] if m.get("not_measured_by_judge")]
    assert unmeasured and not any(m["killed"] for m in unmeasured)
    assert all(m["noticed_by"] == [] for m in unmeasured)
    killed = [m for m in case["mutants"] if m["killed"]]
    assert killed and all(m["noticed_by"] == ["tool get_weather called once"] for m in killed)
    assert case["not_measured"] == data["not_measured"] == len(unmeasured)
    assert data["judge_failures"] >= len(unmeasured) and "HTTP 401" in data["judge_failure"]
    assert data["score"] == round(len(killed) / (case["total"] - len(unmeasured)), 6)
    said = f"({len(unmeasured)} mutants not measured): judge: the endpoint answered HTTP 401"
    assert said in text.stdout and said in text.stderr and said in result.stderr
    assert f"; {len(unmeasured)} not measured (the judge failed)" in text.stdout


def test_names_are_shown_as_escapes(tmp_path: Path) -> None:
    # A suite and a case named with an escape sequence and a line break were printed raw.
    name = "c\x1b[2J\x07\r\u202e\nx"
    suite = {
        "suite": name,
        "cases": [{"name": name, "cassette": "t.jsonl", "expect": "steps <= 9"}],
    }
    (tmp_path / "s.json").write_text(json.dumps(suite), encoding="utf-8")
    reply = {"type": "llm.response", "output": "fine"}
    (tmp_path / "t.jsonl").write_text(json.dumps(reply) + "\n", encoding="utf-8")
    done = run_evaldsl("mutate", "s.json", cwd=tmp_path)
    shown = "c\\x1b[2J\\x07\\x0d\\u202e\\nx"
    assert f"s.json: {shown}\n  {shown}: " in done.stdout, done.stdout + done.stderr
    assert not any(c in done.stdout for c in "\x1b\x07\r\u202e")
