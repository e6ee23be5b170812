"""Known mistakes: a statement that did not parse, recognised as a slip people make.

Takes one statement's text and where its parse failed, and gives a `Slip`: what was
wrong, in the user's words, where, and the statement as it should be written (for the
hint). A slip is only given when its fix parses: a rule that fits the words but not the
statement says nothing, and the generic wording (`wording.py`) is used. A fix may leave
a second mistake (`tool search caled 2x`): up to three rounds of fixes are tried, and
the hint shows the statement with all of them. Only text with a syntax error comes here.

The rules are a table of (pattern, fix); each pattern runs over the statement with its
strings, regexes and paths blanked (`answer contains "is not"` has no `is not`), and
fires only where the parse failed. They are what users coming from English, traceplay
YAML and other test DSLs write: `called 2x`, `not called`, `tokens < 2,000`, `5 sec`,
`args city == …`, `answer = "x"`, `answer does not contain "x"`, `// comment`, `&&`.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator
from functools import lru_cache
from itertools import chain, islice

import attrs

from evaldsl.language.diagnostics import did_you_mean
from evaldsl.language.limits import integer_problem
from evaldsl.syntax.grammar import Start, plain_parser, spellings

#: how many fixes one statement's hint may need (`tool search callled 2 tiems`: two)
ROUNDS = 3


@attrs.frozen
class Slip:
    """A recognised mistake: a message, the span to underline (in the statement), the
    statement as it should be written, and whether that is the same text with characters
    blanked out (so its parse keeps every position: `recovered`). `written` is the part
    of the statement `corrected` replaces (all of it but its white space around and its
    comment): an editor's quick fix."""

    message: str
    start: int
    end: int
    corrected: str
    code: str | None = None
    recovered: str | None = None
    written: tuple[int, int] = (0, 0)


Edit = tuple[int, int, str]  # (start, end, replacement) in the statement


@attrs.frozen
class _Found:
    message: str
    start: int
    end: int
    edits: tuple[Edit, ...]
    code: str | None = None


_Rule = Callable[["_Statement"], Iterator[_Found]]
_RULES: list[_Rule] = []


def _rule(fn: _Rule) -> _Rule:
    _RULES.append(fn)
    return fn


@lru_cache(maxsize=1)
def _blanks() -> re.Pattern[str]:
    """Strings, regexes, paths and comments, from the grammar's own terminals."""
    lark = plain_parser()

    def term(name: str) -> str:
        return str(lark.get_terminal(name).pattern.to_regexp())

    return re.compile(
        f"(?P<comment>{term('COMMENT')})|{term('STRING')}|{term('REGEX')}|{term('PATH')}"
    )


class _Statement:
    """One statement's text (without its comment), the same text with its strings,
    regexes and paths blanked (each keeps its first character), and the error offset."""

    def __init__(self, text: str, at: int) -> None:
        masked = list(text)
        cut = len(text)
        for m in _blanks().finditer(text):
            if m.group("comment") is not None:
                cut = m.start()
                break
            for i in range(m.start() + 1, m.end()):
                masked[i] = "\x00"
        self.text = text[:cut]
        self.masked = "".join(masked[:cut])
        self.at = min(at, len(self.text.rstrip()))

    def find(self, pattern: re.Pattern[str]) -> Iterator[re.Match[str]]:
        """The pattern's matches that hold (or touch) the error position."""
        for m in pattern.finditer(self.masked):
            # (or the parse failed at the next word: `answer is "x"` fails at `"x"`)
            end = m.end()
            while end < len(self.masked) and self.masked[end] in " \t":
                end += 1
            if m.start() <= self.at <= end:
                yield m


def _swap(
    m: re.Match[str], new: str, message: str, group: str = "bad", code: str | None = None
) -> _Found:
    """Replace a group of the match (the mistake) with `new`."""
    return _Found(
        message, m.start(group), m.end(group), ((m.start(group), m.end(group), new),), code
    )


def _edit(s: _Statement, edits: list[Edit]) -> str:
    text = s.text
    for start, end, new in sorted(edits, reverse=True):
        text = text[:start] + new + text[end:]
    return text


# ---- counts ---------------------------------------------------------------------------

_NUMBER_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5,
    "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
}  # fmt: skip


def _count(digits: str) -> int | None:
    """The number a count's digits say, or `None` past the language's integers (a count
    of 5,000 digits: `int` refuses it, and no count that large is worth a hint)."""
    return None if integer_problem(digits) is not None else int(digits)


def _times(n: int) -> str:
    return {1: "once", 2: "twice"}.get(n, f"{n} times")


# (ASCII: under re.I alone `ſix` matches `six`, and its lower case is no key of the table)
_COUNT_WORD = re.compile(
    r"\bcalled\s+(?P<bad>(?P<w>" + "|".join(_NUMBER_WORDS) + r")(?:\s+times?)?)\b",
    re.I | re.A,
)


@_rule
def _count_in_words(s: _Statement) -> Iterator[_Found]:
    for m in s.find(_COUNT_WORD):
        n = _NUMBER_WORDS[m.group("w").lower()]
        if n == 0:
            yield _Found(
                "a tool that must not be called is `never called`",
                m.start("bad"),
                m.end("bad"),
                ((m.start(), m.end(), "never called"),),
            )
        else:
            yield _swap(m, _times(n), f"a count is written in digits: `{_times(n)}`")


_COUNT_X = re.compile(r"\bcalled\s+(?P<bad>(?P<n>\d+)\s*[x×])(?!\w)")


@_rule
def _count_x(s: _Statement) -> Iterator[_Found]:
    for m in s.find(_COUNT_X):
        n = _count(m.group("n"))
        if n is None:
            continue
        yield _swap(m, _times(n), f"a count is written `{_times(n)}`")


_COUNT_OP = re.compile(
    r"\bcalled\s+(?P<bad>(?P<op>>=|<=|==|=|>|<|≥|≤)\s*(?P<n>\d+)(?:\s+times?)?)(?!\w)"
)
_COUNT_WORDS = re.compile(
    r"\bcalled\s+(?P<bad>(?P<how>more\s+than|over|above|greater\s+than|fewer\s+than|less\s+than"
    r"|under|below|exactly|at\s+least|at\s+most|no\s+more\s+than|no\s+fewer\s+than)\s+"
    r"(?P<n>\d+|once|twice)(?:\s+times?)?)(?!\w)"
)
_COUNT_OR = re.compile(
    r"\bcalled\s+(?P<bad>(?P<n>\d+|once|one|twice|two)\s+(?:times?\s+)?or\s+"
    r"(?P<how>more|fewer|less)(?:\s+times?)?)(?!\w)"
)


