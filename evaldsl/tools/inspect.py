"""The `evaldsl inspect` command: print what evaldsl reads from one trace or state file.

Takes a path, an optional format name and an output format (`text` or `json`) and gives an
exit code: 0 when the file was read, 1 when it cannot be read as a run (the message names
file, line, column and a hint), 2 when it does not exist or is a suite that does not read
as a recording (`inspect --code` takes suites).
"""

from __future__ import annotations

import sys
from typing import TextIO

from evaldsl.runs.model import RunError
from evaldsl.runs.summary import render_text, summarize, to_json

#: The files of suites (`.eval`, YAML): no recording is written in them.
SUITE_SUFFIXES = (".eval", ".yaml", ".yml")


def inspect_command(path: str, format: str | None, output: str, out: TextIO) -> int:
    """Print the summary of `path`; the exit code says whether it could be read."""
    try:
        summaries = summarize(path, format)
    except RunError as err:
        if err.code != "E501" and path.endswith(SUITE_SUFFIXES):
            # (a suite given for the recording it names: said as that, not as the JSON it
            # is not)
            print(
                f"evaldsl: error: {path} is a suite, not a recording: `inspect` reads what a "
                "run left (a cassette, a trace, a state)\n"
                f"  = hint: `evaldsl inspect --code {path}` prints the pass each of its cases "
                f"runs; `evaldsl check {path}` checks it",
                file=sys.stderr,
            )
            return 2
        hint = f"\n  = hint: {err.hint}" if err.hint else ""
        print(f"evaldsl: error: {err}{hint}", file=sys.stderr)
        return 2 if err.code == "E501" else 1
    if output == "json":
        print(to_json(summaries), file=out)
    else:
        print("\n\n".join(render_text(s) for s in summaries), file=out)
    return 0
