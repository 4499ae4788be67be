"""Fixtures for the core tests: one uninterrupted toy run recorded by the real CLI."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pytest

from engine.harness import EvalContext
from events.base import Envelope
from tests.core.helpers import read_log, run_engine, start_toy


@dataclass(frozen=True)
class RecordedRun:
    db: Path
    run_id: str
    log: list[Envelope] = field(repr=False)


@pytest.fixture(scope="session")
def toy_run(tmp_path_factory: pytest.TempPathFactory) -> RecordedRun:
    """The toy strategy driven to completion once (`engine start --run-id R --seed 7`)."""
    db = tmp_path_factory.mktemp("toy-run") / "e.db"
    proc = run_engine(*start_toy(db, "R"))
    assert proc.returncode == 0, proc.stderr
    log = read_log(db, "R")
    assert log[-1].type == "RunCompleted"
    return RecordedRun(db=db, run_id="R", log=log)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def tiny_eval_context(tmp_path: Path) -> EvalContext:
    """A harness context on a two-row task, for scripts that only print lines for the harness."""
    public = tmp_path / "task"
    public.mkdir()
    (public / "train.csv").write_text("id,y\n1,0\n2,1\n")
    (public / "test.csv").write_text("id\n3\n")
    (public / "sample_submission.csv").write_text("id,y\n3,0\n")
    return EvalContext(run_dir=tmp_path / "run", task_dir=public, sample_submission=public / "sample_submission.csv",
                       subsample_limit=30000)
