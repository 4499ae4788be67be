"""A Phase 1 that overruns its window stops at its first usable solution (issue 16; REQ-OR-024/025/026).

The pipeline lets a Phase 1 that has nothing evaluated yet run past its window, up to the
finalize-now point: nothing can replace it. That extension is there to get *one* usable
solution. Before the fix Phase 1 then went on drafting and merging with full evaluation
timeouts while Phase 2 and Phase 3 waited: under load, at ``--time-limit 120``, it held 50 of
the run's 108 search seconds and Phase 3 was left too little for one ensemble round. Now, past
its soft end, Phase 1 cuts the drafts still running once one candidate has a score, starts no
merge, runs its safety checks, and hands on.

The real handlers run on the in-memory simulator's timed completion policy.
"""

from __future__ import annotations

from typing import Any

from events.core import AgentCallRequested, EffectCancelled, EvaluationRequested, PhaseCompleted
from events.domain import FinalResult, PipelineConfig
from events.phase1 import CandidateEvaluated, SafetyCheckApplied
from events.pipeline import DeadlineHit, PhaseBudgetAllocated, WorkCut
from handlers.mlestar.pipeline import main
from tests.pipeline import scripted_agent as sa
from tests.pipeline.support import simulate_clock

LIMIT = 1000   # Phase 1's window: 100 s (soft end 95 s); the finalize-now point: 900 s


def config(models: int, step_policy: str = "fixed") -> PipelineConfig:
    return PipelineConfig(num_retrieved_models=models, outer_loop_steps=1, inner_loop_steps=1,
                          num_parallel_solutions=2, ensemble_rounds=1, time_limit_seconds=LIMIT,
                          step_policy=step_policy)


def run(models: int, eval_s: dict[str, float], step_policy: str = "fixed"):
    def durations(req: Any) -> float:
        for prefix, s in eval_s.items():
            if req.effect_id.startswith(f"phase1/{prefix}") and req.effect_id.endswith("/eval"):
                return s
        return 1.0

    return simulate_clock(main, agent=sa.answer, evaluate=sa.evaluate, config=config(models, step_policy),
                          durations=durations)


def phase_end(sim, phase: str) -> float:
    return next(e for e in sim.of(PhaseBudgetAllocated) if e.phase == phase).started_at_s


def test_REQ_OR_025_an_extended_phase1_cuts_the_drafts_still_running_at_its_first_score():
    sim = run(3, {"candidate-0": 150.0, "candidate-1": 600.0, "candidate-2": 700.0})   # nothing scored at the window's end (100 s)
    assert [(h.phase, h.action) for h in sim.of(DeadlineHit)][:1] == [("phase1", "extended")]
    cancelled = {e.effect_id for e in sim.of(EffectCancelled)}
    assert {"phase1/candidate-1/eval", "phase1/candidate-2/eval"} <= cancelled
    cut = {c.index: c for c in sim.of(CandidateEvaluated)}
    assert cut[0].score is not None and cut[1].score is None and cut[2].score is None
    assert "cut" in cut[1].error and "cut" in cut[2].error
    (work_cut,) = [c for c in sim.of(WorkCut) if c.unit == "phase1"]
    assert work_cut.where == "candidates 1, 2" and work_cut.steps_done == 1
    assert work_cut.kept_solution_id == cut[0].solution_id
    # The safety checks still ran on s_0 (REQ-P1-030/031), inside Phase 1, which then completed.
    assert [c.check for c in sim.of(SafetyCheckApplied)] == ["data", "leakage"]
    assert any(e.phase == "phase1" and "initial_solution_id" in e.result for e in sim.of(PhaseCompleted))
    # Phase 2 starts right after the first score (~151 s), not after the slowest draft (701 s):
    assert phase_end(sim, "phase2") < 160.0
    result = FinalResult.model_validate(sim.completed.result)
    assert result.phase3 is not None and result.submission_path


def test_REQ_OR_024_no_merge_starts_after_phase1s_soft_end():
    """The first merge's evaluation ends between the soft end (95 s) and the guard (100 s): the
    second merge is not started; s_0 goes to the safety checks as it is."""
    sim = run(3, {"merge-": 90.0})
    mergers = [r for r in sim.of(AgentCallRequested) if r.agent_type == "merger"]
    assert len(mergers) == 1
    (work_cut,) = [c for c in sim.of(WorkCut) if c.unit == "phase1"]
    assert work_cut.where == "merge 2 of 2" and work_cut.steps_done == 1 and 95.0 <= work_cut.at_s < 100.0


def test_REQ_P1_025_before_the_soft_end_every_draft_and_merge_runs():
    sim = run(3, {"candidate-0": 5.0, "candidate-1": 30.0, "candidate-2": 60.0})       # all within the window
    assert not [c for c in sim.of(WorkCut) if c.unit == "phase1"]
    assert all(c.score is not None for c in sim.of(CandidateEvaluated))
    assert [r for r in sim.of(AgentCallRequested) if r.agent_type == "merger"]


