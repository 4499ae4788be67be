"""When the agent fails the same way several times in a row, the run stops with that error
(issue 27): a configuration or protocol error must not turn every remaining step into a dead
node. One rule for both strategies (``handlers.agent_failures``, applied by the runtime).
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from engine.api import run_strategy
from engine.run.lifecycle import open_store
from events.core import AgentCallCompleted, AgentCallFailed, AgentCallRequested
from events.domain import PipelineConfig, PipelineError
from handlers.agent_failures import REPEATS_TO_STOP, STOP_REASON, FailureStreak

# --- the rule ---------------------------------------------------------------------------------


def _asked(streak: FailureStreak, effect_id: str, role: str) -> str:
    streak.asked(AgentCallRequested(effect_id=effect_id, agent_type=role, prompt="p"))
    return effect_id


def _fail(effect_id: str, error: str, **kw: object) -> AgentCallFailed:
    return AgentCallFailed(effect_id=effect_id, error=error, **kw)  # type: ignore[arg-type]


def test_the_same_error_of_one_role_repeated_stops_and_names_the_error():
    streak = FailureStreak()
    stops = []
    for i in range(REPEATS_TO_STOP):
        stops.append(streak.observe(_fail(_asked(streak, f"e{i}", "draft"),
                                          f"gave up after {i + 2} attempts in {i}.5 s: 'draft' is not a valid AgentType")))
        # another role answering in between does not hide the streak
        streak.observe(AgentCallCompleted(effect_id=_asked(streak, f"ok{i}", "review"), text="fine"))
    assert stops[:-1] == [None] * (REPEATS_TO_STOP - 1) and stops[-1] is not None
    assert "'draft' is not a valid AgentType" in stops[-1].message
    assert stops[-1].diagnostics()["stop_reason"] == STOP_REASON
    assert stops[-1].effect_ids == tuple(f"e{i}" for i in range(REPEATS_TO_STOP))


@pytest.mark.parametrize("error, fields", [
    ("malformed output: no JSON object in the reply", {}),
    ("the agent call reached its deadline (30 s) and was cut: 2 turns done", {}),
    ("builtin planner: every setting of this block near the best plan was tried", {}),
    ("cannot fix", {}),
    ("gave up after 4 attempts in 12.5 s: API error (HTTP 529): overloaded", {}),
    ("run budget exhausted: $1.0 spent", {"stop": "budget"}),
])
def test_bad_answers_and_limits_never_stop_the_run(error, fields):
    streak = FailureStreak()
    assert all(streak.observe(_fail(_asked(streak, f"e{i}", "coder"), error, **fields)) is None for i in range(10))


def test_a_completed_call_of_the_role_or_another_error_ends_the_streak():
    streak = FailureStreak()
    boom, bang = "invalid request: the role is unknown", "authentication failed: bad key"
    sequence = [boom, boom, boom, None, boom, boom, boom, bang, boom, boom, boom]
    for i, error in enumerate(sequence):
        effect_id = _asked(streak, f"e{i}", "coder")
        result = AgentCallCompleted(effect_id=effect_id, text="ok") if error is None else _fail(effect_id, error)
        assert streak.observe(result) is None


# --- both strategies, through the engine --------------------------------------------------------


def _calls(db: Path, run_id: str) -> list[str]:
    store = open_store(db)
    try:
        return [env.payload["agent_type"] for env in store.read(run_id) if env.type == "AgentCallRequested"]
    finally:
        store.close()


@pytest.mark.slow
@pytest.mark.parametrize("strategy, agent, role, error, config", [
    ("evolve", "tests.e2e.role_rejecting:KnowsOnlyMleStarRoles", "draft", "'draft' is not a valid AgentType",
     {"max_steps": 40, "phase1_target_nodes": 4, "steps_per_epoch": 8}),
    ("mle-star", "tests.e2e.role_rejecting:RejectsTheCoder", "coder", "(HTTP 400): tools.0.input_schema",
     {"num_retrieved_models": 2, "outer_loop_steps": 2, "inner_loop_steps": 4, "num_parallel_solutions": 2,
      "ensemble_rounds": 1}),
])
def test_a_backend_that_rejects_a_role_stops_the_run_within_a_few_calls_with_that_error(
        tmp_path, strategy, agent, role, error, config):
    db = tmp_path / "engine.db"
    with pytest.raises(PipelineError) as failed:
        anyio.run(lambda: run_strategy(strategy, "iris", PipelineConfig(**config), agent=agent, db=db))
    assert error in str(failed.value) and "times in a row" in str(failed.value)
    assert failed.value.diagnostics["stop_reason"] == STOP_REASON
    run_id = failed.value.diagnostics["run_id"]
    asked = _calls(db, run_id)
    # It stopped at the streak: the rejected role was asked a few times (those in flight at the
    # stop included), not once per remaining step.
    assert REPEATS_TO_STOP <= asked.count(role) <= REPEATS_TO_STOP + PipelineConfig().max_concurrent_agent_calls
