"""The grammar and the Lark parsers made from it.

Takes `grammar/evaldsl.lark` (from the source tree, or from inside the installed wheel)
and gives Lark LALR parsers with the contextual lexer (`new_lark`, and one instance per
thread from `lark_parser`), the post-lexer that lets lists and objects span lines
(`BracketNewlines`), and the keyword spelling of every terminal (`spellings`). Lark is
used inside `evaldsl.syntax` only: the rest of evaldsl sees AST nodes, diagnostics and
evaldsl's own tokens (`tokens.py`).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from evaldsl.syntax import drivetables
from evaldsl.syntax.tables import (
    key_text,
    load_or_build,
    serialise,
    shipped_key,
    shipped_path,
    table_key,
)

if TYPE_CHECKING:
    from lark import Lark, Token

# Lark is imported where a Lark parser is made: error-free text is parsed with the fast
# loop's tables (`drivetables.py`) without it.

#: The grammar's start symbols: a whole `.eval` file, or an assertion list (YAML `expect:`).
Start = Literal["file", "statements"]


def grammar_text() -> str:
    """The grammar, from the source tree or from inside the installed wheel."""
    here = Path(__file__).resolve().parents[2] / "grammar" / "evaldsl.lark"
    if here.is_file():
        return here.read_text(encoding="utf-8")
    from importlib import resources  # an installed wheel only: the source tree has it

    return resources.files("evaldsl.grammar").joinpath("evaldsl.lark").read_text(encoding="utf-8")


@lru_cache(maxsize=1)
def cached_grammar() -> str:
    """The grammar text, read once per process."""
    return grammar_text()


#: The terminals that open and close a bracket: inside brackets a newline is white space.
OPENING = frozenset({"LSQB", "LBRACE", "LPAR"})
CLOSING = frozenset({"RSQB", "RBRACE", "RPAR"})


class BracketNewlines:
    """Post-lexer: inside brackets a newline is white space, so lists may span lines.

    It also has every parser state's lexer read a NAME, wanted there or not (Lark's
    contextual lexer adds `always_accept` to each state's terminals). That is what makes
    a keyword a whole word: Lark folds the keywords a NAME may spell into the NAME
    terminal (a NAME whose text is one of the state's keywords becomes that keyword), so
    with a NAME in every state a run of letters is always read whole. Without it, a state
    that takes no name matched its keywords as bare strings, at any prefix of a longer
    word: `startswith` was read as `starts with`, `calledonce` as `called once`. A NAME
    where none fits is a syntax error naming the whole word."""

    always_accept = ("_NL", "NAME")

    def process(self, stream: Iterator[Token]) -> Iterator[Token]:
        depth = 0
        for tok in stream:
            kind = tok.type
            if kind == "_NL":
                if depth:
                    continue
            elif kind in OPENING:
                depth += 1
            elif kind in CLOSING and depth:
                depth -= 1
            yield tok


def parser_options(builder: object | None) -> dict[str, Any]:
    """The options of evaldsl's Lark parsers (the AST built during the parse when a
    builder is given)."""
    return {
        "parser": "lalr",
        "lexer": "contextual",
        "start": ["file", "statements"],
        "keep_all_tokens": True,
        "maybe_placeholders": False,
        "postlex": BracketNewlines(),
        "transformer": None if builder is None else TokenTuples(builder),
    }


class TokenTuples:
    """A builder as Lark's parser calls it: each of its callbacks is given the rule's
    children with Lark's tokens as the tuples the fast loop makes (`drivetables.Token`),
    so the builder reads one kind of token. `helper` and `__default__` (the holders of
    Lark's helper rules, whose children a parent's callback is given spliced in its own)
    are the builder's. Made for Lark's parsers only: the fast loop's tables call the
    builder itself."""

    def __init__(self, builder: Any) -> None:
        self.builder = builder
        self.__default__ = builder.__default__
        self.helper = getattr(builder, "helper", None)

    def __getattr__(self, name: str) -> Any:
        # (an AttributeError for a rule the builder does not build, as Lark expects)
        method = getattr(self.builder, name)
        from lark import Token

        def build(children: list[Any]) -> Any:
            return method(
                [
                    (c.type, c.value, c.start_pos, c.end_pos) if isinstance(c, Token) else c
                    for c in children
                ]
            )

        return build


def build_lark(builder: object | None) -> Lark:
    """A Lark LALR parser built from the grammar (~60 ms: `new_lark` loads it instead)."""
    from lark import Lark

    return Lark(cached_grammar(), **parser_options(builder))


def new_lark(builder: object | None) -> Lark:
    """A Lark LALR parser for the grammar, its tables loaded from the serialised form
    (`tables.py`) when that fits the grammar and the installed Lark, else built."""
    return load_or_build(cached_grammar(), parser_options(builder), lambda: build_lark(builder))


def tables_stale() -> bool:
    """Whether the shipped parser tables (Lark's, and the fast loop's) were made for
    another grammar, Lark or options."""
    key = table_key(cached_grammar(), parser_options(None))
    drive_key = shipped_key(shipped_path().with_name(drivetables.SHIPPED_NAME))
    return shipped_key() != key or drive_key != key


def write_tables() -> Path:
    """Build the parser and write its tables where the wheel ships them (`make tables`):
    Lark's serialised parser, and the fast parse loop's tables (`drivetables.py`)."""
    options = parser_options(None)
    path = shipped_path()
    built = build_lark(None)
    made_for = key_text(cached_grammar(), options)
    path.write_text(serialise(built, made_for))
    data = drivetables.export(built)
    if data is not None:  # else the fast loop reads Lark's parser (its shape is unknown)
        path.with_name(drivetables.SHIPPED_NAME).write_text(drivetables.serialise(data, made_for))
    return path


def loaded_drive_tables(builder: object) -> drivetables.Tables | None:
    """The fast parse loop's tables from the shipped file, with `builder`'s callbacks,
    when the file fits the grammar, the installed Lark and the options (else `None`)."""
    path = shipped_path().with_name(drivetables.SHIPPED_NAME)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return drivetables.load(text, key_text(cached_grammar(), parser_options(builder)), builder)


_local = threading.local()


def plain_parser() -> Lark:
    """This thread's Lark parser without a builder (tokens, completion, error wording)."""
    cached = getattr(_local, "plain", None)
    if cached is None:
        cached = _local.plain = new_lark(None)
    return cast("Lark", cached)


@lru_cache(maxsize=1)
def spellings() -> dict[str, str]:
    """Each keyword and punctuation terminal with its spelling: `CALLED` → `called`."""
    lark = plain_parser()
    return {t.name: str(t.pattern.value) for t in lark.terminals if t.pattern.type == "str"}
