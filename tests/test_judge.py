"""Tests for evaldsl.judge against a real chat-completions server on 127.0.0.1.

The server (tests/judge_server.py) speaks HTTP on an ephemeral port and is scripted per
test: replies, status codes, delays. Retries never really sleep: the judge is given a
`sleep` that records the waits. Every network test bounds its retries and timeouts.
"""

from __future__ import annotations

import doctest
import json
import logging
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import hypothesis
import pytest
from hypothesis import given
from hypothesis import strategies as st

import evaldsl
import evaldsl.judge.cache
import evaldsl.judge.client
import evaldsl.judge.config
import evaldsl.judge.plan
import evaldsl.judge.protocol
import evaldsl.judge.reply
from evaldsl.judge.cache import cache_key, read_cache, write_cache
from evaldsl.judge.client import LLMJudge
from evaldsl.judge.config import DEFAULT_BASE_URL, ENABLE_HINT, JudgeConfig, JudgeConfigError
from evaldsl.judge.plan import RecordingJudge, TwoPhaseJudge, plan, uncached_plan
from evaldsl.judge.protocol import JudgePlan, JudgeRequest
from evaldsl.judge.reply import JudgeReply, parse_reply, verdict
from tests.fuzzing import examples
from tests.judge_server import JudgeServer, Recorded, Reply, completion, judged

ROOT = Path(__file__).resolve().parent.parent
CASSETTE = ROOT / "tests/fixtures/traceplay/demo/cassette.example.jsonl"
ANSWER = "Xiamen is sunny, 31C."  # the cassette's answer
RUBRIC = "mentions weather"
TRACEPLAY_KEY = "23bfe9152918833134ecb9268a2dabee3678ea8380dd2f818006852e89c52e42"
KEY = "sk-test-SECRET-0123456789abcdef"


# -- fixtures


class Judges:
    """Makes judges whose retries record their waits instead of sleeping; closes them."""

    def __init__(self, cache_dir: Path) -> None:
        self.cache_dir = cache_dir
        self.sleeps: list[float] = []
        self.made: list[LLMJudge] = []

    def config(self, server: JudgeServer | None = None, **settings: Any) -> JudgeConfig:
        values: dict[str, Any] = {
            "api_key": KEY,
            "base_url": server.url if server is not None else DEFAULT_BASE_URL,
            "cache_dir": self.cache_dir,
            "timeout": 5.0,
            "retries": 2,
            "backoff": 0.001,
        }
        values.update(settings)
        return JudgeConfig(**values)

    def __call__(self, server: JudgeServer | None = None, **settings: Any) -> LLMJudge:
        judge = LLMJudge(self.config(server, **settings), sleep=self.sleeps.append)
        self.made.append(judge)
        return judge


@pytest.fixture
def judges(tmp_path: Path) -> Iterator[Judges]:
    made = Judges(tmp_path / "judge-cache")
    yield made
    for judge in made.made:
        judge.close()


def ask(judge: LLMJudge, threshold: float | None = None, **kw: Any) -> Any:
    text = kw.pop("text", ANSWER)
    rubric = kw.pop("rubric", RUBRIC)
    return judge(text, rubric, model=kw.pop("model", None), threshold=threshold)


def cache_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("*")) if folder.exists() else []


# -- the cache key and the configuration


def test_cache_key_is_traceplays() -> None:
    key = cache_key(ANSWER, RUBRIC, "gpt-4o-mini", "https://api.openai.com/v1")
    assert key == TRACEPLAY_KEY
    assert cache_key(ANSWER, RUBRIC) == TRACEPLAY_KEY  # the defaults
    config = JudgeConfig(cache_dir="c")
    assert LLMJudge(config).cache_path(JudgeRequest(ANSWER, RUBRIC)) == Path(
        f"c/{TRACEPLAY_KEY}.json"
    )


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        # computed with node: crypto sha256 of JSON.stringify({answer, rubric, model, apiBase})
        ("\ud800x", "2bc1f5f2f5f3941c1bc429b524ac2606d11c715d997f443e8d4b82fd9bce8989"),
        ("a😀b", "1649adf43cfc345c780107af5af07a4840ca5c0d202e0469eda479bea10aee84"),
        ("a\ud83d\ude00b", "1649adf43cfc345c780107af5af07a4840ca5c0d202e0469eda479bea10aee84"),
        ("é\u2028\u0001\u007f", "46306c22e640e276e1205c5de1968ff5b351970cc873341b4fd2ceb0209c9ab7"),
    ],
)
def test_cache_key_matches_javascript_on_awkward_text(answer: str, expected: str) -> None:
    assert cache_key(answer, RUBRIC) == expected


