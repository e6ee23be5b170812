"""Run index: one pass over a run's events, keeping only what the assertions need.

Takes a `Run` (a stream or list of events, a state, an output) and a `Needs` (which tools'
calls, which answers, which measurements the compiled assertions read) and gives
`RunFacts`: counters, usage sums, the needed answers, the needed tools' calls with their
linked results, the state and the output. Every checker reads the same facts, so K
assertions over N events cost O(N + K); and since only needed facts are kept, memory grows
with what the assertions ask for, not with the trace.

Event vocabulary read here (unknown types are counted, not read; a trace in which no event
at all is recognised is a `RunError`, never a run whose every fact is zero):
- traceplay: `llm.request` (a step; its `model` prices usage), `llm.response` (an answer
  and its usage, with the prompt-cache tokens of an Anthropic body kept as its `output`:
  `text.body_cache`; it answers the request its `requestId` names, or without one every
  request before it: a request left unanswered makes tokens and cost unknown),
  `tool.call` (`name`, `arguments`; a result names it by its `callId` or by its event `id`),
  `tool.result` (`callId`, `output`, `isError`), `agent.error`;
- verydia: `llm.invoke` (a step and an answer: `output`, `tokensIn`, `tokensOut`),
  `mcp.call` (a tool call with its result inline), `policy.evaluate` (a guard);
- `error` events count as errors too.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import UTC, datetime
from typing import Any

import attrs
import orjson

from evaldsl.gcpause import paused_gc
from evaldsl.language.jsjson import NotJsonValue, js_json
from evaldsl.language.paths import noted_crossings
from evaldsl.language.slotinit import slot_init
from evaldsl.language.values import MISSING
from evaldsl.runs.cassette import EventStream
from evaldsl.runs.events import (
    ERROR_TYPES,
    LLM_INVOKE,
    LLM_REQUEST,
    MCP_CALL,
    POLICY_EVALUATE,
    RESPONSE_TYPES,
    TOOL_CALL,
    TOOL_CALL_TYPES,
    TOOL_RESULT,
    USER_MESSAGE,
    inline_result,
    known_spelling,
    nothing_recognised,
    tool_call_arguments,
    tool_call_name,
    type_slot,
)
from evaldsl.runs.heldcalls import held_calls
from evaldsl.runs.model import LateFormat, Run, RunError, Unrecorded, decode_text, describe
from evaldsl.runs.prices import UnpricedTier, body_tier, cache_premium, price_of, tier_cost
from evaldsl.runs.rawbody import UnreadStream, streamed_body, unread_stream
from evaldsl.runs.text import (
    NO_USAGE,
    BadUsage,
    answer_text,
    body_cache,
    may_count_cache,
    usage_tokens,
)

SAMPLE = 10  # how many of the values a call test found are kept for its message


class Tally:
    """How the calls of one tool fared against one `args`/`result` test in one run:
    values fed (calls, or linked results), how many passed before the verdict was
    decided, the call that decided it, and the first few values found."""

    __slots__ = ("decided", "fed", "first", "found", "good", "last", "sample")

    def __init__(self) -> None:
        self.fed = 0
        self.good = 0
        self.found = 0
        self.sample: list[Any] = []
        self.decided = False  # a passing call (any call) or a failing one (`every`)
        self.first = 0  # the 1-based number of the call that decided it
        self.last: Any = MISSING  # that call's values


@attrs.frozen(eq=False)
class CallProbe:
    """An `args`/`result` test applied to each call of one tool while the run is indexed,
    so the calls need not be kept and walked again (K tests over N events: O(N + K))."""

    tool: str
    on_result: bool
    finder: Callable[[Any], list[Any]]
    test: Callable[[Any], bool]
    key: str | None = None  # set when the path is one plain field (`$.city`): a dict lookup
    every: bool = False
    # for generated passes (`codegen.py`): the test's node, its code fragment, the path
    node: Any = None
    fragment: Callable[[Any], str | None] | None = None
    path: str | None = None

    def feeder(self, tally: Tally) -> Callable[[Any], bool]:
        """The test as a function of one call's arguments (or result) for one run, keeping
        score in `tally`; it returns True when that call decided the verdict (the first
        passing call, or with `every` the first failing one). Once decided, later calls
        are only counted. A closure, not a method: it runs for every call of the tool."""
        key, test, finder, every = self.key, self.test, self.finder, self.every
        sample = tally.sample

        def decide(ok: bool, values: list[Any]) -> bool:
            if ok:
                tally.good += 1
            if ok is not every:
                tally.decided = True
                tally.first = tally.fed
                tally.last = values
                return True
            return False

        if key is not None:

            def feed_field(target: Any) -> bool:  # `args $.field …`: one dict lookup
                tally.fed += 1
                if tally.decided:
                    return False
                if type(target) is dict and key in target:
                    value = target[key]
                    tally.found += 1
                    if len(sample) < SAMPLE:
                        sample.append(value)
                    ok = test(value)
                    if ok is every:  # neither passed (any call) nor failed (every)
                        if ok:
                            tally.good += 1
                        return False
                    return decide(ok, [value])
                return decide(False, [])

            return feed_field

        def feed_path(target: Any) -> bool:
            tally.fed += 1
            if tally.decided:
                return False
            values = [] if target is MISSING else finder(target)
            if values:
                tally.found += len(values)
                room = SAMPLE - len(sample)
                if room > 0:
                    sample.extend(values[:room])
            return decide(any(test(value) for value in values), values)

        return feed_path


slot_init(CallProbe)  # one an `args` or `result` test


@attrs.define
class Needs:
    """What the compiled assertions of a case read from its trace."""

    tool_detail: set[str] = attrs.Factory(set)  # tools whose calls (arguments) are kept
    tool_results: set[str] = attrs.Factory(set)  # tools whose linked results are kept
    probes: list[CallProbe] = attrs.Factory(list)  # args/result tests run during the pass
    tool_sequence: bool = False  # `tools`: every call's name, in order
    answers: set[int] = attrs.Factory(set)  # 1-based positions of answers read
    answer_tail: int = 0  # how many of the last answers are read (answer, answer[-2], …)
    times: bool = False  # `latency`: first and last timestamps
    cost: bool = False  # `cost`: usage priced by each request's model
    # (the reference pass counts everything else whatever these say)
    tokens: bool = False  # usage sums: `tokens`, `input tokens`, `output tokens`
    counted: set[str] = attrs.Factory(set)  # tools whose call counts are read
    #: a test a call held only in an LLM response could break (`no tool`, `called at
    #: most`, `tools`, `tool calls`): the generated pass notes whether any response may
    #: hold one, so that `RunFacts.held_calls` reads the events again only then
    held: bool = False
    # the generated passes made for these needs (`passes.py`), shared by their evolutions
    passes: dict[Any, Any] = attrs.field(factory=dict, eq=False, repr=False)
    # the ids of `probes` (a probe is applied once, though equal tests share it)
    probe_ids: set[int] = attrs.field(factory=set, eq=False, repr=False)

    def add_probe(self, probe: CallProbe) -> None:
        """Apply `probe` to each call during the pass, once (equal tests of a case share
        one probe, and so its tally)."""
        if id(probe) not in self.probe_ids:
            self.probe_ids.add(id(probe))
            self.probes.append(probe)

    @classmethod
    def joined(cls, many: Iterable[Needs]) -> Needs:
        """What any of `many` reads: one pass for these needs gives each of them the facts
        its own pass would (sets joined, flags or-ed, the longest answer tail, each probe
        once)."""
        out = cls()
        for needs in many:
            for name in _NEEDS_COMPARED:
                mine, theirs = getattr(out, name), getattr(needs, name)
                if name == "probes":
                    for probe in theirs:
                        out.add_probe(probe)
                elif isinstance(mine, set):
                    mine |= theirs
                elif isinstance(mine, bool):
                    setattr(out, name, mine or theirs)
                elif isinstance(mine, int):
                    setattr(out, name, max(mine, theirs))
                else:  # a new kind of field must say how it joins
                    raise TypeError(f"Needs.{name}: no rule to join a {type(mine).__name__}")
        return out

    def reads_tool_names(self) -> bool:
        """Whether the case reads any call's tool name (a count, a test, a record, the
        sequence): a call whose name is then missing or not text cannot be told from the
        tools named and is the run's error, never a call of no tool (`no tool X` would
        pass on a call named `["X"]`). A case that reads no name does not fail on one."""
        return bool(
            self.tool_sequence
            or self.counted
            or self.tool_detail
            or self.tool_results
            or self.probes
        )

    def key(self) -> tuple[Any, ...]:
        """Everything a generated pass is made from, hashable: the fields the needs compare
        by (sets and lists frozen); needs with equal keys are served by one pass (probes
        by identity: equal tests share one probe)."""
        return tuple(_frozen(getattr(self, name)) for name in _NEEDS_COMPARED)


#: The fields `Needs` compare by (not the passes made for them, nor `probe_ids`).
_NEEDS_COMPARED = tuple(f.name for f in attrs.fields(Needs) if f.eq)


def _frozen(value: Any) -> Any:
    """A field's value, hashable: a set frozen, a list as a tuple."""
    if isinstance(value, set):
        return frozenset(value)
    return tuple(value) if isinstance(value, list) else value


