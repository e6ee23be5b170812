"""Integers past 64 bits in a trace are read exactly, in both passes and whatever decodes
them: orjson, the full decoder, gives any integer beyond -2**63 .. 2**64 - 1 as the nearest
double (`bigints`), which compared as another number: `18446744073709551617` (2**64 + 1)
was `== 1.8446744073709552e19` (2**64) and not `> 1.8446744073709552e19`. Those from 2**63
to 2**64 - 1 were exact already; an integer literal past 2**63 - 1 is a check-time error.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

import evaldsl
from evaldsl.runs import bigints, load_run, passes
from tests.clitools import run_evaldsl
from tests.test_formats import check, write

TWO_64 = "1.8446744073709552e19"  # 2**64, the double orjson gave for 2**64 + 1
BIG = [2**63 + 1, 2**64 - 1, 2**64 + 1, -(2**63) - 1]

STATEMENTS = {
    f"tool f args $.n == {TWO_64}": "fail",  # no call has 2**64
    "tool f args $.n == 9.223372036854775808e18": "fail",  # nor 2**63
    f"tool f result == {TWO_64}": "fail",
    f"tool f args $.n in [{TWO_64}]": "fail",
    f"tool f args $.n > {TWO_64}": "pass",  # 2**64 + 1 is
    f"every tool f args $.n != {TWO_64}": "pass",
    "tool f args $.n < -9.223372036854775808e18": "pass",  # -2**63 - 1 is
    f"answer json $.n == {TWO_64}": "fail",
    f"input tokens > {TWO_64}": "pass",
    'answer contains "18446744073709551617"': "pass",
}


def _cassette(tmp_path: Path) -> Path:
    lines = ['{"cassette": "traceplay", "version": 1}']
    for i, n in enumerate(BIG):
        call = {"type": "tool.call", "name": "f", "callId": f"c{i}", "arguments": {"n": n}}
        lines += [
            json.dumps(call),
            json.dumps({"type": "tool.result", "callId": f"c{i}", "output": n}),
        ]
    usage = {"promptTokens": 2**64 + 1, "completionTokens": 1}
    answer = {"type": "llm.response", "output": '{"n": 18446744073709551617}', "usage": usage}
    lines.append(json.dumps(answer))
    return write(tmp_path, "c.jsonl", "\n".join(lines) + "\n")


@contextlib.contextmanager
def _generated(typed_from: int) -> Iterator[None]:
    """Every run through the generated pass however small, never handed to the reference;
    from `typed_from` bytes on, decoded by the typed decoders."""
    with (
        mock.patch.object(passes, "GENERATE_FROM", 0),
        mock.patch.object(passes, "GENERATE_FROM_EVENTS", 0),
        mock.patch.object(passes, "TYPED_AFTER", 1 << 62),
        mock.patch.object(passes, "TYPED_FROM", typed_from),
        mock.patch.object(passes, "index_events", side_effect=AssertionError("handed over")),
    ):
        yield


@pytest.mark.parametrize("typed_from", [passes.TYPED_FROM, 0])
@pytest.mark.parametrize("reference", [True, False])
def test_integers_past_64_bits_compare_exactly(
    tmp_path: Path, reference: bool, typed_from: int
) -> None:
    path = _cassette(tmp_path)
    where = (
        mock.patch.dict(os.environ, {"EVALDSL_REFERENCE": "1"})
        if reference
        else _generated(typed_from)
    )
    with where:
        assert check(path, "; ".join(STATEMENTS)) == list(STATEMENTS.values())
        in_memory = attrs.evolve(load_run(path), events=list(load_run(path).events or ()))
        checked = evaldsl.compile("; ".join(STATEMENTS)).check(in_memory)
    assert checked.statuses == list(STATEMENTS.values())


def test_a_provider_bodys_integers_past_64_bits_are_exact(tmp_path: Path) -> None:
    call = {
        "id": "t",
        "type": "function",
        "function": {"name": "f", "arguments": '{"n": 18446744073709551617}'},
    }
    message = {"role": "assistant", "content": None, "tool_calls": [call]}
    body = {"object": "chat.completion", "model": "gpt-4o", "choices": [{"message": message}]}
    path = write(tmp_path, "b.json", json.dumps(body))
    assert check(path, f"tool f args $.n > {TWO_64}; tool f args $.n == {TWO_64}") == [
        "pass",
        "fail",
    ]


@pytest.mark.parametrize("at", [0, 7, 8, 30])  # (the head is 8 lines: in it, and past it)
def test_a_cassette_read_again_from_its_start_is_exact_before_and_past_its_head(
    tmp_path: Path, at: int
) -> None:
    """A cassette read as a stream decodes its first lines each looked through for a long
    integer, and looks through the rest at once only when a reader goes past them: a
    reader of its first timestamp (read again after a typed pass) no longer scans the
    whole file, and an integer past 64 bits is exact wherever it is."""
    from evaldsl.runs.cassette import EventStream

    lines = [
        {"type": "user.message", "at": f"2026-01-01T00:00:{i:02d}Z", "n": i} for i in range(40)
    ]
    lines[at]["n"] = 2**64 + 1
    path = tmp_path / "c.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in lines), encoding="utf-8")
    stream = EventStream(path, header=False)
    with mock.patch.object(bigints, "file_may_round", wraps=bigints.file_may_round) as scan:
        assert next(iter(stream))["at"] == "2026-01-01T00:00:00Z"
        assert scan.call_count == 0
        assert [e["n"] for e in stream] == [e["n"] for e in lines]
        assert scan.call_count == 1  # (once, where the head ends)


_LINES = 300  # (more than the head lines detection decodes, each looked through)


def _chat_line(i: int, n: int) -> str:
    message = {"role": "assistant", "content": f"step {i}"}
    body = {"object": "chat.completion", "model": "gpt-4o", "choices": [{"message": message}]}
    return json.dumps({**body, "usage": {"prompt_tokens": n, "completion_tokens": 1}})


@pytest.mark.parametrize("sse", [False, True])
@pytest.mark.parametrize("at", [None, 0, _LINES - 1])
def test_a_file_of_lines_is_looked_through_for_long_integers_once(
    tmp_path: Path, sse: bool, at: int | None
) -> None:
    """A JSONL file or a stream read whole is looked through once for a long integer,
    not each of its lines again: a line can hold one only if the file does. A file that
    holds one (`at`) has each line looked through, and read exactly, as before."""
    from evaldsl.runs import detect, surrogates

    lines = [_chat_line(i, 2**64 + 1 if i == at else i) for i in range(_LINES)]
    text = "".join(f"data: {line}\n\n" if sse else line + "\n" for line in lines)
    path = write(tmp_path, "s.sse" if sse else "s.jsonl", text + ("data: [DONE]\n" if sse else ""))
    with mock.patch.object(surrogates, "exact", wraps=surrogates.exact) as looked:
        run = load_run(path, "openai")
    usage = [e["usage"]["promptTokens"] for e in run.events or () if e["type"] == "llm.response"]
    assert usage == [2**64 + 1 if i == at else i for i in range(_LINES)]
    if at is None:  # (the head detection decodes is looked through, line by line)
        assert looked.call_count <= detect.HEAD_ITEMS + 1 < _LINES
    else:
        assert looked.call_count >= _LINES


@pytest.mark.parametrize("sse", [False, True])
def test_a_file_of_lines_is_decoded_by_orjson_and_mended_where_it_refuses(
    tmp_path: Path, sse: bool
) -> None:
    """A file that holds no long integer has its lines (its `data:` payloads) decoded by
    orjson itself: `mended_loads` is called for a line orjson refuses only, which it reads
    with its lone surrogate escape as U+FFFD, or which is the error it was."""
    from evaldsl.runs import detect
    from evaldsl.runs import sse as sse_module

    def file(lines: list[str], name: str) -> Path:
        text = "".join(f"data: {line}\n\n" if sse else line + "\n" for line in lines)
        return write(tmp_path, name, text + ("data: [DONE]\n" if sse else ""))

    lines = [_chat_line(i, i) for i in range(_LINES)]
    lines[7] = lines[7].replace("step 7", "step \\ud83d")
    module = sse_module if sse else detect
    given: list[str] = []  # (the lines of the head detection reads, bytes, left out)
    mended = module.mended_loads
    with mock.patch.object(
        module,
        "mended_loads",
        lambda t, **k: (isinstance(t, str) and given.append(t)) or mended(t, **k),
    ):
        run = load_run(file(lines, "s.sse" if sse else "s.jsonl"), "openai")
        answers = [e["output"] for e in run.events or () if e["type"] == "llm.response"]
        assert answers == [f"step {i}" if i != 7 else "step \ufffd" for i in range(_LINES)]
        assert given == [lines[7]]
        with pytest.raises(evaldsl.RunError, match="not JSON" if sse else "invalid JSON on line 4"):
            load_run(file([*lines[:3], "{bad", *lines[3:]], "b.sse" if sse else "b.jsonl"))
        assert given[1:] == ["{bad"]


def _exact(text: bytes) -> object:
    import msgspec

    return msgspec.json.decode(text)


@pytest.mark.parametrize(
    "text",
    [
        b"18446744073709551617",
        b"-9223372036854775809",
        b"[18446744073709551617]",
        b'{"n":18446744073709551617}',
        b'{"n": -18446744073709551617}',
        b'{"n":\t18446744073709551617}',
        b'{"n":\r\n18446744073709551617}',
        b'["a",18446744073709551617]',
        b'["a", 1e400000000000000000000, 2]',
        b'{"t": "x1700000000000000000", "n": 18446744073709551617.5}',
    ],
)
def test_a_number_of_19_digits_or_more_is_read_exactly_wherever_it_stands(text: bytes) -> None:
    """A number past 64 bits is found after any separator, white space or sign, at the
    text's start, in a file read in blocks across their edges; a run of digits that
    follows a quote is in a string, never a number."""

    assert bigints.may_round(text) and bigints.may_round(text.decode())
    try:
        exact = _exact(text)
    except Exception:  # (a number msgspec refuses: orjson's reading stands)
        exact = None
    if exact is not None:
        assert bigints.loads(text) == exact
    for size in range(1, len(text) + 2):
        with mock.patch.object(bigints, "_BLOCK", size):
            assert bigints.file_may_round(io.BytesIO(text))


@pytest.mark.parametrize(
    "text",
    [
        b'{"startTimeUnixNano": "1700000000000000000"}',
        b'["18446744073709551617", "-1"]',
        b'{"n": 123456789012345678, "s": "99999999999999999999999"}',
    ],
)
def test_a_run_of_digits_after_a_quote_is_not_read_again(text: bytes) -> None:

    assert not bigints.may_round(text) and not bigints.may_round(text.decode())
    assert bigints.loads(text) == _exact(text)
    for size in range(1, len(text) + 2):
        with mock.patch.object(bigints, "_BLOCK", size):
            assert not bigints.file_may_round(io.BytesIO(text))


#: Pieces of text: a quote, separators, white space, a sign, letters, and runs of digits
#: of every length around the two that matter (19, and 38 after a quote).
_PIECES = st.one_of(
    st.sampled_from(['"', ",", ":", "[", " ", "\n", "\t", "-", "a", ".", "\\"]),
    st.integers(1, 45).map(lambda n: "7" * n),
)


@given(st.lists(_PIECES, max_size=12), st.integers(1, 64))
def test_the_scan_finds_every_run_that_does_not_follow_a_quote(
    pieces: list[str], block: int
) -> None:
    """Both scans say yes to text holding a run of 19 digits that follows no quote, and
    no to text whose runs of 19 digits or more each follow a quote and are shorter than
    38 (or that has none), whatever the blocks a file is read in."""

    text = "".join(pieces)
    runs = [(m.start(), len(m.group())) for m in re.finditer(r"[0-9]+", text)]
    long_runs = [(at, n) for at, n in runs if n >= bigints.LONG]
    unquoted = any(at == 0 or text[at - 1] != '"' for at, _ in long_runs)
    quiet = all(n < 2 * bigints.LONG for _, n in long_runs)
    with mock.patch.object(bigints, "_BLOCK", block):
        found = [bigints.may_round(text), bigints.file_may_round(io.BytesIO(text.encode()))]
    if unquoted:
        assert found == [True, True]
    elif quiet:
        assert found == [False, False]


def test_a_failure_shows_a_value_holding_one_as_json(tmp_path: Path) -> None:
    """A value holding an integer past 64 bits (read exactly) is one orjson does not
    write: every report's message showed it in Python's words, `found {'n': None, 'big':
    12345678901234567890123}`; it now shows the JSON the state holds."""
    state = {"status": "completed", "memory": {"n": None, "ok": True, "big": 10**22 + 3}}
    (tmp_path / "s.json").write_text(json.dumps(state), encoding="utf-8")
    suite = write(tmp_path, "t.eval", 'case "a"\n  state "s.json"\n  memory has missing\n')
    done = run_evaldsl("run", str(suite), "--json", str(tmp_path / "r.json"))
    shown = '{"n":null,"ok":true,"big":10000000000000000000003}'
    assert f"fail: expected memory has missing, found {shown}" in done.stdout
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert shown in json.dumps(report, ensure_ascii=False).replace('\\"', '"')
