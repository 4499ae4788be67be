"""Phase 1 of MLE-STAR: Algorithm 1 (retrieve, draft, evaluate, merge) + the post-merge checks.

    1   {T_model^i, T_code^i}_{i=1..M} = A_retriever(T_task)
    2-5 for i = 1..M: s_init^i = A_init(T_task, T_model^i, T_code^i); evaluate h(s_init^i)
    6   s_0 = s_init^{π(1)}            (π sorts the candidates best first)
    7   h_best = h(s_0)
    8-17 for i = 2..M: s = A_merger(s_0, s_init^{π(i)});  if h(s) >= h_best: s_0, h_best = s, h(s)
                                                           else: break
    then s_0 = A_data(s_0, T_task) (REQ-P1-030), s_0 = A_leakage(s_0) (REQ-P1-031).

Every candidate and merge goes through the shared evaluation sub-flow (leakage check → run →
debug → fallback). Candidates are generated and evaluated concurrently: their effects are in
flight together, and the result does not depend on the order in which they complete.

Past its soft end (``Deadline``) Phase 1 wraps up: once a candidate has a score the drafts still
running are cut, no merge starts, and s_0 goes through the safety checks as it is; each cut is a
recorded ``WorkCut``. The one draft it waits for is the retriever's first choice (candidate 0, the
model it ranks likeliest to do best on this task; ``FirstChoice``): a quicker, lower-ranked draft
that scores first must not make it give that one up, or the whole run refines a weaker family.
The pipeline bounds that wait (``handlers.mlestar.pipeline``). Phase 1's window, its time mode
and its cuts are kept beside the algorithm, in ``handlers.mlestar.phase1_time``.
"""

from __future__ import annotations

from typing import NamedTuple

from events.agent_outputs import RetrievedModel, RetrieverOutput
from events.base import Event
from events.core import AgentCallCompleted, PhaseCompleted, PhaseStarted
from events.enums import AgentType, SolutionPhase
from events.errors import PipelineError
from events.phase1 import CandidateEvaluated, CandidatesRanked, MergeDecided, ModelsRetrieved, SafetyCheckApplied
from events.pipeline import WorkCut
from events.results import Phase1Result
from events.score import Score
from events.values import EvaluationResult, SolutionScript
from handlers.deadline import UNBOUNDED, Deadline
from handlers.evaluation import EvalPolicy, Evaluated, evaluate_with_retry, replaces_incumbent
from handlers.failure_cause import cause_suffix
from handlers.futures import Task
from handlers.mlestar.bestsofar import rebase_best
from handlers.mlestar.phase1_time import Phase1Time
from handlers.money import budget_stopped
from handlers.safety import check_and_fix_leakage, check_data_usage
from handlers.step_policy import room_for_another, time_driven
from handlers.toolkit import ask, code_of, pacing_deadline, past, score_rule, timeout_for, warn
from handlers.workflow import Workflow

BUDGET_STOPPED = "stopped by the budget: A_init's call was refused or cut for want of money"


async def run_phase1(wf: Workflow, *, window: Deadline = UNBOUNDED) -> Phase1Result:
    """REQ-P1-018: Algorithm 1 as decisions in scope ``phase1``, under the workflow's deadline (the
    extension); ``window``: Phase 1's own, inside it, which bounds the merges (``Phase1Time``)."""
    wf = wf.at("phase1")
    clock = Phase1Time(wf, window)
    wf.record(PhaseStarted(phase="phase1", budget_s=clock.budget_s))
    rule = score_rule(wf)

    models = await retrieve_models(wf, wf.config.num_retrieved_models)           # line 1
    drafts = await draft_candidates(wf, models, clock)                            # lines 2-5
    ranked = rank_drafts(wf, drafts, rule)                                        # line 6 (π)
    best, unmerged = await merge_ranked(wf, clock, rule, drafts, ranked)          # lines 7-17
    best = await post_merge_checks(wf, *best, window=window)                      # A_data, A_leakage
    return phase1_result(wf, models[:len(drafts)], drafts, best, unmerged)


class Incumbent(NamedTuple):
    """s_0, its id and h_best: the running best of the merges."""

    solution: SolutionScript
    solution_id: str
    score: float


