"""Suites: `.eval`, YAML and JSON suite files → checked, compiled cases.

Takes a suite file's path and gives a `Suite`: its compiled cases (with `each` rows and
dataset rows expanded), what each case runs against, and every diagnostic found while
loading and checking it. The three front ends produce the same `SuiteDraft` (header,
cases, assertion snippets with their sources); everything after that is shared: expansion,
checking against each case's source file, compiling. A case with an error of its own is
kept, marked as not runnable, so one bad case never stops the others.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Literal

import attrs

from evaldsl import ast
from evaldsl.checker import Environment, check_statements
from evaldsl.compiler import CompiledAssertion, Compiler, Judge
from evaldsl.diagnostics import Diagnostic, sort_key
from evaldsl.facts import read_facts
from evaldsl.index import Needs
from evaldsl.outline import outline
from evaldsl.parser import parse
from evaldsl.source import Position, Source, Span
from evaldsl.templates import render_node, render_text, render_value, row_label
from evaldsl.values import MISSING
from evaldsl.vocabulary import SourceKind as RunKind

SourceKind = Literal["cassette", "trace", "state", "run", "dataset"]


@attrs.frozen
class SourceSpec:
    """What a case runs against: a file (`cassette`, `trace`, `state`) or a `run` target."""

    kind: SourceKind
    path: str | None = None  # as written (relative to the suite file)
    target: str | None = None  # `package.module:function`
    format: str | None = None
    source: Source = attrs.field(factory=lambda: Source(""), eq=False, repr=False)
    span: Span = attrs.field(default=Span(0, 0), eq=False, repr=False)

    def decl(self) -> ast.SourceDecl | None:
        if self.kind in ("cassette", "trace", "state", "dataset") and self.path is not None:
            kind: Literal["cassette", "trace", "state", "dataset"] = self.kind
            return ast.SourceDecl(kind, self.path, self.format, span=self.span)
        return None

    def rendered(self, row: dict[str, Any]) -> SourceSpec:
        if self.path is None:
            return self
        return attrs.evolve(self, path=render_text(self.path, row))


@attrs.frozen
class Snippet:
    """Assertions parsed from one piece of text, with the source their spans index.

    An `each` row renders it (`rendered`): its strings get the row's values, and its
    messages show them (`row`). A snippet converted from a traceplay object renders the
    object and converts it again instead (`template`), as traceplay renders the object.
    """

    exprs: tuple[ast.Expr, ...]
    source: Source
    row: dict[str, Any] | None = attrs.field(default=None, eq=False)
    template: Callable[[dict[str, Any]], tuple[Snippet, tuple[Diagnostic, ...]]] | None = (
        attrs.field(default=None, eq=False, repr=False)
    )

    def rendered(self, row: dict[str, Any]) -> tuple[Snippet, tuple[Diagnostic, ...]]:
        """This snippet for one `each` row, and any problem the rendering brought."""
        if self.template is not None:
            return self.template(row)
        return Snippet(render_node(self.exprs, row), self.source, row=row), ()


@attrs.frozen
class DatasetRow:
    """One verydia dataset row, turned into a case."""

    name: str
    input: Any
    snippet: Snippet | None


@attrs.frozen
class CaseDraft:
    """A case as a front end read it, before expansion, checking and compiling."""

    name: str
    path: str
    line: int
    source: SourceSpec | None
    input: Any = MISSING
    each: tuple[dict[str, Any], ...] | None = None
    timeout: float | None = None
    snippets: tuple[Snippet, ...] = ()
    dataset: SourceSpec | None = None
    diagnostics: tuple[Diagnostic, ...] = ()  # problems that belong to this case


@attrs.frozen
class SuiteDraft:
    """A suite as a front end read it."""

    name: str
    path: str
    base_dir: Path
    tools: frozenset[str] | None = None
    nodes: frozenset[str] | None = None
    judge_model: str | None = None
    timeout: float | None = None
    header: tuple[Snippet, ...] = ()
    cases: tuple[CaseDraft, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()  # problems of the whole suite


@attrs.frozen
class Case:
    """A checked, compiled case, ready to run."""

    name: str
    path: str
    line: int
    source: SourceSpec | None
    input: Any
    timeout: float | None
    assertions: tuple[CompiledAssertion, ...]
    sources: tuple[Source, ...]  # the source of each assertion, for locations
    needs: Needs
    error: str | None = None  # why the case cannot run (its check errors)
    judged: bool = False  # has `judged` assertions (the runner plans their calls)


@attrs.frozen
class Suite:
    """A loaded suite file."""

    name: str
    path: str
    base_dir: Path
    cases: tuple[Case, ...]
    diagnostics: tuple[Diagnostic, ...]
    judge: Judge | None = attrs.field(default=None, eq=False, repr=False)

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.is_error]


# ---- loading --------------------------------------------------------------------------


def is_suite_file(path: Path) -> bool:
    """`.eval` files, and YAML/JSON files whose top level has `cases:`."""
    if path.suffix == ".eval":
        return True
    if path.suffix not in (".yaml", ".yml", ".json"):
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
        if p.is_dir():
            for sub in sorted(p.rglob("*")):
                parts = sub.relative_to(p).parts
                if any(
                    part.startswith(".") or part in ("node_modules", "__pycache__")
                    for part in parts
                ):
                    continue
                if sub.is_file() and is_suite_file(sub):
                    found.append(sub)
        elif p.is_file():
            found.append(p)
        else:
            missing.append(str(raw))
    return found, missing


def read_draft(path: str | os.PathLike[str]) -> SuiteDraft:
    """Read a suite file with the front end its extension names."""
    p = Path(path)
    try:
        text = p.read_bytes().decode("utf-8-sig")
    except OSError as err:
        diag = Diagnostic.in_file(str(p), "E501", f"cannot read suite file: {err.strerror}")
        return SuiteDraft(p.stem, str(p), p.parent, diagnostics=(diag,))
    except UnicodeDecodeError as err:
        diag = Diagnostic.in_file(
            str(p),
            "E504",
            f"suite file is not UTF-8 text (byte {err.start})",
            hint="save it as UTF-8",
        )
        return SuiteDraft(p.stem, str(p), p.parent, diagnostics=(diag,))
    if p.suffix in (".yaml", ".yml", ".json"):
        from evaldsl.yamlsuite import yaml_draft

        return yaml_draft(text, str(p))
    return eval_draft(text, str(p))


def eval_draft(text: str, path: str) -> SuiteDraft:
    """The `.eval` front end."""
    parsed = parse(text, path)
    source = parsed.source
    shape = outline(parsed.program, source)
    base_dir = Path(path).parent
    all_diags = list(parsed.diagnostics) + list(shape.diagnostics)

    case_lines = [source.position(c.span.start).line for c in shape.cases]
    first_case_line = case_lines[0] if case_lines and not shape.cases[0].implicit else None

    def owner(d: Diagnostic) -> int | None:
        """Which case a diagnostic belongs to (None: the header)."""
        if first_case_line is None:
            return 0 if shape.cases else None
        if d.line < first_case_line:
            return None
        index = 0
        for i, line in enumerate(case_lines):
            if line <= d.line:
                index = i
        return index

    per_case: dict[int, list[Diagnostic]] = {}
    header_diags: list[Diagnostic] = []
    for d in all_diags:
        who = owner(d)
        (header_diags if who is None else per_case.setdefault(who, [])).append(d)

    cases = []
    for i, c in enumerate(shape.cases):
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
        if c.implicit and decl is None and c.assertions:
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
                name=c.name or shape.suite_name or Path(path).stem,
                path=path,
                line=source.position(c.span.start).line if not c.implicit else 1,
                source=src,
                input=ast.to_json(c.input.value) if c.input is not None else MISSING,
                each=each,
                timeout=c.timeout.duration.seconds if c.timeout is not None else None,
                snippets=(Snippet(c.assertions, source),),
                dataset=dataset,
                diagnostics=tuple(diags),
            )
        )
    return SuiteDraft(
        name=shape.suite_name or Path(path).stem,
        path=path,
        base_dir=base_dir,
        tools=shape.declared_tools,
        nodes=shape.declared_nodes,
        judge_model=shape.judge_model,
        timeout=shape.timeout.duration.seconds if shape.timeout is not None else None,
        header=(Snippet(shape.assertions, source),) if shape.assertions else (),
        cases=tuple(cases),
        diagnostics=tuple(header_diags),
    )


def draft_from_text(text: str, path: str) -> SuiteDraft:
    """A draft from text in memory (an editor's unsaved buffer); the front end is chosen
    by the path's extension, and relative paths resolve next to `path`."""
    if Path(path).suffix in (".yaml", ".yml", ".json"):
        from evaldsl.yamlsuite import yaml_draft

        return yaml_draft(text, path)
    return eval_draft(text, path)


def check_text(text: str, path: str) -> list[Diagnostic]:
    """Every diagnostic `evaldsl check` reports for this text, as if saved at `path`."""
    return list(build_suite(draft_from_text(text.removeprefix("\ufeff"), path)).diagnostics)


# ---- expansion, checking, compiling ---------------------------------------------------


def load_suite(path: str | os.PathLike[str], *, judge: Judge | None = None) -> Suite:
    """Read, expand, check and compile a suite file. Never raises for bad input."""
    from evaldsl.index import paused_gc

    with paused_gc(long_lived=True):  # many small objects, no cycles: see api.compile
        return build_suite(read_draft(path), judge=judge)


def build_suite(draft: SuiteDraft, *, judge: Judge | None = None) -> Suite:
    """Expand `each` and dataset rows, check every case against its source, compile."""
    diags: list[Diagnostic] = list(draft.diagnostics)
    header_env = Environment(declared_tools=draft.tools, declared_nodes=draft.nodes)
    header_diags: list[Diagnostic] = []
    for snippet in draft.header:
        header_diags.extend(check_statements(snippet.exprs, snippet.source, header_env))
    diags.extend(header_diags)
    header_broken = any(d.is_error for d in (*draft.diagnostics, *header_diags))

    cases: list[Case] = []
    for case in draft.cases:
        for concrete in _expand(case, draft, diags):
            cases.append(_build_case(concrete, draft, header_env, header_broken, judge, diags))
    return Suite(
        draft.name,
        draft.path,
        draft.base_dir,
        tuple(cases),
        tuple(sorted(set(diags), key=sort_key)),
        judge,
    )


def _expand(case: CaseDraft, draft: SuiteDraft, diags: list[Diagnostic]) -> list[CaseDraft]:
    expanded = [case]
    if case.dataset is not None:
        from evaldsl.datasets import dataset_rows

        rows, problems = dataset_rows(case.dataset, draft.base_dir)
        diags.extend(problems)
        expanded = [
            attrs.evolve(
                case,
                name=f"{case.name} [{row.name}]",
                input=row.input,
                dataset=None,
                snippets=case.snippets + ((row.snippet,) if row.snippet is not None else ()),
            )
            for row in rows
        ] or [case]
    if case.each is not None:
        out = []
        for base in expanded:
            for i, row in enumerate(case.each, 1):
                snippets: list[Snippet] = []
                rendering: list[Diagnostic] = []
                for s in base.snippets:
                    snippet, found = s.rendered(row)
                    snippets.append(snippet)
                    rendering.extend(found)
                out.append(
                    attrs.evolve(
                        base,
                        name=f"{base.name} #{i} [{row_label(row)}]",
                        source=base.source.rendered(row) if base.source else None,
                        input=render_value(base.input, row)
                        if base.input is not MISSING
                        else MISSING,
                        snippets=tuple(snippets),
                        diagnostics=(*base.diagnostics, *rendering),
                        each=None,
                    )
                )
        expanded = out
    return expanded


def _build_case(
    case: CaseDraft,
    draft: SuiteDraft,
    header_env: Environment,
    header_broken: bool,
    judge: Judge | None,
    diags: list[Diagnostic],
) -> Case:
    own: list[Diagnostic] = list(case.diagnostics)
    env = _environment(case, draft, header_env, own)
    for snippet in case.snippets:
        own.extend(check_statements(snippet.exprs, snippet.source, env))
    diags.extend(own)

    assertions: list[CompiledAssertion] = []
    sources: list[Source] = []
    needs = Needs()
    errors = [d for d in own if d.is_error]
    error: str | None = None
    if errors or header_broken:
        first = errors[0] if errors else None
        error = (
            f"not run: {len(errors)} check error{'s' if len(errors) != 1 else ''} "
            f"(first: {first.path}:{first.line}:{first.column}: {first.message})"
            if first
            else "not run: the suite's header has errors"
        )
    else:
        for snippet in (*draft.header, *case.snippets):
            row = snippet.row
            shown = None if row is None else (lambda text, row=row: render_text(text, row))
            compiler = Compiler(snippet.source, judge, draft.judge_model, needs, shown)
            for expr in snippet.exprs:
                assertions.append(compiler.compile(expr))
                sources.append(snippet.source)
    return Case(
        name=case.name,
        path=case.path,
        line=case.line,
        source=case.source,
        input=case.input,
        timeout=case.timeout if case.timeout is not None else draft.timeout,
        assertions=tuple(assertions),
        sources=tuple(sources),
        needs=needs,
        error=error,
        judged=any(_has_judge(a.node) for a in assertions),
    )


def _has_judge(expr: ast.Expr) -> bool:
    match expr:
        case ast.Check(predicate=ast.Judged()):
            return True
        case ast.Not(operand=operand):
            return _has_judge(operand)
        case ast.And(operands=ops) | ast.Or(operands=ops):
            return any(_has_judge(op) for op in ops)
    return False


def _environment(
    case: CaseDraft, draft: SuiteDraft, header: Environment, own: list[Diagnostic]
) -> Environment:
    spec = case.source
    if spec is None:
        return header
    if spec.kind == "run":
        if spec.target is not None:
            problem = _target_problem(spec.target, draft.base_dir)
            if problem:
                own.append(Diagnostic.at(spec.source, spec.span, "E509", problem[0], problem[1]))
        return attrs.evolve(header, source_kind=None, source_word="run target")
    kind: RunKind = "state" if spec.kind == "state" else "trace"
    env = attrs.evolve(header, source_kind=kind, source_word=spec.kind)
    decl = spec.decl()
    if decl is None or "{{" in decl.path:
        return env
    found = read_facts(decl, draft.base_dir, spec.source)
    if isinstance(found, Diagnostic):
        own.append(found)
        return env
    return attrs.evolve(
        env,
        source_kind=found.kind or kind,
        recorded_tools=found.tools,
        recorded_nodes=found.nodes,
    )


def _target_problem(target: str, base_dir: Path) -> tuple[str, str] | None:
    """Whether `package.module:function` names a module file that exists, found without
    importing anything (`check` executes nothing)."""
    import importlib.util
    import sys

    module, _, function = target.partition(":")
    if not module or not function:
        return (f"`{target}` is not a target", "write run package.module:function")
    parts = module.split(".")
    roots = [base_dir, Path.cwd(), *(Path(p) for p in sys.path if p)]
    for root in roots:
        base = root.joinpath(*parts)
        if base.with_suffix(".py").is_file() or (base / "__init__.py").is_file():
            return None
    try:
        if importlib.util.find_spec(parts[0]) is not None and len(parts) == 1:
            return None
        if len(parts) > 1 and importlib.util.find_spec(parts[0]) is not None:
            return None  # an installed package: its submodules are checked when run
    except (ImportError, ValueError):
        pass
    return (
        f"cannot find module `{module}` for run target `{target}`",
        f"looked next to the suite ({base_dir}), in the working folder and on sys.path",
    )


def assertion_location(a: CompiledAssertion, source: Source) -> tuple[str, int, int, int, str]:
    """path, line, column, end column and source line of a compiled assertion."""
    start: Position = source.position(a.node.span.start)
    end: Position = source.position(a.node.span.end)
    end_column = end.column if end.line == start.line else len(source.line_text(start.line)) + 1
    return source.path, start.line, start.column, end_column, source.line_text(start.line)
