"""LangSmith runs, as the LangSmith SDK serialises them, as normalised events.

Takes `Items` of LangSmith `Run` objects (`id`, `name`, `run_type`, `start_time`,
`end_time`, `inputs`, `outputs`, `error`, `extra`, `trace_id`, `parent_run_id`,
`dotted_order`, `prompt_tokens`/`completion_tokens`, `child_runs`): a run tree as
`Client.read_run(id, load_child_runs=True)` gives it (a root run with nested
`child_runs`), or a flat JSON array or JSONL of runs as `Client.list_runs(trace_id=…)`
exports them; both give the same events. Gives the events of `providers` (format
"langsmith"). A run that appears twice (nested and listed) is read once, by `id`.

Runs are taken in execution order: by `dotted_order` when every run has one (a parent
sorts before its children), else by `start_time` (ISO; a time without a zone is UTC),
else as they appear (a tree depth first).

- `llm` run: one step; the answer text and the tool calls it asked for come from
  `outputs` in the shapes the LangSmith documentation gives for LLM runs: LangChain's
  `generations` (the first generation's message `content`, else its `text`), an OpenAI
  Chat Completions body as `wrap_openai` logs it (`choices[0].message`), an Anthropic
  Messages body (`type: message`, `content` blocks), `{message: {...}}`, `{messages:
  [...]}` (the last assistant message), a message `{content, …}`, or `{"output": text}`
  (what `@traceable(run_type="llm")` logs for a text return). A message's calls are its
  `tool_calls` (LangChain `{name, args, id}` or OpenAI `{id, function}`, also in
  `additional_kwargs`) and LangChain's `invalid_tool_calls` (arguments that did not parse:
  the text, noted, as the `openai` format keeps it), else its content's
  `tool_use`/`tool_call` blocks; an Anthropic reply's (a Messages body, or the content
  blocks ChatAnthropic keeps) calls of the tools the API ran (`server_tool_use`,
  `mcp_tool_use`) come before them, and its `…_tool_result` blocks are their results, as
  the `anthropic` format reads them (`anthropic.tool_result`); so do ChatOpenAI's
  Responses API built-in tools (`web_search_call`, … items, in the content or in
  `additional_kwargs.tool_outputs`: `openai.builtin_call`), its `mcp_call` items (a
  remote MCP server's tool, with its own output: `openai.mcp_call`) and LangChain's standard
  `server_tool_call`/`server_tool_result` blocks. Tokens from the
  run's `prompt_tokens`/`completion_tokens` (unless both are 0 beside a usage recorded
  below), else the output's `usage_metadata` (`input_tokens`/`output_tokens`), `usage`
  (OpenAI or Anthropic: a Messages body's input counts its prompt-cache tokens, priced
  apart, as the `anthropic` format reads it; an OpenAI usage's `prompt_tokens_details.
  cached_tokens`, here or in `llm_output.token_usage`, are among its input, priced at
  the model's cached-input price as the `openai` format prices them, unless the run's
  own input is another), `llm_output.token_usage`, the generation message's
  `usage_metadata`, or `extra.metadata.usage_metadata` (`run.set(usage_metadata=…)`);
  a `usage_metadata`'s `input_token_details` (`cache_read`, `cache_creation`, among its
  `input_tokens` for every provider) are priced as the provider bills them (Anthropic's
  multiples for its runs, by `ls_provider` or a Claude model; else the model's
  cached-input price for the reads).
  Tokens are read from `llm` runs only: a chain run's counts are LangSmith's sums of its
  children's. The model is `extra.invocation_params.model` (or `model_name`), else
  `extra.metadata.ls_model_name`, else the output body's `model`; the service tier that
  billed it, an OpenAI body's `service_tier` or an Anthropic one's `usage.service_tier`
  (`prices.body_tier`), else a LangChain generation's message's `response_metadata`
  read so (`ChatOpenAI`'s `service_tier`, `ChatAnthropic`'s `usage.service_tier`);
- an OpenAI reply whose message has no other text has its refusal as its answer, noted
  (a body's message's `refusal`, or the AIMessage's `additional_kwargs.refusal` where
  langchain-openai keeps it: `openai.answer_or_refusal`);
- an OpenAI reply the content filter stopped (`finish_reason: "content_filter"`: a
  body's first choice's, or LangChain's generation's `generation_info` or message's
  `response_metadata`) is noted, and its answer, when the filter left no text, unknown
  (`openai.filtered`), never "";
- an `llm` run whose `outputs` are in none of these shapes is skipped and counted, with a
  note that its step, tokens and answer are not counted (never an empty answer); one with
  no `outputs` and an `error` is an error, not a step; one with neither (still running,
  or exported without outputs) is skipped and counted;
- `tool` run: a tool call of `name` with `inputs` as its arguments (a lone
  `{"input": "<JSON text of an object>"}`, or of a dict's Python repr, as LangChain's
  tracer logs a tool's input (`str()` of it: `{'city': 'Oslo'}`, read as literals only),
  is that object; other text stays `{"input": text}`), and `outputs` as its result
  (`{"output": x}` is `x`; a serialised LangChain `ToolMessage` is its `content`, the
  text of its text blocks when it is a list of content blocks with some, an
  error result when its `status` is `"error"`: a tool error LangChain handled). When
  an LLM run asked for the call (by the ToolMessage's `tool_call_id`, else the oldest
  unanswered call of that name), the tool run gives that call its result instead of
  counting a second call: the arguments are the LLM's (a tool run never answers another
  tool run's call). An `error` makes the result an
  error result. A tool run without `outputs` or `error` is a call without a result;
- `chain`, `retriever`, `embedding`, `prompt`, `parser` runs are skipped and counted;
- an `error` is an `agent.error` where it started: a run whose descendant also failed
  (LangSmith records the error again on every ancestor) is not counted twice.

The run's latency is from the first `start_time` to the last `end_time`. Cost is
evaldsl's price table by model, as for every format: LangSmith's own `total_cost` is not
read (it depends on the workspace's pricing). A `child_runs` that is not a list, an item
or child that is not a run, and a token count that is negative or not a number are the
run's error, naming where.
"""

