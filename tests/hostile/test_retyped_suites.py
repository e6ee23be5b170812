"""Real YAML suites with a value of the wrong type: diagnostics or verdicts, never a
traceback.

Every YAML suite of the examples and of the traceplay fixtures (traceplay's assertion
objects, cycgraph's, `expect` blocks of the language) stays YAML, in its own shape, with
one to three of its values replaced by a value of another JSON type or removed, or with
a key the suite readers look for put into a mapping that lacks it. Loaded and run as
`evaldsl run` does (suites of recordings only: no live target is started), every
problem must be a diagnostic with a code and a line, or a case's verdicts.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import yaml
from hypothesis import given
from hypothesis import strategies as st

from evaldsl.runner.core import run_suites
from evaldsl.suites.build import load_suite
from tests.clitools import ROOT
from tests.fuzzing import lenient
from tests.hostile.retyping import change_once, locations, objects_among

SUITES = sorted(
    [
        ROOT / "examples" / "weather" / "weather.yaml",
        ROOT / "examples" / "research" / "research.yaml",
        *(ROOT / "tests" / "fixtures" / "traceplay").glob("*/suite*.yaml"),
        *(ROOT / "tests" / "fixtures" / "realworld").glob("*/suite*.yaml"),
    ]
)
#: Keys the suite readers look for.
KEYS = [
    "suite", "cases", "name", "kind", "type", "names", "text", "value", "values",
    "cassette", "trace", "state", "dataset", "format", "expect", "assertions", "each",
    "input", "timeout", "tools", "nodes", "node_id", "key", "expected", "mode", "pattern",
    "times", "min", "max", "path", "judge",
]  # fmt: skip
PARSED = {path: yaml.safe_load(path.read_text(encoding="utf-8")) for path in SUITES}
WHERE = {path: list(locations(doc)) for path, doc in PARSED.items()}
MAPPINGS = {path: objects_among(doc, WHERE[path]) for path, doc in PARSED.items()}


@st.composite
def retyped(draw: st.DrawFn) -> tuple[Path, str]:
    """A suite, and its YAML with one to three values retyped or removed, or keys put."""
    suite = draw(st.sampled_from(SUITES))
    doc = yaml.safe_load(yaml.safe_dump(PARSED[suite]))  # a deep copy
    for _ in range(draw(st.integers(1, 3))):
        change_once(draw, doc, WHERE[suite], MAPPINGS[suite], KEYS)
    return suite, yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)


def _copies(base: Path) -> dict[Path, Path]:
    """Each suite's folder copied once under `base` (its recordings beside it)."""
    out = {}
    for suite in SUITES:
        folder = base / suite.parent.relative_to(ROOT)
        if not folder.exists():
            shutil.copytree(suite.parent, folder)
        out[suite] = folder
    return out


@lenient(300)
@given(retyped())
def test_a_retyped_suite_gives_diagnostics_or_verdicts(
    tmp_path_factory: Any, drawn: tuple[Path, str]
) -> None:
    suite, text = drawn
    folder = _copies(tmp_path_factory.getbasetemp() / "suites")[suite]
    path = folder / f"retyped-{suite.name}"
    path.write_text(text, encoding="utf-8")
    loaded = load_suite(path)
    for diagnostic in loaded.diagnostics:
        assert diagnostic.code and diagnostic.line >= 1
    report = run_suites([loaded])
    assert all(0.0 <= case.score <= 1.0 for case in report.cases)


def test_every_suite_loads_clean_and_offers_places_to_retype() -> None:
    assert len(SUITES) >= 9
    for suite in SUITES:
        loaded = load_suite(suite)
        assert not [d for d in loaded.diagnostics if d.is_error], suite
        assert loaded.cases and len(WHERE[suite]) >= 5, suite


def test_an_assertion_kind_that_is_not_text_is_a_diagnostic(tmp_path: Path) -> None:
    """Found by the property: `kind: []` made loading the suite raise a `TypeError` (the
    kind was looked up in a set of the known ones)."""
    demo = ROOT / "tests" / "fixtures" / "traceplay" / "demo"
    suite = tmp_path / "suite.yaml"
    suite.write_text(
        f"suite: s\ncases:\n  - name: a\n    cassette: {demo / 'cassette.example.jsonl'}\n"
        "    assertions:\n      - kind: []\n        name: get_weather\n"
        "      - type: {a: 1}\n",
        encoding="utf-8",
    )
    found = [(d.code, d.line, d.message) for d in load_suite(suite).diagnostics]
    assert ("E505", 6, "an assertion's `kind` is text, not a list") in found
    assert ("E505", 8, "an assertion's `type` is text, not an object") in found