async def merge_ranked(wf: Workflow, clock: Phase1Time, rule: Score, drafts: list[Evaluated],
                       ranked: list[int]) -> tuple[Incumbent, list[SolutionScript]]:
    """Lines 7-17: s_0 is the best candidate; each next one in π is merged into it, and the merge
    becomes s_0 when it scores at least h_best, else the merges end. Returns s_0 and the
    candidates no merge reached because Phase 1's time ended (``Phase1Time.merges_end``)."""
    first = drafts[ranked[0]]
    assert first.score is not None
    best = Incumbent(first.solution, first.solution_id, first.score)             # line 7
    for n, i in enumerate(ranked[1:]):                                           # lines 8-17
        if clock.merges_end(n, len(ranked) - 1, best.solution_id, best.score):
            return best, [drafts[j].solution for j in ranked[1 + n:]]
        merged = await clock.timed_merge(merge_solutions(clock.own, best.solution, best.solution_id, drafts[i], i))
        accepted = merge_decision(wf, rule, merged, i, best.solution_id, best.score)
        if accepted is None:
            break                                                                # REQ-P1-027/028
        best = accepted
    return best, []


def phase1_result(wf: Workflow, models: list[RetrievedModel], drafts: list[Evaluated], best: Incumbent,
                  unmerged: list[SolutionScript]) -> Phase1Result:
    """Phase 1's result (s_0 carrying h_best), recorded as its ``PhaseCompleted``."""
    result = Phase1Result(retrieved_models=models, candidate_solutions=[ev.solution for ev in drafts],
                          candidate_scores=candidate_scores(drafts),
                          initial_solution=best.solution.model_copy(update={"score": best.score}),
                          initial_score=best.score, unmerged=unmerged)
    wf.record(PhaseCompleted(phase="phase1", result={"initial_solution_id": best.solution_id,
                                                     "initial_score": best.score,
                                                     "candidate_scores": result.candidate_scores}))
    return result


def candidate_scores(evaluated: list[Evaluated]) -> list[float | None]:
    """h(s_init^i) for each candidate; None for one that has no score."""
    return [ev.score if ev.ok else None for ev in evaluated]


def rank_drafts(wf: Workflow, evaluated: list[Evaluated], rule: Score) -> list[int]:
    """Line 6: π over the candidates, recorded; a Phase 1 where no candidate has a score fails."""
    scores = candidate_scores(evaluated)
    ranked = rank_candidates(scores, rule)
    wf.record(CandidatesRanked(order=ranked, scores=[s for s in (scores[i] for i in ranked) if s is not None],
                               excluded=[i for i, s in enumerate(scores) if s is None]))
    if not ranked:
        stopped = sum(1 for ev in evaluated if ev.result.error_traceback == BUDGET_STOPPED)
        raise PipelineError(f"Phase 1 failed: all {len(evaluated)} candidates produced execution errors"
                            f"{cause_suffix(wf, evaluated)}" if not stopped
                            else f"Phase 1 failed: no candidate has a score ({stopped} of {len(evaluated)} stopped by "
                                 "the budget before they had code)",
                            {"candidate_errors": [ev.result.error_traceback or ev.result.stderr[-500:]
                                                  for ev in evaluated]})
    return ranked


def merge_decision(wf: Workflow, rule: Score, merged: Evaluated | None, i: int, s0_id: str,
                   h_best: float) -> Incumbent | None:
    """Lines 10-16: the merge with candidate ``i`` becomes s_0 when it scores at least h_best
    (by more than the validation noise, ``replaces_incumbent``); recorded either way. Returns
    the new s_0, its id and score, or None (the merges end)."""
    if merged is not None and merged.ok and merged.score is not None and replaces_incumbent(
            wf, rule, merged.score, merged.solution_id, h_best, s0_id):
        wf.record(MergeDecided(candidate_index=i, accepted=True, score=merged.score, best=merged.score,
                               solution_id=merged.solution_id))
        return Incumbent(merged.solution, merged.solution_id, merged.score)
    wf.record(MergeDecided(candidate_index=i, accepted=False, score=merged.score if merged else None,
                           best=h_best, solution_id=merged.solution_id if merged else "",
                           reason=merge_rejection(rule, merged, h_best)))
    return None


def merge_rejection(rule: Score, merged: Evaluated | None, h_best: float) -> str:
    """Why a merge did not become s_0."""
    if merged is None:
        return "merger gave no code"
    if not merged.ok:
        return "merged script failed"
    if rule.at_least(merged.score, h_best):
        return "better by less than the validation noise"
    return "no improvement"


