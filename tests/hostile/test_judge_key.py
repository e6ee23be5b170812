"""The judge's key never leaves the process, and a judge endpoint cannot hold a run: a
real HTTP server on 127.0.0.1 echoes the key in every encoding a reply can carry it in,
sends endless bodies and drips bytes; the CLI refuses a bad base URL with exit 2."""

from __future__ import annotations

import html
import json
import logging
import time
import urllib.parse
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from evaldsl.judge import secrets
from evaldsl.judge.client import LLMJudge
from evaldsl.judge.config import JudgeConfig, JudgeConfigError
from evaldsl.judge.reply import BadReply, parse_reply
from evaldsl.judge.secrets import Redactor
from evaldsl.language.limits import MAX_JUDGE_REPLY_BYTES
from tests.clitools import ROOT, run_evaldsl
from tests.judge_server import JudgeServer, Recorded, Reply, completion, judged

KEY = "sk-proj-Ab/Cd+Ef=Gh_Ij-0123456789"  # `/`, `+` and `=` change in JSON and URLs
CASSETTE = ROOT / "tests/fixtures/traceplay/demo/cassette.example.jsonl"


def encodings(key: str) -> dict[str, str]:
    """The forms a server may echo a key in."""
    return {
        "raw": key,
        "json": json.dumps(key)[1:-1],
        "json-slash": json.dumps(key)[1:-1].replace("/", "\\/"),
        "json-unicode": "".join(f"\\u{ord(c):04x}" for c in key),
        "json-unicode-upper": "".join(f"\\u{ord(c):04X}" for c in key),
        "json-mixed": "".join(f"\\u{ord(c):04x}" if i % 2 else c for i, c in enumerate(key)),
        "url": urllib.parse.quote(key, safe=""),
        "url-lower": urllib.parse.quote(key, safe="").replace("%2F", "%2f").replace("%2B", "%2b"),
        "url-plus": urllib.parse.quote_plus(key),
        "html": html.escape(key),
        "html-numeric": "".join(f"&#{ord(c)};" for c in key),
    }


def test_secrets_doctests() -> None:
    import doctest

    assert doctest.testmod(secrets).failed == 0


@pytest.mark.parametrize("form", sorted(encodings(KEY)))
def test_every_encoding_of_the_key_is_redacted(form: str) -> None:
    text = f"before {encodings(KEY)[form]} after"
    assert Redactor(KEY)(text) == "before [redacted] after"


def make_judge(server: JudgeServer, cache: Path, **settings: Any) -> LLMJudge:
    values: dict[str, Any] = {
        "api_key": KEY,
        "base_url": server.url,
        "cache_dir": cache,
        "timeout": 5.0,
        "retries": 0,
        "backoff": 0.001,
    }
    values.update(settings)
    return LLMJudge(JudgeConfig(**values), sleep=lambda _: None)


def echo(form: str, status: int, position: int) -> Callable[[Recorded], Reply]:
    """A reply that echoes the key in `form`, `position` characters into the body."""

    def reply(request: Recorded) -> Reply:
        token = request.headers.get("Authorization", "").removeprefix("Bearer ")
        shown = encodings(token)[form]
        return Reply(status, "x" * position + f"key={shown} " + "y" * 300)

    return reply


