"""The formatter: one canonical layout, comments kept, idempotent, never a change of meaning.

Golden files under tests/format/: every `*.eval` there is already canonical and must come
back byte for byte; every `messy/*.eval` must come out as its `*.expected`. Then the same
properties on every example suite, on every example of docs/language.md and on programs
hypothesis writes from the grammar's vocabulary in a messy layout.
"""

from __future__ import annotations

import io
import json
import os
import re
import stat
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from language_examples import LANGUAGE_MD, inline_codes, statements_for

from evaldsl.format.formatter import fmt_command, format_text, quote, unified_diff
from evaldsl.language import ast
from evaldsl.language.diagnostics import EvalDslError
from evaldsl.syntax.grammar import spellings
from evaldsl.syntax.parser import parse
from tests.fuzzing import examples

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "format"
CANONICAL = sorted(CORPUS.glob("*.eval"))
MESSY = sorted((CORPUS / "messy").glob("*.eval"))
# the example suites, and the other stages' .eval test files (some with errors on purpose)
EXAMPLES = [
    *sorted((ROOT / "examples").rglob("*.eval")),
    *sorted((ROOT / "examples-failing").glob("*.eval")),
    *sorted(p for p in (ROOT / "tests").rglob("*.eval") if CORPUS not in p.parents),
]
KEYWORDS = frozenset(w for w in spellings().values() if w.isalpha())


def read(path: Path) -> str:
    with path.open(encoding="utf-8", newline="") as f:
        return f.read()


def comments_of(text: str) -> list[str]:
    """The comments of a text, as the formatter's safety check sees them."""
    from evaldsl.format.formatter import scan_comments

    return [c.text for c in scan_comments(text)[0]]


def assert_safe(text: str) -> str:
    """Format `text`; the result means the same, keeps the comments, is a fixed point and
    is laid out by the rules. Returns it."""
    before = parse(text)
    assert before.ok, [d.message for d in before.diagnostics]
    once = format_text(text)
    after = parse(once)
    assert after.ok, (once, [d.message for d in after.diagnostics])
    assert after.program == before.program
    assert sorted(comments_of(once)) == sorted(comments_of(text.removeprefix("\ufeff")))
    assert format_text(once) == once
    assert_layout(once)
    return once


def assert_layout(text: str) -> None:
    if not text:
        return
    if text.endswith("\r\n"):  # the file's own line ending, then CRLF throughout
        assert text.count("\n") == text.count("\r\n")
        text = text.replace("\r\n", "\n")
    assert text.endswith("\n") and not text.endswith("\n\n")
    assert not text.startswith("\n")
    assert "\n\n\n" not in text
    assert "\r\n" not in text
    in_case = False
    for line in text.split("\n")[:-1]:
        assert line == line.rstrip(), f"trailing white space: {line!r}"
        assert "\t" not in line[: len(line) - len(line.lstrip())]
        if line.startswith("case "):
            in_case = True
        elif line and in_case and not line.startswith("#"):
            assert line.startswith("  "), f"not indented in a case: {line!r}"


# ---- the golden corpus -------------------------------------------------------------------


def test_the_corpus_is_there() -> None:
    assert len(CANONICAL) >= 6 and len(MESSY) >= 4
    for messy in MESSY:
        assert messy.with_suffix(".expected").is_file(), messy


@pytest.mark.parametrize("path", CANONICAL, ids=lambda p: p.name)
def test_canonical_files_come_back_unchanged(path: Path) -> None:
    text = read(path)
    assert format_text(text, str(path)) == text
    assert_safe(text)


@pytest.mark.parametrize("path", MESSY, ids=lambda p: p.name)
def test_messy_files_come_out_as_expected(path: Path) -> None:
    text = read(path)
    expected = read(path.with_suffix(".expected"))
    assert format_text(text, str(path)) == expected
    assert format_text(expected) == expected
    assert_safe(text)