async def retrieve_models(wf: Workflow, M: int) -> list[RetrievedModel]:
    """REQ-P1-019: A_retriever; empty entries dropped, fewer than M warned, none is fatal."""
    reply = await ask(wf, AgentType.retriever, {"task_description": wf.start.task.description, "M": M},
                      name="retriever")
    raw: list[RetrievedModel] = []
    if isinstance(reply, AgentCallCompleted) and reply.structured is not None:
        try:
            raw = list(RetrieverOutput.model_validate(reply.structured).models)
        except ValueError as exc:
            warn(wf, "retriever output did not validate", error=str(exc).splitlines()[0])
    usable = [m for m in raw if m.model_name.strip() and m.example_code.strip()][:M]
    wf.record(ModelsRetrieved(models=usable, requested=M, dropped_empty=len(raw) - len([
        m for m in raw if m.model_name.strip() and m.example_code.strip()])))
    if not usable:
        raise PipelineError("Phase 1 failed: the retriever returned no usable models",
                            {"retriever_error": getattr(reply, "error", None) or (getattr(reply, "text", "") or "")[:500]})
    if len(usable) < M:
        warn(wf, f"retriever returned {len(usable)} usable models, fewer than M={M}")
    return usable


async def draft_candidates(wf: Workflow, models: list[RetrievedModel], clock: Phase1Time) -> list[Evaluated]:
    """Lines 2-5 for every model, concurrently, in model order whatever order they finish in.

    Once Phase 1's soft end has passed, some candidate has a score and the retriever's first
    choice has settled, the drafts still running are cut (each recorded as a candidate without a
    score): the pipeline lets a Phase 1 run past its window to get *one* solution, or the first
    choice's, not to finish them all while Phase 2 and Phase 3 wait. Before the soft end, while no
    candidate has a score, or while the first choice runs, every draft runs to its end.

    Time mode (``handlers.step_policy``): the models are drafted in order, as many at once as
    evaluations may run, and a further draft starts only while Phase 1's window holds one more
    (as long as the drafts so far took, ``clock.drafts``) and the first merge after it (as long
    again); while none has a score, one more draft in the extension's window. The list returned
    covers the drafted ones."""
    drafts = _Drafts(wf, models, clock)
    while True:
        drafts.start_more()
        pending = [t for t in drafts.tasks if not t.done]
        if not pending or (past(clock.paced) and drafts.scored() and drafts.tasks[0].done):
            break
        await wf.first(*pending)
    evaluated = await drafts.settle()
    clock.drafted(models, evaluated)
    return evaluated


class _Drafts:
    """The candidates' tasks: started all at once, or in time mode while the window holds one
    more; settled in model order, the ones still running cut."""

    def __init__(self, wf: Workflow, models: list[RetrievedModel], clock: Phase1Time) -> None:
        self.wf, self.models, self.timer = wf, models, clock.drafts
        self.timed = time_driven(wf.config)
        self.window = pacing_deadline(clock.paced)   # Phase 1's soft end; the extension's: ``wf``'s
        self.tasks: list[Task] = []
        self.at_once = min(len(models), wf.config.max_concurrent_evaluations) if self.timed else len(models)
        for i in range(self.at_once):
            self._spawn(i)
        first_choice(wf).running = bool(self.tasks)

    def _spawn(self, i: int) -> None:
        draft = self._timed(i) if self.timed else generate_candidate(self.wf, i, self.models[i])
        self.tasks.append(self.wf.spawn(draft, f"candidate-{i}"))

    async def _timed(self, i: int) -> Evaluated:
        started = self.wf.now
        ev = await generate_candidate(self.wf, i, self.models[i])
        self.timer.took(started, self.wf.now)
        return ev

    def scored(self) -> bool:
        return any(t.done and t.result.error is None and t.result.value.ok for t in self.tasks)

    def start_more(self) -> None:
        """Time mode: start drafts while fewer than ``at_once`` run and the window holds one more.
        While none has a score, further drafts may use the extension (the workflow's deadline);
        once one has, a draft leaves Phase 1's window room for the first merge after it (a call
        and a run, as a draft is): the blend of the two best is worth more than a later draft."""
        if not self.timed:
            return
        wf, timer = self.wf, self.timer
        room, step_s = (self.window, 2 * timer.estimate_s) if self.scored() else (pacing_deadline(wf), timer.estimate_s)
        while (len(self.tasks) < len(self.models) and sum(not t.done for t in self.tasks) < self.at_once
               and room_for_another(room, wf.now, step_s)):
            self._spawn(len(self.tasks))

    async def settle(self) -> list[Evaluated]:
        """Every draft's candidate in model order; the drafts still running are cut and recorded
        as candidates without a score."""
        wf, models = self.wf, self.models
        cut = [i for i, t in enumerate(self.tasks) if not t.done]
        for i in cut:
            wf.cancel(self.tasks[i], "phase1 deadline reached with a scored candidate")
        evaluated: list[Evaluated] = []
        for i, t in enumerate(self.tasks):
            if i not in cut:
                evaluated.append(await t)
                continue
            wf.record(CandidateEvaluated(index=i, model_name=models[i].model_name, solution_id=None, score=None,
                                         error="cut: Phase 1's deadline passed while it was running"))
            evaluated.append(unevaluated(models[i], "cut at Phase 1's deadline"))
        if cut:
            k = rank_candidates(candidate_scores(evaluated), score_rule(wf))[0]  # s_0-to-be
            wf.record(WorkCut(unit="phase1", reason="phase1 deadline reached", at_s=wf.now,
                              where=f"candidates {', '.join(map(str, cut))}", steps_done=len(self.tasks) - len(cut),
                              kept_solution_id=evaluated[k].solution_id, kept_score=evaluated[k].score))
        return evaluated


