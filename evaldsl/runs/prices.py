"""Token prices for `cost` on traces: a data file, and how a model id finds its price.

Takes a model id as a trace records it (`gpt-4o-mini-2024-07-18`, `openai/gpt-4o`,
`claude-sonnet-4-20250514`) and gives its (input, output) price in dollars per million
tokens, or `None` when the table does not list its family. The table is
`evaldsl/runs/prices.json` (shipped in the wheel) with its source and date; edit that file
to update it. A dated id resolves to its family by dropping a provider prefix (`openai/`),
a date suffix (`-2024-07-18`, `-20250514`) or `-latest`; nothing else is guessed (a longer
family is never priced as a shorter one: `claude-opus-4-5` is not `claude-opus-4`).

Prompt-cache tokens (Anthropic's cache writes and reads, counted among a response's input
tokens and given apart in its `cacheTokens`) cost a multiple of the input price, from the
table's `cache` entry: `cache_premium` is what they cost beyond the input price.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evaldsl.cache.regexes import regex
from evaldsl.runs.text import BadUsage, token_count

_TABLE: dict[str, Any] = json.loads((Path(__file__).with_name("prices.json")).read_text("utf-8"))

#: model family → (input, output) dollars per million tokens.
PRICES: dict[str, tuple[float, float]] = {
    name: (float(p["input"]), float(p["output"])) for name, p in _TABLE["models"].items()
}
#: Where the prices come from, and when they were taken.
SOURCE: str = _TABLE["source"]
DATE: str = _TABLE["date"]

#: Prompt-cache tokens' price as a multiple of the input price, by the `cacheTokens` key
#: of a response that counts them: 5-minute writes, 1-hour writes, reads.
CACHE_RATES: dict[str, float] = {
    "write5m": float(_TABLE["cache"]["write_5m"]),
    "write1h": float(_TABLE["cache"]["write_1h"]),
    "read": float(_TABLE["cache"]["read"]),
}

_SUFFIX = regex(r"(-\d{4}-\d{2}-\d{2}|-\d{8}|-latest)$")


def model_family(model: str) -> str:
    """The family a model id prices as.

    >>> model_family("gpt-4o-mini-2024-07-18"), model_family("openai/gpt-4o")
    ('gpt-4o-mini', 'gpt-4o')
    >>> model_family("claude-sonnet-4-20250514")
    'claude-sonnet-4'
    """
    name = model.strip().lower()
    if "/" in name:
        name = name.rsplit("/", 1)[1]
    return _SUFFIX.sub("", name)


def price_of(model: object) -> tuple[float, float] | None:
    """(input, output) dollars per million tokens for a model id, or `None` if unlisted.

    >>> price_of("gpt-4o-mini-2024-07-18")
    (0.15, 0.6)
    >>> price_of("claude-opus-4-5-20251101") is None
    True
    """
    if not isinstance(model, str):
        return None  # a model id that is not text names no price
    found = PRICES.get(model)
    return found if found is not None else PRICES.get(model_family(model))


def cache_premium(input_price: float, cache: Any) -> float:
    """Dollars a response's prompt-cache tokens cost beyond `input_price` (dollars per
    million), at which `cost` already charged them as input tokens. `cache` is the
    response's `cacheTokens`: `{"write5m": n, "write1h": n, "read": n}` (a key absent is
    0); anything else, or a count that is not a number ≥ 0, is a `BadUsage` (never $0).

    >>> round(cache_premium(3.0, {"write5m": 20000, "read": 80000}), 6)
    -0.201
    """
    if not isinstance(cache, dict):
        raise BadUsage(f"`cacheTokens` is {type(cache).__name__}, not an object of counts")
    extra = 0.0
    for key, rate in CACHE_RATES.items():
        extra += token_count(cache.get(key), f"cacheTokens.{key}") * (rate - 1.0)
    return input_price * extra / 1_000_000
