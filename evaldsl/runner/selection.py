"""`-k PATTERN`: which cases a run selects, by their `suite::case` names.

Takes the pattern as the user wrote it and gives a test of a name (`selector`), or the
reason the pattern cannot be read (`problem`, for the command line's usage error).

A pattern is a part of a name (case-insensitive), or a glob when it has `*`, `?` or `[`;
`not PATTERN` inverts it. As in pytest, patterns combine with `and`, `or`, `not` and
parentheses (`-k "tokyo or paris"`, `-k "weather and not slow"`); words between two
operators are one pattern, spaces kept (`-k "not slow case"` is the name part
`slow case`). A pattern without `and` or `or` is read as before they were known: a
name part may hold parentheses (`-k "case (1)"`), but one that opens with a `(` it never
closes (`-k "not ("`) is the unclosed group pytest would refuse, not a name part.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable
from functools import lru_cache

from evaldsl.cache.regexes import regex

#: A name test: True for the `suite::case` name (lower case) and the case's name.
Selector = Callable[[str, str], bool]

_TOKENS = regex(r"\s*(\(|\)|[^\s()]+)")
_COMBINED = regex(r"(?:^|[\s()])(?:and|or)(?:$|[\s()])")


class SelectionError(ValueError):
    """A `-k` pattern that is not an expression: what is wrong, in the user's words."""


def _part(pattern: str) -> Selector:
    """The test of one name part: contained, or matched as a glob. A name that contains
    the pattern as written is a match too: the id of an `each` row, pasted
    (`[city=Tokyo]`), is its text, not a class of characters."""
    pat = pattern.lower()
    glob = any(ch in pat for ch in "*?[")

    def test(full: str, case: str) -> bool:
        return pat in full or (glob and (fnmatch.fnmatch(full, pat) or fnmatch.fnmatch(case, pat)))

    return test


@lru_cache(maxsize=64)
def selector(pattern: str) -> Selector:
    """The test `pattern` makes of a case's names (`SelectionError` when it is an
    expression that does not read)."""
    if not _COMBINED.search(pattern):
        negate = pattern.startswith("not ")
        words = pattern[4:].strip() if negate else pattern
        if words.lstrip().startswith("(") and words.count("(") > words.count(")"):
            # (`not (` was the name part `(`, in no case's name, and selected every case:
            # a pattern that opens a group is read as one, as pytest reads it)
            raise SelectionError("the pattern has a `(` that is never closed")
        part = _part(words)
        return (lambda full, case: not part(full, case)) if negate else part
    tokens = _TOKENS.findall(pattern)
    made, end = _either(tokens, 0)
    if end < len(tokens):
        raise SelectionError(f"the pattern has `{tokens[end]}` after its end")
    return made


def problem(pattern: str) -> str | None:
    """Why `pattern` cannot select cases, or None when it can."""
    try:
        selector(pattern)
    except SelectionError as err:
        return str(err)
    return None


def _either(tokens: list[str], at: int) -> tuple[Selector, int]:
    """`a or b or …` from `tokens[at]`: the test and the position after it."""
    return _joined(tokens, at, "or", _both, any)


def _both(tokens: list[str], at: int) -> tuple[Selector, int]:
    """`a and b and …` from `tokens[at]`."""
    return _joined(tokens, at, "and", _one, all)


def _joined(
    tokens: list[str],
    at: int,
    word: str,
    inner: Callable[[list[str], int], tuple[Selector, int]],
    combine: Callable[[Iterable[bool]], bool],
) -> tuple[Selector, int]:
    """The tests `inner` reads from `tokens[at]` joined by the operator `word`, combined
    by `combine` (`any`, `all`)."""
    first, at = inner(tokens, at)
    tests = [first]
    while at < len(tokens) and tokens[at] == word:
        test, at = inner(tokens, at + 1)
        tests.append(test)
    if len(tests) == 1:
        return first, at
    return (lambda full, case: combine(t(full, case) for t in tests)), at


def _one(tokens: list[str], at: int) -> tuple[Selector, int]:
    """`not a`, `( … )`, or a name part of the words up to the next operator."""
    if at == len(tokens):
        raise SelectionError(
            "the pattern ends where a name part was expected (after `and`, `or` or `not`)"
        )
    token = tokens[at]
    if token == "not":
        test, at = _one(tokens, at + 1)
        return (lambda full, case: not test(full, case)), at
    if token == "(":
        test, at = _either(tokens, at + 1)
        if at == len(tokens) or tokens[at] != ")":
            raise SelectionError("the pattern has a `(` that is never closed")
        return test, at + 1
    if token in ("and", "or", ")"):
        raise SelectionError(f"the pattern has `{token}` where a name part was expected")
    words = [token]
    at += 1
    while at < len(tokens) and tokens[at] not in ("and", "or", "not", "(", ")"):
        words.append(tokens[at])
        at += 1
    return _part(" ".join(words)), at
