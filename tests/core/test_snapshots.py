"""Projection snapshots (issue 63): a fold restarted from a snapshot is the fold of the whole log,
and a snapshot never outlives the event it was taken at.

* every recorded fixture, cut at any event: snapshot there, fold the rest from it, and the state
  equals the fold of the whole log (every field the views read, ``PipelineState.__eq__``);
* on a real SQLite store: the driver writes a snapshot as a commit crosses every N events;
  ``engine status`` writes a snapshot once it folded enough events and
  starts from it the next time; an event rewritten under the snapshot (its hash changed, as a
  tamperer re-sealing the log would) hides the snapshot, and the fold starts over and shows the
  rewritten log; a snapshot of another format is not used; only the latest two are kept; the UI's runs list starts from the snapshot, and a run's page
  still reads the run whole.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import fields, replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from engine.cli.main import app
from engine.run.snapshots import fold_with_snapshot, save_at_boundary, save_if_due, state_of
from engine.ui.runs import RunIndex
from engine.ui.source import SQLiteSource
from events.base import Envelope
from replay import snapshot as codec
from replay.state import PipelineState, fold
from store.jsonl import read_jsonl
from store.snapshots import KEEP, sqlite_table
from store.sqlite import SQLiteEventStore

FIXTURES = sorted((Path(__file__).resolve().parents[1] / "replays").glob("*.jsonl"))
_LOGS: dict[Path, list[Envelope]] = {}


def log_of(path: Path) -> list[Envelope]:
    if path not in _LOGS:
        with path.open() as fh:
            _LOGS[path] = read_jsonl(fh, allow_partial=True).envelopes
    return _LOGS[path]


@pytest.mark.parametrize("path", FIXTURES, ids=[p.stem for p in FIXTURES])
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_fold_from_any_snapshot_is_the_fold_of_the_whole_log(path: Path, data: st.DataObject):
    log = log_of(path)
    cut = data.draw(st.integers(min_value=1, max_value=len(log)), label="cut")
    snap = codec.take(fold(log[:cut]))
    assert (snap.seq, snap.hash) == (log[cut - 1].seq, log[cut - 1].hash)
    state, since = codec.fold_after(snap, lambda seq: [e for e in log if e.seq >= seq])
    assert since == log[cut - 1].seq
    whole = fold(log)
    assert_same_standing(state, whole)


def assert_same_standing(state: PipelineState, whole: PipelineState) -> None:
    """Equal in everything but the bulk a snapshot leaves out (replay/snapshot.py): a request's long
    values, a solution's script and detail, an ended run's result but its short values."""
    assert state.summary() == whole.summary()
    assert state.context() == whole.context()
    assert list(state.pending) == list(whole.pending) and list(state.requests) == list(whole.requests)
    for eid, req in state.requests.items():
        full = whole.requests[eid]
        assert (req.seq, req.type, req.scope) == (full.seq, full.type, full.scope)
        # whole when it came after the snapshot; else its short values
        assert req.payload == full.payload or req.payload == codec._short(full.payload)
        assert (eid in state.pending) == (eid in whole.pending)
        assert eid not in state.pending or state.pending[eid] is req
    assert list(state.solutions) == list(whole.solutions)
    for sid, node in state.solutions.items():
        assert replace(node, content="", detail={}) == replace(whole.solutions[sid], content="", detail={})
    assert state.result == whole.result or state.result == codec._short(whole.result)
    bulk = {"requests", "pending", "solutions", "result", "_context"}
    assert all(getattr(state, f.name) == getattr(whole, f.name) for f in fields(whole) if f.name not in bulk)


def test_a_snapshot_of_another_format_or_unreadable_is_not_used():
    log = log_of(FIXTURES[0])
    snap = codec.take(fold(log[:10]))
    read = lambda seq: [e for e in log if e.seq >= seq]
    for stale in (codec.Snapshot(snap.seq, snap.hash, snap.state, format=codec.FORMAT + 1),
                  codec.Snapshot(snap.seq, snap.hash, "{not json"),
                  codec.Snapshot(snap.seq, "0" * 64, snap.state)):  # names another event than it folds
        state, since = codec.fold_after(stale, read)
        assert since == 0 and state == fold(log)  # from the first event: the whole fold, bulk and all


def stored_run(tmp_path: Path, fixture: Path) -> tuple[SQLiteEventStore, str]:
    store = SQLiteEventStore(tmp_path / "engine.db")
    with fixture.open() as fh:
        run_id = store.import_jsonl(fh)
    return store, run_id


def test_status_writes_a_snapshot_and_starts_from_it(tmp_path: Path):
    store, run_id = stored_run(tmp_path, FIXTURES[0])
    last = store.last_seq(run_id)
    table = sqlite_table(store.conn)
    assert table.latest(run_id, codec.FORMAT) is None           # none before the first fold
    first = state_of(store, run_id, every=10)
    stored = table.latest(run_id, codec.FORMAT)
    assert stored is not None and stored.seq == last
    read_from: list[int] = []

    def read(seq: int) -> list[Envelope]:
        read_from.append(seq)
        return list(store.read(run_id, seq))

    again, since = fold_with_snapshot(table, run_id, read)
    assert since == last and read_from == [last + 1]             # nothing before the snapshot read again
    assert_same_standing(again, first)
    assert first == fold(store.read(run_id))  # the first fold had no snapshot: the whole log


def test_the_cli_status_from_a_snapshot_shows_what_the_whole_log_does(tmp_path: Path):
    store, run_id = stored_run(tmp_path, FIXTURES[0])
    log = list(store.read(run_id))
    whole = fold(log).summary()
    assert save_if_due(sqlite_table(store.conn), run_id, fold(log[:len(log) // 2]), since_seq=0, every=1)
    store.close()
    shown = CliRunner().invoke(app, ["status", run_id, "--json", "--db", str(tmp_path / "engine.db")])
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.output) == json.loads(json.dumps(whole))


def test_a_rewritten_event_hides_the_snapshot_taken_over_it(tmp_path: Path):
    store, run_id = stored_run(tmp_path, FIXTURES[0])
    table = sqlite_table(store.conn)
    state_of(store, run_id, every=10)
    stored = table.latest(run_id, codec.FORMAT)
    assert stored is not None
    # A tamperer rewrites an event the snapshot folds and re-seals it (a new hash): the snapshot's
    # event no longer carries the hash it was taken at.
    raw = sqlite3.connect(tmp_path / "engine.db")
    payload = json.loads(raw.execute("SELECT payload FROM events WHERE run_id=? AND seq=?",
                                     (run_id, stored.seq)).fetchone()[0])
    raw.execute("UPDATE events SET payload=?, hash=? WHERE run_id=? AND seq=?",
                (json.dumps({**payload, "planted": 1}), "f" * 64, run_id, stored.seq))
    raw.commit()
    raw.close()
    assert table.latest(run_id, codec.FORMAT) is None
    state, since = fold_with_snapshot(table, run_id, lambda seq: store.read(run_id, seq))
    assert since == 0 and state.last_hash == "f" * 64              # folded from the first event again


def test_only_the_latest_snapshots_are_kept(tmp_path: Path):
    store, run_id = stored_run(tmp_path, FIXTURES[0])
    log = list(store.read(run_id))
    table = sqlite_table(store.conn)
    for cut in (5, 10, 15, 20):
        assert save_if_due(table, run_id, fold(log[:cut]), since_seq=0, every=1)
    seqs = [r[0] for r in store.conn.execute("SELECT seq FROM snapshots WHERE run_id=? ORDER BY seq", (run_id,))]
    assert KEEP == 2 and seqs == [log[14].seq, log[19].seq]
    assert not save_if_due(table, run_id, fold(log[:21]), since_seq=log[19].seq, every=10)  # not due yet


def test_the_driver_writes_a_snapshot_when_a_commit_crosses_the_boundary(tmp_path: Path):
    """What the driver does after each commit (``save_at_boundary``), batch by batch over a real log."""
    store, run_id = stored_run(tmp_path, FIXTURES[0])
    log = list(store.read(run_id))
    table = sqlite_table(store.conn)
    written = []
    for end in range(3, len(log) + 1, 3):
        if save_at_boundary(store, run_id, fold(log[:end]), appended=3, every=10):
            written.append(log[end - 1].seq)
    assert written and all(seq // 10 > (seq - 3) // 10 for seq in written)  # once per boundary crossed
    assert len(written) == log[len(log) // 3 * 3 - 1].seq // 10
    stored = table.latest(run_id, codec.FORMAT)
    assert stored is not None and stored.seq == written[-1]


def test_the_uis_runs_list_starts_from_the_snapshot_and_reads_the_page_whole(tmp_path: Path):
    store, run_id = stored_run(tmp_path, FIXTURES[0])
    log = list(store.read(run_id))
    assert save_if_due(sqlite_table(store.conn), run_id, fold(log[:len(log) // 2]), since_seq=0, every=1)
    store.close()
    source = SQLiteSource(tmp_path / "engine.db")
    reads: list[int] = []
    real_read = source.read

    def read(rid: str, from_seq: int = 1, *, whole: bool = True) -> list[Envelope]:
        reads.append(from_seq)
        return real_read(rid, from_seq, whole=whole)

    source.read = read  # type: ignore[method-assign]
    index = RunIndex(source)
    index.refresh()
    entry = index.entry(run_id)
    assert entry is not None and entry.envelopes is None and entry.problem is None
    assert reads == [log[len(log) // 2 - 1].seq + 1]                 # the list read the tail only
    assert_same_standing(entry.state, fold(log))
    page = index.log(run_id)                                           # the run page reads it whole
    assert page is not None and [e.seq for e in page.envelopes] == [e.seq for e in log]
    assert page.state == fold(log)
    source.close()
