"""The agent-call executor: turns an ``AgentCallRequested`` effect into the backend's result.

Around the backend's ``call`` it owns what is the same for every backend:

* **a clean working directory** per call — effects are at-least-once, and a call resumed after
  a crash must not find the half-finished files of its first try — with ``input/``: the task's
  public data, where the prompts say it is, read-only (a per-run copy the agent cannot use to
  change the task's own files; a sandboxed agent gets a read-only bind instead);
* **the run's budget**, shared among the calls in flight (``engine/agents/ledger.py``): each call
  gets its cap; a call refused for lack of money ends without reaching the model, and it and a
  call its cap cut are *budget stops* (``AgentCallFailed.stop``), not failures;
* **the call's time limit**: from now to the request's ``deadline_s`` on the run's driven clock
  (its unit of work's hard end, REQ-OR-034);
* **spend without a result** recorded: a call the engine cancels reports what it spent, and
  on resume a call that was in flight when the engine died is recorded as spend unknown.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import structlog

from engine.agents.base import AgentBackend, AgentContext
from engine.agents.ledger import BudgetLedger, OutOfBudget, budget_stop
from events.core import AgentCallCompleted, AgentCallFailed, AgentCallRequested
from events.spend import AgentSpendRecorded
from replay.state import PipelineState

log = structlog.get_logger(__name__)

ABANDONED_MARK = ".abandoned"  # a call whose spend was recorded when it was cancelled
Record = Callable[[Any, str], None]  # (bookkeeping event, scope) -> appended


def shared_input_dir(run_dir: Path, task_dir: Path) -> Path:
    """The run's read-only copy of the task's public data that every agent call sees as ``input/``."""
    target = run_dir / "agents" / ".input"
    if not target.exists():
        from engine.harness.workdir import populate_inputs

        staging = target.with_name(".input-staging")
        if staging.exists():
            from engine.harness.workdir import remove_tree

            remove_tree(staging)
        populate_inputs(task_dir, staging, "copy")
        staging.rename(target)
    return target


def fresh_work_dir(work_dir: Path, input_source: Path | None) -> None:
    from engine.harness.workdir import reset_directory

    reset_directory(work_dir)
    if input_source is not None:
        (work_dir / "input").symlink_to(input_source, target_is_directory=True)


#: A call whose deadline has (almost) passed still gets this long: it fails fast at the backend
#: with a clear reason instead of never starting (the handlers' guard timer cuts it anyway).
MIN_CALL_TIME_S = 1.0


def call_time_limit(request: AgentCallRequested, now_s: float) -> float | None:
    """Wall-clock seconds the call may take: from now (the run's driven time) to the request's
    ``deadline_s`` (REQ-OR-034); None without a deadline."""
    if request.deadline_s is None:
        return None
    return max(MIN_CALL_TIME_S, round(request.deadline_s - now_s, 3))


class AgentExecutor:
    def __init__(self, state: Callable[[], PipelineState], backend: AgentBackend, gpu: dict[str, Any],
                 record: Record | None = None, clock: Callable[[], float] | None = None) -> None:
        self._state = state
        self.backend = backend
        self._gpu = gpu
        self._record = record
        self._ledger: BudgetLedger | None = None
        # The run's driven time now (the driver's clock); without one, as of the latest commit.
        self._clock = clock or (lambda: self._state().elapsed_seconds)

    def ledger(self) -> BudgetLedger:
        if self._ledger is None:
            s = self._state()
            cfg = s.context().config
            self._ledger = BudgetLedger(cfg.max_budget_usd, slots=cfg.max_concurrent_agent_calls,
                                        spent_usd=s.accumulated_cost_usd)
        return self._ledger

    def record_lost_calls(self, agents_dir: Path) -> None:
        """On resume: calls that had started (their directory exists) but have no result and were
        not cancelled cleanly were cut by a crash; what they spent is unknown."""
        if self._record is None:
            return
        from engine.run.effect_files import safe_name

        for eff in self._state().pending.values():
            if eff.type != "AgentCallRequested":
                continue
            work = agents_dir / safe_name(eff.effect_id)
            if work.is_dir() and not (work / ABANDONED_MARK).exists():
                self._record(AgentSpendRecorded(reason="crashed", effect_id=eff.effect_id, backend=self.backend.name,
                                                detail="the engine stopped during this call; it is run again"),
                             eff.scope)
                (work / ABANDONED_MARK).write_text("crashed\n")

    async def __call__(self, request: AgentCallRequested, work_dir: Path) -> AgentCallCompleted | AgentCallFailed:
        s = self._state()
        run = s.context()
        run_dir, task_dir = run.run_dir, run.task_dir
        binds_input = getattr(self.backend, "binds_input", False)  # a sandbox shows ./input itself
        fresh_work_dir(work_dir, None if binds_input else shared_input_dir(run_dir, task_dir))
        ledger = self.ledger()
        scope = s.pending[request.effect_id].scope if request.effect_id in s.pending else "run"
        try:
            cap = ledger.reserve(request.effect_id, finalization=scope.split("/")[0] == "final")
        except OutOfBudget as exc:
            log.warning("agent_call_refused", effect_id=request.effect_id, reason=str(exc))
            return AgentCallFailed(effect_id=request.effect_id, error=f"budget stop: {exc}", attempts=0, cost_usd=0.0,
                                   stop="budget")
        settled = False

        def abandoned(cost: float | None, tokens: dict[str, int]) -> None:
            nonlocal settled
            settled = True
            ledger.settle(request.effect_id, cost)
            (work_dir / ABANDONED_MARK).write_text("cancelled\n")
            if self._record is not None:  # an unknown amount is charged as the ledger charged it: the cap
                self._record(AgentSpendRecorded(reason="cancelled", effect_id=request.effect_id,
                                                backend=self.backend.name, cost_usd=cost if cost is not None else cap,
                                                usage=tokens, detail="the engine cancelled this call" + (
                                                    "; its spend is unknown: charged at its cap"
                                                    if cost is None and cap is not None else "")), scope)

        ctx = AgentContext(run_id=s.run_id, run_dir=run_dir, work_dir=work_dir,
                           task=run.task, task_dir=task_dir,
                           config=run.config, seed=run.seed, gpu_info=self._gpu,
                           budget_usd=cap, time_limit_s=call_time_limit(request, self._clock()),
                           on_abandoned=abandoned)
        try:
            result = await self.backend.call(request, ctx)
        except BaseException:
            if not settled:
                ledger.settle(request.effect_id, None)  # cancelled without a word, or raised: unknown
            raise
        known = result.cost_usd is not None or isinstance(result, AgentCallCompleted)
        ledger.settle(request.effect_id, result.cost_usd if known else None)
        if not known and cap is not None and self._record is not None:
            self._record(AgentSpendRecorded(reason="unpriced", effect_id=request.effect_id, backend=self.backend.name,
                                            cost_usd=cap, detail="the call ended without a cost: charged at its cap, "
                                            "the most it could have spent (as the run's ledger charges it)"), scope)
        return budget_stop(result, cap)