@pytest.mark.parametrize("form", sorted(encodings(KEY)))
@pytest.mark.parametrize("status", [401, 500, 200])
@pytest.mark.parametrize("position", [0, 170, 190, 199])  # a message cuts at 200
def test_no_echo_of_the_key_reaches_a_message_log_or_cache(
    serve: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture, form: str, status: int,
    position: int,
) -> None:  # fmt: skip
    caplog.set_level(logging.DEBUG)
    server = serve(echo(form, status, position))
    with make_judge(server, tmp_path, retries=1) as judge:
        outcome = judge("answer", "rubric", model=None, threshold=None)
    assert outcome.status == "error"
    everything = outcome.message + caplog.text
    everything += "".join(p.read_text("utf-8") for p in tmp_path.glob("*"))
    for shown in encodings(KEY).values():
        assert shown not in everything
    # nor a piece of it: the message is cut after the key was taken out
    assert KEY[: len(KEY) // 2] not in everything and KEY[len(KEY) // 2 :] not in everything


@pytest.mark.parametrize("form", ["raw", "json-unicode", "url"])
def test_a_verdict_quoting_the_key_is_cached_and_reported_redacted(
    serve: Any, tmp_path: Path, form: str
) -> None:
    reason = "the answer repeats " + encodings(KEY)[form]
    server = serve(judged(True, 0.9, reason))
    with make_judge(server, tmp_path) as judge:
        outcome = judge("answer", "rubric", model=None, threshold=None)
    assert outcome.status == "pass" and "[redacted]" in outcome.message
    (cached,) = tmp_path.glob("*.json")
    text = cached.read_text("utf-8")
    assert "[redacted]" in text and KEY not in text and KEY[:12] not in text


def test_a_bad_verdict_quoting_the_key_past_the_cut_is_redacted(serve: Any, tmp_path: Path) -> None:
    # the key straddles character 200, where a quoted reply is cut
    server = serve(completion("z" * 185 + KEY + " not json"))
    with make_judge(server, tmp_path) as judge:
        outcome = judge("answer", "rubric", model=None, threshold=None)
    assert outcome.status == "error" and "not JSON" in outcome.message
    assert KEY[:10] not in outcome.message


def endless() -> Iterator[bytes]:
    while True:
        yield b"x" * 65536


def test_an_endless_body_is_an_error_at_the_size_limit(serve: Any, tmp_path: Path) -> None:
    server = serve(Reply(stream=endless))
    with make_judge(server, tmp_path, timeout=60.0) as judge:
        outcome = judge("answer", "rubric", model=None, threshold=None)
    assert outcome.status == "error" and "larger than 1 MiB" in outcome.message


def test_a_declared_length_over_the_limit_is_refused_before_reading(
    serve: Any, tmp_path: Path
) -> None:
    big = Reply(200, "x" * (MAX_JUDGE_REPLY_BYTES + 1))
    with make_judge(serve(big), tmp_path) as judge:
        outcome = judge("answer", "rubric", model=None, threshold=None)
    assert outcome.status == "error" and "larger than 1 MiB" in outcome.message


def drip() -> Iterator[bytes]:
    yield b'{"choices": [{"message": {"content": "'
    while True:
        yield b"a"


def test_a_drip_fed_reply_times_out_at_the_deadline(serve: Any, tmp_path: Path) -> None:
    """One byte every 50 ms: each read is quick, so only a deadline on the whole reply
    ends it (httpx's timeout is per read)."""
    server = serve(Reply(stream=drip, gap=0.05))
    started = time.monotonic()
    with make_judge(server, tmp_path, timeout=1.0, retries=1) as judge:
        outcome = judge("answer", "rubric", model=None, threshold=None)
    took = time.monotonic() - started
    assert outcome.status == "error" and "still arriving after 1 s" in outcome.message
    assert server.count == 2  # a late reply is retried like a timeout
    assert took < 20  # two attempts of ~1 s each, with room for a busy machine


def test_two_fenced_blocks_are_an_error_not_a_fail(serve: Any, tmp_path: Path) -> None:
    content = (
        'Example:\n```json\n{"passed": true, "score": 1}\n```\n'
        'Verdict:\n```json\n{"passed": false, "score": 0}\n```'
    )
    with pytest.raises(BadReply, match="2 fenced blocks"):
        parse_reply(content)
    with make_judge(serve(completion(content)), tmp_path) as judge:
        outcome = judge("answer", "rubric", model=None, threshold=None)
    assert outcome.status == "error" and "2 fenced blocks" in outcome.message


def test_one_fenced_block_is_still_a_verdict() -> None:
    assert parse_reply('Here:\n```json\n{"passed": true}\n```').passed is True


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("ftp://example.com/v1", "http:// or https://"),
        ("http://", "no host"),
        ("http://[::1", "not a URL"),
        ("http://a b/v1", "spaces"),
        ("http://x:99999/v1", "not a port"),
        ("https://user:secret-pw@example.com/v1", "user name or password"),
        ("https://example.com/v1?api-version=1", "query"),
        ("javascript:alert(1)", "http:// or https://"),
    ],
)
def test_a_bad_base_url_is_a_usage_error(tmp_path: Path, url: str, words: str) -> None:
    with pytest.raises(JudgeConfigError):
        JudgeConfig(base_url=url)
    (tmp_path / "s.eval").write_text(
        f'case "a"\n  cassette "{CASSETTE}"\n  answer judged "sunny"\n', encoding="utf-8"
    )
    env = {"EVALDSL_JUDGE_BASE_URL": url, "EVALDSL_JUDGE_API_KEY": KEY}
    for command in (["check", "s.eval"], ["run", "s.eval", "--no-history"]):
        done = run_evaldsl(*command, cwd=tmp_path, env=env)
        assert done.returncode == 2, done
        assert words in done.stderr and "Traceback" not in done.stderr
        assert "secret-pw" not in done.stderr + done.stdout and KEY not in done.stderr
