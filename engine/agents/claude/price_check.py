"""Before a run with a budget spends anything: does the model the CLI will ask for have a price?

The CLI resolves the run's ``model`` (an alias such as ``sonnet``) to a model id of its own
release, which the price list (``prices.json``) may not know yet. The relay cannot price such a
model's requests, so it cannot hold each request to the call's cap: calls are charged what the
CLI reports, else their whole cap (``reading.call_cost``). The user is told so before the first
call, with the model's id and how to price it. The id is the one the start-up check's request
asked for (``PreflightResult.models``), else the configured name.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from engine.agents.claude.prices import price_of
from events.domain import ModelPrice


def unpriced_models(models: Sequence[str], prices: Mapping[str, ModelPrice]) -> list[str]:
    """Those of ``models`` with no price in the run's table or the price list, in order."""
    return [model for model in dict.fromkeys(models) if price_of(model, prices) is None]


def price_warning(*, models: Sequence[str], configured: str, prices: Mapping[str, ModelPrice],
                  budget_usd: float | None) -> str | None:
    """The warning for a run with a budget whose model has no price (None: nothing to say)."""
    if budget_usd is None:
        return None
    missing = unpriced_models(list(models) or [configured], prices)
    if not missing:
        return None
    example = json.dumps({missing[0]: {"input_per_mtok": "IN", "output_per_mtok": "OUT"}}).replace('"IN"', "IN") \
        .replace('"OUT"', "OUT")
    named = ", ".join(missing)
    return (f"the Claude CLI asks for model {named} (model setting {configured!r}), which has no price in the "
            f"engine's price list (engine/agents/claude/prices.json) or the run's model_prices: the engine cannot "
            f"meter each of its requests against --max-budget {budget_usd:g}. Each call is charged the cost the "
            "CLI reports for it, or its whole cap when the CLI reports none, and the CLI stops a call at its cap. "
            f"To meter every request, give the model its price (IN and OUT: US dollars per million input and "
            f"output tokens): --set 'model_prices={example}', or the same in a --config file.")
