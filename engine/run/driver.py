"""The run loop: the imperative shell around the pure handlers.

    fold from the last snapshot → start the pending effects
      beside them: rebuild the handlers from every recorded input (a replay that must agree)
    loop: run pending effects concurrently → take one result → react → append result and
          every decision it caused in ONE transaction → repeat until RunCompleted/RunFailed

A resume's work runs again as soon as the fold from the last snapshot says what is pending; the
handlers' check (``engine.run.rebuild.rebuild``, the part that grows with the run) runs in a thread
beside it, and no result is committed before it agrees. When it does not, the effects started are
cancelled (an agent call's spend recorded as any cancelled call's), ``DriverStopped`` says why,
and the resume is refused (docs/decisions/0030-resume-beside-the-check.md).

Results are committed in the order their effects were requested (``deterministic_order``,
the default) so that two runs with the same seed write the same log whatever the timing;
effects still *execute* concurrently. Timers are the exception: they are time by nature.

The hard end (REQ-OR-024): the handlers end every window by the time limit and cancel what is
still running there (``handlers.timebudget``); as a backstop against a strategy that does not, the
driver stops the run ``HARD_END_AFTER_S`` past the limit on its driven clock: every effect in
flight is cancelled (its subprocess killed) and ``DriverStopped`` names them, so the process is
gone within REQ-OR-024's 30 s of shutdown.
"""

from __future__ import annotations

import asyncio
import math
import os
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import structlog
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

if sys.version_info < (3, 11):  # pragma: no cover - the builtin arrived in 3.11
    from exceptiongroup import BaseExceptionGroup

from engine.run.effect_files import effect_trace_path, safe_name
from engine.run.errors import EngineError, HandlersChanged, RunFinished
from engine.run.executors import Executors, failure_result
from engine.run.rebuild import caught_up, quick_state, rebuild
from engine.run.snapshots import save_at_boundary
from engine.run.stop_signals import StopSignals
from events.base import EffectResult, NewEvent
from events.core import (
    AgentCallCompleted,
    AgentCallFailed,
    AgentCallRequested,
    DriverStarted,
    DriverStopped,
    EffectCancelled,
    EvaluationRequested,
    TimerFired,
)
from events.spend import AgentSpendRecorded
from handlers.runtime import Runtime
from replay.state import PendingEffect, PipelineState
from replay.verify import Divergence
from store.base import EventStore

log = structlog.get_logger(__name__)