def _bound(low: int | None, high: int | None) -> str | None:
    """`at least 2 times`, `at most 1 time`, `2 times` (or `called` alone: at least once)."""
    if low is not None and high is not None:
        return _times(low) if low == high else f"between {low} and {high} times"
    if low is not None:
        return "" if low == 1 else f"at least {low} time{'s' if low != 1 else ''}"
    if high is not None and high >= 0:
        return f"at most {high} time{'s' if high != 1 else ''}"
    return None


def _count_fix(m: re.Match[str], bound: str | None) -> _Found | None:
    if bound is None:
        return None
    said = " ".join(m.group("bad").split())
    if bound == "":  # at least once: `called` says it
        return _Found(
            f"`called {said}` is written `called`: alone it means at least once",
            m.start("bad"),
            m.end("bad"),
            ((m.start() + len("called"), m.end("bad"), ""),),
        )
    return _swap(m, bound, f"`called {said}` is written `called {bound}`")


def _int(word: str) -> int | None:
    return {"once": 1, "one": 1, "twice": 2, "two": 2}.get(word) or _count(word)


def _count_compared(s: _Statement) -> Iterator[_Found]:
    for m in s.find(_COUNT_OP):
        n, op = _count(m.group("n")), m.group("op")
        if n is None:
            continue
        low, high = {
            ">=": (n, None), "≥": (n, None), ">": (n + 1, None),
            "<=": (None, n), "≤": (None, n), "<": (None, n - 1),
            "==": (n, n), "=": (n, n),
        }[op]  # fmt: skip
        found = _count_fix(m, _bound(low, high))
        if found is not None:
            yield found
    for m in s.find(_COUNT_WORDS):
        n, how = _int(m.group("n")), " ".join(m.group("how").split())
        if n is None:
            continue
        low, high = {
            "more than": (n + 1, None), "over": (n + 1, None), "above": (n + 1, None),
            "greater than": (n + 1, None), "no fewer than": (n, None), "at least": (n, None),
            "fewer than": (None, n - 1), "less than": (None, n - 1), "under": (None, n - 1),
            "below": (None, n - 1), "no more than": (None, n), "at most": (None, n),
            "exactly": (n, n),
        }[how]  # fmt: skip
        found = _count_fix(m, _bound(low, high))
        if found is not None:
            yield found
    for m in s.find(_COUNT_OR):
        n, how = _int(m.group("n")), m.group("how")
        if n is None:
            continue
        low, high = (n, None) if how == "more" else (None, n)
        found = _count_fix(m, _bound(low, high))
        if found is not None:
            yield found


_COUNT_NO_TIMES = re.compile(
    r"\bcalled\s+(?P<bad>(?:at\s+(?:least|most)\s+|between\s+\d+\s+and\s+)?\d+)"
    r"(?=\s*(?:$|\band\b|\bor\b|\)))"
)


@_rule
def _count_without_times(s: _Statement) -> Iterator[_Found]:
    for m in s.find(_COUNT_NO_TIMES):
        n = m.group("bad").split()[-1]
        word = "time" if n in ("1", "-1") else "times"
        yield _Found(
            f"a count ends with `{word}`",
            m.end("bad"),  # (where it is missing: just after the number)
            m.end("bad"),
            ((m.end("bad"), m.end("bad"), f" {word}"),),
        )


_rule(_count_compared)  # (after `_count_without_times`: `at least 2` only lacks `times`)

_ONCE_TIMES = re.compile(r"\bcalled\s+(?:once|twice)(?P<bad>\s+times?)\b")
_RANGE_AND = re.compile(
    r"\bcalled\s+(?P<bad>at\s+least\s+(?P<a>\d+)\s+times?\s+and\s+at\s+most\s+(?P<b>\d+)"
    r"(?:\s+times?)?)(?!\w)"
)
_CALLED_NEVER = re.compile(r"\b(?P<bad>called\s+never)\b")


@_rule
def _count_shapes(s: _Statement) -> Iterator[_Found]:
    for m in s.find(_ONCE_TIMES):
        yield _swap(m, "", "`once` and `twice` take no `times`")
    for m in s.find(_RANGE_AND):
        fixed = f"between {m.group('a')} and {m.group('b')} times"
        yield _swap(m, fixed, f"a range of counts is written `{fixed}`")
    for m in s.find(_CALLED_NEVER):
        yield _swap(m, "never called", "`called never` is written `never called`")


_NOT_CALLED = re.compile(
    r"\b(?P<bad>(?:is\s+not|was\s+not|isn't|wasn't|isnt|wasnt|not|never\s+been|never\s+was"
    r"|is\s+never|was\s+never|hasn't\s+been|has\s+not\s+been|has\s+never\s+been|should\s+not\s+be"
    r"|must\s+not\s+be|shouldn't\s+be|mustn't\s+be)\s+called)\b"
)
_IS_CALLED = re.compile(
    r"\b(?P<bad>(?:is|was|has\s+been|gets|got|were|are|should\s+be|must\s+be|is\s+being)\s+)called\b"
)


@_rule
def _called_phrasing(s: _Statement) -> Iterator[_Found]:
    for m in s.find(_NOT_CALLED):
        yield _swap(m, "never called", "a tool that must not be called is `never called`")
    for m in s.find(_IS_CALLED):
        yield _swap(m, "", "write `called` alone: `tool NAME called`")


# (`calls` is a keyword, a subject of its own: no typo of `called`, so the did-you-mean
# never offers it; as a tool's predicate it is the verb in another tense)
_CALLS = re.compile(r"\btool\s+\S+\s+(?P<bad>calls|call|calling)\b")


@_rule
def _called_tense(s: _Statement) -> Iterator[_Found]:
    """`tool search calls 2`: the predicate is `called` (its count fixed after it)."""
    for m in s.find(_CALLS):
        yield _swap(m, "called", f"`{m.group('bad')}` is written `called`")


