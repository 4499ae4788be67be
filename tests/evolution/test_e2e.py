"""End to end: ``engine start --strategy evolve`` with the builtin agent on the bundled iris task.

The run is the session's shared evolutionary run (tests/support/shared_runs.py: 30 steps, seed 2),
which tests/e2e/test_bundled_tasks.py's merge test also reads."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import events.phase3  # noqa: F401  (registers the finalization events read back below)
from events.core import RunCompleted, RunStarted
from events.domain import MetricDirection
from events.evolution import NodeAppended, PhaseOneEnded
from handlers.evolution.genes import LOCI
from handlers.evolution.journal import project_journal
from tests.support.shared_runs import EVOLVE_MAX_STEPS, shared_evolve_run

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_engine_start_evolve_with_the_builtin_agent(tmp_path_factory):
    run = shared_evolve_run(tmp_path_factory)

    from engine.run.lifecycle import open_store

    store = open_store(run.db)
    events = [env.event() for env in store.read(run.run_id)]
    done = [e for e in events if isinstance(e, RunCompleted)]
    assert done, "the run did not complete"
    result = done[0].result
    assert done[0].submission_path and Path(done[0].submission_path).is_file()
    nodes = [e for e in events if isinstance(e, NodeAppended)]
    assert len(nodes) == EVOLVE_MAX_STEPS and {n.operator for n in nodes} >= {"draft"}
    assert any(n.operator in ("merge", "mutate") for n in nodes)
    assert all(set(n.gene_sources) == set(LOCI) for n in nodes)
    end = [e for e in events if isinstance(e, PhaseOneEnded)][0]
    assert end.dead_rate is not None and end.dead_rate < 0.3          # plan §16: death rate after Phase 1
    direction = MetricDirection(next(e for e in events if isinstance(e, RunStarted)).task.metric_direction)
    journal = project_journal(events, direction)
    assert result["best_node"]["score"] == journal.best().score
    replay = subprocess.run([sys.executable, "-m", "engine.cli", "replay", run.run_id, "--db", str(run.db)], cwd=REPO,
                            env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True, text=True, timeout=300)
    assert replay.returncode == 0, replay.stdout + replay.stderr
