"""The AST builder's fast paths build what its definitions build: `assertion` of a chain
of two (`a and b`, `a or b`) against `chain`, with the same depths noted and the same
limit problems, for operands nested to every depth around the limit."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from evaldsl.language import ast
from evaldsl.language.limits import MAX_NESTING
from evaldsl.language.source import Span
from evaldsl.syntax.build import Builder
from evaldsl.syntax.drivetables import Token


def token(kind: str, start: int) -> Token:
    text = kind.lower()
    return (kind, text, start, start + len(text))


def operand(builder: Builder, start: int, depth: int) -> ast.Expr:
    """A check at `start`, under `depth` nots (each noted by the builder as it would be)."""
    node: ast.Expr = ast.Check(ast.Subject("steps"), ast.Exists(), span=Span(start, start + 5))
    for _ in range(depth):
        node = builder.negation([token("NOT", start), node])
    return node


def built(data: Any, use_chain: bool) -> tuple[Any, ...]:
    left_depth, right_depth, op, base, bases = data
    builder = Builder()
    builder.reset(bases)
    a = operand(builder, base, left_depth)
    b = operand(builder, base + 100, right_depth)
    c = [a, token(op, base + 50), b]
    node = builder.chain(c) if use_chain else builder.assertion(c)
    problems = list(builder.problems)
    # the depth noted for the node: how many nots over it reach the limit
    wrapped, nots = node, 0
    while len(builder.problems) == len(problems) and nots <= MAX_NESTING + 2:
        wrapped = builder.negation([token("NOT", 0), wrapped])
        nots += 1
    return (
        node,
        node.span,
        type(node),
        [o.span for o in node.operands],  # type: ignore[union-attr]
        problems,
        nots,
    )


DEPTHS = st.integers(0, MAX_NESTING + 2)


@given(
    st.tuples(DEPTHS, DEPTHS, st.sampled_from(["AND", "OR"]), st.integers(0, 50), st.integers(0, 9))
)
def test_a_chain_of_two_is_built_as_chain_builds_it(data: Any) -> None:
    fast, reference = built(data, False), built(data, True)
    assert fast == reference
