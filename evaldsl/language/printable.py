"""Printable text: control characters shown as escapes, so text from a suite, a trace or
a target never acts on the terminal that shows it.

Takes any text and gives it with C0 controls (but tab, and newline unless asked), DEL, C1
controls and lone surrogates written as `\\x1b`, `\\x85`, `\\ud800`. Every text renderer
(diagnostics, the console, Markdown) shows user text through `visible`.
"""

from __future__ import annotations

import re
import unicodedata

from evaldsl.cache.regexes import regex

# Control characters (C0 but tab and newline, DEL, C1) and lone surrogates: an agent's
# output can hold any of them, and on a terminal an escape sequence would act, not show.
# (Kept compiled between starts: each of these classes took ~0.4 ms to compile.)
_CONTROL = regex("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff]")
_CONTROL_OR_NEWLINE = regex("[\x00-\x08\x0a-\x1f\x7f-\x9f\ud800-\udfff]")
_CONTROL_BUT_BREAKS = regex("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")


def visible(text: str, *, newlines: bool = True) -> str:
    r"""`text` with control characters shown as escapes (`\x1b`), never acted on.

    With `newlines=False` line breaks are escaped too, for text that must stay on one line.

    >>> print(visible("boom\x1b[31m"), visible("a\nb", newlines=False))
    boom\x1b[31m a\nb
    """
    pattern = _CONTROL if newlines else _CONTROL_OR_NEWLINE
    return pattern.sub(_escape, text.replace("\r\n", "\n"))


def columns(text: str) -> int:
    """The terminal columns `text` takes (as printed: escape it first): East Asian wide
    and fullwidth characters (CJK, most emoji) take two, combining marks none. Carets
    under a source line are placed by these; positions in JSON stay code points.

    >>> columns("ab"), columns("天気"), columns("😀"), columns("e\u0301")
    (2, 4, 2, 1)
    """
    if text.isascii():  # no wide or combining character: one column each
        return len(text)
    return sum(
        0 if unicodedata.combining(ch) else 2 if unicodedata.east_asian_width(ch) in "WF" else 1
        for ch in text
    )


def controls_escaped(text: str) -> str:
    r"""`text` with control characters but tab, CR and LF shown as escapes, for formats
    that encode line breaks themselves (GitHub workflow commands).

    >>> controls_escaped("a\r\n\x1b[2J")
    'a\r\n\\x1b[2J'
    """
    return _CONTROL_BUT_BREAKS.sub(_escape, text)


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code == 0x0A:
        return "\\n"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
