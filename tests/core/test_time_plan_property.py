"""One time plan for both strategies, inside the limit, on the simulated clock (issue 27; REQ-OR-024/025/034).

The real strategies (MLE-STAR and ``evolve``) run in memory (``tests.support.sim.simulate_clock``):
every agent call and evaluation takes a random time drawn per effect, an evaluation longer than
its timeout is killed at the timeout (as the harness does), a timer fires at its time, and a
cancelled effect ends when it is cancelled. For any limit from 60 s to 24 h and any durations:

* no effect ends after the limit (the guard timers cut what is still running there), so the run
  is over by ``T`` on the handlers' side; REQ-OR-024's 30 s are the process's shutdown;
* every MLE-STAR search phase starts with at least its share of what remained before
  finalization's reserve (``share / Σ shares still to run × (T − reserve − now)``), and ends
  before that reserve: bounds on the reserve computed here from the log (an oracle: at most what
  the slowest scored evaluation and agent call measured by then call for, at least what the agent
  calls alone do);
* finalization's window ends at ``T`` and starts at least the reserve's floor before it.

No verdict depends on the machine: time is the simulator's.
"""

from __future__ import annotations

import random
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from events.core import (
    AgentCallCompleted,
    AgentCallFailed,
    AgentCallRequested,
    EffectCancelled,
    EvaluationCompleted,
    EvaluationRequested,
    PhaseStarted,
    RunCompleted,
    RunFailed,
    RunStarted,
    TimerFired,
    TimerRequested,
)
from events.domain import EvaluationResult, PipelineConfig
from events.pipeline import PhaseBudgetAllocated
from handlers.evolution import main as evolve_main
from handlers.mlestar.pipeline import main as mle_star_main
from handlers.timebudget import EXIT_ALLOWANCE_S, FINALIZATION_FLOOR_S, reserve_for
from tests.evolution.scripted import World
from tests.evolution.scripted import evaluate as evolve_evaluate
from tests.pipeline import scripted_agent as sa
from tests.support.sim import SimRun, simulate_clock

DAY_S = 86_400


class Clock:
    """Durations drawn per effect from one seed: agent calls up to ``agent_max_s``, evaluations
    up to ``eval_max_s`` (a few draws far longer, as a real run's slowest calls are)."""

    def __init__(self, seed: int, agent_max_s: float, eval_max_s: float) -> None:
        self.seed, self.agent_max_s, self.eval_max_s = seed, agent_max_s, eval_max_s

    def draw(self, effect_id: str, longest: float) -> float:
        rng = random.Random(f"{self.seed}:{effect_id}")
        took = rng.uniform(0.0, longest)
        return took * 10 if rng.random() < 0.05 else took

    def durations(self, req: Any) -> float | None:
        if isinstance(req, AgentCallRequested):
            return self.draw(req.effect_id, self.agent_max_s)
        if isinstance(req, EvaluationRequested):
            return min(self.draw(req.effect_id, self.eval_max_s), req.timeout_s)  # killed at its timeout
        return None

    def evaluation(self, answer: Any) -> Any:
        """The world's answer, taking the drawn time (a timeout when it exceeds the request's)."""
        def evaluate(req: EvaluationRequested, code: str) -> EvaluationCompleted:
            out = answer(req, code)
            done = out if isinstance(out, EvaluationCompleted) else EvaluationCompleted(effect_id=req.effect_id,
                                                                                       result=out)
            took = self.draw(req.effect_id, self.eval_max_s)
            if took > req.timeout_s:
                return EvaluationCompleted(effect_id=req.effect_id, result=EvaluationResult(
                    score=None, stdout="", stderr=f"timed out after {req.timeout_s:.0f} s", exit_code=124,
                    duration_seconds=req.timeout_s, is_error=True))
            return done.model_copy(update={"result": done.result.model_copy(update={"duration_seconds": took})})
        return evaluate


def effect_ends(run: SimRun) -> dict[str, float]:
    """When each agent call, evaluation and timer ended: its result's time, the time it was
    cancelled, or the end of the run for one still pending then (the driver cancels it)."""
    now, ends, requested = 0.0, {}, {}
    for _, e in run.events:
        if isinstance(e, (AgentCallCompleted, AgentCallFailed, EvaluationCompleted, TimerFired)):
            now = max(now, e.elapsed_s)
            ends[e.effect_id] = e.elapsed_s
        elif isinstance(e, (AgentCallRequested, EvaluationRequested, TimerRequested)):
            requested[e.effect_id] = now
        elif isinstance(e, EffectCancelled):
            ends.setdefault(e.effect_id, now)
    return {eid: ends.get(eid, now) for eid in requested}


def run_end(run: SimRun) -> float:
    return max((e.elapsed_s for _, e in run.events if isinstance(getattr(e, "elapsed_s", None), float)),
               default=0.0)


