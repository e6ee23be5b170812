"""Where each character of a YAML (or JSON) scalar's value is written in its file.

Takes the file's text and a composed scalar node and gives `runs`: `(offset, line,
column)` triples, sorted by offset, saying that the value's characters from `offset` on
are written from that 1-based line and column of the file, one column each, until the
next run; the last run is the place just after the value (for the end of a span); and
`yaml_lines`, the file's lines as the marks number them.
Every style is read as PyYAML's scanner reads it: plain scalars over several lines,
single quotes with `''`, double quotes with every escape (a character made by an escape
is at the escape's backslash), literal and folded blocks with their indentation and
chomping. A character that folding makes (a space or a line feed for a line break) is
at the end of the line it joins. Gives None where the text read does not give the
node's value (the caller then maps whole lines).

>>> import yaml
>>> text = 'a: "x\\\\ny"\\n'
>>> node = yaml.compose(text).value[0][1]
>>> node.value, scalar_runs(text, line_starts(text), node)
('x\\ny', [(0, 1, 5), (2, 1, 8)])
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import yaml

#: Where a line ends, as `yaml12.compose` reads YAML (1.2): U+0085, U+2028 and U+2029 are
#: characters there, not the line breaks PyYAML takes them for.
_BREAKS = "\r\n"
_BREAK = re.compile("\r\n|[\r\n]")
_ESCAPES = {
    "0": "\0",
    "a": "\x07",
    "b": "\x08",
    "t": "\x09",
    "\t": "\x09",
    "n": "\x0a",
    "v": "\x0b",
    "f": "\x0c",
    "r": "\x0d",
    "e": "\x1b",
    " ": " ",
    '"': '"',
    "\\": "\\",
    "/": "/",
    "N": "\x85",
    "_": "\xa0",
    "L": "\u2028",
    "P": "\u2029",
}
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}

Place = tuple[int, int]


def yaml_lines(text: str) -> list[str]:
    """The text's lines as the marks of `yaml12.compose` number them (a line ends at
    \\r\\n, \\r or \\n, as an editor ends it), for showing the line a mark is on. Not
    `str.splitlines`, which also ends one at \\x0b, \\x0c, \\x1c-\\x1e, U+0085,
    U+2028 and U+2029: the line shown under a diagnostic after one of those was another
    line than the one it is about.

    >>> yaml_lines("a\\x0cb\\r\\nc\\x85d")
    ['a\\x0cb', 'c\\x85d']
    """
    return _BREAK.split(text)


def node_end(node: yaml.Node) -> tuple[int, int] | None:
    """Where a node written on one line ends (its 1-based line, the column after it), for a
    diagnostic that marks it whole (a key, a value, a flow mapping); None for one over
    several lines (a block), which is marked at its first character."""
    start, end = node.start_mark, node.end_mark
    if end.line != start.line or end.column <= start.column:
        return None
    return end.line + 1, end.column + 1


def line_starts(text: str) -> list[int]:
    """The offset where each of the text's lines starts, lines ending as YAML ends them.

    >>> line_starts("a\\r\\nb\\nc")
    [0, 3, 5]
    """
    return [0, *(m.end() for m in _BREAK.finditer(text))]


class _Reader:
    """PyYAML's reader over a text, from a mark on: the next characters and their places;
    what it reads is collected with the place each character comes from."""

    def __init__(self, text: str, index: int, line: int, column: int) -> None:
        self.text = text
        self.index = index
        self.line = line  # 0-based, as marks are
        self.column = column
        self.chars: list[str] = []
        self.places: list[Place] = []

    def peek(self, ahead: int = 0) -> str:
        at = self.index + ahead
        return self.text[at] if at < len(self.text) else "\0"

    def place(self) -> Place:
        return self.line + 1, self.column + 1

    def forward(self, length: int = 1) -> None:
        for _ in range(length):
            ch = self.peek()
            self.index += 1
            if ch in _BREAKS and not (ch == "\r" and self.peek() == "\n"):
                self.line += 1
                self.column = 0
            else:
                self.column += 1

    def line_break(self) -> tuple[str, Place]:
        """Read a line break: the character it stands for, and where it is."""
        place, ch = self.place(), self.peek()
        if ch == "\r" and self.peek(1) == "\n":
            self.forward(2)
            return "\n", place
        self.forward()
        return ("\n" if ch in "\r\n\x85" else ch), place

    def emit(self, chars: str, place: Place) -> None:
        for ch in chars:
            self.chars.append(ch)
            self.places.append(place)

    def copy(self, length: int) -> None:
        """Take the next `length` characters as they are written."""
        for _ in range(length):
            self.emit(self.peek(), self.place())
            self.forward()


def _fold(first: str, place: Place, breaks: list[tuple[str, Place]]) -> list[tuple[str, Place]]:
    """What a line break and the empty lines after it make inside a flow or plain scalar:
    a space for the break alone, else a line feed per empty line (where each is)."""
    if first != "\n":
        return [(first, place), *breaks]
    return breaks or [(" ", place)]


def _plain(r: _Reader, end: int) -> Place:
    pending: list[tuple[str, Place]] = []
    while r.index < end:
        length = 0
        while r.index + length < end and r.peek(length) not in " \t" + _BREAKS:
            length += 1
        for ch, place in pending:
            r.emit(ch, place)
        r.copy(length)
        if r.index >= end:
            break
        pending = []
        spaces: list[tuple[str, Place]] = []
        while r.peek() in " \t":
            spaces.append((r.peek(), r.place()))
            r.forward()
        if r.peek() in _BREAKS:
            first, place = r.line_break()
            breaks: list[tuple[str, Place]] = []
            while r.peek() in " " + _BREAKS:
                if r.peek() == " ":
                    r.forward()
                else:
                    breaks.append(r.line_break())
            pending = _fold(first, place, breaks)
        else:
            pending = spaces
        if length == 0 and not spaces and not pending:
            return r.place()  # nothing read: not a plain scalar as PyYAML reads them
    return r.place()


def _flow_breaks(r: _Reader) -> list[tuple[str, Place]]:
    breaks: list[tuple[str, Place]] = []
    while True:
        while r.peek() in " \t":
            r.forward()
        if r.peek() not in _BREAKS or r.peek() == "\0":
            return breaks
        breaks.append(r.line_break())


def _quoted(r: _Reader, double: bool) -> Place:
    quote = r.peek()
    r.forward()
    while True:
        ch = r.peek()
        if ch == "\0":
            return r.place()
        if ch == quote and not (not double and r.peek(1) == "'"):
            at = r.place()
            r.forward()
            return at
        if not double and ch == "'":  # `''`: one quote, at the first
            r.emit("'", r.place())
            r.forward(2)
        elif double and ch == "\\":
            at = r.place()
            r.forward()
            code = r.peek()
            if code in _ESCAPES:
                r.emit(_ESCAPES[code], at)
                r.forward()
            elif code in _HEX_ESCAPES:
                digits = r.text[r.index + 1 : r.index + 1 + _HEX_ESCAPES[code]]
                r.emit(chr(int(digits, 16)), at)
                r.forward(1 + len(digits))
            elif code in _BREAKS and code != "\0":  # the lines join with nothing between
                r.line_break()
                for made, place in _flow_breaks(r):
                    r.emit(made, place)
            else:
                raise ValueError(f"an escape YAML has not: \\{code}")
        elif ch in " \t" + _BREAKS:
            spaces: list[tuple[str, Place]] = []
            while r.peek() in " \t":
                spaces.append((r.peek(), r.place()))
                r.forward()
            if r.peek() in _BREAKS and r.peek() != "\0":
                spaces = _fold(*r.line_break(), _flow_breaks(r))
            for made, where in spaces:
                r.emit(made, where)
        else:
            r.copy(1)


def quoted_line(written: str, style: str) -> tuple[str, list[int]] | None:
    """What a quoted scalar written on one line stands for (`written`: the text between
    its quotes; `style`: `"` or `'`), as PyYAML reads it, and the column in `written` of
    each of its characters (one an escape makes: the escape's backslash), one more for
    its end; None where `written` is no such scalar's text (an escape YAML has not, a
    quote that would end it early).

    >>> quoted_line('a \\\\"b\\\\" c', '"')
    ('a "b" c', [0, 1, 2, 4, 5, 7, 8, 9])
    >>> quoted_line("it''s", "'"), quoted_line('\\\\q', '"')
    (("it's", [0, 1, 2, 4, 5]), None)
    """
    text = f"{style}{written}{style}"
    r = _Reader(text, 0, 0, 0)
    try:
        after = _quoted(r, style == '"')
    except (ValueError, IndexError):
        return None
    if after != (1, len(text)):  # (it ended before the last quote, or ran past it)
        return None
    # (places are 1-based and count the opening quote)
    return "".join(r.chars), [column - 2 for _, column in (*r.places, after)]


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


def _block_breaks(r: _Reader, indent: int) -> list[tuple[str, Place]]:
    breaks: list[tuple[str, Place]] = []
    while r.column < indent and r.peek() == " ":
        r.forward()
    while r.peek() in _BREAKS and r.peek() != "\0":
        breaks.append(r.line_break())
        while r.column < indent and r.peek() == " ":
            r.forward()
    return breaks


def _block(r: _Reader, indent: int | None) -> Place:
    """A literal or folded block; `indent` None: found from its first lines."""
    folded = r.peek() == ">"
    r.forward()
    chomping: bool | None = None
    while r.peek() in "+-0123456789":
        if r.peek() in "+-":
            chomping = r.peek() == "+"
        r.forward()
    while r.peek() not in "\0" + _BREAKS:  # spaces and a comment
        r.forward()
    end = r.place()
    r.line_break()
    breaks: list[tuple[str, Place]] = []
    if indent is None:
        indent = 1
        while r.peek() in " " + _BREAKS and r.peek() != "\0":
            if r.peek() == " ":
                r.forward()
                indent = max(indent, r.column)
            else:
                breaks.append(r.line_break())
    else:
        breaks = _block_breaks(r, indent)
    line_break: tuple[str, Place] = ("", end)
    while r.column == indent and r.peek() != "\0":
        for made, place in breaks:
            r.emit(made, place)
        leading_non_space = r.peek() not in " \t"
        length = 0
        while r.peek(length) not in "\0" + _BREAKS:
            length += 1
        r.copy(length)
        end = r.place()
        line_break = r.line_break() if r.peek() != "\0" else ("", end)
        breaks = _block_breaks(r, indent)
        if r.column != indent or r.peek() == "\0":
            break
        if folded and line_break[0] == "\n" and leading_non_space and r.peek() not in " \t":
            if not breaks:
                r.emit(" ", line_break[1])
        else:
            r.emit(*line_break)
    if chomping is not False:
        r.emit(*line_break)
    if chomping is True:
        for made, place in breaks:
            r.emit(made, place)
    return end


def _runs(places: Sequence[Place]) -> list[tuple[int, int, int]]:
    """Places, one per character and one past the end, as runs of consecutive columns."""
    runs: list[tuple[int, int, int]] = []
    for offset, (line, column) in enumerate(places):
        if runs:
            start, run_line, run_column = runs[-1]
            if run_line == line and run_column + offset - start == column:
                continue
        runs.append((offset, line, column))
    return runs


def scalar_runs(
    text: str, starts: Sequence[int], node: yaml.ScalarNode
) -> list[tuple[int, int, int]] | None:
    """The runs of a scalar node of `text` (`starts`: its `line_starts`); None where they
    cannot be told (the text read does not give the node's value)."""
    mark, stop = node.start_mark, node.end_mark
    if mark.line >= len(starts) or stop.line >= len(starts):
        return None
    index = starts[mark.line] + mark.column
    end = starts[stop.line] + stop.column
    style = node.style or ""
    quote = 1 if style in ("'", '"') else 0
    if (
        style in ("", "'", '"')
        and mark.line == stop.line
        and text[index + quote : end - quote] == node.value
    ):
        # the common case, a value on one line written as it is: one run (and no scan)
        return [(0, mark.line + 1, mark.column + 1 + quote)]
    tries: list[int | None] = [None]
    if style in ("|", ">") and re.match(r"[|>][-+]?[1-9]", text[index : index + 3]):
        # an indentation indicator counts from the parent's indentation, which the node
        # does not tell: each possible one is tried, the value says which is right
        tries = list(range(1, mark.column + 10))
    for indent in tries:
        r = _Reader(text, index, mark.line, mark.column)
        try:
            if style in ("|", ">"):
                after = _block(r, indent)
            elif style in ("'", '"'):
                after = _quoted(r, style == '"')
            else:
                after = _plain(r, end)
        except (ValueError, IndexError):  # text that is not what the node was read from
            return None
        if "".join(r.chars) == node.value:
            return _runs([*r.places, after])
    return None
