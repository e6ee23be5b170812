"""The fast parse loop: error-free text parsed in one loop over Lark's own LALR tables.

Takes a Lark parser (built with the AST builder), or the same tables loaded from the file
`make tables` writes (`drivetables.py`, with the builder's callbacks bound as Lark binds
them), and text, and gives the parse's result,
or `None` at the first thing that does not fit (the caller then parses with Lark's own
loop, which reports the error as Lark does). It uses the same per-state scanners as
Lark's contextual lexer, the bracket rule of `BracketNewlines`, and Lark's shift/reduce
steps with the same callbacks (so the same AST), without the generators and method calls
between them: parsing is most of compiling.

The steps are memoised. An LALR parser's next steps depend on its whole state stack and
the next token's kind only, and the stacks seen while parsing statements are few (a
statement ends where it began: at the file's repetition). So each stack met is kept once
as a `_Config`, holding the lexer plan of its top state and, per token kind, the
reductions that kind causes and the config it leads to: after the first statements of a
shape, a token costs one dict lookup instead of a walk of the table per step, and the
reductions that only pass a single child up (`?rule`, `?value`) cost nothing. Configs are
bounded (`MAX_CONFIGS`, `MAX_STACK`): past them the loop walks the table as Lark does.

It reads Lark internals (`scanner._mres`, the parse table, the callbacks), so it is
guarded: `available(lark)` holds only for the Lark versions it was written for
(`SUPPORTED_LARK`) when those internals have the expected shape; otherwise `drive` is
never used and Lark's own loop parses everything (slower, the same result). A test runs
the whole corpus both ways.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any, cast

from evaldsl.cache.regexes import regex
from evaldsl.syntax import drivetables
from evaldsl.syntax.drivetables import LarkToken, Tables, Token
from evaldsl.syntax.grammar import CLOSING, OPENING, Start

if TYPE_CHECKING:
    from lark import Lark

# Lark is imported only where a Lark parser is read (no shipped tables that fit): parsing
# with the loaded tables does not load it.

#: The Lark minor versions whose internals `drive` was written against.
SUPPORTED_LARK = ("1.3.",)


def available(lark: Lark) -> bool:
    """Whether `drive` may run on this Lark parser: a supported Lark version whose
    parser and lexer have the shape `drive` reads."""
    import lark as lark_module

    if not str(lark_module.__version__).startswith(SUPPORTED_LARK):
        return False
    try:
        frontend: Any = lark.parser
        table = frontend.parser.parser.parse_table
        lexers = frontend.lexer.lexer.lexers
        scanner = next(iter(lexers.values())).scanner
        return bool(
            table.states
            and table.start_states
            and table.end_states
            and isinstance(scanner._mres, list)
            and frontend.parser.parser.callbacks
        )
    except (AttributeError, StopIteration, TypeError):
        return False


class _Plans(dict[int, tuple[Any, Any, Any]]):
    """Per parser state, what Lark's contextual lexer uses there: its scanner's regexes,
    the ignored terminals and the keyword callbacks (a NAME that spells a keyword accepted
    in that state becomes that keyword), so `drive` makes exactly Lark's tokens. Filled
    on first use of each state: a scanner compiles its regexes when first asked for, and
    a short text visits few states (this matters at start-up)."""

    def __init__(self, lexers: dict[int, Any]) -> None:
        super().__init__()
        self.lexers = lexers

    def __missing__(self, state: int) -> tuple[Any, Any, Any]:
        sub = self.lexers[state]
        plan = self[state] = (sub.scanner._mres, sub.ignore_types, sub.callback)
        return plan


def _plans(lexer: Any) -> _Plans:
    """The lexer plans of a parser's contextual lexer, kept on the lexer."""
    plans: _Plans | None = getattr(lexer, "_evaldsl_plans", None)
    if plans is None:
        plans = _Plans(cast(dict[int, Any], lexer.lexers))
        lexer._evaldsl_plans = plans
    return plans


