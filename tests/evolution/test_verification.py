"""The plan's verification table (§16), one test (or a few) per line, on simulated runs."""

from __future__ import annotations

from engine.config.presets import build_config
from events.core import EvaluationRequested, Note, SolutionRecorded
from events.domain import PipelineConfig
from events.evolution import (
    DebugAttempted,
    EpochCompleted,
    GenePlanChosen,
    NodeAppended,
    OperatorDrawn,
    PhaseOneEnded,
    PrimaryParentChosen,
    ProfilesEvolved,
    TargetLocusChosen,
    TournamentHeld,
)
from handlers.evolution.genes import LOCI
from handlers.evolution.profiles import seed_profiles
from tests.evolution.helpers import journal_of, run_world
from tests.evolution.scripted import BUG, STUB_LOCI, World, score_of


def nodes(run) -> list[NodeAppended]:
    return run.of(NodeAppended)


# --- dead node field -----------------------------------------------------------------------


def test_dead_node_field_unfixable_and_codeless_steps_append_dead_nodes():
    world = World(draft_outcome=lambda s: {1: {"bugs": 3}, 2: {"nocode": True}}.get(s, {}))
    run, _ = run_world(world, max_steps=12, phase1_target_nodes=3, steps_per_epoch=4)
    by_id = {n.node_id: n for n in nodes(run)}
    unfixable, codeless = by_id["node-1"], by_id["node-2"]
    assert unfixable.dead and unfixable.debug_attempts == 2 and not unfixable.valid and unfixable.score is None
    assert codeless.dead and codeless.debug_attempts == 0 and codeless.solution_id is None
    assert "gave no code" in codeless.failure
    dead_ids = {"node-1", "node-2"}
    assert {n.node_id for n in nodes(run) if n.dead} == dead_ids
    assert len(nodes(run)) == 12                                           # dead nodes count against the budget
    # Dead nodes take part in no selection and stay out of the draft history.
    tournaments, plans, drafts = run.of(TournamentHeld), run.of(GenePlanChosen), world.of("draft")
    assert tournaments and plans and drafts
    for t in tournaments:
        assert dead_ids.isdisjoint(t.entrants)
    for g in plans:
        assert dead_ids.isdisjoint(g.sources)
    histories = [h["step"] for req in drafts for h in req.variables["draft_history"]]
    assert histories and not {1, 2} & set(histories)
    assert journal_of(run).dead_count() == 2


# --- debug chain passes code and error along -----------------------------------------------


def test_debug_chain_passes_the_previous_attempts_code_and_error():
    world = World(draft_outcome=lambda s: {0: {"bugs": 2}}.get(s, {}))
    run, _ = run_world(world, max_steps=3, phase1_target_nodes=3, steps_per_epoch=3)
    debug = [r for r in world.of("evo_debug") if "step-0/" in r.effect_id]
    assert [r.variables["attempt"] for r in debug] == [1, 2]
    original = [r for r in world.of("draft") if "step-0/" in r.effect_id]
    first, second = debug
    assert first.variables["code"].count(BUG) == 2
    assert "(2 bug lines left)" in first.variables["error"]
    # attempt 2 gets attempt 1's code (one bug fixed) and attempt 1's error, not the original's
    attempts = [e for e in run.of(DebugAttempted) if e.step == 0]
    contents = {e.solution_id: e.content for e in run.of(SolutionRecorded)}
    assert second.variables["code"] == contents[attempts[0].output_solution_id]
    assert second.variables["code"].count(BUG) == 1
    assert "(1 bug lines left)" in second.variables["error"]
    assert attempts[1].input_solution_id == attempts[0].output_solution_id
    assert "Preserve structure" in second.prompt and "Minimal change" in second.prompt
    node = next(n for n in nodes(run) if n.step == 0)
    assert not node.dead and node.debug_attempts == 2 and node.solution_id == attempts[1].output_solution_id
    # intermediates are solutions with lineage, never nodes
    assert len(nodes(run)) == 3
    lineage = {e.solution_id: e for e in run.of(SolutionRecorded)}
    assert lineage[node.solution_id].parents == [attempts[0].output_solution_id]
    assert lineage[attempts[0].output_solution_id].origin == "evo_debug"
    assert original


