"""The judge's client: cache first, then an OpenAI-compatible chat endpoint.

Takes judge questions and gives outcomes (`LLMJudge`, callable as the `Judge` protocol),
with a memo so one run asks each question once, bounded retries with backoff for
timeouts, 5xx and 429, concurrent prefetching, and the API key redacted from everything
it says (in every form a reply can echo it in, before any text is cut for a message).

A reply is read as a stream and bounded: more than `MAX_JUDGE_REPLY_BYTES` is an error
(an endless body never fills memory), and a reply still arriving `timeout` seconds after
the request was sent is a timeout (a server that drips a byte at a time never holds a
run: httpx's own timeouts bound each read, not the whole reply).
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
import os
import random
import re
import socket
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:  # imported when the endpoint is first called: `check` never needs it
    from concurrent.futures import Future, ThreadPoolExecutor

    import httpx

from evaldsl.judge.cache import cache_key, cached_verdict, judge_log, read_cache, write_cache
from evaldsl.judge.config import NO_KEY_MESSAGE, OFF_MESSAGE, JudgeConfig
from evaldsl.judge.protocol import JudgeOutcome, JudgePlan, JudgeRequest
from evaldsl.judge.reply import (
    BadReply,
    JudgeReply,
    number_text,
    parse_reply,
    quoted,
    shorten,
    verdict,
)
from evaldsl.judge.secrets import Redactor
from evaldsl.language.limits import MAX_JUDGE_REPLY_BYTES
from evaldsl.language.reading import size_text
from evaldsl.language.verdicts import Status

SYSTEM_PROMPT = (
    "You are a strict evaluator. Decide whether the answer meets the rubric. "
    'Reply with ONLY a JSON object, no prose and no code fences: {"passed": true or false, '
    '"score": a number from 0 to 1, "reason": "one short sentence"}. '
    "score measures how well the answer meets the rubric (1 = fully, 0 = not at all); "
    "passed is true only when the answer fully meets the rubric."
)


@attrs.frozen
class _Failed:
    """No verdict: why (a skip or an error)."""

    status: Status
    message: str


_Resolved = JudgeReply | _Failed

#: A question abandoned by `LLMJudge.cancel` on its way (never cached, nor remembered).
_STOPPED = _Failed("error", "judge: no verdict: the run was stopped before the judge answered")


class _Overlong(Exception):
    """The reply is larger than `MAX_JUDGE_REPLY_BYTES` (not retried: it would be again)."""


class _Late(Exception):
    """The reply was still arriving at the call's deadline (retried, as a timeout)."""


@attrs.frozen
class _Reply:
    """A reply read whole: its status, and its body (at most `MAX_JUDGE_REPLY_BYTES`)."""

    status: int
    body: bytes
    headers: httpx.Headers


def read_bounded(chunks: Iterator[bytes], deadline: float, limit: int) -> bytes:
    """The bytes of `chunks`, or `_Overlong` past `limit` bytes, or `_Late` past
    `deadline` (a `time.monotonic()` time)."""
    parts: list[bytes] = []
    total = 0
    for chunk in chunks:
        total += len(chunk)
        if total > limit:
            raise _Overlong()
        parts.append(chunk)
        if time.monotonic() > deadline:
            raise _Late()
    return b"".join(parts)


