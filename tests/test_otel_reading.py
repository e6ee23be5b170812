"""What the OTel reader reads from a real trace that a small change leaves readable: tool
results that only a model call's history carries, a tool span named by its span, OTLP's
empty `AnyValue`. Each file is read twice, by the typed decoder (`otlpdecode`, forced
whatever the file's size) and in full (`EVALDSL_REFERENCE=1`), and both must agree.
(What must be the run's error instead is `test_misread.py`'s.)
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import evaldsl
from evaldsl.runs import detect, otel, otlpdecode
from evaldsl.runs.detect import load_run
from evaldsl.runs.model import Run, RunError
from evaldsl.runs.summary import summarize
from tests.calltools import calls_made
from tests.clitools import ROOT
from tests.oteltools import MessagesChange, latitude_history, spans

LATITUDE = ROOT / "tests" / "fixtures" / "realworld" / "otel-latitude-otlp" / "trace.otlp.json"
#: The weather tool's result in the Latitude trace, as its tool span and the history give it.
SUNNY = {"weather": "SUNNY", "confidence": 0.95}


def _read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: Callable[[dict[str, Any]], None]
) -> Run:
    """The Latitude trace with `change` made, read by both readings (which must agree)."""
    doc = copy.deepcopy(json.loads(LATITUDE.read_text(encoding="utf-8")))
    change(doc)
    path = tmp_path / "trace.otlp.json"
    path.write_text(json.dumps(doc, indent=1), encoding="utf-8")
    return _both_readings(path, monkeypatch)


def _both_readings(path: Path, monkeypatch: pytest.MonkeyPatch) -> Run:
    """The OTLP file `path` read by both readings (which must agree)."""
    monkeypatch.setattr(detect, "OTEL_TYPED_FROM", 0)
    typed = otlpdecode.read_otel_document(str(path), path.read_bytes(), lambda *_: "test")
    assert typed is not None, "the typed decoder gave the file up"
    with monkeypatch.context() as m:
        m.setenv("EVALDSL_REFERENCE", "1")
        full = load_run(path)
    assert load_run(path).events == full.events == typed.events
    assert typed.read.notes == full.read.notes
    return full


def _results(run: Run) -> list[Any]:
    return [e["output"] for e in run.events if e["type"] == "tool.result"]


def _history(change: MessagesChange) -> Callable[[dict[str, Any]], None]:
    """Latitude without its tool span: the weather call waits, and the last model call's
    history carries its result; `change` changes that history (`latitude_history`)."""
    return lambda doc: latitude_history(doc, change)


def _unchanged(messages: list[dict[str, Any]]) -> None:
    pass


def _result_spelling(messages: list[dict[str, Any]]) -> None:
    """pydantic-ai and Logfire write a `tool_call_response` part's output as `result`."""
    part = messages[-1]["parts"][0]
    part["result"] = part.pop("response")


def _openai_shape(messages: list[dict[str, Any]]) -> None:
    """A `tool` message without parts, as OpenAI's messages (and older instrumentations)."""
    part = messages[-1]["parts"][0]
    messages[-1] = {"role": "tool", "tool_call_id": part["id"], "content": part["response"]}


@pytest.mark.parametrize("change", [_unchanged, _result_spelling, _openai_shape])
def test_a_result_only_the_history_carries_is_the_calls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: Callable[[Any], None]
) -> None:
    run = _read(tmp_path, monkeypatch, _history(change))
    assert _results(run) == [SUNNY]
    (call,) = [e for e in run.events if e["type"] == "tool.call"]
    (result,) = [e for e in run.events if e["type"] == "tool.result"]
    assert result["callId"] == call["callId"] == "fake-tool-call-id-1"