def test_invalid_genes_are_debugged_without_being_run():
    broken = tuple(lc for lc in LOCI if lc != "LOSS")
    world = World(draft_outcome=lambda s: {0: {"markers": broken}}.get(s, {}))
    run, _ = run_world(world, max_steps=3, phase1_target_nodes=3, steps_per_epoch=3)
    debug = next(r for r in world.of("evo_debug") if "step-0/" in r.effect_id)
    assert "missing section markers: # [SECTION: LOSS]" in debug.variables["error"]
    evals = [e for e in run.of(EvaluationRequested) if "step-0/" in e.effect_id]
    assert [e.effect_id for e in evals] == ["evolve/step-0/eval-1"]       # the broken version never ran
    assert next(n for n in nodes(run) if n.step == 0).genes_valid


def test_no_debug_attempt_when_max_chained_debug_is_zero():
    world = World(draft_outcome=lambda s: {0: {"bugs": 1}}.get(s, {}))
    run, _ = run_world(world, max_steps=3, phase1_target_nodes=3, steps_per_epoch=3, max_chained_debug=0)
    assert not world.of("evo_debug")
    assert next(n for n in nodes(run) if n.step == 0).dead


# --- select_non_stub_gene --------------------------------------------------------------------


def test_mutation_targets_are_never_stubs():
    run, world = run_world(max_steps=30, phase1_target_nodes=3, steps_per_epoch=3, merge_ratio=0.0)
    targets = run.of(TargetLocusChosen)
    assert len(targets) == 27
    for t in targets:
        assert t.locus not in STUB_LOCI and not t.all_stubs
        assert t.locus in t.candidates and set(t.candidates).isdisjoint(STUB_LOCI)
    mutate_requests = world.of("mutate")
    assert len(mutate_requests) == len(targets)
    for req in mutate_requests:
        assert req.variables["target_locus"] not in STUB_LOCI


# --- pheromone degeneration check and primary parent (in a run) -----------------------------


def test_merges_in_a_run_mix_sources_and_name_the_primary_parent():
    run, world = run_world(max_steps=24, phase1_target_nodes=3, steps_per_epoch=3, merge_ratio=1.0)
    plans = run.of(GenePlanChosen)
    primaries = {p.step: p for p in run.of(PrimaryParentChosen)}
    assert plans and len(plans) == len(primaries)
    assert any(p.degenerate for p in plans)
    for p in plans:
        real = {e["source"] for e in p.plan.values() if not e["stub"]}
        assert len(real) >= 2                            # the degeneration check keeps two parents
        assert set(p.plan) == set(LOCI)
    merge_requests = world.of("merge")
    assert len(merge_requests) == len(plans)
    for req in merge_requests:
        step = int(req.effect_id.split("step-")[1].split("/")[0])
        assert req.variables["primary_parent"] == primaries[step].primary
        assert set(req.variables["gene_plan"]) == set(LOCI)


# --- merge parent record ---------------------------------------------------------------------


def test_merge_nodes_record_parent_id_and_all_seven_gene_sources():
    run, _ = run_world(max_steps=24, phase1_target_nodes=3, steps_per_epoch=3, merge_ratio=1.0)
    primaries = {p.step: p.primary for p in run.of(PrimaryParentChosen)}
    plans = {p.step: p.plan for p in run.of(GenePlanChosen)}
    merges = [n for n in nodes(run) if n.operator == "merge"]
    assert merges
    earlier = {}
    for n in nodes(run):
        if n.operator == "merge":
            assert n.primary_parent == primaries[n.step] == n.parents[0]
            assert set(n.gene_sources) == set(LOCI)
            assert n.gene_sources == {lc: plans[n.step][lc]["source"] for lc in LOCI}
            assert set(n.gene_sources.values()) == set(n.parents)
            assert all(src in earlier for src in n.parents)
        earlier[n.node_id] = n
    # lineage: the merge's first version names its parents' solutions, primary first
    firsts = {e.detail["step"]: e for e in run.of(SolutionRecorded) if e.origin == "merge"}
    assert sorted(firsts) == [n.step for n in merges]
    for n in merges:
        assert firsts[n.step].parents == [earlier[p].solution_id for p in n.parents]


def test_mutation_nodes_record_the_tournament_winner_as_parent():
    run, _ = run_world(max_steps=15, phase1_target_nodes=3, steps_per_epoch=3, merge_ratio=0.0)
    winners = {t.step: t.winner for t in run.of(TournamentHeld)}
    targets = {t.step: t.locus for t in run.of(TargetLocusChosen)}
    mutations = [n for n in nodes(run) if n.operator == "mutate"]
    assert len(mutations) == 12                     # every step after the three drafts (merge_ratio 0)
    for n in mutations:
        assert n.parents == [winners[n.step]] and n.primary_parent == winners[n.step]
        assert n.gene_sources[targets[n.step]] == n.node_id
        assert {v for k, v in n.gene_sources.items() if k != targets[n.step]} == {winners[n.step]}


