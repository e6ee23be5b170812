"""Documents: what the editor's buffers are, and positions and diagnostics in LSP terms.

Takes an editor's document (its URI, language id and text) and gives the file it stands
for and its kind (`.eval`, or a YAML/JSON suite), the buffer's lines, and the one place
positions are converted: LSP speaks UTF-16 code units, evaldsl code points, and every
conversion goes through `evaldsl.language.source.utf16_column` / `codepoint_column` with
the text of the line as it is in the buffer. Diagnostics are `evaldsl check`'s, grouped
by the file they are in (a dataset's problems belong to the dataset file).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from lsprotocol import types
from pygls.uris import to_fs_path
from pygls.workspace import TextDocument, Workspace

from evaldsl.language.diagnostics import Diagnostic, Fix, lone_carriage_return
from evaldsl.language.reading import YAML_SUFFIXES
from evaldsl.language.source import codepoint_column, utf16_column
from evaldsl.suites.build import check_draft
from evaldsl.suites.files import is_suite_text as suite_text
from evaldsl.suites.model import SuiteDraft

Kind = Literal["eval", "yaml"]

_SEVERITY = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "info": types.DiagnosticSeverity.Information,
}


#: A line as LSP counts lines, with its end: only `\n`, `\r\n` and `\r` end one.
_LSP_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


class EditorDocument(TextDocument):
    """An open buffer whose lines are the editor's: pygls splits them with `str.splitlines`,
    which also ends a line at U+2028, U+2029, U+0085, \\x0b, \\x0c and \\x1c-\\x1e, so
    an edit after one of those landed on another line than the editor's (the server's
    copy of the buffer drifted, and formatting rewrote assertions)."""

    @property
    def lines(self) -> Sequence[str]:
        """The buffer's lines with their ends (none past a last line end, as pygls's)."""
        return tuple(_LSP_LINE.findall(self.source))


class EditorWorkspace(Workspace):
    """pygls's workspace, whose open documents are `EditorDocument`s."""

    def _create_text_document(
        self,
        doc_uri: str,
        source: str | None = None,
        version: int | None = None,
        language_id: str | None = None,
    ) -> TextDocument:
        return EditorDocument(
            doc_uri,
            source=source,
            version=version,
            language_id=language_id,
            sync_kind=self._sync_kind,
            position_codec=self.position_codec,
        )


def document_path(doc: TextDocument) -> str:
    """The file a document is (or would be) saved as; relative paths resolve next to it."""
    path = to_fs_path(doc.uri) if doc.uri.startswith("file:") else None
    if path:
        return path
    suffix = ".yaml" if doc.language_id in ("yaml", "json") else ".eval"
    return os.path.join(os.getcwd(), "untitled" + suffix)


def document_kind(path: str, language_id: str | None = None) -> Kind:
    suffix = Path(path).suffix.lower()
    if suffix in YAML_SUFFIXES:
        return "yaml"
    if suffix == ".eval":
        return "eval"
    return "yaml" if language_id in ("yaml", "json") else "eval"


class Lines(list[str]):
    """A buffer's lines as evaldsl reads them, and `shift`: the UTF-16 code units before
    the first line's text that evaldsl does not read (a byte order mark: the editor counts
    it as a character of line 0, evaldsl leaves it out)."""

    shift = 0


def buffer_lines(text: str) -> Lines:
    """The buffer's lines, numbered as evaldsl numbers them (a line ends at `\\n`), its
    byte order mark, if any, left out (and counted in `shift`)."""
    lines = Lines(line.removesuffix("\r") for line in text.removeprefix("\ufeff").split("\n"))
    lines.shift = 1 if text.startswith("\ufeff") else 0
    return lines


def _character(lines: Sequence[str], line0: int, column: int) -> int:
    """The UTF-16 character of a 1-based code-point column of a 0-based line."""
    shift = lines.shift if isinstance(lines, Lines) and line0 == 0 else 0
    return shift + utf16_column(line_at(lines, line0 + 1), column)


def line_starts(text: str) -> list[int]:
    starts = [0]
    i = text.find("\n")
    while i >= 0:
        starts.append(i + 1)
        i = text.find("\n", i + 1)
    return starts


