"""Mutants: small, typed changes to a recorded run, each said in words.

Takes a run's events (the normalised event model every adapter in `evaldsl.runs` gives:
`llm.request`, `llm.response` with `output` and `usage`, `tool.call` with `name`,
`arguments` and `callId`, `tool.result` with `callId` and `output`, verydia's `llm.invoke`
and `mcp.call`) and its workflow state (`status`, `visited_nodes`, `memory`, token
counters), and gives every mutant of them: a kind, a description that reads after "no
assertion noticed when …", and a function that builds the mutated events and state. The
originals are never changed: a mutant copies the list and deep-copies only what it alters.

Kinds (`KINDS`): on a trace, drop a tool call (with its result), duplicate it, swap two
neighbouring calls, change one argument value, drop a tool result, alter the answer (a
near miss, its digits changed, truncated), double the tokens, double the steps; on a
state, change the status, drop a visited node, remove or alter a memory key, double the
tokens, double the steps (`iteration_count`). Choices a mutant makes (which letter of the
answer changes) come from a random generator seeded by the caller's seed and the mutant's
own place, so a mutant is the same whichever others are picked.
"""

from __future__ import annotations

import copy
import itertools
import json
import math
import random
import re
import sys
from collections.abc import Callable, Iterator
from typing import Any, Literal

import attrs

from evaldsl.runs.events import (
    LLM_REQUEST,
    MCP_CALL,
    RESPONSE_TYPES,
    STEP_TYPES,
    TOOL_CALL_TYPES,
    TOOL_RESULT,
    inline_result,
    is_kind,
    tool_call_arguments,
    tool_call_name,
)
from evaldsl.runs.model import MISSING
from evaldsl.runs.state import STATUSES
from evaldsl.runs.text import answer_text, usage_tokens

MutantKind = Literal[
    "drop-call",
    "duplicate-call",
    "swap-calls",
    "change-argument",
    "drop-result",
    "answer-near-miss",
    "answer-digits",
    "answer-truncated",
    "double-tokens",
    "double-steps",
    "change-status",
    "drop-node",
    "remove-memory-key",
    "alter-memory-key",
]
KINDS: tuple[MutantKind, ...] = MutantKind.__args__  # type: ignore[attr-defined]

Events = list[dict[str, Any]]
State = dict[str, Any]

#: Characters of a value shown in a description before it is cut.
SHOWN = 40


@attrs.frozen
class Mutant:
    """One change to a run: what kind, in words, and how to make it."""

    kind: MutantKind
    description: str
    make: Callable[[], tuple[Events | None, State | None]] = attrs.field(eq=False, repr=False)


def mutants(events: Events | None, state: State | None, *, seed: int = 0) -> list[Mutant]:
    """Every mutant of a run, in a fixed order: the trace's, then the state's.

    >>> events = [{"type": "tool.call", "name": "search", "arguments": {"q": "x"}}]
    >>> [m.description for m in mutants(events, None)][:2]
    ['the call to `search` was dropped (it had no result)', 'the call to `search` was made twice']
    """
    found: list[Mutant] = []
    if events is not None:
        found += _trace_mutants(events, state, seed)
    if state is not None:
        found += _state_mutants(events, state, seed)
    return found


def _rng(seed: int, kind: str, place: object) -> random.Random:
    """A generator for one mutant's choices: the same seed and place give the same mutant."""
    return random.Random(f"{seed}:{kind}:{place}")


# ---- traces ------------------------------------------------------------------------------


@attrs.frozen
class _Call:
    index: int  # in the event list
    name: str
    number: int  # 1-based among this tool's calls
    results: tuple[int, ...]  # indexes of the tool.result events linked to it
    # how many calls its tool has in all (a description says "call 2 of `search`" when
    # more than one: counted once, where each description counted every call, quadratic
    # in the calls of a recording)
    of: int = 1


