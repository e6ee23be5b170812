"""Every real trace in tests/fixtures/realworld/ read correctly, through the whole pipeline.

The files are copies of ../shared/fixtures/realworld/ (each folder's SOURCE.md says where
they come from and what, if anything, was re-encoded). Each one is checked twice, through a
suite file as a user writes it: `cassette "…"` (the format detected) and `trace "…" as
FORMAT` (named). The assertions pin tools, arguments, results, answers, tokens and steps;
each case also carries assertions that must fail (an off-by-one token count, a tool that
was not called), so a reader that reads nothing cannot pass.
"""

from __future__ import annotations

import filecmp
from pathlib import Path

import pytest

from evaldsl.runner import run_suites
from evaldsl.runs import load_run
from evaldsl.suites import load_suite

ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT / "tests" / "fixtures" / "realworld"
SHARED = ROOT.parent / "shared" / "fixtures" / "realworld"

WEATHER = "Today, the weather in Seattle is 50 degrees and raining, while in San Francisco, it's 70 degrees and sunny."  # noqa: E501

# file, format, assertions that must pass (tools, args, results, answers, tokens, steps)
TABLE: list[tuple[str, str, list[str]]] = [
    (
        "anthropic-message-tooluse/message.json",
        "anthropic",
        [
            'tools == ["code_execution", "get_weather"]',
            'tool get_weather args == {location: "San Francisco, CA", units: "c"}',
            'tool code_execution args $.code contains "await get_weather"',
            'answer == "I\'ll check the weather for all three cities in Celsius simultaneously."',
            "input tokens == 3182; output tokens == 237; steps == 1",
        ],
    ),
    *[
        (
            f"anthropic-stream-tooluse/{name}",
            "anthropic",
            [
                'tools == ["get_weather"]',
                'tool get_weather args == {location: "Paris"}',
                'answer == "I\'ll check the current weather in Paris for you."',
                "input tokens == 377; output tokens == 65; steps == 1",
                "cost < $0.01",
            ],
        )
        for name in ("tool_use_response.txt", "events.jsonl")
    ],
    (
        "inspect-ai-eval-log/log_read_sample.json",
        "inspect",
        [
            "tools is empty",
            'answer == "Yes\\n"',
            "input tokens == 66; output tokens == 3; steps == 1",
            "latency > 2s; latency < 2.2s",
        ],
    ),
    (
        "openai-chat-jsonl/responses.jsonl",
        "openai",
        [
            'tools == ["get_current_weather", "get_current_weather"]',
            'tool get_current_weather args $.location == "Seattle, WA"',
            'tool get_current_weather args $.location == "San Francisco, CA"',
            'answer[1] == ""',
            f'answer == "{WEATHER}"',
            "input tokens == 174; output tokens == 76; steps == 2",
            "cost < $0.0001; cost > $0.00007",
        ],
    ),
    (
        "openai-chat-messages/request-with-tool-results.json",
        "openai",
        [
            "tool get_current_weather called 2 times",
            'tool get_current_weather args $.location == "Seattle, WA"',
            'tool get_current_weather result == "50 degrees and raining"',
            'tool get_current_weather result == "70 degrees and sunny"',
            'answer == ""',
            "steps == 1",  # (its tokens are unknown: tests/test_formats.py)
        ],
    ),
    *[
        (
            f"openai-chat-stream/{name}",
            "openai",
            [
                'tools == ["get_current_weather", "get_current_weather"]',
                'tool get_current_weather args == {location: "Seattle, WA"}',
                'tool get_current_weather args == {location: "San Francisco, CA"}',
                'answer == ""',
                "input tokens == 75; output tokens == 51; steps == 1",
            ],
        )
        for name in ("stream.sse", "chunks.jsonl")
    ],
    (
        "openai-chat-tools/response-toolcalls.json",
        "openai",
        [
            "tool get_current_weather called twice",
            'tool get_current_weather args $.location == "San Francisco, CA"',
            'answer == ""',
            "input tokens == 75; output tokens == 51; steps == 1",
        ],
    ),
    (
        "openai-chat-tools/response-final.json",
        "openai",
        [
            "tools is empty",
            f'answer == "{WEATHER}"',
            "input tokens == 99; output tokens == 25; steps == 1",
        ],
    ),
    (
        "openai-responses-api/response-function-call.json",
        "openai",
        [
            'tools == ["get_current_weather"]',
            'tool get_current_weather args == {location: "Seattle, WA"}',
            'answer == ""',
            "input tokens == 72; output tokens == 8; steps == 1",
        ],
    ),
    (
        "openai-responses-api/response-message.json",
        "openai",
        [
            "tools is empty",
            'answer == "Hello! How can I assist you today?"',
            "input tokens == 9; output tokens == 10; steps == 1",
        ],
    ),
    *[
        (
            f"openinference-phoenix-spans/{name}",
            "otel",
            [
                'tools == ["multiply"]',
                "tool multiply args == {a: 23, b: 87}",
                'tool multiply result == "2001"',
                'answer[1] == ""',
                'answer == "The product of 23 times 87 is 2001."',
                "answer cites tool multiply",
                "input tokens == 488; output tokens == 35; steps == 2",
                "latency > 1.1s; latency < 1.2s",
            ],
        )
        for name in ("spans.jsonl", "spans.otlp.json")
    ],
    (
        "otel-latitude-otlp/trace.otlp.json",
        "otel",
        [
            'tools == ["get_weather"]',
            'tool get_weather args == {location: "Barcelona"}',
            'tool get_weather result $.weather == "SUNNY"',
            'answer[1] == "The user asked for the weather."',
            'answer == "The weather in Barcelona is sunny."',
            "input tokens == 199; output tokens == 52; steps == 4; errors == 0",
        ],
    ),
    (
        "traceplay-anthropic/cassette.anthropic.jsonl",
        "traceplay",
        [
            "tools is empty",
            'answer contains "entanglement"',
            "input tokens == 45; output tokens == 32; steps == 1",
        ],
    ),
    (
        "traceplay-multi-tool/cassette.multi-tool.jsonl",
        "traceplay",
        [
            'tools == ["get_weather", "get_crypto_price"]',
            'tool get_weather args $.city == "Xiamen"',
            'tool get_crypto_price result contains "67,234.50"',
            'answer contains "BTC"',
            "input tokens == 210; output tokens == 42; steps == 1",
        ],
    ),
    (
        "traceplay-streaming/cassette.streaming.jsonl",
        "traceplay",
        [
            "tools is empty",
            'answer starts with "Silent keystrokes fall"',
            "input tokens == 30; output tokens == 18; steps == 1",
        ],
    ),
]

