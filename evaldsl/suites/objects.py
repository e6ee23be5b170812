"""Object-form assertions: traceplay's and cycgraph's YAML objects, as evaldsl text.

Takes one assertion object from a YAML or JSON suite (`{kind: tool.called, name, times}`,
`{type: memory_matches, key, mode, pattern}`, …) with the place it is written, and gives
the equivalent evaldsl text (`tool get_weather called 2 times`), or diagnostics at the
object's fields: an unknown kind or type, a missing field, a field of the wrong type, an
unknown field with a did-you-mean (`path:` → `jsonPath:`). The text is then parsed,
checked and compiled like any other, so both front ends share every check; and
`evaldsl convert` prints the same text.

Where evaldsl deliberately differs from the originals (README, "Coming from traceplay and
cycgraph"): `contains` is typed rather than a search in JSON text; `budget.maxTokens`
counts every usage shape; `answer.shape` and JSONPaths read own keys only; `memory_matches`
exact with no `expected` is an error rather than a pass on a missing key.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Mapping
from typing import Any

import attrs

from evaldsl.language.diagnostics import Diagnostic, did_you_mean

_BARE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# words that would read as a keyword where a bare name is written
_RESERVED_NAMES = {"calls", "true", "false", "null"}


@attrs.frozen
class Place:
    """Where an object is written, to point diagnostics at it and at its fields."""

    path: str
    line: int
    column: int
    field_positions: Mapping[str, tuple[int, int]] = attrs.Factory(dict)
    source_line: Callable[[int], str] = lambda _line: ""

    def at(self, key: str | None = None) -> tuple[int, int]:
        if key is not None and key in self.field_positions:
            return self.field_positions[key]
        return (self.line, self.column)

    def error(
        self, key: str | None, code: str, message: str, hint: str | None = None
    ) -> Diagnostic:
        line, column = self.at(key)
        return Diagnostic.in_file(
            self.path,
            code,
            message,
            line=line,
            column=column,
            hint=hint,
            source_line=self.source_line(line),
        )


# ---- small writers ------------------------------------------------------------------------


def dsl_string(text: str) -> str:
    """A DSL string literal (JSON escapes): `dsl_string('a"b') == '"a\\\\"b"'`."""
    return json.dumps(text, ensure_ascii=False)


def dsl_name(name: str) -> str:
    """A name, bare when it can be, quoted otherwise."""
    return name if _BARE.match(name) and name not in _RESERVED_NAMES else dsl_string(name)


def dsl_value(value: Any) -> str:
    """A JSON value as a DSL literal (JSON itself is valid DSL value syntax)."""
    return json.dumps(value, ensure_ascii=False)


def dsl_regex(pattern: str) -> str:
    """A regex literal: `/…/` with any unescaped `/` escaped, newlines written `\\n`."""
    out: list[str] = []
    escaped = False
    in_class = False
    for ch in pattern:
        if escaped:
            out.append(ch)
            escaped = False
            continue
        if ch == "\\":
            escaped = True
        elif ch == "[":
            in_class = True
        elif ch == "]":
            in_class = False
        elif ch == "/" and not in_class:
            out.append("\\")
        elif ch == "\n":
            out.append("\\n")
            continue
        out.append(ch)
    return "/" + "".join(out) + "/"


def dsl_key_access(subject: str, key: str) -> str:
    return f"{subject}.{key}" if _BARE.match(key) else f"{subject}[{dsl_string(key)}]"


# ---- field checking -----------------------------------------------------------------------

# Field names people write for the real ones (traceplay's docs list `path:` for
# `jsonPath:` as the most common mistake); spelling distance alone would miss them.
_ALIASES = {
    "path": "jsonPath",
    "json_path": "jsonPath",
    "jsonpath": "jsonPath",
    "equal": "equals",
    "eq": "equals",
    "match": "matches",
    "pattern": "regex",
    "contains": "text",
    "tool": "name",
    "tools": "names",
    "max": "value",
    "min_hits": "minHits",
    "node": "node_id",
    "status": "expected",
}


def _guess_field(key: str, known: Collection[str]) -> str | None:
    alias = _ALIASES.get(key)
    if alias in known:
        return alias
    return did_you_mean(key, known)


def unknown_field(key: object, known: Collection[str], what: str) -> tuple[str | None, str, str]:
    """The likely field, the message and the hint for a key that is not one of `known`
    (`what` completes "`key` is not …": "a case field", "a field of `tool.args`").
    Every front end reports unknown keys through this, with the same did-you-mean.

    >>> unknown_field("path", {"jsonPath", "name"}, "a field of `tool.args`")[2]
    'did you mean `jsonPath:`?'
    """
    guess = _guess_field(str(key), known)
    hint = f"did you mean `{guess}:`?" if guess else "fields: " + ", ".join(sorted(known))
    return guess, f"`{key}` is not {what}", hint


class _Fields:
    """Reads an object's fields, collecting diagnostics instead of raising."""

    def __init__(self, obj: Mapping[str, Any], place: Place, what: str, known: set[str]):
        self.obj = obj
        self.place = place
        self.what = what
        self.diags: list[Diagnostic] = []
        self.renamed: dict[str, str] = {}
        for key in obj:
            if key not in known:
                guess, message, hint = unknown_field(key, known, f"a field of {what}")
                if guess:
                    self.renamed[guess] = str(key)
                self.diags.append(place.error(str(key), "E508", message, hint))

    def _wrong(self, key: str, wanted: str) -> None:
        found = type(self.obj[key]).__name__.replace("NoneType", "null").replace("dict", "mapping")
        self.diags.append(
            self.place.error(key, "E507", f"`{key}` of {self.what} must be {wanted}, not {found}")
        )

    def missing(self, key: str, example: str = "…") -> None:
        if key in self.renamed:
            return  # already reported at the misspelt field, with the right name
        self.diags.append(
            self.place.error(None, "E506", f"{self.what} needs `{key}`", f"add `{key}: {example}`")
        )

    def text(self, key: str, *, required: bool = True, empty_ok: bool = False) -> str | None:
        if key not in self.obj:
            if required:
                self.missing(key)
            return None
        value = self.obj[key]
        if not isinstance(value, str) or (not empty_ok and value == ""):
            self._wrong(key, "a non-empty string" if not empty_ok else "a string")
            return None
        return value

    def integer(self, key: str, *, required: bool = False, minimum: int = 0) -> int | None:
        if key not in self.obj:
            if required:
                self.missing(key, "N")
            return None
        value = self.obj[key]
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            self._wrong(key, f"a whole number ≥ {minimum}")
            return None
        return value

    def number(self, key: str, *, required: bool = True) -> float | int | None:
        if key not in self.obj:
            if required:
                self.missing(key, "N")
            return None
        value = self.obj[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self._wrong(key, "a number")
            return None
        return value

    def names(self, key: str) -> list[str] | None:
        if key not in self.obj:
            self.missing(key, "[a, b]")
            return None
        value = self.obj[key]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self._wrong(key, "a list of names")
            return None
        return value

    def step(self) -> str:
        """traceplay's `step`: 1-based among responses; absent, 0, negative or not an
        integer means the last."""
        value = self.obj.get("step")
        if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
            return f"answer[{value}]"
        return "answer"


# ---- traceplay ----------------------------------------------------------------------------

_TRACEPLAY_FIELDS: dict[str, set[str]] = {
    "tool.called": {"name", "times"},
    "tool.order": {"names"},
    "tool.args": {"name", "jsonPath", "equals", "matches"},
    "forbid.tool": {"name"},
    "answer.contains": {"text", "step"},
    "answer.matches": {"regex", "step"},
    "answer.judge": {"rubric", "model", "step"},
    "budget.maxTokens": {"value"},
    "budget.maxSteps": {"value"},
    "answer.shape": {"required", "fields", "json", "step"},
    "flow.usesResult": {"tool", "fromPath", "minHits", "step"},
}

_SHAPE_SPEC_FIELDS = {"type", "equals", "contains", "matches", "enum"}
_JSON_TYPES = {"string", "number", "integer", "boolean", "array", "object", "null"}


def _traceplay(
    kind: str, obj: Mapping[str, Any], place: Place
) -> tuple[str | None, list[Diagnostic]]:
    f = _Fields(obj, place, f"`{kind}`", _TRACEPLAY_FIELDS[kind] | {"kind", "description"})
    text: str | None = None
    match kind:
        case "tool.called":
            name = f.text("name")
            times = f.integer("times")
            if name is not None:
                text = f"tool {dsl_name(name)} called"
                if times is not None:
                    text += f" {times} times"
        case "tool.order":
            names = f.names("names")
            if names is not None:
                text = f"tools in order [{', '.join(dsl_name(n) for n in names)}]"
        case "tool.args":
            name = f.text("name")
            path = f.text("jsonPath")
            test: str | None = None
            if "equals" in obj:
                test = f"== {dsl_value(obj['equals'])}"
            elif "matches" in obj:
                pattern = f.text("matches", empty_ok=True)
                test = f"matches {dsl_regex(pattern)}" if pattern is not None else None
            else:
                f.diags.append(
                    place.error(
                        None,
                        "E506",
                        "`tool.args` needs `equals` or `matches`",
                        "add `equals: VALUE` or `matches: REGEX`",
                    )
                )
            if name is not None and path is not None and test is not None:
                text = f"tool {dsl_name(name)} args {path} {test}"
        case "forbid.tool":
            name = f.text("name")
            if name is not None:
                text = f"no tool {dsl_name(name)}"
        case "answer.contains":
            needle = f.text("text", empty_ok=True)
            if needle is not None:
                text = f"{f.step()} contains {dsl_string(needle)}"
        case "answer.matches":
            pattern = f.text("regex", empty_ok=True)
            if pattern is not None:
                text = f"{f.step()} matches {dsl_regex(pattern)}"
        case "answer.judge":
            rubric = f.text("rubric")
            model = f.text("model", required=False)
            if rubric is not None:
                text = f"{f.step()} judged {dsl_string(rubric)}"
                if model is not None:
                    text += f" by {dsl_string(model)}"
        case "budget.maxTokens" | "budget.maxSteps":
            value = f.number("value")
            if value is not None:
                subject = "tokens" if kind == "budget.maxTokens" else "steps"
                text = f"{subject} <= {dsl_value(value)}"
        case "answer.shape":
            text = _shape(f, obj, place)
        case "flow.usesResult":
            tool = f.text("tool")
            hits = f.integer("minHits", minimum=1)
            from_path = f.text("fromPath", required=False)
            if tool is not None:
                text = f"{f.step()} cites tool {dsl_name(tool)}"
                if from_path is not None:
                    text += f" {from_path}"
                if hits is not None:
                    text += f" at least {hits} values"
    return (text if not f.diags else None), f.diags


def _shape(f: _Fields, obj: Mapping[str, Any], place: Place) -> str | None:
    subject = f.step() + " json"
    parts: list[str] = []
    required = obj.get("required", [])
    if not isinstance(required, list) or not all(isinstance(p, str) for p in required):
        f.diags.append(place.error("required", "E507", "`required` must be a list of JSONPaths"))
        required = []
    for path in required:
        parts.append(_exists(subject, path))
    fields = obj.get("fields", {})
    if not isinstance(fields, dict):
        f.diags.append(place.error("fields", "E507", "`fields` must map JSONPaths to specs"))
        fields = {}
    for path, spec in fields.items():
        if isinstance(spec, str):
            spec = {"type": spec}
        if not isinstance(spec, dict):
            f.diags.append(
                place.error("fields", "E507", f"the spec of `{path}` must be a type name or a map")
            )
            continue
        for key in spec:
            if key not in _SHAPE_SPEC_FIELDS:
                guess = did_you_mean(str(key), _SHAPE_SPEC_FIELDS)
                f.diags.append(
                    place.error(
                        "fields",
                        "E508",
                        f"`{key}` is not part of a field spec",
                        f"did you mean `{guess}`?"
                        if guess
                        else "use type, equals, contains, matches or enum",
                    )
                )
        at = f"{subject} {path}"
        if "type" in spec:
            if spec["type"] not in _JSON_TYPES:
                guess = did_you_mean(str(spec["type"]), _JSON_TYPES)
                f.diags.append(
                    place.error(
                        "fields",
                        "E507",
                        f"unknown JSON type `{spec['type']}`",
                        f"did you mean `{guess}`?" if guess else None,
                    )
                )
            else:
                parts.append(f"{at} is {spec['type']}")
        if "equals" in spec:
            parts.append(f"{at} == {dsl_value(spec['equals'])}")
        if "contains" in spec:
            parts.append(f"{at} contains {dsl_value(spec['contains'])}")
        if "matches" in spec and isinstance(spec["matches"], str):
            parts.append(f"{at} matches {dsl_regex(spec['matches'])}")
        if "enum" in spec and isinstance(spec["enum"], list):
            parts.append(f"{at} in {dsl_value(spec['enum'])}")
    if not parts:
        parts.append(f"{subject} not empty")
    return " and ".join(parts)


def _exists(subject: str, path: str) -> str:
    """`required` paths: the path finds a value (null included), written with `has` on
    its parent where the last step is a key."""
    m = re.match(r"^(.*?)(?:\.([A-Za-z_][\w-]*)|\[(['\"])(.*)\3\])$", path)
    if m and m.group(1).startswith("$"):
        parent = m.group(1)
        key = m.group(2) if m.group(2) is not None else m.group(4)
        where = subject if parent == "$" else f"{subject} {parent}"
        return f"{where} has {dsl_name(key)}"
    return f"{subject} {path} not empty"


# ---- cycgraph -----------------------------------------------------------------------------

_CYCGRAPH_FIELDS: dict[str, set[str]] = {
    "status_equals": {"expected"},
    "memory_contains": {"key"},
    "memory_not_empty": {"key"},
    "memory_matches": {"key", "pattern", "mode", "expected"},
    "token_budget_respected": set(),
    "llm_judge": {"criteria", "threshold", "evaluator_agent_id"},
    "node_visited": {"node_id"},
}


def _cycgraph(
    kind: str, obj: Mapping[str, Any], place: Place
) -> tuple[str | None, list[Diagnostic]]:
    f = _Fields(obj, place, f"`{kind}`", _CYCGRAPH_FIELDS[kind] | {"type", "description"})
    text: str | None = None
    match kind:
        case "status_equals":
            expected = f.text("expected")
            if expected is not None:
                text = f"status == {dsl_name(expected)}"
        case "memory_contains":
            key = f.text("key")
            if key is not None:
                text = f"memory has {dsl_name(key)}"
        case "memory_not_empty":
            key = f.text("key")
            if key is not None:
                text = f"{dsl_key_access('memory', key)} not empty"
        case "memory_matches":
            key = f.text("key")
            mode = f.text("mode")
            pattern = f.text("pattern", required=mode == "regex", empty_ok=True)
            if key is not None and mode is not None:
                subject = dsl_key_access("memory", key)
                if mode == "regex":
                    if pattern is not None:
                        text = f"{subject} matches {dsl_regex(pattern)}"
                elif mode in ("exact", "contains"):
                    if "expected" not in obj:
                        f.diags.append(
                            place.error(
                                None,
                                "E506",
                                f"`memory_matches` with mode {mode} needs `expected`",
                                "add `expected: VALUE`",
                            )
                        )
                    else:
                        op = "==" if mode == "exact" else "contains"
                        text = f"{subject} {op} {dsl_value(obj['expected'])}"
                else:
                    f.diags.append(
                        place.error(
                            "mode",
                            "E507",
                            f"unknown mode `{mode}`",
                            "mode is exact, contains or regex",
                        )
                    )
        case "token_budget_respected":
            text = "tokens within budget"
        case "llm_judge":
            criteria = f.text("criteria")
            threshold = f.number("threshold")
            if criteria is not None and threshold is not None:
                text = f"memory judged {dsl_string(criteria)} >= {dsl_value(threshold)}"
        case "node_visited":
            node = f.text("node_id")
            if node is not None:
                text = f"node {dsl_name(node)} visited"
    return (text if not f.diags else None), f.diags


# traceplay objects say `kind:`, cycgraph objects `type:`
_FRONT_ENDS = (
    ("kind", _TRACEPLAY_FIELDS, _traceplay),
    ("type", _CYCGRAPH_FIELDS, _cycgraph),
)


# ---- entry point --------------------------------------------------------------------------


def object_to_dsl(obj: Any, place: Place) -> tuple[str | None, list[Diagnostic]]:
    """The evaldsl text of one assertion object, or the diagnostics that prevent it."""
    if not isinstance(obj, Mapping):
        return None, [
            place.error(
                None,
                "E507",
                "an assertion must be an object with `kind:` (traceplay) or `type:` (cycgraph), "
                "or a string of evaldsl text",
            )
        ]
    for field, known, convert in _FRONT_ENDS:
        if field not in obj:
            continue
        kind = obj[field]
        if kind in known:
            return convert(str(kind), obj, place)
        guess = did_you_mean(str(kind), known)
        return None, [
            place.error(
                field,
                "E505",
                f"unknown assertion {field} `{kind}`",
                f"did you mean `{guess}`?" if guess else f"{field}s: " + ", ".join(sorted(known)),
            )
        ]
    return None, [
        place.error(
            None,
            "E506",
            "an assertion object needs `kind:` (traceplay) or `type:` (cycgraph)",
            "e.g. {kind: tool.called, name: search} or {type: status_equals, expected: completed}",
        )
    ]
