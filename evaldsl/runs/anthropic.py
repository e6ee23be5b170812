"""Anthropic: Messages bodies, request transcripts and SSE streams.

Takes `Items` (one body, an array or JSONL of them, or the SSE text as the API streams it)
and gives the normalised events of `providers` (format "anthropic"). Shapes and what
becomes what:

- a Messages response body (`type: "message"`, `content[]`): one step; only `text` blocks
  make the answer (joined with "\\n", but a block next to a cited one, whose `citations`
  Anthropic split it for, with nothing: `answer_text`); `tool_use` and `server_tool_use`
  blocks are tool calls (`name`, `input`, `id`); a `*_tool_result` block
  (`web_search_tool_result`, `code_execution_tool_result`, `mcp_tool_result`, …) is the
  result of the call its `tool_use_id` names: an MCP result's text blocks read as text, a
  server tool's content as its JSON value (a web search's list of `web_search_result`s), an
  error content (`type` `…_tool_result_error`) or `is_error: true` an error result;
  `thinking` blocks are skipped; tokens from `usage.input_tokens`/`output_tokens`, the input
  counting the prompt-cache tokens too (`input_tokens` does not):
  `cache_creation_input_tokens` (of them `cache_creation.ephemeral_1h_input_tokens` for 1
  hour) and `cache_read_input_tokens`, given apart for `cost` (`read_usage`); a
  `stop_reason` of `max_tokens`, `model_context_window_exceeded`, `refusal` or `pause_turn`
  is noted (its text is its answer, which may not be whole: `_STOPS`), and a turn paused
  before any text has no answer (a test of it is an error verdict, not a test of "");
- a request body (`messages[]` whose content holds blocks): each assistant message is one
  step (its `text` blocks the answer, its `tool_use` blocks the calls) and each
  `tool_result` block the result of the call its `tool_use_id` names (`is_error` kept). A
  transcript records no token usage (noted); an assistant message whose calls all have the
  id, tool and arguments of calls read before it in the file is that response echoed back
  (a log of responses and the requests between them): skipped, its calls not made again,
  and a result read before not read again (as OpenAI's: `Trace.new_calls`);
- a stream (`message_start`, `content_block_start`/`delta`/`stop`, `message_delta`,
  `message_stop`, `ping`; SSE or JSONL of the `data:` payloads): each `message_start` opens
  one step; `text_delta` pieces join into the answer (a `citations_delta` marks its block
  cited), `input_json_delta` pieces into a tool call's input (parsed when its block stops);
  usage from `message_start` and the last `message_delta` (its counts are cumulative; a
  count's last value wins), its `stop_reason` read as a body's. A stream that ends before
  `message_delta`/`message_stop`, or inside a tool call's input, is cut: an error. Two
  endings are not cuts: an `error` event (the API's own, say `overloaded_error`) ends the
  stream as a run that ended in an error: what came before is read (a partial answer is the
  answer), then an `agent.error`, and `inspect` notes it; and `stop_reason: "max_tokens"`
  (or `model_context_window_exceeded`) ends it at that limit, noted. In either, a tool
  call whose input was cut off is a call whose arguments are unknown (a test that reads
  them is an error unless a whole call decides it: `Unrecorded.cut`), noted; so is a
  body's last block, a tool call, when the body stopped at such a limit (`_last_call_cut`).

A body `{"type": "error", "error": {…}}` is an error, as is any item of none of these shapes,
and a field the reader needs of another type than the API gives it (a content block that is
no object, a block's `type`, a tool call's `name` or `id` that is not text, a `usage` that
is no object, a message's `content` neither text nor a list, a stream's block `index` that
is not a whole number): the error names the field by its path (`content[2].name`), what it
is and what belongs there, at its place in the file.
"""

from __future__ import annotations

from typing import Any

from evaldsl.runs.events import is_kind
from evaldsl.runs.model import MISSING, describe, is_among
from evaldsl.runs.providers import (
    Call,
    Items,
    Trace,
    kind_value,
    link_id,
    parse_json_text,
    text_of_parts,
    text_value,
    tool_name,
    usage_of,
    whole_json,
)
from evaldsl.runs.text import cache_counts

