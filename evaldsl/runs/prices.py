"""Token prices for `cost` on traces: a data file, and how a model id finds its price.

Takes a model id as a trace records it (`gpt-4o-mini-2024-07-18`, `openai/gpt-4o`,
`claude-sonnet-4-20250514`) and gives its (input, output) price in dollars per million
tokens, or `None` when the table does not list its family. The table is
`evaldsl/runs/prices.json` (shipped in the wheel) with its source and date; edit that file
to update it. A dated id resolves to its family by dropping a provider prefix (`openai/`),
a date suffix (`-2024-07-18`, `-20250514`) or `-latest`; nothing else is guessed (a longer
family is never priced as a shorter one: `gpt-4o-mini-tts` is not `gpt-4o-mini`).

Prompt-cache tokens (counted among a response's input tokens and given apart in its
`cacheTokens`) cost what the provider bills them: Anthropic's writes and reads a multiple
of the input price, from the table's `cache` entry; reads the model's own `cached_input`
price where the table gives one (`cached_input_price`: OpenAI's always, a model with none
has no cost for them; Anthropic's where a model's read price is not the usual multiple).
`cache_premium` is what they cost beyond the input price.

A model may price long prompts apart (`long_prompt`: OpenAI's gpt-5.4 past 272,000 input
tokens, Anthropic's Sonnet 4 past 200,000): a response whose input tokens, cached ones
included, are more than its `over` is priced whole, output too, at that entry's prices.
So the price of a response is `price_of(model, input_tokens)`.

A response billed at another service tier than the standard one (its reader's
`serviceTier`, or a traceplay body's `service_tier`) costs what that tier costs
(`tier_cost`): the model's `tiers` price for it where the table gives one
(`{"priority": {"input": N, "output": N, "cached_input": N}}`, the whole response, output
too, for a prompt of up to its `up_to` input tokens where it gives one, OpenAI's priority
excluding long context, past 128,000, and up to the `over` of the model's `long_prompt`;
a longer prompt at the tier's own `long_prompt` prices, else unpriced: a long prompt costs
more at every tier that prices it); else half its standard price for "flex" (OpenAI's,
billed at Batch API rates) and "batch" (Anthropic's Message Batches), long prompts and the
prompt cache included, for a model of the shipped table (a user's table gives the tiers of
its own models: another provider's flex may cost its standard price, as Groq's does); else
none (`UnpricedTier`: `cost` is an error naming the tier, never
the standard price of a response that cost more).

A user's own prices: the environment variable `EVALDSL_PRICES` names a JSON file of the
same shape (`{"models": {"gpt-5": {"input": 1.25, "output": 10}}}`), whose models are
added to the table, replacing the shipped price of a model it names too (its names are
looked up as ids are, in lower case: `GPT-5` prices `gpt-5-2025-08-07`; a key written
twice, or two names of one model, is a table that cannot be used, as is a `unit` other
than the shipped file's, "USD per 1M tokens"). It is read when this
module is imported (every process of a run, a `-j` worker, a Dask worker, reads the same
variable); a process that lives on (the language server) reads it again when the file
changes (`reread_if_changed`). A file that cannot be read, or does not hold such a table, prices no
model at all (`TABLE_PROBLEM` says why, and every `cost` of a trace is an error that says
it): a shipped price used where the user's table meant another would be a wrong cost.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Collection
from pathlib import Path
from typing import Any, TypeVar

from evaldsl.cache.regexes import regex
from evaldsl.language.diagnostics import not_utf8
from evaldsl.language.jsjson import js_json
from evaldsl.language.limits import MAX_SUITE_BYTES
from evaldsl.language.reading import FileProblem, read_regular
from evaldsl.runs.text import BadUsage, count_text, token_count

_TABLE: dict[str, Any] = json.loads((Path(__file__).with_name("prices.json")).read_text("utf-8"))

#: The environment variable naming a user's price table, and the keys such a file may have
#: (those of the shipped file: its models, the cache rates, and what describes it).
PRICES_VARIABLE = "EVALDSL_PRICES"
_TABLE_KEYS = ("models", "cache", "about", "source", "date", "unit")
SHAPE = '{"models": {"MODEL": {"input": N, "output": N}}}, in dollars per million tokens'
#: What a model's price may have beside `input` and `output`.
_PRICE_EXTRAS = {"cached_input", "long_prompt", "tiers"}
#: A model's prices for long prompts: the input tokens past which they apply, its (input,
#: output) price then, and its cached-input price then (None: the `cache` multiples of that
#: input price for Anthropic's reads; none for OpenAI's).
LongPrompt = tuple[int, tuple[float, float], float | None]
#: A model's prices at a service tier: (input, output), its cached-input price (None: the
#: `cache` multiples of that input price for Anthropic's reads; none for OpenAI's), the
#: input tokens of the longest prompt they price (`up_to`: OpenAI's Priority processing
#: "excludes long context", prompts past 128K; None: any the model's `long_prompt` does
#: not price apart) and its prices for longer prompts (`long_prompt`, or None).
TierPrice = tuple[tuple[float, float], float | None, int | None, LongPrompt | None]
#: The service tiers a response says it was billed at the standard price in (OpenAI's
#: "default", Anthropic's "standard", Groq's "on_demand": a reader records no tier for
#: them), and those billed
#: at half of it where the table lists no price of the model's for them (OpenAI's "flex",
#: at its Batch API rates, and Anthropic's "batch": both providers bill them at 50%).
STANDARD_TIERS = frozenset({"default", "standard", "on_demand"})
#: What a request asks (OpenAI's "auto": the provider picks), which no response bills at.
ASKED_TIER = "auto"
HALF_TIERS = frozenset({"flex", "batch"})
#: A `cache` entry's rates → the `cacheTokens` key of a response each prices.
_CACHE_KEYS = {"write_5m": "write5m", "write_1h": "write1h", "read": "read"}


def tier_name(tier: str) -> str:
    """A service tier's name (and a model's, in a user's table) as the price table looks
    it up (`read_user_table` keys its models and their `tiers` so): in lower case, without
    spaces around. ("Priority" is priced as "priority": a table written `"Priority"` is
    read as "priority", so either must find it.)"""
    return tier.strip().lower()


class PriceTableError(ValueError):
    """A user's price table that cannot be used: the message names the file and the fix."""


