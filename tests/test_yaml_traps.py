"""YAML traps and strict JSON: a suite that YAML (or JSON) reads otherwise than meant, or
cannot read, gets one diagnostic at its place saying what the reader did and how to fix
it, never PyYAML's words nor a contradicting warning."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaldsl.language.diagnostics import Diagnostic
from evaldsl.suites.yaml12 import compose, construct
from evaldsl.suites.yamlfile import yaml_draft
from tests.clitools import run_evaldsl

CASE = "suite: s\ncases:\n  - name: c\n    cassette: c.jsonl\n"


def found(name: str, text: str) -> list[Diagnostic]:
    draft = yaml_draft(text, name)
    return [*draft.diagnostics, *(d for c in draft.cases for d in c.diagnostics)]


@pytest.mark.parametrize(
    ("name", "text", "line", "column", "message", "hint"),
    [
        (  # `: ` in an unquoted list item: a mapping
            "s.yaml",
            CASE + '    expect:\n      - answer contains "Xiamen: sunny"\n',
            6,
            32,
            'YAML read this item as a mapping (`answer contains "Xiamen` → `sunny"`)',
            "quote the item: 'answer contains \"Xiamen: sunny\"'",
        ),
        (  # the same among `assertions:`, beside an object
            "s.yaml",
            CASE + "    assertions:\n      - answer contains 'a: b'\n",
            6,
            27,
            "YAML read this item as a mapping",
            "quote the item",
        ),
        (  # ` #` ends an unquoted value: the regex looks unterminated
            "s.yaml",
            CASE + "    expect: answer matches /sunny #1/\n",
            5,
            35,
            "YAML ends an unquoted value at ` #`",
            "quote the expression: 'answer matches /sunny #1/'",
        ),
        (  # a colon too many after a predicate (object-form habits): quoting the item
            # as its values read (`answer contains: x`) would not parse either
            "s.yaml",
            CASE.replace("name: c", "name: 厦门 😀")
            + '    expect:\n      - answer contains: "x"\n',
            6,
            24,
            "YAML read this item as a mapping (`answer contains` → `x`)",
            'remove the `:` after `answer contains`: answer contains "x"',
        ),
        (  # the item quoted as written, its value's own quotes kept
            "s.yaml",
            CASE + "    expect:\n      - answer matches /a/ and answer contains: x\n",
            6,
            47,
            "YAML read this item as a mapping",
            "quote the item: 'answer matches /a/ and answer contains: x'",
        ),
        (
            "s.yaml",
            CASE + "    expect:\n\t- tool get_weather called\n",
            6,
            1,
            "YAML does not allow tabs for indentation",
            "indent with spaces",
        ),
        (
            "s.yaml",
            "suite: a\ncases: []\n---\nsuite: b\ncases: []\n",
            3,
            1,
            "a suite file holds one YAML document",
            "remove the `---` line",
        ),
        (  # a field indented deeper than the one above it
            "s.yaml",
            CASE + "    assertions:\n      - kind: tool.called\n          name: get_weather\n",
            7,
            11,
            "this line is indented deeper than the line above it",
            "indent it as `kind:` above it (8 spaces)",
        ),
        (  # a `: ` in the value of an item's first key, `cases:` above it: that value is to
            # quote (it was said to be indented too deep, with a hint that broke the file)
            "s.yaml",
            "suite: s\ncases:\n  - name: timeout (note: slow)\n    cassette: c.jsonl\n",
            3,
            24,
            "YAML reads `: ` as the start of a mapping, which cannot begin here",
            "quote the value that holds `: `",
        ),
        (
            "s.yaml",
            CASE + "    expect: [tools == [a]]\n",
            5,
            23,
            "YAML reads the `[` at line 5, column 13 as a list",
            "quote the value if the bracket is text (expect: '…')",
        ),
        (
            "s.yaml",
            CASE + "    expect: [tool get_weather called\n",
            6,
            1,
            "the `[` at line 5, column 13 is never closed",
            "close it with `]`",
        ),
        (  # a regex's `\d` in double quotes
            "s.yaml",
            CASE + '    expect: "answer matches /\\d+/"\n',
            5,
            30,
            "`\\d` is not an escape in a double-quoted YAML string",
            "write `\\\\d`, or quote with single quotes",
        ),
        (
            "s.yaml",
            CASE + "    expect: *x called\n",
            5,
            13,
            "YAML reads `*x` as an alias, and no anchor `&x` is defined",
            "quote the value if the `*` is text: '*x called'",
        ),
        (
            "s.json",
            '{"suite": "j", "cases": []} x',
            1,
            29,
            "invalid JSON: text after the end of the JSON document",
            "remove what follows it",
        ),
        (
            "s.json",
            '{\n  // a comment\n  "suite": "j", "cases": []\n}\n',
            2,
            3,
            "invalid JSON: JSON has no comments",
            "write the suite as YAML",
        ),
        (
            "s.json",
            "{\n  'suite': 'j', \"cases\": []\n}\n",
            2,
            3,
            "invalid JSON: a JSON string is written in double quotes",
            "write \"…\" for '…'",
        ),
        (
            "s.json",
            '{\n  "suite": "j",\n  "cases": [],\n}\n',
            3,
            14,
            "invalid JSON: JSON allows no comma after the last item",
            "remove the comma",
        ),
        (  # Python's json takes these; JSON.parse does not ("NaN" in a string is text)
            "s.json",
            '{"suite": "NaN", "cases": [],\n "x": [1, -Infinity, NaN]}\n',
            2,
            11,
            "invalid JSON: `-Infinity` is not a JSON number",
            "write null, or a number",
        ),
        (  # PyYAML's words were said at 1:1 (its `position`: libyaml's counts bytes)
            "s.yaml",
            "suite: été\ncases:\n  - name: a\x01b\n    cassette: c.jsonl\n",
            3,
            12,
            "a raw U+0001 (a control character): the YAML reader refuses control characters",
            'write it as an escape in a double-quoted string: "\\u0001"',
        ),
        (  # JSON takes a raw C1 control character in a string; the YAML reader does not
            "s.json",
            '{"suite": "é\x80", "cases": []}',
            1,
            13,
            "a raw U+0080",
            '"\\u0080"',
        ),
        (  # an editor's buffer (the language server) may hold half a character: libyaml
            # raised UnicodeEncodeError, a traceback in the server's log and no diagnostics
            "s.yaml",
            "suite: s\ncases: []\n# \ud800\n",
            3,
            3,
            "a lone UTF-16 surrogate U+D800",
            "remove it",
        ),
        (
            "s.json",
            '{"suite": "a\ud800", "cases": []}',
            1,
            13,
            "a lone UTF-16 surrogate U+D800",
            "remove it",
        ),
    ],
)
def test_a_trap_is_said_in_the_users_words_at_its_place(
    name: str, text: str, line: int, column: int, message: str, hint: str
) -> None:
    [diag] = found(name, text)
    assert (diag.line, diag.column, diag.severity) == (line, column, "error")
    assert message in diag.message and hint in (diag.hint or ""), diag


def test_a_comment_after_a_valid_expression_is_a_comment() -> None:
    assert found("s.yaml", CASE + "    expect: answer matches /sunny/  # the forecast\n") == []


def test_strict_json_still_reads_a_json_suite_with_positions() -> None:
    text = '{"suite": "j", "cases": [{"name": "c", "cassette": "c.jsonl",\n "expect": "x"}]}'
    [diag] = found("s.json", text)
    assert (diag.line, diag.column, diag.code) == (2, 13, "E101")


# The line shown under a diagnostic is the line its place counts: `str.splitlines` also
# ends a line at \x0c and U+0085, and showed the line after it (or a cut one).
@pytest.mark.parametrize(
    ("name", "text", "line", "shown"),
    [
        (  # a form feed in a comment: the reader refuses it, at its own line
            "s.yaml",
            "suite: s\n# a\x85b\ntools: [t]\n#\x0c\ncases: []\n",
            4,
            "#\x0c",
        ),
        ("s.yaml", "suite: s\n# note\x0c here\ncases: []\n", 2, "# note\x0c here"),
        (  # JSON counts \n; a lone \r is an editor's line break
            "s.json",
            '{"suite": "s\x85",\r"cases": [],}\n',
            2,
            '"cases": [],}',
        ),
    ],
)
def test_the_line_shown_is_the_line_of_the_place(
    name: str, text: str, line: int, shown: str
) -> None:
    (d, *_) = found(name, text)
    assert (d.code, d.line) == ("E504", line)
    assert d.source_line == shown


@pytest.mark.parametrize("separator", ["\x85", "\u2028", "\u2029"])
def test_a_yaml_1_1_line_break_is_a_character_as_yaml_1_2_reads_it(separator: str) -> None:
    """PyYAML (YAML 1.1) ends a line at a raw U+0085, U+2028 or U+2029; YAML 1.2 (the npm
    `yaml` traceplay reads suites with), JSON and editors do not. A comment holding one
    was cut there and its rest read as YAML (an error: "could not find expected ':'"), a
    plain value lost it, and every place after it was a line lower than the editor's."""
    text = (
        f"suite: s  # a{separator}b: c\n"
        f"cases:\n"
        f'  - name: "x{separator}y"\n'
        f"    cassette: c.jsonl\n"
        f'    expect: answer contains "a{separator}b"\n'
        f"    casette: c.jsonl\n"
    )
    draft = yaml_draft(text, "s.yaml")
    (case,) = draft.cases
    assert case.name == f"x{separator}y"
    assert case.snippets[0].source.text == f'answer contains "a{separator}b"'
    (d,) = found("s.yaml", text)
    assert (d.code, d.line, d.column) == ("E508", 6, 5)
    assert d.source_line == "    casette: c.jsonl"


