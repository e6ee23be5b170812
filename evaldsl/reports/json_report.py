"""JSON report: a `Report` as the documented `--json` text.

Takes a `Report` and gives exactly `Report.to_json()` as UTF-8 JSON text, indented by two
spaces, non-ASCII characters kept as they are (README, "Reports"), except lone surrogates
(text an agent or a suite can hold, which UTF-8 cannot carry): those are written as JSON
escapes (`\\ud800`), so the report is always a file that can be written and read back.

orjson writes it (the standard library's encoder falls back to pure Python when it
indents: seconds for a run of 8,000 cases of 10 assertions, ~20x orjson's time); a report
orjson refuses (a lone surrogate, an integer past 64 bits) is written by the standard
library. Both give the same values in the same layout; they spell small numbers apart
(orjson `0.00009`, the standard library `9e-05`).
"""

from __future__ import annotations

import json
import re

import orjson

from evaldsl.runner.results import Report

_SURROGATE = re.compile("[\ud800-\udfff]")


def to_json_text(report: Report) -> str:
    """The `--json` report, ending in a newline.

    >>> to_json_text(Report(suites=(), duration_ms=0.0)).splitlines()[:2]
    ['{', '  "version": 1,']
    """
    data = report.to_json()
    try:
        return orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n"
    except TypeError:  # orjson's refusals (`JSONEncodeError` is one)
        pass
    text = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    # A surrogate can only stand inside a JSON string here, where its escape is valid.
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
