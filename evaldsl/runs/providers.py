"""The normalised events every provider and telemetry adapter builds, and the items it reads.

Takes what an adapter found in its format (an LLM call with its answer text and usage, a tool
call, a tool result, an error) and gives the traceplay-style events the run index reads, so
the index, the compiler, mutation testing and scoring need no per-format code:

- `llm.request` `{id, type, model?, at?}`: one LLM call (a step);
- `llm.response` `{id, type, requestId, output, usage?, model?, status, at?, latencyMs?}`:
  `output` is the answer text only (text blocks and parts; a response with only tool calls
  has `""`), `usage` is `{promptTokens, completionTokens}` when the format records usage;
  `cacheTokens` `{write5m, write1h, read}` (Anthropic's) or `{cached}` (OpenAI's): the
  prompt-cache tokens among `promptTokens`, which `cost` prices apart
  (`prices.cache_premium`); `serviceTier`: the service tier the response says billed it,
  when not the standard one (`prices.billed_tier`), which `cost` prices at that tier's
  price (`prices.tier_cost`);
- `tool.call` `{id, type, name, arguments, callId, at?}`;
- `tool.result` `{id, type, callId, output, isError?, at?}`;
- `agent.error` `{id, type, message, at?}`.

`Trace` collects them with what was recognised and skipped, and makes the `Run` (a
`RunError` when nothing was recognised). A value a reader must read and cannot (a tool
call's name that is not text, a usage that is not an object of counts, a message whose role
or content has a type the format never writes there) is a `BadValue`, which the reading
turns into the run's error at the item that holds it: never a call, a step, a result or a
count left out while the run passes (`tool_name`, `link_id`, `text_value`, `usage_of`,
`text_of_parts`). What the format allows and evaldsl does not read (a block or an item of
a type it does not know, a result naming no call) stays a skip, counted and shown.
`Items` is what an adapter reads: the JSON values of a document, an array, a JSONL file
or an SSE stream, each with where it sits in the file so that an error names its line.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from typing import Any

import attrs
import orjson

from evaldsl.language.jsjson import js_json
from evaldsl.runs.model import MISSING, Reading, Run, RunError, Unrecorded, describe, locate
from evaldsl.runs.prices import billed_tier, tier_note
from evaldsl.runs.surrogates import mended_loads
from evaldsl.runs.text import count_text, token_count


class BadValue(ValueError):
    """A value a reader must read, of a type or shape the format does not allow there; the
    message says what, where in the item and what was found ("a tool call's
    `function.name` is ["execute_shell"], not a tool's name")."""


def shown(value: Any) -> str:
    """A found value for a message: its JSON text, cut at 40 characters, and its kind.

    >>> shown(["execute_shell"]), shown(None), shown(MISSING)
    ('["execute_shell"] (a list)', 'null', 'missing')
    """
    if value is None or value is MISSING:
        return "null" if value is None else "missing"
    text = js_json(value)
    text = text if len(text) <= 40 else text[:39] + "…"
    return f"{text} ({describe(value)})"


def tool_name(value: Any, field: str, what: str = "a tool call") -> str:
    """`value` as the name of the tool a call calls; anything but non-empty text (a list,
    a number, null, `MISSING` for no name, "") is a `BadValue`: a call whose tool nobody can name
    must not pass `no tool X` or count under no tool.

    >>> tool_name("search", "name")
    'search'
    >>> tool_name(7, "name")
    Traceback (most recent call last):
    ...
    evaldsl.runs.providers.BadValue: a tool call's `name` is 7 (a number), not a tool's name
    """
    if isinstance(value, str) and value:
        return value
    if value is MISSING:
        raise BadValue(f"{what} has no `{field}`: the tool it calls cannot be named")
    found = "is empty" if value == "" else f"is {shown(value)}"
    raise BadValue(f"{what}'s `{field}` {found}, not a tool's name")


def link_id(value: Any, field: str, what: str) -> str | None:
    """A call id (`None` when absent or null); any other non-text value is a `BadValue`:
    an id of the wrong type would link a result to no call, or a call to no result, unseen.
    """
    if value is None or isinstance(value, str):
        return value
    raise BadValue(f"{what}'s `{field}` is {shown(value)}, not an id (text)")


def text_value(value: Any, field: str, what: str) -> str:
    """A piece of text the answer is made of (`""` when absent or null); anything else is
    a `BadValue`, never its Python text nor nothing."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    raise BadValue(f"{what}'s `{field}` is {shown(value)}, not text")


def add_text(out: list[str], value: Any, field: str, what: str) -> None:
    """Add `value` to `out`, the pieces of an answer: text is added, null adds nothing,
    anything else is a `BadValue` (an answer nobody read is not "").

    >>> out = []; add_text(out, "hi", "content", "a message"); add_text(out, None, "c", "m"); out
    ['hi']
    """
    if isinstance(value, str):
        out.append(value)
    elif value is not None:
        text_value(value, field, what)


def kind_value(value: Any, field: str, what: str) -> str | None:
    """A field that says what an item is (a `type`, a `role`, a span's kind): text, or
    `None` when absent; anything else is a `BadValue`, never an item read past as one of
    an unknown kind."""
    if value is None or isinstance(value, str):
        return value
    raise BadValue(f"{what}'s `{field}` is {shown(value)}, not text")


def listed(value: Any, field: str, what: str) -> list[Any]:
    """A list field (`[]` when absent or null); anything else is a `BadValue`."""
    if isinstance(value, list):
        return value
    if value is None:
        return []
    raise BadValue(f"{what}'s `{field}` is {shown(value)}, not a list")


def an_object(value: Any, what: str) -> dict[str, Any]:
    """An element that must be an object (a tool call, a message, a block, an item)."""
    if isinstance(value, dict):
        return value
    raise BadValue(f"{what} is {shown(value)}, not an object")


def parse_json_text(value: Any) -> Any:
    """Providers send tool arguments as JSON text; keep the text when it is not JSON.

    >>> parse_json_text('{"q": 1}'), parse_json_text("not json"), parse_json_text(2)
    ({'q': 1}, 'not json', 2)
    """
    if not isinstance(value, str):
        return value
    try:
        return mended_loads(value)
    except orjson.JSONDecodeError:
        return value


#: The first characters of JSON text of an object or a list.
_OPENERS = ("{", "[")


def is_json_text(value: str) -> bool:
    """Whether `value` is complete JSON (a streamed argument cut in the middle is not)."""
    return whole_json(value) is not MISSING


def whole_json(value: str) -> Any:
    """The value of `value` when it is complete JSON, else `MISSING`: what `is_json_text`
    tells and the value it parsed, for a reader that wants both (one parse, not two).

    >>> whole_json('{"q": 1}'), whole_json("null"), whole_json('{"q"') is MISSING
    ({'q': 1}, None, True)
    """
    try:
        return mended_loads(value)
    except orjson.JSONDecodeError:
        return MISSING


@attrs.frozen
class Items:
    """The JSON values an adapter reads, and where each one sits in its file.

    `container` is "document" (one JSON value), "array" (the elements of a top-level
    array), "jsonl" (one value per line) or "sse" (the `data:` payloads of an event
    stream); `lines` holds each value's physical line (JSONL and SSE); `text` is the file's
    text, used only to put a line and column on an error inside an array.
    """

    path: str
    values: list[Any]
    container: str = "document"
    lines: list[int] | None = None
    text: str | None = attrs.field(default=None, repr=False)
    events: list[str | None] | None = None  # SSE `event:` names, when the stream has them

    def __iter__(self) -> Iterator[Any]:
        return iter(self.values)

    def where(self, index: int) -> str:
        """The item in the user's words: "line 3", "element [2]", "the document"."""
        if self.lines is not None:
            return f"line {self.lines[index]}"
        if self.container == "array":
            return f"element [{index}]"
        return "the document"

    def error(self, index: int, message: str, hint: str | None = None) -> RunError:
        """A `RunError` at item `index` (its line, or its place in the array)."""
        if self.lines is not None:
            return RunError(message, path=self.path, line=self.lines[index], hint=hint)
        if self.container == "array" and self.text is not None:
            offset = locate(self.text, [index])
            return RunError.at_offset(
                message, path=self.path, text=self.text, offset=offset, hint=hint
            )
        return RunError(message, path=self.path, hint=hint)

    def wrong_type(
        self,
        index: int,
        steps: tuple[str | int, ...],
        value: Any,
        expected: str,
        hint: str | None = None,
    ) -> RunError:
        """The run's error for a field of item `index` (reached by `steps` inside it) whose
        value is not of the type the format gives it: the field by its path, what it is and
        what belongs there, at the field itself when the file's text is at hand.

        >>> str(Items("m.json", [{"content": [{"type": []}]}]).wrong_type(
        ...     0, ("content", 0, "type"), [], "text"))
        "m.json:1:1: the document's `content[0].type` is a list, not text"
        """
        dotted = "".join(f"[{s}]" if isinstance(s, int) else f".{s}" for s in steps)
        field = f"{self.where(index)}'s `{dotted.lstrip('.')}`"
        if value is MISSING:
            message = f"{field} is missing: {expected} belongs there"
        else:
            message = f"{field} is {describe(value)}, not {expected}"
        if self.text is not None and self.container in ("document", "array"):
            within = (index, *steps) if self.container == "array" else steps
            offset = locate(self.text, within)
            if offset is not None:
                return RunError.at_offset(
                    message, path=self.path, text=self.text, offset=offset, hint=hint
                )
        return self.error(index, message, hint)


def keys_of(values: list[Any], limit: int = 3) -> str:
    """The keys of the first objects, for "nothing was recognised" messages."""
    seen: list[str] = []
    for value in values[:limit]:
        if isinstance(value, dict):
            for key in value:
                if key not in seen:
                    seen.append(key)
    shown = ", ".join(f"`{k}`" for k in seen[:8])
    return shown + (", …" if len(seen) > 8 else "") if seen else "no keys"


#: A call read from a message: its tool, arguments and id.
Call = tuple[str, Any, str | None]


class Trace:
    """The normalised events of one run, built by an adapter, with what it read.

    >>> t = Trace("openai", "a.json", "an object with choices")
    >>> t.saw("chat.completion")
    >>> t.llm("hi", (3, 1), model="gpt-4o-mini")
    >>> [e["type"] for e in t.events]
    ['llm.request', 'llm.response']
    """

    def __init__(self, format: str, path: str, why: str) -> None:
        self.format = format
        self.path = path
        self.why = why
        self.events: list[dict[str, Any]] = []
        self.recognised: dict[str, int] = {}
        self.skipped: dict[str, int] = {}
        self.notes: list[str] = []
        self.output: Any = MISSING
        self._calls: dict[str, dict[str, Any]] = {}  # callId → its tool.call event
        # callIds without a result; a set: taken out in O(1), where a list's remove made
        # a run of many calls that never get one quadratic. Then, by tool name, the
        # callIds of its calls in order, and those that start with `call-`,
        # which `known_call` finds without looking at any other call: a call that got its
        # result leaves them when it reaches the front (`_oldest`). (They were dicts, each
        # result's call taken out at once; but a dict's first key is found by a scan past
        # every key taken out before it, so many calls waiting and then given their
        # results oldest first, as a file of runs whose spans share their times has them,
        # was quadratic: 40,000 took 1.1 s.)
        self._unresolved: set[str] = set()
        # callIds without a result of calls whose name is not text (no reader makes one,
        # but not every reader tests it), oldest first: a lookup by a name that is not
        # text scans these, not every call waiting (which was quadratic in the calls)
        self._unnamed: dict[str, None] = {}
        self._waiting: dict[str, deque[str]] = {}
        self._waiting_made: dict[str, deque[str]] = {}
        self._resolved: set[str] = set()
        self._marks: dict[str, int] = {}  # a repeated callId → the last mark `_renamed` gave
        # What the recording left out (`model.Unrecorded`): responses so far, the positions
        # of those without an output; calls by tool so far, the numbers of those without
        # arguments; callIds whose run recorded no result (unless one comes later); and
        # how to record them, which the adapter says
        self._responses = 0
        self._unread_answers: set[int] = set()
        self._calls_of: dict[str, int] = {}
        self._unread_arguments: dict[str, set[int]] = {}
        self._unread_results: set[str] = set()
        self._cut: dict[str, str] = {}  # tool → why the run cut its calls' arguments
        self.capture_hint = "record the run again with its content"
        self.answers_why = ""  # (`Unrecorded.answers_why`: set by the adapter that knows)
        # for `inspect`'s note
        self._cached = {"write5m": 0.0, "write1h": 0.0, "read": 0.0, "cached": 0.0}
        self._tiers: dict[str, int] = {}  # a tier other than the standard one, as JSON → responses
        #: the tools whose results a case reads (None: every tool's): another tool's result
        #: is kept as written, its JSON text not parsed (`reads.Reads`, set by the reader)
        self.results_read: frozenset[str] | None = None

    # --- what was read ---------------------------------------------------------------

    def saw(self, kind: str, n: int = 1) -> None:
        """Count a source item of `kind` as recognised."""
        self.recognised[kind] = self.recognised.get(kind, 0) + n

    def skip(self, reason: str, n: int = 1) -> None:
        """Count something the adapter read past, by reason (shown by `evaldsl inspect`)."""
        self.skipped[reason] = self.skipped.get(reason, 0) + n

    def note(self, text: str) -> None:
        """A fact that changes what a subject means (said once)."""
        if text not in self.notes:
            self.notes.append(text)

    # --- events ----------------------------------------------------------------------

    def _add(self, event: dict[str, Any], at: str | None) -> dict[str, Any]:
        events = self.events  # (its length taken once: every event of a run comes here)
        seq = len(events)
        event["id"] = f"e{seq + 1}"
        event["seq"] = seq
        if at is not None:
            event["at"] = at
        events.append(event)
        return event

    def llm(
        self,
        text: str | None,
        usage: tuple[float, float] | None,
        *,
        model: str | None = None,
        start: str | None = None,
        end: str | None = None,
        failed: bool = False,
        latency_ms: float | None = None,
        cache: dict[str, float] | None = None,
        tier: Any = None,
    ) -> None:
        """One LLM call: an `llm.request` and its `llm.response` (answer text, usage,
        `cache`: the prompt-cache tokens among the input tokens, `{write5m, write1h, read}`,
        and `tier`: the service tier the response says billed it, as the format writes it).
        A `text` of `None` is an output not recorded: its answer is unknown (the event's
        output is "", and the run's `Unrecorded` names its position)."""
        self._responses += 1
        if text is None:
            self._unread_answers.add(self._responses)
            text = ""
        request: dict[str, Any] = {"type": "llm.request"}
        if model:
            request["model"] = model
        self._add(request, start)
        response: dict[str, Any] = {
            "type": "llm.response",
            "requestId": request["id"],
            "status": 500 if failed else 200,
            "output": text,
        }
        if usage is not None:
            response["usage"] = {"promptTokens": usage[0], "completionTokens": usage[1]}
        if cache is not None and any(cache.values()):
            response["cacheTokens"] = cache
            for key, n in cache.items():
                self._cached[key] += n
        if model:
            response["model"] = model
        if (billed := billed_tier(tier)) is not None:
            response["serviceTier"] = billed
            said = js_json(billed)
            self._tiers[said] = self._tiers.get(said, 0) + 1
        if latency_ms is not None:
            response["latencyMs"] = latency_ms
        self._add(response, end if end is not None else start)

    def call(
        self, name: str, arguments: Any, call_id: str | None = None, at: str | None = None
    ) -> str:
        """A `tool.call`; gives its callId (made up when the format records none).
        `arguments` of `MISSING` were not recorded: the event has none, and the run's
        `Unrecorded` names the call (its tool's N-th), so that `args` tests on it are
        errors, never tests of `{}`."""
        cid = call_id if call_id else f"call-{len(self._calls) + 1}"
        if cid in self._calls:  # a repeated id must not link one result to two calls
            cid = self._renamed(cid)
        event: dict[str, Any] = {"type": "tool.call", "name": name}
        if arguments is not MISSING:
            event["arguments"] = arguments
        event["callId"] = cid
        event = self._add(event, at)
        if isinstance(name, str):
            n = self._calls_of[name] = self._calls_of.get(name, 0) + 1
            if arguments is MISSING:
                self._unread_arguments.setdefault(name, set()).add(n)
        self._calls[cid] = event
        self._unresolved.add(cid)
        if isinstance(name, str):
            _file(self._waiting, name, cid)
            if isinstance(cid, str) and cid.startswith("call-"):
                _file(self._waiting_made, name, cid)
        else:
            self._unnamed[cid] = None
        return cid

    def _renamed(self, cid: str) -> str:
        """The name of a call whose id `cid` an earlier call has: the first of `cid'2`,
        `cid'3`, … no call has. The search starts after the last name given for `cid` (every
        name before it was taken then, and calls are never taken out), so a file whose
        calls all carry one id is read in linear time; appending a mark per repeat made the
        n-th repeat's name n characters long, and such a file quadratic in time and memory."""
        mark = self._marks.get(cid, 1) + 1
        while f"{cid}'{mark}" in self._calls:
            mark += 1
        self._marks[cid] = mark
        return f"{cid}'{mark}"

    def known_call(self, call_id: str | None = None, name: str | None = None) -> str | None:
        """The callId of a call already made that has no result yet: by its id, or else the
        oldest such call of tool `name`. Lets a tool span or a tool message that executes a
        call an LLM response asked for attach its result, instead of counting the call twice.
        """
        if call_id and call_id in self._calls:
            return call_id if call_id not in self._resolved else None
        if isinstance(name, str):  # the oldest of its name
            waiting = (self._waiting_made if call_id else self._waiting).get(name)
            return self._oldest(waiting) if waiting else None
        if name is not None:  # (a name that is not text: no call is filed under it)
            for cid in self._unnamed:  # (a text name equals no name that is not text)
                if self._calls[cid]["name"] == name and (not call_id or cid.startswith("call-")):
                    return cid
        return None

    def _oldest(self, waiting: deque[str]) -> str | None:
        """The first callId of `waiting` still without a result; those before it, which
        have one, leave it (each once: a call gets one result)."""
        unresolved = self._unresolved
        while waiting and waiting[0] not in unresolved:
            waiting.popleft()
        return waiting[0] if waiting else None

    def awaits_results(self) -> bool:
        """Whether a call made has no result yet (else `known_call` finds none)."""
        return bool(self._unresolved)

    def same_call(self, call_id: str | None, name: str, arguments: Any) -> bool:
        """Whether a call already made has this callId, tool name and arguments: a
        transcript that echoes a response's calls names the same calls again."""
        event = self._calls.get(call_id) if call_id else None
        return (
            event is not None
            and event["name"] == name
            and type(event["arguments"]) is type(arguments)
            and event["arguments"] == arguments
        )

    def new_calls(self, calls: list[Call], echoed: set[str]) -> list[Call] | None:
        """The calls of a request transcript's assistant message not read before: a call
        with the id, tool and arguments of a call read before in the file is that call
        echoed back to the model (a log of a response and of the next request), not made
        again; its id joins `echoed`, the transcript's (`echoes_result`). `None` when every
        call is such an echo: the message is that response echoed back, skipped (counted)."""
        same = [c for c in calls if c[2] is not None and self.same_call(c[2], c[0], c[1])]
        if not same:  # (most messages: every call new, and no generator made to say so)
            return calls
        echoed.update(c[2] for c in same if c[2] is not None)
        if calls and len(same) == len(calls):
            self.skip("assistant messages echoing a response read before")
            return None
        return [c for c in calls if c not in same]

    def echoes_result(self, call_id: str | None, echoed: set[str], what: str) -> bool:
        """Whether a transcript's result for `call_id`, a call it echoes (`new_calls`),
        echoes the result read before: then it is skipped, counted as `what`."""
        if call_id in echoed and self.has_result(call_id):
            self.skip(what)
            return True
        return False

    def unmetered(self, steps: int) -> None:
        """Note the `steps` of request transcripts (none: no note), which record no token
        usage, in the words that fit the figures: unknown when no response records usage,
        else counted only from the responses that do."""
        if not steps:
            return
        if any(e["type"] == "llm.response" and "usage" in e for e in self.events):
            some = "1 assistant message" if steps == 1 else f"{steps} assistant messages"
            verb = "records" if steps == 1 else "record"
            self.note(
                f"{some} of a request transcript {verb} no token usage: `tokens` and `cost` "
                "count only the responses that do"
            )
        else:
            self.note(
                "a request transcript records no token usage: `tokens` and `cost` are unknown"
            )

    def has_result(self, call_id: str) -> bool:
        """Whether the call with this callId got its result."""
        return call_id in self._resolved

    def has_call(self, call_id: str) -> bool:
        """Whether a call with this callId was made (resolved or not)."""
        return call_id in self._calls

    def result(
        self, call_id: str, output: Any, *, is_error: bool = False, at: str | None = None
    ) -> None:
        """A `tool.result` for the call `call_id`. A result written as JSON text of an object
        or a list is read as that value (`result $.weather == "SUNNY"`); other text stays
        text (a tool that answered "2001" answered text, not a number)."""
        # (its first character looked at before the text is copied without its leading
        # white space: a tool's result is hundreds of characters, rarely led by a space)
        read = self.results_read
        if (
            isinstance(output, str)
            and (read is None or self._calls[call_id]["name"] in read)
            and (
                output[:1] in _OPENERS or (output[:1].isspace() and output.lstrip()[:1] in _OPENERS)
            )
        ):
            parsed = parse_json_text(output)
            output = parsed if isinstance(parsed, (dict, list)) else output
        event: dict[str, Any] = {"type": "tool.result", "callId": call_id, "output": output}
        if is_error:
            event["isError"] = True
        self._add(event, at)
        self._resolved.add(call_id)
        self._unresolved.discard(call_id)  # (it leaves `_waiting` when it is at the front)
        self._unnamed.pop(call_id, None)

    def unread_result(self, call_id: str) -> None:
        """The call `call_id` ran, but its result was not recorded: unless a result for it
        comes later, its result is unknown (the run's `Unrecorded`)."""
        self._unread_results.add(call_id)

    def unrecorded(self) -> Unrecorded | None:
        """What the recording left out so far (`None`: nothing)."""
        results: dict[str, int] = {}
        for cid in self._unread_results - self._resolved:
            name = self._calls[cid]["name"]
            if isinstance(name, str):
                results[name] = results.get(name, 0) + 1
        if not (self._unread_answers or self._unread_arguments or results):
            return None
        return Unrecorded(
            self.capture_hint,
            self._responses,
            frozenset(self._unread_answers),
            {name: frozenset(ns) for name, ns in self._unread_arguments.items()},
            results,
            dict(self._cut),
            self.answers_why,
        )

    def error(self, message: str, at: str | None = None) -> None:
        """An `agent.error`."""
        self._add({"type": "agent.error", "message": message}, at)

    def ended_in_error(self, error: str) -> None:
        """The `agent.error` and note of a stream that ended in the API's error."""
        self.error(error)
        self.note(f"the run ended in an error ({error}): its answer may be cut")

    def cut_call(self, name: Any, cut: str, why: str) -> None:
        """The note of a tool call whose arguments the run cut (`cut`: "arguments are",
        "input is"; `why`: what stopped it); the reader then gives the call with its
        arguments `MISSING`: unknown (`Unrecorded.cut` says why), never the cut text,
        which a test could pass (`not tool T args $.city == "Paris"`)."""
        self.unwhole_call(name, f"{cut} cut, {why}")

    def unwhole_call(self, name: Any, said: str) -> None:
        """The note of a tool call whose arguments are not whole, `said` why ("arguments
        did not parse …"); the reader gives the call with its arguments `MISSING`:
        unknown (`Unrecorded.cut` says why), never what stands in for them."""
        if isinstance(name, str):
            self._cut[name] = said
        self.note(
            f"tool call `{name}`'s {said}: its arguments are unknown, and a test that reads "
            "them is an error unless a whole call decides it"
        )

    def guard(self, name: str, decision: Any, at: str | None = None) -> None:
        """A guard check (verydia `policy.evaluate`: counted by `guards`)."""
        self._add({"type": "policy.evaluate", "name": name, "decision": decision}, at)

    # --- the run ---------------------------------------------------------------------

    def reading(self) -> Reading:
        written, hour, read, cached = self._cached.values()
        if written or hour or read:
            self.note(
                "input tokens include prompt-cache tokens: "
                f"{count_text(written + hour)} written to the cache ({count_text(hour)} of "
                f"them for 1 hour), {count_text(read)} read from it; `cost` prices them at "
                "Anthropic's multiples of the input price"
            )
        if cached:
            self.note(
                f"input tokens include {count_text(cached)} read from OpenAI's prompt cache "
                "(`cached_tokens`); `cost` prices them at the model's cached-input price"
            )
        for said, n in self._tiers.items():
            self.note(tier_note(said, n))
        return Reading(
            self.format, self.why, dict(self.recognised), dict(self.skipped), tuple(self.notes)
        )

    def run(self, items: Items | None = None, *, latency_ms: float | None = None) -> Run:
        """The `Run`; a `RunError` when nothing in the file was recognised."""
        if not self.events and self.output is MISSING:
            shown = (
                f": the first items have keys {keys_of(items.values)}"
                if items is not None and items.values
                else ""
            )
            what = "holds nothing" if items is not None and not items.values else "has nothing"
            raise RunError(
                f"`{self.path.rsplit('/', 1)[-1]}` {what} evaldsl recognises as an LLM "
                f"call, tool call or result of the {self.format} format{shown}",
                path=self.path,
                hint='name the format with `trace "…" as FORMAT`; '
                "`evaldsl inspect FILE` shows what was read",
            )
        return Run(
            events=self.events,
            output=self.output,
            path=self.path,
            format=self.format,
            latency_ms=latency_ms,
            read=self.reading(),
            unrecorded=self.unrecorded(),
        )


def _file(waiting: dict[str, deque[str]], name: str, cid: str) -> None:
    """Put `cid` last among the calls of `name` in `waiting`."""
    calls = waiting.get(name)
    if calls is None:
        calls = waiting[name] = deque()
    calls.append(cid)


def text_of_parts(parts: Any, text_types: tuple[str, ...] = ("text",)) -> str:
    """The text of a content value: a string, or the text parts of a list (joined by "\\n");
    other parts (images, tool calls, thinking) are not text. `None` has no text; any other
    content (a number, an object), a part that is neither text nor an object, or a text
    part whose text is not text is a `BadValue`: an answer nobody read is not "".

    >>> text_of_parts([{"type": "text", "text": "a"}, {"type": "image_url"}, "b"])
    'a\\nb'
    """
    if isinstance(parts, str):
        return parts
    if parts is None:
        return ""
    if not isinstance(parts, list):
        raise BadValue(f"a message's `content` is {shown(parts)}, not text or a list of parts")
    out: list[str] = []
    for part in parts:
        if isinstance(part, str):
            out.append(part)
        elif not isinstance(part, dict):
            raise BadValue(f"a content part is {shown(part)}, not text or an object")
        elif part.get("type", "text") in text_types:
            value = part.get("text", part.get("content"))
            if isinstance(value, str):
                out.append(value)
            elif value is not None:
                raise BadValue(f"a text part's text is {shown(value)}, not text")
    return "\n".join(out)


def blocks_text(value: Any, text_types: tuple[str, ...] = ("text",)) -> Any:
    """A tool's result as content blocks (a list with text blocks, whose `type` is among
    `text_types`, or one text block) as their text (`text_of_parts`), as a tool message's
    content is read; any other value (a list with no text block: `json` or image blocks
    only) as it is, never "".

    >>> blocks_text([{"type": "text", "text": "a"}, {"type": "image"}]), blocks_text([1])
    ('a', [1])
    """
    if isinstance(value, list) and any(
        isinstance(part, str) or (isinstance(part, dict) and part.get("type") in text_types)
        for part in value
    ):
        return text_of_parts(value, text_types)
    if isinstance(value, dict) and value.get("type") in text_types and "text" in value:
        return text_of_parts([value], text_types)
    return value


def usage_of(usage: Any, pairs: tuple[tuple[str, str], ...]) -> tuple[float, float] | None:
    """(input, output) tokens of a usage object under the first spelling it uses, or `None`
    when there is none (absent, null or `{}`); a count that is negative or not a number is a
    `BadUsage`, and a usage that is not an object, or an object with none of the format's
    spellings (`{"total_tokens": 9}`, another provider's names), a `BadValue`: usage that
    is there and unread is never 0 tokens.

    >>> usage_of({"input_tokens": 3}, (("input_tokens", "output_tokens"),))
    (3, 0)
    >>> usage_of({"total": 9}, (("in", "out"),))
    Traceback (most recent call last):
    ...
    evaldsl.runs.providers.BadValue: a token usage has none of `in`, `out` (it has `total`)
    """
    if usage is None:
        return None
    if not isinstance(usage, dict):
        raise BadValue(f"a token usage is {shown(usage)}, not an object of counts")
    for prompt, completion in pairs:
        if prompt in usage or completion in usage:
            return token_count(usage.get(prompt), prompt), token_count(
                usage.get(completion), completion
            )
    if not usage:
        return None
    names = ", ".join(f"`{name}`" for pair in pairs for name in pair)
    has = ", ".join(f"`{key}`" for key in list(usage)[:4]) + (", …" if len(usage) > 4 else "")
    raise BadValue(f"a token usage has none of {names} (it has {has})")
