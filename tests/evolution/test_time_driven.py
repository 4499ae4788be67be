"""``evolve`` in the time mode (issue 28, ``step_policy="time"``, ``handlers.step_policy``) on the simulated clock.

In the time mode ``max_steps`` is only a generous upper bound: the search keeps starting steps
while its window (up to the finalize-now point) holds one more as long as its steps took, so a
longer limit gives more nodes, no step starts past the window's soft end and nothing the search
runs ends after its hard end. In the fixed mode ``max_steps`` ends the search whatever the limit.
Agent calls and evaluations take scripted times: no verdict depends on the machine.
"""

from __future__ import annotations

from typing import Any

from engine.config.presets import build_config
from events.core import AgentCallRequested, EvaluationRequested, TimerRequested
from events.domain import PipelineConfig
from events.evolution import NodeAppended
from handlers.evolution import main as evolve_main
from handlers.timebudget import GRACE_FRACTION, MAX_GRACE_S
from tests.evolution.scripted import World
from tests.evolution.scripted import evaluate as evolve_evaluate
from tests.pipeline.test_time_driven import effects
from tests.support.sim import SimRun, simulate_clock

SEARCH = dict(phase1_target_nodes=4, steps_per_epoch=4, workers=2, tournament_size=3)
GENERATION = ("draft", "merge", "mutate")


def durations(req: Any) -> float | None:
    if isinstance(req, AgentCallRequested):
        return 2.0
    if isinstance(req, EvaluationRequested):
        return min(6.0, req.timeout_s)
    return None


def run(config: PipelineConfig) -> SimRun:
    out = simulate_clock(evolve_main, agent=World(), evaluate=evolve_evaluate, config=config, durations=durations,
                         max_steps=400_000)
    assert out.completed is not None, out.failed
    return out


def time_config(limit: int) -> PipelineConfig:
    return build_config(preset="time", extra={"time_limit_seconds": limit, **SEARCH}, environ={})


def generation_starts(out: SimRun) -> list[float]:
    """When each step's generation call (its first effect) was requested."""
    wanted = {e.effect_id for e in out.agent_requests() if e.agent_type in GENERATION}
    now, starts = 0.0, []
    for _, e in out.events:
        if isinstance(getattr(e, "elapsed_s", None), float):
            now = max(now, e.elapsed_s)
        if isinstance(e, AgentCallRequested) and e.effect_id in wanted:
            starts.append(now)
    return starts


def search_end(out: SimRun) -> float:
    """The search's hard end: its guard timer (the finalize-now point) of the last epoch."""
    return max(t.at_elapsed_s for t in out.of(TimerRequested) if t.effect_id.startswith("evolve/deadline/search"))


def test_time_mode_keeps_stepping_until_the_window_says_stop_and_more_time_gives_more_nodes():
    nodes = []
    for limit in (300, 600, 1200):
        out = run(time_config(limit))
        end = search_end(out)
        generation = [(scope, asked, ended) for scope, asked, ended in effects(out)
                      if scope == "evolve" and asked <= end]
        assert all(ended <= end + 1e-6 for _, _, ended in generation), limit
        starts = [e for e in out.agent_requests() if e.agent_type in GENERATION]
        assert starts
        # the search ran until close to its soft end (a grace before its end, handlers.timebudget):
        # its last step started within two steps of it, and none after it
        soft = end - min(MAX_GRACE_S, GRACE_FRACTION * end)
        step_starts = [asked for scope, asked, _ in effects(out, only_step_starts=False) if scope == "evolve"]
        assert soft - 2 * (3 * 2.0 + 2 * 6.0) <= max(step_starts), (limit, max(step_starts), soft)
        assert all(asked < soft for asked in generation_starts(out)), limit
        nodes.append(len(out.of(NodeAppended)))
    assert nodes == sorted(nodes) and nodes[-1] > nodes[0], nodes
    assert nodes[-1] < time_config(1200).max_steps   # the upper bound did not end it


def test_the_fixed_mode_stops_at_max_steps_whatever_the_limit():
    counts = []
    for limit in (1200, 2400):
        config = PipelineConfig(time_limit_seconds=limit, max_steps=12, **SEARCH)
        counts.append(len(run(config).of(NodeAppended)))
    assert counts == [12, 12]
    assert len(run(time_config(1200)).of(NodeAppended)) > 12
