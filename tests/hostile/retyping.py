"""Changing values of a JSON tree to values of another type, for the hostile tests.

Takes a decoded JSON value (dicts, lists, scalars) and gives the paths of the values in
it (`locations`) and of its objects (`objects_among`), the value at a path (`value_at`),
a way to put another value there or take the key out (`put`), and one change of either
kind drawn by Hypothesis (`change_once`). `CONFUSING` holds values of every JSON type
(and texts the readers look for); a change puts a copy of one (one list or object put
in two places, then given a key, would make the tree a cycle). `REMOVE` stands for
"take it out".
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Sequence
from typing import Any

from hypothesis import strategies as st

#: Values of every JSON type, and texts the readers look for.
CONFUSING: list[Any] = [
    None, True, 0, -1, 2**70, 1.5, "", "x", "tool.call", "assistant", "tool_use",
    [], {}, [1], ["x"], {"a": 1}, {"type": "text"}, [{"type": "text", "text": "t"}],
]  # fmt: skip
#: The key taken out (in a list: the element becomes null).
REMOVE: Any = object()


Path = tuple[Any, ...]


def locations(value: Any, path: Path = ()) -> Iterator[Path]:
    """The path of every value inside `value` (not `value` itself)."""
    if not isinstance(value, dict | list):
        return
    for key, inner in value.items() if isinstance(value, dict) else enumerate(value):
        yield (*path, key)
        yield from locations(inner, (*path, key))


def value_at(root: Any, path: Path) -> Any:
    """The value at `path`, or REMOVE when that place is gone (an earlier change)."""
    value = root
    for key in path:
        try:
            value = value[key]
        except (KeyError, IndexError, TypeError):
            return REMOVE
    return value


def put(root: Any, path: Path, new: Any) -> None:
    """Put `new` at `path` (REMOVE: take the key out), if that place still exists."""
    holder = value_at(root, path[:-1])
    last = path[-1]
    if isinstance(holder, dict) and last in holder:
        if new is REMOVE:
            del holder[last]
        else:
            holder[last] = new
    elif isinstance(holder, list) and isinstance(last, int) and last < len(holder):
        holder[last] = None if new is REMOVE else new


def objects_among(root: Any, paths: Sequence[Path]) -> list[Path]:
    """The paths of `paths` (and `root` itself) that hold an object."""
    return [p for p in [(), *paths] if isinstance(value_at(root, p), dict)]


def change_once(
    draw: st.DrawFn,
    root: Any,
    values: Sequence[Path],
    objects: Sequence[Path],
    keys: Sequence[str],
    among: Sequence[Any] = CONFUSING,
) -> None:
    """One change to `root`: the value at one of `values` retyped (a copy of a value of
    `among`) or taken out, or one of `keys` put, with such a value, into the object at
    one of `objects`."""
    new = st.sampled_from(among).map(copy.deepcopy)
    if draw(st.booleans()):
        put(root, draw(st.sampled_from(values)), draw(new | st.just(REMOVE)))
    else:
        holder = value_at(root, draw(st.sampled_from(objects)))
        if isinstance(holder, dict):
            holder[draw(st.sampled_from(keys))] = draw(new)
