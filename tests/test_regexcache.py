"""The regex cache (`evaldsl/cache/regexes.py`): a pattern compiled at one start is loaded
at the next, and what is loaded is `re.compile`'s pattern (the engine's own equality
compares the pattern, the flags and every word of the code); a damaged entry, a bad
pattern and a `DEBUG` pattern go to `re.compile`. Each start is a fresh process with a
cache folder of its own."""

from __future__ import annotations

import json
import marshal
import random
import re
from pathlib import Path

import pytest

from evaldsl.cache.regexes import regex
from tests.clitools import code_cache_file, fresh_python, last_json


def patterns(seed: int = 7, count: int = 150) -> list[tuple[str, int]]:
    """Varied patterns and flags: literals, classes, escapes, groups (named too),
    alternation, repetition (lazy and possessive), anchors, look-arounds, inline flags."""
    rng = random.Random(seed)
    atoms = [
        "a", "xyz", r"\d", r"\w", r"\s", "[a-f0-9]", "[^\"\\\\\n]", ".", r"\.", "é", "\u2028",
        r"\b", "(?:ab|cd)", "(?P<n{i}>q+)", "(a)", "(?=z)", "(?!y)", "(?<=k)", "(?i:Mixed)",
    ]  # fmt: skip
    repeats = ["", "*", "+", "?", "{2}", "{1,3}", "*?", "++", "*+"]
    found: list[tuple[str, int]] = []
    for i in range(count):
        parts = []
        for j in range(rng.randrange(1, 6)):
            atom = rng.choice(atoms).replace("{i}", f"{i}_{j}")
            can_repeat = atom != r"\b" and not atom.startswith(("(?=", "(?!", "(?<="))
            parts.append(atom + (rng.choice(repeats) if can_repeat else ""))
        body = "|".join(parts) if rng.random() < 0.3 else "".join(parts)
        if rng.random() < 0.2:
            body = f"^{body}$"
        flags = rng.choice([0, re.I, re.M, re.S, re.X, re.I | re.M, re.A])
        found.append((body, flags))
    # the parser's own: a whole lexer state's pattern
    found.append((r"[ \t]*+(?:(?P<NAME>[A-Za-z_]\w*)|(?P<INT>-?\d+)|(?P<_NL>\r?\n))", 0))
    return found


SAMPLES = ["", "a", "xyzab", "Mixed 12 q", "k z", "é\u2028.", "AB cd 7", "qqq\nz", "_x1 42\n"]

#: A start: compile every pattern of the JSON list on stdin through the cache, and say
#: how many it compiled and whether each is `re.compile`'s and matches as it does.
START = r"""
import json, re, sys
from evaldsl.cache import compiled
from evaldsl.cache.regexes import regex
import evaldsl.language.ast  # (makes evaldsl's classes: the cache file is written)
todo = json.loads(sys.stdin.read())
before = compiled.compiled_this_process()
same = []
for pattern, flags in todo["patterns"]:
    mine, theirs = regex(pattern, flags), re.compile(pattern, flags)
    alike = mine == theirs and mine.groupindex == theirs.groupindex
    alike = alike and mine.groups == theirs.groups and mine.flags == theirs.flags
    for text in todo["samples"]:
        a, b = mine.search(text), theirs.search(text)
        alike = alike and (a and (a.span(), a.groups())) == (b and (b.span(), b.groups()))
    same.append(alike)
print(json.dumps({"compiled": compiled.compiled_this_process() - before, "same": same}))
"""


def start(cache: Path, todo: list[tuple[str, int]]) -> dict[str, object]:
    stdin = json.dumps({"patterns": todo, "samples": SAMPLES})
    return last_json(fresh_python(START, cache, stdin=stdin))


def cache_entries(cache: Path) -> tuple[Path, tuple[object, ...]]:
    path = code_cache_file(cache)
    body = marshal.loads(path.read_bytes())
    assert isinstance(body, tuple)
    return path, body


def test_a_pattern_compiled_once_is_loaded_as_re_compiles_it(tmp_path: Path) -> None:
    todo = patterns()
    first = start(tmp_path, todo)
    assert first["compiled"] == len(set(todo)) and all(first["same"])  # type: ignore[arg-type]
    second = start(tmp_path, todo)
    assert second == {"compiled": 0, "same": [True] * len(todo)}


def test_a_damaged_entry_is_compiled_again(tmp_path: Path) -> None:
    todo = patterns(seed=11, count=20)
    start(tmp_path, todo)
    path, (fmt, version, entries) = cache_entries(tmp_path)
    assert isinstance(entries, dict)
    damaged = 0
    for key, entry in entries.items():
        if key.startswith("re\0"):
            flags, words, *rest = entry
            # one word changed: still valid code for the engine, but not this pattern's
            # (a literal's character), so only the CRC can tell
            changed = bytearray(words)
            changed[-8] ^= 1
            entries[key] = (flags, bytes(changed), *rest)
            damaged += 1
    assert damaged == len(set(todo))
    path.write_bytes(marshal.dumps((fmt, version, entries)))
    again = start(tmp_path, todo)
    assert again == {"compiled": damaged, "same": [True] * len(todo)}


