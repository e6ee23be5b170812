"""A serial run's cases, checked and compiled when the run comes to their recording.

Takes the work of a serial run (suite and case index pairs, in report order), some of
whose suites left their cases' checks for later (`load_suite(later=True)`, what `evaldsl
run` does: `Suite.later`), and gives, position by position, the case ready to run, the
`SharedReadings` of the cases on its recording, and each case's own diagnostics.

Why: a serial run checked every case of every suite before running any. A check reads a
recording held in memory whole (a JSON document: an OTLP export, an OpenAI or Anthropic
body) in full, and its reading is held for one case's run at most (`runs/heldruns.py`,
so that two documents are never held at once): a suite of several such documents read
each of them twice, once for its check and once for its run. Now, when the run comes to
the first case of a recording, the cases of the run on that recording are checked and
compiled (its file read once, by the first check, and held), and run with the check's
reading: each document is decoded once a run, as a `-j` worker does with the cases it
is given, and no more is held than before.

- A case of a suite built at once (suite-level assertions, or loaded by the API without
  `later`) is taken as it is; a case with no recording (a live target, no source) is
  checked alone, when the run comes to it.
- Cases on one recording share a reading as they did (`SharedReadings`): one is made
  for the cases of each recording, which is what one over the whole run made.
- The report is the one of a run checked first: the suite's diagnostics are made of
  each case's own (`CaseChecks.diagnostics`), as for `-j`; the cases `-k` leaves out
  are checked when the report is made (not those Ctrl-C stopped the run before).
"""

from __future__ import annotations

from collections.abc import Sequence

from evaldsl.language.diagnostics import Diagnostic
from evaldsl.runner.produce import Recording, recording_named
from evaldsl.runner.readings import SharedReadings
from evaldsl.suites.model import Case, Suite


class CasesInTurn:
    """The cases of a serial run's `work`, each checked (if its suite left that to the
    run) when the run comes to the first case of its recording; `own` gets the own
    diagnostics of each case checked here, by its position in `work`."""

    def __init__(self, work: Sequence[tuple[Suite, int]]) -> None:
        self._work = work
        self._on: dict[Recording, list[int]] = {}  # each recording's positions, in order
        self._recordings: list[Recording | None] = []
        for suite, index in work:
            # (a case still to check names its recording too: `recording_named`)
            named = recording_named(suite.cases[index], suite)
            self._recordings.append(named)
            if named is not None:
                self._on.setdefault(named, []).append(len(self._recordings) - 1)
        self._ready: dict[int, tuple[Case, SharedReadings | None]] = {}
        self.own: dict[int, tuple[Diagnostic, ...]] = {}

    def case(self, position: int) -> tuple[Case, SharedReadings | None]:
        """The case at `position`, checked and compiled, and the readings of its
        recording's cases (None: it reads alone)."""
        ready = self._ready.pop(position, None)
        if ready is not None:
            return ready
        named = self._recordings[position]
        group = self._on.pop(named, [position]) if named is not None else [position]
        cases = [(at, self._checked(at)) for at in group]
        readings = (
            SharedReadings((self._work[at][0], case) for at, case in cases)
            if len(cases) > 1
            else None
        )
        for at, case in cases:
            self._ready[at] = (case, readings)
        return self._ready.pop(position)

    def _checked(self, position: int) -> Case:
        suite, index = self._work[position]
        if suite.later is None:
            return suite.cases[index]
        case, diagnostics = suite.later.case(index)
        self.own[position] = diagnostics
        return case