def _tables(frontend: Any, helper: Any) -> dict[int, dict[str, tuple[bool, Any]]]:
    """Lark's parse table for `drive`: plain-string keys (Lark's rule names are Tokens,
    whose Python `__eq__` would run at every goto), and each entry `(shift?, target)`
    where a reduce's target is already (rule length, callback, origin name) (Lark's rules
    hash in Python too), with the callbacks of Lark's helper rules made cheaper
    (`_helper_callback`)."""
    cached = getattr(frontend, "_evaldsl_tables", None)
    if cached is None:
        from lark.parse_tree_builder import ChildFilterLALR_NoPlaceholders
        from lark.parsers.lalr_analysis import Shift

        parser = frontend.parser.parser
        filters = (ChildFilterLALR_NoPlaceholders, drivetables.ChildFilter)
        callbacks = {
            rule: _helper_callback(
                str(rule.origin.name).startswith("_") and not rule.alias, callback, helper, filters
            )
            for rule, callback in parser.callbacks.items()
        }
        cached = {
            state: {
                str(name): (True, arg)
                if action is Shift
                else (False, (len(arg.expansion), callbacks[arg], str(arg.origin.name)))
                for name, (action, arg) in row.items()
            }
            for state, row in parser.parse_table.states.items()
        }
        frontend._evaldsl_tables = cached
    return cast(dict[int, dict[str, tuple[bool, Any]]], cached)


class _LoadedStates(dict[int, dict[str, tuple[bool, Any]]]):
    """`_tables` for tables loaded from the file (`drivetables.py`), each state's row
    converted on first use (a short text visits few states)."""

    def __init__(self, tables: Tables, helper: Any) -> None:
        super().__init__()
        self.row_of = tables.state_row
        filters = (drivetables.ChildFilter,)
        self.rules = [
            (size, _helper_callback(is_helper, callback, helper, filters), origin)
            for origin, size, callback, is_helper in tables.rules
        ]

    def __missing__(self, state: int) -> dict[str, tuple[bool, Any]]:
        rules = self.rules
        row = self[state] = {
            kind: (True, arg) if action == 0 else (False, rules[arg])
            for kind, (action, arg) in self.row_of(state).items()
        }
        return row


def _is_default(callback: Any) -> bool:
    """Whether `callback` is Lark's callback for a rule the builder has no method for
    (it calls the builder's `__default__` with the rule's name)."""
    return isinstance(callback, partial) and callback.func.__name__ == "default_callback"


def _helper_callback(is_helper: bool, callback: Any, helper: Any, filters: tuple[type, ...]) -> Any:
    """The callback of one of Lark's helper rules (`__file_star_0`: the repetitions the
    grammar's `*`, `+` and `?` make), cheaper and giving the same: the builder's
    `__default__` turns their children into an `Inline` holder (`helper`), which the
    parent only reads the children of; and a left-recursive repetition (`rep: rep x y`)
    appends its new children to the list of the holder below it, as Lark's child filter
    does (`filters`: its class, Lark's or the loaded tables'), and passes that holder on.
    Any other callback is kept as it is."""
    if helper is None or not is_helper:
        return callback
    if _is_default(callback):
        return helper
    if type(callback) in filters and _is_default(callback.node_builder):
        include = list(callback.to_include)
        if include and include[0] == (0, True) and not any(expand for _, expand in include[1:]):
            return _extend_left(tuple(i for i, _ in include[1:]))
    return callback


def _extend_left(indices: tuple[int, ...]) -> Callable[[list[Any]], Any]:
    """`rep: rep x …`: the children at `indices` appended to the holder `rep` built."""
    if indices == (1, 2):
        return _extend_two

    def extend(children: list[Any]) -> Any:
        head = children[0]
        head.children.extend([children[i] for i in indices])
        return head

    if indices == (1,):

        def extend(children: list[Any]) -> Any:
            head = children[0]
            head.children.append(children[1])
            return head

    return extend


def _extend_two(children: list[Any]) -> Any:
    """`rep: rep x y` (a file's statement and its newline, once a statement):
    `_extend_left`'s callback, which `drive` does itself (`_EXTEND_TWO`) and `_walk`
    calls."""
    head = children[0]
    held = head.children
    held.append(children[1])
    held.append(children[2])
    return head


#: The size `_Memo.step` gives a reduction by `_extend_two`, which `drive` does itself:
#: the two values on top appended to the holder below them, with no list made for a
#: call (one a statement).
_EXTEND_TWO = -1000


def _keyword_callback(callback: Any) -> Any:
    """A NAME token's keyword callback as what `drive` reads: Lark's (`UnlessCallback`)
    gives the token the type of the keyword its text spells, found by matching the text
    against every keyword; for plain keywords (no regex flags) that is a lookup in the
    `dict` of them given here. Any other callback is kept as it is (and called)."""
    words = drivetables.keyword_spellings(callback)
    return callback if words is None else words