_NO_TOOLS = re.compile(r"\bno\s+(?P<bad>tools)\s+[\w\"']")
_EVERY_NAME = re.compile(r"^\s*every\s+(?P<bad>[A-Za-z_]\w*)\s+(?:args|result|called)\b")
_DASHED_TOOL = re.compile(
    r"\b(?:tool|no\s+tool|every\s+tool)\s+(?P<bad>[A-Za-z_][\w]*(?:(?P<sep>[-.])(?!args\b|result\b)[\w]+)+)"
)  # (`tool x.args.city`: another mistake, `_paths`)


@_rule
def _tool_names(s: _Statement) -> Iterator[_Found]:
    for m in s.find(_NO_TOOLS):
        yield _swap(m, "tool", "`no` takes one tool: `no tool` and its name")
    for m in s.find(_EVERY_NAME):
        if m.group("bad") != "tool":
            yield _swap(m, f"tool {m.group('bad')}", "`every` is followed by `tool NAME`")
    for m in s.find(_DASHED_TOOL):
        name, sep = m.group("bad"), m.group("sep")
        yield _swap(m, f'"{name}"', f'a name with `{sep}` in it is quoted: `"{name}"`')


# ---- predicates -------------------------------------------------------------------------

_VERBS = {
    "contain": "contains", "include": "contains", "includes": "contains",
    "containing": "contains", "match": "matches", "matching": "matches",
    "start with": "starts with", "begins with": "starts with", "begin with": "starts with",
    "end with": "ends with", "have": "has", "equals": "==", "equal": "==",
    "equal to": "==", "equals to": "==", "is equal to": "==", "is equal": "==",
    "is equals": "==", "is equals to": "==", "eq": "==", "is": "==",
}  # fmt: skip
_VERB = re.compile(
    r"(?<![\w.])(?P<bad>contain|include|includes|containing|match|matching|start\s+with"
    r"|begins?\s+with|end\s+with|have|(?:is\s+)?equals?(?:\s+to)?|eq|is)"
    r"(?=\s+(?!empty\b|json\b|not\b|string\b|number\b|integer\b|boolean\b|array\b|object\b"
    r"|null\b|called\b|visited\b"
    # (a comparison in words after `is` is `_compare_words`' to say: `tokens is under 5`
    # is `tokens < 5`, where this rule made it `tokens == "under 5"`)
    r"|(?:less|fewer|more|greater)\s+than\b|under\b|below\b|over\b|above\b"
    r"|at\s+(?:most|least)\b|no\s+(?:more|less)\s+than\b)[^\s;])"
)


@_rule
def _verb(s: _Statement) -> Iterator[_Found]:
    for m in s.find(_VERB):
        word = " ".join(m.group("bad").split())
        new = _VERBS.get(word)
        if new is None:
            # a spelling the pattern takes and the table lacks gets no hint, never a
            # crash (`answer is equal 5` raised KeyError here: the table now has it)
            continue
        said = m.group("bad")
        if new == "==":
            yield _swap(m, new, f"a comparison is written `==`, not `{said}`")
        else:
            yield _swap(m, new, f"`{said}` is written `{new}`")


_OPERATORS = {
    "===": "==", "=": "==", "= =": "==", "!==": "!=", "<>": "!=", "≠": "!=", "=<": "<=",
    "< =": "<=", "≤": "<=", "=>": ">=", "> =": ">=", "≥": ">=", "! =": "!=",
    "~=": "matches", "=~": "matches", "~": "matches",
}  # fmt: skip
_OPERATOR = re.compile(r"(?P<bad>===|!==|=<|=>|<>|=~|~=|[<>!=]\s+=|[≠≤≥~]|(?<![=!<>])=(?![=<>]))")


@_rule
def _operator(s: _Statement) -> Iterator[_Found]:
    for m in s.find(_OPERATOR):
        # (`= =` with any run of blanks between: the table writes one space)
        new = _OPERATORS.get(" ".join(m.group("bad").split()))
        if new is None:  # (see `_verb`)
            continue
        message = f"`{m.group('bad')}` is written `{new}`"
        if new.isalpha():
            # a word needs blanks where the sign had none (`$.city~ x` is no `$.citymatches
            # x`: a path would take the word in): the hint, if its statement parses
            before = s.text[m.start("bad") - 1 : m.start("bad")]
            after = s.text[m.end("bad") : m.end("bad") + 1]
            word = (" " if before and not before.isspace() else "") + new
            word += " " if after and not after.isspace() else ""
            yield _Found(
                message, m.start("bad"), m.end("bad"), ((m.start("bad"), m.end("bad"), word),)
            )
            continue
        listed = new in ("==", "!=") and _LIST_SUBJECT.match(s.text[: m.start("bad")])
        name = _ONE_NAME.match(s.text, m.end("bad")) if listed else None
        if name is not None:
            # (`tools = search` is `tools == [search]`: `tools == search` compares a list
            # with a name, E205, a hint that led to a second mistake)
            sign = (m.start("bad"), m.end("bad"), new)
            listed_name = (name.start(1), name.end(1), f"[{name.group(1)}]")
            yield _Found(message, m.start("bad"), m.end("bad"), (sign, listed_name))
            continue
        yield _swap(m, new, message)


#: A statement's start that compares the list of tools or nodes (`tools`, `nodes`), and a
#: lone name after its sign (to the statement's end).
_LIST_SUBJECT = re.compile(r"\s*(?:tools|nodes)\s*\Z")
_ONE_NAME = re.compile(r"\s*([A-Za-z_][\w.-]*|\"(?:[^\"\\]|\\.)*\")\s*\Z")


_NOT_EMPTY = re.compile(r"\b(?P<bad>is\s+not|isn't|isnt|is\s+non-?)\s*empty\b")


@_rule
def _not_empty(s: _Statement) -> Iterator[_Found]:
    for m in s.find(_NOT_EMPTY):
        said = s.text[m.start() : m.end()]
        yield _Found(
            f"`{said}` is written `not empty`",
            m.start("bad"),
            m.end(),
            ((m.start(), m.end(), "not empty"),),
        )


_NEGATED = re.compile(
    r"(?P<bad>\b(?:does\s+not|doesn't|doesnt|do\s+not|don't|dont|not|should\s+not|must\s+not"
    r"|shouldn't|mustn't)\s+|!)(?P<verb>contains?|includes?|match(?:es)?|starts?\s+with|ends?\s+with"
    r"|has|have|visited)\b"
    r"|(?P<bad2>\b(?:excludes|lacks|omits))\b"
)
_SUBJECT_START = re.compile(r"(?:^|\band\b|\bor\b|\()\s*")
_SUBJECT_VERB = {"contain": "contains", "include": "contains", "includes": "contains",
                 "match": "matches", "have": "has"}  # fmt: skip


