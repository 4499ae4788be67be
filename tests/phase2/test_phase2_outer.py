"""Acceptance tests for the Phase 2 outer loop (REQ-P2O-*) against scripted agents."""

from __future__ import annotations

from events.core import AgentCallCompleted, EvaluationRequested, SolutionEvaluated, SolutionRecorded
from events.domain import SolutionPhase, SolutionScript
from events.phase2 import (
    AblationSummarized,
    BlockExtracted,
    BlockExtractionFailed,
    OuterStepCompleted,
    RefinementAttempted,
)
from handlers.mlestar.phase2 import ABLATION_FAILED_NOTE, AUTO_SUMMARY_PREFIX, locate_block, validate_code_block
from tests.phase2.helpers import (
    BASE,
    BLOCK,
    Agents,
    config,
    failed,
    plans,
    run_phase2_sim,
    scoped,
    where,
)

STEP_KEYS = {"outer_step", "ablation_summary", "code_block", "plan", "inner_loop_attempts",
             "best_score_after_step", "was_skipped"}


def test_REQ_P2O_025_030_exactly_T_steps_with_complete_records():
    agents = Agents()
    run, [res] = run_phase2_sim(agents, cfg=config(T=3, K=2))
    assert len(res.step_history) == 3
    assert [r["outer_step"] for r in res.step_history] == [0, 1, 2]
    assert all(STEP_KEYS <= set(r) for r in res.step_history)
    assert len(scoped(run, OuterStepCompleted)) == 3
    assert len(agents.of("ablation")) == 3 and len(agents.of("extractor")) == 3


def test_REQ_P2O_022_023_044_accumulators_grow_by_step_with_provenance():
    agents = Agents()
    _, [res] = run_phase2_sim(agents, cfg=config(T=3, K=1))
    assert len(res.ablation_summaries) == 3
    assert len(res.refined_blocks) == 3
    assert [cb.outer_step for cb in res.refined_blocks] == [0, 1, 2]
    assert res.refined_blocks[2].outer_step == 2


def test_REQ_P2O_002_ablation_sees_earlier_summaries_only():
    agents = Agents()
    _, [res] = run_phase2_sim(agents, cfg=config(T=3, K=1))
    abl = agents.of("ablation")
    for t, req in enumerate(abl):
        assert req.variables["previous_ablations"] == res.ablation_summaries[:t]
    assert "earlier ablation" not in abl[0].prompt            # section omitted at t=0
    assert "earlier ablation" in abl[1].prompt
    assert res.ablation_summaries[0] in abl[1].prompt and res.ablation_summaries[0] in abl[2].prompt


def test_REQ_P2O_013_extractor_sees_blocks_of_earlier_steps():
    agents = Agents()
    _, [res] = run_phase2_sim(agents, cfg=config(T=3, K=1))
    ex = agents.of("extractor")
    assert ex[0].variables["previous_code_blocks"] == []
    assert ex[2].variables["previous_code_blocks"] == [cb.content for cb in res.refined_blocks[:2]]


def test_REQ_P2O_035_ablation_timeout_is_capped():
    run, _ = run_phase2_sim(Agents(), cfg=config(T=2, K=1))        # 24 h: min(86400/4, 600)
    abl = [e for e in run.of(EvaluationRequested) if e.purpose == "ablation"]
    assert abl and all(e.timeout_s == 600 for e in abl)
    run, _ = run_phase2_sim(Agents(), cfg=config(T=2, K=1, time_limit_seconds=1000))
    abl = [e for e in run.of(EvaluationRequested) if e.purpose == "ablation"]
    assert abl and all(e.timeout_s == 250 for e in abl)
    refine = [e for e in run.of(EvaluationRequested) if e.purpose == "refinement"]
    assert refine and all(e.timeout_s == 650 for e in refine)      # Phase 2's 65 % / K, not the whole limit


def test_REQ_P2O_020_ablation_is_run_but_never_scored_nor_leakage_checked():
    agents = Agents(ablation=lambda r: "```python\nprint('Final Validation Performance: 0.99')  # score=0.99\n```")
    run, [res] = run_phase2_sim(agents, cfg=config(T=1, K=1))
    abl_evals = [e for e in run.of(SolutionEvaluated) if e.purpose == "ablation"]
    assert len(abl_evals) == 1
    assert not [r for r in agents.of("leakage") if "ablation" in r.effect_id]
    assert res.best_score == 0.81                                  # the 0.99 of the ablation never counts
    summ = agents.of("summarize")[0]
    assert "Baseline: 0.8196" in summ.variables["raw_result"]      # raw output goes to the summarizer