def _blank_first(pattern: str, flags: int) -> re.Pattern[str]:
    """A scanner's regex preceded by the spaces and tabs before a token: `drive` skips
    them as white space (the grammar ignores them), so one match finds the next token.
    The spaces are taken possessively, so the alternatives see exactly the text the
    scanner would see once they were skipped. Compiled once and then loaded from the
    user's cache (`cache/regexes.py`): compiling them was ~9 ms of a start."""
    return regex(f"[ \t]*+(?:{pattern})", flags)


MAX_CONFIGS = 4096
"""How many parser stacks `drive` remembers per start symbol (statements meet a few dozen)."""
MAX_STACK = 64
"""The deepest stack `drive` remembers (deep nesting is walked step by step instead)."""
MAX_WORDS = 128
"""How many names (words that are no keyword there) a config remembers the step of."""

#: The token kinds that open or close a bracket, and the newline: inside brackets a
#: newline is white space (`BracketNewlines`).
_LAYOUT = OPENING | CLOSING | {"_NL"}

#: What a token kind asks of the loop beyond a shift, in a lexer plan's `special` table:
#: skipped (an ignored terminal), or a newline, an opening or a closing bracket
#: (`BracketNewlines`: one mark each, so the loop asks no set which it is). A kind with a
#: token callback has the callback there (plain keywords as the `dict` of them); the kinds
#: absent (most tokens) ask nothing.
_IGNORED: Any = object()
_NEWLINE: Any = object()
_OPENS: Any = object()
_CLOSES: Any = object()
_LAYOUT_MARKS = (_NEWLINE, _OPENS, _CLOSES)

#: A parser stack remembered: the match of its top state's lexer (`_Memo.lexing`), its
#: `row` and `resolved` tables and the stack itself. `row` holds, for every token kind
#: the lexer may name there, the step it takes (reductions and the config after the
#: shift, filled as they are met; `_UNSEEN` before) or, for the kinds the lexer plan has
#: something to ask of (`special`), `(None, what it asks)`, a NAME's being the words met
#: (`_Words`); `resolved` holds the steps of the kinds such a token turns out to be (a
#: keyword, a name, a newline). So most tokens cost one lookup for what they ask and
#: where they lead.
_Config = tuple[Any, dict[str, Any], dict[str, Any], tuple[int, ...]]
#: What a token kind does from a config: the reductions (minus the rule's length, and its
#: callback) before it is shifted, and the config after the shift (`None` when that stack
#: is not remembered).
_Step = tuple[tuple[tuple[int, Any], ...], _Config | None]

#: A `row` entry for a kind not met yet from that config: (no reductions, no config).
_UNSEEN: tuple[None, None] = (None, None)

#: A word met from a config: what it is (a keyword, or the kind lexed), its reductions and
#: the config after the shift.
_Word = tuple[str, tuple[tuple[int, Any], ...], _Config | None]


class _Words(dict[str, _Word]):
    """The words met from one config as a token of `kind` (a NAME), by their text: what
    each is there (a keyword of the state's, `keywords`: text -> kind, else `kind`), its
    reductions and the config after the shift (`_Memo.word`, which fills it: a word not met
    yet is looked up as a missing key). `resolved` and `stack` are the config's."""

    __slots__ = ("keywords", "kind", "memo", "resolved", "stack")

    def __init__(
        self,
        memo: _Memo,
        kind: str,
        keywords: dict[str, str],
        resolved: dict[str, Any],
        stack: tuple[int, ...],
    ) -> None:
        super().__init__()
        self.memo, self.kind, self.keywords = memo, kind, keywords
        self.resolved, self.stack = resolved, stack

    def __missing__(self, value: str) -> _Word:
        return self.memo.word(self, value)


#: The token a "\n" is in every parser state: every state's lexer reads `_NL`
#: (`BracketNewlines.always_accept`), no other terminal may begin with a "\n", and the
#: blanks `_blank_first` puts before a token are spaces and tabs; so at a "\n" a state's
#: match gives this kind and text, and `drive` takes them without the match (most lines
#: end right after their last token; `test_parse_driver` asserts the reading of "\n").
_NEWLINE_AT = ("_NL", "\n")


def callback_token(callback: Any, kind: str, value: str, end: int) -> Token:
    """The token a Lark token callback (other than plain keywords) makes of the token of
    `kind` and `value` ending at `end`."""
    tok = LarkToken()
    tok.value, tok.type, tok.start_pos, tok.end_pos = value, kind, end - len(value), end
    called = callback(tok)
    return (called.type, called.value, called.start_pos, called.end_pos)


