"""Known mistakes (`evaldsl/syntax/mistakes.py`): said where they are, with the fix.

The corpus is the golden file `tests/golden/mistakes.eval` (its `.expected` pins each
message, place and hint); these tests cover what a golden `.eval` file cannot: line
endings and tabs, a YAML suite's embedded text, the cascade a broken header line made,
and that every hint's statement parses.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from evaldsl.api import diagnose
from evaldsl.suites.build import check_text
from evaldsl.syntax.mistakes import parses, slip
from evaldsl.syntax.parser import parse

HERE = Path(__file__).parent
CORPUS = (HERE / "golden" / "mistakes.eval").read_text(encoding="utf-8")


def test_every_hint_of_the_corpus_parses() -> None:
    result = parse(CORPUS, "mistakes.eval")
    hints = [d.hint for d in result.diagnostics if d.hint and d.hint.startswith("write `")]
    assert len(hints) >= 60
    for hint in hints:
        assert parses(hint[len("write `") : -1], "file"), hint


def test_one_error_per_mistake() -> None:
    result = parse(CORPUS, "mistakes.eval")
    lines = [d.line for d in result.diagnostics]
    assert len(lines) == len(set(lines))


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
@pytest.mark.parametrize("indent", ["  ", "\t"])
def test_line_endings_and_tabs(newline: str, indent: str) -> None:
    text = newline.join(['case "x"', f"{indent}run a.b:c", f"{indent}tokens < 2,000", ""])
    (d,) = parse(text, "t.eval").diagnostics
    assert (d.line, d.column, d.end_column) == (3, len(indent) + 10, len(indent) + 15)
    assert d.hint == "write `tokens < 2000`"


def test_a_yaml_suite_reports_the_mistake_at_its_place_in_the_yaml(tmp_path: Path) -> None:
    suite = tmp_path / "s.yaml"
    suite.write_text(
        "suite: s\ncases:\n  - name: one\n    run: a.b:c\n    expect:\n"
        "      - tool search called 2x\n      - latency < 5 sec\n",
        encoding="utf-8",
    )
    evaldsl = Path(sys.executable).with_name("evaldsl")
    done = subprocess.run(
        [str(evaldsl), "check", "--format", "json", str(suite)],
        capture_output=True,
        text=True,
        check=False,
    )
    found = [
        (d["line"], d["column"], d["message"], d["hint"])
        for d in json.loads(done.stdout)
        if d["code"] == "E101"
    ]
    assert found == [
        (6, 28, "a count is written `twice`", "write `tool search called twice`"),
        (
            7,
            19,
            "a duration is written `5s`: the number and `ms`, `s`, `m` or `h`",
            "write `latency < 5s`",
        ),
    ]


def test_a_broken_case_line_keeps_its_case() -> None:
    # `case weather` is one error: the lines after it still belong to a case (no
    # "`cassette` belongs to a case"), and a source line with a colon is still its source
    text = 'case weather\n  cassette "x.jsonl"\n  answer contains "x"\n'
    *_, diagnostics = diagnose(text, "t.eval")
    assert [(d.line, d.code) for d in diagnostics if d.code != "E501"] == [(1, "E101")]
    text = 'case "x"\n  cassette: "x.jsonl"\n  answer contains "x"\n'
    *_, diagnostics = diagnose(text, "t.eval")
    assert [(d.line, d.code) for d in diagnostics if d.code != "E501"] == [(2, "E101")]


def test_a_case_whose_assertions_did_not_parse_is_not_said_to_have_none() -> None:
    # "has no assertions: it always passes" (W504) beside the line that did not parse
    # told the user the wrong thing; a case with no assertion lines still hears it
    text = 'case "a"\n  cassette "x.jsonl"\n  tool search caled\ncase "b"\n  cassette "x.jsonl"\n'
    *_, diagnostics = diagnose(text, "t.eval")
    assert [(d.line, d.code) for d in diagnostics if d.code != "E501"] == [
        (3, "E101"),
        (4, "W504"),
    ]


def test_a_typo_is_said_as_one_when_its_fix_is_all_it_needs() -> None:
    (d,) = parse("answer json $.a is strng", "t.eval").diagnostics
    assert d.hint == "did you mean `string`?"


def test_no_fix_that_does_not_parse() -> None:
    # `and` followed by a keyword is not a second value
    assert slip('answer contains "x" and not', 26, "file") is not None
    found = slip('answer contains "x" and not', 26, "file")
    assert found is not None and found.corrected == 'answer contains "x"'
    assert slip("tool search frobnicates", 12, "file") is None


@pytest.mark.parametrize(
    ("text", "hint"),
    [
        ("answer~/x/", "write `answer matches /x/`"),
        ("answer=~/x/i", "write `answer matches /x/i`"),
        # (a `~` after a path is no `matches`: `$.citymatches exists` is another path)
        ("tool t args $.city~ exists", None),
    ],
)
def test_an_operator_written_as_a_word_gets_blanks_around_it(text: str, hint: str | None) -> None:
    (d,) = parse(text, "t.eval").diagnostics
    assert d.hint == hint, d.message


@pytest.mark.parametrize(
    ("text", "hint"),
    [
        ("tools = search", "write `tools == [search]`"),
        ('nodes = "a b"', 'write `nodes == ["a b"]`'),
        ("tools = [search]", "write `tools == [search]`"),
        ("tokens = 5", "write `tokens == 5`"),
    ],
)
def test_a_list_compared_with_one_name_gets_a_list_in_its_hint(text: str, hint: str) -> None:
    # `tools == search` compares a list with a name (E205): the hint led to a second error
    (d,) = parse(text, "t.eval").diagnostics
    assert d.hint == hint, d.message
    fixed = hint.removeprefix("write `").removesuffix("`")
    assert not [e for e in check_text(f'case "c"\n  trace "x.json"\n  {fixed}\n', "t.eval")
                if e.code == "E205"]  # fmt: skip


def test_a_fix_keeps_the_spaces_inside_strings() -> None:
    # the corrected statement's runs of spaces are made one, but not inside a string:
    # `case "a  b":` is the case "a  b", and the hint (and the editor's fix) says so
    text = 'case "a  b":\n  run a.b:c\n  answer contains "two  spaces"  and tool x called 2x\n'
    _, _, shape, diagnostics = diagnose(text, "t.eval")
    hints = [d.hint for d in diagnostics if d.code == "E101"]
    assert hints == [
        'write `case "a  b"`',
        'write `answer contains "two  spaces" and tool x called twice`',
    ]
    assert [case.name for case in shape.cases] == ["a  b"]


def test_every_corrected_statement_is_a_fix_in_place() -> None:
    # the diagnostic carries its hint as an edit (an editor's quick fix): the statement
    # as written, but its indent and comment, replaced by the statement of the hint
    result = parse(CORPUS, "mistakes.eval")
    lines = CORPUS.split("\n")
    fixed = [d for d in result.diagnostics if d.hint and d.hint.startswith("write `")]
    assert len(fixed) >= 60
    for d in fixed:
        fix = d.fix
        assert fix is not None and fix.line == fix.end_line == d.line, d
        line = lines[d.line - 1]
        edited = line[: fix.column - 1] + fix.text + line[fix.end_column - 1 :]
        assert edited.strip() == d.hint[len("write `") : -1], d


@pytest.mark.parametrize(
    ("written", "word"),
    [("or", "or"), ("||", "or"), ("and", "and"), ("&&", "and"), ("and not", "and not")],
)
def test_an_operator_at_a_lines_end_is_joined_to_the_next_line_never_deleted(
    written: str, word: str
) -> None:
    """A preferred fix that deleted a dangling `or` made two assertions that must both
    hold: another verdict. A statement ends at its line's end: the fix joins the lines."""
    text = (
        f'case "a"\n  run a.b:c\n  answer contains "rain" {written}  \n    answer contains "sun"\n'
    )
    (d,) = parse(text, "t.eval").diagnostics
    assert (d.code, d.line, d.column) == ("E101", 3, 26)
    assert (
        d.message == f"`{written}` needs an assertion after it: a statement ends at its line's end"
    )
    joined = f'answer contains "rain" {word} answer contains "sun"'
    assert d.hint == f"join the lines: `{joined}`"
    fix = d.fix
    assert fix is not None and (fix.line, fix.end_line) == (3, 4)
    lines = text.split("\n")
    edited = lines[2][: fix.column - 1] + fix.text + lines[3][fix.end_column - 1 :]
    assert edited == f"  {joined}" and parses(edited, "file")


