"""A run's fold for the views of its standing (``engine status``, ``engine runs``, the UI's runs
list), from its last snapshot: what they cost follows what was appended since that snapshot, not
the run's length. The UI's run page still reads the log whole (it shows scripts and events).

``replay/snapshot.py`` encodes the fold; ``store/snapshots.py`` keeps it beside the events and
hands it back only while the event it folds up to still carries the recorded hash. A snapshot is
written by whoever folded at least ``SNAPSHOT_EVERY`` events past the last one (the driver as it
commits, ``engine status`` as it reads), so a long run always has one at most that far behind.
``engine replay`` and resume never start from one: they feed every recorded input to the handlers.
"""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Callable, Iterable
from dataclasses import asdict
from typing import Any

from events.base import Envelope
from replay import snapshot as codec
from replay.state import PipelineState
from store.base import StoreError
from store.snapshots import SnapshotTable, StoredSnapshot, table_of

# Events folded past the last snapshot before a new one is written. A view folds at most this many
# events, each read with its artifacts resolved (about half a millisecond each in bench_longrun),
# so 100 keeps `engine status` near 50 ms; a snapshot leaves the bulk out (replay/snapshot.py), a
# few hundred KB at 24 h, so writing one every 100 events costs the driver a few ms per 100 commits.
SNAPSHOT_EVERY = 100


def fold_with_snapshot(table: SnapshotTable | None, run_id: str,
                       read: Callable[[int], Iterable[Envelope]]) -> tuple[PipelineState, int]:
    """The run's fold from its newest valid snapshot (or from the first event), reading the
    events after it with ``read(from_seq)``; and the seq the fold started after (0: the first)."""
    return codec.fold_after(_latest(table, run_id), read)


def _latest(table: SnapshotTable | None, run_id: str) -> StoredSnapshot | None:
    if table is None:
        return None
    try:
        return table.latest(run_id, codec.FORMAT)
    except _write_errors():  # an unreadable snapshot costs one full fold, never the view
        return None


def save_if_due(table: SnapshotTable | None, run_id: str, state: PipelineState, since_seq: int,
                every: int = SNAPSHOT_EVERY) -> bool:
    """Write a snapshot of ``state`` when it folds at least ``every`` events past ``since_seq``;
    whether it did."""
    if table is None or state.last_seq - since_seq < every or state.status == "new":
        return False
    return _save(table, run_id, state)


def save_at_boundary(store: Any, run_id: str, state: PipelineState, appended: int,
                     every: int = SNAPSHOT_EVERY) -> bool:
    """The driver's, after each commit: a snapshot when the ``appended`` events just folded
    crossed a multiple of ``every`` (no count to keep: a resumed driver carries on the same)."""
    if state.last_seq // every == (state.last_seq - appended) // every or state.status == "new":
        return False
    table = table_of(store)
    return table is not None and _save(table, run_id, state)


def _save(table: SnapshotTable, run_id: str, state: PipelineState) -> bool:
    """A store that refuses the write (read-only, locked, gone) keeps the run and the view
    working: a snapshot only saves time."""
    snap = codec.take(state)
    try:
        table.save(run_id, StoredSnapshot(**asdict(snap)))
    except _write_errors():
        return False
    return True


def _write_errors() -> tuple[type[BaseException], ...]:
    """The store's errors and the database driver's own (psycopg's only once PostgreSQL is in use:
    importing it for a SQLite store would cost every command its import time)."""
    kinds: list[type[BaseException]] = [StoreError, OSError, sqlite3.Error]
    psycopg = sys.modules.get("psycopg")
    if psycopg is not None:
        kinds.append(psycopg.Error)
    return tuple(kinds)


def state_of(store: Any, run_id: str, *, every: int = SNAPSHOT_EVERY) -> PipelineState:
    """``engine status``'s fold: from the last snapshot, writing a new one when it is due."""
    table = table_of(store)
    state, since = fold_with_snapshot(table, run_id, lambda seq: store.read(run_id, seq))
    save_if_due(table, run_id, state, since, every)
    return state


__all__ = ["SNAPSHOT_EVERY", "fold_with_snapshot", "save_at_boundary", "save_if_due", "state_of"]