def test_config_from_env() -> None:
    config = JudgeConfig.from_env({})
    assert (config.api_key, config.base_url, config.model) == (
        None,
        DEFAULT_BASE_URL,
        "gpt-4o-mini",
    )
    assert (config.mode, config.cache_dir, config.timeout) == (
        "live",
        Path(".evaldsl/judge-cache"),
        30.0,
    )
    env = {
        "EVALDSL_JUDGE_API_KEY": f" {KEY}\n",
        "EVALDSL_JUDGE_BASE_URL": "http://localhost:8080/v1/",
        "EVALDSL_JUDGE_MODEL": "llama3",
    }
    config = JudgeConfig.from_env(env, mode="frozen", cache_dir="x", timeout=None)
    assert config.api_key == KEY
    assert config.base_url == "http://localhost:8080/v1"
    assert config.chat_url == "http://localhost:8080/v1/chat/completions"
    assert (config.model, config.mode, config.cache_dir, config.timeout) == (
        "llama3",
        "frozen",
        Path("x"),
        30.0,
    )
    assert JudgeConfig.from_env({"EVALDSL_JUDGE_API_KEY": ""}).api_key is None
    assert KEY not in repr(config) and KEY not in str(config)
    assert KEY not in repr(LLMJudge(config))
    with pytest.raises(TypeError, match="colour"):
        JudgeConfig.from_env({}, colour="red")
    with pytest.raises(ValueError):
        JudgeConfig(mode="sometimes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="http"):
        JudgeConfig(base_url="api.openai.com/v1")
    with pytest.raises(ValueError):
        JudgeConfig(retries=-1)
    with pytest.raises(ValueError):
        JudgeConfig(timeout=0)


@pytest.mark.parametrize(
    ("text", "judged"),
    [
        ('answer judged "polite"', True),
        ('tool a called; not (answer judged "polite" or steps < 3)', True),
        ('steps < 3 and not answer judged "polite" >= 0.5', True),
        ('no tool a; answer contains "judged"', False),
        ("tool a called\nnot (steps < 3 and errors == 0)", False),
    ],
)
def test_a_case_asks_the_judge_when_any_assertion_does_at_any_depth(
    text: str, judged: bool
) -> None:
    # (noted while compiling: the runner plans judge calls only for such cases)
    assert evaldsl.compile(text).cases[0].judged is judged
    suite = 'suite "s"\ncase "one"\ncassette "x.jsonl"\ntool z called\ncase "two"\n'
    suite += f'cassette "x.jsonl"\n{text}\n'
    assert [c.judged for c in evaldsl.compile(suite).cases] == [False, judged]


# -- verdicts from a live endpoint


def test_pass_and_the_request_sent(serve: Any, judges: Judges) -> None:
    server = serve(judged(True, 0.9, "it mentions sunny weather"))
    outcome = ask(judges(server))
    assert outcome.status == "pass"
    assert outcome.message == "judge: PASS (score 0.9) — it mentions sunny weather"
    assert outcome.score == 0.9

    (request,) = server.requests
    assert request.path == "/v1/chat/completions"  # the /v1 is kept (traceplay dropped it)
    assert request.headers["Authorization"] == f"Bearer {KEY}"
    body = request.body
    assert body["model"] == "gpt-4o-mini"
    assert body["temperature"] == 0
    assert body["response_format"] == {"type": "json_object"}
    system, user = body["messages"]
    assert system["role"] == "system" and "ONLY a JSON object" in system["content"]
    assert '"passed"' in system["content"] and '"score"' in system["content"]
    assert user == {"role": "user", "content": f"Rubric: {RUBRIC}\n\nAnswer: {ANSWER}"}

    path = judges.cache_dir / f"{cache_key(ANSWER, RUBRIC, 'gpt-4o-mini', server.url)}.json"
    record = json.loads(path.read_text("utf-8"))
    assert record["passed"] is True and record["score"] == 0.9
    assert record["reason"] == "it mentions sunny weather" and record["model"] == "gpt-4o-mini"
    assert [p.name for p in cache_files(judges.cache_dir)] == [path.name]  # no temp files left


def test_fail(serve: Any, judges: Judges) -> None:
    server = serve(judged(False, 0.1, "no weather at all"))
    outcome = ask(judges(server))
    assert (outcome.status, outcome.score) == ("fail", 0.1)
    assert outcome.message == "judge: FAIL (score 0.1) — no weather at all"


def test_pass_without_a_score(serve: Any, judges: Judges) -> None:
    outcome = ask(judges(serve(judged(True, None, "fine"))))
    assert (outcome.status, outcome.message, outcome.score) == ("pass", "judge: PASS — fine", None)


@pytest.mark.parametrize(
    ("passed", "score", "threshold", "status", "shown"),
    [
        (True, 0.7, 0.7, "pass", "score 0.7 ≥ 0.7"),  # equality passes
        (False, 0.7, 0.7, "pass", "score 0.7 ≥ 0.7"),  # the threshold decides, not `passed`
        (True, 0.69, 0.7, "fail", "score 0.69 < 0.7"),  # just below fails
        (True, 0.6999999, 0.7, "fail", "score 0.6999999 < 0.7"),
        (True, 1, 1, "pass", "score 1 ≥ 1"),
        (False, 0, 0, "pass", "score 0 ≥ 0"),
    ],
)
def test_threshold_edges(
    serve: Any,
    judges: Judges,
    passed: bool,
    score: float,
    threshold: float,
    status: str,
    shown: str,
) -> None:
    outcome = ask(judges(serve(judged(passed, score, "why"))), threshold)
    assert outcome.status == status
    assert outcome.message == f"judge: {status.upper()} ({shown}) — why"
    assert outcome.score == score


def test_a_threshold_needs_a_score(serve: Any, judges: Judges) -> None:
    outcome = ask(judges(serve(judged(True, None, "fine"))), 0.5)
    assert outcome.status == "error"
    assert "no score" in outcome.message and "threshold (>= 0.5)" in outcome.message


def test_the_model_is_part_of_the_request_and_the_key(serve: Any, judges: Judges) -> None:
    server = serve(judged(True, 0.9))
    judge = judges(server, model="default-model")
    ask(judge)
    ask(judge, model="gpt-4o")
    assert [r.body["model"] for r in server.requests] == ["default-model", "gpt-4o"]
    assert len(cache_files(judges.cache_dir)) == 2


def test_base_url_trailing_slash_keeps_v1(serve: Any, judges: Judges) -> None:
    server = serve(judged(True, 0.9))
    ask(judges(server, base_url=server.url + "/"))
    assert server.requests[0].path == "/v1/chat/completions"


def test_end_to_end_through_compile(serve: Any, judges: Judges) -> None:
    server = serve(judged(True, 0.82, "mentions sunny and 31C"))
    program = evaldsl.compile('answer judged "mentions weather" >= 0.7', judge=judges(server))
    result = program.check(str(CASSETTE))
    (verdict_,) = result.verdicts
    assert result.passed and verdict_.status == "pass"
    assert verdict_.message == "judge: PASS (score 0.82 ≥ 0.7) — mentions sunny and 31C"
    assert (verdict_.actual, verdict_.expected) == (0.82, 0.7)
    assert server.requests[0].body["messages"][1]["content"] == (
        f"Rubric: {RUBRIC}\n\nAnswer: {ANSWER}"
    )


# -- the cache


def test_cache_hit_after_the_server_stops_needs_no_key(serve: Any, judges: Judges) -> None:
    server = serve(judged(True, 0.8, "sunny"))
    first = ask(judges(server), 0.7)
    server.stop()
    for settings in ({"api_key": None}, {"api_key": None, "mode": "frozen"}, {}):
        again = ask(judges(server, **settings), 0.7)
        assert again == first
    assert server.count == 1


def test_traceplay_cache_files_are_reused(tmp_path: Path, judges: Judges) -> None:
    folder = tmp_path / ".traceplay/judge-cache"
    folder.mkdir(parents=True)
    (folder / f"{TRACEPLAY_KEY}.json").write_text('{"passed":true,"reason":"mentions sunny"}')
    judge = judges(api_key=None, cache_dir=folder)  # the default base URL and model

    result = evaldsl.compile('answer judged "mentions weather"', judge=judge).check(CASSETTE)
    assert result.statuses == ["pass"]
    assert result.verdicts[0].message == "judge: PASS — mentions sunny"

    with_threshold = evaldsl.compile('answer judged "mentions weather" >= 0.5', judge=judge)
    (error,) = with_threshold.check(CASSETTE).verdicts
    assert error.status == "error" and "no score" in error.message


def test_traceplays_empty_error_entry_is_a_miss(tmp_path: Path, judges: Judges) -> None:
    # traceplay cached `{}` for a JSON error body and called it a fail: here it is no verdict.
    judges.cache_dir.mkdir(parents=True)
    (judges.cache_dir / f"{TRACEPLAY_KEY}.json").write_text("{}")
    assert ask(judges(api_key=None)).status == "skip"
    assert ask(judges(api_key=None, mode="frozen")).status == "error"


def test_a_cache_file_saved_with_a_bom_is_read(serve: Any, judges: Judges) -> None:
    # (it was refused: "the file is not JSON (Unexpected UTF-8 BOM (decode using utf-8-sig)")
    server = serve(judged(False, 0.1))
    path = judges.cache_dir / f"{cache_key(ANSWER, RUBRIC, 'gpt-4o-mini', server.url)}.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(b'\xef\xbb\xbf{"passed": true, "score": 0.9, "reason": "kept"}')
    assert read_cache(path) == JudgeReply(True, 0.9, "kept")
    outcome = ask(judges(server, mode="frozen"))
    assert outcome.message == "judge: PASS (score 0.9) — kept" and server.count == 0


@pytest.mark.parametrize(
    "content",
    # (a score past a float's range once raised OverflowError out of the cache's reading)
    [
        "{trunc",
        "",
        "[1, 2]",
        '{"passed": "yes"}',
        "NaN",
        '{"passed": true, "score": 1' + "0" * 400 + "}",
    ],
)
def test_a_corrupt_cache_file_is_a_miss(
    serve: Any, judges: Judges, content: str, caplog: pytest.LogCaptureFixture
) -> None:
    server = serve(judged(True, 0.9, "fresh"))
    path = judges.cache_dir / f"{cache_key(ANSWER, RUBRIC, 'gpt-4o-mini', server.url)}.json"
    path.parent.mkdir(parents=True)
    path.write_text(content)
    assert read_cache(path) is None
    assert ask(judges(server, api_key=None)).status == "skip"
    outcome = ask(judges(server))
    assert outcome.message == "judge: PASS (score 0.9) — fresh" and server.count == 1
    assert read_cache(path) == JudgeReply(True, 0.9, "fresh")  # rewritten whole


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ('{"passed":"false"}', 'the file has no boolean "passed": "{\\"passed\\":\\"false\\"}"'),
        ("{}", 'the file has no boolean "passed": "{}"'),
        ('{"passed": true, "score": 7}', 'the file\'s "score" 7 is not in [0, 1]'),
        (
            '{"score": 1' + "0" * 400 + ', "passed": true}',
            'the file\'s "score" 10000000000000000000000… is not in [0, 1]',
        ),
        ("{trunc", "the file is not JSON (Expecting property name"),
        ("\udcff", "the file is not UTF-8 text"),
        (
            '{"passed": false, "passed": true, "score": 0.9}',
            'the file writes "passed" twice: which one is the verdict cannot be known',
        ),
    ],
)
def test_frozen_says_why_a_cache_file_was_refused(
    serve: Any, judges: Judges, content: str, why: str
) -> None:
    # it said "no cached verdict (looked for …)", the reason only in a log
    server = serve(judged(True, 0.9))
    path = judges.cache_dir / f"{cache_key(ANSWER, RUBRIC, 'gpt-4o-mini', server.url)}.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(content.encode("utf-8", "surrogateescape"))
    outcome = ask(judges(server, mode="frozen"))
    assert outcome.status == "error" and server.count == 0
    assert outcome.message.startswith(
        f"judge: the cache file {path} was refused and --judge frozen forbids calling the "
        f"judge (fix or delete the file): {why}"
    )
    assert "reply" not in outcome.message