def line_at(lines: Sequence[str], line: int) -> str:
    """A 1-based line of the buffer ("" past its end)."""
    return lines[line - 1] if 1 <= line <= len(lines) else ""


def lsp_position(lines: Sequence[str], line0: int, column0: int) -> types.Position:
    """An LSP position (UTF-16) for a 0-based line and 0-based code-point column."""
    return types.Position(line=line0, character=_character(lines, line0, column0 + 1))


def cursor(lines: Sequence[str], position: types.Position) -> tuple[int, int]:
    """A 0-based line and 0-based code-point column for an incoming LSP position."""
    character = position.character
    if position.line == 0 and isinstance(lines, Lines):
        character = max(character - lines.shift, 0)
    return position.line, codepoint_column(line_at(lines, position.line + 1), character) - 1


# ---- diagnostics ------------------------------------------------------------------------


def lsp_diagnostic(d: Diagnostic, lines: Sequence[str], fix: bool = True) -> types.Diagnostic:
    """An evaldsl diagnostic as LSP shows it; columns converted with the buffer's lines.

    The message is `check`'s message; the hint, if any, follows on its own line. Its fix
    (unless `fix` is False) goes in `data` as a TextEdit's JSON, `{"fix": {"range": …,
    "newText": …}}`, where the code actions find it (`actions.py`).
    """
    start = types.Position(
        line=max(d.line - 1, 0), character=_character(lines, d.line - 1, d.column)
    )
    end = types.Position(
        line=max(d.end_line - 1, start.line),
        character=_character(lines, d.end_line - 1, d.end_column),
    )
    if (end.line, end.character) <= (start.line, start.character):
        # an empty range (a position, not a span): cover the character there
        end = types.Position(line=start.line, character=_character(lines, start.line, d.column + 1))
    message = d.message + (f"\nhint: {d.hint}" if d.hint else "")
    return types.Diagnostic(
        range=types.Range(start=start, end=end),
        message=message,
        severity=_SEVERITY.get(d.severity, types.DiagnosticSeverity.Error),
        code=d.code,
        source="evaldsl",
        data={"fix": _edit_json(d.fix, lines)} if fix and d.fix is not None else None,
    )


def _edit_json(fix: Fix, lines: Sequence[str]) -> dict[str, Any]:
    """A fix as the JSON of an LSP TextEdit (UTF-16 positions)."""

    def position(line: int, column: int) -> dict[str, int]:
        return {"line": line - 1, "character": _character(lines, line - 1, column)}

    return {
        "range": {
            "start": position(fix.line, fix.column),
            "end": position(fix.end_line, fix.end_column),
        },
        "newText": fix.text,
    }


def is_suite_text(text: str, kind: Kind) -> bool:
    """`.eval` text always is; a YAML/JSON document only when its top level has `cases`
    (a CI workflow that mentions cases in a comment, or a ConfigMap's `usecases`, is not)."""
    return kind == "eval" or suite_text(text.removeprefix("\ufeff"), text.lstrip().startswith("{"))


def diagnostics_by_file(
    text: str, path: str, kind: Kind, draft: Callable[[], SuiteDraft], *, suite: bool | None = None
) -> dict[str, list[Diagnostic]]:
    """The diagnostics `evaldsl check` gives the text (`check_draft` of its draft, which
    `draft` gives: made once a version, what drafting raises it raises), grouped by the
    file they are in (normalised paths); for text with a lone CR, that one E504 alone.
    None for a YAML or JSON text that is no suite, unless `suite` says to check it as one
    (the server's buffer that was a suite before this edit: `check`'s E504 says why it
    no longer reads as one)."""
    if not (is_suite_text(text, kind) if suite is None else suite):
        return {}
    own = os.path.normpath(os.path.abspath(path))
    lone = lone_carriage_return(path, text)
    if lone is not None:
        # the editor ends a line at a lone CR, evaldsl does not: the check's positions
        # after one would be on other lines than the editor shows, so the file is refused
        return {own: [lone]}
    groups: dict[str, list[Diagnostic]] = {own: []}
    for d in check_draft(draft()):
        where = own if d.path == path else os.path.normpath(os.path.abspath(d.path))
        groups.setdefault(where, []).append(d)
    return groups
