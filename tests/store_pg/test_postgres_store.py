"""The store contract on a real PostgreSQL server (issue 17: "It passes the same store contract
suite as SQLite, run against a real PostgreSQL server"), plus PostgreSQL specifics: URL handling,
clear errors, SQLite ⇄ PostgreSQL export/import with identical hashes."""

from __future__ import annotations

import functools
import io
from pathlib import Path

import psycopg
import pytest

from store.base import NotAnEngineDatabase, StoreError, StoreUnavailable
from store.postgres import PostgresEventStore, redacted
from store.sqlite import SQLiteEventStore
from tests.core.store_contract import EventStoreContract, note, request, result
from tests.store_pg.server import schema_for


class TestPostgresStoreContract(EventStoreContract):
    @pytest.fixture(autouse=True)
    def _server(self, pg_url: str) -> None:
        self.url = pg_url

    def store_opener(self, tmp_path: Path):
        return functools.partial(PostgresEventStore, self.url, schema=schema_for(tmp_path))

    def plant_lease(self, store, run_id, pid, host, expires_at) -> None:
        store.conn.execute(
            "INSERT INTO leases(run_id, token, pid, host, expires_at) VALUES (%s,'planted',%s,%s,%s) "
            "ON CONFLICT (run_id) DO UPDATE SET token='planted', pid=EXCLUDED.pid, host=EXCLUDED.host, "
            "expires_at=EXCLUDED.expires_at", (run_id, pid, host, expires_at))

    def run_sql(self, store, statement, params) -> None:
        store.conn.execute(statement.replace("?", "%s"), params)


def test_sqlite_export_imports_into_postgres_with_the_same_hashes(pg_url: str, tmp_path: Path) -> None:
    lite = SQLiteEventStore(tmp_path / "e.db")
    lite.create_run("X", strategy="toy", task="toy")
    lite.append("X", [request("e"), result("e", "ü ✓"), note(3, scope="phase1")], expected_seq=0)
    text = io.StringIO()
    lite.export_jsonl("X", text)
    pg = PostgresEventStore(pg_url, schema=schema_for(tmp_path))
    try:
        assert pg.import_jsonl(io.StringIO(text.getvalue())) == "X"
        assert list(pg.read("X")) == list(lite.read("X"))
        assert pg.verify_chain("X") is None
        pg.append("X", [note(4)], expected_seq=3)  # the chain continues on the new backend
        assert pg.verify_chain("X") is None
    finally:
        pg.close()
        lite.close()


def test_tampered_row_is_found(pg_url: str, tmp_path: Path) -> None:
    store = PostgresEventStore(pg_url, schema=schema_for(tmp_path))
    try:
        store.create_run("T", strategy="toy", task="toy")
        store.append("T", [note(1), note(2), note(3)], expected_seq=0)
        store.conn.execute("UPDATE events SET payload = replace(payload, 'note 2', 'note 9') WHERE seq=2")
        problem = store.verify_chain("T")
        assert problem is not None and problem.seq == 2 and "hash" in problem.reason
        store.conn.execute("DELETE FROM events WHERE run_id='T' AND seq=2")
        assert store.verify_chain("T").seq == 2
    finally:
        store.close()


def test_unreachable_server_is_a_clear_error_without_the_password(tmp_path: Path) -> None:
    url = f"postgresql://someone:s3cret@/engine?host={tmp_path}&port=5999"
    with pytest.raises(StoreUnavailable, match="cannot connect .* check --db") as info:
        PostgresEventStore(url, connect_timeout_s=2, reconnect_s=0)
    assert "s3cret" not in str(info.value)
    assert "s3cret" not in redacted(url)


def test_foreign_tables_refused(pg_url: str, tmp_path: Path) -> None:
    schema = schema_for(tmp_path)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f'CREATE SCHEMA "{schema}"')
        conn.execute(f'CREATE TABLE "{schema}".runs (x int)')
    with pytest.raises(NotAnEngineDatabase, match="not an engine database"):
        PostgresEventStore(pg_url, schema=schema)


def test_missing_store_not_created_when_asked(pg_url: str, tmp_path: Path) -> None:
    with pytest.raises(NotAnEngineDatabase, match="start a run first"):
        PostgresEventStore(pg_url, schema=schema_for(tmp_path), create=False)


def test_invalid_settings(pg_url: str) -> None:
    with pytest.raises(StoreError, match="synchronous_commit"):
        PostgresEventStore(pg_url, synchronous_commit="sometimes; DROP TABLE x")
    with pytest.raises(StoreError, match="not a PostgreSQL URL"):
        PostgresEventStore("mysql://x")
