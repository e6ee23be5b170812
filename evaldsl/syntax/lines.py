"""Parsing text whose lines repeat: each distinct line parsed once, then copied.

Takes a parse of one piece of text (`whole`: the piece's program, or `None` at an error),
the builder it builds with, and the text; gives the statements the one pass over the whole
text would give, spans included, or `None` when the text is not worth it (few lines, or few
that repeat) or has an error (the caller then parses the whole text as before, and that
parse reports the error).

Why: a suite of many cases repeats its assertions case after case (`speed.py`'s 120 cases
of the same 20 statements), and parsing is most of reading such a file: most of what a
`-j` parent does before it forks. A line is parsed once, at its first offset; where the
same line comes again, its statements are copied with every span moved (`moved`), about a
fifth of the instructions of parsing it again.

Why a line parsed on its own gives what the whole text's pass gives it: statements end at
newlines outside brackets (inside them a newline is white space), no token spans a
newline, and a line that parses on its own closes every bracket it opens; so at the start
of such a line the whole text's parser is where it is at the start of a text, and the
line's statements are built alike, at the offset the builder is given (`Builder.base`).
The first line that does not parse on its own (a list over several lines, an error) ends
this: the rest of the text, from that line on, is parsed as a whole. A line whose parse
noted a limit crossed (`Builder.problems`) is not copied: where it comes again it is parsed
again, so each of its problems is noted where it is. `tests/test_parse_lines.py` parses
the corpus both ways and compares every node and span.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, get_origin

import attrs

from evaldsl.cache.compiled import compile_cached
from evaldsl.language import ast
from evaldsl.language.slotinit import twin
from evaldsl.language.source import Span
from evaldsl.syntax.build import Builder

#: A text of fewer lines is parsed as a whole: splitting it would cost more than it saves.
MIN_LINES = 64

#: What `by_lines` is given to parse a piece: the piece's program, or `None` at an error.
Whole = Callable[[str, Any], Any]

# (a Span straight from the tuple constructor, as the builder makes them: see build.py)
_new_span = tuple.__new__

#: Every AST node class.
_NODES = frozenset(c for c in vars(ast).values() if isinstance(c, type) and attrs.has(c))


def worth_it(lines: list[str]) -> bool:
    """Whether a text of these lines repeats enough of them to be parsed line by line:
    many lines, at least half of them seen before."""
    return len(lines) >= MIN_LINES and 2 * len(set(lines)) <= len(lines)


def by_lines(
    whole: Whole, builder: Builder, text: str, start: Any, lines: list[str]
) -> list[ast.Statement] | None:
    """The statements of `text`, whose lines (`text.split("\n")`) are `lines`, each
    distinct line parsed once (see the module doc); `None` when it is not worth it
    (`worth_it`) or the text has an error.

    >>> from evaldsl.syntax.parser import parse
    >>> text = "case 'a'\\ntool t called 2 times\\n" * 40
    >>> [s.span for s in parse(text).program.statements][1:4:2]  # the same line twice
    [Span(start=9, end=30), Span(start=40, end=61)]
    """
    if not worth_it(lines):
        return None
    seen: dict[str, tuple[int, tuple[ast.Statement, ...]]] = {}
    statements: list[ast.Statement] = []
    at = 0
    try:
        for line in lines:
            found = seen.get(line)
            if found is not None:
                first, made = found
                by = at - first
                statements.extend([moved(s, by) for s in made])
            elif line:
                builder.base = at
                noted = len(builder.problems)
                program = whole(line, start)
                if program is None:
                    # (an error, or a statement over several lines: the rest as a whole)
                    rest = whole(text[at:], start)
                    if rest is None:
                        return None
                    statements.extend(rest.statements)
                    return statements
                statements.extend(program.statements)
                if len(builder.problems) == noted:
                    seen[line] = (at, program.statements)
            at += len(line) + 1
        return statements
    finally:
        builder.base = 0


def moved(node: Any, by: int) -> Any:
    """A copy of an AST node with every span in it moved by `by`: the node the parser
    makes of the same text `by` characters further on (its nodes copied, their other
    values, all immutable, shared).

    >>> node = ast.Name("x", span=Span(3, 4))
    >>> moved(node, 10).span
    Span(start=13, end=14)
    """
    mover: Any = _MOVERS[type(node)]
    return mover(node, by)


def _moved_span(span: Span, by: int) -> Span:
    return _new_span(Span, (span[0] + by, span[1] + by))


def _moved_items(items: tuple[Any, ...], by: int) -> tuple[Any, ...]:
    """A node's tuple (of nodes, or of an object's key and value pairs) with its nodes
    moved."""
    if not items:  # (most: a subject's keys)
        return items
    movers = _MOVERS
    out = []
    for item in items:
        mover = movers[type(item)]
        out.append(item if mover is None else mover(item, by))
    return tuple(out)


class _Movers(dict[type, Any]):
    """Per type of value, what moves a value of it by an offset: for a node class, its
    function (`_mover`, made on first use); for a span and a tuple, theirs; for any other
    value (all immutable: strings, numbers, `None`), `None` (kept as it is)."""

    def __missing__(self, kind: type) -> Any:
        mover = self[kind] = _mover(kind) if kind in _NODES else None
        return mover


_MOVERS = _Movers({Span: _moved_span, tuple: _moved_items})


#: The types a field annotated with only these holds: no node, span or tuple in it.
_PLAIN = frozenset({"str", "int", "float", "bool", "None"})


def _plain(annotation: Any) -> bool:
    """Whether a node's field of this annotation (as written: the module's annotations
    are strings) holds a plain value only (a string, a number, `None`), kept as it is by a
    copy: such a field is copied without asking its value's type (most are: names, kinds,
    operators, numbers).

    >>> _plain("str | None"), _plain("SubjectKind"), _plain("Value"), _plain("tuple[Key, ...]")
    (True, True, False, False)
    """
    if not isinstance(annotation, str):
        return False
    alias = getattr(ast, annotation, None)
    if annotation.startswith("Literal[") or get_origin(alias) is Literal:
        return True
    return all(part in _PLAIN for part in annotation.split(" | "))


def _one_class(annotation: Any) -> type | None:
    """The node class a field of this annotation always holds, when it names one (`Subject`,
    `Count`) whose own fields name none (so the mover made for it calls no other directly,
    and no two movers wait on each other to be made): its mover is then called directly,
    without asking the value's type."""
    found = _named_node(annotation)
    if found is None or any(_named_node(f.type) is not None for f in attrs.fields(found)):
        return None
    return found


