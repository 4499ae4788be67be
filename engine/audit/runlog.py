"""Shared plumbing of the audit views: loading a run, event kinds, compact payloads."""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from typing import Any

from events.base import Envelope, EventKind, UnknownEventType, event_class
from events.score import Score
from replay.state import PipelineState, fold


class AuditError(Exception):
    """A run cannot be audited (unknown, empty, no solutions); the message is for the user."""


_LOADED = False


def load_event_modules() -> None:
    """Import every module of ``events`` so every event type (also new ones) is registered."""
    global _LOADED
    if _LOADED:
        return
    import events

    for info in pkgutil.iter_modules(events.__path__):
        try:
            importlib.import_module(f"events.{info.name}")
        except Exception:  # a half-written module of a colleague must not break the audit
            continue
    _LOADED = True


def kind_of(type_name: str) -> EventKind:
    """The kind of an event type; an unregistered type counts as a decision (never silently
    dropped from a comparison)."""
    load_event_modules()
    try:
        return event_class(type_name).kind
    except UnknownEventType:
        return "decision"


@dataclass
class RunLog:
    run_id: str
    envelopes: list[Envelope]
    state: PipelineState

    @property
    def maximize(self) -> bool:
        return self.state.maximize

    @property
    def score_rule(self) -> Score:
        """How this run's scores compare (the task's metric direction)."""
        return Score.of(self.state.task.get("metric_direction", "maximize"))


def load_run(store: Any, run_id: str) -> RunLog:
    """Read and fold a run; AuditError (not a traceback) when it is unknown or empty."""
    from store.base import RunNotFound

    try:
        envelopes = list(store.read(run_id))
    except RunNotFound as exc:
        raise AuditError(str(exc)) from None
    if not envelopes:
        raise AuditError(f"run {run_id!r} has no events")
    return RunLog(run_id=run_id, envelopes=envelopes, state=fold(envelopes))


def top_phase(scope: str) -> str:
    """``phase2/path-1`` → ``phase2``; ``final`` → ``finalization``."""
    head = scope.split("/", 1)[0]
    return "finalization" if head == "final" else head


def short(value: Any, limit: int = 240) -> Any:
    """A payload value cut to a readable size (strings, long lists, nested dicts)."""
    if isinstance(value, str):
        return value if len(value) <= limit else value[: limit - 1] + "…"
    if isinstance(value, list):
        items = [short(v, limit) for v in value[:12]]
        return items + [f"… {len(value) - 12} more"] if len(value) > 12 else items
    if isinstance(value, dict):
        return {k: short(v, limit) for k, v in value.items() if k != "content"}
    return value


def fmt_score(score: Any) -> str:
    if score is None:
        return "-"
    if isinstance(score, float):
        if score != score:
            return "nan"
        return f"{score:.5g}"
    return str(score)

