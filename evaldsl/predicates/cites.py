"""Citations: `cites tool NAME [PATH] [at least N values]` (traceplay's flow.usesResult).

Takes `Cites` nodes and gives their vocabulary entry, build rule, check rule (the tool is
known, the path valid, N at least 1), checker and printed form. The subject (an answer)
must quote at least N of the values the tool returned (those at PATH in each result, when
given): finite numbers as JavaScript writes them, and strings trimmed as JavaScript's
`trim()` trims them, of 3 to 120 UTF-16 units (JavaScript's `length`: an emoji counts
2), compared case-insensitively.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import re2

from evaldsl.language import ast
from evaldsl.language.jsjson import JS_WHITESPACE, js_length, js_number, js_trim
from evaldsl.language.paths import path_finder
from evaldsl.language.values import MISSING, show
from evaldsl.language.verdicts import Verdict, verdict
from evaldsl.language.vocabulary import Type, predicate_spec
from evaldsl.predicates.base import (
    BuildKit,
    CheckContext,
    Checker,
    CompileContext,
    Family,
    Printer,
    Unavailable,
    plural,
)
from evaldsl.runs.index import RunFacts

ENTRIES = (
    predicate_spec(
        "cites",
        "cites tool NAME [at least N values]",
        {"Text"},
        "The answer quotes values that tool returned (numbers, or text of 3-120 chars).",
        "answer cites tool get_ticket at least 2 values",
    ),
)


def build(kit: BuildKit, c: list[Any]) -> ast.Cites:
    # cites tool NAME PATH? (at least INT value(s))?
    rest = c[3:]
    path = kit.text(rest[0]) if rest and kit.kind(rest[0]) == "PATH" else None
    at_least = kit.integer(rest[-2]) if rest and kit.kind(rest[-1]) in ("VALUE", "VALUES") else None
    return ast.Cites(kit.name(c[2]), at_least, path, span=kit.span(c))


def check(ctx: CheckContext, pred: ast.Cites, stype: Type, subject: ast.Subject, _: str) -> None:
    ctx.tool_name(pred.tool, pred.span, recorded=True)
    if pred.path is not None:
        ctx.path(pred.path, pred.span)
    if pred.at_least is not None and pred.at_least < 1:
        ctx.error(pred.span, "E207", "cite at least 1 value")


def citable_values(results: Iterable[Any]) -> set[str]:
    """traceplay's citable leaves: finite numbers as text, trimmed strings of 3-120
    UTF-16 units; booleans and null skipped; objects and arrays walked.

    A text of n characters is n to 2n UTF-16 units, so only one of 1-2 or 61-120
    characters has its units counted (`js_length`); 3-60 characters are citable as they
    are, which is the common text's one comparison.

    >>> sorted(citable_values([{"temp": 31.0, "sky": "clear", "ok": True, "id": "ab"}]))
    ['31', 'clear']
    """
    leaves: set[str] = set()
    add = leaves.add
    stack = list(results)
    pop, push, extend = stack.pop, stack.append, stack.extend
    while stack:
        v = pop()
        # JSON's own types first, by exact type (one test each where the isinstance chain
        # below took up to five for a text); anything else (a bool, None, a subclass)
        # goes through that chain, which says what it is
        t = type(v)
        if t is dict:
            # an object's texts and ints read here, not each pushed and popped again (most
            # of a result's values: -10% of the instructions); anything else goes on the
            # stack. The leaves are a set: the order they are met in does not change them
            for x in v.values():
                tx = type(x)
                if tx is str:
                    # (`js_trim` written in place: its call was twice the strip's cost)
                    text = x.strip(JS_WHITESPACE)
                    n = len(text)
                    if 3 <= n <= 60 or (0 < n <= 120 and 3 <= js_length(text) <= 120):
                        add(text)
                elif tx is int:
                    add(str(x))
                else:
                    push(x)
            continue
        if t is str:
            text = v.strip(JS_WHITESPACE)
            n = len(text)
            if 3 <= n <= 60 or (0 < n <= 120 and 3 <= js_length(text) <= 120):
                add(text)
            continue
        if t is list:
            extend(v)
            continue
        if t is int:
            add(str(v))
            continue
        if isinstance(v, bool) or v is None:
            continue
        if isinstance(v, int):
            leaves.add(str(v))
        elif isinstance(v, float):
            if math.isfinite(v):
                leaves.add(js_number(v))  # JavaScript's String(n): 4.0 → "4", 1e21 → "1e+21"
        elif isinstance(v, str):
            text = js_trim(v)
            if 3 <= js_length(text) <= 120:
                leaves.add(text)
        elif isinstance(v, list):
            stack.extend(v)
        elif isinstance(v, dict):
            stack.extend(v.values())
    return leaves


#: From this long an answer (in characters), and this many characters searched in all
#: (its length × its citable values), the values are found in one pass over the answer by
#: an RE2 Set of them, not by a search of the answer for each (~0.5 ns a character here,
#: against ~10 µs a value to compile the Set: a 1 MB answer and 20,000 values took 10 s).
SET_FROM_CHARS = 32 * 1024
SET_FROM_WORK = 20_000_000


def quoted(leaves: set[str], lowered: str) -> list[str]:
    """The leaves whose lowercase is in `lowered` (an answer, lowercased), in order."""
    if len(lowered) >= SET_FROM_CHARS and len(lowered) * len(leaves) >= SET_FROM_WORK:
        found = _quoted_by_set(leaves, lowered)
        if found is not None:
            return found
    # the hits in order (only they are shown): sorting every leaf first gave the same
    return sorted(leaf for leaf in leaves if leaf.lower() in lowered)


def _quoted_by_set(leaves: set[str], lowered: str) -> list[str] | None:
    """`quoted` by one RE2 Set of the lowercased leaves as literal bytes (None: the Set
    could not be made). Both sides are UTF-8, lone surrogates included (`surrogatepass`),
    searched as Latin-1 bytes: UTF-8 never starts a character inside another, so a
    value's bytes occur in the answer's exactly where the value occurs in the answer."""
    by_bytes: dict[bytes, list[str]] = {}
    for leaf in leaves:
        by_bytes.setdefault(leaf.lower().encode("utf-8", "surrogatepass"), []).append(leaf)
    options = re2.Options()
    options.log_errors = False
    options.literal = True
    options.encoding = re2.Options.Encoding.LATIN1
    options.max_mem = 256 << 20
    patterns = list(by_bytes)
    found = re2.Set.SearchSet(options)
    try:
        for pattern in patterns:
            found.Add(pattern)
        found.Compile()
    except re2.error:  # (too large for the memory given it: searched one by one)
        return None
    hits = found.Match(lowered.encode("utf-8", "surrogatepass")) or []
    return sorted(leaf for i in hits for leaf in by_bytes[patterns[i]])


def compile_cites(ctx: CompileContext, node: ast.Check) -> Checker:
    pred = node.predicate
    assert isinstance(pred, ast.Cites)
    get = ctx.subject(node.subject)
    shown = ctx.text(node.subject.span) or node.subject.kind
    span = node.span
    tool = pred.tool
    ctx.needs.tool_detail.add(tool)
    ctx.needs.tool_results.add(tool)
    need = max(1, pred.at_least or 1)
    path = pred.path
    finder = path_finder(path)

    def cited(facts: RunFacts, text: str) -> tuple[int | str, list[str] | None]:
        """How many citable values the tool gave and those `text` quotes, or why there is
        nothing to cite."""
        trace = facts.trace
        records = trace.calls.get(tool, []) if trace is not None else []
        results = [r.result for r in records if r.result is not MISSING]
        if not records:
            return f'tool "{tool}" was never called', None
        if not results:
            return f'tool "{tool}" has no result recorded', None
        if path is not None:  # the values the path finds in each result
            results = [v for result in results for v in finder(result)]
            if not results:  # (its results are there: "no result recorded" misled)
                return f'{path} finds nothing in the results of tool "{tool}"', []
        leaves = citable_values(results)
        if not leaves:
            return f'tool "{tool}" produced no citable value', []
        return len(leaves), quoted(leaves, text.lower())

    def run(facts: RunFacts) -> Verdict:
        try:
            answer = get(facts)
        except Unavailable as why:
            return verdict("error", str(why), span)
        text = str(answer)
        # the same tool, path and answer in several assertions (`at least N` apart, or
        # in `or`s): the values and the quotes worked out once for them all
        key = ("cites", tool, path, text)
        found = facts.shared.get(key)
        if found is None:
            found = facts.shared[key] = cited(facts, text)
        size, hits = found
        # results the recording left out might hold what the answer quotes: what those
        # read do not show is unknown, never a fail
        left = facts.unrecorded
        unread = left.unread(tool, True) if left is not None else 0
        if left is not None and unread and (isinstance(size, str) or len(hits or ()) < need):
            some = "its result" if unread == 1 else f"{unread} of its results"
            return verdict(
                "error",
                f'whether {shown} cites tool "{tool}" is unknown: the trace records no '
                f"content for {some}; {left.how}",
                span,
            )
        if isinstance(size, str):  # nothing to cite: why (and no value found: `[]`, where
            # null read as a null found)
            return verdict("fail", size, span, [], need)
        assert hits is not None
        hits = list(hits)  # (each verdict its own found value)
        ok = len(hits) >= need
        message = f'{shown} cites {len(hits)} of {size} values from tool "{tool}"'
        if hits:
            message += ": " + ", ".join(show(h, 30) for h in hits[:5])
        if not ok:
            message += f", expected at least {need}"
        return verdict("pass" if ok else "fail", message, span, hits, need)

    return run


def print_cites(p: Printer, pred: ast.Cites, indent: str) -> str:
    more = "" if pred.at_least is None else " at least " + plural(pred.at_least, "value", "values")
    where = "" if pred.path is None else f" {pred.path}"
    return f"cites tool {p.name(pred.tool)}{where}{more}"


FAMILY = Family(
    name="cites",
    nodes=(ast.Cites,),
    entries=ENTRIES,
    rules={"cites": build},
    key=lambda pred: "cites",
    check=check,
    print=print_cites,
    expected=lambda pred: max(1, pred.at_least or 1),
    fragment=None,  # reads the run itself: never a test of one value
    compile=compile_cites,
)