from __future__ import annotations

import ast
import math
from datetime import UTC, datetime
from typing import Any

from evaldsl.language.jsjson import js_json
from evaldsl.runs.anthropic import answer_text, read_usage, tool_result
from evaldsl.runs.model import MISSING, describe
from evaldsl.runs.openai import (
    answer_or_refusal,
    arguments_of,
    builtin_call,
    filtered,
    is_builtin_call,
    mcp_call,
    message_refusal,
)
from evaldsl.runs.prices import body_tier
from evaldsl.runs.providers import (
    Items,
    Trace,
    an_object,
    blocks_text,
    link_id,
    parse_json_text,
    text_of_parts,
    text_value,
    tool_name,
    usage_of,
)
from evaldsl.runs.text import (
    CACHE_1H,
    BadUsage,
    count_text,
    openai_usage_cached,
    token_count,
)

RUN_TYPES = ("llm", "chain", "tool", "retriever", "embedding", "prompt", "parser")
_RUN_KEYS = ("inputs", "outputs", "child_runs", "dotted_order", "trace_id", "parent_run_id")
_USAGE = (("input_tokens", "output_tokens"), ("prompt_tokens", "completion_tokens"))
_HINT = 'a LangSmith run has "run_type", "name" and "inputs"; `child_runs` is a list of runs'


def is_langsmith_run(d: Any) -> bool:
    """A LangSmith run object: a known `run_type` and `name` beside a run field."""
    return (
        isinstance(d, dict)
        and d.get("run_type") in RUN_TYPES
        and isinstance(d.get("name"), str)
        and any(k in d for k in _RUN_KEYS)
    )


def _time(value: Any) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        t = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return t if t.tzinfo is not None else t.replace(tzinfo=UTC)


def _flatten(items: Items) -> tuple[list[dict[str, Any]], dict[int, str | None]]:
    """Every run of the items (children after their parent, each id once) and each run's
    parent id (from the nesting, else `parent_run_id`)."""
    runs: list[dict[str, Any]] = []
    parents: dict[int, str | None] = {}
    seen: set[str] = set()

    # Where a run is, for an error's message: the item's place, then each parent's name
    # and the child's index. Kept as (where the parent is, parent, index) links and put
    # into words only for an error: a text made for every run held every ancestor's name,
    # quadratic in a deep tree's depth and names (a 9.7 MB tree took 14 s and 4.4 GB).
    Where = tuple[Any, dict[str, Any], int] | str

    def words(where: Where) -> str:
        steps: list[str] = []
        while not isinstance(where, str):
            where, parent, n = where
            steps.append(f" → `{parent['name']}`.child_runs[{n}]")
        return where + "".join(reversed(steps))

    def visit(run: Any, index: int, where: Where, parent: str | None) -> None:
        if not is_langsmith_run(run):
            raise items.error(
                index, f"{words(where)} is {describe(run)}, not a LangSmith run", _HINT
            )
        rid = str(run["id"]) if run.get("id") is not None else None
        if rid is not None and rid in seen:
            return
        if rid is not None:
            seen.add(rid)
        runs.append(run)
        up = run.get("parent_run_id")
        parents[id(run)] = parent if parent is not None else (str(up) if up else None)
        children = run.get("child_runs")
        if children is None:
            return
        if not isinstance(children, list):
            raise items.error(
                index,
                f"{words(where)}: `child_runs` of run `{run['name']}` is "
                f"{describe(children)}, not a list",
                _HINT,
            )
        for n, child in enumerate(children):
            visit(child, index, (where, run, n), rid)

    for index, item in enumerate(items.values):
        visit(item, index, items.where(index), None)
    return runs, parents


