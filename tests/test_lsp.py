"""End-to-end tests of `evaldsl lsp`: the real server over stdio, driven by pytest-lsp.

One server process serves the whole module; each test opens its own documents (files in
a temporary folder next to copies of the fixtures they name). Diagnostics are compared
with what `evaldsl check --format json` prints for the same file saved to disk.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pygls", reason="the language server needs the evaldsl[lsp] extra")
pytest_lsp = pytest.importorskip("pytest_lsp", reason="needs pytest-lsp (dev extra)")

from lsprotocol import types  # noqa: E402
from pygls.protocol import default_converter  # noqa: E402
from pygls.uris import from_fs_path  # noqa: E402
from pytest_lsp import ClientServerConfig, LanguageClient  # noqa: E402
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features  # noqa: E402

from evaldsl.language.vocabulary import SUBJECTS  # noqa: E402
from evaldsl.predicates.registry import PREDICATES  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
MULTI_TOOL = ROOT / "tests/fixtures/traceplay/multi-tool/cassette.multi-tool.jsonl"
STATES = ROOT / "examples/research/states"

pytestmark = pytest.mark.asyncio(loop_scope="module")


# ---- the client -------------------------------------------------------------------------


def _client_factory() -> LanguageClient:
    """pytest-lsp's client, also keeping every publishDiagnostics it receives."""
    client = LanguageClient(converter_factory=default_converter)
    published: list[types.PublishDiagnosticsParams] = []
    client.published = published  # type: ignore[attr-defined]

    def publish(client: LanguageClient, params: types.PublishDiagnosticsParams) -> None:
        client.diagnostics[params.uri] = params.diagnostics
        published.append(params)

    features = dict(DEFAULT_CLIENT_FEATURES)
    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = publish
    register_lsp_features(client, features)
    return client


CAPABILITIES = types.ClientCapabilities(
    general=types.GeneralClientCapabilities(
        # offer UTF-8 first: the server must still answer in UTF-16
        position_encodings=[types.PositionEncodingKind.Utf8, types.PositionEncodingKind.Utf16]
    ),
    text_document=types.TextDocumentClientCapabilities(
        hover=types.HoverClientCapabilities(
            content_format=[types.MarkupKind.Markdown, types.MarkupKind.PlainText]
        ),
        completion=types.CompletionClientCapabilities(
            completion_item=types.ClientCompletionItemOptions(
                documentation_format=[types.MarkupKind.Markdown, types.MarkupKind.PlainText]
            )
        ),
        publish_diagnostics=types.PublishDiagnosticsClientCapabilities(version_support=True),
    ),
)


@pytest_lsp.fixture(  # type: ignore[untyped-decorator]
    scope="module",
    config=ClientServerConfig(
        server_command=[sys.executable, "-m", "evaldsl.tools.lsp"], client_factory=_client_factory
    ),
)
async def client(lsp_client: LanguageClient) -> AsyncIterator[None]:
    result = await lsp_client.initialize_session(
        types.InitializeParams(capabilities=CAPABILITIES, root_uri=from_fs_path(str(ROOT)))
    )
    lsp_client.init_result = result  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


# ---- helpers ----------------------------------------------------------------------------


def _uri(path: Path) -> str:
    uri = from_fs_path(str(path))
    assert uri is not None
    return str(uri)


def _open(client: LanguageClient, path: Path, text: str, version: int = 1) -> str:
    path.write_text(text, encoding="utf-8")
    uri = _uri(path)
    language = "evaldsl" if path.suffix == ".eval" else "yaml"
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id=language, version=version, text=text
            )
        )
    )
    return uri


def _published(client: LanguageClient, uri: str) -> list[types.PublishDiagnosticsParams]:
    return [p for p in client.published if p.uri == uri]  # type: ignore[attr-defined]


async def _diagnostics(
    client: LanguageClient, uri: str, version: int | None = None, *, after: int = 0
) -> list[types.Diagnostic]:
    """The diagnostics published for `uri` (for `version`, if given), waiting up to 10 s;
    `after`: ignore the first `after` publications for that document."""
    for _ in range(1000):
        for p in _published(client, uri)[after:]:
            if version is None or p.version == version:
                return list(p.diagnostics)
        await asyncio.sleep(0.01)
    raise AssertionError(f"no diagnostics published for {uri} (version {version})")