_USAGE = (("input_tokens", "output_tokens"),)
_CALL_BLOCKS = frozenset({"tool_use", "server_tool_use", "mcp_tool_use"})
#: Result blocks whose `content` list holds content blocks (text, images) read as text; a
#: server tool's result list (`web_search_result`s) is data, read as its JSON value.
_TEXT_RESULTS = frozenset({"tool_result", "mcp_tool_result"})
STREAM_TYPES = frozenset(
    {
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
        "ping",
    }
)


# --- signatures ------------------------------------------------------------------------------


def is_message(d: Any) -> bool:
    """A Messages API response body."""
    return (
        isinstance(d, dict)
        and isinstance(d.get("content"), list)
        and (d.get("type") == "message" or d.get("role") == "assistant")
    )


def is_stream_event(d: Any) -> bool:
    """A streaming event (`message_start`, `content_block_delta`, …)."""
    return isinstance(d, dict) and is_kind(d, STREAM_TYPES)


def is_request(d: Any) -> bool:
    """A request body only Anthropic writes this way: a top-level `system`, or content
    blocks of type `tool_use`/`tool_result`."""
    messages = d.get("messages") if isinstance(d, dict) else None
    if not isinstance(messages, list) or "choices" in d:
        return False
    if "system" in d and all(isinstance(m, dict) and "role" in m for m in messages):
        return True
    for m in messages:
        content = m.get("content") if isinstance(m, dict) else None
        if isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") in ("tool_use", "tool_result") for b in content
        ):
            return True
    return False


SHAPES = {"message": is_message, "stream event": is_stream_event, "messages request": is_request}


def shape_of(d: Any) -> str | None:
    """The Anthropic shape of one item, or `None`."""
    for name, test in SHAPES.items():
        if test(d):
            return name
    return None


# --- reading ---------------------------------------------------------------------------------


def read_anthropic(items: Items, why: str) -> Trace:
    """The events of Anthropic items (see the module doc)."""
    trace = Trace("anthropic", items.path, why)
    stream: _Stream | None = None
    unmetered = 0  # steps of request transcripts, which record no usage
    for index, item in enumerate(items):
        if isinstance(item, dict) and item.get("type") == "error" and stream is not None:
            # the API's own ending of a run that failed, not a cut recording
            trace.saw("error event")
            stream.finish(items, trace, error=error_message(item.get("error")))
            stream = None
            continue
        if is_stream_event(item):
            if item["type"] == "message_start":
                if stream is not None:
                    stream.finish(items, trace)
                stream = _Stream(index)
            elif stream is None:
                raise items.error(
                    index,
                    f"{items.where(index)} is a `{item['type']}` event before any `message_start`",
                    "record the stream from its start",
                )
            stream.add(item, items, index, trace)
            continue
        if stream is not None:
            stream.finish(items, trace)
            stream = None
        if isinstance(item, dict) and isinstance(item.get("error"), dict):
            message = item["error"].get("message")
            said = f": {message}" if isinstance(message, str) else ""
            raise items.error(
                index,
                f"{items.where(index)} is an error body, not an Anthropic message{said}",
                "the API answered with an error: there is no run to check",
            )
        if is_message(item) or (isinstance(item, dict) and isinstance(item.get("content"), list)):
            trace.saw("message")
            _message(item, trace, items, index)
        elif isinstance(item, dict) and isinstance(item.get("messages"), list):
            trace.saw("messages request")
            unmetered += _transcript(item, items, index, trace)
        else:
            found = describe(item)
            if isinstance(item, dict):
                found = "an object without a `content` list"
            raise items.error(
                index,
                f"{items.where(index)} is {found}, not an Anthropic message",
                'an Anthropic message has a "content" list of blocks',
            )
    if stream is not None:
        stream.finish(items, trace)
    trace.unmetered(unmetered)
    return trace


def error_message(error: Any) -> str:
    """The words of a stream's error event's `error` (`{"type", "message"}`), for its
    `agent.error`.

    >>> error_message({"type": "overloaded_error", "message": "Overloaded"})
    'overloaded_error: Overloaded'
    """
    if not isinstance(error, dict):
        return "the stream reported an error"
    words = [str(error[k]) for k in ("type", "message") if error.get(k) not in (None, "")]
    return ": ".join(words) or "the stream reported an error"


