"""evaldsl: a terse, typed assertion language for AI agents and workflows.

    import evaldsl
    program = evaldsl.compile("tool search called 2 times; answer matches /\\d+ C/")
    result = program.check("cassette.jsonl")   # a path, a list of events, a state, a Run
    result.passed                               # bool
    [v.status for v in result.verdicts]         # "pass" | "fail" | "skip" | "error"

Vocabulary (the full table, with docs and examples, is `evaldsl.language.vocabulary`, and
`evaldsl help` prints it):

Subjects: answer, answer[N], answer json [PATH], output, memory[.KEY], state.FIELD, status,
nodes, tools, tool NAME, tokens, input tokens, output tokens, steps, tool calls, guards,
errors, latency, cost, budget.

Predicates: called [N times | once | twice | at least N times | at most N times |
between N and M times], never called, args [PATH] TEST, result [PATH] TEST, == != < <= > >=,
contains, contains all [..], contains any [..], in order [..], in [..], only [..], is empty,
not empty, is TYPE, starts with, ends with, matches /re/, has KEY, judged "rubric",
within budget, cites tool NAME; and `no tool NAME`, `node NAME visited`, `every tool …`,
combined with not, and, or and parentheses.
"""

from evaldsl.gcpause import paused_gc

# Importing evaldsl makes ~100 classes and many small objects, and no garbage: the
# collections those allocations would trigger only walk them again (a tenth of a start).
with paused_gc(long_lived=True):
    from evaldsl.api import CompiledCase, Program, Result, compile, diagnose, load_run
    from evaldsl.language.diagnostics import Diagnostic, EvalDslError
    from evaldsl.language.verdicts import Verdict
    from evaldsl.runs.model import Run, RunError

__version__ = "0.1.0"

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
    "load_run",
]
