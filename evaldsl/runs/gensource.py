"""The source a generated pass is written as, and the names its values are read by.

Takes the lines and values the pass's writers (`codegen.py`, `groupgen.py`) produce, and
gives the source text (`Out`: lines with indentation) and the namespace the generated
function runs in (`Names`: each value bound to a name the source reads it by, so a value
from a suite is never written into the source).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any


class Names:
    """The generated function's namespace: each value gets a name the source reads it by
    (the `FragmentContext` families make their fragments in)."""

    def __init__(self) -> None:
        self.namespace: dict[str, Any] = {}
        self.notes: list[str] = []
        self.count = 0
        self._by_id: dict[int, str] = {}

    def bind(self, prefix: str, value: Any, note: str | None = None) -> str:
        key = id(value)
        known = self._by_id.get(key)
        if known is not None and self.namespace[known] is value:
            return known
        self.count += 1
        name = f"{prefix}{self.count}"
        self.namespace[name] = value
        self._by_id[key] = name
        if note is not None:
            self.notes.append(f"{name}: {note}")
        return name

    def const(self, value: Any) -> str:
        shown = getattr(value, "__qualname__", None) if callable(value) else None
        text = shown or repr(value)
        return self.bind("C", value, text if len(text) <= 60 else text[:59] + "…")


class Out:
    """Source lines with indentation."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.depth = 0

    def __call__(self, *lines: str) -> None:
        for line in lines:
            self.lines.append("    " * self.depth + line)

    def indent(self) -> Out:
        self.depth += 1
        return self

    def dedent(self) -> None:
        self.depth -= 1

    @contextlib.contextmanager
    def nested(self, *headers: str) -> Iterator[None]:
        """Lines written inside are inside each of `headers` (a line opening a block)."""
        for header in headers:
            self(header)
            self.indent()
        try:
            yield
        finally:
            self.depth -= len(headers)
