"""A long process's caches stay within their bounds: a process that compiles and runs ever
new programs (a language server, a Dask worker, a run over many suites) holds no more
memory after many of them than after the first few.

Each test runs distinct programs in two halves, after a warm-up that fills the caches,
and asserts with tracemalloc that the most memory held in the second half is not more
than in the first, but for a margin: a cache that keeps what each program makes grows by
what the second half made (megabytes here)."""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import evaldsl
from evaldsl.runs import passes

#: The `args` tests of a program.
TESTS = 250
#: Programs enough to fill the largest cache they fill, the probes (`calls._MAX_PROBES`,
#: 4,096: ~6 MB of them) and come round again.
CYCLE = 4096 // TESTS + 1


def _program(n: int, *, own: int = TESTS, unequal: int = 0) -> evaldsl.Program:
    """Program `n`: `TESTS` `args` tests (one probe each), the last `own` of them of fields
    of this program's own (the others the same in every program), the first `unequal` of
    them `!=` (the others `==`). A generated pass's source is its needs' shape, whatever
    the fields: programs of as many `!=` tests share one."""
    tests = [f"$.f{i}" for i in range(TESTS - own)] + [f"$.f{n}_{i}" for i in range(own)]
    return evaldsl.compile(
        "\n".join(
            f"tool t args {path} {'!=' if i < unequal else '=='} {i}"
            for i, path in enumerate(tests)
        ),
        path=f"p{n}.eval",
    )


def _events(calls: int) -> list[dict[str, Any]]:
    """A run of `calls` calls of the tool `t`."""
    return [
        {"type": "tool.call", "id": f"e{i}", "name": "t", "arguments": {"x": i}}
        for i in range(calls)
    ]


def _peaks(step: Callable[[int], None], warm: int, half: int) -> tuple[int, int]:
    """The most memory held (traced, after a collection) after any step of a first
    `half` of steps, and of a second, each step `step(n)` with a new `n`, after `warm`
    steps. A cache emptied when full holds between nothing and its bound: each half is
    longer than the caches' cycles, so both reach the bound. Traced from the warm-up on,
    so that what the caches hold at the halves was all made while traced."""
    tracemalloc.start()
    try:
        for n in range(warm):
            step(n)
        peaks = []
        for start in (warm, warm + half):
            most = 0
            for n in range(start, start + half):
                step(n)
                gc.collect()
                most = max(most, tracemalloc.get_traced_memory()[0])
            peaks.append(most)
    finally:
        tracemalloc.stop()
    return peaks[0], peaks[1]


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    passes.purge()
    yield
    passes.purge()


def test_small_runs_of_new_programs_hold_nothing_of_them() -> None:
    """Small runs (each counted towards a generated pass, `passes._generates`) of ever new
    programs: what is counted for a program's needs keeps none of its probes."""
    events = _events(100)  # 100 events x 250 tests: below GENERATE_FROM_TESTS

    def step(n: int) -> None:
        assert _program(n).cases[0].check(events).passed is False

    first, second = _peaks(step, warm=CYCLE, half=CYCLE)
    assert second - first < 1 << 20, f"{first:,} then {second:,} bytes held"


def test_generated_passes_of_new_programs_are_held_within_a_budget() -> None:
    """Runs through generated passes (`passes.pass_for`, `codegen.compiled`) of ever new
    programs, each pass ~2 MB: the passes and their code kept stay within a budget. (The
    programs share all but one test, and so their probes: few probes are made; each has
    a `!=` test more than the one before, and so a source of its own.)"""
    events = _events(300)  # 300 events x 250 tests: past GENERATE_FROM_TESTS

    def step(n: int) -> None:
        assert _program(n, own=1, unequal=n).cases[0].check(events).passed is False

    first, second = _peaks(step, warm=3, half=6)
    assert second - first < 1 << 20, f"{first:,} then {second:,} bytes held"
