"""PostgreSQL event store (psycopg 3): the shared log for runs driven on several machines.

The same guarantees as the SQLite store, made with PostgreSQL's own means:

* one transaction per append; the run's head row is locked (``SELECT … FOR UPDATE``) so the check
  of ``expected_seq`` and the inserts are one atomic step for every client on every host;
* a unique partial index refuses a second result for one effect (exactly-once results);
* leases expire by the *server's* clock, so drivers on hosts whose clocks differ agree on expiry;
* durability: ``synchronous_commit=on`` (PostgreSQL's default, stated explicitly): an append that
  returned is flushed to the server's WAL;
* a lost connection (server restart, failover, terminated backend) is ridden through: the store
  reconnects for up to $ENGINE_DB_RECONNECT_S seconds (store/pg_reconnect.py) and runs the
  operation again. Every operation settles an unknown outcome first: an append whose COMMIT was
  sent but never acknowledged is found by the run's head (seq and hash of its last event), so it
  is neither lost nor written twice.

Events are stored byte for byte as sealed (payload as TEXT, not JSONB, which would reorder keys and
break the hash chain), so a run exported from SQLite imports here with the same hashes.
"""

from __future__ import annotations

import math
import os
import socket
import uuid
from collections.abc import Generator, Sequence
from typing import IO, Any

import psycopg
from psycopg import errors as pg_errors
from psycopg import sql

import events as _vocabulary  # noqa: F401 - registers every event type (verify_chain and import look types up by name)
from events.base import GENESIS_HASH, Envelope, NewEvent
from store import pg_artifacts
from store.artifacts import ArtifactReader, first_artifact_problem
from store.base import (
    ChainProblem,
    ConcurrencyError,
    DuplicateResultError,
    NotAnEngineDatabase,
    RunExists,
    RunInfo,
    RunNotFound,
    StoreError,
    StoreUnavailable,
)
from store.chain import GENESIS, VERIFIED_HEAD_KEY, VerifiedHead, first_chain_problem
from store.jsonl import ExportContents, imported_rows, imported_run_row, read_jsonl, write_jsonl
from store.leases import RELEASE_BUDGET_S, refuse_live_holder
from store.pg_reconnect import Reconnector, reconnect_budget_from_env
from store.sealing import envelopes_from_rows, now_iso, seal

SCHEMA_VERSION = 2  # 2: artifacts (store/artifacts.py); a schema-1 database gains their tables when opened
APP_MARKER = "mle-engine-event-store"
URL_PREFIXES = ("postgresql://", "postgres://")

_SCHEMA = """
CREATE TABLE engine_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE runs (run_id TEXT PRIMARY KEY, created_at TEXT NOT NULL, strategy TEXT NOT NULL, task TEXT NOT NULL,
                   status TEXT NOT NULL, head_seq BIGINT NOT NULL, head_hash TEXT NOT NULL);
CREATE TABLE events (run_id TEXT NOT NULL REFERENCES runs(run_id), seq BIGINT NOT NULL, type TEXT NOT NULL,
                     version INTEGER NOT NULL, scope TEXT NOT NULL, causation_seq BIGINT, recorded_at TEXT NOT NULL,
                     payload TEXT NOT NULL, prev_hash TEXT NOT NULL, hash TEXT NOT NULL, result_of TEXT,
                     PRIMARY KEY (run_id, seq));
CREATE UNIQUE INDEX events_one_result ON events(run_id, result_of) WHERE result_of IS NOT NULL;
CREATE TABLE leases (run_id TEXT PRIMARY KEY, token TEXT NOT NULL, pid INTEGER NOT NULL, host TEXT NOT NULL,
                     expires_at DOUBLE PRECISION NOT NULL);
""" + pg_artifacts.TABLES
_INSERT_EVENT = ("INSERT INTO events(run_id, seq, type, version, scope, causation_seq, recorded_at, payload, "
                 "prev_hash, hash, result_of) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)")
_SERVER_EPOCH = "extract(epoch from clock_timestamp())::double precision"


