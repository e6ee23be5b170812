"""YAML guard: what a composed YAML document may hold, decided before any value is built.

Takes the root node `yaml.compose` gives (aliases are already shared nodes there, so the
graph is as small as the text) and gives the problems evaldsl refuses, each with the line
and column of its node:

- a tag outside the YAML 1.2 core schema (`!!python/object`, `!foo`, `!!binary`):
  nothing evaldsl reads carries one, and the safe loader cannot build most of them;
- a recursive alias (`&a [*a]`): no JSON value holds itself;
- nesting deeper than `MAX_NESTING`;
- a document whose values, every alias expanded, hold more than `MAX_YAML_NODES` nodes
  beyond the nodes written: an alias bomb (a few lines that expand to billions) is refused
  by its size, before a byte of it is built; a large suite without aliases never is (the
  size of a suite file bounds it);
- an integer longer than Python converts (4,300 digits).

The walk uses its own stack (never Python's) and visits each node once.
"""

from __future__ import annotations

from collections.abc import Iterator

import attrs
import yaml

from evaldsl.language.limits import MAX_NESTING, MAX_YAML_NODES

_CORE = "tag:yaml.org,2002:"
#: The tags of the YAML 1.2 core schema, all that plain data resolves to (`yaml12` reads
#: `2024-01-01` as text and `<<` as a key, so neither a timestamp nor a merge is allowed).
ALLOWED_TAGS = frozenset(
    _CORE + name for name in ("str", "int", "float", "bool", "null", "seq", "map")
)
_MAX_INT_DIGITS = 4000  # Python refuses to convert more than 4,300


@attrs.frozen
class YamlProblem:
    """One refused construct: where its node starts (1-based), and why."""

    line: int
    column: int
    message: str
    hint: str | None = None


def _at(node: yaml.Node, message: str, hint: str | None = None) -> YamlProblem:
    return YamlProblem(node.start_mark.line + 1, node.start_mark.column + 1, message, hint)


def _children(node: yaml.Node) -> Iterator[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        yield from node.value
    elif isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            yield key
            yield value


def _tag_problem(node: yaml.Node) -> YamlProblem | None:
    tag = str(node.tag)
    if tag in ALLOWED_TAGS:
        if (
            tag == _CORE + "int"
            and isinstance(node, yaml.ScalarNode)
            and len(node.value) > _MAX_INT_DIGITS
        ):
            return _at(node, f"an integer of {len(node.value):,} digits is out of range")
        return None
    shown = "!!" + tag[len(_CORE) :] if tag.startswith(_CORE) else tag
    return _at(
        node,
        f"the YAML tag `{shown}` is not allowed: a suite holds plain data",
        "remove the tag; write the value as text, a number, a list or a mapping",
    )


def check_yaml(root: yaml.Node | None) -> list[YamlProblem]:
    """Every problem of a composed document (empty: it may be built); at most one of each
    kind for recursion, nesting and size, which would otherwise repeat for every node
    above the first."""
    if root is None:
        return []
    problems: list[YamlProblem] = []
    size: dict[int, int] = {}  # expanded node count of each node finished
    on_path: set[int] = set()  # the nodes being walked: meeting one again is recursion
    recursive = deep = False
    # (node, depth, children entered?) — a node is finished after its children
    stack: list[tuple[yaml.Node, int, bool]] = [(root, 1, False)]
    while stack:
        node, depth, entered = stack.pop()
        key = id(node)
        if entered:
            on_path.discard(key)
            size[key] = 1 + sum(size.get(id(c), 0) for c in _children(node))
            # The nodes written (each a key of `size`) are bounded by the file's size; what
            # the aliases add is not: a value is refused once its expansion exceeds every
            # node written so far by more than the limit (a plain suite never is).
            if size[key] > MAX_YAML_NODES + len(size):
                return [
                    *problems,
                    _at(
                        node,
                        f"with every alias expanded, these values hold more than "
                        f"{MAX_YAML_NODES:,} nodes beyond the ones written",
                        "an alias bomb? write the values out, or use fewer aliases",
                    ),
                ]
            continue
        if key in size:
            continue  # an alias of a node already walked: its size is known
        if key in on_path:
            if not recursive:
                recursive = True
                problems.append(
                    _at(node, "a recursive alias: this value holds itself", "remove the alias")
                )
            continue
        if depth > MAX_NESTING:
            if not deep:
                deep = True
                problems.append(_at(node, f"values nested more than {MAX_NESTING} levels deep"))
            size[key] = 1
            continue
        problem = _tag_problem(node)
        if problem is not None:
            problems.append(problem)
        on_path.add(key)
        stack.append((node, depth, True))
        stack.extend((child, depth + 1, False) for child in _children(node))
    return problems
