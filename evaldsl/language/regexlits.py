"""What a regex's fixed texts say about it: searched for as one would by hand.

Takes a pattern and its flags as written (`/ZZZ/`, `/^(The|I|Here)/`, `/\\d+ C/`) and
gives what a careful engineer would use instead of running a regex engine on every text:

- `literal_form`: a pattern that can only match one of a few fixed texts (no class, no
  repetition: literal characters, escaped punctuation, groups of literal alternatives,
  `^` first and `$` last) as `Literals`, searched for with `in`, `startswith`,
  `endswith` or a set lookup (`^(analytics|prod)$`);
- `required_text`: a text every match contains (the longest run of literal characters
  of the pattern's top level, none of them repeated), so a text without it is known not
  to match without running RE2 (the pre-filter regex engines use themselves);
- `ascii_required_text`: the same for a text known to be ASCII, under `i` too (a
  group of tests on one path searches its RE2 Set only in a text holding one);
- `text_searcher`: the fastest exact search of a pattern, built from those two and
  `regexes.searcher`.

Exact by construction where it applies and `None` (RE2 alone) wherever in doubt: a
pattern with `i` (case folding), a class, an escape other than punctuation and `\\d \\D
\\w \\W \\s \\S \\b \\B \\n \\t`, a `{` that is no repetition, a group that is not literal
alternatives, or anchors under `m` is left to RE2. `$` is the end of the text only, as in
RE2 and JavaScript (not before a final newline). A differential test compares each with
RE2 on random patterns and texts.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from functools import lru_cache

import attrs

from evaldsl.cache.regexes import regex
from evaldsl.language.regexes import RegexProblem, compile_regex, searcher

#: At most this many texts are expanded from a pattern's groups.
MAX_TEXTS = 64

#: ASCII punctuation, `string.punctuation` (spelled out: importing `string` compiles its
#: `Template` pattern, ~2.5 M instructions of every start).
PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_CLASS_ESCAPES = frozenset("dDwWsSbB")  # a class, or a zero-width test: breaks a run
_CHAR_ESCAPES = {"n": "\n", "t": "\t"}
_SPECIAL = frozenset("\\^$.|?*+()[]{}")
_REPEAT = regex(r"\{(\d+)(,(\d*))?\}\??")

# A pattern's tokens: ("lit", char), ("any", None) a class or a zero-width test, ("bol",
# None) `^`, ("eol", None) `$`, ("rep", None) a repetition of what precedes it, ("alt",
# None) a `|` of the top level, ("group", texts) a group of literal alternatives.
Token = tuple[str, object]


@attrs.frozen
class Literals:
    """A pattern that matches exactly where one of `texts` occurs: anywhere, at the start
    (`start`), at the end (`end`), or as the whole text (both)."""

    texts: tuple[str, ...]
    start: bool
    end: bool

    def search(self) -> Callable[[str], bool]:
        """The search as a function of a text."""
        texts = self.texts
        if self.start and self.end:
            whole = frozenset(texts)
            return lambda text: text in whole
        if self.start:
            return lambda text: text.startswith(texts)
        if self.end:
            return lambda text: text.endswith(texts)
        if len(texts) == 1:
            (only,) = texts
            return lambda text: only in text
        return lambda text: any(t in text for t in texts)


def _escape(pattern: str, i: int) -> tuple[Token, int] | None:
    """The token of the escape at `pattern[i]` (a backslash), and where the next starts."""
    if i + 1 >= len(pattern):
        return None
    c = pattern[i + 1]
    if c in PUNCTUATION:
        return ("lit", c), i + 2
    if c in _CHAR_ESCAPES:
        return ("lit", _CHAR_ESCAPES[c]), i + 2
    if c in _CLASS_ESCAPES:
        return ("any", None), i + 2
    return None  # \Q, \p, \x, a digit, \A, \z: left to RE2


def _group(pattern: str, i: int) -> tuple[Token, int] | None:
    """A group of literal alternatives at `pattern[i]` (`(` or `(?:`), or None."""
    i += 3 if pattern.startswith("(?:", i) else 1
    if pattern.startswith("?", i):
        return None  # a flag group or a named one
    texts: list[str] = []
    current: list[str] = []
    while i < len(pattern):
        c = pattern[i]
        if c == ")":
            texts.append("".join(current))
            return ("group", tuple(texts)), i + 1
        if c == "|":
            texts.append("".join(current))
            current = []
            i += 1
        elif c == "\\":
            made = _escape(pattern, i)
            if made is None or made[0][0] != "lit":
                return None
            current.append(str(made[0][1]))
            i = made[1]
        elif c in _SPECIAL:
            return None
        else:
            current.append(c)
            i += 1
    return None


@lru_cache(maxsize=1024)
def _tokens(pattern: str) -> tuple[Token, ...] | None:
    """The pattern as tokens, or None when it holds anything this module leaves to RE2."""
    tokens: list[Token] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        made: tuple[Token, int] | None
        if c == "\\":
            made = _escape(pattern, i)
        elif c == "(":
            made = _group(pattern, i)
        elif c == "^":
            made = ("bol", None), i + 1
        elif c == "$":
            made = ("eol", None), i + 1
        elif c == ".":
            made = ("any", None), i + 1
        elif c == "|":
            made = ("alt", None), i + 1
        elif c in "?*+":
            made = ("rep", None), i + (2 if pattern.startswith("?", i + 1) else 1)
        elif c == "{":
            repeat = _REPEAT.match(pattern, i)
            made = None if repeat is None else (("rep", None), repeat.end())
        elif c in _SPECIAL:  # [ ] ) }
            made = None
        else:
            made = ("lit", c), i + 1
        if made is None:
            return None
        tokens.append(made[0])
        i = made[1]
    return tuple(tokens)


def _expand(tokens: tuple[Token, ...] | list[Token]) -> list[str] | None:
    """Every text a run of literal characters and groups matches, or None (too many)."""
    parts: list[tuple[str, ...]] = []
    for kind, value in tokens:
        parts.append((str(value),) if kind == "lit" else value)  # type: ignore[arg-type]
    count = 1
    for part in parts:
        count *= len(part)
        if count > MAX_TEXTS:
            return None
    return ["".join(p) for p in itertools.product(*parts)]


@lru_cache(maxsize=1024)
def literal_form(pattern: str, flags: str = "") -> Literals | None:
    """The texts a pattern matches exactly, or None when it is not made of fixed texts.

    >>> literal_form("^(analytics|prod)$")
    Literals(texts=('analytics', 'prod'), start=True, end=True)
    >>> literal_form("ZZZ"), literal_form("\\\\d+ C")
    (Literals(texts=('ZZZ',), start=False, end=False), None)
    """
    tokens = _tokens(pattern)
    if tokens is None or "i" in flags:
        return None
    if any(kind in ("any", "rep") for kind, _ in tokens):
        return None
    if any(kind == "alt" for kind, _ in tokens):
        # `a|b` is a choice of the whole; with an anchor in it, each side has its own
        if any(kind in ("bol", "eol") for kind, _ in tokens):
            return None
        texts: list[str] = []
        side: list[Token] = []
        for token in (*tokens, ("alt", None)):
            if token[0] != "alt":
                side.append(token)
                continue
            made = _expand(side)  # an empty side is the empty text: found everywhere
            if made is None or len(texts) + len(made) > MAX_TEXTS:
                return None
            texts.extend(made)
            side = []
        return Literals(tuple(dict.fromkeys(texts)), False, False)
    start = bool(tokens) and tokens[0][0] == "bol"
    end = bool(tokens) and tokens[-1][0] == "eol"
    body = tokens[int(start) : len(tokens) - int(end)]
    if any(kind in ("bol", "eol") for kind, _ in body):
        return None
    if (start or end) and "m" in flags:
        return None  # `^` and `$` at every line
    expanded = _expand(body)
    if expanded is None:
        return None
    return Literals(tuple(dict.fromkeys(expanded)), start, end)


@lru_cache(maxsize=1024)
def required_text(pattern: str, flags: str = "") -> str | None:
    """A text every match of the pattern contains (its longest run of literal
    characters at the top level, none repeated), or None.

    >>> required_text("\\\\/archive\\\\/\\\\d{5}\\\\.csv$")
    '/archive/'
    >>> required_text("ab?c"), required_text("a|b")
    ('a', None)
    """
    tokens = _tokens(pattern)
    if tokens is None or "i" in flags or any(kind == "alt" for kind, _ in tokens):
        return None
    best = ""
    run: list[str] = []
    for n, (kind, value) in enumerate(tokens):
        repeated = n + 1 < len(tokens) and tokens[n + 1][0] == "rep"
        if kind == "lit" and not repeated:
            run.append(str(value))
            continue
        if len(run) > len(best):
            best = "".join(run)
        run = []
    if len(run) > len(best):
        best = "".join(run)
    return best or None


@lru_cache(maxsize=1024)
def ascii_required_text(pattern: str, flags: str = "") -> tuple[str, bool] | None:
    """A text every match of the pattern in an ASCII text contains, and whether it is
    contained only up to case (then lower-cased: look for it in the text lower-cased), or
    None. Under `i`, the required text of the pattern without it, when it is ASCII: an
    ASCII text's match folds to it letter by letter, and an ASCII letter's only ASCII
    case variants are its upper and lower case (RE2's folding adds `K` and `ſ`, which
    an ASCII text does not hold).

    >>> ascii_required_text("quota notes \\\\d+", "i"), ascii_required_text("^A\\\\d", "m")
    (('quota notes ', True), ('A', False))
    """
    if "i" not in flags:
        need = required_text(pattern, flags)
        return None if need is None else (need, False)
    need = required_text(pattern, flags.replace("i", ""))
    if need is None or not need.isascii():
        return None
    return need.lower(), True


@lru_cache(maxsize=4096)
def text_searcher(pattern: str, flags: str = "") -> Callable[[str], bool]:
    """Whether the pattern is found in a text (as `compile_regex(...).search(text) is not
    None`), by a string method where the pattern is fixed texts, else by RE2 behind the
    pre-filter of its required text. The pattern must compile (the checker says so)."""
    form = literal_form(pattern, flags)
    if form is not None:
        return form.search()
    compiled = compile_regex(pattern, flags)
    assert not isinstance(compiled, RegexProblem), "the checker rejects bad regexes"
    found = searcher(compiled)
    need = required_text(pattern, flags)
    if need is None:
        return found
    return lambda text: need in text and found(text)
