"""The run's money rules that both strategies and the engine's budget ledger share.

* ``search_budget_usd``: where the search stops spending. Finalization (the calls that turn the
  search's best into a submission) keeps the rest, so a run ends within its budget. MLE-STAR's
  budget watch (``handlers.mlestar.phaserun.Limits``), ``evolve``'s search
  (``handlers.evolution.search``) and the ledger that caps every call
  (``engine.agents.ledger``) all stop the search at this same point.
* ``budget_stopped``: an agent reply that is a budget stop (``AgentCallFailed.stop``), not an
  agent's failure: the ledger refused the call or its cap cut it. The search is over once there
  was one and what is left of its budget cannot pay a usual call (``search_money_short``).
"""

from __future__ import annotations

from typing import Any

from events.core import AgentCallFailed

# Finalization's reserve: 10 % of the budget, or its usual calls (subsampling x2, test script,
# leak check, debug) at the run's mean cost so far if that is more, but never more than half.
FINALIZATION_RESERVE_FRACTION = 0.10
FINALIZATION_RESERVE_CALLS = 6


def search_budget_usd(limit_usd: float, spent_usd: float, agent_calls: int) -> float:
    """What the search phases may spend: the budget less finalization's reserve."""
    mean = spent_usd / agent_calls if agent_calls else 0.0
    reserve = min(0.5 * limit_usd, max(FINALIZATION_RESERVE_FRACTION * limit_usd, FINALIZATION_RESERVE_CALLS * mean))
    return limit_usd - reserve


# The least budget worth starting: one candidate's calls and finalization's, each at the least
# an agent call to a priced model costs. A call carries its role's prompt and the task's
# description, a few thousand tokens at the least: with the real Claude CLI a one-turn call of
# claude-sonnet-4-5 cost $0.005-0.018 (tests/agents/test_budget_ledger.py names the measure), and
# the cheapest models the backends are used with cost about a third of that.
LEAST_CALL_USD = 0.002
CANDIDATE_CALLS = {"mle-star": 2, "evolve": 1}   # MLE-STAR: retriever + A_init; evolve: one draft
FINALIZATION_CALLS = 3                           # subsampling extraction, A_test, the leakage check


def least_budget_usd(strategy: str) -> float:
    """The least ``max_budget_usd`` that pays for one candidate and finalization (a strategy of
    one's own, ``module:function``, is held to MLE-STAR's count)."""
    calls = CANDIDATE_CALLS.get(strategy, CANDIDATE_CALLS["mle-star"]) + FINALIZATION_CALLS
    return round(calls * LEAST_CALL_USD, 6)


def search_money_short(limit_usd: float, spent_usd: float, agent_calls: int) -> bool:
    """What is left of the search's budget cannot pay a usual call: less than 5 % of the budget or
    twice the mean cost of a call so far (the engine's ledger's ``share``). After a budget stop
    this ends the search: a stop alone may only mean that the calls beside it held the money."""
    mean = spent_usd / agent_calls if agent_calls else 0.0
    return search_budget_usd(limit_usd, spent_usd, agent_calls) - spent_usd < max(0.05 * limit_usd, 2 * mean)


def search_share_spent(limit_usd: float, spent_usd: float, agent_calls: int) -> bool:
    """The search has spent its share of the budget (``search_budget_usd``)."""
    return spent_usd >= search_budget_usd(limit_usd, spent_usd, agent_calls)


def stop_ends_search(limit_usd: float, spent_usd: float, agent_calls: int, budget_stops: int) -> bool:
    """The budget-stop check both strategies make: a call was stopped for want of money
    (``budget_stops``) and what is left of the search's share cannot pay a usual call
    (``search_money_short``), so the search starts no new work."""
    return budget_stops > 0 and search_money_short(limit_usd, spent_usd, agent_calls)


def budget_stopped(reply: Any) -> bool:
    """Whether an agent reply is a stop for want of money rather than a failure."""
    return isinstance(reply, AgentCallFailed) and reply.stop == "budget"


__all__ = ["FINALIZATION_RESERVE_CALLS", "FINALIZATION_RESERVE_FRACTION", "LEAST_CALL_USD", "budget_stopped",
           "least_budget_usd", "search_budget_usd", "search_money_short", "search_share_spent", "stop_ends_search"]
