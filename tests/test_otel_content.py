"""What an OTel trace records of its messages: the GenAI details event, and content never
captured.

The current GenAI conventions put an inference's messages either on its span
(`gen_ai.input.messages`, `gen_ai.output.messages`) or on the span's
`gen_ai.client.inference.operation.details` event: both are read alike. Instrumentations
capture message content only when asked; a span that records none has an unknown answer
(and a tool span without arguments unknown arguments), an error verdict, never "" or {}.
Each trace is read by the full reader and the typed decoder (document and JSONL), which
must agree.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

import evaldsl
from evaldsl.runs import detect, otlpdecode, spantree
from evaldsl.runs.detect import load_run
from evaldsl.runs.model import Run, RunError
from evaldsl.runs.otel import Span
from evaldsl.runs.summary import render_text, summarize
from tests.clitools import ROOT, run_evaldsl

TRACE_ID = "0af7651916cd43dd8448eb211c80319c"


def _text(value: str) -> dict[str, Any]:
    return {"stringValue": value}


def _attrs(**values: Any) -> list[dict[str, Any]]:
    """OTLP attributes from keyword arguments (`__` for `.`), text or whole numbers."""
    out = []
    for key, value in values.items():
        v = {"intValue": str(value)} if isinstance(value, int) else _text(value)
        out.append({"key": key.replace("__", "."), "value": v})
    return out


def _span(n: int, name: str, attributes: list[dict[str, Any]], **more: Any) -> dict[str, Any]:
    start = 1_730_000_000_000_000_000 + n * 1_000_000_000
    return {
        "traceId": TRACE_ID,
        "spanId": f"{n:016x}",
        "name": name,
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + 500_000_000),
        "attributes": attributes,
        **more,
    }


def _chat(n: int, *, events: list[dict[str, Any]] | None = None, **extra: Any) -> dict[str, Any]:
    attributes = _attrs(
        gen_ai__operation__name="chat",
        gen_ai__request__model="gpt-4o",
        gen_ai__usage__input_tokens=50,
        gen_ai__usage__output_tokens=20,
        **extra,
    )
    return _span(n, "chat gpt-4o", attributes, **({"events": events} if events else {}))


def _tool(n: int, **extra: Any) -> dict[str, Any]:
    attributes = _attrs(
        gen_ai__operation__name="execute_tool",
        gen_ai__tool__name="get_weather",
        gen_ai__tool__call__id="call_1",
        **extra,
    )
    return _span(n, "execute_tool get_weather", attributes)


def _document(*spans: dict[str, Any]) -> dict[str, Any]:
    return {
        "resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {}, "spans": list(spans)}]}]
    }


def _read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, doc: dict[str, Any]) -> Run:
    """`doc` read by the full reader and by the typed decoder, as a document and as JSONL
    (which must all agree)."""
    path = tmp_path / "trace.otlp.json"
    path.write_text(json.dumps(doc, indent=1), encoding="utf-8")
    lines = tmp_path / "trace.otlp.jsonl"
    lines.write_text(json.dumps(doc) + "\n", encoding="utf-8")
    monkeypatch.setattr(detect, "OTEL_TYPED_FROM", 0)
    typed = otlpdecode.read_otel_document(str(path), path.read_bytes(), lambda *_: "test")
    typed_lines = otlpdecode.read_otel_lines(str(lines), lambda _: "test", 1)
    assert typed is not None and typed_lines is not None, "the typed decoder gave the file up"
    with monkeypatch.context() as m:
        m.setenv("EVALDSL_REFERENCE", "1")
        full = load_run(path)
    assert full.events == typed.events == typed_lines.events
    assert full.read is not None and typed.read is not None and typed_lines.read is not None
    assert full.read.notes == typed.read.notes == typed_lines.read.notes
    assert full.unrecorded == typed.unrecorded == typed_lines.unrecorded
    return full


def _of(run: Run, kind: str) -> list[dict[str, Any]]:
    assert isinstance(run.events, list)
    return [e for e in run.events if e["type"] == kind]


OUTPUT = [
    {
        "role": "assistant",
        "parts": [
            {
                "type": "tool_call",
                "id": "call_1",
                "name": "get_weather",
                "arguments": {"city": "Paris"},
            },
            {"type": "text", "content": "Checking the weather."},
        ],
        "finish_reason": "tool_call",
    }
]
INPUT = [{"role": "user", "parts": [{"type": "text", "content": "Weather in Paris?"}]}]


def _details(**messages: Any) -> dict[str, Any]:
    """A `gen_ai.client.inference.operation.details` event carrying `messages` (as JSON)."""
    attributes = [
        {"key": key.replace("__", "."), "value": _text(json.dumps(value))}
        for key, value in messages.items()
    ]
    return {
        "name": "gen_ai.client.inference.operation.details",
        "timeUnixNano": "1730000001000000000",
        "attributes": attributes,
    }


def test_the_details_event_s_output_messages_are_the_span_s(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    event = _details(gen_ai__input__messages=INPUT, gen_ai__output__messages=OUTPUT)
    run = _read(tmp_path, monkeypatch, _document(_chat(1, events=[event])))
    (response,) = _of(run, "llm.response")
    assert response["output"] == "Checking the weather."
    (call,) = _of(run, "tool.call")
    assert (call["name"], call["arguments"], call["callId"]) == (
        "get_weather",
        {"city": "Paris"},
        "call_1",
    )


def test_the_details_event_s_input_messages_answer_a_waiting_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The tool's result in the next inference's history, on its details event."""
    history = [
        *INPUT,
        OUTPUT[0],
        {
            "role": "tool",
            "parts": [{"type": "tool_call_response", "id": "call_1", "response": "sunny"}],
        },
    ]
    answer = [{"role": "assistant", "parts": [{"type": "text", "content": "Sunny."}]}]
    first = _details(gen_ai__input__messages=INPUT, gen_ai__output__messages=OUTPUT)
    second = _details(gen_ai__input__messages=history, gen_ai__output__messages=answer)
    run = _read(
        tmp_path, monkeypatch, _document(_chat(1, events=[first]), _chat(2, events=[second]))
    )
    (result,) = _of(run, "tool.result")
    assert (result["callId"], result["output"]) == ("call_1", "sunny")
    assert [r["output"] for r in _of(run, "llm.response")] == ["Checking the weather.", "Sunny."]


