"""Limits: every bound evaldsl puts on what it reads, in one place.

Takes nothing: it declares the limits (README, "Limits", lists each with its reason) and
gives the small checks the stages share, so a limit crossed anywhere is said the same way,
as a diagnostic or a `RunError`, never as a traceback or an exhausted machine:

- `nesting_problem(depth)`: text for a value or an assertion nested deeper than allowed;
- `integer_problem(text)`, `finite_problem(value, what)`: numbers written in DSL text;
- `timeout_problem(seconds)`: the meaning of `timeout` (more than 0, at most a day);
- `json_depth(value, limit)`: how deep a decoded JSON value goes, without recursion;
- `clip_value(value)`: a value fit for a report (nesting cut at `REPORT_DEPTH`, long
  lists, objects and texts at `REPORT_ITEMS` and `REPORT_CHARS`, `REPORT_VALUES` in all).

    >>> timeout_problem(0.0)
    'a timeout must be more than 0 s'
    >>> json_depth([[1], {"a": [2]}], 10)
    3
"""

from __future__ import annotations

import itertools
import math
from typing import Any

# ---- text the user writes -----------------------------------------------------------------

#: Nesting of DSL text (lists, objects, `not`, `and`/`or`), of JSON and YAML values in
#: suites: deeper than any real suite, far below what would exhaust Python's stack.
MAX_NESTING = 200

#: Integer literals (values, counts, `answer[N]`): a signed 64-bit integer, the range JSON
#: producers write; a longer literal is a typo or an attack, never a count.
MAX_INTEGER = 2**63 - 1

#: `timeout` of a `run` target: more than 0 s and at most a day.
MAX_TIMEOUT_SECONDS = 86_400.0

#: A suite file (`.eval`, YAML, JSON) or a dataset: read whole, so bounded.
MAX_SUITE_BYTES = 64 * 1024 * 1024

#: YAML aliases: a suite whose values, with every alias expanded, hold more nodes than this
#: beyond the nodes written is refused (an alias bomb is a few lines that expand to billions).
MAX_YAML_NODES = 1_000_000

# ---- runs ---------------------------------------------------------------------------------

#: A trace, state or log read as one JSON document.
MAX_DOCUMENT_BYTES = 256 * 1024 * 1024

#: One line of a JSONL trace (a cassette, an event or span file): read in one piece, so
#: bounded like a whole document. (A file no larger than this is read at C speed, a line
#: at a time, with no check at all: no line of it can be longer.)
MAX_LINE_BYTES = MAX_DOCUMENT_BYTES

#: JSON nesting that the decoder accepts in traces (orjson's own limit, stated here).
MAX_TRACE_NESTING = 1024

#: Values one JSONPath's evaluation may find in one value, counting those it finds between
#: its steps and each value a `..` walks over: a `..` after another walks again under every
#: value the one before found, so `$..*..*..*` on an answer nested 150 levels deep finds
#: 551,300 (4.7 s, 270 MB) and one more `..*` runs for hours. jsonpath-ng takes 4-6 µs a
#: value counted: a million would be crossed after 4-6 s, this many after 1-1.5 s (58 MB).
#: Only paths whose values can multiply are counted (two `..` or more, `parent`): a path of
#: plain steps or of one `..` finds each value about once, however large the value.
MAX_PATH_VALUES = 250_000

# ---- reports ------------------------------------------------------------------------------

#: Found and expected values in reports keep this many levels; deeper ones are cut.
REPORT_DEPTH = 64

#: ... and this many entries of one list or object, this many characters of one text, and
#: this many values in all; the rest is cut, saying how much. A found value can be as
#: large as the run (`tools` finds every call's name, `answer` a whole answer): kept
#: whole, 186 cases of a 4 MB recording wrote an 82 MB JSON report, and measuring those
#: values for the depth cut was a quarter of the run.
REPORT_ITEMS = 100
REPORT_CHARS = 10_000
REPORT_VALUES = 10_000


# ---- the judge ----------------------------------------------------------------------------

#: The body of one judge reply; a longer one is an error (an endless body never fills memory).
MAX_JUDGE_REPLY_BYTES = 1024 * 1024

#: A judge cache file; a larger one is not a verdict.
MAX_JUDGE_CACHE_BYTES = 1024 * 1024

# ---- the language server ------------------------------------------------------------------

#: One message to the language server (its `Content-Length`).
MAX_LSP_MESSAGE_BYTES = 64 * 1024 * 1024

#: A file the language server reads for hover or completion (a cassette, a state).
MAX_LSP_FILE_BYTES = 16 * 1024 * 1024


def nesting_problem(what: str = "this") -> str:
    """The message for text nested deeper than `MAX_NESTING`."""
    return f"{what} is nested more than {MAX_NESTING} levels deep (the limit)"


def integer_problem(text: str) -> str | None:
    """Why an integer literal is out of range, or `None` when it is fine.

    Decided on the digits, so a literal of a million digits costs nothing to refuse.

    >>> integer_problem("42") is None, integer_problem("-9223372036854775807") is None
    (True, True)
    >>> integer_problem("9223372036854775808")
    'the integer 9223372036854775808 is out of range (at most 19 digits: ±9223372036854775807)'
    """
    digits = text.lstrip("+-")
    if len(digits) < 19 or (len(digits) == 19 and int(digits) <= MAX_INTEGER):
        return None
    return f"the integer {_shown(text)} is out of range (at most 19 digits: ±{MAX_INTEGER})"


