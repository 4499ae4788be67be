"""The run's money, shared among the agent calls in flight (REQ-OR-028, issue "budget that holds").

A backend cannot enforce a run budget on its own: with four calls in flight, each capped at the
whole budget, a run could spend four budgets before the engine reacts. The ledger gives every
call a *cap* carved out of what is left and reserves it until the call settles:

    free = limit − spent − Σ reservations of the calls in flight
    cap  = free / (slots − calls in flight)

``slots`` is the run's ``max_concurrent_agent_calls``, so the last free slot may take all that
is free and the caps of the calls in flight never add up to more than what is left. A call
stops itself at its cap (the CLI checks after each turn), so the run overshoots its budget by
at most the last turn of the calls in flight. A settled call releases its reservation and adds
what it really cost; a call whose cost is unknown keeps its whole reservation as spent (the
safe side). The same ledger serves every backend.
"""

from __future__ import annotations

from dataclasses import dataclass, field

# Below this a call cannot do one useful turn: it is refused without reaching the model.
MIN_CALL_USD = 0.0001


class BudgetExhausted(Exception):
    """No money left for another call; the message says how much was spent of what."""


@dataclass
class BudgetLedger:
    limit_usd: float | None
    slots: int = 4
    spent_usd: float = 0.0
    reserved: dict[str, float] = field(default_factory=dict)

    def reserve(self, effect_id: str) -> float | None:
        """The cap for the call ``effect_id`` (None: no budget set). Raises BudgetExhausted."""
        if self.limit_usd is None:
            return None
        self.reserved.pop(effect_id, None)  # a retried call replaces its own reservation
        free = self.limit_usd - self.spent_usd - sum(self.reserved.values())
        others = len(self.reserved)
        cap = free / max(1, self.slots - others)
        if cap < MIN_CALL_USD:
            raise BudgetExhausted(
                f"run budget exhausted: ${self.spent_usd:.4f} spent and ${sum(self.reserved.values()):.4f} held by "
                f"{others} call(s) in flight, of max_budget_usd ${self.limit_usd:g}")
        self.reserved[effect_id] = cap
        return cap

    def settle(self, effect_id: str, cost_usd: float | None) -> None:
        """The call ended (completed, failed or cancelled) having cost ``cost_usd`` (None: unknown)."""
        held = self.reserved.pop(effect_id, 0.0)
        self.spent_usd += held if cost_usd is None else max(0.0, cost_usd)

    @property
    def left_usd(self) -> float | None:
        return None if self.limit_usd is None else self.limit_usd - self.spent_usd
