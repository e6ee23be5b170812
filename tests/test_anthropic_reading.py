"""The Anthropic reader's edge cases (hand-made inputs in the API's shapes, written here): a
log of responses and the requests between them counts each call once, as OpenAI's does; a
server tool's result (web search) is its JSON value, its error an error result; a cited
reply split into text blocks is one text; an answer stopped before its end is noted, and a
turn paused before any text has no answer.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import evaldsl
from evaldsl.runs import load_run
from evaldsl.runs.summary import summarize
from tests.calltools import calls_made
from tests.test_formats import check, write

MODEL = "claude-sonnet-4-20250514"


def message(
    content: list[dict[str, Any]], usage: tuple[int, int] | None = (100, 20)
) -> dict[str, Any]:
    """A Messages response body."""
    body: dict[str, Any] = {"type": "message", "role": "assistant", "model": MODEL}
    body |= {"content": content, "stop_reason": "end_turn"}
    if usage is not None:
        body["usage"] = {"input_tokens": usage[0], "output_tokens": usage[1]}
    return body


def jsonl(tmp_path: Path, *values: dict[str, Any]) -> Path:
    return write(tmp_path, "log.jsonl", "\n".join(json.dumps(v) for v in values) + "\n")


# --- a log of responses and the requests between them ----------------------------------------

CALL = {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}
ASKED = message([{"type": "text", "text": "Let me check."}, CALL])
REQUEST = {
    "model": MODEL,
    "max_tokens": 1024,
    "messages": [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": ASKED["content"]},
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "18 C"}],
        },
    ],
}
ANSWERED = message([{"type": "text", "text": "It is 18 C in Paris."}], (150, 10))


ECHOED = "assistant messages echoing a response read before"


@pytest.mark.parametrize(
    ("log", "skipped"),
    [
        ((ASKED, REQUEST, ANSWERED), {ECHOED: 1}),
        # the request logged twice: its result, read once, is echoed too
        (
            (ASKED, REQUEST, REQUEST, ANSWERED),
            {ECHOED: 2, "tool results echoing a result read before": 1},
        ),
    ],
)
def test_a_transcript_echoing_calls_already_read_counts_them_once(
    tmp_path: Path, log: tuple[dict[str, Any], ...], skipped: dict[str, int]
) -> None:
    path = jsonl(tmp_path, *log)
    checks = 'steps == 2; tool get_weather called once; tool get_weather result == "18 C"'
    assert check(path, checks + "; tokens == 280") == ["pass"] * 4
    summary = summarize(path)[0]
    assert summary.skipped == skipped
    assert not any("token usage" in n for n in summary.notes)  # every step records usage


def test_a_transcript_step_beside_metered_responses_says_what_tokens_count(
    tmp_path: Path,
) -> None:
    new_step = {"system": "s", "messages": [{"role": "assistant", "content": "Hi"}]}
    notes = summarize(jsonl(tmp_path, ANSWERED, new_step))[0].notes
    assert any("1 assistant message of a request transcript records" in n for n in notes), notes
    assert not any("are unknown" in n for n in notes)
    alone = summarize(write(tmp_path, "t.json", json.dumps(new_step)))[0].notes
    assert any("`tokens` and `cost` are unknown" in n for n in alone)


# --- server tool results ---------------------------------------------------------------------

SEARCH = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"q": "p"}}
FOUND = [
    {
        "type": "web_search_result",
        "url": "https://weather.example/paris",
        "title": "Paris forecast",
        "encrypted_content": "Eqgf",
        "page_age": None,
    }
]
FAILED = {"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"}


def searched(content: Any) -> dict[str, Any]:
    """A body with a web search and its result block holding `content`."""
    result = {"type": "web_search_tool_result", "tool_use_id": "srvtoolu_1", "content": content}
    return message([SEARCH, result, {"type": "text", "text": "Paris is 18 C."}])


def results(path: Path) -> list[dict[str, Any]]:
    events = load_run(path).events
    assert events is not None
    return [e for e in events if e["type"] == "tool.result"]


def test_a_web_search_result_is_its_list_of_results(tmp_path: Path) -> None:
    """Data, read as its JSON value; no text parts in it, it was `""`."""
    path = write(tmp_path, "m.json", json.dumps(searched(FOUND)))
    checks = (
        'tool web_search result $[0].url == "https://weather.example/paris"; '
        'tool web_search result $[*].title contains "Paris"'
    )
    assert check(path, checks) == ["pass", "pass"]
    assert [r.get("isError") for r in results(path)] == [None]


def test_a_web_search_error_is_an_error_result(tmp_path: Path) -> None:
    path = write(tmp_path, "m.json", json.dumps(searched(FAILED)))
    assert check(path, 'tool web_search result $.error_code == "max_uses_exceeded"') == ["pass"]
    assert [r.get("isError") for r in results(path)] == [True]


# --- a cited reply ---------------------------------------------------------------------------

CITE = {"type": "web_search_result_location", "url": "https://w.example/p", "cited_text": "18 C"}
CITED = [
    {"type": "text", "text": "I'll search."},
    SEARCH,
    {"type": "text", "text": "According to the forecast, "},
    {"type": "text", "text": "Paris is 18 C", "citations": [CITE]},
    {"type": "text", "text": " today."},
    {"type": "text", "text": "Anything else?"},
]
CITED_ANSWER = "I'll search.\nAccording to the forecast, Paris is 18 C today.\nAnything else?"


def streamed(content: list[dict[str, Any]]) -> str:
    """`content` as Anthropic streams it (SSE), each text in a `text_delta` and each
    citation in a `citations_delta`."""
    start = {"model": MODEL, "content": [], "usage": {"input_tokens": 5, "output_tokens": 1}}
    events: list[dict[str, Any]] = [{"type": "message_start", "message": start}]
    for n, block in enumerate(content):
        deltas: list[dict[str, Any]] = []
        if block["type"] == "text":
            deltas = [
                {"type": "citations_delta", "citation": c} for c in block.get("citations", [])
            ]
            deltas.append({"type": "text_delta", "text": block["text"]})
            block = {"type": "text", "text": ""}
        events.append({"type": "content_block_start", "index": n, "content_block": block})
        events += [{"type": "content_block_delta", "index": n, "delta": d} for d in deltas]
        events.append({"type": "content_block_stop", "index": n})
    delta = {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {}}
    events += [delta, {"type": "message_stop"}]
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)


def test_a_cited_reply_split_into_blocks_is_one_text(tmp_path: Path) -> None:
    """A block next to a cited one joins it with nothing; other blocks with a newline."""
    body = write(tmp_path, "m.json", json.dumps(message(CITED)))
    stream = write(tmp_path, "s.sse", streamed(CITED))
    for path in (body, stream):
        assert check(path, f"answer == {json.dumps(CITED_ANSWER)}") == ["pass"], path.name
    uncited = [{**b, "citations": None} if b["type"] == "text" else b for b in CITED]
    alone = write(tmp_path, "u.json", json.dumps(message(uncited)))
    assert check(alone, f"answer == {json.dumps(CITED_ANSWER)}") == ["fail"]


# --- answers that are not whole ----------------------------------------------------------------


def stopped(reason: str, content: list[dict[str, Any]]) -> str:
    """The JSON text of a body that stopped for `reason`."""
    return json.dumps({**message(content), "stop_reason": reason})


@pytest.mark.parametrize(
    ("reason", "said"),
    [
        ("refusal", "stopped as the model declined to go on (stop_reason `refusal`)"),
        ("pause_turn", "a turn paused in a server tool's loop (stop_reason `pause_turn`)"),
        ("model_context_window_exceeded", "filled the model's context window"),
        ("max_tokens", "stopped at its token limit (stop_reason `max_tokens`)"),
    ],
)
def test_an_answer_stopped_before_its_end_is_noted(tmp_path: Path, reason: str, said: str) -> None:
    """The text written before is the answer, in bodies and streams, and `inspect` says
    what stopped it."""
    content = [{"type": "text", "text": "Here is how to"}]
    body = write(tmp_path, "m.json", stopped(reason, content))
    stream = write(tmp_path, "s.sse", streamed(content).replace("end_turn", reason))
    for path in (body, stream):
        assert check(path, 'answer == "Here is how to"') == ["pass"], path.name
        assert any(said in n for n in summarize(path)[0].notes), path.name
    plain = write(tmp_path, "e.json", stopped("end_turn", content))
    assert summarize(plain)[0].notes == ()


def test_a_turn_paused_before_any_text_has_no_answer(tmp_path: Path) -> None:
    """Its answer comes in the response that continues it: a test of it is an error
    verdict, never a test of "" (`not answer contains "sorry"` would pass on nothing)."""
    body = write(tmp_path, "m.json", stopped("pause_turn", [SEARCH]))
    stream = write(tmp_path, "s.sse", streamed([SEARCH]).replace("end_turn", "pause_turn"))
    for path in (body, stream):
        checks = 'not answer contains "sorry"; answer is empty; tool web_search called'
        assert check(path, checks) == ["error", "error", "pass"], path.name
        (verdict,) = evaldsl.compile("answer is empty").check(load_run(path)).verdicts
        assert "its turn paused (stop_reason `pause_turn`)" in verdict.message
    # the response that continues it gives the run's answer
    log = jsonl(tmp_path, {**message([SEARCH]), "stop_reason": "pause_turn"}, ANSWERED)
    assert check(log, 'answer == "It is 18 C in Paris."; answer[1] is empty') == ["pass", "error"]


def test_a_streamed_calls_input_is_parsed_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A `tool_use` block's `input_json_delta` pieces, joined, are parsed once: to know the
    input whole and as the call's arguments (a block without pieces keeps its own input;
    a call the run cut is unknown, its text parsed once too)."""
    from evaldsl.runs import providers

    def stream(reason: str, *pieces: str) -> str:
        start = {"model": MODEL, "content": [], "usage": {"input_tokens": 5, "output_tokens": 1}}
        given = {**CALL, "id": "toolu_2", "input": {"q": 1}}
        events: list[dict[str, Any]] = [
            {"type": "message_start", "message": start},
            {"type": "content_block_start", "index": 0, "content_block": {**CALL, "input": {}}},
            *(
                {"type": "content_block_delta", "index": 0, "delta": {"type": t, "partial_json": p}}
                for t, p in (("input_json_delta", p) for p in pieces)
            ),
            {"type": "content_block_stop", "index": 0},
            {"type": "content_block_start", "index": 1, "content_block": given},
            {"type": "content_block_stop", "index": 1},
            {"type": "message_delta", "delta": {"stop_reason": reason}, "usage": {}},
            {"type": "message_stop"},
        ]
        return "\n".join(map(json.dumps, events))

    parsed: list[str] = []
    loads = providers.mended_loads
    monkeypatch.setattr(providers, "mended_loads", lambda text: parsed.append(text) or loads(text))
    whole = load_run(write(tmp_path, "whole.jsonl", stream("tool_use", '{"city": ', '"Paris"}')))
    calls = [e["arguments"] for e in whole.events or () if e["type"] == "tool.call"]
    assert calls == [{"city": "Paris"}, {"q": 1}]
    assert parsed == ['{"city": "Paris"}', "{}"]
    parsed.clear()
    cut = load_run(write(tmp_path, "cut.jsonl", stream("max_tokens", '{"city": "Ber')))
    calls = [e.get("arguments", "unknown") for e in cut.events or () if e["type"] == "tool.call"]
    assert calls == ["unknown", {"q": 1}]
    assert parsed == ['{"city": "Ber', "{}"]


