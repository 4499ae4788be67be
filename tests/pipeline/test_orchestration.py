"""The orchestrator against scripted phases on a simulated clock (spec 09, REQ-OR-*)."""

from __future__ import annotations

import pytest

from events.core import EffectCancelled, Note, PhaseCompleted, PhaseStarted, TimerRequested
from events.domain import FinalResult, PipelineConfig, SolutionPhase
from events.pipeline import (
    BudgetExhausted,
    BudgetWarning,
    DeadlineHit,
    FallbackUsed,
    FinalizeNow,
    PhaseBudgetAllocated,
    PhaseSkipped,
)
from handlers.timebudget import EXIT_ALLOWANCE_S, TimePlan
from tests.pipeline.support import Script


def cfg(**kw) -> PipelineConfig:
    base = dict(time_limit_seconds=3600, num_parallel_solutions=2)
    base.update(kw)
    return PipelineConfig(**base)


def final_result(run) -> FinalResult:
    assert run.failed is None, run.failed
    assert run.completed is not None
    return FinalResult.model_validate(run.completed.result)


def allocations(run) -> dict[str, PhaseBudgetAllocated]:
    return {e.phase: e for e in run.of(PhaseBudgetAllocated)}


# --- phase order and dispatch ------------------------------------------------------------------


def test_REQ_OR_017_012_013_014_016_phases_run_strictly_in_order():
    script = Script()
    run = script.run(cfg())
    result = final_result(run)
    started = [e.phase for e in run.of(PhaseStarted)]
    assert started == ["phase1", "phase2", "phase3", "final"]
    completed = [e.phase for e in run.of(PhaseCompleted)]
    assert completed == ["phase1", "phase2", "phase3", "final"]
    phases = run.completed.result["phases"]
    order = ["phase1", "phase2", "phase3", "finalization"]
    for before, after in zip(order, order[1:]):
        assert phases[before]["ended_at_s"] <= phases[after]["started_at_s"]
    # every decision of a phase lies between its PhaseStarted and the next phase's
    scopes = [scope for scope, e in run.events if e.kind == "decision" and scope != "run"]
    first_index = {p: next(i for i, s in enumerate(scopes) if s.startswith(p)) for p in order}
    last_index = {p: max(i for i, s in enumerate(scopes) if s.startswith(p)) for p in order}
    for before, after in zip(order, order[1:]):
        assert last_index[before] < first_index[after]
    # Phase 2 got s_0; Phase 3 got the L path bests; finalization the best ensemble
    assert script.seen["phase2"]["h0"] == 0.5
    assert [s.score for s in script.seen["phase3"]["solutions"]] == [0.6, 0.6]
    assert script.seen["finalization"]["score"] == 0.7
    assert len(result.phase2_results) == 2 and result.phase3 is not None
    assert result.final_solution.phase == SolutionPhase.final
    assert result.submission_path.endswith("submission.csv")
    assert run.completed.best_score == 0.7
    assert run.completed.result["completed_phases"] == order


def test_REQ_OR_015_L1_skips_phase3_and_gives_its_time_to_phase2():
    script = Script()
    run = script.run(cfg(num_parallel_solutions=1))
    result = final_result(run)
    assert "phase3" not in script.seen
    assert result.phase3 is None and len(result.phase2_results) == 1
    assert [e.phase for e in run.of(PhaseSkipped)] == ["phase3"]
    assert script.seen["finalization"]["score"] == 0.6  # the single path's best goes straight on
    plan = TimePlan.from_config(cfg(num_parallel_solutions=1))
    p2 = allocations(run)["phase2"]
    assert p2.remaining_phases == ["phase2"]
    assert p2.budget_s == pytest.approx((plan.end_s - p2.started_at_s) * 65 / 75)


# --- time allocation ---------------------------------------------------------------------------


def test_REQ_OR_025_default_split_is_10_65_15_10_of_the_limit():
    plan = TimePlan.from_config(PipelineConfig())  # 24 h
    w1 = plan.window("phase1", 0.0, ("phase1", "phase2", "phase3"))
    w2 = plan.window("phase2", w1.end_s, ("phase2", "phase3"))
    w3 = plan.window("phase3", w2.end_s, ("phase3",))
    wf = plan.finalization_window(w3.end_s)
    assert [w.budget_s for w in (w1, w2, w3, wf)] == pytest.approx([8640, 56160, 12960, 8640 - EXIT_ALLOWANCE_S])
    assert wf.end_s == 86400 - EXIT_ALLOWANCE_S   # the run's end and exit land before T
    assert plan.reserve_s == pytest.approx(8640)  # REQ-OR-034: max(10 %, 5 min) of 24 h