def _calls(events: Events) -> list[_Call]:
    """The tool calls, each with the results that name it, linked as the run index links
    them: a result names the latest call before it filed under its `callId` (a call is
    filed under its `callId`, and under its event `id` when no call is filed there yet;
    traceplay cassettes before v0.6 have no callId). So a result belongs to one call at
    most: a recording whose calls all reuse one id (a log that joins runs, a server that
    reuses ids) linked each of N results to each of N calls, N² drop-result mutants."""
    owner: dict[Any, int | None] = {}  # an id → the call (its position) it names now
    linked: list[list[int]] = []
    numbers: dict[str, int] = {}
    calls: list[_Call] = []
    for i, ev in enumerate(events):
        kind = ev.get("type")
        if kind == TOOL_RESULT:
            k = owner.get(_hashable(ev.get("callId")))
            if k is not None:
                linked[k].append(i)
            continue
        if not is_kind(ev, TOOL_CALL_TYPES):
            continue
        call_id = None if kind == MCP_CALL else ev.get("callId")
        if call_id is not None:
            owner[_hashable(call_id)] = None  # hidden, even by a call no name is read for
        name = tool_call_name(ev)
        if name is None:
            continue
        numbers[name] = numbers.get(name, 0) + 1
        if kind != MCP_CALL:  # its result is inline: no result event names it
            event_id = ev.get("id")
            if event_id is not None:
                owner.setdefault(_hashable(event_id), len(calls))
            if call_id is not None:
                owner[_hashable(call_id)] = len(calls)
        calls.append(_Call(i, name, numbers[name], ()))
        linked.append([])
    return [
        attrs.evolve(call, results=tuple(found), of=numbers[call.name])
        for call, found in zip(calls, linked, strict=True)
    ]


def _hashable(value: Any) -> Any:
    return value if isinstance(value, str | int | float | bool | None) else json.dumps(value)


def _call_name(call: _Call) -> str:
    """`the call to `search`` for a tool called once, else `call 2 of `search``."""
    if call.of == 1:
        return f"the call to `{call.name}`"
    return f"call {call.number} of `{call.name}`"


def _trace_mutants(events: Events, state: State | None, seed: int) -> Iterator[Mutant]:
    calls = _calls(events)
    for call in calls:
        yield _drop_call(events, state, call)
        yield _duplicate_call(events, state, call)
    for a, b in itertools.pairwise(calls):
        if events[a.index] != events[b.index]:
            yield _swap_calls(events, state, a, b)
    for call in calls:
        args = tool_call_arguments(events[call.index])
        for path, value in _leaves(args):
            yield _change_argument(events, state, call, path, value)
    for call in calls:
        ev = events[call.index]
        if ev.get("type") == MCP_CALL:
            if inline_result(ev) is not MISSING:
                yield _drop_inline_result(events, state, call)
        else:
            for r in call.results:
                yield _drop_result(events, state, call, r)
    answer = _last_answer(events)
    if answer is not None:
        index, text = answer
        yield from _answer_mutants(events, state, index, text, seed)
    tokens = _trace_tokens(events)
    if tokens:
        yield Mutant(
            "double-tokens",
            f"tokens doubled ({tokens} → {2 * tokens})",
            lambda: ([_double_usage(ev) for ev in events], state),
        )
    steps = sum(1 for ev in events if is_kind(ev, STEP_TYPES))
    if steps:
        yield Mutant(
            "double-steps",
            f"steps doubled ({steps} → {2 * steps}: every LLM call made twice)",
            lambda: (_double_steps(events), state),
        )


def _without(events: Events, drop: set[int]) -> Events:
    return [ev for i, ev in enumerate(events) if i not in drop]


def _drop_call(events: Events, state: State | None, call: _Call) -> Mutant:
    with_result = ", with its result" if call.results else " (it had no result)"
    if events[call.index].get("type") == MCP_CALL:
        with_result = ", with its result"
    drop = {call.index, *call.results}
    return Mutant(
        "drop-call",
        f"{_call_name(call)} was dropped{with_result}",
        lambda: (_without(events, drop), state),
    )


