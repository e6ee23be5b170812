"""Provider recordings that end as the run ended, and Anthropic's prompt-cache tokens.

A stream that ends in the provider's own error event (Anthropic `event: error`, the
Responses API's `{"type": "error"}`, a Chat Completions `data: {"error": …}` chunk) is a
whole recording of a run that failed: detected as that provider's, read with an
`agent.error`, what came before read as usual. An Anthropic stream that stops at
`max_tokens` inside a tool call's input is whole too. Anthropic's `input_tokens` leaves
the cached tokens out: `input tokens` counts them, `cost` prices them at Anthropic's
multiples of the input price, and so in a traceplay cassette that keeps Anthropic's body
as its response's `output`. The inputs are small hand-made copies of the API's shapes.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any
from unittest import mock

import attrs
import pytest

import evaldsl
from evaldsl.runs import RunError, anthropic, load_run, passes
from evaldsl.runs.summary import render_text, summarize
from evaldsl.runs.text import BadUsage
from tests.clitools import ROOT, run_evaldsl
from tests.test_formats import attr, check, otlp, sse, write

MODEL = "claude-sonnet-4-20250514"  # $3 input, $15 output a million tokens


def _start(usage: dict[str, Any]) -> dict[str, Any]:
    return {"type": "message_start", "message": {"model": MODEL, "content": [], "usage": usage}}


def _text(index: int, text: str) -> list[dict[str, Any]]:
    return [
        {"type": "content_block_start", "index": index, "content_block": {"type": "text"}},
        {
            "type": "content_block_delta",
            "index": index,
            "delta": {"type": "text_delta", "text": text},
        },
    ]


def _tool(index: int, *pieces: str) -> list[dict[str, Any]]:
    block = {"type": "tool_use", "id": "tu1", "name": "write_file", "input": {}}
    return [
        {"type": "content_block_start", "index": index, "content_block": block},
        *(
            {
                "type": "content_block_delta",
                "index": index,
                "delta": {"type": "input_json_delta", "partial_json": p},
            }
            for p in pieces
        ),
    ]


def _end(reason: str, usage: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"type": "message_delta", "delta": {"stop_reason": reason}, "usage": usage},
        {"type": "message_stop"},
    ]


def _notes(path: Path, fmt: str | None = None) -> str:
    return "\n".join(render_text(s) for s in summarize(path, fmt))


# --- prompt-cache tokens ---------------------------------------------------------------------

CACHED = {
    "input_tokens": 100,
    "cache_creation_input_tokens": 20000,
    "cache_read_input_tokens": 80000,
    "output_tokens": 50,
}
# input: 100 x $3 + 20,000 x $3.75 (5-minute writes: 1.25x) + 80,000 x $0.30 (reads: 0.1x)
# = $0.0993 a million; output: 50 x $15 = $0.00075
CACHED_COST = "cost > $0.100049; cost < $0.100051"


def test_a_bodys_cache_tokens_are_input_tokens_priced_at_their_rates(tmp_path: Path) -> None:
    body = {"type": "message", "model": MODEL, "content": [{"type": "text", "text": "Done."}]}
    path = write(tmp_path, "m.json", json.dumps({**body, "usage": CACHED}))
    statements = f"input tokens == 100100; output tokens == 50; {CACHED_COST}"
    assert check(path, statements) == ["pass"] * 4
    assert "20000 written to the cache (0 of them for 1 hour), 80000 read" in _notes(path)


def test_one_hour_cache_writes_cost_twice_the_input_price(tmp_path: Path) -> None:
    usage = {**CACHED, "cache_creation": {"ephemeral_1h_input_tokens": 20000}}
    body = {"type": "message", "model": MODEL, "content": [], "usage": usage}
    path = write(tmp_path, "m.json", json.dumps(body))
    # 20,000 x $6 where 5-minute writes were 20,000 x $3.75: $0.045 more
    assert check(path, "input tokens == 100100; cost > $0.145049; cost < $0.145051") == ["pass"] * 3
    # the split alone says how many were written
    usage = {"input_tokens": 1, "cache_creation": {"ephemeral_5m_input_tokens": 3}}
    assert anthropic.read_usage(usage) == ((4, 0), {"write5m": 3, "write1h": 0, "read": 0})


def test_a_streams_cache_tokens_count_as_the_bodys(tmp_path: Path) -> None:
    """The counts of `message_start`, updated by `message_delta`'s (cumulative)."""
    events = [
        _start({**CACHED, "output_tokens": 1}),
        *_text(0, "Done."),
        {"type": "content_block_stop", "index": 0},
        *_end("end_turn", {"output_tokens": 50}),
    ]
    path = write(tmp_path, "s.sse", sse(events))
    assert check(path, f"input tokens == 100100; {CACHED_COST}") == ["pass"] * 3


