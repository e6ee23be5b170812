"""Compiler: checked AST → checker callables.

Takes checked assertions and gives `CompiledAssertion`s: closures over their AST node
that read a `RunFacts` and return a `Verdict` with the assertion's span, a message, the
value found and the value expected (`tool "get_weather" called 2 times, expected exactly
1`). Compiling also collects the case's `Needs`, so the run is indexed once, keeping only
what these assertions read. Regexes and paths come from the same caches the checker
filled, so each is compiled once.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterable
from typing import Any, Literal, Protocol, assert_never

import attrs
import orjson

from evaldsl import ast
from evaldsl.checker import predicate_key, subject_type
from evaldsl.index import CallProbe, Needs, RunFacts, TraceFacts
from evaldsl.paths import CompiledPath, compile_path
from evaldsl.regexes import RegexProblem, compile_regex
from evaldsl.runs.text import answer_text, js_number
from evaldsl.source import Source, Span
from evaldsl.values import (
    MISSING,
    has_type,
    is_empty,
    is_number,
    js_text,
    json_contains,
    json_equal,
    show,
)
from evaldsl.verdicts import Status, Verdict, combine, negate
from evaldsl.vocabulary import Type

Check = Callable[[RunFacts], Verdict]


@attrs.frozen
class JudgeOutcome:
    """What a judge said: a status, a message, and the score when there is one."""

    status: Status
    message: str
    score: float | None = None


class Judge(Protocol):
    """Decides `X judged "rubric"`; the real one (with its cache) lives in judge.py."""

    def __call__(
        self, text: str, rubric: str, *, model: str | None, threshold: float | None
    ) -> JudgeOutcome: ...


def no_judge(text: str, rubric: str, *, model: str | None, threshold: float | None) -> JudgeOutcome:
    """The judge when none is configured: every judge assertion is skipped."""
    return JudgeOutcome(
        "skip", "no LLM judge configured: set EVALDSL_JUDGE_API_KEY to judge this assertion"
    )


@attrs.frozen
class CompiledAssertion:
    """One statement, compiled: its node, its source text, and its checker."""

    node: ast.Expr
    text: str
    run: Check


class _Unavailable(Exception):
    """The run cannot provide a subject: an error verdict."""


class _Fails(Exception):
    """The subject itself makes the assertion fail (an answer that is not JSON)."""


class _Found:
    """Several values a JSONPath found: the predicate holds if one of them satisfies it."""

    __slots__ = ("values",)

    def __init__(self, values: list[Any]) -> None:
        self.values = values


_ORDER: dict[str, Callable[[Any, Any], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


class Compiler:
    """Compiles the assertions of one case, accumulating what they need from the run."""

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
        self.judge = judge or no_judge
        self.judge_model = judge_model

    def text(self, span: Span) -> str:
        text = self.source.text[span.start : span.end]
        return text if self.shown is None else self.shown(text)

    def compile(self, expr: ast.Expr) -> CompiledAssertion:
        return CompiledAssertion(expr, self.text(expr.span), self.expr(expr))

    def compile_all(self, exprs: Iterable[ast.Expr]) -> list[CompiledAssertion]:
        return [self.compile(e) for e in exprs]

    # -- boolean structure

    def expr(self, expr: ast.Expr) -> Check:
        match expr:
            case ast.Check():
                return self.check(expr)
            case ast.NoTool(name=name):
                count = ast.Count("never", 0, 0, span=expr.span)
                return self.called(name, count, expr.span)
            case ast.NodeVisited(name=name):
                subject = ast.Subject("nodes", span=expr.span)
                pred = ast.Contains(ast.Name(name, span=expr.span), span=expr.span)
                return self.check(ast.Check(subject, pred, span=expr.span))
            case ast.Not(operand=operand):
                inner = self.expr(operand)
                span = expr.span
                return lambda facts: negate(inner(facts), span)
            case ast.And(operands=ops) | ast.Or(operands=ops):
                parts = [self.expr(op) for op in ops]
                kind: Literal["and", "or"] = "and" if isinstance(expr, ast.And) else "or"
                span = expr.span
                return lambda facts: combine(kind, [p(facts) for p in parts], span)
            case _:
                assert_never(expr)

    # -- checks

    def check(self, check: ast.Check) -> Check:
        subject, pred = check.subject, check.predicate
        span = check.span
        if subject.kind == "tool":
            assert subject.name is not None
            if isinstance(pred, ast.Called):
                return self.called(subject.name, pred.count, span)
            if isinstance(pred, ast.CallTest):
                return self.call_test(subject.name, pred, check.every, span)
        get = self.subject(subject)
        stype = subject_type(subject)
        shown = self.text(subject.span) or subject.kind
        pred_text = self.text(pred.span)
        if isinstance(pred, ast.Judged):
            return self.judged(get, pred, shown, span)
        if isinstance(pred, ast.Cites):
            return self.cites(get, pred, shown, span)
        if isinstance(pred, ast.WithinBudget):
            return self.within_budget(span)
        test = self.value_test(pred, stype)
        expected = _expected_of(pred)

        def run(facts: RunFacts) -> Verdict:
            try:
                value = get(facts)
            except _Unavailable as why:
                return Verdict("error", str(why), span)
            except _Fails as why:
                return Verdict("fail", str(why), span, expected=expected)
            if isinstance(value, _Found):
                ok = any(test(v) for v in value.values)
                actual: Any = value.values
            else:
                ok = test(value)
                actual = value
            if ok:
                return Verdict("pass", f"{shown} {pred_text}", span, actual, expected)
            # `show`, not `_found`: a subject whose value is [] found [], not nothing
            return Verdict(
                "fail",
                f"expected {shown} {pred_text}, found {show(actual)}",
                span,
                actual,
                expected,
            )

        return run

    def called(self, name: str, count: ast.Count, span: Span) -> Check:
        low, high = count.low, count.high
        wanted = _count_words(count)

        def run(facts: RunFacts) -> Verdict:
            trace = facts.trace
            if trace is None:
                return Verdict("error", _no_trace(f'tool "{name}"'), span)
            n = trace.call_counts.get(name, 0)
            ok = low <= n and (high is None or n <= high)
            said = (
                f'tool "{name}" was never called'
                if n == 0
                else (f'tool "{name}" called {n} time{"" if n == 1 else "s"}')
            )
            message = said if ok else f"{said}, expected {wanted}"
            return Verdict("pass" if ok else "fail", message, span, n, wanted)

        return run

    def call_test(self, name: str, pred: ast.CallTest, every: bool, span: Span) -> Check:
        use_result = pred.target == "result"
        compiled = compile_path(pred.path) if pred.path is not None else None
        single = (
            compiled.steps[0]
            if isinstance(compiled, CompiledPath)
            and compiled.steps is not None
            and len(compiled.steps) == 1
            and isinstance(compiled.steps[0], str)
            else None
        )
        probe = CallProbe(
            name,
            use_result,
            _path_getter(pred.path),
            self.value_test(pred.test, "Json"),
            single,
            every,
        )
        self.needs.probes.append(probe)  # applied to each call while the run is indexed
        expected = _expected_of(pred.test)
        what = self.text(pred.span)
        unit = "result" if use_result else "call"  # results are counted as they arrive

        def run(facts: RunFacts) -> Verdict:
            trace = facts.trace
            if trace is None:
                return Verdict("error", _no_trace(f'tool "{name}"'), span)
            n = trace.call_counts.get(name, 0)
            if n == 0:
                return Verdict("fail", f'tool "{name}" was never called', span, None, expected)
            tally = trace.tallies[probe]
            found = tally.sample  # the first values found (SAMPLE of them at most)
            if every:
                if not tally.decided and tally.good == n:
                    return Verdict(
                        "pass", f'tool "{name}" {what} (every call)', span, found, expected
                    )
                if tally.decided:
                    message = (
                        f'{unit} {tally.first} of {n} of tool "{name}" fails {what}; '
                        f"found {_found(tally.last)}"
                    )
                    return Verdict("fail", message, span, tally.last, expected)
                missing = n - tally.fed
                message = (
                    f'{missing} of {n} calls of tool "{name}" have no result, so not every '
                    f"call has {what}"
                )
                return Verdict("fail", message, span, found, expected)
            if tally.decided:
                return Verdict(
                    "pass",
                    f'tool "{name}" {what} ({unit} {tally.first} of {n})',
                    span,
                    tally.last,
                    expected,
                )
            message = f'no call of tool "{name}" has {what}'
            if use_result and tally.fed == 0:
                message += "; no result was recorded"
            else:
                more = f" (and {tally.found - len(found)} more)" if tally.found > len(found) else ""
                message += f"; found {_found(found)}{more}"
            return Verdict("fail", message, span, found, expected)

        return run

    def judged(
        self, get: Callable[[RunFacts], Any], pred: ast.Judged, shown: str, span: Span
    ) -> Check:
        judge = self.judge
        model = pred.model or self.judge_model
        rubric, threshold = pred.rubric, pred.threshold

        def run(facts: RunFacts) -> Verdict:
            try:
                value = get(facts)
            except _Unavailable as why:
                return Verdict("error", str(why), span)
            except _Fails as why:
                return Verdict("fail", str(why), span)
            if value is MISSING:
                return Verdict("fail", f"`{shown}` is missing: there is nothing to judge", span)
            if isinstance(value, _Found):
                value = value.values
            text = value if isinstance(value, str) else js_text(value)
            outcome = judge(text, rubric, model=model, threshold=threshold)
            return Verdict(outcome.status, outcome.message, span, outcome.score, threshold)

        return run

    def cites(
        self, get: Callable[[RunFacts], Any], pred: ast.Cites, shown: str, span: Span
    ) -> Check:
        tool = pred.tool
        self.needs.tool_detail.add(tool)
        self.needs.tool_results.add(tool)
        need = max(1, pred.at_least or 1)
        finder = _path_getter(pred.path)

        def run(facts: RunFacts) -> Verdict:
            try:
                answer = get(facts)
            except _Unavailable as why:
                return Verdict("error", str(why), span)
            trace = facts.trace
            records = trace.calls.get(tool, []) if trace is not None else []
            results = [v for r in records if r.result is not MISSING for v in finder(r.result)]
            if not records:
                return Verdict("fail", f'tool "{tool}" was never called', span, None, need)
            if not results:
                return Verdict("fail", f'tool "{tool}" has no result recorded', span, None, need)
            leaves = sorted(citable_values(results))
            if not leaves:
                return Verdict("fail", f'tool "{tool}" produced no citable value', span, [], need)
            lowered = str(answer).lower()
            hits = [leaf for leaf in leaves if leaf.lower() in lowered]
            ok = len(hits) >= need
            message = f'{shown} cites {len(hits)} of {len(leaves)} values from tool "{tool}"'
            if hits:
                message += ": " + ", ".join(show(h, 30) for h in hits[:5])
            if not ok:
                message += f", expected at least {need}"
            return Verdict("pass" if ok else "fail", message, span, hits, need)

        return run

    def within_budget(self, span: Span) -> Check:
        def run(facts: RunFacts) -> Verdict:
            state = facts.state
            if state is None:
                return Verdict("error", _no_state("tokens within budget"), span)
            used = state.get("total_tokens_used", 0) or 0
            budget = state.get("max_token_budget")
            # cycgraph: no budget, or a budget of 0, means unlimited
            if not budget:
                return Verdict("pass", f"no token budget set ({used} tokens used)", span, used)
            ok = is_number(used) and used <= budget
            message = f"{used}/{budget} tokens used"
            if not ok:
                message = f"token budget exceeded: {used}/{budget}"
            return Verdict("pass" if ok else "fail", message, span, used, budget)

        return run

    # -- subjects: RunFacts → value

    def subject(self, subject: ast.Subject) -> Callable[[RunFacts], Any]:
        kind = subject.kind
        keys = tuple(k.key for k in subject.keys)
        match kind:
            case "answer" | "answer_json":
                index = subject.index if subject.index is not None else -1
                if index > 0:
                    self.needs.answers.add(index)
                else:
                    self.needs.answer_tail = max(self.needs.answer_tail, -index)

                def answer(facts: RunFacts) -> Any:
                    if facts.trace is not None:
                        return facts.trace.answer(index)
                    if facts.output is not MISSING:
                        # a value run has one answer, its output: answer[1] and answer[-1]
                        # are it, any other position is out of range ("")
                        return answer_text(facts.output) if index in (1, -1) else ""
                    raise _Unavailable(_no_trace("answer"))

                if kind == "answer":
                    return answer
                finder = _path_getter(subject.path)
                has_path = subject.path is not None

                def answer_json(facts: RunFacts) -> Any:
                    text = answer(facts)
                    try:
                        parsed = orjson.loads(text)
                    except orjson.JSONDecodeError:
                        raise _Fails(f"answer is not valid JSON: {show(text, 80)}") from None
                    if not has_path:
                        return parsed
                    found = finder(parsed)
                    return found[0] if len(found) == 1 else (_Found(found) if found else MISSING)

                return answer_json
            case "output":

                def output(facts: RunFacts) -> Any:
                    if facts.output is MISSING:
                        raise _Unavailable(
                            "this run has no output value (`output` reads what a "
                            "`run` target returned)"
                        )
                    return _dig(facts.output, keys)

                return output
            case "memory" | "state" | "status" | "nodes" | "budget":
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
                        raise _Unavailable(_no_state(label))
                    return _dig(facts.state, path)

                return from_state
            case "tools":
                self.needs.tool_sequence = True
                return self._trace("tools", lambda t: t.sequence)
            case "tool":
                raise AssertionError("tool subjects compile with their predicate")
            case "tokens" | "input_tokens" | "output_tokens":
                state_field = {
                    "tokens": "total_tokens_used",
                    "input_tokens": "total_input_tokens",
                    "output_tokens": "total_output_tokens",
                }[kind]
                pick: Callable[[TraceFacts], Any] = {
                    "tokens": lambda t: t.input_tokens + t.output_tokens,
                    "input_tokens": lambda t: t.input_tokens,
                    "output_tokens": lambda t: t.output_tokens,
                }[kind]

                def tokens(facts: RunFacts) -> Any:
                    if facts.trace is not None:
                        return pick(facts.trace)
                    if facts.state is not None:
                        return facts.state.get(state_field, 0)
                    raise _Unavailable(_no_trace(kind.replace("_", " ")))

                return tokens
            case "steps" | "tool_calls" | "guards" | "errors":
                attr = {
                    "steps": "steps",
                    "tool_calls": "tool_calls",
                    "guards": "guards",
                    "errors": "errors",
                }[kind]
                return self._trace(kind.replace("_", " "), lambda t: getattr(t, attr))
            case "latency":
                self.needs.times = True

                def latency(facts: RunFacts) -> Any:
                    if facts.latency_seconds is not None:
                        return facts.latency_seconds
                    wall = facts.trace.wall_seconds() if facts.trace is not None else None
                    if wall is None:
                        raise _Unavailable(
                            "this run has no timing: no measured wall time and no event timestamps"
                        )
                    return wall

                return latency
            case "cost":
                self.needs.cost = True

                def cost(facts: RunFacts) -> Any:
                    if facts.state is not None and is_number(facts.state.get("total_cost_usd")):
                        return facts.state["total_cost_usd"]
                    if facts.trace is not None:
                        if facts.trace.cost is None:
                            raise _Unavailable(
                                f"no price known for model "
                                f"{facts.trace.unpriced_model!r}, so `cost` cannot "
                                "be computed"
                            )
                        return facts.trace.cost
                    raise _Unavailable("this run has no cost: no state cost and no trace usage")

                return cost
            case _:
                assert_never(kind)

    def _trace(self, label: str, pick: Callable[[TraceFacts], Any]) -> Callable[[RunFacts], Any]:
        def get(facts: RunFacts) -> Any:
            if facts.trace is None:
                raise _Unavailable(_no_trace(label))
            return pick(facts.trace)

        return get

    # -- predicates on one value

    def value_test(self, pred: ast.Predicate, stype: Type) -> Callable[[Any], bool]:
        """A test of one value (the subject's, or each value a path finds)."""
        match pred:
            case ast.Compare(op=op, value=lit):
                expected = ast.to_json(lit)
                if op in ("==", "!="):
                    same = op == "=="
                    if type(expected) is str:  # json_equal's answer, without its dispatch
                        return lambda v: (type(v) is str and v == expected) is same
                    return lambda v: json_equal(v, expected) is same
                order = _ORDER[op]
                return lambda v: (
                    is_number(v)
                    and not (isinstance(v, float) and math.isnan(v))
                    and order(v, expected)
                )
            case ast.Contains(value=lit):
                item = ast.to_json(lit)
                return lambda v: json_contains(v, item)
            case ast.ListTest(op=op, items=items):
                wanted = [ast.to_json(i) for i in items.items]
                if op == "all":
                    return lambda v: all(json_contains(v, w) for w in wanted)
                if op == "any":
                    return lambda v: any(json_contains(v, w) for w in wanted)
                if op == "in":
                    return lambda v: any(json_equal(v, w) for w in wanted)
                if op == "only":
                    return lambda v: (
                        isinstance(v, list)
                        and all(any(json_equal(x, w) for w in wanted) for x in v)
                    )
                return lambda v: isinstance(v, list) and _in_order(v, wanted)
            case ast.Emptiness(empty=empty):
                return lambda v: is_empty(v) is empty
            case ast.IsType(type=wanted_type):
                return lambda v: has_type(v, wanted_type)
            case ast.TextEdge(at_start=at_start, text=text):
                s = text.value
                if at_start:
                    return lambda v: isinstance(v, str) and v.startswith(s)
                return lambda v: isinstance(v, str) and v.endswith(s)
            case ast.Matches(regex=regex):
                compiled = compile_regex(regex.pattern, regex.flags)
                assert not isinstance(compiled, RegexProblem), "the checker rejects bad regexes"
                search = compiled.search

                def matches(v: Any) -> bool:
                    if v is MISSING:
                        return False
                    return search(v if isinstance(v, str) else js_text(v)) is not None

                return matches
            case ast.HasKey(key=key):
                return lambda v: isinstance(v, dict) and key in v
            case ast.Exists():
                return lambda v: v is not MISSING
            case ast.Called() | ast.CallTest() | ast.Judged() | ast.WithinBudget() | ast.Cites():
                raise AssertionError(f"{predicate_key(pred)} is not a value test")
            case _:
                assert_never(pred)


# ---- helpers ---------------------------------------------------------------------------


def _path_getter(path: str | None) -> Callable[[Any], list[Any]]:
    if path is None:
        return lambda v: [v]
    compiled = compile_path(path)
    assert isinstance(compiled, CompiledPath), "the checker rejects invalid paths"
    return compiled.getter()


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


def _in_order(seen: list[Any], wanted: list[Any]) -> bool:
    """A subsequence, not necessarily adjacent; repeated names need repeated items."""
    it = iter(seen)
    return all(any(json_equal(x, w) for x in it) for w in wanted)


def citable_values(results: Iterable[Any]) -> set[str]:
    """traceplay's citable leaves: finite numbers as text, trimmed strings of 3-120
    characters; booleans and null skipped; objects and arrays walked."""
    leaves: set[str] = set()
    stack = list(results)
    while stack:
        v = stack.pop()
        if isinstance(v, bool) or v is None:
            continue
        if isinstance(v, int):
            leaves.add(str(v))
        elif isinstance(v, float):
            if math.isfinite(v):
                leaves.add(js_number(v))  # JavaScript's String(n): 4.0 → "4", 1e21 → "1e+21"
        elif isinstance(v, str):
            t = v.strip()
            if 3 <= len(t) <= 120:
                leaves.add(t)
        elif isinstance(v, list):
            stack.extend(v)
        elif isinstance(v, dict):
            stack.extend(v.values())
    return leaves


def _count_words(count: ast.Count) -> str:
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


def _expected_of(pred: ast.Predicate) -> Any:
    match pred:
        case ast.Compare(value=v) | ast.Contains(value=v):
            return ast.to_json(v)
        case ast.ListTest(items=items):
            return ast.to_json(items)
        case ast.Matches(regex=r):
            return f"/{r.pattern}/{r.flags}"
        case ast.TextEdge(text=t):
            return t.value
        case ast.IsType(type=t):
            return t
        case ast.HasKey(key=k):
            return k
        case ast.Emptiness(empty=e):
            return "empty" if e else "not empty"
        case ast.Exists():
            return "present"
    return None


def _found(value: Any) -> str:
    if isinstance(value, list) and not value:
        return "nothing"
    return show(value)


def _no_trace(label: str) -> str:
    return f"this run has no trace of events, so `{label}` cannot be read"


def _no_state(label: str) -> str:
    return f"this run has no workflow state, so `{label}` cannot be read"
