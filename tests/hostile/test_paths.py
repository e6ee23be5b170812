"""No regex outside RE2: a JSONPath filter's `=~ "pattern"` is matched by RE2 (jsonpath-ng
would use Python's backtracking `re`, which `(a+)+$` hangs); a pattern RE2 cannot run,
and `sub()`, are check-time errors."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import evaldsl
from evaldsl.language.paths import CompiledPath, PathProblem, compile_path
from tests.clitools import ROOT
from tests.hostile.test_limits import codes

CALL = {
    "type": "tool.call",
    "name": "t",
    "arguments": {"items": [{"name": "a" * 40 + "!", "id": 1}, {"name": "Paris", "id": 2}]},
}


def test_a_catastrophic_filter_pattern_finishes() -> None:
    """With Python's `re` this takes 2**40 steps; RE2 takes one pass. Run in a process
    of its own so that a regression fails on the timeout instead of hanging the suite."""
    program = textwrap.dedent(f"""
        import evaldsl
        result = evaldsl.compile(
            'tool t args $.items[?(@.name =~ "^(a+)+$")].id == 1; '
            'tool t args $.items[?(@.name =~ "(x+x+)+y")].id == 1'
        ).check([{CALL!r}])
        print(result.statuses)
    """)
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=60, cwd=ROOT
    )
    assert done.stdout.strip() == "['fail', 'fail']", done.stderr


@pytest.mark.parametrize(
    ("pattern", "status"),
    [("^Par", "pass"), ("ari", "pass"), ("^aris", "fail"), ("(?i)paris", "pass"), ("x|P", "pass")],
)
def test_filters_search_with_re2(pattern: str, status: str) -> None:
    text = f'tool t args $.items[?(@.name =~ "{pattern}")].id == 2'
    assert evaldsl.compile(text).check([CALL]).statuses == [status]


def test_filters_without_a_regex_still_work() -> None:
    text = 'tool t args $.items[?(@.id > 1)].name contains "Par"; tool t args $..id == 2'
    assert evaldsl.compile(text).check([CALL]).statuses == ["pass", "pass"]


@pytest.mark.parametrize(
    ("path", "words"),
    [
        ('$.items[?(@.name =~ "(a)\\\\1")]', "backreferences"),
        ('$.items[?(@.name =~ "(?=a)")]', "lookaheads"),
        ('$.items[?(@.name =~ "(")]', "invalid regex"),
        ("$.items.`sub(/(a+)+$/, b)`", "sub()"),
        ("$.items[?(@.name =~ 5)]", "quoted pattern"),
        ("$" + "[?(@" * 300 + "]" * 300, "nested more than 200"),
    ],
)
def test_what_re2_cannot_run_is_a_check_error(path: str, words: str) -> None:
    found = compile_path(path)
    assert isinstance(found, PathProblem) and words in found.message, found
    # through the language: E404 (its own path syntax cannot even write `sub()` or such
    # nesting: then a syntax error)
    assert {"E404", "E103", "E101"} & set(codes(f"tool t args {path} == 1"))


def test_nested_filters_are_all_replaced() -> None:
    found = compile_path('$.a[?(@.b[?(@.c =~ "x")] && @.d =~ "y" || @.e =~ "z")]')
    assert isinstance(found, CompiledPath)
    shown = repr(found).split("_ng=", 1)[1]  # the parsed tree, after the text
    assert shown.count(" =~ ") == 3 == shown.count("Re2Expression(")


def test_a_four_megabyte_quoted_key_parses_in_proportion() -> None:
    # traced memory, not the process's peak: a child's ru_maxrss starts at its parent's
    done = subprocess.run(
        [sys.executable, "-c", (
            "import tracemalloc; from evaldsl.language.paths import compile_path;"
            "key = \"$['\" + 'a' * 4_000_000 + \"']\"; tracemalloc.start();"
            "compile_path(key); print(tracemalloc.get_traced_memory()[1])"
        )],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )  # fmt: skip
    assert int(done.stdout) < 10 * 4_000_000  # a backtracking record per character: 470 MB


@pytest.mark.parametrize("key", ["\\q", "\\1", "\\x41", "\\u12"])
def test_an_escape_json_has_not_in_a_single_quoted_key_is_read_as_a_double_quoted_one(
    tmp_path: Path, key: str
) -> None:
    """`$['\\q']` (an escape JSON has not) raised JSONDecodeError out of `evaldsl check`
    (the quick reader of single-quoted keys let it through; of double-quoted ones, not):
    both now leave such a key to jsonpath-ng, which reads it the same either way."""
    single, double = compile_path(f"$['{key}']"), compile_path(f'$["{key}"]')
    assert isinstance(single, CompiledPath) and isinstance(double, CompiledPath)
    value = {"q": 1, "1": 2, "x41": 3, "\\q": 4}
    assert single.find(value) == double.find(value)
    suite = tmp_path / "s.eval"
    suite.write_text(f"answer json $['{key}'] == 1\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "evaldsl.tools.cli", "check", str(suite)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert "Traceback" not in done.stderr, done.stderr[-600:]
    assert "s.eval:1:1: error[E503]" in done.stdout  # (nothing to check it against)
