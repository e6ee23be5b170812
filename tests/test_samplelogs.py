"""An Inspect AI log of several samples is read once for all the cases it becomes
(`runs/samplelogs.py`), pretty-printed or on one line; the verdicts are those of each
sample read alone, and a file changed since it was read is read again."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import evaldsl
from evaldsl.runner import run_suites
from evaldsl.runs import detect, load_run, samplelogs
from evaldsl.runs.detect import inspect_samples
from evaldsl.runs.summary import summarize
from evaldsl.suites import load_suite
from tests.clitools import run_evaldsl
from tests.inspectlogs import write_log

DATA = Path(__file__).resolve().parent / "data" / "formats"
STATEMENTS = ("answer matches /^(Paris|Berlin) \\d+$/", "tool lookup called once", "tokens < 60")


@pytest.fixture(autouse=True)
def _nothing_kept() -> Iterator[None]:
    samplelogs.forget()
    yield
    samplelogs.forget()


def reads_of(path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The whole readings of `path` from now on (`detect.read_bytes`)."""
    read = detect.read_bytes
    seen: list[str] = []

    def spy(p: str) -> bytes:
        if Path(p) == path:
            seen.append(p)
        return read(p)

    monkeypatch.setattr(detect, "read_bytes", spy)
    return seen


def alone(path: Path, sample: str) -> list[str]:
    """The statuses of `STATEMENTS` on `sample` read by itself (nothing kept)."""
    samplelogs.forget()
    run = load_run(path, sample=sample)
    samplelogs.forget()
    return evaldsl.compile("\n".join(STATEMENTS)).check(run).statuses


@pytest.mark.parametrize("indent", [2, None], ids=["pretty", "one-line"])
@pytest.mark.parametrize("source", ['cassette "log.json"', 'trace "log.json" as inspect'])
def test_a_log_of_many_samples_is_read_once_for_all_its_cases(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, indent: int | None, source: str
) -> None:
    log = tmp_path / "log.json"
    ids = sorted(write_log(log, 12, indent=indent))  # the cases: by id, as text
    expected = {i: alone(log, i) for i in ids}
    assert {tuple(s) for s in expected.values()} == {("pass",) * 3, ("pass", "fail", "pass")}
    suite_file = tmp_path / "s.eval"
    body = "".join(f"  {s}\n" for s in STATEMENTS)
    suite_file.write_text(f'case "c"\n  {source}\n{body}', encoding="utf-8")
    reads = reads_of(log, monkeypatch)
    report = run_suites([load_suite(suite_file)])
    cases = report.suites[0].cases
    assert [c.name for c in cases] == [f"c [{i}]" for i in ids]
    assert {
        i: [a.status for a in c.assertions] for i, c in zip(ids, cases, strict=True)
    } == expected
    assert len(reads) == 1  # once, when the suite was expanded; not once per case and phase


def test_a_kept_log_gives_each_sample_as_a_fresh_reading(tmp_path: Path) -> None:
    log = tmp_path / "log.json"
    write_log(log, 4, indent=2)
    fresh = [load_run(log, sample=f"s{k}") for k in range(4)]
    samplelogs.forget()
    assert inspect_samples(log) == ["s0", "s1", "s2", "s3"]  # (and keeps the log)
    kept = [load_run(log, sample=f"s{k}") for k in (0, 1, 2, 3, 1, 0)]
    assert [r.events for r in kept] == [fresh[k].events for k in (0, 1, 2, 3, 1, 0)]
    # what a case does to its run (an event list it changes) is not the next reading's
    first: Any = kept[0].events
    first.clear()
    assert load_run(log, sample="s0").events == fresh[0].events


def test_a_log_changed_since_it_was_read_is_read_again(tmp_path: Path) -> None:
    log = tmp_path / "log.json"
    write_log(log, 3, indent=2)
    assert inspect_samples(log) == ["s0", "s1", "s2"]
    before = os.stat(log)
    # the same size, one letter changed, the modification time moved on by a second
    log.write_text(log.read_text(encoding="utf-8").replace("Paris 0", "Pariz 0"), "utf-8")
    os.utime(log, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000_000))
    assert os.stat(log).st_size == before.st_size
    run = load_run(log, sample="s0")
    assert evaldsl.compile('answer == "Pariz 0"').check(run).passed
    # and a log with other samples now: other cases
    write_log(log, 2, indent=None)
    assert inspect_samples(log) == ["s0", "s1"]


