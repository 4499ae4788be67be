"""A real builtin MLE-STAR run made once per test session and shared by every test that only
reads it — across pytest-xdist workers too.

Five suites (end to end, audit, rerun, same-seed, sandbox) each need a whole quick run of the
builtin agent on iris, and two (the evolutionary strategy's end to end and merge suites) one
evolutionary run; made separately they cost minutes of `make test` apiece. The first worker that
asks makes it under an exclusive file lock in the directory all workers share (the parent of each
worker's base temp); the others wait on the lock and then read the finished run. A test that
writes (rerun adds a run) takes a private copy with ``copy_run``.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import sqlite3
import subprocess
import sys
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# The quick preset at its leanest (one model, one inner step, one ensemble round), for a test whose
# point is what a whole run does with an unusual task (its shape, its files), not the search: every
# phase still runs.
LEAN_RUN = ("--set", "num_retrieved_models=1", "--set", "inner_loop_steps=1", "--set", "ensemble_rounds=1")

IRIS_RUN_ID = "IRIS"
IRIS_SEED = "7"
IRIS_QUICK_ARGS = ("start", "--task", "iris", "--agent", "builtin", "--preset", "quick", "--seed", IRIS_SEED,
                   "--run-id", IRIS_RUN_ID, "--json")

# The evolutionary strategy with the builtin agent on iris: 30 steps and seed 2 give a merge whose
# child beats all its sources (tests/e2e/test_bundled_tasks.py).
EVOLVE_RUN_ID = "E"
EVOLVE_MAX_STEPS = 30
EVOLVE_ARGS = ("start", "--task", "iris", "--strategy", "evolve", "--agent", "builtin", "--set",
               f"max_steps={EVOLVE_MAX_STEPS}", "--seed", "2", "--run-id", EVOLVE_RUN_ID, "--json")


@dataclass(frozen=True)
class SharedRun:
    db: Path
    run_id: str
    summary: str  # `engine start --json` output


def _shared_root(factory: pytest.TempPathFactory) -> Path:
    base = factory.getbasetemp()
    # Under xdist each worker's base temp is <session root>/popen-gwN; the session root is shared.
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def shared_run(factory: pytest.TempPathFactory, name: str, args: tuple[str, ...], run_id: str) -> SharedRun:
    """`engine start` of args, made once per session in <session root>/name by whichever test asks first."""
    home = _shared_root(factory) / name
    home.mkdir(exist_ok=True)
    db, done = home / "engine.db", home / "summary.json"
    with open(home / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not done.exists():
            env = dict(os.environ, PYTHONPATH=str(ROOT))
            for var in ("ANTHROPIC_API_KEY", "ENGINE_DB"):
                env.pop(var, None)
            proc = subprocess.run([sys.executable, "-m", "engine.cli", *args, "--db", str(db)], cwd=ROOT,
                                  env=env, capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL)
            assert proc.returncode == 0, f"the shared run {name} failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
            done.write_text(proc.stdout)
    return SharedRun(db=db, run_id=run_id, summary=done.read_text())


def shared_iris_quick_run(factory: pytest.TempPathFactory) -> SharedRun:
    """`engine start` of IRIS_QUICK_ARGS (default sandbox), made once per session."""
    return shared_run(factory, "shared-iris-quick", IRIS_QUICK_ARGS, IRIS_RUN_ID)


def shared_evolve_run(factory: pytest.TempPathFactory) -> SharedRun:
    """`engine start` of EVOLVE_ARGS, made once per session: the evolutionary strategy's end to end
    suite and its merge suite read the same run."""
    return shared_run(factory, "shared-iris-evolve", EVOLVE_ARGS, EVOLVE_RUN_ID)


def copy_run(run: SharedRun, dest: Path) -> SharedRun:
    """A private copy of the shared run's database (SQLite's backup, consistent) and run directory."""
    dest.mkdir(parents=True, exist_ok=True)
    db = dest / run.db.name
    with closing(sqlite3.connect(run.db)) as src, closing(sqlite3.connect(db)) as dst:
        src.backup(dst)
    shutil.copytree(run.db.parent / run.run_id, dest / run.run_id, symlinks=True)
    return SharedRun(db=db, run_id=run.run_id, summary=run.summary)
