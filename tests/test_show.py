"""How a message shows a value (`values.show`): a long text is written only as far as it
is shown, and shows as the whole text written and then cut would."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from evaldsl.language.values import show
from tests.fuzzing import examples

texts = st.one_of(
    st.text(alphabet=st.characters(max_codepoint=127), max_size=300),  # ASCII, controls too
    st.text(max_size=300),
    st.text(alphabet=st.sampled_from(['"', "\\", "\n", "\x00", "a", "é"]), max_size=200),
)


def _cut(whole: str, limit: int) -> str:
    return whole if len(whole) <= limit else whole[: limit - 1] + "…"


@settings(max_examples=examples(400), deadline=None)
@given(texts, st.integers(2, 120))
@example("a" * 100 + "\ud800", 80)  # a lone surrogate past what is shown: the whole fails
@example('"' * 100, 80)
@example("a" * 79, 80)
@example("a" * 81, 80)
def test_a_text_shows_as_the_whole_text_written_and_cut(text: str, limit: int) -> None:
    whole = show(text, 10 * len(text) + 100)  # (written whole: nothing cut)
    assert show(text, limit) == _cut(whole, limit)
