"""Environments: what a case's assertions are checked against.

Takes a case's source line (`cassette "x.jsonl"`, `state "s.json"`, `trace "t" as otel`,
`run pkg.mod:fn`, or none), the suite header's environment and the suite's folder, and gives
the case's `Environment`: which kind of run the source provides, the declared tools and
nodes, and the tools a recording calls and the nodes a state visited (read from the file by
a `SourceReader`, for did-you-mean), plus the diagnostics met on the way (a missing file, an
unreadable run, a run target whose module cannot be found). Every front end (`.eval`, YAML,
JSON, the API) goes through `case_environment`: there is one way a source becomes an
environment.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import attrs

from evaldsl.language import ast
from evaldsl.language.diagnostics import Diagnostic, did_you_mean
from evaldsl.language.reading import is_folder, is_regular, near_entries
from evaldsl.language.source import Source
from evaldsl.language.vocabulary import SourceKind


@attrs.frozen
class Environment:
    """What a case's assertions are checked against."""

    source_kind: SourceKind | None = None  # None: not known before the run (a `run` target)
    source_word: str | None = None  # "cassette", "state", … for messages
    declared_tools: frozenset[str] | None = None
    declared_nodes: frozenset[str] | None = None
    recorded_tools: frozenset[str] | None = None
    recorded_nodes: frozenset[str] | None = None


@attrs.frozen
class SourceFacts:
    """What reading a case's source file told the checker."""

    kind: SourceKind | None
    tools: frozenset[str] | None = None
    nodes: frozenset[str] | None = None


#: Reads a case's source file: facts, or a diagnostic (missing file, unreadable run). The
#: last argument names one sample of a file holding several (an Inspect AI log).
SourceReader = Callable[[ast.SourceDecl, Path, Source, str | None], "SourceFacts | Diagnostic"]

#: What each source line provides, before its file is read.
SOURCE_KINDS: dict[str, SourceKind | None] = {
    "cassette": "trace",
    "trace": "trace",
    "state": "state",
    "dataset": None,
}


def case_environment(
    decl: ast.SourceDecl | ast.RunDecl | None,
    source: Source,
    header: Environment,
    base_dir: Path | None = None,
    read: SourceReader | None = None,
    *,
    targets: bool = True,
    sample: str | None = None,
) -> tuple[Environment, list[Diagnostic]]:
    """The environment of a case whose source line is `decl` (written in `source`).

    The file is read only when `read` and `base_dir` are given (a case is checked once
    its `each` row is rendered: a `{{placeholder}}` left in its path is no row's, and the
    file it names is read as any other, so a missing one is said at the line); `sample`
    names the sample of a log with several that the case reads. A `run` target's module is
    looked for when `targets` (a program checked through the API is given its runs and
    never calls a target).

    >>> env, problems = case_environment(None, Source(""), Environment(source_kind="trace"))
    >>> env.source_kind, problems
    ('trace', [])
    """
    if decl is None:
        return header, []
    if isinstance(decl, ast.RunDecl):
        problems: list[Diagnostic] = []
        if targets and base_dir is not None:
            problem = target_problem(decl.target, base_dir)
            if problem is not None:
                problems.append(Diagnostic.at(source, decl.span, "E509", *problem))
        return attrs.evolve(header, source_kind=None, source_word="run target"), problems
    kind = SOURCE_KINDS[decl.kind]
    env = attrs.evolve(header, source_kind=kind, source_word=decl.kind)
    if read is None or base_dir is None:
        return env, []
    found = read(decl, base_dir, source, sample)
    if isinstance(found, Diagnostic):
        return env, [found]
    return (
        attrs.evolve(
            env,
            source_kind=found.kind if found.kind is not None else kind,
            recorded_tools=found.tools,
            recorded_nodes=found.nodes,
        ),
        [],
    )


