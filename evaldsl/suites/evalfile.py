"""The `.eval` front end: suite text → a `SuiteDraft`.

Takes the text of a `.eval` file (or a program given to `evaldsl.compile`) and gives the
parse, the outline (header and cases) and a `SuiteDraft`: the header's declarations and
suite-level assertions, and one `CaseDraft` per case with its source, input, `each` rows,
timeout and assertions. Syntax and outline problems are handed to the case whose lines
they are on, so one broken case never stops the others.
"""

from __future__ import annotations

import bisect
from pathlib import Path
from typing import get_args

import attrs

from evaldsl.language import ast
from evaldsl.language.diagnostics import Diagnostic
from evaldsl.language.source import Source, Span
from evaldsl.language.values import MISSING
from evaldsl.suites.model import CaseDraft, Layout, Snippet, SourceKind, SourceSpec, SuiteDraft
from evaldsl.syntax.bidi import bidi_warnings
from evaldsl.syntax.outline import CaseOutline, Outline, outline
from evaldsl.syntax.parser import ParseResult, Start, parse


def eval_draft(text: str, path: str) -> SuiteDraft:
    """The `.eval` front end: a suite file's text as a draft."""
    return read_eval(text, path).draft


@attrs.frozen
class EvalFile:
    """A `.eval` text read: what the parser and the outline gave, and the draft."""

    parsed: ParseResult
    outline: Outline
    draft: SuiteDraft


def read_eval(
    text: str,
    path: str,
    *,
    start: Start = "file",
    source: Source | None = None,
    base_dir: Path | None = None,
    standalone: bool = False,
) -> EvalFile:
    """Parse and outline `.eval` text and draft its suite.

    `standalone` is for a program compiled through the API, which is checked against
    whatever run it is given: a file without `case` lines needs no source line, and its
    one case is named "". `base_dir` is where relative paths start (the file's folder
    when not given).
    """
    parsed = parse(text, path, start=start, source=source)
    source = parsed.source
    shape = outline(parsed.program, source)
    base_dir = base_dir if base_dir is not None else Path(path).parent
    all_diags = list(parsed.diagnostics) + list(shape.diagnostics)
    all_diags += bidi_warnings(source, parsed.diagnostics)
    stem = Path(path).stem

    case_lines = [source.position(c.span.start).line for c in shape.cases]
    first_case_line = case_lines[0] if case_lines and not shape.cases[0].implicit else None

    def owner(d: Diagnostic) -> int | None:
        """Which case a diagnostic belongs to (None: the header)."""
        if first_case_line is None:
            return 0 if shape.cases else None
        if d.line < first_case_line:
            return None
        # the last case starting at or before its line (cases are in line order): a
        # search, where a walk over every case for every diagnostic was quadratic
        return max(bisect.bisect_right(case_lines, d.line) - 1, 0)

    per_case: dict[int, list[Diagnostic]] = {}
    header_diags: list[Diagnostic] = []
    for d in all_diags:
        who = owner(d)
        (header_diags if who is None else per_case.setdefault(who, [])).append(d)
    lines: list[str] | None = None  # the text's lines, split at the first syntax error
    for i, diags in per_case.items():
        # a case whose assertion lines did not parse or check is not "a case with no
        # assertions that always passes" (W504): it does not run, and its errors say why
        if any(d.is_error for d in diags):
            diags = [d for d in diags if d.code != "W504"]
        # nor, when its source line did not parse, also "a case with no source" (E503):
        # that line's own error says what is wrong with it
        syntax = [d for d in diags if d.code.startswith("E1")]
        if syntax:
            lines = text.split("\n") if lines is None else lines  # as it is parsed
            if any(_source_line(lines, d.line) for d in syntax):
                diags = [d for d in diags if not (d.code == "E503" and _NO_SOURCE in d.message)]
        per_case[i] = diags

    cases = []
    for i, c in enumerate(shape.cases):
        if not standalone and _nothing_in(c) and not per_case.get(i):
            # a file of no statements but its header (or of none at all): no case, where
            # one case with nothing to check crashed at run time after a clean `check`
            # (as a YAML suite's `cases: []`, W510)
            name = shape.suite_name or stem
            header_diags.append(
                Diagnostic.at(
                    source,
                    shape.suite_span or Span(0, 0),
                    "W510",
                    f'this file has no assertions: suite "{name}" runs nothing',
                    'add a source line such as cassette "x.jsonl" and assertions, or cases '
                    'with case "name"',
                )
            )
            continue
        src: SourceSpec | None = None
        dataset: SourceSpec | None = None
        decl = c.source
        if isinstance(decl, ast.RunDecl):
            src = SourceSpec("run", target=decl.target, source=source, span=decl.span)
        elif isinstance(decl, ast.SourceDecl):
            src = SourceSpec(decl.kind, decl.path, None, decl.format, source, decl.span)
        if c.dataset is not None:
            rows_decl = c.dataset
            dataset = SourceSpec("dataset", rows_decl.path, None, None, source, rows_decl.span)
        diags = per_case.get(i, [])
        if c.implicit and decl is None and c.assertions and not standalone:
            diags.append(
                Diagnostic.at(
                    source,
                    c.assertions[0].span,
                    "E503",
                    "this file has assertions but nothing to check them against",
                    'add a source line such as cassette "x.jsonl" (or open cases with case "name")',
                )
            )
        each = None
        if c.each is not None:
            rows = ast.to_json(c.each.value)
            if isinstance(rows, list) and all(isinstance(r, dict) for r in rows):
                each = tuple(rows)
            else:
                diags.append(
                    Diagnostic.at(
                        source,
                        c.each.span,
                        "E504",
                        "`each` takes a list of rows",
                        'each [{city: "Paris"}, {city: "Tokyo"}]',
                    )
                )
        cases.append(
            CaseDraft(
                name=(
                    ("" if standalone else shape.suite_name or stem)
                    if c.implicit
                    # (`case ""`, an error: named by its place, as a YAML suite's `name: ""`)
                    else c.name or f"case #{i + 1}"
                ),
                path=path,
                line=case_lines[i] if not c.implicit else 1,
                source=src,
                input=ast.to_json(c.input.value) if c.input is not None else MISSING,
                each=each,
                timeout=c.timeout.duration.seconds if c.timeout is not None else None,
                snippets=(Snippet(c.assertions, source),),
                dataset=dataset,
                diagnostics=tuple(diags),
            )
        )
    draft = SuiteDraft(
        name=shape.suite_name or stem,
        path=path,
        base_dir=base_dir,
        tools=shape.declared_tools,
        nodes=shape.declared_nodes,
        judge_model=shape.judge_model,
        timeout=shape.timeout.duration.seconds if shape.timeout is not None else None,
        header=(Snippet(shape.assertions, source),) if shape.assertions else (),
        cases=tuple(cases),
        diagnostics=tuple(header_diags),
        layout=_layout(shape, source, case_lines),
    )
    return EvalFile(parsed, shape, draft)


