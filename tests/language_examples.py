"""The examples of the language reference (docs/language.md), as evaldsl statements to parse.

Takes the reference's text and gives its fenced code blocks and its inline `code` examples,
each turned into whole statements: an inline example is often a fragment (`called N
times`, `$.items[0]`, `>= 0.7`), so placeholders are filled in (`N` → 2, `PATH` → `$.x`)
and the fragment is put where it belongs (a predicate after a subject of its type, a path
after `answer json`, a value after `output ==`). Words that are not evaldsl text (run
fields such as `llm.request`, file names) are listed in `NOT_DSL`; an example that none
of the rules place fails the test, so a new example in the reference is never skipped
silently.
"""

from __future__ import annotations

import re
from pathlib import Path

from evaldsl.language.vocabulary import SUBJECTS

ROOT = Path(__file__).resolve().parents[1]


LANGUAGE_MD = ROOT / "docs" / "language.md"


# Inline code in the brief that is not evaldsl text: run-file fields and event types, file
# names, JSON written in other languages' terms, words about the CLI.
NOT_DSL = frozenset(
    {
        ".eval",
        "llm.request",
        "llm.invoke",
        "llm.response",
        "mcp.call",
        "policy.evaluate",
        "agent.error",
        "max_token_budget",
        "total_tokens_used",
        "total_tokens_used <= max_token_budget",
        "expectedOutput",
        "expectedBehavior",
        "flow.usesResult",
        "answer.shape",
        "step",
        "choices[0].message.content",
        "content[]",
        "promptTokens",
        "completionTokens",
        "prompt_tokens",
        "completion_tokens",
        "input_tokens",
        "output_tokens",
        "evaldsl check",
        "file:line:col",
        "{{city}}",  # a template placeholder inside strings, tested in test_parser
        "[*]",  # a piece of a path, tested with `$.items[*].id`
        "i",  # regex flags, tested with `/x/ims`
        "m",
        "s",
        "()",  # brackets named in prose
        "[]",
        "{}",
    }
)

# Inline code the reference writes about other things than evaldsl text: commands and
# options, file paths, diagnostic codes, YAML `key: value` fields, and names of fields and
# events of the run formats (identifiers, dotted or not, that start with no word of the
# language).
_NOT_DSL_SHAPES = [
    re.compile(r"^(?:evaldsl |--)"),
    re.compile(r"^[^\w\"'$/\[{(-]"),  # punctuation named in prose: `()`, `]`, `\n`, `.1`
    re.compile(r"\{\{"),  # a template placeholder, inside strings
    # syntax notation rather than an example: alternatives, optional parts, ellipses
    re.compile(r"…|\w\|\w|\[(?:[A-Z]|>=|by |at )"),
    re.compile(r"\.(?:json|jsonl|py|md|eval)\b|/\w+/\w+"),
    re.compile(r"^[EW]\d{3}\b"),
    re.compile(r"^[\w.$]+: "),
]
#: The first word of every subject (`memory.count` is evaldsl text, `metadata.id` is not).
SUBJECT_WORDS = frozenset(
    spec.syntax.split()[0].split("[")[0].split(".")[0].rstrip(",") for spec in SUBJECTS.values()
)
_IDENTIFIER = re.compile(r"[A-Za-z_][\w-]*(?:\.[A-Za-z_][\w]*)*")


def is_prose_code(example: str, subjects: frozenset[str]) -> bool:
    """Inline code that names something else than evaldsl text (see `_NOT_DSL_SHAPES`)."""
    if any(shape.search(example) for shape in _NOT_DSL_SHAPES):
        return True
    if not _IDENTIFIER.fullmatch(example):
        return False
    first = example.split(".")[0]
    # `memory.count` reads into a value; `tool.call`, `metadata.id` name fields and events
    return first not in subjects or ("." in example and first not in ("memory", "output", "state"))


# Placeholders the brief writes in capitals or dots, and what stands in for them.
_PLACEHOLDERS = [
    (r"\[\.\.\.?\]", "[search, browse]"),
    (r"\{\.\.\.?\}", "{city: 1}"),
    (r"\bPATH\b", "$.x"),
    (r"\bVALUE\b|\bV\b|\bX\b", '"v"'),
    (r"\bNAME\b", "search"),
    (r"\bKEY\b", "summary"),
    (r"\bN\b", "2"),
    (r"\bM\b", "3"),
    (r"\bT\b", "0.7"),
    (r"\bpackage\.module:function\b", "package.module:function"),
]

