"""Runs of folders and of paths named more than once: a file named twice (or with its
folder) runs once, and an empty path is bad usage. Through the real command, in a
subprocess.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evaldsl.suites.files import discover
from tests.clitools import ROOT, run_evaldsl

WEATHER = ROOT / "examples" / "weather"

# ---- paths named twice, and empty paths ----------------------------------------------------


def test_a_file_named_twice_or_with_its_folder_runs_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(WEATHER, tmp_path / "w")
    monkeypatch.chdir(tmp_path)
    names = ["w/weather.eval", "w/./weather.eval", "w", "w/weather.yaml"]
    assert discover(names) == ([Path("w/weather.eval"), Path("w/weather.yaml")], [])
    ran = run_evaldsl("run", *names, "--no-history", "-q", "--json", "r.json", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert [s["path"] for s in report["suites"]] == ["w/weather.eval", "w/weather.yaml"]
    assert report["summary"]["cases"] == 10
    checked = run_evaldsl("check", "w/weather.eval", "w/weather.eval", cwd=tmp_path)
    assert "1 file checked" in checked.stdout


def test_an_empty_path_is_bad_usage(tmp_path: Path) -> None:
    shutil.copytree(WEATHER, tmp_path / "w")
    for command in (["run", "", "--no-history"], ["check", "w", ""]):
        result = run_evaldsl(*command, cwd=tmp_path)
        assert result.returncode == 2
        assert "no such file or folder: '' (an empty path names nothing" in result.stderr
    report = run_evaldsl("run", "w", "--no-history", "-q", "--json", "", cwd=tmp_path)
    assert report.returncode == 2
    assert "--json '': an empty path names no file" in report.stderr