def test_the_corpus_covers_the_vocabulary() -> None:
    """Every keyword of the grammar, every statement kind and every predicate occurs in
    the canonical corpus."""
    text = "\n".join(read(p) for p in CANONICAL)
    words = set(re.findall(r"[a-z]+", text))
    assert KEYWORDS - words == set()
    kinds: set[str] = set()
    for p in CANONICAL:
        for stmt in parse(read(p)).program.statements:
            kinds.add(type(stmt).__name__)
            if isinstance(stmt, ast.Check):
                kinds.add(type(stmt.predicate).__name__)
    assert kinds >= {
        "SuiteDecl",
        "NamesDecl",
        "JudgeDecl",
        "TimeoutDecl",
        "CaseDecl",
        "SourceDecl",
        "RunDecl",
        "ValueDecl",
        "Check",
        "NoTool",
        "NodeVisited",
        "Not",
        "And",
        "Or",
        "Called",
        "CallTest",
        "Compare",
        "Contains",
        "ListTest",
        "Emptiness",
        "Exists",
        "IsType",
        "TextEdge",
        "Matches",
        "HasKey",
        "Judged",
        "WithinBudget",
        "Cites",
    }


# ---- examples --------------------------------------------------------------------------


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: str(p.relative_to(ROOT)))
def test_examples_format_safely(path: Path) -> None:
    text = read(path)
    if not parse(text).ok:
        with pytest.raises(EvalDslError):
            format_text(text)
        return
    assert_safe(text)


def test_every_example_of_the_reference_formats_safely() -> None:
    doc = LANGUAGE_MD.read_text(encoding="utf-8")
    fenced = re.search(r"```eval\n(# weather\.eval.*?)```", doc, re.S)
    assert fenced is not None
    assert_safe(fenced.group(1))
    seen = 0
    for example in dict.fromkeys(inline_codes(doc)):
        for statement in statements_for(example, KEYWORDS):
            if parse(statement).ok:
                assert_safe(statement)
                seen += 1
    assert seen > 100


# ---- rules, one by one ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", ""),
        ("\n\n  \n", ""),
        ("# only a comment", "# only a comment\n"),
        ("tool a called", "tool a called\n"),
        ("tool a called\n\n\n", "tool a called\n"),
        ("tool a called;", "tool a called\n"),
        ("tool a called;;  ; answer contains 'x'", 'tool a called; answer contains "x"\n'),
        ("tool a called;\nanswer contains 'x'", 'tool a called\nanswer contains "x"\n'),
        # a case line stands alone; what was joined to it goes on the next line
        ('case "a"; cassette "x"; tool a called', 'case "a"\n  cassette "x"; tool a called\n'),
        ('tool a called; case "a"', 'tool a called\n\ncase "a"\n'),
        # names: bare where they are bare words, quoted where they must be
        ('tool "search" called', "tool search called\n"),
        ("tool 'web-search' called", 'tool "web-search" called\n'),
        ('tool "calls" called', 'tool "calls" called\n'),
        ('every tool "calls" called', "every tool calls called\n"),
        ('no tool "called"', "no tool called\n"),
        ("memory['a'][\"b c\"][0] == 1", 'memory.a["b c"][0] == 1\n'),
        ('output == {"a": 1, "b-c": 2}', 'output == {a: 1, "b-c": 2}\n'),
        ('run "pkg.mod:fn"', "run pkg.mod:fn\n"),
        # values: as written, strings requoted
        ("output == 1.0", "output == 1.0\n"),
        ("output == 1E5", "output == 1E5\n"),
        ("output == 007", "output == 007\n"),
        ("latency < 1500ms", "latency < 1500ms\n"),
        ("cost <= $0.050", "cost <= $0.050\n"),
        ("answer judged 'r' >= 1", 'answer judged "r" >= 1\n'),
        ("answer judged 'r >= 2' >= 0.50", 'answer judged "r >= 2" >= 0.50\n'),
        ("answer contains 'a \"b\" \\'c\\''", 'answer contains "a \\"b\\" \'c\'"\n'),
        ("answer contains '\\u00e9\\u4e2d'", 'answer contains "é中"\n'),
        ("answer matches  /a b/i", "answer matches /a b/i\n"),
        ("answer json  $[ 'a' ] == 1", "answer json $[ 'a' ] == 1\n"),
        # counts: singular for one
        ("tool a called 1 times", "tool a called 1 time\n"),
        ("tool a called at most 1 times", "tool a called at most 1 time\n"),
        ("tool a called between 0 and 1 time", "tool a called between 0 and 1 time\n"),
        ("answer cites tool a at least 1 values", "answer cites tool a at least 1 value\n"),
        # line endings and a byte-order mark
        ("\ufefftool a called\r\n# c\r\n", "tool a called\r\n# c\r\n"),  # (CRLF kept)
        ("tool a called  # c \r\n", "tool a called  # c\r\n"),
    ],
)
def test_rules(text: str, expected: str) -> None:
    assert format_text(text) == expected
    if text.strip():
        assert_safe(text)


