"""Indexing a run with its generated pass: what `evaluate` and the runner call.

Takes a `Run` and a case's `Needs` and gives the `RunFacts` `index.index_run` gives,
faster: the events go through the pass generated for those needs (`codegen.py`, made
once per needs and kept on them); a streamed recording of 1 MiB or more (any, once the
process has decoded 3 MiB of them in full: `decodes_typed`) is decoded by
the typed decoder of the fields that pass reads (`decode.py`): first each event kind into
a struct of the fields read of that kind (`decode.kind_events`), and where a kind has no
struct of its own (an `mcp.call`, a kind unknown here), again into dicts of every field
read of any kind (`decode.typed_events`). Whatever the fast path
cannot take — a line that is not an event object, text that is not UTF-8, an event
`type` that is not text — is handed to the reference pass (`index.py`), which reads the
file in full and reports the problem with its line and column, exactly as before: the
fast path can make a run quicker, never make an error a pass.

`EVALDSL_REFERENCE=1` in the environment makes every run use the reference pass (to
compare, or to rule the generated code out when looking for a bug).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

import orjson

from evaldsl.bounded import keep, keep_weighed
from evaldsl.runs.cassette import EventStream
from evaldsl.runs.decode import Undecodable, kind_events, raw_type, typed_batches
from evaldsl.runs.index import Needs, RunFacts, TraceFacts, index_events
from evaldsl.runs.index import index_run as reference_index_run
from evaldsl.runs.model import Run

if TYPE_CHECKING:
    from evaldsl.runs.codegen import IndexPass


class TooLarge(Exception):
    """A generated pass Python's compiler could not take (it nests or runs too deep: a
    `RecursionError` or `MemoryError` while compiling it, or a `SyntaxError` of one of its
    limits, such as "too many statically nested blocks"); the run goes to the reference
    pass, as any run the fast path cannot take does."""


#: Fields every pass reads: the event's kind and a call's tool name.
BASE_FIELDS = frozenset({"type", "name", "tool"})


#: From this size on a streamed recording is decoded by the typed decoder (below it,
#: importing msgspec would cost more than decoding every field saves) ...
TYPED_FROM = 1 << 20
#: ... and so is every recording, once this process has decoded this many bytes of
#: recordings in full (a run of many small recordings). Once set up, typed decoding
#: reads a recording of 12 KiB to 1 MiB 1.1-2x as fast (one of 0.94 MiB: 10.3 ms whole,
#: 5.0 typed; `speed.py`'s -j cassettes), and setting it up (msgspec's import, a pass and
#: a decoder of its own) cost ~13 ms, about what decoding 2.5-3 MiB in full costs beyond
#: typed decoding: renting until the rent paid equals the price, then buying, never
#: costs more than twice the best choice made knowing the future (ski rental). A run
#: that knows it will read that much sets it up at once (`will_read`).
TYPED_AFTER = 3 << 20
_READ_WHOLE = [0]  # the bytes of recordings this process decoded in full


def decodes_typed(size: int) -> bool:
    """Whether a streamed recording of `size` bytes is to be decoded by the typed decoder
    (`TYPED_FROM`, `TYPED_AFTER`); one that is not is counted as decoded in full."""
    if size >= TYPED_FROM or _READ_WHOLE[0] >= TYPED_AFTER:
        return True
    _READ_WHOLE[0] += size
    return False


def will_read(size: float) -> None:
    """A run is about to read recordings of `size` bytes in all: from `TYPED_AFTER` on,
    the typed decoder is loaded now and decodes every one of them (no MiB decoded in full
    first). Called before forking `-j` workers, which then share it."""
    if size >= TYPED_AFTER:
        _READ_WHOLE[0] = max(_READ_WHOLE[0], TYPED_AFTER)
        raw_type()  # (loads msgspec)


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return TYPED_FROM  # the typed path reports the error as the reference would


#: Below this size (a streamed recording) or this many events (a list), a case is indexed
#: by the reference pass until its needs have a generated pass or have met
#: `GENERATE_AFTER` such runs: making a pass (its source and `compile`: ~3 ms for six
#: mixed statements, and the generator's import the first time) costs more than it saves
#: on a few thousand events (the generated pass saves ~0.1-0.7 µs an event, by the needs),
#: while a suite whose cases repeat their assertions makes it once for all of them.
GENERATE_FROM = 512 << 10
GENERATE_FROM_EVENTS = 2000
GENERATE_AFTER = 8
#: ... and from this many events times `args`/`result` tests (an upper bound of the
#: calls the reference feeds to its tests one by one: ~0.2-1 µs each) a small run goes
#: through the generated pass too, which decides many tests on one path together and
#: costs ~3 ms and ~25 µs a test to make: 1,000 tests over 500 calls took the reference
#: 0.52 s, their pass 27 ms, made and run.
GENERATE_FROM_TESTS = 64_000
#: Small runs indexed, by the hash of their needs' key: the key itself holds the needs'
#: probes (their tests, finders and code fragments: ~25 kB for a case of 250 mixed assertions),
#: and 4,096 keys kept every probe of the last 4,096 cases alive long after their programs
#: were gone (~100 MB in a process checking large programs). A hash holds nothing; two
#: needs of one hash (a probe's `id` is reused once it is freed) only share a count, which
#: decides when a pass is generated, never what the run finds.
_SMALL_RUNS: dict[int, int] = {}
_MAX_SMALL_RUNS = 4096


def _generates(needs: Needs, events: int) -> bool:
    """Whether a small run of `needs`, of about `events` events, goes through the
    generated pass (see above)."""
    if needs.passes or events * len(needs.probes) >= GENERATE_FROM_TESTS:
        return True
    key = needs.key()
    if _shared_key(False, False, key) in _SHARED:  # (a small run's pass: `pass_for`'s)
        return True
    counted = hash(key)
    seen = _SMALL_RUNS.get(counted, 0) + 1
    keep(_SMALL_RUNS, counted, seen, _MAX_SMALL_RUNS)
    return seen >= GENERATE_AFTER


def purge() -> None:
    """Forget the passes made, the small runs counted and the bytes decoded in full (as
    `re.purge` does its cache): the next run of any needs starts as the first one did."""
    _SHARED.clear()
    _SMALL_RUNS.clear()
    _READ_WHOLE[0] = 0


def reference_only() -> bool:
    """Whether `EVALDSL_REFERENCE` asks for the reference pass."""
    return os.environ.get("EVALDSL_REFERENCE", "") not in ("", "0")


def read_fields(needs: Needs) -> frozenset[str]:
    """The event fields a pass for `needs` reads."""
    fields = set(BASE_FIELDS)
    keep = bool(needs.tool_detail or needs.tool_results)
    on_args = any(not p.on_result for p in needs.probes)
    on_results = any(p.on_result for p in needs.probes)
    if on_args:
        fields |= {"arguments", "args", "input"}
    if on_results or keep:
        fields.add("result")  # an `mcp.call`'s own result
    if on_results or needs.tool_results:
        fields |= {"callId", "id", "output"}  # results name their calls
    if needs.tokens or needs.cost:
        fields |= {"usage", "tokensIn", "tokensOut", "output"}  # (usage may sit in output)
        fields |= {"id", "requestId"}  # which request each response answers
    if needs.answers or needs.answer_tail or needs.held:
        fields.add("output")  # (`held`: whether a response holds a call, `heldcalls`)
    if needs.answers or needs.answer_tail:
        fields.add("rawBody")  # (a stream traceplay kept only there: `rawbody`)
    if keep:
        fields.add("isError")
    if needs.cost:
        fields.add("model")
    if needs.times:
        fields.add("at")
    return frozenset(fields)


#: The passes generated in this process, by the key of their needs (`Needs.key`): the
#: cases of a suite that repeat their assertions (`each` rows, datasets, a case per
#: recording) have equal needs, and one pass serves them all. Generating one was ~0.35 ms
#: of each such case. Bounded by the size of their sources, not their number: a pass
#: holds ~5-7 bytes a character of its source (the text, its code, the function), ~30 kB
#: for a case of three assertions, ~0.5 MB for one of 250 mixed ones, ~2 MB for 250 `args`
#: tests; the 256 last passes held up to ~120 MB (~500 MB). `_SHARED_SOURCE` characters
#: hold ~3 MB: ~100 passes of cases of three assertions, ~40 of ten.
_SHARED: dict[tuple[Any, ...], IndexPass] = {}
_SHARED_SOURCE = 512 << 10


def _source_size(key: tuple[Any, ...], made: IndexPass) -> int:
    """A kept pass's weight in `_SHARED`: its source's length."""
    return len(made.source)


def _shared_key(raw: bool, by_kind: bool, needs_key: tuple[Any, ...]) -> tuple[Any, ...]:
    """The key of a pass in `_SHARED`: its variant and its needs' key."""
    return (raw, by_kind, needs_key)


