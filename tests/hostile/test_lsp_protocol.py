"""The language server survives its protocol: the real `evaldsl lsp` process, driven over
its stdin and stdout byte by byte (malformed framing cannot go through an LSP client)."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from evaldsl.language.limits import MAX_LSP_FILE_BYTES
from tests.clitools import ROOT

TIMEOUT = 30.0  # generous: the machine may be busy; a hang fails long before a test run ends


class RawClient:
    """A language server process and the messages it writes, read on a thread."""

    def __init__(self, cwd: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "evaldsl.tools.cli", "lsp"],
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        self.messages: queue.Queue[dict[str, Any] | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        out = self.process.stdout
        assert out is not None
        while True:
            size = None
            while True:
                line = out.readline()
                if not line:
                    self.messages.put(None)
                    return
                if line.startswith(b"Content-Length:"):
                    size = int(line.split(b":")[1])
                if line == b"\r\n":
                    break
            assert size is not None
            self.messages.put(json.loads(out.read(size)))

    def send_raw(self, data: bytes) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        stdin.write(data)
        stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self.send_raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def next(self, timeout: float = TIMEOUT) -> dict[str, Any]:
        """The next message the server wrote (notifications included)."""
        found = self.messages.get(timeout=timeout)
        assert found is not None, "the server closed its output"
        return found

    def answer(self, msg_id: Any) -> dict[str, Any]:
        """The response with this id (skipping notifications and other responses)."""
        deadline = time.monotonic() + TIMEOUT
        while True:
            found = self.next(max(0.1, deadline - time.monotonic()))
            if "method" not in found and found.get("id") == msg_id:
                return found

    def initialize(self) -> None:
        self.send({"id": 1, "method": "initialize", "params": {"capabilities": {}}})
        assert "result" in self.answer(1)
        self.send({"method": "initialized", "params": {}})

    def close(self) -> tuple[int, str]:
        """Close stdin; the exit code and what the server wrote on stderr."""
        stdin = self.process.stdin
        assert stdin is not None
        if not stdin.closed:
            stdin.close()
        code = self.process.wait(TIMEOUT)
        assert self.process.stderr is not None
        return code, self.process.stderr.read().decode()


@pytest.fixture
def client(tmp_path: Path) -> Any:
    raw = RawClient(tmp_path)
    raw.initialize()
    yield raw
    if raw.process.poll() is None:
        raw.process.kill()
        raw.process.wait()


SHUTDOWN = {"id": 99, "method": "shutdown"}


def hover_params(uri: str, line: int = 0, character: int = 0) -> dict[str, Any]:
    return {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}


def open_document(client: RawClient, path: Path, text: str) -> str:
    uri = path.as_uri()
    item = {"uri": uri, "languageId": "evaldsl", "version": 1, "text": text}
    client.send({"method": "textDocument/didOpen", "params": {"textDocument": item}})
    return uri


@pytest.mark.parametrize("length", [b"-5", b"abc", b"1e3", b""])
def test_a_bad_content_length_drops_that_message_only(client: RawClient, length: bytes) -> None:
    client.send_raw(b"Content-Length: " + length + b"\r\n\r\n{}")
    client.send(SHUTDOWN)
    assert client.answer(99)["result"] is None
    code, err = client.close()
    assert code == 0
    assert "dropped a message" in err and "Traceback" not in err


def test_a_huge_content_length_then_closed_exits_cleanly(client: RawClient) -> None:
    client.send_raw(b'Content-Length: 99999999999\r\n\r\n{"jsonrpc": "2.0"')
    code, err = client.close()
    assert code == 1
    assert "dropped a message of 99,999,999,999 bytes" in err
    assert "MemoryError" not in err and "Traceback" not in err


def test_an_endless_header_line_is_dropped(client: RawClient) -> None:
    client.send_raw(b"X-Junk: " + b"a" * 5_000_000 + b"\r\n\r\n")
    client.send(SHUTDOWN)
    assert client.answer(99)["result"] is None
    code, err = client.close()
    assert code == 0 and "header line longer than" in err


@pytest.mark.parametrize(
    ("body", "code"),
    [(b"{oops", -32700), (b"\xff\xfe", -32700), (b"[" * 100_000, -32700),
     (b"[1, 2]", -32600), (b'"text"', -32600), (b'{"id": 5, "method": "x"}', -32600)],
)  # fmt: skip
def test_a_body_that_is_not_a_message_gets_an_error(
    client: RawClient, body: bytes, code: int
) -> None:
    client.send_raw(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    reply = client.next()
    assert reply["error"]["code"] == code
    assert "id" in reply  # null for an unreadable message, as JSON-RPC says
    client.send(SHUTDOWN)
    assert client.answer(99)["result"] is None


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("textDocument/hover", {"textDocument": 5, "position": "x"}),
        ("textDocument/completion", {"textDocument": {"uri": 7}, "position": {"line": "a"}}),
        ("textDocument/formatting", {"textDocument": None}),
        ("textDocument/definition", []),
    ],
)
def test_wrong_parameter_types_get_an_error_response(
    client: RawClient, method: str, params: Any
) -> None:
    client.send({"id": 7, "method": method, "params": params})
    reply = client.answer(7)
    assert reply["error"]["code"] == -32602
    client.send(SHUTDOWN)
    assert client.answer(99)["result"] is None
    assert "Traceback" not in client.close()[1]


def test_requests_after_shutdown_get_an_error(client: RawClient, tmp_path: Path) -> None:
    client.send(SHUTDOWN)
    assert client.answer(99)["result"] is None
    client.send({"id": 3, "method": "textDocument/hover", "params": hover_params("file:///x")})
    reply = client.answer(3)
    assert reply["error"]["code"] == -32600
    client.send({"method": "exit"})
    assert client.process.wait(TIMEOUT) == 0


def test_exit_without_shutdown_exits_1(client: RawClient) -> None:
    client.send({"method": "exit"})
    assert client.process.wait(TIMEOUT) == 1


def test_exit_after_shutdown_exits_0_even_with_stdin_left_open(client: RawClient) -> None:
    client.send(SHUTDOWN)
    client.answer(99)
    client.send({"method": "exit"})  # stdin stays open: the reader thread must not hold on
    assert client.process.wait(TIMEOUT) == 0


def test_special_files_never_block_hover_completion_or_definition(
    client: RawClient, tmp_path: Path
) -> None:
    os.mkfifo(tmp_path / "pipe.jsonl")
    text = (
        'case "a"\n  cassette "pipe.jsonl"\n  tool search called\n'
        'case "b"\n  cassette "/dev/zero"\n  tool \n'
    )
    uri = open_document(client, tmp_path / "s.eval", text)
    client.send({"id": 10, "method": "textDocument/hover", "params": hover_params(uri, 1, 4)})
    hover = client.answer(10)["result"]["contents"]["value"]
    assert "named pipe" in hover
    client.send({"id": 11, "method": "textDocument/hover", "params": hover_params(uri, 4, 4)})
    assert "character device" in client.answer(11)["result"]["contents"]["value"]
    client.send({"id": 12, "method": "textDocument/completion", "params": hover_params(uri, 5, 7)})
    assert "result" in client.answer(12)
    client.send({"id": 13, "method": "textDocument/definition", "params": hover_params(uri, 1, 14)})
    assert "result" in client.answer(13)
    client.send(SHUTDOWN)
    client.answer(99)


def test_a_slow_hover_does_not_hold_other_requests(client: RawClient, tmp_path: Path) -> None:
    """Hover summarises a large trace on a worker thread: a request sent after it is
    answered first, because the event loop is free."""
    cassette = tmp_path / "big.jsonl"
    event = json.dumps({"type": "tool.call", "name": "search", "arguments": {"q": "x" * 40}})
    with cassette.open("w", encoding="utf-8") as f:
        f.write('{"cassette": "traceplay", "version": 1}\n')
        # as many events as hover reads (a file over MAX_LSP_FILE_BYTES is named, not
        # read, and its hover is instant: the race would be a coin toss)
        lines = (MAX_LSP_FILE_BYTES - 100) // (len(event) + 1)
        f.write((event + "\n") * lines)
    assert cassette.stat().st_size <= MAX_LSP_FILE_BYTES
    uri = open_document(client, tmp_path / "s.eval", 'case "a"\n  cassette "big.jsonl"\n')
    other = open_document(client, tmp_path / "t.eval", "tool  x   called\n")
    options = {"tabSize": 2, "insertSpaces": True}
    params = {"textDocument": {"uri": other}, "options": options}
    # the formatter's modules load on first use: load them before the race, which is
    # about the event loop being free, not about how long a first import takes
    client.send({"id": 19, "method": "textDocument/formatting", "params": params})
    assert "result" in client.answer(19)
    client.send({"id": 20, "method": "textDocument/hover", "params": hover_params(uri, 1, 4)})
    client.send({"id": 21, "method": "textDocument/formatting", "params": params})
    order, answers = [], {}
    while len(order) < 2:
        message = client.next()
        if message.get("id") in (20, 21) and "method" not in message:
            order.append(message["id"])
            answers[message["id"]] = message
    assert "search called" in json.dumps(answers[20]["result"])  # the file was read
    assert order == [21, 20]


def test_half_a_character_in_a_yaml_buffer_is_a_diagnostic_at_its_place(
    client: RawClient, tmp_path: Path
) -> None:
    """An editor's buffer may hold a lone UTF-16 surrogate (JSON-RPC carries `\\ud800`):
    libyaml raised UnicodeEncodeError on it, the check failed with a traceback in the
    server's log, and the buffer's diagnostics were never published."""
    uri = open_document(client, tmp_path / "s.yaml", "suite: s\ncases: []\n# \ud800\n")
    deadline = time.monotonic() + TIMEOUT
    while True:
        message = client.next(max(0.1, deadline - time.monotonic()))
        published = message.get("method") == "textDocument/publishDiagnostics"
        if published and message["params"]["uri"] == uri:
            break
    (found,) = message["params"]["diagnostics"]
    assert found["range"]["start"] == {"line": 2, "character": 2}
    assert "a lone UTF-16 surrogate U+D800" in found["message"]
    client.send(SHUTDOWN)
    client.answer(99)
    client.send({"method": "exit"})
    code, err = client.close()
    assert code == 0 and "Traceback" not in err, err
