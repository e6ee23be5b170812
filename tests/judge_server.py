"""A real chat-completions server on 127.0.0.1 for the judge's tests.

`JudgeServer(script)` runs a `ThreadingHTTPServer` on an ephemeral port in a thread. Each
POST is recorded (path, headers, JSON body) and answered by the script: one `Reply` for
every request, a list of them used in order (the last one repeating), or a function of
the recorded request. A reply can be delayed; delays end early when the server stops, so
a test never waits on a sleeping handler. A reply can also be streamed (chunked transfer
encoding) from a generator, with a pause between chunks: an endless body, or one that
drips a byte at a time. The server counts requests in flight and keeps
the highest count seen, which is how the tests observe concurrency.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any


class _QuietServer(ThreadingHTTPServer):
    """A client that gives up on purpose (the timeout and drip-feed tests) resets its
    connection: that is the test working, not a traceback for the test log."""

    def handle_error(self, request: object, client_address: object) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)  # type: ignore[arg-type]


@dataclass
class Recorded:
    """One request as the server saw it."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any  # the decoded JSON, or the raw text when it was not JSON
    at: float


@dataclass
class Reply:
    """What the server answers: a status, a body (a dict is sent as JSON), headers, a delay;
    or `stream`, a function giving the chunks of a streamed body, sent `gap` seconds apart;
    or `hang_up`: the connection closed without a word."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    stream: Callable[[], Iterator[bytes]] | None = None
    gap: float = 0.0
    hang_up: bool = False


def completion(content: Any, *, model: str = "gpt-4o-mini") -> Reply:
    """A chat-completions reply whose message content is `content` (a dict is sent as JSON)."""
    text = content if isinstance(content, str) else json.dumps(content)
    return Reply(
        body={
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "created": 0,
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20},
        }
    )


def judged(passed: bool, score: float | None = None, reason: str = "looks right") -> Reply:
    """A well-formed verdict reply."""
    verdict: dict[str, Any] = {"passed": passed, "reason": reason}
    if score is not None:
        verdict["score"] = score
    return completion(verdict)


Script = Reply | Sequence[Reply] | Callable[[Recorded], Reply]


class JudgeServer:
    """A scriptable chat-completions endpoint; `url` is its base URL, ending in `/v1`."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.requests: list[Recorded] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd = _QuietServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.port = self._httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.running = False

    # -- lifetime

    def start(self) -> JudgeServer:
        self._thread.start()
        self.running = True
        return self

    def stop(self) -> None:
        if not self.running:
            return
        self.running = False
        self._stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> JudgeServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    # -- what was seen

    @property
    def count(self) -> int:
        with self._lock:
            return len(self.requests)

    def _reply_for(self, recorded: Recorded) -> Reply:
        script = self.script
        if isinstance(script, Reply):
            return script
        if callable(script):
            return script(recorded)
        with self._lock:
            index = len(self.requests) - 1
        return script[min(index, len(script) - 1)]

    # -- the handler

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            timeout = 5  # an idle keep-alive connection does not hold a thread for long

            def log_message(self, format: str, *args: Any) -> None:
                pass  # quiet tests

            def do_GET(self) -> None:
                self._send(Reply(404, {"error": {"message": "POST only"}}))

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length).decode("utf-8", "replace")
                try:
                    body: Any = json.loads(raw)
                except ValueError:
                    body = raw
                recorded = Recorded(
                    "POST", self.path, dict(self.headers.items()), body, time.monotonic()
                )
                with server._lock:
                    server.requests.append(recorded)
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    if self.path.rstrip("/") != "/v1/chat/completions":
                        reply = Reply(404, {"error": {"message": f"no route {self.path}"}})
                    else:
                        reply = server._reply_for(recorded)
                    if reply.delay:
                        server._stopping.wait(reply.delay)
                    self._send(reply)
                finally:
                    with server._lock:
                        server.in_flight -= 1

            def _stream(self, reply: Reply) -> None:
                assert reply.stream is not None
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    for chunk in reply.stream():
                        if server._stopping.is_set():
                            return
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                        self.wfile.flush()
                        if reply.gap:
                            server._stopping.wait(reply.gap)
                    self.wfile.write(b"0\r\n\r\n")
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up on the body: what the tests want
                self.close_connection = True

            def _send(self, reply: Reply) -> None:
                if reply.hang_up:
                    self.close_connection = True
                    return
                if reply.stream is not None:
                    self._stream(reply)
                    return
                body = reply.body
                if isinstance(body, dict | list):
                    data = json.dumps(body).encode()
                    kind = "application/json"
                else:
                    data = (body or "").encode() if not isinstance(body, bytes) else body
                    kind = "text/plain; charset=utf-8"
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", kind)
                    self.send_header("Content-Length", str(len(data)))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test): nothing to answer

        return Handler
