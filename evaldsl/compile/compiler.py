"""Compiler: checked AST → checker callables.

Takes checked assertions and gives `CompiledAssertion`s: closures over their AST node
that read a `RunFacts` and return a `Verdict` with the assertion's span, a message, the
value found and the value expected (`tool "get_weather" called 2 times, expected exactly
1`). Compiling also collects the case's `Needs`, so the run is indexed once, keeping only
what these assertions read. Regexes and paths come from the same caches the checker
filled, so each is compiled once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from operator import attrgetter
from typing import Any, Literal, get_args

import attrs
import orjson

from evaldsl.judge.protocol import Judge, no_judge
from evaldsl.language import ast
from evaldsl.language.paths import path_finder
from evaldsl.language.slotinit import maker, slot_init
from evaldsl.language.source import Source, Span
from evaldsl.language.values import MISSING, is_number, show
from evaldsl.language.verdicts import Verdict, combine, negate, verdict
from evaldsl.language.vocabulary import SUBJECTS, Type
from evaldsl.predicates import registry
from evaldsl.predicates.base import (
    Checker,
    Family,
    Found,
    SubjectFails,
    SubjectReader,
    Unavailable,
    ValueTest,
    found_text,
    no_state,
    no_trace,
    plural,
)
from evaldsl.predicates.contains import not_in_text
from evaldsl.predicates.counts import called_checker
from evaldsl.predicates.json_text import json_loads
from evaldsl.predicates.nameindex import name_index
from evaldsl.runs.bigints import exact
from evaldsl.runs.heldcalls import held_error
from evaldsl.runs.index import Needs, RunFacts, TraceFacts
from evaldsl.runs.model import Unrecorded
from evaldsl.runs.prices import unpriced_hint


@attrs.frozen
class CompiledAssertion:
    """One statement, compiled: its node, its source text, and its checker."""

    node: ast.Expr
    text: str
    run: Checker


slot_init(CompiledAssertion)  # one a statement
_make_compiled = maker(CompiledAssertion)  # (a plain function: see `slotinit.maker`)


#: A case's tests of one list of names from which a run indexes the list (`nameindex`).
NAMES_INDEXED_FROM = 3


class NotJson:
    """What `RunFacts.shared` keeps for an answer that is not JSON: its message, written
    once (`show` writes a text that is not ASCII whole to show 80 characters of it)."""

    __slots__ = ("message",)

    def __init__(self, message: str) -> None:
        self.message = message


#: The error verdict of an `answer` assertion on a target that returned None.
NO_ANSWER_RETURNED = (
    "the run target returned None, so there is no answer (did it forget `return`?); "
    "`output == null` reads what it returned"
)


class Compiler:
    """Compiles the assertions of one case, accumulating what they need from the run. It
    is the `CompileContext` predicate families compile themselves in."""

    def __init__(
        self,
        source: Source,
        judge: Judge | None = None,
        judge_model: str | None = None,
        needs: Needs | None = None,
        shown: Callable[[str], str] | None = None,
    ):
        self.source = source
        # how the source text of a node is shown in messages: an `each` row's values
        # replace its placeholders there, as they do in the node
        self.shown = shown
        # a case whose assertions come from several sources (YAML snippets) shares one
        self.needs = needs if needs is not None else Needs()
        self._judge = judge or no_judge
        self.judge_model = judge_model
        # how many tests of each list of names (`tools`, `nodes`) have a test through its
        # index: from `NAMES_INDEXED_FROM` of them, a run indexes the list for them all
        self.names_tests: dict[str, int] = {}
        # whether an assertion compiled here asks the judge (`Case.judged`): noted when a
        # compile rule takes the judge (`ask_judge`), not by a second walk of every assertion
        self.judged = False

    def ask_judge(self) -> Judge:
        """The judge, for a compile rule whose checks ask it: the case is judged."""
        self.judged = True
        return self._judge

    def text(self, span: Span) -> str:
        # (by index: a tuple subclass is unpacked through an iterator, ~190 instructions
        # more a span than two subscripts; its named fields cost more too)
        text = self.source.text[span[0] : span[1]]
        return text if self.shown is None else self.shown(text)

    def compile(self, expr: ast.Expr) -> CompiledAssertion:
        # (the rule of the node's type asked here, not through `expr`: a frame less a
        # statement)
        return _make_compiled(expr, self.text(expr.span), _EXPR_RULES[type(expr)](self, expr))

    def compile_all(self, exprs: Iterable[ast.Expr]) -> list[CompiledAssertion]:
        return [self.compile(e) for e in exprs]

    # -- boolean structure: each node type's rule, from a table (`_EXPR_RULES`)

    def no_tool(self, expr: ast.NoTool) -> Checker:
        count = ast.Count("never", 0, 0, span=expr.span)
        self.needs.counted.add(expr.name)
        self.needs.held = True
        return called_checker(expr.name, count, expr.span)

    def node_visited(self, expr: ast.NodeVisited) -> Checker:
        subject = ast.Subject("nodes", span=expr.span)
        pred = ast.Contains(ast.Name(expr.name, span=expr.span), span=expr.span)
        return self.check(ast.Check(subject, pred, span=expr.span))

    def negation(self, expr: ast.Not) -> Checker:
        inner = _EXPR_RULES[type(expr.operand)](self, expr.operand)
        span = expr.span
        return lambda facts: negate(inner(facts), span)

    def junction(self, expr: ast.And | ast.Or) -> Checker:
        # (a loop, not a comprehension: one would hold `self` in a cell, made at each call)
        parts = []
        for op in expr.operands:
            parts.append(_EXPR_RULES[type(op)](self, op))
        kind: Literal["and", "or"] = "and" if type(expr) is ast.And else "or"
        span = expr.span
        return lambda facts: combine(kind, [p(facts) for p in parts], span)

    # -- checks

    def check(self, check: ast.Check) -> Checker:
        family = registry.FAMILY_OF[type(check.predicate)]  # (the table, read in place)
        if family.compile is not None:  # a predicate that reads the run itself
            return family.compile(self, check)
        return self.value_check(check, family)

    def value_check(self, check: ast.Check, family: Family) -> Checker:
        """A value predicate on a subject: the subject read from the run, then tested (one
        of several values a path found is enough). `family` is the predicate's, one with
        a value test (every family without a compile rule has one: `registry`)."""
        subject, pred = check.subject, check.predicate
        span = check.span
        get = self.subject(subject)
        shown = self.text(subject.span) or subject.kind
        # (a subject and predicate made of one statement, `node X visited`: said once)
        said = shown if pred.span == subject.span else f"{shown} {self.text(pred.span)}"
        # the family asked directly (its value test and expected value), as `check` found
        # it: one call less for each, a statement
        kind = subject.kind
        stype = SUBJECTS[kind].type
        assert family.value_test is not None
        test = family.value_test(pred, stype)
        expected = family.expected(pred)
        # a list of names (tools, nodes) is indexed once per run for all its tests, when
        # there are enough of them: one or two walk it (each stops where it is decided,
        # where the index is made by a walk of the whole list)
        indexed = registry.names_test(pred) if stype == "Names" else None
        tests_of = self.names_tests
        # (`not_in_text` says something only of a failed `contains`: not asked of others)
        hinted = isinstance(pred, ast.Contains)
        # (`answer[5]` of a run of fewer answers reads "": a failure says why)
        answer_at = subject.index if kind == "answer" else None
        if indexed is not None:
            tests_of[kind] = tests_of.get(kind, 0) + 1

        def run(facts: RunFacts) -> Verdict:
            try:
                value = get(facts)
            except Unavailable as why:
                return verdict("error", str(why), span)
            except SubjectFails as why:  # (found: the text, never a null nobody found)
                return verdict("fail", str(why), span, why.found, expected)
            if isinstance(value, Found):
                ok = any(test(v) for v in value.values)
                actual: Any = value.values
            else:
                if (
                    indexed is not None
                    and type(value) is list
                    and tests_of[kind] >= NAMES_INDEXED_FROM
                    and (index := name_index(facts, kind, value)) is not None
                ):
                    ok = indexed(index)
                else:
                    ok = test(value)
                actual = value
            if ok:
                return verdict("pass", said, span, actual, expected)
            # no `empty`: a subject whose value is [] found [], not nothing
            return verdict(
                "fail",
                f"expected {said}, found {found_text(facts, actual)}"
                + (not_in_text(pred, actual) if hinted else "")
                + (short_of(facts, answer_at) if answer_at is not None else ""),
                span,
                actual,
                expected,
            )

        return run

    def value_test(self, pred: ast.Predicate, stype: Type) -> ValueTest:
        """A test of one value (the subject's, or each value a path finds)."""
        return registry.value_test(pred, stype)

    def expected(self, pred: ast.Predicate) -> Any:
        """What the predicate expects, as reports show it."""
        return registry.expected(pred)

    def fragment(self, pred: ast.Predicate, stype: Type) -> Callable[[Any], str | None]:
        """The predicate's code fragment for a generated pass (`runs/codegen.py`)."""
        return lambda ctx: registry.fragment(ctx, pred, stype)

    # -- subjects: RunFacts → value

    def subject(self, subject: ast.Subject) -> SubjectReader:
        # the reader of each kind of subject from a table (`_SUBJECT_RULES`), where a
        # `match` compared the kind with each case's texts in turn; each rule makes the
        # cells of its own closure only (a function's closure cells are made at every
        # call, whichever branch it takes: the `match` made nine a subject)
        return _SUBJECT_RULES[subject.kind](self, subject)

    def answer(self, subject: ast.Subject) -> SubjectReader:
        """`answer`, `answer[N]`, and the text `answer json` reads."""
        index = subject.index if subject.index is not None else -1
        if index > 0:
            self.needs.answers.add(index)
        else:
            self.needs.answer_tail = max(self.needs.answer_tail, -index)

        def answer(facts: RunFacts) -> Any:
            if facts.trace is not None:
                left = facts.unrecorded
                if left is not None and left.lacks_answer(index):
                    raise Unavailable(unrecorded_answer(left, index))
                return facts.trace.answer(index)
            if facts.output is None and facts.state is None:
                # a target that returned None gave no answer (a forgotten
                # `return`), never the empty text `answer is empty` would pass on
                raise Unavailable(NO_ANSWER_RETURNED)
            if facts.output is not MISSING:
                # a value run has one answer, its output: answer[1] and answer[-1]
                # are it, any other position is out of range ("")
                return facts.output_text() if index in (1, -1) else ""
            raise Unavailable(no_trace("answer"))

        return answer

    def answer_json(self, subject: ast.Subject) -> SubjectReader:
        answer = self.answer(subject)
        finder = path_finder(subject.path)
        path = subject.path
        has_path = path is not None

        def answer_json(facts: RunFacts) -> Any:
            text = answer(facts)
            # parsed once for all the assertions that read it (as `cites` keeps its
            # values): 40 `answer json` assertions on a 1.1 MB answer parsed it 40 times
            key = ("answer json", text)
            parsed = facts.shared.get(key, MISSING)
            if parsed is MISSING:
                try:  # (a long text's parse with the collector paused: `json_loads`)
                    parsed = exact(text, json_loads(text))  # (integers exact)
                except orjson.JSONDecodeError:
                    parsed = NotJson(f"answer is not valid JSON: {show(text, 80)}")
                facts.shared[key] = parsed
            if type(parsed) is NotJson:
                raise SubjectFails(parsed.message, text)
            if not has_path:
                return parsed
            # and what a path finds in it, once for the assertions on that path (a walk of
            # the whole value for `$..x`: 20 of them on a 2.2 MB answer walked it 20 times)
            at = ("answer json at", path, text)
            found = facts.shared.get(at)
            if found is None:
                found = facts.shared[at] = finder(parsed)
            return found[0] if len(found) == 1 else (Found(found) if found else MISSING)

        return answer_json

    def output(self, subject: ast.Subject) -> SubjectReader:
        keys = _keys(subject)

        def output(facts: RunFacts) -> Any:
            if facts.output is MISSING:
                raise Unavailable(
                    "this run has no output value (`output` reads what a `run` target returned)"
                )
            return _dig(facts.output, keys)

        return output

    def from_state(self, subject: ast.Subject) -> SubjectReader:
        """`memory`, `state`, `status`, `nodes`, `budget`: read from a workflow state."""
        kind = subject.kind
        keys = _keys(subject)
        field = {
            "memory": "memory",
            "status": "status",
            "nodes": "visited_nodes",
            "budget": "max_token_budget",
        }.get(kind)
        path = (field, *keys) if field else keys
        label = self.text(subject.span) or kind

        def from_state(facts: RunFacts) -> Any:
            if facts.state is None:
                raise Unavailable(no_state(label))
            return _dig(facts.state, path)

        return from_state

    def tools(self, subject: ast.Subject) -> SubjectReader:
        self.needs.tool_sequence = True
        return self._trace("tools", lambda t: t.sequence, calls=True)

    def tool(self, subject: ast.Subject) -> SubjectReader:
        raise AssertionError("tool subjects compile with their predicate")

    def tokens(self, subject: ast.Subject) -> SubjectReader:
        """`tokens`, `input tokens`, `output tokens`."""
        kind = subject.kind
        self.needs.tokens = True
        state_field, pick = _TOKENS[kind]
        label = kind.replace("_", " ")

        def tokens(facts: RunFacts) -> Any:
            if facts.trace is not None:
                if facts.trace.usage_unrecorded:
                    raise Unavailable(unrecorded(facts.trace, label))
                return pick(facts.trace)
            if facts.state is not None:
                # (cycgraph's schema defaults the counters to 0, so the states it writes
                # have them: one without is a state that did not count, never 0 tokens)
                used = facts.state.get(state_field, MISSING)
                if used is MISSING:
                    raise Unavailable(
                        f"`{label}` cannot be measured: the state records no `{state_field}`"
                    )
                return used
            raise Unavailable(no_trace(label))

        return tokens

    def counted(self, subject: ast.Subject) -> SubjectReader:
        """`steps`, `tool calls`, `guards`, `errors`: counts of a trace."""
        kind = subject.kind
        label, read = _COUNTS[kind]
        return self._trace(label, read, calls=kind == "tool_calls")

    def latency(self, subject: ast.Subject) -> SubjectReader:
        self.needs.times = True

        def latency(facts: RunFacts) -> Any:
            if facts.latency_seconds is not None:
                return facts.latency_seconds
            if facts.trace is not None and facts.trace.bad_time is not None:
                raise Unavailable(facts.trace.bad_time)  # (never "no timing")
            wall = facts.trace.wall_seconds() if facts.trace is not None else None
            if wall is None:
                raise Unavailable(
                    "this run has no timing: no measured wall time and no event timestamps"
                )
            return wall

        return latency

    def cost(self, subject: ast.Subject) -> SubjectReader:
        self.needs.cost = True

        def cost(facts: RunFacts) -> Any:
            if facts.state is not None and is_number(facts.state.get("total_cost_usd")):
                return facts.state["total_cost_usd"]
            if facts.trace is not None:
                if facts.trace.usage_unrecorded:
                    raise Unavailable(unrecorded(facts.trace, "cost"))
                if facts.trace.cost is None:
                    raise Unavailable(unpriced_hint(facts.trace.unpriced_model))
                return facts.trace.cost
            raise Unavailable("this run has no cost: no state cost and no trace usage")

        return cost

    def _trace(
        self, label: str, pick: Callable[[TraceFacts], Any], calls: bool = False
    ) -> SubjectReader:
        """A trace's fact; `calls`: one the calls its responses alone hold would change
        (`tools`, `tool calls`), which is then unknown."""

        if calls:
            self.needs.held = True

        def get(facts: RunFacts) -> Any:
            if facts.trace is None:
                raise Unavailable(no_trace(label))
            if calls and facts.held_calls():
                raise Unavailable(held_error(f"`{label}`", facts.held_calls()))
            return pick(facts.trace)

        return get


# ---- helpers ---------------------------------------------------------------------------


#: The reader of each kind of subject (`Compiler.subject`): every `ast.SubjectKind` has one.
_SUBJECT_RULES: dict[str, Callable[[Compiler, ast.Subject], SubjectReader]] = {
    "answer": Compiler.answer,
    "answer_json": Compiler.answer_json,
    "output": Compiler.output,
    "memory": Compiler.from_state,
    "state": Compiler.from_state,
    "status": Compiler.from_state,
    "nodes": Compiler.from_state,
    "budget": Compiler.from_state,
    "tools": Compiler.tools,
    "tool": Compiler.tool,
    "tokens": Compiler.tokens,
    "input_tokens": Compiler.tokens,
    "output_tokens": Compiler.tokens,
    "steps": Compiler.counted,
    "tool_calls": Compiler.counted,
    "guards": Compiler.counted,
    "errors": Compiler.counted,
    "latency": Compiler.latency,
    "cost": Compiler.cost,
}
assert set(_SUBJECT_RULES) == set(get_args(ast.SubjectKind)), "a subject kind without a reader"


def _keys(subject: ast.Subject) -> tuple[str | int, ...]:
    """The keys of `.a.b` (memory, output, state)."""
    return tuple(k.key for k in subject.keys) if subject.keys else ()


#: The compile rule of each kind of assertion, by its exact type (AST node classes have no
#: subclasses): one lookup where a chain of type tests ran, and the callers (`compile`,
#: `not`, `and` and `or`) ask it directly, a frame less each.
_EXPR_RULES: dict[type, Callable[[Compiler, Any], Checker]] = {
    ast.Check: Compiler.check,
    ast.NoTool: Compiler.no_tool,
    ast.NodeVisited: Compiler.node_visited,
    ast.Not: Compiler.negation,
    ast.And: Compiler.junction,
    ast.Or: Compiler.junction,
}
# (the `match` it replaced was checked whole by mypy's `assert_never`; this, as it loads)
assert set(_EXPR_RULES) == set(get_args(ast.Expr)), "an assertion kind without a compile rule"


def short_of(facts: RunFacts, index: int) -> str:
    """What a failure on `answer[index]` adds when the run has fewer answers than that,
    so that the `""` it found is said to be no answer at all."""
    trace = facts.trace
    count = trace.answers_short_of(index) if trace is not None else None
    if count is None:
        return ""
    return f" (the run has {plural(count, 'answer', 'answers')}: answer[{index}] is past them)"


def unrecorded(trace: TraceFacts, subject: str) -> str:
    """Why `subject` (tokens, cost) cannot be measured on a trace whose usage was not
    recorded (`TraceFacts.usage_unrecorded`): a sum of nothing is not 0 tokens
    (`tokens <= 2000` would pass)."""
    return f"`{subject}` cannot be measured: {trace.why_unrecorded()}"


def unrecorded_answer(left: Unrecorded, index: int) -> str:
    """Why the answer at `index` cannot be read: its LLM response's output was not
    recorded (an answer never captured is not "": `not answer contains "error"` would
    pass)."""
    which = "the run's last answer" if index == -1 else f"answer[{index}]"
    if left.answers_why:
        return f"{which} cannot be read: {left.answers_why}"
    return (
        f"{which} cannot be read: the trace records no message content for its LLM "
        f"response; {left.how}"
    )


#: Per token subject, the state's field and what is read from a trace.
_TOKENS: dict[str, tuple[str, Callable[[TraceFacts], Any]]] = {
    "tokens": ("total_tokens_used", lambda t: t.input_tokens + t.output_tokens),
    "input_tokens": ("total_input_tokens", lambda t: t.input_tokens),
    "output_tokens": ("total_output_tokens", lambda t: t.output_tokens),
}

#: Per count subject, its name in messages and what is read from a trace.
_COUNTS: dict[str, tuple[str, Callable[[TraceFacts], Any]]] = {
    name: (name.replace("_", " "), attrgetter(name))
    for name in ("steps", "tool_calls", "guards", "errors")
}


def _dig(value: Any, keys: tuple[str | int, ...]) -> Any:
    """Follow `.a.b[0]` into a JSON value; a step that is not there gives MISSING."""
    for key in keys:
        if isinstance(key, int):
            if isinstance(value, list) and -len(value) <= key < len(value):
                value = value[key]
            else:
                return MISSING
        elif isinstance(value, dict) and key in value:
            value = value[key]
        else:
            return MISSING
    return value
