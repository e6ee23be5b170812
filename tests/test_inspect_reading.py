"""The Inspect AI reader's edge cases (small hand-made logs, in Inspect's shapes, written
here as JSON and as `.eval` archives): a scorer's model calls are the grader's, not the
agent's steps.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import evaldsl
from evaldsl.runs import load_run
from evaldsl.runs.summary import summarize
from tests.clitools import run_evaldsl
from tests.test_inspectzip import write_eval

DATA = Path(__file__).resolve().parent / "data" / "formats"

AT = "2025-07-05T10:00:00+00:00"


def model(text: str, tokens: tuple[int, int], **more: Any) -> dict[str, Any]:
    """A `model` event answering `text` with `tokens` (input, output)."""
    message = {"role": "assistant", "content": text, "source": "generate"}
    usage = {"input_tokens": tokens[0], "output_tokens": tokens[1]}
    output = {"choices": [{"message": message, "stop_reason": "stop"}], "usage": usage}
    return {
        "event": "model",
        "timestamp": AT,
        "model": "openai/gpt-4o-mini",
        "output": output,
        **more,
    }


def span(
    kind: str, sid: str, parent: str | None = None, span_type: str | None = None
) -> dict[str, Any]:
    """A `span_begin` (`kind` "begin") or `span_end` event."""
    if kind == "end":
        return {"event": "span_end", "timestamp": AT, "id": sid}
    return {
        "event": "span_begin",
        "timestamp": AT,
        "id": sid,
        "parent_id": parent,
        "type": span_type,
        "name": sid,
    }


def log(events: list[dict[str, Any]], **sample: Any) -> dict[str, Any]:
    """A JSON eval log of one sample with `events` (and the sample's other fields)."""
    one = {"id": 1, "epoch": 1, "events": events, "attachments": {}, "total_time": 2.0, **sample}
    spec = {"task": "t", "task_id": "t", "model": "openai/gpt-4o-mini", "created": AT}
    return {"version": 2, "status": "success", "eval": spec, "samples": [one]}


def written(tmp_path: Path, value: dict[str, Any], form: str) -> Path:
    """`value` written as a JSON log or as an `.eval` archive (`form`)."""
    if form == "json":
        path = tmp_path / "log.json"
        path.write_text(json.dumps(value), encoding="utf-8")
    else:
        path = tmp_path / "log.eval"
        write_eval(path, value)
    return path


FORMS = pytest.mark.parametrize("form", ["json", "eval"])


# --- scorers ---------------------------------------------------------------------------------


@FORMS
def test_a_scorers_model_calls_are_not_the_agents_steps(tmp_path: Path, form: str) -> None:
    """Inspect runs each scorer in a span of type `scorer`: a model grader's reply is no
    answer, its tokens no cost of the agent's; a span inside the scorer's is the scorer's."""
    events = [
        span("begin", "s1", span_type="solvers"),
        model("Paris.", (40, 8), span_id="s1"),
        span("end", "s1"),
        span("begin", "s2"),
        span("begin", "s3", parent="s2", span_type="scorer"),
        span("begin", "s4", parent="s3"),
        model("GRADE: C", (300, 40), span_id="s4"),
        span("end", "s4"),
        {"event": "score", "timestamp": AT, "score": {"value": "C"}, "span_id": "s3"},
        span("end", "s3"),
        span("end", "s2"),
    ]
    path = written(tmp_path, log(events), form)
    statements = 'answer == "Paris."; steps == 1; tokens == 48; not answer contains "GRADE"'
    assert evaldsl.compile(statements).check(load_run(path)).statuses == ["pass"] * 4
    skipped = summarize(path)[0].skipped
    assert skipped["events of scorers (the grader's model calls and tools, not the agent's)"] == 6


def test_a_scorer_step_of_a_log_older_than_spans_is_the_scorers(tmp_path: Path) -> None:
    """Logs written before spans mark a scorer with `step` events (no `span_id`)."""
    step = {"event": "step", "timestamp": AT, "type": "scorer", "name": "model_graded_qa"}
    events = [
        model("Paris.", (40, 8)),
        {**step, "action": "begin"},
        model("GRADE: C", (300, 40)),
        {**step, "action": "end"},
    ]
    path = written(tmp_path, log(events), "json")
    statements = 'answer == "Paris."; steps == 1; tokens == 48'
    assert evaldsl.compile(statements).check(load_run(path)).statuses == ["pass"] * 3


# --- limits ----------------------------------------------------------------------------------

LIMIT_NOTE = "the sample stopped at its message limit (4): its answer may be cut"


@pytest.mark.parametrize("told", ["event", "field"])
def test_a_sample_stopped_by_a_limit_is_noted_not_an_error(tmp_path: Path, told: str) -> None:
    """Inspect counts a limit as the sample's, not an error (`errors == 0` holds, as
    Inspect's own count); the answer may be cut, as a stream cut at its token limit's."""
    stop = {"event": "sample_limit", "timestamp": AT, "type": "message", "limit": 4}
    events = [model("Let me look", (40, 8))]
    sample = {"limit": {"type": "message", "limit": 4}} if told == "field" else {}
    path = written(tmp_path, log(events + ([stop] if told == "event" else []), **sample), "json")
    assert evaldsl.compile("errors == 0").check(load_run(path)).statuses == ["pass"]
    summary = summarize(path)[0]
    assert any(LIMIT_NOTE in n for n in summary.notes), summary.notes
    assert not summary.skipped


# --- attachments -----------------------------------------------------------------------------

LOST = "attachment://0123456789abcdef0123456789abcdef"


@FORMS
def test_an_attachment_the_sample_lacks_is_unknown_never_its_reference(
    tmp_path: Path, form: str
) -> None:
    """An answer, arguments or a result stored as `attachment://HASH` whose HASH is not
    in the sample's `attachments`: what it holds is unknown (an error verdict naming the
    attachment), never the reference's text."""
    call = {"id": "c1", "function": "bash", "arguments": {"cmd": LOST}, "type": "function"}
    asks = model("", (10, 2))
    asks["output"]["choices"][0]["message"]["tool_calls"] = [call]
    ran = {"event": "tool", "timestamp": AT, "id": "c1", "function": "bash", "result": LOST}
    events = [asks, ran, model(LOST, (20, 4))]
    path = written(tmp_path, log(events), form)
    run = load_run(path)
    checked = evaldsl.compile(
        'not answer contains "attachment"; tool bash result contains "x"; '
        'not tool bash args $.cmd contains "attachment"; steps == 2'
    ).check(run)
    assert checked.statuses == ["error", "error", "error", "pass"]
    assert LOST in checked.verdicts[0].message
    assert "attachments" in checked.verdicts[1].message
    summary = summarize(path)[0]
    assert any("lacks 1 attachment its events name" in n for n in summary.notes)


def test_only_the_values_that_name_an_attachment_are_walked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An event is walked for its attachments only when its JSON holds one's name (or
    cannot be written: an integer past 64 bits), and a walk calls itself only for a
    list, an object or a name: an attachment in a field no test reads (a model's
    `input`) is still one the note counts, and the values read are those of a full walk."""
    from evaldsl.runs import inspect_ai

    held = "attachment://" + "a" * 32
    walked: list[Any] = []
    resolve = inspect_ai.resolve_attachments

    def counted(value: Any, attachments: dict[str, Any], lost: set[str]) -> Any:
        walked.append(value)
        return resolve(value, attachments, lost)

    monkeypatch.setattr(inspect_ai, "resolve_attachments", counted)
    big = {"event": "tool", "timestamp": AT, "id": "c1", "function": "f", "result": 2**64 + 1}
    events = [
        model("plain", (10, 2)),
        {"event": "state", "timestamp": AT, "changes": [{"op": "add", "value": "x"}]},
        model(held, (3, 1), input=[{"role": "user", "content": LOST}]),
        big,
    ]
    path = written(tmp_path, log(events, attachments={"a" * 32: "from the attachment"}), "json")
    run = load_run(path)
    answers = [e["output"] for e in run.events or () if e["type"] == "llm.response"]
    assert answers == ["plain", "from the attachment"]
    assert [e["output"] for e in run.events or () if e["type"] == "tool.result"] == [2**64 + 1]
    assert any("lacks 1 attachment its events name" in n for n in run.read.notes)
    assert [v for v in walked if isinstance(v, dict) and "event" in v] == events[2:]
    assert all(
        isinstance(v, dict | list) or (isinstance(v, str) and v.startswith("attachment://"))
        for v in walked
    )


def test_an_attachment_of_a_sample_read_from_its_messages_is_unknown_too(tmp_path: Path) -> None:
    messages = [{"role": "user", "content": "q"}, {"role": "assistant", "content": LOST}]
    path = written(tmp_path, log([], messages=messages), "json")
    assert evaldsl.compile('not answer contains "x"').check(load_run(path)).statuses == ["error"]


# --- sample ids --------------------------------------------------------------------------------


@pytest.mark.parametrize(("first", "second"), [("fr", "fr"), (1, "1")])
def test_samples_that_share_an_id_are_an_error_not_one_sample_read_twice(
    tmp_path: Path, first: Any, second: Any
) -> None:
    """Two samples of one id (`1` and `"1"` are one id too) made two cases that both read
    the same sample: the other was never checked, and the run passed on what it did (here:
    only the sample renamed calls `lookup`, so `no tool lookup` passed twice). Each case of
    that id is now an error naming the samples, at the second one's place in the log."""
    two = json.loads((DATA / "inspect-two-samples.json").read_text(encoding="utf-8"))
    samples = two.pop("samples")
    samples[0]["id"], samples[1]["id"] = first, second
    text = json.dumps(two)[:-1] + ', "samples": [\n' + ",\n".join(map(json.dumps, samples))
    (tmp_path / "log.json").write_text(text + "\n]}", encoding="utf-8")  # (samples[1]: line 3)
    (tmp_path / "s.eval").write_text(
        'suite "s"\ncase "c"\n  trace "log.json" as inspect\n  no tool lookup\n',
        encoding="utf-8",
    )
    report = tmp_path / "report.json"
    done = run_evaldsl("run", "--no-history", "--json", str(report), "s.eval", cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    cases = json.loads(report.read_text(encoding="utf-8"))["suites"][0]["cases"]
    said = f'2 samples of this Inspect AI log have the id "{first}" (samples[0], samples[1])'
    assert [c["outcome"] for c in cases] == ["error", "error"]
    assert all(said in c["error"] for c in cases)
    shown = run_evaldsl("inspect", "log.json", cwd=tmp_path)
    assert shown.returncode == 1 and "log.json:3:1: " + said in shown.stderr, shown.stderr
    assert "Traceback" not in shown.stderr + done.stderr


def test_samples_of_one_id_in_two_epochs_are_two_cases(tmp_path: Path) -> None:
    two = json.loads((DATA / "inspect-two-samples.json").read_text(encoding="utf-8"))
    two["samples"][1]["id"], two["samples"][1]["epoch"] = "fr", 2
    path = tmp_path / "log.json"
    path.write_text(json.dumps(two), encoding="utf-8")
    assert [load_run(path, sample=s).format for s in ("fr", "fr@2")] == ["inspect", "inspect"]


# --- tools the provider ran ------------------------------------------------------------------


def test_the_tools_the_provider_ran_are_calls(tmp_path: Path) -> None:
    """Inspect keeps the calls of a tool the provider ran (an OpenAI web search, a remote
    MCP server's tool) in the reply's content as `ContentToolUse` parts (`type:
    "tool_use"`, `tool_type`, `id`, `name`, `arguments` and `result` as JSON text,
    `error`), with no `tool` event: each is a call. Inspect's OpenAI provider names a web
    search by its action (`search`) and keeps no result (`""`): unknown, never none."""
    searched = {
        "type": "tool_use",
        "tool_type": "web_search",
        "id": "ws_1",
        "name": "search",
        "arguments": '{"type": "search", "query": "weather Oslo"}',
        "result": "",
    }
    listed = {
        "type": "tool_use",
        "tool_type": "mcp_call",
        "id": "mcpl_1",
        "name": "mcp_list_tools",
        "context": "deepwiki",
        "arguments": "",
        "result": '[{"name": "ask_question"}]',
    }
    asked = {
        "type": "tool_use",
        "tool_type": "mcp_call",
        "id": "mcp_1",
        "name": "ask_question",
        "context": "deepwiki",
        "arguments": '{"repo": "a/b"}',
        "result": "It parses.",
    }
    failed = asked | {"id": "mcp_2", "result": "", "error": "server unreachable"}
    text = {"type": "text", "text": "Oslo: 12 C."}
    answer = model("", (30, 8))
    answer["output"]["choices"][0]["message"]["content"] = [searched, listed, asked, failed, text]
    path = written(tmp_path, log([answer]), "json")
    checked = evaldsl.compile(
        'tool calls == 3; tool web_search called once; tool web_search args $.query == "weather '
        'Oslo"; tool web_search result contains "rain"; tool ask_question called twice; '
        'tool ask_question result == "It parses."; tool ask_question result == "server '
        'unreachable"; answer == "Oslo: 12 C."; steps == 1'
    ).check(load_run(path))
    assert checked.statuses == ["pass"] * 3 + ["error"] + ["pass"] * 5, checked.statuses
    events = load_run(path).events
    errors = [e.get("isError") for e in events if e["type"] == "tool.result"]
    assert errors == [None, True]
    read = load_run(path).read
    assert read is not None
    assert read.skipped["`tool_use` parts listing an MCP server's tools"] == 1


# --- why a model stopped ---------------------------------------------------------------------


@pytest.mark.parametrize("reason", ["max_tokens", "model_length", "content_filter"])
def test_a_model_call_s_stop_reason_that_leaves_its_answer_not_whole_is_read(
    tmp_path: Path, reason: str
) -> None:
    """Inspect's `ChatCompletionChoice.stop_reason` (`StopReason`: `stop`, `max_tokens`,
    `model_length`, `tool_calls`, `content_filter`, `unknown`) says when the answer is not
    whole: noted, as the other formats note theirs; and an answer the content filter left
    empty is unknown (an error verdict naming the filter), never "" that `not answer
    contains "…"` passes."""
    cut = model("Paris is the cap", (10, 4))
    cut["output"]["choices"][0]["stop_reason"] = reason
    path = written(tmp_path, log([cut]), "json")
    checked = evaldsl.compile('answer == "Paris is the cap"; steps == 1').check(load_run(path))
    assert checked.statuses == ["pass", "pass"]
    notes = summarize(path)[0].notes
    assert any(f"stop_reason `{reason}`" in n and "may be cut" in n for n in notes), notes
    removed = model("", (10, 0))
    removed["output"]["choices"][0]["stop_reason"] = reason
    path = written(tmp_path, log([removed]), "json")
    checked = evaldsl.compile('not answer contains "bomb"; tokens == 10').check(load_run(path))
    if reason == "content_filter":
        assert checked.statuses == ["error", "pass"]
        assert "content filter removed it" in checked.verdicts[0].message
    else:  # (a limit reached before any text: the model wrote none)
        assert checked.statuses == ["pass", "pass"]


@pytest.mark.parametrize("how", ["error", "pending"])
def test_a_model_call_with_no_reply_has_no_answer_not_an_empty_one(
    tmp_path: Path, how: str
) -> None:
    """A model event whose call failed (`ModelEvent.error`) or had not returned when the
    log was written (`pending`, as Inspect marks an event it has not completed) holds an
    empty `ModelOutput` (no `choices`): its answer is unknown, an error verdict saying
    why, never "" that `not answer contains "…"` passes. Its step and error still count."""
    failed = {"event": "model", "timestamp": AT, "model": "openai/gpt-4o-mini"}
    failed["output"] = {"model": "gpt-4o-mini", "choices": []}
    failed |= {"error": "RateLimitError: 429"} if how == "error" else {"pending": True}
    path = written(tmp_path, log([model("Paris.", (10, 2)), failed]), "json")
    errors = int(how == "error")
    said = f'not answer contains "x"; answer[1] == "Paris."; steps == 2; errors == {errors}'
    checked = evaldsl.compile(said).check(load_run(path))
    assert checked.statuses == ["error", "pass", "pass", "pass"]
    said = "failed" if how == "error" else "had not returned"
    assert said in checked.verdicts[0].message


def test_a_tool_still_running_has_no_result_not_an_empty_one(tmp_path: Path) -> None:
    """A `tool` event Inspect had not completed when the log was written (`pending:
    true`; a sample stopped while its tool ran) holds `ToolEvent`'s default `result`,
    "": the call ran, its result is unknown (an error verdict), never ""."""
    call = {"id": "c1", "function": "bash", "arguments": {"cmd": "sleep 600"}, "type": "function"}
    asks = model("", (10, 2))
    asks["output"]["choices"][0]["message"]["tool_calls"] = [call]
    running = {"event": "tool", "timestamp": AT, "type": "function", "id": "c1"}
    running |= {"function": "bash", "arguments": call["arguments"], "result": "", "pending": True}
    path = written(tmp_path, log([asks, running]), "json")
    said = 'tool bash called once; not tool bash result contains "error"; tool bash result == ""'
    checked = evaldsl.compile(said).check(load_run(path))
    assert checked.statuses == ["pass", "error", "error"]
    running["pending"] = None  # (as Inspect writes a completed one)
    path = written(tmp_path, log([asks, running]), "json")
    assert evaldsl.compile(said).check(load_run(path)).statuses == ["pass", "pass", "pass"]


def test_a_tool_result_of_content_is_its_text(tmp_path: Path) -> None:
    """Inspect's `ToolResult` may be content (`ContentText`, `ContentImage`, …, or a list
    of them, as a tool that returns text and a screenshot gives it): the result is the
    text of its text parts, as the sample's `tool` messages are read, not the list
    (whose `result contains` failed, and `not result contains` passed, on its text)."""
    call = {"id": "c1", "function": "bash", "arguments": {"cmd": "ls"}, "type": "function"}
    asks = model("", (10, 2))
    asks["output"]["choices"][0]["message"]["tool_calls"] = [call]
    shot = {"type": "image", "image": "data:image/png;base64,iVBO"}
    ran = {"event": "tool", "timestamp": AT, "type": "function", "id": "c1", "function": "bash"}
    ran |= {"arguments": call["arguments"], "result": [{"type": "text", "text": "a.txt"}, shot]}
    path = written(tmp_path, log([asks, ran]), "json")
    said = 'tool bash result == "a.txt"; not tool bash result contains "b.txt"'
    assert evaldsl.compile(said).check(load_run(path)).statuses == ["pass", "pass"]
    ran["result"] = {"type": "text", "text": "a.txt"}  # (one `ContentText`)
    path = written(tmp_path, log([asks, ran]), "json")
    assert evaldsl.compile(said).check(load_run(path)).statuses == ["pass", "pass"]


def test_a_call_whose_arguments_inspect_could_not_parse_has_unknown_arguments(
    tmp_path: Path,
) -> None:
    """Inspect keeps `{}` as the arguments of a call whose JSON it could not parse, and
    says so in the call's `parse_error` (its `parse_tool_call`); the `tool` event then
    fails with a `parsing` error. The arguments are unknown (an error verdict saying why),
    never `{}` that `not tool … args $.city == "Paris"` or `args == {}` passes on."""
    bad = 'Error parsing the following tool call arguments:\n\n{"city": "Par\n\nError details: …'
    call = {"id": "c1", "function": "weather", "arguments": {}, "parse_error": bad}
    asks = model("", (10, 2))
    asks["output"]["choices"][0]["message"]["tool_calls"] = [call | {"type": "function"}]
    error = {"type": "parsing", "message": bad}
    ran = {"event": "tool", "timestamp": AT, "type": "function", "id": "c1", "function": "weather"}
    ran |= {"arguments": {}, "result": "", "error": error}
    path = written(tmp_path, log([asks, ran]), "json")
    checked = evaldsl.compile(
        'tool weather called once; not tool weather args $.city == "Paris"; tool weather args == {}'
    ).check(load_run(path))
    assert checked.statuses == ["pass", "error", "error"]
    assert "did not parse" in checked.verdicts[1].message
    assert any("did not parse" in n for n in summarize(path)[0].notes)


@pytest.mark.parametrize(
    ("error", "is_error"),
    [
        (None, False),  # (Inspect omits a null; other exporters write it)
        ({"type": "unknown", "message": "boom"}, True),
    ],
)
def test_a_tool_message_is_an_error_result_only_when_its_error_is_set(
    tmp_path: Path, error: Any, is_error: bool
) -> None:
    """A `tool` message with `"error": null` was an error result: a key present was
    taken for an error, whatever it held."""
    call = {"id": "c1", "function": "weather", "arguments": {}}
    messages = [
        {"role": "user", "content": "q"},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "c1", "content": "sunny", "error": error},
        {"role": "assistant", "content": "It is sunny."},
    ]
    run = load_run(written(tmp_path, log([], messages=messages), "json"))
    results = [e for e in run.events or () if e["type"] == "tool.result"]
    assert [(r["output"], bool(r.get("isError"))) for r in results] == [("sunny", is_error)]
