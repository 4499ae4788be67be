"""The loop around the steps: workers in flight, the time limit, direction, the end of the run."""

from __future__ import annotations

from events.core import AgentCallCompleted, AgentCallRequested, EvaluationCompleted, Note, PhaseStarted, SubmissionInfo
from events.evolution import (
    EpochCompleted,
    EvolutionStopped,
    FinalNodeSelected,
    NodeAppended,
    OperatorDrawn,
    PhaseOneEnded,
)
from events.phase3 import FinalizationFellBack, SubmissionProduced
from handlers.evolution import main
from handlers.evolution.search import phase1_log_line
from tests.evolution.helpers import config, journal_of, run_world
from tests.evolution.scripted import World, evaluate
from tests.support.sim import make_task, simulate


def test_workers_steps_are_in_flight_together():
    run, _ = run_world(max_steps=6, phase1_target_nodes=6, steps_per_epoch=6, workers=3)
    seq = [e for _, e in run.events if isinstance(e, (OperatorDrawn, NodeAppended))]
    assert [type(e).__name__ for e in seq[:4]] == ["OperatorDrawn"] * 3 + ["NodeAppended"]
    in_flight = peak = 0
    for e in seq:
        in_flight += 1 if isinstance(e, OperatorDrawn) else -1
        peak = max(peak, in_flight)
    assert peak == 3
    run1, _ = run_world(max_steps=4, phase1_target_nodes=4, steps_per_epoch=4, workers=1)
    seq1 = [type(e).__name__ for _, e in run1.events if isinstance(e, (OperatorDrawn, NodeAppended))]
    assert seq1 == ["OperatorDrawn", "NodeAppended"] * 4


def test_the_time_limit_stops_new_work_and_the_run_finishes_with_the_best_node():
    run, _ = run_world(max_steps=100, phase1_target_nodes=3, steps_per_epoch=4, time_limit_seconds=60)
    deadline = 60 * 0.9                                    # 10 % kept for finalization
    nodes = run.of(NodeAppended)
    assert 0 < len(nodes) < 100
    stopped = run.of(EvolutionStopped)[0]
    assert stopped.reason == "time_limit"
    # no step started after the deadline (a step starts right after the previous input)
    times, now = {}, 0.0
    for scope, e in run.events:
        if scope == "input":
            now = e.elapsed_s
        if isinstance(e, OperatorDrawn):
            times[e.step] = now
    assert max(times.values()) < deadline
    final = run.of(FinalNodeSelected)[0]
    best = journal_of(run).best()
    assert final.node_id == best.id and run.completed is not None
    assert run.completed.best_score == best.score


def test_time_limit_inside_phase1_ends_it_with_reason_time_limit():
    run, _ = run_world(max_steps=100, phase1_target_nodes=50, steps_per_epoch=4, time_limit_seconds=40)
    end = run.of(PhaseOneEnded)[0]
    assert end.reason == "time_limit" and end.valid_pool < 50
    assert any("below the target" in n.message for n in run.of(Note))
    assert run.of(EvolutionStopped)[0].reason == "time_limit"


def test_minimising_tasks_pick_the_lowest_score():
    world = World(mutate_delta=-0.05)
    run, _ = run_world(world, direction="minimize", max_steps=15, phase1_target_nodes=3, steps_per_epoch=3)
    scores = [n.score for n in run.of(NodeAppended) if n.valid]
    final = run.of(FinalNodeSelected)[0]
    assert final.score == min(scores)


def test_too_few_valid_nodes_end_phase2_with_a_warning():
    world = World(draft_outcome=lambda s: {} if s == 0 else {"bugs": 3})
    run, _ = run_world(world, max_steps=12, phase1_target_nodes=3, steps_per_epoch=3)
    end = run.of(PhaseOneEnded)[0]
    assert end.reason == "budget_exhausted" and end.nodes == 12 and end.valid_pool == 1
    world = World(draft_outcome=lambda s: {} if s == 0 else {"bugs": 3})
    run, _ = run_world(world, max_steps=12, phase1_target_nodes=1, steps_per_epoch=3)
    assert run.of(PhaseOneEnded)[0].valid_pool == 1
    stopped = run.of(EvolutionStopped)[0]
    assert stopped.reason == "valid_pool_too_small" and stopped.phase2_epochs == 0
    assert not [e for e in run.of(OperatorDrawn) if e.phase == "evolve"]
    assert any("fewer than 2" in n.message for n in run.of(Note) if n.level == "warning")
    assert run.completed is not None and run.completed.result["best_node"]["node"] == "node-0"


def test_no_scored_node_fails_the_run_with_a_reason():
    run, _ = run_world(World(draft_outcome=lambda s: {"nocode": True}), max_steps=5, phase1_target_nodes=2,
                       steps_per_epoch=5)
    assert run.completed is None and "no node with a score" in run.failed.error


