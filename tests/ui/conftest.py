"""A real browser per test module, and each test run on both event stores (SQLite, PostgreSQL)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.store_pg.server import database_name, fresh_database, pg_url  # noqa: F401 - the PostgreSQL server
from tests.ui.browser import chrome


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    driver = chrome()
    try:
        yield driver
    finally:
        driver.quit()


@dataclass
class Backend:
    name: str
    db: str          # what `engine ui --db` is given
    store: Any       # a writing store on the same database (the test plays the driver)


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    if request.param == "sqlite":
        from store.sqlite import SQLiteEventStore

        db = str(tmp_path / "engine.db")
        store: Any = SQLiteEventStore(db)
    else:
        from store.postgres import PostgresEventStore

        db = fresh_database(request.getfixturevalue("pg_url"), database_name(tmp_path))
        store = PostgresEventStore(db)
    try:
        yield Backend(request.param, db, store)
    finally:
        store.close()