KILL_AFTER_SEQ_ENV = "ENGINE_FAILPOINT_KILL_AFTER_SEQ"
HARD_END_AFTER_S = 20.0  # past the time limit; the rest of the 30 s is for unwinding and exit
class Driver:
    def __init__(self, store: EventStore, run_id: str, *, main: Callable[..., Any], executors: Executors,
                 on_commit: Callable[[PipelineState], None] | None = None, lease_ttl_s: float = 30.0,
                 handle_signals: bool = True) -> None:
        self.store = store
        self.run_id = run_id
        self.main = main
        self.executors = executors
        self.on_commit = on_commit
        self.lease_ttl_s = lease_ttl_s
        self.handle_signals = handle_signals
        kill = os.environ.get(KILL_AFTER_SEQ_ENV)
        self.kill_after_seq = int(kill) if kill else None
        self.effect_trace = effect_trace_path(run_id)
        self.state = PipelineState()
        self.runtime: Runtime | None = None
        self._inflight: dict[str, anyio.CancelScope] = {}
        self._buffered: dict[str, EffectResult] = {}
        self._scopes: dict[str, str] = {}  # effect id -> its scope, for the spend of a dropped result
        self._stop_reason: str | None = None
        self._diverged: Divergence | None = None  # the handlers' check found the log changed
        self._store_lock = threading.Lock()  # the check reads the store from a thread
        self._wake: MemoryObjectSendStream[EffectResult | None] | None = None  # the loop's inbox
        self._base_elapsed = 0.0
        self._t0 = 0.0
        self._agent_limit: anyio.CapacityLimiter | None = None
        self._eval_limit: anyio.CapacityLimiter | None = None
        self.on_started: Callable[[], None] | None = None  # after DriverStarted, before any effect runs

    # --- time -------------------------------------------------------------------------------

    def elapsed(self) -> float:
        """Driven time: earlier sessions' total plus this session's (downtime excluded)."""
        return round(self._base_elapsed + (time.monotonic() - self._t0), 6)

    # --- entry ------------------------------------------------------------------------------

    async def run(self) -> PipelineState:
        """Drive the run until it ends or is stopped (``DriverStopped``): by SIGINT/SIGTERM at any
        moment when ``handle_signals`` (see ``engine.run.stop_signals``), or by the hard end."""
        if not self.handle_signals:
            return await self._drive()
        with StopSignals(asyncio.get_running_loop(), self._note_stop, self._announce_stop):
            return await self._drive()

    async def _drive(self) -> PipelineState:
        token = self.store.acquire_lease(self.run_id, self.lease_ttl_s)
        try:
            self._load()
            self._t0 = time.monotonic()
            self._append([NewEvent(event=DriverStarted(
                pid=os.getpid(), host=socket.gethostname(), resumed=self.state.driver_sessions > 0,
                elapsed_s=self._base_elapsed), scope="driver")])
            if self.on_started is not None:
                self.on_started()
            cfg = self.state.config
            self._agent_limit = anyio.CapacityLimiter(cfg.get("max_concurrent_agent_calls", 4))
            self._eval_limit = anyio.CapacityLimiter(cfg.get("max_concurrent_evaluations", 2))
            send, recv = anyio.create_memory_object_stream[EffectResult | None](math.inf)
            self._wake = send
            try:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(self._heartbeat, token)
                    tg.start_soon(self._hard_end)
                    self._start_pending(tg)
                    await self._check_beside()
                    await self._loop(tg, recv)
                    tg.cancel_scope.cancel()
            except BaseExceptionGroup as group:  # surface the real error, not the group
                raise _first_leaf(group) from None
            if self._stop_reason is not None and not self.state.finished:
                self._append([NewEvent(event=DriverStopped(
                    reason=self._stop_reason, elapsed_s=self.elapsed(),
                    cancelled_effects=sorted(self._inflight)), scope="driver")])
            if self._diverged is not None:
                raise HandlersChanged(self._diverged)
            return self.state
        finally:
            try:
                self.store.release_lease(self.run_id, token)
            except Exception as exc:  # the run's own outcome (or error) is what counts
                # A lease left behind expires after its TTL (at once for a dead holder on this host).
                log.warning("lease_not_released", run_id=self.run_id, reason=str(exc) or type(exc).__name__)

    def _load(self) -> None:
        """The fold the effects start from: the last snapshot and what follows it (quick_state)."""
        self.state = quick_state(self.store, self.run_id)
        if self.state.finished:
            raise RunFinished(f"run {self.run_id} is already {self.state.status}; nothing to resume")
        self._base_elapsed = self.state.elapsed_seconds

    async def _check_beside(self) -> None:
        """Rebuild the handlers from the whole log in a thread while the effects run; on a
        divergence, stop the run (its effects cancelled) and keep the divergence to raise."""
        rebuilt = await anyio.to_thread.run_sync(rebuild, self.store, self.run_id, self.main, self._store_lock)
        if rebuilt.divergence is not None:
            self._diverged = rebuilt.divergence
            self._stop_reason = "the handlers no longer agree with this run's log (the code changed); not resumed"
            for scope in self._inflight.values():
                scope.cancel()
            return
        rebuilt = caught_up(rebuilt, self.store, self.run_id)
        self.state, self.runtime = rebuilt.state, rebuilt.runtime

    # --- the loop ---------------------------------------------------------------------------

    def _start_pending(self, tg: TaskGroup) -> None:
        """Start every pending effect not already running or waiting to be committed."""
        assert self._wake is not None
        for eff in list(self.state.pending.values()):
            if eff.effect_id not in self._inflight and eff.effect_id not in self._buffered:
                scope = anyio.CancelScope()
                self._inflight[eff.effect_id] = scope
                self._scopes[eff.effect_id] = eff.scope
                tg.start_soon(self._execute, eff, self._wake, scope)

    async def _loop(self, tg: TaskGroup, recv: MemoryObjectReceiveStream[EffectResult | None]) -> None:
        while not self.state.finished and self._stop_reason is None:
            self._start_pending(tg)
            if not self._inflight and not self._buffered:
                raise EngineError(
                    f"run {self.run_id}: the handlers wait for nothing (no effect pending) but the run has "
                    "not ended; this is a bug in the strategy")
            result = await recv.receive()
            if result is None:
                continue
            self._buffered[result.effect_id] = result
            while (nxt := self._next_committable()) is not None:
                self._commit(nxt)
                if self.state.finished:
                    break

    def _next_committable(self) -> EffectResult | None:
        if not self._buffered:
            return None
        for effect_id, result in self._buffered.items():
            if isinstance(result, TimerFired) or not self.state.deterministic_order:
                return self._buffered.pop(effect_id)
        for eff in self.state.pending.values():
            if eff.type == "TimerRequested":
                continue
            if eff.effect_id in self._buffered:
                return self._buffered.pop(eff.effect_id)
            return None
        # Results for effects no longer pending (cancelled meanwhile) are dropped.
        for dropped in self._buffered.values():
            self._record_dropped_spend(dropped)
        self._buffered.clear()
        return None

    def _commit(self, result: EffectResult) -> None:
        pending = self.state.pending.get(result.effect_id)
        self._inflight.pop(result.effect_id, None)
        if pending is None:
            self._record_dropped_spend(result)
            return
        assert self.runtime is not None
        result = result.model_copy(update={"elapsed_s": self.elapsed()})
        decisions = self.runtime.feed(result)
        cause = self.state.last_seq + 1
        batch = [NewEvent(event=result, scope=pending.scope)]
        batch += [NewEvent(event=d.event, scope=d.scope, causation_seq=cause) for d in decisions]
        self._append(batch)
        for d in decisions:
            if isinstance(d.event, EffectCancelled):
                scope = self._inflight.pop(d.event.effect_id, None)
                dropped = self._buffered.pop(d.event.effect_id, None)
                if dropped is not None:
                    self._record_dropped_spend(dropped)
                if scope is not None:
                    scope.cancel()

    def record(self, event: Any, scope: str) -> None:
        """Append one bookkeeping event (e.g. spend an executor saw outside a result). Spend goes
        to the handlers' meter too, as a replay feeds it (``replay.verify``); it decides nothing."""
        self._append([NewEvent(event=event, scope=scope)])
        if isinstance(event, AgentSpendRecorded) and self.runtime is not None:
            self.runtime.feed(event)

    def _append(self, batch: list[NewEvent]) -> None:
        with self._store_lock:
            envelopes = self.store.append(self.run_id, batch, expected_seq=self.state.last_seq)
        for env in envelopes:
            self.state.apply(env)
        save_at_boundary(self.store, self.run_id, self.state, len(envelopes))  # for status and the UI
        if self.kill_after_seq is not None and self.state.last_seq >= self.kill_after_seq:
            os.kill(os.getpid(), signal.SIGKILL)  # failpoint for crash-exactness tests
        if self.on_commit is not None:
            self.on_commit(self.state)

    # --- effects ----------------------------------------------------------------------------

    async def _execute(self, eff: PendingEffect, send: Any, scope: anyio.CancelScope) -> None:
        if self._stop_reason is not None:
            return  # started after the stop came: it would only be cancelled, a process spawned for nothing
        result: EffectResult | None = None
        sent = False
        try:
            with scope:
                try:
                    result = await self._dispatch(eff)
                except Exception as exc:  # an executor bug must not kill the run: it becomes a result
                    log.error("effect_failed", effect_id=eff.effect_id, error=repr(exc))
                    result = failure_result(eff, exc)
                await send.send(result)
                sent = True
        finally:
            if result is not None and not sent:  # cancelled on its way back
                self._record_dropped_spend(result)

    def _record_dropped_spend(self, result: EffectResult) -> None:
        """An agent call's result that came after its effect was cancelled is not recorded, but
        the money it spent is (issue 26: every dollar reaches the one meter)."""
        if not isinstance(result, (AgentCallCompleted, AgentCallFailed)) or not result.cost_usd:
            return  # nothing spent, or nothing known (the ledger kept such a call's cap as spent)
        self.record(AgentSpendRecorded(
            reason="cancelled", effect_id=result.effect_id, cost_usd=result.cost_usd, usage=result.usage,
            detail="the call ended after the engine cancelled it; its result was not recorded"),
            self._scopes.get(result.effect_id, "run"))

    async def _dispatch(self, eff: PendingEffect) -> EffectResult:
        if self.effect_trace:
            with open(self.effect_trace, "a", encoding="utf-8") as fh:
                fh.write(f"{eff.effect_id}\n")
        if eff.type == "AgentCallRequested":
            req = AgentCallRequested.model_validate(eff.payload)
            work_dir = Path(self.state.run_dir) / "agents" / safe_name(eff.effect_id)
            work_dir.mkdir(parents=True, exist_ok=True)
            assert self._agent_limit is not None
            async with self._agent_limit:
                result = await self.executors.agent(req, work_dir)
        elif eff.type == "EvaluationRequested":
            req_e = EvaluationRequested.model_validate(eff.payload)
            node = self.state.solutions.get(req_e.solution_id)
            if node is None:
                raise EngineError(f"evaluation {eff.effect_id} names unknown solution {req_e.solution_id}")
            assert self._eval_limit is not None
            async with self._eval_limit:
                result = await self.executors.evaluate(req_e, node.content)
        elif eff.type == "TimerRequested":
            at = float(eff.payload["at_elapsed_s"])
            while (remaining := at - self.elapsed()) > 0:
                await anyio.sleep(min(remaining, 1.0))
            result = TimerFired(effect_id=eff.effect_id)
        else:
            raise EngineError(f"no executor for {eff.type}")
        if result.effect_id != eff.effect_id:
            result = result.model_copy(update={"effect_id": eff.effect_id})
        return result

    # --- housekeeping -----------------------------------------------------------------------

    async def _heartbeat(self, token: str) -> None:
        while True:
            await anyio.sleep(self.lease_ttl_s / 3)
            with self._store_lock:
                self.store.renew_lease(self.run_id, token, self.lease_ttl_s)

    async def _hard_end(self) -> None:
        """The backstop of the time limit (see the module doc)."""
        limit = self.state.config.get("time_limit_seconds")
        if not isinstance(limit, (int, float)) or isinstance(limit, bool):
            return
        at = float(limit) + HARD_END_AFTER_S
        while (left := at - self.elapsed()) > 0:
            await anyio.sleep(left)
        if self.state.finished or self._stop_reason is not None:
            return
        self._stop_reason = (f"time limit: {limit:g} s of driven time passed and the run had not ended "
                             f"{HARD_END_AFTER_S:g} s later (REQ-OR-024)")
        log.warning("driver_stopping", run_id=self.run_id, reason=self._stop_reason)
        if self._wake is not None:
            await self._wake.send(None)

    def _note_stop(self, reason: str) -> bool:
        """A stop signal's first part, in the signal handler: record the first reason, no more."""
        if self._stop_reason is not None:
            return False
        self._stop_reason = reason
        return True

    def _announce_stop(self, reason: str, first: bool) -> None:
        """A stop signal's second part, on the loop: say so and wake the loop, which then cancels
        every effect in flight and records ``DriverStopped``."""
        if not first:
            log.warning("driver_already_stopping", run_id=self.run_id, signal=reason, reason=self._stop_reason)
            return
        log.warning("driver_stopping", run_id=self.run_id, reason=reason)
        if self._wake is not None:
            try:
                self._wake.send_nowait(None)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                pass  # the loop has already ended


def _first_leaf(group: BaseExceptionGroup) -> BaseException:
    exc: BaseException = group
    while isinstance(exc, BaseExceptionGroup):
        exc = exc.exceptions[0]
    return exc
