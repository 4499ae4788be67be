"""The MLE-STAR strategy, top to bottom (spec 09, the orchestrator).

    Phase 1          s_0, h_0 = run_phase1()                               REQ-OR-012
    Phase 2          L paths refine copies of s_0 concurrently           REQ-OR-013/018..023
    Phase 3          ensemble the L path bests (skipped when L = 1)      REQ-OR-014/015
    finalization     turn the best validation script into a submission   REQ-OR-016
    result           FinalResult + per-phase cost and duration           REQ-OR-036..038

Phases run strictly one after another (REQ-OR-017). Each runs in its own time window
(``handlers.timebudget``: 10/65/15/10 of the limit, what a phase leaves unused passes to the
later ones, every window ending by the limit) as a task raced against a guard timer and the
budget (``handlers.mlestar.phaserun``).

Limits (REQ-OR-024/029/030/034): when a phase's deadline passes it is cancelled and the pipeline
moves on with the best solution so far; when the finalize-now point is reached or the budget
is spent, the remaining search phases are skipped and finalization runs with the best so far.
Finalization is never cut by the budget (it is the spending that turns the search into a
submission); it runs from the end of the search to the time limit, at least its reserve (sized
from the run's measured evaluations and agent calls), and is cut there like any phase.

Fallbacks (REQ-OR-040..043): a failed Phase 2 path contributes s_0; a Phase 2 cut by its
deadline contributes the best intermediate solution; after Phase 3 — completed, failed or cut —
finalization gets the best on validation of Phase 3's inputs and its best ensemble so far
(``handlers.mlestar.finalchoice``); a failed or cut finalization keeps the validation script
and submits the file that script's own evaluation left (every scored run is checked for one,
``handlers.evaluation.submission_of``), or none (``submission_path = ""``) if it left no valid
one. Only when nothing usable exists at all (Phase 1 produced no executable solution) does the
run fail, with diagnostics (REQ-OR-042).

Phase 1 is the one phase nothing can replace: when its soft window ends and no solution has
been evaluated yet it is extended up to the finalize-now point, never beyond — and only until it
has one; while the retriever's first choice still runs, by ``FIRST_CHOICE_WAIT`` times its own
window's length at most (``phase1.FirstChoice``). Past its soft end Phase 1 cuts the drafts still running at its first scored
candidate (the first choice's, if it runs) and starts no merge (``phase1.draft_candidates``), so the
extension does not eat the time Phase 2 and Phase 3 share. Its candidates and checks run under
the extension's deadline (their timeouts and debug rounds reach finalize-now), its merges under its
own window. A Phase 1 cut by its deadline hands on its best as it is: its safety checks
are not run again after the cut (they would eat Phase 2's and Phase 3's time); only a Phase 1
that *failed* with a usable solution gets them, inside its own window.

Choices where the specs pull apart:
* REQ-OR-015 vs REQ-P3-018: with L = 1 the orchestrator does not call Phase 3 at all
  (``FinalResult.phase3 is None``, a PhaseSkipped decision); Phase 3's own skip stays unused.
* REQ-P3-025 vs REQ-OR-043 (docs/decisions/0001-final-choice.md): Phase 3 picks its best *ensemble*; the run
  submits the best *solution*, so an ensemble worse than a path's own best is not submitted.
* REQ-OR-030.4 vs REQ-OR-043: a Phase 1 that fails or is cut still feeds the pipeline when
  any solution was evaluated; the run fails only when nothing usable exists.
* REQ-OR-026's ``phase2_time_budget / L`` per path assumes paths run one after another; they
  run concurrently here, so every path gets the whole Phase 2 window.
* Digest 08 §7.4 (two owners of FinalResult): the orchestrator builds it; finalization returns
  a ``FinalizationOutcome``.
* Finalization brackets itself as ``final`` (its scope); cost and duration summaries use the
  spec's name ``finalization``.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import Any

from events.errors import PipelineError
from events.pipeline import DeadlineHit, FallbackUsed, FinalizeNow, PhaseSkipped, WorkCut
from events.results import EnsembleAttempt, FinalResult, Phase1Result, Phase2Result, Phase3Result
from events.score import Ties
from events.values import SolutionScript, solution_id_of
from handlers.deadline import Deadline, DeadlineReached
from handlers.evaluation import submission_of
from handlers.finalization import record_own_submission, run_finalization
from handlers.mlestar.bestsofar import best_so_far, best_solution_id, drafts_left_out, track_best, track_drafts
from handlers.mlestar.finalchoice import best_round, choose_final, final_on_held_back, picked_rows
from handlers.mlestar.phase1 import first_choice, post_merge_checks, run_phase1
from handlers.mlestar.phase2 import best_of, failed_path_result, run_phase2
from handlers.mlestar.phase3 import run_phase3
from handlers.mlestar.phaserun import BUDGET, FAILED, Ledger, Limits, PhaseOutcome, PhaseRace
from handlers.mlestar.summaries import diagnostics, summaries
from handlers.run_end import end_run
from handlers.step_policy import time_driven
from handlers.timebudget import FINALIZATION, TimePlan, Window
from handlers.toolkit import score_rule, warn
from handlers.workflow import Workflow

# Phases whose handlers record their own PhaseStarted and (on success) PhaseCompleted, and the
# name they record them under (finalization brackets itself as "final", its scope). Phase 2 is
# bracketed here; its paths bracket themselves as "phase2/path-<i>".
SELF_REPORTED = {"phase1": "phase1", "phase3": "phase3", FINALIZATION: "final"}
# How many of Phase 1's windows past its end it waits for the retriever's first choice. One is
# too few in short runs on tasks with many classes or rows, where the model ranked first (often a
# forest) takes about twice Phase 1's window, and cutting it leaves the whole run to a weaker,
# quicker model. A first choice slower than that is still cut.
FIRST_CHOICE_WAIT = 2
# Phase 1's drafts are told the most the first choice is waited for as their deadline, so a slow
# first choice fits its work to it (a booster learns faster) instead of being cut (decision 0032).
DRAFTS_SIZED_TO_WINDOW = "phase1-drafts-sized-to-window"


def first_choice_wait_s(window: Window) -> float:
    """How long past its window Phase 1 waits for the retriever's first choice."""
    return FIRST_CHOICE_WAIT * window.budget_s


