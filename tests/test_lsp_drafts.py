"""An editor's buffer is drafted once a version (`evaldsl/tools/lsp/analysis.py`): its check
and its features (hover, completion, definition) share the draft, and a draft that fails
fails the check (logged, as before) while the features see an empty suite."""

from __future__ import annotations

from pathlib import Path

import pytest

from evaldsl.suites.build import check_text
from evaldsl.tools.lsp import analysis
from evaldsl.tools.lsp.analysis import Analysis
from evaldsl.tools.lsp.documents import diagnostics_by_file

TEXT = 'case "a"\n  cassette "missing.jsonl"\n  tool search called; answer contains\n'


def test_the_check_and_the_features_share_one_draft(tmp_path: Path) -> None:
    path = str(tmp_path / "s.eval")
    made: list[str] = []
    real = analysis.draft_from_text

    def counted(text: str, where: str) -> object:
        made.append(where)
        return real(text, where)

    buffer = Analysis(TEXT, path, "eval")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(analysis, "draft_from_text", counted)
        groups = diagnostics_by_file(TEXT, path, "eval", buffer.drafted)
        assert buffer.draft is buffer.drafted()
        buffer.spot(2, 10)  # a feature's question
    assert made == [path]
    (own,) = groups.values()
    assert own == check_text(TEXT, path)  # what a check of the text alone says
    assert {d.code for d in own} >= {"E101"}


def test_a_draft_that_fails_fails_the_check_and_leaves_the_features_an_empty_suite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(text: str, where: str) -> object:
        raise RuntimeError("a bug in drafting")

    monkeypatch.setattr(analysis, "draft_from_text", broken)
    buffer = Analysis(TEXT, str(tmp_path / "s.eval"), "eval")
    with pytest.raises(RuntimeError, match="a bug in drafting"):
        diagnostics_by_file(TEXT, buffer.path, "eval", buffer.drafted)
    assert buffer.draft.cases == ()
    with pytest.raises(RuntimeError):  # asked again: the same failure, not a second draft
        buffer.drafted()