def _duplicate_call(events: Events, state: State | None, call: _Call) -> Mutant:
    def make() -> tuple[Events | None, State | None]:
        original = events[call.index]
        twin = copy.deepcopy(original)
        # the copy gets ids of its own, so its result links to it and not to the original
        for field in ("id", "callId"):
            if isinstance(twin.get(field), str):
                twin[field] = twin[field] + "-again"
        out: Events = []
        for i, ev in enumerate(events):
            out.append(ev)
            if i == call.index:
                out.append(twin)
            if i in call.results:
                result = copy.deepcopy(ev)
                if isinstance(twin.get("callId"), str):
                    result["callId"] = twin["callId"]
                elif isinstance(twin.get("id"), str):
                    result["callId"] = twin["id"]
                if isinstance(result.get("id"), str):
                    result["id"] = result["id"] + "-again"
                out.append(result)
        return out, state

    return Mutant("duplicate-call", f"{_call_name(call)} was made twice", make)


def _swap_calls(events: Events, state: State | None, a: _Call, b: _Call) -> Mutant:
    def make() -> tuple[Events | None, State | None]:
        out = list(events)
        out[a.index], out[b.index] = events[b.index], events[a.index]
        return out, state

    return Mutant(
        "swap-calls",
        f"{_call_name(a)} and {_call_name(b)} swapped places",
        make,
    )


def _leaves(value: Any, path: str = "$") -> Iterator[tuple[str, Any]]:
    """Every scalar inside a JSON value with its JSONPath (`$.city`, `$.items[0]`)."""
    if isinstance(value, dict):
        for key, item in value.items():
            step = (
                f".{key}"
                if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key)
                else (f"[{json.dumps(key, ensure_ascii=False)}]")
            )
            yield from _leaves(item, path + step)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _leaves(item, f"{path}[{i}]")
    elif value is not MISSING and path != "$":
        yield path, value


def _set_leaf(value: Any, path: str, new: Any) -> Any:
    """A deep copy of `value` with the scalar at `path` (as `_leaves` names it) replaced."""
    out = copy.deepcopy(value)
    steps = _path_steps(path)
    target = out
    for step in steps[:-1]:
        target = target[step]
    target[steps[-1]] = new
    return out


def _path_steps(path: str) -> list[str | int]:
    steps: list[str | int] = []
    for m in re.finditer(r"\.([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]|\[(\"(?:[^\"\\]|\\.)*\")\]", path):
        if m.group(1) is not None:
            steps.append(m.group(1))
        elif m.group(2) is not None:
            steps.append(int(m.group(2)))
        else:
            steps.append(json.loads(m.group(3)))
    return steps


def perturb(value: Any) -> Any:
    """A value near `value` but different: text gets `_` appended, a number 1 added (a
    float too large for 1 to change, from 2**53 on, becomes the next float), a boolean
    negated, null becomes "_", a list loses its last item (an empty one gains "_"), an
    object its last key (an empty one gains `"_": null`).

    >>> perturb("Xiamen"), perturb(41), perturb(True), perturb([1, 2]), perturb({"a": 1})
    ('Xiamen_', 42, False, [1], {})
    >>> perturb(1e300)
    1.0000000000000002e+300
    """
    if isinstance(value, bool):
        return not value
    if isinstance(value, str):
        return value + "_"
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        # (`1e300 + 1` is 1e300: a mutant equal to the original, counted a survivor that
        # no assertion could notice; the largest float steps down, as up is no JSON number)
        new = value + 1
        if new == value:
            new = math.nextafter(value, -math.inf if value == sys.float_info.max else math.inf)
        return new
    if value is None:
        return "_"
    if isinstance(value, list):
        return copy.deepcopy(value[:-1]) if value else ["_"]
    if isinstance(value, dict):
        if not value:
            return {"_": None}
        last = list(value)[-1]
        return {k: copy.deepcopy(v) for k, v in value.items() if k != last}
    return value


