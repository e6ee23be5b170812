"""The `evaldsl inspect` command: print what evaldsl reads from one trace or state file.

Takes a path, an optional format name and an output format (`text` or `json`) and gives an
exit code: 0 when the file was read, 1 when it cannot be read as a run (the message names
file, line, column and a hint), 2 when it does not exist.
"""

from __future__ import annotations

import sys
from typing import TextIO

from evaldsl.runs.model import RunError
from evaldsl.runs.summary import render_text, summarize, to_json


def inspect_command(path: str, format: str | None, output: str, out: TextIO) -> int:
    """Print the summary of `path`; the exit code says whether it could be read."""
    try:
        summaries = summarize(path, format)
    except RunError as err:
        hint = f"\n  = hint: {err.hint}" if err.hint else ""
        print(f"evaldsl: error: {err}{hint}", file=sys.stderr)
        return 2 if err.code == "E501" else 1
    if output == "json":
        print(to_json(summaries), file=out)
    else:
        print("\n\n".join(render_text(s) for s in summaries), file=out)
    return 0
