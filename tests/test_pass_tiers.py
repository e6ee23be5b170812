"""Which pass indexes a run (`runs/passes.py`): a small run through the reference pass
until its needs have a generated pass or have met `GENERATE_AFTER` small runs; a run of
`GENERATE_FROM_EVENTS` events (a list) or `GENERATE_FROM` bytes (a streamed recording)
or more, or a small run whose events times its `args`/`result` tests reach
`GENERATE_FROM_TESTS`, through the generated pass at once. Both give the same facts
(tests/test_codegen.py compares them on random programs and traces); what is tested here
is which one runs, and that the facts are the reference's either way."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

import evaldsl
from evaldsl.compile.evaluate import evaluate
from evaldsl.runner.core import run_suites
from evaldsl.runner.produce import streamed_bytes
from evaldsl.runs import passes
from evaldsl.runs.cassette import EventStream
from evaldsl.runs.heldcalls import held_calls
from evaldsl.runs.index import index_run as reference_index_run
from evaldsl.runs.model import Run
from evaldsl.suites.build import load_suite

STATEMENTS = 'tool search called 2 times\ntool search args $.q == "x"\nanswer contains "ok"'


@pytest.fixture(autouse=True)
def _fresh() -> Iterator[None]:
    """No pass made and no small run counted before the test, nor after it."""
    passes.purge()
    yield
    passes.purge()


def events(n: int) -> list[dict[str, Any]]:
    """`n` events: calls of `search` and, last, an answer."""
    made: list[dict[str, Any]] = [
        {"type": "tool.call", "name": "search", "arguments": {"q": "x" if i % 2 else "y"}}
        for i in range(n - 1)
    ]
    return [*made, {"type": "llm.response", "output": "ok"}]


def indexed(run: Run, needs: Any) -> tuple[Any, int]:
    """The facts of `run` and how many generated passes were asked for."""
    with mock.patch.object(passes, "pass_for", wraps=passes.pass_for) as made:
        facts = passes.index_run(run, needs)
    return facts, made.call_count


def verdicts(case: Any, facts: Any) -> list[str]:
    return [evaluate(a, facts).status for a in case.assertions]


def said(case: Any, facts: Any) -> list[tuple[Any, ...]]:
    """Each verdict's status, message, found and expected values."""
    return [
        (v.status, v.message, v.actual, v.expected)
        for v in (evaluate(a, facts) for a in case.assertions)
    ]


def test_a_small_run_is_indexed_by_the_reference_until_its_needs_recur() -> None:
    run = Run(events=events(20))
    case = evaldsl.compile(STATEMENTS).cases[0]
    reference = reference_index_run(run, case.needs)
    for n in range(1, passes.GENERATE_AFTER + 2):
        # each time a case of the same assertions, as a suite's rows or datasets make them
        again = evaldsl.compile(STATEMENTS).cases[0]
        facts, made = indexed(run, again.needs)
        assert verdicts(again, facts) == verdicts(case, reference)
        assert made == (0 if n < passes.GENERATE_AFTER else 1), n
    # a pass made for these needs serves their next small run at once, and other needs
    # start their own count
    assert indexed(run, evaldsl.compile(STATEMENTS).cases[0].needs)[1] == 1
    assert indexed(run, evaldsl.compile("tool fetch called").cases[0].needs)[1] == 0


def test_a_large_run_is_indexed_by_the_generated_pass_at_once() -> None:
    case = evaldsl.compile(STATEMENTS).cases[0]
    small, large = passes.GENERATE_FROM_EVENTS - 1, passes.GENERATE_FROM_EVENTS
    assert indexed(Run(events=events(small)), case.needs)[1] == 0
    facts, made = indexed(Run(events=events(large)), case.needs)
    assert made == 1 and verdicts(case, facts) == ["fail", "pass", "pass"]
    # the pass made serves the next small run of equal needs, the first of its count
    again = evaldsl.compile(STATEMENTS).cases[0]
    assert indexed(Run(events=events(small)), again.needs)[1] == 1


def test_a_streamed_recording_is_generated_for_from_its_size(tmp_path: Path) -> None:
    case = evaldsl.compile(STATEMENTS).cases[0]
    line = (json.dumps(events(2)[0]) + "\n").encode()
    fit = passes.GENERATE_FROM // len(line)  # lines of a file just under the bound
    for name, lines in {"small": fit, "large": fit + 1}.items():
        path = tmp_path / f"{name}.jsonl"
        path.write_bytes(line * lines)
        assert (path.stat().st_size < passes.GENERATE_FROM) == (name == "small")
        run = Run(events=EventStream(path, header=False), path=str(path), format="events")
        facts, made = indexed(run, case.needs)
        assert made == (name == "large"), (name, path.stat().st_size)
        assert facts.trace.call_counts["search"] == lines