@_rule
def _negated(s: _Statement) -> Iterator[_Found]:
    """`answer does not contain "x"`: `not` goes before the assertion."""
    for m in s.find(_NEGATED):
        begin = 0
        for opening in _SUBJECT_START.finditer(s.masked, 0, m.start()):
            begin = opening.end()
        if s.masked[begin:].lstrip().startswith("every"):
            continue  # (`not every …` means another thing)
        if m.group("bad2") is not None:
            edits = [(m.start("bad2"), m.end("bad2"), "contains")]
            start, end = m.start("bad2"), m.end("bad2")
        else:
            verb = " ".join(m.group("verb").split())
            verb = _SUBJECT_VERB.get(verb, verb)
            verb = {"start with": "starts with", "end with": "ends with"}.get(verb, verb)
            edits = [(m.start("bad"), m.end("verb"), verb)]
            start, end = m.start("bad"), m.end("verb")
        if m.group("bad2") is None and m.group("verb") == "visited":
            edits = [(m.start("bad"), m.end("bad"), "")]  # `node x not visited`: only `not` moves
        edits.append((begin, begin, "not "))
        yield _Found("`not` goes before the assertion it negates", start, end, tuple(edits))


_STARTS = re.compile(r"\b(?P<bad>starts|ends)(?=\s+[\"'])")


@_rule
def _starts_without_with(s: _Statement) -> Iterator[_Found]:
    for m in s.find(_STARTS):
        yield _swap(m, f"{m.group('bad')} with", f"write `{m.group('bad')} with`, then the text")


_STRING_RE = re.compile(
    r"\b(?:matches|match|matching)\s+(?P<bad>r?(?P<q>[\"'])(?P<body>(?:(?!(?P=q))[^\\\n]|\\.)*)(?P=q))"
)


@_rule
def _string_for_regex(s: _Statement) -> Iterator[_Found]:
    # over the text itself: a string the lexer refused (`"\d+"`) is not blanked
    for m in _STRING_RE.finditer(s.text):
        if not m.start() <= s.at <= m.end():
            continue
        quote, body = m.group("q"), m.group("body")
        body = body.replace("\\" + quote, quote).replace("/", "\\/").replace("\\\\/", "\\/")
        new = f"/{body}/"
        yield _swap(m, new, f"a regex is written between slashes: `{new}`", code="E101")


_CURLY = re.compile(r"(?P<bad>[“”„‟«»‘’‚‛](?P<body>[^“”„‟«»‘’‚‛\n]*)[“”„‟«»‘’‚‛])")


@_rule
def _curly_quotes(s: _Statement) -> Iterator[_Found]:
    for m in s.find(_CURLY):
        new = json.dumps(m.group("body"), ensure_ascii=False)
        yield _swap(m, new, 'curly quotes: strings are written with straight quotes `"`')


_BARE_LIST = re.compile(
    r"(?P<kw>\b(?:contains\s+all|contains\s+any|in\s+order|only|in)|==|!=)\s+"
    r"(?P<bad>(?P<open>\()?(?P<items>[^\[\](){};,]+(?:,[^\[\](){};,]+)+)(?(open)\)))\s*$"
)
_AND_LIST = re.compile(
    r"\b(?P<kw>contains)\s+(?P<bad>(?P<a>[\w\"'][^\s,]*)\s+(?P<join>and|or)\s+(?P<b>[\w\"'][^\s,]*))\s*$"
)


@_rule
def _lists(s: _Statement) -> Iterator[_Found]:
    for m in s.find(_BARE_LIST):
        items = ", ".join(i.strip() for i in s.text[m.start("items") : m.end("items")].split(","))
        yield _swap(m, f"[{items}]", f"a list is written in brackets: `[{items}]`")
    for m in s.find(_AND_LIST):
        a, b = s.text[m.start("a") : m.end("a")], s.text[m.start("b") : m.end("b")]
        if a in _keywords() or b in _keywords():
            continue
        which = "all" if m.group("join") == "and" else "any"
        yield _Found(
            f"`{m.group('join')}` joins two assertions; "
            f"for two values write `contains {which} [{a}, {b}]`",
            m.start("bad"),
            m.end("bad"),
            ((m.start("kw"), m.end("bad"), f"contains {which} [{a}, {b}]"),),
        )


_TWO_VALUES = re.compile(r"\b(?P<kw>contains)\s+(?P<a>[\"'][^\n]*?)\s+(?P<bad>[\"'][^\n]*?)\s*$")


@_rule
def _two_values(s: _Statement) -> Iterator[_Found]:
    for m in s.find(_TWO_VALUES):
        a, b = s.text[m.start("a") : m.end("a")], s.text[m.start("bad") : m.end("bad")]
        yield _Found(
            f"one value per `contains`; for both write `contains all [{a}, {b}]`",
            m.start("bad"),
            m.end("bad"),
            ((m.start("kw"), m.end("bad"), f"contains all [{a}, {b}]"),),
        )


@_rule
def _missing_comma(s: _Statement) -> Iterator[_Found]:
    """`[search summarize]`: an item right after an item, inside brackets."""
    at, masked = s.at, s.masked
    before = masked[:at].rstrip()
    if not before or (
        before[-1] not in "\"'\x00]}" and not before[-1].isalnum() and before[-1] != "_"
    ):
        return
    if masked.count("[", 0, at) + masked.count("{", 0, at) <= masked.count(
        "]", 0, at
    ) + masked.count("}", 0, at):
        return
    if at >= len(masked) or masked[at] in ",]}:":
        return
    yield _Found(
        "the items of a list are separated by `,`",
        len(before),
        at,
        ((len(before), at, ", "),),
    )


# ---- numbers, durations, money ---------------------------------------------------------

_THOUSANDS = re.compile(r"(?<![\w.$,])(?P<bad>-?\d{1,3}(?:,\d{3})+(?:\.\d+)?)(?![\w,])")
_UNDERSCORES = re.compile(r"(?<![\w.$])(?P<bad>-?\d+(?:_\d+)+(?:\.\d+)?)(?!\w)")
_SUFFIX = re.compile(
    r"(?<![\w.$])(?P<bad>(?P<n>\d+(?:\.\d+)?)\s?(?P<s>[kK]|thousand|million|M))(?!\w)"
)


