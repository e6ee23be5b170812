"""Text tests: `starts with "x"`, `ends with "x"` and `matches /re/flags`.

Takes `TextEdge` and `Matches` nodes and gives their vocabulary entries, build rules, check
rules (an empty prefix or suffix, and a regex that matches the empty text, can never fail;
a regex RE2 cannot run is an error), value tests and printed forms. A regex searches (not a
full match) the text, or the JSON text of any other value; RE2 runs in linear time, so no
pattern can hang a run; a pattern of fixed texts is searched for with a string method,
and RE2 runs only on texts holding what every match holds (`language/regexlits.py`).
"""

from __future__ import annotations

from typing import Any

from evaldsl.language import ast
from evaldsl.language.regexes import RegexProblem, compile_regex, searcher
from evaldsl.language.regexlits import literal_form, required_text, text_searcher
from evaldsl.language.values import MISSING, Words, js_text
from evaldsl.language.vocabulary import Type, predicate_spec
from evaldsl.predicates.base import (
    BuildKit,
    CheckContext,
    Family,
    FragmentContext,
    Printer,
    ValueTest,
)

EDGE_ENTRIES = (
    predicate_spec(
        "starts_with",
        'starts with "x"',
        {"Text", "Json"},
        "Text (or a JSON string) starts with the string.",
        'answer starts with "Dear"',
    ),
    predicate_spec(
        "ends_with",
        'ends with "x"',
        {"Text", "Json"},
        "Text (or a JSON string) ends with the string.",
        'answer ends with "."',
    ),
)
MATCH_ENTRIES = (
    predicate_spec(
        "matches",
        "matches /re/flags",
        {"Text", "Json"},
        "A regex search (not a full match); flags i, m, s. Linear time: no pattern can hang a run.",
        r"answer matches /\d+\s*C/",
    ),
)


# ---- starts with, ends with --------------------------------------------------------------


def _build_edge(at_start: bool) -> Any:
    def build(kit: BuildKit, c: list[Any]) -> ast.TextEdge:
        text = ast.make_str(kit.string(c[2]), span=kit.token_span(c[2]))
        return ast.make_text_edge(at_start, text, span=kit.span(c))

    return build


def check_edge(ctx: CheckContext, pred: ast.TextEdge, stype: Type, _: ast.Subject, __: str) -> None:
    if pred.text.value == "":
        ctx.never(pred.span, "fail", "the string is empty")


def edge_test(pred: ast.TextEdge, stype: Type) -> ValueTest:
    s = pred.text.value
    if pred.at_start:
        return lambda v: isinstance(v, str) and v.startswith(s)
    return lambda v: isinstance(v, str) and v.endswith(s)


def edge_fragment(ctx: FragmentContext, pred: ast.TextEdge, stype: Type) -> str:
    method = "startswith" if pred.at_start else "endswith"
    return f"(isinstance(v, str) and v.{method}({ctx.const(pred.text.value)}))"


def print_edge(p: Printer, pred: ast.TextEdge, indent: str) -> str:
    return ("starts with " if pred.at_start else "ends with ") + p.quote(pred.text.value)


EDGES = Family(
    name="text edges",
    nodes=(ast.TextEdge,),
    entries=EDGE_ENTRIES,
    rules={"starts_with": _build_edge(True), "ends_with": _build_edge(False)},
    key=lambda pred: "starts_with" if pred.at_start else "ends_with",
    check=check_edge,
    print=print_edge,
    expected=lambda pred: pred.text.value,
    fragment=edge_fragment,
    value_test=edge_test,
)


# ---- matches -------------------------------------------------------------------------------


def build_matches(kit: BuildKit, c: list[Any]) -> ast.Matches:
    raw = kit.text(c[1])
    end = raw.rindex("/")
    regex = ast.make_regex(raw[1:end], raw[end + 1 :], span=kit.token_span(c[1]))
    return ast.make_matches(regex, span=kit.span(c))


def check_matches(
    ctx: CheckContext, pred: ast.Matches, stype: Type, _: ast.Subject, __: str
) -> None:
    ctx.regex(pred.regex)


def matches_test(pred: ast.Matches, stype: Type) -> ValueTest:
    found = text_searcher(pred.regex.pattern, pred.regex.flags)

    def matches(v: Any) -> bool:
        if v is MISSING:
            return False
        return found(v if isinstance(v, str) else js_text(v))

    return matches


def _on_text(ctx: FragmentContext, pattern: str, flags: str) -> str | None:
    """The search of a text `v` as source, where a string method does it: the pattern's
    fixed texts, or its required text before RE2 (`regexlits.py`)."""
    form = literal_form(pattern, flags)
    if form is not None:
        if form.start and form.end:
            return f"v in {ctx.const(frozenset(form.texts))}"
        if form.start or form.end:
            method = "startswith" if form.start else "endswith"
            return f"v.{method}({ctx.const(form.texts)})"
        if len(form.texts) <= 4:
            return " or ".join(f"{ctx.const(t)} in v" for t in form.texts)
        return None
    need = required_text(pattern, flags)
    if need is None:
        return None
    compiled = compile_regex(pattern, flags)
    assert not isinstance(compiled, RegexProblem), "the checker rejects bad regexes"
    return f"{ctx.const(need)} in v and {ctx.const(searcher(compiled))}(v)"


def matches_fragment(ctx: FragmentContext, pred: ast.Matches, stype: Type) -> str:
    pattern, flags = pred.regex.pattern, pred.regex.flags
    found = ctx.const(text_searcher(pattern, flags))
    missing, text = ctx.const(MISSING), ctx.const(js_text)
    on_text = _on_text(ctx, pattern, flags) or f"{found}(v)"
    return f"(({on_text}) if isinstance(v, str) else (v is not {missing} and {found}({text}(v))))"


MATCHES = Family(
    name="matches",
    nodes=(ast.Matches,),
    entries=MATCH_ENTRIES,
    rules={"matches": build_matches},
    key=lambda pred: "matches",
    check=check_matches,
    print=lambda p, pred, indent: f"matches /{pred.regex.pattern}/{pred.regex.flags}",
    expected=lambda pred: Words(f"/{pred.regex.pattern}/{pred.regex.flags}"),
    fragment=matches_fragment,
    value_test=matches_test,
)
