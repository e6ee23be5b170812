"""Inspect AI's `.eval` logs (ZIP archives, `runs/inspectzip.py`): read as the JSON log
they hold is read, whatever stage the eval reached; samples in one order; a damaged or
foreign archive a clear error; never taken for an evaldsl suite."""

from __future__ import annotations

import copy
import io
import json
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import evaldsl
from evaldsl.format.formatter import fmt_command
from evaldsl.runner import run_suites
from evaldsl.runs import RunError, detect, inspectzip, load_run, samplelogs
from evaldsl.score import items
from evaldsl.suites import load_suite
from evaldsl.suites.files import discover, is_suite_file, read_draft
from evaldsl.tools.pytest_collect import wants

ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT / "tests" / "fixtures" / "realworld" / "inspect-ai-eval-log" / "log_read_sample.json"
TWO = ROOT / "tests" / "data" / "formats" / "inspect-two-samples.json"


@pytest.fixture(autouse=True)
def _nothing_kept() -> Iterator[None]:
    samplelogs.forget()
    yield
    samplelogs.forget()


def entry(value: Any) -> str:
    return json.dumps(value, indent=2)  # (as Inspect writes its entries)


def write_eval(path: Path, log: dict[str, Any], *, stage: str = "finished") -> None:
    """`log` (a JSON log) as Inspect AI writes it in its `.eval` format: a finished eval
    (its journal's start, `header.json`, the samples, `summaries.json`), one still running
    (the journal only, no header), or the format's first version (`start.json`,
    `results.json`); samples written last first, as an eval's may finish in any order."""
    log = copy.deepcopy(log)
    samples = log.pop("samples")
    start = {k: log[k] for k in ("version", "eval", "plan") if k in log}
    results = {k: log[k] for k in ("status", "stats", "results", "error") if k in log}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        if stage == "first version":
            z.writestr("start.json", entry(start))
        else:
            z.writestr("_journal/start.json", entry(start))
        for s in reversed(samples):
            z.writestr(f"samples/{s['id']}_epoch_{s.get('epoch', 1)}.json", entry(s))
        if stage == "finished":
            z.writestr("summaries.json", entry([{"id": s["id"]} for s in samples]))
            z.writestr("header.json", entry(log))
        elif stage == "first version":
            z.writestr("results.json", entry(results))


def json_log(path: Path) -> dict[str, Any]:
    value: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return value


@pytest.mark.parametrize("stage", ["finished", "running", "first version"])
def test_an_eval_log_reads_as_the_json_log_it_holds(tmp_path: Path, stage: str) -> None:
    archive = tmp_path / "log.eval"
    write_eval(archive, json_log(REAL), stage=stage)
    zipped, plain = load_run(archive), load_run(REAL)
    assert zipped.events == plain.events and zipped.latency_ms == plain.latency_ms
    assert zipped.format == "inspect" == load_run(archive, "inspect").format
    statements = 'steps == 1\nanswer starts with "Yes"\ninput tokens == 66\nlatency < 3s'
    assert evaldsl.compile(statements).check(str(archive)).statuses == ["pass"] * 4


@pytest.mark.parametrize("form", ["log.eval", "log.json"])
def test_its_samples_become_cases_in_one_order(tmp_path: Path, form: str) -> None:
    """A `.eval` archive and a JSON log alike (the JSON log's were in file order)."""
    log = json_log(TWO)
    fr, de = log["samples"]
    log["samples"] = [
        {**fr, "id": 10},
        {**de, "id": 2, "epoch": 2},
        {**fr, "id": "a"},
        {**de, "id": 2},
    ]
    archive = tmp_path / form
    if form == "log.eval":
        write_eval(archive, log)
    else:
        archive.write_text(json.dumps(log), encoding="utf-8")
    suite = tmp_path / "s.eval"
    suite.write_text(f'case "c"\n  cassette "{form}"\n  tokens < 100\n', encoding="utf-8")
    loaded = load_suite(suite)
    assert not loaded.diagnostics
    # epoch first, then the id: numbers by value, before texts
    assert [c.name for c in loaded.cases] == ["c [2]", "c [10]", "c [a]", "c [2@2]"]
    report = run_suites([loaded])
    assert [c.passed for c in report.suites[0].cases] == [True] * 4
    assert load_run(archive, sample="a").events == load_run(archive, sample="10").events


def test_a_log_of_several_samples_is_read_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    archive = tmp_path / "log.eval"
    write_eval(archive, json_log(TWO))
    reads: list[str] = []
    read = inspectzip.read_eval_zip
    monkeypatch.setattr(inspectzip, "read_eval_zip", lambda p: reads.append(p) or read(p))
    suite = tmp_path / "s.eval"
    suite.write_text('case "c"\n  cassette "log.eval"\n  tokens < 100\n', encoding="utf-8")
    report = run_suites([load_suite(suite)])
    assert len(report.suites[0].cases) == 2 and report.ok
    assert len(reads) == 1