@pytest.mark.parametrize(
    "after", ["", "\n", '\n\n  answer contains "sun"\n', "\n  # sun\n", "\n  steps <"]
)
def test_an_operator_at_a_lines_end_with_nothing_to_join_gets_no_fix(after: str) -> None:
    d = parse(f'answer contains "rain" or{after}', "t.eval").diagnostics[0]
    assert d.message.startswith("`or` needs an assertion after it: a statement ends at its")
    assert (d.hint, d.fix) == ("write the assertion after `or` on the same line", None)


@pytest.mark.parametrize("blanks", ["  ", "\t", " \t "])
def test_an_operator_spelt_apart_by_any_blanks_is_said_never_a_traceback(blanks: str) -> None:
    """Found by the token-soup property test: `= =` with two spaces between matched the
    rule's pattern but not its table, and `compile('tool all ==  == ')` raised KeyError."""
    (d,) = parse(f"tokens <{blanks}= 5", "t.eval").diagnostics
    assert d.message == f"`<{blanks}=` is written `<=`" and d.hint == "write `tokens <= 5`"
    (d,) = parse(f"tool all =={blanks}== ", "t.eval").diagnostics
    assert d.code == "E101"


@pytest.mark.parametrize(
    "verb",
    [
        f"{is_}{equal}{to}"
        for is_ in ("", "is ", "IS  ")
        for equal in ("equal", "equals")
        for to in ("", " to")
    ],
)
def test_every_spelling_of_equal_the_verb_rule_finds_is_in_its_table(verb: str) -> None:
    """The verb rule's pattern takes `is`, `equal(s)` and `to` in any of their
    combinations; `answer is equal 5` matched it and was missing from its table, so
    `evaldsl check` raised a KeyError (found by the parser's property test, `ISequal 0`)."""
    (d,) = parse(f"answer {verb} 5", "t.eval").diagnostics
    assert d.hint == "write `answer == 5`", (verb, d.message, d.hint)


