"""The parser: every example of docs/language.md parses and means what it says; syntax errors
come out all at once, at the right place, in the user's words."""

from __future__ import annotations

import random
import re

import attrs
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from language_examples import (
    BRIEF_SUITE,
    LANGUAGE_MD,
    fenced_blocks,
    inline_codes,
    statements_for,
    subject_statements,
)

from evaldsl.api import diagnose
from evaldsl.language import ast
from evaldsl.language.diagnostics import CODES, Diagnostic
from evaldsl.language.source import Position, Source, Span
from evaldsl.syntax.grammar import spellings
from evaldsl.syntax.literals import decode_string, parse_duration
from evaldsl.syntax.parser import parse
from evaldsl.syntax.recovery import Cuts, scanner, split_statements
from tests.fuzzing import examples

KEYWORDS = frozenset(w for w in spellings().values() if w.isalpha())

# ---- helpers ---------------------------------------------------------------------------


def ok(text: str, start: str = "file") -> tuple[ast.Statement, ...]:
    """Parse text that must parse cleanly; its statements."""
    result = parse(text, start=start)  # type: ignore[arg-type]
    assert result.diagnostics == (), [d.message for d in result.diagnostics]
    return result.program.statements


def one(text: str) -> ast.Statement:
    statements = ok(text)
    assert len(statements) == 1, statements
    return statements[0]


def errors(text: str, start: str = "file") -> list[Diagnostic]:
    result = parse(text, "t.eval", start=start)  # type: ignore[arg-type]
    assert result.diagnostics, f"expected a syntax error in {text!r}"
    return list(result.diagnostics)


def tool(name: str) -> ast.Subject:
    return ast.Subject("tool", name=name)


ANSWER = ast.Subject("answer")
CALLED = ast.Called(ast.Count("any", 1, None))


def answer_contains(text: str) -> ast.Check:
    return ast.Check(ANSWER, ast.Contains(ast.Str(text)))


def called(name: str) -> ast.Check:
    return ast.Check(tool(name), CALLED)


# ---- docs/language.md, read programmatically -------------------------------------------

_DOC_TEXT = LANGUAGE_MD.read_text(encoding="utf-8")
_INLINE = list(dict.fromkeys(inline_codes(_DOC_TEXT)))


def test_the_brief_has_examples() -> None:
    assert len(_INLINE) > 100
    assert [lang for lang, _ in fenced_blocks(_DOC_TEXT)] == ["eval", "yaml"]


def test_fenced_suite_parses_and_checks_clean() -> None:
    """The §2 suite file parses into its 18 statements and checks without a diagnostic."""
    blocks = [body for lang, body in fenced_blocks(_DOC_TEXT) if lang in ("", "eval")]
    assert blocks
    for body in blocks:
        statements = ok(body)
        assert len(statements) == 18
        _, _, shape, diagnostics = diagnose(body, "weather.eval")
        assert diagnostics == []
        assert shape.suite_name == "weather agent"
        assert [c.name for c in shape.cases] == [
            "answers with the Xiamen forecast",
            "research pipeline completes",
        ]


def test_yaml_expect_items_parse_as_statements() -> None:
    bodies = [body for lang, body in fenced_blocks(_DOC_TEXT) if lang == "yaml"]
    items = [
        item for body in bodies for case in yaml.safe_load(body)["cases"] for item in case["expect"]
    ]
    assert items == ["tool get_weather called once", "answer matches /\\d+\\s*C/"]
    for item in items:
        assert len(ok(item, start="statements")) == 1


@pytest.mark.parametrize("example", _INLINE)
def test_inline_example_parses(example: str) -> None:
    statements = statements_for(example, KEYWORDS)
    failing = [s for s in statements if parse(s).diagnostics]
    if not failing:
        return
    # A subject on its own (`answer[-1]`, `memory["odd key"]`, `tool NAME`): it parses as
    # the whole subject of a check.
    for attempt in subject_statements(example):
        result = parse(attempt)
        if result.diagnostics:
            continue
        (check,) = result.program.statements
        assert isinstance(check, ast.Check)
        subject_text = attempt[check.subject.span.start : check.subject.span.end]
        assert subject_text == failing[0], (example, subject_text)
        return
    pytest.fail(f"docs/language.md example `{example}` does not parse as {failing}")


def test_the_reference_names_every_keyword() -> None:
    """Every keyword of the grammar appears in docs/language.md, in code (a word added to
    the language is a word documented)."""
    code = " ".join(_INLINE) + " ".join(body for _, body in fenced_blocks(_DOC_TEXT))
    written = set(re.findall(r"[a-z]+", code))
    assert sorted(KEYWORDS - written) == []


# ---- an explicit list, independent of the brief's file -----------------------------------

SUITE = BRIEF_SUITE

