"""Facts about a case's source file, for the checker.

Takes a source line (`cassette "x.jsonl"`, `state "s.json"`, `dataset "rows.json"`,
`trace "t.json" as otel`) and the suite's folder, and gives `SourceFacts`: what kind of
run the file holds, the tool names it records (for did-you-mean on tool names) and the
nodes a state visited; or a diagnostic at the source line when the file is missing or
cannot be read as a run.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path, PurePath
from typing import Any

from evaldsl.check.environment import SourceFacts
from evaldsl.language import ast
from evaldsl.language.diagnostics import Diagnostic, did_you_mean
from evaldsl.language.reading import broken_link, near_entries, present
from evaldsl.language.source import Source
from evaldsl.runs import heldruns
from evaldsl.runs.cassette import EventStream
from evaldsl.runs.detect import check_head, load_run, read_head
from evaldsl.runs.events import tool_call_name
from evaldsl.runs.heldfiles import learnt
from evaldsl.runs.model import Run, RunError
from evaldsl.runs.samplelogs import file_key
from evaldsl.runs.toolnames import PartialNames, recorded_tool_names


def read_facts(
    decl: ast.SourceDecl, base_dir: Path, source: Source, sample: str | None = None
) -> SourceFacts | Diagnostic:
    """Read what the checker needs from a case's source file (of a streamed recording, or
    a large JSONL file of a format read whole, a bounded head: see `runs/toolnames.py`
    and `detect.read_head`); a trace whose head shows nothing recognised is a diagnostic
    (`sample`: which sample of an Inspect AI log the case reads)."""
    path = base_dir / decl.path
    if not decl.path.strip():  # (joined to the folder, it would name the folder itself)
        return Diagnostic.at(
            source,
            decl.span,
            "E503",
            f"the {decl.kind} line names no file: its path is empty",
            "write the path of the file between the quotes: "
            + {"cassette": 'cassette "runs/x.jsonl"', "state": 'state "states/final.json"'}.get(
                decl.kind, f'{decl.kind} "runs/x.json"'
            ),
        )
    if not present(path):
        absolute = Path(decl.path).is_absolute()
        return Diagnostic.at(
            source,
            decl.span,
            "E501",
            f'file not found: "{decl.path}"' + ("" if absolute else f" (looked in {base_dir})"),
            broken_link(path)
            or _near_path(decl.path, path)
            or (None if absolute else "paths are relative to the suite file"),
        )
    if decl.kind == "dataset":
        return SourceFacts(kind=None)
    # what the file tells is the same for every case that names it: learnt once a check
    found = learnt(
        ("source facts", str(path), decl.format, sample), lambda: _facts(path, decl, sample)
    )
    if isinstance(found, RunError):
        return Diagnostic.at(
            source, decl.span, found.code, _unread(found, path, decl.path), found.hint
        )
    return found


def _unread(found: RunError, path: Path, written: str) -> str:
    """Why the file `written` (at `path`) cannot be read, said once: a reason that names
    the file already (`cannot read "x": Permission denied`, `"x" is a folder`) is not
    prefixed again, and names it as the suite writes it."""
    named, said = f'"{path}"', f'"{written}"'
    if named in found.message:
        return found.message.replace(named, said)
    return f"cannot read {said}: {found.message}"


#: A folder of at most this many names is listed when none of them is near.
SHOWN_NAMES = 8


def _near_path(written: str, path: Path) -> str | None:
    """A hint for a missing file: the name in its folder that it is likely a slip of
    (`xiamen.json` for `xiamen.jsonl`), or the folder that is missing, with a near name
    beside it (`cassette/` for `cassettes/`)."""
    written_path = PurePath(written)
    if present(path.parent):
        names = _names(path.parent)
        guess = _near(path.name, names)
        if guess:
            return f'did you mean "{written_path.with_name(guess)}"?'
        shown = sorted(n for n in names if not n.startswith("."))
        if 0 < len(shown) <= SHOWN_NAMES:  # a small folder: what it holds says the most
            return f'"{path.parent}" holds ' + ", ".join(shown)
        return None
    folder = path.parent
    if folder.name and present(folder.parent):
        guess = _near(folder.name, _names(folder.parent, folders=True))
        if guess:
            near = written_path.parent.with_name(guess) / written_path.name
            return (
                f'there is no folder "{folder.name}" in "{folder.parent}": did you mean "{near}"?'
            )
    if not written_path.parent.name:
        return None
    relative = "" if written_path.is_absolute() else ": paths are relative to the suite file"
    return f'there is no folder "{written_path.parent}"{relative}'


def _near(name: str, names: list[str]) -> str | None:
    """The name `name` is likely a slip of: close as a whole and by its stem (a shared
    `.jsonl` alone makes `nope.jsonl` look like `xiamen.jsonl`)."""
    guess = did_you_mean(name, names)
    if guess is None or did_you_mean(PurePath(name).stem, [PurePath(guess).stem]) is None:
        return None
    return guess


def _names(folder: Path, *, folders: bool = False) -> list[str]:
    """The names in `folder` (only its folders' with `folders`), as far as a hint reads."""
    return [e.name for e in near_entries(folder) if not folders or e.is_dir()]


def _facts(path: Path, decl: ast.SourceDecl, sample: str | None) -> SourceFacts | RunError:
    """What `path` holds, or why it cannot be read. A run read whole is held for the
    case's run (`heldruns`): it need not read the file again."""
    try:
        head = read_head(str(path), decl.format) if sample is None else None
        if head is not None:  # a large JSONL file read whole by the run: its head here
            run, offset = head
            found = _called(run.events or [])
            return SourceFacts(kind="trace", tools=PartialNames(found, str(path), offset))
        where = str(path)
        key = file_key(where)  # (before reading: a file changed since is read again)
        heldruns.before_reading(key)
        run = load_run(path, decl.format, sample=sample)
        facts = _run_facts(run)
        heldruns.keep((where, decl.format, sample), key, run)
        return facts
    except RunError as err:
        return err


def _run_facts(run: Run) -> SourceFacts:
    """What the checker needs of a run read (a `RunError` when its head shows nothing
    recognised)."""
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


def _called(events: Iterable[dict[str, Any]]) -> frozenset[str]:
    return frozenset(n for n in (tool_call_name(e) for e in events) if n is not None)
