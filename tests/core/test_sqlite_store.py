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

    def run_sql(self, store, statement, params) -> None:
        store.conn.execute(statement, params)


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


def test_second_open_in_same_process_keeps_locks(tmp_path: Path) -> None:
    """Opening the database a second time in one process (e.g. a replay backend reading another run
    while the CLI's store is open) must not drop the first connection's POSIX locks: if it did,
    another process closing its connection would believe it was the last one and delete the WAL
    under the live connection (a known way to corrupt SQLite)."""
    import subprocess
    import sys

    db = tmp_path / "e.db"
    first = SQLiteEventStore(db)
    first.create_run("R", strategy="toy", task="toy")
    first.append("R", [note(1)], expected_seq=0)
    SQLiteEventStore(db, create=False).close()
    probe = ("import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); "
             "c.execute('SELECT count(*) FROM events').fetchall(); c.close()")
    subprocess.run([sys.executable, "-c", probe, str(db)], check=True)
    assert Path(str(db) + "-wal").exists(), "another process deleted the WAL of a live connection"
    first.append("R", [note(2)], expected_seq=1)
    first.close()
    again = SQLiteEventStore(db, create=False)
    assert [e.seq for e in again.read("R")] == [1, 2]
    again.close()


def test_fresh_database_opened_by_many_processes_at_once(tmp_path: Path) -> None:
    """Several processes creating the schema of one new file at once: none fails."""
    import multiprocessing

    ctx = multiprocessing.get_context("spawn")
    db = tmp_path / "new.db"
    procs = [ctx.Process(target=_open_and_close, args=(str(db),)) for _ in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0, 0, 0]
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()


def _open_and_close(path: str) -> None:
    SQLiteEventStore(path).close()


def test_read_large_log_in_chunks_keeps_gc_state(tmp_path: Path) -> None:
    """read() parses in growing chunks with the GC paused: every event comes back once, in order,
    from any seq, and the caller's GC setting is what it was (enabled or not)."""
    import gc

    store = SQLiteEventStore(tmp_path / "e.db", synchronous="OFF")
    store.create_run("R", strategy="toy", task="toy")
    head = 0
    while head < 9000:
        head += len(store.append("R", [note(head + i) for i in range(1000)], expected_seq=head))
    assert [e.seq for e in store.read("R")] == list(range(1, 9001))
    assert [e.payload["data"]["i"] for e in store.read("R", from_seq=4000)] == list(range(3999, 9000))
    assert gc.isenabled()
    partial = store.read("R")
    assert [next(partial).seq for _ in range(3)] == [1, 2, 3]
    partial.close()
    assert gc.isenabled()
    gc.disable()
    try:
        assert sum(1 for _ in store.read("R")) == 9000
        assert not gc.isenabled()
    finally:
        gc.enable()
    store.close()


def test_read_of_corrupt_payload_is_a_store_error(tmp_path: Path) -> None:
    import gc

    from store.base import CorruptLog

    db = tmp_path / "e.db"
    store = SQLiteEventStore(db)
    store.create_run("R", strategy="toy", task="toy")
    store.append("R", [note(1), note(2)], expected_seq=0)
    for bad, what in (("{not json", "not valid JSON"), ("[1, 2]", "not a JSON object")):
        store.conn.execute("UPDATE events SET payload=? WHERE seq=2", (bad,))
        with pytest.raises(CorruptLog, match=f"seq 2: stored payload is {what}"):
            list(store.read("R"))
        assert gc.isenabled()  # restored although the parse raised
    store.close()
