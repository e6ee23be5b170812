"""Checker: find every problem of a program before anything runs.

Takes a case's assertions and its environment (what its source provides, the declared
tools and nodes, the tools a cassette recorded and the nodes a state visited; see
`environment.py`) and gives diagnostics: types of subjects and predicates, units, status
values, tool and node names with did-you-mean, subjects the source cannot provide, regex
and JSONPath validity (both compiled here, once: the compiler reuses them), and warnings
for assertions that cannot fail or cannot pass. It never stops at the first problem.
"""

from __future__ import annotations

import functools
import json
import re
import unicodedata
from collections.abc import Callable, Iterable
from typing import Any, assert_never, get_args

import attrs

from evaldsl.cache.regexes import regex
from evaldsl.check.bounds import Narrowing, measure_bounds
from evaldsl.check.environment import Environment
from evaldsl.language import ast
from evaldsl.language.diagnostics import Diagnostic, Fixing, Never, did_you_mean, sorted_names
from evaldsl.language.paths import MULTIPLIES, PathProblem, compile_path
from evaldsl.language.regexes import RegexProblem, compile_regex, matches_everything
from evaldsl.language.source import Source, Span
from evaldsl.language.vocabulary import (
    STATUS_VALUES,
    SUBJECTS,
    TYPE_WORDS,
    PredicateSpec,
    SourceKind,
    Type,
)
from evaldsl.predicates.compare import ORDERED
from evaldsl.predicates.registry import FAMILY_OF, PREDICATES
from evaldsl.runs import prices


def subject_type(subject: ast.Subject) -> Type:
    """The type of a subject, from the vocabulary."""
    return SUBJECTS[subject.kind].type


@attrs.define
class CaseBounds:
    """What a case's assertions bound so far, across its snippets (an `.eval` case's
    assertions are one snippet, a YAML case's one each, a dataset row's its own): each
    tool's call count (least, most, the file and line that set it, whether the suite's
    header did) and each measure's `Narrowing` (its bounds set by (assertion, source,
    whether the header did))."""

    counts: dict[str, tuple[int, float, str, int, bool]] = attrs.Factory(dict)
    measures: dict[str, Narrowing] = attrs.Factory(dict)

    def copy(self) -> CaseBounds:
        """The same bounds, to be narrowed apart (the header's, for each case)."""
        return CaseBounds(dict(self.counts), {k: n.copy() for k, n in self.measures.items()})


def check_statements(
    statements: Iterable[ast.Expr],
    source: Source,
    env: Environment | None = None,
    bounds: CaseBounds | None = None,
) -> list[Diagnostic]:
    """Check a list of assertions (a YAML `expect:` block) against one environment; a
    count or a bound of a measure that contradicts one of `bounds` (the suite header's
    and the case's other snippets', which this narrows) is W602 here, at the later."""
    out: list[Diagnostic] = []
    _Checker(source, out, env or Environment()).case(tuple(statements), bounds or CaseBounds())
    return out


def header_bounds(snippets: Iterable[tuple[tuple[ast.Expr, ...], Source]]) -> CaseBounds:
    """The call counts and the bounds of measures of the header's assertions (their
    (assertions, source) pairs), narrowed together: made once a suite, a copy of it held
    against each case's (what the header contradicts itself is the header's W602, said
    when the header is checked, and left out here).

    >>> header_bounds([((ast.NoTool("x", span=Span(0, 9)),), Source("no tool x"))]).counts
    {'x': (0, 0, '<string>', 1, True)}
    """
    bounds = CaseBounds()
    for exprs, source in snippets:
        # narrowed as a case's are, marked the header's; its own contradictions are said
        # when the header is checked (`check_statements`), so not kept here
        checker = _Checker(source, [], Environment())
        checker.header = True
        checker.contradictions(exprs, bounds)
    return bounds


