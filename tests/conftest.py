"""Session-wide test settings, and fixtures more than one module uses."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from hypothesis import settings

from tests.fuzzing import DEFAULT_EXAMPLES, FACTOR, examples
from tests.judge_server import JudgeServer, Script

# `pytester` runs pytest inside the tests (the pytest plugin's tests use it).
pytest_plugins = ["pytester"]

# `make fuzz` (EVALDSL_FUZZ > 1): the property tests that state no count of examples
# draw more too, and a failure prints the blob that replays it (`@reproduce_failure`);
# those that state one use `tests.fuzzing.examples`.
if FACTOR > 1:
    settings.register_profile(
        "fuzz", max_examples=examples(DEFAULT_EXAMPLES), deadline=None, print_blob=True
    )
    settings.load_profile("fuzz")


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
