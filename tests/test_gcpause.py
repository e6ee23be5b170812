"""The collector paused around bulk work, and the frozen set a run's cases run under and `-j`
forks its workers in (`evaldsl/gcpause.py`); loading leaves no garbage that grows with it;
`evaldsl score` scores with the collector paused and what it loaded frozen."""

from __future__ import annotations

import gc
import io
import json
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

from evaldsl.format.formatter import format_text
from evaldsl.gcpause import frozen_loaded, paused_gc
from evaldsl.runner import run_suites
from evaldsl.runs.summary import summarize
from evaldsl.score import command as score_cli
from evaldsl.score.scoring import ProgramSpec, TraceRecord, compiled, score_batch
from evaldsl.score.sources import Item, items
from evaldsl.score.summary import Summary
from evaldsl.suites import load_suite
from evaldsl.suites.build import check_text
from evaldsl.suites.files import draft_from_text
from evaldsl.tools.cliargs import parse

ROOT = Path(__file__).resolve().parent.parent
T = TypeVar("T")


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every `gc.get_freeze_count()` asked, with its answer."""
    asked: list[int] = []
    real = gc.get_freeze_count

    def count() -> int:
        asked.append(real())
        return asked[-1]

    monkeypatch.setattr(gc, "get_freeze_count", count)
    return asked


def test_the_collector_is_paused_and_restored() -> None:
    assert gc.isenabled()
    with paused_gc():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(KeyError), paused_gc(long_lived=True):
        raise KeyError("x")
    assert gc.isenabled() and gc.get_freeze_count() == 0
    gc.disable()
    try:
        with paused_gc():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_long_lived_objects_are_handed_to_the_oldest_generation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # frozen, then unfrozen into the oldest generation: two list splices, where the young
    # collections after the block would walk every object made in it
    calls: list[str] = []
    for name in ("freeze", "unfreeze"):
        real = getattr(gc, name)
        monkeypatch.setattr(gc, name, lambda real=real, name=name: (calls.append(name), real()))
    with paused_gc():
        pass
    assert calls == []
    with paused_gc(long_lived=True):
        assert calls == []
    assert calls == ["freeze", "unfreeze"]
    with frozen_loaded(), paused_gc(long_lived=True):
        pass  # (the frozen set is the workers': left as it is)
    assert calls == ["freeze", "unfreeze", "freeze", "unfreeze"]


def test_workers_never_count_the_frozen_set(counted: list[int]) -> None:
    # counting it walks every frozen object: in a forked worker, every object it shares
    with frozen_loaded():
        assert counted == [0]  # (counted once, before freezing: nothing was)
        with paused_gc(long_lived=True):
            [{"n": n} for n in range(100)]
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # a worker: its compiles and readings do not count either
            with paused_gc(long_lived=True):
                pass
            os.write(write, str(len(counted)).encode())
            os._exit(0)
        os.waitpid(pid, 0)
        assert os.read(read, 16) == b"1"
        os.close(read)
        os.close(write)
    assert counted == [0]
    with paused_gc(long_lived=True):  # counted again outside it: nothing frozen now
        pass
    assert counted == [0, 0]


def test_an_applications_frozen_set_is_left_as_it_is() -> None:
    gc.freeze()
    try:
        with frozen_loaded(), paused_gc(long_lived=True):
            kept = [[n] for n in range(100)]
        assert gc.get_freeze_count() > 0  # not unfrozen by the block
        with paused_gc(long_lived=True):
            kept.append([0])
        assert gc.get_freeze_count() > 0  # nor by a long-lived pause
    finally:
        gc.unfreeze()


def _yaml_suite(folder: Path, cases: int) -> Path:
    cassette = ROOT / "examples" / "weather" / "cassettes" / "xiamen.jsonl"
    lines = ["suite: many", "cases:"]
    for n in range(cases):
        lines += [
            f"  - name: case {n}",
            f"    cassette: {cassette}",
            "    assertions:",
            "      - { kind: tool.called, name: get_weather, times: 1 }",
            f"      - {{ kind: answer.contains, text: 'C{n}' }}",
            "    expect: [tokens <= 2000, 'tool get_weather args $.city == \"Xiamen\"']",
        ]
    path = folder / f"many-{cases}.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _garbage_of_loading(path: Path) -> int:
    gc.collect()
    load_suite(path)  # (its result is garbage only once collected: no cycles in it)
    return gc.collect()


def test_loading_a_yaml_suite_leaves_garbage_that_does_not_grow_with_its_cases(
    tmp_path: Path,
) -> None:
    # Loading runs with the collector paused, so the cycles it makes stay until a full
    # collection walks them; reading each key once left a cycle a key (a function that
    # called itself through its closure): millions of objects in a suite of 16,000 cases
    small, large = _yaml_suite(tmp_path, 20), _yaml_suite(tmp_path, 200)
    _garbage_of_loading(small)  # the first load builds classes, caches: not the suite's
    assert _garbage_of_loading(large) - _garbage_of_loading(small) < 100


def test_a_serial_run_keeps_what_it_loaded_frozen_while_its_cases_run(tmp_path: Path) -> None:
    # Frozen, the suites are never walked by a collection of the run's own garbage; the
    # oldest generation collected in full once a run's garbage made it think that worth it
    suite = load_suite(_yaml_suite(tmp_path, 3))
    frozen: list[int] = []
    report = run_suites([suite], on_case=lambda s, result: frozen.append(gc.get_freeze_count()))
    assert len(report.cases) == 3 and len(frozen) == 3
    assert min(frozen) > 1000  # the suite, the modules: everything loaded before
    assert gc.get_freeze_count() == 0  # and nothing after the run


def collections_during(work: Callable[[], T]) -> tuple[T, list[int]]:
    """What `work` gives, and the generation of each collection while it ran."""
    collections: list[int] = []

    def seen(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collections.append(info["generation"])

    gc.collect()
    gc.callbacks.append(seen)
    try:
        return work(), collections
    finally:
        gc.callbacks.remove(seen)


@pytest.mark.parametrize("work", ["draft", "check", "format"])
def test_an_editors_work_on_its_buffer_runs_with_the_collector_paused(work: str) -> None:
    # the editor drafts, checks and formats its buffer on every change: collections of
    # the many small objects made grew its time faster than the text
    text = "".join(f'case "c{n}"\n  cassette "x.jsonl"\n  steps <= {n}\n' for n in range(300))
    path = str(ROOT / "buffer.eval")
    run = {
        "draft": lambda: draft_from_text(text, path),
        "check": lambda: check_text(text, path),
        "format": lambda: format_text(text, path),
    }[work]
    _, collections = collections_during(run)
    # (one may come as the pause ends: the allocations it held back, counted at once;
    # unpaused, the 300 cases made 3 (draft), 5 (check) and 53 (format))
    assert len(collections) <= 1, collections


def test_inspect_reads_and_summarizes_with_the_collector_paused(tmp_path: Path) -> None:
    # `evaldsl inspect`: the look for samples decodes a whole document and the summary
    # walks every event; collections rescanning what was read were ~20% of its time
    messages: list[dict[str, object]] = [{"role": "user", "content": "weather?"}]
    for n in range(1500):  # an OpenAI request's messages: one JSON document
        function = {"name": "get_weather", "arguments": json.dumps({"city": f"c{n}"})}
        call = {"id": f"c{n}", "type": "function", "function": function}
        messages.append({"role": "assistant", "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": f"c{n}", "content": f"t{n}"})
    log = tmp_path / "t.json"
    log.write_text(json.dumps({"messages": messages}), encoding="utf-8")
    (summary,), collections = collections_during(lambda: summarize(log))
    assert summary.format == "openai" and [t.name for t in summary.tools] == ["get_weather"]
    assert len(collections) <= 1, collections  # (at most the one as the pause ends)


# --- evaldsl score -----------------------------------------------------------------------------

#: A program whose assertions all fail on the lines below: a record of 300 failures (dicts)
#: for each trace, kept until its batch is sent back.
SCORE_PROGRAM = "".join(f"tool search called {n + 2} times\n" for n in range(300))
SCORE_LINE = b'[{"type": "tool.call", "name": "search"}]'


def test_a_batch_of_traces_is_scored_with_the_collector_paused() -> None:
    # its records lived through the young collections made while it was scored, and the
    # full ones they brought about walked the whole program each time: 13 of 49 s of CPU
    # for 4,000 statements over 1,000 traces (unpaused, this batch made 27 collections)
    spec = ProgramSpec(SCORE_PROGRAM)
    compiled(spec)
    work = [Item(f"<stdin>:{n}", SCORE_LINE, n) for n in range(1, 101)]
    records, collections = collections_during(lambda: score_batch(spec, work))
    assert len(records) == 100 and all(len(r["failures"]) == 300 for r in records)
    assert len(collections) <= 1, collections  # (at most the one as the pause ends)


def test_a_program_that_asks_the_judge_is_scored_with_the_collector_running() -> None:
    # its calls wait on the network, in threads: their garbage is collected as it comes
    spec = ProgramSpec(SCORE_PROGRAM + 'answer judged "is polite"\n', judge="off")
    work = [Item(f"<stdin>:{n}", SCORE_LINE, n) for n in range(1, 101)]
    records, collections = collections_during(lambda: score_batch(spec, work))
    assert {r["statuses"][-1] for r in records} == {"skip"}
    assert len(collections) > 1


def test_a_serial_score_keeps_what_it_loaded_frozen_and_one_record_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # frozen, the program is never walked by the full collections the records bring
    # about; and the serial engine makes each record when it is wanted, not a batch ahead
    program = tmp_path / "checks.eval"
    program.write_text(SCORE_PROGRAM)
    seen: list[tuple[int, int]] = []  # (objects frozen, lines read) as each record is counted
    read = 0
    real_add = Summary.add

    def counting_items(arguments: list[str]) -> Iterator[Item]:
        nonlocal read
        for item in items(arguments):
            read += 1
            yield item

    def add(summary: Summary, rec: TraceRecord) -> None:
        seen.append((gc.get_freeze_count(), read))
        real_add(summary, rec)

    monkeypatch.setattr(score_cli, "items", counting_items)
    monkeypatch.setattr(Summary, "add", add)
    lines = io.BytesIO(b"\n".join([SCORE_LINE] * 5) + b"\n")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(lines))
    args = parse(["score", str(program), "-", "--format", "jsonl"])
    assert score_cli.score_command(args, io.StringIO(), io.StringIO()) == 1
    assert len(seen) == 5 and min(frozen for frozen, _ in seen) > 1000
    assert [n for _, n in seen] == [1, 2, 3, 4, 5]
    assert gc.get_freeze_count() == 0  # and nothing after the run
