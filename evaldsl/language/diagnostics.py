"""Diagnostics: what every stage reports instead of raising.

Takes a `Source` and a `Span` (or a file position) and gives `Diagnostic` records with a
stable code, a severity, a message in the user's words and an optional hint. Stages
collect them and keep going; `EvalDslError` carries the whole list to the API boundary.
The renderers here turn the same records into text (`full`, `concise`) and JSON; SARIF
and GitHub annotations read the same fields.
"""

from __future__ import annotations

import functools
import json
from collections import Counter
from collections.abc import Iterable, Sequence
from operator import itemgetter
from typing import Literal

import attrs

from evaldsl.language.printable import columns, visible
from evaldsl.language.source import Source, Span, line_window

Severity = Literal["error", "warning", "info"]

#: A fix as a stage gives it to `Diagnostic.at`: the span of its source to replace and the
#: new text (None: the hint, if any, is no single edit).
Fixing = tuple[Span, str] | None
#: An outcome an assertion can never have: "fail" (W601) or "pass" (W602).
Never = Literal["fail", "pass"]
#: Characters of a message or a hint that text output shows: a message quotes what the
#: file holds (`found the text "…"`), megabytes of it at worst; a longer one has its middle
#: cut, saying how much (`check --format json` and SARIF keep it whole).
SHOWN_MESSAGE = 500
#: Diagnostics `check` prints as text before saying how many more it did not (compilers
#: cap theirs too: `-fmax-errors`, `-ferror-limit`); `--max-diagnostics` sets it, 0 lifts it.
MAX_SHOWN = 100

#: Every code, with a one-line title. Codes are stable: never renumber, only add.
CODES: dict[str, str] = {
    "E101": "syntax error",
    "E102": "unterminated string or regex",
    "E103": "character not allowed here",
    "E104": "unknown escape in a string",
    "E105": "nested deeper than the limit",
    "E201": "predicate does not apply to this subject",
    "E202": "missing or wrong unit",
    "E203": "unknown status value",
    "E204": "text must be quoted",
    "E205": "value of the wrong type",
    "E206": "line not allowed here",
    "E207": "invalid count or index",
    "E208": "invalid judge threshold",
    "E209": "number out of range",
    "E210": "invalid timeout",
    "E211": "empty judge rubric",
    "E301": "unknown tool",
    "E302": "unknown node",
    "E303": "subject not available from this source",
    "E401": "invalid regular expression",
    "E402": "regular expression construct not supported",
    "E403": "unknown regular expression flag",
    "E404": "invalid JSONPath",
    "E501": "file not found",
    "E502": "unreadable run",
    "E503": "case source missing or repeated",
    "E504": "invalid suite",
    "E505": "unknown assertion kind or type",
    "E506": "missing field",
    "E507": "field of the wrong type",
    "E508": "unknown field",
    "E509": "run target cannot be imported",
    "E510": "YAML construct not allowed",
    "W101": "raw bidirectional control character",
    "W301": "tool never occurs in the recording",
    "W302": "node never occurs in the state",
    "W405": "JSONPath whose values can multiply",
    "W504": "case with no assertions",
    "W505": "duplicate key in a JSON suite",
    "W506": "part of a traceplay or cycgraph object that it skips",
    "W507": "two cases of a suite with one name",
    "W508": "a case whose rows are none: never run",
    "W509": "a placeholder an `each` row has no value for",
    "W510": "a suite with no cases",
    "W511": "a bare timeout that reads as milliseconds",
    "W512": "what `evaldsl convert` cannot carry over as it is read",
    "W513": "a price table (EVALDSL_PRICES) that cannot be used",
    "W514": "a timeout on a case that runs no target: it limits nothing",
    "W601": "assertion can never fail",
    "W602": "assertion can never pass",
}


@attrs.frozen
class Fix:
    """An exact edit that mends a diagnostic's problem: the text from `line`:`column` to
    `end_line`:`end_column` (1-based, code points, in the file the user edits, as a
    diagnostic's own place) becomes `text`. An editor offers it as a quick fix."""

    line: int
    column: int
    end_line: int
    end_column: int
    text: str


