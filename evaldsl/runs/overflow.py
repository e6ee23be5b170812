"""Tests of a tool's calls past those a generated pass writes out, fed by key.

A generated pass (`codegen.py`) writes out the code of each group of tests (one path of
one tool's arguments or results), so its source, and the memory Python's compiler takes
to compile it, grow with the distinct paths of a case (4,000 paths: ~290,000 lines and
~1 GB). Past `GROUPS_WRITTEN` groups, the groups whose path starts with a plain key and
whose tests are any-call tests (not `every`) are fed here instead, as data: `start`
gives their state for one run, keyed by that first key; `feed` gives one call's
arguments (or one result) to the groups of the keys it has (it costs its keys, not the
groups: a value without a group's key finds nothing on its path, which decides nothing
for an any-call test); `tallies` fills their tallies at the end. Each group keeps what a
written group keeps (the values found while it is open, the first `SAMPLE` of them) and
each test the call and values that decided it, in the pass's `dec`; its values are
found as the reference finds them (a plain key of exactly a `dict`, as `CallProbe`'s
`feed_field`; any other path by its finder).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from evaldsl.runs.index import SAMPLE, Tally

#: A pass writes out at most this many groups; the rest that can be fed by key are fed
#: here (`tests/test_codegen.py` sets it lower to hold this to the reference).
GROUPS_WRITTEN = 256

#: One group as the pass's namespace holds it: its first key, its plain key (a path of
#: that key alone) or None, its finder, and its tests (each its index in `dec`, its test
#: of one value, and its probe, whose tally it fills).
Spec = tuple[str, str | None, Callable[[Any], list[Any]], tuple[tuple[int, Any, Any], ...]]


class Group:
    """One group's state in one run."""

    __slots__ = ("finder", "found", "key", "probes", "sample", "tests")

    def __init__(self, spec: Spec) -> None:
        _, self.key, self.finder, tests = spec
        self.tests = [(j, test) for j, test, _ in tests]  # the tests still open
        self.probes = tuple((j, probe) for j, _, probe in tests)
        self.found = 0
        self.sample: list[Any] = []


def start(specs: tuple[Spec, ...]) -> tuple[dict[str, list[Group]], list[Group]]:
    """The groups of one tool for one run: the open ones by their first key, and all."""
    groups = [Group(spec) for spec in specs]
    by_key: dict[str, list[Group]] = {}
    for spec, group in zip(specs, groups, strict=True):
        by_key.setdefault(spec[0], []).append(group)
    return by_key, groups


def feed(
    args: dict[Any, Any], by_key: dict[str, list[Group]], count: int, dec: dict[int, Any]
) -> int:
    """Feed one call's arguments or one result (a dict: a value's path starts with a
    key) to the open groups of the keys it has; `count` is its number among those fed
    (the call a test decided at). Gives how many groups closed (all tests decided)."""
    closed = 0
    for k in args:
        groups = by_key.get(k)
        if groups is None:
            continue
        for group in groups:
            if group.key is not None:  # as `feed_field`: exactly a dict, and the key
                vals = [args[group.key]] if type(args) is dict else []
            else:
                vals = group.finder(args)
            if not vals:
                continue
            group.found += len(vals)
            room = SAMPLE - len(group.sample)
            if room > 0:
                group.sample.extend(vals[:room])
            left = []
            for j, test in group.tests:
                if any(test(v) for v in vals):
                    dec[j] = (count, vals)
                else:
                    left.append((j, test))
            group.tests = left
        still = [group for group in groups if group.tests]
        if len(still) < len(groups):
            closed += len(groups) - len(still)
            if still:
                by_key[k] = still
            else:
                del by_key[k]
    return closed


def tallies(
    groups: list[Group],
    into: dict[Any, Tally],
    dec: dict[int, Any],
    count: int,
    make_tally: Callable[..., Tally],
) -> None:
    """Each test's tally, as a written group's (`count`: its tool's calls)."""
    for group in groups:
        for j, probe in group.probes:
            into[probe] = make_tally(dec.get(j), count, group.found, group.sample, False)