#: An assertion that can never fail, and one that can never pass: code and words.
#: What each kind of source is (E303), and what a subject reads from each, in this order
_SOURCE_IS = {
    "trace": "records events",
    "state": "is a workflow's final state",
    "value": "is the value a run returned",
}
_SUBJECT_READS = {
    "trace": "a trace of events",
    "state": "a workflow state",
    "value": "a `run` target's return value",
}
_SOURCE_ORDER = ("trace", "state", "value")

_NEVER = {"fail": ("W601", "this can never fail"), "pass": ("W602", "this can never pass")}


class _Checker:
    """One pass over a case's assertions in one environment, appending diagnostics to
    `out`. It is the `CheckContext` predicate families check themselves in."""

    def __init__(self, source: Source, out: list[Diagnostic], env: Environment) -> None:
        self.source = source
        self.out = out
        self.env = env
        # under an odd number of `not`s, with no `and` or `or` between: an assertion that
        # can never fail then never passes, and the other way round (`never`)
        self.negated = False
        # whether the bounds this narrows are the suite header's (`header_bounds`)
        self.header = False

    @property
    def source_kind(self) -> SourceKind | None:
        return self.env.source_kind

    @property
    def source_word(self) -> str | None:
        return self.env.source_word

    # -- reporting

    def error(
        self, span: Span, code: str, message: str, hint: str | None = None, fix: Fixing = None
    ) -> None:
        self.out.append(Diagnostic.at(self.source, span, code, message, hint, fix=fix))

    def never(self, span: Span, outcome: Never, why: str, hint: str | None = None) -> None:
        """An assertion that can never have `outcome` ("fail" or "pass") because of `why`
        (W601, W602): the other way round under `not` (`not answer contains ""` can never
        pass, though what it negates never fails)."""
        if self.negated:
            outcome = "pass" if outcome == "fail" else "fail"
            why = f"it is under `not`, and {why}"
        code, said = _NEVER[outcome]
        self.error(span, code, f"{said}: {why}", hint)

    def guessed(
        self, span: Span, name: str, guess: str | None, otherwise: str | None = None
    ) -> _Hint:
        """The did-you-mean hint for `name`, written in `span` (`tool NAME`, `no tool
        NAME`, `node NAME visited`, `cites tool NAME`, or the name alone), and its fix:
        the name replaced by the guess (`otherwise`: the hint when there is no guess)."""
        if not guess:
            return otherwise, None
        hint = f"did you mean `{guess}`?"
        unseen = _unseen_difference(name, guess)
        if unseen is not None:  # (`café` for `café`: the hint alone reads as nonsense)
            hint += f" It looks the same, but {unseen}"
        return hint, _name_fix(self.source.text, span, name, guess)

    def text(self, span: Span) -> str:
        return self.source.text[span.start : span.end]

    # -- a case

    def case(self, assertions: tuple[ast.Expr, ...], bounds: CaseBounds) -> None:
        rules = _EXPR_RULES  # (each assertion's rule asked here, not through `expr`)
        for expr in assertions:
            rules[type(expr)](self, expr)
        self.contradictions(assertions, bounds)

    # -- boolean structure: each node type's rule, from a table (`_EXPR_RULES`)

    def no_tool(self, expr: ast.NoTool) -> None:
        self.forbidden_tool(expr.name, expr.span)
        self.available("tools", expr.span)

    def node_visited(self, expr: ast.NodeVisited) -> None:
        self.node_name(expr.name, expr.span)
        self.available("nodes", expr.span)

    def negation(self, expr: ast.Not) -> None:
        self.negated = not self.negated
        try:
            _EXPR_RULES[type(expr.operand)](self, expr.operand)
        finally:
            self.negated = not self.negated

    def junction(self, expr: ast.And | ast.Or) -> None:
        # (what never fails decides nothing of an `and`, under `not` or not: the warning
        # says it of the part, as it is)
        rules = _EXPR_RULES
        negated, self.negated = self.negated, False
        try:
            for op in expr.operands:
                rules[type(op)](self, op)
        finally:
            self.negated = negated

    # -- subjects

    def available(self, kind: str, span: Span) -> bool:
        env = self.env
        spec = SUBJECTS[kind]
        if env.source_kind is None or env.source_kind in spec.sources:
            return True
        word = env.source_word or env.source_kind
        provides = [s.syntax for s in SUBJECTS.values() if env.source_kind in s.sources]
        # what the source is, and what the subject reads, which it is not (`output` is a
        # `run` target's return value: "not a workflow state" said nothing of it)
        what = _SOURCE_IS[env.source_kind]
        reads = " or ".join(_SUBJECT_READS[s] for s in _SOURCE_ORDER if s in spec.sources)
        self.error(
            span,
            "E303",
            f"a {word} cannot provide `{spec.syntax.split(',')[0].split('[')[0].strip()}`: "
            f"it {what}, not {reads}",
            f"a {word} provides: {', '.join(provides)}",
        )
        return False

    def empty_name(self, name: str, span: Span, kind: str) -> bool:
        """Whether `name` is empty, said as an error: no run has a tool or node of no name
        (a call named "" is the run's error, docs/language.md §9.3), so `tool "" called`
        could never pass and `no tool ""` never fail."""
        if name:
            return False
        does = "calls a tool" if kind == "tool" else "visits a node"
        self.error(span, "E205", f'a {kind}\'s name is never empty: no run {does} named ""')
        return True

    def tool_name(self, name: str, span: Span, *, recorded: bool) -> None:
        if self.empty_name(name, span, "tool"):
            return
        env = self.env
        if env.declared_tools is not None and name not in env.declared_tools:
            guess = did_you_mean(name, env.declared_tools)
            self.error(
                span,
                "E301",
                f'unknown tool "{name}": the suite declares the tools '
                + _listed(env.declared_tools),
                *self.guessed(span, name, guess, "add it to the suite's tools"),
            )
            return
        recorded_tools = env.recorded_tools
        if (
            recorded
            and recorded_tools is not None
            and not frozenset.__contains__(recorded_tools, name)
        ):
            # names read from a recording's head (`runs/toolnames.py`): the rest of the
            # file is searched only when there is a warning to give
            guess = did_you_mean(name, recorded_tools)
            if guess and name not in recorded_tools:
                self.error(
                    span,
                    "W301",
                    f'tool "{name}" never occurs in this {env.source_word or "recording"}',
                    *self.guessed(span, name, guess),
                )

    def forbidden_tool(self, name: str, span: Span) -> None:
        """`no tool X` may name a tool that does not exist (a safety net), but a near miss
        of a declared or recorded tool is most likely a typo that would always pass."""
        if self.empty_name(name, span, "tool"):
            return
        env = self.env
        declared = env.declared_tools or frozenset()
        recorded = env.recorded_tools or frozenset()
        # (recorded names read from a recording's head: the set's own test, which does not
        # search the rest of the file; that is done below, only for a warning to give)
        if name in declared or frozenset.__contains__(recorded, name):
            return
        # the names joined once per pair of sets, not for every `no tool` line (thousands of
        # them against a `tools` line of thousands of names: their product, 34 s)
        guess = did_you_mean(name, _joined_names(declared, recorded), cutoff=0.8)
        if guess and name not in recorded:  # (here the rest of a recording is searched)
            self.error(
                span,
                "W301",
                f'tool "{name}" is neither declared nor recorded, so this always passes',
                *self.guessed(span, name, guess),
            )

    def node_name(self, name: str, span: Span) -> None:
        if self.empty_name(name, span, "node"):
            return
        env = self.env
        if env.declared_nodes is not None and name not in env.declared_nodes:
            guess = did_you_mean(name, env.declared_nodes)
            self.error(
                span,
                "E302",
                f'unknown node "{name}": the suite declares the nodes '
                + _listed(env.declared_nodes),
                *self.guessed(span, name, guess, "add it to the suite's nodes"),
            )
            return
        if env.recorded_nodes is not None and name not in env.recorded_nodes:
            guess = did_you_mean(name, env.recorded_nodes)
            if guess:
                self.error(
                    span,
                    "W302",
                    f'node "{name}" was never visited in this state',
                    *self.guessed(span, name, guess),
                )

    def subject_details(self, subject: ast.Subject) -> None:
        """The answer index and JSONPath of a subject."""
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
        if isinstance(compiled, PathProblem) or compiled.multiplies:
            # point at the path itself within the subject or predicate that holds it
            at = self.source.text.find(text, span.start, span.end)
            where = Span(at, at + len(text)) if at >= 0 else span
            if isinstance(compiled, PathProblem):
                self.error(where, "E404", compiled.message, compiled.hint)
            else:
                self.error(where, "W405", *MULTIPLIES)

    # -- checks

    def check(self, check: ast.Check) -> None:
        subject, pred = check.subject, check.predicate
        family = FAMILY_OF[type(pred)]  # (the registry's table, read in place)
        kind = subject.kind
        entry = SUBJECTS[kind]
        # the subject: available from this source, a known tool (unless the predicate
        # forbids it: asked only for a tool), its index and path
        source_kind = self.env.source_kind
        if source_kind is not None and source_kind not in entry.sources:
            self.available(kind, subject.span)
        # (the user's price table, runs/prices: a state's cost is its own, not priced)
        problem = prices.TABLE_PROBLEM
        if problem is not None and kind == "cost" and source_kind in (None, "trace"):
            self.error(
                subject.span,
                "W513",
                f"{problem}: so `cost` of a trace will be an error (no model is priced)",
                f"mend the file, or unset {prices.PRICES_VARIABLE}",
            )
        if kind == "tool" and subject.name is not None and not family.forbids(pred):
            self.tool_name(subject.name, subject.span, recorded=True)
        if subject.index == 0 or subject.path is not None:
            self.subject_details(subject)
        stype = entry.type
        spec = PREDICATES[family.key(pred)]
        span = subject.span  # (by index, as `Compiler.text` reads a span)
        subject_text = self.source.text[span[0] : span[1]] or subject.kind
        if stype not in spec.applies_to:
            self.not_applicable(pred, spec, stype, subject_text)
            return
        if check.every and not isinstance(pred, ast.CallTest):
            self.error(
                check.span,
                "E201",
                "`every` applies to `args` and `result` tests",
                "every tool NAME args $.path <= 10",
            )
        family.check(self, pred, stype, subject, subject_text)  # `predicate`, written out

    def not_applicable(
        self, pred: ast.Predicate, spec: PredicateSpec, stype: Type, subject_text: str
    ) -> None:
        """E201: the predicate does not apply to the subject's type. (Apart from `check`:
        its comprehension reads `ordered` and `stype`, which would make them closure cells,
        made at every call of the function that holds it.)"""
        ordered = stype in ORDERED
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
            _instead(pred, stype, subject_text, self.text(pred.span))
            or f"on {TYPE_WORDS[stype]}: " + "; ".join(fitting[:8]),
        )

    def predicate(
        self, pred: ast.Predicate, stype: Type, subject: ast.Subject, subject_text: str
    ) -> None:
        """Check a predicate by its family's rule."""
        FAMILY_OF[type(pred)].check(self, pred, stype, subject, subject_text)

    def regex(self, regex: ast.Regex) -> None:
        compiled = compile_regex(regex.pattern, regex.flags)
        if isinstance(compiled, RegexProblem):
            self.error(regex.span, compiled.code, compiled.message, compiled.hint)
        elif matches_everything(compiled):
            self.never(
                regex.span, "fail", "the regex matches the empty text, so it is found in every text"
            )

    # -- values

    def value(
        self,
        value: ast.Value,
        stype: Type,
        subject: ast.Subject,
        subject_text: str,
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
                    plain = _plain_number(value)
                    self.error(
                        value.span,
                        "E202",
                        f"`{subject_text}` is a number, not {ast.value_word(value)}",
                        f"write `{plain}`",
                        _literal_fix(value.span, plain, _NUMBER_TEXT),
                    )
                else:
                    self.error(
                        value.span,
                        "E205",
                        f"`{subject_text}` is a number; found {ast.value_word(value)}",
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
                        f"`{subject_text}` is a duration; found {ast.value_word(value)}",
                        *_unquoted(value, _DURATION_TEXT),
                    )
            case "Money":
                if isinstance(value, ast.Money):
                    return
                if isinstance(value, ast.Num):
                    dollars = f"${value.value:g}"
                    self.error(
                        value.span,
                        "E202",
                        f"`{subject_text}` is an amount of money: write it in dollars",
                        f"write `{dollars}`",
                        _literal_fix(value.span, dollars, _MONEY_TEXT),
                    )
                else:
                    self.error(
                        value.span,
                        "E205",
                        f"`{subject_text}` is money; found {ast.value_word(value)}",
                        *_unquoted(value, _MONEY_TEXT),
                    )
            case "Text":
                if isinstance(value, ast.Str):
                    return
                if isinstance(value, ast.Name):  # (a name: no escapes to add)
                    quoted = f'"{value.value}"'
                    hinted = f"write {quoted}"
                    self.error(
                        value.span, "E204", "text must be quoted", hinted, (value.span, quoted)
                    )
                else:
                    shown = self.text(value.span)
                    fix: Fixing = None
                    hint = None
                    if isinstance(value, (ast.Num, ast.Bool)):  # (digits or a word)
                        hint, fix = f'quote it: "{shown}"', (value.span, f'"{shown}"')
                    if isinstance(value, ast.ListLit):
                        # `answer contains ["a", "b"]`: all of them, or any
                        hint = (
                            f"for several texts: `contains all {shown}` or `contains any {shown}`"
                        )
                    self.error(
                        value.span,
                        "E205",
                        f"`{subject_text}` is text; found {ast.value_word(value)}",
                        hint,
                        fix,
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
                            *self.guessed(value.span, value.value, guess),
                        )
                    return
                self.error(
                    value.span, "E205", f"`status` is a status name; found {ast.value_word(value)}"
                )
            case "Names":
                if whole and isinstance(value, ast.ListLit):
                    for item in value.items:
                        self.value(item, "Names", subject, subject_text, whole=False)
                    return
                if whole and isinstance(value, (ast.Name, ast.Str)):
                    # `tools == search`: a list of names never equals one name, so `==`
                    # could never pass and `!=` never fail; the list of that one name
                    # is what is meant (`tools contains search` for "among them")
                    one = f"[{self.text(value.span)}]"
                    self.error(
                        value.span,
                        "E205",
                        f"`{subject_text}` compares with a list of names; found "
                        f"{ast.value_word(value)}",
                        f"write `{one}` (or `{subject_text} contains "
                        f"{self.text(value.span)}` for one name among them)",
                        (value.span, one),
                    )
                    return
                if isinstance(value, (ast.Name, ast.Str)):
                    if subject.kind == "tools":
                        self.tool_name(value.value, value.span, recorded=True)
                    elif subject.kind == "nodes":
                        self.node_name(value.value, value.span)
                    return
                wanted = "a list of names" if whole else "a name"
                self.error(
                    value.span,
                    "E205",
                    f"`{subject_text}` compares with {wanted}; found {ast.value_word(value)}",
                )
            case "Json":
                self.json_value(value, subject_text)
            case "Calls":
                pass  # no literal compares with calls; the grammar gives none
            case _:
                assert_never(stype)

    def json_value(self, value: ast.Value, subject_text: str) -> None:
        match value:
            case ast.Duration() | ast.Money():
                # JSON numbers have no unit: `== 2s` compared 2 (seconds) with whatever
                # the value counts, and passed on a bare 2, while `< 2s` was refused
                unit = "seconds" if isinstance(value, ast.Duration) else "dollars"
                self.error(
                    value.span,
                    "E205",
                    f"`{subject_text}` is JSON, whose numbers have no unit; found "
                    f"{ast.value_word(value)}",
                    f"write the number as the JSON holds it (`{_plain_number(value)}` if it "
                    f"counts {unit})",
                )
            case ast.Name(value=text):
                literal = _LITERAL_SPELLINGS.get(text.lower())
                if literal is not None:  # two ways to mend it: no one fix
                    hint = f'JSON writes it `{literal}`; for the text, write "{text}"'
                    self.error(value.span, "E204", "text must be quoted", hint)
                else:
                    quoted = f'"{text}"'  # (a name: no escapes to add)
                    fix = (value.span, quoted)
                    self.error(value.span, "E204", "text must be quoted", f"write {quoted}", fix)
            case ast.ListLit(items=items):
                for item in items:
                    self.json_value(item, subject_text)
            case ast.ObjectLit(pairs=pairs):
                for _, item in pairs:
                    self.json_value(item, subject_text)
            case _:
                pass

    # -- across a case

    def contradictions(self, assertions: tuple[ast.Expr, ...], bounds: CaseBounds) -> None:
        """Top-level call counts of one tool, and bounds of one measure of the run
        (`tokens < 100`), that no run can satisfy together with the case's earlier ones
        (`bounds`, narrowed here: the suite header's counts among them): said at the later."""
        counts = bounds.counts
        for expr in assertions:
            # most assertions count nothing: passed over without a call
            kind = type(expr)
            if kind is ast.Check:
                if type(expr.predicate) is ast.Compare:  # type: ignore[union-attr]
                    self.measure_contradiction(expr, bounds.measures)  # type: ignore[arg-type]
                    continue
                if type(expr.predicate) is not ast.Called:  # type: ignore[union-attr]
                    continue
            elif kind is not ast.NoTool:
                continue
            found = _count_bounds(expr)
            if found is None:
                continue
            name, low, high = found
            if name in counts:
                plow, phigh, path, line, header = counts[name]
                nlow, nhigh = max(plow, low), min(phigh, high)
                if nlow > nhigh:
                    whose = "the suite-level count" if header else "the count"
                    why = f'it contradicts {whose} of tool "{name}" {self.on(path, line)}'
                    self.never(expr.span, "pass", why)
                    continue
                counts[name] = (nlow, nhigh, path, line, header)
            else:
                line = self.source.position(expr.span.start).line
                counts[name] = (low, high, self.source.path, line, self.header)

    def measure_contradiction(self, expr: ast.Check, measures: dict[str, Narrowing]) -> None:
        """`expr`'s bounds of a measure of the run (`tokens < 100`) held against the
        case's earlier ones (`measures`, narrowed here): W602 when no value meets them all."""
        found = measure_bounds(expr, (expr, self.source, self.header))
        if found is None:
            return
        name, low, high = found
        narrowing = measures.get(name)
        if narrowing is None:
            narrowing = measures[name] = Narrowing()
        earlier = narrowing.add(low, high)
        if earlier is None:
            return
        first, source, header = earlier[2]
        span = first.span
        where = self.on(source.path, source.position(span.start).line)
        whose = "the suite-level " if header else ""
        if source.written(span):
            what = f"{whose}`{source.text[span.start : span.end]}`"
        else:  # (made from a YAML object or a dataset row: not the user's words)
            what = f"{whose or 'the '}bound of `{SUBJECTS[name].syntax}`"
        self.never(expr.span, "pass", f"it contradicts {what} {where}")

    def on(self, path: str, line: int) -> str:
        """Where an earlier assertion is, said from this one's file: `on line 3`, or
        `on rows.json:3` (a dataset row's, beside its case's own)."""
        return f"on line {line}" if path == self.source.path else f"on {path}:{line}"


#: The check rule of each kind of assertion, by its exact type (AST node classes have no
#: subclasses): one lookup where a chain of type tests ran, and the callers (a case's
#: loop, `not`, `and` and `or`) ask it directly, a frame less each.
_EXPR_RULES: dict[type, Callable[[_Checker, Any], None]] = {
    ast.Check: _Checker.check,
    ast.NoTool: _Checker.no_tool,
    ast.NodeVisited: _Checker.node_visited,
    ast.Not: _Checker.negation,
    ast.And: _Checker.junction,
    ast.Or: _Checker.junction,
}
# (the `match` it replaced was checked whole by mypy's `assert_never`; this, as it loads)
assert set(_EXPR_RULES) == set(get_args(ast.Expr)), "an assertion kind without a check rule"


def _count_bounds(expr: ast.Expr) -> tuple[str, int, float] | None:
    # by exact type, not `match`: it runs for every assertion (AST nodes have no subclasses)
    kind = type(expr)
    if kind is ast.NoTool:
        return expr.name, 0, 0  # type: ignore[union-attr]
    if kind is not ast.Check:
        return None
    subject, pred = expr.subject, expr.predicate  # type: ignore[union-attr]
    name = subject.name
    if expr.every or subject.kind != "tool" or type(pred) is not ast.Called:  # type: ignore[union-attr]
        return None
    if not isinstance(name, str):
        return None
    c = pred.count
    if c.low < 0 or (c.high is not None and not 0 <= c.low <= c.high):
        return None  # an invalid count (E207) contradicts nothing
    return name, c.low, float("inf") if c.high is None else c.high


def _plain_number(value: ast.Duration | ast.Money) -> str:
    if isinstance(value, ast.Duration):
        return f"{value.seconds:g}"
    return f"{value.amount:g}"


def _literal_fix(span: Span, text: str, literal: re.Pattern[str]) -> Fixing:
    """`text` in place of the value at `span`, when it is written as the literal must be
    (`{:g}` writes a small or large number `1e-05`, which is no literal)."""
    return (span, text) if literal.fullmatch(text) else None


#: The declared names an unknown name's error lists: the first in order, then how many
#: more. (Every name was listed: a long `tools` line and many unknown names made output
#: and memory grow as their product, 204 MB of messages for a 162 KB file.)
LISTED_NAMES = 10


_Hint = tuple[str | None, Fixing]

#: A name as written, after its keyword where it has one: `tool NAME`, `node "NAME"`, or
#: the name alone (an item of `tools contains [...]`, a status).
_WRITTEN_NAME = regex(
    r"(?:(?:tool|node)\s+)?"
    r"(?P<name>[A-Za-z_]\w*|\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*')"
)
_IDENTIFIER = regex(r"[A-Za-z_]\w*")


def _unseen_difference(name: str, guess: str) -> str | None:
    """How `name` differs from `guess` when they look alike, one Unicode form of the
    other (`é` as U+00E9, or as `e` and the combining U+0301 an editor may write), or
    one with an invisible character (U+200B), or None when they do not: the differing
    code points of each, between their common start and end.

    >>> _unseen_difference("cafe\u0301", "caf\u00e9")
    'is written here with U+0065 U+0301 where that name has U+00E9'
    >>> _unseen_difference("search\u200b", "search")
    'is written here with U+200B where that name has nothing'
    >>> _unseen_difference("cafe", "caf\u00e9") is None
    True
    """
    if name == guess or _seen(name) != _seen(guess):
        return None
    start = _common_start(name, guess)
    end = _common_start(name[start:][::-1], guess[start:][::-1])
    here, there = name[start : len(name) - end], guess[start : len(guess) - end]

    def points(text: str) -> str:
        if not text:
            return "nothing"
        return " ".join(f"U+{ord(c):04X}" for c in text[:8]) + (" …" if len(text) > 8 else "")

    return f"is written here with {points(here)} where that name has {points(there)}"


def _common_start(a: str, b: str) -> int:
    """How many characters `a` and `b` begin with alike."""
    shorter = min(len(a), len(b))
    return next((i for i in range(shorter) if a[i] != b[i]), shorter)


def _seen(text: str) -> str:
    """What a reader sees of `text`: its compatibility form (NFKC), format characters
    (zero-width spaces, joiners, bidirectional marks: Unicode's Cf) left out."""
    shown = unicodedata.normalize("NFKC", text)
    return "".join(c for c in shown if unicodedata.category(c) != "Cf")


def _name_fix(text: str, span: Span, name: str, guess: str) -> Fixing:
    """`name` where it is written in `text[span]` (the first word or string that is it)
    replaced by `guess`: bare where the name was and the guess can be (an identifier),
    quoted otherwise."""
    for m in _WRITTEN_NAME.finditer(text, span.start, span.end):
        written = m.group("name")
        quoted = written[0] in "\"'"
        # (`answer cites tool NAME`: the words before it are other names; a name with
        # escapes is found as JSON writes it, a rarer spelling goes without a fix)
        if written not in (name, f'"{name}"', f"'{name}'", json.dumps(name)):
            continue
        bare = not quoted and _IDENTIFIER.fullmatch(guess)
        new = guess if bare else json.dumps(guess, ensure_ascii=False)
        return Span(m.start("name"), m.end("name")), new
    return None


def _listed(names: frozenset[str]) -> str:
    """`names` in order for a message: the first `LISTED_NAMES` of them and a count of
    the rest."""
    ordered = sorted_names(names)
    shown = ", ".join(ordered[:LISTED_NAMES])
    rest = len(ordered) - LISTED_NAMES
    return shown + (f" and {rest} more" if rest > 0 else "")


@functools.lru_cache(maxsize=16)
def _joined_names(declared: frozenset[str], recorded: frozenset[str]) -> frozenset[str]:
    """The names declared or recorded (a frozenset keeps its hash: a second ask is a lookup)."""
    return declared | recorded


#: Other languages' spellings of JSON's literals (`True`, `None`): a bare word, so text
#: that must be quoted (E204), but most likely meant as the literal.
_LITERAL_SPELLINGS = {
    "true": "true", "false": "false", "none": "null", "nil": "null", "null": "null",
    "undefined": "null", "yes": "true", "no": "false",
}  # fmt: skip
_DURATION_TEXT = regex(r"-?\d+(?:\.\d+)?(?:ms|s|m|h)")
_MONEY_TEXT = regex(r"\$\d+(?:\.\d+)?")
_NUMBER_TEXT = regex(r"-?\d+(?:\.\d+)?")


def _unquoted(value: ast.Value, literal: re.Pattern[str]) -> _Hint:
    """`latency < "5s"`: the quoted text is the literal itself, written without quotes
    (the hint, and the fix: the literal in place of the string)."""
    if isinstance(value, ast.Str) and literal.fullmatch(value.value.strip()):
        bare = value.value.strip()
        return f"write `{bare}` without quotes", (value.span, bare)
    return None, None


def _instead(pred: ast.Predicate, stype: Type, subject_text: str, written: str) -> str | None:
    """What a predicate that does not apply was most likely meant as: `answer has "x"`
    looks for text (`contains`); `tool search contains "x"` looks into the calls' results."""
    if stype == "Text" and isinstance(pred, ast.HasKey):
        return f"to look for text, write `{subject_text} contains {json.dumps(pred.key)}`"
    if stype == "Calls" and isinstance(pred, (ast.Contains, ast.Matches, ast.Compare)):
        return (
            f"a tool's calls are tested through their arguments or results: "
            f"`{subject_text} args {written}` or `{subject_text} result {written}`"
        )
    return None