@attrs.frozen
class Diagnostic:
    """One problem at one place: `x.eval:3:8: error[E301]: unknown tool "get_wether"`.

    `fix`, when there is one, is the hint as an edit (`did you mean `called`?`: the word
    replaced); it takes no part in equality, as the source line does not."""

    code: str
    severity: Severity
    message: str
    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    hint: str | None = None
    source_line: str = attrs.field(default="", eq=False, repr=False)
    fix: Fix | None = attrs.field(default=None, eq=False, repr=False)

    @classmethod
    def at(
        cls,
        source: Source,
        span: Span,
        code: str,
        message: str,
        hint: str | None = None,
        severity: Severity | None = None,
        fix: Fixing = None,
    ) -> Diagnostic:
        """Build a diagnostic for a span of a source; severity follows the code's letter.

        `fix`: the span of the source to replace and its new text, kept (as a `Fix` in
        the user's file) only where the source's text is written as it is there.
        """
        start = source.position(span.start)
        end = source.end_position(max(span.end, span.start))
        return cls(
            code=code,
            severity=severity or _default_severity(code),
            message=message,
            path=source.path,
            line=start.line,
            column=start.column,
            end_line=end.line,
            end_column=end.column,
            hint=hint,
            source_line=source.line_text(start.line),
            fix=_fix(source, *fix) if fix is not None else None,
        )

    @classmethod
    def in_file(
        cls,
        path: str,
        code: str,
        message: str,
        *,
        line: int = 1,
        column: int = 1,
        hint: str | None = None,
        source_line: str = "",
        severity: Severity | None = None,
        end: tuple[int, int] | None = None,
    ) -> Diagnostic:
        """A diagnostic about a file position when no parsed `Source` is at hand: the
        character at `line`:`column`, or up to `end` (its line and column, exclusive) when
        the place is known to be longer (a YAML key or value written on one line)."""
        end_line, end_column = (line, column + 1) if end is None else end
        return cls(
            code=code,
            severity=severity or _default_severity(code),
            message=message,
            path=path,
            line=line,
            column=column,
            end_line=end_line,
            end_column=end_column,
            hint=hint,
            source_line=source_line,
        )

    @property
    def is_error(self) -> bool:
        return self.severity == "error"

    @property
    def brief(self) -> str:
        """`path:line:column: message`, for a line that names one diagnostic (a long
        message abbreviated: `abbreviated`; a line break or control character of the path
        or the message shown as an escape, as `render` shows them, so it stays one line).

        >>> Diagnostic.in_file("a\\nb.eval", "E101", "bad").brief
        'a\\\\nb.eval:1:1: bad'
        """
        path = visible(self.path, newlines=False)
        message = visible(abbreviated(self.message), newlines=False)
        return f"{path}:{self.line}:{self.column}: {message}"

    def to_json(self) -> dict[str, object]:
        """The record `check --format json` prints (1-based lines and columns)."""
        return {
            "path": self.path,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "severity": self.severity,
            "code": self.code,
            "message": self.message,
            "hint": self.hint,
            # the hint as an exact edit, when it is one (what an editor's quick fix applies)
            "fix": None
            if self.fix is None
            else {
                "line": self.fix.line,
                "column": self.fix.column,
                "end_line": self.fix.end_line,
                "end_column": self.fix.end_column,
                "text": self.fix.text,
            },
        }


def _fix(source: Source, span: Span, text: str) -> Fix | None:
    """The edit replacing `span` of `source` with `text`, in the user's file; None where
    the span's text is not written there as it is (an escaped YAML string, an assertion
    made from a YAML object): an edit there would replace other text."""
    if not source.written(span):
        return None
    start, end = source.position(span.start), source.position(span.end)
    return Fix(start.line, start.column, end.line, end.column, text)


def _default_severity(code: str) -> Severity:
    return "warning" if code.startswith("W") else "error"


