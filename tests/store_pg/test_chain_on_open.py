"""`engine resume` checks a PostgreSQL run's hash chain before driving it (issue 61, "the log and
the run directory" 1), as it does a SQLite run's (tests/core/test_chain_on_open.py): a rewritten
event or a deleted last event is refused with verify's message, exit 2, nothing appended; an intact
run resumes and its verified head moves. Real server, real CLI, a real SIGKILLed driver."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from store.chain import VERIFIED_HEAD_KEY
from store.postgres import PostgresEventStore
from tests.core.helpers import assert_no_traceback, engine_env, run_engine, start_toy
from tests.store_pg.server import database_name, fresh_database


@pytest.fixture
def crashed(pg_url: str, tmp_path: Path) -> tuple[str, dict[str, str]]:
    """A toy run on its own database whose driver died after seq 14; (url, env)."""
    url = fresh_database(pg_url, database_name(tmp_path))
    env = engine_env(ENGINE_RUNS_DIR=str(tmp_path / "runs"))
    proc = run_engine(*start_toy(url, "R"), env={**env, "ENGINE_FAILPOINT_KILL_AFTER_SEQ": "14"})
    assert proc.returncode != 0 and _events(url) >= 14, proc.stderr
    return url, env


def _sql(url: str, statement: str, *params: object) -> list[tuple]:
    with psycopg.connect(url, autocommit=True) as conn:
        cur = conn.execute(statement, params)
        return cur.fetchall() if cur.description else []


def _events(url: str) -> int:
    return int(_sql(url, "SELECT count(*) FROM events WHERE run_id='R'")[0][0])


def _verified_seq(url: str) -> int:
    rows = _sql(url, "SELECT value FROM engine_meta WHERE key=%s", VERIFIED_HEAD_KEY + "R")
    return int(rows[0][0].split()[0]) if rows else 0


def test_a_rewritten_event_is_refused(crashed) -> None:
    url, env = crashed
    before, seq = _events(url), _verified_seq(url) + 2
    _sql(url, "UPDATE events SET recorded_at='2020-01-01T00:00:00.000000+00:00' WHERE run_id='R' AND seq=%s", seq)
    proc = run_engine("resume", "R", "--db", url, env=env)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    message = " ".join(proc.stderr.split())
    assert f"TAMPERED: run R: first bad event is seq {seq}" in message and "so the run is not resumed" in message
    assert "code changed" not in message
    assert_no_traceback(proc)
    assert _events(url) == before


def test_a_deleted_last_event_is_named_and_an_intact_run_resumes(crashed) -> None:
    url, env = crashed
    last = _events(url)
    row = _sql(url, "SELECT * FROM events WHERE run_id='R' AND seq=%s", last)[0]
    _sql(url, "DELETE FROM events WHERE run_id='R' AND seq=%s", last)
    proc = run_engine("resume", "R", "--db", url, env=env)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"event {last}, the run's last, is missing (deleted)" in " ".join(proc.stderr.split())
    assert "expected to append" not in proc.stderr
    _sql(url, "INSERT INTO events VALUES (" + ",".join(["%s"] * len(row)) + ")", *row)  # restored
    done = run_engine("resume", "R", "--db", url, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert _verified_seq(url) == last  # checked when the resume opened the run
    store = PostgresEventStore(url, create=False)
    try:
        assert store.verify_chain("R") is None
    finally:
        store.close()