def read_langsmith(items: Items, why: str) -> tuple[Trace, float | None]:
    """The events of LangSmith runs (see the module doc) and the latency in ms."""
    trace = Trace("langsmith", items.path, why)
    runs, parents = _flatten(items)
    orders = [r.get("dotted_order") for r in runs]
    starts = [_time(r.get("start_time")) for r in runs]
    if runs and all(isinstance(o, str) and o for o in orders):
        runs = [runs[i] for i in sorted(range(len(runs)), key=lambda i: str(orders[i]))]
    elif all(t is not None for t in starts):
        order = sorted(range(len(runs)), key=lambda i: starts[i])  # type: ignore[arg-type,return-value]
        runs = [runs[i] for i in order]
    failing = _failing_ancestors(runs, parents)
    asked: set[str] = set()  # the callIds of tool calls LLM runs asked for
    for run in runs:
        _run(run, trace, asked, repeated=id(run) in failing)
    first = [t for t in starts if t is not None]
    last = [t for t in (_time(r.get("end_time")) for r in runs) if t is not None]
    latency = (max(last) - min(first)).total_seconds() * 1000 if first and last else None
    return trace, latency


def _failing_ancestors(runs: list[dict[str, Any]], parents: dict[int, str | None]) -> set[int]:
    """The runs (by `id()`) one of whose descendants has an error."""
    by_id = {str(r["id"]): r for r in runs if r.get("id") is not None}
    marked: set[int] = set()
    for run in runs:
        if not run.get("error"):
            continue
        up = parents.get(id(run))
        hops = 0
        while up is not None and up in by_id and hops <= len(runs):
            parent = by_id[up]
            if id(parent) in marked:
                # marked by an earlier walk, which went on to the top (or round a cycle):
                # so are all its ancestors. (Each failing run of a deep chain, where a
                # failure fails every run above it, walked up to the top again: quadratic.)
                break
            marked.add(id(parent))
            up = parents.get(id(parent))
            hops += 1
    return marked


