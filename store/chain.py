"""Checking stored events against the hash chain: one rule for every backend, and the one message
that names a problem (``engine verify`` prints it; resume, rerun, replay and the UI refuse with it).

A full check (``verify_chain``) reads every event. The check made when a run is opened
(``check_chain``) starts from the run's last verified head instead — the seq and hash a previous
check found intact, kept in the store — so opening a long run costs only what was appended since:
the verified head's own row must still carry the verified hash, and every later event must chain
onto it. Rewrites of events before that head are found by ``engine verify``, which reads them all.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from events.base import (
    GENESIS_HASH,
    EffectResult,
    Envelope,
    canonical_json,
    chain_hash,
    chain_hash_of_text,
    event_class,
)
from store.artifacts import externalise
from store.base import ChainProblem, CorruptLog, EventStore

# (seq, type, version, scope, causation_seq, recorded_at, payload, prev_hash, hash, result_of), text as str
StoredRow = tuple

VERIFIED_HEAD_KEY = "chain_verified:"  # + run id: the engine_meta key of a run's verified head


@dataclass(frozen=True)
class VerifiedHead:
    """The last event a chain check found intact (seq 0: nothing verified yet)."""

    seq: int
    hash: str

    def encode(self) -> str:
        return f"{self.seq} {self.hash}"

    @staticmethod
    def decode(value: str | None) -> VerifiedHead:
        """A stored head; anything unreadable counts as nothing verified (the check reads all)."""
        seq, _, digest = (value or "").partition(" ")
        if not seq.isdigit() or len(digest) != len(GENESIS_HASH):
            return GENESIS
        return VerifiedHead(int(seq), digest)


GENESIS = VerifiedHead(0, GENESIS_HASH)


class ChainBroken(CorruptLog):
    """A run whose stored events fail the hash chain: it is not opened (resumed, rerun, replayed)."""

    def __init__(self, run_id: str, problem: ChainProblem, doing: str) -> None:
        super().__init__(describe_problem(run_id, problem, refused=doing))
        self.problem = problem


def describe_problem(run_id: str, problem: ChainProblem, *, refused: str = "") -> str:
    """What ``engine verify`` says of a run that fails its chain: where, what differs, what to do;
    ``refused``: what was not done with the run because of it (resumed, rerun, …)."""
    run = shlex.quote(run_id)
    not_done = f", so the run is not {refused}" if refused else ""
    if problem.damaged:
        return (f"DAMAGED: run {run_id}: the database file is unreadable from seq {problem.seq} "
                f"({problem.reason}){not_done}. Save what reads whole with `engine export {run} -o {run}.jsonl`, "
                "or restore the file from a copy.")
    return (f"TAMPERED: run {run_id}: first bad event is seq {problem.seq}: {problem.reason}. The stored events "
            f"are not the ones that were recorded{not_done}; restore the database from a copy, or import the run "
            f"from an export taken before (`engine import FILE --db NEW.db`). `engine verify {run}` checks "
            "every event.")


def first_chain_problem(run_id: str, rows: Iterable[StoredRow], head_seq: int, head_hash: str,
                        start: VerifiedHead = GENESIS) -> ChainProblem | None:
    """The first row (in seq order) whose stored bytes do not match the chain, or None.

    ``rows`` begin at ``start.seq`` (its row included, unless it is 0): that row must still carry
    ``start.hash``; every later row is checked in full."""
    rows = iter(rows)
    if start.seq > 0:
        problem = _start_problem(next(rows, None), start)
        if problem is not None:
            return problem
    prev_hash, expected = start.hash, start.seq + 1
    for row in rows:
        problem = _row_problem(run_id, row, expected, prev_hash)
        if problem is not None:
            return problem
        prev_hash = row[8]
        expected += 1
    return _head_problem(expected - 1, prev_hash, head_seq, head_hash)


def _start_problem(row: StoredRow | None, start: VerifiedHead) -> ChainProblem | None:
    if row is None or row[0] != start.seq:
        return ChainProblem(start.seq, f"event {start.seq}, found intact by an earlier check, is missing (deleted)")
    if row[8] != start.hash:
        return ChainProblem(start.seq, "hash differs from the one an earlier check found intact (the event "
                                       "was rewritten)")
    return None


def _row_problem(run_id: str, row: StoredRow, expected: int, prev_hash: str) -> ChainProblem | None:
    seq, typ, version, scope, cause, recorded_at, payload_text, stored_prev, stored_hash, result_of = row
    if seq != expected:
        return ChainProblem(expected, f"event {expected} is missing (next stored seq is {seq})")
    try:
        payload = json.loads(payload_text)
    except (json.JSONDecodeError, TypeError):
        return ChainProblem(seq, "payload is not valid JSON")
    if not isinstance(payload, dict) or stored_prev != prev_hash or chain_hash_of_text(prev_hash, sealed_text(
            run_id, seq, typ, version, scope, cause, recorded_at, payload_text)) != stored_hash:
        return _what_differs(seq, payload_text, payload, stored_prev != prev_hash)
    try:
        is_result = issubclass(event_class(typ), EffectResult)
    except ValueError:
        return ChainProblem(seq, f"unknown event type {typ!r}")
    if result_of != (payload.get("effect_id") if is_result else None):
        return ChainProblem(seq, "the effect index column does not match the payload")
    return None


def sealed_text(run_id: str, seq: int, typ: str, version: int, scope: str, cause: int | None, recorded_at: str,
                payload_text: str) -> str:
    """``canonical_json`` of an event's hashed fields (``Envelope.hashed_fields``), its payload given as
    stored: the keys in sorted order around the payload's text, which is not parsed and dumped again.
    Equal to the canonical JSON whenever the payload's text is (tests/core/test_chain_text.py); every
    other field is dumped, so no text of a column can stand for another's."""
    dump = _FIELD.encode
    return (f'{{"causation_seq":{dump(cause)},"payload":{payload_text},"recorded_at":{dump(recorded_at)},'
            f'"run_id":{dump(run_id)},"scope":{dump(scope)},"seq":{dump(seq)},"type":{dump(typ)},'
            f'"version":{dump(version)}}}')


