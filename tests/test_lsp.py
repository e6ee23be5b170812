"""End-to-end tests of `evaldsl lsp`: the real server over stdio, driven by pytest-lsp.

One server process serves the whole module; each test opens its own documents (files in
a temporary folder next to copies of the fixtures they name). Diagnostics are compared
with what `evaldsl check --format json` prints for the same file saved to disk.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

# pygls and pytest-lsp come with the dev extra `make test` installs: a missing one is an
# import error, never a module of tests skipped
import pytest
import pytest_lsp
from lsprotocol import types
from pygls.protocol import default_converter
from pygls.uris import from_fs_path
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

from evaldsl.language.source import codepoint_column
from evaldsl.language.vocabulary import SUBJECTS
from evaldsl.predicates.registry import PREDICATES
from evaldsl.suites.build import check_text
from evaldsl.tools.lsp.analysis import Analysis
from evaldsl.tools.lsp.symbols import document_symbols, flat_symbols

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
        document_symbol=types.DocumentSymbolClientCapabilities(
            hierarchical_document_symbol_support=True
        ),
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
    actions = result.capabilities.code_action_provider
    assert isinstance(actions, types.CodeActionOptions)
    assert list(actions.code_action_kinds or []) == [types.CodeActionKind.QuickFix]
    assert result.capabilities.document_symbol_provider


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


async def test_a_byte_order_mark_in_the_buffer_is_a_character_of_line_0(
    client: LanguageClient, work: Path
) -> None:
    """The editor counts a BOM the buffer holds as line 0's first character; evaldsl
    reads the text without it: every position on line 0 was one to the left."""
    text = '\ufeffcase "b"\n  cassette "multi.jsonl"\n  tool get_weather caled once\n'
    for name, body in [("bom.eval", text), ("bom0.eval", "\ufefftool get_weather caled once\n")]:
        uri = _open(client, work / name, body)
        [d] = await _diagnostics(client, uri, 1)
        line = body.split("\n")[d.range.start.line]
        assert line[d.range.start.character : d.range.end.character] == "caled"
        assert d.data["fix"]["range"]["start"]["character"] == d.range.start.character
        hover = await client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(0, 2)
            )
        )
        assert hover is not None and hover.range is not None
        assert (hover.range.start.character, hover.range.end.character) == (1, 5)
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


@pytest.mark.parametrize(
    "text",
    [
        "name: not a suite\nsteps: [1, 2]\n",
        # a CI workflow that mentions cases in a comment; a ConfigMap with nested `cases`
        "name: ci\njobs:\n  test:\n    steps:\n      # run all test cases\n      - run: make\n",
        "kind: ConfigMap\nmetadata:\n  name: usecases\ndata:\n  cases: '3'\n",
        '{"name": "report", "results": {"cases": []}}',
    ],
)
async def test_a_yaml_file_that_is_no_suite_gets_no_diagnostics(
    client: LanguageClient, work: Path, text: str
) -> None:
    uri = _open(client, work / "other.yaml", text)
    assert await _diagnostics(client, uri, 1) == []
    assert await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=uri))
    ) in ([], None)
    _close(client, uri)


async def test_a_suite_edited_until_it_is_none_is_said_so_with_its_fix(
    client: LanguageClient, work: Path
) -> None:
    # `cases:` typed over as `casez:`: the buffer no longer reads as a suite. Its
    # diagnostics were cleared, hiding the suite just broken; it is `check`'s E504 now,
    # at the misspelt key, with the quick fix that renames it.
    suite = "cases:\n  - name: a\n    cassette: multi.jsonl\n    expect: tool get_weather called\n"
    uri = _open(client, work / "broken.yaml", suite)
    assert await _diagnostics(client, uri, 1) == []
    broken = suite.replace("cases:", "casez:")
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=broken)],
        )
    )
    [said] = await _diagnostics(client, uri, 2)
    assert (said.code, said.range.start.line, said.range.end.character) == ("E504", 0, 5)
    assert said.message.endswith("did you mean `cases:`?")
    edit = await _fix_of(client, uri, said)
    assert edit is not None and _applied(broken, edit) == suite
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


ONE_LINE_SOURCES = {
    "flow.yaml": (
        "suite: s\ncases:\n"
        "  - {name: multi.jsonl, cassette: multi.jsonl, expect: [tool get_weather called]}\n"
    ),
    "one.json": (
        '{"suite": "s", "cases": [{"name": "multi.jsonl", "cassette": "multi.jsonl", '
        '"expect": ["tool get_weather called"]}]}\n'
    ),
}


@pytest.mark.parametrize("name", list(ONE_LINE_SOURCES))
async def test_a_source_key_on_a_line_that_holds_more_is_only_its_key_and_value(
    client: LanguageClient, work: Path, name: str
) -> None:
    """A flow mapping or a one-line JSON suite: hover anywhere on the line showed the
    cassette's summary (over the case's name, the first `multi.jsonl` on the line), and
    go to definition on `tool` jumped to the cassette."""
    text = ONE_LINE_SOURCES[name]
    uri = _open(client, work / name, text)
    line = text.split("\n")[2 if name.endswith(".yaml") else 0]
    value = line.index("multi.jsonl", line.index("cassette"))
    for needle in ("cassette", "multi.j"):  # the key, the value
        at = line.index(needle, line.index("cassette")) + 2
        found = await client.text_document_hover_async(
            types.HoverParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                position=types.Position(_pos(text, "cassette").line, at),
            )
        )
        assert found is not None and found.range is not None
        assert isinstance(found.contents, types.MarkupContent)
        assert "get_weather called" in found.contents.value
        assert (found.range.start.character, found.range.end.character) == (value, value + 11)
    tool = await _hover(client, uri, _pos(text, "too"))
    assert tool is not None and tool.startswith("**tool NAME**")
    assert await _hover(client, uri, _pos(text, "multi.j")) is None  # (the case's name)
    assert await _definition(client, uri, _pos(text, "too")) == []
    [cassette] = await _definition(client, uri, _pos(text, "multi.j", after="cassette"))
    assert cassette.uri == _uri(work / "multi.jsonl")
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


async def test_completion_inserts_a_name_that_is_no_bare_word_quoted(
    client: LanguageClient, work: Path
) -> None:
    text = 'tools get_weather, "get-weather"\ncase "q"\n  run agents.weather:run\n  tool '
    uri = _open(client, work / "quoted.eval", text)
    result = await client.text_document_completion_async(
        types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=_pos(text, "  tool ")
        )
    )
    assert isinstance(result, types.CompletionList)
    inserted = {i.label: i.insert_text for i in result.items if i.label.startswith("get")}
    assert inserted == {"get_weather": None, "get-weather": '"get-weather"'}
    _close(client, uri)


TYPED = """\
suite "typed completion"

