"""Acceptance tests of REQ-P3-017..035: Algorithm 3 driven by scripted agents in the simulator."""

from __future__ import annotations

from typing import Any

from events.core import AgentCallRequested, EvaluationRequested, Note, PhaseCompleted, SolutionRecorded
from events.domain import PipelineConfig, SolutionPhase, solution_id_of
from events.phase3 import EnsemblePlanned, EnsembleRoundCompleted, EnsembleSelected, Phase3Outcome
from handlers.deadline import Deadline
from handlers.mlestar.phase3 import DEADLINE_PLAN, PLANNER_FAILED, run_phase3
from tests.phase3.scripted import Phase3Agent, ensemble_code, evaluate_script, input_solutions, plan_text
from tests.support.sim import SimRun, make_task, simulate


def run(agent: Phase3Agent, inputs=None, *, R: int = 5, deadline_s: float | None = None,
        direction: str = "maximize", max_debug: int = 3, record_inputs: bool = True) -> tuple[SimRun, Any]:
    inputs = input_solutions([0.80, 0.82]) if inputs is None else inputs
    out: dict[str, Any] = {}

    async def main(wf):
        if record_inputs:  # as Phase 2 would have
            for s in inputs:
                wf.at("phase2").record_solution(s.content, phase=s.phase, origin="refine", parents=[])
        # ``deadline_s``: Phase 3's window ending there, soft and hard end at once
        out["result"] = await run_phase3(wf if deadline_s is None else wf.within(Deadline.at(deadline_s)), inputs)
        wf.complete(submission_path="", best_score=out["result"].best_ensemble_score, result={})

    config = PipelineConfig(ensemble_rounds=R, max_debug_attempts=max_debug)
    sim = simulate(main, agent=agent, evaluate=evaluate_script, config=config, task=make_task(direction))
    return sim, out.get("result")


def notes(sim: SimRun, level: str = "warning") -> list[Note]:
    return [n for n in sim.of(Note) if n.level == level]


def test_REQ_P3_017_returns_phase3_result_with_best_ensemble():
    sim, res = run(Phase3Agent({0: 0.85, 1: 0.9, 2: 0.86}), R=3)
    assert sim.failed is None
    assert isinstance(res, Phase3Outcome)
    assert res.best_ensemble is not None and res.best_ensemble_score == 0.9
    assert res.best_ensemble.content == ensemble_code(1, 0.9)
    assert res.best_ensemble.phase == SolutionPhase.ensemble


def test_REQ_P3_018_single_solution_skips_without_agents():
    inputs = input_solutions([0.7])
    sim, res = run(Phase3Agent({}), inputs)
    assert sim.agent_requests() == [] and sim.of(EvaluationRequested) == []
    assert res.input_solutions == [inputs[0]]
    assert res.ensemble_plans == [] and res.ensemble_scores == []
    assert res.best_ensemble == inputs[0] and res.best_ensemble_score == 0.7
    assert res.skipped and res.attempts == []


def test_REQ_P3_018_single_unscored_solution_is_a_pipeline_error():
    inputs = input_solutions([None])
    sim, res = run(Phase3Agent({}), inputs)
    assert res is None and sim.failed is not None and "no score" in sim.failed.error


def test_REQ_P3_019_initial_plan_has_no_history():
    agent = Phase3Agent({})
    run(agent, R=3)
    first = agent.of("ens_planner")[0]
    assert first.effect_id == "phase3/round-0/ens-planner"
    assert first.variables["plans"] == [] and first.variables["scores"] == []
    assert "Ensemble plans you have tried" not in first.prompt
    assert first.variables["solutions"] == [s.content for s in input_solutions([0.80, 0.82])]


def test_REQ_P3_020_ensembler_implements_e0_over_all_solutions():
    agent = Phase3Agent({})
    run(agent, R=1)
    ens = agent.of("ensembler")
    assert len(ens) == 1
    assert ens[0].variables["plan"] == plan_text(0)
    assert ens[0].variables["solutions"] == [s.content for s in input_solutions([0.80, 0.82])]
    assert plan_text(0) in ens[0].prompt


