"""Acceptance tests of spec 08 (REQ-FN-*) against scripted agents in the simulator."""

from __future__ import annotations

from typing import Any

from events.core import AgentCallRequested, EvaluationRequested, Note, PhaseCompleted, SolutionRecorded
from events.domain import PipelineConfig, SolutionPhase, SolutionScript, solution_id_of
from events.phase3 import (
    ContaminationChecked,
    FinalizationFellBack,
    FinalizationOutcome,
    SubmissionProduced,
    SubsamplingRemoved,
)
from handlers.deadline import Deadline
from handlers.finalization import run_finalization
from tests.finalization.scripted import (
    SAMPLE_LINE,
    VALIDATION,
    FinalAgent,
    evaluate_script,
    fenced,
    make_test_script,
    submission_path,
    validation_solution,
)
from tests.support.sim import SimRun, simulate

FALLBACK_WARNING = "test submission failed, using validation solution"


def run(agent: FinalAgent, solution: SolutionScript | None = None, score: float | None = 0.8, *,
        deadline_s: float | None = None, hard_s: float | None = None, fallback: SolutionScript | None = None, max_debug: int = 3,
        contamination: bool = False, params: dict[str, Any] | None = None,
        time_limit: int = 86400, order_seed: int | None = None) -> tuple[SimRun, FinalizationOutcome | None]:
    solution = solution or validation_solution()
    out: dict[str, Any] = {}

    async def main(wf):
        wf.at("phase3").record_solution(solution.content, phase=solution.phase, origin="ensemble", parents=[])
        fwf = wf if deadline_s is None else wf.within(Deadline(deadline_s, hard_s or deadline_s))
        out["o"] = await run_finalization(fwf, solution, score, fallback=fallback)
        wf.complete(submission_path=out["o"].submission_path, best_score=score, result={})

    config = PipelineConfig(max_debug_attempts=max_debug, contamination_check=contamination,
                            time_limit_seconds=time_limit)
    sim = simulate(main, agent=agent, evaluate=evaluate_script, config=config, params=params,
                   order_seed=order_seed)
    assert sim.failed is None, sim.failed
    return sim, out.get("o")


def warnings(sim: SimRun) -> list[Note]:
    return [n for n in sim.of(Note) if n.level == "warning"]


def a_test_request(agent: FinalAgent) -> AgentCallRequested:
    (req,) = agent.of("test")
    return req


# --- subsampling removal --------------------------------------------------------------------


def test_REQ_FN_001_003_007_009_subsampling_is_removed_before_A_test():
    agent = FinalAgent(extract=fenced(SAMPLE_LINE), remove=fenced(""))
    sim, out = run(agent)
    (extract,) = agent.of("test", "subsampling_extract")
    assert extract.variables == {"final solution": VALIDATION}
    (remove,) = agent.of("test", "subsampling_remove")
    assert remove.variables == {"code block with subsampling": SAMPLE_LINE}
    seen = a_test_request(agent).variables["final solution"]
    assert ".sample(" not in seen and seen == VALIDATION.replace(SAMPLE_LINE, "", 1)
    (removed,) = sim.of(SubsamplingRemoved)
    assert removed.source_solution_id == solution_id_of(VALIDATION) and removed.block == SAMPLE_LINE
    rec = next(e for e in sim.of(SolutionRecorded) if e.origin == "subsampling_removed")
    assert rec.parents == [solution_id_of(VALIDATION)] and rec.solution_id == removed.solution_id
    assert rec.phase == SolutionPhase.ensemble          # REQ-FN-007: only content changes
    assert out.submission_path


def test_REQ_FN_007_splice_example():
    sol = validation_solution("A\ndf = df.sample(30000)\nB")
    agent = FinalAgent(extract=fenced("df = df.sample(30000)\nB"), remove=fenced("B"))
    run(agent, sol)
    assert a_test_request(agent).variables["final solution"] == "A\nB"


def test_REQ_FN_006_removed_block_uses_full_training_set():
    block = "df_train = df_train.sample(n=30000, random_state=42)\nmodel.fit(df_train)"
    sol = validation_solution(f"import x\n{block}\nprint('Final Validation Performance: 1')")
    agent = FinalAgent(extract=fenced(block), remove=fenced("model.fit(df_train)"))
    run(agent, sol)
    assert a_test_request(agent).variables["final solution"] == \
        "import x\nmodel.fit(df_train)\nprint('Final Validation Performance: 1')"


