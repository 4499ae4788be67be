"""The shared evaluation sub-flow (REQ-EX-021, REQ-SF-006/008/020/021/038/040)."""

from __future__ import annotations

from events.core import AgentCallCompleted, AgentCallFailed, EvaluationRequested, Note, SolutionEvaluated
from events.domain import EvaluationResult, PipelineConfig, SolutionPhase, SolutionScript
from handlers.evaluation import EvalPolicy, bug_text, evaluate_with_retry
from tests.phase1.scripted import evaluate_script, fenced, script
from tests.support.sim import make_task, simulate

CLEAN = {"answers": [{"leakage_status": "No Data Leakage", "code_block": "x"}]}


def run_flow(start_code: str, agent, *, attempts=3, fallback=None, evaluate=evaluate_script):
    out = {}

    async def main(wf):
        ev = await evaluate_with_retry(wf.at("t"), SolutionScript(content=start_code, phase=SolutionPhase.init),
                                       EvalPolicy.scored("candidate", 60), name="s", origin="init",
                                       fallback=fallback)
        out["ev"] = ev
        wf.complete(submission_path="", best_score=ev.score, result={})

    sim = simulate(main, agent=agent, evaluate=evaluate, config=PipelineConfig(max_debug_attempts=attempts),
                   task=make_task())
    return sim, out["ev"]


def leakage_clean(req):
    return AgentCallCompleted(effect_id=req.effect_id, text="", structured=CLEAN)


def test_req_ex_021_fails_once_fixed_once_one_retry():
    def agent(req):
        if req.agent_type == "debugger":
            assert req.variables["bug"].startswith("Traceback (most recent call last):")
            return fenced(script(0.7, "fixed"))
        return leakage_clean(req)

    sim, ev = run_flow(script(None, "broken"), agent)
    assert ev.ok and ev.score == 0.7 and ev.debug_attempts == 1
    assert len(sim.of(EvaluationRequested)) == 2
    assert sim.of(SolutionEvaluated)[-1].score == 0.7


def test_req_sf_006_each_attempt_works_on_the_latest_failing_version():
    seen = []

    def agent(req):
        if req.agent_type == "debugger":
            seen.append(req.variables["code"])
            return fenced(script(None, f"attempt-{len(seen)}"))
        return leakage_clean(req)

    sim, ev = run_flow(script(None, "broken"), agent, attempts=3)
    assert len(seen) == 3
    assert "broken" in seen[0] and "attempt-1" in seen[1] and "attempt-2" in seen[2]
    assert not ev.ok and ev.solution.is_executable is False and ev.score is None


def test_req_sf_008_falls_back_to_last_executable_version():
    working = SolutionScript(content=script(0.6, "working"), phase=SolutionPhase.init, score=0.6)

    def agent(req):
        if req.agent_type == "debugger":
            return AgentCallFailed(effect_id=req.effect_id, error="no idea")
        return leakage_clean(req)

    sim, ev = run_flow(script(None, "broken"), agent, fallback=working)
    assert ev.fell_back and ev.score == 0.6 and "working" in ev.solution.content
    assert any("falling back" in n.message for n in sim.of(Note))


def test_req_sf_040_debugger_without_new_code_stops_the_chain():
    def agent(req):
        if req.agent_type == "debugger":
            return fenced(req.variables["code"])  # the same script back
        return leakage_clean(req)

    sim, ev = run_flow(script(None, "broken"), agent, attempts=3)
    assert len(sim.agent_requests("debugger")) == 1 and len(sim.of(EvaluationRequested)) == 1


def test_timeouts_give_the_debugger_a_synthetic_error_text():
    result = EvaluationResult(score=None, stdout="", stderr="partial output", exit_code=-9, duration_seconds=60,
                              is_error=True, error_traceback=None)
    text = bug_text(result, 60)
    assert "timed out after 60 s" in text and "partial output" in text


