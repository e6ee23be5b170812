"""Completion offers a predicate word after a subject exactly when the checker takes it:
each subject, each word the grammar accepts after it, against `diagnose` of the statements
the vocabulary's own examples make with that word (E201: does not apply). The same for
`true`, `false` and `null` (E205), the header's lines in a case (E206) and names as they
are inserted (quoted where they are no bare word); nothing in a comment."""

from __future__ import annotations

import re

import pytest

from evaldsl.api import diagnose
from evaldsl.predicates.registry import PREDICATES
from evaldsl.syntax.grammar import spellings
from evaldsl.syntax.tokens import next_terminals
from evaldsl.tools.lsp.analysis import Analysis
from evaldsl.tools.lsp.completion import Offer, completions_at
from evaldsl.tools.lsp.fits import fit
from evaldsl.tools.lsp.hover import hover_at

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


# ---- values, header lines, names and comments: offered only where the checker takes them

_HEAD = 'tools get_weather, "get-weather", "github.create_issue", "天气"\nnodes a, "b.c"\n'
_CASE = 'case "w"\n  run agents.weather:run\n'


def _offers(text: str) -> list[Offer]:
    """What completion offers at the end of `text` (a `.eval` buffer)."""
    lines = text.split("\n")
    return completions_at(Analysis(text, "t.eval", "eval"), len(lines) - 1, len(lines[-1]))


def _codes(text: str) -> set[str]:
    *_, found = diagnose(text, "t.eval")
    return {d.code for d in found}


@pytest.mark.parametrize(
    "head",
    [
        "answer contains ",
        "answer == ",
        "latency < ",
        "status == ",
        "tools only [",
        "tools contains all [",
        "answer json $.a == ",
        "tool get_weather args $.a == ",
        "memory.a == ",
        'answer contains "x" or tokens > ',
    ],
)
def test_true_false_and_null_are_offered_exactly_where_the_checker_takes_them(head: str) -> None:
    offered = {o.label for o in _offers(f"{_HEAD}{_CASE}  {head}")}
    for word in ("true", "false", "null"):
        closed = head + word + ("]" if head.endswith("[") else "")
        refused = "E205" in _codes(f"{_HEAD}{_CASE}  {closed}\n")
        assert (word in offered) == (not refused), (head, word)


@pytest.mark.parametrize(
    ("line", "word"),
    [('suite "x"', "suite"), ('judge model "m"', "judge"), ("tools get_weather", None)],
)
def test_the_headers_lines_are_not_offered_in_a_case(line: str, word: str | None) -> None:
    assert "E206" in _codes(f"{_HEAD}{_CASE}  {line}\n")  # what the checker says
    assert "E206" not in _codes(f"{_HEAD}{line}\n{_CASE}  answer contains 'x'\n")
    in_case = {o.label for o in _offers(f"{_HEAD}{_CASE}  ")}
    in_header = {o.label for o in _offers(f"{_HEAD}")}
    if word is not None:
        assert word not in in_case and word in in_header
    # `tools` (a subject too) is offered; after it, in a case, no name (a declaration)
    after_tools = {o.label for o in _offers(f"{_HEAD}{_CASE}  tools ")}
    assert "get_weather" not in after_tools and "contains" in after_tools
    assert "get_weather" in {o.label for o in _offers(f"{_HEAD}{_CASE}  tools contains ")}
    assert "get_weather" in {o.label for o in _offers(f"{_HEAD}tools ")}  # (the header)


def test_a_name_that_is_no_bare_word_is_inserted_quoted_as_the_checker_reads_it() -> None:
    offers = {o.label: o for o in _offers(f"{_HEAD}{_CASE}  tool ")}
    nodes = {o.label: o for o in _offers(f"{_HEAD}{_CASE}  node ")}
    inserted = {
        name: offer.insert or offer.label
        for name, offer in [*offers.items(), *nodes.items()]
        if offer.rank == 0
    }
    assert inserted == {
        "get_weather": "get_weather",
        "get-weather": '"get-weather"',
        "github.create_issue": '"github.create_issue"',
        "天气": '"天气"',
        "a": "a",
        "b.c": '"b.c"',
    }
    for name, text in inserted.items():
        statement = f"node {text} visited" if name in nodes else f"tool {text} called"
        assert not _codes(f"{_HEAD}{_CASE}  {statement}\n"), statement


@pytest.mark.parametrize("line", ["  # tool ", '  answer contains "x"  # called '])
def test_nothing_is_offered_or_shown_in_a_comment(line: str) -> None:
    text = f"{_HEAD}{_CASE}{line}"
    assert _offers(text) == []
    analysis = Analysis(text, "t.eval", "eval")
    lines = text.split("\n")
    assert hover_at(analysis, len(lines) - 1, len(lines[-1]) - 3) is None
    # (the same word outside the comment is shown)
    assert hover_at(Analysis(f"{_CASE}  tool x called", "t.eval", "eval"), 2, 9) is not None
