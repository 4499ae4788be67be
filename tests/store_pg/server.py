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


@pytest.fixture(scope="module")
def own_server():
    """A server of the module's own, which its tests stop, start and cut connections to (the
    session's server is shared, or is $ENGINE_TEST_POSTGRES_URL's and not ours to restart)."""
    from store.pg_local import LocalPostgres

    with LocalPostgres() as server:
        yield server


def schema_for(path: Path) -> str:
    """A schema of its own per test (named from its tmp_path), so tests never see each other's runs."""
    return "t_" + hashlib.sha1(str(path).encode()).hexdigest()[:24]


def fresh_database(pg_url: str, name: str) -> str:
    """Create database ``name`` on the test server and return its URL (for `engine` subprocesses,
    which use a database's default schema)."""
    import urllib.parse

    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        conn.execute(f'CREATE DATABASE "{name}"')
    parts = urllib.parse.urlsplit(pg_url)
    return urllib.parse.urlunsplit(parts._replace(path="/" + name))


def database_name(path: Path) -> str:
    return "d_" + hashlib.sha1(str(path).encode()).hexdigest()[:24]
