"""Acceptance tests for the Phase 2 inner loop (REQ-P2I-*) against scripted agents."""

from __future__ import annotations

from events.core import AgentCallCompleted, EvaluationRequested, SolutionRecorded
from events.domain import CodeBlock, SolutionPhase, SolutionScript
from events.phase2 import RefinementAttempted
from handlers.mlestar.phase2_inner import DEADLINE_SKIPPED, PLANNER_FAILED, run_phase2_inner_loop
from tests.phase2.helpers import BASE, BLOCK, Agents, config, evaluate, failed, run_phase2_sim, scoped, where
from tests.support.sim import make_task, simulate


def inner_attempts(res, t: int = 0):
    return res.step_history[t]["inner_loop_attempts"]


def test_REQ_P2I_048_029_exactly_K_attempts_in_order():
    agents = Agents()
    run, [res] = run_phase2_sim(agents, cfg=config(T=1, K=4))
    attempts = inner_attempts(res)
    assert len(attempts) == 4
    assert [e.k for e in scoped(run, RefinementAttempted)] == [0, 1, 2, 3]
    assert attempts[0].plan == res.step_history[0]["plan"]


def test_REQ_P2I_018_019_no_planner_at_k0_then_one_per_step():
    agents = Agents()
    run_phase2_sim(agents, cfg=config(T=1, K=4))
    assert [where(r)[2] for r in agents.of("planner")] == [1, 2, 3]
    coder = agents.of("coder")
    assert coder[0].variables["plan"] == "plan-0 of phase2/path-0/t0/extractor"
    assert coder[1].variables["plan"] == "plan of phase2/path-0/t0/k1/planner"   # stripped


def test_REQ_P2I_010_020_035_planner_history_has_every_attempt_with_failures():
    agents = Agents(score=lambda p, t, k: {0: 0.82, 1: "FAIL", 2: 0.83, 3: 0.84}[k])
    cfg = config(T=1, K=4, max_debug_attempts=1)
    agents.overrides["debugger"] = lambda r: failed()               # k=1 stays broken
    run, [res] = run_phase2_sim(agents, cfg=cfg)
    planner = agents.of("planner")
    p0 = "plan-0 of phase2/path-0/t0/extractor"
    p1 = "plan of phase2/path-0/t0/k1/planner"
    assert planner[1].variables["plans"] == [p0, p1]
    assert planner[1].variables["scores"] == [0.82, None]
    assert f"## Plan: {p0}\n## Score: 0.82" in planner[1].prompt
    assert f"## Plan: {p1}\n## Score: N/A (evaluation failed)" in planner[1].prompt
    assert len(planner[2].variables["plans"]) == 3
    assert inner_attempts(res)[1].score is None and not inner_attempts(res)[1].was_improvement


def test_REQ_P2I_021_050_coder_always_gets_the_original_block():
    agents = Agents(score=lambda p, t, k: 0.81 + k / 100)
    run_phase2_sim(agents, cfg=config(T=1, K=4))
    assert [r.variables["code_block"] for r in agents.of("coder")] == [BLOCK] * 4
    assert all(r.variables["code_block"] == BLOCK for r in agents.of("planner"))


def test_REQ_P2I_022_023_049_candidates_replace_into_the_original_script():
    agents = Agents(score=lambda p, t, k: 0.81 + k / 100)
    run, _ = run_phase2_sim(agents, cfg=config(T=1, K=3))
    refined = [e for e in run.of(SolutionRecorded) if e.origin == "refinement"]
    coded = list(agents.of("coder"))
    assert len(refined) == len(coded) == 3
    for rec, req in zip(refined, coded):
        new_block = f"model = make_model('{req.effect_id}')  # score={0.81 + where(req)[2] / 100}"
        assert rec.content == BASE.replace(BLOCK, new_block, 1)


def test_REQ_P2I_025_best_moves_only_to_better_or_equal():
    agents = Agents(score=lambda p, t, k: [0.82, 0.85, 0.83][k])
    _, [res] = run_phase2_sim(agents, cfg=config(T=1, K=3), initial=0.80)
    att = inner_attempts(res)
    assert [a.was_improvement for a in att] == [True, True, False]
    assert res.best_score == 0.85 and "score=0.85" in res.best_solution.content


def test_REQ_P2I_026_036_tie_updates_best_but_is_not_strict_improvement():
    seen = {}

    async def main(wf):
        s0 = SolutionScript(content=BASE, phase=SolutionPhase.merged, score=0.82)
        wf.record_solution(BASE, phase=s0.phase, origin="test", parents=[])
        res = await run_phase2_inner_loop(wf.at("phase2/path-0"), s0, CodeBlock(content=BLOCK, outer_step=0),
                                          "p0", 0.82)
        seen["res"] = res
        wf.complete(submission_path="", best_score=res.best_score, result={})

    simulate(main, agent=Agents(score=lambda p, t, k: 0.82), evaluate=evaluate, config=config(K=2), task=make_task())
    res = seen["res"]
    assert res.best_score == 0.82 and res.improved is False
    assert res.best_solution.content != BASE                       # the most recent tie wins
    assert [a.was_improvement for a in res.attempts] == [True, True]


def test_REQ_P2I_027_031_debugged_candidate_score_counts():
    agents = Agents(score=lambda p, t, k: "FAIL" if k == 0 else 0.60)
    run, [res] = run_phase2_sim(agents, cfg=config(T=1, K=2), initial=0.65)
    assert [r for r in agents.of("debugger") if "/k0/" in r.effect_id]
    att = inner_attempts(res)
    assert att[0].score == 0.70 and att[0].was_improvement           # the debugger's fix scored 0.70
    assert res.best_score == 0.70 and "debugged by" in res.best_solution.content