case "typed"
  cassette "multi.jsonl"
  answer \n\
  latency \n\
  tool get_weather result is \n\
  answer is \n\
"""


async def test_completion_offers_only_what_applies_to_the_subject(
    client: LanguageClient, work: Path
) -> None:
    uri = _open(client, work / "typed.eval", TYPED)
    answer = set(await _complete(client, uri, _pos(TYPED, "  answer ")))
    assert {"contains", "matches", "starts", "cites", "==", "!="} <= answer
    assert not {"called", "args", "never", "has", "exists", "<", "within"} & answer
    latency = set(await _complete(client, uri, _pos(TYPED, "  latency ")))
    assert {"<", "<=", "=="} <= latency
    assert not {"contains", "called", "matches"} & latency
    # `is string` applies to JSON values, not to the answer's text
    value = set(await _complete(client, uri, _pos(TYPED, "result is ")))
    assert {"string", "object", "empty", "json"} <= value
    text = set(await _complete(client, uri, _pos(TYPED, "  answer is ")))
    assert {"empty", "json"} <= text
    assert "string" not in text
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


QUOTED_YAML = """\
suite: quoted
cases:
  - name: quoted
    cassette: dashed.jsonl
    expect:
      - "answer contains \\"it's\\" and tool "
      - 'answer contains "it''s" and tool '
      - "answer contains \\"\\u00e9t\\u00e9\\" and tool get_weather called"
