"""Permanent storage faults other than a full disk, each one named in one line with what to do,
exit 1, no traceback (issue "Storage faults"): a read-only file system (reading still works), a
file this user may not write, a database from a newer engine; and a lock held by another process,
which is waited out with SQLite's bounded backoff (the busy timeout) and named when it outlasts it.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from store.base import DatabaseLocked
from store.sqlite import SCHEMA_VERSION, SQLiteEventStore
from tests.core.helpers import engine_env, run_engine
from tests.core.store_contract import note
from tests.store_faults.helpers import LOGS, RECORDED, database_of_runs, one_error_line, run_engine_as
from tests.store_faults.tinyfs import mount_tmpfs

EXTRA_LOG = RECORDED / "evolve-wine-builtin.jsonl"


@pytest.fixture
def read_only_fs(tmp_path: Path) -> Iterator[Path]:
    """A database holding two runs on a file system then remounted read-only."""
    root = tmp_path / "ro"
    root.mkdir()
    if not mount_tmpfs(root, 8192):
        pytest.skip("mounting a file system is not permitted here (needs root)")
    try:
        database_of_runs(root / "e.db", LOGS[:2])
        subprocess.run(["mount", "-o", "remount,ro", str(root)], check=True)
        yield root / "e.db"
    finally:
        subprocess.run(["umount", str(root)], check=True)


def test_read_only_file_system_is_named_and_runs_still_read(read_only_fs: Path, tmp_path: Path) -> None:
    line = one_error_line(run_engine("import", EXTRA_LOG, "--db", read_only_fs))
    assert "is on a read-only file system" in line and "remount it read-write" in line, line
    listed = run_engine("runs", "--json", "--db", read_only_fs)
    assert listed.returncode == 0 and listed.stdout.count('"run_id"') == 2, listed.stderr[-1500:]
    export = tmp_path / "out.jsonl"
    first = run_engine("verify", "--db", read_only_fs)
    assert first.returncode == 0 and first.stdout.count("hash chain intact") == 2, first.stderr[-1500:]
    run_id = listed.stdout.split('"run_id": "')[1].split('"')[0]
    assert run_engine("export", run_id, "-o", export, "--db", read_only_fs).returncode == 0 and export.stat().st_size


@pytest.fixture
def unwritable(tmp_path: Path) -> Iterator[Path]:
    """A database in a directory, both without write permission for their owner."""
    home = tmp_path / "locked-away"
    home.mkdir()
    db = home / "e.db"
    database_of_runs(db, LOGS[:1])
    db.chmod(0o444)
    home.chmod(0o555)
    try:
        yield db
    finally:
        home.chmod(0o755)
        db.chmod(0o644)


def _without_root_override() -> list[str]:
    """Root writes anything; without CAP_DAC_OVERRIDE (dropped by setpriv) it obeys the modes."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv (util-linux) to drop the permission override")
    return [setpriv, "--bounding-set", "-dac_override,-dac_read_search", "--"]


@pytest.mark.parametrize("command", [("import", str(EXTRA_LOG)), ("runs",)])
def test_permission_denied_is_named(unwritable: Path, command: tuple[str, ...]) -> None:
    line = one_error_line(run_engine_as(_without_root_override(), *command, "--db", unwritable))
    assert line.startswith("error: permission denied") and "fix the permissions" in line, line


def test_a_database_from_a_newer_engine_is_named(tmp_path: Path) -> None:
    db = tmp_path / "e.db"
    database_of_runs(db, LOGS[:1])
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("UPDATE engine_meta SET value=? WHERE key='schema'", (str(SCHEMA_VERSION + 1),))
    conn.close()
    for command in (("runs",), ("import", str(EXTRA_LOG))):
        line = one_error_line(run_engine(*command, "--db", db))
        assert (f"was written by a newer engine (schema {SCHEMA_VERSION + 1}; this engine knows schema "
                f"{SCHEMA_VERSION})") in line, line


def _hold_write_lock(db: Path) -> sqlite3.Connection:
    holder = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")
    return holder


def test_a_lock_released_within_the_busy_timeout_is_waited_out(tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "e.db", busy_timeout_ms=60_000)
    store.create_run("r", strategy="s", task="t")
    holder = _hold_write_lock(tmp_path / "e.db")
    release = threading.Timer(0.3, lambda: holder.execute("COMMIT"))
    release.start()
    try:
        assert [e.seq for e in store.append("r", [note(1)], expected_seq=0)] == [1]
    finally:
        release.join()
        holder.close()
        store.close()


def test_a_lock_outlasting_the_busy_timeout_is_named(tmp_path: Path) -> None:
    store = SQLiteEventStore(tmp_path / "e.db", busy_timeout_ms=50)
    store.create_run("r", strategy="s", task="t")
    holder = _hold_write_lock(tmp_path / "e.db")
    try:
        with pytest.raises(DatabaseLocked, match="is locked by another process .*; try again shortly"):
            store.append("r", [note(1)], expected_seq=0)
        assert not store.conn.in_transaction
    finally:
        holder.execute("COMMIT")
        holder.close()
    assert [e.seq for e in store.append("r", [note(1)], expected_seq=0)] == [1]  # usable once it is free
    store.close()
    locker = _hold_write_lock(tmp_path / "e.db")
    try:
        proc = run_engine("import", EXTRA_LOG, "--db", tmp_path / "e.db", env=engine_env(ENGINE_BUSY_TIMEOUT_MS="50"))
    finally:
        locker.execute("COMMIT")
        locker.close()
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-1500:]  # try again: not a failure
    assert [line for line in proc.stderr.splitlines() if line.strip()] == [
        next(line for line in proc.stderr.splitlines() if line.startswith("error: ") and "is locked by another" in line)]