#: Steps from an item to a value in it (keys and indices), for errors that name a field.
Steps = tuple[str | int, ...]

_BLOCK_HINT = (
    "an Anthropic message's `content` is a list of blocks: objects with a text `type` "
    "(`text`, `tool_use`, …); a `tool_use` block has a text `name` and `id`; fix or "
    "re-record the trace"
)


def check_block(block: Any, items: Items, index: int, steps: Steps) -> None:
    """Raise the run's error, naming the field, when a content block (at `steps` in item
    `index`) is not an object, or holds a value of a type its fields never have where the
    reader needs it: a block's `type` (looked up in sets: a list there cannot be), a tool
    call's `name` (an object would become a tool's name) and `id` (a result's link)."""
    if not isinstance(block, dict):
        raise items.wrong_type(index, steps, block, "a content block (an object)", _BLOCK_HINT)
    kind = block.get("type", MISSING)
    if not isinstance(kind, str):
        raise items.wrong_type(index, (*steps, "type"), kind, "text", _BLOCK_HINT)
    if kind in _CALL_BLOCKS:
        # (a text block's `text`, like a delta's, is read as text whatever it is)
        for field in ("name", "id"):
            value = block.get(field, MISSING)
            if not isinstance(value, str) and not (field == "id" and value in (MISSING, None)):
                raise items.wrong_type(index, (*steps, field), value, "text", _BLOCK_HINT)


def _blocks(
    content: list[Any],
    trace: Trace,
    model: str | None,
    usage: Any,
    echoed: set[str] | None = None,
    stop: Any = None,
) -> int:
    """One step of blocks that `check_block` passed, which stopped for `stop` (its
    `stop_reason`: noted when its answer is not whole, `_STOPS`); gives the steps it added
    (1, or 0 for a request transcript's message, `echoed` its set, that echoes a response
    read before: `Trace.new_calls`)."""
    text: list[tuple[int, str, bool]] = []  # each text block: where, its text, cited
    calls: list[tuple[dict[str, Any], Call | None]] = []  # call and result blocks, in order
    for n, block in enumerate(content):
        kind = block["type"]  # (an object's text: `check_block` passed it)
        if kind == "text":
            said = text_value(block.get("text"), "text", "a text block")
            text.append((n, said, bool(block.get("citations"))))
        elif kind in _CALL_BLOCKS:
            calls.append((block, _call(block)))
        elif kind.endswith("_tool_result"):
            calls.append((block, None))
        elif kind in ("thinking", "redacted_thinking"):
            trace.skip("thinking blocks (not answer text)")
        else:
            trace.skip(f"content blocks of type `{kind}`")
    made = [call for _, call in calls if call is not None]
    new = made if echoed is None else trace.new_calls(made, echoed)
    if new is None:
        return 0
    tokens, cache = read_usage(usage)
    answer: str | None = answer_text(text)
    if stop == "pause_turn" and not answer:
        # a turn paused before any text: its answer is in the response that continues
        # it, not "" (`not answer contains "sorry"` would pass on nothing)
        answer = None
        trace.capture_hint = _PAUSED_HINT
    # (the tier that billed it: `usage.service_tier`, "standard", "priority" or "batch")
    tier = usage.get("service_tier") if isinstance(usage, dict) else None
    trace.llm(answer, tokens, model=model, cache=cache, tier=tier)
    if stop in _STOPS:
        trace.note(_STOPS[stop])
    for block, call in calls:
        if call is None:
            tool_result(block, trace, echoed)
        elif call in new:
            trace.call(*call)
    return 1


def answer_text(blocks: list[tuple[int, str, bool]]) -> str:
    """The answer of a message's text blocks (each: its place among the content blocks,
    its text, whether it carries citations): joined with "\\n", except that a block next
    to a cited one joins it with nothing. Anthropic splits a cited reply into blocks
    around each cited claim, the spaces inside them ("According to the forecast, ",
    "Paris is 18 C" cited, " today."): one text, read as written.

    >>> answer_text([(0, "Hi.", False), (2, "It is ", False), (3, "18 C", True)])
    'Hi.\\nIt is 18 C'
    """
    out: list[str] = []
    for k, (n, said, cited) in enumerate(blocks):
        if k:
            before, _, was_cited = blocks[k - 1]
            out.append("" if before == n - 1 and (cited or was_cited) else "\n")
        out.append(said)
    return "".join(out)


