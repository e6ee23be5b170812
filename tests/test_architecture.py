"""The layout keeps its promises (docs/architecture.md): the pipeline's packages depend
only on the layers below them, no module imports another in a cycle (imports inside
functions included), no private name crosses a module boundary (tests included), and Lark
stays inside `evaldsl.syntax`."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "evaldsl"

#: Each part of the package and its layer: a module may import from its own part and from
#: lower layers only (docs/architecture.md draws the same table).
LAYERS: dict[str, int] = {
    "evaldsl.cache": 0,
    "evaldsl.version": 1,
    "evaldsl.gcpause": 1,
    "evaldsl.bounded": 1,
    "evaldsl.atomicfile": 1,
    "evaldsl.jsontext": 1,
    "evaldsl.jsondata": 1,
    "evaldsl.lazyattrs": 1,
    "evaldsl.terminal": 1,
    "evaldsl.language": 1,
    "evaldsl.runs": 2,
    "evaldsl.judge.protocol": 2,
    "evaldsl.predicates": 3,
    "evaldsl.judge": 3,
    "evaldsl.syntax": 4,
    "evaldsl.check": 4,
    "evaldsl.compile": 4,
    "evaldsl.format": 5,
    "evaldsl.suites": 5,
    "evaldsl.api": 6,
    "evaldsl.vocabulary": 6,
    "evaldsl.runner": 6,
    "evaldsl.reports": 7,
    "evaldsl.mutation": 7,
    "evaldsl.score": 7,
    "evaldsl.expectation": 8,
    "evaldsl.history": 8,
    "evaldsl.dask": 8,
    "evaldsl.tools": 9,
    "evaldsl": 10,  # the package itself: the public API
}


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES: dict[str, Path] = {module_name(p): p for p in PACKAGE.rglob("*.py")}


def part_of(module: str) -> str:
    """The longest entry of LAYERS that `module` belongs to."""
    best = ""
    for part in LAYERS:
        if (module == part or module.startswith(part + ".")) and len(part) > len(best):
            best = part
    assert best, f"{module} is in no layer: add its package to LAYERS and the doc"
    return best


def imports(path: Path) -> Iterator[tuple[int, str, list[str]]]:
    """(line, module, names) of every import in a file, wherever it is written."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.lineno, node.module, [a.name for a in node.names]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, []


def dependencies(path: Path) -> set[str]:
    """The evaldsl modules a file imports: `from pkg import submodule` is the submodule."""
    found: set[str] = set()
    for _, module, names in imports(path):
        if not module.startswith("evaldsl"):
            continue
        subs = [f"{module}.{n}" for n in names if f"{module}.{n}" in MODULES]
        found.update(subs)
        if len(subs) < len(names) or not names:
            found.add(module)
    return {m for m in found if m in MODULES}


GRAPH: dict[str, set[str]] = {m: dependencies(p) - {m} for m, p in MODULES.items()}


def test_every_module_is_in_a_layer() -> None:
    for module in MODULES:
        part_of(module)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_imports_point_down_the_layers(module: str) -> None:
    mine = part_of(module)
    for target in sorted(GRAPH[module]):
        theirs = part_of(target)
        if theirs == mine:
            continue
        assert LAYERS[theirs] < LAYERS[mine], (
            f"{module} ({mine}, layer {LAYERS[mine]}) imports {target} "
            f"({theirs}, layer {LAYERS[theirs]}): a dependency pointing up or sideways"
        )


def test_no_import_cycle() -> None:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in GRAPH[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for v in sorted(GRAPH):
        if v not in index:
            visit(v)
    assert cycles == []


def python_files() -> list[Path]:
    return sorted(
        p
        for folder in ("evaldsl", "tests", "benchmarks")
        for p in (ROOT / folder).rglob("*.py")
        if "node_modules" not in p.parts
    )


@pytest.mark.parametrize("path", python_files(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_private_name_crosses_a_module(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    aliases: set[str] = set()  # names this file binds to an evaldsl module
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("evaldsl"):
            for alias in node.names:
                assert not alias.name.startswith("_") or alias.name.startswith("__"), (
                    f"line {node.lineno}: imports the private name {alias.name} from {node.module}"
                )
                if f"{node.module}.{alias.name}" in MODULES:
                    aliases.add(alias.asname or alias.name)
            assert not any(part.startswith("_") for part in node.module.split(".")), (
                f"line {node.lineno}: imports from the private module {node.module}"
            )
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("evaldsl"):
                    aliases.add(alias.asname or alias.name.split(".")[0])
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
            and isinstance(node.value, ast.Name)
            and node.value.id in aliases
        ):
            raise AssertionError(
                f"line {node.lineno}: reads the private name {node.attr} of {node.value.id}"
            )


@pytest.mark.parametrize("module", sorted(MODULES))
def test_lark_stays_inside_syntax(module: str) -> None:
    if module.startswith("evaldsl.syntax"):
        return
    for line, imported, _ in imports(MODULES[module]):
        assert imported.split(".")[0] != "lark", f"{module}:{line} imports {imported}"


@pytest.mark.parametrize("path", python_files(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_evaldsl_name_imported_exists(path: Path) -> None:
    # imports inside functions too (benchmarks import late): a name that moved in a
    # restructure must fail here, not in the first run of a benchmark
    import importlib

    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("evaldsl"):
            module = importlib.import_module(node.module)
            for alias in node.names:
                assert hasattr(module, alias.name) or f"{node.module}.{alias.name}" in MODULES, (
                    f"line {node.lineno}: {node.module} has no {alias.name}"
                )
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("evaldsl"):
                    importlib.import_module(alias.name)


def test_citations_name_documents_in_the_repository() -> None:
    # the language's reference is docs/language.md; the briefs it was written from are not
    # shipped, so a citation of them sends a reader nowhere
    outside = ("LANGUAGE" + ".md", "seed-" + "semantics", "engineering-" + "notes")
    files = [*python_files(), ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    cited = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in files
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if any(name in line for name in outside)
    ]
    assert cited == []
