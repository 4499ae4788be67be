"""Properties of the time plan (REQ-OR-024/025/026/034) for any limit, progress and measurement."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from events.domain import EvaluationResult, PhaseTimeBudget, PipelineConfig
from handlers.timebudget import (
    ESTIMATED_FLOOR_S,
    EXIT_ALLOWANCE_S,
    FINAL_RUN_MARGIN,
    FINALIZATION_FLOOR_S,
    MIN_CANDIDATE_S,
    Measured,
    TimePlan,
    reserve_for,
    shortest_workable_limit_s,
)


def measured(eval_s: float = 0.0, agent_s: float = 0.0) -> Measured:
    m = Measured()
    m.evaluation(EvaluationResult(score=0.5, stdout="", stderr="", exit_code=0, duration_seconds=eval_s,
                                  is_error=False))
    m.agent_call(agent_s)
    return m


@settings(max_examples=150, deadline=None)
@given(limit=st.integers(min_value=40, max_value=200_000),
       used=st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=3, max_size=3),
       eval_s=st.floats(min_value=0.0, max_value=5000.0), agent_s=st.floats(min_value=0.0, max_value=600.0),
       L1=st.booleans())
def test_REQ_OR_024_025_every_window_ends_by_the_limit_and_each_phase_gets_its_share(limit, used, eval_s,
                                                                                      agent_s, L1):
    """Every window, finalization's included, ends by T; each search phase starts with at least
    its share of what remained before finalization's reserve; finalization gets at least it."""
    plan = TimePlan.from_config(PipelineConfig(time_limit_seconds=limit), measured=measured(eval_s, agent_s))
    phases = ("phase1", "phase2") if L1 else ("phase1", "phase2", "phase3")
    now = 0.0
    for i, phase in enumerate(phases):
        w = plan.window(phase, now, phases[i:])
        shares = sum(plan.shares[p] for p in phases[i:]) + plan.shares["finalization"]
        assert w.start_s == now and w.start_s <= w.soft_end_s <= w.end_s
        assert w.end_s <= max(now, plan.finalize_at_s) + 1e-6             # never into the reserve
        assert w.budget_s >= (plan.finalize_at_s - now) * plan.shares[phase] / shares - 1e-6
        now = w.start_s + used[i] * w.budget_s                            # the phase used part of it
    fin = plan.finalization_window(now)
    assert fin.end_s == limit - EXIT_ALLOWANCE_S                          # REQ-OR-024: ends by T
    assert fin.budget_s >= plan.reserve_s - EXIT_ALLOWANCE_S - 1e-6


@given(limit=st.integers(min_value=1, max_value=200_000), need=st.floats(min_value=0.0, max_value=1e6))
def test_REQ_OR_034_the_reserve_is_measured_floored_and_taken_out_of_the_limit(limit, need):
    r = reserve_for(limit, 10.0, need)
    assert r == pytest.approx(min(limit / 2, max(0.1 * limit, FINALIZATION_FLOOR_S, need)))
    assert r <= limit / 2          # the search keeps at least half
    plan = TimePlan.from_config(PipelineConfig(time_limit_seconds=limit))
    assert plan.finalize_at_s == pytest.approx(limit - plan.reserve_s)


def test_REQ_OR_034_the_reserve_grows_with_what_the_run_measured():
    m = Measured()
    plan = TimePlan.from_config(PipelineConfig(time_limit_seconds=1200), measured=m)
    assert plan.reserve_s == 120                                  # its share, nothing measured yet
    m.agent_call(10.0)
    m.evaluation(EvaluationResult(score=0.9, stdout="", stderr="", exit_code=0, duration_seconds=60.0,
                                  is_error=False))
    assert plan.reserve_s == 2 * 60 + 4 * 10                      # two runs and four calls: 160 s
    # a failed evaluation (a timeout, a crash) says nothing about the script to be finalized
    m.evaluation(EvaluationResult(score=None, stdout="", stderr="", exit_code=124, duration_seconds=500.0,
                                  is_error=True))
    assert plan.reserve_s == 160 and plan.finalize_at_s == 1040


