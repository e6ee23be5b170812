"""Span attributes whose values stay undecoded until they are read.

Takes a dict of attribute names to undecoded JSON values (`msgspec.Raw`, from the typed
OTel decoder, `otlpdecode.py`) and the function that turns one into its value, and gives
a `dict` whose values are decoded on first read (`a[key]`, `a.get(key)`, `a.items()`),
so the OTel reader (`otel.py`) decodes exactly the attributes it reads, with the same
code as for a file decoded whole: a span's prompt, its tools' definitions or a message
history it never reads are never built. Key tests (`key in a`, `not a`) read no value.

`entries` gathers flattened `prefix.N.key` attributes into one `RawAttrs` per index,
still undecoded (an OpenInference input message's content is decoded only if its role is
read as `tool`). Where each entry's attributes are is worked out once for a set of keys
and kept (spans of one instrumentation and one conversation length have the same keys).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from msgspec import Raw

from evaldsl.bounded import keep

#: The `N.key` after a prefix's dot (matched from that position).
_INDEX = re.compile(r"(\d+)\.(.+)$")
_ABSENT = object()
#: The JSON of a value a decoder's table of small values may hold (see `RawAttrs.empty`).
SMALL_BYTES = 96
_NONE_KEPT: dict[bytes, Any] = {}  # (the table of a `RawAttrs` whose decoder keeps none)


def index_plan(lead: str, keys: Iterable[str]) -> list[list[tuple[str, str]]]:
    """How flattened `prefix.N.key` attributes make one entry per `N` (`lead`: the prefix
    and its dot): for each entry, in order of `N`, its (name in the entry, key) pairs, in
    the keys' order (a name twice: the last pair wins). `otel.indexed` reads a plain dict
    by it, `RawAttrs.entries` keeps it per key set."""
    found: dict[int, list[tuple[str, str]]] = {}
    for key in keys:
        m = _INDEX.match(key, len(lead)) if key.startswith(lead) else None
        if m:
            found.setdefault(int(m.group(1)), []).append((m.group(2), key))
    return [found[i] for i in sorted(found)]


#: `RawAttrs.entries`' plans by prefix and keys (spans of one instrumentation and one
#: conversation length have the same keys): reading a span's messages is then one dict
#: made per message, without looking at its keys again.
_PLANS: dict[tuple[str, str], list[list[tuple[str, str]]]] = {}
#: The bounds of a table of plans kept per key set (this module's, `spanplan`'s): at most
#: `MAX_PLANS` plans, and none for a span of more than `MAX_KEPT_KEYS` keys, whose keys the
#: table would otherwise hold on to after the file is read (its plan is made each time).
MAX_PLANS = 4096
MAX_KEPT_KEYS = 256


def as_stored(a: dict[str, Any], key: str) -> Any:
    """`a[key]` as stored (`a`: a `RawAttrs`, or a plain dict of decoded values): a small
    value not yet decoded as its JSON (`bytes`, as its decoder's table is keyed), a large
    one decoded (read, `_reader`)."""
    value = dict.__getitem__(a, key)
    if type(value) is Raw:
        return b"" + value if len(value) <= SMALL_BYTES else a[key]
    return value


def _reader(
    decode: Callable[[Any], Any], small: dict[bytes, Any], miss: Callable[[bytes], Any]
) -> Callable[[RawAttrs, str], Any]:
    """The `__getitem__` of attributes read with `decode`: a value undecoded (a `Raw`) is
    decoded and put back in its place. A small one decoded before is taken from its
    decoder's table (`small`), not decoded again (most values read are kinds, names and
    counts met before), and left undecoded (the table holds only values nobody can
    change); one it does not hold is decoded by `miss` from the JSON looked up; a large
    one by `decode`. (The decoders and the table are in the closure, and the
    decoding is written out in it: a read, the first of each value read, looks up no
    attribute of the instance or its class and calls no function of its own; reads are
    most of what a span's attributes cost.)"""
    item, kept = dict.__getitem__, small.get

    def __getitem__(self: RawAttrs, key: str) -> Any:
        value = item(self, key)
        if type(value) is Raw:
            # (`[]=` is `dict`'s own, in C: `dict.__setitem__` called packs its arguments
            # in a tuple and unpacks them, ~800 instructions a value)
            if len(value) <= SMALL_BYTES:
                # (its bytes by `+`, the concatenation's copy of a buffer in C: `bytes(value)`
                # is a call of the type, ~960 instructions where this is ~450)
                data = b"" + value
                found = kept(data, _ABSENT)
                if found is not _ABSENT:
                    # (not put back: the table holds only values nobody can change, and
                    # most values are read once; a second read is this lookup again)
                    return found
                value = self[key] = miss(data)
            else:
                value = self[key] = decode(value)
        return value

    return __getitem__


class RawAttrs(dict[str, Any]):
    """Attributes whose values are decoded by `decode` on first read (see the module doc).

    A value is kept undecoded (`msgspec.Raw`) until read, then replaced by its value in
    place: a decoded value is never a `Raw`, so the type of what is stored says which
    it is, without a second dict to look in. (A small value read from its decoder's
    table is left undecoded: a second read looks it up there again.)"""

    __slots__ = ("_decode", "_keys", "_miss", "_read", "_small")
    _keys: str | None

    def __init__(
        self,
        raw: dict[str, Any],
        decode: Callable[[Any], Any],
        small: dict[bytes, Any] = _NONE_KEPT,
        miss: Callable[[bytes], Any] | None = None,
    ) -> None:
        dict.__init__(self, raw)  # (not `super()`: no proxy made, for every message read)
        self._decode = decode
        self._keys = None
        self._small = small
        self._miss = decode if miss is None else miss
        # (the readers' own attributes are of a class made by `reading`, which reads
        # without this second call)
        self._read = _reader(decode, small, self._miss)

    def __getitem__(self, key: str) -> Any:
        return self._read(self, key)

    def get(self, key: str, default: Any = None) -> Any:
        # (the readers of every span read by `[]` after `in`: this is their rare `get`)
        return self[key] if key in self else default  # noqa: SIM401 (this is `get`)

    def items(self) -> list[tuple[str, Any]]:  # type: ignore[override]
        return [(key, self[key]) for key in dict.keys(self)]

    def values(self) -> list[Any]:  # type: ignore[override]
        return [self[key] for key in dict.keys(self)]

    def __repr__(self) -> str:
        return f"RawAttrs({dict(self.items())!r})"

    def entries(self, prefix: str) -> list[dict[str, Any]]:
        """The attributes `prefix.N.key` as one `RawAttrs` of `key`s per `N`, in order of
        `N`, their values as they are (undecoded unless read)."""
        keys = getattr(self, "_keys", None)  # (unset in a `reading` maker's: never read)
        if keys is None:
            keys = self._keys = "\n".join(dict.keys(self))
        lead = prefix + "."
        if lead not in keys:  # (one search in C instead of a loop over the keys)
            return []
        plan: list[list[tuple[str, str]]] | None
        # a key holding a newline makes `keys` ambiguous; a span of very many keys would
        # leave them all held by the table once the file is read: no plan kept for either
        if len(self) > MAX_KEPT_KEYS or keys.count("\n") != len(self) - 1:
            plan = index_plan(lead, dict.keys(self))
        else:
            plan = _PLANS.get((lead, keys))
            if plan is None:
                plan = keep(_PLANS, (lead, keys), index_plan(lead, dict.keys(self)), MAX_PLANS)
        get = dict.__getitem__
        made: Callable[..., RawAttrs] = type(self)
        if made is not RawAttrs:  # (a class of `reading`'s: its decoders are its own)
            return [made({name: get(self, key) for name, key in entry}) for entry in plan]
        decode, small, miss = self._decode, self._small, self._miss
        return [
            RawAttrs({name: get(self, key) for name, key in entry}, decode, small, miss)
            for entry in plan
        ]

    @classmethod
    def reading(
        cls,
        decode: Callable[[Any], Any],
        small: dict[bytes, Any],
        miss: Callable[[bytes], Any] | None = None,
    ) -> Callable[..., RawAttrs]:
        """A subclass whose instances decode with `decode` and `small`, made by `dict`'s own
        `__init__` (empty, then filled in place, or from a dict): the typed reader makes one
        for every span, and a class with a Python `__init__` is called with its arguments
        packed, then `__init__` with them. `small`: the values `decode`
        keeps by their JSON (of at most `SMALL_BYTES`), read from it without calling
        `decode`; values it does not hold are decoded by `miss` from that JSON (`decode`
        when not given)."""
        missed = decode if miss is None else miss
        namespace = {
            "__slots__": (),
            "__init__": dict.__init__,
            "__getitem__": _reader(decode, small, missed),
            "_decode": staticmethod(decode),
            "_small": small,
            "_miss": staticmethod(missed),
        }
        made: Callable[..., RawAttrs] = type(cls.__name__, (cls,), namespace)
        return made

    def raw(self, key: str) -> bytes | None:
        """`key`'s undecoded JSON (`None` when absent or decoded and put back)."""
        value = dict.get(self, key)
        return bytes(value) if type(value) is Raw else None
