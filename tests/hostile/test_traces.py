"""Traces and suites that lie about their shape: OTel containers of the wrong type and
times out of range, token usage that is negative or not a number, YAML tags, recursive
aliases, alias bombs and deep nesting. Each is an error (a diagnostic at its line, or the
run's error), never an empty trace that passes `no tool X`, never a traceback."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

import evaldsl
from evaldsl.runs.detect import load_run
from evaldsl.runs.model import RunError
from evaldsl.runs.otel import MAX_NANOS
from evaldsl.suites import yamlguard
from evaldsl.suites.build import check_text
from evaldsl.suites.yamlguard import check_yaml
from tests.clitools import ROOT, run_evaldsl

CASSETTE = ROOT / "tests/fixtures/traceplay/demo/cassette.example.jsonl"


def otlp(*spans: dict[str, Any]) -> dict[str, Any]:
    return {"resourceSpans": [{"scopeSpans": [{"spans": list(spans)}]}]}


def tool_span(**fields: Any) -> dict[str, Any]:
    return {
        "spanId": "b" * 16,
        "name": "execute_tool search",
        "startTimeUnixNano": "1700000000000000000",
        "endTimeUnixNano": "1700000001000000000",
        "attributes": [{"key": "gen_ai.tool.name", "value": {"stringValue": "search"}}],
        **fields,
    }


def llm_span(usage: dict[str, Any]) -> dict[str, Any]:
    attrs = [{"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}}]
    attrs += [{"key": k, "value": v} for k, v in usage.items()]
    return tool_span(name="chat", attributes=attrs)


def outcomes(tmp_path: Path, doc: Any, text: str, as_format: str) -> list[tuple[str, str]]:
    """(status, message) of each assertion of `text` against `doc` read as `as_format`."""
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    program = evaldsl.compile(text)
    try:
        run = load_run(path, as_format)
    except RunError as err:  # what `run` does with it: every assertion errors
        return [("error", err.message)] * len(program.check([]).verdicts)
    return [(v.status, v.message) for v in program.check(run).verdicts]


def verdicts(tmp_path: Path, doc: Any, text: str, as_format: str = "otel") -> list[str]:
    return [status for status, _ in outcomes(tmp_path, doc, text, as_format)]


@pytest.mark.parametrize(
    "doc",
    [
        {"resourceSpans": 5},
        {"resourceSpans": "spans"},
        {"resourceSpans": None},
        {"resourceSpans": [5]},
        {"resourceSpans": [{"scopeSpans": 5}]},
        {"resourceSpans": [{"scopeSpans": [{"spans": {"a": 1}}]}]},
        {"resourceSpans": [{"scopeSpans": [{"spans": [5, tool_span()]}]}]},
        otlp(tool_span(attributes=5)),
        {"resourceSpans": []},
        otlp(),
    ],
)
def test_otel_containers_of_the_wrong_type_are_errors(tmp_path: Path, doc: Any) -> None:
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(RunError):
        load_run(path, "otel")
    # and through a suite: never an empty trace that passes `no tool execute_shell`
    (tmp_path / "s.eval").write_text(
        'case "a"\n  trace "trace.json" as otel\n  no tool execute_shell\n', encoding="utf-8"
    )
    done = run_evaldsl("run", "s.eval", "--no-history", cwd=tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr


@pytest.mark.parametrize(
    ("start", "end"),
    [
        ("9" * 40, "9" * 41),
        ("9" * 5000, "1"),
        ("-5", "-1"),
        (-5, 10),
        (1e300, 1e308),
        ("inf", "nan"),
        (True, False),
        (10**30, 10**31),
        (MAX_NANOS + 1, MAX_NANOS + 2),
        ("10000-01-01T00:00:00Z", "10000-01-02T00:00:00Z"),
        ("1700000001000000000", "1700000000000000000"),  # ends before it starts
        ("1700000000000000000", "soon"),
    ],
)
def test_span_times_out_of_range_make_latency_an_error(
    tmp_path: Path, start: Any, end: Any
) -> None:
    doc = otlp(tool_span(startTimeUnixNano=start, endTimeUnixNano=end))
    statuses = verdicts(tmp_path, doc, "latency < 10000h; latency >= 0s; tool search called")
    assert statuses == ["error", "error", "pass"]


def test_span_times_in_range_give_latency(tmp_path: Path) -> None:
    doc = otlp(tool_span())
    assert verdicts(tmp_path, doc, "latency == 1s") == ["pass"]


@pytest.mark.parametrize(
    "value",
    [{"intValue": "-50"}, {"stringValue": "lots"}, {"boolValue": True}, {"doubleValue": -1.5},
     {"arrayValue": {"values": [{"intValue": "3"}]}}],
)  # fmt: skip
def test_otel_token_usage_that_is_not_a_count_is_an_error(
    tmp_path: Path, value: dict[str, Any]
) -> None:
    doc = otlp(llm_span({"gen_ai.usage.input_tokens": value}))
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(RunError, match=r"token usage `gen_ai\.usage\.input_tokens`"):
        load_run(path, "otel")


USAGE_CASES = {
    "openai": {
        "object": "chat.completion",
        "model": "gpt-4o-mini",
        "choices": [{"message": {"role": "assistant", "content": "hi"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": -100, "completion_tokens": 5},
    },
    "anthropic": {
        "type": "message",
        "role": "assistant",
        "model": "claude-3-5-haiku-latest",
        "content": [{"type": "text", "text": "hi"}],
        "usage": {"input_tokens": "100", "output_tokens": 5},
    },
    "events": [{"type": "llm.response", "output": "hi", "usage": {"promptTokens": True}}],
    "state": {"status": "completed", "memory": {}, "total_tokens_used": -1},
}


@pytest.mark.parametrize("fmt", sorted(USAGE_CASES))
def test_token_usage_that_is_not_a_count_fails_the_run(tmp_path: Path, fmt: str) -> None:
    ((status, message),) = outcomes(tmp_path, USAGE_CASES[fmt], "tokens <= 1000000", fmt)
    assert status == "error"
    assert any(word in message for word in ("negative", "not a number", "≥ 0")), message


def test_a_cassette_with_a_negative_count_fails_the_run(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text(
        '{"cassette": "traceplay", "version": 1}\n'
        '{"type": "llm.response", "output": "hi", "usage": '
        '{"promptTokens": -9000, "completionTokens": 5}}\n',
        encoding="utf-8",
    )
    result = evaldsl.compile("tokens <= 100; no tool x").check(path)
    assert result.statuses == ["error", "error"]
    assert result.error is not None and "cannot be negative" in result.error


# ---- YAML ------------------------------------------------------------------------------


def yaml_codes(text: str, name: str = "s.yaml") -> list[tuple[str, int]]:
    found = check_text(textwrap.dedent(text), str(ROOT / name))
    return [(d.code, d.line) for d in found if d.is_error]


@pytest.mark.parametrize(
    "tag", ["!!python/object:os.system", "!!python/name:os.system", "!foo", "!!binary", "!<x>"]
)
def test_unknown_and_unsafe_yaml_tags_are_errors_at_their_line(tag: str) -> None:
    text = f"""\
        suite: s
        cases:
          - name: a
            cassette: {CASSETTE}
            input: {tag} x
            expect: tokens >= 0
        """
    assert yaml_codes(text) == [("E510", 5)]


def test_recursive_aliases_are_errors_at_their_line() -> None:
    assert yaml_codes("suite: s\ncases: &a [*a]\n") == [("E510", 2)]
    text = f"""\
        suite: s
        cases:
          - &c {{name: a, cassette: {CASSETTE}, expect: tokens >= 0, input: {{me: *c}}}}
        """
    assert yaml_codes(text) == [("E510", 3)]


def test_an_alias_bomb_is_refused_by_its_size() -> None:
    lines = ["suite: s", "l0: &l0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]" for i in range(1, 9)]
    lines += ["cases:", f"  - {{name: a, cassette: {CASSETTE}, input: *l8}}"]
    found = check_text("\n".join(lines) + "\n", str(ROOT / "s.yaml"))
    assert [d.code for d in found] == ["E510"]
    assert "more than 1,000,000 nodes beyond the ones written" in found[0].message


def test_the_node_limit_counts_what_aliases_add_not_what_is_written(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a large suite written out is bounded by its file's size: 32,000 cases (13 MB) were
    # refused as an alias bomb; aliases adding more than the limit still are
    monkeypatch.setattr(yamlguard, "MAX_YAML_NODES", 300)
    case = f"  - {{name: cN, cassette: {CASSETTE}, expect: [tokens >= 0, steps >= 0]}}"
    plain = ["suite: s", "cases:", *(case.replace("cN", f"c{n}") for n in range(100))]
    assert yaml_codes("\n".join(plain) + "\n") == []  # ~900 nodes, all written
    row = "[" + ", ".join(["x"] * 20) + "]"

    def aliased(uses: int) -> str:
        more = ", ".join(["*i"] * uses)
        data = f"  - {{name: d, cassette: {CASSETTE}, expect: tokens >= 0, metadata: {{"
        data += f"rows: &i {row}, more: [{more}]}}}}"
        return "\n".join([*plain, data]) + "\n"

    assert yaml_codes(aliased(14)) == []  # the aliases add 14 x 21 = 294 nodes
    assert yaml_codes(aliased(15)) == [("E510", 103)]  # 315, at the case that holds them


def test_aliases_that_are_not_a_bomb_are_fine() -> None:
    text = f"""\
        suite: s
        defaults: &d {{cassette: {CASSETTE}}}
        cases:
          - {{<<: *d, name: a, expect: tokens >= 0}}
          - {{<<: *d, name: b, expect: tokens >= 0}}
        """
    assert ("E510", 2) not in yaml_codes(text)


@pytest.mark.parametrize("kind", ["flow", "json"])
def test_yaml_and_json_nested_past_the_limit_are_errors(kind: str) -> None:
    deep = "[" * 300 + "]" * 300
    if kind == "json":
        text = f'{{"suite": "s", "cases": [{{"name": "a", "input": {deep}}}]}}'
        assert [c for c, _ in yaml_codes(text, "s.json")] == ["E510"]
    else:
        assert [c for c, _ in yaml_codes(f"suite: s\ncases:\n  - input: {deep}\n")] == ["E510"]


def test_a_huge_yaml_integer_is_an_error() -> None:
    text = f"suite: s\ncases:\n  - {{name: a, cassette: {CASSETTE}, timeout: {'9' * 5000}}}\n"
    assert yaml_codes(text) == [("E510", 3)]


def test_check_yaml_walks_a_deep_chain_without_recursion() -> None:
    import yaml

    node = yaml.compose("a: " + "[" * 900 + "]" * 900, Loader=yaml.CSafeLoader)
    (problem,) = check_yaml(node)
    assert "nested more than 200" in problem.message


def test_a_dataset_with_tags_or_a_bomb_is_refused(tmp_path: Path) -> None:
    (tmp_path / "rows.yaml").write_text(
        "- &a {input: !!python/object:os.system x}\n- *a\n", encoding="utf-8"
    )
    (tmp_path / "agent.py").write_text("def main(x=None):\n    return x\n", encoding="utf-8")
    (tmp_path / "s.eval").write_text(
        'case "a"\n  run agent:main\n  dataset "rows.yaml"\n', encoding="utf-8"
    )
    done = run_evaldsl("check", "s.eval", cwd=tmp_path)
    assert done.returncode == 1 and "E510" in done.stdout and "Traceback" not in done.stderr


REALWORLD = ROOT / "tests" / "fixtures" / "realworld"


@pytest.mark.parametrize(
    "sample",
    [
        "openai-chat-jsonl/responses.jsonl",  # JSONL of bodies, read whole
        "openai-chat-stream/chunks.jsonl",
        "openai-chat-stream/stream.sse",  # SSE
        "anthropic-stream-tooluse/tool_use_response.txt",
        "anthropic-stream-tooluse/events.jsonl",
        "openinference-phoenix-spans/spans.jsonl",
    ],
)
def test_a_byte_that_is_not_utf8_in_a_file_read_whole_is_an_error_at_it(
    tmp_path: Path, sample: str
) -> None:
    """A Latin-1 `é` inside a string of a real sample: the formats read whole used to
    replace it and read on (a model `\ufffdgpt-4o-mini`, an answer misspelt), where a
    cassette says it is not UTF-8; now each says so, at the byte's line and column."""
    data = (REALWORLD / sample).read_bytes()
    at = data.index(b'"', data.index(b"{") + 1) + 1  # inside the first key's text
    bad = tmp_path / Path(sample).name
    bad.write_bytes(data[:at] + b"\xe9" + data[at:])
    line = data.count(b"\n", 0, at) + 1
    column = at - (data.rfind(b"\n", 0, at) + 1) + 1
    with pytest.raises(RunError) as caught:
        load_run(str(bad))
    err = caught.value
    assert err.message == "this file is not UTF-8 text: byte 0xe9 is not UTF-8"
    assert (err.line, err.column) == (line, column)
    (tmp_path / "t.eval").write_text(f'cassette "{bad.name}"\ntool calls >= 0\n')
    checked = run_evaldsl("check", str(tmp_path / "t.eval"))
    assert checked.returncode == 1
    assert f'{bad.name}": this file is not UTF-8 text' in checked.stdout


