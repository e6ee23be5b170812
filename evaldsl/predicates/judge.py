"""The LLM judge: `judged "rubric" [>= 0.7] [by "model"]`.

Takes `Judged` nodes and gives their vocabulary entry, build rule, check rule (a threshold
is a minimum score in [0, 1], written `>= T` or `> T`), checker and printed form. The
checker asks the case's judge (`evaldsl.judge`) about the subject's text (a JSON subject's
JSON text); what the judge answers is the verdict: pass, fail, skip (no key) or error.
"""

from __future__ import annotations

from typing import Any

from evaldsl.cache.regexes import regex
from evaldsl.judge.protocol import JudgeOutcome
from evaldsl.language import ast
from evaldsl.language.limits import finite_problem
from evaldsl.language.source import Span
from evaldsl.language.values import MISSING, js_text
from evaldsl.language.verdicts import Verdict, verdict
from evaldsl.language.vocabulary import Type, predicate_spec
from evaldsl.predicates.base import (
    BuildKit,
    CheckContext,
    Checker,
    CompileContext,
    Family,
    Found,
    Printer,
    SubjectFails,
    Unavailable,
)
from evaldsl.runs.index import RunFacts
from evaldsl.runs.model import given

ENTRIES = (
    predicate_spec(
        "judged",
        'judged "rubric" [>= 0.7] [by "model"]',
        {"Text", "Json"},
        "An LLM judge decides whether the subject meets the rubric.",
        'answer judged "mentions the temperature" >= 0.7',
    ),
)


def build(kit: BuildKit, c: list[Any]) -> ast.Judged:
    threshold: float | None = None
    op: str | None = None
    model: str | None = None
    i = 2
    if i < len(c) and kit.kind(c[i]) == "CMP_OP":
        op, threshold = kit.text(c[i]), float(kit.text(c[i + 1]))
        i += 2
    if i < len(c) and kit.kind(c[i]) == "BY":
        model = kit.string(c[i + 1])
    return ast.Judged(kit.string(c[1]), threshold, op, model, span=kit.span(c))


def check(ctx: CheckContext, pred: ast.Judged, stype: Type, subject: ast.Subject, _: str) -> None:
    if not pred.rubric.strip():  # (the judge would be asked to judge against nothing)
        ctx.error(
            pred.span,
            "E211",
            "a judge's rubric is empty: it says nothing the answer must do",
            'write what it must do: judged "mentions the temperature"',
        )
    if pred.model is not None and not pred.model.strip():
        # (`by ""` ran the suite's or the default model unsaid; `by "  "` sent "  ")
        ctx.error(
            pred.span,
            "E211",
            "a judge's model is empty: `by` names no model",
            'name it (by "gpt-4o-mini"), or leave `by` out for the configured model',
        )
    if pred.op is not None and pred.op not in (">=", ">"):
        ctx.error(
            pred.span, "E208", f"a judge threshold is a minimum score: `>= T`, not `{pred.op} T`"
        )
    if pred.threshold == 0:
        # (`>= 1e-400` read as `>= 0`, which every score passes: out of range, as a
        # literal anywhere else, where `1e400` is E208 here)
        written = _THRESHOLD.match(ctx.text(pred.span))
        problem = None if written is None else finite_problem(0.0, written.group("n"))
        if problem is not None:
            ctx.error(pred.span, "E209", problem)
            return
    if pred.threshold is not None and not 0.0 <= pred.threshold <= 1.0:
        hint = fix = None
        written = _THRESHOLD.match(ctx.text(pred.span))
        if 10.0 <= pred.threshold <= 100.0:  # (`>= 70`: a percentage)
            meant = f"{pred.op or '>='} {pred.threshold / 100:g}"
            hint = f"write `{meant}`"
            if written is not None:
                start = pred.span.start
                fix = (Span(start + written.start("t"), start + written.end("t")), meant)
        # (the number as written: `1e400` read as inf was said as "inf is out of range")
        shown = f"{pred.threshold:g}" if written is None else written.group("n")
        ctx.error(
            pred.span,
            "E208",
            f"a judge score is between 0 and 1; {shown} is out of range",
            hint,
            fix,
        )
    elif pred.threshold == 0 and pred.op == ">=":
        ctx.never(pred.span, "fail", "every judge score is at least 0")
    elif pred.threshold == 1 and pred.op == ">":
        ctx.never(pred.span, "pass", "no judge score is over 1")


#: Where a judged predicate's threshold is written: after its rubric, the first string.
_THRESHOLD = regex(
    r"judged\s*(?:\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*')\s*"
    r"(?P<t>(?:>=|<=|==|!=|>|<)\s*(?P<n>-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?))"
)


def compile_judged(ctx: CompileContext, node: ast.Check) -> Checker:
    pred = node.predicate
    assert isinstance(pred, ast.Judged)
    get = ctx.subject(node.subject)
    shown = ctx.text(node.subject.span) or node.subject.kind
    span = node.span
    judge = ctx.ask_judge()
    model = pred.model or ctx.judge_model
    rubric, threshold = pred.rubric, pred.threshold

    def run(facts: RunFacts) -> Verdict:
        try:
            value = get(facts)
        except Unavailable as why:
            return verdict("error", str(why), span)
        except SubjectFails as why:
            return verdict("fail", str(why), span)
        if value is MISSING:
            return verdict("fail", f"`{shown}` is missing: there is nothing to judge", span)
        if isinstance(value, Found):
            value = value.values
        text = value if isinstance(value, str) else js_text(value)
        try:
            outcome = judge(text, rubric, model=model, threshold=threshold)
        except Exception as err:  # a judge the caller gave (`compile(judge=…)`): its error
            return verdict("error", f"judge: {_judge_fault(judge)} raised {_error(err)}", span)
        if not isinstance(outcome, JudgeOutcome):
            return verdict(
                "error",
                f"judge: {_judge_fault(judge)} returned {given(outcome)}, not an "
                "evaldsl.judge.protocol.JudgeOutcome",
                span,
            )
        if outcome.score is None or threshold is None:
            # nothing to compare (an error, a skip, a verdict without a threshold): found
            # and expected would read `null` beside a message that says it all
            return verdict(outcome.status, outcome.message, span)
        return verdict(outcome.status, outcome.message, span, outcome.score, threshold)

    return run


def _judge_fault(judge: object) -> str:
    """The judge named in an error of its own: the judge given (a callable of the
    caller's, called as `judge(text, rubric, model=…, threshold=…)`), by its name."""
    name = getattr(judge, "__qualname__", None) or type(judge).__qualname__
    return f"the judge given ({name}, called as judge(text, rubric, model=…, threshold=…))"


def _error(err: Exception) -> str:
    message = str(err)
    return f"{type(err).__name__}: {message}" if message else type(err).__name__


def print_judged(p: Printer, pred: ast.Judged, indent: str) -> str:
    out = f"judged {p.quote(pred.rubric)}"
    if pred.op is not None and pred.threshold is not None:
        out += f" {pred.op} {p.number(pred.threshold, pred.span)}"
    if pred.model is not None:
        out += f" by {p.quote(pred.model)}"
    return out


FAMILY = Family(
    name="judge",
    nodes=(ast.Judged,),
    entries=ENTRIES,
    rules={"judged": build},
    key=lambda pred: "judged",
    check=check,
    print=print_judged,
    expected=lambda pred: pred.threshold,
    fragment=None,  # reads the run itself: never a test of one value
    compile=compile_judged,
)
