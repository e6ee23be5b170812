"""The vocabulary of subjects, lines and types, declared once.

Takes nothing; gives `SUBJECTS` (keyed by the names the AST uses; each with its syntax,
type, the sources that provide it, a one-line doc and an example), `STATEMENTS` (header
and case lines), the types and statuses, and the record every predicate family declares
its own entries with (`PredicateSpec`, made by `predicate_spec`; the predicates' table is
`evaldsl.predicates.registry.PREDICATES`). The checker reads the types, the compiler the
keys, and hover, completion and `evaldsl vocabulary` the docs (`evaldsl.vocabulary`).
"""

from __future__ import annotations

from typing import Literal

import attrs

Type = Literal["Text", "Json", "Status", "Names", "Calls", "Number", "Duration", "Money"]
SourceKind = Literal["trace", "state", "value"]

TRACE: frozenset[SourceKind] = frozenset({"trace"})
STATE: frozenset[SourceKind] = frozenset({"state"})

STATUS_VALUES = (
    "pending",
    "scheduled",
    "running",
    "waiting",
    "retrying",
    "completed",
    "failed",
    "cancelled",
    "timeout",
)

TYPE_WORDS: dict[Type, str] = {
    "Text": "text",
    "Json": "a JSON value",
    "Status": "a status",
    "Names": "a list of names",
    "Calls": "tool calls",
    "Number": "a number",
    "Duration": "a duration",
    "Money": "an amount of money",
}


@attrs.frozen
class SubjectSpec:
    """One subject: what it is called, its type, which sources provide it."""

    kind: str
    syntax: str
    type: Type
    sources: frozenset[SourceKind]
    doc: str
    example: str
    words: tuple[str, ...]  # the leading keyword(s), for hover and completion


@attrs.frozen
class PredicateSpec:
    """One predicate: its syntax, the subject types it applies to, doc and example."""

    name: str
    syntax: str
    applies_to: frozenset[Type]
    doc: str
    example: str
    words: tuple[str, ...]
    # the subjects (kinds) it takes, when not every subject of those types
    subjects: frozenset[str] = frozenset()


def _s(
    kind: str,
    syntax: str,
    type_: Type,
    sources: frozenset[SourceKind],
    doc: str,
    example: str,
) -> SubjectSpec:
    words = tuple(w for w in syntax.replace("[", " ").split() if w.isalpha() and w.islower())
    return SubjectSpec(kind, syntax, type_, sources, doc, example, words[:2])


SUBJECTS: dict[str, SubjectSpec] = {
    s.kind: s
    for s in [
        _s(
            "answer",
            "answer, answer[N]",
            "Text",
            frozenset({"trace", "value"}),
            "The final LLM response's text (answer[N]: the N-th, 1-based; -1 the last; out of "
            'range is "").',
            'answer contains "sunny"',
        ),
        _s(
            "answer_json",
            "answer json [PATH]",
            "Json",
            frozenset({"trace", "value"}),
            "The answer parsed as JSON, or the values a JSONPath finds in it.",
            "answer json $.ticket is string",
        ),
        _s(
            "output",
            "output[.KEY…]",
            "Json",
            frozenset({"value"}),
            "The run's final output (a `run` target's return value, a flow output).",
            'output == {text: "hello", length: 5}',
        ),
        _s(
            "memory",
            "memory[.KEY…]",
            "Json",
            STATE,
            'The state\'s memory; memory.key, memory.a.b, memory["odd key"] read into it.',
            "memory has summary",
        ),
        _s(
            "state",
            "state.FIELD",
            "Json",
            STATE,
            "Any other field of the workflow state.",
            "state.iteration_count <= 3",
        ),
        _s(
            "status",
            "status",
            "Status",
            STATE,
            "The state's status: " + ", ".join(STATUS_VALUES) + ".",
            "status == completed",
        ),
        _s(
            "nodes",
            "nodes",
            "Names",
            STATE,
            "The visited nodes, in order.",
            "nodes in order [planner, researcher]",
        ),
        _s(
            "tools",
            "tools",
            "Names",
            TRACE,
            "Tool names in call order.",
            "tools only [search, summarize]",
        ),
        _s(
            "tool",
            "tool NAME",
            "Calls",
            TRACE,
            "The calls of one tool, with their arguments and results.",
            "tool get_weather called once",
        ),
        _s(
            "tokens",
            "tokens",
            "Number",
            frozenset({"trace", "state"}),
            "Total tokens used (summed usage, or the state's total_tokens_used).",
            "tokens <= 2000",
        ),
        _s(
            "input_tokens",
            "input tokens",
            "Number",
            frozenset({"trace", "state"}),
            "Prompt (input) tokens used.",
            "input tokens < 1500",
        ),
        _s(
            "output_tokens",
            "output tokens",
            "Number",
            frozenset({"trace", "state"}),
            "Completion (output) tokens used.",
            "output tokens < 500",
        ),
        _s(
            "steps",
            "steps",
            "Number",
            TRACE,
            "LLM calls (traceplay llm.request, verydia llm.invoke).",
            "steps <= 5",
        ),
        _s(
            "tool_calls",
            "tool calls",
            "Number",
            TRACE,
            "All tool calls (verydia mcp.call included).",
            "tool calls <= 3",
        ),
        _s(
            "guards",
            "guards",
            "Number",
            TRACE,
            "Guard evaluations (verydia policy.evaluate).",
            "guards >= 1",
        ),
        _s(
            "errors",
            "errors",
            "Number",
            TRACE,
            "Error events (traceplay agent.error, error spans).",
            "errors == 0",
        ),
        _s(
            "latency",
            "latency",
            "Duration",
            frozenset({"trace", "value"}),
            "The run's wall time, or its first-to-last event span.",
            "latency < 2s",
        ),
        _s(
            "cost",
            "cost",
            "Money",
            frozenset({"trace", "state"}),
            "The state's cost (total_cost_usd), or the trace's usage priced by model.",
            "cost <= $0.05",
        ),
        _s(
            "budget",
            "budget",
            "Number",
            STATE,
            "The state's token budget (max_token_budget).",
            "budget >= 1000",
        ),
    ]
}


