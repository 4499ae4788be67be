"""Phase 2: L parallel paths of ablation-guided targeted refinement (Algorithm 2; REQ-P2O, REQ-OR-013..023).

One path, with Algorithm 2 open beside it:

    s_t = s_final = s_0 ; h_best = h(s_0) ; T_abl = [] ; C = []          # L1-3
    for t in 0..T-1:                                                     # L4
        a_t   = ABLATION(s_t, T_abl)                                     # L5  write_ablation
        r_t   = run(a_t)   (never scored; debugged when it crashes)      # L6  run_ablation
        sum_t = SUMMARIZE(a_t, r_t)                                      # L7  summarize
        c_t, p_0 = EXTRACTOR(sum_t, s_t, C)   (c_t verbatim in s_t)      # L8  extract_block
        inner = INNER_LOOP(s_t, c_t, p_0, h_best)                        # L9-25 (phase2_inner)
        if inner.best >= h_best: s_t = s_final = inner.best_solution     # L21-23
        T_abl.append(sum_t) ; C.append(c_t)                              # L26-27
    return s_final                                                       # L29

Decisions are events (``events.phase2``): AblationSummarized, BlockExtracted /
BlockExtractionFailed, RefinementAttempted, OuterStepCompleted, PathFailed; each path runs in
scope ``phase2/path-<i>`` with agent session ``path-<i>``, bracketed by PhaseStarted/Completed.

Choices where the specs conflict (digest 05 §10):
* A failed ablation (no code, or still crashing after debugging) puts ``""`` in T_abl
  (REQ-P2O-021) and skips the summarizer; the extractor is told in words that the study failed,
  since an empty summary would be a hole in its prompt (§10.2). Empty summaries are left out
  of later ablation prompts.
* Every step appends to T_abl and C, so ``len == T`` and ``C[t].outer_step == t`` always
  (REQ-P2O-044). A skipped step appends its real summary (still useful to the next ablation)
  and a CodeBlock with empty content, which is never shown to the extractor as "already
  improved" (§10.3).
* An unparseable extractor answer is re-asked once (REQ-P2O-034); a block not in the script
  goes down the REQ-P2O-018 ladder (normalised match, <= 2 corrective re-asks, the list's
  other plans). Both budgets are separate: at most 4 extractor calls per step.
* The time budget is checked before each outer step (and each inner attempt): past the
  deadline (the workflow's: the pipeline gives Phase 2 its window) the remaining steps are recorded as skipped and the path keeps its best so far.
* Time mode (``handlers.step_policy``): T is an upper bound; a step starts while the path's
  window holds one more (its measured overhead and one attempt), each step's inner loop gets an
  even part of what is left for as many steps as fit, and the records are the steps that ran.
  The ablation study (lines 5-7) lives in ``handlers.mlestar.phase2_ablation``, the extractor
  and its recovery ladder in ``handlers.mlestar.phase2_extract``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from events.core import PhaseCompleted, PhaseStarted
from events.enums import SolutionPhase
from events.errors import PipelineError
from events.phase2 import (
    BlockExtracted,
    BlockExtractionFailed,
    OuterStepCompleted,
    PathFailed,
)
from events.pipeline import WorkCut
from events.results import Phase2Result, RefinementAttempt
from events.score import Ties
from events.values import CodeBlock, SolutionScript
from handlers.deadline import Deadline, DeadlineReached
from handlers.futures import Cancelled
from handlers.mlestar.phase2_ablation import (
    ABLATION_FAILED_NOTE,
    AUTO_SUMMARY_PREFIX,
    ablation_summary,
    ablation_timeout,
)
from handlers.mlestar.phase2_extract import Extraction, NoBlock, extract_block, parse_extractor
from handlers.mlestar.phase2_inner import (
    locate_block,
    path_budget_s,
    run_phase2_inner_loop,
    validate_code_block,
)
from handlers.step_policy import StepTimer, agent_and_eval_prior, room_for_another, steps_that_fit, time_driven
from handlers.toolkit import info, pacing_deadline, past, score_rule, soft_budget_s, warn, with_score
from handlers.workflow import Workflow

# --- §6-7: the outer loop of one path ------------------------------------------------------


@dataclass
class PathProgress:
    """What a path has reached so far; survives the path's cancellation (digest 05 §10.10), so a
    cut path still hands its own best and its step history to Phase 3 (REQ-OR-026/043)."""

    best_score: float
    best_solution_id: str
    steps_done: int = 0
    best_solution: SolutionScript | None = None
    step: int = 0                                     # the outer step under way
    summaries: list[str] = field(default_factory=list)
    blocks: list[CodeBlock] = field(default_factory=list)
    history: list[dict[str, Any]] = field(default_factory=list)

    def keep_best(self, solution: SolutionScript, score: float, solution_id: str) -> None:
        self.best_solution, self.best_score, self.best_solution_id = solution, score, solution_id

    def partial_result(self, reason: str) -> Phase2Result:
        """The path's result as of now: its best so far and the steps it completed, plus one
        record saying where it was cut."""
        assert self.best_solution is not None
        cut = {"outer_step": self.step, "cut": True, "reason": reason, "best_score_after_step": self.best_score}
        return Phase2Result(ablation_summaries=list(self.summaries), refined_blocks=list(self.blocks),
                            best_solution=with_score(self.best_solution, self.best_score, executable=True),
                            best_score=self.best_score, step_history=[*self.history, cut])


def _step(t: int, summary: str, block: str, plan: str, attempts: list[Any], best: float,
          skipped: bool, reason: str | None) -> dict[str, Any]:
    """REQ-P2O-030 step record (plus the reason of a skip)."""
    return {"outer_step": t, "ablation_summary": summary, "code_block": block, "plan": plan,
            "inner_loop_attempts": attempts, "best_score_after_step": best, "was_skipped": skipped,
            "skip_reason": reason}


def step_part_end(wf: Workflow, window: Deadline, step_start: float, overhead: StepTimer, attempt: StepTimer,
                  steps_left: int) -> float:
    """Time mode: where this outer step's inner loop ends: its even part of the time left in the
    path's window, for as many steps as fit in it (its overhead so far measured first)."""
    overhead.took(step_start, wf.now)
    left = window.soft_left(step_start)
    n = steps_that_fit(left, overhead.estimate_s + wf.config.inner_loop_steps * attempt.estimate_s, steps_left)
    return step_start + left / n


