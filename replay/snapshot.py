"""A run's fold, kept as a snapshot, and the fold that starts from one.

``engine status``, the UI's runs list and the run page fold a run's whole log to show where it
stands; on a day-long run that log is long. A snapshot is the ``PipelineState`` as it stood after
one event, as JSON, with the seq and hash of that event: the fold restarts from it and reads only
the events after it. The store keeps snapshots beside the events (``store/snapshots.py``) and
hands one back only while the event it names still carries the recorded hash, so a log altered
under a snapshot is folded from its first event again (and its chain check then names the change).

A snapshot keeps everything a run's standing is shown from (``summary()``, the runs list) and all
the fold needs to go on, but not the bulk a day-long run piles up: a request keeps only its short
values (its prompt, its script are left out: no later event of the fold reads them, and a resume
reads a pending request whole from the sealed log, ``engine.run.rebuild.quick_state``), a solution
its lineage and score but not its script or detail, and an ended run's result its short values
(the whole result, every candidate's script, stays in its ``RunCompleted``). A state restored from
a snapshot therefore serves the views of a run's standing and the fold of what follows; whatever
shows a prompt or a script (the run page, the solution page, the report) reads the log itself.
Without that, each snapshot would be as large as the log, and one every N events would write the
log over again N events at a time.

A snapshot is plain JSON, never pickle: whoever can write the database must not be able to run
code in a process that reads it. ``FORMAT`` changes whenever the state's fields change; a snapshot
of another format is not used (the fold starts over), so an upgrade never reads a stale shape.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, fields
from typing import Any, Protocol

from events.base import Envelope
from replay.best import BestEvaluated
from replay.meter import SpendMeter
from replay.state import EvaluationPoint, PendingEffect, PipelineState, SolutionNode, fold

FORMAT = 1
SHORT = 200  # the longest string a finished request keeps in a snapshot (ids, purposes, agent names)

# Fields that are not plain JSON values, rebuilt by _decode; the rest are copied as they are.
_NESTED = {"spend", "best", "pending", "requests", "results", "solutions", "evaluations"}
_SKIPPED = {"_context"}  # a cache of the validated settings, rebuilt on first use


class SnapshotRecord(Protocol):
    """A snapshot as a store hands it back (``store.snapshots.StoredSnapshot``)."""

    @property
    def seq(self) -> int: ...
    @property
    def hash(self) -> str: ...
    @property
    def state(self) -> str: ...
    @property
    def format(self) -> int: ...


@dataclass(frozen=True)
class Snapshot:
    """The fold up to and including event ``seq`` (whose hash is ``hash``), encoded."""

    seq: int
    hash: str
    state: str  # JSON of the PipelineState
    format: int = FORMAT


def take(state: PipelineState) -> Snapshot:
    """A snapshot of the fold as it stands (after ``state.last_seq``)."""
    return Snapshot(seq=state.last_seq, hash=state.last_hash, state=json.dumps(_encode(state)))


def restore(snapshot: SnapshotRecord) -> PipelineState | None:
    """The state a snapshot holds, or None when it is of another format or does not read back
    (the caller then folds from the first event)."""
    if snapshot.format != FORMAT:
        return None
    try:
        state = _decode(json.loads(snapshot.state))
    except (ValueError, TypeError, KeyError):
        return None
    if state.last_seq != snapshot.seq or state.last_hash != snapshot.hash:
        return None
    return state


def fold_after(snapshot: SnapshotRecord | None,
               read: Callable[[int], Iterable[Envelope]]) -> tuple[PipelineState, int]:
    """The fold of a run from its snapshot (None, or one that does not restore: from the first
    event), reading the events after it with ``read(from_seq)``; and the seq it started after
    (0: the first event). An event read at or before the snapshot's seq is skipped."""
    start = restore(snapshot) if snapshot is not None else None
    if start is None:
        return fold(read(1)), 0
    since = start.last_seq
    return fold((env for env in read(since + 1) if env.seq > since), start), since


def _encode(state: PipelineState) -> dict[str, Any]:
    out = {f.name: getattr(state, f.name) for f in fields(state) if f.name not in _NESTED | _SKIPPED}
    out["spend"] = asdict(state.spend)
    out["best"] = asdict(state.best)
    out["pending"] = [{**asdict(p), "payload": _short(p.payload)} for p in state.pending.values()]
    out["requests"] = [{**asdict(p), "payload": _short(p.payload)} for p in state.requests.values()]
    out["result"] = _short(state.result)
    out["results"] = sorted(state.results)
    out["solutions"] = [{**asdict(n), "content": "", "detail": {}} for n in state.solutions.values()]
    out["evaluations"] = [asdict(e) for e in state.evaluations]
    return out


def _short(payload: dict[str, Any]) -> dict[str, Any]:
    """A finished request's values the fold and the views may still read (its purpose, solution,
    agent, times): numbers, flags and strings up to ``SHORT`` characters."""
    return {k: v for k, v in payload.items()
            if v is None or isinstance(v, (bool, int, float)) or (isinstance(v, str) and len(v) <= SHORT)}


def _decode(data: dict[str, Any]) -> PipelineState:
    plain = {f.name: data[f.name] for f in fields(PipelineState) if f.name not in _NESTED | _SKIPPED}
    state = PipelineState(**plain)
    state.spend = SpendMeter(**data["spend"])
    state.best = BestEvaluated(**data["best"])
    state.requests = {p["effect_id"]: PendingEffect(**p) for p in data["requests"]}
    # A pending effect is the same object as its request in a fold (one record, two indexes).
    state.pending = {p["effect_id"]: state.requests.get(p["effect_id"]) or PendingEffect(**p)
                     for p in data["pending"]}
    state.results = set(data["results"])
    state.solutions = {n["solution_id"]: SolutionNode(**n) for n in data["solutions"]}
    state.evaluations = [EvaluationPoint(**e) for e in data["evaluations"]]
    return state


__all__ = ["FORMAT", "Snapshot", "SnapshotRecord", "fold_after", "restore", "take"]
