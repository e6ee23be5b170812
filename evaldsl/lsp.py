"""The language server: `evaldsl lsp` (pygls 2, over stdio).

Takes an editor's documents — `.eval` files, and YAML/JSON suites with DSL text under
`expect:` and in `assertions:` — and gives what an editor shows: the diagnostics
`evaldsl check` reports (debounced as the user types), hover docs from the vocabulary,
completion from the grammar's state at the cursor and from the case's recorded files
(tool names of its cassette, node names and memory keys of its state, status values),
formatting (`.eval`, the same code as `evaldsl fmt`) and go-to-definition on a case's
source path.

Positions: LSP speaks UTF-16 code units, evaldsl code points. Every conversion goes
through `evaldsl.source.utf16_column` / `codepoint_column`, using the text of the line
as it is in the editor's buffer. The server always announces UTF-16, whatever encodings
a client offers.

Run it with `evaldsl lsp` or `python -m evaldsl.lsp`; needs the `evaldsl[lsp]` extra.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Generator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeGuard

import yaml
from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method
from pygls.uris import from_fs_path, to_fs_path
from pygls.workspace import TextDocument

from evaldsl.diagnostics import Diagnostic
from evaldsl.parser import _spellings, decode_string, interactive, split_statements
from evaldsl.source import codepoint_column, utf16_column
from evaldsl.suites import SuiteDraft, check_text, draft_from_text
from evaldsl.vocabulary import (
    PREDICATES,
    STATUS_VALUES,
    SUBJECTS,
    PredicateSpec,
    SubjectSpec,
    describe,
    spec_markdown,
    statement_markdown,
)
from evaldsl.yaml12 import compose as compose_yaml

log = logging.getLogger(__name__)

#: How long the buffer must stay unchanged before it is checked again (seconds).
DEBOUNCE_SECONDS = 0.25
#: Files larger than this are not decoded to count tool calls for hover (names only).
COUNT_LIMIT_BYTES = 32 * 1024 * 1024

Kind = Literal["eval", "yaml"]
Start = Literal["file", "statements"]

_SEVERITY = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "info": types.DiagnosticSeverity.Information,
}
_SOURCE_KEYS = ("cassette", "state", "trace", "dataset")
_SOURCE_TERMINALS = frozenset({"CASSETTE", "STATE", "TRACE", "DATASET"})
_CMP_OPS = ("==", "!=", "<", "<=", ">", ">=")
_JSON_TYPES = ("string", "number", "integer", "boolean", "array", "object", "null")
_WORD_END = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_IN_PATH = re.compile(r"\$\S*\Z")  # the cursor is inside a JSONPath


# ---- documents --------------------------------------------------------------------------


def document_path(doc: TextDocument) -> str:
    """The file a document is (or would be) saved as; relative paths resolve next to it."""
    path = to_fs_path(doc.uri) if doc.uri.startswith("file:") else None
    if path:
        return path
    suffix = ".yaml" if doc.language_id in ("yaml", "json") else ".eval"
    return os.path.join(os.getcwd(), "untitled" + suffix)


def document_kind(path: str, language_id: str | None = None) -> Kind:
    suffix = Path(path).suffix.lower()
    if suffix in (".yaml", ".yml", ".json"):
        return "yaml"
    if suffix == ".eval":
        return "eval"
    return "yaml" if language_id in ("yaml", "json") else "eval"


def _lines(text: str) -> list[str]:
    """The buffer's lines, numbered as evaldsl numbers them (a line ends at `\\n`)."""
    return [line.removesuffix("\r") for line in text.split("\n")]


def _line_starts(text: str) -> list[int]:
    starts = [0]
    i = text.find("\n")
    while i >= 0:
        starts.append(i + 1)
        i = text.find("\n", i + 1)
    return starts


def _line(lines: Sequence[str], line: int) -> str:
    """A 1-based line of the buffer ("" past its end)."""
    return lines[line - 1] if 1 <= line <= len(lines) else ""


def lsp_position(lines: Sequence[str], line0: int, column0: int) -> types.Position:
    """An LSP position (UTF-16) for a 0-based line and 0-based code-point column."""
    return types.Position(line=line0, character=utf16_column(_line(lines, line0 + 1), column0 + 1))


def cursor(lines: Sequence[str], position: types.Position) -> tuple[int, int]:
    """A 0-based line and 0-based code-point column for an incoming LSP position."""
    return position.line, codepoint_column(_line(lines, position.line + 1), position.character) - 1


# ---- diagnostics ------------------------------------------------------------------------


