"""Where things are written in a YAML or JSON suite, for editors (`model.Layout`).

Takes nothing; gives `TextPlace` (a scalar of DSL text) and `PathPlace` (a case's source
path), which the YAML and JSON front end (`yamlfile.py`) makes and the language server
reads. Apart from the suite model so that a run of `.eval` files, which never makes them,
does not build their classes at its start.
"""

from __future__ import annotations

import attrs


@attrs.frozen
class TextPlace:
    """Where one scalar of DSL text is written in a YAML or JSON suite (for editors): the
    case that holds it (None: the suite's header), its YAML style (`|`, `>`, `"`, `'`, or
    None for a plain scalar) and its first and last 0-based line and column."""

    case: int | None
    style: str | None
    start_line: int
    start_column: int
    end_line: int
    end_column: int


@attrs.frozen
class PathPlace:
    """Where a case's source path is written in a YAML or JSON suite: the case, the key
    (`cassette`, `state`, `trace`, `run`, `dataset`), the 0-based lines of the key and of
    its value, the value when it is text, and the 0-based code-point columns `[start, end)`
    of the key on its line and of the value on its line (a value that goes on past its
    first line: None, to that line's end)."""

    case: int
    key: str
    key_line: int
    value_line: int
    value: str | None
    key_columns: tuple[int, int]
    value_columns: tuple[int, int | None]

    def holds(self, line0: int, column0: int) -> bool:
        """Whether a cursor is on the key or on its value (its ends included): on a line
        that holds more (a flow mapping, a one-line JSON suite), what is beside them is
        not this path's."""
        key_start, key_end = self.key_columns
        if line0 == self.key_line and key_start <= column0 <= key_end:
            return True
        start, end = self.value_columns
        return line0 == self.value_line and start <= column0 and (end is None or column0 <= end)
