"""The tables of the fast parse loop, written once and loaded without making a Lark parser.

Takes a Lark LALR parser (made with `grammar.build_lark`) and gives what `drive.py` reads
from it, as JSON data (`export`): the parse table (shifts, and reductions as rule
numbers), per rule what Lark's tree builder wraps the rule's callback in, and per parser
state the lexer Lark's contextual lexer uses there (its scanner's regexes, the ignored
terminals, the keywords a NAME may spell). `make tables` writes it beside the grammar
(`grammar/evaldsl.drive.json`); `load` gives the same tables back with the builder's
callbacks bound, resolved as Lark resolves them (the builder's method of the rule's name
or alias, else its `__default__`), so `drive` parses a file without Lark making its
parser: loading Lark's own serialised parser and converting its table for `drive` was
~15 ms of every start, this is ~3 ms.

Exactness: whatever has a shape not listed here (a callback wrapper, a lexer callback
other than plain keywords) makes `export` give `None`, and then no file is written and
`drive` reads a Lark parser as before. The file is keyed like the parser's tables
(grammar, Lark version, options) and used only when it was made for them.
`tests/test_parse_driver.py` parses the corpus and generated files with the loaded tables,
Lark's parser through `drive`, and Lark's own loop, and compares every node and span.
"""

from __future__ import annotations

import binascii
import json
import marshal
import re
from collections.abc import Callable
from functools import partial
from typing import Any

import orjson

from evaldsl.cache.compiled import store, stored
from evaldsl.syntax.tables import stamp

# No Lark import here (`export` imports what it reads): loading these tables and parsing
# with them must not load Lark, whose import is a large part of a start.

#: Bump when the layout of the file changes.
FORMAT = 1
SHIPPED_NAME = "evaldsl.drive.json"


#: A token as the builder is given it: (terminal, text, start, end), the offsets in the
#: text parsed (Lark's tokens are given as the same tuples: `grammar.TokenTuples`). A
#: plain tuple: the fast loop makes one per token, and a tuple of four is made and freed
#: for about a third of the instructions of the slotted object a token was (~300 against
#: ~970, valgrind), its fields read as cheaply. The builder's other tuples are `Span`s and
#: pairs, of classes of their own, so `type(x) is tuple` tells a token.
Token = tuple[str, str, int, int]


class LarkToken:
    """A token as Lark's token callbacks take it (`value`, `type`, `start_pos`, `end_pos`,
    assigned): the fast loop gives a keyword callback other than plain keywords one of
    these and makes its `Token` of what the callback leaves. `str()` gives the text."""

    __slots__ = ("end_pos", "start_pos", "type", "value")

    value: str
    type: str
    start_pos: int
    end_pos: int

    def __str__(self) -> str:
        return self.value

    def __repr__(self) -> str:
        return f"LarkToken({self.type!r}, {self.value!r})"

    # Lines and columns are not counted (None, as in a Lark token made without them).
    line = column = end_line = end_column = property(lambda self: None)


class ExpandSingleChild:
    """Lark's `?rule`: one child is passed up as it is, several are built."""

    __slots__ = ("node_builder",)

    def __init__(self, node_builder: Callable[[list[Any]], Any]) -> None:
        self.node_builder = node_builder

    def __call__(self, children: list[Any]) -> Any:
        if len(children) == 1:
            return children[0]
        return self.node_builder(children)


class ChildFilter:
    """Lark's child filter of an LALR rule without placeholders: the children at the
    listed positions, those of a helper rule (`_rule`, expand) inlined."""

    __slots__ = ("node_builder", "to_include")

    def __init__(
        self, to_include: list[tuple[int, bool]], node_builder: Callable[[list[Any]], Any]
    ) -> None:
        self.node_builder = node_builder
        self.to_include = to_include

    def __call__(self, children: list[Any]) -> Any:
        filtered: list[Any] = []
        for i, to_expand in self.to_include:
            if to_expand:
                if filtered:
                    filtered += children[i].children
                else:  # left recursion: the holder's own list, as Lark does
                    filtered = children[i].children
            else:
                filtered.append(children[i])
        return self.node_builder(filtered)


def keyword_spellings(callback: Any) -> dict[str, str] | None:
    """The keywords a NAME token's Lark callback (`UnlessCallback`) gives it, text → token
    type, when all are plain words (no regex, no flags); None for any other callback."""
    from lark.lexer import PatternStr, UnlessCallback

    scanner = getattr(callback, "scanner", None)
    if type(callback) is not UnlessCallback or scanner is None or scanner.g_regex_flags:
        return None
    terminals = scanner.terminals
    if not all(type(t.pattern) is PatternStr and not t.pattern.flags for t in terminals):
        return None
    return {t.pattern.value: t.name for t in terminals}


