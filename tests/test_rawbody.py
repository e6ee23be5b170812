"""A stream traceplay recorded as `"content": ""` is answered by its `rawBody` (`rawbody`).

traceplay's recorder builds a streamed response's `output.content` from OpenAI chat
`choices[0].delta.content` only: an Anthropic or Responses API stream is recorded with
`"content": ""` and its text only in `rawBody`, where `answer is empty` passed. Every pass
(the reference, the generated one on a list, on a streamed cassette decoded whole and by
the typed decoder) now reads such an answer from `rawBody`; a `rawBody` no reader reads is
the run's error at its line; a response whose `content` is not "" is read as it was.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from unittest import mock

import attrs
import pytest

import evaldsl
from evaldsl.compile.evaluate import evaluate
from evaldsl.runs import passes
from evaldsl.runs.cassette import EventStream
from evaldsl.runs.index import index_run as reference_index_run
from evaldsl.runs.model import Run, RunError

HEADER = {"cassette": "traceplay", "version": 1}


def _sse(*events: dict[str, Any]) -> str:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)


ANTHROPIC = _sse(
    {"type": "message_start", "message": {"id": "m", "content": [], "usage": {}}},
    {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Sorry"}},
    {"type": "content_block_stop", "index": 0},
    {"type": "message_stop"},
)
RESPONSES = _sse(
    {
        "type": "response.completed",
        "response": {
            "id": "r",
            "object": "response",
            "status": "completed",
            "output": [
                {"type": "message", "content": [{"type": "output_text", "text": "It is 9 C"}]}
            ],
        },
    }
)


def _events(raw_body: Any, content: str = "") -> list[dict[str, Any]]:
    return [
        {"type": "llm.request", "id": "q", "stream": True},
        {
            "type": "llm.response",
            "requestId": "q",
            "stream": True,
            "output": {"content": content},
            "rawBody": raw_body,
        },
    ]


def _all_passes(events: list[dict[str, Any]], path: Path) -> list[Run]:
    path.write_text("".join(json.dumps(e) + "\n" for e in [HEADER, *events]))
    stream = Run(events=EventStream(path), path=str(path), format="traceplay")
    return [Run(events=events, format="traceplay"), stream]


def _outcomes(statements: str, events: list[dict[str, Any]], tmp_path: Path) -> list[Any]:
    """What each pass gives: the reference and the generated one (on a list, on a stream
    decoded whole and by the typed decoder)."""
    case = evaldsl.compile(statements).cases[0]

    def outcome(index: Any, run: Run) -> Any:
        try:
            facts = index(run, attrs.evolve(case.needs, passes={}))
        except RunError as err:
            return ("error", err.message, err.line)
        return [(v.status, v.actual) for v in (evaluate(a, facts) for a in case.assertions)]

    said = []
    for run in _all_passes(events, tmp_path / "c.jsonl"):
        said.append(outcome(reference_index_run, run))
        with (
            mock.patch.object(passes, "index_events", side_effect=AssertionError("reference")),
            mock.patch.object(passes, "GENERATE_FROM_EVENTS", 0),
            mock.patch.object(passes, "GENERATE_FROM", 0),
        ):
            for typed_from in (passes.TYPED_FROM, 0):
                with mock.patch.object(passes, "TYPED_FROM", typed_from):
                    said.append(outcome(passes.index_run, run))
    return said


@pytest.mark.parametrize(("raw_body", "answer"), [(ANTHROPIC, "Sorry"), (RESPONSES, "It is 9 C")])
def test_a_stream_recorded_as_empty_content_is_answered_by_its_raw_body(
    raw_body: str, answer: str, tmp_path: Path
) -> None:
    said = _outcomes('answer is empty\nanswer[-1] == ""', _events(raw_body), tmp_path)
    assert said == [[("fail", answer), ("fail", answer)]] * len(said)


def test_a_raw_body_no_reader_reads_is_the_runs_error_at_its_line(tmp_path: Path) -> None:
    said = _outcomes("answer is empty", _events('data: {"nobody": 1}\n\n'), tmp_path)
    for outcome in said:
        assert outcome[0] == "error", outcome
        assert "its `rawBody` is not a stream evaldsl reads" in outcome[1]
    assert said[-1][2] == 3  # (the cassette's response line: the header is line 1)


def test_a_response_whose_content_is_not_empty_is_read_as_recorded(tmp_path: Path) -> None:
    said = _outcomes('answer == "kept"', _events("not a stream", content="kept"), tmp_path)
    assert said == [[("pass", "kept")]] * len(said)
