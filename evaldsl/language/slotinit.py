"""A faster `__init__` for frozen, slotted attrs classes made in great numbers.

Takes such a class and gives it an `__init__` that stores each field through its slot's
descriptor: attrs' own, for a frozen class, goes through `object.__setattr__` once per
field (frozen classes refuse plain assignment), about a fifth of making an instance. The
new `__init__` takes the same arguments (the same names, defaults, keyword-only fields)
and stores the same values. Only for fields with nothing attrs does on the way in (no
validator, converter, factory or alias, all in `__init__`): any other class keeps attrs'.
attrs' own `__init__` is kept in `ATTRS_INIT`, the reference the tests compare with.
"""

from __future__ import annotations

from types import MemberDescriptorType
from typing import Any

import attrs

from evaldsl.cache.compiled import compile_cached

#: attrs' own `__init__` of each class `slot_init` gave its own.
ATTRS_INIT: dict[type, Any] = {}


def slot_init(cls: type) -> None:
    """Give `cls` (a frozen, slotted attrs class) the faster `__init__` when its fields
    allow it (see the module doc)."""
    fields: Any = attrs.fields(cls)
    if any(
        f.validator or f.converter or not f.init or f.alias != f.name
        or isinstance(f.default, attrs.Factory)  # type: ignore[arg-type]
        or type(cls.__dict__.get(f.name)) is not MemberDescriptorType  # not slotted
        for f in fields
    ):  # fmt: skip
        return
    names: dict[str, Any] = {}
    positional: list[str] = []
    keywords: list[str] = []
    body: list[str] = []
    for i, f in enumerate(fields):
        names[f"_set{i}"] = cls.__dict__[f.name].__set__
        param = f.name
        if f.default is not attrs.NOTHING:
            names[f"_default{i}"] = f.default
            param += f"=_default{i}"
        (keywords if f.kw_only else positional).append(param)
        body.append(f"    _set{i}(self, {f.name})\n")
    params = ", ".join(["self", *positional, *(["*", *keywords] if keywords else [])])
    source = f"def __init__({params}):\n" + ("".join(body) or "    pass\n")
    # compiled once, then loaded from the code cache at later starts (see cache/compiled.py)
    exec(compile_cached(source, f"<evaldsl slot init {cls.__module__}.{cls.__qualname__}>"), names)
    init = names["__init__"]
    original = cls.__dict__["__init__"]
    init.__annotations__ = dict(getattr(original, "__annotations__", {}))
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    ATTRS_INIT[cls] = original
    setattr(cls, "__init__", init)  # noqa: B010
