"""`evaldsl lsp` as editors start it, driven by raw JSON-RPC over its standard streams: the
command line editors' clients build (`--stdio`) and what the server answers before the
session begins."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
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


def _session(
    *argv: str, command: Sequence[str] = CLI, env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [*command, *argv],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=ROOT,
        env=None if env is None else {**os.environ, **env},
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


def _codes_published(stream: IO[bytes], uri: str, version: int) -> list[str]:
    """The codes of the diagnostics next published for `uri` at `version`."""
    while True:
        message = _receive(stream)
        params = message.get("params", {})
        if message.get("method") == "textDocument/publishDiagnostics" and (
            params["uri"],
            params.get("version"),
        ) == (uri, version):
            return [d["code"] for d in params["diagnostics"]]


def test_a_price_table_mended_while_the_server_runs_is_read_again(tmp_path: Path) -> None:
    # The server reads EVALDSL_PRICES when it starts; a table mended afterwards must not
    # leave W513 ("no model is priced") on every `cost` until the editor restarts it.
    table = tmp_path / "prices.json"
    table.write_text("{not json", "utf-8")
    cassette = ROOT / "examples" / "weather" / "cassettes" / "xiamen.jsonl"
    docs = {}
    for name in ("a.eval", "b.eval"):
        text = f'case "c"\n  cassette "{cassette}"\n  cost < $1\n'
        docs[name] = ((tmp_path / name).as_uri(), text)
        (tmp_path / name).write_text(text, "utf-8")
    server = _session("lsp", env={"EVALDSL_PRICES": str(table)})
    assert server.stdin is not None and server.stdout is not None
    watchdog = threading.Timer(60, server.kill)  # (a publication that never comes: EOF)
    watchdog.start()
    _send(server.stdin, {"id": 1, "method": "initialize", "params": {"capabilities": {}}})
    _answer(server.stdout, 1)
    _send(server.stdin, {"method": "initialized", "params": {}})
    for uri, text in docs.values():
        item = {"uri": uri, "languageId": "evaldsl", "version": 1, "text": text}
        _send(server.stdin, {"method": "textDocument/didOpen", "params": {"textDocument": item}})
        assert _codes_published(server.stdout, uri, 1) == ["W513"]

    table.write_text(json.dumps({"models": {"acme-1": {"input": 1, "output": 2}}}), "utf-8")
    uri, text = docs["a.eval"]
    change = {
        "textDocument": {"uri": uri, "version": 2},
        "contentChanges": [{"text": text + "  cost > $0\n"}],
    }
    _send(server.stdin, {"method": "textDocument/didChange", "params": change})
    assert _codes_published(server.stdout, uri, 2) == []
    # the other open document is checked again at once, not at its next edit
    assert _codes_published(server.stdout, docs["b.eval"][0], 1) == []

    table.write_text("[]", "utf-8")  # broken again: said again
    change["textDocument"]["version"] = 3  # type: ignore[index]
    _send(server.stdin, {"method": "textDocument/didChange", "params": change})
    assert _codes_published(server.stdout, uri, 3) == ["W513", "W513"]
    assert _end(server, 2) == (0, b"")
    watchdog.cancel()
