"""Code actions: the quick fixes of a document's diagnostics.

Takes the diagnostics the server published for a document, each with its fix in `data`
when it has one (`documents.lsp_diagnostic`), and the range the editor asks about, and
gives one `quickfix` code action for each diagnostic there with a fix: the edit its hint
describes (`write `tool search called twice``, `did you mean `called`?`). The fixes are
made where the diagnostics are (`Diagnostic.fix`), never read back from a hint's words.

In a YAML suite an edit of DSL text is also an edit of YAML: `yaml_fixable` keeps a fix
only where it cannot change what the YAML says (a block scalar; a plain or quoted scalar
the new text adds none of that style's special characters to; a field's name renamed to
the one it was meant to be).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from lsprotocol import types

from evaldsl.language.diagnostics import Fix
from evaldsl.suites.model import Layout
from evaldsl.suites.places import TextPlace

QUICK_FIX = types.CodeActionKind.QuickFix

#: What a plain scalar may not gain: flow collections' punctuation (a DSL list in
#: `expect: [...]` is a YAML flow sequence) and what starts a mapping value or a comment.
_PLAIN_SPECIAL = (",", "[", "]", "{", "}", ": ", " #")
#: The characters that start something else than a plain scalar at its first character.
_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")


def wanted(only: Sequence[str] | None) -> bool:
    """Whether a request for these kinds of action (None: any) takes quick fixes: a kind
    asked for takes those it is a prefix of, by dotted parts (LSP's hierarchy)."""
    return only is None or any(k == QUICK_FIX or QUICK_FIX.startswith(f"{k}.") for k in only)


def quick_fixes(
    uri: str, diagnostics: Sequence[types.Diagnostic], asked: types.Range
) -> list[types.CodeAction]:
    """A quick fix for each of the diagnostics that touch `asked` and have a fix."""
    actions = []
    for d in diagnostics:
        edit = _fix_edit(d.data)
        if edit is None or not _touches(d.range, asked):
            continue
        actions.append(
            types.CodeAction(
                title=f"Replace with `{edit.new_text}`",
                kind=QUICK_FIX,
                diagnostics=[d],
                edit=types.WorkspaceEdit(changes={uri: [edit]}),
                is_preferred=True,
            )
        )
    return actions


def _fix_edit(data: Any) -> types.TextEdit | None:
    """The TextEdit `documents.lsp_diagnostic` put in a diagnostic's `data`, if any."""
    if not isinstance(data, dict) or not isinstance(data.get("fix"), dict):
        return None
    fix = data["fix"]
    start, end = fix["range"]["start"], fix["range"]["end"]
    return types.TextEdit(
        range=types.Range(
            start=types.Position(line=start["line"], character=start["character"]),
            end=types.Position(line=end["line"], character=end["character"]),
        ),
        new_text=fix["newText"],
    )


def _touches(a: types.Range, b: types.Range) -> bool:
    """Whether two ranges share a position (a cursor at either end of a range touches it)."""
    return (a.start.line, a.start.character) <= (b.end.line, b.end.character) and (
        b.start.line,
        b.start.character,
    ) <= (a.end.line, a.end.character)


def yaml_fixable(fix: Fix, layout: Layout, lines: Sequence[str]) -> bool:
    """Whether a fix of DSL text in a YAML suite leaves the YAML around it as it was: on
    one line of a scalar of DSL text, with no character that would end or change that
    scalar (`lines`: the buffer's, to see the text the fix replaces)."""
    if fix.line != fix.end_line or "\n" in fix.text or not 1 <= fix.line <= len(lines):
        return False
    line0, column0 = fix.line - 1, fix.column - 1
    old = lines[line0][column0 : fix.end_column - 1]
    if _key_renamed(lines[line0], column0, fix.end_column - 1, fix.text):
        return True
    holder: TextPlace | None = None  # the scalar starting last before the fix on its line
    for place in layout.texts:
        if place.style in ("|", ">"):
            last = place.end_line - (1 if place.end_column == 0 else 0)
            if place.start_line < line0 <= last:
                return True  # (a block scalar holds any text on one of its lines)
        elif (
            place.start_line == line0
            and place.start_column <= column0
            and (holder is None or place.start_column > holder.start_column)
        ):
            holder = place  # (`expect: [a, b]`: several on one line)
    return holder is not None and _flow_safe(holder, column0, old, fix.text)


def _key_renamed(line: str, start: int, end: int, new: str) -> bool:
    """Whether the fix is a field's name written as another (E508's did-you-mean): a word
    for a word, where a mapping key is written plain (`expectt:`) or in quotes
    (`"expectt":`); a YAML that only renames a key says the rest as it did."""
    old = line[start:end]
    if not (_WORD.fullmatch(old) and _WORD.fullmatch(new)):
        return False
    before, after = line[:start], line[end:]
    for quote in ('"', "'"):
        if before.endswith(quote) and after.startswith(quote):
            before, after = before[:-1], after[1:]
            break
    else:
        if before[-1:].isalnum() or before[-1:] in ("_", "-", "."):
            return False  # (inside a longer word: no key of its own)
    key_start = not before.strip() or before.rstrip().endswith(("-", "{", ","))
    return key_start and after.lstrip().startswith(":")


#: A field's name as a plain word.
_WORD = re.compile(r"[A-Za-z_$][A-Za-z0-9_$-]*")


def _flow_safe(place: TextPlace, column0: int, old: str, new: str) -> bool:
    """Whether `new` in place of `old` keeps a plain or quoted scalar what it was."""
    if place.style == '"':
        return '"' not in new and "\\" not in new
    if place.style == "'":
        return "'" not in new
    if any(new.count(special) > old.count(special) for special in _PLAIN_SPECIAL):
        return False
    if new.endswith(":") and not old.endswith(":"):
        return False  # (`x:` at the end of a line starts a mapping)
    return column0 != place.start_column or not new or new[0] not in _INDICATORS