async def block_to_refine(wf: Workflow, t: int, s_t: SolutionScript, summary: str, blocks: list[CodeBlock],
                          session_key: str | None) -> tuple[str, str, str | None]:
    """Line 8: the block to refine and its first plan, verbatim in s_t, recorded; the reason to
    skip the step instead when the extractor found none."""
    found = await extract_block(wf, t, s_t, summary or ABLATION_FAILED_NOTE,
                                [cb.content for cb in blocks if cb.content], session_key)
    if isinstance(found, NoBlock):
        wf.record(BlockExtractionFailed(outer_step=t, reason=found.reason, extractor_calls=found.calls))
        return "", "", found.reason
    wf.record(BlockExtracted(outer_step=t, code_block=found.code_block, plan=found.plan, match=found.match,
                             extractor_calls=found.calls, plan_index=found.plan_index))
    return found.code_block, found.plan, None


def close_step(wf: Workflow, progress: PathProgress, t: int, summary: str, block: str, plan: str,
               attempts: list[RefinementAttempt], skip: str | None,
               best: tuple[SolutionScript, float, str]) -> None:
    """Lines 26-27 and the step's record: T_abl and C grow by one whatever happened
    (P2O-022/023/044), the path's progress keeps ``best`` (s_final, h_best and its id), and
    OuterStepCompleted says it all."""
    if skip is not None:
        warn(wf, "outer step skipped", outer_step=t, reason=skip)
    _, h_best, best_id = best
    progress.summaries.append(summary)
    progress.blocks.append(CodeBlock(content=block, outer_step=t))
    progress.history.append(_step(t, summary, block, plan, list(attempts), h_best, skip is not None, skip))
    progress.keep_best(*best)
    progress.steps_done = t + 1
    wf.record(OuterStepCompleted(outer_step=t, ablation_summary=summary, code_block=block, plan=plan,
                                 inner_loop_attempts=[a.model_dump(mode="json") for a in attempts],
                                 best_score_after_step=h_best, best_solution_id=best_id,
                                 was_skipped=skip is not None, skip_reason=skip))