def test_a_cached_verdict_without_a_score_is_asked_again_for_a_threshold(
    serve: Any, judges: Judges
) -> None:
    # traceplay's format has no score: a threshold errored on every run, the judge never
    # asked again; now live asks and rewrites the file, frozen names the file and the fix
    server = serve(judged(True, 0.8, "fresh"))
    path = judges.cache_dir / f"{cache_key(ANSWER, RUBRIC, 'gpt-4o-mini', server.url)}.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"passed":true,"reason":"traceplay said ok"}')
    frozen = ask(judges(server, mode="frozen"), 0.7)
    assert frozen.status == "error" and server.count == 0
    assert frozen.message == (
        f"judge: the verdict cached in {path} has no score, and a threshold (>= 0.7) needs "
        "one (delete the file: --judge live with a key asks again) — traceplay said ok"
    )
    judge = judges(server)
    assert ask(judge).message == "judge: PASS — traceplay said ok"  # no threshold: enough
    assert server.count == 0
    assert ask(judge, 0.7).message == "judge: PASS (score 0.8 ≥ 0.7) — fresh"
    assert ask(judge, 0.7).status == "pass" and server.count == 1  # asked once
    assert read_cache(path) == JudgeReply(True, 0.8, "fresh")  # the file rewritten
    assert ask(judges(server), 0.9).status == "fail" and server.count == 1