def test_REQ_OR_034_the_reserve_follows_the_evaluation_of_the_solution_to_be_finalized():
    """The best so far ran in 10 s, another candidate in 200 s: finalization needs two runs of
    the best (and four calls), not of the slowest; with no best known, the slowest counts."""
    m = Measured()
    best: list[str | None] = [None]
    plan = TimePlan.from_config(PipelineConfig(time_limit_seconds=3000), measured=m, finalizing=lambda: best[0])
    for sid, took in (("fast", 10.0), ("slow", 200.0)):
        m.evaluation(EvaluationResult(score=0.5, stdout="", stderr="", exit_code=0, duration_seconds=took,
                                      is_error=False), sid)
    m.agent_call(5.0)
    assert plan.reserve_s == 2 * 200 + 4 * 5            # nothing chosen yet: the slowest run
    best[0] = "fast"
    assert plan.reserve_s == 300                        # 2 × 10 + 4 × 5 = 40 < its 10 % share
    best[0] = "never-evaluated"
    assert plan.reserve_s == 2 * 200 + 4 * 5


def test_REQ_OR_025_shares_are_configurable():
    config = PipelineConfig(time_limit_seconds=10_000, phase_time_budget=PhaseTimeBudget(
        phase1_pct=20, phase2_pct=50, phase3_pct=10, finalization_pct=20))
    plan = TimePlan.from_config(config)
    assert plan.reserve_s == pytest.approx(2000)
    w1 = plan.window("phase1", 0, ("phase1", "phase2", "phase3"))
    assert w1.budget_s == pytest.approx(2000)
    w2 = plan.window("phase2", 2000, ("phase2", "phase3"))
    assert w2.budget_s == pytest.approx(5000)


def test_REQ_OR_024_sixty_second_limit():
    """At 60 s finalization's floor (20 s) is more than its share (6 s): it is taken out of the
    limit, the search shares the 40 s before it, and finalization ends at 59 s (the exit allowance
    before T)."""
    plan = TimePlan.from_config(PipelineConfig(time_limit_seconds=60))
    assert plan.reserve_s == 20 and plan.finalize_at_s == 40
    assert plan.window("phase1", 0, ("phase1", "phase2", "phase3")).budget_s == pytest.approx(40 / 9)
    assert plan.finalization_window(40).budget_s == 20 - EXIT_ALLOWANCE_S
    assert plan.finalization_window(40).end_s == 60 - EXIT_ALLOWANCE_S


def test_the_shortest_workable_limit_fits_one_candidate_and_finalization():
    config = PipelineConfig()
    shortest = shortest_workable_limit_s(config)
    assert shortest == 40
    assert shortest - reserve_for(shortest, 10.0) >= MIN_CANDIDATE_S
    assert (shortest - 1) - reserve_for(shortest - 1, 10.0) < MIN_CANDIDATE_S
    heavy = PipelineConfig(phase_time_budget=PhaseTimeBudget(phase1_pct=5, phase2_pct=20, phase3_pct=5,
                                                             finalization_pct=70))
    assert shortest_workable_limit_s(heavy) == 40     # the reserve is capped at half the limit


@settings(max_examples=80, deadline=None)
@given(limit=st.integers(min_value=60, max_value=100_000), late=st.floats(min_value=0.0, max_value=1.0))
def test_REQ_OR_025_clipped_search_phases_share_what_is_left_in_proportion(limit, late):
    """When the finalize-now point clips the windows (here Phase 2 starts late, as after an
    overrun), Phase 2 and Phase 3 share what is left before it 65 : 15 — Phase 3 keeps its share
    instead of the seconds Phase 2 leaves."""
    plan = TimePlan.from_config(PipelineConfig(time_limit_seconds=limit))
    start = late * plan.finalize_at_s
    w2 = plan.window("phase2", start, ("phase2", "phase3"))
    assert w2.end_s <= plan.finalize_at_s + 1e-6
    w3 = plan.window("phase3", w2.end_s, ("phase3",))
    assert w3.end_s <= plan.finalize_at_s + 1e-6
    left = plan.finalize_at_s - start
    if w2.end_s + (limit - w2.end_s) * 15 / 25 > plan.finalize_at_s + 1e-6:   # Phase 3 was clipped
        assert w3.budget_s == pytest.approx(plan.finalize_at_s - w2.end_s)
        assert w3.budget_s >= left * 15 / 80 - 1e-6