def test_the_span_s_own_output_messages_win_over_the_event_s(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    own = [{"role": "assistant", "parts": [{"type": "text", "content": "own"}]}]
    event = _details(gen_ai__output__messages=OUTPUT)
    span = _chat(1, events=[event], gen_ai__output__messages=json.dumps(own))
    run = _read(tmp_path, monkeypatch, _document(span))
    assert [r["output"] for r in _of(run, "llm.response")] == ["own"]


# --- content never captured --------------------------------------------------------------

#: The tester's trace: a chat span and a tool span recorded without message content.
NO_CONTENT = _document(_chat(1), _tool(2))


def _verdicts(run: Run, source: str, monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """Each assertion's status and message, the same from the reference index pass and
    the generated one (which must agree)."""
    program = evaldsl.compile(source)
    generated = [(v.status, v.message) for v in program.check(run).verdicts]
    with monkeypatch.context() as m:
        m.setenv("EVALDSL_REFERENCE", "1")
        reference = [(v.status, v.message) for v in program.check(run).verdicts]
    assert generated == reference
    return generated


def test_a_trace_without_content_reads_its_answer_and_arguments_as_unknown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = _read(tmp_path, monkeypatch, NO_CONTENT)
    assert run.unrecorded is not None
    assert run.unrecorded.answers == {1}
    assert run.unrecorded.arguments == {"get_weather": {1}}
    assert run.unrecorded.results == {"get_weather": 1}
    (call,) = _of(run, "tool.call")
    assert "arguments" not in call  # not `{}`: never read as arguments
    assert run.read is not None
    notes = " ".join(run.read.notes)
    for said in ("no output messages", "records no arguments", "records no result"):
        assert said in notes


@pytest.mark.parametrize(
    "assertion",
    [
        "answer is empty",
        'not answer contains "error"',
        "answer[1] is empty",
        "answer json is null",
    ],
)
def test_an_answer_never_recorded_is_an_error_verdict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, assertion: str
) -> None:
    run = _read(tmp_path, monkeypatch, NO_CONTENT)
    ((status, message),) = _verdicts(run, assertion, monkeypatch)
    assert status == "error"
    assert "records no message content" in message
    assert "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT" in message


@pytest.mark.parametrize(
    "assertion",
    [
        "tool get_weather args == {}",
        'tool get_weather args $.city != "x"',
        "every tool get_weather args == {}",
        'tool get_weather result contains "sun"',
        'every tool get_weather result != "x"',
    ],
)
def test_arguments_and_results_never_recorded_are_error_verdicts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, assertion: str
) -> None:
    run = _read(tmp_path, monkeypatch, NO_CONTENT)
    ((status, message),) = _verdicts(run, assertion, monkeypatch)
    assert status == "error"
    assert "is unknown" in message and "records no" in message


