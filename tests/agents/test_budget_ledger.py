"""The run's budget ledger (engine/agents/ledger.py): one call may use most of the free money,
calls in flight together never hold more than what is free, and a call refused or cut for want
of money is a budget stop, not a failure. REQ-OR-028/029."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.agents.ledger import MIN_CALL_USD, BudgetLedger, OutOfBudget, budget_stop
from events.core import AgentCallCompleted, AgentCallFailed
from handlers.money import search_budget_usd


def test_a_lone_call_may_use_most_of_the_free_search_budget():
    """The issue's case: $0.05, four slots. The old rule (free / slots) capped the first A_init at
    $0.0109 of $0.045; now it may use all but room for three usual calls beside it."""
    ledger = BudgetLedger(0.05, slots=4)
    search = search_budget_usd(0.05, 0.0, 0)
    cap = ledger.reserve("phase1/candidate-0/init")
    assert cap == pytest.approx(search - 3 * 0.05 * 0.05)
    assert cap > 0.8 * search


def test_calls_beside_a_large_one_still_get_a_usual_call_s_share():
    ledger = BudgetLedger(2.0, slots=4)
    caps = [ledger.reserve(name) for name in "abcd"]
    assert caps[0] == pytest.approx(1.8 - 3 * 0.1)          # room for three calls of 5 % beside it
    assert caps[1:] == [pytest.approx(0.1)] * 3
    assert sum(c or 0.0 for c in caps) == pytest.approx(search_budget_usd(2.0, 0.0, 0))


def test_a_lone_call_gets_three_quarters_of_what_is_free_even_when_calls_cost_a_lot():
    """Finalization after a search of costly calls ($0.09 a call on a $0.5 budget): the lone test
    script call is not held to one share while two thirds of the budget is free."""
    ledger = BudgetLedger(0.5, slots=4, spent_usd=0.16, known_calls=4, known_cost_usd=0.18)
    cap = ledger.reserve("final/test", finalization=True)
    assert cap == pytest.approx(0.75 * (0.5 - 0.16))


def test_finalization_may_use_the_reserve_the_search_may_not():
    ledger = BudgetLedger(1.0, slots=1, spent_usd=0.9)
    with pytest.raises(OutOfBudget, match=r"max_budget_usd \$1 .*finalization's"):
        ledger.reserve("phase2/path-0/t0/coder")
    assert ledger.reserve("final/test", finalization=True) == pytest.approx(0.1)


@settings(max_examples=200, deadline=None)
@given(limit=st.floats(0.001, 50.0), slots=st.integers(1, 8),
       steps=st.lists(st.tuples(st.booleans(), st.floats(0.0, 1.5), st.booleans()), max_size=40))
def test_calls_in_flight_never_hold_more_than_is_free(limit, slots, steps):
    """Whatever order calls start and settle in (a settled call spending up to 1.5 × its cap, or an
    unknown amount), every cap is at most what was free when it was given, so what the calls in
    flight hold never passes the ceiling less what was spent."""
    ledger = BudgetLedger(limit, slots=slots)
    n = 0
    for start, spend_share, known in steps:
        if start or not ledger.reserved:
            free_before = (search_budget_usd(limit, ledger.known_cost_usd, ledger.known_calls)
                           - ledger.spent_usd - sum(ledger.reserved.values()))
            try:
                cap = ledger.reserve(f"call-{n}")
            except OutOfBudget:
                # refused only when nothing fits, or less than the cheapest call so far cost
                assert min(free_before, ledger.share_usd()) < max(MIN_CALL_USD, ledger.least_call_usd)
                continue
            n += 1
            assert cap is not None and MIN_CALL_USD <= cap <= free_before + 1e-12
        else:
            effect = sorted(ledger.reserved)[0]
            held = ledger.reserved[effect]
            ledger.settle(effect, held * spend_share if known else None)


def test_a_call_cut_at_its_cap_is_a_budget_stop_and_others_are_left_alone():
    cut = AgentCallFailed(effect_id="e", error="budget exhausted (max_budget_usd reached): stopped", cost_usd=0.0112)
    marked = budget_stop(cut, 0.0109)
    assert isinstance(marked, AgentCallFailed) and marked.stop == "budget"
    assert marked.error.startswith("budget stop: this call was cut at its cap of $0.0109")
    spent_all = AgentCallFailed(effect_id="e", error="the CLI exited", cost_usd=0.02)
    assert budget_stop(spent_all, 0.02).stop == "budget"  # failed having spent its whole cap
    other = AgentCallFailed(effect_id="e", error="API error (HTTP 400): bad request", cost_usd=0.001)
    assert budget_stop(other, 0.02) is other
    done = AgentCallCompleted(effect_id="e", text="ok", cost_usd=0.5)
    assert budget_stop(done, 0.02) is done  # an answer is an answer, whatever it cost
    assert budget_stop(cut, None) is cut    # no budget, no cap: nothing cut it


def test_an_old_log_s_budget_cut_stays_a_failure_on_replay():
    """AgentCallFailed v2 had no ``stop``: a call its cap cut was a failure, and the log's decisions
    were made so; upcast, it is still one (the handlers count no budget stop for it)."""
    from events.base import load_event
    from handlers.money import budget_stopped

    old = load_event("AgentCallFailed", 2, {"effect_id": "phase1/candidate-1/init", "attempts": 1,
                                            "error": "budget exhausted (max_budget_usd reached): stopped",
                                            "cost_usd": 0.0112, "sandbox": None})
    assert isinstance(old, AgentCallFailed) and old.stop == "" and not budget_stopped(old)
    new = AgentCallFailed(effect_id="e", error="budget stop: refused", stop="budget")
    assert new.version == 4 and budget_stopped(new)