async def run_phase2_outer_loop(wf: Workflow, initial_solution: SolutionScript, initial_score: float, *,
                                session_key: str | None = None,
                                progress: PathProgress | None = None) -> Phase2Result:
    """REQ-P2O-019 in the scope of ``wf``, under its deadline (the path's). Never returns a worse
    solution than it received. ``progress`` (optional) is kept up to date for a caller that may
    cancel the loop."""
    T, rule = wf.config.outer_loop_steps, score_rule(wf)
    s_t = s_final = initial_solution                                     # s_0, never mutated (P2O-043)
    h_best, best_id = initial_score, initial_solution.solution_id
    budget_s = path_budget_s(wf)                                         # fixed at the start (see timeouts)
    progress = progress if progress is not None else PathProgress(h_best, best_id)
    progress.keep_best(s_final, h_best, best_id)
    T_abl, C, history = progress.summaries, progress.blocks, progress.history   # shared with a cut

    # Time mode (handlers.step_policy): T is an upper bound; a step starts while the path's window
    # holds one more (its overhead and one attempt), and its inner loop fills its part of the rest.
    timed, window = time_driven(wf.config), pacing_deadline(wf)
    overhead = StepTimer(prior_s=agent_and_eval_prior(wf.measured, 3))   # ablation, its run, summary, extractor
    attempt = StepTimer(prior_s=agent_and_eval_prior(wf.measured, 2))    # planner, coder, a run
    for t in range(T):
        progress.step = t
        summary, block, plan, attempts, skip = "", "", "", [], None
        step_start, step_end = wf.now, None
        step_s = overhead.estimate_s + attempt.estimate_s
        if timed and not room_for_another(window, wf.now, step_s, wf.finalize_point(attempt.estimate_s)):
            info(wf, "time mode: no time for another outer step in the path's window", steps_done=t,
                 left_s=window.soft_left(wf.now), step_s=step_s)
            break
        if past(wf):
            skip = "deadline reached"
        else:
            info(wf, "outer step start", outer_step=t, h_best=h_best, summaries=len(T_abl))
            summary = await ablation_summary(wf, t, s_t, T_abl, best_id, session_key)  # L5-7
            block, plan, skip = await block_to_refine(wf, t, s_t, summary, C, session_key)  # L8
            if skip is None:
                if timed:
                    step_end = step_part_end(wf, window, step_start, overhead, attempt, T - t)
                # L9-25: K attempts on the ORIGINAL block of s_t.
                inner = await run_phase2_inner_loop(wf, s_t, CodeBlock(content=block, outer_step=t), plan, h_best,
                                                    session_key=session_key,
                                                    budget_s=budget_s, on_best=progress.keep_best,
                                                    step_end_s=step_end, attempt_timer=attempt if timed else None)
                attempts = inner.attempts
                # Compare scores, not inner.improved (strict): ties move s_t on (REQ-P2O-027).
                if rule.at_least(inner.best_score, h_best):
                    s_t = s_final = inner.best_solution
                    h_best, best_id = inner.best_score, inner.best_solution.solution_id
        close_step(wf, progress, t, summary, block, plan, attempts, skip, (s_final, h_best, best_id))  # L26-27
    info(wf, "outer loop complete", steps=len(history), h_best=h_best, best_solution_id=best_id)
    return Phase2Result(ablation_summaries=T_abl, refined_blocks=C, best_score=h_best, step_history=history,
                        best_solution=with_score(s_final, h_best, executable=True))