def is_postgres_url(value: object) -> bool:
    return isinstance(value, str) and value.startswith(URL_PREFIXES)


def redacted(url: str) -> str:
    """The URL without its password, for messages and logs."""
    try:
        parts = psycopg.conninfo.conninfo_to_dict(url)
    except psycopg.ProgrammingError:
        return "postgresql://(unparsable URL)"
    host = parts.get("host", "localhost")
    port = f":{parts['port']}" if parts.get("port") else ""
    user = f"{parts['user']}@" if parts.get("user") else ""
    return f"postgresql://{user}{host}{port}/{parts.get('dbname', '')}"


class PostgresEventStore:
    def __init__(self, url: str, *, schema: str | None = None, create: bool = True,
                 synchronous_commit: str = "on", connect_timeout_s: int = 10,
                 reconnect_s: float | None = None) -> None:
        """``schema``: a PostgreSQL schema holding the engine's tables (default: the connection's
        search_path, normally ``public``); several engine stores may share one database this way.
        ``reconnect_s``: how long to keep reconnecting after the connection is lost before raising
        StoreUnavailable (default $ENGINE_DB_RECONNECT_S, else 60 s); opening the store waits as
        long for a server that cannot be reached yet."""
        if not is_postgres_url(url):
            raise StoreError(f"not a PostgreSQL URL: {url!r} (expected postgresql://user@host:port/dbname)")
        if synchronous_commit not in {"on", "off", "local", "remote_write", "remote_apply"}:
            raise StoreError(f"synchronous_commit must be on, off, local, remote_write or remote_apply, "
                             f"not {synchronous_commit!r}")
        self.path = url  # what `engine` commands pass on as --db (e.g. to a replay backend)
        self.label = redacted(url)
        budget = reconnect_budget_from_env() if reconnect_s is None else reconnect_s

        def connect(timeout_s: float) -> psycopg.Connection:
            # libpq reads a connect_timeout under 2 as 2 (and 0 as "wait forever").
            conn = psycopg.connect(url, autocommit=True, connect_timeout=max(2, min(connect_timeout_s,
                                                                                   math.ceil(timeout_s))))
            try:
                conn.execute(f"SET synchronous_commit = {synchronous_commit}")
                if schema is not None:
                    conn.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))
            except BaseException:
                conn.close()
                raise
            return conn

        self._db = Reconnector(connect, label=self.label, budget_s=budget)
        try:
            self._db.open(connect_timeout_s)
        except StoreUnavailable:
            raise StoreUnavailable(
                f"cannot connect to the event database {self.label}: {self._db.last_reason} (tried for "
                f"{budget:g} s); check --db / $ENGINE_DB and that the server is running") from None
        except psycopg.ProgrammingError as exc:
            raise StoreError(f"invalid PostgreSQL URL {self.label}: {exc}") from None
        if schema is not None:
            self.conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema)))
        self._db.run(lambda conn, _retried: self._ensure_schema(conn, create))

    @property
    def conn(self) -> psycopg.Connection:
        """The live connection (tests plant rows through it); replaced when it is lost."""
        if self._db.conn is None:
            raise StoreUnavailable(f"the event database {self.label} is not connected")
        return self._db.conn

    # --- schema -----------------------------------------------------------------------------

    def _ensure_schema(self, conn: psycopg.Connection, create: bool) -> None:
        with conn.transaction():
            # One creator at a time: concurrent first opens would otherwise race on CREATE TABLE.
            conn.execute("SELECT pg_advisory_xact_lock(hashtext(current_schema() || ':mle-engine'))")
            tables = {r[0] for r in conn.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()")}
            if "engine_meta" in tables:
                row = conn.execute("SELECT value FROM engine_meta WHERE key='app'").fetchone()
                if not row or row[0] != APP_MARKER:
                    raise NotAnEngineDatabase(f"{self.label} has an engine_meta table that is not the engine's")
                if "artifacts" not in tables:
                    pg_artifacts.add_tables(conn, SCHEMA_VERSION)
                return
            if tables & {"runs", "events", "leases"}:
                raise NotAnEngineDatabase(
                    f"{self.label} already has tables {sorted(tables)[:5]} but is not an engine database; "
                    "use another database or schema")
            if not create:
                raise NotAnEngineDatabase(f"{self.label} holds no engine event store yet; start a run first")
            conn.execute(_SCHEMA)
            conn.execute("INSERT INTO engine_meta(key, value) VALUES ('app', %s), ('schema', %s)",
                         (APP_MARKER, str(SCHEMA_VERSION)))

    def _fetch(self, query: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """A read-only query, retried on a new connection if the connection is lost."""
        return self._db.run(lambda conn, _retried: conn.execute(query, params).fetchall())

    # --- runs -------------------------------------------------------------------------------

    def create_run(self, run_id: str, *, strategy: str, task: str) -> None:
        mine = (now_iso(), strategy, task)

        def insert(conn: psycopg.Connection, retried: bool) -> None:
            try:
                conn.execute("INSERT INTO runs(run_id, created_at, strategy, task, status, head_seq, head_hash) "
                             "VALUES (%s,%s,%s,%s,'running',0,%s)", (run_id, *mine, GENESIS_HASH))
            except pg_errors.UniqueViolation:
                row = conn.execute("SELECT created_at, strategy, task FROM runs WHERE run_id=%s",
                                   (run_id,)).fetchone()
                if retried and row == mine:
                    return  # our own insert, committed before the connection was lost
                raise RunExists(f"run {run_id} already exists") from None

        self._db.run(insert)

    def get_run(self, run_id: str) -> RunInfo:
        rows = self._fetch("SELECT run_id, created_at, strategy, task, status, head_seq FROM runs WHERE run_id=%s",
                           (run_id,))
        if not rows:
            raise RunNotFound(f"no run {run_id!r} in {self.label}; `engine runs` lists the runs")
        return RunInfo(*rows[0])

    def list_runs(self) -> list[RunInfo]:
        rows = self._fetch(
            "SELECT run_id, created_at, strategy, task, status, head_seq FROM runs ORDER BY created_at, run_id")
        return [RunInfo(*r) for r in rows]

    def set_status(self, run_id: str, status: str) -> None:
        self._db.run(lambda conn, _retried: conn.execute("UPDATE runs SET status=%s WHERE run_id=%s",
                                                         (status, run_id)))

    def last_seq(self, run_id: str) -> int:
        return self.get_run(run_id).last_seq

    # --- events -----------------------------------------------------------------------------

    def append(self, run_id: str, events: Sequence[NewEvent], expected_seq: int) -> list[Envelope]:
        if not events:
            return []
        sealed: list[Envelope] = []  # the last try's envelopes: how a lost COMMIT is recognised

        def write(conn: psycopg.Connection, retried: bool) -> list[Envelope]:
            with conn.transaction():
                head = conn.execute("SELECT head_seq, head_hash FROM runs WHERE run_id=%s FOR UPDATE",
                                    (run_id,)).fetchone()
                if head is None:
                    raise RunNotFound(f"no run {run_id!r}")
                head_seq, prev_hash = head
                if retried and sealed and (head_seq, prev_hash) == (sealed[-1].seq, sealed[-1].hash):
                    return list(sealed)  # the COMMIT whose acknowledgement was lost went through
                if head_seq != expected_seq:
                    raise ConcurrencyError(
                        f"run {run_id}: expected to append after seq {expected_seq}, but the log is at {head_seq}")
                envelopes, rows, texts = seal(run_id, events, head_seq, prev_hash)
                sealed[:] = envelopes
                with conn.cursor() as cur:
                    pg_artifacts.insert(cur, texts)
                    cur.executemany(_INSERT_EVENT, rows)
                last = envelopes[-1]
                conn.execute("UPDATE runs SET head_seq=%s, head_hash=%s WHERE run_id=%s",
                             (last.seq, last.hash, run_id))
            return envelopes

        try:
            return self._db.run(write)
        except pg_errors.UniqueViolation as exc:
            if exc.diag.constraint_name == "events_one_result":
                raise DuplicateResultError(f"run {run_id}: an effect's result is already recorded") from None
            raise ConcurrencyError(f"run {run_id}: {exc}") from None

    def artifact_reader(self) -> ArtifactReader:
        return pg_artifacts.reader(self._fetch)

    def read(self, run_id: str, from_seq: int = 1) -> Generator[Envelope, None, None]:
        """The run's envelopes with their artifacts resolved (whole payloads)."""
        return self._read(run_id, from_seq, self.artifact_reader())

    def read_sealed(self, run_id: str, from_seq: int = 1) -> Generator[Envelope, None, None]:
        """The run's envelopes as sealed: payloads with artifact references (what the chain covers)."""
        return self._read(run_id, from_seq, None)

    def _read(self, run_id: str, from_seq: int, reader: ArtifactReader | None) -> Generator[Envelope, None, None]:
        self.get_run(run_id)
        next_seq = from_seq
        deadline: float | None = None
        while True:
            try:
                with self._db.live().cursor() as cur:
                    cur.execute("SELECT run_id, seq, type, version, scope, causation_seq, recorded_at, payload, "
                                "prev_hash, hash FROM events WHERE run_id=%s AND seq>=%s ORDER BY seq",
                                (run_id, next_seq))
                    size = 64  # growing chunks (store.sealing.envelopes_from_rows)
                    while rows := cur.fetchmany(size):
                        size = min(size * 4, 4096)
                        for envelope in envelopes_from_rows(run_id, rows, reader):
                            next_seq = envelope.seq + 1
                            yield envelope
                return
            except psycopg.OperationalError as exc:
                deadline = self._db.recover(exc, deadline)  # then read on from the first event not yet yielded

    def verify_chain(self, run_id: str) -> ChainProblem | None:
        """The chain, then every artifact the run refers to against its digest."""
        problem = self._chain_problem(run_id, GENESIS)[0]
        if problem is not None:
            return problem
        rows = self._fetch("SELECT seq, payload FROM events WHERE run_id=%s ORDER BY seq", (run_id,))
        return first_artifact_problem(rows, self.artifact_reader())

    def check_chain(self, run_id: str) -> ChainProblem | None:
        """The chain from the run's last verified head on (store.chain); an intact chain's new head
        is recorded, unless this role may not write (the next check then reads a little more)."""
        key = VERIFIED_HEAD_KEY + run_id
        rows = self._fetch("SELECT value FROM engine_meta WHERE key=%s", (key,))
        start = VerifiedHead.decode(rows[0][0] if rows else None)
        problem, head = self._chain_problem(run_id, start)
        if problem is None and head != start:
            try:
                self._db.run(lambda conn, _retried: conn.execute(
                    "INSERT INTO engine_meta(key, value) VALUES (%s,%s) ON CONFLICT (key) DO UPDATE "
                    "SET value=EXCLUDED.value", (key, head.encode())))
            except (pg_errors.InsufficientPrivilege, pg_errors.ReadOnlySqlTransaction):
                pass  # a read-only role, or a standby server: nothing to keep the head in
        return problem

    def _chain_problem(self, run_id: str, start: VerifiedHead) -> tuple[ChainProblem | None, VerifiedHead]:
        """The chain from ``start`` to the run's head, read in one snapshot, and that head."""
        def check(conn: psycopg.Connection, _retried: bool) -> tuple[ChainProblem | None, VerifiedHead]:
            with conn.transaction(), conn.cursor() as cur:
                conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")  # the head and rows agree
                head = conn.execute("SELECT head_seq, head_hash FROM runs WHERE run_id=%s", (run_id,)).fetchone()
                if head is None:
                    raise RunNotFound(f"no run {run_id!r} in {self.label}; `engine runs` lists the runs")
                cur.execute("SELECT seq, type, version, scope, causation_seq, recorded_at, payload, prev_hash, "
                            "hash, result_of FROM events WHERE run_id=%s AND seq>=%s ORDER BY seq",
                            (run_id, max(start.seq, 1)))
                head_seq, head_hash = head
                return first_chain_problem(run_id, cur, head_seq, head_hash, start), VerifiedHead(head_seq, head_hash)

        return self._db.run(check)

    # --- leases -----------------------------------------------------------------------------

    def acquire_lease(self, run_id: str, ttl_s: float = 30.0) -> str:
        self.get_run(run_id)
        token = uuid.uuid4().hex

        def take(conn: psycopg.Connection, _retried: bool) -> None:
            with conn.transaction():
                clock = conn.execute(f"SELECT {_SERVER_EPOCH}").fetchone()
                assert clock is not None  # a SELECT without FROM returns exactly one row
                now = clock[0]
                # Lock the run's row: two drivers racing for a run with no lease row yet must not both win.
                conn.execute("SELECT 1 FROM runs WHERE run_id=%s FOR UPDATE", (run_id,))
                row = conn.execute("SELECT token, pid, host, expires_at FROM leases WHERE run_id=%s",
                                   (run_id,)).fetchone()
                if row is not None:
                    if row[0] == token:
                        return  # our own take, committed before the connection was lost
                    refuse_live_holder(run_id, *row[1:], now=now)
                conn.execute(
                    "INSERT INTO leases(run_id, token, pid, host, expires_at) VALUES (%s,%s,%s,%s,%s) "
                    "ON CONFLICT (run_id) DO UPDATE SET token=EXCLUDED.token, pid=EXCLUDED.pid, "
                    "host=EXCLUDED.host, expires_at=EXCLUDED.expires_at",
                    (run_id, token, os.getpid(), socket.gethostname(), now + ttl_s))

        self._db.run(take)
        return token

    def renew_lease(self, run_id: str, token: str, ttl_s: float = 30.0) -> None:
        # After an outage the lease is still ours unless it expired and another driver took it.
        cur = self._db.run(lambda conn, _retried: conn.execute(
            f"UPDATE leases SET expires_at={_SERVER_EPOCH} + %s WHERE run_id=%s AND token=%s", (ttl_s, run_id, token)))
        if cur.rowcount != 1:
            raise StoreError(f"run {run_id}: this driver's lease was taken over by another process")

    def release_lease(self, run_id: str, token: str) -> None:
        self._db.run(lambda conn, _retried: conn.execute("DELETE FROM leases WHERE run_id=%s AND token=%s",
                                                         (run_id, token)),
                     budget_s=min(self._db.budget_s, RELEASE_BUDGET_S))

    # --- export / import --------------------------------------------------------------------

    def export_jsonl(self, run_id: str, out: IO[str]) -> int:
        return write_jsonl(run_id, self.read_sealed(run_id), out, self.artifact_reader())

    def import_jsonl(self, source: IO[str], *, allow_partial: bool = False) -> str:
        return self.import_export(read_jsonl(source, allow_partial=allow_partial))

    def import_export(self, contents: ExportContents) -> str:
        run = imported_run_row(contents)
        run_id, last = run[0], contents.envelopes[-1]
        rows = imported_rows(contents.envelopes)

        def insert(conn: psycopg.Connection, retried: bool) -> None:
            try:
                with conn.transaction():
                    conn.execute(
                        "INSERT INTO runs(run_id, created_at, strategy, task, status, head_seq, head_hash) "
                        "VALUES (%s,%s,%s,%s,%s,%s,%s)", run)
                    with conn.cursor() as cur:
                        pg_artifacts.insert(cur, contents.artifacts)
                        cur.executemany(_INSERT_EVENT, rows)
            except pg_errors.UniqueViolation:
                head = conn.execute("SELECT head_seq, head_hash FROM runs WHERE run_id=%s", (run_id,)).fetchone()
                if retried and head == (last.seq, last.hash):
                    return  # our own import, committed before the connection was lost
                raise

        try:
            self._db.run(insert)
        except pg_errors.UniqueViolation as exc:
            if exc.diag.constraint_name == "runs_pkey":
                raise RunExists(f"run {run_id} already exists in {self.label}") from None
            raise StoreError(f"importing run {run_id}: {exc}") from None
        return run_id

    def close(self) -> None:
        self._db.drop()

