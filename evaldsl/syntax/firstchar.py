"""First-character dispatch for the fast parse loop's scanners.

Takes a scanner's regex as Lark's contextual lexer joins it (`(?P<A>…)|(?P<B>…)|…`, one
named group per terminal, the first alternative that matches wins) and gives, per first
character of a token, a regex of only the alternatives that can begin with that character,
in the same order, with the same names: the same match as the whole regex wherever the
token begins with that character. A statement's first state offers 34 terminals and Python's
`re` tries them one by one at every token; most cannot begin with the character there
(measured: the scanners' matches were ~15% of compiling bench.py's file).

Exactness: an alternative's possible first characters are read from `re`'s own parse of its
pattern, over-approximated wherever in doubt: an alternative that may match the empty text,
a case-insensitive or any other flag, a character class or construct not listed here, a
non-ASCII character: all fall back to keeping the alternative (or to the whole regex). A
regex that cannot be split into its terminals exactly (re-joined, it must give the same
text) gets no dispatch at all. `tests/test_first_char.py` compares the dispatched match with
the whole regex's on every scanner of the grammar, and the parser's differential tests
compare whole parses with Lark's.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

#: The characters dispatched on (any other first character uses the whole regex).
ASCII = frozenset(chr(i) for i in range(128))

#: Flags that change nothing a first character depends on (`re.UNICODE` is a `str`
#: pattern's default; `re.M` and `re.S` only change anchors and `.`, read as any character).
_NEUTRAL_FLAGS = re.UNICODE | re.MULTILINE | re.DOTALL

#: How each character category of a class is tested on one character.
_CATEGORIES = {
    "CATEGORY_DIGIT": r"\d",
    "CATEGORY_NOT_DIGIT": r"\D",
    "CATEGORY_SPACE": r"\s",
    "CATEGORY_NOT_SPACE": r"\S",
    "CATEGORY_WORD": r"\w",
    "CATEGORY_NOT_WORD": r"\W",
}


class _Unknown(Exception):
    """A construct whose first characters are not worked out here: keep the alternative."""


def split_terminals(pattern: str, names: list[str]) -> list[str] | None:
    """The named alternatives of a joined scanner regex as their own texts
    (`(?P<NAME>…)`), in order; `None` unless they re-join into exactly `pattern`. `names`
    are the regex's group names in the order of their groups."""
    pieces: list[str] = []
    start = 0
    for i, name in enumerate(names):
        head = f"(?P<{name}>"
        if not pattern.startswith(head, start):
            return None
        if i + 1 < len(names):
            # a terminal's pattern never holds `)|(?P<NEXT>`: that group name would clash
            cut = pattern.find(f")|(?P<{names[i + 1]}>", start)
            if cut < 0:
                return None
            pieces.append(pattern[start : cut + 1])
            start = cut + 2
        else:
            pieces.append(pattern[start:])
    return pieces if "|".join(pieces) == pattern else None


def first_chars(pattern: str, flags: int) -> frozenset[str] | None:
    """The ASCII characters a match of `pattern` may begin with (a superset); `None` when
    it may begin with any (or match the empty text, or is not worked out here)."""
    if flags & ~_NEUTRAL_FLAGS:
        return None
    try:
        from re import _parser  # `re`'s own parse of a pattern (3.11+)

        chars, empty = _sequence(_parser.parse(pattern, flags).data, flags)
    except Exception:  # anything unexpected: no dispatch on this alternative
        return None
    return None if empty else frozenset(chars)


def _sequence(items: Any, flags: int) -> tuple[set[str], bool]:
    """The first characters of a sequence of items, and whether it may match empty text."""
    chars: set[str] = set()
    for op, arg in items:
        first, empty = _item(str(op), arg, flags)
        chars |= first
        if not empty:
            return chars, False
    return chars, True


def _item(op: str, arg: Any, flags: int) -> tuple[set[str], bool]:
    if op == "LITERAL":
        return {chr(arg)} & ASCII, False
    if op == "IN":
        return _class(arg, flags), False
    if op == "SUBPATTERN":
        _, add_flags, del_flags, inner = arg
        if add_flags or del_flags:
            raise _Unknown(op)
        return _sequence(inner, flags)
    if op == "ATOMIC_GROUP":
        return _sequence(arg, flags)
    if op in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
        low, _, inner = arg
        chars, empty = _sequence(inner, flags)
        return chars, empty or low == 0
    if op == "BRANCH":
        chars = set()
        empty = False
        for branch in arg[1]:
            first, may_be_empty = _sequence(branch, flags)
            chars |= first
            empty = empty or may_be_empty
        return chars, empty
    if op in ("AT", "ASSERT", "ASSERT_NOT"):
        # zero width: the first character comes from what follows (an assertion only
        # ever rules characters out, so reading past it over-approximates)
        return set(), True
    raise _Unknown(op)  # `.`, `[^x]` as NOT_LITERAL, back-references, …: any character


