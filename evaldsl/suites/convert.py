"""Convert: a suite draft (from YAML or JSON) → the equivalent `.eval` text.

Takes a `SuiteDraft` and gives `.eval` text with the same header, cases, sources and
assertions (object-form assertions written as the evaldsl text they compile from), plus
the diagnostics met on the way. What could not be converted (an assertion, a field, a
value no literal writes: the draft's errors) is kept as a comment saying why, followed by
a `not_converted` line: no statement, so the `.eval` file's check stops that case (or,
in the header, the suite) as the original's errors stop it, and no check is lost to a
pass. Nothing is silently dropped. An `each` row's value that goes into a converted
object's regex is translated from JavaScript as the object's own regex is (traceplay
renders the object, then reads it); a row the `.eval` text would still read otherwise is
a warning (W512). Paths stay relative to the suite's folder: save the
output next to the YAML file.
"""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal
from typing import Any, cast

import attrs

from evaldsl.language import ast
from evaldsl.language.diagnostics import Diagnostic, sort_key
from evaldsl.language.regexes import RegexProblem
from evaldsl.language.values import MISSING
from evaldsl.suites.jsregex import translate
from evaldsl.suites.model import CaseDraft, Snippet, SuiteDraft
from evaldsl.suites.objects import dsl_name, dsl_string, dsl_target, dsl_value
from evaldsl.suites.templates import placeholders, render_node
from evaldsl.syntax.literals import parse_duration


def _duration(seconds: float) -> str:
    """The duration literal that reads back as `seconds` exactly: whole seconds or
    milliseconds where they are, else the seconds written out (`0.0004s`, never `0ms`,
    which is no timeout at all)."""
    if seconds >= 1 and float(seconds).is_integer():
        return f"{int(seconds)}s"
    millis = f"{round(seconds * 1000)}ms"
    if parse_duration(millis) == seconds:
        return millis
    # positional, as the literal has no exponent: repr's digits read back as the float
    return f"{Decimal(repr(float(seconds))):f}s"


def _statements(snippet: Snippet, indent: str) -> list[str]:
    """Each statement's lines, as written: a statement spans lines only inside brackets,
    where a `.eval` file lets it too, and a line may end in a comment (joined into one
    line, that comment would swallow the rest of the statement)."""
    text = snippet.source.text
    out = []
    for expr in snippet.exprs:
        piece = text[expr.span.start : expr.span.end]
        # split as a `.eval` file is, at "\n" only: a U+2028 or U+0085 inside a string
        # is part of it, never a line break. A raw CR (from a YAML "\r" escape) can only
        # be in a string or a regex, where `\r` reads the same; a `.eval` file refuses it raw
        for line in piece.replace("\r", "\\r").split("\n"):
            line = line.strip(" \t")
            out.append(f"{indent}{line}" if line else "")
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


def _regexes(node: object) -> Iterator[ast.Regex]:
    """Every regex literal in an AST node and its children."""
    if isinstance(node, ast.Regex):
        yield node
    elif isinstance(node, tuple):
        for item in node:
            yield from _regexes(item)
    elif attrs.has(type(node)):
        for field in attrs.fields(cast(Any, type(node))):
            if field.name != "span":
                yield from _regexes(getattr(node, field.name))


def _read_alike(snippets: list[Snippet], row: dict[str, Any], written: dict[str, Any]) -> bool:
    """Whether the `.eval` text of `snippets` with the row `written` reads as the YAML's
    objects rendered for `row` do (traceplay renders an object, then reads its regex as
    JavaScript; `.eval` puts the row's value into an RE2 regex as it is)."""
    return all(s.rendered(row)[0].exprs == render_node(s.exprs, written) for s in snippets)


