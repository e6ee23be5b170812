"""`-j N`: workers inherit the loaded suites (no suite is read again, no recording is
scanned again), the largest cases start first, and the report is the serial run's."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import attrs
import pytest

from evaldsl.runner import core, parallel, readings
from evaldsl.runner.cases import selected
from evaldsl.runner.core import RunOptions, run_suites
from evaldsl.runner.parallel import largest_first
from evaldsl.runner.results import Report
from evaldsl.suites import build
from evaldsl.suites.build import NOT_CHECKED, load_suite
from evaldsl.suites.model import Suite
from tests.clitools import run_evaldsl

ROOT = Path(__file__).resolve().parents[1]


def _copy_weather(tmp_path: Path) -> Path:
    folder = tmp_path / "weather"
    shutil.copytree(ROOT / "examples" / "weather", folder)
    return folder / "weather.eval"


def _stable(report: object) -> list[object]:
    return [
        (c.name, c.passed, c.score, c.error, c.metrics, [attrs.evolve(a) for a in c.assertions])
        for s in report.suites  # type: ignore[attr-defined]
        for c in s.cases
    ]


def test_workers_use_the_loaded_suite_and_give_the_serial_report(tmp_path: Path) -> None:
    path = _copy_weather(tmp_path)
    suite = load_suite(path)
    serial = run_suites([suite])
    # the suite file is gone: a worker that loaded it again would report a crash
    path.unlink()
    together = run_suites([suite], RunOptions(jobs=2))
    assert parallel.can_fork()
    assert _stable(together) == _stable(serial)
    assert all(c.error is None for s in together.suites for c in s.cases)


def test_largest_cases_start_first(tmp_path: Path) -> None:
    path = _copy_weather(tmp_path)
    suite = load_suite(path)
    sizes = {
        i: (path.parent / c.source.path).stat().st_size
        for i, c in enumerate(suite.cases)
        if c.source is not None and c.source.path is not None
    }
    order = largest_first([(suite, i) for i in range(len(suite.cases))])
    assert [sizes[i] for i in order] == sorted(sizes.values(), reverse=True)


def test_a_recordings_cases_go_to_the_workers_in_runs_of_consecutive_cases(
    tmp_path: Path,
) -> None:
    events = '{"cassette": "traceplay", "version": 1}\n{"type": "llm.request"}\n'
    (tmp_path / "big.jsonl").write_text(events + '{"type": "user.message"}\n' * 50)
    (tmp_path / "small.jsonl").write_text(events)
    files = ["big", "small", "big", "big", "big", "small", "big", "missing"]
    text = "".join(
        f'case "c{k}"\n  cassette "{f}.jsonl"\n  steps == 1\n' for k, f in enumerate(files)
    )
    (tmp_path / "s.eval").write_text(text)
    suite = load_suite(str(tmp_path / "s.eval"))
    work = [(suite, k) for k in range(len(suite.cases))]
    # big.jsonl's five cases in two runs (the larger first), then small.jsonl's two, one a
    # run, and the missing file's case (size 0)
    assert parallel.units(work, 2) == [[3, 4, 6], [0, 2], [1], [5], [7]]
    assert parallel.units(work, 3) == [[2, 3], [4, 6], [0], [1], [5], [7]]
    assert parallel.units(work, 1) == [[0, 2, 3, 4, 6], [1, 5], [7]]


def _rows_on_xiamen(weather: Path, statements: list[str]) -> None:
    """`rows.eval` beside the weather suite: a case a statement, `row 0` to `row N`, each
    on xiamen.jsonl and counting its one call."""
    (weather.parent / "rows.eval").write_text(
        "".join(
            f'case "row {k}"\n  cassette "cassettes/xiamen.jsonl"\n'
            f"  tool get_weather called once\n  {statement}\n"
            for k, statement in enumerate(statements)
        )
    )


def test_each_worker_reads_a_recording_once_for_its_cases(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    weather = _copy_weather(tmp_path)
    words = ["Xiamen", "sunny", "rain", "C", "Tokyo", "28"]
    _rows_on_xiamen(weather, [f'answer contains "{word}"' for word in words])
    log = tmp_path / "readings.log"
    index_run = readings.index_run

    def logged(run: Any, needs: Any) -> Any:  # each worker appends: one line a reading
        with log.open("a") as out:
            out.write(f"{os.getpid()} {Path(run.path).name}\n")
        return index_run(run, needs)

    monkeypatch.setattr(readings, "index_run", logged)
    monkeypatch.setattr(core, "index_run", logged)
    paths = [str(weather.parent / "rows.eval"), str(weather)]
    serial = run_suites([load_suite(p) for p in paths])
    log.unlink()
    forked = run_suites([load_suite(p, later=True) for p in paths], RunOptions(jobs=2))
    assert _stable(forked) == _stable(serial)
    lines = log.read_text().splitlines()
    # xiamen.jsonl: the six rows and the weather file's cases on it, in two runs of
    # consecutive cases (one a worker): read twice, where each case read it once
    by_file = [line.split()[1] for line in lines]
    assert by_file.count("xiamen.jsonl") == 2
    named = sum(1 for s in serial.suites for c in s.cases) - by_file.count("xiamen.jsonl")
    assert len(lines) < named


def test_a_worker_that_dies_keeps_the_cases_of_its_run_it_had_finished(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    weather = _copy_weather(tmp_path)
    _rows_on_xiamen(weather, ["steps == 2"] * 6)
    run_case = core.begin_case  # (what each worker begins its cases with)

    def dies_at_row_1(case: Any, suite: Any, workers: Any = None, readings: Any = None) -> Any:
        if case.name == "row 1":
            os._exit(3)
        return run_case(case, suite, workers, readings)

    monkeypatch.setattr(core, "begin_case", dies_at_row_1)
    report = run_suites([load_suite(weather.parent / "rows.eval")], RunOptions(jobs=2))
    # two runs of three rows: row 0 finished before its worker died at row 1, so only
    # rows 1 and 2 are lost; the other worker ran rows 3 to 5
    outcome = {c.name: c.error or "passed" for s in report.suites for c in s.cases}
    died = "worker failed: the worker exited with status 3"
    assert outcome == {
        "row 0": "passed",
        "row 1": died,
        "row 2": died,
        "row 3": "passed",
        "row 4": "passed",
        "row 5": "passed",
    }


def test_without_fork_each_worker_loads_the_suite_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # where processes cannot be forked, workers load the suite from its file (once each)
    path = _copy_weather(tmp_path)
    suite = load_suite(path)
    serial = run_suites([suite])
    monkeypatch.setattr(parallel, "can_fork", lambda: False)
    together = run_suites([suite], RunOptions(jobs=2))
    assert _stable(together) == _stable(serial)


def test_live_targets_run_in_workers_made_at_their_first_live_case(tmp_path: Path) -> None:
    # target workers are made only for live cases (a run of recordings loads none of their
    # machinery: tests/test_startup.py); a -j worker makes its own at its first live case
    # and keeps it for the next, as a serial run keeps one for the whole suite
    (tmp_path / "pidagent.py").write_text(
        "import os\n\ndef pid(value):\n    return os.getpid()\n", encoding="utf-8"
    )
    live = tmp_path / "live.eval"
    live.write_text(
        "".join(
            f'case "live {i}"\n  run pidagent:pid\n  input {i}\n  output > 0\n' for i in range(6)
        ),
        encoding="utf-8",
    )
    recorded = shutil.copytree(ROOT / "examples" / "weather", tmp_path / "weather")
    suites = [load_suite(live), load_suite(recorded / "weather.eval")]

    def pids(report: object) -> list[object]:
        cases = report.suites[0].cases  # type: ignore[attr-defined]
        assert len(cases) == 6 and all(c.passed for c in cases), [c.error for c in cases]
        return [c.assertions[0].actual for c in cases]

    serial = run_suites(suites)
    together = run_suites(suites, RunOptions(jobs=2))
    assert len(set(pids(serial))) == 1
    assert 1 <= len(set(pids(together))) <= 2
    assert _stable(together)[6:] == _stable(serial)[6:]  # the recorded cases


# ---- cases checked and compiled by the worker that runs them (`load_suite(later=True)`)

SUITES = [
    "examples/weather/weather.eval",
    "examples/weather/weather.yaml",
    "examples/research/research.eval",
    "examples/triage/triage.eval",
    "examples/live/live.eval",
    "examples-failing/failures.eval",
    "examples-failing/mistakes.eval",
    "examples-failing/mistakes.yaml",
    "examples-production/checks.eval",
]

#: A suite of the problems checking finds in a case: a tool never recorded (did you
#: mean), a missing recording, a check error (the case is not run), rows of `each`.
TROUBLED = """\
suite "troubled"
tools get_weather, search_web

