"""Outline: group a program's statements into a suite header and cases.

Takes a parsed `Program` and gives an `Outline`: the header (suite name, declared tools
and nodes, judge model, timeout, suite-level assertions) and the cases, each with its
source lines and assertions, plus diagnostics for lines in the wrong place. A file with
no `case` line is one implicit case, so `tool a called; answer contains "x"` is a whole
program. The checker, the compiler, the suite loader and the formatter all read this.
"""

from __future__ import annotations

from typing import get_args

import attrs

from evaldsl.language import ast
from evaldsl.language.diagnostics import Diagnostic
from evaldsl.language.source import Source, Span

_HEADER_ONLY = (ast.SuiteDecl, ast.NamesDecl, ast.JudgeDecl)
_CASE_ONLY = (ast.SourceDecl, ast.RunDecl, ast.ValueDecl)
#: The assertion node classes, the members of `ast.Expr` (AST node classes have no
#: subclasses, so a statement's exact type tells).
_ASSERTIONS = frozenset(get_args(ast.Expr))


@attrs.frozen
class CaseOutline:
    """One case: `case "name"` and the lines after it."""

    name: str
    span: Span
    source: ast.SourceDecl | ast.RunDecl | None
    dataset: ast.SourceDecl | None  # `dataset "rows.json"`: rows of inputs for `run`
    input: ast.ValueDecl | None
    each: ast.ValueDecl | None
    timeout: ast.TimeoutDecl | None
    assertions: tuple[ast.Expr, ...]
    implicit: bool = False  # a file without `case` lines


@attrs.frozen
class Outline:
    """A file's header and cases."""

    suite_name: str | None
    tools: ast.NamesDecl | None
    nodes: ast.NamesDecl | None
    judge_model: str | None
    timeout: ast.TimeoutDecl | None
    assertions: tuple[ast.Expr, ...]  # suite level: every case must satisfy them
    cases: tuple[CaseOutline, ...]
    diagnostics: tuple[Diagnostic, ...]
    suite_span: Span | None = None  # the `suite "name"` line's (an editor's outline)

    @property
    def declared_tools(self) -> frozenset[str] | None:
        return frozenset(n.value for n in self.tools.names) if self.tools else None

    @property
    def declared_nodes(self) -> frozenset[str] | None:
        return frozenset(n.value for n in self.nodes.names) if self.nodes else None


#: Why a second line of a kind is refused, by the kind a case holds once.
_ONE_OF = {
    "source": "a case runs against one source",
    "dataset": "a case has one dataset",
    "input": "a case has one input",
    "each": "a case has one `each` list",
}


def _line_word(stmt: ast.Statement) -> str:
    match stmt:
        case ast.SuiteDecl():
            return "suite"
        case ast.NamesDecl(kind=kind):
            return kind
        case ast.JudgeDecl():
            return "judge"
        case ast.SourceDecl(kind=kind):
            return kind
        case ast.RunDecl():
            return "run"
        case ast.ValueDecl(kind=kind):
            return kind
        case _:
            return type(stmt).__name__