def test_REQ_P2I_027_unscored_run_is_a_failed_attempt():
    agents = Agents(score=lambda p, t, k: "NONE")
    _, [res] = run_phase2_sim(agents, cfg=config(T=1, K=2))
    assert [a.score for a in inner_attempts(res)] == [None, None]
    assert res.best_solution.content == BASE


def test_REQ_P2I_030_leakage_check_before_every_score():
    agents = Agents(score=lambda p, t, k: 0.9)
    run, _ = run_phase2_sim(agents, cfg=config(T=1, K=3))
    ids = [getattr(e, "effect_id", None) for _, e in run.events]
    evals = [e for e in run.of(EvaluationRequested) if e.purpose == "refinement"]
    assert len(evals) == 3
    for ev in evals:
        detect = ev.effect_id.rsplit("/eval", 1)[0] + "/leak-detect"
        assert detect in ids and ids.index(detect) < ids.index(ev.effect_id)


def test_REQ_P2I_030_leakage_fixed_candidate_is_what_gets_scored():
    def detect(req):
        if "/k0/" in req.effect_id and "make_model" in req.variables["code"]:
            block = next(line for line in req.variables["code"].splitlines() if "make_model" in line)
            return AgentCallCompleted(effect_id="x", text="", structured={
                "answers": [{"leakage_status": "Yes Data Leakage", "code_block": block}]})
        return None

    agents = Agents(score=lambda p, t, k: 0.99, leakage_detection=detect,
                    leakage_correction=lambda r: "```python\nmodel = clean_model()  # score=0.84\n```")
    run, [res] = run_phase2_sim(agents, cfg=config(T=1, K=1))
    assert inner_attempts(res)[0].score == 0.84
    assert "clean_model" in res.best_solution.content and "0.99" not in res.best_solution.content


def test_REQ_P2I_032_coder_failure_is_a_recorded_attempt():
    agents = Agents(coder=lambda r: failed() if where(r)[2] == 1 else None)
    run, [res] = run_phase2_sim(agents, cfg=config(T=1, K=3))
    att = inner_attempts(res)
    assert len(att) == 3 and att[1].code_block == "" and att[1].score is None
    assert scoped(run, RefinementAttempted)[1].failure == "coder"
    assert agents.of("planner")[1].variables["scores"][1] is None   # still in the history


def test_REQ_P2I_034_planner_failure_is_recorded_and_the_loop_goes_on():
    agents = Agents(planner=lambda r: "   " if where(r)[2] == 1 else None)
    run, [res] = run_phase2_sim(agents, cfg=config(T=1, K=3))
    att = inner_attempts(res)
    assert att[1].plan == PLANNER_FAILED and att[1].code_block == "" and att[1].score is None
    assert att[2].score is not None
    # Decision: the placeholder is not part of the planner's history (nothing was tried).
    assert PLANNER_FAILED not in agents.of("planner")[1].variables["plans"]
    assert len(agents.of("coder")) == 2


def _direct_inner(agents, block: str, K: int = 3):
    seen = {}

    async def main(wf):
        s0 = SolutionScript(content=BASE, phase=SolutionPhase.merged, score=0.8)
        wf.record_solution(BASE, phase=s0.phase, origin="test", parents=[])
        seen["res"] = await run_phase2_inner_loop(wf.at("phase2/path-0"), s0, CodeBlock(content=block, outer_step=0),
                                                  "p0", 0.8)
        wf.complete(submission_path="", best_score=None, result={})

    run = simulate(main, agent=agents, evaluate=evaluate, config=config(K=K), task=make_task())
    return run, seen["res"]


def test_REQ_P2I_033_replace_failure_is_a_recorded_attempt():
    run, res = _direct_inner(Agents(), "not_in_the_script()")
    assert len(res.attempts) == 3
    assert all(a.score is None and a.code_block.startswith("model = make_model") for a in res.attempts)
    assert [e.failure for e in run.of(RefinementAttempted)] == ["replace"] * 3
    assert run.of(EvaluationRequested) == []
    assert res.best_solution.content == BASE and not res.improved


def test_REQ_P2I_041_garbage_everywhere_never_raises():
    agents = Agents(coder=lambda r: AgentCallCompleted(effect_id="x", text="   "), planner=lambda r: failed())
    run, res = _direct_inner(agents, BLOCK, K=4)
    assert len(res.attempts) == 4 and not res.improved
    assert res.attempts[0].code_block == "" and res.attempts[1].plan == PLANNER_FAILED


def test_REQ_P2I_038_047_nothing_better_returns_the_input():
    _, [res] = run_phase2_sim(Agents(score=lambda p, t, k: 0.1), cfg=config(T=1, K=4), initial=0.82)
    assert res.best_solution.content == BASE and res.best_score == 0.82
    assert not any(a.was_improvement for a in inner_attempts(res))


def test_inner_attempts_after_the_deadline_are_recorded_as_skipped():
    agents = Agents()
    run, [res] = run_phase2_sim(agents, cfg=config(T=1, K=4), deadline_s=8)
    att = inner_attempts(res)
    assert len(att) == 4
    assert att[-1].plan == DEADLINE_SKIPPED and att[0].plan != DEADLINE_SKIPPED
    assert len(agents.of("coder")) < 4


def test_REQ_P2I_027_nan_score_counts_as_failed():
    from tests.support.sim import ok_result

    def evaluator(req, code):
        return ok_result(float("nan")) if req.purpose == "refinement" else evaluate(req, code)

    run, [res] = run_phase2_sim(Agents(), cfg=config(T=1, K=2), evaluator=evaluator)
    assert [a.score for a in inner_attempts(res)] == [None, None]
    assert res.best_score == 0.80 and res.best_solution.content == BASE
