"""What a predicate family is: the parts every stage reads, and the contexts stages give.

Takes nothing itself. A family module (`counts.py`, `text.py`, …) declares one `Family`:
the AST node classes it handles, its vocabulary entries, the build rules the parser calls
for its grammar rules, its check rule, its compiled form (a test of one value, or a whole
checker for predicates that read the run itself) and its printed form. Each stage hands
the family a small context (`BuildKit`, `CheckContext`, `CompileContext`, `Printer`), so
a family depends on no stage and every stage reads the same table (`registry.py`).

Also here: what subject readers and checkers share: `Unavailable` (the run cannot provide
the subject: an error verdict), `SubjectFails` (the subject itself fails the assertion, as
an answer that is not JSON does), `Found` (the several values a path found), and the
wording of the two most common error verdicts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

import attrs

from evaldsl.judge.protocol import Judge
from evaldsl.language import ast
from evaldsl.language.diagnostics import Fixing, Never
from evaldsl.language.source import Span
from evaldsl.language.values import SHOW_LIMIT, show
from evaldsl.language.verdicts import Verdict
from evaldsl.language.vocabulary import PredicateSpec, SourceKind, Type
from evaldsl.predicates.nameindex import NamesTest
from evaldsl.runs.index import Needs, RunFacts

#: A compiled assertion: reads a run's facts, gives a verdict.
Checker = Callable[[RunFacts], Verdict]
#: A compiled value test: one value (the subject's, or one a path found) → holds or not.
ValueTest = Callable[[Any], bool]
#: Reads a subject from a run's facts (may raise `Unavailable` or `SubjectFails`).
SubjectReader = Callable[[RunFacts], Any]


class Unavailable(Exception):
    """The run cannot provide the subject: the assertion is an error verdict."""


class SubjectFails(Exception):
    """The subject itself makes the assertion fail (an answer that is not JSON); `found`
    is what was there instead (its text), the failure's found value."""

    def __init__(self, message: str, found: Any = None) -> None:
        super().__init__(message)
        self.found = found


class Found:
    """Several values a JSONPath found: the predicate holds if one of them satisfies it."""

    __slots__ = ("values",)

    def __init__(self, values: list[Any]) -> None:
        self.values = values


def no_trace(label: str) -> str:
    """The message of a subject read from a run that has no trace of events."""
    return f"this run has no trace of events, so `{label}` cannot be read"


def no_state(label: str) -> str:
    """The message of a subject read from a run that has no workflow state."""
    return f"this run has no workflow state, so `{label}` cannot be read"


def found_text(facts: RunFacts, value: Any, empty: str | None = None) -> str:
    """What a test found, for a failure's message (`show`); `empty` for no values, if
    given. Made once a run for a value several failed assertions show: `show` writes a
    value whole to show 80 characters of it, and 40 failed tests of one tool's 2.3 MB
    result wrote it 40 times (0.77 s; one took 0.03 s).

    A value is known by its identity; a list (each assertion's list of found values is its
    own) by the identities of the elements `show` writes, the first `SHOW_LIMIT`, and
    whether there are more. What a key names is kept beside its text, so that no identity
    in a key is reused while it is kept; a run's values are not changed while it is
    checked. What is cheap to write is written as it is, without a key: a list whose first
    element is not a list or an object (the numbers or names a path found: their key cost
    more than writing them), a text of ASCII (`show` writes only as far as it shows it), a
    number."""
    if isinstance(value, list) and not value:
        return show(value) if empty is None else empty
    kind = type(value)
    if kind is list:
        first = type(value[0])
        if first is not dict and first is not list:  # (`is`: `in` compares types slowly)
            return show(value)
        kept: Any = value[:SHOW_LIMIT]
        key: tuple[Any, ...] = ("shown", len(value) > SHOW_LIMIT, *map(id, kept))
    elif kind is dict or (kind is str and len(value) > SHOW_LIMIT and not value.isascii()):
        kept = value
        key = ("shown", id(value))
    else:
        return show(value)
    made = facts.shared.get(key)
    if made is None:
        made = facts.shared[key] = (kept, show(value))
    text: str = made[1]
    return text


# ---- what each stage gives a family ------------------------------------------------------


class BuildKit(Protocol):
    """What the parser gives a build rule: the rule's children are tokens (opaque: ask the
    kit) and nodes already built."""

    def span(self, children: Sequence[Any]) -> Span: ...

    def token_span(self, token: Any) -> Span: ...

    def kind(self, token: Any) -> str:
        """The terminal a token is (`"CMP_OP"`, `"PATH"`, …); "" for a node."""
        ...

    def text(self, token: Any) -> str: ...

    def string(self, token: Any) -> str:
        """A string literal's decoded text."""
        ...

    def integer(self, token: Any) -> int:
        """An INT token's value (one out of range is reported, and stands as 1)."""
        ...

    def name(self, token: Any) -> str:
        """A name, bare or quoted."""
        ...

    def literal(self, item: Any) -> ast.Value:
        """The value a literal token (or a list or object already built) stands for."""
        ...