@pytest.mark.parametrize(
    ("words", "operator"),
    [
        (f"{is_}{than} than{or_equal}", op)
        for is_ in ("", "is ")
        for than, op, op_equal in (
            ("less", "<", "<="),
            ("fewer", "<", "<="),
            ("more", ">", ">="),
            ("greater", ">", ">="),
        )
        for or_equal, op in (("", op), (" or equal to", op_equal))
    ],
)
def test_every_comparison_in_words_the_rule_finds_is_in_its_table(
    words: str, operator: str
) -> None:
    """`tokens fewer than or equal to 5` matched the rule's pattern and was missing from
    its table (`more than or equal to` too): `evaldsl check` raised a KeyError. And after
    `is`, the verb rule made `tokens is less than 5` into `tokens == "less than 5"`."""
    (d,) = parse(f"tokens {words} 5", "t.eval").diagnostics
    assert d.hint == f"write `tokens {operator} 5`", (words, d.message, d.hint)


@pytest.mark.parametrize(
    ("words", "operator"),
    [
        ("under", "<"),
        ("below", "<"),
        ("over", ">"),
        ("above", ">"),
        ("at most", "<="),
        ("at least", ">="),
        ("no more than", "<="),
        ("no less than", ">="),
    ],
)
def test_a_comparison_in_words_after_is_gets_its_operator(words: str, operator: str) -> None:
    """`tokens is under 5` is `tokens < 5`; the verb rule took its `is` for `==` and
    made it `tokens == "under 5"`, a hint whose fix compares a count with a text."""
    (d,) = parse(f"tokens is {words} 5", "t.eval").diagnostics
    assert d.hint == f"write `tokens {operator} 5`", (words, d.message, d.hint)


@pytest.mark.parametrize(
    ("text", "hint"),
    [
        ("answer isnt empty", "write `answer not empty`"),
        ('answer isnt "x"', None),
        ("tool x cant be called", None),
        ('answer contant "x"', "did you mean `contains`?"),  # a typo that ends in "nt"
    ],
)
def test_a_verb_run_into_not_is_never_fixed_into_its_opposite(text: str, hint: str | None) -> None:
    """`isnt empty` got "did you mean `is`?", whose edit (an editor's quick fix) made it
    `is empty`: the opposite. A verb and `not` run together get the known mistake's fix,
    or no did-you-mean at all."""
    (d,) = parse(text, "t.eval").diagnostics
    assert d.hint == hint
    assert (d.fix is None) == (hint is None)  # (the editor's fix is the hint's edit)


@pytest.mark.parametrize(
    ("line", "word", "column"),
    [
        ("tool café called", "café", 9),
        ("tool 天气 called", "天气", 6),
        ("no tool naïve_x", "naïve_x", 11),
    ],
)
def test_a_bare_name_that_is_not_ascii_is_said_with_its_quoting(
    line: str, word: str, column: int
) -> None:
    *_, diagnostics = diagnose(line)
    (d,) = diagnostics
    assert (d.code, d.column) == ("E103", column)
    assert d.hint == f'a bare name is ASCII letters, digits and `_`: quote this one: "{word}"'
    assert d.fix is not None and d.fix.text == f'"{word}"'
    quoted = line.replace(word, f'"{word}"')
    assert diagnose(quoted)[-1] == []


