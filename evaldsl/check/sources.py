"""Facts about a case's source file, for the checker.

Takes a source line (`cassette "x.jsonl"`, `state "s.json"`, `dataset "rows.json"`,
`trace "t.json" as otel`) and the suite's folder, and gives `SourceFacts`: what kind of
run the file holds, the tool names it records (for did-you-mean on tool names) and the
nodes a state visited; or a diagnostic at the source line when the file is missing or
cannot be read as a run.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from evaldsl.check.environment import SourceFacts
from evaldsl.language import ast
from evaldsl.language.diagnostics import Diagnostic
from evaldsl.language.reading import present
from evaldsl.language.source import Source
from evaldsl.runs.cassette import EventStream
from evaldsl.runs.detect import check_head, load_run, read_head
from evaldsl.runs.events import tool_call_name
from evaldsl.runs.heldfiles import learnt
from evaldsl.runs.model import RunError
from evaldsl.runs.toolnames import PartialNames, recorded_tool_names


def read_facts(
    decl: ast.SourceDecl, base_dir: Path, source: Source, sample: str | None = None
) -> SourceFacts | Diagnostic:
    """Read what the checker needs from a case's source file (of a streamed recording, or
    a large JSONL file of a format read whole, a bounded head: see `runs/toolnames.py`
    and `detect.read_head`); a trace whose head shows nothing recognised is a diagnostic
    (`sample`: which sample of an Inspect AI log the case reads)."""
    path = base_dir / decl.path
    if not present(path):
        return Diagnostic.at(
            source,
            decl.span,
            "E501",
            f'file not found: "{decl.path}" (looked in {base_dir})',
            "paths are relative to the suite file",
        )
    if decl.kind == "dataset":
        return SourceFacts(kind=None)
    # what the file tells is the same for every case that names it: learnt once a check
    found = learnt(
        ("source facts", str(path), decl.format, sample), lambda: _facts(path, decl, sample)
    )
    if isinstance(found, RunError):
        return Diagnostic.at(
            source,
            decl.span,
            found.code,
            f'cannot read "{decl.path}": {found.message}',
            found.hint,
        )
    return found


def _facts(path: Path, decl: ast.SourceDecl, sample: str | None) -> SourceFacts | RunError:
    """What `path` holds, or why it cannot be read."""
    try:
        head = read_head(str(path), decl.format) if sample is None else None
        if head is not None:  # a large JSONL file read whole by the run: its head here
            run, offset = head
            found = _called(run.events or [])
            return SourceFacts(kind="trace", tools=PartialNames(found, str(path), offset))
        run = load_run(path, decl.format, sample=sample)
        if run.state is not None:
            visited = run.state.get("visited_nodes")
            nodes = (
                frozenset(n for n in visited if isinstance(n, str))
                if isinstance(visited, list)
                else None
            )
            return SourceFacts(kind="state", nodes=nodes)
        if run.events is None:
            return SourceFacts(kind="value")
        check_head(run)
        if isinstance(run.events, EventStream):
            tools = recorded_tool_names(run.events)  # a bounded head: the run reads it all
        else:
            tools = _called(run.events)
        return SourceFacts(kind="trace", tools=tools)
    except RunError as err:
        return err


def _called(events: Iterable[dict[str, Any]]) -> frozenset[str]:
    return frozenset(n for n in (tool_call_name(e) for e in events) if n is not None)
