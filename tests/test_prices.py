"""A user's own price table (`EVALDSL_PRICES`): its models priced, a shipped price replaced,
and a table that cannot be used pricing nothing, with the reason in every `cost` error.

The variable is read when `evaldsl.runs.prices` is imported, so the runs are subprocesses,
as a user's are (`evaldsl run`, `-j 2` workers, `inspect`); the file's checks are
`read_user_table`'s, tested directly.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from evaldsl.runs.prices import (
    CACHE_RATES,
    CACHED_INPUT,
    LONG_PROMPTS,
    PRICES,
    TIERS,
    PriceTableError,
    price_of,
    read_user_table,
)
from tests.clitools import ROOT, run_evaldsl

XIAMEN = ROOT / "examples" / "weather" / "cassettes" / "xiamen.jsonl"


def _suite(tmp_path: Path, model: str, *statements: str) -> Path:
    """A suite of one case on the weather cassette with its model renamed `model`."""
    cassette = tmp_path / "run.jsonl"
    cassette.write_text(XIAMEN.read_text("utf-8").replace('"gpt-4o-mini"', json.dumps(model)))
    suite = tmp_path / "cost.eval"
    body = "".join(f"  {s}\n" for s in statements)
    suite.write_text(f'case "priced"\n  cassette "{cassette.name}"\n{body}', "utf-8")
    return suite


def _verdicts(tmp_path: Path, suite: Path, env: dict[str, str], *more: str) -> list[dict]:
    out = tmp_path / "report.json"
    done = run_evaldsl("run", str(suite), "--no-history", "--json", str(out), *more, env=env)
    assert out.exists(), done.stderr
    report = json.loads(out.read_text("utf-8"))
    assertions: list[dict] = report["suites"][0]["cases"][0]["assertions"]
    return assertions


def _table(tmp_path: Path, models: object, name: str = "prices.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps({"models": models}), "utf-8")
    return path


def test_a_model_the_shipped_table_lacks_is_priced_by_the_user_s_table(tmp_path: Path) -> None:
    suite = _suite(tmp_path, "acme-1-2026-01-01", "cost < $0.001", "cost > $0.0001")
    # without a table of the user's: the model is unpriced, an error saying how to price it
    alone = _verdicts(tmp_path, suite, {"EVALDSL_PRICES": ""})
    assert [a["status"] for a in alone] == ["error", "error"]
    assert "no price known for model 'acme-1-2026-01-01'" in alone[0]["message"]
    assert "EVALDSL_PRICES" in alone[0]["message"]
    # 75 input and 51 output tokens at $1 and $2 a million: $0.000177 (a dated id as its family)
    table = _table(tmp_path, {"acme-1": {"input": 1, "output": 2}})
    for more in ((), ("-j", "2")):
        priced = _verdicts(tmp_path, suite, {"EVALDSL_PRICES": str(table)}, *more)
        assert [a["status"] for a in priced] == ["pass", "pass"], priced
    shown = run_evaldsl("inspect", str(tmp_path / "run.jsonl"), env={"EVALDSL_PRICES": str(table)})
    assert "(priced acme-1-2026-01-01 as acme-1 from EVALDSL_PRICES)" in shown.stdout


def test_a_model_the_user_s_table_lacks_too_is_said_so(tmp_path: Path) -> None:
    # once "name a price table of your own in EVALDSL_PRICES", to a user who had named one
    suite = _suite(tmp_path, "acme-9", "cost < $1")
    table = _table(tmp_path, {"acme-1": {"input": 1, "output": 2}})
    found = _verdicts(tmp_path, suite, {"EVALDSL_PRICES": str(table)})
    assert found[0]["status"] == "error"
    assert f"neither the shipped table nor EVALDSL_PRICES={table} lists it" in found[0]["message"]
    assert "name a price table of your own" not in found[0]["message"]


def test_the_user_s_table_replaces_a_shipped_price(tmp_path: Path) -> None:
    suite = _suite(tmp_path, "gpt-4o-mini", "cost < $0.0001")
    assert price_of("gpt-4o-mini") == (0.15, 0.6)  # $0.00004185 here: passes
    shipped = _verdicts(tmp_path, suite, {"EVALDSL_PRICES": ""})
    assert shipped[0]["status"] == "pass"
    table = _table(tmp_path, {"gpt-4o-mini": {"input": 10, "output": 10}})  # $0.00126
    mine = _verdicts(tmp_path, suite, {"EVALDSL_PRICES": str(table)})
    assert mine[0]["status"] == "fail"


def test_a_model_of_the_user_s_table_is_named_in_any_case(tmp_path: Path) -> None:
    # `GPT-4o-Mini` once priced only a trace's `GPT-4o-Mini`: gpt-4o-mini-2024-07-18 (looked up
    # as gpt-4o-mini) went on at the shipped price, $0.00004185 here, a pass
    suite = _suite(tmp_path, "gpt-4o-mini-2024-07-18", "cost < $0.0001")
    table = _table(tmp_path, {" GPT-4o-Mini": {"input": 10, "output": 10}})  # $0.00126
    mine = _verdicts(tmp_path, suite, {"EVALDSL_PRICES": str(table)})
    assert mine[0]["status"] == "fail"
    shown = run_evaldsl("inspect", str(tmp_path / "run.jsonl"), env={"EVALDSL_PRICES": str(table)})
    assert "(priced gpt-4o-mini-2024-07-18 as gpt-4o-mini from EVALDSL_PRICES)" in shown.stdout


def test_a_table_that_cannot_be_used_prices_nothing_and_says_why(tmp_path: Path) -> None:
    # a shipped model too: its price might be the one the broken table meant to replace
    suite = _suite(tmp_path, "gpt-4o-mini", "cost < $1", "tokens < 1000")
    bad = tmp_path / "bad.json"
    bad.write_text('{"models": {"gpt-4o-mini": {"input": 1,}}}', "utf-8")
    found = _verdicts(tmp_path, suite, {"EVALDSL_PRICES": str(bad)})
    assert [a["status"] for a in found] == ["error", "pass"]
    assert found[0]["message"].startswith(f"EVALDSL_PRICES={bad}:1:")
    assert "not JSON" in found[0]["message"]
    shown = run_evaldsl(
        "inspect", str(suite.parent / "run.jsonl"), env={"EVALDSL_PRICES": str(bad)}
    )
    assert shown.returncode == 0, shown.stderr
    assert "not JSON" in shown.stdout and "`cost` is an error" in shown.stdout


_LONG = '{"models": {"m": {"input": 1, "output": 2, "long_prompt": %s}}}'
_TIERS = '{"models": {"m": {"input": 1, "output": 2, "tiers": %s}}}'


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ('{"models": {"m": {"input": 1, "output": 2}},}', ":1:"),
        ("[]", 'a price table is {"models"'),
        ('{"model": {}}', 'a price table is {"models"'),
        ('{"models": {}, "caches": {}}', "`caches` is no key of a price table"),
        ('{"models": {}, "cache": {"write": 1}}', "`cache` is an object of multiples"),
        ('{"models": {}, "cache": {"read": -0.1}}', "cache `read` is -0.1, not a number"),
        ('{"models": {"m": {"input": 1}}}', "model 'm': a price is"),
        ('{"models": {"m": {"input": 1, "output": 2, "cached": 0}}}', "model 'm': a price is"),
        ('{"models": {"m": {"input": -1, "output": 2}}}', "`input` is -1, not a number"),
        ('{"models": {"m": {"input": 1, "output": true}}}', "`output` is true, not a number"),
        ('{"models": {"m": {"input": "1", "output": 2}}}', '`input` is "1", not a number'),
        ('{"models": {"m": {"input": 1e999, "output": 2}}}', "`input` is Infinity, not a number"),
        # integers past a float's range, or past Python's 4,300 digits: once a traceback at
        # every start of evaldsl (OverflowError, ValueError)
        ('{"models": {"m": {"input": 1%s, "output": 2}}}' % ("0" * 400), "`input` is Infinity"),
        ('{"models": {"m": {"input": 1, "output": 1%s}}}' % ("0" * 5000), "`output` is Infinity"),
        ('{"models": {" ": {"input": 1, "output": 2}}}', "a model's name is empty"),
        ('{"models": {"OpenAI/GPT-5": {"input": 1, "output": 2}}}', "write 'gpt-5'"),
        # a unit not the one read: once ignored, every price 1,000 times too low
        ('{"models": {}, "unit": "USD per 1K tokens"}', '`unit` is "USD per 1K tokens", but'),
        ('{"models": {}, "unit": 1000000}', "`unit` is 1000000, but prices are read in"),
        # a key written twice: JSON keeps the last, a price silently dropped
        (
            '{"models": {"m": {"input": 1, "output": 2}, "m": {"input": 3, "output": 4}}}',
            "`m` is written twice",
        ),
        ('{"models": {"m": {"input": 1, "output": 2, "input": 3}}}', "`input` is written twice"),
        (
            '{"models": {"M": {"input": 1, "output": 2}, " m": {"input": 3, "output": 4}}}',
            "models 'M' and ' m' are one model",
        ),
        ('{"models":\n {"caf\udce9": 1}}', ":2:7: the price table is not UTF-8 text: byte 0xe9"),
        # a model's prices for long prompts
        (_LONG % '{"over": 10, "input": 2}', "model 'm': `long_prompt` is {\"over\": TOKENS"),
        (_LONG % '{"over": 10, "input": 2, "output": 3, "x": 1}', "`long_prompt` is {"),
        (_LONG % "[10, 2, 3]", "model 'm': `long_prompt` is {"),
        (_LONG % '{"over": 0, "input": 2, "output": 3}', "`long_prompt.over` is 0, not a number"),
        (_LONG % '{"over": 1.5, "input": 2, "output": 3}', "`long_prompt.over` is 1.5"),
        (_LONG % '{"over": true, "input": 2, "output": 3}', "`long_prompt.over` is true"),
        (_LONG % '{"over": 9, "input": -2, "output": 3}', "`long_prompt.input` is -2, not a"),
        (
            _LONG % '{"over": 9, "input": 2, "output": 3, "cached_input": "x"}',
            '`long_prompt.cached_input` is "x", not a number',
        ),
        # a model's prices at service tiers
        (_TIERS % "[1]", 'model \'m\': `tiers` is {"TIER": {"input": N'),
        (_TIERS % '{"priority": {"input": 2}}', '`tiers.priority` is {"input": N, "output": N}'),
        (_TIERS % '{"priority": 2}', '`tiers.priority` is {"input": N, "output": N}'),
        (_TIERS % '{"priority": {"input": -2, "output": 3}}', "`tiers.priority.input` is -2"),
        (
            _TIERS % '{"flex": {"input": 2, "output": 3, "cached_input": null}}',
            "`tiers.flex.cached_input` is null, not a number",
        ),
        (
            _TIERS % '{"priority": {"input": 2, "output": 3, "up_to": 0}}',
            "`tiers.priority.up_to` is 0, not a number of tokens",
        ),
        (
            _TIERS % '{"priority": {"input": 2, "output": 3, "long_prompt": {"over": 9}}}',
            '`tiers.priority`: `long_prompt` is {"over": TOKENS',
        ),
        (_TIERS % '{"default": {"input": 2, "output": 3}}', "'default' is the standard tier"),
        (_TIERS % '{"standard": {"input": 2, "output": 3}}', "'standard' is the standard"),
        (_TIERS % '{" ": {"input": 2, "output": 3}}', "`tiers. `: a tier's name is empty"),
        (_TIERS % '{"Default": {"input": 2, "output": 3}}', "'Default' is the standard tier"),
        # what a request asks, no tier that bills: a price for it would price every
        # response that wrongly says "auto"
        (_TIERS % '{"auto": {"input": 2, "output": 3}}', "'auto' is what a request asks"),
        (_TIERS % '{" AUTO": {"input": 2, "output": 3}}', "' AUTO' is what a request asks"),
        (
            _TIERS % '{"priority": {"input": 2, "output": 3}, "Priority ": {"input": 4, '
            '"output": 6}}',
            "tiers 'priority' and 'Priority ' are one tier",
        ),
    ],
)
def test_a_price_table_is_checked_and_its_fault_named(
    tmp_path: Path, content: str, said: str
) -> None:
    path = tmp_path / "p.json"
    path.write_bytes(content.encode("utf-8", "surrogateescape"))
    with pytest.raises(PriceTableError) as raised:
        read_user_table(str(path))
    assert str(raised.value).startswith(f"EVALDSL_PRICES={path}")
    assert said in str(raised.value)


def test_a_user_s_table_prices_long_prompts(tmp_path: Path) -> None:
    # the weather cassette's two responses: 180 input tokens and 22 output, 240 and 19
    suite = _suite(tmp_path, "acme-1", "cost > $0.0002314", "cost < $0.0002316")
    table = {
        "input": 0.1,
        "output": 1.0,
        "long_prompt": {"over": 200, "input": 0.6, "output": 2.5, "cached_input": 0.06},
    }
    path = _table(tmp_path, {"acme-1": table})
    assert read_user_table(str(path))[3] == {"acme-1": (200, (0.6, 2.5), 0.06)}
    # 180 at $0.10 and 22 at $1, then (240 > 200) 240 at $0.60 and 19 at $2.50 a million
    found = _verdicts(tmp_path, suite, {"EVALDSL_PRICES": str(path)})
    assert [a["status"] for a in found] == ["pass", "pass"], found
    # over 240: both at the base prices, $0.000083
    longer = {**table, "long_prompt": {**table["long_prompt"], "over": 240}}
    found = _verdicts(
        tmp_path, suite, {"EVALDSL_PRICES": str(_table(tmp_path, {"acme-1": longer}))}
    )
    assert [a["status"] for a in found] == ["fail", "pass"], found
    assert "0.000083" in found[0]["message"], found


def test_a_user_s_price_of_a_shipped_model_drops_its_long_prompt_prices(tmp_path: Path) -> None:
    # claude-sonnet-4 past 200,000 input tokens costs $6 / $22.50 in the shipped table; a
    # user's table that prices it $3 / $15 means that price, for any prompt
    suite = _suite(tmp_path, "claude-sonnet-4-20250514", "cost > $0.75", "cost < $1.00")
    cassette = tmp_path / "run.jsonl"
    cassette.write_text(
        cassette.read_text("utf-8").replace('"promptTokens":240', '"promptTokens":250000')
    )
    # 180 + 250,000 input, 41 output: $1.500... shipped, $0.75... the user's
    shipped = _verdicts(tmp_path, suite, {"EVALDSL_PRICES": ""})
    assert [a["status"] for a in shipped] == ["pass", "fail"], shipped
    assert "1.50" in shipped[1]["message"], shipped
    path = _table(tmp_path, {"claude-sonnet-4": {"input": 3, "output": 15}})
    mine = _verdicts(tmp_path, suite, {"EVALDSL_PRICES": str(path)})
    assert [a["status"] for a in mine] == ["pass", "pass"], mine


def test_a_tier_of_a_user_s_table_is_named_in_any_case(tmp_path: Path) -> None:
    path = _table(tmp_path, {"m": {"input": 1, "output": 2, "tiers": {" Priority": _PAIR}}})
    assert read_user_table(str(path))[4] == {"m": {"priority": ((10.0, 20.0), None, None, None)}}


def test_a_response_s_tier_is_looked_up_as_a_user_s_table_names_it(tmp_path: Path) -> None:
    """A table of `"Priority"` prices a response saying "Priority": the fix a `cost` error
    asked for once priced nothing (the table was read in lower case, the response not)."""
    path = _table(tmp_path, {"acme-1": {"input": 1, "output": 2, "tiers": {"Priority": _PAIR}}})
    trace = tmp_path / "events.jsonl"
    response = {"model": "acme-1", "usage": {"promptTokens": 1000, "completionTokens": 0}}
    events = [
        {"type": "llm.request", "model": "acme-1"},
        {"type": "llm.response", **response, "serviceTier": "Priority"},
    ]
    trace.write_text("".join(json.dumps(e) + "\n" for e in events))
    program = tmp_path / "cost.eval"
    program.write_text("cost > $0.0099\ncost < $0.0101\n")  # (1,000 input at $10)
    done = run_evaldsl("score", str(program), str(trace), env={"EVALDSL_PRICES": str(path)})
    assert "1 passed" in done.stdout, done.stdout + done.stderr


_PAIR = {"input": 10, "output": 20}


def test_a_table_of_the_unit_read_is_read(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_text('{"models": {"m": {"input": 1, "output": 2}}, "unit": "usd per  1M tokens"}')
    assert read_user_table(str(path)) == ({"m": (1.0, 2.0)}, {}, {}, {}, {})


def test_a_missing_table_is_named_with_the_reason(tmp_path: Path) -> None:
    with pytest.raises(PriceTableError, match='cannot read the price table: file not found: "'):
        read_user_table(str(tmp_path / "nowhere.json"))


@pytest.mark.parametrize("kind", ["a named pipe", "a character device"])
def test_a_table_that_is_no_file_is_refused_unread(tmp_path: Path, kind: str) -> None:
    # a FIFO with no writer, or /dev/zero, once hung every start of evaldsl
    path = tmp_path / "fifo"
    if kind == "a named pipe":
        os.mkfifo(path)
    else:
        path = Path("/dev/zero")
    with pytest.raises(PriceTableError, match=f'cannot read the price table: "{path}" is {kind}'):
        read_user_table(str(path))


def test_a_table_saved_with_a_bom_is_read(tmp_path: Path) -> None:
    # as a JSON suite is (Windows' editors write one); once "not JSON: Unexpected UTF-8 BOM"
    path = tmp_path / "p.json"
    path.write_bytes(b'\xef\xbb\xbf{"models": {"m": {"input": 1, "output": 2}}}')
    assert read_user_table(str(path)) == ({"m": (1.0, 2.0)}, {}, {}, {}, {})


def test_a_copy_of_the_shipped_table_is_a_user_s_table(tmp_path: Path) -> None:
    shipped = ROOT / "evaldsl" / "runs" / "prices.json"
    path = tmp_path / "copy.json"
    path.write_text(shipped.read_text("utf-8"), "utf-8")
    models, cache, cached, long, tiers = read_user_table(str(path))
    assert models == PRICES  # (no EVALDSL_PRICES in the tests' own process)
    assert cache == CACHE_RATES
    assert cached == CACHED_INPUT and cached["gpt-4o"] == 1.25
    assert long == LONG_PROMPTS and long["gpt-5.4"] == (272_000, (5.0, 22.5), 0.5)
    assert tiers == TIERS and tiers["gpt-5"] == {"priority": ((2.5, 20.0), 0.25, 128_000, None)}


def test_a_user_s_cache_rates_price_cache_tokens(tmp_path: Path) -> None:
    # an Anthropic Messages body: 1,000 input tokens, and 9,000 more read from the cache
    body = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-20250514",
        "content": [{"type": "text", "text": "ok"}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 1000, "output_tokens": 0, "cache_read_input_tokens": 9000},
    }
    (tmp_path / "run.json").write_text(json.dumps(body), "utf-8")
    suite = tmp_path / "cost.eval"
    # at $3 a million: 1,000 + 9,000 x 0.1 = 1,900 tokens' worth, $0.0057; at a read rate of 1,
    # 10,000 tokens' worth, $0.03
    suite.write_text('case "c"\n  cassette "run.json"\n  cost < $0.01\n', "utf-8")
    assert _verdicts(tmp_path, suite, {"EVALDSL_PRICES": ""})[0]["status"] == "pass"
    table = tmp_path / "rates.json"
    table.write_text(json.dumps({"models": {}, "cache": {"read": 1}}), "utf-8")
    found = _verdicts(tmp_path, suite, {"EVALDSL_PRICES": str(table)})
    assert found[0]["status"] == "fail", found


def test_check_warns_of_a_table_that_cannot_be_used_at_each_cost(tmp_path: Path) -> None:
    suite = _suite(tmp_path, "gpt-4o-mini", "tokens < 1000", "cost < $1")
    bad = tmp_path / "bad.json"
    bad.write_text("{}", "utf-8")
    found = run_evaldsl("check", str(suite), env={"EVALDSL_PRICES": str(bad)})
    assert found.returncode == 0, found.stdout  # (a warning: the suite is sound)
    assert f"cost.eval:4:3: warning[W513]: EVALDSL_PRICES={bad}: a price table is" in found.stdout
    assert found.stdout.count("W513") == 1
    fine = run_evaldsl("check", str(suite), env={"EVALDSL_PRICES": ""})
    assert "W513" not in fine.stdout
    # a workflow state's cost is its own (`total_cost_usd`), priced by no table
    state = tmp_path / "state.eval"
    completed = ROOT / "examples" / "research" / "states" / "completed.json"
    state.write_text(f'case "s"\n  state "{completed}"\n  cost < $1\n', "utf-8")
    found = run_evaldsl("check", str(state), env={"EVALDSL_PRICES": str(bad)})
    assert found.returncode == 0 and "W513" not in found.stdout, found.stdout


def _cached_chat(tmp_path: Path, model: str, cached: object) -> Path:
    """A chat completion of `model` whose 100,000 input tokens were read from the prompt
    cache `cached` times (its `prompt_tokens_details.cached_tokens`)."""
    body = json.loads((ROOT / "tests/fixtures/realworld/openai-chat-tools/response-final.json")
                      .read_text("utf-8"))  # fmt: skip
    body["model"] = model
    body["usage"]["prompt_tokens"] = 100_000
    body["usage"]["prompt_tokens_details"]["cached_tokens"] = cached
    path = tmp_path / "cached.json"
    path.write_text(json.dumps(body), "utf-8")
    return path


def test_a_user_s_table_prices_openai_cached_input(tmp_path: Path) -> None:
    # acme-1's 100,000 input tokens, 80,000 of them cached: 20,000 at $1 and 80,000 at
    # $0.10 a million, 25 output tokens at $2
    path = _cached_chat(tmp_path, "acme-1", 80_000)
    suite = tmp_path / "cost.eval"
    suite.write_text(f'case "c"\n  trace "{path.name}" as openai\n  cost < $0.03\n  cost > $0.02\n')
    table = _table(tmp_path, {"acme-1": {"input": 1, "output": 2, "cached_input": 0.1}})
    priced = _verdicts(tmp_path, suite, {"EVALDSL_PRICES": str(table)})
    assert [a["status"] for a in priced] == ["pass", "pass"], priced
    # without a cached-input price the cost cannot be told: not the full price for all
    table = _table(tmp_path, {"acme-1": {"input": 1, "output": 2}})
    unpriced = _verdicts(tmp_path, suite, {"EVALDSL_PRICES": str(table)})
    assert [a["status"] for a in unpriced] == ["error", "error"]
    assert "no `cached_input` price is known for it" in unpriced[0]["message"]
    assert f"EVALDSL_PRICES={table}" in unpriced[0]["message"]
    bad = _table(tmp_path, {"acme-1": {"input": 1, "output": 2, "cached_input": -1}})
    with pytest.raises(PriceTableError, match="`cached_input`"):
        read_user_table(str(bad))