EXAMPLES = [
    SUITE,
    "tool search called 2 times; answer matches /\\d+ C/",
    'tool "web-search" called',
    'cassette "x.jsonl"',
    'trace "x.json" as otel',
    'state "x.json"',
    "run package.module:function",
    'run "package.module:function"',
    'input {goal: "Summarize AI news"}',
    'each [{city: "Paris"}, {city: "Tokyo"}]',
    'dataset "rows.json"',
    "timeout 30s",
    'judge model "gpt-4o-mini"',
    "nodes researcher, writer",
    'answer[1] contains "x"',
    'answer[-1] contains "x"',
    "answer json is object",
    "answer json $.path is string",
    "output == 1",
    "output.a.b == 1",
    "status == completed",
    "nodes in order [start, researcher, writer]",
    'memory.key == "x"',
    "memory.a.b == 1",
    'memory["odd key"] == 1',
    "state.iteration_count == 4",
    "tools contains search",
    "tool search called",
    "tokens <= 2000",
    "input tokens <= 1000",
    "output tokens <= 1000",
    "steps <= 5",
    "tool calls <= 3",
    "guards >= 1",
    "errors == 0",
    "latency < 2s",
    "cost <= $0.05",
    "budget == 2000",
    "tool search called once",
    "tool search called twice",
    "tool search never called",
    "tool search called at least 2 times",
    "tool search called at most 2 times",
    "tool search called between 1 and 3 times",
    "tool search called 1 time",
    'tool search args $.city == "Xiamen"',
    'tool search args $.city != "Xiamen"',
    "tool search args $.limit < 10",
    'tool search args $.city in ["Xiamen", "Paris"]',
    "tool search args $.city matches /^X/i",
    'tool search args $.city contains "Xia"',
    'tool search args == {city: "Xiamen"}',
    'tool search args contains {city: "Xiamen"}',
    'tool search result contains "sunny"',
    "tool search result matches /\\d+C/",
    "tool search result $.temp == 31",
    "every tool search args $.limit <= 10",
    "no tool execute_shell",
    "tools contains all [search, browse]",
    "tools contains any [search, browse]",
    "tools == [search, browse]",
    "tools in order [search, summarize]",
    "tools only [search, summarize]",
    "tools is empty",
    "node researcher visited",
    "nodes contains researcher",
    'answer contains "x"',
    'answer starts with "The"',
    'answer ends with "."',
    "answer matches /\\d+ C/",
    'answer == "exact"',
    "answer is empty",
    "answer not empty",
    "memory has summary",
    'memory has "odd key"',
    "memory.summary not empty",
    "answer json $.field is string",
    "answer json $.n is number",
    "answer json $.n is integer",
    "answer json $.b is boolean",
    "answer json $.a is array",
    "answer json $.o is object",
    "answer json $.z is null",
    'answer judged "rubric"',
    'answer judged "rubric" >= 0.7',
    'answer judged "rubric" by "gpt-4o-mini"',
    'answer judged "rubric" >= 0.7 by "gpt-4o-mini"',
    "tokens within budget",
    "answer cites tool search",
    "answer cites tool search at least 2 values",
    "answer cites tool search at least 1 value",
    '(tool search called or tool browse called) and not answer contains "I cannot"',
    'answer contains ""',
    "tool x called 0 times",
]


@pytest.mark.parametrize("text", EXAMPLES)
def test_explicit_example_parses(text: str) -> None:
    assert ok(text)


def test_suite_statement_kinds() -> None:
    kinds = [type(s).__name__ for s in ok(SUITE)]
    assert kinds == [
        "SuiteDecl",
        "NamesDecl",
        "Check",
        "CaseDecl",
        "SourceDecl",
        *["Check"] * 6,
        "CaseDecl",
        "SourceDecl",
        "Check",
        "NodeVisited",
        "Check",
        "Check",
        "Check",
    ]


# ---- what it means ----------------------------------------------------------------------


def test_keywords_double_as_names() -> None:
    """`tool called called 2 times` is the tool named "called", called twice."""
    assert one("tool called called 2 times") == ast.Check(
        tool("called"), ast.Called(ast.Count("times", 2, 2))
    )
    assert one("tool is called") == called("is")
    assert one("tool answer called") == called("answer")
    assert one("node visited visited") == ast.NodeVisited("visited")
    assert one("memory has has") == ast.Check(ast.Subject("memory"), ast.HasKey("has"))
    assert one("nodes contains allowed") == ast.Check(
        ast.Subject("nodes"), ast.Contains(ast.Name("allowed"))
    )
    assert one("no tool no") == ast.NoTool("no")


def test_names_that_begin_with_a_keyword_are_names() -> None:
    """A keyword is a whole word: a name that starts with one is the name."""
    once = ast.Called(ast.Count("once", 1, 1))
    assert one("tool called_api called once") == ast.Check(tool("called_api"), once)
    assert one("tool once_more called") == called("once_more")
    assert one("tool answer_bot called") == called("answer_bot")
    assert one("tool toolbox called") == called("toolbox")
    assert one("node visitedx visited") == ast.NodeVisited("visitedx")
    assert one("status == completed_ok") == ast.Check(
        ast.Subject("status"), ast.Compare("==", ast.Name("completed_ok"))
    )
    assert one("memory.answer == 1") == ast.Check(
        ast.Subject("memory", keys=(ast.Key("answer"),)), ast.Compare("==", ast.Num(1))
    )
    (check,) = ok("tool x args $.answer == 1", start="statements")
    assert check == ast.Check(
        tool("x"), ast.CallTest("args", "$.answer", ast.Compare("==", ast.Num(1)))
    )


#: Keywords (and numbers) run into the next word, and the words apart: each is one error,
#: never read as the words apart, with the statement as it is written for its hint.
RUN_TOGETHER = [
    ('answer startswith "x"', "startswith", "starts with"),
    ('answer endswith "x"', "endswith", "ends with"),
    ('answer startsWith "x"', "startsWith", "starts with"),
    ("tool x calledonce", "calledonce", "called once"),
    ("tool x calledtwice", "calledtwice", "called twice"),
    ("tool x called 2times", "2times", "2 times"),
    ("tool x called atleast 2 times", "atleast", "at least"),
    ("tool x called between 1and 3 times", "1and", "1 and"),
    ("tool x nevercalled", "nevercalled", "never called"),
    ("answer isempty", "isempty", "is empty"),
    ("answer notempty", "notempty", "not empty"),
    ("answer isjson", "isjson", "is json"),
    ('answer containsany ["a"]', "containsany", "contains any"),
    ("tool x args $.q isempty", "isempty", "is empty"),
    ("tokens withinbudget", "withinbudget", "within budget"),
    ("notool x", "notool", "no tool"),
]


@pytest.mark.parametrize("start", ["file", "statements"])
@pytest.mark.parametrize(("text", "word", "apart"), RUN_TOGETHER)
def test_keywords_run_together_are_one_error_with_the_words_apart(
    text: str, word: str, apart: str, start: str
) -> None:
    at = text.index(word)
    fixed = text[:at] + apart + text[at + len(word) :]
    (d,) = errors(text, start)
    assert (d.code, d.column, d.end_column) == ("E101", at + 1, at + len(word) + 1)
    assert d.message == f"`{word}` is written as separate words: `{apart}`"
    assert d.hint == f"write `{fixed}`"
    assert ok(fixed, start)


