"""Databases for the storage-fault tests: runs loaded from recorded logs, a run's page zeroed."""

from __future__ import annotations

import re
import sqlite3
import subprocess
import sys
from pathlib import Path

from store.sqlite import SQLiteEventStore
from tests.core.helpers import REPO, engine_env

RECORDED = REPO / "tests" / "replays"
# Three recorded runs (run ids are the ones in the logs), loaded into one database.
LOGS = ("mle-star-iris-builtin.jsonl", "evolve-iris-builtin.jsonl", "mle-star-wine-builtin.jsonl")
PAGE = 4096


def database_of_runs(db: Path, logs: tuple[str, ...] = LOGS) -> list[str]:
    """A database holding the recorded runs ``logs``; their run ids, in order."""
    store = SQLiteEventStore(db)
    try:
        ids = []
        for name in logs:
            with open(RECORDED / name, encoding="utf-8") as fh:
                ids.append(store.import_jsonl(fh))
        return ids
    finally:
        store.close()  # the last connection checkpoints the WAL into the file and removes it


def zero_page_inside(db: Path, run_id: str) -> int:
    """Write 4 KB of zeros over the page that stores the middle event of ``run_id`` (found by that
    event's hash, which only its own row and the next one's prev_hash hold); the page number."""
    conn = sqlite3.connect(db)
    try:
        (digest,) = conn.execute("SELECT hash FROM events WHERE run_id=? AND seq=(SELECT head_seq / 2 FROM runs "
                                 "WHERE run_id=?)", (run_id, run_id)).fetchone()
        assert conn.execute("PRAGMA page_size").fetchone()[0] == PAGE
    finally:
        conn.close()
    assert not Path(f"{db}-wal").exists(), "the WAL must be checkpointed: its copy of the page would win"
    data = db.read_bytes()
    page = data.index(digest.encode("ascii")) // PAGE
    assert 1 < page < len(data) // PAGE - 1, "the page must be in the middle of the file"
    with open(db, "r+b") as fh:
        fh.seek(page * PAGE)
        fh.write(b"\0" * PAGE)
    return page


def run_engine_as(prefix: list[str], *args: str | Path) -> subprocess.CompletedProcess[str]:
    """``engine ARGS``, run under ``prefix`` (e.g. setpriv dropping capabilities)."""
    return subprocess.run([*prefix, sys.executable, "-m", "engine.cli", *map(str, args)], env=engine_env(),
                          capture_output=True, text=True, timeout=300, cwd=REPO, stdin=subprocess.DEVNULL)


def one_error_line(proc: subprocess.CompletedProcess[str]) -> str:
    """The single ``error:`` line a storage fault must print (exit 1, no traceback)."""
    assert proc.returncode == 1, f"rc {proc.returncode}: {proc.stdout[-500:]} {proc.stderr[-1500:]}"
    assert not re.search(r"^Traceback", proc.stderr, re.M), proc.stderr[-2000:]
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr[-1500:]
    return lines[0]
