"""A response billed at another service tier than the standard one: each reader records
the tier its format says (`serviceTier` of the response event), `inspect` says it, and
`cost` prices it as that tier bills (flex and batch at half the standard price, priority
at the table's price for it, or an error naming the tier), never at the standard price.

Each sample is a recording of the fixtures changed only in its tier (or given the key
where the recording predates it); the runs of `cost` are subprocesses, as a user's are,
so that `EVALDSL_PRICES` is read as it is at every start (`tests/test_prices.py`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evaldsl.runs import detect, load_run
from evaldsl.runs.model import RunError
from tests.clitools import ROOT, run_evaldsl

REAL = ROOT / "tests" / "fixtures" / "realworld"


def _replaced(old: str, new: str) -> Callable[[str], str]:
    def change(text: str) -> str:
        assert old in text  # (the sample says the standard tier where it is changed)
        return text.replace(old, new)

    return change


def _chat_body(tier: str) -> Callable[[str], str]:
    """A chat completion of 2024, before bodies said their tier: given it."""

    def change(text: str) -> str:
        body = json.loads(text)
        return json.dumps({**body, "service_tier": tier})

    return change


def _chunks(tier: str) -> Callable[[str], str]:
    """Each chunk of a stream of 2024 given the tier, as each chunk says it now."""
    return _replaced('"system_fingerprint":', f'"service_tier":"{tier}","system_fingerprint":')


def _spans(key: str, tier: str) -> Callable[[str], str]:
    """Each LLM span given the tier's attribute, as OpenLLMetry records it."""

    def change(text: str) -> str:
        document = json.loads(text)
        for resource in document["resourceSpans"]:
            for scope in resource["scopeSpans"]:
                for span in scope["spans"]:
                    keys = {a["key"] for a in span["attributes"]}
                    if "gen_ai.usage.input_tokens" in keys:
                        attribute = {"key": key, "value": {"stringValue": tier}}
                        span["attributes"].append(attribute)
        return json.dumps(document)

    return change


def _runs(tier: str | None) -> Callable[[str], str]:
    """Each LLM run's body as `wrap_openai` and `wrap_anthropic` log it given the tier
    (None: the standard one of each provider)."""

    def change(text: str) -> str:
        runs = json.loads(text)
        for run in runs:
            body = run.get("outputs") if run["run_type"] == "llm" else None
            if isinstance(body, dict) and body.get("object") == "chat.completion":
                body["service_tier"] = tier or "default"
            elif isinstance(body, dict) and body.get("type") == "message":
                body["usage"]["service_tier"] = tier or "standard"
        return json.dumps(runs)

    return change


def _generations(tier: str) -> Callable[[str], str]:
    """Each LangChain chat generation's `response_metadata` given the tier, as
    `ChatOpenAI` records the response's `service_tier` there."""
    return _replaced('"response_metadata": {', f'"response_metadata": {{"service_tier": "{tier}", ')


def _provider_metadata(metadata: dict[str, Any]) -> Callable[[str], str]:
    """Each Vercel AI SDK model-call span given `ai.response.providerMetadata` (JSON text),
    as the SDK records the provider's metadata of the response."""

    def change(text: str) -> str:
        document = json.loads(text)
        for span in document["resourceSpans"][0]["scopeSpans"][0]["spans"]:
            if span["name"] == "ai.generateText.doGenerate":
                value = {"stringValue": json.dumps(metadata)}
                span["attributes"].append({"key": "ai.response.providerMetadata", "value": value})
        return json.dumps(document)

    return change


