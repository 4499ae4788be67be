"""The deterministic workflow runtime: decision code written as plain ``async`` functions.

Why coroutines: the algorithms (MLE-STAR's Algorithms 1-3, the evolutionary loop) are
sequential programs with a few fan-outs. Written as coroutines they read line for line like
the paper, yet stay pure: every ``await`` on the world suspends on an *effect future*, and the
only way a future resolves is an input event fed through :meth:`Runtime.feed`. Nothing here
touches a clock, a file, the network or global randomness, and no asyncio loop is involved;
this module drives the coroutines itself, in a fixed order. Feeding the same inputs therefore
always yields the same decisions, which is what resume and replay rely on.

``Runtime.feed(event) -> list[NewEvent]`` is the pure ``react`` of the architecture: the
runtime *is* the folded handler state (rebuilt on resume by feeding the recorded inputs).

The money the decisions read (``Workflow.cost_usd``, ``cost_reaches``) is ``replay.meter``'s
count, the one ``engine status`` shows: agent results and ``AgentSpendRecorded`` (spend without a
result) alike. That spend is bookkeeping, recorded wherever the executor saw it, so it is fed too
but wakes nothing: the budget watches look at it with the next input. ``handlers.money_watch``
keeps that count per scope, the budget stops (calls the engine's ledger refused or cut for want
of money) and the watches that wake when the money runs out.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from random import Random  # pure-ok: seeded per run and effect; the global RNG is never used
from typing import Any, TypeVar

from events.base import EffectRequest, EffectResult, Event, NewEvent
from events.context import RunContext
from events.core import (
    AgentCallCompleted,
    AgentCallFailed,
    AgentCallRequested,
    EffectCancelled,
    EvaluationCompleted,
    EvaluationRequested,
    RunCompleted,
    RunFailed,
    RunStarted,
    SolutionRecorded,
    TimerFired,
    TimerRequested,
)
from events.domain import PipelineConfig, PipelineError, SolutionScript
from events.spend import AgentSpendRecorded
from handlers.agent_failures import STOP_REASON, AgentFailingRepeatedly, FailureStreak
from handlers.deadline import UNBOUNDED, Deadline, DeadlineReached
from handlers.futures import Cancelled, Task, _Future, _Wake
from handlers.money_watch import MoneyWatch
from handlers.timebudget import Measured
from replay.meter import SpendMeter

T = TypeVar("T")


class Runtime:
    """Drives one run's workflow. ``main`` is the strategy's entry coroutine function."""

    def __init__(self, main: Callable[[Workflow], Coroutine[Any, Any, Any]]) -> None:
        self._main = main
        self._ready: deque[tuple[Task, Any, BaseException | None]] = deque()
        self._effects: dict[str, _Future] = {}
        self._used_ids: dict[str, int] = {}
        self._solutions: dict[str, SolutionRecorded] = {}
        self._recorded_in_scope: set[tuple[str, str]] = set()  # membership only; never iterated
        self._observers: list[Callable[[Event], None]] = []  # see Workflow.observe
        self._shared: dict[str, Any] = {}                     # see Workflow.shared
        self._out: list[NewEvent] = []
        self._current: Task | None = None
        self.start: RunStarted | None = None
        self.context: RunContext | None = None   # RunStarted, validated once
        self.now = 0.0
        self.spend = SpendMeter()
        self.measured = Measured()  # effect durations for the time plan (handlers.timebudget)
        self.money = MoneyWatch(self.spend)           # spend per scope, budget stops, the money watches
        self._cost_watches = self.money.watches
        self.failures = FailureStreak()  # the same agent error again and again stops the run
        self.finished = False

    # --- the pure react ---------------------------------------------------------------------

    def feed(self, event: Event) -> list[NewEvent]:
        """Deliver one input event (or spend recorded without a result, which decides nothing);
        run the workflow until it waits again; return its decisions."""
        self._out = []
        if isinstance(event, AgentSpendRecorded):
            self.money.spent(event)
            return self._out
        elapsed = getattr(event, "elapsed_s", None)
        if isinstance(elapsed, (int, float)):
            self.now = max(self.now, float(elapsed))
        if isinstance(event, RunStarted):
            if self.start is not None:
                raise ValueError("RunStarted fed twice")
            self.start = event
            self.context = RunContext.of(event)
            wf = Workflow(self, scope="run")
            self._spawn(self._run_main(wf), "main", parent=None)
        elif isinstance(event, EffectResult):
            for watch in self.money.settled(event):
                self._resolve(watch, self.cost_usd)
            halt = self.failures.observe(event) if isinstance(event, (AgentCallCompleted, AgentCallFailed)) else None
            if halt is not None:
                self._halt(halt)
                return self._out
            fut = self._effects.pop(event.effect_id, None)
            if fut is not None and not fut.done:
                self._resolve(fut, event)
        self._run_ready()
        out = [] if self.finished else self.money.running_out()   # judged after this input's decisions
        for watch in out:
            self._resolve(watch, self.cost_usd)
        if out:
            self._run_ready()
        return self._out

    @property
    def cost_usd(self) -> float:
        return self.spend.budget_usd

    @property
    def agent_calls(self) -> int:
        return self.spend.calls

    @property
    def pending_effect_ids(self) -> list[str]:
        return list(self._effects)

    # --- scheduling -------------------------------------------------------------------------

    async def _run_main(self, wf: Workflow) -> None:
        try:
            await self._main(wf)
        except PipelineError as exc:
            wf.record(RunFailed(error=str(exc), diagnostics=_jsonable(exc.diagnostics)))
        except Cancelled:
            wf.record(RunFailed(error="the run was cancelled"))
        except Exception as exc:  # a handler bug still ends the run with a recorded reason
            wf.record(RunFailed(error=f"{type(exc).__name__}: {exc}", diagnostics={"kind": "handler_error"}))
        self.finished = True

    def _halt(self, stop: AgentFailingRepeatedly) -> None:
        """End the run now, whatever the strategy is doing (``handlers.agent_failures``): every
        effect still pending is cancelled, no task runs again, and RunFailed names the error."""
        for effect_id in list(self._effects):
            self._emit(EffectCancelled(effect_id=effect_id, reason=STOP_REASON), "run")
        self._effects.clear()
        self._ready.clear()
        self._cost_watches.clear()
        self._emit(RunFailed(error=stop.message, diagnostics=stop.diagnostics()), "run")
        self.finished = True

    def _spawn(self, coro: Coroutine[Any, Any, Any], name: str, parent: Task | None) -> Task:
        task = Task(coro, name)
        if parent is not None:
            parent.children.append(task)
        self._ready.append((task, None, None))
        return task

    def _resolve(self, fut: _Future, value: Any = None, error: BaseException | None = None) -> None:
        fut.done, fut.value, fut.error = True, value, error
        waiters, fut.waiters = fut.waiters, []
        for waiter in waiters:
            if isinstance(waiter, _Wake):
                if not waiter.target.done:
                    self._resolve(waiter.target)
            else:
                self._ready.append((waiter, None, None))

    def _run_ready(self) -> None:
        while self._ready:
            task, value, error = self._ready.popleft()
            if task.done:
                continue
            self._step(task, value, error)

    def _step(self, task: Task, value: Any, error: BaseException | None) -> None:
        self._current = task
        task.waiting_on = None
        task.effect_waiting = None
        try:
            if error is not None:
                yielded = task.coro.throw(error)
            else:
                yielded = task.coro.send(value)
        except StopIteration as stop:
            self._resolve(task.result, stop.value)
            return
        except BaseException as exc:
            self._resolve(task.result, error=exc)
            return
        finally:
            self._current = None
        if not isinstance(yielded, _Future):  # a handler bug: thrown back into the workflow, so the
            # run ends with RunFailed naming it instead of the exception escaping feed() into the driver
            bug = TypeError(f"workflow code awaited {yielded!r}; only Workflow effects can be awaited")
            self._ready.append((task, None, bug))
            return
        if yielded.done:
            self._ready.append((task, None, None))
        else:
            task.waiting_on = yielded
            yielded.waiters.append(task)
            for effect_id, fut in self._effects.items():
                if fut is yielded:
                    task.effect_waiting = effect_id
                    break

    def cancel(self, task: Task, reason: str, scope: str) -> None:
        """Cancel a task and its children: their pending effects are cancelled in the log."""
        if task.done or task.cancelled:
            return
        task.cancelled = True
        for child in task.children:
            self.cancel(child, reason, scope)
        if task.effect_waiting is not None:
            effect_id = task.effect_waiting
            self._effects.pop(effect_id, None)
            self.money.cancelled(effect_id)
            self._emit(EffectCancelled(effect_id=effect_id, reason=reason), scope)
        if task.waiting_on is not None and task in task.waiting_on.waiters:
            task.waiting_on.waiters.remove(task)
        self._ready.append((task, None, Cancelled(reason)))

    # --- helpers for Workflow ---------------------------------------------------------------

    def _emit(self, event: Event, scope: str) -> None:
        self._out.append(NewEvent(event=event, scope=scope))

    def _unique_id(self, base: str) -> str:
        n = self._used_ids.get(base, 0) + 1
        self._used_ids[base] = n
        return base if n == 1 else f"{base}#{n}"

    def _request(self, event: EffectRequest, scope: str) -> _Future:
        fut = _Future()
        self._effects[event.effect_id] = fut
        self.money.asked(event, scope)
        self._emit(event, scope)
        return fut


class Workflow:
    """What decision code sees: effects to await, decisions to record, time and randomness.

    A Workflow is bound to a *scope* (``phase1``, ``phase2/path-0`` …); ``at(scope)`` gives
    the same run seen from another scope. Effect ids are ``<scope>/<name>``, made unique by a
    ``#n`` suffix when code asks for the same name twice; they are deterministic because the
    code that asks is.
    """

    def __init__(self, runtime: Runtime, scope: str, deadline: Deadline = UNBOUNDED) -> None:
        self._rt = runtime
        self.scope = scope
        self.deadline = deadline  # what this unit of work may use (handlers.deadline)

    # --- context ----------------------------------------------------------------------------

    @property
    def start(self) -> RunStarted:
        assert self._rt.start is not None
        return self._rt.start

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
        self._rt._cost_watches.append((amount_usd, or_budget_stop, watch))
        return await watch

    def at(self, scope: str) -> Workflow:
        """The same run seen from another scope, under the same deadline."""
        return Workflow(self._rt, scope, self.deadline)

    def within(self, deadline: Deadline) -> Workflow:
        """This workflow bounded by ``deadline`` too (never loosened): every agent call and
        evaluation requested through it is checked against the hard end."""
        return Workflow(self._rt, self.scope, self.deadline.narrowed(deadline.soft_s, deadline.hard_s))

    def _check_deadline(self, effect_id: str) -> None:
        if self.deadline.over(self.now):
            raise DeadlineReached(f"{effect_id} not requested: the hard end {self.deadline.hard_s:.1f} s "
                                  f"has passed (now {self.now:.1f} s)")

    def rng(self, key: str) -> Random:
        """A random generator seeded by the run seed and ``key`` (e.g. an effect id)."""
        return Random(f"{self.start.seed}:{self.scope}:{key}")

    # --- decisions --------------------------------------------------------------------------

    def record(self, event: Event) -> None:
        self._rt._emit(event, self.scope)
        for observe in self._rt._observers:
            observe(event)

    def observe(self, fn: Callable[[Event], None]) -> None:
        """Call ``fn`` with every decision recorded from now on (a strategy's own fold of its
        decisions, e.g. MLE-STAR's best-so-far; deterministic because the decisions are)."""
        self._rt._observers.append(fn)

    def shared(self, key: str, make: Callable[[], T]) -> T:
        """Per-run state a strategy keeps across its units of work, made once on first use."""
        if key not in self._rt._shared:
            self._rt._shared[key] = make()
        return self._rt._shared[key]

    def solution(self, solution_id: str) -> SolutionScript:
        rec = self._rt._solutions[solution_id]
        return SolutionScript(content=rec.content, phase=rec.phase, source_model=rec.source_model)

    def record_solution(self, content: str, **fields: Any) -> str:
        """Record a script once (content-addressed) and return its id."""
        from events.domain import solution_id_of

        sid = solution_id_of(content)
        # Once per scope, not once per run: if two concurrent paths write the same script, which
        # of them would record it first depends on how their effects interleave, and a scope's
        # decisions must not. Within a scope the content is stored once.
        key = (self.scope, sid)
        if key not in self._rt._recorded_in_scope:
            rec = SolutionRecorded(solution_id=sid, content=content, **fields)
            self._rt._recorded_in_scope.add(key)
            self._rt._solutions.setdefault(sid, rec)
            self.record(rec)
        return sid

    def complete(self, *, submission_path: str, best_score: float | None, result: dict[str, Any]) -> None:
        self.record(RunCompleted(submission_path=submission_path, best_score=best_score, result=_jsonable(result)))

    # --- effects ----------------------------------------------------------------------------

    def effect_id(self, name: str) -> str:
        return self._rt._unique_id(f"{self.scope}/{name}")

    async def agent(self, request: AgentCallRequested) -> AgentCallCompleted | AgentCallFailed:
        """Ask an agent. ``request.effect_id`` should come from :meth:`effect_id`. Past the hard
        end nothing is asked: :class:`DeadlineReached` is raised instead (REQ-OR-024). The request
        carries this unit's hard end as its ``deadline_s``, so the backend stops the call there
        (REQ-OR-034)."""
        self._check_deadline(request.effect_id)
        deadline_s = self.deadline.narrowed(hard_s=request.deadline_s).hard_s
        if deadline_s != request.deadline_s:
            request = request.model_copy(update={"deadline_s": deadline_s})
        self._rt.failures.asked(request)
        asked = self.now
        reply = await self._rt._request(request, self.scope)
        # The time plan's input (handlers.timebudget): the call's own duration as its executor
        # measured it; the driven time it took when none was reported (it also counts the wait for
        # the results requested before it, which are recorded first).
        took = getattr(reply, "duration_s", 0.0) or 0.0
        self._rt.measured.agent_call(took if took > 0 else self.now - asked)
        return reply

    async def evaluate(self, solution_id: str, *, name: str, purpose: str, timeout_s: float,
                       expect_submission: bool = False) -> EvaluationCompleted:
        effect_id = self.effect_id(name)
        self._check_deadline(effect_id)
        req = EvaluationRequested(effect_id=effect_id, solution_id=solution_id, purpose=purpose,
                                  timeout_s=float(self.deadline.cap(self.now, timeout_s)),
                                  expect_submission=expect_submission)
        done = await self._rt._request(req, self.scope)
        self._rt.measured.evaluation(done.result, solution_id)
        return done

    async def sleep_until(self, at_elapsed_s: float, *, name: str = "timer") -> TimerFired:
        req = TimerRequested(effect_id=self.effect_id(name), at_elapsed_s=float(at_elapsed_s))
        return await self._rt._request(req, self.scope)

    # --- structure --------------------------------------------------------------------------

    def spawn(self, coro: Coroutine[Any, Any, T], name: str = "task") -> Task:
        return self._rt._spawn(coro, name, parent=self._rt._current)

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


def _jsonable(value: Any) -> Any:
    """Make a result JSON-safe (pydantic models dumped, tuples to lists)."""
    from pydantic import BaseModel

    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value


def run_sync(main: Callable[[Workflow], Coroutine[Any, Any, Any]], inputs: Iterable[Event]) -> list[NewEvent]:
    """Feed inputs in order and collect every decision (handy for tests and replay)."""
    rt = Runtime(main)
    out: list[NewEvent] = []
    for ev in inputs:
        out.extend(rt.feed(ev))
    return out


__all__ = ["Runtime", "Workflow", "Task", "Cancelled", "run_sync", "Awaitable"]
