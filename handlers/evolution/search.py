"""The two-phase evolutionary search (plan §4-§6, §14) as workflow code in scope ``evolve``.

    Phase 1  while True: run a draft epoch (min(steps_per_epoch, remaining) steps, never cut
             short but by the time limit); global_epoch += 1; maybe evolve profiles;
             stop when valid_pool ≥ phase1_target_nodes, the budget is spent, or time is up
    Phase 2  while nodes < max_steps and time is left: stop at once (warning) if valid_pool < 2;
             run an epoch of merge/mutate steps; global_epoch += 1; maybe evolve profiles
    finish   best valid node → finalization (test submission) → RunCompleted

Budget: a step reserves its node when it starts and appends exactly one node, so the journal
can never exceed ``max_steps``. Steps of an epoch run ``workers`` at a time.

Time: the search stops starting work at ``search_deadline`` = the run's time limit minus the
finalization share (``phase_time_budget.finalization_pct``, 10 % without one), so the best node
still becomes a test submission inside the limit; steps in flight finish (their evaluation
timeouts are capped by the deadline and no debug attempt starts past it). Reaching
``max_budget_usd`` (recorded agent costs) stops new work the same way.
"""

from __future__ import annotations

from typing import Any, Literal

from events.core import PhaseCompleted, PhaseStarted, SubmissionInfo
from events.domain import PipelineError, SolutionScript
from events.evolution import EpochCompleted, EvolutionStopped, FinalNodeSelected, PhaseOneEnded
from handlers.evolution.journal import Journal, Node
from handlers.evolution.profiles import evolve_profiles, seed_profiles
from handlers.evolution.steps import SOLUTION_PHASE, Phase, plan_step, run_step
from handlers.evolution.summary import run_summary
from handlers.finalization import run_finalization
from handlers.runtime import Task, Workflow
from handlers.toolkit import info, warn

Halt = Literal["time_limit", "cost_limit"]
PhaseOneReason = Literal["target_reached", "budget_exhausted", "time_limit", "cost_limit"]
StopReason = Literal["budget_exhausted", "time_limit", "cost_limit", "valid_pool_too_small"]

DEFAULT_FINALIZATION_PCT = 10.0


def phase1_log_line(nodes: int, valid: int, target: int) -> tuple[str, str]:
    """The plan's line (§14/§16), in English and in the Chinese original's words."""
    mark = f"(≥{target})" if valid >= target else f"(<{target})"
    return (f"Phase 1 done: journal={nodes}, valid_pool={valid} {mark}",
            f"Phase 1 完成: journal={nodes}, valid_pool={valid} {mark}")


