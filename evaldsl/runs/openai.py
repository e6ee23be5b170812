"""OpenAI: Chat Completions bodies, request transcripts, streamed chunks, the Responses API
(bodies, requests, streams).

Takes `Items` (one body, an array or JSONL of them, or the SSE text as the API streams it)
and gives the normalised events of `providers` (format "openai"). Shapes and what becomes
what:

- a Chat Completions response body (`object: "chat.completion"`, `choices[].message`): one
  step; the answer is `choices[0].message.content` (text or text parts; `null` when the
  model only calls tools gives `""`, never the body's JSON), or, when it has none, an
  audio reply's `message.audio.transcript` (noted: what the model said; one beside text is
  counted skipped), or, when the message has no other text, its `refusal` (noted: what
  the model said; a refusal beside text is counted skipped); each `tool_calls[]` entry is
  a `tool.call` (`function.name`, `function.arguments` read by `arguments_of`, `id`; a
  custom tool's `custom.name` with its `input` text, as `custom_tool_call`); legacy
  `function_call` too; tokens from `usage.prompt_tokens`/`completion_tokens`;
  `finish_reason: "length"` is noted, and a call whose arguments it left not whole JSON
  has them unknown (`arguments_if_whole`); so is `"content_filter"` (in a stream too, and a
  Responses `incomplete_details.reason`), whose answer is the text the filter let through,
  and, when it let none through, unknown (`filtered`: an error verdict, never `""`);
- a request body (`messages[]` with `role`): the transcript the application sent back; each
  assistant message is one step (its text, else its refusal, the answer; its `tool_calls`
  the calls) and each `role: "tool"` message the result of the call its `tool_call_id`
  names (`role: "function"` by name). A transcript records no token usage (noted); an
  assistant message whose calls all have the id, tool and arguments of calls read before
  it in the file is that response echoed back: skipped, its calls not made again;
- streamed chunks (`object: "chat.completion.chunk"`, JSONL or SSE ending in `data:
  [DONE]`): chunks of one `id` are one step; `delta.content` pieces join into the answer
  (`delta.audio.transcript` pieces, then `delta.refusal` pieces, when there is no
  content), Azure's content-filter chunks (no
  choices, `prompt_filter_results`) are skipped, `delta.tool_calls[]` fragments are
  reassembled by `index` (the `id` and `name` come
  first, the `arguments` text arrives in pieces; a new `id` at an index opens a new call,
  and a delta without an index continues the one before: OpenAI-compatible servers
  number calls otherwise, `_Stream.slot`; a legacy `delta.function_call`'s pieces are one
  call); usage from the final chunk
  (`stream_options.include_usage`). A stream without a `finish_reason` is cut: an error
  naming the tool call whose arguments were left unfinished; one that ends in the API's
  error chunk (`data: {"error": {…}}`) is a run that ended in an error (see below);
- a Responses API body (`object: "response"`, `output[]`): one step; `message` items'
  `output_text` parts make the answer (`refusal` parts, when there is none); `function_call`
  (JSON-text `arguments`, `call_id`) and `custom_tool_call` are tool calls,
  `function_call_output` a result (an `output` of content parts, `input_text` with
  `input_image`/`input_file`: the text of its `input_text` parts); built-in tools
  (`web_search_call`, `file_search_call`, `code_interpreter_call`, `computer_call`,
  `image_generation_call`, `local_shell_call`, GPT-5.1's `shell_call` and
  `apply_patch_call`) are
  calls of the tool named by the type without `_call` (`web_search`, `shell`) with the
  item's `action`/`queries`/`code`/`operation` as arguments (those the application runs
  are answered by their `…_call_output` item, by `call_id`, as a function call is)
  and, for the tools the API runs, the result it
  records when the request's `include` asks (`file_search_call.results`,
  `web_search_call.action.sources`, `code_interpreter_call.outputs`,
  `image_generation_call.result`; not recorded: unknown, an error verdict for a `result`
  test, noted; `status: "failed"` without one: an error result), and `mcp_call` a call of
  its `name` with its `output` as result; `reasoning` items are skipped; tokens from
  `usage.input_tokens`/`output_tokens`; `status: "failed"` or an `error` object adds an
  `agent.error` (`"error": null` is no error);
- a Responses API request body (`input[]`: messages by `role`, a model's items sent back,
  call outputs): read as a transcript (`_responses_input`): each run of a model's items
  (an assistant message, `function_call`s, `reasoning`) one step read as a body's
  `output`, each `function_call_output` the result of the call its `call_id` names; a
  turn echoing calls read before is skipped, as in a Chat transcript; `item_reference`s
  (items kept by the API, not in the file) are counted as skipped;
- Responses API streaming events (`type: "response.…"`): each stream ends in
  `response.completed`/`incomplete`/`failed`, whose `response` is read as a body (its
  `output` completed from the `response.output_item.done` items when empty); a stream
  without one is cut, an error, unless it ends in the API's `error` event
  (`{"type": "error", "code", "message"}`). `response.failed` is an ending in the API's
  error as that event is (below): its body's `output` is empty, so the items streamed
  before it are read, and its `error` is the `agent.error`.

A stream that ends in the provider's error is a whole recording of a run that ended in an
error: what came before is read as usual (the text streamed so far is the answer, a tool
call whose arguments were cut off has unknown arguments, noted: `Unrecorded.cut`), then an
`agent.error` with the error's words, and `inspect` notes that the answer may be cut.

A body with an `error` object and no result (`{"error": {"message": …}}`) is an error, as
is any item that is none of these shapes, and a field the reader needs of another type than
the API gives it (`tool_calls` that is no list, a call `id` that is not text, a response's
`output` item that is no object or whose `type` is not text, a message's `content` that is
no list): the error names the field by its path, what it is and what belongs there.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator
from typing import Any

import orjson

from evaldsl.runs.model import MISSING, describe, is_among
from evaldsl.runs.providers import (
    Call,
    Items,
    Trace,
    an_object,
    blocks_text,
    is_json_text,
    kind_value,
    link_id,
    listed,
    parse_json_text,
    text_of_parts,
    text_value,
    tool_name,
    usage_of,
)
from evaldsl.runs.surrogates import mended_loads
from evaldsl.runs.text import (
    CHAT_CACHED,
    REFUSAL_NOTE,
    RESPONSES_CACHED,
    TRANSCRIPT_NOTE,
    openai_cached,
)

_CHAT_USAGE = (("prompt_tokens", "completion_tokens"),)
_RESPONSES_USAGE = (("input_tokens", "output_tokens"),)
_TERMINAL = ("response.completed", "response.incomplete", "response.failed")
#: Per built-in tool call item: the fields read as its arguments, and the path to its
#: result (`None`: the application runs it, and its result is the `…_output` item it
#: sends back, as a function call's). The API writes a result only when the request's
#: `include` asks for it (else `null` or absent): then the result is unknown.
_BUILTIN_CALLS: dict[str, tuple[tuple[str, ...], tuple[str, ...] | None]] = {
    "web_search_call": (("action", "queries"), ("action", "sources")),
    "file_search_call": (("queries",), ("results",)),
    "code_interpreter_call": (("code",), ("outputs",)),
    "computer_call": (("action",), None),
    "image_generation_call": ((), ("result",)),
    "local_shell_call": (("action",), None),
    # (GPT-5.1's `shell` and `apply_patch`, which the application runs)
    "shell_call": (("action",), None),
    "apply_patch_call": (("operation",), None),
}
#: How to record the results of built-in tools (the end of an error verdict's message).
INCLUDE_HINT = (
    "record the response again with the request's `include` naming them "
    "(`file_search_call.results`, `web_search_call.action.sources`, "
    "`code_interpreter_call.outputs`)"
)
_REQUEST_ONLY_ROLES = frozenset({"tool", "function", "system", "developer"})


# --- signatures ------------------------------------------------------------------------------


def _first_choice(d: dict[str, Any]) -> Any:
    choices = d.get("choices")
    return choices[0] if isinstance(choices, list) and choices else None


def is_completion(d: Any) -> bool:
    """A Chat Completions response body."""
    if not isinstance(d, dict) or not isinstance(d.get("choices"), list):
        return False
    choice = _first_choice(d)
    return d.get("object") in ("chat.completion", "text_completion") or (
        isinstance(choice, dict) and ("message" in choice or "text" in choice)
    )


def is_chunk(d: Any) -> bool:
    """A streamed Chat Completions chunk."""
    if not isinstance(d, dict) or not isinstance(d.get("choices"), list):
        return False
    choice = _first_choice(d)
    return d.get("object") == "chat.completion.chunk" or (
        isinstance(choice, dict) and "delta" in choice
    )


def is_filter_chunk(d: Any) -> bool:
    """An Azure OpenAI stream's content-filter chunk: no choices, only the filter's verdict
    on the prompt (`prompt_filter_results`); it says nothing about the run."""
    return (
        isinstance(d, dict)
        and d.get("choices") == []
        and "prompt_filter_results" in d
        and d.get("object") in ("", "chat.completion.chunk", None)
    )


def is_request(d: Any) -> bool:
    """A Chat Completions request body whose transcript only OpenAI writes this way: a
    `tool`/`system` role, or `tool_calls` on a message."""
    messages = d.get("messages") if isinstance(d, dict) else None
    if not isinstance(messages, list) or "choices" in d or "output" in d:
        return False
    return any(
        isinstance(m, dict)
        and (
            is_among(m.get("role"), _REQUEST_ONLY_ROLES) or "tool_calls" in m or "tool_call_id" in m
        )
        for m in messages
    )


#: The items of a model's turn in a Responses API request's `input` (what an earlier
#: response's `output` held, sent back), and those that answer a call of one.
_TURN_ITEMS = frozenset(
    {"function_call", "custom_tool_call", "reasoning", "mcp_call", *_BUILTIN_CALLS}
)
_OUTPUT_ITEMS = frozenset(
    {
        "function_call_output",
        "custom_tool_call_output",
        # the results of the built-in tools the application runs, by their `call_id`
        *(f"{kind}_output" for kind, (_, where) in _BUILTIN_CALLS.items() if where is None),
    }
)
#: The text parts of a call's output given as content (`input_text`; with `input_image`
#: and `input_file` parts, as the API takes a tool's output since openai-python 2.0).
_OUTPUT_TEXT = ("input_text",)
_INPUT_ROLES = frozenset({"user", "assistant", "system", "developer"})


def is_responses_request(d: Any) -> bool:
    """A Responses API request body: an `input` list of its items (a message by `role`, a
    call, a call's output), the conversation the application sent."""
    listed = d.get("input") if isinstance(d, dict) else None
    if not isinstance(listed, list) or "output" in d or "messages" in d or "run_type" in d:
        return False
    return any(
        isinstance(i, dict)
        and (
            is_among(i.get("type"), _TURN_ITEMS)
            or is_among(i.get("type"), _OUTPUT_ITEMS)
            or i.get("type") == "item_reference"
            or (is_among(i.get("role"), _INPUT_ROLES) and i.get("type", "message") == "message")
        )
        for i in listed
    )


def is_plain_request(d: Any) -> bool:
    """A request body of user/assistant messages only (OpenAI and Anthropic both write it)."""
    messages = d.get("messages") if isinstance(d, dict) else None
    return (
        isinstance(messages, list)
        and bool(messages)
        and "choices" not in d
        and "system" not in d
        and all(isinstance(m, dict) and m.get("role") in ("user", "assistant") for m in messages)
        and all(isinstance(m.get("content"), str) for m in messages)
    )


def is_response(d: Any) -> bool:
    """A Responses API body."""
    return (
        isinstance(d, dict)
        and isinstance(d.get("output"), list)
        and (d.get("object") == "response" or str(d.get("id", "")).startswith("resp_"))
    )


def is_response_event(d: Any) -> bool:
    """A Responses API streaming event."""
    return isinstance(d, dict) and str(d.get("type", "")).startswith("response.")


SHAPES = {
    "chat.completion": is_completion,
    "chat.completion.chunk": is_chunk,
    "content-filter chunk": is_filter_chunk,
    "chat request": is_request,
    "response": is_response,
    "responses request": is_responses_request,
    "response event": is_response_event,
}


def shape_of(d: Any) -> str | None:
    """The OpenAI shape of one item, or `None`."""
    for name, test in SHAPES.items():
        if test(d):
            return name
    return None


# --- reading ---------------------------------------------------------------------------------


def read_openai(items: Items, why: str, *, done: bool = False) -> Trace:
    """The events of OpenAI items (see the module doc); `done`: an SSE `[DONE]` was seen."""
    trace = Trace("openai", items.path, why)
    trace.capture_hint = INCLUDE_HINT  # (what an OpenAI file leaves out: built-in results)
    streams: dict[str, _Stream] = {}
    response_stream: _ResponseStream | None = None
    unmetered = 0  # steps of request transcripts, which record no usage
    for index, item in enumerate(items):
        # A Chat Completions body, most items of a log of them, goes straight to its
        # reading: it is no chunk (no `delta`), no streaming event (no `type`), no error
        # body (it has `choices`), and is a completion (`object`), as the tests below
        # would find one by one (five calls and ~20 lookups an item)
        if (
            type(item) is dict
            and item.get("object") == "chat.completion"
            and type(choices := item.get("choices")) is list
            and not streams
            and "type" not in item
            and not (choices and type(choices[0]) is dict and "delta" in choices[0])
        ):
            trace.saw("chat.completion")
            _completion(item, trace, items, index)
            continue
        if is_filter_chunk(item):
            trace.skip("Azure content-filter chunks (`prompt_filter_results`)")
            continue
        if is_chunk(item):
            key = str(item.get("id", ""))
            if key not in streams:
                streams[key] = _Stream(index)
            streams[key].add(item, trace, items, index)
            continue
        if streams and _is_error_chunk(item):
            trace.saw("error chunk")
            _finish_streams(streams, items, trace, done, error=_error_words(item["error"]))
            continue
        if streams and not is_chunk(item):
            _finish_streams(streams, items, trace, done)
        if response_stream is not None and isinstance(item, dict) and item.get("type") == "error":
            # the API's own ending of a run that failed, not a cut recording
            trace.saw("error event")
            _response_failed(response_stream, _error_words(item), trace, items, index)
            response_stream = None
            continue
        if is_response_event(item):
            response_stream = response_stream or _ResponseStream(index)
            if _response_event(item, response_stream, trace, items, index):
                response_stream = None
            continue
        _error_body(item, items, index)
        if is_completion(item):
            trace.saw("chat.completion")
            _completion(item, trace, items, index)
        elif is_response(item):
            trace.saw("response")
            _response(item, trace, items, index, ())
        elif isinstance(item, dict) and isinstance(item.get("messages"), list):
            trace.saw("chat request")
            unmetered += _transcript(item, items, index, trace)
        elif is_responses_request(item):
            trace.saw("responses request")
            unmetered += _responses_input(item, items, index, trace)
        else:
            raise items.error(
                index,
                f"{items.where(index)} is {_found(item)}, not an OpenAI body",
                "an OpenAI item is a chat.completion, a chunk, a request with messages, "
                "a Responses API object, request or streaming event",
            )
    _finish_streams(streams, items, trace, done)
    if response_stream is not None:
        raise items.error(
            response_stream.start,
            "the Responses API stream ends before `response.completed` "
            "(or `incomplete`/`failed`): the recording is cut",
            "record the whole stream, up to its terminal event",
        )
    trace.unmetered(unmetered)
    _unread_note(trace)
    if done:
        trace.saw("[DONE]")
    return trace


def _unread_note(trace: Trace) -> None:
    """Note the built-in tool calls whose results the file does not record."""
    left = trace.unrecorded()
    if left is not None and left.results:
        n = sum(left.results.values())
        some = "1 built-in tool call records" if n == 1 else f"{n} built-in tool calls record"
        trace.note(
            f"{some} no result (the request's `include` did not ask for it): `result` "
            "tests on them are errors"
        )


def _found(item: Any) -> str:
    if isinstance(item, dict):
        return "an object with keys " + ", ".join(f"`{k}`" for k in list(item)[:6])
    return describe(item)


def _is_error_chunk(item: Any) -> bool:
    """The chunk a Chat Completions stream ends with when the API fails mid-stream:
    `{"error": {…}}`, no `choices`."""
    return isinstance(item, dict) and isinstance(item.get("error"), dict) and "choices" not in item


_ERROR_IN_THEM = "the run ended in an error in them"
_TOKENS_IN_THEM = "the model ran out of tokens in them (finish_reason `length`)"
_INCOMPLETE_IN_THEM = "the response is incomplete in them (status `incomplete`)"


def _error_words(error: dict[str, Any]) -> str:
    """The words of a stream's error (`code` or `type`, and `message`), for its
    `agent.error`.

    >>> _error_words({"type": "error", "code": "server_error", "message": "Down"})
    'server_error: Down'
    """
    kind = error.get("code") or (error.get("type") if error.get("type") != "error" else None)
    words = [str(w) for w in (kind, error.get("message")) if w not in (None, "")]
    return ": ".join(words) or "the stream reported an error"


def _error_body(item: Any, items: Items, index: int) -> None:
    if (
        isinstance(item, dict)
        and isinstance(item.get("error"), dict)
        and not any(k in item for k in ("choices", "output", "messages"))
    ):
        message = item["error"].get("message")
        said = f": {message}" if isinstance(message, str) else ""
        raise items.error(
            index,
            f"{items.where(index)} is an error body, not a response{said}",
            "the API answered with an error: there is no run to check",
        )


#: Steps from an item to a value in it (keys and indices), for errors that name a field.
Steps = tuple[str | int, ...]

_CALLS_HINT = (
    "a message's `tool_calls` is a list of calls, each with a text `id` and a `function` "
    "object (`name`, `arguments`) or, for a custom tool, a `custom` object (`name`, "
    "`input`); fix or re-record the trace"
)
#: The note when a response was stopped by its token limit.
LENGTH_NOTE = (
    "a response stopped at its token limit (finish_reason `length`): its answer may be cut"
)
#: The note when the content filter stopped a response.
FILTER_NOTE = (
    "the content filter stopped a response (finish_reason `content_filter`): its answer is "
    "what the filter let through, and one it removed whole is unknown"
)
#: Why an answer the content filter removed is unknown (an error verdict's message).
FILTERED = "the content filter removed it (finish_reason `content_filter`)"


def filtered(text: str, reason: Any, trace: Trace) -> str | None:
    """The answer of a response that stopped for `reason`: its `text`, unless the content
    filter stopped it (noted), which removed the answer when there is no text: unknown
    (`None`), never "" (`not answer contains "…"` would pass on what it removed)."""
    if reason != "content_filter":
        return text
    trace.note(FILTER_NOTE)
    if text:
        return text
    trace.answers_why = FILTERED
    return None


def arguments_of(value: Any, call: str, trace: Trace) -> Any:
    """A call's arguments as the API sends them (JSON text): `""` or only whitespace is no
    arguments (`{}`, as a stream that sent none); text that is not JSON is kept as the text
    with a note naming the call `call`, never dropped; a value that is not text is itself.

    >>> t = Trace("openai", "a.json", "x")
    >>> arguments_of(" ", "f", t), arguments_of('{"q": 1}', "f", t), arguments_of("{q", "f", t)
    ({}, {'q': 1}, '{q')
    >>> t.notes
    ['arguments of call f are not JSON: read as text']
    """
    if not isinstance(value, str):
        return value
    if not value.strip():
        return {}
    try:
        return mended_loads(value)
    except orjson.JSONDecodeError:  # (parsed once: the note only on this path)
        trace.note(f"arguments of call {call} are not JSON: read as text")
        return value


def arguments_if_whole(value: Any, name: Any, call: str, cut: str | None, trace: Trace) -> Any:
    """A call's arguments (`arguments_of`), or, when the run was cut (`cut`: why, the
    response stopped at its token limit or by the API's error) and they are not whole
    JSON (`""` included: the call was begun and nothing of it written), `MISSING`: unknown,
    noted (`Trace.cut_call`), never the cut text or `{}`, which a test could pass."""
    if cut is not None and isinstance(value, str) and not is_json_text(value):
        trace.cut_call(name, "arguments are", cut)
        return MISSING
    return arguments_of(value, call, trace)


def _call_label(name: str, call_id: str | None) -> str:
    """A call in a note: its tool and, when it has one, its id (`get_time` (call_1))."""
    return f"{name} ({call_id})" if call_id else name


def answer_or_refusal(text: str, refusal: str, trace: Trace) -> str:
    """A message's answer: its text, or, when it has no other text, its refusal (noted);
    a refusal beside answer text is counted as skipped, never dropped unseen."""
    if not refusal:
        return text
    if text:
        trace.skip("refusals beside answer text")
        return text
    trace.note(REFUSAL_NOTE)
    return refusal


def answer_or_transcript(text: str, transcript: str, trace: Trace) -> str:
    """A message's answer: its text, or, when it has none, the transcript of its audio
    reply (what the model said, noted); a transcript beside text is counted as skipped."""
    if not transcript:
        return text
    if text:
        trace.skip("audio transcripts beside answer text")
        return text
    trace.note(TRANSCRIPT_NOTE)
    return transcript


def _transcript_of(audio: Any) -> str:
    """The `transcript` of a message's or a delta's `audio` object (`""`: none); an
    `audio` that is no object, or a transcript that is not text, is a `BadValue`."""
    said = an_object(audio, "a message's `audio`").get("transcript")
    return text_value(said, "transcript", "a message's `audio`")


def _refusal_of_parts(content: Any) -> str:
    """The text of a content list's `{"type": "refusal", "refusal": …}` parts, joined by
    "\n" (a refusal that is not text is a `BadValue`); other content has none."""
    if not isinstance(content, list):
        return ""
    return "\n".join(
        text_value(part.get("refusal"), "refusal", "a refusal part")
        for part in content
        if isinstance(part, dict) and part.get("type") == "refusal"
    )


def message_refusal(message: dict[str, Any]) -> str:
    """A message's refusal: its `refusal` text (`null` is none) and its refusal parts.

    >>> parts = [{"type": "refusal", "refusal": "Not that."}]
    >>> message_refusal({"refusal": "No.", "content": parts}), message_refusal({"content": parts})
    ('No.\\nNot that.', 'Not that.')
    >>> message_refusal({"refusal": "No.", "content": "Hi."}), message_refusal({"refusal": None})
    ('No.', '')
    """
    said = message.get("refusal")
    own = "" if said is None else text_value(said, "refusal", "a message")
    parts = _refusal_of_parts(message.get("content"))
    # (joined only when both are there: most messages have neither, and a generator to
    # join two texts was most of this call)
    return f"{own}\n{parts}" if own and parts else own or parts


def _calls_of(
    message: dict[str, Any],
    trace: Trace,
    items: Items,
    index: int,
    steps: Steps,
    cut: str | None = None,
) -> list[Call]:
    """The calls of a message's `tool_calls` (and legacy `function_call`), the message at
    `steps` in item `index`: a `tool_calls` that is no list or a call `id` that is not
    text (a result's link) is the run's error at its place; a call whose function is not
    an object or whose name is not text is the run's error too, never a call read past:
    `no tool X` must not pass on a call of X nobody could read. `cut`: why the response
    was cut (`arguments_if_whole`)."""
    found: list[Call] = []
    calls = message.get("tool_calls")
    if calls is not None and not isinstance(calls, list):
        raise items.wrong_type(index, (*steps, "tool_calls"), calls, "a list", _CALLS_HINT)
    for n, call in enumerate(calls or ()):
        here = (*steps, "tool_calls", n)
        if not isinstance(call, dict):
            raise items.wrong_type(index, here, call, "a tool call (an object)", _CALLS_HINT)
        call_id = call.get("id")
        if call_id is not None and not isinstance(call_id, str):
            raise items.wrong_type(index, (*here, "id"), call_id, "text", _CALLS_HINT)
        # a custom tool's call (`type: "custom"`) carries free text as its `input`, read
        # as the Responses API's `custom_tool_call` is; any other call is a function's
        custom = call.get("type") == "custom" or ("custom" in call and "function" not in call)
        key, field = ("custom", "input") if custom else ("function", "arguments")
        function = call.get(key, MISSING)
        if not isinstance(function, dict):
            raise items.wrong_type(index, (*here, key), function, "an object", _CALLS_HINT)
        name = function.get("name", MISSING)
        if not isinstance(name, str) or not name:
            raise items.wrong_type(
                index, (*here, key, "name"), name, "a tool's name (non-empty text)", _CALLS_HINT
            )
        value = function.get(field, "")
        args = (
            parse_json_text(value)
            if custom
            else arguments_if_whole(value, name, _call_label(name, call_id), cut, trace)
        )
        found.append((name, args, call_id))
    legacy = message.get("function_call")
    if legacy is not None:
        legacy = an_object(legacy, "a message's `function_call`")
        name = tool_name(legacy.get("name", MISSING), "function_call.name", "a function call")
        args = arguments_if_whole(legacy.get("arguments", ""), name, name, cut, trace)
        found.append((name, args, None))
    return found


def _completion(body: dict[str, Any], trace: Trace, items: Items, index: int) -> None:
    choices = body.get("choices")
    choice = choices[0] if isinstance(choices, list) and choices else None
    if choice is not None:
        choice = an_object(choice, "a chat.completion's `choices[0]`")
    message = choice.get("message") if choice is not None else None
    if message is not None:
        message = an_object(message, "`choices[0].message`")
        content = message.get("content")
        text = content if type(content) is str else text_of_parts(content)
        if message.get("audio") is not None:  # (an audio reply: its words are the answer)
            text = answer_or_transcript(text, _transcript_of(message["audio"]), trace)
        if "refusal" in message:  # (most bodies: `"refusal": null`)
            refusal = message["refusal"]
            if refusal is not None and not isinstance(refusal, str):
                raise items.wrong_type(
                    index, ("choices", 0, "message", "refusal"), refusal, "text or null"
                )
            text = answer_or_refusal(text, message_refusal(message), trace)
    else:
        text = text_value(choice.get("text"), "text", "a choice") if choice is not None else ""
    reason = choice.get("finish_reason") if choice is not None else None
    if reason == "length":
        trace.note(LENGTH_NOTE)
    if isinstance(choices, list) and len(choices) > 1:
        trace.skip("choices after the first (n > 1)", len(choices) - 1)
    model = body.get("model")
    usage = body.get("usage")
    trace.llm(
        filtered(text, reason, trace),
        usage_of(usage, _CHAT_USAGE),
        model=model if isinstance(model, str) else None,
        cache=openai_cached(usage, *CHAT_CACHED),
        tier=body.get("service_tier"),
    )
    if message is not None and (
        message.get("tool_calls") is not None or message.get("function_call") is not None
    ):
        cut = _TOKENS_IN_THEM if reason == "length" else None
        where = ("choices", 0, "message")
        for name, args, call_id in _calls_of(message, trace, items, index, where, cut):
            trace.call(name, args, call_id)


def _transcript(body: dict[str, Any], items: Items, index: int, trace: Trace) -> int:
    """Read a request transcript (item `index`); gives how many steps it added (its
    assistant messages, less those that echo a response read before it)."""
    model = body.get("model") if isinstance(body.get("model"), str) else None
    added = 0
    echoed: set[str] = set()  # the ids of calls made before, which this transcript echoes
    for m, message in enumerate(body["messages"]):
        if not isinstance(message, dict):
            raise items.error(index, f"a message of {items.where(index)} is not an object")
        role = kind_value(message.get("role", MISSING), "role", "a message")
        if role == "assistant":
            trace.saw("assistant message")
            text = text_of_parts(message.get("content"))
            calls = _calls_of(message, trace, items, index, ("messages", m))
            new = trace.new_calls(calls, echoed)
            if new is None:  # (the message is a response read before, echoed)
                continue
            text = answer_or_refusal(text, message_refusal(message), trace)
            trace.llm(text, None, model=model)
            added += 1
            for name, args, call_id in new:
                trace.call(name, args, call_id)
        elif role == "tool":
            trace.saw("tool message")
            call_id = link_id(message.get("tool_call_id"), "tool_call_id", "a tool message")
            output = text_of_parts(message.get("content"))
            if trace.echoes_result(call_id, echoed, "tool messages echoing a result read before"):
                continue
            if call_id is not None and trace.has_call(call_id):
                trace.result(call_id, output)
            else:
                trace.skip("tool messages whose tool_call_id names no call")
        elif role == "function":
            trace.saw("function message")
            named = tool_name(message.get("name", MISSING), "name", "a function message")
            found = trace.known_call(None, named)
            if found is not None:
                trace.result(found, text_of_parts(message.get("content")))
            else:
                trace.skip("function messages naming no call")
        else:
            trace.saw(f"{role} message")
    return added


#: A call's arguments (`Call`'s second field).
_ARGUMENTS = operator.itemgetter(1)


def _responses_input(body: dict[str, Any], items: Items, index: int, trace: Trace) -> int:
    """Read a Responses API request's `input` (item `index`) as a transcript: each run of
    a model's items (an assistant message, its calls, its reasoning) is one step, read as
    a response body's `output` is (`_response`), and each call's output item the result of
    the call its `call_id` names. A turn whose calls all were read before in the file is
    that response echoed back (skipped, counted: `Trace.new_calls`), as in a Chat
    transcript. Gives how many steps it added (none records token usage)."""
    model = body.get("model") if isinstance(body.get("model"), str) else None
    added = 0
    echoed: set[str] = set()
    turn: list[dict[str, Any]] = []

    def end_turn() -> None:
        nonlocal added
        if not turn:
            return
        made = list(turn)
        turn.clear()
        calls = [_input_call(i, trace) for i in made if i["type"] == "function_call"]
        new = trace.new_calls(calls, echoed)
        if new is None:
            return
        # (the kept calls' arguments as `_input_call` read them, in order: each text
        # parsed once; `_response` reads them alike, the turn having no `status`)
        if echoed:
            kept = [
                i for i in made if i["type"] != "function_call" or i.get("call_id") not in echoed
            ]
            read = iter([args for _, args, call_id in calls if call_id not in echoed])
        else:  # (most requests echo no call: every item kept, made into no list again)
            kept, read = made, map(_ARGUMENTS, calls)
        response = {"model": model, "output": kept}
        _response(response, trace, items, index, ("input",), arguments=read)
        added += 1

    for n, item in enumerate(body["input"]):
        if not isinstance(item, dict):
            raise items.wrong_type(index, ("input", n), item, "an input item (an object)")
        kind = item.get("type", "message")
        role = item.get("role")
        if kind == "message" and role == "assistant":
            turn.append(_as_output_message(item, items, index, n))
        elif is_among(kind, _TURN_ITEMS):
            check_output_item(item, items, index, ("input", n))
            turn.append(item)
        else:
            end_turn()
            if is_among(kind, _OUTPUT_ITEMS):
                _input_result(item, trace, echoed)
            elif kind == "message":
                trace.saw(f"{role} message" if isinstance(role, str) else "message")
            elif kind == "item_reference":
                trace.skip("item references (items of an earlier response, not in the file)")
            else:
                trace.skip(f"input items of type `{kind}`")
    end_turn()
    return added


def _as_output_message(item: dict[str, Any], items: Items, index: int, n: int) -> dict[str, Any]:
    """An assistant message of a request's `input` as a response's `output` message: its
    `content` text (an easy input message's), or its parts."""
    content = item.get("content")
    if isinstance(content, str):
        return {"type": "message", "content": [{"type": "output_text", "text": content}]}
    message = {**item, "type": "message"}
    check_output_item(message, items, index, ("input", n))
    return message


def _input_call(item: dict[str, Any], trace: Trace) -> Call:
    """A `function_call` input item as a call (for telling an echoed turn)."""
    name = tool_name(item.get("name", MISSING), "name", "a `function_call` item")
    call_id = link_id(item.get("call_id"), "call_id", "a `function_call` item")
    return (
        name,
        arguments_of(item.get("arguments", ""), _call_label(name, call_id), trace),
        call_id,
    )


def _input_result(item: dict[str, Any], trace: Trace, echoed: set[str]) -> None:
    """A call's output item of a request's `input`: the result of the call its `call_id`
    names (one echoing a result read before: skipped, counted)."""
    call_id = link_id(item.get("call_id"), "call_id", f"a `{item['type']}` item")
    if trace.echoes_result(call_id, echoed, "call outputs echoing a result read before"):
        return
    if call_id is not None and trace.has_call(call_id):
        trace.result(call_id, blocks_text(item.get("output"), _OUTPUT_TEXT))
    else:
        trace.skip(f"{item['type']} items whose call_id names no call")


class _Stream:
    """The chunks of one streamed chat completion, reassembled."""

    def __init__(self, start: int) -> None:
        self.start = start
        self.text: list[str] = []
        self.refusal: list[str] = []
        self.transcript: list[str] = []  # an audio reply's, in pieces
        self.cut_short = False  # a `finish_reason` of `length`
        self.reason: Any = None  # its `finish_reason`
        self.calls: list[dict[str, Any]] = []  # (in the order their first deltas came)
        self.at_index: dict[int, dict[str, Any]] = {}  # the call each `index` last named
        self.last: dict[str, Any] | None = None  # the call the last delta was of
        self.legacy: dict[str, Any] | None = None  # a legacy `function_call`'s
        self.usage: tuple[float, float] | None = None
        self.cache: dict[str, float] | None = None  # (the usage chunk's prompt-cache reads)
        self.model: str | None = None
        self.tier: Any = None  # (each chunk's `service_tier`: the last one said)
        self.finished = False

    def add(self, chunk: dict[str, Any], trace: Trace, items: Items, index: int) -> None:
        """Take in one chunk (item `index` of `items`, for errors)."""
        trace.saw("chat.completion.chunk")
        if isinstance(chunk.get("model"), str):
            self.model = chunk["model"]
        if chunk.get("service_tier") is not None:
            self.tier = chunk["service_tier"]
        usage = usage_of(chunk.get("usage"), _CHAT_USAGE)
        if usage is not None:
            self.usage = usage
            self.cache = openai_cached(chunk["usage"], *CHAT_CACHED)
        for n, choice in enumerate(chunk.get("choices") or []):
            if not isinstance(choice, dict):
                continue
            if choice.get("index", 0) != 0:
                trace.skip("deltas of choices after the first (n > 1)")
                continue
            if choice.get("finish_reason"):
                self.finished = True
                self.reason = choice["finish_reason"]
                self.cut_short = self.cut_short or self.reason == "length"
            delta = choice.get("delta")
            if not isinstance(delta, dict):
                continue
            if delta.get("content") is not None:
                self.text.append(text_value(delta["content"], "delta.content", "a chunk"))
            if delta.get("refusal") is not None:
                self.refusal.append(text_value(delta["refusal"], "delta.refusal", "a chunk"))
            if delta.get("audio") is not None:
                self.transcript.append(_transcript_of(delta["audio"]))
            parts = delta.get("tool_calls")
            if parts is not None and not isinstance(parts, list):
                raise items.wrong_type(
                    index, ("choices", n, "delta", "tool_calls"), parts, "a list", _CALLS_HINT
                )
            for k, entry in enumerate(parts or ()):
                part = an_object(entry, "a streamed tool call delta")
                call_id = part.get("id")
                if call_id is not None and not isinstance(call_id, str):
                    # (tested here: the call is made, and its id used, when the stream ends)
                    raise items.wrong_type(
                        index,
                        ("choices", n, "delta", "tool_calls", k, "id"),
                        call_id,
                        "text",
                        _CALLS_HINT,
                    )
                at = part.get("index")
                if type(at) is not int and (at is not None or "index" in part):
                    raise items.error(
                        index,
                        f"a streamed tool call's `index` is {describe(at)}, not a whole number",
                        "each tool call delta of a stream says which call it is by `index`",
                    )
                slot = self.slot(at, call_id or None)
                if call_id:
                    slot["id"] = link_id(call_id, "id", "a streamed tool call")
                function = part.get("function")
                if function is not None:
                    self.take(slot, an_object(function, "a streamed tool call's `function`"))

            legacy = delta.get("function_call")
            if legacy is not None:  # (a legacy function call, streamed as `tool_calls` are)
                if self.legacy is None:
                    self.legacy = {"id": None, "name": None, "arguments": []}
                    self.calls.append(self.legacy)
                self.take(self.legacy, an_object(legacy, "a streamed `function_call`"))

    def slot(self, at: int | None, call_id: str | None) -> dict[str, Any]:
        """The call a tool call delta of `index` `at` (`None`: no `index` key) and id
        `call_id` continues, or a new one (made at its first delta only). OpenAI numbers
        the calls by `index`, but OpenAI-compatible servers differ: Ollama gives every
        call `index` 0, and Gemini, Mistral and older Ollama give none, each call whole
        in one delta with its own id. So a delta with an id other than its call's opens
        a new call, and one without an `index` continues the call of the delta before
        it: two calls are never read as one (their arguments joined, the first lost)."""
        slot = self.at_index.get(at) if at is not None else self.last
        if slot is None or (call_id is not None and slot["id"] not in (None, call_id)):
            slot = {"id": None, "name": None, "arguments": []}
            self.calls.append(slot)
            if at is not None:
                self.at_index[at] = slot
        self.last = slot
        return slot

    @staticmethod
    def take(slot: dict[str, Any], function: dict[str, Any]) -> None:
        """Add a delta's `function` (its name, a piece of its arguments) to its call."""
        if function.get("name") not in (None, ""):  # (later deltas may say "")
            slot["name"] = tool_name(function["name"], "function.name", "a streamed tool call")
        if function.get("arguments") is not None:
            slot["arguments"].append(
                text_value(function["arguments"], "function.arguments", "a streamed tool call")
            )

    def finish(self, items: Items, trace: Trace, done: bool, error: str | None = None) -> None:
        """Give the stream's step; `error`: the words of the error chunk that ended it. A
        stream without a `finish_reason` (nor an error chunk) is cut (an error), named by
        the call whose arguments it left unfinished, if any."""
        cut: set[int] = set()  # calls whose arguments the run cut (noted once)
        why = _ERROR_IN_THEM if error is not None else _TOKENS_IN_THEM if self.cut_short else None
        for n, slot in enumerate(self.calls):
            text = "".join(slot["arguments"])
            if why is not None and not is_json_text(text):  # ("" too: begun, nothing written)
                trace.cut_call(slot["name"], "arguments are", why)
                cut.add(n)
            elif not self.finished and text.strip() and not is_json_text(text):
                raise items.error(
                    self.start,
                    f"the stream is cut in the middle of tool call #{n + 1} "
                    f"({slot['name'] or 'no name'}): its arguments end at {text[-20:]!r}",
                    "record the whole stream: a tool call's arguments are read only when complete",
                )
        if not self.finished and not done and error is None:
            raise items.error(
                self.start,
                "the stream ends before a `finish_reason`: the recording is cut",
                "record the whole stream, up to the chunk with a finish_reason",
            )
        if self.cut_short:
            trace.note(LENGTH_NOTE)
        text = answer_or_transcript("".join(self.text), "".join(self.transcript), trace)
        text = answer_or_refusal(text, "".join(self.refusal), trace)
        trace.llm(
            filtered(text, self.reason, trace),
            self.usage,
            model=self.model,
            cache=self.cache,
            tier=self.tier,
        )
        for n, slot in enumerate(self.calls):
            if not slot["name"]:
                raise items.error(
                    self.start,
                    f"streamed tool call #{n + 1} has no `function.name` in any of its "
                    "deltas: the tool it calls cannot be named",
                    "record the whole stream: a tool call's first delta names its function",
                )
            text = "".join(slot["arguments"])
            if n in cut:  # (not whole: unknown)
                trace.call(slot["name"], MISSING, slot["id"])
            else:
                label = _call_label(slot["name"], slot["id"])
                trace.call(slot["name"], arguments_of(text, label, trace), slot["id"])
        if error is not None:
            trace.ended_in_error(error)


def _finish_streams(
    streams: dict[str, _Stream], items: Items, trace: Trace, done: bool, error: str | None = None
) -> None:
    for stream in streams.values():
        stream.finish(items, trace, done, error)
    streams.clear()


_OUTPUT_HINT = (
    "a response's `output` is a list of items, each an object with a text `type` "
    "(`message`, `function_call`, …); a message's `content` is a list of parts; fix or "
    "re-record the trace"
)


def check_output_item(item: Any, items: Items, index: int, steps: Steps) -> None:
    """Raise the run's error, naming the field, when an item of a response's `output` (at
    `steps` in item `index`) is no object, its `type` is not text (it is looked up in
    tables: a list there cannot be), or a message's `content` is no list."""
    if not isinstance(item, dict):
        raise items.wrong_type(index, steps, item, "an output item (an object)", _OUTPUT_HINT)
    kind = item.get("type", MISSING)
    if not isinstance(kind, str):
        raise items.wrong_type(index, (*steps, "type"), kind, "text", _OUTPUT_HINT)
    content = item.get("content")
    if kind == "message" and content is not None and not isinstance(content, list):
        raise items.wrong_type(index, (*steps, "content"), content, "a list", _OUTPUT_HINT)


#: A call or result read from a response's `output`: its tool, arguments, id, result and
#: whether it is a `function_call_output` (the result of a call made before). The result
#: is `(output, is_error)`, `None` when the item has none (its application runs the
#: tool), or `MISSING` when the API ran the tool and the item does not record its result.
_Made = tuple[str, Any, str | None, Any, bool]


def is_builtin_call(item: Any) -> bool:
    """Whether `item` is a Responses API built-in tool's call item (`web_search_call`, …)."""
    return isinstance(item, dict) and item.get("type") in _BUILTIN_CALLS


def builtin_call(item: dict[str, Any]) -> tuple[str, Any, str | None, Any]:
    """A built-in tool's call item (`is_builtin_call`) as (tool, arguments, call id,
    result): the tool named by its type less `_call` (`web_search`), its arguments the
    item's fields `_BUILTIN_CALLS` names, and its result as `_builtin_result` gives it."""
    kind = item["type"]
    keys, where = _BUILTIN_CALLS[kind]
    args = {k: item[k] for k in keys if k in item}
    # one the application runs is answered by an output item naming its `call_id`
    named = "call_id" if where is None and item.get("call_id") is not None else "id"
    cid = link_id(item.get(named), named, f"a `{kind}` item")
    return kind.removesuffix("_call"), args, cid, _builtin_result(item, where)


def mcp_call(item: dict[str, Any]) -> tuple[str, Any, str | None, tuple[Any, bool]]:
    """A Responses API `mcp_call` item (a remote MCP server's tool the API ran) as (tool,
    arguments, call id, (its output or error, whether it failed)): it carries its own."""
    args = parse_json_text(item.get("arguments"))
    name = tool_name(item.get("name", MISSING), "name", "an `mcp_call` item")
    cid = link_id(item.get("id"), "id", "an `mcp_call` item")
    failed = item.get("error") is not None
    return name, args, cid, (item.get("error") if failed else item.get("output"), failed)


def _builtin_result(item: dict[str, Any], where: tuple[str, ...] | None) -> Any:
    """The result of a built-in tool's call `item`, found at the path `where` (`None`:
    the application runs the tool, and sends its result back in an item of its own): as
    `(output, is_error)`, or `MISSING` when the API ran the tool and the item records no
    result (`null`: the request's `include` did not ask for it), which is unknown, never
    "no result": `not tool web_search result contains "rain"` must not pass on it."""
    if where is None:
        return None
    value: Any = item
    for key in where:
        value = value.get(key) if isinstance(value, dict) else None
    failed = item.get("status") == "failed"
    if value is None:
        return ("", True) if failed else MISSING
    return (value, failed)


def _response(
    body: dict[str, Any],
    trace: Trace,
    items: Items,
    index: int,
    steps: Steps,
    *,
    arguments: Iterator[Any] | None = None,
) -> None:
    """One response body (at `steps` in item `index`). `arguments`, given for a turn of
    a request's `input`: its `function_call` items' arguments, in order, as they were
    read already; its items passed `check_output_item` there too (where an error names
    the item's place in the request), and are not checked again."""
    text: list[str] = []
    refusals: list[str] = []
    calls: list[_Made] = []
    output = body.get("output")
    if output is not None and not isinstance(output, list):
        raise items.wrong_type(index, (*steps, "output"), output, "a list", _OUTPUT_HINT)
    cut = _INCOMPLETE_IN_THEM if body.get("status") == "incomplete" else None
    for n, item in enumerate(output or ()):
        if arguments is None:
            check_output_item(item, items, index, (*steps, "output", n))
        kind = item["type"]
        if kind == "message":
            for found in listed(item.get("content"), "content", "a `message` output item"):
                part = an_object(found, "a part of a `message` item's `content`")
                part_kind = kind_value(part.get("type"), "type", "a message part")
                if part_kind == "output_text":
                    text.append(text_value(part.get("text"), "text", "an output_text part"))
                elif part_kind == "refusal":
                    refusals.append(text_value(part.get("refusal"), "refusal", "a refusal part"))
                else:
                    trace.skip("message parts other than output_text and refusal")
        elif kind in ("function_call", "custom_tool_call"):
            name = tool_name(item.get("name", MISSING), "name", f"a `{kind}` item")
            cid = link_id(item.get("call_id"), "call_id", f"a `{kind}` item")
            if kind == "function_call":
                if arguments is not None:
                    args = next(arguments)
                else:
                    label = _call_label(name, cid)
                    args = arguments_if_whole(item.get("arguments", ""), name, label, cut, trace)
            else:
                args = parse_json_text(item.get("input"))
            calls.append((name, args, cid, None, False))
        elif kind in _OUTPUT_ITEMS:
            cid = link_id(item.get("call_id"), "call_id", f"a `{kind}` item")
            output = blocks_text(item.get("output"), _OUTPUT_TEXT)
            calls.append(("", None, cid, (output, False), True))
        elif kind == "mcp_call":  # (it carries its own output or error)
            calls.append((*mcp_call(item), False))
        elif kind in _BUILTIN_CALLS:
            calls.append((*builtin_call(item), False))
        elif kind == "reasoning":
            trace.skip("reasoning items (not answer text)")
        else:
            trace.skip(f"output items of type `{kind}`")
    model = body.get("model") if isinstance(body.get("model"), str) else None
    answer = answer_or_refusal("".join(text), "\n".join(refusals), trace)
    details = body.get("incomplete_details")
    reason = details.get("reason") if isinstance(details, dict) else None
    answer_read = filtered(answer, reason, trace)
    usage = body.get("usage")
    trace.llm(
        answer_read,
        usage_of(usage, _RESPONSES_USAGE),
        model=model,
        cache=openai_cached(usage, *RESPONSES_CACHED),
        tier=body.get("service_tier"),
    )
    for name, args, call_id, result, is_output in calls:
        if is_output:  # a function_call_output: the result of a call made earlier
            if call_id is not None and trace.has_call(call_id):
                trace.result(call_id, result[0])
            else:
                trace.skip("function_call_output items whose call_id names no call")
            continue
        cid = trace.call(name, args, call_id)
        if result is MISSING:
            trace.unread_result(cid)
        elif result is not None:
            trace.result(cid, result[0], is_error=result[1])
    error = body.get("error")
    if body.get("status") == "failed" or isinstance(error, dict):
        message = error.get("message") if isinstance(error, dict) else None
        trace.error(str(message or "the response failed"))
    elif body.get("status") == "incomplete":
        trace.note("a response is incomplete (status `incomplete`): its answer may be cut")


class _ResponseStream:
    """The events of one streamed Responses API call."""

    def __init__(self, start: int) -> None:
        self.start = start
        self.items: list[Any] = []
        self.model: Any = None  # (from `response.created`: for a stream that fails)
        #: the items begun and not done, by `output_index`, each with the text or
        #: arguments streamed into it so far (read only when the stream fails)
        self.begun: dict[Any, tuple[Any, list[str]]] = {}


def _response_event(
    event: dict[str, Any], stream: _ResponseStream, trace: Trace, items: Items, index: int
) -> bool:
    """Read one streaming event (item `index`); True when it ends the stream."""
    kind = event["type"]
    trace.saw("response event")
    if kind == "response.created" and isinstance(event.get("response"), dict):
        stream.model = event["response"].get("model")
    elif kind == "response.output_item.added":
        stream.begun[event.get("output_index")] = (event.get("item"), [])
    elif kind in ("response.output_text.delta", "response.function_call_arguments.delta"):
        at = event.get("output_index")
        if at not in stream.begun:  # (a text delta whose item's start was not recorded)
            stream.begun[at] = ({"type": "message"}, [])
        stream.begun[at][1].append(text_value(event.get("delta"), "delta", f"a `{kind}` event"))
    if kind == "response.output_item.done":
        # (tested here, where it is in the file: the body the stream ends in holds it)
        check_output_item(event.get("item", MISSING), items, index, ("item",))
        stream.items.append(event.get("item"))
        stream.begun.pop(event.get("output_index"), None)
    if kind not in _TERMINAL:
        return False
    body = event.get("response")
    if not isinstance(body, dict):
        body = {}
    if kind == "response.failed":  # an ending in the API's error, as the `error` event
        error = body.get("error")
        words = _error_words(error) if isinstance(error, dict) else "the response failed"
        if body.get("output"):  # (its own error is the ending's, said once)
            _response({**body, "status": None, "error": None}, trace, items, index, ("response",))
            trace.ended_in_error(words)
        else:  # (the API leaves it empty: what was streamed is the output)
            _response_failed(stream, words, trace, items, index, body)
        return True
    if not body.get("output") and stream.items:
        body = {**body, "output": stream.items}
    _response(body, trace, items, index, ("response",))
    return True


def _response_failed(
    stream: _ResponseStream,
    error: str,
    trace: Trace,
    items: Items,
    index: int,
    body: dict[str, Any] | None = None,
) -> None:
    """A Responses API stream that failed at item `index`: the API's `error` event, or a
    `response.failed` whose `body` has no output (the API leaves it empty). Its items
    done, and those begun and cut off (the text streamed so far; a function call whose
    arguments were cut: unknown), read as a body (with the usage of `body`), then the
    error."""
    output = list(stream.items)
    for begun, pieces in stream.begun.values():
        item = begun if isinstance(begun, dict) else {}
        kind = item.get("type")
        if kind == "message":
            part = {"type": "output_text", "text": "".join(pieces)}
            output.append({**item, "type": "message", "content": [part]})
        elif kind == "function_call":
            text = "".join(pieces)
            cut = not is_json_text(text)
            if cut:
                trace.cut_call(item.get("name"), "arguments are", _ERROR_IN_THEM)
            output.append({**item, "arguments": MISSING if cut else text})
        else:
            trace.skip(f"output items of type `{kind}` the error cut off")
    model = stream.model if body is None or body.get("model") is None else body["model"]
    usage = None if body is None else body.get("usage")
    tier = None if body is None else body.get("service_tier")
    cut_off = {"model": model, "output": output, "usage": usage, "service_tier": tier}
    _response(cut_off, trace, items, index, ())
    trace.ended_in_error(error)
