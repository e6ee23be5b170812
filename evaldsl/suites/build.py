"""Building suites: a draft → expanded, checked, compiled cases.

Takes a `SuiteDraft` (from any front end) and gives a `Suite`: `each` and dataset rows are
expanded into cases, every case is checked in its own environment (what its source file
provides, read once by a `SourceReader`), suite-level assertions are checked in each
case's environment (once per distinct one), and every case without an error of its own is
compiled. A case with an error is kept, marked as not runnable, so one bad case never
stops the others.
`evaldsl.compile` and `evaldsl check`/`run` all go through `check_suite` and
`compile_suite`.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from evaldsl.check.checker import CaseBounds, check_statements, header_bounds
from evaldsl.check.environment import Environment, SourceReader, case_environment
from evaldsl.check.sources import read_facts
from evaldsl.compile.compiler import CompiledAssertion, Compiler
from evaldsl.gcpause import paused_gc
from evaldsl.judge.config import judge_argument
from evaldsl.judge.protocol import Judge
from evaldsl.language.diagnostics import Diagnostic, sort_key
from evaldsl.language.source import Position, Source, Span
from evaldsl.language.values import MISSING
from evaldsl.runs.detect import inspect_samples
from evaldsl.runs.heldfiles import reading_once
from evaldsl.runs.index import Needs
from evaldsl.runs.model import given
from evaldsl.suites.files import draft_from_text, read_draft
from evaldsl.suites.model import Case, CaseDraft, Snippet, Suite, SuiteDraft
from evaldsl.suites.templates import (
    missing,
    placeholder_span,
    placeholders,
    render_text,
    render_value,
    row_label,
)


@attrs.frozen
class CheckedCase:
    """One expanded case, its environment and its own diagnostics."""

    draft: CaseDraft
    env: Environment
    diagnostics: tuple[Diagnostic, ...]

    @property
    def has_errors(self) -> bool:
        return any(d.is_error for d in self.diagnostics)


@attrs.frozen
class CheckedSuite:
    """A draft after expansion and checking: what compiling needs, and every diagnostic."""

    draft: SuiteDraft
    cases: tuple[CheckedCase, ...]
    diagnostics: tuple[Diagnostic, ...]  # every problem of the suite, sorted, once each
    header_broken: bool  # the header has an error: no case can run


def load_suite(
    path: str | os.PathLike[str], *, judge: Judge | None = None, later: bool = False
) -> Suite:
    """Read, expand, check and compile a suite file. Never raises for bad input.

    `later`: read and expand it only, and leave each case's check and compilation to
    where it runs (`evaldsl run`: see `CaseChecks`); a suite with suite-level
    assertions is built at once all the same (they are checked against every case).
    A `path` that is not a `str` or `os.PathLike` (None, bytes), or a `judge` that is not
    callable, is a `TypeError` saying what it takes."""
    if not isinstance(path, str | os.PathLike):
        raise TypeError(
            f"load_suite() takes a suite file's path as a str or os.PathLike, not {given(path)}"
            + (": decode it first (path.decode())" if isinstance(path, bytes) else "")
        )
    judge = judge_argument(judge)
    with paused_gc(long_lived=True):  # many small objects, no cycles: see gcpause
        draft = read_draft(path)
        if later and not draft.header:
            return CaseChecks.suite_of(draft, judge)
        return build_suite(draft, judge=judge)


def build_suite(
    draft: SuiteDraft,
    *,
    judge: Judge | None = None,
    env: Environment | None = None,
    read: SourceReader | None = read_facts,
) -> Suite:
    """Expand, check and compile a draft (`read=None`: source files are not read)."""
    return compile_suite(check_suite(draft, env=env, read=read), judge=judge)


def check_suite(
    draft: SuiteDraft,
    *,
    env: Environment | None = None,
    read: SourceReader | None = read_facts,
    targets: bool = True,
) -> CheckedSuite:
    """Expand every case and check it against its source; check the suite's header.

    `env` supplies declarations the draft does not make itself (the draft's `tools` and
    `nodes` lines win); `read` reads case source files (`None`: not read); `targets`
    looks for the module of each `run` target.
    """
    header_env = _header_environment(draft, env)
    diags: list[Diagnostic] = list(draft.diagnostics)
    cases: list[CheckedCase] = []
    samples: dict[tuple[str, str | None], list[str]] = {}  # each file read once a suite
    header = header_bounds((snippet.exprs, snippet.source) for snippet in draft.header)
    for case in draft.cases:
        for concrete in _expand(case, draft, diags, samples):
            checked = check_case(
                concrete, header_env, draft.base_dir, read, targets=targets, suite=header
            )
            diags.extend(checked.diagnostics)
            cases.append(checked)
    diags.extend(named_twice([c.draft for c in cases]))
    header_diags = check_header(draft.header, header_env, cases)
    diags.extend(header_diags)
    header_broken = any(d.is_error for d in (*draft.diagnostics, *header_diags))
    return CheckedSuite(draft, tuple(cases), tuple(sorted(set(diags), key=sort_key)), header_broken)


#: How many cases a header problem names before it counts the rest.
NAMED_CASES = 3


def check_header(
    header: Sequence[Snippet], header_env: Environment, cases: Sequence[CheckedCase]
) -> list[Diagnostic]:
    """The suite-level assertions checked in each case's environment (they hold for every
    case): once per distinct environment (its source's kind, the tools and nodes it
    recorded), not once per case, so thousands of rows of one recording cost one check. A
    problem met in some cases only is said once, at the header's assertion, naming them
    (the first `NAMED_CASES` and a count); one met in every case, as it is. No case: the
    header's own environment."""
    if not header:
        return []
    groups: dict[Environment, list[str]] = {}
    for case in cases:
        groups.setdefault(case.env, []).append(case.draft.name)
    found: dict[Diagnostic, list[str]] = {}  # in the order met
    for env, names in groups.items() or {header_env: []}.items():
        for snippet in header:
            for diagnostic in check_statements(snippet.exprs, snippet.source, env):
                found.setdefault(diagnostic, []).extend(names)
    return [
        d
        if len(names) == len(cases)
        else attrs.evolve(d, message=_in_cases(names, len(cases), d.message))
        for d, names in found.items()
    ]