class CallRecord:
    """One tool call: its name, arguments and (once linked) its result: the first
    `tool.result` naming it (`answered` once one has, as result tests read it)."""

    __slots__ = ("answered", "arguments", "is_error", "name", "result")

    def __init__(self, name: str, arguments: Any, result: Any = MISSING) -> None:
        self.name = name
        self.arguments = arguments
        self.result = result
        self.is_error = False
        self.answered = False


@attrs.define
class TraceFacts:
    """What one pass over a trace's events found."""

    steps: int = 0
    responses: int = 0
    tool_calls: int = 0
    guards: int = 0
    errors: int = 0
    input_tokens: float = 0  # whole numbers unless a recording has fractions
    output_tokens: float = 0
    #: responses that record no usage at all, counted where usage is read (`Needs.tokens`,
    #: `Needs.cost`): when every response is one, tokens and cost were never measured
    unmetered: int = 0
    #: the first `llm.request` no `llm.response` answers (found where usage is read): its
    #: step and its `id` (None without a text or whole-number one). Its usage was never
    #: recorded, so tokens and cost are unknown, however many other responses record theirs
    unanswered: tuple[int, Any] | None = None
    cost: float | None = 0.0
    #: why `cost` is None: the model with no price, or a response's tier with none
    unpriced_model: str | UnpricedTier | None = None
    call_counts: dict[str, int] = attrs.Factory(dict)
    calls: dict[str, list[CallRecord]] = attrs.Factory(dict)
    sequence: list[str] = attrs.Factory(list)
    answers_at: dict[int, Any] = attrs.Factory(dict)  # position → raw output
    answers_tail: list[Any] = attrs.Factory(list)  # the last outputs, oldest first
    first_at: str | None = None
    last_at: str | None = None
    #: where and why the first or last `at` that is text is not a time (`check_times`):
    #: `latency` and `inspect` say so, never "no timing"
    bad_time: str | None = None
    tallies: dict[CallProbe, Tally] = attrs.Factory(dict)
    results: int = 0  # tool results
    others: int = 0  # other recognised events (`user.message`)
    unknown: dict[str, int] = attrs.Factory(dict)  # events of no known type, by type
    #: the answers' texts made so far, by index: every assertion on an answer asks for
    #: its text, which for an output without a text is made from its JSON (4,000
    #: assertions on a 157 KB answer made it 4,000 times: 256 s)
    texts: dict[int, str] = attrs.field(factory=dict, eq=False, repr=False)
    #: set by a generated pass for `Needs.held`: it saw every `llm.response`, and none of
    #: their outputs holds a call (`heldcalls.holds_calls`), so the run holds none
    #: (False: not known, the events are read again when asked)
    holds_no_call: bool = attrs.field(default=False, eq=False, repr=False)

    @property
    def usage_unrecorded(self) -> bool:
        """Whether the run's tokens and cost are unknown, not 0, so that an assertion on them
        is an error, never a pass: its LLM responses (one or more) all record no token usage
        (a stream recorded without its usage chunk, a request transcript), or an
        `llm.request` has no `llm.response` at all (a run cut short after a tool result)."""
        return self.unanswered is not None or (
            self.responses > 0 and self.unmetered == self.responses
        )

    def why_unrecorded(self) -> str:
        """Why the run's usage is unknown (`usage_unrecorded`), in the user's words.

        >>> TraceFacts(steps=2, unanswered=(2, "m4")).why_unrecorded()
        'the llm.request "m4" (step 2) has no llm.response, so its token usage was never recorded'
        """
        if self.unanswered is not None:
            step, request_id = self.unanswered
            named = "" if request_id is None else f" {js_json(request_id)}"
            return (
                f"the llm.request{named} (step {step}) has no llm.response, so its token "
                "usage was never recorded"
            )
        if self.responses == 1:
            return "the run's LLM response records no token usage"
        return f"none of the run's {self.responses} LLM responses records token usage"

    @property
    def recognised(self) -> int:
        """How many events were recognised (any known type)."""
        return (
            self.steps
            + self.responses
            + self.tool_calls
            + self.results
            + self.guards
            + self.errors
            + self.others
        )

    def answer(self, index: int) -> str:
        """The N-th answer's text (1-based; negative from the end); out of range is ""."""
        text = self.texts.get(index)
        if text is None:
            text = self.texts[index] = self._answer(index)
        return text

    def answers_short_of(self, index: int) -> int | None:
        """How many answers the run has when `answer[index]` is past them (read as ""),
        else None: for a failure's message, which says so (`answer[5]` of a run of 2).

        >>> two = TraceFacts(responses=2)
        >>> two.answers_short_of(5), two.answers_short_of(-2)
        (2, None)
        """
        return self.responses if abs(index) > self.responses else None

    def _answer(self, index: int) -> str:
        if index > 0:
            raw = self.answers_at.get(index, MISSING)
            return "" if raw is MISSING else answer_text(raw)
        tail = self.answers_tail
        if -index > len(tail):
            return ""
        return answer_text(tail[index])

    def wall_seconds(self) -> float | None:
        """Seconds from the first event's `at` to the last one's; `None` without both, or
        when one is not a time or they run backwards (`bad_time` says which)."""
        if self.first_at is None or self.last_at is None:
            return None
        start, end = _instant(self.first_at), _instant(self.last_at)
        if start is None or end is None:
            return None
        if end < start:
            return None
        return (end - start).total_seconds()


