"""Hover: the doc of the word under the cursor, read in its context.

Takes an `Analysis` and a cursor and gives markdown: a keyword's vocabulary entry (two-word
subjects and predicates such as `input tokens` and `is empty` read as one), a tool's
declaration and call counts in the case's files, and on a `cassette`/`trace`/`state` line
of a `.eval` file, or such a key of a YAML or JSON suite, what evaldsl reads from that file
(`evaldsl inspect`'s summary). It reads files: the server calls it on a worker thread,
never on its event loop.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from evaldsl.language.limits import MAX_LSP_FILE_BYTES
from evaldsl.language.reading import size_text
from evaldsl.language.vocabulary import (
    SUBJECTS,
    PredicateSpec,
    SubjectSpec,
    spec_markdown,
    statement_markdown,
)
from evaldsl.predicates.registry import PREDICATES
from evaldsl.runs.summary import summary_markdown
from evaldsl.syntax.grammar import spellings
from evaldsl.syntax.literals import decode_string
from evaldsl.syntax.tokens import Token, statement_tokens
from evaldsl.tools.lsp.analysis import Analysis, Spot
from evaldsl.vocabulary import describe

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
MAX_HOVER_FILES = 3  # an `each` template's first files: hover reads each one whole


_SPECS: list[SubjectSpec | PredicateSpec] = [*SUBJECTS.values(), *PREDICATES.values()]
#: Two-word subjects and predicates (`input tokens`, `is empty`, `cites tool`), by words.
_PAIRS: dict[tuple[str, str], SubjectSpec | PredicateSpec] = {
    (spec.words[0], spec.words[1]): spec
    for spec in _SPECS
    if len(spec.words) == 2 and spec.syntax.startswith(f"{spec.words[0]} {spec.words[1]}")
}


def keyword_doc(tokens: Sequence[Token], i: int) -> str | None:
    """Hover text for the keyword `tokens[i]`, read in its context."""
    word = tokens[i].text
    nxt = tokens[i + 1] if i + 1 < len(tokens) else None
    prev = tokens[i - 1] if i > 0 else None
    if i == 0 and word in ("state", "input", "tools", "nodes"):
        line_form = {
            "state": nxt is not None and nxt.kind == "STRING",
            "input": nxt is not None and nxt.kind != "TOKENS",
            "tools": nxt is not None and nxt.kind in ("NAME", "STRING"),
            "nodes": nxt is not None and nxt.kind in ("NAME", "STRING"),
        }[word]
        if line_form:
            return statement_markdown(word)
    if word == "not" and (nxt is None or nxt.kind != "EMPTY"):
        return statement_markdown("not")
    if prev is not None and (prev.text, word) in _PAIRS:
        return spec_markdown(_PAIRS[prev.text, word])
    if nxt is not None and (word, nxt.text) in _PAIRS:
        return spec_markdown(_PAIRS[word, nxt.text])
    return describe(word)


def token_name(tok: Token) -> str:
    """A NAME or STRING token's name."""
    return decode_string(tok.text) if tok.kind == "STRING" else tok.text


def tool_doc(name: str, analysis: Analysis, case: int | None) -> str:
    lines = [f"**tool** `{name}`"]
    declared = analysis.draft.tools
    if declared is not None:
        lines.append("declared in `tools`" if name in declared else "not declared in `tools`")
    for raw, facts in analysis.sources(case):
        if facts.tools is None:
            continue
        if name not in facts.tools:
            lines.append(f"never called in `{raw}`")
        elif not facts.counted:
            lines.append(f"called in `{raw}`")
        else:
            n = facts.tools[name]
            lines.append(f"called {n} time{'s' if n != 1 else ''} in `{raw}`")
    return "\n\n".join(lines)


_RUN_FILE_KEYS = ("cassette", "trace", "state")