def lsp_diagnostic(d: Diagnostic, lines: Sequence[str]) -> types.Diagnostic:
    """An evaldsl diagnostic as LSP shows it; columns converted with the buffer's lines.

    The message is `check`'s message; the hint, if any, follows on its own line.
    """
    start_text = _line(lines, d.line)
    start = types.Position(line=max(d.line - 1, 0), character=utf16_column(start_text, d.column))
    end = types.Position(
        line=max(d.end_line - 1, start.line),
        character=utf16_column(_line(lines, d.end_line), d.end_column),
    )
    if (end.line, end.character) <= (start.line, start.character):
        # an empty range (a position, not a span): cover the character there
        end = types.Position(line=start.line, character=utf16_column(start_text, d.column + 1))
    message = d.message + (f"\nhint: {d.hint}" if d.hint else "")
    return types.Diagnostic(
        range=types.Range(start=start, end=end),
        message=message,
        severity=_SEVERITY.get(d.severity, types.DiagnosticSeverity.Error),
        code=d.code,
        source="evaldsl",
    )


def is_suite_text(text: str, kind: Kind) -> bool:
    """`.eval` text always is; a YAML/JSON document only when it has `cases`."""
    return kind == "eval" or "cases" in text


def diagnostics_by_file(text: str, path: str, kind: Kind) -> dict[str, list[Diagnostic]]:
    """`check_text`'s diagnostics, grouped by the file they are in (normalised paths)."""
    if not is_suite_text(text, kind):
        return {}
    own = os.path.normpath(os.path.abspath(path))
    groups: dict[str, list[Diagnostic]] = {own: []}
    for d in check_text(text, path):
        where = own if d.path == path else os.path.normpath(os.path.abspath(d.path))
        groups.setdefault(where, []).append(d)
    return groups


# ---- the DSL text around the cursor -----------------------------------------------------


@dataclass
class Spot:
    """The statement the cursor is in: its text, the cursor's offset in it, where the
    statement starts in the buffer (0-based line and code-point column), the grammar's
    start symbol for it, and the index of the case that holds it (None: the header)."""

    text: str
    offset: int
    line0: int
    column0: int
    start: Start
    case: int | None = None

    def host(self, offset: int) -> tuple[int, int]:
        """The buffer's 0-based line and code-point column of an offset into `text`."""
        before = self.text[:offset]
        newlines = before.count("\n")
        if not newlines:
            return self.line0, self.column0 + offset
        return self.line0 + newlines, offset - (before.rfind("\n") + 1)


def statement_tokens(text: str, start: Start) -> list[Any]:
    """The tokens of a statement, as far as the grammar can follow it (never raises)."""
    from lark.exceptions import LarkError

    tokens: list[Any] = []
    try:
        for tok in interactive(text, start).iter_parse():
            if tok.type not in ("_NL", "SEMICOLON"):
                tokens.append(tok)
    except LarkError:
        pass
    return tokens


@dataclass
class _YamlDsl:
    node: yaml.ScalarNode
    case: int | None


@dataclass
class _YamlPath:
    case: int
    key: str
    key_node: yaml.Node
    value_node: yaml.Node


@dataclass
class YamlLayout:
    """Where the DSL text, the cases and their source paths are in a YAML suite."""

    dsl: list[_YamlDsl] = field(default_factory=list)
    cases: list[tuple[int, int]] = field(default_factory=list)  # 0-based first, last line
    paths: list[_YamlPath] = field(default_factory=list)


def _is_text(node: yaml.Node) -> TypeGuard[yaml.ScalarNode]:
    """A string (or empty) scalar: DSL text, or an item the user is still typing."""
    return isinstance(node, yaml.ScalarNode) and str(node.tag).rsplit(":", 1)[-1] in (
        "str",
        "null",
    )


def yaml_layout(text: str) -> YamlLayout:
    layout = YamlLayout()
    try:
        root = compose_yaml(text)
    except yaml.YAMLError:
        return layout
    if not isinstance(root, yaml.MappingNode):
        return layout

    def fields(node: yaml.MappingNode) -> dict[str, tuple[yaml.Node, yaml.Node]]:
        return {str(k.value): (k, v) for k, v in node.value if isinstance(k, yaml.ScalarNode)}

    def add_dsl(node: yaml.Node, case: int | None, objects: bool = False) -> None:
        items = node.value if isinstance(node, yaml.SequenceNode) else [] if objects else [node]
        for item in items:
            if _is_text(item):
                layout.dsl.append(_YamlDsl(item, case))

    top = fields(root)
    if "expect" in top:
        add_dsl(top["expect"][1], None)
    cases = top.get("cases", (None, None))[1]
    if isinstance(cases, yaml.SequenceNode):
        for i, item in enumerate(cases.value):
            last = item.end_mark.line - (1 if item.end_mark.column == 0 else 0)
            layout.cases.append((item.start_mark.line, max(last, item.start_mark.line)))
            if not isinstance(item, yaml.MappingNode):
                continue
            own = fields(item)
            if "expect" in own:
                add_dsl(own["expect"][1], i)
            if "assertions" in own:
                add_dsl(own["assertions"][1], i, objects=True)
            for key in _SOURCE_KEYS:
                if key in own:
                    layout.paths.append(_YamlPath(i, key, *own[key]))
    return layout


