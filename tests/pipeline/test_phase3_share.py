"""The time mode keeps Phase 3 only when its share can hold one ensemble round (REQ-OR-014,
REQ-OR-026's redistribution, issue 28), on the simulated clock.

An ensemble round runs every path's models in one script, so it takes about as long as the paths'
runs together. On a short limit with slow scripts Phase 3's share (15/80 of the search time left
after Phase 1) cannot hold that: the round used to start anyway and be cut at its window's end,
which gave nothing for a sixth of the run (solar-module-technology and town-country at 120 s).
Now Phase 2's paths get that share, and the run still ends within its limit with a submission."""

from __future__ import annotations

from typing import Any

import pytest

from engine.config.presets import build_config
from events.core import AgentCallRequested, EvaluationCompleted, EvaluationRequested
from events.domain import PipelineConfig
from events.phase3 import EnsembleRoundCompleted
from events.pipeline import PhaseSkipped
from handlers.mlestar.pipeline import main as mle_star_main
from handlers.timebudget import EXIT_ALLOWANCE_S, FINALIZATION_AGENT_CALLS, FINALIZATION_EVAL_RUNS
from tests.pipeline import scripted_agent as sa
from tests.pipeline.test_time_driven import assert_inside_windows, distinct, effects, steps, time_config, windows
from tests.support.sim import SimRun, simulate_clock

AGENT_S = 0.2


def run_mle_star(config: PipelineConfig, search_run_s: float) -> SimRun:
    """Every run takes ``search_run_s`` (and reports it, so the run measures it); a call 0.2 s."""
    def took(req: Any) -> float | None:
        if isinstance(req, AgentCallRequested):
            return AGENT_S
        if isinstance(req, EvaluationRequested):
            return min(search_run_s, req.timeout_s)
        return None

    def evaluate(req: EvaluationRequested, code: str) -> EvaluationCompleted:
        done = sa.evaluate(req, code)
        return done.model_copy(update={"result": done.result.model_copy(update={"duration_seconds": took(req)})})

    run = simulate_clock(mle_star_main, agent=distinct, evaluate=evaluate, config=config, durations=took,
                         max_steps=400_000)
    assert run.completed is not None, run.failed
    return run


def phase3_skips(run: Any) -> list[PhaseSkipped]:
    return [e for e in run.of(PhaseSkipped) if e.phase == "phase3"]


def test_REQ_OR_014_a_round_that_cannot_fit_phase3s_share_leaves_the_share_to_phase2():
    """Runs of 12 s at 120 s: one round of two paths takes 24.4 s, Phase 3's share is about 16 s.
    Phase 3 is dropped before Phase 2 starts, with the reason; Phase 2's window reaches the
    finalize-now point; no round is started, none is cut; the run submits within its limit."""
    limit = 120
    run = run_mle_star(time_config(limit), 12.0)
    skipped = phase3_skips(run)
    assert len(skipped) == 1 and "should take 24.4 s" in skipped[0].reason and "Phase 2 takes" in skipped[0].reason
    allocated = windows(run)
    assert "phase3" not in allocated
    reserve = FINALIZATION_EVAL_RUNS * 12.0 + FINALIZATION_AGENT_CALLS * AGENT_S
    assert allocated["phase2"].deadline_s == pytest.approx(limit - EXIT_ALLOWANCE_S - reserve)
    assert not run.of(EnsembleRoundCompleted)
    assert_inside_windows(run)
    done = run.completed
    assert done is not None and done.submission_path
    assert done.result["skipped_phases"] == ["phase3"]
    assert max(ended for _, _, ended in effects(run)) <= limit


def test_a_round_that_fits_keeps_phase3_and_a_longer_limit_keeps_it_for_the_slow_runs():
    """Quick runs at 120 s, and the slow runs at 600 s (a round of 24.4 s in a share of about
    95 s): Phase 3 stays in the plan and runs its rounds."""
    for limit, run_s in ((120, 2.0), (600, 12.0)):
        run = run_mle_star(time_config(limit), run_s)
        assert not phase3_skips(run), (limit, run_s)
        assert steps(run)["rounds"] >= 1, (limit, run_s)
        assert "phase3" in windows(run)


def test_REQ_OR_044_the_fixed_presets_keep_phase3_whatever_its_rounds_take():
    """The quick preset runs its counts (the paper's algorithm): Phase 3 is not dropped by time."""
    config = build_config(preset="quick", extra={"time_limit_seconds": 120}, environ={})
    run = run_mle_star(config, 12.0)
    assert not [e for e in phase3_skips(run) if "time mode" in e.reason]