def test_REQ_P3_021_027_every_ensemble_is_leakage_checked_before_evaluation():
    agent = Phase3Agent({0: 0.8, 1: 0.81, 2: 0.9}, leaky={2})
    sim, res = run(agent, R=3)
    order = [e for _, e in sim.events if isinstance(e, (AgentCallRequested, EvaluationRequested))]
    for r in range(3):
        detect = next(i for i, e in enumerate(order) if e.effect_id == f"phase3/round-{r}/leak-detect")
        ev = next(i for i, e in enumerate(order) if e.effect_id == f"phase3/round-{r}/eval")
        assert detect < ev
    # The corrected script of round 2 is what ran and what won.
    evaluated = next(e for e in sim.of(EvaluationRequested) if e.effect_id == "phase3/round-2/eval")
    assert "# leak fixed" in sim.solutions[evaluated.solution_id]
    assert "# leak fixed" in res.best_ensemble.content and res.best_ensemble_score == 0.9


def test_REQ_P3_022_runs_R_rounds_r0_then_1_to_R_minus_1():
    agent = Phase3Agent({})
    run(agent, R=5)
    assert [c.effect_id for c in agent.of("ens_planner")] == [f"phase3/round-{r}/ens-planner" for r in range(5)]
    assert len(agent.of("ensembler")) == 5


def test_REQ_P3_023_planner_gets_full_history_with_none_for_failures():
    agent = Phase3Agent({0: 0.8, 1: None, 2: "ensembler_fail", 3: 0.9})
    run(agent, R=4)
    at3 = agent.of("ens_planner")[3]
    assert at3.variables["plans"] == [plan_text(0), plan_text(1), plan_text(2)]
    assert at3.variables["scores"] == [0.8, None, None]
    assert "## Score: N/A (evaluation failed)" in at3.prompt and plan_text(2) in at3.prompt


def test_REQ_P3_024_one_score_per_round():
    _, res = run(Phase3Agent({1: None, 3: "planner_fail"}), R=5)
    assert len(res.ensemble_scores) == 5
    assert res.ensemble_scores[1] is None and res.ensemble_scores[3] is None
    assert [a.solution for a in res.attempts][0].content == ensemble_code(0, 0.5)


def test_REQ_P3_025_best_is_last_of_equal_bests_maximize():
    sim, res = run(Phase3Agent({0: 0.85, 1: 0.88, 2: None, 3: 0.87, 4: 0.88}), R=5)
    assert res.best_round == 4 and res.best_ensemble.content == ensemble_code(4, 0.88)
    assert res.best_ensemble_score == 0.88
    selected = sim.of(EnsembleSelected)
    assert len(selected) == 1 and selected[0].round == 4 and not selected[0].fallback
    assert selected[0].solution_id == solution_id_of(ensemble_code(4, 0.88))


def test_REQ_P3_025_minimize_picks_lowest_last_tie():
    _, res = run(Phase3Agent({0: 0.3, 1: 0.2, 2: 0.25, 3: 0.2}), R=4, direction="minimize",
                 inputs=input_solutions([0.4, 0.5]))
    assert res.best_round == 3 and res.best_ensemble_score == 0.2


def test_REQ_P3_026_all_rounds_failed_falls_back_to_best_input():
    inputs = input_solutions([0.70, 0.75, 0.72])
    agent = Phase3Agent({0: None, 1: "planner_fail", 2: "ensembler_fail", 3: "unfixable", 4: None})
    sim, res = run(agent, inputs, R=5)
    assert res.best_ensemble.content == inputs[1].content and res.best_ensemble_score == 0.75
    assert res.best_round is None and res.ensemble_scores == [None] * 5
    assert "Phase 3 ensemble: all 5 attempts failed; falling back to best input solution" in [
        n.message for n in notes(sim)]
    sel = sim.of(EnsembleSelected)[0]
    assert sel.fallback and sel.round is None and sel.solution_id == solution_id_of(inputs[1].content)


