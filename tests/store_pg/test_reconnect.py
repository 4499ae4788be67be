"""The PostgreSQL store rides through a lost connection (issue "Storage faults: a run rides through
a database restart"): an append whose COMMIT outcome is unknown is settled by the run's head — no
event lost or written twice —, a lease taken on a lost connection is still ours, reads and writes go
on after the server killed the session, and a server gone for good is a clear StoreUnavailable
after the stated budget."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import psycopg
import pytest
from structlog.testing import capture_logs

from store.base import StoreError, StoreUnavailable
from store.leases import RELEASE_BUDGET_S
from store.pg_local import LocalPostgres
from store.pg_reconnect import RECONNECT_ENV
from store.postgres import PostgresEventStore
from tests.core.store_contract import note, request, result
from tests.store_pg.proxy import AFTER_COMMIT, BEFORE_COMMIT, CommitCuttingProxy
from tests.store_pg.server import schema_for


def _rows(server: LocalPostgres, schema: str, run_id: str) -> list[tuple[int, str]]:
    with psycopg.connect(server.url, autocommit=True) as conn:
        return conn.execute(f'SELECT seq, hash FROM "{schema}".events WHERE run_id=%s ORDER BY seq',
                            (run_id,)).fetchall()


def test_commit_whose_acknowledgement_was_lost_is_settled_as_committed(own_server: LocalPostgres,
                                                                        tmp_path: Path) -> None:
    schema = schema_for(tmp_path)
    with CommitCuttingProxy(own_server.socket_path) as proxy:
        store = PostgresEventStore(proxy.url(), schema=schema)
        store.create_run("A", strategy="toy", task="toy")
        store.append("A", [note(1)], expected_seq=0)
        proxy.arm(AFTER_COMMIT)
        with capture_logs() as logs:
            got = store.append("A", [request("e"), result("e", "done"), note(4)], expected_seq=1)
        assert proxy.cuts == [AFTER_COMMIT]  # the server committed and the client never heard it
        assert [e.seq for e in got] == [2, 3, 4]
        assert _rows(own_server, schema, "A") == [(e.seq, e.hash) for e in store.read("A")]
        assert [(e.seq, e.hash) for e in got] == _rows(own_server, schema, "A")[1:]  # once, as returned
        assert [entry["event"] for entry in logs] == ["event_database_connection_lost", "event_database_reconnected"]
        store.append("A", [note(5)], expected_seq=4)  # the chain goes on from the settled head
        assert store.verify_chain("A") is None
        store.close()


def test_commit_that_never_reached_the_server_is_written_once(own_server: LocalPostgres, tmp_path: Path) -> None:
    schema = schema_for(tmp_path)
    with CommitCuttingProxy(own_server.socket_path) as proxy:
        store = PostgresEventStore(proxy.url(), schema=schema)
        store.create_run("B", strategy="toy", task="toy")
        proxy.arm(BEFORE_COMMIT)
        got = store.append("B", [note(1), note(2)], expected_seq=0)
        assert proxy.cuts == [BEFORE_COMMIT]
        assert [(e.seq, e.hash) for e in got] == _rows(own_server, schema, "B")
        assert store.verify_chain("B") is None
        store.close()


def test_lease_whose_acknowledgement_was_lost_is_ours(own_server: LocalPostgres, tmp_path: Path) -> None:
    schema = schema_for(tmp_path)
    with CommitCuttingProxy(own_server.socket_path) as proxy:
        store = PostgresEventStore(proxy.url(), schema=schema)
        store.create_run("L", strategy="toy", task="toy")
        proxy.arm(AFTER_COMMIT)
        token = store.acquire_lease("L")  # not LeaseHeld naming this very process
        assert proxy.cuts == [AFTER_COMMIT]
        store.renew_lease("L", token)
        store.release_lease("L", token)
        assert store.conn.execute("SELECT count(*) FROM leases").fetchone() == (0,)
        store.close()


def test_terminated_session_is_replaced_for_reads_and_writes(own_server: LocalPostgres, tmp_path: Path) -> None:
    store = PostgresEventStore(own_server.url, schema=schema_for(tmp_path))
    store.create_run("T", strategy="toy", task="toy")
    store.append("T", [note(1)], expected_seq=0)
    for _ in range(3):
        with psycopg.connect(own_server.url, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (store.conn.info.backend_pid,))
        assert [e.seq for e in store.read("T")] == list(range(1, store.last_seq("T") + 1))
        with psycopg.connect(own_server.url, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (store.conn.info.backend_pid,))
        last = store.last_seq("T")
        store.append("T", [note(last + 1)], expected_seq=last)
    assert store.last_seq("T") == 4 and store.verify_chain("T") is None
    store.close()


def test_server_gone_for_good_is_store_unavailable_after_the_budget(own_server: LocalPostgres,
                                                                   tmp_path: Path) -> None:
    proxy = CommitCuttingProxy(own_server.socket_path).__enter__()
    store = PostgresEventStore(proxy.url(), schema=schema_for(tmp_path), reconnect_s=1.5)
    store.create_run("G", strategy="toy", task="toy")
    token = store.acquire_lease("G")
    proxy.__exit__()  # every connection cut, nothing listening any more
    started = time.monotonic()
    with pytest.raises(StoreUnavailable, match=r"unreachable .*gave up after reconnecting .*engine resume") as info:
        store.append("G", [note(1)], expected_seq=0)
    assert time.monotonic() - started >= 1.5
    assert isinstance(info.value, StoreError)
    with pytest.raises(StoreUnavailable):
        store.release_lease("G", token)  # the driver logs this and reports the run's own outcome
    store.close()


def test_release_waits_out_only_a_short_outage(own_server: LocalPostgres, tmp_path: Path) -> None:
    proxy = CommitCuttingProxy(own_server.socket_path).__enter__()
    store = PostgresEventStore(proxy.url(), schema=schema_for(tmp_path), reconnect_s=600)
    store.create_run("R", strategy="toy", task="toy")
    token = store.acquire_lease("R")
    proxy.__exit__()
    started = time.monotonic()
    with pytest.raises(StoreUnavailable):
        store.release_lease("R", token)
    assert RELEASE_BUDGET_S <= time.monotonic() - started < 600
    store.close()


def test_reconnect_budget_setting(monkeypatch: pytest.MonkeyPatch, pg_url: str, tmp_path: Path) -> None:
    monkeypatch.setenv(RECONNECT_ENV, "soon")
    with pytest.raises(StoreError, match=f"{RECONNECT_ENV} must be a number of seconds"):
        PostgresEventStore(pg_url, schema=schema_for(tmp_path))
    monkeypatch.setenv(RECONNECT_ENV, "-1")
    with pytest.raises(StoreError, match=RECONNECT_ENV):
        PostgresEventStore(pg_url, schema=schema_for(tmp_path))


def test_opening_waits_for_a_server_that_is_restarting(own_server: LocalPostgres, tmp_path: Path) -> None:
    """A campaign's worker may open the store while the server restarts: that must not fail it."""
    opened: list[PostgresEventStore] = []
    own_server.stop_server("fast")
    with capture_logs() as logs:
        opener = threading.Thread(target=lambda: opened.append(PostgresEventStore(own_server.url,
                                                                                  schema=schema_for(tmp_path))))
        opener.start()
        deadline = time.monotonic() + 120  # a bound for a hung opener only
        while not any(entry["event"] == "event_database_unreachable" for entry in logs) \
                and time.monotonic() < deadline:
            time.sleep(0.01)
        own_server.start_server()
        opener.join(120)
    assert "No such file or directory" in next(e["reason"] for e in logs if e["event"] == "event_database_unreachable")
    store = opened[0]
    store.create_run("O", strategy="toy", task="toy")
    assert store.last_seq("O") == 0
    store.close()
