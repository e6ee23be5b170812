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
    its value, and the value when it is text."""

    case: int
    key: str
    key_line: int
    value_line: int
    value: str | None
