"""SQLite event store (sqlite-utils for the schema, plain transactions for appends).

Durability: WAL with ``synchronous=FULL`` by default, so an append that returned survives a
power cut. Every append runs in ``BEGIN IMMEDIATE`` so the check of ``expected_seq`` and the
insert are one atomic step even with several processes on the same file.
"""

from __future__ import annotations

import sqlite3
import time
import urllib.parse
from collections.abc import Generator, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import IO

import events as _vocabulary  # noqa: F401 - registers every event type (verify_chain and import look types up by name)
from events.base import GENESIS_HASH, Envelope, NewEvent
from store import sqlite_artifacts
from store.artifacts import ArtifactReader, first_artifact_problem
from store.base import (
    ChainProblem,
    ConcurrencyError,
    DuplicateResultError,
    NotAnEngineDatabase,
    RunExists,
    RunInfo,
    RunNotFound,
    StorageDamaged,
    StorageTooNew,
    StoreError,
)
from store.chain import GENESIS, VERIFIED_HEAD_KEY, VerifiedHead, first_chain_problem
from store.jsonl import ExportContents, imported_rows, imported_run_row, read_jsonl, write_jsonl
from store.leases import take_lease
from store.sealing import envelopes_from_rows, seal
from store.sealing import now_iso as _now_iso
from store.sqlite_faults import into_wal, on_read_only_fs, translate
from store.sqlite_rows import NotUtf8, ReadUpTo, decoded

SCHEMA_VERSION = 2  # 2: artifacts (store/artifacts.py); a schema-1 file gains their tables when opened
APP_MARKER = "mle-engine-event-store"