def shown(value: Any) -> str:
    """A value as a description shows it: compact JSON, cut at `SHOWN` characters.

    >>> shown({"approved": True})
    '{"approved": true}'
    """
    text = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    return text if len(text) <= SHOWN else text[: SHOWN - 1] + "…"


def changed_from(old: Any, new: Any) -> str:
    """`from OLD to NEW`, each shown so that the difference is visible: a long text that
    only grew at its end is shown by its end, cut at the same place in both.

    >>> changed_from("Xiamen", "Xiamen_")
    'from "Xiamen" to "Xiamen_"'
    >>> changed_from("x" * 50 + ".", "x" * 50 + "._")[:25]
    'from "…xxxxxxxxxxxxxxxxxx'
    """
    grew = isinstance(old, str) and isinstance(new, str) and new.startswith(old)
    if grew and len(shown(new)) >= SHOWN:
        at = max(0, len(old) - (SHOWN - 8))
        return f"from {_from(old, at)} to {_from(new, at)}"
    return f"from {shown(old)} to {shown(new)}"


def _from(text: str, at: int) -> str:
    quoted = json.dumps(text[at:], ensure_ascii=False)
    return quoted if at == 0 else '"…' + quoted[1:]


def _change_argument(
    events: Events, state: State | None, call: _Call, path: str, value: Any
) -> Mutant:
    new = perturb(value)

    def make() -> tuple[Events | None, State | None]:
        out = list(events)
        ev = dict(events[call.index])
        key = _arguments_key(ev)
        ev[key] = _set_leaf(ev[key], path, new)
        out[call.index] = ev
        return out, state

    many = call.of > 1
    where = f" in call {call.number}" if many else ""
    return Mutant(
        "change-argument",
        f"`{call.name}`'s `{path}` changed {changed_from(value, new)}{where}",
        make,
    )


def _arguments_key(ev: dict[str, Any]) -> str:
    if ev.get("type") == MCP_CALL:
        return next((k for k in ("arguments", "args", "input") if k in ev), "arguments")
    return "arguments"


def _drop_result(events: Events, state: State | None, call: _Call, index: int) -> Mutant:
    return Mutant(
        "drop-result",
        f"the result of {_call_name(call)} was dropped",
        lambda: (_without(events, {index}), state),
    )


def _drop_inline_result(events: Events, state: State | None, call: _Call) -> Mutant:
    def make() -> tuple[Events | None, State | None]:
        out = list(events)
        out[call.index] = {
            k: v for k, v in events[call.index].items() if k not in ("result", "output")
        }
        return out, state

    return Mutant("drop-result", f"the result of {_call_name(call)} was dropped", make)


# ---- the answer --------------------------------------------------------------------------


def _last_answer(events: Events) -> tuple[int, str] | None:
    """The index and text of the last LLM response, the run's `answer`."""
    for i in range(len(events) - 1, -1, -1):
        if is_kind(events[i], RESPONSE_TYPES):
            text = answer_text(events[i].get("output"))
            return (i, text) if text else None
    return None