#: (the fixture, its change to a tier, the tier read then; the change to the standard
#: tier, or None where the fixture says it)
SAMPLES: list[tuple[str, Callable[[str], str], str, Callable[[str], str] | None]] = [
    ("openai-chat-tools/response-final.json", _chat_body("flex"), "flex", _chat_body("default")),
    ("openai-chat-stream/chunks.jsonl", _chunks("priority"), "priority", _chunks("default")),
    (
        "openai-responses-api/response-message.json",
        _replaced('"service_tier": "default"', '"service_tier": "priority"'),
        "priority",
        None,
    ),
    (
        "anthropic-message-tooluse/message.json",
        _replaced('"service_tier": "standard"', '"service_tier": "batch"'),
        "batch",
        None,
    ),
    (
        "anthropic-stream-tooluse/events.jsonl",
        _replaced('"service_tier":"standard"', '"service_tier":"priority"'),
        "priority",
        None,
    ),
    (
        "anthropic-stream-tooluse/tool_use_response.txt",
        _replaced('"service_tier":"standard"', '"service_tier":"batch"'),
        "batch",
        None,
    ),
    (
        "otel-latitude-otlp/trace.otlp.json",
        _spans("openai.response.service_tier", "priority"),
        "priority",
        _spans("openai.response.service_tier", "default"),
    ),
    (
        "otel-latitude-otlp/trace.otlp.json",
        _spans("gen_ai.openai.response.service_tier", "flex"),
        "flex",
        None,
    ),
    # a span that records only what its request asked for: that tier, unless "auto"
    (
        "otel-latitude-otlp/trace.otlp.json",
        _spans("openai.request.service_tier", "flex"),
        "flex",
        _spans("openai.request.service_tier", "auto"),
    ),
    ("../../data/formats/langsmith-wrappers.json", _runs("priority"), "priority", _runs(None)),
    # a LangChain chat model's generation says it in its message's `response_metadata`
    (
        "../../data/formats/langsmith-tree.json",
        _generations("flex"),
        "flex",
        _generations("default"),
    ),
    (
        "../../data/formats/langsmith-runs.jsonl",
        _generations("priority"),
        "priority",
        None,
    ),
    # the Vercel AI SDK: the provider's metadata of the response, OpenAI's `serviceTier`
    # (its Responses API models), Anthropic's `usage.service_tier`
    (
        "../../data/formats/ai-sdk-spans.otlp.json",
        _provider_metadata({"openai": {"responseId": "resp_1", "serviceTier": "flex"}}),
        "flex",
        _provider_metadata({"openai": {"responseId": "resp_1", "serviceTier": "default"}}),
    ),
    (
        "../../data/formats/ai-sdk-spans.otlp.json",
        _provider_metadata({"anthropic": {"usage": {"service_tier": "priority"}}}),
        "priority",
        _provider_metadata({"openai": {"cachedPromptTokens": 0}}),
    ),
    (
        "inspect-ai-eval-log/log_read_sample.json",
        _replaced('"service_tier": null', '"service_tier": "flex"'),
        "flex",
        None,
    ),
]


def _tiers(path: Path) -> list[Any]:
    run = load_run(path)
    assert isinstance(run.events, list)
    responses = [e for e in run.events if e["type"] == "llm.response"]
    assert responses
    return [e.get("serviceTier") for e in responses]


@pytest.mark.parametrize(("fixture", "change", "tier", "standard"), SAMPLES)
def test_each_reader_records_a_response_s_service_tier(
    tmp_path: Path,
    fixture: str,
    change: Callable[[str], str],
    tier: str,
    standard: Callable[[str], str] | None,
) -> None:
    source = REAL / fixture
    text = source.read_text("utf-8")
    path = tmp_path / source.name
    path.write_text(change(text), "utf-8")
    assert set(_tiers(path)) == {tier}
    # `inspect` says it, and what `cost` makes of it
    shown = run_evaldsl("inspect", str(path), env={"EVALDSL_PRICES": ""})
    assert f'billed at service tier "{tier}", not the standard one' in shown.stdout, shown
    # the standard tier, said or not, is no tier of the response
    path.write_text(standard(text) if standard is not None else text, "utf-8")
    assert set(_tiers(path)) == {None}
    assert "service tier" not in run_evaldsl("inspect", str(path)).stdout


def _cost(
    tmp_path: Path, path: Path, statements: list[str], env: dict[str, str]
) -> list[dict[str, Any]]:
    suite = tmp_path / "cost.eval"
    body = "".join(f"  {s}\n" for s in statements)
    suite.write_text(f'case "c"\n  cassette "{path.name}"\n{body}', "utf-8")
    out = tmp_path / "report.json"
    done = run_evaldsl("run", str(suite), "--no-history", "--json", str(out), env=env)
    assert out.exists(), done.stderr
    found: list[dict[str, Any]] = json.loads(out.read_text("utf-8"))["suites"][0]["cases"][0][
        "assertions"
    ]
    return found


def _response(tmp_path: Path, tier: str, model: str = "gpt-4o-mini-2024-07-18") -> Path:
    """The Responses API object of the fixtures (9 input tokens, 10 output) at `tier`."""
    body = json.loads((REAL / "openai-responses-api/response-message.json").read_text("utf-8"))
    path = tmp_path / "response.json"
    path.write_text(json.dumps({**body, "service_tier": tier, "model": model}), "utf-8")
    return path