def read_user_table(
    path: str,
) -> tuple[
    dict[str, tuple[float, float]],
    dict[str, float],
    dict[str, float],
    dict[str, LongPrompt],
    dict[str, dict[str, TierPrice]],
]:
    """The price table in the JSON file at `path`: its models' (input, output) prices, the
    cache rates it gives, by `cacheTokens` key (the shipped rate for any it leaves out),
    the cached-input prices its models give (`cached_input`), their prices for long
    prompts (`long_prompt`) and at service tiers (`tiers`); or `PriceTableError` saying
    what is wrong. (A tuple, not a class: this module is imported at every start.)"""
    where = f"{PRICES_VARIABLE}={path}"
    try:
        # a regular file only (a FIFO or /dev/zero once hung every start of evaldsl), with or
        # without a BOM, as a JSON suite is read
        raw = read_regular(path, MAX_SUITE_BYTES)
        text = raw.decode("utf-8-sig")
    except FileProblem as problem:
        raise PriceTableError(f"{where}: cannot read the price table: {problem}") from None
    except UnicodeDecodeError as error:
        bad = not_utf8(path, raw, error, "the price table")
        raise PriceTableError(
            f"{where}:{bad.line}:{bad.column}: {bad.message} (save it as UTF-8)"
        ) from None
    try:
        table = json.loads(text, parse_int=_integer, object_pairs_hook=_object)
    except _TwiceError as error:
        raise PriceTableError(
            f"{where}: `{error}` is written twice in one object: which is meant cannot be told "
            "(write it once)"
        ) from None
    except json.JSONDecodeError as error:
        raise PriceTableError(
            f"{where}:{error.lineno}:{error.colno}: not JSON: {error.msg}"
        ) from None
    except RecursionError:
        raise PriceTableError(f"{where}: not a price table: nested too deep") from None
    if not isinstance(table, dict) or not isinstance(table.get("models"), dict):
        raise PriceTableError(f"{where}: a price table is {SHAPE}")
    for key in table:
        if key not in _TABLE_KEYS:
            raise PriceTableError(
                f"{where}: `{key}` is no key of a price table (it has `models` and may have "
                "`cache`, as evaldsl/runs/prices.json; `about`, `source`, `date` and `unit` "
                "describe it)"
            )
    # the one description read: prices are per million tokens, whatever `unit` says, so a
    # table of prices per thousand would price every call 1,000 times too low
    unit = table.get("unit", _TABLE["unit"])
    if not isinstance(unit, str) or " ".join(unit.lower().split()) != _TABLE["unit"].lower():
        raise PriceTableError(
            f"{where}: `unit` is {json.dumps(unit)}, but prices are read in {_TABLE['unit']} "
            f'(write them so, with "unit": "{_TABLE["unit"]}", or leave `unit` out)'
        )
    models: dict[str, tuple[float, float]] = {}
    cached: dict[str, float] = {}
    long: dict[str, LongPrompt] = {}
    tiers: dict[str, dict[str, TierPrice]] = {}
    named: dict[str, str] = {}  # a model as it is looked up → as the table writes it
    for name, price in table["models"].items():
        if not name.strip():
            raise PriceTableError(f"{where}: a model's name is empty")
        # ids are looked up in lower case without spaces around (model_family): `GPT-5` as
        # written would price no trace's `gpt-5-2025-08-07`, which the shipped gpt-5 would
        key = tier_name(name)
        if "/" in key:
            # a trace's `openai/gpt-5-2025-08-07` prices as its family `gpt-5`: a key with
            # the provider's prefix would price only the id written so, and the dated one
            # at the shipped price
            family = key.rsplit("/", 1)[1]
            raise PriceTableError(
                f"{where}: model {name!r}: ids are priced without their provider's prefix "
                f"(a trace's `{key}`, dated or not, prices as `{family}`): write {family!r}"
            )
        _name_once(named, key, name, f"{where}: models", "one model (model ids are")
        if not _has_keys(price, ("input", "output"), _PRICE_EXTRAS):
            raise PriceTableError(
                f"{where}: model {name!r}: a price is {SHAPE} (and may have `cached_input`: "
                "the price of input tokens read from the prompt cache, `long_prompt`: "
                f"the prices of a prompt of more input tokens, {_LONG_SHAPE}, and `tiers`: "
                f"its prices at service tiers, {_TIERS_SHAPE})"
            )
        models[key], own = _model_price(price, f"{where}: model {name!r}: ")
        if own is not None:
            cached[key] = own
        if "long_prompt" in price:
            long[key] = _long_prompt(price["long_prompt"], f"{where}: model {name!r}: ")
        if "tiers" in price:
            tiers[key] = _tiers(price["tiers"], f"{where}: model {name!r}: ")
    cache = table.get("cache", {})
    if not isinstance(cache, dict) or not set(cache) <= {*_CACHE_KEYS, "about"}:
        raise PriceTableError(
            f"{where}: `cache` is an object of multiples of the input price: "
            '{"write_5m": N, "write_1h": N, "read": N} (each may be left out)'
        )
    rates = {
        _CACHE_KEYS[k]: _amount(n, f"{where}: cache `{k}`")
        for k, n in cache.items()
        if k != "about"
    }
    return models, rates, cached, long, tiers


