"""The `evaldsl inspect` command: print what evaldsl reads from one trace or state file.

Takes a path, an optional format name, an output format (`text` or `json`; None: not
given) and whether `--code` was given (then the path is a suite: `tools/code.py`), and
gives an exit code: 0 when the file was read, 1 when it cannot be read as a run (the
message names file, line, column and a hint), 2 for bad usage: a path that does not
exist or is a folder, an unknown `--as` format (the formats are listed), a suite that
does not read as a recording (`inspect --code` takes suites), or `--as`/`--format`
given with `--code`.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TextIO

from evaldsl.language.diagnostics import did_you_mean
from evaldsl.language.limits import MAX_SUITE_BYTES
from evaldsl.language.reading import (
    FileProblem,
    broken_link,
    is_folder,
    read_regular,
    starts_as_zip,
)
from evaldsl.language.vocabulary import RUN_FORMATS
from evaldsl.runs.detect import FORMATS, dataset_said
from evaldsl.runs.model import RunError
from evaldsl.runs.summary import render_text, summarize, to_json

#: The files of suites (`.eval`, YAML): no recording is written in them.
SUITE_SUFFIXES = (".eval", ".yaml", ".yml")


def inspect_command(
    path: str, format: str | None, output: str | None, out: TextIO, *, code: bool = False
) -> int:
    """Print the summary of `path` (with `code`, the passes of the suite at `path`); the
    exit code says whether it could be read."""
    if code:
        given = [name for name, value in (("--as", format), ("--format", output)) if value]
        if given:
            return _usage(
                f"{' and '.join(given)} {'go' if len(given) > 1 else 'goes'} with "
                "`inspect TRACE`, not with --code: the passes `inspect --code SUITE` prints "
                "are Python text, for the formats the suite's recordings are in",
                f"`evaldsl inspect --code {path}` alone; `evaldsl inspect RECORDING` of one "
                "of its recordings takes --as and --format",
            )
        from evaldsl.tools.code import code_command

        return code_command(path, out)
    if format is not None and format.lower() not in FORMATS:
        near = did_you_mean(format, FORMATS)
        return _usage(
            f'unknown run format "{format}" (--as)',
            (f'did you mean "{near}"? ' if near else "") + "formats: " + ", ".join(RUN_FORMATS),
        )
    if is_folder(path):
        return _usage(
            f'"{path}" is a folder: `inspect` reads one recording',
            "name one file in it: a .jsonl cassette, a .json trace or a .json state",
        )
    try:
        summaries = summarize(path, format)
    except RunError as err:
        # (a `.eval` file that is a ZIP archive is an Inspect AI log, whose reader's
        # message says what it lacks)
        if err.code != "E501" and path.endswith(SUITE_SUFFIXES[1:]) and _dataset(path):
            message, hint = dataset_said(os.path.basename(path), "a trace or a state")
            print(f"evaldsl: error: {path}: {message}\n  = hint: {hint}", file=sys.stderr)
            return 1
        if err.code != "E501" and path.endswith(SUITE_SUFFIXES) and not starts_as_zip(path):
            # (a suite given for the recording it names: said as that, not as the JSON it
            # is not)
            return _usage(
                f"{path} is a suite, not a recording: `inspect` reads what a run left (a "
                "cassette, a trace, a state)",
                f"`evaldsl inspect --code {path}` prints the pass each of its cases runs; "
                f"`evaldsl check {path}` checks it",
            )
        if err.code == "E501":  # (no suite here: its hint's "suite file's folder" is not)
            err.hint = (
                broken_link(path)
                or "check the spelling; a relative path starts at the working folder"
            )
        hint = f"\n  = hint: {err.hint}" if err.hint else ""
        print(f"evaldsl: error: {err}{hint}", file=sys.stderr)
        return 2 if err.code == "E501" else 1
    if output == "json":
        print(to_json(summaries), file=out)
    else:
        print("\n\n".join(render_text(s) for s in summaries), file=out)
    return 0


def _dataset(path: str) -> bool:
    """Whether a YAML file is a verydia dataset (said as one, not as a suite)."""
    from evaldsl.suites.yamlfile import holds_a_dataset

    try:
        return holds_a_dataset(read_regular(Path(path), MAX_SUITE_BYTES).decode("utf-8-sig"))
    except (FileProblem, UnicodeDecodeError):
        return False


def _usage(message: str, hint: str) -> int:
    print(f"evaldsl: error: {message}\n  = hint: {hint}", file=sys.stderr)
    return 2