def _check_json(path: Path) -> list[dict[str, Any]]:
    """What `evaldsl check --format json` prints for the saved file."""
    out = subprocess.run(
        [sys.executable, "-m", "evaldsl.tools.cli", "check", "--format", "json", str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert out.stdout.strip(), out.stderr
    found: list[dict[str, Any]] = json.loads(out.stdout)
    return found


def _utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def _message(d: types.Diagnostic) -> str:
    """`check`'s message: the LSP message is that, then `hint: …` on its own line."""
    return d.message.split("\nhint: ")[0]


def _pos(text: str, needle: str, *, after: str = "") -> types.Position:
    """The LSP position just after `needle` (the first one after `after`)."""
    at = text.index(needle, text.index(after) if after else 0) + len(needle)
    line = text.count("\n", 0, at)
    column = at - (text.rfind("\n", 0, at) + 1)
    line_text = text.split("\n")[line]
    return types.Position(line=line, character=_utf16(line_text[:column]))


async def _complete(client: LanguageClient, uri: str, position: types.Position) -> list[str]:
    result = await client.text_document_completion_async(
        types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=position
        )
    )
    assert result is not None
    items = result.items if isinstance(result, types.CompletionList) else result
    return [item.label for item in items]


async def _hover(client: LanguageClient, uri: str, position: types.Position) -> str | None:
    result = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=position)
    )
    if result is None:
        return None
    assert isinstance(result.contents, types.MarkupContent)
    assert result.contents.kind == types.MarkupKind.Markdown
    return result.contents.value


def _close(client: LanguageClient, uri: str) -> None:
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """A folder with the fixtures the documents name, copied next to them."""
    shutil.copy(MULTI_TOOL, tmp_path / "multi.jsonl")
    shutil.copytree(STATES, tmp_path / "states")
    return tmp_path


# ---- the session ------------------------------------------------------------------------


async def test_positions_are_utf16(client: LanguageClient) -> None:
    result = client.init_result  # type: ignore[attr-defined]
    assert result.capabilities.position_encoding == types.PositionEncodingKind.Utf16
    assert result.capabilities.hover_provider
    assert result.capabilities.completion_provider is not None
    assert result.capabilities.definition_provider
    assert result.capabilities.document_formatting_provider


# ---- diagnostics ------------------------------------------------------------------------

MISTAKES = """\
suite "mistakes"
tools get_weather, get_crypto_price

case "weather"
  cassette "multi.jsonl"
  tool get_weather caled once
  tool get_wether called
  answer contains "unterminated
  answer matches /\\d+ C/
  tokens <= 2000

case "lost"
  cassette "missing.jsonl"
  answer contains "x"
  tokens < 2,000

case "state"
  state "states/completed.json"
  status == finished
  node researcher visited
"""


async def test_diagnostics_are_those_of_check(client: LanguageClient, work: Path) -> None:
    path = work / "mistakes.eval"
    uri = _open(client, path, MISTAKES)
    got = await _diagnostics(client, uri, 1)
    expected = _check_json(path)
    assert len(expected) >= 4  # a syntax error, an unknown tool, a string, a missing file...
    # a known slip's hint is the corrected statement, in the editor as in `check`
    assert ("E101", 15, "write `tokens < 2000`") in [
        (e["code"], e["line"], e["hint"]) for e in expected
    ]
    assert [(d.code, d.range.start.line, _message(d)) for d in got] == [
        (e["code"], e["line"] - 1, e["message"]) for e in expected
    ]
    for d, e in zip(got, expected, strict=True):
        assert d.source == "evaldsl"
        assert d.range.start.character == e["column"] - 1  # ASCII: UTF-16 = code points
        want = types.DiagnosticSeverity.Error if e["severity"] == "error" else None
        assert want is None or d.severity == want
        if e["hint"]:
            assert d.message == f"{e['message']}\nhint: {e['hint']}"
    _close(client, uri)