def test_the_model_that_answered_is_recorded_and_said_when_another(
    serve: Any, judges: Judges
) -> None:
    # a reply naming another model than asked was cached under the asked one, unsaid
    other = completion({"passed": True, "score": 0.95, "reason": "ok"}, model="llama-3-8b")
    server = serve(other)
    outcome = ask(judges(server), 0.7)
    said = "judge: PASS (score 0.95 ≥ 0.7) — ok (answered by llama-3-8b, not gpt-4o-mini)"
    assert outcome.message == said
    (path,) = cache_files(judges.cache_dir)
    record = json.loads(path.read_text())
    assert (record["model"], record["answered_by"]) == ("gpt-4o-mini", "llama-3-8b")
    assert ask(judges(server, mode="frozen"), 0.7).message == said  # from the cache
    assert server.count == 1
    # a dated name is the model asked: recorded, not said
    server.script = completion({"passed": True, "score": 0.9}, model="gpt-4o-mini-2024-07-18")
    assert ask(judges(server), text="other").message == "judge: PASS (score 0.9)"
    dated = [json.loads(p.read_text()) for p in cache_files(judges.cache_dir) if p != path]
    assert [r["answered_by"] for r in dated] == ["gpt-4o-mini-2024-07-18"]


def test_errors_are_not_cached(serve: Any, judges: Judges) -> None:
    ask(judges(serve(completion("not json"))))
    ask(judges(serve(Reply(500)), retries=0))
    assert cache_files(judges.cache_dir) == []


def test_concurrent_writers_in_threads_never_corrupt(tmp_path: Path) -> None:
    path = tmp_path / "cache" / f"{TRACEPLAY_KEY}.json"
    write_cache(path, {"passed": True, "score": 0.0, "reason": "seed"})
    stop = threading.Event()
    bad: list[str] = []
    reads = 0

    def writer(n: int) -> None:
        for i in range(40):
            write_cache(path, {"passed": i % 2 == 0, "score": n / 10, "reason": "x" * (i * 97)})

    def reader() -> None:
        nonlocal reads
        while not stop.is_set() and reads < 100_000:
            text = path.read_text("utf-8")
            reads += 1
            try:
                json.loads(text)
            except ValueError:
                bad.append(text[:80])

    watcher = threading.Thread(target=reader)
    watcher.start()
    writers = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
    for t in writers:
        t.start()
    for t in writers:
        t.join(timeout=60)
    stop.set()
    watcher.join(timeout=60)
    assert bad == [] and reads > 0
    assert read_cache(path) is not None
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temp files left


WRITER = """
import sys
from evaldsl.judge.cache import write_cache
path, n = sys.argv[1], int(sys.argv[2])
for i in range(60):
    write_cache(path, {"passed": True, "score": n / 10, "reason": str(n) * (i * 131)})
"""


def test_concurrent_writers_in_processes_never_corrupt(tmp_path: Path) -> None:
    path = tmp_path / "cache" / f"{TRACEPLAY_KEY}.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(n)], env=env)
        for n in range(4)
    ]
    bad: list[str] = []
    deadline = time.monotonic() + 60
    while any(p.poll() is None for p in procs) and time.monotonic() < deadline:
        try:
            text = path.read_text("utf-8")
        except FileNotFoundError:
            continue
        try:
            json.loads(text)
        except ValueError:
            bad.append(text[:80])
    for p in procs:
        assert p.wait(timeout=60) == 0
    assert bad == []
    reply = read_cache(path)
    assert reply is not None and reply.passed
    assert [p.name for p in path.parent.iterdir()] == [path.name]


# -- modes and missing keys


def test_no_key_skips_with_how_to_enable(serve: Any, judges: Judges) -> None:
    server = serve(judged(True, 0.9))
    outcome = ask(judges(server, api_key=None), 0.7)
    assert outcome.status == "skip"
    assert ENABLE_HINT in outcome.message
    assert "set EVALDSL_JUDGE_API_KEY (and optionally EVALDSL_JUDGE_BASE_URL, " in outcome.message
    assert server.count == 0


def test_frozen_miss_is_an_error(serve: Any, judges: Judges) -> None:
    server = serve(judged(True, 0.9))
    outcome = ask(judges(server, mode="frozen"))
    assert outcome.status == "error"
    assert "no cached verdict for this judge assertion" in outcome.message
    assert "--judge frozen forbids calling the judge" in outcome.message
    assert server.count == 0


def test_off_skips_everything(serve: Any, judges: Judges) -> None:
    server = serve(judged(True, 0.9))
    ask(judges(server))  # cached now
    judge = judges(server, mode="off")
    outcome = ask(judge)
    assert (outcome.status, outcome.message) == ("skip", "judge assertions are off (--judge off)")
    assert judge.prefetch([(ANSWER, "another rubric", None)]) == 0
    assert server.count == 1


