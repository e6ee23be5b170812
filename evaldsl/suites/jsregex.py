"""JavaScript regexes → RE2 regexes with the same meaning, for traceplay and cycgraph objects.

Takes a pattern as traceplay and cycgraph compile it (`new RegExp(pattern)`: JavaScript
syntax, no flags, with the web-compatibility rules every engine follows) and gives the RE2
pattern that matches the same texts, written so that it can stand between the slashes of
an evaldsl regex literal, or a `RegexProblem`: a JavaScript syntax error (`(?i)`, `a**`,
`[z-a]`), or a construct evaldsl refuses (E402: backreferences and lookaround, which RE2
cannot run in linear time, repetition counts over 1000, a quantifier right after a
character outside the BMP, which JavaScript applies to half of it). The DSL's own `/re/`
literals are RE2 already and never pass through here; `{{key}}` placeholders of `each`
rows are kept as written (literal braces in both dialects).

What changes on the way (JavaScript → RE2):
- `.` → `[^\\n\\r\\x{2028}\\x{2029}]`; `\\s` and `\\S` → JavaScript's whitespace set
  (`\\v`, U+00A0, U+FEFF, U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000);
- identity escapes are the character itself: `\\p{L}` is `p{L}`, `\\a` is `a`, `\\z` is `z`;
- `\\uHHHH`, `\\xHH`, `\\cX`, `\\0` and octal escapes (`\\12` when there is no group 12)
  become the characters they stand for; `\\u` and `\\x` without their digits are `u`, `x`;
- `{` that does not start a count (`a{`, `{x}`, `a{,3}`) is a literal brace;
- `[]` matches nothing, `[^]` any character; `[\\b]` is a backspace; `[\\d-z]` is `\\d`,
  `-` or `z`; named groups become plain groups.

What still differs (README, "Coming from traceplay, cycgraph and verydia"): JavaScript
without the `u` flag sees a character outside the BMP (an emoji) as two UTF-16 units, RE2
as one character, so `.`, negated classes and quantifiers count such characters
differently, and a lone surrogate escape matches nothing here; RE2's `\\B` also matches
inside a non-ASCII character (it works on UTF-8 bytes).

>>> translate(r"\\p{L}\\u6771.")
'p\\\\{L\\\\}東[^\\\\n\\\\r\\\\x{2028}\\\\x{2029}]'
>>> translate("(?i)abc").message
'invalid regex (JavaScript): invalid group `(?i`'
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from evaldsl.language.jsjson import surrogate_pair
from evaldsl.language.regexes import RegexProblem, compile_regex

MAX = 0x10FFFF
_RE2_META = set("\\.+*?()|[]{}^$/")
_DIGITS = ((0x30, 0x39),)
_WORD = ((0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A))
# JavaScript's \s: WhiteSpace and LineTerminator (Unicode Zs included)
_SPACE = (
    (0x09, 0x0D),
    (0x20, 0x20),
    (0xA0, 0xA0),
    (0x1680, 0x1680),
    (0x2000, 0x200A),
    (0x2028, 0x2029),
    (0x202F, 0x202F),
    (0x205F, 0x205F),
    (0x3000, 0x3000),
    (0xFEFF, 0xFEFF),
)
_CLASS_ESCAPES = {"d": (_DIGITS, False), "D": (_DIGITS, True), "w": (_WORD, False)}
_CLASS_ESCAPES |= {"W": (_WORD, True), "s": (_SPACE, False), "S": (_SPACE, True)}
_CONTROL = {"f": 0x0C, "n": 0x0A, "r": 0x0D, "t": 0x09, "v": 0x0B}
_NOTHING = "[^\\x{0}-\\x{10FFFF}]"
_PLACEHOLDER = re.compile(r"\{\{\s*[A-Za-z_][\w.]*\s*\}\}")
_DOT = "[^\\n\\r\\x{2028}\\x{2029}]"
_LOOKAROUND = {
    "(?=": "lookaheads",
    "(?!": "negative lookaheads",
    "(?<=": "lookbehinds",
    "(?<!": "negative lookbehinds",
}


class _JsSyntaxError(Exception):
    """The pattern is not a valid JavaScript regex (what `new RegExp` throws)."""


def _complement(ranges: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    start = 0
    for lo, hi in sorted(ranges):
        if lo > start:
            out.append((start, lo - 1))
        start = max(start, hi + 1)
    if start <= MAX:
        out.append((start, MAX))
    return out


def _merge(ranges: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def _without_surrogates(ranges: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """RE2 reads UTF-8 text, where a lone surrogate cannot occur: drop them from classes."""
    out = []
    for lo, hi in ranges:
        if lo < 0xD800:
            out.append((lo, min(hi, 0xD7FF)))
        if hi > 0xDFFF:
            out.append((max(lo, 0xE000), hi))
    return out


_NAMED = {0x09: "\\t", 0x0A: "\\n", 0x0B: "\\v", 0x0C: "\\f", 0x0D: "\\r"}


def _class_char(cp: int) -> str:
    """One character inside an RE2 class: itself when it has no meaning there."""
    ch = chr(cp)
    if cp in _NAMED:
        return _NAMED[cp]
    if ch in "\\]^-[/" or not (ch == " " or (ch.isprintable() and not ch.isspace())):
        return f"\\x{{{cp:X}}}"
    return ch


def _class(ranges: Iterable[tuple[int, int]], negated: bool = False) -> str:
    """An RE2 class for the characters in `ranges` (or not in them), in whichever of the
    two spellings (`[…]` or `[^…]`) is shorter."""
    chosen = _without_surrogates(_merge(ranges))
    if negated:
        chosen = _without_surrogates(_complement(chosen))
    if not chosen:
        return _NOTHING
    options = []
    for spelled, prefix in ((chosen, ""), (_without_surrogates(_complement(chosen)), "^")):
        body = "".join(
            _class_char(lo) if lo == hi else f"{_class_char(lo)}-{_class_char(hi)}"
            for lo, hi in spelled
        )
        options.append(f"[{prefix}{body}]" if body else "[\\x{0}-\\x{10FFFF}]")
    return min(options, key=len)


def _literal(cp: int) -> str:
    if 0xD800 <= cp <= 0xDFFF:
        return _NOTHING  # a lone UTF-16 surrogate: never in UTF-8 text
    ch = chr(cp)
    if ch in _RE2_META:
        return "\\" + ch
    if ch == " " or (ch.isprintable() and not ch.isspace()):
        return ch
    return f"\\x{{{cp:X}}}"


class _Translator:
    """A recursive-descent reading of one JavaScript pattern, writing RE2 as it goes."""

    def __init__(self, pattern: str) -> None:
        self.p = pattern
        self.i = 0
        self.groups, self.names = self._scan_groups()
        self.named: set[str] = set()  # names met so far: a name used twice is an error
        self.out: list[str] = []
        # the first construct RE2 cannot run; reported only if the whole pattern is valid
        # JavaScript (a syntax error anywhere is what JavaScript reports first)
        self.unsupported: RegexProblem | None = None

    def _unsupported(self, problem: RegexProblem) -> None:
        if self.unsupported is None:
            self.unsupported = problem

    # -- helpers

    def _peek(self, k: int = 0) -> str:
        j = self.i + k
        return self.p[j] if j < len(self.p) else ""

    def _scan_groups(self) -> tuple[int, set[str]]:
        """How many capturing groups the pattern has, and their names (backreferences
        to a group that exists, even a later one, are backreferences; others are octal)."""
        count, names, i, in_class = 0, set(), 0, False
        p = self.p
        while i < len(p):
            ch = p[i]
            if ch == "\\":
                i += 2
                continue
            if in_class:
                in_class = ch != "]"
            elif ch == "[":
                in_class = True
            elif ch == "(":
                if not p.startswith("?", i + 1):
                    count += 1
                elif p.startswith("?<", i + 1) and not p.startswith(("?<=", "?<!"), i + 1):
                    count += 1
                    end = p.find(">", i)
                    if end > 0:
                        names.add(p[i + 3 : end])
            i += 1
        return count, names

    def _hex(self, start: int, n: int) -> int | None:
        digits = self.p[start : start + n]
        if len(digits) == n and all(c in "0123456789abcdefABCDEF" for c in digits):
            return int(digits, 16)
        return None

    def _octal(self) -> int:
        """A legacy octal escape at `self.i` (its first digit is 0-7): at most three
        digits, and no more than \\377."""
        first = self._peek()
        value, self.i = int(first), self.i + 1
        limit = 3 if first in "0123" else 2
        for _ in range(limit - 1):
            if self._peek() and self._peek() in "01234567":
                value, self.i = value * 8 + int(self._peek()), self.i + 1
            else:
                break
        return value

    def _braced_count(self, at: int) -> tuple[int, int | None, int] | None:
        """`{n}`, `{n,}` or `{n,m}` at `at`: (n, m or None for no bound, end index)."""
        p, j = self.p, at + 1
        k = j
        while k < len(p) and p[k].isdigit() and p[k].isascii():
            k += 1
        if k == j:
            return None
        low = int(p[j:k])
        if k < len(p) and p[k] == "}":
            return low, low, k + 1
        if k >= len(p) or p[k] != ",":
            return None
        m = k + 1
        while m < len(p) and p[m].isdigit() and p[m].isascii():
            m += 1
        if m >= len(p) or p[m] != "}":
            return None
        return low, (int(p[k + 1 : m]) if m > k + 1 else None), m + 1

    # -- the grammar

    def run(self) -> str:
        self.disjunction()
        if self.i < len(self.p):
            raise _JsSyntaxError("unmatched `)`")
        return "".join(self.out)

    def disjunction(self) -> None:
        self.alternative()
        while self._peek() == "|":
            self.i += 1
            self.out.append("|")
            self.alternative()

    def alternative(self) -> None:
        while self.i < len(self.p) and self._peek() not in ("|", ")"):
            self.term()

    def term(self) -> None:
        ch = self._peek()
        if ch in ("^", "$"):
            self.i += 1
            self.out.append(ch)
            self._no_quantifier()
            return
        if ch == "\\" and self._peek(1) in ("b", "B"):
            self.i += 2
            self.out.append("\\" + self.p[self.i - 1])
            self._no_quantifier()
            return
        if ch in ("*", "+", "?"):
            raise _JsSyntaxError(f"nothing to repeat before `{ch}`")
        if ch == "{" and self._braced_count(self.i) is not None:
            raise _JsSyntaxError("nothing to repeat before `{`")
        before = len(self.out)
        self.atom()
        astral = len(self.out) == before + 1 and len(self.out[-1]) == 1 and self.out[-1] > "\uffff"
        if astral and self._quantifier_follows():
            # JavaScript (no `u` flag) repeats the second UTF-16 half of the character only
            self._unsupported(
                RegexProblem(
                    "E402",
                    f"a quantifier right after `{self.out[-1]}` repeats half of the character "
                    "in JavaScript (its second UTF-16 unit), which evaldsl cannot do",
                    f"write (?:{self.out[-1]}) to repeat the whole character",
                )
            )
        self.quantifier()

    def _quantifier_follows(self) -> bool:
        ch = self._peek()
        return ch in ("*", "+", "?") or (ch == "{" and self._braced_count(self.i) is not None)

    def _no_quantifier(self) -> None:
        if self._quantifier_follows():
            raise _JsSyntaxError(f"nothing to repeat before `{self._peek()}`")

    def quantifier(self) -> None:
        ch = self._peek()
        if ch in ("*", "+", "?"):
            self.i += 1
            text = ch
        elif ch == "{" and (count := self._braced_count(self.i)) is not None:
            low, high, end = count
            if high is not None and high < low:
                raise _JsSyntaxError(f"numbers out of order in `{self.p[self.i : end]}`")
            if low > 1000 or (high is not None and high > 1000):
                self._unsupported(
                    RegexProblem(
                        "E402",
                        f"repetition counts over 1000 (`{self.p[self.i : end]}`) are not "
                        "supported: regexes run in linear time (RE2)",
                        "repeat a group instead, or use + or *",
                    )
                )
            self.i = end
            text = f"{{{low}}}" if high == low else f"{{{low},{'' if high is None else high}}}"
        else:
            return
        if self._peek() == "?":
            self.i += 1
            text += "?"
        self.out.append(text)

    def atom(self) -> None:
        ch = self._peek()
        placeholder = _PLACEHOLDER.match(self.p, self.i) if ch == "{" else None
        if placeholder:
            # `{{key}}` of an `each` row: literal braces in both dialects, kept as written
            # so that a row's value can still replace it in the evaldsl text
            self.i = placeholder.end()
            self.out.append(placeholder.group())
        elif ch == ".":
            self.i += 1
            self.out.append(_DOT)
        elif ch == "(":
            self.group()
        elif ch == "[":
            self.out.append(self.char_class())
        elif ch == "\\":
            self.atom_escape()
        else:
            self.i += 1
            self.out.append(_literal(ord(ch)))

    def group(self) -> None:
        p, i = self.p, self.i
        behind = False
        for start, what in _LOOKAROUND.items():
            if p.startswith(start, i):
                behind = start.startswith("(?<")
                self._unsupported(
                    RegexProblem(
                        "E402",
                        f"{what} are not supported: regexes run in linear time (RE2), so no "
                        "pattern can hang a run",
                        "rewrite the pattern without it",
                    )
                )
                self.i += len(start)
                self.out.append("(?:")  # read on, for the syntax errors after it
                break
        else:
            self._open_group()
        self.disjunction()
        if self._peek() != ")":
            raise _JsSyntaxError("unterminated group")
        self.i += 1
        self.out.append(")")
        if behind:  # a lookahead may be repeated (Annex B), a lookbehind may not
            self._no_quantifier()

    def _open_group(self) -> None:
        p, i = self.p, self.i
        if p.startswith("(?:", i):
            self.i += 3
            self.out.append("(?:")
        elif p.startswith("(?<", i):
            end = p.find(">", i)
            name = p[i + 3 : end] if end > 0 else ""
            if not name or not (name.replace("$", "_")).isidentifier():
                raise _JsSyntaxError("invalid capture group name")
            if name in self.named:
                raise _JsSyntaxError(f"duplicate capture group name `{name}`")
            self.named.add(name)
            self.i = end + 1
            self.out.append("(")  # the name only serves backreferences, which RE2 lacks
        elif p.startswith("(?", i):
            raise _JsSyntaxError(f"invalid group `{p[i : i + 3]}`")
        else:
            self.i += 1
            self.out.append("(")

    def atom_escape(self) -> None:
        self.i += 1  # the backslash
        ch = self._peek()
        if not ch:
            raise _JsSyntaxError("`\\` at the end of the pattern")
        if ch in _CLASS_ESCAPES:
            self.i += 1
            if ch in "dDwW":
                self.out.append("\\" + ch)  # RE2's are ASCII, as JavaScript's
            else:
                ranges, negated = _CLASS_ESCAPES[ch]
                self.out.append(_class(ranges, negated))
            return
        if ch.isdigit() and ch.isascii() and ch != "0":
            j = self.i
            while j < len(self.p) and self.p[j].isdigit() and self.p[j].isascii():
                j += 1
            if int(self.p[self.i : j]) <= self.groups:
                self._unsupported(_backreference())
                self.i = j
                return
            if ch in "89":
                self.i += 1
                self.out.append(ch)
            else:
                self.out.append(_literal(self._octal()))
            return
        if ch == "k" and self.names:
            end = self.p.find(">", self.i)
            if self._peek(1) != "<" or end < 0 or self.p[self.i + 2 : end] not in self.names:
                raise _JsSyntaxError("invalid named reference")
            self._unsupported(_backreference())
            self.i = end + 1
            return
        self.out.append(_literal(self.character_code(in_class=False)))

    def character_code(self, *, in_class: bool) -> int:
        """The code point an escape stands for (`self.i` is just after the backslash)."""
        p, i = self.p, self.i
        ch = p[i]
        if ch in _CONTROL:
            self.i += 1
            return _CONTROL[ch]
        if ch == "c":
            letter = self._peek(1)
            if letter.isascii() and (
                letter.isalpha() or (in_class and (letter.isdigit() or letter == "_"))
            ):
                self.i += 2
                return ord(letter) % 32
            return ord("\\")  # `\c` with no letter: a backslash, and `c` reads on
        if ch == "0" and not (self._peek(1).isdigit() and self._peek(1).isascii()):
            self.i += 1
            return 0
        if ch in "01234567":
            return self._octal()
        if ch == "x":
            value = self._hex(i + 1, 2)
            if value is not None:
                self.i += 3
                return value
        if ch == "u":
            value = self._hex(i + 1, 4)
            if value is not None:
                self.i += 5
                if 0xD800 <= value <= 0xDBFF and p.startswith("\\u", self.i):
                    low = self._hex(self.i + 2, 4)
                    pair = None if low is None else surrogate_pair(value, low)
                    if pair is not None:
                        self.i += 6  # a surrogate pair: the character it encodes
                        return pair
                return value
        if ch == "k" and in_class and self.names:
            raise _JsSyntaxError("invalid escape `\\k`")
        self.i += 1
        return ord(ch)  # an identity escape: the character itself

    def char_class(self) -> str:
        self.i += 1  # `[`
        negated = self._peek() == "^"
        if negated:
            self.i += 1
        ranges: list[tuple[int, int]] = []
        while True:
            if self.i >= len(self.p):
                raise _JsSyntaxError("unterminated character class")
            if self._peek() == "]":
                self.i += 1
                return _class(ranges, negated)
            first = self.class_atom()
            if self._peek() == "-" and self._peek(1) not in ("]", ""):
                self.i += 1
                second = self.class_atom()
                if isinstance(first, int) and isinstance(second, int):
                    if second < first:
                        raise _JsSyntaxError("range out of order in character class")
                    ranges.append((first, second))
                    continue
                # a class escape at either end: `-` is itself (web compatibility)
                ranges.append((0x2D, 0x2D))
                for side in (first, second):
                    ranges.extend([(side, side)] if isinstance(side, int) else side)
                continue
            ranges.extend([(first, first)] if isinstance(first, int) else first)

    def class_atom(self) -> int | list[tuple[int, int]]:
        ch = self._peek()
        if ch != "\\":
            self.i += 1
            return ord(ch)
        self.i += 1
        esc = self._peek()
        if not esc:
            raise _JsSyntaxError("`\\` at the end of the pattern")
        if esc in _CLASS_ESCAPES:
            self.i += 1
            ranges, negated = _CLASS_ESCAPES[esc]
            return _complement(ranges) if negated else list(ranges)
        if esc == "b":
            self.i += 1
            return 0x08
        if esc == "-":
            self.i += 1
            return 0x2D
        if esc in "89":
            self.i += 1
            return ord(esc)
        return self.character_code(in_class=True)


def _backreference() -> RegexProblem:
    return RegexProblem(
        "E402",
        "backreferences are not supported: regexes run in linear time (RE2), so no "
        "pattern can hang a run",
        "repeat the group's pattern instead of referring back to it",
    )


def translate(pattern: str) -> str | RegexProblem:
    """The RE2 text of a JavaScript pattern (never empty, no raw `/` or line break), or
    the problem with it."""
    translator = _Translator(pattern)
    try:
        text = translator.run() or "(?:)"
    except _JsSyntaxError as err:
        hint = None
        if str(err).startswith("invalid group `(?") and pattern.find("(?") >= 0:
            hint = (
                "JavaScript has no inline flags such as (?i), and traceplay and cycgraph "
                "compile regexes without flags"
            )
        return RegexProblem("E401", f"invalid regex (JavaScript): {err}", hint)
    if translator.unsupported is not None:
        return translator.unsupported
    compiled = compile_regex(text)
    if isinstance(compiled, RegexProblem):
        return compiled
    return text