def export(lark: Any) -> dict[str, Any] | None:
    """`drive`'s tables of a built Lark parser as JSON data; `None` when any part of it has
    a shape this module does not know."""
    from lark.parse_tree_builder import ChildFilterLALR_NoPlaceholders
    from lark.parse_tree_builder import ExpandSingleChild as LarkExpand
    from lark.parsers.lalr_analysis import Shift

    frontend = lark.parser
    table = frontend.parser.parser.parse_table
    numbers: dict[Any, int] = {}
    rules: list[list[Any]] = []
    for rule, chain in lark._parse_tree_builder.rule_builders:
        wrappers: list[Any] = []
        for wrap in chain:
            if wrap is LarkExpand:
                wrappers.append("expand1")
            elif (
                isinstance(wrap, partial)
                and wrap.func is ChildFilterLALR_NoPlaceholders
                and len(wrap.args) == 1
                and not wrap.keywords
            ):
                wrappers.append([[i, bool(expand)] for i, expand in wrap.args[0]])
            else:
                return None
        name = rule.alias or rule.options.template_source or rule.origin.name
        numbers[rule] = len(rules)
        aliased = bool(rule.alias)
        rules.append([str(rule.origin.name), len(rule.expansion), str(name), aliased, wrappers])
    states: list[dict[str, list[Any]]] = []
    for state in range(len(table.states)):
        row = table.states[state]
        states.append(
            {
                str(kind): [0, arg] if action is Shift else [1, numbers[arg]]
                for kind, (action, arg) in row.items()
            }
        )
    contextual = frontend.lexer.lexer
    lexers: list[list[Any]] = []
    seen: dict[int, int] = {}
    lexer_of: list[int] = []
    for state in range(len(table.states)):
        sub = contextual.lexers[state]
        if id(sub) not in seen:
            scanner = sub.scanner
            words: dict[str, dict[str, str]] = {}
            for kind, callback in sub.callback.items():
                spelled = keyword_spellings(callback)
                if spelled is None or len(spelled) != len(callback.scanner.terminals):
                    return None
                words[kind] = spelled
            patterns = [[mre.pattern, mre.flags] for mre in scanner._mres]
            seen[id(sub)] = len(lexers)
            lexers.append([patterns, sorted(sub.ignore_types), words])
        lexer_of.append(seen[id(sub)])
    terminals = sorted(t.name for t in lark.terminals)
    return {
        "rules": rules,
        "states": states,
        "start_states": dict(table.start_states),
        "end_states": dict(table.end_states),
        "lexers": lexers,
        "lexer_of": lexer_of,
        "terminals": terminals,
    }


def serialise(data: dict[str, Any], made_for: str) -> str:
    """The tables as the file's text, stamped like the parser's tables with what they were
    `made_for` (`tables.key_text`) and its digest."""
    body = {"format": FORMAT, **stamp(made_for), "data": data}
    return json.dumps(body, separators=(",", ":"))


class Lexing:
    """Per parser state, how Lark's contextual lexer lexes there, made on first use of
    each lexer (a short text visits few states): a `dict` of state → (the scanner's
    regexes as (pattern, flags), which `drive` compiles, the ignored terminals, and per
    terminal the keywords a NAME of it may spell: text → keyword terminal, as Lark's
    `UnlessCallback` over plain strings)."""

    def __init__(self, lexers: list[list[Any]], lexer_of: list[int]) -> None:
        self.lexers = lexers
        self.lexer_of = lexer_of
        self.made: dict[int, tuple[Any, Any, Any]] = {}

    def __getitem__(self, state: int) -> tuple[Any, Any, Any]:
        index = self.lexer_of[state]
        found = self.made.get(index)
        if found is None:
            patterns, ignore, words = self.lexers[index]
            found = self.made[index] = (
                [(str(pattern), int(flags)) for pattern, flags in patterns],
                frozenset(ignore),
                {kind: dict(spelled) for kind, spelled in words.items()},
            )
        return found


