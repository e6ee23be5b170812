"""Datasets: verydia-style rows → one case per row.

Takes a dataset file (a JSON or YAML array of `{input, expectedOutput, expectedBehavior:
{guardEvaluated, noGuardEvaluation}, metadata}` rows) and gives `DatasetRow`s: the row's
input for the `run` target (MISSING for a row without one: the target is then called
with no argument, as for a case without `input`), a name (`metadata.id`,
`metadata.name`, else `row N`) and the row's expectations as evaldsl text, positioned at
the row in the dataset file: `expectedOutput` → `output == …` (deep JSON equality, key
order ignored, as verydia's README says); `guardEvaluated: true` → `guards >= 1`;
`noGuardEvaluation: true` → `guards == 0`. A row without expectations adds none (it
passes on the case's own assertions alone).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs
import yaml

from evaldsl.language import ast
from evaldsl.language.diagnostics import Diagnostic
from evaldsl.language.jsjson import js_json
from evaldsl.language.limits import MAX_SUITE_BYTES
from evaldsl.language.reading import FileProblem, read_regular
from evaldsl.language.source import Position, Source
from evaldsl.language.values import MISSING
from evaldsl.runs.detect import DATASET_ROW_KEYS
from evaldsl.runs.model import describe
from evaldsl.suites.model import Snippet, SourceSpec
from evaldsl.suites.objects import dsl_value, unknown_field
from evaldsl.suites.yaml12 import compose, construct, fields, problems
from evaldsl.suites.yamlguard import check_yaml
from evaldsl.suites.yamlplaces import node_end, yaml_lines
from evaldsl.syntax.parser import parse

ROW_KEYS = DATASET_ROW_KEYS
BEHAVIOUR_KEYS = {"guardEvaluated", "noGuardEvaluation"}


@attrs.frozen
class DatasetRow:
    """One verydia dataset row, turned into a case; `diagnostics`: its problems (an
    unknown field, an expectation that cannot be read), which keep its case from running."""

    name: str
    input: Any  # MISSING when the row has none (its target is called with no argument)
    snippet: Snippet | None
    diagnostics: tuple[Diagnostic, ...] = ()


def dataset_rows(spec: SourceSpec, base_dir: Path) -> tuple[list[DatasetRow], list[Diagnostic]]:
    """Read a dataset's rows; problems are diagnostics at the dataset file's positions: a
    row's own with the row, the file's (not found, not a list, a duplicate key) beside
    the rows (every row's case, and the case itself when there is none, must not run:
    what it would be checked against was not read)."""
    assert spec.path is not None
    path = base_dir / spec.path
    shown = str(path)
    try:
        text = read_regular(path, MAX_SUITE_BYTES).decode("utf-8-sig")
    except FileProblem as problem:
        message = (
            f'dataset not found: "{spec.path}"'
            if problem.kind == "missing"
            else f"cannot read the dataset: {problem}"
        )
        return [], [
            Diagnostic.at(
                spec.source, spec.span, "E501", message, "paths are relative to the suite file"
            )
        ]
    except UnicodeDecodeError:
        return [], [Diagnostic.in_file(shown, "E504", "dataset is not UTF-8 text")]
    lines = yaml_lines(text)  # numbered as the marks of `compose` number them
    # No problem of the file itself quotes a line of it: the path may name any file (a key,
    # a password file), and messages end up in CI logs.
    try:
        root = compose(text)
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark
        return [], [
            Diagnostic.in_file(
                shown,
                "E504",
                "not a dataset: the file is not JSON or YAML",
                line=mark.line + 1 if mark else 1,
                column=(mark.column + 1 if mark else 1),
                hint="a dataset is a JSON or YAML list of rows: [{input, expectedOutput}]",
            )
        ]
    except yaml.YAMLError:
        return [], [Diagnostic.in_file(shown, "E504", "not a dataset: the file is not YAML")]
    refused = check_yaml(root)
    if refused:
        return [], [
            Diagnostic.in_file(shown, "E510", p.message, line=p.line, column=p.column, hint=p.hint)
            for p in refused
        ]

    def at(node: yaml.Node, code: str, message: str, hint: str | None = None) -> Diagnostic:
        # a place, never the line's text: a row that is not an object may be anything
        line, column = node.start_mark.line + 1, node.start_mark.column + 1
        end = node_end(node)
        return Diagnostic.in_file(
            shown, code, message, line=line, column=column, hint=hint, end=end
        )

    if not isinstance(root, yaml.SequenceNode):
        message = "not a dataset: a dataset is a list of rows: [{input, expectedOutput}]"
        return [], [Diagnostic.in_file(shown, "E504", message)]
    rows: list[DatasetRow] = []
    diags = [at(p.node, "E504", p.message, p.hint) for p in problems(root)]
    for i, node in enumerate(root.value, 1):
        value = construct(node)
        if not isinstance(value, dict):
            # this row's case alone errors: the others were read, and run (as a YAML
            # suite's case that is not a mapping errors alone)
            message = f"dataset row {i} must be an object, found {describe(value)}"
            hint = 'a row is {"input": …, "expectedOutput": …}: write this value as its "input"'
            rows.append(DatasetRow(f"row {i}", MISSING, None, (at(node, "E507", message, hint),)))
            continue
        own: list[Diagnostic] = []  # this row's problems: its case does not run
        for key in value:
            if key not in ROW_KEYS:
                _, message, hint = unknown_field(key, ROW_KEYS, "a dataset row field")
                own.append(at(_field(node, key, key=True), "E508", message, hint))
        meta: dict[str, Any] = value["metadata"] if isinstance(value.get("metadata"), dict) else {}
        name = _row_name(node, meta, i)
        parts = []
        if "expectedOutput" in value:
            try:
                parts.append(f"output == {dsl_value(value['expectedOutput'])}")
            except ValueError:  # NaN, which nothing equals
                own.append(
                    at(
                        _field(node, "expectedOutput"),
                        "E507",
                        "`expectedOutput` holds NaN (.nan): nothing equals it",
                    )
                )
        behaviour = value.get("expectedBehavior")
        if behaviour is not None:
            behaviour_node = _field(node, "expectedBehavior")
            if not isinstance(behaviour, dict):
                own.append(at(behaviour_node, "E507", "`expectedBehavior` must be an object"))
            else:
                for key, flag in behaviour.items():
                    if key not in BEHAVIOUR_KEYS:
                        _, message, hint = unknown_field(
                            key, BEHAVIOUR_KEYS, "an expectedBehavior field"
                        )
                        own.append(at(_field(behaviour_node, key, key=True), "E508", message, hint))
                    elif not isinstance(flag, bool):
                        # (verydia's contract gives flags: a "yes" or 1 read as no
                        # expectation would check nothing)
                        own.append(
                            at(
                                _field(behaviour_node, key),
                                "E507",
                                f"`{key}` must be true or false",
                                _flag_hint(flag),
                            )
                        )
                evaluated = behaviour.get("guardEvaluated") is True
                none = behaviour.get("noGuardEvaluation") is True
                if evaluated and none:
                    # both kept, so that the case fails as verydia's would, but as one
                    # assertion: two would be said to contradict each other in words
                    # (`guards == 0`) the row does not use
                    parts.append("guards >= 1 and guards == 0")
                    own.append(
                        at(
                            _field(behaviour_node, "noGuardEvaluation"),
                            "W602",
                            "this can never pass: `guardEvaluated` and `noGuardEvaluation` "
                            "are both true, and a run evaluates a guard or evaluates none",
                            "keep the one flag this row expects",
                        )
                    )
                elif evaluated:
                    parts.append("guards >= 1")
                elif none:
                    parts.append("guards == 0")
        snippet = None
        if parts:
            text = "; ".join(parts)
            source = Source(
                text,
                shown,
                fixed=Position(node.start_mark.line + 1, node.start_mark.column + 1),
                host_lines=lines,
            )
            parsed = parse(text, shown, start="statements", source=source)
            own.extend(parsed.diagnostics)
            exprs = tuple(s for s in parsed.program.statements if isinstance(s, ast.EXPR_TYPES))
            snippet = Snippet(exprs, source)
        # a row is a case: without `input` the target is called with no argument (MISSING),
        # as a case without one is, never with None
        rows.append(DatasetRow(name, value.get("input", MISSING), snippet, tuple(own)))
    return rows, diags


def _field(node: yaml.Node, name: str, *, key: bool = False) -> yaml.Node:
    """The value (or, with `key`, the key) of field `name` of a mapping node, to point at;
    the node itself where it has no such field."""
    found = fields(node).get(name)
    return node if found is None else found[0 if key else 1]


def _row_name(node: yaml.Node, meta: dict[str, Any], i: int) -> str:
    """A row's case name: its `metadata.id`, else `metadata.name`, else `row N`. A number
    or boolean is its text as written (`id: 0` is "0", `true` "true", as a case's `name:
    42` is "42"), a list or object its compact JSON; Python's `str` said "True" and
    "['a', 'b']", and took `id: 0` for no id."""
    for key in ("id", "name"):
        value = meta.get(key)
        if isinstance(value, str):
            if value.strip():
                return value
        elif isinstance(value, (list, dict)):
            return js_json(value)
        elif value is not None:
            written = _field(_field(node, "metadata"), key)
            return str(written.value) if isinstance(written, yaml.ScalarNode) else js_json(value)
    return f"row {i}"


def _flag_hint(flag: Any) -> str:
    """How to write a flag that is not a boolean: YAML 1.2 reads `yes`, `on` as text."""
    if isinstance(flag, str) and flag.lower() in ("yes", "no", "on", "off", "y", "n"):
        return (
            f'YAML 1.2, as evaldsl reads it, takes `{flag}` as the text "{flag}": '
            "write true or false"
        )
    return "write true or false"
