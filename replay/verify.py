"""Replay a recorded log through the handlers and name the first decision that differs.

Only inputs are fed; every decision is re-derived and compared with what the log recorded
right after that input (the decisions an input caused carry its seq as ``causation_seq``).
Bookkeeping events (drivers starting and stopping) are neither fed nor compared, except spend
recorded without a result (``replay.meter``): the handlers' meter counts it where the log has it,
as the driver fed it, and it decides nothing. Remarks (``Note``) are neither fed nor compared, on
either side: what a handler says to people may be reworded, added or dropped by a new release
without stranding a run recorded by the old one.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from events.base import Envelope, NewEvent, event_class
from replay.meter import SPEND_RECORDED


class React(Protocol):
    def feed(self, event: Any) -> list[NewEvent]: ...


@dataclass(frozen=True)
class Divergence:
    seq: int
    expected: dict[str, Any] | None
    actual: dict[str, Any] | None
    input_seq: int

    def describe(self) -> str:
        exp = _pretty(self.expected)
        act = _pretty(self.actual)
        diff = "\n".join(difflib.unified_diff(exp.splitlines(), act.splitlines(), "recorded", "replayed",
                                              lineterm="", n=2))
        what = (
            "the handlers decided something the log does not have" if self.expected is None else
            "the handlers no longer make this recorded decision" if self.actual is None else
            "the handlers decided differently"
        )
        return (f"first divergence at seq {self.seq} (caused by input seq {self.input_seq}): {what}\n"
                f"expected (recorded): {_headline(self.expected)}\nactual (replayed):  {_headline(self.actual)}\n"
                f"{diff}")


def _headline(d: dict[str, Any] | None) -> str:
    if d is None:
        return "(nothing)"
    p = d.get("payload", {})
    key = p.get("effect_id") or p.get("solution_id") or p.get("phase") or ""
    return f"{d['type']} [{d['scope']}] {key}".rstrip()


def _pretty(d: dict[str, Any] | None) -> str:
    return "" if d is None else json.dumps(d, indent=1, sort_keys=True, default=str)


def decision_record(scope: str, type_name: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"type": type_name, "scope": scope, "payload": payload}


def verify(log: Iterable[Envelope], make_react: Callable[[], React],
           on_input: Callable[[Envelope], None] | None = None) -> tuple[Divergence | None, React]:
    """Re-derive every decision of ``log``; return the first divergence (or None) and the
    handler state after the last input (so a resume can continue from it)."""
    react = make_react()
    expected: list[Envelope] = []
    produced: list[NewEvent] = []
    input_seq = 0

    def compare() -> Divergence | None:
        nonlocal produced
        produced = [p for p in produced if p.event.kind != "remark"]
        for i in range(max(len(expected), len(produced))):
            rec = expected[i] if i < len(expected) else None
            new = produced[i] if i < len(produced) else None
            rec_d = decision_record(rec.scope, rec.type, current_payload(rec)) if rec else None
            new_d = decision_record(new.scope, new.event.type_name, new.event.payload()) if new else None
            if not same_decision(rec_d, new_d) and not same_decision(rec_d, _normalise(new_d)):
                seq = rec.seq if rec else (expected[-1].seq + 1 if expected else input_seq + 1)
                return Divergence(seq=seq, expected=rec_d, actual=new_d, input_seq=input_seq)
        return None

    for env in log:
        kind = event_class(env.type).kind
        if kind == "bookkeeping":
            if env.type == SPEND_RECORDED:
                produced += react.feed(env.event())  # nothing, unless the handlers wrongly act on it
            continue
        if kind == "remark":
            env.event()  # not compared, but it is shown: it must still load in today's schema
            continue
        if kind == "decision":
            expected.append(env)
            continue
        problem = compare()
        if problem:
            return problem, react
        expected = []
        input_seq = env.seq
        if on_input is not None:
            on_input(env)
        produced = react.feed(env.event())
    return compare(), react


def current_payload(env: Envelope) -> dict[str, Any]:
    """A recorded decision's payload in the current schema: an old version is upcast first
    (as loading it would), so a log recorded before a schema change still replays."""
    if env.version == event_class(env.type).version:
        return env.payload
    return env.event().payload()


def same_decision(recorded: Any, produced: Any) -> bool:
    """Equal, where a recorded artifact reference (store/artifacts.py: ``{"$artifact":
    "sha256:<hex>", "bytes": n}``, in a log read as sealed) stands for the produced string with
    that digest. Stores resolve references when they read, so this is the exception."""
    if recorded == produced:
        return True
    if isinstance(produced, str) and isinstance(recorded, dict) and set(recorded) == {"$artifact", "bytes"}:
        digest = "sha256:" + hashlib.sha256(produced.encode("utf-8")).hexdigest()
        return bool(recorded["$artifact"] == digest)
    if isinstance(recorded, dict) and isinstance(produced, dict):
        return recorded.keys() == produced.keys() and all(same_decision(recorded[k], produced[k]) for k in recorded)
    if isinstance(recorded, list) and isinstance(produced, list):
        return len(recorded) == len(produced) and all(map(same_decision, recorded, produced))
    return False


def _normalise(d: dict[str, Any] | None) -> dict[str, Any] | None:
    """Round-trip through JSON so produced payloads compare like stored ones (tuples, non-string
    keys). Only for a payload that differs as dumped: ``payload()`` dumps in JSON mode, so nearly
    every decision compares equal without it, and the round trip of every decision's prompts and
    scripts was a fifth of a resume's handler rebuild."""
    if d is None:
        return None
    return json.loads(json.dumps(d, allow_nan=True))
