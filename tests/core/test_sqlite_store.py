"""The store contract for SQLiteEventStore, plus SQLite specifics: durability pragmas and
refusing files that are not engine databases (issue "Event-sourced core", Must show: store suite,
WAL + synchronous=FULL, clear errors)."""

from __future__ import annotations

import functools
import sqlite3
from pathlib import Path

import pytest

from store.base import NotAnEngineDatabase, StoreError
from store.sqlite import SQLiteEventStore
from tests.core.store_contract import EventStoreContract, note


class TestSQLiteStoreContract(EventStoreContract):
    def store_opener(self, tmp_path: Path):
        return functools.partial(SQLiteEventStore, tmp_path / "events.db")

    def plant_lease(self, store, run_id, pid, host, expires_at) -> None:
        store.conn.execute("INSERT OR REPLACE INTO leases(run_id, token, pid, host, expires_at) VALUES (?,?,?,?,?)",
                           (run_id, "planted", pid, host, expires_at))


def _pragma(db: Path, name: str):
    """Read a pragma as a fresh connection sees it (journal_mode is persistent in the file)."""
    conn = sqlite3.connect(db)
    try:
        return conn.execute(f"PRAGMA {name}").fetchone()[0]
    finally:
        conn.close()


def test_wal_and_synchronous_full_by_default(tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "e.db")
    assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store.conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    assert _pragma(tmp_path / "e.db", "journal_mode") == "wal"
    store.close()


@pytest.mark.parametrize("level,code", [("OFF", 0), ("NORMAL", 1), ("full", 2), ("EXTRA", 3)])
def test_synchronous_configurable(tmp_path: Path, level: str, code: int) -> None:
    store = SQLiteEventStore(tmp_path / "e.db", synchronous=level)
    assert store.conn.execute("PRAGMA synchronous").fetchone()[0] == code
    store.close()


def test_synchronous_invalid(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="synchronous"):
        SQLiteEventStore(tmp_path / "e.db", synchronous="SOMETIMES; DROP TABLE x")


def test_busy_timeout_configurable(tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "e.db", busy_timeout_ms=1234)
    assert store.conn.execute("PRAGMA busy_timeout").fetchone()[0] == 1234
    store.close()


def test_not_sqlite_file(tmp_path: Path) -> None:
    bogus = tmp_path / "notes.txt"
    bogus.write_text("these are my notes, not a database\n" * 20)
    with pytest.raises(NotAnEngineDatabase, match="not an engine database") as info:
        SQLiteEventStore(bogus)
    assert str(bogus) in str(info.value)
    assert bogus.read_text().startswith("these are my notes")  # left untouched


def test_foreign_sqlite_database(tmp_path: Path) -> None:
    foreign = tmp_path / "shop.db"
    conn = sqlite3.connect(foreign)
    conn.execute("CREATE TABLE customers(id INTEGER PRIMARY KEY, name TEXT)")
    conn.commit()
    conn.close()
    with pytest.raises(NotAnEngineDatabase, match="not an engine database") as info:
        SQLiteEventStore(foreign)
    assert "customers" in str(info.value)
    conn = sqlite3.connect(foreign)
    assert [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")] == ["customers"]
    conn.close()


def test_sqlite_with_wrong_marker(tmp_path: Path) -> None:
    db = tmp_path / "e.db"
    SQLiteEventStore(db).close()
    conn = sqlite3.connect(db)
    conn.execute("UPDATE engine_meta SET value='something-else' WHERE key='app'")
    conn.commit()
    conn.close()
    with pytest.raises(NotAnEngineDatabase):
        SQLiteEventStore(db)


def test_missing_database_without_create(tmp_path: Path) -> None:
    with pytest.raises(NotAnEngineDatabase, match="no such database"):
        SQLiteEventStore(tmp_path / "absent.db", create=False)
    assert not (tmp_path / "absent.db").exists()


def test_reopen_keeps_events(tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "e.db")
    store.create_run("R", strategy="toy", task="toy")
    written = store.append("R", [note(1), note(2)], expected_seq=0)
    store.close()
    again = SQLiteEventStore(tmp_path / "e.db", create=False)
    assert list(again.read("R")) == written
    again.close()
