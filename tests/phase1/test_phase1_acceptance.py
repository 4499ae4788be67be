"""Phase 1 acceptance criteria (REQ-P1-018..033) against a scripted agent, in memory."""

from __future__ import annotations

from events.domain import Phase1Result, PipelineConfig
from events.phase1 import CandidatesRanked, MergeDecided, SafetyCheckApplied
from events.score import Score
from handlers.mlestar.phase1 import phase1_only, rank_candidates
from tests.phase1.scripted import Phase1Agent, evaluate_script, fenced, script
from tests.support.sim import make_task, simulate


def run(agent: Phase1Agent, direction: str = "maximize", **cfg):
    config = PipelineConfig(num_retrieved_models=len(agent.candidate_scores), max_debug_attempts=1, **cfg)
    return simulate(phase1_only, agent=agent, evaluate=evaluate_script, config=config, task=make_task(direction))


def result_of(sim) -> Phase1Result:
    assert sim.failed is None, sim.failed
    return Phase1Result.model_validate(sim.completed.result["phase1"])


def merges(sim) -> list[MergeDecided]:
    return sim.of(MergeDecided)


def test_req_p1_025_stops_after_first_non_improving_merge():
    agent = Phase1Agent([0.9, 0.85, 0.8], [0.91, 0.89])
    sim = run(agent)
    res = result_of(sim)
    assert [m.accepted for m in merges(sim)] == [True, False]
    assert res.initial_score == 0.91
    assert "0.91" in res.initial_solution.content


def test_req_p1_026_equal_score_merge_is_accepted_and_loop_continues():
    agent = Phase1Agent([0.85, 0.8, 0.7], [0.85, 0.86])
    sim = run(agent)
    assert [m.accepted for m in merges(sim)] == [True, True]
    assert result_of(sim).initial_score == 0.86


def test_req_p1_027_only_two_merges_when_second_fails():
    agent = Phase1Agent([0.9, 0.8, 0.7, 0.6], [0.95, 0.5, 0.99])
    sim = run(agent)
    assert len(sim.agent_requests("merger")) == 2
    assert result_of(sim).initial_score == 0.95


def test_req_p1_021_m4_with_two_failures_proceeds_with_two():
    agent = Phase1Agent([None, 0.7, None, 0.8], [0.81])
    sim = run(agent)
    res = result_of(sim)
    assert res.candidate_scores == [None, 0.7, None, 0.8]
    assert len(res.candidate_solutions) == len(res.retrieved_models) == 4
    ranked = sim.of(CandidatesRanked)[0]
    assert ranked.order == [3, 1] and ranked.excluded == [0, 2]
    assert len(sim.agent_requests("merger")) == 1
    assert res.initial_score == 0.81


def test_req_p1_022_all_candidates_failed_fails_the_run_with_message():
    sim = run(Phase1Agent([None, None, None, None]))
    assert sim.completed is None
    assert sim.failed.error == ("Phase 1 failed: all 4 candidates produced execution errors: "
                                "every candidate failed with ValueError: broken")  # the common root cause


def test_req_p1_023_ranking_best_first_excluding_none_for_both_directions():
    assert rank_candidates([0.7, 0.9, 0.8, None], Score.of("maximize")) == [1, 2, 0]
    assert rank_candidates([0.7, 0.9, 0.8, None], Score.of("minimize")) == [0, 2, 1]
    sim = run(Phase1Agent([0.3, 0.1, 0.2], [0.05, 0.5]), direction="minimize")
    assert sim.of(CandidatesRanked)[0].order == [1, 2, 0]
    assert result_of(sim).initial_score == 0.05


def test_req_p1_028_merge_that_cannot_execute_breaks_and_keeps_s0():
    agent = Phase1Agent([0.9, 0.8, 0.7], [None, 0.99])
    sim = run(agent)
    res = result_of(sim)
    assert [m.accepted for m in merges(sim)] == [False]
    assert merges(sim)[0].reason == "merged script failed"
    assert res.initial_score == 0.9 and "cand-0" in res.initial_solution.content