_TIERS_SHAPE = '{"TIER": {"input": N, "output": N}} (each may have `cached_input`)'


def _tiers(entry: object, where: str) -> dict[str, TierPrice]:
    """A model's `tiers` (its prices at service tiers), or `PriceTableError` naming its
    fault. A tier is named as a response says it, in lower case (`Priority` prices the
    "priority" every provider writes), as a model is (`read_user_table`)."""
    if not isinstance(entry, dict):
        raise PriceTableError(f"{where}`tiers` is {_TIERS_SHAPE}")
    found: dict[str, TierPrice] = {}
    named: dict[str, str] = {}  # a tier as it is looked up → as the table writes it
    for tier, price in entry.items():
        key = tier_name(tier)
        if key in STANDARD_TIERS or not key or key == ASKED_TIER:
            # ("default" and "standard" are the model's own `input` and `output`: two
            # prices of one tier could not both be right; "auto" is what a request asks,
            # and a price for it would price a response that says no tier billed it)
            raise PriceTableError(
                f"{where}`tiers.{tier}`: "
                + (
                    "a tier's name is empty"
                    if not key
                    else f"{tier!r} is what a request asks (the provider picks the tier), no "
                    "tier that bills: price the tier its responses say (`default`, "
                    "`priority`, …)"
                    if key == ASKED_TIER
                    else f"{tier!r} is the standard tier, whose prices are the model's own "
                    "`input` and `output`: write them there"
                )
            )
        _name_once(named, key, tier, f"{where}tiers", "one tier (tiers are")
        if not _has_keys(price, ("input", "output"), _TIER_EXTRAS):
            raise PriceTableError(
                f'{where}`tiers.{tier}` is {{"input": N, "output": N}} (and may have '
                "`cached_input`, `up_to`: the input tokens of the longest prompt they "
                f"price, and `long_prompt`: the prices of a longer one, {_LONG_SHAPE})"
            )
        pair, own = _model_price(price, where, f"tiers.{tier}.")
        up_to = price.get("up_to")
        if up_to is not None and (type(up_to) is not int or up_to <= 0):
            raise PriceTableError(
                f"{where}`tiers.{tier}.up_to` is {json.dumps(up_to)}, not a number of tokens "
                "(1 or more)"
            )
        long = price.get("long_prompt")
        found[key] = (
            pair,
            own,
            up_to,
            None if long is None else _long_prompt(long, f"{where}`tiers.{tier}`: "),
        )
    return found


#: What a tier's price may have beside `input` and `output`.
_TIER_EXTRAS = ("cached_input", "up_to", "long_prompt")


_LONG_SHAPE = '{"over": TOKENS, "input": N, "output": N} (and may have `cached_input`)'


def _model_price(
    price: dict[str, Any], where: str, within: str = ""
) -> tuple[tuple[float, float], float | None]:
    """A price's (input, output) and its `cached_input` (None when it gives none); `within`
    names the entry holding them (`long_prompt.`) in a fault's message."""
    pair = (
        _amount(price["input"], f"{where}`{within}input`"),
        _amount(price["output"], f"{where}`{within}output`"),
    )
    if "cached_input" not in price:
        return pair, None
    return pair, _amount(price["cached_input"], f"{where}`{within}cached_input`")