# --- review emits approach_tag ---------------------------------------------------------------


def test_review_emits_approach_tag_which_feeds_the_draft_history():
    run, world = run_world(max_steps=6, phase1_target_nodes=6, steps_per_epoch=3, workers=1)
    review = world.of("review")[0]
    assert review.output_schema["required"] == ["approach_tag", "summary", "is_buggy"]
    assert "approach_tag" in review.prompt
    tags = {n.step: n.approach_tag for n in nodes(run)}
    assert tags[0] == "approach draft0"
    later = [r for r in world.of("draft") if "step-3/" in r.effect_id][0]
    history = later.variables["draft_history"]
    assert [h["step"] for h in history] == [0, 1, 2]
    assert history[0] == {"step": 0, "approach_tag": "approach draft0",
                          "metric": next(n.score for n in nodes(run) if n.step == 0)}
    assert "Approaches already tried — DO NOT REPEAT" in later.prompt
    assert f"- [Step 0] approach draft0 → metric={history[0]['metric']}" in later.prompt
    assert "MUST use a meaningfully different approach" in later.prompt
    first = [r for r in world.of("draft") if "step-0/" in r.effect_id][0]
    assert first.variables["draft_history"] == [] and "DO NOT REPEAT" not in first.prompt


def test_a_failed_review_keeps_the_node_valid_without_a_tag():
    run, _ = run_world(World(fail_roles=("review",)), max_steps=4, phase1_target_nodes=4, steps_per_epoch=4)
    assert len(nodes(run)) == 4
    assert all(n.valid and n.approach_tag is None for n in nodes(run))


def test_a_review_flagging_a_node_buggy_keeps_it_out_of_the_valid_pool():
    world = World(buggy_review=lambda s: s == 0, draft_outcome=lambda s: {0: {"weights": {"DATA": 9.0}}}.get(s, {}))
    run, _ = run_world(world, max_steps=12, phase1_target_nodes=3, steps_per_epoch=3)
    node0 = next(n for n in nodes(run) if n.step == 0)
    assert node0.is_buggy and not node0.valid and not node0.dead and node0.score == 9.0   # score is the harness's
    tournaments, plans = run.of(TournamentHeld), run.of(GenePlanChosen)
    assert tournaments and plans
    assert all("node-0" not in t.entrants for t in tournaments)
    assert all("node-0" not in g.sources for g in plans)
    assert run.completed.result["best_node"]["node"] != "node-0"


# --- config fields load ----------------------------------------------------------------------


def test_config_fields_are_readable_and_settable():
    cfg = PipelineConfig()
    assert cfg.phase1_target_nodes >= 1 and cfg.max_chained_debug == 2 and cfg.steps_per_epoch == 10
    assert (cfg.agent_profiles, cfg.profile_evolution_every, cfg.merge_ratio) == (4, 3, 0.5)
    built = build_config(overrides=["phase1_target_nodes=8", "max_steps=100", "steps_per_epoch=5",
                                    "tournament_size=3", "max_chained_debug=1"])
    assert (built.phase1_target_nodes, built.max_steps, built.steps_per_epoch) == (8, 100, 5)
    run, _ = run_world(max_steps=10, phase1_target_nodes=5, steps_per_epoch=2)
    assert run.of(PhaseOneEnded)[0].target == 5


# --- Phase 1 end log -------------------------------------------------------------------------


def test_phase1_end_log_line():
    world = World(draft_outcome=lambda s: {1: {"bugs": 3}}.get(s, {}))
    run, _ = run_world(world, max_steps=20, phase1_target_nodes=4, steps_per_epoch=3)
    end = run.of(PhaseOneEnded)[0]
    assert (end.nodes, end.valid_pool, end.reason) == (6, 5, "target_reached")
    assert end.log_line == "Phase 1 done: journal=6, valid_pool=5 (≥4)"
    note = next(n for n in run.of(Note) if n.message.startswith("Phase 1 done"))
    assert note.message == end.log_line
    assert note.data["original"] == "Phase 1 完成: journal=6, valid_pool=5 (≥4)"
    assert [n.message for n in run.of(Note) if n.message.startswith("Phase 1 |")] == [
        "Phase 1 | epoch=1 nodes=3 valid=2 dead=1", "Phase 1 | epoch=2 nodes=6 valid=5 dead=1"]


