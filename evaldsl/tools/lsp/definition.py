"""Go to definition: the files a case's source path names.

Takes an `Analysis` and a cursor on a `cassette`/`state`/`trace`/`dataset` path (a line of
a `.eval` file, or a source key of a YAML suite, as its front end recorded it) and gives
the files it names, one per `each` row when the path is a template.
"""

from __future__ import annotations

from pathlib import Path

from evaldsl.language.reading import is_regular
from evaldsl.syntax.literals import decode_string
from evaldsl.syntax.tokens import statement_tokens
from evaldsl.tools.lsp.analysis import Analysis

_SOURCE_TERMINALS = frozenset({"CASSETTE", "STATE", "TRACE", "DATASET"})
_SOURCE_KEYS = ("cassette", "state", "trace", "dataset")


def definition_at(analysis: Analysis, line0: int, column0: int) -> list[Path]:
    """The files a `cassette`/`state`/`trace`/`dataset` path under the cursor names."""
    raw: str | None = None
    case: int | None = None
    if analysis.kind == "yaml":
        for entry in analysis.layout.paths:
            if entry.key in _SOURCE_KEYS and entry.holds(line0, column0) and entry.value:
                raw, case = entry.value, entry.case
                break
    else:
        spot = analysis.spot(line0, column0)
        if spot is not None:
            tokens = statement_tokens(spot.text, spot.start)
            if (
                len(tokens) > 1
                and tokens[0].kind in _SOURCE_TERMINALS
                and tokens[1].kind == "STRING"
            ):
                raw, case = decode_string(tokens[1].text), spot.case
    if not raw:
        return []
    base = analysis.draft.base_dir
    found = [base / p for p in analysis.case_paths(case, raw)]
    # (`Path.is_file` raised for a name too long: the request failed with a traceback)
    return [p for p in found if is_regular(p)]