FIRST_CHOICE = "mle-star/phase1-first-choice"


class FirstChoice:
    """Whether the retriever's first choice (candidate 0) is being drafted: from its spawn
    (``draft_candidates``) until its ``CandidateEvaluated`` (scored, failed or cut) is recorded."""

    def __init__(self) -> None:
        self.running = False

    def observe(self, event: Event) -> None:
        if isinstance(event, CandidateEvaluated) and event.index == 0:
            self.running = False


def first_choice(wf: Workflow) -> FirstChoice:
    """The run's tracker, made (and set to observe every later decision) on first use: the
    pipeline asks before Phase 1 starts."""
    def make() -> FirstChoice:
        tracker = FirstChoice()
        wf.observe(tracker.observe)
        return tracker
    return wf.shared(FIRST_CHOICE, make)


def unevaluated(model: RetrievedModel, why: str) -> Evaluated:
    """A candidate that never ran (A_init gave no code, or it was cut): no score (REQ-P1-021)."""
    failed = SolutionScript(content="", phase=SolutionPhase.init, is_executable=False, source_model=model.model_name)
    empty = EvaluationResult(stdout="", stderr="", exit_code=-1, duration_seconds=0.0, is_error=True,
                             error_traceback=why)
    return Evaluated(solution=failed, solution_id="", result=empty)


async def generate_candidate(wf: Workflow, i: int, model: RetrievedModel) -> Evaluated:
    """Lines 2-5 for one model: A_init, then the evaluation sub-flow. A failed draft is a
    candidate with no score (REQ-P1-021), never an aborted phase."""
    reply = await ask(wf, AgentType.init, {"task_description": wf.start.task.description,
                                            "model_name": model.model_name, "example_code": model.example_code},
                      name=f"candidate-{i}/init")
    if budget_stopped(reply):
        wf.record(CandidateEvaluated(index=i, model_name=model.model_name, solution_id=None, score=None,
                                     error=BUDGET_STOPPED))
        return unevaluated(model, BUDGET_STOPPED)
    code = code_of(reply)
    if code is None:
        warn(wf, f"candidate {i} ({model.model_name}): A_init gave no code", error=getattr(reply, "error", None))
        wf.record(CandidateEvaluated(index=i, model_name=model.model_name, solution_id=None, score=None,
                                     error="no code from A_init"))
        return unevaluated(model, "A_init gave no code")
    draft = SolutionScript(content=code, phase=SolutionPhase.init, source_model=model.model_name)
    # The workflow's deadline, not Phase 1's soft end: a candidate may use the extension (module doc).
    ev = await evaluate_with_retry(wf, draft, EvalPolicy.scored("candidate", timeout_for(wf)),
                                   name=f"candidate-{i}", origin="init",
                                   detail={"model_name": model.model_name, "candidate": i})
    if not ev.ok:
        first = (ev.result.error_traceback or ev.result.stderr or "no score printed").strip().splitlines()
        warn(wf, f"candidate {i} ({model.model_name}) failed", error=(first[-1] if first else ""))
    wf.record(CandidateEvaluated(index=i, model_name=model.model_name, solution_id=ev.solution_id,
                                 score=ev.score if ev.ok else None,
                                 error="" if ev.ok else (ev.result.error_traceback or "no score")[-300:]))
    return ev


