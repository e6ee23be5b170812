"""Object-form assertions: traceplay's and cycgraph's YAML objects, as evaldsl text.

Takes one assertion object from a YAML or JSON suite (`{kind: tool.called, name, times}`,
`{type: memory_matches, key, mode, pattern}`, …) with the place it is written, and gives
the equivalent evaldsl text (`tool get_weather called 2 times`), or diagnostics at the
object's fields: an unknown kind or type, a missing field, a field of the wrong type, an
unknown field with a did-you-mean (`path:` → `jsonPath:`). The text is then parsed,
checked and compiled like any other, so both front ends share every check; and
`evaldsl convert` prints the same text.

Fields are read as the originals read them: regexes are JavaScript's, translated to RE2
(`evaldsl.jsregex`); JSONPaths are read by traceplay's tokenizer (`evaldsl.jsforms`); numbers
are JavaScript numbers (`times: 1.0` is 1, `minHits: 0` counts as 1); a number or boolean
where traceplay searches text is that text (`text: 42` looks for "42"). Where evaldsl
deliberately differs (README, "Coming from traceplay, cycgraph and verydia"): `contains` is
typed rather than a search in JSON text; `budget.maxTokens` counts every usage shape;
JSONPaths read own keys only; `memory_matches` exact with no `expected` is an error rather
than a pass on a missing key; a field that can never hold (`.nan`, `times: 2.5`) is an error.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Collection, Mapping
from typing import Any

import attrs

from evaldsl.language.ast import JSON_TYPES
from evaldsl.language.diagnostics import Diagnostic, Fix, did_you_mean
from evaldsl.language.jsjson import js_number
from evaldsl.language.regexes import RegexProblem
from evaldsl.language.values import MISSING
from evaldsl.runs.model import describe
from evaldsl.suites.jsforms import has_nan, string_literal, traceplay_path, value_literal
from evaldsl.suites.jsregex import translate

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
    #: the keys written as themselves on one line (plain, or quoted without escapes): the
    #: 1-based line and column of the key's text, which a quick fix may rename in place
    key_texts: Mapping[str, tuple[int, int]] = attrs.Factory(dict)
    #: where each key written on one line ends (its line and the column after it), so that
    #: an editor marks the whole key, not its first character; and where the object itself
    #: ends when it is written on one line (a flow mapping)
    field_ends: Mapping[str, tuple[int, int]] = attrs.Factory(dict)
    end: tuple[int, int] | None = None

    def at(self, key: str | None = None) -> tuple[int, int]:
        if key is not None and key in self.field_positions:
            return self.field_positions[key]
        return (self.line, self.column)

    def error(
        self, key: str | None, code: str, message: str, hint: str | None = None
    ) -> Diagnostic:
        line, column = self.at(key)
        if key is not None and key in self.field_positions:
            end = self.field_ends.get(key)
        else:
            end = self.end
        return Diagnostic.in_file(
            self.path,
            code,
            message,
            line=line,
            column=column,
            hint=hint,
            source_line=self.source_line(line),
            end=end,
        )


# ---- small writers ------------------------------------------------------------------------


def dsl_string(text: str) -> str:
    """A DSL string literal (JSON escapes): `dsl_string('a"b') == '"a\\\\"b"'`."""
    return string_literal(text)


def dsl_name(name: str) -> str:
    """A name, bare when it can be, quoted otherwise."""
    return name if _BARE.match(name) and name not in _RESERVED_NAMES else dsl_string(name)


#: A target the grammar reads bare (its TARGET token: one name after the colon).
_BARE_TARGET = re.compile(
    r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*\Z"
)


def dsl_target(target: str) -> str:
    """A `run` target, bare when the grammar reads it so, quoted otherwise.

    >>> dsl_target("agent.main:answer"), dsl_target("pkg.sub:K.m")
    ('agent.main:answer', '"pkg.sub:K.m"')
    """
    return target if _BARE_TARGET.match(target) else dsl_string(target)


def dsl_value(value: Any) -> str:
    """A JSON value as a DSL literal (±Infinity as ±1e999); raises `ValueError` for NaN."""
    return value_literal(value)


def dsl_regex(pattern: str) -> str | RegexProblem:
    """The regex literal for a JavaScript pattern from a traceplay or cycgraph object
    (translated to RE2, `/(?:)/` for the empty pattern), or why it cannot be one.

    >>> dsl_regex("a/b"), dsl_regex("")
    ('/a\\\\/b/', '/(?:)/')
    """
    translated = translate(pattern)
    return translated if isinstance(translated, RegexProblem) else f"/{translated}/"


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


#: A number as YAML and JSON write one (a field given as text that spells it).
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def renaming(
    at: tuple[int, int] | None, key: str, guess: str | None, present: Collection[str]
) -> Fix | None:
    """The quick fix renaming key `key` to `guess` where its text is written (`at`, 1-based;
    None: not as itself on one line, which only the hint can mend); none without a guess,
    nor to a key its mapping has (`present`): renamed, the key would be written twice, a
    file that no longer reads."""
    if at is None or guess is None or guess in present:
        return None
    line, column = at
    return Fix(line, column, line, column + len(key), guess)


def unknown_field(key: object, known: Collection[str], what: str) -> tuple[str | None, str, str]:
    """The likely field, the message and the hint for a key that is not one of `known`
    (`what` completes "`key` is not …": "a case field", "a field of `tool.args`").
    Every front end reports unknown keys through this, with the same did-you-mean.

    >>> unknown_field("path", {"jsonPath", "name"}, "a field of `tool.args`")[2]
    'did you mean `jsonPath:`?'
    """
    if key == MERGE_KEY:  # (YAML 1.1's, which a YAML 1.2 reader keeps as a plain key)
        return None, f"`<<` is not {what}: {MERGE_SAID}", MERGE_HINT
    guess = _guess_field(str(key), known)
    hint = f"did you mean `{guess}:`?" if guess else "fields: " + ", ".join(sorted(known))
    return guess, f"`{key}` is not {what}", hint


#: YAML 1.1's merge key (`<<: *base`), which YAML 1.2, evaldsl's reader and traceplay's
#: (`yaml`'s default schema) do not have: its fields are not merged.
MERGE_KEY = "<<"
MERGE_SAID = (
    "YAML 1.2 has no merge keys (`<<: *base` is YAML 1.1's), so the anchored fields are "
    "not merged in"
)
MERGE_HINT = (
    "write the fields out, or anchor the whole object (`- &weather {kind: tool.called, "
    "name: get_weather}`, then `- *weather`)"
)


class _Fields:
    """Reads an object's fields as JavaScript would hold them, collecting diagnostics
    instead of raising."""

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
                said = place.error(str(key), "E508", message, hint)
                fix = renaming(place.key_texts.get(str(key)), str(key), guess, obj)
                self.diags.append(said if fix is None else attrs.evolve(said, fix=fix))

    @property
    def ok(self) -> bool:
        return not any(d.is_error for d in self.diags)

    def _wrong(self, key: str, wanted: str) -> None:
        value = self.obj[key]
        found, hint = describe(value), None
        if value == "":
            found = "an empty one"
        elif "number" in wanted and isinstance(value, (int, float)) and type(value) is not bool:
            found = _js_string(value)  # a number of the wrong kind: `times: -1` is "not -1"
        elif isinstance(value, str):
            found = f"the text {json.dumps(value, ensure_ascii=False)}"
            if _NUMBER.fullmatch(value.strip()) and "number" in wanted:
                hint = f"write the number without quotes: `{key}: {value.strip()}`"
        message = f"`{key}` of {self.what} must be {wanted}, not {found}"
        self.diags.append(self.place.error(key, "E507", message, hint))

    def never(self, key: str, message: str, hint: str | None = None) -> None:
        """A field that makes the assertion unable ever to hold: an error, not a run that
        always fails (traceplay ran it and failed)."""
        self.diags.append(self.place.error(key, "E507", message, hint))

    def missing(self, key: str, example: str = "…") -> None:
        if key in self.renamed:
            return  # already reported at the misspelt field, with the right name
        self.diags.append(
            self.place.error(None, "E506", f"{self.what} needs `{key}`", f"add `{key}: {example}`")
        )

    def text(
        self, key: str, *, required: bool = True, empty_ok: bool = False, coerce: bool = False
    ) -> str | None:
        """A string field. With `coerce`, a number or boolean is the text JavaScript makes
        of it (`includes(42)` searches "42", `new RegExp(1.5)` is /1.5/)."""
        if key not in self.obj:
            if required:
                self.missing(key)
            return None
        value = self.obj[key]
        if coerce and not isinstance(value, str):
            value = _js_string(value)
        if not isinstance(value, str) or (not empty_ok and value == ""):
            self._wrong(key, "a non-empty string" if not empty_ok else "a string")
            return None
        return value

    def integer(self, key: str, *, required: bool = False, minimum: int = 0) -> int | None:
        """A whole number; `1.0` is 1, as JavaScript has it."""
        if key not in self.obj:
            if required:
                self.missing(key, "N")
            return None
        value = _whole(self.obj[key])
        if value is None or value < minimum:
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
        if isinstance(value, float) and math.isnan(value):
            self.never(key, f"`{key}` of {self.what} is NaN (`.nan`): it never compares true")
            return None
        return value

    def value(self, key: str, value: Any = MISSING) -> str | None:
        """A JSON value field (or `value`, found inside it) as a DSL literal; NaN, which
        nothing equals, is an error."""
        value = self.obj[key] if value is MISSING else value
        if has_nan(value):
            self.never(key, f"`{key}` of {self.what} holds NaN (`.nan`), which nothing equals")
            return None
        return dsl_value(value)

    def regex(self, key: str, *, required: bool = True, pattern: str | None = None) -> str | None:
        """A JavaScript regex field as an evaldsl (RE2) regex literal."""
        if pattern is None:
            pattern = self.text(key, required=required, empty_ok=True, coerce=True)
            if pattern is None:
                return None
        literal = dsl_regex(pattern)
        if isinstance(literal, RegexProblem):
            self.diags.append(self.place.error(key, literal.code, literal.message, literal.hint))
            return None
        return literal

    def path(self, key: str, text: str) -> str:
        """A traceplay JSONPath as an evaldsl path; parts traceplay skips are a warning."""
        converted, dropped = traceplay_path(text)
        if dropped:
            skipped = ", ".join(f"`{d}`" for d in dropped)
            self.diags.append(
                self.place.error(
                    key,
                    "W506",
                    f"traceplay skips {skipped} in the JSONPath `{text}`, so it reads "
                    f"`{converted}`; evaldsl reads it the same way",
                    "traceplay reads only .key, [N] and [*] steps after `$`",
                )
            )
        return converted

    def ignored(self, key: str, when: str, tool: str, hint: str | None = None) -> None:
        """W506 at a field the original tool reads no further, and evaldsl neither: the
        verdict stays the tool's, and the field that looks checked is said not to be."""
        self.diags.append(
            self.place.error(
                key,
                "W506",
                f"{tool} ignores `{key}` of {self.what} {when}; evaldsl ignores it too, so it "
                "checks nothing",
                hint or f"remove `{key}`, or write what it checks as an assertion of its own",
            )
        )

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
        integer means the last (`1.0` is 1). A step that is no number (`step: "2"`, which
        traceplay reads as the last too) is an error: it is surely meant as a step."""
        raw = self.obj.get("step")
        if raw is not None and (isinstance(raw, bool) or not isinstance(raw, (int, float))):
            self._wrong("step", "a number (1 is the first response)")
            return "answer"
        value = _whole(raw)
        if value is not None and value >= 1:
            return f"answer[{value}]"
        return "answer"


def _whole(value: Any) -> int | None:
    """A JavaScript integer: an int, or a float with no fraction (`1.0`, `1e3`)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return None


