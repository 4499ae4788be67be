"""The two-phase evolutionary search (plan §4-§6, §14) as workflow code in scope ``evolve``.

    Phase 1  while True: run a draft epoch (min(steps_per_epoch, remaining) steps, never cut
             short but by the time limit); global_epoch += 1; maybe evolve profiles;
             stop when valid_pool ≥ phase1_target_nodes, the budget is spent, or time is up
    Phase 2  while nodes < max_steps and time is left: stop at once (warning) if valid_pool < 2;
             run an epoch of merge/mutate steps; global_epoch += 1; maybe evolve profiles
    finish   best valid node → finalization (test submission) → RunCompleted

Budget: a step reserves its node when it starts and appends at most one node (none when it is
cut at the search's deadline), so the journal can never exceed ``max_steps``. Steps of an epoch run ``workers`` at a time.

Time: MLE-STAR's time plan (``handlers.timebudget.TimePlan``): the search runs up to the
finalize-now point (the limit less finalization's reserve, sized from the run's measured
evaluations and agent calls), finalization from there to the time limit. Each epoch runs under the
search's deadline as it stands when the epoch starts: no step starts past its soft end (a grace
before the finalize-now point), evaluation timeouts and debug rounds stay inside it, and a guard
timer at the finalize-now point cuts the steps still running (they append no node; a ``WorkCut``
names them). Finalization is cut at the time limit like MLE-STAR's
(``handlers.finalization.finalize_within``).

Time mode (``config.step_policy == "time"``, ``handlers.step_policy``): ``max_steps`` is only an
upper bound (the ``time`` preset makes it generous); a step starts while the search's window
holds one more as long as the steps so far took, so the search runs until its window says stop.

Money: the search stops starting work (``cost_limit``) at the same point as MLE-STAR's, the
search's share of ``max_budget_usd`` (``handlers.money.search_budget_usd``; finalization keeps
the rest), or once a call was stopped for want of money (refused or cut at its cap by the
engine's ledger) and what is left cannot pay a usual call (``handlers.money.search_money_short``).
A step whose generation was stopped so appends no node: a dead node is a program that failed,
never one nobody could pay for.
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import Any, Literal

from events.core import PhaseCompleted, PhaseStarted
from events.errors import PipelineError
from events.evolution import EpochCompleted, EvolutionStopped, FinalNodeSelected, PhaseOneEnded
from events.pipeline import WorkCut
from events.values import SolutionScript, solution_id_of
from handlers.deadline import Deadline
from handlers.evolution.journal import FITNESS, Journal, Node
from handlers.evolution.profiles import evolve_profiles, seed_profiles
from handlers.evolution.steps import SOLUTION_PHASE, Phase, plan_step, run_step
from handlers.evolution.summary import run_summary
from handlers.finalization import finalize_within
from handlers.futures import Cancelled, Task
from handlers.hidden_choice import Candidate, choose_on_held_back
from handlers.money import search_share_spent, stop_ends_search
from handlers.run_end import end_run
from handlers.step_policy import StepTimer, agent_and_eval_prior, room_for_another, time_driven
from handlers.timebudget import TimePlan
from handlers.toolkit import info, score_rule, warn
from handlers.workflow import Workflow

Halt = Literal["time_limit", "cost_limit"]
PhaseOneReason = Literal["target_reached", "budget_exhausted", "time_limit", "cost_limit"]
StopReason = Literal["budget_exhausted", "time_limit", "cost_limit", "valid_pool_too_small"]

SEARCH = "evolve"
# How many of the best valid nodes the held-back rows choose the final among (with the best).
HELD_BACK_FINALISTS = 5


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
        # T counts from driven 0; the reserve follows the evaluation of the best valid node (timebudget)
        self.plan = TimePlan.from_config(self.cfg, measured=wf.measured, finalizing=self.best_solution_id)
        wf.follow_time_plan(self.plan.finalize_at_if)
        self.search_start = wf.now
        # Time mode: max_steps is only an upper bound; steps start while the window holds one more.
        self.timed = time_driven(self.cfg)
        self.steps = StepTimer(prior_s=agent_and_eval_prior(wf.measured, 2))   # generate, review, a run

    # --- helpers ------------------------------------------------------------------------------

    def best_solution_id(self) -> str | None:
        """The solution finalization would get now: the best valid node's."""
        best = self.journal.best(only_valid=True)
        return best.event.solution_id if best is not None else None

    def deadline(self) -> Deadline:
        """The search's deadline as it stands now: its hard end the finalize-now point (which moves
        earlier as slower evaluations are measured), its soft end a grace before."""
        return self.plan.search_window(SEARCH, self.search_start).deadline

    def time_up(self) -> bool:
        return self.deadline().passed(self.wf.now)

    def halt(self) -> Halt | None:
        """Why no new work may start ("" when it may): the time limit (time mode: also when the
        search's window does not hold one more step, ``handlers.step_policy``), or the search's
        money spent (its share of ``max_budget_usd``, or a budget stop; see the module doc)."""
        step_s = self.steps.estimate_s
        if self.time_up() or (self.timed and not room_for_another(self.deadline(), self.wf.now, step_s,
                                                                   self.wf.finalize_point(step_s))):
            return "time_limit"
        cap = self.cfg.max_budget_usd
        spent, calls = self.wf.cost_usd, self.wf.agent_calls
        if cap is not None and (search_share_spent(cap, spent, calls)
                                or stop_ends_search(cap, spent, calls, self.wf.budget_stops)):
            return "cost_limit"
        return None

    @property
    def remaining(self) -> int:
        return self.cfg.max_steps - self.started

    async def run_epoch(self, phase: Phase, n_steps: int) -> int:
        """Run ``n_steps`` steps, ``workers`` in flight; each step decides its choices when it
        starts. Returns the number of steps started (fewer only when time ran out). A guard timer
        at the search's hard end cuts the steps still running then (see the module doc)."""
        running: list[Task] = []
        launched = 0
        deadline = self.deadline()
        swf = self.wf.within(deadline)
        assert deadline.hard_s is not None and deadline.soft_s is not None
        guard = self.wf.guard(deadline.hard_s, "search")
        while True:
            while launched < n_steps and len(running) < self.cfg.workers and not self.halt():
                plan = plan_step(self.wf, self.journal, step=self.started, phase=phase,
                                 global_epoch=self.global_epoch + 1, profiles=list(self.profiles),
                                 merge_plans=self.merge_plans)
                self.started += 1
                launched += 1
                step = run_step(swf, self.journal, plan)
                running.append(self.wf.spawn(self.timed_step(step) if self.timed else step,
                                             name=f"step-{plan.step}"))
            if not running:
                guard.stand_down("the epoch ended before the search's deadline")
                return launched
            i = await guard.first(*running)
            if i is None:
                await self.cut(running)
                return launched
            try:
                await running.pop(i)  # re-raises a handler error of the step
            except Cancelled:  # it asked for work past the hard end (DeadlineReached): no node
                pass

    async def timed_step(self, step: Coroutine[Any, Any, Any]) -> None:
        started = self.wf.now
        await step
        self.steps.took(started, self.wf.now)

    async def cut(self, running: list[Task]) -> None:
        """The search's hard end came with steps in flight: cancel them (no node for them)."""
        names = [t.name for t in running]
        await self.wf.cut(running, "the search's deadline (the finalize-now point) was reached")
        running.clear()
        best = self.journal.best(only_valid=True)
        self.wf.record(WorkCut(unit="evolve", reason="the search's deadline (the finalize-now point) was reached",
                               at_s=self.wf.now, where=", ".join(names), steps_done=len(self.journal),
                               kept_solution_id=(best.event.solution_id or "") if best is not None else "",
                               kept_score=best.score if best is not None else None))

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
        wf.record(PhaseStarted(phase="evolve-phase1", budget_s=self.deadline().hard_left(wf.now)))
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
        wf.record(PhaseStarted(phase="evolve-phase2", budget_s=self.deadline().hard_left(wf.now)))
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
        else:
            chosen = self.on_held_back(best)
            if chosen is not best:
                best, reason = chosen, "graded best on the held-back rows among the best valid nodes (FinalChoiceMade)"
        self.wf.record(FinalNodeSelected(node_id=best.id, solution_id=best.event.solution_id or "", score=best.score,
                                         valid=best.valid, candidates=len(self.journal.valid_pool()), reason=reason))
        return best

    def on_held_back(self, best: Node) -> Node:
        """The final among the best valid nodes by their grade on the run's held-back rows
        (``handlers.hidden_choice``); ``best`` when the run held none back."""
        pool = self.journal.valid_pool()
        ranked = [pool[i] for i in FITNESS.ranked([n.fitness for n in pool])][:HELD_BACK_FINALISTS]
        by_id = {solution_id_of(n.code): n for n in [*ranked, best]}

        def candidate(n: Node) -> Candidate:
            return Candidate(SolutionScript(content=n.code, phase=SOLUTION_PHASE[n.operator], score=n.score),
                             f"node {n.id}")

        chosen = choose_on_held_back(self.wf, score_rule(self.wf), [candidate(n) for n in ranked if n is not best],
                                     candidate(best))
        return by_id[solution_id_of(chosen.solution.content)]

    async def finish(self, wf: Workflow) -> None:
        best = self.select_final()
        solution = SolutionScript(content=best.code, phase=SOLUTION_PHASE[best.operator], score=best.score)
        window = self.plan.finalization_window(wf.now)
        done = await finalize_within(wf, window, solution, best.score, validation_submission=best.submission)
        outcome: dict[str, Any] = {"submission_path": done.submission_path or "",
                                   "final_solution_id": done.final_solution_id, "fallback_reason": done.fallback_reason}
        result = run_summary(self, best, outcome)
        end_run(wf, submission_path=done.submission_path or "", best_score=best.score, result=result,
                fallback_reason=done.fallback_reason)


async def main(wf: Workflow) -> None:
    """The ``evolve`` strategy."""
    search = Search(wf)
    await search.phase1()
    await search.phase2()
    await search.finish(wf)
