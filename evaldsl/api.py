"""The public API: compile evaldsl text into a program, check runs against it.

Takes DSL text (and optionally a judge, a base folder for case files) and gives a
`Program` whose `check(run)` returns a `Result`: one verdict per statement, in source
order. Everything here only calls the pipeline's stages: parse → outline → check →
compile → index → verdicts.

>>> program = compile('tool get_weather called once; answer contains "sunny"')
>>> program.check([{"type": "tool.call", "name": "get_weather", "arguments": {}}]).statuses
['pass', 'fail']
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from evaldsl.check.checker import Environment, FactsProvider, check_outline
from evaldsl.compile.compiler import CompiledAssertion, Compiler
from evaldsl.judge.protocol import Judge
from evaldsl.language import ast
from evaldsl.language.diagnostics import Diagnostic, EvalDslError, sort_key
from evaldsl.language.outline import CaseOutline, Outline, outline
from evaldsl.language.parser import Start, parse
from evaldsl.language.source import Source
from evaldsl.language.verdicts import Status, Verdict, case_passed, score
from evaldsl.runs.detect import coerce_run
from evaldsl.runs.detect import load_run as _load_run
from evaldsl.runs.index import Needs, index_run, paused_gc
from evaldsl.runs.model import Run, RunError

RunLike = str | os.PathLike[str] | Sequence[dict[str, Any]] | dict[str, Any] | Run


@attrs.frozen
class Result:
    """The verdicts of one case's assertions against one run.

    `verdicts` has one entry per statement, in source order (`a; b` gives two).
    """

    verdicts: tuple[Verdict, ...]
    texts: tuple[str, ...]
    error: str | None = None  # the run could not be read or produced

    @property
    def passed(self) -> bool:
        """No assertion failed or errored, and the run itself did not crash."""
        return self.error is None and case_passed(self.verdicts)

    @property
    def score(self) -> float:
        """passed ÷ (passed + failed + errors); 0 for a crashed run."""
        return 0.0 if self.error is not None else score(self.verdicts)

    @property
    def statuses(self) -> list[Status]:
        return [v.status for v in self.verdicts]


@attrs.frozen
class CompiledCase:
    """One case's compiled assertions (suite-level ones first) and what they need."""

    name: str
    assertions: tuple[CompiledAssertion, ...]
    needs: Needs
    outline: CaseOutline | None = None

    def check(self, run: RunLike, *, base: Path | None = None) -> Result:
        """Check a run (a path, a list of events, a state dict or a `Run`)."""
        texts = tuple(a.text for a in self.assertions)
        try:
            facts = index_run(coerce_run(run, base=base), self.needs)
        except RunError as err:
            return crashed(self.assertions, str(err))
        return Result(tuple(evaluate(a, facts) for a in self.assertions), texts)


def evaluate(assertion: CompiledAssertion, facts: Any) -> Verdict:
    """Run one checker; an unexpected exception becomes that assertion's error verdict."""
    try:
        return assertion.run(facts)
    except Exception as err:  # one broken assertion must not take the others down
        return Verdict("error", f"internal error: {type(err).__name__}: {err}", assertion.node.span)


def crashed(assertions: Sequence[CompiledAssertion], message: str) -> Result:
    """A run that could not be read or produced: every assertion errors with the reason."""
    verdicts = tuple(Verdict("error", message, a.node.span) for a in assertions)
    return Result(verdicts, tuple(a.text for a in assertions), error=message)


@attrs.frozen
class Program:
    """A compiled file or snippet: its source, outline, diagnostics and cases."""

    source: Source
    outline: Outline
    diagnostics: tuple[Diagnostic, ...]
    cases: tuple[CompiledCase, ...]

    def check(self, run: RunLike, *, case: str | None = None) -> Result:
        """Check a run against the program's case (name it when there are several)."""
        return self.case(case).check(run)

    def case(self, name: str | None = None) -> CompiledCase:
        if name is None:
            if len(self.cases) != 1:
                names = ", ".join(repr(c.name) for c in self.cases)
                raise ValueError(f"this program has {len(self.cases)} cases ({names}); name one")
            return self.cases[0]
        for c in self.cases:
            if c.name == name:
                return c
        raise KeyError(f"no case named {name!r}")

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if not d.is_error]


def diagnose(
    text: str,
    path: str = "<string>",
    *,
    start: Start = "file",
    base_dir: Path | None = None,
    facts: FactsProvider | None = None,
    env: Environment | None = None,
    source: Source | None = None,
) -> tuple[Source, ast.Program, Outline, list[Diagnostic]]:
    """Parse and check without raising: every diagnostic, sorted by position."""
    parsed = parse(text, path, start=start, source=source)
    shape = outline(parsed.program, parsed.source)
    found = list(parsed.diagnostics)
    found.extend(check_outline(shape, parsed.source, base_dir=base_dir, facts=facts, env=env))
    return parsed.source, parsed.program, shape, sorted(found, key=sort_key)


def compile(
    text: str,
    *,
    path: str = "<string>",
    judge: Judge | None = None,
    base_dir: str | os.PathLike[str] | None = None,
    env: Environment | None = None,
) -> Program:
    """Compile evaldsl text; raise `EvalDslError` carrying every diagnostic on errors.

    >>> compile("tool search called 2 times; answer matches /\\\\d+ C/").cases[0].name
    ''
    """
    base = Path(base_dir) if base_dir is not None else None
    facts = None
    if base is not None:
        from evaldsl.check.sources import read_facts

        facts = read_facts
    # Compiling builds many small objects and no garbage cycles: the cyclic collector
    # would only rescan the growing AST (a third of the time on large files).
    with paused_gc(long_lived=True):
        source, _, shape, diagnostics = diagnose(text, path, base_dir=base, facts=facts, env=env)
        if any(d.is_error for d in diagnostics):
            raise EvalDslError(diagnostics)
        cases = compile_cases(shape, source, judge)
    return Program(source, shape, tuple(diagnostics), cases)


def compile_cases(shape: Outline, source: Source, judge: Judge | None) -> tuple[CompiledCase, ...]:
    """Compile every case of a checked outline (suite-level assertions into each)."""
    cases = []
    for case in shape.cases:
        compiler = Compiler(source, judge, shape.judge_model)
        assertions = compiler.compile_all((*shape.assertions, *case.assertions))
        cases.append(CompiledCase(case.name, tuple(assertions), compiler.needs, case))
    if not cases:
        compiler = Compiler(source, judge, shape.judge_model)
        assertions = compiler.compile_all(shape.assertions)
        cases.append(CompiledCase("", tuple(assertions), compiler.needs))
    return tuple(cases)


def load_run(path: str | os.PathLike[str], format: str | None = None) -> Run:
    """Read a run from a file: a traceplay cassette, an event list, a workflow state, …

    The format is detected unless named (`traceplay`, `events`, `verydia`, `state`,
    `openai`, `anthropic`, `otel`). Large cassettes are streamed, not loaded whole.
    """
    return _load_run(path, format)
