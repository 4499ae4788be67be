"""The PostgreSQL server the store and campaign tests use: $ENGINE_TEST_POSTGRES_URL when set, else
a throwaway local server (store/pg_local.py) started once per test session. Never skipped: a
machine without the server programs fails here with what to install."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def pg_url():
    given = os.environ.get("ENGINE_TEST_POSTGRES_URL", "").strip()
    if given:
        yield given
        return
    from store.pg_local import LocalPostgres

    with LocalPostgres() as server:
        yield server.url


def schema_for(path: Path) -> str:
    """A schema of its own per test (named from its tmp_path), so tests never see each other's runs."""
    return "t_" + hashlib.sha1(str(path).encode()).hexdigest()[:24]
