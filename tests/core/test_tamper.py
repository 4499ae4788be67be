"""Tamper detection (issue "Event-sourced core", Must show: "a hash chain makes tampering
detectable"; `engine verify RUN` names the first bad seq).

A recorded toy run's database is copied and one byte of one stored column of one event is
changed with raw sqlite3; verify_chain must name exactly that event's seq. Untouched copies
verify OK.
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from store.sqlite import SQLiteEventStore
from tests.core.helpers import assert_no_traceback, run_engine

TEXT_COLUMNS = ("payload", "type", "scope", "recorded_at", "prev_hash", "hash", "run_id", "result_of")
INT_COLUMNS = ("seq", "version", "causation_seq")


def _copy(src: Path, dest_dir: Path) -> Path:
    dest_dir.mkdir(parents=True, exist_ok=True)
    dest = dest_dir / "tampered.db"
    for suffix in ("", "-wal", "-shm"):
        target = Path(str(dest) + suffix)
        if target.exists():
            target.unlink()
    shutil.copyfile(src, dest)
    return dest


def _checkpointed(db: Path) -> Path:
    """Fold the WAL into the main file so a plain file copy holds every event."""
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return db


def _verify(db: Path, run_id: str):
    store = SQLiteEventStore(db, create=False)
    try:
        return store.verify_chain(run_id)
    finally:
        store.close()


def _flip_text_byte(db: Path, run_id: str, seq: int, column: str, index: int, new_byte: int) -> None:
    """Change one byte of a text column, stored back as TEXT (even if no longer valid UTF-8);
    a NULL column (result_of of a non-result) gets a value instead."""
    conn = sqlite3.connect(db, isolation_level=None)
    raw = conn.execute(f"SELECT CAST({column} AS BLOB) FROM events WHERE run_id=? AND seq=?",
                       (run_id, seq)).fetchone()[0]
    if raw is None or len(raw) == 0:
        conn.execute(f"UPDATE events SET {column}=? WHERE run_id=? AND seq=?", ("x", run_id, seq))
        conn.close()
        return
    data = bytearray(raw)
    i = index % len(data)
    if data[i] == new_byte:
        new_byte = (new_byte + 1) % 256
    data[i] = new_byte
    conn.execute(f"UPDATE events SET {column}=CAST(? AS TEXT) WHERE run_id=? AND seq=?", (bytes(data), run_id, seq))
    conn.close()


def _perturb_int(db: Path, run_id: str, seq: int, column: str, delta: int, last_seq: int) -> None:
    conn = sqlite3.connect(db, isolation_level=None)
    value = conn.execute(f"SELECT {column} FROM events WHERE run_id=? AND seq=?", (run_id, seq)).fetchone()[0]
    if column == "seq":
        new = last_seq + abs(delta)  # a seq no other event has (the primary key stays unique)
    elif value is None:
        new = delta
    else:
        new = value + delta
    conn.execute(f"UPDATE events SET {column}=? WHERE run_id=? AND seq=?", (new, run_id, seq))
    conn.close()


def test_untouched_log_verifies(toy_run, tmp_path: Path) -> None:
    db = _copy(_checkpointed(toy_run.db), tmp_path)
    assert _verify(db, toy_run.run_id) is None


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_changed_text_byte_is_found(toy_run, tmp_path_factory, data) -> None:
    last = len(toy_run.log)
    seq = data.draw(st.integers(1, last), label="seq")
    column = data.draw(st.sampled_from(TEXT_COLUMNS), label="column")
    index = data.draw(st.integers(0, 10_000), label="byte index")
    new_byte = data.draw(st.integers(0, 255), label="new byte")
    db = _copy(_checkpointed(toy_run.db), tmp_path_factory.mktemp("tamper"))
    try:
        _flip_text_byte(db, toy_run.run_id, seq, column, index, new_byte)
    except sqlite3.IntegrityError:  # e.g. result_of made equal to another result's: the schema refuses it
        assume(False)
    problem = _verify(db, toy_run.run_id)
    assert problem is not None, f"changing {column} of seq {seq} went unnoticed"
    assert problem.seq == seq, (column, problem)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_perturbed_integer_is_found(toy_run, tmp_path_factory, data) -> None:
    last = len(toy_run.log)
    seq = data.draw(st.integers(1, last), label="seq")
    column = data.draw(st.sampled_from(INT_COLUMNS), label="column")
    delta = data.draw(st.integers(-1000, 1000).filter(bool), label="delta")
    db = _copy(_checkpointed(toy_run.db), tmp_path_factory.mktemp("tamper"))
    _perturb_int(db, toy_run.run_id, seq, column, delta, last)
    problem = _verify(db, toy_run.run_id)
    assert problem is not None and problem.seq == seq, (column, delta, problem)


def test_deleted_event_is_found(toy_run, tmp_path: Path) -> None:
    db = _copy(_checkpointed(toy_run.db), tmp_path)
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("DELETE FROM events WHERE run_id=? AND seq=?", (toy_run.run_id, 9))
    conn.close()
    assert _verify(db, toy_run.run_id).seq == 9


def test_truncated_tail_is_found(toy_run, tmp_path: Path) -> None:
    """Dropping the last events is caught by the run's head (seq and hash)."""
    db = _copy(_checkpointed(toy_run.db), tmp_path)
    last = len(toy_run.log)
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("DELETE FROM events WHERE run_id=? AND seq>=?", (toy_run.run_id, last - 1))
    conn.close()
    problem = _verify(db, toy_run.run_id)
    assert problem is not None and problem.seq == last - 1


def test_engine_verify_cli(toy_run, tmp_path: Path) -> None:
    """The CLI: exit 0 and OK on the untouched copy, exit 1 naming the seq after one byte changed."""
    db = _copy(_checkpointed(toy_run.db), tmp_path)
    ok = run_engine("verify", toy_run.run_id, "--db", db)
    assert ok.returncode == 0 and "OK" in ok.stdout, ok.stdout + ok.stderr
    target = next(e for e in toy_run.log if e.type == "AgentCallCompleted")
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("UPDATE events SET payload=replace(payload, 'echo:', 'echo;') WHERE run_id=? AND seq=?",
                 (toy_run.run_id, target.seq))
    conn.close()
    bad = run_engine("verify", toy_run.run_id, "--db", db)
    assert bad.returncode == 1
    assert f"seq {target.seq}" in bad.stderr and "TAMPERED" in bad.stderr
    assert_no_traceback(bad)