"""


async def test_completion_and_hover_in_quoted_yaml_scalars(
    client: LanguageClient, work: Path
) -> None:
    """A double-quoted scalar spells `"` as `\\"` (a single-quoted one `'` as `''`): the
    statement is the text the scalar stands for, as the suite reads it. Completion after
    such a spelling offers the case's tools, a name the checker reads only quoted is
    inserted spelled for the scalar, and hover is placed at the buffer's columns."""
    (work / "dashed.jsonl").write_text(
        '{"cassette": "traceplay", "version": 1}\n'
        '{"type": "tool.call", "name": "get-weather", "arguments": {}}\n'
        '{"type": "tool.call", "name": "get_weather", "arguments": {}}\n'
        '{"type": "llm.response", "output": "it\'s sunny"}\n',
        encoding="utf-8",
    )
    uri = _open(client, work / "quoted.yaml", QUOTED_YAML)
    for after, insert in (
        ('\\"it\'s\\" and tool ', '\\"get-weather\\"'),
        ("''s\" and tool ", None),
    ):
        result = await client.text_document_completion_async(
            types.CompletionParams(
                text_document=types.TextDocumentIdentifier(uri=uri),
                position=_pos(QUOTED_YAML, after),
            )
        )
        assert result is not None
        items = result.items if isinstance(result, types.CompletionList) else result
        inserts = {item.label: item.insert_text for item in items}
        assert {"get_weather", "get-weather"} <= set(inserts), (after, inserts)
        assert inserts["get_weather"] is None
        # (a single-quoted scalar holds `"` as it is)
        assert inserts["get-weather"] == (insert or '"get-weather"')
    # hover on `called`, after two \\u escapes and two \\" : placed where it is written
    line = QUOTED_YAML.split("\n")[7]
    hovered = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            position=_pos(QUOTED_YAML, "get_weather cal"),
        )
    )
    assert hovered is not None and hovered.range is not None
    assert hovered.range.start == types.Position(7, line.index("called"))
    assert hovered.range.end == types.Position(7, line.index("called") + len("called"))
    _close(client, uri)


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
    from evaldsl.format.formatter import format_text

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


async def test_formatting_keeps_crlf_line_endings(client: LanguageClient, work: Path) -> None:
    from evaldsl.format.formatter import format_text

    crlf = UNFORMATTED.replace("\n", "\r\n")
    uri = _open(client, work / "crlf.eval", crlf)
    [edit] = await _format(client, uri) or []
    assert edit.new_text == format_text(UNFORMATTED).replace("\n", "\r\n")
    _close(client, uri)
    canonical = _open(client, work / "canonical.eval", edit.new_text)
    assert not await _format(client, canonical)  # already as `fmt` lays it out
    _close(client, canonical)


@pytest.mark.parametrize("separator", list("\u2028\u2029\x85\x0b\x0c\x1c\x1d\x1e"))
async def test_edits_land_where_the_editor_made_them_past_a_character_python_ends_lines_at(
    client: LanguageClient, work: Path, separator: str
) -> None:
    """LSP ends lines at \\n, \\r\\n and \\r only; str.splitlines also at these: an
    edit on a later line was applied to the line above it, and formatting then gave
    the editor assertions it never had."""
    from evaldsl.format.formatter import format_text

    text = f'# pasted:{separator} here\ncase   "a"\n  answer contains "rainy"\n'
    text += '  answer contains "sunny"\n'
    uri = _open(client, work / "separator.eval", text)
    await _diagnostics(client, uri, 1)
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(start=types.Position(3, 19), end=types.Position(3, 20)),
                    text="S",
                )
            ],
        )
    )
    edited = text.replace('"sunny"', '"Sunny"')
    [edit] = await _format(client, uri) or []
    assert edit.new_text == format_text(edited)
    _close(client, uri)


