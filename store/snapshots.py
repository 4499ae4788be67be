"""Projection snapshots, kept beside a run's events in the same database (SQLite or PostgreSQL).

A snapshot is a fold of a run up to one event (``replay/snapshot.py`` makes and reads it); this
module only stores the bytes (store/ does not import replay/). A row names the seq and hash of the event it folds up to, and
``latest`` hands a snapshot back only while that event still carries that hash: an event
rewritten after the snapshot was taken (and every event before it, which that hash chains) makes
the snapshot invisible, so the fold starts over from the first event and the chain check names
the change. Snapshots are derived data: never exported, never checked by ``verify``; losing them
costs one full fold.

The table is created by the first save, so a database written before snapshots existed needs no
migration, and a read-only reader (the UI) of such a database simply finds none.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from store.base import StoreError

_TABLE = ("CREATE TABLE IF NOT EXISTS snapshots (run_id TEXT NOT NULL, seq INTEGER NOT NULL, "
          "hash TEXT NOT NULL, format INTEGER NOT NULL, state TEXT NOT NULL, PRIMARY KEY (run_id, seq))")
KEEP = 2  # the latest and the one before it: a reader racing a save still finds one

Rows = list[tuple[Any, ...]]


@dataclass(frozen=True)
class StoredSnapshot:
    """One stored snapshot: the fold up to event ``seq`` (hash ``hash``), as ``replay.snapshot``
    encoded it in its ``format``."""

    seq: int
    hash: str
    state: str
    format: int


@dataclass(frozen=True)
class SnapshotTable:
    """The snapshots table through one connection: ``query`` returns rows, ``execute`` does not;
    ``mark`` is the dialect's parameter marker (``?`` for SQLite, ``%s`` for psycopg)."""

    query: Callable[[str, tuple[Any, ...]], Rows]
    execute: Callable[[str, tuple[Any, ...]], None]
    exists: Callable[[], bool]
    mark: str = "?"

    def _sql(self, text: str) -> str:
        return text.replace("?", self.mark)

    def latest(self, run_id: str, format: int) -> StoredSnapshot | None:
        """The run's newest snapshot of ``format`` whose event still carries the hash it was taken at."""
        if not self.exists():
            return None
        rows = self.query(self._sql(
            "SELECT s.seq, s.hash, s.state FROM snapshots s JOIN events e "
            "ON e.run_id = s.run_id AND e.seq = s.seq AND e.hash = s.hash "
            "WHERE s.run_id = ? AND s.format = ? ORDER BY s.seq DESC LIMIT 1"), (run_id, format))
        if not rows:
            return None
        return StoredSnapshot(seq=int(rows[0][0]), hash=str(rows[0][1]), state=str(rows[0][2]), format=format)

    def save(self, run_id: str, snapshot: StoredSnapshot) -> None:
        """Keep ``snapshot`` (a second save at the same seq keeps the first) and drop the older ones."""
        self.execute(_TABLE, ())
        self.execute(self._sql("INSERT INTO snapshots(run_id, seq, hash, format, state) VALUES (?,?,?,?,?) "
                               "ON CONFLICT (run_id, seq) DO NOTHING"),
                     (run_id, snapshot.seq, snapshot.hash, snapshot.format, snapshot.state))
        kept = self.query(self._sql("SELECT seq FROM snapshots WHERE run_id = ? ORDER BY seq DESC LIMIT ?"),
                          (run_id, KEEP))
        if len(kept) == KEEP:
            self.execute(self._sql("DELETE FROM snapshots WHERE run_id = ? AND seq < ?"), (run_id, int(kept[-1][0])))

    def stored_bytes(self, run_id: str) -> int:
        """What the run's snapshots take (their JSON), for the long-run bench's figures."""
        if not self.exists():
            return 0
        rows = self.query(self._sql("SELECT COALESCE(SUM(LENGTH(state)), 0) FROM snapshots WHERE run_id = ?"),
                          (run_id,))
        return int(rows[0][0])


def sqlite_table(conn: sqlite3.Connection) -> SnapshotTable:
    def exists() -> bool:
        return bool(conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='snapshots'").fetchall())

    def execute(sql: str, params: tuple[Any, ...]) -> None:
        conn.execute(sql, params)

    return SnapshotTable(query=lambda sql, params: conn.execute(sql, params).fetchall(), execute=execute,
                         exists=exists)


def postgres_table(conn: Any) -> SnapshotTable:
    """Through a psycopg connection in autocommit mode (the store's and the UI's)."""
    def exists() -> bool:
        return conn.execute("SELECT to_regclass('snapshots') IS NOT NULL").fetchone()[0] is True

    def execute(sql: str, params: tuple[Any, ...]) -> None:
        conn.execute(sql, params)

    return SnapshotTable(query=lambda sql, params: conn.execute(sql, params).fetchall(), execute=execute,
                         exists=exists, mark="%s")


def table_of(store: Any) -> SnapshotTable | None:
    """The snapshots table of an event store (``SQLiteEventStore`` or ``PostgresEventStore``);
    None for a store of another kind (a test's wrapper), which then simply has no snapshots."""
    try:
        conn = store.conn
    except (AttributeError, StoreError):  # not connected now (PostgreSQL): no snapshot this time
        return None
    if isinstance(conn, sqlite3.Connection):
        return sqlite_table(conn)
    if type(conn).__module__.startswith("psycopg"):
        return postgres_table(conn)
    return None


__all__ = ["KEEP", "SnapshotTable", "StoredSnapshot", "postgres_table", "sqlite_table", "table_of"]