case "recorded"
  cassette "{cassette}"
  tool get_weather called once
  tool search_web called at most 3 times
  no tool get_weathr

case "missing"
  cassette "nowhere.jsonl"
  tool get_weather called once

case "broken"
  cassette "{cassette}"
  tool get_weather caled once

case "rows"
  cassette "{cassette}"
  each [{{name: get_weather}}, {{name: search_web}}]
  tool {{{{name}}}} called at least once

case "broken"
  cassette "{cassette}"
  tool get_weather called once
"""


#: The troubled suite's rows' case names.
ROWS = ["rows #1 [name=get_weather]", "rows #2 [name=search_web]"]


def _suites(tmp_path: Path, later: bool) -> list[Suite]:
    cassette = ROOT / "examples" / "weather" / "cassettes" / "xiamen.jsonl"
    troubled = tmp_path / "troubled.eval"
    troubled.write_text(TROUBLED.format(cassette=cassette), encoding="utf-8")
    paths = [str(ROOT / p) for p in SUITES] + [str(troubled)]
    return [load_suite(p, later=later) for p in paths]


def _same(report: Report) -> list[object]:
    """`_stable`, but for the time live cases took (their latency, and what a `latency`
    assertion found)."""
    timeless: list[object] = [
        (
            c.name,
            c.passed,
            c.score,
            c.error,
            attrs.evolve(c.metrics, latency_ms=None) if c.metrics else None,
            [
                attrs.evolve(a, actual=None) if a.text.startswith("latency") else a
                for a in c.assertions
            ],
        )
        for s in report.suites
        for c in s.cases
    ]
    return timeless


def _diagnostics(report: Report) -> list[object]:
    return [(s.path, s.diagnostics) for s in report.suites]


@pytest.mark.parametrize("select", [None, "weather", "not weather"])
def test_cases_checked_by_their_workers_give_the_serial_report(
    tmp_path: Path, select: str | None
) -> None:
    eager = _suites(tmp_path, later=False)
    later = _suites(tmp_path, later=True)
    # every suite without suite-level assertions leaves its cases to the workers (the
    # weather suites have some: they are built at once, and run beside the others)
    assert [s.path for s in later if s.later is None] == [str(ROOT / p) for p in SUITES[:2]]
    assert all(
        not s.diagnostics and all(c.error == NOT_CHECKED for c in s.cases) for s in later if s.later
    )
    serial = run_suites(eager, RunOptions(select=select))
    together = run_suites(later, RunOptions(jobs=2, select=select))
    assert _same(together) == _same(serial)
    assert _diagnostics(together) == _diagnostics(serial)
    assert any(d.code == "W301" for s in serial.suites for d in s.diagnostics)
    assert any(d.code == "W507" for s in serial.suites for d in s.diagnostics)
    assert any(
        c.error and c.error.startswith("not run: 1 check error")
        for s in serial.suites
        for c in s.cases
    )


def test_the_parent_checks_no_case_a_worker_ran(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    later = _suites(tmp_path, later=True)
    parent = os.getpid()
    checked_here: list[str] = []
    check_case = build.check_case

    def counted(concrete: Any, *args: Any, **kwargs: Any) -> Any:
        if os.getpid() == parent:
            checked_here.append(concrete.name)
        return check_case(concrete, *args, **kwargs)

    monkeypatch.setattr(build, "check_case", counted)
    report = run_suites(later, RunOptions(jobs=2))
    assert report.cases and checked_here == []
    # -k: the cases not selected are checked here, for their diagnostics (and only those)
    run_suites(later, RunOptions(jobs=2, select="weather"))
    skipped = [c.name for s in later for c in s.cases if not selected(s, c, "weather")]
    assert sorted(checked_here) == sorted(skipped) and skipped


def test_a_case_whose_worker_died_is_checked_by_the_parent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    serial = run_suites(_suites(tmp_path, later=False))
    later = _suites(tmp_path, later=True)
    run_case = core.begin_case  # (what each worker begins its cases with)

    def dies_on_missing(case: Any, suite: Any, workers: Any = None, readings: Any = None) -> Any:
        if case.name == "missing":
            os._exit(3)  # the worker dies: no result, no diagnostics sent
        return run_case(case, suite, workers, readings)

    monkeypatch.setattr(core, "begin_case", dies_on_missing)
    together = run_suites(later, RunOptions(jobs=2))
    died = [c for s in together.suites for c in s.cases if c.name == "missing"]
    assert len(died) == 1 and "worker failed" in str(died[0].error)
    assert _diagnostics(together) == _diagnostics(serial)


@pytest.mark.parametrize("select", [None, "weather", "not weather"])
def test_a_serial_run_checks_each_case_where_it_runs_with_the_report_of_one_checked_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, select: str | None
) -> None:
    serial = run_suites(_suites(tmp_path, later=False), RunOptions(select=select))
    events: list[str] = []  # "check NAME", "run NAME", in the order they happened
    check_case, begin_case = build.check_case, core.begin_case

    def checked(concrete: Any, *args: Any, **kwargs: Any) -> Any:
        events.append(f"check {concrete.name}")
        return check_case(concrete, *args, **kwargs)

    def begun(case: Any, *args: Any, **kwargs: Any) -> Any:
        events.append(f"run {case.name}")
        return begin_case(case, *args, **kwargs)

    monkeypatch.setattr(build, "check_case", checked)
    monkeypatch.setattr(core, "begin_case", begun)
    in_turn = run_suites(_suites(tmp_path, later=True), RunOptions(select=select))
    assert _same(in_turn) == _same(serial)
    assert _diagnostics(in_turn) == _diagnostics(serial)
    # the troubled suite alone: the cases on its cassette are checked together when the
    # run comes to the first of them, the missing file's case when it comes to it
    troubled = _suites(tmp_path, later=True)[-1:]
    events.clear()
    run_suites(troubled, RunOptions(select=select))
    rows = ROWS
    recorded = ["recorded", "broken", *rows, "broken"]
    order = [
        *(f"check {name}" for name in recorded),
        "run recorded",
        "check missing",
        "run missing",
        *(f"run {name}" for name in recorded[1:]),
    ]
    ran = [e for e in order if _selected_name(e.split(" ", 1)[1], select)]
    # (and the cases not selected are checked for the report, in case order)
    names = ["recorded", "missing", "broken", *rows, "broken"]
    assert events == ran + [f"check {n}" for n in names if not _selected_name(n, select)]


def test_after_ctrl_c_a_serial_run_checks_no_case_it_did_not_come_to(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the run stops at once: checking what is left would read its recordings
    cassette = ROOT / "examples" / "weather" / "cassettes" / "xiamen.jsonl"
    for name in "abc":
        shutil.copy(cassette, tmp_path / f"{name}.jsonl")
    path = tmp_path / "three.eval"
    path.write_text(
        "".join(
            f'case "{name}"\n  cassette "{name}.jsonl"\n  no tool get_weathr\n\n' for name in "abc"
        ),
        encoding="utf-8",
    )
    checked: list[str] = []
    check_case, begin_case = build.check_case, core.begin_case

    def counted(concrete: Any, *args: Any, **kwargs: Any) -> Any:
        checked.append(concrete.name)
        return check_case(concrete, *args, **kwargs)

    def stopped_at_b(case: Any, *args: Any, **kwargs: Any) -> Any:
        if case.name == "b":
            raise KeyboardInterrupt
        return begin_case(case, *args, **kwargs)

    monkeypatch.setattr(build, "check_case", counted)
    monkeypatch.setattr(core, "begin_case", stopped_at_b)
    with pytest.raises(core.RunInterrupted) as stop:
        run_suites([load_suite(path, later=True)])
    assert checked == ["a", "b"]
    report = stop.value.report
    assert [c.name for s in report.suites for c in s.cases] == ["a"]
    assert report.suites[0].not_run == ("b", "c")
    # `no tool get_weathr`'s did-you-mean, of the two cases checked
    shown = [d.line for d in report.suites[0].diagnostics if d.code == "W301"]
    assert shown == [3, 7], report.suites[0].diagnostics


def _selected_name(name: str, select: str | None) -> bool:
    """Whether `-k select` selects the troubled suite's case `name` (none holds "weather"
    but the first row's name)."""
    return select is None or ("weather" in name) == (select == "weather")