def _between(low: float, high: float) -> list[str]:
    return [f"cost > ${low:.9f}", f"cost < ${high:.9f}"]


def test_flex_and_batch_cost_half_and_the_standard_tier_its_price(tmp_path: Path) -> None:
    # gpt-4o-mini: 9 input at $0.15 and 10 output at $0.60 a million: $0.00000735
    plain = {"EVALDSL_PRICES": ""}
    for tier in ("default", "standard"):
        found = _cost(tmp_path, _response(tmp_path, tier), _between(7.34e-6, 7.36e-6), plain)
        assert [a["status"] for a in found] == ["pass", "pass"], (tier, found)
    for tier in ("flex", "batch"):
        found = _cost(tmp_path, _response(tmp_path, tier), _between(3.67e-6, 3.68e-6), plain)
        assert [a["status"] for a in found] == ["pass", "pass"], (tier, found)


def test_priority_costs_the_shipped_priority_price(tmp_path: Path) -> None:
    # gpt-4o-mini at priority: $0.25 and $1.00 a million (OpenAI's priority page): $0.00001225
    found = _cost(
        tmp_path,
        _response(tmp_path, "priority"),
        [*_between(1.224e-5, 1.226e-5), "cost < $0.00001"],
        {"EVALDSL_PRICES": ""},
    )
    # (`cost < $0.00001` passed at the standard price: now it fails, as the bill would)
    assert [a["status"] for a in found] == ["pass", "pass", "fail"], found


@pytest.mark.parametrize("tier", ["priority", "scale", "auto", "turbo"])
def test_a_tier_of_no_known_price_is_an_error_naming_it_never_the_standard_price(
    tmp_path: Path, tier: str
) -> None:
    # gpt-5-nano has no priority price (OpenAI lists none); "scale", "auto" and a tier no
    # provider has written have none anywhere
    path = _response(tmp_path, tier, "gpt-5-nano-2025-08-07")
    found = _cost(tmp_path, path, ["cost < $1"], {"EVALDSL_PRICES": ""})
    assert [a["status"] for a in found] == ["error"], found
    said = found[0]["message"]
    assert f"model 'gpt-5-nano-2025-08-07' was billed at service tier \"{tier}\"" in said, said
    assert f'{{"models": {{"gpt-5-nano": {{"input": N, "output": N, "tiers": {{"{tier}": ' in said
    assert "EVALDSL_PRICES" in said
    assert ('"auto" is what a request asks for' in said) == (tier == "auto")


def test_a_user_s_table_prices_a_tier(tmp_path: Path) -> None:
    table = tmp_path / "prices.json"
    tiers: dict[str, Any] = {"priority": {"input": 10, "output": 20}}
    priced = {"input": 1, "output": 2, "tiers": tiers}
    table.write_text(json.dumps({"models": {"gpt-5-nano": priced}}), "utf-8")
    env = {"EVALDSL_PRICES": str(table)}
    # 9 at $10 and 10 at $20 a million: $0.00029
    path = _response(tmp_path, "priority", "gpt-5-nano-2025-08-07")
    found = _cost(tmp_path, path, _between(2.89e-4, 2.91e-4), env)
    assert [a["status"] for a in found] == ["pass", "pass"], found
    # its flex: not half of the user's price, which may be another provider's, whose flex
    # costs what its standard tier does (Groq's): an error, until the table gives it
    path = _response(tmp_path, "flex", "gpt-5-nano-2025-08-07")
    found = _cost(tmp_path, path, ["cost < $1"], env)
    assert [a["status"] for a in found] == ["error"], found
    assert "as Groq's flex does" in found[0]["message"], found
    tiers["flex"] = {"input": 1, "output": 2}
    table.write_text(json.dumps({"models": {"gpt-5-nano": priced}}), "utf-8")
    found = _cost(tmp_path, path, _between(2.89e-5, 2.91e-5), env)
    assert [a["status"] for a in found] == ["pass", "pass"], found
    # a shipped model the user's table prices has that table's tiers only: gpt-4o-mini's
    # shipped priority price is not kept beside the user's own price for it
    table.write_text(json.dumps({"models": {"gpt-4o-mini": {"input": 1, "output": 2}}}))
    found = _cost(tmp_path, _response(tmp_path, "priority"), ["cost < $1"], env)
    assert [a["status"] for a in found] == ["error"], found
    assert 'service tier "priority"' in found[0]["message"]


