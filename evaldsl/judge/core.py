"""The LLM judge: decide `X judged "rubric"` through an OpenAI-compatible chat endpoint.

Takes (text, rubric, model, threshold) and gives a `JudgeOutcome` (the `Judge` protocol of
compiler.py), reading a content-addressed cache before any network call. LANGUAGE.md §7 is
the contract; seed-semantics §3.7 (traceplay) the precedent, kept where it is good:

- the cache key is traceplay's, `sha256(JSON.stringify({answer, rubric, model, apiBase}))`,
  so `.traceplay/judge-cache` can be reused, and its `{"passed", "reason"}` files are read;
- a cache hit needs neither the network nor a key (traceplay checked the key first);
- the URL keeps the base URL's path (`…/v1/chat/completions`; traceplay dropped `/v1`);
- the HTTP status is checked, 5xx / 429 / timeouts are retried with backoff a bounded
  number of times, and everything that is not the JSON verdict asked for is an error
  naming what came back: a judge assertion never passes by accident;
- the API key never appears in a message, a log record, a cache file or a repr.

Modes: `live` (cache, then the endpoint), `frozen` (cache only: a miss is an error, for CI),
`off` (every judge assertion skips). `plan` counts the calls a run would make and
`LLMJudge.prefetch` makes them concurrently, so later per-assertion calls are cache hits
while the report keeps source order:

    recorder = RecordingJudge()
    evaldsl.compile(text, judge=recorder).check(run)      # notes (text, rubric, model)
    judge = LLMJudge(JudgeConfig.from_env(mode="live"))   # or "frozen" in CI
    total, cached = judge.plan(recorder.requests)
    judge.prefetch(recorder.requests)                     # concurrent, bounded
    evaldsl.compile(text, judge=judge).check(run)         # every judge call is a hit
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import math
import os
import random
import re
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, NamedTuple

import attrs
import httpx

from evaldsl.compile.compiler import JudgeOutcome
from evaldsl.language.verdicts import Status

__all__ = [
    "DEFAULT_BASE_URL",
    "DEFAULT_CACHE_DIR",
    "DEFAULT_MODEL",
    "ENABLE_HINT",
    "JudgeConfig",
    "JudgeMode",
    "JudgePlan",
    "JudgeReply",
    "JudgeRequest",
    "LLMJudge",
    "RecordingJudge",
    "cache_key",
    "parse_reply",
    "plan",
    "read_cache",
    "verdict",
    "write_cache",
]

log = logging.getLogger(__name__)

JudgeMode = Literal["live", "frozen", "off"]
MODES: tuple[JudgeMode, ...] = ("live", "frozen", "off")

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_MODEL = "gpt-4o-mini"
DEFAULT_CACHE_DIR = Path(".evaldsl/judge-cache")
ENV_API_KEY = "EVALDSL_JUDGE_API_KEY"
ENV_BASE_URL = "EVALDSL_JUDGE_BASE_URL"
ENV_MODEL = "EVALDSL_JUDGE_MODEL"
ENABLE_HINT = f"set {ENV_API_KEY} (and optionally {ENV_BASE_URL}, {ENV_MODEL})"
OFF_MESSAGE = "judge assertions are off (--judge off)"

SYSTEM_PROMPT = (
    "You are a strict evaluator. Decide whether the answer meets the rubric. "
    'Reply with ONLY a JSON object, no prose and no code fences: {"passed": true or false, '
    '"score": a number from 0 to 1, "reason": "one short sentence"}. '
    "score measures how well the answer meets the rubric (1 = fully, 0 = not at all); "
    "passed is true only when the answer fully meets the rubric."
)

_SHOWN = 200  # characters of a bad reply quoted in an error message
_REDACTED = "[redacted]"
_SURROGATE = re.compile("[\ud800-\udfff]")
_FENCE = re.compile(r"```[ \t]*(?:json)?[ \t]*\r?\n?(.*?)```", re.DOTALL | re.IGNORECASE)
_HEADER_SAFE = re.compile(r"[\x21-\x7e]+")  # visible ASCII: what a Bearer token can carry


# -- configuration


def _optional_key(value: str | None) -> str | None:
    # A key pasted with a trailing newline is common; an empty variable means "no key".
    return (value.strip() or None) if value is not None else None


def _base_url(value: str) -> str:
    return value.strip().rstrip("/")


def _path(value: str | os.PathLike[str]) -> Path:
    return Path(value)


def _check_base_url(instance: Any, attribute: Any, value: str) -> None:
    if not value.startswith(("http://", "https://")):
        raise ValueError(f"the judge base URL must start with http:// or https://, got {value!r}")


def _positive(instance: Any, attribute: Any, value: float) -> None:
    if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
        raise ValueError(f"{attribute.name} must be a positive number of seconds, got {value!r}")


def _non_negative(instance: Any, attribute: Any, value: float) -> None:
    if not (isinstance(value, int | float) and math.isfinite(value) and value >= 0):
        raise ValueError(f"{attribute.name} must be ≥ 0 seconds, got {value!r}")


@attrs.frozen
class JudgeConfig:
    """How to reach the judge, how hard to try, and where its verdicts are cached.

    `retries` is how many times a timeout, a 5xx or a 429 is retried after the first
    attempt; the wait doubles from `backoff` seconds up to `max_backoff` (a server's
    `Retry-After` is honoured up to `retry_after_cap`). The key is left out of the repr.

    >>> JudgeConfig(api_key="sk-secret").chat_url
    'https://api.openai.com/v1/chat/completions'
    >>> "sk-secret" in repr(JudgeConfig(api_key="sk-secret"))
    False
    """

    api_key: str | None = attrs.field(default=None, repr=False, converter=_optional_key)
    base_url: str = attrs.field(
        default=DEFAULT_BASE_URL, converter=_base_url, validator=_check_base_url
    )
    model: str = DEFAULT_MODEL
    timeout: float = attrs.field(default=30.0, validator=_positive)
    retries: int = attrs.field(
        default=3, validator=[attrs.validators.ge(0), attrs.validators.le(10)]
    )
    backoff: float = attrs.field(default=0.5, validator=_non_negative)
    max_backoff: float = attrs.field(default=8.0, validator=_non_negative)
    retry_after_cap: float = attrs.field(default=30.0, validator=_non_negative)
    mode: JudgeMode = attrs.field(default="live", validator=attrs.validators.in_(MODES))
    cache_dir: Path = attrs.field(default=DEFAULT_CACHE_DIR, converter=_path)
    max_concurrency: int = attrs.field(
        default=8, validator=[attrs.validators.ge(1), attrs.validators.le(256)]
    )

    @property
    def chat_url(self) -> str:
        """The chat-completions URL: the base URL's path (`/v1`) is kept."""
        return f"{self.base_url}/chat/completions"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] = os.environ, **overrides: Any) -> JudgeConfig:
        """Read `EVALDSL_JUDGE_API_KEY`, `…_BASE_URL` and `…_MODEL`, then apply overrides.

        An override of None is ignored, so a CLI can pass its unset options through.

        >>> config = JudgeConfig.from_env({"EVALDSL_JUDGE_MODEL": "m"}, mode="frozen", timeout=None)
        >>> config.model, config.mode, config.timeout, config.api_key
        ('m', 'frozen', 30.0, None)
        """
        unknown = sorted(set(overrides) - set(attrs.fields_dict(cls)))
        if unknown:
            raise TypeError(f"unknown judge setting(s): {', '.join(unknown)}")
        values: dict[str, Any] = {
            "api_key": environ.get(ENV_API_KEY) or None,
            "base_url": environ.get(ENV_BASE_URL, "").strip() or DEFAULT_BASE_URL,
            "model": environ.get(ENV_MODEL, "").strip() or DEFAULT_MODEL,
        }
        values.update({name: v for name, v in overrides.items() if v is not None})
        return cls(**values)