def test_a_histories_results_are_read_without_a_generator(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An LLM span's history (its attributes, and its details') gives the results of the
    calls waiting, read by loops: no generator made by `_span_events` for each span."""
    run, made = calls_made(
        lambda: _read(tmp_path, monkeypatch, _history(_unchanged)), otel, caller="_span_events"
    )
    assert _results(run) == [SUNNY]
    assert "<genexpr>" not in made
    assert "_input_results" in made


def test_the_older_gen_ai_prompt_text_gives_its_tool_messages_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The older GenAI `gen_ai.prompt` (the messages as JSON text, as `gen_ai.completion`
    is read), its tool message in OpenAI's shape."""

    def change(doc: dict[str, Any]) -> None:
        _history(_openai_shape)(doc)
        spans(doc)[3]["attributes"][10]["key"] = "gen_ai.prompt"

    assert _results(_read(tmp_path, monkeypatch, change)) == [SUNNY]


@pytest.mark.parametrize(
    ("span_name", "tool"),
    [
        ("execute_tool get_weather", "get_weather"),  # GenAI's `execute_tool {gen_ai.tool.name}`
        ("execute_toolbox", "execute_toolbox"),  # not GenAI's: the name as it is
        ("lookup", "lookup"),  # OpenInference and most frameworks name it after the tool
    ],
)
def test_a_tool_span_without_a_tool_name_is_named_by_its_span(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, span_name: str, tool: str
) -> None:
    def change(doc: dict[str, Any]) -> None:
        span = spans(doc)[3]
        span["name"] = span_name
        del span["attributes"][4]  # gen_ai.tool.call.id: the span runs the call it names
        del span["attributes"][2]  # gen_ai.tool.name
        span["attributes"][1]["value"] = {"stringValue": "execute_tool"}  # (Latitude's: "tool")

    run = _read(tmp_path, monkeypatch, change)
    # (a span that names the model's call's tool runs it; another is a call of its own)
    assert [e["name"] for e in run.events if e["type"] == "tool.call"][-1] == tool
    assert any("names its tool by the span's name" in note for note in run.read.notes)


def test_an_empty_value_is_no_value_and_an_unknown_one_nobody_reads_is_no_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """OTLP's empty `AnyValue` (`{}`) is no value: the tool span's name names the tool. A
    value of no kind OTLP defines on an attribute no reader reads (`gen_ai.tool.type`,
    a request's temperature) is not read, so not an error (`test_misread.py` has those read)."""

    def change(doc: dict[str, Any]) -> None:
        tool = spans(doc)[3]["attributes"]
        tool[2]["value"] = {}  # gen_ai.tool.name
        tool[3]["value"] = {"strValue": "function"}  # gen_ai.tool.type
        temperature = spans(doc)[0]["attributes"][7]
        assert temperature["key"] == "gen_ai.request.temperature"
        temperature["value"] = {"arrayValue": {"values": [{"str": "x"}]}}

    run = _read(tmp_path, monkeypatch, change)
    assert [e["name"] for e in run.events if e["type"] == "tool.call"] == ["get_weather"]
    assert _results(run) == [SUNNY]


_DATAFRAME_ROW = {  # a row of Phoenix's get_spans_dataframe(), as pandas' to_json writes it
    "name": "llm",
    "span_kind": "LLM",
    "context.trace_id": "409df945",
    "start_time": 1704991517982,  # (pandas' default: epoch milliseconds)
    "end_time": 1704991518517,
    "attributes.llm.output_messages": [{"message.role": "assistant", "message.content": "2001"}],
    "attributes.tool.name": None,
}


@pytest.mark.parametrize(
    ("name", "text", "as_format", "said"),
    [
        ("df.jsonl", json.dumps(_DATAFRAME_ROW) + "\n", None, "`df.jsonl` is a Phoenix spans"),
        ("df.json", json.dumps([_DATAFRAME_ROW]), None, "`df.json` is a Phoenix spans"),
        (
            "df.jsonl",
            json.dumps(_DATAFRAME_ROW) + "\n",
            "otel",
            "the document is a row of a Phoenix",
        ),
    ],
)
def test_a_phoenix_dataframe_export_says_what_it_is_and_how_to_export_spans(
    tmp_path: Path, name: str, text: str, as_format: str | None, said: str
) -> None:
    """It was "nothing recognised" (or "not an OTLP JSON document or a span"): it is not
    read as spans (its times are epoch milliseconds, its empty columns null), and the
    error says what it is and how to export the spans in the shape evaldsl reads."""
    from evaldsl.runs.model import RunError

    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    with pytest.raises(RunError) as caught:
        load_run(path, as_format)
    assert caught.value.message.startswith(said)
    assert "DataFrame written by pandas" in caught.value.message
    assert "`context` and `attributes` as objects" in (caught.value.hint or "")