def test_REQ_FN_008_038_no_subsampling_keeps_solution_with_one_call():
    agent = FinalAgent(extract=fenced(""))
    sim, _ = run(agent)
    assert agent.of("test", "subsampling_remove") == []
    assert a_test_request(agent).variables["final solution"] == VALIDATION
    assert sim.of(SubsamplingRemoved) == []
    assert any("no subsampling" in n.message for n in sim.of(Note) if n.level == "info")


def test_REQ_FN_039_block_not_in_script_is_no_subsampling_with_warning():
    agent = FinalAgent(extract=fenced("df = df.head(100)  # not in the script"))
    sim, _ = run(agent)
    assert agent.of("test", "subsampling_remove") == []
    assert a_test_request(agent).variables["final solution"] == VALIDATION
    w = [n for n in warnings(sim) if "REQ-FN-039" in n.message]
    assert len(w) == 1 and w[0].data["raw"] == fenced("df = df.head(100)  # not in the script")[:200]


def test_REQ_FN_039_failed_extraction_or_removal_keeps_solution():
    for agent in (FinalAgent(extract="fail"), FinalAgent(extract=fenced(SAMPLE_LINE), remove="fail")):
        sim, out = run(agent)
        assert a_test_request(agent).variables["final solution"] == VALIDATION
        assert sim.of(SubsamplingRemoved) == [] and out.fallback_reason is None


# --- A_test, evaluation, verification ---------------------------------------------------------


def test_REQ_FN_011_013_019_A_test_gets_task_and_solution_and_writes_final_script():
    agent = FinalAgent(extract=fenced(SAMPLE_LINE), remove=fenced(""))
    sim, out = run(agent)
    req = a_test_request(agent)
    assert req.variables["task description"] == "Predict the label."
    assert "./final/submission.csv" in req.prompt
    assert out.final_solution.phase == SolutionPhase.final
    assert out.final_solution.content == make_test_script("valid")
    rec = next(e for e in sim.of(SolutionRecorded) if e.origin == "test_script")
    desub = next(e for e in sim.of(SolutionRecorded) if e.origin == "subsampling_removed")
    assert rec.parents == [desub.solution_id] and rec.phase == SolutionPhase.final


def test_REQ_FN_035_leakage_check_runs_on_the_test_script_before_it_runs():
    agent = FinalAgent(leaky_test=True)
    sim, out = run(agent)
    order = [e.effect_id for _, e in sim.events if isinstance(e, (AgentCallRequested, EvaluationRequested))]
    assert order.index("final/test/leak-detect") < order.index("final/test/eval")
    (ev,) = sim.of(EvaluationRequested)
    assert "# leak fixed" in sim.solutions[ev.solution_id]
    assert out.final_solution_id == ev.solution_id


def test_REQ_FN_020_evaluation_expects_submission_with_remaining_time():
    sim, _ = run(FinalAgent(), time_limit=7200)
    (ev,) = sim.of(EvaluationRequested)
    assert ev.expect_submission and ev.purpose == "submission"
    assert 7100 < ev.timeout_s < 7200        # the time left, not a one-hour cap
    sim, _ = run(FinalAgent(), deadline_s=500.0)
    (ev,) = sim.of(EvaluationRequested)
    assert 490 < ev.timeout_s < 500


def test_REQ_FN_021_045_success_reports_engine_submission_path():
    sim, out = run(FinalAgent())
    (ev,) = sim.of(EvaluationRequested)
    assert out.submission_path == submission_path(ev) and out.submission_path.endswith("final/submission.csv")
    assert out.submission.valid and out.submission.rows == 100 and out.fallback_reason is None
    (produced,) = sim.of(SubmissionProduced)
    assert produced.path == out.submission_path and produced.rows == 100 and produced.valid
    assert produced.solution_id == out.final_solution_id
    assert sim.of(FinalizationFellBack) == []


