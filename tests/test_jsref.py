"""evaldsl against the JavaScript that traceplay and cycgraph run, in node.

`tests/jsref/reference.mjs` answers, one JSON line at a time, what `new RegExp(p).test(t)`
gives (traceplay and cycgraph compile regexes so: JavaScript syntax, no flags) and what the
npm `yaml` package's `parse` gives (traceplay's suite loader; pinned in
tests/jsref/package-lock.json and installed with `npm ci` on the first run, from the npm
registry). Hypothesis generates the patterns, texts and YAML scalars:

- every pattern JavaScript rejects, evaldsl rejects (E401); every pattern it accepts,
  evaldsl translates to an RE2 regex that finds the same texts, or refuses by design
  (E402: backreferences, lookaround, counts over 1000, a quantifier on half an emoji);
- every plain scalar reads as the same value (null, boolean, number, ±Infinity, NaN, text),
  a repeated key is an error in both, and traceplay's example suites read the same.

Texts stay inside the BMP and `\\B` is compared on ASCII texts only: the two differences
the README lists ("Coming from traceplay, cycgraph and verydia"). Without node and npm the
tests skip, except under CI (`CI` set), where that is a failure.
"""

from __future__ import annotations

import json
import math
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from nodetools import node_and_npm, npm_ci

from evaldsl.language.regexes import RegexProblem, compile_regex
from evaldsl.suites import yaml12
from evaldsl.suites.jsregex import translate
from tests.fuzzing import lenient

ROOT = Path(__file__).resolve().parents[1]
JSREF = ROOT / "tests" / "jsref"
FIXTURES = ROOT / "tests" / "fixtures" / "traceplay"

Ask = Callable[[dict[str, Any]], dict[str, Any]]


