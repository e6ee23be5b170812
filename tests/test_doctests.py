"""The examples in evaldsl's docstrings run, and say what the code does.

Every module of the package is imported and its `>>>` examples are run with `doctest`
(a docstring example that drifted from the code fails here, not in a reader's hands).
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import evaldsl

MODULES = sorted(
    info.name
    for info in pkgutil.walk_packages(evaldsl.__path__, "evaldsl.")
    if not info.name.endswith("__main__")
)


def test_the_package_has_examples() -> None:
    found = sum(
        len(doctest.DocTestFinder().find(importlib.import_module(name)))
        for name in ("evaldsl.runs.summary", "evaldsl.score.engines", "evaldsl.syntax.build")
    )
    assert found >= 3


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, verbose=False, report=False)
    assert result.failed == 0, f"{result.failed} docstring example(s) of {name} failed"
