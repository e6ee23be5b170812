"""The public API: compile evaldsl text into a program, check runs against it.

Takes DSL text (and optionally a judge, a base folder for case files) and gives a
`Program` whose `check(run)` returns a `Result`: one verdict per statement, in source
order. A program goes through exactly the stages a suite file does (the `.eval` front
end, then `suites.build`: expansion, checking, compiling), to the same `Case` model.

>>> program = compile('tool get_weather called once; answer contains "sunny"')
>>> program.check([{"type": "tool.call", "name": "get_weather", "arguments": {}}]).statuses
['pass', 'fail']
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import get_args

import attrs

from evaldsl.check.environment import Environment, SourceReader
from evaldsl.check.sources import read_facts
from evaldsl.compile.evaluate import Result, RunLike
from evaldsl.gcpause import paused_gc
from evaldsl.judge.config import judge_argument
from evaldsl.judge.protocol import Judge
from evaldsl.language import ast
from evaldsl.language.diagnostics import Diagnostic, EvalDslError
from evaldsl.language.source import Source, Span
from evaldsl.runs.detect import load_run as read_run
from evaldsl.runs.model import Run, given
from evaldsl.suites.build import check_suite, compile_suite
from evaldsl.suites.evalfile import read_eval
from evaldsl.suites.model import Case
from evaldsl.syntax.outline import Outline
from evaldsl.syntax.parser import Start

#: Why a program of no assertions is refused: every run would pass it.
NOTHING_CHECKED = "this program has no assertions, so nothing would be checked"
NOTHING_HINT = "add what the run must show, e.g. `tool search called` or `steps <= 10`"

#: The compiled case `Program.cases` holds: the suites' `Case` (one model for both).
CompiledCase = Case

__all__ = ["CompiledCase", "Program", "Result", "RunLike", "compile", "diagnose", "load_run"]


@attrs.frozen
class Program:
    """A compiled file or snippet: its source, outline, diagnostics and cases."""

    source: Source
    outline: Outline
    diagnostics: tuple[Diagnostic, ...]
    cases: tuple[Case, ...]

    def check(self, run: RunLike, *, case: str | None = None) -> Result:
        """Check a run against the program's case (name it when there are several).

        A case with no assertions raises `ValueError`: its result would pass every run.
        """
        chosen = self.case(case)
        if not chosen.assertions:
            raise ValueError(f"{NOTHING_CHECKED}: {NOTHING_HINT}")
        return chosen.check(run)

    def case(self, name: str | None = None) -> Case:
        """The case of that name, or the only one."""
        if name is not None and not isinstance(name, str):
            raise TypeError(f"case= takes a case's name as a str or None, not {given(name)}")
        if name is None:
            if len(self.cases) != 1:
                names = ", ".join(repr(c.name) for c in self.cases)
                raise ValueError(f"this program has {len(self.cases)} cases ({names}); name one")
            return self.cases[0]
        for c in self.cases:
            if c.name == name:
                return c
        names = ", ".join(repr(c.name) for c in self.cases)
        raise KeyError(f"no case named {name!r}: this program's cases are {names}")

    @property
    def warnings(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if not d.is_error]


def text_argument(text: object, function: str, what: str = "the program's text") -> str:
    """`text` when it is a `str`; otherwise the `TypeError` saying what `function` takes
    (a path or bytes, the likely mistakes, with how to pass them)."""
    if isinstance(text, str):
        return text
    if isinstance(text, os.PathLike):
        fix = "read the file first (Path(...).read_text()), or use evaldsl.suites.load_suite(path)"
    elif isinstance(text, bytes | bytearray):
        fix = "decode them first (text.decode())"
    else:
        fix = 'write the statements as a string, e.g. "tool search called"'
    raise TypeError(f"{function}() takes {what} as a str, not {given(text)}: {fix}")


def folder_argument(base_dir: object, function: str) -> Path | None:
    """`base_dir` as a `Path` (None stays None); otherwise the `TypeError`."""
    if base_dir is None:
        return None
    if isinstance(base_dir, str | os.PathLike):
        return Path(base_dir)
    raise TypeError(
        f"{function}() takes base_dir= as a folder's path (a str or os.PathLike) or None, "
        f"not {given(base_dir)}"
    )


def path_argument(path: object, function: str) -> None:
    """The `TypeError` for a `path=` (the name messages give the text) that is not a `str`."""
    if not isinstance(path, str):
        raise TypeError(f"{function}() takes path= as a str naming the text, not {given(path)}")


def environment_argument(env: object, function: str) -> None:
    """The `TypeError` for an `env=` that is not an `Environment` (or None)."""
    if env is not None and not isinstance(env, Environment):
        raise TypeError(
            f"{function}() takes env= as an evaldsl.check.environment.Environment (the tools "
            f"and nodes a program may name) or None, not {given(env)}"
        )


def diagnose(
    text: str,
    path: str = "<string>",
    *,
    start: Start = "file",
    base_dir: str | os.PathLike[str] | None = None,
    facts: SourceReader | None = None,
    env: Environment | None = None,
    source: Source | None = None,
) -> tuple[Source, ast.Program, Outline, list[Diagnostic]]:
    """Parse and check without raising: every diagnostic, sorted by position.

    Case source files are read (by `facts`, e.g. `evaldsl.check.sources.read_facts`) only
    when both `facts` and `base_dir` are given.
    """
    text = text_argument(text, "diagnose")
    path_argument(path, "diagnose")
    if start not in get_args(Start):
        choices = " or ".join(repr(s) for s in get_args(Start))
        raise ValueError(f"diagnose() takes start= as {choices}, not {start!r}")
    base_dir = folder_argument(base_dir, "diagnose")
    if facts is not None and not callable(facts):
        raise TypeError(
            "diagnose() takes facts= as a function reading a case's source file (e.g. "
            f"evaldsl.check.sources.read_facts) or None, not {given(facts)}"
        )
    environment_argument(env, "diagnose")
    if source is not None and not isinstance(source, Source):
        raise TypeError(
            f"diagnose() takes source= as an evaldsl Source or None, not {given(source)}"
        )
    read = read_eval(text, path, start=start, source=source, base_dir=base_dir, standalone=True)
    reader = facts if base_dir is not None else None
    checked = check_suite(read.draft, env=env, read=reader, targets=False)
    return read.parsed.source, read.parsed.program, read.outline, list(checked.diagnostics)


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
    # (cheap isinstance tests: a wrong type failed deep inside, in Python's words)
    text = text_argument(text, "compile")
    judge = judge_argument(judge)
    path_argument(path, "compile")
    base = folder_argument(base_dir, "compile")
    environment_argument(env, "compile")
    # Compiling builds many small objects and no garbage cycles: the cyclic collector
    # would only rescan the growing AST (a third of the time on large files).
    with paused_gc(long_lived=True):
        read = read_eval(text, path, base_dir=base, standalone=True)
        reader = read_facts if base is not None else None
        checked = check_suite(read.draft, env=env, read=reader, targets=False)
        diagnostics = list(checked.diagnostics)
        if any(d.is_error for d in diagnostics):
            raise EvalDslError(diagnostics)
        suite = compile_suite(checked, judge=judge)
    nothing = not any(c.assertions for c in suite.cases)
    if nothing and not any(d.code in ("W504", "W510") for d in diagnostics):
        # (a suite file says W510 for the same; a snippet that checks nothing is as
        # worth a warning, and `check` then refuses it)
        diagnostics.append(
            Diagnostic.at(read.parsed.source, Span(0, 0), "W510", NOTHING_CHECKED, NOTHING_HINT)
        )
    return Program(read.parsed.source, read.outline, tuple(diagnostics), suite.cases)


def load_run(path: str | os.PathLike[str], format: str | None = None) -> Run:
    """Read a run from a file: a traceplay cassette, an event list, a workflow state, …

    The format is detected unless named (`traceplay`, `events`, `verydia`, `state`,
    `openai`, `anthropic`, `otel`). Large cassettes are streamed, not loaded whole.
    """
    if not isinstance(path, str | os.PathLike):
        raise TypeError(
            f"load_run() takes a file's path as a str or os.PathLike, not {given(path)}: "
            "a run already in memory (events, a dict) goes to program.check(value) as it is"
        )
    if format is not None and not isinstance(format, str):
        raise TypeError(f"load_run() takes format= as a str or None, not {given(format)}")
    return read_run(path, format)