def test_REQ_P2O_021_ablation_fails_once_then_debugged():
    agents = Agents(ablation=lambda r: "```python\nABLATION_FAIL\n```")
    run, [res] = run_phase2_sim(agents, cfg=config(T=1, K=1))
    assert len([r for r in agents.of("debugger") if "ablation" in r.effect_id]) == 1
    summ = agents.of("summarize")
    assert len(summ) == 1 and "ablation fixed" in summ[0].variables["ablation_code"]
    assert "Baseline" in summ[0].variables["raw_result"]
    [ev] = scoped(run, AblationSummarized)
    assert ev.ablation_ok and res.ablation_summaries[0] == ev.summary != ""


def test_REQ_P2O_021_ablation_always_failing_goes_on_with_empty_summary():
    agents = Agents(ablation=lambda r: "```python\nABLATION_FAIL\n```",
                    debugger=lambda r: "```python\nABLATION_FAIL # again\n```" if "ablation" in r.effect_id else None)
    cfg = config(T=2, K=1, max_debug_attempts=2)
    run, [res] = run_phase2_sim(agents, cfg=cfg)
    assert len([r for r in agents.of("debugger") if "t0/ablation" in r.effect_id]) == 2
    assert agents.of("summarize") == []
    assert res.ablation_summaries == ["", ""]
    ex = agents.of("extractor")
    assert ex[0].variables["ablation_summary"] == ABLATION_FAILED_NOTE
    assert not any(r["was_skipped"] for r in res.step_history)     # the step still refines
    assert agents.of("ablation")[1].variables["previous_ablations"] == []   # empty summaries not shown


def test_REQ_P2O_021_ablation_agent_without_code_is_a_failed_ablation():
    agents = Agents(ablation=lambda r: failed())
    run, [res] = run_phase2_sim(agents, cfg=config(T=1, K=1))
    assert [e for e in run.of(EvaluationRequested) if e.purpose == "ablation"] == []
    assert res.ablation_summaries == [""] and res.step_history[0]["was_skipped"] is False


def test_REQ_P2O_011_summary_is_the_whole_reply():
    text = "Baseline 0.8196.\nRemoving OneHotEncoder hurts most (0.7886); StandardScaler matters little."
    agents = Agents(summarize=lambda r: text)
    _, [res] = run_phase2_sim(agents, cfg=config(T=1, K=1))
    assert res.ablation_summaries == [text]
    assert agents.of("extractor")[0].variables["ablation_summary"] == text


def test_REQ_P2O_036_summarizer_fallback_uses_raw_tail():
    long_out = "x" * 3000 + "TAIL"
    agents = Agents(summarize=lambda r: "   ",
                    ablation=lambda r: f"```python\nprint('{long_out}')\n```")

    def evaluator(req, code):
        from tests.phase2.helpers import evaluate
        from tests.support.sim import ok_result
        return ok_result(None, stdout=long_out) if req.purpose == "ablation" else evaluate(req, code)

    run, [res] = run_phase2_sim(agents, cfg=config(T=1, K=1), evaluator=evaluator)
    summary = res.ablation_summaries[0]
    assert summary == AUTO_SUMMARY_PREFIX + long_out[-2000:]
    [ev] = scoped(run, AblationSummarized)
    assert ev.fallback
    agents2 = Agents(summarize=lambda r: failed())
    _, [res2] = run_phase2_sim(agents2, cfg=config(T=1, K=1))
    assert res2.ablation_summaries[0].startswith(AUTO_SUMMARY_PREFIX)


def test_REQ_P2O_017_validate_code_block_is_exact():
    sol = SolutionScript(content=BASE, phase=SolutionPhase.merged)
    assert validate_code_block("scaler = StandardScaler()\nX_train = scaler.fit_transform(X_train)", sol)
    assert not validate_code_block("scaler = StandardScaler() \nX_train = scaler.fit_transform(X_train)", sol)
    assert not validate_code_block("   ", sol)


def test_REQ_P2O_018_whitespace_normalised_match_returns_true_substring():
    content = "a = 1   \nb = 2\t\nc = 3\n"
    found = locate_block("a = 1\nb = 2\n", content)
    assert found == ("a = 1   \nb = 2\t\n", "normalised") or found == ("a = 1   \nb = 2", "normalised")
    assert found[0] in content
    assert locate_block("```python\nb = 2\nc = 3\n```", content) == ("b = 2\t\nc = 3", "normalised")
    assert locate_block("d = 4", content) is None


