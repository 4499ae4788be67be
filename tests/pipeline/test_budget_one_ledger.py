"""One ledger (issue 26): the money the engine's ledger charges, the money the handlers decide on
and the money the run shows are one figure, unknown cost included. A run through the real driver
and agent executor with a backend whose one call ends without a cost. REQ-OR-028/029/037."""

from __future__ import annotations

from events.core import AgentCallFailed
from replay.state import fold
from store.sqlite import SQLiteEventStore
from tests.pipeline.scripted_agent import answer

UNPRICED_CALL = "phase1/candidate-0/init"


class OneCallWithoutACost:
    """The scripted answers at $0.001 a call, except that one call fails without a cost."""

    name = "scripted-unpriced"

    async def call(self, request, ctx):
        if request.effect_id == UNPRICED_CALL:
            return AgentCallFailed(effect_id=request.effect_id, error="the model's answer was lost", cost_usd=None)
        return answer(request, cost_usd=0.001)


def test_a_call_without_a_cost_is_charged_its_cap_in_every_view(task_dir, tmp_path):
    from engine import api
    from tests.pipeline.test_api import tiny

    db = tmp_path / "e.db"
    config = tiny(num_retrieved_models=2, max_budget_usd=5.0)
    try:
        api.run_pipeline_sync(str(task_dir), config, agent="tests.pipeline.test_budget_one_ledger:OneCallWithoutACost",
                              db=db)
    except Exception:   # the run's outcome is not the point; its money is
        pass
    store = SQLiteEventStore(db, create=False)
    (run,) = list(store.list_runs())
    envelopes = list(store.read(run.run_id))
    charged = [e for e in envelopes if e.type == "AgentSpendRecorded" and e.payload["reason"] == "unpriced"]
    assert [e.payload["effect_id"] for e in charged] == [UNPRICED_CALL]
    cap = charged[0].payload["cost_usd"]
    assert cap and cap >= 0.05 * 5.0   # at least a usual call's share of the $5 (engine.agents.ledger)
    state = fold(envelopes)
    results = sum(e.payload["cost_usd"] or 0.0 for e in envelopes if e.type in ("AgentCallCompleted", "AgentCallFailed"))
    assert state.accumulated_cost_usd == state.budget_cost_usd
    assert round(state.accumulated_cost_usd, 9) == round(results + cap, 9)
    completed = [e for e in envelopes if e.type == "RunCompleted"]
    if completed:   # what the run reports is what the ledger charged
        assert completed[0].payload["result"]["cost_summary"]["total_cost_usd"] == state.budget_cost_usd