def _js_string(value: Any) -> Any:
    """`String(value)` for numbers and booleans; anything else unchanged."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return js_number(value)
    return value


# ---- traceplay ----------------------------------------------------------------------------

TRACEPLAY_FIELDS: dict[str, set[str]] = {
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


def _traceplay(
    kind: str, obj: Mapping[str, Any], place: Place
) -> tuple[str | None, list[Diagnostic]]:
    f = _Fields(obj, place, f"`{kind}`", TRACEPLAY_FIELDS[kind] | {"kind", "description"})
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
            raw_path = f.text("jsonPath")
            path = f.path("jsonPath", raw_path) if raw_path is not None else None
            test: str | None = None
            if "equals" in obj:  # traceplay: equals wins when both are given
                value = f.value("equals")
                test = f"== {value}" if value is not None else None
                if "matches" in obj:
                    f.ignored("matches", "when `equals` is given", "traceplay")
            elif "matches" in obj:
                regex = f.regex("matches")
                test = f"matches {regex}" if regex is not None else None
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
            needle = f.text("text", empty_ok=True, coerce=True)
            if needle is not None:
                text = f"{f.step()} contains {dsl_string(needle)}"
        case "answer.matches":
            regex = f.regex("regex")
            if regex is not None:
                text = f"{f.step()} matches {regex}"
        case "answer.judge":
            rubric = f.text("rubric")
            model = f.text("model", required=False)
            if rubric is not None:
                text = f"{f.step()} judged {dsl_string(rubric)}"
                if model is not None:
                    text += f" by {dsl_string(model)}"
        case "budget.maxTokens" | "budget.maxSteps":
            limit = f.number("value")
            if limit is not None:
                subject = "tokens" if kind == "budget.maxTokens" else "steps"
                text = f"{subject} <= {dsl_value(limit)}"
        case "answer.shape":
            text = _shape(f, obj, place)
        case "flow.usesResult":
            tool = f.text("tool")
            # traceplay: `if (assertion.fromPath)`, so an empty one is no path at all
            from_path = f.text("fromPath", required=False, empty_ok=True) or None
            need = _min_hits(f)
            if tool is not None and need is not None:
                text = f"{f.step()} cites tool {dsl_name(tool)}"
                if from_path is not None:
                    text += f" {f.path('fromPath', from_path)}"
                if need > 1:
                    text += f" at least {need} values"
    return (text if f.ok else None), f.diags


def _min_hits(f: _Fields) -> int | None:
    """traceplay needs `Math.max(1, minHits)` cited values: 0 or less is 1, 2.5 is 3."""
    if "minHits" not in f.obj:
        return 1
    value = f.obj["minHits"]
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        f._wrong("minHits", "a number")
        return None
    if isinstance(value, float) and (math.isnan(value) or value == math.inf):
        f.never("minHits", f"`minHits: {_js_string(value)}` can never be reached")
        return None
    return 1 if value <= 1 else math.ceil(value)


def _shape(f: _Fields, obj: Mapping[str, Any], place: Place) -> str | None:
    """`answer.shape`: the answer parsed as JSON (or, with `json: false`, the text itself),
    each `required` path found, each `fields` path found and matching its spec."""
    json_mode = True
    if "json" in obj:
        if not isinstance(obj["json"], bool):
            f._wrong("json", "true or false")
        json_mode = obj["json"] is not False
    subject = f.step() + (" json" if json_mode else "")
    parts: list[str] = []
    required = obj.get("required", [])
    if not isinstance(required, list) or not all(isinstance(p, str) for p in required):
        f.diags.append(place.error("required", "E507", "`required` must be a list of JSONPaths"))
        required = []
    for raw in required:
        path = f.path("required", raw)
        if not json_mode:
            if path != "$":
                f.never("required", *_text_root(raw))
        elif path == "$":
            parts.append(f"{subject} exists")
        else:
            parts.append(f"{subject} {path} exists")
    fields = obj.get("fields", {})
    if not isinstance(fields, dict):
        f.diags.append(place.error("fields", "E507", "`fields` must map JSONPaths to specs"))
        fields = {}
    for raw, spec in fields.items():
        if isinstance(spec, str):
            spec = {"type": spec}
        if not isinstance(spec, dict):
            f.diags.append(
                place.error("fields", "E507", f"the spec of `{raw}` must be a type name or a map")
            )
            continue
        path = f.path("fields", raw)
        if not json_mode and path != "$":
            f.never("fields", *_text_root(raw))
            continue
        at = subject if path == "$" else f"{subject} {path}"
        checks = _field_checks(f, at, spec, json_mode, place)
        if checks and "[*]" in path:
            # traceplay holds every value the path finds to the spec; `answer json PATH`
            # holds when one of them passes: translated, ["ok", 7] would pass `string`
            f.diags.append(
                place.error(
                    "fields",
                    "E507",
                    f"`{raw}` can find several values, and traceplay checks that every one "
                    "satisfies its spec; evaldsl's `answer json PATH` holds when one does, so "
                    "this field cannot be converted with its meaning",
                    f"check each element's path (`{raw.replace('[*]', '[0]', 1)}`, …), "
                    "or write the check as evaldsl text in `expect:` if one value is enough",
                )
            )
            continue
        # traceplay fails a path that finds nothing even when its spec checks nothing
        parts.extend(checks or ([f"{at} exists"] if json_mode else []))
    if parts:
        return " and ".join(parts)
    if json_mode:
        return f"{subject} exists"  # valid JSON is all it asks
    if not f.ok:
        return None
    f.diags.append(
        place.error(
            None,
            "W601",
            "`answer.shape` with `json: false` and nothing to check on `$` tests nothing",
            "traceplay passed it whenever that step had a response; add "
            "`fields: {$: {matches: …}}` or remove it",
        )
    )
    return None


def _text_root(raw: str) -> tuple[str, str]:
    return (
        f"with `json: false` the answer is text, so `{raw}` is never found in it",
        "check the text itself with `$`, or remove `json: false`",
    )


def _field_checks(
    f: _Fields, at: str, spec: Mapping[str, Any], json_mode: bool, place: Place
) -> list[str]:
    """The checks of one `fields` spec, in traceplay's order: type, equals, contains,
    matches, enum. Without `json`, `at` is the answer's text."""
    parts: list[str] = []
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
    wanted = spec.get("type")
    if wanted is not None:
        if wanted not in JSON_TYPES:
            guess = did_you_mean(str(wanted), JSON_TYPES)
            f.diags.append(
                place.error(
                    "fields",
                    "E507",
                    f"unknown JSON type `{wanted}`",
                    f"did you mean `{guess}`?" if guess else None,
                )
            )
        elif json_mode:
            parts.append(f"{at} is {wanted}")
        elif wanted != "string":  # the text is a string: any other type never holds
            f.never("fields", f"with `json: false` the answer is text, never {wanted}")
    if "equals" in spec:  # traceplay: `equals !== undefined`, so null is checked too
        value = f.value("fields", spec["equals"])
        if not json_mode and not isinstance(spec["equals"], str):
            f.never("fields", "with `json: false` the answer is text: `equals` needs text")
        elif value is not None:
            parts.append(f"{at} == {value}")
    if spec.get("contains") is not None:
        needle = _js_string(spec["contains"])  # traceplay searches text: includes(String(x))
        if isinstance(needle, str):
            parts.append(f"{at} contains {dsl_string(needle)}")
        else:
            f.diags.append(place.error("fields", "E507", "`contains` must be text"))
    if spec.get("matches") is not None:
        pattern = _js_string(spec["matches"])
        if isinstance(pattern, str):
            regex = f.regex("fields", pattern=pattern)
            if regex is not None:
                parts.append(f"{at} matches {regex}")
        else:
            f.diags.append(place.error("fields", "E507", "`matches` must be a regex"))
    if "enum" in spec:
        options = spec["enum"]
        if not isinstance(options, list):
            f.diags.append(place.error("fields", "E507", "`enum` must be a list of values"))
        else:
            if not json_mode:  # the text can only equal text
                options = [o for o in options if isinstance(o, str)]
            if not options:
                f.never("fields", "`enum` has no value the answer can equal")
            else:
                value = f.value("fields", options)
                if value is not None:
                    parts.append(f"{at} in {value}")
    return parts


