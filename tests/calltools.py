"""Counting the calls a piece of work makes (`sys.setprofile`), for tests that a reading
does less work: takes the work and the module whose code is watched, gives the work's
value and the names of what that code called. Counts, never times."""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import FrameType, ModuleType
from typing import Any, TypeVar

T = TypeVar("T")


def calls_made(
    work: Callable[[], T],
    module: ModuleType | None,
    event: str = "call",
    caller: str | None = None,
) -> tuple[T, list[str]]:
    """What `work()` gives, and, in order, the names of the functions (comprehensions
    too: `<listcomp>`, `<genexpr>`) of `module` it called (`event` "call"), or of the
    built-ins called from `module`'s code ("c_call"); `module` None: any code's;
    `caller`: only those called by (a "call" event's frame made in) a function so named."""
    names: list[str] = []
    filename = None if module is None else module.__file__

    def count(frame: FrameType, kind: str, arg: Any) -> None:
        if kind != event or (filename is not None and frame.f_code.co_filename != filename):
            return
        if caller is not None and (frame.f_back is None or frame.f_back.f_code.co_name != caller):
            return
        names.append(arg.__name__ if kind == "c_call" else frame.f_code.co_name)

    sys.setprofile(count)
    try:
        return work(), names
    finally:
        sys.setprofile(None)
