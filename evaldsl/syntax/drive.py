"""The fast parse loop: error-free text parsed in one loop over Lark's own LALR tables.

Takes a Lark parser (built with the AST builder) and text, and gives the parse's result,
or `None` at the first thing that does not fit (the caller then parses with Lark's own
loop, which reports the error as Lark does). It uses the same per-state scanners as
Lark's contextual lexer, the bracket rule of `BracketNewlines`, and Lark's shift/reduce
steps with the same callbacks (so the same AST), without the generators and method calls
between them: parsing is most of compiling.

It reads Lark internals (`scanner._mres`, the parse table, the callbacks), so it is
guarded: `available(lark)` holds only for the Lark versions it was written for
(`SUPPORTED_LARK`) when those internals have the expected shape; otherwise `drive` is
never used and Lark's own loop parses everything (slower, the same result). A test runs
the whole corpus both ways.
"""

from __future__ import annotations

from typing import Any, cast

import lark as lark_module
from lark import Lark, Token
from lark.lexer import ContextualLexer
from lark.parsers.lalr_analysis import Shift

from evaldsl.syntax.grammar import CLOSING, OPENING, Start

#: The Lark minor versions whose internals `drive` was written against.
SUPPORTED_LARK = ("1.3.",)


def available(lark: Lark) -> bool:
    """Whether `drive` may run on this Lark parser: a supported Lark version whose
    parser and lexer have the shape `drive` reads."""
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


def _plans(lexer: ContextualLexer) -> _Plans:
    """The lexer plans of a parser's contextual lexer, kept on the lexer."""
    plans: _Plans | None = getattr(lexer, "_evaldsl_plans", None)
    if plans is None:
        plans = _Plans(cast(dict[int, Any], lexer.lexers))
        lexer._evaldsl_plans = plans  # type: ignore[attr-defined]
    return plans


_new_str = str.__new__


def _tables(frontend: Any) -> dict[int, dict[str, tuple[bool, Any]]]:
    """Lark's parse table for `drive`: plain-string keys (Lark's rule names are Tokens,
    whose Python `__eq__` would run at every goto), and each entry `(shift?, target)`
    where a reduce's target is already (rule length, callback, origin name) (Lark's rules
    hash in Python too)."""
    cached = getattr(frontend, "_evaldsl_tables", None)
    if cached is None:
        parser = frontend.parser.parser
        callbacks = parser.callbacks
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


def drive(lark: Lark, text: str, start: Start) -> Any | None:
    """Parse error-free text in one loop (see the module doc); `None` at the first thing
    that does not fit. Only call it when `available(lark)`."""
    frontend = lark.parser
    parser = frontend.parser.parser
    table = parser.parse_table
    states = _tables(frontend)
    plans = _plans(frontend.lexer.lexer)
    state_stack: list[int] = [table.start_states[start]]
    value_stack: list[Any] = []
    end_state = table.end_states[start]
    pos, end = 0, len(text)
    depth = 0
    while True:
        if pos < end:
            char = text[pos]
            if char == " " or char == "\t":
                pos += 1
                continue
            scanners, ignore, token_callbacks = plans[state_stack[-1]]
            m = None
            for mre in scanners:
                m = mre.match(text, pos)
                if m:
                    break
            if m is None:
                return None
            kind = m.lastgroup
            after = m.end()
            if kind in ignore:
                pos = after
                continue
            # Token's own constructor, minus its argument shuffling: it runs once per token
            value = m.group(0)
            tok = _new_str(Token, value)
            tok.type = kind
            tok.start_pos = pos
            tok.value = value
            tok.line = tok.column = tok.end_line = tok.end_column = None
            tok.end_pos = after
            callback = token_callbacks.get(kind)
            if callback is not None:
                tok = callback(tok)
                kind = tok.type
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
