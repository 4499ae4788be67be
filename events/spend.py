"""Money spent on the model outside a recorded agent result.

An agent call's cost normally arrives with its result. Three kinds of spend do not: the backend's
start-up check (one tiny real request, so a bad key or endpoint fails the start in seconds), a
call the engine cancelled (its phase ended; its result is never recorded), and a call that was in
flight when the engine died. They are recorded here so a run's cost is honest; ``cost_usd`` is
None when it is unknown (``usage`` then says how many tokens were streamed, if any).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from events.base import Event, EventKind, register


@register
class AgentSpendRecorded(Event):
    type_name: ClassVar[str] = "AgentSpendRecorded"
    kind: ClassVar[EventKind] = "bookkeeping"

    reason: Literal["preflight", "cancelled", "crashed"]
    effect_id: str | None = None
    backend: str = ""
    cost_usd: float | None = None
    usage: dict[str, Any] = {}
    detail: str = ""
