"""What a run has spent on agents, counted one way for every view of the run.

The handlers' budget decisions (``handlers.runtime``), ``engine status`` and the audit
(``replay.state.PipelineState``) and the totals a run ends with all read this meter, so the money
the handlers decide on is the money the run shows. Two kinds of event spend:

* an agent call's result (``AgentCallCompleted``/``AgentCallFailed``): one call, its ``cost_usd``
  (None: a result with no price, counted apart as a call of unknown cost); a call whose model had
  no price says how it was priced instead (its usage's ``cost_source``: the CLI's own figure, or
  its cap), and those are counted apart too, so a run shows how much of its money is estimated;
* ``AgentSpendRecorded`` (``events/spend.py``): money spent outside a result (the start-up check,
  a cancelled call, a call cut by a crash); an unknown amount is counted apart.

``usd`` is all of it. ``budget_usd``, what the handlers decide on, leaves out only spend that an
old log (``AgentSpendRecorded`` v1) recorded beside handlers that did not count it, so that log
replays to the decisions it holds; for every run recorded since, the two are equal.

Amounts are summed in whole nano-dollars: float addition depends on the order of the terms, and
the views fold the same events in different groupings (per scope, in total), so a float sum could
differ between them in its last bits.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

AGENT_RESULTS = frozenset({"AgentCallCompleted", "AgentCallFailed"})
SPEND_RECORDED = "AgentSpendRecorded"
NANOS_PER_USD = 1_000_000_000
# A call's ``usage["cost_source"]`` when its model had no price (``engine.agents.claude.reading``).
CLI_REPORTED = "cli_reported"
CAP = "cap"
PRICED_APART = (CLI_REPORTED, CAP)


def nanos(cost_usd: float) -> int:
    return round(cost_usd * NANOS_PER_USD)


@dataclass
class SpendMeter:
    total_nanos: int = 0
    calls: int = 0              # agent calls with a recorded result
    unknown: int = 0            # spend without an amount: a result or AgentSpendRecorded, cost None
    priced_apart: dict[str, int] = field(default_factory=dict)  # calls of an unpriced model, by cost_source
    nanos_by_scope: dict[str, int] = field(default_factory=dict)   # scopes that spent something
    outside_budget_nanos: int = 0   # AgentSpendRecorded v1: shown, never decided on

    def count(self, type_name: str, cost_usd: float | None, scope: str = "", *, in_budget: bool = True,
              usage: object = None) -> None:
        """Fold one event's spend (events of other types spend nothing); ``usage``: an agent
        result's, which says how a call of a model without a price was priced."""
        if type_name in AGENT_RESULTS:
            self.calls += 1
            source = usage.get("cost_source") if isinstance(usage, Mapping) else None
            if isinstance(source, str) and source in PRICED_APART:
                self.priced_apart[source] = self.priced_apart.get(source, 0) + 1
        elif type_name != SPEND_RECORDED:
            return
        if cost_usd is None:
            self.unknown += 1
            return
        amount = nanos(cost_usd)
        if amount:
            self.total_nanos += amount
            if not in_budget:
                self.outside_budget_nanos += amount
            self.nanos_by_scope[scope] = self.nanos_by_scope.get(scope, 0) + amount

    @property
    def usd(self) -> float:
        return self.total_nanos / NANOS_PER_USD

    @property
    def budget_usd(self) -> float:
        """The spend the handlers' budget decisions count."""
        return (self.total_nanos - self.outside_budget_nanos) / NANOS_PER_USD

    @property
    def priced_by_cli(self) -> int:
        """Calls whose model had no price, priced by the CLI's own figure."""
        return self.priced_apart.get(CLI_REPORTED, 0)

    @property
    def charged_at_cap(self) -> int:
        """Calls whose model had no price and no figure from the CLI: charged their cap."""
        return self.priced_apart.get(CAP, 0)

    def usd_by_scope(self) -> dict[str, float]:
        return {scope: n / NANOS_PER_USD for scope, n in self.nanos_by_scope.items()}


__all__ = ["AGENT_RESULTS", "CAP", "CLI_REPORTED", "SPEND_RECORDED", "SpendMeter", "nanos"]
