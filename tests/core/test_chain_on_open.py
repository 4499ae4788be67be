"""Opening a run checks its hash chain first (issue 61, "the log and the run directory" 1):
`engine resume`, `engine rerun` and `engine replay` refuse a tampered run with verify's message
(the seq, what differs, what to do), exit 2, and append nothing; "the code changed since it was
recorded" is said only of an intact log; a deleted last event is named as such. Real CLI, real
SQLite (the PostgreSQL store passes the same check_chain contract, tests/core/store_contract.py)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from store.chain import VERIFIED_HEAD_KEY
from tests.core.helpers import assert_no_traceback, engine_env, read_log, run_engine, start_toy

CRASH_AFTER_SEQ = 14


@pytest.fixture
def crashed(tmp_path: Path) -> Path:
    """A toy run whose driver died (SIGKILL) after seq 14: resumable."""
    db = tmp_path / "e.db"
    proc = run_engine(*start_toy(db, "R"), env=engine_env(ENGINE_FAILPOINT_KILL_AFTER_SEQ=str(CRASH_AFTER_SEQ)))
    assert proc.returncode != 0
    assert len(read_log(db, "R")) >= CRASH_AFTER_SEQ
    return db


def _verified_seq(db: Path) -> int:
    """Where the last check of run R found its chain intact (0: never checked)."""
    conn = sqlite3.connect(db)
    try:
        row = conn.execute("SELECT value FROM engine_meta WHERE key=?", (VERIFIED_HEAD_KEY + "R",)).fetchone()
    finally:
        conn.close()
    return int(row[0].split()[0]) if row else 0


def _sql(db: Path, statement: str, *params: object) -> None:
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        conn.execute(statement, params)
    finally:
        conn.close()


def _refused(proc, seq: int, doing: str) -> None:
    assert proc.returncode == 2, proc.stdout + proc.stderr
    message = " ".join(proc.stderr.split())
    assert f"TAMPERED: run R: first bad event is seq {seq}" in message, message
    assert f"so the run is not {doing}" in message and "engine verify R" in message, message
    assert "code changed" not in message, message
    assert_no_traceback(proc)


def test_resume_refuses_a_tampered_timestamp_and_appends_nothing(crashed: Path) -> None:
    """An event of the session that crashed (appended after the run was last checked, at its start)."""
    before = read_log(crashed, "R")
    seq = _verified_seq(crashed) + 2
    assert seq < len(before)
    _sql(crashed, "UPDATE events SET recorded_at='2020-01-01T00:00:00.000000+00:00' WHERE run_id='R' AND seq=?",
         seq)
    proc = run_engine("resume", "R", "--db", crashed)
    _refused(proc, seq, "resumed")
    assert len(read_log(crashed, "R")) == len(before)


def test_a_changed_decision_is_named_tampered_not_changed_code(crashed: Path) -> None:
    decision = next(e for e in read_log(crashed, "R")
                    if e.type == "AgentCallRequested" and e.seq > _verified_seq(crashed))
    _sql(crashed, """UPDATE events SET payload=replace(payload, '"prompt":"', '"prompt":"forged ')
                     WHERE run_id='R' AND seq=?""", decision.seq)
    assert read_log(crashed, "R")[decision.seq - 1].payload != decision.payload
    _refused(run_engine("resume", "R", "--db", crashed), decision.seq, "resumed")


def test_a_deleted_last_event_is_named(crashed: Path) -> None:
    last = len(read_log(crashed, "R"))
    _sql(crashed, "DELETE FROM events WHERE run_id='R' AND seq=?", last)
    proc = run_engine("resume", "R", "--db", crashed)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    message = " ".join(proc.stderr.split())
    assert f"event {last}, the run's last, is missing (deleted)" in message, message
    assert "expected to append" not in message
    assert_no_traceback(proc)


def test_an_intact_run_resumes_and_its_verified_head_is_kept(crashed: Path) -> None:
    crashed_at = len(read_log(crashed, "R"))
    assert 0 < _verified_seq(crashed) < crashed_at  # checked when the run started
    proc = run_engine("resume", "R", "--db", crashed)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert _verified_seq(crashed) == crashed_at  # checked again when the resume opened the run


def test_replay_and_rerun_refuse_a_tampered_run(toy_run, tmp_path: Path) -> None:
    db = tmp_path / "copy.db"
    source = sqlite3.connect(toy_run.db)
    target = sqlite3.connect(db)
    source.backup(target)
    source.close()
    target.close()
    # The shared toy run may have been opened (and so checked to its end) by other tests: this copy
    # forgets that check, so the tampered event lies after the last verified one whatever ran before.
    _sql(db, "DELETE FROM engine_meta WHERE key=?", VERIFIED_HEAD_KEY + "R")
    seq = _verified_seq(db) + 3
    _sql(db, "UPDATE events SET scope='elsewhere' WHERE run_id='R' AND seq=?", seq)
    _refused(run_engine("replay", "R", "--db", db), seq, "replayed")
    _refused(run_engine("rerun", "R", "--db", db, "--run-id", "R2"), seq, "rerun")
    assert [r[0] for r in sqlite3.connect(db).execute("SELECT run_id FROM runs")] == ["R"]