# -- the cache


def cache_key(
    answer: str, rubric: str, model: str = DEFAULT_MODEL, api_base: str = DEFAULT_BASE_URL
) -> str:
    """traceplay's cache key: SHA-256 of `JSON.stringify({answer, rubric, model, apiBase})`.

    Compact JSON, keys in that order, non-ASCII kept, hashed as UTF-8. A lone surrogate
    (which UTF-8 cannot carry) is written `\\udXXX`, as JavaScript writes it.

    >>> cache_key("Xiamen is sunny, 31C.", "mentions weather")
    '23bfe9152918833134ecb9268a2dabee3678ea8380dd2f818006852e89c52e42'
    """
    fields = {"answer": answer, "rubric": rubric, "model": model, "apiBase": api_base}
    if any(_SURROGATE.search(v) for v in fields.values()):
        # JavaScript strings are UTF-16: a surrogate pair is one character there.
        fields = {
            k: v.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
            for k, v in fields.items()
        }
    text = json.dumps(fields, separators=(",", ":"), ensure_ascii=False)
    text = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@attrs.frozen
class JudgeReply:
    """A judge's verdict: `passed`, an optional `score` in [0, 1], and its reason."""

    passed: bool
    score: float | None = None
    reason: str = ""


class _BadReply(ValueError):
    """What came back is not the verdict asked for; the message says what it was."""


