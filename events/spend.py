"""Money spent on the model outside a recorded agent result.

An agent call's cost normally arrives with its result. Three kinds of spend do not: the backend's
start-up check (one tiny real request, so a bad key or endpoint fails the start in seconds), a
call the engine cancelled (its phase ended; its result is never recorded), and a call that was in
flight when the engine died. They are recorded here so a run's cost is honest; ``cost_usd`` is
None when it is unknown (``usage`` then says how many tokens were streamed, if any).

v2 adds ``in_budget``: whether the handlers' budget decisions count this spend. Every v2 event
does (one ledger: the money the handlers decide on is the money the run shows). A v1 event was
written by an engine whose handlers never counted it, and its log's recorded decisions were made
without it; the upcaster marks it ``in_budget=False`` so that log still replays and resumes to
the same decisions, while ``engine status`` still shows the money.

v3 adds the reason ``unpriced``: a call whose result came without a cost while the run has a
budget. The run's ledger charges such a call its whole cap (the most it could have spent); this
event records that charge, so the handlers' budget decisions, ``engine status`` and the run's
result count unknown cost the same way the ledger does. ``cancelled`` spend of unknown amount is
likewise recorded at the call's cap when there is one (``detail`` says so).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from events.base import Event, EventKind, register, upcaster


@register
class AgentSpendRecorded(Event):
    type_name: ClassVar[str] = "AgentSpendRecorded"
    kind: ClassVar[EventKind] = "bookkeeping"
    version: ClassVar[int] = 3

    reason: Literal["preflight", "cancelled", "crashed", "unpriced"]
    effect_id: str | None = None
    backend: str = ""
    cost_usd: float | None = None
    usage: dict[str, Any] = {}
    detail: str = ""
    in_budget: bool = True


@upcaster("AgentSpendRecorded", 1)
def _agent_spend_recorded_v1_to_v2(payload: dict[str, Any]) -> dict[str, Any]:
    """v1 spend was recorded beside handlers that did not count it (see the module docstring)."""
    return {**payload, "in_budget": False}


@upcaster("AgentSpendRecorded", 2)
def _agent_spend_recorded_v2_to_v3(payload: dict[str, Any]) -> dict[str, Any]:
    """v3 only adds a reason: every v2 event reads the same."""
    return dict(payload)
