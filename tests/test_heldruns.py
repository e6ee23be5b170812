"""A recording read whole by a case's check is read once a command (`runs/heldruns.py`).

`evaldsl run` read such a file (a JSON document: an OTLP export, an OpenAI or Anthropic
body) whole when checking its case and whole again when running it. The check's run is
now held for the run: the file is decoded once, and the report is what reading it twice
gave, serial and with `-j 2`. Two documents are never held at once; an error is still the
check's, at its place; outside a command's reading (the API, between two checks of the
language server) nothing is held.
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

import evaldsl
from evaldsl.check import sources
from evaldsl.runner import produce
from evaldsl.runs import detect, heldfiles, heldruns, otlpdecode, samplelogs
from evaldsl.runs.detect import inspect_samples
from evaldsl.runs.heldfiles import HOLD_BYTES, held_value, reading_once
from evaldsl.runs.model import RunError
from evaldsl.runs.reads import EVERYTHING, Reads, reading
from evaldsl.suites.build import check_text
from evaldsl.tools.cli import main
from tests.clitools import run_evaldsl
from tests.inspectlogs import write_log

REALWORLD = Path(__file__).resolve().parent / "fixtures" / "realworld"

#: Statements for the documents below: passes and failures, found values, arguments,
#: results, answers, and the metrics every case reports.
STATEMENTS = """\
tool get_weather called at least 2 times
tool get_weather args $.location == "Nowhere"
every tool get_weather args $.location matches /^[A-Z]/
tool get_weather result matches /sunny|SUNNY/
tools contains any [get_weather, search]
no tool delete_database
steps >= 3
"""
OTHER = """\
tool get_weather called at least 1 times
tool get_weather result contains "raining"
answer contains "weather"
"""


def _chat(path: Path, copies: int = 1700) -> Path:
    """An OpenAI chat request of many turns (the real one's, `copies` times over), over
    1 MiB (a smaller document detected is decoded whole when looked at for samples)."""
    doc = json.loads(
        (REALWORLD / "openai-chat-messages/request-with-tool-results.json").read_text()
    )
    turns = doc["messages"][1:]
    messages = doc["messages"][:1]
    for k in range(copies):
        text = json.dumps(turns).replace("call_", f"call_{k}_")
        text = text.replace("get_current_weather", "get_weather")
        messages += json.loads(text)
    doc["messages"] = messages
    path.write_text(json.dumps(doc))  # (compact: one line, as most writers write it)
    return path


def _spans(path: Path, copies: int = 80, *, indent: int | None = None) -> Path:
    """An OTLP document of many traces (the real Latitude one's, each copy its own ids),
    over 1 MiB: read by the typed decoder."""
    text = (REALWORLD / "otel-latitude-otlp/trace.otlp.json").read_text()
    doc = json.loads(text)
    resource = json.dumps(doc["resourceSpans"][0])
    doc["resourceSpans"] = [
        json.loads(re.sub(r'"ID_(\d+)"', rf'"ID_\1_{k}"', resource)) for k in range(copies)
    ]
    path.write_text(json.dumps(doc, indent=indent))
    return path


def _suite(folder: Path, cases: list[tuple[str, str]]) -> Path:
    """A suite of a case per (source line, statements)."""
    text = "".join(
        f'case "c{i}"\n{source}\n{statements}\n' for i, (source, statements) in enumerate(cases)
    )
    suite = folder / "suite.eval"
    suite.write_text(text)
    return suite


@pytest.fixture
def decoded(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The sizes of the texts of at least `HOLD_BYTES` decoded whole from now on (by
    orjson, or by the typed OTLP decoder)."""
    sizes: list[int] = []
    loads, document = detect.mended_loads, otlpdecode.read_otel_document

    def counted_loads(raw: Any) -> Any:
        if len(raw) > HOLD_BYTES:
            sizes.append(len(raw))
        return loads(raw)

    def counted_document(path: str, data: bytes, why: Any) -> Any:
        sizes.append(len(data))
        return document(path, data, why)

    monkeypatch.setattr(detect, "mended_loads", counted_loads)
    monkeypatch.setattr(otlpdecode, "read_otel_document", counted_document)
    return sizes


def _report(suite: Path, tmp_path: Path, *options: str) -> tuple[int, Any]:
    """The exit code and JSON report of `evaldsl run` in this process, times left out."""
    out = tmp_path / "report.json"
    code = main(
        ["run", "-q", "--no-history", "--judge", "off", *options, "--json", str(out), str(suite)]
    )
    return code, _timeless(json.loads(out.read_text()))


def _timeless(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _timeless(v) for k, v in value.items() if k not in ("duration_ms", "created")}
    if isinstance(value, list):
        return [_timeless(v) for v in value]
    return value


def _read_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each case's run reads its recording again (as before runs were held)."""
    monkeypatch.setattr(produce, "take", lambda recording: None)


SOURCES = {
    "chat, detected": ("chat.json", 'cassette "chat.json"'),
    "chat, named": ("chat.json", 'trace "chat.json" as openai'),
    "spans, detected": ("spans.json", 'cassette "spans.json"'),
    "spans, named": ("spans.json", 'trace "spans.json" as otel'),
    "spans indented, named": ("pretty.json", 'trace "pretty.json" as otel'),
}


#: Cases on three documents, two on each of two.
MIXED = [
    ('trace "spans.json" as otel', STATEMENTS),
    ('trace "spans.json" as otel', OTHER),
    ('cassette "chat.json"', STATEMENTS),
    ('cassette "chat.json"', OTHER),
    ('trace "pretty.json" as otel', OTHER),
]


def _documents(folder: Path) -> None:
    _chat(folder / "chat.json")
    _spans(folder / "spans.json")
    _spans(folder / "pretty.json", indent=2)


@pytest.mark.parametrize("named", sorted(SOURCES))
def test_a_document_is_decoded_once_a_run_with_the_report_of_two_readings(
    named: str, tmp_path: Path, decoded: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    _documents(tmp_path)
    _, source = SOURCES[named]
    suite = _suite(tmp_path, [(source, STATEMENTS)])
    code, report = _report(suite, tmp_path)
    assert len(decoded) == 1, decoded  # the check's reading, held for the run
    case = report["suites"][0]["cases"][0]
    assert case["error"] is None and case["metrics"]["steps"] > 3, case
    assert [a["status"] for a in case["assertions"]].count("pass") >= 4, case
    decoded.clear()
    _read_twice(monkeypatch)
    assert _report(suite, tmp_path) == (code, report)
    assert len(decoded) == 2, decoded  # (the control: the check's and the run's)


def test_cases_on_documents_report_alike_held_or_read_again_serial_and_in_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _documents(tmp_path)
    suite = _suite(tmp_path, MIXED)
    held = _report(suite, tmp_path)
    done = run_evaldsl(
        "run",
        "-q",
        "--no-history",
        "--judge",
        "off",
        "-j",
        "2",
        "--json",
        "j.json",
        str(suite),
        cwd=tmp_path,
    )
    assert done.returncode == held[0], done.stdout + done.stderr
    workers = _timeless(json.loads((tmp_path / "j.json").read_text()))
    _read_twice(monkeypatch)
    assert held == _report(suite, tmp_path)
    assert workers == held[1]


def test_a_serial_run_of_several_documents_decodes_each_once(
    tmp_path: Path, decoded: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    # a run checks the cases of a recording when it comes to them (`runner/turns.py`):
    # each document's check reading is held for its cases' run, not only the last one's
    _documents(tmp_path)
    cases = [*MIXED, ('trace "chat.json" as openai', OTHER), ('trace "spans.json" as otel', OTHER)]
    suite = _suite(tmp_path, cases)
    held = _report(suite, tmp_path)
    recordings = {source for source, _ in cases}
    assert len(decoded) == len(recordings) == 4, decoded
    assert held[0] == 1 and [c["error"] for c in held[1]["suites"][0]["cases"]] == [None] * 7
    decoded.clear()
    _read_twice(monkeypatch)
    assert _report(suite, tmp_path) == held
    assert len(decoded) == 8, decoded  # (the control: each check's and each run's)


def test_two_documents_are_never_held_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _documents(tmp_path)
    suite = _suite(tmp_path, [*MIXED, ('trace "chat.json" as openai', OTHER)])
    beside: list[str] = []  # the files read whole while another's run was held
    load_run = detect.load_run

    def spied(path: Any, *args: Any, **kwargs: Any) -> Any:
        held = held_value()
        if held is not None:
            beside.append(f"{path} beside {held}")
        return load_run(path, *args, **kwargs)

    monkeypatch.setattr(sources, "load_run", spied)
    monkeypatch.setattr(produce, "load_run", spied)
    _report(suite, tmp_path)
    assert beside == []


def test_a_document_that_cannot_be_read_is_the_checks_error_at_its_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "bad.json").write_bytes(b'{"resourceSpans": [' + b'{"x": 1},' * 20000 + b" oops]}")
    (tmp_path / "nothing.json").write_text(json.dumps({"stuff": [{"a": i} for i in range(9000)]}))
    _chat(tmp_path / "chat.json")
    suite = _suite(
        tmp_path,
        [
            ('cassette "bad.json"', "steps > 0"),
            ('trace "nothing.json" as otel', "steps > 0"),
            ('cassette "nothing.json"', "steps > 0"),
            ('cassette "chat.json"', "steps > 0"),
        ],
    )
    code = main(["run", "--no-history", "--judge", "off", "--no-color", str(suite)])
    out = capsys.readouterr().out
    assert code == 1
    assert re.search(r'suite\.eval:2:1: error\[E502\]: cannot read "bad\.json": invalid JSON', out)
    assert re.search(r'suite\.eval:5:1: error\[E502\]: cannot read "nothing\.json"', out)
    assert re.search(r'suite\.eval:8:1: error\[E502\]: cannot read "nothing\.json"', out)
    assert "1 passed, 0 failed, 3 errored" in out, out


def _kept(path: Path, reads: Reads | None = None, fmt: str = "otel") -> Any:
    """The run of `path` read (for `reads`: None, in full) and offered to `heldruns.keep`,
    as a case's check reads it."""
    key = samplelogs.file_key(str(path))
    with reading(reads) if reads is not None else contextlib.nullcontext():
        run = detect.load_run(path, fmt)
        heldruns.keep((str(path), fmt, None), key, run)
    return run


def test_a_held_run_is_taken_once_by_its_recording_read_for_no_less(tmp_path: Path) -> None:
    path = _spans(tmp_path / "spans.json")
    recording = (str(path), "otel", None)
    some = Reads(frozenset({"get_weather"}), frozenset(), False)
    other = Reads(frozenset(), frozenset({"get_weather"}), False)
    with reading_once():
        run = _kept(path)
        assert heldruns.take(recording) is run
        assert heldruns.take(recording) is None  # (taken: let go of)
        _kept(path)
        assert heldruns.take((str(path), None, None)) is None  # another format as written
        assert held_value() is None  # (and let go of: that file is not small)
        run = _kept(path)
        with reading(some):  # read in full: it serves a reading of less
            assert heldruns.take(recording) is run
        _kept(path, some)
        assert heldruns.take(recording) is None  # read for less than everything
        partial = _kept(path, some)
        with reading(some):
            assert heldruns.take(recording) is partial
        _kept(path, some)
        with reading(other):
            assert heldruns.take(recording) is None
        run = _kept(path)
        with reading(EVERYTHING):
            assert heldruns.take(recording) is run
    assert held_value() is None


def test_a_file_changed_since_its_check_is_read_again(tmp_path: Path) -> None:
    path = _spans(tmp_path / "spans.json")
    recording = (str(path), "otel", None)
    with reading_once():
        _kept(path)
        _spans(path, 79)  # another size
        assert heldruns.take(recording) is None
        _kept(path)
        stat = path.stat()
        path.write_bytes(path.read_bytes())  # the same size, a later time
        os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
        assert heldruns.take(recording) is None
        _kept(path)
        assert heldruns.take(recording) is not None  # (unchanged)


def test_only_a_run_held_whole_from_a_file_not_small_is_held(tmp_path: Path) -> None:
    small = tmp_path / "small.json"
    small.write_text((REALWORLD / "otel-latitude-otlp/trace.otlp.json").read_text())
    assert small.stat().st_size <= HOLD_BYTES
    stream = tmp_path / "events.jsonl"
    header = b'{"cassette": "traceplay", "version": 1, "project": "p"}\n'
    event = b'{"type": "tool.call", "name": "search", "callId": "c", "arguments": {}}\n'
    stream.write_bytes(header + event * 2000)
    assert stream.stat().st_size > HOLD_BYTES
    with reading_once():
        _kept(small)
        assert held_value() is None  # (its bytes are kept: reading it again costs little)
        _kept(stream, fmt="traceplay")
        assert held_value() is None  # a stream: each pass reads it anew
    _kept(_spans(tmp_path / "spans.json"))
    assert held_value() is None  # outside a reading: nothing


def test_nothing_is_held_past_a_check_of_the_language_server_or_an_api_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _spans(tmp_path / "spans.json")
    text = f'case "a"\ntrace "spans.json" as otel\n{OTHER}'
    held: list[object] = []
    hold = heldfiles.hold
    monkeypatch.setattr(heldfiles, "hold", lambda value: held.append(value) or hold(value))
    monkeypatch.setattr(heldruns, "hold", heldfiles.hold)
    assert not [d for d in check_text(text, str(tmp_path / "suite.eval")) if d.is_error]
    assert held  # (the check held its run: the reading that ended let it go)
    assert held_value() is None
    program = evaldsl.compile(text, base_dir=tmp_path)  # (reads its source's facts)
    assert held_value() is None  # (outside a reading: offered, never held)
    result = program.check(str(tmp_path / "spans.json"))
    assert result.statuses == ["pass", "fail", "pass"]
    assert held_value() is None


@pytest.mark.parametrize("named", sorted(SOURCES))
def test_a_held_run_is_only_read_by_the_passes_and_reports(
    named: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _documents(tmp_path)
    _, source = SOURCES[named]
    suite = _suite(tmp_path, [(source, STATEMENTS), (source, OTHER)])
    taken: list[tuple[Any, Any]] = []
    take = produce.take

    def spied(recording: Any) -> Any:
        run = take(recording)
        if run is not None:
            taken.append((run, copy.deepcopy(_contents(run))))
        return run

    monkeypatch.setattr(produce, "take", spied)
    _report(suite, tmp_path, "--html", str(tmp_path / "r.html"))
    assert len(taken) == 1
    for run, before in taken:
        assert _contents(run) == before


def _contents(run: Any) -> tuple[Any, ...]:
    return (
        run.events,
        run.state,
        run.output,
        run.path,
        run.format,
        run.latency_ms,
        run.read,
        run.unrecorded,
    )


def test_a_large_log_is_told_by_its_eval_key_however_written(
    tmp_path: Path, decoded: list[int]
) -> None:
    # a large document looked at for Inspect AI samples is no longer decoded whole unless
    # it has an `eval` key: its keys are read alone, escapes and all
    log = tmp_path / "log.json"
    ids = write_log(log, 1500, indent=None)
    doc = json.loads(log.read_text())
    doc = {"EVALKEY" if k == "eval" else k: v for k, v in doc.items()}
    log.write_text(json.dumps(doc).replace('"EVALKEY"', '"\\u0065val"', 1))
    assert log.stat().st_size > detect.OTEL_TYPED_FROM
    samplelogs.forget()
    try:
        assert sorted(inspect_samples(log)) == sorted(ids)
    finally:
        samplelogs.forget()
    assert len(decoded) == 1
    decoded.clear()
    assert inspect_samples(_spans(tmp_path / "spans.json")) == []
    assert decoded == []


@pytest.mark.parametrize("boms", [0, 1, 2])
@pytest.mark.parametrize("named", [None, "openai"])
def test_a_stream_is_told_by_its_first_line_start_after_any_bom(
    boms: int, named: str | None, tmp_path: Path
) -> None:
    # (only a first line's start is decoded to tell a stream: a whole document's line was)
    stream = (REALWORLD / "openai-chat-stream/stream.sse").read_bytes()
    path = tmp_path / "stream.sse"
    path.write_bytes(b"\xef\xbb\xbf" * boms + stream)
    run = detect.load_run(path, named)
    assert (run.format, len(list(run.events or ()))) == (
        "openai",
        len(list(detect.load_run(REALWORLD / "openai-chat-stream/stream.sse").events or ())),
    )
    path.write_bytes(b"\xef\xbb" + stream)  # a BOM cut short: no stream
    with pytest.raises(RunError):
        detect.load_run(path, named)
