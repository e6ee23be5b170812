"""The predicate table is complete: every member of the AST's predicate union has one
family with every part (vocabulary entry, build rule, check rule, compiled form, printed
form), each entry's example goes through every stage, and a missing piece is an error
that names it — never a `None` found at run time."""

from __future__ import annotations

import typing
from pathlib import Path

import attrs
import pytest

import evaldsl
from evaldsl.format.formatter import canonical_statement
from evaldsl.language import ast
from evaldsl.predicates import registry
from evaldsl.predicates.registry import FAMILIES, PREDICATES, RULES, RegistryError
from evaldsl.syntax.build import MissingRule, check_rules, grammar_rules
from evaldsl.syntax.grammar import grammar_text
from evaldsl.syntax.parser import parse
from tests.clitools import fresh_python, last_json


def test_every_member_of_the_predicate_union_has_one_family() -> None:
    members = set(typing.get_args(ast.Predicate))
    claimed = [node for family in FAMILIES for node in family.nodes]
    assert sorted(n.__name__ for n in claimed) == sorted(n.__name__ for n in members)
    for family in FAMILIES:
        assert family.entries, family.name
        assert family.rules, family.name
        assert (family.compile is None) != (family.value_test is None), family.name


def test_a_family_left_out_is_an_error_naming_the_node() -> None:
    without = tuple(f for f in FAMILIES if ast.Cites not in f.nodes)
    with pytest.raises(RegistryError, match="Cites"):
        registry.index_families(without)


def test_a_node_claimed_twice_is_an_error() -> None:
    twice = (*FAMILIES, attrs.evolve(FAMILIES[0], name="copy"))
    with pytest.raises(RegistryError, match="claimed by"):
        registry.index_families(twice)


def test_a_family_without_a_compiled_form_is_an_error() -> None:
    broken = tuple(
        attrs.evolve(f, value_test=None) if f.value_test is not None else f for f in FAMILIES
    )
    with pytest.raises(RegistryError, match="exactly one of a value test and a compile rule"):
        registry.index_families(broken)


def test_every_grammar_rule_is_built() -> None:
    rules = grammar_rules(grammar_text())
    assert set(RULES) <= rules, "a family builds a rule the grammar does not have"
    check_rules(grammar_text())  # every rule has a callback


def test_the_rules_checked_at_import_are_the_grammars_and_kept_between_starts(
    tmp_path: Path,
) -> None:
    # the import-time check reads the grammar's rules from the cache file after the first
    # start; what it reads there is what `grammar_rules` finds, and a grammar edited since
    # is read again (its text is the key)
    code = (
        "import json\nfrom evaldsl.cache import compiled\n"
        "from evaldsl.syntax.build import grammar_rules, known_rules\n"
        "from evaldsl.syntax.grammar import grammar_text\n"
        "made = compiled.compiled_this_process()\n"
        "edited = grammar_text() + '\\nextra_rule_for_the_test: NAME\\n'\n"
        "print(json.dumps({'compiled': made, 'same': known_rules(grammar_text()) == "
        "grammar_rules(grammar_text()), 'edited': 'extra_rule_for_the_test' in "
        "known_rules(edited)}))\n"
    )
    fresh_python(code, tmp_path)  # (the first start fills the cache file)
    again = last_json(fresh_python(code, tmp_path))
    assert again == {"compiled": 0, "same": True, "edited": True}


def test_a_grammar_rule_without_a_build_callback_is_an_error_naming_it() -> None:
    grammar = grammar_text().replace(
        '| "within" "budget"                     -> within_budget',
        '| "within" "budget"                     -> within_budget\n'
        '          | "is" "uuid"                  -> is_uuid_unbuilt',
    )
    assert "is_uuid_unbuilt" in grammar
    with pytest.raises(MissingRule, match="`is_uuid_unbuilt`"):
        check_rules(grammar)


@pytest.mark.parametrize("name", sorted(PREDICATES))
def test_each_entry_example_goes_through_every_stage(name: str) -> None:
    spec = PREDICATES[name]
    parsed = parse(spec.example)
    assert parsed.diagnostics == (), spec.example
    (check,) = parsed.program.statements
    assert isinstance(check, ast.Check)
    # the example is an example of this entry
    assert registry.predicate_key(check.predicate) == name
    # it checks (a judge example needs no key to compile) and compiles
    program = evaldsl.compile(spec.example)
    assert len(program.cases[0].assertions) == 1
    # it prints back as written: the family's printed form is the canonical one
    assert canonical_statement(spec.example) == spec.example


def test_the_grammar_knows_the_json_types_the_ast_declares() -> None:
    import re

    terminal = re.search(r"^JSON_TYPE[^:]*:\s*/\((.*?)\)", grammar_text(), re.M)
    assert terminal is not None
    assert tuple(terminal.group(1).split("|")) == ast.JSON_TYPES