def _yaml_segment(
    node: yaml.ScalarNode, lines: Sequence[str], line0: int
) -> tuple[int, int] | None:
    """The code-point columns `[start, end)` of a DSL scalar's text on a buffer line."""
    first, last = node.start_mark.line, node.end_mark.line
    text = _line(lines, line0 + 1)
    if node.style in ("|", ">"):
        if node.end_mark.column == 0:
            last -= 1
        if not first < line0 <= last:
            return None
        indent = 0
        for raw in lines[first + 1 :]:
            if raw.strip():
                indent = len(raw) - len(raw.lstrip(" "))
                break
        return indent, max(indent, len(text))
    if line0 != first:
        return None  # a flow scalar over several lines: only its first line is followed
    begin = node.start_mark.column
    if node.style in ('"', "'"):
        end = node.end_mark.column - 1 if last == first else len(text)
        return begin + 1, max(begin + 1, end)
    while begin < len(text) and text[begin] == " ":  # an empty item: `- ` then the cursor
        begin += 1
    return begin, len(text)


def yaml_spot(layout: YamlLayout, lines: Sequence[str], line0: int, column0: int) -> Spot | None:
    """The DSL statement under the cursor in a YAML suite (one line of DSL text)."""
    for item in layout.dsl:
        segment = _yaml_segment(item.node, lines, line0)
        if segment is None or not segment[0] <= column0 <= segment[1]:
            continue
        begin, end = segment
        text = _line(lines, line0 + 1)[begin:end]
        offset = column0 - begin
        for s, e in split_statements(text):
            if s <= offset <= e:
                return Spot(text[s:e], offset - s, line0, begin + s, "statements", item.case)
    return None


def eval_spot(text: str, line0: int, column0: int) -> Spot | None:
    """The statement under the cursor in a `.eval` buffer."""
    starts = _line_starts(text)
    if line0 >= len(starts):
        return None
    line_end = starts[line0 + 1] - 1 if line0 + 1 < len(starts) else len(text)
    offset = min(starts[line0] + column0, line_end)
    for s, e in split_statements(text):
        if s <= offset <= e:
            line = bisect_right(starts, s) - 1
            return Spot(text[s:e], offset - s, line, s - starts[line], "file")
    return None


# ---- what the case's files say ----------------------------------------------------------


@dataclass(frozen=True)
class FileFacts:
    """What a case's source file holds, for completion and hover."""

    tools: Counter[str] | None = None  # tool name → calls (None: not a trace)
    counted: bool = True  # False: names only (a file too large to decode for hover)
    state: dict[str, Any] | None = None


_facts_cache: dict[tuple[str, str | None, int, int], FileFacts] = {}


def file_facts(path: Path, fmt: str | None = None) -> FileFacts:
    """Tool calls or the state a run file holds; cached until the file changes."""
    try:
        st = path.stat()
    except OSError:
        return FileFacts()
    key = (str(path), fmt, st.st_mtime_ns, st.st_size)
    found = _facts_cache.get(key)
    if found is None:
        found = _read_facts(path, fmt, st.st_size)
        if len(_facts_cache) > 64:
            _facts_cache.clear()
        _facts_cache[key] = found
    return found


def _read_facts(path: Path, fmt: str | None, size: int) -> FileFacts:
    from evaldsl.runs.cassette import scan_tool_names
    from evaldsl.runs.detect import load_run
    from evaldsl.runs.events import tool_call_name
    from evaldsl.runs.model import RunError

    try:
        run = load_run(path, fmt)
        if run.state is not None:
            return FileFacts(state=run.state)
        if run.events is None:
            return FileFacts()
        if size > COUNT_LIMIT_BYTES:
            names = (
                scan_tool_names(path)
                if run.format == "traceplay"
                else {n for n in map(tool_call_name, run.events) if n is not None}
            )
            return FileFacts(tools=Counter(dict.fromkeys(names, 0)), counted=False)
        return FileFacts(tools=Counter(n for n in map(tool_call_name, run.events) if n is not None))
    except (RunError, OSError, ValueError) as err:
        log.info("cannot read %s: %s", path, err)
        return FileFacts()