def test_suites_left_to_check_are_built_where_no_worker_is_forked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a pool's spawned workers load their suites whole: the parent checks them at once
    serial = run_suites(_suites(tmp_path, later=False))
    monkeypatch.setattr(parallel, "can_fork", lambda: False)
    spawned = run_suites(_suites(tmp_path, later=True), RunOptions(jobs=2))
    assert _same(spawned) == _same(serial)
    assert _diagnostics(spawned) == _diagnostics(serial)


def test_a_case_left_to_check_never_passes_unchecked(tmp_path: Path) -> None:
    suite = _suites(tmp_path, later=True)[-1]
    assert suite.later is not None
    result = core.execute_case(suite.cases[0], suite)
    assert not result.passed and result.error == NOT_CHECKED


def test_a_suite_with_suite_level_assertions_is_built_at_once(tmp_path: Path) -> None:
    cassette = ROOT / "examples" / "weather" / "cassettes" / "xiamen.jsonl"
    path = tmp_path / "header.eval"
    path.write_text(
        f'tool get_weather called once\n\ncase "a"\n  cassette "{cassette}"\n'
        '  answer contains "Xiamen"\n',
        encoding="utf-8",
    )
    suite = load_suite(path, later=True)
    assert suite.later is None and suite.cases[0].error is None
    assert [a.text for a in suite.cases[0].assertions] == [
        "tool get_weather called once",
        'answer contains "Xiamen"',
    ]