# --- REQ-OR-013..023/040: L paths in parallel ----------------------------------------------


def failed_path_result(solution: SolutionScript, score: float, error: str) -> Phase2Result:
    """REQ-OR-040: a failed path contributes the Phase 1 solution, flagged ``failed``."""
    return Phase2Result(ablation_summaries=[], refined_blocks=[],
                        best_solution=with_score(solution, score, executable=True), best_score=score,
                        step_history=[{"failed": True, "error": error}])


async def run_phase2_path(wf: Workflow, path_index: int, solution: SolutionScript, score: float, *,
                          sink: list[Phase2Result | None] | None = None) -> Phase2Result:
    """One path in its own scope and agent session (REQ-OR-020/021); its failure stays its own
    (REQ-OR-022): an unexpected exception gives the Phase 1 solution back with ``failed=True``.
    A cancelled path (the caller's guard timer) records how far it got, then lets the
    cancellation through."""
    pwf = wf.at(f"phase2/path-{path_index}")
    pwf.record(PhaseStarted(phase=pwf.scope, budget_s=soft_budget_s(pwf)))   # REQ-OR-026
    start = solution.model_copy(deep=True)                           # the path's own copy (REQ-OR-020)
    progress = PathProgress(score, solution.solution_id)
    try:
        result = await run_phase2_outer_loop(pwf, start, score, session_key=f"path-{path_index}",
                                             progress=progress)
        failed = False
    except Cancelled as exc:
        # Cut (the phase's guard timer, the budget, or a request past the hard end): the path
        # keeps its own best so far and the steps it completed (REQ-OR-026/043).
        partial = progress.partial_result(str(exc))
        if sink is not None:
            sink[path_index] = partial
        pwf.record(WorkCut(unit=pwf.scope, reason=str(exc), at_s=wf.now, where=f"outer step {progress.step}",
                           steps_done=progress.steps_done, kept_solution_id=progress.best_solution_id,
                           kept_score=progress.best_score))
        pwf.record(PhaseCompleted(phase=pwf.scope, result={
            "failed": False, "cancelled": True, "reason": str(exc), "best_score": progress.best_score,
            "best_solution_id": progress.best_solution_id, "steps_done": progress.steps_done}))
        if isinstance(exc, DeadlineReached):
            return partial      # the path ran into its own hard end: it ends here, with what it has
        raise
    except Exception as exc:
        error = f"{type(exc).__name__}: {exc}"
        pwf.record(PathFailed(path=path_index, error=error, fallback_solution_id=solution.solution_id,
                              fallback_score=score))
        warn(pwf, "Phase 2 path failed; the Phase 1 solution takes its place (REQ-OR-040)", error=error)
        result, failed = failed_path_result(solution, score, error), True
    if sink is not None:
        sink[path_index] = result
    pwf.record(PhaseCompleted(phase=pwf.scope, result={
        "failed": failed, "best_score": result.best_score, "best_solution_id": result.best_solution.solution_id,
        "improved": score_rule(wf).improves(result.best_score, score)}))
    return result


