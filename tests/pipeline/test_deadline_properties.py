"""No result is lost at a deadline (issue 16; REQ-OR-023/024/026/043), for any time budget.

The real MLE-STAR handlers run on the in-memory simulator's timed completion policy
(``simulate_clock``): every effect takes time, timers fire when their time comes. Hypothesis
draws each Phase 2 path's speed and the time limit (which places the cut), and checks:

* every path that finished before the cut reaches Phase 3 with its own best solution and its
  full step history; a cut path keeps its own best so far and the steps it completed;
* no agent call or evaluation is requested after the hard end of its phase;
* the run always completes (with a submission).
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from events.core import AgentCallRequested, EvaluationRequested, PhaseCompleted
from events.domain import FinalResult, PipelineConfig
from events.phase2 import OuterStepCompleted
from events.pipeline import DeadlineHit, PhaseBudgetAllocated, WorkCut
from handlers.mlestar.pipeline import main
from handlers.timebudget import TimePlan
from tests.pipeline import scripted_agent as sa
from tests.pipeline.support import simulate_clock

T, K, L = 2, 2, 2


def config(limit: int) -> PipelineConfig:
    return PipelineConfig(num_retrieved_models=2, outer_loop_steps=T, inner_loop_steps=K, num_parallel_solutions=L,
                          ensemble_rounds=2, time_limit_seconds=limit)


def agent(req: AgentCallRequested) -> Any:
    """Path 1's coder improves by 0.02 a step, path 0's by 0.01: the paths' bests differ, so a
    path handed someone else's best (or a run-wide copy) is visible."""
    answer = sa.answer(req)
    if req.agent_type == "coder" and req.effect_id.startswith("phase2/path-1/"):
        current = sa._current_score(req.prompt)
        answer = answer.model_copy(update={"text": sa.fenced(f"score = {current + 0.02:.2f}")})
    return answer


def phase_of(scope: str) -> str:
    head = scope.split("/")[0]
    return "finalization" if head == "final" else head


def requests_with_time(run) -> list[tuple[float, str, Any]]:
    """(driven time of the request, scope, request): a decision is made at the time of the input
    that caused it."""
    now, out = 0.0, []
    for scope, ev in run.events:
        if ev.kind == "input" and isinstance(getattr(ev, "elapsed_s", None), (int, float)):
            now = max(now, float(ev.elapsed_s))
        elif isinstance(ev, (AgentCallRequested, EvaluationRequested)):
            out.append((now, scope, ev))
    return out


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(limit=st.integers(min_value=200, max_value=4000),
       speeds=st.lists(st.sampled_from([1.0, 5.0, 20.0, 60.0, 200.0]), min_size=L, max_size=L))
def test_REQ_OR_023_026_043_no_path_result_is_lost_at_a_deadline(limit, speeds):
    def durations(req: Any) -> float:
        scope = req.effect_id
        for i, s in enumerate(speeds):
            if scope.startswith(f"phase2/path-{i}/"):
                return s
        return 2.0

    run = simulate_clock(main, agent=agent, evaluate=sa.evaluate, config=config(limit), durations=durations)
    # The run always completes, with a submission.
    assert run.failed is None and run.completed is not None
    result = FinalResult.model_validate(run.completed.result)
    assert result.submission_path

    # Nothing is requested after the hard end of its phase (Phase 1's is the finalize-now
    # point: it is extended up to there when it has nothing yet, and its checks run until there).
    plan = TimePlan.from_config(config(limit))
    hard = {e.phase: e.deadline_s for e in run.of(PhaseBudgetAllocated)}
    hard["phase1"] = max(hard["phase1"], plan.finalize_at_s)
    for at, scope, req in requests_with_time(run):
        assert at <= hard[phase_of(scope)] + 1e-9, f"{req.effect_id} requested at {at} after {hard[phase_of(scope)]}"

    # Every path keeps its own result.
    done = {e.phase: e.result for e in run.of(PhaseCompleted) if e.phase.startswith("phase2/path-")}
    cuts = {c.unit: c for c in run.of(WorkCut)}
    steps: dict[str, list[OuterStepCompleted]] = {}
    for scope, ev in run.events:
        if isinstance(ev, OuterStepCompleted):
            steps.setdefault(scope, []).append(ev)
    if not result.phase2_results:
        return  # Phase 2 never started (the finalize-now point came first)
    assert len(result.phase2_results) == L
    for i, r in enumerate(result.phase2_results):
        scope = f"phase2/path-{i}"
        if scope not in done:       # never started: Phase 1's solution stands in (REQ-OR-040)
            assert r.best_score == result.phase1.initial_score
            continue
        own = done[scope]
        assert r.best_score == own["best_score"]
        assert r.best_solution.solution_id == own["best_solution_id"]
        if own.get("cancelled"):    # cut: its best so far and the steps it completed
            assert cuts[scope].kept_score == r.best_score
            assert r.step_history[-1]["cut"] is True
            assert len(r.step_history) == own["steps_done"] + 1 == len(steps.get(scope, [])) + 1
        else:                       # finished: its full history
            assert scope not in cuts
            assert len(r.step_history) == T == len(steps[scope])
            assert [h["best_score_after_step"] for h in r.step_history] == \
                [s.best_score_after_step for s in steps[scope]]
    # ... and those are exactly what Phase 3 received.
    if result.phase3 is not None:
        assert [s.content for s in result.phase3.input_solutions] == \
            [r.best_solution.content for r in result.phase2_results]


def test_REQ_OR_026_a_slow_path_is_cut_while_a_fast_one_finishes():
    """The issue's reproduction: path-1 finishes, path-0 is still working when Phase 2's time is
    up. Phase 3 gets two different inputs: path-1's own result and path-0's best so far."""
    def durations(req: Any) -> float:
        return 60.0 if req.effect_id.startswith("phase2/path-0/") else 1.0

    run = simulate_clock(main, agent=agent, evaluate=sa.evaluate, config=config(1500), durations=durations)
    result = FinalResult.model_validate(run.completed.result)
    assert [h.phase for h in run.of(DeadlineHit)] == ["phase2"]
    p0, p1 = result.phase2_results
    assert p1.best_score == round(0.52 + 0.02 * T, 2) and len(p1.step_history) == T  # finished, full history
    assert p0.step_history[-1]["cut"] and len(p0.step_history) == 2                 # cut in its step 1 ...
    # ... keeping its best so far: step 1's first attempt (0.54) ran; step 0's second attempt wrote
    # the script of its first again, whose result was reused instead of running 60 s more.
    assert p0.best_score == 0.54 > result.phase1.initial_score
    (cut,) = run.of(WorkCut)
    assert cut.unit == "phase2/path-0" and cut.where == "outer step 1" and cut.steps_done == 1
    assert result.phase3 is not None and len({s.content for s in result.phase3.input_solutions}) == L
