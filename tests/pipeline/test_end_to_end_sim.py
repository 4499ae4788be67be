"""The real phases under the orchestrator, with a scripted agent on the simulated clock."""

from __future__ import annotations

from events.core import AgentCallRequested, EffectCancelled, PhaseCompleted, PhaseStarted
from events.domain import FinalResult, PipelineConfig
from events.phase3 import FinalizationFellBack, SubmissionProduced
from events.pipeline import BudgetExhausted, BudgetWarning, DeadlineHit, FinalizeNow, WorkCut
from handlers.mlestar.pipeline import main
from tests.pipeline import scripted_agent as sa
from tests.pipeline.support import simulate_clock


def small(**kw) -> PipelineConfig:
    base = dict(num_retrieved_models=2, outer_loop_steps=1, inner_loop_steps=2, num_parallel_solutions=2,
                ensemble_rounds=2, time_limit_seconds=3600)
    base.update(kw)
    return PipelineConfig(**base)


def run_sim(config, *, cost=0.0, durations=None):
    return simulate_clock(main, agent=lambda r: sa.answer(r, cost_usd=cost), evaluate=sa.evaluate,
                          config=config, durations=durations)


def test_REQ_OR_001_017_real_phases_run_in_order_and_produce_a_submission():
    run = run_sim(small())
    assert run.failed is None
    result = FinalResult.model_validate(run.completed.result)
    started = [e.phase for e in run.of(PhaseStarted)]
    assert started == ["phase1", "phase2", "phase2/path-0", "phase2/path-1", "phase3", "final"]
    assert [e.phase for e in run.of(PhaseCompleted)][-1] == "final"
    assert result.phase1.initial_score == 0.52  # two candidates, one accepted merge
    assert [r.best_score for r in result.phase2_results] == [0.53, 0.53]
    assert result.phase3 is not None and result.phase3.best_ensemble_score == 0.9
    assert result.submission_path.endswith("submission.csv")
    assert run.completed.best_score == 0.9
    # the agent sessions of the L paths are their own (REQ-OR-021)
    keyed = [r for r in run.of(AgentCallRequested) if r.effect_id.startswith("phase2/") and r.session_key]
    assert {r.session_key for r in keyed} == {"path-0", "path-1"}
    assert all(r.effect_id.startswith(f"phase2/{r.session_key}/") for r in keyed)


def test_REQ_OR_015_real_phases_with_L1_never_ask_the_ensemble_agents():
    run = run_sim(small(num_parallel_solutions=1))
    result = FinalResult.model_validate(run.completed.result)
    assert result.phase3 is None and len(result.phase2_results) == 1
    assert not [r for r in run.of(AgentCallRequested) if r.agent_type in ("ens_planner", "ensembler")]
    assert run.completed.best_score == result.phase2_results[0].best_score


def test_REQ_OR_023_real_phase2_paths_are_cancelled_at_the_deadline():
    # Coder calls take 2000 s: the paths cannot finish inside Phase 2's window.
    def durations(req):
        return 2000.0 if getattr(req, "agent_type", "") == "coder" else 1.0

    run = run_sim(small(), durations=durations)
    result = FinalResult.model_validate(run.completed.result)
    assert ("phase2", "cancelled") in [(h.phase, h.action) for h in run.of(DeadlineHit)]
    cancelled = {e.effect_id for e in run.of(EffectCancelled)}
    assert any(c.startswith("phase2/path-0/") for c in cancelled)
    paths = {e.phase: e.result for e in run.of(PhaseCompleted) if e.phase.startswith("phase2/path-")}
    assert paths["phase2/path-0"]["cancelled"] and paths["phase2/path-1"]["cancelled"]
    # REQ-OR-026/043: each cut path keeps its OWN best so far (its first refinement, 0.53, beat
    # the Phase 1 solution's 0.52), and its history says where it was cut; nothing is replaced
    # by a run-wide copy.
    assert [r.best_score for r in result.phase2_results] == [0.53, 0.53]
    assert all(r.step_history[-1]["cut"] and r.step_history[-1]["outer_step"] == 0 for r in result.phase2_results)
    cuts = {c.unit: c for c in run.of(WorkCut)}
    assert set(cuts) == {"phase2/path-0", "phase2/path-1"} and all(c.kept_score == 0.53 for c in cuts.values())
    assert result.submission_path  # Phase 3 and finalization still ran in their own windows
    assert result.total_duration_seconds <= 3600


