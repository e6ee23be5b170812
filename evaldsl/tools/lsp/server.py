"""The server: the editor's requests over stdio, answered by the features beside it.

Takes LSP messages (pygls 2) and gives responses: diagnostics as `evaldsl check` reports
them (on open, on change after a pause, on save), hover, completion, go to definition,
formatting (the same code as `evaldsl fmt`), quick fixes (for the diagnostics of the
text as it is: none while a newer version waits for its check) and document symbols (the
suite and its cases, for the outline). It always announces
UTF-16 positions.

It survives its protocol: messages are read by `framing.py` (bounded, resynchronising),
a request whose parameters do not fit the method gets an Invalid Params error, a request
after `shutdown` an Invalid Request error, and `exit` ends the process with 0 after
`shutdown` and 1 without (the LSP specification). Work that reads files (hover's trace
summary and tool counts, completion's names from a case's files, other files' lines for
their diagnostics) runs on worker threads, never on the event loop.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from collections.abc import Callable, Generator, Sequence
from typing import Any, BinaryIO
from urllib.parse import unquote

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method
from pygls.uris import from_fs_path

from evaldsl.format.formatter import format_text
from evaldsl.language.diagnostics import Diagnostic, EvalDslError
from evaldsl.language.limits import MAX_LSP_FILE_BYTES
from evaldsl.language.reading import FileProblem, read_regular
from evaldsl.runs import prices
from evaldsl.suites.model import SuiteDraft
from evaldsl.tools.lsp.actions import quick_fixes, wanted, yaml_fixable
from evaldsl.tools.lsp.analysis import Analysis
from evaldsl.tools.lsp.completion import completions_at
from evaldsl.tools.lsp.definition import definition_at
from evaldsl.tools.lsp.documents import (
    EditorWorkspace,
    Kind,
    Lines,
    buffer_lines,
    cursor,
    diagnostics_by_file,
    document_kind,
    document_path,
    is_suite_text,
    lsp_diagnostic,
    lsp_position,
)
from evaldsl.tools.lsp.framing import INVALID_REQUEST, SERVER_NOT_INITIALIZED, read_messages
from evaldsl.tools.lsp.hover import hover_at
from evaldsl.tools.lsp.symbols import document_symbols, flat_symbols

log = logging.getLogger("evaldsl.lsp")

#: How long the buffer must stay unchanged before it is checked again (seconds).
DEBOUNCE_SECONDS = 0.25


class _Protocol(LanguageServerProtocol):
    """Always UTF-16: the conversions in `evaldsl.language.source` are the only ones there are.

    It is also what `framing.read_messages` dispatches to: it answers what pygls would drop
    (parameters of the wrong type, requests after `shutdown`) with a JSON-RPC error.
    """

    shut_down = False  # the client asked the server to shut down
    initialized = False  # the client sent `initialize`

    def dispatch(self, data: dict[str, Any]) -> None:
        """Handle one decoded message; a request that cannot be handled gets an error."""
        method = data.get("method")
        msg_id = data.get("id")
        request = "id" in data and isinstance(method, str)
        if not self.initialized and method not in (types.INITIALIZE, types.EXIT):
            # the LSP specification: a request before `initialize` gets ServerNotInitialized
            # and a notification is dropped (there is no workspace to answer from yet)
            if request:
                self.send_error(msg_id, SERVER_NOT_INITIALIZED, f"{method} before initialize")
            return
        if self.shut_down and request and method != types.EXIT:
            self.send_error(
                msg_id, INVALID_REQUEST, f"Invalid Request: {method} after shutdown (exit only)"
            )
            return
        try:
            message = self.structure_message(data)
        except JsonRpcException as err:  # parameters that do not fit the method's types
            if request:
                self.send_error(msg_id, err.code, f"{err.message}: not the parameters of {method}")
            else:
                log.error("dropped a %s notification: %s", method, err)
            return
        self.handle_message(message)

    def send_error(self, msg_id: str | int | None, code: int, message: str) -> None:
        """Answer a request (or the stream, with id None) with a JSON-RPC error."""
        # a plain object: pygls's own response type leaves out an id of null, which JSON-RPC
        # requires in the answer to a message whose id cannot be read
        error = {"code": code, "message": message}
        self._send_data({"jsonrpc": "2.0", "id": msg_id, "error": error})

    @lsp_method(types.SHUTDOWN)
    def lsp_shutdown(self, *args: Any) -> Generator[Any, Any, None]:
        yield from super().lsp_shutdown(*args)
        self.shut_down = True

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(
        self, params: types.InitializeParams
    ) -> Generator[Any, Any, types.InitializeResult]:
        general = params.capabilities.general
        if general is not None:
            general.position_encodings = [types.PositionEncodingKind.Utf16]
        self.initialized = True
        result: types.InitializeResult = yield from super().lsp_initialize(params)
        # pygls made its workspace above, before any document is opened: the same state,
        # but documents whose lines end where the editor's do
        self.workspace.__class__ = EditorWorkspace
        return result


class EvalDslServer(LanguageServer):
    """The evaldsl language server: state for debounced checks and published files."""

    def __init__(self, version: str) -> None:
        super().__init__("evaldsl", version, protocol_cls=_Protocol)
        self.pending: dict[str, asyncio.Task[None]] = {}
        self.open: set[str] = set()
        self.suites: set[str] = set()  # open YAML/JSON documents that read as a suite once
        # diagnostics a document's check found in other files: owner → file → diagnostics
        self.foreign: dict[str, dict[str, list[types.Diagnostic]]] = {}
        # a checked open document's own diagnostics, and the version they are for
        self.own: dict[str, tuple[int | None, list[types.Diagnostic]]] = {}
        self._analyses: dict[str, tuple[int | None, Analysis]] = {}
        # one check runs at a time (see `_validate`); made at the first check, in the loop
        self._checking: asyncio.Lock | None = None
        self.exit_code = 1  # until the client says `shutdown` then `exit`

    def start_io(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
        """Serve over stdio until `exit` or the end of the input; `exit_code` is then 0 after
        `shutdown` and 1 otherwise."""
        protocol = self.protocol
        assert isinstance(protocol, _Protocol)
        protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        try:
            asyncio.run(read_messages(stdin or sys.stdin.buffer, protocol))
            self.exit_code = 0 if protocol.shut_down else 1
        except SystemExit as done:  # pygls's `exit` handler: 0 after shutdown, else 1
            self.exit_code = done.code if isinstance(done.code, int) else 1
        except BrokenPipeError:
            log.error("the client closed the connection")
            self.exit_code = 1
        finally:
            self.shutdown()  # type: ignore[no-untyped-call]  # pygls's own, untyped

    def is_open(self, uri: str) -> bool:
        """Whether the editor holds `uri` open (its buffer, not the file on disk, is the text)."""
        return unquote(uri) in self.workspace.text_documents

    async def analysis_of(self, uri: str) -> Analysis | None:
        """`analysis` of an open document; one that is not open is read from disk on a
        worker thread, and only when it is a regular file (`disk_text`): pygls's own
        reading would block on a named pipe and read a device without end. None when it
        cannot be read: the request gets an empty answer."""
        if self.is_open(uri):
            return self.analysis(uri)
        doc = self.workspace.get_text_document(uri)  # (its text is only read when asked)
        path = document_path(doc)
        text = await asyncio.to_thread(disk_text, uri, path)
        if text is None:
            return None
        return Analysis(text, path, document_kind(path, doc.language_id))

    def analysis(self, uri: str) -> Analysis:
        """The analysis of an open document's buffer, made once a version."""
        doc = self.workspace.get_text_document(uri)
        cached = self._analyses.get(uri)
        if cached is not None and cached[0] == doc.version and cached[0] is not None:
            return cached[1]
        path = document_path(doc)
        found = Analysis(doc.source, path, document_kind(path, doc.language_id))
        self._analyses[uri] = (doc.version, found)
        return found

    def formatted(self, uri: str) -> list[types.TextEdit] | None:
        """The edit that lays an `.eval` buffer out as `evaldsl fmt` does (none for a
        buffer with a syntax error; None for a YAML or JSON suite)."""
        analysis = self.analysis(uri)
        if analysis.kind != "eval":
            return None
        doc = self.workspace.get_text_document(uri)
        version, found = self.own.get(uri, (None, []))
        # this version's check found a syntax error (E1xx): formatting would parse the
        # whole buffer again only to leave it as it is (format on save)
        syntax = any(str(d.code).startswith("E1") for d in found)
        if syntax and version is not None and version == doc.version:
            return []
        return format_edits(doc.source, analysis.path)

    def markdown(self, formats: Sequence[types.MarkupKind] | None) -> bool:
        return formats is None or types.MarkupKind.Markdown in formats

    # diagnostics

    def schedule(self, uri: str, delay: float) -> None:
        """Check a document after `delay` seconds; a newer request cancels this one."""
        old = self.pending.pop(uri, None)
        if old is not None:
            old.cancel()
        task = asyncio.get_running_loop().create_task(self._validate(uri, delay))
        self.pending[uri] = task

        def done(t: asyncio.Task[None]) -> None:
            if self.pending.get(uri) is t:
                del self.pending[uri]

        task.add_done_callback(done)

    async def _validate(self, uri: str, delay: float) -> None:
        if delay:
            await asyncio.sleep(delay)
        # One check at a time. A check cancelled by a newer version cannot stop its thread,
        # and checks of the versions a fast typist left behind ran beside the newest one,
        # sharing the interpreter with it (8 keys 300 ms apart on a 4,000-line buffer of
        # errors: the last key's diagnostics came after 2.5 s, one key's after 1.2 s). The
        # newest waits for the one running and then checks the text as it is then; those
        # cancelled while they wait never start.
        if self._checking is None:
            self._checking = asyncio.Lock()
        async with self._checking:
            await self._check(uri)

    async def _check(self, uri: str) -> None:
        if not self.is_open(uri):
            return  # (a save or change of a document never opened: nothing to check)
        doc = self.workspace.get_text_document(uri)
        version, text = doc.version, doc.source
        path = document_path(doc)
        kind = document_kind(path, doc.language_id)
        # the user's price table (EVALDSL_PRICES) edited since the last check: its W513
        # is the file's as it is now, in every open document, not until a restart
        if await asyncio.to_thread(prices.reread_if_changed):
            for other in self.open - {uri}:
                self.schedule(other, 0)
        # this version's analysis: the check and the features (hover, completion) share
        # its one draft of the buffer
        analysis = self.analysis(uri)
        running = asyncio.ensure_future(
            asyncio.to_thread(self.suite_diagnostics, uri, text, path, kind, analysis.drafted)
        )
        try:
            suite, groups = await asyncio.shield(running)
        except asyncio.CancelledError:
            # a newer version: this check's thread runs on, and the next waits for it
            await asyncio.wait({running})
            running.exception()  # (a failure of a check no one waits for is dropped)
            raise
        except Exception as err:  # a bug in a check must not silence the server
            log.exception("checking %s failed", path)
            self.window_log_message(
                types.LogMessageParams(types.MessageType.Error, f"evaldsl: {err}")
            )
            return
        if uri not in self.open or self.workspace.get_text_document(uri).version != version:
            return
        if suite:
            self.suites.add(uri)
        own = os.path.normpath(os.path.abspath(path))
        lines = buffer_lines(text)
        # in a YAML suite, a fix of DSL text must leave the YAML around it as it was
        layout = analysis.layout if kind == "yaml" else None
        self.own[uri] = (
            version,
            [
                lsp_diagnostic(
                    d, lines, layout is None or d.fix is None or yaml_fixable(d.fix, layout, lines)
                )
                for d in groups.pop(own, [])
            ],
        )
        foreign: dict[str, list[types.Diagnostic]] = {}
        for other, diags in groups.items():
            other_uri = from_fs_path(other)
            if other_uri is None:
                continue
            if other_uri in self.open:
                lines = buffer_lines(self.workspace.get_text_document(other_uri).source)
            else:  # a file on disk: read on a worker thread, never on the event loop
                lines = await asyncio.to_thread(file_lines, other)
            # (no fixes: a dataset's problems are not edits of DSL text)
            foreign[other_uri] = [lsp_diagnostic(d, lines, fix=False) for d in diags]
        self._set_foreign(uri, foreign)
        self.publish(uri)

    def suite_diagnostics(
        self, uri: str, text: str, path: str, kind: Kind, draft: Callable[[], SuiteDraft]
    ) -> tuple[bool, dict[str, list[Diagnostic]]]:
        """Whether a buffer reads as a suite, and its `diagnostics_by_file` (on a worker
        thread). A YAML or JSON buffer that was a suite since it was opened is checked as
        one after an edit that leaves none of its keys a suite's (`casez:`): cleared
        diagnostics would hide the suite just broken, where `check` says E504 and how to
        mend it. A file that never was one (a CI workflow) gets none."""
        suite = is_suite_text(text, kind)
        found = diagnostics_by_file(text, path, kind, draft, suite=suite or uri in self.suites)
        return suite, found

    def readers_of(self, uri: str) -> list[str]:
        """The open documents whose check reads the file `uri` (a dataset): those that
        found problems in it, and those whose cases name it (it may be broken now)."""
        doc = self.workspace.get_text_document(uri)
        path = os.path.normpath(os.path.abspath(document_path(doc)))
        found = []
        for owner in sorted(self.open - {uri}):
            cached = self._analyses.get(owner)  # (every open document was checked once)
            if uri in self.foreign.get(owner, {}) or (
                cached is not None and path in cached[1].dataset_files()
            ):
                found.append(owner)
        return found

    def publish(self, uri: str) -> None:
        """A document's own diagnostics (if it is open and checked) and those other
        documents' checks found in it (a dataset file's problems)."""
        version, own = self.own.get(uri, (None, []))
        found = [
            d for owner, files in self.foreign.items() if owner != uri for d in files.get(uri, [])
        ]
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=own + found, version=version)
        )

    def _set_foreign(self, owner: str, found: dict[str, list[types.Diagnostic]]) -> None:
        before = self.foreign.pop(owner, {})
        if found:
            self.foreign[owner] = found
        for uri in set(before) | set(found):
            if uri != owner:
                self.publish(uri)

    def closed(self, uri: str) -> None:
        self.open.discard(uri)
        self.suites.discard(uri)
        self._analyses.pop(uri, None)
        task = self.pending.pop(uri, None)
        if task is not None:
            task.cancel()
        self.own.pop(uri, None)
        self._set_foreign(uri, {})
        self.publish(uri)  # cleared, but for what open suites found in this file