def test_a_bare_case_item_keeps_a_list_on_one_line() -> None:
    """Inside brackets, a line starting with `case` opens a case for the parser: a list
    or object with a bare `case` item or key is never spread over lines."""
    text = "each [case,  # why\n  x]\noutput == {case: 1,\n  b: 2}\n"
    assert format_text(text) == "# why\neach [case, x]\noutput == {case: 1, b: 2}\n"
    assert_safe(text)
    text = "each [x,\n  case]\noutput == {\n  a: {case: 2},\n}\n"
    assert format_text(text) == "each [x, case]\noutput == {\n  a: {case: 2},\n}\n"
    assert_safe(text)


def test_syntax_errors_are_refused() -> None:
    with pytest.raises(EvalDslError) as caught:
        format_text('case "a"\n  tool a caled once\n  answer contains "x', "bad.eval")
    assert [d.code for d in caught.value.diagnostics] == ["E101", "E102"]
    assert all(d.path == "bad.eval" for d in caught.value.diagnostics)


def test_a_lone_carriage_return_is_refused_at_its_place() -> None:
    """An old Mac line ending is one line for evaldsl and a line end for editors: the
    file is refused (E504 where the first one is), even where it would parse."""
    for text in ('case "a"\r  steps >= 1\r', 'case "a"\r\n  steps >= 1\r'):
        with pytest.raises(EvalDslError) as caught:
            format_text(text, "mac.eval")
        [d] = caught.value.diagnostics
        assert (d.code, d.path, d.line) == ("E504", "mac.eval", text[:10].count("\n") + 1)
        assert d.column == len(text.split("\n")[d.line - 1].split("\r")[0]) + 1
        assert d.hint is not None and "LF or CRLF" in d.hint


def test_quote_is_json_and_minimal() -> None:
    for value in ["", "plain", 'q"uote', "back\\slash", "tab\t", "\x00\x1f\x7f", "é中☀️", "\u2028"]:
        written = quote(value)
        assert json.loads(written) == value
        assert parse(f"answer contains {written}").program.statements[0] == ast.Check(
            ast.Subject("answer"), ast.Contains(ast.Str(value))
        )
    assert quote("é/") == '"é/"'
    assert quote("\ud800") == '"\\ud800"'  # a lone surrogate is never written raw


@pytest.mark.parametrize(
    "unseen",
    [
        "\x85",  # C1 controls (NEL ends a line for some editors)
        "\x9b",
        "\u202e",  # bidi controls reorder the text around them (Trojan Source)
        "\u2066",
        "\u200b",  # zero-width and the BOM: invisible
        "\u200d",
        "\ufeff",
        "\u00a0",  # spaces other than U+0020, and the line and paragraph separators
        "\u3000",
        "\u2029",
    ],
)
def test_quote_escapes_what_cannot_be_seen(unseen: str) -> None:
    written = quote(f"a{unseen}b")
    assert written == f'"a\\u{ord(unseen):04x}b"' and json.loads(written) == f"a{unseen}b"
    text = f'case "x"\n  answer contains "{unseen}"\n'
    assert format_text(text) == f'case "x"\n  answer contains {quote(unseen)}\n'


