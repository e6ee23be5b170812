"""How many examples the property tests draw: `make test` runs each with its own count,
`make fuzz` with that count times `EVALDSL_FUZZ` (the Makefile's `FUZZ`).

Takes the environment variable `EVALDSL_FUZZ` (a whole number >= 1, default 1); gives
`examples(n)`, the count for a test whose own is `n`, `FACTOR`, and `lenient(n)`, the
settings of a test that draws files and programs (no deadline, no health check). A test
that states no count gets Hypothesis's 100, scaled the same way by the profile
`conftest.py` loads.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings


def _factor(text: str | None) -> int:
    if text is None or text == "":
        return 1
    try:
        factor = int(text)
    except ValueError:
        factor = 0
    if factor < 1:
        raise SystemExit(
            f"EVALDSL_FUZZ must be a whole number >= 1 (how many times each property test's "
            f"own count of examples to draw), not {text!r}"
        )
    return factor


#: How many times its own count of examples each property test draws.
FACTOR = _factor(os.environ.get("EVALDSL_FUZZ"))

#: Hypothesis's own count, for the tests that state none.
DEFAULT_EXAMPLES = 100


def examples(n: int) -> int:
    """The count of examples for a property test whose own count is `n`."""
    return n * FACTOR


def lenient(n: int) -> settings:
    """The settings of a property test of `n` examples (scaled) that writes and reads
    files or compiles programs: no deadline (a file read can be slow on a loaded
    machine) and no health check (its strategies draw large, slow, or filtered values)."""
    return settings(
        max_examples=examples(n), deadline=None, suppress_health_check=list(HealthCheck)
    )