def test_a_traceplay_body_s_tier_is_priced(tmp_path: Path) -> None:
    # the Anthropic cassette's response body given its usage, billed in a batch:
    # claude-3-5-sonnet, 45 input at $3 and 32 output at $15 a million, halved
    source = REAL / "traceplay-anthropic" / "cassette.anthropic.jsonl"
    lines = []
    for line in source.read_text("utf-8").splitlines():
        event = json.loads(line)
        if event.get("type") == "llm.response" and isinstance(event.get("output"), dict):
            usage = event["usage"]
            event["output"]["usage"] = {
                "input_tokens": usage["promptTokens"],
                "output_tokens": usage["completionTokens"],
                "service_tier": "batch",
            }
        lines.append(json.dumps(event))
    path = tmp_path / "cassette.jsonl"
    path.write_text("\n".join(lines) + "\n", "utf-8")
    suite = tmp_path / "cost.eval"
    suite.write_text(f'case "c"\n  cassette "{path.name}"\n  cost < $0.001\n', "utf-8")
    out = tmp_path / "report.json"
    run_evaldsl("run", str(suite), "--no-history", "--json", str(out), env={"EVALDSL_PRICES": ""})
    found = json.loads(out.read_text("utf-8"))["suites"][0]["cases"][0]["assertions"]
    assert [a["status"] for a in found] == ["pass"], found
    assert found[0]["actual"] == pytest.approx((45 * 3 + 32 * 15) / 2e6), found
    # `inspect` says it of a cassette too, whose bodies no reader's trace notes
    shown = run_evaldsl("inspect", str(path), env={"EVALDSL_PRICES": ""}).stdout
    assert 'note        1 response billed at service tier "batch", not the standard' in shown
    assert "$0.0003075" in shown, shown


