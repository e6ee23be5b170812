"""What a Python module file defines at its top level, read without running it.

Takes the path of a run target's module file (`agent/myagent.py`) and gives the names its
top level binds (functions, classes, assignments, imports), or `None` when the file can
bind names a reading cannot see (`from x import *`, a module `__getattr__`, `global`,
`globals()`, `exec`, …): `check` then says nothing about the target's function, and the run
says whether it is there. A file Python cannot parse gives its syntax error, which
importing it would raise. `check` executes nothing: a target's module is parsed with
Python's `ast`, never imported.
"""

from __future__ import annotations

import ast as pyast
import functools
import os
from pathlib import Path

import attrs

from evaldsl.language.reading import read_regular

#: Bytes of a module file read to learn its names: a larger file is not read (its
#: target is looked for when the case runs, as for an installed package).
MODULE_LIMIT = 4 * 1024 * 1024

#: Calls that can bind a module's names out of a reading's sight.
_DYNAMIC_CALLS = frozenset({"globals", "vars", "exec", "setattr", "__import__", "locals"})
#: Attributes through which a module's namespace can be written.
_DYNAMIC_ATTRIBUTES = frozenset({"__dict__", "modules"})
#: Scopes of their own: what they bind is not the module's.
_SCOPES = (pyast.FunctionDef, pyast.AsyncFunctionDef, pyast.ClassDef, pyast.Lambda)
_COMPREHENSIONS = (pyast.ListComp, pyast.SetComp, pyast.DictComp, pyast.GeneratorExp)


@attrs.frozen
class Unparsable:
    """A module file Python refuses: its syntax error, where importing it would fail."""

    message: str
    line: int
    column: int


def module_names(path: Path) -> frozenset[str] | Unparsable | None:
    """The names `path`'s top level binds; `None` where a reading cannot tell them all (or
    the file cannot be read: the run says why); `Unparsable` for a syntax error."""
    try:
        found = os.stat(path)
    except OSError:
        return None
    return _names(str(path), found.st_mtime_ns, found.st_size)


# An editor checks at every edit: a module is parsed again only once its file changed.
@functools.lru_cache(maxsize=64)
def _names(path: str, _mtime_ns: int, _size: int) -> frozenset[str] | Unparsable | None:
    try:
        source = read_regular(path, MODULE_LIMIT)
    except OSError:  # (`FileProblem` too: a file too large, a folder, …)
        return None
    try:
        tree = pyast.parse(source, filename=path)
    except SyntaxError as err:
        return Unparsable(err.msg, err.lineno or 1, err.offset or 1)
    except ValueError:  # (a NUL byte: importing it fails too, but say nothing here)
        return None
    return _bound(tree)


def _bound(tree: pyast.Module) -> frozenset[str] | None:
    names: set[str] = set()
    for node in _top_level(tree):
        match node:
            case pyast.FunctionDef(name=name) | pyast.AsyncFunctionDef(name=name):
                names.add(name)
            case pyast.ClassDef(name=name):
                names.add(name)
            case pyast.Import(names=aliases):
                names.update(a.asname or a.name.partition(".")[0] for a in aliases)
            case pyast.ImportFrom(names=aliases):
                if any(a.name == "*" for a in aliases):
                    return None
                names.update(a.asname or a.name for a in aliases)
            case pyast.Name(id=name, ctx=pyast.Store()):
                names.add(name)
            case pyast.ExceptHandler(name=str(name)):
                names.add(name)
            case pyast.MatchAs(name=str(name)) | pyast.MatchStar(name=str(name)):
                names.add(name)
            case pyast.MatchMapping(rest=str(name)):
                names.add(name)
            case pyast.Global():
                return None
            case pyast.Call(func=pyast.Name(id=called)) if called in _DYNAMIC_CALLS:
                return None
            case pyast.Attribute(attr=attr) if attr in _DYNAMIC_ATTRIBUTES:
                return None
    if "__getattr__" in names:  # a module's own attribute hook answers any name
        return None
    return frozenset(names)


def _top_level(tree: pyast.Module) -> list[pyast.AST]:
    """The nodes of the module's own scope. A definition's name is bound there, not what
    its body binds, but a `global` or `globals()` in the body binds module names, and a
    comprehension's `:=` binds one: those are kept from inside too."""
    found: list[pyast.AST] = []
    todo: list[pyast.AST] = list(tree.body)
    while todo:
        node = todo.pop()
        found.append(node)
        if isinstance(node, _SCOPES):
            found.extend(_dynamic_in(node))
        elif isinstance(node, _COMPREHENSIONS):
            found.extend(_dynamic_in(node))
            found.extend(n.target for n in pyast.walk(node) if isinstance(n, pyast.NamedExpr))
        else:
            todo.extend(pyast.iter_child_nodes(node))
    return found


def _dynamic_in(node: pyast.AST) -> list[pyast.AST]:
    """The nodes under `node` that bind module names out of sight."""
    return [
        n
        for n in pyast.walk(node)
        if isinstance(n, pyast.Global)
        or (isinstance(n, pyast.Attribute) and n.attr in _DYNAMIC_ATTRIBUTES)
        or (
            isinstance(n, pyast.Call)
            and isinstance(n.func, pyast.Name)
            and n.func.id in _DYNAMIC_CALLS
        )
    ]