# ---- one analysed buffer ----------------------------------------------------------------


class Analysis:
    """A buffer's text with what the features need, computed once per version."""

    def __init__(self, text: str, path: str, kind: Kind) -> None:
        self.text = text.removeprefix("\ufeff")
        self.path = path
        self.kind = kind
        self.lines = _lines(self.text)
        self._draft: SuiteDraft | None = None
        self._layout: YamlLayout | None = None

    @property
    def draft(self) -> SuiteDraft:
        if self._draft is None:
            try:
                self._draft = draft_from_text(self.text, self.path)
            except Exception as err:  # a half-typed buffer must never take a feature down
                log.warning("cannot read %s: %s", self.path, err)
                p = Path(self.path)
                self._draft = SuiteDraft(p.stem, self.path, p.parent)
        return self._draft

    @property
    def layout(self) -> YamlLayout:
        if self._layout is None:
            self._layout = yaml_layout(self.text) if self.kind == "yaml" else YamlLayout()
        return self._layout

    def spot(self, line0: int, column0: int) -> Spot | None:
        if self.kind == "yaml":
            return yaml_spot(self.layout, self.lines, line0, column0)
        found = eval_spot(self.text, line0, column0)
        if found is not None:
            found.case = self.case_at(found.line0)
        return found

    def case_at(self, line0: int) -> int | None:
        """The index (in `draft.cases`) of the case that holds a buffer line."""
        if self.kind == "yaml":
            for i in range(len(self.layout.cases) - 1, -1, -1):
                first, last = self.layout.cases[i]
                if first <= line0:
                    return i if line0 <= last else None
            return None
        at: int | None = None
        for i, case in enumerate(self.draft.cases):
            if case.line - 1 <= line0:
                at = i
        return at

    def case_paths(self, case: int | None, raw: str | None = None) -> list[str]:
        """A case's source path (or `raw`), with `each` rows filled in: as written."""
        cases = self.draft.cases
        each: tuple[dict[str, Any], ...] = ()
        if case is not None and case < len(cases):
            each = cases[case].each or ()
            if raw is None:
                spec = cases[case].source
                raw = spec.path if spec is not None else None
        if raw is None:
            return []
        if "{{" not in raw:
            return [raw]
        from evaldsl.templates import render_text

        out = [render_text(raw, row) for row in each]
        return list(dict.fromkeys(p for p in out if "{{" not in p))

    def sources(self, case: int | None) -> list[tuple[str, FileFacts]]:
        """The facts of the files the case runs against (all cases' for the header)."""
        draft = self.draft
        indexes = (
            [case] if case is not None and case < len(draft.cases) else range(len(draft.cases))
        )
        out: dict[str, FileFacts] = {}
        for i in indexes:
            spec = draft.cases[i].source
            if spec is None or spec.kind not in ("cassette", "trace", "state"):
                continue
            for raw in self.case_paths(i):
                if raw not in out:
                    out[raw] = file_facts(draft.base_dir / raw, spec.format)
        return list(out.items())


# ---- hover ------------------------------------------------------------------------------


_SPECS: list[SubjectSpec | PredicateSpec] = [*SUBJECTS.values(), *PREDICATES.values()]
#: Two-word subjects and predicates (`input tokens`, `is empty`, `cites tool`), by words.
_PAIRS: dict[tuple[str, str], SubjectSpec | PredicateSpec] = {
    (spec.words[0], spec.words[1]): spec
    for spec in _SPECS
    if len(spec.words) == 2 and spec.syntax.startswith(f"{spec.words[0]} {spec.words[1]}")
}


def keyword_doc(tokens: Sequence[Any], i: int) -> str | None:
    """Hover text for the keyword `tokens[i]`, read in its context."""
    word = str(tokens[i])
    nxt = tokens[i + 1] if i + 1 < len(tokens) else None
    prev = tokens[i - 1] if i > 0 else None
    if i == 0 and word in ("state", "input", "tools", "nodes"):
        line_form = {
            "state": nxt is not None and nxt.type == "STRING",
            "input": nxt is not None and nxt.type != "TOKENS",
            "tools": nxt is not None and nxt.type in ("NAME", "STRING"),
            "nodes": nxt is not None and nxt.type in ("NAME", "STRING"),
        }[word]
        if line_form:
            return statement_markdown(word)
    if word == "not" and (nxt is None or nxt.type != "EMPTY"):
        return statement_markdown("not")
    if prev is not None and (str(prev), word) in _PAIRS:
        return spec_markdown(_PAIRS[str(prev), word])
    if nxt is not None and (word, str(nxt)) in _PAIRS:
        return spec_markdown(_PAIRS[word, str(nxt)])
    return describe(word)


