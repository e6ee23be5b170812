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
quarter of making a node; a plain function takes them as they are. It stores the fields
as plain attributes of an instance of an unfrozen subclass that adds nothing (the
interpreter's own slot stores, not a call per field), then gives the instance the class
itself: what it returns is an instance of `cls`, frozen as any other. The parser, the
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

#: The fields other than `span` of each class `slot_init` gave its own `__init__` that has
#: a `span` (the AST nodes): what `respanned` copies.
_SPANNED: dict[type, tuple[str, ...]] = {}

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
    plain: list[str] = []
    for i, f in enumerate(fields):
        names[f"_set{i}"] = cls.__dict__[f.name].__set__
        param = f.name
        if f.default is not attrs.NOTHING:
            names[f"_default{i}"] = f.default
            param += f"=_default{i}"
        (keywords if f.kw_only else positional).append(param)
        body.append(f"    _set{i}(self, {f.name})\n")
        plain.append(f"    self.{f.name} = {f.name}\n")
    params = ", ".join([*positional, *(["*", *keywords] if keywords else [])])
    stores = "".join(body)
    init_body = stores or "    pass\n"
    # `__init__`, and `make` storing the same fields on a new instance of the class's
    # unfrozen twin (`_unfrozen`), then making it an instance of the class
    source = (
        f"def __init__(self{', ' if params else ''}{params}):\n{init_body}"
        f"def make({params}):\n    self = _unfrozen()\n{''.join(plain)}"
        "    self.__class__ = _cls\n    return self\n"
    )
    names["_cls"] = cls

    def first_unfrozen() -> Any:
        # the subclass made when `make` first runs, then read from `make`'s globals:
        # making a class is ~70,000 instructions, and a start makes few kinds of node
        names["_unfrozen"] = unfrozen = twin(cls)
        return unfrozen()

    names["_unfrozen"] = first_unfrozen
    # compiled once, then loaded from the code cache at later starts (see cache/compiled.py)
    exec(compile_cached(source, f"<evaldsl slot init {cls.__module__}.{cls.__qualname__}>"), names)
    init = names["__init__"]
    make = names["make"]
    make.__qualname__ = f"maker({cls.__qualname__})"
    MAKERS[cls] = make
    if any(f.name == "span" for f in fields):
        _SPANNED[cls] = tuple(f.name for f in fields if f.name != "span")
    original = cls.__dict__["__init__"]
    init.__annotations__ = dict(getattr(original, "__annotations__", {}))
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    ATTRS_INIT[cls] = original
    setattr(cls, "__init__", init)  # noqa: B010


#: The unfrozen twin of each class `twin` was asked for.
_TWINS: dict[type, type] = {}


def twin(cls: type) -> type:
    """The unfrozen twin of `cls` (`_unfrozen`), made once: `make` and the parser's
    copies of repeated lines (`syntax/lines.py`) fill one in and give it `cls`."""
    made = _TWINS.get(cls)
    if made is None:
        made = _TWINS[cls] = _unfrozen(cls)
    return made


def _unfrozen(cls: type) -> type:
    """A subclass of `cls` that adds no field and stores its fields as any slotted class
    does (a plain `self.x = x`: the interpreter's own slot store, where each store through
    the slot's descriptor is a call, about a third of making a node), and makes its
    instances without `__init__`. `make` fills one in and then gives it `cls` as its class
    (the same slots, so Python allows it): no instance of this subclass outlives its
    `make`."""
    namespace = {
        "__slots__": (),
        "__setattr__": object.__setattr__,
        "__delattr__": object.__delattr__,  # (with `__setattr__`: one slot of the type)
        "__init__": object.__init__,
        "__module__": cls.__module__,
        "__qualname__": f"{cls.__qualname__}.unfrozen",
    }
    return type(cls.__name__, (cls,), namespace)


def maker(cls: Callable[P, T]) -> Callable[P, T]:
    """A function making an instance of `cls` as `cls(...)` does (the same arguments, the
    same errors, the same instance), faster for a class `slot_init` gave its own
    `__init__` (see the module doc); `cls` itself for any other."""
    made: Callable[P, T] = MAKERS.get(cls, cls)
    return made


def respanned(node: T, span: Any) -> T:
    """`attrs.evolve(node, span=span)`: the same node with another span. For a node of a
    class `slot_init` gave its own `__init__` (nothing runs on the way in: no validator or
    converter), its fields are copied onto the class's unfrozen twin, as `make` stores
    them (`evolve` asks the class for its fields and calls it with them all by keyword:
    about twice the time, for each parenthesised assertion); `attrs.evolve` for any
    other."""
    cls = type(node)
    names = _SPANNED.get(cls)
    if names is None:
        return attrs.evolve(node, span=span)  # type: ignore[misc]
    new = twin(cls)()
    for name in names:
        setattr(new, name, getattr(node, name))
    new.span = span
    new.__class__ = cls
    return new  # type: ignore[no-any-return]
