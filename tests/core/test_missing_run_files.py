"""A missing run directory or missing task data is a stop, not a failure (issue 61, "the log and the
run directory" 4): `engine resume` checks both before any step, refuses with what is missing and what
to do (exit 2), appends nothing and leaves the run resumable; once restored, the resume completes.
Real CLI, real SQLite, a real SIGKILLed driver."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from replay.state import fold
from tests.core.helpers import TOY_TASK, assert_no_traceback, engine_env, read_log, run_engine, start_toy


@pytest.fixture
def crashed(tmp_path: Path) -> tuple[Path, Path]:
    """A toy run on its own copy of the task, its driver SIGKILLed after seq 14; (db, task)."""
    task = tmp_path / "task"
    shutil.copytree(TOY_TASK, task)
    db = tmp_path / "runs" / "e.db"
    args = start_toy(db, "R")
    args[args.index(str(TOY_TASK))] = str(task)
    proc = run_engine(*args, env=engine_env(ENGINE_FAILPOINT_KILL_AFTER_SEQ="14"))
    assert proc.returncode != 0 and fold(read_log(db, "R")).status == "running"
    return db, task


@pytest.mark.parametrize("what", ["run directory", "task data"])
def test_resume_stops_on_missing_files_and_completes_once_restored(crashed, what: str) -> None:
    db, task = crashed
    missing = db.parent / "R" if what == "run directory" else task
    assert missing.is_dir()
    aside = missing.with_name(missing.name + ".aside")
    missing.rename(aside)
    before = read_log(db, "R")
    proc = run_engine("resume", "R", "--db", db)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    message = " ".join(proc.stderr.split())
    expected = "the run's directory" if what == "run directory" else "the run's task data directory"
    assert f"{expected} {missing.resolve()} is missing; restore it and resume" in message, message
    assert_no_traceback(proc)
    assert read_log(db, "R") == before, "nothing is appended by a refused resume"
    aside.rename(missing)
    done = run_engine("resume", "R", "--db", db)
    assert done.returncode == 0, done.stdout + done.stderr
    assert fold(read_log(db, "R")).status == "completed"