def _has_keys(entry: object, required: tuple[str, ...], optional: Collection[str]) -> bool:
    """Whether `entry` is an object of every `required` key and no other but `optional`'s."""
    if not isinstance(entry, dict):
        return False
    keys = set(entry)
    return keys.issuperset(required) and keys <= {*required, *optional}


def _name_once(named: dict[str, str], key: str, name: str, where: str, one: str) -> None:
    """Note that `name` (a model's, a tier's) is looked up as `key`, or `PriceTableError`
    when another name of the table is looked up so too (`where` names them; `one` says
    what they are: "one model (model ids are")."""
    if key in named:
        raise PriceTableError(
            f"{where} {named[key]!r} and {name!r} are {one} compared in lower case, without "
            "spaces around): give it one price"
        )
    named[key] = name


def _long_prompt(entry: object, where: str) -> LongPrompt:
    """A model's `long_prompt` of a user's table, or `PriceTableError` naming its fault."""
    if not isinstance(entry, dict) or not _has_keys(
        entry, ("over", "input", "output"), ("cached_input",)
    ):
        raise PriceTableError(f"{where}`long_prompt` is {_LONG_SHAPE}")
    over = entry["over"]
    if type(over) is not int or over <= 0:
        raise PriceTableError(
            f"{where}`long_prompt.over` is {json.dumps(over)}, not a number of tokens (1 or more)"
        )
    pair, own = _model_price(entry, where, "long_prompt.")
    return over, pair, own


class _TwiceError(ValueError):
    """A key written twice in one object of a user's table (the message is the key)."""


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """An object of a user's table, refusing a key written twice (json keeps the last)."""
    found: dict[str, Any] = {}
    for key, value in pairs:
        if key in found:
            raise _TwiceError(key)
        found[key] = value
    return found


def _integer(text: str) -> float:
    """A JSON integer of a user's table: past a float's range (or Python's 4,300 digits,
    where int() raises), Infinity, which `_amount` refuses, not an OverflowError."""
    n = float(text)
    return n if math.isinf(n) else int(text)


def _amount(n: object, what: str) -> float:
    """A price or a rate of a user's table: a number, 0 or more, as a float."""
    if isinstance(n, bool) or not isinstance(n, int | float) or not 0 <= n < math.inf:
        raise PriceTableError(f"{what} is {json.dumps(n)}, not a number (0 or more)")
    return float(n)


#: The path of the user's price table, as `EVALDSL_PRICES` gave it when this module was
#: imported ("" when it names none).
USER_TABLE = os.environ.get(PRICES_VARIABLE, "")


def _prices() -> tuple[
    dict[str, tuple[float, float]],
    dict[str, float],
    dict[str, float],
    dict[str, LongPrompt],
    dict[str, dict[str, TierPrice]],
    frozenset[str],
    str | None,
]:
    """The table `cost` prices by, its cache rates, its models' cached-input prices and
    prices for long prompts and at service tiers, the models the user's table priced, and
    what is wrong with that table when it cannot be used (then no model is priced). A model
    the user's table prices has the cached-input price, long-prompt and tier prices that
    table gives it, if any: never the shipped ones of another price."""
    shipped = _TABLE["models"]
    models = {name: (float(p["input"]), float(p["output"])) for name, p in shipped.items()}
    cached = {name: float(p["cached_input"]) for name, p in shipped.items() if "cached_input" in p}
    long = {
        name: _long_prompt(p["long_prompt"], f"prices.json: model {name!r}: ")
        for name, p in shipped.items()
        if "long_prompt" in p
    }
    # (the shipped tiers as they are: `tests/test_prices.py` reads the file as a user's
    # table, checked, and compares; checking them here was ~30 us of every start)
    tiers = {
        name: {
            tier: (
                (float(t["input"]), float(t["output"])),
                t.get("cached_input"),
                t.get("up_to"),
                (
                    _long_prompt(t["long_prompt"], f"prices.json: model {name!r}: ")
                    if "long_prompt" in t
                    else None
                ),
            )
            for tier, t in p["tiers"].items()
        }
        for name, p in shipped.items()
        if "tiers" in p
    }
    cache = {_CACHE_KEYS[k]: float(_TABLE["cache"][k]) for k in _CACHE_KEYS}
    if not USER_TABLE:
        return models, cache, cached, long, tiers, frozenset(), None
    try:
        my_models, my_cache, my_cached, my_long, my_tiers = read_user_table(USER_TABLE)
    except PriceTableError as error:
        return {}, cache, {}, {}, {}, frozenset(), str(error)

    def kept(shipped: dict[str, T]) -> dict[str, T]:
        # (a shipped extra of a model the user's table prices is another price's)
        return {name: entry for name, entry in shipped.items() if name not in my_models}

    return (
        models | my_models,
        cache | my_cache,
        kept(cached) | my_cached,
        kept(long) | my_long,
        kept(tiers) | my_tiers,
        frozenset(my_models),
        None,
    )