def test_quote_escapes_a_combining_mark_only_where_it_would_sit_on_the_quote() -> None:
    assert quote("\u0301e") == '"\\u0301e"'
    assert quote("e\u0301") == '"e\u0301"'  # (é: it marks the letter before it)
    assert quote("☀\ufe0f") == '"☀\ufe0f"'


@pytest.mark.parametrize("unseen", ["\U0001da00", "\U000e0001", "\U0001d173"])
def test_quote_escapes_a_character_past_the_bmp_as_json_does_by_a_surrogate_pair(
    unseen: str,
) -> None:
    # (a combining mark first, a language tag, a musical format character: found by
    # make fuzz, where "\u1da00" read back as U+1DA0 and a "0")
    written = quote(f"{unseen}b")
    assert json.loads(written) == f"{unseen}b" and written.isascii()
    assert format_text(f'case "{unseen}"\n') == f"case {quote(unseen)}\n"


def test_unified_diff_marks_a_missing_final_newline() -> None:
    assert unified_diff("a\nb", "a\nb\n", "x.eval").splitlines() == [
        "--- x.eval",
        "+++ x.eval",
        "@@ -1,2 +1,2 @@",
        " a",
        "-b",
        "\\ No newline at end of file",
        "+b",
    ]


# ---- generated programs ----------------------------------------------------------------

# Words, some of them keywords: the contextual lexer reads a keyword as a name where only a
# name fits, and the formatter must keep it that way.
_WORDS = ["search", "get_weather", "a", "b_2", "_x", "Tool9", "calls", "called", "case"]
_WORDS += ["and", "or", "not", "tool", "tools", "only", "is", "empty", "value", "in", "has"]
_SP = st.sampled_from([" ", " ", "  ", "\t", " \t "])
_GAP = st.sampled_from(["", "", " ", "\n", "\n    ", " # c\n", "  # note ✓ \n  ", "\n# x\n"])
_NUMBERS = st.sampled_from(["0", "1", "-3", "42", "007", "1.0", "0.70", "1e5", "2.5E-3", "-0.5"])
_DURATIONS = st.sampled_from(["250ms", "2s", "1.5m", "1h", "-1s"])
_MONEY = st.sampled_from(["$0.05", "$3", "$10.50"])
_PATHS = st.sampled_from(["$.city", "$.items[*].id", "$['odd key']", '$["a"]', "$..x", "$[0]"])
_REGEXES = st.sampled_from(["/x/", r"/\d+ C/i", r"/a\/b[/]/ims", "/#no comment/", r"/[\]]/"])
_TYPES = st.sampled_from(["string", "number", "integer", "boolean", "array", "object", "null"])
_TEXT = st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=6) | st.sampled_from(
    ["x", "Xiamen 厦门", "{{city}}", "it's", 'say "hi"', "a\\b", "#", "/", "\u2028"]
)


@st.composite
def strings(draw: st.DrawFn) -> str:
    """A string literal in one of the ways people write them."""
    value = draw(_TEXT)
    style = draw(st.sampled_from(["raw", "ascii", "single"]))
    body = json.dumps(value, ensure_ascii=style != "raw")
    if style == "single":
        return "'" + body[1:-1].replace("'", "\\'") + "'"
    return body


names = st.sampled_from(_WORDS) | strings()
bare_names = st.sampled_from(_WORDS)


def joined(items: list[str], gaps: list[str], trailing: bool, brackets: str) -> str:
    body = "".join(
        (gaps[2 * i] + item + gaps[2 * i + 1] + ("," if i < len(items) - 1 or trailing else ""))
        for i, item in enumerate(items)
    )
    return brackets[0] + body + gaps[-1] + brackets[1]


@st.composite
def lists(draw: st.DrawFn, items: st.SearchStrategy[str]) -> str:
    values = draw(st.lists(items, max_size=4))
    gaps = draw(st.lists(_GAP, min_size=2 * len(values) + 1, max_size=2 * len(values) + 1))
    return joined(values, gaps, draw(st.booleans()) and bool(values), "[]")