def test_REQ_P2O_018_normalised_block_is_used_and_replaced_in_the_script():
    fit = "X_train = scaler.fit_transform(X_train)"
    base = BASE.replace(fit, fit + "   ")                         # trailing spaces inside the block
    agents = Agents(extractor=lambda r: plans((f"{fit}\n{BLOCK}", "p0")) if "t0" in r.effect_id else None)
    run, [res] = run_phase2_sim(agents, cfg=config(T=1, K=1), base=base)
    [ev] = scoped(run, BlockExtracted)
    assert ev.match == "normalised" and ev.extractor_calls == 1
    assert ev.code_block == f"{fit}   \n{BLOCK}" and ev.code_block in base
    assert agents.of("coder")[0].variables["code_block"] == ev.code_block
    assert res.best_score == 0.81 and fit not in res.best_solution.content   # the replace found it


def test_REQ_P2O_018_reask_with_corrective_note_then_exact():
    def extractor(req):
        if req.effect_id.endswith("t0/extractor"):
            return plans(("model = SomethingElse()", "p0"))
        return None

    agents = Agents(extractor=extractor)
    run, [res] = run_phase2_sim(agents, cfg=config(T=1, K=1))
    ex = agents.of("extractor")
    assert len(ex) == 2
    assert "not in the current solution" in ex[1].prompt and "model = SomethingElse()" in ex[1].prompt
    assert "corrective_note" in ex[1].variables
    [ev] = scoped(run, BlockExtracted)
    assert ev.match == "reasked" and ev.code_block == BLOCK and ev.extractor_calls == 2


def test_REQ_P2O_018_alternative_plan_after_two_reasks():
    agents = Agents(extractor=lambda r: plans(("nope()", "bad"), (BLOCK, "alt plan")))
    run, [res] = run_phase2_sim(agents, cfg=config(T=1, K=1))
    assert len(agents.of("extractor")) == 3                        # first ask + 2 re-asks
    [ev] = scoped(run, BlockExtracted)
    assert ev.match == "alternative" and ev.plan == "alt plan" and ev.plan_index == 1
    assert agents.of("coder")[0].variables["plan"] == "alt plan"


def test_REQ_P2O_018_025_no_valid_block_skips_the_step_and_goes_on():
    agents = Agents(extractor=lambda r: plans(("nope()", "bad")) if "/t0/" in r.effect_id else None)
    run, [res] = run_phase2_sim(agents, cfg=config(T=2, K=2))
    assert len(res.step_history) == 2
    s0, s1 = res.step_history
    assert s0["was_skipped"] and s0["inner_loop_attempts"] == [] and s0["code_block"] == ""
    assert not s1["was_skipped"] and len(s1["inner_loop_attempts"]) == 2
    assert not [r for r in agents.of("coder") if "/t0/" in r.effect_id]
    [fail] = scoped(run, BlockExtractionFailed)
    assert fail.outer_step == 0 and fail.extractor_calls == 3
    assert res.refined_blocks[0].content == "" and res.refined_blocks[0].outer_step == 0
    assert agents.of("extractor")[-1].variables["previous_code_blocks"] == []   # placeholder not shown
    assert res.ablation_summaries[0] != ""                          # the real summary is kept


def test_REQ_P2O_034_unparseable_extractor_answer_retried_once():
    def extractor(req):
        if req.effect_id.endswith("t0/extractor"):
            return AgentCallCompleted(effect_id="x", text="I think the model block matters.")
        return None

    agents = Agents(extractor=extractor)
    run, [res] = run_phase2_sim(agents, cfg=config(T=1, K=1))
    assert len(agents.of("extractor")) == 2
    assert not res.step_history[0]["was_skipped"]
    assert agents.of("extractor")[1].prompt == agents.of("extractor")[0].prompt   # same inputs


def test_REQ_P2O_034_unparseable_twice_skips_the_step():
    agents = Agents(extractor=lambda r: AgentCallCompleted(effect_id="x", text="{not json"))
    run, [res] = run_phase2_sim(agents, cfg=config(T=2, K=1))
    assert len(agents.of("extractor")) == 4
    assert [r["was_skipped"] for r in res.step_history] == [True, True]
    assert res.best_solution.content == BASE and res.best_score == 0.80
    assert agents.of("coder") == []