def test_operators_and_punctuation_need_no_blanks() -> None:
    assert one("tokens<=5") == ast.Check(ast.Subject("tokens"), ast.Compare("<=", ast.Num(5)))
    assert one('tool x args $.a=="b"') == one('tool x args $.a == "b"')
    assert one("answer contains[1,2]") == one("answer contains [1, 2]")
    assert one("(answer is empty)and(tokens<5)") == one("(answer is empty) and (tokens < 5)")


def test_design_card_line_is_two_statements() -> None:
    text = "tool search called 2 times; answer matches /\\d+ C/"
    first, second = ok(text)
    assert first == ast.Check(tool("search"), ast.Called(ast.Count("times", 2, 2)))
    assert second == ast.Check(ANSWER, ast.Matches(ast.Regex("\\d+ C", "")))
    # spans are offsets into the whole text
    assert text[first.span.start : first.span.end] == "tool search called 2 times"
    assert text[second.span.start : second.span.end] == "answer matches /\\d+ C/"
    # the same through the statements start symbol (YAML `expect:`)
    assert ok(text, start="statements") == (first, second)


A, B, C = (
    answer_contains("a"),
    called("b"),
    ast.Check(ast.Subject("tokens"), ast.Compare("<", ast.Num(5))),
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('not answer contains "a"', ast.Not(A)),
        ('answer contains "a" and tool b called', ast.And((A, B))),
        ('answer contains "a" or tool b called', ast.Or((A, B))),
        # not > and > or
        ('not answer contains "a" and tool b called', ast.And((ast.Not(A), B))),
        ('answer contains "a" or tool b called and tokens < 5', ast.Or((A, ast.And((B, C))))),
        ('answer contains "a" and tool b called or tokens < 5', ast.Or((ast.And((A, B)), C))),
        ('not answer contains "a" or tool b called', ast.Or((ast.Not(A), B))),
        ('answer contains "a" and not tool b called', ast.And((A, ast.Not(B)))),
        # chains are flat
        ('answer contains "a" and tool b called and tokens < 5', ast.And((A, B, C))),
        ('answer contains "a" or tool b called or tokens < 5', ast.Or((A, B, C))),
        # parentheses
        ('(answer contains "a" or tool b called) and tokens < 5', ast.And((ast.Or((A, B)), C))),
        ('not (answer contains "a" and tool b called)', ast.Not(ast.And((A, B)))),
        ("not not tool b called", ast.Not(ast.Not(B))),
        ("((tool b called))", B),
        (
            '(tool search called or tool browse called) and not answer contains "I cannot"',
            ast.And(
                (ast.Or((called("search"), called("browse"))), ast.Not(answer_contains("I cannot")))
            ),
        ),
    ],
)
def test_precedence(text: str, expected: ast.Expr) -> None:
    assert one(text) == expected


def test_spans_of_combinations() -> None:
    text = 'x: ; not answer contains "a" and tool b called'
    result = parse(text)
    (expr,) = result.program.statements
    assert isinstance(expr, ast.And)
    assert text[expr.span.start : expr.span.end] == 'not answer contains "a" and tool b called'
    negation = expr.operands[0]
    assert text[negation.span.start : negation.span.end] == 'not answer contains "a"'


@pytest.mark.parametrize(
    ("literal", "value"),
    [
        ('"plain"', "plain"),
        ('"tab\\there"', "tab\there"),
        ('"line\\nbreak"', "line\nbreak"),
        ('"quote \\" inside"', 'quote " inside'),
        ('"back\\\\slash"', "back\\slash"),
        ('"slash \\/ ok"', "slash / ok"),
        ('"\\u00e9t\\u00e9"', "été"),
        ('"\\ud83d\\ude00"', "😀"),  # a surrogate pair, as JSON decodes it
        ('"\\b\\f\\r"', "\b\f\r"),
        ('"é😀 as is"', "é😀 as is"),
        ("'single'", "single"),
        ("'it\\'s'", "it's"),
        ("'say \"hi\"'", 'say "hi"'),
        ("'say \\\"hi\\\"'", 'say "hi"'),
        ("'\\u00e9\\n'", "é\n"),
        ('"# not a comment; not a separator"', "# not a comment; not a separator"),
        ('"{{city}}"', "{{city}}"),
        ('""', ""),
        ("''", ""),
    ],
)
def test_strings(literal: str, value: str) -> None:
    assert one(f"answer contains {literal}") == answer_contains(value)
    assert decode_string(literal) == value


@pytest.mark.parametrize(
    ("literal", "pattern", "flags"),
    [
        ("/\\d+ C/", "\\d+ C", ""),
        ("/x/i", "x", "i"),
        ("/^a.b$/ms", "^a.b$", "ms"),
        ("/x/ims", "x", "ims"),
        ("/a\\/b/", "a\\/b", ""),  # an escaped slash stays in the pattern
        ("/[/]x/", "[/]x", ""),  # a slash inside a class needs no escape
        ("/# not a comment; nor a separator/", "# not a comment; nor a separator", ""),
        ("/x/q", "x", "q"),  # unknown flags parse; the checker reports them (E403)
    ],
)
def test_regexes(literal: str, pattern: str, flags: str) -> None:
    assert one(f"answer matches {literal}") == ast.Check(
        ANSWER, ast.Matches(ast.Regex(pattern, flags))
    )


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("latency < 250ms", ast.Duration(0.25, "250ms")),
        ("latency < 2s", ast.Duration(2.0, "2s")),
        ("latency < 1.5m", ast.Duration(90.0, "1.5m")),
        ("latency < 1h", ast.Duration(3600.0, "1h")),
        ("cost <= $0.05", ast.Money(0.05, "$0.05")),
        ("cost <= $3", ast.Money(3.0, "$3")),
        ("tokens <= 2000", ast.Num(2000)),
        ("tokens <= -1", ast.Num(-1)),
        ("tokens <= 0.5", ast.Num(0.5)),
        ("tokens <= 1e3", ast.Num(1000.0)),
    ],
)
def test_numbers_and_units(text: str, value: ast.Value) -> None:
    stmt = one(text)
    assert isinstance(stmt, ast.Check) and isinstance(stmt.predicate, ast.Compare)
    assert stmt.predicate.value == value
    assert type(stmt.predicate.value.value if isinstance(value, ast.Num) else 0) is type(
        value.value if isinstance(value, ast.Num) else 0
    )


