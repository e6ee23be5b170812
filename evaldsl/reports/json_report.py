"""JSON report: a `Report` as the documented `--json` text.

Takes a `Report` and gives exactly `Report.to_json()` as UTF-8 JSON text, indented by two
spaces, non-ASCII characters kept as they are (README, "Reports"), except lone surrogates,
written as JSON escapes (`jsontext.indented_json`: orjson, or the standard library for
what orjson refuses), so the report is always a file that can be written and read back.
"""

from __future__ import annotations

from evaldsl.jsontext import indented_json
from evaldsl.runner.results import Report


def to_json_text(report: Report) -> str:
    """The `--json` report, ending in a newline.

    >>> to_json_text(Report(suites=(), duration_ms=0.0)).splitlines()[:2]
    ['{', '  "version": 1,']
    """
    return indented_json(report.to_json()) + "\n"
