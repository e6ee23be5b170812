"""The judge as the rest of evaldsl sees it: a question in, an outcome out.

Takes nothing; declares the `Judge` protocol that compiled `judged` assertions call, the
`JudgeOutcome` it returns, the `JudgeRequest` a planner records and the `JudgePlan` it
counts, and `no_judge` (every judge assertion skips). The real judge (cache, HTTP client,
planning) lives beside this module; nothing here imports it, so compiling a program never
loads an HTTP client.
"""

from __future__ import annotations

from typing import NamedTuple, Protocol

import attrs

from evaldsl.language.verdicts import Status


@attrs.frozen
class JudgeOutcome:
    """What a judge said: a status, a message, and the score when there is one."""

    status: Status
    message: str
    score: float | None = None


class Judge(Protocol):
    """Decides `X judged "rubric"`; `evaldsl.judge.client.LLMJudge` is the real one."""

    def __call__(
        self, text: str, rubric: str, *, model: str | None, threshold: float | None
    ) -> JudgeOutcome: ...


def no_judge(text: str, rubric: str, *, model: str | None, threshold: float | None) -> JudgeOutcome:
    """The judge when none is configured: every judge assertion is skipped."""
    return JudgeOutcome(
        "skip", "no LLM judge configured: set EVALDSL_JUDGE_API_KEY to judge this assertion"
    )


class JudgeRequest(NamedTuple):
    """One question for the judge: the subject's text, the rubric, the model (None: default)."""

    text: str
    rubric: str
    model: str | None = None


class JudgePlan(NamedTuple):
    """How many distinct judge calls a run needs, and how many are already cached."""

    total: int
    cached: int

    @property
    def calls(self) -> int:
        """The calls that would go to the endpoint."""
        return self.total - self.cached