def test_counts_and_tokens_of_a_trace_without_content_still_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = _read(tmp_path, monkeypatch, NO_CONTENT)
    source = "tool get_weather called once; steps == 1; tokens == 70; tool calls == 1"
    assert [s for s, _ in _verdicts(run, source, monkeypatch)] == ["pass"] * 4


def test_only_the_answers_left_out_are_unknown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A later span with content: its answer reads; the first one's stays unknown."""
    said = [{"role": "assistant", "parts": [{"type": "text", "content": "Sunny."}]}]
    doc = _document(_chat(1), _chat(2, gen_ai__output__messages=json.dumps(said)))
    run = _read(tmp_path, monkeypatch, doc)
    source = 'answer == "Sunny."; answer[2] == "Sunny."; answer[1] is empty; answer[-2] is empty'
    assert [s for s, _ in _verdicts(run, source, monkeypatch)] == [
        "pass",
        "pass",
        "error",
        "error",
    ]


def test_a_known_call_decides_what_an_unknown_one_cannot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Of two calls, one recorded with its arguments and result: an any-call test it
    passes passes; an `every` test it fails fails; what only the unknown call could
    decide is an error."""
    known = _tool(3, gen_ai__tool__call__arguments='{"city": "Paris"}')
    known["attributes"][2]["value"] = _text("call_2")  # gen_ai.tool.call.id
    known["attributes"] += _attrs(gen_ai__tool__call__result="sunny")
    run = _read(tmp_path, monkeypatch, _document(_chat(1), _tool(2), known))
    source = (
        'tool get_weather args $.city == "Paris"\n'
        'every tool get_weather args $.city == "Rome"\n'
        'tool get_weather args $.city == "Rome"\n'
        'tool get_weather result == "sunny"\n'
        'tool get_weather result == "rain"\n'
    )
    assert [s for s, _ in _verdicts(run, source, monkeypatch)] == [
        "pass",
        "error",  # the first call (unknown) decides `every` before the known one
        "error",
        "pass",
        "error",
    ]


def test_a_result_a_later_history_carries_is_no_longer_unknown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tool span without its result, which the next inference's input messages give."""
    history = [
        {
            "role": "tool",
            "parts": [{"type": "tool_call_response", "id": "call_1", "response": "ok"}],
        }
    ]
    said = [{"role": "assistant", "parts": [{"type": "text", "content": "done"}]}]
    later = _chat(
        3,
        gen_ai__input__messages=json.dumps(history),
        gen_ai__output__messages=json.dumps(said),
    )
    run = _read(tmp_path, monkeypatch, _document(_tool(2), later))
    assert run.unrecorded is not None and run.unrecorded.results == {}
    assert [s for s, _ in _verdicts(run, 'tool get_weather result == "ok"', monkeypatch)] == [
        "pass"
    ]


