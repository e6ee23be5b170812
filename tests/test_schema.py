"""The JSON Schema of YAML/JSON suites (grammar/evaldsl-suite.schema.json).

Every YAML suite in examples/ and in the traceplay fixtures validates; common mistakes
(`path:` for `jsonPath:`, an unknown kind, no `cases`) fail where an editor would show
them; and the schema agrees with the loader: the same suite and case keys, the same
kinds and types with the same fields (evaldsl.suites.yamlfile, evaldsl.suites.objects).
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

import evaldsl.suites.schema
from evaldsl.language.limits import MAX_TIMEOUT_SECONDS
from evaldsl.suites.objects import CYCGRAPH_FIELDS, TRACEPLAY_FIELDS, Place, object_to_dsl
from evaldsl.suites.schema import SCHEMA_FILE, schema_command, schema_text, suite_schema
from evaldsl.suites.yaml12 import compose, construct
from evaldsl.suites.yamlfile import CASE_KEYS, SUITE_KEYS, yaml_draft

ROOT = Path(__file__).resolve().parent.parent
SCHEMA_PATH = ROOT / "grammar" / SCHEMA_FILE
SUITES = sorted(
    [
        *ROOT.glob("examples/**/*.yaml"),
        *ROOT.glob("examples/**/*.yml"),
        *(ROOT / "tests" / "fixtures" / "traceplay").glob("*/suite.*.yaml"),
    ]
)


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    return suite_schema()


@pytest.fixture(scope="module")
def validator(schema: dict[str, Any]) -> Any:
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def loader_codes(text: str, path: Path) -> set[str]:
    """The codes the YAML loader reports for a suite, at suite and case level."""
    draft = yaml_draft(text, str(path))
    found = list(draft.diagnostics)
    for case in draft.cases:
        found.extend(case.diagnostics)
    return {d.code for d in found}


def errors_of(validator: Any, document: Any) -> list[Any]:
    return sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))


def all_messages(error: Any) -> Iterator[str]:
    """An error's message and those of every alternative under it (oneOf/anyOf)."""
    yield error.message
    for sub in error.context or ():
        yield from all_messages(sub)


def suite_with(*assertions: Any, **case: Any) -> dict[str, Any]:
    return {
        "suite": "t",
        "cases": [{"name": "c", "cassette": "c.jsonl", "assertions": list(assertions), **case}],
    }


# -- the schema itself ----------------------------------------------------------------------


def test_schema_is_a_valid_schema(schema: dict[str, Any]) -> None:
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    assert cls is jsonschema.Draft7Validator  # the draft every YAML/JSON language server reads


def test_every_ref_resolves(schema: dict[str, Any]) -> None:
    text = json.dumps(schema)
    refs = set(re.findall(r'"\$ref": "#/definitions/([^"]+)"', text))
    assert refs and refs <= set(schema["definitions"])


def test_suite_schema_loads_the_grammar_file() -> None:
    assert suite_schema() == json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    assert schema_text() == SCHEMA_PATH.read_text(encoding="utf-8")
    first = suite_schema()
    first["required"].append("changed")
    assert suite_schema()["required"] == ["cases"]  # a fresh copy each call


