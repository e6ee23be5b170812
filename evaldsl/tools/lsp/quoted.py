"""The DSL text of a quoted YAML (or JSON) scalar, as the suite reads it, for the editor.

Takes the text written between a scalar's quotes on one line and its style (`"` or `'`),
and gives the text it stands for with, for each of its characters, the column in the
written text where that character's spelling starts (`unquoted`): `answer contains
\\"sun\\"` stands for `answer contains "sun"`, whose `"` are spelled two columns wide.
Completion and hover read the DSL text and place their ranges back by those columns;
`requoted` spells inserted text for the scalar (`"` as `\\"` in a double-quoted one, `'`
as `''` in a single-quoted one). An escape the YAML spec does not have gives `None`: the
suite's own reading reports it.
"""

from __future__ import annotations

#: YAML's one-character escapes in a double-quoted scalar (JSON's are among them).
_SIMPLE = {
    "0": "\0",
    "a": "\a",
    "b": "\b",
    "t": "\t",
    "\t": "\t",
    "n": "\n",
    "v": "\v",
    "f": "\f",
    "r": "\r",
    "e": "\x1b",
    " ": " ",
    '"': '"',
    "/": "/",
    "\\": "\\",
    "N": "\x85",
    "_": "\xa0",
    "L": "\u2028",
    "P": "\u2029",
}
#: The hex digits of YAML's `\x`, `\u` and `\U` escapes.
_HEX = {"x": 2, "u": 4, "U": 8}


def unquoted(written: str, style: str) -> tuple[str, list[int]] | None:
    """The text `written` stands for in a scalar of `style`, and each of its characters'
    start column in `written`, one more for its end (`None`: an escape YAML has not).

    >>> unquoted('a \\\\"b\\\\" c', '"')
    ('a "b" c', [0, 1, 2, 4, 5, 7, 8, 9])
    >>> unquoted("it''s", "'")
    ("it's", [0, 1, 2, 4, 5])
    """
    text: list[str] = []
    columns: list[int] = []
    i, n = 0, len(written)
    while i < n:
        ch = written[i]
        columns.append(i)
        if style == "'" and ch == "'" and written.startswith("''", i):
            text.append("'")
            i += 2
        elif style == '"' and ch == "\\":
            code = written[i + 1 : i + 2]
            if code in _SIMPLE:
                text.append(_SIMPLE[code])
                i += 2
            elif code in _HEX:
                digits = written[i + 2 : i + 2 + _HEX[code]]
                if len(digits) != _HEX[code] or not all(
                    c in "0123456789abcdefABCDEF" for c in digits
                ):
                    return None
                point = int(digits, 16)
                if point > 0x10FFFF:
                    return None
                text.append(chr(point))
                i += 2 + len(digits)
            else:
                return None
        else:
            text.append(ch)
            i += 1
    columns.append(n)
    return "".join(text), columns


def requoted(text: str, style: str | None) -> str:
    """`text` spelled for a scalar of `style` (a plain or block scalar's: as it is).

    >>> requoted('tool "get-weather"', '"'), requoted("it's", "'")
    ('tool \\\\"get-weather\\\\"', "it''s")
    """
    if style == '"':
        return text.replace("\\", "\\\\").replace('"', '\\"')
    if style == "'":
        return text.replace("'", "''")
    return text