def _run(run: dict[str, Any], trace: Trace, asked: set[str], *, repeated: bool) -> None:
    kind = run["run_type"]
    name = run["name"]
    start = run.get("start_time") if isinstance(run.get("start_time"), str) else None
    end = run.get("end_time") if isinstance(run.get("end_time"), str) else None
    error = run.get("error")
    outputs = run.get("outputs")
    if kind == "llm":
        if outputs is None:
            if not error:
                trace.skip("`llm` runs without outputs (still running, or not exported)")
        else:
            read = _llm_output(outputs)
            if read is None:
                keys = (
                    ", ".join(f"`{k}`" for k in list(outputs)[:4])
                    if isinstance(outputs, dict)
                    else describe(outputs)
                )
                trace.skip(f"`llm` runs whose outputs evaldsl does not read ({keys})")
                trace.note(
                    "an `llm` run's outputs are in no shape evaldsl reads: its step, tokens "
                    "and answer are not counted"
                )
            else:
                trace.saw("llm run")
                text, calls, results, usage, body_model = read
                # (a reply whose only text is its refusal has it as its answer; one the
                # content filter removed whole is unknown, never "")
                text = answer_or_refusal(text, _refusal(outputs), trace)
                answer = filtered(text, _finish_reason(outputs), trace)
                body_usage, cache = _anthropic_usage(outputs)
                if cache is not None:
                    usage = body_usage  # (the input counting the prompt-cache tokens)
                read_from: float | None = None  # (the input OpenAI's cached reads are among)
                model = _model(run.get("extra")) or body_model
                if cache is None and usage is not None:
                    meta = _metadata_usage(outputs)
                    if meta is not None:  # (LangChain's, whatever the provider)
                        cache = _metadata_cache(meta, run.get("extra"), model)
                    else:
                        cache = openai_usage_cached(_usage_object(outputs))
                    read_from = usage[0]
                top = {
                    k: run[k]
                    for k in ("prompt_tokens", "completion_tokens")
                    if run.get(k) is not None
                }
                tokens = usage_of(top, (("prompt_tokens", "completion_tokens"),))
                recorded = usage or _set_usage(run.get("extra"))
                if tokens is None or (tokens == (0, 0) and recorded is not None):
                    tokens = recorded
                    if usage is None and tokens is not None:  # (`run.set(usage_metadata=…)`)
                        meta = _set_metadata(run.get("extra"))
                        cache, read_from = _metadata_cache(meta, run.get("extra"), model), tokens[0]
                # (the cache's split prices the body's own counts, not the run's; OpenAI's
                # reads are among an input the run's own count may give too)
                same = read_from is not None and tokens is not None and tokens[0] == read_from
                cache = cache if tokens is usage or same else None
                # (an OpenAI or Anthropic body says the service tier that billed it, a
                # LangChain chat model's generation in its message's `response_metadata`)
                tier = body_tier(outputs)
                if tier is None:
                    tier = body_tier(_generation_metadata(outputs))
                trace.llm(answer, tokens, model=model, start=start, end=end, cache=cache, tier=tier)
                for tool, args, cid in calls:
                    args = arguments_of(args, f"{tool} ({cid})" if cid else tool, trace)
                    asked.add(trace.call(tool, args, cid, end))
                for found in results:  # (what the provider's own tools gave)
                    _give_result(found, trace)
    elif kind == "tool":
        trace.saw("tool run")
        result, call_id, failed = _tool_output(outputs)
        cid = trace.known_call(call_id, name)
        if cid is None or cid not in asked:  # a tool run never answers another tool run
            cid = trace.call(name, _tool_args(run.get("inputs")), call_id, start)
        if error:
            trace.result(cid, str(error), is_error=True, at=end)
        elif outputs is not None:
            trace.result(cid, result, is_error=failed, at=end)
    else:
        trace.skip(f"`{kind}` runs (structure, not an event)")
    if error:
        if repeated:
            trace.skip("errors a child run already counts")
        else:
            trace.error(str(error), end)


# --- llm outputs -------------------------------------------------------------------------

Call = tuple[str, Any, str | None]


def _llm_output(
    outputs: Any,
) -> tuple[str, list[Call], list[Result], tuple[float, float] | None, str | None] | None:
    """(answer text, tool calls, result blocks, usage, model) of an llm run's outputs
    (`_read_message`); `None` when they are in no shape the module doc lists."""
    if not isinstance(outputs, dict):
        return None
    usage = _usage(outputs)
    model = outputs.get("model") if isinstance(outputs.get("model"), str) else None
    generations = outputs.get("generations")
    if isinstance(generations, list) and generations:
        first = generations[0]
        if isinstance(first, list):
            first = first[0] if first else None
        if not isinstance(first, dict):
            return None
        message = _message(first.get("message"))
        if message is not None:
            text, calls, results = _read_message(message)
            if not text and isinstance(first.get("text"), str):
                text = first["text"]
            usage = usage or usage_of(message.get("usage_metadata"), _USAGE)
            meta = message.get("response_metadata")
            if model is None and isinstance(meta, dict):
                found = meta.get("model_name", meta.get("model"))
                model = found if isinstance(found, str) else None
            return text, calls, results, usage, model
        if isinstance(first.get("text"), str):
            return first["text"], [], [], usage, model
        return None
    choices = outputs.get("choices")
    if isinstance(choices, list) and choices:
        choice = choices[0]
        message = choice.get("message") if isinstance(choice, dict) else None
        if not isinstance(message, dict):
            return None
        return (*_read_message(message), usage, model)
    if isinstance(outputs.get("content"), list) and outputs.get("type") == "message":
        return (*_read_message(outputs), usage, model)  # an Anthropic Messages body
    if isinstance(outputs.get("message"), dict):
        return (*_read_message(outputs["message"]), usage, model)
    messages = outputs.get("messages")
    if isinstance(messages, list):
        said = [m for m in map(_message, messages) if m is not None and _is_assistant(m)]
        return (*_read_message(said[-1]), usage, model) if said else None
    message = _message(outputs)
    if message is not None and "content" in message:
        return (*_read_message(message), usage, model)
    if list(outputs) == ["output"]:
        inner = outputs["output"]
        if isinstance(inner, str):
            return inner, [], [], usage, model
        if isinstance(inner, dict):
            return _llm_output(inner)
    return None


