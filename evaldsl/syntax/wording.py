"""Syntax errors in the user's words.

Takes a Lark parse error over one statement and gives one `Diagnostic`: what was expected,
said as ideas ("an assertion such as …", "a predicate such as …", "a value") and keyword
spellings, never a terminal's name; what was found (a whole word: keywords and numbers
end where a word ends, so `calledx` and `2times` are found as they are written); and a
did-you-mean for a misspelt keyword, an unknown escape or an unterminated string or
regex.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import Any

from lark import Token
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from evaldsl.language.ast import JSON_TYPES
from evaldsl.language.diagnostics import Diagnostic, Fixing, did_you_mean
from evaldsl.language.paths import unclosed_at, unclosed_problem
from evaldsl.language.source import Source, Span
from evaldsl.syntax.grammar import Start, plain_parser, spellings
from evaldsl.syntax.mistakes import Slip, dangling, parses, slip, split_words

_WORDS: dict[str, str] = {
    "STRING": "a quoted string",
    "INT": "a number",
    "DECIMAL": "a number",
    "DURATION": "a duration such as `2s`",
    "MONEY": "an amount such as `$0.05`",
    "NAME": "a name",
    "REGEX": "a regex such as `/x/`",
    "PATH": "a JSONPath such as `$.city`",
    "CMP_OP": "a comparison (`==`, `!=`, `<`, `<=`, `>`, `>=`)",
    "JSON_TYPE": (
        "a JSON type (`string`, `number`, `integer`, `boolean`, `array`, `object`, `null`)"
    ),
    "TARGET": "a target such as `package.module:function`",
    "_NL": "the end of the statement",
    "SEMICOLON": "the end of the statement",
    "$END": "the end of the statement",
}

# Terminal sets that stand for one idea: said as that idea instead of a long list of words.
# (A statement or an assertion can start here; a predicate is expected; a value is expected.)
_SUBJECT_STARTS = frozenset({"ANSWER", "TOOL", "TOKENS", "MEMORY", "STATUS", "LATENCY"})
_STATEMENT_STARTS = frozenset({"CASE", "CASSETTE", "SUITE", "TOOLS"})
_PREDICATE_STARTS = frozenset({"CALLED", "CONTAINS", "MATCHES", "JUDGED"})
_VALUE_STARTS = frozenset({"STRING", "INT", "LSQB", "LBRACE"})
_VALUE_TERMINALS = frozenset(
    {"STRING", "INT", "DECIMAL", "DURATION", "MONEY", "NAME", "TRUE", "FALSE", "NULL"}
    | {"LSQB", "LBRACE"}
)


def _one_of(parts: list[str]) -> str:
    """`a`; `a or b`; `a, b or c` (and `…` past twelve)."""
    if len(parts) > 12:
        parts = [*parts[:11], "…"]
    if len(parts) == 1:
        return parts[0]
    return ", ".join(parts[:-1]) + " or " + parts[-1]


def describe_expected(names: set[str]) -> tuple[str, list[str]]:
    """User words for a set of terminal names, and the keyword spellings among them.

    Never a terminal's name: a terminal without user words is left out.
    >>> describe_expected({"TIME", "TIMES"})[0]
    '`time` or `times`'
    """
    spell = spellings()
    keywords = sorted(spell[n] for n in names if n in spell and spell[n].isalpha())
    if "JSON_TYPE" in names:
        keywords += JSON_TYPES
    if names >= _SUBJECT_STARTS:
        if names >= _STATEMENT_STARTS:
            return (
                'a statement: an assertion such as `answer contains "x"` or `tool search called`, '
                'or a line such as `case "name"` or `cassette "x.jsonl"`',
                keywords,
            )
        return (
            'an assertion such as `answer contains "x"`, `tool search called` or `not …`',
            keywords,
        )
    if names >= _PREDICATE_STARTS:
        return (
            "a predicate such as `contains`, `matches`, `==`, `called`, `is empty` or `judged`",
            keywords,
        )
    rest = set(names)
    parts: list[str] = []
    if names >= _VALUE_STARTS:
        rest -= _VALUE_TERMINALS
        parts.append(
            'a value (`"text"`, `42`, `2s`, `$0.05`, `true`, `null`, `[…]`, `{…}`, a name)'
        )
    parts += [
        f"`{spell[n]}`"
        for n in sorted(rest, key=lambda n: spell.get(n, n))
        if n in spell and spell[n].isalpha()
    ]
    parts += [
        f"`{spell[n]}`"
        for n in sorted(rest)
        if n in spell and not spell[n].isalpha() and n != "SEMICOLON"
    ]
    words: list[str] = []
    for n in sorted(rest, key=lambda n: (n in ("_NL", "SEMICOLON", "$END"), n)):
        if n in _WORDS and _WORDS[n] not in words:
            words.append(_WORDS[n])
    parts += words
    if not parts:
        return "something else", keywords
    return _one_of(parts), keywords


def _describe_found(tok: Token) -> str:
    if tok.type in ("$END", "_NL", "SEMICOLON"):
        return "the end of the statement"
    return _quoted(str(tok))


def _quoted(found: str) -> str:
    """A token as a message says it found it, quoted: a long one (a name, a number of
    400 digits with letters run on) cut to its start."""
    return f"`{found}`" if len(found) <= 40 else f"`{found[:37]}...`"


_WORD_AT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
#: a verb and `not` run together without the apostrophe (`isnt`, `doesnt`, `cant`)
_NEGATED = re.compile(
    r"(?:is|are|was|were|do|does|did|ca|can|wo|has|have|had|should|could|would|must)nt$",
    re.IGNORECASE,
)
#: a number or an amount of money with letters run on (`2times`, `$5x`): numbers end
#: where a word ends (the grammar), so the lexer stops at its first digit (or makes a
#: token of the `$`), and the whole word is what was found (`_run_on`)
_RUN_ON = re.compile(r"\$?-?\d+(?:\.\d+)?[A-Za-z_]\w*")


def _run_on(text: str, at: int) -> tuple[int, int] | None:
    """The span of a number or an amount with letters run on that starts at `at`, where
    the lexer or the parser stopped at its first piece: the word written is what was
    found, not its piece. (One the parser stopped inside, `called 2.5times` at its `.`, is
    left at that piece: what was expected there is said of it.)"""
    m = _RUN_ON.match(text, at)
    return m.span() if m else None


#: the fraction of a number the parser stopped at, where it took a whole number
_FRACTION = re.compile(r"\.\d+(?:[A-Za-z_]\w*)?")


def _decimal_at(text: str, at: int) -> tuple[int, int] | None:
    """The span of a decimal number whose `.` is at `at`, where the parser took its whole
    part as a whole number and found no place for the rest (`called 2.5 times`)."""
    m = _FRACTION.match(text, at) if at and text[at - 1].isdigit() else None
    if m is None:
        return None
    begin = at
    while begin and text[begin - 1].isdigit():
        begin -= 1
    if begin and (text[begin - 1].isalnum() or text[begin - 1] in "_$."):
        return None  # (a digit of a name, an amount or a number already read otherwise)
    return begin, m.end()


#: The terminals each parser state stack accepts, as Lark's `accepts` finds them: it copies
#: the parser and feeds it each terminal the state allows, ~60% of checking a file of many
#: syntax errors, and what it finds depends on the state stack alone (the feeds run no
#: callbacks). Bounded: cleared when full.
_ACCEPTS: dict[tuple[int, tuple[Any, ...]], frozenset[str]] = {}
_ACCEPTS_KEPT = 4096


def _accepts(err: UnexpectedInput) -> frozenset[str] | None:
    """The terminals the parser accepted where `err` happened (`err.accepts` of an
    unexpected token), found once for each parser state stack.

    Asked of the parser for unexpected characters too: their `allowed` is what the
    state's lexer matches, where the keywords are folded into NAME (`grammar.py`'s
    `BracketNewlines`), so it names no keyword."""
    parser = getattr(err, "interactive_parser", None)
    if parser is None:
        return None
    state = parser.parser_state
    key = (id(state.parse_conf.parse_table), tuple(state.state_stack))
    found = _ACCEPTS.get(key)
    if found is None:
        if len(_ACCEPTS) >= _ACCEPTS_KEPT:
            _ACCEPTS.clear()
        found = _ACCEPTS[key] = frozenset(parser.accepts())
    return found


def syntax_diagnostic(
    source: Source, err: UnexpectedInput, base: int, stop: int, start: Start = "file"
) -> Diagnostic:
    """One diagnostic for the first syntax error of the statement `text[base:stop]`."""
    return explained(source, err, base, stop, start)[0]


def explained(
    source: Source, err: UnexpectedInput, base: int, stop: int, start: Start = "file"
) -> tuple[Diagnostic, Slip | None]:
    """The diagnostic for the first syntax error of the statement `text[base:stop]`, and
    the known mistake it is (`mistakes.py`), if it is one: then the diagnostic says that
    mistake where it is, with the statement as it should be written for its hint."""
    generic = _generic(source, err, base, stop)
    if isinstance(err, UnexpectedToken):
        at = stop - base if err.token.type == "$END" else err.token.start_pos or 0
    elif isinstance(err, UnexpectedCharacters):
        at = err.pos_in_stream or 0
    else:  # pragma: no cover - LALR reports $END as a token
        return generic, None
    statement = source.text[base:stop]
    unclosed = _unclosed_path(source, statement, at, base)
    if unclosed is not None:
        return unclosed, None
    if _typo_is_all(statement, at, generic.hint, start):
        # a misspelt keyword (`is strng`) is said as one, when its fix is all it needs
        return generic, None
    found = slip(statement, at, start, _guess_of(generic.hint))
    ending = dangling(statement, at)
    if ending is not None:
        # (the slip, if any, still recovers the statement before the operator)
        return _dangling(source, base, ending, start), found
    if found is None:
        return generic, None
    span = Span(base + found.start, base + max(found.end, found.start + 1))
    hint = f"write `{found.corrected}`"
    first, last = found.written
    fix = (Span(base + first, base + last), found.corrected)
    code = found.code or generic.code
    return Diagnostic.at(source, span, code, found.message, hint, fix=fix), found


def _dangling(source: Source, base: int, ending: tuple[str, int, int], start: Start) -> Diagnostic:
    """A statement that ends with `and`, `or`, `not`, `&&` or `||` at its line's end: the
    assertion meant to follow is on the next line, where it is a statement of its own.
    Deleting the operator would make two assertions that must both hold of an `or`: the
    fix joins the lines, where they then parse (the operator written as a word)."""
    text = source.text
    written, first, last = ending
    word = {"&&": "and", "||": "or"}.get(written, written)
    span = Span(base + first, base + last)
    message = f"`{written}` needs an assertion after it: a statement ends at its line's end"
    line_end = text.find("\n", base + last)
    rest = text[base + last : line_end if line_end >= 0 else len(text)]
    if line_end >= 0 and not rest.strip():
        next_end = text.find("\n", line_end + 1)
        following = text[line_end + 1 : next_end if next_end >= 0 else len(text)].strip()
        statement_start = base + len(text[base:]) - len(text[base:].lstrip())
        joined = f"{text[statement_start : base + first]}{word} {following}"
        if following and not following.startswith("#") and parses(joined, start):
            begins = text.index(following[0], line_end + 1)
            fix = (Span(base + first, begins), f"{word} ")
            hint = f"join the lines: `{joined}`"
            return Diagnostic.at(source, span, "E101", message, hint, fix=fix)
    hint = f"write the assertion after `{word}` on the same line"
    return Diagnostic.at(source, span, "E101", message, hint)


@lru_cache(maxsize=1)
def _lexemes() -> re.Pattern[str]:
    """Strings, regexes, comments and paths, from the grammar's own terminals (a `$` in
    a string is no path)."""
    lark = plain_parser()
    terms = ("STRING", "REGEX", "COMMENT")
    known = "|".join(str(lark.get_terminal(t).pattern.to_regexp()) for t in terms)
    path = lark.get_terminal("PATH").pattern.to_regexp()
    return re.compile(f"{known}|(?P<path>{path})")


def _unclosed_path(source: Source, statement: str, at: int, base: int) -> Diagnostic | None:
    """E404 at a path's `[` that is never closed (`args $.a[0 == 1`, `$.a['x] == 1`): the
    path's terminal ends before such a bracket, so the parse fails at it, and the generic
    wording ("expected `contains`, …, found `[`") would not say the path is wrong."""
    if not statement.startswith("[", at):
        return None
    for m in _lexemes().finditer(statement, 0, at):
        if m.group("path") is not None and m.end() == at:
            rest = statement[m.start() :].split("#", 1)[0].rstrip()
            cut = rest.find(" ", at - m.start())  # (the path as written: up to a space)
            shown = (rest if cut < 0 else rest[:cut]) + ("…" if cut >= 0 else "")
            problem = unclosed_problem(rest, (at - m.start(), "["), shown)
            message = problem.message
            quote = unclosed_at(rest)
            if quote is not None and quote[1] in "'\"":  # (`$.a['x]`: the `]` is in the key)
                message += f": its quote `{quote[1]}` is never closed, so the `]` is in the key"
            return Diagnostic.at(
                source, Span(base + at, base + at + 1), "E404", message, problem.hint
            )
    return None


def _guess_of(hint: str | None) -> str | None:
    """The word the generic did-you-mean (`did you mean `string`?`, `_guessed`) offers."""
    if hint is None or not hint.startswith("did you mean `"):
        return None
    return hint.split("`")[1]


def _typo_is_all(statement: str, at: int, hint: str | None, start: Start) -> bool:
    """Whether the generic did-you-mean (`did you mean `string`?`) fixes the statement
    and the word is not words run together that the statement reads better as
    (`calledonce` is `called once`, not `called`; `toolsearch` is `tool search`)."""
    guess = _guess_of(hint)
    if guess is None:
        return False
    for word in _WORD_AT.finditer(statement):
        if word.start() <= at < word.end() or word.start() == at:
            if word.group() in spellings().values():
                return False  # a keyword out of place is no typo (`no tools x`)
            before, after = statement[: word.start()], statement[word.end() :]
            if any(parses(before + apart + after, start) for apart in split_words(word.group())):
                return False
            fixed = statement[: word.start()] + guess + statement[word.end() :]
            return parses(fixed, start)
    return False


def _generic(source: Source, err: UnexpectedInput, base: int, stop: int) -> Diagnostic:
    """The diagnostic for a syntax error that is no known mistake: what was expected and
    what was found, with a did-you-mean."""
    text = source.text
    if isinstance(err, UnexpectedToken):
        tok = err.token
        expected = set(_accepts(err) or err.expected)
        at_end = tok.type in ("$END", "_NL", "SEMICOLON")
        if at_end:
            where = stop if tok.type == "$END" else base + (tok.start_pos or 0)
            start = _end_of_statement(text, where)
        else:
            start = base + (tok.start_pos or 0)
        end = start + (len(str(tok)) if not at_end else 1)
        wanted, keywords = describe_expected(expected)
        hint, fix = None, None
        if tok.type == "NAME" or (tok.type in spellings() and str(tok).isalpha()):
            guess = did_you_mean(str(tok), keywords)
            hint, fix = _guessed(str(tok), guess, Span(start, end))
        if hint is None and tok.type == "NAME" and "STRING" in expected and at_end is False:
            hint = f'text is quoted: "{tok}"'
        found = _describe_found(tok)
        decimal = None if at_end else _decimal_at(text, start)
        if decimal is not None:  # (`called 2.5 times`: stopped at the `.` after `2`)
            start, end = decimal
            message = f"found {_quoted(text[start:end])} where a whole number goes"
            return Diagnostic.at(source, Span(start, end), "E101", message)
        run_on = None if at_end else _run_on(text, start)
        if run_on is not None:  # (`$5x`: found as the word written, not its `$`)
            start, end = run_on
            found = _quoted(text[start:end])
        message = f"expected {wanted}, found {found}"
        return Diagnostic.at(source, Span(start, end), "E101", message, hint, fix=fix)
    if isinstance(err, UnexpectedCharacters):
        pos = base + (err.pos_in_stream or 0)
        char = text[pos] if pos < len(text) else ""
        expected = set(_accepts(err) or err.allowed or ())
        wanted, keywords = describe_expected(expected)
        if char in "\"'":
            return _string_diagnostic(source, pos, char)
        if char == "/" and text.startswith("//", pos) and "REGEX" in expected:
            # (a regex is `/…/` with something between: `//` lexes as no regex at all)
            return Diagnostic.at(
                source,
                Span(pos, pos + 2),
                "E401",
                "an empty regex `//`: it would match every text",
                "write what the text must match between the slashes: matches /\\d+ C/",
            )
        if char == "/":
            return Diagnostic.at(
                source,
                Span(pos, _line_end(text, pos)),
                "E102",
                "unterminated regex",
                "close it with / on the same line; write a literal / as \\/",
            )
        run_on = _run_on(text, pos)
        if run_on is not None:  # (a letter here always starts a NAME: every lexer reads one)
            found = _quoted(text[run_on[0] : run_on[1]])
            return Diagnostic.at(source, Span(*run_on), "E101", f"expected {wanted}, found {found}")
        if _invisible(char):  # (pasted from a web page or a chat; a backtick pair shows nothing)
            name = unicodedata.name(char, "a format character")
            return Diagnostic.at(
                source,
                Span(pos, pos + 1),
                "E103",
                f"unexpected invisible character U+{ord(char):04X} ({name}); expected {wanted}",
                "it often comes with text pasted from a web page or a chat: "
                + ("write a plain space" if char.isspace() else "delete it"),
                fix=(Span(pos, pos + 1), " " if char.isspace() else ""),
            )
        shown = repr(char) if char.isspace() or not char else f"`{char}`"
        if char.isalnum() and not char.isascii():  # (`tool café`: a name is ASCII)
            start, end = pos, pos + 1
            while start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_"):
                start -= 1
            while end < len(text) and (text[end].isalnum() or text[end] == "_"):
                end += 1
            word = text[start:end]
            return Diagnostic.at(
                source,
                Span(pos, pos + 1),
                "E103",
                f"unexpected character {shown}; expected {wanted}",
                f'a bare name is ASCII letters, digits and `_`: quote this one: "{word}"',
                fix=(Span(start, end), f'"{word}"'),
            )
        return Diagnostic.at(
            source, Span(pos, pos + 1), "E103", f"unexpected character {shown}; expected {wanted}"
        )
    if isinstance(err, UnexpectedEOF):  # pragma: no cover - LALR reports $END as a token
        return Diagnostic.at(source, Span(len(text), len(text)), "E101", "unexpected end of input")
    raise err  # pragma: no cover


def _invisible(char: str) -> bool:
    """Whether `char` is a character outside ASCII that shows as nothing, or as a plain
    blank (a no-break or zero-width space, a byte order mark, a bidi control, U+0085)."""
    return not char.isascii() and (
        char.isspace() or unicodedata.category(char) in ("Cf", "Zs", "Zl", "Zp")
    )


def _guessed(word: str, guess: str | None, span: Span) -> tuple[str | None, Fixing]:
    """The did-you-mean hint for a misspelt word at `span`, and its fix: the guess there."""
    if not guess or guess == word:
        return None, None
    if _NEGATED.fullmatch(word):
        return None, None  # `isnt` is `is not`: the nearest word `is` says the opposite
    return f"did you mean `{guess}`?", (span, guess)


_LOOSE_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'')
_ESCAPE = re.compile(r"\\(?:u[0-9a-fA-F]{4}|.)")
_GOOD_ESCAPES = {'"': frozenset('"\\/bfnrt'), "'": frozenset("'\"\\/bfnrt")}


def _string_diagnostic(source: Source, pos: int, quote: str) -> Diagnostic:
    """A string the lexer refused: an escape JSON does not know, or no closing quote."""
    text = source.text
    closed = _LOOSE_STRING.match(text, pos)
    if closed is not None:
        good = _GOOD_ESCAPES[quote]
        for bad in _ESCAPE.finditer(text, pos, closed.end()):
            if len(bad.group()) > 2 or bad.group()[1] in good:
                continue
            shown = bad.group()
            others = r" (and \' in single quotes)" if quote == "'" else ""
            return Diagnostic.at(
                source,
                Span(bad.start(), bad.start() + 2),
                "E104",
                f"unknown escape `{shown}` in a string",
                r"strings take JSON escapes: \n \t \r \" \\ \/ \b \f \uXXXX"
                + others
                + r"; write a backslash as \\",
            )
    return Diagnostic.at(
        source,
        Span(pos, _line_end(text, pos)),
        "E102",
        "unterminated string",
        f"close it with {quote} on the same line",
    )


def _line_end(text: str, pos: int) -> int:
    end = text.find("\n", pos)
    return end if end >= 0 else len(text)


def _end_of_statement(text: str, pos: int) -> int:
    """Where to point when a statement ends too early: just after its last character."""
    pos = min(pos, len(text))
    while pos > 0 and text[pos - 1] in " \t\r\n;":
        pos -= 1
    return pos
