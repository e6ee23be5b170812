"""A value a format's reader must read and cannot is the run's error, never a pass.

Each row takes a real trace of `tests/fixtures/realworld/` (or a format's sample), changes
one value the reader reads (a tool call's name to a list, a usage to text, a role to a
number, ...) and asserts that reading it is a `RunError` saying what was found, at the
line that holds it where the file has lines; before, each of these made a call, a step,
a result or a token count vanish, so that `no tool X`, `tool calls == N` or `tokens <= N`
passed on a trace whose data nobody read (docs/language.md §9.3).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import evaldsl
from evaldsl.runs import detect
from evaldsl.runs.detect import load_run
from evaldsl.runs.model import RunError
from tests.clitools import ROOT
from tests.oteltools import MessagesChange, latitude_history, spans

REALWORLD = ROOT / "tests" / "fixtures" / "realworld"
#: A format's sample, where `tests/fixtures/realworld/` has none of that format.
SAMPLES = ROOT / "tests" / "data" / "formats"

Change = Callable[[Any], None]


def _set(*path: Any) -> Callable[[Any], Change]:
    """A change that puts a value at `path` (its last step a key, or `None` to delete)."""

    def to(value: Any) -> Change:
        def change(data: Any) -> None:
            *into, last = path
            for step in into:
                data = data[step]
            if value is _DELETE:
                del data[last]
            else:
                data[last] = value

        return change

    return to


_DELETE = object()

OPENAI_CALLS = "openai-chat-tools/response-toolcalls.json"
OPENAI_REQUEST = "openai-chat-messages/request-with-tool-results.json"
OPENAI_RESPONSE = "openai-responses-api/response-function-call.json"
OPENAI_STREAM = "openai-chat-stream/chunks.jsonl"

ANTHROPIC = "anthropic-message-tooluse/message.json"
ANTHROPIC_STREAM = "anthropic-stream-tooluse/events.jsonl"
INSPECT = "inspect-ai-eval-log/log_read_sample.json"
LATITUDE = "otel-latitude-otlp/trace.otlp.json"
PHOENIX_OTLP = "openinference-phoenix-spans/spans.otlp.json"
PHOENIX = "openinference-phoenix-spans/spans.jsonl"
LANGSMITH = str(SAMPLES / "langsmith-runs.jsonl")  # (a path `REALWORLD /` leaves as it is)

_call = _set(0, "choices", 0, "message", "tool_calls", 0, "function", "name")


def _attribute(span: int, n: int) -> Callable[[Any], Change]:
    """A change of the `AnyValue` of attribute `n` of span `span` of an OTLP document."""
    return _set(0, "resourceSpans", 0, "scopeSpans", 0, "spans", span, "attributes", n, "value")


_SPAN3 = (0, "resourceSpans", 0, "scopeSpans", 0, "spans", 3)


def _spans(data: Any) -> list[dict[str, Any]]:
    return spans(data[0])


def _history(change: MessagesChange) -> Change:
    """A change of Latitude's history, its tool span left out (see `latitude_history`)."""
    return lambda data: latitude_history(data[0], change)


def _added(span: int, key: str, value: Any) -> Change:
    """A change adding attribute `key` (its `AnyValue`) to span `span` of an OTLP document."""

    def change(data: Any) -> None:
        _spans(data)[span]["attributes"].append({"key": key, "value": value})

    return change


def _failed(span: int, message: Any) -> Change:
    """A change making span `span` fail, its `exception` event's message `message`."""

    def change(data: Any) -> None:
        _spans(data)[span]["status"] = {"code": 2}
        attribute = {"key": "exception.message", "value": message}
        _spans(data)[span]["events"] = [{"name": "exception", "attributes": [attribute]}]

    return change


def _answer_part(messages: list[dict[str, Any]]) -> dict[str, Any]:
    return messages[-1]["parts"][0]  # the tool's `tool_call_response` part