async def run_phase2(wf: Workflow, phase1_solution: SolutionScript, phase1_score: float, *,
                     sink: list[Phase2Result | None] | None = None,
                     unmerged: Sequence[SolutionScript] = ()) -> list[Phase2Result]:
    """REQ-OR-013/018/019/023: L paths from the Phase 1 solution (above the first, from the
    candidates it left unmerged, ``unmerged``), concurrently, each under the workflow's deadline
    (Phase 2's window: every path gets the whole of it); results in path order, one per
    path (a failed path's slot holds its start). The caller brackets the phase itself
    (PhaseStarted/Completed "phase2"); each path brackets its own.
    ``sink`` (optional, L slots): each path's result lands in its slot as soon as the path ends,
    or is cut, so a caller that cancels Phase 2 still has every path's own result.
    ``unmerged``: Phase 1's scored candidates that its time held no merge for, best first. Path
    i > 0 starts from the i-th of them, where there is one: a merge would have blended those
    models into s_0, and L paths refining s_0 alone would leave Phase 3 only variants of one model
    to blend, where a blend of different model families is what an ensemble gains from."""
    starts = [(phase1_solution, phase1_score)]
    for candidate in unmerged[:wf.config.num_parallel_solutions - 1]:
        if candidate.score is not None:
            starts.append((candidate, candidate.score))
    for i, (start, _) in enumerate(starts):
        # Parents must exist in the log; a no-op when Phase 1 recorded the script already.
        wf.at("phase2").record_solution(start.content, phase=start.phase, origin="phase1", parents=[],
                                        source_model=start.source_model)
        if i:
            info(wf.at("phase2"), f"path-{i} starts from a candidate Phase 1 had no time to merge",
                 path=i, solution_id=start.solution_id, score=start.score, source_model=start.source_model)
    return await wf.gather(*(run_phase2_path(wf, i, *starts[i if i < len(starts) else 0], sink=sink)
                             for i in range(wf.config.num_parallel_solutions)))


def phase2_result_json(result: Phase2Result) -> dict[str, Any]:
    """A Phase2Result as JSON for the log; ``created_at`` (wall clock) is left out so the
    decision stays identical on replay."""
    return result.model_dump(mode="json", exclude={"best_solution": {"created_at"}})


def best_of(wf: Workflow, results: list[Phase2Result], ties: Ties) -> Phase2Result | None:
    """The path whose result scored best; None when no path has a usable score. Each caller
    names its tie rule: ``phase2_only`` keeps the first of equal paths, the pipeline the last
    (REQ-OR-041's ``>=``), as their recorded runs decided."""
    return score_rule(wf).best(results, lambda r: r.best_score, ties)


async def phase2_only(wf: Workflow) -> None:
    """Strategy "handlers.mlestar.phase2:phase2_only": Phase 2 alone, from ``params.initial_solution``
    (script content) and ``params.initial_score``; the run's whole time limit is its budget."""
    params = wf.start.params
    if "initial_solution" not in params or "initial_score" not in params:
        raise PipelineError("phase2_only needs params 'initial_solution' (script) and 'initial_score'",
                            {"params": sorted(params)})
    score = float(params["initial_score"])
    s0 = SolutionScript(content=str(params["initial_solution"]), phase=SolutionPhase.merged, score=score)
    wf.record_solution(s0.content, phase=s0.phase, origin="input", parents=[], detail={"score": score})
    wf = wf.within(Deadline(float(wf.config.time_limit_seconds)))    # its soft end: the time limit
    wf.record(PhaseStarted(phase="phase2", budget_s=soft_budget_s(wf)))
    results = await run_phase2(wf, s0, score)
    found = best_of(wf, results, Ties.FIRST_WINS)
    best = found if found is not None else results[0]
    wf.record(PhaseCompleted(phase="phase2", result={
        "best_scores": [r.best_score for r in results],
        "failed_paths": [i for i, r in enumerate(results) if any(h.get("failed") for h in r.step_history)]}))
    wf.complete(submission_path="", best_score=best.best_score,
                result={"phase2_results": [phase2_result_json(r) for r in results],
                        "best_solution_id": best.best_solution.solution_id})


__all__ = [
    "ABLATION_FAILED_NOTE",
    "AUTO_SUMMARY_PREFIX",
    "Extraction",
    "NoBlock",
    "PathProgress",
    "ablation_timeout",
    "best_of",
    "extract_block",
    "failed_path_result",
    "locate_block",
    "parse_extractor",
    "phase2_only",
    "phase2_result_json",
    "run_phase2",
    "run_phase2_outer_loop",
    "run_phase2_path",
    "validate_code_block",
]