def test_a_small_run_of_many_tests_is_indexed_by_the_generated_pass_at_once(
    tmp_path: Path,
) -> None:
    # the reference feeds every call to each test of its tool, one by one: its work is
    # events × tests, and K tests on one path cost the generated pass about one
    tests = 64
    many = "\n".join(f'tool search args $.q == "{i}"' for i in range(tests))
    case = evaldsl.compile(many).cases[0]
    fit = -(-passes.GENERATE_FROM_TESTS // tests)  # the fewest events that generate
    assert fit < passes.GENERATE_FROM_EVENTS
    assert indexed(Run(events=events(fit - 1)), case.needs)[1] == 0
    facts, made = indexed(Run(events=events(fit)), case.needs)
    assert made == 1 and verdicts(case, facts) == ["fail"] * tests
    # a recording, by the events its size stands for (a bound's worth of bytes an event)
    line = (json.dumps(events(2)[0]) + "\n").encode()
    per_event = passes.GENERATE_FROM / passes.GENERATE_FROM_EVENTS
    for lines, generated in (
        (int(fit * per_event / len(line)) - 4, False),
        (int(fit * per_event / len(line)) + 4, True),
    ):
        passes.purge()
        path = tmp_path / f"{lines}.jsonl"
        path.write_bytes(line * lines)
        run = Run(events=EventStream(path, header=False), path=str(path), format="events")
        fresh = evaldsl.compile(many).cases[0]
        assert indexed(run, fresh.needs)[1] == generated, lines
    # and a case of one test over as many events: the reference
    passes.purge()
    one = evaldsl.compile('tool search args $.q == "x"').cases[0]
    assert indexed(Run(events=events(fit)), one.needs)[1] == 0


def test_the_reference_variable_still_rules_out_the_generated_pass(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("EVALDSL_REFERENCE", "1")
    case = evaldsl.compile(STATEMENTS).cases[0]
    assert indexed(Run(events=events(passes.GENERATE_FROM_EVENTS * 2)), case.needs)[1] == 0


def typed_uses(run: Run, needs: Any) -> tuple[Any, bool]:
    """The facts of `run` and whether the typed decoder read it."""
    with mock.patch.object(passes, "kind_events", wraps=passes.kind_events) as typed:
        facts = passes.index_run(run, needs)
    return facts, typed.call_count > 0


def recordings(folder: Path, count: int, lines: int) -> list[Path]:
    """`count` recordings of `lines` calls of `search` and an answer each."""
    made = []
    for k in range(count):
        path = folder / f"r{k}.jsonl"
        path.write_text("".join(json.dumps(e) + "\n" for e in events(lines + k)))
        made.append(path)
    return made


def test_small_recordings_are_decoded_whole_until_that_costs_the_typed_decoder(
    tmp_path: Path,
) -> None:
    # a process decodes small recordings in full until it has decoded TYPED_AFTER bytes
    # so, then every one by the typed decoder; the facts are the reference's either way
    case = evaldsl.compile(STATEMENTS).cases[0]
    paths = recordings(tmp_path, 5, 40)
    sizes = [p.stat().st_size for p in paths]
    with (
        mock.patch.object(passes, "GENERATE_FROM", 0),
        mock.patch.object(passes, "TYPED_AFTER", sum(sizes[:3])),
    ):
        for rounds in range(2):  # and once more after `purge`, which forgets the bytes
            used = []
            for path in paths:
                run = Run(events=EventStream(path, header=False), path=str(path), format="events")
                facts, typed = typed_uses(run, case.needs)
                used.append(typed)
                assert said(case, facts) == said(case, reference_index_run(run, case.needs))
                assert verdicts(case, facts) == ["fail", "pass", "pass"]
            assert used == [False, False, False, True, True], rounds
            passes.purge()
        # one of TYPED_FROM bytes, typed in a process that decoded nothing yet
        with mock.patch.object(passes, "TYPED_FROM", sizes[0]):
            run = Run(events=EventStream(paths[0], header=False), path=str(paths[0]))
            assert typed_uses(run, case.needs)[1]


def test_a_run_of_many_small_recordings_decodes_each_typed_from_the_first(
    tmp_path: Path,
) -> None:
    # `run_suites` knows the recordings it will read: from TYPED_AFTER bytes in all, the
    # typed decoder reads each of them, the first included; below, none
    paths = recordings(tmp_path, 4, 40)
    body = textwrap.indent(STATEMENTS, "  ")
    suite = tmp_path / "many.eval"
    suite.write_text(
        "".join(f'case "c{k}"\n  cassette "{p.name}"\n{body}\n' for k, p in enumerate(paths)),
        encoding="utf-8",
    )
    total = sum(p.stat().st_size for p in paths)
    seen = {}
    for after in (total, total + 1):
        passes.purge()
        with (
            mock.patch.object(passes, "GENERATE_FROM", 0),
            mock.patch.object(passes, "TYPED_AFTER", after),
            mock.patch.object(passes, "kind_events", wraps=passes.kind_events) as typed,
        ):
            report = run_suites([load_suite(suite)])
        seen[after] = [(c.name, [a.status for a in c.assertions]) for c in report.suites[0].cases]
        assert typed.call_count == (4 if after == total else 0), after
    assert seen[total] == seen[total + 1]
    assert seen[total] == [(f"c{k}", ["fail", "pass", "pass"]) for k in range(4)]


def test_only_recordings_that_may_stream_count_towards_typed_decoding(tmp_path: Path) -> None:
    # a cassette or a trace named as a streamed format counts (each file once); a format
    # read whole or an Inspect AI sample does not: msgspec would not read them
    sizes = {}
    for name, lines in (("a", 2), ("b", 20), ("d", 2000)):
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps(e) + "\n" for e in events(lines)), encoding="utf-8")
        sizes[name] = path.stat().st_size
    tests = Path(__file__).resolve().parent
    log = tests / "data" / "formats" / "inspect-two-samples.json"
    openai = tests / "fixtures" / "realworld" / "openai-chat-jsonl" / "responses.jsonl"
    sources = [
        'cassette "a.jsonl"',
        'cassette "a.jsonl"',  # the same file again
        'trace "b.jsonl" as events',
        f'trace "{openai}" as openai',  # (read whole)
        'trace "d.jsonl" as Verydia',
        f'cassette "{log}"',  # two samples: two cases, neither counted
    ]
    suite = tmp_path / "s.eval"
    suite.write_text(
        "".join(f'case "c{k}"\n  {src}\n  steps >= 0\n' for k, src in enumerate(sources)),
        encoding="utf-8",
    )
    loaded = load_suite(suite)
    assert len(loaded.cases) == 7 and not any(c.error for c in loaded.cases)
    work = [(loaded, i) for i in range(len(loaded.cases))]
    assert streamed_bytes(work) == sizes["a"] + sizes["b"] + sizes["d"]