def pass_for(needs: Needs, *, raw: bool, by_kind: bool = False) -> IndexPass:
    """The generated pass for `needs`, made once for needs of equal keys and kept on them
    (`raw`: for the typed decoder's dicts; `by_kind`: for its structs of each kind)."""
    key = (raw, by_kind, needs.times, needs.cost, needs.tokens, needs.tool_sequence)
    made = needs.passes.get(key)
    if made is None:
        shared = _shared_key(raw, by_kind, needs.key())
        made = _SHARED.get(shared)
        if made is None:
            # the generator is loaded by the first run that needs it, not at start
            from evaldsl.runs.codegen import generate

            try:
                generated = generate(
                    needs,
                    raw=raw,
                    raw_type=raw_type() if raw or by_kind else None,
                    by_kind=by_kind,
                )
            except (RecursionError, MemoryError, SyntaxError) as err:
                raise TooLarge(f"the generated pass did not compile: {err}") from None
            made = keep_weighed(_SHARED, shared, generated, _source_size, _SHARED_SOURCE)
        needs.passes[key] = made
    return made


#: The events of a list a small stream's are decoded into at a time (`batches`).
BATCH = 4096


def batches(events: Iterable[Any]) -> Iterator[list[Any]]:
    """`events` in lists of `BATCH`, as a generated pass takes a stream (`codegen`'s
    `counting`: it counts a stream's events by its lists' lengths)."""
    rest = iter(events)
    return iter(lambda: list(itertools.islice(rest, BATCH)), [])


