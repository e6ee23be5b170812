"""Convert: a suite draft (from YAML or JSON) → the equivalent `.eval` text.

Takes a `SuiteDraft` and gives `.eval` text with the same header, cases, sources and
assertions (object-form assertions written as the evaldsl text they compile from), plus
the diagnostics met on the way. What could not be converted (an assertion, a field, a
value no literal writes: the draft's errors) is kept as a comment saying why, followed by
a `not_converted` line: no statement, so the `.eval` file's check stops that case (or,
in the header, the suite) as the original's errors stop it, and no check is lost to a
pass. Nothing is silently dropped. Paths stay relative to the suite's folder: save the
output next to the YAML file.
"""

from __future__ import annotations

from evaldsl.language.diagnostics import Diagnostic, sort_key
from evaldsl.language.values import MISSING
from evaldsl.suites.model import CaseDraft, Snippet, SuiteDraft
from evaldsl.suites.objects import dsl_name, dsl_string, dsl_target, dsl_value


def _duration(seconds: float) -> str:
    if seconds >= 1 and float(seconds).is_integer():
        return f"{int(seconds)}s"
    return f"{round(seconds * 1000)}ms"


def _statements(snippet: Snippet) -> list[str]:
    text = snippet.source.text
    out = []
    for expr in snippet.exprs:
        piece = text[expr.span.start : expr.span.end]
        out.append(" ".join(line.strip() for line in piece.splitlines()))
    return out


#: The line written after what could not be converted: not a statement, so the `.eval`
#: file's check refuses it (E101) and its case does not run until it is rewritten.
NOT_CONVERTED = "not_converted  # rewrite what the comment above says in evaldsl"


def _lost(indent: str, why: str) -> list[str]:
    """The lines that keep what could not be converted from passing: why, and the stop."""
    return [f"{indent}# not converted: {why}", f"{indent}{NOT_CONVERTED}"]


def _errors(diagnostics: tuple[Diagnostic, ...], indent: str) -> list[str]:
    """The lines for the errors a case (or the header) met: each said, then one stop."""
    said = [
        f"{indent}# not converted ({d.path}:{d.line}:{d.column}): {d.message}"
        for d in diagnostics
        if d.is_error
    ]
    return [*said, f"{indent}{NOT_CONVERTED}"] if said else []


def _case_lines(case: CaseDraft) -> list[str]:
    lines = [f"case {dsl_string(case.name)}"]
    src = case.source
    if src is not None:
        if src.kind == "run":
            lines.append(f"  run {dsl_target(src.target or '')}")
        elif src.kind == "trace":
            lines.append(f"  trace {dsl_string(src.path or '')} as {src.format or 'events'}")
        else:
            lines.append(f"  {src.kind} {dsl_string(src.path or '')}")
    if case.dataset is not None:
        lines.append(f"  dataset {dsl_string(case.dataset.path or '')}")
    each = list(case.each) if case.each is not None else MISSING
    for word, value in (("input", case.input), ("each", each)):
        if value is MISSING:
            continue
        try:
            lines.append(f"  {word} {dsl_value(value)}")
        except ValueError:  # NaN: no evaldsl literal stands for it
            lines.extend(_lost("  ", f"`{word}` holds NaN (.nan), which no literal writes"))
    if case.timeout is not None:
        lines.append(f"  timeout {_duration(case.timeout)}")
    lines.extend(_errors(case.diagnostics, "  "))
    for snippet in case.snippets:
        lines.extend(f"  {s}" for s in _statements(snippet))
    return lines


def to_eval(draft: SuiteDraft) -> tuple[str, list[Diagnostic]]:
    """The `.eval` text of a suite, and every diagnostic of the draft."""
    lines = [f"suite {dsl_string(draft.name)}"]
    if draft.tools:
        lines.append("tools " + ", ".join(dsl_name(t) for t in sorted(draft.tools)))
    if draft.nodes:
        lines.append("nodes " + ", ".join(dsl_name(n) for n in sorted(draft.nodes)))
    if draft.judge_model:
        lines.append(f"judge model {dsl_string(draft.judge_model)}")
    if draft.timeout is not None:
        lines.append(f"timeout {_duration(draft.timeout)}")
    for snippet in draft.header:
        lines.extend(_statements(snippet))
    lines.extend(_errors(draft.diagnostics, ""))
    problems = list(draft.diagnostics)
    for case in draft.cases:
        lines.append("")
        lines.extend(_case_lines(case))
        problems.extend(case.diagnostics)
    return "\n".join(lines) + "\n", sorted(problems, key=sort_key)
