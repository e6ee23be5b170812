"""The wheel: built from the project, installed in a fresh virtual environment, it parses
and checks a program from outside the source tree, so the grammar is inside it.

Slow (a build, a venv, an install whose dependencies come from PyPI), and part of the
default run all the same: a wheel without its grammar is a release that cannot parse.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import textwrap
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# What the build needs of the checkout (a copy, so no build/ or *.egg-info lands in it).
PROJECT_FILES = ["pyproject.toml", "README.md", "LICENSE", "evaldsl", "grammar"]

SNIPPET = textwrap.dedent(
    r"""
    import os, sys
    from pathlib import Path

    import evaldsl
    from evaldsl.api import diagnose
    from evaldsl.syntax.grammar import grammar_text
    from evaldsl.syntax.parser import parse

    here = Path(evaldsl.__file__).resolve()
    source_root = Path(sys.argv[1]).resolve()
    assert source_root not in here.parents, f"imported from the source tree: {here}"
    assert "site-packages" in here.parts, here

    grammar = grammar_text()
    assert "statements:" in grammar and "case_decl" in grammar

    text = "tool search called 2 times; answer matches /\\d+ C/"
    result = parse(text)
    assert result.ok and len(result.program.statements) == 2, result

    _, _, _, diagnostics = diagnose("latency < 2\ntool search caled", "x.eval")
    codes = [d.code for d in diagnostics]
    assert codes == ["E202", "E101"], codes

    program = evaldsl.compile('tool get_weather called once; answer contains "sunny"')
    events = [{"type": "tool.call", "name": "get_weather", "arguments": {}}]
    assert program.check(events).statuses == ["pass", "fail"]

    # the price table is data shipped in the wheel; a dated model id prices as its family
    from evaldsl.runs.prices import price_of
    assert price_of("gpt-4o-mini-2024-07-18") == (0.15, 0.6), price_of("gpt-4o-mini-2024-07-18")
    # the parser's tables come from the wheel and fit its grammar and Lark: none is built
    from evaldsl.syntax.grammar import tables_stale
    assert not tables_stale(), "the wheel's parser tables do not fit its grammar"
    # the HTML report's page, styles and script are data shipped in the wheel
    from evaldsl.reports.html import to_html_text
    from evaldsl.runner.results import Report
    page = to_html_text(Report(suites=(), duration_ms=0.0))
    assert page.startswith("<!doctype html>") and "<script" in page and "<style" in page
    print("wheel ok:", here.parent)
    """
)


def run(args: list[str], cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    done = subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert done.returncode == 0, f"{args[:4]} failed:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    return done


def build_wheel(tmp: Path) -> Path:
    """`python -m build --wheel` on a copy of the project; the wheel's path."""
    src = tmp / "src"
    src.mkdir()
    for name in PROJECT_FILES:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, src / name, ignore=shutil.ignore_patterns("__pycache__"))
        elif path.exists():
            shutil.copy2(path, src / name)
    if importlib.util.find_spec("build") is None:  # the dev extra has it; install it if not
        run([sys.executable, "-m", "pip", "install", "--quiet", "build"], tmp)
    args = [sys.executable, "-m", "build", "--wheel", "--outdir", str(tmp / "dist"), str(src)]
    if importlib.util.find_spec("setuptools") and importlib.util.find_spec("wheel"):
        args.append("--no-isolation")  # this environment has the backend: no download
    run(args, tmp)
    (wheel_path,) = (tmp / "dist").glob("evaldsl-*.whl")
    return wheel_path


@pytest.mark.slow
def test_wheel_installs_and_parses_outside_the_source_tree(tmp_path: Path) -> None:
    wheel_path = build_wheel(tmp_path)

    names = zipfile.ZipFile(wheel_path).namelist()
    assert "evaldsl/grammar/evaldsl.lark" in names
    assert "evaldsl/runs/prices.json" in names
    assert "evaldsl/grammar/evaldsl.parser.json" in names  # the parser's tables, not rebuilt
    assert "evaldsl/grammar/evaldsl.drive.json" in names  # the fast loop's tables
    for asset in ("report.html", "report.css", "report.js"):
        assert f"evaldsl/reports/html_assets/{asset}" in names
    assert not any(n.startswith("grammar/") for n in names), "a top-level `grammar` package"
    # every package of the source tree is in the wheel
    for init in (ROOT / "evaldsl").rglob("__init__.py"):
        relative = init.relative_to(ROOT).as_posix()
        assert relative in names, f"{relative} is missing from the wheel"

    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True, clear=True).create(env_dir)
    python = env_dir / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    run([str(python), "-m", "pip", "install", "--quiet", str(wheel_path)], tmp_path)

    outside = tmp_path / "elsewhere"
    outside.mkdir()
    # -I: isolated mode, so neither the current folder nor PYTHONPATH is on sys.path
    done = run([str(python), "-I", "-c", SNIPPET, str(ROOT)], outside, timeout=120)
    assert "wheel ok:" in done.stdout
