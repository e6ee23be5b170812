"""Properties of the parser: any text gives an AST or diagnostics, never another exception;
generated valid programs parse into exactly the statements generated, deterministically."""

from __future__ import annotations

import json
import re
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from evaldsl.api import diagnose
from evaldsl.check.sources import read_facts
from evaldsl.language import ast
from evaldsl.language.diagnostics import CODES, render
from evaldsl.syntax.grammar import spellings
from evaldsl.syntax.parser import ParseResult, parse
from tests.fuzzing import examples

DEMO = Path(__file__).parent / "fixtures" / "traceplay" / "demo"

KEYWORDS = sorted({w for w in spellings().values()})
TERMINAL_NAME = re.compile(
    r"\$END|\b(?:NAME|STRING|INT|DECIMAL|DURATION|MONEY|REGEX|PATH|TARGET|JSON_TYPE|_NL|"
    r"CMP_OP|SEMICOLON|LSQB|RSQB|LBRACE|RBRACE|LPAR|RPAR|COMMA|COLON|DOT|WS|COMMENT|"
    r"__ANON_\d+|[A-Z]+_[A-Z_]+)\b"
)
SYNTAX_CODES = {"E101", "E102", "E103", "E104"}

FUZZ = settings(
    max_examples=examples(300),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)


def assert_well_formed(text: str, result: ParseResult) -> None:
    assert isinstance(result, ParseResult)
    assert isinstance(result.program, ast.Program)
    lines = text.count("\n") + 1
    for d in result.diagnostics:
        assert d.code in SYNTAX_CODES, d
        assert 1 <= d.line <= lines, d
        assert 1 <= d.end_line <= lines, d
        assert d.column >= 1 and d.end_column >= 1, d
        assert (d.end_line, d.end_column) >= (d.line, d.column), d
        for words in (d.message, d.hint or ""):
            # what the user wrote may be quoted back (`found \`COLON\``): leave it out
            ours = re.sub(r"`[^`]*`", lambda m: "" if m.group()[1:-1] in text else m.group(), words)
            assert not TERMINAL_NAME.search(ours), words
    for stmt in result.program.statements:
        assert 0 <= stmt.span.start <= stmt.span.end <= len(text)
    render(result.diagnostics, style="full")
    render(result.diagnostics, style="concise")


def assert_diagnose_works(text: str, start: str) -> None:
    _, program, _, diagnostics = diagnose(
        text,
        "fuzz.eval",
        start=start,  # type: ignore[arg-type]
        base_dir=DEMO,
        facts=read_facts,
    )
    assert isinstance(program, ast.Program)
    for d in diagnostics:
        assert d.code in CODES, d
    render(diagnostics)


# ---- any text -------------------------------------------------------------------------

any_char = st.characters(exclude_categories=())  # surrogates and control characters too


@FUZZ
@given(st.text(any_char, max_size=80))
@example("")
@example("\x00")
@example("\ud800")
@example("\ufeff tool a called")
@example("tool a called\u2028answer contains 'x'")
@example('answer contains "\\ud800"')
@example("é\n😀 caled")
def test_any_text_parses_or_reports(text: str) -> None:
    for start in ("file", "statements"):
        assert_well_formed(text, parse(text, start=start))  # type: ignore[arg-type]
        assert_diagnose_works(text, start)


SOUP_ATOMS = [
    *KEYWORDS,
    *["(", ")", "[", "]", "{", "}", ",", ":", ";", ".", "==", "!=", "<", "<=", ">", ">="],
    *['"x"', "'y'", '"{{city}}"', '"\\q"', '"', "'", "/", "/a+/i", "/(/", "/(a)\\1/", "/x/q"],
    *["$.a", "$.items[*].id", "$['k']", "$..", "$[", "$", "$0.05", "2", "-1", "0", "1.5"],
    *["250ms", "2s", "1.5m", "1e3", "search", "get_wether", "pkg.mod:fn", "é", "😀", "\\"],
    *["#c", "\n", "\r\n", "\t", '"cassette.example.jsonl"', '"missing.jsonl"'],
]
soup = st.lists(
    st.tuples(st.sampled_from(SOUP_ATOMS), st.sampled_from([" ", "", "\n", " ; ", "  "])),
    max_size=16,
).map(lambda parts: "".join(a + sep for a, sep in parts))