def test_a_trace_with_its_content_leaves_nothing_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    event = _details(gen_ai__output__messages=OUTPUT)
    run = _read(tmp_path, monkeypatch, _document(_chat(1, events=[event])))
    assert run.unrecorded is None


def test_inspect_says_what_the_trace_left_out(tmp_path: Path) -> None:
    path = tmp_path / "trace.otlp.json"
    path.write_text(json.dumps(NO_CONTENT), encoding="utf-8")
    (summary,) = summarize(str(path))
    text = render_text(summary)
    assert "unknown (no message content recorded)" in text
    assert "first args not recorded" in text
    assert "no output messages" in text


def test_whether_an_answer_cites_a_result_never_recorded_is_unknown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The answer recorded, the tool's result not: `cites` cannot tell (an error); a
    recorded result it quotes still passes."""
    said = [{"role": "assistant", "parts": [{"type": "text", "content": "It is sunny."}]}]
    answer = _chat(3, gen_ai__output__messages=json.dumps(said))
    run = _read(tmp_path, monkeypatch, _document(_tool(2), answer))
    ((status, message),) = _verdicts(run, "answer cites tool get_weather", monkeypatch)
    assert status == "error" and "records no content for its result" in message
    known = _tool(2, gen_ai__tool__call__result="sunny")
    run = _read(tmp_path, monkeypatch, _document(known, answer))
    assert [s for s, _ in _verdicts(run, "answer cites tool get_weather", monkeypatch)] == ["pass"]


def test_a_live_target_s_run_keeps_what_its_trace_left_out(tmp_path: Path) -> None:
    """A run target that returns the trace's `evaldsl.Run` (it comes back from the
    worker as JSON data): its answer is still unknown in the parent."""
    (tmp_path / "trace.json").write_text(json.dumps(NO_CONTENT), encoding="utf-8")
    (tmp_path / "agent.py").write_text(
        'import evaldsl\n\ndef answer():\n    return evaldsl.load_run("trace.json")\n',
        encoding="utf-8",
    )
    suite = tmp_path / "s.eval"
    suite.write_text('case "c"\nrun agent:answer\nanswer is empty\n', encoding="utf-8")
    done = run_evaldsl(
        "run",
        "-v",
        str(suite),
        cwd=tmp_path,
        env={"PYTHONPATH": f"{ROOT}{os.pathsep}{tmp_path}"},
    )
    assert "records no message content" in done.stdout, done.stdout + done.stderr


# --- content OpenInference redacted ------------------------------------------------------

#: What OpenInference's `TraceConfig` writes for a value it hides.
HIDDEN = "__REDACTED__"


def _oi_llm(n: int, **extra: Any) -> dict[str, Any]:
    made = {
        "openinference__span__kind": "LLM",
        "llm__model_name": "gpt-4o",
        "llm__token_count__prompt": 100,
        "llm__token_count__completion": 30,
    }
    return _span(n, "ChatCompletion", _attrs(**{**made, **extra}))


def _oi_tool(n: int, **extra: Any) -> dict[str, Any]:
    attributes = _attrs(
        openinference__span__kind="TOOL", tool__name="get_weather", tool_call__id="call_1", **extra
    )
    return _span(n, "get_weather", attributes)


#: The tester's trace (OPENINFERENCE_HIDE_INPUTS and HIDE_OUTPUTS): the messages dropped,
#: `input.value` and `output.value` redacted, on the model's spans and the tool's.
HIDDEN_TRACE = _document(
    _oi_llm(1, output__value=HIDDEN),
    _oi_tool(2, input__value=HIDDEN, output__value=HIDDEN),
    _oi_llm(3, output__value=HIDDEN),
)


@pytest.mark.parametrize(
    "assertion",
    [
        f'answer == "{HIDDEN}"',
        'not answer contains "Paris"',
        f'tool get_weather args == "{HIDDEN}"',
        'not tool get_weather args $.city == "Paris"',
        'not tool get_weather result contains "Paris"',
        f'tool get_weather result == "{HIDDEN}"',
    ],
)
def test_content_openinference_redacted_is_not_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, assertion: str
) -> None:
    run = _read(tmp_path, monkeypatch, HIDDEN_TRACE)
    ((status, message),) = _verdicts(run, assertion, monkeypatch)
    assert status == "error", message
    assert "OPENINFERENCE_HIDE_" in message


def test_a_redacted_trace_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = _read(tmp_path, monkeypatch, HIDDEN_TRACE)
    assert run.unrecorded is not None
    assert run.unrecorded.answers == {1, 2}
    assert run.unrecorded.arguments == {"get_weather": {1}}
    assert run.unrecorded.results == {"get_weather": 1}
    assert run.read is not None
    assert any("OpenInference redacted" in note for note in run.read.notes)
    assert not any(HIDDEN in json.dumps(e) for e in _of(run, "tool.call"))


def test_redacted_message_text_makes_the_answer_unknown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """OPENINFERENCE_HIDE_OUTPUT_TEXT redacts the output messages' text, which the
    planned reading (flattened keys) and the readers (a nested list) both read; the
    calls the messages ask for are still read. HIDE_INPUT_TEXT redacts a tool message's
    text in the next call's history: no result, not the placeholder."""
    calls = "llm__output_messages__0__message__tool_calls__0__tool_call__"
    asking = _oi_llm(
        1,
        llm__output_messages__0__message__role="assistant",
        llm__output_messages__0__message__content=HIDDEN,
        **{calls + "id": "call_1", calls + "function__name": "get_weather"},
        **{calls + "function__arguments": '{"city": "Paris"}'},
    )
    parts = "llm__output_messages__0__message__contents__"
    answering = _oi_llm(
        2,
        llm__input_messages__0__message__role="tool",
        llm__input_messages__0__message__tool_call_id="call_1",
        llm__input_messages__0__message__content=HIDDEN,
        **{parts + "0__message_content__type": "text", parts + "0__message_content__text": "It"},
        **{parts + "1__message_content__type": "text", parts + "1__message_content__text": HIDDEN},
    )
    run = _read(tmp_path, monkeypatch, _document(asking, answering))
    assert run.unrecorded is not None and run.unrecorded.answers == {1, 2}
    (call,) = _of(run, "tool.call")
    assert call["arguments"] == {"city": "Paris"}
    assert _of(run, "tool.result") == []
    assert [r["output"] for r in _of(run, "llm.response")] == ["", ""]
    nested = {"message.role": "assistant", "message.content": HIDDEN}
    listed = _oi_llm(3)
    listed["attributes"].append(
        {
            "key": "llm.output_messages",
            "value": {
                "arrayValue": {
                    "values": [
                        {
                            "kvlistValue": {
                                "values": [{"key": k, "value": _text(v)} for k, v in nested.items()]
                            }
                        }
                    ]
                }
            },
        }
    )
    run = _read(tmp_path, monkeypatch, _document(listed))
    assert run.unrecorded is not None and run.unrecorded.answers == {1}


