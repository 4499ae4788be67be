"""The workflow runtime's view of the run's money (``handlers.runtime`` feeds it every input).

* what was spent, and by which scope (``replay.meter``'s count: agent results and spend
  recorded without one, ``AgentSpendRecorded``), so a strategy can report per-path cost
  (REQ-OR-037) from the same figures ``engine status`` shows;
* the watches a strategy awaits: spend reaching an amount, or the money running out;
* budget stops: agent calls the engine's ledger refused or cut at their cap for want of money
  (``AgentCallFailed.stop``). The money *may have run out* (``out``) when there was one and no
  agent call or evaluation is in flight: a call in flight holds money it may still turn into a
  result, and an evaluation costs none. That is judged after each input's decisions, so the gap
  between an effect's result and the request that follows it never counts as "nothing in flight";
  whether what is left can pay another call is the strategy's rule (``handlers.money``).
"""

from __future__ import annotations

from events.base import EffectRequest, EffectResult
from events.core import AgentCallCompleted, AgentCallFailed, AgentCallRequested, EvaluationRequested
from events.spend import AgentSpendRecorded
from handlers.futures import _Future
from replay.meter import SpendMeter


class MoneyWatch:
    def __init__(self, spend: SpendMeter) -> None:
        self.spend = spend
        self.watches: list[tuple[float, bool, _Future]] = []   # (amount, or when the money runs out, watch)
        self.budget_stops = 0
        self.ran_out = False                 # ``out``, as of the end of the latest input's decisions
        self._scopes: dict[str, str] = {}    # every effect asked for -> the scope that asked
        self._working: set[str] = set()      # agent calls and evaluations in flight (membership only)

    def asked(self, request: EffectRequest, scope: str) -> None:
        self._scopes[request.effect_id] = scope
        if isinstance(request, (AgentCallRequested, EvaluationRequested)):
            self._working.add(request.effect_id)

    def cancelled(self, effect_id: str) -> None:
        self._working.discard(effect_id)

    def spent(self, event: AgentSpendRecorded) -> None:
        self.spend.count(event.type_name, event.cost_usd, self._scopes.get(event.effect_id or "", ""),
                         in_budget=event.in_budget)

    def settled(self, event: EffectResult) -> list[_Future]:
        """Count an effect's result; the watches whose amount the spend has now reached."""
        if isinstance(event, (AgentCallCompleted, AgentCallFailed)):
            self.spend.count(event.type_name, event.cost_usd, self._scopes.get(event.effect_id, ""), usage=event.usage)
        self.budget_stops += isinstance(event, AgentCallFailed) and event.stop == "budget"
        self._working.discard(event.effect_id)
        return [watch for amount, _, watch in self.watches if not watch.done and self.spend.budget_usd >= amount]

    @property
    def out(self) -> bool:
        return self.budget_stops > 0 and not self._working

    def running_out(self) -> list[_Future]:
        """After an input's decisions: the watches to wake because the money may have run out."""
        self.ran_out = self.out
        return [watch for _, on_out, watch in self.watches if on_out and not watch.done] if self.ran_out else []

    def cost_in(self, scope: str) -> float:
        """Money spent by the agent calls asked for in ``scope`` and the scopes under it."""
        return sum((usd for s, usd in self.spend.usd_by_scope().items() if s == scope or s.startswith(scope + "/")),
                   0.0)


__all__ = ["MoneyWatch"]