class EvalDslError(Exception):
    """Raised at the API boundary when a program has errors; carries every diagnostic."""

    def __init__(self, diagnostics: Sequence[Diagnostic]) -> None:
        self.diagnostics = list(diagnostics)
        errors = [d for d in self.diagnostics if d.is_error]
        shown = errors or self.diagnostics
        super().__init__(render(shown, style="concise") if shown else "evaldsl error")

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.is_error]


def did_you_mean(word: str, candidates: Iterable[str], cutoff: float = 0.6) -> str | None:
    """The closest candidate to a misspelt word, if one is close: `caled` → `called`."""
    if isinstance(candidates, frozenset):  # (a suite's declared and recorded names)
        return _closest(word, sorted_names(candidates), cutoff)
    return _closest(word, tuple(sorted(set(candidates))), cutoff)


@functools.lru_cache(maxsize=64)
def sorted_names(names: frozenset[str]) -> tuple[str, ...]:
    """A set of names (a `tools` line's, a recording's) in order, sorted once per set: each
    unknown name's suggestion and message sorted them again (a `tools` line of thousands
    of names and as many unknown names: quadratic beside `_near`)."""
    return tuple(sorted(names))


@functools.lru_cache(maxsize=4096)
def _closest(word: str, pool: tuple[str, ...], cutoff: float) -> str | None:
    # cached: a suite asks the same question (`no tool delete_database` in every case)
    if not pool:
        return None
    near = _near(word, pool, cutoff)
    if near:
        found = _best(word, near, cutoff)
        if found is not None:
            return found
    lowered = {c.lower(): c for c in pool}
    return lowered.get(word.lower())


def _best(word: str, near: list[tuple[float, tuple[str, ...]]], cutoff: float) -> str | None:
    """What `difflib.get_close_matches(word, candidates, n=1, cutoff)` gives, from the
    candidates that pass its cheap bounds, in groups of one `quick_ratio`: the highest
    ratio at least `cutoff`, ties to the greatest candidate (its `heapq.nlargest` of
    (ratio, candidate) pairs). A ratio is never above its `quick_ratio`, so the groups are
    scored from the highest bound down and no further than a bound below the best ratio
    found: a near miss of one of 2,000 names of one shape scored ~2,000 candidates
    (difflib computes each ratio twice), a handful now (`check` of 2,000 such misses
    against a `tools` line of 2,000 names: 38.2 s -> 0.7 s, with `_near`'s groups)."""
    import difflib  # only when a name is near: not every start pays for it

    matcher = difflib.SequenceMatcher()
    matcher.set_seq2(word)  # (as get_close_matches: the word is the second sequence)
    best: tuple[float, str] | None = None
    for bound, candidates in sorted(near, key=itemgetter(0), reverse=True):
        if best is not None and bound < best[0]:
            break  # (every bound left is lower: no ratio left can reach the best)
        for candidate in candidates:
            matcher.set_seq1(candidate)
            score = matcher.ratio()
            if score >= cutoff and (best is None or (score, candidate) > best):
                best = (score, candidate)
    return None if best is None else best[1]


def _near(word: str, pool: tuple[str, ...], cutoff: float) -> list[tuple[float, tuple[str, ...]]]:
    """The candidates of `pool` that pass the two cheap bounds `difflib.get_close_matches`
    tests before it computes a ratio (`real_quick_ratio`: the lengths; `quick_ratio`: the
    letters in common, counted with multiplicity), with difflib's own arithmetic, in
    groups after their `quick_ratio`. It drops every other candidate unscored, so it gives
    the same answer on these alone. The bounds depend on a candidate's length and letters
    only, so they are worked out once for each group of candidates with the same length
    and letters, counted once per pool (most unknown names are near no candidate: the
    bounds were most of the time of a did-you-mean; names of one shape, `tool_0042`,
    share their letters by the hundred)."""
    size = len(word)
    mine = Counter(word).get
    kept: list[tuple[float, tuple[str, ...]]] = []
    for own, letters, candidates in _groups(pool):
        length = own + size
        if not length:  # two empty words: difflib's ratio is 1.0
            kept.append((1.0, candidates))
            continue
        if 2.0 * min(own, size) / length < cutoff:
            continue
        common = 0
        for letter, count in letters:
            theirs = mine(letter, 0)
            common += count if count < theirs else theirs
        bound = 2.0 * common / length
        if bound >= cutoff:
            kept.append((bound, candidates))
    return kept


