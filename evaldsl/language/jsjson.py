"""JavaScript's JSON text: what `JSON.stringify` and `String(number)` write.

Takes JSON values (and floats) and gives the text JavaScript writes for them (and text
as JavaScript's `trim()` leaves it), because the
tools evaldsl replaces compared and hashed that text (see docs/language.md, "Values"):
compact separators, non-ASCII kept, integral floats as integers (`1.0` → `1`), other
numbers in JavaScript's shortest form (`1e-7`, not `1e-07`), NaN and infinities as `null`,
and integer-like object keys first in ascending order, as JavaScript objects keep them.
"""

from __future__ import annotations

import json
import math
from typing import Any

_MAX_INDEX_KEY = 2**32 - 2  # JavaScript array indices: canonical integers 0 .. 2**32 - 2


class NotJsonValue(ValueError):
    """A value JSON has no word for (a `bytes`, a set, an object), met where a value is
    read as text for a test (`js_json(…, strict=True)`): only events given in memory hold
    one, and a test of its Python text would pass on what was never JSON data."""


def js_json(value: Any, strict: bool = False) -> str:
    """`JSON.stringify(value)` as JavaScript writes it; with `strict`, a value JSON has no
    word for is `NotJsonValue`, never its Python text (reports show it as that text).

    Written without recursion: a trace may hold JSON nested as deep as its decoder allows
    (1,024 levels), deeper than Python's own stack.

    >>> js_json({"b": [1.0, 0.5, 1e-7], "2": True, "1": None, "é": "x"})
    '{"1":null,"2":true,"b":[1,0.5,1e-7],"é":"x"}'
    """
    out: list[str] = []
    # Work items: a value to write, or a literal piece of text (punctuation, a key).
    stack: list[tuple[bool, Any]] = [(False, value)]
    while stack:
        is_text, item = stack.pop()
        if is_text:
            out.append(item)
        elif isinstance(item, dict):
            out.append("{")
            stack.append((True, "}"))
            items = _js_key_order(item)
            for i in range(len(items) - 1, -1, -1):
                key, child = items[i]
                stack.append((False, child))
                stack.append((True, ("," if i else "") + _js_string(key) + ":"))
        elif isinstance(item, list | tuple):
            out.append("[")
            stack.append((True, "]"))
            for i in range(len(item) - 1, -1, -1):
                stack.append((False, item[i]))
                if i:
                    stack.append((True, ","))
        else:
            out.append(_scalar(item, strict))
    return "".join(out)


def _scalar(value: Any, strict: bool = False) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return _js_string(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return js_number(value)
    # A value JSON has no word for (a date, a set, bytes) reaches here only from events
    # given in memory (a live target's output and a `Run`'s are JSON data by then):
    # shown as its text rather than failing every report that shows it, but never
    # tested as that text (`strict`: an answer's, a value's a regex or `contains` reads)
    if strict:
        shown = repr(value)
        shown = shown if len(shown) <= 40 else shown[:39] + "…"
        raise NotJsonValue(f"a {type(value).__name__} ({shown}), which is not JSON data")
    return _js_string(str(value))


def _js_key_order(value: dict[Any, Any]) -> list[tuple[str, Any]]:
    """Items in JavaScript's property order: integer-like keys ascending, then the rest."""
    items = [(k if isinstance(k, str) else str(k), v) for k, v in value.items()]
    indexed = [(k, v) for k, v in items if _is_index_key(k)]
    if not indexed:
        return items
    indexed.sort(key=lambda kv: int(kv[0]))
    return indexed + [(k, v) for k, v in items if not _is_index_key(k)]


def _is_index_key(key: str) -> bool:
    if not key.isdigit() or not key.isascii():
        return False
    return (key == "0" or not key.startswith("0")) and int(key) <= _MAX_INDEX_KEY


def _js_string(s: str) -> str:
    # The stdlib escapes exactly the characters JSON.stringify escapes, with the same
    # short forms (\n, \t, ...) and \u00XX for the other control characters.
    text = json.dumps(s, ensure_ascii=False)
    if has_surrogate(text):
        # JSON.stringify escapes lone surrogates (well-formed JSON.stringify, ES2019).
        text = "".join(f"\\u{ord(c):04x}" if "\ud800" <= c <= "\udfff" else c for c in text)
    return text


#: The characters JavaScript's `String.prototype.trim` removes (WhiteSpace and
#: LineTerminator): Python's `str.strip()` also removes U+001C-U+001F and U+0085, and keeps
#: U+FEFF, so "\ufeff" is empty to cycgraph's memory_not_empty and "\x1c" is not.
JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006"
    "\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
)


def js_trim(text: str) -> str:
    """`text.trim()` as JavaScript has it.

    >>> js_trim("\\ufeff x \\x1c"), js_trim("\\ufeff")
    ('x \\x1c', '')
    """
    return text.strip(JS_WHITESPACE)


def js_length(text: str) -> int:
    """`text.length` as JavaScript has it: UTF-16 code units, so a character past U+FFFF
    (an emoji) counts 2 and a lone surrogate 1.

    >>> js_length("ab"), js_length(chr(0x1F600) * 2), js_length(chr(0xD83D))
    (2, 4, 1)
    """
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) >> 1


def has_surrogate(text: str) -> bool:
    """Whether `text` holds a surrogate code point (which UTF-8 cannot carry): alone in
    JavaScript's text too, or one half of a pair that JavaScript reads as one character."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def surrogate_pair(high: int, low: int) -> int | None:
    """The code point a UTF-16 surrogate pair stands for, or None when `high` and `low`
    are no such pair.

    >>> hex(surrogate_pair(0xD83D, 0xDE00)), surrogate_pair(0xDE00, 0xD83D)
    ('0x1f600', None)
    """
    if 0xD800 <= high <= 0xDBFF and 0xDC00 <= low <= 0xDFFF:
        return 0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
    return None


def joined_surrogates(text: str) -> str:
    """`text` with each pair of surrogate halves made the character the pair makes, and
    each lone half U+FFFD, as recordings read them (`runs.surrogates`): a `"\\ud83d\\ude00"`
    escape pair is 😀, a `"\\ud800"` alone is no character.

    >>> joined_surrogates("a\\ud83d\\ude00b\\ud800")
    'a😀b\ufffd'
    """
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def js_number(x: float) -> str:
    """A float as JavaScript's `Number.prototype.toString` writes it.

    >>> [js_number(v) for v in (1.0, -0.0, 0.1, 1e21, 1.5e-7, 123456789012.5)]
    ['1', '0', '0.1', '1e+21', '1.5e-7', '123456789012.5']
    """
    if not math.isfinite(x):
        return "null"
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    # repr() gives the shortest digits that round-trip, the same digits JavaScript picks;
    # only where the decimal point goes and when to use an exponent differ.
    mantissa, _, exp = repr(abs(x)).partition("e")
    whole, _, frac = mantissa.partition(".")
    significant = (whole + frac).lstrip("0")
    # `point`: how many digits stand before the decimal point (JavaScript's n, with x =
    # 0.d1d2... * 10**n); every leading zero dropped moves it one place left.
    point = len(whole) + int(exp or 0) - (len(whole + frac) - len(significant))
    digits = significant.rstrip("0")
    k, n = len(digits), point
    if k <= n <= 21:
        body = digits + "0" * (n - k)
    elif 0 < n <= 21:
        body = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        body = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        body = digits[0] + ("." + digits[1:] if k > 1 else "") + "e" + ("+" if e >= 0 else "-")
        body += str(abs(e))
    return sign + body