def predicate_spec(
    name: str,
    syntax: str,
    applies: set[Type] | frozenset[Type],
    doc: str,
    example: str,
    *,
    subjects: frozenset[str] = frozenset(),
) -> PredicateSpec:
    """A predicate's vocabulary entry; its leading keywords are read from its syntax.
    `subjects` narrows it to those subjects of its types (`within budget`: `tokens`)."""
    words = tuple(w for w in syntax.split() if w.isalpha() and w.islower())
    return PredicateSpec(name, syntax, frozenset(applies), doc, example, words[:2], subjects)


#: Header and case lines, for hover, completion and --help.
STATEMENTS: dict[str, tuple[str, str]] = {
    "suite": ('suite "name"', "Names the suite."),
    "tools": ("tools a, b, c", "The tools that exist; other tool names are errors."),
    "nodes": ("nodes a, b", "The workflow nodes that exist; other node names are errors."),
    "judge": ('judge model "gpt-4o-mini"', "The default model of the LLM judge."),
    "timeout": ("timeout 30s", "A bound on `run` targets (suite default, or per case)."),
    "case": ('case "name"', "Opens a case; the lines after it belong to it."),
    "cassette": ('cassette "x.jsonl"', "The case runs against a recorded trace."),
    "trace": (
        'trace "x.json" as otel',
        "A trace in a named format: traceplay, events, verydia, state, openai, anthropic, "
        "otel, inspect, openai_agents, langsmith (`evaldsl vocabulary` describes each).",
    ),
    "state": ('state "x.json"', "The case runs against a workflow's final state."),
    "run": ("run package.module:function", "The case calls a Python function with `input`."),
    "input": ('input {goal: "..."}', "The input of `run`; for states also seeded into memory."),
    "each": ("each [{city: Paris}, {city: Tokyo}]", "One case per row; {{key}} is replaced."),
    "dataset": ('dataset "rows.json"', "One case per row of a verydia-style dataset."),
    "no": ("no tool NAME", "The tool was never called."),
    "node": ("node NAME visited", "The node was visited (nodes contains NAME)."),
    "every": ("every tool NAME args PATH TEST", "Every call satisfies it (and there is one)."),
    "not": ("not A", "Negation: pass ↔ fail; skip and error stay."),
}


#: The run formats `cassette "…"` detects and `trace "…" as FORMAT` names: name → (other
#: names it answers to, what it reads). The README's formats table lists the same names.
RUN_FORMATS: dict[str, tuple[tuple[str, ...], str]] = {
    "traceplay": (("cassette",), "traceplay cassette v1: a JSONL file with a header line"),
    "events": ((), "traceplay-style events: a JSON array, {events: [...]}, or JSONL"),
    "verydia": ((), "verydia events (llm.invoke, mcp.call, policy.evaluate)"),
    "state": (("cycgraph",), "a cycgraph WorkflowState (a final state, not a trace)"),
    "openai": (
        (),
        "OpenAI Chat Completions bodies, request transcripts, streamed chunks (JSONL or "
        "SSE), Responses API objects and their streaming events",
    ),
    "anthropic": ((), "Anthropic Messages bodies, request transcripts, SSE streams"),
    "otel": (
        (),
        "OpenTelemetry spans: OTLP JSON or flat span JSONL (Phoenix), with GenAI, "
        "OpenInference or OpenLLMetry attributes",
    ),
    "inspect": ((), "an Inspect AI eval log (`.eval` or JSON); several samples make one case each"),
    "openai_agents": ((), "OpenAI Agents SDK exported spans (trace.span objects)"),
    "langsmith": ((), "LangSmith runs: a run tree (child_runs) or a flat array/JSONL of runs"),
}


def spec_markdown(spec: SubjectSpec | PredicateSpec) -> str:
    """A subject or predicate as hover shows it: syntax, type, doc, example."""
    if isinstance(spec, SubjectSpec):
        return f"**{spec.syntax}** — {TYPE_WORDS[spec.type]}\n\n{spec.doc}\n\n`{spec.example}`"
    return f"**{spec.syntax}**\n\n{spec.doc}\n\n`{spec.example}`"


def statement_markdown(word: str) -> str:
    """A header or case line (`suite`, `cassette`, …) as hover shows it."""
    syntax, doc = STATEMENTS[word]
    return f"**{syntax}**\n\n{doc}"