def test_the_command_with_j_checks_in_its_workers_and_prints_the_serial_report(
    tmp_path: Path,
) -> None:
    # `evaldsl run -j 2` leaves each case's check to its worker (`load_suite(later=True)`):
    # the console report (warnings and errors included) and the JSON report are the serial
    # run's, but for times
    troubled = _suites(tmp_path, later=True)[-1]
    assert troubled.later is not None
    failing = str(ROOT / "examples-failing" / "mistakes.eval")
    runs = {}
    # (not beside the suite: a missing file's hint lists the folder it was looked for in)
    (tmp_path / "reports").mkdir()
    for jobs in ("1", "2", "auto"):
        out = tmp_path / "reports" / f"report-{jobs}.json"
        done = run_evaldsl(
            "run", "--no-history", "-j", jobs, "--json", str(out), troubled.path, failing
        )
        assert done.returncode == 1, done.stderr
        shown = re.sub(r" *\d+(\.\d+)? ?m?s\b", " T", done.stdout)
        report = json.loads(out.read_text(encoding="utf-8"))
        runs[jobs] = (shown, _timeless_json(report))
    assert runs["2"] == runs["1"] and runs["auto"] == runs["1"]
    assert "W301" in runs["1"][0] and "not run: 1 check error" in runs["1"][0]


def _timeless_json(value: object) -> object:
    if isinstance(value, dict):
        return {k: _timeless_json(v) for k, v in value.items() if "ms" not in k}
    if isinstance(value, list):
        return [_timeless_json(v) for v in value]
    return value
