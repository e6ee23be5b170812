"""Runs: what one execution of an agent left behind, read from any format it was recorded in.

Takes files (traceplay cassettes, JSON event lists, verydia events, cycgraph states, OpenAI
and Anthropic bodies and streams, OpenTelemetry spans, Inspect AI logs, Agents SDK spans)
or values a `run` target returned, and gives `Run` records: a re-iterable trace of event
dicts, a state, an output, a latency and a `Reading` of what was read. Everything
unreadable, and every trace in which nothing was recognised, is a `RunError` with a path,
a line, a column and a hint.
"""

from typing import TYPE_CHECKING

from evaldsl.lazyattrs import lazy_attributes

if TYPE_CHECKING:  # loaded on first use (below); typed as themselves for type checkers
    from evaldsl.runs.cassette import EventStream, load_cassette, read_header
    from evaldsl.runs.detect import (
        FORMATS,
        check_head,
        coerce_run,
        inspect_samples,
        load_run,
        run_from_value,
        scan_tool_names,
    )
    from evaldsl.runs.events import (
        RESPONSE_TYPES,
        STEP_TYPES,
        TOOL_CALL_TYPES,
        VERYDIA_TYPES,
        inline_result,
        load_events,
        tool_call_arguments,
        tool_call_name,
        trace_format,
    )
    from evaldsl.runs.model import MISSING, Reading, Run, RunError
    from evaldsl.runs.state import STATUSES, initial_state, load_state, validate_state
    from evaldsl.runs.text import answer_text, usage_tokens

__all__ = [
    "FORMATS",
    "MISSING",
    "RESPONSE_TYPES",
    "STATUSES",
    "STEP_TYPES",
    "TOOL_CALL_TYPES",
    "VERYDIA_TYPES",
    "EventStream",
    "Reading",
    "Run",
    "RunError",
    "answer_text",
    "check_head",
    "coerce_run",
    "initial_state",
    "inline_result",
    "inspect_samples",
    "load_cassette",
    "load_events",
    "load_run",
    "load_state",
    "read_header",
    "run_from_value",
    "scan_tool_names",
    "tool_call_arguments",
    "tool_call_name",
    "trace_format",
    "usage_tokens",
    "validate_state",
]

# Where each name lives. They are imported on first use, not with the package: importing
# any module of `runs` (the index, the cassette reader) loads this package first, and
# loading every format's adapter here would make `evaldsl check` import what it never uses.
_HOMES = {
    "EventStream": "evaldsl.runs.cassette",
    "load_cassette": "evaldsl.runs.cassette",
    "read_header": "evaldsl.runs.cassette",
    "FORMATS": "evaldsl.runs.detect",
    "check_head": "evaldsl.runs.detect",
    "coerce_run": "evaldsl.runs.detect",
    "inspect_samples": "evaldsl.runs.detect",
    "load_run": "evaldsl.runs.detect",
    "run_from_value": "evaldsl.runs.detect",
    "scan_tool_names": "evaldsl.runs.detect",
    "RESPONSE_TYPES": "evaldsl.runs.events",
    "STEP_TYPES": "evaldsl.runs.events",
    "TOOL_CALL_TYPES": "evaldsl.runs.events",
    "VERYDIA_TYPES": "evaldsl.runs.events",
    "inline_result": "evaldsl.runs.events",
    "load_events": "evaldsl.runs.events",
    "tool_call_arguments": "evaldsl.runs.events",
    "tool_call_name": "evaldsl.runs.events",
    "trace_format": "evaldsl.runs.events",
    "MISSING": "evaldsl.runs.model",
    "Reading": "evaldsl.runs.model",
    "Run": "evaldsl.runs.model",
    "RunError": "evaldsl.runs.model",
    "STATUSES": "evaldsl.runs.state",
    "initial_state": "evaldsl.runs.state",
    "load_state": "evaldsl.runs.state",
    "validate_state": "evaldsl.runs.state",
    "answer_text": "evaldsl.runs.text",
    "usage_tokens": "evaldsl.runs.text",
}


__getattr__ = lazy_attributes(__name__, _HOMES)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
