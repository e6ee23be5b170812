"""The pytest plugin: evaldsl suites collected and run as pytest tests.

Takes pytest's configuration and gives, once asked for, one test item per case of every
`.eval` file (and of every YAML/JSON suite an `evaldsl_suites` glob matches); the items
themselves live in `evaldsl.tools.pytest_collect`. Installing evaldsl registers this module
with pytest (a `pytest11` entry point), so it is loaded in every project that has
evaldsl installed; until it is asked for it only adds its options and collects nothing,
and it imports nothing heavier than pytest. It is asked for by any of:

- `-p evaldsl` on the command line (or in `addopts`, or `PYTEST_PLUGINS=evaldsl`);
- `evaldsl = true` in the pytest ini (`[tool.pytest.ini_options]`, `pytest.ini`, …);
- an `evaldsl_suites` glob in the ini, such as `evaldsl_suites = suites/*.yaml`;
- loading it at all while pytest's plugin autoloading is off.

Options: `--evaldsl-judge live|frozen|off` and `--evaldsl-judge-cache DIR`, as
`evaldsl run`'s `--judge` and `--judge-cache`.
"""

from __future__ import annotations

import os

import pytest

from evaldsl.judge.modes import MODES

#: The name pytest knows the plugin by (the entry point's name, what `-p` takes).
PLUGIN_NAME = "evaldsl"

#: Markers every evaldsl item may carry, registered so `--strict-markers` accepts them.
MARKERS = {
    "evaldsl": "a case of an evaldsl suite (every item the evaldsl plugin collects)",
    "evaldsl_judge": "an evaldsl case with `judged` assertions (asks the LLM judge)",
    "evaldsl_live": "an evaldsl case that calls a Python `run` target",
}


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("evaldsl", "evaldsl suites (on with -p evaldsl or the ini)")
    group.addoption(
        "--evaldsl-judge",
        choices=list(MODES),
        default=None,
        help="the LLM judge, as `evaldsl run --judge`: live (the default), frozen "
        "(only cached verdicts; for CI) or off",
    )
    group.addoption(
        "--evaldsl-judge-cache",
        metavar="DIR",
        default=None,
        help="the judge's cache folder (default: .evaldsl/judge-cache under the rootdir)",
    )
    parser.addini(
        "evaldsl",
        type="bool",
        default=False,
        help="collect evaldsl suites (.eval files) as tests",
    )
    parser.addini(
        "evaldsl_suites",
        type="args",
        default=[],
        help="globs of YAML/JSON evaldsl suites to collect (a file name, or a path "
        "relative to the rootdir); turns the plugin on",
    )


def active(config: pytest.Config) -> bool:
    """Whether this session asked for the plugin (see the module docstring)."""
    asked = [*(config.option.plugins or []), *_env_plugins()]
    if PLUGIN_NAME in asked or "evaldsl.tools.pytest_plugin" in asked:
        return True
    if config.getini("evaldsl") or config.getini("evaldsl_suites"):
        return True
    # With autoloading off, pytest loads an installed plugin only when it is named.
    return bool(
        os.environ.get("PYTEST_DISABLE_PLUGIN_AUTOLOAD")
        or getattr(config.option, "disable_plugin_autoload", False)
    )


def _env_plugins() -> list[str]:
    return [p.strip() for p in os.environ.get("PYTEST_PLUGINS", "").split(",") if p.strip()]


def pytest_configure(config: pytest.Config) -> None:
    if not active(config):
        return
    for name, doc in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {doc}")
    # Imported only now: a project that does not use evaldsl pays for pytest alone.
    from evaldsl.tools.pytest_collect import SuiteCollector

    config.pluginmanager.register(SuiteCollector(config), SuiteCollector.NAME)