def test_REQ_OR_026_phase2_budget_is_remaining_times_065_over_090():
    plan = TimePlan.from_config(PipelineConfig())
    now = 3000.0  # Phase 1 finished early
    w2 = plan.window("phase2", now, ("phase2", "phase3"))
    assert w2.budget_s == pytest.approx((86400 - now) * 0.65 / 0.90)


def test_REQ_OR_025_unused_time_is_redistributed_to_later_phases():
    script = Script(seconds={"phase1": 10, "phase2": 10, "phase3": 10, "finalization": 10})
    run = script.run(cfg())
    plan = TimePlan.from_config(cfg())
    alloc = allocations(run)
    assert alloc["phase1"].budget_s == pytest.approx(360)
    # Phase 1 used 10 s of its 360 s: the later phases share the rest 65:15:10
    assert alloc["phase2"].started_at_s == pytest.approx(10)
    assert alloc["phase2"].budget_s == pytest.approx((3600 - 10) * 65 / 90)
    assert alloc["phase3"].budget_s == pytest.approx((3600 - alloc["phase3"].started_at_s) * 15 / 25)
    assert alloc["phase3"].deadline_s <= plan.finalize_at_s
    assert alloc["finalization"].deadline_s == pytest.approx(3600 - EXIT_ALLOWANCE_S)
    # each phase runs under its window's deadline: the soft end a little before the guard
    assert script.seen["phase2"]["deadline"].soft_s == pytest.approx(alloc["phase2"].soft_deadline_s)
    assert script.seen["phase2"]["deadline"].hard_s == pytest.approx(alloc["phase2"].deadline_s)
    assert alloc["phase2"].soft_deadline_s < alloc["phase2"].deadline_s
    # the guard timers are effects: requested and, when the phase ended first, cancelled
    timers = [e.effect_id for e in run.of(TimerRequested)]
    assert timers == ["run/deadline/phase1", "run/deadline/phase2", "run/deadline/phase3",
                      "run/deadline/finalization"]
    assert {e.effect_id for e in run.of(EffectCancelled)} == set(timers)


def test_REQ_OR_023_026_phase2_deadline_cancels_paths_and_keeps_best_intermediate():
    # Each path does 100 calls of 10 s; the Phase 2 window is ~2200 s of a 3600 s run.
    script = Script(steps={"phase1": 1, "phase2": 1000, "phase3": 1, "finalization": 1})
    run = script.run(cfg())
    result = final_result(run)
    hits = run.of(DeadlineHit)
    assert [(h.phase, h.action) for h in hits] == [("phase2", "cancelled")]
    cancelled = [e.effect_id for e in run.of(EffectCancelled)]
    assert any(c.startswith("phase2/path-0/") for c in cancelled)
    assert any(c.startswith("phase2/path-1/") for c in cancelled)
    alloc = allocations(run)
    assert alloc["phase3"].started_at_s == pytest.approx(alloc["phase2"].deadline_s)
    # cancelled paths count as failed (REQ-OR-023) and carry the best intermediate solution
    assert len(result.phase2_results) == 2
    for r in result.phase2_results:
        assert r.step_history[0]["failed"] is True
        assert r.best_score == 0.5  # nothing better than s_0 was evaluated in Phase 2
    assert "phase3" in script.seen  # Phase 3 still runs in its own window
    assert run.completed.result["phases"]["phase2"]["status"] == "timed_out"
    completed = {e.phase: e.result for e in run.of(PhaseCompleted)}
    assert completed["phase2"]["failed"] is True


def test_REQ_OR_030_phase3_cut_by_its_deadline_finalizes_the_best_so_far():
    script = Script(steps={"phase1": 1, "phase2": 1, "phase3": 1000, "finalization": 1})
    run = script.run(cfg())
    result = final_result(run)
    assert [h.phase for h in run.of(DeadlineHit)] == ["phase3"]
    assert result.phase3 is None
    assert script.seen["finalization"]["score"] == 0.6
    plan = TimePlan.from_config(cfg())
    p3 = allocations(run)["phase3"]
    assert p3.deadline_s == pytest.approx(p3.started_at_s + (3600 - p3.started_at_s) * 15 / 25)
    fin = allocations(run)["finalization"]
    assert fin.started_at_s == pytest.approx(p3.deadline_s)
    assert fin.budget_s >= plan.reserve_s


# --- finalize now and short limits -------------------------------------------------------------


