"""The trace formats: fixtures written from each format's documentation, generated edge
cases (empty and cut streams, spans without attributes, both spellings of attributes),
detection by signature, and failing closed: a trace in which nothing is recognised is an
error for `check` and for the run, and no file any adapter rejects or half-reads ever
yields a passing `no tool X`, `tools is empty` or `tokens < N`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import evaldsl
from evaldsl.language.vocabulary import RUN_FORMATS
from evaldsl.runner import run_suites
from evaldsl.runs import RunError, load_run, passes
from evaldsl.runs.events import KNOWN_TYPES, is_kind
from evaldsl.runs.openai import read_openai
from evaldsl.runs.prices import model_family, price_of
from evaldsl.runs.providers import BadValue, Items
from evaldsl.runs.summary import render_text, summarize
from evaldsl.runs.text import BadUsage
from evaldsl.suites import load_suite
from tests.clitools import run_evaldsl
from tests.fuzzing import examples

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "formats"
REAL = ROOT / "tests" / "fixtures" / "realworld"


def check(path: Path, text: str, fmt: str | None = None) -> list[str]:
    """The statuses of `text`'s statements against the run in `path`."""
    run = load_run(path, fmt)
    return evaldsl.compile(text).check(run).statuses


# --- fixtures written from the documentation ------------------------------------------------

TREE_FACTS = (
    'tools == ["get_weather"]; tool get_weather called once; tool get_weather args $.city == '
    '"Oslo"; tool get_weather result == "12 C, rain"; answer == "Oslo: 12 C and rain."; '
    "input tokens == 130; output tokens == 21; steps == 2; latency == 4s; errors == 0; "
    "cost > $0.00003; cost < $0.00004"
)

DOCUMENTED: list[tuple[str, str, str]] = [
    (
        "responses-stream.sse",
        "openai",
        'tools == ["web_search", "get_weather"]; tool get_weather args == {city: "Oslo"}; '
        'tool web_search args $.action.query == "weather Oslo"; answer == "Checking Oslo."; '
        "input tokens == 40; output tokens == 12; steps == 1",
    ),
    (
        "responses-builtin.json",
        "openai",
        'tools == ["lookup_ticket", "file_search"]; tool lookup_ticket args $.id == 42; '
        'tool lookup_ticket result $.state == "open"; answer == "Ticket 42 is open."; '
        "tokens == 120; errors == 0",
    ),
    (
        "anthropic-request.json",
        "anthropic",
        'tool get_weather called twice; tool get_weather result == "19C, cloudy"; '
        'tool get_weather result == "service down"; answer[1] == "Let me check both."; '
        'answer == "Lima is 19C; Quito is unknown."; steps == 2',
    ),
    (
        "anthropic-thinking.sse",
        "anthropic",
        'tools is empty; answer == "It is 4."; input tokens == 50; output tokens == 30',
    ),
    (
        "openllmetry.otlp.json",
        "otel",
        'tools == ["convert"]; tool convert args == {amount: 10, to: "EUR"}; '
        'tool convert result $.eur == 9.2; answer == "10 USD is 9.2 EUR."; '
        "input tokens == 80; output tokens == 17; steps == 2; latency == 3.1s",
    ),
    (
        "openinference-tool.jsonl",
        "otel",
        'tools == ["search_docs"]; tool search_docs args $.q == "rate limits"; errors == 1; '
        'answer == "The search timed out."; tokens == 181; steps == 2; latency == 4s',
    ),
    (
        "genai-events.otlp.json",
        "otel",
        'answer == "Paris."; input tokens == 11; output tokens == 4; latency == 500ms',
    ),
    (
        "agents-spans.jsonl",
        "openai_agents",
        'tools == ["lookup_order"]; tool lookup_order args $.order == 7; '
        'tool lookup_order result == "shipped"; guards == 1; steps == 2; '
        'answer == "Order 7 has shipped."; input tokens == 65; latency == 5s',
    ),
    ("langsmith-tree.json", "langsmith", TREE_FACTS),
    ("langsmith-runs.jsonl", "langsmith", TREE_FACTS),  # the same runs, flat
    (
        "langsmith-wrappers.json",
        "langsmith",
        'tools == ["search_docs"]; tool search_docs called once; '
        'tool search_docs args $.q == "rate limits"; errors == 1; '
        'tool search_docs result contains "timed out"; answer == "The search timed out."; '
        "input tokens == 100; output tokens == 18; steps == 2; latency == 6s",
    ),
]


@pytest.mark.parametrize(("name", "fmt", "text"), DOCUMENTED, ids=[d[0] for d in DOCUMENTED])
def test_documented_shapes(name: str, fmt: str, text: str) -> None:
    path = DATA / name
    for named in (None, fmt):
        statuses = check(path, text, named)
        assert statuses == ["pass"] * len(statuses), (named, statuses)
    assert load_run(path).format == fmt


@pytest.mark.parametrize(
    "path",
    [
        DATA / "anthropic-request.json",
        ROOT / "tests/fixtures/realworld/openai-chat-messages/request-with-tool-results.json",
    ],
    ids=["anthropic", "openai"],
)
def test_a_transcript_records_no_usage_so_its_tokens_are_unknown(path: Path) -> None:
    """A request transcript (the messages sent to a model) records no token usage. Its
    tokens were 0, so `tokens <= 100` passed; they are unknown now, and an assertion on
    them or on the cost is an error."""
    program = evaldsl.compile("tokens == 0; input tokens <= 100; cost < $1; steps >= 1")
    result = program.check(path)
    assert result.statuses == ["error", "error", "error", "pass"]
    assert result.verdicts[0].message.startswith("`tokens` cannot be measured: ")
    assert "token usage" in result.verdicts[0].message
    # and `inspect` says so: unknown, not 0 tokens and $0
    (shown,) = summarize(path)
    assert (shown.input_tokens, shown.output_tokens, shown.cost) == (None, None, None)
    text = render_text(shown)
    assert "  tokens      none recorded\n" in text
    assert "  cost        unknown: no response records token usage\n" in text


def test_inspect_log_samples_expand_into_cases(tmp_path: Path) -> None:
    log = DATA / "inspect-two-samples.json"
    suite_file = tmp_path / "s.eval"
    suite_file.write_text(
        f'case "capitals"\n  cassette "{log}"\n  answer matches /^(Paris|Berlin)$/\n'
        "  tokens < 100\n",
        encoding="utf-8",
    )
    suite = load_suite(suite_file)
    # by id (the log holds fr, then de), as the README says and a `.eval` log's are
    assert [c.name for c in suite.cases] == ["capitals [de]", "capitals [fr]"]
    assert not suite.errors
    report = run_suites([suite])
    assert report.ok and [c.name for c in report.suites[0].cases] == [
        "capitals [de]",
        "capitals [fr]",
    ]
    with pytest.raises(RunError, match="has 2 samples \\(de, fr\\): name one"):
        load_run(log)
    fr = load_run(log, sample="fr")
    assert evaldsl.compile('tool lookup result contains "capital of France"').check(fr).passed


def test_a_log_named_by_many_cases_is_looked_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evaldsl.suites import build

    log = DATA / "inspect-two-samples.json"
    looked: list[object] = []
    original = build.inspect_samples
    monkeypatch.setattr(build, "inspect_samples", lambda *a: looked.append(a) or original(*a))
    copy = tmp_path / "copy.json"
    copy.write_bytes(log.read_bytes())
    suite_file = tmp_path / "s.eval"
    suite_file.write_text(
        "".join(f'case "c{i}"\n  cassette "{log}"\n  tokens < 100\n' for i in range(3))
        + f'case "other"\n  cassette "{copy}"\n  tokens < 100\n',
        encoding="utf-8",
    )
    suite = load_suite(suite_file)
    assert [c.name for c in suite.cases] == [
        *(f"c{i} [{s}]" for i in range(3) for s in ("de", "fr")),
        "other [de]",
        "other [fr]",
    ]
    assert len(looked) == 2  # once per file


# --- answer and cost semantics ---------------------------------------------------------------


def test_dated_models_price_as_their_family() -> None:
    assert price_of("gpt-4o-mini-2024-07-18") == price_of("gpt-4o-mini") == (0.15, 0.6)
    assert model_family("claude-3-5-sonnet-20241022") == "claude-3-5-sonnet"
    assert model_family("openai/gpt-4o") == "gpt-4o"
    assert price_of("gpt-4o-mini-tts-2025-03-20") is None  # never a shorter family's price
    assert price_of(3) is None


@pytest.mark.parametrize(
    "model", ["gpt-4o-2024-05-13", "openai/gpt-4o-2024-05-13", "GPT-4o-2024-05-13"]
)
def test_a_snapshot_priced_apart_from_its_family_has_its_own_price(model: str) -> None:
    # gpt-4o's first snapshot costs $5 / $15 a million tokens, twice the later ones: as
    # its family, every cost of a trace of it was half what it was billed
    assert price_of(model) == (5.0, 15.0)
    assert price_of("gpt-4o-2024-08-06") == price_of("gpt-4o") == (2.5, 10.0)


@pytest.mark.parametrize(
    ("name", "details"),
    [
        ("openai-chat-tools/response-final.json", "prompt_tokens_details"),
        ("openai-responses-api/response-message.json", "input_tokens_details"),
        ("openai-chat-stream/chunks.jsonl", "prompt_tokens_details"),
    ],
)
def test_openai_cached_input_is_priced_at_its_own_price(
    tmp_path: Path, name: str, details: str
) -> None:
    # OpenAI counts the input tokens read from its prompt cache among the input tokens and
    # bills them at the model's cached-input price (gpt-4o-mini: $0.075 a million, half
    # the input price): 1,000,000 input tokens, 800,000 cached, cost $0.06 less than at
    # the full price; every cost was that much too high
    source = REAL / name
    lines = source.read_text("utf-8").splitlines()
    if source.suffix == ".json":  # (one document: the body; else its last line)
        lines = [source.read_text("utf-8")]
    body = json.loads(lines[-1])
    prompt = "input_tokens" if details == "input_tokens_details" else "prompt_tokens"
    full = {**body["usage"], prompt: 1_000_000}
    body["usage"] = {**full, details: {"cached_tokens": 800_000}}
    path = tmp_path / source.name
    path.write_text("\n".join([*lines[:-1], json.dumps(body)]) + "\n", "utf-8")
    output = full.get("completion_tokens", full.get("output_tokens"))
    cost = (200_000 * 0.15 + 800_000 * 0.075 + output * 0.6) / 1_000_000
    below, above = f"cost < ${cost + 1e-7:.7f}", f"cost > ${cost - 1e-7:.7f}"
    assert check(path, f"{below}; {above}", "openai") == ["pass", "pass"]
    read = load_run(path, "openai").read
    assert read is not None and "800000 read from OpenAI's prompt cache" in " ".join(read.notes)
    # more read from the cache than the input counts: the run's error, never a price
    body["usage"] = {**full, details: {"cached_tokens": 1_000_001}}
    path.write_text("\n".join([*lines[:-1], json.dumps(body)]) + "\n", "utf-8")
    with pytest.raises(RunError, match=f"`{details}.cached_tokens` .* is more than `{prompt}`"):
        load_run(path, "openai").events  # noqa: B018