def test_REQ_P3_026_minimize_fallback_picks_lowest_input():
    inputs = input_solutions([0.5, 0.3, 0.4])
    _, res = run(Phase3Agent({0: None, 1: None}), inputs, R=2, direction="minimize")
    assert res.best_ensemble.content == inputs[1].content and res.best_ensemble_score == 0.3


def test_REQ_P3_026_all_failed_and_no_scored_input_is_a_pipeline_error():
    sim, res = run(Phase3Agent({0: None}), input_solutions([None, None]), R=1)
    assert res is None and sim.failed is not None and "all 1 ensemble attempts failed" in sim.failed.error


def test_REQ_P3_028_debugged_ensemble_score_is_used():
    agent = Phase3Agent({0: 0.8, 1: ("fixable", 0.93)})
    _, res = run(agent, R=2)
    assert len(agent.of("debugger")) == 1
    assert res.ensemble_scores == [0.8, 0.93]
    assert res.best_round == 1 and "# debugged" in res.best_ensemble.content
    assert res.attempts[1].solution.content == res.best_ensemble.content


def test_REQ_P3_028_debug_exhausted_records_none():
    agent = Phase3Agent({0: "unfixable", 1: 0.8})
    sim, res = run(agent, R=2, max_debug=2)
    assert len(agent.of("debugger")) == 2
    assert res.ensemble_scores == [None, 0.8]
    failed = sim.of(EnsembleRoundCompleted)[0]
    assert failed.status == "failed" and failed.score is None and failed.solution_id is not None


def test_REQ_P3_029_failed_rounds_do_not_abort_phase3():
    agent = Phase3Agent({0: None, 1: 0.81, 2: None, 3: 0.86, 4: 0.83})
    sim, res = run(agent, R=5)
    assert len(agent.of("ens_planner")) == 5 and len(res.attempts) == 5
    assert res.best_round == 3 and res.best_ensemble_score == 0.86
    warnings = [n for n in notes(sim) if n.message.startswith("Phase 3 ensemble round")]
    assert [n.data["round"] for n in warnings] == [0, 2]
    assert warnings[0].data["plan"] == plan_text(0)[:200]
    assert warnings[0].data["error"] == "ValueError: broken ensemble"


def test_REQ_P3_030_ensembler_failure_gives_empty_placeholder():
    agent = Phase3Agent({1: "ensembler_fail", 2: "ensembler_empty"})
    sim, res = run(agent, R=4)
    for r in (1, 2):
        att = res.attempts[r]
        assert att.score is None and att.solution.content == "" and att.plan == plan_text(r)
    parsed = [n.data["round"] for n in notes(sim) if "ensembler response could not be parsed" in n.message]
    assert parsed == [1, 2]
    statuses = [e.status for e in sim.of(EnsembleRoundCompleted)]
    assert statuses == ["evaluated", "ensembler_failed", "ensembler_failed", "evaluated"]
    assert agent.of("ens_planner")[3].variables["plans"][1:] == [plan_text(1), plan_text(2)]


def test_REQ_P3_031_planner_failure_placeholder_enters_history():
    agent = Phase3Agent({0: "planner_fail", 1: "planner_empty", 2: 0.9})
    sim, res = run(agent, R=3)
    assert [a.plan for a in res.attempts[:2]] == [PLANNER_FAILED, PLANNER_FAILED]
    assert all(a.score is None and a.solution.content == "" for a in res.attempts[:2])
    assert len(agent.of("ensembler")) == 1  # failed plans are never implemented
    third = agent.of("ens_planner")[2]
    assert third.variables["plans"] == [PLANNER_FAILED, PLANNER_FAILED]
    assert third.variables["scores"] == [None, None]
    assert sum("empty response" in n.message for n in notes(sim)) == 2
    assert res.ensemble_plans[:2] == [PLANNER_FAILED, PLANNER_FAILED]