def test_REQ_OR_034_finalize_now_skips_the_remaining_search_phases():
    # Phase 1 produces its first solution late (after its window) and then keeps working:
    # it is extended (nothing usable yet), then cut at the finalize-now point.
    script = Script(seconds={"phase1": 50, "phase2": 10, "phase3": 10, "finalization": 10},
                    steps={"phase1": 10, "phase2": 1, "phase3": 1, "finalization": 1})
    original = script._work

    async def slow_then_more(wf, phase, scope, tag):
        out = await original(wf, phase, scope, tag)
        if phase == "phase1":
            for k in range(100):
                await wf.at(scope).agent(__import__("events.core", fromlist=["x"]).AgentCallRequested(
                    effect_id=wf.at(scope).effect_id(f"more-{k}"), agent_type="merger", prompt="m"))
        return out

    script._work = slow_then_more  # type: ignore[method-assign]
    config = cfg(time_limit_seconds=1800)
    run = script.run(config)
    result = final_result(run)
    # Finalization's reserve, taken out of the limit: its share (180 s) or what the run measured
    # it to need, if more: four agent calls as slow as the slowest (50 s) and two evaluations
    # as slow as the slowest scored one (0.1 s) — handlers.timebudget.
    reserve = max(180, 4 * 50 + 2 * 0.1)
    assert [(h.phase, h.action) for h in run.of(DeadlineHit)] == [("phase1", "extended"), ("phase1", "cancelled")]
    (now,) = run.of(FinalizeNow)
    assert now.reason == "time" and now.skipped == ["phase2", "phase3"]
    assert now.threshold_s == pytest.approx(reserve)
    assert [e.phase for e in run.of(PhaseSkipped)] == ["phase2", "phase3"]
    assert "phase2" not in script.seen and result.phase2_results == [] and result.phase3 is None
    assert result.phase1.initial_score == 0.5  # the best evaluated before Phase 1 was cut
    # Phase 1 was extended to the finalize-now point as it stood then (the 50 s calls measured,
    # the evaluation not yet): the reserve grew after, the window given did not shrink.
    assert script.seen["finalization"]["now"] == pytest.approx(1800 - 4 * 50)
    assert allocations(run)["finalization"].deadline_s == 1800 - EXIT_ALLOWANCE_S  # it ends by the limit
    assert run.completed.result["stopped_early"] == "time"


def test_REQ_OR_034_phase1_soft_deadline_cuts_it_when_a_solution_exists():
    script = Script(seconds={"phase1": 10}, steps={"phase1": 1})
    original = script._work

    async def then_merge_forever(wf, phase, scope, tag):
        out = await original(wf, phase, scope, tag)
        if phase == "phase1":
            from events.core import AgentCallRequested
            for k in range(1000):
                await wf.at(scope).agent(AgentCallRequested(effect_id=wf.at(scope).effect_id(f"merge-{k}"),
                                                            agent_type="merger", prompt="m"))
        return out

    script._work = then_merge_forever  # type: ignore[method-assign]
    run = script.run(cfg())
    result = final_result(run)
    assert [(h.phase, h.action) for h in run.of(DeadlineHit)] == [("phase1", "cancelled")]
    assert result.phase1.initial_score == 0.5
    assert "phase2" in script.seen and script.seen["phase2"]["h0"] == 0.5
    assert [f.phase for f in run.of(FallbackUsed)] == ["phase1"]


@pytest.mark.parametrize("limit", [60, 120])
def test_REQ_OR_024_short_limit_still_produces_a_submission(limit):
    """REQ-OR-024 at 60 and 120 s: every window ends by the limit, finalization's included; its
    reserve (the 20 s floor here: the calls measured are 4 s) is taken out of the limit."""
    script = Script(seconds={"phase1": 4, "phase2": 4, "phase3": 4, "finalization": 8},
                    steps={"phase1": 3, "phase2": 100, "phase3": 100, "finalization": 2})
    config = cfg(time_limit_seconds=limit)
    run = script.run(config)
    result = final_result(run)
    assert result.submission_path
    alloc = allocations(run)
    assert all(a.deadline_s <= limit for a in alloc.values())
    assert alloc["finalization"].deadline_s == limit - EXIT_ALLOWANCE_S
    assert alloc["finalization"].budget_s >= 20 - EXIT_ALLOWANCE_S
    assert all(alloc[p].deadline_s <= limit - 20 for p in ("phase1", "phase2", "phase3"))
    assert result.total_duration_seconds <= limit


# --- budget ------------------------------------------------------------------------------------