@st.composite
def objects(draw: st.DrawFn, items: st.SearchStrategy[str]) -> str:
    pairs = [
        f"{draw(names)}{draw(_SP)}:{draw(_SP)}{value}"
        for value in draw(st.lists(items, max_size=3))
    ]
    gaps = draw(st.lists(_GAP, min_size=2 * len(pairs) + 1, max_size=2 * len(pairs) + 1))
    return joined(pairs, gaps, draw(st.booleans()) and bool(pairs), "{}")


scalars = st.one_of(
    strings(),
    _NUMBERS,
    _DURATIONS,
    _MONEY,
    st.sampled_from(["true", "false", "null", "completed", "Xiamen", "x_1", "case", "and"]),
)
values = st.recursive(scalars, lambda inner: lists(inner) | objects(inner), max_leaves=8)


def words(*parts: st.SearchStrategy[str] | str) -> st.SearchStrategy[str]:
    """Parts joined by white space of a random kind."""

    @st.composite
    def build(draw: st.DrawFn) -> str:
        out = []
        for part in parts:
            out.append(part if isinstance(part, str) else draw(part))
        return "".join(out[0:1] + [draw(_SP) + p for p in out[1:]])

    return build()


accessors = st.lists(
    st.sampled_from([".a", ".b_2", ".case", "[0]", "[-1]"]) | strings().map(lambda s: f"[{s}]"),
    max_size=3,
).map("".join)
subjects = st.one_of(
    st.sampled_from(["answer", "answer json", "status", "nodes", "tools", "tokens", "steps"]),
    st.sampled_from(["input tokens", "output tokens", "tool calls", "guards", "errors"]),
    st.sampled_from(["latency", "cost", "budget", "answer[2]", "answer[-1]", "answer [ 1 ]"]),
    words("answer json", _PATHS),
    words("tool", names),
    st.tuples(st.sampled_from(["output", "memory", "state.x", "state . plan"]), accessors).map(
        "".join
    ),
)
counts = st.one_of(
    st.sampled_from(["", "once", "twice"]),
    words(st.integers(0, 3).map(str), st.sampled_from(["time", "times"])),
    words(st.sampled_from(["at least", "at most"]), st.integers(0, 3).map(str), "times"),
    words("between", st.integers(0, 2).map(str), "and", st.integers(2, 4).map(str), "time"),
)
value_tests = st.one_of(
    words(st.sampled_from(["==", "!=", "<", "<=", ">", ">="]), values),
    words("contains", values),
    words("matches", _REGEXES),
    words("in", lists(scalars)),
    words("is", _TYPES),
    st.sampled_from(["is empty", "not empty"]),
)
call_predicates = st.one_of(
    words("called", counts),
    st.just("never called"),
    words(
        st.sampled_from(["args", "result"]), st.sampled_from(["", "$.a", "$.items[0]"]), value_tests
    ),
)
predicates = st.one_of(
    call_predicates,
    value_tests,
    words(st.sampled_from(["contains all", "contains any", "in order", "only"]), lists(scalars)),
    words(st.sampled_from(["starts with", "ends with"]), strings()),
    words("has", names),
    words("judged", strings(), st.sampled_from(["", ">= 0.7", "> 1", "<0.50"]), "by", strings()),
    words("judged", strings()),
    st.just("within budget"),
    words("cites tool", names, st.sampled_from(["", "at least 1 value", "at least 3 values"])),
)
checks = st.one_of(
    words(subjects, predicates),
    words("no tool", names),
    words("node", names, "visited"),
    words("every tool", names, call_predicates),
)


@st.composite
def grouped(draw: st.DrawFn, inner: st.SearchStrategy[str]) -> str:
    return "(" + draw(_GAP) + draw(inner) + draw(_GAP) + ")"


