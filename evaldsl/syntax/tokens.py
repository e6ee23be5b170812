"""Tokens for editors: what the grammar makes of a statement, in evaldsl's own types.

Takes the text of one statement (or the text before the cursor) and gives its tokens as
`Token` records (terminal kind, text, offsets), as far as the grammar can follow the
text, and the terminals the grammar accepts next. The language server's completion and
hover read these; no Lark object leaves `evaldsl.syntax`.
"""

from __future__ import annotations

import attrs
from lark import Token as LarkToken
from lark.exceptions import LarkError

from evaldsl.syntax.grammar import Start, plain_parser

#: Separators: not tokens of a statement.
_SEPARATORS = ("_NL", "SEMICOLON")


@attrs.frozen
class Token:
    """One token: its terminal (`"TOOL"`, `"NAME"`, `"STRING"`, …), its text as written,
    and its offsets in the text given."""

    kind: str
    text: str
    start: int
    end: int


def _token(tok: LarkToken) -> Token:
    start = tok.start_pos or 0
    return Token(str(tok.type), str(tok), start, tok.end_pos if tok.end_pos is not None else start)


def statement_tokens(text: str, start: Start = "file") -> list[Token]:
    """The tokens of a statement, as far as the grammar can follow it (never raises).

    >>> [t.kind for t in statement_tokens("tool search called")]
    ['TOOL', 'NAME', 'CALLED']
    """
    tokens: list[Token] = []
    try:
        for tok in plain_parser().parse_interactive(text, start=start).iter_parse():
            if tok.type not in _SEPARATORS:
                tokens.append(_token(tok))
    except LarkError:
        pass
    return tokens


def next_terminals(head: str, start: Start = "file") -> tuple[list[Token], frozenset[str]] | None:
    """The tokens of `head` and the terminals the grammar accepts after it; `None` when
    `head` is already wrong (or ends inside a string).

    >>> tokens, accepts = next_terminals("tool search ")
    >>> "CALLED" in accepts, [t.text for t in tokens]
    (True, ['tool', 'search'])
    """
    parser = plain_parser().parse_interactive(head, start=start)
    try:
        tokens = [_token(t) for t in parser.exhaust_lexer() if t.type not in _SEPARATORS]
        accepts = frozenset(parser.accepts())  # type: ignore[no-untyped-call]
    except LarkError:
        return None
    return tokens, accepts