async def test_non_ascii_text_before_an_error(client: LanguageClient, work: Path) -> None:
    line = '  answer contains "天气 😀"; tool get_weather caled'
    text = f'case "unicode"\n  cassette "multi.jsonl"\n{line}\n'
    path = work / "unicode.eval"
    uri = _open(client, path, text)
    got = await _diagnostics(client, uri, 1)
    [expected] = _check_json(path)
    [d] = got
    assert (d.code, d.range.start.line, _message(d)) == (
        expected["code"],
        expected["line"] - 1,
        expected["message"],
    )
    at = line.index("caled")
    assert expected["column"] == at + 1  # check counts code points...
    assert d.range.start.character == _utf16(line[:at]) == at + 1  # ...LSP UTF-16 units
    assert d.range.end.character == _utf16(line[:at]) + len("caled")
    _close(client, uri)


async def test_changes_are_checked_again_debounced(client: LanguageClient, work: Path) -> None:
    path = work / "change.eval"
    good = 'case "c"\n  cassette "multi.jsonl"\n  tool get_weather called\n  tokens < 2000\n'
    uri = _open(client, path, good)
    assert await _diagnostics(client, uri, 1) == []

    def change(version: int, text: str) -> None:
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )

    # three quick edits: only the last one is checked (the pending checks are cancelled)
    change(2, good.replace("get_weather", "get_wea"))
    change(3, good.replace("get_weather", "get_weat"))
    change(4, good.replace("called", "calld"))
    got = await _diagnostics(client, uri, 4)
    assert [(d.code, d.range.start.line) for d in got] == [("E101", 2)]
    assert "calld" in _message(d := got[0]) and d.message.endswith("did you mean `called`?")
    await asyncio.sleep(0.5)
    assert [p.version for p in _published(client, uri)] == [1, 4]

    # saving checks at once; closing clears the document's diagnostics
    seen = len(_published(client, uri))
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert len(await _diagnostics(client, uri, after=seen)) == 1
    seen = len(_published(client, uri))
    _close(client, uri)
    assert await _diagnostics(client, uri, after=seen) == []


YAML_SUITE = """\
suite: yaml suite
tools: [get_weather, get_crypto_price]
cases:
  - name: block
    cassette: multi.jsonl
    expect: |
      tool get_weather called
      answer contains "晴 😀" and tool get_crypto_price caled
  - name: state
    state: states/completed.json
    expect:
      - status == completed
      - node writer visited
"""


async def test_yaml_block_error_at_its_line_and_column(client: LanguageClient, work: Path) -> None:
    path = work / "suite.yaml"
    uri = _open(client, path, YAML_SUITE)
    got = await _diagnostics(client, uri, 1)
    expected = _check_json(path)
    assert [(d.code, d.range.start.line, _message(d)) for d in got] == [
        (e["code"], e["line"] - 1, e["message"]) for e in expected
    ]
    [d] = got
    line = YAML_SUITE.split("\n")[7]
    assert d.range.start.line == 7
    assert d.range.start.character == _utf16(line[: line.index("caled")])
    _close(client, uri)


async def test_a_yaml_file_that_is_no_suite_gets_no_diagnostics(
    client: LanguageClient, work: Path
) -> None:
    uri = _open(client, work / "other.yaml", "name: not a suite\nsteps: [1, 2]\n")
    assert await _diagnostics(client, uri, 1) == []
    _close(client, uri)


# ---- hover ------------------------------------------------------------------------------

HOVER = """\
case "hover"
  cassette "multi.jsonl"
  tool get_weather called once
  answer contains "sunny"
  memory.summary not empty
"""


async def test_hover_shows_the_vocabulary(client: LanguageClient, work: Path) -> None:
    uri = _open(client, work / "hover.eval", HOVER)
    called = await _hover(client, uri, _pos(HOVER, "cal", after="get_weather"))
    assert called is not None and PREDICATES["called"].doc in called
    assert PREDICATES["called"].example in called
    answer = await _hover(client, uri, _pos(HOVER, "  ans"))
    assert answer is not None and SUBJECTS["answer"].doc in answer
    not_empty = await _hover(client, uri, _pos(HOVER, "not"))
    assert not_empty is not None and PREDICATES["not_empty"].doc in not_empty
    tool = await _hover(client, uri, _pos(HOVER, "get_wea"))
    assert tool is not None and "called 1 time in `multi.jsonl`" in tool
    assert await _hover(client, uri, _pos(HOVER, '"sun')) is None  # inside a string
    _close(client, uri)


