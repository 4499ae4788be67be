"""Time allocation for the MLE-STAR pipeline (REQ-OR-024/025/026/034), as plain arithmetic.

The run has ``time_limit_seconds`` of driven time (``T``). It is shared 10/65/15/10 between
Phase 1, Phase 2, Phase 3 and finalization (``PipelineConfig.phase_time_budget``).

*Redistribution.* Each phase's window is computed from the clock *when it starts*: the time
left is split between the phases still to run (finalization included) in proportion to their
shares, so a phase that finishes early leaves its unused time to all later ones. Phase 2
starting at ``t`` gets ``(T − t) × 65 / (65 + 15 + 10)``: REQ-OR-026's ``remaining × 0.65 / 0.90``.
When Phase 3 will not run (L = 1) its share is simply not in the sum.

*Finalization reserve and "finalize now".* REQ-OR-034 says to finalize once less than
``max(10 % of T, 5 min)`` remains. Two numbers come out of it:

    planned  = max(finalization share × T, 10 % × T)        the finalize-now point is T − planned
    reserve  = max(planned, min(5 min, T / 2))               what finalization is guaranteed

No search phase's window reaches past ``T − planned`` (the finalize-now point), and at a phase
boundary past that point the remaining search phases are skipped. *The unused reserve:* holding
the 5-minute floor back from the search starved every run under ~50 minutes (at ``T = 150 s``
the search had 75 s and finalization, which needs seconds on a small task, kept the other 75),
and time finalization leaves unused cannot be handed back afterwards. So the floor is not held
back: it is a guarantee given to finalization *after* the search — finalization runs until
``max(T, start + reserve)`` — which may carry a run past ``T`` by at most ``T / 2`` (a 60 s run
ends within 90 s, REQ-OR-024's acceptance). For limits of 50 minutes and more both numbers are
``max(10 %, 5 min)``, exactly REQ-OR-034, and the split is exactly 10/65/15/10.

*Clipping.* When the finalize-now point cuts into the windows (a phase overran, or a share
configuration leaves little), the search phases still to run share what is left before it in
proportion to their shares: Phase 3 keeps its share instead of getting the seconds Phase 2 left.

*Soft and hard ends.* A phase is told ``soft_end_s`` as its ``deadline_s`` (it sizes evaluation
timeouts from it and may wrap up on its own); the pipeline's guard timer fires at ``end_s``,
a small grace later (5 % of the window, at most 60 s), and cancels whatever is still running.
"""

from __future__ import annotations

from dataclasses import dataclass

from events.domain import PhaseTimeBudget, PipelineConfig
from handlers.deadline import Deadline

SEARCH_PHASES = ("phase1", "phase2", "phase3")
FINALIZATION = "finalization"
FINALIZE_NOW_FRACTION = 0.10   # REQ-OR-034: 10 % of the limit ...
FINALIZE_NOW_FLOOR_S = 300.0   # ... or 5 minutes, whichever is larger (floor capped at T / 2)
GRACE_FRACTION = 0.05
MAX_GRACE_S = 60.0


@dataclass(frozen=True)
class Window:
    """The time a phase may use: ``[start_s, end_s]`` on the run's driven clock."""

    phase: str
    start_s: float
    end_s: float        # the guard timer: the phase is cancelled if still running
    soft_end_s: float   # the phase's own deadline_s
    share_pct: float
    remaining: tuple[str, ...]

    @property
    def budget_s(self) -> float:
        return self.end_s - self.start_s

    @property
    def deadline(self) -> Deadline:
        return Deadline(self.soft_end_s, self.end_s)


@dataclass(frozen=True)
class TimePlan:
    start_s: float
    limit_s: float
    shares: dict[str, float]
    reserve_s: float   # finalization's guaranteed time (see the module doc)
    planned_s: float   # the time before the end from which only finalization runs

    @classmethod
    def from_config(cls, config: PipelineConfig, *, start_s: float = 0.0) -> TimePlan:
        budget = config.phase_time_budget or PhaseTimeBudget()
        shares = {"phase1": budget.phase1_pct, "phase2": budget.phase2_pct, "phase3": budget.phase3_pct,
                  FINALIZATION: budget.finalization_pct}
        limit = float(config.time_limit_seconds)
        planned = max(shares[FINALIZATION] / 100.0 * limit, FINALIZE_NOW_FRACTION * limit)
        reserve = max(planned, min(FINALIZE_NOW_FLOOR_S, limit / 2.0))
        return cls(start_s=start_s, limit_s=limit, shares=shares, reserve_s=reserve, planned_s=planned)

    @property
    def end_s(self) -> float:
        """The overall deadline (REQ-OR-024)."""
        return self.start_s + self.limit_s

    @property
    def finalize_at_s(self) -> float:
        """The finalize-now point: from here on only finalization runs (REQ-OR-034)."""
        return self.end_s - self.planned_s

    def remaining_s(self, now: float) -> float:
        return self.end_s - now

    def finalize_now(self, now: float) -> bool:
        return now >= self.finalize_at_s

    def window(self, phase: str, now: float, remaining: tuple[str, ...]) -> Window:
        """The window of search phase ``phase`` starting at ``now``; ``remaining`` are the search
        phases still to run, ``phase`` first."""
        if phase not in SEARCH_PHASES or phase not in remaining:
            raise ValueError(f"{phase!r} is not a search phase still to run ({remaining})")
        search = sum(self.shares[p] for p in remaining)
        budget = max(0.0, self.end_s - now) * self.shares[phase] / (search + self.shares[FINALIZATION])
        clipped = max(0.0, self.finalize_at_s - now) * self.shares[phase] / search if search > 0 else 0.0
        if clipped < budget * (1 - 1e-9):  # the finalize-now point binds (a tolerance: equal shares
            budget = clipped                 # must not flip on the last bit of a float)
        return _window(phase, now, now + budget, self.shares[phase], remaining)

    def finalization_window(self, now: float) -> Window:
        end = max(self.end_s, now + self.reserve_s)
        return _window(FINALIZATION, now, end, self.shares[FINALIZATION], (FINALIZATION,))


def _window(phase: str, start: float, end: float, share: float, remaining: tuple[str, ...]) -> Window:
    grace = min(MAX_GRACE_S, GRACE_FRACTION * (end - start))
    return Window(phase=phase, start_s=start, end_s=end, soft_end_s=end - grace, share_pct=share,
                  remaining=remaining)
