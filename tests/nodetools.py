"""Node.js for the tests that compare evaldsl with JavaScript: finding `node` and `npm`,
and installing a test folder's locked npm packages.

`make test` installs node and npm as root (the CI machine); elsewhere a missing tool skips
these tests, but under CI (`CI` set) it fails them: a test never quietly skips in CI.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest


def missing_tool(reason: str) -> None:
    """Skip where a tool is missing, but fail in CI (`CI` set): `make test` installs it."""
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI is set: `make test` installs it as root)")
    pytest.skip(reason)


def node_and_npm() -> tuple[str, str]:
    """The paths of `node` and `npm` (or a skip, a failure in CI)."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        missing_tool("node and npm are not on PATH: these tests need Node.js 18 or later")
    assert node is not None and npm is not None
    return node, npm


def npm_ci(folder: Path, packages: Sequence[str], npm: str) -> None:
    """`npm ci` in `folder` unless the locked versions of `packages` are installed."""
    lock = json.loads((folder / "package-lock.json").read_text(encoding="utf-8"))

    def installed(package: str) -> str | None:
        manifest = folder / "node_modules" / package / "package.json"
        if not manifest.is_file():
            return None
        return str(json.loads(manifest.read_text(encoding="utf-8"))["version"])

    def ready() -> bool:
        return all(
            installed(p) == lock["packages"][f"node_modules/{p}"]["version"] for p in packages
        )

    # pytest-xdist's workers may reach this at the same moment; two `npm ci` in one folder
    # delete each other's files, and a package half-installed may look installed. The
    # first installs under the lock, the others then find the packages installed.
    with open(folder / ".npm-ci.lock", "w", encoding="utf-8") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        if not ready():
            install(folder, npm)


def install(folder: Path, npm: str) -> None:
    """Run `npm ci` in `folder`, failing the test with npm's output if it fails."""
    proc = subprocess.run(
        [npm, "ci", "--no-audit", "--no-fund"],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if proc.returncode != 0:
        pytest.fail(f"`npm ci` in {folder.name} failed:\n{proc.stdout}\n{proc.stderr}")
