"""Orchestrator decisions (spec 09): how time and money were shared out and what the pipeline
did when a limit was reached. Each one is a decision of ``handlers.mlestar.pipeline``; together with
PhaseStarted/PhaseCompleted they make the run's control flow readable from the log alone.
"""

from __future__ import annotations

from typing import Any, ClassVar

from events.base import Event, register


@register
class PhaseBudgetAllocated(Event):
    """REQ-OR-025/026: the time window a phase gets, computed from the driven clock when it
    starts (what earlier phases left unused is redistributed over the phases still to run).

    ``deadline_s`` is the hard stop (the guard timer); ``soft_deadline_s`` is what the phase
    itself is told (it may wrap up on its own before the guard fires).
    """

    type_name: ClassVar[str] = "PhaseBudgetAllocated"

    phase: str
    started_at_s: float
    deadline_s: float
    soft_deadline_s: float
    budget_s: float
    share_pct: float
    remaining_phases: list[str]


@register
class DeadlineHit(Event):
    """A phase's guard timer fired before the phase finished (REQ-OR-023/026/030)."""

    type_name: ClassVar[str] = "DeadlineHit"

    phase: str
    deadline_s: float
    action: str  # "cancelled" | "extended"


@register
class BudgetWarning(Event):
    """REQ-OR-029: 80 % of ``max_budget_usd`` has been spent."""

    type_name: ClassVar[str] = "BudgetWarning"

    spent_usd: float
    limit_usd: float
    fraction: float


@register
class BudgetExhausted(Event):
    """REQ-OR-029/030: spending reached ``max_budget_usd``; the search stops, finalization runs."""

    type_name: ClassVar[str] = "BudgetExhausted"

    spent_usd: float
    limit_usd: float
    phase: str


@register
class FinalizeNow(Event):
    """REQ-OR-030/034: skip the remaining search phases and go to finalization."""

    type_name: ClassVar[str] = "FinalizeNow"

    reason: str  # "time" | "budget"
    remaining_s: float
    threshold_s: float
    skipped: list[str]


@register
class PhaseSkipped(Event):
    """A phase that did not run, and why (L=1, finalize-now, budget)."""

    type_name: ClassVar[str] = "PhaseSkipped"

    phase: str
    reason: str


@register
class FallbackUsed(Event):
    """REQ-OR-040/041/043: a substitute solution stands in for a phase that failed or was cut."""

    type_name: ClassVar[str] = "FallbackUsed"

    phase: str
    reason: str
    solution_id: str
    score: float | None
    detail: dict[str, Any] = {}


@register
class WorkCut(Event):
    """A unit of work (a Phase 2 path, Phase 3, Phase 1) stopped by its deadline or the budget,
    and what it kept: its own best so far (REQ-OR-026/043), and how far it had got."""

    type_name: ClassVar[str] = "WorkCut"

    unit: str                    # "phase2/path-1", "phase3", "phase1"
    reason: str                  # "deadline" | "budget" | what cancelled it
    at_s: float                  # driven time of the cut
    where: str                   # the step it was in, e.g. "outer step 2", "round 1"
    steps_done: int              # complete steps (outer steps, rounds) before the cut
    kept_solution_id: str
    kept_score: float | None


__all__ = ["PhaseBudgetAllocated", "DeadlineHit", "BudgetWarning", "BudgetExhausted", "FinalizeNow",
           "PhaseSkipped", "FallbackUsed", "WorkCut"]