@FUZZ
@given(soup)
@example('case "c"\ncassette "cassette.example.jsonl"\ntool get_wether called')
@example('case "c"\ncassette "missing.jsonl"\nstatus == completed')
@example("tool calls called")
@example("answer json $.. is string")
def test_token_soup_parses_or_reports(text: str) -> None:
    for start in ("file", "statements"):
        assert_well_formed(text, parse(text, start=start))  # type: ignore[arg-type]
        assert_diagnose_works(text, start)


# ---- valid programs ---------------------------------------------------------------------

# Bare names: any word, keywords included (they double as names), except where the word
# would change what the statement says (`tool calls` is a subject; `true` is a value).
bare_name = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,9}", fullmatch=True)
plain_text = st.text(st.characters(exclude_categories=("Cs",)), max_size=12)


@st.composite
def string_literal(draw: st.DrawFn) -> tuple[str, str]:
    """(literal as written, the text it stands for): double or single quotes, escapes."""
    value = draw(plain_text)
    ascii_only = draw(st.booleans())
    written = json.dumps(value, ensure_ascii=ascii_only)
    if draw(st.booleans()):
        body = written[1:-1].replace("'", "\\'")
        written = f"'{body}'"
    return written, value


#: (made once: a filter made at each draw is a new lazy strategy, which built its regex's
#: strategy again at every draw, most of a fuzz run's time and gigabytes of its memory)
tool_bare_name = bare_name.filter(lambda n: n != "calls")
#: The words after `tools` (or `nodes`) that make its line an assertion, not a declaration.
ASSERTION_WORDS = frozenset(["is", "only", "in", "contains", "not", "has", "matches", "called"])
value_name = bare_name.filter(lambda n: n not in ("true", "false", "null"))
run_target = st.from_regex(
    r"[a-z_][a-z0-9_]{0,6}(\.[a-z_][a-z0-9_]{0,6}){0,2}:[a-z_][a-z0-9_]{0,6}", fullmatch=True
)


@st.composite
def tool_name(draw: st.DrawFn) -> tuple[str, str]:
    if draw(st.booleans()):
        name = draw(tool_bare_name)
        return name, name
    return draw(string_literal())


@st.composite
def value(draw: st.DrawFn, depth: int = 0) -> tuple[str, ast.Value]:
    kind = draw(st.integers(0, 8 if depth < 2 else 6))
    if kind == 0:
        text, v = draw(string_literal())
        return text, ast.Str(v)
    if kind == 1:
        n = draw(st.integers(-(10**12), 10**12))
        return str(n), ast.Num(n)
    if kind == 2:
        f = draw(st.floats(allow_nan=False, allow_infinity=False, width=64))
        text = repr(f)
        return text, ast.Num(float(text) if ("." in text or "e" in text) else int(text))
    if kind == 3:
        word = draw(st.sampled_from(["true", "false", "null"]))
        return word, ast.Null() if word == "null" else ast.Bool(word == "true")
    if kind == 4:
        name = draw(value_name)
        return name, ast.Name(name)
    if kind == 5:
        n = draw(st.integers(0, 5000))
        unit = draw(st.sampled_from(["ms", "s", "m", "h"]))
        scale = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}[unit]
        return f"{n}{unit}", ast.Duration(n * scale, f"{n}{unit}")
    if kind == 6:
        cents = draw(st.integers(0, 10**6))
        text = f"${cents // 100}.{cents % 100:02d}"
        return text, ast.Money(float(text[1:]), text)
    items = draw(st.lists(value(depth + 1), max_size=3))
    sep = draw(st.sampled_from([", ", ",", ",\n  ", " ,"]))
    trailing = draw(st.sampled_from(["", ",", ",\n"])) if items else ""
    if kind == 7:
        body = sep.join(t for t, _ in items)
        return f"[{body}{trailing}]", ast.ListLit(tuple(v for _, v in items))
    keys = draw(
        st.lists(
            st.one_of(bare_name.map(lambda n: (n, n)), string_literal()),
            min_size=len(items),
            max_size=len(items),
        )
    )
    body = sep.join(f"{k}: {t}" for (k, _), (t, _) in zip(keys, items, strict=True))
    pairs = tuple((k, v) for (_, k), (_, v) in zip(keys, items, strict=True))
    return "{" + body + trailing + "}", ast.ObjectLit(pairs)


COUNTS = [
    ("", ast.Count("any", 1, None)),
    (" once", ast.Count("once", 1, 1)),
    (" twice", ast.Count("twice", 2, 2)),
    (" 3 times", ast.Count("times", 3, 3)),
    (" 1 time", ast.Count("times", 1, 1)),
    (" at least 2 times", ast.Count("at_least", 2, None)),
    (" at most 4 times", ast.Count("at_most", 0, 4)),
    (" between 1 and 3 times", ast.Count("between", 1, 3)),
]