def _stamp(path: str) -> tuple[int, int, int] | None:
    """What tells a file changed: its inode, size and modification time (None when it
    cannot be looked at: `read_user_table` says why)."""
    try:
        found = os.stat(path)
    except (OSError, ValueError):  # (ValueError: a path holding NUL)
        return None
    return found.st_ino, found.st_size, found.st_mtime_ns


#: model family (or id) → (input, output) dollars per million tokens; prompt-cache tokens'
#: price as a multiple of the input price, by the `cacheTokens` key of a response that
#: counts them (Anthropic's 5-minute writes, 1-hour writes, reads); model → dollars per
#: million input tokens read from the prompt cache (`cacheTokens.cached`, and Anthropic's
#: `read` where given); model → its prices for long prompts; model → service tier → its
#: prices at that tier; the models the user's table
#: (`EVALDSL_PRICES`) priced; and, when that table cannot be used, why
#: (then no model is priced). Read through this module (`prices.TABLE_PROBLEM`), not
#: imported by name: `reread_if_changed` binds them anew. (The file's stamp is taken
#: before it is read: a change while it is read is seen at the next look.)
_READ_STAMP = _stamp(USER_TABLE) if USER_TABLE else None
PRICES, CACHE_RATES, CACHED_INPUT, LONG_PROMPTS, TIERS, USER_MODELS, TABLE_PROBLEM = _prices()


def reread_if_changed() -> bool:
    """Read the user's table again when its file changed (or came or went) since it was
    read, for a process that outlives an edit of it (the language server, whose W513 would
    otherwise hold until it restarts); whether it did. Each name is bound anew, never
    changed in place, so a thread reading one meanwhile sees the old or the new one,
    whole (the language server's checks read `TABLE_PROBLEM` alone)."""
    global PRICES, CACHE_RATES, CACHED_INPUT, LONG_PROMPTS, TIERS, USER_MODELS, TABLE_PROBLEM
    global _READ_STAMP
    if not USER_TABLE:
        return False
    stamp = _stamp(USER_TABLE)
    if stamp == _READ_STAMP:
        return False
    _READ_STAMP = stamp
    PRICES, CACHE_RATES, CACHED_INPUT, LONG_PROMPTS, TIERS, USER_MODELS, TABLE_PROBLEM = _prices()
    return True


#: Where the shipped prices come from, and when they were taken.
SOURCE: str = _TABLE["source"]
DATE: str = _TABLE["date"]

#: A table's value (a price, a cached-input price).
T = TypeVar("T")

_SUFFIX = regex(r"(-\d{4}-\d{2}-\d{2}|-\d{8}|-latest)$")


def _unprefixed(model: str) -> str:
    """A model id in lower case without a provider's prefix (`openai/`)."""
    name = model.strip().lower()
    return name.rsplit("/", 1)[1] if "/" in name else name


def model_family(model: str) -> str:
    """The family a model id prices as.

    >>> model_family("gpt-4o-mini-2024-07-18"), model_family("openai/gpt-4o")
    ('gpt-4o-mini', 'gpt-4o')
    >>> model_family("claude-sonnet-4-20250514")
    'claude-sonnet-4'
    """
    return _SUFFIX.sub("", _unprefixed(model))


def price_of(model: object, prompt: float = 0) -> tuple[float, float] | None:
    """(input, output) dollars per million tokens for a model id, or `None` if unlisted;
    for a response of `prompt` input tokens (cached ones included), which a model's
    `long_prompt` prices apart past its `over`.

    >>> price_of("gpt-4o-mini-2024-07-18"), price_of("openai/gpt-4o-2024-05-13")
    ((0.15, 0.6), (5.0, 15.0))
    >>> price_of("claude-opus-3-20240229") is None
    True
    >>> price_of("gpt-5.4", 272_000), price_of("gpt-5.4", 272_001)
    ((2.5, 15.0), (5.0, 22.5))
    """
    long = _long_prompt_of(model, prompt)
    return long[1] if long is not None else _listed(PRICES, model)


def _long_prompt_of(model: object, prompt: float) -> LongPrompt | None:
    """`model`'s `long_prompt` when a response of `prompt` input tokens passes its `over`
    (its prices are then that entry's); None otherwise."""
    if prompt and (long := _listed(LONG_PROMPTS, model)) is not None and prompt > long[0]:
        return long
    return None


def long_priced(model: object) -> bool:
    """Whether `model`'s price depends on the prompt's size (it has a `long_prompt`): the
    generated passes keep a model's price between responses only when it does not."""
    return _listed(LONG_PROMPTS, model) is not None


def _listed(table: dict[str, T], model: object) -> T | None:
    """What `table` (the prices, the cached-input prices) lists for a model id, found as
    `_listed_as` finds it; None when it lists nothing, or the id is not text."""
    if not isinstance(model, str):
        return None  # a model id that is not text names no price
    found = table.get(model)
    return found if found is not None else table.get(_listed_as(model))


