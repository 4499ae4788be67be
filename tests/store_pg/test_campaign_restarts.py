"""A campaign on PostgreSQL rides through server restarts (issue "Storage faults: a run rides
through a database restart": "a campaign's runs each burn an attempt"): 2 runs on local Ray, the
server restarted twice (``pg_ctl stop -m fast`` / ``start``) at points of the runs' own progress →
every run completes in its first attempt and its first driver session, every chain verifies.

Two runs (one task, two seeds): with two CPUs they run side by side, so each restart cuts both runs
mid-way; with one, the restart at 120 events still falls inside the second run."""

from __future__ import annotations

import time
from pathlib import Path

import psycopg
import pytest

from engine.run import lifecycle as runs_mod
from store.pg_local import LocalPostgres
from tests.campaign.support import SMALL_ARGS, campaign_state, status_json
from tests.core.helpers import engine_env, popen_engine
from tests.store_pg.server import fresh_database

NAME = "restarted"
RESTART_AT_TOTAL_EVENTS = (30, 120)  # the 2 runs log ~100 events each


def _run_events(url: str) -> int:
    """Events logged by the campaign's runs so far (0 while the server is down)."""
    try:
        with psycopg.connect(url, autocommit=True, connect_timeout=5) as conn:
            row = conn.execute("SELECT coalesce(sum(head_seq), 0) FROM runs WHERE strategy <> 'campaign'").fetchone()
    except psycopg.Error:
        return 0
    return int(row[0]) if row else 0


@pytest.mark.slow
def test_campaign_rides_through_two_server_restarts(own_server: LocalPostgres, tmp_path: Path) -> None:
    url = fresh_database(own_server.url, "campaign")
    env = engine_env(ENGINE_RUNS_DIR=str(tmp_path / "runs"))
    proc = popen_engine("campaign", "start", NAME, "--tasks", "iris", "--seeds", "0,1", *SMALL_ARGS,
                        "--db", url, "--json", env=env)
    try:
        for total in RESTART_AT_TOTAL_EVENTS:
            deadline = time.monotonic() + 900  # a bound for a hung campaign only
            while _run_events(url) < total and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.05)
            assert proc.poll() is None, f"the campaign ended before the restart at {total} events"
            own_server.stop_server("fast")
            own_server.start_server()
        stdout, stderr = proc.communicate(timeout=1200)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, stdout[-2000:] + stderr[-3000:]
    assert "Traceback" not in stderr, stderr[-3000:]
    assert "event_database_connection_lost" in stderr  # the campaign's own connection was cut too
    rows = {r["run_id"]: r for r in status_json(stdout)["runs"]}
    assert len(rows) == 2 and all(r["status"] == "completed" for r in rows.values()), rows
    store = runs_mod.open_store(runs_mod.db_path(url), create=False)
    try:
        cells = campaign_state(store, NAME).cells.values()
        assert [(c.run_id, c.attempts, c.failures) for c in cells if c.attempts != 1 or c.failures] == []
        for run_id in rows:
            assert store.verify_chain(run_id) is None
            log = list(store.read(run_id))
            assert [e.type for e in log if e.type.startswith("Driver")] == ["DriverStarted"], run_id
            assert log[-1].type == "RunCompleted"
    finally:
        store.close()