def _instant(text: str) -> datetime | None:
    """An ISO timestamp as an aware datetime; one without a zone is taken as UTC."""
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


@attrs.define
class RunFacts:
    """Everything the checkers read: trace facts, state, output, measured latency."""

    trace: TraceFacts | None
    state: dict[str, Any] | None
    output: Any
    latency_seconds: float | None
    path: str | None = None
    #: what the recording left out (the run's, whichever pass indexed it): an assertion
    #: that reads it is an error verdict
    unrecorded: Unrecorded | None = None
    #: the recorded events in which LLM responses may hold calls no call event records
    #: (a traceplay cassette's, an `events` trace's), scanned once a checker asks
    events: Iterable[dict[str, Any]] | None = attrs.field(default=None, eq=False, repr=False)
    #: the `args`/`result` paths that found more values than a path may, while the pass
    #: fed them a call (`paths.noting_finder`): by (tool, on its result, path), what
    #: `TooManyValues` says of it; an assertion on one is an error verdict
    crossed: dict[Any, str] | None = None
    #: the output's text once made (as `TraceFacts.texts` keeps a trace's answers)
    text: str | None = attrs.field(default=None, init=False, eq=False, repr=False)
    held: dict[str, int] | None = attrs.field(default=None, init=False, eq=False, repr=False)
    #: what several assertions would each work out alike, worked out once (by a key of
    #: the family's own: `cites` keeps a tool's citable values and those an answer quotes)
    shared: dict[Any, Any] = attrs.field(factory=dict, init=False, eq=False, repr=False)

    def held_calls(self) -> dict[str, int]:
        """By tool, the calls the run's LLM responses hold that no call event records
        (`heldcalls`): a test that would pass on them is an error verdict. The events are
        read again for it, once, when a checker first asks."""
        if self.held is None:
            trace, events = self.trace, self.events
            known = events is None or (trace is not None and trace.holds_no_call)
            self.held = {} if known or events is None else held_calls(events)
        return self.held

    def output_text(self) -> str:
        """A value run's answer: its output's text, made once for all its assertions."""
        if self.text is None:
            self.text = answer_text(self.output)
        return self.text


#: Indexes a run's events for some needs (the reference `index_events`, or a faster one).
EventIndexer = Callable[[Iterable[dict[str, Any]], "Needs"], "TraceFacts"]


#: What to do about events given in memory that hold a value JSON has no word for.
NOT_JSON_HINT = (
    "events are JSON data: give text, numbers, booleans, null, lists and dicts "
    "(decode bytes, turn sets into lists and objects into dicts)"
)


