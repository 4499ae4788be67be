"""The run's money, shared among the agent calls in flight (REQ-OR-028, issue "budget that holds").

A backend cannot enforce a run budget on its own: with four calls in flight, each capped at the
whole budget, a run could spend four budgets before the engine reacts. The ledger gives every
call a *cap* carved out of what is left and reserves it until the call settles:

    free  = ceiling − spent − Σ reservations of the calls in flight
    share = max(5 % of the budget, twice the mean cost of a call so far)
    room  = (slots − 1 − calls in flight) · share, at most free / 4 when no call is in flight
    cap   = max(free − room, min(free, share))

A call is capped at what is free less room for the calls that may still start beside it
(``slots`` is the run's ``max_concurrent_agent_calls``), each of a usual call's size (``share``),
and never below one share while that much is free. A call that starts alone may use at least
three quarters of what is free — real models take many tool turns in one call, and a call
stopped at its cap loses its answer (with a small budget, a fifth of it cut every code-writing
call) — while a call that starts beside others still gets a usual call's share; and as each cap
is at most what is free when it is given, the caps of the calls in flight never add up to more
than what was free. The
search phases' ceiling is their share of the budget (``handlers.money.search_budget_usd``, the
point where the handlers stop the search); finalization's ceiling is the whole budget.

A call stops itself at its cap (the CLI checks after each turn), so the run overshoots by at
most the last turn of the calls in flight. A search call whose cap is less than the cheapest call
so far cost is refused: its first request alone would cost more than its cap (the relay cannot
hold a request to a cap when its model has no price, nor a request's input in any case), so it
could only overspend its cap or be cut without an answer, and the search's money is better kept
for the calls that can finish. Finalization's calls are always tried.

A settled call releases its reservation and adds what it really cost; a call whose cost is
unknown keeps its whole reservation as spent (the safe side).
A call refused for want of money, or cut at its cap, is a *budget stop* (``budget_stop``): its
result says so (``AgentCallFailed.stop``), so the workflow never blames the agent or the scripts
for it, and ends the search once what is left cannot pay a usual call
(``handlers.money.search_money_short``). Every backend uses the same ledger.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from events.core import AgentCallCompleted, AgentCallFailed
from handlers.money import search_budget_usd

# Below this a call cannot do one useful turn: it is refused without reaching the model.
MIN_CALL_USD = 0.0001
FLOOR_FRACTION = 0.05


class OutOfBudget(Exception):
    """No money left for another call; the message says how much was spent of what."""


@dataclass
class BudgetLedger:
    limit_usd: float | None
    slots: int = 4
    spent_usd: float = 0.0
    reserved: dict[str, float] = field(default_factory=dict)
    known_calls: int = 0      # settled calls whose cost is known (for the mean)
    known_cost_usd: float = 0.0
    least_call_usd: float = 0.0  # the cheapest settled call that cost anything (0: none yet)

    def reserve(self, effect_id: str, *, finalization: bool = False) -> float | None:
        """The cap for the call ``effect_id`` (None: no budget set). Raises OutOfBudget."""
        if self.limit_usd is None:
            return None
        self.reserved.pop(effect_id, None)  # a retried call replaces its own reservation
        ceiling = self.limit_usd if finalization else search_budget_usd(self.limit_usd, self.known_cost_usd,
                                                                         self.known_calls)
        free = ceiling - self.spent_usd - sum(self.reserved.values())
        others = len(self.reserved)
        share = self.share_usd()
        room = max(0, self.slots - 1 - others) * share
        if not others:
            room = min(room, free / 4)
        cap = max(free - room, min(free, share))
        least = MIN_CALL_USD if finalization else max(MIN_CALL_USD, self.least_call_usd)
        if cap < least:
            short = "" if least == MIN_CALL_USD else f"; the ${cap:.4f} left for it is less than the cheapest call so " \
                                                    f"far cost (${least:.4f})"
            raise OutOfBudget(
                f"run budget exhausted: ${self.spent_usd:.4f} spent and ${sum(self.reserved.values()):.4f} held by "
                f"{others} call(s) in flight, of max_budget_usd ${self.limit_usd:g}"
                + ("" if finalization else f" (the search may spend ${ceiling:.4f} of it; the rest is finalization's)")
                + short)
        self.reserved[effect_id] = cap
        return cap

    def share_usd(self) -> float:
        """What a usual call needs: 5 % of the budget, or twice the mean cost so far if more."""
        assert self.limit_usd is not None
        mean = self.known_cost_usd / self.known_calls if self.known_calls else 0.0
        return max(self.limit_usd * FLOOR_FRACTION, 2 * mean)

    def settle(self, effect_id: str, cost_usd: float | None) -> None:
        """The call ended (completed, failed or cancelled) having cost ``cost_usd`` (None: unknown)."""
        held = self.reserved.pop(effect_id, 0.0)
        self.spent_usd += held if cost_usd is None else max(0.0, cost_usd)
        if cost_usd is not None:  # counted as the handlers count results, for the same mean
            self.known_calls += 1
            self.known_cost_usd += cost_usd
        if cost_usd is not None and cost_usd >= MIN_CALL_USD:
            self.least_call_usd = min(self.least_call_usd or cost_usd, cost_usd)


# The backends' words for a call their cap stopped (the CLI's ``error_max_budget_usd``, the
# OpenAI-compatible loop's ``BudgetStop``): both start so (``engine.agents.retry``, ``openai.chat``).
CUT_MESSAGE_START = "budget exhausted"


def budget_stop(result: AgentCallCompleted | AgentCallFailed, cap_usd: float | None) -> AgentCallCompleted | AgentCallFailed:
    """``result`` marked as a budget stop when its cap cut it: it failed saying its budget was
    exhausted, or having spent its whole cap. Anything else is returned as it is."""
    if not isinstance(result, AgentCallFailed) or cap_usd is None or result.stop:
        return result
    cut = result.error.startswith(CUT_MESSAGE_START) or (result.cost_usd is not None and result.cost_usd >= cap_usd)
    if not cut:
        return result
    return result.model_copy(update={"stop": "budget", "error": (
        f"budget stop: this call was cut at its cap of ${cap_usd:.4f} (its share of the run's budget): {result.error}")})