def _call(block: dict[str, Any]) -> Call:
    what = f"a `{block['type']}` block"
    name = tool_name(block.get("name", MISSING), "name", what)
    return name, block.get("input", {}), link_id(block.get("id"), "id", what)


def read_usage(usage: Any) -> tuple[tuple[float, float] | None, dict[str, float] | None]:
    """(input, output) tokens of an Anthropic `usage` (`None`: no usage) and its
    prompt-cache tokens (`{write5m, write1h, read}`, or `None` when there are none). The
    input counts every token the model took in: `input_tokens` (which leaves the cached
    ones out) plus the cache writes and reads. A count that cannot be read is a
    `BadUsage` (`cache_counts`): never a count taken as 0.

    >>> read_usage({"input_tokens": 100, "cache_creation_input_tokens": 20,
    ...     "cache_read_input_tokens": 80, "output_tokens": 5})
    ((200, 5), {'write5m': 20, 'write1h': 0, 'read': 80})
    """
    pair = usage_of(usage, _USAGE)
    if pair is None or not isinstance(usage, dict):
        return pair, None
    cache = cache_counts(usage)
    if cache is None:
        return pair, None
    return (pair[0] + sum(cache.values()), pair[1]), cache


def tool_result(block: dict[str, Any], trace: Trace, echoed: set[str] | None = None) -> None:
    """The result a `*_tool_result` block holds; `echoed`: a request transcript's calls
    echoed from a response read before (`Trace.echoes_result`)."""
    call_id = link_id(block.get("tool_use_id"), "tool_use_id", f"a `{block['type']}` block")
    if echoed is not None and trace.echoes_result(
        call_id, echoed, "tool results echoing a result read before"
    ):
        return
    if call_id is None or not trace.has_call(call_id):
        trace.skip("tool results whose tool_use_id names no call")
        return
    content = block.get("content")
    text = isinstance(content, list) and block["type"] in _TEXT_RESULTS
    output = text_of_parts(content) if text else content
    failed = block.get("is_error") is True or (
        isinstance(content, dict) and str(content.get("type")).endswith("_tool_result_error")
    )
    trace.result(call_id, output, is_error=failed)


def _usage_field(body: dict[str, Any], items: Items, index: int, steps: Steps) -> Any:
    """A body's `usage`: an object or nothing (a number there is no count of 0 tokens)."""
    usage = body.get("usage")
    if usage is not None and not isinstance(usage, dict):
        raise items.wrong_type(
            index,
            (*steps, "usage"),
            usage,
            "an object",
            '`usage` holds the token counts: {"input_tokens": 10, "output_tokens": 5}',
        )
    return usage


def _message(body: dict[str, Any], trace: Trace, items: Items, index: int) -> None:
    model = body.get("model") if isinstance(body.get("model"), str) else None
    for n, block in enumerate(body["content"]):
        check_block(block, items, index, ("content", n))
    usage = _usage_field(body, items, index, ())
    stop = body.get("stop_reason")
    _blocks(_last_call_cut(body["content"], stop, trace), trace, model, usage, stop=stop)


#: Stop reasons that end a response wherever the model was, in a tool call's input too,
#: and how a cut call's note says it.
_CUT_BY = {
    "max_tokens": "the model ran out of tokens in it (stop_reason `max_tokens`)",
    "model_context_window_exceeded": (
        "the model's context window filled in it (stop_reason `model_context_window_exceeded`)"
    ),
}


