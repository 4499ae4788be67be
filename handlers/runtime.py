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
from collections.abc import Callable, Coroutine, Iterable
from typing import Any

from events.base import EffectRequest, EffectResult, Event, NewEvent
from events.context import RunContext
from events.core import (
    AgentCallCompleted,
    AgentCallFailed,
    EffectCancelled,
    RunFailed,
    RunStarted,
    SolutionRecorded,
)
from events.errors import PipelineError
from events.spend import AgentSpendRecorded
from handlers.agent_failures import STOP_REASON, AgentFailingRepeatedly, FailureStreak
from handlers.futures import Cancelled, Task, _Future, _Wake
from handlers.money_watch import MoneyWatch
from handlers.timebudget import FinalizeAt, Measured
from handlers.workflow import Workflow, jsonable
from replay.meter import SpendMeter


class Runtime:
    """Drives one run's workflow. ``main`` is the strategy's entry coroutine function."""

    def __init__(self, main: Callable[[Workflow], Coroutine[Any, Any, Any]]) -> None:
        self._main = main
        self._ready: deque[tuple[Task, Any, BaseException | None]] = deque()
        self._effects: dict[str, _Future] = {}
        self._used_ids: dict[str, int] = {}
        self.solutions: dict[str, SolutionRecorded] = {}    # see Workflow.record_solution
        self.recorded_in_scope: set[tuple[str, str]] = set()  # membership only; never iterated
        self.observers: list[Callable[[Event], None]] = []  # see Workflow.observe
        self.shared: dict[str, Any] = {}                     # see Workflow.shared
        self._out: list[NewEvent] = []
        self._current: Task | None = None
        self.start: RunStarted | None = None
        self.context: RunContext | None = None   # RunStarted, validated once
        self.now = 0.0
        self.spend = SpendMeter()
        self.measured = Measured()  # effect durations for the time plan (handlers.timebudget)
        self.finalize_at: FinalizeAt | None = None   # see Workflow.follow_time_plan
        self.money = MoneyWatch(self.spend)           # spend per scope, budget stops, the money watches
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
            wf.record(RunFailed(error=str(exc), diagnostics=jsonable(exc.diagnostics)))
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
        self.money.watches.clear()
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

    # --- what Workflow uses -------------------------------------------------------------------

    def record(self, event: Event, scope: str) -> None:
        """A decision: into this input's output, then to every observer (Workflow.observe)."""
        self._emit(event, scope)
        for observe in self.observers:
            observe(event)

    def _emit(self, event: Event, scope: str) -> None:
        self._out.append(NewEvent(event=event, scope=scope))

    def unique_id(self, base: str) -> str:
        n = self._used_ids.get(base, 0) + 1
        self._used_ids[base] = n
        return base if n == 1 else f"{base}#{n}"

    def request(self, event: EffectRequest, scope: str) -> _Future:
        """Emit an effect request; the future resolves when its result is fed."""
        fut = _Future()
        self._effects[event.effect_id] = fut
        self.money.asked(event, scope)
        self._emit(event, scope)
        return fut

    def spawn_child(self, coro: Coroutine[Any, Any, Any], name: str) -> Task:
        """A task under the one running now (cancelled with it)."""
        return self._spawn(coro, name, parent=self._current)


def run_sync(main: Callable[[Workflow], Coroutine[Any, Any, Any]], inputs: Iterable[Event]) -> list[NewEvent]:
    """Feed inputs in order and collect every decision (handy for tests and replay)."""
    rt = Runtime(main)
    out: list[NewEvent] = []
    for ev in inputs:
        out.extend(rt.feed(ev))
    return out


__all__ = ["Runtime", "run_sync"]
