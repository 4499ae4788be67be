"""A real run rides through database faults (issue "Storage faults: a run rides through a database
restart"): `engine start --agent builtin --preset quick` on iris at its leanest (``LEAN_RUN``: every
phase runs, one model, one step, one round; the search is not the point), as a subprocess against a
server of the module's own, disturbed at sampled points of its own progress (when its log reaches K
events, never after a sleep):

* the server restarted (``pg_ctl stop -m fast`` then ``start``: every session is terminated, as in
  a managed database's routine restart) N times;
* the engine's session terminated (``pg_terminate_backend``) in the middle of an append: the test
  holds the run's head row, the append blocks on it inside its transaction, and is cut there;
* the acknowledgement of an append's COMMIT lost (tests/store_pg/proxy.py cuts the connection once
  the server has committed).

Each time the run completes in its first process (one DriverStarted: no resume), the chain
verifies, every event of an undisturbed run of the same seed is there exactly once, and the
decisions and the FinalResult equal that run's (tests/crash/harness.py compares them ignoring
times and the run's directory).
"""

from __future__ import annotations

import collections
import random
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest

from events.base import Envelope
from store.pg_local import LocalPostgres
from store.postgres import PostgresEventStore
from tests.core.helpers import engine_env, popen_engine
from tests.crash.harness import RUN_ID, Recipe, comparable_decisions, final_result
from tests.store_pg.proxy import AFTER_COMMIT, CommitCuttingProxy
from tests.store_pg.server import fresh_database
from tests.support.shared_runs import LEAN_RUN

RECIPE = Recipe(task="iris", agent="builtin", seed=3, settings=LEAN_RUN[1::2])
FAULTS_PER_RUN = 3  # N
DRIVER_EVENTS = frozenset({"DriverStarted", "DriverStopped"})


def _head(url: str) -> int:
    """How many events the run has (0 while the server is down or the run not created yet)."""
    try:
        with psycopg.connect(url, autocommit=True, connect_timeout=5) as conn:
            row = conn.execute("SELECT head_seq FROM runs WHERE run_id=%s", (RUN_ID,)).fetchone()
    except psycopg.Error:
        return 0
    return row[0] if row else 0


def _log(url: str) -> list[Envelope]:
    store = PostgresEventStore(url, create=False)
    try:
        assert store.verify_chain(RUN_ID) is None
        return list(store.read(RUN_ID))
    finally:
        store.close()


def _drive(url: str, work: Path, points: list[int], fault: Callable[[int], None],
           engine_url: str | None = None) -> tuple[subprocess.CompletedProcess[str], list[Envelope]]:
    """Start the run; each time its log reaches the next point, apply ``fault``."""
    work.mkdir(parents=True)
    proc = popen_engine(*RECIPE.start_args(engine_url or url),  # type: ignore[arg-type]
                        env=engine_env(ENGINE_RUNS_DIR=str(work)))
    try:
        floor = 0
        for k in points:
            # Past k, and past what the log held once the last fault was applied: the engine has
            # committed since, so each fault cuts a fresh operation, never the retry of the last one
            # (two sampled points inside one append would otherwise be one loss seen twice).
            target = max(k, floor + 1)
            deadline = time.monotonic() + 600  # a bound for a hung run only, never reached by a slow one
            while _head(url) < target and proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.02)
            assert proc.poll() is None, f"the run ended before the fault at event {k}: {proc.communicate()}"
            fault(k)
            floor = _head(url)
        out, err = proc.communicate(timeout=900)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err), _log(url)


@pytest.fixture(scope="module")
def reference(own_server: LocalPostgres, tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Envelope], Path]:
    work = tmp_path_factory.mktemp("undisturbed")
    url = fresh_database(own_server.url, "undisturbed")
    done, log = _drive(url, work / "runs", [], lambda k: None)
    assert done.returncode == 0, done.stderr[-3000:]
    assert log[-1].type == "RunCompleted"
    return log, work / "runs"


