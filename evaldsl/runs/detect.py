"""Which adapter reads a run: format detection, and runs made of values.

Takes a path (and optionally a format name), or a value already in memory, and gives a
`Run`. `load_run` detects the format of a file; `coerce_run` accepts a `Run`, a path, an
event list or a state dict; `run_from_value` turns what a `run` target returned into a run.

Detection, in order: a file whose first non-blank line is an object with a `"cassette"` key
is a traceplay cassette; another `.jsonl`/`.ndjson` file holds one event per line; otherwise
the file is one JSON document: an array is an event list, an object with `status`, `memory`
or `visited_nodes` a cycgraph state, an object with an `events` or `trace` array an event
list, and an object with `resourceSpans` an OTLP trace. (A `.json` file whose lines are
separate objects is read as JSONL too.) Named formats skip detection:
`traceplay`/`cassette`, `events`, `verydia`, `state`/`cycgraph`, `openai`, `anthropic`, `otel`.

The adapters live beside this module: `cassette` (traceplay), `events` (event lists and
verydia), `state` (cycgraph), `providers` (`openai`/`anthropic` response bodies) and `otel`
(OTLP JSON, whose span-to-event mapping that module documents).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import attrs
import orjson

from evaldsl.language.diagnostics import did_you_mean
from evaldsl.runs.cassette import EventStream, first_line, load_cassette
from evaldsl.runs.events import (
    LINE_EXTENSIONS,
    events_from_document,
    load_event_lines,
    load_events,
    trace_format,
)
from evaldsl.runs.model import (
    Run,
    RunError,
    check_file,
    decode_document,
    decode_text,
    describe,
    json_error,
    os_error,
    read_bytes,
)
from evaldsl.runs.otel import otel_events as otel_events  # re-export: `detect.otel_events`
from evaldsl.runs.otel import otel_run
from evaldsl.runs.providers import provider_events
from evaldsl.runs.state import (
    is_state_value,
    load_state,
    looks_like_state,
    state_from_document,
    validate_state,
)

#: Format names `load_run` accepts, and the adapter format each one means.
FORMATS: dict[str, str] = {
    "traceplay": "traceplay",
    "cassette": "traceplay",
    "events": "events",
    "verydia": "verydia",
    "state": "cycgraph",
    "cycgraph": "cycgraph",
    "openai": "openai",
    "anthropic": "anthropic",
    "otel": "otel",
}

_KINDS_HINT = (
    'expected a traceplay cassette, a JSON array of events, an object with an "events" '
    "array, or a workflow state; name another format with `as FORMAT` (openai, anthropic, otel)"
)


def load_run(path: str | os.PathLike[str], format: str | None = None) -> Run:
    """Read the run a file holds, detecting its format unless `format` names one.

    Every failure is a `RunError` (E501 when the file does not exist), never a traceback.

    >>> load_run("tests/fixtures/traceplay/streaming/cassette.streaming.jsonl").format
    'traceplay'
    """
    p = os.fspath(path)
    if format is not None:
        return _load_as(p, _canonical_format(format, p))
    check_file(p)
    first, lineno = _first_line(p)
    if not lineno:
        raise RunError(
            "empty cassette" if p.lower().endswith(LINE_EXTENSIONS) else "empty file",
            path=p,
            hint=_KINDS_HINT,
        )
    head = _try_object(first)
    if head is not None and "cassette" in head:
        return load_cassette(p)
    if p.lower().endswith(LINE_EXTENSIONS):
        run = load_event_lines(p)
        if head is None and isinstance(run.events, EventStream):
            run.events.first()  # a first line that is no event fails now, not on first read
        return run
    data = read_bytes(p)
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        if head is not None and exc.lineno > lineno:
            return load_event_lines(p)  # one object per line in a file not named .jsonl
        raise json_error(exc, data, p, hint=_KINDS_HINT) from None
    return _from_document(doc, p, decode_text(data))


def _first_line(path: str) -> tuple[bytes, int]:
    try:
        with open(path, "rb") as f:
            return first_line(f)
    except OSError as exc:
        raise os_error(path, exc) from None


def _try_object(raw: bytes) -> dict[str, Any] | None:
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def _from_document(doc: Any, path: str, text: str) -> Run:
    if isinstance(doc, list):
        return events_from_document(doc, path=path, text=text)
    if looks_like_state(doc):
        return state_from_document(doc, path=path, text=text)
    if isinstance(doc, dict) and ("events" in doc or "trace" in doc):
        return events_from_document(doc, path=path, text=text)
    if isinstance(doc, dict) and "resourceSpans" in doc:
        return otel_run(doc, path)
    raise RunError(
        f"cannot tell what kind of run this is ({describe(doc)})", path=path, hint=_KINDS_HINT
    )


def _canonical_format(name: str, path: str) -> str:
    found = FORMATS.get(name.lower())
    if found is None:
        near = did_you_mean(name, FORMATS)
        hint = (f'did you mean "{near}"? ' if near else "") + "formats: " + ", ".join(FORMATS)
        raise RunError(f'unknown run format "{name}"', path=path, hint=hint)
    return found


def _load_as(path: str, fmt: str) -> Run:
    if fmt == "traceplay":
        return load_cassette(path)
    if fmt in ("events", "verydia"):
        return load_events(path, "verydia" if fmt == "verydia" else None)
    if fmt == "cycgraph":
        return load_state(path)
    data = read_bytes(path)
    text = decode_text(data)
    doc = decode_document(data, path)
    if fmt == "otel":
        return otel_run(doc, path)
    return Run(events=provider_events(doc, fmt, path=path, text=text), path=path, format=fmt)


# --- values ----------------------------------------------------------------------------------


def coerce_run(value: object, *, base: Path | None = None) -> Run:
    """Make a `Run` of whatever names or holds one.

    A `Run` is itself; a `str` or path-like is a file (relative to `base` when given) read by
    `load_run`; a list must be event objects; a dict with `status`, `memory` or
    `visited_nodes` is a state (checked like a state file); a dict with an `events`/`trace`
    list is a trace; any other value is the run's output. For what a `run` target returned,
    where a string is an answer and not a path, use `run_from_value`.

    >>> coerce_run([{"type": "tool.call", "name": "search"}]).kind
    'trace'
    """
    if isinstance(value, Run):
        return value
    if isinstance(value, str | os.PathLike):
        p = Path(value)
        if base is not None and not p.is_absolute():
            p = base / p
        return load_run(p)
    if isinstance(value, list):
        # Not walked here: the index pass reports a non-object element by its index, and
        # the format is told by the first events, so a million in-memory events are read
        # once, not three times.
        head = [e for e in value[:1000] if isinstance(e, dict)]
        return Run(events=value, format=trace_format(head))
    if isinstance(value, dict) and looks_like_state(value):
        return state_from_document(value, path="<value>")
    if isinstance(value, dict) and ("events" in value or "trace" in value):
        return events_from_document(value, path="<value>")
    return Run(events=None, output=value, format="value")


def run_from_value(value: object, *, latency_ms: float | None = None) -> Run:
    """The run a `run` target's return value stands for.

    A `Run` is kept; a non-empty list of objects that all have a string `type` is a trace;
    a dict with `memory` or `visited_nodes`, or a `status` that is one of cycgraph's
    statuses, is a state (a wrong field type is a `RunError`); a dict with an
    `events`/`trace` event list (empty too, beside an `output`) is a trace with its
    `output`; anything else (text,
    `{"status": "ok"}`, `[]`) is the output value.

    >>> run_from_value("Paris is sunny").output
    'Paris is sunny'
    """
    if isinstance(value, Run):
        run = value
    elif _is_event_list(value):
        assert isinstance(value, list)
        run = Run(events=value, format=trace_format(value))
    elif is_state_value(value):
        assert isinstance(value, dict)
        errors = validate_state(value, "<value>")
        if errors:
            raise errors[0]
        run = Run(events=None, state=value, format="cycgraph")
    elif isinstance(value, dict) and any(
        _is_event_list(value.get(k)) or (value.get(k) == [] and "output" in value)
        for k in ("events", "trace")
    ):
        run = events_from_document(value, path="<value>")
    else:
        run = Run(events=None, output=value, format="value")
    if latency_ms is not None and run.latency_ms is None:
        run = attrs.evolve(run, latency_ms=latency_ms)
    return run


def _is_event_list(value: object) -> bool:
    return (
        isinstance(value, list)
        and bool(value)
        and all(isinstance(e, dict) and isinstance(e.get("type"), str) for e in value)
    )