# Where a fragment goes, by its first words: the subject that takes it.
_PREDICATE_SUBJECTS = [
    (("called", "never", "args", "result"), "tool search"),
    (("at most", "between"), "tool search called"),
    (("contains all", "contains any", "in order", "only", "== ["), "tools"),
    (("has",), "memory"),
    (("is string", "is number", "is integer", "is boolean", "is array", "is object"), "output"),
    (("is null",), "output"),
    (("is json",), "answer"),
    (
        ("judged", "contains", "starts with", "ends with", "matches", "is empty", "not empty"),
        "answer",
    ),
    (("cites",), "answer"),
    ((">= 0.7", "by "), 'answer judged "rubric"'),
    (("==", "!=", "<", ">", "in ["), "tokens"),
]

# Examples of punctuation, shown in use.
EXPLICIT: dict[str, list[str]] = {
    ";": ['tool search called; answer contains "x"'],
    "#": ["tool search called  # a comment", "# a whole-line comment"],
}

_TRACE_FORMATS = frozenset({"otel", "openai", "anthropic", "events"})
_VALUE_START = re.compile(r"""^(?:"|'|-?\d|\$\d|\[|\{|true\b|false\b|null\b)""")


def fenced_blocks(text: str) -> list[tuple[str, str]]:
    """`(language, body)` of every fenced block."""
    return re.findall(r"```(\w*)\n(.*?)```", text, re.S)


def inline_codes(text: str) -> list[str]:
    """Every inline `code` span outside fenced blocks, in order."""
    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    return re.findall(r"(?<!`)`([^`\n]+)`(?!`)", prose)


def fill(example: str) -> str:
    for pattern, replacement in _PLACEHOLDERS:
        example = re.sub(pattern, replacement, example)
    return example


def statements_for(example: str, keywords: frozenset[str]) -> list[str]:
    """The statements that show an inline example parses ([] when it is not evaldsl text
    or a lone keyword). A subject on its own comes back as it is: it does not parse alone,
    and the test then tries `subject_statements`."""
    if example in NOT_DSL or is_prose_code(example, SUBJECT_WORDS):
        return []
    if example in EXPLICIT:
        return EXPLICIT[example]
    if example in _TRACE_FORMATS:
        return [f'trace "t.json" as {example}']
    words = example.split()
    if _all_status(words):  # the status values, listed
        return [f"status == {w}" for w in words]
    if words and all(w in ("==", "!=", "<", "<=", ">", ">=") for w in words):
        return [f"tokens {w} 2" for w in words]  # `==`, `== != < <= > >=`
    filled = fill(example)
    if example in ('"..."', "'...'"):
        return [f"answer contains {filled}"]
    if example == "/.../" or re.fullmatch(r"/.+/[ims]*", example):
        return [f"answer matches {filled}"]
    if _VALUE_START.match(filled):
        return [f"output == {filled}"]
    if len(words) == 1 and example in keywords:
        return []  # a keyword named in prose: test_parser checks that it is one
    if filled.startswith("$"):
        return [f"answer json {filled} is string"]
    for starts, subject in _PREDICATE_SUBJECTS:
        if any(filled == s.strip() or filled.startswith(s) for s in starts):
            suffix = ' "x"' if filled in ("starts with", "ends with") else ""
            return [f"{subject} {filled}{suffix}"]
    return [filled]


def _all_status(words: list[str]) -> bool:
    return {"pending", "completed", "failed"} <= set(words)


def subject_statements(example: str) -> list[str]:
    """Second tries for an example that is a subject on its own (`answer[-1]`, `tool NAME`)."""
    filled = fill(example)
    return [f"{filled} == 1", f"{filled} called", f"{filled} contains search"]


#: The brief's example suite (docs/language.md §2), kept here for when the brief is not beside
#: the checkout.
BRIEF_SUITE = """\
# weather.eval
suite "weather agent"
tools get_weather, search, summarize     # optional: the tools that exist; other names are errors

tokens <= 50000                          # before the first case: holds for every case

case "answers with the Xiamen forecast"
  cassette "cassettes/xiamen.jsonl"
  tool get_weather called once
  tool get_weather args $.city == "Xiamen"
  answer matches /\\d+\\s*C/
  tokens <= 2000; steps <= 5
  answer judged "mentions the temperature and the sky" >= 0.7

case "research pipeline completes"
  state "states/research.json"
  status == completed
  node researcher visited
  memory has summary
  memory.count == 42
  tokens within budget
"""