def _name(tok: Any) -> str:
    return decode_string(str(tok)) if tok.type == "STRING" else str(tok)


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


def hover_at(analysis: Analysis, line0: int, column0: int) -> tuple[str, Spot, int, int] | None:
    """Markdown for the word under the cursor, and its span in the statement."""
    spot = analysis.spot(line0, column0)
    if spot is None:
        return None
    tokens = statement_tokens(spot.text, spot.start)
    spell = _spellings()
    for i, tok in enumerate(tokens):
        start, end = tok.start_pos, tok.end_pos
        if not start <= spot.offset <= end or (spot.offset == end and _touches_next(tokens, i)):
            continue
        if tok.type in spell and spell[tok.type].isalpha():
            doc = keyword_doc(tokens, i)
        elif tok.type in ("NAME", "STRING") and i and tokens[i - 1].type == "TOOL":
            doc = tool_doc(_name(tok), analysis, spot.case)
        else:
            doc = None
        return (doc, spot, start, end) if doc else None
    if tokens and spot.offset <= tokens[-1].end_pos:
        return None
    # past the point the grammar could follow: a plain word, unless inside a string
    for m in _WORD.finditer(spot.text):
        if m.start() <= spot.offset <= m.end():
            quotes = spot.text[: m.start()].count('"')
            doc = describe(m.group()) if quotes % 2 == 0 else None
            return (doc, spot, m.start(), m.end()) if doc else None
    return None


def _touches_next(tokens: Sequence[Any], i: int) -> bool:
    return i + 1 < len(tokens) and tokens[i + 1].start_pos == tokens[i].end_pos


# ---- completion -------------------------------------------------------------------------


@dataclass
class Offer:
    """One completion: its label, kind, a short detail and the markdown doc."""

    label: str
    kind: types.CompletionItemKind
    detail: str | None = None
    doc: str | None = None
    rank: int = 1  # 0: names from the case's files, 1: keywords, 2: operators


def _term_tokens(tokens: Sequence[Any]) -> list[Any]:
    """The tokens of the last `and`/`or`/`not`/`(` term of a statement."""
    cut = 0
    for i, tok in enumerate(tokens):
        if tok.type in ("AND", "OR", "LPAR") or (
            tok.type == "NOT" and (i == 0 or tokens[i - 1].type in ("AND", "OR", "LPAR", "NOT"))
        ):
            cut = i + 1
    return list(tokens[cut:])


def _walk(value: Any, chain: Sequence[Any]) -> Any:
    """Follow `.key`, `["key"]`, `[0]` accessor tokens from a JSON value (None when lost)."""
    i = 0
    while i < len(chain) and value is not None:
        tok = chain[i]
        if tok.type == "DOT" and i + 1 < len(chain) and chain[i + 1].type == "NAME":
            value = value.get(str(chain[i + 1])) if isinstance(value, dict) else None
            i += 2
        elif tok.type == "LSQB" and i + 2 < len(chain) and chain[i + 2].type == "RSQB":
            key = chain[i + 1]
            if key.type == "STRING" and isinstance(value, dict):
                value = value.get(decode_string(str(key)))
            elif key.type == "INT" and isinstance(value, list):
                n = int(str(key))
                value = value[n] if -len(value) <= n < len(value) else None
            else:
                value = None
            i += 3
        else:
            return None
    return value


def _tool_offers(analysis: Analysis, case: int | None) -> list[Offer]:
    offers: dict[str, Offer] = {}
    for raw, facts in analysis.sources(case):
        for name, n in sorted((facts.tools or {}).items()):
            detail = (
                f"called {n} time{'s' if n != 1 else ''} in {raw}" if facts.counted else f"in {raw}"
            )
            offers.setdefault(name, Offer(name, types.CompletionItemKind.Function, detail, rank=0))
    for name in sorted(analysis.draft.tools or ()):
        offers.setdefault(
            name, Offer(name, types.CompletionItemKind.Function, "declared in `tools`", rank=0)
        )
    return list(offers.values())


def _states(analysis: Analysis, case: int | None) -> list[tuple[str, dict[str, Any]]]:
    return [(raw, f.state) for raw, f in analysis.sources(case) if f.state is not None]


def _node_offers(analysis: Analysis, case: int | None) -> list[Offer]:
    offers: dict[str, Offer] = {}
    for raw, state in _states(analysis, case):
        visited = state.get("visited_nodes")
        for name in visited if isinstance(visited, list) else ():
            if isinstance(name, str):
                offers.setdefault(
                    name, Offer(name, types.CompletionItemKind.Module, f"visited in {raw}", rank=0)
                )
    for name in sorted(analysis.draft.nodes or ()):
        offers.setdefault(
            name, Offer(name, types.CompletionItemKind.Module, "declared in `nodes`", rank=0)
        )
    return list(offers.values())