# -- garbage, failures and retries


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (completion("I think it passes."), 'the reply is not JSON: "I think it passes."'),
        (completion({"score": 0.9, "reason": "x"}), 'no boolean "passed"'),
        (completion({"passed": "yes"}), 'no boolean "passed"'),
        (completion({"passed": True, "score": 1.7}), '"score" 1.7 is not in [0, 1]'),
        (completion({"passed": True, "score": -0.1}), '"score" -0.1 is not in [0, 1]'),
        (completion({"passed": True, "score": "high"}), '"score" is not a number'),
        (completion({"passed": True, "score": True}), '"score" is not a number'),
        (completion({"passed": True, "reason": 3}), '"reason" is not a string'),
        (completion('{"passed": true, "score": NaN}'), "not JSON"),
        # an integer past a float's range, and nesting past Python's stack: said, not a
        # "call failed: OverflowError" or "RecursionError" from inside the parser
        (completion('{"passed": true, "score": 1' + "0" * 400 + "}"), '"score" 1000000000000'),
        (completion("[" * 100_000 + "]" * 100_000), "the reply is nested too deep to be a"),
        (completion("[true, 0.9]"), "not a JSON object"),
        (Reply(200, "<html>gateway</html>"), 'reply is not JSON: "<html>gateway</html>"'),
        (Reply(200, {"error": {"message": "nope"}}), "no choices[0].message.content"),
        (Reply(200, {"choices": []}), "no choices[0].message.content"),
        (Reply(200, ""), "(empty body)"),
        # (json keeps the last of a key written twice: this passed)
        (
            completion('{"passed": false, "score": 0.1, "passed": true}'),
            'the reply writes "passed" twice: which one is the verdict cannot be known',
        ),
        (completion('{"passed": true, "score": 0.9, "score": 0.1}'), 'writes "score" twice'),
    ],
)
def test_garbage_replies_are_errors_naming_what_came_back(
    serve: Any, judges: Judges, reply: Reply, expected: str
) -> None:
    server = serve(reply)
    outcome = ask(judges(server), 0.5)
    assert outcome.status == "error"
    assert outcome.message.startswith("judge: ")
    assert expected in outcome.message
    assert server.count == 1  # a bad reply is not retried


def test_long_garbage_is_shortened(serve: Any, judges: Judges) -> None:
    outcome = ask(judges(serve(completion("blah " * 1000))))
    assert outcome.status == "error"
    assert "…" in outcome.message and len(outcome.message) < 300


def test_fenced_json_is_accepted(serve: Any, judges: Judges) -> None:
    fenced = '```json\n{"passed": true, "score": 0.75, "reason": "ok"}\n```'
    assert ask(judges(serve(completion(fenced))), 0.75).status == "pass"
    assert parse_reply("Here it is:\n```\n" + fenced[8:]) == JudgeReply(True, 0.75, "ok")
    with pytest.raises(ValueError, match="not JSON"):
        parse_reply("```json\nnope\n```")


def test_500s_then_an_error_after_bounded_retries(serve: Any, judges: Judges) -> None:
    server = serve(Reply(500, {"error": {"message": "upstream exploded"}}))
    outcome = ask(judges(server, retries=2, backoff=0.001), 0.0)
    assert outcome.status == "error"
    assert "after 3 attempts" in outcome.message
    assert "HTTP 500" in outcome.message and "upstream exploded" in outcome.message
    assert server.count == 3
    # exponential backoff with jitter: base × 2^attempt × [0.5, 1]
    assert len(judges.sleeps) == 2
    assert 0.0005 <= judges.sleeps[0] <= 0.001 and 0.001 <= judges.sleeps[1] <= 0.002


def test_a_5xx_then_success(serve: Any, judges: Judges) -> None:
    server = serve([Reply(503, "busy"), Reply(502), judged(True, 0.9, "ok")])
    assert ask(judges(server)).status == "pass"
    assert server.count == 3


def test_429_then_success_honours_retry_after(serve: Any, judges: Judges) -> None:
    limited = Reply(429, {"error": {"message": "slow down"}}, {"Retry-After": "1"})
    server = serve([limited, judged(True, 0.9, "ok")])
    assert ask(judges(server)).status == "pass"
    assert server.count == 2 and judges.sleeps == [1.0]


def test_retry_after_is_capped(serve: Any, judges: Judges) -> None:
    limited = Reply(429, "", {"Retry-After": "3600"})
    server = serve([limited, judged(True, 0.9, "ok")])
    assert ask(judges(server, retry_after_cap=2.0)).status == "pass"
    assert judges.sleeps == [2.0]


def test_429_every_time_is_an_error(serve: Any, judges: Judges) -> None:
    server = serve(Reply(429, "rate limited", {"Retry-After": "0"}))
    outcome = ask(judges(server, retries=1))
    assert outcome.status == "error" and "HTTP 429" in outcome.message
    assert server.count == 2


def test_retry_after_parsing() -> None:
    retry_after = evaldsl.judge.client.retry_after
    assert retry_after("2.5", 30) == 2.5
    assert retry_after("-3", 30) == 0.0
    assert retry_after("soon", 30) is None
    assert retry_after(None, 30) is None
    assert retry_after("Wed, 21 Oct 2015 07:28:00 GMT", 30) == 0.0  # in the past
    assert retry_after("Fri, 01 Jan 2100 00:00:00 GMT", 30) == 30


def test_a_timeout_is_retried_then_an_error(serve: Any, judges: Judges) -> None:
    server = serve(Reply(200, {"late": True}, delay=10))
    started = time.monotonic()
    outcome = ask(judges(server, timeout=0.2, retries=1))
    assert outcome.status == "error"
    assert "no answer within 0.2 s" in outcome.message and "after 2 attempts" in outcome.message
    assert "Timeout" not in outcome.message  # httpx's words, not the user's
    assert server.count == 2
    assert time.monotonic() - started < 5


def test_an_unreachable_endpoint_is_an_error(serve: Any, judges: Judges) -> None:
    server = serve(judged(True, 0.9))
    server.stop()  # nothing listens on the port any more
    outcome = ask(judges(server, retries=1))
    assert outcome.status == "error"
    assert outcome.message.endswith(
        f"could not connect to {server.url}: connection refused (is the server running?)"
    ), outcome.message
    assert "Errno" not in outcome.message and "ConnectError" not in outcome.message


def test_a_server_that_hangs_up_is_an_error_in_the_users_words(serve: Any, judges: Judges) -> None:
    server = serve(Reply(hang_up=True))
    outcome = ask(judges(server, retries=1))
    assert outcome.status == "error" and server.count == 2
    assert outcome.message.endswith(
        f"the server at {server.url} closed the connection without answering"
    ), outcome.message
    assert "RemoteProtocolError" not in outcome.message


def test_4xx_is_an_error_without_retry(serve: Any, judges: Judges) -> None:
    server = serve(Reply(404, {"error": {"message": "model not found"}}))
    outcome = ask(judges(server))
    assert outcome.status == "error"
    assert "HTTP 404" in outcome.message and "model not found" in outcome.message
    assert server.count == 1


