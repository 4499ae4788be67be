"""Sealing events into the hash chain and rebuilding envelopes from stored rows: shared by every
backend, so SQLite and PostgreSQL store byte-identical events (an export from one imports into
the other with the same hashes)."""

from __future__ import annotations

import gc
import hashlib
import json
from collections.abc import Sequence
from datetime import datetime, timezone

from events.base import EffectResult, Envelope, NewEvent
from store.artifacts import ArtifactReader, externalise, has_refs, refs_in
from store.base import CorruptLog


def now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


# A sealed event as stored: (run_id, seq, type, version, scope, causation_seq, recorded_at, payload,
# prev_hash, hash, result_of)
SealedRow = tuple[str, int, str, int, str, int | None, str, str, str, str, str | None]


def seal(run_id: str, events: Sequence[NewEvent], head_seq: int,
         prev_hash: str) -> tuple[list[Envelope], list[SealedRow], dict[str, str]]:
    """The envelopes of ``events`` appended after ``head_seq`` (their payloads whole), their rows
    (payloads with long strings as artifact references, store.artifacts) and those artifacts
    (digest -> text): the chain seals the rows' payloads."""
    envelopes: list[Envelope] = []
    rows: list[SealedRow] = []
    texts: dict[str, str] = {}
    recorded_at = now_iso()
    batch_fields = f'"recorded_at":{_json_str(recorded_at)},"run_id":{_json_str(run_id)},"scope":'
    for seq, new in enumerate(events, start=head_seq + 1):
        ev = new.event
        payload = ev.payload()
        # The bytes chain_hash(prev_hash, fields) hashes (canonical JSON: sorted keys, no spaces),
        # composed around the payload's JSON so it is encoded once, for the column and the hash:
        # batched appends spent most of their time in json.dumps. Tests recompute it independently.
        payload_json = _canonical.encode(externalise(payload, texts))
        cause = "null" if new.causation_seq is None else str(int(new.causation_seq))
        sealed = (f'{{"causation_seq":{cause},"payload":{payload_json},{batch_fields}{_json_str(new.scope)},'
                  f'"seq":{seq},"type":{_json_str(ev.type_name)},"version":{int(ev.version)}}}')
        digest = hashlib.sha256(prev_hash.encode("ascii") + sealed.encode("utf-8")).hexdigest()
        row = (run_id, seq, ev.type_name, ev.version, new.scope, new.causation_seq, recorded_at,
               payload_json, prev_hash, digest)
        envelopes.append(envelope_from_row(row, payload))
        rows.append((*row, ev.effect_id if isinstance(ev, EffectResult) else None))
        prev_hash = digest
    return envelopes, rows, texts


def payload_of(run_id: str, row: tuple) -> dict:
    try:
        payload = json.loads(row[7])
    except json.JSONDecodeError:
        raise CorruptLog(f"run {run_id} seq {row[1]}: stored payload is not valid JSON") from None
    if not isinstance(payload, dict):
        raise CorruptLog(f"run {run_id} seq {row[1]}: stored payload is not a JSON object")
    return payload


_json_str = json.encoder.encode_basestring  # how canonical_json (ensure_ascii=False) writes a str
# canonical_json's settings in one reusable encoder (json.dumps builds a new encoder per call)
_canonical = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=True)

_ENVELOPE_FIELDS = ("run_id", "seq", "type", "version", "scope", "causation_seq", "recorded_at", "payload",
                    "prev_hash", "hash")
_ENVELOPE_FIELD_SET = frozenset(_ENVELOPE_FIELDS)


def envelope_from_row(row: tuple, payload: dict) -> Envelope:
    """An Envelope from a stored row without re-validation: the columns are typed by the schema
    and were validated when sealed. What ``model_construct`` does, minus its per-field default
    handling, which made reading (every resume, every ``status``) ~3x slower; the store contract
    tests compare these with validated envelopes."""
    env = object.__new__(Envelope)
    object.__setattr__(env, "__dict__", {"run_id": row[0], "seq": row[1], "type": row[2], "version": row[3],
                                         "scope": row[4], "causation_seq": row[5], "recorded_at": row[6],
                                         "payload": payload, "prev_hash": row[8], "hash": row[9]})
    object.__setattr__(env, "__pydantic_fields_set__", set(_ENVELOPE_FIELD_SET))
    object.__setattr__(env, "__pydantic_extra__", None)
    object.__setattr__(env, "__pydantic_private__", None)
    return env


def envelopes_from_rows(run_id: str, rows: Sequence[tuple], reader: ArtifactReader | None = None) -> list[Envelope]:
    """One chunk of stored rows as envelopes, parsed with the cyclic GC paused: parsing a long log
    allocates millions of small objects, which would trigger hundreds of collections that rescan
    the growing heap (about two thirds of the read time). With a ``reader``, artifact references
    are resolved (the chunk's artifacts read together); without, payloads are as sealed."""
    gc_was_on = gc.isenabled()
    gc.disable()
    try:
        payloads = [payload_of(run_id, row) for row in rows]
        if reader is not None:
            referring = [i for i, row in enumerate(rows) if has_refs(row[7])]
            reader.load(d for i in referring for d in refs_in(payloads[i]))
            for i in referring:
                payloads[i] = reader.resolve(run_id, rows[i][1], payloads[i])
        return [envelope_from_row(row, payload) for row, payload in zip(rows, payloads)]
    finally:
        if gc_was_on:
            gc.enable()