def _shorten(text: str, limit: int = _SHOWN) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _quoted(text: str) -> str:
    return json.dumps(_shorten(text), ensure_ascii=False)


def _reply_from_object(value: Any, shown: str) -> JudgeReply:
    if not isinstance(value, dict):
        raise _BadReply(f"the reply is not a JSON object: {_quoted(shown)}")
    passed = value.get("passed")
    if not isinstance(passed, bool):
        raise _BadReply(f'the reply has no boolean "passed": {_quoted(shown)}')
    score = value.get("score")
    if score is not None:
        if isinstance(score, bool) or not isinstance(score, int | float):
            raise _BadReply(f'the reply\'s "score" is not a number: {_quoted(shown)}')
        if not (math.isfinite(score) and 0 <= score <= 1):
            raise _BadReply(f'the reply\'s "score" {score!r} is not in [0, 1]: {_quoted(shown)}')
        score = float(score)
    reason = value.get("reason")
    if reason is not None and not isinstance(reason, str):
        raise _BadReply(f'the reply\'s "reason" is not a string: {_quoted(shown)}')
    return JudgeReply(passed, score, reason or "")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_reply(content: str) -> JudgeReply:
    """Parse the judge's message: a JSON object, bare or inside a ```json fence.

    Raises ValueError naming what came back (shortened) when it is anything else.

    >>> parse_reply('```json\\n{"passed": true, "score": 0.8, "reason": "ok"}\\n```')
    JudgeReply(passed=True, score=0.8, reason='ok')
    """
    text = content.strip()
    fenced = _FENCE.search(text)
    if fenced is not None and not text.startswith("{"):
        text = fenced.group(1).strip()
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except ValueError:
        raise _BadReply(f"the reply is not JSON: {_quoted(content)}") from None
    return _reply_from_object(value, content)


def read_cache(path: str | os.PathLike[str]) -> JudgeReply | None:
    """A cached verdict, or None when the file is missing, unreadable or not a verdict.

    Reads evaldsl's files and traceplay's (`{"passed": true, "reason": "…"}`, no score).
    A file without a boolean `passed` (traceplay cached `{}` for error replies) is a miss.
    """
    try:
        with open(path, "rb") as file:
            text = file.read().decode("utf-8")
        return _reply_from_object(json.loads(text, parse_constant=_reject_constant), text)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, _BadReply) as why:
        log.warning("ignoring judge cache file %s: %s", path, why)
        return None


def write_cache(path: str | os.PathLike[str], record: Mapping[str, Any]) -> None:
    """Write a cache file atomically: a temporary file in the same folder, then `os.replace`.

    Readers see the old file or the new one, never a part of either, and two writers of
    the same key (threads or processes) leave one whole file.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        data = json.dumps(record, ensure_ascii=False, indent=2).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: keep it, escaped
        data = json.dumps(record, ensure_ascii=True, indent=2).encode("ascii")
    fd, temp = tempfile.mkstemp(prefix=f".{target.stem}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data + b"\n")
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temp, 0o644)  # mkstemp makes 0600; a cache is meant to be shared
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


# -- verdicts


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def verdict(reply: JudgeReply, threshold: float | None) -> JudgeOutcome:
    """The assertion's outcome: score ≥ threshold (inclusive) with one, else `passed`.

    >>> verdict(JudgeReply(True, 0.7, "sunny"), 0.7).message
    'judge: PASS (score 0.7 ≥ 0.7) — sunny'
    >>> verdict(JudgeReply(True, None, ""), 0.5).status
    'error'
    """
    reason = f" — {reply.reason}" if reply.reason else ""
    if threshold is not None:
        if reply.score is None:
            return JudgeOutcome(
                "error",
                f"judge: the verdict has no score, and a threshold (>= {_number(threshold)}) "
                f"needs one{reason}",
            )
        ok = reply.score >= threshold
        sign = "≥" if ok else "<"
        shown = f"score {_number(reply.score)} {sign} {_number(threshold)}"
        status: Status = "pass" if ok else "fail"
    else:
        ok = reply.passed
        shown = f"score {_number(reply.score)}" if reply.score is not None else ""
        status = "pass" if ok else "fail"
    detail = f" ({shown})" if shown else ""
    return JudgeOutcome(status, f"judge: {status.upper()}{detail}{reason}", reply.score)


# -- planning


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


@attrs.frozen
class _Failed:
    """No verdict: why (a skip or an error)."""

    status: Status
    message: str


_Resolved = JudgeReply | _Failed


def _retry_after(value: str | None, cap: float) -> float | None:
    """Seconds to wait from a `Retry-After` header (seconds or an HTTP date), capped."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - datetime.now(UTC)).total_seconds()
    if not math.isfinite(seconds):
        return None
    return min(max(seconds, 0.0), cap)