def test_a_stand_in_is_no_character_a_scalar_can_hold() -> None:
    """A YAML 1.1 line break is read through a Private Use character the text holds
    neither written nor as an escape: `\\ue000` in a value stays U+E000."""
    text = 'a: "\\ue000\u2028\\uE001\\U0000e002"\nb: \ue003\u2029\n'
    assert construct(compose(text)) == {"a": "\ue000\u2028\ue001\ue002", "b": "\ue003\u2029"}


def test_a_form_feed_before_a_faulty_line_shows_that_line(tmp_path: Path) -> None:
    """A raw form feed in a `.eval` comment: the file's lines are counted at \\n, and the
    line a syntax error is on decides whether its case also "has no source" (E503)."""
    evalfile = tmp_path / "s.eval"
    evalfile.write_text(
        'suite "s"\n# a form\x0cfeed\ncase "c"\n  cassette "c.jsonl" ((\n  steps < 3\n',
        encoding="utf-8",
    )
    result = run_evaldsl("check", str(evalfile))
    # the syntax error of the source line is the one error: no "case has no source" too
    assert "E101" in result.stdout and "E503" not in result.stdout, result.stdout
    assert "4 |   cassette" in result.stdout


def test_hex_digits_in_a_text_take_no_stand_in() -> None:
    """Only an escape makes a character: a text of hex digits (hashes, a hex dump) holding
    every e000-f8ff once left no stand-in, and reading it was a StopIteration traceback."""
    hexes = " ".join(f"{c:04x}" for c in range(0xE000, 0xF900))
    text = f"a: x\u2028y\nb: {hexes}\n"
    assert construct(compose(text))["a"] == "x\u2028y"