def test_REQ_P2O_014_extractor_json_in_text_is_accepted():
    import json
    agents = Agents(extractor=lambda r: AgentCallCompleted(
        effect_id="x", text="```json\n" + json.dumps([{"code_block": BLOCK, "plan": "from text"}]) + "\n```"))
    run, [res] = run_phase2_sim(agents, cfg=config(T=1, K=1))
    assert scoped(run, BlockExtracted)[0].plan == "from text"


def test_REQ_P2O_024_027_better_inner_result_moves_s_t():
    agents = Agents(score=lambda p, t, k: 0.85 if t == 0 else 0.84)
    _, [res] = run_phase2_sim(agents, cfg=config(T=2, K=1), initial=0.82)
    abl = agents.of("ablation")
    assert "score=0.85" in abl[1].variables["solution_script"]     # s_1 is the improved script
    assert res.best_score == 0.85 and "score=0.85" in res.best_solution.content
    assert [r["best_score_after_step"] for r in res.step_history] == [0.85, 0.85]


def test_REQ_P2O_027_worse_inner_result_keeps_s_t():
    agents = Agents(score=lambda p, t, k: 0.80)
    _, [res] = run_phase2_sim(agents, cfg=config(T=2, K=2), initial=0.85)
    assert agents.of("ablation")[1].variables["solution_script"] == BASE
    assert res.best_score == 0.85 and res.best_solution.content == BASE


def test_REQ_P2O_024_equal_score_moves_s_t():
    agents = Agents(score=lambda p, t, k: 0.80)
    _, [res] = run_phase2_sim(agents, cfg=config(T=2, K=1), initial=0.80)
    assert "make_model" in agents.of("ablation")[1].variables["solution_script"]
    assert res.best_score == 0.80


def test_REQ_P2O_029_041_no_improvement_returns_initial_solution():
    agents = Agents(score=lambda p, t, k: 0.5)
    run, [res] = run_phase2_sim(agents, cfg=config(T=4, K=2), initial=0.82)
    assert res.best_solution.content == BASE and res.best_score == 0.82
    scores = [e.best_score_after_step for e in scoped(run, OuterStepCompleted)]
    assert scores == [0.82] * 4


def test_REQ_P2O_041_minimize_keeps_lower_scores():
    agents = Agents(score=lambda p, t, k: [0.30, 0.20, 0.25, 0.40][t * 2 + k])
    run, [res] = run_phase2_sim(agents, cfg=config(T=2, K=2), direction="minimize", initial=0.35)
    assert res.best_score == 0.20
    scores = [e.best_score_after_step for e in scoped(run, OuterStepCompleted)]
    assert scores == sorted(scores, reverse=True)


def test_REQ_P2O_043_initial_solution_is_not_mutated():
    from handlers.mlestar.phase2 import run_phase2
    from tests.phase2.helpers import evaluate
    from tests.support.sim import make_task, simulate

    s0 = SolutionScript(content=BASE, phase=SolutionPhase.merged, score=0.8)
    before = s0.model_dump()

    async def main(wf):
        wf.record_solution(BASE, phase=s0.phase, origin="test", parents=[])
        await run_phase2(wf, s0, 0.8)
        wf.complete(submission_path="", best_score=None, result={})

    run = simulate(main, agent=Agents(score=lambda p, t, k: 0.9), evaluate=evaluate, config=config(L=2),
                   task=make_task())
    assert run.completed is not None and s0.model_dump() == before


def test_lineage_refined_solutions_name_their_parent_and_plan():
    agents = Agents(score=lambda p, t, k: 0.85 if t == 0 else 0.86)
    run, [res] = run_phase2_sim(agents, cfg=config(T=2, K=1))
    refined = [e for e in run.of(SolutionRecorded) if e.origin == "refinement"]
    assert len(refined) == 2
    base_id = SolutionScript(content=BASE, phase=SolutionPhase.merged).solution_id
    assert refined[0].parents == [base_id] and refined[0].phase == SolutionPhase.refined
    assert refined[1].parents == [refined[0].solution_id]         # step 1 refines step 0's best
    assert refined[0].detail["plan"] == scoped(run, BlockExtracted)[0].plan
    attempts = scoped(run, RefinementAttempted)
    assert [a.solution_id for a in attempts] == [r.solution_id for r in refined]
    abl = [e for e in run.of(SolutionRecorded) if e.origin == "ablation"]
    assert abl[0].parents == [base_id]
    assert where(agents.of("coder")[0]) == (0, 0, 0)