def _listed_as(model: str) -> str:
    """The key a model id is looked up under: itself, or as a user's table writes its
    names, in lower case without a provider's prefix (`read_user_table` refuses a key
    with one; a snapshot listed apart from its family: `openai/gpt-4o-2024-05-13`), or
    else its family (listed or not)."""
    if model in PRICES:
        return model
    bare = _unprefixed(model)
    return bare if bare in PRICES else _SUFFIX.sub("", bare)


def cache_premium(input_price: float, cache: Any, model: object, prompt: float) -> float | None:
    """Dollars a response's prompt-cache tokens cost beyond `input_price` (dollars per
    million, `price_of(model, prompt)`'s), at which `cost` already charged them as input
    tokens. `cache` is the response's `cacheTokens`: Anthropic's `{"write5m": n, "write1h":
    n, "read": n}`, at the table's multiples of the input price (its reads at `model`'s
    own cached-input price where the table gives one), and OpenAI's `{"cached": n}`, at
    that price (a key absent is 0); None when `model` has cached tokens and no such price
    (its cost cannot be told: `unpriced_hint` says so); anything else, a count that is not
    a number ≥ 0, or more of them than the response's `prompt` input tokens (which count
    them), is a `BadUsage` (never $0, nor a cost below nothing).

    >>> round(cache_premium(3.0, {"write5m": 20000, "read": 80000}, None, 100000), 6)
    -0.201
    >>> round(cache_premium(2.5, {"cached": 1000000}, "gpt-4o-2024-08-06", 1000000), 6)
    -1.25
    >>> round(cache_premium(4.0, {"read": 1000000}, "claude-opus-5-5", 1000000), 6)
    -3.8
    """
    return _premium(input_price, cache, cached_input_price(model, prompt), prompt)


def _premium(input_price: float, cache: Any, own: float | None, prompt: float) -> float | None:
    """`cache_premium` at a model's cached-input price `own` (None: it gives none), of a
    response of `prompt` input tokens."""
    if not isinstance(cache, dict):
        raise BadUsage(f"`cacheTokens` is {type(cache).__name__}, not an object of counts")
    extra = 0.0
    reads: float = 0
    counted: float = 0  # (every prompt-cache token: each is among the input tokens)
    for key, rate in CACHE_RATES.items():
        n = token_count(cache.get(key), f"cacheTokens.{key}")
        counted += n
        if key == "read" and own is not None:
            reads = n  # (the model's own price for them, not the multiple)
        else:
            extra += n * (rate - 1.0)
    dollars = input_price * extra / 1_000_000
    openai = token_count(cache.get("cached"), "cacheTokens.cached")
    # more of them than the input tokens would price the rest below nothing: a negative
    # cost, which passes every `cost < $X` (the readers refuse such counts as they read them)
    if counted + openai > prompt:
        raise BadUsage(
            f"token usage `cacheTokens` counts {count_text(counted + openai)} prompt-cache "
            f"tokens, more than its input tokens ({count_text(prompt)}), which count them"
        )
    cached = openai + reads
    if cached:
        if own is None:
            return None
        dollars += cached * (own - input_price) / 1_000_000
    return dollars


def cached_input_price(model: object, prompt: float = 0) -> float | None:
    """Dollars per million input tokens `model` reads from the prompt cache, found as its
    price is (`price_of`, for a prompt of `prompt` input tokens); None when the table gives
    it none.

    >>> cached_input_price("gpt-4.1-mini-2025-04-14"), cached_input_price("gpt-3.5-turbo")
    (0.1, None)
    """
    long = _long_prompt_of(model, prompt)
    return long[2] if long is not None else _listed(CACHED_INPUT, model)


class UnpricedTier:
    """A response of a priced `model` billed at a service `tier` whose price is not known
    (`tier_cost`): its cost is not the standard price, and `unpriced_hint` says so;
    `cached`: the tier is priced, but not the input it read from the prompt cache; `long`:
    the tier is priced for prompts up to `long[1]` input tokens, and the response's
    prompt, of `long[0]`, is longer. (A plain class: a `NamedTuple`'s making was ~0.3 ms
    of every start, which imports this module.)"""

    __slots__ = ("cached", "long", "model", "tier")

    def __init__(
        self, model: str, tier: Any, cached: bool, long: tuple[float, int] | None = None
    ) -> None:
        self.model, self.tier, self.cached, self.long = model, tier, cached, long

    def __repr__(self) -> str:
        return f"UnpricedTier(model={self.model!r}, tier={self.tier!r}, cached={self.cached})"


def billed_tier(tier: Any) -> Any:
    """The service tier a response says it was billed at, as its reader records it
    (`serviceTier`): None for none said or the standard one (`STANDARD_TIERS`), else what
    it says, whatever it is (`tier_cost` prices it or says why not).

    >>> billed_tier("default"), billed_tier(None), billed_tier("priority")
    (None, None, 'priority')
    """
    if tier is None:
        return None
    # (named as a user's table names tiers, in any case: "Default" is the standard one)
    standard = type(tier) is str and (tier in STANDARD_TIERS or tier_name(tier) in STANDARD_TIERS)
    return None if standard else tier