TRACEPLAY_MULTISTEP = ROOT / "tests/fixtures/traceplay/multistep/cassette.multistep.jsonl"


def _openai_cassette(tmp_path: Path, name: str, prompt: int, cached: Any) -> Path:
    """traceplay's multistep cassette (OpenAI bodies as its responses' `output`), its last
    response's body the real one of `name` (gpt-4o-mini: $0.15 input, $0.075 cached, $0.6
    output a million tokens) reading `cached` of 1,000,000 input tokens, and its own
    `usage.promptTokens` `prompt`, as traceplay records it: the body's prompt count."""
    lines = [json.loads(line) for line in TRACEPLAY_MULTISTEP.read_text("utf-8").splitlines()]
    lines = lines[:1] + lines[-2:]  # (the header, one request, its response)
    body = json.loads((REAL / name).read_text("utf-8"))
    count = "input_tokens" if "input_tokens" in body["usage"] else "prompt_tokens"
    details = count + "_details" if count == "input_tokens" else "prompt_tokens_details"
    body["usage"] = {**body["usage"], count: 1_000_000, details: {"cached_tokens": cached}}
    lines[-2]["model"] = body["model"]
    lines[-1]["output"] = body
    lines[-1]["usage"] = {"promptTokens": prompt, "completionTokens": 100}
    path = tmp_path / "c.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), "utf-8")
    return path


@pytest.mark.parametrize(
    "name", ["openai-chat-tools/response-final.json", "openai-responses-api/response-message.json"]
)
@pytest.mark.parametrize("typed_from", [passes.TYPED_FROM, 0])
@pytest.mark.parametrize("reference", [False, True])
def test_a_cassettes_openai_body_prices_its_cached_input(
    tmp_path: Path,
    name: str,
    typed_from: int,
    reference: bool,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """traceplay keeps an OpenAI body as it came, and its `promptTokens` is the body's
    prompt count, among which the body's cached reads: priced at the cached-input price in
    either pass, however the file is decoded (typed from 0 bytes). They were priced as
    input: the cost was $0.06 too high."""
    monkeypatch.setattr(passes, "TYPED_FROM", typed_from)
    if reference:
        monkeypatch.setenv("EVALDSL_REFERENCE", "1")
    cost = (200_000 * 0.15 + 800_000 * 0.075 + 100 * 0.6) / 1_000_000
    statements = f"input tokens == 1000000; cost < ${cost + 1e-7:.7f}; cost > ${cost - 1e-7:.7f}"
    path = _openai_cassette(tmp_path, name, 1_000_000, 800_000)
    assert check(path, statements) == ["pass"] * 3
    # none read (0, as every recent body says): every input token at the input price
    full = (1_000_000 * 0.15 + 100 * 0.6) / 1_000_000
    path = _openai_cassette(tmp_path, name, 1_000_000, 0)
    assert check(path, f"cost > ${full - 1e-7:.7f}; cost < ${full + 1e-7:.7f}") == ["pass"] * 2
    # an input that is not the body's, or a cached count that cannot be read: which
    # tokens were cached nobody can tell, so no count passes
    for prompt, cached, said in (
        (500, 800_000, "input tokens (500) are not its body's"),
        (1_000_000, "800000", 'cached_tokens` is "800000", not a number'),
        (1_000_000, 1_000_001, "is more than"),
    ):
        checked = evaldsl.compile(statements).check(
            load_run(_openai_cassette(tmp_path, name, prompt, cached))
        )
        assert checked.statuses == ["error"] * 3
        assert "c.jsonl:3:1: an LLM response's" in checked.verdicts[0].message
        assert said in checked.verdicts[0].message


@pytest.mark.parametrize(
    ("model", "usage", "tokens", "cost"),
    [
        # Anthropic's input_tokens leaves the cache out (total_tokens adds it): 10 input,
        # 20 written and 80 read at $3 a million (x1.25, x0.1), 5 output at $15
        (
            "anthropic/claude-sonnet-4-20250514",
            {"input_tokens": 10, "output_tokens": 5, "total_tokens": 115,
             "input_tokens_cache_write": 20, "input_tokens_cache_read": 80},
            115,
            (10 * 3 + 20 * 3.75 + 80 * 0.3 + 5 * 15) / 1e6,
        ),
        # OpenAI's counts its cached reads in: 100 input, 80 of them cached at $0.075
        (
            "openai/gpt-4o-mini",
            {"input_tokens": 100, "output_tokens": 5, "total_tokens": 105,
             "input_tokens_cache_read": 80},
            105,
            (20 * 0.15 + 80 * 0.075 + 5 * 0.6) / 1e6,
        ),
    ],
)  # fmt: skip
def test_an_inspect_sample_s_cache_tokens_are_counted_and_priced(
    tmp_path: Path, model: str, usage: dict[str, Any], tokens: int, cost: float
) -> None:
    # Inspect writes the provider's counts: an Anthropic sample's cache reads and writes,
    # left out of its input_tokens, were left out of `tokens` (a budget passed on tokens
    # never counted) and of `cost`
    log = json.loads((REAL / "inspect-ai-eval-log" / "log_read_sample.json").read_text("utf-8"))
    for event in log["samples"][0]["events"]:
        if event["event"] == "model":
            event["model"], event["output"]["usage"] = model, usage
    path = tmp_path / "log.json"
    path.write_text(json.dumps(log), "utf-8")
    text = f"tokens == {tokens}; cost > ${cost * 0.999:.10f}; cost < ${cost * 1.001:.10f}"
    assert check(path, text) == ["pass", "pass", "pass"]
    # a total that tells neither way: the run's error, never a count dropped
    usage["total_tokens"] += 1
    path.write_text(json.dumps(log), "utf-8")
    with pytest.raises(RunError, match="whether the input counts them cannot be told"):
        load_run(path).events  # noqa: B018


def test_a_trace_whose_times_run_backwards_has_no_latency(tmp_path: Path) -> None:
    # its last `at` before its first: latency was 0, and `latency < 5s` passed on a wall
    # time nobody can tell (as an OTel span that ends before it starts has none)
    events = [
        {"type": "user.message", "at": "2026-09-01T00:00:59Z", "content": "hi"},
        {"type": "llm.request", "at": "2026-09-01T00:00:40Z"},
        {"type": "llm.response", "at": "2026-09-01T00:00:20Z", "output": "ok"},
    ]
    path = tmp_path / "events.json"
    path.write_text(json.dumps(events), "utf-8")
    assert check(path, "latency < 5s; steps == 1") == ["error", "pass"]
    [said] = evaldsl.compile("latency < 5s").check(load_run(path)).verdicts
    assert "times run backwards" in str(said.message)
    events[-1]["at"] = "2026-09-01T00:01:01Z"  # (forwards: 2 s)
    path.write_text(json.dumps(events), "utf-8")
    assert check(path, "latency == 2s") == ["pass"]


def test_cost_of_a_dated_model(tmp_path: Path) -> None:
    path = REAL / "openai-chat-tools" / "response-toolcalls.json"
    # 75 input and 51 output tokens at gpt-4o-mini's price: $0.00004185
    assert check(path, "cost > $0.0000418; cost < $0.0000419") == ["pass", "pass"]


# --- detection -------------------------------------------------------------------------------


def write(tmp: Path, name: str, text: str) -> Path:
    path = tmp / name
    path.write_text(text, encoding="utf-8")
    return path


def test_a_status_alone_is_not_a_state(tmp_path: Path) -> None:
    responses = load_run(REAL / "openai-responses-api" / "response-message.json")
    assert (responses.kind, responses.format) == ("trace", "openai")
    inspect_log = load_run(REAL / "inspect-ai-eval-log" / "log_read_sample.json")
    assert (inspect_log.kind, inspect_log.format) == ("trace", "inspect")
    state = load_run(write(tmp_path, "s.json", '{"status": "completed", "goal": "x"}'))
    assert state.kind == "state"


def test_error_null_is_not_an_error_body(tmp_path: Path) -> None:
    body = {
        "object": "response",
        "id": "resp_1",
        "status": "completed",
        "error": None,
        "output": [],
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    run = load_run(write(tmp_path, "r.json", json.dumps(body)))
    assert check(tmp_path / "r.json", "errors == 0; tokens == 2") == ["pass", "pass"]
    assert run.format == "openai"
    failed = {**body, "status": "failed", "error": {"message": "server_error"}}
    run = load_run(write(tmp_path, "f.json", json.dumps(failed)))
    assert check(tmp_path / "f.json", "errors == 1") == ["pass"]
    with pytest.raises(RunError, match="an error body, not a response: quota"):
        load_run(write(tmp_path, "e.json", '{"error": {"message": "quota"}}'), "openai")


def test_two_formats_or_none_is_a_clear_error(tmp_path: Path) -> None:
    plain = {
        "model": "m",
        "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}],
    }
    with pytest.raises(RunError) as info:
        load_run(write(tmp_path, "p.json", json.dumps(plain)))
    assert "matches more than one format: openai (" in info.value.message
    assert "anthropic (" in info.value.message and info.value.hint is not None
    assert load_run(tmp_path / "p.json", "anthropic").format == "anthropic"
    with pytest.raises(RunError) as none:
        load_run(write(tmp_path, "n.json", '{"spans": [], "kind": 1}'))
    assert "the first items have keys `spans`, `kind`" in none.value.message
    assert "inspect" in (none.value.hint or "")


# --- generated edge cases --------------------------------------------------------------------


def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return json.dumps({"id": "c1", "object": "chat.completion.chunk", "choices": [choice]})


CALL_START = chunk(
    {"tool_calls": [{"index": 0, "id": "t1", "function": {"name": "f", "arguments": ""}}]}
)
CALL_PART = chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"q": "ab'}}]})
CALL_END = chunk({"tool_calls": [{"index": 0, "function": {"arguments": 'c"}'}}]}, "tool_calls")


def test_openai_streams_empty_cut_and_whole(tmp_path: Path) -> None:
    with pytest.raises(RunError, match=r"nothing|holds no"):
        load_run(write(tmp_path, "empty.sse", "data: [DONE]\n\n"))
    with pytest.raises(RunError, match="cut in the middle of tool call #1 \\(f\\)"):
        load_run(write(tmp_path, "cut.jsonl", CALL_START + "\n" + CALL_PART + "\n"))
    with pytest.raises(RunError, match="ends before a `finish_reason`"):
        load_run(
            write(
                tmp_path,
                "open.jsonl",
                chunk({"content": "hel"}) + "\n" + chunk({"content": "lo"}) + "\n",
            )
        )
    whole = write(tmp_path, "whole.jsonl", "\n".join([CALL_START, CALL_PART, CALL_END]) + "\n")
    assert check(whole, 'tool f args $.q == "abc"; answer == ""') == ["pass", "pass"]


def anthropic_events(*, stop: bool = True, whole_input: bool = True) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = [
        {
            "type": "message_start",
            "message": {"model": "claude-3-5-haiku", "usage": {"input_tokens": 9}},
        },
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {"type": "tool_use", "id": "tu", "name": "g", "input": {}},
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": '{"a": '},
        },
    ]
    if whole_input:
        events += [
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": "1}"},
            },
            {"type": "content_block_stop", "index": 0},
        ]
    if stop:
        events += [
            {
                "type": "message_delta",
                "delta": {"stop_reason": "tool_use"},
                "usage": {"output_tokens": 7},
            },
            {"type": "message_stop"},
        ]
    return events


