"""JSON report: a `Report` as the documented `--json` text.

Takes a `Report` and gives exactly `Report.to_json()` as UTF-8 JSON text, indented by two
spaces, non-ASCII characters kept as they are (README, "Reports").
"""

from __future__ import annotations

import json

from evaldsl.runner.results import Report


def to_json_text(report: Report) -> str:
    """The `--json` report, ending in a newline.

    >>> to_json_text(Report(suites=(), duration_ms=0.0)).splitlines()[:2]
    ['{', '  "version": 1,']
    """
    return json.dumps(report.to_json(), indent=2, ensure_ascii=False) + "\n"
