"""Call counts: `tool NAME called [N times | once | twice | at least N times | at most N
times | between N and M times]` and `never called` (which `no tool NAME` stands for).

Takes `Called` nodes and gives their vocabulary entries, build rules (`called`,
`never_called`, `count_*`), check rule (counts are not negative, bounds in order, `at least
0` never fails), checker (the count read from the run index) and printed form.
"""

from __future__ import annotations

from typing import Any, assert_never

from evaldsl.language import ast
from evaldsl.language.values import Words
from evaldsl.language.verdicts import Verdict, verdict
from evaldsl.language.vocabulary import Type, predicate_spec
from evaldsl.predicates.base import (
    BuildKit,
    CheckContext,
    Checker,
    CompileContext,
    Family,
    Printer,
    no_trace,
    plural,
)
from evaldsl.runs.heldcalls import held_error
from evaldsl.runs.index import RunFacts

ENTRIES = (
    predicate_spec(
        "called",
        "called [N times | once | twice | at least N times | at most N times | "
        "between N and M times]",
        {"Calls"},
        "Called at least once, or the given number of times.",
        "tool search called 2 times",
    ),
    predicate_spec(
        "never_called",
        "never called",
        {"Calls"},
        "Never called (also: no tool NAME).",
        "tool execute_shell never called",
    ),
)


# ---- building ----------------------------------------------------------------------------


def build_called(kit: BuildKit, c: list[Any]) -> ast.Called:
    count = c[1] if len(c) > 1 else ast.make_count("any", 1, None, span=kit.token_span(c[0]))
    return ast.make_called(count, span=kit.span(c))


def build_never_called(kit: BuildKit, c: list[Any]) -> ast.Called:
    return ast.make_called(ast.make_count("never", 0, 0, span=kit.span(c)), span=kit.span(c))


def build_exact(kit: BuildKit, c: list[Any]) -> ast.Count:
    n = kit.integer(c[0])
    return ast.make_count("times", n, n, span=kit.span(c))


def build_once(kit: BuildKit, c: list[Any]) -> ast.Count:
    return ast.make_count("once", 1, 1, span=kit.span(c))


def build_twice(kit: BuildKit, c: list[Any]) -> ast.Count:
    return ast.make_count("twice", 2, 2, span=kit.span(c))


def build_at_least(kit: BuildKit, c: list[Any]) -> ast.Count:
    return ast.make_count("at_least", kit.integer(c[2]), None, span=kit.span(c))


def build_at_most(kit: BuildKit, c: list[Any]) -> ast.Count:
    return ast.make_count("at_most", 0, kit.integer(c[2]), span=kit.span(c))


def build_between(kit: BuildKit, c: list[Any]) -> ast.Count:
    return ast.make_count("between", kit.integer(c[1]), kit.integer(c[3]), span=kit.span(c))


# ---- checking ----------------------------------------------------------------------------


def check(ctx: CheckContext, pred: ast.Called, stype: Type, subject: ast.Subject, _: str) -> None:
    count = pred.count
    if count.low < 0 or (count.high is not None and count.high < 0):
        ctx.error(count.span, "E207", "a call count cannot be negative")
    elif count.high is not None and count.low > count.high:
        ctx.error(
            count.span,
            "E207",
            f"between {count.low} and {count.high}: the smaller number comes first",
            f"between {count.high} and {count.low} times",
        )
    elif count.form == "at_least" and count.low == 0:
        ctx.never(count.span, "fail", "every tool is called at least 0 times")
    if count.form == "never" and subject.name is not None:
        ctx.forbidden_tool(subject.name, subject.span)


# ---- compiling ---------------------------------------------------------------------------


def count_words(count: ast.Count) -> Words:
    """What a count expects, in words: `exactly 2`, `at least once`, `between 1 and 3`."""
    return Words(_count_text(count))


def _count_text(count: ast.Count) -> str:
    match count.form:
        case "any":
            return "at least once"
        case "times" | "once" | "twice":
            return f"exactly {count.low}"
        case "never":
            return "never"
        case "at_least":
            return f"at least {count.low}"
        case "at_most":
            return f"at most {count.high}"
        case "between":
            return f"between {count.low} and {count.high}"
        case _:
            assert_never(count.form)


def compile_called(ctx: CompileContext, node: ast.Check) -> Checker:
    assert isinstance(node.predicate, ast.Called) and node.subject.name is not None
    ctx.needs.counted.add(node.subject.name)
    if node.predicate.count.high is not None:  # (a held call could only break a bound)
        ctx.needs.held = True
    return called_checker(node.subject.name, node.predicate.count, node.span)


def called_checker(name: str, count: ast.Count, span: Any) -> Checker:
    """The checker of `tool NAME called …` (and of `no tool NAME`)."""
    low, high = count.low, count.high
    wanted = count_words(count)

    def run(facts: RunFacts) -> Verdict:
        trace = facts.trace
        if trace is None:
            return verdict("error", no_trace(f'tool "{name}"'), span)
        n = trace.call_counts.get(name, 0)
        ok = low <= n and (high is None or n <= high)
        # (a call the responses hold beyond the call events could only break a bound)
        held = facts.held_calls().get(name, 0) if ok and high is not None else 0
        if held and high is not None and n + held > high:
            what = f'how many times tool "{name}" was called'
            return verdict("error", held_error(what, {name: held}), span, n, wanted)
        said = (
            f'tool "{name}" was never called'
            if n == 0
            else (f'tool "{name}" called {n} time{"" if n == 1 else "s"}')
        )
        message = said if ok else f"{said}, expected {wanted}"
        return verdict("pass" if ok else "fail", message, span, n, wanted)

    return run


# ---- printing ----------------------------------------------------------------------------


def print_called(p: Printer, pred: ast.Called, indent: str) -> str:
    c = pred.count
    match c.form:
        case "any":
            return "called"
        case "never":
            return "never called"
        case "once":
            return "called once"
        case "twice":
            return "called twice"
        case "times":
            return "called " + plural(c.low, "time", "times")
        case "at_least":
            return "called at least " + plural(c.low, "time", "times")
        case "at_most":
            return "called at most " + plural(c.high or 0, "time", "times")
        case "between":
            return f"called between {c.low} and " + plural(c.high or 0, "time", "times")
        case _:
            assert_never(c.form)


FAMILY = Family(
    name="counts",
    nodes=(ast.Called,),
    entries=ENTRIES,
    rules={
        "called": build_called,
        "never_called": build_never_called,
        "count_exact": build_exact,
        "count_once": build_once,
        "count_twice": build_twice,
        "count_at_least": build_at_least,
        "count_at_most": build_at_most,
        "count_between": build_between,
    },
    key=lambda pred: "never_called" if pred.count.form == "never" else "called",
    check=check,
    print=print_called,
    expected=lambda pred: count_words(pred.count),
    fragment=None,  # reads the run itself: never a test of one value
    compile=compile_called,
    forbids=lambda pred: pred.count.high == 0,
)
