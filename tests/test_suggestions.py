"""`did_you_mean` gives what `difflib.get_close_matches` (then the case-blind fallback)
gives on the same candidates: it passes difflib only the candidates that survive
difflib's own cheap bounds, which must never change the answer."""

from __future__ import annotations

import difflib

from hypothesis import given, settings
from hypothesis import strategies as st

from evaldsl.language.diagnostics import did_you_mean, forget_suggestions
from tests.fuzzing import examples

LETTERS = "abcdeAB_1é"
words = st.text(alphabet=LETTERS, max_size=9)


def reference(word: str, candidates: list[str], cutoff: float) -> str | None:
    pool = sorted(set(candidates))
    if not pool:
        return None
    found = difflib.get_close_matches(word, pool, n=1, cutoff=cutoff)
    if found:
        return found[0]
    return {c.lower(): c for c in pool}.get(word.lower())


@settings(max_examples=examples(3000), deadline=None)
@given(
    words,
    st.lists(words, max_size=10),
    st.sampled_from([0.0, 0.5, 0.6, 0.75, 0.8, 1.0]),
    st.booleans(),
)
def test_same_as_difflib(word: str, candidates: list[str], cutoff: float, near: bool) -> None:
    if near and candidates:  # a misspelling of a candidate: one letter changed
        base = candidates[len(word) % len(candidates)]
        if base:
            at = len(word) % len(base)
            word = base[:at] + word[:1] + base[at + 1 :]
    forget_suggestions()
    assert did_you_mean(word, candidates, cutoff) == reference(word, candidates, cutoff)


def test_examples() -> None:
    forget_suggestions()
    assert did_you_mean("caled", ["called", "times"]) == "called"
    assert did_you_mean("get_wether", ["get_weather", "search_web"], 0.8) == "get_weather"
    assert did_you_mean("format_disk_29", ["get_weather", "search_web"], 0.8) is None
    assert did_you_mean("GET_WEATHER", ["get_weather"], 0.99) == "get_weather"  # case-blind
    assert did_you_mean("", [""]) == ""


@settings(max_examples=examples(200), deadline=None)
@given(st.text(alphabet="t0123_x", max_size=6), st.integers(1, 400))
def test_same_as_difflib_among_many_names_of_one_shape(word: str, size: int) -> None:
    """Many candidates whose bounds tie (`t017`, `t071`, `t107` share their letters): the
    scoring from the highest bound down stops only below the best ratio, and a tie of
    ratios goes to the greatest name, as difflib's does."""
    pool = [f"t{i:03d}" for i in range(size)]
    forget_suggestions()
    assert did_you_mean(word, pool) == reference(word, pool, 0.6)
    assert did_you_mean(word, pool, 0.8) == reference(word, pool, 0.8)
