"""Running one pipeline phase under the run's limits (REQ-OR-023/024/029/030).

A phase runs as a spawned workflow task raced against a guard timer (the deadline arrives as
a TimerFired input) and against the budget watch (resolved by the agent result that made the
spending reach ``max_budget_usd``). Whichever finishes first decides:

* the phase returned → its value (or its exception: the phase *failed*);
* the timer fired    → the phase is cancelled with its children and pending effects (*timed_out*);
* the budget is spent → the phase is cancelled (*budget_exhausted*).

"The budget is spent" is the search's share of it (``handlers.money.search_budget_usd``), or a
budget stop (an agent call the engine's ledger refused or cut at its cap for want of money,
``AgentCallFailed.stop``) with what is left of that share too little for a usual call
(``handlers.money.search_money_short``): then no new phase starts, and the phase in flight is cut
once its agent calls and evaluations in flight have settled (``Workflow.money_out``: a call in
flight holds the money it may still turn into a candidate, and an evaluation costs none). A phase
that ends in an error once the budget is spent ended for want of money too (its calls were
stopped): its outcome is *budget_exhausted*, never *failed*.

The ledger keeps each phase's driven start/end time and spend (REQ-OR-037/038).
"""

from __future__ import annotations

from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any

from events.core import Note, PhaseCompleted, PhaseStarted
from events.errors import PipelineError
from events.pipeline import BudgetExhausted, BudgetWarning, DeadlineHit, PhaseBudgetAllocated
from handlers.deadline import DeadlineReached
from handlers.futures import Task
from handlers.money import search_share_spent, stop_ends_search
from handlers.timebudget import Window
from handlers.workflow import Workflow

BUDGET_WARNING_FRACTION = 0.80

COMPLETED, FAILED, TIMED_OUT, BUDGET, SKIPPED = "completed", "failed", "timed_out", "budget_exhausted", "skipped"


@dataclass
class PhaseRecord:
    phase: str
    status: str = SKIPPED
    started_at_s: float | None = None
    ended_at_s: float | None = None
    cost_at_start: float = 0.0
    cost_usd: float = 0.0
    window_end_s: float | None = None   # the end of the phase's window (its guard timer)
    reason: str = ""

    @property
    def duration_s(self) -> float:
        if self.started_at_s is None or self.ended_at_s is None:
            return 0.0
        return self.ended_at_s - self.started_at_s

    def summary(self) -> dict[str, Any]:
        return {"status": self.status, "started_at_s": self.started_at_s, "ended_at_s": self.ended_at_s,
                "duration_s": self.duration_s, "cost_usd": self.cost_usd, "deadline_s": self.window_end_s,
                "reason": self.reason}


@dataclass
class Ledger:
    """Per-phase time and money, in the order the phases ran (REQ-OR-037/038)."""

    records: dict[str, PhaseRecord] = field(default_factory=dict)
    current: str = ""

    def begin(self, wf: Workflow, phase: str, window_end_s: float | None) -> None:
        self.records[phase] = PhaseRecord(phase=phase, status="running", started_at_s=wf.now,
                                          cost_at_start=wf.cost_usd, window_end_s=window_end_s)
        self.current = phase

    def end(self, wf: Workflow, phase: str, status: str, reason: str = "") -> PhaseRecord:
        rec = self.records[phase]
        rec.status, rec.reason, rec.ended_at_s = status, reason, wf.now
        rec.cost_usd = wf.cost_usd - rec.cost_at_start
        return rec

    def skip(self, phase: str, reason: str) -> None:
        self.records[phase] = PhaseRecord(phase=phase, status=SKIPPED, reason=reason)

    def status(self, phase: str) -> str:
        rec = self.records.get(phase)
        return rec.status if rec is not None else SKIPPED

    @property
    def last_success(self) -> str:
        done = [p for p, r in self.records.items() if r.status == COMPLETED]
        return done[-1] if done else ""


class Limits:
    """The budget watches (REQ-OR-029): a warning at 80 %, graceful shutdown when the search's
    share is spent (``search_budget_usd``) — finalization keeps the rest, so the run ends within
    its budget."""

    def __init__(self, wf: Workflow, ledger: Ledger) -> None:
        self.wf = wf
        self.ledger = ledger
        self.limit_usd = wf.config.max_budget_usd
        self.exhausted_task: Task | None = None
        if self.limit_usd is not None:
            wf.spawn(self._warn_at(self.limit_usd * BUDGET_WARNING_FRACTION), name="budget-warning")
            self.exhausted_task = wf.spawn(self._search_budget_spent(), name="budget-exhausted")

    @property
    def exhausted(self) -> bool:
        """The search may start no new phase: its money is spent, or a call was stopped for want of
        it and what is left cannot pay a usual call (``evolve`` starts no new step then either)."""
        return self.exhausted_task is not None and (self.exhausted_task.done or self._stopped_short())

    def _stopped_short(self) -> bool:
        assert self.limit_usd is not None
        return stop_ends_search(self.limit_usd, self.wf.cost_usd, self.wf.agent_calls, self.wf.budget_stops)

    async def _warn_at(self, amount: float) -> None:
        spent = await self.wf.cost_reaches(amount)
        assert self.limit_usd is not None
        self.wf.record(BudgetWarning(spent_usd=spent, limit_usd=self.limit_usd, fraction=spent / self.limit_usd))
        self.wf.record(Note(level="warning", message=f"{spent / self.limit_usd:.0%} of the budget "
                            f"(${self.limit_usd:.2f}) spent", data={"spent_usd": spent}))

    async def _search_budget_spent(self) -> None:
        assert self.limit_usd is not None
        while True:  # the reserve follows the mean cost of a call: look again at every new spend
            spent = self.wf.cost_usd
            stopped = self.wf.money_out and self._stopped_short()
            if stopped or search_share_spent(self.limit_usd, spent, self.wf.agent_calls):
                break
            await self.wf.cost_reaches(spent + 1e-9, or_budget_stop=True)
        self.wf.record(BudgetExhausted(spent_usd=spent, limit_usd=self.limit_usd, phase=self.ledger.current))
        if stopped:
            self.wf.record(Note(level="warning", message="budget stop: agent calls were refused or cut for want of "
                                "money and what is left cannot pay another; the search ends and finalization "
                                "runs with the best so far", data={"spent_usd": spent, "limit_usd": self.limit_usd,
                                                                   "budget_stops": self.wf.budget_stops}))