class SQLiteEventStore:
    def __init__(self, path: str | Path, *, synchronous: str = "FULL", busy_timeout_ms: int = 5000,
                 create: bool = True) -> None:
        self.path = Path(path)
        if not create and not self.path.exists():
            raise NotAnEngineDatabase(f"{self.path}: no such database")
        # No header sniffing with open(): closing any descriptor of the file drops this process's
        # POSIX locks on it (SQLite's own connections included), after which another process may
        # delete the WAL under a live connection. SQLite itself refuses a non-database file (NOTADB).
        if synchronous.upper() not in {"OFF", "NORMAL", "FULL", "EXTRA"}:
            raise StoreError(f"synchronous must be OFF, NORMAL, FULL or EXTRA, not {synchronous!r}")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise translate(exc, self.path) from None
        conn = None
        try:
            # The busy timeout is SQLite's own bounded backoff: a lock held by another process is
            # waited for (sleeping longer each try) up to busy_timeout_ms, then named DatabaseLocked.
            conn = sqlite3.connect(str(self.path), timeout=busy_timeout_ms / 1000, isolation_level=None,
                                   check_same_thread=False)
            conn.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
            into_wal(conn, busy_timeout_ms / 1000)
            conn.execute(f"PRAGMA synchronous={synchronous.upper()}")
        except sqlite3.Error as exc:
            if conn is not None:
                conn.close()
            if not (self.path.exists() and on_read_only_fs(self.path)):
                raise translate(exc, self.path) from None
            conn = self._open_immutable()
        self.conn = conn
        self._ensure_schema()

    def _open_immutable(self) -> sqlite3.Connection:
        """On a read-only file system a WAL database cannot be opened as usual (it needs its -shm
        file): opened as immutable, its runs can still be read and exported; writes are refused."""
        uri = f"file:{urllib.parse.quote(str(self.path.resolve()))}?immutable=1"
        try:
            return sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise translate(exc, self.path) from None

    @contextmanager
    def _faults(self, run_id: str | None = None) -> Iterator[None]:
        """sqlite3 errors leave as named store errors; an open transaction is rolled back first."""
        try:
            yield
        except sqlite3.Error as exc:
            self._rollback()
            raise translate(exc, self.path, run_id) from None

    def _rollback(self) -> None:
        """Roll back if a transaction is still open: SQLite has already rolled it back itself after
        some errors (a full disk), and a failing ROLLBACK must never replace the error being raised."""
        if self.conn.in_transaction:
            try:
                self.conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass

    # --- schema -----------------------------------------------------------------------------

    def _table_names(self) -> set[str]:
        return {r[0] for r in self.conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}

    def _ensure_schema(self) -> None:
        try:
            tables = self._table_names()
            if tables and "engine_meta" not in tables:
                raise NotAnEngineDatabase(
                    f"{self.path} is a SQLite file but not an engine database "
                    f"(it has tables {sorted(tables)[:5]}); pass --db with the right file"
                )
            if "engine_meta" in tables:
                row = self.conn.execute("SELECT value FROM engine_meta WHERE key='app'").fetchone()
                if not row or row[0] != APP_MARKER:
                    raise NotAnEngineDatabase(f"{self.path} is not an engine database")
                self._check_schema_version()
                if "artifacts" not in tables:
                    sqlite_artifacts.add_tables(self.conn, SCHEMA_VERSION)
                return
            self.conn.execute("BEGIN IMMEDIATE")
            if "engine_meta" in self._table_names():  # another process created it meanwhile
                self.conn.execute("COMMIT")
                return self._ensure_schema()
            try:
                # sqlite-utils only to create the schema: importing it also imports pandas
                # (a second per `engine` command), which no other store operation needs.
                import sqlite_utils

                self.db = sqlite_utils.Database(self.conn)
                self.db.table("engine_meta").create({"key": str, "value": str}, pk="key")
                self.db.table("engine_meta").insert_all(
                    [{"key": "app", "value": APP_MARKER}, {"key": "schema", "value": str(SCHEMA_VERSION)}]
                )
                self.db.table("runs").create(
                    {"run_id": str, "created_at": str, "strategy": str, "task": str, "status": str,
                     "head_seq": int, "head_hash": str},
                    pk="run_id",
                )
                self.db.table("events").create(
                    {"run_id": str, "seq": int, "type": str, "version": int, "scope": str,
                     "causation_seq": int, "recorded_at": str, "payload": str, "prev_hash": str,
                     "hash": str, "result_of": str},
                    pk=("run_id", "seq"),
                    not_null={"type", "version", "scope", "recorded_at", "payload", "prev_hash", "hash"},
                )
                # The store itself refuses a second result for one effect (exactly-once results).
                self.conn.execute(
                    "CREATE UNIQUE INDEX events_one_result ON events(run_id, result_of) "
                    "WHERE result_of IS NOT NULL"
                )
                self.db.table("leases").create(
                    {"run_id": str, "token": str, "pid": int, "host": str, "expires_at": float}, pk="run_id"
                )
                sqlite_artifacts.create_tables(self.conn)
                self.conn.execute("COMMIT")
            except BaseException:
                self._rollback()
                raise
        except sqlite3.Error as exc:
            self._rollback()
            raise translate(exc, self.path) from None

    def _check_schema_version(self) -> None:
        row = self.conn.execute("SELECT value FROM engine_meta WHERE key='schema'").fetchone()
        version = int(row[0]) if row and str(row[0]).isdigit() else 0
        if version > SCHEMA_VERSION:
            raise StorageTooNew(
                f"{self.path} was written by a newer engine (schema {version}; this engine knows schema "
                f"{SCHEMA_VERSION}); use that newer engine, or `engine export RUN -o FILE` with it and "
                "`engine import FILE` here")

    # --- runs -------------------------------------------------------------------------------

    def create_run(self, run_id: str, *, strategy: str, task: str) -> None:
        try:
            self.conn.execute(
                "INSERT INTO runs(run_id, created_at, strategy, task, status, head_seq, head_hash) "
                "VALUES (?,?,?,?,?,0,?)",
                (run_id, _now_iso(), strategy, task, "running", GENESIS_HASH),
            )
        except sqlite3.IntegrityError:
            raise RunExists(f"run {run_id} already exists") from None
        except sqlite3.Error as exc:
            raise translate(exc, self.path) from None

    def get_run(self, run_id: str) -> RunInfo:
        with self._faults(run_id):
            row = self.conn.execute(
                "SELECT run_id, created_at, strategy, task, status, head_seq FROM runs WHERE run_id=?", (run_id,)
            ).fetchone()
        if row is None:
            raise RunNotFound(f"no run {run_id!r} in {self.path}; `engine runs` lists the runs")
        return RunInfo(*row)

    def list_runs(self) -> list[RunInfo]:
        with self._faults():
            rows = self.conn.execute(
                "SELECT run_id, created_at, strategy, task, status, head_seq FROM runs ORDER BY created_at"
            ).fetchall()
        return [RunInfo(*r) for r in rows]

    def set_status(self, run_id: str, status: str) -> None:
        with self._faults(run_id):
            self.conn.execute("UPDATE runs SET status=? WHERE run_id=?", (status, run_id))

    def last_seq(self, run_id: str) -> int:
        return self.get_run(run_id).last_seq

    # --- events -----------------------------------------------------------------------------

    def append(self, run_id: str, events: Sequence[NewEvent], expected_seq: int) -> list[Envelope]:
        if not events:
            return []
        with self._faults(run_id):
            self.conn.execute("BEGIN IMMEDIATE")
        try:
            head = self.conn.execute("SELECT head_seq, head_hash FROM runs WHERE run_id=?", (run_id,)).fetchone()
            if head is None:
                raise RunNotFound(f"no run {run_id!r}")
            head_seq, prev_hash = head
            if head_seq != expected_seq:
                raise ConcurrencyError(
                    f"run {run_id}: expected to append after seq {expected_seq}, but the log is at {head_seq}"
                )
            envelopes, rows, texts = seal(run_id, events, head_seq, prev_hash)
            sqlite_artifacts.insert(self.conn, texts)
            self.conn.executemany(
                "INSERT INTO events(run_id, seq, type, version, scope, causation_seq, recorded_at, payload, "
                "prev_hash, hash, result_of) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                rows,
            )
            last = envelopes[-1]
            self.conn.execute("UPDATE runs SET head_seq=?, head_hash=? WHERE run_id=?", (last.seq, last.hash, run_id))
            self.conn.execute("COMMIT")
            return envelopes
        except sqlite3.IntegrityError as exc:
            self._rollback()
            if "events_one_result" in str(exc) or "result_of" in str(exc):
                raise DuplicateResultError(f"run {run_id}: an effect's result is already recorded") from None
            raise ConcurrencyError(f"run {run_id}: {exc}") from None
        except sqlite3.Error as exc:
            self._rollback()
            raise translate(exc, self.path, run_id) from None
        except BaseException:
            self._rollback()
            raise

    def artifact_reader(self) -> ArtifactReader:
        return sqlite_artifacts.reader(self.conn, self._faults)

    def read(self, run_id: str, from_seq: int = 1) -> Generator[Envelope, None, None]:
        """The run's envelopes with their artifacts resolved (whole payloads)."""
        return self._read(run_id, from_seq, self.artifact_reader())

    def read_sealed(self, run_id: str, from_seq: int = 1) -> Generator[Envelope, None, None]:
        """The run's envelopes as sealed: payloads with artifact references (what the chain covers)."""
        return self._read(run_id, from_seq, None)

    def _read(self, run_id: str, from_seq: int, reader: ArtifactReader | None) -> Generator[Envelope, None, None]:
        self.get_run(run_id)
        with self._faults(run_id):
            cur = self.conn.execute(
                "SELECT run_id, seq, type, version, scope, causation_seq, recorded_at, payload, prev_hash, hash "
                "FROM events WHERE run_id=? AND seq>=? ORDER BY seq",
                (run_id, from_seq),
            )
        # Parsed a chunk at a time (store.sealing.envelopes_from_rows: the cyclic GC paused).
        size = 64  # growing chunks: reading just the first events stays cheap
        while True:
            with self._faults(run_id):
                rows = cur.fetchmany(size)
            if not rows:
                return
            size = min(size * 4, 4096)
            yield from envelopes_from_rows(run_id, rows, reader)

    def verify_chain(self, run_id: str) -> ChainProblem | None:
        """A damaged page under the run's events is a problem at the first seq that cannot be read;
        damage to the run's own row (its head) raises StorageDamaged. Then every artifact the run
        refers to is checked against its digest."""
        problem = self._chain_problem(run_id, GENESIS)[0]
        if problem is not None:
            return problem
        with self._faults(run_id):
            rows = self.conn.execute("SELECT seq, payload FROM events WHERE run_id=? ORDER BY seq", (run_id,))
            return first_artifact_problem(rows, self.artifact_reader())

    def check_chain(self, run_id: str) -> ChainProblem | None:
        """The chain from the run's last verified head on (store.chain); an intact chain's new head
        is recorded, unless the database is read-only (the next check then reads a little more)."""
        self.get_run(run_id)
        with self._faults(run_id):
            row = self.conn.execute("SELECT value FROM engine_meta WHERE key=?",
                                    (VERIFIED_HEAD_KEY + run_id,)).fetchone()
        start = VerifiedHead.decode(row[0] if row else None)
        problem, head = self._chain_problem(run_id, start)
        if problem is None and head != start:
            try:
                self.conn.execute("INSERT OR REPLACE INTO engine_meta(key, value) VALUES (?,?)",
                                  (VERIFIED_HEAD_KEY + run_id, head.encode()))
            except sqlite3.Error:  # read-only (an immutable open, a read-only file): nothing to keep it in
                pass
        return problem

    def _chain_problem(self, run_id: str, start: VerifiedHead) -> tuple[ChainProblem | None, VerifiedHead]:
        """The chain from ``start`` to the run's head, read in one snapshot (a live driver may be
        appending), and that head."""
        self.get_run(run_id)
        with self._faults(run_id):
            self.conn.execute("BEGIN")
            head_seq, head_hash = self.conn.execute("SELECT head_seq, head_hash FROM runs WHERE run_id=?",
                                                    (run_id,)).fetchone()
        read = ReadUpTo(start.seq)
        try:
            # Text columns are read as bytes and decoded here: a tampered byte may leave invalid UTF-8,
            # which sqlite3 would otherwise raise on while fetching (naming no seq).
            read.cur = self.conn.execute(
                "SELECT seq, CAST(type AS BLOB), version, CAST(scope AS BLOB), causation_seq, "
                "CAST(recorded_at AS BLOB), CAST(payload AS BLOB), CAST(prev_hash AS BLOB), CAST(hash AS BLOB), "
                "CAST(result_of AS BLOB) FROM events WHERE run_id=? AND seq>=? ORDER BY seq",
                (run_id, max(start.seq, 1)))
            problem = first_chain_problem(run_id, decoded(read), head_seq, head_hash, start)
        except NotUtf8 as bad:
            problem = ChainProblem(bad.seq, "a stored text column is not valid UTF-8")
        except sqlite3.Error as exc:
            error = translate(exc, self.path, run_id)
            if not isinstance(error, StorageDamaged):
                raise error from None
            problem = ChainProblem(read.last_seq + 1, f"the database file is damaged here, unreadable from this "
                                   f"event on ({exc}); events 1-{read.last_seq} read whole", damaged=True)
        finally:
            self._rollback()
        return problem, VerifiedHead(head_seq, head_hash)

    # --- leases -----------------------------------------------------------------------------

    def acquire_lease(self, run_id: str, ttl_s: float = 30.0) -> str:
        self.get_run(run_id)
        with self._faults(run_id):
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                token = take_lease(self.conn, run_id, ttl_s)
                self.conn.execute("COMMIT")
            except BaseException:
                self._rollback()
                raise
        return token

    def renew_lease(self, run_id: str, token: str, ttl_s: float = 30.0) -> None:
        with self._faults(run_id):
            cur = self.conn.execute("UPDATE leases SET expires_at=? WHERE run_id=? AND token=?",
                                    (time.time() + ttl_s, run_id, token))
        if cur.rowcount != 1:
            raise StoreError(f"run {run_id}: this driver's lease was taken over by another process")

    def release_lease(self, run_id: str, token: str) -> None:
        with self._faults(run_id):
            self.conn.execute("DELETE FROM leases WHERE run_id=? AND token=?", (run_id, token))

    # --- export / import --------------------------------------------------------------------

    def export_jsonl(self, run_id: str, out: IO[str]) -> int:
        return write_jsonl(run_id, self.read_sealed(run_id), out, self.artifact_reader())

    def import_jsonl(self, source: IO[str], *, allow_partial: bool = False) -> str:
        return self.import_export(read_jsonl(source, allow_partial=allow_partial))

    def import_export(self, contents: ExportContents) -> str:
        run = imported_run_row(contents)
        with self._faults():  # no run to resume: the advice is to import again
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                if self.conn.execute("SELECT 1 FROM runs WHERE run_id=?", (run[0],)).fetchone():
                    raise RunExists(f"run {run[0]} already exists in {self.path}")
                self.conn.execute("INSERT INTO runs(run_id, created_at, strategy, task, status, head_seq, head_hash) "
                                  "VALUES (?,?,?,?,?,?,?)", run)
                sqlite_artifacts.insert(self.conn, contents.artifacts)
                self.conn.executemany(
                    "INSERT INTO events(run_id, seq, type, version, scope, causation_seq, recorded_at, payload, "
                    "prev_hash, hash, result_of) VALUES (?,?,?,?,?,?,?,?,?,?,?)", imported_rows(contents.envelopes))
                self.conn.execute("COMMIT")
            except BaseException:
                self._rollback()
                raise
        return str(run[0])

    def close(self) -> None:
        self.conn.close()