def _reasons(*words: str) -> dict[str, Any]:
    return {"arrayValue": {"values": [{"stringValue": w} for w in words]}}


@pytest.mark.parametrize(
    ("reasons", "said"),
    [
        (
            _reasons("length"),
            "stopped at its token limit (gen_ai.response.finish_reasons `length`)",
        ),
        (
            {"stringValue": "max_tokens"},  # (a lone text, a provider's own word)
            "stopped at its token limit (gen_ai.response.finish_reasons `max_tokens`)",
        ),
        (
            _reasons("content_filter"),
            "was stopped by a content filter (gen_ai.response.finish_reasons `content_filter`)",
        ),
        (_reasons("stop"), None),
        (_reasons("stop", "length"), None),  # (the first choice is the answer, not the other)
    ],
)
def test_an_llm_span_whose_finish_reason_leaves_its_answer_not_whole_is_noted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reasons: dict[str, Any], said: str | None
) -> None:
    # as the OpenAI reader notes finish_reason length; the span's answer is still read
    def change(doc: dict[str, Any]) -> None:
        for span in spans(doc):
            for attribute in span["attributes"]:
                if attribute["key"] == "gen_ai.response.finish_reasons":
                    attribute["value"] = reasons

    run = _read(tmp_path, monkeypatch, change)
    noted = [note for note in run.read.notes if "finish_reasons" in note]
    assert noted == ([] if said is None else [f"a model call {said}: its answer may be cut"])
    answers = [e["output"] for e in run.events if e["type"] == "llm.response"]
    assert answers and all(isinstance(a, str) and a for a in answers)


