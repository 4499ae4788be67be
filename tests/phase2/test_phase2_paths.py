"""L parallel paths (REQ-OR-013/018..023/026/040) and the Phase-2-only strategy."""

from __future__ import annotations

import pytest

import handlers.mlestar.phase2 as phase2
from events.core import AgentCallRequested, EvaluationRequested, PhaseCompleted, PhaseStarted, SolutionRecorded
from events.phase2 import OuterStepCompleted, PathFailed
from tests.phase2.helpers import BASE, Agents, config, evaluate, run_phase2_sim, scoped
from tests.support.sim import make_task, simulate


def test_REQ_OR_013_018_L_paths_each_from_the_phase1_solution():
    agents = Agents()
    run, results = run_phase2_sim(agents, cfg=config(T=2, K=2, L=3))
    assert len(results) == 3
    for i in range(3):
        first = [r for r in agents.of("ablation") if r.effect_id.startswith(f"phase2/path-{i}/")][0]
        assert first.variables["solution_script"] == BASE
        assert len(scoped(run, OuterStepCompleted, f"phase2/path-{i}")) == 2
    starts = [e.phase for e in run.of(PhaseStarted)]
    assert starts == ["phase2/path-0", "phase2/path-1", "phase2/path-2"]


def test_REQ_OR_019_paths_run_concurrently():
    run, _ = run_phase2_sim(Agents(), cfg=config(T=1, K=1, L=2))
    # Before the first result comes back, both paths already have an agent call in flight.
    first_input = next(i for i, (scope, _) in enumerate(run.events) if scope == "input")
    in_flight = [e.effect_id for _, e in run.events[:first_input] if isinstance(e, AgentCallRequested)]
    assert in_flight == ["phase2/path-0/t0/ablation", "phase2/path-1/t0/ablation"]


def test_REQ_OR_020_021_scopes_sessions_and_effect_ids_per_path():
    agents = Agents()
    run, _ = run_phase2_sim(agents, cfg=config(T=1, K=2, L=2))
    own = ("ablation", "summarize", "extractor", "coder", "planner")
    owned = [req for req in agents.requests if req.agent_type in own]
    assert {req.effect_id.split("/")[1] for req in owned} == {"path-0", "path-1"}
    for req in owned:
        assert req.session_key == req.effect_id.split("/")[1]
    requested = [(scope, ev) for scope, ev in run.events if isinstance(ev, (AgentCallRequested, EvaluationRequested))]
    assert any(isinstance(ev, EvaluationRequested) for _, ev in requested)
    for scope, ev in requested:
        assert ev.effect_id.startswith(scope + "/")


def test_REQ_OR_022_040_failed_path_is_isolated_and_substituted(monkeypatch):
    real = phase2.run_phase2_inner_loop

    async def flaky(wf, *args, **kwargs):
        if wf.scope == "phase2/path-0":
            raise RuntimeError("inner loop crashed")
        return await real(wf, *args, **kwargs)

    monkeypatch.setattr(phase2, "run_phase2_inner_loop", flaky)
    run, results = run_phase2_sim(Agents(score=lambda p, t, k: 0.9), cfg=config(T=2, K=1, L=2), initial=0.8)
    bad, good = results
    assert bad.best_solution.content == BASE and bad.best_score == 0.8
    assert bad.step_history == [{"failed": True, "error": "RuntimeError: inner loop crashed"}]
    assert bad.best_solution.is_executable and bad.best_solution.score == 0.8
    assert good.best_score == 0.9 and len(good.step_history) == 2
    [failed] = run.of(PathFailed)
    assert failed.path == 0 and "inner loop crashed" in failed.error
    done = {e.phase: e.result for e in run.of(PhaseCompleted)}
    assert done["phase2/path-0"]["failed"] is True and done["phase2/path-1"]["failed"] is False


def test_REQ_OR_040_all_paths_failing_gives_copies_of_phase1(monkeypatch):
    async def boom(*args, **kwargs):
        raise ValueError("nope")

    monkeypatch.setattr(phase2, "run_phase2_outer_loop", boom)
    _, results = run_phase2_sim(Agents(), cfg=config(L=2))
    assert [r.best_solution.content for r in results] == [BASE, BASE]
    assert all(r.step_history[0]["failed"] for r in results)