SOURCE_HOVER = """\
case "stream"
  trace "stream.sse" as openai
  steps == 1

case "state"
  state "states/completed.json"
  status == completed

case "unreadable"
  cassette "notes.jsonl"
  steps == 1
"""


async def test_hover_on_a_source_line_shows_what_was_read(
    client: LanguageClient, work: Path
) -> None:
    shutil.copy(ROOT / "tests/fixtures/realworld/openai-chat-stream/stream.sse", work)
    (work / "notes.jsonl").write_text('{"note": 1}\n{"note": 2}\n', encoding="utf-8")
    uri = _open(client, work / "sources.eval", SOURCE_HOVER)
    stream = await _hover(client, uri, _pos(SOURCE_HOVER, "tra"))
    assert stream is not None and "format      openai (named: `as openai`)" in stream
    assert "get_current_weather called 2 times" in stream
    assert "tokens      126 (input tokens 75, output tokens 51)" in stream
    on_path = await _hover(client, uri, _pos(SOURCE_HOVER, '"stre', after="trace"))
    assert on_path is not None and "18 chat.completion.chunk, 1 [DONE]" in on_path
    state = await _hover(client, uri, _pos(SOURCE_HOVER, "  sta", after='case "state"'))
    assert state is not None and "nodes    planner, researcher, writer, reviewer" in state
    bad = await _hover(client, uri, _pos(SOURCE_HOVER, "cass"))
    assert bad is not None and "cannot read: nothing in `notes.jsonl`" in bad
    _close(client, uri)


async def test_hover_in_yaml_dsl_text(client: LanguageClient, work: Path) -> None:
    uri = _open(client, work / "hover.yaml", YAML_SUITE)
    called = await _hover(client, uri, _pos(YAML_SUITE, "cal", after="get_weather"))
    assert called is not None and PREDICATES["called"].doc in called
    status = await _hover(client, uri, _pos(YAML_SUITE, "- sta"))
    assert status is not None and SUBJECTS["status"].doc in status
    _close(client, uri)


SOURCE_HOVER_YAML = """\
suite: sources
cases:
  - name: stream
    trace: stream.sse
    format: openai
    expect: [steps == 1]
  - name: state
    state:
      states/completed.json
    expect: [status == completed]
  - name: rows
    cassette: "{{file}}"
    each: [{file: notes.jsonl}, {file: multi.jsonl}]
    expect: [steps >= 0]
"""


async def test_hover_on_a_yaml_source_key_shows_what_was_read(
    client: LanguageClient, work: Path
) -> None:
    shutil.copy(ROOT / "tests/fixtures/realworld/openai-chat-stream/stream.sse", work)
    (work / "notes.jsonl").write_text('{"note": 1}\n{"note": 2}\n', encoding="utf-8")
    uri = _open(client, work / "sources.yaml", SOURCE_HOVER_YAML)
    stream = await _hover(client, uri, _pos(SOURCE_HOVER_YAML, "tra"))
    assert stream is not None and "format      openai (named: `as openai`)" in stream
    assert "get_current_weather called 2 times" in stream
    on_value = await _hover(client, uri, _pos(SOURCE_HOVER_YAML, "stre", after="trace:"))
    assert on_value == stream
    # a value on the line under its key: either line shows it
    state = await _hover(client, uri, _pos(SOURCE_HOVER_YAML, "    sta", after="name: state"))
    assert state is not None and "nodes    planner, researcher, writer, reviewer" in state
    below = await _hover(client, uri, _pos(SOURCE_HOVER_YAML, "states/"))
    assert below == state
    # an `each` template: the files its rows name, each with its summary
    rows = await _hover(client, uri, _pos(SOURCE_HOVER_YAML, "cass"))
    assert rows is not None and "cannot read: nothing in `notes.jsonl`" in rows
    assert "`multi.jsonl`" in rows and "get_weather called" in rows
    # a line that names no file: not a summary
    name = await _hover(client, uri, _pos(SOURCE_HOVER_YAML, "name: str"))
    assert name is None or "format" not in name
    _close(client, uri)


