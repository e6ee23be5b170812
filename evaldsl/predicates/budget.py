"""The token budget: `tokens within budget` (cycgraph's token_budget_respected).

Takes `WithinBudget` nodes and gives their vocabulary entry, build rule, check rule (only
`tokens` has a budget, and only a workflow state records one), checker and printed form.
A state without a budget (absent, null or 0, as cycgraph) passes; otherwise
`total_tokens_used <= max_token_budget`.
"""

from __future__ import annotations

from typing import Any

from evaldsl.language import ast
from evaldsl.language.values import MISSING, is_number
from evaldsl.language.verdicts import Verdict, verdict
from evaldsl.language.vocabulary import Type, predicate_spec
from evaldsl.predicates.base import (
    BuildKit,
    CheckContext,
    Checker,
    CompileContext,
    Family,
    no_state,
)
from evaldsl.runs.index import RunFacts

ENTRIES = (
    predicate_spec(
        "within_budget",
        "within budget",
        {"Number"},
        "tokens only: total_tokens_used <= max_token_budget (no budget, or 0, passes).",
        "tokens within budget",
        subjects=frozenset({"tokens"}),
    ),
)


def build(kit: BuildKit, c: list[Any]) -> ast.WithinBudget:
    return ast.WithinBudget(span=kit.span(c))


def check(
    ctx: CheckContext, pred: ast.WithinBudget, stype: Type, subject: ast.Subject, _: str
) -> None:
    if subject.kind not in ENTRIES[0].subjects:
        ctx.error(pred.span, "E201", "`within budget` applies to `tokens`", "tokens within budget")
    elif ctx.source_kind is not None and ctx.source_kind != "state":
        ctx.error(
            pred.span,
            "E303",
            f"a {ctx.source_word or ctx.source_kind} has no token budget: "
            "`within budget` reads a workflow state's max_token_budget",
            "use a number: tokens <= 2000",
        )


def compile_within_budget(ctx: CompileContext, node: ast.Check) -> Checker:
    span = node.span

    def run(facts: RunFacts) -> Verdict:
        state = facts.state
        if state is None:
            return verdict("error", no_state("tokens within budget"), span)
        used = state.get("total_tokens_used", MISSING)
        budget = state.get("max_token_budget")
        # cycgraph: no budget, or a budget of 0, means unlimited
        if not budget:
            if used is MISSING:
                return verdict("pass", "no token budget set", span)
            return verdict("pass", f"no token budget set ({used} tokens used)", span, used)
        if used is MISSING:
            # (cycgraph compares `undefined <= budget`, which fails; the count is unknown)
            message = (
                f"the state records no `total_tokens_used`: a budget of {budget} tokens "
                "cannot be checked"
            )
            return verdict("error", message, span)
        ok = is_number(used) and used <= budget
        message = f"{used}/{budget} tokens used"
        if not ok:
            message = f"token budget exceeded: {used}/{budget}"
        return verdict("pass" if ok else "fail", message, span, used, budget)

    return run


FAMILY = Family(
    name="budget",
    nodes=(ast.WithinBudget,),
    entries=ENTRIES,
    rules={"within_budget": build},
    key=lambda pred: "within_budget",
    check=check,
    print=lambda p, pred, indent: "within budget",
    expected=lambda pred: None,
    fragment=None,  # reads the run itself: never a test of one value
    compile=compile_within_budget,
)