class Search:
    def __init__(self, wf: Workflow) -> None:
        self.wf = wf.at("evolve")
        self.cfg = wf.config
        self.journal = Journal(direction=wf.start.task.metric_direction)
        self.profiles = seed_profiles(self.cfg.agent_profiles)
        self.started = 0                 # steps started = nodes reserved
        self.global_epoch = 0
        self.phase1_epochs = 0
        self.phase2_epochs = 0
        self.profile_evolutions: list[int] = []
        self.phase1_summary: dict[str, Any] = {}
        self.stop_reason = ""
        self.merge_plans: dict[tuple[str, ...], str] = {}   # gene-id signature -> the merge node planned
        limit = float(self.cfg.time_limit_seconds)
        pct = (self.cfg.phase_time_budget.finalization_pct if self.cfg.phase_time_budget is not None
               else DEFAULT_FINALIZATION_PCT)
        self.time_limit = limit
        self.search_deadline = limit * (1.0 - pct / 100.0)

    # --- helpers ------------------------------------------------------------------------------

    def time_up(self) -> bool:
        return self.wf.now >= self.search_deadline

    def halt(self) -> Halt | None:
        """Why no new work may start ("" when it may): the time limit, or the spending cap
        ``max_budget_usd`` reached by the recorded agent costs."""
        if self.time_up():
            return "time_limit"
        cap = self.cfg.max_budget_usd
        if cap is not None and self.wf.cost_usd >= cap:
            return "cost_limit"
        return None

    @property
    def remaining(self) -> int:
        return self.cfg.max_steps - self.started

    async def run_epoch(self, phase: Phase, n_steps: int) -> int:
        """Run ``n_steps`` steps, ``workers`` in flight; each step decides its choices when it
        starts. Returns the number of steps started (fewer only when time ran out)."""
        running: list[Task] = []
        launched = 0
        while True:
            while launched < n_steps and len(running) < self.cfg.workers and not self.halt():
                plan = plan_step(self.wf, self.journal, step=self.started, phase=phase,
                                 global_epoch=self.global_epoch + 1, profiles=list(self.profiles),
                                 merge_plans=self.merge_plans)
                self.started += 1
                launched += 1
                running.append(self.wf.spawn(run_step(self.wf, self.journal, plan, deadline_s=self.search_deadline),
                                             name=f"step-{plan.step}"))
            if not running:
                return launched
            i = await self.wf.first(*running)
            await running.pop(i)  # re-raises a handler error of the step

    async def end_epoch(self, phase: Phase, phase_epoch: int, steps: int) -> None:
        self.global_epoch += 1
        valid, dead = len(self.journal.valid_pool()), self.journal.dead_count()
        self.wf.record(EpochCompleted(phase=phase, phase_epoch=phase_epoch, global_epoch=self.global_epoch,
                                      steps=steps, nodes=len(self.journal), valid=valid, dead=dead))
        label = "Phase 1" if phase == "draft" else "Phase 2"
        info(self.wf, f"{label} | epoch={self.global_epoch} nodes={len(self.journal)} valid={valid} dead={dead}")
        if self.global_epoch % self.cfg.profile_evolution_every == 0:
            if self.halt():
                info(self.wf, f"agent profile evolution skipped: {str(self.halt()).replace('_', ' ')} reached",
                     global_epoch=self.global_epoch)
                return
            self.profiles = await evolve_profiles(self.wf, self.journal, self.profiles, self.global_epoch)
            self.profile_evolutions.append(self.global_epoch)

    # --- phases -------------------------------------------------------------------------------

    async def phase1(self) -> None:
        wf, target = self.wf, self.cfg.phase1_target_nodes
        wf.record(PhaseStarted(phase="evolve-phase1", budget_s=self.search_deadline - wf.now))
        reason: PhaseOneReason
        while True:
            if self.remaining <= 0:
                reason = "budget_exhausted"
                break
            halted = self.halt()
            if halted is not None:
                reason = halted
                break
            steps = await self.run_epoch("draft", min(self.cfg.steps_per_epoch, self.remaining))
            self.phase1_epochs += 1
            await self.end_epoch("draft", self.phase1_epochs, steps)
            if len(self.journal.valid_pool()) >= target:
                reason = "target_reached"
                break
        valid = len(self.journal.valid_pool())
        line, original = phase1_log_line(len(self.journal), valid, target)
        dead_rate = self.journal.dead_rate()
        wf.record(PhaseOneEnded(nodes=len(self.journal), valid_pool=valid, dead=self.journal.dead_count(),
                                target=target, epochs=self.phase1_epochs, reason=reason, dead_rate=dead_rate,
                                log_line=line))
        info(wf, line, original=original, reason=reason, dead_rate=dead_rate)
        if valid < target:
            warn(wf, "Phase 1 ended below the target population; Phase 2 still starts (plan §5)",
                 valid_pool=valid, target=target, reason=reason)
        self.phase1_summary = {"nodes": len(self.journal), "valid_pool": valid, "dead": self.journal.dead_count(),
                               "epochs": self.phase1_epochs, "reason": reason, "dead_rate": dead_rate,
                               "log_line": line}
        wf.record(PhaseCompleted(phase="evolve-phase1", result=self.phase1_summary))

    async def phase2(self) -> None:
        wf = self.wf
        wf.record(PhaseStarted(phase="evolve-phase2", budget_s=self.search_deadline - wf.now))
        reason: StopReason = "budget_exhausted"
        while self.remaining > 0:
            halted = self.halt()
            if halted is not None:
                reason = halted
                break
            if len(self.journal.valid_pool()) < 2:
                warn(wf, "valid_pool has fewer than 2 nodes: Phase 2 ends (no idle epochs)",
                     valid_pool=len(self.journal.valid_pool()))
                reason = "valid_pool_too_small"
                break
            steps = await self.run_epoch("evolve", min(self.cfg.steps_per_epoch, self.remaining))
            self.phase2_epochs += 1
            await self.end_epoch("evolve", self.phase2_epochs, steps)
        self.stop_reason = reason
        wf.record(EvolutionStopped(reason=reason, nodes=len(self.journal), valid_pool=len(self.journal.valid_pool()),
                                   phase2_epochs=self.phase2_epochs))
        wf.record(PhaseCompleted(phase="evolve-phase2", result={"epochs": self.phase2_epochs, "reason": reason,
                                                                "nodes": len(self.journal)}))

    # --- the end ------------------------------------------------------------------------------

    def select_final(self) -> Node:
        best = self.journal.best(only_valid=True)
        reason = "the best valid node (direction-aware fitness; later nodes win ties)"
        if best is None:
            best = self.journal.best(only_valid=False)
            reason = "no valid node: the best scored node that is not dead (flagged buggy by review)"
            if best is None:
                raise PipelineError("the evolutionary search produced no node with a score",
                                    diagnostics={"nodes": len(self.journal), "dead": self.journal.dead_count()})
            warn(self.wf, "no valid node; finishing with a node the review flagged buggy", node=best.id)
        self.wf.record(FinalNodeSelected(node_id=best.id, solution_id=best.event.solution_id or "", score=best.score,
                                         valid=best.valid, candidates=len(self.journal.valid_pool()), reason=reason))
        return best

    async def finish(self, wf: Workflow) -> None:
        best = self.select_final()
        solution = SolutionScript(content=best.code, phase=SOLUTION_PHASE[best.operator], score=best.score)
        outcome = await finalize(wf, solution, best.score, deadline_s=self.time_limit, submission=best.submission)
        result = run_summary(self, best, outcome)
        wf.complete(submission_path=outcome.get("submission_path", ""), best_score=best.score, result=result)


async def finalize(wf: Workflow, solution: SolutionScript, score: float | None, *, deadline_s: float,
                   submission: SubmissionInfo | None = None) -> dict[str, Any]:
    """The shared finalization (spec 08); ``submission`` is the one the node's evaluation wrote."""
    outcome = await run_finalization(wf, solution, score, deadline_s=deadline_s, validation_submission=submission)
    return {"submission_path": outcome.submission_path, "final_solution_id": outcome.final_solution_id,
            "fallback_reason": outcome.fallback_reason}


async def main(wf: Workflow) -> None:
    """The ``evolve`` strategy."""
    search = Search(wf)
    await search.phase1()
    await search.phase2()
    await search.finish(wf)
