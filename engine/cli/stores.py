"""What every verb module of the ``engine`` command shares: the usage error, and opening the
event database a command names (a file or a postgresql:// URL)."""

from __future__ import annotations

from pathlib import Path

from engine.run import lifecycle as runs_mod
from store.base import EventStore


class UsageError(Exception):
    pass


def open_db(db: str | Path | None, *, must_exist: bool = True) -> tuple[EventStore, Path | runs_mod.DatabaseUrl]:
    """The store at ``db`` (default $ENGINE_DB or ./engine-runs/engine.db) and where it is."""
    path = runs_mod.db_path(db)
    if must_exist and not path.exists():
        raise UsageError(f"no engine database at {path}; start a run first or pass --db")
    return runs_mod.open_store(path, create=not must_exist), path