def build_server(version: str) -> EvalDslServer:
    """The server with its features registered."""
    server = EvalDslServer(version)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(ls: EvalDslServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.open.add(params.text_document.uri)
        ls.schedule(params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    async def did_change(ls: EvalDslServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, DEBOUNCE_SECONDS)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    async def did_save(ls: EvalDslServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, 0)
        # a suite's check reads its dataset from disk: saved, its problems are others now
        for reader in ls.readers_of(params.text_document.uri):
            ls.schedule(reader, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    async def did_close(ls: EvalDslServer, params: types.DidCloseTextDocumentParams) -> None:
        ls.closed(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(ls: EvalDslServer, params: types.HoverParams) -> types.Hover | None:
        analysis = await ls.analysis_of(params.text_document.uri)
        if analysis is None:
            return None
        line0, column0 = cursor(analysis.lines, params.position)
        # hover may read the case's files (a trace summary, tool counts): off the loop
        found = await asyncio.to_thread(hover_at, analysis, line0, column0)
        if found is None:
            return None
        doc, spot, start, end = found
        caps = ls.client_capabilities.text_document
        formats = caps.hover.content_format if caps and caps.hover else None
        kind = types.MarkupKind.Markdown if ls.markdown(formats) else types.MarkupKind.PlainText
        return types.Hover(
            contents=types.MarkupContent(kind=kind, value=doc),
            range=types.Range(
                start=lsp_position(analysis.lines, *spot.host(start)),
                end=lsp_position(analysis.lines, *spot.host(end)),
            ),
        )

    @server.feature(
        types.TEXT_DOCUMENT_COMPLETION,
        types.CompletionOptions(trigger_characters=[" ", ".", "["]),
    )
    async def completion(ls: EvalDslServer, params: types.CompletionParams) -> types.CompletionList:
        analysis = await ls.analysis_of(params.text_document.uri)
        if analysis is None:
            return types.CompletionList(is_incomplete=False, items=[])
        line0, column0 = cursor(analysis.lines, params.position)
        caps = ls.client_capabilities.text_document
        item_caps = caps.completion.completion_item if caps and caps.completion else None
        markdown = item_caps is not None and ls.markdown(item_caps.documentation_format or [])
        items = []
        # completion offers names from the case's files (tools, nodes, keys): off the loop
        offers = await asyncio.to_thread(completions_at, analysis, line0, column0)
        for offer in offers:
            doc: str | types.MarkupContent | None = offer.doc
            if offer.doc is not None and markdown:
                doc = types.MarkupContent(kind=types.MarkupKind.Markdown, value=offer.doc)
            items.append(
                types.CompletionItem(
                    label=offer.label,
                    kind=offer.kind,
                    detail=offer.detail,
                    documentation=doc,
                    sort_text=f"{offer.rank}{offer.label}",
                    insert_text=offer.insert,
                )
            )
        return types.CompletionList(is_incomplete=False, items=items)

    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    async def definition(ls: EvalDslServer, params: types.DefinitionParams) -> list[types.Location]:
        analysis = await ls.analysis_of(params.text_document.uri)
        if analysis is None:
            return []
        line0, column0 = cursor(analysis.lines, params.position)
        top = types.Range(start=types.Position(0, 0), end=types.Position(0, 0))
        found = await asyncio.to_thread(definition_at, analysis, line0, column0)  # stats files
        return [
            types.Location(uri=uri, range=top)
            for uri in (from_fs_path(str(p.resolve())) for p in found)
            if uri is not None
        ]

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
    )
    def code_action(
        ls: EvalDslServer, params: types.CodeActionParams
    ) -> list[types.CodeAction] | None:
        uri = params.text_document.uri
        version, own = ls.own.get(uri, (None, []))
        if (
            not wanted(params.context.only)
            or version != ls.workspace.get_text_document(uri).version
        ):
            return []  # (diagnostics of an older text: their edits would land elsewhere)
        return quick_fixes(uri, own, params.range)

    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    async def symbols(
        ls: EvalDslServer, params: types.DocumentSymbolParams
    ) -> list[types.DocumentSymbol] | list[types.SymbolInformation]:
        uri = params.text_document.uri
        # the buffer's draft, made on a worker thread if no check has made it yet
        analysis = await ls.analysis_of(uri)
        if analysis is None:
            return []
        found = await asyncio.to_thread(document_symbols, analysis)
        caps = ls.client_capabilities.text_document
        wanted = caps.document_symbol if caps is not None else None
        if wanted is not None and wanted.hierarchical_document_symbol_support:
            return found
        return flat_symbols(uri, found)

    @server.feature(types.TEXT_DOCUMENT_FORMATTING)
    async def formatting(
        ls: EvalDslServer, params: types.DocumentFormattingParams
    ) -> list[types.TextEdit] | None:
        uri = params.text_document.uri
        if ls.is_open(uri):
            return ls.formatted(uri)
        analysis = await ls.analysis_of(uri)  # (a file on disk, if it is a regular one)
        if analysis is None:
            return []
        return format_edits(analysis.text, analysis.path) if analysis.kind == "eval" else None

    return server


def format_edits(text: str, path: str) -> list[types.TextEdit] | None:
    """One edit replacing the whole buffer with `evaldsl fmt`'s layout; none on errors."""
    try:
        formatted = format_text(text, path)
    except EvalDslError:
        return []  # a buffer with syntax errors is left as it is
    if formatted == text:
        return []
    lines = buffer_lines(text)
    end = lsp_position(lines, len(lines) - 1, len(lines[-1]))
    return [
        types.TextEdit(range=types.Range(start=types.Position(0, 0), end=end), new_text=formatted)
    ]


def file_lines(path: str) -> Lines:
    """The lines of a file on disk, for positions in its diagnostics ([] when it cannot be
    read: a folder, a pipe, a device or a file over `MAX_LSP_FILE_BYTES`)."""
    try:
        return buffer_lines(read_regular(path, MAX_LSP_FILE_BYTES).decode("utf-8-sig"))
    except (FileProblem, UnicodeDecodeError):
        return Lines()


def disk_text(uri: str, path: str) -> str | None:
    """The text of a document the editor has not opened, from disk; None (nothing to
    answer) unless it is a `file:` URI of a regular file of at most `MAX_LSP_FILE_BYTES`
    in UTF-8 (never a pipe, which would block the server, nor a device, read without end).
    """
    if not uri.startswith("file:"):
        return None
    try:
        return read_regular(path, MAX_LSP_FILE_BYTES).decode("utf-8")
    except (FileProblem, UnicodeDecodeError) as why:
        log.info("not reading %s: %s", uri, why)
        return None


def _no_deserialize_tracebacks(record: logging.LogRecord) -> bool:
    return not str(record.msg).startswith("Unable to deserialize message")


def main() -> int:
    """Serve over stdio until the client says exit; the process's exit code."""
    from evaldsl.version import __version__  # the package imports this module's parents first

    logging.basicConfig(level=logging.WARNING, format="evaldsl lsp: %(message)s")
    # pygls logs a traceback for parameters it cannot read; the client gets an error
    # response for them instead (`_Protocol.dispatch`), and the log one line
    logging.getLogger("pygls.protocol.json_rpc").addFilter(_no_deserialize_tracebacks)
    server = build_server(__version__)
    server.start_io()
    return server.exit_code
