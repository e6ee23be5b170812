"""What a case reads of a trace's calls and times, for readers that build every event
before any case runs (OTel spans, `otel.py`).

Takes a case's `Needs` and gives `Reads`: the tools whose calls' arguments an assertion
reads, the tools whose results it reads, and whether it reads the events' times.
`reading(reads)` (or `read_for(needs)`, which reads everything under `EVALDSL_REFERENCE`)
sets them for the runs read inside it (a context variable, so a reader
deep under `load_run` asks without every function between passing them on); `current()`
gives them, `None` outside (read everything: `load_run`, `evaldsl inspect`, a report's
timelines).

Why: the cassette path decodes only the fields its pass reads (`decode.py`); a span file
is read into events first, and parsing each tool call's arguments and each result's JSON
text, and writing each event's time, was ~8% of checking one. A call of a tool no
assertion reads the arguments of keeps them as written (the JSON text), a result no
assertion reads stays text, and no event gets an `at` when nothing reads times (but
where the spans give no latency: the runner's metric then reads the events' times). What
is read is the same as a full reading gives, and so are the errors (every attribute read
before is still decoded: only the parsing of text that never fails is left out);
`tests/test_otlpreads.py` compares verdicts, messages and found values both ways, and
`tests/test_runreads.py` the reports of `evaldsl run` (which reads each recording for
its cases' reads: `runner/readings.py`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from typing import TYPE_CHECKING

import attrs

if TYPE_CHECKING:
    from evaldsl.runs.index import Needs


@attrs.frozen
class Reads:
    """The calls' arguments and results, and the times, a case reads."""

    arguments: frozenset[str] | None  # tools whose calls' arguments are read (None: all)
    results: frozenset[str] | None  # tools whose results are read (None: all)
    times: bool  # the events' `at`

    def reads_arguments(self, tool: str) -> bool:
        """Whether the arguments of `tool`'s calls are read."""
        return self.arguments is None or tool in self.arguments


#: What a reading gives when no case says what it reads.
EVERYTHING = Reads(None, None, True)
_READS: ContextVar[Reads | None] = ContextVar("evaldsl_reads", default=None)


def reads_of(needs: Needs) -> Reads:
    """What a pass for `needs` reads: arguments of the tools of its `args` tests and kept
    records (`cites` keeps a tool's calls and results), results of those of its `result`
    tests and kept records, times for `latency`."""
    kept = needs.tool_detail | needs.tool_results
    arguments = {p.tool for p in needs.probes if not p.on_result}
    results = {p.tool for p in needs.probes if p.on_result}
    return Reads(frozenset(arguments | kept), frozenset(results | kept), needs.times)


@contextlib.contextmanager
def reading(reads: Reads) -> Iterator[None]:
    """Runs read inside give what `reads` says is read (and may leave the rest unparsed)."""
    token = _READS.set(reads)
    try:
        yield
    finally:
        _READS.reset(token)


def read_for(needs: Needs) -> contextlib.AbstractContextManager[None]:
    """Where a recording is read for what `needs` reads (`reading(reads_of(needs))`), or
    read in full when `EVALDSL_REFERENCE` asks for the reference pass."""
    from evaldsl.runs.passes import reference_only  # (the pass machinery: not at import)

    return contextlib.nullcontext() if reference_only() else reading(reads_of(needs))


def current() -> Reads | None:
    """What the run being read must give; `None`: everything."""
    return _READS.get()
