"""`evaldsl lsp` as editors start it, driven by raw JSON-RPC over its standard streams: the
command line editors' clients build (`--stdio`) and what the server answers before the
session begins."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

import pygls  # noqa: F401  (the lsp extra, which `make test` installs: missing is an error)
import pytest

ROOT = Path(__file__).resolve().parent.parent


def _send(stream: IO[bytes], message: dict[str, Any]) -> None:
    body = json.dumps({"jsonrpc": "2.0", **message}).encode()
    stream.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    stream.flush()


def _receive(stream: IO[bytes]) -> dict[str, Any]:
    length = 0
    while line := stream.readline().strip():
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    found: dict[str, Any] = json.loads(stream.read(length))
    return found


def _answer(stream: IO[bytes], msg_id: int) -> dict[str, Any]:
    """The response to request `msg_id` (notifications before it are passed over)."""
    while (message := _receive(stream)).get("id") != msg_id or "method" in message:
        pass
    return message


#: `evaldsl` as the console script runs it
CLI = [
    sys.executable,
    "-c",
    "import sys; from evaldsl.tools.cli import main; sys.exit(main(sys.argv[1:]))",
]


def _session(*argv: str, command: Sequence[str] = CLI) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [*command, *argv],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )


def _end(server: subprocess.Popen[bytes], next_id: int) -> tuple[int, bytes]:
    assert server.stdin is not None and server.stdout is not None
    _send(server.stdin, {"id": next_id, "method": "shutdown"})
    assert _answer(server.stdout, next_id)["result"] is None
    _send(server.stdin, {"method": "exit"})
    _, err = server.communicate(timeout=30)
    return server.returncode, err


def test_the_server_takes_stdio_as_vscode_languageclient_asks_for_it() -> None:
    # vscode-languageclient adds --stdio to a command server's arguments (TransportKind.stdio)
    server = _session("lsp", "--stdio")
    assert server.stdin is not None and server.stdout is not None
    _send(server.stdin, {"id": 1, "method": "initialize", "params": {"capabilities": {}}})
    assert "capabilities" in _answer(server.stdout, 1)["result"]
    assert _end(server, 2) == (0, b"")


def test_a_request_before_initialize_is_server_not_initialized() -> None:
    server = _session("lsp")
    assert server.stdin is not None and server.stdout is not None
    position = {"line": 0, "character": 0}
    hover = {"textDocument": {"uri": (ROOT / "x.eval").as_uri()}, "position": position}
    _send(server.stdin, {"method": "textDocument/didOpen", "params": {}})  # dropped
    _send(server.stdin, {"id": 1, "method": "textDocument/hover", "params": hover})
    error = _answer(server.stdout, 1)["error"]
    assert error == {"code": -32002, "message": "textDocument/hover before initialize"}
    _send(server.stdin, {"id": 2, "method": "initialize", "params": {"capabilities": {}}})
    assert "capabilities" in _answer(server.stdout, 2)["result"]
    _send(server.stdin, {"id": 3, "method": "textDocument/hover", "params": hover})
    assert _answer(server.stdout, 3)["result"] is None  # (no such file: nothing to show)
    assert _end(server, 4) == (0, b"")


@pytest.mark.parametrize(
    "argv", [[*CLI, "lsp"], [sys.executable, "-m", "evaldsl.tools.lsp"]], ids=["cli", "module"]
)
def test_exit_without_shutdown_ends_the_process_with_1(argv: list[str]) -> None:
    # (the LSP specification); `python -m evaldsl.tools.lsp` ended with 0 whatever came
    server = _session(command=argv)
    assert server.stdin is not None
    _send(server.stdin, {"method": "exit"})
    server.communicate(timeout=30)
    assert server.returncode == 1
