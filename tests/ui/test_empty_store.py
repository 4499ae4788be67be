"""`engine ui` before the first run (issue 61, item 8): on a database that does not exist yet (no
SQLite file; a PostgreSQL database without the engine's tables) it opens, says the store is
empty, creates nothing, and shows the runs as they appear, on the open page's live feed."""

from __future__ import annotations

import re
import socket
import sqlite3
import subprocess
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.store_pg.server import database_name, fresh_database
from tests.ui.browser import engine_cmd, engine_env, wait_for
from tests.ui.writer import RunWriter


def _serve(db: str, *, noted: bool) -> tuple[subprocess.Popen[str], str, str]:
    """`engine ui` on ``db``: the process, its URL and (``noted``) the line it printed after it."""
    proc = subprocess.Popen(engine_cmd("ui", "--db", db, "--port", "0"), stderr=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, text=True, env=engine_env())
    assert proc.stderr is not None
    first = proc.stderr.readline()
    match = re.search(r"serving (http://\S+)", first)
    if match is None:
        proc.kill()
        raise AssertionError(f"engine ui did not start: {first}{proc.stderr.read()}")
    return proc, match.group(1), proc.stderr.readline() if noted else ""


def _stop(proc: subprocess.Popen[str]) -> str:
    proc.terminate()
    try:
        return proc.communicate(timeout=30)[1]
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.communicate()[1]


def _page(url: str) -> str:
    with urllib.request.urlopen(url, timeout=30) as response:
        return str(response.read().decode())


def _live_runs(url: str) -> socket.socket:
    host, port = url.split("//")[1].rstrip("/").split(":")
    sock = socket.create_connection((host, int(port)), timeout=60)
    sock.sendall(b"GET /live/runs HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    return sock


def _read_until(sock: socket.socket, needle: bytes) -> bytes:
    received = b""
    while needle not in received:
        chunk = sock.recv(65536)
        assert chunk, f"the stream ended before {needle!r}: {received[-2000:]!r}"
        received += chunk
    return received


@pytest.fixture(params=["sqlite-no-file", "sqlite-empty-file", "postgres-no-tables"])
def empty_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, str, Any]]:
    """(what --db gets, what the UI says of it, how to create the store the way `engine start` does)."""
    if request.param.startswith("sqlite"):
        from store.sqlite import SQLiteEventStore

        folder = tmp_path / "runs"
        if request.param == "sqlite-empty-file":
            folder.mkdir()
            (folder / "engine.db").touch()
        db = str(folder / "engine.db")
        yield db, f"no engine database at {db} yet", lambda: SQLiteEventStore(db)
        return
    from store.postgres import PostgresEventStore

    url = fresh_database(request.getfixturevalue("pg_url"), database_name(tmp_path))
    yield url, "no engine tables in", lambda: PostgresEventStore(url)


def test_the_ui_opens_on_a_store_with_no_runs_yet_and_shows_them_as_they_appear(empty_store, tmp_path):
    db, says, create = empty_store
    proc, url, note = _serve(db, noted=True)
    store = None
    try:
        assert says in note, note
        assert says in _page(url)
        if db.endswith(".db"):  # the UI created nothing: no folder, no file, or the file still empty
            assert not Path(db).exists() or Path(db).stat().st_size == 0
        stream = _live_runs(url)
        _read_until(stream, b"event: patch")          # the page's first patch: still empty
        store = create()                              # the first `engine start` creates the store
        RunWriter(store, "first-run", task="toy-task")
        _read_until(stream, b"first-run")             # the open page is told, without a reload
        stream.close()
        wait_for(lambda: "first-run" in _page(url) and says not in _page(url), "the run on the runs page")
    finally:
        if store is not None:
            store.close()
        errors = _stop(proc)
    assert "Traceback" not in errors, errors


def test_a_store_with_no_run_says_so(tmp_path):
    from store.sqlite import SQLiteEventStore

    db = tmp_path / "engine.db"
    SQLiteEventStore(db).close()
    proc, url, _ = _serve(str(db), noted=False)
    try:
        assert "No runs in this database yet" in _page(url)
    finally:
        _stop(proc)


def test_a_database_that_is_not_the_engines_is_still_refused(tmp_path):
    foreign = tmp_path / "shop.db"
    conn = sqlite3.connect(foreign)
    conn.execute("CREATE TABLE orders(id INTEGER PRIMARY KEY)")
    conn.commit()
    conn.close()
    done = subprocess.run(engine_cmd("ui", "--db", str(foreign), "--port", "0"), capture_output=True, text=True,
                          env=engine_env(), timeout=120)
    assert done.returncode == 2, done
    assert "not an engine database" in done.stderr and "Traceback" not in done.stderr