def test_redirects_are_not_followed(serve: Any, judges: Judges) -> None:
    server = serve(Reply(307, "", {"Location": "http://127.0.0.1:9/steal"}))
    outcome = ask(judges(server))
    assert outcome.status == "error" and "HTTP 307" in outcome.message
    # it said "(empty body)": where the redirect went, the base URL to set, was not shown
    assert outcome.message == (
        'judge: the endpoint answered HTTP 307, a redirect to "http://127.0.0.1:9/steal", '
        "not followed (the key would go with it): if that is the endpoint, set "
        "EVALDSL_JUDGE_BASE_URL to it"
    )
    assert server.count == 1


def test_errors_are_remembered_for_the_run(serve: Any, judges: Judges) -> None:
    server = serve(Reply(500))
    judge = judges(server, retries=1)
    assert ask(judge).status == "error"
    assert ask(judge, 0.5).status == "error"
    assert server.count == 2  # one call with its retry, not two
    assert (judge.calls, judge.hits) == (1, 0)
    judge.forget()
    assert ask(judge).status == "error" and server.count == 4


# -- secrets


def echo_key(status: int) -> Callable[[Recorded], Reply]:
    def reply(request: Recorded) -> Reply:
        auth = request.headers.get("Authorization", "")
        return Reply(status, {"error": {"message": f"Incorrect API key provided: {auth}"}})

    return reply


