"""What the relay metered of one agent call, and the one rule that turns it into the call's cost.

The relay prices every request whose model has a price (``prices.py``). A request for a model
without one cannot be priced as it passes, so such a call is priced by the cost the CLI itself
reports for it (the CLI knows its own models' prices), else charged at its cap, the most it was
allowed to spend, else its cost is unknown. The call's usage says which (``cost_source``):

* ``price_table`` — every request priced by the relay (logs recorded before unpriced models were
  priced by the CLI's figure call this ``relay``);
* ``cli_reported`` — some request had no price: the CLI's own figure, at least what the relay
  priced of the call;
* ``cap`` — some request had no price and the CLI's figure does not cover it: the call's whole
  cap;
* ``unknown`` — the same without a cap: counted as a call of unknown cost.

The CLI's figure covers only the CLI's own requests. Whoever else in the call's sandbox sent one
(the agent's shell can reach the relay) is not in it, so the CLI's figure is taken only when the
tokens the relay saw answered for the unpriced models are no more than the CLI reports for them
(its ``modelUsage``), and no such request was still open when the call ended.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from replay.meter import CAP, CLI_REPORTED  # the run's meter counts the calls so priced apart

PRICE_TABLE = "price_table"
UNKNOWN = "unknown"
API_TOKEN_KEYS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
CLI_TOKEN_KEYS = ("inputTokens", "outputTokens", "cacheCreationInputTokens", "cacheReadInputTokens")


@dataclass(frozen=True)
class MeterReading:
    """What a call's requests cost, as the relay metered them."""

    cost_usd: float | None   # None: a request had no price (``unpriced``); ``priced_usd`` is the rest
    requests: int
    refusals: tuple[str, ...]
    budget_refused: bool     # a request was refused because the call's cap was spent
    # Of cost_usd: requests whose answer was not read to its end (cut off, or still being answered
    # when the call ended), charged at their most: the API may have billed less for them.
    at_most_usd: float = 0.0
    refused: int = 0            # refusals in all (``refusals`` keeps the first few)
    priced_usd: float = 0.0     # what the relay could price of the call's requests
    unpriced: int = 0           # requests for a model without a price
    models: tuple[str, ...] = ()           # every model the requests asked for, in order of first use
    unpriced_models: tuple[str, ...] = ()  # those of them without a price
    unpriced_tokens: int = 0    # the tokens the answers to unpriced requests reported
    unpriced_open: int = 0      # unpriced requests still unanswered when the call ended

    def usage(self, cli_cost_usd: float | None) -> dict[str, Any]:
        """What goes into the call's recorded usage."""
        shown: dict[str, Any] = {"requests": self.requests, "cli_cost_usd": cli_cost_usd}
        if self.refusals:
            shown.update(refused=list(self.refusals), refused_count=self.refused)
        if self.at_most_usd:
            shown["charged_at_most_usd"] = self.at_most_usd
        if self.unpriced:
            shown.update(unpriced_requests=self.unpriced, unpriced_models=list(self.unpriced_models),
                         unpriced_tokens=self.unpriced_tokens, priced_usd=self.priced_usd)
        return shown


def api_tokens(usage: Mapping[str, Any]) -> int:
    """The tokens a Messages-API answer's ``usage`` reports (input, output, cache written and read)."""
    return sum(v for k in API_TOKEN_KEYS if isinstance(v := usage.get(k), int) and v > 0)


def cli_tokens(model_usage: object, models: tuple[str, ...]) -> int | None:
    """The tokens the CLI's ``modelUsage`` reports for ``models`` (None: it names none of them, so
    there is nothing to compare)."""
    if not isinstance(model_usage, Mapping):
        return None
    counts = [model_usage[m] for m in models if m in model_usage]
    if not counts:
        return None
    return sum(v for c in counts if isinstance(c, Mapping) for k in CLI_TOKEN_KEYS
               if isinstance(v := c.get(k), int) and v > 0)


def call_cost(reading: MeterReading | None, cli_cost_usd: float | None, cap_usd: float | None,
              cli_tokens_seen: int | None = None) -> tuple[float | None, str]:
    """The call's cost and where it came from (the ``cost_source`` values above). Without a
    reading (the relay not in the path) the CLI's figure is all there is; when the CLI gave none,
    the run's ledger charges the call its cap. ``cli_tokens_seen``: what the CLI reported of the
    unpriced models (``cli_tokens``; None: it did not say)."""
    if reading is None:
        return cli_cost_usd, CLI_REPORTED if cli_cost_usd is not None else UNKNOWN
    if not reading.unpriced:
        return reading.cost_usd, PRICE_TABLE
    covered = not reading.unpriced_open and (cli_tokens_seen is None or reading.unpriced_tokens <= cli_tokens_seen)
    if cli_cost_usd is not None and covered:
        return round(max(cli_cost_usd, reading.priced_usd), 9), CLI_REPORTED
    if cap_usd is not None:
        return round(max(cap_usd, reading.priced_usd), 9), CAP
    return None, UNKNOWN