def _last_call_cut(content: list[Any], stop: Any, trace: Trace) -> list[Any]:
    """A body's blocks, its last one's input unknown (`MISSING`, noted: `Trace.cut_call`)
    when the response stopped at a limit (`_CUT_BY`) in that block, a tool call: the API
    gives no sign whether its input is whole ("an incomplete tool use block", Anthropic's
    docs say), and a test must not pass on part of it. A stream says where it stopped,
    and is read by what it says (`_Stream.finish`)."""
    why = _CUT_BY.get(stop) if isinstance(stop, str) else None
    last = content[-1] if content else None
    if why is None or not isinstance(last, dict) or not is_among(last.get("type"), _CALL_BLOCKS):
        return content
    trace.cut_call(last.get("name"), "input is", why)
    return [*content[:-1], {**last, "input": MISSING}]


def _transcript(body: dict[str, Any], items: Items, index: int, trace: Trace) -> int:
    """Read a request transcript (item `index`); gives how many steps it added (its
    assistant messages, less those that echo a response read before it)."""
    model = body.get("model") if isinstance(body.get("model"), str) else None
    added = 0
    echoed: set[str] = set()  # the ids of calls made before, which this transcript echoes
    for m, message in enumerate(body["messages"]):
        if not isinstance(message, dict):
            raise items.wrong_type(index, ("messages", m), message, "a message (an object)")
        content = message.get("content")
        role = kind_value(message.get("role", MISSING), "role", "a message")
        if not isinstance(content, str | list):
            raise items.wrong_type(
                index,
                ("messages", m, "content"),
                message.get("content", MISSING),
                "text or a list of content blocks",
                _BLOCK_HINT,
            )
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        if isinstance(content, list):
            for n, block in enumerate(content):
                check_block(block, items, index, ("messages", m, "content", n))
        if role == "assistant":
            trace.saw("assistant message")
            added += _blocks(blocks, trace, model, None, echoed)
        else:
            trace.saw(f"{role} message")
            for block in blocks:
                if block["type"] == "tool_result":
                    tool_result(block, trace, echoed)
    return added


#: The stop reasons of a response whose answer is not the model's whole answer, and their
#: notes (`inspect`): its text is its answer all the same, as a stream's that ended in an
#: error is, but for a paused turn that wrote none (`_PAUSED_HINT`).
_STOPS = {
    "max_tokens": (
        "a response stopped at its token limit (stop_reason `max_tokens`): its answer may be cut"
    ),
    "model_context_window_exceeded": (
        "a response filled the model's context window (stop_reason "
        "`model_context_window_exceeded`): its answer may be cut"
    ),
    "refusal": (
        "a response stopped as the model declined to go on (stop_reason `refusal`): its "
        "answer is the text it wrote before, and may be cut"
    ),
    "pause_turn": (
        "a turn paused in a server tool's loop (stop_reason `pause_turn`): the response to "
        "the request that continues it holds the rest of its answer; a paused turn that "
        "wrote no text has no answer (a test of it is an error verdict)"
    ),
}
_PAUSED_HINT = (
    "its turn paused (stop_reason `pause_turn`) before any text: record the response that "
    "continues it"
)


_STREAM_HINT = (
    "a stream's events are objects: `message_start` holds a `message` object, "
    "`content_block_start` a `content_block` object, `content_block_delta` a `delta` object; "
    "each block event says which block it is by a whole-number `index`; fix or re-record "
    "the stream"
)


def _block_index(event: dict[str, Any], items: Items, index: int, default: int) -> int:
    """Which block a stream's block event is about: a whole number (the blocks are put in
    order by it when the stream ends)."""
    at = event.get("index", default)
    if type(at) is not int:
        raise items.wrong_type(index, ("index",), at, "a whole number", _STREAM_HINT)
    return at


