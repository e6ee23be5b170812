"""Completion offers a predicate word after a subject exactly when the checker takes it:
each subject, each word the grammar accepts after it, against `diagnose` of the statements
the vocabulary's own examples make with that word (E201: does not apply)."""

from __future__ import annotations

import re

import pytest

from evaldsl.api import diagnose
from evaldsl.predicates.registry import PREDICATES
from evaldsl.syntax.grammar import spellings
from evaldsl.syntax.tokens import next_terminals
from evaldsl.tools.lsp.fits import fit

SUBJECTS = [
    "answer",
    "answer[2]",
    "answer[-1]",
    "answer json",
    "answer json $.x",
    "output",
    'output.a["b"]',
    "memory",
    "memory.a",
    "state.x",
    "status",
    "nodes",
    "tools",
    "tool get_weather",
    'tool "get weather"',
    "every tool get_weather",
    "tokens",
    "input tokens",
    "output tokens",
    "steps",
    "tool calls",
    "guards",
    "errors",
    "latency",
    "cost",
    "budget",
    "tool get_weather args",
    "tool get_weather args $.city",
    "tool get_weather result $.a[0]",
]

# the subject at the head of each vocabulary example
_EXAMPLE_SUBJECT = re.compile(
    r"^(tool \w+|answer json \$\S+|answer|tokens|tools|status|nodes|memory(\.\w+)?)\s"
)


def _parts() -> dict[str, list[str]]:
    """Each predicate word that begins a predicate, with the predicate texts (the
    vocabulary's examples less their subject) that begin with it; `==` for comparisons."""
    parts: dict[str, list[str]] = {}
    for spec in PREDICATES.values():
        head = _EXAMPLE_SUBJECT.match(spec.example)
        assert head is not None, spec.example
        part = spec.example[head.end() :]
        first = spec.words[0] if spec.words else part.split()[0]
        parts.setdefault(first, []).append(part)
    return parts


def _does_not_apply(statement: str) -> bool | None:
    """True: E201 (the predicate does not apply); False: it applies; None: the statement
    does not parse."""
    *_, found = diagnose(statement, "t.eval")
    if any(d.code.startswith("E1") for d in found):
        return None
    return any(d.code == "E201" for d in found)


@pytest.mark.parametrize("subject", SUBJECTS)
def test_a_predicate_word_is_offered_exactly_when_the_checker_takes_it(subject: str) -> None:
    lexed = next_terminals(subject + " ", "statements")
    assert lexed is not None
    tokens, accepts = lexed
    fits = fit(tokens)
    assert fits is not None, subject
    spell = spellings()
    words = {spell[a] for a in accepts if a in spell}
    checked = 0
    for word, parts in _parts().items():
        if word not in words:
            continue  # (comparisons below)
        verdicts = [_does_not_apply(f"{subject} {part}") for part in parts]
        known = [v for v in verdicts if v is not None]
        if known:
            assert fits.word(word) == (not all(known)), (subject, word, parts, verdicts)
            checked += 1
    if "CMP_OP" in accepts:
        for op in ("==", "!=", "<", ">="):
            # a value of the wrong kind is another error (E202: give it a unit): only
            # E201 says the operator does not apply
            refused = _does_not_apply(f"{subject} {op} 1")
            assert refused is not None, (subject, op)
            assert fits.comparison(op) == (not refused), (subject, op)
            checked += 1
    assert checked >= 2, subject


def test_words_that_go_on_a_predicate_are_kept() -> None:
    for head, kept in [
        ("tool x called ", {"once", "twice", "at", "between"}),
        ("answer contains ", {"all", "any"}),
        ("tools in ", {"order"}),
        ("answer cites tool x ", {"at"}),
        ("tool x never ", {"called"}),
    ]:
        lexed = next_terminals(head, "statements")
        assert lexed is not None
        tokens, accepts = lexed
        fits = fit(tokens)
        spell = spellings()
        offered = {
            spell[a] for a in accepts if a in spell and (fits is None or fits.word(spell[a]))
        }
        assert kept <= offered, head


def test_what_is_not_a_subject_followed_by_words_is_not_filtered() -> None:
    lexed = next_terminals('answer judged "x" ', "statements")
    assert lexed is not None
    assert fit(lexed[0]) is None
