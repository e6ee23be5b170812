"""Suite files: finding them, and reading each with its front end.

Takes paths (files and folders) and gives the suite files under them (`discover`), and a
`SuiteDraft` for a file or for text in memory, read by the front end its extension names:
`.yaml`, `.yml` and `.json` by `yamlfile.py`, anything else as `.eval` but recordings
(JSON lines, events, JSON text) and Inspect AI logs, which are said to be no suites.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from pathlib import Path

from evaldsl.cache.regexes import regex
from evaldsl.gcpause import paused_gc
from evaldsl.language.diagnostics import Diagnostic, lone_carriage_return, not_utf8
from evaldsl.language.limits import MAX_SUITE_BYTES
from evaldsl.language.reading import (
    YAML_SUFFIXES,
    ZIP_MAGIC,
    FileProblem,
    broken_suite_link,
    is_folder,
    is_regular,
    present,
    read_regular,
    starts_as_zip,
    walk_folder,
)
from evaldsl.runs.model import given
from evaldsl.suites.evalfile import eval_draft
from evaldsl.suites.model import SuiteDraft


def is_suite_file(path: Path) -> bool:
    """`.eval` files (but Inspect AI's `.eval` logs, which are ZIP archives), and YAML/JSON
    files whose top level has `cases:`, which every suite has (traceplay's too), or a key
    only a suite has (`suite:`, `expect:`, or `case:`, `Cases:`: a suite whose `cases:` is
    misspelt is read, and says so, where a folder run skipped it unsaid): a run's JSON
    report, a CI workflow with a nested `cases:`, or notes that only mention cases are no
    suites. A file that cannot be read or parsed but mentions such a key is taken: reading
    it as a suite says what is wrong."""
    suffix = path.suffix.lower()  # (a folder's `B.EVAL` and `b.YAML` are suites too)
    if suffix == ".eval":
        return not starts_as_zip(path)
    if suffix not in YAML_SUFFIXES:
        return False
    try:
        with path.open("rb") as f:
            head = f.read(_HEAD)
    except OSError:
        return False
    if not _MENTIONS_KEY.search(head):
        return False
    if _TOP_CASES.search(head):  # a block mapping's key at column 0: no parse needed
        return True
    try:  # (a file shorter than the head was read whole already)
        whole = head if len(head) < _HEAD else read_regular(path, MAX_SUITE_BYTES)
        text = whole.decode("utf-8-sig")
    except (FileProblem, UnicodeDecodeError):
        return True
    return _has_top_cases(text, suffix == ".json")


def is_suite_text(text: str, json_first: bool = False) -> bool:
    """Whether a YAML/JSON document's text is a suite's: its top level has `cases` or
    another key only a suite has, as `is_suite_file` tells (an editor's buffer, which is
    no file yet).

    >>> is_suite_text("cases: []"), is_suite_text("# cases\\njobs: {}")
    (True, False)
    """
    if not _MENTIONS_KEY_TEXT.search(text):
        return False
    if _TOP_CASES_TEXT.search(text):
        return True
    return _has_top_cases(text, json_first)


#: Bytes of a YAML/JSON file a folder walk reads first to tell a suite.
_HEAD = 65536
#: `cases:` as a key at the start of a line: a key of a block mapping at the top level.
_TOP_CASES = regex(rb"^(?:cases|\"cases\"|'cases')[ \t]*:", re.MULTILINE)
#: A suite's own key (or a misspelt `cases`) written as a key somewhere: a file without
#: one is no suite, and is not parsed to tell.
_MENTIONS_KEY = regex(rb"(?i)(?:cases?|suite|expect)[\"']?[ \t]*:")
_TOP_CASES_TEXT = regex(_TOP_CASES.pattern.decode(), re.MULTILINE)
_MENTIONS_KEY_TEXT = regex(_MENTIONS_KEY.pattern.decode())


def _suite_key(key: object) -> bool:
    """Whether a top-level key is one only a suite has: `cases` (or it misspelt in case or
    number: `case`, `Cases`), `suite` or `expect`."""
    return isinstance(key, str) and (key in ("suite", "expect") or key.lower() in _CASES)


_CASES = ("cases", "case")


def _has_top_cases(text: str, json_first: bool) -> bool:
    """Whether the document's top level is a mapping with `cases` or another key only a
    suite has (True when it cannot be parsed: reading it as a suite says why)."""
    if json_first:  # (the standard library's decoder: much faster than composing YAML)
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):
            pass  # not strict JSON: a JSON suite is read as YAML, so it may still be one
        else:
            return isinstance(value, dict) and any(map(_suite_key, value))
    import yaml  # (only for a file that mentions cases off column 0: a faster start)

    from evaldsl.suites.yaml12 import compose, fields

    try:
        root = compose(text)
    except (yaml.YAMLError, RecursionError):
        return True
    return any(map(_suite_key, fields(root)))


def discover(
    paths: Iterable[str | os.PathLike[str]],
) -> tuple[list[Path], list[str], list[str]]:
    """Suite files under the given files and folders (sorted within a folder, linked
    folders walked: `walk_folder`), each once (the first time it is named, directly or in
    a folder); paths that don't exist (an empty path among them: it names no file, where
    `Path` would read it as `.`); and why each folder under them that cannot be read was
    not (its suites are not run: an error, never a silence)."""
    if isinstance(paths, str | bytes | os.PathLike) or not isinstance(paths, Iterable):
        # (a str is iterable: each of its characters was taken for a path)
        one = isinstance(paths, str | bytes | os.PathLike)
        raise TypeError(
            f"discover() takes a list of paths, not {given(paths)}"
            + (": put one path in a list, discover([path])" if one else "")
        )
    found: list[Path] = []
    missing: list[str] = []
    unreadable: list[str] = []
    seen: set[str] = set()

    def add(file: Path) -> None:
        key = os.path.realpath(file)
        if key not in seen:
            seen.add(key)
            found.append(file)

    for i, raw in enumerate(paths):
        if not isinstance(raw, str | os.PathLike):
            raise TypeError(
                f"discover() takes paths as str or os.PathLike, and item {i} is {given(raw)}"
            )
        p = Path(raw)
        if not os.fspath(raw):
            missing.append("")
        elif is_folder(p):
            files, cannot = walk_folder(p)
            unreadable.extend(cannot)
            for sub in map(Path, files):
                if is_regular(sub):
                    if is_suite_file(sub):
                        add(sub)
                elif (broken := broken_suite_link(sub)) is not None:
                    unreadable.append(broken)
        elif present(p):  # a file, a pipe, a device, unreadable: reading it says which
            add(p)
        else:
            missing.append(str(raw))
    return found, missing, unreadable


def discovery_problems(missing: list[str], unreadable: list[str]) -> list[str]:
    """The errors of `discover`'s paths that name nothing and folders it could not read,
    as a command says them (each after `evaldsl: error: `): none of them is a silence.

    >>> discovery_problems(["x"], ['cannot read folder "d": Permission denied'])
    ['no such file or folder: x', 'cannot read folder "d": Permission denied']
    """
    return [f"no such file or folder: {shown_missing(m)}" for m in missing] + unreadable


def shown_missing(path: str) -> str:
    """A path `discover` found missing, as an error names it: an empty one as `''`, with
    what to write instead.

    >>> shown_missing("")
    "'' (an empty path names nothing: write . for the current folder)"
    """
    return path or "'' (an empty path names nothing: write . for the current folder)"


def read_draft(path: str | os.PathLike[str]) -> SuiteDraft:
    """Read a suite file with the front end its extension names."""
    p = Path(path)
    suffix = p.suffix.lower()  # (`b.YAML` is a YAML suite, `B.EVAL` an `.eval` one)
    try:
        raw = read_regular(p, MAX_SUITE_BYTES)
    except FileProblem as err:
        if suffix == ".eval" and starts_as_zip(p):  # (a log too large to read as a suite)
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
    if suffix == ".eval" and raw.startswith(ZIP_MAGIC):
        return _inspect_log(p)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        diag = not_utf8(str(p), raw, err)
        return SuiteDraft(p.stem, str(p), p.parent, diagnostics=(diag,))
    if suffix in YAML_SUFFIXES:
        return _yaml_draft(text, str(p))
    if suffix in RECORDING_SUFFIXES or (suffix != ".eval" and _RECORDED.match(text)):
        return _recording(p)
    lone = lone_carriage_return(str(p), text) if "\r" in text else None
    if lone is not None:  # (its lines would not be where an editor shows them: refused)
        return SuiteDraft(p.stem, str(p), p.parent, diagnostics=(lone,))
    return eval_draft(text, str(p))


#: Files of recordings (JSON lines, server-sent events), never of suites.
RECORDING_SUFFIXES = (".jsonl", ".ndjson", ".sse")
#: How a recording's text starts (JSON, or a server-sent event's field), where no `.eval`
#: statement does: a file of another name (`stream.txt`) that starts so is a recording.
_RECORDED = regex(r"\s*(?:[{\[]|(?:event|data):)")


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
        if Path(path).suffix.lower() in YAML_SUFFIXES:
            return _yaml_draft(text, path)
        return eval_draft(text, path)


def _yaml_draft(text: str, path: str) -> SuiteDraft:
    # Imported when a YAML or JSON suite is read: the YAML front end loads PyYAML, which
    # `evaldsl.compile` and `.eval` suites never need (a faster start).
    from evaldsl.suites.yamlfile import yaml_draft

    return yaml_draft(text, path)
