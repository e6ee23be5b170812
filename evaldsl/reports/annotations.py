"""Annotations: diagnostics as CI code-scanning formats (GitHub workflow commands, SARIF).

Takes `Diagnostic` records (what `evaldsl check` finds) and gives text a CI system turns
into inline annotations on the lines they are about:

- `github`: one GitHub Actions workflow command per diagnostic,
  `::error file=x.eval,line=3,col=8,endLine=3,endColumn=12,title=evaldsl E301::message`
  (`warning` → `::warning`, `info` → `::notice`); the message carries the hint on a second
  line. Escaped as the runner requires: `%`, CR and LF in the message; those and `:` and
  `,` too in property values. Columns are the diagnostics' own (code points), and are
  left out when a diagnostic spans several lines (annotations only take columns on one
  line).
- `sarif`: a SARIF 2.1.0 log (the shape GitHub code scanning uploads read) with one rule
  per code used and one result per diagnostic.

Columns in SARIF: the format's default column unit is UTF-16 code units, which is what
viewers (GitHub code scanning, the VS Code SARIF viewer) assume. Diagnostics count code
points, so each column is converted with the line's text (`Diagnostic.source_line`) and
the run says `"columnKind": "utf16CodeUnits"` explicitly. Without the line's text (and
for an end column on another line) the code-point column is kept: it is the same number
unless a character outside the Basic Multilingual Plane (an emoji) comes before it.

Paths: relative to `base` (default: the current folder) when the file is under it,
written with `/`; SARIF gives them as percent-encoded relative URI references, and a
path outside `base` as an absolute `file:` URI.
"""

import json
import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path, PurePath
from typing import Any, Literal
from urllib.parse import quote

from evaldsl.language.diagnostics import CODES, Diagnostic, abbreviated, sort_key
from evaldsl.language.printable import controls_escaped
from evaldsl.language.source import utf16_column

# No `from __future__ import annotations` in this module: its name is `annotations`, and
# `evaldsl.reports` imports it by that name.

Format = Literal["github", "sarif"]

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
SARIF_VERSION = "2.1.0"
#: `tool.driver.informationUri` in SARIF logs. A placeholder (the `.invalid` top-level
#: domain never resolves) until the project has a home page to point at.
INFORMATION_URI = "https://evaldsl.invalid/"

_GITHUB_LEVEL = {"error": "error", "warning": "warning", "info": "notice"}
_SARIF_LEVEL = {"error": "error", "warning": "warning", "info": "note"}

Renderer = Callable[[Sequence[Diagnostic], Path], str]


def render(
    diagnostics: Iterable[Diagnostic],
    fmt: Format,
    *,
    base: str | os.PathLike[str] | None = None,
) -> str:
    """Diagnostics as `fmt` (`github` or `sarif`), sorted by file and position.

    `base` is the folder paths are made relative to (default: the current folder).
    Raises ValueError for another format name.

    >>> render([], "github")
    ''
    >>> json.loads(render([], "sarif"))["version"]
    '2.1.0'
    """
    try:
        renderer = FORMATS[fmt]
    except KeyError:
        raise ValueError(
            f"unknown annotation format {fmt!r}; expected one of " + ", ".join(sorted(FORMATS))
        ) from None
    root = Path(base) if base is not None else Path.cwd()
    return renderer(sorted(diagnostics, key=sort_key), root)


# ---- GitHub workflow commands -------------------------------------------------------------


def github(diagnostics: Sequence[Diagnostic], base: Path | None = None) -> str:
    r"""GitHub Actions workflow commands, one line per diagnostic (no trailing newline).

    >>> d = Diagnostic.in_file("a.eval", "E301", 'unknown tool "x"', line=3, column=8)
    >>> print(github([d]))
    ::error file=a.eval,line=3,col=8,endLine=3,endColumn=9,title=evaldsl E301::unknown tool "x"
    """
    root = base if base is not None else Path.cwd()
    lines = []
    for d in diagnostics:
        line, column, end_line, end_column = _clamped(d)
        props = [("file", _relative_posix(d.path, root)), ("line", str(line))]
        if end_line == line:
            props.append(("col", str(column)))
        props.append(("endLine", str(end_line)))
        if end_line == line:
            props.append(("endColumn", str(end_column)))
        props.append(("title", f"evaldsl {d.code}"))
        # control characters from a suite would act on the log viewer: shown as escapes
        head = ",".join(f"{key}={escape_property(controls_escaped(v))}" for key, v in props)
        # (a message quoting a megabyte literal is cut as on the console: an annotation is
        # read by people, and GitHub keeps only the start of a long one; SARIF keeps all)
        shown = abbreviated(d.message) + (f"\nhint: {abbreviated(d.hint)}" if d.hint else "")
        message = escape_data(controls_escaped(shown))
        lines.append(f"::{_GITHUB_LEVEL[d.severity]} {head}::{message}")
    return "\n".join(lines)


def escape_data(text: str) -> str:
    """Escape a workflow command's message: `%` → `%25`, CR → `%0D`, LF → `%0A`.

    >>> escape_data("100%\\ndone")
    '100%25%0Adone'
    """
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """Escape a workflow command's property value: as the message, and `:` → `%3A`,
    `,` → `%2C`.

    >>> escape_property("C:/a,b.eval")
    'C%3A/a%2Cb.eval'
    """
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


# ---- SARIF --------------------------------------------------------------------------------


