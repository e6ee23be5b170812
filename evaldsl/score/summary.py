"""The summary of a scoring run: counters and a bounded sample, whatever the number of traces.

Takes `TraceRecord`s one at a time (`Summary.add`) and gives per-assertion counts and pass
rates, trace counts, the mean score, and the first few failing traces of each assertion
and the first few unreadable ones: nothing per trace is kept beyond those samples, so a
summary of 10⁸ traces is as small as one of ten. Summaries of parts merge (`merge`), in
order, into the summary of the whole (what a Dask reduction does).

Pass rate of an assertion = passed ÷ (passed + failed + errors), skips not counted
(docs/language.md §5); `None` when nothing counted. An unreadable trace counts as an
error of every assertion, and is sampled once under `unreadable`, not under each assertion.
A trace all of whose assertions were skipped (a judge without a key) is counted `skipped`,
neither passed nor failed, as `run` counts such a case; its score (1.0) still counts in the
mean score, as a skipped case's does in `run`'s.
"""

from __future__ import annotations

from typing import Any, TypedDict

import attrs

from evaldsl.api import Program
from evaldsl.language.printable import visible
from evaldsl.language.verdicts import Status
from evaldsl.score.scoring import TraceRecord, the_case
from evaldsl.suites.build import assertion_location

DEFAULT_SAMPLES = 3


class Sample(TypedDict):
    """A trace shown as an example: which one, and what went wrong."""

    trace: str
    status: Status
    message: str


@attrs.define
class Tally:
    """One assertion's counts over every trace, and its first failing traces."""

    text: str
    location: str  # path:line:column of the assertion in the program
    counts: dict[Status, int] = attrs.Factory(lambda: {"pass": 0, "fail": 0, "skip": 0, "error": 0})
    failing: list[Sample] = attrs.Factory(list)

    @property
    def pass_rate(self) -> float | None:
        counted = self.counts["pass"] + self.counts["fail"] + self.counts["error"]
        return self.counts["pass"] / counted if counted else None


@attrs.define
class Summary:
    """Counters over the traces scored so far (see the module doc)."""

    assertions: list[Tally]
    samples: int = DEFAULT_SAMPLES
    traces: int = 0
    passed: int = 0
    failed: int = 0
    unreadable: int = 0
    score_total: float = 0.0
    unreadable_samples: list[Sample] = attrs.Factory(list)
    skipped: int = 0  # (last: the fields before it keep their positions)
    interrupted: bool = False  # Ctrl-C or SIGTERM stopped the scoring: traces were left

    @classmethod
    def of(cls, program: Program, samples: int = DEFAULT_SAMPLES) -> Summary:
        """An empty summary for a compiled program's assertions."""
        tallies = []
        for a in the_case(program).assertions:
            path, line, column, _, _ = assertion_location(a, program.source)
            tallies.append(Tally(a.text, f"{path}:{line}:{column}"))
        return cls(tallies, samples)

    def add(self, rec: TraceRecord) -> None:
        """Count one trace."""
        self.traces += 1
        self.score_total += rec["score"]
        error = rec["error"]
        if error is not None:
            self.unreadable += 1
            if len(self.unreadable_samples) < self.samples:
                self.unreadable_samples.append(
                    Sample(trace=rec["trace"], status="error", message=error)
                )
        elif rec["skipped"]:
            self.skipped += 1
        elif rec["passed"]:
            self.passed += 1
        else:
            self.failed += 1
        for tally, status in zip(self.assertions, rec["statuses"], strict=True):
            tally.counts[status] += 1
        if error is None:
            for failure in rec["failures"]:
                tally = self.assertions[failure["index"]]
                if len(tally.failing) < self.samples:
                    tally.failing.append(
                        Sample(
                            trace=rec["trace"], status=failure["status"], message=failure["message"]
                        )
                    )

    def merge(self, later: Summary) -> Summary:
        """This summary followed by `later` (the traces it counted come after these)."""
        if [t.text for t in self.assertions] != [t.text for t in later.assertions]:
            raise ValueError("cannot merge the summaries of different programs")
        tallies = [
            Tally(
                a.text,
                a.location,
                {s: a.counts[s] + b.counts[s] for s in a.counts},
                (a.failing + b.failing)[: self.samples],
            )
            for a, b in zip(self.assertions, later.assertions, strict=True)
        ]
        return Summary(
            tallies,
            self.samples,
            self.traces + later.traces,
            self.passed + later.passed,
            self.failed + later.failed,
            self.unreadable + later.unreadable,
            self.score_total + later.score_total,
            (self.unreadable_samples + later.unreadable_samples)[: self.samples],
            self.skipped + later.skipped,
        )

    @property
    def mean_score(self) -> float | None:
        return self.score_total / self.traces if self.traces else None

    @property
    def ok(self) -> bool:
        """Every trace was read and passed."""
        return self.failed == 0 and self.unreadable == 0

    def to_json(self) -> dict[str, Any]:
        """The summary as the JSON reports print it."""
        mean = self.mean_score
        return {
            "traces": self.traces,
            "passed": self.passed,
            "failed": self.failed,
            "skipped": self.skipped,
            "unreadable": self.unreadable,
            "mean_score": round(mean, 6) if mean is not None else None,
            "assertions": [
                {
                    "assertion": t.text,
                    "location": t.location,
                    **t.counts,
                    "pass_rate": round(t.pass_rate, 6) if t.pass_rate is not None else None,
                    "failing": t.failing,
                }
                for t in self.assertions
            ],
            "unreadable_samples": self.unreadable_samples,
        } | ({"interrupted": True} if self.interrupted else {})

    def render(self) -> str:
        """The summary for people: trace counts, then each assertion with its rate and
        first failing traces, then the first unreadable traces."""
        mean = self.mean_score
        lines = [
            f"{_count(self.traces, 'trace')}: {self.passed} passed, {self.failed} failed, "
            + (f"{self.skipped} skipped, " if self.skipped else "")
            + f"{self.unreadable} unreadable; mean score "
            + (f"{mean:.3f}" if mean is not None else "-")
        ]
        for t in self.assertions:
            rate = f"{t.pass_rate:6.1%}" if t.pass_rate is not None else "     -"
            c = t.counts
            lines.append(
                f"{rate}  {c['pass']} pass, {c['fail']} fail, {c['skip']} skip, "
                f"{c['error']} error  {t.location}  {t.text}"
            )
            lines.extend(f"        {s['status']}: {s['trace']}: {s['message']}" for s in t.failing)
        if self.unreadable_samples:
            lines.append("unreadable:")
            lines.extend(f"        {s['message']}" for s in self.unreadable_samples)
        if self.interrupted:
            lines.append(f"interrupted: {_count(self.traces, 'trace')} scored")
        # (traces' file names and messages: shown, never acted on, on a terminal)
        return "\n".join(visible(line, newlines=False) for line in lines)


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"
