"""Running the `evaldsl` command in a subprocess, as a user would, for the tests."""

from __future__ import annotations

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