def _finish_reason(outputs: Any) -> Any:
    """Why the model stopped, as an OpenAI-shaped output says it: a Chat Completions
    body's first choice's `finish_reason`, or LangChain's first generation's
    (`generation_info`, else its message's `response_metadata`); None for another."""
    if not isinstance(outputs, dict):
        return None
    choices = outputs.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        return choices[0].get("finish_reason")
    first = _first_generation(outputs)
    if first is None:
        return None
    info = first.get("generation_info")
    if isinstance(info, dict) and info.get("finish_reason") is not None:
        return info["finish_reason"]
    message = _message(first.get("message"))
    meta = message.get("response_metadata") if message is not None else None
    return meta.get("finish_reason") if isinstance(meta, dict) else None


def _first_generation(outputs: dict[str, Any]) -> dict[str, Any] | None:
    """LangChain's first generation of an output's `generations` (a list, or a list of
    lists: one per prompt), or None."""
    generations = outputs.get("generations")
    first = generations[0] if isinstance(generations, list) and generations else None
    if isinstance(first, list):
        first = first[0] if first else None
    return first if isinstance(first, dict) else None


def _refusal(outputs: Any) -> str:
    """The refusal of an OpenAI reply's message, as the `openai` format reads one
    (`openai.message_refusal`): a Chat Completions body's first choice's, or LangChain's
    first generation's AIMessage's (langchain-openai keeps it in
    `additional_kwargs.refusal`); "" for none."""
    if not isinstance(outputs, dict):
        return ""
    choices = outputs.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        message = choices[0].get("message")
        return message_refusal(message) if isinstance(message, dict) else ""
    first = _first_generation(outputs)
    message = _message(first.get("message")) if first is not None else None
    if message is None:
        return ""
    extra = message.get("additional_kwargs")
    said = extra.get("refusal") if isinstance(extra, dict) else None
    where = "an AIMessage"
    return text_value(said, "additional_kwargs.refusal", where) or message_refusal(message)


def _anthropic_usage(
    outputs: Any,
) -> tuple[tuple[float, float] | None, dict[str, float] | None]:
    """The tokens of an Anthropic Messages body as `wrap_anthropic` logs it, counting its
    prompt-cache tokens, and their split (`anthropic.read_usage`); `(None, None)` for any
    other output, or one whose `usage_metadata` (read first) counts them."""
    if (
        isinstance(outputs, dict)
        and outputs.get("type") == "message"
        and isinstance(outputs.get("content"), list)
        and outputs.get("usage_metadata") is None
    ):
        return read_usage(outputs.get("usage"))
    return None, None


def _generation_metadata(outputs: dict[str, Any]) -> Any:
    """The `response_metadata` of the message of an llm run's first LangChain generation
    (where `ChatOpenAI` keeps the response's `service_tier`, `ChatAnthropic` its `usage`),
    or None when it has none."""
    generations = outputs.get("generations")
    first = generations[0] if isinstance(generations, list) and generations else None
    if isinstance(first, list):
        first = first[0] if first else None
    message = _message(first.get("message")) if isinstance(first, dict) else None
    return message.get("response_metadata") if message is not None else None


def _message(value: Any) -> dict[str, Any] | None:
    """A message dict: plain, or LangChain's serialised `{"lc": 1, "kwargs": {...}}`."""
    if not isinstance(value, dict):
        return None
    if value.get("lc") is not None and isinstance(value.get("kwargs"), dict):
        kwargs: dict[str, Any] = value["kwargs"]
        return kwargs
    return value


def _is_assistant(message: dict[str, Any]) -> bool:
    return message.get("role", message.get("type")) in ("assistant", "ai", "AIMessage")


#: What gives a call the provider ran its result: an Anthropic `…_tool_result` block (read
#: by `anthropic.tool_result`), or a call's id and its result as `openai.builtin_call`
#: gives it (`(output, is_error)`; `MISSING`: not recorded, unknown).
Result = dict[str, Any] | tuple[str | None, Any]


