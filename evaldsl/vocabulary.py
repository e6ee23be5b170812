"""The whole vocabulary as users read it: subjects, predicates and lines, with their docs.

Takes the subject and line tables (`evaldsl.language.vocabulary`) and the predicate table
(`evaldsl.predicates.registry`) and gives what people see: the hover text of a word
(`describe`) and the plain-text listing `evaldsl vocabulary` prints (`help_text`).
"""

from __future__ import annotations

from evaldsl.language.vocabulary import (
    RUN_FORMATS,
    STATEMENTS,
    SUBJECTS,
    TYPE_WORDS,
    PredicateSpec,
    SubjectSpec,
    spec_markdown,
    statement_markdown,
)
from evaldsl.predicates.registry import PREDICATES


def describe(word: str) -> str | None:
    """Markdown doc for a word under the cursor (hover): subject, predicate or line.

    >>> (describe("matches") or "").splitlines()[0]
    '**matches /re/flags**'
    """
    specs: list[SubjectSpec | PredicateSpec] = [*SUBJECTS.values(), *PREDICATES.values()]
    for spec in specs:
        if word in spec.words[:1]:
            return spec_markdown(spec)
    if word in STATEMENTS:
        return statement_markdown(word)
    return None


def help_text() -> str:
    """The vocabulary as plain text (`evaldsl vocabulary`)."""
    lines = ["Subjects:"]
    for s in SUBJECTS.values():
        lines.append(f"  {s.syntax:<28} {TYPE_WORDS[s.type]:<18} {s.doc}")
    lines.append("")
    lines.append("Predicates:")
    for p in PREDICATES.values():
        applies = ", ".join(sorted(TYPE_WORDS[t] for t in p.applies_to))
        lines.append(f"  {p.syntax}\n      {p.doc} (on {applies})  e.g. {p.example}")
    lines.append("")
    lines.append("Lines:")
    for syntax, doc in STATEMENTS.values():
        lines.append(f"  {syntax:<36} {doc}")
    lines.append("")
    lines.append('Formats (detected by `cassette`, named by `trace "…" as FORMAT`):')
    for name, (aliases, doc) in RUN_FORMATS.items():
        also = f" (also {', '.join(aliases)})" if aliases else ""
        lines.append(f"  {name + also:<36} {doc}")
    return "\n".join(lines)
