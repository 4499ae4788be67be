"""Hypothesis properties of Phase 1 (issue: MLE-STAR Phase 1, "Must show")."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from events.core import EvaluationRequested
from events.domain import Phase1Result, PipelineConfig
from handlers.mlestar.phase1 import phase1_only
from tests.phase1.scripted import Phase1Agent, evaluate_script
from tests.support.sim import make_task, simulate

scores = st.one_of(st.none(), st.sampled_from([0.1, 0.2, 0.5, 0.7, 0.8, 0.9]))


def reference_algorithm1(cands: list[float | None], merges: list[float | None], maximize: bool):
    """A direct transcription of Algorithm 1 (REQ-P1-023..029), scores only."""
    order = sorted([i for i, s in enumerate(cands) if s is not None],
                   key=lambda i: -cands[i] if maximize else cands[i])  # type: ignore[operator]
    if not order:
        return None, 0
    h_best = cands[order[0]]
    attempted = 0
    for _ in order[1:]:
        merged = merges[attempted] if attempted < len(merges) else None
        attempted += 1
        if merged is not None and (merged >= h_best if maximize else merged <= h_best):  # type: ignore[operator]
            h_best = merged
        else:
            break
    return h_best, attempted


def run(cands, merges, maximize, order_seed=None):
    agent = Phase1Agent(list(cands), list(merges))
    config = PipelineConfig(num_retrieved_models=len(cands), max_debug_attempts=1)
    sim = simulate(phase1_only, agent=agent, evaluate=evaluate_script, config=config,
                   task=make_task("maximize" if maximize else "minimize"), order_seed=order_seed)
    return sim, agent


@settings(max_examples=60, deadline=None)
@given(cands=st.lists(scores, min_size=1, max_size=5), merges=st.lists(scores, max_size=5), maximize=st.booleans())
def test_loop_matches_reference_algorithm1(cands, merges, maximize):
    sim, agent = run(cands, merges, maximize)
    expected_best, expected_merges = reference_algorithm1(cands, merges, maximize)
    assert len(sim.agent_requests("merger")) == expected_merges
    if expected_best is None:
        assert sim.failed is not None and "all" in sim.failed.error
    else:
        assert Phase1Result.model_validate(sim.completed.result["phase1"]).initial_score == expected_best


@settings(max_examples=30, deadline=None)
@given(cands=st.lists(scores, min_size=2, max_size=4), merges=st.lists(scores, max_size=3),
       order_seed=st.integers(0, 10_000))
def test_any_completion_order_gives_the_same_phase1_result(cands, merges, order_seed):
    fifo, _ = run(cands, merges, True)
    shuffled, _ = run(cands, merges, True, order_seed=order_seed)
    if fifo.completed is None:
        assert shuffled.failed is not None and shuffled.failed.error == fifo.failed.error
        return
    assert shuffled.completed.result == fifo.completed.result


@settings(max_examples=30, deadline=None)
@given(cands=st.lists(scores, min_size=1, max_size=4), merges=st.lists(scores, max_size=3),
       leaky=st.sets(st.sampled_from(["cand-0", "cand-1", "merge-0"])))
def test_every_evaluated_script_passed_the_leakage_check_first(cands, merges, leaky):
    agent = Phase1Agent(list(cands), list(merges), leaky=set(leaky))
    sim = simulate(phase1_only, agent=agent, evaluate=evaluate_script,
                   config=PipelineConfig(num_retrieved_models=len(cands), max_debug_attempts=1), task=make_task())
    checked = {r.variables["code"] for r in sim.agent_requests("leakage") if r.variant == "detection"}
    for req in sim.of(EvaluationRequested):
        code = sim.solutions[req.solution_id]
        # Either the script itself was checked, or it is the correction of a checked script.
        assert code in checked or "# fixed" in code, code