def _class(items: Any, flags: int) -> set[str]:
    """The ASCII characters a character class (`re`'s parse of `[…]`, `\\d`, …) takes."""
    taken: set[str] = set()
    negate = False
    for op, arg in items:
        kind = str(op)
        if kind == "NEGATE":
            negate = True
        elif kind == "LITERAL":
            taken |= {chr(arg)} & ASCII
        elif kind == "RANGE":
            taken |= {c for c in ASCII if arg[0] <= ord(c) <= arg[1]}
        elif kind == "CATEGORY" and str(arg) in _CATEGORIES:
            test = re.compile(_CATEGORIES[str(arg)], flags).fullmatch
            taken |= {c for c in ASCII if test(c)}
        else:
            raise _Unknown(kind)
    return set(ASCII - taken) if negate else taken


#: How many tokens a scanner serves with its whole regex before its terminals are read
#: and regexes made per first character: a short file (a start-up) pays for neither.
WARM_UP = 256


class Dispatch(dict[str, Callable[[str, int], Any]]):
    """First character → the `match` of the regex of the alternatives that may begin with
    it (`make` compiles one from the alternatives' texts, as `whole` was compiled), made
    on first use of each character once the scanner has served `WARM_UP` tokens (until
    then, and for a blank, a character outside ASCII, or a regex that cannot be split
    exactly: `whole`'s `match`)."""

    def __init__(
        self,
        whole: re.Pattern[str] | None,
        pattern: str,
        make: Callable[[str], Callable[[str, int], Any]],
        match: Callable[[str, int], Any],
    ) -> None:
        super().__init__()
        self.whole = whole  # `None`: never split (several regexes)
        self.pattern = pattern
        self.make = make
        self.match = match
        self.served = 0
        self.pieces: list[str] | None = None
        self.firsts: list[frozenset[str] | None] = []
        self.by_subset: dict[tuple[int, ...], Callable[[str, int], Any]] = {}

    def __missing__(self, char: str) -> Callable[[str, int], Any]:
        if self.whole is not None:  # not read yet
            self.served += 1
            if self.served < WARM_UP:
                return self.match  # not kept: asked again until warm
            self.pieces, self.firsts = _read(self.whole, self.pattern)
            self.whole = None
        pieces = self.pieces
        found = self.match
        if pieces is not None and char in ASCII and char not in " \t":
            kept = tuple(i for i, first in enumerate(self.firsts) if first is None or char in first)
            found = self.by_subset.get(kept)  # type: ignore[assignment]
            if found is None:
                if len(kept) == len(pieces):
                    found = self.match
                elif not kept:
                    found = _no_match
                else:
                    found = self.make("|".join(pieces[i] for i in kept))
                self.by_subset[kept] = found
        self[char] = found
        return found


def _no_match(text: str, pos: int) -> None:
    """No alternative can begin with this character: the whole regex finds nothing."""
    return None


#: Each terminal's first characters, by its text and the flags (terminals recur across
#: scanners: `NAME`, `STRING`, the blanks and comments are in most).
_FIRSTS: dict[tuple[str, int], frozenset[str] | None] = {}


def dispatch(
    whole: re.Pattern[str], pattern: str, make: Callable[[str], Callable[[str, int], Any]]
) -> Dispatch:
    """The first-character dispatch of a scanner: `whole` is its compiled regex (the
    blanks before a token, then `pattern`, the joined alternatives, with `whole`'s
    flags), `make` compiles a joined text of some of them the same way."""
    return Dispatch(whole, pattern, make, whole.match)


def whole_only(match: Callable[[str, int], Any]) -> Dispatch:
    """A dispatch that always gives `match` (a scanner split in several regexes)."""
    return Dispatch(None, "", lambda text: match, match)


def _read(
    whole: re.Pattern[str], pattern: str
) -> tuple[list[str] | None, list[frozenset[str] | None]]:
    """A scanner's alternatives and the first characters of each; `None` for the
    alternatives when the regex cannot be split exactly or no first character is known."""
    if whole.flags & ~_NEUTRAL_FLAGS:
        return None, []
    # the terminals' names in the order of their groups (a terminal's own unnamed groups
    # have none; a named group inside one makes the split fail: no dispatch)
    names = [n for n, _ in sorted(whole.groupindex.items(), key=lambda item: item[1])]
    pieces = split_terminals(pattern, names)
    if pieces is None:
        return None, []
    firsts: list[frozenset[str] | None] = []
    for piece in pieces:
        key = (piece, whole.flags)
        if key not in _FIRSTS:
            _FIRSTS[key] = first_chars(piece, whole.flags)
        firsts.append(_FIRSTS[key])
    if all(first is None for first in firsts):
        return None, []
    return pieces, firsts