# ---- completion -------------------------------------------------------------------------

COMPLETE = """\
suite "completion"

case "tools"
  cassette "multi.jsonl"
  tool \n\
  tool get_weather \n\

case "state"
  state "states/completed.json"
  status == \n\
  node \n\
  memory.\n\
  memory.review.\n\
  memory["review"].\n\
"""


async def test_completion_offers_the_tools_of_the_case_cassette(
    client: LanguageClient, work: Path
) -> None:
    uri = _open(client, work / "complete.eval", COMPLETE)
    labels = await _complete(client, uri, _pos(COMPLETE, "  tool "))
    assert {"get_weather", "get_crypto_price"} <= set(labels)
    assert "calls" in labels  # `tool calls`: the grammar's keyword there
    assert "status" not in labels
    predicates = await _complete(client, uri, _pos(COMPLETE, "tool get_weather "))
    assert {"called", "args", "result", "never"} <= set(predicates)
    assert "get_weather" not in predicates
    _close(client, uri)


async def test_completion_offers_status_values(client: LanguageClient, work: Path) -> None:
    uri = _open(client, work / "status.eval", COMPLETE)
    labels = await _complete(client, uri, _pos(COMPLETE, "status == "))
    assert {"completed", "failed", "waiting"} <= set(labels)
    _close(client, uri)


async def test_completion_offers_nodes_and_memory_keys_of_the_state(
    client: LanguageClient, work: Path
) -> None:
    uri = _open(client, work / "state.eval", COMPLETE)
    nodes = await _complete(client, uri, _pos(COMPLETE, "  node "))
    assert {"planner", "researcher", "writer", "reviewer"} <= set(nodes)
    keys = await _complete(client, uri, _pos(COMPLETE, "memory."))
    assert {"summary", "sources", "review"} <= set(keys)
    # the keys of the value the accessor chain reaches
    for chain in ("memory.review.", 'memory["review"].'):
        nested = await _complete(client, uri, _pos(COMPLETE, chain))
        assert {"approved", "reviewer"} <= set(nested), chain
        assert "summary" not in nested
    _close(client, uri)


async def test_completion_in_yaml_dsl_text(client: LanguageClient, work: Path) -> None:
    text = YAML_SUITE.replace("      tool get_weather called\n", "      tool \n")
    uri = _open(client, work / "complete.yaml", text)
    labels = await _complete(client, uri, _pos(text, "      tool "))
    assert {"get_weather", "get_crypto_price"} <= set(labels)
    text2 = text.replace("- status == completed", "- status == ")
    uri2 = _open(client, work / "complete2.yaml", text2)
    assert "completed" in await _complete(client, uri2, _pos(text2, "- status == "))
    _close(client, uri)
    _close(client, uri2)


RUN_TOGETHER_YAML = """\
suite: run together
tools: [get_weather]
cases:
  - name: list
    cassette: multi.jsonl
    expect:
      - tool get_weather calledonce
      - answer startswith "It"
"""


async def test_keywords_run_together_in_the_editor(client: LanguageClient, work: Path) -> None:
    """`calledonce` is no `called once`: an error with the words apart as its hint, in a
    YAML `expect:` list as in a `.eval` file, and nothing is offered after it."""
    text = 'case "c"\n  cassette "multi.jsonl"\n  tool get_weather calledonce \n'
    uri = _open(client, work / "glued.eval", text)
    [d] = await _diagnostics(client, uri, 1)
    assert (d.code, d.range.start.line, d.range.start.character) == ("E101", 2, 19)
    assert d.message == (
        "`calledonce` is written as separate words: `called once`\n"
        "hint: write `tool get_weather called once`"
    )
    # (the words apart would be followed by `and`, `or`, …: the statement is wrong already)
    assert await _complete(client, uri, _pos(text, "calledonce ")) == []
    _close(client, uri)
    yaml_uri = _open(client, work / "glued.yaml", RUN_TOGETHER_YAML)
    got = await _diagnostics(client, yaml_uri, 1)
    assert [(d.range.start.line, d.range.start.character, _message(d)) for d in got] == [
        (6, 25, "`calledonce` is written as separate words: `called once`"),
        (7, 15, "`startswith` is written as separate words: `starts with`"),
    ]
    _close(client, yaml_uri)


