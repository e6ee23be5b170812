"""Timelines: what a recorded case's run did, step by step, for the HTML report.

Takes the loaded `Suite`s and the `Report` the runner gave for them, and gives each
recorded case (a `cassette` or `trace`) its run's steps in order: the user's message, each
LLM call (model, tokens, the answer or the tools it asked for), each tool call (arguments,
result, error flag), guards and errors, with their times from the run's first timestamp
and, for a call, how long until its response or result.

The runner keeps only what a case's assertions read (one pass, `evaldsl.runs.index`), not the
events, so the recording is read again here: a second pass over each file, made only
when an HTML report is written. Cases checked against a workflow state have no events;
a live `run` target's run is gone once checked (and is never called twice), so neither
gets a timeline. A case keeps at most `STEP_LIMIT` steps, and a report `REPORT_LIMIT` in
all, so the report stays small at 10,000 cases (a recorded case past them gets `LEFT_OUT`,
which the page says); each text is cut to `TEXT_LIMIT`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime
from typing import Any, Literal

import attrs

from evaldsl.language.jsjson import js_json
from evaldsl.runner.produce import Recording, produce_run, recording_named
from evaldsl.runner.results import Report
from evaldsl.runs.events import (
    AGENT_ERROR,
    ERROR,
    LLM_INVOKE,
    LLM_REQUEST,
    LLM_RESPONSE,
    MCP_CALL,
    POLICY_EVALUATE,
    TOOL_CALL,
    TOOL_RESULT,
    USER_MESSAGE,
    inline_result,
    tool_call_arguments,
    tool_call_name,
)
from evaldsl.runs.model import MISSING, RunError
from evaldsl.runs.text import answer_text, usage_tokens
from evaldsl.suites import Case, Suite

#: Steps kept per case, steps kept per report, and characters kept per text.
STEP_LIMIT = 200
REPORT_LIMIT = 100_000
TEXT_LIMIT = 160

StepKind = Literal["user", "llm", "tool", "guard", "error"]


@attrs.define
class Step:
    """One thing a run did: `at_ms` from the run's first timestamp, `ms` how long it took
    (a call until its response or result; None when unknown), a name (the model, the
    tool) and two short texts: what went in and what came out."""

    kind: StepKind
    name: str
    at_ms: float | None = None
    ms: float | None = None
    sent: str = ""
    got: str = ""
    error: bool = False


@attrs.frozen
class Timeline:
    """A case's steps, and whether the recording had more than were kept."""

    steps: tuple[Step, ...]
    truncated: bool = False


#: The timeline of a recorded case after the report's `REPORT_LIMIT` steps were kept: none
#: of its steps, and more than that (the page says it was left out).
LEFT_OUT = Timeline((), truncated=True)


def timelines(suites: Sequence[Suite], report: Report) -> list[list[Timeline | None]]:
    """One entry per case of the report, suite by suite (None: no recorded run).

    The report's suites are the `suites` given to the runner, in order; each one's cases
    are a subsequence of the loaded suite's (a `-k` selection), found again by name.
    """
    out: list[list[Timeline | None]] = []
    budget = REPORT_LIMIT
    loaded = {s.path: s for s in suites}
    # a recording's steps are read once, however many cases name it (each case read and
    # stepped through it again: 1,600 cases on one 7 MB recording, ~3 s of the HTML report)
    read: dict[Recording, Timeline | None] = {}
    for result in report.suites:
        suite = loaded.get(result.path)
        found: list[Timeline | None] = []
        cases = iter(suite.cases) if suite is not None else iter(())
        for case_result in result.cases:
            case = next((c for c in cases if c.name == case_result.name), None)
            timeline = None
            if suite is not None and case is not None and budget > 0:
                timeline = _read_once(case, suite, min(STEP_LIMIT, budget), read)
                budget -= len(timeline.steps) if timeline is not None else 0
            elif case is not None and _recorded(case):
                # the report's steps are used up: the page says this case's were left out
                # (no timeline at all showed as a case without a recording does)
                timeline = LEFT_OUT
            found.append(timeline)
        out.append(found)
    return out


def _recorded(case: Case) -> bool:
    """Whether a case's run is a recording (`cassette` or `trace`): one with a timeline."""
    return case.source is not None and case.source.kind in ("cassette", "trace")


def _read_once(
    case: Case, suite: Suite, limit: int, read: dict[Recording, Timeline | None]
) -> Timeline | None:
    """`read_timeline`, from the steps read for an earlier case on the same recording when
    there are (limits only shrink along a report, so what was kept covers this one)."""
    recording = recording_named(case, suite)
    if recording is None:
        return read_timeline(case, suite, limit)
    if recording not in read:
        read[recording] = read_timeline(case, suite, limit)
    kept = read[recording]
    if kept is None or len(kept.steps) <= limit:
        return kept
    return Timeline(kept.steps[:limit], truncated=True)


