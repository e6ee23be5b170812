"""The OpenAI reader's edge cases (hand-made inputs, written here): a refusal is the answer
of a message with no other text, in every shape that carries one; Chat custom tool calls;
Azure's content-filter chunks; one rule for tool-call arguments in bodies and streams;
the note on a response stopped at its token limit.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

import evaldsl
from evaldsl.runs import RunError, load_run
from evaldsl.runs.summary import render_text, summarize
from tests.calltools import calls_made
from tests.clitools import ROOT, run_evaldsl

REFUSAL_NOTE = "answer: the model's refusal"
LENGTH_NOTE = "finish_reason `length`"


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def body(message: dict[str, Any], finish: str = "stop") -> str:
    """A Chat Completions body of one choice with `message`."""
    choice = {"index": 0, "message": {"role": "assistant", **message}, "finish_reason": finish}
    return json.dumps(
        {"id": "c", "object": "chat.completion", "model": "gpt-4o-mini", "choices": [choice]}
    )


def chunks(*deltas: dict[str, Any], finish: str | None = "stop") -> str:
    """A JSONL stream of one chunk per delta; the last carries `finish` (None: none)."""
    lines = []
    for n, delta in enumerate(deltas):
        last = n == len(deltas) - 1
        choice = {"index": 0, "delta": delta, "finish_reason": finish if last else None}
        lines.append(
            json.dumps({"id": "s", "object": "chat.completion.chunk", "choices": [choice]})
        )
    return "\n".join(lines) + "\n"


def notes(path: Path) -> tuple[str, ...]:
    return summarize(path)[0].notes


def statuses(path: Path, text: str) -> list[str]:
    return evaldsl.compile(text).check(load_run(path)).statuses


# --- refusals --------------------------------------------------------------------------------


def test_a_body_refusal_is_the_answer_of_a_message_without_text(tmp_path: Path) -> None:
    path = write(tmp_path, "r.json", body({"content": None, "refusal": "I'm sorry, no."}))
    assert statuses(path, 'answer == "I\'m sorry, no."; not answer is empty') == ["pass", "pass"]
    assert any(REFUSAL_NOTE in n for n in notes(path))


def test_a_refusal_beside_text_is_counted_skipped_and_text_stays_the_answer(
    tmp_path: Path,
) -> None:
    path = write(tmp_path, "r.json", body({"content": "Hi.", "refusal": "no"}))
    assert statuses(path, 'answer == "Hi."') == ["pass"]
    summary = summarize(path)[0]
    assert summary.skipped == {"refusals beside answer text": 1}
    assert not any(REFUSAL_NOTE in n for n in summary.notes)


def test_a_message_without_a_refusal_makes_no_generator_to_join_one(tmp_path: Path) -> None:
    """Most bodies say `"refusal": null` and hold no refusal part: their refusal is ""
    without a generator made to join its two texts (one a body before)."""
    from evaldsl.runs import openai

    path = write(tmp_path, "r.jsonl", "\n".join([body({"content": "Hi.", "refusal": None})] * 3))
    run, made = calls_made(lambda: load_run(path), openai)
    assert [e["output"] for e in run.events or () if e["type"] == "llm.response"] == ["Hi."] * 3
    assert made.count("message_refusal") == 3
    assert "<genexpr>" not in made


def test_a_refusal_that_is_not_text_is_an_error_naming_its_field(tmp_path: Path) -> None:
    with pytest.raises(RunError, match=r"`choices\[0\]\.message\.refusal` is a number"):
        load_run(write(tmp_path, "r.json", body({"content": None, "refusal": 5})))


def test_a_streamed_refusal_is_the_answer(tmp_path: Path) -> None:
    text = chunks(
        {"role": "assistant", "content": None, "refusal": ""},
        {"refusal": "I can't "},
        {"refusal": "help."},
    )
    path = write(tmp_path, "s.jsonl", text)
    assert statuses(path, 'answer == "I can\'t help."') == ["pass"]
    assert any(REFUSAL_NOTE in n for n in notes(path))


def test_a_refusal_part_of_a_transcript_is_an_assistant_answer(tmp_path: Path) -> None:
    messages = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": [{"type": "refusal", "refusal": "No can do."}]},
    ]
    path = write(tmp_path, "t.json", json.dumps({"messages": messages}))
    assert statuses(path, 'answer == "No can do."') == ["pass"]
    assert any(REFUSAL_NOTE in n for n in notes(path))


def test_a_responses_refusal_part_is_the_answer(tmp_path: Path) -> None:
    content = [{"type": "refusal", "refusal": "I can't help with that."}]
    response = {
        "id": "resp_1",
        "object": "response",
        "status": "completed",
        "output": [{"type": "message", "role": "assistant", "content": content}],
    }
    path = write(tmp_path, "r.json", json.dumps(response))
    assert statuses(path, 'answer == "I can\'t help with that."') == ["pass"]
    summary = summarize(path)[0]
    assert summary.skipped == {}
    assert any(REFUSAL_NOTE in n for n in summary.notes)


def test_a_cassette_response_refusal_is_the_answer(tmp_path: Path) -> None:
    output = {"choices": [{"message": {"content": None, "refusal": "I can't do that"}}]}
    lines = [
        {"cassette": "traceplay", "version": 1},
        {"id": "m1", "seq": 0, "type": "llm.request", "model": "gpt-4o"},
        {"id": "m2", "seq": 1, "type": "llm.response", "requestId": "m1", "output": output},
    ]
    path = write(tmp_path, "c.jsonl", "".join(json.dumps(x) + "\n" for x in lines))
    assert statuses(path, 'answer == "I can\'t do that"') == ["pass"]
    assert any(REFUSAL_NOTE in n for n in notes(path))


# --- custom tool calls -----------------------------------------------------------------------


def test_a_chat_custom_tool_call_is_a_call_of_its_input_text(tmp_path: Path) -> None:
    call = {"id": "call_1", "type": "custom", "custom": {"name": "code_exec", "input": "print(1)"}}
    path = write(tmp_path, "c.json", body({"content": None, "tool_calls": [call]}, "tool_calls"))
    assert statuses(path, 'tool code_exec called once; tool code_exec args == "print(1)"') == [
        "pass",
        "pass",
    ]


def test_a_custom_call_without_a_name_is_an_error_naming_its_field(tmp_path: Path) -> None:
    call = {"id": "call_1", "type": "custom", "custom": {"input": "x"}}
    path = write(tmp_path, "c.json", body({"content": None, "tool_calls": [call]}))
    with pytest.raises(RunError, match=r"`choices\[0\]\.message\.tool_calls\[0\]\.custom\.name`"):
        load_run(path)


def test_a_call_without_its_function_is_an_error_naming_its_field(tmp_path: Path) -> None:
    call = {"id": "call_1", "type": "function"}
    path = write(tmp_path, "c.json", body({"content": None, "tool_calls": [call]}))
    with pytest.raises(RunError, match=r"`choices\[0\]\.message\.tool_calls\[0\]\.function` is"):
        load_run(path)


# --- Azure OpenAI ----------------------------------------------------------------------------

AZURE_FILTER = {
    "choices": [],
    "created": 0,
    "id": "",
    "model": "",
    "object": "",
    "prompt_filter_results": [{"prompt_index": 0, "content_filter_results": {}}],
}


def test_an_azure_stream_skips_its_content_filter_chunk(tmp_path: Path) -> None:
    lines = [json.dumps(AZURE_FILTER)]
    for delta, finish in (({"content": "Hello"}, None), ({}, "stop")):
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        choice["content_filter_results"] = {"hate": {"filtered": False}}
        chunk = {"id": "c1", "object": "chat.completion.chunk", "choices": [choice]}
        lines.append(json.dumps(chunk))
    text = "".join(f"data: {line}\n\n" for line in lines) + "data: [DONE]\n\n"
    path = write(tmp_path, "azure.sse", text)
    assert statuses(path, 'answer == "Hello"') == ["pass"]
    assert summarize(path)[0].skipped == {
        "Azure content-filter chunks (`prompt_filter_results`)": 1
    }


# --- arguments -------------------------------------------------------------------------------


def _call(arguments: str) -> dict[str, Any]:
    return {"id": "call_1", "type": "function", "function": {"name": "f", "arguments": arguments}}


def _delta(arguments: str) -> dict[str, Any]:
    return {
        "tool_calls": [
            {"index": 0, "id": "call_1", "function": {"name": "f", "arguments": arguments}}
        ]
    }


@pytest.mark.parametrize("arguments", ["", "  "])
def test_empty_arguments_are_no_arguments_in_bodies_and_streams(
    tmp_path: Path, arguments: str
) -> None:
    whole = write(tmp_path, "b.json", body({"content": None, "tool_calls": [_call(arguments)]}))
    streamed = write(tmp_path, "s.jsonl", chunks(_delta(arguments), finish="tool_calls"))
    for path in (whole, streamed):
        assert statuses(path, "tool f args == {}") == ["pass"], path.name


def test_arguments_not_json_are_text_with_a_note_in_bodies_and_streams(tmp_path: Path) -> None:
    whole = write(tmp_path, "b.json", body({"content": None, "tool_calls": [_call('{"a": ')]}))
    streamed = write(tmp_path, "s.jsonl", chunks(_delta('{"a": '), finish="tool_calls"))
    for path in (whole, streamed):
        assert statuses(path, 'tool f args == "{\\"a\\": "') == ["pass"], path.name
        assert "arguments of call f (call_1) are not JSON: read as text" in notes(path)


def test_a_stream_cut_in_the_arguments_stays_an_error(tmp_path: Path) -> None:
    path = write(tmp_path, "s.jsonl", chunks(_delta('{"a": '), finish=None))
    with pytest.raises(RunError, match="cut in the middle of tool call #1"):
        load_run(path)


def _whole_call(call_id: str, name: str, arguments: str, **index: int) -> dict[str, Any]:
    """A streamed tool call given whole in one delta, as OpenAI-compatible servers send
    them: `index` as given (Ollama: always 0; Gemini, Mistral, Ollama before 0.4.7: none)."""
    function = {"name": name, "arguments": arguments}
    return {"tool_calls": [{**index, "id": call_id, "type": "function", "function": function}]}


@pytest.mark.parametrize("index", [{"index": 0}, {}])
def test_streamed_calls_of_one_index_or_none_are_two_calls_by_their_ids(
    tmp_path: Path, index: dict[str, Any]
) -> None:
    """Ollama numbers every streamed call `index` 0 (ollama/ollama#15457) and others give
    none (ollama/ollama#7881, Gemini's OpenAI compatibility): two ids are two calls, never
    one call of the second tool with both arguments joined (the first call lost)."""
    deltas = (
        _whole_call("call_a", "get_weather", '{"city": "Paris"}', **index),
        _whole_call("call_b", "get_time", '{"tz": "CET"}', **index),
    )
    path = write(tmp_path, "s.jsonl", chunks(*deltas, finish="tool_calls"))
    program = (
        "tool calls == 2; tool get_weather called once; "
        'tool get_weather args $.city == "Paris"; tool get_time args $.tz == "CET"'
    )
    assert statuses(path, program) == ["pass"] * 4
    assert not notes(path)


def test_streamed_deltas_without_an_index_continue_the_call_before_them(tmp_path: Path) -> None:
    """A delta with no `index` and no new id is the rest of the call before it (a server
    that leaves the index out streams one call at a time); the same id again, too."""
    first = {"id": "call_a", "function": {"name": "f", "arguments": '{"a"'}}
    deltas = [
        {"tool_calls": [first]},
        {"tool_calls": [{"function": {"arguments": ": 1"}}]},
        {"tool_calls": [{"id": "call_a", "function": {"arguments": "}"}}]},
        _whole_call("call_b", "g", "{}"),
    ]
    path = write(tmp_path, "s.jsonl", chunks(*deltas, finish="tool_calls"))
    calls = [e for e in load_run(path).events or () if e["type"] == "tool.call"]
    assert [(c["name"], c["arguments"], c["callId"]) for c in calls] == [
        ("f", {"a": 1}, "call_a"),
        ("g", {}, "call_b"),
    ]


def test_a_streamed_legacy_function_call_is_a_call(tmp_path: Path) -> None:
    """The deprecated `function_call` streams as `delta.function_call` pieces (Chat
    Completions API, `functions` requests, gpt-3.5-turbo-0613 and later): one call,
    never none (`no tool get_weather` passed on it)."""
    deltas = (
        {
            "role": "assistant",
            "content": None,
            "function_call": {"name": "get_weather", "arguments": ""},
        },
        {"function_call": {"arguments": '{"city":'}},
        {"function_call": {"arguments": '"Paris"}'}},
    )
    path = write(tmp_path, "s.jsonl", chunks(*deltas, finish="function_call"))
    program = (
        'tool get_weather called once; tool get_weather args $.city == "Paris"; no tool get_weather'
    )
    assert statuses(path, program) == ["pass", "pass", "fail"]
    with pytest.raises(
        RunError,
        match=r"bad.jsonl:1:1: a streamed `function_call` is 5 \(a number\), not an object",
    ):
        load_run(write(tmp_path, "bad.jsonl", chunks({"function_call": 5})))


# --- truncation ------------------------------------------------------------------------------


def test_a_length_finish_is_noted_in_bodies_and_streams(tmp_path: Path) -> None:
    whole = write(tmp_path, "b.json", body({"content": "Today the wea"}, "length"))
    streamed = write(tmp_path, "s.jsonl", chunks({"content": "Today the wea"}, finish="length"))
    stopped = write(tmp_path, "ok.json", body({"content": "Done."}))
    for path in (whole, streamed):
        assert any(LENGTH_NOTE in n for n in notes(path)), path.name
    assert not any(LENGTH_NOTE in n for n in notes(stopped))


# --- a log of responses and the request between them -----------------------------------------

REAL = Path(__file__).resolve().parent / "fixtures" / "realworld"
REQUEST = REAL / "openai-chat-messages" / "request-with-tool-results.json"
TOOL_CALLS = REAL / "openai-chat-tools" / "response-toolcalls.json"
FINAL = REAL / "openai-chat-tools" / "response-final.json"


def jsonl(tmp_path: Path, *files: Path) -> Path:
    """The JSON of `files`, one per line, as a log of them."""
    lines = [json.dumps(json.loads(f.read_text(encoding="utf-8"))) for f in files]
    return write(tmp_path, "log.jsonl", "\n".join(lines) + "\n")


def test_a_transcript_echoing_calls_already_read_counts_them_once(tmp_path: Path) -> None:
    path = jsonl(tmp_path, TOOL_CALLS, REQUEST, FINAL)
    checks = "steps == 2; tool calls == 2; tool get_current_weather called 2 times; tokens == 250"
    assert statuses(path, checks) == ["pass"] * 4
    summary = summarize(path)[0]
    assert summary.results == 2
    assert summary.skipped == {"assistant messages echoing a response read before": 1}
    assert not any("token usage" in n for n in summary.notes)  # every step records usage
    twice = jsonl(tmp_path, TOOL_CALLS, REQUEST, REQUEST, FINAL)  # (a result echoed too)
    assert statuses(twice, checks) == ["pass"] * 4
    assert summarize(twice)[0].skipped == {
        "assistant messages echoing a response read before": 2,
        "tool messages echoing a result read before": 2,
    }


def test_a_transcript_step_beside_metered_responses_says_what_tokens_count(
    tmp_path: Path,
) -> None:
    new_step = {
        "messages": [{"role": "system", "content": "s"}, {"role": "assistant", "content": "Hi"}]
    }
    metered = json.loads(FINAL.read_text(encoding="utf-8"))  # (it records its usage)
    path = write(tmp_path, "log.jsonl", json.dumps(metered) + "\n" + json.dumps(new_step))
    notes_ = notes(path)
    assert any("count only the responses that do" in n for n in notes_), notes_
    assert not any("are unknown" in n for n in notes_)
    alone = write(tmp_path, "t.json", json.dumps(new_step))
    assert any("`tokens` and `cost` are unknown" in n for n in notes(alone))


# --- the results of built-in tools -----------------------------------------------------------


def response(*output: dict[str, Any]) -> str:
    """A Responses API body with `output` and an answer."""
    answer = {"type": "message", "content": [{"type": "output_text", "text": "Done."}]}
    return json.dumps(
        {"id": "resp_1", "object": "response", "model": "gpt-4o", "output": [*output, answer]}
    )


def test_a_built_in_calls_recorded_results_are_its_result(tmp_path: Path) -> None:
    found = {"file_id": "f1", "filename": "policy.pdf", "score": 0.9, "text": "30 days."}
    sources = [{"type": "url", "url": "https://example.com/paris"}]
    path = write(
        tmp_path,
        "r.json",
        response(
            {"type": "file_search_call", "id": "fs", "queries": ["refunds"], "results": [found]},
            {
                "type": "web_search_call",
                "id": "ws",
                "action": {"type": "search", "query": "Paris", "sources": sources},
            },
            {"type": "code_interpreter_call", "id": "ci", "code": "1+1", "outputs": None},
            {"type": "image_generation_call", "id": "ig", "status": "failed", "result": None},
        ),
    )
    assert (
        statuses(
            path,
            'tool file_search result $[*].text contains "30 days"; '
            'tool file_search args $.queries[0] == "refunds"; '
            'tool web_search result $[0].url contains "paris"',
        )
        == ["pass"] * 3
    )
    # a call that failed without its result: an error result, not an unknown one
    events = list(load_run(path).events or ())
    (failed,) = [e for e in events if e["type"] == "tool.result" and e.get("isError")]
    assert failed["callId"] == "ig"


SHELL = {
    "type": "shell_call",
    "id": "sh_1",
    "call_id": "call_sh",
    "action": {"commands": ["ls -la"], "timeout_ms": 120000, "max_output_length": 4096},
    "status": "completed",
}
PATCH = {
    "type": "apply_patch_call",
    "id": "ap_1",
    "call_id": "call_ap",
    "operation": {"type": "update_file", "path": "/src/main.ts", "diff": "@@\n+ok\n"},
    "status": "completed",
}


def test_gpt_5_1_s_shell_and_apply_patch_calls_are_calls_answered_by_their_outputs(
    tmp_path: Path,
) -> None:
    """GPT-5.1's `shell` and `apply_patch` tools: the model's `shell_call` and
    `apply_patch_call` items, which the application runs, were skipped (`no tool shell`
    passed on a response that ran `ls -la`); they are calls of `shell` and `apply_patch`,
    their action or operation the arguments, answered by the `…_call_output` item the
    application sends back naming their `call_id`."""
    path = write(tmp_path, "r.json", response(SHELL, PATCH))
    said = (
        "no tool shell; tool shell called once; tool apply_patch called once; "
        'tool shell args $.action.commands[0] == "ls -la"; '
        'tool apply_patch args $.operation.path == "/src/main.ts"'
    )
    assert statuses(path, said) == ["fail", "pass", "pass", "pass", "pass"]
    # the next request sends the turn back with the outputs the application made
    shell_out = {
        "type": "shell_call_output",
        "call_id": "call_sh",
        "output": [{"stdout": "README.md", "stderr": "", "outcome": {"type": "exit"}}],
    }
    patch_out = {"type": "apply_patch_call_output", "call_id": "call_ap", "status": "completed"}
    request = {
        "model": "gpt-5.1",
        "input": [
            {"role": "user", "content": "tidy the repo"},
            SHELL,
            shell_out,
            PATCH,
            {**patch_out, "output": "Done: updated /src/main.ts"},
        ],
    }
    path = write(tmp_path, "req.json", json.dumps(request))
    said = (
        'tool shell result $[0].stdout == "README.md"; '
        'tool apply_patch result contains "updated"; tool calls == 2'
    )
    assert statuses(path, said) == ["pass"] * 3


@pytest.mark.parametrize(
    "item",
    [
        {"type": "file_search_call", "id": "fs", "queries": ["refunds"], "results": None},
        {"type": "web_search_call", "id": "ws", "action": {"type": "search", "query": "q"}},
        {"type": "code_interpreter_call", "id": "ws", "code": "1+1", "outputs": None},
    ],
)
def test_a_built_in_result_the_response_does_not_record_is_unknown(
    tmp_path: Path, item: dict[str, Any]
) -> None:
    """The API writes a built-in tool's result only when the request's `include` asks for
    it: one left out is unknown, so a negated result test must not pass on it."""
    path = write(tmp_path, "r.json", response(item))
    tool = item["type"].removesuffix("_call")
    run = load_run(path)
    results = evaldsl.compile(
        f'not tool {tool} result contains "rain"; tool {tool} result contains "rain"; '
        f"tool {tool} called once"
    ).check(run)
    assert results.statuses == ["error", "error", "pass"]
    assert "`include`" in results.verdicts[0].message
    assert any("1 built-in tool call records no result" in n for n in notes(path))


# --- audio replies ---------------------------------------------------------------------------

TRANSCRIPT_NOTE = "the transcript of the model's audio reply"


def test_an_audio_replys_transcript_is_the_answer_in_bodies_and_streams(tmp_path: Path) -> None:
    audio = {"id": "audio_1", "data": "UklGRg==", "transcript": "Yes, golden retrievers."}
    whole = write(tmp_path, "a.json", body({"content": None, "refusal": None, "audio": audio}))
    streamed = write(
        tmp_path,
        "a.jsonl",
        chunks(
            {"role": "assistant", "content": None},
            {"audio": {"id": "audio_1", "transcript": "Yes, golden "}},
            {"audio": {"data": "UklGRg==", "transcript": "retrievers."}},
        ),
    )
    for path in (whole, streamed):
        assert statuses(path, 'answer == "Yes, golden retrievers."; not answer is empty') == [
            "pass",
            "pass",
        ]
        assert any(TRANSCRIPT_NOTE in n for n in notes(path))


def test_a_transcript_beside_text_is_counted_skipped_and_text_stays_the_answer(
    tmp_path: Path,
) -> None:
    path = write(tmp_path, "a.json", body({"content": "Hi.", "audio": {"transcript": "Hello."}}))
    assert statuses(path, 'answer == "Hi."') == ["pass"]
    assert summarize(path)[0].skipped == {"audio transcripts beside answer text": 1}


def test_an_audio_transcript_that_is_not_text_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(RunError, match=r"`audio`.s `transcript` is 5 \(a number\), not text"):
        load_run(write(tmp_path, "a.json", body({"content": None, "audio": {"transcript": 5}})))


# --- the content filter ----------------------------------------------------------------------

FILTER_NOTE = "the content filter stopped a response"


def test_an_answer_the_content_filter_removed_is_unknown(tmp_path: Path) -> None:
    """Its content is empty: a negated answer test must not pass on what the filter
    removed; the tokens are still read."""
    whole = write(tmp_path, "f.json", body({"content": None}, finish="content_filter"))
    streamed = write(
        tmp_path, "f.jsonl", chunks({"role": "assistant"}, {}, finish="content_filter")
    )
    incomplete = {"status": "incomplete", "incomplete_details": {"reason": "content_filter"}}
    responses = write(
        tmp_path,
        "r.json",
        json.dumps({"id": "resp_1", "object": "response", "output": [], **incomplete}),
    )
    for path in (whole, streamed, responses):
        run = load_run(path)
        results = evaldsl.compile('not answer contains "x"; answer is empty; steps == 1').check(run)
        assert results.statuses == ["error", "error", "pass"], path
        assert "the content filter removed it" in results.verdicts[0].message
        assert any(FILTER_NOTE in n for n in notes(path))
        assert "unknown: the content filter removed it" in render_text(summarize(path)[0])


def test_an_answer_the_content_filter_stopped_is_the_text_it_let_through(tmp_path: Path) -> None:
    path = write(tmp_path, "f.json", body({"content": "Here is"}, finish="content_filter"))
    assert statuses(path, 'answer == "Here is"') == ["pass"]
    assert any(FILTER_NOTE in n for n in notes(path))


def test_a_live_target_s_run_keeps_why_its_answer_is_unknown(tmp_path: Path) -> None:
    """A run target that returns the file's `evaldsl.Run` (it comes back from the worker
    as JSON data): the error still says the content filter removed the answer."""
    write(tmp_path, "f.json", body({"content": None}, finish="content_filter"))
    write(
        tmp_path,
        "agent.py",
        'import evaldsl\n\ndef answer():\n    return evaldsl.load_run("f.json")\n',
    )
    suite = write(tmp_path, "s.eval", 'case "c"\nrun agent:answer\nanswer is empty\n')
    done = run_evaldsl(
        "run", "-v", str(suite), cwd=tmp_path, env={"PYTHONPATH": f"{ROOT}{os.pathsep}{tmp_path}"}
    )
    assert "cannot be read: the content filter removed it" in done.stdout, done.stdout


def test_a_cassette_responses_audio_transcript_is_the_answer(tmp_path: Path) -> None:
    message = {"content": None, "refusal": None, "audio": {"transcript": "Yes, they are."}}
    lines = [
        {"cassette": "traceplay", "version": 1},
        {"id": "m1", "seq": 0, "type": "llm.request", "model": "gpt-4o-audio-preview"},
        {
            "id": "m2",
            "seq": 1,
            "type": "llm.response",
            "requestId": "m1",
            "output": {"choices": [{"message": message}]},
        },
    ]
    path = write(tmp_path, "c.jsonl", "".join(json.dumps(x) + "\n" for x in lines))
    assert statuses(path, 'answer == "Yes, they are."') == ["pass"]
    assert any(TRANSCRIPT_NOTE in n for n in notes(path))


# --- Responses API requests ------------------------------------------------------------------

CALL = {"type": "function_call", "call_id": "c1", "name": "get_weather",
        "arguments": '{"city": "Paris"}'}  # fmt: skip
OUTPUT = {"type": "function_call_output", "call_id": "c1", "output": "18 C"}
INPUT = [
    {"role": "developer", "content": "Be brief."},
    {"role": "user", "content": "Weather in Paris?"},
    {"type": "reasoning", "id": "rs_1", "summary": []},
    CALL,
    OUTPUT,
    {"role": "assistant", "content": "It is 18 C."},
    {"role": "user", "content": [{"type": "input_text", "text": "Thanks"}]},
    {"type": "message", "role": "assistant",
     "content": [{"type": "output_text", "text": "You're welcome."}]},
]  # fmt: skip


def test_a_responses_request_is_read_as_a_transcript(tmp_path: Path) -> None:
    """A Responses API request's `input` (the conversation the application sent, as
    agents without previous_response_id send it): it was no OpenAI body at all."""
    path = write(tmp_path, "req.json", json.dumps({"model": "gpt-4.1", "input": INPUT}))
    checks = (
        'steps == 3; tool get_weather called once; tool get_weather args $.city == "Paris";'
        ' tool get_weather result contains "18"; answer[2] == "It is 18 C.";'
        ' answer == "You\'re welcome."'
    )
    assert statuses(path, checks) == ["pass"] * 6
    summary = summarize(path)[0]
    assert summary.format == "openai"
    assert any("`tokens` and `cost` are unknown" in n for n in summary.notes)
    assert statuses(path, "tokens > 0") == ["error"]  # (a request records no usage)


def test_a_log_of_responses_and_the_requests_between_counts_each_call_once(
    tmp_path: Path,
) -> None:
    first = {"object": "response", "id": "resp_1", "model": "gpt-4.1", "output": [CALL],
             "usage": {"input_tokens": 10, "output_tokens": 5}}  # fmt: skip
    request = {"model": "gpt-4.1", "input": [INPUT[1], CALL, OUTPUT]}
    answer = {"type": "message", "content": [{"type": "output_text", "text": "18 C."}]}
    last = {**first, "id": "resp_2", "output": [answer]}
    path = write(tmp_path, "log.jsonl", "\n".join(map(json.dumps, (first, request, last))))
    checks = 'steps == 2; tool calls == 1; tool get_weather result contains "18"; tokens == 30'
    assert statuses(path, checks) == ["pass"] * 4
    assert summarize(path)[0].skipped == {"assistant messages echoing a response read before": 1}


def test_a_responses_request_parses_each_calls_arguments_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A request's `function_call` items are read to tell an echoed turn and again as the
    turn's calls: their arguments' text is parsed once, the value read both times (a turn
    with an echoed call and a new one, and arguments that are not JSON, noted)."""
    from evaldsl.runs import openai

    first = {"object": "response", "id": "resp_1", "model": "gpt-4.1", "output": [CALL]}
    oslo = {**CALL, "call_id": "c2", "arguments": '{"city": "Oslo"}'}
    cut = {**CALL, "call_id": "c3", "arguments": '{"city": "Ber'}
    turns = [INPUT[1], CALL, oslo, OUTPUT, {**OUTPUT, "call_id": "c2"}, INPUT[1], cut]
    request = {"model": "gpt-4.1", "input": turns}
    path = write(tmp_path, "log.jsonl", "\n".join(map(json.dumps, (first, request))))
    parsed: list[Any] = []
    loads = openai.mended_loads
    monkeypatch.setattr(openai, "mended_loads", lambda text: parsed.append(text) or loads(text))
    run = load_run(path)
    calls = [e for e in run.events or () if e["type"] == "tool.call"]
    assert [c["arguments"] for c in calls] == [{"city": "Paris"}, {"city": "Oslo"}, '{"city": "Ber']
    assert "arguments of call get_weather (c3) are not JSON: read as text" in run.read.notes
    assert sorted(parsed) == sorted(c["arguments"] for c in (CALL, CALL, oslo, cut))