def index_run(run: Run, needs: Needs, events: EventIndexer | None = None) -> RunFacts:
    """Index a run once for all its assertions (may raise `RunError` for a bad line);
    `events` indexes its events (default: the reference pass, `index_events`)."""
    trace = None
    crossed: dict[Any, str] = {}
    if run.events is not None:
        try:
            with paused_gc(), noted_crossings() as crossed:
                trace = (events or index_events)(run.events, needs)
        except BadUsage as why:  # usage nobody can count: the run's error, never 0 tokens
            # (the event whose counts raise this very message: another before it may be
            # unreadable too where `cost`, which alone reads `cacheTokens`, was not asked)
            said = str(why)
            raise _error_at(
                run,
                _place_of(run.events, lambda event: _uncountable(event) == said)
                or _place_of(run.events, lambda event: _uncountable(event) is not None),
                f"an LLM response's {why}",
                "token counts are whole numbers ≥ 0; fix or re-record the trace",
            ) from None
        except UnreadStream as why:  # a response read as "" when it streamed more
            said = str(why)
            raise _error_at(
                run,
                _place_of(run.events, lambda event: unread_stream(event) == said),
                f'a streamed LLM response recorded as `"content": ""`: {why}',
                "re-record the response, or give its `output` the answer the stream gave "
                "(docs/language.md, streamed responses)",
            ) from None
        except RunError as err:  # of events decoded from a file: name the file
            if err.path == "<value>" and run.path is not None:
                raise err.in_file(run.path) from None
            raise
        except NotJsonValue as why:  # (only events given in memory hold one)
            raise RunError(
                f"the events hold {why}, read as text by an assertion",
                path=run.path or "<value>",
                hint=NOT_JSON_HINT,
            ) from None
        # A value run (what a `run` target returned, a line of standard input: named in
        # angle brackets, `<value>`, `<stdin>:5`) may be its output beside no events; a
        # file in which no event is recognised is not a run, whatever `output` it holds
        # (`{"events": [], "output": null}` would pass every `no tool …`), and neither is
        # a value whose events are all of types evaldsl does not read: beside its output
        # they passed `steps == 0` and `no tool …` on events never read.
        if trace.unknown:
            _refuse_unread(run, trace)
        from_file = run.path is not None and not run.path.startswith("<")
        if not trace.recognised and (from_file or not run.has_output or trace.unknown):
            raise nothing_recognised(_unknown_types(run, trace), run.path or "<value>")
        if trace.first_at is not None:
            check_times(run, trace)
    output = run.output
    latency = run.latency_ms / 1000.0 if run.latency_ms is not None else None
    facts = RunFacts(trace, run.state, output, latency, run.path, run.unrecorded, _held(run))
    if crossed:
        facts.crossed = crossed
    return facts


def _error_at(
    run: Run, place: tuple[int, str, str, dict[str, Any]] | None, message: str, hint: str
) -> RunError:
    """The run's error `message` at `place` (`_place_of`'s; the run's start if None)."""
    line, text, where, _ = place or _NOWHERE
    return RunError(
        f"{where}{message}",
        path=run.path or "<value>",
        line=line,
        hint=hint,
        source_line=text,
    )


#: The formats whose events are the recording's own, where a call may be written only
#: inside its LLM response (every other reader makes a call event of each such call).
HELD_FORMATS = frozenset({"traceplay", "events"})


def _held(run: Run) -> Iterable[dict[str, Any]] | None:
    """The run's events if its LLM responses may hold calls no call event records; for a
    `LateFormat`, events that are the run's only if it decides on one of `HELD_FORMATS`
    when they are read (most checks never read them: deciding a JSONL of events' format
    reads the whole file)."""
    if isinstance(run.given_format, LateFormat):
        return _HeldIfFormat(run)
    return run.events if run.format in HELD_FORMATS else None


@attrs.frozen
class _HeldIfFormat:
    """A run's events when its format, decided as they are iterated, is one of
    `HELD_FORMATS`; none otherwise."""

    run: Run

    def __iter__(self) -> Iterator[dict[str, Any]]:
        events = self.run.events if self.run.format in HELD_FORMATS else None
        return iter(events if events is not None else ())


#: What an `at` is when it is a time, for the messages of one that is not.
TIME_EXAMPLE = "ISO 8601, e.g. 2026-09-01T00:00:01Z"


def check_times(run: Run, trace: TraceFacts) -> None:
    """Set `trace.bad_time` when the first or the last `at` that is text (the two that
    `latency` reads) is not a time, or the last is before the first: the run's problem,
    said with where that event is ("line 4: ", "event [3] of the event list: ") and the
    value. The events are read again only then. An `at` that is missing or not text is
    skipped, as the pass skips it.

    >>> events = [{"type": "user.message", "at": "2026-09-01T00:00:01Z"},
    ...           {"type": "user.message", "at": "soon"}]
    >>> trace = TraceFacts(first_at=events[0]["at"], last_at="soon")
    >>> check_times(Run(events=events), trace); trace.bad_time
    'event [1] of the event list: `at` "soon" is not a time (ISO 8601, e.g. 2026-09-01T00:00:01Z)'
    """
    first, last = trace.first_at, trace.last_at
    assert first is not None and last is not None
    start, end = _instant(first), _instant(last)
    if start is not None and end is not None:
        if end < start:  # (a negative span is no duration: 0 passed `latency < 5s`)
            trace.bad_time = (
                f"the last event's `at` ({last}) is before the first's ({first}): the "
                "recording's times run backwards, so its wall time cannot be told"
            )
        return
    bad_first = start is None
    value = first if bad_first else last
    where = ""
    for place, _, _, event in _numbered(run.events or ()):
        if isinstance(event, dict) and event.get("at") == value:
            where = f"{place}: "
            if bad_first:
                break  # the first `at` is the one read; the last, the last one seen
    shown = value if len(value) <= 80 else value[:79] + "…"  # (a message, not a dump)
    trace.bad_time = f"{where}`at` {js_json(shown)} is not a time ({TIME_EXAMPLE})"


def _numbered(events: Iterable[dict[str, Any]]) -> Iterator[tuple[str, int, str, Any]]:
    """A run's events read again with where each is: (its place in the user's words, its
    line, its line's text, the event): "line N" of a recording, "event [i] of the event
    list" of a list (line 1, no text). Events that cannot be read again give none."""
    if isinstance(events, EventStream):
        for n, raw, event in events.numbered():
            yield f"line {n}", n, decode_text(raw), event
    else:
        for i, event in enumerate(events):
            yield f"event [{i}] of the event list", 1, "", event