def _read_message(message: dict[str, Any]) -> tuple[str, list[Call], list[Result]]:
    """The text, tool calls and results of an assistant message: `tool_calls` (see
    `_calls`), else the content's `tool_use` (Anthropic) or `tool_call` (LangChain)
    blocks; before them, the calls of the tools the provider ran, which LangChain leaves
    out of `tool_calls`, with their results: an Anthropic reply's `server_tool_use`/
    `mcp_tool_use` blocks and `…_tool_result` blocks; the OpenAI Responses API's built-in
    tools' items (`web_search_call`, …: `openai.builtin_call`), as content blocks
    (`output_version="responses/v1"`) or in `additional_kwargs.tool_outputs` (`"v0"`);
    and LangChain's standard `server_tool_call`/`server_tool_result` blocks (`"v1"`).
    The text of a cited reply's blocks is read as the `anthropic` format reads it
    (`anthropic.answer_text`: Anthropic splits the text around each cited claim); other
    content's text parts are joined with "\n"."""
    content = message.get("content")
    calls = _calls(message)
    listed = {cid for _, _, cid in calls}
    ran: list[Call] = []  # the provider's own tools' calls
    read: list[Call] = []  # `tool_use`/`tool_call` blocks, when `tool_calls` lists none
    results: list[Result] = []
    texts: list[tuple[int, str, bool]] = []  # each text block: where, its text, cited
    extra = message.get("additional_kwargs")
    outputs = extra.get("tool_outputs") if isinstance(extra, dict) else None
    blocks = content if isinstance(content, list) else []
    for n, block in enumerate([*blocks, *(outputs if isinstance(outputs, list) else ())]):
        kind = block.get("type") if isinstance(block, dict) else None
        if not isinstance(kind, str):
            continue
        if kind == "text" and isinstance(block.get("text"), str) and n < len(blocks):
            texts.append((n, block["text"], bool(block.get("citations"))))
        elif is_builtin_call(block) or kind == "mcp_call":
            name, args, cid, result = (mcp_call if kind == "mcp_call" else builtin_call)(block)
            ran.append((name, args, cid))
            results.append((cid, result))
        elif kind == "server_tool_call":
            where = "a `server_tool_call` block"
            name = tool_name(block.get("name", MISSING), "name", where)
            ran.append((name, block.get("args", {}), link_id(block.get("id"), "id", where)))
        elif kind == "server_tool_result":
            where = "a `server_tool_result` block"
            cid = link_id(block.get("tool_call_id"), "tool_call_id", where)
            results.append((cid, (block.get("output"), block.get("status") == "error")))
        elif kind.endswith("_tool_result") and kind != "tool_result":
            results.append(block)
        elif kind in _CALL_BLOCKS or (kind in _OWN_CALL_BLOCKS and not calls):
            name = tool_name(block.get("name", MISSING), "name", f"a `{kind}` block")
            cid = link_id(block.get("id"), "id", f"a `{kind}` block")
            if cid is None or cid not in listed:
                args = block.get("args" if kind == "tool_call" else "input", {})
                (read if kind in _OWN_CALL_BLOCKS else ran).append((name, args, cid))
    text = text_of_parts(content)
    if any(cited for _, _, cited in texts):
        text = answer_text(texts)
    return text, [*ran, *calls, *read], results


def _give_result(found: Result, trace: Trace) -> None:
    """Give a call the provider ran its result (`Result`)."""
    if isinstance(found, dict):
        tool_result(found, trace)
        return
    call_id, result = found
    cid = trace.known_call(call_id) if call_id is not None else None
    if cid is None:
        trace.skip("results of the provider's tools that name no call")
    elif result is MISSING:  # (not recorded: the request's `include` did not ask for it)
        trace.unread_result(cid)
    elif result is not None:
        trace.result(cid, result[0], is_error=result[1])


#: Content blocks of calls of the application's tools, and of the tools the API ran.
_OWN_CALL_BLOCKS = frozenset({"tool_use", "tool_call"})
_CALL_BLOCKS = frozenset({"server_tool_use", "mcp_tool_use"})


