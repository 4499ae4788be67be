"""The run's time plan (REQ-OR-024/025/026/034), one for both strategies, as plain arithmetic.

The run has ``time_limit_seconds`` of driven time (``T``), counted from driven time 0: the start
of ``engine start``, whose start-up (preparing the task, the backend's check) RunStarted records
as its ``elapsed_s``. Every window, finalization's included, ends by ``T``: nothing is planned
past it, and the driver's backstop (``engine.run.driver``) stops a run that is still going a
little later, within REQ-OR-024's 30 s for shutdown (``SHUTDOWN_GRACE_S``).

*Finalization's reserve* is taken out of ``T``, not added to it. It is sized from what the run has
measured (``Measured``), since finalization is a handful of agent calls and a run of the chosen
script's test version on the full data:

    need     = the test run, as measured (below)
             + 4 × the slowest answered agent call                     (A_test, subsampling ×2,
                                                                        the leakage check)
    reserve  = min(T / 2, max(finalization share × T, FINALIZATION_FLOOR_S, need))

"The solution to be finalized" is the strategy's best so far (``finalizing``: MLE-STAR's run-wide
best, ``evolve``'s best valid node). Its test run is measured in one of two ways:

* **The script's own estimate** (``Final Run Estimate: <seconds>``, ``handlers.script_lines``):
  a script that timed its parts (start-up, cross-validation, the fit on its rows) and knows how
  many rows the test version fits on prints what that run should take. The need is
  ``FINAL_RUN_MARGIN`` times it. A solution the run has not evaluated yet (a step still to
  run, ``reserve_if``) is taken to cost the largest estimate-to-run ratio the run has seen.
  The builtin agent's test run is one fit on every row without cross-validation: it took from
  0.27 (a forest on 2,600 rows) to 2.7 (boosters on 50,000 rows against a 3,600-row sample) of a
  search run, so no fixed multiple of the search run fits both.
* **Else** two runs of the solution's slowest evaluation (the test run and one debug run),
  else (nothing scored yet, or a strategy that does not say) of the slowest scored evaluation of
  the run.

No debug run is kept for an estimated test run: when the test run fails or is cut at ``T``, the
run keeps the submission the validation solution's own run wrote (``handlers.finalization``).

In the time mode (``config.step_policy == "time"``, ``handlers.step_policy``), whose search fills
every window up to the finalize-now point, the reserve is the measurement once there is one, kept
no smaller than half of finalization's share:
``reserve = min(T / 2, max(finalization share × T / 2, need))``. The half share stays for what the
measurement cannot see (a script that does not estimate, whose test run fits on all the rows
where its search runs fitted on a sample). Without it a run left most of its 10 % idle after a finalization measured to take a few
seconds, and could not use 90 % of its limit. When the need is the scripts' own estimate (the
solution to finalize printed one and, for a step still to run, the ratio comes from estimates)
the measurement sees the test run, so that floor is at most ``ESTIMATED_FLOOR_S``: half the share
of a long run would otherwise hold several times what a measured finalization takes, idle. The
fixed-step presets keep the share and the floor (their recorded runs decide as before).

A step still to run is taken to cost the estimate-to-run ratio of the solution it resembles
(``like``: Phase 3's next round, the last round's ensemble) when that one was measured, else the
largest ratio of the run: a blend of fitted members re-fits less per second of its search run
than the small linear scripts that set the run's largest ratio (often by more than half), so the
run-wide ratio would hold back more for the round's finalization than it needs.

and the finalize-now point is ``T − reserve`` (REQ-OR-034's "less than max(10 %, 5 min) left":
the 10 % is the share; the 5 minutes became the measurement, see docs/decisions/0005-time-limit.md). The reserve
grows as slower evaluations are seen; a window already given is not shrunk, but in the time mode
no step starts unless it ends before the finalize-now point as it would stand should the step
produce the solution to finalize (``TimePlan.finalize_at_if``, ``step_policy.room_for_another``).

*Redistribution.* Each search phase's window is computed from the clock *when it starts*: the
time left is split between the phases still to run (finalization included) in proportion to
their shares, so a phase that finishes early leaves its unused time to all later ones. Phase 2
starting at ``t`` gets ``(T − t) × 65 / (65 + 15 + 10)``: REQ-OR-026's ``remaining × 0.65 / 0.90``.
When Phase 3 will not run (L = 1) its share is simply not in the sum.
In the time mode finalization gets its reserve and no more: the search phases still to run share
all the time before the finalize-now point (the clipped split below, always), so the last search
phase runs up to it.

*Clipping.* No search window reaches past the finalize-now point. When it cuts into the windows
(a phase overran, or the reserve grew past finalization's share), the search phases still to run
share what is left before it in proportion to their shares. Either way every search phase starts
with at least its share of the time that remained before the reserve
(``share / Σ shares still to run × (T − reserve − now)``).

*Finalization* runs from whenever the search ends to ``T``: at least its reserve.

*Soft and hard ends.* A phase runs under its window's deadline (``Window.deadline``, set on its
workflow): it starts no new step past ``soft_end_s``; its guard timer fires at ``end_s``, a small
grace later (5 % of the window, at most 60 s), and cancels whatever is still running, evaluations
and agent calls included.

*The shortest workable limit* (``shortest_workable_limit_s``): one candidate needs
``MIN_CANDIDATE_S`` before the finalize-now point and finalization its floor; ``engine start``
refuses a shorter ``T`` before anything runs (``engine.config.validate``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from events.config import PhaseTimeBudget, PipelineConfig
from events.values import EvaluationResult
from handlers.deadline import Deadline
from handlers.script_lines import usable_estimate

SEARCH_PHASES = ("phase1", "phase2", "phase3")
FINALIZATION = "finalization"
SHUTDOWN_GRACE_S = 30.0         # REQ-OR-024: the run is over by T + 30 s, whatever is in flight
FINALIZATION_FLOOR_S = 20.0     # finalization before anything was measured: a few calls, one short run
FINALIZATION_EVAL_RUNS = 2      # without an estimate: the test script's run and one debug run
# The script's estimate extrapolates its fits to more rows, which is rough (a forest grows faster
# than its rows; a machine busy with two search runs frees up for finalization's one).
FINAL_RUN_MARGIN = 1.3
FINALIZATION_AGENT_CALLS = 4    # subsampling extract and remove, A_test, the leakage check
# The time mode's floor when the scripts estimated their test run: what the estimate does not
# see (the test script's start-up on the full data, the agent calls' spread) is seconds, not a
# share of the limit.
ESTIMATED_FLOOR_S = 10.0
MAX_RESERVE_FRACTION = 0.5      # the search keeps at least half of the limit
MIN_CANDIDATE_S = 20.0          # one Phase 1 candidate (retriever, A_init, a run) before finalize-now
GRACE_FRACTION = 0.05
MAX_GRACE_S = 60.0
# The time mode fills every window to its end, so the run's last event lands at T and the engine's
# own exit (closing the store, the interpreter) comes after it, a fraction of a second past T. Its
# windows end this much before T. Finalization's does in either mode: cut by its guard, it still
# records its fallback and the run's end, which on a loaded machine land just past its window.
EXIT_ALLOWANCE_S = 1.0

# The finalize-now point should a step of so many seconds, re-fitting like the given solution,
# produce the solution to finalize (``TimePlan.finalize_at_if``).
FinalizeAt = Callable[[float, str | None], float]


@dataclass
class Measured:
    """What the run has measured so far, in driven seconds (fed by ``Workflow.agent`` and
    ``Workflow.evaluate`` from recorded results only, so a replay measures the same)."""

    slowest_eval_s: float = 0.0
    slowest_agent_s: float = 0.0
    eval_s: dict[str, float] = field(default_factory=dict)       # solution id -> its slowest scored run
    final_run_s: dict[str, float] = field(default_factory=dict)  # solution id -> its largest test-run estimate
    final_run_ratio: float = 0.0   # the largest estimate / its own run seen: for solutions not run yet
    run_ratio: dict[str, float] = field(default_factory=dict)    # solution id -> its estimate / its run

    def evaluation(self, result: EvaluationResult, solution_id: str = "",
                   final_run_estimate_s: float | None = None) -> None:
        """``final_run_estimate_s``: the script's estimate of its test run, as the harness took it
        out of its output (``EvaluationCompleted.final_run_estimate_s``)."""
        if not result.is_error and result.score is not None and math.isfinite(result.duration_seconds):
            took = float(result.duration_seconds)
            self.slowest_eval_s = max(self.slowest_eval_s, took)
            if solution_id:
                self.eval_s[solution_id] = max(self.eval_s.get(solution_id, 0.0), took)
            estimate = usable_estimate(final_run_estimate_s)
            if estimate is not None and took > 0:
                self.final_run_ratio = max(self.final_run_ratio, estimate / took)
                if solution_id:
                    self.run_ratio[solution_id] = max(self.run_ratio.get(solution_id, 0.0), estimate / took)
                    self.final_run_s[solution_id] = max(self.final_run_s.get(solution_id, 0.0), estimate)

    def agent_call(self, took_s: float) -> None:
        if math.isfinite(took_s):
            self.slowest_agent_s = max(self.slowest_agent_s, took_s)

    def finalization_need_s(self, solution_id: str | None = None) -> float:
        """What finalizing ``solution_id`` should take (see the module doc)."""
        if solution_id and solution_id in self.final_run_s:
            return self._need(FINAL_RUN_MARGIN * self.final_run_s[solution_id])
        run_s = self.eval_s.get(solution_id, self.slowest_eval_s) if solution_id else self.slowest_eval_s
        return self.need_for_run_s(run_s)

    def need_for_run_s(self, run_s: float, like: str | None = None) -> float:
        """What finalizing a solution whose search run takes ``run_s`` should take; ``like``: the
        measured solution it resembles, whose estimate-to-run ratio it is taken to have."""
        ratio = self.run_ratio.get(like, self.final_run_ratio) if like else self.final_run_ratio
        if ratio > 0:
            return self._need(FINAL_RUN_MARGIN * ratio * run_s)
        return self._need(FINALIZATION_EVAL_RUNS * run_s)

    def estimated(self, solution_id: str | None) -> bool:
        """Finalizing ``solution_id`` is sized from its script's own estimate of its test run (and
        so is a step still to run: an estimate sets ``final_run_ratio`` too)."""
        return solution_id is not None and solution_id in self.final_run_s

    def _need(self, test_run_s: float) -> float:
        return test_run_s + FINALIZATION_AGENT_CALLS * self.slowest_agent_s


@dataclass(frozen=True)
class Window:
    """The time a phase may use: ``[start_s, end_s]`` on the run's driven clock."""

    phase: str
    start_s: float
    end_s: float        # the guard timer: the phase is cancelled if still running
    soft_end_s: float   # the phase starts no new step past it
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
    measured: Measured = field(default_factory=Measured, compare=False)
    finalizing: Callable[[], str | None] | None = field(default=None, compare=False)  # the solution id
    time_driven: bool = False   # the time mode: the reserve is the measurement, the search gets the rest (module doc)

    @classmethod
    def from_config(cls, config: PipelineConfig, *, start_s: float = 0.0, measured: Measured | None = None,
                    finalizing: Callable[[], str | None] | None = None) -> TimePlan:
        return cls(start_s=start_s, limit_s=float(config.time_limit_seconds), shares=shares_of(config),
                   measured=measured if measured is not None else Measured(), finalizing=finalizing,
                   time_driven=config.step_policy == "time")

    @property
    def end_s(self) -> float:
        """The overall deadline (REQ-OR-024): every window ends by it (in the time mode, the
        engine's exit allowance before it)."""
        return self.start_s + self.limit_s - (EXIT_ALLOWANCE_S if self.time_driven else 0.0)

    @property
    def planned_s(self) -> float:
        """Finalization's share of the limit (the reserve before anything is measured)."""
        return self.shares[FINALIZATION] / 100.0 * self.limit_s

    @property
    def reserve_s(self) -> float:
        """The time before the end from which only finalization runs (see the module doc)."""
        return self.reserve_if(0.0)

    def reserve_if(self, step_s: float, like: str | None = None) -> float:
        """The reserve should a step of ``step_s`` seconds produce the solution to finalize (its run
        taken to last as long as the whole step, re-fitting as ``like`` does); with 0, the reserve
        as things stand."""
        solution_id = self.finalizing() if self.finalizing is not None else None
        need = max(self.measured.finalization_need_s(solution_id), self.measured.need_for_run_s(step_s, like))
        return reserve_for(self.limit_s, self.shares[FINALIZATION], need, time_driven=self.time_driven,
                           estimated=self.measured.estimated(solution_id))

    @property
    def finalize_at_s(self) -> float:
        """The finalize-now point: from here on only finalization runs (REQ-OR-034)."""
        return self.end_s - self.reserve_s

    def finalize_at_if(self, step_s: float, like: str | None = None) -> float:
        """The finalize-now point should a step of ``step_s`` seconds, starting now, produce the
        solution to finalize (``reserve_if``)."""
        return self.end_s - self.reserve_if(step_s, like)

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
        # The finalize-now point binds (a tolerance: equal shares must not flip on the last bit of a
        # float), or the time mode, where the search has everything before it.
        if self.time_driven or clipped < budget * (1 - 1e-9):
            budget = clipped
        return _window(phase, now, now + budget, self.shares[phase], remaining)

    def search_window(self, name: str, now: float) -> Window:
        """One window for a whole search up to the finalize-now point (``evolve``'s two phases)."""
        search = sum(self.shares[p] for p in SEARCH_PHASES)
        return _window(name, now, max(now, self.finalize_at_s), search, (name,))

    def finalization_window(self, now: float) -> Window:
        """From ``now`` to the exit allowance before ``T`` (REQ-OR-024), in either mode: a
        finalization cut by its guard still records its fallback and the run's end, and those
        must land before ``T`` too."""
        return _window(FINALIZATION, now, max(now, self.start_s + self.limit_s - EXIT_ALLOWANCE_S),
                       self.shares[FINALIZATION], (FINALIZATION,))