def unnamed_call_error(run: Run) -> RunError:
    """The run's error at its first tool call whose name is not text, as a pass that
    reads tool names gives it (for a reader that names every call's tool after a pass
    that read no name: `summary.py`, which keeps no sequence of names to read them).

    >>> bad = Run(events=[{"type": "tool.call", "name": ["x"]}])
    >>> unnamed_call_error(bad).message.split(":")[0]
    'event [0] of the event list'
    """
    return _unkeyable_error(run.events or (), run.path or "<value>", True)


#: Where an error is when no event can be named: the run's first line.
_NOWHERE: tuple[int, str, str, dict[str, Any]] = (1, "", "", {})


def _place_of(
    events: Iterable[dict[str, Any]], test: Callable[[dict[str, Any]], bool]
) -> tuple[int, str, str, dict[str, Any]] | None:
    """Where a run's first event that passes `test` is (a pass keeps no places): its
    line and text in a recording (the error's place), or the words "event [i] of the
    event list: " in a list; and the event. `None` where none passes or the events
    cannot be read again."""
    stream = isinstance(events, EventStream)
    for where, line, text, event in _numbered(events):
        if isinstance(event, dict) and test(event):
            if stream:
                return line, text.rstrip("\r\n"), "", event
            return 1, "", f"{where}: ", event
    return None


def _uncountable(event: dict[str, Any]) -> str | None:
    """Why `event` is a response whose usage cannot be counted (`BadUsage`'s message): its
    counts, its body's prompt-cache counts, or its `cacheTokens` as `cost` prices them
    (`cache_premium`); None when it is none, or they can be."""
    if event.get("type") not in RESPONSE_TYPES:
        return None
    try:
        used_in, used_out = usage_tokens(event)
        used_in, cache = body_cache(event.get("output"), used_in)
        if cache is None:
            cache = event.get("cacheTokens")
        if cache is not None and (used_in or used_out):  # (as a pass prices them)
            cache_premium(0.0, cache, None, used_in)
    except BadUsage as why:
        return str(why)
    return None


def _refuse_unread(run: Run, trace: TraceFacts) -> None:
    """Raise the run's error for events a pass counted as unknown and skipped where that
    skip could pass an assertion on what was never read: a type that is a known one
    spelt another way (`tool_call`), or, beside recognised events, an event whose type is
    missing or not text (a call recorded as `{"name": "execute_shell"}`). Other unknown
    types are skipped, as traceplay skips them."""
    spelt = next(((k, known) for k in trace.unknown if (known := known_spelling(k))), None)
    if spelt is not None:
        kind, known = spelt
        place = _place_of(run.events or (), lambda e: e.get("type") == kind)
        line, text, where, _ = place or _NOWHERE
        raise RunError(
            f"{where}an event of type `{kind}` is not one evaldsl reads: it reads `{known}`",
            path=run.path or "<value>",
            line=line,
            hint=f'write its type as "{known}", or name the trace\'s format with '
            '`trace "…" as FORMAT` (`evaldsl vocabulary` lists them)',
            source_line=text,
        )
    # (the counts are keyed by the types' text: only "None", "True", "5" can be one that
    # is not text, and only then are the events read again to find it)
    if trace.recognised and any(map(_may_not_be_text, trace.unknown)):
        place = _place_of(run.events or (), lambda e: not isinstance(e.get("type"), str))
        if place is not None:
            line, text, where, event = place
            typed = event.get("type")
            said = "without a `type`" if typed is None else f"whose `type` is {describe(typed)}"
            raise RunError(
                f"{where}an event {said}, so what it records cannot be told",
                path=run.path or "<value>",
                line=line,
                hint='give each event its type as text, such as "type": "tool.call"; fix or '
                "re-record the trace",
                source_line=text,
            )


def _unknown_types(run: Run, trace: TraceFacts) -> Mapping[Any, int]:
    """The unknown types a pass counted, each as `type_slot` says it: a pass counts by
    the types' text, where "None" may be no `type` at all and "['x']" a list; only then
    are the events read again, to tell (the run is an error either way)."""
    if not any(map(_may_not_be_text, trace.unknown)) and not any(
        k.startswith(("[", "{")) for k in trace.unknown
    ):
        return trace.unknown
    counts: dict[str | tuple[str] | None, int] = {}
    for event in run.events or ():
        slot = type_slot(event.get("type")) if isinstance(event, dict) else ("a value",)
        counts[slot] = counts.get(slot, 0) + 1
    return counts


def _may_not_be_text(kind: str) -> bool:
    """Whether an unknown type's text could be `str()` of a type that is not text."""
    if kind in ("None", "True", "False"):
        return True
    try:
        float(kind)
    except ValueError:
        return False
    return True


def index_events(events: Iterable[dict[str, Any]], needs: Needs) -> TraceFacts:
    """The one pass over the events (any non-object element is a `RunError`)."""
    if isinstance(events, EventStream):
        try:
            try:
                with events.fast() as decoded:
                    return _index(decoded, needs, again=events.__iter__)
            except (orjson.JSONDecodeError, AttributeError) as err:
                # a line that is not a JSON object: the careful reader names file and line
                for _ in events:
                    pass
                if isinstance(err, AttributeError):
                    raise
                # it read every line (a lone surrogate escape, which it reads as U+FFFD)
                return _index(iter(events), needs, again=events.__iter__)
        except TypeError:
            # a list or an object where the pass looks events up (`_KEY_FIELDS`), read
            # by the fast loop or by the careful one after it
            names = needs.reads_tool_names()
            raise _unkeyable_error(events, events.path, names) from None
    try:
        return _index(events, needs)
    except TypeError:
        names = needs.reads_tool_names()
        raise _unkeyable_error(events, "<value>", names) from None
    except AttributeError:
        if isinstance(events, list):
            for index, item in enumerate(events):
                if not isinstance(item, dict):
                    raise RunError(
                        f"element [{index}] of the event list is {describe(item)}, "
                        "not an event object",
                        path="<value>",
                    ) from None
        raise


