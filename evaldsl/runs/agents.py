"""OpenAI Agents SDK traces, as its processors export them, as normalised events.

Takes `Items` of exported trace objects: spans `{"object": "trace.span", id, trace_id,
parent_id, started_at, ended_at, span_data: {type, …}, error}` and traces `{"object":
"trace", workflow_name, …}`, as JSONL (a file processor), a JSON array, or the batch
`{"data": [...]}` the SDK posts (one, or a JSONL of them: each post logged as a line).
Gives the events of `providers` (format "openai_agents"). Spans are taken in `started_at`
order:

- `generation` span: one step; model from `model`; tokens from `usage.input_tokens`/
  `output_tokens` (the input counts the tokens read from OpenAI's prompt cache,
  `usage.input_tokens_details.cached_tokens`, priced at the model's cached-input price
  as the `openai` format prices them; its `cache_write_tokens` are billed as input);
  the answer from the assistant messages of `output` (`content`; a message with no other
  text: its `refusal`, noted, as the `openai` format reads it), whose `tool_calls` are
  tool calls;
- `response` span (a Responses API call): one step with its `usage` (read so too); its
  export holds no answer text (only `response_id`): its answer is unknown (an `answer`
  test of it is an error verdict, never a test of ""), which `evaldsl inspect` notes;
- `function` span: a tool call of `name` with `input` (JSON text) as arguments and `output`
  as its result; when a generation asked for it (the oldest unanswered call of that
  name), it gives that call its result; an `error` makes it an error result;
- spans exported with the SDK's `trace_include_sensitive_data` off hold a null `output`
  (a generation's) and a null `input` (a function's, with its `output` null too, unless
  the call was rejected): those answers, arguments and results are unknown (`Unrecorded`:
  a test of them is an error verdict), never "", `{}` or no result; a generation that
  failed (its `error`) before it had an output is a failed step with no answer;
- `guardrail` span: a guard check (`guards`), its `triggered` the decision;
- a span with an `error` adds an `agent.error`; `trace` objects and `agent`, `handoff`,
  `custom`, `mcp_tools`, … spans are skipped and counted.
The run's latency is from the first `started_at` to the last `ended_at`.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

from evaldsl.runs.model import MISSING
from evaldsl.runs.openai import answer_or_refusal, message_refusal
from evaldsl.runs.providers import (
    Items,
    Trace,
    an_object,
    kind_value,
    link_id,
    listed,
    parse_json_text,
    text_of_parts,
    tool_name,
    usage_of,
)
from evaldsl.runs.text import openai_usage_cached

_USAGE = (("input_tokens", "output_tokens"), ("prompt_tokens", "completion_tokens"))
_RESPONSE_HINT = (
    "the Agents SDK's `response` spans (a Responses API model) export no output: record "
    "the run's answers another way (a chat-completions model's `generation` spans hold "
    "them), or leave `answer` out of this case"
)
_UNRECORDED_HINT = (
    "export the spans with the SDK's `trace_include_sensitive_data` on (RunConfig, or "
    "OPENAI_AGENTS_TRACE_INCLUDE_SENSITIVE_DATA=true): without it they hold no model "
    "output and no tool input or output"
)
_UNRECORDED_NOTE = (
    "spans exported without their data (`trace_include_sensitive_data` off): a generation's "
    "output, a tool's input and output are unknown, and tests that read them are errors"
)


def is_agents_item(d: Any) -> bool:
    """An exported Agents SDK span or trace."""
    return isinstance(d, dict) and (
        (d.get("object") == "trace.span" and isinstance(d.get("span_data"), dict))
        or (d.get("object") == "trace" and "workflow_name" in d)
    )


def is_agents_batch(d: Any) -> bool:
    """The `{"data": [...]}` batch the SDK's exporter posts."""
    return (
        isinstance(d, dict)
        and isinstance(d.get("data"), list)
        and any(is_agents_item(x) for x in d["data"][:50])
    )


def _time(text: Any) -> datetime | None:
    if not isinstance(text, str):
        return None
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def read_agents(items: Items, why: str) -> tuple[Trace, float | None]:
    """The events of exported Agents SDK spans (see the module doc) and the latency in ms."""
    trace = Trace("openai_agents", items.path, why)
    spans: list[dict[str, Any]] = []
    for index, item, where in _exported(items):
        if not is_agents_item(item):
            raise items.error(
                index,
                f"{where} is not an exported Agents SDK span or trace",
                'an exported span has "object": "trace.span" and "span_data"',
            )
        if item["object"] == "trace":
            trace.skip("trace records (the workflow, not an event)")
        else:
            spans.append(item)
    starts = [_time(s.get("started_at")) for s in spans]
    if all(t is not None for t in starts):
        order = sorted(range(len(spans)), key=lambda i: starts[i])  # type: ignore[arg-type,return-value]
        spans = [spans[i] for i in order]
    for span in spans:
        _span(span, trace)
    first = [t for t in starts if t is not None]
    last = [t for t in (_time(s.get("ended_at")) for s in spans) if t is not None]
    latency = (max(last) - min(first)).total_seconds() * 1000 if first and last else None
    return trace, latency


