"""Document symbols: a suite and its cases, for the editor's outline.

Takes an `Analysis` and gives the suite as one symbol spanning the document, named as
the suite is (`suite "x"`, `suite: x`, else the file's stem), with a child for each case:
its name, its lines (without the blank lines and comments before the next case) and its
source as the detail. The places are the front end's (`Layout`: a `.eval` file's `case`
lines, a YAML suite's `cases:` items), read from the buffer's draft; a `.eval` file
without `case` lines is one case with no line of its own, so the suite has no children.
Clients without hierarchical symbols get the same as a flat list.
"""

from __future__ import annotations

from collections.abc import Sequence

from lsprotocol import types

from evaldsl.suites.model import CaseDraft
from evaldsl.tools.lsp.analysis import Analysis
from evaldsl.tools.lsp.documents import is_suite_text, lsp_position


def document_symbols(analysis: Analysis) -> list[types.DocumentSymbol]:
    """The suite, with its cases as children ([] for a YAML file that is no suite)."""
    if not is_suite_text(analysis.text, analysis.kind):
        return []
    draft, lines = analysis.draft, analysis.lines
    layout = draft.layout
    cases = []
    if len(layout.cases) == len(draft.cases):  # (a `.eval` file's implicit case: none)
        for case, (first, last) in zip(draft.cases, layout.cases, strict=True):
            cases.append(_case_symbol(case, first, last, lines))
    end = lsp_position(lines, len(lines) - 1, len(lines[-1]))
    named = layout.suite if layout.suite is not None and layout.suite < len(lines) else None
    return [
        types.DocumentSymbol(
            name=draft.name or "suite",
            kind=types.SymbolKind.Module,
            range=types.Range(start=types.Position(0, 0), end=end),
            selection_range=_line_range(lines, named) if named is not None else _top(),
            children=cases,
        )
    ]


def flat_symbols(
    uri: str, symbols: Sequence[types.DocumentSymbol]
) -> list[types.SymbolInformation]:
    """The symbols as a flat list, each case naming its suite as its container."""
    out = []
    for suite in symbols:
        out.append(_information(uri, suite, None))
        out.extend(_information(uri, case, suite.name) for case in suite.children or ())
    return out


def _information(
    uri: str, symbol: types.DocumentSymbol, container: str | None
) -> types.SymbolInformation:
    return types.SymbolInformation(
        name=symbol.name,
        kind=symbol.kind,
        location=types.Location(uri=uri, range=symbol.range),
        container_name=container,
    )


def _case_symbol(
    case: CaseDraft, first: int, last: int, lines: Sequence[str]
) -> types.DocumentSymbol:
    first = min(first, len(lines) - 1)
    last = max(first, min(last, len(lines) - 1))
    while last > first and lines[last].strip()[:1] in ("", "#"):
        last -= 1  # (the blank lines and comments before the next case are not this one's)
    spec = case.source
    detail = None
    if spec is not None:
        detail = f"{spec.kind} {spec.path if spec.path is not None else spec.target or ''}"
    return types.DocumentSymbol(
        name=case.name or "case",
        kind=types.SymbolKind.Function,
        detail=detail.strip() if detail else None,
        range=types.Range(
            start=lsp_position(lines, first, 0), end=lsp_position(lines, last, len(lines[last]))
        ),
        selection_range=_line_range(lines, first),
    )


def _line_range(lines: Sequence[str], line0: int) -> types.Range:
    """A line's text without the white space around it."""
    text = lines[line0]
    start = len(text) - len(text.lstrip())
    end = max(start, len(text.rstrip()))
    return types.Range(start=lsp_position(lines, line0, start), end=lsp_position(lines, line0, end))


def _top() -> types.Range:
    return types.Range(start=types.Position(0, 0), end=types.Position(0, 0))
