"""What evaldsl read from a trace or state, in the words of the language (`evaldsl inspect`).

Takes a run file (and optionally a format name) and gives `Summary` records, one per run
the file holds (an Inspect AI log with several samples holds one per sample): the format
and why it was chosen, what the adapter recognised and skipped, the events by kind, each
tool with its call count and first arguments, steps, tokens, cost, the first and last
answers (abridged), latency, errors, guards; for a state its status, nodes, memory keys,
tokens, budget and cost. The numbers come from the same index pass the assertions read,
so what `inspect` shows is what `tokens <= 2000` or `tool search called` will see.
`render_text` and `to_json` print it; `summary_markdown` is the language server's hover.
"""

from __future__ import annotations

import os
from typing import Any

import attrs

from evaldsl.gcpause import paused_gc
from evaldsl.jsontext import indented_json
from evaldsl.language.jsjson import js_json
from evaldsl.language.printable import visible
from evaldsl.runs.detect import inspect_samples, load_run
from evaldsl.runs.events import TOOL_CALL_TYPES, tool_call_arguments, tool_call_name
from evaldsl.runs.heldcalls import held_said
from evaldsl.runs.index import Needs, RunFacts, index_run, unnamed_call_error
from evaldsl.runs.model import MISSING, Run, RunError
from evaldsl.runs.prices import (
    UnpricedTier,
    billed_tier,
    body_tier,
    price_of,
    priced_as,
    tier_note,
    unpriced_hint,
)
from evaldsl.runs.text import REFUSAL_NOTE, TRANSCRIPT_NOTE, is_refusal, is_transcript

ABRIDGE = 120  # characters of an answer or of arguments shown


@attrs.frozen
class ToolSummary:
    """One tool: how often it was called and the arguments of its first call."""

    name: str
    calls: int
    first_args: Any


@attrs.frozen
class Summary:
    """What one run holds, as the assertions see it."""

    path: str
    format: str
    why: str
    kind: str  # "trace" or "state"
    sample: str | None = None
    recognised: dict[str, int] | None = None
    skipped: dict[str, int] = attrs.Factory(dict)
    notes: tuple[str, ...] = ()
    events: dict[str, int] = attrs.Factory(dict)
    tools: tuple[ToolSummary, ...] = ()
    steps: int | None = None
    tool_calls: int | None = None
    results: int | None = None
    errors: int | None = None
    guards: int | None = None
    input_tokens: float | None = None  # whole unless a recording counted fractions
    output_tokens: float | None = None  # whole unless a recording counted fractions
    cost: float | None = None
    cost_note: str | None = None
    tokens_note: str | None = None  # why tokens are unknown, where it is not "none recorded"
    answers: int | None = None
    first_answer: str | None = None
    last_answer: str | None = None
    answers_why: str = ""  # why an answer shown unknown is (`Unrecorded.answers_why`)
    latency_s: float | None = None
    latency_note: str | None = None  # why there is none: an `at` that is not a time
    status: str | None = None
    nodes: tuple[str, ...] | None = None
    memory_keys: tuple[str, ...] | None = None
    budget: Any = None


def summarize(path: str | os.PathLike[str], format: str | None = None) -> list[Summary]:
    """One `Summary` per run the file holds (a `RunError` when it cannot be read).

    >>> path = "tests/fixtures/traceplay/multi-tool/cassette.multi-tool.jsonl"
    >>> [t.name for t in summarize(path)[0].tools]
    ['get_weather', 'get_crypto_price']
    """
    p = os.fspath(path)
    # as reading a file whole is (`load_run`): the look for samples decodes the whole
    # document, and a summary walks every event, with the collector rescanning what was
    # read (~20% of `inspect` of a 111 MB OTLP file)
    with paused_gc():
        samples = inspect_samples(p, format)
        if samples:
            return [summarize_run(load_run(p, format, sample=s), p, sample=s) for s in samples]
        return [summarize_run(load_run(p, format), p)]


