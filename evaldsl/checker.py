"""Checker: find every problem of a program before anything runs.

Takes a parsed program (through its `Outline`) and an environment per case (what its
source provides, the declared tools and nodes, the tools a cassette recorded and the nodes
a state visited) and gives diagnostics: types of subjects and predicates, units, status
values, tool and node names with did-you-mean, subjects the source cannot provide, regex
and JSONPath validity (both compiled here, once: the compiler reuses them), and warnings
for assertions that cannot fail or cannot pass. It never stops at the first problem.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import assert_never

import attrs

from evaldsl import ast
from evaldsl.diagnostics import Diagnostic, did_you_mean
from evaldsl.outline import CaseOutline, Outline
from evaldsl.paths import PathProblem, compile_path
from evaldsl.regexes import RegexProblem, compile_regex, matches_everything
from evaldsl.source import Source, Span
from evaldsl.vocabulary import (
    PREDICATES,
    STATUS_VALUES,
    SUBJECTS,
    TYPE_WORDS,
    SourceKind,
    Type,
)


@attrs.frozen
class Environment:
    """What a case's assertions are checked against."""

    source_kind: SourceKind | None = None  # None: not known before the run (a `run` target)
    source_word: str | None = None  # "cassette", "state", … for messages
    declared_tools: frozenset[str] | None = None
    declared_nodes: frozenset[str] | None = None
    recorded_tools: frozenset[str] | None = None
    recorded_nodes: frozenset[str] | None = None


@attrs.frozen
class SourceFacts:
    """What reading a case's source file told the checker."""

    kind: SourceKind | None
    tools: frozenset[str] | None = None
    nodes: frozenset[str] | None = None


#: Reads a case's source file: facts, or a diagnostic (missing file, unreadable run).
FactsProvider = Callable[[ast.SourceDecl, Path, Source], "SourceFacts | Diagnostic"]

_SOURCE_KINDS: dict[str, SourceKind | None] = {
    "cassette": "trace",
    "trace": "trace",
    "state": "state",
    "dataset": None,
}


def predicate_key(pred: ast.Predicate) -> str:
    """The vocabulary entry of a predicate node."""
    match pred:
        case ast.Called(count=count):
            return "never_called" if count.form == "never" else "called"
        case ast.CallTest(target=target):
            return target
        case ast.Compare():
            return "compare"
        case ast.Contains():
            return "contains"
        case ast.ListTest(op=op):
            return {"all": "contains_all", "any": "contains_any"}.get(op, op)
        case ast.Emptiness(empty=empty):
            return "is_empty" if empty else "not_empty"
        case ast.Exists():
            return "exists"
        case ast.IsType():
            return "is_type"
        case ast.TextEdge(at_start=at_start):
            return "starts_with" if at_start else "ends_with"
        case ast.Matches():
            return "matches"
        case ast.HasKey():
            return "has"
        case ast.Judged():
            return "judged"
        case ast.WithinBudget():
            return "within_budget"
        case ast.Cites():
            return "cites"
        case _:
            assert_never(pred)


def subject_type(subject: ast.Subject) -> Type:
    return SUBJECTS[subject.kind].type


def check_outline(
    outline: Outline,
    source: Source,
    *,
    base_dir: Path | None = None,
    facts: FactsProvider | None = None,
    env: Environment | None = None,
) -> list[Diagnostic]:
    """Check every case of an outlined program; `facts` reads source files when given."""
    out: list[Diagnostic] = list(outline.diagnostics)
    base = env or Environment()
    declared_tools = outline.declared_tools or base.declared_tools
    declared_nodes = outline.declared_nodes or base.declared_nodes
    header_env = attrs.evolve(base, declared_tools=declared_tools, declared_nodes=declared_nodes)
    checker = _Checker(source, out)
    case_envs: list[Environment] = []
    for case in outline.cases:
        case_env = _case_environment(case, header_env, source, base_dir, facts, out)
        case_envs.append(case_env)
        checker.case(case.assertions, case_env)
    if outline.assertions:
        # Suite-level assertions hold for every case: check them against what all cases
        # have in common (or against nothing in particular when no case says).
        kinds = {e.source_kind for e in case_envs}
        shared_kind = kinds.pop() if len(kinds) == 1 else None
        word = case_envs[0].source_word if shared_kind is not None and case_envs else None
        checker.case(
            outline.assertions, attrs.evolve(header_env, source_kind=shared_kind, source_word=word)
        )
    return out


