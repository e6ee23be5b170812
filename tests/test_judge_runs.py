"""A serial run's judge calls overlap across cases, against a real server on 127.0.0.1.

A case whose judge questions went to the endpoint waits for its answers while the next
cases run (`runner.core.MAX_JUDGING` at most); the report, the progress callbacks and the
verdicts stay in suite order, and Ctrl-C takes back the questions not sent yet.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import evaldsl.runner.core
from evaldsl.judge.client import LLMJudge
from evaldsl.judge.config import JudgeConfig
from evaldsl.judge.plan import TwoPhaseJudge
from evaldsl.runner.core import RunInterrupted, execute_case, run_suites
from evaldsl.runner.results import CaseResult
from evaldsl.suites.build import load_suite
from evaldsl.suites.model import Suite
from tests.judge_server import JudgeServer, Recorded, Reply, judged

ROOT = Path(__file__).resolve().parent.parent
CASSETTE = ROOT / "tests/fixtures/traceplay/demo/cassette.example.jsonl"
KEY = "sk-test-SECRET-0123456789abcdef"


def by_rubric(delay: float) -> Callable[[Recorded], Reply]:
    """Rubric `r<N>` scores N / 10 after `delay` seconds; `r-broken` gets a bad reply."""

    def reply(request: Recorded) -> Reply:
        rubric = request.body["messages"][1]["content"].split("\n")[0].removeprefix("Rubric: ")
        if rubric == "r-broken":
            return Reply(200, "not a completion", delay=delay)
        score = int(rubric.removeprefix("r")) / 10
        return Reply(**{**vars(judged(score >= 0.5, score, rubric)), "delay": delay})

    return reply


def judged_suite(folder: Path, rubrics: list[str], server: JudgeServer, **config: Any) -> Suite:
    """One case a rubric, each judging the cassette's answer (and counting its tool), plus
    a case with no judge question between them."""
    lines = []
    for n, rubric in enumerate(rubrics):
        lines += [f'case "c{n}"', f'  cassette "{CASSETTE}"', "  tool get_weather called"]
        lines.append(f'  answer judged "{rubric}" >= 0.5')
        if n == 1:
            lines += ['case "plain"', f'  cassette "{CASSETTE}"', "  steps <= 10"]
    path = folder / "judged.eval"
    path.write_text("\n".join(lines) + "\n")
    settings: dict[str, Any] = {
        "api_key": KEY,
        "base_url": server.url,
        "cache_dir": folder / "cache",
        "timeout": 5.0,
        "retries": 0,
    }
    settings.update(config)
    return load_suite(path, judge=TwoPhaseJudge(LLMJudge(JudgeConfig(**settings))))


def summary(result: CaseResult) -> tuple[Any, ...]:
    return (
        result.name,
        result.passed,
        result.score,
        result.error,
        [(a.status, a.message, a.actual) for a in result.assertions],
    )


def test_a_serial_run_overlaps_the_judge_calls_of_its_cases(serve: Any, tmp_path: Path) -> None:
    server = serve(by_rubric(0.3))
    rubrics = ["r9", "r2", "r7", "r-broken", "r6", "r1"]
    suite = judged_suite(tmp_path, rubrics, server)
    assert not suite.diagnostics
    announced: list[str] = []
    report = run_suites([suite], on_case=lambda s, result: announced.append(result.name))
    names = ["c0", "c1", "plain", "c2", "c3", "c4", "c5"]
    assert announced == names  # in suite order, though answered in any order
    assert [c.name for c in report.cases] == names
    assert server.count == 6 and server.max_in_flight >= 2  # one question a case: overlapped
    statuses = {c.name: [a.status for a in c.assertions] for c in report.cases}
    assert statuses == {
        "c0": ["pass", "pass"],
        "c1": ["pass", "fail"],
        "plain": ["pass"],
        "c2": ["pass", "pass"],
        "c3": ["pass", "error"],  # a bad reply is the assertion's error, never a pass
        "c4": ["pass", "pass"],
        "c5": ["pass", "fail"],
    }
    # the same results as each case run alone, one after the other (answers now cached)
    alone = [execute_case(case, suite) for case in suite.cases]
    assert [summary(r) for r in alone] == [summary(r) for r in report.cases]


def test_the_cases_waiting_for_answers_are_bounded(
    serve: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(evaldsl.runner.core, "MAX_JUDGING", 2)
    server = serve(by_rubric(0.2))
    suite = judged_suite(tmp_path, [f"r{n}" for n in range(8)], server)
    report = run_suites([suite])
    passed = [c.passed for c in report.cases]
    assert passed == [False, False, True, False, False, False, True, True, True]  # r5-r7 pass
    # two cases wait, and the third begun is the one more that makes the head's wait
    assert server.count == 8 and 2 <= server.max_in_flight <= 3


def test_ctrl_c_takes_back_the_questions_not_sent(serve: Any, tmp_path: Path) -> None:
    server = serve(by_rubric(0.3))
    suite = judged_suite(tmp_path, [f"r{n}" for n in range(6)], server, max_concurrency=1)

    def stop(s: Suite, result: CaseResult) -> None:
        raise KeyboardInterrupt

    started = time.monotonic()
    with pytest.raises(RunInterrupted) as stopped:
        run_suites([suite], on_case=stop)
    assert [c.name for c in stopped.value.report.cases] == ["c0"]  # the one reported
    assert stopped.value.report.interrupted
    time.sleep(0.8)  # long enough for any question still queued to have gone out
    # the first case's question, and at most the one on its way when Ctrl-C came
    assert 1 <= server.count <= 2
    assert time.monotonic() - started < 5