def shares_of(config: PipelineConfig) -> dict[str, float]:
    budget = config.phase_time_budget or PhaseTimeBudget()
    return {"phase1": budget.phase1_pct, "phase2": budget.phase2_pct, "phase3": budget.phase3_pct,
            FINALIZATION: budget.finalization_pct}


def reserve_for(limit_s: float, finalization_pct: float, need_s: float = 0.0, *,
                time_driven: bool = False, estimated: bool = False) -> float:
    """Finalization's reserve for a limit, its share and what it was measured to need
    (``time_driven``: the time mode's rule, ``estimated``: the need is the scripts' own estimate;
    see the module doc)."""
    planned = finalization_pct / 100.0 * limit_s
    if time_driven and need_s > 0:
        floor = min(planned / 2, ESTIMATED_FLOOR_S) if estimated else planned / 2
        wanted = max(floor, need_s)
    else:
        wanted = max(planned, FINALIZATION_FLOOR_S, need_s)
    return min(MAX_RESERVE_FRACTION * limit_s, wanted)


def shortest_workable_limit_s(config: PipelineConfig) -> int:
    """The shortest ``time_limit_seconds`` with room for one candidate before the finalize-now
    point and for finalization's floor after it (the one rule ``engine start`` checks)."""
    pct = shares_of(config)[FINALIZATION]
    limit = 1
    while limit - reserve_for(limit, pct) < MIN_CANDIDATE_S or reserve_for(limit, pct) < FINALIZATION_FLOOR_S:
        limit += 1
    return limit


def _window(phase: str, start: float, end: float, share: float, remaining: tuple[str, ...]) -> Window:
    grace = min(MAX_GRACE_S, GRACE_FRACTION * (end - start))
    return Window(phase=phase, start_s=start, end_s=end, soft_end_s=end - grace, share_pct=share,
                  remaining=remaining)
