"""Secrets: the judge's key, and every form in which a reply can carry it back.

Takes a key and gives a `Redactor` that replaces the key in any text by `[redacted]`,
whatever mixture of forms each character of it takes: as written, JSON-escaped (`\\/`,
`\\"`, `\\uXXXX`), URL-encoded (`%2F`, `%2f`, the UTF-8 bytes of a character) or
HTML-escaped (`&amp;`, `&#47;`, `&#x2F;`). Callers redact a whole text before they cut it
for a message, so a key split across the cut never shows half of itself.

A key shorter than `MIN_REDACTED_KEY` characters is not redacted: no provider issues one
(theirs run to dozens), so it is a placeholder for a local server (`k`, `sky`), and
replacing it wherever it shows would mangle ordinary words (`loo[redacted]ed`, "never
mentions the [redacted]") while hiding nothing anyone could not guess.

    >>> r = Redactor("sk-a/b+c")
    >>> r("echo: sk-a/b+c, sk-a\\\\/b+c, sk-a%2fb%2Bc, \\\\u0073k-a/b&#43;c")
    'echo: [redacted], [redacted], [redacted], [redacted]'
    >>> Redactor("sky")("never mentions the sky")
    'never mentions the sky'
"""

from __future__ import annotations

import re

REDACTED = "[redacted]"

#: The fewest characters a key has for it to be redacted (see the module doc).
MIN_REDACTED_KEY = 8

_JSON_SHORT = {'"': '\\"', "\\": "\\\\", "/": "\\/", "\b": "\\b", "\f": "\\f"}
_JSON_SHORT |= {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _hex(value: int, digits: int) -> str:
    """A hexadecimal number matched in either case."""
    return "".join(f"[{c}{c.upper()}]" if c.isalpha() else c for c in f"{value:0{digits}x}")


def _char(c: str) -> str:
    """A pattern for one character of the key in any of the forms it can take."""
    forms = [re.escape(c)]
    if c in _JSON_SHORT:
        forms.append(re.escape(_JSON_SHORT[c]))
    code = ord(c)
    if code <= 0xFFFF:
        forms.append(r"\\u" + _hex(code, 4))
    else:  # a JSON surrogate pair
        high, low = divmod(code - 0x10000, 0x400)
        forms.append(r"\\u" + _hex(0xD800 + high, 4) + r"\\u" + _hex(0xDC00 + low, 4))
    forms.append("".join("%" + _hex(b, 2) for b in c.encode("utf-8", "surrogatepass")))
    if c == " ":
        forms.append(r"\+")
    forms.append(f"&#0*{code};")
    forms.append("&#[xX]0*" + _hex(code, 1 if code < 16 else 2 if code < 256 else 4) + ";")
    import html  # only with a key: a start without one does not load it

    named = html.escape(c, quote=True)
    if named != c:
        forms.append(re.escape(named))
    return "(?:" + "|".join(forms) + ")"


class Redactor:
    """Replaces a key, in any form of its characters, by `[redacted]`; nothing without a
    key, or with one too short to be a secret (`MIN_REDACTED_KEY`)."""

    def __init__(self, key: str | None) -> None:
        self.key = key
        secret = key is not None and len(key) >= MIN_REDACTED_KEY
        self._pattern = re.compile("".join(_char(c) for c in key or "")) if secret else None

    def __call__(self, text: str) -> str:
        if self._pattern is None:
            return text
        return self._pattern.sub(REDACTED, text)