# --- budget and death rate -------------------------------------------------------------------


def test_budget_is_shared_and_never_exceeded():
    world = World(draft_outcome=lambda s: {"bugs": 3} if s % 3 == 0 else {})
    run, _ = run_world(world, max_steps=17, phase1_target_nodes=4, steps_per_epoch=5)
    assert len(nodes(run)) == 17
    assert [n.index for n in nodes(run)] == list(range(17))
    epochs = run.of(EpochCompleted)
    assert sum(e.steps for e in epochs) == 17 and epochs[-1].steps == 2     # min(steps_per_epoch, remaining)


def test_death_rate_after_phase1_is_recorded():
    world = World(draft_outcome=lambda s: {"bugs": 3} if s in (0, 4) else {})
    run, _ = run_world(world, max_steps=20, phase1_target_nodes=8, steps_per_epoch=5)
    end = run.of(PhaseOneEnded)[0]
    assert end.dead == 2 and end.valid_pool == 8
    assert end.dead_rate == 2 / 10
    assert run.completed.result["phase1"]["dead_rate"] == 0.2


# --- agent evolution every 3 global epochs ---------------------------------------------------


def test_agent_evolution_every_three_global_epochs_across_both_phases():
    run, world = run_world(max_steps=20, phase1_target_nodes=8, steps_per_epoch=2, agent_profiles=4)
    epochs = run.of(EpochCompleted)
    assert [e.phase for e in epochs[:4]] == ["draft"] * 4 and epochs[4].phase == "evolve"
    assert [e.global_epoch for e in epochs] == list(range(1, 11))
    evolved = run.of(ProfilesEvolved)
    assert [e.global_epoch for e in evolved] == [3, 6, 9]          # 3 in Phase 1, 6 and 9 in Phase 2
    assert len(world.of("profile_evolver")) == 3 * 2             # all but the two elites
    for e in evolved:
        assert len(e.elites) == 2 and len(e.rewrites) == 2
    # the rewritten texts are used from the next step on
    first = evolved[0]
    rewritten = {int(i): r["after"] for i, r in first.rewrites.items()}
    after_epoch3 = [r for r in world.calls if r.agent_type in ("draft", "merge", "mutate")
                    and int(r.effect_id.split("step-")[1].split("/")[0]) >= 6]
    used = {r.variables["profile"] for r in after_epoch3}
    assert set(rewritten.values()) & used
    before = [r for r in world.calls if r.agent_type == "draft" and "step-0/" in r.effect_id][0]
    assert before.variables["profile"] == seed_profiles(4)[0]
    # the decision sequence: the epoch's end, then the rewrite, then the next step
    seq = [type(e).__name__ for _, e in run.events if isinstance(e, (EpochCompleted, ProfilesEvolved, OperatorDrawn))]
    i = seq.index("ProfilesEvolved")
    assert seq[i - 1] == "EpochCompleted" and seq[i + 1] == "OperatorDrawn"


def test_score_is_the_harness_score():
    """Every node is reviewed and the review claims another metric; the node keeps the harness's."""
    run, _ = run_world(World(review_metric=123.0), max_steps=4, phase1_target_nodes=4, steps_per_epoch=4)
    contents = {e.solution_id: e.content for e in run.of(SolutionRecorded)}
    assert len(nodes(run)) == 4 and len(run.agent_requests("review")) == 4
    for n in nodes(run):
        assert n.score == score_of(contents[n.solution_id]) != 123.0


def test_a_merge_that_would_repeat_known_genes_becomes_a_mutation():
    run, _ = run_world(max_steps=24, phase1_target_nodes=3, steps_per_epoch=4, workers=2, merge_ratio=1.0)
    plans = run.of(GenePlanChosen)
    assert plans
    signatures = [tuple(p.plan[lc]["gene_id"] for lc in LOCI) for p in plans]
    assert len(signatures) == len(set(signatures))               # no merge plan was used twice
    switched = [e for e in run.of(OperatorDrawn) if "repeats the genes" in e.reason]
    assert switched and all(e.operator == "mutate" and e.draw < 1.0 for e in switched)
    # and no plan equals the genes of a node that existed when it was made
    seen: set[tuple[str, ...]] = set()
    for _, e in run.events:
        if isinstance(e, NodeAppended) and e.gene_ids:
            seen.add(tuple(e.gene_ids[lc] for lc in LOCI))
        if isinstance(e, GenePlanChosen):
            assert tuple(e.plan[lc]["gene_id"] for lc in LOCI) not in seen