def test_a_responses_request_checks_each_turn_item_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A request's turn items (reasoning, calls, assistant messages as parts) are checked
    where they are, naming their place in the request, and read as a response's `output`
    without being checked again; a bad one is still the error naming it."""
    from evaldsl.runs import openai

    checked: list[tuple[str | int, ...]] = []
    check = openai.check_output_item
    monkeypatch.setattr(openai, "check_output_item", lambda *a: checked.append(a[3]) or check(*a))
    path = write(tmp_path, "req.json", json.dumps({"model": "gpt-4.1", "input": INPUT}))
    run = load_run(path)
    assert [e["type"] for e in run.events or ()].count("llm.response") == 3
    assert checked == [("input", 2), ("input", 3), ("input", 7)]
    bad = {"model": "gpt-4.1", "input": [INPUT[1], {**INPUT[7], "content": 5}]}
    with pytest.raises(RunError, match="content"):
        load_run(write(tmp_path, "bad.json", json.dumps(bad)))
    assert checked[-1] == ("input", 1)


def test_a_responses_request_echoing_no_call_keeps_its_turns_as_they_are(
    tmp_path: Path,
) -> None:
    """A request whose turns echo no call read before (most) reads each turn's items and
    arguments as they are: one list a turn (its calls), none made to leave out echoes."""
    from evaldsl.runs import openai

    path = write(tmp_path, "req.json", json.dumps({"model": "gpt-4.1", "input": INPUT}))
    run, made = calls_made(lambda: load_run(path), openai)
    calls = [e for e in run.events or () if e["type"] == "tool.call"]
    assert [(c["name"], c["arguments"]) for c in calls] == [("get_weather", {"city": "Paris"})]
    assert made.count("_response") == 3
    assert made.count("<listcomp>") == 3


def test_a_streamed_calls_slot_is_made_at_its_first_delta_only(tmp_path: Path) -> None:
    """Each streamed tool call gathers its deltas in one slot, made at its first delta:
    none is made at each later delta to be dropped (`setdefault`'s default, made before
    the call, was a new dict and list at every delta)."""
    from evaldsl.runs import openai

    call = {"index": 0, "id": "c1", "function": {"name": "get_weather", "arguments": ""}}
    pieces = ['{"city"', ': "Par', 'is"}']
    deltas = [{"tool_calls": [call]}]
    deltas += [{"tool_calls": [{"index": 0, "function": {"arguments": p}}]} for p in pieces]
    path = write(tmp_path, "s.jsonl", chunks(*deltas, finish="tool_calls"))
    run, asked = calls_made(lambda: load_run(path), openai, "c_call")
    (event,) = [e for e in run.events or () if e["type"] == "tool.call"]
    assert (event["name"], event["arguments"], event["callId"]) == (
        "get_weather",
        {"city": "Paris"},
        "c1",
    )
    assert asked.count("setdefault") == 0
    assert asked.count("append") >= len(pieces)  # (each piece gathered in the one slot)


def test_a_responses_request_item_that_cannot_be_read_is_an_error_naming_it(
    tmp_path: Path,
) -> None:
    bad = {"model": "gpt-4.1", "input": [INPUT[1], {**CALL, "name": 7}]}
    with pytest.raises(RunError, match="name"):
        load_run(write(tmp_path, "bad.json", json.dumps(bad)))
    # an item of an earlier response named by its id only: counted, never read as nothing
    reference = {"type": "item_reference", "id": "fc_1"}
    alone = write(tmp_path, "alone.json", json.dumps({"input": [INPUT[1], reference]}))
    with pytest.raises(RunError, match="has nothing evaldsl recognises"):
        load_run(alone)
    referenced = {"model": "gpt-4.1", "input": [*INPUT[:2], reference, INPUT[5]]}
    summary = summarize(write(tmp_path, "ref.json", json.dumps(referenced)))[0]
    assert summary.skipped == {"item references (items of an earlier response, not in the file)": 1}


# --- call outputs given as content ---------------------------------------------------------


@pytest.mark.parametrize("kind", ["function_call", "custom_tool_call"])
def test_a_call_output_given_as_content_is_its_text(tmp_path: Path, kind: str) -> None:
    """The Responses API takes a call's `output` as text or as content parts
    (`input_text`, `input_image`, `input_file`: openai-python 2.0's
    `ResponseFunctionToolCallOutputItem`), as a tool that returns text and a screenshot
    sends it: the result is the text of its `input_text` parts, not the list (whose
    `result contains` failed, and `not result contains` passed, on its text)."""
    call = {"type": kind, "id": "fc_1", "call_id": "call_1", "name": "bash", "status": "completed"}
    call |= {"arguments": '{"cmd": "ls"}'} if kind == "function_call" else {"input": "ls"}
    shot = {"type": "input_image", "image_url": "data:image/png;base64,iVBO"}
    output = [{"type": "input_text", "text": "a.txt"}, shot]
    request = {
        "model": "gpt-4.1",
        "input": [
            {"role": "user", "content": "ls"},
            call,
            {"type": f"{kind}_output", "call_id": "call_1", "output": output},
        ],
    }
    path = write(tmp_path, "request.json", json.dumps(request))
    said = 'tool bash result == "a.txt"; not tool bash result contains "b.txt"'
    assert statuses(path, said) == ["pass", "pass"]
    request["input"][2]["output"] = [shot]  # (no text: the parts as they are, never "")
    path = write(tmp_path, "request.json", json.dumps(request))
    assert statuses(path, 'tool bash result $[0].type == "input_image"') == ["pass"]
