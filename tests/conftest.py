"""Session-wide test settings."""

from __future__ import annotations

import pytest

# `pytester` runs pytest inside the tests (the pytest plugin's tests use it).
pytest_plugins = ["pytester"]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # pytest-lsp's `pytest_runtest_call` wrapper fails on any test item without `funcargs`
    # (custom, non-Python items); an empty one is all it needs.
    for item in items:
        if not hasattr(item, "funcargs"):
            item.funcargs = {}  # type: ignore[attr-defined]
