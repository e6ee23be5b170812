"""Framing: LSP messages read from a byte stream, whatever the stream holds.

Takes the client's byte stream (standard input) and a `Dispatcher` and gives each whole
message to it, decoded; what is not a message is answered or said, never a crash, a hang
or a buffer as large as a header claims:

- a header line is at most `MAX_HEADER_LINE` bytes, and the body at most
  `MAX_LSP_MESSAGE_BYTES` (a larger one is read in pieces and dropped, with an error);
- a `Content-Length` that is not a non-negative decimal integer (`-5`, `abc`) drops that
  message; the reader then skips to the next `Content-Length` header, even when it
  follows the unread body on the same line;
- a body that is not JSON is answered with a Parse error (-32700, id null), a JSON value
  that is not a JSON-RPC 2.0 object with an Invalid Request error (-32600);
- a stream that ends inside a message ends the session (the server then exits 1 unless
  the client asked it to shut down).

The reads block a worker thread, never the event loop.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import queue
import threading
from collections.abc import Callable
from typing import Any, BinaryIO, Protocol

from evaldsl.language.limits import MAX_LSP_MESSAGE_BYTES
from evaldsl.language.reading import size_text

log = logging.getLogger("evaldsl.lsp")

#: The longest header line read (`Content-Length: …`, `Content-Type: …`).
MAX_HEADER_LINE = 8192

#: How much of an oversized body is read at a time while it is dropped.
_CHUNK = 1 << 20

_MARKER = b"Content-Length:"

#: JSON-RPC error codes (the JSON-RPC 2.0 specification).
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
#: The LSP specification's code for a request before `initialize`.
SERVER_NOT_INITIALIZED = -32002


class Dispatcher(Protocol):
    """What the reader hands messages to (the server's protocol)."""

    def dispatch(self, data: dict[str, Any]) -> None:
        """Handle one decoded JSON-RPC message."""

    def send_error(self, msg_id: Any, code: int, message: str) -> None:
        """Answer a message (or, with id None, the stream) with a JSON-RPC error."""


class StreamReader:
    """Blocking reads of the client's stream, done by one daemon thread: a read that never
    returns (a client that keeps the stream open after `exit`) never holds the process."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self._calls: queue.SimpleQueue[_Call | None] = queue.SimpleQueue()
        threading.Thread(target=self._work, name="evaldsl-lsp-stdin", daemon=True).start()

    def _work(self) -> None:
        while True:
            item = self._calls.get()
            if item is None:
                return
            call, loop, future = item
            try:
                outcome: tuple[Callable[[Any], None], Any] = (future.set_result, call())
            except BaseException as err:  # handed to the awaiting coroutine
                outcome = (future.set_exception, err)
            try:
                loop.call_soon_threadsafe(_settle, future, *outcome)
            except RuntimeError:  # the loop has closed: nobody waits any more
                return

    async def _run(self, call: Callable[[], bytes]) -> bytes:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[bytes] = loop.create_future()
        self._calls.put((call, loop, future))
        return await future

    async def line(self, limit: int) -> bytes:
        """One line of at most `limit` bytes (a longer one comes in pieces); b"" at the end."""
        return await self._run(functools.partial(self._stream.readline, limit))

    async def _read(self, size: int) -> bytes:
        return await self._run(functools.partial(self._stream.read, min(size, _CHUNK)))

    async def exactly(self, size: int) -> bytes:
        """`size` bytes, or fewer when the stream ends first."""
        parts: list[bytes] = []
        left = size
        while left:
            part = await self._read(left)
            if not part:
                break
            parts.append(part)
            left -= len(part)
        return b"".join(parts)

    async def skip(self, size: int) -> int:
        """Read and drop `size` bytes, a piece at a time; how many there were."""
        dropped = 0
        while dropped < size:
            part = await self._read(size - dropped)
            if not part:
                break
            dropped += len(part)
        return dropped

    def close(self) -> None:
        self._calls.put(None)


_Call = tuple[Callable[[], bytes], asyncio.AbstractEventLoop, "asyncio.Future[bytes]"]


def _settle(future: asyncio.Future[bytes], setter: Callable[[Any], None], value: Any) -> None:
    if not future.done():
        setter(value)


def content_length(value: bytes) -> int | None:
    """The body size a `Content-Length` value gives, or None when it is not a size.

    >>> content_length(b" 52"), content_length(b"-5"), content_length(b"abc")
    (52, None, None)
    """
    text = value.strip()
    if not text or len(text) > 15 or not text.isdigit():
        return None
    return int(text)


async def _headers(reader: StreamReader) -> tuple[int | None, str | None] | None:
    """Read one header block: (its body size, or None; what was wrong with it, if anything).
    None at the end of the stream."""
    size: int | None = None
    problem: str | None = None
    seen = False
    while True:
        line = await reader.line(MAX_HEADER_LINE + 1)
        if not line:
            return None
        if len(line) > MAX_HEADER_LINE and not line.endswith(b"\n"):
            problem = f"a header line longer than {MAX_HEADER_LINE} bytes"
            while line and not line.endswith(b"\n"):  # drop the rest of it
                line = await reader.line(MAX_HEADER_LINE + 1)
            seen = True
            continue
        text = line.rstrip(b"\r\n")
        if not text:
            if seen:
                return size, problem
            continue  # a blank line between messages
        at = text.rfind(_MARKER)
        if at > 0:
            # a body the reader could not place runs on into the next message's header
            log.warning("skipped %d bytes that were not part of a message", at)
            text = text[at:]
        name, colon, value = text.partition(b":")
        seen = True
        if not colon:
            problem = f"a header line that is not `Name: value` ({text[:40]!r})"
        elif name.strip().lower() == b"content-length":
            size = content_length(value)
            if size is None:
                problem = f"a Content-Length that is not a size ({value.strip()[:40]!r})"


async def read_messages(
    stream: BinaryIO, dispatcher: Dispatcher, stop: Callable[[], bool] = lambda: False
) -> None:
    """Read messages from `stream` and dispatch them until the stream ends (or `stop()`)."""
    reader = StreamReader(stream)
    try:
        while not stop():
            block = await _headers(reader)
            if block is None:
                return
            size, problem = block
            if size is None:
                log.error("dropped a message: %s", problem or "no Content-Length header")
                continue
            if size > MAX_LSP_MESSAGE_BYTES:
                log.error(
                    "dropped a message of %s: the most the server reads is %s",
                    size_text(size),
                    size_text(MAX_LSP_MESSAGE_BYTES),
                )
                if await reader.skip(size) < size:
                    log.error("the stream ended inside a message")
                    return
                continue
            body = await reader.exactly(size)
            if len(body) < size:
                log.error("the stream ended inside a message (%d of %d bytes)", len(body), size)
                return
            _deliver(body, dispatcher)
    finally:
        reader.close()


def _deliver(body: bytes, dispatcher: Dispatcher) -> None:
    try:
        data = json.loads(body)
    except (ValueError, RecursionError) as err:  # UnicodeDecodeError is a ValueError
        dispatcher.send_error(None, PARSE_ERROR, f"Parse error: the message is not JSON ({err})")
        return
    if not isinstance(data, dict) or data.get("jsonrpc") != "2.0":
        msg_id = data.get("id") if isinstance(data, dict) else None
        if not isinstance(msg_id, int | str) or isinstance(msg_id, bool):
            msg_id = None
        dispatcher.send_error(
            msg_id, INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message object"
        )
        return
    dispatcher.dispatch(data)