def _key_offers(
    analysis: Analysis, case: int | None, root: str, accessors: Sequence[Any]
) -> list[Offer]:
    offers: dict[str, Offer] = {}
    for raw, state in _states(analysis, case):
        value = _walk(state.get("memory") if root == "memory" else state, accessors)
        if isinstance(value, dict):
            for key in value:
                if isinstance(key, str) and key not in offers and _WORD.fullmatch(key):
                    offers[key] = Offer(
                        key, types.CompletionItemKind.Field, f"{root} key in {raw}", rank=0
                    )
    return list(offers.values())


def _status_offers(analysis: Analysis, case: int | None) -> list[Offer]:
    actual = {
        str(state.get("status")): raw
        for raw, state in _states(analysis, case)
        if isinstance(state.get("status"), str)
    }
    return [
        Offer(
            v,
            types.CompletionItemKind.EnumMember,
            f"the status in {actual[v]}" if v in actual else "a status",
            rank=0,
        )
        for v in STATUS_VALUES
    ]


def _name_offers(analysis: Analysis, case: int | None, tokens: Sequence[Any]) -> list[Offer]:
    """The names that fit where the grammar accepts a NAME, read from the term so far."""
    term = _term_tokens(tokens)
    if not term:
        return []
    first, last = term[0].type, term[-1].type
    if last == "TOOL":  # tool NAME, no tool NAME, every tool NAME, cites tool NAME
        return _tool_offers(analysis, case)
    if last == "NODE":
        return _node_offers(analysis, case)
    if first == "TOOLS":
        return _tool_offers(analysis, case)
    if first == "NODES":
        return _node_offers(analysis, case)
    if first == "STATUS":
        return _status_offers(analysis, case)
    if first in ("MEMORY", "STATE") and last in ("DOT", "HAS"):
        # memory.a.  memory.a has  state.  state.x.  : keys of the value the chain reaches
        return _key_offers(analysis, case, first.lower(), term[1:-1])
    return []


def completions_at(analysis: Analysis, line0: int, column0: int) -> list[Offer]:
    """What may come at the cursor: the grammar's next words, and names from the case."""
    spot = analysis.spot(line0, column0)
    if spot is None:
        return []
    prefix = spot.text[: spot.offset]
    partial = _WORD_END.search(prefix)
    head = prefix[: partial.start()] if partial else prefix
    if _IN_PATH.search(head):
        return []
    from lark.exceptions import LarkError

    parser = interactive(head, spot.start)
    try:
        tokens = [t for t in parser.exhaust_lexer() if t.type not in ("_NL", "SEMICOLON")]
        accepts: set[str] = set(parser.accepts())
    except LarkError:
        return []  # the statement is already wrong before the cursor (or in a string)
    spell = _spellings()
    offers: list[Offer] = []
    if accepts & {"NAME", "STRING"}:
        offers.extend(_name_offers(analysis, spot.case, tokens))
    for name in sorted(accepts):
        word = spell.get(name)
        if word is not None and word.isalpha():
            offers.append(Offer(word, types.CompletionItemKind.Keyword, doc=describe(word)))
    if "CMP_OP" in accepts:
        offers.extend(Offer(op, types.CompletionItemKind.Operator, rank=2) for op in _CMP_OPS)
    if "JSON_TYPE" in accepts:
        offers.extend(
            Offer(t, types.CompletionItemKind.TypeParameter, "a JSON type") for t in _JSON_TYPES
        )
    seen: set[str] = set()
    unique = []
    for offer in offers:
        if offer.label not in seen:
            seen.add(offer.label)
            unique.append(offer)
    return unique


# ---- definition -------------------------------------------------------------------------


def definition_at(analysis: Analysis, line0: int, column0: int) -> list[Path]:
    """The files a `cassette`/`state`/`trace`/`dataset` path under the cursor names."""
    raw: str | None = None
    case: int | None = None
    if analysis.kind == "yaml":
        for entry in analysis.layout.paths:
            lines = {entry.key_node.start_mark.line, entry.value_node.start_mark.line}
            if line0 in lines and isinstance(entry.value_node, yaml.ScalarNode):
                raw, case = str(entry.value_node.value), entry.case
                break
    else:
        spot = analysis.spot(line0, column0)
        if spot is not None:
            tokens = statement_tokens(spot.text, spot.start)
            if (
                len(tokens) > 1
                and tokens[0].type in _SOURCE_TERMINALS
                and tokens[1].type == "STRING"
            ):
                raw, case = decode_string(str(tokens[1])), spot.case
    if not raw:
        return []
    base = analysis.draft.base_dir
    found = [base / p for p in analysis.case_paths(case, raw)]
    return [p for p in found if p.is_file()]