def sse(events: list[dict[str, Any]]) -> str:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)


def test_anthropic_streams_cut_and_whole(tmp_path: Path) -> None:
    with pytest.raises(RunError, match="cut in the middle of tool call `g`"):
        load_run(write(tmp_path, "cut.sse", sse(anthropic_events(stop=False, whole_input=False))))
    with pytest.raises(RunError, match="ends before `message_delta`"):
        load_run(write(tmp_path, "open.sse", sse(anthropic_events(stop=False))))
    whole = write(tmp_path, "whole.sse", sse(anthropic_events()))
    assert check(whole, "tool g args $.a == 1; tokens == 16") == ["pass", "pass"]
    lines = write(tmp_path, "whole.jsonl", "\n".join(json.dumps(e) for e in anthropic_events()))
    assert check(lines, "tool g args $.a == 1; tokens == 16") == ["pass", "pass"]


def test_an_anthropic_streams_text_is_its_pieces_in_order(tmp_path: Path) -> None:
    """Text deltas join after the block's own text (a `null` piece is no text), block by
    block, whatever their number; a block restarted under its index starts again. (A
    piece that is not text is the run's error: tests/test_misread.py.)"""
    deltas = [{"type": "text_delta", "text": t} for t in ("a", "7", None, "b")] + [
        {"type": "input_json_delta", "partial_json": "{}"}
    ]
    word, usage = {"type": "text_delta", "text": "w"}, {"output_tokens": 2}
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": {"model": "claude", "usage": {"input_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": "5"}},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": "x"}},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "text"}},
        *({"type": "content_block_delta", "index": 0, "delta": d} for d in deltas),
        *({"type": "content_block_delta", "index": 1, "delta": w} for w in [word] * 5000),
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_stop", "index": 1},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": usage},
        {"type": "message_stop"},
    ]
    path = write(tmp_path, "s.jsonl", "\n".join(json.dumps(e) for e in events))
    answers = [e["output"] for e in load_run(path).events if e["type"] == "llm.response"]
    assert answers == ["5a7b\n" + "w" * 5000]


def otlp(spans: list[dict[str, Any]]) -> str:
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]})


def attr(key: str, value: Any) -> dict[str, Any]:
    kind = "intValue" if isinstance(value, int) else "stringValue"
    return {"key": key, "value": {kind: value}}


@pytest.mark.parametrize(
    ("usage", "tokens"),
    [
        ([("gen_ai.usage.input_tokens", 5), ("gen_ai.usage.output_tokens", 2)], 7),
        ([("gen_ai.usage.prompt_tokens", 5), ("gen_ai.usage.completion_tokens", 2)], 7),
        (  # both spellings on one span (Latitude writes both): counted once
            [
                ("gen_ai.usage.input_tokens", 5),
                ("gen_ai.usage.prompt_tokens", 5),
                ("gen_ai.usage.output_tokens", 2),
                ("gen_ai.usage.completion_tokens", 2),
            ],
            7,
        ),
        ([("llm.token_count.prompt", 5), ("llm.token_count.completion", 2)], 7),
    ],
)
def test_both_spellings_of_token_attributes(
    tmp_path: Path, usage: list[tuple[str, int]], tokens: int
) -> None:
    span = {"spanId": "a", "name": "chat", "attributes": [attr("gen_ai.operation.name", "chat")]}
    span["attributes"] += [attr(k, v) for k, v in usage]
    path = write(tmp_path, "t.json", otlp([span]))
    assert check(path, f"tokens == {tokens}; steps == 1") == ["pass", "pass"]


@pytest.mark.parametrize(
    "tool_attrs",
    [
        [
            attr("gen_ai.operation.name", "execute_tool"),
            attr("gen_ai.tool.name", "f"),
            attr("gen_ai.tool.call.arguments", '{"x": 1}'),
            attr("gen_ai.tool.call.result", "ok"),
        ],
        [
            attr("openinference.span.kind", "TOOL"),
            attr("tool.name", "f"),
            attr("input.value", '{"x": 1}'),
            attr("output.value", "ok"),
        ],
        [
            attr("traceloop.span.kind", "tool"),
            attr("traceloop.entity.name", "f"),
            attr("traceloop.entity.input", '{"x": 1}'),
            attr("traceloop.entity.output", "ok"),
        ],
    ],
    ids=["genai", "openinference", "openllmetry"],
)
def test_tool_spans_in_each_convention(tmp_path: Path, tool_attrs: list[dict[str, Any]]) -> None:
    bare = {"spanId": "b", "name": "no attributes"}
    path = write(
        tmp_path, "t.json", otlp([{"spanId": "a", "name": "f", "attributes": tool_attrs}, bare])
    )
    assert (
        check(path, 'tools == ["f"]; tool f args $.x == 1; tool f result == "ok"') == ["pass"] * 3
    )
    read = load_run(path).read
    assert read is not None and read.skipped == {"spans without attributes": 1}


def test_non_numeric_span_times(tmp_path: Path) -> None:
    span = {
        "spanId": "a",
        "name": "chat",
        "startTimeUnixNano": "soon",
        "endTimeUnixNano": "later",
        "attributes": [attr("gen_ai.operation.name", "chat")],
    }
    path = write(tmp_path, "t.json", otlp([span]))
    assert check(path, "latency < 1s; steps == 1") == ["error", "pass"]


# --- LangSmith runs --------------------------------------------------------------------------


def ls_run(rid: str, run_type: str, name: str, **fields: Any) -> dict[str, Any]:
    return {"id": rid, "name": name, "run_type": run_type, "inputs": {}, **fields}


def test_langsmith_tree_and_flat_runs_are_the_same_events() -> None:
    tree = load_run(DATA / "langsmith-tree.json")
    flat = load_run(DATA / "langsmith-runs.jsonl", "langsmith")
    assert tree.events == flat.events and tree.latency_ms == flat.latency_ms == 4000
    assert tree.read is not None and tree.read.recognised == {"llm run": 2, "tool run": 1}
    assert tree.read.skipped == {"`chain` runs (structure, not an event)": 1}


def test_langsmith_suite_reads_cassette_and_trace_as(tmp_path: Path) -> None:
    facts = "\n".join(f"  {t.strip()}" for t in TREE_FACTS.split(";"))
    suite_file = write(
        tmp_path,
        "s.eval",
        f'case "tree"\n  cassette "{DATA / "langsmith-tree.json"}"\n{facts}\n'
        f'case "flat"\n  trace "{DATA / "langsmith-runs.jsonl"}" as langsmith\n{facts}\n',
    )
    suite = load_suite(suite_file)
    assert not suite.errors, suite.diagnostics
    report = run_suites([suite])
    assert report.ok, report


def test_langsmith_edge_cases(tmp_path: Path) -> None:
    runs = [
        ls_run("r", "chain", "agent", child_runs=[]),
        ls_run("a", "llm", "model", outputs={"weird": [1]}, prompt_tokens=5),
        ls_run("b", "llm", "model"),  # no outputs: still running, or not exported
        ls_run("c", "tool", "lookup", inputs={"input": "not json"}),  # no result yet
        ls_run("d", "tool", "lookup", inputs={"id": 2}, error="KeyError: 2"),
        ls_run("e", "llm", "model", outputs={"output": "Done."}),
    ]
    path = write(tmp_path, "runs.json", json.dumps(runs))
    text = (
        'tool lookup called twice; tool lookup args == {input: "not json"}; '
        'tool lookup result == "KeyError: 2"; errors == 1; steps == 1; answer == "Done."'
    )
    statuses = check(path, text)
    assert statuses == ["pass"] * len(statuses), statuses
    # the one answer read records no usage, and the skipped run's 5 tokens are not counted
    assert check(path, "tokens == 0; tokens == 5") == ["error", "error"]
    read = load_run(path).read
    assert read is not None
    assert read.skipped["`llm` runs whose outputs evaldsl does not read (`weird`)"] == 1
    assert read.skipped["`llm` runs without outputs (still running, or not exported)"] == 1
    assert any("not counted" in n for n in read.notes)
    shown = run_evaldsl("inspect", str(path))
    assert "does not read (`weird`)" in shown.stdout and "not counted" in shown.stdout


@pytest.mark.parametrize(
    ("outputs", "extra"),
    [
        (
            {
                "message": {
                    "role": "assistant",
                    "content": "Hi.",
                    "tool_calls": [
                        {
                            "id": "c",
                            "type": "function",
                            "function": {"name": "f", "arguments": '{"x": 1}'},
                        }
                    ],
                },
                "usage_metadata": {"input_tokens": 3, "output_tokens": 2},
            },
            None,
        ),
        (
            {
                "messages": [
                    {"role": "user", "content": "q"},
                    {
                        "type": "ai",
                        "content": [
                            {"type": "text", "text": "Hi."},
                            {"type": "tool_call", "name": "f", "args": {"x": 1}},
                        ],
                    },
                ],
                "usage": {"prompt_tokens": 3, "completion_tokens": 2},
            },
            None,
        ),
        (
            {
                "type": "message",
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Hi."},
                    {"type": "tool_use", "id": "t", "name": "f", "input": {"x": 1}},
                ],
            },
            {"metadata": {"usage_metadata": {"input_tokens": 3, "output_tokens": 2}}},
        ),
    ],
    ids=["message", "messages", "anthropic-with-set-usage"],
)
def test_langsmith_llm_output_shapes(
    tmp_path: Path, outputs: dict[str, Any], extra: dict[str, Any] | None
) -> None:
    run = ls_run("l", "llm", "m", outputs=outputs, extra=extra, prompt_tokens=0)
    path = write(tmp_path, "o.json", json.dumps(run))
    text = 'answer == "Hi."; tool f args $.x == 1; tokens == 5; steps == 1'
    assert check(path, text) == ["pass"] * 4


def _lc(kind: str, **kwargs: Any) -> dict[str, Any]:
    """A LangChain message as LangSmith serialises it (`langchain_core.load.dumpd`)."""
    return {"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", kind]} | {
        "kwargs": kwargs
    }


def test_a_langsmith_call_whose_arguments_did_not_parse_is_counted(tmp_path: Path) -> None:
    """langchain-openai parses each of a reply's `tool_calls`: one whose arguments are not
    JSON goes to the AIMessage's `invalid_tool_calls` (`InvalidToolCall`: `name`, `args`
    as the text, `id`, `error`), not its `tool_calls`; it is a call the model made."""
    message = _lc(
        "AIMessage",
        content="",
        type="ai",
        tool_calls=[
            {"name": "get_weather", "args": {"city": "Oslo"}, "id": "call_1", "type": "tool_call"}
        ],
        invalid_tool_calls=[
            {
                "name": "get_weather",
                "args": '{"city": "Par',
                "id": "call_2",
                "error": "Function get_weather arguments are not valid JSON",
                "type": "invalid_tool_call",
            }
        ],
    )
    generation = {"text": "", "type": "ChatGeneration", "message": message}
    run = ls_run("l", "llm", "ChatOpenAI", outputs={"generations": [[generation]]})
    path = write(tmp_path, "runs.json", json.dumps([run]))
    text = (
        'tool calls == 2; tool get_weather called twice; tool get_weather args == "{\\"city\\": '
        '\\"Par"; tool get_weather args $.city == "Oslo"'
    )
    assert check(path, text) == ["pass"] * 4
    read = load_run(path).read
    assert read is not None
    assert "arguments of call get_weather (call_2) are not JSON: read as text" in read.notes