#: The fields the pass looks events up by, in a set or as a table's keys: a list or an
#: object there cannot be looked up (a `TypeError`), and is the run's error.
_KEY_FIELDS = ("type", "callId", "id")
_UNKEYABLE_HINT = (
    'an event\'s `type` is text such as "tool.call", and its `id` and `callId` are text '
    "or numbers; fix or re-record the trace"
)
_UNKEYABLE_ANY = "an event holds a list or an object where text or a number belongs"


_UNNAMED_HINT = (
    'a tool call names its tool as text, such as "name": "search"; fix or re-record the trace'
)


def _unkeyable_error(events: Iterable[dict[str, Any]], path: str, names: bool) -> RunError:
    """The run's error at the first of `events` with a list or an object in a field of
    `_KEY_FIELDS`, or, when the case reads tool names (`names`), a call whose name is not
    text: at its line in a recording, or as "event [i] of the event list" in a list."""
    stream = isinstance(events, EventStream)
    for place, line, text, event in _numbered(events):
        if not isinstance(event, dict):
            continue
        # (a recording's line is the error's location: said once, not again in its words)
        where = "" if stream else f"{place}: "
        for field in _KEY_FIELDS:
            value = event.get(field)
            if isinstance(value, list | dict):
                kind = "text" if field == "type" else "text or a number"
                return RunError(
                    f"{where}its `{field}` is {describe(value)}, not {kind}",
                    path=path,
                    line=line,
                    hint=_UNKEYABLE_HINT,
                    source_line=text.rstrip("\r\n"),
                )
        call = event.get("type")
        if names and call in (TOOL_CALL, MCP_CALL) and tool_call_name(event) is None:
            # (an `mcp.call` without a `name` is named by its `tool`, as `tool_call_name`
            # reads it)
            named_by = "name" if call == TOOL_CALL or "name" in event else "tool"
            name = event.get(named_by, MISSING)
            said = (
                "missing"
                if name is MISSING
                else "empty"
                if name == ""
                else f"{describe(name)}, not text"
            )
            return RunError(
                f"{where}a `{call}` whose `{named_by}` is {said}, so the tool it called "
                "cannot be told",
                path=path,
                line=line,
                hint=_UNNAMED_HINT,
                source_line=text.rstrip("\r\n"),
            )
    if names:  # (events that cannot be read again: which one is not known)
        return RunError(
            f"{_UNKEYABLE_ANY}, or a tool call's name is not text",
            path=path,
            hint=_UNKEYABLE_HINT.replace("; fix", ", and a tool call's `name` is text; fix"),
        )
    return RunError(_UNKEYABLE_ANY, path=path, hint=_UNKEYABLE_HINT)


def _link(table: dict[Any, Any], call: dict[str, Any], value: Any) -> None:
    """File `value` under the ids a tool result may name its call by: the call's `callId`,
    or its event `id` (traceplay cassettes before v0.6 have no callId); callId wins."""
    event_id = call.get("id")
    if event_id is not None:
        table.setdefault(event_id, value)
    call_id = call.get("callId")
    if call_id is not None:
        table[call_id] = value


def request_sent(
    table: dict[Any, int], waiting: Any, waiting_step: Any, unnamed: Any, request: Any, step: int
) -> tuple[Any, Any, Any]:
    """The generated pass's book of open requests (the reference's `open_named` and
    `open_unnamed`, with the request named last by a text id waiting outside `table`), as
    a request with the id `request` is sent at `step`: the new (waiting id, its step,
    unnamed step). Called off the common path only (a request while another waits, an id
    that is not text, or a table in use)."""
    if type(request) is str or type(request) is int:
        if waiting is not None and request != waiting:  # (the same id: replaced)
            table[waiting] = waiting_step
        table.pop(request, None)  # (a later request of an id replaces it)
        if type(request) is str:
            return request, step, unnamed
        table[request] = step
        return None, None, unnamed
    return waiting, waiting_step, step if unnamed is None else unnamed


def response_came(table: dict[Any, int], waiting: Any, answers: Any) -> Any:
    """The waiting id after a response that answers `answers` (its `requestId`) came,
    when that is not the waiting request's id: none answers every request before it; a
    text or whole-number id, the request it names."""
    if answers is None:
        table.clear()
        return None
    if type(answers) is str or type(answers) is int:
        table.pop(answers, None)
    return waiting


def first_unanswered(named: dict[Any, int], unnamed: int | None) -> tuple[int, Any] | None:
    """The earliest of the requests a pass left unanswered (`named`: id → step; `unnamed`:
    the step of one without an id), as its step and id (by step: no two share one).

    >>> first_unanswered({"m7": 4}, 3), first_unanswered({"m7": 4}, None)
    ((3, None), (4, 'm7'))
    """
    pending = [(step, request) for request, step in named.items()]
    if unnamed is not None:
        pending.append((unnamed, None))
    return min(pending, key=lambda request: request[0], default=None)


