"""JSON text as evaldsl writes it for people and tools to read: indented by two spaces, or
compact, one record a line (`evaldsl score`'s JSON and JSONL); and, reading it back, the
refusal of `NaN` and the infinities (`refuse_constant`), which Python's reader takes and
JSON has no literal for.

Takes JSON data (and, optionally, what to write for a value JSON has no type for) and
gives the text, non-ASCII characters kept as they are but lone surrogates (text an agent
or a suite can hold, which UTF-8 cannot carry), which are written as JSON escapes
(`\\ud800`), so the text can always be written as UTF-8 and read back.

orjson writes it (the standard library's encoder falls back to pure Python when it
indents: ~20x orjson's time on a large report); what orjson refuses (a lone surrogate,
an integer past 64 bits) is written by the standard library. Both give the same values
in the same layout; they spell small numbers apart (orjson `0.00009`, the standard
library `9e-05`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import orjson

_SURROGATE = re.compile("[\ud800-\udfff]")


def indented_json(data: Any, default: Callable[[Any], Any] | None = None) -> str:
    """`data` as JSON text indented by two spaces (no newline at the end); `default`
    gives a value for what JSON has no type for, as `json.dumps`' does.

    >>> indented_json({"n": 2**70, "s": "a\\ud800"})
    '{\\n  "n": 1180591620717411303424,\\n  "s": "a\\\\ud800"\\n}'
    """
    try:
        return orjson.dumps(data, default=default, option=orjson.OPT_INDENT_2).decode()
    except TypeError:  # orjson's refusals (`JSONEncodeError` is one)
        return _standard(json.dumps(data, indent=2, ensure_ascii=False, default=default))


def compact_json(data: Any) -> str:
    """`data` as JSON text on one line without spaces, as orjson writes it, lone
    surrogates escaped as `indented_json` escapes them (a trace's file name whose bytes
    are not UTF-8 holds one).

    >>> compact_json({"trace": "bad\\udcff.jsonl", "n": [1, 2]})
    '{"trace":"bad\\\\udcff.jsonl","n":[1,2]}'
    """
    try:
        return orjson.dumps(data).decode()
    except TypeError:
        return _standard(json.dumps(data, ensure_ascii=False, separators=(",", ":")))


def _standard(text: str) -> str:
    """The standard library's JSON text with each lone surrogate as its escape."""
    # A surrogate can only stand inside a JSON string here, where its escape is valid.
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


class NotJSONConstant(ValueError):
    """`NaN`, `Infinity` or `-Infinity` in JSON text (`name`: which)."""

    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(f"{name} is not JSON")


def refuse_constant(name: str) -> Any:
    """A `parse_constant` for `json.load`/`json.loads` that refuses NaN and the
    infinities (`NotJSONConstant`, a `ValueError`)."""
    raise NotJSONConstant(name)