def _roots(base_dir: Path) -> Iterator[Path]:
    """Where a target's module is looked for, in order, each made as it is looked in: a
    target beside its suite (most) makes no `Path` of the working folder and of every
    sys.path entry, which each row of a dataset asked for (~36 -> ~9 µs a row)."""
    yield base_dir
    yield Path.cwd()
    yield from (Path(p) for p in sys.path if p)


def target_file(target: str, base_dir: Path) -> Path | None:
    """The module file of `package.module:function` beside the suite, in the working
    folder or on sys.path (found as `target_problem` looks, importing nothing), or None
    (an installed package's, or none)."""
    module = target.partition(":")[0]
    if not module:
        return None
    parts = module.split(".")
    for root in _roots(base_dir):
        base = root.joinpath(*parts)
        for file in (base.with_suffix(".py"), base / "__init__.py"):
            if is_regular(file):
                return file
    return None


def target_problem(target: str, base_dir: Path) -> tuple[str, str] | None:
    """Whether `package.module:function` names a module file that exists, found without
    importing anything (`check` executes nothing): `None`, or (message, hint)."""
    module, _, function = target.partition(":")
    if not module or not function:
        return (f"`{target}` is not a target", "write run package.module:function")
    parts = module.split(".")
    if not all(parts):
        # `..agent` (a relative import: nothing is relative to a suite), `agent.`: found
        # here as `agent`, then a TypeError in Python's words when the worker imported it
        return (
            f"`{target}` is not a target: `{module}` is not a module's name",
            "write run package.module:function, the module as an import statement names it",
        )
    file = target_file(target, base_dir)
    if file is not None:
        return _function_problem(file, target)
    try:
        if importlib.util.find_spec(parts[0]) is not None:
            return None  # an installed package: its submodules are checked when run
    except (ImportError, ValueError):
        pass
    near = _near_module(parts, base_dir)
    if near is None and parts[-1] == "py" and len(parts) > 1:
        # `agent.py:answer`: the module's file where its name belongs
        stem = module.removesuffix(".py")
        near = stem if target_file(f"{stem}:{function}", base_dir) is not None else None
    return (
        f"cannot find module `{module}` for run target `{target}`",
        f"did you mean `{near}:{function}`?"
        if near
        else f"looked next to the suite ({base_dir}), in the working folder and on sys.path",
    )


def _function_problem(file: Path, target: str) -> tuple[str, str] | None:
    """Whether the module file `file` binds the target's function at its top level, read
    without running it (`check.pymodule`): `None` also where a reading cannot tell."""
    # (imported by a suite with run targets only)
    from evaldsl.check.pymodule import Unparsable, module_names

    module, _, function = target.partition(":")
    names = module_names(file)
    if isinstance(names, Unparsable):
        return (
            f"cannot import `{module}` for run target `{target}`: "
            f"{file}:{names.line}:{names.column}: {names.message}",
            "the module's syntax error stops its import",
        )
    first = function.partition(".")[0]
    if names is None or first in names:
        return None
    if file.name == "__init__.py" and (
        is_regular(file.parent / f"{first}.py") or is_folder(file.parent / first)
    ):
        return None  # a submodule, an attribute once something imports it
    guess = did_you_mean(first, [n for n in names if not n.startswith("_")])
    return (
        f"module `{module}` has no `{first}` for run target `{target}`",
        f"did you mean `{module}:{guess}`?"
        if guess
        else f"{file} defines no `{first}` at its top level",
    )


def _near_module(parts: list[str], base_dir: Path) -> str | None:
    """The module next to the suite that `parts` (`agent.myagnt`) is likely a slip of."""
    names = [
        e.name[:-3] if e.name.endswith(".py") else e.name
        for e in near_entries(base_dir.joinpath(*parts[:-1]))
        if e.name.endswith(".py") or is_regular(Path(e.path) / "__init__.py")
    ]
    guess = did_you_mean(parts[-1], names)
    return ".".join([*parts[:-1], guess]) if guess else None
