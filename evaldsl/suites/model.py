"""The suite model: what front ends draft, and the checked, compiled cases they become.

Takes nothing itself: every front end (`.eval` in `evalfile.py`, YAML and JSON in
`yamlfile.py`, verydia datasets in `datasets.py`) produces a `SuiteDraft` of `CaseDraft`s
holding `Snippet`s of parsed assertions; `build.py` expands, checks and compiles a draft
into a `Suite` of `Case`s. `evaldsl.compile` gives the same `Case`s.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

import attrs

from evaldsl.compile.compiler import CompiledAssertion
from evaldsl.compile.evaluate import Result, RunLike, check_run
from evaldsl.judge.protocol import Judge
from evaldsl.language import ast
from evaldsl.language.diagnostics import Diagnostic
from evaldsl.language.source import Source, Span
from evaldsl.language.values import MISSING
from evaldsl.runs.index import Needs
from evaldsl.suites.templates import render_node, render_text

if TYPE_CHECKING:  # (made by the YAML and JSON front end only: a `.eval` run never builds them)
    from evaldsl.suites.places import PathPlace, TextPlace

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
    sample: str | None = None  # one sample of an Inspect AI log with several

    def decl(self) -> ast.SourceDecl | None:
        """The source line of a file source (`cassette`, `trace`, `state`, `dataset`)."""
        if self.kind in ("cassette", "trace", "state", "dataset") and self.path is not None:
            kind: Literal["cassette", "trace", "state", "dataset"] = self.kind
            return ast.SourceDecl(kind, self.path, self.format, span=self.span)
        return None

    def node(self) -> ast.SourceDecl | ast.RunDecl | None:
        """The source line this spec stands for, as the checker reads it."""
        if self.kind == "run":
            return ast.RunDecl(self.target, span=self.span) if self.target is not None else None
        return self.decl()

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
    #: what the object it was converted from says that no assertion checks (`description:
    #: …`), which `evaldsl convert` keeps as comments
    notes: tuple[str, ...] = attrs.field(default=(), eq=False)

    def rendered(self, row: dict[str, Any]) -> tuple[Snippet, tuple[Diagnostic, ...]]:
        """This snippet for one `each` row, and any problem the rendering brought."""
        if self.template is not None:
            return self.template(row)
        return Snippet(render_node(self.exprs, row), self.source, row=row), ()


@attrs.frozen
class Layout:
    """What a front end saw where: DSL text, each case's first and last 0-based line,
    source paths, and the line that names the suite. Editors read it instead of walking
    the file again. A `.eval` front end gives the cases' and the suite's lines only (a
    case up to the line before the next one's; none for a file without `case` lines); a
    YAML or JSON one all of it."""

    texts: tuple[TextPlace, ...] = ()
    cases: tuple[tuple[int, int], ...] = ()
    paths: tuple[PathPlace, ...] = ()
    suite: int | None = None  # `suite "x"`, `suite: x` (or `name: x`)


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
    row: str | None = None  # the name of the dataset row this case was made of
    diagnostics: tuple[Diagnostic, ...] = ()  # problems that belong to this case
    notes: tuple[str, ...] = ()  # fields no assertion reads (`tags: …`), for `convert`


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
    notes: tuple[str, ...] = ()  # fields no assertion reads (`description: …`), for `convert`
    layout: Layout = Layout()  # where things are written


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

    def check(self, run: RunLike, *, base: Path | None = None) -> Result:
        """Check a run (a path, a list of events, a state dict or a `Run`) against this
        case's assertions, suite-level ones first."""
        return check_run(self.assertions, self.needs, run, base)


class LaterChecks(Protocol):
    """The checks of a suite's cases, made one at a time (`suites.build.CaseChecks`)."""

    def case(self, index: int) -> tuple[Case, tuple[Diagnostic, ...]]:
        """Case `index` checked and compiled, and its own diagnostics."""
        ...

    def own(self, index: int) -> tuple[Diagnostic, ...]:
        """Case `index`'s own diagnostics (checked, not compiled)."""
        ...

    def diagnostics(self, own: Sequence[Sequence[Diagnostic]]) -> tuple[Diagnostic, ...]:
        """The suite's diagnostics, given each case's own (in case order)."""
        ...

    def built(self) -> Suite:
        """The whole suite checked and compiled here and now (as `load_suite` builds it)."""
        ...


@attrs.frozen
class Suite:
    """A loaded suite file."""

    name: str
    path: str
    base_dir: Path
    cases: tuple[Case, ...]
    diagnostics: tuple[Diagnostic, ...]
    judge: Judge | None = attrs.field(default=None, eq=False, repr=False)
    #: Set when the cases are checked and compiled later, each by the process that runs
    #: it (`suites.build.CaseChecks`, for `-j`): until then `cases` are placeholders that
    #: cannot run, and `diagnostics` are not known yet.
    later: LaterChecks | None = attrs.field(default=None, eq=False, repr=False)

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.is_error]