@functools.lru_cache(maxsize=64)
def _groups(
    pool: tuple[str, ...],
) -> tuple[tuple[int, tuple[tuple[str, int], ...], tuple[str, ...]], ...]:
    """A pool's candidates grouped by their length and letter counts (each group's
    bounds are the same), with those."""
    by: dict[tuple[int, tuple[tuple[str, int], ...]], list[str]] = {}
    for candidate in pool:
        key = (len(candidate), tuple(sorted(Counter(candidate).items())))
        by.setdefault(key, []).append(candidate)
    return tuple((own, letters, tuple(group)) for (own, letters), group in by.items())


def forget_suggestions() -> None:
    """Forget the memoised did-you-mean answers (a benchmark measures cold compiles)."""
    _closest.cache_clear()
    _groups.cache_clear()
    sorted_names.cache_clear()


def sort_key(d: Diagnostic) -> tuple[str, int, int, str, int, int, str]:
    """Diagnostics in the order a reader meets them; ties (two problems of one code at one
    place) by their message, so a report's order never rests on a set's."""
    return (d.path, d.line, d.column, d.code, d.end_line, d.end_column, d.message)


def abbreviated(text: str, limit: int = SHOWN_MESSAGE) -> str:
    """`text`, or when it is longer than `limit` characters its start and end with the
    middle cut, saying how many characters were; never longer than `text` (a text a few
    characters past the limit is shown whole: the note would take more than it saves).

    >>> abbreviated("found " + "x" * 1000 + " here", 40)
    'found xxxxxxxxxxxxxxxxxxxxxxxxxx… (971 characters not shown) …xxx here'
    >>> abbreviated("x" * 41, 40) == "x" * 41
    True
    """
    if len(text) <= limit:
        return text
    tail = limit // 5
    head = limit - tail
    # (no "1 character not shown": a cut that hides fewer characters than its note
    # takes is not made)
    cut = f"{text[:head]}… ({len(text) - limit:,} characters not shown) …"
    return cut + text[-tail:] if len(cut) + tail < len(text) else text


def not_utf8(
    path: str, raw: bytes, error: UnicodeDecodeError, what: str = "suite file"
) -> Diagnostic:
    """E504 for a suite file (or `what`) whose bytes are not UTF-8 (`error`, from decoding
    `raw`), at the line and column of the first byte that is not, with its line as the source.

    >>> d = not_utf8("l.eval", b'suite "l"\\ncase "caf\\xe9"\\n', UnicodeDecodeError(
    ...     "utf-8", b'suite "l"\\ncase "caf\\xe9"\\n', 19, 20, "invalid"))
    >>> (d.line, d.column, d.message)
    (2, 10, 'suite file is not UTF-8 text: byte 0xe9 is not UTF-8')
    """
    # (the bytes before the bad one decode: their text gives the line and column)
    before = raw[: error.start].decode("utf-8-sig", errors="replace")
    start = before.rfind("\n") + 1
    rest = raw[error.start :].split(b"\n", 1)[0].decode("utf-8", errors="replace")
    return Diagnostic.in_file(
        path,
        "E504",
        f"{what} is not UTF-8 text: byte 0x{raw[error.start]:02x} is not UTF-8",
        line=before.count("\n") + 1,
        column=len(before) - start + 1,
        hint="save it as UTF-8",
        source_line=(before[start:] + rest).rstrip("\r"),
    )