# --- each model call once --------------------------------------------------------------------

OI_ANSWER = {"llm__output_messages__0__message__content": "Paris 18 C."}


def _under(span: dict[str, Any], parent: dict[str, Any] | None) -> dict[str, Any]:
    """`span` as a child of `parent` (none: a root)."""
    return {**span, "parentSpanId": parent["spanId"]} if parent else span


def test_an_llm_span_around_another_is_one_model_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """LangChain's ChatOpenAI span over the OpenAI instrumentor's ChatCompletion span:
    one step, its tokens once; the inner span (the provider's call) is the one read."""
    outer = _oi_llm(1, **OI_ANSWER)
    inner = _under(_oi_llm(2, llm__model_name="gpt-4o-2024-08-06", **OI_ANSWER), outer)
    run = _read(tmp_path, monkeypatch, _document(outer, inner))
    (response,) = _of(run, "llm.response")
    assert response["model"] == "gpt-4o-2024-08-06"
    assert response["usage"] == {"promptTokens": 100, "completionTokens": 30}
    assert run.read is not None and run.read.skipped == {spantree.WRAPPER: 1}


def test_an_llm_span_around_another_counts_its_calls_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls = "llm__output_messages__0__message__tool_calls__0__tool_call__"
    asking = {calls + "id": "call_1", calls + "function__name": "get_weather"}
    agent = _span(0, "agent", _attrs(openinference__span__kind="AGENT"))
    outer = _under(_oi_llm(1, **asking), agent)
    chain = _under(_span(2, "chain", _attrs(openinference__span__kind="CHAIN")), outer)
    inner = _under(_oi_llm(3, **asking), chain)  # (under a chain under the outer one)
    run = _read(
        tmp_path, monkeypatch, _document(agent, outer, chain, inner, _oi_tool(4, output__value="x"))
    )
    assert len(_of(run, "llm.response")) == 1
    (call,) = _of(run, "tool.call")
    (result,) = _of(run, "tool.result")
    assert (call["callId"], result["callId"], result["output"]) == ("call_1", "call_1", "x")


