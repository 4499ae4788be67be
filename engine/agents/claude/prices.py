"""What a model's tokens cost, for the money the API relay meters (issue 26).

One price table: the run's ``model_prices`` (the same table the OpenAI-compatible backend prices
its calls with), and for the Anthropic models the list prices the bundled Claude CLI itself
prices its calls at (so a call's metered cost equals the cost the CLI reports for it), kept in
one data file beside this module, ``prices.json``, to be updated as new models appear. A name
found in neither has no price: the relay cannot price its requests, and the call is charged
what the CLI reports it cost, else its cap (``metered.call_cost``).

Anthropic's prompt cache is priced from the input price: writing it (five-minute TTL) costs 1.25×,
the one-hour TTL 2×, reading it 0.1×. Long-context surcharges (the 1M-token beta) are not
modelled: the CLI does not request that beta unless a ``[1m]`` model is chosen.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from events.domain import ModelPrice

CACHE_WRITE_5M = 1.25
CACHE_WRITE_1H = 2.0
CACHE_READ = 0.1

PRICE_FILE = Path(__file__).with_name("prices.json")


def load_list_prices(path: Path = PRICE_FILE) -> dict[str, ModelPrice]:
    """The list prices of ``path``: model-id prefixes (the API's ids carry a date suffix) and their
    prices in US dollars per million input / output tokens; the longest matching prefix wins."""
    models = json.loads(path.read_text(encoding="utf-8"))["models"]
    return {prefix: ModelPrice.model_validate(price) for prefix, price in models.items()}


ANTHROPIC_LIST_PRICES: dict[str, ModelPrice] = load_list_prices()


def price_of(model: str, table: Mapping[str, ModelPrice]) -> ModelPrice | None:
    """The price of ``model``: the run's own table first (exact name), then the list prices."""
    if model in table:
        return table[model]
    matches = [prefix for prefix in ANTHROPIC_LIST_PRICES if model.startswith(prefix)]
    return ANTHROPIC_LIST_PRICES[max(matches, key=len)] if matches else None


def _count(usage: Mapping[str, Any], key: str) -> int:
    value = usage.get(key)
    return value if isinstance(value, int) and value > 0 else 0


def usage_cost(price: ModelPrice, usage: Mapping[str, Any]) -> float:
    """US dollars for one response's ``usage`` (the Messages API's usage object)."""
    written = _count(usage, "cache_creation_input_tokens")
    split = usage.get("cache_creation")
    one_hour = _count(split, "ephemeral_1h_input_tokens") if isinstance(split, Mapping) else 0
    one_hour = min(one_hour, written)
    per_input = price.input_per_mtok / 1e6
    return (_count(usage, "input_tokens") * per_input
            + (written - one_hour) * per_input * CACHE_WRITE_5M
            + one_hour * per_input * CACHE_WRITE_1H
            + _count(usage, "cache_read_input_tokens") * per_input * CACHE_READ
            + _count(usage, "output_tokens") * price.output_per_mtok / 1e6)


def cache_write_factor(body: bytes) -> float:
    """The dearest rate the request's input may be billed at, by what its ``cache_control`` asks."""
    if b'"1h"' in body:
        return CACHE_WRITE_1H
    return CACHE_WRITE_5M if b"cache_control" in body else 1.0


def worst_case_cost(price: ModelPrice, input_tokens: int, max_tokens: int, input_factor: float = CACHE_WRITE_1H) -> float:
    """The most a request can cost: its input at ``input_factor`` times the input price (written to
    the cache), and every token it may write."""
    return (input_tokens * price.input_per_mtok * input_factor + max_tokens * price.output_per_mtok) / 1e6