def _exported(items: Items) -> Iterator[tuple[int, Any, str]]:
    """Each exported object with the item that holds it and where it is in words: an item,
    or an element of a batch's `data` (a batch per item: the SDK posts its spans in
    batches, and a file that logs the posts holds one a line)."""
    for index, value in enumerate(items.values):
        if is_agents_batch(value):
            where = items.where(index)
            for n, item in enumerate(value["data"]):
                yield index, item, f"element [{n}] of {where}'s `data`"
        else:
            yield index, value, items.where(index)


def _span(span: dict[str, Any], trace: Trace) -> None:
    data = span["span_data"]
    kind = kind_value(data.get("type"), "span_data.type", "a span")
    start = span.get("started_at") if isinstance(span.get("started_at"), str) else None
    end = span.get("ended_at") if isinstance(span.get("ended_at"), str) else None
    error = span.get("error")
    if kind == "generation":
        trace.saw("generation span")
        text: list[str] | None = []
        calls: list[dict[str, Any]] = []
        output = data.get("output")
        if output is None and error is None:
            # (the SDK sets `output`, a list, only when it may include data: null is an
            # output not recorded, never an answer of "" nor a step that called nothing)
            text = None
            _unrecorded(trace)
        for found_message in listed(output, "span_data.output", "a generation span"):
            message = an_object(found_message, "a message of a generation span's `output`")
            role = kind_value(message.get("role", "assistant"), "role", "an output message")
            if role == "assistant":
                # (a message whose only text is its refusal has it as its answer, as the
                # `openai` format reads the same Chat Completions message)
                written = text_of_parts(message.get("content"))
                content = answer_or_refusal(written, message_refusal(message), trace)
                if content and text is not None:
                    text.append(content)
                found = listed(message.get("tool_calls"), "tool_calls", "an output message")
                calls += [an_object(c, "a tool call of `tool_calls`") for c in found]
        model = data.get("model") if isinstance(data.get("model"), str) else None
        usage = data.get("usage")
        trace.llm(
            None if text is None else "\n".join(text),
            usage_of(usage, _USAGE),
            model=model,
            start=start,
            end=end,
            failed=output is None and error is not None,
            cache=openai_usage_cached(usage),
        )
        for call in calls:
            function = an_object(call.get("function", MISSING), "a tool call's `function`")
            trace.call(
                tool_name(function.get("name", MISSING), "function.name"),
                parse_json_text(function.get("arguments")),
                link_id(call.get("id"), "id", "a tool call"),
                end,
            )
    elif kind == "response":
        trace.saw("response span")
        trace.note(
            "`response` spans export no answer text (only a response_id): their answers are "
            "unknown, and `answer` tests on them error verdicts"
        )
        # its answer was never exported: unknown, not "" (`not answer contains "sorry"`
        # and `answer is empty` would pass on a text nobody read)
        _hint(trace, _RESPONSE_HINT)
        usage = data.get("usage")
        trace.llm(
            None, usage_of(usage, _USAGE), start=start, end=end, cache=openai_usage_cached(usage)
        )
    elif kind == "function":
        trace.saw("function span")
        name = tool_name(data.get("name", MISSING), "span_data.name", "a `function` span")
        given, output = data.get("input"), data.get("output")
        # (the SDK sets `input`, the call's arguments as JSON text, only when it may
        # include data, and `output` then too, unless the call was rejected: a null
        # input is arguments not recorded, never `{}`, and its null output no result)
        unrecorded = given is None
        if unrecorded:
            _unrecorded(trace)
        cid = trace.known_call(None, name)
        if cid is None:
            arguments = MISSING if unrecorded else parse_json_text(given) if given else {}
            cid = trace.call(name, arguments, None, start)
        if unrecorded and output is None:
            trace.unread_result(cid)
        else:
            trace.result(cid, output, is_error=error is not None, at=end)
    elif kind == "guardrail":
        trace.saw("guardrail span")
        trace.guard(str(data.get("name")), data.get("triggered"), end)
    else:
        trace.skip(f"`{kind}` spans (structure, not an event)")
    if error is not None:
        said = error.get("message") if isinstance(error, dict) else error
        trace.error(str(said or "the span failed"), end)


def _unrecorded(trace: Trace) -> None:
    """Note spans exported without their data, and how to export them with it."""
    trace.note(_UNRECORDED_NOTE)
    _hint(trace, _UNRECORDED_HINT)


def _hint(trace: Trace, hint: str) -> None:
    """Add `hint` to how to record what the spans left out: both, when the run has
    `response` spans and spans exported without their data (each is half the cure)."""
    said = trace.capture_hint
    if said.startswith((_RESPONSE_HINT, _UNRECORDED_HINT)):
        if hint not in said:
            trace.capture_hint = f"{said}; and {hint}"
    else:
        trace.capture_hint = hint