def test_parse_duration() -> None:
    assert parse_duration("250ms") == 0.25
    assert parse_duration("1.5m") == 90.0


def test_timeout_keeps_its_unit() -> None:
    assert one("timeout 30s") == ast.TimeoutDecl(ast.Duration(30.0, "30s"))


def test_values_of_every_kind() -> None:
    stmt = one("output == [1, 2.5, \"s\", 'q', name, true, false, null, 2s, $1, [], {}]")
    assert isinstance(stmt, ast.Check) and isinstance(stmt.predicate, ast.Compare)
    assert stmt.predicate.value == ast.ListLit(
        (
            ast.Num(1),
            ast.Num(2.5),
            ast.Str("s"),
            ast.Str("q"),
            ast.Name("name"),
            ast.Bool(True),
            ast.Bool(False),
            ast.Null(),
            ast.Duration(2.0, "2s"),
            ast.Money(1.0, "$1"),
            ast.ListLit(()),
            ast.ObjectLit(()),
        )
    )
    assert ast.to_json(stmt.predicate.value)[:3] == [1, 2.5, "s"]


def test_objects_with_bare_and_quoted_keys_and_trailing_commas() -> None:
    stmt = one('input {goal: "x", "odd key": 1, nested: {a: [1, 2,],},}')
    assert stmt == ast.ValueDecl(
        "input",
        ast.ObjectLit(
            (
                ("goal", ast.Str("x")),
                ("odd key", ast.Num(1)),
                ("nested", ast.ObjectLit((("a", ast.ListLit((ast.Num(1), ast.Num(2)))),))),
            )
        ),
    )


def test_lists_and_objects_span_lines() -> None:
    text = """\
each [
  {city: "Paris"},   # a comment inside a list
  {city: "Tokyo"},
]
tools contains all [search,
                    browse]
"""
    each, check = ok(text)
    assert each == ast.ValueDecl(
        "each",
        ast.ListLit(
            (
                ast.ObjectLit((("city", ast.Str("Paris")),)),
                ast.ObjectLit((("city", ast.Str("Tokyo")),)),
            )
        ),
    )
    assert check == ast.Check(
        ast.Subject("tools"),
        ast.ListTest("all", ast.ListLit((ast.Name("search"), ast.Name("browse")))),
    )
    assert parse(text).source.position(check.span.start).line == 5


def test_comments_separators_and_blank_lines() -> None:
    text = (
        "# a whole-line comment\n"
        "\n"
        "tool a called  # trailing comment; not a separator\n"
        "   \t\n"
        "tool b called;tool c called ;  ; tool d called;\n"
        "  # indented comment\n"
        "tool e called\r\n"
        "tool f called"
    )
    assert ok(text) == tuple(called(n) for n in "abcdef")


def test_indentation_does_not_matter() -> None:
    flat = 'case "a"\ncassette "x.jsonl"\ntool a called\n'
    indented = 'case "a"\n    cassette "x.jsonl"\n\t tool a called\n'
    assert ok(flat) == ok(indented)


def test_case_lines() -> None:
    text = 'case "name"\n  run pkg.mod:fn\n  input {goal: "g"}\n  timeout 30s\n  output == 1'
    assert ok(text) == (
        ast.CaseDecl("name"),
        ast.RunDecl("pkg.mod:fn"),
        ast.ValueDecl("input", ast.ObjectLit((("goal", ast.Str("g")),))),
        ast.TimeoutDecl(ast.Duration(30.0, "30s")),
        ast.Check(ast.Subject("output"), ast.Compare("==", ast.Num(1))),
    )
    assert one('trace "t.json" as otel') == ast.SourceDecl("trace", "t.json", "otel")
    assert one('tools a, "web-search"') == ast.NamesDecl(
        "tools", (ast.Name("a"), ast.Str("web-search"))
    )


def test_subjects_mean_what_they_say() -> None:
    def subject(text: str) -> ast.Subject:
        stmt = one(text)
        assert isinstance(stmt, ast.Check)
        return stmt.subject

    assert subject("answer[-1] is empty") == ast.Subject("answer", index=-1)
    assert subject("answer[2] is empty") == ast.Subject("answer", index=2)
    assert subject("answer json $.items[*].id == 1") == ast.Subject(
        "answer_json", path="$.items[*].id"
    )
    assert subject("answer json is object") == ast.Subject("answer_json")
    assert subject('memory["odd key"].a[0] == 1') == ast.Subject(
        "memory", keys=(ast.Key("odd key"), ast.Key("a"), ast.Key(0))
    )
    assert subject("state.iteration_count == 4") == ast.Subject(
        "state", keys=(ast.Key("iteration_count"),)
    )
    assert subject("input tokens < 5") == ast.Subject("input_tokens")
    assert subject("output tokens < 5") == ast.Subject("output_tokens")
    assert subject("tool calls < 5") == ast.Subject("tool_calls")
    assert subject('tool "web-search" called') == tool("web-search")