async def test_a_lone_carriage_return_is_one_diagnostic_at_its_place(
    client: LanguageClient, work: Path
) -> None:
    """A lone CR ends a line for the editor, not for evaldsl: the check's positions after
    it would be on the wrong lines, so the buffer gets one E504 where the first one is."""
    text = 'case "a"\r\n  steps >= 1\r  tool x caled\r\n'
    uri = _open(client, work / "mac.eval", text)
    [d] = await _diagnostics(client, uri, 1)
    assert (d.code, d.range.start.line, d.range.start.character) == ("E504", 1, 12)
    assert "lone carriage return" in d.message and "LF or CRLF" in d.message
    _close(client, uri)


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


async def test_definition_of_a_path_that_cannot_be_looked_at_is_none(
    client: LanguageClient, work: Path
) -> None:
    """A name too long for the file system: `Path.is_file` raised, and the request
    failed with the server's traceback instead of finding no file."""
    text = f'case "a"\n  cassette "{"y" * 300}.jsonl"\n  steps >= 0\n'
    uri = _open(client, work / "long.eval", text)
    assert await _definition(client, uri, _pos(text, 'cassette "yy')) == []
    _close(client, uri)


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
    assert (d.code, d.range.start.line, d.range.start.character) == ("E508", 0, 31)  # at the field
    # opened in the editor too (no suite itself): still shows what the suite found there
    rows_uri = _open(client, rows, rows.read_text(encoding="utf-8"))
    assert [d.code for d in await _diagnostics(client, rows_uri, 1)] == ["E508"]
    # fixed and saved, the dataset's problems go; broken and saved again, they come back
    # (the suite's check reads the file from disk)
    for version, row, codes in [
        (2, '{"input": {"text": "refund"}}', []),
        (3, '{"bogus": 1}', ["E508"]),
    ]:
        rows.write_text(f"[{row}]\n", encoding="utf-8")
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=rows_uri, version=version),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=f"[{row}]\n")],
            )
        )
        seen = len(_published(client, rows_uri))
        client.text_document_did_save(
            types.DidSaveTextDocumentParams(
                text_document=types.TextDocumentIdentifier(uri=rows_uri)
            )
        )
        for _ in range(500):  # the dataset's own check publishes first, then the suite's
            got = _published(client, rows_uri)[seen:]
            if got and [d.code for d in got[-1].diagnostics] == codes:
                break
            await asyncio.sleep(0.01)
        assert [d.code for d in _published(client, rows_uri)[-1].diagnostics] == codes
    seen = len(_published(client, rows_uri))
    _close(client, uri)
    assert await _diagnostics(client, rows_uri, after=seen) == []
    _close(client, rows_uri)


# ---- code actions -------------------------------------------------------------------------


async def _actions(
    client: LanguageClient, uri: str, d: types.Diagnostic, only: list[str] | None = None
) -> list[types.CodeAction]:
    """The code actions offered for the range of `d`."""
    found = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=d.range,
            context=types.CodeActionContext(diagnostics=[d], only=only),
        )
    )
    return [a for a in found or [] if isinstance(a, types.CodeAction)]


async def _fix_of(client: LanguageClient, uri: str, d: types.Diagnostic) -> types.TextEdit | None:
    """The one quick fix offered for `d` (among those of the diagnostics beside it)."""
    mine = [
        a
        for a in await _actions(client, uri, d)
        if a.diagnostics
        and (a.diagnostics[0].range, a.diagnostics[0].message) == (d.range, d.message)
    ]
    if not mine:
        return None
    [action] = mine
    assert action.kind == types.CodeActionKind.QuickFix and action.is_preferred
    assert action.edit is not None and action.edit.changes is not None
    [edit] = action.edit.changes[uri]
    assert action.title == f"Replace with `{edit.new_text}`"
    return edit


def _applied(text: str, edit: types.TextEdit) -> str:
    """`text` with the edit made (its positions in UTF-16 code units)."""
    lines = text.split("\n")

    def offset(p: types.Position) -> int:
        column = codepoint_column(lines[p.line], p.character) - 1
        return sum(len(line) + 1 for line in lines[: p.line]) + column

    return text[: offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end) :]


