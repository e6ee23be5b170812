"""The run's error for a value an adapter did not expect, or could not read, at the item
that holds it.

Takes the items a format's adapter was reading, the exception it raised where a value had
a type the format does not allow there (a list for a name, an object for an index, null
for a number: what `UNEXPECTED` lists), and a way to read a part of the items again; gives
a `RunError` naming the file, the item (its line, or its element) and the format. The
adapters test the values they read; this is the net for what they do not, so that a trace
is an error with a place, never a traceback and never a pass.

`misread` does the same for a value the adapter tested and refused (`providers.BadValue`:
a tool call's name that is not text, a usage of unknown spelling; `text.BadUsage`: a
token count that is not one), with the adapter's own words for what it found.

The item is found by reading heads of the items (a bisection: about log2(n) readings, on
the error path only): the shortest head that raises the same kind of exception ends with
the item. A value that fails only when a stream is finished, after its last item, is
found the same way (every head holding it fails); a file of one item (a document) is
named whole.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from evaldsl.runs.model import RunError
from evaldsl.runs.providers import Items

#: What an adapter raises on a value of an unexpected type (never on purpose: its own
#: errors are `RunError`s).
UNEXPECTED = (TypeError, AttributeError, KeyError, IndexError, ValueError, RecursionError)

_REPORT = "; if the format allows that value there, evaldsl's reader is wrong: please report it"
_HINT = (
    "the file is read as {fmt} ({why}); fix that value or re-record the trace, or name "
    'another format with `trace "…" as FORMAT`' + _REPORT
)
_DETECTION_HINT = (
    'fix that value or re-record the trace, or name its format with `trace "…" as FORMAT`' + _REPORT
)


def unreadable(
    items: Items,
    fmt: str | None,
    why: str,
    exc: BaseException,
    read: Callable[[Items], object],
) -> RunError:
    """The run's error for `exc`, raised by `read(items)` (the `fmt` reader, chosen for
    `why`; None: format detection): at the first item whose head of the items raises
    the same kind of exception."""
    at = _first_failing(items, type(exc), read)
    what = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    # one item (a document, a line of standard input, a file of one line): it is named
    # as itself, not as "the file", which a line of standard input is not
    place = items.where(at if at is not None else 0) if items.values else "the file"
    reader = f"the {fmt} reader" if fmt is not None else "format detection"
    message = f"{place} holds a value of a type {reader} does not expect there ({what})"
    hint = _HINT.format(fmt=fmt, why=why) if fmt is not None else _DETECTION_HINT
    if at is None:
        return RunError(message, path=items.path, hint=hint)
    return items.error(at, message, hint)


def misread(
    items: Items,
    fmt: str,
    why: str,
    exc: ValueError,
    read: Callable[[Items], object],
    hint: str | None = None,
) -> RunError:
    """The run's error for `exc`, a value the `fmt` reader (chosen for `why`) refused while
    `read(items)` read it: its message at the first item whose head of the items raises the
    same kind of exception (the file, for a document), with `hint` or else how to fix it."""
    at = _first_failing(items, type(exc), read)
    hint = hint or (
        f"the file is read as {fmt} ({why}); fix that value or re-record the trace" + _REPORT
    )
    if at is None:
        return RunError(str(exc), path=items.path, hint=hint)
    return items.error(at, f"{items.where(at)}: {exc}", hint)


def _first_failing(
    items: Items, kind: type[BaseException], read: Callable[[Items], object]
) -> int | None:
    """The index of the last item of the shortest head that raises `kind` (None: there
    is one item, the whole document)."""
    count = len(items.values)
    if count < 2:
        return None

    def fails(n: int) -> bool:
        try:
            read(_head(items, n))
        except kind:
            return True
        except Exception:  # another failure (a head too short to be a run): not this one
            return False
        return False

    low, high = 1, count  # all of them fail: the shortest head that does
    while low < high:
        middle = (low + high) // 2
        if fails(middle):
            high = middle
        else:
            low = middle + 1
    return low - 1


def _head(items: Items, n: int) -> Items:
    return attrs.evolve(
        items,
        values=items.values[:n],
        lines=items.lines[:n] if items.lines is not None else None,
        events=items.events[:n] if items.events is not None else None,
    )
