"""traceplay and cycgraph suites run as their own tools run them (issue "Run every traceplay
and cycgraph suite as its own tool runs it"), through the YAML front end.

Each row of tests/compat/*.yaml is one case of a real YAML suite, written to a temporary
folder and run with `load_suite` and `run_suites`:

    - point: 1                                  # the issue's point the row is about
      why: '`on` is text in YAML 1.2'           # what traceplay (or cycgraph) does
      run: demo                                 # a run of tests/cases/runs.yaml
      case: 'each: [{city: Xiamen}]'            # optional: more keys of the case (YAML)
      assertions: |                             # optional: the case's `assertions:` items
        - {kind: answer.contains, text: on}
      expect: [pass]                            # every assertion's verdict, in order
      texts: ['answer contains "on"']           # optional: the evaldsl text of each
      messages: ['…']                           # optional: a substring of each message
      codes: [W601]                             # the suite's diagnostic codes (default none)

A row with an error code in `codes` is not run (its case is reported as not run), so it
has no `expect`. Every expected value was worked out from traceplay's and cycgraph's
sources (their documents and code), not by running evaldsl.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml

from evaldsl.runner import run_suites
from evaldsl.suites.build import load_suite
from evaldsl.suites.convert import NOT_CONVERTED, to_eval
from evaldsl.suites.files import read_draft

ROOT = Path(__file__).resolve().parents[1]
TABLES = ROOT / "tests" / "compat"
FIXTURES = ROOT / "tests" / "fixtures" / "traceplay"
RUNS: dict[str, Any] = yaml.safe_load((ROOT / "tests" / "cases" / "runs.yaml").read_text("utf-8"))


def _rows() -> list[Any]:
    rows = []
    for path in sorted(TABLES.glob("*.yaml")):
        for number, row in enumerate(yaml.safe_load(path.read_text("utf-8"))["cases"], 1):
            rows.append(pytest.param(row, id=f"{path.stem}:{number}:point{row['point']}"))
    return rows


ROWS = _rows()


def source_line(run: Any, tmp: Path) -> str:
    """The case's source for a run of runs.yaml (or an inline one): `cassette:` or `state:`."""
    spec = RUNS[run] if isinstance(run, str) else run
    if "fixture" in spec:
        return f"cassette: {json.dumps(str(FIXTURES / spec['fixture']))}"
    if "state" in spec:
        (tmp / "state.json").write_text(json.dumps(spec["state"]), encoding="utf-8")
        return "state: state.json"
    if "answers" in spec:
        events = [{"type": "llm.response", "output": a} for a in spec["answers"]]
    else:
        events = spec["events"]
    (tmp / "events.json").write_text(json.dumps(events), encoding="utf-8")
    return "cassette: events.json"


def suite_text(row: dict[str, Any], tmp: Path) -> str:
    lines = ["cases:", "  - name: row", "    " + source_line(row["run"], tmp)]
    if "case" in row:
        lines.append(textwrap.indent(row["case"].rstrip("\n"), "    "))
    if "assertions" in row:
        items = row["assertions"].rstrip("\n")
        lines.append("    assertions:" + (" []" if not items else ""))
        if items:
            lines.append(textwrap.indent(items, "      "))
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("row", ROWS)
def test_compat_row(row: dict[str, Any], tmp_path: Path) -> None:
    path = tmp_path / "suite.yaml"
    path.write_text(suite_text(row, tmp_path), encoding="utf-8")
    suite = load_suite(path)
    codes = sorted(d.code for d in suite.diagnostics)
    assert codes == sorted(row.get("codes", [])), [str(d) for d in suite.diagnostics]
    if any(c.startswith("E") for c in codes):
        assert all(c.error for c in suite.cases), "a case with a check error must not run"
        return
    report = run_suites([suite])
    verdicts = [a for c in report.cases for a in c.assertions]
    assert [v.status for v in verdicts] == row["expect"], [v.message for v in verdicts]
    if "texts" in row:
        assert [a.text for c in suite.cases for a in c.assertions] == row["texts"]
    for verdict, wanted in zip(verdicts, row.get("messages", []), strict=False):
        assert wanted in verdict.message, verdict.message


def test_every_point_has_rows() -> None:
    points = {param.values[0]["point"] for param in ROWS}
    assert points == set(range(1, 13))


def test_nan_where_no_literal_can_write_it(tmp_path: Path) -> None:
    """`.nan` in a case's input or rows: `convert` says it is not converted (no traceback),
    and a dataset row expecting NaN is an error at the row."""
    (tmp_path / "rows.yaml").write_text("- {input: {x: 1}, expectedOutput: .nan}\n", "utf-8")
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        "cases:\n  - name: c\n    run: flow:target\n    input: {x: .nan}\n"
        "    each: [{v: .nan}]\n    assertions: ['output.x exists']\n"
        "  - name: d\n    run: flow:target\n    dataset: rows.yaml\n",
        encoding="utf-8",
    )
    text, _ = to_eval(read_draft(suite))
    assert "# not converted: `input` holds NaN" in text
    assert "# not converted: `each` holds NaN" in text
    # and the case does not run: an input or rows left out would pass it on others
    assert text.count(f"which no literal writes\n  {NOT_CONVERTED}\n") == 2
    codes = [(d.code, Path(d.path).name, d.line) for d in load_suite(suite).diagnostics]
    assert ("E507", "rows.yaml", 1) in codes