def _in_cases(names: list[str], total: int, message: str) -> str:
    """A header problem's message, naming the cases it is met in: `in case "s" (1 of 2
    cases): a state cannot provide …`."""
    shown = ", ".join(f'"{n}"' for n in names[:NAMED_CASES])
    more = f" and {len(names) - NAMED_CASES} more" if len(names) > NAMED_CASES else ""
    which = "case" if len(names) == 1 else "cases"
    return f"in {which} {shown}{more} ({len(names)} of {total} cases): {message}"


def named_twice(cases: Sequence[CaseDraft]) -> list[Diagnostic]:
    """W507 at each expanded case named like one before it in its suite: reports, `-k`,
    `evaldsl diff` and the run history tell a suite's cases apart by their names, so two
    of one name would be merged or matched at random."""
    first: dict[str, CaseDraft] = {}
    found: list[Diagnostic] = []
    for case in cases:
        before = first.setdefault(case.name, case)
        if before is case:
            continue
        if before.line == case.line and case.source is not None and case.source.sample:
            # (samples of one Inspect AI log: their ids are one, and each case's error)
            said = (
                f"two samples of the log of the case at line {case.line} are both named "
                f'"{case.name}"'
            )
            hint = "give each sample of the log an id of its own"
        elif before.line == case.line and case.row is not None:
            # (rows of one dataset: `each` rows are numbered)
            said = (
                f"two rows of the dataset of the case at line {case.line} are both named "
                f'"{case.name}"'
            )
            hint = "give each row of the dataset a `metadata.id` of its own"
        elif before.line == case.line:  # (one case, listed again by a YAML alias: `- *c`)
            said = f'the case "{case.name}" at line {case.line} is listed twice (a YAML alias)'
            hint = "write the second one out with a name of its own, or remove the alias"
        else:
            said = f'case "{case.name}" is named like the case at line {before.line}'
            hint = "give each case of a suite a name of its own"
        found.append(
            Diagnostic.in_file(
                case.path,
                "W507",
                f"{said}: reports, `-k`, `evaldsl diff` and the run history tell cases apart "
                "by their names",
                line=case.line,
                hint=hint,
            )
        )
    return found


