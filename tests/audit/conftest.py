"""Fixtures: a simulated MLE-STAR run (in memory, stored in SQLite), a real engine run with the
scripted agent on the toy task, and (slow) a real MLE-STAR run with the builtin agent on iris."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from engine.audit.runlog import RunLog, load_run
from tests.audit.helpers import SCRIPTED_AGENT, TOY_TASK, engine, store_sim_run


@dataclass(frozen=True)
class Recorded:
    db: Path
    run_id: str
    log: RunLog


def _sim_config():
    from events.domain import PipelineConfig

    return PipelineConfig(num_retrieved_models=3, outer_loop_steps=2, inner_loop_steps=2, num_parallel_solutions=2,
                          ensemble_rounds=2, time_limit_seconds=3600)


@pytest.fixture(scope="session")
def sim_run(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    """The whole MLE-STAR pipeline (real handlers) on a simulated clock, scripted answers."""
    from handlers.mlestar.pipeline import main
    from tests.pipeline import scripted_agent as sa
    from tests.pipeline.support import simulate_clock

    run = simulate_clock(main, agent=lambda r: sa.answer(r, cost_usd=0.002), evaluate=sa.evaluate,
                         config=_sim_config())
    assert run.completed is not None, run.failed
    db = tmp_path_factory.mktemp("audit-sim") / "e.db"
    store = store_sim_run(db, "SIM", run)
    return Recorded(db=db, run_id="SIM", log=load_run(store, "SIM"))


@pytest.fixture(scope="session")
def sim_phase1(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    """Phase 1 alone through ``tests.support.sim.simulate`` (retrieve, draft, merge, checks)."""
    from handlers.mlestar.phase1 import phase1_only
    from tests.pipeline import scripted_agent as sa
    from tests.support.sim import simulate

    run = simulate(phase1_only, agent=sa.answer, evaluate=sa.evaluate, config=_sim_config())
    assert run.completed is not None, run.failed
    db = tmp_path_factory.mktemp("audit-sim-p1") / "e.db"
    store = store_sim_run(db, "P1", run)
    return Recorded(db=db, run_id="P1", log=load_run(store, "P1"))


def _engine_run(db: Path, run_id: str, *args: str) -> Recorded:
    proc = engine("start", "--db", db, "--run-id", run_id, "--preset", "quick", *args, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    from store.sqlite import SQLiteEventStore

    return Recorded(db=db, run_id=run_id, log=load_run(SQLiteEventStore(db, create=False), run_id))


@pytest.fixture(scope="session")
def scripted_run(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    """The real engine (driver, harness, store) with the real MLE-STAR handlers; scripted answers."""
    db = tmp_path_factory.mktemp("audit-scripted") / "e.db"
    return _engine_run(db, "SCRIPTED", "--task", str(TOY_TASK), "--agent", SCRIPTED_AGENT)


@pytest.fixture(scope="session")
def iris_run(tmp_path_factory: pytest.TempPathFactory) -> Recorded:
    """MLE-STAR with the offline builtin agent on the smallest bundled task (the session's shared
    run: read it, or take a ``copy_run`` to write)."""
    from store.sqlite import SQLiteEventStore
    from tests.support.shared_runs import shared_iris_quick_run

    run = shared_iris_quick_run(tmp_path_factory)
    return Recorded(db=run.db, run_id=run.run_id, log=load_run(SQLiteEventStore(run.db, create=False), run.run_id))
