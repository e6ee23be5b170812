"""Planning judge calls: record a run's questions, count them, fetch them ahead.

Takes compiled cases to evaluate and gives the questions they would ask the judge
(`RecordingJudge`, `TwoPhaseJudge.recording`), how many calls that means and how many are
cached (`plan`), and the judge the command builds from its options (`judge_from_options`).

The command's judge makes its `LLMJudge` (its HTTP client, cache and key hashing, ~8 ms
of imports) when a case first asks it something: a run whose assertions ask no judge
never loads them (`judge.client` is imported where an `LLMJudge` is made), and neither
do a judge that is off (`--judge off`: every question is skipped), a question asked in
live mode without a key while the cache folder does not exist (skipped: nothing cached,
nothing to call; `JudgeConfig.skips_unasked`), fetching ahead without a key or in another
mode than live (nothing is fetched), nor counting the calls of a plan while the cache
folder does not exist (`uncached_plan`).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from evaldsl.judge.config import JudgeConfig
from evaldsl.judge.protocol import JudgeOutcome, JudgePlan, JudgeRequest
from evaldsl.language.jsjson import has_surrogate

if TYPE_CHECKING:
    from concurrent.futures import Future

    from evaldsl.judge.client import LLMJudge


class RecordingJudge:
    """A judge that only notes what it is asked (and skips): the first pass of planning.

    >>> recorder = RecordingJudge()
    >>> recorder("sunny", "mentions weather", model=None, threshold=0.7).status
    'skip'
    >>> recorder.requests
    [JudgeRequest(text='sunny', rubric='mentions weather', model=None)]
    """

    def __init__(self) -> None:
        self.requests: list[JudgeRequest] = []
        self._lock = threading.Lock()

    def __call__(
        self, text: str, rubric: str, *, model: str | None, threshold: float | None
    ) -> JudgeOutcome:
        with self._lock:
            self.requests.append(JudgeRequest(text, rubric, model))
        return JudgeOutcome("skip", "judge: planned, not run")


def plan(
    requests: Iterable[JudgeRequest | tuple[str, str, str | None]],
    config: JudgeConfig | None = None,
) -> JudgePlan:
    """Count the distinct judge calls of `requests` and those already cached.

    >>> plan([("sunny", "mentions weather", None)] * 3, JudgeConfig(cache_dir="/nonexistent"))
    JudgePlan(total=1, cached=0)
    """
    from evaldsl.judge.client import LLMJudge

    return LLMJudge(config).plan(requests)


class TwoPhaseJudge:
    """The judge a suite is compiled with: it can record a case's judge questions instead
    of answering them, so the runner plans them, fetches the misses concurrently
    (`prefetch`, or `submit` to go on with other cases while they are answered), then
    evaluates the case again with every answer at hand, in source order.

    >>> judge = TwoPhaseJudge(RecordingJudge())
    >>> with judge.recording() as asked:
    ...     _ = judge("sunny", "mentions weather", model=None, threshold=None)
    >>> asked
    [JudgeRequest(text='sunny', rubric='mentions weather', model=None)]
    """

    def __init__(
        self, inner: LLMJudge | RecordingJudge | None = None, config: JudgeConfig | None = None
    ) -> None:
        # `inner`, or (None) an LLMJudge with `config` made at the first question
        self._inner = inner
        self._config = config
        self._making = threading.Lock()
        self._asked: list[JudgeRequest] | None = None

    @property
    def _unmade(self) -> JudgeConfig | None:
        """The settings of the `LLMJudge` while it is not made yet (None once it is, or
        when a judge was given): what it would answer without its client is answered
        from them (`--judge off`, nothing to fetch, nothing cached)."""
        return self._config if self._inner is None else None

    @property
    def inner(self) -> LLMJudge | RecordingJudge:
        """The judge that answers: the one given, else the `LLMJudge` made on first use."""
        inner = self._inner
        if inner is None:
            with self._making:
                if self._inner is None:
                    from evaldsl.judge.client import LLMJudge

                    self._inner = LLMJudge(self._config)
                inner = self._inner
        return inner

    def __call__(
        self, text: str, rubric: str, *, model: str | None, threshold: float | None
    ) -> JudgeOutcome:
        if self._asked is not None:
            self._asked.append(JudgeRequest(text, rubric, model))
            return JudgeOutcome("skip", "judge: planned, not run")
        unmade = self._unmade
        skipped = unmade.skips_unasked() if unmade is not None else None
        if skipped is not None:
            return JudgeOutcome("skip", skipped)  # (what the LLMJudge says)
        return self.inner(text, rubric, model=model, threshold=threshold)

    @contextlib.contextmanager
    def recording(self) -> Iterator[list[JudgeRequest]]:
        """Within the block, calls are recorded (and skipped) instead of judged."""
        self._asked = []
        try:
            yield self._asked
        finally:
            self._asked = None

    def prefetch(self, requests: Iterable[JudgeRequest]) -> int:
        unmade = self._unmade
        if unmade is not None and not unmade.fetches_ahead:
            return 0  # (nothing to fetch: what the LLMJudge answers)
        inner = self.inner
        return 0 if isinstance(inner, RecordingJudge) else inner.prefetch(requests)

    def submit(self, requests: Iterable[JudgeRequest]) -> Sequence[Future[Any]]:
        """`LLMJudge.submit`: the questions started on the judge's threads, their futures
        returned at once (none when there is nothing to fetch)."""
        unmade = self._unmade
        if unmade is not None and not unmade.fetches_ahead:
            return ()  # (nothing to fetch: what the LLMJudge answers)
        inner = self.inner
        return () if isinstance(inner, RecordingJudge) else inner.submit(requests)

    def cancel(self) -> None:
        """`LLMJudge.cancel`: take back the submitted questions not started yet."""
        inner = self._inner
        if inner is not None and not isinstance(inner, RecordingJudge):
            inner.cancel()

    def plan(self, requests: Iterable[JudgeRequest]) -> JudgePlan:
        requests = list(requests)  # (read twice when the folder exists)
        unmade = self._unmade
        if unmade is not None and (counted := uncached_plan(requests, unmade)) is not None:
            return counted
        inner = self.inner
        if not isinstance(inner, RecordingJudge):
            return inner.plan(requests)
        distinct = {(r.text, r.rubric, r.model) for r in requests}
        return JudgePlan(len(distinct), 0)


def uncached_plan(requests: Iterable[JudgeRequest], config: JudgeConfig) -> JudgePlan | None:
    """The plan `LLMJudge(config).plan(requests)` gives, without making the judge (its
    client, cache and hashing: ~8 ms of imports), when the cache folder does not exist:
    then no call is cached, and the calls are the distinct requests, the model defaulting
    to the configured one, as their cache keys count them (a key is the hash of the text,
    rubric, model and endpoint as JSON, one key per distinct request). None when a text
    holds a lone surrogate (the key writes a pair of them as the one character it spells
    in JavaScript, so two requests can share a key) or the folder exists.

    >>> uncached_plan([JudgeRequest("a", "r"), JudgeRequest("a", "r", "gpt-4o-mini")],
    ...               JudgeConfig(cache_dir="/nonexistent", model="gpt-4o-mini"))
    JudgePlan(total=1, cached=0)
    """
    if not config.caches_nothing():
        return None
    distinct = set()
    for text, rubric, model in requests:
        question = (text, rubric, config.model_for(model))
        if any(not part.isascii() and has_surrogate(part) for part in question):
            return None
        distinct.add(question)
    return JudgePlan(len(distinct), 0)


def judge_from_options(mode: str | None = None, cache_dir: str | None = None) -> TwoPhaseJudge:
    """The judge the CLI builds from `--judge` and `--judge-cache` and the environment
    (a module-level function, so worker processes can build their own). Its settings are
    read now; its `LLMJudge` is made when a case first asks it something."""
    return TwoPhaseJudge(config=JudgeConfig.from_env(mode=mode, cache_dir=cache_dir))