@pytest.mark.parametrize("holds", [False, True])
def test_a_typed_decoded_recording_is_read_again_for_held_calls_only_when_a_response_holds_one(
    tmp_path: Path, holds: bool
) -> None:
    """A passing `no tool` asks whether the responses hold a call no call event records.
    The typed decoder's passes note it as they go (an output decoded to ask only where
    its text may name a call), so a recording whose responses hold none is not read a
    second time for it: that read was ~2x the whole check of a 300,000-event cassette."""
    answer: Any = "ok"
    if holds:
        answer = {"choices": [{"message": {"tool_calls": [{"function": {"name": "delete"}}]}}]}
    made = [*events(40), {"type": "llm.response", "output": answer}]
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in made), encoding="utf-8")
    case = evaldsl.compile("no tool delete\ntool search called at most 39 times").cases[0]
    run = Run(events=EventStream(path, header=False), path=str(path), format="events")
    with (
        mock.patch.object(passes, "GENERATE_FROM", 0),
        mock.patch.object(passes, "TYPED_FROM", 0),
        mock.patch("evaldsl.runs.index.held_calls", wraps=held_calls) as again,
        mock.patch.object(passes, "kind_events", wraps=passes.kind_events) as typed,
    ):
        facts = passes.index_run(run, case.needs)
        got = verdicts(case, facts)
    assert typed.call_count == 1
    assert again.call_count == (1 if holds else 0)
    # (`delete` called only inside a response: `no tool delete` cannot be told)
    assert got == (["error", "pass"] if holds else ["pass", "pass"])