class _Stream:
    """The events of one streamed message, reassembled."""

    def __init__(self, start: int) -> None:
        self.start = start
        self.model: str | None = None
        self.usage: dict[str, Any] = {}  # each count's last value (they are cumulative)
        self.stop_reason: Any = None
        self.blocks: dict[int, dict[str, Any]] = {}
        self.open: set[int] = set()
        self.ended = False

    def add(self, event: dict[str, Any], items: Items, index: int, trace: Trace) -> None:
        kind = event["type"]
        trace.saw(kind)
        if kind == "message_start":
            message = event.get("message", {})
            if not isinstance(message, dict):
                raise items.wrong_type(index, ("message",), message, "an object", _STREAM_HINT)
            if isinstance(message.get("model"), str):
                self.model = message["model"]
            self._usage(_usage_field(message, items, index, ("message",)))
        elif kind == "content_block_start":
            at = _block_index(event, items, index, len(self.blocks))
            block = event.get("content_block", MISSING)
            check_block(block, items, index, ("content_block",))
            # (a block's pieces gathered in lists, joined when the stream ends: text
            # added to text held in a dict is copied whole at every delta, so a long
            # answer streamed in many deltas was quadratic)
            self.blocks[at] = {**block, "_json": [], "_text": None, "_cited": []}
            self.open.add(at)
        elif kind == "content_block_delta":
            started = self.blocks.get(_block_index(event, items, index, -1))
            delta = event.get("delta", {})
            if not isinstance(delta, dict):
                raise items.wrong_type(index, ("delta",), delta, "an object", _STREAM_HINT)
            if started is None:
                raise items.error(index, "a content_block_delta for a block that never started")
            kind = kind_value(delta.get("type", MISSING), "delta.type", "a content_block_delta")
            if kind == "text_delta":
                pieces = started["_text"]
                if pieces is None:  # (the block's own text first, as text)
                    pieces = started["_text"] = [text_value(started.get("text"), "text", "a block")]
                pieces.append(text_value(delta.get("text"), "delta.text", "a text_delta"))
            elif kind == "input_json_delta":
                what = "an input_json_delta"
                started["_json"].append(text_value(delta.get("partial_json"), "partial_json", what))
            elif kind == "citations_delta":  # (its block is cited: `answer_text`)
                started["_cited"].append(delta.get("citation"))
            else:
                trace.skip(f"deltas of type `{kind}`")
        elif kind == "content_block_stop":
            self.open.discard(_block_index(event, items, index, -1))
        elif kind == "message_delta":
            self._usage(_usage_field(event, items, index, ()))
            delta = event.get("delta")
            if isinstance(delta, dict) and delta.get("stop_reason"):
                self.ended = True
                self.stop_reason = delta["stop_reason"]
        elif kind == "message_stop":
            self.ended = True

    def _usage(self, usage: dict[str, Any] | None) -> None:
        # counts in message_delta are cumulative: the last one seen is the total
        read_usage(usage)  # (a usage that is not an object of counts: the error, here)
        if isinstance(usage, dict):  # (a loop: a generator to update it is a frame more)
            for key, count in usage.items():
                if count is not None:
                    self.usage[key] = count

    def finish(self, items: Items, trace: Trace, error: str | None = None) -> None:
        """Read the message; `error`: the words of the error event that ended it."""
        why = None
        if error is not None:
            why = "the run ended in an error in it"
        elif self.stop_reason in _CUT_BY:
            why = _CUT_BY[self.stop_reason]
        for at, block in sorted(self.blocks.items()):
            pieces = block.pop("_text")
            if pieces is not None:
                block["text"] = "".join(pieces)
            text = "".join(block["_json"])
            del block["_json"]
            cited = block.pop("_cited")
            if cited:
                block["citations"] = [*(block.get("citations") or ()), *cited]
            call = is_among(block.get("type"), _CALL_BLOCKS)
            # (a call's input parsed once: to know it is whole, and as its value)
            whole = whole_json(text or "{}") if call and at not in self.open else MISSING
            if call and whole is MISSING:
                if why is None:
                    raise items.error(
                        self.start,
                        f"the stream is cut in the middle of tool call `{block.get('name')}`: "
                        f"its input ends at {text[-20:]!r}",
                        "record the whole stream: a tool call's input is read only when complete",
                    )
                # the run itself stopped there: its arguments are not whole, so unknown
                block["input"] = MISSING
                trace.cut_call(block.get("name"), "input is", why)
            elif text:
                block["input"] = whole if call else parse_json_text(text)
        if not self.ended and error is None:
            raise items.error(
                self.start,
                "the stream ends before `message_delta`/`message_stop`: the recording is cut",
                "record the whole stream, up to message_stop",
            )
        blocks = [b for _, b in sorted(self.blocks.items())]
        _blocks(blocks, trace, self.model, self.usage or None, stop=self.stop_reason)
        if error is not None:
            trace.ended_in_error(error)
