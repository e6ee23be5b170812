"""Lone UTF-16 surrogate escapes in JSON text, read as U+FFFD.

Takes JSON text (bytes or str) that orjson refused and gives its value with every lone
surrogate escape (`\\ud83d` without its low half, a low half alone) read as `\\ufffd`, the
replacement character; other problems stay orjson's error, at its position.

JSON's grammar allows any `\\uXXXX`, and `JSON.parse` (traceplay's reader) keeps a lone
surrogate in its string; an agent's answer cut in the middle of an emoji writes one. But
evaldsl's text is Unicode (RE2 and UTF-8 reports cannot hold a lone surrogate), so it is
read as U+FFFD, as a UTF-8 decoder reads a broken sequence. The escape and its replacement
are both six characters: every position after it stays where the file has it. Only called
once orjson has refused a text (the error path): the hot loops decode as before.
"""

from __future__ import annotations

import re
from typing import Any, AnyStr

import orjson

from evaldsl.cache.regexes import regex
from evaldsl.runs.bigints import exact

# Every escape, so that `\\\\u…` (an escaped backslash, then text) is never read as one.
_ESCAPE_BYTES = regex(rb"\\(?:u([0-9a-fA-F]{4})|.)", re.DOTALL)
_ESCAPE_TEXT = regex(r"\\(?:u([0-9a-fA-F]{4})|.)", re.DOTALL)


def mended_loads(text: bytes | str, *, rounds: bool = True) -> Any:
    """`orjson.loads(text)`, reading lone surrogate escapes as U+FFFD, and integers past
    64 bits exactly (`bigints.exact`); orjson's own error (for the text as written) when
    it is not JSON for any other reason. `rounds=False`: the caller found no integer that
    orjson rounds in a text this one is part of (`bigints.may_round` of a whole file is
    false, so is each line's), and the text is not looked through again."""
    try:
        value = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        fixed = mend(text)
        if fixed is None:
            raise
        try:
            text, value = fixed, orjson.loads(fixed)
        except orjson.JSONDecodeError:
            raise exc from None
    return exact(text, value) if rounds else value


def mend(text: bytes | str) -> bytes | str | None:
    """`text` with each lone surrogate escape replaced by `\\ufffd`; None when it has none.

    >>> mend(b'["\\\\ud83d", "\\\\ud83d\\\\ude00", "\\\\\\\\ud800", "\\\\udc00"]')
    b'["\\\\ufffd", "\\\\ud83d\\\\ude00", "\\\\\\\\ud800", "\\\\ufffd"]'
    """
    if isinstance(text, bytes):
        return _replaced(text, _lone(_ESCAPE_BYTES.finditer(text)), b"\\ufffd")
    return _replaced(text, _lone(_ESCAPE_TEXT.finditer(text)), "\\ufffd")


def _replaced(text: AnyStr, starts: list[int], replacement: AnyStr) -> AnyStr | None:
    """`text` with the six characters at each of `starts` replaced; None for no start."""
    if not starts:
        return None
    pieces, last = [], 0
    for start in starts:
        pieces += [text[last:start], replacement]
        last = start + 6
    pieces.append(text[last:])
    return replacement[:0].join(pieces)


def _lone(escapes: Any) -> list[int]:
    """Where the lone surrogate escapes start, among `escapes` (regex matches)."""
    lone: list[int] = []
    waiting: int | None = None  # a high half's start, until the next escape says
    waiting_end = -1
    for m in escapes:
        digits = m.group(1)
        code = int(digits, 16) if digits is not None else -1
        if waiting is not None:
            if 0xDC00 <= code <= 0xDFFF and m.start() == waiting_end:
                waiting = None  # a pair: one character
                continue
            lone.append(waiting)
            waiting = None
        if 0xD800 <= code <= 0xDBFF:
            waiting, waiting_end = m.start(), m.end()
        elif 0xDC00 <= code <= 0xDFFF:
            lone.append(m.start())
    if waiting is not None:
        lone.append(waiting)
    return lone