def _points(log: list[Envelope], seed: int) -> list[int]:
    """N distinct sampled events, after the run is set up and well before its end."""
    return sorted(random.Random(seed).sample(range(8, log[-1].seq - 10), FAULTS_PER_RUN))


def _check(done: subprocess.CompletedProcess[str], log: list[Envelope], work: Path,
           reference: tuple[list[Envelope], Path]) -> None:
    ref_log, ref_root = reference
    assert done.returncode == 0, done.stdout[-1000:] + done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    assert done.stderr.count("event_database_connection_lost") == FAULTS_PER_RUN, done.stderr[-3000:]
    assert done.stderr.count("event_database_reconnected") == FAULTS_PER_RUN
    assert [e.seq for e in log] == list(range(1, len(log) + 1))
    assert [e.type for e in log if e.type in DRIVER_EVENTS] == ["DriverStarted"]  # rode through: no resume

    def events(entries: list[Envelope]) -> collections.Counter[tuple[str, str, Any]]:
        return collections.Counter((e.type, e.scope, e.payload.get("effect_id"))
                                   for e in entries if e.type not in DRIVER_EVENTS)

    assert events(log) == events(ref_log)  # 0 lost, 0 written twice
    assert comparable_decisions(log, work) == comparable_decisions(ref_log, ref_root)
    assert final_result(log, work) == final_result(ref_log, ref_root)


@pytest.mark.slow
def test_run_rides_through_server_restarts(own_server: LocalPostgres, tmp_path: Path, reference) -> None:
    url = fresh_database(own_server.url, "restarted")

    def restart(_k: int) -> None:
        own_server.stop_server("fast")
        own_server.start_server()

    done, log = _drive(url, tmp_path / "runs", _points(reference[0], seed=1), restart)
    _check(done, log, tmp_path / "runs", reference)


@pytest.mark.slow
def test_run_rides_through_sessions_terminated_mid_append(own_server: LocalPostgres, tmp_path: Path,
                                                          reference) -> None:
    url = fresh_database(own_server.url, "terminated")

    def terminate_mid_append(_k: int) -> None:
        with psycopg.connect(url) as holder, psycopg.connect(url, autocommit=True) as admin:
            holder.execute("SELECT 1 FROM runs WHERE run_id=%s FOR UPDATE", (RUN_ID,))
            waiting: list[tuple[int]] = []
            deadline = time.monotonic() + 600  # a bound for a hung run only
            while not waiting and time.monotonic() < deadline:  # the engine's next append, blocked on the head row inside its transaction
                waiting = admin.execute(
                    "SELECT pid FROM pg_stat_activity WHERE datname=current_database() AND wait_event_type='Lock' "
                    "AND query LIKE %s AND pid<>%s", ("%FOR UPDATE%", holder.info.backend_pid)).fetchall()
                time.sleep(0.01)
            assert waiting, "the engine's append never came"
            assert admin.execute("SELECT pg_terminate_backend(%s)", waiting[0]).fetchone() == (True,)
            holder.rollback()

    done, log = _drive(url, tmp_path / "runs", _points(reference[0], seed=2), terminate_mid_append)
    _check(done, log, tmp_path / "runs", reference)


@pytest.mark.slow
def test_run_rides_through_lost_commit_acknowledgements(own_server: LocalPostgres, tmp_path: Path,
                                                        reference) -> None:
    url = fresh_database(own_server.url, "unacknowledged")
    with CommitCuttingProxy(own_server.socket_path) as proxy:

        def lose_next_acknowledgement(_k: int) -> None:
            cut = len(proxy.cuts)
            proxy.arm(AFTER_COMMIT)
            deadline = time.monotonic() + 600  # a bound for a hung run only
            while len(proxy.cuts) == cut and time.monotonic() < deadline:  # the next append: committed, unheard
                time.sleep(0.01)

        done, log = _drive(url, tmp_path / "runs", _points(reference[0], seed=3), lose_next_acknowledgement,
                           engine_url=proxy.url("unacknowledged"))
    assert proxy.cuts == [AFTER_COMMIT] * FAULTS_PER_RUN
    _check(done, log, tmp_path / "runs", reference)