@dataclass(frozen=True)
class Phases:
    """The four phase entry points (injectable, so tests can script whole phases)."""

    phase1: Callable[..., Any]
    phase2: Callable[..., Any]
    phase3: Callable[..., Any]
    finalization: Callable[..., Any]
    # Phase 1's safety checks (A_data, final leakage), run on the best candidate of a Phase 1
    # that was cut before it reached them; None: a cut Phase 1 hands on its best as it is.
    phase1_checks: Callable[..., Any] | None = None


def default_phases() -> Phases:
    return Phases(run_phase1, run_phase2, run_phase3, run_finalization, phase1_checks=post_merge_checks)


async def main(wf: Workflow) -> None:
    """The ``mle-star`` strategy."""
    await run_mle_star(wf, default_phases())


class Pipeline:
    def __init__(self, wf: Workflow, phases: Phases) -> None:
        self.wf, self.phases = wf, phases
        track_best(wf)  # the run-wide fallback watches every evaluation from the start
        track_drafts(wf)  # and what a cut Phase 1 left unmerged
        self.config = wf.config
        # T counts from driven 0; the reserve follows the evaluation of the best so far (timebudget)
        self.plan = TimePlan.from_config(self.config, measured=wf.measured, finalizing=lambda: best_solution_id(wf))
        wf.follow_time_plan(self.plan.finalize_at_if)
        self.ledger = Ledger()
        self.limits = Limits(wf, self.ledger)
        self.L = self.config.num_parallel_solutions
        self.todo = ["phase1", "phase2"] + (["phase3"] if self.L > 1 else [])
        self.stop_reason = ""  # "time" or "budget" once the search is over early

    # --- the flow --------------------------------------------------------------------------

    async def run(self) -> None:
        wf = self.wf
        if self.L == 1:                                                          # REQ-OR-015
            self._skip("phase3", "L=1: a single path has nothing to ensemble (REQ-OR-015)")

        phase1 = await self.phase1()                                             # REQ-OR-012
        best, best_score = phase1.initial_solution, phase1.initial_score

        phase2_results: list[Phase2Result] = []
        if self._may_start("phase2"):                                            # REQ-OR-013
            phase2_results = await self.phase2(phase1)
            found = best_of(wf, phase2_results, Ties.LATER_WINS)                 # REQ-OR-041: >=
            if found is not None:
                best, best_score = found.best_solution.model_copy(update={"score": found.best_score}), found.best_score

        phase3: Phase3Result | None = None
        if "phase3" in self.todo and self._may_start("phase3"):                  # REQ-OR-014
            phase3, best, best_score = await self.phase3(phase2_results, best, best_score)

        best, best_score = final_on_held_back(wf, phase1, phase2_results, best, best_score)
        final_solution, submission_path, finalization = await self.finalize(best, best_score)  # REQ-OR-016
        result = FinalResult(task=wf.start.task, config=self.config, phase1=phase1,              # REQ-OR-036
                             phase2_results=phase2_results, phase3=phase3, final_solution=final_solution,
                             submission_path=submission_path,
                             total_duration_seconds=wf.now - self.plan.start_s, total_cost_usd=wf.cost_usd)
        summary = summaries(wf, self.ledger, self.L, self.stop_reason, best_score, finalization, self.plan.start_s)
        end_run(wf, submission_path=submission_path, best_score=best_score,
                result=result.model_dump(mode="json") | summary, fallback_reason=finalization.get("fallback_reason"))

    def _may_start(self, phase: str) -> bool:
        """The checks before each phase (REQ-OR-024/029/034): finalize now, or run ``phase``."""
        if self.stop_reason:
            self._skip(phase, f"finalize now ({self.stop_reason})")
            return False
        reason = "budget" if self.limits.exhausted else "time" if self.plan.finalize_now(self.wf.now) else ""
        if not reason:
            return True
        self._finalize_now(reason)
        self._skip(phase, f"finalize now ({reason})")
        return False

    def _finalize_now(self, reason: str) -> None:
        if self.stop_reason:
            return
        self.stop_reason = reason
        skipped = [p for p in self.todo if p not in self.ledger.records]
        self.wf.record(FinalizeNow(reason=reason, remaining_s=self.plan.remaining_s(self.wf.now),
                                   threshold_s=self.plan.reserve_s, skipped=skipped))

    def _skip(self, phase: str, reason: str) -> None:
        self.ledger.skip(phase, reason)
        self.wf.record(PhaseSkipped(phase=phase, reason=reason))

    def _window(self, phase: str) -> Window:
        remaining = tuple(p for p in self.todo if p not in self.ledger.records or p == phase)
        return self.plan.window(phase, self.wf.now, remaining)

    def _bounded(self, window: Window) -> Workflow:
        """The workflow a phase runs in, under its window's deadline: the phase starts no new step
        past the soft end, and nothing it asks for may start after the hard end."""
        return self.wf.within(window.deadline)

    def _race(self, window: Window, coro: Coroutine[Any, Any, Any]) -> PhaseRace:
        return PhaseRace(self.wf, window, coro, limits=self.limits, ledger=self.ledger,
                         self_reported=window.phase in SELF_REPORTED, bracket=SELF_REPORTED.get(window.phase))

    def _after(self, outcome: PhaseOutcome) -> None:
        if outcome.status == BUDGET:
            self._finalize_now("budget")

    # --- Phase 1 ---------------------------------------------------------------------------

    async def phase1(self) -> Phase1Result:
        wf, window = self.wf, self._window("phase1")
        # Phase 1 may be extended up to the finalize-now point (below): its workflow's deadline ends
        # there, for its candidates and checks; its merges run inside its own window.
        until, first = max(window.end_s, self.plan.finalize_at_s), first_choice(wf)
        race = self._race(window, self.phases.phase1(self.wf.within(self._phase1_deadline(window, until)),
                                                     window=window.deadline))
        how = await race.wait(window.end_s)
        if how == "deadline" and window.end_s < self.plan.finalize_at_s:
            # Nothing usable yet: nothing can replace Phase 1, keep going up to finalize-now. The
            # first choice still running: wait for it, FIRST_CHOICE_WAIT of Phase 1's windows at most.
            wait_s = first_choice_wait_s(window)
            extended = (self.plan.finalize_at_s if best_so_far(wf) is None else
                        min(self.plan.finalize_at_s, window.end_s + wait_s) if first.running else None)
            if extended is not None:
                wf.record(DeadlineHit(phase="phase1", deadline_s=window.end_s, action="extended"))
                how = await race.wait(extended)
        outcome = await race.settle(how)
        self._after(outcome)
        if outcome.ok:
            return outcome.value
        found = best_so_far(wf)
        if found is None:                                                       # REQ-OR-042 / OR-030.4
            raise PipelineError(f"Phase 1 produced no usable solution ({outcome.status}): {outcome.error}",
                                diagnostics(wf, self.ledger, outcome, self.plan.start_s))
        if outcome.status == FAILED:
            solution, score = await self._checked(*found, end=window.end_s)
            why = "best solution evaluated before Phase 1 failed, after the safety checks that fit in its window"
        else:  # cut (time or budget): the checks are not run again outside Phase 1's window
            solution, score = found
            why = f"best solution evaluated before Phase 1 stopped ({outcome.status}), handed on as it is"
        self._fallback("phase1", outcome, solution, score, why)
        # Time mode: its drafts no merge reached still give the paths above the first their own
        # start, as when Phase 1 ends with merges left, so that a cut Phase 1 does not leave every
        # path refining the same model. Not under fixed step counts, whose Phase 3 does not size
        # its rounds to its window: there a blend of two families may not fit a short run's
        # Phase 3 where one of one family does.
        unmerged = drafts_left_out(wf, found[0].solution_id) if time_driven(self.config) else []
        return Phase1Result(retrieved_models=[], candidate_solutions=[], candidate_scores=[],
                            initial_solution=solution, initial_score=score, unmerged=unmerged)

    def _phase1_deadline(self, window: Window, until: float) -> Deadline:
        """Phase 1's workflow deadline: the extension's end ``until``; its drafts are asked to fit
        their work to the most the first choice is waited for (decision 0032), where a draft that
        fits it is not cut."""
        if not self.wf.patched(DRAFTS_SIZED_TO_WINDOW):
            return Deadline.at(until)
        return Deadline(until, until, min(until, window.end_s + first_choice_wait_s(window)))

    async def _checked(self, solution: SolutionScript, score: float, *, end: float) -> tuple[SolutionScript, float]:
        """REQ-P1-030/031 on the best candidate of a failed Phase 1: the checks run while they fit
        before ``end``, Phase 1's own window end (a timer cancels them there); a check that did
        not finish leaves the version before it."""
        wf, checks = self.wf, self.phases.phase1_checks
        end = min(end, self.plan.finalize_at_s)
        if checks is None or Deadline(end, end).over(wf.now):
            return solution, score
        pwf = wf.at("phase1").within(Deadline(end, end))
        sid = pwf.record_solution(solution.content, phase=solution.phase, origin="phase1_best", parents=[],
                                  source_model=solution.source_model)
        task = wf.spawn(checks(pwf, solution, sid, score), name="phase1-checks")
        guard = wf.guard(end, "phase1-checks")
        if await guard.first(task) == 0:
            guard.stand_down("Phase 1 checks finished")
            try:
                checked, _, checked_score = await task
                return checked, checked_score
            except DeadlineReached:
                pass
        else:  # not waited for: the version before the checks is kept whatever they leave
            wf.cancel(task, "Phase 1's window ended during its checks")
        warn(wf, "Phase 1's safety checks did not fit in its window", phase="phase1")
        return solution, score

    # --- Phase 2 ---------------------------------------------------------------------------

    async def phase2(self, phase1: Phase1Result) -> list[Phase2Result]:
        """Each path's own result, whatever happens: a path that finished keeps its result and
        full step history, a path cut by the deadline or the budget its best so far and the
        steps it completed (REQ-OR-023/026/043); only a path with nothing at all (it failed, or
        never started) falls back to the Phase 1 solution (REQ-OR-040)."""
        s0, h0 = phase1.initial_solution, phase1.initial_score
        window = self._window("phase2")
        sink: list[Phase2Result | None] = [None] * self.L
        race = self._race(window, self.phases.phase2(self._bounded(window), s0.model_copy(deep=True), h0,
                                                     sink=sink, unmerged=phase1.unmerged))
        outcome = await race.settle(await race.wait(window.end_s))
        self._after(outcome)
        results: list[Phase2Result | None] = list(outcome.value or []) if outcome.ok else list(sink)
        why = ("path failed: Phase 1 solution substituted (REQ-OR-040)" if outcome.ok or outcome.status == "failed"
               else f"Phase 2 {outcome.status.replace('_', ' ')} before the path started: Phase 1 solution used")
        out: list[Phase2Result] = []
        for i in range(self.L):
            r = results[i] if i < len(results) else None
            if r is None:
                r = failed_path_result(s0, h0, why)
                self._fallback(f"phase2/path-{i}", outcome, s0, h0, why)
            out.append(r)
        return out

    # --- Phase 3 ---------------------------------------------------------------------------

    async def phase3(self, phase2_results: list[Phase2Result], best: SolutionScript,
                     best_score: float) -> tuple[Phase3Result | None, SolutionScript, float]:
        """Phase 3, then the final: the best on validation of what Phase 3 received and what it
        scored, by one rule however Phase 3 ended (``handlers.mlestar.finalchoice``)."""
        wf = self.wf
        inputs = [r.best_solution.model_copy(update={"score": r.best_score}) for r in phase2_results]
        if not inputs:
            self._skip("phase3", "no Phase 2 results to ensemble")
            return None, best, best_score
        window = self._window("phase3")
        rounds: list[EnsembleAttempt] = []
        race = self._race(window, self.phases.phase3(self._bounded(window), inputs, sink=rounds))
        outcome = await race.settle(await race.wait(window.end_s))
        self._after(outcome)
        rule = score_rule(wf)
        result: Phase3Result | None = outcome.value if outcome.ok else None
        pick: SolutionScript | None = None
        pick_score: float | None = None
        pick_rows: int | None = None
        if result is not None:                # Phase 3's own pick (REQ-P3-025/026)
            pick, pick_score = result.best_ensemble, result.best_ensemble_score
            pick_rows = picked_rows(result)
        elif (kept := best_round(rounds, rule)) is not None:   # failed or cut: its best round so far
            pick, pick_score, pick_rows = kept.solution, kept.score, kept.scored_rows
        final = choose_final(rule, inputs, pick, pick_score, pick_rows)
        if result is not None and final.from_phase3:
            return result, result.best_ensemble.model_copy(update={"score": result.best_ensemble_score}), \
                result.best_ensemble_score
        kept_what = ("Phase 3's best round" if final.from_phase3
                     else f"path-{final.input_index}'s best (no ensemble beat it)")
        if outcome.ok:
            why = f"Phase 3 completed: {kept_what} used, the best solution on validation (REQ-OR-043)"
        elif outcome.status == "failed":      # REQ-OR-041
            why = f"Phase 3 failed: {kept_what} used, the best solution on validation (REQ-OR-041)"
        else:                                 # REQ-OR-030: cut by time or budget
            why = f"Phase 3 {outcome.status.replace('_', ' ')}: {kept_what} used (REQ-OR-030)"
            wf.at("phase3").record(WorkCut(unit="phase3", reason=outcome.error, at_s=wf.now,
                                           where=f"round {len(rounds)}", steps_done=len(rounds),
                                           kept_solution_id=final.solution.solution_id, kept_score=final.score))
        self._fallback("phase3", outcome, final.solution, final.score, why)
        return result, final.solution, final.score

    # --- finalization ----------------------------------------------------------------------

    async def finalize(self, solution: SolutionScript, score: float) -> tuple[SolutionScript, str, dict[str, Any]]:
        wf = self.wf
        window = self.plan.finalization_window(wf.now)
        validation = solution.model_copy(update={"score": score})
        # What the validation script's own run wrote: submitted if the test script fails.
        solution_id = solution_id_of(solution.content)
        own = submission_of(wf, solution_id)
        race = PhaseRace(wf, window, self.phases.finalization(self._bounded(window), validation, score,
                                                              fallback=validation, validation_submission=own),
                         limits=None, ledger=self.ledger, self_reported=True, bracket=SELF_REPORTED[FINALIZATION])
        outcome = await race.settle(await race.wait(window.end_s))
        if outcome.ok:
            value = outcome.value
            info = {"fallback_reason": getattr(value, "fallback_reason", "") or ""}
            return value.final_solution, value.submission_path or "", info
        # REQ-OR-043: finalization failed; keep the validation script (and its own submission).
        kept = "its own submission kept" if own is not None else "no submission"
        self._fallback(FINALIZATION, outcome, validation, score, f"finalization failed: validation solution kept, "
                       f"{kept} (REQ-OR-043)")
        if own is not None:
            record_own_submission(wf.at("final"), solution_id, own)
        return validation, own.path if own is not None else "", {
            "fallback_reason": f"finalization {outcome.status}: {outcome.error}"}

    # --- fallbacks, diagnostics, summaries ---------------------------------------------------

    def _fallback(self, phase: str, outcome: PhaseOutcome, solution: SolutionScript, score: float | None,
                  why: str) -> None:
        wf = self.wf
        sid = wf.record_solution(solution.content, phase=solution.phase, origin="fallback", parents=[],
                                 source_model=solution.source_model)
        wf.record(FallbackUsed(phase=phase, reason=why, solution_id=sid, score=score,
                               detail={"status": outcome.status, "error": outcome.error}))
        warn(wf, why, phase=phase, error=outcome.error)


async def run_mle_star(wf: Workflow, phases: Phases) -> None:
    await Pipeline(wf, phases).run()