@pytest.mark.parametrize("depth", [1000, 10_000])
def test_a_large_document_nested_past_msgspec_s_recursion_is_read_in_full(
    tmp_path: Path, depth: int
) -> None:
    """The look for an Inspect AI log in a document past 1 MiB reads its keys by msgspec,
    whose `RecursionError` (from ~1,000 levels) was a traceback from `evaldsl inspect` of
    an OTLP export with a value nested that deep. It is now a document the look cannot
    read: the full reading says what it is (here the JSON's depth, past orjson's 1,024)."""
    span = tool_span()
    span["attributes"].append({"key": "x", "value": {"stringValue": "y" * (1 << 20)}})
    text = json.dumps(otlp(span)).replace('"y', "[" * depth + "]" * depth + ', "z": "y', 1)
    path = tmp_path / "trace.otlp.json"
    path.write_text(text, encoding="utf-8")
    done = run_evaldsl("inspect", str(path))
    assert "Traceback" not in done.stderr, done.stderr
    if depth > 1024:
        assert done.returncode == 1 and "depth limit exceeded" in done.stderr, done.stderr
    else:
        assert done.returncode == 0 and "search called once" in done.stdout, done.stderr


@pytest.mark.parametrize("mark", ["\u2028", "\u2029", "\x85"])
@pytest.mark.parametrize("container", ["jsonl", "sse"])
def test_a_line_separator_inside_a_json_string_ends_no_line(
    tmp_path: Path, container: str, mark: str
) -> None:
    """U+2028, U+2029 and U+0085 are text in a JSON string, as `json.dumps(…,
    ensure_ascii=False)` and `JSON.stringify` write them; `str.splitlines` ended a line
    at them, and the half line was `invalid JSON on line 2: unexpected end of data`."""
    answer = f"It is 15{mark}C in Seattle"
    if container == "jsonl":
        bodies = [
            {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "weather?"}]},
            {"object": "chat.completion", "choices": [{"message": {"content": answer}}]},
        ]
        text = "".join(json.dumps(b, ensure_ascii=False) + "\n" for b in bodies)
    else:
        chunks = [
            {"object": "chat.completion.chunk", "choices": [{"delta": {"content": part}}]}
            for part in (answer[:9], answer[9:])
        ]
        text = "".join(f"data: {json.dumps(c, ensure_ascii=False)}\n\n" for c in chunks)
        text += "data: [DONE]\n\n"
    path = tmp_path / f"trace.{container}"
    path.write_text(text, encoding="utf-8")
    result = evaldsl.compile(f'answer == "{answer}"').check(path)
    assert result.error is None and result.statuses == ["pass"], result
    done = run_evaldsl("inspect", str(path))
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize(
    ("header", "fmt"),
    [(True, None), (True, "traceplay"), (True, "events"), (False, None), (False, "events")],
)
def test_a_cassette_with_old_mac_line_endings_says_so(
    tmp_path: Path, header: bool, fmt: str | None
) -> None:
    """A cassette or a JSONL of events whose lines end with a lone CR: detection said it
    `matches more than one format: events (…); openai (…)`, and named, its header or
    first line was `unexpected content after document`. Formats read whole still read
    such a file (their lines split at a lone CR)."""
    lines = CASSETTE.read_text(encoding="utf-8").splitlines()[0 if header else 1 :]
    path = tmp_path / "mac.jsonl"
    path.write_text("\r".join(lines) + "\r", encoding="utf-8", newline="")
    with pytest.raises(RunError) as caught:
        list(load_run(path, fmt).events or ())  # (a JSONL of events streams: read it)
    assert "lone carriage return (CR, an old Mac line ending)" in caught.value.message
    assert caught.value.line == 1 and caught.value.column == len(lines[0]) + 1
    assert caught.value.hint == "save the file with LF or CRLF line endings"
    bodies = [
        {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": "hi"}]},
        {"object": "chat.completion", "choices": [{"message": {"content": "hello"}}]},
    ]
    openai = tmp_path / "openai.jsonl"
    openai.write_text("\r".join(json.dumps(b) for b in bodies), encoding="utf-8", newline="")
    assert load_run(openai).format == "openai"


@pytest.mark.parametrize(("count", "shown"), [(float("nan"), "NaN"), (float("inf"), "Infinity")])
def test_a_token_count_that_is_not_finite_is_said_so(count: float, shown: str) -> None:
    """An event list given in Python can hold NaN or Infinity as a count: the error said
    `promptTokens is nan: a count cannot be negative`, which neither is."""
    events = [
        {"type": "llm.response", "output": "ok", "usage": {"promptTokens": count}},
    ]
    result = evaldsl.compile("tokens <= 100").check(events)
    assert result.statuses == ["error"]
    assert result.error is not None
    assert f"`promptTokens` is {shown}: a count is a finite number" in result.error
