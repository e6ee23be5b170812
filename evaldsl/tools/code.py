"""`evaldsl inspect --code SUITE`: the generated pass each case of a suite runs.

Takes a suite file and gives, for each case that would run, the source of the function
its run is indexed by (`runs/codegen.py`) with what each name in it holds; the exit code
is 1 when the suite has errors (a case with errors has no pass; the errors are shown on
standard error) or no case, 2 when it does not exist, is a folder or is no suite (a
recording: the error says so, on standard error).
The pass printed is the one `evaldsl run` uses: with timestamps and prices (the case's
metrics), and for a streamed recording (`.jsonl`) the variant over the typed decoder's
structs of each event kind (`runs/decode.py`), with the fields it reads of each. A small
run is indexed by the reference pass (`runs/index.py`) until its assertions recur
(`runs/passes.py`, `GENERATE_FROM`): each case's first line says so.
"""

from __future__ import annotations

import sys
from typing import TextIO

import attrs

from evaldsl.language.diagnostics import render
from evaldsl.language.reading import is_folder, present
from evaldsl.runs.decode import KINDS
from evaldsl.runs.events import LINE_EXTENSIONS
from evaldsl.runs.passes import (
    GENERATE_AFTER,
    GENERATE_FROM,
    GENERATE_FROM_EVENTS,
    TooLarge,
    pass_for,
    read_fields,
)
from evaldsl.suites.build import load_suite

#: When the printed pass runs (`passes.index_events_fast`), said under each case's name.
_WHEN = (
    f"# (this pass indexes a run of {GENERATE_FROM_EVENTS:,} events or "
    f"{GENERATE_FROM >> 10} KiB or more, and any run once these assertions have run "
    f"{GENERATE_AFTER} times; a smaller run is indexed by the reference pass, "
    "evaldsl/runs/index.py)"
)


#: The codes of a file that cannot be read as a suite (E501) or is none (E504: a
#: recording, an Inspect AI log, not UTF-8 text): given to `--code`, bad usage.
NOT_A_SUITE = ("E501", "E504")

#: How a response's `usage` is decoded (`decode.usage_struct`).
_USAGE = "usage (its token counts only)"


def code_command(path: str, out: TextIO) -> int:
    """Print each case's generated pass."""
    if not present(path):
        print(f"evaldsl: error: no such suite file: {path}", file=sys.stderr)
        return 2
    if is_folder(path):
        print(
            f'evaldsl: error: "{path}" is a folder: `inspect --code` reads one suite file\n'
            "  = hint: name one of its `.eval` or YAML suites",
            file=sys.stderr,
        )
        return 2
    suite = load_suite(path)
    if not suite.cases:
        # (a file that is no suite (a recording, a log, binary bytes) has no case, only
        # the error that says what it is: said, never an empty output)
        if suite.errors:
            print(render(suite.errors), file=sys.stderr)
            return 2 if all(d.code in NOT_A_SUITE for d in suite.errors) else 1
        print(f"evaldsl: error: {path} has no case: no pass to print", file=sys.stderr)
        return 1
    for case in suite.cases:
        print(f"# case {case.name!r} ({suite.path}:{case.line})", file=out)
        if case.error is not None:
            print(f"# {case.error}\n", file=out)
            continue
        print(_WHEN, file=out)
        spec = case.source
        streamed = spec is not None and (spec.path or "").lower().endswith(LINE_EXTENSIONS)
        needs = attrs.evolve(case.needs, times=True, cost=True)  # as `evaldsl run` reads
        try:
            made = pass_for(needs, raw=streamed, by_kind=streamed)
        except TooLarge as why:
            print(f"# no generated pass ({why}): the reference pass runs this case\n", file=out)
            continue
        if streamed:
            for kind, fields in made.reads:
                if kind in KINDS:
                    names = ", ".join(_USAGE if f == "usage" else f for f, _ in fields)
                    print(f"# {kind} events decoded with: {names}", file=out)
            print(
                "# (a file with other kinds of events: every event with "
                + ", ".join(sorted(read_fields(needs)))
                + ")",
                file=out,
            )
        for note in made.notes:
            print(f"# {note}", file=out)
        print(made.source, file=out)
    if suite.errors:
        # (a case of a suite whose header has errors says only "the suite's header has
        # errors": the exit code 1 is then explained here, as `run` and `check` show them)
        print(render(suite.errors), file=sys.stderr)
        return 1
    return 0
