"""Analysis: one buffer read once for the features, and the statement under the cursor.

Takes a buffer's text, its path and kind, and gives an `Analysis`: its lines, its suite
draft (read by the same front ends `evaldsl check` uses, so a YAML suite is walked once,
by `suites/yamlfile.py`, whose `Layout` says where its DSL text, cases and paths are), the
statement under the cursor (`Spot`), the case holding a line, and what each case's files
hold (`FileFacts`: tool calls of a trace, or a state), cached until the file changes.
"""

from __future__ import annotations

import logging
import os
from bisect import bisect_left, bisect_right
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evaldsl.runs.detect import load_run, scan_tool_names
from evaldsl.runs.events import tool_call_name
from evaldsl.runs.model import RunError
from evaldsl.suites.files import draft_from_text
from evaldsl.suites.model import Layout, SuiteDraft
from evaldsl.suites.places import TextPlace
from evaldsl.suites.templates import render_text
from evaldsl.suites.yamlplaces import quoted_line
from evaldsl.syntax.grammar import Start
from evaldsl.syntax.recovery import scanner, split_statements
from evaldsl.tools.lsp.documents import Kind, buffer_lines, line_at, line_starts

log = logging.getLogger("evaldsl.lsp")

#: Files larger than this are not decoded to count tool calls for hover (names only).
COUNT_LIMIT_BYTES = 32 * 1024 * 1024


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
    #: the quotes of the YAML or JSON scalar that holds it (`"`, `'`; None: none), in
    #: which what is inserted is spelled (`yamlplaces.requoted`)
    quotes: str | None = None
    #: for a text whose scalar spells some characters with escapes (`\"`, `''`): each
    #: offset's buffer column (the text is what the scalar stands for, as the suite reads it)
    columns: Sequence[int] | None = None

    def in_comment(self) -> bool:
        """Whether the cursor is in a `#` comment: no word there is the language's."""
        return any(
            m.group("skip") is not None and m.group().startswith("#")
            for m in scanner().finditer(self.text, 0, self.offset)
        )

    def host(self, offset: int) -> tuple[int, int]:
        """The buffer's 0-based line and code-point column of an offset into `text`."""
        if self.columns is not None:  # (one line: a quoted scalar is followed on its first)
            return self.line0, self.columns[offset]
        before = self.text[:offset]
        newlines = before.count("\n")
        if not newlines:
            return self.line0, self.column0 + offset
        return self.line0 + newlines, offset - (before.rfind("\n") + 1)


def _yaml_segment(place: TextPlace, lines: Sequence[str], line0: int) -> tuple[int, int] | None:
    """The code-point columns `[start, end)` of a DSL scalar's text on a buffer line."""
    first, last = place.start_line, place.end_line
    text = line_at(lines, line0 + 1)
    if place.style in ("|", ">"):
        if place.end_column == 0:
            last -= 1
        if not first < line0 <= last:
            return None
        indent = 0
        for i in range(first + 1, len(lines)):  # no slice: one copy per scalar adds up
            raw = lines[i]
            if raw.strip():
                indent = len(raw) - len(raw.lstrip(" "))
                break
        return indent, max(indent, len(text))
    if line0 != first:
        return None  # a flow scalar over several lines: only its first line is followed
    begin = place.start_column
    if place.style in ('"', "'"):
        end = place.end_column - 1 if last == first else len(text)
        return begin + 1, max(begin + 1, end)
    while begin < len(text) and text[begin] == " ":  # an empty item: `- ` then the cursor
        begin += 1
    return begin, len(text)


def yaml_spot(layout: Layout, lines: Sequence[str], line0: int, column0: int) -> Spot | None:
    """The DSL statement under the cursor in a YAML suite (one line of DSL text)."""
    for item in layout.texts:
        segment = _yaml_segment(item, lines, line0)
        if segment is None or not segment[0] <= column0 <= segment[1]:
            continue
        begin, end = segment
        text = line_at(lines, line0 + 1)[begin:end]
        offset = column0 - begin
        quotes = item.style if item.style in ('"', "'") else None
        columns: list[int] | None = None
        if quotes is not None and ("\\" in text if quotes == '"' else "''" in text):
            # the scalar stands for other text than it spells: the statements are read
            # in that text, the way the suite reads them, and placed back by columns
            found = quoted_line(text, quotes)
            if found is None:
                return None  # (an escape YAML has not: the suite's reading says so)
            text, columns = found
            offset = bisect_left(columns, offset)  # (inside an escape: at its start)
        for s, e in split_statements(text):
            if s <= offset <= e:
                placed = None if columns is None else [begin + c for c in columns[s : e + 1]]
                column = begin + s if placed is None else placed[0]
                return Spot(
                    text[s:e], offset - s, line0, column, "statements", item.case, quotes, placed
                )
    return None


