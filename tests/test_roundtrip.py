"""Every object traceplay or cycgraph accepts converts to evaldsl text that parses back to
the same meaning (the round-trip property of issue "Run every traceplay and cycgraph suite
as its own tool runs it", point 2).

Hypothesis generates assertion objects whose fields hold what YAML and JSON can hold and
the text syntax finds hardest: names that are keywords or need quotes, text with quotes,
backslashes, line breaks, U+2028 and characters outside the BMP, ±Infinity and exponent
numbers, integers written `1.0`, JSON values nesting all of these, traceplay JSONPaths with
odd keys, digit steps and parts traceplay skips, and JavaScript regexes with slashes,
classes, escapes and line breaks. For each object:

- it converts without an error (warnings are allowed: a skipped path part, a regex that
  cannot fail), and its text parses without a diagnostic into one assertion;
- that assertion holds exactly the object's values: its names, texts and JSON values are
  equal to the object's (JavaScript's text of a number where traceplay searches text), its
  regex is the RE2 translation of the object's (whose agreement with JavaScript
  tests/test_jsregex.py checks against node), its numbers are equal (Infinity included);
- its JSONPaths find, on generated JSON documents, what traceplay's own tokenizer and
  lookup (src/core/jsonpath.ts, written again below from its source) find.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import evaldsl
from evaldsl import EvalDslError
from evaldsl.language import ast
from evaldsl.language.jsjson import js_number
from evaldsl.language.limits import MAX_INTEGER
from evaldsl.language.paths import CompiledPath, compile_path
from evaldsl.language.regexes import RegexProblem
from evaldsl.language.values import json_equal
from evaldsl.suites.convert import to_eval
from evaldsl.suites.evalfile import eval_draft
from evaldsl.suites.files import read_draft
from evaldsl.suites.jsforms import traceplay_path
from evaldsl.suites.jsregex import translate
from evaldsl.suites.objects import Place, object_to_dsl
from evaldsl.syntax.parser import parse
from tests.fuzzing import examples

PLACE = Place("s.yaml", 1, 1)
KEYWORDS = [
    "calls", "called", "tool", "tools", "answer", "json", "true", "false", "null", "not",
    "and", "or", "memory", "status", "exists", "never", "once", "is", "in", "every", "no",
]  # fmt: skip
ODD = ["", " ", "-", '"', "'", "\\", "/", "\n", "\t", "\r", "\u2028", "\x00", "é", "東", "😀"]
ODD += [".", "[", "]", "$", "*", "{{x}}", "#", ";", "1", "01"]

texts = st.one_of(
    st.text(max_size=12),
    st.lists(st.sampled_from(ODD + KEYWORDS), max_size=5).map("".join),
)
names = st.one_of(st.sampled_from(KEYWORDS), texts).filter(bool)
numbers = st.one_of(
    st.integers(min_value=-(10**20), max_value=10**20),
    st.floats(allow_nan=False),
    st.sampled_from([1.0, 1e3, 1e21, -0.0, 1.5e-7, math.inf, -math.inf]),
)
json_values = st.recursive(
    st.none() | st.booleans() | numbers | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=8,
)
# traceplay paths: its own steps, keys with any character but `.[]`, and junk it skips
keys = st.one_of(
    st.sampled_from(["a", "b", "1", "01", "0", "a b", "it's", "x\\y", "*", "$", "é", "😀"]),
    st.text(min_size=1, max_size=4).filter(lambda k: not set(k) & set(".[]")),
)
path_parts = st.one_of(
    keys.map(lambda k: "." + k),
    st.integers(0, 3).map(lambda i: f"[{i}]"),
    st.just("[*]"),
    st.sampled_from(["..", "['a']", "[-1]", "x", " "]),
)
paths = st.builds(
    lambda lead, parts, trail: lead + "".join(parts) + trail,
    st.sampled_from(["$", "$", " $", ""]),
    st.lists(path_parts, max_size=4),
    st.sampled_from(["", " "]),
)
REGEX_TOKENS = [
    "a", "b", ".", "^", "$", "*", "+", "?", "{2}", "{1,3}", "{", "}", "(", ")", "(?:", "[",
    "]", "[^", "-", "|", "\\", "\\d", "\\s", "\\S", "\\w", "\\b", "\\/", "/", "\\u6771",
    "\\x41", "\\p{L}", "\\0", "\\cJ", "\n", "\\\n", "\u2028", "😀", "#", '"', " ",
]  # fmt: skip
regexes = st.lists(st.sampled_from(REGEX_TOKENS), max_size=6).map("".join)
steps = st.one_of(st.none(), st.integers(-1, 3), st.sampled_from([1.0, 2.5, 0.0]))
docs = st.recursive(
    st.none() | st.integers(0, 3) | st.sampled_from(["v", "w"]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["a", "b", "1", "01", "0", "a b", "*", "$", "é"]), inner)
    ),
    max_leaves=10,
)


def js_string(value: Any) -> str:
    """JavaScript's String() of a YAML scalar, as traceplay's `includes` and `RegExp` see it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return js_number(value)
    return str(value)


