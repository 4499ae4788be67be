"""`engine rerun` on a recorded fixture (issue "Replay-based regression suite", item 4: re-runs are
deterministic). The fixture of an MLE-STAR run through the Claude backend is imported into a fresh
database with its task directory pointed at a freshly prepared copy of the bundled task (the only
rewrite; the hash chain is re-sealed), then `engine rerun` drives a NEW run with the replay backend
(every agent answer from the recording) re-executing every evaluation for real, and compares the
two runs' decisions: identical, exit code 0.
"""

from __future__ import annotations

import json
from pathlib import Path

from engine.run.lifecycle import prepare_task
from tests.core.helpers import engine_env, run_engine
from tests.replays.fixtures import BY_NAME, read_fixture, reseal, write_jsonl

FIXTURE = BY_NAME["mle-star-wine-claude"]


def _import_with_task(tmp_path: Path) -> Path:
    task = prepare_task(FIXTURE.task, tmp_path / "task")
    records = [e.model_dump(mode="json") for e in read_fixture(FIXTURE.path)]
    records[0]["payload"]["task_dir"] = str(task.public_dir.resolve())
    moved = tmp_path / "fixture.jsonl"
    write_jsonl(reseal(records), moved)
    db = tmp_path / "e.db"
    proc = run_engine("import", moved, "--db", db)
    assert proc.returncode == 0, proc.stderr
    return db


def test_engine_rerun_of_a_fixture_finds_no_difference(tmp_path: Path) -> None:
    db = _import_with_task(tmp_path)
    proc = run_engine("rerun", FIXTURE.run_id, "--run-id", "rerun-1", "--json", "--db", db,
                      env=engine_env(), timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    outcome = json.loads(proc.stdout)
    assert outcome["identical"] and outcome["status"] == "completed", outcome
    assert outcome["recorded_decisions"] == outcome["rerun_decisions"] > 100
    # The rerun is itself a recorded run that replays.
    replayed = run_engine("replay", "rerun-1", "--db", db)
    assert replayed.returncode == 0, replayed.stderr