def test_schema_is_read_from_the_package_when_not_in_a_checkout(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(evaldsl.suites.schema, "TREE_PATH", tmp_path / "missing.json")
    assert schema_text() == SCHEMA_PATH.read_text(encoding="utf-8")  # evaldsl.grammar


def test_schema_command_prints_the_schema() -> None:
    out = io.StringIO()
    assert schema_command(out) == 0
    assert json.loads(out.getvalue()) == suite_schema()
    assert out.getvalue().endswith("}\n")


def test_weather_example_points_editors_at_the_schema() -> None:
    path = ROOT / "examples" / "weather" / "weather.yaml"
    found = re.search(
        r"^# yaml-language-server: \$schema=(\S+)$", path.read_text(encoding="utf-8"), re.M
    )
    assert found, "examples/weather/weather.yaml lost its yaml-language-server line"
    assert (path.parent / found.group(1)).resolve() == SCHEMA_PATH


# -- the schema agrees with the loader -----------------------------------------------------


def test_suite_and_case_keys_match_the_loader(schema: dict[str, Any]) -> None:
    assert set(schema["properties"]) == SUITE_KEYS | {"$schema"}
    assert set(schema["definitions"]["case"]["properties"]) == CASE_KEYS | {"kind"}


def _object_alternatives(schema: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    found = {}
    for alternative in schema["definitions"]["assertion"]["oneOf"]:
        definition = schema["definitions"][alternative["$ref"].rsplit("/", 1)[1]]
        if definition["type"] != "object":
            continue
        for tag in ("kind", "type"):
            if tag in definition["properties"]:
                found[(tag, definition["properties"][tag]["const"])] = definition
    return found


def test_kinds_and_types_match_the_loader(schema: dict[str, Any]) -> None:
    alternatives = _object_alternatives(schema)
    assert {name for tag, name in alternatives if tag == "kind"} == set(TRACEPLAY_FIELDS)
    assert {name for tag, name in alternatives if tag == "type"} == set(CYCGRAPH_FIELDS)
    for (tag, name), definition in alternatives.items():
        fields = TRACEPLAY_FIELDS[name] if tag == "kind" else CYCGRAPH_FIELDS[name]
        assert set(definition["properties"]) == fields | {tag, "description"}, name
        assert definition["additionalProperties"] is False, name
        assert tag in definition["required"], name


def test_assertion_alternatives_are_one_string_and_objects(schema: dict[str, Any]) -> None:
    alternatives = schema["definitions"]["assertion"]["oneOf"]
    assert len(alternatives) == 1 + len(TRACEPLAY_FIELDS) + len(CYCGRAPH_FIELDS)
    assert schema["definitions"]["dsl"]["type"] == "string"


# Objects both front ends see the same way: valid for the schema exactly when the loader
# turns them into evaldsl text without a diagnostic.
AGREEMENT: list[tuple[dict[str, Any], bool]] = [
    ({"kind": "tool.called", "name": "search"}, True),
    ({"kind": "tool.called", "name": "search", "times": 2}, True),
    ({"kind": "tool.called", "name": "search", "times": -1}, False),
    ({"kind": "tool.called", "name": "search", "times": "2"}, False),
    ({"kind": "tool.called", "name": ""}, False),
    ({"kind": "tool.called"}, False),
    ({"kind": "tool.called", "tool": "search"}, False),
    ({"kind": "tool.called", "name": "search", "description": "why"}, True),
    ({"kind": "tool.order", "names": ["a", "b"]}, True),
    ({"kind": "tool.order", "names": "a"}, False),
    ({"kind": "tool.args", "name": "s", "jsonPath": "$.q", "equals": {"a": [1]}}, True),
    ({"kind": "tool.args", "name": "s", "jsonPath": "$.q", "matches": "^a"}, True),
    ({"kind": "tool.args", "name": "s", "jsonPath": "$.q"}, False),
    ({"kind": "tool.args", "name": "s", "path": "$.q", "equals": 1}, False),
    # a number is a regex of its text (new RegExp(3) is /3/)
    ({"kind": "tool.args", "name": "s", "jsonPath": "$.q", "matches": 3}, True),
    ({"kind": "tool.args", "name": "s", "jsonPath": "$.q", "matches": [3]}, False),
    # traceplay's JSONPath skips `['q']`: a warning, and not valid for the schema either
    ({"kind": "tool.args", "name": "s", "jsonPath": "$['q']", "equals": 1}, False),
    ({"kind": "tool.args", "name": "s", "jsonPath": "$.a b.1[*]", "equals": 1}, True),
    ({"kind": "forbid.tool", "name": "shell"}, True),
    ({"kind": "forbid.tool", "names": ["shell"]}, False),
    ({"kind": "answer.contains", "text": ""}, True),
    ({"kind": "answer.contains", "text": "x", "step": 2}, True),
    ({"kind": "answer.contains", "contains": "x"}, False),
    ({"kind": "answer.matches", "regex": "\\d+"}, True),
    ({"kind": "answer.matches", "pattern": "\\d+"}, False),
    ({"kind": "answer.judge", "rubric": "polite", "model": "m"}, True),
    ({"kind": "answer.judge", "rubric": ""}, False),
    ({"kind": "budget.maxTokens", "value": 500}, True),
    ({"kind": "budget.maxTokens", "value": 1.5}, True),
    ({"kind": "budget.maxTokens", "value": True}, False),
    ({"kind": "budget.maxTokens", "max": 500}, False),
    ({"kind": "budget.maxSteps", "value": 3}, True),
    ({"kind": "answer.shape", "required": ["$.a"], "fields": {"$.b": "string"}}, True),
    ({"kind": "answer.shape", "fields": {"$.b": {"type": "number", "enum": [1, 2]}}}, True),
    ({"kind": "answer.shape", "fields": {"$.b": {"typ": "number"}}}, False),
    ({"kind": "answer.shape", "fields": {"$.b": "str"}}, False),
    ({"kind": "answer.shape", "required": "$.a"}, False),
    ({"kind": "flow.usesResult", "tool": "t", "minHits": 2, "fromPath": "$.id"}, True),
    ({"kind": "flow.usesResult", "tool": "t", "minHits": 0}, True),  # traceplay: max(1, 0)
    ({"kind": "flow.usesResult", "tool": "t", "minHits": "2"}, False),
    ({"kind": "tool.called", "name": "search", "times": 1.0}, True),
    ({"kind": "answer.contains", "text": 42, "step": 1.0}, True),
    ({"kind": "answer.shape", "json": False, "fields": {"$": {"matches": "^a"}}}, True),
    ({"kind": "answer.shape", "json": "no"}, False),
    ({"kind": "flow.usesResult", "name": "t"}, False),
    ({"kind": "tool.caled", "name": "search"}, False),
    ({"type": "status_equals", "expected": "completed"}, True),
    ({"type": "status_equals"}, False),
    ({"type": "status_equals", "status": "completed"}, False),
    ({"type": "memory_contains", "key": "summary"}, True),
    ({"type": "memory_contains", "key": 3}, False),
    ({"type": "memory_not_empty", "key": "summary"}, True),
    ({"type": "memory_matches", "key": "k", "mode": "exact", "expected": 42}, True),
    ({"type": "memory_matches", "key": "k", "mode": "exact", "pattern": "", "expected": 1}, True),
    ({"type": "memory_matches", "key": "k", "mode": "contains", "expected": {"a": 1}}, True),
    ({"type": "memory_matches", "key": "k", "mode": "regex", "pattern": "^D"}, True),
    ({"type": "memory_matches", "key": "k", "mode": "regex"}, False),
    ({"type": "memory_matches", "key": "k", "mode": "exact"}, False),
    ({"type": "memory_matches", "key": "k", "mode": "fuzzy", "expected": 1}, False),
    ({"type": "memory_matches", "key": "k", "expected": 1}, False),
    ({"type": "token_budget_respected"}, True),
    ({"type": "token_budget_respected", "max": 5}, False),
    ({"type": "llm_judge", "criteria": "good", "threshold": 0.7}, True),
    ({"type": "llm_judge", "criteria": "good"}, False),
    ({"type": "node_visited", "node_id": "writer"}, True),
    ({"type": "node_visited", "node": "writer"}, False),
    ({"type": "node_vistied", "node_id": "writer"}, False),
    ({"name": "search"}, False),
    ({"kind": "tool.called", "type": "status_equals", "name": "s"}, False),
]


@pytest.mark.parametrize(
    ("obj", "valid"),
    AGREEMENT,
    ids=[f"{i}-{o.get('kind', o.get('type'))}" for i, (o, _) in enumerate(AGREEMENT)],
)
def test_schema_agrees_with_the_loader(validator: Any, obj: dict[str, Any], valid: bool) -> None:
    text, problems = object_to_dsl(obj, Place("s.yaml", 1, 1))
    assert (not problems and text is not None) == valid, problems
    assert validator.is_valid(suite_with(obj)) == valid, errors_of(validator, suite_with(obj))


# -- every suite we ship validates ----------------------------------------------------------


def test_there_are_suites_to_validate() -> None:
    names = {p.name for p in SUITES}
    assert {"weather.yaml", "research.yaml", "suite.structured.yaml"} <= names
    assert len(SUITES) >= 10


@pytest.mark.parametrize("path", SUITES, ids=lambda p: str(p.relative_to(ROOT)))
def test_shipped_suite_validates(validator: Any, path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    document = yaml.safe_load(text)
    problems = errors_of(validator, document)
    assert not problems, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in problems)
    # and the loader finds no problem of the kind the schema covers either
    assert not {c for c in loader_codes(text, path) if c.startswith("E5")}


def test_json_suite_with_a_schema_key_validates(validator: Any) -> None:
    document = {"$schema": "../grammar/evaldsl-suite.schema.json", **suite_with("steps <= 3")}
    assert validator.is_valid(document)


# -- mistakes fail, where an editor would show them ---------------------------------------


def test_path_instead_of_json_path_is_flagged_at_the_field(validator: Any) -> None:
    document = suite_with(
        {"kind": "tool.args", "name": "get_weather", "path": "$.city", "equals": "Xiamen"}
    )
    (error,) = errors_of(validator, document)
    assert list(error.absolute_path) == ["cases", 0, "assertions", 0]
    messages = list(all_messages(error))
    assert any("'path' was unexpected" in m for m in messages)
    assert any("'jsonPath' is a required property" in m for m in messages)


def test_unknown_kind_fails(validator: Any) -> None:
    (error,) = errors_of(validator, suite_with({"kind": "tool.caled", "name": "get_weather"}))
    assert list(error.absolute_path) == ["cases", 0, "assertions", 0]
    assert any("'tool.called' was expected" in m for m in all_messages(error))


def test_unknown_type_fails(validator: Any) -> None:
    assert not validator.is_valid(suite_with({"type": "status_equal", "expected": "completed"}))


def test_missing_cases_fails(validator: Any) -> None:
    (error,) = errors_of(validator, {"suite": "no cases"})
    assert error.message == "'cases' is a required property"


@pytest.mark.parametrize(
    ("document", "where"),
    [
        ({"suite": "s", "case": [], "cases": []}, []),  # unknown suite key
        ({"cases": [{"name": "c", "casette": "x.jsonl", "expect": "steps < 2"}]}, ["cases", 0]),
        ({"cases": [{"name": "c", "expect": "steps < 2"}]}, ["cases", 0]),  # no source
        ({"cases": [{"cassette": "a", "state": "b", "expect": "x"}]}, ["cases", 0]),  # two
        ({"cases": [{"dataset": "rows.json"}]}, ["cases", 0]),  # a dataset needs `run`
        ({"cases": [{"cassette": "a", "format": "otel"}]}, ["cases", 0]),  # format: trace
        ({"cases": [{"trace": "a", "format": "zipkin"}]}, ["cases", 0, "format"]),
        ({"cases": [{"cassette": ""}]}, ["cases", 0, "cassette"]),
        ({"cases": [{"cassette": "a", "expect": 3}]}, ["cases", 0, "expect"]),
        ({"cases": [{"cassette": "a", "expect": ["ok", 3]}]}, ["cases", 0, "expect"]),
        ({"cases": [{"cassette": "a", "each": {"city": "Paris"}}]}, ["cases", 0, "each"]),
        ({"cases": [{"cassette": "a", "each": ["Paris"]}]}, ["cases", 0, "each", 0]),
        ({"cases": [{"cassette": "a", "assertions": {"kind": "x"}}]}, ["cases", 0, "assertions"]),
        ({"cases": [{"cassette": "a", "timeout": "10 seconds"}]}, ["cases", 0, "timeout"]),
        ({"cases": [{"cassette": "a", "timeout": 0}]}, ["cases", 0, "timeout"]),
        ({"timeout": "1d", "cases": []}, ["timeout"]),
        ({"judge": {"name": "m"}, "cases": []}, ["judge"]),
        ({"tools": [1, 2], "cases": []}, ["tools"]),
        ({"cases": {"name": "c"}}, ["cases"]),
        ([{"name": "c"}], []),
    ],
)
def test_suite_mistakes_fail(validator: Any, document: Any, where: list[Any]) -> None:
    problems = errors_of(validator, document)
    assert problems
    assert list(problems[0].absolute_path) == where


@pytest.mark.parametrize(
    "document",
    [
        {"cases": []},
        {"name": "traceplay name", "description": "d", "cases": []},
        {"suite": "s", "tools": "a, b", "nodes": ["n"], "judge": "m", "timeout": 30, "cases": []},
        {
            "suite": "s",
            "judge": {"model": "m"},
            "timeout": "1.5m",
            "expect": "steps < 3",
            "cases": [],
        },
        {"cases": [{"run": "pkg.mod:fn", "input": {"q": 1}, "timeout": "500ms"}]},
        {"cases": [{"run": "pkg.mod:fn", "dataset": "rows.json"}]},
        {"cases": [{"trace": "t.json", "format": "otel", "expect": ["steps < 2"]}]},
        {"cases": [{"trace": "t.json", "format": "{{fmt}}", "each": [{"fmt": "otel"}]}]},
        {"cases": [{"state": "s.json", "tags": ["a"], "metadata": {"k": 1}, "kind": "case"}]},
        {
            "cases": [
                {
                    "cassette": "c.jsonl",
                    "assertions": [{"type": "status_equals", "expected": "{{status}}"}],
                }
            ]
        },
    ],
)
def test_suite_forms_pass(validator: Any, document: Any) -> None:
    problems = errors_of(validator, document)
    assert not problems, [(list(e.absolute_path), e.message) for e in problems]


def test_failing_example_fails_where_the_loader_does(validator: Any) -> None:
    """examples-failing/mistakes.yaml: the schema flags the same three objects that
    `evaldsl check` reports (E508 `path`, E505 `tool.caled`, E506 no `expected`); the DSL
    typo under `expect:` is text, left to `evaldsl check`."""
    path = ROOT / "examples-failing" / "mistakes.yaml"
    text = path.read_text(encoding="utf-8")
    flagged = [list(e.absolute_path) for e in errors_of(validator, yaml.safe_load(text))]
    assert flagged == [["cases", 0, "assertions", i] for i in range(3)]
    assert {"E505", "E506", "E508"} <= loader_codes(text, path)


# Suite and case fields both see the same way: valid for the schema exactly when the loader
# reads them without an E5xx error. A duration is written as the grammar writes one.
FIELD_AGREEMENT: list[tuple[str, bool]] = [
    ('timeout: "1e3s"', False),  # `float` reads it; the grammar has no exponent
    ('timeout: "1_000s"', False),
    ('timeout: ".5s"', False),
    ('timeout: "1.s"', False),
    ('timeout: "1 s"', False),
    ('timeout: "1.5m"', True),
    ('timeout: " 30s "', True),
    ("timeout: 1e3", True),  # a YAML number is seconds
    ("name: 5", True),  # its text as written: "5"
    ("name: 1.50", True),
    ('name: ""', False),
    ('name: "   "', False),  # (blanks alone: a case no report line can be found by)
    ('name: " c "', True),
    ("name:", False),
    ("name: true", False),
    ("name: [a]", False),
    ('name: "c"', True),
]


@pytest.mark.parametrize(("field", "valid"), FIELD_AGREEMENT, ids=[f for f, _ in FIELD_AGREEMENT])
def test_schema_agrees_with_check_on_case_fields(
    validator: Any, tmp_path: Path, field: str, valid: bool
) -> None:
    text = f"cases:\n  - cassette: c.jsonl\n    expect: steps < 3\n    {field}\n"
    path = tmp_path / "s.yaml"
    errors = {c for c in loader_codes(text, path) if c.startswith("E5")}
    assert (not errors) == valid, errors
    # read as YAML 1.2, as the loader and yaml-language-server read it (`1e3` is a number)
    assert validator.is_valid(construct(compose(text))) == valid


@pytest.mark.parametrize(
    ("field", "valid"),
    [
        ("tools: [a, b]", True),
        ('tools: [a, ""]', False),
        ('nodes: [""]', False),
        ("tools: [a, 3]", False),
    ],
)
def test_schema_agrees_with_check_on_suite_fields(
    validator: Any, tmp_path: Path, field: str, valid: bool
) -> None:
    text = f"{field}\ncases: []\n"
    errors = {c for c in loader_codes(text, tmp_path / "s.yaml") if c.startswith("E5")}
    assert (not errors) == valid, errors
    # read as YAML 1.2, as the loader and yaml-language-server read it (`1e3` is a number)
    assert validator.is_valid(construct(compose(text))) == valid


def test_check_says_where_a_duration_or_a_name_is_wrong(tmp_path: Path) -> None:
    text = (
        'tools: [a, ""]\ncases:\n  - name: ""\n    cassette: c.jsonl\n'
        '    expect: steps < 3\n    timeout: "1e3s"\n'
    )
    draft = yaml_draft(text, str(tmp_path / "s.yaml"))
    found = [*draft.diagnostics, *(d for c in draft.cases for d in c.diagnostics)]
    said = sorted((d.code, d.line, d.column, d.message) for d in found)
    assert said == [
        ("E507", 1, 12, "`tools` holds an empty name"),
        ("E507", 3, 11, "`name` is empty"),
        ("E507", 6, 14, "`timeout` is a duration such as 30s (or seconds)"),
        # (and, on a cassette case, one that would limit nothing)
        ("W514", 6, 5, "`timeout` limits a `run` target's call, and this case reads a "
         "recorded run: it limits nothing"),
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("timeout", "valid"), [("86400", True), ("86401", False), ("1e999", False), ("0", False)]
)
def test_schema_and_check_bound_a_timeout_of_seconds_alike(
    validator: Any, tmp_path: Path, timeout: str, valid: bool
) -> None:
    # the schema refused 0 (exclusiveMinimum) but took 86401 and 1e999, which check refuses
    # (E210: at most a day, MAX_TIMEOUT_SECONDS)
    text = f"timeout: {timeout}\ncases:\n  - cassette: c.jsonl\n    expect: steps < 3\n"
    assert ("E210" not in loader_codes(text, tmp_path / "s.yaml")) == valid
    assert validator.is_valid(construct(compose(text))) == valid
    assert suite_schema()["definitions"]["timeout"]["anyOf"][0]["maximum"] == MAX_TIMEOUT_SECONDS


def test_a_suite_s_own_x_keys_hold_anchors_for_the_loader_and_the_schema(
    validator: Any, tmp_path: Path
) -> None:
    """traceplay ignores a suite's keys it does not read, and suites keep YAML anchors
    there (`x-weather: &weather {…}`, as Compose files do): evaldsl refused the suite
    (E508, every case not run). An `x-` key is the suite's own, read by neither; any other
    unknown key is still E508, for the loader and the schema alike."""
    from tests.clitools import run_evaldsl

    (tmp_path / "run.jsonl").write_text(
        (ROOT / "examples" / "weather" / "cassettes" / "xiamen.jsonl").read_text("utf-8")
    )
    suite = tmp_path / "s.yaml"
    suite.write_text(
        "x-weather: &weather\n  kind: tool.called\n  name: get_weather\n"
        "cases:\n  - name: one\n    cassette: run.jsonl\n    assertions:\n      - *weather\n"
    )
    done = run_evaldsl("run", str(suite), "--no-history", "-q")
    assert done.returncode == 0, done.stdout
    assert "1 passed, 0 failed" in done.stdout
    good = {"x-weather": {"kind": "tool.called", "name": "get_weather"}, "cases": []}
    assert validator.is_valid(good), errors_of(validator, good)
    suite.write_text(suite.read_text().replace("x-weather", "xweather"))
    done = run_evaldsl("check", str(suite))
    assert "error[E508]: `xweather` is not a suite field" in done.stdout, done.stdout
    bad = {"xweather": {"kind": "tool.called", "name": "get_weather"}, "cases": []}
    assert not validator.is_valid(bad)