def test_401_is_an_error_that_does_not_leak_the_key(
    serve: Any, judges: Judges, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    server = serve(echo_key(401))
    outcome = ask(judges(server))
    assert outcome.status == "error"
    assert "HTTP 401" in outcome.message and "Incorrect API key provided" in outcome.message
    assert KEY not in outcome.message and "[redacted]" in outcome.message
    assert server.count == 1
    assert KEY not in caplog.text


def test_the_key_never_leaks(serve: Any, judges: Judges, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    messages: list[str] = []
    # a 500 echoing the key (logged on retry), then a verdict whose reason quotes the key
    leaky_verdict = judged(True, 0.9, f"the answer says {KEY}")
    server = serve(echo_key_then(leaky_verdict))
    judge = judges(server, retries=2)
    outcome = ask(judge)
    messages.append(outcome.message)
    assert outcome.status == "pass"
    messages.append(ask(judges(server, api_key=None)).message)  # from the cache
    for bad in (Reply(500, f"boom {KEY}"), completion(f"not json {KEY}")):
        messages.append(ask(judges(serve(bad), retries=1), rubric=f"r{len(messages)}").message)
    # a key too strange for a header is refused (by the settings) without being echoed
    with pytest.raises(JudgeConfigError) as refused:
        judges(server, api_key="sk-é-" + KEY)
    messages.append(str(refused.value))

    for message in messages:
        assert KEY not in message, message
    assert KEY not in caplog.text
    for path in cache_files(judges.cache_dir):
        assert KEY not in path.read_text("utf-8")
    assert "[redacted]" in messages[0] and "[redacted]" in messages[1]


def test_a_key_too_short_to_be_a_secret_leaves_words_whole(serve: Any, judges: Judges) -> None:
    # a local server's placeholder key: redacting it would mangle every word holding it
    reason = "never mentions the sky"
    outcome = ask(judges(serve(judged(False, 0.1, reason)), api_key="sky"))
    assert outcome.status == "fail" and reason in outcome.message, outcome.message
    frozen = ask(judges(api_key="k", mode="frozen"), rubric="not cached")
    assert "looked for" in frozen.message and "[redacted]" not in frozen.message
    # a key of 8 characters is a secret, wherever it shows
    eight = ask(judges(serve(judged(False, 0.1, "echoes sk-12345")), api_key="sk-12345"))
    assert "echoes [redacted]" in eight.message and "sk-12345" not in eight.message


def echo_key_then(final: Reply) -> Callable[[Recorded], Reply]:
    seen: list[int] = []

    def reply(request: Recorded) -> Reply:
        seen.append(1)
        return echo_key(500)(request) if len(seen) == 1 else final

    return reply


# -- concurrency, planning and prefetching


def test_prefetch_sends_misses_concurrently(serve: Any, judges: Judges) -> None:
    server = serve(slow_verdicts(0.3))
    judge = judges(server, max_concurrency=8)
    requests = [JudgeRequest(f"answer {i}", RUBRIC) for i in range(8)]
    assert judge.plan(requests) == JudgePlan(8, 0)
    assert judge.prefetch([*requests, *requests]) == 8  # duplicates asked once
    assert server.count == 8
    assert server.max_in_flight >= 2  # they overlapped, not one after another
    assert judge.plan(requests) == JudgePlan(8, 8)
    outcomes = [ask(judge, 0.5, text=r.text) for r in requests]
    assert [o.status for o in outcomes] == ["pass"] * 8
    assert server.count == 8  # every per-assertion call was a hit


def test_prefetch_is_bounded_by_max_concurrency(serve: Any, judges: Judges) -> None:
    server = serve(slow_verdicts(0.15))
    judge = judges(server, max_concurrency=3)
    assert judge.prefetch([(f"answer {i}", RUBRIC, None) for i in range(9)]) == 9
    assert 2 <= server.max_in_flight <= 3


def test_concurrent_calls_of_one_question_make_one_request(serve: Any, judges: Judges) -> None:
    server = serve(slow_verdicts(0.2))
    judge = judges(server)
    outcomes: list[Any] = []
    threads = [threading.Thread(target=lambda: outcomes.append(ask(judge))) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert len(outcomes) == 6 and {o.status for o in outcomes} == {"pass"}
    assert server.count == 1


def slow_verdicts(delay: float) -> Callable[[Recorded], Reply]:
    def reply(request: Recorded) -> Reply:
        answer = request.body["messages"][1]["content"]
        return Reply(**{**vars(judged(True, 0.9, f"judged {answer[-8:]}")), "delay": delay})

    return reply


def test_plan_counts_distinct_calls_and_cached_ones(serve: Any, judges: Judges) -> None:
    server = serve(judged(True, 0.9))
    config = judges.config(server)
    requests = [(ANSWER, RUBRIC, None), (ANSWER, RUBRIC, None), (ANSWER, "other", "gpt-4o")]
    assert plan(requests, config) == (2, 0)
    ask(judges(server))
    counted = plan(requests, config)
    assert counted == (2, 1) and counted.calls == 1


# texts of a few letters, lone surrogates among them (a pair of them is one character in
# the cache key, as JavaScript sees it: two requests can then share a key)
_PLAN_TEXTS = st.text(alphabet=["a", "b", "é", "\ud83d", "\ude00", "😀"], max_size=3)
_PLAN_REQUESTS = st.lists(
    st.tuples(_PLAN_TEXTS, st.sampled_from(["r", "\ud83d\ude00", "😀"]),
              st.sampled_from([None, "gpt-4o-mini", "gpt-4o", "\udc80"])),
    max_size=6,
)  # fmt: skip


@given(requests=_PLAN_REQUESTS)
@hypothesis.settings(max_examples=examples(200))
def test_a_plan_without_a_cache_folder_is_the_clients_plan(
    tmp_path_factory: pytest.TempPathFactory, requests: list[tuple[str, str, str | None]]
) -> None:
    # no folder, nothing cached: the distinct requests are counted without the client,
    # exactly as its keys count them, or (a lone surrogate) left to the client
    config = JudgeConfig(cache_dir=tmp_path_factory.mktemp("plan") / "none", model="gpt-4o-mini")
    asked = [JudgeRequest(*r) for r in requests]
    counted = uncached_plan(asked, config)
    expected = plan(asked, config)
    assert counted == expected or counted is None
    parts = [part for request in requests for part in request if part]
    surrogates = any("\ud800" <= ch <= "\udfff" for part in parts for ch in part)
    assert (counted is None) == surrogates
    assert TwoPhaseJudge(config=config).plan(asked) == expected


def test_a_plan_with_a_cache_folder_counts_what_it_holds(tmp_path: Path) -> None:
    config = JudgeConfig(cache_dir=tmp_path / "cache")
    asked = [JudgeRequest(ANSWER, RUBRIC), JudgeRequest(ANSWER, "other")]
    assert uncached_plan(asked, config) == (2, 0)
    write_cache(LLMJudge(config).cache_path(asked[0]), {"passed": True, "reason": "ok"})
    assert uncached_plan(asked, config) is None  # (the folder exists: the client counts)
    judge = TwoPhaseJudge(config=config)
    assert judge.plan(asked) == (2, 1)
    # a file where the folder should be is refused with the settings, before any plan
    (tmp_path / "file").write_text("x")
    with pytest.raises(JudgeConfigError, match="that is a file; name a folder"):
        JudgeConfig(cache_dir=tmp_path / "file")


def test_the_command_judge_unmade_answers_as_the_client_would(tmp_path: Path) -> None:
    # off: every question skipped; nothing fetched ahead but live with a key (test_startup:
    # the client is not even imported then)
    asked = [JudgeRequest(ANSWER, RUBRIC)]
    for mode, key in (("off", None), ("off", KEY), ("frozen", KEY), ("live", None)):
        config = JudgeConfig(mode=mode, api_key=key, cache_dir=tmp_path / "none")
        client = LLMJudge(config)
        assert TwoPhaseJudge(config=config).prefetch(asked) == client.prefetch(asked) == 0
        if mode == "off":
            outcome = TwoPhaseJudge(config=config)(ANSWER, RUBRIC, model=None, threshold=0.5)
            assert outcome == client(ANSWER, RUBRIC, model=None, threshold=0.5)
            assert outcome.status == "skip"


def test_runner_flow_record_prefetch_check_in_source_order(serve: Any, judges: Judges) -> None:
    scores = {"mentions weather": 0.9, "mentions the city": 0.8, "is rude": 0.1, "is short": 0.6}

    def reply(request: Recorded) -> Reply:
        rubric = request.body["messages"][1]["content"].split("\n")[0].removeprefix("Rubric: ")
        score = scores[rubric]
        return Reply(**{**vars(judged(score >= 0.5, score, rubric)), "delay": 0.2})

    server = serve(reply)
    text = "\n".join(f'answer judged "{rubric}" >= 0.5' for rubric in scores)
    recorder = RecordingJudge()
    assert evaldsl.compile(text, judge=recorder).check(CASSETTE).statuses == ["skip"] * 4
    judge = judges(server)
    assert judge.plan(recorder.requests) == (4, 0)
    assert judge.prefetch(recorder.requests) == 4
    assert server.max_in_flight >= 2
    result = evaldsl.compile(text, judge=judge).check(CASSETTE)
    assert result.statuses == ["pass", "pass", "fail", "pass"]
    assert [v.actual for v in result.verdicts] == [0.9, 0.8, 0.1, 0.6]
    assert server.count == 4


def test_submit_returns_at_once_and_the_answers_follow(serve: Any, judges: Judges) -> None:
    server = serve(slow_verdicts(0.3))
    judge = judges(server, max_concurrency=4)
    requests = [JudgeRequest(f"answer {i}", RUBRIC) for i in range(4)]
    answers = judge.submit([*requests, requests[0]])
    assert len(answers) == 4  # one future a distinct question
    assert not any(answer.done() for answer in answers)  # nothing was waited for
    assert judge.submit(requests[:1]) == answers[:1]  # a question on its way: its future
    for answer in answers:
        answer.result(timeout=30)
    assert server.count == 4 and server.max_in_flight >= 2
    assert [ask(judge, 0.5, text=r.text).status for r in requests] == ["pass"] * 4
    assert server.count == 4  # answered from the memo
    # nothing to fetch ahead: no future, no thread
    assert judges(server, mode="frozen").submit(requests) == []
    assert judges(server, api_key=None).submit(requests) == []


def test_submitted_questions_are_bounded_across_submits(serve: Any, judges: Judges) -> None:
    server = serve(slow_verdicts(0.15))
    judge = judges(server, max_concurrency=3)
    answers = [
        answer
        for k in range(4)
        for answer in judge.submit([(f"answer {k} {i}", RUBRIC, None) for i in range(3)])
    ]
    for answer in answers:
        answer.result(timeout=30)
    assert server.count == 12
    assert 2 <= server.max_in_flight <= 3


def test_cancel_takes_back_the_questions_not_started(serve: Any, judges: Judges) -> None:
    server = serve(slow_verdicts(0.4))
    judge = judges(server, max_concurrency=1)
    requests = [JudgeRequest(f"answer {i}", RUBRIC) for i in range(5)]
    answers = judge.submit(requests)
    deadline = time.monotonic() + 10
    while server.count == 0 and time.monotonic() < deadline:
        time.sleep(0.01)  # the first question is on its way
    judge.cancel()
    assert answers[0].result(timeout=30) is not None  # the one on its way: abandoned
    assert all(answer.cancelled() for answer in answers[1:])
    time.sleep(0.5)
    assert server.count == 1  # the others never went out
    # a question taken back is asked again when it is next asked
    assert ask(judge, 0.5, text=requests[1].text).status == "pass"
    assert server.count == 2


def test_cancel_abandons_the_questions_on_their_way(serve: Any, judges: Judges) -> None:
    # Ctrl-C with a question on its way: its connection is shut, no further attempt
    # starts (the judge retries twice), and its answer is an error at once, not after
    # the server's 20 s (httpx's own close does not wake a read in progress)
    server = serve(slow_verdicts(20))
    judge = judges(server, timeout=30.0)
    (answer,) = judge.submit([(ANSWER, RUBRIC, None)])
    deadline = time.monotonic() + 10
    while server.count == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    judge.cancel()
    stopped = answer.result(timeout=3)
    assert stopped.status == "error" and "stopped before the judge answered" in stopped.message
    time.sleep(0.3)
    assert server.count == 1 and judges.sleeps == []  # no second attempt
    # an abandoned question is forgotten: asked again when next asked
    server.script = judged(True, 0.9)
    assert ask(judge, 0.5).status == "pass"
    assert server.count == 2


def test_a_forked_process_asks_with_threads_and_a_client_of_its_own(
    serve: Any, judges: Judges
) -> None:
    # a library that ran cases, then forks (`-j`): the question on its way in the parent
    # is answered there, never in the child, whose pool threads do not exist
    server = serve(slow_verdicts(0.5))
    judge = judges(server, max_concurrency=1)
    ask(judge, 0.5, text="warm-up")  # the parent's HTTP client made
    pending = judge.submit([(ANSWER, RUBRIC, None)])  # its one thread busy with it
    pid = os.fork()
    if pid == 0:  # the child: it must answer by itself, not wait for the parent's threads
        code = 3
        try:
            other = judge.submit([("another", RUBRIC, None)])[0].result(timeout=10)
            both = [ask(judge, 0.5).status, ask(judge, 0.5, text="another").status]
            code = 0 if other is not None and both == ["pass", "pass"] else 1
        finally:
            os._exit(code)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(0.05)
    else:
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        pytest.fail("the forked process waited for the parent's threads")
    assert os.waitstatus_to_exitcode(status) == 0
    assert pending[0].result(timeout=30) is not None  # the parent's answer came too


# -- pure helpers


def test_verdict_messages() -> None:
    assert verdict(JudgeReply(True, 0.82, "sunny"), 0.7).message == (
        "judge: PASS (score 0.82 ≥ 0.7) — sunny"
    )
    assert verdict(JudgeReply(True, 0.5, ""), 0.7).message == "judge: FAIL (score 0.5 < 0.7)"
    assert verdict(JudgeReply(False, None, "no"), None).message == "judge: FAIL — no"


def test_doctests() -> None:
    judge = evaldsl.judge
    for module in (
        judge.cache,
        judge.client,
        judge.config,
        judge.plan,
        judge.protocol,
        judge.reply,
    ):
        result = doctest.testmod(module)
        assert result.failed == 0, module.__name__


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('answer judged "mentions the sky" by ""', "a judge's model is empty: `by` names no model"),
        (
            'answer judged "mentions the sky" by "  "',
            "a judge's model is empty: `by` names no model",
        ),
        (
            'judge model ""\ncase "c"\n  cassette "a.jsonl"\n  answer judged "mentions the sky"\n',
            "the judge's model is empty: `judge model` names no model",
        ),
    ],
)
def test_an_empty_judge_model_is_an_error(text: str, message: str) -> None:
    # `by ""` ran the suite's (or the default) model unsaid, and `by "  "` asked for a
    # model named "  ", where YAML's `judge: ""` is refused
    with pytest.raises(evaldsl.EvalDslError) as raised:
        evaldsl.compile(text)
    assert [(d.code, d.message) for d in raised.value.errors] == [("E211", message)]


def _raises(text: str, rubric: str, *, model: str | None, threshold: float | None) -> Any:
    raise ValueError("no endpoint")


def _answers_text(text: str, rubric: str, *, model: str | None, threshold: float | None) -> Any:
    return "pass"


@pytest.mark.parametrize(
    ("judge", "said"),
    [
        (
            _raises,
            "(_raises, called as judge(text, rubric, model=…, threshold=…)) raised "
            "ValueError: no endpoint",
        ),
        (
            _answers_text,
            "(_answers_text, called as judge(text, rubric, model=…, threshold=…)) "
            "returned a str, not an evaldsl.judge.protocol.JudgeOutcome",
        ),
        (lambda text, rubric: None, "raised TypeError: "),  # (no model=, threshold=)
    ],
)
def test_a_judge_given_that_fails_is_named_in_the_error(judge: Any, said: str) -> None:
    # it was "internal error: AttributeError: 'str' object has no attribute 'score'"
    program = evaldsl.compile('answer judged "mentions the sky" >= 0.5', judge=judge)
    (found,) = program.check([{"type": "llm.response", "output": "sunny"}]).verdicts
    assert found.status == "error"
    assert found.message.startswith("judge: the judge given (")
    assert said in found.message and "internal error" not in found.message