def test_a_langsmith_tool_error_langchain_handled_is_an_error_result(tmp_path: Path) -> None:
    """A tool with `handle_tool_error` set catches its `ToolException` and returns a
    `ToolMessage` of `status: "error"` (langchain_core `BaseTool.run`): the tool run
    records no `error`, and its output is that message; the result is an error result,
    as the run's `error` makes one."""
    said = _lc(
        "AIMessage",
        content="",
        type="ai",
        tool_calls=[{"name": "lookup", "args": {"id": 2}, "id": "call_1", "type": "tool_call"}],
    )
    generation = {"text": "", "type": "ChatGeneration", "message": said}
    answer = _lc(
        "ToolMessage",
        content="no such id: 2",
        type="tool",
        name="lookup",
        tool_call_id="call_1",
        status="error",
    )
    runs = [
        ls_run("l", "llm", "ChatOpenAI", outputs={"generations": [[generation]]}),
        ls_run("t", "tool", "lookup", inputs={"input": "{'id': 2}"}, outputs={"output": answer}),
    ]
    path = write(tmp_path, "runs.json", json.dumps(runs))
    assert check(path, 'tool lookup called once; tool lookup result == "no such id: 2"') == [
        "pass",
        "pass",
    ]
    results = [e for e in load_run(path).events if e["type"] == "tool.result"]
    assert [(r["callId"], r.get("isError")) for r in results] == [("call_1", True)]
    answer["kwargs"]["status"] = "success"
    path.write_text(json.dumps(runs), encoding="utf-8")
    results = [e for e in load_run(path).events if e["type"] == "tool.result"]
    assert [(r["callId"], r.get("isError")) for r in results] == [("call_1", None)]


#: An Anthropic reply that searched the web (a `server_tool_use` block and its
#: `web_search_tool_result`) and then called the application's tool, as the Messages API
#: documents its web search tool (the result's `encrypted_content` shortened).
CLAUDE_SEARCHED = [
    {
        "type": "server_tool_use",
        "id": "srvtoolu_1",
        "name": "web_search",
        "input": {"query": "weather Paris"},
    },
    {
        "type": "web_search_tool_result",
        "tool_use_id": "srvtoolu_1",
        "content": [
            {
                "type": "web_search_result",
                "url": "https://meteo.example/paris",
                "title": "Paris",
                "encrypted_content": "Eq",
                "page_age": None,
            }
        ],
    },
    {"type": "text", "text": "Checking the time too."},
    {"type": "tool_use", "id": "toolu_2", "name": "get_time", "input": {"city": "Paris"}},
]


def _claude_outputs(content: list[dict[str, Any]], shape: str) -> dict[str, Any]:
    """An Anthropic reply's `content` as an `llm` run's outputs: the Messages body
    `wrap_anthropic` logs, or the AIMessage `ChatAnthropic` makes of it (its `content`
    the blocks as they came, its `tool_calls` the `tool_use` blocks only)."""
    if shape == "wrap_anthropic":
        return {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": "claude-sonnet-4-5-20250929",
            "content": content,
            "stop_reason": "tool_use",
            "usage": {"input_tokens": 10, "output_tokens": 20},
        }
    calls = [
        {"name": b["name"], "args": b["input"], "id": b["id"], "type": "tool_call"}
        for b in content
        if b["type"] == "tool_use"
    ]
    said = _lc("AIMessage", content=content, type="ai", tool_calls=calls)
    return {"generations": [[{"text": "", "type": "ChatGeneration", "message": said}]]}


@pytest.mark.parametrize("shape", ["wrap_anthropic", "ChatAnthropic"])
def test_a_langsmith_claude_reply_s_server_tool_calls_are_calls(tmp_path: Path, shape: str) -> None:
    """The tools the Anthropic API ran in a reply are calls with their results, as the
    `anthropic` format reads the same reply; LangChain leaves them out of `tool_calls`."""
    run = ls_run("l", "llm", "ChatAnthropic", outputs=_claude_outputs(CLAUDE_SEARCHED, shape))
    path = write(tmp_path, "runs.json", json.dumps([run]))
    text = (
        'tools == ["web_search", "get_time"]; tool web_search args $.query == "weather Paris"; '
        'tool web_search result $[0].url == "https://meteo.example/paris"; '
        'tool get_time args $.city == "Paris"; tool calls == 2'
    )
    assert check(path, text) == ["pass"] * 5


@pytest.mark.parametrize("shape", ["wrap_anthropic", "ChatAnthropic"])
def test_a_langsmith_claude_reply_with_citations_reads_as_written(
    tmp_path: Path, shape: str
) -> None:
    """Anthropic splits a cited reply into text blocks around each cited claim, the spaces
    inside them (the Messages API's citations documentation): the answer is the text as
    the model wrote it, as the `anthropic` format reads the same reply, not its blocks
    joined with newlines. Blocks with no citation beside them still join with "\\n"."""
    cited = {
        "type": "web_search_result_location",
        "url": "https://meteo.example/paris",
        "title": "Paris",
        "encrypted_index": "Eo",
        "cited_text": "18 C",
    }
    content = [
        {"type": "text", "text": "Here it is."},
        {"type": "tool_use", "id": "toolu_1", "name": "note", "input": {}},
        {"type": "text", "text": "According to the forecast, "},
        {"type": "text", "text": "Paris is 18 C", "citations": [cited]},
        {"type": "text", "text": " today."},
    ]
    run = ls_run("l", "llm", "ChatAnthropic", outputs=_claude_outputs(content, shape))
    path = write(tmp_path, "runs.json", json.dumps([run]))
    said = "Here it is.\\nAccording to the forecast, Paris is 18 C today."
    assert check(path, f'answer == "{said}"') == ["pass"]
    body = _claude_outputs(content, "wrap_anthropic")
    alone = write(tmp_path, "body.json", json.dumps(body))
    assert check(alone, f'answer == "{said}"', "anthropic") == ["pass"]


def test_langsmith_errors_are_counted_where_they_start(tmp_path: Path) -> None:
    failing = ls_run("t", "tool", "fetch", error="boom", parent_run_id="r")
    root = ls_run("r", "chain", "agent", error="boom", child_runs=[failing])
    path = write(tmp_path, "t.json", json.dumps(root))
    assert check(path, "errors == 1; tool fetch called once") == ["pass", "pass"]


@settings(max_examples=examples(200), deadline=None)
@given(
    st.lists(
        st.tuples(st.one_of(st.none(), st.integers(0, 30)), st.booleans()),
        min_size=1,
        max_size=30,
    )
)
def test_langsmith_errors_are_counted_in_any_forest(
    tmp_path_factory: pytest.TempPathFactory, shape: list[tuple[int | None, bool]]
) -> None:
    """Runs (flat, by `parent_run_id`: chains, trees, cycles, parents not in the file)
    whose failures are counted once, where they start: a failing run is counted unless a
    run below it fails too, as a scan of each failing run's ancestors finds them."""
    runs = [
        ls_run(f"r{n}", "chain", f"step{n}", parent_run_id=None if up is None else f"r{up}")
        | ({"error": f"boom {n}"} if failed else {})
        for n, (up, failed) in enumerate(shape)
    ]
    runs.append(ls_run("llm", "llm", "model", outputs={"output": "hi"}))
    parent = {n: up for n, (up, _) in enumerate(shape) if up is not None and up < len(shape)}
    above: set[int] = set()  # the runs a failing run lies below, walked up one by one
    for n, (_, failed) in enumerate(shape):
        seen, up = set(), parent.get(n)
        while failed and up is not None and up not in seen:
            seen.add(up)
            above.add(up)
            up = parent.get(up)
    counted = sum(1 for n, (_, failed) in enumerate(shape) if failed and n not in above)
    path = tmp_path_factory.mktemp("forest") / "runs.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in runs) + "\n", encoding="utf-8")
    assert check(path, f"errors == {counted}", "langsmith") == ["pass"]


def test_langsmith_bad_shapes_are_the_runs_error(tmp_path: Path) -> None:
    bad = ls_run("r", "chain", "agent", child_runs={"a": 1})
    with pytest.raises(RunError, match="`child_runs` of run `agent` is an object, not a list"):
        load_run(write(tmp_path, "c.json", json.dumps(bad)))
    child = ls_run("r", "chain", "agent", child_runs=[{"id": "x"}])
    with pytest.raises(RunError, match=r"`agent`.child_runs\[0\] is an object, not a LangSmith"):
        load_run(write(tmp_path, "d.json", json.dumps(child)))
    inner = ls_run("s", "chain", "plan", child_runs=[ls_run("t", "tool", "f"), 3])
    deep = ls_run("r", "chain", "agent", child_runs=[ls_run("q", "tool", "g"), inner])
    with pytest.raises(RunError) as raised:
        load_run(write(tmp_path, "e.json", json.dumps(deep)))
    assert raised.value.message == (
        "the document → `agent`.child_runs[1] → `plan`.child_runs[1] is a number, "
        "not a LangSmith run"
    )
    odd = ls_run("r", "chain", "agent", child_runs=[ls_run("s", "chain", "plan", child_runs=1)])
    with pytest.raises(RunError) as raised:
        lines = [json.dumps(ls_run("z", "tool", "h")), json.dumps(odd)]
        load_run(write(tmp_path, "f.jsonl", "\n".join(lines) + "\n"), "langsmith")
    assert raised.value.message == (
        "line 2 → `agent`.child_runs[0]: `child_runs` of run `plan` is a number, not a list"
    )
    negative = ls_run("l", "llm", "m", outputs={"output": "hi"}, prompt_tokens=-3)
    with pytest.raises(RunError, match="cannot be negative"):
        load_run(write(tmp_path, "n.json", json.dumps(negative)))


def test_a_langsmith_run_with_events_is_not_an_event_list(tmp_path: Path) -> None:
    run = ls_run(
        "l",
        "llm",
        "m",
        outputs={"role": "assistant", "content": "hi"},
        events=[{"name": "start", "time": "2025-01-01T00:00:00"}],
        status="success",
    )
    assert load_run(write(tmp_path, "e.json", json.dumps(run))).format == "langsmith"


# --- nothing recognised: an error for check and for the run ----------------------------------