def test_predicates_mean_what_they_say() -> None:
    def predicate(text: str) -> ast.Predicate:
        stmt = one(text)
        assert isinstance(stmt, ast.Check)
        return stmt.predicate

    assert predicate("tool a called once") == ast.Called(ast.Count("once", 1, 1))
    assert predicate("tool a called twice") == ast.Called(ast.Count("twice", 2, 2))
    assert predicate("tool a never called") == ast.Called(ast.Count("never", 0, 0))
    assert predicate("tool a called at least 2 times") == ast.Called(ast.Count("at_least", 2, None))
    assert predicate("tool a called at most 2 times") == ast.Called(ast.Count("at_most", 0, 2))
    assert predicate("tool a called between 1 and 3 times") == ast.Called(
        ast.Count("between", 1, 3)
    )
    assert predicate('tool a args $.city == "X"') == ast.CallTest(
        "args", "$.city", ast.Compare("==", ast.Str("X"))
    )
    assert predicate("tool a args == {a: 1}") == ast.CallTest(
        "args", None, ast.Compare("==", ast.ObjectLit((("a", ast.Num(1)),)))
    )
    assert predicate('tool a result contains "x"') == ast.CallTest(
        "result", None, ast.Contains(ast.Str("x"))
    )
    assert predicate("tools in order [a, b]") == ast.ListTest(
        "in_order", ast.ListLit((ast.Name("a"), ast.Name("b")))
    )
    assert predicate("tools only [a]") == ast.ListTest("only", ast.ListLit((ast.Name("a"),)))
    assert predicate("output in [1, 2]") == ast.ListTest(
        "in", ast.ListLit((ast.Num(1), ast.Num(2)))
    )
    assert predicate('answer starts with "x"') == ast.TextEdge(True, ast.Str("x"))
    assert predicate('answer ends with "x"') == ast.TextEdge(False, ast.Str("x"))
    assert predicate("answer is empty") == ast.Emptiness(True)
    assert predicate("answer not empty") == ast.Emptiness(False)
    assert predicate("output is integer") == ast.IsType("integer")
    assert predicate('memory has "odd key"') == ast.HasKey("odd key")
    assert predicate('answer judged "r" >= 0.7 by "m"') == ast.Judged("r", 0.7, ">=", "m")
    assert predicate('answer judged "r"') == ast.Judged("r")
    assert predicate("tokens within budget") == ast.WithinBudget()
    assert predicate("answer cites tool a at least 2 values") == ast.Cites("a", 2)
    assert one("every tool a args $.n <= 10") == ast.Check(
        tool("a"), ast.CallTest("args", "$.n", ast.Compare("<=", ast.Num(10))), every=True
    )
    assert one("no tool x") == ast.NoTool("x")
    assert one("node n visited") == ast.NodeVisited("n")


def test_statements_start_takes_assertions_only() -> None:
    assert ok('tool a called\nanswer contains "x"', start="statements") == (
        called("a"),
        answer_contains("x"),
    )
    for line in (
        'case "x"',
        'cassette "x.jsonl"',
        'suite "s"',
        "tools a, b",
        'state "s.json"',
        "timeout 2s",
        "input {a: 1}",
    ):
        result = parse(line, start="statements")
        assert result.program.statements == ()
        assert [d.code for d in result.diagnostics] == ["E101"]
    (diag,) = errors('case "x"', start="statements")
    assert diag.column == 1
    assert diag.message.startswith("expected an assertion such as"), diag.message
    assert diag.message.endswith("found `case`")
    # the other lines still parse
    result = parse('case "x"\ntool a called', start="statements")
    assert [d.line for d in result.diagnostics] == [1]
    assert result.program.statements == (called("a"),)


def test_parse_is_deterministic_and_pure() -> None:
    first, second = parse(SUITE), parse(SUITE)
    assert first.program == second.program
    assert [s.span for s in first.program.statements] == [s.span for s in second.program.statements]


def test_split_statements() -> None:
    assert split_statements("a; b\nc [1,\n2]") == [(0, 1), (2, 4), (5, 13)]
    # separators inside strings, regexes, paths and comments do not cut
    text = "a \"x;y\" /p;q/ $['k;l'] # c;d\nb"
    assert split_statements(text) == [(0, len(text) - 2), (len(text) - 1, len(text))]


# pieces of text that decide where statements end: brackets (some inside strings, regexes,
# paths and comments), separators, lines that open a case, unterminated strings and regexes
_CUT_PIECES = [
    *["answer", "tool", "cases", "x", "1", ",", ";", "'", "/x", "$[0]", "$['a[']"],
    *["[", "]", "{", "}", "(", ")", " ", "\t", "\n", "\r\n", "\ncase", 'case "c"'],
    *['"s[;"', '"open', "/r[;/", "# c [;"],
]


def _split_by_depth(text: str) -> list[tuple[int, int]]:
    """The statements of a text by the rule itself, in one scan: cut at each separator
    outside brackets (a closer with nothing open ignored), and at each newline before a
    line that opens a case, however deep."""
    pieces: list[tuple[int, int]] = []
    start = depth = 0
    for m in scanner().finditer(text):
        if m.lastgroup == "open":
            depth += 1
        elif m.lastgroup == "close":
            depth = max(0, depth - 1)
        elif m.lastgroup == "sep":
            at = m.start()
            if text[at] == "\n" and re.match(r"[ \t]*case\b", text[at + 1 :]):
                depth = 0
            if not depth:
                pieces.append((start, at))
                start = at + 1
    pieces.append((start, len(text)))
    return pieces


def _first_unclosed(text: str, begin: int, end: int) -> int | None:
    """The first bracket of `text[begin:end]` left open, by a stack over a scan of the part."""
    stack: list[int] = []
    for m in scanner().finditer(text, begin, end):
        if m.lastgroup == "open":
            stack.append(m.start())
        elif m.lastgroup == "close" and stack:
            stack.pop()
    return stack[0] if stack else None


@settings(max_examples=examples(400), deadline=None)
@given(st.lists(st.sampled_from(_CUT_PIECES), max_size=40), st.data())
def test_cuts_answer_as_a_scan_of_each_part(pieces: list[str], data: st.DataObject) -> None:
    """`Cuts` answers from one scan of the whole text what a scan of each part gives: the
    part's statements (the rule applied to its text alone) and its first bracket left open.
    Parts start where a statement may (the text's start, after a separator) and end at a
    separator or the text's end, as recovery's parts do."""
    text = "".join(pieces)
    cuts = Cuts(text)
    assert split_statements(text) == _split_by_depth(text)
    assert list(cuts.pieces(0, len(text))) == _split_by_depth(text)
    starts = [0] + [s + 1 for s in cuts.seps]
    ends = [*cuts.seps, len(text)]
    for _ in range(6):
        begin = data.draw(st.sampled_from(starts))
        end = data.draw(st.sampled_from([e for e in ends if e >= begin]))
        moved = [(begin + a, begin + b) for a, b in _split_by_depth(text[begin:end])]
        assert list(cuts.pieces(begin, end)) == moved
        assert cuts.first_unclosed(begin, end) == _first_unclosed(text, begin, end)