def _stored(members: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return out.getvalue()


def _off_by(data: bytes, delta: int) -> bytes:
    """`data` with its central directory's offset (end record) moved by `delta`: a read
    seeks before the archive's start (a `ValueError` of Python's, not a ZIP error)."""
    damaged = bytearray(data)
    end = damaged.rfind(b"PK\x05\x06")
    offset = int.from_bytes(damaged[end + 16 : end + 20], "little")
    damaged[end + 16 : end + 20] = (offset + delta).to_bytes(4, "little")
    return bytes(damaged)


HEADER = entry({k: v for k, v in json.loads(TWO.read_text()).items() if k != "samples"})


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"PK\x03\x04 not a zip at all", "not a readable ZIP archive"),
        (_stored({"notes.txt": b"hello"}), "holds no `header.json`"),
        (_stored({"header.json": b"{oops"}), "entry `header.json`: invalid JSON"),
        (_stored({"header.json": b"[1, 2]"}), "entry `header.json` is a list"),
        (
            _stored({"header.json": HEADER.encode(), "samples/1_epoch_1.json": b"{"}),
            "entry `samples/1_epoch_1.json`: invalid JSON",
        ),
        (_stored({"header.json": HEADER.encode()})[:-30], "not a readable ZIP archive"),
        (_off_by(_stored({"header.json": HEADER.encode()}), 0x20000), "damaged"),
    ],
    ids=[
        "not a zip",
        "no header",
        "bad header",
        "header not object",
        "bad sample",
        "cut",
        "offset",
    ],
)
def test_a_bad_archive_is_an_error_naming_the_file_and_entry(
    tmp_path: Path, data: bytes, message: str
) -> None:
    archive = tmp_path / "log.eval"
    archive.write_bytes(data)
    with pytest.raises(RunError, match=message) as caught:
        load_run(archive)
    assert caught.value.path == str(archive)
    # a suite naming it: the case's error, never a pass; nothing expands
    assert detect.inspect_samples(archive) == []
    result = evaldsl.compile("tokens < 100").check(str(archive))
    assert result.statuses == ["error"] and message.split("`")[0] in (result.error or "")


def test_an_archive_larger_once_decompressed_than_the_bound_stops_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(inspectzip, "MAX_DOCUMENT_BYTES", 100_000)
    archive = tmp_path / "bomb.eval"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("header.json", HEADER)
        z.writestr("samples/1_epoch_1.json", b'{"id": 1, "pad": "' + b"0" * 500_000 + b'"}')
    assert archive.stat().st_size < 10_000
    with pytest.raises(RunError, match="more than 100,000 bytes once decompressed"):
        load_run(archive)


def test_a_compression_python_cannot_read_says_how_to_convert(tmp_path: Path) -> None:
    data = bytearray(_stored({"header.json": HEADER.encode()}))
    # the method field (9: Deflate64) in the local header and in the central directory
    data[8:10] = (9).to_bytes(2, "little")
    central = data.index(b"PK\x01\x02")
    data[central + 10 : central + 12] = (9).to_bytes(2, "little")
    archive = tmp_path / "old.eval"
    archive.write_bytes(bytes(data))
    with pytest.raises(RunError, match="a method Python cannot read") as caught:
        load_run(archive)
    assert "inspect log convert --to json" in (caught.value.hint or "")


def test_an_eval_log_is_never_taken_for_a_suite(tmp_path: Path) -> None:
    log = tmp_path / "logs" / "run.eval"
    log.parent.mkdir()
    write_eval(log, json_log(TWO))
    suite = tmp_path / "logs" / "checks.eval"
    suite.write_text('case "c"\n  cassette "run.eval"\n  tokens < 100\n', encoding="utf-8")
    assert discover([tmp_path])[0] == [suite]
    assert not is_suite_file(log) and is_suite_file(suite)
    assert not wants(log, None, named=True)  # type: ignore[arg-type]  (no config read)
    named = read_draft(log)
    assert [d.code for d in named.diagnostics] == ["E504"]
    assert "Inspect AI log" in named.diagnostics[0].message
    out, err = io.StringIO(), io.StringIO()
    assert fmt_command([str(tmp_path)], check=True, diff=False, out=out, err=err) == 0
    assert fmt_command([str(log)], check=True, diff=False, out=out, err=err) == 1
    assert "is an Inspect AI log" in err.getvalue()
    # `evaldsl score` walks a folder for it, not for the suite beside it
    assert [i.key for i in items([str(tmp_path)])] == [str(log)]
