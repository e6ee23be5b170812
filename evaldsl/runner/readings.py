"""One reading of a recording for the cases of a run that read it alike.

Takes the cases a run will execute (with their suites, in order) and gives, for a
case whose recording other cases read too, the `RunFacts` of one pass over it made for
what any of them reads (`Needs.joined`); the runner reads any other case alone, as
before. Why: cases on one recording are common (`each` rows, a file of cases that check
one long session from several sides), and each read the whole file again.

- A pass for joined needs gives each case the facts its own pass would: counts, the
  tools' sequence, arguments' tests, answers, tokens and times are kept per tool, test
  and position, never mixed. Results are the exception: which call a result is linked
  to can depend on the calls filed for results (an event `id` names the first call
  filed under it, a tool's calls are filed while a `result` test of it is open), when
  two calls carry one id. So when a recording's cases read results in more than one way
  (other `result` tests, other tools' records for `cites`), its calls' ids are looked
  at first (`calls_own_their_ids`): if no two calls carry one id, all its cases share
  one reading; else the cases that read the same results share one, and those that
  read none share another (or join the one group that reads results, if there is
  one). `tests/test_readings.py` compares every case's result both ways on random
  suites and recordings, with and without ids carried twice.
- A recording is one file, format and sample (a case that runs a target, or cannot
  run, is never shared). Its facts are kept from the first of its cases to the last,
  then dropped: a run holds the facts of the recordings whose cases are not all done
  (in suite order, usually one).
- A shared reading that fails (the file cannot be read, a bad line) is forgotten, and
  each of its cases reads the file alone, as before: every case gets the very error
  its own reading gives, never one made for other cases' needs.
- The first case of a recording carries the time of reading it in its `duration_ms`.
- A recording is read for what its reading's needs read (`recorded_for`,
  `runs/reads.py`: a span file's arguments and results of tools no assertion reads stay
  unparsed), a shared one for what any of its cases reads (the needs joined); the
  metrics read no call's arguments nor result, nor times a span file's spans do not
  give. A live target's run, and every run under `EVALDSL_REFERENCE=1`, are read in
  full. Nothing reads a case's run after its pass: the HTML report's timelines read
  each recording again, in full (`reports/timeline.py`).
- `EVALDSL_READ_ALONE=1` in the environment makes every case read its recording alone
  (and `-j` send each case on its own), to compare, or to rule sharing out when
  looking for a bug.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import attrs

from evaldsl.runner.produce import Recording, produce_run, recording_named
from evaldsl.runs.cassette import EventStream
from evaldsl.runs.decode import typed_events
from evaldsl.runs.events import TOOL_CALL_TYPES
from evaldsl.runs.index import Needs, RunFacts
from evaldsl.runs.model import Run, RunError
from evaldsl.runs.passes import decodes_typed, index_run
from evaldsl.runs.reads import read_for
from evaldsl.suites.model import Case, Suite


def recording_of(case: Case, suite: Suite) -> Recording | None:
    """The recording `case` reads, or None: it names none, or it cannot run."""
    return recording_named(case, suite) if case.error is None else None


def read_alone() -> bool:
    """Whether `EVALDSL_READ_ALONE` asks every case to read its recording alone."""
    return os.environ.get("EVALDSL_READ_ALONE", "") not in ("", "0")


def with_metrics(needs: Needs) -> Needs:
    """Metrics want timestamps and priced usage whatever the assertions read."""
    return attrs.evolve(needs, times=True, cost=True, tokens=True)


def recorded_for(case: Case, needs: Needs) -> contextlib.AbstractContextManager[None]:
    """Where `case`'s recording is read for what `needs` (its assertions', without
    `with_metrics`) reads: a run made (and indexed) inside is read for them alone
    (`reads.reading`). The metrics read no call's arguments nor result, usage is always
    read, and a span file's latency is its spans' (its events' times are written when
    the spans do not give it: `otel.read_spans`). A live target's run and any run
    under `EVALDSL_REFERENCE` are read in full."""
    source = case.source
    if source is None or source.kind == "run":
        return contextlib.nullcontext()
    return read_for(needs)


#: What decides which call each result is linked to (`_linking`); None: reads no result.
Linking = tuple[frozenset[int], frozenset[str], frozenset[str]]


def _linking(needs: Needs) -> Linking | None:
    """The needs that decide how results are linked to calls (which calls are filed for
    results, and until when): the `result` tests (equal tests are one probe), the tools
    whose records keep results, and the tools whose records are kept. None for needs
    that read no result and keep no record, which leave the linking as it is."""
    on_results = frozenset(id(p) for p in needs.probes if p.on_result)
    if not on_results and not needs.tool_results and not needs.tool_detail:
        return None
    return on_results, frozenset(needs.tool_results), frozenset(needs.tool_detail)


def sharing(cases: Sequence[Case]) -> list[list[Case]]:
    """The groups of `cases` (all on one recording) that can share one reading: those
    that read the same results, and those that read none (with the one group that reads
    results, when there is one)."""
    alike: dict[Linking | None, list[Case]] = {}
    for case in cases:
        alike.setdefault(_linking(case.needs), []).append(case)
    plain = alike.pop(None, [])
    linked = list(alike.values())
    if plain and len(linked) == 1:
        linked, plain = [linked[0] + plain], []
    return [group for group in (plain, *linked) if len(group) > 1]


class _Share:
    """One reading for a group of cases: their joined needs, and its facts once read
    (let go with the share, when its last case has taken them)."""

    __slots__ = ("asserted", "facts", "needs")

    def __init__(self, group: list[Case]) -> None:
        self.asserted = Needs.joined(c.needs for c in group)  # what the reading reads
        self.needs = with_metrics(self.asserted)
        self.facts: RunFacts | None = None


def calls_own_their_ids(run: Run) -> bool:
    """Whether no two calls of `run` carry one id (a `callId` or an event `id`, the one
    of a call or the other of another): then each id a result names belongs to one call,
    whichever calls a pass files, and any cases may share a reading. Anything the scan
    cannot take (a bad line, an id that is a list) says no: the cases are kept apart as
    their results require, and their reading reports the problem."""
    events = run.events
    seen: set[Any] = set()
    try:
        with _call_ids(events) as decoded:
            for event in decoded:
                if event.get("type") not in TOOL_CALL_TYPES:
                    continue
                for key in ("callId", "id"):
                    value = event.get(key)
                    if value is not None:
                        if value in seen:
                            return False
                        seen.add(value)
    except Exception:  # (only a grouping is decided here: never a run's error)
        return False
    return True


@contextlib.contextmanager
def _call_ids(events: Any) -> Iterator[Iterable[Any]]:
    """`events` with (at least) their type and ids: a list as it is, a stream decoded
    (its type and ids only, when large)."""
    if events is None or isinstance(events, list):
        yield events or []
    elif not isinstance(events, EventStream):
        raise TypeError("events that cannot be read twice")
    elif not decodes_typed(os.stat(events.path).st_size):
        with events.fast() as decoded:
            yield decoded
    else:
        with typed_events(events, frozenset({"type", "id", "callId"})) as decoded:
            yield decoded


class _Recording:
    """The cases of one recording, grouped into shares when the first of them runs."""

    __slots__ = ("cases", "run", "shares")

    def __init__(self, cases: list[Case]) -> None:
        self.cases = cases
        self.shares: dict[int, _Share] | None = None  # by case id, until each takes it
        self.run: Run | None = None  # read to group the cases: the first reading's too

    def share_of(self, case: Case, suite: Suite) -> _Share | None:
        if self.shares is None:
            groups = sharing(self.cases)
            linkings = {_linking(c.needs) for c in self.cases} - {None}
            if len(linkings) > 1:  # results read several ways: alike if no id is shared
                try:  # (read for any case's needs: it may be the reading of any share)
                    with recorded_for(case, Needs.joined(c.needs for c in self.cases)):
                        self.run = produce_run(case, suite)
                except RunError:
                    self.run = None  # (each case reads alone and gets its error)
                if self.run is not None and calls_own_their_ids(self.run):
                    groups = [list(self.cases)]
            self.shares = {}
            for group in groups:
                share = _Share(group)
                self.shares.update((id(c), share) for c in group)
        return self.shares.pop(id(case), None)

    def read(self, case: Case, suite: Suite, share: _Share) -> RunFacts | None:
        """The facts of `share`'s reading, read by `case` if they are not yet; None when
        that reading fails (each of its cases then reads alone)."""
        run, self.run = self.run, None
        if share.facts is None:
            try:
                with recorded_for(case, share.asserted):
                    share.facts = index_run(run or produce_run(case, suite), share.needs)
            except RunError:
                assert self.shares is not None
                self.shares = {k: v for k, v in self.shares.items() if v is not share}
                return None
        return share.facts


class SharedReadings:
    """The recordings that more than one case of a run reads alike, each read once for
    them (above)."""

    def __init__(self, cases: Iterable[tuple[Suite, Case]]) -> None:
        on: dict[Recording, list[Case]] = {}
        for suite, case in cases:
            named = recording_of(case, suite)
            if named is not None:
                on.setdefault(named, []).append(case)
        # by the id of each case of a recording read by more than one (with the case:
        # kept alive, its id is not another's), until the case takes its facts: a
        # recording, its shares and their facts go when its last case has taken them
        self._waiting: dict[int, tuple[Case, _Recording]] = {}
        for alike in on.values() if not read_alone() else ():
            if len(alike) > 1:
                recording = _Recording(alike)
                self._waiting.update((id(case), (case, recording)) for case in alike)

    def facts(self, case: Case, suite: Suite) -> RunFacts | None:
        """The facts of `case`'s recording from the reading it shares, or None when the
        case is to read its run alone (not shared, or the shared reading failed)."""
        taken = self._waiting.pop(id(case), None)
        if taken is None:
            return None
        recording = taken[1]
        share = recording.share_of(case, suite)
        if share is None:
            recording.run = None
            return None
        return recording.read(case, suite, share)