def lone_carriage_return(path: str, text: str) -> Diagnostic | None:
    """E504 at the first `\\r` of `text` that no `\\n` follows (an old Mac line ending), or
    None. evaldsl ends lines at `\\n` only and editors (LSP) at a lone `\\r` too, so no
    position after one would be where the editor shows it: such a file is refused.

    >>> d = lone_carriage_return("m.eval", 'case "a"\\r  steps >= 1\\r')
    >>> (d.line, d.column, d.message)
    (1, 9, 'a line ends with a lone carriage return (CR, an old Mac line ending)')
    >>> lone_carriage_return("w.eval", 'case "a"\\r\\n  steps >= 1\\r\\n') is None
    True
    """
    text = text.removeprefix("\ufeff")
    at = text.find("\r")
    while at >= 0 and text.startswith("\r\n", at):
        at = text.find("\r", at + 2)
    if at < 0:
        return None
    start = text.rfind("\n", 0, at) + 1
    return Diagnostic.in_file(
        path,
        "E504",
        "a line ends with a lone carriage return (CR, an old Mac line ending)",
        line=text.count("\n", 0, at) + 1,
        column=at - start + 1,
        hint="save the file with LF or CRLF line endings",
        source_line=text[start:at],
    )


def render(
    diagnostics: Iterable[Diagnostic],
    style: Literal["full", "concise"] = "full",
    *,
    most: int | None = None,
    lift: str = "",
) -> str:
    """Render diagnostics as text, rustc style.

    `concise` gives one line each: `x.eval:3:8: error[E301]: unknown tool "a"`.
    `full` adds the source line, a caret underline and the hint. Messages and hints are
    `abbreviated`. `most`: how many are shown (None: all); a last line says how many more
    were not, and `lift` (how to show them) after it.
    """
    out: list[str] = []
    listed = list(diagnostics)
    rest = listed[most:] if most is not None else []
    for d in listed[:most]:
        # Paths, messages and source lines come from suites: control characters in them
        # are shown as escapes (`\x1b`), never sent to the terminal as they are.
        path = visible(d.path, newlines=False)
        message = visible(abbreviated(d.message), newlines=False)
        hint = visible(abbreviated(d.hint), newlines=False) if d.hint else None
        head = f"{path}:{d.line}:{d.column}: {d.severity}[{d.code}]: {message}"
        if style == "concise":
            out.append(head + (f" ({hint})" if hint else ""))
            continue
        out.append(head)
        if d.source_line:
            gutter = str(d.line)
            pad = " " * len(gutter)
            end = d.end_column if d.end_line == d.line else len(d.source_line) + 1
            shown, column, end = line_window(d.source_line, d.column, end)
            width = max(1, end - column)
            expanded = shown.replace("\t", " ")
            start = max(column - 1, 0)
            before = visible(expanded[:start], newlines=False)
            spanned = expanded[start : start + width]
            under = visible(spanned, newlines=False)
            # (in terminal columns, as the line is shown: a wide character takes two; a
            # span past the line's end, one caret a code point)
            carets = max(columns(under) + width - len(spanned), 1)
            out.append(f"{pad} |")
            out.append(f"{gutter} | {visible(expanded, newlines=False)}")
            out.append(f"{pad} | {' ' * columns(before)}{'^' * carets}")
        if hint:
            pad = " " * len(str(d.line))
            out.append(f"{pad} = hint: {hint}")
    if rest:
        out.append(not_shown(rest) + (f"; {lift}" if lift else ""))
    return "\n".join(out)


def not_shown(rest: Sequence[Diagnostic]) -> str:
    """The line that stands for diagnostics not printed.

    >>> not_shown([Diagnostic.in_file("a.eval", "E101", "x")] * 2)
    '… 2 more diagnostics not shown (2 errors, 0 warnings)'
    """
    s = "s" if len(rest) != 1 else ""
    return f"… {len(rest):,} more diagnostic{s} not shown ({counted(rest)})"


def counted(diagnostics: Sequence[Diagnostic]) -> str:
    """How many errors and warnings there are: `1,200 errors, 1 warning`."""
    errors = sum(1 for d in diagnostics if d.is_error)
    others = len(diagnostics) - errors
    return (
        f"{errors:,} error{'s' if errors != 1 else ''}, "
        f"{others:,} warning{'s' if others != 1 else ''}"
    )


def to_json(diagnostics: Iterable[Diagnostic]) -> str:
    """The JSON array `check --format json` prints."""
    return json.dumps([d.to_json() for d in diagnostics], indent=2, ensure_ascii=False)