def test_only_an_inspect_log_on_one_line_is_a_log_of_samples(tmp_path: Path) -> None:
    log = tmp_path / "log.json"
    write_log(log, 3, indent=None)
    assert inspect_samples(log) == ["s0", "s1", "s2"]
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"samples": [1, 2], "eval": "no spec"}), encoding="utf-8")
    assert inspect_samples(other) == []
    lines = tmp_path / "lines.jsonl"  # two logs, one a line: JSONL, not one log
    text = log.read_text(encoding="utf-8")
    lines.write_text(text + "\n" + text + "\n", encoding="utf-8")
    assert inspect_samples(lines) == []


def test_a_log_of_many_samples_runs_alike_in_workers(tmp_path: Path) -> None:
    log = tmp_path / "log.json"
    write_log(log, 12, indent=2)
    suite_file = tmp_path / "s.eval"
    body = "".join(f"  {s}\n" for s in STATEMENTS)
    suite_file.write_text(f'case "c"\n  cassette "log.json"\n{body}', encoding="utf-8")
    reports = []
    for jobs in ("1", "2"):
        out = tmp_path / f"j{jobs}.json"
        done = run_evaldsl("run", "--no-history", "-j", jobs, "--json", str(out), str(suite_file))
        assert done.returncode == 1, done.stdout + done.stderr  # (the Berlin samples call no tool)
        cases = json.loads(out.read_text(encoding="utf-8"))["suites"][0]["cases"]
        reports.append([(c["name"], [a["status"] for a in c["assertions"]]) for c in cases])
    assert reports[0] == reports[1]
    assert len(reports[0]) == 12


def test_each_sample_is_found_without_walking_the_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a suite reads a log of N samples N times over: each sample is looked up by its key
    # in an index made once per log read, not found by walking all N (N² keys)
    from evaldsl.runs import inspect_ai

    log = tmp_path / "log.json"
    ids = sorted(write_log(log, 60, indent=2))  # the cases: by id, as text
    walks = 0
    sample_ids = inspect_ai.sample_ids

    def counting(doc: dict[str, Any]) -> list[str]:
        nonlocal walks
        walks += 1
        return sample_ids(doc)

    monkeypatch.setattr(inspect_ai, "sample_ids", counting)
    suite_file = tmp_path / "s.eval"
    suite_file.write_text('case "c"\n  cassette "log.json"\n  tokens < 1000\n', encoding="utf-8")
    report = run_suites([load_suite(suite_file)])
    assert [c.name for c in report.suites[0].cases] == [f"c [{i}]" for i in ids]
    assert walks == 2  # the expansion, and the index, made once (was once per reading)


def test_the_samples_index_keeps_nothing_past_its_log() -> None:
    # the index of a log's samples is let go with the log's items: a sample's objects
    # die with them
    import gc
    import weakref

    from evaldsl.runs.inspect_ai import read_inspect
    from evaldsl.runs.providers import Items

    class Marker:
        pass

    log = json.loads((DATA / "inspect-two-samples.json").read_text(encoding="utf-8"))
    marker = Marker()
    log["samples"][1]["metadata"] = {"marker": marker}
    alive = weakref.ref(marker)
    items = Items("log.json", [log], "document")
    assert read_inspect(items, "test", "de")[0].events  # (indexed, and read)
    del log, marker, items
    gc.collect()
    assert alive() is None


def test_a_log_of_one_sample_is_read_once_by_inspect_and_by_a_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # looked at for its samples (a suite's expansion, `evaldsl inspect`) and then read for
    # its run: a log of one sample was read whole twice, and its case's run once more
    log = tmp_path / "log.json"
    (only,) = write_log(log, 1)
    expected = alone(log, only)
    reads = reads_of(log, monkeypatch)
    (summary,) = summarize(log)
    assert summary.format == "inspect" and len(reads) == 1
    samplelogs.forget()
    reads.clear()
    body = "".join(f"  {s}\n" for s in STATEMENTS)
    (tmp_path / "s.eval").write_text(f'case "c"\n  cassette "log.json"\n{body}', encoding="utf-8")
    report = run_suites([load_suite(tmp_path / "s.eval")])
    (case,) = report.suites[0].cases
    assert [a.status for a in case.assertions] == expected and len(reads) == 1
