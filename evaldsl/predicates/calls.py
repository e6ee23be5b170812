"""Call tests: `tool NAME args [PATH] TEST` and `tool NAME result [PATH] TEST`, with the
prefix `every tool NAME …`.

Takes `CallTest` nodes and gives their vocabulary entries, build rules, check rule (the
path is valid; the nested TEST is checked as a test of JSON values), checker and printed
form. Some call (with `every`: every call, and at least one) must have a value at PATH in
its arguments (or its linked result) that satisfies TEST. The test is applied to each call
while the run is indexed (a `CallProbe`), so the calls need not be kept; the checker reads
the probe's tally.
"""

from __future__ import annotations

from typing import Any, Literal

from evaldsl.bounded import keep
from evaldsl.language import ast
from evaldsl.language.paths import CompiledPath, compile_path, noting_finder
from evaldsl.language.verdicts import Verdict, verdict
from evaldsl.language.vocabulary import Type, predicate_spec
from evaldsl.predicates.base import (
    BuildKit,
    CheckContext,
    Checker,
    CompileContext,
    Family,
    Printer,
    found_text,
    no_trace,
)
from evaldsl.runs.index import CallProbe, RunFacts

ENTRIES = (
    predicate_spec(
        "args",
        "args [PATH] TEST",
        {"Calls"},
        "Some call's arguments (or the values PATH finds in them) satisfy TEST.",
        'tool get_weather args $.city == "Xiamen"',
    ),
    predicate_spec(
        "result",
        "result [PATH] TEST",
        {"Calls"},
        "Some call's linked result (or the values PATH finds in it) satisfies TEST.",
        'tool search result contains "release"',
    ),
)


def _build(target: Literal["args", "result"]) -> Any:
    def build(kit: BuildKit, c: list[Any]) -> ast.CallTest:
        path = kit.text(c[1]) if len(c) == 3 else None
        return ast.make_call_test(target, path, c[-1], span=kit.span(c))

    return build


def check(
    ctx: CheckContext, pred: ast.CallTest, stype: Type, subject: ast.Subject, subject_text: str
) -> None:
    if pred.path is not None:
        ctx.path(pred.path, pred.span)
    ctx.predicate(pred.test, "Json", subject, f"{pred.target} of {subject_text}")


#: The probes made so far, by what makes them: the tool, args or result, the path, `every`
#: and the test's node (AST nodes compare without their spans: the same test anywhere; and
#: as JSON values do, so `== 1` is `== 1.0`, which passes the same values). A probe is a
#: pure function of these (its test, finder and code fragment are made from them alone:
#: `registry.value_test` and `fragment` take no context), and it keeps no state of a run
#: (each run's tallies are its own, keyed by the probe), so cases whose assertions are the
#: same share their probes, their `Needs` compare equal, and one generated pass serves
#: them all (`runs/passes.py`): a suite's cases often repeat their assertions (`each`
#: rows, datasets, a case per recording).
_PROBES: dict[tuple[str, bool, str | None, bool, ast.Predicate], CallProbe] = {}
_MAX_PROBES = 4096