def read_timeline(case: Case, suite: Suite, limit: int = STEP_LIMIT) -> Timeline | None:
    """The steps of a recorded case's run, or None (a state, a live target, or a
    recording that cannot be read: the case's own result already says why)."""
    if not _recorded(case):
        return None
    try:
        run = produce_run(case, suite)
        if run.events is None:
            return None
        steps = list(_steps(run.events, limit + 1))
    except (RunError, OSError, ValueError):
        return None
    return Timeline(tuple(steps[:limit]), truncated=len(steps) > limit)


def _steps(events: Iterable[dict[str, Any]], limit: int) -> Iterator[Step]:
    """Steps in order, each yielded once its event is read; a response or a result fills
    in the step of its request or call afterwards (same object)."""
    start: datetime | None = None
    open_llm: dict[Any, Step] = {}  # request id → its step
    open_tools: dict[Any, Step] = {}  # call id (or event id) → its step
    last_llm: Step | None = None
    count = 0
    for ev in events:
        if not isinstance(ev, dict):
            return
        kind = ev.get("type")
        moment = _moment(ev.get("at"))
        if moment is not None and start is None:
            start = moment
        at = (moment - start).total_seconds() * 1000 if moment and start else None
        step: Step | None = None
        if kind == USER_MESSAGE:
            step = Step("user", "user", at, sent=_short(ev.get("content")))
        elif kind == LLM_REQUEST:
            step = last_llm = Step("llm", str(ev.get("model") or "llm"), at)
            if _keyable(ev.get("id")) is not None:
                open_llm[ev["id"]] = step
        elif kind == LLM_RESPONSE:
            request = open_llm.pop(_keyable(ev.get("requestId")), None) or last_llm
            if request is not None and not request.got:
                _answer(request, ev, at)
            else:
                step = Step("llm", str(ev.get("model") or "llm"), at)
                _answer(step, ev, at)
            last_llm = None
        elif kind == LLM_INVOKE:
            step = Step("llm", str(ev.get("model") or ev.get("name") or "llm"), at)
            step.sent = _short(ev.get("input", ""))
            _answer(step, ev, None)  # one event: its duration is its own `latencyMs`
            latency = ev.get("latencyMs")
            if isinstance(latency, int | float) and not isinstance(latency, bool):
                step.ms = float(latency)
        elif kind in (TOOL_CALL, MCP_CALL):
            step = Step("tool", tool_call_name(ev) or "?", at)
            arguments = tool_call_arguments(ev)
            step.sent = "" if arguments is MISSING else _short(arguments)
            if kind == MCP_CALL:
                result = inline_result(ev)
                step.got = "" if result is MISSING else _short(result)
                step.error = bool(ev.get("isError"))
            else:
                for key in (_keyable(ev.get("callId")), _keyable(ev.get("id"))):
                    if key is not None:
                        open_tools.setdefault(key, step)
        elif kind == TOOL_RESULT:
            call = open_tools.pop(_keyable(ev.get("callId")), None)
            if call is not None:
                call.got = _short(ev.get("output"))
                call.error = bool(ev.get("isError"))
                if at is not None and call.at_ms is not None:
                    call.ms = max(at - call.at_ms, 0.0)
        elif kind == POLICY_EVALUATE:
            step = Step("guard", str(ev.get("name") or "guard"), at)
            step.got = _short(ev.get("decision", ""))
        elif kind in (AGENT_ERROR, ERROR):
            step = Step("error", "error", at, got=_short(ev.get("message", ev.get("error"))))
            step.error = True
        if step is not None:
            count += 1
            yield step
            if count >= limit:
                return


def _keyable(value: Any) -> Any:
    """An id a step can be found by: a list or an object is none (the run's own reading
    made it the case's error; the timeline shows the steps without linking them)."""
    return None if isinstance(value, list | dict) else value


def _answer(step: Step, event: dict[str, Any], at: float | None) -> None:
    """Fill an LLM step from its response: tokens, the answer or the tools it asked for."""
    tokens_in, tokens_out = usage_tokens(event)
    if tokens_in or tokens_out:
        step.sent = f"{tokens_in} → {tokens_out} tokens"
    output = event.get("output")
    asked = _tool_requests(output)
    step.got = (
        f"asks for {', '.join(asked)}" if asked else _short(answer_text(output, strict=False))
    )
    if at is not None and step.at_ms is not None and step.ms is None:
        step.ms = max(at - step.at_ms, 0.0)


def _tool_requests(output: Any) -> list[str]:
    """The tools an OpenAI-shaped response asks for (its answer is then not text)."""
    if not isinstance(output, dict):
        return []
    choices = output.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return []
    message = choices[0].get("message")
    calls = message.get("tool_calls") if isinstance(message, dict) else None
    if not isinstance(calls, list):
        return []
    names = []
    for call in calls:
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            names.append(function["name"])
    return names


def _short(value: Any) -> str:
    """A value as short text: a string as it is, anything else as compact JSON."""
    if value is None or value is MISSING:
        return ""
    text = value if isinstance(value, str) else js_json(value)
    return text if len(text) <= TEXT_LIMIT else text[: TEXT_LIMIT - 1] + "…"


def _moment(value: Any) -> datetime | None:
    """An ISO timestamp (`Z` or an offset; none: UTC) as an aware datetime."""
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