def test_a_messages_blocks_are_checked_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A message's content blocks pass `check_block` (the error naming a bad one's place)
    and are read without their type being checked again: no `kind_value` call per block,
    in a body, a stream and a request transcript alike."""
    from evaldsl.runs import anthropic

    kinds: list[Any] = []
    kind_value = anthropic.kind_value
    monkeypatch.setattr(anthropic, "kind_value", lambda v, *a: kinds.append(v) or kind_value(v, *a))
    run = load_run(jsonl(tmp_path, ASKED, ANSWERED))
    assert [e["type"] for e in run.events or ()].count("tool.call") == 1
    assert kinds == []
    load_run(write(tmp_path, "s.sse", streamed([{"type": "text", "text": "Hi."}, SEARCH])))
    assert kinds == ["text_delta"]  # (a delta's type, read once)
    load_run(write(tmp_path, "r.json", json.dumps(REQUEST)))
    assert all(k in ("user", "assistant") for k in kinds[1:])  # (each message's role)
    bad = message([{"type": "text", "text": "Hi."}, {"type": 5}])
    with pytest.raises(evaldsl.RunError, match=r"content\[1\]\.type"):
        load_run(write(tmp_path, "bad.json", json.dumps(bad)))


def test_a_streams_usage_is_gathered_without_a_generator(tmp_path: Path) -> None:
    """`message_start`'s and `message_delta`'s usage give each count its last value that
    is not null (cumulative counts), set one by one: no generator made for each."""
    from evaldsl.runs import anthropic

    start = {"model": MODEL, "content": [], "usage": {"input_tokens": 5, "output_tokens": 1}}
    usage = {"input_tokens": None, "output_tokens": 7, "cache_read_input_tokens": 3}
    events = [
        {"type": "message_start", "message": start},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": usage},
        {"type": "message_stop"},
    ]
    path = write(tmp_path, "s.jsonl", "\n".join(map(json.dumps, events)))
    run, made = calls_made(lambda: load_run(path), anthropic)
    (response,) = [e for e in run.events or () if e["type"] == "llm.response"]
    assert response["usage"] == {"promptTokens": 8, "completionTokens": 7}
    assert made.count("_usage") == 2
    assert "<genexpr>" not in made