@pytest.mark.parametrize("metadata", ['"flex"', "[1]", '{"openai": "flex"}', "{not json"])
def test_ai_sdk_provider_metadata_that_cannot_be_read_is_the_run_s_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, metadata: str
) -> None:
    """Metadata of no provider's shape may hold the tier that billed the response: the
    run's error naming it, by the full reader and the typed decoder, never the standard
    price."""
    source = ROOT / "tests" / "data" / "formats" / "ai-sdk-spans.otlp.json"
    document = json.loads(source.read_text("utf-8"))
    for span in document["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        if span["name"] == "ai.generateText.doGenerate":
            value = {"stringValue": metadata}
            span["attributes"].append({"key": "ai.response.providerMetadata", "value": value})
    path = tmp_path / "spans.otlp.json"
    path.write_text(json.dumps(document), "utf-8")
    with pytest.raises(RunError, match=r"ai\.response\.providerMetadata"):
        load_run(path)
    monkeypatch.setattr(detect, "OTEL_TYPED_FROM", 0)
    with pytest.raises(RunError, match=r"ai\.response\.providerMetadata"):
        load_run(path)


def _long_response(tmp_path: Path, tier: str, model: str, used_in: int) -> Path:
    """The Responses API object of the fixtures at `tier`, of `used_in` input tokens and 10
    output tokens."""
    path = _response(tmp_path, tier, model)
    body = json.loads(path.read_text("utf-8"))
    body["usage"] = {**body["usage"], "input_tokens": used_in, "total_tokens": used_in + 10}
    path.write_text(json.dumps(body), "utf-8")
    return path


def test_a_long_prompt_at_a_tier_is_priced_as_the_provider_bills_it_or_an_error(
    tmp_path: Path,
) -> None:
    """OpenAI bills a prompt past 272K input tokens of gpt-5.4 at its long-context prices
    "for standard, batch, and flex", and prices Priority processing only for prompts up
    to 128K ("excludes long context"): a priority response of a longer prompt has no
    known price. It was priced at the short prompt's priority price ($5 / $30), below
    even its standard long price; now it is an error naming the price to give, and flex
    is half the long price."""
    plain = {"EVALDSL_PRICES": ""}
    # 300,000 input at $5 and 10 output at $22.50 a million, halved: $0.7501125
    path = _long_response(tmp_path, "flex", "gpt-5.4", 300_000)
    found = _cost(tmp_path, path, _between(0.75011, 0.75012), plain)
    assert [a["status"] for a in found] == ["pass", "pass"], found
    for used_in in (300_000, 200_000):  # (past the model's 272K, and past priority's 128K)
        path = _long_response(tmp_path, "priority", "gpt-5.4", used_in)
        found = _cost(tmp_path, path, ["cost < $100"], plain)
        assert [a["status"] for a in found] == ["error"], found
        said = found[0]["message"]
        assert f"a prompt of {used_in:,} input tokens" in said, said
        assert "past the 128,000" in said and "`tiers.priority.long_prompt`" in said, said
    # 100,000 input at priority's $5 and 10 output at $30 a million: $0.5003
    path = _long_response(tmp_path, "priority", "gpt-5.4", 100_000)
    found = _cost(tmp_path, path, _between(0.50029, 0.50031), plain)
    assert [a["status"] for a in found] == ["pass", "pass"], found


def test_a_user_s_tier_prices_long_prompts_by_its_own_long_prompt(tmp_path: Path) -> None:
    """A user's tier price of a model with a `long_prompt` is for prompts up to its `over`:
    past it, the tier's own `long_prompt`, else an error naming it; never the short
    prompt's tier price."""
    table = tmp_path / "prices.json"
    long = {"over": 1000, "input": 2, "output": 4}
    tiers: dict[str, Any] = {"priority": {"input": 10, "output": 20}}
    priced = {"input": 1, "output": 2, "long_prompt": long, "tiers": tiers}
    table.write_text(json.dumps({"models": {"my-model": priced}}), "utf-8")
    env = {"EVALDSL_PRICES": str(table)}
    path = _long_response(tmp_path, "priority", "my-model", 2000)
    found = _cost(tmp_path, path, ["cost < $100"], env)
    assert [a["status"] for a in found] == ["error"], found
    said = found[0]["message"]
    assert "a prompt of 2,000 input tokens, past the 1,000" in said, said
    assert "`tiers.priority.long_prompt`" in said, said
    # 2,000 at $30 and 10 at $50 a million: $0.0605
    tiers["priority"]["long_prompt"] = {"over": 1000, "input": 30, "output": 50}
    table.write_text(json.dumps({"models": {"my-model": priced}}), "utf-8")
    found = _cost(tmp_path, path, _between(0.06049, 0.06051), env)
    assert [a["status"] for a in found] == ["pass", "pass"], found
    # within the short prompt: the tier's own price, 900 at $10 and 10 at $20: $0.0092
    path = _long_response(tmp_path, "priority", "my-model", 900)
    found = _cost(tmp_path, path, _between(0.00919, 0.00921), env)
    assert [a["status"] for a in found] == ["pass", "pass"], found


def test_an_event_s_service_tier_wins_over_its_body_s_in_inspect_and_cost(tmp_path: Path) -> None:
    """An events file's response whose `serviceTier` says the standard tier ("default")
    and whose body, kept as its output, says "flex": `cost` priced it by the event (the
    standard price) while `inspect` said it was billed at flex, beside that cost. One
    rule now: the event's `serviceTier`, when it says one, standard names included; the
    body's only when it says none."""
    body = json.loads((REAL / "openai-responses-api/response-message.json").read_text("utf-8"))
    body = {**body, "service_tier": "flex", "model": "gpt-4o-mini-2024-07-18"}
    usage = {"promptTokens": 9, "completionTokens": 10}
    request = {"type": "llm.request", "model": "gpt-4o-mini-2024-07-18"}
    plain = {"EVALDSL_PRICES": ""}
    for said, flex in (("default", False), ("priority", False), (None, True)):
        response = {"type": "llm.response", "output": body, "usage": usage}
        if said is not None:
            response["serviceTier"] = said
        path = tmp_path / "events.jsonl"
        path.write_text(f"{json.dumps(request)}\n{json.dumps(response)}\n", "utf-8")
        shown = run_evaldsl("inspect", str(path), env=plain).stdout
        assert ('billed at service tier "flex"' in shown) == flex, (said, shown)
        assert ('billed at service tier "priority"' in shown) == (said == "priority"), shown
        # gpt-4o-mini: $0.00000735 standard, $0.00001225 priority, half the standard at flex
        dollars = {"default": 7.35e-6, "priority": 1.225e-5, None: 3.675e-6}[said]
        found = _cost(tmp_path, path, _between(dollars * 0.999, dollars * 1.001), plain)
        assert [a["status"] for a in found] == ["pass", "pass"], (said, found)