async def test_every_mistake_of_the_corpus_has_a_fix_that_mends_it(
    client: LanguageClient, work: Path
) -> None:
    corpus = (ROOT / "tests/golden/mistakes.eval").read_text(encoding="utf-8")
    path = work / "mistakes.eval"
    uri = _open(client, path, corpus)
    published = await _diagnostics(client, uri, 1)
    # a hint that is one edit: `write `X``, `did you mean `X`?` (not `write `5s` or `5ms``)
    hints = {id(d): d.message.partition("\nhint: ")[2] for d in published}
    hinted = [
        d
        for d in published
        if hints[id(d)].startswith(("write `", "did you mean `")) and "` or `" not in hints[id(d)]
    ]
    assert len(hinted) >= 85
    for d in hinted:
        edit = await _fix_of(client, uri, d)
        assert edit is not None, d.message
        fixed = _applied(corpus, edit)
        line = d.range.start.line + 1
        after = [(e.code, e.message) for e in check_text(fixed, str(path)) if e.line == line]
        # the mistake is mended; a corrected statement parses (a did-you-mean mends the
        # word: `tool search calls 2` then lacks its `times`, a mistake of its own)
        assert (d.code, _message(d)) not in after, (d.message, fixed.split("\n")[line - 1])
        if d.code.startswith("E1") and hints[id(d)].startswith("write `"):  # a known slip
            statement = hints[id(d)][len("write `") : -1]
            assert fixed.split("\n")[line - 1].strip() == statement
            assert not [a for a in after if a[0].startswith("E1")], (d.message, after)
    # a hint of two choices (`5s` or `5ms`) is no edit: no action
    [latency] = [d for d in published if "give the number a unit" in d.message]
    assert await _fix_of(client, uri, latency) is None
    _close(client, uri)


NAMES = """\
tools get_weather, get_crypto_price, "web-search"

case "names"
  cassette "multi.jsonl"
  tool get_wether called
  tool "get_wether" caled once
  tools contains get_crypto_prize
  tool web-serch called
"""


async def test_fixes_of_unknown_names_and_keywords(client: LanguageClient, work: Path) -> None:
    path = work / "names.eval"
    uri = _open(client, path, NAMES)
    published = await _diagnostics(client, uri, 1)
    edits = {}
    for d in published:
        edit = await _fix_of(client, uri, d)
        assert edit is not None, d.message
        edits[(d.range.start.line, d.code)] = (NAMES.split("\n")[d.range.start.line], edit.new_text)
    # a name as it was written (bare or quoted), a keyword, a slip
    assert edits == {
        (4, "E301"): ("  tool get_wether called", "get_weather"),
        (5, "E101"): ('  tool "get_wether" caled once', "called"),
        (6, "E301"): ("  tools contains get_crypto_prize", "get_crypto_price"),
        (7, "E103"): ("  tool web-serch called", 'tool "web-serch" called'),
    }
    fixed = NAMES
    for d in sorted(published, key=lambda d: d.range.start.line, reverse=True):
        edit = await _fix_of(client, uri, d)
        assert edit is not None
        fixed = _applied(fixed, edit)
    assert '  tool "get_wether" called once' in fixed  # (a second check's name, then)
    remaining = {(e.line, e.code) for e in check_text(fixed, str(path))}
    assert remaining == {(6, "E301"), (8, "E301")}  # the quoted one; `web-serch`: its name
    # asked for refactorings only, or for an older version: none
    assert await _actions(client, uri, published[0], only=[types.CodeActionKind.Refactor]) == []
    assert len(await _actions(client, uri, published[0], only=["quickfix"])) == 1
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text="\n" + NAMES)],
        )
    )
    assert await _actions(client, uri, published[0]) == []
    _close(client, uri)