def test_model_calls_under_one_llm_span_each_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A wrapper around two calls (a retry): the two calls count, the wrapper does not;
    LLM spans of another trace, or without a traceId, are not under it."""
    outer = _oi_llm(1, **OI_ANSWER)
    first, second = _under(_oi_llm(2), outer), _under(_oi_llm(3, **OI_ANSWER), outer)
    elsewhere = {**_under(_oi_llm(4), outer), "traceId": "1" * 32}
    untraced = {k: v for k, v in _under(_oi_llm(5), outer).items() if k != "traceId"}
    run = _read(tmp_path, monkeypatch, _document(outer, first, second, elsewhere, untraced))
    assert len(_of(run, "llm.response")) == 4
    assert run.read is not None and run.read.skipped == {spantree.WRAPPER: 1}


def test_parent_links_that_loop_or_run_deep_are_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two LLM spans each the other's parent: neither is the other's wrapper. A chain of
    3,000 spans between two LLM spans is walked without recursion, once."""
    a, b = _oi_llm(1), _oi_llm(2)
    looped = _document(_under(a, b), _under(b, a))
    assert len(_of(_read(tmp_path, monkeypatch, looped), "llm.response")) == 2
    top = _oi_llm(0)
    chain = [top]
    for n in range(1, 3001):
        chain.append(_under(_span(n, "step", _attrs(openinference__span__kind="CHAIN")), chain[-1]))
    spans = [*chain, _under(_oi_llm(3001), chain[-1]), _under(_oi_llm(3002), chain[1500])]
    run = _read(tmp_path, monkeypatch, _document(*spans))
    assert len(_of(run, "llm.response")) == 2
    assert run.read is not None and run.read.skipped[spantree.WRAPPER] == 1


