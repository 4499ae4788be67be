"""What decision code sees of the runtime (``handlers.runtime``): effects to await, decisions to
record, the run's clock, money and randomness, all bound to a scope.

Strategies (``handlers.mlestar``, ``handlers.evolution``) and the shared phases are written
against this class only; the runtime behind it schedules the coroutines and folds the inputs.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Coroutine
from random import Random  # pure-ok: seeded per run and effect; the global RNG is never used
from typing import Any, Protocol, TypeVar

from events.base import EffectRequest, Event
from events.config import PipelineConfig
from events.context import RunContext
from events.core import (
    AgentCallCompleted,
    AgentCallFailed,
    AgentCallRequested,
    EvaluationCompleted,
    EvaluationRequested,
    RunCompleted,
    RunStarted,
    SolutionRecorded,
    TimerFired,
    TimerRequested,
)
from events.values import SolutionScript
from handlers import patches
from handlers.agent_failures import FailureStreak
from handlers.deadline import UNBOUNDED, Deadline, DeadlineReached
from handlers.futures import Cancelled, Task, _Future, _Wake
from handlers.money_watch import MoneyWatch
from handlers.timebudget import FinalizeAt, Measured

T = TypeVar("T")


class Kernel(Protocol):
    """What a Workflow asks of the runtime that drives it (``handlers.runtime.Runtime``)."""

    start: RunStarted | None
    context: RunContext | None
    now: float
    measured: Measured
    finalize_at: FinalizeAt | None
    money: MoneyWatch
    failures: FailureStreak
    shared: dict[str, Any]
    observers: list[Callable[[Event], None]]
    solutions: dict[str, SolutionRecorded]
    recorded_in_scope: set[tuple[str, str]]

    @property
    def cost_usd(self) -> float: ...

    @property
    def agent_calls(self) -> int: ...

    def record(self, event: Event, scope: str) -> None: ...

    def unique_id(self, base: str) -> str: ...

    def request(self, event: EffectRequest, scope: str) -> _Future: ...

    def spawn_child(self, coro: Coroutine[Any, Any, Any], name: str) -> Task: ...

    def cancel(self, task: Task, reason: str, scope: str) -> None: ...


class Workflow:
    """What decision code sees: effects to await, decisions to record, time and randomness.

    A Workflow is bound to a *scope* (``phase1``, ``phase2/path-0`` …); ``at(scope)`` gives
    the same run seen from another scope. Effect ids are ``<scope>/<name>``, made unique by a
    ``#n`` suffix when code asks for the same name twice; they are deterministic because the
    code that asks is.
    """

    def __init__(self, runtime: Kernel, scope: str, deadline: Deadline = UNBOUNDED) -> None:
        self._rt = runtime
        self.scope = scope
        # What this unit of work may use (handlers.deadline): the one deadline decision code reads.
        # A unit gets its own with ``within``; nothing else passes a deadline around.
        self.deadline = deadline

    # --- context ----------------------------------------------------------------------------

    @property
    def start(self) -> RunStarted:
        assert self._rt.start is not None
        return self._rt.start

    def patched(self, name: str) -> bool:
        """Whether this run takes the changed decision named ``name`` (handlers/patches.py)."""
        return patches.is_adopted(name, self.start.patches, patches.KNOWN)

    @property
    def context(self) -> RunContext:
        assert self._rt.context is not None
        return self._rt.context

    @property
    def config(self) -> PipelineConfig:
        return self.context.config

    @property
    def now(self) -> float:
        """The run's driven time (seconds) as of the latest input: the only clock there is."""
        return self._rt.now

    @property
    def cost_usd(self) -> float:
        """Money spent on agents so far, as recorded (results and spend without one; replay.meter)."""
        return self._rt.cost_usd

    @property
    def agent_calls(self) -> int:
        return self._rt.agent_calls

    def cost_in(self, scope: str) -> float:
        """Money spent by the agent calls asked for in ``scope`` and the scopes under it."""
        return self._rt.money.cost_in(scope)

    @property
    def measured(self) -> Measured:
        """How long this run's evaluations and agent calls have taken (the time plan's input)."""
        return self._rt.measured

    def finalize_point(self, step_s: float = 0.0, like: str | None = None) -> float:
        """The driven time from which only finalization may run, as the strategy's time plan reads
        it now, should a step of ``step_s`` seconds starting now produce the solution to finalize
        (``TimePlan.finalize_at_if``; ``like``: a measured solution the step's would re-fit as).
        It moves earlier as slower evaluations are measured; infinite before a plan is followed."""
        point = self._rt.finalize_at
        return point(step_s, like) if point is not None else math.inf

    def follow_time_plan(self, finalize_at: FinalizeAt) -> None:
        """Where ``finalize_point`` comes from: the strategy's ``TimePlan.finalize_at_if``."""
        self._rt.finalize_at = finalize_at

    @property
    def budget_stops(self) -> int:
        """How many agent calls so far were stopped for want of money (refused or cut at their
        cap by the engine's ledger; ``AgentCallFailed.stop``)."""
        return self._rt.money.budget_stops

    @property
    def money_out(self) -> bool:
        """The money may have run out: a call was stopped for want of money (``budget_stops``) and,
        as of the latest input, no agent call or evaluation is in flight (``handlers.money_watch``)."""
        return self._rt.money.ran_out

    async def cost_reaches(self, amount_usd: float, *, or_budget_stop: bool = False) -> float:
        """Wait until recorded agent spending reaches ``amount_usd`` (or, with ``or_budget_stop``,
        until the money is out: ``money_out``); returns the spend then."""
        watch = _Future()
        if self._rt.cost_usd >= amount_usd:
            return self._rt.cost_usd
        self._rt.money.watches.append((amount_usd, or_budget_stop, watch))
        return await watch

    def at(self, scope: str) -> Workflow:
        """The same run seen from another scope, under the same deadline."""
        return Workflow(self._rt, scope, self.deadline)

    def within(self, deadline: Deadline) -> Workflow:
        """This workflow bounded by ``deadline`` too (never loosened): the way a unit of work gets
        its own deadline. Its soft end is what the unit's steps are paced by (no new step past it,
        evaluation timeouts sized to it); every agent call and evaluation requested through it is
        checked against its hard end. ``Deadline(soft_s)`` narrows the soft end alone."""
        return Workflow(self._rt, self.scope, self.deadline.narrowed(deadline.soft_s, deadline.hard_s, deadline.fit_s))

    def _check_deadline(self, effect_id: str) -> None:
        if self.deadline.over(self.now):
            raise DeadlineReached(f"{effect_id} not requested: the hard end {self.deadline.hard_s:.1f} s "
                                  f"has passed (now {self.now:.1f} s)")

    def rng(self, key: str) -> Random:
        """A random generator seeded by the run seed and ``key`` (e.g. an effect id)."""
        return Random(f"{self.start.seed}:{self.scope}:{key}")

    # --- decisions --------------------------------------------------------------------------

    def record(self, event: Event) -> None:
        self._rt.record(event, self.scope)

    def observe(self, fn: Callable[[Event], None]) -> None:
        """Call ``fn`` with every decision recorded from now on (a strategy's own fold of its
        decisions, e.g. MLE-STAR's best-so-far; deterministic because the decisions are)."""
        self._rt.observers.append(fn)

    def shared(self, key: str, make: Callable[[], T]) -> T:
        """Per-run state a strategy keeps across its units of work, made once on first use."""
        if key not in self._rt.shared:
            self._rt.shared[key] = make()
        return self._rt.shared[key]

    def solution(self, solution_id: str) -> SolutionScript:
        rec = self._rt.solutions[solution_id]
        return SolutionScript(content=rec.content, phase=rec.phase, source_model=rec.source_model)

    def record_solution(self, content: str, **fields: Any) -> str:
        """Record a script once (content-addressed) and return its id."""
        from events.values import solution_id_of

        sid = solution_id_of(content)
        # Once per scope, not once per run: if two concurrent paths write the same script, which
        # of them would record it first depends on how their effects interleave, and a scope's
        # decisions must not. Within a scope the content is stored once.
        key = (self.scope, sid)
        if key not in self._rt.recorded_in_scope:
            rec = SolutionRecorded(solution_id=sid, content=content, **fields)
            self._rt.recorded_in_scope.add(key)
            self._rt.solutions.setdefault(sid, rec)
            self.record(rec)
        return sid

    def complete(self, *, submission_path: str, best_score: float | None, result: dict[str, Any]) -> None:
        self.record(RunCompleted(submission_path=submission_path, best_score=best_score, result=jsonable(result)))

    # --- effects ----------------------------------------------------------------------------

    def effect_id(self, name: str) -> str:
        return self._rt.unique_id(f"{self.scope}/{name}")

    async def agent(self, request: AgentCallRequested) -> AgentCallCompleted | AgentCallFailed:
        """Ask an agent. ``request.effect_id`` should come from :meth:`effect_id`. Past the hard
        end nothing is asked: :class:`DeadlineReached` is raised instead (REQ-OR-024). The request
        carries this unit's hard end as its ``deadline_s``, so the backend stops the call there
        (REQ-OR-034)."""
        self._check_deadline(request.effect_id)
        hard_s = self.deadline.narrowed(hard_s=request.deadline_s).hard_s
        if hard_s != request.deadline_s:
            request = request.model_copy(update={"deadline_s": hard_s})
        self._rt.failures.asked(request)
        asked = self.now
        reply = await self._rt.request(request, self.scope)
        # The time plan's input (handlers.timebudget): how long an answer takes, as its executor
        # measured it; the driven time it took when none was reported (it also counts the wait for
        # the results requested before it, which are recorded first). A failure is not measured:
        # it carries no duration, and the driven time of one that failed at once is the wait for
        # the results ahead of it, which can be seconds for a call that failed in a millisecond;
        # finalization's reserve counts several of the slowest call, so one such figure would
        # inflate it several times over.
        if isinstance(reply, AgentCallCompleted):
            self._rt.measured.agent_call(reply.duration_s if reply.duration_s > 0 else self.now - asked)
        return reply

    async def evaluate(self, solution_id: str, *, name: str, purpose: str, timeout_s: float,
                       expect_submission: bool = False, cores: int = 1) -> EvaluationCompleted:
        """Run a recorded script; ``cores``: the CPU cores it may use (``EvaluationRequested``)."""
        effect_id = self.effect_id(name)
        self._check_deadline(effect_id)
        timeout_s = float(self.deadline.cap(self.now, timeout_s))
        req = EvaluationRequested(effect_id=effect_id, solution_id=solution_id, purpose=purpose,
                                  timeout_s=timeout_s, expect_submission=expect_submission, cores=cores,
                                  fit_within_s=self.deadline.fit_within(self.now, timeout_s))
        done = await self._rt.request(req, self.scope)
        self._rt.measured.evaluation(done.result, solution_id, done.final_run_estimate_s)
        return done

    async def sleep_until(self, at_elapsed_s: float, *, name: str = "timer") -> TimerFired:
        req = TimerRequested(effect_id=self.effect_id(name), at_elapsed_s=float(at_elapsed_s))
        return await self._rt.request(req, self.scope)

    # --- structure --------------------------------------------------------------------------

    def spawn(self, coro: Coroutine[Any, Any, T], name: str = "task") -> Task:
        return self._rt.spawn_child(coro, name)

    async def gather(self, *aws: Coroutine[Any, Any, Any]) -> list[Any]:
        """Run coroutines concurrently (their effects are in flight together); results in order."""
        tasks = [self.spawn(a, f"gather-{i}") for i, a in enumerate(aws)]
        return [await t for t in tasks]

    async def first(self, *tasks: Task) -> int:
        """Wait until one of the tasks finishes; return its index (lowest index on ties)."""
        while True:
            for i, t in enumerate(tasks):
                if t.done:
                    return i
            waiter = _Future()
            for t in tasks:
                t.result.waiters.append(_Wake(waiter))
            await waiter

    def cancel(self, task: Task, reason: str) -> None:
        self._rt.cancel(task, reason, self.scope)

    def guard(self, at_s: float, name: str) -> Guard:
        """A guard timer at driven time ``at_s`` (its effect: ``deadline/<name>``) to race work
        against: see :class:`Guard`."""
        return Guard(self, at_s, name)

    async def cut(self, tasks: list[Task], reason: str, *,
                  tolerate: type[BaseException] = Cancelled) -> None:
        """Cancel ``tasks`` and wait until each has unwound, so every unit of work in them has
        recorded what it keeps before the caller reads it; what they raise while unwinding is
        ignored when it is a ``tolerate`` (by default the cancellation itself)."""
        for task in tasks:
            self.cancel(task, reason)
        for task in tasks:
            try:
                await task
            except tolerate:
                pass