expressions = st.recursive(
    checks,
    lambda inner: st.one_of(
        words("not", inner),
        grouped(inner),
        words(inner, st.sampled_from(["and", "or"]), inner),
    ),
    max_leaves=5,
)
declarations = st.one_of(
    words("suite", strings()),
    words(
        st.sampled_from(["tools", "nodes"]), st.lists(names, min_size=1, max_size=3).map(", ".join)
    ),
    words("judge model", strings()),
    words("timeout", _DURATIONS),
    words(st.sampled_from(["cassette", "state", "dataset"]), strings()),
    words("trace", strings(), "as", bare_names),
    words("run", st.sampled_from(["agent:answer", "pkg.mod:fn", '"a target"'])),
    words(st.sampled_from(["input", "each"]), values),
)
statements = st.one_of(expressions, expressions, declarations)


@st.composite
def programs(draw: st.DrawFn) -> str:
    """A file: lines of `;`-joined statements, `case` lines, comments and blank lines, each
    indented at random."""
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["statements", "statements", "case", "comment", "blank"]))
        indent = draw(st.sampled_from(["", "", "  ", "    ", "\t"]))
        if kind == "case":
            lines.append(indent + "case " + draw(strings()))
        elif kind == "comment":
            # (a CR is a line end too: a lone one is refused, E504, as its own test says)
            comment = draw(st.text(max_size=5)).replace("\n", " ").replace("\r", " ")
            lines.append(indent + "# " + comment)
        elif kind == "blank":
            lines.append(draw(st.sampled_from(["", "  ", ";"])))
        else:
            line = draw(st.sampled_from([";", " ; ", ";  "])).join(
                draw(st.lists(statements, min_size=1, max_size=3))
            )
            line += draw(st.sampled_from(["", "", ";", "  # trailing", "\t#t"]))
            lines.append(indent + line)
    text = "\n".join(lines) + draw(st.sampled_from(["", "\n", "\n\n"]))
    return text.replace("\n", "\r\n") if draw(st.booleans()) else text