def yaml_source_hover(
    analysis: Analysis, line0: int, column0: int
) -> tuple[str, Spot, int, int] | None:
    """On a `cassette:`/`trace:`/`state:` key of a YAML or JSON suite or its value, the
    summary of the file it names, spanning the value."""
    for entry in analysis.layout.paths:
        if entry.key not in _RUN_FILE_KEYS or not entry.holds(line0, column0):
            continue
        paths = analysis.case_paths(entry.case, entry.value) if entry.value else []
        if not paths:
            return None
        case = analysis.draft.cases[entry.case] if entry.case < len(analysis.draft.cases) else None
        fmt = case.source.format if case is not None and case.source is not None else None
        base = analysis.draft.base_dir
        doc = "\n\n---\n\n".join(
            (f"`{raw}`\n\n" if len(paths) > 1 else "") + file_summary(base / raw, fmt)
            for raw in paths[:MAX_HOVER_FILES]
        )
        text = analysis.lines[entry.value_line] if entry.value_line < len(analysis.lines) else ""
        spot = Spot(text, 0, entry.value_line, 0, "file", entry.case)
        start, end = entry.value_columns
        if end is None:
            end = len(text)
        elif end - start >= 2 and text[start] in "\"'" and text[end - 1] == text[start]:
            start, end = start + 1, end - 1  # the path, not its quotes
        return doc, spot, start, end
    return None


def hover_at(analysis: Analysis, line0: int, column0: int) -> tuple[str, Spot, int, int] | None:
    """Markdown for the word under the cursor, and its span in the statement."""
    if analysis.kind == "yaml":
        found = yaml_source_hover(analysis, line0, column0)
        if found is not None:
            return found
    spot = analysis.spot(line0, column0)
    if spot is None or spot.in_comment():
        return None
    tokens = statement_tokens(spot.text, spot.start)
    spell = spellings()
    for i, tok in enumerate(tokens):
        start, end = tok.start, tok.end
        if not start <= spot.offset <= end or (spot.offset == end and _touches_next(tokens, i)):
            continue
        if tok.kind in spell and spell[tok.kind].isalpha():
            doc = keyword_doc(tokens, i)
        elif tok.kind in ("NAME", "STRING") and i and tokens[i - 1].kind == "TOOL":
            doc = tool_doc(token_name(tok), analysis, spot.case)
        else:
            doc = None
        if i < 2 and _source_line(tokens) and spot.start == "file":
            # `cassette "x"` / `trace "x" as F` / `state "x"`: what evaldsl reads from it
            fmt = tokens[3].text if tokens[0].text == "trace" and len(tokens) > 3 else None
            path = Path(analysis.path).parent / token_name(tokens[1])
            doc = (doc + "\n\n" if doc else "") + file_summary(path, fmt)
        return (doc, spot, start, end) if doc else None
    if tokens and spot.offset <= tokens[-1].end:
        return None
    # past the point the grammar could follow: a plain word, unless inside a string
    for m in _WORD.finditer(spot.text):
        if m.start() <= spot.offset <= m.end():
            quotes = spot.text[: m.start()].count('"')
            doc = describe(m.group()) if quotes % 2 == 0 else None
            return (doc, spot, m.start(), m.end()) if doc else None
    return None


def file_summary(path: Path, fmt: str | None) -> str:
    """What evaldsl reads from a run file, for hover: the whole file is read, so one over
    `MAX_LSP_FILE_BYTES` is named, not read (`evaldsl inspect` reads it)."""
    try:
        size = path.stat().st_size
    except (OSError, ValueError):  # ValueError: a NUL in the name
        size = 0  # missing or unreadable: the summary says why
    if size > MAX_LSP_FILE_BYTES:
        return (
            f"{size_text(size)}: too large to summarise on hover (over "
            f"{size_text(MAX_LSP_FILE_BYTES)}); `evaldsl inspect` shows what it holds"
        )
    return summary_markdown(path, fmt)


def _source_line(tokens: Sequence[Token]) -> bool:
    return (
        len(tokens) > 1
        and tokens[0].text in ("cassette", "trace", "state")
        and tokens[1].kind == "STRING"
    )


def _touches_next(tokens: Sequence[Token], i: int) -> bool:
    return i + 1 < len(tokens) and tokens[i + 1].start == tokens[i].end