# ---- traceplay's jsonPath, from src/core/jsonpath.ts -------------------------------------

_TOKENS = re.compile(r"\.[^.\[\]]+|\[[0-9]+\]|\[\*\]")
_JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
_JS_SPACE += "\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"


def traceplay_find(root: Any, path: str) -> tuple[list[Any], bool]:
    """What traceplay's jsonPath finds, and whether a `[*]` met an object (where evaldsl,
    as JSONPath does, walks the values: a documented difference)."""
    p = path.strip(_JS_SPACE)
    if p.startswith("$"):
        p = p[1:]
    if not p:
        return [root], False
    results, star_on_object = [root], False
    for token in _TOKENS.findall(p):
        nxt: list[Any] = []
        for item in results:
            if token.startswith("."):
                key = token[1:]
                if isinstance(item, dict) and key in item:
                    nxt.append(item[key])
                elif (
                    isinstance(item, list)
                    and re.fullmatch("0|[1-9][0-9]*", key)  # `"1" in array`: an index
                    and int(key) < len(item)
                ):
                    nxt.append(item[int(key)])
            elif token == "[*]":
                if isinstance(item, list):
                    nxt.extend(item)
                star_on_object |= isinstance(item, dict)
            elif isinstance(item, list) and int(token[1:-1]) < len(item):
                nxt.append(item[int(token[1:-1])])
        results = nxt
    return results, star_on_object


def same_finds(dsl_path: str, traceplay: str, doc: Any) -> None:
    compiled = compile_path(dsl_path)
    assert isinstance(compiled, CompiledPath), (dsl_path, compiled)
    expected, differs = traceplay_find(doc, traceplay)
    if not differs:
        assert compiled.find(doc) == expected, (traceplay, dsl_path, doc)


# ---- one object → text → AST --------------------------------------------------------------


def convert(obj: dict[str, Any], checks: frozenset[str] = frozenset()) -> ast.Expr:
    """The one assertion an object converts to; its text parses and checks without an
    error (but the codes in `checks`, for what evaldsl refuses on purpose)."""
    text, problems = object_to_dsl(obj, PLACE)
    errors = [d for d in problems if d.is_error]
    assert text is not None and not errors, (obj, errors)
    parsed = parse(text, start="statements")
    assert not parsed.diagnostics, (obj, text, parsed.diagnostics)
    try:
        evaldsl.compile(text)
    except EvalDslError as err:
        assert {d.code for d in err.errors} <= checks, (obj, text, err)
    (statement,) = parsed.program.statements
    assert isinstance(statement, ast.EXPR_TYPES)
    return statement


def check_of(expr: ast.Expr) -> ast.Check:
    assert isinstance(expr, ast.Check), expr
    return expr


