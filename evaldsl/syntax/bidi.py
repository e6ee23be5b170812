"""Bidirectional controls: characters that reorder how the text around them is shown.

Takes a parsed `.eval` source and the diagnostics its parse gave, and gives a warning
(W101) at each raw bidirectional control in it: in a string, a regex or a comment, where
the parser takes any character, such a control makes an editor show text in another
order than the one evaldsl reads ("Trojan Source", CVE-2021-42574). One outside them is
the parser's error already (E103) and gets no second word here.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

from evaldsl.cache.regexes import regex
from evaldsl.language.diagnostics import Diagnostic
from evaldsl.language.printable import BIDI_CONTROLS
from evaldsl.language.source import Source, Span

#: The Unicode bidirectional controls (the ones every text renderer escapes)
_BIDI = regex(f"[{BIDI_CONTROLS}]")


def bidi_warnings(source: Source, parsed: Iterable[Diagnostic]) -> list[Diagnostic]:
    """W101 at each raw bidirectional control of `source` that no parse error is at.

    >>> [d.code for d in bidi_warnings(Source('answer contains "a\u202eb"'), [])]
    ['W101']
    """
    text = source.text
    # (an ASCII text holds none, and says so without a scan: most suites are ASCII, and
    # the regex's scan was ~40 instructions a character, ~4 M for a suite of 120 cases)
    found = [] if text.isascii() else list(_BIDI.finditer(text))
    if not found:
        return []
    errors = {(d.line, d.column) for d in parsed if d.is_error}
    out = []
    for m in found:
        d = Diagnostic.at(
            source,
            Span(m.start(), m.end()),
            "W101",
            f"raw bidirectional control U+{ord(m.group()):04X} "
            f"({unicodedata.name(m.group(), 'unnamed').lower()}): the text around it is "
            "shown in another order than evaldsl reads it",
            f"remove it, or write it as the escape \\u{ord(m.group()):04x} in a string",
        )
        if (d.line, d.column) not in errors:
            out.append(d)
    return out
