"""An editor's buffer is drafted once a version (`evaldsl/tools/lsp/analysis.py`): its check
and its features (hover, completion, definition) share the draft, and a draft that fails
fails the check (logged, as before) while the features see an empty suite. Checks run one
at a time, and those of versions typed over while they waited never run."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.uris import from_fs_path

from evaldsl.suites.build import check_text
from evaldsl.tools.lsp import analysis
from evaldsl.tools.lsp import server as server_module
from evaldsl.tools.lsp.analysis import Analysis
from evaldsl.tools.lsp.documents import diagnostics_by_file
from evaldsl.tools.lsp.server import EvalDslServer

TEXT = 'case "a"\n  cassette "missing.jsonl"\n  tool search called; answer contains\n'


def test_the_check_and_the_features_share_one_draft(tmp_path: Path) -> None:
    path = str(tmp_path / "s.eval")
    made: list[str] = []
    real = analysis.draft_from_text

    def counted(text: str, where: str) -> object:
        made.append(where)
        return real(text, where)

    buffer = Analysis(TEXT, path, "eval")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(analysis, "draft_from_text", counted)
        groups = diagnostics_by_file(TEXT, path, "eval", buffer.drafted)
        assert buffer.draft is buffer.drafted()
        buffer.spot(2, 10)  # a feature's question
    assert made == [path]
    (own,) = groups.values()
    assert own == check_text(TEXT, path)  # what a check of the text alone says
    assert {d.code for d in own} >= {"E101"}


def test_a_draft_that_fails_fails_the_check_and_leaves_the_features_an_empty_suite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(text: str, where: str) -> object:
        raise RuntimeError("a bug in drafting")

    monkeypatch.setattr(analysis, "draft_from_text", broken)
    buffer = Analysis(TEXT, str(tmp_path / "s.eval"), "eval")
    with pytest.raises(RuntimeError, match="a bug in drafting"):
        diagnostics_by_file(TEXT, buffer.path, "eval", buffer.drafted)
    assert buffer.draft.cases == ()
    with pytest.raises(RuntimeError):  # asked again: the same failure, not a second draft
        buffer.drafted()


def _initialized(uri: str, text: str, version: int = 1) -> EvalDslServer:
    """A server after a client's `initialize`, holding one open document."""
    server = EvalDslServer("test")
    params = types.InitializeParams(capabilities=types.ClientCapabilities(), process_id=None)
    for _ in server.protocol.lsp_initialize(params):  # what a client's `initialize` does
        pass
    server.workspace.put_text_document(types.TextDocumentItem(uri, "evaldsl", version, text))
    server.open.add(uri)
    return server


def test_a_buffer_its_check_found_a_syntax_error_in_is_not_parsed_to_be_formatted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    formatted: list[str] = []
    real = server_module.format_edits

    def counted(text: str, path: str) -> list[types.TextEdit] | None:
        formatted.append(text)
        return real(text, path)

    monkeypatch.setattr(server_module, "format_edits", counted)
    uri = from_fs_path(str(tmp_path / "s.eval"))
    assert uri is not None
    broken = 'case "a"\n  trace "t.jsonl"\n  answer contains\n'
    server = _initialized(uri, broken, version=3)
    syntax = types.Diagnostic(types.Range(types.Position(2, 2), types.Position(2, 17)), "x")
    syntax.code = "E101"
    server.own[uri] = (2, [syntax])  # an older version's check: not this text's
    assert server.formatted(uri) == [] and formatted == [broken]
    server.own[uri] = (3, [syntax])  # this version's: nothing to parse
    assert server.formatted(uri) == [] and formatted == [broken]
    other = types.Diagnostic(syntax.range, "y", code="E301")
    server.own[uri] = (3, [other])  # a problem that is no syntax error: formatted as ever
    server.formatted(uri)
    assert formatted == [broken, broken]


def test_checks_run_one_at_a_time_and_skip_the_versions_left_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a check cancelled by a newer version cannot stop its thread: each keystroke's check
    # ran beside the next ones, sharing the interpreter with the newest
    running: list[int] = []
    most: list[int] = [0]
    checked: list[str] = []

    def slow_check(
        text: str, path: str, kind: str, draft: object = None, *, suite: object = None
    ) -> dict[str, list[Any]]:
        running.append(1)
        most[0] = max(most[0], len(running))
        time.sleep(0.3)
        checked.append(text)
        running.pop()
        return {}

    monkeypatch.setattr(server_module, "diagnostics_by_file", slow_check)
    uri = from_fs_path(str(tmp_path / "s.eval"))
    assert uri is not None
    server = _initialized(uri, "v1")
    published: list[str] = []
    monkeypatch.setattr(server, "publish", published.append)

    async def type_fast() -> None:
        server.schedule(uri, 0)
        for version in range(2, 6):
            await asyncio.sleep(0.05)  # each check has started (or waits) before the next key
            server.workspace.remove_text_document(uri)
            item = types.TextDocumentItem(uri, "evaldsl", version, f"v{version}")
            server.workspace.put_text_document(item)
            server.schedule(uri, 0)
        while server.pending:
            await asyncio.gather(*server.pending.values(), return_exceptions=True)

    asyncio.run(type_fast())
    assert most[0] == 1
    # the first (already running) and the newest: ["v1", "v5"]; on a machine so loaded that
    # a check ends between two keys 50 ms apart, the one then pending too; never all five
    assert checked[-1] == "v5" and len(checked) < 5, checked
    assert published and set(published) == {uri}
