"""Tables a process fills as it meets things, kept within a bound.

Takes a table (a plain `dict`), a key, a value and the table's limit, and keeps the value:
a table that has reached its limit is emptied first. A long process (a language server,
a Dask worker, a run over many files) meets ever new keys; what it keeps this way is a
cache, so forgetting everything at once costs only the work of making it again, and a
table never grows without bound. Used for span times' texts and small attribute values
(`runs/otel.py`, `runs/otlpdecode.py`), the plans of indexed attributes
(`runs/rawattrs.py`), call probes and generated passes (`predicates/calls.py`,
`runs/passes.py`) and compiled programs (`score/scoring.py`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")


def keep(table: dict[K, V], key: K, value: V, limit: int) -> V:
    """`value`, kept in `table` under `key` (the table emptied first at `limit` entries).

    >>> texts: dict[int, str] = {1: "a", 2: "b"}
    >>> keep(texts, 3, "c", 2), texts
    ('c', {3: 'c'})
    """
    if len(table) >= limit:
        table.clear()
    table[key] = value
    return value


def keep_weighed(
    table: dict[K, V], key: K, value: V, weight: Callable[[K, V], int], budget: int
) -> V:
    """`value`, kept in `table` under `key` (the table emptied first when the weights of
    its entries and this one's would pass `budget`). The weights are summed at each call:
    for values that cost far more to make than that sum.

    >>> passes: dict[str, str] = {"a": "xx", "b": "yyy"}
    >>> keep_weighed(passes, "c", "zzzz", lambda k, v: len(v), 8), passes
    ('zzzz', {'c': 'zzzz'})
    """
    if sum(weight(k, v) for k, v in table.items()) + weight(key, value) > budget:
        table.clear()
    table[key] = value
    return value