def test_REQ_OR_029_real_phases_budget_warning_then_shutdown_then_submission():
    run = run_sim(small(max_budget_usd=0.2), cost=0.01)  # about 20 calls' worth
    assert run.failed is None
    result = FinalResult.model_validate(run.completed.result)
    assert len(run.of(BudgetWarning)) == 1 and len(run.of(BudgetExhausted)) == 1
    assert run.of(BudgetWarning)[0].spent_usd >= 0.16
    (now,) = run.of(FinalizeNow)
    assert now.reason == "budget"
    assert result.submission_path  # finalization ran after the shutdown
    assert run.completed.result["stopped_early"] == "budget"


def _run_with_a_failing_test_script(*, test_script_s: float = 1.0, **config):
    """MLE-STAR whose every scored script leaves a valid submission (sa.evaluate) and whose
    finalization's test script does not: it crashes, or takes ``test_script_s``."""
    def evaluate(req, code):
        done = sa.evaluate(req, code)
        if not req.effect_id.startswith("final/"):
            return done
        crashed = done.result.model_copy(update={"is_error": True, "exit_code": 1, "score": None,
                                                 "error_traceback": "MemoryError: the full training set"})
        return done.model_copy(update={"result": crashed, "submission": None})

    def durations(req):
        return test_script_s if getattr(req, "effect_id", "").startswith("final/test") and \
            getattr(req, "purpose", "") == "submission" else None

    return simulate_clock(main, agent=lambda r: sa.answer(r), evaluate=evaluate, config=small(**config),
                          durations=durations)


def _own_submission_of_the_final_solution(run):
    from events.core import EvaluationRequested, SolutionEvaluated

    final_id = run.of(SubmissionProduced)[-1].solution_id
    evaluated = [e for e in run.of(SolutionEvaluated) if e.solution_id == final_id and e.score is not None]
    assert evaluated, "the kept submission belongs to a solution the search evaluated"
    return f"/sim/{evaluated[-1].eval_ids[-1]}/final/submission.csv", run.of(EvaluationRequested)


def test_REQ_OR_043_a_failed_test_script_keeps_the_final_solutions_own_submission():
    """The contract "a completed run submits the best it found" holds in MLE-STAR as in the
    evolutionary search: every scored script's run is checked for ./final/submission.csv, and when
    the full-data test script fails after debugging, the best solution's own file is submitted
    (fit on the search's rows, but an answer) instead of none."""
    run = _run_with_a_failing_test_script()
    assert run.of(FinalizationFellBack)
    (kept,) = run.of(SubmissionProduced)
    assert kept.valid and kept.reason.startswith("fallback")
    path, requests = _own_submission_of_the_final_solution(run)
    assert kept.path == path and run.completed.submission_path == path
    assert run.completed.best_score == 0.9  # the ensemble: the best on validation is what is submitted
    scored = [r for r in requests if r.purpose not in ("ablation", "submission")]
    assert scored and all(r.expect_submission for r in scored)


def test_REQ_OR_024_043_finalization_cut_by_the_time_limit_keeps_the_final_solutions_own_submission():
    """The test script outlives the run's time limit: finalization is cut at its window's end and
    the run still ends with the best solution's own submission."""
    run = _run_with_a_failing_test_script(test_script_s=10_000.0, time_limit_seconds=2000)
    assert run.completed is not None and run.completed.submission_path
    kept = run.of(SubmissionProduced)[-1]
    assert kept.reason.startswith("fallback") and kept.path == run.completed.submission_path
    path, _ = _own_submission_of_the_final_solution(run)
    assert kept.path == path