UNRECOGNISED: list[tuple[str, str, str | None]] = [
    ("events.jsonl", '{"type": "note", "text": "a"}\n{"type": "note", "text": "b"}\n', None),
    ("events.json", '[{"type": "note"}]', "events"),
    ("cassette.jsonl", '{"cassette": "traceplay", "version": 1}\n{"type": "note"}\n', None),
    ("openai.json", '{"choices": []}', "openai"),
    ("anthropic.jsonl", '{"type": "ping"}\n{"type": "ping"}\n', None),
    ("spans.json", '{"resourceSpans": []}', None),
    ("spans.jsonl", '{"name": "a", "context": {"span_id": "1"}, "attributes": {}}\n', "otel"),
    (
        "inspect.json",
        '{"eval": {"task": "t"}, "samples": [{"id": 1, "events": [{"event": "info"}]}]}',
        None,
    ),
    ("agents.jsonl", '{"object": "trace", "workflow_name": "w"}\n', "openai_agents"),
    ("langsmith.json", '{"id": "r", "name": "a", "run_type": "chain", "inputs": {}}', None),
    (
        "langsmith.jsonl",
        '{"id": "r", "name": "a", "run_type": "chain", "inputs": {}}\n'
        '{"id": "l", "name": "m", "run_type": "llm", "parent_run_id": "r", "outputs": {"x": 1}}\n',
        "langsmith",
    ),
]


@pytest.mark.parametrize(("name", "text", "fmt"), UNRECOGNISED, ids=[u[0] for u in UNRECOGNISED])
def test_nothing_recognised_fails_check_and_run(
    tmp_path: Path, name: str, text: str, fmt: str | None
) -> None:
    write(tmp_path, name, text)
    line = f'trace "{name}" as {fmt}' if fmt else f'cassette "{name}"'
    suite_file = write(
        tmp_path, "s.eval", f'case "x"\n  {line}\n  no tool rm_rf\n  tools is empty\n'
    )
    suite = load_suite(suite_file)
    assert [d.code for d in suite.errors] == ["E502"], suite.diagnostics
    assert "cannot read" in suite.errors[0].message
    report = run_suites([suite])
    assert not report.ok and report.suites[0].cases[0].error is not None
    # the run, without the check, is an error too (never a pass)
    try:
        run = load_run(tmp_path / name, fmt)
    except RunError:
        return  # rejected when loaded: the case is an error
    result = evaldsl.compile("no tool rm_rf; tools is empty").check(run)
    assert result.error is not None and "nothing in" in result.error
    assert result.statuses == ["error", "error"]


def test_a_long_stream_of_unknown_events_is_a_run_error(tmp_path: Path) -> None:
    # beyond what `check` reads of a file's head: the run itself fails closed
    header = '{"cassette": "traceplay", "version": 1}\n'
    path = write(tmp_path, "long.jsonl", header + '{"type": "note"}\n' * 1500)
    assert not load_suite(
        write(tmp_path, "s.eval", 'case "x"\n  cassette "long.jsonl"\n  tools is empty\n')
    ).errors
    result = evaldsl.compile("no tool x; tools is empty; tokens < 5000").check(path)
    assert result.statuses == ["error"] * 3
    assert result.error is not None and "`note` ×1500" in result.error


# --- the property: rejected or half-read files never pass ------------------------------------

FRAGMENTS = [
    (REAL / "openai-chat-stream" / "stream.sse").read_text(encoding="utf-8"),
    (REAL / "anthropic-stream-tooluse" / "tool_use_response.txt").read_text(encoding="utf-8"),
    (REAL / "openinference-phoenix-spans" / "spans.jsonl").read_text(encoding="utf-8"),
    (REAL / "openai-chat-jsonl" / "responses.jsonl").read_text(encoding="utf-8"),
    (REAL / "otel-latitude-otlp" / "trace.otlp.json").read_text(encoding="utf-8"),
    (DATA / "agents-spans.jsonl").read_text(encoding="utf-8"),
    (DATA / "langsmith-runs.jsonl").read_text(encoding="utf-8"),
    (DATA / "langsmith-tree.json").read_text(encoding="utf-8"),
    '{"type": "note"}\n{"type": "mark"}\n',
    '{"status": "completed", "output": [], "usage": {}}',
]

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "type",
                    "name",
                    "choices",
                    "content",
                    "resourceSpans",
                    "events",
                    "status",
                    "messages",
                    "output",
                    "span_data",
                    "run_type",
                    "child_runs",
                ]
            ),
            inner,
            max_size=4,
        )
    ),
    max_leaves=12,
)

files = st.one_of(
    # a real trace cut anywhere: a half-read stream or document
    st.tuples(st.sampled_from(FRAGMENTS), st.floats(0, 1)).map(
        lambda t: t[0][: int(len(t[0]) * t[1])]
    ),
    json_values.map(json.dumps),
    st.lists(json_values, min_size=1, max_size=4).map(
        lambda vs: "\n".join(json.dumps(v) for v in vs)
    ),
)


def recognised_something(path: Path, fmt: str | None) -> bool:
    run = load_run(path, fmt)
    if run.state is not None:
        return True
    return any(isinstance(e, dict) and is_kind(e, KNOWN_TYPES) for e in run.events or ())


@settings(
    max_examples=examples(150),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    text=files,
    fmt=st.sampled_from([None, *RUN_FORMATS]),
    ext=st.sampled_from([".json", ".jsonl", ".sse"]),
)
# found by `make fuzz`: a `type` that is a list made format detection raise a TypeError
@example(text='[{"type": []}]', fmt="events", ext=".json")
@example(text='{"type": "llm.response"}\n{"type": {}}', fmt=None, ext=".jsonl")
def test_fail_closed_property(tmp_path: Path, text: str, fmt: str | None, ext: str) -> None:
    path = tmp_path / f"trace{ext}"
    path.write_text(text, encoding="utf-8")
    program = evaldsl.compile("no tool execute_shell; tools is empty; tokens < 100000")
    try:
        run = load_run(path, fmt)
    except RunError:
        # rejected: checking the file is an error, never a pass
        result = program.check(path) if fmt is None else None
        assert result is None or (result.error is not None and "pass" not in result.statuses)
        return
    result = program.check(run)
    if "pass" in result.statuses:
        assert result.error is None and recognised_something(path, fmt), text


def test_vocabulary_and_readme_list_the_same_formats() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = readme[readme.index("### Trace formats") : readme.index("### YAML and JSON suites")]
    listed = [line.split("`")[1] for line in table.splitlines() if line.startswith("| `")]
    assert listed == list(RUN_FORMATS)
    done = run_evaldsl("vocabulary")
    formats = done.stdout[done.stdout.index("Formats") :]
    assert [line.split()[0] for line in formats.splitlines()[1:]] == list(RUN_FORMATS)


# --- OpenAI: a Chat Completions body read straight, as the general tests read it ----------


class _Body(dict[str, Any]):
    """A body the OpenAI reader's straight path does not take (it takes exact dicts): read
    by the shape tests one by one, the reference for that path."""


def _general(value: Any) -> Any:
    """`value` with every object a `_Body` (so none is read by the straight path)."""
    if isinstance(value, dict):
        return _Body({k: _general(v) for k, v in value.items()})
    if isinstance(value, list):
        return [_general(v) for v in value]
    return value


_calls = st.lists(
    st.fixed_dictionaries(
        {"id": st.sampled_from(["call_1", "call_2", ""]), "type": st.just("function")},
        optional={
            "function": st.one_of(
                st.fixed_dictionaries(
                    {"name": st.sampled_from(["get_weather", "search"])},
                    optional={"arguments": st.sampled_from(['{"city": "Paris"}', "{cut", 3])},
                ),
                st.just("not an object"),
            )
        },
    ),
    max_size=2,
)
_messages = st.fixed_dictionaries(
    {"role": st.just("assistant")},
    optional={
        "content": st.one_of(
            st.none(),
            st.sampled_from(["It is 21 C.", ""]),
            st.just([{"type": "text", "text": "part"}, {"type": "image_url"}]),
        ),
        "tool_calls": st.one_of(st.none(), _calls),
        "function_call": st.one_of(
            st.none(), st.just({"name": "lookup", "arguments": '{"q": 1}'}), st.just("x")
        ),
        "refusal": st.none(),
    },
)
_choices = st.lists(
    st.one_of(
        st.fixed_dictionaries({"index": st.just(0), "message": _messages}),
        st.fixed_dictionaries({"index": st.just(0), "text": st.sampled_from(["legacy", ""])}),
        st.fixed_dictionaries(  # a chunk's choice: a chunk, whatever its `object`
            {"index": st.just(0), "delta": st.just({"content": "hi"})},
            optional={"finish_reason": st.just("stop")},
        ),
        st.just("not an object"),
    ),
    max_size=3,
)
_usages = st.one_of(
    st.none(),
    st.fixed_dictionaries(
        {},
        optional={
            "prompt_tokens": st.sampled_from([5, 0, 2.5, -1, "7"]),
            "completion_tokens": st.sampled_from([3, None]),
        },
    ),
)
_bodies = st.fixed_dictionaries(
    {
        "object": st.sampled_from(["chat.completion", "chat.completion", "chat.completion.chunk"]),
        "choices": st.one_of(_choices, st.just({"0": "not a list"})),
    },
    optional={
        "id": st.sampled_from(["chatcmpl-a", "chatcmpl-b"]),
        "model": st.sampled_from(["gpt-4o-mini", 4]),
        "usage": _usages,
        "type": st.sampled_from(["response.created", "error", "other"]),
        "error": st.just({"message": "boom"}),
    },
)
_items = st.one_of(
    _bodies,
    _bodies,
    st.just({"type": "error", "message": "stream failed"}),
    st.just({"type": "response.output_text.delta", "delta": "x"}),
    st.just({"messages": [{"role": "tool", "tool_call_id": "call_1", "content": "ok"}]}),
)


def _read(values: list[Any]) -> Any:
    """The events and reading of OpenAI items, or the error with what it says."""
    try:
        trace = read_openai(Items("t.jsonl", values, "jsonl", lines=[1] * len(values)), "x")
        return trace.events, trace.reading()
    except RunError as err:
        return ("error", err.message, err.hint)
    except BadUsage as err:
        return ("bad usage", str(err))
    except BadValue as err:
        return ("bad value", str(err))


_CHUNK = {
    "id": "chatcmpl-s",
    "object": "chat.completion.chunk",
    "choices": [{"index": 0, "delta": {"content": "streamed"}, "finish_reason": "stop"}],
}
_BODY = {
    "object": "chat.completion",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "whole"}}],
}


@settings(max_examples=examples(400), deadline=None)
@given(st.lists(_items, min_size=1, max_size=6))
@example([_CHUNK, _BODY])  # a stream ends where the body comes: its events first
@example([{**_BODY, "choices": [{"delta": {"content": "x"}, "finish_reason": "stop"}]}])
@example([{**_BODY, "type": "response.created"}])
def test_a_chat_completion_read_straight_is_read_as_the_shape_tests_read_it(
    values: list[dict[str, Any]],
) -> None:
    """A `chat.completion` body (an exact dict) skips the chunk, streaming event, error
    body and shape tests: with chunks (an `object` of `chat.completion` whose choice has a
    `delta` too), streams left open, `type`s, errors and odd choices around it, the events
    and what was read are those of the same items read by the tests one by one."""
    assert _read(values) == _read(_general(values))


def test_a_legacy_function_call_is_a_tool_call() -> None:
    """`function_call` (before `tool_calls`) on a message without tool calls is a call."""
    message = {"role": "assistant", "content": None, "tool_calls": None}
    message["function_call"] = {"name": "lookup", "arguments": '{"q": 1}'}
    body = {"object": "chat.completion", "choices": [{"index": 0, "message": message}]}
    trace = read_openai(Items("t.json", [body]), "x")
    calls = [(e["name"], e["arguments"]) for e in trace.events if e["type"] == "tool.call"]
    assert calls == [("lookup", {"q": 1})]


