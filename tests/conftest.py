"""Session-wide test settings, and fixtures more than one module uses."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import settings

from tests.fuzzing import DEFAULT_EXAMPLES, FACTOR, examples
from tests.judge_server import JudgeServer, Script

# `pytester` runs pytest inside the tests (the pytest plugin's tests use it).
pytest_plugins = ["pytester"]

# No property test has a deadline: what they test is behaviour, not time (speed is the
# benchmarks' business), and Hypothesis's default 200 ms per example failed tests on a
# machine busy with other work. `make fuzz` (EVALDSL_FUZZ > 1): the property tests that
# state no count of examples draw more too, and a failure prints the blob that replays it
# (`@reproduce_failure`); those that state one use `tests.fuzzing.examples`.
if FACTOR > 1:
    settings.register_profile(
        "fuzz", max_examples=examples(DEFAULT_EXAMPLES), deadline=None, print_blob=True
    )
    settings.load_profile("fuzz")
else:
    settings.register_profile("untimed", deadline=None)
    settings.load_profile("untimed")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # pytest-lsp's `pytest_runtest_call` wrapper fails on any test item without `funcargs`
    # (custom, non-Python items); an empty one is all it needs.
    for item in items:
        if not hasattr(item, "funcargs"):
            item.funcargs = {}  # type: ignore[attr-defined]


@pytest.fixture
def serve() -> Iterator[Callable[[Script], JudgeServer]]:
    """Start real judge servers on 127.0.0.1 (`serve(script)`); all stop after the test."""
    servers: list[JudgeServer] = []

    def start(script: Script) -> JudgeServer:
        server = JudgeServer(script).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def source_loads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths `check` reads whole for a case's source facts (`sources.load_run`), in
    order: a file read from its head is not among them."""
    from evaldsl.check import sources

    loads: list[str] = []
    real = sources.load_run

    def counting(path: Any, *args: Any, **kwargs: Any) -> Any:
        loads.append(os.fspath(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(sources, "load_run", counting)
    return loads
