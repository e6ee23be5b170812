"""Reports: a `Report` written out in each format the CLI offers, one module per format.

Takes the records of `evaldsl.runner.results` and gives text: `json_report` (the documented
`--json` shape), `junit` (JUnit XML for CI), `markdown` (a pull-request comment) and
`console` (the live console reporter); `annotations` gives `check` diagnostics as GitHub
workflow commands or SARIF. `outcome` says what a case amounts to (passed, failed, error,
skipped) the same way for every report and for the pytest plugin. `FORMATS` maps each
file format's name to its renderer; `write` puts a rendered report in a file, or on
standard output for `-`.

    >>> from evaldsl.runner.results import Report
    >>> sorted(FORMATS)
    ['json', 'junit', 'markdown']
"""

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

# No `from __future__ import annotations` in this file: it would bind the name
# `annotations` here and shadow the `evaldsl.reports.annotations` module.
from evaldsl.atomicfile import write_atomically
from evaldsl.lazyattrs import lazy_attributes
from evaldsl.runner.results import Report

if TYPE_CHECKING:  # imported on first use (`__getattr__` below)
    from evaldsl.reports.common import outcome
    from evaldsl.reports.console import ConsoleReporter
    from evaldsl.reports.json_report import to_json_text
    from evaldsl.reports.junit import to_junit_text
    from evaldsl.reports.markdown import to_markdown_text

__all__ = [
    "FORMATS",
    "ConsoleReporter",
    "annotations",
    "outcome",
    "to_json_text",
    "to_junit_text",
    "to_markdown_text",
    "write",
    "write_json",
    "write_junit",
    "write_markdown",
    "write_text",
]

# Each format's module is imported when it is first used, not with the package: `evaldsl
# run` loads the console reporter and the formats it writes, not all of them (XML, HTML).
_HOMES = {
    "ConsoleReporter": "evaldsl.reports.console",
    "outcome": "evaldsl.reports.common",
    "to_json_text": "evaldsl.reports.json_report",
    "to_junit_text": "evaldsl.reports.junit",
    "to_markdown_text": "evaldsl.reports.markdown",
}
__getattr__ = lazy_attributes(__name__, _HOMES)


def _json(report: Report) -> str:
    from evaldsl.reports.json_report import to_json_text

    return to_json_text(report)


def _junit(report: Report) -> str:
    from evaldsl.reports.junit import to_junit_text

    return to_junit_text(report)


def _markdown(report: Report) -> str:
    from evaldsl.reports.markdown import to_markdown_text

    return to_markdown_text(report)


#: Every file format a report can be written in, by the name its CLI option uses.
FORMATS: dict[str, Callable[[Report], str]] = {
    "json": _json,
    "junit": _junit,
    "markdown": _markdown,
}


def write(report: Report, fmt: str, path: str | os.PathLike[str]) -> None:
    """Render `report` as `fmt` into `path` (UTF-8; parent folders made; `-`: stdout).

    The file is written whole or not at all (a temporary file beside it, then renamed):
    a failure, a full disk say, leaves an earlier report as it was. Raises KeyError for
    an unknown format and OSError when the file cannot be written.
    """
    write_text(FORMATS[fmt](report), path)


def write_text(text: str, path: str | os.PathLike[str]) -> None:
    """Put a rendered report in `path` (UTF-8; parent folders made, through a symbolic
    link too; `-`: stdout)."""
    if str(path) == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    target = Path(path)
    # the folders of the file written: a symbolic link's own (`latest.json` pointing into
    # a folder not made yet) are where it points
    Path(os.path.realpath(target)).parent.mkdir(parents=True, exist_ok=True)
    write_atomically(target, text)


def write_json(report: Report, path: str | os.PathLike[str]) -> None:
    """Write the `--json` report: `write_json(report, "out/report.json")`."""
    write(report, "json", path)


def write_junit(report: Report, path: str | os.PathLike[str]) -> None:
    """Write the `--junit` report: `write_junit(report, "out/junit.xml")`."""
    write(report, "junit", path)


def write_markdown(report: Report, path: str | os.PathLike[str]) -> None:
    """Write the `--markdown` report: `write_markdown(report, "out/summary.md")`."""
    write(report, "markdown", path)