class _Memo:
    """The configs met so far by one parser for one start symbol (see the module doc)."""

    def __init__(self, parser: Any, start: Start) -> None:
        if isinstance(parser, Tables):
            # the builder names what its `__default__` makes of a helper rule's children
            helper = getattr(parser.builder, "helper", None)
            self.states: Any = _LoadedStates(parser, helper)
            self.plans: Any = parser.lexing
            start_states, end_states = parser.start_states, parser.end_states
            # the wrapper of a `?rule`'s callback (Lark's, or the loaded tables')
            self.expand_one: tuple[type, ...] = (drivetables.ExpandSingleChild,)
            self.filters: tuple[type, ...] = (drivetables.ChildFilter,)
        else:
            from lark.parse_tree_builder import ChildFilterLALR_NoPlaceholders, ExpandSingleChild

            self.expand_one = (ExpandSingleChild, drivetables.ExpandSingleChild)
            self.filters = (ChildFilterLALR_NoPlaceholders, drivetables.ChildFilter)
            table = parser.parser.parser.parse_table
            helper = getattr(parser.options.transformer, "helper", None)
            self.states = _tables(parser, helper)
            self.plans = _plans(parser.lexer.lexer)
            start_states, end_states = table.start_states, table.end_states
        # what makes a helper rule's holder, and the classes of child filters (`fuse`)
        self.helper = helper
        self.end_state: int = end_states[start]
        self.by_stack: dict[tuple[int, ...], _Config] = {}
        self.lexings: dict[int, tuple[Any, dict[str, Any], dict[str, Any]]] = {}
        first = self.config((start_states[start],))
        assert first is not None
        self.start: _Config = first

    def config(self, stack: tuple[int, ...]) -> _Config | None:
        """The config of `stack`, made on first sight; `None` past the bounds."""
        found = self.by_stack.get(stack)
        if found is None:
            if len(self.by_stack) >= MAX_CONFIGS or len(stack) > MAX_STACK:
                return None
            match, _, asked = self.lexing(stack[-1])
            resolved: dict[str, Any] = {}
            # a kind with keywords (a NAME) asks for the words met from this config
            row = {
                kind: (None, _Words(self, kind, asks[1], resolved, stack))
                if type(asks[1]) is dict
                else asks
                for kind, asks in asked.items()
            }
            found = self.by_stack[stack] = (match, row, resolved, stack)
        return found

    def word(self, words: _Words, value: str) -> _Word:
        """What a token of `words.kind` (a NAME) spelling `value` is from the config of
        `words` (the keyword it spells in this state, else itself), with its step;
        remembered in `words` for every keyword and for up to `MAX_WORDS` names. When the
        table has no action (a syntax error), no config: `drive` walks the table from
        there, which finds the error."""
        kind = words.kind
        spelled = words.keywords.get(value)
        if spelled is not None:
            kind = spelled
        resolved = words.resolved
        step = resolved.get(kind)
        if step is None:
            step = self.step(words.stack, kind)
            if step is None:
                return (kind, (), None)
            if step[1] is not None:
                resolved[kind] = step
        found = (kind, *step)
        if step[1] is not None and (spelled is not None or len(words) < MAX_WORDS):
            words[value] = found
        return found

    def lexing(self, state: int) -> tuple[Any, dict[str, Any], dict[str, Any]]:
        """How `drive` lexes in a parser state: the `match` of Lark's scanner's regex
        preceded by blanks (`_blank_first`; a loop when its regexes were split in
        several), what each token kind asks beyond a shift (`_IGNORED`, its token
        callback, plain keyword callbacks as `dict`s of keywords, or
        `_NEWLINE`, `_OPENS` or `_CLOSES`; ignored first, as Lark skips those before any callback),
        and the same as the `row` entries a config starts with."""
        found = self.lexings.get(state)
        if found is None:
            scanners, ignore, callbacks = self.plans[state]
            regexes = [
                _blank_first(*(s if isinstance(s, tuple) else (s.pattern, s.flags)))
                for s in scanners
            ]
            match: Callable[[str, int], Any]
            if len(regexes) == 1:
                match = regexes[0].match
            else:

                def match(text: str, pos: int) -> Any:
                    for regex in regexes:
                        m = regex.match(text, pos)
                        if m:
                            return m
                    return None

            special: dict[str, Any] = dict.fromkeys(OPENING, _OPENS)
            special.update(dict.fromkeys(CLOSING, _CLOSES))
            special["_NL"] = _NEWLINE
            if isinstance(self.plans, drivetables.Lexing):  # keyword dicts already
                special.update(callbacks)
            else:
                special.update((kind, _keyword_callback(cb)) for kind, cb in callbacks.items())
            special.update(dict.fromkeys(ignore, _IGNORED))
            # every kind the scanner may read has an entry, so `drive` asks its row by
            # subscript (an exact `dict`'s, the cheapest lookup) where `get` was a call
            asked: dict[str, Any] = {kind: _UNSEEN for r in regexes for kind in r.groupindex}
            asked.update((kind, (None, asks)) for kind, asks in special.items())
            found = self.lexings[state] = (match, special, asked)
        return found

    def step(self, config_stack: tuple[int, ...], kind: str) -> _Step | None:
        """What a token of `kind` does from the config of `config_stack`, walked in Lark's
        table as Lark's loop walks it; `None` when the table has no action (a syntax
        error)."""
        states = self.states
        stack = list(config_stack)
        ops: list[tuple[int, Any]] = []
        while True:
            entry = states[stack[-1]].get(kind)
            if entry is None:
                return None
            shift, target = entry
            if shift:
                stack.append(target)
                return tuple(ops), self.config(tuple(stack))
            size, build, origin = target
            if size:
                del stack[-size:]
            stack.append(states[stack[-1]][origin][1])
            # `?rule` reductions of one child (Lark's ExpandSingleChild) pass it up as it
            # is: on the value stack they change nothing
            if build is _extend_two:
                ops.append((_EXTEND_TWO, build))  # (done by `drive` itself)
            elif not (size == 1 and type(build) in self.expand_one):
                ops.append((-size, build))  # (negative: `drive` slices the value stack)
                self.fuse(ops)

    def fuse(self, ops: list[tuple[int, Any]]) -> None:
        """The last two reductions of `ops` as one, when the first makes a helper rule's
        holder (`inline`, of its k children) and the second is a child filter of n
        children that keeps them in order and inlines the last one, that holder (`a and
        b`: `__assertion_plus_3: AND term`, then `assertion: term __assertion_plus_3`):
        the filter's builder called on the n - 1 + k values at once gives it the same
        list, without the holder, the filter's loop and their two calls."""
        if len(ops) < 2:
            return
        (held, helper), (size, build) = ops[-2], ops[-1]
        if helper is None or helper is not self.helper or type(build) not in self.filters:
            return
        n = -size
        if build.to_include != [(i, i == n - 1) for i in range(n)]:
            return
        ops[-2:] = [(size + 1 + held, build.node_builder)]


