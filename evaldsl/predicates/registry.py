"""The predicate table: every family, and the lookups every stage makes in it.

Takes the family modules of this package and gives one table: `FAMILIES`, the vocabulary
entries (`PREDICATES`), the parser's build rules (`RULES`), and per node the family
(`family_of`), its entry (`predicate_key`), its value test (`value_test`) and what it
expects (`expected`). The table is checked when it is built: every member of the AST's
`Predicate` union has exactly one family, every entry and rule name is declared once, and
every family can check, print and compile what it declares, and states its part of a
generated checker (a code fragment, or none). A missing piece is an
`ImportError` naming it, never a `None` found at run time.
"""

from __future__ import annotations

import typing
from typing import Any

from evaldsl.language import ast
from evaldsl.language.vocabulary import PredicateSpec, Type
from evaldsl.predicates import (
    budget,
    calls,
    cites,
    compare,
    contains,
    counts,
    emptiness,
    exists,
    json_text,
    judge,
    keys,
    lists,
    text,
    types,
)
from evaldsl.predicates.base import BuildRule, Family, FragmentContext, ValueTest
from evaldsl.predicates.nameindex import NamesTest

FAMILIES: tuple[Family, ...] = (
    counts.FAMILY,
    calls.FAMILY,
    compare.FAMILY,
    contains.FAMILY,
    lists.FAMILY,
    emptiness.FAMILY,
    exists.FAMILY,
    types.FAMILY,
    text.EDGES,
    text.MATCHES,
    json_text.FAMILY,
    keys.FAMILY,
    judge.FAMILY,
    budget.FAMILY,
    cites.FAMILY,
)


class RegistryError(ImportError):
    """The predicate table is incomplete or ambiguous (a bug in a family module)."""


def index_families(families: tuple[Family, ...]) -> dict[type, Family]:
    """Each AST predicate class with its family; `RegistryError` naming what is missing,
    claimed twice or incomplete."""
    table: dict[type, Family] = {}
    for family in families:
        for node in family.nodes:
            if node in table:
                raise RegistryError(
                    f"{node.__name__} is claimed by the {table[node].name!r} and "
                    f"{family.name!r} families"
                )
            table[node] = family
    members = set(typing.get_args(ast.Predicate))
    missing = sorted(n.__name__ for n in members - table.keys())
    if missing:
        raise RegistryError(
            "no predicate family declares " + ", ".join(missing) + " (add a module to "
            "evaldsl/predicates/ and list its FAMILY in registry.py)"
        )
    extra = sorted(n.__name__ for n in table.keys() - members)
    if extra:
        raise RegistryError(", ".join(extra) + " is not in ast.Predicate")
    for family in families:
        if (family.compile is None) == (family.value_test is None):
            raise RegistryError(
                f"the {family.name!r} family needs exactly one of a value test and a compile rule"
            )
        if family.compile is not None and family.fragment is not None:
            raise RegistryError(
                f"the {family.name!r} family reads the run itself: a code fragment (a test "
                "of one value) would never be used; declare fragment=None"
            )
    return table


def _unique(pairs: list[tuple[str, Any]], what: str) -> dict[str, Any]:
    table: dict[str, Any] = {}
    for name, item in pairs:
        if name in table:
            raise RegistryError(f"the {what} {name!r} is declared twice")
        table[name] = item
    return table


#: The family of each predicate node class, by exact type (AST node classes have no
#: subclasses): the checker and compiler read it in place, once a statement each.
FAMILY_OF: dict[type, Family] = index_families(FAMILIES)

#: Every predicate's vocabulary entry, by name, in the order `evaldsl vocabulary` lists them.
PREDICATES: dict[str, PredicateSpec] = _unique(
    [(e.name, e) for f in FAMILIES for e in f.entries], "predicate"
)

#: The parser's build rule for each grammar rule (alias) that makes a predicate node.
RULES: dict[str, BuildRule] = _unique(
    [(rule, build) for f in FAMILIES for rule, build in f.rules.items()], "build rule"
)


def family_of(pred: ast.Predicate) -> Family:
    """The family a predicate node belongs to."""
    return FAMILY_OF[type(pred)]


def predicate_key(pred: ast.Predicate) -> str:
    """The vocabulary entry of a predicate node: `called`, `contains_all`, …"""
    return FAMILY_OF[type(pred)].key(pred)


def value_test(pred: ast.Predicate, stype: Type) -> ValueTest:
    """The compiled test of one value for a value predicate."""
    test = FAMILY_OF[type(pred)].value_test
    if test is None:
        raise AssertionError(f"{type(pred).__name__} is not a value test")
    return test(pred, stype)


def names_test(pred: ast.Predicate) -> NamesTest | None:
    """A predicate's test of a list of names through its index, or None where its family
    has none for this node (its value test walks the list)."""
    rule = FAMILY_OF[type(pred)].names_test
    return None if rule is None else rule(pred)


def fragment(ctx: FragmentContext, pred: ast.Predicate, stype: Type) -> str | None:
    """A value predicate's test as Python source over `v`, or None where its family has
    none for this node (the generated code then calls `value_test`'s closure)."""
    rule = FAMILY_OF[type(pred)].fragment
    return None if rule is None else rule(ctx, pred, stype)


def expected(pred: ast.Predicate) -> Any:
    """What a predicate expects, as reports show it (`"exactly 2"`, `"Xiamen"`)."""
    return FAMILY_OF[type(pred)].expected(pred)