def test_REQ_OR_026_deadline_stops_path_after_its_current_step_and_keeps_best():
    agents = Agents(score=lambda p, t, k: 0.9)
    run, [res] = run_phase2_sim(agents, cfg=config(T=3, K=2), deadline_s=9, initial=0.8)
    steps = res.step_history
    assert len(steps) == 3
    assert steps[0]["was_skipped"] is False
    assert [s["skip_reason"] for s in steps[1:]] == ["deadline reached"] * 2
    assert res.best_score == 0.9 and "make_model" in res.best_solution.content
    assert [e.budget_s for e in run.of(PhaseStarted)] == [9]
    assert not [r for r in agents.requests if "/t1/" in r.effect_id or "/t2/" in r.effect_id]


def test_REQ_OR_026_evaluation_timeouts_never_exceed_what_is_left():
    run, _ = run_phase2_sim(Agents(), cfg=config(T=1, K=2, time_limit_seconds=100000), deadline_s=50)
    evaluations = run.of(EvaluationRequested)
    assert evaluations
    for ev in evaluations:
        assert ev.timeout_s <= 50


def test_cancelled_path_records_how_far_it_got():
    from handlers.workflow import Workflow

    async def main(wf: Workflow):
        from events.domain import SolutionPhase, SolutionScript

        s0 = SolutionScript(content=BASE, phase=SolutionPhase.merged, score=0.8)
        wf.record_solution(BASE, phase=s0.phase, origin="test", parents=[])
        task = wf.spawn(phase2.run_phase2(wf, s0, 0.8), name="phase2")
        timer = wf.spawn(wf.sleep_until(12, name="guard"), name="timer")
        if await wf.first(task, timer) == 1:
            wf.cancel(task, "phase2 deadline reached")
        wf.complete(submission_path="", best_score=None, result={})

    run = simulate(main, agent=Agents(score=lambda p, t, k: 0.9), evaluate=evaluate,
                   config=config(T=3, K=1, L=2), task=make_task())
    done = {e.phase: e.result for e in run.of(PhaseCompleted)}
    assert done["phase2/path-0"]["cancelled"] is True and done["phase2/path-1"]["cancelled"] is True
    assert done["phase2/path-0"]["best_score"] >= 0.8


def test_phase2_only_strategy_runs_from_params():
    run = simulate(phase2.phase2_only, agent=Agents(score=lambda p, t, k: 0.85 if p == 1 else 0.82),
                   evaluate=evaluate, config=config(T=2, K=2, L=2), task=make_task(),
                   params={"initial_solution": BASE, "initial_score": 0.8})
    assert run.failed is None and run.completed is not None
    res = run.completed.result["phase2_results"]
    assert len(res) == 2 and [r["best_score"] for r in res] == [0.82, 0.85]
    assert run.completed.best_score == 0.85
    assert "created_at" not in res[0]["best_solution"]              # no wall clock in decisions
    assert res[0]["step_history"][0]["inner_loop_attempts"][0]["plan"]
    assert [e.phase for e in run.of(PhaseStarted)][0] == "phase2"
    assert [e for e in run.of(SolutionRecorded) if e.origin == "input"][0].content == BASE


def test_phase2_only_without_params_fails_the_run_with_a_reason():
    run = simulate(phase2.phase2_only, agent=Agents(), evaluate=evaluate, config=config(), task=make_task())
    assert run.failed is not None and "initial_solution" in run.failed.error


@pytest.mark.parametrize("direction,scores,expected", [("maximize", (0.7, 0.9), 0.9), ("minimize", (0.7, 0.9), 0.7)])
def test_phase2_only_best_follows_the_metric_direction(direction, scores, expected):
    run = simulate(phase2.phase2_only, agent=Agents(score=lambda p, t, k: scores[p]), evaluate=evaluate,
                   config=config(T=1, K=1, L=2), task=make_task(direction),
                   params={"initial_solution": BASE, "initial_score": 0.8})
    assert run.completed.best_score == expected