def step_index(step: Any) -> int | None:
    whole = step if isinstance(step, int) and not isinstance(step, bool) else None
    if isinstance(step, float) and step.is_integer():
        whole = int(step)
    return whole if whole is not None and whole >= 1 else None


def as_written(value: Any) -> Any:
    """A value as evaldsl writes it: an integer past 64 bits is the double JavaScript reads."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > MAX_INTEGER:
        return float(value) if abs(value) < 10**308 else math.copysign(math.inf, value)
    if isinstance(value, list):
        return [as_written(v) for v in value]
    if isinstance(value, dict):
        return {k: as_written(v) for k, v in value.items()}
    return value


def same_value(literal: ast.Value, value: Any) -> None:
    assert json_equal(ast.to_json(literal), as_written(value)), (literal, value)


def with_step(obj: dict[str, Any], step: Any) -> dict[str, Any]:
    return obj if step is None else {**obj, "step": step}


SETTINGS = settings(
    max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@SETTINGS
@given(text=st.one_of(texts, numbers, st.booleans()), step=steps)
def test_answer_contains(text: Any, step: Any) -> None:
    check = check_of(convert(with_step({"kind": "answer.contains", "text": text}, step)))
    assert check.subject.kind == "answer" and check.subject.index == step_index(step)
    assert isinstance(check.predicate, ast.Contains)
    same_value(check.predicate.value, js_string(text))


@SETTINGS
@given(pattern=regexes, step=steps)
def test_answer_matches(pattern: str, step: Any) -> None:
    translated = translate(pattern)
    assume(not isinstance(translated, RegexProblem))
    check = check_of(convert(with_step({"kind": "answer.matches", "regex": pattern}, step)))
    assert check.subject.index == step_index(step)
    assert isinstance(check.predicate, ast.Matches)
    assert (check.predicate.regex.pattern, check.predicate.regex.flags) == (translated, "")


@SETTINGS
@given(name=names, times=st.one_of(st.none(), st.integers(0, 5), st.sampled_from([1.0, 3.0])))
def test_tool_called(name: str, times: Any) -> None:
    obj: dict[str, Any] = {"kind": "tool.called", "name": name}
    if times is not None:
        obj["times"] = times
    check = check_of(convert(obj))
    assert check.subject.kind == "tool" and check.subject.name == name
    assert isinstance(check.predicate, ast.Called)
    count = check.predicate.count
    if times is None:
        assert (count.low, count.high) == (1, None)
    else:
        assert count.low == count.high == times


@SETTINGS
@given(tool_names=st.lists(names, max_size=4))
def test_tool_order(tool_names: list[str]) -> None:
    check = check_of(convert({"kind": "tool.order", "names": tool_names}))
    assert check.subject.kind == "tools"
    assert isinstance(check.predicate, ast.ListTest) and check.predicate.op == "in_order"
    assert [ast.to_json(i) for i in check.predicate.items.items] == tool_names


@SETTINGS
@given(name=names)
def test_forbid_tool(name: str) -> None:
    expr = convert({"kind": "forbid.tool", "name": name})
    assert isinstance(expr, ast.NoTool) and expr.name == name


@SETTINGS
@given(
    name=names,
    path=paths,
    test=st.one_of(
        json_values.map(lambda v: ("equals", v)),
        st.one_of(regexes, numbers).map(lambda r: ("matches", r)),
    ),
    doc=docs,
)
def test_tool_args(name: str, path: str, test: tuple[str, Any], doc: Any) -> None:
    assume(path != "")  # traceplay fails an empty jsonPath; evaldsl: a check error (README)
    field, value = test
    if field == "matches":
        assume(not isinstance(translate(js_string(value)), RegexProblem))
    check = check_of(convert({"kind": "tool.args", "name": name, "jsonPath": path, field: value}))
    assert check.subject.name == name
    pred = check.predicate
    assert isinstance(pred, ast.CallTest) and pred.target == "args" and pred.path is not None
    same_finds(pred.path, path, doc)
    if field == "equals":
        assert isinstance(pred.test, ast.Compare) and pred.test.op == "=="
        same_value(pred.test.value, value)
    else:
        assert isinstance(pred.test, ast.Matches)
        assert pred.test.regex.pattern == translate(js_string(value))


@SETTINGS
@given(kind=st.sampled_from(["budget.maxTokens", "budget.maxSteps"]), value=numbers)
def test_budgets(kind: str, value: float) -> None:
    check = check_of(convert({"kind": kind, "value": value}))
    assert check.subject.kind == ("tokens" if kind == "budget.maxTokens" else "steps")
    assert isinstance(check.predicate, ast.Compare) and check.predicate.op == "<="
    same_value(check.predicate.value, value)


@SETTINGS
@given(
    rubric=texts.filter(str.strip), model=st.one_of(st.none(), texts.filter(str.strip)), step=steps
)
def test_answer_judge(rubric: str, model: str | None, step: Any) -> None:
    # (a blank rubric is a check error of its own, E211: `test_a_blank_rubric_is_an_error`;
    # so is a blank model, `by " "`: `test_an_empty_judge_model_is_an_error`)
    obj = with_step({"kind": "answer.judge", "rubric": rubric}, step)
    if model is not None:
        obj["model"] = model
    check = check_of(convert(obj))
    assert isinstance(check.predicate, ast.Judged)
    assert (check.predicate.rubric, check.predicate.model) == (rubric, model)


def conjuncts(expr: ast.Expr) -> list[ast.Check]:
    if isinstance(expr, ast.And):
        return [c for op in expr.operands for c in conjuncts(op)]
    return [check_of(expr)]


@SETTINGS
@given(
    required=st.lists(paths, max_size=3),
    fields=st.dictionaries(
        paths,
        st.one_of(
            st.sampled_from(["string", "number", "integer", "boolean", "array", "object", "null"]),
            st.fixed_dictionaries(
                {},
                optional={
                    "equals": json_values,
                    "contains": st.one_of(texts, numbers),
                    "matches": regexes,
                    "enum": st.lists(json_values, min_size=1, max_size=3),
                },
            ),
        ),
        max_size=3,
    ),
    doc=docs,
)
def test_answer_shape(required: list[str], fields: dict[str, Any], doc: Any) -> None:
    # (a spec on a path of several values is an error: `test_a_shape_field_of_several_values`)
    fields = {r: s for r, s in fields.items() if not (s and "[*]" in traceplay_path(r)[0])}
    for spec in fields.values():
        if isinstance(spec, dict) and "matches" in spec:
            assume(not isinstance(translate(spec["matches"]), RegexProblem))
    obj = {"kind": "answer.shape", "required": required, "fields": fields}
    checks = conjuncts(convert(obj))
    wanted: list[tuple[str, str, Any]] = [(p, "exists", None) for p in required]
    for raw, spec in fields.items():
        spec = {"type": spec} if isinstance(spec, str) else spec
        wanted += [(raw, "is", spec["type"])] if "type" in spec else []
        wanted += [(raw, "==", spec["equals"])] if "equals" in spec else []
        wanted += [(raw, "contains", js_string(spec["contains"]))] if "contains" in spec else []
        wanted += [(raw, "matches", translate(spec["matches"]))] if "matches" in spec else []
        wanted += [(raw, "in", spec["enum"])] if "enum" in spec else []
        if not spec:
            wanted.append((raw, "exists", None))
    if not wanted:
        wanted = [("$", "exists", None)]
    assert len(checks) == len(wanted), (checks, wanted)
    for check, (raw, what, value) in zip(checks, wanted, strict=True):
        assert check.subject.kind == "answer_json"
        same_finds(check.subject.path or "$", raw, doc)
        pred = check.predicate
        match what:
            case "exists":
                assert isinstance(pred, ast.Exists)
            case "is":
                assert isinstance(pred, ast.IsType) and pred.type == value
            case "==":
                assert isinstance(pred, ast.Compare)
                same_value(pred.value, value)
            case "contains":
                assert isinstance(pred, ast.Contains)
                same_value(pred.value, value)
            case "matches":
                assert isinstance(pred, ast.Matches) and pred.regex.pattern == value
            case "in":
                assert isinstance(pred, ast.ListTest) and pred.op == "in"
                same_value(pred.items, value)


@SETTINGS
@given(
    tool=names,
    from_path=st.one_of(st.none(), paths),
    hits=st.one_of(st.none(), st.integers(-2, 6), st.floats(-3, 6, allow_nan=False)),
    doc=docs,
)
def test_flow_uses_result(tool: str, from_path: str | None, hits: Any, doc: Any) -> None:
    obj: dict[str, Any] = {"kind": "flow.usesResult", "tool": tool}
    if from_path is not None:
        obj["fromPath"] = from_path
    if hits is not None:
        obj["minHits"] = hits
    check = check_of(convert(obj))
    pred = check.predicate
    assert isinstance(pred, ast.Cites) and pred.tool == tool
    need = 1 if hits is None or hits <= 1 else math.ceil(hits)
    assert (pred.at_least or 1) == need  # traceplay: count >= max(1, minHits)
    if from_path is not None:
        same_finds(pred.path or "$", from_path, doc)


# ---- cycgraph -----------------------------------------------------------------------------


def memory_keys(check: ast.Check) -> list[str | int]:
    assert check.subject.kind == "memory"
    return [k.key for k in check.subject.keys]


@SETTINGS
@given(key=names, mode=st.sampled_from(["exact", "contains", "regex"]), value=json_values)
def test_memory_matches(key: str, mode: str, value: Any) -> None:
    obj: dict[str, Any] = {"type": "memory_matches", "key": key, "mode": mode}
    if mode == "regex":
        pattern = value if isinstance(value, str) else js_string(value)
        assume(not isinstance(pattern, (list, dict)) and value is not None)
        assume(not isinstance(translate(pattern), RegexProblem))
        obj["pattern"] = pattern
        expr = convert(obj)
        assert isinstance(expr, ast.And)
        is_text, matches = (check_of(op) for op in expr.operands)
        assert memory_keys(is_text) == memory_keys(matches) == [key]
        assert isinstance(is_text.predicate, ast.IsType) and is_text.predicate.type == "string"
        assert isinstance(matches.predicate, ast.Matches)
        assert matches.predicate.regex.pattern == translate(pattern)
        return
    obj["expected"] = value
    check = check_of(convert(obj))
    assert memory_keys(check) == [key]
    if mode == "exact":
        assert isinstance(check.predicate, ast.Compare) and check.predicate.op == "=="
    else:
        assert isinstance(check.predicate, ast.Contains)
    same_value(check.predicate.value, value)


@SETTINGS
@given(key=names, kind=st.sampled_from(["memory_contains", "memory_not_empty"]))
def test_memory_keys(key: str, kind: str) -> None:
    check = check_of(convert({"type": kind, "key": key}))
    if kind == "memory_contains":
        assert isinstance(check.predicate, ast.HasKey) and check.predicate.key == key
    else:
        assert memory_keys(check) == [key]
        assert isinstance(check.predicate, ast.Emptiness) and not check.predicate.empty


@SETTINGS
@given(node=names, status=st.sampled_from(["completed", "failed", "waiting"]))
def test_nodes_and_status(node: str, status: str) -> None:
    visited = convert({"type": "node_visited", "node_id": node})
    assert isinstance(visited, ast.NodeVisited) and visited.name == node
    check = check_of(convert({"type": "status_equals", "expected": status}))
    assert isinstance(check.predicate, ast.Compare)
    same_value(check.predicate.value, status)


@SETTINGS
@given(criteria=texts.filter(str.strip), threshold=numbers)
def test_llm_judge(criteria: str, threshold: float) -> None:
    obj = {"type": "llm_judge", "criteria": criteria, "threshold": threshold}
    # a threshold outside [0, 1] can never (or always) hold: a check error (E208) on purpose
    check = check_of(convert({**obj, "evaluator_agent_id": "judge"}, frozenset({"E208"})))
    assert isinstance(check.predicate, ast.Judged)
    # JavaScript numbers are doubles: so is the threshold
    assert check.predicate.rubric == criteria and check.predicate.threshold == float(threshold)


@pytest.mark.parametrize(
    "obj",
    [
        {"kind": "answer.judge", "rubric": " "},
        {"type": "llm_judge", "criteria": "  ", "threshold": 0.5, "evaluator_agent_id": "judge"},
    ],
)
def test_a_blank_rubric_is_an_error(obj: dict[str, Any]) -> None:
    # the judge would be asked to judge against nothing: the case is not run
    text, problems = object_to_dsl(obj, PLACE)
    ignored = ["W506"] if "evaluator_agent_id" in obj else []  # (evaldsl has no judge agent)
    assert text is not None and [d.code for d in problems] == ignored
    with pytest.raises(EvalDslError) as raised:
        evaldsl.compile(text)
    assert {d.code for d in raised.value.errors} == {"E211"}


# ---- a whole YAML suite and its `evaldsl convert` text compile to the same assertions ---

# what YAML may not hold raw, and the line breaks of PyYAML's YAML 1.1 syntax (README)
_UNPRINTABLE = re.compile(
    "[^\x09\x0a\x0d\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"
)


def yaml_text(value: Any) -> str:
    """A JSON value as YAML flow text (JSON, with `.inf` for Infinity and escapes for what
    YAML may not hold raw)."""
    if isinstance(value, float) and math.isinf(value):
        return ".inf" if value > 0 else "-.inf"
    if isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
        return _UNPRINTABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    if isinstance(value, list):
        return "[" + ", ".join(yaml_text(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{yaml_text(k)}: {yaml_text(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)


objects = st.one_of(
    st.builds(lambda t, s: with_step({"kind": "answer.contains", "text": t}, s), texts, steps),
    st.builds(lambda r: {"kind": "answer.matches", "regex": r}, regexes),
    st.builds(
        lambda n, t: {"kind": "tool.called", "name": n, "times": t}, names, st.integers(0, 3)
    ),
    st.builds(
        lambda n, p, v: {"kind": "tool.args", "name": n, "jsonPath": p, "equals": v},
        names,
        paths.filter(bool),
        json_values,
    ),
    st.builds(lambda v: {"kind": "budget.maxTokens", "value": v}, numbers),
    st.builds(
        lambda k, v: {"type": "memory_matches", "key": k, "mode": "exact", "expected": v},
        names,
        json_values,
    ),
)


@SETTINGS
@given(items=st.lists(objects, min_size=1, max_size=4))
def test_convert_gives_the_same_assertions(tmp_path_factory: Any, items: list[Any]) -> None:
    for obj in items:
        if "regex" in obj:
            assume(not isinstance(translate(obj["regex"]), RegexProblem))
    folder = tmp_path_factory.mktemp("convert")
    body = "".join(f"\n      - {yaml_text(obj)}" for obj in items)
    source = folder / "suite.yaml"
    source.write_text(
        f"cases:\n  - name: c\n    run: flow:target\n    assertions:{body}\n", "utf-8"
    )
    draft = read_draft(source)
    assert not [d for d in draft.diagnostics if d.is_error]
    text, problems = to_eval(draft)
    assert not [d for d in problems if d.is_error], problems
    converted = eval_draft(text, str(folder / "suite.eval"))
    assert not converted.diagnostics, (text, converted.diagnostics)
    yaml_nodes = [e for s in draft.cases[0].snippets for e in s.exprs]
    eval_nodes = [e for s in converted.cases[0].snippets for e in s.exprs]
    assert yaml_nodes == eval_nodes, text  # spans take no part in equality
