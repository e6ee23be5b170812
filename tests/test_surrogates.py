"""Lone UTF-16 surrogate escapes in recordings are read as U+FFFD (evaldsl.runs.surrogates),
by every reader: JSONL cassettes (streamed and checked), whole JSON documents, provider
streams, standard input of `score`, and JSON text inside a recording."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from evaldsl.runner import run_suites
from evaldsl.runs.surrogates import mend, mended_loads
from evaldsl.suites import load_suite

DEMO = Path(__file__).parent / "fixtures" / "traceplay" / "demo" / "cassette.example.jsonl"


@pytest.mark.parametrize(
    ("written", "mended"),
    [
        (r'"cut \ud83d"', r'"cut \ufffd"'),  # a high half at the end
        (r'"\udc00 x"', r'"\ufffd x"'),  # a low half alone
        (r'"\ud83d\ude00"', None),  # a pair: one character
        (r'"\\ud800"', None),  # an escaped backslash, then text
        (r'"\\\ud800"', r'"\\\ufffd"'),  # an escaped backslash, then an escape
        (r'"\ud800\ud800\udc00"', r'"\ufffd\ud800\udc00"'),  # a high half, then a pair
        (r'"\ud800\n\udc00"', r'"\ufffd\n\ufffd"'),  # halves apart
        (r'"\uD83D"', r'"\ufffd"'),  # upper-case hex
        (r'"\u00e9"', None),
    ],
)
def test_mend_replaces_exactly_the_lone_halves(written: str, mended: str | None) -> None:
    assert mend(written) == mended
    assert mend(written.encode()) == (mended.encode() if mended is not None else None)
    if mended is not None:
        assert len(mended) == len(written)  # positions after it stay where the file has them


@given(st.text())
def test_mended_loads_reads_what_python_reads_with_lone_halves_replaced(text: str) -> None:
    # Python's json keeps a lone surrogate in its string; evaldsl reads U+FFFD there
    written = json.dumps({"t": text, "k": [text]})
    expected = json.loads(written)
    lone = "".join(c if not 0xD800 <= ord(c) <= 0xDFFF else "\ufffd" for c in text)
    assert mended_loads(written) == mended_loads(written.encode()) == {"t": lone, "k": [lone]}
    assert expected["t"] == text


def test_other_errors_are_orjsons_at_their_place() -> None:
    with pytest.raises(orjson.JSONDecodeError) as caught:
        mended_loads(b'{"a": "\\ud800", "b": tru}')
    assert (caught.value.lineno, caught.value.colno) == (1, 8)  # the text as written


def _cassette_with_lone_half(tmp_path: Path) -> Path:
    text = DEMO.read_text(encoding="utf-8").replace("Xiamen is sunny, 31C.", "Xiamen \\ud83d")
    assert "\\ud83d" in text
    path = tmp_path / "cut.jsonl"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_cassette_with_a_lone_half_is_checked_and_run(tmp_path: Path) -> None:
    _cassette_with_lone_half(tmp_path)
    _checks_and_passes(
        tmp_path,
        'case "cut"\ncassette "cut.jsonl"\nanswer == "Xiamen \\ufffd"\n'
        "tool get_weather called once\ntokens > 0\n",
    )


def _checks_and_passes(tmp_path: Path, text: str) -> None:
    suite = tmp_path / "s.eval"
    suite.write_text(text, encoding="utf-8")
    loaded = load_suite(suite)
    assert list(loaded.diagnostics) == []
    (case,) = run_suites([loaded]).cases
    assert case.passed, [(a.message, a.error) for a in case.assertions]


@pytest.mark.parametrize("as_sse", [False, True])
def test_documents_and_streams_with_a_lone_half(tmp_path: Path, as_sse: bool) -> None:
    body = (
        '{"id":"c","object":"chat.completion","model":"gpt-4o-mini","choices":[{"index":0,'
        '"message":{"role":"assistant","content":"hi \\ud800 there","tool_calls":[{"id":"t1",'
        '"type":"function","function":{"name":"search",'
        '"arguments":"{\\"q\\": \\"\\\\ud83d\\"}"}}]},'
        '"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":3,"completion_tokens":3}}'
    )
    if as_sse:
        chunk = body.replace('"chat.completion"', '"chat.completion.chunk"')
        chunk = chunk.replace('"message":', '"delta":')
        (tmp_path / "t.sse").write_text(f"data: {chunk}\n\ndata: [DONE]\n\n", encoding="utf-8")
        name = "t.sse"
    else:
        (tmp_path / "t.json").write_text(body, encoding="utf-8")
        name = "t.json"
    _checks_and_passes(
        tmp_path,
        f'case "c"\ncassette "{name}"\nanswer == "hi \\ufffd there"\n'
        'tool search args $.q == "\\ufffd"\n',
    )


def test_score_reads_a_lone_half_on_standard_input(tmp_path: Path) -> None:
    program = tmp_path / "p.eval"
    program.write_text('answer ends with "\\ufffd"\n', encoding="utf-8")
    line = (
        '{"object":"chat.completion","model":"gpt-4o-mini","choices":[{"index":0,"message":'
        '{"role":"assistant","content":"cut \\ud83d"}}]}\n'
    )
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "evaldsl.tools.cli",
            "score",
            str(program),
            "-",
            "--format",
            "jsonl",
        ],
        input=line,
        capture_output=True,
        text=True,
        cwd=Path(__file__).parent.parent,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[0])["passed"] is True


def test_json_suites_and_datasets_read_escaped_surrogate_pairs(tmp_path: Path) -> None:
    # `json.dumps` writes an emoji as a pair of escapes; libyaml refuses them
    (tmp_path / "agent.py").write_text("def echo(i):\n    return i\n", encoding="utf-8")
    rows = [{"input": {"t": "hi 😀 \ud83d"}, "expectedOutput": {"t": "hi 😀 \ufffd"}}]
    (tmp_path / "rows.json").write_text(json.dumps(rows), encoding="utf-8")
    suite = {
        "suite": "s",
        "cases": [
            {"name": "rows", "run": "agent:echo", "dataset": "rows.json"},
            {
                "name": "text",
                "run": "agent:echo",
                "input": {"t": "😀"},
                "expect": 'output.t == "😀" and not output.t contains "\ud83d"',
            },
        ],
    }
    path = tmp_path / "s.json"
    path.write_text(json.dumps(suite), encoding="utf-8")
    assert "\\ud83d\\ude00" in path.read_text(encoding="utf-8")
    loaded = load_suite(path)
    assert list(loaded.diagnostics) == []
    report = run_suites([loaded])
    assert [c.passed for c in report.cases] == [True, True], [
        (c.name, c.error, [a.message for a in c.assertions]) for c in report.cases
    ]


def test_a_suites_strings_read_a_lone_half_as_the_recordings_do(tmp_path: Path) -> None:
    """A `.eval` string kept a lone surrogate escape (`tool "a\\ud800b" called`) where
    recordings and JSON/YAML suites read U+FFFD: such a name could never match, and the
    JSON report wrote "\\ud800", which orjson refuses. A lone half is now U+FFFD, a pair
    of escapes the character it makes, as everywhere else."""
    text = DEMO.read_text(encoding="utf-8").replace('"get_weather"', '"a\\ud800b"')
    text = text.replace("Xiamen is sunny, 31C.", "cut \\ud83d \\ud83d\\ude00")
    (tmp_path / "c.jsonl").write_text(text, encoding="utf-8")
    suite = tmp_path / "s.eval"
    suite.write_text(
        'case "lone \\ud800"\ncassette "c.jsonl"\ntool "a\\ud800b" called once\n'
        'answer contains "\\ud83d " and answer ends with "\\ud83d\\ude00"\n'
        "answer == 'cut \\ud83d 😀'\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        [sys.executable, "-m", "evaldsl.tools.cli", "run", "--no-history", "--json",
         str(tmp_path / "r.json"), str(suite)],
        capture_output=True,
        text=True,
        cwd=Path(__file__).parent.parent,
        timeout=120,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    report = orjson.loads((tmp_path / "r.json").read_bytes())
    (case,) = report["suites"][0]["cases"]
    assert case["name"] == "lone \ufffd" and case["passed"] is True, case
