"""Checking stored events against the hash chain: one rule for every backend."""

from __future__ import annotations

import json
from collections.abc import Iterable

from events.base import GENESIS_HASH, EffectResult, canonical_json, chain_hash, event_class
from store.base import ChainProblem

# (seq, type, version, scope, causation_seq, recorded_at, payload, prev_hash, hash, result_of), text as str
StoredRow = tuple


def first_chain_problem(run_id: str, rows: Iterable[StoredRow], head_seq: int, head_hash: str) -> ChainProblem | None:
    """The first row (in seq order) whose stored bytes do not match the chain, or None."""
    prev_hash = GENESIS_HASH
    expected = 1
    for seq, typ, version, scope, cause, recorded_at, payload_text, stored_prev, stored_hash, result_of in rows:
        if seq != expected:
            return ChainProblem(expected, f"event {expected} is missing (next stored seq is {seq})")
        try:
            payload = json.loads(payload_text)
        except (json.JSONDecodeError, TypeError):
            return ChainProblem(seq, "payload is not valid JSON")
        if not isinstance(payload, dict) or canonical_json(payload) != payload_text:
            return ChainProblem(seq, "payload bytes are not the canonical JSON that was sealed")
        if stored_prev != prev_hash:
            return ChainProblem(seq, "prev_hash does not match the previous event's hash")
        fields = {"run_id": run_id, "seq": seq, "type": typ, "version": version, "scope": scope,
                  "causation_seq": cause, "recorded_at": recorded_at, "payload": payload}
        if chain_hash(prev_hash, fields) != stored_hash:
            return ChainProblem(seq, "hash does not match the event's contents")
        try:
            is_result = issubclass(event_class(typ), EffectResult)
        except ValueError:
            return ChainProblem(seq, f"unknown event type {typ!r}")
        if result_of != (payload.get("effect_id") if is_result else None):
            return ChainProblem(seq, "the effect index column does not match the payload")
        prev_hash = stored_hash
        expected += 1
    if expected - 1 != head_seq:
        return ChainProblem(expected, f"the run's head says seq {head_seq} but the log ends at {expected - 1}")
    if head_hash != prev_hash:
        return ChainProblem(expected - 1, "the run's head hash does not match the last event")
    return None