async def _three_calls(wf):
    from events.core import AgentCallRequested

    await wf.gather(*(wf.agent(AgentCallRequested(effect_id=wf.effect_id(n), agent_type="t", prompt=n))
                      for n in ("timed", "untimed", "failed")))
    wf.complete(submission_path="", best_score=None, result={})


def test_REQ_OR_034_only_answers_measure_how_long_an_agent_call_takes():
    """Finalization's reserve counts four of the slowest agent call. An answer's duration is its
    executor's, else the driven time it took; a failure carries none, and the driven time of one
    that failed at once is only the wait for the results ahead of it, so it is not measured."""
    from events.core import AgentCallCompleted, AgentCallFailed, RunStarted
    from events.domain import TaskDescription
    from handlers.runtime import Runtime

    task = TaskDescription(competition_id="toy", task_type="regression", data_modality="tabular",
                           evaluation_metric="rmse", metric_direction="minimize", description="toy")
    rt = Runtime(_three_calls)
    rt.feed(RunStarted(strategy="t", backend="t", seed=1, config={}, task=task, task_dir="/t", run_dir="/r"))
    rt.feed(AgentCallCompleted(effect_id="run/timed", text="a", duration_s=0.5, elapsed_s=3.0))
    assert rt.measured.slowest_agent_s == 0.5
    rt.feed(AgentCallCompleted(effect_id="run/untimed", text="b", elapsed_s=4.0))
    assert rt.measured.slowest_agent_s == 4.0
    rt.feed(AgentCallFailed(effect_id="run/failed", error="no plan", elapsed_s=20.0))
    assert rt.finished and rt.measured.slowest_agent_s == 4.0


def _scored(took: float) -> EvaluationResult:
    return EvaluationResult(score=0.9, stdout="", stderr="", exit_code=0, duration_seconds=took, is_error=False)


def test_REQ_OR_034_a_script_s_own_estimate_of_its_test_run_sizes_the_reserve():
    """A forest's search run took 17.5 s (five folds and a refit on 2,600 rows) and estimated its
    test run (one fit on every row) at 4.8 s: finalization needs the margin on that and the four
    calls, not two search runs (airport-state at 120 s kept 33 s for a 4.8 s test run)."""
    m = Measured()
    plan = TimePlan.from_config(PipelineConfig(time_limit_seconds=120, step_policy="time"), measured=m,
                                finalizing=lambda: "forest")
    m.agent_call(0.01)
    m.evaluation(_scored(17.5), "forest", 4.8)
    assert m.finalization_need_s("forest") == pytest.approx(FINAL_RUN_MARGIN * 4.8 + 4 * 0.01)
    assert plan.reserve_s == pytest.approx(max(6.0, FINAL_RUN_MARGIN * 4.8 + 0.04))
    # A solution not run yet (a step about to start) costs the run's largest estimate-to-run ratio.
    assert m.need_for_run_s(10.0) == pytest.approx(FINAL_RUN_MARGIN * 10.0 * 4.8 / 17.5 + 0.04)
    # A script that says nothing, in a run where none did: two runs, as before.
    other = Measured()
    other.evaluation(_scored(17.5), "forest")
    assert other.finalization_need_s("forest") == pytest.approx(2 * 17.5)


def test_REQ_OR_034_the_estimate_may_be_larger_than_the_search_run_and_the_largest_one_counts():
    """Boosters scored on a 3,600-row sample and refit on 50,000 rows: the estimate is 2.7 search
    runs, more than the two-run rule would keep. A solution run twice keeps its larger estimate,
    and the ratio is the largest seen."""
    m = Measured()
    m.evaluation(_scored(5.0), "booster", 13.5)
    assert m.finalization_need_s("booster") == pytest.approx(FINAL_RUN_MARGIN * 13.5)
    m.evaluation(_scored(5.0), "booster", 11.0)
    assert m.final_run_s["booster"] == 13.5
    m.evaluation(_scored(20.0), "forest", 4.0)
    assert m.final_run_ratio == pytest.approx(13.5 / 5.0)


