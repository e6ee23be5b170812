"""Regexes: compile regex literals once, with a linear-time engine.

Takes a pattern and its flags as written (`/\\d+ C/i`) and gives a compiled RE2 pattern,
or a `RegexProblem` saying why it cannot be used (a syntax error, a construct RE2 cannot
run in linear time such as a backreference or a lookaround, an unknown flag). RE2 never
backtracks, so no pattern can hang a run whatever text it meets; and like JavaScript
(the dialect of traceplay and cycgraph) its `$` does not match before a final newline and
its `\\d` is ASCII.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

import attrs
import re2

from evaldsl.cache.regexes import regex
from evaldsl.language.jsjson import surrogate_pair

FLAGS = "ims"


@attrs.frozen
class RegexProblem:
    """Why a regex cannot be compiled: a diagnostic code, a message, a hint."""

    code: str
    message: str
    hint: str | None = None


def _options() -> Any:
    options = re2.Options()
    options.log_errors = False  # RE2 would print every rejected pattern to stderr
    return options


_OPTIONS = _options()  # never changed: RE2 copies the options it is made with
_REGEXP: Any = getattr(re2, "_Regexp", None)


def make_pattern(text: str) -> Any:
    """`re2.compile(text, options)`, a quarter of its time: google-re2's `compile` copies
    the options into a fresh object (a getattr and a setattr per option) for an LRU cache
    of its own, three quarters of compiling a short pattern, and then makes its pattern
    class, which is made here directly (the same object; `compile_regex` caches). A
    google-re2 without that class gets `re2.compile`. Raises `re2.error` as it does."""
    if _REGEXP is None:
        return re2.compile(text, _OPTIONS)
    return _REGEXP(text, _OPTIONS)


# RE2's messages for constructs it refuses by design (most specific first).
_UNSUPPORTED = (
    ("invalid perl operator: (?<=", "lookbehinds"),
    ("invalid perl operator: (?<!", "negative lookbehinds"),
    ("invalid perl operator: (?=", "lookaheads"),
    ("invalid perl operator: (?!", "negative lookaheads"),
)

# RE2's words for a backreference: `\1` to `\9` (`\12` is octal, read), and those of
# other dialects for one to a named group (`\k<n>`, `\g1`, `\g{n}`); `(?P=n)` RE2 says as
# its `(?P`, which `(?P<n>…)` (a named group, read) begins too
_BACKREFERENCE = regex(r"invalid escape sequence: \\(?:[1-9]|k|g)$")
# RE2's words for recursion and subroutine calls (PCRE's `(?R)`, `(?1)`, `(?&n)`)
_RECURSION = regex(r"invalid perl operator: \(\?(?:R|&|[0-9]|[+-][0-9])")
# RE2's words for a `\x` escape that is no code point: RE2 quotes a part of it
_HEX_ESCAPE = regex(r"invalid escape sequence: \\x")

# A code point as other dialects write it (JavaScript, Python, Java: `\u00e9`, `\U0001F600`,
# `\u{1F600}`), after any run of backslashes (an odd run escapes the `u`); RE2 writes
# `\x{e9}` and refuses the others as "invalid escape sequence: \u"
_CODE_POINT = regex(
    r"(?<!\\)(?:\\\\)*(?P<escape>\\(?:u(?P<four>[0-9A-Fa-f]{4})(?:\\u(?P<low>[0-9A-Fa-f]{4}))?"
    r"|U(?P<eight>[0-9A-Fa-f]{8})|u\{(?P<braced>[0-9A-Fa-f]{1,8})\}))"
)


def _whole_escape(pattern: str, text: str) -> str:
    """The `\\x` escape RE2's message `text` quotes a part of, as the pattern writes it
    (RE2 cuts `\\x{110000}` to `\\x{110000` and `\\x{FFFFFFFFF}` to `\\x{FFFFFF`)."""
    quoted = text.removeprefix("invalid escape sequence: ")
    at = pattern.find(quoted)
    if at < 0 or not quoted.startswith("\\x{"):
        return quoted
    close = pattern.find("}", at + len(quoted), at + len(quoted) + 16)
    return pattern[at : close + 1] if close >= 0 else quoted


def _code_point_hint(pattern: str) -> str | None:
    r"""The hint for the first code point escape RE2 does not read (`\u00e9`): the same
    code point as RE2 writes it (`\x{00e9}`); a surrogate pair (`\ud83d\ude00`) is
    the one character it makes (`\x{1F600}`)."""
    m = _CODE_POINT.search(pattern)
    if m is None:
        return None
    digits = m.group("four") or m.group("eight") or m.group("braced") or ""
    escape = m.group("escape")
    low = m.group("low")
    if low is not None:
        pair = surrogate_pair(int(digits, 16), int(low, 16))
        if pair is not None:
            digits = f"{pair:X}"
        else:
            escape = escape[:6]  # (two characters: the first one's escape is said)
    if int(digits, 16) > 0x10FFFF or 0xD800 <= int(digits, 16) <= 0xDFFF:
        return None  # (no character: RE2 refuses its `\x{…}` too)
    return f"RE2 writes a code point as `\\x{{…}}`: write `\\x{{{digits}}}` for `{escape}`"


@lru_cache(maxsize=4096)
def compile_regex(pattern: str, flags: str = "") -> Any | RegexProblem:
    """A compiled pattern (with `.search(text)`), or the problem with it.

    >>> compile_regex(r"\\d+ C").search("31 C") is not None
    True
    >>> compile_regex(r"(a)\\1").code
    'E402'
    """
    unknown = sorted(set(flags) - set(FLAGS))
    if unknown:
        return RegexProblem(
            "E403",
            f"unknown regex flag{'s' if len(unknown) > 1 else ''} `{''.join(unknown)}`",
            "the flags are i (ignore case), m (^ and $ at line ends), s (. matches newline)",
        )
    prefix = f"(?{''.join(sorted(set(flags)))})" if flags else ""
    try:
        return make_pattern(prefix + pattern)
    except UnicodeEncodeError as err:
        # RE2 reads UTF-8, and a lone surrogate (from an `each` row's "\ud800", or a
        # Python string) is none: it raised from RE2's encoding of the pattern
        half = ord(str(err.object)[err.start])
        return RegexProblem(
            "E401",
            f"invalid regex: it holds a lone UTF-16 surrogate U+{half:04X}, half of a "
            "character, which no text holds",
            "write the whole character (both halves), or remove it",
        )
    except re2.error as err:
        text = err.args[0].decode() if err.args and isinstance(err.args[0], bytes) else str(err)
        for needle, what in _UNSUPPORTED:
            if text.startswith(needle):
                return RegexProblem(
                    "E402",
                    f"{what} are not supported: regexes run in linear time (RE2), so no "
                    "pattern can hang a run",
                    "rewrite the pattern without it",
                )
        if _BACKREFERENCE.match(text) or (
            text == "invalid perl operator: (?P" and "(?P=" in pattern
        ):
            return RegexProblem(
                "E402",
                "backreferences are not supported: regexes run in linear time (RE2), so no "
                "pattern can hang a run",
                "repeat the group's pattern instead of referring back to it",
            )
        if _RECURSION.match(text) or (text == "invalid perl operator: (?P" and "(?P>" in pattern):
            return RegexProblem(
                "E402",
                "recursion (a group calling a group) is not supported: regexes run in "
                "linear time (RE2), so no pattern can hang a run",
                "write the group's pattern out where it is called",
            )
        if _HEX_ESCAPE.match(text):  # (`\x{110000}`, `\x{1`, `\x1`: said as an escape)
            return RegexProblem(
                "E401",
                f"invalid regex: `{_whole_escape(pattern, text)}` is no code point",
                "a code point is written `\\x{…}` of at most 10FFFF (`\\x{e9}`), or `\\x` "
                "and two hex digits (`\\xe9`)",
            )
        hint = None
        if text.startswith(("invalid escape sequence: \\u", "invalid escape sequence: \\U")):
            hint = _code_point_hint(pattern)
        return RegexProblem("E401", f"invalid regex: {text}", hint)


def matches_everything(compiled: Any) -> bool:
    """A pattern that matches the empty text is found in every text: the test cannot fail."""
    return compiled.search("") is not None


def searcher(compiled: Any) -> Callable[[str], bool]:
    """Whether the pattern is found in a text, as a plain function: `compiled.search(t)
    is not None`, without building the match object (google-re2's `search` converts
    every offset back to characters in Python: most of its time). Reads the wrapper's
    compiled RE2 object; a wrapper without one gets `search` itself.

    >>> searcher(compile_regex(r"\\d+ C"))("it is 31 C")
    True
    """
    regexp = getattr(compiled, "_regexp", None)
    match = getattr(regexp, "Match", None)
    anchor = getattr(getattr(re2, "_Anchor", None), "UNANCHORED", None)
    if match is None or anchor is None:
        return lambda text: compiled.search(text) is not None
    null = (-1, -1)

    def found(text: str) -> bool:
        encoded = text.encode("utf-8")
        return bool(match(anchor, encoded, 0, len(encoded))[0] != null)

    return found