def test_bad_and_debug_patterns_are_left_to_re() -> None:
    with pytest.raises(re.error) as mine:
        regex("(unclosed")
    with pytest.raises(re.error) as theirs:
        re.compile("(unclosed")
    assert str(mine.value) == str(theirs.value)
    assert regex("a+b", re.I) == re.compile("a+b", re.I)


def test_a_debug_pattern_prints_its_code_as_re_does(capsys: pytest.CaptureFixture[str]) -> None:
    regex("ab|c", re.DEBUG)
    mine = capsys.readouterr().out
    re.compile("ab|c", re.DEBUG)  # (`re` keeps no DEBUG pattern: it compiles it again)
    assert mine == capsys.readouterr().out and "LITERAL" in mine


#: A start: compile, through the cache, the patterns the modules of a `run` compile as
#: they load (bytes and text, flags as `re` spells them) and say how many it compiled and
#: whether each is `re.compile`'s.
FLAGGED = r"""
import json, re
from evaldsl.cache import compiled
from evaldsl.cache.regexes import regex
import evaldsl.language.ast  # (makes evaldsl's classes: the cache file is written)
todo = [
    (rb"\\(?:u([0-9a-fA-F]{4})|.)", re.DOTALL),
    (r"\\(?:u([0-9a-fA-F]{4})|.)", re.DOTALL),
    (rb"^(?:cases|\"cases\")[ \t]*:", re.MULTILINE),
    (r"^(?:cases|\"cases\")[ \t]*:", re.MULTILINE),
    (rb"(?i)suite", 0),
    (r"a+b", re.I | re.S),
    (r"a+b", int(re.I | re.S)),
]
before = compiled.compiled_this_process()
same = []
for pattern, flags in todo:
    mine, theirs = regex(pattern, flags), re.compile(pattern, flags)
    alike = mine == theirs and type(mine.pattern) is type(theirs.pattern)
    alike = alike and mine.flags == theirs.flags and mine.groups == theirs.groups
    sample = b'"cases":\n\\u00e9x' if isinstance(pattern, bytes) else '"cases":\n\\u00e9x'
    a, b = mine.search(sample), theirs.search(sample)
    same.append(alike and (a and (a.span(), a.groups())) == (b and (b.span(), b.groups())))
print(json.dumps({"compiled": compiled.compiled_this_process() - before, "same": same}))
"""


def test_bytes_patterns_and_re_flags_are_kept_too(tmp_path: Path) -> None:
    # a bytes pattern and its text twin are two entries; `re.I | re.S` and the number it
    # is are one
    first = last_json(fresh_python(FLAGGED, tmp_path))
    assert first == {"compiled": 6, "same": [True] * 7}
    second = last_json(fresh_python(FLAGGED, tmp_path))
    assert second == {"compiled": 0, "same": [True] * 7}


#: A start: import what a `run` imports, noting each pattern `re` compiles for one of
#: evaldsl's own modules (the caller's file).
COMPILED_BY_RE = r"""
import json, sys
from re import _compiler
compile_pattern = _compiler.compile
PASSED = ("re/__init__.py", "re/_compiler.py", "evaldsl/cache/regexes.py")
ours = []
def noted(pattern, flags=0):
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.replace("\\", "/").endswith(PASSED):
        frame = frame.f_back
    where = "" if frame is None else frame.f_code.co_filename.replace("\\", "/")
    # (but the cache's own: `compiled.py`'s pattern is used before the cache is read)
    if "/evaldsl/" in where and not where.endswith("evaldsl/cache/compiled.py"):
        ours.append(f"{where}:{frame.f_lineno}")
    return compile_pattern(pattern, flags)
_compiler.compile = noted
from evaldsl.tools import cli
from evaldsl.runner import core, parallel
from evaldsl.reports import console
from evaldsl.suites import build
import evaldsl.runs.events, evaldsl.judge.config, evaldsl.tools.outputs
print(json.dumps({"ours": ours}))
"""


def test_the_modules_of_a_run_compile_no_pattern_at_a_later_start(tmp_path: Path) -> None:
    # their module-level patterns come from the cache file (`regex`), as the lexer's do
    fresh_python(COMPILED_BY_RE, tmp_path)  # (the first start fills the cache file)
    assert last_json(fresh_python(COMPILED_BY_RE, tmp_path)) == {"ours": []}
