"""Evaluating compiled assertions against a run.

Takes a case's compiled assertions, what they need from a run, and a run (a path, events,
a state, a `Run`), and gives a `Result`: the run is indexed once for all the assertions,
then every checker reads the index. A run that cannot be read makes every assertion an
error verdict with the reason; an assertion whose checker fails unexpectedly is an error
verdict of its own, never a crash of the others.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import attrs

from evaldsl.compile.compiler import CompiledAssertion
from evaldsl.language.jsjson import NotJsonValue
from evaldsl.language.limits import MAX_TRACE_NESTING
from evaldsl.language.paths import TooManyValues
from evaldsl.language.verdicts import Status, Verdict, case_passed, score, verdict
from evaldsl.runs.detect import coerce_run
from evaldsl.runs.index import NOT_JSON_HINT, Needs, RunFacts
from evaldsl.runs.model import Run, RunError
from evaldsl.runs.passes import index_run
from evaldsl.runs.reads import read_for

#: What `check` accepts as a run: a path, a list of events, a state dict, or a `Run`.
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


def evaluate(assertion: CompiledAssertion, facts: RunFacts) -> Verdict:
    """Run one checker; an unexpected exception becomes that assertion's error verdict."""
    try:
        return assertion.run(facts)
    except Exception as err:  # one broken assertion must not take the others down
        return failed(assertion, err)


def evaluate_all(assertions: Iterable[CompiledAssertion], facts: RunFacts) -> list[Verdict]:
    """`evaluate` of each assertion, in order, from one frame: a call of `evaluate` for
    each was ~450 instructions an assertion, 2% of deciding 1,000 after a pass."""
    verdicts = []
    for assertion in assertions:
        try:
            verdicts.append(assertion.run(facts))
        except Exception as err:  # one broken assertion must not take the others down
            verdicts.append(failed(assertion, err))
    return verdicts


def failed(assertion: CompiledAssertion, err: Exception) -> Verdict:
    """The error verdict of an assertion whose checker raised `err`."""
    if isinstance(err, RecursionError):
        # JSON in a trace may nest 1,024 levels; a JSONPath or a comparison that walks
        # all of it can run out of Python's stack: that is this assertion's error
        return verdict(
            "error",
            "the values this assertion reads are nested too deeply to evaluate "
            f"(traces may nest up to {MAX_TRACE_NESTING} levels)",
            assertion.node.span,
        )
    if isinstance(err, TooManyValues):  # a path whose values multiplied past the limit
        return verdict("error", str(err), assertion.node.span)
    if isinstance(err, NotJsonValue):  # (events given in memory: read as text, never tested)
        said = f"the events hold {err}, read as text by this assertion; {NOT_JSON_HINT}"
        return verdict("error", said, assertion.node.span)
    return verdict("error", f"internal error: {type(err).__name__}: {err}", assertion.node.span)


def crashed(assertions: Sequence[CompiledAssertion], message: str) -> Result:
    """A run that could not be read or produced: every assertion errors with the reason."""
    verdicts = tuple(verdict("error", message, a.node.span) for a in assertions)
    return Result(verdicts, tuple(a.text for a in assertions), error=message)


def check_run(
    assertions: Sequence[CompiledAssertion], needs: Needs, run: RunLike, base: Path | None = None
) -> Result:
    """Index `run` once for `needs` and evaluate every assertion against it."""
    texts = tuple([a.text for a in assertions])
    try:
        facts = indexed_run(needs, run, base)
    except RunError as err:
        return crashed(assertions, str(err))
    return Result(tuple(evaluate_all(assertions, facts)), texts)


def indexed_run(needs: Needs, run: RunLike, base: Path | None = None) -> RunFacts:
    """Read `run` and index it once for `needs`: what every assertion then reads (raises
    `RunError` when it cannot be read). A file is read for what `needs` reads (`reads`:
    a span file's unread arguments and results stay unparsed), unless `EVALDSL_REFERENCE`
    asks for the full reading."""
    read = read_for(needs) if isinstance(run, str | os.PathLike) else contextlib.nullcontext()
    with read:
        return index_run(coerce_run(run, base=base), needs)