class CheckContext(Protocol):
    """What the checker gives a check rule: its environment and its reporting."""

    @property
    def source_kind(self) -> SourceKind | None: ...

    @property
    def source_word(self) -> str | None: ...

    def error(
        self, span: Span, code: str, message: str, hint: str | None = None, fix: Fixing = None
    ) -> None:
        """Report a problem (`fix`: the hint as an edit, the span's text replaced)."""
        ...

    def never(self, span: Span, outcome: Never, why: str, hint: str | None = None) -> None:
        """Report an assertion that can never have `outcome` ("fail": W601, "pass":
        W602) because of `why` (the checker turns it round under `not`)."""
        ...

    def text(self, span: Span) -> str:
        """The text a span of the assertion's source covers."""
        ...

    def value(
        self,
        value: ast.Value,
        stype: Type,
        subject: ast.Subject,
        subject_text: str,
        *,
        whole: bool,
    ) -> None:
        """Check a literal against what the subject holds (`whole`: the value itself, not
        an element of it)."""
        ...

    def path(self, text: str, span: Span) -> None: ...

    def regex(self, regex: ast.Regex) -> None: ...

    def tool_name(self, name: str, span: Span, *, recorded: bool) -> None: ...

    def forbidden_tool(self, name: str, span: Span) -> None: ...

    def predicate(
        self, pred: ast.Predicate, stype: Type, subject: ast.Subject, subject_text: str
    ) -> None:
        """Check a nested predicate (the test of `args`/`result`)."""
        ...


class CompileContext(Protocol):
    """What the compiler gives a compile rule: what the case needs from its run, the judge,
    subject readers and value tests."""

    @property
    def needs(self) -> Needs: ...

    def ask_judge(self) -> Judge:
        """The judge, for a rule whose checks ask it (the case is noted as judged)."""
        ...

    @property
    def judge_model(self) -> str | None: ...

    def text(self, span: Span) -> str: ...

    def subject(self, subject: ast.Subject) -> SubjectReader: ...

    def value_test(self, pred: ast.Predicate, stype: Type) -> ValueTest: ...

    def expected(self, pred: ast.Predicate) -> Any: ...

    def fragment(self, pred: ast.Predicate, stype: Type) -> Callable[[Any], str | None]:
        """The predicate's code fragment, made when a generated pass is (given that
        pass's `FragmentContext`)."""
        ...


class FragmentContext(Protocol):
    """What the code generator gives a fragment rule: a name in the generated function's
    namespace for each value the fragment needs. Values never enter the source text."""

    def const(self, value: Any) -> str:
        """The name the generated code reads `value` by (a literal, a compiled regex, a
        helper function)."""
        ...


#: A value test as Python source: an expression over the value `v` (its helpers and
#: constants named through the context), or None where this node has no fragment and
#: the generated code calls the family's `value_test` closure instead.
FragmentRule = Callable[[FragmentContext, Any, Type], "str | None"]


class Printer(Protocol):
    """What the formatter gives a print rule."""

    def value(self, value: ast.Value, indent: str) -> str: ...

    def quote(self, text: str) -> str: ...

    def name(self, name: str) -> str: ...

    def predicate(self, pred: ast.Predicate, indent: str) -> str:
        """Print a nested predicate (the test of `args`/`result`)."""
        ...

    def number(self, value: float, span: Span) -> str:
        """A number as the source wrote it within `span` (`0.70` stays `0.70`)."""
        ...


def plural(n: int, one: str, many: str) -> str:
    """`1 time`, `2 times`: printed forms say the singular for one."""
    return f"{n} {one if n == 1 else many}"


# ---- the family record ---------------------------------------------------------------------

BuildRule = Callable[[Any, list[Any]], Any]  # (kit, children) → node; the kit is the parser's


def _never_forbids(pred: Any) -> bool:
    return False


@attrs.frozen
class Family:
    """One family of predicates, fully described: every stage reads its part here.

    `value_test` is for predicates that test one value (the subject's, or each value a
    path finds); `compile` for those that read the run themselves (call counts, call
    tests, the judge, citations, the budget). `forbids` tells the checker the predicate
    says a tool must not be called (its name is then not checked against the recording).

    `names_test` (for `contains`, list tests) tests a list of names through its index,
    made once per run for every test of it (`nameindex.py`): the same answer as
    `value_test`, without a walk of the list per test (None: the closure walks it).

    `fragment` is the family's part of a generated checker (`runs/codegen.py`): the
    value test as a Python expression, inlined where the generated pass tests each call's
    arguments or result. Every family states it: a rule (which may still answer None for
    one node), or None for a family without one (those that read the run themselves are
    never a test of one value); the generated code then calls the family's closure, and
    says so in a comment.
    """

    name: str
    nodes: tuple[type, ...]
    entries: tuple[PredicateSpec, ...]
    rules: Mapping[str, BuildRule]
    key: Callable[[Any], str]
    check: Callable[[CheckContext, Any, Type, ast.Subject, str], None]
    print: Callable[[Printer, Any, str], str]
    expected: Callable[[Any], Any]
    fragment: FragmentRule | None
    value_test: Callable[[Any, Type], ValueTest] | None = None
    compile: Callable[[CompileContext, ast.Check], Checker] | None = None
    forbids: Callable[[Any], bool] = _never_forbids
    names_test: Callable[[Any], NamesTest | None] | None = None
