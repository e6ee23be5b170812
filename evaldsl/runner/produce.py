"""A case's run: its recording read, or its live target called.

Takes a compiled case and its suite, and gives the case's `Run`: its recording read from
the file its source names (relative to the suite's folder; or the run its check read
whole in this command, `runs/heldruns.py`), or what its live target
returned when called with its input in a worker process (the machinery of which is
imported for a live target only, never by `check` or a run of recordings).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from evaldsl.runs.detect import load_run
from evaldsl.runs.heldruns import let_go, take
from evaldsl.runs.model import Run
from evaldsl.suites.model import Case, Suite

if TYPE_CHECKING:
    from evaldsl.runner.targets import TargetWorkers

DEFAULT_TIMEOUT = 60.0  # seconds, for `run` targets (cycgraph's timeout_ms default)

#: A recording a case names: the file, its format (None: detected), its sample.
Recording = tuple[str, str | None, str | None]


class NothingToRun(Exception):
    """A case with nothing to run (no recording, no target)."""


def produce_run(case: Case, suite: Suite, workers: TargetWorkers | None = None) -> Run:
    """Read the case's recorded run, or call its target (in one of `workers`)."""
    spec = case.source
    if spec is None:
        raise NothingToRun("this case has no source to check")
    if spec.kind == "run":
        let_go()  # (a run held for another case: not beside what the target returns)
        # live targets only: worker processes and their pipes (`check` never calls one)
        from evaldsl.runner.targets import call_target

        assert spec.target is not None
        timeout = case.timeout or DEFAULT_TIMEOUT
        return call_target(spec.target, case.input, timeout, suite.base_dir, workers)
    recording = recording_named(case, suite)
    assert recording is not None
    held = take(recording)  # (read whole by the case's check in this command)
    if held is not None:
        return held
    path, fmt, sample = recording
    return load_run(path, fmt, sample=sample)


def recording_named(case: Case, suite: Suite) -> Recording | None:
    """The recording `case` names (what `produce_run` reads), or None: a live target or
    no source. (A case still to check names its recording too.)"""
    spec = case.source
    if spec is None or spec.kind == "run" or spec.path is None:
        return None
    fmt = spec.format if spec.kind == "trace" else ("state" if spec.kind == "state" else None)
    return (_joined(suite.base_dir, spec.path), fmt, spec.sample)


@functools.lru_cache(maxsize=4096)
def _joined(folder: Path, path: str) -> str:
    """`str(folder / path)`, made once a file: a `-j` run asks for each case's recording
    four times before it forks (to group its cases, to size them twice, to count the bytes
    that stream), and pathlib's join and `str` are ~10 µs each (~5 ms of 120 cases)."""
    return str(folder / path)


def case_size(suite: Suite, case: Case) -> float:
    """How long a case is expected to take, for scheduling: its recording's size in
    bytes; a live target (unknown) counts as the largest."""
    spec = case.source
    if spec is None or (case.error is not None and suite.later is None):
        return 0.0  # nothing to read, or a case that cannot run (one still to check may)
    if spec.kind == "run":
        return float("inf")
    recording = recording_named(case, suite)
    if recording is None:
        return 0.0
    try:
        return float(os.stat(recording[0]).st_size)
    except (OSError, ValueError):  # (ValueError: a NUL in the name; reading says why)
        return 0.0


#: The formats a recording named with `trace "…" as FORMAT` may stream in (a `cassette`
#: line names no format: detected, it may stream too).
_STREAMED = frozenset({"traceplay", "cassette", "events", "verydia"})


def streamed_bytes(work: Iterable[tuple[Suite, int]]) -> int:
    """The size of the recordings the cases of `work` (suite, case index) read that may
    stream (a cassette, or a trace named as traceplay, events or verydia: not an Inspect
    AI sample nor a format read whole), each counted once (`case_size`: a case that cannot
    run, or a file that cannot be looked at, counts 0)."""
    sizes: dict[str, float] = {}
    for suite, index in work:
        case = suite.cases[index]
        recording = recording_named(case, suite)
        if recording is not None:
            path, fmt, sample = recording
            if sample is None and (fmt is None or fmt.lower() in _STREAMED):
                sizes[path] = case_size(suite, case)
    return int(sum(sizes.values()))
