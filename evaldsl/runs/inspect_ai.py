"""Inspect AI eval logs (the JSON `EvalLog`), one sample at a time, as normalised events.

Takes a decoded `EvalLog` (`version`, `status`, `eval{task, model, …}`, `samples[]`) and
the id of one of its samples (or none, when the log has exactly one), and gives the
events of `providers` (format "inspect"). A log with several samples expands into one case
per sample in a suite, named by the sample's id, the way `each` rows do (`sample_ids`), by
epoch, then by id (`sample_order`).

From the sample's `events` transcript:
- a `model` event is one step: model from `model`; the answer from
  `output.choices[0].message.content` (text, or the text parts of a content list); its
  `tool_calls` (`function`, `arguments`, `id`; one with a `parse_error`, whose `{}`
  Inspect kept for arguments it could not parse: unknown arguments) are tool calls, and
  so are the content's
  `tool_use` parts (`ContentToolUse`: a tool the provider ran, such as a web search, with
  no `tool` event; `_server_calls`); tokens from
  `output.usage.input_tokens`/`output_tokens`, and the prompt-cache tokens beside them
  (`usage_counts`); the service tier that billed it from the provider's body, `call.response`
  (`prices.body_tier`); a first choice's `stop_reason` of `max_tokens`, `model_length` or
  `content_filter` is noted (the answer may be cut), and an answer the content filter left
  empty is unknown, not "" (`_stopped`); an `error` adds an `agent.error`; an output
  with no choice (a call that failed, or was still `pending` when the log was written)
  has an unknown answer, not "" (`_no_reply`);
- a `tool` event executes a call (`function`, `arguments`, `id`): it gives the call a model
  event asked for its `result` (content, `ContentText` parts: their text; an `error`
  makes it an error result; one still `pending` when the log was written has none:
  unknown), or is a call of its own when no model event asked for it;
- an `error` event is an `agent.error`; other events (`span_begin`, `state`, `score`,
  `sample_init`, `info`, `logger`, …) are skipped and counted;
- the events of a scorer (those in a span of type `scorer`, from its `span_begin` to its
  `span_end`, and in the spans inside it; in logs older than spans, between `step` events
  of type `scorer`) are the grader's: a model-graded scorer's call is no step of the
  agent's, its reply no answer, its tokens no cost; they are skipped and counted.
A sample without events is read from its `messages` (assistant messages are steps, `tool`
messages results by `tool_call_id`, error results when their `error` is set, not null;
tokens from `model_usage`). Strings stored as
`attachment://HASH` are replaced by the sample's `attachments`; one it lacks is unknown,
never the reference's text: an answer that is one is unknown (an error verdict naming it),
and so are a call's arguments or a result that hold one (noted). A sample stopped by a
limit (a `sample_limit` event, or the sample's `limit`: its `type` and `limit`) is noted,
its answer may be cut; it is no `agent.error`, as Inspect counts it as the sample's limit,
not its error. The run's latency is the sample's `total_time`. A sample's `events` or
`messages`, a model event's `output.choices` or a message's `tool_calls` that is no list,
or a call `id` that is not text, is the run's error naming the field by its path in the
log (`samples[0].events[8].output.choices`). Two samples of one id and epoch (`1` and `"1"`
are one id: cases are named by it) are the error of the cases of that id: which sample
such a case checks cannot be told.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

import attrs
import orjson

from evaldsl.runs.model import MISSING, RunError, locate
from evaldsl.runs.prices import body_tier
from evaldsl.runs.providers import (
    Items,
    Trace,
    an_object,
    blocks_text,
    kind_value,
    link_id,
    parse_json_text,
    text_of_parts,
    tool_name,
    usage_of,
)
from evaldsl.runs.text import BadUsage, token_count

_USAGE = (("input_tokens", "output_tokens"),)
_CACHE_READ = "input_tokens_cache_read"
_CACHE_WRITE = "input_tokens_cache_write"


def usage_counts(usage: Any) -> tuple[tuple[float, float] | None, dict[str, float] | None]:
    """The (input, output) tokens of an Inspect `ModelUsage`, and its prompt-cache tokens
    as a response's `cacheTokens`. Inspect writes the provider's counts: Anthropic's
    `input_tokens` leaves the cache reads and writes out (its `total_tokens` adds them),
    OpenAI's counts its cached reads in; `total_tokens` tells which, and the input is
    every input token either way. Left out, they are added to it and priced at
    Anthropic's multiples; counted in, the reads are OpenAI's cached input. A usage whose
    total tells neither is a `BadUsage`: never tokens dropped from a budget.

    >>> usage_counts({"input_tokens": 10, "output_tokens": 5, "total_tokens": 115,
    ...     "input_tokens_cache_read": 80, "input_tokens_cache_write": 20})
    ((110, 5), {'write5m': 20, 'write1h': 0, 'read': 80})
    >>> usage_counts({"input_tokens": 100, "output_tokens": 5, "total_tokens": 105,
    ...     "input_tokens_cache_read": 80})
    ((100, 5), {'cached': 80})
    """
    counts = usage_of(usage, _USAGE)
    if counts is None:
        return None, None
    read = token_count(usage.get(_CACHE_READ), _CACHE_READ)
    write = token_count(usage.get(_CACHE_WRITE), _CACHE_WRITE)
    if not (read or write):
        return counts, None
    given, out = counts
    total = usage.get("total_tokens")
    total = None if total is None else token_count(total, "total_tokens")
    if total == given + out + read + write:  # (apart from the input: Anthropic's)
        return (given + read + write, out), {"write5m": write, "write1h": 0, "read": read}
    if total == given + out and not write and read <= given:  # (among it: OpenAI's)
        return counts, {"cached": read}
    raise BadUsage(
        f"token usage `{_CACHE_READ}` ({read}) and `{_CACHE_WRITE}` ({write}) beside "
        f"`input_tokens` ({given}) and `total_tokens` ({total}): whether the input counts "
        "them cannot be told"
    )


#: The run's error for a value of the wrong type at steps inside the sample read, what
#: it is, and what belongs there (`Items.wrong_type`, with the sample's place in the log).
Wrong = Callable[[tuple[str | int, ...], Any, str], RunError]
_HINT = (
    "an Inspect AI sample's `events` and `messages` are lists; a model event's "
    "`output.choices` is a list; a message's `tool_calls` is a list of calls with a text "
    "`id`; fix the log or write it again"
)


def is_eval_log(d: Any) -> bool:
    """An Inspect AI `EvalLog`: an `eval` spec with its task, beside samples or a status."""
    return (
        isinstance(d, dict)
        and isinstance(d.get("eval"), dict)
        and ("task" in d["eval"] or "task_id" in d["eval"])
        and any(k in d for k in ("samples", "status", "results"))
    )


def sample_ids(log: dict[str, Any]) -> list[str]:
    """The ids of a log's samples, as text (`1`, `"q-7"`), epochs after the first marked
    `id@epoch`; a sample of no id (`null`, or none given) by its place in the log's
    `samples`, from 1 (`#3`), as `each` rows and unnamed cases are numbered.

    >>> sample_ids({"samples": [{"id": "a"}, {"id": None}, {"id": 1, "epoch": 2}]})
    ['#2', 'a', '1@2']
    """
    samples = _samples(log)
    if not samples:
        return []
    place = {id(sample): n for n, sample in enumerate(log["samples"], 1)}
    return [_sample_key(sample, place[id(sample)]) for sample in samples]


def _samples(log: dict[str, Any]) -> list[dict[str, Any]]:
    """A log's samples: the objects of its `samples` list (none, when it is no list), in
    `sample_order`, as a `.eval` archive's are (`inspectzip`): a suite's cases come in one
    order whichever form of the log it reads, and whatever order they were written in."""
    samples = log.get("samples")
    if not isinstance(samples, list):
        return []
    return sorted((s for s in samples if isinstance(s, dict)), key=sample_order)


def sample_order(sample: dict[str, Any]) -> tuple[Any, ...]:
    """The key samples are ordered by: epoch (1 when not given, as Inspect's), then id:
    numbers by value before texts (`2` before `10` before `"a"`).

    >>> sorted([{"id": "a"}, {"id": 10, "epoch": 2}, {"id": 10}, {"id": 2}], key=sample_order)
    [{'id': 2}, {'id': 10}, {'id': 'a'}, {'id': 10, 'epoch': 2}]
    """
    epoch = sample.get("epoch")
    sid = sample.get("id")
    number = isinstance(sid, int | float) and not isinstance(sid, bool)
    return (
        epoch if isinstance(epoch, int) and not isinstance(epoch, bool) else 1,
        0 if number else 1,
        sid if number else 0,
        "" if number else str(sid),
    )


def _sample_key(sample: dict[str, Any], place: int) -> str:
    sid = sample.get("id")
    key = f"#{place}" if sid is None else str(sid)  # (never "None", a name it does not have)
    epoch = sample.get("epoch", 1)
    return key if epoch in (1, None) else f"{key}@{epoch}"


@attrs.frozen
class SampleIndex:
    """A log's samples in `sample_order`, their keys (`sample_ids`), the place of each in
    the log's `samples` list, and by key the indexes of its samples (one, unless the log
    gives two samples one id: `read_inspect` refuses that key)."""

    samples: list[dict[str, Any]]
    ids: list[str]
    places: list[int]
    by_key: dict[str, list[int]]


#: The index of the log last read, for the `Items` it comes from (held weakly, and let go
#: with them: nothing here outlives the items). A suite reads a log of N samples N times
#: over, once for each case (`samplelogs` keeps the items), and finding each sample (or
#: its place in the log) by walking them all was N² (3,000 samples: ~9 s of a run).
_SAMPLES: list[tuple[weakref.ref[Items], SampleIndex]] = []


def _let_go(gone: weakref.ref[Items]) -> None:
    """The items of the index died: the index goes with them."""
    if _SAMPLES and _SAMPLES[0][0] is gone:
        _SAMPLES.clear()


def sample_index(items: Items) -> SampleIndex:
    """The `SampleIndex` of the log `items` hold, made once for the items read last."""
    held = _SAMPLES[:]  # (one look: another thread, or the items' death, may clear it)
    if held:
        ref, index = held[0]
        if ref() is items:
            return index
    log = items.values[0]
    samples = _samples(log)
    ids = sample_ids(log)
    in_log = log.get("samples") if samples else []
    place_of = {id(sample): n for n, sample in enumerate(in_log)}
    by_key: dict[str, list[int]] = {}
    for i, key in enumerate(ids):
        by_key.setdefault(key, []).append(i)
    index = SampleIndex(samples, ids, [place_of[id(s)] for s in samples], by_key)
    _SAMPLES[:] = [(weakref.ref(items, _let_go), index)]
    return index


def read_inspect(items: Items, why: str, sample: str | None) -> tuple[Trace, float | None]:
    """The events of one sample of an eval log, and its latency in ms."""
    index = sample_index(items)
    samples, ids = index.samples, index.ids
    if not samples:
        raise RunError(
            "this Inspect AI log has no samples (it was written without them, or is a "
            "header only): there is no run to check",
            path=items.path,
            hint="write the log with samples (`log_samples` on)",
        )
    if sample is None and len(samples) > 1:
        raise RunError(
            f"this Inspect AI log has {len(samples)} samples ({', '.join(ids[:8])}): name one",
            path=items.path,
            hint="in a suite each sample becomes a case of its own; from Python, "
            "load_run(path, sample=ID)",
        )
    found = [0] if sample is None else index.by_key.get(sample)
    if found is None:
        raise RunError(
            f'no sample "{sample}" in this Inspect AI log (it has {", ".join(ids[:8])})',
            path=items.path,
        )
    at = [index.places[i] for i in found]
    if len(at) > 1:
        raise _shared_id(items, str(sample), at)
    chosen = samples[found[0]]
    trace = Trace("inspect", items.path, why)
    place = ("samples", at[0])

    def wrong(steps: tuple[str | int, ...], value: Any, expected: str) -> RunError:
        return items.wrong_type(0, (*place, *steps), value, expected, _HINT)

    _read_sample(chosen, trace, wrong)
    total = chosen.get("total_time")
    latency = float(total) * 1000 if isinstance(total, int | float) else None
    return trace, latency


def _shared_id(items: Items, key: str, at: list[int]) -> RunError:
    """The run's error for a sample id that names several samples of the log (at `at`),
    at the second of them in a JSON log: which of them a case named by the id checks cannot be
    told, and checking one of them twice would leave the others unread."""
    places = ", ".join(f"samples[{n}]" for n in sorted(at))
    # (a sample of no id is named by its place, `#2`, which another's id may be too)
    listed = items.values[0].get("samples")
    idless = [
        n
        for n in sorted(at)
        if isinstance(listed, list) and isinstance(listed[n], dict) and listed[n].get("id") is None
    ]
    unnamed = (
        f" ({', '.join(f'samples[{n}]' for n in idless)} of no id, named by "
        f"{'its place' if len(idless) == 1 else 'their places'})"
        if idless
        else ""
    )
    message = (
        f'{len(at)} samples of this Inspect AI log have the id "{key}" ({places}){unnamed}: '
        "which one a case named by it checks cannot be told"
    )
    hint = (
        'Inspect gives each sample of an epoch an id of its own (`1` and `"1"` are one '
        "id here): fix the log's ids, or run the eval again"
    )
    if items.text is None:  # (an `.eval` archive: its samples are entries, not text)
        return RunError(message, path=items.path, hint=hint)
    offset = locate(items.text, ("samples", sorted(at)[1]))
    return RunError.at_offset(message, path=items.path, text=items.text, offset=offset, hint=hint)


def _read_sample(sample: dict[str, Any], trace: Trace, wrong: Wrong) -> None:
    """The events of `sample` into `trace` (`wrong` names its fields from the sample)."""
    attachments = sample.get("attachments") if isinstance(sample.get("attachments"), dict) else {}
    assert isinstance(attachments, dict)
    lost: set[str] = set()  # the attachments named that `attachments` lacks
    listed_events = sample.get("events")
    if listed_events is not None and not isinstance(listed_events, list):
        raise wrong(("events",), listed_events, "a list of events")
    events = [(n, e) for n, e in enumerate(listed_events or ()) if isinstance(e, dict)]
    if events:
        scoring: set[str] = set()
        for n, event in events:
            if _in_scorer(event, scoring):
                trace.skip(_SCORER_EVENTS)
                continue
            _event(
                _resolved(event, attachments, lost),
                trace,
                _within(wrong, ("events", n)),
                lost,
            )
    else:
        _messages(_resolved(sample, attachments, lost), trace, wrong, lost)
    if isinstance(sample.get("error"), dict) and not any(
        e.get("event") == "error" for _, e in events
    ):
        trace.error(str(sample["error"].get("message") or "the sample failed"))
    limit = sample.get("limit")
    if isinstance(limit, dict):  # (a log without the `sample_limit` event says it here)
        trace.note(_limit_note(limit))
    if lost:
        trace.note(
            f"the sample's `attachments` lacks {_count(len(lost), 'attachment')} its events "
            f"name ({min(lost)}): what they hold is unknown, and a test that reads it is an "
            "error"
        )
        trace.capture_hint = _ATTACHMENTS_HINT


#: How to record what a sample's missing attachments hold.
_ATTACHMENTS_HINT = (
    "write the log again with its attachments (Inspect keeps them in the sample's `attachments`)"
)


def _count(n: int, what: str) -> str:
    """`n` things, in words: "1 attachment", "2 attachments"."""
    return f"1 {what}" if n == 1 else f"{n} {what}s"


def _limit_note(limit: dict[str, Any]) -> str:
    """The note of a sample stopped by a limit (a `sample_limit` event or the sample's
    `limit`: its `type` and `limit`). Inspect counts it as the sample's limit, not its
    error, and so does evaldsl: `errors == 0` holds; the answer may be cut."""
    kind = limit.get("type")
    which = f"{kind} limit" if isinstance(kind, str) and kind else "a limit"
    value = limit.get("limit")
    at = f" ({value})" if isinstance(value, int | float) and not isinstance(value, bool) else ""
    return (
        f"the sample stopped at its {which}{at}: its answer may be cut (Inspect counts a "
        "limit as the sample's, not an error: so does `errors`)"
    )


def _lost_in(value: Any, lost: set[str]) -> str | None:
    """The first reference in `value` to an attachment the sample lacks (in `lost`)."""
    if not lost:
        return None
    if isinstance(value, str):
        return value if value in lost else None
    if isinstance(value, list | dict):
        for item in value.values() if isinstance(value, dict) else value:
            found = _lost_in(item, lost)
            if found is not None:
                return found
    return None


def _no_reply(event: dict[str, Any], trace: Trace) -> None:
    """Say why the answer of a model event whose output holds no choice is unknown, never
    "" (a failed call's `output` is an empty `ModelOutput`, as is one still `pending`
    when the log was written): `Unrecorded.answers_why`."""
    if event.get("error") is not None:
        trace.answers_why = "the model call failed (its event's `error`)"
    elif event.get("pending"):
        trace.answers_why = "the model call had not returned when the log was written (`pending`)"
    else:
        trace.answers_why = "the model event's `output` holds no choice"


#: What each of Inspect's `stop_reason`s that leave an answer not whole says of it.
_STOPS = {
    "max_tokens": "stopped at its token limit",
    "model_length": "stopped at the model's context length",
    "content_filter": "was stopped by the content filter",
}


def _stopped(answer: str | None, reason: Any, trace: Trace) -> str | None:
    """The answer of a model event whose first choice stopped for `reason` (its
    `stop_reason`): one that leaves it not whole is noted, as the other formats note
    theirs; and an answer the content filter (Inspect's word for a provider's filter or
    refusal) left empty is unknown, not "" (`not answer contains "…"` would pass on what
    it removed)."""
    said = _STOPS.get(reason) if isinstance(reason, str) else None
    if said is None:
        return answer
    trace.note(f"a model call {said} (stop_reason `{reason}`): its answer may be cut")
    if reason == "content_filter" and answer == "":
        trace.answers_why = "the content filter removed it (stop_reason `content_filter`)"
        return None
    return answer


def _answer_of(message: Any, trace: Trace, lost: set[str]) -> str | None:
    """A message's answer text, or `None` (unknown) when its content is an attachment the
    sample lacks: never the `attachment://…` text."""
    ref = _lost_in(message.get("content"), lost) if isinstance(message, dict) else None
    if ref is None:
        return _message_text(message)
    trace.answers_why = f"it is `{ref}`, an attachment the sample's `attachments` lacks"
    return None


#: The skipped count of the events of scorers.
_SCORER_EVENTS = "events of scorers (the grader's model calls and tools, not the agent's)"


def _in_scorer(event: dict[str, Any], scoring: set[str]) -> bool:
    """Whether `event` is a scorer's: Inspect runs each scorer in a span of type `scorer`
    (`span_begin` … `span_end`; a `step` event of type `scorer` begins and ends one in
    logs older than spans), and a model grader's calls there are not the agent's steps
    (its reply is no answer, its tokens no cost of the agent's). `scoring` holds the ids
    of the scorer spans open and of the spans open inside them; an event is in one by its
    `span_id`, or, when it names none, while one is open."""
    kind = event.get("event")
    sid = event.get("id")
    if kind == "span_begin":
        parent = event.get("parent_id")
        inside = event.get("type") == "scorer" or (isinstance(parent, str) and parent in scoring)
        if inside and isinstance(sid, str):
            scoring.add(sid)
        return inside
    if kind == "span_end":
        if isinstance(sid, str) and sid in scoring:
            scoring.discard(sid)
            return True
        return False
    if kind == "step" and event.get("type") == "scorer":
        step = f"step {event.get('name')}"
        if event.get("action") == "end":
            scoring.discard(step)
        else:
            scoring.add(step)
        return True
    span = event.get("span_id")
    return span in scoring if isinstance(span, str) else bool(scoring)


def _within(wrong: Wrong, steps: tuple[str | int, ...]) -> Wrong:
    """`wrong` for the fields of the value at `steps`."""
    return lambda at, value, expected: wrong((*steps, *at), value, expected)


def _resolved(value: Any, attachments: dict[str, Any], lost: set[str]) -> Any:
    """`resolve_attachments(value, …)`, or `value` itself when it names no attachment:
    its JSON, written at C speed, holds no text that starts with `attachment://` (orjson
    writes a string between quotes, none of those characters escaped). Most events name
    none (a state change, a span's bounds), and walking each was half the reading."""
    try:
        named = b'"attachment://' in orjson.dumps(value)
    except orjson.JSONEncodeError:  # (an integer past 64 bits, a depth orjson refuses)
        named = True
    return resolve_attachments(value, attachments, lost) if named else value


def resolve_attachments(value: Any, attachments: dict[str, Any], lost: set[str]) -> Any:
    """`value` with `attachment://HASH` strings replaced by the attachment's text; one
    `attachments` lacks stays, and is added to `lost` (what it holds is unknown)."""
    if isinstance(value, str):
        if value.startswith(_ATTACHED):
            found = attachments.get(value.removeprefix(_ATTACHED))
            if isinstance(found, str):
                return found
            lost.add(value)
        return value
    # (a value that is neither a container nor an attachment's name is kept without a
    # call: most of an event's values are such, and a call each was most of the reading)
    if isinstance(value, list):
        return [
            v
            if type(v) in _PLAIN or (type(v) is str and not v.startswith(_ATTACHED))
            else resolve_attachments(v, attachments, lost)
            for v in value
        ]
    if isinstance(value, dict):
        return {
            k: v
            if type(v) in _PLAIN or (type(v) is str and not v.startswith(_ATTACHED))
            else resolve_attachments(v, attachments, lost)
            for k, v in value.items()
        }
    return value


#: The types of JSON's values that hold no attachment's name.
_PLAIN = frozenset({int, float, bool, type(None)})
_ATTACHED = "attachment://"


def _message_text(message: Any) -> str:
    if not isinstance(message, dict):
        return ""
    return text_of_parts(message.get("content"))


#: Why the arguments of a call Inspect could not parse are unknown.
_UNPARSED = "arguments did not parse (Inspect's `parse_error`; it keeps `{}` for them)"


def _calls(message: Any, trace: Trace, at: str | None, wrong: Wrong, lost: set[str]) -> None:
    """The calls of a message (`wrong` names its fields from the message): the tools the
    provider ran (`_server_calls`), then its `tool_calls`; arguments that hold an
    attachment the sample lacks (`lost`) are unknown."""
    if not isinstance(message, dict):
        return
    if isinstance(message.get("content"), list):
        _server_calls(message["content"], trace, at, lost)
    calls = message.get("tool_calls")
    if calls is not None and not isinstance(calls, list):
        raise wrong(("tool_calls",), calls, "a list")
    for n, entry in enumerate(calls or ()):
        call = an_object(entry, "a tool call of `tool_calls`")
        call_id = call.get("id")
        if call_id is not None and not isinstance(call_id, str):
            raise wrong(("tool_calls", n, "id"), call_id, "text")
        name = tool_name(call.get("function", MISSING), "function")
        if call.get("parse_error") is not None:
            # (Inspect could not parse the arguments the model wrote, and keeps `{}` for
            # them: unknown, never `{}`, which `not args $.city == …` would pass on)
            trace.unwhole_call(name, _UNPARSED)
            trace.call(name, MISSING, call_id, at)
            continue
        trace.call(name, _known(call.get("arguments", {}), lost), call_id, at)


#: Inspect's name for the `ContentToolUse` of the provider's listing of an MCP server's
#: tools: no call of a tool.
_MCP_LIST_TOOLS = "mcp_list_tools"


def _server_calls(content: list[Any], trace: Trace, at: str | None, lost: set[str]) -> None:
    """The calls of the tools the provider ran in a reply, which Inspect keeps as content
    parts (`ContentToolUse`: `type: "tool_use"`, `tool_type`, `id`, `name`, `arguments`
    and `result` as JSON text, `error`) with no `tool` event: a `web_search` or
    `code_execution` is a call of the tool its `tool_type` names (as the `openai` and
    `anthropic` formats name it), an `mcp_call` (or a part of no `tool_type`) of its
    `name`. An `error` makes the result an error result; a `result` of `""` (Inspect
    keeps none of an OpenAI web search's) or an attachment the sample lacks is unknown,
    never no result."""
    for part in content:
        if not isinstance(part, dict) or part.get("type") != "tool_use":
            continue
        where = "a `tool_use` part"
        kind = kind_value(part.get("tool_type"), "tool_type", where)
        if kind == "mcp_call" and part.get("name") == _MCP_LIST_TOOLS:
            trace.skip("`tool_use` parts listing an MCP server's tools")
            continue
        # (a part of no `tool_type`, or "", is named by its `name`, as an `mcp_call` is)
        name = kind if kind and kind != "mcp_call" else tool_name(part.get("name"), "name", where)
        arguments = part.get("arguments")
        args = parse_json_text(arguments) if arguments not in (None, "") else {}
        cid = trace.call(name, _known(args, lost), link_id(part.get("id"), "id", where), at)
        error, result = part.get("error"), part.get("result")
        if error is not None:
            trace.result(cid, error, is_error=True, at=at)
        elif result in (None, "") or _lost_in(result, lost) is not None:
            trace.unread_result(cid)
        else:
            trace.result(cid, parse_json_text(result), at=at)


def _known(value: Any, lost: set[str]) -> Any:
    """`value`, or `MISSING` (unknown) when it holds an attachment the sample lacks."""
    return MISSING if _lost_in(value, lost) is not None else value


def _event(event: dict[str, Any], trace: Trace, wrong: Wrong, lost: set[str]) -> None:
    """One event of the transcript (`wrong` names its fields from the event; `lost`: the
    attachments named that the sample lacks)."""
    kind = kind_value(event.get("event"), "event", "a transcript event")
    at = event.get("timestamp") if isinstance(event.get("timestamp"), str) else None
    if kind == "model":
        trace.saw("model event")
        output = event.get("output") if isinstance(event.get("output"), dict) else {}
        assert isinstance(output, dict)
        choices = output.get("choices")
        if choices is not None and not isinstance(choices, list):
            raise wrong(("output", "choices"), choices, "a list")
        first = choices[0] if choices and isinstance(choices[0], dict) else {}
        message = first.get("message")
        model = event.get("model") if isinstance(event.get("model"), str) else None
        end = event.get("completed") if isinstance(event.get("completed"), str) else at
        counts, cache = usage_counts(output.get("usage"))
        # the provider's own body (`call.response`) says the service tier that billed it
        call = event.get("call")
        answer: str | None = None
        if message is None:  # (no reply: the call failed, or had not returned)
            _no_reply(event, trace)
        else:
            answer = _stopped(_answer_of(message, trace, lost), first.get("stop_reason"), trace)
        trace.llm(
            answer,
            counts,
            model=model,
            start=at,
            end=end,
            failed=event.get("error") is not None,
            cache=cache,
            tier=body_tier(call.get("response")) if isinstance(call, dict) else None,
        )
        _calls(
            message,
            trace,
            end,
            _within(wrong, ("output", "choices", 0, "message")),
            lost,
        )
        if event.get("error") is not None:
            trace.error(str(event["error"]), end)
    elif kind == "tool":
        trace.saw("tool event")
        name = tool_name(event.get("function", MISSING), "function", "a `tool` event")
        call_id = link_id(event.get("id"), "id", "a `tool` event")
        cid = trace.known_call(call_id, name)
        if cid is None:
            cid = trace.call(name, _known(event.get("arguments", {}), lost), call_id, at)
        error = event.get("error")
        end = event.get("completed") if isinstance(event.get("completed"), str) else at
        if isinstance(error, dict):
            trace.result(cid, error.get("message", error), is_error=True, at=end)
        elif event.get("pending") or _lost_in(event.get("result"), lost) is not None:
            # (a tool still running when the log was written has Inspect's default
            # result, "": its result is unknown, never "")
            trace.unread_result(cid)
        else:  # (a `ToolResult` of content, `ContentText`s, is its text)
            trace.result(cid, blocks_text(event.get("result")), at=end)
    elif kind == "sample_limit":
        trace.saw("sample_limit event")
        trace.note(_limit_note(event))
    elif kind == "error":
        trace.saw("error event")
        error = event.get("error")
        message = error.get("message") if isinstance(error, dict) else error
        trace.error(str(message or "error"), at)
    else:
        trace.skip(f"`{kind}` events (not a step, call or result)")


def _messages(sample: dict[str, Any], trace: Trace, wrong: Wrong, lost: set[str]) -> None:
    """A sample's steps from its messages (`wrong` names its fields from the sample;
    `lost`: the attachments named that the sample lacks)."""
    trace.note("the sample has no event transcript: read from its messages")
    messages = sample.get("messages")
    if messages is not None and not isinstance(messages, list):
        raise wrong(("messages",), messages, "a list of messages")
    for m, message in enumerate(messages or ()):
        if not isinstance(message, dict):
            continue
        role = kind_value(message.get("role", MISSING), "role", "a message")
        if role == "assistant":
            trace.saw("assistant message")
            trace.llm(_answer_of(message, trace, lost), None, model=message.get("model"))
            _calls(message, trace, None, _within(wrong, ("messages", m)), lost)
        elif role == "tool":
            trace.saw("tool message")
            call_id = link_id(message.get("tool_call_id"), "tool_call_id", "a tool message")
            if call_id is not None and trace.has_call(call_id) and _lost_in(message, lost):
                trace.unread_result(call_id)
            elif call_id is not None and trace.has_call(call_id):
                # (a `ToolCallError`, or null for none: Inspect leaves a null out, other
                # exporters write it, and it was read as an error)
                failed = message.get("error") is not None
                trace.result(call_id, _message_text(message), is_error=failed)
            else:
                trace.skip("tool messages whose tool_call_id names no call")
        else:
            trace.saw(f"{role} message")
    usage = sample.get("model_usage")
    if isinstance(usage, dict) and trace.events:
        read = [usage_counts(u) for u in usage.values()]
        pairs = [counts for counts, _ in read]
        total = (sum(p[0] for p in pairs if p), sum(p[1] for p in pairs if p))
        responses = [e for e in trace.events if e["type"] == "llm.response"]
        if responses:
            responses[-1]["usage"] = {"promptTokens": total[0], "completionTokens": total[1]}
            cached: dict[str, float] = {}
            for _, cache in read:
                for key, n in (cache or {}).items():
                    cached[key] = cached.get(key, 0) + n
            if any(cached.values()):
                responses[-1]["cacheTokens"] = cached
