"""Properties of the search for any pattern of failures, and replay determinism.

* the journal never exceeds ``max_steps`` (every step appends exactly one node, dead or alive);
* Phase 1 → Phase 2 happens only at an epoch end, and only once the target is met or the
  budget is spent (no time limit here);
* with fewer than 2 valid nodes Phase 2 ends at once;
* any completion order gives a valid journal; the same order gives identical decisions, and
  feeding the recorded inputs to a fresh runtime re-derives exactly the recorded decisions.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from events.core import RunCompleted, RunFailed
from events.evolution import EpochCompleted, EvolutionStopped, NodeAppended, OperatorDrawn, PhaseOneEnded
from handlers.evolution import main
from handlers.evolution.genes import LOCI
from handlers.runtime import run_sync
from tests.evolution.helpers import journal_of, run_world
from tests.evolution.scripted import LOCI as _L
from tests.evolution.scripted import World

OUTCOMES = {
    "ok": {}, "bug1": {"bugs": 1}, "bug2": {"bugs": 2}, "dead": {"bugs": 3}, "nocode": {"nocode": True},
    "noscore": {"no_score": True}, "markers": {"markers": tuple(x for x in _L if x != "MODEL")},
}

worlds = st.builds(
    lambda pattern, merge_bugs, mutate_bugs, buggy: World(
        draft_outcome=lambda s: OUTCOMES[pattern[s % len(pattern)]],
        merge_bugs=merge_bugs, mutate_bugs=mutate_bugs, buggy_review=lambda s: s in buggy),
    st.lists(st.sampled_from(sorted(OUTCOMES)), min_size=1, max_size=12),
    st.integers(0, 3), st.integers(0, 3), st.frozensets(st.integers(0, 30), max_size=4))
configs = st.fixed_dictionaries({
    "max_steps": st.integers(1, 22), "phase1_target_nodes": st.integers(1, 6), "steps_per_epoch": st.integers(1, 5),
    "workers": st.integers(1, 3), "max_chained_debug": st.integers(0, 2), "merge_ratio": st.sampled_from([0.0, 0.5, 1.0]),
    "tournament_size": st.integers(1, 3), "agent_profiles": st.integers(1, 4), "profile_evolution_every": st.integers(1, 3),
})
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check_journal(run, cfg) -> None:
    nodes = run.of(NodeAppended)
    assert len(nodes) <= cfg["max_steps"]
    assert [n.index for n in nodes] == list(range(len(nodes)))
    assert len({n.node_id for n in nodes}) == len(nodes)
    seen: set[str] = set()
    for n in nodes:
        assert set(n.gene_sources) == set(LOCI)
        assert all(p in seen for p in n.parents)                  # parents were appended before
        assert not (n.dead and n.valid)
        if n.valid:
            assert n.score is not None and n.genes_valid and not n.is_buggy
        if n.dead:
            assert n.score is None
        assert n.debug_attempts <= cfg["max_chained_debug"]
        seen.add(n.node_id)
    journal = journal_of(run)                                     # the projection agrees
    assert [x.id for x in journal.nodes] == [n.node_id for n in nodes]


@FAST
@given(worlds, configs)
def test_node_count_never_exceeds_max_steps_for_any_failure_pattern(world, cfg):
    run, _ = run_world(world, **cfg)
    check_journal(run, cfg)
    nodes = run.of(NodeAppended)
    assert len(nodes) == len(run.of(OperatorDrawn))               # one node per started step
    if run.completed is None:
        assert run.failed is not None and "no node with a score" in run.failed.error
        assert all(n.dead or n.score is None for n in nodes)
    else:
        assert len(nodes) == cfg["max_steps"] or run.of(EvolutionStopped)[0].reason == "valid_pool_too_small"


@FAST
@given(worlds, configs)
def test_phase_switch_only_at_an_epoch_end(world, cfg):
    run, _ = run_world(world, **cfg)
    decisions = [e for _, e in run.events]
    end_at = next(i for i, e in enumerate(decisions) if isinstance(e, PhaseOneEnded))
    end = decisions[end_at]
    draft_epochs = [e for e in run.of(EpochCompleted) if e.phase == "draft"]
    # the last thing Phase 1 did before ending was to finish an epoch (profile rewrites aside)
    last_epoch_at = max(i for i, e in enumerate(decisions[:end_at]) if isinstance(e, EpochCompleted))
    assert decisions[last_epoch_at].phase == "draft"
    assert not any(isinstance(e, (OperatorDrawn, NodeAppended)) for e in decisions[last_epoch_at:end_at])
    # no evolve step before the switch; every draft step inside Phase 1
    for i, e in enumerate(decisions):
        if isinstance(e, OperatorDrawn):
            assert (e.phase == "draft") == (i < end_at)
    # epochs were full (min(steps_per_epoch, remaining)); earlier epochs ended below the target
    used = 0
    for k, ep in enumerate(draft_epochs):
        assert ep.steps == min(cfg["steps_per_epoch"], cfg["max_steps"] - used)
        used += ep.steps
        assert ep.nodes == used                                   # the whole epoch had finished
        if k < len(draft_epochs) - 1:
            assert ep.valid < cfg["phase1_target_nodes"]
    assert end.nodes == used
    assert (end.reason == "target_reached") == (end.valid_pool >= cfg["phase1_target_nodes"])
    if end.reason == "budget_exhausted":
        assert used == cfg["max_steps"]


@FAST
@given(worlds, configs)
def test_phase2_ends_at_once_with_fewer_than_two_valid_nodes(world, cfg):
    run, _ = run_world(world, **cfg)
    end = run.of(PhaseOneEnded)[0]
    evolve_steps = [e for e in run.of(OperatorDrawn) if e.phase == "evolve"]
    stopped = run.of(EvolutionStopped)
    if not stopped:                                               # only when the run failed before
        assert run.failed is not None
        return
    if end.valid_pool < 2 and end.nodes < cfg["max_steps"]:
        assert stopped[0].reason == "valid_pool_too_small"
        assert evolve_steps == [] and stopped[0].phase2_epochs == 0
    if end.valid_pool >= 2 and end.nodes < cfg["max_steps"]:
        assert evolve_steps and stopped[0].reason == "budget_exhausted"


def decisions_of(run):
    return run.decisions()


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), worlds)
def test_any_completion_order_gives_a_valid_journal_and_the_same_order_the_same_decisions(order_seed, world):
    cfg = dict(max_steps=14, phase1_target_nodes=3, steps_per_epoch=4, workers=3)
    run1, _ = run_world(world, order_seed=order_seed, **cfg)
    check_journal(run1, {**cfg, "max_chained_debug": 2})
    run2, _ = run_world(world, order_seed=order_seed, **cfg)
    assert decisions_of(run1) == decisions_of(run2)
    # replay: the recorded inputs fed to a fresh runtime re-derive the recorded decisions
    inputs = [e for scope, e in run1.events if scope in ("run", "input") and e.kind == "input"]
    replayed = run_sync(main, inputs)
    assert [(d.event.type_name, d.event.payload(), d.scope) for d in replayed] == \
        [(e.type_name, e.payload(), scope) for scope, e in run1.events if e.kind in ("decision", "remark")]


def test_different_orders_give_different_but_valid_interleavings():
    cfg = dict(max_steps=16, phase1_target_nodes=3, steps_per_epoch=4, workers=3)
    orders = set()
    for order_seed in range(6):
        run, _ = run_world(order_seed=order_seed, **cfg)
        check_journal(run, {**cfg, "max_chained_debug": 2})
        assert isinstance(run.events[-1][1], (RunCompleted, RunFailed)) or run.completed is not None
        orders.add(tuple(n.node_id for n in run.of(NodeAppended)))
    assert len(orders) > 1                                        # completion order really varied