@st.composite
def check(draw: st.DrawFn) -> tuple[str, ast.Expr]:
    kind = draw(st.integers(0, 9))
    if kind == 0:
        (name_text, name), (count_text, count) = draw(tool_name()), draw(st.sampled_from(COUNTS))
        return f"tool {name_text} called{count_text}", ast.Check(
            ast.Subject("tool", name=name), ast.Called(count)
        )
    if kind == 1:
        name_text, name = draw(tool_name())
        return f"no tool {name_text}", ast.NoTool(name)
    if kind == 2:
        name_text, name = draw(tool_name())
        return f"node {name_text} visited", ast.NodeVisited(name)
    if kind == 3:
        text, v = draw(string_literal())
        verb = draw(st.sampled_from(["contains", "==", "starts with", "ends with"]))
        pred: ast.Predicate
        if verb == "contains":
            pred = ast.Contains(ast.Str(v))
        elif verb == "==":
            pred = ast.Compare("==", ast.Str(v))
        else:
            pred = ast.TextEdge(verb == "starts with", ast.Str(v))
        return f"answer {verb} {text}", ast.Check(ast.Subject("answer"), pred)
    if kind == 4:
        subject = draw(st.sampled_from(["tokens", "steps", "errors", "guards", "budget"]))
        op = draw(st.sampled_from(["==", "!=", "<", "<=", ">", ">="]))
        n = draw(st.integers(0, 10**6))
        return f"{subject} {op} {n}", ast.Check(ast.Subject(subject), ast.Compare(op, ast.Num(n)))  # type: ignore[arg-type]
    if kind == 5:
        pattern = draw(st.sampled_from(["\\d+ C", "a|b", "^x$", "[/]", "a\\/b", "(?:x)+"]))
        flags = draw(st.sampled_from(["", "i", "m", "s", "ims"]))
        return f"answer matches /{pattern}/{flags}", ast.Check(
            ast.Subject("answer"), ast.Matches(ast.Regex(pattern, flags))
        )
    if kind == 6:
        key = draw(bare_name)
        text, v = draw(value())
        return f"memory.{key} == {text}", ast.Check(
            ast.Subject("memory", keys=(ast.Key(key),)), ast.Compare("==", v)
        )
    if kind == 7:
        key_text, key = draw(st.one_of(bare_name.map(lambda n: (n, n)), string_literal()))
        return f"memory has {key_text}", ast.Check(ast.Subject("memory"), ast.HasKey(key))
    if kind == 8:
        names = draw(
            st.lists(bare_name.filter(lambda n: n not in ("true", "false", "null")), max_size=4)
        )
        verb, op = draw(
            st.sampled_from([("in order", "in_order"), ("only", "only"), ("contains all", "all")])
        )
        items = ast.ListLit(tuple(ast.Name(n) for n in names))
        return f"tools {verb} [{', '.join(names)}]", ast.Check(
            ast.Subject("tools"),
            ast.ListTest(op, items),  # type: ignore[arg-type]
        )
    name_text, name = draw(tool_name())
    text, v = draw(value())
    return f"tool {name_text} args $.a[0] == {text}", ast.Check(
        ast.Subject("tool", name=name), ast.CallTest("args", "$.a[0]", ast.Compare("==", v))
    )


def _wrap(text: str, node: ast.Expr) -> str:
    """Parentheses around a chain inside another chain or under `not`."""
    return f"({text})" if isinstance(node, (ast.And, ast.Or)) else text


@st.composite
def assertion(draw: st.DrawFn, depth: int = 0) -> tuple[str, ast.Expr]:
    """An assertion and its tree, written with the parentheses precedence requires (and
    sometimes more)."""
    kind = draw(st.integers(0, 3 if depth < 2 else 0))
    if kind == 0:
        text, node = draw(check())
    elif kind == 1:
        inner_text, inner = draw(assertion(depth + 1))
        text = "not " + _wrap(inner_text, inner)
        node = ast.Not(inner)
    else:
        parts = draw(st.lists(assertion(depth + 1), min_size=2, max_size=3))
        word, kind_ = ("and", ast.And) if kind == 2 else ("or", ast.Or)
        texts = [_wrap(t, n) for t, n in parts]
        text = f" {word} ".join(texts)
        node = kind_(tuple(n for _, n in parts))
    if draw(st.integers(0, 5)) == 0:
        text = f"({text})"
    return text, node