def test_REQ_FN_023_fails_once_fixed_once():
    agent = FinalAgent(test_outcome="error", fixes=["valid"])
    sim, out = run(agent)
    (debug,) = agent.of("debugger")
    assert "KeyError: 'label'" in debug.variables["bug"]
    assert out.submission_path and out.final_solution.content == make_test_script("valid", 1)
    rec = next(e for e in sim.of(SolutionRecorded) if e.solution_id == out.final_solution_id)
    assert rec.origin == "debug"


def test_REQ_FN_021_missing_submission_is_debugged_with_a_synthetic_error():
    agent = FinalAgent(test_outcome="no_file", fixes=["valid"])
    sim, out = run(agent)
    (debug,) = agent.of("debugger")
    assert "did not create ./final/submission.csv" in debug.variables["bug"]
    assert out.submission_path and out.fallback_reason is None
    rec = next(e for e in sim.of(SolutionRecorded) if e.solution_id == out.final_solution_id)
    assert rec.origin == "debug" and rec.parents == [solution_id_of(make_test_script("no_file"))]


def test_invalid_submission_is_debugged_with_the_engine_reason():
    agent = FinalAgent(test_outcome="invalid", fixes=["valid"])
    _, out = run(agent)
    (debug,) = agent.of("debugger")
    assert "row count 99 differs" in debug.variables["bug"]
    assert out.submission.valid and out.submission_path


def test_REQ_FN_024_retry_budget_is_max_debug_attempts_shared_by_all_causes():
    agent = FinalAgent(test_outcome="error", fixes=["no_file", "error", "invalid", "valid"])
    sim, out = run(agent, max_debug=3)
    assert len(agent.of("debugger")) == 3
    assert out.submission_path == "" and out.fallback_reason is not None
    assert len(sim.of(EvaluationRequested)) == 4   # the first run + one per fix


def test_REQ_FN_025_fallback_to_validation_solution():
    agent = FinalAgent(test_outcome="error")   # the debugger cannot fix it
    sol = validation_solution()
    sim, out = run(agent, sol, score=0.8)
    assert out.submission_path == ""
    assert out.final_solution.content == VALIDATION and out.final_solution.score == 0.8
    assert out.final_solution.phase == SolutionPhase.ensemble
    assert "KeyError: 'label'" in out.fallback_reason
    assert FALLBACK_WARNING in [n.message for n in warnings(sim)]
    (fb,) = sim.of(FinalizationFellBack)
    assert fb.solution_id == solution_id_of(VALIDATION) and fb.score == 0.8 and fb.reason == out.fallback_reason


def test_REQ_FN_025_explicit_fallback_solution_is_used():
    other = SolutionScript(content="# phase 2 best\nprint('Final Validation Performance: 0.79')",
                           phase=SolutionPhase.refined, score=0.79)
    sim, out = run(FinalAgent(test_outcome="invalid"), fallback=other, max_debug=1)
    assert out.final_solution == other and out.submission_path == ""
    assert "no valid submission" in out.fallback_reason
    assert sim.of(FinalizationFellBack)[0].solution_id == solution_id_of(other.content)
    assert out.submission is not None and not out.submission.valid   # what the last run left


def test_REQ_FN_040_A_test_without_code_goes_to_the_debugger():
    agent = FinalAgent(test_outcome="nocode", fixes=["valid"])
    sim, out = run(agent)
    assert any("REQ-FN-040" in n.message for n in warnings(sim))
    (debug,) = agent.of("debugger")
    assert "empty code" in debug.variables["bug"]
    assert out.submission_path


def test_REQ_FN_040_A_test_without_code_and_no_fix_falls_back():
    _, out = run(FinalAgent(test_outcome="nocode"))
    assert out.submission_path == "" and out.final_solution.content == VALIDATION


def test_deadline_already_passed_falls_back_without_work():
    agent = FinalAgent()
    sim, out = run(agent, deadline_s=0.0)
    assert agent.calls == [] and sim.of(EvaluationRequested) == []
    assert out.submission_path == "" and "deadline" in out.fallback_reason