def test_REQ_P3_032_033_exactly_R_attempts_in_round_order():
    agent = Phase3Agent({0: 0.8, 1: "planner_fail", 2: None, 3: "ensembler_fail", 4: 0.9})
    sim, res = run(agent, R=5)
    assert len(res.attempts) == 5
    assert res.attempts[0].plan == plan_text(0) and res.attempts[0].score == 0.8
    assert res.attempts[0].solution.content == ensemble_code(0, 0.8)
    assert [e.round for e in sim.of(EnsembleRoundCompleted)] == [0, 1, 2, 3, 4]
    assert [e.round for e in sim.of(EnsemblePlanned)] == [0, 2, 3, 4]


def test_REQ_P3_034_035_result_is_consistent():
    agent = Phase3Agent({0: 0.8, 1: None, 2: 0.84, 3: "planner_fail", 4: 0.82})
    _, res = run(agent, R=5)
    assert len(res.ensemble_plans) == len(res.ensemble_scores) == 5
    assert [(s.content, s.score) for s in res.input_solutions] == [
        (s.content, s.score) for s in input_solutions([0.80, 0.82])]
    assert res.ensemble_plans == [a.plan for a in res.attempts]
    assert res.ensemble_scores == [a.score for a in res.attempts]
    assert res.best_ensemble_score == res.best_ensemble.score == res.ensemble_scores[res.best_round]
    assert res.best_ensemble == res.attempts[2].solution


def test_ensembles_name_all_inputs_as_parents():
    inputs = input_solutions([0.8, 0.82, 0.81])
    sim, _ = run(Phase3Agent({}), inputs, R=2)
    ens = [e for e in sim.of(SolutionRecorded) if e.origin == "ensemble"]
    assert len(ens) == 2
    assert all(e.parents == [solution_id_of(s.content) for s in inputs] for e in ens)
    assert all(e.phase == SolutionPhase.ensemble for e in ens)


def test_unrecorded_inputs_are_recorded_once_and_duplicates_are_one_parent():
    inputs = input_solutions([0.8]) * 2  # REQ-OR-040: the same script on both paths
    sim, res = run(Phase3Agent({}), inputs, R=1, record_inputs=False)
    recorded = [e for e in sim.of(SolutionRecorded) if e.origin == "phase3_input"]
    assert len(recorded) == 1
    ens = next(e for e in sim.of(SolutionRecorded) if e.origin == "ensemble")
    assert ens.parents == [recorded[0].solution_id]


def test_phase3_records_start_and_completion():
    sim, res = run(Phase3Agent({}), R=2)
    done = [e for e in sim.of(PhaseCompleted) if e.phase == "phase3"]
    assert len(done) == 1 and done[0].result["best_round"] == res.best_round


def test_deadline_stops_new_work_and_fills_placeholders():
    # Each simulated result advances time by 1 s; a round costs 4 results (planner,
    # ensembler, leakage check, evaluation), so a deadline of 6 s is passed inside round 1.
    agent = Phase3Agent({})
    sim, res = run(agent, R=5, deadline_s=6.0)
    assert len(res.attempts) == 5 and len(res.ensemble_plans) == 5
    statuses = [e.status for e in sim.of(EnsembleRoundCompleted)]
    assert statuses[0] == "evaluated" and set(statuses[2:]) == {"deadline"}
    assert res.ensemble_plans[2:] == [DEADLINE_PLAN] * 3
    assert all(e.reason for e in sim.of(EnsembleRoundCompleted) if e.status == "deadline")
    # Nothing was requested at or after the deadline.
    now, evaluations = 0.0, 0
    for scope, e in sim.events:
        if scope == "input":
            now = e.elapsed_s
        elif isinstance(e, (AgentCallRequested, EvaluationRequested)):
            assert now < 6.0, e.effect_id
            if isinstance(e, EvaluationRequested):
                evaluations += 1
                assert e.timeout_s <= max(1.0, 6.0 - now)
    assert evaluations
    assert res.best_round == 0


def test_deadline_already_passed_skips_every_round_and_falls_back():
    agent = Phase3Agent({})
    sim, res = run(agent, R=3, deadline_s=0.0)
    assert agent.calls == []
    assert res.ensemble_plans == [DEADLINE_PLAN] * 3 and res.best_round is None
    assert res.best_ensemble_score == 0.82
