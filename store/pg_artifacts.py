"""The PostgreSQL side of artifacts (store/artifacts.py): their tables, writing them inside the
caller's transaction, reading them back."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import psycopg
from psycopg import errors as pg_errors

from store.artifacts import ARTIFACT_TABLES_POSTGRES, ArtifactReader, stored_rows

TABLES = ARTIFACT_TABLES_POSTGRES


def add_tables(conn: psycopg.Connection, schema_version: int) -> None:
    """A database of an older schema gains the artifact tables (its events hold no references);
    a role that may not create them, or a standby server, reads it as it is."""
    try:
        with conn.transaction():  # a savepoint: a refusal leaves the enclosing transaction usable
            conn.execute(ARTIFACT_TABLES_POSTGRES)
            conn.execute("UPDATE engine_meta SET value=%s WHERE key='schema'", (str(schema_version),))
    except (pg_errors.InsufficientPrivilege, pg_errors.ReadOnlySqlTransaction):
        pass


def insert(cur: psycopg.Cursor, texts: dict[str, str]) -> None:
    """Inside the caller's transaction: content-addressed, so a row already there is the same."""
    artifacts, chunks = stored_rows(texts)
    if chunks:
        cur.executemany("INSERT INTO artifact_chunks(key, data) VALUES (%s,%s) ON CONFLICT DO NOTHING", chunks)
    if artifacts:
        cur.executemany("INSERT INTO artifacts(digest, bytes, chunks) VALUES (%s,%s,%s) ON CONFLICT DO NOTHING",
                        artifacts)


def reader(fetch: Callable[[str, tuple[Any, ...]], list[tuple[Any, ...]]]) -> ArtifactReader:
    """A reader of the database's artifacts; ``fetch``: the store's read-only query (reconnecting)."""

    def manifests(digests: list[str]) -> dict[str, bytes]:
        try:
            rows = fetch("SELECT digest, chunks FROM artifacts WHERE digest = ANY(%s)", (digests,))
        except pg_errors.UndefinedTable:  # an older schema this role could not add the tables to
            return {}
        return {digest: bytes(chunks) for digest, chunks in rows}

    def chunks(keys: list[bytes]) -> dict[bytes, bytes]:
        rows = fetch("SELECT key, data FROM artifact_chunks WHERE key = ANY(%s)", (keys,))
        return {bytes(key): bytes(data) for key, data in rows}

    return ArtifactReader(manifests, chunks)
