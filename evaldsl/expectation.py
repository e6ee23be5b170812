"""`expect`: evaldsl assertions inside ordinary Python tests.

Takes a run (anything `Program.check` accepts: a path, a list of events, a state dict, a
`Run`) and evaldsl statements, and gives the `Result` when every statement passes or
skips; otherwise it raises `AssertionError` whose message is the console's report of
each failing statement (its source line, a caret, found and expected), so pytest,
unittest or a plain script shows exactly what `evaldsl run` would.

    >>> events = [{"type": "tool.call", "name": "get_weather", "arguments": {}}]
    >>> expect(events, "tool get_weather called once").statuses
    ['pass']
"""

from __future__ import annotations

import io
import os

from evaldsl.api import Result, RunLike, compile, folder_argument, text_argument
from evaldsl.judge.protocol import Judge
from evaldsl.language.diagnostics import EvalDslError, render
from evaldsl.runner.results import AssertionResult, CaseResult

#: The path failures name: the statements are a string in the caller's code, not a file.
EXPECT_PATH = "<expect>"


class MalformedStatements(EvalDslError):
    """`expect`'s text has errors: an `EvalDslError` whose message shows each in full
    (the statement, a caret, the hint), as pytest prints it under the test's line."""

    def __str__(self) -> str:
        count = len(self.errors)
        if not count:  # no statement at all (W510): nothing to check is not a pass
            return f"evaldsl: no statements to check\n{render(self.diagnostics)}"
        shown = render(self.errors or self.diagnostics)
        return f"evaldsl: {count} error{'s' if count != 1 else ''} in the statements\n{shown}"


def expect(
    run: RunLike,
    text: str,
    *,
    judge: Judge | None = None,
    base_dir: str | os.PathLike[str] | None = None,
) -> Result:
    r"""Check `run` against `text`; raise `AssertionError` with the report when it fails.

    `text` is one or more statements (`;` or newlines between them), without `case`
    lines. Malformed text, or text of no statement, raises `evaldsl.EvalDslError` showing
    every error in full (its source line, a caret, the hint), and a run that cannot be
    read fails with the reason.
    `base_dir` is where relative paths in the text and a relative `run` path start
    (default: the working folder). Without `judge`, `judged` statements are skipped.

    >>> expect([{"type": "llm.response", "output": "31 C"}], r"answer matches /\d+ F/")
    Traceback (most recent call last):
    ...
    AssertionError: evaldsl: 1 of 1 statement failed
    <expect>:1:1: fail: expected answer matches /\d+ F/, found "31 C"
      |
    1 | answer matches /\d+ F/
      | ^^^^^^^^^^^^^^^^^^^^^^
      = found: "31 C"
      = expected: /\d+ F/
    """
    __tracebackhide__ = True  # pytest shows the caller's line, not this function's
    text = text_argument(text, "expect", "the statements")
    base = folder_argument(base_dir, "expect")
    try:
        program = compile(text, path=EXPECT_PATH, judge=judge, base_dir=base)
    except EvalDslError as malformed:
        # raised from here, not chained: pytest shows the test's line and the errors,
        # none of the compiler's frames nor its one-line summary
        raise MalformedStatements(malformed.diagnostics) from None
    case = program.case()
    if not case.assertions:
        raise MalformedStatements(program.diagnostics)
    result = case.check(run, base=base)
    if result.passed:
        return result
    if result.error is not None:
        # every statement errored with the same reason: say it once
        raise AssertionError(f"evaldsl: the run could not be checked: {result.error}")
    # Only a failure needs the reporters and the suite loader: `import evaldsl` (which
    # imports this module) stays as quick as it was.
    from evaldsl.reports.console import ConsoleReporter
    from evaldsl.suites.build import assertion_location

    located = []
    for assertion, verdict in zip(case.assertions, result.verdicts, strict=True):
        path, line, column, end_column, source_line = assertion_location(assertion, program.source)
        located.append(
            AssertionResult(
                assertion.text,
                path,
                line,
                column,
                verdict.status,
                verdict.message,
                verdict.actual,
                verdict.expected,
                end_column,
                source_line,
            )
        )
    failed = CaseResult("", False, result.score, 0.0, assertions=tuple(located))
    out = io.StringIO()
    ConsoleReporter(out, color=False).problems(failed)
    bad = sum(1 for a in located if a.status in ("fail", "error"))
    total = len(located)
    headline = f"evaldsl: {bad} of {total} statement{'s' if total != 1 else ''} failed"
    raise AssertionError(f"{headline}\n{out.getvalue().rstrip()}")
