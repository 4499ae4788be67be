"""A model the price list does not know (issue 61): the warning a run with a budget starts with,
and one meter for calls priced by the CLI's own figure, at their cap, or not at all — the fold of
``engine status`` and the report, and the handlers' budget view, count them alike.

The real CLI's default model through the whole engine is ``test_cli_default_model_cost.py``."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.agents.claude.price_check import price_warning, unpriced_models
from engine.agents.claude.prices import ANTHROPIC_LIST_PRICES, PRICE_FILE, load_list_prices, price_of
from engine.agents.ledger import BudgetLedger, OutOfBudget
from engine.audit.report_sections import cost_caption
from events.base import Envelope
from events.core import AgentCallCompleted, AgentCallFailed, AgentCallRequested
from events.domain import ModelPrice
from handlers.money_watch import MoneyWatch
from replay.meter import SpendMeter
from replay.state import PipelineState

UNLISTED = "claude-unlisted-9-9"  # a name no list will carry: the tests of a known model take it from the CLI


def test_the_price_list_is_the_data_file_and_prices_by_the_longest_prefix():
    assert load_list_prices(PRICE_FILE) == ANTHROPIC_LIST_PRICES and ANTHROPIC_LIST_PRICES
    assert price_of("claude-opus-4-5-20251101", {}) == ANTHROPIC_LIST_PRICES["claude-opus-4-5"]
    assert price_of("claude-opus-4-1-20250805", {}) == ANTHROPIC_LIST_PRICES["claude-opus-4"]
    assert price_of(UNLISTED, {}) is None
    own = ModelPrice(input_per_mtok=2.0, output_per_mtok=10.0)
    assert price_of(UNLISTED, {UNLISTED: own}) == own


def test_a_budget_whose_model_has_no_price_is_warned_about_by_name_with_how_to_price_it():
    warning = price_warning(models=[UNLISTED], configured="sonnet", prices={}, budget_usd=0.05)
    assert warning is not None
    assert UNLISTED in warning and "'sonnet'" in warning and "--max-budget 0.05" in warning
    assert f"model_prices={{\"{UNLISTED}\": {{\"input_per_mtok\": IN, \"output_per_mtok\": OUT}}}}" in warning
    # Nothing to say without a budget, for a listed model, or once the run prices it.
    assert price_warning(models=[UNLISTED], configured="sonnet", prices={}, budget_usd=None) is None
    assert price_warning(models=["claude-sonnet-4-5"], configured="sonnet", prices={}, budget_usd=0.05) is None
    priced = {UNLISTED: ModelPrice(input_per_mtok=1.0, output_per_mtok=5.0)}
    assert price_warning(models=[UNLISTED], configured="sonnet", prices=priced, budget_usd=0.05) is None
    # The start-up check saw no request (it failed transiently): the configured name is judged.
    assert price_warning(models=[], configured=UNLISTED, prices={}, budget_usd=1.0) is not None
    assert unpriced_models([UNLISTED, "claude-haiku-4-5", UNLISTED], {}) == [UNLISTED]


SOURCES = st.sampled_from([None, "price_table", "relay", "cli_reported", "cap", "unknown"])


@st.composite
def results(draw: Any) -> list[AgentCallCompleted | AgentCallFailed]:
    out: list[AgentCallCompleted | AgentCallFailed] = []
    for i in range(draw(st.integers(0, 12))):
        source = draw(SOURCES)
        cost = None if source == "unknown" else draw(st.one_of(st.none(), st.floats(0, 2, allow_nan=False)))
        usage = {} if source is None else {"cost_source": source}
        if draw(st.booleans()):
            out.append(AgentCallCompleted(effect_id=f"e{i}", text="x", cost_usd=cost, usage=usage))
        else:
            out.append(AgentCallFailed(effect_id=f"e{i}", error="x", cost_usd=cost, usage=usage))
    return out


def _envelope(seq: int, event: Any, scope: str) -> Envelope:
    return Envelope(run_id="r", seq=seq, type=event.type_name, version=event.version, scope=scope, causation_seq=None,
                    payload=event.model_dump(mode="json"), recorded_at="2026-01-01T00:00:00+00:00",
                    prev_hash="", hash="")


@given(results())
def test_the_fold_and_the_handlers_count_unknown_and_unpriced_calls_alike(calls):
    state, watch = PipelineState(), MoneyWatch(SpendMeter())
    for i, result in enumerate(calls):
        watch.asked(AgentCallRequested(effect_id=result.effect_id, agent_type="init", prompt="p"), "phase1")
        watch.settled(result)
        state.apply(_envelope(i + 1, result, "phase1"))
    assert state.spend == watch.spend
    unknown = sum(r.cost_usd is None for r in calls)
    by_cli = sum(r.usage.get("cost_source") == "cli_reported" for r in calls)
    at_cap = sum(r.usage.get("cost_source") == "cap" for r in calls)
    breakdown = state.cost_breakdown()
    assert (breakdown["calls_with_unknown_cost"], breakdown["calls_priced_by_cli_cost"],
            breakdown["calls_charged_at_cap"]) == (unknown, by_cli, at_cap)
    assert state.agent_call_count == len(calls)
    caption = cost_caption(state)
    assert (f"{unknown} of unknown cost" in caption) == bool(unknown)
    assert (f"{by_cli} priced by the CLI's own figure" in caption) == bool(by_cli)
    assert (caption == "agent calls, as reported") == (not unknown and not by_cli and not at_cap)


def test_a_search_call_whose_cap_cannot_pay_the_cheapest_call_so_far_is_refused_finalization_is_tried():
    """With the CLI's default model unpriced, a call's first request cannot be held to its cap:
    a cap below what the cheapest call cost could only be overspent, so the ledger refuses it."""
    ledger = BudgetLedger(0.05, slots=4)
    first = ledger.reserve("retriever")
    assert first is not None and first > 0.02
    ledger.settle("retriever", 0.0055)
    assert ledger.least_call_usd == 0.0055
    big = ledger.reserve("init-0")          # alone: three quarters of what is free
    assert big is not None and big > 0.0055
    with pytest.raises(OutOfBudget, match=r"less than the cheapest call so far cost \(\$0\.0055\)"):
        ledger.reserve("init-1")           # beside it, what is left is below one call
    final = ledger.reserve("final-1", finalization=True)  # finalization's money is its own: tried
    assert final is not None and final >= 0.0055
    ledger.settle("init-0", 0.0)            # a refused or free call says nothing of a call's least
    assert ledger.least_call_usd == 0.0055
