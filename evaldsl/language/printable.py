"""Printable text: control characters shown as escapes, so text from a suite, a trace or
a target never acts on the terminal that shows it.

Takes any text and gives it with C0 controls (but tab, and newline unless asked), DEL, C1
controls, lone surrogates and the bidirectional controls written as `\\x1b`, `\\x85`,
`\\ud800`, `\\u202e`. Every text renderer (diagnostics, the console, Markdown) shows user
text through `visible`.
"""

from __future__ import annotations

import re
import unicodedata

from evaldsl.cache.regexes import regex

#: The Unicode bidirectional controls, as a character class's text: marks (ALM, LRM, RLM),
#: embeddings and overrides (LRE, RLE, PDF, LRO, RLO) and isolates (LRI, RLI, FSI, PDI).
BIDI_CONTROLS = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"

# Control characters (C0 but tab and newline, DEL, C1) and lone surrogates: an agent's
# output can hold any of them, and on a terminal an escape sequence would act, not show.
# The bidirectional controls too (those W101 warns of in a suite): printed as they are,
# a terminal shows the text around them in another order than it holds ("Trojan
# Source"), so a source line under a W101 would show what the warning says is hidden.
# (Kept compiled between starts: each of these classes took ~0.4 ms to compile.)
_UNSEEN = f"\x7f-\x9f\ud800-\udfff{BIDI_CONTROLS}"  # (and the C0 controls each class picks)
_CONTROL = regex(f"[\x00-\x08\x0b-\x1f{_UNSEEN}]")
_CONTROL_OR_NEWLINE = regex(f"[\x00-\x08\x0a-\x1f{_UNSEEN}]")
_CONTROL_BUT_BREAKS = regex(f"[\x00-\x08\x0b\x0c\x0e-\x1f{_UNSEEN}]")
_UNSEEN_IN_JSON = regex(f"[{_UNSEEN}]")  # (JSON escapes C0 controls itself)


def visible(text: str, *, newlines: bool = True) -> str:
    r"""`text` with control characters shown as escapes (`\x1b`), never acted on.

    With `newlines=False` line breaks are escaped too, for text that must stay on one line.

    >>> print(visible("boom\x1b[31m"), visible("a\nb", newlines=False))
    boom\x1b[31m a\nb
    """
    pattern = _CONTROL if newlines else _CONTROL_OR_NEWLINE
    return pattern.sub(_escape, text.replace("\r\n", "\n"))


def json_visible(text: str) -> str:
    r"""JSON text (`json.dumps(…, ensure_ascii=False)`, which escapes C0 controls itself)
    with what it leaves raw and a terminal would act on or reorder (DEL, C1 controls, lone
    surrogates, bidirectional controls) written as JSON's own `\uXXXX` escapes: the text
    still reads as the same JSON.

    >>> print(json_visible('"a\x9b2J \u202eb"'))
    "a\u009b2J \u202eb"
    """
    return _UNSEEN_IN_JSON.sub(json_escape, text)


def json_escape(match: re.Match[str]) -> str:
    """The matched character (of the Basic Multilingual Plane: one UTF-16 unit) as JSON's
    `\\uXXXX` escape, for a `re.sub` over JSON text whose strings hold it."""
    return f"\\u{ord(match.group()):04x}"


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
