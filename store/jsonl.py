"""Runs as JSON Lines: one sealed envelope per line, exactly as stored (hashes included)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import IO

from events.base import GENESIS_HASH, Envelope, canonical_json
from store.base import CorruptLog


def write_jsonl(envelopes: Iterable[Envelope], out: IO[str]) -> int:
    count = 0
    for env in envelopes:
        out.write(canonical_json(env.model_dump(mode="json")) + "\n")
        count += 1
    return count


def read_jsonl(source: IO[str], *, check_chain: bool = True) -> list[Envelope]:
    """Parse an export; with ``check_chain`` refuse any file whose hash chain is broken."""
    envelopes: list[Envelope] = []
    for lineno, line in enumerate(source, start=1):
        if not line.strip():
            continue
        try:
            envelopes.append(Envelope.model_validate_json(line))
        except ValueError as exc:
            raise CorruptLog(f"line {lineno}: not an exported event ({str(exc).splitlines()[0]})") from None
    if not envelopes:
        raise CorruptLog("the file holds no events")
    if check_chain:
        run_id, prev = envelopes[0].run_id, GENESIS_HASH
        for i, env in enumerate(envelopes, start=1):
            if env.run_id != run_id or env.seq != i or env.prev_hash != prev or env.compute_hash() != env.hash:
                raise CorruptLog(f"event {i} of the file breaks the hash chain; the export was altered")
            prev = env.hash
    return envelopes


def status_of(last_type: str) -> str:
    """The status an imported log implies from its last event."""
    return {"RunCompleted": "completed", "RunFailed": "failed"}.get(last_type, "stopped")