def test_the_ai_sdks_tool_call_spans_are_its_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Vercel AI SDK records each tool it runs as an `ai.toolCall` span (its own
    `ai.toolCall.*` attributes, no GenAI kind): a call with its arguments and result,
    never a span read past (`no tool get_weather` passed on it), by both readings."""
    full = _both_readings(
        ROOT / "tests" / "data" / "formats" / "ai-sdk-spans.otlp.json", monkeypatch
    )
    (call,) = [e for e in full.events if e["type"] == "tool.call"]
    assert (call["name"], call["arguments"], call["callId"]) == (
        "get_weather",
        {"city": "Paris"},
        "call_1",
    )
    assert _results(full) == [{"sky": "sunny"}]


@pytest.mark.parametrize("layout", ["attributes", "body"])
def test_a_tool_message_event_gives_the_waiting_call_its_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, layout: str
) -> None:
    """The older GenAI convention sends a tool's result back as a `gen_ai.tool.message`
    event of the next LLM span (Koog writes its `role`, `content` and `id` as the event's
    attributes): it was not read, so a call without a tool span had no result, and `not
    tool get_weather result contains "SUNNY"` passed on a result the trace held."""

    def change(doc: dict[str, Any]) -> None:
        latitude_history(doc, lambda ms: ms.pop())  # (the history's tool message gone)
        fields = {"role": "tool", "content": '{"weather":"SUNNY"}', "id": "fake-tool-call-id-1"}
        if layout == "body":
            attributes = [{"key": "body", "value": {"stringValue": json.dumps(fields)}}]
        else:
            attributes = [{"key": k, "value": {"stringValue": v}} for k, v in fields.items()]
        event = {"name": "gen_ai.tool.message", "timeUnixNano": "1", "attributes": attributes}
        spans(doc)[3]["events"] = [event]

    run = _read(tmp_path, monkeypatch, change)
    said = (
        'tool get_weather result $.weather == "SUNNY"; '
        'not tool get_weather result $.weather contains "SUN"'
    )
    assert evaldsl.compile(said).check(run).statuses == ["pass", "fail"]


def test_the_ai_sdks_model_calls_give_their_text_and_tool_calls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Vercel AI SDK model-call span keeps its output in `ai.response.text` and
    `ai.response.toolCalls` (JSON text), not in a GenAI, OpenInference or OpenLLMetry
    attribute: its answer was unknown (an error verdict for every `answer` test). Now the
    text is its answer (a step that only called tools answers ""), and its calls are
    calls, one with the `ai.toolCall` span of the same id; v5's `input` is read as v4's
    `args`. By both readings."""
    sample = ROOT / "tests" / "data" / "formats" / "ai-sdk-spans.otlp.json"
    run = _both_readings(sample, monkeypatch)
    said = (
        'answer == "It is sunny in Paris."; answer[1] == ""; tool get_weather called once; '
        'tool get_weather args $.city == "Paris"'
    )
    assert evaldsl.compile(said).check(run).statuses == ["pass"] * 4
    # v5 writes `input`; a call no `ai.toolCall` span ran is a call of its own
    doc = json.loads(sample.read_text(encoding="utf-8"))
    spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
    kept = [sp for sp in spans if sp["name"] != "ai.toolCall"]
    for span in kept:
        for attribute in span["attributes"]:
            if attribute["key"] == "ai.response.toolCalls":
                calls = [{"toolCallId": "c9", "toolName": "get_time", "input": {"tz": "CET"}}]
                attribute["value"] = {"stringValue": json.dumps(calls)}
    doc["resourceSpans"][0]["scopeSpans"][0]["spans"] = kept
    path = tmp_path / "v5.otlp.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    run = _both_readings(path, monkeypatch)
    said = 'no tool get_weather; tool get_time args $.tz == "CET"; tool calls == 1'
    assert evaldsl.compile(said).check(run).statuses == ["pass"] * 3
    # a list that is no list: the run's error naming the attribute
    for span in kept:
        for attribute in span["attributes"]:
            if attribute["key"] == "ai.response.toolCalls":
                attribute["value"] = {"stringValue": '{"toolName": "x"}'}
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(RunError, match=r"ai\.response\.toolCalls"):
        load_run(path)


# --- OpenInference's prompt-cache counts -----------------------------------------------------


def _openinference_llm(tmp_path: Path, model: str, provider: str, **counts: int) -> Path:
    """An OTLP file of one OpenInference LLM span (as Phoenix's instrumentors write it)
    answering "Hi." with `counts`: `llm.token_count.<name>` by name, `prompt_details.*`
    spelled with a `__` for the dot."""
    attrs: dict[str, Any] = {
        "openinference.span.kind": "LLM",
        "llm.model_name": model,
        "llm.provider": provider,
        "llm.system": provider,
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.content": "Hi.",
    }
    attrs |= {"llm.token_count." + k.replace("__", "."): n for k, n in counts.items()}
    return _one_span(tmp_path, attrs)