@st.composite
def program(draw: st.DrawFn) -> tuple[str, list[ast.Statement]]:
    items = draw(st.lists(assertion(), min_size=1, max_size=8))
    text = ""
    for i, (stmt, _) in enumerate(items):
        indent = draw(st.sampled_from(["", "  ", "\t"]))
        text += indent + stmt
        if i < len(items) - 1:
            text += draw(
                st.sampled_from(["\n", ";", " ; ", "\n\n", "  # note; ok\n", ";\n", "\r\n"])
            )
    text += draw(st.sampled_from(["", "\n", ";", "  # end"]))
    return text, [n for _, n in items]


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program())
@example(
    (
        "tool search called 2 times; answer matches /\\d+ C/",
        [
            ast.Check(ast.Subject("tool", name="search"), ast.Called(ast.Count("times", 2, 2))),
            ast.Check(ast.Subject("answer"), ast.Matches(ast.Regex("\\d+ C", ""))),
        ],
    )
)
def test_valid_programs_parse_into_what_was_generated(
    generated: tuple[str, list[ast.Statement]],
) -> None:
    text, expected = generated
    for start in ("file", "statements"):
        first = parse(text, start=start)  # type: ignore[arg-type]
        assert first.diagnostics == (), [d.message for d in first.diagnostics]
        assert len(first.program.statements) == len(expected)
        assert list(first.program.statements) == expected
        again = parse(text, start=start)  # type: ignore[arg-type]
        assert again.program == first.program
        assert [s.span for s in again.program.statements] == [
            s.span for s in first.program.statements
        ]
    # each statement's span holds exactly that statement
    for stmt in first.program.statements:
        alone = parse(text[stmt.span.start : stmt.span.end])
        assert alone.program.statements == (stmt,)


@st.composite
def declaration(draw: st.DrawFn) -> tuple[str, ast.Statement]:
    """A header or case line."""
    kind = draw(st.integers(0, 8))
    text, v = draw(string_literal())
    if kind == 0:
        return f"case {text}", ast.CaseDecl(v)
    if kind == 1:
        return f"cassette {text}", ast.SourceDecl("cassette", v)
    if kind == 2:
        return f"state {text}", ast.SourceDecl("state", v)
    if kind == 3:
        fmt = draw(bare_name)
        return f"trace {text} as {fmt}", ast.SourceDecl("trace", v, fmt)
    if kind == 4:
        # (a first bare name that begins a `tools` or `nodes` assertion, `tools is empty`,
        # `tools only [..]`, makes the line that assertion: such a name is quoted there)
        names = draw(
            st.lists(tool_name(), min_size=1, max_size=4).filter(
                lambda ns: ns[0][0] not in ASSERTION_WORDS
            )
        )
        word = draw(st.sampled_from(["tools", "nodes"]))
        items = tuple(ast.Str(n) if t.startswith(("'", '"')) else ast.Name(n) for t, n in names)
        body = ", ".join(t for t, _ in names)
        return f"{word} {body}", ast.NamesDecl(word, items)  # type: ignore[arg-type]
    if kind == 5:
        value_text, value_node = draw(value())
        word = draw(st.sampled_from(["input", "each"]))
        return f"{word} {value_text}", ast.ValueDecl(word, value_node)  # type: ignore[arg-type]
    if kind == 6:
        n = draw(st.integers(1, 600))
        return f"timeout {n}s", ast.TimeoutDecl(ast.Duration(float(n), f"{n}s"))
    if kind == 7:
        target = draw(run_target)
        return f"run {target}", ast.RunDecl(target)
    return f"suite {text}", ast.SuiteDecl(v)


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(declaration(), assertion()), min_size=1, max_size=10), st.data())
def test_valid_files_parse_into_what_was_generated(
    items: list[tuple[str, ast.Statement]], data: st.DataObject
) -> None:
    seps = data.draw(
        st.lists(
            st.sampled_from(["\n", ";", "\n  ", " # c\n"]), min_size=len(items), max_size=len(items)
        )
    )
    text = "".join(t + sep for (t, _), sep in zip(items, seps, strict=True))
    result = parse(text)
    assert result.diagnostics == (), [d.message for d in result.diagnostics]
    assert list(result.program.statements) == [n for _, n in items]
    assert parse(text).program == result.program