YAML_FIXES = """\
suite: fixes
tools: [get_weather, get_crypto_price]
cases:
  - name: block
    cassette: multi.jsonl
    expect: |
      answer contains "晴 😀" and tool get_crypto_price caled
  - name: items
    cassette: multi.jsonl
    expect:
      - "tool get_weather called 2x"
      - "answer = \\"x\\""
      - tools == get_weather, get_crypto_price
"""


async def test_fixes_in_a_yaml_suite_leave_its_yaml_as_it_was(
    client: LanguageClient, work: Path
) -> None:
    path = work / "fixes.yaml"
    uri = _open(client, path, YAML_FIXES)
    published = {d.range.start.line: d for d in await _diagnostics(client, uri, 1)}
    assert sorted(published) == [6, 10, 11, 12]
    # in a block scalar, after characters of two UTF-16 units
    block = await _fix_of(client, uri, published[6])
    assert block is not None and block.new_text == "called"
    line = YAML_FIXES.split("\n")[6]
    assert block.range.start.character == _utf16(line[: line.index("caled")])
    # in a double-quoted scalar without escapes, text without quotes
    quoted = await _fix_of(client, uri, published[10])
    assert quoted is not None and quoted.new_text == "tool get_weather called twice"
    fixed = _applied(_applied(YAML_FIXES, quoted), block)
    path.write_text(fixed, encoding="utf-8")
    assert {d.line for d in check_text(fixed, str(path))} == {12, 13}
    # an escaped string (its text is not the buffer's), and brackets a plain scalar
    # would take for YAML's in a flow sequence: no fix
    assert await _fix_of(client, uri, published[11]) is None
    assert await _fix_of(client, uri, published[12]) is None
    _close(client, uri)


YAML_KEYS = """\
suite: keys
descripton: fields misspelt
cases:
  - name: plain
    cassete: multi.jsonl
    expectt: [tool get_weather called]
  - {name: flow, cassette: multi.jsonl, expect: [steps > 0], tagz: [a]}
  - name: quoted
    "cassete": multi.jsonl
    expect: [steps > 0]
"""
JSON_KEYS = (
    '{"suite": "k", "descripton": "d", "cases": [{"name": "a", "cassete": "multi.jsonl", '
    '"expect": ["steps > 0"]}]}\n'
)
#: each misspelt field and the field its quick fix names
RENAMED = {"descripton": "description", "cassete": "cassette", "expectt": "expect", "tagz": "tags"}


async def test_a_misspelt_field_is_renamed_by_its_quick_fix(
    client: LanguageClient, work: Path
) -> None:
    for path, text in ((work / "keys.yaml", YAML_KEYS), (work / "keys.json", JSON_KEYS)):
        uri = _open(client, path, text)
        published = [d for d in await _diagnostics(client, uri, 1) if d.code == "E508"]
        assert len(published) == (5 if path.suffix == ".yaml" else 2), published
        fixed = text
        backwards = sorted(published, key=lambda d: (d.range.start.line, d.range.start.character))
        for d in reversed(backwards):
            edit = await _fix_of(client, uri, d)
            assert edit is not None, (path.name, d.message)
            fixed = _applied(fixed, edit)
        expected = text
        for wrong, right in RENAMED.items():
            expected = expected.replace(wrong, right)
        assert fixed == expected  # each name renamed, nothing else of the file changed
        path.write_text(fixed, encoding="utf-8")
        assert [e for e in check_text(fixed, str(path)) if e.code == "E508"] == []
        _close(client, uri)


async def _misspelt(
    client: LanguageClient, path: Path, text: str
) -> tuple[str, list[types.Diagnostic]]:
    """A suite of misspelt fields opened at `path` (two in YAML, one in JSON), and the
    E508s published for it."""
    uri = _open(client, path, text)
    published = [d for d in await _diagnostics(client, uri, 1) if d.code == "E508"]
    assert len(published) == (2 if path.suffix == ".yaml" else 1)
    return uri, published


TWICE = {
    "twice.yaml": (
        "suite: s\ndescripton: d\ndescription: d\ncases:\n  - name: a\n"
        "    cassette: multi.jsonl\n    cassete: multi.jsonl\n    expect: [steps > 0]\n"
    ),
    "twice.json": (
        '{"suite": "s", "cases": [{"name": "a", "cassette": "multi.jsonl", '
        '"cassete": "multi.jsonl", "expect": ["steps > 0"]}]}\n'
    ),
}