def _one_span(tmp_path: Path, attrs: dict[str, Any]) -> Path:
    """An OTLP file of one span of `attrs` (texts, numbers, lists of texts)."""

    def value(v: Any) -> dict[str, Any]:
        if isinstance(v, list):
            return {"arrayValue": {"values": [value(x) for x in v]}}
        return {"intValue": str(v)} if isinstance(v, int) else {"stringValue": v}

    listed = [{"key": k, "value": value(v)} for k, v in attrs.items()]
    span = {
        "traceId": "5b8aa5a2d2c872e8321cf37308d69df2",
        "spanId": "a1",
        "name": "ChatCompletion",
        "kind": 1,
        "startTimeUnixNano": "1700000000000000000",
        "endTimeUnixNano": "1700000001000000000",
        "attributes": listed,
    }
    doc = {"resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {}, "spans": [span]}]}]}
    path = tmp_path / "spans.otlp.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def _cost(path: Path, fmt: str | None = None) -> float | None:
    return summarize(path, fmt)[0].cost


def _body(tmp_path: Path, provider: str, usage: dict[str, Any]) -> Path:
    """The provider's own response body of the same call, which its format reads."""
    if provider == "openai":
        body: dict[str, Any] = {
            "object": "chat.completion",
            "model": "gpt-4o-2024-08-06",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hi."}}],
            "usage": usage,
        }
    else:
        content = [{"type": "text", "text": "Hi."}]
        body = {"type": "message", "role": "assistant", "content": content, "usage": usage}
        body["model"] = "claude-sonnet-4-5-20250929"
    path = tmp_path / f"{provider}.json"
    path.write_text(json.dumps(body), encoding="utf-8")
    return path


def test_openinference_prompt_cache_tokens_are_priced_as_the_provider_bills_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """OpenInference counts the prompt's tokens read from (and written to) the provider's
    cache in `llm.token_count.prompt_details.cache_read`/`cache_write`, among
    `llm.token_count.prompt` (`prompt + completion == total`): the call costs what the
    provider's own body of it costs in its format, not every input token at full price.
    An instrumentation that writes Anthropic's `input_tokens` as the prompt leaves them
    out (its total, or counts the prompt cannot hold, say so): they are added."""
    openai = _openinference_llm(
        tmp_path,
        "gpt-4o-2024-08-06",
        "openai",
        prompt=1000,
        completion=20,
        total=1020,
        prompt_details__cache_read=800,
    )
    usage = {"prompt_tokens": 1000, "completion_tokens": 20, "total_tokens": 1020}
    usage["prompt_tokens_details"] = {"cached_tokens": 800}
    priced = _cost(_body(tmp_path, "openai", usage))
    assert priced is not None and _cost(openai) == pytest.approx(priced)
    assert _both_readings(openai, monkeypatch).events[1]["cacheTokens"] == {"cached": 800}

    usage = {"input_tokens": 20, "output_tokens": 10, "cache_read_input_tokens": 1733}
    usage["cache_creation_input_tokens"] = 100
    priced = _cost(_body(tmp_path, "anthropic", usage))
    model = "claude-sonnet-4-5-20250929"
    for counts in (
        {"prompt": 1853, "total": 1863},  # the convention's: the prompt counts them
        {"prompt": 20, "total": 1863},  # the prompt is Anthropic's `input_tokens`
        {"prompt": 20},  # the same, no total: 1833 read or written are no part of 20
    ):
        path = _openinference_llm(
            tmp_path,
            model,
            "anthropic",
            completion=10,
            prompt_details__cache_read=1733,
            prompt_details__cache_write=100,
            **counts,
        )
        assert priced is not None and _cost(path) == pytest.approx(priced), counts
        run = _both_readings(path, monkeypatch)
        checked = evaldsl.compile("input tokens == 1853; output tokens == 10").check(run)
        assert checked.statuses == ["pass", "pass"], counts
    # a total that says the prompt holds them, and a prompt too small to: the run's error
    path = _openinference_llm(
        tmp_path,
        model,
        "anthropic",
        prompt=20,
        completion=10,
        total=30,
        prompt_details__cache_read=1733,
    )
    with pytest.raises(RunError, match=r"1733 prompt-cache tokens, more than"):
        load_run(path)


@pytest.mark.parametrize("reason", ["content_filter", "SAFETY", "stop"])
@pytest.mark.parametrize("where", ["attribute", "message"])
def test_an_answer_a_content_filter_removed_is_unknown_not_empty(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reason: str, where: str
) -> None:
    """A GenAI LLM span whose first finish reason is a content filter's (the semconv's
    `content_filter`, Gemini's `SAFETY`; in `gen_ai.response.finish_reasons`, or the
    output message's own `finish_reason`) and whose output has no text: the filter
    removed the answer, which is unknown (an error verdict naming the filter), as the
    `openai` format reads such a response, never "" that `not answer contains "…"`
    passes. A call that stopped with nothing to say has the answer ""."""
    attrs: dict[str, Any] = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-4o",
        "gen_ai.usage.input_tokens": 100,
        "gen_ai.usage.output_tokens": 0,
        "gen_ai.output.messages": json.dumps(
            [{"role": "assistant", "parts": [], "finish_reason": reason}]
        ),
    }
    if where == "attribute":
        attrs["gen_ai.response.finish_reasons"] = [reason]
    run = _both_readings(_one_span(tmp_path, attrs), monkeypatch)
    checked = evaldsl.compile('not answer contains "bomb"; tokens == 100').check(run)
    if reason == "stop":
        assert checked.statuses == ["pass", "pass"]
        return
    assert checked.statuses == ["error", "pass"]
    assert f"a content filter removed it (finish reason `{reason}`)" in checked.verdicts[0].message
    said = "gen_ai.response.finish_reasons" if where == "attribute" else "`finish_reason`"
    assert any(said in n and "content filter" in n for n in run.read.notes), run.read.notes


