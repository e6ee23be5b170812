"""The vocabulary: every subject and predicate of the language, declared once.

Takes nothing; gives two tables, `SUBJECTS` and `PREDICATES`, keyed by the names the AST
uses. Each entry has the syntax, the types, a one-line doc and an example. The checker
reads the types, the compiler reads the keys, and hover, completion and `evaldsl --help`
read the docs: adding a predicate is one entry here plus its implementation.
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

_ORDERED: frozenset[Type] = frozenset({"Number", "Duration", "Money", "Json"})
_EQUATABLE: frozenset[Type] = frozenset(
    {"Text", "Json", "Status", "Names", "Number", "Duration", "Money"}
)


def _p(
    name: str, syntax: str, applies: set[Type] | frozenset[Type], doc: str, ex: str
) -> PredicateSpec:
    words = tuple(w for w in syntax.split() if w.isalpha() and w.islower())
    return PredicateSpec(name, syntax, frozenset(applies), doc, ex, words[:2])


PREDICATES: dict[str, PredicateSpec] = {
    p.name: p
    for p in [
        _p(
            "called",
            "called [N times | once | twice | at least N times | at most N times | "
            "between N and M times]",
            {"Calls"},
            "Called at least once, or the given number of times.",
            "tool search called 2 times",
        ),
        _p(
            "never_called",
            "never called",
            {"Calls"},
            "Never called (also: no tool NAME).",
            "tool execute_shell never called",
        ),
        _p(
            "args",
            "args [PATH] TEST",
            {"Calls"},
            "Some call's arguments (or the values PATH finds in them) satisfy TEST.",
            'tool get_weather args $.city == "Xiamen"',
        ),
        _p(
            "result",
            "result [PATH] TEST",
            {"Calls"},
            "Some call's linked result (or the values PATH finds in it) satisfies TEST.",
            'tool search result contains "release"',
        ),
        _p(
            "compare",
            "== != < <= > >= VALUE",
            _EQUATABLE,
            "Equality (structural for JSON) or order (numbers, durations, money).",
            "tokens <= 2000",
        ),
        _p(
            "contains",
            "contains VALUE",
            {"Text", "Json", "Names"},
            "Text: a substring; list: an equal element; object: a sub-object.",
            'answer contains "sunny"',
        ),
        _p(
            "contains_all",
            "contains all [..]",
            {"Text", "Json", "Names"},
            "Contains every item.",
            "tools contains all [search, summarize]",
        ),
        _p(
            "contains_any",
            "contains any [..]",
            {"Text", "Json", "Names"},
            "Contains at least one item.",
            'answer contains any ["sunny", "clear"]',
        ),
        _p(
            "in_order",
            "in order [..]",
            {"Names"},
            "The items occur in this order (a subsequence; repeated names need repeats).",
            "tools in order [search, summarize]",
        ),
        _p(
            "in",
            "in [..]",
            {"Text", "Json", "Status", "Number"},
            "The value is one of the items.",
            "status in [completed, waiting]",
        ),
        _p(
            "only",
            "only [..]",
            {"Names"},
            "Nothing outside the list occurs.",
            "tools only [search, get_weather]",
        ),
        _p(
            "is_empty",
            "is empty",
            {"Text", "Json", "Names"},
            "Empty text (after trimming), [], {}, null or missing.",
            "nodes is empty",
        ),
        _p(
            "not_empty",
            "not empty",
            {"Text", "Json", "Names"},
            "Present and not empty; 0 and false are not empty.",
            "memory.summary not empty",
        ),
        _p(
            "exists",
            "exists",
            {"Json"},
            "A value is there (a JSONPath finds one), whatever it is: null, [] and {} too.",
            "answer json $.items[0] exists",
        ),
        _p(
            "is_type",
            "is string|number|integer|boolean|array|object|null",
            {"Json"},
            "The JSON type of the value.",
            "answer json $.ticket is string",
        ),
        _p(
            "starts_with",
            'starts with "x"',
            {"Text", "Json"},
            "Text (or a JSON string) starts with the string.",
            'answer starts with "Dear"',
        ),
        _p(
            "ends_with",
            'ends with "x"',
            {"Text", "Json"},
            "Text (or a JSON string) ends with the string.",
            'answer ends with "."',
        ),
        _p(
            "matches",
            "matches /re/flags",
            {"Text", "Json"},
            "A regex search (not a full match); flags i, m, s. Linear time: no pattern can "
            "hang a run.",
            r"answer matches /\d+\s*C/",
        ),
        _p(
            "has",
            "has KEY",
            {"Json"},
            "The key is present, whatever its value.",
            "memory has summary",
        ),
        _p(
            "judged",
            'judged "rubric" [>= 0.7] [by "model"]',
            {"Text", "Json"},
            "An LLM judge decides whether the subject meets the rubric.",
            'answer judged "mentions the temperature" >= 0.7',
        ),
        _p(
            "within_budget",
            "within budget",
            {"Number"},
            "tokens only: total_tokens_used <= max_token_budget (no budget, or 0, passes).",
            "tokens within budget",
        ),
        _p(
            "cites",
            "cites tool NAME [at least N values]",
            {"Text"},
            "The answer quotes values that tool returned (numbers, or text of 3-120 chars).",
            "answer cites tool get_ticket at least 2 values",
        ),
    ]
}

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
        "A trace in a named format (otel, openai, anthropic, events, verydia).",
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


def spec_markdown(spec: SubjectSpec | PredicateSpec) -> str:
    """A subject or predicate as hover shows it: syntax, type, doc, example."""
    if isinstance(spec, SubjectSpec):
        return f"**{spec.syntax}** — {TYPE_WORDS[spec.type]}\n\n{spec.doc}\n\n`{spec.example}`"
    return f"**{spec.syntax}**\n\n{spec.doc}\n\n`{spec.example}`"


def statement_markdown(word: str) -> str:
    """A header or case line (`suite`, `cassette`, …) as hover shows it."""
    syntax, doc = STATEMENTS[word]
    return f"**{syntax}**\n\n{doc}"


def describe(word: str) -> str | None:
    """Markdown doc for a word under the cursor (hover): subject, predicate or line."""
    specs: list[SubjectSpec | PredicateSpec] = [*SUBJECTS.values(), *PREDICATES.values()]
    for spec in specs:
        if word in spec.words[:1]:
            return spec_markdown(spec)
    if word in STATEMENTS:
        return statement_markdown(word)
    return None


def help_text() -> str:
    """The vocabulary as plain text (`evaldsl help`)."""
    lines = ["Subjects:"]
    for s in SUBJECTS.values():
        lines.append(f"  {s.syntax:<28} {TYPE_WORDS[s.type]:<18} {s.doc}")
    lines.append("")
    lines.append("Predicates:")
    for p in PREDICATES.values():
        applies = ", ".join(sorted(TYPE_WORDS[t] for t in p.applies_to))
        lines.append(f"  {p.syntax}\n      {p.doc} (on {applies})  e.g. {p.example}")
    lines.append("")
    lines.append("Lines:")
    for syntax, doc in STATEMENTS.values():
        lines.append(f"  {syntax:<36} {doc}")
    return "\n".join(lines)