def test_a_text_holding_every_stand_in_is_refused_at_its_line_break() -> None:
    every = "".join(chr(c) for c in range(0xE000, 0xF900))
    (d,) = found("s.yaml", f"suite: s\n# {every}\ncases: []\nb: 'x\u2029'\n")
    assert (d.code, d.line, d.column) == ("E504", 4, 6)
    assert "this U+2029 cannot be read as a character" in d.message


@pytest.mark.parametrize(("separator", "said"), [("\u2028", "'\\u2028'"), ("\x85", "'\\x85'")])
def test_an_error_quotes_the_character_the_file_holds(separator: str, said: str) -> None:
    """A surrogate escape sends the text to PyYAML's Python scanner, which quotes the
    character it found: the stand-in a YAML 1.1 line break is read through (`'\\ue000'`,
    which the file does not hold) was said."""
    text = f'suite: s\ncases:\n  - name: "\\ud83d"\n    cassette: &a{separator}b c.jsonl\n'
    (d,) = found("s.yaml", text)
    assert (d.code, d.line, d.column) == ("E504", 4, 17)
    assert d.message.endswith(f"but found {said}"), d.message


def test_an_unknown_escape_after_a_surrogate_escape_is_at_its_backslash() -> None:
    """A surrogate escape sends the text to PyYAML's Python scanner, whose mark of an
    unknown escape is the character after the backslash (libyaml's is the backslash): the
    place was a column late, and the escape shown `q"`."""
    (d,) = found("s.yaml", 'suite: s\ncases:\n  - name: "\\ud83d\\\\\\q"\n')
    assert (d.code, d.line, d.column) == ("E504", 3, 20)
    assert d.message == "`\\q` is not an escape in a double-quoted YAML string"