#: The words that start a case's source line, and the outline's message for a case of none.
_SOURCE_WORDS = frozenset(get_args(SourceKind))  # the words a source line starts with
_NO_SOURCE = "has no source"


def _source_line(lines: list[str], line: int) -> bool:
    """Whether 1-based `line` of the file is a source line (`run …`, `cassette …`)."""
    words = lines[line - 1].split(None, 1) if 0 < line <= len(lines) else []
    return bool(words) and words[0] in _SOURCE_WORDS


def _nothing_in(case: CaseOutline) -> bool:
    """Whether an implicit case (a file without `case` lines) holds nothing: no source,
    dataset, input, rows or assertion."""
    return case.implicit and not (
        case.source or case.dataset or case.input or case.each or case.assertions
    )


def _layout(shape: Outline, source: Source, case_lines: list[int]) -> Layout:
    """Where the cases and the suite's name are, for editors (0-based lines): each case
    from its `case` line to the line before the next one's (the editor leaves out the
    blank lines and comments at its end: it has the lines, and a file read to be run
    needs none of this)."""
    suite = source.position(shape.suite_span.start).line - 1 if shape.suite_span else None
    if not shape.cases or shape.cases[0].implicit:
        return Layout(suite=suite)
    ends = [*case_lines[1:], source.line_count() + 1]
    return Layout(
        cases=tuple(zip([n - 1 for n in case_lines], [n - 2 for n in ends], strict=True)),
        suite=suite,
    )