def _rows(case: CaseDraft) -> tuple[tuple[dict[str, Any], ...] | None, Diagnostic | None]:
    """The case's `each` rows as the `.eval` text writes them: a value that goes into a
    regex of a converted object is translated from JavaScript as a literal regex is; a row
    that still reads otherwise (its value is not a whole regex, it is used elsewhere too)
    is said (W512), naming it."""
    converted = [s for s in case.snippets if s.template is not None]
    if case.each is None or not converted:
        return case.each, None
    keys = placeholders(tuple(r.pattern for s in converted for r in _regexes(s.exprs)))
    rows: list[dict[str, Any]] = []
    differ: list[int] = []
    for n, row in enumerate(case.each, 1):
        written = row
        if not _read_alike(converted, row, row):
            written = {k: _translated(v) if k in keys else v for k, v in row.items()}
            if not _read_alike(converted, row, written):
                differ.append(n)
                written = row
        rows.append(written)
    if not differ:
        return tuple(rows), None
    shown = ", ".join(f"#{n}" for n in differ)
    said = Diagnostic.in_file(
        case.path,
        "W512",
        f'case "{case.name}": row{"s" if len(differ) > 1 else ""} {shown} of `each` '
        "read otherwise in the .eval text: a row's value in a regex is RE2 there, "
        "JavaScript in the object it was converted from",
        line=case.line,
        hint="write the .eval regex for those rows by hand, or give each its own case",
    )
    return tuple(rows), said


def _translated(value: Any) -> Any:
    """A row's value as the RE2 text of the JavaScript regex it is (else as it is)."""
    if not isinstance(value, str):
        return value
    translated = translate(value)
    return value if isinstance(translated, RegexProblem) else translated


def _comments(indent: str, notes: tuple[str, ...]) -> list[str]:
    """Notes no `.eval` line holds (`description: …`, `tags: …`), as comments."""
    return [f"{indent}# {line}".rstrip() for note in notes for line in note.splitlines()]


def _case_lines(case: CaseDraft, rows: tuple[dict[str, Any], ...] | None) -> list[str]:
    lines = [f"case {dsl_string(case.name)}", *_comments("  ", case.notes)]
    src = case.source
    if src is not None:
        if src.kind == "run":
            lines.append(f"  run {dsl_target(src.target or '')}")
        elif src.kind == "trace" and src.format is not None:
            lines.append(f"  trace {dsl_string(src.path or '')} as {src.format}")
        elif src.kind == "trace":
            # (a YAML `trace:` without `format:` has its format detected, as a `cassette`
            # line has: `as events` would refuse an OpenAI or OTLP file the YAML reads)
            lines.append(f"  cassette {dsl_string(src.path or '')}")
        else:
            lines.append(f"  {src.kind} {dsl_string(src.path or '')}")
    if case.dataset is not None:
        lines.append(f"  dataset {dsl_string(case.dataset.path or '')}")
    each = list(rows) if rows is not None else MISSING
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
        lines.extend(_comments("  ", snippet.notes))
        lines.extend(_statements(snippet, "  "))
    return lines


def to_eval(draft: SuiteDraft) -> tuple[str, list[Diagnostic]]:
    """The `.eval` text of a suite, and every diagnostic of the draft."""
    lines = [f"suite {dsl_string(draft.name)}", *_comments("", draft.notes)]
    if draft.tools:
        lines.append("tools " + ", ".join(dsl_name(t) for t in sorted(draft.tools)))
    if draft.nodes:
        lines.append("nodes " + ", ".join(dsl_name(n) for n in sorted(draft.nodes)))
    if draft.judge_model:
        lines.append(f"judge model {dsl_string(draft.judge_model)}")
    if draft.timeout is not None:
        lines.append(f"timeout {_duration(draft.timeout)}")
    for snippet in draft.header:
        lines.extend(_comments("", snippet.notes))
        lines.extend(_statements(snippet, ""))
    lines.extend(_errors(draft.diagnostics, ""))
    problems = list(draft.diagnostics)
    for case in draft.cases:
        rows, differ = _rows(case)
        lines.append("")
        lines.extend(_case_lines(case, rows))
        problems.extend(case.diagnostics)
        if differ is not None:
            problems.append(differ)
    return "\n".join(lines) + "\n", sorted(problems, key=sort_key)