def _calls(message: dict[str, Any]) -> list[Call]:
    """The tool calls of a message: LangChain `{name, args, id}` or OpenAI
    `{id, function: {name, arguments}}` (in `tool_calls` or `additional_kwargs`), then
    LangChain's `invalid_tool_calls`: calls the model made whose arguments did not parse
    (`args`: the text it wrote), which LangChain leaves out of `tool_calls`. OpenAI's
    `arguments` and an invalid call's `args` stay text here: `_run` reads them as the
    `openai` format does (`openai.arguments_of`)."""
    listed = message.get("tool_calls")
    invalid = message.get("invalid_tool_calls")
    extra = message.get("additional_kwargs")
    if not listed and not invalid and isinstance(extra, dict):
        listed = extra.get("tool_calls")
    out: list[Call] = []
    for entry in listed if isinstance(listed, list) else []:
        call = an_object(entry, "a tool call of `tool_calls`")
        function = call.get("function")
        cid = link_id(call.get("id"), "id", "a tool call of `tool_calls`")
        if isinstance(function, dict):
            name = tool_name(function.get("name", MISSING), "function.name")
            out.append((name, function.get("arguments", ""), cid))
        else:
            out.append((tool_name(call.get("name", MISSING), "name"), call.get("args", {}), cid))
    where = "a tool call of `invalid_tool_calls`"
    for entry in invalid if isinstance(invalid, list) else []:
        call = an_object(entry, where)
        name = tool_name(call.get("name", MISSING), "name", where)
        args = call.get("args")  # (none written: unknown, never `{}`)
        out.append((name, MISSING if args is None else args, link_id(call.get("id"), "id", where)))
    return out


def _usage(outputs: dict[str, Any]) -> tuple[float, float] | None:
    for found in (
        usage_of(outputs.get("usage_metadata"), _USAGE),
        usage_of(outputs.get("usage"), _USAGE),
    ):
        if found is not None:
            return found
    llm_output = outputs.get("llm_output")
    if isinstance(llm_output, dict):
        return usage_of(llm_output.get("token_usage"), _USAGE)
    return None


def _usage_object(outputs: Any) -> Any:
    """The usage object `_usage` read the counts of an output's top level from: OpenAI's
    (a `wrap_openai` body's `usage`, LangChain's `llm_output.token_usage`) may count the
    input read from the prompt cache (`text.openai_usage_cached`); None for another."""
    if not isinstance(outputs, dict) or usage_of(outputs.get("usage_metadata"), _USAGE):
        return None
    if usage_of(outputs.get("usage"), _USAGE) is not None:
        return outputs.get("usage")
    llm_output = outputs.get("llm_output")
    return llm_output.get("token_usage") if isinstance(llm_output, dict) else None


def _set_usage(extra: Any) -> tuple[float, float] | None:
    """Usage set on the run (`run.set(usage_metadata=…)` keeps it in `extra.metadata`)."""
    return usage_of(_set_metadata(extra), _USAGE)


def _set_metadata(extra: Any) -> Any:
    """The `usage_metadata` set on the run (`extra.metadata`), or None."""
    metadata = extra.get("metadata") if isinstance(extra, dict) else None
    return metadata.get("usage_metadata") if isinstance(metadata, dict) else None


def _metadata_usage(outputs: Any) -> dict[str, Any] | None:
    """LangChain's `UsageMetadata` that `_llm_output` read an output's counts from (its own
    `usage_metadata`, else, with no provider usage beside it, its first generation's
    message's), or None when the counts came from elsewhere."""
    if not isinstance(outputs, dict):
        return None
    found = outputs.get("usage_metadata")
    if usage_of(found, _USAGE) is not None:
        return found if isinstance(found, dict) else None
    if _usage(outputs) is not None:
        return None
    generations = outputs.get("generations")
    if isinstance(generations, list) and generations:
        first = generations[0]
        if isinstance(first, list):
            first = first[0] if first else None
        message = _message(first.get("message")) if isinstance(first, dict) else None
        found = message.get("usage_metadata") if message is not None else None
        return found if isinstance(found, dict) and usage_of(found, _USAGE) else None
    if list(outputs) == ["output"]:
        return _metadata_usage(outputs["output"])
    return None


