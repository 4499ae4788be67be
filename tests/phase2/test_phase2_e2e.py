"""End to end: a Phase-2-only run through the real engine, real scripts and the builtin agent."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from engine.agents import builtin
from events.base import NewEvent
from events.core import AgentCallRequested, EvaluationCompleted, EvaluationRequested, RunStarted
from events.domain import PipelineConfig
from events.score import Score
from handlers.runtime import Runtime

STRATEGY = "handlers.mlestar.phase2:phase2_only"


def _initial_solution(task, config: PipelineConfig, run_dir: Path) -> tuple[str, float]:
    """A first solution from the builtin agent's init role, scored by running it for real."""
    from engine.agents.base import AgentContext

    work = run_dir / "init"
    work.mkdir(parents=True)
    ctx = AgentContext(run_id="init", run_dir=run_dir, work_dir=work, task=task.description,
                       task_dir=task.public_dir, config=config, seed=3)
    reply = builtin.BuiltinBackend().answer(AgentCallRequested(
        effect_id="init", agent_type="init", prompt="", variables={
            "task_description": task.description.description, "model_name": "ridge regression",
            "example_code": ""}), ctx)
    code = reply.code
    shutil.copytree(task.public_dir, work / "input")
    (work / "final").mkdir()
    (work / "solution.py").write_text(code)
    proc = subprocess.run([sys.executable, "solution.py"], cwd=work, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    score = float(re.findall(r"Final Validation Performance:\s*([-+\d.eE]+)", proc.stdout)[-1])
    return code, score


@pytest.mark.slow
def test_phase2_only_run_through_the_engine_with_the_builtin_agent(tmp_path):
    from engine.run.lifecycle import drive, open_store, prepare_task, runs_root

    db = tmp_path / "engine.db"
    store = open_store(db)
    run_id = "phase2-e2e"
    run_dir = runs_root(db) / run_id
    task = prepare_task("diabetes", run_dir / "task")
    config = PipelineConfig(outer_loop_steps=2, inner_loop_steps=2, num_parallel_solutions=2,
                            time_limit_seconds=1800, max_debug_attempts=2, max_concurrent_evaluations=2)
    code, score = _initial_solution(task, config, tmp_path)

    started = RunStarted(strategy=STRATEGY, backend="builtin", seed=11, config=config.model_dump(mode="json"),
                         task=task.description, task_dir=str(task.public_dir.resolve()),
                         run_dir=str(run_dir.resolve()), params={"initial_solution": code, "initial_score": score})
    from engine.run.strategies import load_strategy

    decisions = Runtime(load_strategy(STRATEGY)).feed(started)
    store.create_run(run_id, strategy=STRATEGY, task=task.label)
    store.append(run_id, [NewEvent(event=started, scope="run"),
                          *[NewEvent(event=d.event, scope=d.scope, causation_seq=1) for d in decisions]],
                 expected_seq=0)
    state = drive(store, run_id, backend=builtin.BuiltinBackend(), handle_signals=False)
    assert state.status == "completed", state.error

    envelopes = list(store.read(run_id))
    # Both paths had evaluations in flight at the same time (REQ-OR-019).
    in_flight: dict[str, str] = {}
    overlapped = False
    for env in envelopes:
        ev = env.event()
        if isinstance(ev, EvaluationRequested) and env.scope.startswith("phase2/path-"):
            in_flight[ev.effect_id] = env.scope
        elif isinstance(ev, EvaluationCompleted):
            in_flight.pop(ev.effect_id, None)
        if len(set(in_flight.values())) == 2:
            overlapped = True
    assert overlapped

    result = state.result["phase2_results"]
    assert len(result) == 2 and all(len(r["step_history"]) == 2 for r in result)
    direction = task.description.metric_direction
    assert all(not Score(direction).improves(score, r["best_score"]) for r in result)    # never worse
    assert any(Score(direction).improves(r["best_score"], score) for r in result)        # one path improves
    assert state.phase2_path_statuses == {"path-0": "completed", "path-1": "completed"}