def compile_call_test(ctx: CompileContext, node: ast.Check) -> Checker:
    pred = node.predicate
    assert isinstance(pred, ast.CallTest) and node.subject.name is not None
    name, every, span = node.subject.name, node.every, node.span
    use_result = pred.target == "result"
    # One probe for equal tests, in every case compiled in this process (see `_PROBES`)
    key = (name, use_result, pred.path, every, pred.test)
    # (what a path that found too many values is noted by, in `RunFacts.crossed`)
    label = (name, use_result, pred.path)
    probe = _PROBES.get(key)
    if probe is None:
        made = CallProbe(
            name,
            use_result,
            noting_finder(pred.path, label),
            ctx.value_test(pred.test, "Json"),
            _single_key(pred.path),
            every,
            pred.test,
            ctx.fragment(pred.test, "Json"),
            pred.path,
        )
        probe = keep(_PROBES, key, made, _MAX_PROBES)
    ctx.needs.add_probe(probe)  # applied to each call while the run is indexed
    ctx.needs.counted.add(name)
    expected = ctx.expected(pred.test)
    what = ctx.text(pred.span)
    unit = "result" if use_result else "call"  # results are counted as they arrive

    def run(facts: RunFacts) -> Verdict:
        trace = facts.trace
        if trace is None:
            return verdict("error", no_trace(f'tool "{name}"'), span)
        n = trace.call_counts.get(name, 0)
        if n == 0:
            # (no value found: `[]`, as when calls found none; null read as a null found)
            return verdict("fail", f'tool "{name}" was never called', span, [], expected)
        tally = trace.tallies[probe]
        # a call on which the path found too many values was stopped there, and found
        # nothing: a call that passed still decides, and with `every` one that failed on
        # values found (a call that found none may be the one stopped)
        crossed = facts.crossed
        if (
            crossed is not None
            and label in crossed
            and (not tally.last if every else not tally.decided)
        ):
            message = f'whether tool "{name}" {what} is unknown: its path {crossed[label]}'
            return verdict("error", message, span)
        found = tally.sample  # the first values found (SAMPLE of them at most)
        # how many calls of the tool have arguments (or results) the recording left out
        # (`model.Unrecorded`): read in place, most runs leave out none
        left = facts.unrecorded
        unread = 0 if left is None else left.unread(name, use_result)
        if every:
            if not tally.decided and tally.good == n:
                return verdict("pass", f'tool "{name}" {what} (every call)', span, found, expected)
            # a call whose arguments were not recorded never passes (no value is found in
            # them): deciding `every`, it says nothing; nor do results never fed
            if (
                tally.decided
                and not use_result
                and facts.unrecorded is not None
                and facts.unrecorded.lacks_arguments(name, tally.first)
            ) or (not tally.decided and unread):
                return verdict("error", _unknown(facts, name, n, unread, what, use_result), span)
            if tally.decided:
                message = (
                    f'{unit} {tally.first} of {n} of tool "{name}" fails {what}; '
                    f"found {found_text(facts, tally.last, 'nothing')}"
                )
                return verdict("fail", message, span, tally.last, expected)
            missing = n - tally.fed
            message = (
                f'{missing} of {n} calls of tool "{name}" have no result, so not every '
                f"call has {what}"
            )
            return verdict("fail", message, span, found, expected)
        if tally.decided:
            return verdict(
                "pass",
                f'tool "{name}" {what} ({unit} {tally.first} of {n})',
                span,
                tally.last,
                expected,
            )
        if unread:  # none of those read passed; one not recorded might have
            return verdict("error", _unknown(facts, name, n, unread, what, use_result), span)
        message = f'no call of tool "{name}" has {what}'
        if use_result and tally.fed == 0:
            message += "; no result was recorded"
        else:
            more = f" (and {tally.found - len(found)} more)" if tally.found > len(found) else ""
            message += f"; found {found_text(facts, found, 'nothing')}{more}"
        return verdict("fail", message, span, found, expected)

    return run


def _single_key(path: str | None) -> str | None:
    """The key of a path of one key (`$.city`), which a probe reads without its finder;
    None for any other path, and for none. (Asked only for a probe not made before: a
    test met again shares its probe.)"""
    compiled = compile_path(path) if path is not None else None
    if (
        isinstance(compiled, CompiledPath)
        and compiled.steps is not None
        and len(compiled.steps) == 1
        and isinstance(compiled.steps[0], str)
    ):
        return compiled.steps[0]
    return None


def _unknown(facts: RunFacts, name: str, n: int, unread: int, what: str, results: bool) -> str:
    """The error verdict's message for a call test the calls read cannot decide: `unread`
    of the `n` calls of `name` were recorded without their arguments (or results), or
    the run cut their arguments (`Unrecorded.cut`)."""
    left = facts.unrecorded
    assert left is not None
    cut = None if results else left.cut.get(name)
    if cut is not None:
        if n > 1:
            have = "have" if unread > 1 else "has"
            cut = f"{unread} of its {n} calls {have} no whole arguments (the last one's {cut})"
        else:
            cut = f"its call's {cut}: its arguments are not whole"
        return f'whether tool "{name}" {what} is unknown: {cut}'
    recorded = "result" if results else "arguments"
    some = f"{unread} of its {n} calls record" if n > 1 else "its call records"
    return f'whether tool "{name}" {what} is unknown: {some} no {recorded}; {left.how}'


def print_call_test(p: Printer, pred: ast.CallTest, indent: str) -> str:
    path = f" {pred.path}" if pred.path is not None else ""
    return f"{pred.target}{path} {p.predicate(pred.test, indent)}"


FAMILY = Family(
    name="calls",
    nodes=(ast.CallTest,),
    entries=ENTRIES,
    rules={"args": _build("args"), "result": _build("result")},
    key=lambda pred: pred.target,
    check=check,
    print=print_call_test,
    expected=lambda pred: None,
    fragment=None,  # reads the run itself: never a test of one value
    compile=compile_call_test,
)