@pytest.fixture(scope="module")
def ask() -> Iterator[Ask]:
    node, npm = node_and_npm()
    npm_ci(JSREF, ["yaml"], npm)
    proc = subprocess.Popen(
        [node, str(JSREF / "reference.mjs")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        encoding="utf-8",
    )
    assert proc.stdin is not None and proc.stdout is not None
    stdin, stdout = proc.stdin, proc.stdout

    def one(request: dict[str, Any]) -> dict[str, Any]:
        stdin.write(json.dumps(request) + "\n")
        stdin.flush()
        line = stdout.readline()
        assert line, f"reference.mjs stopped (exit {proc.poll()})"
        return dict(json.loads(line))

    try:
        yield one
    finally:
        stdin.close()
        proc.wait(timeout=30)


SETTINGS = lenient(400)

# ---- regexes ------------------------------------------------------------------------------

TOKENS = [
    "a", "b", "ab", "é", "東", "0", "9", "_", "-", ":", " ", "/", ".", "^", "$", "|",
    "*", "+", "?", "*?", "{2}", "{1,3}", "{,2}", "{2,}", "{3,1}", "{0}", "{1001}", "{", "}",
    "(", ")", "(?:", "(?<n>", "(?<é>", "(?=", "(?!", "(?<=", "(?<!", "(?i)", "(?",
    "[", "]", "[^", "a-z", "[:alpha:]", "\\", "\\\\", "\\d", "\\D", "\\w", "\\W", "\\s", "\\S",
    "\\b", "\\B", "\\1", "\\2", "\\12", "\\0", "\\08", "\\012", "\\377", "\\400", "\\8",
    "\\x41", "\\x4", "\\u0041", "\\u00a0", "\\u004", "\\u{2}", "\\uD83D\\uDE00", "\\uD83D",
    "\\c", "\\cJ", "\\cz", "\\c1", "\\c_", "\\k", "\\k<n>", "\\k<m>", "\\p{L}", "\\P", "\\/",
    "\\-", "\\.", "\\a", "\\e", "\\z", "\\v", "\\t", "\\n", "\\r", "\\f", "\\[", "\\]",
    "[\\b]", "\r", "\n", "\v", "\u2028", "\u00a0", "\ufeff", "\u1680", "\t", "#", "😀",
]  # fmt: skip
TEXTS = [
    "", "a", "ab", "b", "aab", "A", "p{L}", "p", "uu", "u{2}", "\n", "\r", "a\rb", "a\u2028b",
    "\u00a0", " ", "\v", "\ufeff", "x\u1680y", "\x01", "\x00", "\x08", "é", "東", "0", "9",
    "_", "-", "/", "\\", "[", "]", "{", "}", "{2}", "a{2}", "abc123", "k", "k<n>", "c", "\\c",
    "\\c1", "a-b", ":", "z", "8", "\x1a", "\n\n", "a\nb", "A\n",
]  # fmt: skip


@SETTINGS
@given(pattern=st.lists(st.sampled_from(TOKENS), max_size=8).map("".join))
@example(pattern="(?<=)*")  # a repeated lookbehind is JavaScript's syntax error (E401)
@example(pattern="(?=a)*")  # a repeated lookahead is not (Annex B): unsupported (E402)
def test_regexes_find_what_javascript_finds(ask: Ask, pattern: str) -> None:
    js = ask({"regex": pattern, "texts": TEXTS})
    translated = translate(pattern)
    if js["error"] is not None:
        assert isinstance(translated, RegexProblem) and translated.code == "E401", (
            pattern,
            js["error"],
            translated,
        )
        return
    if isinstance(translated, RegexProblem):
        assert translated.code == "E402", (pattern, translated)
        return
    compiled = compile_regex(translated)
    assert not isinstance(compiled, RegexProblem), (pattern, translated, compiled)
    found = [compiled.search(t) is not None for t in TEXTS]
    expected = js["found"]
    if "\\B" in pattern:  # RE2's \B also stops inside a multi-byte character (README)
        found = [f if t.isascii() else e for t, f, e in zip(TEXTS, found, expected, strict=True)]
    assert found == expected, (
        pattern,
        translated,
        [t for t, f, e in zip(TEXTS, found, expected, strict=True) if f != e],
    )


def test_refusals_by_design_are_valid_javascript(ask: Ask) -> None:
    for pattern in ["(a)\\1", "(?=a)", "(?<!a)b", "a{1001}", "😀+", "(?<n>a)\\k<n>"]:
        assert ask({"regex": pattern, "texts": []})["error"] is None
        problem = translate(pattern)
        assert isinstance(problem, RegexProblem) and problem.code == "E402", pattern


# ---- YAML ---------------------------------------------------------------------------------

SCALAR_PARTS = [
    *"0123456789.eE+-_xXob:oOn ~",
    "on", "yes", "no", "off", "y", "true", "True", "TRUE", "tRue", "null", "Null", "NULL",
    "inf", "Inf", "INF", "nan", "NaN", "NAN", "0x", "0o", "2024-01-01", "12:30:00", "=", "<<",
]  # fmt: skip


def from_js(value: Any) -> Any:
    if isinstance(value, dict):
        if set(value) == {"number"}:
            return float(value["number"].replace("Infinity", "inf"))
        return {k: from_js(v) for k, v in value.items()}
    if isinstance(value, list):
        return [from_js(v) for v in value]
    return value


def same(ours: Any, theirs: Any) -> bool:
    if isinstance(ours, float) and math.isnan(ours):
        return isinstance(theirs, float) and math.isnan(theirs)
    if isinstance(ours, bool) or isinstance(theirs, bool):
        return ours is theirs
    if isinstance(ours, (int, float)) and isinstance(theirs, (int, float)):
        return float(ours) == float(theirs)  # JavaScript numbers are doubles
    if isinstance(ours, dict) and isinstance(theirs, dict):
        return ours.keys() == theirs.keys() and all(same(ours[k], theirs[k]) for k in ours)
    if isinstance(ours, list) and isinstance(theirs, list):
        return len(ours) == len(theirs) and all(
            same(a, b) for a, b in zip(ours, theirs, strict=True)
        )
    return type(ours) is type(theirs) and ours == theirs


def ours(text: str) -> tuple[str | None, Any]:
    try:
        root = yaml12.compose(text)
    except Exception as err:  # a YAML syntax error, as the suite loader reports it
        return str(err), None
    problems = yaml12.problems(root)
    return (problems[0].message if problems else None), yaml12.construct(root)


def _plain(scalar: str) -> bool:
    """A scalar that stays one plain scalar wherever it is written (this test is about the
    schema, how scalars resolve, not about YAML's syntax)."""
    return scalar.strip() == scalar and ": " not in scalar and not scalar.endswith(":")


@SETTINGS
@given(
    scalar=st.lists(st.sampled_from(SCALAR_PARTS), min_size=1, max_size=5)
    .map("".join)
    .filter(_plain)
)
def test_plain_scalars_read_as_traceplay_reads_them(ask: Ask, scalar: str) -> None:
    text = f"v: {scalar}\n{scalar}: key\n"
    js = ask({"yaml": text})
    error, value = ours(text)
    if js["error"] is not None or error is not None:
        # both refuse (a syntax error, or the value and the key reading the same), or neither
        assert js["error"] is not None and error is not None, (text, js["error"], error)
        return
    assert same(value, from_js(js["value"])), (text, value, js["value"])


def test_repeated_keys_are_errors_in_both(ask: Ask) -> None:
    for text in ["a: 1\na: 2\n", "{1: x, 1.0: y}\n", "{0x1: x, 1: y}", "{'a': 1, \"a\": 2}"]:
        assert ask({"yaml": text})["error"] is not None, text
        assert ours(text)[0] is not None, text
    # different values that JavaScript makes the same property name: the last one counts
    for text in ["a: 1\nb: 2\n", "{~: x, '': y}\n", "{true: x, 'true': y}", "{1: x, '1': y}"]:
        js = ask({"yaml": text})
        assert js["error"] is None and ours(text) == (None, from_js(js["value"])), text


@pytest.mark.parametrize("suite", sorted(FIXTURES.glob("*/suite.*.yaml")), ids=lambda p: p.name)
def test_traceplay_example_suites_read_the_same(ask: Ask, suite: Path) -> None:
    text = suite.read_text(encoding="utf-8")
    js = ask({"yaml": text})
    error, value = ours(text)
    assert js["error"] is None and error is None
    assert same(value, from_js(js["value"]))