def test_issue27_a_phase1_cut_in_its_checks_hands_on_its_best_without_running_them_again():
    """Issue 27 ("Short runs cripple Phase 1"): Phase 1 is cut by its deadline (100 s) while its
    data check runs (A_data, 500 s): its best goes to Phase 2 as it is, at once. The checks
    are not run again after the cut, eating Phase 2's and Phase 3's time."""
    from events.pipeline import FallbackUsed

    def durations(req: Any) -> float:   # the A_data call takes 500 s (the data check)
        return 500.0 if req.effect_id.startswith("phase1/data-check") else 1.0

    sim = simulate_clock(main, agent=sa.answer, evaluate=sa.evaluate, config=config(3), durations=durations)
    assert [(h.phase, h.action) for h in sim.of(DeadlineHit)][:1] == [("phase1", "cancelled")]
    assert len([r for r in sim.of(AgentCallRequested) if r.agent_type == "data"]) == 1
    assert phase_end(sim, "phase2") == next(e for e in sim.of(PhaseBudgetAllocated) if e.phase == "phase1").deadline_s
    (fallback,) = [f for f in sim.of(FallbackUsed) if f.phase == "phase1"]
    assert "handed on as it is" in fallback.reason
    assert FinalResult.model_validate(sim.completed.result).submission_path


def test_issue27_phase1_candidates_may_use_the_extension_not_a_30s_floor():
    """A candidate whose run takes 200 s, past Phase 1's window (100 s) and the old 30 s floor:
    while no candidate has a score its timeout reaches the finalize-now point, so it scores."""
    sim = run(1, {"candidate-0": 200.0})
    (req,) = [r for r in sim.of(EvaluationRequested) if r.effect_id == "phase1/candidate-0/eval"]
    assert req.timeout_s > 200.0
    assert [c.score is not None for c in sim.of(CandidateEvaluated)] == [True]


def test_a_candidate_no_merge_reached_is_where_phase2s_second_path_starts():
    """The second merge is cut (as above): the third candidate never joined s_0. Path 0 refines
    s_0; path 1 refines that candidate, so Phase 3 still has two different models to blend
    (movie-genre at 120 s: both paths refined the linear model the forest never merged into)."""
    from events.core import Note, SolutionRecorded
    from events.phase1 import CandidatesRanked

    sim = run(3, {"merge-": 90.0})
    (ranked,) = sim.of(CandidatesRanked)
    candidates = {c.index: c.solution_id for c in sim.of(CandidateEvaluated)}
    unmerged = candidates[ranked.order[2]]
    (note,) = [n for n in sim.of(Note) if n.message.startswith("path-1 starts from")]
    assert note.data["solution_id"] == unmerged
    first_parent = {scope: e.parents[0] for scope, e in reversed(sim.events)
                    if isinstance(e, SolutionRecorded) and e.origin == "ablation"}
    s0 = FinalResult.model_validate(sim.completed.result).phase1.initial_solution.solution_id
    assert first_parent["phase2/path-0"] == s0 != unmerged
    assert first_parent["phase2/path-1"] == unmerged


def test_a_phase1_cut_by_its_deadline_while_drafting_still_gives_path_1_its_own_start():
    """REQ-OR-013/026: two drafts scored, the third still running when Phase 1's window ends
    (100 s): Phase 1 is cut and hands on its best as it is, and path 1 starts from the other
    scored draft, as when Phase 1 ends with merges left (bike-sharing at 600 s: both paths refined
    one booster and the other draft, which the 120 s run took to its best test score, never ran)."""
    from events.core import Note, SolutionRecorded
    from events.pipeline import FallbackUsed

    sim = run(3, {"candidate-0": 5.0, "candidate-1": 10.0, "candidate-2": 500.0}, step_policy="time")
    assert [(h.phase, h.action) for h in sim.of(DeadlineHit)][:1] == [("phase1", "cancelled")]
    (fallback,) = [f for f in sim.of(FallbackUsed) if f.phase == "phase1"]
    scored = {c.solution_id for c in sim.of(CandidateEvaluated) if c.score is not None}
    assert len(scored) == 2 and fallback.solution_id in scored
    (other,) = scored - {fallback.solution_id}
    (note,) = [n for n in sim.of(Note) if n.message.startswith("path-1 starts from")]
    assert note.data["solution_id"] == other
    first_parent = {scope: e.parents[0] for scope, e in reversed(sim.events)
                    if isinstance(e, SolutionRecorded) and e.origin == "ablation"}
    assert first_parent == {"phase2/path-0": fallback.solution_id, "phase2/path-1": other}
    assert FinalResult.model_validate(sim.completed.result).submission_path


def test_with_every_merge_run_both_paths_start_from_s0():
    from events.core import Note, SolutionRecorded

    sim = run(3, {"candidate-0": 5.0, "candidate-1": 30.0, "candidate-2": 60.0})
    assert not [n for n in sim.of(Note) if n.message.startswith("path-1 starts from")]
    starts = {e.parents[0] for _, e in sim.events if isinstance(e, SolutionRecorded) and e.origin == "ablation"
              and e.detail.get("outer_step") == 0}
    assert len(starts) == 1
