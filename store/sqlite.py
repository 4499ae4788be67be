"""SQLite event store (sqlite-utils for the schema, plain transactions for appends).

Durability: WAL with ``synchronous=FULL`` by default, so an append that returned survives a
power cut. Every append runs in ``BEGIN IMMEDIATE`` so the check of ``expected_seq`` and the
insert are one atomic step even with several processes on the same file.
"""

from __future__ import annotations

import gc
import hashlib
import json
import sqlite3
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Iterator, Sequence


from events.base import GENESIS_HASH, EffectResult, Envelope, NewEvent, canonical_json, chain_hash, event_class
import events as _vocabulary  # noqa: F401 - registers every event type (verify_chain and import look types up by name)
from store.jsonl import read_jsonl, status_of, write_jsonl
from store.leases import take_lease
from store.base import (ChainProblem, ConcurrencyError, CorruptLog, DatabaseLocked, DuplicateResultError,
                        NotAnEngineDatabase, RunExists, RunInfo, RunNotFound, StoreError)

SCHEMA_VERSION = 1
APP_MARKER = "mle-engine-event-store"


def _now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


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

    def _check_header(self) -> None:
        with open(self.path, "rb") as fh:
            head = fh.read(16)
        if head and head != b"SQLite format 3\x00":
            raise NotAnEngineDatabase(
                f"{self.path} is not an engine database (not even SQLite); pass --db with the right file"
            )

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
                self.db["engine_meta"].create({"key": str, "value": str}, pk="key")
                self.db["engine_meta"].insert_all(
                    [{"key": "app", "value": APP_MARKER}, {"key": "schema", "value": str(SCHEMA_VERSION)}]
                )
                self.db["runs"].create(
                    {"run_id": str, "created_at": str, "strategy": str, "task": str, "status": str,
                     "head_seq": int, "head_hash": str},
                    pk="run_id",
                )
                self.db["events"].create(
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
                self.db["leases"].create(
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
            envelopes, rows = self._seal(run_id, events, head_seq, prev_hash)
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

    def _seal(self, run_id: str, events: Sequence[NewEvent], head_seq: int, prev_hash: str):
        envelopes: list[Envelope] = []
        rows = []
        recorded_at = _now_iso()
        batch_fields = f'"recorded_at":{_json_str(recorded_at)},"run_id":{_json_str(run_id)},"scope":'
        for seq, new in enumerate(events, start=head_seq + 1):
            ev = new.event
            payload = ev.payload()
            # The bytes chain_hash(prev_hash, fields) hashes (canonical JSON: sorted keys, no spaces),
            # composed around the payload's JSON so it is encoded once, for the column and the hash:
            # batched appends spent most of their time in json.dumps. Tests recompute it independently.
            payload_json = _canonical.encode(payload)
            cause = "null" if new.causation_seq is None else str(int(new.causation_seq))
            sealed = (f'{{"causation_seq":{cause},"payload":{payload_json},{batch_fields}{_json_str(new.scope)},'
                      f'"seq":{seq},"type":{_json_str(ev.type_name)},"version":{int(ev.version)}}}')
            digest = hashlib.sha256(prev_hash.encode("ascii") + sealed.encode("utf-8")).hexdigest()
            row = (run_id, seq, ev.type_name, ev.version, new.scope, new.causation_seq, recorded_at,
                   payload_json, prev_hash, digest)
            envelopes.append(_envelope(row, payload))
            rows.append((*row, ev.effect_id if isinstance(ev, EffectResult) else None))
            prev_hash = digest
        return envelopes, rows

    def read(self, run_id: str, from_seq: int = 1) -> Iterator[Envelope]:
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
        prev_hash = GENESIS_HASH
        expected = 1
        cur = self.conn.execute(
            # Text columns are read as bytes and decoded here: a tampered byte may leave invalid UTF-8,
            # which sqlite3 would otherwise raise on while fetching (naming no seq).
            "SELECT seq, CAST(type AS BLOB), version, CAST(scope AS BLOB), causation_seq, CAST(recorded_at AS BLOB), "
            "CAST(payload AS BLOB), CAST(prev_hash AS BLOB), CAST(hash AS BLOB), CAST(result_of AS BLOB) "
            "FROM events WHERE run_id=? ORDER BY seq", (run_id,)
        )
        for seq, typ, version, scope, cause, recorded_at, payload_text, stored_prev, stored_hash, result_of in cur:
            if seq != expected:
                return ChainProblem(expected, f"event {expected} is missing (next stored seq is {seq})")
            try:
                typ, scope, recorded_at, payload_text, stored_prev, stored_hash, result_of = (
                    None if b is None else bytes(b).decode("utf-8")
                    for b in (typ, scope, recorded_at, payload_text, stored_prev, stored_hash, result_of))
            except UnicodeDecodeError:
                return ChainProblem(seq, "a stored text column is not valid UTF-8")
            try:
                payload = json.loads(payload_text)
            except (json.JSONDecodeError, TypeError):
                return ChainProblem(seq, "payload is not valid JSON")
            if not isinstance(payload, dict) or canonical_json(payload) != payload_text:
                return ChainProblem(seq, "payload bytes are not the canonical JSON that was sealed")
            if stored_prev != prev_hash:
                return ChainProblem(seq, "prev_hash does not match the previous event's hash")
            fields = {"run_id": run_id, "seq": seq, "type": typ, "version": version, "scope": scope,
                      "causation_seq": cause, "recorded_at": recorded_at, "payload": payload}
            if chain_hash(prev_hash, fields) != stored_hash:
                return ChainProblem(seq, "hash does not match the event's contents")
            try:
                is_result = issubclass(event_class(typ), EffectResult)
            except ValueError:
                return ChainProblem(seq, f"unknown event type {typ!r}")
            if result_of != (payload.get("effect_id") if is_result else None):
                return ChainProblem(seq, "the effect index column does not match the payload")
            prev_hash = stored_hash
            expected += 1
        if expected - 1 != info.last_seq:
            return ChainProblem(expected, f"the run's head says seq {info.last_seq} but the log ends at {expected - 1}")
        head_hash = self.conn.execute("SELECT head_hash FROM runs WHERE run_id=?", (run_id,)).fetchone()[0]
        if head_hash != prev_hash:
            return ChainProblem(expected - 1, "the run's head hash does not match the last event")
        return None

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


def _payload_of(run_id: str, row: tuple) -> dict:
    try:
        payload = json.loads(row[7])
    except json.JSONDecodeError:
        raise CorruptLog(f"run {run_id} seq {row[1]}: stored payload is not valid JSON") from None
    if not isinstance(payload, dict):
        raise CorruptLog(f"run {run_id} seq {row[1]}: stored payload is not a JSON object")
    return payload


_json_str = json.encoder.encode_basestring  # how canonical_json (ensure_ascii=False) writes a str
# canonical_json's settings in one reusable encoder (json.dumps builds a new encoder per call)
_canonical = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=True)

_ENVELOPE_FIELDS = ("run_id", "seq", "type", "version", "scope", "causation_seq", "recorded_at", "payload",
                    "prev_hash", "hash")
_ENVELOPE_FIELD_SET = frozenset(_ENVELOPE_FIELDS)


def _envelope(row: tuple, payload: dict) -> Envelope:
    """An Envelope from a stored row without re-validation: the columns are typed by the schema
    and were validated when sealed. What ``model_construct`` does, minus its per-field default
    handling, which made reading (every resume, every ``status``) ~3x slower; the store contract
    tests compare these with validated envelopes."""
    env = object.__new__(Envelope)
    object.__setattr__(env, "__dict__", {"run_id": row[0], "seq": row[1], "type": row[2], "version": row[3],
                                         "scope": row[4], "causation_seq": row[5], "recorded_at": row[6],
                                         "payload": payload, "prev_hash": row[8], "hash": row[9]})
    object.__setattr__(env, "__pydantic_fields_set__", set(_ENVELOPE_FIELD_SET))
    object.__setattr__(env, "__pydantic_extra__", None)
    object.__setattr__(env, "__pydantic_private__", None)
    return env
