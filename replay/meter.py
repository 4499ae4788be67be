"""What a run has spent on agents, counted one way for every view of the run.

The handlers' budget decisions (``handlers.runtime``), ``engine status`` and the audit
(``replay.state.PipelineState``) and the totals a run ends with all read this meter, so the money
the handlers decide on is the money the run shows. Two kinds of event spend:

* an agent call's result (``AgentCallCompleted``/``AgentCallFailed``): one call, its ``cost_usd``
  (None counts as nothing: a result with no price);
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

from dataclasses import dataclass, field

AGENT_RESULTS = frozenset({"AgentCallCompleted", "AgentCallFailed"})
SPEND_RECORDED = "AgentSpendRecorded"
NANOS_PER_USD = 1_000_000_000


def nanos(cost_usd: float) -> int:
    return round(cost_usd * NANOS_PER_USD)


@dataclass
class SpendMeter:
    total_nanos: int = 0
    calls: int = 0              # agent calls with a recorded result
    unknown: int = 0            # spend recorded without an amount (AgentSpendRecorded, cost None)
    nanos_by_scope: dict[str, int] = field(default_factory=dict)   # scopes that spent something
    outside_budget_nanos: int = 0   # AgentSpendRecorded v1: shown, never decided on

    def count(self, type_name: str, cost_usd: float | None, scope: str = "", *, in_budget: bool = True) -> None:
        """Fold one event's spend (events of other types spend nothing)."""
        if type_name in AGENT_RESULTS:
            self.calls += 1
        elif type_name != SPEND_RECORDED:
            return
        elif cost_usd is None:
            self.unknown += 1
            return
        amount = nanos(cost_usd or 0.0)
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

    def usd_by_scope(self) -> dict[str, float]:
        return {scope: n / NANOS_PER_USD for scope, n in self.nanos_by_scope.items()}


__all__ = ["AGENT_RESULTS", "SPEND_RECORDED", "SpendMeter", "nanos"]
