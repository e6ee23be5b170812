"""A serial run's judge calls overlap across cases, against a real server on 127.0.0.1.

A case whose judge questions went to the endpoint waits for its answers while the next
cases run (`runner.waiting.MAX_JUDGING` at most), in a serial run and in each `-j`
worker; the report, the progress callbacks and the verdicts stay in suite order, Ctrl-C
takes back the questions not sent yet, and a worker that dies loses no case.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

import evaldsl.runner.waiting
from evaldsl.judge.client import LLMJudge
from evaldsl.judge.config import JudgeConfig
from evaldsl.judge.plan import RecordingJudge, TwoPhaseJudge
from evaldsl.judge.protocol import JudgeOutcome
from evaldsl.runner.core import RunInterrupted, RunOptions, execute_case, run_suites
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


def judged_suite(
    folder: Path,
    rubrics: list[str],
    server: JudgeServer | None,
    *,
    own: bool = False,
    **config: Any,
) -> Suite:
    """One case a rubric, each judging the cassette's answer (and counting its tool), plus
    a case with no judge question between them; `own`: each case on a copy of the
    cassette of its own (so each is a `-j` task of its own). The judge asks `server`, or
    (None) is `config["judge"]`."""
    lines = []
    for n, rubric in enumerate(rubrics):
        cassette = CASSETTE
        if own:
            cassette = folder / f"cassette-{n}.jsonl"
            cassette.write_bytes(CASSETTE.read_bytes())
        lines += [f'case "c{n}"', f'  cassette "{cassette}"', "  tool get_weather called"]
        lines.append(f'  answer judged "{rubric}" >= 0.5')
        if n == 1:
            lines += ['case "plain"', f'  cassette "{CASSETTE}"', "  steps <= 10"]
    path = folder / "judged.eval"
    path.write_text("\n".join(lines) + "\n")
    if server is None:
        return load_suite(path, judge=config["judge"])
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
    monkeypatch.setattr(evaldsl.runner.waiting, "MAX_JUDGING", 2)
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


def test_each_j_worker_overlaps_the_judge_calls_of_its_cases(serve: Any, tmp_path: Path) -> None:
    server = serve(by_rubric(0.3))
    rubrics = ["r9", "r2", "r7", "r-broken", "r6", "r1", "r8", "r3"]
    suite = judged_suite(tmp_path, rubrics, server, own=True)  # each case a task of its own
    announced: list[str] = []
    report = run_suites([suite], RunOptions(jobs=2), on_case=lambda s, r: announced.append(r.name))
    names = ["c0", "c1", "plain", "c2", "c3", "c4", "c5", "c6", "c7"]
    assert announced == names and [c.name for c in report.cases] == names
    # two workers, and more calls than two at once: each worker went on with its next
    # cases while the answers of the ones before were on their way
    assert server.count == 8 and server.max_in_flight >= 3
    serial = run_suites([judged_suite(tmp_path, rubrics, server, own=True)])
    assert server.count == 9  # all cached now, but the bad reply's question (asked again)
    assert [summary(c) for c in report.cases] == [summary(c) for c in serial.cases]


class Answering(RecordingJudge):
    """Answers every question with a pass, but rubric "die", which ends its process."""

    def __call__(self, text: str, rubric: str, *, model: Any, threshold: Any) -> JudgeOutcome:
        if rubric == "die":
            os._exit(7)
        return JudgeOutcome("pass", "fine", 0.9)


class DyingJudge(TwoPhaseJudge):
    """The command's judge, whose answers come 0.2 s after they are asked, and whose
    worker dies when it gives the answer of rubric "die": the case that waited for it
    must still have a result."""

    def __init__(self) -> None:
        super().__init__(Answering())

    def submit(self, requests: Any) -> list[Future[Any]]:
        answer: Future[Any] = Future()
        threading.Timer(0.2, answer.set_result, (None,)).start()
        return [answer]


def test_a_worker_that_dies_while_its_cases_wait_loses_none(tmp_path: Path) -> None:
    rubrics = ["ok", "ok", "die", "ok", "ok", "ok"]
    suite = judged_suite(tmp_path, rubrics, None, own=True, judge=DyingJudge())
    report = run_suites([suite], RunOptions(jobs=2))
    assert [c.name for c in report.cases] == ["c0", "c1", "plain", "c2", "c3", "c4", "c5"]
    died = report.cases[3]
    assert not died.passed and died.error is not None and "worker failed" in died.error
    for case in report.cases:  # a result for each: passed, or failed with its worker
        assert case.passed or (case.error is not None and "worker failed" in case.error)
