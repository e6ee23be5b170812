"""Values of traceplay's and cycgraph's objects → evaldsl literal text that means the same.

Takes the values an assertion object holds (text, numbers as JavaScript has them, JSON
values, traceplay JSONPaths) and gives evaldsl text that parses back to exactly them:
- `string_literal`: a double-quoted string; quotes, backslashes and every character that is
  not printable (line breaks, U+2028, controls) escaped, so the text stays on one line;
- `number_literal`: `1e999` and `-1e999` for ±Infinity (they parse back to it), the
  shortest round-tripping digits otherwise; NaN has no literal and is refused;
- `value_literal`: JSON values made of those;
- `traceplay_path`: a JSONPath read as traceplay's tokenizer reads it (`.key`, `[N]`, `[*]`;
  anything else is skipped, as traceplay skips it) and written as an evaldsl path: `$.a b`
  is `$["a b"]`, `$.tags.1` stays `$.tags.1` (an index or a key, as in traceplay).

>>> traceplay_path("$.a b[0]")
('$["a b"][0]', [])
>>> traceplay_path("$['city']")
('$', ["['city']"])
>>> value_literal({"n": float("inf"), "s": "a\\u2028b"})
'{"n": 1e999, "s": "a\\\\u2028b"}'
"""

from __future__ import annotations

import math
import re
from typing import Any

from evaldsl.language.jsjson import js_trim
from evaldsl.language.limits import MAX_INTEGER

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_DIGITS = re.compile(r"[0-9]+\Z")
# traceplay's tokenizer (src/core/jsonpath.ts): every other character is skipped
_TOKEN = re.compile(r"\.[^.\[\]]+|\[[0-9]+\]|\[\*\]")
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_ESCAPES |= {"\b": "\\b", "\f": "\\f"}


def string_literal(text: str) -> str:
    """A DSL string literal for `text`, on one line.

    >>> string_literal('say "hi"\\n')
    '"say \\\\"hi\\\\"\\\\n"'
    """
    out = ['"']
    for ch in text:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ch == " " or (ch.isprintable() and not ch.isspace()):
            out.append(ch)
        elif ord(ch) > 0xFFFF:  # JSON escapes are UTF-16 units
            cp = ord(ch) - 0x10000
            out.append(f"\\u{0xD800 + (cp >> 10):04x}\\u{0xDC00 + (cp & 0x3FF):04x}")
        else:
            out.append(f"\\u{ord(ch):04x}")
    out.append('"')
    return "".join(out)


def number_literal(x: int | float) -> str:
    """A number as DSL text; raises `ValueError` for NaN (no literal stands for it).

    An integer past 64 bits is the number JavaScript reads it as, a double (evaldsl's
    integer literals stop at 64 bits):

    >>> number_literal(2**63), number_literal(10**400), number_literal(-7)
    ('9.223372036854776e+18', '1e999', '-7')
    """
    if isinstance(x, int):
        if -MAX_INTEGER <= x <= MAX_INTEGER:
            return str(x)
        try:
            x = float(x)
        except OverflowError:
            x = math.inf if x > 0 else -math.inf
    if math.isnan(x):
        raise ValueError("NaN has no evaldsl literal")
    if math.isinf(x):
        return "1e999" if x > 0 else "-1e999"
    return repr(x)


def value_literal(value: Any) -> str:
    """A JSON value as DSL text (objects with quoted keys, lists, strings, numbers,
    true/false/null); raises `ValueError` for NaN anywhere inside."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return string_literal(value)
    if isinstance(value, (int, float)):
        return number_literal(value)
    if isinstance(value, list):
        return "[" + ", ".join(value_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        pairs = (f"{string_literal(str(k))}: {value_literal(v)}" for k, v in value.items())
        return "{" + ", ".join(pairs) + "}"
    raise ValueError(f"not a JSON value: {value!r}")


def has_nan(value: Any) -> bool:
    """Whether a JSON value holds NaN somewhere (YAML's `.nan`)."""
    if isinstance(value, float):
        return math.isnan(value)
    if isinstance(value, list):
        return any(has_nan(v) for v in value)
    if isinstance(value, dict):
        return any(has_nan(v) for v in value.values())
    return False


def traceplay_path(text: str) -> tuple[str, list[str]]:
    """The evaldsl path for a traceplay JSONPath, and the parts traceplay skips.

    traceplay trims the path, drops a leading `$`, and keeps only `.key` (any characters but
    `.`, `[`, `]`), `[N]` and `[*]` steps: `$..city` is `$.city`, `city` is the root.
    """
    p = js_trim(text)
    if p.startswith("$"):
        p = p[1:]
    out = ["$"]
    dropped: list[str] = []
    pos = 0
    for m in _TOKEN.finditer(p):
        if m.start() > pos:
            dropped.append(p[pos : m.start()])
        pos = m.end()
        token = m.group()
        if token.startswith("."):
            key = token[1:]
            if _NAME.match(key) or _DIGITS.match(key):
                out.append(token)  # `.1` is an index or a key in evaldsl too
            else:
                out.append(f"[{string_literal(key)}]")
        elif token == "[*]":
            out.append(token)
        else:
            out.append(f"[{int(token[1:-1])}]")
    if pos < len(p):
        dropped.append(p[pos:])
    return "".join(out), dropped