def outline(program: ast.Program, source: Source) -> Outline:
    """Group statements into header and cases; report lines in the wrong place."""
    diags: list[Diagnostic] = []
    has_cases = any(isinstance(s, ast.CaseDecl) for s in program.statements)

    suite_name: str | None = None
    suite_span: Span | None = None
    # every `tools` (`nodes`) line, joined into one declaration at the end: joined line by
    # line, each line copied all the names before it (32,000 lines: 6.8 s)
    tools_lines: list[ast.NamesDecl] = []
    nodes_lines: list[ast.NamesDecl] = []
    judge: str | None = None
    suite_timeout: ast.TimeoutDecl | None = None
    header_asserts: list[ast.Expr] = []
    cases: list[CaseOutline] = []

    # the case being filled
    current: dict[str, object] | None = None
    if not has_cases:
        current = _new_case("", Span(0, 0))

    def close() -> None:
        if current is not None:
            fields = {**current, "assertions": tuple(current["assertions"])}  # type: ignore[arg-type]
            cases.append(CaseOutline(**fields, implicit=not has_cases))  # type: ignore[arg-type]

    def first_line(span: Span) -> int:
        return source.position(span.start).line

    for stmt in program.statements:
        if type(stmt) in _ASSERTIONS:  # most lines: one lookup instead of the tests below
            if current is None:
                header_asserts.append(stmt)  # type: ignore[arg-type]
            else:
                current["assertions"].append(stmt)  # type: ignore[attr-defined]
            continue
        in_case = current is not None and has_cases
        if isinstance(stmt, ast.CaseDecl):
            close()
            if not stmt.name.strip():  # (it ran named after the file, or blank in reports)
                diags.append(
                    Diagnostic.at(
                        source,
                        stmt.span,
                        "E507",
                        "the case's name is empty",
                        'write its name: case "answers with the forecast"',
                    )
                )
            current = _new_case(stmt.name, stmt.span)
            continue
        if isinstance(stmt, _HEADER_ONLY):
            if in_case:
                diags.append(
                    Diagnostic.at(
                        source,
                        stmt.span,
                        "E206",
                        f"`{_line_word(stmt)}` belongs in the suite's header, before the first "
                        "case",
                        "move this line above the first `case`",
                    )
                )
                continue
            match stmt:
                case ast.SuiteDecl(name=name):
                    suite_name, suite_span = name, stmt.span
                case ast.NamesDecl(kind=kind, names=names):
                    (tools_lines if kind == "tools" else nodes_lines).append(stmt)
                    # (a name no tool or node has, as a YAML suite's `tools: [""]` says)
                    diags.extend(
                        Diagnostic.at(
                            source,
                            n.span,
                            "E507",
                            f"`{kind}` holds an empty name",
                            "remove it or name one",
                        )
                        for n in names
                        if not n.value
                    )
                case ast.JudgeDecl(model=model):
                    judge = model
                    if not model.strip():  # (it ran the default model unsaid, as YAML's did)
                        diags.append(
                            Diagnostic.at(
                                source,
                                stmt.span,
                                "E211",
                                "the judge's model is empty: `judge model` names no model",
                                'name it (judge model "gpt-4o-mini"), or remove the line for '
                                "the configured model",
                            )
                        )
            continue
        if isinstance(stmt, ast.TimeoutDecl):
            if current is not None and has_cases:
                current["timeout"] = stmt
            else:
                suite_timeout = stmt
            continue
        if isinstance(stmt, _CASE_ONLY):
            if current is None:
                diags.append(
                    Diagnostic.at(
                        source,
                        stmt.span,
                        "E206",
                        f"`{_line_word(stmt)}` belongs to a case",
                        'open a case first: case "name"',
                    )
                )
                continue
            key: str
            if isinstance(stmt, ast.ValueDecl):
                key = stmt.kind
                previous = current[key]
            else:
                # a dataset supplies inputs to a `run` target, so it sits beside it
                key = (
                    "dataset"
                    if isinstance(stmt, ast.SourceDecl) and stmt.kind == "dataset"
                    else "source"
                )
                previous = current[key]
            if isinstance(previous, (ast.SourceDecl, ast.RunDecl, ast.ValueDecl)):
                diags.append(
                    Diagnostic.at(
                        source,
                        stmt.span,
                        "E503",
                        f"this case already has `{_line_word(previous)}` on line "
                        f"{first_line(previous.span)}; {_ONE_OF[key]}",
                        "split it into two cases",
                    )
                )
                continue
            current[key] = stmt
            continue
        # an assertion
        if current is None:
            header_asserts.append(stmt)
        else:
            current["assertions"].append(stmt)  # type: ignore[attr-defined]
    close()

    for case in cases:
        # a case's timeout bounds its `run` target's call: on a recording or a state it
        # bounded nothing and said nothing (a budget the user believed in)
        if (
            case.timeout is not None
            and case.source is not None
            and not isinstance(case.source, ast.RunDecl)
        ):
            diags.append(Diagnostic.at(source, case.timeout.span, "W514", *UNBOUNDED_TIMEOUT))
        # an implicit case (a file without `case` lines) may have a source too
        if case.input is not None and not isinstance(case.source, ast.RunDecl):
            diags.append(
                Diagnostic.at(
                    source,
                    case.input.span,
                    "E206",
                    "`input` is the input of a `run` target, and this case has none",
                    "add run package.module:function, or remove `input`",
                )
            )
    if has_cases:
        for case in cases:
            if case.source is None and case.dataset is None:
                diags.append(
                    Diagnostic.at(
                        source,
                        case.span,
                        "E503",
                        f'case "{case.name}" has no source',
                        'add a line such as cassette "x.jsonl", state "s.json", '
                        'run package.module:function or dataset "rows.json"',
                    )
                )
            if case.dataset is not None and not isinstance(case.source, ast.RunDecl):
                diags.append(
                    Diagnostic.at(
                        source,
                        case.dataset.span,
                        "E503",
                        "a dataset's rows are inputs: the case also needs a `run` target",
                        "add run package.module:function",
                    )
                )
            # dataset rows carry their own expectations (expectedOutput, expectedBehavior)
            if not case.assertions and not header_asserts and case.dataset is None:
                diags.append(
                    Diagnostic.at(
                        source,
                        case.span,
                        "W504",
                        f'case "{case.name}" has no assertions: it checks nothing '
                        "(a case without assertions passes when its run succeeds)",
                        "add what the run must have done, e.g. tool NAME called",
                    )
                )
    return Outline(
        suite_name,
        _joined(tools_lines),
        _joined(nodes_lines),
        judge,
        suite_timeout,
        tuple(header_asserts),
        tuple(cases),
        tuple(diags),
        suite_span,
    )


#: W514's message and hint, in `.eval` files and YAML suites alike.
UNBOUNDED_TIMEOUT = (
    "`timeout` limits a `run` target's call, and this case reads a recorded run: it limits nothing",
    "remove it; `latency < 5s` tests the time the recorded run took",
)


def _new_case(name: str, span: Span) -> dict[str, object]:
    return {
        "name": name,
        "span": span,
        "source": None,
        "dataset": None,
        "input": None,
        "each": None,
        "timeout": None,
        "assertions": [],  # a list while the case fills (a tuple in the outline)
    }


def _joined(lines: list[ast.NamesDecl]) -> ast.NamesDecl | None:
    """The names of every `tools` (or `nodes`) line in order, at the first line's span."""
    if len(lines) <= 1:
        return lines[0] if lines else None
    names = tuple(name for line in lines for name in line.names)
    return ast.NamesDecl(lines[0].kind, names, span=lines[0].span)