def test_deadline_stops_debugging_and_caps_timeouts():
    # Results advance time 1 s each: extract (1), A_test (2), leak check (3), eval (4), ...
    # A window's deadline: nothing starts past its soft end (5.5 s), no timeout reaches past its
    # hard end (6.5 s), a grace later.
    agent = FinalAgent(test_outcome="error", fixes=["error", "error", "valid"])
    sim, out = run(agent, deadline_s=5.5, hard_s=6.5)
    now, evaluations = 0.0, 0
    for scope, e in sim.events:
        if scope == "input":
            now = e.elapsed_s
        elif isinstance(e, (AgentCallRequested, EvaluationRequested)):
            assert now < 5.5, e.effect_id
            if isinstance(e, EvaluationRequested):
                evaluations += 1
                assert e.timeout_s <= max(1.0, 6.5 - now)
    assert evaluations
    assert out.submission_path == "" and out.fallback_reason


def test_phase_events_and_outcome_shape():
    sim, out = run(FinalAgent())
    (done,) = [e for e in sim.of(PhaseCompleted) if e.phase == "final"]
    assert done.result["submission_path"] == out.submission_path
    assert done.result["final_solution_id"] == out.final_solution_id
    assert not out.fell_back and out.contamination is None
    assert all(scope == "final" for scope, e in sim.events if isinstance(e, AgentCallRequested))


# --- contamination ------------------------------------------------------------------------------


def contamination_calls(agent: FinalAgent) -> list[AgentCallRequested]:
    return agent.of("test", "contamination")


def test_REQ_FN_030_disabled_by_config_makes_no_call():
    agent = FinalAgent(contamination=["Same"])
    _, out = run(agent, params={"reference_discussions": ["ref"]})
    assert contamination_calls(agent) == [] and out.contamination is None


def test_REQ_FN_030_no_references_is_skipped_with_a_note():
    agent = FinalAgent()
    sim, out = run(agent, contamination=True)
    assert contamination_calls(agent) == [] and out.contamination is None
    assert any("skipped" in n.message and "reference" in n.message for n in sim.of(Note))


def test_REQ_FN_031_any_same_makes_same():
    agent = FinalAgent(contamination=[{"verdict": "Novel"}, {"verdict": "Same"}])
    sim, out = run(agent, contamination=True, params={"reference_discussions": ["ref1", "ref2"]})
    calls = contamination_calls(agent)
    assert [c.variables["reference discussion"] for c in calls] == ["ref1", "ref2"]
    assert all(c.variables["final solution"] == out.final_solution.content for c in calls)
    assert all(c.output_schema is not None for c in calls)   # DataContaminationResult (REQ-FN-029)
    assert out.contamination.verdict == "Same"
    (checked,) = sim.of(ContaminationChecked)
    assert checked.verdicts == ["Novel", "Same"] and checked.verdict == "Same"


def test_REQ_FN_031_all_novel_makes_novel_and_plain_words_parse():
    agent = FinalAgent(contamination=["Novel", '{"verdict": "Novel"}'])
    _, out = run(agent, contamination=True, params={"reference_discussions": ["a", "b"]})
    assert out.contamination.verdict == "Novel"


def test_REQ_FN_041_malformed_verdict_is_inconclusive():
    agent = FinalAgent(contamination=["I think it is rather original.", {"verdict": "Novel"}])
    sim, out = run(agent, contamination=True, params={"reference_discussions": ["a", "b"]})
    assert out.contamination is None and out.submission_path
    assert any("REQ-FN-041" in n.message for n in warnings(sim))
    assert sim.of(ContaminationChecked)[0].verdicts == [None, "Novel"]


def test_contamination_checks_the_fallback_when_there_is_no_submission():
    agent = FinalAgent(test_outcome="error", contamination=["Same"])
    _, out = run(agent, contamination=True, params={"reference_discussions": ["ref"]})
    assert out.submission_path == "" and out.contamination.verdict == "Same"
    assert contamination_calls(agent)[0].variables["final solution"] == VALIDATION


def test_contamination_verdicts_do_not_depend_on_completion_order():
    refs = {"reference_discussions": ["r0", "r1", "r2"]}
    answers = [{"verdict": "Novel"}, "garbled", {"verdict": "Same"}]
    seen = set()
    for seed in range(6):
        sim, out = run(FinalAgent(contamination=list(answers)), contamination=True, params=refs, order_seed=seed)
        (checked,) = sim.of(ContaminationChecked)
        seen.add((tuple(checked.verdicts), out.contamination.verdict))
    assert seen == {(("Novel", None, "Same"), "Same")}
