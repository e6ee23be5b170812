"""Literals: the values string, number and duration tokens stand for.

Takes the text of a literal as written (`"a\\nb"`, `'it\\'s'`, `250ms`, `42`, `1e3`) and
gives its value. Strings take JSON escapes (single-quoted ones also `\\'`); a pair of
surrogate escapes (`\\ud83d\\ude00`) is the character it makes, and a lone half U+FFFD.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import cast

from evaldsl.cache.regexes import regex
from evaldsl.language.jsjson import has_surrogate, joined_surrogates

_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
_SINGLE_ESCAPES = regex(r"\\'|\\.|\"")


def decode_string(raw: str) -> str:
    """The text a string literal stands for: `"a\\nb"` → a, newline, b; `'it\\'s'` → it's.

    >>> decode_string("'it\\\\'s'")
    "it's"
    """
    body = raw[1:-1]
    if "\\" not in body:
        return body
    if raw[0] == "'":
        # Turn the single-quoted body into a JSON string body, then let json decode it
        # (that handles \\uXXXX surrogate pairs exactly as JSON does).
        body = _SINGLE_ESCAPES.sub(
            lambda m: "'" if m.group() == "\\'" else ('\\"' if m.group() == '"' else m.group()),
            body,
        )
    # strict=False: a raw tab inside a string is text, as it is without escapes
    text = cast(str, json.loads('"' + body + '"', strict=False))
    # (json keeps a lone `\ud800`, which no UTF-8 report or RE2 pattern can hold, and no
    # recording has: those read it as U+FFFD, so the suite's strings do too)
    return joined_surrogates(text) if "\\u" in body and has_surrogate(text) else text


def parse_duration(text: str) -> float:
    """Seconds in a duration literal: `250ms` → 0.25, `1.5m` → 90.0."""
    number = text.rstrip("smh")
    unit = text[len(number) :]
    return float(number) * _UNITS[unit]


def duration_text(text: str) -> float | None:
    """Seconds in text written as a duration literal, or `None` when the grammar would not
    read it as one (`1e3s`, `1_000s`, `.5s`): for durations read outside the grammar, such
    as a YAML suite's `timeout:`, so they take what a `.eval` file takes.

    >>> duration_text("1.5m"), duration_text("1e3s")
    (90.0, None)
    """
    return parse_duration(text) if _duration_token().fullmatch(text) else None


@lru_cache(maxsize=1)
def _duration_token() -> re.Pattern[str]:
    """The grammar's DURATION token, read from the grammar itself (digits, an optional
    fraction, a unit; no exponent, no `_`, no inner space, each of which `float` takes)."""
    from evaldsl.syntax.grammar import cached_grammar

    found = re.search(r"^DURATION(?:\.\d+)?:\s*/(.+)/\s*$", cached_grammar(), re.M)
    assert found is not None, "the grammar defines DURATION"
    return re.compile(found.group(1))


def parse_number(text: str) -> int | float:
    """An integer when the literal is one, else a float: `42` → 42, `1e3` → 1000.0."""
    try:
        return int(text)
    except ValueError:
        return float(text)