_FIELD = json.JSONEncoder(ensure_ascii=False, allow_nan=True, separators=(",", ":"))


def _what_differs(seq: int, payload_text: str, payload: Any, prev_differs: bool) -> ChainProblem:
    """Which check a row that does not chain fails, in the order they are named."""
    if not isinstance(payload, dict) or canonical_json(payload) != payload_text:
        return ChainProblem(seq, "payload bytes are not the canonical JSON that was sealed")
    if prev_differs:
        return ChainProblem(seq, "prev_hash does not match the previous event's hash")
    return ChainProblem(seq, "hash does not match the event's contents")


def _head_problem(last: int, last_hash: str, head_seq: int, head_hash: str) -> ChainProblem | None:
    """The run's head (seq and hash of its last event, kept with the run) against the log's end."""
    if last == head_seq - 1:
        return ChainProblem(head_seq, f"event {head_seq}, the run's last, is missing (deleted): the run's head "
                                      f"says seq {head_seq} but the log ends at {last}")
    if last < head_seq:
        return ChainProblem(last + 1, f"events {last + 1}-{head_seq}, the run's last, are missing (deleted): the "
                                      f"run's head says seq {head_seq} but the log ends at {last}")
    if last > head_seq:
        return ChainProblem(head_seq + 1, f"the log holds events after the run's head (seq {head_seq}) up to "
                                          f"seq {last}: they were added outside the engine")
    if head_hash != last_hash:
        return ChainProblem(last, "the run's head hash does not match the last event")
    return None



def require_intact_chain(store: EventStore, run_id: str, doing: str) -> None:
    """Refuse (ChainBroken) to go on with a run whose stored chain fails ``check_chain``;
    ``doing`` completes "run R cannot be …" (resumed, rerun, replayed, shown)."""
    problem = store.check_chain(run_id)
    if problem is not None:
        raise ChainBroken(run_id, problem, doing)


def sealed_hash(env: Envelope) -> str:
    """The chain hash of an envelope read with its artifacts resolved: the chain sealed its payload
    with long strings as references (store.artifacts), which are recomputed here."""
    return chain_hash(env.prev_hash, {**env.hashed_fields(), "payload": externalise(env.payload, {})})


def envelopes_problem(envelopes: Iterable[Envelope], start: VerifiedHead = GENESIS) -> ChainProblem | None:
    """The first of ``envelopes`` (already read, in seq order, following ``start``) that does not
    chain onto the one before, or None: the check of a reader that holds envelopes, not rows (the
    UI, which reads each run's new events as they come)."""
    prev_seq, prev_hash = start.seq, start.hash
    for env in envelopes:
        if env.seq != prev_seq + 1:
            return ChainProblem(prev_seq + 1, f"event {prev_seq + 1} is missing (next stored seq is {env.seq})")
        if env.prev_hash != prev_hash:
            return ChainProblem(env.seq, "prev_hash does not match the previous event's hash")
        if env.compute_hash() != env.hash and sealed_hash(env) != env.hash:
            return ChainProblem(env.seq, "hash does not match the event's contents")
        prev_seq, prev_hash = env.seq, env.hash
    return None