def _header_environment(draft: SuiteDraft, env: Environment | None) -> Environment:
    """The environment every case starts from: `env`, with the draft's own `tools` and
    `nodes` lines."""
    base = env or Environment()
    return attrs.evolve(
        base,
        declared_tools=draft.tools if draft.tools is not None else base.declared_tools,
        declared_nodes=draft.nodes if draft.nodes is not None else base.declared_nodes,
    )


def check_case(
    concrete: CaseDraft,
    header_env: Environment,
    base_dir: Path,
    read: SourceReader | None = read_facts,
    *,
    targets: bool = True,
    suite: CaseBounds | None = None,
) -> CheckedCase:
    """Check one expanded case in its own environment (its source file read by `read`);
    `suite`: the header's counts and bounds, which the case's may contradict."""
    own = list(concrete.diagnostics)
    decl = concrete.source.node() if concrete.source is not None else None
    source = concrete.source.source if concrete.source is not None else Source("")
    sample = concrete.source.sample if concrete.source is not None else None
    case_env, problems = case_environment(
        decl, source, header_env, base_dir, read, targets=targets, sample=sample
    )
    own.extend(problems)
    # (held across the snippets: a YAML case has many, a dataset row's is its own)
    bounds = suite.copy() if suite is not None else CaseBounds()
    for snippet in concrete.snippets:
        found = check_statements(snippet.exprs, snippet.source, case_env, bounds=bounds)
        if snippet.row is not None:  # (an `each` row's: see `_of_row`)
            found = [_of_row(d, concrete.name) for d in found]
        own.extend(found)
    return CheckedCase(concrete, case_env, tuple(own))


def _of_row(diagnostic: Diagnostic, case: str) -> Diagnostic:
    """A problem of what an `each` row rendered, naming the row's case (`case "x #2
    [k=(]"`) when a placeholder is written at its place (from its column to the end of
    its line: `/x{{k}}/` rendered as `/x(/`, `regex: "x{{k}}"`): every row's problems are
    placed at the template, so the message alone tells which row to fix. A problem of
    the template itself is every row's, and said once, as it was.
    """
    if "{{" not in diagnostic.source_line[diagnostic.column - 1 :]:
        return diagnostic
    return attrs.evolve(diagnostic, message=f'in case "{case}": {diagnostic.message}')


