"""Suite files: finding them, and reading each with its front end.

Takes paths (files and folders) and gives the suite files under them (`discover`), and a
`SuiteDraft` for a file or for text in memory, read by the front end its extension names:
`.yaml`, `.yml` and `.json` by `yamlfile.py`, anything else as `.eval` but recordings
(JSON lines, events, JSON text) and Inspect AI logs, which are said to be no suites.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from evaldsl.gcpause import paused_gc
from evaldsl.language.diagnostics import Diagnostic, not_utf8
from evaldsl.language.limits import MAX_SUITE_BYTES
from evaldsl.language.reading import (
    YAML_SUFFIXES,
    ZIP_MAGIC,
    FileProblem,
    is_folder,
    is_regular,
    present,
    read_regular,
    starts_as_zip,
)
from evaldsl.suites.evalfile import eval_draft
from evaldsl.suites.model import SuiteDraft


def is_suite_file(path: Path) -> bool:
    """`.eval` files (but Inspect AI's `.eval` logs, which are ZIP archives), and YAML/JSON
    files whose top level has `cases:`."""
    if path.suffix == ".eval":
        return not starts_as_zip(path)
    if path.suffix not in YAML_SUFFIXES:
        return False
    try:
        with path.open("rb") as f:
            head = f.read(65536)
    except OSError:
        return False
    return b"cases" in head


def discover(paths: Iterable[str | os.PathLike[str]]) -> tuple[list[Path], list[str]]:
    """Suite files under the given files and folders (sorted), and paths that don't exist."""
    found: list[Path] = []
    missing: list[str] = []
    for raw in paths:
        p = Path(raw)
        if is_folder(p):
            for sub in sorted(p.rglob("*")):
                parts = sub.relative_to(p).parts
                if any(
                    part.startswith(".") or part in ("node_modules", "__pycache__")
                    for part in parts
                ):
                    continue
                if is_regular(sub) and is_suite_file(sub):
                    found.append(sub)
        elif present(p):  # a file, a pipe, a device, unreadable: reading it says which
            found.append(p)
        else:
            missing.append(str(raw))
    return found, missing


def read_draft(path: str | os.PathLike[str]) -> SuiteDraft:
    """Read a suite file with the front end its extension names."""
    p = Path(path)
    try:
        raw = read_regular(p, MAX_SUITE_BYTES)
    except FileProblem as err:
        if p.suffix == ".eval" and starts_as_zip(p):  # (a log too large to read as a suite)
            return _inspect_log(p)
        hint = (
            "evaldsl reads suites from regular files only: save it to a file first"
            if err.kind == "special"
            else None
        )
        # (an unreadable file's problem already says `cannot read "PATH": WHY`)
        what = err.message.removeprefix("cannot read ")
        diag = Diagnostic.in_file(str(p), "E501", f"cannot read suite file: {what}", hint=hint)
        return SuiteDraft(p.stem, str(p), p.parent, diagnostics=(diag,))
    if p.suffix == ".eval" and raw.startswith(ZIP_MAGIC):
        return _inspect_log(p)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        diag = not_utf8(str(p), raw, err)
        return SuiteDraft(p.stem, str(p), p.parent, diagnostics=(diag,))
    if p.suffix in YAML_SUFFIXES:
        return _yaml_draft(text, str(p))
    if p.suffix in RECORDING_SUFFIXES or (p.suffix != ".eval" and _RECORDED.match(text)):
        return _recording(p)
    return eval_draft(text, str(p))


#: Files of recordings (JSON lines, server-sent events), never of suites.
RECORDING_SUFFIXES = (".jsonl", ".ndjson", ".sse")
#: How a recording's text starts (JSON, or a server-sent event's field), where no `.eval`
#: statement does: a file of another name (`stream.txt`) that starts so is a recording.
_RECORDED = re.compile(r"\s*(?:[{\[]|(?:event|data):)")


def _recording(p: Path) -> SuiteDraft:
    """The draft of a recording named as a suite (`evaldsl run trace.jsonl`): its one
    error, E504, where reading it as `.eval` text gave an error for every line."""
    return _no_suite(
        p,
        "this is a recording (JSON or events), not an evaldsl suite",
        f'name it in a suite: `cassette "{p.name}"` (or `trace "{p.name}"`), then the '
        f"assertions to check on it; `evaldsl inspect {p.name}` shows what it holds",
    )


def _inspect_log(p: Path) -> SuiteDraft:
    """The draft of an Inspect AI `.eval` log named as a suite: its one error, E504."""
    return _no_suite(
        p,
        "this is an Inspect AI log (a ZIP archive), not an evaldsl suite",
        f'name it in a suite: `cassette "{p.name}"` (each sample becomes a case), '
        f"or score it: `evaldsl score PROGRAM {p.name}`",
    )


def _no_suite(p: Path, message: str, hint: str) -> SuiteDraft:
    """The draft of a file that is no suite: its one error, E504."""
    diag = Diagnostic.in_file(str(p), "E504", message, hint=hint)
    return SuiteDraft(p.stem, str(p), p.parent, diagnostics=(diag,))


def draft_from_text(text: str, path: str) -> SuiteDraft:
    """A draft from text in memory (an editor's unsaved buffer); the front end is chosen
    by the path's extension, and relative paths resolve next to `path`. The collector is
    paused as loading a file pauses it: an editor drafts its buffer on every change, and
    collections of the many small objects made grew its time faster than the text."""
    with paused_gc():
        if Path(path).suffix in YAML_SUFFIXES:
            return _yaml_draft(text, path)
        return eval_draft(text, path)


def _yaml_draft(text: str, path: str) -> SuiteDraft:
    # Imported when a YAML or JSON suite is read: the YAML front end loads PyYAML, which
    # `evaldsl.compile` and `.eval` suites never need (a faster start).
    from evaldsl.suites.yamlfile import yaml_draft

    return yaml_draft(text, path)
