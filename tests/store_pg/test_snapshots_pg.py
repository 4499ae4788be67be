"""Projection snapshots on PostgreSQL (issue 63), as tests/core/test_snapshots.py checks them on
SQLite: `engine status`'s fold writes one and starts from it; an event rewritten under it (a new
hash) hides it, and the fold starts over from the first event."""

from __future__ import annotations

from pathlib import Path

from engine.run.snapshots import fold_with_snapshot, state_of
from replay import snapshot as codec
from replay.state import fold
from store.postgres import PostgresEventStore
from store.snapshots import table_of
from tests.store_pg.server import schema_for

FIXTURE = Path(__file__).resolve().parents[1] / "replays" / "mle-star-iris-builtin.jsonl"


def test_a_snapshot_on_postgresql_is_used_until_its_event_is_rewritten(pg_url: str, tmp_path: Path) -> None:
    store = PostgresEventStore(pg_url, schema=schema_for(tmp_path))
    try:
        with FIXTURE.open() as fh:
            run_id = store.import_jsonl(fh)
        table = table_of(store)
        assert table is not None and table.latest(run_id, codec.FORMAT) is None
        first = state_of(store, run_id, every=10)
        stored = table.latest(run_id, codec.FORMAT)
        assert stored is not None and stored.seq == store.last_seq(run_id)
        read_from: list[int] = []

        def read(seq: int) -> list:
            read_from.append(seq)
            return list(store.read(run_id, seq))

        again, since = fold_with_snapshot(table, run_id, read)
        assert since == stored.seq and read_from == [stored.seq + 1]
        assert again.summary() == first.summary() == fold(store.read(run_id)).summary()

        store.conn.execute("UPDATE events SET hash = %s WHERE run_id = %s AND seq = %s", ("f" * 64, run_id, stored.seq))
        assert table.latest(run_id, codec.FORMAT) is None
        state, since = fold_with_snapshot(table, run_id, lambda seq: store.read(run_id, seq))
        assert since == 0 and state.last_hash == "f" * 64
    finally:
        store.close()
