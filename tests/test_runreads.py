"""`evaldsl run` reads a span file for what its cases read (`runner/readings.py`'s
`recorded_for`, `runs/reads.py`): the same report (verdicts, messages, found values,
errors, metrics) as the full reading `EVALDSL_REFERENCE=1` makes, serial and with `-j 2`,
on random cases sharing one recording and on cases that share one while reading other
tools (a shared reading reads what any of its cases reads: the union)."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any
from unittest import mock

import attrs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evaldsl.runner.core import RunOptions, run_suites
from evaldsl.runner.results import CaseResult
from evaldsl.suites.build import load_suite
from evaldsl.suites.model import Suite
from tests.fuzzing import examples
from tests.test_codegen import programs
from tests.test_otlpdecode import any_value
from tests.test_otlpreads import span_files


def write_suite(folder: Path, cases: list[list[str]]) -> Suite:
    """A suite of `cases` (each its statements), all on the span file `spans.jsonl`."""
    text = "".join(
        f'case "c{k}"\n  trace "spans.jsonl" as otel\n' + "".join(f"  {s}\n" for s in lines)
        for k, lines in enumerate(cases)
    )
    (folder / "s.eval").write_text(text)
    return load_suite(str(folder / "s.eval"))


def report(suite: Suite, jobs: int, reference: bool) -> list[CaseResult]:
    """Every case's result (without its duration), read for what the cases read, or in
    full (`EVALDSL_REFERENCE=1`, which forked workers inherit)."""
    with mock.patch.dict(os.environ, {"EVALDSL_REFERENCE": "1" if reference else "0"}):
        cases = run_suites([suite], RunOptions(jobs=jobs)).suites[0].cases
    return [attrs.evolve(r, duration_ms=0.0) for r in cases]


@settings(
    max_examples=examples(60),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(st.lists(programs, min_size=1, max_size=3), span_files())
def test_a_run_reads_span_files_for_its_cases_as_in_full(
    cases: list[list[str]], lines: list[str]
) -> None:
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        (folder / "spans.jsonl").write_text("\n".join(lines) + "\n")
        suite = write_suite(folder, cases)
        assert report(suite, 1, reference=False) == report(suite, 1, reference=True)


def _tool_span(i: int, name: str, args: str, result: str) -> dict[str, Any]:
    items = [
        ("gen_ai.operation.name", "execute_tool"),
        ("gen_ai.tool.name", name),
        ("gen_ai.tool.call.id", f"c{i}"),
        ("gen_ai.tool.call.arguments", args),
        ("gen_ai.tool.call.result", result),
    ]
    return {
        "traceId": "t1",
        "spanId": f"s{i}",
        "name": name,
        "startTimeUnixNano": str(1_700_000_000_000_000_000 + i * 1_000_000),
        "endTimeUnixNano": str(1_700_000_000_000_000_000 + i * 1_000_000 + 500_000),
        "attributes": [{"key": k, "value": any_value(v)} for k, v in items],
    }


#: Cases on one span file, each reading another tool's arguments or results (and one
#: reading times): one shared reading must read what any of them reads.
SHARING = [
    ['tool get_weather args $.city == "Paris"', "steps >= 0"],
    ['tool search args $.q == "rain"', "tool search called once"],
    ["tool search result $.hits[0] == 3", "latency < 1s"],
    ["answer cites tool get_weather", "tools contains any [search]"],
]


def test_cases_sharing_a_span_file_get_the_union_of_their_reads(tmp_path: Path) -> None:
    """Serial and with `-j 2` (its workers share readings too), each case's result is
    the full reading's: one shared reading read for the first case alone would leave
    `search`'s arguments and results as JSON text."""
    spans = [
        _tool_span(1, "get_weather", '{"city": "Paris"}', '{"temp": 21}'),
        _tool_span(2, "search", '{"q": "rain"}', '{"hits": [3, 4]}'),
    ]
    export = {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}
    (tmp_path / "spans.jsonl").write_text(json.dumps(export) + "\n")
    suite = write_suite(tmp_path, SHARING)
    full = report(suite, 1, reference=True)
    assert [r.passed for r in full] == [True, True, True, False]  # (nothing to cite)
    assert report(suite, 1, reference=False) == full
    assert report(suite, 2, reference=False) == full


def test_a_span_file_without_end_times_gives_its_latency_metric(tmp_path: Path) -> None:
    """Spans that give no end give no latency of their own: the run's is then its
    events' first and last times, which the metric reads though no assertion does."""
    spans = [
        _tool_span(1, "get_weather", '{"city": "Paris"}', '{"temp": 21}'),
        _tool_span(3, "search", '{"q": "rain"}', '{"hits": [3, 4]}'),
    ]
    for span in spans:
        del span["endTimeUnixNano"]
    export = {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}
    (tmp_path / "spans.jsonl").write_text(json.dumps(export) + "\n")
    suite = write_suite(tmp_path, [["tool search called once"]])
    full = report(suite, 1, reference=True)
    assert full[0].passed and full[0].metrics.latency_ms == 2.0
    assert report(suite, 1, reference=False) == full
