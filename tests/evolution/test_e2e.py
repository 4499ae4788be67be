"""End to end: ``engine start --strategy evolve`` with the builtin agent on the bundled wine task."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import events.phase3  # noqa: F401  (registers the finalization events read back below)
from events.core import RunCompleted
from events.domain import MetricDirection
from events.evolution import NodeAppended, PhaseOneEnded
from handlers.evolution.genes import LOCI
from handlers.evolution.journal import project_journal

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_engine_start_evolve_with_the_builtin_agent(tmp_path):
    db = tmp_path / "engine.db"
    env = {**os.environ, "PYTHONPATH": str(REPO), "ENGINE_TASKS_DIR": str(tmp_path / "tasks")}
    cmd = [sys.executable, "-m", "engine.cli", "start", "--task", "wine", "--strategy", "evolve", "--agent", "builtin",
           "--set", "max_steps=12", "--set", "phase1_target_nodes=4", "--set", "steps_per_epoch=4",
           "--db", str(db), "--run-id", "evo-e2e"]
    proc = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]

    from engine.run.lifecycle import open_store

    store = open_store(db)
    events = [env.event() for env in store.read("evo-e2e")]
    done = [e for e in events if isinstance(e, RunCompleted)]
    assert done, "the run did not complete"
    result = done[0].result
    assert done[0].submission_path and Path(done[0].submission_path).is_file()
    nodes = [e for e in events if isinstance(e, NodeAppended)]
    assert len(nodes) == 12 and {n.operator for n in nodes} >= {"draft"}
    assert any(n.operator in ("merge", "mutate") for n in nodes)
    assert all(set(n.gene_sources) == set(LOCI) for n in nodes)
    end = [e for e in events if isinstance(e, PhaseOneEnded)][0]
    assert end.dead_rate is not None and end.dead_rate < 0.3          # plan §16: death rate after Phase 1
    journal = project_journal(events, MetricDirection.maximize)
    assert result["best_node"]["score"] == journal.best().score
    replay = subprocess.run([sys.executable, "-m", "engine.cli", "replay", "evo-e2e", "--db", str(db)], cwd=tmp_path,
                            env=env, capture_output=True, text=True, timeout=300)
    assert replay.returncode == 0, replay.stdout + replay.stderr
