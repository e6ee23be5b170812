"""A faster `__init__` for frozen, slotted attrs classes made in great numbers.

Takes such a class and gives it an `__init__` that stores each field through its slot's
descriptor: attrs' own, for a frozen class, goes through `object.__setattr__` once per
field (frozen classes refuse plain assignment), about a fifth of making an instance. The
new `__init__` takes the same arguments (the same names, defaults, keyword-only fields)
and stores the same values. Only for fields with nothing attrs does on the way in (no
validator, converter, factory or alias, all in `__init__`): any other class keeps attrs'.
attrs' own `__init__` is kept in `ATTRS_INIT`, the reference the tests compare with.

`maker(cls)` is a plain function with the same parameters that makes the instance and
stores the same fields: calling a class runs `type.__call__`, which packs the arguments
into a tuple and the keywords (every node's `span=`) into a `dict` for `__init__`, about a
quarter of making a node; a plain function takes them as they are. The parser, the
predicate families and the compiler make their nodes through it (~90,000 of them for
10,000 statements).
"""

from __future__ import annotations

from collections.abc import Callable
from types import MemberDescriptorType
from typing import Any, ParamSpec, TypeVar

import attrs

from evaldsl.cache.compiled import compile_cached

#: attrs' own `__init__` of each class `slot_init` gave its own.
ATTRS_INIT: dict[type, Any] = {}

#: The function making an instance of each class `slot_init` gave its own `__init__`.
MAKERS: dict[Any, Any] = {}

P = ParamSpec("P")
T = TypeVar("T")


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
    params = ", ".join([*positional, *(["*", *keywords] if keywords else [])])
    stores = "".join(body)
    init_body = stores or "    pass\n"
    # `__init__`, and `make` storing the same on a new instance (`object.__new__(cls)` is
    # what calling the class makes before its `__init__` runs)
    source = (
        f"def __init__(self{', ' if params else ''}{params}):\n{init_body}"
        f"def make({params}):\n    self = _new(_cls)\n{stores}    return self\n"
    )
    names["_new"], names["_cls"] = object.__new__, cls
    # compiled once, then loaded from the code cache at later starts (see cache/compiled.py)
    exec(compile_cached(source, f"<evaldsl slot init {cls.__module__}.{cls.__qualname__}>"), names)
    init = names["__init__"]
    make = names["make"]
    make.__qualname__ = f"maker({cls.__qualname__})"
    MAKERS[cls] = make
    original = cls.__dict__["__init__"]
    init.__annotations__ = dict(getattr(original, "__annotations__", {}))
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    ATTRS_INIT[cls] = original
    setattr(cls, "__init__", init)  # noqa: B010


def maker(cls: Callable[P, T]) -> Callable[P, T]:
    """A function making an instance of `cls` as `cls(...)` does (the same arguments, the
    same errors, the same instance), faster for a class `slot_init` gave its own
    `__init__` (see the module doc); `cls` itself for any other."""
    made: Callable[P, T] = MAKERS.get(cls, cls)
    return made