@pytest.mark.parametrize(
    ("written", "corrected"),
    [
        (
            'answer judged "ok" by "gpt-4o-mini" >= 0.5',
            'answer judged "ok" >= 0.5 by "gpt-4o-mini"',
        ),
        ("answer judged 'is polite' by 'm' > 0.75", "answer judged 'is polite' > 0.75 by 'm'"),
    ],
)
def test_a_judges_threshold_after_its_model_is_moved_before_it(
    written: str, corrected: str
) -> None:
    """The grammar takes one order (docs/language.md §4); the other is said, with the fix."""
    (d,) = parse(f'case "c"\n  run a.b:c\n  {written}\n', "t.eval").diagnostics
    assert d.message.startswith("a judge's threshold comes before its model")
    assert d.hint == f"write `{corrected}`" and parses(corrected, "file")
    assert (d.line, d.column) == (3, 3 + written.index(">"))


BIG = "9" * 5000  # past `int`'s 4,300 digits, and a float's range
HUGE = "9" * 400  # past a float's range: infinity


@pytest.mark.parametrize(
    "statement",
    [
        f"tool search called {BIG}x",
        f"tool search called >= {BIG}",
        f"tool search called at least {BIG}",
        f"tool search called {BIG} times or more",
        f"tokens < {HUGE}k",
        f"tokens < {HUGE} million",
        f'answer judged "kind" >= {HUGE}%',
    ],
)
def test_a_number_past_the_languages_range_in_a_mistake_is_said_never_a_traceback(
    statement: str,
) -> None:
    """A known mistake's number was converted as it was written: a count of 5,000
    digits raised ValueError (`int`'s digit limit) and `1e400k` or `1e400%` OverflowError
    (infinity has no `int`), a traceback from `evaldsl check`. A rule that computes with
    such a number gives no hint (its fix would be out of range); the statement is still
    said at its place."""
    found = parse(statement, "t.eval").diagnostics
    assert found and all(d.is_error and d.column > len("tokens") for d in found), found


@pytest.mark.parametrize("word", ["ſix", "ſeven", "\u212aone"])
def test_a_count_in_words_is_read_in_ascii_only(word: str) -> None:
    """Case-blind matching took `ſix` (long s) for `six` and then looked up `ſix` in
    the table of number words: a KeyError from `evaldsl check`."""
    (d,) = parse(f"tool search called {word} times", "t.eval").diagnostics
    assert d.code == "E103" and d.column == len("tool search called ") + 1, d


def test_a_huge_count_is_said_by_the_check_command(tmp_path: Path) -> None:
    suite = tmp_path / "big.eval"
    suite.write_text(f'case "a"\n  state "s.json"\n  tool search called {BIG}x\n')
    done = subprocess.run(
        [Path(sys.executable).with_name("evaldsl"), "check", str(suite)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    assert "big.eval:3:22: error" in done.stdout + done.stderr


@pytest.mark.parametrize(
    ("written", "corrected"),
    [
        ("tool search calls 2", "tool search called 2 times"),
        ("tool search calls once", "tool search called once"),
        ("tool search calls twice", "tool search called twice"),
        ("tool search calls 3 times", "tool search called 3 times"),
        ("tool search call 2", "tool search called 2 times"),
        ("tool search caled 2", "tool search called 2 times"),
        ("tool search calld 2x", "tool search called twice"),
    ],
)
def test_a_verbs_fix_that_leaves_a_count_to_fix_fixes_the_count_too(
    written: str, corrected: str
) -> None:
    """`tool search calls 2` got the did-you-mean `called` as its hint and quick fix:
    `called 2`, itself an error (a count ends with `times`), and `caled 2` the same. The
    hint and the editor's fix are the statement with both mistakes fixed, and the
    statement they give parses and checks with no error."""
    text = f'case "c"\n  run a.b:c\n  {written}\n'
    _, _, _, found = diagnose(text, "t.eval")
    (d,) = found
    assert d.hint == f"write `{corrected}`", d
    assert d.fix is not None and (d.fix.line, d.fix.column) == (3, 3), d.fix
    line = text.split("\n")[2]
    fixed = line[: d.fix.column - 1] + d.fix.text + line[d.fix.end_column - 1 :]
    assert diagnose(f'case "c"\n  run a.b:c\n{fixed}\n', "t.eval")[3] == []
