"""`regexes.make_pattern` (google-re2's pattern class made directly, with one shared set of
options) gives what `re2.compile` with the same options gives: the same class, pattern
and groups, the same matches, and the same errors for patterns RE2 refuses."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import re2
from hypothesis import given, settings
from hypothesis import strategies as st

from evaldsl.language.regexes import compile_regex, make_pattern
from tests.clitools import run_evaldsl
from tests.fuzzing import examples

PIECES = [
    "a", "b", "ab", ".", "\\d", "\\w", "\\s", "\\b", "^", "$", "*", "+", "?", "{2}", "{1,3}",
    "(", ")", "(?:", "[", "]", "[a-z]", "|", "\\", "\\1", "(?=", "(?<=", "(?i)", "(?s)",
    "é", "日", "\\p{L}", " ", "-",
]  # fmt: skip
TEXTS = ["", "a", "ab", "abab", "A B", "12 ab", "éa\n日b", "b\na"]


def reference(text: str) -> Any:
    options = re2.Options()
    options.log_errors = False
    return re2.compile(text, options)


def outcome(make: Any, text: str) -> object:
    try:
        pattern = make(text)
    except re2.error as err:
        return ("error", type(err), err.args)
    found = [(m.span(), m.groups()) if m else None for m in (pattern.search(t) for t in TEXTS)]
    return (type(pattern), pattern.pattern, pattern.groups, found)


@settings(max_examples=examples(400), deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=8).map("".join))
def test_made_as_re2_compile_makes_it(text: str) -> None:
    assert outcome(make_pattern, text) == outcome(reference, text)


def test_compile_regex_gives_the_made_pattern() -> None:
    compiled = compile_regex(r"\d+ C", "i")
    assert compiled.search("it is 31 c") is not None
    assert type(compiled) is type(reference("x"))


def test_the_punctuation_an_escape_keeps_is_strings() -> None:
    # (spelled out in `regexlits` so that a start does not import `string`)
    import string

    from evaldsl.language.regexlits import PUNCTUATION

    assert frozenset(string.punctuation) == PUNCTUATION


def test_a_lone_surrogate_in_a_pattern_is_an_invalid_regex_not_a_crash(tmp_path: Path) -> None:
    """RE2 reads UTF-8, and its pattern class raised UnicodeEncodeError on a lone
    surrogate: `evaldsl run` of `answer matches /{{p}}/` with an `each` row
    `{p: "\\ud800"}` died with a traceback and wrote no report. (A suite's `"\\ud800"`
    is now U+FFFD, as recordings read it: the row's pattern is that character, and only
    a pattern given through the API holds a lone half.)"""
    found = compile_regex("a\ud800")
    assert not hasattr(found, "search") and "U+D800" in found.message, found
    cassette = Path(__file__).parent / "fixtures/traceplay/demo/cassette.example.jsonl"
    suite = tmp_path / "s.eval"
    suite.write_text(
        f'case "row {{{{p}}}}"\n  cassette "{cassette}"\n'
        '  each [{p: "\\ud800"}, {p: "sunny"}]\n  answer matches /{{p}}/\n',
        encoding="utf-8",
    )
    done = run_evaldsl("run", "--no-history", "--json", str(tmp_path / "r.json"), str(suite))
    assert "Traceback" not in done.stderr, done.stderr[-600:]
    assert done.returncode == 1
    assert "E401" not in done.stdout and "row \ufffd #1 [p=\ufffd]" in done.stdout
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert report["summary"]["cases"] == 2 and report["summary"]["passed"] == 1


@pytest.mark.parametrize(
    ("pattern", "escape", "rewritten", "char"),
    [
        ("caf\\u00e9", "\\u00e9", "\\x{00e9}", "café"),
        ("[\\u00E9]", "\\u00E9", "\\x{00E9}", "é"),
        ("\\U0001F600", "\\U0001F600", "\\x{0001F600}", "😀"),
        ("\\u{1F600}", "\\u{1F600}", "\\x{1F600}", "😀"),
        ("\\ud83d\\ude00", "\\ud83d\\ude00", "\\x{1F600}", "😀"),
        ("\\\\\\u00e9", "\\u00e9", "\\x{00e9}", "\\é"),
    ],
)
def test_a_code_point_escape_gets_re2s_spelling_as_its_hint(
    pattern: str, escape: str, rewritten: str, char: str
) -> None:
    """`answer matches /\\u00e9/` said "invalid escape sequence: \\u" with no hint: RE2
    writes a code point `\\x{e9}`. The hint names the rewritten escape, which compiles
    to the same character."""
    found = compile_regex(pattern)
    assert not hasattr(found, "search"), pattern
    assert (
        found.code == "E401"
        and found.message == "invalid regex: invalid escape sequence: \\" + escape[1]
    )
    assert (
        found.hint == f"RE2 writes a code point as `\\x{{…}}`: write `{rewritten}` for `{escape}`"
    )
    fixed = compile_regex(pattern.replace(escape, rewritten))
    assert fixed.search(char) is not None and fixed.search("e") is None


@pytest.mark.parametrize("pattern", ["\\uzz", "\\ud800", "\\U00110000", "\\q"])
def test_an_escape_with_no_code_point_gets_no_rewrite(pattern: str) -> None:
    found = compile_regex(pattern)
    assert not hasattr(found, "search") and found.hint is None, found


def test_the_code_point_hint_is_said_by_the_check_command(tmp_path: Path) -> None:
    suite = tmp_path / "s.eval"
    suite.write_text('case "a"\n  run a.b:c\n  answer matches /caf\\u00e9/\n', encoding="utf-8")
    done = run_evaldsl("check", str(suite))
    assert "s.eval:3:18: error[E401]: invalid regex: invalid escape sequence: \\u" in done.stdout
    assert "hint: RE2 writes a code point as `\\x{…}`: write `\\x{00e9}` for `\\u00e9`" in (
        done.stdout
    )


@pytest.mark.parametrize(
    ("pattern", "code", "words"),
    [
        # a `\x` escape of no code point ends in a digit as RE2 quotes it: it was said to be
        # a backreference
        ("\\x{110000}", "E401", "`\\x{110000}` is no code point"),
        ("\\x{FFFFFFFFF}", "E401", "`\\x{FFFFFFFFF}` is no code point"),
        ("a\\x{1", "E401", "`\\x{1` is no code point"),
        ("a\\x1", "E401", "`\\x1` is no code point"),
        # backreferences to a named group, in the dialects people copy them from: RE2 said
        # "invalid perl operator: (?P" or "invalid escape sequence: \k"
        ("(?P<n>a)(?P=n)", "E402", "backreferences are not supported"),
        ("(?<n>a)\\k<n>", "E402", "backreferences are not supported"),
        ("(a)\\g1", "E402", "backreferences are not supported"),
        ("(a)\\1", "E402", "backreferences are not supported"),
        # recursion (PCRE's subroutine calls)
        ("(a(?R)?b)", "E402", "recursion (a group calling a group) is not supported"),
        ("(a(?1)?b)", "E402", "recursion (a group calling a group) is not supported"),
        ("(?P<n>a(?P>n)?b)", "E402", "recursion (a group calling a group) is not supported"),
    ],
)
def test_a_refused_regex_is_said_as_what_it_is(pattern: str, code: str, words: str) -> None:
    found = compile_regex(pattern)
    assert not hasattr(found, "search"), pattern
    assert (found.code, found.message.startswith(words) or words in found.message) == (code, True)


def test_an_escape_of_no_code_point_is_said_by_the_check_command(tmp_path: Path) -> None:
    """`/\\x{110000}/` was E402 "backreferences are not supported": RE2 quotes it as
    `\\x{110000`, which ends in a digit."""
    suite = tmp_path / "s.eval"
    suite.write_text('case "a"\n  run a.b:c\n  answer matches /x\\x{110000}/\n', encoding="utf-8")
    done = run_evaldsl("check", str(suite))
    assert "s.eval:3:18: error[E401]: invalid regex: `\\x{110000}` is no code point" in (
        done.stdout
    )
    assert "hint: a code point is written `\\x{…}` of at most 10FFFF" in done.stdout