def _index(
    events: Iterable[dict[str, Any]],
    needs: Needs,
    again: Callable[[], Iterable[dict[str, Any]]] | None = None,
) -> TraceFacts:
    """Kept as one flat loop with local variables: it runs once per event."""
    facts = TraceFacts()
    counts = facts.call_counts
    tools: dict[str, list[Any]] = {}  # name → [calls so far, its plan], one lookup a call
    calls = facts.calls
    detail = needs.tool_detail | needs.tool_results
    want_results = bool(needs.tool_results)
    by_call_id: dict[Any, CallRecord | None] = {}
    # args/result tests, per tool, each with this run's tally
    arg_probes: dict[str, list[tuple[Callable[[Any], bool], Tally]]] = {}
    result_probes: dict[str, list[tuple[Callable[[Any], bool], Tally]]] = {}
    for probe in needs.probes:
        tally = facts.tallies.setdefault(probe, Tally())
        table = result_probes if probe.on_result else arg_probes
        table.setdefault(probe.tool, []).append((probe.feeder(tally), tally))
    result_owner: dict[Any, list[Any]] = {}  # call id → [tool, result already fed]
    sequence = facts.sequence if needs.tool_sequence else None
    positions = needs.answers
    last_position = max(positions, default=0)  # answers after it are not looked up
    # the last two answers in two variables (answer, answer[-2]); a deque beyond that
    keep_tail = needs.answer_tail
    tail: deque[Any] | None = deque(maxlen=keep_tail) if keep_tail > 2 else None
    before_last: Any = MISSING
    last: Any = MISSING
    want_times = needs.times
    # A list's first and last timestamps are found after the pass, from its two ends;
    # a stream is seen once, so its timestamps are followed in the pass.
    # (a cassette stream can be read again: its first timestamp is read from a new pass,
    # which stops at the first event, and its last from the pass's last event)
    times_in_pass = want_times and not isinstance(events, list) and again is None
    # one lookup per call: what each named tool needs (probes, kept records)
    tool_plan: dict[str, tuple[Any, Any, bool]] = {
        name: (arg_probes.get(name), result_probes.get(name), name in detail)
        for name in {*arg_probes, *result_probes, *detail}
    }
    names_read = needs.reads_tool_names()
    want_cost = needs.cost
    # usage is read only when counted: a bad count nobody reads is not the run's error
    want_usage = needs.tokens or want_cost
    model: str | None = None
    steps = responses = tool_calls = guards = errors = results = others = 0
    unknown: dict[Any, int] = {}
    tokens_in: float = 0
    tokens_out: float = 0
    unmetered = 0  # responses read that record no usage
    # the `llm.request`s no response has answered yet (kept where usage is read): by id,
    # those with a text or whole-number `id` a response may name by its `requestId`; and
    # the first of those without one since the last response, which any response answers
    open_named: dict[Any, int] = {}  # id → step
    open_unnamed: int | None = None
    cost = 0.0
    unpriced: str | UnpricedTier | None = None
    first_at: Any = None
    last_at: Any = None
    last_ev: Any = None
    ev: Any = None  # after the loop: the last event

    def feed_results(name: str, output: Any) -> None:
        """One call's result to `name`'s result tests. Once they are all decided, its
        calls are wired to their results no more (their ids name no call a result could
        reach), and once no tool's are, no result is read: alike whether a result event
        or an MCP call's own result decided them (the generated pass stops alike)."""
        owned = result_probes[name]
        settled = False
        for feed, _ in owned:
            if feed(output):
                settled = True
        if not settled:
            return
        owned[:] = [entry for entry in owned if not entry[1].decided]
        if owned:
            return
        arg_side, _, keep_it = tool_plan.get(name, (None, None, False))
        if arg_side is None and not keep_it:
            tool_plan.pop(name, None)
        else:
            tool_plan[name] = (arg_side, None, keep_it)
        tools[name][1] = tool_plan.get(name)
        if not any(entry[1] for entry in tool_plan.values()):
            result_owner.clear()  # no result is read any more

    # the event types (declared in runs/events.py) as locals: tested once per event
    call_types, response_types, error_types = TOOL_CALL_TYPES, RESPONSE_TYPES, ERROR_TYPES
    mcp_call, tool_result, llm_request = MCP_CALL, TOOL_RESULT, LLM_REQUEST
    llm_invoke, policy_evaluate, user_message = LLM_INVOKE, POLICY_EVALUATE, USER_MESSAGE

    for ev in events:
        kind = ev.get("type")
        if times_in_pass:
            # the first timestamp now; the last from the last event, after the pass
            last_ev = ev
            if first_at is None:
                at = ev.get("at")
                if isinstance(at, str):  # ISO times; events without one do not count
                    first_at = at
        if kind in call_types:
            tool_calls += 1
            if kind != mcp_call and (result_owner or by_call_id):
                # a callId names the latest call that carries it, whatever its tool: a
                # call no result is read for hides an earlier call filed under its id
                shadowed = ev.get("callId")
                if shadowed is not None:
                    if shadowed in result_owner:
                        result_owner[shadowed] = [None, True]
                    if shadowed in by_call_id:
                        by_call_id[shadowed] = None
            name = ev.get("name")
            if name is None and kind == mcp_call:
                name = tool_call_name(ev)
            if not isinstance(name, str) or not name:
                if names_read:  # (`index_events` names the call: `_unkeyable_error`)
                    raise TypeError("a tool call whose name is not text")
                continue
            # one lookup per call for its count and its plan (what the tool needs)
            seen = tools.get(name)
            if seen is None:
                seen = tools[name] = [0, tool_plan.get(name)]
            seen[0] += 1
            if sequence is not None:
                sequence.append(name)
            plan = seen[1]
            if plan is None:
                continue
            probes, on_result, keep = plan
            args = ev.get("arguments", MISSING)
            if args is MISSING and kind == mcp_call:
                args = tool_call_arguments(ev)
            if probes is not None:
                settled = False
                for feed, _ in probes:
                    if feed(args):
                        settled = True
                if settled:
                    # a decided test is not fed again; when none is left, later calls
                    # are only counted (results stay wired for tests not yet decided)
                    left = [entry for entry in probes if not entry[1].decided]
                    plan = tool_plan[name] = (left or None, on_result, keep)
                    if plan == (None, None, False):
                        del tool_plan[name]
                    seen[1] = tool_plan.get(name)
            if on_result is not None:
                if kind == mcp_call:
                    inline = inline_result(ev)
                    if inline is not MISSING:
                        feed_results(name, inline)
                else:
                    _link(result_owner, ev, [name, False])
            if keep:
                record = CallRecord(name, args)
                if kind == mcp_call:
                    record.result = inline_result(ev)
                    record.is_error = bool(ev.get("isError"))
                elif want_results:
                    _link(by_call_id, ev, record)
                calls.setdefault(name, []).append(record)
        # the branches in the order events are most common in recordings: results and
        # requests come as often as calls and responses; each `==` skipped is time saved
        elif kind == tool_result:
            results += 1
            if want_results:
                record_for = by_call_id.get(ev.get("callId"))
                if record_for is not None and not record_for.answered:
                    # the first result naming a call is its result (a later one naming it
                    # again is not: a retry's, a log's duplicate), as result tests read it
                    record_for.answered = True
                    record_for.result = ev.get("output", MISSING)
                    record_for.is_error = bool(ev.get("isError"))
            if result_owner:
                owner_of = result_owner.get(ev.get("callId"))
                if owner_of is not None and not owner_of[1]:
                    owner_of[1] = True  # one result per call: the first that names it
                    feed_results(owner_of[0], ev.get("output", MISSING))
        elif kind == llm_request:
            steps += 1
            if want_cost:
                model = ev.get("model")
            if want_usage:
                request_id = ev.get("id")
                if type(request_id) is str or type(request_id) is int:
                    open_named[request_id] = steps
                elif open_unnamed is None:
                    open_unnamed = steps
        elif kind in response_types:
            responses += 1
            if kind == llm_invoke:
                steps += 1
            raw = ev.get("output")
            if "rawBody" in ev and (positions or keep_tail):  # (a stream kept there: `rawbody`)
                raw = streamed_body(raw, ev["rawBody"])
            if responses <= last_position and responses in positions:
                facts.answers_at[responses] = raw
            if keep_tail:
                before_last = last
                last = raw
                if tail is not None:
                    tail.append(raw)
            if not want_usage:
                continue
            # a response answers the request its `requestId` names; one without answers
            # every request before it (a recording that links none is read by position)
            answers = ev.get("requestId")
            if answers is None:
                open_named.clear()
            elif open_named and (type(answers) is str or type(answers) is int):
                open_named.pop(answers, None)
            open_unnamed = None
            usage = ev.get("usage")
            used_in: float
            used_out: float
            # traceplay's own shape first (every recorded response has it); the general
            # reader handles the rest (verydia's `tokensIn`, which wins, a bad count)
            if (
                type(usage) is dict
                and type(p := usage.get("promptTokens")) is int
                and type(c := usage.get("completionTokens")) is int
                and p >= 0 <= c
                and "tokensIn" not in ev
                and "tokensOut" not in ev
            ):
                used_in, used_out = p, c
            else:
                used = usage_tokens(ev)
                if used is NO_USAGE:  # none recorded (not counts of 0)
                    unmetered += 1
                used_in, used_out = used
            # a provider body kept as the output (traceplay's) counts its prompt-cache
            # tokens apart from the input the event gives
            cache = None
            if may_count_cache(raw):
                used_in, cache = body_cache(raw, used_in)
            tokens_in += used_in
            tokens_out += used_out
            if want_cost and (used_in or used_out):
                priced_as = ev.get("model") or model or ""
                # a response billed at another service tier than the standard one (its
                # reader's `serviceTier`, else its provider body's) costs what it costs
                # there, or is unpriced: never its standard price (`tier_cost`)
                tier = ev.get("serviceTier")
                if tier is None and type(raw) is dict:
                    tier = body_tier(raw)
                if tier is not None:
                    if cache is None:
                        cache = ev.get("cacheTokens")
                    billed = tier_cost(priced_as, tier, used_in, used_out, cache)
                    if isinstance(billed, UnpricedTier):
                        unpriced = billed
                    elif billed is None:  # (the model has no price at all)
                        unpriced = ev.get("model") or model or "(no model)"
                    else:
                        cost += billed
                    continue
                price = price_of(priced_as, used_in)  # (a long prompt may cost more)
                if price is None:
                    unpriced = ev.get("model") or model or "(no model)"
                else:
                    cost += (used_in * price[0] + used_out * price[1]) / 1_000_000
                    if cache is not None or (cache := ev.get("cacheTokens")) is not None:
                        premium = cache_premium(price[0], cache, priced_as, used_in)
                        if premium is None:  # (cached reads of a model with no price for them)
                            unpriced = priced_as
                        else:
                            cost += premium
        elif kind == policy_evaluate:
            guards += 1
        elif kind in error_types:
            errors += 1
        elif kind == user_message:
            others += 1
        else:  # not read: counted, so a trace in which nothing is recognised is an error
            unknown[kind] = unknown.get(kind, 0) + 1

    for tool_name, (calls_of, _) in tools.items():
        counts[tool_name] = calls_of
    facts.steps = steps
    facts.responses = responses
    facts.tool_calls = tool_calls
    facts.guards = guards
    facts.errors = errors
    facts.results = results
    facts.others = others
    facts.unknown = {str(k): n for k, n in unknown.items()}
    facts.input_tokens = tokens_in
    facts.output_tokens = tokens_out
    facts.unmetered = unmetered
    facts.unanswered = first_unanswered(open_named, open_unnamed)
    facts.cost = cost if unpriced is None else None
    facts.unpriced_model = unpriced
    if tail is not None:
        facts.answers_tail = list(tail)
    elif keep_tail:
        facts.answers_tail = [a for a in (before_last, last)[2 - keep_tail :] if a is not MISSING]
    if want_times and again is not None:
        last_ev = ev
        first_at = next((e.get("at") for e in again() if isinstance(e.get("at"), str)), None)
    if (times_in_pass or again is not None) and last_ev is not None:
        last_at = last_ev.get("at")
        if not isinstance(last_at, str) and again is not None:
            # the last event has no time (rare): find the last one that has, in a new pass
            for e in again():
                at = e.get("at")
                if isinstance(at, str):
                    last_at = at
    if want_times and not times_in_pass and again is None:
        assert isinstance(events, list)
        first_at = next((e.get("at") for e in events if isinstance(e.get("at"), str)), None)
        last_at = next(
            (e.get("at") for e in reversed(events) if isinstance(e.get("at"), str)), None
        )
    if isinstance(first_at, str) and isinstance(last_at, str):
        facts.first_at, facts.last_at = first_at, last_at
    return facts
