"""A bundled task (real data, per-class probability submission), graded by the engine."""

from __future__ import annotations

import shutil
import subprocess
import sys

from engine.agents.base import AgentContext
from engine.agents.builtin import BuiltinBackend
from engine.grading import grader as grading
from engine.tasks import bundled, loader
from events.core import AgentCallRequested
from events.domain import PipelineConfig


def test_iris_logloss_test_script_is_gradable(tmp_path):
    task = loader.load_task(bundled.prepare_bundled("iris", tmp_path / "iris"))
    ctx = AgentContext(run_id="b", run_dir=tmp_path, work_dir=tmp_path, task=task.description,
                       task_dir=task.public_dir, config=PipelineConfig(), seed=3)
    backend = BuiltinBackend()

    def ask(agent_type, **variables):
        return backend.answer(AgentCallRequested(effect_id=agent_type, agent_type=agent_type, prompt="",
                                                 variables=variables), ctx)

    solution = ask("init", task_description="", model_name="logistic regression", example_code="").code
    script = ask("test", **{"task description": "", "final solution": solution}).code
    work = tmp_path / "work"
    (work / "final").mkdir(parents=True)
    shutil.copytree(task.public_dir, work / "input")
    (work / "s.py").write_text(script)
    proc = subprocess.run([sys.executable, "s.py"], cwd=work, capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr
    assert "Final Validation Performance:" in proc.stdout
    report = grading.grade_submission(task, work / "final" / "submission.csv")
    assert report.score < 0.5          # uniform probabilities score ln(3) = 1.10