def test_every_line_left_open_is_reported_where_it_opens() -> None:
    """Each line leaves a bracket open: each is its own broken statement, reported at its
    bracket, and a line that closes its bracket after them still parses."""
    lines = [
        f"answer contains [{i}, {{a: {i}" if i % 3 else f'not (answer contains "{i}"'
        for i in range(300)
    ]
    result = parse("\n".join([*lines, "answer contains [1]"]))
    assert [(d.code, d.line, d.column) for d in result.diagnostics] == [
        ("E101", i + 1, line.index("[" if i % 3 else "(") + 1) for i, line in enumerate(lines)
    ]
    assert [d.message for d in result.diagnostics[:2]] == [
        "`(` at 1:5 is never closed",
        "`[` at 2:17 is never closed",
    ]
    (kept,) = result.program.statements
    assert kept.span.start == len("\n".join(lines)) + 1


@pytest.mark.parametrize(
    "after",
    [
        "",  # the text ends: the statement ran out before its `)`
        "\n",
        "\n  foo\n",  # a line that starts like no statement
        "\n  tool y called\n",  # a line that starts like one
    ],
)
@pytest.mark.parametrize("start", ["file", "statements"])
def test_a_bracket_never_closed_is_reported_where_it_opens(after: str, start: str) -> None:
    text = "tokens < 5\n  not (tool x called once" + after
    found = errors(text, start)
    assert (found[0].line, found[0].column) == (2, 7)
    assert found[0].message == "`(` at 2:7 is never closed"
    assert found[0].hint is not None and found[0].hint.startswith("close it with `)`")
    # the line after it is read on its own: an error of its own, or an assertion
    assert [(d.line, d.column) for d in found[1:]] == ([(3, 3)] if "foo" in after else [])
    kept = parse(text, start=start).program.statements  # type: ignore[arg-type]
    assert len(kept) == (2 if "tool y" in after else 1)


def test_an_error_inside_a_bracket_never_closed_is_that_error() -> None:
    """A later line that goes on with the statement (not at its first word) has its own
    error: that one is reported, where it is."""
    (d,) = errors("not (tool x called once\n  and tool y caled")
    assert (d.line, d.column, d.hint) == (2, 14, "did you mean `called`?")
    (d,) = errors("answer in [1, 2,\n  3 4")
    assert (d.line, d.column, d.message) == (2, 5, "expected `,` or `]`, found `4`")
    (d,) = errors("not (tool x called once foo")
    assert (d.line, d.column) == (1, 25)


# ---- syntax errors ----------------------------------------------------------------------

TERMINAL_NAME = re.compile(
    r"\$END|\b(?:NAME|STRING|INT|DECIMAL|DURATION|MONEY|REGEX|PATH|TARGET|JSON_TYPE|_NL|"
    r"CMP_OP|SEMICOLON|LSQB|RSQB|LBRACE|RBRACE|LPAR|RPAR|COMMA|COLON|DOT|WS|COMMENT|"
    r"__ANON_\d+|[A-Z]+_[A-Z_]+)\b"
)

BAD_INPUTS = [
    "x",
    "answer",
    "answer contains",
    "tool",
    "tool search",
    "tool search called 2",
    "tool search called 2 tmes",
    "tool search caled",
    "answer contans 'x'",
    "node a visted",
    "not",
    "answer contains 'a' and",
    "(answer contains 'a'",
    "answer contains 'a')",
    "answer == [1, 2",
    "answer == {a 1}",
    "answer == {a: }",
    "tokens <",
    "tokens < <",
    "latency <= 2 s",
    "answer json $.a is strng",
    "answer json $.a[ is string",
    "answer judged",
    "answer judged 'x' >=",
    "answer judged 'x' bye 'm'",
    "answer cites tool",
    "answer cites tool a at least",
    "memory has",
    "memory.",
    "state",
    "state.",
    "every tool a",
    "no tool",
    "suite",
    "suite name",
    "tools",
    "tools a,",
    "judge model",
    "timeout",
    "timeout 5",
    "case",
    "case name",
    "cassette",
    "trace 'x.json'",
    "trace 'x.json' as",
    "run",
    "run 42",
    "input",
    "each",
    "answer @ 3",
    "answer contains 'a' ~",
    "é",
    'answer contains "abc',
    "answer matches /abc",
    'answer contains "\\q"',
    "answer contains 'a' 'b'",
    "tool a called; ;; tool",
    "tokens < 5 5",
    "answer[ contains 'x'",
    "answer[1 contains 'x'",
    "tool search calledx",
    "answer contains 'a' andx tool b called",
    "\ttool\t",
    "tool a called\\",
    "{",
    "}",
    "[",
    "]",
    ",",
    ":",
    "$",
    "$.a",
    "==",
    "'x'",
    "/x/",
    "42",
    "2s",
    "$0.05",
]


@pytest.mark.parametrize("text", BAD_INPUTS)
def test_syntax_errors_speak_the_users_words(text: str) -> None:
    for start in ("file", "statements"):
        diags = errors(text, start=start)
        for d in diags:
            # (E404: a path's bracket never closed is the path's error, said at its `[`)
            assert d.code in ("E101", "E102", "E103", "E104", "E404"), d
            assert d.code in CODES
            for words in (d.message, d.hint or ""):
                assert not TERMINAL_NAME.search(words), words
            assert "expected something else" not in d.message
            assert d.line == 1
            assert 1 <= d.column <= len(text) + 1
            assert d.source_line == text