def rank_candidates(scores: list[float | None], rule: Score) -> list[int]:
    """π of line 6: indices of scored candidates, best first; ties keep draft order (stable),
    so the ranking is the same whatever order the evaluations finished in (REQ-P1-023)."""
    return rule.ranked(scores)


async def merge_solutions(wf: Workflow, s0: SolutionScript, s0_id: str, reference: Evaluated,
                          i: int) -> Evaluated | None:
    """Line 9: s = A_merger(s_0, s_init^{π(i)}), evaluated through the sub-flow under the
    workflow's deadline (Phase 1's own window)."""
    reply = await ask(wf, AgentType.merger, {"base_code": s0.content, "reference_code": reference.solution.content},
                      name=f"merge-{i}/merger")
    code = code_of(reply)
    if code is None:
        warn(wf, f"merge with candidate {i}: A_merger gave no code", error=getattr(reply, "error", None))
        return None
    merged = SolutionScript(content=code, phase=SolutionPhase.merged, source_model=s0.source_model)
    return await evaluate_with_retry(wf, merged, EvalPolicy.scored("merge", timeout_for(wf)),
                                     name=f"merge-{i}", origin="merge",
                                     parents=[s0_id, reference.solution_id], detail={"candidate": i})


async def post_merge_checks(wf: Workflow, s0: SolutionScript, s0_id: str, h_best: float, *,
                            window: Deadline = UNBOUNDED) -> Incumbent:
    """REQ-P1-030/031: A_data once (fall back if its version breaks), then A_leakage. The checks
    run, and are debugged, under the workflow's deadline; their timeouts are sized to the soft end
    of ``window`` (Phase 1's own: the time to it, floored, never past the workflow's hard end)."""
    sized = wf.within(Deadline(window.soft_s))
    revised = await check_data_usage(wf, s0, name="data-check")
    if revised.content != s0.content:
        ev = await evaluate_with_retry(wf, revised, EvalPolicy.scored("data_usage", timeout_for(sized)),
                                       name="data-check", origin="data_usage",
                                       parents=[s0_id], fallback=s0.model_copy(update={"score": h_best}))
        if ev.ok and not ev.fell_back and ev.score is not None:
            s0, s0_id, h_best = ev.solution, ev.solution_id, ev.score
        wf.record(SafetyCheckApplied(check="data", changed=not ev.fell_back and ev.ok, kept_solution_id=s0_id,
                                     score=h_best, fell_back=ev.fell_back or not ev.ok))
    else:
        wf.record(SafetyCheckApplied(check="data", changed=False, kept_solution_id=s0_id, score=h_best))

    fixed = await check_and_fix_leakage(wf, s0, name="final-leakage")
    if fixed.content != s0.content:
        # A corrected script that no longer runs is worse than none: keep the checked s_0 then.
        ev = await evaluate_with_retry(wf, fixed, EvalPolicy.checked("leakage_fix", timeout_for(sized)),
                                       name="final-leakage", origin="leakage_fix",
                                       parents=[s0_id], fallback=s0.model_copy(update={"score": h_best}))
        if ev.ok and not ev.fell_back and ev.score is not None:
            s0, s0_id, h_best = ev.solution, ev.solution_id, ev.score
        wf.record(SafetyCheckApplied(check="leakage", changed=not ev.fell_back and ev.ok, kept_solution_id=s0_id,
                                     score=h_best, fell_back=ev.fell_back or not ev.ok))
    else:
        wf.record(SafetyCheckApplied(check="leakage", changed=False, kept_solution_id=s0_id, score=h_best))
    rebase_best(wf, s0_id, h_best)  # candidates and versions before the checks are no longer current
    return Incumbent(s0, s0_id, h_best)


async def phase1_only(wf: Workflow) -> None:
    """A strategy that runs Phase 1 alone (the library's ``run_phase1`` drives it)."""
    result = await run_phase1(wf)
    wf.complete(submission_path="", best_score=result.initial_score,
                result={"phase1": result.model_dump(mode="json")})