def check_statements(
    statements: Iterable[ast.Expr], source: Source, env: Environment | None = None
) -> list[Diagnostic]:
    """Check a list of assertions (a YAML `expect:` block) against one environment."""
    out: list[Diagnostic] = []
    _Checker(source, out).case(tuple(statements), env or Environment())
    return out


def _case_environment(
    case: CaseOutline,
    header: Environment,
    source: Source,
    base_dir: Path | None,
    facts: FactsProvider | None,
    out: list[Diagnostic],
) -> Environment:
    decl = case.source
    if decl is None:
        return header
    if isinstance(decl, ast.RunDecl):
        return attrs.evolve(header, source_kind=None, source_word="run target")
    kind = _SOURCE_KINDS[decl.kind]
    env = attrs.evolve(header, source_kind=kind, source_word=decl.kind)
    templated = "{{" in decl.path
    if facts is None or base_dir is None or templated:
        return env
    found = facts(decl, base_dir, source)
    if isinstance(found, Diagnostic):
        out.append(found)
        return env
    return attrs.evolve(
        env,
        source_kind=found.kind if found.kind is not None else kind,
        recorded_tools=found.tools,
        recorded_nodes=found.nodes,
    )


class _Checker:
    """One pass over assertions, appending diagnostics to `out`."""

    def __init__(self, source: Source, out: list[Diagnostic]) -> None:
        self.source = source
        self.out = out

    # -- reporting

    def error(self, span: Span, code: str, message: str, hint: str | None = None) -> None:
        self.out.append(Diagnostic.at(self.source, span, code, message, hint))

    def text(self, span: Span) -> str:
        return self.source.text[span.start : span.end]

    # -- a case

    def case(self, assertions: tuple[ast.Expr, ...], env: Environment) -> None:
        for expr in assertions:
            self.expr(expr, env)
        self.contradictions(assertions)

    def expr(self, expr: ast.Expr, env: Environment) -> None:
        match expr:
            case ast.Check():
                self.check(expr, env)
            case ast.NoTool(name=name):
                self.forbidden_tool(name, expr.span, env)
                self.available("tools", expr.span, env)
            case ast.NodeVisited(name=name):
                self.node_name(name, expr.span, env)
                self.available("nodes", expr.span, env)
            case ast.Not(operand=operand):
                self.expr(operand, env)
            case ast.And(operands=ops) | ast.Or(operands=ops):
                for op in ops:
                    self.expr(op, env)
            case _:
                assert_never(expr)

    # -- subjects

    def available(self, kind: str, span: Span, env: Environment) -> bool:
        spec = SUBJECTS[kind]
        if env.source_kind is None or env.source_kind in spec.sources:
            return True
        word = env.source_word or env.source_kind
        provides = [s.syntax for s in SUBJECTS.values() if env.source_kind in s.sources]
        why = {
            "trace": "it records events, not a workflow state",
            "state": "it is a workflow's final state, not a trace of events",
            "value": "it is the value a run returned",
        }[env.source_kind]
        self.error(
            span,
            "E303",
            f"a {word} cannot provide `{spec.syntax.split(',')[0].split('[')[0].strip()}`: {why}",
            f"a {word} provides: {', '.join(provides)}",
        )
        return False

    def tool_name(self, name: str, span: Span, env: Environment, *, recorded: bool) -> None:
        if env.declared_tools is not None and name not in env.declared_tools:
            guess = did_you_mean(name, env.declared_tools)
            self.error(
                span,
                "E301",
                f'unknown tool "{name}": the `tools` line declares '
                + ", ".join(sorted(env.declared_tools)),
                f"did you mean `{guess}`?" if guess else "add it to the `tools` line",
            )
            return
        if recorded and env.recorded_tools is not None and name not in env.recorded_tools:
            guess = did_you_mean(name, env.recorded_tools)
            if guess:
                self.error(
                    span,
                    "W301",
                    f'tool "{name}" never occurs in this {env.source_word or "recording"}',
                    f"did you mean `{guess}`?",
                )

    def forbidden_tool(self, name: str, span: Span, env: Environment) -> None:
        """`no tool X` may name a tool that does not exist (a safety net), but a near miss
        of a declared or recorded tool is most likely a typo that would always pass."""
        known = (env.declared_tools or frozenset()) | (env.recorded_tools or frozenset())
        if name in known:
            return
        guess = did_you_mean(name, known, cutoff=0.8)
        if guess:
            self.error(
                span,
                "W301",
                f'tool "{name}" is neither declared nor recorded, so this always passes',
                f"did you mean `{guess}`?",
            )

    def node_name(self, name: str, span: Span, env: Environment) -> None:
        if env.declared_nodes is not None and name not in env.declared_nodes:
            guess = did_you_mean(name, env.declared_nodes)
            self.error(
                span,
                "E302",
                f'unknown node "{name}": the `nodes` line declares '
                + ", ".join(sorted(env.declared_nodes)),
                f"did you mean `{guess}`?" if guess else "add it to the `nodes` line",
            )
            return
        if env.recorded_nodes is not None and name not in env.recorded_nodes:
            guess = did_you_mean(name, env.recorded_nodes)
            if guess:
                self.error(
                    span,
                    "W302",
                    f'node "{name}" was never visited in this state',
                    f"did you mean `{guess}`?",
                )

    def subject(self, subject: ast.Subject, env: Environment, *, forbidding: bool) -> None:
        self.available(subject.kind, subject.span, env)
        if subject.kind == "tool" and subject.name is not None and not forbidding:
            self.tool_name(subject.name, subject.span, env, recorded=True)
        if subject.index == 0:
            self.error(
                subject.span,
                "E207",
                "answers are numbered from 1",
                "answer[1] is the first, answer[-1] the last",
            )
        if subject.path is not None:
            self.path(subject.path, subject.span)

    def path(self, text: str, span: Span) -> None:
        compiled = compile_path(text)
        if isinstance(compiled, PathProblem):
            # point at the path itself within the subject or predicate that holds it
            at = self.source.text.find(text, span.start, span.end)
            where = Span(at, at + len(text)) if at >= 0 else span
            self.error(where, "E404", compiled.message, compiled.hint)

    # -- checks

    def check(self, check: ast.Check, env: Environment) -> None:
        subject, pred = check.subject, check.predicate
        forbidding = isinstance(pred, ast.Called) and pred.count.high == 0
        self.subject(subject, env, forbidding=forbidding)
        stype = subject_type(subject)
        key = predicate_key(pred)
        spec = PREDICATES[key]
        subject_text = self.text(subject.span) or subject.kind
        if stype not in spec.applies_to:
            ordered = stype in ("Number", "Duration", "Money", "Json")
            fitting = [
                "== != VALUE" if p.name == "compare" and not ordered else p.syntax.split(" [")[0]
                for p in PREDICATES.values()
                if stype in p.applies_to
            ]
            self.error(
                pred.span,
                "E201",
                f"`{spec.syntax.split(' [')[0]}` does not apply to `{subject_text}` "
                f"({TYPE_WORDS[stype]})",
                f"on {TYPE_WORDS[stype]}: " + "; ".join(fitting[:8]),
            )
            return
        if check.every and not isinstance(pred, ast.CallTest):
            self.error(
                check.span,
                "E201",
                "`every` applies to `args` and `result` tests",
                "every tool NAME args $.path <= 10",
            )
        self.predicate(pred, stype, subject, subject_text, env)

    def predicate(
        self,
        pred: ast.Predicate,
        stype: Type,
        subject: ast.Subject,
        subject_text: str,
        env: Environment,
    ) -> None:
        match pred:
            case ast.Called(count=count):
                self.count(count)
                if count.form == "never" and subject.name is not None:
                    self.forbidden_tool(subject.name, subject.span, env)
            case ast.CallTest(path=path, test=test):
                if path is not None:
                    self.path(path, pred.span)
                self.predicate(test, "Json", subject, f"{pred.target} of {subject_text}", env)
            case ast.Compare(op=op, value=value):
                if op not in ("==", "!=") and stype not in ("Number", "Duration", "Money", "Json"):
                    self.error(
                        pred.span,
                        "E201",
                        f"`{op}` does not apply to `{subject_text}` ({TYPE_WORDS[stype]})",
                        "order comparisons apply to numbers, durations and money",
                    )
                    return
                if op not in ("==", "!=") and stype == "Json" and not isinstance(value, ast.Num):
                    self.error(
                        value.span,
                        "E205",
                        f"`{op}` compares numbers; found {_value_word(value)}",
                    )
                    return
                self.value(value, stype, subject, subject_text, env, whole=True)
                self.trivial_compare(pred, subject)
            case ast.Contains(value=value):
                self.value(value, stype, subject, subject_text, env, whole=False)
                if stype == "Text" and isinstance(value, ast.Str) and value.value == "":
                    self.error(
                        pred.span,
                        "W601",
                        'this can never fail: every text contains ""',
                        "say which text the answer must contain",
                    )
            case ast.ListTest(op=op, items=items):
                item_type: Type = "Status" if stype == "Status" else stype
                if stype == "Json" and op in ("in",):
                    item_type = "Json"
                for item in items.items:
                    self.value(item, item_type, subject, subject_text, env, whole=False)
                if not items.items:
                    if op in ("all",):
                        self.error(pred.span, "W601", "this can never fail: the list is empty")
                    elif op in ("any", "in"):
                        self.error(pred.span, "W602", "this can never pass: the list is empty")
            case ast.Emptiness() | ast.IsType() | ast.WithinBudget():
                if isinstance(pred, ast.WithinBudget):
                    if subject.kind != "tokens":
                        self.error(
                            pred.span,
                            "E201",
                            "`within budget` applies to `tokens`",
                            "tokens within budget",
                        )
                    elif env.source_kind is not None and env.source_kind != "state":
                        self.error(
                            pred.span,
                            "E303",
                            f"a {env.source_word or env.source_kind} has no token budget: "
                            "`within budget` reads a workflow state's max_token_budget",
                            "use a number: tokens <= 2000",
                        )
            case ast.TextEdge(text=text):
                if text.value == "":
                    self.error(pred.span, "W601", "this can never fail: the string is empty")
            case ast.Matches(regex=regex):
                self.regex(regex)
            case ast.HasKey() | ast.Exists():
                pass
            case ast.Judged(threshold=threshold, op=op):
                if op is not None and op not in (">=", ">"):
                    self.error(
                        pred.span,
                        "E208",
                        f"a judge threshold is a minimum score: `>= T`, not `{op} T`",
                    )
                if threshold is not None and not 0.0 <= threshold <= 1.0:
                    self.error(
                        pred.span,
                        "E208",
                        f"a judge score is between 0 and 1; {threshold:g} is out of range",
                    )
            case ast.Cites(tool=tool, at_least=at_least, path=path):
                self.tool_name(tool, pred.span, env, recorded=True)
                if path is not None:
                    self.path(path, pred.span)
                if at_least is not None and at_least < 1:
                    self.error(pred.span, "E207", "cite at least 1 value")
            case _:
                assert_never(pred)

    def count(self, count: ast.Count) -> None:
        if count.low < 0 or (count.high is not None and count.high < 0):
            self.error(count.span, "E207", "a call count cannot be negative")
        elif count.high is not None and count.low > count.high:
            self.error(
                count.span,
                "E207",
                f"between {count.low} and {count.high}: the smaller number comes first",
                f"between {count.high} and {count.low} times",
            )
        elif count.form == "at_least" and count.low == 0:
            self.error(
                count.span, "W601", "this can never fail: every tool is called at least 0 times"
            )

    def trivial_compare(self, pred: ast.Compare, subject: ast.Subject) -> None:
        if subject_type(subject) != "Number" or not isinstance(pred.value, ast.Num):
            return
        n = pred.value.value
        # counts and token sums are never negative
        if (pred.op == ">=" and n <= 0) or (pred.op == ">" and n < 0):
            self.error(
                pred.span, "W601", f"this can never fail: `{subject.kind}` is never negative"
            )
        elif (pred.op == "<" and n <= 0) or (pred.op == "<=" and n < 0):
            self.error(
                pred.span, "W602", f"this can never pass: `{subject.kind}` is never negative"
            )

    def regex(self, regex: ast.Regex) -> None:
        compiled = compile_regex(regex.pattern, regex.flags)
        if isinstance(compiled, RegexProblem):
            self.error(regex.span, compiled.code, compiled.message, compiled.hint)
        elif matches_everything(compiled):
            self.error(
                regex.span,
                "W601",
                "this can never fail: the regex matches the empty text, so it is found in "
                "every text",
            )

    # -- values

    def value(
        self,
        value: ast.Value,
        stype: Type,
        subject: ast.Subject,
        subject_text: str,
        env: Environment,
        *,
        whole: bool,
    ) -> None:
        """Check a literal against what the subject holds (`whole`: the value itself, not an
        element of it)."""
        match stype:
            case "Number":
                if isinstance(value, ast.Num) and not isinstance(value.value, bool):
                    return
                if isinstance(value, (ast.Duration, ast.Money)):
                    self.error(
                        value.span,
                        "E202",
                        f"`{subject_text}` is a number, not {_value_word(value)}",
                        f"write {_plain_number(value)}",
                    )
                else:
                    self.error(
                        value.span,
                        "E205",
                        f"`{subject_text}` is a number; found {_value_word(value)}",
                    )
            case "Duration":
                if isinstance(value, ast.Duration):
                    return
                if isinstance(value, ast.Num):
                    self.error(
                        value.span,
                        "E202",
                        f"`{subject_text}` is a duration: give the number a unit",
                        f"write `{value.value:g}s` or `{value.value:g}ms`",
                    )
                else:
                    self.error(
                        value.span,
                        "E205",
                        f"`{subject_text}` is a duration; found {_value_word(value)}",
                    )
            case "Money":
                if isinstance(value, ast.Money):
                    return
                if isinstance(value, ast.Num):
                    self.error(
                        value.span,
                        "E202",
                        f"`{subject_text}` is an amount of money: write it in dollars",
                        f"write `${value.value:g}`",
                    )
                else:
                    self.error(
                        value.span, "E205", f"`{subject_text}` is money; found {_value_word(value)}"
                    )
            case "Text":
                if isinstance(value, ast.Str):
                    return
                if isinstance(value, ast.Name):
                    self.error(value.span, "E204", "text must be quoted", f'write "{value.value}"')
                else:
                    shown = self.text(value.span)
                    self.error(
                        value.span,
                        "E205",
                        f"`{subject_text}` is text; found {_value_word(value)}",
                        f'quote it: "{shown}"' if isinstance(value, (ast.Num, ast.Bool)) else None,
                    )
            case "Status":
                if isinstance(value, (ast.Name, ast.Str)):
                    if value.value not in STATUS_VALUES:
                        guess = did_you_mean(value.value, STATUS_VALUES)
                        self.error(
                            value.span,
                            "E203",
                            f'unknown status "{value.value}"; a status is one of '
                            + ", ".join(STATUS_VALUES),
                            f"did you mean `{guess}`?" if guess else None,
                        )
                    return
                self.error(
                    value.span, "E205", f"`status` is a status name; found {_value_word(value)}"
                )
            case "Names":
                if whole and isinstance(value, ast.ListLit):
                    for item in value.items:
                        self.value(item, "Names", subject, subject_text, env, whole=False)
                    return
                if isinstance(value, (ast.Name, ast.Str)):
                    if subject.kind == "tools":
                        self.tool_name(value.value, value.span, env, recorded=True)
                    elif subject.kind == "nodes":
                        self.node_name(value.value, value.span, env)
                    return
                wanted = "a list of names" if whole else "a name"
                self.error(
                    value.span,
                    "E205",
                    f"`{subject_text}` compares with {wanted}; found {_value_word(value)}",
                )
            case "Json":
                self.json_value(value)
            case "Calls":
                pass  # no literal compares with calls; the grammar gives none
            case _:
                assert_never(stype)

    def json_value(self, value: ast.Value) -> None:
        match value:
            case ast.Name(value=text):
                self.error(value.span, "E204", "text must be quoted", f'write "{text}"')
            case ast.ListLit(items=items):
                for item in items:
                    self.json_value(item)
            case ast.ObjectLit(pairs=pairs):
                for _, item in pairs:
                    self.json_value(item)
            case _:
                pass

    # -- across a case

    def contradictions(self, assertions: tuple[ast.Expr, ...]) -> None:
        """Top-level call counts of one tool that no run can satisfy together."""
        ranges: dict[str, tuple[int, float, ast.Expr]] = {}
        for expr in assertions:
            bounds = _count_bounds(expr)
            if bounds is None:
                continue
            name, low, high = bounds
            if name in ranges:
                plow, phigh, first = ranges[name]
                nlow, nhigh = max(plow, low), min(phigh, high)
                if nlow > nhigh:
                    line = self.source.position(first.span.start).line
                    self.error(
                        expr.span,
                        "W602",
                        f'this can never pass: it contradicts the count of tool "{name}" '
                        f"on line {line}",
                    )
                    continue
                ranges[name] = (nlow, nhigh, first)
            else:
                ranges[name] = (low, high, expr)


