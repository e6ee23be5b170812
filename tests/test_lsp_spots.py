"""The statement under an editor's cursor, found by a search in the cuts of the buffer made
once a version (`evaldsl/tools/lsp/analysis.py`, `EvalCuts`), is the one a walk over every
statement finds (what each request did), at every position of varied buffers."""

from __future__ import annotations

from bisect import bisect_right

from hypothesis import given, settings
from hypothesis import strategies as st

from evaldsl.syntax.recovery import split_statements
from evaldsl.tools.lsp.analysis import Analysis, EvalCuts, Spot
from evaldsl.tools.lsp.documents import line_starts

PIECES = [
    "answer contains 'x'",
    "; ",
    ";",
    "\n",
    "\n\n",
    'case "a"\n',
    "  tool search called",
    "steps <= [1,\n2]",
    "tools [a, b",
    " ",
    "# a comment\n",
    "/re;x/",
    '"te;xt"',
    "{a: 1}",
]


def walked(text: str, line0: int, column0: int) -> Spot | None:
    """The reference: the first statement whose range holds the cursor's offset."""
    starts = line_starts(text)
    if line0 >= len(starts):
        return None
    line_end = starts[line0 + 1] - 1 if line0 + 1 < len(starts) else len(text)
    offset = min(starts[line0] + column0, line_end)
    for s, e in split_statements(text):
        if s <= offset <= e:
            line = bisect_right(starts, s) - 1
            return Spot(text[s:e], offset - s, line, s - starts[line], "file")
    return None


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=14))
def test_the_spot_searched_is_the_spot_walked(pieces: list[str]) -> None:
    text = "".join(pieces)
    cuts = EvalCuts.of(text)
    lines = text.split("\n")
    for line0 in range(len(lines) + 1):
        width = len(lines[line0]) if line0 < len(lines) else 0
        for column0 in range(width + 2):
            assert cuts.spot(line0, column0) == walked(text, line0, column0), (line0, column0)


def test_the_case_of_a_line_is_the_last_case_that_starts_at_or_before_it() -> None:
    text = 'tools [a]\ncase "one"\n  trace "t.jsonl"\n  steps <= 1\ncase "two"\n  steps <= 2\n'
    buffer = Analysis(text, "/tmp/s.eval", "eval")
    assert [buffer.case_at(n) for n in range(7)] == [None, 0, 0, 0, 1, 1, 1]
    spot = buffer.spot(5, 4)
    assert spot is not None and spot.text.strip() == "steps <= 2" and spot.case == 1
