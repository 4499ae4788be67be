"""One run, two views that must agree (issue 16, "One projection").

The driver schedules from ``PipelineState`` (the fold the CLI shows: pending effects, spend,
best score) and decides with the handlers' ``Runtime``. Folding every replay fixture event by
event, at every point where the driver hands the runtime an input (and at the end), both must
name the same pending effects, the same spend and number of agent calls, and the same best score
— except that MLE-STAR's run-wide fallback (``handlers.mlestar.bestsofar``) is restarted from the
checked s_0 by Phase 1's safety checks, so it may only be *lower* than the CLI's best-ever, and
only after such a rebase; until then they are equal.
"""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from engine.run.replayer import read_export
from engine.run.strategies import load_strategy
from events.base import event_class
from events.score import Score
from handlers.mlestar.bestsofar import KEY
from handlers.runtime import Runtime
from replay.state import PipelineState
from tests.replays.fixtures import FIXTURES


def runtime_best(rt: Runtime) -> float | None:
    tracker = rt._shared.get(KEY)
    return None if tracker is None or tracker.best is None else tracker.best[0]


def agree(rt: Runtime, state: PipelineState, seq: int, rebased: bool) -> None:
    where = f"before seq {seq}"
    assert set(rt.pending_effect_ids) == set(state.pending), where
    assert math.isclose(rt.cost_usd, state.accumulated_cost_usd, abs_tol=1e-9), where
    assert rt.agent_calls == state.agent_call_count, where
    if state.strategy != "mle-star":
        return
    ours, shown = runtime_best(rt), state.best_score_so_far
    if not rebased:
        assert ours == shown, f"{where}: runtime best {ours}, CLI best {shown}"
    elif ours is not None:   # after a rebase: never better than the best ever evaluated
        assert shown is not None and not Score.of(state.task["metric_direction"]).improves(ours, shown), where


@pytest.mark.parametrize("spec", FIXTURES, ids=[f.name for f in FIXTURES])
def test_runtime_and_pipeline_state_agree_after_every_input(spec) -> None:
    envelopes = read_export(spec.path)
    rt = Runtime(load_strategy(envelopes[0].payload["strategy"]))
    state = PipelineState()
    rebased = checks = 0
    for env in envelopes:
        if event_class(env.type).kind == "input":
            agree(rt, state, env.seq, rebased > 0)
            rt.feed(env.event())
        state.apply(env)
        if env.type == "SafetyCheckApplied" and env.payload.get("check") == "leakage":
            rebased += 1   # Phase 1's last check: handlers.mlestar.phase1 rebases the fallback here
        checks += 1
    assert state.finished and checks == len(envelopes)
    assert not state.pending and rt.finished


@pytest.mark.parametrize("spec", FIXTURES, ids=[f.name for f in FIXTURES])
def test_one_run_context_for_the_handlers_and_the_executors(spec) -> None:
    """The handlers' RunContext (built by the runtime from RunStarted) and the executors' (built
    from the folded state) are the same value."""
    envelopes = read_export(spec.path)
    rt = Runtime(load_strategy(envelopes[0].payload["strategy"]))
    rt.feed(envelopes[0].event())
    state = PipelineState()
    state.apply(envelopes[0])
    assert rt.context is not None
    assert state.context().run_id == spec.run_id and rt.context.run_id == ""  # the log's envelope names it
    assert replace(state.context(), run_id="") == rt.context
    assert state.context() is state.context()  # validated once