def _memo(parser: Any, start: Start) -> _Memo:
    """The memo of a parser (Lark's frontend, or loaded tables) for a start symbol, kept
    on the parser."""
    memos: dict[str, _Memo] | None = getattr(parser, "_evaldsl_memos", None)
    if memos is None:
        memos = parser._evaldsl_memos = {}
    memo = memos.get(start)
    if memo is None:
        memo = memos[start] = _Memo(parser, start)
    return memo


def drive(lark: Lark | Tables, text: str, start: Start) -> Any | None:
    """Parse error-free text in one loop (see the module doc); `None` at the first thing
    that does not fit. Only call it with tables loaded from the file (`drivetables.py`) or
    a Lark parser for which `available(lark)`."""
    memo = _memo(lark if isinstance(lark, Tables) else lark.parser, start)
    match, row, resolved, stack = memo.start
    values: list[Any] = []
    pos, end = 0, len(text)
    depth = 0
    # where the line ends (-1 past the last one): a newline met right where a token ended
    # (most lines) is the `_NL` token without a match (see `_NEWLINE_AT`)
    line_end = text.find("\n")
    while True:  # (the end of the text is where no token matches: no test of `pos` a token)
        if pos == line_end:
            kind, value = _NEWLINE_AT
            pos += 1
        else:
            m = match(text, pos)  # the blanks before the token, and the token
            if m is None:
                while pos < end and (text[pos] == " " or text[pos] == "\t"):
                    pos += 1
                if pos < end:
                    return None  # no token fits here
                break  # blanks to the end
            kind = m.lastgroup
            value = m[kind]
            pos = m.end()
        # (every kind the state's lexer reads has its entry: `_Memo.lexing`)
        ops, following = row[kind]
        if ops is None:  # a kind that asks something first, or a step not met yet
            if type(following) is _Words:
                # a NAME, or the keyword it spells: the words met from this config, each
                # with what it is and its step (`_Memo.word` on a word not met yet)
                kind, ops, following = following[value]
                if following is None:  # a stack past the bounds (or an error): walk from here
                    read = (kind, value, pos - len(value), pos)
                    return _walk(memo, text, pos, depth, list(stack), values, read)
            else:
                steps = row
                if following is not None:
                    # (each kind asks one thing; a keyword is a word, never a bracket)
                    if following is _NEWLINE:
                        # (every "\n" is read here, by the match or not: the next line's end)
                        line_end = text.find("\n", pos)
                        if depth:
                            continue
                    elif following is _OPENS:
                        depth += 1
                    elif following is _CLOSES:
                        if depth:
                            depth -= 1
                    elif following is _IGNORED:
                        continue
                    else:  # a token callback
                        kind, value, _, _ = callback_token(following, kind, value, pos)
                        if kind in _LAYOUT:
                            if kind == "_NL":
                                if depth:
                                    continue
                            elif kind in OPENING:
                                depth += 1
                            elif depth:
                                depth -= 1
                    steps = resolved
                    ops, following = resolved.get(kind, _UNSEEN)
                if ops is None:
                    step = memo.step(stack, kind)
                    if step is None:
                        return None
                    ops, following = step
                    if following is None:  # a stack past the bounds: walk the table from here
                        read = (kind, value, pos - len(value), pos)
                        return _walk(memo, text, pos, depth, list(stack), values, read)
                    steps[kind] = step
        if ops:
            for size, build in ops:
                # (most reductions take two or three children: popped, no slices made)
                if size == -2:
                    last = values.pop()
                    values[-1] = build([values[-1], last])
                elif size == -3:
                    last = values.pop()
                    middle = values.pop()
                    values[-1] = build([values[-1], middle, last])
                elif size == _EXTEND_TWO:
                    last = values.pop()
                    middle = values.pop()
                    held = values[-1].children
                    held.append(middle)
                    held.append(last)
                elif size:
                    children = values[size:]
                    del values[size:]
                    values.append(build(children))
                else:
                    values.append(build([]))
        # the token made once its kind is known (a NAME may be a keyword)
        values.append((kind, value, pos - len(value), pos))
        match, row, resolved, stack = following
    # the end of the text: what is left reduced as Lark's table says (once a text)
    return _walk(memo, text, pos, depth, list(stack), values)