def _output_messages(span: int, parts: Any) -> Change:
    """A change of span `span`'s `gen_ai.output.messages` (Latitude's attribute 11) to one
    assistant message of `parts`."""
    message = [{"role": "assistant", "parts": parts}]
    return _attribute(span, 11)({"stringValue": json.dumps(message)})


#: (name, file, change, the error's text, its line: the value's own where the reader names it by
#: its place in a document, else the line of its item; None for a document's start)
ROWS: list[tuple[str, str, Change, str, int | None]] = [
    # OpenAI Chat Completions: a call whose name is not text was skipped (not counted)
    ("chat name list", OPENAI_CALLS, _call(["execute_shell"]),
     "`choices[0].message.tool_calls[0].function.name` is a list, not a tool's name", 17),
    ("chat name null", OPENAI_CALLS, _call(None), ".function.name` is null", 17),
    ("chat name empty", OPENAI_CALLS, _call(""), ".function.name` is a string, not a tool's "
     "name (non-empty text)", 17),
    ("chat name missing", OPENAI_CALLS, _set(0, "choices", 0, "message", "tool_calls", 0,
     "function", "name")(_DELETE), "`choices[0].message.tool_calls[0].function.name` is "
     "missing", None),
    ("chat tool_calls object", OPENAI_CALLS,
     _set(0, "choices", 0, "message", "tool_calls")({"a": 1}),
     "`choices[0].message.tool_calls` is an object, not a list", 12),
    ("chat call text", OPENAI_CALLS, _set(0, "choices", 0, "message", "tool_calls", 0)("x"),
     "`choices[0].message.tool_calls[0]` is a string, not a tool call (an object)", 13),
    ("chat call id number", OPENAI_CALLS,
     _set(0, "choices", 0, "message", "tool_calls", 0, "id")(5),
     "`choices[0].message.tool_calls[0].id` is a number, not text", 14),
    ("chat legacy name list", OPENAI_CALLS, _set(0, "choices", 0, "message", "function_call")(
     {"name": ["execute_shell"], "arguments": "{}"}), "`function_call.name` is [", None),
    # usage that is there and unread counted 0 tokens
    ("chat usage text", OPENAI_CALLS, _set(0, "usage")("12000"),
     'a token usage is "12000" (a string), not an object of counts', None),
    ("chat usage spelling", OPENAI_CALLS, _set(0, "usage")({"input_tokens": 9000}),
     "a token usage has none of `prompt_tokens`, `completion_tokens` (it has `input_tokens`)",
     None),
    ("chat content number", OPENAI_CALLS, _set(0, "choices", 0, "message", "content")(42),
     "a message's `content` is 42 (a number)", None),
    ("chat message text", OPENAI_CALLS, _set(0, "choices", 0, "message")("hi"),
     '`choices[0].message` is "hi"', None),
    # request transcripts: a role that is not text hid an assistant message's calls
    ("transcript role list", OPENAI_REQUEST, _set(0, "messages", 2, "role")(["assistant"]),
     'a message\'s `role` is ["assistant"] (a list), not text', None),
    ("transcript result id number", OPENAI_REQUEST, _set(0, "messages", 3, "tool_call_id")(5),
     "a tool message's `tool_call_id` is 5 (a number), not an id (text)", None),
    # Responses API: `str()` of the name made a call of a tool named "['execute_shell']"
    ("responses name list", OPENAI_RESPONSE, _set(0, "output", 0, "name")(["execute_shell"]),
     "a `function_call` item's `name` is [", None),
    ("responses name missing", OPENAI_RESPONSE, _set(0, "output", 0, "name")(_DELETE),
     "a `function_call` item has no `name`", None),
    ("responses item type list", OPENAI_RESPONSE, _set(0, "output", 0, "type")(["x"]),
     "`output[0].type` is a list, not text", 21),
    ("responses usage text", OPENAI_RESPONSE, _set(0, "usage")("9"), "a token usage is", None),
    # streamed chunks: a list name was kept as the call's name; no name was skipped
    ("stream name list", OPENAI_STREAM,
     _set(1, "choices", 0, "delta", "tool_calls", 0, "function", "name")(["execute_shell"]),
     "a streamed tool call's `function.name` is [", 2),
    ("stream name missing", OPENAI_STREAM,
     _set(1, "choices", 0, "delta", "tool_calls", 0, "function", "name")(_DELETE),
     "streamed tool call #1 has no `function.name` in any of its deltas", 1),
    ("stream usage text", OPENAI_STREAM, _set(-1, "usage")("12000"), "a token usage is", 18),
    # Anthropic: `str()` of the name made a call of "['execute_shell']" or "None"
    ("anthropic name list", ANTHROPIC, _set(0, "content", 2, "name")(["execute_shell"]),
     "`content[2].name` is a list, not text", 25),
    ("anthropic name missing", ANTHROPIC, _set(0, "content", 2, "name")(_DELETE),
     "`content[2].name` is missing: text belongs there", None),
    ("anthropic block type missing", ANTHROPIC, _set(0, "content", 2, "type")(_DELETE),
     "`content[2].type` is missing: text belongs there", None),
    ("anthropic text number", ANTHROPIC, _set(0, "content", 0, "text")(42),
     "a text block's `text` is 42 (a number), not text", None),
    ("anthropic usage spelling", ANTHROPIC, _set(0, "usage")({"prompt_tokens": 12000}),
     "a token usage has none of `input_tokens`, `output_tokens`", None),
    ("anthropic stream name list", ANTHROPIC_STREAM,
     _set(6, "content_block", "name")(["execute_shell"]),
     "`content_block.name` is a list, not text", 7),
    ("anthropic stream usage text", ANTHROPIC_STREAM, _set(13, "usage")("12000"),
     "`usage` is a string, not an object", 14),
    # Inspect AI: a tool event's `function` became "None" or "['x']"
    ("inspect event kind list", INSPECT, _set(0, "samples", 0, "events", 8, "event")(["model"]),
     "a transcript event's `event` is [", None),
    ("inspect usage text", INSPECT, _set(0, "samples", 0, "events", 8, "output", "usage")("66"),
     "a token usage is", None),
    # OpenTelemetry: a tool name of the wrong AnyValue type fell back to the span's name; a
    # span kind that was a list made the span a skipped one; a count named the wrong key
    ("otel tool name array", LATITUDE, _attribute(3, 2)({"arrayValue": {"values": [
     {"stringValue": "execute_shell"}]}}),
     'tool span "get_weather"\'s `gen_ai.tool.name` is ["execute_shell"] (a list)', None),
    ("otel tool name unset", LATITUDE, _attribute(3, 2)({"intValue": "7"}),
     "`gen_ai.tool.name` is 7 (a number), not a tool's name", None),
    ("genai text part number", LATITUDE, _output_messages(0, [{"type": "text", "content": 42}]),
     "a `text` part's `content` is 42 (a number), not text", None),
    ("genai part type list", LATITUDE, _output_messages(2, [{"type": ["tool_call"], "id": "c1",
     "name": "get_weather", "arguments": {}}]),
     'a message part\'s `type` is ["tool_call"] (a list), not text', None),
    ("genai part text", LATITUDE, _output_messages(0, ["The user asked"]),
     'a message part is "The user asked" (a string), not an object', None),
    ("genai parts object", LATITUDE, _output_messages(0, {"type": "text", "content": "hi"}),
     "an output message's `parts` is {", None),
    ("openllmetry content number", LATITUDE, _set(0, "resourceSpans", 0, "scopeSpans", 0,
     "spans", 0, "attributes", 11)({"key": "gen_ai.completion.0.content",
     "value": {"intValue": "42"}}),
     "an OpenLLMetry message (`gen_ai.completion.N`)'s `content` is 42 (a number), not text",
     None),
    ("openinference content number", PHOENIX_OTLP, _attribute(1, 16)({"intValue": "42"}),
     "an OpenInference output message's `message.content` is 42 (a number), not text", None),
    ("openinference part type list", PHOENIX, _set(1, "attributes", "llm.output_messages", 0,
     "message.contents")([{"message_content.type": ["text"], "message_content.text": "hi"}]),
     'an OpenInference content part\'s `message_content.type` is ["text"] (a list)', 2),
    ("openinference part text number", PHOENIX, _set(1, "attributes", "llm.output_messages", 0,
     "message.contents")([{"message_content.type": "text", "message_content.text": 7}]),
     "an OpenInference content part's `message_content.text` is 7 (a number), not text", 2),
    ("openinference contents object", PHOENIX, _set(1, "attributes", "llm.output_messages", 0,
     "message.contents")({"message_content.text": "hi"}),
     "an OpenInference output message's `message.contents` is {", 2),
    ("otlp attribute text", LATITUDE, _set(*_SPAN3, "attributes", 2)("gen_ai.tool.name"),
     "spans[3]: `attributes[2]` is 'gen_ai.tool.name', not a {key, value} object", None),
    ("otlp attribute key number", LATITUDE, _set(*_SPAN3, "attributes", 2, "key")(5),
     "spans[3]: `attributes[2].key` is 5, not text", None),
    ("otlp event attribute number", LATITUDE,
     _set(*_SPAN3, "events")([{"name": "exception", "attributes": [7]}]),
     "spans[3]: events[0]: `attributes[0]` is 7, not a {key, value} object", None),
    ("otlp events object", LATITUDE, _set(*_SPAN3, "events")({"name": "exception"}),
     "spans[3]: `events` must be a list of objects, not {", None),
    ("openinference call name int", PHOENIX_OTLP, _attribute(0, 10)({"intValue": "1"}),
     "an OpenInference tool call (`llm.output_messages.N.message.tool_calls.M`)'s "
     "`tool_call.function.name` is 1 (a number)", None),
    ("openinference kind array", PHOENIX_OTLP,
     _attribute(0, 0)({"arrayValue": {"values": [{"stringValue": "LLM"}]}}),
     'span "llm"\'s `openinference.span.kind` is ["LLM"] (a list), not text', None),
    ("openinference call name missing", PHOENIX, _set(0, "attributes", "llm.output_messages", 0,
     "message.tool_calls", 0, "tool_call.function.name")(_DELETE),
     "has no `tool_call.function.name`", 1),
    ("phoenix span kind list", PHOENIX, _set(0, "span_kind")(["LLM"]),
     'span "llm"\'s `span_kind` is ["LLM"] (a list), not text', 1),
    ("phoenix span kind number", PHOENIX, _set(1, "span_kind")(3),
     "`span_kind` is 3 (a number), not text", 2),
    ("phoenix attributes list", PHOENIX, _set(0, "attributes")([{"key": "llm.model_name"}]),
     'span "llm"\'s `attributes` is [{"key":"llm.model_name"}] (a list), not an object', 1),
    ("phoenix events object", PHOENIX, _set(1, "events")({"name": "exception"}),
     'span "llm"\'s `events` is {"name":"exception"} (an object), not a list', 2),
    ("phoenix event text", PHOENIX, _set(1, "events")(["exception"]),
     'an event of span "llm" is "exception" (a string), not an object', 2),
    ("phoenix event attributes list", PHOENIX,
     _set(1, "events")([{"name": "exception", "attributes": []}]),
     'span "llm"\'s event\'s `attributes` is [] (a list), not an object', 2),
    ("openinference output messages object", PHOENIX,
     _set(0, "attributes", "llm.output_messages")({"0": {"message.role": "assistant"}}),
     "an OpenInference LLM span's `llm.output_messages` is {\"0\":", 1),
    ("openinference output message text", PHOENIX,
     _set(0, "attributes", "llm.output_messages", 0)("multiply"),
     "an entry of an OpenInference LLM span's `llm.output_messages` is \"multiply\" (a string), "
     "not an object", 1),
    ("openinference tool calls object", PHOENIX,
     _set(0, "attributes", "llm.output_messages", 0, "message.tool_calls")(
     {"tool_call.function.name": "multiply"}),
     "an OpenInference output message's `message.tool_calls` is {", 1),
    # OTLP AnyValues of no kind OTLP defines were read as no value: the tool named by the
    # span, an answer read as none (an empty AnyValue, `{}`, is OTLP's no value: not here)
    ("otlp value kind misspelt", LATITUDE, _attribute(3, 2)({"strValue": "execute_shell"}),
     'span "get_weather"\'s `gen_ai.tool.name` is {"strValue":"execute_shell"} (an object): '
     "an OTLP AnyValue has one of `stringValue`, `boolValue`, `intValue`", None),
    ("otlp output messages kind misspelt", LATITUDE, _attribute(0, 11)({"string": "[]"}),
     'span "openai / gpt-4o"\'s `gen_ai.output.messages` is {"string":"[]"} (an object)', None),
    ("otlp array item kind misspelt", LATITUDE, _attribute(3, 2)({"arrayValue": {"values": [
     {"strValue": "x"}]}}), "`gen_ai.tool.name` is {\"strValue\":\"x\"} (an object): an OTLP",
     None),
    # an array or a list of key-values of another shape was read as no value too
    ("otlp array of no list", LATITUDE, _attribute(3, 2)({"arrayValue": "execute_shell"}),
     'span "get_weather"\'s `gen_ai.tool.name` is {"arrayValue":"execute_shell"} (an object): '
     "an OTLP `arrayValue` holds `values`, a list of values", None),
    ("otlp array values no list", LATITUDE, _attribute(0, 11)({"arrayValue": {"values": 7}}),
     "`gen_ai.output.messages` is {\"arrayValue\":{\"values\":7}} (an object)", None),
    ("otlp kvlist values no objects", LATITUDE, _attribute(3, 2)({"kvlistValue": {"values": [
     "execute_shell"]}}), "an OTLP `kvlistValue` holds `values`, a list of {key, value} objects",
     None),
    ("otlp event kind misspelt", LATITUDE, _failed(3, {"strValue": "timeout"}),
     'span "get_weather"\'s `exception.message` is {"strValue":"timeout"}', None),
    # GenAI output messages that were neither messages nor text were read as no answer
    ("genai output message number", LATITUDE, _attribute(0, 11)({"stringValue": "[42]"}),
     "an output message is 42 (a number), not text or an object", None),
    ("genai output messages number", LATITUDE, _attribute(0, 11)({"intValue": "42"}),
     "an LLM span's `gen_ai.output.messages` is 42 (a number), not a list of messages", None),
    ("genai completion number", LATITUDE, _set(*_SPAN3[:-1], 0, "attributes", 11)(
     {"key": "gen_ai.completion",
     "value": {"intValue": "42"}}),
     "an OpenLLMetry LLM span's `gen_ai.completion` is 42 (a number), not a list", None),
    ("genai completion entry number", LATITUDE, _set(*_SPAN3[:-1], 0, "attributes", 11)(
     {"key": "gen_ai.completion", "value": {"arrayValue": {"values": [{"intValue": "42"}]}}}),
     "an entry of an OpenLLMetry LLM span's `gen_ai.completion` is 42 (a number)", None),
    # call ids of the wrong type were read as no id: a result linked to no call, or to another
    ("otel tool span id number", LATITUDE, _attribute(3, 4)({"intValue": "5"}),
     'tool span "get_weather"\'s `gen_ai.tool.call.id` is 5 (a number), not an id (text)', None),
    ("genai tool_call part id number", LATITUDE, _output_messages(2, [{"type": "tool_call",
     "id": 5, "name": "get_weather", "arguments": {}}]),
     "a `tool_call` part's `id` is 5 (a number), not an id (text)", None),
    ("genai history id object", LATITUDE, _history(lambda m: _answer_part(m).update(
     id={"id": "fake-tool-call-id-1"})),
     "a `tool_call_response` part's `id` is {\"id\":\"fake-tool-call-id-1\"} (an object)", None),
    ("openinference call id number", PHOENIX_OTLP,
     _added(0, "llm.output_messages.0.message.tool_calls.0.tool_call.id", {"intValue": "5"}),
     "an OpenInference tool call (`llm.output_messages.N.message.tool_calls.M`)'s "
     "`tool_call.id` is 5 (a number), not an id (text)", None),
    ("openinference nested call id list", PHOENIX, _set(0, "attributes", "llm.output_messages",
     0, "message.tool_calls", 0, "tool_call.id")(["c1"]), "`tool_call.id` is [\"c1\"] (a list)",
     1),
    ("openinference history id number", PHOENIX, _set(1, "attributes", "llm.input_messages", 3,
     "message.tool_call_id")(7),
     "an OpenInference tool message (`llm.input_messages.N`)'s `message.tool_call_id` is 7", 2),
    ("langsmith call id number", LANGSMITH, _set(3, "outputs", "generations", 0, 0, "message",
     "kwargs", "tool_calls", 0, "id")(5),
     "a tool call of `tool_calls`'s `id` is 5 (a number), not an id (text)", 4),
    ("langsmith result id object", LANGSMITH,
     _set(2, "outputs", "output", "kwargs", "tool_call_id")({"id": "call_1"}),
     'a tool message\'s `tool_call_id` is {"id":"call_1"} (an object), not an id (text)', 3),
    ("openinference count names its key", PHOENIX,
     _set(0, "attributes", "llm.token_count.prompt")("229"),
     "token usage `llm.token_count.prompt` is \"229\", not a number", 1),
]  # fmt: skip