def _message_content(data: Any) -> str | None:
    """`choices[0].message.content`: a string, or text parts joined."""
    try:
        message = data["choices"][0]["message"]
        content = message["content"]
    except (KeyError, IndexError, TypeError):
        return None
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, dict)]
        texts = [p for p in parts if isinstance(p, str)]
        return "\n".join(texts) if texts else None
    return content if isinstance(content, str) else None


class LLMJudge:
    """The judge of `X judged "rubric"`: cache first, then an OpenAI-compatible endpoint.

    Callable per compiler.py's `Judge` protocol; safe to call from several threads (one
    call per distinct question, the others wait for it). Results, errors included, are
    remembered until `forget()`, so one run asks each question at most once. `calls` and
    `hits` count the questions sent to the endpoint and those answered by the cache folder.
    `sleep` is what waits between retries (tests inject their own); `client` an httpx
    client to use instead of one of its own.

    >>> LLMJudge(JudgeConfig(mode="off"))("text", "rubric", model=None, threshold=None).message
    'judge assertions are off (--judge off)'
    """

    def __init__(
        self,
        config: JudgeConfig | None = None,
        *,
        sleep: Callable[[float], None] = time.sleep,
        client: httpx.Client | None = None,
    ) -> None:
        self.config = config if config is not None else JudgeConfig.from_env()
        self.calls = 0  # questions sent to the endpoint (retries not counted)
        self.hits = 0  # questions answered by the cache folder
        self._sleep = sleep
        self._client = client
        self._owns_client = client is None
        self._lock = threading.Lock()
        self._memo: dict[str, Future[_Resolved]] = {}

    def __repr__(self) -> str:
        return f"LLMJudge({self.config!r})"

    # -- the Judge protocol

    def __call__(
        self, text: str, rubric: str, *, model: str | None, threshold: float | None
    ) -> JudgeOutcome:
        """Judge one assertion; see the module docstring for the modes and the cache."""
        if self.config.mode == "off":
            return JudgeOutcome("skip", OFF_MESSAGE)
        resolved = self._resolve(JudgeRequest(text, rubric, model))
        if isinstance(resolved, _Failed):
            return JudgeOutcome(resolved.status, self._redact(resolved.message))
        outcome = verdict(resolved, threshold)
        return attrs.evolve(outcome, message=self._redact(outcome.message))

    # -- cache addressing

    def key(self, request: JudgeRequest) -> str:
        """The cache key of a request, with this judge's default model and base URL."""
        model = request.model or self.config.model
        return cache_key(request.text, request.rubric, model, self.config.base_url)

    def cache_path(self, request: JudgeRequest) -> Path:
        """Where the request's verdict is (or would be) cached."""
        return self.config.cache_dir / f"{self.key(request)}.json"

    # -- planning and prefetching

    def plan(self, requests: Iterable[JudgeRequest | tuple[str, str, str | None]]) -> JudgePlan:
        """Count the distinct judge calls of `requests` and those already cached."""
        keys = {self.key(JudgeRequest(*r)): JudgeRequest(*r) for r in requests}
        cached = 0
        for key, request in keys.items():
            with self._lock:
                future = self._memo.get(key)
            if future is not None and future.done():
                if isinstance(future.result(), JudgeReply):
                    cached += 1
            elif read_cache(self.cache_path(request)) is not None:
                cached += 1
        return JudgePlan(len(keys), cached)

    def prefetch(self, requests: Iterable[JudgeRequest | tuple[str, str, str | None]]) -> int:
        """Resolve every distinct request now, `max_concurrency` at a time.

        Misses go to the endpoint concurrently (live mode with a key only; otherwise there
        is nothing to fetch); the per-assertion calls that follow are then memo hits, in
        whatever order the report needs. Returns how many endpoint calls were made.
        """
        if self.config.mode != "live" or self.config.api_key is None:
            return 0
        distinct: dict[str, JudgeRequest] = {}
        for r in requests:
            request = JudgeRequest(*r)
            distinct.setdefault(self.key(request), request)
        with self._lock:
            todo = [r for k, r in distinct.items() if k not in self._memo]
        if not todo:
            return 0
        before = self.calls
        workers = min(self.config.max_concurrency, len(todo))
        with ThreadPoolExecutor(workers, thread_name_prefix="evaldsl-judge") as pool:
            for _ in pool.map(self._resolve, todo):
                pass
        return self.calls - before

    # -- resolution: memo, cache, endpoint

    def _resolve(self, request: JudgeRequest) -> _Resolved:
        key = self.key(request)
        with self._lock:
            future = self._memo.get(key)
            owner = future is None
            if future is None:
                future = self._memo[key] = Future()
        if owner:
            try:
                result = self._fetch(key, request)
            except BaseException as exc:  # a bug, not a verdict: let a later call retry
                with self._lock:
                    self._memo.pop(key, None)
                future.set_exception(exc)
                raise
            future.set_result(result)
        return future.result()

    def _fetch(self, key: str, request: JudgeRequest) -> _Resolved:
        path = self.config.cache_dir / f"{key}.json"
        cached = read_cache(path)
        if cached is not None:
            with self._lock:
                self.hits += 1
            log.debug("judge cache hit %s", path)
            return cached
        if self.config.mode == "frozen":
            return _Failed(
                "error",
                f"judge: no cached verdict for this judge assertion (looked for {path}) "
                "and --judge frozen forbids calling the judge",
            )
        if self.config.api_key is None:
            return _Failed(
                "skip", f"judge: skipped, no API key and no cached verdict: {ENABLE_HINT} to run it"
            )
        model = request.model or self.config.model
        try:
            result = self._call(request.text, request.rubric, model)
        except Exception as exc:  # never let a judge problem crash the run
            result = _Failed(
                "error", f"judge: call failed: {type(exc).__name__}: {self._redact(str(exc))}"
            )
        if isinstance(result, JudgeReply):
            record = {
                "passed": result.passed,
                "score": result.score,
                "reason": self._redact(result.reason),
                "model": model,
                "rubric": request.rubric,
            }
            try:
                write_cache(path, record)
            except OSError as why:
                log.warning("could not write judge cache file %s: %s", path, why)
        return result

    # -- the endpoint

    def _http(self) -> httpx.Client:
        with self._lock:
            if self._client is None:
                n = self.config.max_concurrency
                self._client = httpx.Client(
                    timeout=httpx.Timeout(self.config.timeout),
                    limits=httpx.Limits(max_connections=n, max_keepalive_connections=n),
                    follow_redirects=False,  # a redirect would resend the key elsewhere
                )
            return self._client

    def _call(self, answer: str, rubric: str, model: str) -> _Resolved:
        key = self.config.api_key
        assert key is not None
        if _HEADER_SAFE.fullmatch(key) is None:
            return _Failed(
                "error",
                f"judge: {ENV_API_KEY} holds characters an HTTP header "
                "cannot carry (only visible ASCII is allowed)",
            )
        body = {
            "model": model,
            "messages": [
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": f"Rubric: {rubric}\n\nAnswer: {answer}"},
            ],
            "temperature": 0,
            "response_format": {"type": "json_object"},
        }
        # ASCII escapes keep any text (a lone surrogate too) sendable.
        payload = json.dumps(body, ensure_ascii=True).encode("ascii")
        headers = {
            "Authorization": f"Bearer {key}",
            "Content-Type": "application/json",
            "Accept": "application/json",
        }
        attempts = self.config.retries + 1
        problem = "no attempt made"
        with self._lock:
            self.calls += 1
        for attempt in range(attempts):
            wait: float | None = None
            try:
                response = self._http().post(self.config.chat_url, content=payload, headers=headers)
            except httpx.TimeoutException as exc:
                problem = f"timed out after {_number(self.config.timeout)} s ({type(exc).__name__})"
            except httpx.LocalProtocolError as exc:  # our request is malformed: no retry
                return _Failed(
                    "error", f"judge: could not send the request: {self._redact(str(exc))}"
                )
            except httpx.TransportError as exc:
                problem = (
                    f"could not reach {self._redact(self.config.chat_url)}: "
                    f"{type(exc).__name__}: {self._redact(str(exc))}"
                )
            else:
                status = response.status_code
                if status == 429 or status >= 500:
                    problem = f"HTTP {status}: {self._body(response)}"
                    wait = _retry_after(
                        response.headers.get("retry-after"), self.config.retry_after_cap
                    )
                elif not 200 <= status < 300:
                    return _Failed(
                        "error",
                        f"judge: the endpoint answered HTTP {status}: {self._body(response)}",
                    )
                else:
                    return self._parse(response)
            if attempt + 1 < attempts:
                delay = wait if wait is not None else self._backoff(attempt)
                log.info(
                    "judge call attempt %d/%d failed (%s); retrying in %.2f s",
                    attempt + 1,
                    attempts,
                    problem,
                    delay,
                )
                self._sleep(delay)
        return _Failed(
            "error",
            f"judge: no verdict after {attempts} attempt{'s' if attempts > 1 else ''}: {problem}",
        )

    def _backoff(self, attempt: int) -> float:
        # Exponential, with jitter so concurrent callers do not retry in lockstep.
        delay = min(self.config.max_backoff, self.config.backoff * 2.0**attempt)
        return delay * random.uniform(0.5, 1.0)

    def _body(self, response: httpx.Response) -> str:
        try:
            text = response.text
        except Exception:  # an undecodable body
            text = repr(response.content[:_SHOWN])
        return _quoted(self._redact(text)) if text.strip() else "(empty body)"

    def _parse(self, response: httpx.Response) -> _Resolved:
        try:
            data = response.json()
        except ValueError:
            return _Failed(
                "error", f"judge: the endpoint's reply is not JSON: {self._body(response)}"
            )
        content = _message_content(data)
        if content is None:
            return _Failed(
                "error",
                f"judge: the endpoint's reply has no "
                f"choices[0].message.content: {self._body(response)}",
            )
        try:
            return parse_reply(content)
        except _BadReply as why:
            return _Failed("error", f"judge: bad verdict, {self._redact(str(why))}")

    def _redact(self, text: str) -> str:
        key = self.config.api_key
        return text.replace(key, _REDACTED) if key else text

    # -- lifetime

    def forget(self) -> None:
        """Drop what this judge remembers (errors included); the cache folder stays."""
        with self._lock:
            self._memo = {k: f for k, f in self._memo.items() if not f.done()}

    def close(self) -> None:
        """Close the HTTP client (if this judge made it)."""
        if not self._owns_client:
            return
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    def __enter__(self) -> LLMJudge:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