def test_REQ_OR_029_budget_warning_at_80_percent():
    # Cheap calls (1/40 of the budget): the warning at 80 % comes while the search goes on (it
    # stops only when finalization's reserve, six calls' worth here, is all that is left).
    script = Script(cost={"phase1": 0.025, "phase2": 0.025, "phase3": 0.025, "finalization": 0.025},
                    steps={"phase1": 4, "phase2": 14, "phase3": 1, "finalization": 1})
    run = script.run(cfg(max_budget_usd=1.0))  # 4 + 2 x 14 = 32 search calls = $0.80
    final_result(run)
    (warning,) = run.of(BudgetWarning)
    assert warning.spent_usd == pytest.approx(0.8) and warning.limit_usd == 1.0
    assert any(n.level == "warning" and "budget" in n.message for n in run.of(Note))
    assert all(e.phase == "finalization" for e in run.of(BudgetExhausted))  # the search was never cut
    assert run.completed.result["stopped_early"] != "budget"


def test_REQ_OR_029_search_stops_early_enough_for_finalization_to_fit_the_budget():
    # Expensive calls (1/10 of the budget each): finalization's reserve is six calls' worth, so
    # the search stops at $0.50 and finalization still fits under the $1.00.
    script = Script(cost={"phase1": 0.1, "phase2": 0.1, "phase3": 0.1, "finalization": 0.1},
                    steps={"phase1": 2, "phase2": 10, "phase3": 1, "finalization": 1})
    run = script.run(cfg(max_budget_usd=1.0))
    result = final_result(run)
    (exhausted,) = run.of(BudgetExhausted)
    assert exhausted.spent_usd == pytest.approx(0.5)
    assert result.submission_path and result.total_cost_usd <= 1.0


def test_REQ_OR_029_030_budget_exhausted_skips_to_finalization_with_best_so_far():
    script = Script(cost={"phase1": 0.2, "phase2": 0.3, "phase3": 0.2, "finalization": 0.2},
                    steps={"phase1": 1, "phase2": 10, "phase3": 1, "finalization": 1})
    run = script.run(cfg(max_budget_usd=1.0))  # 0.2 + 0.3 + 0.3 + 0.3 = 1.1 → $1.01-style overshoot
    result = final_result(run)
    (exhausted,) = run.of(BudgetExhausted)
    # the search stops at its share of the budget; finalization's reserve (here six calls at the
    # mean cost, capped at half the budget) is what is left
    assert exhausted.phase == "phase2" and exhausted.spent_usd >= 0.5
    (now,) = run.of(FinalizeNow)
    assert now.reason == "budget" and now.skipped == ["phase3"]
    assert any(e.effect_id.startswith("phase2/") for e in run.of(EffectCancelled))
    assert "phase3" not in script.seen and result.phase3 is None
    assert script.seen["finalization"]["score"] == 0.5  # the best so far was s_0
    assert result.submission_path  # finalization still ran (its spending is allowed)
    assert run.completed.result["phases"]["phase2"]["status"] == "budget_exhausted"
    assert run.completed.result["stopped_early"] == "budget"


def test_REQ_OR_030_budget_exhausted_before_anything_usable_fails_with_diagnostics():
    script = Script(cost={"phase1": 1.0}, steps={"phase1": 5})
    run = script.run(cfg(max_budget_usd=1.0))
    assert run.completed is None and run.failed is not None
    assert "budget_exhausted" in run.failed.error
    diag = run.failed.diagnostics
    assert diag["failed_phase"] == "phase1" and diag["cost_usd"] == pytest.approx(1.0)


# --- fallbacks ---------------------------------------------------------------------------------


def test_REQ_OR_022_040_failed_path_is_replaced_by_the_phase1_solution():
    script = Script(fail={"phase2/path-0"})
    run = script.run(cfg())
    result = final_result(run)
    failed, ok = result.phase2_results
    assert failed.step_history[0]["failed"] is True
    assert failed.best_solution.content == result.phase1.initial_solution.content and failed.best_score == 0.5
    assert ok.best_score == 0.6 and not ok.step_history
    assert [s.score for s in script.seen["phase3"]["solutions"]] == [0.5, 0.6]
    assert [f.phase for f in run.of(FallbackUsed)] == ["phase2/path-0"]


def test_REQ_OR_040_all_paths_failing_gives_phase3_copies_of_s0():
    script = Script(fail={"phase2"})
    run = script.run(cfg())
    result = final_result(run)
    s0 = result.phase1.initial_solution.content
    assert [s.content for s in script.seen["phase3"]["solutions"]] == [s0, s0]
    assert all(r.step_history[0]["failed"] for r in result.phase2_results)


