"""Changing values of a JSON tree to values of another type, for the hostile tests.

Takes a decoded JSON value (dicts, lists, scalars) and gives the paths of the values in
it (`locations`), the value at a path (`value_at`), and a way to put another value there
or take the key out (`put`); `CONFUSING` holds values of every JSON type (and texts the
readers look for), `confusing` draws a copy of one, `REMOVE` stands for "take it out".
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

from hypothesis import strategies as st

#: Values of every JSON type, and texts the readers look for.
CONFUSING: list[Any] = [
    None, True, 0, -1, 2**70, 1.5, "", "x", "tool.call", "assistant", "tool_use",
    [], {}, [1], ["x"], {"a": 1}, {"type": "text"}, [{"type": "text", "text": "t"}],
]  # fmt: skip
#: The key taken out (in a list: the element becomes null).
REMOVE: Any = object()

#: A value of CONFUSING, a copy of its own (one list or object put in two places, then
#: given a key, would make the tree a cycle).
confusing = st.sampled_from(CONFUSING).map(copy.deepcopy)

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