def test_the_ai_sdks_content_filter_finish_reason_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Vercel AI SDK spells a content filter's finish reason `content-filter` (its
    `LanguageModelV2FinishReason`), in `ai.response.finishReason` and the
    `gen_ai.response.finish_reasons` it writes beside it: noted, and an answer it left
    no text of is unknown, as the semconv's `content_filter` is read."""
    sample = ROOT / "tests" / "data" / "formats" / "ai-sdk-spans.otlp.json"
    doc = json.loads(sample.read_text(encoding="utf-8"))
    last = spans(doc)[-1]
    assert last["name"] == "ai.generateText.doGenerate"
    for attribute in last["attributes"]:
        if attribute["key"] == "ai.response.text":  # (the SDK's `result.text`: "")
            attribute["value"] = {"stringValue": ""}
        if attribute["key"] == "gen_ai.response.finish_reasons":
            attribute["value"] = {"arrayValue": {"values": [{"stringValue": "content-filter"}]}}
        if attribute["key"] == "ai.response.finishReason":
            attribute["value"] = {"stringValue": "content-filter"}
    path = tmp_path / "filtered.otlp.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    run = _both_readings(path, monkeypatch)
    checked = evaldsl.compile('not answer contains "sunny"; steps == 2').check(run)
    assert checked.statuses == ["error", "pass"]
    assert "finish reason `content-filter`" in checked.verdicts[0].message
    assert any("content filter (gen_ai.response.finish_reasons" in n for n in run.read.notes)


def test_an_openllmetry_tool_span_s_arguments_are_its_call_s_keywords(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """OpenLLMetry's `@tool` decorator records its function's call in
    `traceloop.entity.input` as `{"args": [...], "kwargs": {...}}` (traceloop-sdk
    `_handle_span_input`): a call by keyword has its `kwargs` as arguments, so that
    `args $.city` reads the city (the record made it fail, and `not args $.city == …`
    pass, on a call that named it); one with positional values keeps the record, noted."""
    attrs: dict[str, Any] = {
        "traceloop.span.kind": "tool",
        "traceloop.entity.name": "get_weather",
        "traceloop.entity.input": json.dumps({"args": [], "kwargs": {"city": "Oslo"}}),
        "traceloop.entity.output": json.dumps({"temp": 12}),
    }
    run = _both_readings(_one_span(tmp_path, attrs), monkeypatch)
    said = 'tool get_weather args == {city: "Oslo"}; tool get_weather result $.temp == 12'
    assert evaldsl.compile(said).check(run).statuses == ["pass", "pass"]
    attrs["traceloop.entity.input"] = json.dumps({"args": ["Oslo"], "kwargs": {}})
    run = _both_readings(_one_span(tmp_path, attrs), monkeypatch)
    said = 'tool get_weather args $.args[0] == "Oslo"'
    assert evaldsl.compile(said).check(run).statuses == ["pass"]
    assert any("positional arguments" in n for n in run.read.notes)