def measured_at(run: SimRun, t: float) -> tuple[float, float]:
    """The slowest scored evaluation and the slowest agent call as of driven time ``t``."""
    asked: dict[str, float] = {}
    now, slowest_eval, slowest_agent = 0.0, 0.0, 0.0
    for _, e in run.events:
        if isinstance(e, AgentCallRequested):
            asked[e.effect_id] = now
        elif isinstance(e, (AgentCallCompleted, AgentCallFailed, EvaluationCompleted, TimerFired)):
            if e.elapsed_s > t:
                break
            now = max(now, e.elapsed_s)
            if isinstance(e, EvaluationCompleted) and not e.result.is_error and e.result.score is not None:
                slowest_eval = max(slowest_eval, e.result.duration_seconds)
            elif isinstance(e, (AgentCallCompleted, AgentCallFailed)) and e.effect_id in asked:
                slowest_agent = max(slowest_agent, e.elapsed_s - asked[e.effect_id])
    return slowest_eval, slowest_agent


limits = st.integers(min_value=60, max_value=DAY_S)


@st.composite
def clocks(draw: Any, limit: int) -> Clock:
    agent_max = draw(st.floats(min_value=0.5, max_value=max(1.0, limit / 8)))
    eval_max = draw(st.floats(min_value=0.5, max_value=max(1.0, limit / 3)))
    return Clock(draw(st.integers(0, 10_000)), agent_max, eval_max)


def assert_inside_the_limit(run: SimRun, limit: int) -> None:
    assert run.completed is not None or run.failed is not None, "the run did not end"
    late = {eid: end for eid, end in effect_ends(run).items() if end > limit + 1e-6}
    assert not late, f"effects ended after T = {limit} s: {late}"
    assert run_end(run) <= limit + 1e-6


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), limit=limits)
def test_REQ_OR_024_025_mle_star_ends_by_the_limit_and_each_phase_gets_its_share(data, limit):
    clock = data.draw(clocks(limit))
    config = PipelineConfig(time_limit_seconds=limit)   # the paper's settings: M=4, L=2, 4 x 4 steps, R=5
    run = simulate_clock(mle_star_main, agent=sa.answer, evaluate=clock.evaluation(sa.evaluate), config=config,
                         durations=clock.durations, max_steps=200_000)
    assert_inside_the_limit(run, limit)
    allocated = {a.phase: a for a in run.of(PhaseBudgetAllocated)}
    shares = {"phase1": 10.0, "phase2": 65.0, "phase3": 15.0, "finalization": 10.0}
    for phase in ("phase1", "phase2", "phase3"):
        a = allocated.get(phase)
        if a is None:
            continue
        slowest_eval, slowest_agent = measured_at(run, a.started_at_s)
        most = reserve_for(limit, shares["finalization"], 2 * slowest_eval + 4 * slowest_agent)
        least = reserve_for(limit, shares["finalization"], 4 * slowest_agent)
        fair = a.share_pct / (sum(shares[p] for p in a.remaining_phases) + shares["finalization"])
        assert a.budget_s >= fair * (limit - most - a.started_at_s) - 1e-6, (phase, a, most)
        assert a.deadline_s <= limit - least + 1e-6
    fin = allocated.get("finalization")
    if fin is not None:
        assert fin.deadline_s == limit - EXIT_ALLOWANCE_S
        assert fin.started_at_s <= limit - FINALIZATION_FLOOR_S + 1e-6


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), limit=limits)
def test_REQ_OR_024_evolve_ends_by_the_limit_with_finalization_inside_it(data, limit):
    clock = data.draw(clocks(limit))
    config = PipelineConfig(time_limit_seconds=limit, max_steps=16, phase1_target_nodes=4, steps_per_epoch=4,
                            workers=2, tournament_size=3)
    run = simulate_clock(evolve_main, agent=World(), evaluate=clock.evaluation(evolve_evaluate), config=config,
                         durations=clock.durations, max_steps=200_000)
    assert_inside_the_limit(run, limit)
    timers = {t.effect_id: t.at_elapsed_s for t in run.of(TimerRequested)}
    search = [at for eid, at in timers.items() if eid.startswith("evolve/deadline/search")]
    assert search and all(at <= limit - FINALIZATION_FLOOR_S + 1e-6 for at in search)  # the reserve is kept
    if any(e.phase == "final" for e in run.of(PhaseStarted)):
        assert timers["run/deadline/finalization"] == limit - EXIT_ALLOWANCE_S  # cut before T, not later


def test_the_oracle_reads_the_log_the_way_the_runtime_measures():
    """The property's oracle (``measured_need_at``) agrees with the runtime's own measurement."""
    clock = Clock(seed=3, agent_max_s=5.0, eval_max_s=20.0)
    run = simulate_clock(mle_star_main, agent=sa.answer, evaluate=clock.evaluation(sa.evaluate),
                         config=PipelineConfig(time_limit_seconds=3600), durations=clock.durations)
    assert run.completed is not None
    start = next(e for _, e in run.events if isinstance(e, RunStarted))
    assert start.config["time_limit_seconds"] == 3600
    slowest_eval, slowest_agent = measured_at(run, float("inf"))
    assert 0 < slowest_eval <= 20 * 10 and 0 < slowest_agent <= 5 * 10
    assert not [e for _, e in run.events if isinstance(e, (RunFailed,))]
    assert isinstance(run.completed, RunCompleted)
