"""evaldsl: a terse, typed assertion language for AI agents and workflows.

    import evaldsl
    program = evaldsl.compile("tool search called 2 times; answer matches /\\d+ C/")
    result = program.check("cassette.jsonl")   # a path, a list of events, a state, a Run
    result.passed                               # bool
    [v.status for v in result.verdicts]         # "pass" | "fail" | "skip" | "error"
    evaldsl.expect(run, "answer matches /C/")   # in a test: AssertionError with the report

Every subject, predicate and line, with its doc and an example: `evaldsl vocabulary` (the
table is `evaldsl.language.vocabulary` for subjects and lines and
`evaldsl.predicates.registry` for predicates); the language reference is docs/language.md.
"""

from typing import TYPE_CHECKING, Any

from evaldsl.gcpause import paused_gc

# Importing evaldsl makes ~100 classes and many small objects, and no garbage: the
# collections those allocations would trigger only walk them again (a tenth of a start).
with paused_gc(long_lived=True):
    from evaldsl.api import CompiledCase, Program, Result, compile, diagnose, load_run
    from evaldsl.language.diagnostics import Diagnostic, EvalDslError
    from evaldsl.language.verdicts import Verdict
    from evaldsl.runs.model import Run, RunError
    from evaldsl.version import __version__

if TYPE_CHECKING:  # loaded on first use (below); typed as itself for type checkers
    from evaldsl.expectation import expect

__all__ = [
    "CompiledCase",
    "Diagnostic",
    "EvalDslError",
    "Program",
    "Result",
    "Run",
    "RunError",
    "Verdict",
    "__version__",
    "compile",
    "diagnose",
    "expect",
    "load_run",
]


def __getattr__(name: str) -> Any:
    # `expect` loads the console report and the runner's records: on first use only, so
    # `import evaldsl` (and every pytest run where evaldsl is installed) stays light
    if name == "expect":
        from evaldsl.expectation import expect

        return expect
    raise AttributeError(f"module 'evaldsl' has no attribute {name!r}")
