"""Package attributes loaded on first use (PEP 562), for a light start.

Takes a package's name and the home module of each name it offers; gives the package's
`__getattr__`, which imports the home module when a name is first read and keeps the value
in the package, so the next use is a plain attribute. Unknown names are an
`AttributeError` worded as Python words it.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_attributes(package: str, homes: Mapping[str, str]) -> Callable[[str], Any]:
    """The `__getattr__` of `package`: each name of `homes` from its module (a full
    dotted name), imported when first read."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        setattr(sys.modules[package], name, value)  # the next use is a plain attribute
        return value

    return __getattr__