class Tables:
    """The loaded tables with a builder's callbacks bound: what `drive`'s memo reads.

    `rules` holds per rule number (origin name, length, callback, whether it is one of
    Lark's helper rules: named `_…` and not aliased)."""

    def __init__(self, data: dict[str, Any], builder: Any) -> None:
        default = getattr(builder, "__default__", None)
        if default is None:
            raise ValueError("the builder has no __default__")
        if any(hasattr(builder, t) for t in data["terminals"]):
            raise ValueError("the builder has a lexer callback")  # Lark would call it
        self.rules: list[tuple[str, int, Any, bool]] = []
        for origin, size, name, aliased, wrappers in data["rules"]:
            method = getattr(builder, name, None)
            if method is None:
                f: Any = partial(default_callback, default, name)
            elif getattr(method, "visit_wrapper", None) is not None:
                raise ValueError(f"the builder's {name} is wrapped (v_args)")
            else:
                f = method
            for wrap in wrappers:
                if wrap == "expand1":
                    f = ExpandSingleChild(f)
                else:
                    f = ChildFilter([(i, expand) for i, expand in wrap], f)
            helper = str(origin).startswith("_") and not aliased
            self.rules.append((str(origin), int(size), f, helper))
        #: Each state's row as the file has it, or marshalled (`decoded`: kept so).
        self.raw_states: list[dict[str, list[Any]] | bytes] = data["states"]
        self.start_states: dict[str, int] = data["start_states"]
        self.end_states: dict[str, int] = data["end_states"]
        self.lexing = Lexing(data["lexers"], data["lexer_of"])
        self.builder = builder

    def state_row(self, state: int) -> dict[str, list[Any]]:
        """A parser state's row: each token kind's action, as the file has it."""
        row = self.raw_states[state]
        if isinstance(row, bytes):
            loaded: dict[str, list[Any]] = marshal.loads(row)
            return loaded
        return row


def default_callback(default: Any, name: str, children: list[Any]) -> Any:
    """Lark's callback for a rule the builder has no method for (its `__default__`)."""
    return default(name, children, None)


def load(text: str, made_for: str, builder: Any) -> Tables | None:
    """The tables from the file's text with `builder`'s callbacks, or `None` when the
    text is not the tables made for `made_for` (`tables.key_text`) or the builder does
    not fit them."""
    try:
        body = decoded(text)
        if (
            not isinstance(body, dict)
            or body.get("made_for") != made_for
            or body.get("format") != FORMAT
        ):
            return None
        return Tables(body["data"], builder)
    except (ValueError, KeyError, TypeError, IndexError, re.error):
        return None


def decoded(text: str) -> Any:
    """The file's JSON value, kept between starts in the user's cache file (as compiled
    code is: `cache/compiled.py`) under the file's exact text, each parser state's row
    marshalled apart: a start loads the ~400 rows as as many bytes and decodes the few
    dozen a small file visits (`Tables.state_row`), where decoding the whole file made
    and later freed ~5,000 lists and dicts (~5 M instructions of every start that
    parses, valgrind). A value not of the file's shape is given as it is, and not kept.

    What is kept carries the CRC-32 of its bytes, as a kept regex's code does
    (`cache/regexes.py`): a row is decoded only when the parser reaches its state, so a
    row changed on disk would otherwise be found mid-parse (an error where the file parses)
    or not at all (another valid row: a wrong parse). A kept value whose CRC does not
    match is ignored, and the file decoded again."""
    key = f"drive tables\0{text}"
    body = _intact(stored(key))
    if body is not None:
        return body
    # (orjson: the same values as `json.loads`, for a third of its instructions:
    # 7 M against 18 M of every start that parses, valgrind)
    body = orjson.loads(text)
    data = body.get("data") if isinstance(body, dict) else None
    if isinstance(data, dict) and isinstance(data.get("states"), list):
        rows = [marshal.dumps(row) for row in data["states"]]
        head = marshal.dumps({**body, "data": {**data, "states": None}})
        store(key, (binascii.crc32(b"".join(rows), binascii.crc32(head)), head, rows))
    return body


def _intact(kept: Any) -> dict[str, Any] | None:
    """The tables' value from what `decoded` kept (its rows still marshalled), or `None`
    when nothing was kept or it is not what was kept (its CRC differs)."""
    if type(kept) is not tuple or len(kept) != 3:
        return None
    crc, head, rows = kept
    if (
        type(head) is not bytes
        or type(rows) is not list
        or not all(type(row) is bytes for row in rows)
        or crc != binascii.crc32(b"".join(rows), binascii.crc32(head))
    ):
        return None
    body: dict[str, Any] = marshal.loads(head)
    body["data"]["states"] = rows
    return body