@settings(
    max_examples=examples(300),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(programs())
def test_generated_programs_format_safely(text: str) -> None:
    assume(parse(text).ok)
    assert_safe(text)


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(expressions)
def test_generated_assertions_get_the_fewest_parentheses(text: str) -> None:
    """Every pair of parentheses the formatter writes is needed: without it the assertion
    means something else (or does not parse)."""
    assume(parse(text).ok)
    once = assert_safe(text)
    program = parse(once).program
    from evaldsl.format.formatter import scan_comments

    masked = scan_comments(once)[1]  # strings, regexes and paths masked: parentheses are groups
    stack: list[int] = []
    for i, ch in enumerate(masked):
        if ch == "(":
            stack.append(i)
        elif ch == ")":
            start = stack.pop()
            without = once[:start] + " " + once[start + 1 : i] + " " + once[i + 1 :]
            other = parse(without)
            assert not other.ok or other.program != program, (once, start)


# ---- the command -----------------------------------------------------------------------

MESSY_TEXT = "suite 'x'\ncase 'a'\ncassette 'x.jsonl'\ntool  a called\n"
CLEAN_TEXT = 'suite "x"\n\ncase "a"\n  cassette "x.jsonl"\n  tool a called\n'


def run_fmt(paths: list[str], *, check: bool = False, diff: bool = False) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = fmt_command(paths, check=check, diff=diff, out=out, err=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "suites" / "nested").mkdir(parents=True)
    (tmp_path / "suites" / ".hidden").mkdir()
    (tmp_path / "suites" / "messy.eval").write_text(MESSY_TEXT, encoding="utf-8")
    (tmp_path / "suites" / "nested" / "clean.eval").write_text(CLEAN_TEXT, encoding="utf-8")
    (tmp_path / "suites" / ".hidden" / "skipped.eval").write_text(MESSY_TEXT, encoding="utf-8")
    (tmp_path / "suites" / "notes.txt").write_text(MESSY_TEXT, encoding="utf-8")
    return tmp_path / "suites"


def test_check_reports_without_writing(tree: Path) -> None:
    code, out, err = run_fmt([str(tree)], check=True)
    assert (code, err) == (1, "")
    assert out == f"would reformat {tree / 'messy.eval'}\n"
    assert (tree / "messy.eval").read_text(encoding="utf-8") == MESSY_TEXT


def test_a_folder_without_eval_files_is_said_not_passed_in_silence(tree: Path) -> None:
    # (a folder named by mistake printed nothing, as if every suite in it were formatted)
    (tree / "empty").mkdir()
    (tree / "empty" / "suite.yaml").write_text("cases: []\n", encoding="utf-8")
    for check in (False, True):
        code, out, err = run_fmt([str(tree / "empty")], check=check)
        assert (code, out) == (0, "")
        assert err == f"evaldsl fmt: no .eval files in {tree / 'empty'}: nothing to format\n"


def test_check_passes_on_canonical_files(tree: Path) -> None:
    assert run_fmt([str(tree / "nested")], check=True) == (0, "", "")
    assert run_fmt([str(p) for p in CANONICAL], check=True) == (0, "", "")


def test_diff_prints_a_unified_diff_without_writing(tree: Path) -> None:
    code, out, _ = run_fmt([str(tree)], diff=True)
    assert code == 1
    path = tree / "messy.eval"
    assert out.startswith(f"--- {path}\n+++ {path}\n@@ ")
    assert "-suite 'x'\n" in out and '+suite "x"\n' in out
    assert "+  tool a called\n" in out
    assert path.read_text(encoding="utf-8") == MESSY_TEXT
    # the diff applies: patching the old text with it gives the formatted text
    patched = _apply(MESSY_TEXT, out)
    assert patched == format_text(MESSY_TEXT)


def _apply(text: str, diff: str) -> str:
    """Apply a one-file unified diff (enough to check ours)."""
    old = text.split("\n")
    new: list[str] = []
    at = 0
    for line in diff.split("\n")[2:]:
        if line.startswith("@@"):
            start = int(re.match(r"@@ -(\d+)", line).group(1)) - 1  # type: ignore[union-attr]
            new += old[at:start]
            at = start
        elif line.startswith(" "):
            new.append(line[1:])
            at += 1
        elif line.startswith("-"):
            at += 1
        elif line.startswith("+"):
            new.append(line[1:])
    new += old[at:]
    return "\n".join(new)


def test_check_and_diff_together(tree: Path) -> None:
    code, out, err = run_fmt([str(tree)], check=True, diff=True)
    assert code == 1
    assert out.startswith(f"--- {tree / 'messy.eval'}\n") and "would reformat" not in out
    assert err == f"would reformat {tree / 'messy.eval'}\n"


def test_in_place_rewrites_atomically_and_keeps_the_mode(tree: Path) -> None:
    path = tree / "messy.eval"
    os.chmod(path, 0o640)
    code, out, err = run_fmt([str(tree)])
    assert (code, err) == (0, "")
    assert out == f"reformatted {path}\n"
    assert path.read_text(encoding="utf-8") == format_text(MESSY_TEXT)
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    assert (tree / ".hidden" / "skipped.eval").read_text(encoding="utf-8") == MESSY_TEXT
    assert (tree / "notes.txt").read_text(encoding="utf-8") == MESSY_TEXT
    assert sorted(p.name for p in tree.iterdir()) == [
        ".hidden",
        "messy.eval",
        "nested",
        "notes.txt",
    ]
    # a second run has nothing to do
    assert run_fmt([str(tree)]) == (0, "", "")
    assert run_fmt([str(tree)], check=True) == (0, "", "")


def test_a_file_named_explicitly_is_formatted_whatever_its_name(tree: Path) -> None:
    code, out, _ = run_fmt([str(tree / "notes.txt")])
    assert code == 0 and out == f"reformatted {tree / 'notes.txt'}\n"


def test_crlf_files_keep_their_line_ending(tmp_path: Path) -> None:
    """A file whose first line ends with CRLF is canonical with CRLF (a Windows checkout
    passes `fmt --check`), and is rewritten with CRLF throughout, stray LFs included."""
    path = tmp_path / "crlf.eval"
    path.write_bytes(CLEAN_TEXT.replace("\n", "\r\n").encode())
    assert run_fmt([str(path)], check=True) == (0, "", "")
    messy = MESSY_TEXT.replace("\n", "\r\n", 2)  # (the last lines end with LF alone)
    path.write_bytes(messy.encode())
    assert run_fmt([str(path)])[0] == 0
    assert path.read_bytes() == CLEAN_TEXT.replace("\n", "\r\n").encode()
    assert format_text(messy) == format_text(MESSY_TEXT).replace("\n", "\r\n")
    # the first line decides: an LF file with a stray CRLF comes out LF
    assert format_text(MESSY_TEXT.replace("\n", "\r\n").replace("\r\n", "\n", 1)) == CLEAN_TEXT


def test_syntax_errors_are_reported_and_the_file_left_alone(tree: Path) -> None:
    bad = tree / "bad.eval"
    bad.write_text('case "a"\n  tool a caled once\n', encoding="utf-8")
    code, out, err = run_fmt([str(tree)])
    assert code == 1
    assert f"{bad}:2:10: error[E101]:" in err
    assert "did you mean `called`?" in err and "^^^^^" in err
    assert f"not formatted (syntax errors): {bad}" in err
    assert bad.read_text(encoding="utf-8") == 'case "a"\n  tool a caled once\n'
    assert out == f"reformatted {tree / 'messy.eval'}\n"  # the others are still formatted


def test_a_yaml_suite_named_explicitly_is_said_to_be_one_and_left_alone(tree: Path) -> None:
    suite = tree / "suite.yaml"
    suite.write_text("suite: s\ncases:\n  - name: a\n    expect: [tool a called]\n", "utf-8")
    code, out, err = run_fmt([str(suite), str(tree / "messy.eval")])
    assert code == 1
    # said as what it is, not as the syntax error of `.eval` text at its first `key:`
    assert f"not formatted: {suite} is a YAML or JSON suite" in err
    assert f"`evaldsl convert {suite}`" in err and "error[E101]" not in err
    assert suite.read_text(encoding="utf-8").startswith("suite: s\n")
    assert out == f"reformatted {tree / 'messy.eval'}\n"  # the others are still formatted


def test_unreadable_files_are_reported(tmp_path: Path) -> None:
    path = tmp_path / "latin1.eval"
    path.write_bytes(b'suite "l"\nanswer contains "caf\xe9"\n')
    code, _, err = run_fmt([str(path)])
    # in `check`'s words, where the byte is: never Python's codec
    assert code == 1 and "codec" not in err
    assert f"{path}:2:21: error[E504]: suite file is not UTF-8 text: byte 0xe9 is not UTF-8" in err
    assert f"not formatted: {path}" in err


def test_missing_paths_exit_2_and_nothing_is_written(tree: Path) -> None:
    code, out, err = run_fmt([str(tree), str(tree / "nope.eval")])
    assert (code, out) == (2, "")
    assert err == f"evaldsl: error: no such file or folder: {tree / 'nope.eval'}\n"
    assert (tree / "messy.eval").read_text(encoding="utf-8") == MESSY_TEXT


def test_a_comment_inside_an_item_kept_on_one_line_goes_before_it() -> None:
    # an object with a bare `case` key is kept on one line (see `literal`), so its own
    # comment is placed by the list around it: on the line before the item it was in;
    # the others stay after theirs, among many items (found by halving, not a scan)
    items = [f'    "a{n}",  # note {n}\n' for n in range(300)]
    text = (
        'case "c"\n  cassette "x.jsonl"\n  tool search args $.q in [\n'
        + "".join(items[:150])
        + '    "b", {case: 1,  # about case\n     x: 2},\n'
        + "".join(items[150:])
        + "  ]\n"
    )
    out = assert_safe(text)
    # (not after "b", which ends on its line: the comment was inside the next item)
    assert '    "b",\n    # about case\n    {case: 1, x: 2},\n' in out
    assert "".join(items[:150]) in out and "".join(items[150:]) in out
