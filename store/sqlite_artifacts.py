"""The SQLite side of artifacts (store/artifacts.py): their tables, writing them inside the
caller's transaction, reading them back."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

from store.artifacts import ARTIFACT_TABLES_SQLITE, ArtifactReader, stored_rows

_BATCH = 500  # SQLite bounds the number of parameters of one statement


def create_tables(conn: sqlite3.Connection) -> None:
    for statement in ARTIFACT_TABLES_SQLITE.split(";"):
        if statement.strip():
            conn.execute(statement)


def _has_tables(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='artifacts'").fetchone() is not None


def add_tables(conn: sqlite3.Connection, schema_version: int) -> None:
    """A file of an older schema gains the artifact tables (its events stay as they are: no
    references). A file that cannot be written (read-only) is read as it is: it holds no artifacts."""
    try:
        conn.execute("BEGIN IMMEDIATE")
        if not _has_tables(conn):  # another process may have added them meanwhile
            create_tables(conn)
            conn.execute("UPDATE engine_meta SET value=? WHERE key='schema'", (str(schema_version),))
        conn.execute("COMMIT")
    except sqlite3.OperationalError as exc:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        if "readonly" not in str(exc).replace(" ", "").lower():
            raise


def insert(conn: sqlite3.Connection, texts: dict[str, str]) -> None:
    """Inside the caller's transaction: content-addressed, so a row already there is the same."""
    artifacts, chunks = stored_rows(texts)
    conn.executemany("INSERT OR IGNORE INTO artifact_chunks(key, data) VALUES (?,?)", chunks)
    conn.executemany("INSERT OR IGNORE INTO artifacts(digest, bytes, chunks) VALUES (?,?,?)", artifacts)


def reader(conn: sqlite3.Connection, faults: Callable[[], AbstractContextManager[Any]]) -> ArtifactReader:
    """A reader of the file's artifacts; ``faults``: the store's translation of sqlite3 errors."""

    def select_in(query: str, values: list[Any]) -> list[tuple[Any, ...]]:
        rows: list[tuple[Any, ...]] = []
        with faults():
            for i in range(0, len(values), _BATCH):
                part = values[i:i + _BATCH]
                rows += conn.execute(f"{query} ({','.join('?' * len(part))})", part).fetchall()
        return rows

    def manifests(digests: list[str]) -> dict[str, bytes]:
        if not _has_tables(conn):  # a read-only file of an older schema
            return {}
        return {d: bytes(m) for d, m in select_in("SELECT digest, chunks FROM artifacts WHERE digest IN", digests)}

    def chunks(keys: list[bytes]) -> dict[bytes, bytes]:
        return {bytes(k): bytes(v) for k, v in select_in("SELECT key, data FROM artifact_chunks WHERE key IN", keys)}

    return ArtifactReader(manifests, chunks)