def _number(value: float) -> str | None:
    """A number as it is written, or `None` for one past a float (`1e400k`: no hint)."""
    if not math.isfinite(value):
        return None
    return str(int(value)) if value == int(value) else repr(value)


@_rule
def _numbers(s: _Statement) -> Iterator[_Found]:
    for m in s.find(_THOUSANDS):
        new = m.group("bad").replace(",", "")
        yield _swap(m, new, f"numbers are written without separators: `{new}`")
    for m in s.find(_UNDERSCORES):
        new = m.group("bad").replace("_", "")
        yield _swap(m, new, f"numbers are written without separators: `{new}`")
    for m in s.find(_SUFFIX):
        scale = {"k": 1e3, "K": 1e3, "thousand": 1e3, "million": 1e6, "M": 1e6}[m.group("s")]
        new = _number(float(m.group("n")) * scale)
        if new is None:
            continue
        yield _swap(m, new, f"numbers are written in full: `{new}`")


_UNITS = {
    "ms": "ms", "msec": "ms", "msecs": "ms", "millis": "ms", "millisecond": "ms",
    "milliseconds": "ms", "s": "s", "sec": "s", "secs": "s", "second": "s", "seconds": "s",
    "m": "m", "min": "m", "mins": "m", "minute": "m", "minutes": "m",
    "h": "h", "hr": "h", "hrs": "h", "hour": "h", "hours": "h",
}  # fmt: skip
_DURATION = re.compile(
    r"(?<![\w.$])(?P<bad>(?P<n>-?\d+(?:\.\d+)?)\s*(?P<u>"
    + "|".join(sorted(_UNITS, key=len, reverse=True))
    + r"))(?!\w)"
)


#: A duration written with an exponent (`1.5e3ms`), which a duration's number has not.
_EXPONENT_DURATION = re.compile(
    r"(?<![\w.$])(?P<bad>(?P<n>\d+(?:\.\d+)?[eE][+-]?\d+)(?P<u>ms|s|m|h))(?!\w)"
)


@_rule
def _durations(s: _Statement) -> Iterator[_Found]:
    for m in s.find(_EXPONENT_DURATION):
        value = float(m.group("n"))
        number = _number(value)
        # (none for a number past a float, one written only with an exponent, or one that
        # underflows: `2e-400s` is no `0s`)
        nonzero = any(c in "123456789" for c in m.group("n").lower().partition("e")[0])
        if number is not None and "e" not in number and (value or not nonzero):
            new = number + m.group("u")
            yield _swap(m, new, f"a duration is written without an exponent: `{new}`")
    for m in s.find(_DURATION):
        new = m.group("n") + _UNITS[m.group("u")]
        if new != m.group("bad"):
            yield _swap(
                m, new, f"a duration is written `{new}`: the number and `ms`, `s`, `m` or `h`"
            )


_MONEY = re.compile(
    r"(?P<bad>\$\s+(?P<a>\d+(?:\.\d+)?)|\$?(?P<b>\d+(?:\.\d+)?)\s*(?:\$|USD|usd|dollars?)(?!\w)"
    r"|(?:USD|usd|US\$)\s*(?P<c>\d+(?:\.\d+)?)|(?P<d>\d+(?:\.\d+)?)\s*(?:cents?|¢)(?!\w)"
    r"|\$(?P<e>\.\d+))"
)


_MONEY_DOT = re.compile(r"(?P<bad>\$(?P<e>\.\d+))(?![\w.])")


@_rule
def _money(s: _Statement) -> Iterator[_Found]:
    for m in _MONEY_DOT.finditer(s.text):  # (over the text: `$.05` is a path, blanked)
        if m.start() <= s.at <= m.end():
            yield _swap(m, f"$0{m.group('e')}", f"an amount of money is written `$0{m.group('e')}`")
    for m in s.find(_MONEY):
        if m.group("d") is not None:
            new = f"${float(m.group('d')) / 100:g}"
        else:
            amount = m.group("a") or m.group("b") or m.group("c") or "0" + m.group("e")
            new = f"${amount}"
        yield _swap(m, new, f"an amount of money is written `{new}`")


_UNIT_WORD = re.compile(r"\d(?P<bad>\s+(?:tokens?|steps?|calls?|errors?|guards?))\s*$")
_TIMEOUT = re.compile(r"\btimeout\s+(?P<bad>\d+(?:\.\d+)?)\s*$")
_PERCENT = re.compile(r"\bjudged\b.*?(?P<bad>(?P<n>\d+(?:\.\d+)?)\s*%)")


#: `judged "rubric" by "model" >= 0.7`: the threshold goes before `by` (docs/language.md §4
#: writes one order; the hint moves it there rather than the grammar taking both)
_JUDGED_BY_FIRST = re.compile(
    r"\bjudged\s+[\"']\x00+(?P<by>\s+by\s+[\"']\x00+)\s*"
    r"(?P<bad>(?:>=|<=|==|!=|>|<)\s*\d+(?:\.\d+)?)"
)


@_rule
def _judged_order(s: _Statement) -> Iterator[_Found]:
    for m in s.find(_JUDGED_BY_FIRST):
        threshold = m.group("bad")
        yield _Found(
            f'a judge\'s threshold comes before its model: `judged "…" {threshold} by "…"`',
            m.start("bad"),
            m.end("bad"),
            ((m.start("by"), m.start("by"), " " + threshold), (m.end("by"), m.end("bad"), "")),
        )


@_rule
def _unit_words(s: _Statement) -> Iterator[_Found]:
    for m in s.find(_UNIT_WORD):
        yield _swap(m, "", "the number takes no unit")
    for m in s.find(_TIMEOUT):
        yield _swap(m, m.group("bad") + "s", f"a timeout is a duration: `{m.group('bad')}s`")
    for m in s.find(_PERCENT):
        new = _number(float(m.group("n")) / 100)
        if new is None:
            continue
        yield _swap(m, new, f"a judge score is between 0 and 1: `{new}`")


# ---- paths and subjects ----------------------------------------------------------------