def _walk(
    memo: _Memo,
    text: str,
    pos: int,
    depth: int,
    state_stack: list[int],
    value_stack: list[Any],
    read: Token | None = None,
) -> Any | None:
    """`drive`'s loop without the memo, from `pos` with the given stacks (and the token
    `read` before `pos`, when there is one): Lark's steps one by one, for stacks too deep
    or too many to remember, and for the end of the text."""
    states, lexing, end_state = memo.states, memo.lexing, memo.end_state
    end = len(text)
    while True:
        if read is not None:
            tok, read = read, None
            kind = tok[0]
        elif pos < end:
            match, special, _ = lexing(state_stack[-1])
            m = match(text, pos)
            if m is None:
                while pos < end and (text[pos] == " " or text[pos] == "\t"):
                    pos += 1
                if pos < end:
                    return None
                kind, tok = "$END", None
            else:
                kind = m.lastgroup
                after = m.end()
                asks = special.get(kind)
                if asks is _IGNORED:
                    pos = after
                    continue
                value = m[kind]
                if type(asks) is dict:
                    kind = asks.get(value, kind)
                    tok = (kind, value, after - len(value), after)
                elif asks is not None and asks not in _LAYOUT_MARKS:
                    tok = callback_token(asks, kind, value, after)
                    kind = tok[0]
                else:
                    tok = (kind, value, after - len(value), after)
                pos = after
                if kind == "_NL":
                    if depth:
                        continue
                elif kind in OPENING:
                    depth += 1
                elif kind in CLOSING and depth:
                    depth -= 1
        else:
            kind, tok = "$END", None  # the end of the text: reduce what is left
        while True:
            entry = states[state_stack[-1]].get(kind)
            if entry is None:
                return None
            shift, target = entry
            if shift:
                if tok is None:
                    return None  # the end is never shifted
                state_stack.append(target)
                value_stack.append(tok)
                break
            size, build, origin = target
            if size:
                children = value_stack[-size:]
                del state_stack[-size:]
                del value_stack[-size:]
            else:
                children = []
            value = build(children)
            state_stack.append(states[state_stack[-1]][origin][1])
            value_stack.append(value)
            if tok is None and state_stack[-1] == end_state:
                return value_stack[-1]