# ---- the server -------------------------------------------------------------------------


class _Protocol(LanguageServerProtocol):
    """Always UTF-16: the conversions in `evaldsl.source` are the only ones there are."""

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(
        self, params: types.InitializeParams
    ) -> Generator[Any, Any, types.InitializeResult]:
        general = params.capabilities.general
        if general is not None:
            general.position_encodings = [types.PositionEncodingKind.Utf16]
        result: types.InitializeResult = yield from super().lsp_initialize(params)
        return result


class EvalDslServer(LanguageServer):
    """The evaldsl language server: state for debounced checks and published files."""

    def __init__(self) -> None:
        from evaldsl import __version__

        super().__init__("evaldsl", __version__, protocol_cls=_Protocol)
        self.pending: dict[str, asyncio.Task[None]] = {}
        self.open: set[str] = set()
        # diagnostics a document's check found in other files: owner → file → diagnostics
        self.foreign: dict[str, dict[str, list[types.Diagnostic]]] = {}
        # a checked open document's own diagnostics, and the version they are for
        self.own: dict[str, tuple[int | None, list[types.Diagnostic]]] = {}
        self._analyses: dict[str, tuple[int | None, Analysis]] = {}

    def analysis(self, uri: str) -> Analysis:
        doc = self.workspace.get_text_document(uri)
        cached = self._analyses.get(uri)
        if cached is not None and cached[0] == doc.version and cached[0] is not None:
            return cached[1]
        path = document_path(doc)
        found = Analysis(doc.source, path, document_kind(path, doc.language_id))
        self._analyses[uri] = (doc.version, found)
        return found

    def markdown(self, formats: Sequence[types.MarkupKind] | None) -> bool:
        return formats is None or types.MarkupKind.Markdown in formats

    # diagnostics

    def schedule(self, uri: str, delay: float) -> None:
        """Check a document after `delay` seconds; a newer request cancels this one."""
        old = self.pending.pop(uri, None)
        if old is not None:
            old.cancel()
        task = asyncio.get_running_loop().create_task(self._validate(uri, delay))
        self.pending[uri] = task

        def done(t: asyncio.Task[None]) -> None:
            if self.pending.get(uri) is t:
                del self.pending[uri]

        task.add_done_callback(done)

    async def _validate(self, uri: str, delay: float) -> None:
        if delay:
            await asyncio.sleep(delay)
        doc = self.workspace.get_text_document(uri)
        version, text = doc.version, doc.source
        path = document_path(doc)
        kind = document_kind(path, doc.language_id)
        try:
            groups = await asyncio.to_thread(diagnostics_by_file, text, path, kind)
        except Exception as err:  # a bug in a check must not silence the server
            log.exception("checking %s failed", path)
            self.window_log_message(
                types.LogMessageParams(types.MessageType.Error, f"evaldsl: {err}")
            )
            return
        if uri not in self.open or self.workspace.get_text_document(uri).version != version:
            return
        own = os.path.normpath(os.path.abspath(path))
        lines = _lines(text.removeprefix("\ufeff"))
        self.own[uri] = (version, [lsp_diagnostic(d, lines) for d in groups.pop(own, [])])
        foreign: dict[str, list[types.Diagnostic]] = {}
        for other, diags in groups.items():
            other_uri = from_fs_path(other)
            if other_uri is None:
                continue
            foreign[other_uri] = [
                lsp_diagnostic(d, self._file_lines(other_uri, other)) for d in diags
            ]
        self._set_foreign(uri, foreign)
        self.publish(uri)

    def publish(self, uri: str) -> None:
        """A document's own diagnostics (if it is open and checked) and those other
        documents' checks found in it (a dataset file's problems)."""
        version, own = self.own.get(uri, (None, []))
        found = [
            d for owner, files in self.foreign.items() if owner != uri for d in files.get(uri, [])
        ]
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=own + found, version=version)
        )

    def _file_lines(self, uri: str, path: str) -> list[str]:
        if uri in self.open:
            return _lines(self.workspace.get_text_document(uri).source)
        try:
            return _lines(Path(path).read_text("utf-8-sig"))
        except (OSError, UnicodeDecodeError):
            return []

    def _set_foreign(self, owner: str, found: dict[str, list[types.Diagnostic]]) -> None:
        before = self.foreign.pop(owner, {})
        if found:
            self.foreign[owner] = found
        for uri in set(before) | set(found):
            if uri != owner:
                self.publish(uri)

    def closed(self, uri: str) -> None:
        self.open.discard(uri)
        self._analyses.pop(uri, None)
        task = self.pending.pop(uri, None)
        if task is not None:
            task.cancel()
        self.own.pop(uri, None)
        self._set_foreign(uri, {})
        self.publish(uri)  # cleared, but for what open suites found in this file