def index_events_fast(events: Iterable[dict[str, Any]], needs: Needs) -> TraceFacts:
    """`index.index_events`, through the generated pass where it can go (a small run,
    until its needs are met often enough, through the reference: `GENERATE_FROM`)."""
    if reference_only():
        return index_events(events, needs)
    if isinstance(events, EventStream):
        size = _size(events.path)
        # (its events, guessed from its size as the two bounds relate them)
        if size < GENERATE_FROM and not _generates(
            needs, size * GENERATE_FROM_EVENTS // GENERATE_FROM
        ):
            return index_events(events, needs)
        try:
            if not decodes_typed(size):  # small: decoded whole, msgspec not loaded
                with events.fast() as lines:
                    return pass_for(needs, raw=False).run(batches(lines), events.__iter__, False)
            try:
                by_kind = pass_for(needs, raw=True, by_kind=True)
                with kind_events(events, by_kind.reads) as decoded:
                    return by_kind.run(decoded, events.__iter__, False)
            except (Undecodable, TypeError, AttributeError):
                pass  # a kind without a struct, or anything odd: into dicts, then the reference
            with typed_batches(events, read_fields(needs)) as decoded:
                return pass_for(needs, raw=True).run(decoded, events.__iter__, False)
        except (Undecodable, orjson.JSONDecodeError, TypeError, AttributeError, TooLarge):
            return index_events(events, needs)  # the careful reader: names the bad line
    if isinstance(events, list):
        if len(events) < GENERATE_FROM_EVENTS and not _generates(needs, len(events)):
            return index_events(events, needs)
        try:
            return pass_for(needs, raw=False).run(events, None, True)
        except (TypeError, AttributeError, TooLarge):
            return index_events(events, needs)  # says which element is not an event
    return index_events(events, needs)


def index_run(run: Run, needs: Needs) -> RunFacts:
    """`index.index_run` with the generated pass (may raise `RunError`)."""
    return reference_index_run(run, needs, index_events_fast)