# ---- formatting -------------------------------------------------------------------------

UNFORMATTED = """\
suite   "fmt"
case "x"
    cassette "multi.jsonl"
    tool get_weather   called once ;  answer contains "sunny"
"""


async def _format(client: LanguageClient, uri: str) -> Sequence[types.TextEdit] | None:
    return await client.text_document_formatting_async(
        types.DocumentFormattingParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            options=types.FormattingOptions(tab_size=2, insert_spaces=True),
        )
    )


async def test_formatting_returns_the_formatter_output(client: LanguageClient, work: Path) -> None:
    try:
        from evaldsl.format.formatter import format_text
    except ImportError:
        pytest.skip("evaldsl.format.formatter is not there yet (being written alongside)")
    path = work / "fmt.eval"
    uri = _open(client, path, UNFORMATTED)
    edits = await _format(client, uri)
    expected = format_text(UNFORMATTED, str(path))
    if expected == UNFORMATTED:
        assert edits == []
    else:
        assert edits is not None and len(edits) == 1
        [edit] = edits
        assert edit.new_text == expected
        assert (edit.range.start.line, edit.range.start.character) == (0, 0)
        lines = UNFORMATTED.split("\n")
        assert (edit.range.end.line, edit.range.end.character) == (len(lines) - 1, 0)
    broken = UNFORMATTED + '  answer contains "never closed\n'
    uri2 = _open(client, work / "broken.eval", broken)
    assert not await _format(client, uri2)  # no edit on a syntax error
    _close(client, uri)
    _close(client, uri2)


# ---- definition -------------------------------------------------------------------------


async def _definition(
    client: LanguageClient, uri: str, position: types.Position
) -> list[types.Location]:
    result = await client.text_document_definition_async(
        types.DefinitionParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=position
        )
    )
    if result is None:
        return []
    return [result] if isinstance(result, types.Location) else list(result)  # type: ignore[arg-type]


async def test_definition_of_a_source_path(client: LanguageClient, work: Path) -> None:
    uri = _open(client, work / "def.eval", COMPLETE)
    [cassette] = await _definition(client, uri, _pos(COMPLETE, 'cassette "mul'))
    assert cassette.uri == _uri(work / "multi.jsonl")
    assert cassette.range.start == types.Position(line=0, character=0)
    [state] = await _definition(client, uri, _pos(COMPLETE, "  sta"))
    assert state.uri == _uri(work / "states" / "completed.json")
    assert await _definition(client, uri, _pos(COMPLETE, "status")) == []
    _close(client, uri)

    yuri = _open(client, work / "def.yaml", YAML_SUITE)
    [cassette] = await _definition(client, yuri, _pos(YAML_SUITE, "cassette: mul"))
    assert cassette.uri == _uri(work / "multi.jsonl")
    _close(client, yuri)


async def test_problems_in_a_dataset_file_are_published_for_that_file(
    client: LanguageClient, work: Path
) -> None:
    shutil.copy(ROOT / "examples/triage/flow.py", work / "flow.py")
    rows = work / "rows.json"
    rows.write_text('[{"input": {"text": "refund"}, "bogus": 1}]\n', encoding="utf-8")
    text = 'case "rows"\n  run flow:run\n  dataset "rows.json"\n  steps == 1\n'
    uri = _open(client, work / "dataset.eval", text)
    assert await _diagnostics(client, uri, 1) == []
    [d] = await _diagnostics(client, _uri(rows))
    assert (d.code, d.range.start.line, d.range.start.character) == ("E508", 0, 1)
    # opened in the editor too (no suite itself): still shows what the suite found there
    rows_uri = _open(client, rows, rows.read_text(encoding="utf-8"))
    assert [d.code for d in await _diagnostics(client, rows_uri, 1)] == ["E508"]
    seen = len(_published(client, rows_uri))
    _close(client, uri)
    assert await _diagnostics(client, rows_uri, after=seen) == []
    _close(client, rows_uri)
