"""SQLite event store (sqlite-utils for the schema, plain transactions for appends).

Durability: WAL with ``synchronous=FULL`` by default, so an append that returned survives a
power cut. Every append runs in ``BEGIN IMMEDIATE`` so the check of ``expected_seq`` and the
insert are one atomic step even with several processes on the same file.
"""

from __future__ import annotations

import gc
import sqlite3
import time
from collections.abc import Generator, Iterator, Sequence
from pathlib import Path
from typing import IO

import events as _vocabulary  # noqa: F401 - registers every event type (verify_chain and import look types up by name)
from events.base import GENESIS_HASH, EffectResult, Envelope, NewEvent, canonical_json, event_class
from store.base import (
    ChainProblem,
    ConcurrencyError,
    DatabaseLocked,
    DuplicateResultError,
    NotAnEngineDatabase,
    RunExists,
    RunInfo,
    RunNotFound,
    StoreError,
)
from store.chain import StoredRow, first_chain_problem
from store.jsonl import read_jsonl, status_of, write_jsonl
from store.leases import take_lease
from store.sealing import envelope_from_row as _envelope
from store.sealing import now_iso as _now_iso
from store.sealing import payload_of as _payload_of
from store.sealing import seal

SCHEMA_VERSION = 1
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
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            conn = sqlite3.connect(str(self.path), timeout=busy_timeout_ms / 1000, isolation_level=None,
                                   check_same_thread=False)
            conn.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
            conn.execute("PRAGMA journal_mode=WAL")
            if synchronous.upper() not in {"OFF", "NORMAL", "FULL", "EXTRA"}:
                raise StoreError(f"synchronous must be OFF, NORMAL, FULL or EXTRA, not {synchronous!r}")
            conn.execute(f"PRAGMA synchronous={synchronous.upper()}")
        except sqlite3.DatabaseError as exc:
            raise self._translate(exc) from None
        self.conn = conn
        self._ensure_schema()

    # --- schema -----------------------------------------------------------------------------

    def _table_names(self) -> set[str]:
        return {r[0] for r in self.conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}

    def _translate(self, exc: sqlite3.Error) -> StoreError:
        text = str(exc)
        if "locked" in text or "busy" in text:
            return DatabaseLocked(f"{self.path} is locked by another process ({text}); try again shortly")
        if "not a database" in text or "file is encrypted" in text:
            return NotAnEngineDatabase(
                f"{self.path} is not an engine database (not even SQLite: {text}); pass --db with the right file")
        return StoreError(f"{self.path}: {text}")

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
                self.conn.execute("COMMIT")
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
        except sqlite3.DatabaseError as exc:
            raise self._translate(exc) from None

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
        except sqlite3.DatabaseError as exc:
            raise self._translate(exc) from None

    def get_run(self, run_id: str) -> RunInfo:
        row = self.conn.execute(
            "SELECT run_id, created_at, strategy, task, status, head_seq FROM runs WHERE run_id=?", (run_id,)
        ).fetchone()
        if row is None:
            raise RunNotFound(f"no run {run_id!r} in {self.path}; `engine runs` lists the runs")
        return RunInfo(*row)

    def list_runs(self) -> list[RunInfo]:
        rows = self.conn.execute(
            "SELECT run_id, created_at, strategy, task, status, head_seq FROM runs ORDER BY created_at"
        ).fetchall()
        return [RunInfo(*r) for r in rows]

    def set_status(self, run_id: str, status: str) -> None:
        self.conn.execute("UPDATE runs SET status=? WHERE run_id=?", (status, run_id))

    def last_seq(self, run_id: str) -> int:
        return self.get_run(run_id).last_seq

    # --- events -----------------------------------------------------------------------------

    def append(self, run_id: str, events: Sequence[NewEvent], expected_seq: int) -> list[Envelope]:
        if not events:
            return []
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            raise self._translate(exc) from None
        try:
            head = self.conn.execute("SELECT head_seq, head_hash FROM runs WHERE run_id=?", (run_id,)).fetchone()
            if head is None:
                raise RunNotFound(f"no run {run_id!r}")
            head_seq, prev_hash = head
            if head_seq != expected_seq:
                raise ConcurrencyError(
                    f"run {run_id}: expected to append after seq {expected_seq}, but the log is at {head_seq}"
                )
            envelopes, rows = seal(run_id, events, head_seq, prev_hash)
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
            self.conn.execute("ROLLBACK")
            if "events_one_result" in str(exc) or "result_of" in str(exc):
                raise DuplicateResultError(f"run {run_id}: an effect's result is already recorded") from None
            raise ConcurrencyError(f"run {run_id}: {exc}") from None
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise

    def read(self, run_id: str, from_seq: int = 1) -> Generator[Envelope, None, None]:
        self.get_run(run_id)
        cur = self.conn.execute(
            "SELECT run_id, seq, type, version, scope, causation_seq, recorded_at, payload, prev_hash, hash "
            "FROM events WHERE run_id=? AND seq>=? ORDER BY seq",
            (run_id, from_seq),
        )
        # Parsed a chunk at a time with the cyclic GC paused: building 100k payload dicts otherwise
        # triggers hundreds of collections that rescan the growing heap (~2/3 of the read time).
        size = 64  # growing chunks: reading just the first events stays cheap
        while rows := cur.fetchmany(size):
            size = min(size * 4, 4096)
            gc_was_on = gc.isenabled()
            gc.disable()
            try:
                chunk = [_envelope(row, _payload_of(run_id, row)) for row in rows]
            finally:
                if gc_was_on:
                    gc.enable()
            yield from chunk

    def verify_chain(self, run_id: str) -> ChainProblem | None:
        info = self.get_run(run_id)
        cur = self.conn.execute(
            # Text columns are read as bytes and decoded here: a tampered byte may leave invalid UTF-8,
            # which sqlite3 would otherwise raise on while fetching (naming no seq).
            "SELECT seq, CAST(type AS BLOB), version, CAST(scope AS BLOB), causation_seq, CAST(recorded_at AS BLOB), "
            "CAST(payload AS BLOB), CAST(prev_hash AS BLOB), CAST(hash AS BLOB), CAST(result_of AS BLOB) "
            "FROM events WHERE run_id=? ORDER BY seq", (run_id,)
        )
        head_hash = self.conn.execute("SELECT head_hash FROM runs WHERE run_id=?", (run_id,)).fetchone()[0]
        try:
            return first_chain_problem(run_id, _decoded(cur), info.last_seq, head_hash)
        except _NotUtf8 as bad:
            return ChainProblem(bad.seq, "a stored text column is not valid UTF-8")

    # --- leases -----------------------------------------------------------------------------

    def acquire_lease(self, run_id: str, ttl_s: float = 30.0) -> str:
        self.get_run(run_id)
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            raise self._translate(exc) from None
        try:
            token = take_lease(self.conn, run_id, ttl_s)
            self.conn.execute("COMMIT")
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        return token

    def renew_lease(self, run_id: str, token: str, ttl_s: float = 30.0) -> None:
        cur = self.conn.execute("UPDATE leases SET expires_at=? WHERE run_id=? AND token=?",
                                (time.time() + ttl_s, run_id, token))
        if cur.rowcount != 1:
            raise StoreError(f"run {run_id}: this driver's lease was taken over by another process")

    def release_lease(self, run_id: str, token: str) -> None:
        self.conn.execute("DELETE FROM leases WHERE run_id=? AND token=?", (run_id, token))

    # --- export / import --------------------------------------------------------------------

    def export_jsonl(self, run_id: str, out: IO[str]) -> int:
        return write_jsonl(self.read(run_id), out)

    def import_jsonl(self, source: IO[str]) -> str:
        envelopes = read_jsonl(source)
        run_id = envelopes[0].run_id
        first = envelopes[0]
        strategy = str(first.payload.get("strategy", "?"))
        task = str((first.payload.get("task") or {}).get("competition_id", "?"))
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            if self.conn.execute("SELECT 1 FROM runs WHERE run_id=?", (run_id,)).fetchone():
                raise RunExists(f"run {run_id} already exists in {self.path}")
            self.conn.execute(
                "INSERT INTO runs(run_id, created_at, strategy, task, status, head_seq, head_hash) VALUES (?,?,?,?,?,?,?)",
                (run_id, first.recorded_at, strategy, task, status_of(envelopes[-1].type), envelopes[-1].seq,
                 envelopes[-1].hash),
            )
            self.conn.executemany(
                "INSERT INTO events(run_id, seq, type, version, scope, causation_seq, recorded_at, payload, "
                "prev_hash, hash, result_of) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                [(e.run_id, e.seq, e.type, e.version, e.scope, e.causation_seq, e.recorded_at,
                  canonical_json(e.payload), e.prev_hash, e.hash,
                  e.payload.get("effect_id") if issubclass(event_class(e.type), EffectResult) else None)
                 for e in envelopes],
            )
            self.conn.execute("COMMIT")
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        return run_id

    def close(self) -> None:
        self.conn.close()


class _NotUtf8(Exception):
    def __init__(self, seq: int) -> None:
        self.seq = seq


def _decoded(rows: sqlite3.Cursor) -> Iterator[StoredRow]:
    for seq, typ, version, scope, cause, recorded_at, *texts in rows:
        try:
            typ, scope, recorded_at, *texts = (None if b is None else bytes(b).decode("utf-8")
                                               for b in (typ, scope, recorded_at, *texts))
        except UnicodeDecodeError:
            raise _NotUtf8(seq) from None
        yield (seq, typ, version, scope, cause, recorded_at, *texts)