def retry_after(value: str | None, cap: float) -> float | None:
    """Seconds to wait from a `Retry-After` header (seconds or an HTTP date), capped."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            from email.utils import parsedate_to_datetime  # rare: a Retry-After date

            when = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - datetime.now(UTC)).total_seconds()
    if not math.isfinite(seconds):
        return None
    return min(max(seconds, 0.0), cap)


def message_content(data: Any) -> str | None:
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


#: What the operating system's words for a failed connection mean, in the user's words
#: (matched in lower case: Linux, macOS and Windows word them differently).
_CONNECT_REASONS = (
    (("refused",), "connection refused (is the server running?)"),
    (
        ("name or service not known", "nodename nor servname", "getaddrinfo", "name resolution"),
        "its host name could not be resolved (is the URL right?)",
    ),
    (("certificate", "ssl", "tls"), "the TLS handshake failed (is its certificate valid?)"),
    (("unreachable",), "the network cannot reach it"),
    (("reset",), "the connection was reset"),
)


def transport_problem(exc: Exception, url: str) -> str:
    """What went wrong on the wire, in the user's words (httpx's are
    `ConnectError: [Errno 111] Connection refused` and the like), naming `url`.

    >>> import httpx
    >>> transport_problem(httpx.ConnectError("[Errno 111] Connection refused"), "http://h/v1")
    'could not connect to http://h/v1: connection refused (is the server running?)'
    """
    import httpx  # (only a judge that called its endpoint gets here)

    said = str(exc)
    words = re.sub(r"^\[Errno -?\d+\]\s*", "", said).strip().rstrip(".") or "no reason given"
    lowered = said.lower()
    if isinstance(exc, httpx.ConnectError):
        reason = next((r for keys, r in _CONNECT_REASONS if any(k in lowered for k in keys)), None)
        return f"could not connect to {url}: {reason or words[:1].lower() + words[1:]}"
    if isinstance(exc, httpx.RemoteProtocolError) and "without sending" in lowered:
        return f"the server at {url} closed the connection without answering"
    if isinstance(exc, httpx.RemoteProtocolError):
        return f"the server at {url} answered with something that is not HTTP ({words})"
    if isinstance(exc, httpx.WriteError):
        return f"the connection to {url} broke while sending the question"
    if isinstance(exc, httpx.ReadError):
        return f"the connection to {url} broke while reading the answer"
    if isinstance(exc, httpx.ProxyError):
        return f"the proxy in the way to {url} refused the connection ({words})"
    return f"could not talk to {url} ({words})"


class LLMJudge:
    """The judge of `X judged "rubric"`: cache first, then an OpenAI-compatible endpoint.

    Callable as the `Judge` protocol (`protocol.py`); safe to call from several threads (one
    call per distinct question, the others wait for it). Results, errors included, are
    remembered until `forget()`, so one run asks each question at most once. `calls` and
    `hits` count the questions sent to the endpoint and those answered by the cache folder.
    `sleep` is what waits between retries (tests inject their own; by default a wait that
    `cancel` ends); `client` an httpx client to use instead of one of its own.

    >>> LLMJudge(JudgeConfig(mode="off"))("text", "rubric", model=None, threshold=None).message
    'judge assertions are off (--judge off)'
    """

    def __init__(
        self,
        config: JudgeConfig | None = None,
        *,
        sleep: Callable[[float], object] | None = None,
        client: httpx.Client | None = None,
    ) -> None:
        self.config = config if config is not None else JudgeConfig.from_env()
        self.calls = 0  # questions sent to the endpoint (retries not counted)
        self.hits = 0  # questions answered by the cache folder
        # set by `cancel` for the calls on their way then (a new one for those after)
        self._stop = threading.Event()
        self._sleep = sleep
        # the sockets this judge's calls opened: `cancel` shuts them to end the calls
        # waiting on them (closing the client alone does not wake a blocked read)
        self._sockets: weakref.WeakSet[socket.socket] = weakref.WeakSet()
        self._client = client
        self._owns_client = client is None
        self._lock = threading.Lock()
        self._memo: dict[str, Future[_Resolved]] = {}
        self._pool: ThreadPoolExecutor | None = None  # `submit`'s threads, made at its first
        self._pid = os.getpid()  # the process whose threads and connections these are
        self._redact = Redactor(self.config.api_key)

    def __repr__(self) -> str:
        return f"LLMJudge({self.config!r})"

    # -- the Judge protocol

    def __call__(
        self, text: str, rubric: str, *, model: str | None, threshold: float | None
    ) -> JudgeOutcome:
        """Judge one assertion; see the module docstring for the modes and the cache."""
        if self.config.mode == "off":
            return JudgeOutcome("skip", OFF_MESSAGE)
        request = JudgeRequest(text, rubric, model)
        resolved = self._resolve(request)
        if self._asks_again(resolved, threshold):
            # a cached verdict without a score (traceplay's) answers no threshold question
            resolved = self._resolve(request, fresh=True)
        if isinstance(resolved, _Failed):
            return JudgeOutcome(resolved.status, self._redact(resolved.message))
        outcome = verdict(resolved, threshold)
        asked = self.config.model_for(model)
        if resolved.model is not None and not resolved.model.startswith(asked):
            # (a dated name, `gpt-4o-mini-2024-07-18`, is the model asked)
            outcome = attrs.evolve(
                outcome, message=f"{outcome.message} (answered by {resolved.model}, not {asked})"
            )
        return attrs.evolve(outcome, message=self._redact(outcome.message))

    # -- cache addressing

    def key(self, request: JudgeRequest) -> str:
        """The cache key of a request, with this judge's default model and base URL."""
        model = self.config.model_for(request.model)
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
        whatever order the report needs. Returns how many endpoint calls were made (by
        this judge meanwhile: questions `submit`ted earlier and still on their way count
        too).
        """
        before = self.calls
        answers = self.submit(requests)
        if answers:
            from concurrent.futures import wait  # (imported by `submit` already)

            wait(answers)
        return self.calls - before

    def submit(
        self, requests: Iterable[JudgeRequest | tuple[str, str, str | None]]
    ) -> list[Future[Any]]:
        """Start resolving every distinct request this judge has not met yet on its own
        threads (at most `max_concurrency` questions on their way at once, across every
        `submit`), and return at once the futures of all of them, done or not: a runner
        goes on with other cases while they are answered. Nothing is submitted but in live
        mode with a key (otherwise there is nothing to fetch: an empty list). The futures
        never raise for a judge problem (an error is an outcome); one of a question that
        `cancel` took back raises `CancelledError`."""
        if not self.config.fetches_ahead:
            return []
        distinct: dict[str, JudgeRequest] = {}
        for r in requests:
            request = JudgeRequest(*r)
            distinct.setdefault(self.key(request), request)
        if not distinct:
            return []
        from concurrent.futures import Future, ThreadPoolExecutor  # when there are calls

        answers = []
        started = []
        with self._lock:
            self._own_process()
            for key, request in distinct.items():
                future = self._memo.get(key)
                if future is None:
                    future = self._memo[key] = Future()
                    started.append((key, request, future))
                answers.append(future)
            if started and self._pool is None:
                self._pool = ThreadPoolExecutor(
                    self.config.max_concurrency, thread_name_prefix="evaldsl-judge"
                )
            pool, stop = self._pool, self._stop
        for key, request, future in started:
            assert pool is not None
            task = pool.submit(self._settle, key, request, future, stop)
            task.add_done_callback(functools.partial(self._dropped, key, future))
        return answers

    def cancel(self) -> None:
        """Stop asking (a run stopped by Ctrl-C asks nothing more of the endpoint): take
        back the submitted questions no thread has started on, and abandon those on their
        way: their connections are shut, no further attempt starts, and their answer is an
        error. A question taken back or abandoned is forgotten, so a later call asks it
        again."""
        with self._lock:
            pool, self._pool = self._pool, None
            stop, self._stop = self._stop, threading.Event()
            sockets, self._sockets = list(self._sockets), weakref.WeakSet()
        if pool is not None:  # first: a thread set free below never takes the next one
            pool.shutdown(wait=False, cancel_futures=True)
        stop.set()
        for sock in sockets:
            with contextlib.suppress(OSError):  # (closed already)
                sock.shutdown(socket.SHUT_RDWR)

    def _own_process(self) -> None:
        """In a process forked from the one that made this judge's threads and HTTP
        client (a `-j` worker of a library that ran cases before), they are the other
        process's: the threads do not exist here, the connections are shared. This
        process makes its own, and forgets the questions that were on their way there
        (their answers would never come here). Called with the lock held."""
        if self._pid == os.getpid():
            return
        self._pid = os.getpid()
        self._pool = None
        if self._owns_client:
            self._client = None
        self._memo = {k: f for k, f in self._memo.items() if f.done()}

    def _dropped(self, key: str, future: Future[_Resolved], task: Future[None]) -> None:
        """A submitted question's task ended: one cancelled before it ran never settles
        its question, so its waiters are told and its memo entry goes."""
        if task.cancelled():
            with self._lock:
                if self._memo.get(key) is future:
                    del self._memo[key]
            future.cancel()

    # -- resolution: memo, cache, endpoint

    def _asks_again(self, resolved: _Resolved, threshold: float | None) -> bool:
        """Whether a cached verdict without a score, met by a threshold, goes to the judge
        again (live, with a key: its answer replaces the file)."""
        return (
            isinstance(resolved, JudgeReply)
            and resolved.file is not None
            and resolved.score is None
            and threshold is not None
            and self.config.fetches_ahead
        )

    def _resolve(self, request: JudgeRequest, *, fresh: bool = False) -> _Resolved:
        """The memo's answer, or this thread's; `fresh`: never from the cache file (a
        memo entry of its own)."""
        key = self.key(request) + (":fresh" if fresh else "")
        with self._lock:
            self._own_process()
            future = self._memo.get(key)
            owner = future is None
            if future is None:
                from concurrent.futures import Future  # a run's first judge question

                future = self._memo[key] = Future()
            stop = self._stop
        if owner:
            self._settle(key, request, future, stop, fresh=fresh)
        return future.result()

    def _settle(
        self,
        key: str,
        request: JudgeRequest,
        future: Future[_Resolved],
        stop: threading.Event,
        *,
        fresh: bool = False,
    ) -> None:
        """Resolve `request` into `future`, its memo entry `key` (this thread owns it);
        `stop` is set when `cancel` abandons the questions asked before it."""
        if not future.set_running_or_notify_cancel():
            return  # (taken back by `cancel`)
        try:
            result = self._fetch(request, stop, fresh=fresh)
        except BaseException as exc:  # a bug, not a verdict: let a later call retry
            with self._lock:
                self._memo.pop(key, None)
            future.set_exception(exc)
            raise
        if result is _STOPPED:  # abandoned by `cancel`: a later call asks again
            with self._lock:
                if self._memo.get(key) is future:
                    del self._memo[key]
        future.set_result(result)

    def _fetch(
        self, request: JudgeRequest, stop: threading.Event, *, fresh: bool = False
    ) -> _Resolved:
        path = self.cache_path(request)
        cached = None if fresh else cached_verdict(path)
        if isinstance(cached, JudgeReply):
            with self._lock:
                self.hits += 1
            judge_log().debug("judge cache hit %s", path)
            return cached
        if self.config.mode == "frozen" and cached is not None:
            return _Failed(
                "error",
                # (why last: a console cuts a long message in its middle)
                f"judge: the cache file {path} was refused and --judge frozen forbids "
                f"calling the judge (fix or delete the file): {cached}",
            )
        if self.config.mode == "frozen":
            return _Failed(
                "error",
                f"judge: no cached verdict for this judge assertion (looked for {path}) "
                "and --judge frozen forbids calling the judge",
            )
        if self.config.api_key is None:
            return _Failed("skip", NO_KEY_MESSAGE)
        model = self.config.model_for(request.model)
        try:
            result = self._call(request.text, request.rubric, model, stop)
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
            } | ({"answered_by": result.model} if result.model is not None else {})
            try:
                write_cache(path, record)
            except OSError as why:
                judge_log().warning("could not write judge cache file %s: %s", path, why)
        return result

    # -- the endpoint

    def _http(self) -> httpx.Client:
        import httpx  # here, not at the top: only a live judge call pays for importing it

        with self._lock:
            self._own_process()
            if self._client is None:
                n = self.config.max_concurrency
                self._client = httpx.Client(
                    timeout=httpx.Timeout(self.config.timeout),
                    limits=httpx.Limits(max_connections=n, max_keepalive_connections=n),
                    follow_redirects=False,  # a redirect would resend the key elsewhere
                )
            return self._client

    def _call(self, answer: str, rubric: str, model: str, stop: threading.Event) -> _Resolved:
        key = self.config.api_key
        assert key is not None  # (visible ASCII: `JudgeConfig` checked it)
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
        import httpx  # see `_http`

        for attempt in range(attempts):
            wait: float | None = None
            if stop.is_set():
                return _STOPPED
            try:
                response = self._post(payload, headers)
            except (httpx.TimeoutException, _Late) as exc:
                seconds = number_text(self.config.timeout)
                problem = (
                    f"could not connect to {self._redact(self.config.base_url)} within {seconds} s"
                    if isinstance(exc, httpx.ConnectTimeout)
                    else f"no answer within {seconds} s"
                    if isinstance(exc, httpx.TimeoutException)
                    else f"the reply was still arriving after {seconds} s"
                )
            except _Overlong:
                return _Failed(
                    "error",
                    f"judge: the endpoint's reply is larger than "
                    f"{size_text(MAX_JUDGE_REPLY_BYTES)}, the most evaldsl reads of one",
                )
            except httpx.LocalProtocolError as exc:  # our request is malformed: no retry
                return _Failed(
                    "error", f"judge: could not send the request: {self._redact(str(exc))}"
                )
            except httpx.TransportError as exc:
                problem = transport_problem(exc, self._redact(self.config.base_url))
                problem = self._redact(problem)
            else:
                status = response.status
                if status == 429 or status >= 500:
                    problem = f"HTTP {status}: {self._body(response)}"
                    wait = retry_after(
                        response.headers.get("retry-after"), self.config.retry_after_cap
                    )
                elif not 200 <= status < 300:
                    return _Failed("error", self._refusal(response))
                else:
                    return self._parse(response)
            if stop.is_set():
                return _STOPPED
            if attempt + 1 < attempts:
                delay = wait if wait is not None else self._backoff(attempt)
                judge_log().info(
                    "judge call attempt %d/%d failed (%s); retrying in %.2f s",
                    attempt + 1,
                    attempts,
                    problem,
                    delay,
                )
                (self._sleep or stop.wait)(delay)
        return _Failed(
            "error",
            f"judge: no verdict after {attempts} attempt{'s' if attempts > 1 else ''}: {problem}",
        )

    def _backoff(self, attempt: int) -> float:
        # Exponential, with jitter so concurrent callers do not retry in lockstep.
        delay = min(self.config.max_backoff, self.config.backoff * 2.0**attempt)
        return delay * random.uniform(0.5, 1.0)

    def _post(self, payload: bytes, headers: dict[str, str]) -> _Reply:
        """One request, its reply read whole within the size limit and the deadline."""
        deadline = time.monotonic() + self.config.timeout
        with self._http().stream(
            "POST",
            self.config.chat_url,
            content=payload,
            headers=headers,
            extensions={"trace": self._opened},
        ) as response:
            declared = response.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > MAX_JUDGE_REPLY_BYTES:
                raise _Overlong()
            body = read_bounded(response.iter_bytes(), deadline, MAX_JUDGE_REPLY_BYTES)
            return _Reply(response.status_code, body, response.headers)

    def _opened(self, event: str, info: dict[str, Any]) -> None:
        """httpx's trace of a request: note each socket a connection opens (or wraps in
        TLS), for `cancel`."""
        if event in ("connection.connect_tcp.complete", "connection.start_tls.complete"):
            sock = info["return_value"].get_extra_info("socket")
            if isinstance(sock, socket.socket):
                with self._lock:
                    self._sockets.add(sock)

    def _refusal(self, response: _Reply) -> str:
        """The error for an answer that is neither a verdict nor worth retrying; a
        redirect says where to (it is not followed: the key would go with it), which is
        the base URL to write (`http://` to `https://`, a missing `/v1`)."""
        status = response.status
        location = response.headers.get("location", "").strip()
        if 300 <= status < 400 and location:
            return (
                f"judge: the endpoint answered HTTP {status}, a redirect to "
                f"{quoted(self._redact(location))}, not followed (the key would go with it):"
                " if that is the endpoint, set EVALDSL_JUDGE_BASE_URL to it"
            )
        return f"judge: the endpoint answered HTTP {status}: {self._body(response)}"

    def _body(self, response: _Reply) -> str:
        # decoded (never raises), redacted whole, and only then cut for the message: a
        # key that straddles the cut is gone before the cut is made
        text = self._redact(response.body.decode("utf-8", errors="replace"))
        return quoted(text) if text.strip() else "(empty body)"

    def _parse(self, response: _Reply) -> _Resolved:
        try:
            data = json.loads(response.body)
        except (ValueError, RecursionError):
            return _Failed(
                "error", f"judge: the endpoint's reply is not JSON: {self._body(response)}"
            )
        content = message_content(data)
        if content is None:
            return _Failed(
                "error",
                f"judge: the endpoint's reply has no "
                f"choices[0].message.content: {self._body(response)}",
            )
        try:
            # redacted first: a reason or an error quoting the reply never holds the key
            reply = parse_reply(self._redact(content))
        except BadReply as why:
            return _Failed("error", f"judge: bad verdict, {why}")
        answered = data.get("model") if isinstance(data, dict) else None
        if isinstance(answered, str) and answered:
            reply = attrs.evolve(reply, model=shorten(self._redact(answered), 100))
        return reply

    # -- lifetime

    def forget(self) -> None:
        """Drop what this judge remembers (errors included); the cache folder stays."""
        with self._lock:
            self._memo = {k: f for k, f in self._memo.items() if not f.done()}

    def close(self) -> None:
        """Take back the questions not started (`cancel`), and close the HTTP client (if
        this judge made it)."""
        self.cancel()
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