def summarize_run(run: Run, path: str, *, sample: str | None = None) -> Summary:
    """The summary of one run already loaded."""
    read = run.read
    base = Summary(
        path=path,
        format=read.format if read else run.format,
        why=read.why if read else "given in memory",
        kind="state" if run.state is not None else "trace",
        sample=sample,
        recognised=read.recognised if read else None,
        skipped=dict(read.skipped) if read else {},
        notes=read.notes if read else (),
    )
    if run.state is not None:
        return _state(base, run.state)
    # No `tool_sequence`: it keeps every call's name (the memory of a 1,000,000-event
    # cassette grew by 16 MiB with it); the tools, in the order of their first calls, are
    # the names the walk below meets, and the counts are the pass's.
    needs = Needs(answers={1}, answer_tail=1, times=True, cost=True)
    facts = index_run(run, needs)
    trace = facts.trace
    assert trace is not None
    events: dict[str, int] = {}
    first_args: dict[str, Any] = {}  # by tool, in the order of their first calls
    models: list[str] = []
    notes = list(base.notes)
    tiers: dict[str, int] = {}  # a response's tier other than the standard one → responses
    bare_results = 0  # `tool.result` events with no `output`, the key their value is read from
    bare_keys: dict[str, None] = {}  # what those hold instead (`result`), in order
    for event in run.events or ():
        kind = str(event.get("type"))
        events[kind] = events.get(kind, 0) + 1
        name = tool_call_name(event)
        if name is None:
            if kind in TOOL_CALL_TYPES:  # a call whose tool cannot be told: never skipped
                raise unnamed_call_error(run)
        elif name not in first_args:
            first_args[name] = tool_call_arguments(event)
        model = event.get("model")
        if kind == "llm.request" and isinstance(model, str) and model not in models:
            models.append(model)
        # (a reader's trace notes it as it reads; a recorded response, as a cassette's, here)
        if kind == "tool.result" and "output" not in event:
            bare_results += 1
            bare_keys.update(dict.fromkeys(k for k in event if k not in _RESULT_KEYS))
        if kind == "llm.response":
            _note_said(event.get("output"), notes)
            # (the event's tier when it says one, a standard one too, else its body's: as
            # `cost` prices it, `index.py`)
            said_tier = event.get("serviceTier")
            tier = body_tier(event.get("output")) if said_tier is None else billed_tier(said_tier)
            if tier is not None:
                said = js_json(tier)
                tiers[said] = tiers.get(said, 0) + 1
    # (the tiers a cassette's bodies say; a reader's trace noted its own, the same words)
    for said, count in tiers.items():
        if (note := tier_note(said, count)) not in notes:
            notes.append(note)
    if bare_results:  # (a value under another key, `result`, is read by nothing)
        holding = ", ".join(f"`{k}`" for k in list(bare_keys)[:3])
        events_said = (
            "1 tool.result event records"
            if bare_results == 1
            else (f"{bare_results} tool.result events record")
        )
        notes.append(
            f"{events_said} no `output`, the key a result's value is read from"
            + (
                f" ({'it holds' if bare_results == 1 else 'they hold'} {holding})"
                if holding
                else ""
            )
            + ": `result` tests find nothing there"
        )
    held = facts.held_calls()
    if held:  # (calls no test counts: said, as what was skipped is)
        notes.append(
            f"the LLM responses hold tool calls that no tool.call event records "
            f"({held_said(held)}): they are not counted, and a test they could fail "
            "(`no tool …`, `tools`, `tool calls`) is an error"
        )
    skipped = dict(base.skipped)
    for kind, n in trace.unknown.items():
        skipped[f"events of unknown type `{kind}`"] = n
    latency = facts.latency_seconds if facts.latency_seconds is not None else trace.wall_seconds()
    tools = tuple(
        ToolSummary(name, trace.call_counts.get(name, 0), args) for name, args in first_args.items()
    )
    # (a request no response answers: its usage is unknown, and which request it is said)
    unanswered = trace.why_unrecorded() if trace.unanswered is not None else None
    return attrs.evolve(
        base,
        notes=tuple(notes),
        skipped=skipped,
        events=events,
        tools=tools,
        steps=trace.steps,
        tool_calls=trace.tool_calls,
        results=trace.results,
        errors=trace.errors,
        guards=trace.guards,
        # (a run none of whose responses records usage: unknown, as `tokens` says, not 0)
        input_tokens=None if trace.usage_unrecorded else trace.input_tokens,
        output_tokens=None if trace.usage_unrecorded else trace.output_tokens,
        cost=None if trace.usage_unrecorded else trace.cost,
        cost_note=(
            f"unknown: {unanswered}"
            if unanswered is not None
            else "unknown: no response records token usage"
            if trace.usage_unrecorded
            else _cost_note(trace.unpriced_model, models)
        ),
        tokens_note=unanswered,
        answers=trace.responses,
        # (an answer the recording left out is unknown, shown so, not "")
        first_answer=_answer(facts, 1),
        last_answer=_answer(facts, -1),
        answers_why="" if facts.unrecorded is None else facts.unrecorded.answers_why,
        latency_s=latency,
        latency_note=trace.bad_time if latency is None else None,
    )


