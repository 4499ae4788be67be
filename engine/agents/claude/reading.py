"""What the relay metered of one agent call, and the one rule that turns it into the call's cost.

The relay prices every request whose model has a price (``prices.py``). A request for a model
without one cannot be priced as it passes, so such a call is priced by the cost the CLI itself
reports for it (the CLI knows its own models' prices), else charged at its cap, the most it was
allowed to spend, else its cost is unknown. The call's usage says which (``cost_source``):

* ``price_table`` — every request priced by the relay (logs recorded before unpriced models were
  priced by the CLI's figure call this ``relay``);
* ``cli_reported`` — some request had no price: the CLI's own figure, at least what the relay
  priced of the call;
* ``cap`` — some request had no price and the CLI reported no cost: the call's whole cap;
* ``unknown`` — no price, no figure from the CLI and no cap: counted as a call of unknown cost.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from replay.meter import CAP, CLI_REPORTED  # the run's meter counts the calls so priced apart

PRICE_TABLE = "price_table"
UNKNOWN = "unknown"


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

    def usage(self, cli_cost_usd: float | None) -> dict[str, Any]:
        """What goes into the call's recorded usage."""
        shown: dict[str, Any] = {"requests": self.requests, "cli_cost_usd": cli_cost_usd}
        if self.refusals:
            shown.update(refused=list(self.refusals), refused_count=self.refused)
        if self.at_most_usd:
            shown["charged_at_most_usd"] = self.at_most_usd
        if self.unpriced:
            shown.update(unpriced_requests=self.unpriced, unpriced_models=list(self.unpriced_models),
                         priced_usd=self.priced_usd)
        return shown


def call_cost(reading: MeterReading | None, cli_cost_usd: float | None, cap_usd: float | None
              ) -> tuple[float | None, str]:
    """The call's cost and where it came from (the ``cost_source`` values above). Without a
    reading (the relay not in the path) the CLI's figure is all there is: none is left to the
    run's ledger, which charges such a call its cap."""
    if reading is None:
        return cli_cost_usd, CLI_REPORTED if cli_cost_usd is not None else UNKNOWN
    if not reading.unpriced:
        return reading.cost_usd, PRICE_TABLE
    if cli_cost_usd is not None:
        return round(max(cli_cost_usd, reading.priced_usd), 9), CLI_REPORTED
    if cap_usd is not None:
        return round(max(cap_usd, reading.priced_usd), 9), CAP
    return None, UNKNOWN