_TESTS = (
    r"(?:==|!=|<=|>=|<|>|=|contains\b|matches\b|in\b|is\b|exists\b|has\b|starts\b|ends\b|not\b)"
)
_BARE_KEY = re.compile(
    r"\b(?:args|result)\s+(?P<bad>(?!(?:contains|matches|in|is|exists|has|starts|ends|not)\b)"
    r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*|\[\d+\])*)(?=\s*" + _TESTS + ")"
)
_DOT_KEY = re.compile(r"\b(?:args|result)(?P<bad>\.(?P<k>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*|\[\d+\])*))")
_DOLLAR_KEY = re.compile(r"(?P<bad>\$(?P<k>[A-Za-z_]\w*))")
_INDEX_KEY = re.compile(r"\b(?:args|result)(?P<bad>\[(?P<k>[\"']\x00+)\])")
_TOOL_DOT = re.compile(
    r"\btool\s+(?P<name>[A-Za-z_]\w*)(?P<bad>\.(?P<what>args|result)(?P<k>(?:\.[A-Za-z_]\w*)*))"
)
_JSON_DOT = re.compile(r"\bjson(?P<bad>\.(?P<k>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*))")
_CALLED_WITH = re.compile(r"\b(?P<bad>called\s+with)(?=\s*\{)")
_ARGS_OBJECT = re.compile(r"\b(?P<bad>args|result)(?=\s*\{)")


@_rule
def _paths(s: _Statement) -> Iterator[_Found]:
    why = "a path into a call's arguments starts with `$`"
    for m in s.find(_BARE_KEY):
        yield _swap(m, f"$.{m.group('bad')}", f"{why}: `$.{m.group('bad')}`")
    for m in s.find(_DOT_KEY):
        yield _swap(m, f" $.{m.group('k')}", f"{why}: `args $.{m.group('k')}`")
    for m in s.find(_DOLLAR_KEY):
        yield _swap(m, f"$.{m.group('k')}", f"a JSONPath starts with `$.`: `$.{m.group('k')}`")
    for m in s.find(_INDEX_KEY):
        key = s.text[m.start("k") + 1 : m.end("k") - 1]
        path = f"$.{key}" if re.fullmatch(r"[A-Za-z_]\w*", key) else f"$[{json.dumps(key)}]"
        yield _swap(m, f" {path}", f"{why}: `args {path}`")
    for m in s.find(_TOOL_DOT):
        path = f" $.{m.group('k')[1:]}" if m.group("k") else ""
        yield _swap(
            m,
            f" {m.group('what')}{path}",
            f"a tool's {m.group('what')} are written "
            f"`tool {m.group('name')} {m.group('what')}{path}`",
        )
    for m in s.find(_JSON_DOT):
        yield _swap(
            m, f" $.{m.group('k')}", f"a path into the JSON is written `json $.{m.group('k')}`"
        )
    for m in s.find(_CALLED_WITH):
        yield _swap(m, "args contains", "a call's arguments are tested with `args contains {…}`")
    for m in s.find(_ARGS_OBJECT):
        yield _swap(
            m,
            f"{m.group('bad')} contains",
            f"write `{m.group('bad')} contains {{…}}` (some call has these keys) "
            f"or `{m.group('bad')} == {{…}}` (exactly these)",
        )


_ANSWER_INDEX = re.compile(r"\banswer\[(?P<bad>last|first|end|-0)\]")
_HAS_KEY = re.compile(r"\b(?P<bad>(?:contains|has)\s+key)\s+")
_NODE_WAS = re.compile(r"\bnode\s+\S+\s+(?P<bad>(?:was|is|has\s+been|got|were|been)\s+)visited\b")


# `within budget` with no subject: it is a test of the state's tokens
_BUDGET_ALONE = re.compile(r"(?:^|[;(]|\b(?:not|and|or)\b)\s*(?P<bad>within)(?=\s+budget\b)")


@_rule
def _subjects(s: _Statement) -> Iterator[_Found]:
    for m in s.find(_ANSWER_INDEX):
        new = "1" if m.group("bad") == "first" else "-1"
        yield _swap(m, new, "answers are counted from 1; the last is `answer[-1]`")
    for m in s.find(_HAS_KEY):
        yield _swap(m, "has", "a key is tested with `has KEY`")
    for m in s.find(_NODE_WAS):
        yield _swap(m, "", "write `node NAME visited`")
    for m in s.find(_BUDGET_ALONE):
        yield _swap(m, "tokens within", "a budget is a test of tokens: `tokens within budget`")


# ---- lines and punctuation ---------------------------------------------------------------

_QUOTABLE = re.compile(
    r"\b(?P<kw>case|suite|judged|cassette|state|dataset|starts\s+with|ends\s+with|contains)\s+"
    r"(?P<bad>[A-Za-z_][^\"'#;\n<>=]*?)\s*(?=$|\bby\b|[<>=])"
)


# words compared with `==` or `!=`: one word is a name, several are text (`New York`)
_QUOTABLE_VALUE = re.compile(
    r"(?:==|!=)\s*(?P<bad>[A-Za-z_][\w.'-]*(?:[ \t]+[\w.'-]+)+?)\s*(?=$|\s(?:and|or)\s)"
)


@_rule
def _unquoted(s: _Statement) -> Iterator[_Found]:
    for m in s.find(_QUOTABLE):
        words = m.group("bad")
        if m.group("kw") == "contains" and " " not in words:
            continue  # (one word: the checker says it, with the same fix)
        new = json.dumps(words, ensure_ascii=False)
        yield _swap(m, new, f"text is quoted: `{new}`")
    for m in s.find(_QUOTABLE_VALUE):
        new = json.dumps(m.group("bad"), ensure_ascii=False)
        yield _swap(m, new, f"text is quoted: `{new}`")


_COLON = re.compile(
    r"^\s*(?:case|suite|cassette|state|trace|dataset|tools|nodes|timeout|run|input|each"
    r"|judge\s+model)(?P<bad>\s*:)(?=\s)"
    r"|^\s*(?:case|suite)\s+[\"']\x00*[\"']?(?P<bad2>\s*:)\s*$"
)


@_rule
def _colons(s: _Statement) -> Iterator[_Found]:
    for m in s.find(_COLON):
        group = "bad" if m.group("bad") is not None else "bad2"
        yield _swap(m, "", "no `:` here: a line is its keyword and then its value", group=group)