def sarif(diagnostics: Sequence[Diagnostic], base: Path | None = None) -> str:
    """A SARIF 2.1.0 log: one run, one rule per code used, one result per diagnostic."""
    return json.dumps(sarif_log(diagnostics, base), indent=2, ensure_ascii=False)


def sarif_log(diagnostics: Sequence[Diagnostic], base: Path | None = None) -> dict[str, Any]:
    """The SARIF log as a dict (what `sarif` serialises)."""
    from evaldsl.version import __version__

    root = base if base is not None else Path.cwd()
    codes = sorted({d.code for d in diagnostics})
    index = {code: i for i, code in enumerate(codes)}
    rules = [
        {
            "id": code,
            "shortDescription": {"text": CODES.get(code, code)},
            "defaultConfiguration": {"level": "warning" if code.startswith("W") else "error"},
        }
        for code in codes
    ]
    results = []
    for d in diagnostics:
        result: dict[str, Any] = {
            "ruleId": d.code,
            "ruleIndex": index[d.code],
            "level": _SARIF_LEVEL[d.severity],
            "message": {"text": message_text(d)},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": _uri(d.path, root)},
                        "region": _region(d),
                    }
                }
            ],
        }
        fix = _sarif_fix(d, root)
        if fix is not None:
            result["fixes"] = [fix]
        results.append(result)
    return {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "evaldsl",
                        "version": __version__,
                        "informationUri": INFORMATION_URI,
                        "rules": rules,
                    }
                },
                "columnKind": "utf16CodeUnits",
                "results": results,
            }
        ],
    }


def _region(d: Diagnostic) -> dict[str, int]:
    """The SARIF region: 1-based lines, 1-based UTF-16 columns, end column exclusive.

    >>> d = Diagnostic.in_file("a.eval", "E301", "m", line=1, column=3, source_line="😀é x")
    >>> _region(d)
    {'startLine': 1, 'startColumn': 4, 'endLine': 1, 'endColumn': 5}
    """
    line, column, end_line, end_column = _clamped(d)
    start = _utf16(d.source_line, column)
    end = _utf16(d.source_line, end_column) if end_line == line else end_column
    return {"startLine": line, "startColumn": start, "endLine": end_line, "endColumn": end}


def _sarif_fix(d: Diagnostic, root: Path) -> dict[str, Any] | None:
    """The diagnostic's fix as a SARIF `fix`: one replacement in its file. Only a fix on
    the diagnostic's own line (all of them today): its columns are turned into UTF-16
    with that line's text, which a diagnostic carries and no other line's."""
    fix = d.fix
    if fix is None or fix.line != d.line or fix.end_line != d.line:
        return None
    start, end = _utf16(d.source_line, fix.column), _utf16(d.source_line, fix.end_column)
    region = {"startLine": fix.line, "startColumn": start, "endLine": fix.line, "endColumn": end}
    return {
        "description": {"text": d.hint or "apply the fix"},
        "artifactChanges": [
            {
                "artifactLocation": {"uri": _uri(d.path, root)},
                "replacements": [{"deletedRegion": region, "insertedContent": {"text": fix.text}}],
            }
        ],
    }


def _utf16(line_text: str, column: int) -> int:
    """A 1-based code-point column as a 1-based UTF-16 column (unchanged without text)."""
    if not line_text:
        return column
    beyond = max(0, column - 1 - len(line_text))  # a column past the end of the line
    return utf16_column(line_text, column) + beyond + 1


# ---- shared -------------------------------------------------------------------------------


def message_text(d: Diagnostic) -> str:
    """The message shown in an annotation: the diagnostic's message, then its hint.

    >>> message_text(Diagnostic.in_file("a", "E101", "bad", hint="fix it"))
    'bad\\nhint: fix it'
    """
    return d.message + (f"\nhint: {d.hint}" if d.hint else "")


def _clamped(d: Diagnostic) -> tuple[int, int, int, int]:
    """Line, column, end line, end column: at least 1, and the end never before the start."""
    line = max(1, d.line)
    column = max(1, d.column)
    end_line = max(line, d.end_line)
    end_column = max(1, d.end_column)
    if end_line == line:
        end_column = max(column, end_column)
    return line, column, end_line, end_column


def _relative_posix(path: str, base: Path) -> str:
    """`path` relative to `base` when it lies under it, with `/` separators.

    >>> _relative_posix("./examples/../x.eval", Path("/work"))
    'x.eval'
    >>> _relative_posix("/work/a/b.eval", Path("/work"))
    'a/b.eval'
    >>> _relative_posix("/elsewhere/b.eval", Path("/work"))
    '/elsewhere/b.eval'
    """
    p = PurePath(path)
    if p.is_absolute():
        try:
            p = PurePath(os.path.normpath(p)).relative_to(os.path.normpath(base.absolute()))
        except ValueError:
            return PurePath(os.path.normpath(p)).as_posix()
        return p.as_posix()
    return PurePath(os.path.normpath(p)).as_posix()


def _uri(path: str, base: Path) -> str:
    """A SARIF `artifactLocation.uri`: a relative reference, or a `file:` URI.

    >>> _uri("dir/a b:c.eval", Path("/work"))
    'dir/a%20b%3Ac.eval'
    >>> _uri("/elsewhere/b.eval", Path("/work"))
    'file:///elsewhere/b.eval'
    """
    relative = _relative_posix(path, base)
    if PurePath(relative).is_absolute():
        return Path(relative).as_uri()
    return quote(relative, safe="/")


FORMATS: dict[str, Renderer] = {"github": github, "sarif": sarif}
