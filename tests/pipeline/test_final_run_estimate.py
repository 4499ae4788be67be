"""Finalization's reserve from the script's own estimate of its test run (REQ-OR-034, issue 28):
the time mode keeps what finalizing the best solution is measured to take, so a short run is not
left idle for two search runs' worth of a test run that fits once on every row."""

from __future__ import annotations

from typing import Any

from events.core import AgentCallRequested, EffectCancelled, EvaluationCompleted, EvaluationRequested
from events.pipeline import PhaseBudgetAllocated
from handlers.mlestar.pipeline import main as mle_star_main
from handlers.timebudget import EXIT_ALLOWANCE_S, FINAL_RUN_MARGIN, FINALIZATION_AGENT_CALLS
from tests.pipeline import scripted_agent as sa
from tests.pipeline.test_time_driven import distinct, time_config, windows
from tests.support.sim import SimRun, simulate_clock

SEARCH_RUN_S = 15.0


def _run(limit: int, *, estimate_s: float | None, test_run_s: float) -> SimRun:
    """Every search run takes SEARCH_RUN_S and (``estimate_s``) estimates its test run; the test
    run takes ``test_run_s``; an agent call 0.2 s."""
    def took(req: Any) -> float | None:
        if isinstance(req, AgentCallRequested):
            return 0.2
        if isinstance(req, EvaluationRequested):
            return min(test_run_s if req.effect_id.startswith("final/") else SEARCH_RUN_S, req.timeout_s)
        return None

    def evaluate(req: EvaluationRequested, code: str) -> EvaluationCompleted:
        done = sa.evaluate(req, code)
        result = done.result.model_copy(update={"duration_seconds": took(req)})
        estimate = None if req.effect_id.startswith("final/") or result.score is None else estimate_s
        return done.model_copy(update={"result": result, "final_run_estimate_s": estimate})

    run = simulate_clock(mle_star_main, agent=distinct, evaluate=evaluate, config=time_config(limit),
                         durations=took, max_steps=400_000)
    assert run.completed is not None, run.failed
    return run


def _search_end(run: SimRun) -> float:
    """Where the last search window given ends: the finalize-now point as it stood then."""
    return max(a.deadline_s for a in run.of(PhaseBudgetAllocated) if a.phase != "finalization")


def _last_end(run: SimRun) -> float:
    return max(e.elapsed_s for e in run.of(EvaluationCompleted))


def test_time_mode_keeps_the_estimated_test_run_for_finalization_not_two_search_runs():
    """Search runs of 15 s that estimate their test run at 4 s (which it takes): the search goes on
    to the margin on 4 s and four calls before the end, and the run uses over 90 % of its limit.
    Without the estimate the two-run rule keeps 30.8 s, and the run finalizes before 70 %."""
    limit = 120
    keep_s = FINAL_RUN_MARGIN * 4.0 + FINALIZATION_AGENT_CALLS * 0.2
    new = _run(limit, estimate_s=4.0, test_run_s=4.0)
    assert _search_end(new) >= limit - EXIT_ALLOWANCE_S - keep_s - 1e-6
    fin = windows(new)["finalization"]
    assert fin.started_at_s >= 0.9 * limit
    tested = [e for e in new.of(EvaluationCompleted) if e.effect_id.startswith("final/test")]
    assert tested and not tested[-1].result.is_error
    assert not [e for e in new.of(EffectCancelled) if e.effect_id.startswith("final/")]
    assert 0.9 * limit <= _last_end(new) <= limit - EXIT_ALLOWANCE_S + 1e-6

    old = _run(limit, estimate_s=None, test_run_s=4.0)
    assert _search_end(old) <= limit - EXIT_ALLOWANCE_S - 2 * SEARCH_RUN_S + 1e-6
    assert windows(old)["finalization"].started_at_s < 0.7 * limit


def test_a_test_run_longer_than_its_estimate_is_cut_at_the_limit_and_the_own_submission_kept():
    """The estimate is the script's word, and it can be wrong: a test run of 60 s against an
    estimate of 4 s is cut at the end of the run, which keeps the submission the validation
    solution's own run wrote, and ends within its limit."""
    limit = 120
    run = _run(limit, estimate_s=4.0, test_run_s=60.0)
    assert [e for e in run.of(EffectCancelled) if e.effect_id.startswith("final/test")]
    done = run.completed
    assert done is not None
    best_eval = [e for e in run.of(EvaluationCompleted) if e.submission is not None
                 and e.submission.path == done.submission_path]
    assert best_eval and best_eval[-1].result.score == done.best_score        # the best's own run wrote it
    assert done.result["finalization"]["fallback_reason"].startswith("finalization timed_out")
    assert done.result["total_duration_seconds"] <= limit - EXIT_ALLOWANCE_S + 1e-6
