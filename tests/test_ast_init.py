"""The `__init__` `slotinit.slot_init` gives (through the slots' descriptors) makes the
same instance as attrs' generated one, for every AST node class and the other classes
given it, and refuses the same calls; so does the plain function `slotinit.maker` gives
for each (the parser, the predicate families and the compiler make nodes through it).
`slotinit.respanned` gives the node `attrs.evolve(node, span=...)` gives."""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from evaldsl.compile.compiler import CompiledAssertion
from evaldsl.language import ast
from evaldsl.language.slotinit import ATTRS_INIT, MAKERS, maker, respanned
from evaldsl.language.source import Span
from evaldsl.language.verdicts import Verdict, verdict
from evaldsl.runs.index import CallProbe

CLASSES = sorted(ATTRS_INIT, key=lambda c: c.__name__)
VALUES = st.one_of(st.none(), st.integers(), st.text(max_size=3), st.tuples(st.integers()))


def fields_of(node: object) -> list[Any]:
    return [getattr(node, f.name) for f in attrs.fields(type(node))]  # type: ignore[misc]


def test_every_node_class_and_the_compilers_have_it() -> None:
    nodes = [c for c in vars(ast).values() if isinstance(c, type) and attrs.has(c)]
    assert len(nodes) > 30
    assert set(nodes) | {CompiledAssertion, CallProbe, Verdict} == set(ATTRS_INIT)


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
@given(data=st.data())
def test_the_same_node_as_attrs_makes(cls: type, data: st.DataObject) -> None:
    fields = attrs.fields(cls)  # type: ignore[misc]
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    by_keyword = data.draw(st.booleans())
    for f in fields:
        optional = f.default is not attrs.NOTHING
        if optional and not data.draw(st.booleans()):
            continue  # the default
        value = data.draw(VALUES)
        if f.kw_only or by_keyword or (optional and kwargs):
            kwargs[f.name] = value
        else:
            args.append(value)
    reference = object.__new__(cls)
    ATTRS_INIT[cls](reference, *args, **kwargs)
    for fast in (cls(*args, **kwargs), maker(cls)(*args, **kwargs)):
        assert type(fast) is cls
        assert fields_of(fast) == fields_of(reference)
        assert [type(v) for v in fields_of(fast)] == [type(v) for v in fields_of(reference)]
        with pytest.raises(attrs.exceptions.FrozenInstanceError):
            fast.span = ast.NO_SPAN


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_the_same_calls_are_refused(cls: type) -> None:
    fields = attrs.fields(cls)  # type: ignore[misc]
    required = [f.name for f in fields if f.default is attrs.NOTHING]
    positional = [f for f in fields if not f.kw_only]
    for args, kwargs in [
        ((), {}),
        ((0,) * (len(positional) + 1), {}),
        ((), {"nonesuch": 1, **dict.fromkeys(required, 0)}),
        ((), {"span": 1, **dict.fromkeys(required, 0), "SPAN": 2}),
    ]:
        if not required and not args and not kwargs:
            continue
        with pytest.raises(TypeError):
            cls(*args, **kwargs)
        with pytest.raises(TypeError):
            maker(cls)(*args, **kwargs)
        with pytest.raises(TypeError):
            ATTRS_INIT[cls](object.__new__(cls), *args, **kwargs)


def test_a_maker_for_every_class_given_an_init_and_the_class_itself_for_others() -> None:
    assert set(MAKERS) == set(ATTRS_INIT)
    assert all(maker(cls) is not cls for cls in ATTRS_INIT)

    @attrs.frozen
    class Checked:
        n: int = attrs.field(validator=attrs.validators.instance_of(int))

    assert maker(Checked) is Checked  # (a validator: attrs' `__init__` kept, and the class)


def test_the_named_makers_make_their_class() -> None:
    # `ast.make_check` and the others: each the maker of the class its name says
    named = {n: f for n, f in vars(ast).items() if n.startswith("make_")}
    assert len(named) > 15
    for name, made in named.items():
        cls = next(c for c, f in MAKERS.items() if f is made)
        words = "".join("_" + ch.lower() if ch.isupper() else ch for ch in cls.__name__)
        assert name == "make" + words


def test_verdicts_are_made_by_the_verdicts_maker() -> None:
    # (the checkers make their verdicts with `verdict`: the class's maker, not the class)
    assert verdict is maker(Verdict) and verdict is not Verdict
    made = verdict("fail", "m", Span(1, 2), expected=3)
    assert type(made) is Verdict and made == Verdict("fail", "m", Span(1, 2), None, 3, ())


SPANNED = [c for c in CLASSES if any(f.name == "span" for f in attrs.fields(c))]  # type: ignore[misc]


@pytest.mark.parametrize("cls", SPANNED, ids=lambda c: c.__name__)
@given(data=st.data())
def test_respanned_is_evolve(cls: type, data: st.DataObject) -> None:
    fields = attrs.fields(cls)  # type: ignore[misc]
    values = {f.name: data.draw(VALUES) for f in fields if f.name != "span"}
    node = maker(cls)(**values, span=Span(1, 2))
    span = Span(data.draw(st.integers(0, 9)), data.draw(st.integers(10, 20)))
    reference = attrs.evolve(node, span=span)
    made = respanned(node, span)
    assert type(made) is cls and made is not node
    assert fields_of(made) == fields_of(reference)
    assert all(a is b for a, b in zip(fields_of(made), fields_of(reference), strict=True))
    assert node.span == Span(1, 2)  # (the node it copies is left as it was)
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        made.span = ast.NO_SPAN


def test_respanned_of_a_class_without_the_fast_init_is_evolve() -> None:
    @attrs.frozen
    class Checked:
        n: int = attrs.field(validator=attrs.validators.instance_of(int))
        span: Span = attrs.field(kw_only=True, eq=False)

    made = respanned(Checked(1, span=Span(0, 1)), Span(2, 3))
    assert type(made) is Checked and made.n == 1 and made.span == Span(2, 3)