@pytest.mark.parametrize("name", list(TWICE))
async def test_a_misspelt_field_is_not_renamed_to_a_field_the_mapping_has(
    client: LanguageClient, work: Path, name: str
) -> None:
    """`cassete:` beside `cassette:`: its quick fix wrote `cassette:` a second time, a
    file that no longer reads (E504, or W505 in JSON): the hint stays, the edit is not
    offered."""
    text = TWICE[name]
    path = work / name
    uri, published = await _misspelt(client, path, text)
    for d in published:
        assert d.message.endswith(("did you mean `cassette:`?", "did you mean `description:`?"))
        assert await _fix_of(client, uri, d) is None
    assert [d.fix for d in check_text(text, str(path)) if d.code == "E508"] == [None] * len(
        published
    )
    _close(client, uri)


OBJECTS = {
    "objects.yaml": (
        "suite: s\ncases:\n  - name: a\n    cassette: multi.jsonl\n    assertions:\n"
        "      - {kind: tool.args, name: get_weather, path: $.city, equals: Xiamen}\n"
        "      - kind: tool.args\n        name: get_weather\n        jsonPath: $.city\n"
        "        jsonPth: $.units\n        equals: Xiamen\n"
    ),
    "objects.json": (
        '{"suite": "s", "cases": [{"name": "a", "cassette": "multi.jsonl", "assertions": '
        '[{"kind": "tool.args", "name": "get_weather", "path": "$.city", "equals": "Xiamen"}]}]}\n'
    ),
}


@pytest.mark.parametrize("name", list(OBJECTS))
async def test_a_misspelt_field_of_a_traceplay_object_has_its_quick_fix(
    client: LanguageClient, work: Path, name: str
) -> None:
    """`path:` of a `tool.args` object: the hint said `jsonPath:` and no edit was offered
    (docs/editors.md: a quick fix for every one-edit hint); now the edit renames the key
    where it is written, and the fixed text checks clean. Not beside the field it guesses
    (`jsonPth:` under `jsonPath:`): renamed, the key would be written twice."""
    text = OBJECTS[name]
    path = work / name
    uri, published = await _misspelt(client, path, text)
    fixes = [await _fix_of(client, uri, d) for d in published]
    first = fixes[0]
    assert first is not None and first.new_text == "jsonPath"
    fixed = check_text(_applied(text, first), str(path))
    assert len([d for d in fixed if d.code == "E508"]) == len(published) - 1, fixed
    assert fixes[1:] == [None] * (len(fixes) - 1)  # (`jsonPth:` beside `jsonPath:`)
    _close(client, uri)


# ---- document symbols -------------------------------------------------------------------------


async def _symbols(client: LanguageClient, uri: str) -> list[types.DocumentSymbol]:
    found = await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert found is not None
    symbols = [s for s in found if isinstance(s, types.DocumentSymbol)]
    assert len(symbols) == len(found)
    return symbols


def _lines_of(symbol: types.DocumentSymbol) -> tuple[str, int, int, int, str | None]:
    """A symbol's name, first and last line, the line its name is on, and its detail."""
    return (
        symbol.name,
        symbol.range.start.line,
        symbol.range.end.line,
        symbol.selection_range.start.line,
        symbol.detail,
    )


OUTLINE = """\
suite "outline"
tools get_weather

# the first case
case "weather"
  cassette "multi.jsonl"
  tool get_weather called

  # the next one
case "state"
  state "states/completed.json"
  status == completed
  answer contains "x" 2x
"""


