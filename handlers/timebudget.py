"""Time allocation for the MLE-STAR pipeline (REQ-OR-024/025/026/034), as plain arithmetic.

The run has ``time_limit_seconds`` of driven time (``T``). It is shared 10/65/15/10 between
Phase 1, Phase 2, Phase 3 and finalization (``PipelineConfig.phase_time_budget``).

*Redistribution.* Each phase's window is computed from the clock *when it starts*: the time
left is split between the phases still to run (finalization included) in proportion to their
shares, so a phase that finishes early leaves its unused time to all later ones. Phase 2
starting at ``t`` gets ``(T − t) × 65 / (65 + 15 + 10)``: REQ-OR-026's ``remaining × 0.65 / 0.90``.
When Phase 3 will not run (L = 1) its share is simply not in the sum.

*Finalization reserve and "finalize now".* REQ-OR-034 says to finalize once less than
``max(10 % of T, 5 min)`` remains. That threshold is the time kept back for finalization:

    reserve = max(finalization share × T, 10 % × T, min(5 min, T / 2))

No search phase's window reaches past ``T − reserve`` (the finalize-now point), and at a phase
boundary past that point the remaining search phases are skipped. The 5-minute floor is capped
at half the limit: with ``T = 60 s`` a literal ``max(6 s, 300 s)`` would finalize before Phase 1
started and no submission could ever be produced. With the cap, a 60 s run searches for at
most 30 s and finalizes in the rest; for limits of 50 minutes and more the floor is at most
10 % and the split is exactly 10/65/15/10. Finalization gets everything left, and at least
``reserve`` even if an earlier phase overran (so a 60 s run ends within 90 s, REQ-OR-024).

*Soft and hard ends.* A phase is told ``soft_end_s`` as its ``deadline_s`` (it sizes evaluation
timeouts from it and may wrap up on its own); the pipeline's guard timer fires at ``end_s``,
a small grace later (5 % of the window, at most 60 s), and cancels whatever is still running.
"""

from __future__ import annotations

from dataclasses import dataclass

from events.domain import PhaseTimeBudget, PipelineConfig

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


@dataclass(frozen=True)
class TimePlan:
    start_s: float
    limit_s: float
    shares: dict[str, float]
    reserve_s: float

    @classmethod
    def from_config(cls, config: PipelineConfig, *, start_s: float = 0.0) -> "TimePlan":
        budget = config.phase_time_budget or PhaseTimeBudget()
        shares = {"phase1": budget.phase1_pct, "phase2": budget.phase2_pct, "phase3": budget.phase3_pct,
                  FINALIZATION: budget.finalization_pct}
        limit = float(config.time_limit_seconds)
        reserve = max(shares[FINALIZATION] / 100.0 * limit, FINALIZE_NOW_FRACTION * limit,
                      min(FINALIZE_NOW_FLOOR_S, limit / 2.0))
        return cls(start_s=start_s, limit_s=limit, shares=shares, reserve_s=reserve)

    @property
    def end_s(self) -> float:
        """The overall deadline (REQ-OR-024)."""
        return self.start_s + self.limit_s

    @property
    def finalize_at_s(self) -> float:
        """The finalize-now point: from here on only finalization runs (REQ-OR-034)."""
        return self.end_s - self.reserve_s

    def remaining_s(self, now: float) -> float:
        return self.end_s - now

    def finalize_now(self, now: float) -> bool:
        return now >= self.finalize_at_s

    def window(self, phase: str, now: float, remaining: tuple[str, ...]) -> Window:
        """The window of search phase ``phase`` starting at ``now``; ``remaining`` are the search
        phases still to run, ``phase`` first."""
        if phase not in SEARCH_PHASES or phase not in remaining:
            raise ValueError(f"{phase!r} is not a search phase still to run ({remaining})")
        weight = sum(self.shares[p] for p in remaining) + self.shares[FINALIZATION]
        budget = max(0.0, self.end_s - now) * self.shares[phase] / weight
        end = min(now + budget, max(now, self.finalize_at_s))
        return _window(phase, now, end, self.shares[phase], remaining)

    def finalization_window(self, now: float) -> Window:
        end = max(self.end_s, now + self.reserve_s)
        return _window(FINALIZATION, now, end, self.shares[FINALIZATION], (FINALIZATION,))


def _window(phase: str, start: float, end: float, share: float, remaining: tuple[str, ...]) -> Window:
    grace = min(MAX_GRACE_S, GRACE_FRACTION * (end - start))
    return Window(phase=phase, start_s=start, end_s=end, soft_end_s=end - grace, share_pct=share,
                  remaining=remaining)