def test_wrappers_are_found_by_the_parents_of_llm_spans_alone() -> None:
    """`wrappers` looks at the LLM spans' parents: none in the file (parents exported
    elsewhere, or only other kinds' parents in it) is no wrapper; one in it is walked."""

    def found(spans: list[tuple[str, str | None, str]]) -> set[int]:
        made = [Span(key, key, {}, 1, 2, "1", "2", [], False, None) for key, _, _ in spans]
        for span, (key, parent, _) in zip(made, spans, strict=True):
            span.key, span.parent = ("t", key), ("t", parent) if parent else None
        _, _, keys = spantree.unrepeated(made)
        return spantree.wrappers(made, [kind for _, _, kind in spans], keys)

    # a tool span under an LLM span, LLM spans under parents of another file
    assert found([("a", "x", "llm"), ("b", "a", "tool"), ("c", "y", "llm")]) == set()
    assert found([("a", None, "llm"), ("b", "a", "tool"), ("c", "b", "llm")]) == {0}
    assert found([("a", None, "llm"), ("b", "a", "llm"), ("c", "x", "tool")]) == {0}


def test_a_span_exported_twice_is_read_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chat = _chat(1, gen_ai__output__messages=json.dumps(OUTPUT))
    tool = _tool(2, gen_ai__tool__call__result="sunny")
    run = _read(tmp_path, monkeypatch, _document(chat, tool, chat, json.loads(json.dumps(tool))))
    assert len(_of(run, "llm.response")) == 1
    assert [len(_of(run, kind)) for kind in ("tool.call", "tool.result")] == [1, 1]
    assert run.read is not None and run.read.skipped == {spantree.REPEATED: 2}
    # without a traceId, two spans of one spanId cannot be told to be one: both are read
    untraced = {k: v for k, v in chat.items() if k != "traceId"}
    run = _read(tmp_path, monkeypatch, _document(untraced, untraced))
    assert len(_of(run, "llm.response")) == 2