def _count_bounds(expr: ast.Expr) -> tuple[str, int, float] | None:
    match expr:
        case ast.NoTool(name=name):
            return name, 0, 0
        case ast.Check(
            subject=ast.Subject(kind="tool", name=str(name)),
            predicate=ast.Called(count=c),
            every=False,
        ):
            if c.low < 0 or (c.high is not None and not 0 <= c.low <= c.high):
                return None  # an invalid count (E207) contradicts nothing
            return name, c.low, float("inf") if c.high is None else c.high
    return None


def _value_word(value: ast.Value) -> str:
    match value:
        case ast.Str(value=v):
            return f'the text "{v}"'
        case ast.Num(value=v):
            return f"the number {v}"
        case ast.Bool(value=v):
            return "true" if v else "false"
        case ast.Null():
            return "null"
        case ast.Name(value=v):
            return f"the name {v}"
        case ast.Duration(text=t):
            return f"a duration ({t})"
        case ast.Money(text=t):
            return f"an amount of money ({t})"
        case ast.ListLit():
            return "a list"
        case ast.ObjectLit():
            return "an object"
        case _:
            assert_never(value)


def _plain_number(value: ast.Duration | ast.Money) -> str:
    if isinstance(value, ast.Duration):
        return f"`{value.seconds:g}`"
    return f"`{value.amount:g}`"