#: How evaldsl writes Infinity (`evaldsl convert` turns YAML's `.inf` into it): the one
#: decimal literal allowed past a 64-bit float, as in JavaScript, where `1e999` is Infinity.
INFINITY_SPELLING = "1e999"


def finite_problem(value: float, text: str) -> str | None:
    """Why a number written as `text` is out of range: it overflowed to infinity, or
    digits that are not all zero underflowed to 0 (`1e-400`: a comparison with 0 the
    user never wrote), or `None` when it is fine.

    >>> finite_problem(0.0, "0e-400") is None, finite_problem(5e-324, "5e-324") is None
    (True, True)
    >>> finite_problem(0.0, "-1e-400")[:60]
    'the number -1e-400 is out of range (nearer 0 than a 64-bit f'
    """
    if value:  # (0.0 is the one value an underflow gives)
        if math.isfinite(value):
            return None
        return f"the number {_shown(text)} is out of range (larger than a 64-bit float holds)"
    # the digits before an exponent (`$`, a unit and a sign hold none of 1-9)
    if not any(c in "123456789" for c in text.lower().partition("e")[0]):
        return None
    return (
        f"the number {_shown(text)} is out of range (nearer 0 than a 64-bit float holds: "
        "it would read as 0); write 0, or a number whose size a double holds (at least "
        "5e-324)"
    )


def _shown(text: str) -> str:
    """A literal as a message shows it: a long one cut in the middle."""
    return text if len(text) <= 40 else text[:20] + "…" + text[-5:]


def timeout_problem(seconds: float) -> str | None:
    """Why a `timeout` is not usable, or `None`: it must be more than 0 s and at most a day.

    >>> timeout_problem(30.0) is None, timeout_problem(-1.0), timeout_problem(math.inf)
    (True, 'a timeout must be more than 0 s', 'a timeout must be at most 86400 s (a day)')
    """
    if math.isnan(seconds) or seconds <= 0:
        return "a timeout must be more than 0 s"
    if seconds > MAX_TIMEOUT_SECONDS:
        return f"a timeout must be at most {MAX_TIMEOUT_SECONDS:g} s (a day)"
    return None


def json_depth(value: Any, limit: int) -> int:
    """How many levels of lists and objects `value` has, counting no further than `limit + 1`.

    Iterative, so a value of any depth is measured without touching Python's stack.
    """
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        depth += 1
        if depth > deepest:
            deepest = depth
            if deepest > limit:
                return deepest
        stack.extend((child, depth) for child in children)
    return deepest


def clip_value(value: Any, depth: int = REPORT_DEPTH) -> Any:
    """`value` cut to what a report keeps: a list or object deeper than `depth` levels
    replaced by a text saying so, a list or object past `REPORT_ITEMS` entries and a text
    past `REPORT_CHARS` characters cut (saying how many more there were), and past
    `REPORT_VALUES` values in all, the rest shown as `…`.

    The value itself when it is within the bounds (the common case costs one walk of at
    most `REPORT_VALUES` values, however large the value is). Without recursion, so any
    depth a trace can hold is clipped safely.

    >>> clip_value([[["x"]]], 2)
    [['… (nested deeper than 2 levels)']]
    >>> clip_value(list(range(102)))[-2:]
    [99, '… (2 more items)']
    """
    if _within_bounds(value, depth):
        return value
    cut = f"… (nested deeper than {depth} levels)"
    budget = REPORT_VALUES
    root: list[Any] = [None]
    # (source value, the container to put its copy in, the key or index there, its level);
    # children are pushed last first, so the budget goes to the first ones
    stack: list[tuple[Any, Any, Any, int]] = [(value, root, 0, 0)]
    while stack:
        item, into, key, level = stack.pop()
        budget -= 1
        if budget < 0:
            into[key] = "…"
        elif isinstance(item, str):
            into[key] = _clipped_text(item)
        elif isinstance(item, dict | list | tuple):
            if level >= depth:
                into[key] = cut
                continue
            if isinstance(item, dict):
                keys = list(itertools.islice(item, REPORT_ITEMS))
                copy: Any = dict.fromkeys(keys)
                stack.extend((item[k], copy, k, level + 1) for k in reversed(keys))
                if len(item) > len(keys):
                    copy[f"… ({len(item) - len(keys):,} more keys)"] = "…"
            else:
                kept = min(len(item), REPORT_ITEMS)
                copy = [None] * kept
                stack.extend((item[i], copy, i, level + 1) for i in range(kept - 1, -1, -1))
                if len(item) > kept:
                    copy.append(f"… ({len(item) - kept:,} more items)")
            into[key] = copy
        else:
            into[key] = item
    return root[0]


def _within_bounds(value: Any, depth: int) -> bool:
    """Whether `clip_value` would keep `value` as it is; walks at most `REPORT_VALUES`
    values (a longer list or object fails at its length, before its entries are read)."""
    left = REPORT_VALUES
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, level = stack.pop()
        left -= 1
        if isinstance(item, str):
            if len(item) > REPORT_CHARS:
                return False
        elif isinstance(item, dict | list | tuple):
            if level >= depth or len(item) > REPORT_ITEMS or len(item) + len(stack) > left:
                return False
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, level + 1) for child in children)
    return True  # (the budget is checked as each list or object is opened)


def _clipped_text(text: str) -> str:
    if len(text) <= REPORT_CHARS:
        return text
    return f"{text[:REPORT_CHARS]}… ({len(text) - REPORT_CHARS:,} more characters)"
