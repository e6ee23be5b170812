"""Source text and positions.

Takes the text of a file (or of a DSL snippet embedded in another file) and gives
`Span`s (half-open code-point offsets) and their human positions: 1-based line and
column in code points, and the UTF-16 column that editors speak. Every position shown to
a user is computed here, in one place.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from itertools import accumulate
from typing import NamedTuple

import attrs

#: A line's length plus its newline.
_ONE_MORE = (1).__add__


class Span(NamedTuple):
    """A half-open range `[start, end)` of code-point offsets into a `Source`'s text.

    A named tuple rather than an attrs class: every AST node carries one and a large file
    makes hundreds of thousands, so it is the cheapest immutable record CPython has.
    """

    start: int
    end: int

    def cover(self, other: Span) -> Span:
        """The smallest span holding both: `Span(0, 2).cover(Span(5, 7)) == Span(0, 7)`."""
        return Span(min(self.start, other.start), max(self.end, other.end))


@attrs.frozen
class Position:
    """A 1-based line and column (in code points) in the file the user edits."""

    line: int
    column: int


class Source:
    """Text with a name and a line table.

    `path` names the file for messages. For a snippet embedded in another file (DSL text
    inside YAML), `runs` maps its characters to where they are written in the host file:
    `(offset, host_line, host_column)`, sorted by offset, says the characters from
    `offset` on are written from that line and column, one column each, until the next
    run (a run starts at offset 0; the last may be the place just past the text).
    `host_lines` (the host file's lines) is shared, never copied: a YAML file holds one
    snippet per case, and a copy in each would make memory grow with the square of the
    file. Each line's text is made once and then shared by every message about it.

    >>> s = Source("a\\nbc", "x.eval")
    >>> s.position(3)
    Position(line=2, column=2)
    """

    __slots__ = (
        "_fixed",
        "_fixed_end",
        "_host_lines",
        "_line_starts",
        "_lines",
        "_run_starts",
        "_runs",
        "path",
        "text",
    )

    def __init__(
        self,
        text: str,
        path: str = "<string>",
        *,
        runs: Sequence[tuple[int, int, int]] | None = None,
        host_lines: Sequence[str] | None = None,
        fixed: Position | None = None,
        lines: list[str] | None = None,
        fixed_end: Position | None = None,
    ) -> None:
        self.text = text
        self.path = path
        # where each line starts: 0, then one past each newline, summed from the lengths
        # of the lines between them, in C (a loop of `find`s was ~20 bytecodes a line);
        # `lines` is `text.split("\n")` when the caller has it (the parser splits a text
        # to parse it by lines: a second split of a large file is ~6 M instructions)
        if lines is None:
            lines = text.split("\n")
        starts = list(accumulate(map(_ONE_MORE, map(len, lines)), initial=0))
        starts.pop()  # (one past the end of the text)
        self._line_starts = starts
        self._runs = list(runs) if runs is not None else None
        self._run_starts = [run[0] for run in runs] if runs is not None else []
        self._host_lines = host_lines
        self._lines: dict[int, str] = {}
        # Text generated from something else (a YAML assertion object): every position
        # is the place that object is written, and every span ends where it ends
        # (`fixed_end`: when it is written on one line; else one character).
        self._fixed = fixed
        self._fixed_end = fixed_end

    def local_position(self, offset: int) -> Position:
        """Line and column within this text itself (1-based)."""
        offset = max(0, min(offset, len(self.text)))
        index = bisect_right(self._line_starts, offset) - 1
        return Position(index + 1, offset - self._line_starts[index] + 1)

    def position(self, offset: int) -> Position:
        """Line and column in the file the user edits (the host file for a snippet)."""
        if self._fixed is not None:
            return self._fixed
        if self._runs is None:
            return self.local_position(offset)
        offset = max(0, min(offset, len(self.text)))
        start, host_line, host_col = self._runs[bisect_right(self._run_starts, offset) - 1]
        return Position(host_line, host_col + offset - start)

    def end_position(self, offset: int) -> Position:
        """Where a span ending at `offset` ends in the file the user edits: `position`,
        but in text generated from something else, where that thing ends (so that a
        diagnostic marks it whole, never an empty range)."""
        if self._fixed is None:
            return self.position(offset)
        if self._fixed_end is not None:
            return self._fixed_end
        return Position(self._fixed.line, self._fixed.column + 1)

    def written(self, span: Span) -> bool:
        """Whether the span's text is written as it is in the file the user edits, so
        that an edit of that file's text at its positions replaces exactly it: always in
        a file of its own; in a snippet, a span on one line whose host text is the same
        (not one inside an escaped YAML string, nor text made from a YAML object)."""
        if self._fixed is not None:
            return False
        if self._runs is None:
            return True
        start, end = self.position(span.start), self.position(span.end)
        if start.line != end.line:
            return False
        host = self.line_text(start.line)[start.column - 1 : end.column - 1]
        return host == self.text[span.start : span.end]

    def line_text(self, line: int) -> str:
        """The text of a 1-based line of the file the user edits, without its newline."""
        if self._host_lines is not None:
            if 1 <= line <= len(self._host_lines):
                return self._host_lines[line - 1].rstrip("\r\n")
            return ""
        if not 1 <= line <= len(self._line_starts):
            return ""
        found = self._lines.get(line)
        if found is None:
            start = self._line_starts[line - 1]
            end = self.text.find("\n", start)
            found = self._lines[line] = self.text[start : end if end >= 0 else len(self.text)]
            found = self._lines[line] = found.rstrip("\r")
        return found

    def line_count(self) -> int:
        return len(self._line_starts)


def utf16_column(line_text: str, column: int) -> int:
    """Convert a 1-based code-point column on a line to a 0-based UTF-16 offset (LSP).

    >>> utf16_column("é😀x", 3)
    3
    """
    prefix = line_text[: max(0, column - 1)]
    return len(prefix) + sum(1 for ch in prefix if ord(ch) > 0xFFFF)


def codepoint_column(line_text: str, utf16: int) -> int:
    """Convert a 0-based UTF-16 offset on a line back to a 1-based code-point column."""
    units = 0
    for i, ch in enumerate(line_text):
        if units >= utf16:
            return i + 1
        units += 2 if ord(ch) > 0xFFFF else 1
    return len(line_text) + 1


#: Source lines longer than this many characters are shown as a window around the place a
#: message points at: a caret under a megabyte-long line helps nobody, and one failure
#: per statement of such a line would print the line once each.
SHOWN_LINE = 240


def line_window(line: str, column: int, end_column: int) -> tuple[str, int, int]:
    """`line` cut to about `SHOWN_LINE` characters around the 1-based columns
    `[column, end_column)`, with `…` where it was cut, and the columns within the cut.

    >>> line_window("ab", 2, 3)
    ('ab', 2, 3)
    >>> text, col, end = line_window("x" * 1000 + "HERE" + "y" * 1000, 1001, 1005)
    >>> text[col - 1 : end - 1], len(text) <= SHOWN_LINE + 2
    ('HERE', True)
    """
    if len(line) <= SHOWN_LINE:
        return line, column, end_column
    first = max(0, min(column - 1, len(line)) - SHOWN_LINE // 4)
    last = min(len(line), first + SHOWN_LINE)
    head = "…" if first > 0 else ""
    tail = "…" if last < len(line) else ""
    shift = first - len(head)
    new_end = min(end_column, last + 1) - shift if end_column > column else end_column
    return head + line[first:last] + tail, column - shift, new_end