class Guard:
    """The one way work is raced against a deadline: a timer task that fires at ``at_s``.

    ``first(*tasks)`` waits for whichever comes first, a task or the timer. When a task wins, the
    caller either ``stand_down``s the timer (cancels it, naming why) or keeps racing the other
    tasks against it; when the timer wins, the caller cancels the work (``Workflow.cut``, or
    ``Workflow.cancel`` when it must not wait for the work to unwind). The timer is a child of
    the task that made the guard, so cancelling that task cancels its timer too.
    """

    def __init__(self, wf: Workflow, at_s: float, name: str) -> None:
        self._wf = wf
        self.timer = wf.spawn(wf.sleep_until(at_s, name=f"deadline/{name}"), name="timer")

    async def first(self, *tasks: Task, after_timer: tuple[Task, ...] = ()) -> int | None:
        """The index in ``tasks + after_timer`` of the first to finish, or None when the timer
        fired first. On a tie the earliest in the order ``tasks``, the timer, ``after_timer`` wins."""
        i = await self._wf.first(*tasks, self.timer, *after_timer)
        if i == len(tasks):
            return None
        return i if i < len(tasks) else i - 1

    def stand_down(self, reason: str) -> None:
        """Cancel the timer (the work it guarded is over), unless it has fired already."""
        if not self.timer.done:
            self._wf.cancel(self.timer, reason)


def jsonable(value: Any) -> Any:
    """Make a result JSON-safe (pydantic models dumped, tuples to lists)."""
    from pydantic import BaseModel

    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    return value