# Must fail on every file: a reader that recognised nothing would pass them all.
MUST_FAIL = ["tool never_called_tool called", "steps == 0"]


def test_the_copies_are_the_shared_files() -> None:
    folders = sorted(p.name for p in REAL.iterdir() if p.is_dir())
    assert len(folders) == 13
    for folder in folders:
        assert (REAL / folder / "SOURCE.md").is_file(), folder
    if SHARED.is_dir():  # the copies are byte for byte
        for path in SHARED.rglob("*"):
            if path.is_file():
                assert filecmp.cmp(path, REAL / path.relative_to(SHARED), shallow=False), path


def test_the_table_covers_every_trace_file() -> None:
    files = {
        p.relative_to(REAL).as_posix()
        for p in REAL.rglob("*")
        if p.is_file() and p.suffix not in (".md", ".yaml")
    }
    assert files == {name for name, _, _ in TABLE}


def _suite(tmp: Path, name: str, line: str, asserts: list[str]) -> Path:
    body = "\n".join(f"  {a}" for a in asserts)
    fails = "\n".join(f"  {a}" for a in MUST_FAIL)
    text = f'case "reads"\n  {line}\n{body}\n\ncase "fails"\n  {line}\n{fails}\n'
    path = tmp / f"{name}.eval"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("how", ["detected", "named"])
@pytest.mark.parametrize(("name", "fmt", "asserts"), TABLE, ids=[t[0] for t in TABLE])
def test_real_trace_is_read(
    tmp_path: Path, name: str, fmt: str, asserts: list[str], how: str
) -> None:
    path = REAL / name
    line = f'cassette "{path}"' if how == "detected" else f'trace "{path}" as {fmt}'
    suite = load_suite(_suite(tmp_path, "t", line, asserts))
    assert not suite.errors, [d.message for d in suite.errors]
    report = run_suites([suite])
    reads, fails = report.suites[0].cases
    assert reads.error is None, reads.error
    wrong = [(a.text, a.message) for a in reads.assertions if a.status != "pass"]
    assert not wrong
    assert [a.status for a in fails.assertions] == ["fail"] * len(MUST_FAIL)
    assert load_run(path).format == ("traceplay" if fmt == "traceplay" else fmt)


def test_latency_without_numeric_span_times_is_an_error(tmp_path: Path) -> None:
    # the Latitude export masks every time as "TIME": no latency, never a latency of 0
    path = REAL / "otel-latitude-otlp" / "trace.otlp.json"
    suite = load_suite(_suite(tmp_path, "l", f'cassette "{path}"', ["latency < 10s"]))
    (result, _) = run_suites([suite]).suites[0].cases
    (latency,) = result.assertions
    assert latency.status == "error" and "no timing" in latency.message
    read = load_run(path).read
    assert read is not None and any("not numbers" in n for n in read.notes)


def test_cost_of_an_unlisted_model_is_an_error_not_zero(tmp_path: Path) -> None:
    path = REAL / "inspect-ai-eval-log" / "log_read_sample.json"
    suite = load_suite(_suite(tmp_path, "c", f'cassette "{path}"', ["cost < $1"]))
    (result, _) = run_suites([suite]).suites[0].cases
    assert result.assertions[0].status == "error"
    assert "ollama/gemma3" in result.assertions[0].message


def test_traceplay_suites_run_as_they_are() -> None:
    for folder in ("traceplay-anthropic", "traceplay-multi-tool", "traceplay-streaming"):
        (suite_file,) = (REAL / folder).glob("suite.*.yaml")
        report = run_suites([load_suite(suite_file)])
        assert report.ok, folder