def _named_node(annotation: Any) -> type | None:
    """The node class an annotation (as written: the module's annotations are strings)
    names by itself, if any."""
    found = getattr(ast, annotation, None) if isinstance(annotation, str) else None
    return found if found in _NODES else None


def _mover(cls: type) -> Any:
    """The function moving a node of class `cls`: it makes the new node as the parser
    makes it (`slotinit.maker`: its fields stored on the class's unfrozen twin, which then
    becomes the class), its span moved, the plain fields copied, a field of one node class
    moved by that class's mover, a tuple by `_moved_items` (an empty one kept), any other
    field by its value's type (a function per class, generated: a loop over the fields,
    each read and stored through its slot's descriptor, cost as much as parsing the line
    again)."""
    namespace: dict[str, Any] = {
        "_movers": _MOVERS,
        "_twin": twin(cls),
        "_cls": cls,
        "_new_span": _new_span,
        "_Span": Span,
        "_items": _moved_items,
    }
    stores = []
    for f in attrs.fields(cls):
        if f.name == "span":
            stores.append(
                "    span = node.span\n"
                "    new.span = _new_span(_Span, (span[0] + by, span[1] + by))\n"
            )
        elif _plain(f.type):
            stores.append(f"    new.{f.name} = node.{f.name}\n")
        elif (one := _one_class(f.type)) is not None:
            namespace[f"_move_{f.name}"] = _MOVERS[one]
            stores.append(f"    new.{f.name} = _move_{f.name}(node.{f.name}, by)\n")
        elif isinstance(f.type, str) and f.type.startswith("tuple["):
            stores.append(
                f"    value = node.{f.name}\n"
                f"    new.{f.name} = _items(value, by) if value else value\n"
            )
        else:
            stores.append(
                f"    value = node.{f.name}\n"
                f"    mover = movers[kind(value)]\n"
                f"    new.{f.name} = value if mover is None else mover(value, by)\n"
            )
    source = (
        "def move(node, by):\n"
        "    movers, kind = _movers, type\n"
        "    new = _twin()\n"
        f"{''.join(stores)}"
        "    new.__class__ = _cls\n"
        "    return new\n"
    )
    # compiled once, then loaded from the code cache at later starts (cache/compiled.py)
    exec(compile_cached(source, f"<evaldsl mover {cls.__module__}.{cls.__qualname__}>"), namespace)
    return namespace["move"]