def test_every_error_of_a_file_in_one_pass() -> None:
    text = (
        'suite "s"\n'  # 1
        "tool search caled\n"  # 2: bad
        'answer contains "ok"\n'  # 3
        'answer contans "x"\n'  # 4: bad
        'case "c"\n'  # 5
        '  cassette "x.jsonl"\n'  # 6
        "  node a visted\n"  # 7: bad
        "  tool a called; tool b calld; tool c called\n"  # 8: one bad in the middle
        "  tokens < <; steps >\n"  # 9: two bad on one line
        "  tool d called\n"  # 10
    )
    result = parse(text, "t.eval")
    got = [(d.line, d.column, d.code) for d in result.diagnostics]
    assert got == [
        (2, 13, "E101"),
        (4, 8, "E101"),
        (7, 10, "E101"),
        (8, 25, "E101"),
        (9, 12, "E101"),
        (9, 22, "E101"),
    ]
    # every good statement is still there, in order
    kinds = [type(s).__name__ for s in result.program.statements]
    assert kinds == ["SuiteDecl", "Check", "CaseDecl", "SourceDecl", "Check", "Check", "Check"]
    assert result.program.statements[-1] == called("d")
    hints = [d.hint for d in result.diagnostics]
    assert hints[:4] == [
        "did you mean `called`?",
        "did you mean `contains`?",
        "did you mean `visited`?",
        "did you mean `called`?",
    ]


def test_two_bad_statements_on_one_line() -> None:
    first, second = errors("tool a caled; answer contans 'x'")
    assert (first.line, first.column, first.end_column) == (1, 8, 13)
    assert (second.line, second.column, second.end_column) == (1, 22, 29)
    assert first.hint == "did you mean `called`?"
    assert second.hint == "did you mean `contains`?"


@pytest.mark.parametrize(
    ("text", "found", "guess"),
    [
        ("tool search caled", "caled", "called"),
        ("tool search never caled", "caled", "called"),
        ('answer contans "x"', "contans", "contains"),
        ("node a visted", "visted", "visited"),
        ("answer matchs /x/", "matchs", "matches"),
        ('answer starts wth "x"', "wth", "with"),
        ("tokenz < 5", "tokenz", "tokens"),
        ("memroy has x", "memroy", "memory"),
        ("statu == completed", "statu", "status"),
        ('caes "x"', "caes", "case"),
        ("tool search called 2 tmes", "tmes", "times"),
        ("tool search called onse", "onse", "once"),
        ("answer json $.a is strng", "strng", "string"),
        ("answer is emty", "emty", "empty"),
        ('answer contains "a" adn tool b called', "adn", "and"),
        ('answer judged "x" bye "m"', "bye", "by"),  # `by` ran into `e`
        ("tool search calledx", "calledx", "called"),
    ],
)
def test_did_you_mean(text: str, found: str, guess: str) -> None:
    (diag,) = errors(text)
    assert diag.code == "E101"
    assert f"`{found}`" in diag.message
    assert diag.hint == f"did you mean `{guess}`?"
    column = text.index(found) + 1
    assert (diag.column, diag.end_column) == (column, column + len(found))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # (a known mistake: said as one, with its fix; tests/test_mistakes.py has the rest)
        ("tool search called 2", "a count ends with `times`"),
        ("answer == [1, 2", "`[` at 1:11 is never closed"),
        ("answer == {a 1}", "expected `:`, found `1`"),
        ("tools a,", "expected a name or a quoted string, found the end of the statement"),
        ("answer == 'x' 'y'", "expected `and`, `or` or the end of the statement, found `'y'`"),
        ("answer", "expected a predicate such as"),
        ("x", "expected a statement: an assertion such as"),
        ("not", "expected an assertion such as"),
        ("answer contains", "expected a value ("),
    ],
)
def test_expected_words(text: str, message: str) -> None:
    (diag,) = errors(text)
    assert diag.message.startswith(message), diag.message


EXPECTED_WORDS = [  # (no bracket left open: it would take the next line in)
    "tool search called 2",
    "answer == [1 2]",
    "answer == {a 1}",
    "tools a,",
    "answer contains 'x' 'y'",
    "answer",
    "x",
    "not",
    "answer contains",
    "tool search args $.q ==",
    "answer == [1, {a: [2 3]}]",
    "steps <= 5 and",
]


def test_expected_words_do_not_depend_on_the_errors_met_before() -> None:
    # what a parser state accepts is found once for each state stack and kept: a file of
    # these statements, in any order, says for each what it says alone
    alone = {text: errors(text)[0].message for text in EXPECTED_WORDS}
    for seed in range(5):
        order = random.Random(seed).sample(EXPECTED_WORDS, len(EXPECTED_WORDS))
        found = [d.message for d in errors("\n".join(order))]
        assert found == [alone[text] for text in order]


def test_end_of_statement_points_after_the_last_word() -> None:
    (diag,) = errors("tool search called 2   ; tokens < 5")
    assert (diag.column, diag.end_column) == (21, 22)
    (diag,) = errors("answer contains  \n")
    assert diag.column == 16


def test_unterminated_string_and_regex() -> None:
    (diag,) = errors('answer contains "abc')
    assert (diag.code, diag.message, diag.column) == ("E102", "unterminated string", 17)
    assert diag.hint == 'close it with " on the same line'
    (diag,) = errors("answer contains 'abc\ntool a called")
    assert (diag.code, diag.line, diag.column, diag.end_column) == ("E102", 1, 17, 21)
    (diag,) = errors("answer matches /abc")
    assert (diag.code, diag.message, diag.column) == ("E102", "unterminated regex", 16)
    # the next statements still parse
    result = parse('answer contains "abc\ntool a called\nanswer matches /x; tool b called')
    assert [d.line for d in result.diagnostics] == [1, 3]
    assert result.program.statements == (called("a"),)


def test_unknown_escape() -> None:
    (diag,) = errors('answer contains "a\\qb"')
    assert (diag.code, diag.column, diag.end_column) == ("E104", 19, 21)
    assert diag.message == "unknown escape `\\q` in a string"
    (diag,) = errors('answer contains "it\\\'s"')
    assert diag.code == "E104"
    (diag,) = errors('answer contains "\\u12"')
    assert diag.code == "E104"
    assert ok('answer contains "\\\\q"')  # an escaped backslash, then q


def test_unexpected_character() -> None:
    (diag,) = errors("answer @ 3")
    assert (diag.code, diag.column) == ("E103", 8)
    assert diag.message.startswith("unexpected character `@`; expected a predicate")