async def test_the_outline_is_the_suite_and_its_cases(client: LanguageClient, work: Path) -> None:
    uri = _open(client, work / "outline.eval", OUTLINE)
    [suite] = await _symbols(client, uri)
    lines = OUTLINE.split("\n")
    assert (suite.name, suite.kind) == ("outline", types.SymbolKind.Module)
    assert suite.range == types.Range(
        start=types.Position(0, 0), end=types.Position(len(lines) - 1, 0)
    )
    assert suite.selection_range == types.Range(
        start=types.Position(0, 0), end=types.Position(0, len(lines[0]))
    )
    assert [_lines_of(case) for case in suite.children or ()] == [
        # the blank line and the comment before the next case are not this one's; a line
        # that does not parse is still its case's
        ("weather", 4, 6, 4, "cassette multi.jsonl"),
        ("state", 9, 12, 9, "state states/completed.json"),
    ]
    assert {case.kind for case in suite.children or ()} == {types.SymbolKind.Function}
    [weather, state] = suite.children or ()
    assert weather.range.end.character == len(lines[6])
    assert state.selection_range.end.character == len('case "state"')
    _close(client, uri)

    # a file without `case` lines: its one case has no line of its own
    implicit = _open(client, work / "implicit.eval", 'cassette "multi.jsonl"\nsteps == 1\n')
    [suite] = await _symbols(client, implicit)
    assert (suite.name, list(suite.children or ())) == ("implicit", [])
    _close(client, implicit)


async def test_the_outline_of_a_yaml_suite(client: LanguageClient, work: Path) -> None:
    uri = _open(client, work / "outline.yaml", YAML_SUITE)
    [suite] = await _symbols(client, uri)
    assert (suite.name, suite.selection_range.start.line) == ("yaml suite", 0)
    assert [_lines_of(case) for case in suite.children or ()] == [
        ("block", 3, 7, 3, "cassette multi.jsonl"),
        ("state", 8, 12, 8, "state states/completed.json"),
    ]
    [block, _] = suite.children or ()
    line = YAML_SUITE.split("\n")[7]
    assert block.range.end.character == _utf16(line)  # (after characters of two units)
    assert block.selection_range.start.character == 2  # `- name: block`
    _close(client, uri)
    other = _open(client, work / "other.yaml", "name: not a suite\nsteps: [1, 2]\n")
    assert await _symbols(client, other) == []
    _close(client, other)


async def test_an_outline_for_clients_without_hierarchy(work: Path) -> None:
    path = work / "flat.eval"
    found = flat_symbols(
        "file:///flat.eval", document_symbols(Analysis(OUTLINE, str(path), "eval"))
    )
    assert [(s.name, s.container_name, s.location.range.start.line) for s in found] == [
        ("outline", None, 0),
        ("weather", "outline", 4),
        ("state", "outline", 9),
    ]


# ---- documents the editor has not opened ------------------------------------------------


async def test_documents_not_open_are_read_only_from_regular_files(
    client: LanguageClient, work: Path
) -> None:
    """A request on a document that is not open reads it from disk only when it is a
    regular file: a missing file, a named pipe or a device gets an empty answer (no error
    with a traceback, no blocked server, no device read without end), and the server goes
    on answering on an open document."""
    at = _pos(HOVER, "cal", after="get_weather")
    saved = work / "saved.eval"
    saved.write_text(HOVER, encoding="utf-8")
    called = await asyncio.wait_for(_hover(client, _uri(saved), at), 30)
    assert called is not None and PREDICATES["called"].doc in called  # read from disk
    missing = _uri(work / "missing.eval")
    assert await asyncio.wait_for(_hover(client, missing, at), 30) is None
    fifo = work / "fifo.eval"
    os.mkfifo(fifo)
    assert await asyncio.wait_for(_hover(client, _uri(fifo), at), 30) is None
    assert await asyncio.wait_for(_symbols(client, _uri(fifo)), 30) == []
    assert await asyncio.wait_for(_symbols(client, "file:///dev/zero"), 30) == []
    assert not await asyncio.wait_for(_format(client, "file:///dev/zero"), 30)
    uri = _open(client, work / "open.eval", HOVER)
    still = await asyncio.wait_for(_hover(client, uri, at), 30)
    assert still is not None and PREDICATES["called"].doc in still
    _close(client, uri)