def test_REQ_OR_034_an_estimated_test_run_is_not_held_to_half_the_share_at_long_limits():
    """regime-type at 600 s: the solution to finalize estimated a test run of a few seconds, and the
    half share held 30 s of which finalization used 8. With the script's own estimate the floor is
    at most ESTIMATED_FLOOR_S; a script that says nothing keeps the half share, and so does a
    short limit, whose half share is below that floor."""
    def plan_for(limit: int, estimate: float | None) -> TimePlan:
        m = Measured()
        m.agent_call(0.01)
        m.evaluation(_scored(5.0), "best", estimate)
        return TimePlan.from_config(PipelineConfig(time_limit_seconds=limit, step_policy="time"), measured=m,
                                    finalizing=lambda: "best")

    assert plan_for(600, 2.0).reserve_s == pytest.approx(ESTIMATED_FLOOR_S)
    assert plan_for(600, None).reserve_s == pytest.approx(30.0)                     # two runs (10 s) < half share
    assert plan_for(120, 2.0).reserve_s == pytest.approx(6.0)                       # half the share, below the floor
    assert plan_for(600, 20.0).reserve_s == pytest.approx(FINAL_RUN_MARGIN * 20.0 + 0.04)   # the measurement
    # A solution to finalize that was never run with an estimate: its size is a guess, the half share stays.
    m = Measured()
    m.evaluation(_scored(5.0), "other", 2.0)
    plan = TimePlan.from_config(PipelineConfig(time_limit_seconds=600, step_policy="time"), measured=m,
                                finalizing=lambda: "best")
    assert plan.reserve_s == pytest.approx(30.0)
    # The fixed-step presets keep the share and the floor.
    fixed = TimePlan.from_config(PipelineConfig(time_limit_seconds=600), measured=plan_for(600, 2.0).measured,
                                 finalizing=lambda: "best")
    assert fixed.reserve_s == pytest.approx(60.0)


def test_REQ_OR_034_a_step_like_a_measured_solution_is_taken_to_refit_as_that_one_does():
    """vowel-speaker at 120 s: small linear scripts set the run's largest estimate-to-run ratio
    (0.67) and Phase 3's ensembles re-fit at 0.26 of their run; the next round, like the last,
    is sized by the last one's ratio. A solution never measured falls back to the largest."""
    m = Measured()
    m.evaluation(_scored(3.0), "linear", 2.0)
    m.evaluation(_scored(11.0), "blend", 2.86)
    assert m.need_for_run_s(11.0, "blend") == pytest.approx(FINAL_RUN_MARGIN * 11.0 * 2.86 / 11.0)
    assert m.need_for_run_s(11.0) == pytest.approx(FINAL_RUN_MARGIN * 11.0 * 2.0 / 3.0)
    assert m.need_for_run_s(11.0, "unknown") == m.need_for_run_s(11.0)
    plan = TimePlan.from_config(PipelineConfig(time_limit_seconds=120, step_policy="time"), measured=m,
                                finalizing=lambda: "blend")
    assert plan.reserve_if(11.0, "blend") < plan.reserve_if(11.0)
    assert plan.finalize_at_if(11.0, "blend") == pytest.approx(plan.end_s - plan.reserve_if(11.0, "blend"))


@pytest.mark.parametrize("estimate", [None, float("nan"), float("inf"), -3.0])
def test_no_estimate_or_a_non_finite_or_negative_one_leaves_the_two_run_rule(estimate):
    m = Measured()
    m.evaluation(_scored(8.0), "s", estimate)
    assert m.final_run_s == {} and m.final_run_ratio == 0.0
    assert m.finalization_need_s("s") == pytest.approx(16.0)


def test_a_failed_run_s_estimate_is_not_taken():
    """A run that crashed after printing its estimate measured nothing that will be finalized."""
    m = Measured()
    m.evaluation(EvaluationResult(score=None, stdout="", stderr="boom", exit_code=1,
                                  duration_seconds=9.0, is_error=True), "s", 1.0)
    assert m.final_run_s == {} and m.final_run_ratio == 0.0
