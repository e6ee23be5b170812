"""Verdicts: pass / fail / skip / error, how they combine, and how cases are scored.

Takes the verdicts of compiled assertions and gives combined verdicts (`not`, `and`, `or`
with Kleene logic, error dominating skip) and case scores, exactly as docs/language.md §5 says:
- `not` swaps pass and fail and leaves skip and error alone;
- `and` fails if any operand fails, else errors if any errors, else skips if any skips;
- `or` passes if any operand passes, else errors if any errors, else skips if any skips;
- a case's score is passed ÷ (passed + failed + errors), 1.0 with nothing counted.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Literal

import attrs

from evaldsl.language.slotinit import maker, slot_init
from evaldsl.language.source import Span

Status = Literal["pass", "fail", "skip", "error"]


@attrs.frozen
class Verdict:
    """The outcome of one assertion: its status, a message, and what was found/expected."""

    status: Status
    message: str
    span: Span
    actual: Any = None
    expected: Any = None
    children: tuple[Verdict, ...] = ()

    @property
    def passed(self) -> bool:
        return self.status == "pass"


slot_init(Verdict)  # one an assertion and run, and one each part of `not`, `and`, `or`
#: `Verdict(...)` as a plain function (`slotinit.maker`): the same verdict without the
#: class's call and a call per field (~6,400 instructions a verdict against ~2,800), for
#: the verdicts made at every check: one an assertion, and one each `not`, `and`, `or`
verdict = maker(Verdict)


def negate(inner: Verdict, span: Span) -> Verdict:
    """`not A`."""
    status = inner.status
    if status == "pass":
        flipped: Status = "fail"
        message = f"expected the opposite, but: {inner.message}"
    elif status == "fail":
        flipped = "pass"
        message = f"as expected, not: {inner.message}"
    else:
        flipped, message = status, inner.message
    return verdict(flipped, message, span, inner.actual, inner.expected, (inner,))


def combine(kind: Literal["and", "or"], parts: Sequence[Verdict], span: Span) -> Verdict:
    """`A and B …` / `A or B …` in Kleene logic, error dominating skip.

    The message: the parts' messages joined by the operator when every part decided it
    alike (all passed an `and`, all failed an `or`), else those of the parts whose status
    it took. (Lists rather than a set and generators: one is made per `and`/`or` and run,
    millions when many statements are scored over many traces.)
    """
    statuses = [p.status for p in parts]
    decisive: Status = "fail" if kind == "and" else "pass"
    if decisive in statuses:
        status = decisive
    elif "error" in statuses:
        status = "error"
    elif "skip" in statuses:
        status = "skip"
    else:  # every part passed an `and`, or failed an `or` (or there are none)
        status = "pass" if kind == "and" else "fail"
        message = f" {kind} ".join([p.message for p in parts])
        return verdict(status, message, span, None, None, tuple(parts))
    # (one cause said once: both sides of `guards >= 1 and guards == 0` error alike when
    # the run has no trace)
    message = "; ".join(dict.fromkeys([p.message for p in parts if p.status == status]))
    return verdict(status, message, span, None, None, tuple(parts))


def score(verdicts: Sequence[Verdict]) -> float:
    """passed ÷ (passed + failed + errors); 1.0 when none of them counts."""
    return status_score([v.status for v in verdicts])


def status_score(statuses: Sequence[Status]) -> float:
    """`score` of verdicts with these statuses."""
    counted = len(statuses) - statuses.count("skip")
    return statuses.count("pass") / counted if counted else 1.0


def case_passed(verdicts: Sequence[Verdict]) -> bool:
    """A case passes when no assertion fails or errors."""
    return all(v.status in ("pass", "skip") for v in verdicts)


def all_skipped(statuses: Iterable[Status]) -> bool:
    """Whether nothing was tested: at least one assertion, each of them skipped (a judge
    without a key). Such a case or trace is neither passed nor failed in every report.

    >>> all_skipped(["skip", "skip"]), all_skipped(["skip", "pass"]), all_skipped([])
    (True, False, False)
    """
    seen = False
    for status in statuses:
        if status != "skip":
            return False
        seen = True
    return seen


def tested_rate(passed: int, cases: int, skipped: int) -> float:
    """The pass rate every report gives: the share of the tested cases (not skipped: see
    `all_skipped`) that passed; 0 when none was tested.

    >>> tested_rate(3, 5, 1), tested_rate(0, 2, 2)
    (0.75, 0.0)
    """
    tested = cases - skipped
    return passed / tested if tested else 0.0