#: `trace "x.json"` without its format (`as openai`): `cassette` is the line that detects it
_TRACE_WITHOUT_FORMAT = re.compile(r"^\s*(?P<bad>trace)\s+[\"']\x00*\s*$")


@_rule
def _trace_without_format(s: _Statement) -> Iterator[_Found]:
    for m in s.find(_TRACE_WITHOUT_FORMAT):
        yield _swap(
            m,
            "cassette",
            "a `trace` line names its format (`as openai`, `as otel`, …); "
            "`cassette` detects the format",
        )


_LEAD = re.compile(r"^\s*(?P<bad>(?:[-*•]|\d+[.)])\s+)(?=\S)")
_LEAD_WORD = re.compile(
    r"^\s*(?P<bad>(?:expect|expects|assert|check|verify|ensure|then|should|must)\s+)(?=[a-z(!])"
)
_BACKTICK = re.compile(r"(?P<bad>`)")


@_rule
def _decorations(s: _Statement) -> Iterator[_Found]:
    for m in s.find(_LEAD):
        yield _swap(m, "", "a statement is written without a list marker")
    for m in s.find(_LEAD_WORD):
        word = m.group("bad").split()[0]
        yield _swap(m, "", f"no `{word}`: each line is an assertion as it is")
    for m in s.find(_BACKTICK):
        edits = tuple((i, i + 1, "") for i, ch in enumerate(s.masked) if ch == "`")
        yield _Found("a statement is written without backticks", m.start(), m.end(), edits)
    if s.text.rstrip().endswith("."):
        end = len(s.text.rstrip())
        if end - 1 <= s.at <= end:
            yield _Found("a statement does not end with `.`", end - 1, end, ((end - 1, end, ""),))
    if s.masked.rstrip().endswith(",") and not re.match(r"\s*(?:tools|nodes)\b", s.masked):
        end = len(s.text.rstrip())
        if end - 1 <= s.at <= end:
            yield _Found(
                "a statement does not end with `,`; several go on separate lines or after `;`",
                end - 1,
                end,
                ((end - 1, end, ""),),
            )


_COMMENT = re.compile(r"(?P<bad>(?://|--)(?P<rest>.*))$")
_LOGIC = re.compile(r"(?P<bad>&&|\|\||&|\||(?<![!=<>])!(?!=)|\bAND\b|\bOR\b|\bNOT\b)")
_DANGLING = re.compile(r"(?P<bad>\s+(?:(?:and|or)(?:\s+not)?|not))\s*$")


@_rule
def _punctuation(s: _Statement) -> Iterator[_Found]:
    for m in s.find(_COMMENT):
        yield _swap(m, "#" + m.group("rest"), "comments start with `#`", code="E103")
    for m in s.find(_LOGIC):
        new = {"&&": "and", "&": "and", "||": "or", "|": "or", "!": "not "}.get(
            m.group("bad"), m.group("bad").lower()
        )
        yield _swap(m, new, f"`{m.group('bad')}` is written `{new.strip()}`")
    for m in s.find(_DANGLING):
        word = m.group("bad").split()[0]
        yield _Found(
            f"`{word}` needs an assertion after it",
            m.start("bad") + len(m.group("bad")) - len(m.group("bad").lstrip()),
            m.end("bad"),
            ((m.start("bad"), m.end("bad"), ""),),
        )


_COMPARE_WORDS = {
    "less than": "<", "fewer than": "<", "under": "<", "below": "<", "more than": ">",
    "greater than": ">", "over": ">", "above": ">", "at most": "<=", "no more than": "<=",
    "at least": ">=", "no less than": ">=", "less than or equal to": "<=",
    "greater than or equal to": ">=", "fewer than or equal to": "<=",
    "more than or equal to": ">=", "equal to": "==", "not equal to": "!=",
}  # fmt: skip
_COMPARE = re.compile(
    r"(?<![\w])(?P<bad>(?:is\s+)?(?P<how>(?:less|fewer|more|greater)\s+than(?:\s+or\s+equal\s+to)?"
    r"|under|below|over|above|at\s+most|at\s+least|no\s+more\s+than|no\s+less\s+than"
    r"|(?:not\s+)?equal\s+to))(?=\s+[-\d$\"'\[{\w])"
)


@_rule
def _compare_words(s: _Statement) -> Iterator[_Found]:
    for m in s.find(_COMPARE):
        new = _COMPARE_WORDS.get(" ".join(m.group("how").split()))
        if new is None:  # (see `_verb`)
            continue
        yield _swap(m, new, f"`{' '.join(m.group('bad').split())}` is written `{new}`")


_CAPITALS = re.compile(r"(?P<bad>\b[A-Za-z]+\b)")


@_rule
def _capitals(s: _Statement) -> Iterator[_Found]:
    for m in s.find(_CAPITALS):
        word = m.group("bad")
        if word != word.lower() and word.lower() in _keywords() and m.start() <= s.at <= m.end():
            yield _swap(m, word.lower(), f"keywords are written in lower case: `{word.lower()}`")


@lru_cache(maxsize=1)
def _keywords() -> frozenset[str]:
    return frozenset(w for w in spellings().values() if w.isalpha())


# ---- words run together ------------------------------------------------------------------

#: a word, or a number with letters run on (`2times`, `0.5and`)
_RUN_TOGETHER = re.compile(r"(?<![\w.$])(?P<bad>-?\d+(?:\.\d+)?[A-Za-z_]\w*|[A-Za-z_]\w*)")
_NUMBER_AT = re.compile(r"-?\d+(?:\.\d+)?")
_NAME_REST = re.compile(r"[A-Za-z_]\w*")


@lru_cache(maxsize=1)
def _pieces() -> tuple[str, ...]:
    """The words a run of letters may be made of: keywords and JSON types, longest first
    (`tools` before `tool`)."""
    from evaldsl.language.ast import JSON_TYPES

    return tuple(sorted(_keywords() | set(JSON_TYPES), key=lambda w: (-len(w), w)))