def test_merger_without_code_is_a_failed_merge():
    sim = run(Phase1Agent([0.9, 0.8], ["nocode"]))
    assert merges(sim)[0].accepted is False and merges(sim)[0].reason == "merger gave no code"
    assert result_of(sim).initial_score == 0.9


def test_req_p1_029_single_successful_candidate_skips_merging():
    sim = run(Phase1Agent([None, 0.6, None, None]))
    assert sim.agent_requests("merger") == []
    assert result_of(sim).initial_score == 0.6


def test_req_p1_030_data_check_called_once_and_revision_reevaluated():
    agent = Phase1Agent([0.8, 0.7], [0.6], data_reply=lambda code: fenced(script(0.83, "with-extra-data")))
    sim = run(agent)
    data_calls = sim.agent_requests("data")
    assert len(data_calls) == 1 and "cand-0" in data_calls[0].variables["initial solution"]
    res = result_of(sim)
    assert res.initial_score == 0.83 and "with-extra-data" in res.initial_solution.content
    assert sim.of(SafetyCheckApplied)[0].changed is True


def test_req_p1_030_broken_data_revision_falls_back_to_pre_data_solution():
    agent = Phase1Agent([0.8, 0.7], [0.6], data_reply=lambda code: fenced(script(None, "data-broken")))
    sim = run(agent)
    res = result_of(sim)
    assert res.initial_score == 0.8 and "cand-0" in res.initial_solution.content
    check = sim.of(SafetyCheckApplied)[0]
    assert check.check == "data" and check.fell_back is True


def test_req_p1_031_leakage_checked_after_data_check_and_reevaluated():
    agent = Phase1Agent([0.8, 0.7], [0.6], leaky={"cand-0"})
    sim = run(agent)
    # The draft itself was flagged and corrected before its first evaluation.
    res = result_of(sim)
    assert "# fixed" in res.initial_solution.content
    kinds = [c.agent_type for c in agent.calls]
    assert kinds.index("data") < max(i for i, k in enumerate(kinds) if k == "leakage")
    assert [c.check for c in sim.of(SafetyCheckApplied)] == ["data", "leakage"]


def test_req_p1_032_033_result_lists_aligned_and_score_consistent():
    sim = run(Phase1Agent([0.5, 0.9, 0.7], [0.92, 0.95]))
    res = result_of(sim)
    assert len(res.retrieved_models) == len(res.candidate_solutions) == len(res.candidate_scores) == 3
    assert res.initial_score == 0.95 == res.initial_solution.score
    assert f"{res.initial_score}" in res.initial_solution.content


def test_retriever_fewer_than_m_warns_and_empty_entries_dropped():
    from events.core import AgentCallCompleted, Note

    base = Phase1Agent([0.5, 0.6])

    def agent(req):
        if req.agent_type == "retriever":
            return AgentCallCompleted(effect_id=req.effect_id, text="", structured={"models": [
                {"model_name": "model-0", "example_code": "x"}, {"model_name": " ", "example_code": "y"}]})
        return base(req)

    sim = simulate(phase1_only, agent=agent, evaluate=evaluate_script,
                   config=PipelineConfig(num_retrieved_models=3), task=make_task())
    assert len(result_of(sim).retrieved_models) == 1
    assert any("fewer than M=3" in n.message for n in sim.of(Note))


def test_retriever_with_no_models_fails_the_run():
    from events.core import AgentCallFailed

    def agent(req):
        return AgentCallFailed(effect_id=req.effect_id, error="no network")

    sim = simulate(phase1_only, agent=agent, evaluate=evaluate_script, config=PipelineConfig(), task=make_task())
    assert sim.failed is not None and "retriever returned no usable models" in sim.failed.error