def test_req_sf_020_leak_corrected_by_replacing_the_block_before_evaluation():
    leaky = "import x\n# LEAK\nprint('Final Validation Performance: 0.9')\n"

    def agent(req):
        if req.variant == "detection":
            block = "# LEAK\n" if "# LEAK" in req.variables["code"] else "import x"
            status = "Yes Data Leakage" if "# LEAK" in req.variables["code"] else "No Data Leakage"
            return AgentCallCompleted(effect_id=req.effect_id, text="", structured={"answers": [
                {"leakage_status": status, "code_block": f"```python\n{block}```"}]})
        if req.variant == "correction":
            return fenced("# no leak\n")
        raise AssertionError(req.agent_type)

    sim, ev = run_flow(leaky, agent)
    evaluated = sim.solutions[sim.of(EvaluationRequested)[0].solution_id]
    assert "# LEAK" not in evaluated and "# no leak" in evaluated and ev.score == 0.9


def test_req_sf_021_block_not_found_is_skipped_with_warning():
    def agent(req):
        if req.variant == "detection":
            return AgentCallCompleted(effect_id=req.effect_id, text="", structured={"answers": [
                {"leakage_status": "Yes Data Leakage", "code_block": "not in the script"}]})
        return fenced("# replacement\n")

    sim, ev = run_flow(script(0.5, "s"), agent)
    assert any("replacement skipped" in n.message for n in sim.of(Note))
    assert ev.score == 0.5 and "# replacement" not in ev.solution.content


def test_req_sf_038_unparseable_detection_leaves_script_unchanged():
    def agent(req):
        return AgentCallCompleted(effect_id=req.effect_id, text="I think it is fine", structured=None)

    sim, ev = run_flow(script(0.5, "s"), agent)
    assert ev.score == 0.5 and len(sim.agent_requests("leakage")) == 1
    assert any("REQ-SF-038" in n.message for n in sim.of(Note))


def test_clean_run_without_score_line_is_not_debugged():
    def agent(req):
        return leakage_clean(req)

    sim, ev = run_flow("print('hello')\n", agent)
    assert sim.agent_requests("debugger") == [] and ev.score is None and ev.solution.is_executable


def test_an_identical_script_is_run_once_per_scope_and_a_failed_one_again():
    """A path whose planner ran out of settings writes the same script again: its clean result is
    reused (the SolutionEvaluated names the run it came from), in its own scope only; a failed
    run is always retried."""
    same, broken = script(0.7, "same"), script(None, "broken")
    out = {}

    async def main(wf):
        def evaluate(scope: str, code: str, name: str):
            return evaluate_with_retry(wf.at(scope), SolutionScript(content=code, phase=SolutionPhase.init),
                                       EvalPolicy.scored("candidate", 60), name=name, origin="init")

        out["evs"] = [await evaluate("path-0", same, "a"), await evaluate("path-0", same, "b"),
                      await evaluate("path-1", same, "c"), await evaluate("path-0", broken, "d"),
                      await evaluate("path-0", broken, "e")]
        wf.complete(submission_path="", best_score=None, result={})

    def agent(req):
        if req.agent_type == "debugger":
            return AgentCallFailed(effect_id=req.effect_id, error="no idea")
        return leakage_clean(req)

    sim = simulate(main, agent=agent, evaluate=evaluate_script, config=PipelineConfig(max_debug_attempts=1),
                   task=make_task())
    assert [r.effect_id for r in sim.of(EvaluationRequested)] == [
        "path-0/a/eval", "path-1/c/eval", "path-0/d/eval", "path-0/e/eval"]
    a, b, c, d, e = out["evs"]
    assert a.score == b.score == c.score == 0.7 and b.result == a.result and b.submission == a.submission
    assert d.score is None and e.score is None
    assert [s.eval_ids for s in sim.of(SolutionEvaluated)] == [
        ["path-0/a/eval"], ["path-0/a/eval"], ["path-1/c/eval"], ["path-0/d/eval"], ["path-0/e/eval"]]
    assert any("evaluated before in this scope" in n.message for n in sim.of(Note))