def split_words(word: str) -> Iterator[str]:
    """The ways `word` reads as words run together, as they are written apart: keywords
    and numbers all through first (`startswith` → `starts with`, `startsWith` too,
    `2times` → `2 times`, `atleast2` → `at least 2`), then a keyword and a name
    (`toolsearch` → `tool search`). A keyword alone is no split. Keywords are whole words
    (the grammar reads a run of letters as one), so a keyword run into the next word is
    a syntax error, and this is its fix.

    >>> list(split_words("calledonce"))
    ['called once']
    """
    lower = word.lower()
    dead: set[int] = set()  # where no split into keywords and numbers goes on to the end

    def splits(i: int) -> Iterator[list[str]]:
        if i == len(lower):
            yield []
            return
        if i in dead:
            return
        found = False
        number = _NUMBER_AT.match(lower, i)
        heads = [number.group()] if number else [k for k in _pieces() if lower.startswith(k, i)]
        for head in heads:
            for rest in splits(i + len(head)):
                found = True
                yield [head, *rest]
        if not found:
            dead.add(i)

    given: set[str] = set()
    for parts in splits(0):
        if len(parts) > 1:
            given.add(" ".join(parts))
            yield " ".join(parts)
    if lower in _keywords():
        return
    for head in _pieces():
        rest = word[len(head) :]
        if lower.startswith(head) and _NAME_REST.fullmatch(rest) and f"{head} {rest}" not in given:
            yield f"{head} {rest}"


@_rule
def _run_together(s: _Statement) -> Iterator[_Found]:
    """`answer startswith "x"`, `tool x calledonce`, `called 2times`: keywords and
    numbers are separate words."""
    for m in s.find(_RUN_TOGETHER):
        word = m.group("bad")
        for split in islice(split_words(word), 8):
            yield _swap(m, split, f"`{word}` is written as separate words: `{split}`")


# ---- finding the fix ---------------------------------------------------------------------


def _keyword_typo(s: _Statement) -> Iterator[_Found]:
    """A misspelt keyword where the parse failed (only after a slip: alone, the generic
    wording says it, with the same did-you-mean)."""
    m = re.compile(r"[A-Za-z_]\w*").match(s.masked, s.at)
    if m is None:
        return
    words = [w for w in spellings().values() if w.isalpha()]
    guess = did_you_mean(m.group(), words)
    if guess and guess != m.group():
        yield _Found(f"did you mean `{guess}`?", m.start(), m.end(), ((m.start(), m.end(), guess),))


def _error_at(text: str, start: Start) -> int | None:
    """Where `text` fails to parse, or `None` when it parses."""
    from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken

    try:
        plain_parser().parse(text, start=start)
    except UnexpectedToken as err:
        if err.token.type == "$END":
            return len(text)
        return err.token.start_pos or 0
    except UnexpectedCharacters as err:
        return err.pos_in_stream or 0
    except UnexpectedInput:
        return len(text)
    return None


_TRAILING = re.compile(r"(?:(?<!\w)(?P<op>(?:and|or)(?:\s+not)?|not)|(?P<sign>&&|\|\|))\s*$")


def dangling(text: str, at: int) -> tuple[str, int, int] | None:
    """The operator an assertion of the statement `text` ends with (before any comment),
    when its parse failed there (at `at`): the operator as written and its span, or None
    (for `not` alone too: no assertion before it).

    >>> dangling('answer contains "rain" or', 25), dangling('answer contains "or"', 20)
    (('or', 23, 25), None)
    """
    s = _Statement(text, at)
    m = _TRAILING.search(s.masked)
    if m is None or s.at < m.start() or not s.masked[: m.start()].strip():
        return None
    group = "op" if m.group("op") is not None else "sign"
    return m.group(group), m.start(group), m.end(group)


def parses(text: str, start: Start) -> bool:
    """Whether `text` parses (`tool search called`), as the error path asks of a fix."""
    return _error_at(text, start) is None


def _found_at(s: _Statement, typos: bool) -> Iterator[_Found]:
    for rule in _RULES:
        yield from rule(s)
    if typos:
        yield from _keyword_typo(s)


def _tidy(text: str) -> str:
    """The text stripped, with runs of spaces and tabs made one space, except in its
    strings, regexes and paths (`"a  b"` is other text than `"a b"`)."""
    out: list[str] = []
    at = 0
    for m in _blanks().finditer(text):
        out.append(_SPACES.sub(" ", text[at : m.start()]))
        out.append(m.group())
        at = m.end()
    out.append(_SPACES.sub(" ", text[at:]))
    return "".join(out).strip()


_SPACES = re.compile(r"[ \t]{2,}")


def _guessed(s: _Statement, guess: str | None) -> Iterator[_Found]:
    """The word at the error made `guess`, the generic wording's did-you-mean."""
    m = _NAME_REST.match(s.masked, s.at)
    if guess is not None and m is not None:
        yield _Found(f"did you mean `{guess}`?", m.start(), m.end(), ((m.start(), m.end(), guess),))


def slip(text: str, at: int, start: Start, guess: str | None = None) -> Slip | None:
    """The known mistake of the statement `text` that fails to parse at offset `at`.
    `guess` is the generic wording's did-you-mean for the word there, tried last: its
    fix alone does not parse, or the generic wording would have said it, but a second
    mistake after it may be one of the rules' (`tool search caled 2` is `called 2`, and
    that is `called 2 times`); its edit alone would leave an error as the quick fix.

    >>> found = slip("tool search called 2x", 19, "file")
    >>> found.message, found.corrected
    ('a count is written `twice`', 'tool search called twice')
    """
    first = _Statement(text, at)
    for found in chain(_found_at(first, typos=False), _guessed(first, guess)):
        fixed = _edit(first, list(found.edits))
        done = _finish(fixed, start)
        if done is None:
            continue
        recovered = None
        if fixed == done and all(new == "" for _, _, new in found.edits):
            # the same text with characters blanked: its parse keeps every position
            recovered = _edit(first, [(a, b, " " * (b - a)) for a, b, _ in found.edits])
        written = (len(first.text) - len(first.text.lstrip()), len(first.text.rstrip()))
        return Slip(
            found.message, found.start, found.end, _tidy(done), found.code, recovered, written
        )
    return None


def _finish(text: str, start: Start, rounds: int = ROUNDS - 1) -> str | None:
    """`text` once the mistakes left in it are fixed too, or `None` when it cannot be."""
    at = _error_at(text, start)
    if at is None:
        return text
    if rounds == 0:
        return None
    s = _Statement(text, at)
    if s.text != text and _error_at(s.text, start) is None:
        return s.text
    for found in _found_at(s, typos=True):
        done = _finish(_edit(s, list(found.edits)), start, rounds - 1)
        if done is not None:
            return done
    return None
