"""The event store as the UI reads it: read-only connections, so the UI can never write to it.

SQLite is opened with ``mode=ro`` (SQLite refuses every write on that connection); PostgreSQL
with ``default_transaction_read_only=on`` (the server refuses every write in the session). A store
that does not exist yet (no SQLite file, or a file or PostgreSQL database without tables) is an
empty store until the first ``engine start`` creates it: the UI opens on it and shows runs as
they appear (``pending`` says so meanwhile). Nothing here ever creates the file. The
queries are the stores' own row shapes, parsed by the stores' own code (store.sealing), so an
envelope read here is the envelope ``engine log`` reads.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from events.base import Envelope
from store import sqlite_artifacts
from store.artifacts import ArtifactReader
from store.base import NotAnEngineDatabase, RunNotFound, StoreError
from store.sealing import envelopes_from_rows
from store.snapshots import StoredSnapshot, postgres_table, sqlite_table

APP_MARKER = "mle-engine-event-store"
# Read as sealed unless a page asks for them whole (``resolve``): agent calls' prompts, most of a
# long run's stored bytes, are shown only on a solution's page and an event's own page.
SHOWN_ON_REQUEST = frozenset({"AgentCallRequested"})
_EVENT_COLUMNS = "run_id, seq, type, version, scope, causation_seq, recorded_at, payload, prev_hash, hash"
_CHUNK = 4096


@dataclass(frozen=True)
class Head:
    """A run (or a campaign's stream) as the runs table names it: where its log ends."""

    run_id: str
    created_at: str
    strategy: str
    task: str
    last_seq: int


@dataclass(frozen=True)
class LeaseHolder:
    """The run's lease as recorded: which process drives it, and for how long its lease holds."""

    pid: int
    host: str
    expires_in_s: float   # negative once expired (by the store's clock: the server's on PostgreSQL)


class LogSource(Protocol):
    label: str

    def heads(self) -> dict[str, Head]: ...

    def driver(self, run_id: str) -> LeaseHolder | None: ...

    def read(self, run_id: str, from_seq: int = 1, *, whole: bool = True) -> list[Envelope]:
        """The run's events with their artifacts resolved; ``whole=False``: but those of the types
        ``SHOWN_ON_REQUEST``, left as sealed (references) until ``resolve`` is asked for them."""
        ...

    def resolve(self, run_id: str, envelopes: list[Envelope]) -> list[Envelope]:
        """``envelopes`` with their artifacts resolved (fetched now)."""
        ...

    def snapshot(self, run_id: str, format: int) -> StoredSnapshot | None:
        """The run's newest projection snapshot still valid against its events (store/snapshots.py)."""
        ...

    def pending(self) -> str: ...

    def close(self) -> None: ...


class SQLiteSource:
    """A SQLite event database opened read-only; safe to share between threads (one lock)."""

    def __init__(self, path: Path) -> None:
        self.label = str(path)
        self._path = path
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        with self._lock:
            self._connected()  # a foreign database is refused now; a missing one is waited for

    def _connected(self) -> sqlite3.Connection | None:
        """The read-only connection, once the file exists and has tables (None until then); a
        file whose tables are not the engine's is refused (NotAnEngineDatabase)."""
        if self._conn is not None or not self._path.is_file():
            return self._conn
        uri = f"file:{urllib.parse.quote(str(self._path.resolve()))}?mode=ro"
        try:
            conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False, timeout=5)
        except sqlite3.Error as exc:
            raise StoreError(f"{self._path}: cannot open the database read-only ({exc})") from None
        try:
            with _sqlite_errors(self.label):
                conn.execute("PRAGMA query_only=ON")
                tables = conn.execute("SELECT name FROM sqlite_master WHERE type='table'").fetchall()
                if tables:  # none yet: an empty file the engine is about to fill
                    _check_marker(tables, lambda: conn.execute("SELECT value FROM engine_meta WHERE key='app'")
                                  .fetchall(), self.label)
        except StoreError:
            conn.close()
            raise
        if not tables:
            conn.close()
            return None
        self._conn = conn
        return conn

    def pending(self) -> str:
        with self._lock, contextlib.suppress(StoreError):  # a store error is the feed's to show
            if self._connected() is not None:
                return ""
        return (f"no engine database at {self._path} yet: runs appear here as they start "
                f"(engine start --db {self._path})")

    def _query(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self._lock, _sqlite_errors(self.label):
            conn = self._connected()
            return [] if conn is None else conn.execute(sql, params).fetchall()

    def heads(self) -> dict[str, Head]:
        rows = self._query("SELECT run_id, created_at, strategy, task, head_seq FROM runs ORDER BY created_at")
        return {r[0]: Head(*r) for r in rows}

    def driver(self, run_id: str) -> LeaseHolder | None:
        rows = self._query("SELECT pid, host, expires_at FROM leases WHERE run_id=?", (run_id,))
        return LeaseHolder(int(rows[0][0]), str(rows[0][1]), float(rows[0][2]) - time.time()) if rows else None

    def read(self, run_id: str, from_seq: int = 1, *, whole: bool = True) -> list[Envelope]:
        if not self._query("SELECT 1 FROM runs WHERE run_id=?", (run_id,)):
            raise RunNotFound(f"no run {run_id!r} in {self.label}")
        out: list[Envelope] = []
        with self._lock, _sqlite_errors(self.label):
            assert self._conn is not None  # the run was found through it
            cur = self._conn.execute(f"SELECT {_EVENT_COLUMNS} FROM events WHERE run_id=? AND seq>=? ORDER BY seq",
                                     (run_id, from_seq))
            artifacts = self._artifacts()
            while rows := cur.fetchmany(_CHUNK):
                out.extend(shown_envelopes(run_id, rows, artifacts, whole))
        return out

    def resolve(self, run_id: str, envelopes: list[Envelope]) -> list[Envelope]:
        with self._lock, _sqlite_errors(self.label):
            return resolved_envelopes(run_id, envelopes, self._artifacts())

    def _artifacts(self) -> ArtifactReader:
        assert self._conn is not None
        return sqlite_artifacts.reader(self._conn, lambda: _sqlite_errors(self.label))

    def snapshot(self, run_id: str, format: int) -> StoredSnapshot | None:
        with self._lock, _sqlite_errors(self.label):
            conn = self._connected()
            return None if conn is None else sqlite_table(conn).latest(run_id, format)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()


class PostgresSource:
    """A PostgreSQL event database in a read-only session; one connection, one lock."""

    def __init__(self, url: str) -> None:
        import psycopg

        from store.postgres import redacted

        self.label = redacted(url)
        self._psycopg = psycopg
        self._url = url
        self._lock = threading.Lock()
        self._conn = self._connect()
        self._ready = False  # the engine's tables seen: a fresh database has none until the first run
        with self._lock:
            self._has_tables()

    def _has_tables(self) -> bool:
        """Whether the engine's tables exist (a schema with other tables only is refused)."""
        if not self._ready:
            tables = self._run(lambda conn: conn.execute("SELECT table_name FROM information_schema.tables "
                                                         "WHERE table_schema = current_schema()").fetchall())
            if tables:
                _check_marker(tables, lambda: self._run(lambda conn: conn.execute(
                    "SELECT value FROM engine_meta WHERE key='app'").fetchall()), self.label)
            self._ready = bool(tables)
        return self._ready

    def pending(self) -> str:
        with self._lock, contextlib.suppress(StoreError):  # a store error is the feed's to show
            if self._has_tables():
                return ""
        return f"no engine tables in {self.label} yet: runs appear here as they start (engine start --db URL)"

    def _connect(self) -> Any:
        try:
            return self._psycopg.connect(self._url, autocommit=True, connect_timeout=5,
                                         options="-c default_transaction_read_only=on")
        except self._psycopg.Error as exc:
            raise StoreError(f"cannot connect to the event database {self.label}: {exc}") from None

    def _query(self, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            if not self._has_tables():
                return []
            return self._run(lambda conn: conn.execute(sql, params).fetchall())

    def _run(self, work: Callable[[Any], Any]) -> Any:
        """One try on the live connection, one on a new one (a restarted server); then a clear error
        (the poller shows it on the pages and tries again on its next round)."""
        try:
            return work(self._conn)
        except self._psycopg.OperationalError:
            self._conn.close()
            self._conn = self._connect()
        try:
            return work(self._conn)
        except self._psycopg.OperationalError as exc:
            raise StoreError(f"the event database {self.label} is unreachable: {exc}") from None

    def heads(self) -> dict[str, Head]:
        rows = self._query("SELECT run_id, created_at, strategy, task, head_seq FROM runs ORDER BY created_at")
        return {r[0]: Head(r[0], r[1], r[2], r[3], int(r[4])) for r in rows}

    def driver(self, run_id: str) -> LeaseHolder | None:
        rows = self._query("SELECT pid, host, expires_at - extract(epoch from clock_timestamp())::double precision "
                           "FROM leases WHERE run_id=%s", (run_id,))
        return LeaseHolder(int(rows[0][0]), str(rows[0][1]), float(rows[0][2])) if rows else None

    def read(self, run_id: str, from_seq: int = 1, *, whole: bool = True) -> list[Envelope]:
        if not self._query("SELECT 1 FROM runs WHERE run_id=%s", (run_id,)):
            raise RunNotFound(f"no run {run_id!r} in {self.label}")

        def fetch(conn: Any) -> list[Envelope]:
            out: list[Envelope] = []
            artifacts = _pg_artifacts(conn)
            with conn.cursor() as cur:
                cur.execute(f"SELECT {_EVENT_COLUMNS} FROM events WHERE run_id=%s AND seq>=%s ORDER BY seq",
                            (run_id, from_seq))
                while rows := cur.fetchmany(_CHUNK):
                    out.extend(shown_envelopes(run_id, [(r[0], int(r[1]), *r[2:]) for r in rows], artifacts, whole))
            return out

        with self._lock:
            result: list[Envelope] = self._run(fetch)
            return result

    def resolve(self, run_id: str, envelopes: list[Envelope]) -> list[Envelope]:
        with self._lock:
            result: list[Envelope] = self._run(lambda conn: resolved_envelopes(run_id, envelopes, _pg_artifacts(conn)))
            return result

    def snapshot(self, run_id: str, format: int) -> StoredSnapshot | None:
        with self._lock:
            if not self._has_tables():
                return None
            stored: StoredSnapshot | None = self._run(lambda conn: postgres_table(conn).latest(run_id, format))
            return stored

    def close(self) -> None:
        with self._lock:
            self._conn.close()


def _pg_artifacts(conn: Any) -> ArtifactReader:
    from store import pg_artifacts  # psycopg is an optional extra

    return pg_artifacts.reader(lambda query, params: conn.execute(query, params).fetchall())


def shown_envelopes(run_id: str, rows: list[tuple[Any, ...]], artifacts: ArtifactReader,
                    whole: bool) -> list[Envelope]:
    """Rows as envelopes, resolved but (unless ``whole``) those of the types ``SHOWN_ON_REQUEST``."""
    if whole:
        return envelopes_from_rows(run_id, rows, artifacts)
    later = [r for r in rows if r[2] in SHOWN_ON_REQUEST]
    if not later:
        return envelopes_from_rows(run_id, rows, artifacts)
    now = [r for r in rows if r[2] not in SHOWN_ON_REQUEST]
    out = envelopes_from_rows(run_id, now, artifacts) + envelopes_from_rows(run_id, later, None)
    out.sort(key=lambda env: env.seq)
    return out


def resolved_envelopes(run_id: str, envelopes: list[Envelope], artifacts: ArtifactReader) -> list[Envelope]:
    """Each envelope with its references resolved (one left as sealed has them; others are as they are)."""
    out = []
    for env in envelopes:
        payload = artifacts.resolve(run_id, env.seq, env.payload)
        out.append(env if payload == env.payload else env.model_copy(update={"payload": payload}))
    return out


def open_source(db: str | Path | None) -> LogSource:
    """The database ``--db`` names (default $ENGINE_DB or ./engine-runs/engine.db), read-only."""
    from engine.run.lifecycle import DatabaseUrl, db_path

    where = db_path(db)
    if isinstance(where, DatabaseUrl):
        try:
            import psycopg  # noqa: F401 - only to name the missing extra clearly
        except ImportError:
            raise StoreError("a postgresql:// database needs the cluster extra: pip install 'mle-engine[cluster]'") \
                from None
        return PostgresSource(str(where))
    return SQLiteSource(Path(where))


def _check_marker(tables: list[tuple[Any, ...]], marker: Callable[[], list[tuple[Any, ...]]], label: str) -> None:
    names = {t[0] for t in tables}
    if "engine_meta" not in names or "events" not in names:
        raise NotAnEngineDatabase(f"{label} is not an engine database (no engine tables); pass --db with the right one")
    rows = marker()
    if not rows or rows[0][0] != APP_MARKER:
        raise NotAnEngineDatabase(f"{label} is not an engine database")


@contextmanager
def _sqlite_errors(label: str) -> Iterator[None]:
    try:
        yield
    except sqlite3.Error as exc:
        raise StoreError(f"{label}: {exc}") from None
