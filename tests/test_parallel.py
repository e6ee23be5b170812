"""`-j N`: workers inherit the loaded suites (no suite is read again, no recording is
scanned again), the largest cases start first, and the report is the serial run's."""

from __future__ import annotations

import shutil
from pathlib import Path

import attrs
import pytest

from evaldsl.runner import parallel
from evaldsl.runner.core import RunOptions, run_suites
from evaldsl.runner.parallel import largest_first
from evaldsl.suites.build import load_suite

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