@pytest.mark.parametrize("fmt", ["anthropic", "openai", "langsmith", "otel"])
def test_a_file_of_nothing_a_named_format_reads_says_which_format(tmp_path: Path, fmt: str) -> None:
    """The message named the format as an adjective ("a anthropic LLM call"), and an
    empty file's first items as having "keys no keys"."""
    path = write(tmp_path, "x.json", "[]")
    with pytest.raises(RunError) as info:
        load_run(path, fmt)
    assert str(info.value) == (
        f"{path}:1:1: `x.json` holds nothing evaldsl recognises as an LLM call, tool call "
        f"or result of the {fmt} format"
    )


@pytest.mark.parametrize(
    ("output", "said"),
    [
        (5, "a generation span's `span_data.output` is 5 (a number), not a list"),
        (["hi"], 'a message of a generation span\'s `output` is "hi" (a string), not an object'),
        ([{"role": ["assistant"], "content": "x"}], "an output message's `role` is"),
    ],
)
def test_an_agents_generation_output_it_cannot_read_is_the_runs_error(
    tmp_path: Path, output: Any, said: str
) -> None:
    """A generation span's `output` that is not a list of messages was a `TypeError`'s
    text ('int' object is not iterable), or its messages that are not objects, or whose
    role is not text, were skipped with their calls."""
    lines = (DATA / "agents-spans.jsonl").read_text(encoding="utf-8").splitlines()
    span = json.loads(lines[3])
    assert span["span_data"]["type"] == "generation"
    span["span_data"]["output"] = output
    lines[3] = json.dumps(span)
    path = write(tmp_path, "spans.jsonl", "\n".join(lines) + "\n")
    with pytest.raises(RunError) as info:
        load_run(path)
    assert str(info.value).startswith(f"{path}:4:1: line 4: {said}"), str(info.value)


def test_an_agents_response_span_s_answer_is_unknown_not_empty(tmp_path: Path) -> None:
    """The Agents SDK's `response` span (its default, a Responses API model) exports its
    response_id and usage, not its output: its answer was "", so `not answer contains
    "sorry"` and `answer is empty` passed on a text nobody read. It is unknown: `answer`
    tests are error verdicts naming why, while its tokens and the calls still count."""
    lines = (DATA / "agents-spans.jsonl").read_text(encoding="utf-8").splitlines()
    # the generations (the call to lookup_order, the last answer) as response spans
    for at in (3, 5):
        span = json.loads(lines[at])
        usage = {"input_tokens": 40, "output_tokens": 10}
        data = {"type": "response", "response_id": f"resp_{at}", "usage": usage}
        lines[at] = json.dumps({**span, "span_data": data})
    path = write(tmp_path, "spans.jsonl", "\n".join(lines) + "\n")
    said = 'not answer contains "sorry"; answer is empty; tokens == 100; tool lookup_order called'
    assert check(path, said) == ["error", "error", "pass", "pass"]
    run = load_run(path)
    verdict = evaldsl.compile('not answer contains "sorry"').check(run).verdicts[0]
    assert "`response` spans (a Responses API model) export no output" in verdict.message


def test_a_json_array_of_traceplay_events_is_events_not_a_request(tmp_path: Path) -> None:
    """Found by the agents hunt: the `events` format is traceplay's events in a JSON array
    too, and every `llm.request` traceplay records holds the request's `messages`; with
    plain user text in them, that event was also taken for an OpenAI or Anthropic request
    body, and the file "matches more than one format" (its JSONL was read). It is
    `events` now; a request body (no traceplay `type`) is still both."""
    demo = ROOT / "tests" / "fixtures" / "traceplay" / "demo" / "cassette.example.jsonl"
    events = [json.loads(line) for line in demo.read_text(encoding="utf-8").splitlines()[1:]]
    assert any(e["type"] == "llm.request" and e["messages"] for e in events)
    path = write(tmp_path, "events.json", json.dumps(events))
    said = 'tool get_weather args $.city == "Xiamen"; answer contains "sunny"; tokens == 144'
    assert check(path, said) == ["pass"] * 3
    assert load_run(path).format == "events"
    request = {"model": "gpt-4o", "messages": [{"role": "user", "content": "weather?"}]}
    with pytest.raises(RunError, match="matches more than one format: openai"):
        load_run(write(tmp_path, "request.json", json.dumps([request])))


def test_a_file_of_agents_sdk_batches_is_read_as_their_spans(tmp_path: Path) -> None:
    """Found by the agents hunt: the SDK's exporter posts its spans in batches of up to
    128, `{"data": [span.export(), ...]}` (openai-agents-python, BackendSpanExporter), in
    the order they ended; a file that logs the posts (a proxy, an ingest stub) holds one
    batch a line. One batch was read, but a file of two was "nothing in it is a
    recognised trace". Each batch's spans are read now, in `started_at` order, and a bad
    element names its line and its place in the batch."""
    lines = (DATA / "agents-spans.jsonl").read_text(encoding="utf-8").splitlines()
    spans = [json.loads(line) for line in lines]
    # (the later spans' batch first: posted in the order they ended, not started)
    posted = [{"data": spans[3:]}, {"data": spans[:3]}]
    path = write(tmp_path, "posts.jsonl", "".join(json.dumps(b) + "\n" for b in posted))
    facts = (
        'tools == ["lookup_order"]; tool lookup_order args $.order == 7; '
        'tool lookup_order result == "shipped"; guards == 1; steps == 2; '
        'answer == "Order 7 has shipped."; input tokens == 65; latency == 5s'
    )
    assert check(path, facts) == ["pass"] * 8
    assert load_run(path).format == "openai_agents"
    posted[1]["data"][1] = {"object": "trace.span", "id": "span_x"}
    path = write(tmp_path, "posts.jsonl", "".join(json.dumps(b) + "\n" for b in posted))
    with pytest.raises(RunError, match=r"posts.jsonl:2:1: element \[1\] of line 2's `data` is"):
        load_run(path, "openai_agents")


@pytest.mark.parametrize("reference", [False, True], ids=["generated", "reference"])
def test_agents_spans_exported_without_their_data_leave_answers_and_tools_unknown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reference: bool
) -> None:
    """Found by the agents hunt: the Agents SDK exports a generation span's `input` and
    `output`, and a function span's `input` and `output`, only when its
    `trace_include_sensitive_data` is on (openai-agents-python: `if tracing.include_data():
    span_generation.span_data.output = [...]`, `if config.trace_include_sensitive_data:
    span_fn.span_data.output = result`); off (a common setting for production), they are
    null. The answer was "" (`answer is empty` and `not answer contains "sorry"` passed),
    the call's arguments `{}` (`not tool T args $.order == 8` passed) and its result null.
    They are unknown now: error verdicts naming the setting; the calls, steps and tokens
    the spans do record still count."""
    if reference:
        monkeypatch.setenv("EVALDSL_REFERENCE", "1")
    lines = (DATA / "agents-spans.jsonl").read_text(encoding="utf-8").splitlines()
    for at in (3, 4, 5):  # (the generations and the function span, as exported so)
        span = json.loads(lines[at])
        span["span_data"] = {**span["span_data"], "input": None, "output": None}
        lines[at] = json.dumps(span)
    path = write(tmp_path, "spans.jsonl", "\n".join(lines) + "\n")
    said = (
        'answer is empty; not answer contains "sorry"; not tool lookup_order args $.order == 8;'
        ' not tool lookup_order result contains "lost"; tool lookup_order called once;'
        " steps == 2; tokens == 81"
    )
    verdicts = evaldsl.compile(said).check(load_run(path))
    assert verdicts.statuses == ["error"] * 4 + ["pass"] * 3
    assert all("trace_include_sensitive_data" in v.message for v in verdicts.verdicts[:4])
    # a generation that failed before its output: a failed step with no answer, not unknown
    span = json.loads(lines[5])
    span["error"] = {"message": "Error getting response", "data": {"error": "timeout"}}
    lines[5] = json.dumps(span)
    path = write(tmp_path, "spans.jsonl", "\n".join(lines) + "\n")
    verdicts = evaldsl.compile("answer is empty; errors == 1").check(load_run(path))
    assert verdicts.statuses == ["pass", "pass"]


def test_agents_response_spans_without_their_tools_data_say_both_cures(tmp_path: Path) -> None:
    """A Responses API model's run (the SDK's default: `response` spans, which never export
    their output) whose function spans were exported with `trace_include_sensitive_data`
    off: an unknown answer's message said to turn the setting on (the last hint set won),
    which exports no answer of a `response` span. Each message now says both."""
    lines = (DATA / "agents-spans.jsonl").read_text(encoding="utf-8").splitlines()
    for at in (3, 5):
        span = json.loads(lines[at])
        usage = {"input_tokens": 40, "output_tokens": 10}
        lines[at] = json.dumps(
            {**span, "span_data": {"type": "response", "response_id": "r", "usage": usage}}
        )
    span = json.loads(lines[4])
    span["span_data"] = {**span["span_data"], "input": None, "output": None}
    lines[4] = json.dumps(span)
    path = write(tmp_path, "spans.jsonl", "\n".join(lines) + "\n")
    said = "answer is empty; not tool lookup_order args $.order == 8"
    verdicts = evaldsl.compile(said).check(load_run(path))
    assert verdicts.statuses == ["error", "error"]
    for verdict in verdicts.verdicts:
        assert "`response` spans (a Responses API model) export no output" in verdict.message
        assert "`trace_include_sensitive_data` on" in verdict.message


@pytest.mark.parametrize("kind", ["generation", "response"])
def test_an_agents_span_s_cached_input_is_priced_at_its_own_price(
    tmp_path: Path, kind: str
) -> None:
    """The Agents SDK records a model call's usage as the Responses API gives it (a chat
    completion's `prompt_tokens_details` made `input_tokens_details`): the tokens read
    from the prompt cache are among `input_tokens`, and were priced as input. gpt-4o-mini,
    1,000,000 input tokens, 800,000 of them cached: $0.06 less."""
    lines = (DATA / "agents-spans.jsonl").read_text(encoding="utf-8").splitlines()
    span = json.loads(lines[3])
    data = span["span_data"]
    usage = {
        "requests": 1,
        "input_tokens": 1_000_000,
        "output_tokens": 100,
        "total_tokens": 1_000_100,
        "input_tokens_details": {"cached_tokens": 800_000, "cache_write_tokens": 0},
        "output_tokens_details": {"reasoning_tokens": 0},
    }
    if kind == "response":  # (its export names no model: `cost` asks for one)
        data = {"type": "response", "response_id": "resp_1", "usage": usage}
    data["usage"] = usage
    lines[3:] = [json.dumps({**span, "span_data": data})]
    path = write(tmp_path, "spans.jsonl", "\n".join(lines) + "\n")
    cost = (200_000 * 0.15 + 800_000 * 0.075 + 100 * 0.6) / 1_000_000
    said = f"cost < ${cost + 1e-7:.7f}; cost > ${cost - 1e-7:.7f}; input tokens == 1000000"
    expected = ["pass"] * 3 if kind == "generation" else ["error", "error", "pass"]
    assert check(path, said) == expected
    read = load_run(path).read
    assert read is not None and "800000 read from OpenAI's prompt cache" in " ".join(read.notes)
    # more read from the cache than the input counts: the run's error, never a price
    usage["input_tokens_details"] = {"cached_tokens": 1_000_001}
    path = write(
        tmp_path,
        "spans.jsonl",
        "\n".join([*lines[:3], json.dumps({**span, "span_data": data})]) + "\n",
    )
    with pytest.raises(RunError, match=r"`input_tokens_details.cached_tokens` .* is more than"):
        load_run(path)


