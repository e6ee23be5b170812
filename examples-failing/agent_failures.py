"""Run targets that fail on purpose, for examples-failing/."""

from __future__ import annotations

import time
from typing import Any


def explode(input: dict[str, Any]) -> str:
    raise ValueError(f"no forecast for {input.get('city')!r}")


def hang(input: dict[str, Any]) -> str:
    time.sleep(30)
    return "too late"
