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

import importlib
from typing import TYPE_CHECKING, Any

import evaldsl.cache.compiled
from evaldsl.lazyattrs import lazy_attributes
from evaldsl.version import __version__

# attrs' methods for evaldsl's classes are compiled once and then loaded (see cache/compiled.py)
evaldsl.cache.compiled.install()

if TYPE_CHECKING:  # loaded on first use (below); typed as themselves for type checkers
    from evaldsl.api import CompiledCase, Program, Result, compile, diagnose, load_run
    from evaldsl.expectation import expect
    from evaldsl.language.diagnostics import Diagnostic, EvalDslError
    from evaldsl.language.verdicts import Verdict
    from evaldsl.runs.model import Run, RunError

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

# Where each public name lives. They are imported on first use, not with the package:
# every submodule (`evaldsl.tools.cli`, the pytest plugin) imports this package first, and
# loading the whole API here would make `evaldsl check` import what it never uses.
# `expect` loads the console report and the runner's records.
_HOMES = {
    "CompiledCase": "evaldsl.api",
    "Program": "evaldsl.api",
    "Result": "evaldsl.api",
    "compile": "evaldsl.api",
    "diagnose": "evaldsl.api",
    "load_run": "evaldsl.api",
    "Diagnostic": "evaldsl.language.diagnostics",
    "EvalDslError": "evaldsl.language.diagnostics",
    "Verdict": "evaldsl.language.verdicts",
    "Run": "evaldsl.runs.model",
    "RunError": "evaldsl.runs.model",
    "expect": "evaldsl.expectation",
}


# `evaldsl.compile` names both the sub-package of the compiler and the public function.
# Loading a sub-package sets the package's attribute of its name, once: load it now and
# remove that attribute, so `evaldsl.compile` reaches `__getattr__`, which gives the function.
importlib.import_module("evaldsl.compile")
del globals()["compile"]


_load = lazy_attributes(__name__, _HOMES)


def __getattr__(name: str) -> Any:
    from evaldsl.gcpause import paused_gc

    # the API makes ~100 classes and many small objects, and no garbage: the collections
    # those allocations would trigger only walk them again (a tenth of a start)
    with paused_gc(long_lived=True):
        return _load(name)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