# ---- cycgraph -----------------------------------------------------------------------------

CYCGRAPH_FIELDS: dict[str, set[str]] = {
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
    f = _Fields(obj, place, f"`{kind}`", CYCGRAPH_FIELDS[kind] | {"type", "description"})
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
            if key is not None and mode is not None:
                subject = dsl_key_access("memory", key)
                if mode == "regex":
                    if "expected" in obj:
                        f.ignored("expected", "in mode regex", "cycgraph")
                    regex = f.regex("pattern")
                    if regex is not None:
                        # cycgraph's regex mode tests text only: 42 never matches /^42$/
                        text = f"{subject} is string and {subject} matches {regex}"
                elif mode in ("exact", "contains"):
                    # (its type requires `pattern`: cycgraph's examples write `pattern: ''`)
                    if obj.get("pattern") not in (None, ""):
                        f.ignored(
                            "pattern",
                            f"in mode {mode}",
                            "cycgraph",
                            "write `pattern: ''` (cycgraph's type requires the field), or "
                            "`mode: regex` to match it",
                        )
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
                        value = f.value("expected")
                        if value is not None:
                            text = f"{subject} {op} {value}"
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
            if "evaluator_agent_id" in obj:  # (cycgraph's judge agent: evaldsl has none)
                f.diags.append(
                    place.error(
                        "evaluator_agent_id",
                        "W506",
                        "evaldsl ignores `evaluator_agent_id` of `llm_judge`: the judge is "
                        "the suite's `judge:` model, not a cycgraph agent",
                        "remove it, or name the model with `judge: {model: …}` in the suite",
                    )
                )
        case "node_visited":
            node = f.text("node_id")
            if node is not None:
                text = f"node {dsl_name(node)} visited"
    return (text if f.ok else None), f.diags


# traceplay objects say `kind:`, cycgraph objects `type:`: the field, its kinds and their
# fields, the converter, the tool that writes them
_FRONT_ENDS = (
    ("kind", TRACEPLAY_FIELDS, _traceplay, "traceplay"),
    ("type", CYCGRAPH_FIELDS, _cycgraph, "cycgraph"),
)


def _other_front_end(field: str, kind: str) -> str | None:
    """The hint for a kind of the other front end written with this one's field
    (`type: tool_called` for traceplay's `kind: tool.called`, `kind: status_equals` for
    cycgraph's `type: status_equals`), its separators as either writes them; None when
    it is none of the other's."""
    for other, known, _, owner in _FRONT_ENDS:
        if other == field:
            continue
        dotted = kind.replace("_", ".").replace("-", ".")
        for spelling in (
            kind,
            dotted,
            ".".join(reversed(dotted.split("."))),
            kind.replace(".", "_"),
        ):
            if spelling in known:
                return f"{owner}'s assertions say `{other}:`: did you mean `{other}: {spelling}`?"
    return None


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
    for field, known, convert, _ in _FRONT_ENDS:
        if field not in obj:
            continue
        kind = obj[field]
        if not isinstance(kind, str):
            return None, [
                place.error(
                    field,
                    "E505",
                    f"an assertion's `{field}` is text, not {describe(kind)}",
                    f"{field}s: " + ", ".join(sorted(known)),
                )
            ]
        if kind in known:
            return convert(kind, obj, place)
        if "{{" in kind:
            # traceplay renders an `each` row into an assertion's strings but leaves its
            # kind as written, so a did-you-mean of the placeholder's letters would mislead
            why = (
                f"an `each` row's values are not put into `{field}:`; "
                f"write the {field} itself (one assertion for each {field} the rows need)"
            )
            return None, [place.error(field, "E505", f"unknown assertion {field} `{kind}`", why)]
        # a kind written the other way round (`tool.forbid` for `forbid.tool`) is
        # that kind, whatever letters it shares with others
        swapped = ".".join(reversed(kind.split(".")))
        # (else the other front end's kind, spelt exactly, before a near one of this front
        # end: `type: answer_contains` is traceplay's `answer.contains`, not `memory_contains`)
        guess = swapped if swapped in known else None
        hint = None if guess else _other_front_end(field, kind)
        if hint is None:
            guess = guess or did_you_mean(kind, known)
            hint = f"did you mean `{guess}`?" if guess else f"{field}s: " + ", ".join(sorted(known))
        return None, [place.error(field, "E505", f"unknown assertion {field} `{kind}`", hint)]
    if MERGE_KEY in obj:  # (its `kind:` was to come from the anchor `<<` names)
        return None, [
            place.error(
                MERGE_KEY,
                "E506",
                f"an assertion object needs `kind:` (traceplay) or `type:` (cycgraph): "
                f"{MERGE_SAID}",
                MERGE_HINT,
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
