"""Which predicate words fit the subject before the cursor.

Takes the tokens of the term being written (`tool x `, `answer is `, `tool x args $.a `)
and gives a test of the words the grammar accepts next: a word that begins (or goes on)
a predicate is kept only if some predicate spelled that way applies to the subject (its
type, from `evaldsl.language.vocabulary`, and what the predicate registry says applies to
what). The grammar is untyped there: after `answer ` it accepts `called`, which the
checker then refuses (E201).

The subject is told by its leading words, as the vocabulary spells them (the longest
match: `tool calls` is a count, `tool NAME` a tool); the value after `args` or `result`
is JSON. Whatever is not recognised is not filtered: a word that is no predicate's word at
its place (`once` after `called`, `at` after `cites tool x`) is always kept.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from evaldsl.language.vocabulary import SUBJECTS, PredicateSpec, Type
from evaldsl.predicates.compare import ORDERED
from evaldsl.predicates.registry import PREDICATES
from evaldsl.syntax.tokens import Token

# tokens that belong to a subject after its words: answer[-1], answer json $.x,
# output.a["b"], state.x
_ACCESSORS = frozenset({"LSQB", "RSQB", "INT", "DOT", "NAME", "STRING", "PATH"})
_VALUE_OF_CALLS = frozenset({"ARGS", "RESULT"})
# what `every tool x` takes (the checker's E201: `every` applies to `args` and `result`)
_EVERY = (PREDICATES["args"], PREDICATES["result"])


@dataclass(frozen=True)
class Fit:
    """The subject (its type and kind; kind None for the value an `args` or `result`
    test reads), whether `every` leads it, and the predicate words written after it."""

    type: Type
    kind: str | None
    every: bool
    written: tuple[str, ...]

    def _takes(self, spec: PredicateSpec) -> bool:
        if self.every:
            return spec in _EVERY
        return self.type in spec.applies_to and (not spec.subjects or self.kind in spec.subjects)

    def word(self, word: str) -> bool:
        """Whether `word` may come next: some predicate the subject takes is spelled with
        it here, or no predicate is (it is some other part of the grammar)."""
        at = len(self.written)
        spelled = [p for p in PREDICATES.values() if p.words[: at + 1] == (*self.written, word)]
        return not spelled or any(self._takes(p) for p in spelled)

    def comparison(self, op: str) -> bool:
        """Whether the operator `op` (`==`, `<`, …) may come next: `<` and its kin only
        on what is ordered."""
        if self.written:
            return True
        return self._takes(PREDICATES["compare"]) and (op in ("==", "!=") or self.type in ORDERED)

    def json_type(self) -> bool:
        """Whether `string`, `number`, … (after `is`) may come next."""
        return self.written != ("is",) or self._takes(PREDICATES["is_type"])


def _subject(term: Sequence[Token]) -> tuple[str, int] | None:
    """The subject's kind and how many tokens its words take, by the longest match."""
    texts = [t.text.lower() for t in term]
    best: tuple[str, int] | None = None
    for spec in SUBJECTS.values():
        n = len(spec.words)
        if n and texts[:n] == list(spec.words) and (best is None or n > best[1]):
            best = (spec.kind, n)
    if best is None and term and term[0].kind == "STATE":
        best = ("state", 1)
    return best


def fit(term: Sequence[Token]) -> Fit | None:
    """What fits after `term` (the tokens of one term, `not` and brackets cut), or None
    when the subject is not recognised or something else than predicate words follows
    it."""
    tokens = list(term)
    every = bool(tokens) and tokens[0].kind == "EVERY"
    if every:
        tokens = tokens[1:]
    found = _subject(tokens)
    if found is None:
        return None
    kind: str | None = found[0]
    type_, i = SUBJECTS[found[0]].type, found[1]
    if type_ == "Calls":
        if i < len(tokens) and tokens[i].kind in ("NAME", "STRING"):  # tool NAME
            i += 1
        for j in range(i, len(tokens)):
            if tokens[j].kind in _VALUE_OF_CALLS:  # tool x args [PATH] TEST: a JSON value
                type_, kind, every, i = "Json", None, False, j + 1
                if i < len(tokens) and tokens[i].kind == "PATH":
                    i += 1
                break
    else:
        while i < len(tokens) and tokens[i].kind in _ACCESSORS:
            i += 1
    written = tuple(t.text.lower() for t in tokens[i:])
    if not all(w.isalpha() for w in written):
        return None
    return Fit(type_, kind, every, written)
