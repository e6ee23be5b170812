"""The index of a list of names (`predicates/nameindex.py`): the list tests of `tools` and
`nodes` read through it answer what their closures answer, and a case's tests together
say what each says alone."""

from __future__ import annotations

from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

import evaldsl
from evaldsl import Run
from evaldsl.compile.evaluate import evaluate_all
from evaldsl.language import ast
from evaldsl.predicates import registry
from evaldsl.predicates.nameindex import NameIndex
from evaldsl.runs.index import index_run
from evaldsl.syntax.parser import parse
from tests.fuzzing import examples

NAMES = ["search", "fetch", "plan", "x"]

names = st.sampled_from(NAMES)
name_lists = st.lists(names, max_size=4).map(lambda xs: "[" + ", ".join(xs) + "]")
list_tests = st.one_of(
    names.map(lambda n: f"contains {n}"),
    name_lists.map(lambda xs: f"contains all {xs}"),
    name_lists.map(lambda xs: f"contains any {xs}"),
    name_lists.map(lambda xs: f"only {xs}"),
    name_lists.map(lambda xs: f"in order {xs}"),
)


def _predicate(statement: str) -> Any:
    (node,) = parse(statement, "<t>").program.statements
    assert isinstance(node, ast.Check)
    return node.predicate


@settings(max_examples=examples(400), deadline=None)
@given(list_tests, st.lists(names, max_size=12))
@example("in order [search, search]", ["search", "fetch", "search"])
@example("in order [search, search]", ["search", "fetch"])
@example("in order [fetch, search]", ["search", "fetch"])
def test_a_test_through_the_index_answers_as_its_closure(test: str, seen: list[str]) -> None:
    pred = _predicate(f"tools {test}")
    through_index = registry.names_test(pred)
    assert through_index is not None
    closure = registry.value_test(pred, "Names")
    assert through_index(NameIndex(seen)) == closure(seen)


@settings(max_examples=examples(150), deadline=None)
@given(st.lists(list_tests, min_size=1, max_size=8), st.lists(names, max_size=12))
def test_tests_of_one_list_together_say_what_each_says_alone(
    tests: list[str], seen: list[str]
) -> None:
    """`tools` and `nodes` are each indexed once per run (`RunFacts.shared`, by subject):
    a case's tests of both say what each says alone."""
    events = [{"type": "tool.call", "name": n} for n in seen]
    state = {"status": "completed", "visited_nodes": list(reversed(seen))}
    statements = [f"{subject} {t}" for t in tests for subject in ("tools", "nodes")]

    def said(text: str, run: Run) -> list[Any]:
        result = evaldsl.compile(text).cases[0].check(run)
        return [(v.status, v.message, v.actual) for v in result.verdicts]

    for run, subject in ((Run(events=events), "tools"), (Run(events=None, state=state), "nodes")):
        mine = [s for s in statements if s.startswith(subject)]
        together = said("\n".join(mine), run)
        assert together == [v for s in mine for v in said(s, run)]


def test_a_list_with_anything_but_texts_is_walked_by_the_closures() -> None:
    """A state's `visited_nodes` holding a number or a list has no index: its tests walk
    it as the closures do (a `1` is no name, a list no text). (Such a state, from a file,
    a target or `check(Run(...))`, is the run's error: indexed here directly.)"""
    state = {"status": "completed", "visited_nodes": ["plan", 1, ["x"], "fetch"]}
    text = "nodes contains plan\nnodes in order [plan, fetch]\nnodes only [plan, fetch]"
    case = evaldsl.compile(text).cases[0]
    facts = index_run(Run(events=None, state=state), case.needs)
    assert [v.status for v in evaluate_all(case.assertions, facts)] == ["pass", "pass", "fail"]
    assert case.check(Run(events=None, state=state)).statuses == ["error"] * 3


class _Text(str):
    """A text of a subclass (as a `StrEnum` a live target returns): it equals and hashes
    as the text it holds."""

    __slots__ = ()


class _Rehashed(str):
    """A text that equals the text it holds but hashes otherwise: a set cannot find it by
    that text, where a walk of the list does."""

    __slots__ = ()

    def __hash__(self) -> int:
        return hash(("rehashed", str(self)))

    def __eq__(self, other: object) -> bool:
        return str.__eq__(self, other)


elements = st.one_of(
    names,
    names.map(_Text),
    names.map(_Rehashed),
    st.sampled_from([1, None, True, ["x"]]),
)


@settings(max_examples=examples(300), deadline=None)
@given(st.lists(list_tests, min_size=3, max_size=6), st.lists(elements, max_size=8))
@example(["contains x", "contains x", "contains x"], ["plan", _Rehashed("x")])
@example(["only [x]", "only [x]", "only [x]"], ["x", _Text("x"), 1])
def test_a_list_of_other_values_is_indexed_only_where_the_index_answers_as_the_walk(
    tests: list[str], seen: list[Any]
) -> None:
    """A state's `visited_nodes` holding other values than exact texts (texts of a
    subclass, one hashed otherwise, numbers, a list): its tests together (three or more,
    read through the index when it has one) say what each says alone (walking it)."""
    state = {"status": "completed", "visited_nodes": seen}
    statements = [f"nodes {t}" for t in tests]

    def said(text: str) -> list[Any]:
        result = evaldsl.compile(text).cases[0].check(Run(events=None, state=state))
        return [(v.status, v.message, v.actual) for v in result.verdicts]

    assert said("\n".join(statements)) == [v for s in statements for v in said(s)]
