"""Span attributes whose values stay undecoded until they are read.

Takes a dict of attribute names to undecoded JSON values (`msgspec.Raw`, from the typed
OTel decoder, `otlpdecode.py`) and the function that turns one into its value, and gives
a `dict` whose values are decoded on first read (`a[key]`, `a.get(key)`, `a.items()`),
so the OTel reader (`otel.py`) decodes exactly the attributes it reads, with the same
code as for a file decoded whole: a span's prompt, its tools' definitions or a message
history it never reads are never built. Key tests (`key in a`, `not a`) read no value.

`indexed` (in `otel.py`) gathers flattened `prefix.N.key` attributes into one `RawAttrs`
per index (`adopt`), still undecoded: an OpenInference input message's content is decoded
only if its role is read as `tool`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class RawAttrs(dict[str, Any]):
    """Attributes whose values are decoded by `decode` on first read (see the module doc)."""

    __slots__ = ("_decode", "_done", "_keys")

    def __init__(self, raw: dict[str, Any], decode: Callable[[Any], Any]) -> None:
        super().__init__(raw)
        self._decode = decode
        self._done: dict[str, Any] = {}
        self._keys: str | None = None

    def __getitem__(self, key: str) -> Any:
        done = self._done
        if key in done:
            return done[key]
        value = done[key] = self._decode(dict.__getitem__(self, key))
        return value

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if dict.__contains__(self, key) else default

    def items(self) -> list[tuple[str, Any]]:  # type: ignore[override]
        return [(key, self[key]) for key in dict.keys(self)]

    def values(self) -> list[Any]:  # type: ignore[override]
        return [self[key] for key in dict.keys(self)]

    def __repr__(self) -> str:
        return f"RawAttrs({dict(self.items())!r})"

    def child(self) -> RawAttrs:
        """An empty `RawAttrs` decoding as this one does."""
        return RawAttrs({}, self._decode)

    def may_start(self, lead: str) -> bool:
        """Whether a key may start with `lead`: `False` only when none does (one search
        of the keys joined, in C, instead of a Python loop over them)."""
        if self._keys is None:
            self._keys = "\n".join(dict.keys(self))
        return lead in self._keys

    def adopt(self, key: str, into: RawAttrs, as_key: str) -> None:
        """Put `key`'s value, as it is (undecoded unless read), into `into` as `as_key`."""
        into._keys = None
        into._done.pop(as_key, None)
        if key in self._done:
            into._done[as_key] = self._done[key]
        dict.__setitem__(into, as_key, dict.__getitem__(self, key))

    def raw(self, key: str) -> bytes | None:
        """`key`'s undecoded JSON (`None` when absent or already decoded)."""
        if key in self._done or not dict.__contains__(self, key):
            return None
        return bytes(memoryview(dict.__getitem__(self, key)))