@pytest.mark.parametrize("where", ["usage", "llm_output", "both counted"])
def test_a_langsmith_run_s_openai_cached_input_is_priced_at_its_own_price(
    tmp_path: Path, where: str
) -> None:
    """An `llm` run's OpenAI usage (a `wrap_openai` body's `usage`, LangChain's
    `llm_output.token_usage`) counts the tokens read from the prompt cache among its
    `prompt_tokens`: they were priced as input (gpt-4o-mini, 1,000,000 input tokens,
    800,000 cached: $0.06 too much). The run's own `prompt_tokens` (LangSmith's) that are
    the same input keep them."""
    runs = json.loads((DATA / "langsmith-wrappers.json").read_text(encoding="utf-8"))
    run = runs[1]
    assert run["run_type"] == "llm"
    usage = {
        "prompt_tokens": 1_000_000,
        "completion_tokens": 100,
        "total_tokens": 1_000_100,
        "prompt_tokens_details": {"cached_tokens": 800_000, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": 0},
    }
    del run["outputs"]["usage_metadata"]
    if where == "llm_output":
        run["outputs"]["llm_output"] = {"token_usage": usage, "model_name": "gpt-4o-mini"}
    else:
        run["outputs"]["usage"] = usage
    if where == "both counted":
        run["prompt_tokens"], run["completion_tokens"] = 1_000_000, 100
    path = write(tmp_path, "runs.json", json.dumps([runs[0], run]))
    cost = (200_000 * 0.15 + 800_000 * 0.075 + 100 * 0.6) / 1_000_000
    said = f"cost < ${cost + 1e-7:.7f}; cost > ${cost - 1e-7:.7f}; input tokens == 1000000"
    assert check(path, said) == ["pass"] * 3
    # more read from the cache than the input counts: the run's error, never a price
    usage["prompt_tokens_details"] = {"cached_tokens": 1_000_001}
    path = write(tmp_path, "runs.json", json.dumps([runs[0], run]))
    with pytest.raises(RunError, match=r"`prompt_tokens_details.cached_tokens` .* is more than"):
        load_run(path)


@pytest.mark.parametrize("where", ["outputs", "message", "set", "run counted"])
def test_a_langsmith_run_s_usage_metadata_prices_its_cache_as_the_provider_bills_it(
    tmp_path: Path, where: str
) -> None:
    """LangChain's `UsageMetadata` counts every input kind among `input_tokens`, its
    prompt-cache reads and writes in `input_token_details` (`wrap_openai` writes it too):
    they were priced as input, an OpenAI run's reads too high and an Anthropic run's writes
    too low (1x for 1.25x and 2x). Now OpenAI's reads cost the model's cached-input price,
    and Anthropic's (`ls_provider`, or a Claude model) its multiples; found in the output's
    `usage_metadata`, its generation message's, the one `run.set` keeps, or beside the
    run's own counts of the same input."""
    runs = json.loads((DATA / "langsmith-wrappers.json").read_text(encoding="utf-8"))
    openai_run, claude_run = dict(runs[1]), json.loads(json.dumps(runs[1]))
    openai = {
        "input_tokens": 1_000_000,
        "output_tokens": 100,
        "total_tokens": 1_000_100,
        "input_token_details": {"cache_read": 800_000, "audio": 0},
    }
    claude = {
        "input_tokens": 200_000,
        "output_tokens": 100,
        "total_tokens": 200_100,
        "input_token_details": {
            "cache_read": 80_000,
            "cache_creation": 20_000,
            "ephemeral_1h_input_tokens": 5_000,
        },
    }
    claude_run["extra"] = {
        "invocation_params": {"model": "claude-sonnet-4-20250514"},
        "metadata": {"ls_provider": "anthropic", "ls_model_name": "claude-sonnet-4-20250514"},
    }
    for run, usage in ((openai_run, openai), (claude_run, claude)):
        run["outputs"] = dict(run["outputs"])
        del run["outputs"]["usage_metadata"]
        if where in ("outputs", "run counted"):
            run["outputs"]["usage_metadata"] = usage
        elif where == "message":  # a LangChain chat model's generation
            message = {"content": "ok", "type": "ai", "usage_metadata": usage}
            run["outputs"] = {"generations": [[{"text": "ok", "message": message}]]}
        else:
            run["extra"] = {**run["extra"], "metadata": {**run["extra"]["metadata"]}}
            run["extra"]["metadata"]["usage_metadata"] = usage
        if where == "run counted":
            run["prompt_tokens"], run["completion_tokens"] = usage["input_tokens"], 100
    dollars = {
        id(openai_run): (200_000 * 0.15 + 800_000 * 0.075 + 100 * 0.6) / 1e6,
        # 100,000 input at $3, 80,000 read at $0.30, 15,000 written (5 min) at $3.75,
        # 5,000 (1 hour) at $6, 100 output at $15
        id(claude_run): (100_000 * 3 + 80_000 * 0.3 + 15_000 * 3.75 + 5_000 * 6 + 1500) / 1e6,
    }
    for run in (openai_run, claude_run):
        path = write(tmp_path, "runs.json", json.dumps([runs[0], run]))
        cost = dollars[id(run)]
        said = f"cost < ${cost + 1e-7:.7f}; cost > ${cost - 1e-7:.7f}"
        assert check(path, said) == ["pass"] * 2, (where, run["extra"])
    # more cache tokens than the input counts: the run's error, never a price
    claude["input_token_details"]["cache_read"] = 190_000
    path = write(tmp_path, "runs.json", json.dumps([runs[0], claude_run]))
    with pytest.raises(RunError, match=r"counts 210000 prompt-cache tokens, more than"):
        load_run(path)


_DOCUMENTS = [path for path in sorted(REAL.glob("*/*.json")) if "inspect" not in path.parent.name]


@pytest.mark.parametrize("source", _DOCUMENTS, ids=lambda p: p.parent.name + "/" + p.name)
@pytest.mark.parametrize("layout", ["compact", "compact+newline", "bom", "indented"])
def test_a_document_on_one_line_is_decoded_once_and_read_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: Path, layout: str
) -> None:
    """A JSON document written on one line (as most writers write it) is read as the
    document it is, its line not decoded first to be looked at (a 37 MB OTLP document was
    decoded three times); written any way, it reads the same."""
    from evaldsl.runs import detect

    doc = json.loads(source.read_text(encoding="utf-8"))
    text = json.dumps(doc, indent=2 if layout == "indented" else None)
    data = text.encode() + (b"\n" if layout == "compact+newline" else b"")
    path = tmp_path / source.name
    path.write_bytes((b"\xef\xbb\xbf" if layout == "bom" else b"") + data)
    kept = load_run(source)
    decoded: list[int] = []  # the sizes of the texts decoded as JSON
    real = detect.mended_loads
    monkeypatch.setattr(detect, "mended_loads", lambda raw: decoded.append(len(raw)) or real(raw))
    for named in (None, kept.format if kept.format in RUN_FORMATS else None):
        decoded.clear()
        run = load_run(path, named)
        # the whole text decoded once (OTel's: by the typed decoder, not here), where it
        # was decoded as a line to look at, again as a JSONL's first line, then whole
        assert len([n for n in decoded if n >= len(text)]) <= 1, named
        assert run.events == kept.events and run.format == kept.format


_LINE_BYTES = st.lists(
    st.sampled_from([b"\n", b"\r\n", b" ", b"\t", b"\xef\xbb\xbf", b"{", b'"a"', b"x", b"\xff"]),
    max_size=40,
).map(b"".join)


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=_LINE_BYTES, block=st.integers(1, 9), most=st.integers(1, 30))
def test_a_first_line_read_by_blocks_is_the_one_read_by_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, data: bytes, block: int, most: int
) -> None:
    """A file's first line longer than a block (a document on one line) is read by
    blocks, not by `readline`: the same line and number, and past the longest line read,
    the same error, as line by line; blank first lines, BOMs and `\\r\\n` alike."""
    from evaldsl.runs import cassette, detect, model

    path = tmp_path / "x.json"
    path.write_bytes(data)
    monkeypatch.setattr(detect, "FIRST_BLOCK", block)
    monkeypatch.setattr(detect, "MAX_LINE_BYTES", most)
    monkeypatch.setattr(model, "MAX_LINE_BYTES", most)
    monkeypatch.setattr(model, "_small", lambda f: False)  # (lines read with the limit)

    def said(read: Any) -> Any:
        try:
            return read()
        except RunError as err:
            return str(err)

    with open(path, "rb") as f:
        want = said(lambda: cassette.first_line(f, str(path)))
    assert said(lambda: detect.read_first_line(str(path))) == want


@pytest.mark.parametrize("end", [b"", b"\n", b"\r\n", b"\n{}\n"])
def test_a_first_line_longer_than_a_block_is_read_without_readline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, end: bytes
) -> None:
    """A document on one line is read by blocks: `first_line` (the buffered reader's
    `readline`, ~3x slower on a 37 MB line) is not asked, with or without a newline after
    it, or lines after it."""
    from evaldsl.runs import detect

    doc = json.dumps({"resourceSpans": [{"x": "y" * 64} for _ in range(64)]}).encode()
    path = tmp_path / "doc.json"
    path.write_bytes(b"\xef\xbb\xbf" + doc + end)
    kept = detect.read_first_line(str(path))
    monkeypatch.setattr(detect, "FIRST_BLOCK", 1000)  # (the file: 5,634 bytes and its end)
    monkeypatch.setattr(detect, "first_line", lambda f, p: pytest.fail("read by lines"))
    line = doc + end[: end.find(b"\n") + 1] if b"\n" in end else doc
    assert detect.read_first_line(str(path)) == kept == (line, 1)


@pytest.mark.parametrize("bom", [b"", b"\xef\xbb\xbf"])
def test_a_first_line_in_the_first_block_is_read_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bom: bytes
) -> None:
    """A first line that ends in the file's first block (a cassette's header: what a
    suite's expansion looks at in every cassette for an Inspect AI log) is taken from
    that block, not read again by lines after a seek."""
    from evaldsl.runs import detect

    header = b'{"cassette":"traceplay","version":1}\n'
    path = tmp_path / "c.jsonl"
    path.write_bytes(bom + header + b'{"type":"user.message","content":"hi"}\n')
    monkeypatch.setattr(detect, "first_line", lambda f, p: pytest.fail("read by lines"))
    assert detect.read_first_line(str(path)) == (header, 1)