#: The keys of a `tool.result` event other than its value (`output`).
_RESULT_KEYS = frozenset({"type", "id", "seq", "at", "callId", "isError", "turn", "parentId"})


def _note_said(output: Any, notes: list[str]) -> None:
    """Add to `notes` what a recorded response's answer is when it is no text content: a
    refusal, or an audio reply's transcript (a reader's trace notes it as it reads)."""
    for note, test in ((REFUSAL_NOTE, is_refusal), (TRANSCRIPT_NOTE, is_transcript)):
        if note not in notes and test(output):
            notes.append(note)


def _cost_note(unpriced: str | UnpricedTier | None, models: list[str]) -> str | None:
    if unpriced is not None:
        return f"{unpriced_hint(unpriced)} (`cost` is an error)"
    # (a model priced under its own id from the shipped table goes without saying)
    priced = [said for m in models if price_of(m) is not None and (said := priced_as(m)) != m]
    return ("priced " + ", ".join(priced)) if priced else None


def _state(base: Summary, state: dict[str, Any]) -> Summary:
    memory = state.get("memory")
    nodes = state.get("visited_nodes")
    cost = state.get("total_cost_usd")
    return attrs.evolve(
        base,
        status=state.get("status") if isinstance(state.get("status"), str) else None,
        nodes=tuple(n for n in nodes if isinstance(n, str)) if isinstance(nodes, list) else None,
        memory_keys=tuple(memory) if isinstance(memory, dict) else None,
        input_tokens=_int(state.get("total_input_tokens")),
        output_tokens=_int(state.get("total_output_tokens")),
        budget=state.get("max_token_budget"),
        cost=float(cost) if isinstance(cost, int | float) and not isinstance(cost, bool) else None,
    )


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


# --- output ----------------------------------------------------------------------------------


def abridge(text: str, limit: int = ABRIDGE) -> str:
    """`text` on one line, cut to `limit` characters with "…".

    >>> abridge("a\\nb" + "c" * 200, 10)
    'a⏎bcccccc…'
    """
    flat = text.replace("\r\n", "⏎").replace("\n", "⏎")
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _counts(counts: dict[str, int] | None, *, plural: bool = False) -> str:
    """`counts` in words: names to pluralise (`plural`: `read`), or reasons written in the
    plural (`skipped`: "thinking blocks …"), said in the singular for one."""
    if not counts:
        return "nothing"
    said = _noun if plural else _reason
    return ", ".join(f"{n} {said(k, n)}" for k, n in counts.items())


def _reason(reason: str, n: int) -> str:
    """A reason for skipping, written in the plural, for `n` items: for one, its first
    plural word (outside backticks) in the singular.

    >>> _reason("`span_begin` events (not a step)", 1), _reason("choices after the first", 2)
    ('`span_begin` event (not a step)', 'choices after the first')
    >>> _reason("tool messages whose tool_call_id names no call", 1)
    'tool message whose tool_call_id names no call'
    """
    if n != 1:
        return reason
    words = reason.split(" ")
    for i, word in enumerate(words):
        if word.isascii() and word.isalpha() and word.endswith("s") and not word.endswith("ss"):
            words[i] = word[:-1]
            return " ".join(words)
    return reason


def _noun(kind: str, n: int) -> str:
    """`kind` for `n` items: words in English (`2 llm runs`, `1 tool span`); names from
    the format itself (`chat.completion.chunk`, `[DONE]`) as they are written.

    >>> _noun("llm run", 2), _noun("LLM span", 1), _noun("chat.completion", 3)
    ('llm runs', 'LLM span', 'chat.completion')
    """
    last = kind.rsplit(" ", 1)[-1]
    if n == 1 or not last.isalpha() or not last.isascii() or last.endswith("s"):
        return kind
    return kind + "s"


def _quoted(text: str | None) -> str:
    return "none" if text is None else js_json(abridge(text))


