"""The judge's modes: `live`, `frozen`, `off` (what `--judge` and `--evaldsl-judge` take).

Takes nothing and gives the names alone, without the settings class (`config.py`, which
imports attrs): the command line declares its options from them at every start, and
`--version` loads no attrs.
"""

from __future__ import annotations

from typing import Literal

JudgeMode = Literal["live", "frozen", "off"]
MODES: tuple[JudgeMode, ...] = ("live", "frozen", "off")
