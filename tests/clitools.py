"""Running the `evaldsl` command in a subprocess, as a user would, for the tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_evaldsl(
    *args: str, cwd: Path = ROOT, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`python -m evaldsl.tools.cli ARGS` from `cwd`, without colour and without any judge
    setting of the calling shell (a test sets the ones it wants through `env`)."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("EVALDSL_JUDGE")}
    return subprocess.run(
        [sys.executable, "-m", "evaldsl.tools.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**base, "NO_COLOR": "1", "PYTHONPATH": str(ROOT), **(env or {})},
        timeout=120,
    )


def fresh_python(
    code: str,
    cache: Path,
    *args: str,
    bytecode: bool = True,
    stdin: str | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """`python -c CODE ARGS` in a fresh interpreter from the project's root, with `cache`
    as its cache folder (`XDG_CACHE_HOME`: evaldsl's code cache is written there), writing
    bytecode unless `bytecode` is False (the calling shell's setting dropped), and `env`
    on top."""
    base = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    base["XDG_CACHE_HOME"] = str(cache)
    if not bytecode:
        base["PYTHONDONTWRITEBYTECODE"] = "1"
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**base, **(env or {})},
        timeout=120,
    )


def last_json(done: subprocess.CompletedProcess[str]) -> dict[str, object]:
    """The JSON object a successful process printed last."""
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    return result


def code_cache_file(cache: Path) -> Path:
    """The one code cache file in a cache folder `fresh_python` gave a process."""
    (found,) = (cache / "evaldsl").glob("code-*.marshal")
    return found
