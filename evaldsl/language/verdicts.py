"""Verdicts: pass / fail / skip / error, how they combine, and how cases are scored.

Takes the verdicts of compiled assertions and gives combined verdicts (`not`, `and`, `or`
with Kleene logic, error dominating skip) and case scores, exactly as docs/language.md §5 says:
- `not` swaps pass and fail and leaves skip and error alone;
- `and` fails if any operand fails, else errors if any errors, else skips if any skips;
- `or` passes if any operand passes, else errors if any errors, else skips if any skips;
- a case's score is passed ÷ (passed + failed + errors), 1.0 with nothing counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import attrs

from evaldsl.language.slotinit import slot_init
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


def negate(inner: Verdict, span: Span) -> Verdict:
    """`not A`."""
    flipped: Status = {"pass": "fail", "fail": "pass"}.get(inner.status, inner.status)  # type: ignore[assignment]
    if flipped == "fail":
        message = f"expected the opposite, but: {inner.message}"
    elif flipped == "pass":
        message = f"as expected, not: {inner.message}"
    else:
        message = inner.message
    return Verdict(flipped, message, span, inner.actual, inner.expected, (inner,))


def combine(kind: Literal["and", "or"], parts: Sequence[Verdict], span: Span) -> Verdict:
    """`A and B …` / `A or B …` in Kleene logic, error dominating skip."""
    statuses = {p.status for p in parts}
    decisive: Status = "fail" if kind == "and" else "pass"
    if decisive in statuses:
        status = decisive
    elif "error" in statuses:
        status = "error"
    elif "skip" in statuses:
        status = "skip"
    else:
        status = "pass" if kind == "and" else "fail"
    chosen = [p for p in parts if p.status == status] or list(parts)
    if (status == "pass" and kind == "and") or (status == "fail" and kind == "or"):
        message = f" {kind} ".join(p.message for p in parts)
    else:
        message = "; ".join(p.message for p in chosen)
    return Verdict(status, message, span, children=tuple(parts))


def score(verdicts: Sequence[Verdict]) -> float:
    """passed ÷ (passed + failed + errors); 1.0 when none of them counts."""
    passed = sum(1 for v in verdicts if v.status == "pass")
    counted = sum(1 for v in verdicts if v.status != "skip")
    return 1.0 if counted == 0 else passed / counted


def case_passed(verdicts: Sequence[Verdict]) -> bool:
    """A case passes when no assertion fails or errors."""
    return all(v.status in ("pass", "skip") for v in verdicts)