TRACEPLAY_ANTHROPIC = (
    Path(__file__).parent / "fixtures/traceplay/anthropic/cassette.anthropic.jsonl"
)


def _cassette(tmp_path: Path, body_usage: dict[str, Any], prompt_tokens: int) -> Path:
    """traceplay's Anthropic cassette, its response's body (`output`) holding `body_usage`
    as Anthropic sent it and its own `usage` giving `prompt_tokens`, as traceplay records:
    `promptTokens` is the body's `input_tokens` alone."""
    lines = [json.loads(line) for line in TRACEPLAY_ANTHROPIC.read_text("utf-8").splitlines()]
    request, response = lines[-2], lines[-1]
    request["model"] = response["model"] = MODEL
    response["output"]["usage"] = body_usage
    response["usage"] = {"promptTokens": prompt_tokens, "completionTokens": 50}
    return write(tmp_path, "c.jsonl", "".join(json.dumps(line) + "\n" for line in lines))


@pytest.mark.parametrize("typed_from", [passes.TYPED_FROM, 0])
@pytest.mark.parametrize("reference", [False, True])
def test_a_cassettes_anthropic_body_counts_its_cache_tokens_as_the_body_does(
    tmp_path: Path, typed_from: int, reference: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """traceplay keeps the body as it came: its cache counts are input tokens, priced at
    their rates, in either pass and however the file is decoded (typed from 0 bytes)."""
    monkeypatch.setattr(passes, "TYPED_FROM", typed_from)
    if reference:
        monkeypatch.setenv("EVALDSL_REFERENCE", "1")
    statements = f"input tokens == 100100; output tokens == 50; {CACHED_COST}"
    # traceplay's own promptTokens (input_tokens alone), or one that counts the cache too
    for prompt in (100, 100100):
        path = _cassette(tmp_path, CACHED, prompt)
        assert check(path, statements) == ["pass"] * 4
        run = attrs.evolve(load_run(path), events=list(load_run(path).events or ()))
        assert evaldsl.compile(statements).check(run).statuses == ["pass"] * 4
    # input that is neither: which counts the cache nobody can tell, so no count passes
    checked = evaldsl.compile(statements).check(load_run(_cassette(tmp_path, CACHED, 500)))
    assert checked.statuses == ["error"] * 4
    assert (
        "c.jsonl:4:1: an LLM response's input tokens (500) are neither"
        in checked.verdicts[0].message
    )


@pytest.mark.parametrize(
    ("usage", "said"),
    [
        ({"input_tokens": 1, "cache_read_input_tokens": "80000"}, "not a number"),
        ({"input_tokens": 1, "cache_creation": 5}, "`cache_creation` is 5"),
        (
            {
                "input_tokens": 1,
                "cache_creation_input_tokens": 2,
                "cache_creation": {"ephemeral_1h_input_tokens": 3},
            },
            "more than its `cache_creation_input_tokens`",
        ),
    ],
)
def test_cache_counts_that_cannot_be_read_are_errors(usage: dict[str, Any], said: str) -> None:
    with pytest.raises(BadUsage, match=said):
        anthropic.read_usage(usage)


# --- a stream that ends in the provider's error ----------------------------------------------

ANTHROPIC_ERROR = {
    "type": "error",
    "error": {"type": "overloaded_error", "message": "Overloaded"},
}


def test_an_anthropic_stream_ending_in_an_error_event_is_a_run_that_failed(
    tmp_path: Path,
) -> None:
    events = [_start({"input_tokens": 9, "output_tokens": 1}), *_text(0, "I'll check")]
    path = write(tmp_path, "e.sse", sse([*events, ANTHROPIC_ERROR]))
    # detected as Anthropic's (its `error` item is no traceplay event), and read whole
    assert load_run(path).format == "anthropic"
    assert check(path, 'errors == 1; answer == "I\'ll check"; tokens == 10') == ["pass"] * 3
    assert "the run ended in an error (overloaded_error: Overloaded)" in _notes(path)
    # a tool call's input cut off by the error: unknown arguments, noted
    cut = write(tmp_path, "c.sse", sse([*events, *_tool(1, '{"path": "a'), ANTHROPIC_ERROR]))
    statements = "errors == 1; tool write_file called; not tool write_file args has path"
    assert check(cut, statements) == ["pass", "pass", "error"]
    assert "`write_file`'s input is cut, the run ended in an error in it" in _notes(cut)


def test_a_responses_stream_ending_in_an_error_event_is_a_run_that_failed(
    tmp_path: Path,
) -> None:
    created = {"type": "response.created", "response": {"model": "gpt-4o-mini", "output": []}}
    text = {"type": "response.output_text.delta", "output_index": 0, "delta": "Hel"}
    call = {"type": "function_call", "name": "f", "call_id": "c1", "arguments": ""}
    added = {"type": "response.output_item.added", "output_index": 1, "item": call}
    args = {"type": "response.function_call_arguments.delta", "output_index": 1, "delta": "{"}
    error = {"type": "error", "code": "server_error", "message": "Down", "param": None}
    events = [created, text, added, args, error]
    path = write(tmp_path, "r.sse", "".join(f"data: {json.dumps(e)}\n\n" for e in events))
    assert load_run(path).format == "openai"
    assert check(path, 'errors == 1; answer == "Hel"; tool f args != {}') == [
        "pass",
        "pass",
        "error",
    ]
    notes = _notes(path)
    assert "the run ended in an error (server_error: Down)" in notes
    assert "tool call `f`'s arguments are cut" in notes


@pytest.mark.parametrize("output", [[], [{"type": "message", "content": []}]])
def test_a_responses_stream_ending_in_response_failed_ends_as_an_error_event_does(
    tmp_path: Path, output: list[dict[str, Any]]
) -> None:
    """`response.failed` is the API's error too: its body's `output` is empty, so the text
    streamed before it is the answer (it was ""), with the same note (there was none);
    a body that has an output is read, and its error is one `agent.error`."""
    created = {"type": "response.created", "response": {"model": "gpt-4o-mini", "output": []}}
    text = {"type": "response.output_text.delta", "output_index": 0, "delta": "Partial"}
    error = {"code": "server_error", "message": "Down"}
    body = {"status": "failed", "output": output, "error": error, "usage": None}
    failed = {"type": "response.failed", "response": body}
    path = write(tmp_path, "r.jsonl", "\n".join(json.dumps(e) for e in (created, text, failed)))
    answer = 'answer == "Partial"' if not output else "answer is empty"
    assert check(path, f"errors == 1; {answer}") == ["pass"] * 2
    assert "the run ended in an error (server_error: Down)" in _notes(path)


def test_a_chat_stream_ending_in_an_error_chunk_is_a_run_that_failed(tmp_path: Path) -> None:
    def chunk(delta: dict[str, Any]) -> str:
        body = {"id": "c1", "object": "chat.completion.chunk", "model": "gpt-4o-mini"}
        return json.dumps({**body, "choices": [{"index": 0, "delta": delta}]})

    lines = [
        chunk({"content": "Let me"}),
        chunk({"tool_calls": [{"index": 0, "id": "t", "function": {"name": "g"}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"q": 1}'}}]}),
        json.dumps({"error": {"message": "The server had an error", "type": "server_error"}}),
    ]
    path = write(tmp_path, "c.sse", "".join(f"data: {line}\n\n" for line in lines))
    assert check(path, 'errors == 1; answer == "Let me"; tool g args $.q == 1') == ["pass"] * 3
    assert "the run ended in an error (server_error: The server had an error)" in _notes(path)
    # arguments the error cut: unknown, so not even a negated test of them passes
    lines[2] = chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"q": "Par'}}]})
    cut = write(tmp_path, "cut.sse", "".join(f"data: {line}\n\n" for line in lines))
    assert check(cut, 'tool g called; not tool g args $.q == "Paris"') == ["pass", "error"]


RESPONSES_EVENTS = [
    {"type": "response.created", "response": {"model": "gpt-4o-mini", "output": []}},
    {"type": "response.output_text.delta", "output_index": 0, "delta": "Hel"},
    {"type": "error", "code": "server_error", "message": "Down", "param": None},
]


@pytest.mark.parametrize(
    ("events", "fmt"),
    [
        (
            [_start({"input_tokens": 9, "output_tokens": 1}), *_text(0, "Hel"), ANTHROPIC_ERROR],
            "anthropic",
        ),
        (RESPONSES_EVENTS, "openai"),
    ],
)
def test_a_stream_saved_as_jsonl_ending_in_an_error_event_is_the_providers(
    tmp_path: Path, events: list[dict[str, Any]], fmt: str
) -> None:
    """As its SSE is: not a traceplay JSONL of events whose one known type is `error`
    (every other event skipped, every fact 0)."""
    path = write(tmp_path, "e.jsonl", "\n".join(json.dumps(e) for e in events) + "\n")
    assert load_run(path).format == fmt
    assert check(path, 'errors == 1; answer == "Hel"; steps == 1') == ["pass"] * 3


def test_an_error_body_alone_is_still_no_run(tmp_path: Path) -> None:
    with pytest.raises(RunError, match="an error body"):
        load_run(write(tmp_path, "e.jsonl", json.dumps(ANTHROPIC_ERROR) + "\n"), "anthropic")


# --- max_tokens -------------------------------------------------------------------------------


def test_a_stream_stopped_at_max_tokens_in_a_tool_input_is_whole(tmp_path: Path) -> None:
    events = [
        _start({"input_tokens": 9, "output_tokens": 1}),
        *_tool(0, '{"path": "a.txt", "content": "lorem ips'),
        {"type": "content_block_stop", "index": 0},
        *_end("max_tokens", {"output_tokens": 4096}),
    ]
    path = write(tmp_path, "m.jsonl", "\n".join(json.dumps(e) for e in events))
    statements = 'output tokens == 4096; tool write_file called; tool write_file args $.path == "a"'
    assert check(path, statements) == ["pass", "pass", "error"]
    notes = _notes(path)
    assert "`write_file`'s input is cut, the model ran out of tokens in it" in notes
    assert "stopped at its token limit (stop_reason `max_tokens`)" in notes
    assert "re-record" not in notes


def _whole_then_cut(tmp_path: Path, stop: str = "max_tokens") -> Path:
    """A stream stopped at a limit (`stop`): a whole `write_file` call, then one cut off."""
    events = [
        _start({"input_tokens": 9, "output_tokens": 1}),
        *_tool(0, '{"path": "b.txt"}'),
        {"type": "content_block_stop", "index": 0},
        *_tool(1, '{"path": "a.txt", "content": "lorem ips'),
        *_end(stop, {"output_tokens": 4096}),
    ]
    return write(tmp_path, "m.jsonl", "\n".join(json.dumps(e) for e in events))


def test_a_stream_that_filled_the_context_window_in_a_call_has_it_cut(tmp_path: Path) -> None:
    """As at max_tokens: the stream is whole, the call's input unknown (it was the
    recording's error, 'the stream is cut in the middle of tool call')."""
    path = _whole_then_cut(tmp_path, "model_context_window_exceeded")
    statements = 'tool write_file called twice; not tool write_file args $.path == "a.txt"'
    assert check(path, statements) == ["pass", "error"]
    assert "the model's context window filled in it" in _notes(path)


@pytest.mark.parametrize(
    ("statement", "status"),
    [
        ("tool write_file called twice", "pass"),
        ('tool write_file args $.path == "b.txt"', "pass"),  # the whole call decides it
        ('every tool write_file args $.path == "a.txt"', "fail"),  # so too: call 1 fails
        # what only the cut call could decide: unknown, never a pass on its cut text
        ('not tool write_file args $.path == "a.txt"', "error"),
        ('tool write_file args $.path != "b.txt"', "error"),
        ("tool write_file args matches /a.txt/", "error"),
        ("every tool write_file args has path", "error"),
        ("not tool write_file args has content", "error"),
    ],
)
def test_a_cut_calls_arguments_decide_no_test(tmp_path: Path, statement: str, status: str) -> None:
    """A call whose arguments the run cut has none whole: a test that reads them is an
    error naming the cut (as a trace without content), unless a whole call decides it."""
    path = _whole_then_cut(tmp_path)
    for reference in ("1", ""):
        with mock.patch.dict(os.environ, {"EVALDSL_REFERENCE": reference}):
            verdict = evaldsl.compile(statement).check(load_run(path)).verdicts[0]
        assert verdict.status == status, verdict.message
    if status == "error":
        assert verdict.message.endswith(
            "is unknown: 1 of its 2 calls has no whole arguments (the last one's input is "
            "cut, the model ran out of tokens in it (stop_reason `max_tokens`))"
        )


def test_a_live_targets_run_keeps_its_cut_calls_unknown(tmp_path: Path) -> None:
    """A run target that returns the stream's `evaldsl.Run` (it comes back from the
    worker as JSON data): the cut call's arguments are still unknown, and why."""
    _whole_then_cut(tmp_path)
    (tmp_path / "agent.py").write_text(
        'import evaldsl\n\ndef agent():\n    return evaldsl.load_run("m.jsonl")\n',
        encoding="utf-8",
    )
    suite = tmp_path / "s.eval"
    suite.write_text(
        'case "c"\nrun agent:agent\nnot tool write_file args has content\n', encoding="utf-8"
    )
    env = {"PYTHONPATH": f"{ROOT}{os.pathsep}{tmp_path}"}
    done = run_evaldsl("run", "-v", str(suite), cwd=tmp_path, env=env)
    assert "the last one's input is cut, the model ran out of tokens" in done.stdout, (
        done.stdout + done.stderr
    )


def test_a_body_stopped_at_max_tokens_is_noted(tmp_path: Path) -> None:
    body = {
        "type": "message",
        "model": MODEL,
        "content": [{"type": "text", "text": "Once upon"}],
        "stop_reason": "max_tokens",
        "usage": {"input_tokens": 3, "output_tokens": 2},
    }
    path = write(tmp_path, "b.json", json.dumps(body))
    assert "its answer may be cut" in _notes(path)


def _chat_chunk(delta: dict[str, Any], reason: str | None = None) -> str:
    body = {"id": "c1", "object": "chat.completion.chunk", "model": "gpt-4o-mini"}
    choice = {"index": 0, "delta": delta, "finish_reason": reason}
    return "data: " + json.dumps({**body, "choices": [choice]}) + "\n\n"


def _chat_call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


@pytest.mark.parametrize("arguments", ['{"city": "Par', "", '{"city": "Paris"'])
@pytest.mark.parametrize("shape", ["stream", "body", "responses"])
def test_an_openai_response_cut_at_its_token_limit_has_its_cut_calls_unknown(
    tmp_path: Path, shape: str, arguments: str
) -> None:
    """finish_reason `length` (a Responses body's status `incomplete`) inside a call's
    arguments: they are unknown, as Anthropic's max_tokens leaves them, not the cut text
    (a test of it found no city and `not … == "Paris"` passed) nor `{}` for a call begun
    and cut before any of them; a whole call before it still decides."""
    whole, cut = _chat_call("t1", "g", '{"city": "Rome"}'), _chat_call("t2", "g", arguments)
    if shape == "stream":
        text = "".join(
            _chat_chunk({"tool_calls": [{"index": n, **call}]})
            for n, call in enumerate((whole, cut))
        )
        path = write(tmp_path, "c.sse", text + _chat_chunk({}, "length") + "data: [DONE]\n\n")
    elif shape == "body":
        message = {"role": "assistant", "content": None, "tool_calls": [whole, cut]}
        choice = {"index": 0, "message": message, "finish_reason": "length"}
        body = {"object": "chat.completion", "model": "gpt-4o-mini", "choices": [choice]}
        path = write(tmp_path, "c.json", json.dumps(body))
    else:
        output = [
            {"type": "function_call", "call_id": c["id"], "name": "g", "arguments": a}
            for c, a in ((whole, whole["function"]["arguments"]), (cut, arguments))
        ]
        body = {
            "object": "response",
            "model": "gpt-4o-mini",
            "status": "incomplete",
            "incomplete_details": {"reason": "max_output_tokens"},
            "output": output,
        }
        path = write(tmp_path, "r.json", json.dumps(body))
    statements = (
        'tool g called twice; tool g args $.city == "Rome"; not tool g args $.city == "Paris";'
        " every tool g args has city"
    )
    assert check(path, statements) == ["pass", "pass", "error", "error"]
    assert "`g`'s arguments are cut" in _notes(path)


def test_a_call_whose_arguments_are_whole_when_the_response_is_cut_is_read(
    tmp_path: Path,
) -> None:
    """Only a call whose arguments are not whole JSON is cut: `""` in a response that
    finished is no arguments (`{}`), as before."""
    message = {"role": "assistant", "content": None, "tool_calls": [_chat_call("t", "g", "")]}
    choice = {"index": 0, "message": message, "finish_reason": "tool_calls"}
    body = {"object": "chat.completion", "model": "gpt-4o-mini", "choices": [choice]}
    path = write(tmp_path, "c.json", json.dumps(body))
    assert check(path, "not tool g args has city; tool g called") == ["pass", "pass"]


def _tool_use(call_id: str, path: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": "write_file", "input": {"path": path}}


@pytest.mark.parametrize(
    ("stop", "last_is_call"),
    [
        ("max_tokens", True),
        ("model_context_window_exceeded", True),
        ("max_tokens", False),  # (a text block after the calls: they were written whole)
        ("tool_use", True),  # (the model stopped to call: whole)
    ],
)
def test_a_bodys_last_tool_call_at_its_token_limit_has_unknown_input(
    tmp_path: Path, stop: str, last_is_call: bool
) -> None:
    """Anthropic's docs: a response cut at max_tokens may end in an incomplete tool use
    block; a body does not say whether it is whole, so its input is unknown (a test of it
    is an error unless a whole call decides it), never what the API parsed of it."""
    content: list[dict[str, Any]] = [_tool_use("t1", "b.txt"), _tool_use("t2", "a.txt")]
    if not last_is_call:
        content.append({"type": "text", "text": "Writing both."})
    body = {"type": "message", "model": MODEL, "content": content, "stop_reason": stop,
            "usage": {"input_tokens": 3, "output_tokens": 2}}  # fmt: skip
    path = write(tmp_path, "b.json", json.dumps(body))
    statements = (
        'tool write_file called twice; tool write_file args $.path == "b.txt";'
        ' not tool write_file args $.path == "c.txt"'
    )
    cut = stop != "tool_use" and last_is_call
    assert check(path, statements) == ["pass", "pass", "error" if cut else "pass"]
    assert ("`write_file`'s input is cut" in _notes(path)) is cut


def test_a_langsmith_wrap_anthropic_body_counts_its_cache_tokens(tmp_path: Path) -> None:
    """The same rule where LangSmith's `wrap_anthropic` logs the Messages body."""
    body = {"type": "message", "model": MODEL, "content": [{"type": "text", "text": "Done."}]}
    run = {
        "id": "r1",
        "name": "ChatAnthropic",
        "run_type": "llm",
        "start_time": "2025-03-02T08:30:04.600000Z",
        "end_time": "2025-03-02T08:30:05.900000Z",
        "extra": {"invocation_params": {"model": MODEL}},
        "prompt_tokens": None,
        "completion_tokens": None,
        "inputs": {"messages": [{"role": "user", "content": "Go"}]},
        "outputs": {**body, "usage": CACHED},
    }
    path = write(tmp_path, "ls.json", json.dumps([run]))
    assert load_run(path).format == "langsmith"
    assert check(path, f"input tokens == 100100; {CACHED_COST}") == ["pass"] * 3


def _span(provider: str, cache_read: int, model: str = MODEL) -> dict[str, Any]:
    attributes = [
        ("gen_ai.operation.name", "chat"),
        ("gen_ai.provider.name", provider),
        ("gen_ai.request.model", model),
        ("gen_ai.usage.input_tokens", 100100),  # counting the cache's (the semconv's rule)
        ("gen_ai.usage.output_tokens", 50),
        ("gen_ai.usage.cache_creation.input_tokens", 20000),
        ("gen_ai.usage.cache_read.input_tokens", cache_read),
    ]
    return {"spanId": "a", "name": "chat", "attributes": [attr(k, v) for k, v in attributes]}


def test_an_anthropic_otel_spans_cache_tokens_are_priced_at_their_rates(tmp_path: Path) -> None:
    path = write(tmp_path, "t.json", otlp([_span("anthropic", 80000)]))
    assert check(path, f"input tokens == 100100; {CACHED_COST}") == ["pass"] * 3
    # another provider's cache is not priced at Anthropic's rates: OpenAI's reads cost the
    # model's cached-input price (gpt-4o-mini: 20,100 input at $0.15 a million, 80,000
    # cached at $0.075, 50 output at $0.60), and a model with none has no cost
    other = write(tmp_path, "o.json", otlp([_span("openai", 80000, "gpt-4o-mini")]))
    assert check(other, "cost > $0.009044; cost < $0.009046") == ["pass"] * 2
    unpriced = write(tmp_path, "u.json", otlp([_span("openai", 80000)]))
    assert check(unpriced, "cost > $0; tokens == 100150") == ["error", "pass"]
    # counts beyond the input tokens, which count them: the input cannot be known
    beyond = write(tmp_path, "b.json", otlp([_span("anthropic", 90000)]))
    with pytest.raises(RunError, match="more than its input tokens"):
        load_run(beyond)