def with_answer(output: Any, text: str) -> Any:
    """`output` (a response's output, in any shape answer extraction reads) changed so its
    answer text is `text`; `MISSING` when no shape could say it.

    >>> with_answer({"choices": [{"message": {"content": "a"}}]}, "b")
    {'choices': [{'message': {'content': 'b'}}]}
    """
    candidates: list[Any] = []
    if isinstance(output, str) or output is None:
        candidates.append(text)
    elif isinstance(output, dict):
        new = copy.deepcopy(output)
        choices = new.get("choices")
        if isinstance(choices, list) and choices and isinstance(choices[0], dict):
            message = choices[0].get("message")
            if isinstance(message, dict) and isinstance(message.get("content"), str | list):
                message["content"] = text
                candidates.append(new)
            elif isinstance(choices[0].get("text"), str):
                choices[0]["text"] = text
                candidates.append(new)
        elif isinstance(new.get("content"), list):
            new["content"] = [{"type": "text", "text": text}]
            candidates.append(new)
        elif isinstance(new.get("content"), str):
            new["content"] = text
            candidates.append(new)
        elif isinstance(new.get("text"), str):
            new["text"] = text
            candidates.append(new)
    for candidate in candidates:
        if answer_text(candidate) == text:
            return candidate
    return MISSING


