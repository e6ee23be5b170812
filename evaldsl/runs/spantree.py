"""Which spans of an OTel file count: each span once, each model call once.

Takes the spans of a file (`otel.Span`, as either OTel reader makes them, each with its
`key`, (traceId, spanId), and its `parent`, (traceId, parentSpanId), or `None` when it
does not write them) and gives:

- `unrepeated`: the spans without those exported again. One span written twice (a batch
  exported again, two exports of one run put together) is read once and the copies are
  counted; two different spans under one traceId and spanId are a `BadValue` (which of
  them happened cannot be told, and reading both would count a call twice);
- `wrappers`: the LLM spans that have another LLM span under them (by the parentSpanId
  chain): a framework's span around the provider's own call (LangChain's `ChatOpenAI`
  over the OpenAI instrumentor's `ChatCompletion`) is one model call, and the innermost
  span is the one that counts (the request the provider answered and billed; a wrapper
  around retries would count once what was billed twice). Each span's nearest LLM span
  above it is found once and kept, so a file is read in time linear in its spans.
"""

from __future__ import annotations

from collections.abc import Sequence, Set
from itertools import compress, repeat
from operator import attrgetter, eq
from typing import Any, Protocol, TypeVar

from evaldsl.runs.providers import BadValue


class Span(Protocol):
    """What is read of an `otel.Span` here (named so to keep `otel` out of this module's
    imports: it imports this one)."""

    name: str
    attrs: dict[str, Any]
    start_text: Any
    end_text: Any
    events: list[dict[str, Any]]
    failed: bool
    status_message: str | None
    kind: str | None
    key: tuple[str, str] | None
    parent: tuple[str, str] | None


S = TypeVar("S", bound=Span)

#: How `inspect` counts what these leave out.
REPEATED = "spans exported again (the same traceId and spanId, the same span)"
WRAPPER = "LLM spans around another LLM span (one model call: the inner span counts)"


def unrepeated(spans: list[S]) -> tuple[list[S], int, Set[Any]]:
    """`spans` without the copies of a span read before (in file order), how many copies
    were left out, and the keys read (for `wrappers`); a different span under a key read
    before is a `BadValue`."""
    seen: dict[Any, S] = dict(zip([span.key for span in spans], spans, strict=True))
    unkeyed = seen.pop(None, None) is not None
    if len(seen) == len(spans) or (unkeyed and len(seen) + _unkeyed(spans) == len(spans)):
        return spans, 0, seen.keys()  # (no key twice: the common case, made in C)
    seen.clear()
    kept: list[S] = []
    for span in spans:
        key = span.key
        if key is None:
            kept.append(span)
            continue
        first = seen.setdefault(key, span)
        if first is span:
            kept.append(span)
        elif _written(first) != _written(span):
            raise BadValue(
                f'span "{span.name}" (traceId {key[0]}, spanId {key[1]}) is written twice, '
                f'differently (the first is named "{first.name}"): which of them happened '
                "cannot be told; export each span once"
            )
    return kept, len(spans) - len(kept), seen.keys()


def _unkeyed(spans: Sequence[Span]) -> int:
    """How many of `spans` have no key."""
    return sum(1 for span in spans if span.key is None)


def _written(span: Span) -> tuple[Any, ...]:
    """What a span says, its attributes' values decoded (the two readers keep them
    differently: the typed one undecoded until read)."""
    return (
        span.name,
        span.start_text,
        span.end_text,
        span.failed,
        span.status_message,
        span.kind,
        span.parent,
        _values(span.attrs),
        [(e.get("name"), _values(e.get("attrs"))) for e in span.events],
    )


def _values(attrs: Any) -> Any:
    """Attributes as plain values (`RawAttrs` decodes each on reading it); a value that
    cannot be read is `UNREADABLE` (it is the run's error only where a reader reads it,
    and it is read here only to compare: two copies unreadable alike are the same)."""
    if not isinstance(attrs, dict):
        return attrs
    values = {}
    for key in attrs:
        try:
            values[key] = attrs[key]
        except ValueError:  # (an `AnyValue` of no known kind; JSON the typed decoder skipped)
            values[key] = UNREADABLE
    return values


#: What `_values` gives for a value that cannot be read.
UNREADABLE = object()
_PARENT = attrgetter("parent")


def wrappers(spans: Sequence[Span], kinds: Sequence[str], keys: Set[Any]) -> set[int]:
    """The positions in `spans` of the LLM spans (`kinds[i] == "llm"`) with another LLM
    span under them (see the module doc); `keys`: the spans' keys (`unrepeated`'s)."""
    # No LLM span's parent is in the file in most files (of flat calls, or of spans whose
    # parents were exported elsewhere): told in C first, as looking at each LLM span's
    # parent in a loop of bytecode was ~1% of reading a file of 14,000 spans.
    llm = compress(spans, map(eq, kinds, repeat("llm")))
    if keys.isdisjoint(map(_PARENT, llm)):
        return set()
    under = [i for i, kind in enumerate(kinds) if kind == "llm" and spans[i].parent in keys]
    at = {span.key: i for i, span in enumerate(spans) if span.key is not None}
    above: dict[int, tuple[int | None, bool]] = {}
    found: set[int] = set()
    for i in under:
        outer, ends = _above(at[spans[i].parent], spans, kinds, at, above)  # type: ignore[index]
        # (parents that loop make no tree: no span of the loop is under another, and
        # none is left out)
        if outer is not None and ends:
            found.add(outer)
    return found


def _above(
    i: int,
    spans: Sequence[Span],
    kinds: Sequence[str],
    at: dict[tuple[str, str], int],
    above: dict[int, tuple[int | None, bool]],
) -> tuple[int | None, bool]:
    """The LLM span nearest at or above span `i` (its position, or `None`), and whether
    its chain of parents ends (at a span whose parent is not in the file) rather than
    loops. What is found for each span on the way up is kept in `above`, so each span
    is walked past once in a file."""
    path: list[int] = []
    on_path: set[int] = set()
    while True:
        if i in above:
            outer, ends = above[i]
            break
        if i in on_path:
            outer, ends = None, False
            break
        path.append(i)
        on_path.add(i)
        parent = spans[i].parent
        j = at.get(parent) if parent is not None else None
        if j is None:
            outer, ends = None, True
            break
        i = j
    for k in reversed(path):  # (from the top down: each span's nearest at or above it)
        if kinds[k] == "llm":
            outer = k
        above[k] = outer, ends
    return above[path[0]] if path else (outer, ends)