def test_REQ_OR_040_phase2_raising_as_a_whole_substitutes_s0_for_every_path():
    script = Script()

    async def broken(wf, s0, h0, *, sink=None, unmerged=()):
        raise ValueError("phase 2 exploded")

    script.phase2 = broken  # type: ignore[method-assign]
    run = script.run(cfg())
    result = final_result(run)
    assert [r.best_score for r in result.phase2_results] == [0.5, 0.5]
    assert run.completed.result["phases"]["phase2"]["status"] == "failed"
    assert "phase 2 exploded" in run.completed.result["phases"]["phase2"]["reason"]


def test_REQ_OR_041_phase3_failure_finalizes_the_best_phase2_solution():
    script = Script(fail={"phase3"})
    script.scores["phase2"] = 0.6
    run = script.run(cfg())
    result = final_result(run)
    assert result.phase3 is None
    assert script.seen["finalization"]["score"] == 0.6
    (fb,) = run.of(FallbackUsed)
    assert fb.phase == "phase3" and "REQ-OR-041" in fb.reason


def test_REQ_OR_042_phase1_failure_raises_pipeline_error_with_diagnostics():
    script = Script(phase1_error="Phase 1 failed: all 4 candidates produced execution errors")
    run = script.run(cfg())
    assert run.completed is None
    assert "all 4 candidates" in run.failed.error
    diag = run.failed.diagnostics
    assert {"elapsed_s", "cost_usd", "last_successful_operation", "partial_results", "phase_diagnostics"} <= set(diag)
    assert diag["phase_diagnostics"] == {"candidate_errors": ["boom"]}
    assert diag["last_successful_operation"] == "run started"
    assert "phase2" not in script.seen


def test_finalization_failure_without_any_submission_fails_the_run_by_name():
    """A run is never called completed with nothing to submit: the final step's reason is the error."""
    script = Script(fail={"finalization"})
    run = script.run(cfg())
    assert run.completed is None
    assert run.failed.error.startswith("the final step left no valid submission: finalization failed")
    assert "finalization broke" in run.failed.error and "engine lineage" in run.failed.error
    assert run.failed.diagnostics == {"stage": "final", "best_score": 0.7,
                                      "fallback_reason": "finalization failed: RuntimeError: finalization broke"}
    assert [f.phase for f in run.of(FallbackUsed)] == ["finalization"]


def test_REQ_OR_043_finalization_failure_keeps_validation_solution_without_submission():
    """A run created before that rule (no named patch) still completes as it was recorded."""
    script = Script(fail={"finalization"})
    run = script.run(cfg(), patches=[])
    result = final_result(run)
    assert result.submission_path == "" and run.completed.submission_path == ""
    assert result.final_solution.score == 0.7 and result.final_solution.phase != SolutionPhase.final
    assert run.completed.result["finalization"]["fallback_reason"].startswith("finalization failed")
    assert [f.phase for f in run.of(FallbackUsed)] == ["finalization"]


# --- the result ---------------------------------------------------------------------------------


def test_REQ_OR_036_037_038_final_result_with_per_phase_cost_and_duration():
    script = Script(seconds={"phase1": 5, "phase2": 7, "phase3": 11, "finalization": 13},
                    steps={"phase1": 2, "phase2": 3, "phase3": 1, "finalization": 1},
                    cost={"phase1": 0.01, "phase2": 0.02, "phase3": 0.04, "finalization": 0.08})
    run = script.run(cfg())
    result = final_result(run)
    costs = run.completed.result["cost_summary"]
    assert costs["phase1_cost_usd"] == pytest.approx(0.02)
    assert costs["phase2_cost_usd"] == pytest.approx(2 * 3 * 0.02)
    assert costs["phase3_cost_usd"] == pytest.approx(0.04)
    assert costs["finalization_cost_usd"] == pytest.approx(0.08)
    assert costs["total_cost_usd"] == pytest.approx(result.total_cost_usd) == pytest.approx(0.26)
    durations = run.completed.result["duration_summary"]
    assert durations == pytest.approx({"phase1_duration_seconds": 10, "phase2_duration_seconds": 21,
                                       "phase3_duration_seconds": 11, "finalization_duration_seconds": 13,
                                       "total_duration_seconds": 55})
    assert result.total_duration_seconds == pytest.approx(55)
    assert result.task.competition_id == "sim-task" and result.config.num_parallel_solutions == 2


def test_decisions_are_deterministic():
    a = Script(fail={"phase2/path-1"}, steps={"phase2": 1000}).run(cfg())
    b = Script(fail={"phase2/path-1"}, steps={"phase2": 1000}).run(cfg())
    assert a.decisions() == b.decisions()
