"""cycgraph workflow states: a final `WorkflowState` as JSON.

Takes a `.json` file (or a dict a live target returned) holding cycgraph's WorkflowState
fields (docs/language.md §9.4) and gives a `Run` of format "cycgraph" whose `state` is that
object. An object `{"state": {...}, "output": ...}` without a `status` of its own is
unwrapped, and its `output` kept. Also gives `initial_state`, cycgraph's `buildInitialState`
for `run` targets that take a state (docs/language.md §2.3).

The fields evaldsl reads are type-checked, each error at its line and column in the file:
`status` (one of the nine statuses), `memory` (an object), `visited_nodes` (a list of
names), `goal` (text), `constraints` (a list of text) and the counters (`total_tokens_used`,
`total_input_tokens`, `total_output_tokens`, `total_cost_usd`, `iteration_count`,
`max_token_budget`, `budget_usd`), which must be numbers: a boolean or a quoted number is
an error, never coerced (docs/language.md §6.7). Absent fields are fine: the subject that
needs one reports it. `max_token_budget` and `budget_usd` may be `null` (no budget).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, Protocol

from evaldsl.language.diagnostics import did_you_mean
from evaldsl.language.jsjson import js_json
from evaldsl.language.vocabulary import STATUS_VALUES
from evaldsl.runs.model import (
    MISSING,
    Run,
    RunError,
    decode_document,
    decode_text,
    describe,
    locate,
    read_bytes,
)

STATUSES = STATUS_VALUES  # cycgraph's statuses, declared once in the vocabulary

#: Any one of these makes a JSON object a state when a file's kind is detected.
STATE_KEYS = ("status", "memory", "visited_nodes")
#: cycgraph's own WorkflowState fields: a `status` alone is not a state (a Responses API
#: body and an Inspect AI log have one too); a cycgraph status beside one of these is.
STATE_FIELDS = (
    "memory",
    "visited_nodes",
    "goal",
    "constraints",
    "total_tokens_used",
    "total_input_tokens",
    "total_output_tokens",
    "total_cost_usd",
    "iteration_count",
    "max_token_budget",
    "budget_usd",
    "node_breakdown",
    "model_breakdown",
    "supervisor_history",
    "last_error",
    "max_execution_time_ms",
    "workflow_id",
)

_COUNTERS = (
    "total_tokens_used",
    "total_input_tokens",
    "total_output_tokens",
    "total_cost_usd",
    "iteration_count",
)
_OPTIONAL_COUNTERS = ("max_token_budget", "budget_usd")  # null means "no budget"

_STATE_HINT = "a workflow state is a JSON object with cycgraph's WorkflowState fields"


def looks_like_state(doc: Any) -> bool:
    """Whether a value given in memory is meant as a state: an object with a status, memory
    or nodes (loose on purpose: the caller said it is a run; a wrong field is reported).
    Files are detected by the stricter `is_state_document`.
    """
    return isinstance(doc, dict) and (
        any(k in doc for k in STATE_KEYS) or _wrapped_state(doc) is not None
    )


def is_state_document(doc: Any) -> bool:
    """Whether a decoded file is a cycgraph state, by its signature: `memory` or
    `visited_nodes`, or a cycgraph status beside another WorkflowState field (also inside
    `{"state": {...}}`).

    A state file with a misspelt status but its memory is still a state, and is reported as
    a bad state, not as a file of unknown kind.

    >>> is_state_document({"status": "completed", "output": [], "usage": {}})
    False
    >>> is_state_document({"status": "completed", "total_tokens_used": 3})
    True
    """
    if not isinstance(doc, dict):
        return False
    inner = _wrapped_state(doc)
    if inner is not None:
        return is_state_document(inner)
    if "memory" in doc or "visited_nodes" in doc:
        return True
    return doc.get("status") in STATUSES and any(k in doc for k in STATE_FIELDS)


def is_state_value(value: Any) -> bool:
    """Whether a live target's return value is a state rather than an output value.

    Stricter than `looks_like_state`: `{"status": "ok"}` is an ordinary output.
    """
    if not isinstance(value, dict):
        return False
    if "memory" in value or "visited_nodes" in value:
        return True
    return value.get("status") in STATUSES


def _wrapped_state(doc: dict[str, Any]) -> dict[str, Any] | None:
    inner = doc.get("state")
    if "status" not in doc and isinstance(inner, dict):
        return inner
    return None


def load_state(path: str | os.PathLike[str]) -> Run:
    """A workflow-state file as a `Run`; `RunError` at the first field of the wrong type."""
    p = os.fspath(path)
    data = read_bytes(p)
    doc = decode_document(data, p, hint=_STATE_HINT)
    return state_from_document(doc, path=p, text=decode_text(data))


def state_from_document(doc: Any, *, path: str, text: str | None = None) -> Run:
    """A decoded state document as a `Run` (format "cycgraph").

    `text` is the file's text, used to put lines and columns on errors.
    """
    if not isinstance(doc, dict):
        raise RunError(
            f"a workflow state must be a JSON object, found {describe(doc)}",
            path=path,
            hint=_STATE_HINT,
        )
    at: tuple[str, ...] = ()
    output: Any = MISSING
    inner = _wrapped_state(doc)
    if inner is not None:
        at, output, doc = ("state",), doc.get("output", MISSING), inner
    if not any(k in doc for k in STATE_KEYS):
        raise RunError(
            'not a workflow state: no "status", "memory" or "visited_nodes" field',
            path=path,
            hint=_STATE_HINT,
        )
    errors = validate_state(doc, path, text=text, at=at)
    if errors:
        raise errors[0]
    return Run(events=None, state=doc, output=output, path=path, format="cycgraph")


def validate_state(
    d: dict[str, Any], path: str, *, text: str | None = None, at: Sequence[str] = ()
) -> list[RunError]:
    """Every field of `d` evaldsl reads that has the wrong type, in file order.

    `text` (the file's text) and `at` (where the state sits in it) give the errors their
    positions; without `text` (a live target's value) they point at line 1.

    >>> [e.message for e in validate_state({"status": "done", "memory": []}, "s.json")]
    ['unknown status "done"', '"memory" must be an object, found a list']
    """
    errors: list[RunError] = []

    def report(message: str, steps: Sequence[str | int], hint: str | None = None) -> None:
        offset = None if text is None else locate(text, [*at, *steps], at_key=True)
        if text is None:
            errors.append(RunError(message, path=path, hint=hint))
        else:
            errors.append(
                RunError.at_offset(message, path=path, text=text, offset=offset, hint=hint)
            )

    _check_status(d, report)
    if "memory" in d and not isinstance(d["memory"], dict):
        report(f'"memory" must be an object, found {describe(d["memory"])}', ["memory"])
    _check_names(d, "visited_nodes", "node name", report)
    if "goal" in d and not isinstance(d["goal"], str):
        report(f'"goal" must be text, found {describe(d["goal"])}', ["goal"])
    _check_names(d, "constraints", "constraint", report)
    for field in (*_COUNTERS, *_OPTIONAL_COUNTERS):
        _check_number(d, field, report)
    if text is not None:
        errors.sort(key=lambda e: (e.line, e.column))
    return errors


class _Report(Protocol):
    """The `report` callback of `validate_state`."""

    def __call__(
        self, message: str, steps: Sequence[str | int], hint: str | None = None
    ) -> None: ...


def _check_status(d: dict[str, Any], report: _Report) -> None:
    if "status" not in d:
        return
    status = d["status"]
    choices = ", ".join(STATUSES)
    if not isinstance(status, str):
        report(
            f'"status" must be text, found {describe(status)}',
            ["status"],
            f"a status is one of: {choices}",
        )
    elif status not in STATUSES:
        near = did_you_mean(status, STATUSES)
        hint = f'did you mean "{near}"? ' if near else ""
        report(f'unknown status "{status}"', ["status"], f"{hint}a status is one of: {choices}")


def _check_names(d: dict[str, Any], field: str, what: str, report: _Report) -> None:
    if field not in d:
        return
    value = d[field]
    if not isinstance(value, list):
        report(f'"{field}" must be a list of {what}s, found {describe(value)}', [field])
        return
    for i, item in enumerate(value):
        if not isinstance(item, str):
            report(f"{field}[{i}] must be a {what} (text), found {describe(item)}", [field, i])
            return  # one per list: the rest are usually wrong the same way


def _check_number(d: dict[str, Any], field: str, report: _Report) -> None:
    if field not in d:
        return
    value = d[field]
    if value is None and field in _OPTIONAL_COUNTERS:
        return
    if isinstance(value, int | float) and not isinstance(value, bool):
        if value < 0 and field in _COUNTERS:  # a negative count would pass `tokens <= N`
            report(f'"{field}" must be a number ≥ 0, found {value}', [field])
        return
    hint = None
    if isinstance(value, str) and _is_number_text(value):
        hint = f"write the number without quotes: {value.strip()}"
    elif isinstance(value, bool):
        hint = "a count is a number; true and false are not counts"
    found = describe(value) + (f" ({js_json(value)})" if isinstance(value, str | bool) else "")
    report(f'"{field}" must be a number, found {found}', [field], hint)


def _is_number_text(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


# --- cycgraph's buildInitialState ------------------------------------------------------------


def initial_state(input: dict[str, Any], *, timeout_ms: float | None = None) -> dict[str, Any]:
    """The state cycgraph builds from a case `input` before a workflow runs (§1.3).

    `memory` is the whole input (control keys included); `goal` is `input.goal` when it is
    text, else "Eval case execution"; `constraints` keeps only the text items;
    `max_token_budget` is set only when the input gives a number (a boolean is not one).

    >>> s = initial_state({"goal": 7, "constraints": ["be fast", 42], "max_token_budget": True})
    >>> s["goal"], s["constraints"], "max_token_budget" in s
    ('Eval case execution', ['be fast'], False)
    """
    goal = input.get("goal")
    constraints = input.get("constraints")
    budget = input.get("max_token_budget")
    state: dict[str, Any] = {
        "goal": goal if isinstance(goal, str) else "Eval case execution",
        "constraints": (
            [c for c in constraints if isinstance(c, str)] if isinstance(constraints, list) else []
        ),
        "status": "pending",
        "memory": dict(input),
        "visited_nodes": [],
        "iteration_count": 0,
        "total_tokens_used": 0,
        "total_input_tokens": 0,
        "total_output_tokens": 0,
        "total_cost_usd": 0,
        # cycgraph: `timeout_ms || 60000`, so 0 means the default too
        "max_execution_time_ms": timeout_ms or 60000,
    }
    if isinstance(budget, int | float) and not isinstance(budget, bool):
        state["max_token_budget"] = budget
    return state
