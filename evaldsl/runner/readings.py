"""One reading of a recording for the cases of a run that read it alike.

Takes the cases a run will execute (with their suites, in order) and gives, for a
case whose recording other cases read too, the `RunFacts` of one pass over it made for
what any of them reads (`Needs.joined`); the runner reads any other case alone, as
before. Why: cases on one recording are common (`each` rows, a file of cases that check
one long session from several sides), and each read the whole file again.

- A pass for joined needs gives each case the facts its own pass would: counts, the
  tools' sequence, arguments' tests, answers, tokens and times are kept per tool, test
  and position, never mixed. Results are the exception: which call a result is linked
  to depends on the calls filed for results (an event `id` names the first call filed
  under it, and a tool's calls are filed while a `result` test of it is open). So cases
  that read results (`result` tests, `cites`) share a reading only with cases that read
  the same results (the same tests, the same tools' records), and with cases that read
  no result and keep no call's record (when the recording has one such group).
  `tests/test_readings.py` compares every case's result both ways on random suites and
  recordings.
- A recording is one file, format and sample (a case that runs a target, or cannot
  run, is never shared). Its facts are kept from the first of its cases to the last,
  then dropped: a run holds the facts of the recordings whose cases are not all done
  (in suite order, usually one).
- A shared reading that fails (the file cannot be read, a bad line) is forgotten, and
  each of its cases reads the file alone, as before: every case gets the very error
  its own reading gives, never one made for other cases' needs.
- The first case of a recording carries the time of reading it in its `duration_ms`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import attrs

from evaldsl.runner.produce import produce_run
from evaldsl.runs.index import Needs, RunFacts
from evaldsl.runs.model import RunError
from evaldsl.runs.passes import index_run
from evaldsl.suites.model import Case, Suite

#: A recording, as cases share it: the file, its format (None: detected), its sample.
Recording = tuple[str, str | None, str | None]


def recording_named(case: Case, suite: Suite) -> Recording | None:
    """The recording `case` names (as `produce_run` reads it), or None: a live target or
    no source. (A case still to check names its recording too.)"""
    spec = case.source
    if spec is None or spec.kind == "run" or spec.path is None:
        return None
    fmt = spec.format if spec.kind == "trace" else ("state" if spec.kind == "state" else None)
    return (str(suite.base_dir / spec.path), fmt, spec.sample)


def recording_of(case: Case, suite: Suite) -> Recording | None:
    """The recording `case` reads, or None: it names none, or it cannot run."""
    return recording_named(case, suite) if case.error is None else None


def with_metrics(needs: Needs) -> Needs:
    """Metrics want timestamps and priced usage whatever the assertions read."""
    return attrs.evolve(needs, times=True, cost=True, tokens=True)


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

    __slots__ = ("facts", "needs")

    def __init__(self, group: list[Case]) -> None:
        self.needs = with_metrics(Needs.joined(c.needs for c in group))
        self.facts: RunFacts | None = None


class SharedReadings:
    """The recordings that more than one case of a run reads alike, each read once for
    them (above)."""

    def __init__(self, cases: Iterable[tuple[Suite, Case]]) -> None:
        on: dict[Recording, list[Case]] = {}
        for suite, case in cases:
            recording = recording_of(case, suite)
            if recording is not None:
                on.setdefault(recording, []).append(case)
        # by the id of each case sharing it (with the case: kept alive, its id is not
        # another's), until the case takes its facts: a share and its facts go when its
        # last case has taken them
        self._shares: dict[int, tuple[Case, _Share]] = {}
        for alike in on.values():
            for group in sharing(alike) if len(alike) > 1 else ():
                share = _Share(group)
                self._shares.update((id(case), (case, share)) for case in group)

    def facts(self, case: Case, suite: Suite) -> RunFacts | None:
        """The facts of `case`'s recording from the reading it shares, or None when the
        case is to read its run alone (not shared, or the shared reading failed)."""
        taken = self._shares.pop(id(case), None)
        if taken is None:
            return None
        share = taken[1]
        facts = share.facts
        if facts is None:
            try:
                facts = index_run(produce_run(case, suite), share.needs)
            except RunError:
                # each case reads alone and gets its own reading's error
                self._shares = {k: v for k, v in self._shares.items() if v[1] is not share}
                return None
            share.facts = facts
        return facts