def render_text(summary: Summary) -> str:
    """The summary as aligned `word  value` lines."""
    s = summary
    title = s.path + (f" [sample {s.sample}]" if s.sample else "")
    rows: list[tuple[str, str]] = [("format", f"{s.format} ({s.why})")]
    if s.recognised is not None:
        rows.append(("read", _counts(s.recognised, plural=True)))
    if s.kind == "state":
        rows += [
            ("status", s.status or "none"),
            ("nodes", ", ".join(s.nodes) if s.nodes else "none"),
            ("memory", ", ".join(s.memory_keys) if s.memory_keys else "no keys"),
            ("tokens", _tokens(s)),
            ("budget", "none" if s.budget in (None, 0) else js_json(s.budget)),
            ("cost", "none" if s.cost is None else f"${s.cost:.6g}"),
        ]
    else:
        rows += [
            ("events", _counts(s.events)),
            ("tools", "; ".join(_tool(t) for t in s.tools) if s.tools else "none called"),
            ("steps", str(s.steps)),
            # (result events, counted as read: a call answered twice, or a result no
            # call asked for, is one more; "with a result" said 2 of 1 call)
            (
                "tool calls",
                f"{s.tool_calls} ({s.results} {'result' if s.results == 1 else 'results'})",
            ),
            ("tokens", _tokens(s)),
            ("cost", _cost(s)),
            ("answer", _answers(s)),
            ("latency", _latency(s)),
            ("errors", str(s.errors)),
            ("guards", str(s.guards)),
        ]
    rows.append(("skipped", _counts(s.skipped)))
    rows += [("note", note) for note in s.notes]
    width = max(len(k) for k, _ in rows)
    # (a tool's, a node's or a model's name, a path, an answer's C1 and bidirectional
    # controls, which JSON leaves raw, are the recording's text: shown, never acted on)
    lines = [title, *(f"  {k:<{width}}  {v}" for k, v in rows)]
    return "\n".join(visible(line, newlines=False) for line in lines)


def _answer(facts: RunFacts, index: int) -> str | None:
    """The answer at `index` of an indexed trace; `None` when it has no response or the
    recording left that answer out."""
    trace, left = facts.trace, facts.unrecorded
    if trace is None or not trace.responses or (left is not None and left.lacks_answer(index)):
        return None
    return trace.answer(index)


def _tool(t: ToolSummary) -> str:
    times = "once" if t.calls == 1 else f"{t.calls} times"
    if t.first_args is MISSING:
        args = ", first args not recorded"
    elif t.first_args is None:
        args = ""
    else:
        args = ", first args " + abridge(js_json(t.first_args), 80)
    return f"{t.name} called {times}{args}"


def _tokens(s: Summary) -> str:
    if s.input_tokens is None and s.output_tokens is None:
        return f"unknown: {s.tokens_note}" if s.tokens_note else "none recorded"
    i, o = s.input_tokens or 0, s.output_tokens or 0
    return f"{i + o} (input tokens {i}, output tokens {o})"


def _cost(s: Summary) -> str:
    if s.cost is None:
        return s.cost_note or "none"
    return f"${s.cost:.6g}" + (f" ({s.cost_note})" if s.cost_note else "")


def _latency(s: Summary) -> str:
    if s.latency_s is None:
        return s.latency_note or "none recorded"
    return f"{s.latency_s:.3g}s"


def _answers(s: Summary) -> str:
    if not s.answers:
        return "no response"
    if s.answers == 1:
        return f"{_shown_answer(s.last_answer, s.answers_why)} (1 response)"
    return (
        f"{_shown_answer(s.last_answer, s.answers_why)} (last of {s.answers} responses; "
        f"answer[1] = {_shown_answer(s.first_answer, s.answers_why)})"
    )


def _shown_answer(answer: str | None, why: str) -> str:
    """An answer as the summary shows it (`None`: one the recording left out, or that is
    unknown for the reason `why`)."""
    if answer is not None:
        return _quoted(answer)
    return f"unknown: {why}" if why else "unknown (no message content recorded)"


def to_json(summaries: list[Summary]) -> str:
    """The summaries as a JSON array (answers abridged like the text)."""
    out = []
    for s in summaries:
        d = attrs.asdict(s)
        for key in ("first_answer", "last_answer"):
            if d[key] is not None:
                d[key] = abridge(d[key])
        out.append(d)
    return indented_json(out, default=str)


def summary_markdown(path: str | os.PathLike[str], format: str | None = None) -> str:
    """The hover text of a `cassette`/`trace`/`state` line: the summary, or why the file
    cannot be read."""
    try:
        summaries = summarize(path, format)
    except RunError as err:
        return f"cannot read: {err.message}" + (f" ({err.hint})" if err.hint else "")
    return "\n\n".join("```text\n" + render_text(s) + "\n```" for s in summaries)