@attrs.frozen
class CaseChecks:
    """A suite read and expanded whose cases are checked and compiled one at a time, where
    each runs (`-j`: the parent reads and expands the file, each forked worker checks and
    compiles the cases it runs, and no case is checked twice; a serial run checks the
    cases of a recording when it comes to them, `runner/turns.py`).

    `suite_of` gives what the parent holds meanwhile: a `Suite` whose `later` is these
    checks, with the cases' names, sources and inputs (for `-k`, scheduling and the
    report) but no assertions, and an `error` (a case run from it by mistake fails,
    never passes), and no diagnostics yet. `case(i)` gives case `i` checked and
    compiled, with its own diagnostics (`own(i)`: checked only); `diagnostics(own)` the
    suite's, every case's own given, as `check_suite` gives them. For a suite without
    suite-level assertions only: those are checked against every case's environment, so
    such a suite is built at once.
    """

    draft: SuiteDraft
    header_env: Environment
    cases: tuple[CaseDraft, ...]
    found: tuple[Diagnostic, ...]  # of reading and expanding the file
    judge: Judge | None = attrs.field(eq=False, repr=False)

    @classmethod
    def suite_of(cls, draft: SuiteDraft, judge: Judge | None = None) -> Suite:
        """The suite the parent holds, its `later` the checks of its cases."""
        assert not draft.header, "suite-level assertions are checked against every case"
        found: list[Diagnostic] = list(draft.diagnostics)
        samples: dict[tuple[str, str | None], list[str]] = {}  # each file read once a suite
        cases = tuple(
            concrete for case in draft.cases for concrete in _expand(case, draft, found, samples)
        )
        found.extend(named_twice(cases))
        waiting = tuple(
            _case(c, draft, assertions=(), sources=(), needs=Needs(), error=NOT_CHECKED)
            for c in cases
        )
        checks = cls(draft, _header_environment(draft, None), cases, tuple(found), judge)
        return Suite(draft.name, draft.path, draft.base_dir, waiting, (), judge, later=checks)

    def case(self, index: int) -> tuple[Case, tuple[Diagnostic, ...]]:
        """Case `index` checked and compiled, and its own diagnostics."""
        with paused_gc():  # as `load_suite` builds: small objects, no cycles
            checked = check_case(self.cases[index], self.header_env, self.draft.base_dir)
            compiled = _compile_case(checked, self.draft, self.header_broken, self.judge)
        return compiled, checked.diagnostics

    def own(self, index: int) -> tuple[Diagnostic, ...]:
        """Case `index`'s own diagnostics: checked (its source file read), not compiled."""
        return check_case(self.cases[index], self.header_env, self.draft.base_dir).diagnostics

    @property
    def header_broken(self) -> bool:
        return any(d.is_error for d in self.draft.diagnostics)

    def diagnostics(self, own: Sequence[Sequence[Diagnostic]]) -> tuple[Diagnostic, ...]:
        """The suite's diagnostics, given each case's own (in case order)."""
        every = [*self.found, *(d for case in own for d in case)]
        return tuple(sorted(set(every), key=sort_key))

    def built(self) -> Suite:
        """The whole suite checked and compiled here and now (as `load_suite` builds it)."""
        return build_suite(self.draft, judge=self.judge)


#: The `error` of a case whose check was left to the process that runs it (`CaseChecks`).
NOT_CHECKED = "not run: its check was left to the process that runs it, which did not run"


def compile_suite(checked: CheckedSuite, *, judge: Judge | None = None) -> Suite:
    """Compile every case of a checked suite that has no error (suite-level assertions
    first, into each case)."""
    draft = checked.draft
    cases = [_compile_case(c, draft, checked.header_broken, judge) for c in checked.cases]
    return Suite(draft.name, draft.path, draft.base_dir, tuple(cases), checked.diagnostics, judge)


