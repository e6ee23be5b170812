"""A small project for the history, diff and README tests: the support agent of
examples-failing/diff/, before and after a change, laid out in one folder so that both
versions have the same suite path (as two checkouts of one repository would)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from tests.clitools import ROOT, run_evaldsl

DEMO = ROOT / "examples-failing" / "diff"


def checkout(project: Path, version: str) -> Path:
    """Put the `before` or `after` version of the demo agent in `project` (replacing
    what was there) and return `project`."""
    for name in ("agent.eval", "cassettes"):
        target = project / name
        if target.is_dir():
            shutil.rmtree(target)
        elif target.exists():
            target.unlink()
    project.mkdir(parents=True, exist_ok=True)
    shutil.copy(DEMO / version / "agent.eval", project / "agent.eval")
    shutil.copytree(DEMO / version / "cassettes", project / "cassettes")
    return project


def run_in(project: Path, *args: str) -> Any:
    """`evaldsl ARGS` with `project` as the working folder."""
    return run_evaldsl(*args, cwd=project)


def without_durations(report: Any) -> Any:
    """A JSON report with its timings (which differ on every run) taken out."""
    if isinstance(report, dict):
        return {k: without_durations(v) for k, v in report.items() if k != "duration_ms"}
    if isinstance(report, list):
        return [without_durations(v) for v in report]
    return report


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))