def body_tier(output: Any) -> Any:
    """`billed_tier` of a provider body kept as a response's output (traceplay's): an OpenAI
    chat completion's or Responses object's `service_tier`, else an Anthropic message's
    `usage.service_tier`.

    >>> body_tier({"service_tier": "flex"}), body_tier({"usage": {"service_tier": "batch"}})
    ('flex', 'batch')
    """
    if type(output) is not dict:
        return None
    tier = output.get("service_tier")
    if tier is None and type(usage := output.get("usage")) is dict:
        tier = usage.get("service_tier")
    return billed_tier(tier)


def tier_note(said: str, n: int) -> str:
    """What `inspect` notes of `n` responses billed at the tier `said` (its JSON text).

    >>> tier_note('"flex"', 2)[:59]
    '2 responses billed at service tier "flex", not the standard'
    """
    return (
        f"{n} response{'s' if n > 1 else ''} billed at service tier {said[:40]}, not the "
        f"standard one: `cost` prices {'them' if n > 1 else 'it'} as that tier bills (the "
        "price table's `tiers`, else flex and batch at half the standard price), or is an "
        "error: never at the standard price"
    )


def tier_cost(
    model: Any, tier: Any, used_in: float, used_out: float, cache: Any
) -> float | UnpricedTier | None:
    """Dollars of a response of `used_in` and `used_out` tokens (`cache`: its `cacheTokens`,
    or None) that `model` billed at the service `tier` (`billed_tier`'s, not None): at the
    model's price for that tier where the table gives one (`tiers`: for a prompt of up to
    its `up_to` input tokens and the model's `long_prompt` `over`, a longer one at the
    tier's own `long_prompt` prices, else unpriced); else, for "flex" and
    "batch" of a model of the shipped table, half what the standard price makes it
    (`price_of`, `cache_premium`). None when
    the model has no price at all (nor its cached input), as a standard response; an
    `UnpricedTier` when its price at this tier is unknown: never its standard price.

    >>> tier_cost("gpt-5-2025-08-07", "flex", 1_000_000, 0, None)
    0.625
    >>> tier_cost("gpt-5-2025-08-07", "priority", 100_000, 0, None)
    0.25
    >>> tier_cost("gpt-5-2025-08-07", "priority", 200_000, 0, None).long
    (200000, 128000)
    >>> tier_cost("gpt-5-2025-08-07", "default", 1_000_000, 0, None)
    1.25
    >>> tier_cost("claude-sonnet-4-5", "priority", 1_000_000, 0, None)
    UnpricedTier(model='claude-sonnet-4-5', tier='priority', cached=False)
    """
    listed = _listed(TIERS, model)
    name = tier_name(tier) if type(tier) is str else None
    if listed is not None and name is not None and name in listed:
        (price_in, price_out), own, up_to, long = listed[name]
        if long is not None and used_in > long[0]:
            (price_in, price_out), own = long[1], long[2]
        elif (limit := _tier_limit(model, up_to)) is not None and used_in > limit:
            # a prompt longer than the tier's prices are for (OpenAI's priority excludes
            # long context; a model's long prompts cost more at every tier that prices
            # them): its price there is not known, and the short prompt's is too low
            if cache is not None:  # (counts that cannot be are still the run's error)
                _premium(price_in, cache, own, used_in)
            return UnpricedTier(model, tier, False, (used_in, limit))
        dollars = (used_in * price_in + used_out * price_out) / 1_000_000
        if cache is not None:
            premium = _premium(price_in, cache, own, used_in)
            if premium is None:
                return UnpricedTier(model, tier, True)
            dollars += premium
        return dollars
    price = price_of(model, used_in)
    if price is None:
        return None
    # (a standard tier's name, as an event written by hand may say it: the standard price)
    standard = name in STANDARD_TIERS
    # flex and batch at half only for a model the shipped table prices (OpenAI's and
    # Anthropic's, which bill them so): a user's table prices models of other providers,
    # whose "flex" may cost the standard price (Groq's), so it gives their tiers itself
    half = name in HALF_TIERS and _listed_as(model) not in USER_MODELS
    if not (standard or half):
        return UnpricedTier(model, tier, False)
    dollars = (used_in * price[0] + used_out * price[1]) / 1_000_000
    if cache is not None:
        premium = cache_premium(price[0], cache, model, used_in)
        if premium is None:
            return None  # (its cached reads have no price: `unpriced_hint` says so)
        dollars += premium
    return dollars if standard else dollars / 2


def _thousands(count: float) -> str:
    """A token count with its thousands marked (`300,000`), as a message shows a long
    prompt's."""
    return f"{int(count):,}" if float(count).is_integer() else str(count)


def _tier_limit(model: object, up_to: int | None) -> int | None:
    """The input tokens of the longest prompt a tier's price without a `long_prompt` of
    its own prices: its `up_to`, else the `over` of the model's `long_prompt`, whichever
    is less; None when neither bounds it."""
    long = _listed(LONG_PROMPTS, model)
    if long is None:
        return up_to
    return long[0] if up_to is None else min(up_to, long[0])