def _answer_mutants(
    events: Events, state: State | None, index: int, text: str, seed: int
) -> Iterator[Mutant]:
    def changed(new_text: str) -> Callable[[], tuple[Events | None, State | None]]:
        def make() -> tuple[Events | None, State | None]:
            out = list(events)
            ev = dict(events[index])
            ev["output"] = with_answer(ev.get("output"), new_text)
            out[index] = ev
            return out, state

        return make

    if with_answer(events[index].get("output"), text + "_") is MISSING:
        return  # an answer in a shape this module cannot rewrite: no answer mutants
    letters = [i for i, ch in enumerate(text) if ch.isalpha()]
    if letters:
        at = _rng(seed, "answer-near-miss", index).choice(letters)
        ch = text[at]
        swapped = _next_letter(ch)
        near = text[:at] + swapped + text[at + 1 :]
        word = _word_at(text, at)
        yield Mutant(
            "answer-near-miss",
            f"the answer became a near miss ({shown(word[1])} → "
            f"{shown(near[word[0] : word[0] + len(word[1])])})",
            changed(near),
        )
    if any(ch.isdigit() for ch in text):
        digits = re.sub(r"[0-9]", lambda m: str((int(m.group()) + 1) % 10), text)
        numbers = re.findall(r"[0-9]+", text)[:3]
        shown_numbers = ", ".join(
            f"{n} → {re.sub(r'[0-9]', lambda m: str((int(m.group()) + 1) % 10), n)}"
            for n in numbers
        )
        yield Mutant(
            "answer-digits",
            f"the answer's digits changed ({shown_numbers})",
            changed(digits),
        )
    if len(text) >= 2:
        half = text[: len(text) // 2]
        yield Mutant(
            "answer-truncated",
            f"the answer was cut to its first half ({shown(half)})",
            changed(half),
        )


def _next_letter(ch: str) -> str:
    """The next letter of the same case (`z` → `a`); other letters (non-ASCII) become `x`."""
    if "a" <= ch <= "z":
        return chr((ord(ch) - ord("a") + 1) % 26 + ord("a"))
    if "A" <= ch <= "Z":
        return chr((ord(ch) - ord("A") + 1) % 26 + ord("A"))
    return "y" if ch == "x" else "x"


def _word_at(text: str, at: int) -> tuple[int, str]:
    start = at
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    end = at
    while end < len(text) and not text[end].isspace():
        end += 1
    return start, text[start:end]


# ---- usage and steps ---------------------------------------------------------------------


def _trace_tokens(events: Events) -> float:
    total: float = 0
    for ev in events:
        if is_kind(ev, RESPONSE_TYPES):
            total += sum(usage_tokens(ev))
    return total


def _double_counts(usage: Any) -> Any:
    """A usage object with every token count doubled (any spelling: a key naming tokens)."""
    if not isinstance(usage, dict):
        return usage
    return {
        k: 2 * v
        if isinstance(v, int | float) and not isinstance(v, bool) and "token" in k.lower()
        else v
        for k, v in usage.items()
    }


def _double_usage(ev: dict[str, Any]) -> dict[str, Any]:
    if not is_kind(ev, RESPONSE_TYPES):
        return ev
    out: dict[str, Any] = _double_counts(ev)  # verydia's tokensIn / tokensOut
    for key in ("usage",):
        if key in out:
            out[key] = _double_counts(out[key])
    output = out.get("output")
    if isinstance(output, dict):
        output = dict(output)
        for key in ("usage", "usageMetadata"):
            if key in output:
                output[key] = _double_counts(output[key])
        out["output"] = output
    return out


def _double_steps(events: Events) -> Events:
    out: Events = []
    for ev in events:
        out.append(ev)
        if ev.get("type") == LLM_REQUEST:
            out.append(ev)
    out_steps = sum(1 for ev in out if is_kind(ev, STEP_TYPES))
    if out_steps == sum(1 for ev in events if is_kind(ev, STEP_TYPES)):
        # verydia: a step is an `llm.invoke`, request and response in one event
        out = []
        for ev in events:
            out.append(ev)
            if is_kind(ev, STEP_TYPES):
                out.append(ev)
    return out


# ---- states ------------------------------------------------------------------------------


def _state_mutants(events: Events | None, state: State, seed: int) -> Iterator[Mutant]:
    def with_state(change: Callable[[State], None]) -> Callable[[], tuple[Events | None, State]]:
        def make() -> tuple[Events | None, State]:
            new = copy.deepcopy(state)
            change(new)
            return events, new

        return make

    status = state.get("status")
    if isinstance(status, str):
        for other in STATUSES:
            if other != status:
                yield Mutant(
                    "change-status",
                    f"the status changed {changed_from(status, other)}",
                    with_state(_setting((), "status", other)),
                )
    nodes = state.get("visited_nodes")
    if isinstance(nodes, list):
        for i, node in enumerate(nodes):
            yield Mutant(
                "drop-node",
                f"node {_name(node)} was dropped from the visited nodes",
                with_state(_removing(("visited_nodes",), i)),
            )
    memory = state.get("memory")
    if isinstance(memory, dict):
        for key in memory:
            yield Mutant(
                "remove-memory-key",
                f"memory key {_name(key)} was removed",
                with_state(_removing(("memory",), key)),
            )
        for key, value in memory.items():
            new = perturb(value)
            yield Mutant(
                "alter-memory-key",
                f"memory {_name(key)} changed {changed_from(value, new)}",
                with_state(_setting(("memory",), key, new)),
            )
    counters = [
        k
        for k in ("total_tokens_used", "total_input_tokens", "total_output_tokens")
        if isinstance(state.get(k), int | float) and not isinstance(state.get(k), bool)
    ]
    if any(state[k] for k in counters):
        main = counters[0]

        def double_tokens(s: State) -> None:
            for k in counters:
                s[k] = 2 * s[k]

        yield Mutant(
            "double-tokens",
            f"tokens doubled ({main} {state[main]} → {2 * state[main]})",
            with_state(double_tokens),
        )
    steps = state.get("iteration_count")
    if isinstance(steps, int) and not isinstance(steps, bool) and steps > 0:
        yield Mutant(
            "double-steps",
            f"steps doubled (iteration_count {steps} → {2 * steps})",
            with_state(_setting((), "iteration_count", 2 * steps)),
        )


def _setting(where: tuple[str, ...], key: str, value: Any) -> Callable[[State], None]:
    """A change that sets `key` (inside the objects named by `where`) to `value`."""

    def change(state: State) -> None:
        target: Any = state
        for step in where:
            target = target[step]
        target[key] = value

    return change


def _removing(where: tuple[str, ...], key: str | int) -> Callable[[State], None]:
    """A change that removes `key` (an object key or a list index) inside `where`."""

    def change(state: State) -> None:
        target: Any = state
        for step in where:
            target = target[step]
        target.pop(key)

    return change


def _name(value: Any) -> str:
    return f"`{value}`" if isinstance(value, str) else shown(value)