def test_the_result_summarises_the_journal_dead_rate_and_merges():
    world = World(draft_outcome=lambda s: {"bugs": 3} if s == 2 else {})
    run, _ = run_world(world, max_steps=18, phase1_target_nodes=3, steps_per_epoch=3, merge_ratio=0.5)
    result = run.completed.result
    journal = journal_of(run)
    assert result["nodes"] == len(journal) == 18
    assert [row["node"] for row in result["journal"]] == [n.id for n in journal.nodes]
    assert result["dead"] == 1 and result["dead_rate"] == journal.dead_rate()
    merges = [n for n in journal.nodes if n.operator == "merge"]
    assert len(result["merges"]) == len(merges) > 0
    for row in result["merges"]:
        node = journal.get(row["node"])
        assert row["child_score"] == node.score
        assert row["parent_scores"] == {p: journal.get(p).score for p in node.parents}
        assert set(row["gene_sources"]) == set(journal.get(row["node"]).gene_sources)
    assert result["operators"]["draft"]["nodes"] == result["phase1"]["nodes"]
    assert result["final_solution_id"] and result["submission_path"].endswith("final__test__eval/final/submission.csv")
    assert [p.reason for p in run.of(SubmissionProduced)] and not run.of(FinalizationFellBack)  # finalization ran
    assert [p.phase for p in run.of(PhaseStarted)][:2] == ["evolve-phase1", "evolve-phase2"]


def test_every_agent_call_of_the_search_is_in_scope_evolve_with_deterministic_ids():
    run, _ = run_world(max_steps=8, phase1_target_nodes=2, steps_per_epoch=2, agent_profiles=2)
    ids = [e.effect_id for scope, e in run.events if isinstance(e, AgentCallRequested) and scope == "evolve"]
    assert ids and all(i.startswith("evolve/") for i in ids)
    assert len(ids) == len(set(ids))
    assert {i.split("/")[-1] for i in ids} >= {"draft", "review"}


def test_phase1_log_line_marks_targets_missed():
    assert phase1_log_line(12, 5, 8) == ("Phase 1 done: journal=12, valid_pool=5 (<8)",
                                         "Phase 1 完成: journal=12, valid_pool=5 (<8)")


def test_epoch_records_count_the_global_epoch_across_phases():
    run, _ = run_world(max_steps=12, phase1_target_nodes=3, steps_per_epoch=3)
    epochs = run.of(EpochCompleted)
    assert [(e.phase, e.phase_epoch, e.global_epoch) for e in epochs] == [
        ("draft", 1, 1), ("evolve", 1, 2), ("evolve", 2, 3), ("evolve", 3, 4)]


def test_the_cost_cap_stops_new_work():
    world = World()

    def costly(req):
        reply = world(req)
        if isinstance(reply, str):
            return AgentCallCompleted(effect_id=req.effect_id, text=reply, cost_usd=0.5)
        return reply

    from handlers.evolution import main
    from tests.evolution.helpers import config
    from tests.evolution.scripted import evaluate
    from tests.support.sim import simulate

    run = simulate(main, agent=costly, evaluate=evaluate,
                   config=config(max_steps=40, phase1_target_nodes=3, steps_per_epoch=3, max_budget_usd=6.0), timers_last=True)
    stopped = run.of(EvolutionStopped)[0]
    assert stopped.reason == "cost_limit" and stopped.nodes < 40
    assert run.completed is not None


def test_draft_merge_mutate_and_debug_prompts_demand_the_seven_markers():
    from handlers.evolution.prompts import STRUCTURE_RULES

    world = World(draft_outcome=lambda s: {"bugs": 1} if s == 0 else {})
    run, _ = run_world(world, max_steps=14, phase1_target_nodes=3, steps_per_epoch=3)
    for role in ("draft", "merge", "mutate", "evo_debug"):
        requests = world.of(role)
        assert requests, role
        assert all(STRUCTURE_RULES in r.prompt for r in requests), role
    assert run.completed is not None


def test_a_failed_test_script_keeps_the_best_nodes_own_submission():
    """Issue 19 (a 120 s caravan-insurance run ended 'completed' with no submission when its full-data
    test script ran out of time): every valid evolve node left a checked submission, so the
    fallback keeps the final node's own file instead of none (digest 08, open question 3)."""
    def with_node_submissions(req, code):
        result = evaluate(req, code)
        result = result.result if isinstance(result, EvaluationCompleted) else result  # no file of its own
        if not req.effect_id.startswith("evolve/") or result.is_error:
            return result            # the final test script leaves no file: finalization falls back
        path = f"/runs/sim/evals/{req.effect_id.replace('/', '__')}/final/submission.csv"
        return EvaluationCompleted(effect_id=req.effect_id, result=result, submission=SubmissionInfo(
            exists=True, path=path, rows=10, columns=["id", "label"], valid=True))

    world = World()
    run = simulate(main, agent=world, evaluate=with_node_submissions,
                   config=config(max_steps=6, phase1_target_nodes=3, steps_per_epoch=3), task=make_task(), timers_last=True)
    final = run.of(FinalNodeSelected)[0]
    final_step = journal_of(run).get(final.node_id).step
    assert run.of(FinalizationFellBack)
    kept = run.of(SubmissionProduced)
    assert len(kept) == 1 and kept[0].reason.startswith("fallback") and kept[0].valid
    assert kept[0].path == f"/runs/sim/evals/evolve__step-{final_step}__eval/final/submission.csv"
    assert run.completed.submission_path == kept[0].path