def _metadata_cache(usage: dict[str, Any], extra: Any, model: str | None) -> Any:
    """The prompt-cache tokens a LangChain `UsageMetadata` counts among its `input_tokens`
    (`input_token_details.cache_read`, `cache_creation`: LangChain sums every input kind
    into the input, whatever the provider) as a response's `cacheTokens`, priced as the
    provider bills them: Anthropic's (the run's `ls_provider`, or a Claude model on any
    provider: Bedrock, Vertex) writes and reads at its multiples of the input price,
    anyone else's reads at the model's cached-input price (OpenAI's; a model with none
    has no cost, never the input price) and writes as input; None when it counts none.
    Counts that are not numbers, or more than the input, are a `BadUsage`."""
    details = usage.get("input_token_details")
    if details is None:
        return None
    if not isinstance(details, dict):
        raise BadUsage(
            f"token usage `input_token_details` is {js_json(details)[:40]}, not an object of counts"
        )
    read = token_count(details.get("cache_read"), "input_token_details.cache_read")
    made = token_count(details.get("cache_creation"), "input_token_details.cache_creation")
    if not (read or made):
        return None
    counted = token_count(usage.get("input_tokens"), "input_tokens")
    if read + made > counted:
        raise BadUsage(
            f"token usage `input_token_details` counts {count_text(read + made)} prompt-cache "
            f"tokens, more than `input_tokens` ({count_text(counted)}), which counts them"
        )
    metadata = extra.get("metadata") if isinstance(extra, dict) else None
    provider = metadata.get("ls_provider") if isinstance(metadata, dict) else None
    if provider == "anthropic" or (model is not None and "claude" in model.lower()):
        hour = token_count(details.get(CACHE_1H), f"input_token_details.{CACHE_1H}")
        if hour > made:
            raise BadUsage(
                f"token usage `input_token_details.{CACHE_1H}` ({count_text(hour)}) is more "
                f"than its `cache_creation` ({count_text(made)}), which counts them"
            )
        return {"write5m": made - hour, "write1h": hour, "read": read}
    return {"cached": read} if read else None


def _model(extra: Any) -> str | None:
    if not isinstance(extra, dict):
        return None
    params = extra.get("invocation_params")
    if isinstance(params, dict):
        for key in ("model", "model_name"):
            if isinstance(params.get(key), str):
                return str(params[key])
    metadata = extra.get("metadata")
    if isinstance(metadata, dict) and isinstance(metadata.get("ls_model_name"), str):
        return str(metadata["ls_model_name"])
    return None


# --- tool runs ---------------------------------------------------------------------------


def _tool_args(inputs: Any) -> Any:
    """A tool run's arguments: its `inputs`, or the object a lone `{"input": text}` holds
    (LangChain's tracer logs a tool's input as `str()` of it: a dict's Python repr,
    `{'city': 'Oslo'}`, or the text it was given, JSON for some); other text stays
    `{"input": text}`."""
    if isinstance(inputs, dict) and list(inputs) == ["input"] and isinstance(inputs["input"], str):
        parsed = parse_json_text(inputs["input"])
        if not isinstance(parsed, dict):
            parsed = _python_dict(inputs["input"])
        return parsed if isinstance(parsed, dict) else inputs
    return inputs if inputs is not None else {}


#: The longest Python repr read as a tool's arguments (a bound on the parser's work).
_MAX_REPR = 1 << 20


def _python_dict(text: str) -> dict[str, Any] | None:
    """The dict a Python repr of one writes (`ast.literal_eval`: literals only, never code
    run), or None for text that is not one (a repr of other objects, `datetime.date(…)`,
    is not a literal)."""
    stripped = text.strip()
    if not (stripped.startswith("{") and stripped.endswith("}")) or len(stripped) > _MAX_REPR:
        return None
    try:
        value = ast.literal_eval(stripped)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        return None
    return value if _json_like(value) else None


def _json_like(value: Any) -> bool:
    """Whether `value` holds only what JSON holds (a repr's tuples, sets, bytes or complex
    numbers are no arguments a test reads as JSON), its objects keyed by text."""
    if isinstance(value, float):
        return math.isfinite(value)  # (`1e999` is a literal, and no JSON number)
    if value is None or isinstance(value, str | bool | int):
        return True
    if isinstance(value, list):
        return all(map(_json_like, value))
    if isinstance(value, dict):
        return all(isinstance(k, str) and _json_like(v) for k, v in value.items())
    return False


def _tool_output(outputs: Any) -> tuple[Any, str | None, bool]:
    """A tool run's result, the `tool_call_id` it answers, when it records one, and whether
    the result is an error: a `ToolMessage` of `status: "error"`, which LangChain returns
    for a tool error it handled (`handle_tool_error`, `handle_validation_error`) in a run
    that records no `error`. A `ToolMessage`'s `content` is its text, or a list of content
    blocks (LangChain stringifies any other value), read as the text of its text blocks
    as the `openai` and `anthropic` formats read a tool message's (a list with none, of
    `json` or `image` blocks only, is kept as it is)."""
    value = outputs
    if isinstance(outputs, dict) and list(outputs) == ["output"]:
        value = outputs["output"]
    message = _message(value)
    if message is not None and ("tool_call_id" in message or message.get("type") == "tool"):
        cid = link_id(message.get("tool_call_id"), "tool_call_id", "a tool message")
        return blocks_text(message.get("content")), cid, message.get("status") == "error"
    return value, None, False
