"""A SQLite ``SessionStore`` for the Claude Agent SDK: keeps the Claude transcripts of a run.

The event log records what each agent call was asked and answered; the transcript (every tool
call and intermediate message inside that call) is bulkier and only needed to audit or debug an
agent's reasoning, so it lives beside the log in its own database rather than in events. Pass
an instance as ``ClaudeBackend(session_store=...)``; the SDK mirrors transcript lines to it.

Entries are opaque JSON blobs (the CLI's transcript format); entries with a ``uuid`` are
idempotent per key, as the protocol asks. Timestamps (``mtime``) are storage write times in
epoch milliseconds, one clock for sessions and summaries.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio

if TYPE_CHECKING:  # the SDK is imported only where a call is made (engine-only)
    from claude_agent_sdk.types import SessionKey, SessionStoreEntry, SessionSummaryEntry

_SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    project_key TEXT NOT NULL, session_id TEXT NOT NULL, subpath TEXT NOT NULL DEFAULT '',
    uuid TEXT, entry TEXT NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS entries_uuid ON entries(project_key, session_id, subpath, uuid)
    WHERE uuid IS NOT NULL;
CREATE INDEX IF NOT EXISTS entries_key ON entries(project_key, session_id, subpath, id);
CREATE TABLE IF NOT EXISTS sessions (
    project_key TEXT NOT NULL, session_id TEXT NOT NULL, mtime INTEGER NOT NULL,
    PRIMARY KEY (project_key, session_id)
);
CREATE TABLE IF NOT EXISTS summaries (
    project_key TEXT NOT NULL, session_id TEXT NOT NULL, mtime INTEGER NOT NULL, data TEXT NOT NULL,
    PRIMARY KEY (project_key, session_id)
);
"""


def _sub(key: Any) -> str:
    return key.get("subpath") or ""


class SQLiteSessionStore:
    """Implements ``append``/``load`` and the optional ``list_sessions``,
    ``list_session_summaries``, ``delete`` and ``list_subkeys``."""

    def __init__(self, path: str | Path = ":memory:") -> None:
        if str(path) != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.executescript(_SCHEMA)
        # One connection shared by worker threads: serialise access (and the summary's
        # read-fold-write, which must not interleave for one session).
        self._lock = threading.Lock()

    async def _run(self, fn: Any, *args: Any) -> Any:
        def locked() -> Any:
            with self._lock:
                return fn(*args)

        return await anyio.to_thread.run_sync(locked)

    # --- required ----------------------------------------------------------------------

    async def append(self, key: Any, entries: list[Any]) -> None:
        if entries:
            await self._run(self._append, dict(key), list(entries))

    def _append(self, key: SessionKey, entries: list[SessionStoreEntry]) -> None:
        from claude_agent_sdk import fold_session_summary

        project, session, sub = key["project_key"], key["session_id"], _sub(key)
        now = int(time.time() * 1000)
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            db.executemany(
                "INSERT OR IGNORE INTO entries(project_key, session_id, subpath, uuid, entry) VALUES (?,?,?,?,?)",
                [(project, session, sub, e.get("uuid") if isinstance(e, dict) else None, json.dumps(e))
                 for e in entries],
            )
            if not sub:  # subagent transcripts are not sessions of their own
                db.execute("INSERT INTO sessions VALUES (?,?,?) ON CONFLICT DO UPDATE SET mtime=excluded.mtime",
                           (project, session, now))
                row = db.execute("SELECT mtime, data FROM summaries WHERE project_key=? AND session_id=?",
                                 (project, session)).fetchone()
                prev: SessionSummaryEntry | None = (
                    {"session_id": session, "mtime": row[0], "data": json.loads(row[1])} if row else None)
                folded = fold_session_summary(prev, key, entries)
                db.execute("INSERT INTO summaries VALUES (?,?,?,?) ON CONFLICT DO UPDATE SET "
                           "mtime=excluded.mtime, data=excluded.data",
                           (project, session, now, json.dumps(folded["data"])))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    async def load(self, key: Any) -> list[Any] | None:
        rows = await self._run(lambda: self._db.execute(
            "SELECT entry FROM entries WHERE project_key=? AND session_id=? AND subpath=? ORDER BY id",
            (key["project_key"], key["session_id"], _sub(key))).fetchall())
        return [json.loads(r[0]) for r in rows] if rows else None

    # --- optional ----------------------------------------------------------------------

    async def list_sessions(self, project_key: str) -> list[dict[str, Any]]:
        rows = await self._run(lambda: self._db.execute(
            "SELECT session_id, mtime FROM sessions WHERE project_key=?", (project_key,)).fetchall())
        return [{"session_id": s, "mtime": m} for s, m in rows]

    async def list_session_summaries(self, project_key: str) -> list[dict[str, Any]]:
        rows = await self._run(lambda: self._db.execute(
            "SELECT session_id, mtime, data FROM summaries WHERE project_key=?", (project_key,)).fetchall())
        return [{"session_id": s, "mtime": m, "data": json.loads(d)} for s, m, d in rows]

    async def delete(self, key: Any) -> None:
        await self._run(self._delete, dict(key))

    def _delete(self, key: dict[str, Any]) -> None:
        project, session, sub = key["project_key"], key["session_id"], _sub(key)
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            if sub:
                db.execute("DELETE FROM entries WHERE project_key=? AND session_id=? AND subpath=?",
                           (project, session, sub))
            else:  # the main transcript takes its subagent transcripts with it
                for table in ("entries", "sessions", "summaries"):
                    db.execute(f"DELETE FROM {table} WHERE project_key=? AND session_id=?", (project, session))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    async def list_subkeys(self, key: Any) -> list[str]:
        rows = await self._run(lambda: self._db.execute(
            "SELECT DISTINCT subpath FROM entries WHERE project_key=? AND session_id=? AND subpath != '' "
            "ORDER BY subpath", (key["project_key"], key["session_id"])).fetchall())
        return [r[0] for r in rows]

    def close(self) -> None:
        with self._lock:
            self._db.close()
