"""The run's money, shared among the agent calls in flight (REQ-OR-028, issue "budget that holds").

A backend cannot enforce a run budget on its own: with four calls in flight, each capped at the
whole budget, a run could spend four budgets before the engine reacts. The ledger gives every
call a *cap* carved out of what is left and reserves it until the call settles:

    free = ceiling − spent − Σ reservations of the calls in flight
    cap  = max(free / (slots − calls in flight), min(free, floor))

``slots`` is the run's ``max_concurrent_agent_calls``, so the caps of the calls in flight never
add up to more than what is free; ``floor`` (5 % of the budget, or twice the mean cost of the
calls so far if that is more) keeps the caps from shrinking below what one call needs: a call
stopped at its cap loses its answer. The search phases'
ceiling is their share of the budget (the handlers' ``search_budget_usd``, the point where they
stop the search); finalization's ceiling is the whole budget. A call stops itself at its
cap (the CLI checks after each turn), so the run overshoots by at most the last turn of the
calls in flight. A settled call releases its reservation and adds what it really cost; a call
whose cost is unknown keeps its whole reservation as spent (the safe side). Every backend uses
the same ledger.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from handlers.mlestar.phaserun import search_budget_usd

# Below this a call cannot do one useful turn: it is refused without reaching the model.
MIN_CALL_USD = 0.0001
FLOOR_FRACTION = 0.05


class BudgetExhausted(Exception):
    """No money left for another call; the message says how much was spent of what."""


@dataclass
class BudgetLedger:
    limit_usd: float | None
    slots: int = 4
    spent_usd: float = 0.0
    reserved: dict[str, float] = field(default_factory=dict)
    known_calls: int = 0      # settled calls whose cost is known (for the mean)
    known_cost_usd: float = 0.0

    def reserve(self, effect_id: str, *, finalization: bool = False) -> float | None:
        """The cap for the call ``effect_id`` (None: no budget set). Raises BudgetExhausted."""
        if self.limit_usd is None:
            return None
        self.reserved.pop(effect_id, None)  # a retried call replaces its own reservation
        ceiling = self.limit_usd if finalization else search_budget_usd(self.limit_usd, self.known_cost_usd,
                                                                         self.known_calls)
        free = ceiling - self.spent_usd - sum(self.reserved.values())
        others = len(self.reserved)
        mean = self.known_cost_usd / self.known_calls if self.known_calls else 0.0
        floor = max(self.limit_usd * FLOOR_FRACTION, 2 * mean)
        cap = max(free / max(1, self.slots - others), min(free, floor))
        if cap < MIN_CALL_USD:
            raise BudgetExhausted(
                f"run budget exhausted: ${self.spent_usd:.4f} spent and ${sum(self.reserved.values()):.4f} held by "
                f"{others} call(s) in flight, of max_budget_usd ${self.limit_usd:g}"
                + ("" if finalization else f" (the search may spend ${ceiling:.4f} of it; the rest is finalization's)"))
        self.reserved[effect_id] = cap
        return cap

    def settle(self, effect_id: str, cost_usd: float | None) -> None:
        """The call ended (completed, failed or cancelled) having cost ``cost_usd`` (None: unknown)."""
        held = self.reserved.pop(effect_id, 0.0)
        self.spent_usd += held if cost_usd is None else max(0.0, cost_usd)
        if cost_usd is not None:  # counted as the handlers count results, for the same mean
            self.known_calls += 1
            self.known_cost_usd += cost_usd
