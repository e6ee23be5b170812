"""Completion: what may come at the cursor.

Takes an `Analysis` and a cursor and gives `Offer`s: the words the grammar accepts next
(keywords with their vocabulary docs, comparison operators, JSON types), and names from
the case: tool names its cassette calls or its `tools` line declares, nodes and memory
keys of its state, statuses. What the checker would refuse is not offered: `true`,
`false` and `null` where a value of their type is E205, the header's lines inside a case
(E206); a name that is no bare word is inserted quoted. Nothing is offered in a comment.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from lsprotocol import types

from evaldsl.api import diagnose
from evaldsl.format.formatter import quote
from evaldsl.language.ast import JSON_TYPES
from evaldsl.language.vocabulary import STATUS_VALUES
from evaldsl.suites.yamlplaces import requoted
from evaldsl.syntax.grammar import spellings
from evaldsl.syntax.literals import decode_string
from evaldsl.syntax.tokens import Token, next_terminals
from evaldsl.tools.lsp.analysis import Analysis
from evaldsl.tools.lsp.fits import fit
from evaldsl.vocabulary import describe

_CMP_OPS = ("==", "!=", "<", "<=", ">", ">=")
_WORD_END = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_IN_PATH = re.compile(r"\$\S*\Z")  # the cursor is inside a JSONPath
_BARE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")  # a name written without quotes
_LITERALS = frozenset({"TRUE", "FALSE", "NULL"})
_CLOSING = {"LSQB": "]", "LBRACE": "}", "LPAR": ")"}
# the header's lines (`syntax/outline.py`, E206 in a case); `tools NAME` and `nodes NAME`
# begin with a subject's word, and lose their names instead
_HEADER_WORDS = frozenset({"suite", "judge"})


@dataclass
class Offer:
    """One completion: its label, kind, a short detail and the markdown doc."""

    label: str
    kind: types.CompletionItemKind
    detail: str | None = None
    doc: str | None = None
    rank: int = 1  # 0: names from the case's files, 1: keywords, 2: operators
    insert: str | None = None  # the text inserted, when it is not the label


def _name_offer(name: str, kind: types.CompletionItemKind, detail: str) -> Offer:
    """A tool's or node's name, inserted as the checker reads it: quoted unless it is a
    bare word (`get-weather`, `github.create_issue`, `天气` are written in quotes)."""
    return Offer(
        name, kind, detail, rank=0, insert=None if _BARE_NAME.fullmatch(name) else quote(name)
    )


def _term_tokens(tokens: Sequence[Token]) -> list[Token]:
    """The tokens of the last `and`/`or`/`not`/`(` term of a statement."""
    cut = 0
    for i, tok in enumerate(tokens):
        if tok.kind in ("AND", "OR", "LPAR") or (
            tok.kind == "NOT" and (i == 0 or tokens[i - 1].kind in ("AND", "OR", "LPAR", "NOT"))
        ):
            cut = i + 1
    return list(tokens[cut:])


def _walk(value: Any, chain: Sequence[Token]) -> Any:
    """Follow `.key`, `["key"]`, `[0]` accessor tokens from a JSON value (None when lost)."""
    i = 0
    while i < len(chain) and value is not None:
        tok = chain[i]
        if tok.kind == "DOT" and i + 1 < len(chain) and chain[i + 1].kind == "NAME":
            value = value.get(chain[i + 1].text) if isinstance(value, dict) else None
            i += 2
        elif tok.kind == "LSQB" and i + 2 < len(chain) and chain[i + 2].kind == "RSQB":
            key = chain[i + 1]
            if key.kind == "STRING" and isinstance(value, dict):
                value = value.get(decode_string(key.text))
            elif key.kind == "INT" and isinstance(value, list):
                n = int(key.text)
                value = value[n] if -len(value) <= n < len(value) else None
            else:
                value = None
            i += 3
        else:
            return None
    return value


def _tool_offers(analysis: Analysis, case: int | None) -> list[Offer]:
    offers: dict[str, Offer] = {}
    for raw, facts in analysis.sources(case):
        for name, n in sorted((facts.tools or {}).items()):
            detail = (
                f"called {n} time{'s' if n != 1 else ''} in {raw}" if facts.counted else f"in {raw}"
            )
            offers.setdefault(name, _name_offer(name, types.CompletionItemKind.Function, detail))
    for name in sorted(analysis.draft.tools or ()):
        offers.setdefault(
            name, _name_offer(name, types.CompletionItemKind.Function, "declared in `tools`")
        )
    return list(offers.values())


def _states(analysis: Analysis, case: int | None) -> list[tuple[str, dict[str, Any]]]:
    return [(raw, f.state) for raw, f in analysis.sources(case) if f.state is not None]


def _node_offers(analysis: Analysis, case: int | None) -> list[Offer]:
    offers: dict[str, Offer] = {}
    for raw, state in _states(analysis, case):
        visited = state.get("visited_nodes")
        for name in visited if isinstance(visited, list) else ():
            if isinstance(name, str):
                offers.setdefault(
                    name, _name_offer(name, types.CompletionItemKind.Module, f"visited in {raw}")
                )
    for name in sorted(analysis.draft.nodes or ()):
        offers.setdefault(
            name, _name_offer(name, types.CompletionItemKind.Module, "declared in `nodes`")
        )
    return list(offers.values())


def _key_offers(
    analysis: Analysis, case: int | None, root: str, accessors: Sequence[Token]
) -> list[Offer]:
    offers: dict[str, Offer] = {}
    for raw, state in _states(analysis, case):
        value = _walk(state.get("memory") if root == "memory" else state, accessors)
        if isinstance(value, dict):
            for key in value:
                if isinstance(key, str) and key not in offers and _WORD.fullmatch(key):
                    offers[key] = Offer(
                        key, types.CompletionItemKind.Field, f"{root} key in {raw}", rank=0
                    )
    return list(offers.values())


def _status_offers(analysis: Analysis, case: int | None) -> list[Offer]:
    actual = {
        str(state.get("status")): raw
        for raw, state in _states(analysis, case)
        if isinstance(state.get("status"), str)
    }
    return [
        Offer(
            v,
            types.CompletionItemKind.EnumMember,
            f"the status in {actual[v]}" if v in actual else "a status",
            rank=0,
        )
        for v in STATUS_VALUES
    ]


def _name_offers(
    analysis: Analysis, case: int | None, tokens: Sequence[Token], in_case: bool
) -> list[Offer]:
    """The names that fit where the grammar accepts a NAME, read from the term so far
    (none after `tools ` or `nodes ` in a case: a declaration there is E206)."""
    term = _term_tokens(tokens)
    if not term or (in_case and len(tokens) == 1 and term[0].kind in ("TOOLS", "NODES")):
        return []
    first, last = term[0].kind, term[-1].kind
    if last == "TOOL":  # tool NAME, no tool NAME, every tool NAME, cites tool NAME
        return _tool_offers(analysis, case)
    if last == "NODE":
        return _node_offers(analysis, case)
    if first == "TOOLS":
        return _tool_offers(analysis, case)
    if first == "NODES":
        return _node_offers(analysis, case)
    if first == "STATUS":
        return _status_offers(analysis, case)
    if first in ("MEMORY", "STATE") and last in ("DOT", "HAS"):
        # memory.a.  memory.a has  state.  state.x.  : keys of the value the chain reaches
        return _key_offers(analysis, case, first.lower(), term[1:-1])
    return []


def _literal_fits(head: str, term: Sequence[Token], word: str, start: str) -> bool:
    """Whether the checker takes `true`, `false` or `null` after the term being written
    (`answer contains true` is E205: it takes text): the term with the word and the
    brackets it leaves open closed, checked. A term that does not parse so is kept."""
    if not term:
        return True
    closers = []
    for tok in term:
        if tok.kind in _CLOSING:
            closers.append(_CLOSING[tok.kind])
        elif tok.kind in ("RSQB", "RBRACE", "RPAR") and closers:
            closers.pop()
    text = f"{head[term[0].start :]}{word}{''.join(reversed(closers))}"
    *_, found = diagnose(text, start="statements")
    return not any(d.code == "E205" for d in found)


def completions_at(analysis: Analysis, line0: int, column0: int) -> list[Offer]:
    """What may come at the cursor: the grammar's next words, and names from the case."""
    spot = analysis.spot(line0, column0)
    if spot is None or spot.in_comment():
        return []
    prefix = spot.text[: spot.offset]
    partial = _WORD_END.search(prefix)
    head = prefix[: partial.start()] if partial else prefix
    if _IN_PATH.search(head):
        return []
    lexed = next_terminals(head, spot.start)
    if lexed is None:
        return []  # the statement is already wrong before the cursor (or in a string)
    tokens, accepts = lexed
    spell = spellings()
    offers: list[Offer] = []
    in_case = analysis.in_case(spot.line0)
    if accepts & {"NAME", "STRING"}:
        offers.extend(_name_offers(analysis, spot.case, tokens, in_case))
    # the words that fit the subject's type (`answer ` is not followed by `called`)
    term = _term_tokens(tokens)
    fits = fit(term)
    for name in sorted(accepts):
        word = spell.get(name)
        if word is None or not word.isalpha() or (fits is not None and not fits.word(word)):
            continue
        if (name in _LITERALS and not _literal_fits(head, term, word, spot.start)) or (
            in_case and not tokens and word in _HEADER_WORDS
        ):
            continue
        offers.append(Offer(word, types.CompletionItemKind.Keyword, doc=describe(word)))
    if "CMP_OP" in accepts:
        offers.extend(
            Offer(op, types.CompletionItemKind.Operator, rank=2)
            for op in _CMP_OPS
            if fits is None or fits.comparison(op)
        )
    if "JSON_TYPE" in accepts and (fits is None or fits.json_type()):
        offers.extend(
            Offer(t, types.CompletionItemKind.TypeParameter, "a JSON type") for t in JSON_TYPES
        )
    seen: set[str] = set()
    unique = []
    for offer in offers:
        if offer.label not in seen:
            seen.add(offer.label)
            unique.append(offer)
    if spot.quotes is None:
        return unique
    # (inside a quoted YAML or JSON scalar, a quoted name is spelled as the scalar spells
    # its quotes: `"get-weather"` would end a double-quoted one)
    spelled = []
    for offer in unique:
        written = offer.insert or offer.label
        again = requoted(written, spot.quotes)
        spelled.append(offer if again == written else replace(offer, insert=again))
    return spelled