def unpriced_hint(model: object) -> str:
    """Why `model` has no price, and how to give it one (for `cost`'s error and `inspect`);
    `model` an `UnpricedTier` for a response billed at a tier whose price is unknown."""
    if TABLE_PROBLEM is not None:
        return TABLE_PROBLEM
    where = f"{PRICES_VARIABLE}={USER_TABLE}" if USER_TABLE else PRICES_VARIABLE
    if isinstance(model, UnpricedTier):
        return _tier_hint(model, where)
    if price_of(model) is not None:  # (priced, but its prompt-cache reads are not)
        return (
            f"model {model!r} read input from OpenAI's prompt cache, and no `cached_input` "
            f"price is known for it, so `cost` cannot be computed: give it one in {where}"
        )
    if USER_TABLE:  # (the user's table was read: it lacks the model)
        return (
            f"no price known for model {model!r}, so `cost` cannot be computed: neither the "
            f"shipped table nor {PRICES_VARIABLE}={USER_TABLE} lists it (add it there: {SHAPE})"
        )
    return (
        f"no price known for model {model!r}, so `cost` cannot be computed: name a price "
        f"table of your own in {PRICES_VARIABLE} (a JSON file: {SHAPE})"
    )


def _tier_hint(unpriced: UnpricedTier, where: str) -> str:
    """`unpriced_hint` of a response billed at a service tier whose price is unknown."""
    model, tier = unpriced.model, unpriced.tier
    said = js_json(tier)[:40]
    family = _listed_as(model) if isinstance(model, str) else model
    if unpriced.long is not None:
        used_in, limit = unpriced.long
        return (
            f"model {model!r} was billed at service tier {said} for a prompt of "
            f"{_thousands(used_in)} input tokens, past the {limit:,} its price at that tier "
            "is for (a longer prompt costs more, and OpenAI's Priority processing prices "
            "none past 128,000), and no price at that tier for a longer prompt is known, so "
            "`cost` cannot be computed (the shorter prompt's price would be wrong): give "
            f"`tiers.{tier}.long_prompt` ({_LONG_SHAPE}) in {where}"
        )
    if unpriced.cached:
        return (
            f"model {model!r} was billed at service tier {said} and read input from the "
            f"prompt cache, and no `cached_input` price at that tier is known for it, so "
            f"`cost` cannot be computed: give `tiers.{tier}` one in {where}"
        )
    if type(tier) is not str or not tier_name(tier):  # (a table names tiers by text)
        return (
            f"model {model!r} was billed at service tier {said}, as its response says, which "
            "is not a tier's name (a text not empty), so its price cannot be known and `cost` "
            "cannot be computed: its recording's `service_tier` is not as the provider writes it"
        )
    # ("auto" is what a request asks for; a response says the tier that served it)
    asked = (
        ' ("auto" is what a request asks for, not the tier that billed it)'
        if tier_name(tier) == ASKED_TIER
        else f" (half the standard price only for the shipped table's models: {tier} of "
        "another provider may cost its standard price, as Groq's flex does)"
        if tier_name(tier) in HALF_TIERS
        else ""
    )
    return (
        f"model {model!r} was billed at service tier {said}, as its response says{asked}, "
        "whose price is not known, so `cost` cannot be computed (its standard price would "
        f"be wrong): give the model a price at that tier in {where}: "
        f'{{"models": {{"{family}": {{"input": N, "output": N, "tiers": {{{said}: '
        '{"input": N, "output": N}}}}}'
    )


def priced_as(model: str) -> str:
    """How `inspect` says a priced model found its price: its family, the user's table.

    >>> priced_as("gpt-4o-mini-2024-07-18")
    'gpt-4o-mini-2024-07-18 as gpt-4o-mini'
    """
    key = _listed_as(model)
    said = model if key in (model, model.strip().lower()) else f"{model} as {key}"
    return f"{said} from {PRICES_VARIABLE}" if key in USER_MODELS else said


def table_stamp() -> tuple[str, str]:
    """The table `cost` prices by in this process, as a short digest and in words: a
    process that scores for another (a Dask worker, which reads its own environment's
    `EVALDSL_PRICES`) must price as the other does, or a trace's cost would depend on
    where it was scored."""
    import hashlib  # (here: only a program sent to other processes asks)

    table = repr(
        (
            sorted(PRICES.items()),
            sorted(CACHE_RATES.items()),
            sorted(CACHED_INPUT.items()),
            sorted(LONG_PROMPTS.items()),
            sorted((name, sorted(entry.items())) for name, entry in TIERS.items()),
            TABLE_PROBLEM,
        )
    )
    said = f"{PRICES_VARIABLE}={USER_TABLE}" if USER_TABLE else "the shipped table"
    return hashlib.sha256(table.encode()).hexdigest()[:16], said