@pytest.mark.parametrize("shape", ["wrap_openai", "generation_info", "response_metadata"])
def test_a_langsmith_answer_the_content_filter_removed_is_unknown(
    tmp_path: Path, shape: str
) -> None:
    """An OpenAI reply the content filter stopped with nothing left (`finish_reason:
    "content_filter"`, `content: null`), as `wrap_openai` logs the body or LangChain's
    ChatOpenAI records it (the generation's `generation_info`, its message's
    `response_metadata`): its answer is unknown (an error verdict naming the filter), as
    the `openai` format reads the body, never "" that `not answer contains` passes."""
    usage = {"prompt_tokens": 10, "completion_tokens": 0, "total_tokens": 10}
    if shape == "wrap_openai":
        choice = {"index": 0, "message": {"role": "assistant", "content": None}}
        outputs: dict[str, Any] = {
            "object": "chat.completion",
            "model": "gpt-4o-2024-08-06",
            "choices": [choice | {"finish_reason": "content_filter"}],
            "usage": usage,
        }
    else:
        said = _lc("AIMessage", content="", type="ai", tool_calls=[])
        generation: dict[str, Any] = {"text": "", "type": "ChatGeneration", "message": said}
        if shape == "generation_info":
            generation["generation_info"] = {"finish_reason": "content_filter"}
        else:
            said["kwargs"]["response_metadata"] = {"finish_reason": "content_filter"}
        outputs = {"generations": [[generation]], "llm_output": {"token_usage": usage}}
    run = ls_run("l", "llm", "ChatOpenAI", outputs=outputs)
    path = write(tmp_path, "runs.json", json.dumps([run]))
    checked = evaldsl.compile('not answer contains "bomb"; tokens == 10; steps == 1').check(
        load_run(path)
    )
    assert checked.statuses == ["error", "pass", "pass"]
    assert "content filter removed it" in checked.verdicts[0].message
    # a reply that stopped as usual with no text has the answer ""
    text = json.dumps([run]).replace('"content_filter"', '"stop"')
    assert check(write(tmp_path, "runs.json", text), 'answer == ""') == ["pass"]


def test_a_langsmith_tool_message_s_content_blocks_are_its_text(tmp_path: Path) -> None:
    """A LangChain tool may return content blocks (`BaseTool._format_output` keeps a list
    of `text`/`image_url`/`image`/`json` blocks as the ToolMessage's `content`, as MCP
    tools' results come): the result is the text of its text blocks, as the `openai`
    format reads a tool message's content list, not the list (whose `result contains`
    failed, and `not result contains` passed, on the text it holds)."""
    said = _lc(
        "AIMessage",
        content="",
        type="ai",
        tool_calls=[{"name": "weather", "args": {"city": "Oslo"}, "id": "call_1"}],
    )
    blocks = [{"type": "text", "text": "12 C"}, {"type": "image_url", "image_url": {"url": "u"}}]
    blocks.append({"type": "text", "text": "rain"})
    answer = _lc("ToolMessage", content=blocks, type="tool", tool_call_id="call_1")
    generation = {"text": "", "type": "ChatGeneration", "message": said}
    runs = [
        ls_run("l", "llm", "ChatOpenAI", outputs={"generations": [[generation]]}),
        ls_run("t", "tool", "weather", inputs={"city": "Oslo"}, outputs={"output": answer}),
    ]
    path = write(tmp_path, "runs.json", json.dumps(runs))
    text = 'tool weather result == "12 C\\nrain"; not tool weather result contains "snow"'
    assert check(path, text) == ["pass", "pass"]
    # blocks with no text (a `json` block's data) are kept as they are, never ""
    answer["kwargs"]["content"] = [{"type": "json", "json": {"temp": 12}}]
    path = write(tmp_path, "runs.json", json.dumps(runs))
    assert check(path, "tool weather result $[0].json.temp == 12") == ["pass"]


#: An OpenAI web search as the Responses API writes its item (no `action.sources`: the
#: request's `include` did not ask for them).
SEARCHED = {
    "type": "web_search_call",
    "id": "ws_1",
    "status": "completed",
    "action": {"type": "search", "query": "weather Oslo"},
}


@pytest.mark.parametrize("version", ["v0", "responses/v1", "v1"])
def test_a_langsmith_chatopenai_web_search_is_a_call(tmp_path: Path, version: str) -> None:
    """ChatOpenAI on the Responses API keeps the built-in tools the API ran out of
    `tool_calls`: by its `output_version`, in `additional_kwargs.tool_outputs` (`v0`),
    as content blocks of the API's items (`responses/v1`), or as LangChain's standard
    `server_tool_call`/`server_tool_result` blocks (`v1`). Each is a call, as the
    `openai` format reads the same response's `web_search_call` item."""
    text = {"type": "text", "text": "Oslo: 12 C.", "annotations": []}
    extra: dict[str, Any] = {}
    if version == "v0":
        content: list[dict[str, Any]] = [text]
        extra = {"tool_outputs": [SEARCHED]}
    elif version == "responses/v1":
        content = [SEARCHED, text]
    else:
        asked = {"type": "server_tool_call", "name": "web_search", "id": "ws_1"}
        asked["args"] = {"query": "weather Oslo"}
        found = {"type": "server_tool_result", "tool_call_id": "ws_1", "status": "success"}
        content = [asked, found | {"output": {"sources": ["https://met.no"]}}, text]
    said = _lc("AIMessage", content=content, type="ai", tool_calls=[], additional_kwargs=extra)
    generation = {"text": "", "type": "ChatGeneration", "message": said}
    run = ls_run("l", "llm", "ChatOpenAI", outputs={"generations": [[generation]]})
    path = write(tmp_path, "runs.json", json.dumps([run]))
    query = "$.query" if version == "v1" else "$.action.query"
    checked = evaldsl.compile(
        f'tool web_search called once; tool web_search args {query} == "weather Oslo"; '
        'answer == "Oslo: 12 C."; not tool web_search result contains "snow"'
    ).check(load_run(path))
    # (the API's item records no sources: its result is unknown, an error verdict)
    last = "pass" if version == "v1" else "error"
    assert checked.statuses == ["pass", "pass", "pass", last]


@pytest.mark.parametrize("version", ["v0", "responses/v1"])
def test_a_langsmith_chatopenai_mcp_call_is_a_call(tmp_path: Path, version: str) -> None:
    """A remote MCP server's tool the Responses API ran is an `mcp_call` item (its
    arguments JSON text, its own `output` or `error`), kept out of `tool_calls` as the
    built-in tools' items are: it was not counted (`no tool read_wiki` passed on a run
    that called it). It is a call with its result, as the `openai` format reads it."""
    item = {
        "type": "mcp_call",
        "id": "mcp_1",
        "server_label": "wiki",
        "name": "read_wiki",
        "arguments": '{"page": "Oslo"}',
        "output": "Oslo is the capital of Norway.",
        "error": None,
    }
    text = {"type": "text", "text": "It is the capital.", "annotations": []}
    extra: dict[str, Any] = {"tool_outputs": [item]} if version == "v0" else {}
    content = [text] if version == "v0" else [item, text]
    said = _lc("AIMessage", content=content, type="ai", tool_calls=[], additional_kwargs=extra)
    generation = {"text": "", "type": "ChatGeneration", "message": said}
    run = ls_run("l", "llm", "ChatOpenAI", outputs={"generations": [[generation]]})
    path = write(tmp_path, "runs.json", json.dumps([run]))
    checked = evaldsl.compile(
        'no tool read_wiki; tool read_wiki args $.page == "Oslo"; '
        'tool read_wiki result contains "capital"'
    ).check(load_run(path))
    assert checked.statuses == ["fail", "pass", "pass"]


def test_a_langsmith_tool_run_s_input_as_langchain_logs_it_is_its_arguments(
    tmp_path: Path,
) -> None:
    """LangChain's tracer logs a tool run's input as `{"input": str(tool_input)}`
    (langchain_core `_create_tool_run`: `inputs = {"input": input_str}`), a dict's Python
    repr: `{'city': 'Oslo', 'metric': True}`. Read as the object it writes (literals only,
    never code run), so that `args $.city` reads the city (it failed, and `not args $.city
    == …` passed, on a call that named it); a repr that is no literal stays text."""
    said = "{'city': 'Oslo', 'days': 2, 'metric': True, 'note': None, 'tags': ['a']}"
    run = ls_run("t", "tool", "get_weather", inputs={"input": said}, outputs={"output": "12 C"})
    path = write(tmp_path, "runs.json", json.dumps([run]))
    text = (
        'tool get_weather args == {city: "Oslo", days: 2, metric: true, note: null, '
        'tags: ["a"]}; not tool get_weather args $.city == "Paris"'
    )
    assert check(path, text) == ["pass", "pass"]
    for kept in ("{'when': datetime.date(2024, 1, 1)}", "{'n': 1e999}", "{1: 'a'}", "{'a'"):
        run["inputs"] = {"input": kept}
        path = write(tmp_path, "runs.json", json.dumps([run]))
        assert load_run(path).events[0]["arguments"] == {"input": kept}, kept


def test_an_agents_refusal_is_the_answer_of_a_message_without_text(tmp_path: Path) -> None:
    """A generation span's output message is the Chat Completions message as the SDK
    dumps it (`content: null`, `refusal: "…"` when the model refused): its answer is its
    refusal, noted, as the `openai` format reads the same message, not "" that `not
    answer contains "can't"` passed on."""
    lines = (DATA / "agents-spans.jsonl").read_text(encoding="utf-8").splitlines()
    span = json.loads(lines[5])
    assert span["span_data"]["type"] == "generation"
    refused = {"role": "assistant", "content": None, "refusal": "I can't help with that."}
    span["span_data"]["output"] = [refused | {"tool_calls": None, "audio": None}]
    lines[5] = json.dumps(span)
    path = write(tmp_path, "spans.jsonl", "\n".join(lines) + "\n")
    assert check(path, 'answer == "I can\'t help with that."') == ["pass"]
    assert any("refusal" in note for note in summarize(path)[0].notes)


@pytest.mark.parametrize("shape", ["wrap_openai", "ChatOpenAI"])
def test_a_langsmith_refusal_is_the_answer_of_a_message_without_text(
    tmp_path: Path, shape: str
) -> None:
    """An OpenAI reply that refused (`content: null`, `refusal: "…"`; structured outputs
    refuse so), as `wrap_openai` logs the body or ChatOpenAI keeps it (langchain-openai
    puts it in the AIMessage's `additional_kwargs.refusal`): its answer is the refusal,
    noted, as the `openai` format reads the body, not "" that `not answer contains
    "can't"` passed on."""
    said = "I can't help with that."
    if shape == "wrap_openai":
        message = {"role": "assistant", "content": None, "refusal": said}
        outputs: dict[str, Any] = {
            "object": "chat.completion",
            "model": "gpt-4o-2024-08-06",
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        }
    else:
        ai = _lc("AIMessage", content="", type="ai", additional_kwargs={"refusal": said})
        outputs = {"generations": [[{"text": "", "type": "ChatGeneration", "message": ai}]]}
    run = ls_run("l", "llm", "ChatOpenAI", outputs=outputs)
    path = write(tmp_path, "runs.json", json.dumps([run]))
    assert check(path, 'answer == "I can\'t help with that."; steps == 1') == ["pass", "pass"]
    assert any("refusal" in note for note in summarize(path)[0].notes)