@pytest.mark.parametrize(
    ("char", "named", "fixed"),
    [
        ("\u200b", "U+200B (ZERO WIDTH SPACE)", 'answer contains"x"'),
        ("\u00a0", "U+00A0 (NO-BREAK SPACE)", 'answer contains "x"'),
        ("\u202e", "U+202E (RIGHT-TO-LEFT OVERRIDE)", 'answer contains"x"'),
    ],
)
def test_an_invisible_character_is_named_and_its_fix_parses(
    char: str, named: str, fixed: str
) -> None:
    # (shown between backticks, a zero-width space was an empty pair)
    text = f'answer contains{char}"x"'
    (diag,) = errors(text)
    assert (diag.code, diag.column) == ("E103", 16)
    assert diag.message.startswith(f"unexpected invisible character {named}; expected a value")
    assert diag.fix is not None
    fix = diag.fix
    assert fix.line == fix.end_line == 1
    edited = text[: fix.column - 1] + fix.text + text[fix.end_column - 1 :]
    assert edited == fixed and ok(edited)


def test_columns_count_code_points_after_non_ascii_text() -> None:
    text = 'answer == "é😀" and answer contans "x"'
    (diag,) = errors(text)
    assert diag.column == 27 == text.index("contans") + 1
    text = 'answer contains "日本語"\ncase "ü" ; answer == "😀😀" and tool a caled'
    (diag,) = errors(text)
    line = text.splitlines()[1]
    assert (diag.line, diag.column) == (2, line.index("caled") + 1) == (2, 38)
    assert diag.source_line[diag.column - 1 : diag.end_column - 1] == "caled"
    (diag,) = errors('"😀" é')
    assert (diag.line, diag.column) == (1, 1)


def test_unclosed_bracket_does_not_swallow_the_next_case() -> None:
    text = 'case "a"\ncassette "x" [\ncase "b"\ncassette "y.jsonl"\ntool a called\n'
    result = parse(text)
    assert [d.line for d in result.diagnostics] == [2]
    assert [type(s).__name__ for s in result.program.statements] == [
        "CaseDecl",
        "CaseDecl",
        "SourceDecl",
        "Check",
    ]


def test_unclosed_bracket_reports_once() -> None:
    result = parse("each [1,\n  2,\n  3\ntool a called")
    assert len(result.diagnostics) == 1
    assert result.diagnostics[0].code == "E101"


def test_nodes_show_as_attrs_shows_them() -> None:
    # the nodes share one repr (cheaper to make than attrs' own per class): the same text,
    # fields in order, the span left out, nested nodes shown the same way
    (node,) = parse('tool x args $.a == [1, "b", {k: null}]').program.statements
    assert repr(node) == (
        "Check(subject=Subject(kind='tool', name='x', index=None, path=None, keys=()), "
        "predicate=CallTest(target='args', path='$.a', test=Compare(op='==', "
        "value=ListLit(items=(Num(value=1), Str(value='b'), ObjectLit(pairs=(('k', "
        "Null()),)))))), every=False)"
    )
    assert repr(ast.Str("x", span=Span(3, 9))) == "Str(value='x')"
    assert all(
        c.__repr__ is ast.Str.__repr__
        for c in vars(ast).values()
        if isinstance(c, type) and attrs.has(c) and c.__module__ == ast.__name__
    )


@pytest.mark.parametrize(
    ("text", "column", "found"),
    [("cost <= $5x", 9, "`$5x`"), ("tool x args $.a == $5x", 20, "`$5x`"), ("cost <= $", 9, "`$`")],
)
def test_an_amount_with_letters_run_on_is_found_as_written(
    text: str, column: int, found: str
) -> None:
    """Since keywords are whole words, `$5x` was "found `$`" (the lexer's first piece of
    it), where `5sx` is found whole."""
    (d,) = parse(text, "t.eval").diagnostics
    assert (d.code, d.column, d.message.rsplit(", found ", 1)[1]) == ("E101", column, found)


LONG = "1" * 400


@pytest.mark.parametrize(
    ("text", "found"),
    [
        (f"tokens < {LONG}abc", f"found `{LONG[:37]}...`"),
        (f"cost <= ${LONG}x", f"found `${LONG[:36]}...`"),
        (f"tool x args $.a == ${LONG}x", f"found `${LONG[:36]}...`"),
        (f"tool x called 2.{LONG} times", f"found `2.{LONG[:35]}...` where a whole number goes"),
        (f"tool x called 2.{LONG}abc times", f"found `2.{LONG[:35]}...` where a whole number goes"),
    ],
)
def test_a_long_number_with_letters_run_on_is_cut_in_the_message(text: str, found: str) -> None:
    """A number of 400 digits run into letters (`tokens < 1111…1111abc`) was echoed whole
    in E101's message, where a long name is cut: it is cut the same way, and the span
    underlined is still the whole word written."""
    (d,) = parse(text, "t.eval").diagnostics
    assert d.code == "E101" and d.message.endswith(found), d.message
    assert len(d.message) < 200
    assert d.end_column - d.column >= len(LONG)


@given(st.text(alphabet="ab\n\r\t é", max_size=40))
def test_a_sources_lines_start_after_each_newline(text: str) -> None:
    # (`Source` sums the lines' lengths to find where each starts): every offset's line
    # and column are those counted from the text itself, and there is a line per newline
    # and one more
    source = Source(text)
    assert source.line_count() == text.count("\n") + 1
    for offset in range(len(text) + 1):
        line_start = text.rfind("\n", 0, offset) + 1
        expected = Position(text.count("\n", 0, offset) + 1, offset - line_start + 1)
        assert source.local_position(offset) == expected


def test_bidirectional_controls_are_looked_for_in_text_that_is_not_all_ascii() -> None:
    """W101 at a raw bidirectional control, none in text without one (an ASCII text,
    which is not scanned for them, or one of other characters past ASCII)."""
    from evaldsl.syntax import bidi

    found = bidi.bidi_warnings(Source('answer contains "a\u202eb"\nanswer contains "\u2066"'), [])
    assert [(d.code, d.line) for d in found] == [("W101", 1), ("W101", 2)]
    assert bidi.bidi_warnings(Source('answer contains "café"'), []) == []
    assert bidi.bidi_warnings(Source('answer contains "cafe"\n' * 100), []) == []