def plan(
    requests: Iterable[JudgeRequest | tuple[str, str, str | None]],
    config: JudgeConfig | None = None,
) -> JudgePlan:
    """Count the distinct judge calls of `requests` and those already cached.

    >>> plan([("sunny", "mentions weather", None)] * 3, JudgeConfig(cache_dir="/nonexistent"))
    JudgePlan(total=1, cached=0)
    """
    return LLMJudge(config).plan(requests)


class TwoPhaseJudge:
    """The judge a suite is compiled with: it can record a case's judge questions instead
    of answering them, so the runner plans them, fetches the misses concurrently
    (`prefetch`), then evaluates the case again with every answer at hand, in source
    order.

    >>> judge = TwoPhaseJudge(RecordingJudge())
    >>> with judge.recording() as asked:
    ...     _ = judge("sunny", "mentions weather", model=None, threshold=None)
    >>> asked
    [JudgeRequest(text='sunny', rubric='mentions weather', model=None)]
    """

    def __init__(self, inner: LLMJudge | RecordingJudge) -> None:
        self.inner = inner
        self._asked: list[JudgeRequest] | None = None

    def __call__(
        self, text: str, rubric: str, *, model: str | None, threshold: float | None
    ) -> JudgeOutcome:
        if self._asked is not None:
            self._asked.append(JudgeRequest(text, rubric, model))
            return JudgeOutcome("skip", "judge: planned, not run")
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
        return self.inner.prefetch(requests) if isinstance(self.inner, LLMJudge) else 0

    def plan(self, requests: Iterable[JudgeRequest]) -> JudgePlan:
        if isinstance(self.inner, LLMJudge):
            return self.inner.plan(requests)
        distinct = {(r.text, r.rubric, r.model) for r in requests}
        return JudgePlan(len(distinct), 0)


def judge_from_options(mode: str | None = None, cache_dir: str | None = None) -> TwoPhaseJudge:
    """The judge the CLI builds from `--judge` and `--judge-cache` and the environment
    (a module-level function, so worker processes can build their own)."""
    return TwoPhaseJudge(LLMJudge(JudgeConfig.from_env(mode=mode, cache_dir=cache_dir)))