def _expand(
    case: CaseDraft,
    draft: SuiteDraft,
    diags: list[Diagnostic],
    samples: dict[tuple[str, str | None], list[str]],
) -> list[CaseDraft]:
    expanded = [case]
    if case.dataset is not None:
        # imported for a case with a dataset only: it loads PyYAML (a faster start)
        from evaldsl.suites.datasets import dataset_rows

        rows, problems = dataset_rows(case.dataset, draft.base_dir)
        if not rows and not problems:
            diags.append(_expands_to_none(case, "its dataset has no rows"))
            return []
        # (a row with an error does not run, so it is no case that always passes: its
        # error says what is wrong, not W504; an error of the file is every row's)
        file_broken = any(d.is_error for d in problems)
        idle = [
            row.name
            for row in rows
            if (row.snippet is None or not row.snippet.exprs)
            and not file_broken
            and not any(d.is_error for d in row.diagnostics)
        ]
        if idle and not draft.header and not any(s.exprs for s in case.snippets):
            diags.append(_checks_nothing(case, idle, len(rows)))
        # the file's problems are every row's (and the case's when no row was read): a
        # case whose expectations or inputs were not all read must not run, never pass
        expanded = [
            attrs.evolve(
                case,
                name=f"{case.name} [{row.name}]",
                input=row.input,
                dataset=None,
                row=row.name,
                snippets=case.snippets + ((row.snippet,) if row.snippet is not None else ()),
                diagnostics=(*case.diagnostics, *problems, *row.diagnostics),
            )
            for row in rows
        ] or [attrs.evolve(case, diagnostics=(*case.diagnostics, *problems))]
    if case.each == ():
        diags.append(_expands_to_none(case, "`each []` has no rows"))
        return []
    if case.each is not None:
        out = []
        for base in expanded:
            # (what rendering fills in: the source's path, the input and the assertions)
            source_path = base.source.path if base.source is not None else None
            keys = placeholders(
                (base.name, source_path, base.input, *(s.exprs for s in base.snippets))
            )
            for i, row in enumerate(case.each, 1):
                # the name is a string of the case too (docs/language.md §2.4), and keeps
                # traceplay's `#i [k=v]`, which tells rows apart
                name = f"{render_text(base.name, row)} #{i} [{row_label(row)}]"
                snippets: list[Snippet] = []
                rendering: list[Diagnostic] = []
                for s in base.snippets:
                    snippet, found = s.rendered(row)
                    snippets.append(snippet)
                    rendering.extend(_of_row(d, name) for d in found)
                unknown = missing(keys, row)
                if unknown:
                    rendering.append(_unknown_keys(base, i, row, unknown))
                out.append(
                    attrs.evolve(
                        base,
                        name=name,
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
    return [sample for base in expanded for sample in _samples(base, draft, samples)]


def _unknown_keys(case: CaseDraft, i: int, row: dict[str, Any], keys: list[str]) -> Diagnostic:
    """W509: placeholders an `each` row has no value for, left as written (as traceplay
    leaves them): a typo that a test of absence (`not answer contains "{{cty}}"`) would
    pass on."""
    said = ", ".join(f"`{{{{{k}}}}}`" for k in keys)
    has = ", ".join(f"`{k}`" for k in row) or "no key"
    message = f'row #{i} of case "{case.name}" has no value for {said}: left as written'
    # at the first placeholder of its assertions that the row lacks, where an editor
    # shows the typo (one in the case's name, source or input: at the case)
    for s in case.snippets:
        found = placeholder_span(s.source.text, keys[0])
        if found is not None:
            return Diagnostic.at(s.source, Span(*found), "W509", message, f"the row has {has}")
    return Diagnostic.in_file(case.path, "W509", message, line=case.line, hint=f"the row has {has}")


def _checks_nothing(case: CaseDraft, idle: list[str], count: int) -> Diagnostic:
    """W504, once a case: dataset rows that expect nothing (no `expectedOutput`, flags all
    false) in a case of no assertions of its own, whose cases would always pass."""
    shown = ", ".join(f'"{name}"' for name in idle[:3]) + (", …" if len(idle) > 3 else "")
    which = (
        "no row of its dataset expects anything"
        if len(idle) == count
        else f"{len(idle)} of the {count} rows of its dataset expect nothing"
    )
    return Diagnostic.in_file(
        case.path,
        "W504",
        f'case "{case.name}" has no assertions and {which} ({shown}): those cases always pass',
        line=case.line,
        hint="give the rows `expectedOutput` or an `expectedBehavior` flag that is true, "
        "or the case assertions of its own",
    )


def _expands_to_none(case: CaseDraft, why: str) -> Diagnostic:
    """W508: a case whose rows are none is never run (pytest's empty parameter set)."""
    return Diagnostic.in_file(
        case.path,
        "W508",
        f'{why}: case "{case.name}" is never run',
        line=case.line,
        hint="give it a row, or remove the case",
    )


def _samples(
    case: CaseDraft, draft: SuiteDraft, seen: dict[tuple[str, str | None], list[str]]
) -> list[CaseDraft]:
    """An Inspect AI log with several samples: one case per sample, named by its id.
    `seen` holds the sample ids of the files read so far (a suite's cases often name the
    same file: it is looked at once)."""
    spec = case.source
    if spec is None or spec.kind not in ("cassette", "trace") or spec.path is None:
        return [case]
    if "{{" in spec.path:
        return [case]
    key = (spec.path, spec.format)
    ids = seen.get(key)
    if ids is None:
        ids = seen[key] = inspect_samples(draft.base_dir / spec.path, spec.format)
    return [
        attrs.evolve(case, name=f"{case.name} [{i}]", source=attrs.evolve(spec, sample=i))
        for i in ids
    ] or [case]


#: How a case's `error` begins when its own check errors kept it from running.
NOT_RUN_FOR = "not run:"


def check_errors_of(error: str | None) -> int:
    """How many check errors of its own a case's `error` says kept it from running (0 for
    any other error, or none); a report that lists the suite's diagnostics apart counts
    them once (JUnit).

    >>> check_errors_of("not run: 2 check errors (first: a.eval:3:1: …)")
    2
    >>> check_errors_of("not run: the suite's header has errors"), check_errors_of(None)
    (0, 0)
    """
    if error is None or not error.startswith(NOT_RUN_FOR):
        return 0
    count, _, rest = error[len(NOT_RUN_FOR) :].strip().partition(" ")
    return int(count) if count.isdigit() and rest.startswith("check error") else 0


def _compile_case(
    checked: CheckedCase, draft: SuiteDraft, header_broken: bool, judge: Judge | None
) -> Case:
    case = checked.draft
    assertions: list[CompiledAssertion] = []
    sources: list[Source] = []
    needs = Needs()
    judged = False  # whether an assertion asks the judge
    errors = [d for d in checked.diagnostics if d.is_error]
    error: str | None = None
    if errors or header_broken:
        first = min(errors, key=sort_key) if errors else None  # (the reader's first)
        error = (
            f"{NOT_RUN_FOR} {len(errors)} check error{'s' if len(errors) != 1 else ''} "
            f"(first: {first.brief})"
            if first
            else "not run: the suite's header has errors"
        )
    else:
        for snippet in (*draft.header, *case.snippets):
            row = snippet.row
            shown = None if row is None else functools.partial(render_text, row=row)
            compiler = Compiler(snippet.source, judge, draft.judge_model, needs, shown)
            for expr in snippet.exprs:
                assertions.append(compiler.compile(expr))
                sources.append(snippet.source)
            judged = judged or compiler.judged
    return _case(
        case,
        draft,
        assertions=tuple(assertions),
        sources=tuple(sources),
        needs=needs,
        error=error,
        judged=judged,
    )


def _case(
    case: CaseDraft,
    draft: SuiteDraft,
    *,
    assertions: tuple[CompiledAssertion, ...],
    sources: tuple[Source, ...],
    needs: Needs,
    error: str | None,
    judged: bool = False,
) -> Case:
    """The `Case` of an expanded case draft: its name, place, source, input and timeout
    (the suite's when it has none), with what compiling it gave."""
    return Case(
        name=case.name,
        path=case.path,
        line=case.line,
        source=case.source,
        input=case.input,
        timeout=case.timeout if case.timeout is not None else draft.timeout,
        assertions=assertions,
        sources=sources,
        needs=needs,
        error=error,
        judged=judged,
    )


def assertion_location(a: CompiledAssertion, source: Source) -> tuple[str, int, int, int, str]:
    """path, line, column, end column and source line of a compiled assertion."""
    start: Position = source.position(a.node.span.start)
    end: Position = source.position(a.node.span.end)
    end_column = end.column if end.line == start.line else len(source.line_text(start.line)) + 1
    return source.path, start.line, start.column, end_column, source.line_text(start.line)


def check_text(text: str, path: str) -> list[Diagnostic]:
    """Every diagnostic `evaldsl check` reports for this text, as if saved at `path`
    (each small recording read once, as `check` reads it: `runs.heldfiles`). The
    collector is paused as `check` pauses it: the editor checks on every change, and
    collections of the many small objects made grew its time faster than the file (one
    pause for both steps: each pausing alone, a collection came between them)."""
    with reading_once(), paused_gc():
        return check_draft(draft_from_text(text.removeprefix("\ufeff"), path))


def check_draft(draft: SuiteDraft) -> list[Diagnostic]:
    """Every diagnostic `evaldsl check` reports for a drafted suite (`check_text` of a
    draft already made: an editor drafts its buffer once a version, for its features and
    its check alike)."""
    with reading_once(), paused_gc():
        return list(check_suite(draft).diagnostics)