@dataclass
class PhaseOutcome:
    phase: str
    status: str
    value: Any = None
    error: str = ""
    diagnostics: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status == COMPLETED


class PhaseRace:
    """One phase as a task, raced against guard timers and the budget (see the module doc)."""

    def __init__(self, wf: Workflow, window: Window, coro: Coroutine[Any, Any, Any], *, limits: Limits | None,
                 ledger: Ledger, self_reported: bool, bracket: str | None = None) -> None:
        """``self_reported``: the phase records its own PhaseStarted and, when it succeeds, its
        PhaseCompleted (under the name ``bracket``); the race records them otherwise, and
        always records PhaseCompleted for a phase that failed or was cut."""
        self.wf, self.window, self.limits, self.ledger = wf, window, limits, ledger
        self.phase = window.phase
        self.bracket = bracket or window.phase
        self.self_reported = self_reported
        wf.record(PhaseBudgetAllocated(phase=self.phase, started_at_s=window.start_s, deadline_s=window.end_s,
                                       soft_deadline_s=window.soft_end_s, budget_s=window.budget_s,
                                       share_pct=window.share_pct, remaining_phases=list(window.remaining)))
        if not self_reported:
            wf.record(PhaseStarted(phase=self.bracket, budget_s=window.budget_s))
        ledger.begin(wf, self.phase, window.end_s)
        self.task = wf.spawn(coro, name=self.phase)

    async def wait(self, until_s: float) -> str:
        """Wait for the phase, the timer at ``until_s`` or the budget: "done" | "deadline" | "budget"."""
        guard = self.wf.guard(until_s, self.phase)
        budget = self.limits.exhausted_task if self.limits is not None else None
        winner = await guard.first(self.task, after_timer=() if budget is None else (budget,))
        if winner is None:
            return "deadline"
        guard.stand_down(f"{self.phase} finished before its deadline" if winner == 0 else "budget exhausted")
        return ("done", "budget")[winner]

    async def settle(self, how: str) -> PhaseOutcome:
        """Turn the race's verdict into an outcome; cancels the phase unless it finished."""
        if how == "done":
            try:
                value = await self.task
            except DeadlineReached as exc:  # it asked for work past its hard end: a cut, not a failure
                self.wf.record(DeadlineHit(phase=self.phase, deadline_s=self.window.end_s, action="ended"))
                return self._end(PhaseOutcome(self.phase, TIMED_OUT, error=str(exc)))
            except PipelineError as exc:
                return self._end(PhaseOutcome(self.phase, self._failed(), error=self._why(str(exc)),
                                              diagnostics=dict(exc.diagnostics)))
            except Exception as exc:
                return self._end(PhaseOutcome(self.phase, self._failed(),
                                              error=self._why(f"{type(exc).__name__}: {exc}"),
                                              diagnostics={"kind": "handler_error"}))
            return self._end(PhaseOutcome(self.phase, COMPLETED, value=value))
        if how == "deadline":
            self.wf.record(DeadlineHit(phase=self.phase, deadline_s=self.window.end_s, action="cancelled"))
            await self._cut(f"{self.phase} deadline reached")
            return self._end(PhaseOutcome(self.phase, TIMED_OUT, error=f"{self.phase} deadline reached"))
        await self._cut("budget exhausted")
        return self._end(PhaseOutcome(self.phase, BUDGET, error="budget exhausted"))

    def _failed(self) -> str:
        """A phase that ended in an error after its money ran out was stopped by the budget."""
        return BUDGET if self.limits is not None and self.limits.exhausted else FAILED

    def _why(self, error: str) -> str:
        return f"budget exhausted: {error}" if self._failed() == BUDGET else error

    async def _cut(self, reason: str) -> None:
        """Cancel the phase and wait until it has unwound, so every unit of work in it has
        recorded what it keeps (a Phase 2 path its own best, Phase 3 its rounds) before the
        caller reads it."""
        await self.wf.cut([self.task], reason, tolerate=Exception)

    def _end(self, outcome: PhaseOutcome) -> PhaseOutcome:
        rec = self.ledger.end(self.wf, self.phase, outcome.status, outcome.error)
        if not (self.self_reported and outcome.ok):
            self.wf.record(PhaseCompleted(phase=self.bracket, result={
                "status": outcome.status, "failed": not outcome.ok, "error": outcome.error,
                "duration_s": rec.duration_s, "cost_usd": rec.cost_usd}))
        if not outcome.ok:
            self.wf.record(Note(level="warning", message=f"{self.phase} {outcome.status.replace('_', ' ')}",
                                data={"error": outcome.error}))
        return outcome
