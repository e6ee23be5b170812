"""Watching real processes from the hostile tests: alive or not, files they leave."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterable
from pathlib import Path


def stat_fields(pid: int | str) -> list[str] | None:
    """The fields of `/proc/PID/stat` after the command's name (state, parent pid, …), or
    None where there is no such file."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None


def alive(pid: int) -> bool:
    """Whether process `pid` runs (a zombie, dead but not yet reaped, does not)."""
    fields = stat_fields(pid)
    if fields is None:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    return fields[0] != "Z"


def survivors(pids: Iterable[int], within: float = 15.0) -> list[int]:
    """The processes of `pids` still alive after waiting up to `within` seconds."""
    pending = set(pids)
    deadline = time.monotonic() + within
    while pending and time.monotonic() < deadline:
        pending = {p for p in pending if alive(p)}
        time.sleep(0.05)
    return sorted(p for p in pending if alive(p))


def kill_all(pids: Iterable[int]) -> None:
    """Clean up after a failed test: no process of it may outlive it."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)


def wait_for_files(folder: Path, count: int, within: float = 60.0) -> list[Path]:
    """The files in `folder` once there are at least `count` (an error after `within`)."""
    deadline = time.monotonic() + within
    while True:
        found = sorted(folder.iterdir()) if folder.exists() else []
        if len(found) >= count:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"only {len(found)} of {count} files appeared in {folder}")
        time.sleep(0.05)


def numbers(folder: Path) -> set[int]:
    """Every pid written in the files of `folder` (one or more per file, space-separated)."""
    return {int(n) for f in folder.iterdir() for n in f.read_text().split()}
