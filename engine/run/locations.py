"""Where a run's things are: the event database (--db, $ENGINE_DB, a file or a postgresql:// URL),
the store opened on it, and the folder of each run's working files."""

from __future__ import annotations

import os
from pathlib import Path

from engine.run.errors import EngineError
from store.base import EventStore
from store.sqlite import SQLiteEventStore

DEFAULT_DB = Path("engine-runs") / "engine.db"
DEFAULT_RUNS_DIR = Path("engine-runs")


class DatabaseUrl(str):
    """A ``postgresql://…`` event database given as --db or $ENGINE_DB. Path-like where callers
    written for a database file need it: ``exists()`` leaves the question to the server (opening the
    store says clearly if it is unreachable or empty), ``parent`` is the runs directory."""

    def exists(self) -> bool:
        return True

    def resolve(self) -> DatabaseUrl:
        return self

    @property
    def parent(self) -> Path:
        return runs_dir()


def runs_dir() -> Path:
    """Where runs' working files live when the database is a server: $ENGINE_RUNS_DIR, else
    ./engine-runs. On a cluster, a directory every worker mounts (see README, campaigns)."""
    return Path(os.environ.get("ENGINE_RUNS_DIR") or DEFAULT_RUNS_DIR).resolve()


def db_path(explicit: str | Path | None = None) -> Path | DatabaseUrl:
    """--db, else $ENGINE_DB, else ./engine-runs/engine.db; a postgresql:// URL selects PostgreSQL."""
    value = str(explicit) if explicit else os.environ.get("ENGINE_DB") or ""
    if value.startswith(("postgresql://", "postgres://")):
        return DatabaseUrl(value)
    path = Path(value) if value else DEFAULT_DB
    if path.is_dir():  # a folder where the database file goes (--db engine-runs): say so, not "unable to open"
        raise EngineError(f"the event database {path} is a directory; give the database file in it "
                          f"(e.g. --db {path / 'engine.db'}) or a postgresql:// URL")
    return path


def runs_root(db: Path | DatabaseUrl) -> Path:
    """Each run's working files live next to the database file (<db dir>/<run-id>/), or under
    :func:`runs_dir` for a database server."""
    return db.resolve().parent


def open_store(db: Path | DatabaseUrl, *, create: bool = True) -> EventStore:
    """$ENGINE_BUSY_TIMEOUT_MS: how long to wait for another process's lock (default 5000)."""
    if isinstance(db, DatabaseUrl):
        try:
            from store.postgres import PostgresEventStore
        except ImportError:
            raise EngineError("a postgresql:// database needs the cluster extra: pip install 'mle-engine[cluster]'") \
                from None
        return PostgresEventStore(str(db), create=create)
    raw = os.environ.get("ENGINE_BUSY_TIMEOUT_MS", "").strip()
    if raw and not raw.isdigit():
        raise EngineError(f"ENGINE_BUSY_TIMEOUT_MS must be a number of milliseconds, not {raw!r}")
    return SQLiteEventStore(db, create=create, busy_timeout_ms=int(raw) if raw else 5000)


__all__ = ["DEFAULT_DB", "DEFAULT_RUNS_DIR", "DatabaseUrl", "db_path", "open_store", "runs_dir", "runs_root"]