def build_server() -> EvalDslServer:
    server = EvalDslServer()

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(ls: EvalDslServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.open.add(params.text_document.uri)
        ls.schedule(params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(ls: EvalDslServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, DEBOUNCE_SECONDS)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    async def did_save(ls: EvalDslServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    async def did_close(ls: EvalDslServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.closed(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    def hover(ls: EvalDslServer, params: types.HoverParams) -> types.Hover | None:
        analysis = ls.analysis(params.text_document.uri)
        line0, column0 = cursor(analysis.lines, params.position)
        found = hover_at(analysis, line0, column0)
        if found is None:
            return None
        doc, spot, start, end = found
        caps = ls.client_capabilities.text_document
        formats = caps.hover.content_format if caps and caps.hover else None
        kind = types.MarkupKind.Markdown if ls.markdown(formats) else types.MarkupKind.PlainText
        return types.Hover(
            contents=types.MarkupContent(kind=kind, value=doc),
            range=types.Range(
                start=lsp_position(analysis.lines, *spot.host(start)),
                end=lsp_position(analysis.lines, *spot.host(end)),
            ),
        )

    @server.feature(
        types.TEXT_DOCUMENT_COMPLETION,
        types.CompletionOptions(trigger_characters=[" ", ".", "["]),
    )
    def completion(ls: EvalDslServer, params: types.CompletionParams) -> types.CompletionList:
        analysis = ls.analysis(params.text_document.uri)
        line0, column0 = cursor(analysis.lines, params.position)
        caps = ls.client_capabilities.text_document
        item_caps = caps.completion.completion_item if caps and caps.completion else None
        markdown = item_caps is not None and ls.markdown(item_caps.documentation_format or [])
        items = []
        for offer in completions_at(analysis, line0, column0):
            doc: str | types.MarkupContent | None = offer.doc
            if offer.doc is not None and markdown:
                doc = types.MarkupContent(kind=types.MarkupKind.Markdown, value=offer.doc)
            items.append(
                types.CompletionItem(
                    label=offer.label,
                    kind=offer.kind,
                    detail=offer.detail,
                    documentation=doc,
                    sort_text=f"{offer.rank}{offer.label}",
                )
            )
        return types.CompletionList(is_incomplete=False, items=items)

    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    def definition(ls: EvalDslServer, params: types.DefinitionParams) -> list[types.Location]:
        analysis = ls.analysis(params.text_document.uri)
        line0, column0 = cursor(analysis.lines, params.position)
        top = types.Range(start=types.Position(0, 0), end=types.Position(0, 0))
        return [
            types.Location(uri=uri, range=top)
            for uri in (
                from_fs_path(str(p.resolve())) for p in definition_at(analysis, line0, column0)
            )
            if uri is not None
        ]

    @server.feature(types.TEXT_DOCUMENT_FORMATTING)
    def formatting(
        ls: EvalDslServer, params: types.DocumentFormattingParams
    ) -> list[types.TextEdit] | None:
        analysis = ls.analysis(params.text_document.uri)
        if analysis.kind != "eval":
            return None
        return format_edits(
            ls.workspace.get_text_document(params.text_document.uri).source, analysis.path
        )

    return server


def format_edits(text: str, path: str) -> list[types.TextEdit] | None:
    """One edit replacing the whole buffer with `evaldsl fmt`'s layout; none on errors."""
    try:
        from evaldsl.formatter import format_text
    except ImportError:  # pragma: no cover - the formatter ships with evaldsl
        return None
    from evaldsl.diagnostics import EvalDslError

    try:
        formatted = format_text(text, path)
    except EvalDslError:
        return []  # a buffer with syntax errors is left as it is
    if formatted == text:
        return []
    lines = _lines(text)
    end = lsp_position(lines, len(lines) - 1, len(lines[-1]))
    return [
        types.TextEdit(range=types.Range(start=types.Position(0, 0), end=end), new_text=formatted)
    ]


def main() -> None:
    """Serve over stdio until the client says exit."""
    logging.basicConfig(level=logging.WARNING, format="evaldsl lsp: %(message)s")
    build_server().start_io()


if __name__ == "__main__":
    main()