def test_a_span_exported_twice_with_a_value_nobody_reads_is_read_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A value of no known kind is the run's error only where a reader reads it: comparing
    two copies does not make it one (copies unreadable alike are the same)."""
    chat = _chat(1)
    chat["attributes"].append({"key": "x.unread", "value": {"strValue": "x"}})
    run = _read(tmp_path, monkeypatch, _document(chat, chat))
    assert len(_of(run, "llm.response")) == 1
    assert run.read is not None and run.read.skipped == {spantree.REPEATED: 1}


def test_two_different_spans_of_one_id_are_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "trace.otlp.json"
    other = {**_chat(1), "name": "chat again"}
    path.write_text(json.dumps(_document(_chat(1), other)), encoding="utf-8")
    for reference in ("1", ""):
        monkeypatch.setenv("EVALDSL_REFERENCE", reference)
        monkeypatch.setattr(detect, "OTEL_TYPED_FROM", 0)
        with pytest.raises(RunError, match="is written twice, differently"):
            load_run(path)


# --- choices ---------------------------------------------------------------------------------


def _choice(text: str, *parts: dict[str, Any]) -> dict[str, Any]:
    """One output message (a choice), of its text and `parts` after it."""
    content = [{"type": "text", "content": text}, *parts]
    return {"role": "assistant", "parts": content, "finish_reason": "stop"}


@pytest.mark.parametrize("where", ["span", "details event"])
def test_output_messages_after_the_first_are_other_choices(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """n = 2: the first choice is the answer (not the two joined), the other's calls are
    not made, and the other is counted as skipped, as the OpenAI adapter counts them."""
    call = {"type": "tool_call", "id": "call_9", "name": "get_weather", "arguments": {}}
    choices = [_choice("First choice: 12 C"), _choice("Second choice: 54 F", call)]
    if where == "span":
        span = _chat(1, gen_ai__output__messages=json.dumps(choices))
    else:
        span = _chat(1, events=[_details(gen_ai__output__messages=choices)])
    run = _read(tmp_path, monkeypatch, _document(span))
    assert [r["output"] for r in _of(run, "llm.response")] == ["First choice: 12 C"]
    assert _of(run, "tool.call") == []
    assert run.read is not None and run.read.skipped == {"choices after the first (n > 1)": 1}


# --- message parts ---------------------------------------------------------------------------

#: The tester's Anthropic answer: reasoning, a web search the provider ran and its
#: response, then the text.
SERVER_PARTS = [
    {"type": "reasoning", "content": "User wants Paris weather; I will search."},
    {
        "type": "server_tool_call",
        "id": "srvtoolu_1",
        "name": "web_search",
        "server_tool_call": {"type": "web_search", "query": "paris weather"},
    },
    {
        "type": "server_tool_call_response",
        "id": "srvtoolu_1",
        "server_tool_call_response": {"type": "web_search", "results": [{"url": "w"}]},
    },
    {"type": "text", "content": "Paris is 18 C."},
]


def test_a_tool_the_provider_ran_is_a_call_with_its_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    answer = [{"role": "assistant", "parts": SERVER_PARTS, "finish_reason": "stop"}]
    run = _read(
        tmp_path, monkeypatch, _document(_chat(1, gen_ai__output__messages=json.dumps(answer)))
    )
    (call,) = _of(run, "tool.call")
    assert (call["name"], call["callId"]) == ("web_search", "srvtoolu_1")
    assert call["arguments"] == {"type": "web_search", "query": "paris weather"}
    (result,) = _of(run, "tool.result")
    assert result["callId"] == "srvtoolu_1" and result["output"]["results"] == [{"url": "w"}]
    assert [r["output"] for r in _of(run, "llm.response")] == ["Paris is 18 C."]
    assert [s for s, _ in _verdicts(run, "no tool web_search", monkeypatch)] == ["fail"]


def test_message_parts_not_read_are_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Parts of types the reader does not read are skipped by type, never dropped unsaid;
    a response part answering no call read is counted too."""
    parts = [
        {"type": "reasoning", "content": "hmm"},
        {"type": "uri", "modality": "image", "uri": "https://x"},
        {"type": "reasoning", "content": "so"},
        {"content": "no type"},
        {"type": "tool_call_response", "id": "nobody", "response": "x"},
        {"type": "text", "content": "Done."},
    ]
    answer = [{"role": "assistant", "parts": parts, "finish_reason": "stop"}]
    run = _read(
        tmp_path, monkeypatch, _document(_chat(1, gen_ai__output__messages=json.dumps(answer)))
    )
    assert [r["output"] for r in _of(run, "llm.response")] == ["Done."]
    assert run.read is not None and run.read.skipped == {
        "`reasoning` message parts": 2,
        "`uri` message parts": 1,
        "message parts without a type": 1,
        "tool call responses in output messages of no call read": 1,
    }
    summary = render_text(summarize(str(tmp_path / "trace.otlp.json"))[0])
    assert "2 `reasoning` message parts" in summary


def test_a_text_part_written_with_text_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The convention's TextPart says `content`; a part written as the providers' content
    parts are (`{"type": "text", "text": …}`) was read as "" (`not answer contains "Paris"`
    passed on an answer that says Paris): it is the same text. One with neither key holds
    text nobody can read: the run's error, never ""."""
    parts = [{"type": "text", "text": "Paris is 18 C."}, {"type": "text", "content": "Sunny."}]
    answer = [{"role": "assistant", "parts": parts, "finish_reason": "stop"}]
    doc = _document(_chat(1, gen_ai__output__messages=json.dumps(answer)))
    run = _read(tmp_path, monkeypatch, doc)
    assert [r["output"] for r in _of(run, "llm.response")] == ["Paris is 18 C.\nSunny."]
    assert [s for s, _ in _verdicts(run, 'not answer contains "Paris"', monkeypatch)] == ["fail"]
    answer[0]["parts"] = [{"type": "text"}]
    path = tmp_path / "bare.otlp.json"
    path.write_text(
        json.dumps(_document(_chat(1, gen_ai__output__messages=json.dumps(answer)))),
        encoding="utf-8",
    )
    with pytest.raises(RunError, match="a `text` message part has no `content` \\(nor `text`\\)"):
        load_run(path)