@dataclass(frozen=True)
class EvalCuts:
    """A `.eval` buffer's line starts and statements, found once a version: each hover,
    completion and definition cut the whole buffer again and walked its statements
    (~115 ms a request at 20,000 lines)."""

    text: str
    starts: list[int]
    cuts: list[tuple[int, int]]  # in order, apart but for a shared end
    firsts: list[int]  # each cut's start

    @classmethod
    def of(cls, text: str) -> EvalCuts:
        cuts = split_statements(text)
        return cls(text, line_starts(text), cuts, [s for s, _ in cuts])

    def spot(self, line0: int, column0: int) -> Spot | None:
        """The statement under the cursor: the first cut that holds its offset."""
        text, starts, cuts = self.text, self.starts, self.cuts
        if line0 >= len(starts):
            return None
        line_end = starts[line0 + 1] - 1 if line0 + 1 < len(starts) else len(text)
        offset = min(starts[line0] + column0, line_end)
        k = bisect_right(self.firsts, offset) - 1
        if k > 0 and cuts[k - 1][1] >= offset:
            k -= 1  # the cut before ends where this one starts: the first holds it
        if k < 0 or cuts[k][1] < offset:
            return None
        s, e = cuts[k]
        line = bisect_right(starts, s) - 1
        return Spot(text[s:e], offset - s, line, s - starts[line], "file")


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
    except (OSError, ValueError):  # ValueError: a NUL in the name
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
        self.lines = buffer_lines(text)  # (counting a byte order mark in line 0's positions)
        self._made: SuiteDraft | Exception | None = None
        self._draft: SuiteDraft | None = None
        self._cuts: EvalCuts | None = None
        self._case_lines: list[int] | None = None

    def drafted(self) -> SuiteDraft:
        """The buffer's draft, made once a version for the features and the check alike
        (each drafted it: two parses of the buffer a keystroke); raises what drafting
        raised, so a check reports it."""
        made = self._made
        if made is None:
            try:
                made = draft_from_text(self.text, self.path)
            except Exception as err:
                made = err
            self._made = made
        if isinstance(made, Exception):
            raise made
        return made

    @property
    def draft(self) -> SuiteDraft:
        if self._draft is None:
            try:
                self._draft = self.drafted()
            except Exception as err:  # a half-typed buffer must never take a feature down
                log.warning("cannot read %s: %s", self.path, err)
                p = Path(self.path)
                self._draft = SuiteDraft(p.stem, self.path, p.parent)
        return self._draft

    @property
    def layout(self) -> Layout:
        """Where the YAML front end found DSL text, cases and source paths."""
        return self.draft.layout

    def spot(self, line0: int, column0: int) -> Spot | None:
        if self.kind == "yaml":
            return yaml_spot(self.layout, self.lines, line0, column0)
        if self._cuts is None:
            self._cuts = EvalCuts.of(self.text)
        found = self._cuts.spot(line0, column0)
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
        if self._case_lines is None:  # cases are in line order: a search, once a version
            self._case_lines = [case.line - 1 for case in self.draft.cases]
        at = bisect_right(self._case_lines, line0) - 1
        return at if at >= 0 else None

    def in_case(self, line0: int) -> bool:
        """Whether a line of a `.eval` buffer is in a case a `case` line opens, where the
        header's lines (`suite`, `judge`, `tools NAME`, `nodes NAME`) are E206."""
        case = self.case_at(line0) if self.kind == "eval" else None
        if case is None or case >= len(self.draft.cases):
            return False
        return line_at(self.lines, self.draft.cases[case].line).lstrip().startswith("case")

    def dataset_files(self) -> set[str]:
        """The files the cases' `dataset` lines name (absolute, normalised): a check of
        this buffer reads them."""
        draft = self.draft
        return {
            os.path.normpath(os.path.abspath(draft.base_dir / raw))
            for i, case in enumerate(draft.cases)
            if case.dataset is not None and case.dataset.path is not None
            for raw in self.case_paths(i, case.dataset.path)
        }

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