def _values(name: str) -> tuple[list[Any], bool]:
    path = REALWORLD / name
    if path.suffix == ".jsonl":
        lines = path.read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines if line.strip()], True
    return [json.loads(path.read_text(encoding="utf-8"))], False


def _write(tmp_path: Path, name: str, change: Change) -> Path:
    values, lines = _values(name)
    changed = copy.deepcopy(values)
    change(changed)
    path = tmp_path / Path(name).name
    if lines:
        path.write_text("".join(json.dumps(v) + "\n" for v in changed), encoding="utf-8")
    else:
        path.write_text(json.dumps(changed[0], indent=1), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("name", "file", "change", "said", "line"), ROWS, ids=[row[0] for row in ROWS]
)
def test_a_value_the_reader_cannot_read_is_the_runs_error(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    file: str,
    change: Change,
    said: str,
    line: int | None,
) -> None:
    path = _write(tmp_path, file, change)
    # an OTel file is read by the typed decoder first (`otlpdecode`, whatever its size):
    # where it cannot read a file, the full reading reads it, and must give this error
    monkeypatch.setattr(detect, "OTEL_TYPED_FROM", 0)
    for reference in (False, True):
        if reference:
            monkeypatch.setenv("EVALDSL_REFERENCE", "1")
        with pytest.raises(RunError) as info:
            load_run(path)
        assert said in info.value.message
        assert info.value.line == (line or 1)
        assert info.value.hint


def test_the_unchanged_files_are_read(tmp_path: Path) -> None:
    """Each file the table changes reads as it is (the errors are the changes')."""
    for file in sorted({row[1] for row in ROWS}):
        run = load_run(_write(tmp_path, file, lambda data: None))
        assert evaldsl.compile("steps >= 1").check(run).passed, file
