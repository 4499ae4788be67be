"""MLE-STAR's run-wide best-so-far: the fallback when a phase is cut or fails (REQ-OR-030/043).

A fold of the strategy's own ``SolutionEvaluated`` decisions (``Workflow.observe``), kept per
run (``Workflow.shared``), by the one rule of the run's best (``replay.best``: executable, scored,
later ties winning, ablation printouts never counting) that the CLI's best score folds too.

It ranges only over solutions that are still current: when Phase 1's safety checks replace the
candidates and merges by the checked s_0 (REQ-P1-030/031), :func:`rebase_best` restarts it from
s_0, so no fallback can bring back a version a check replaced. (The CLI's ``best_score`` is the
best ever evaluated, ``replay.state``; it differs from this one exactly by such rebases.)

Beside it, a fold of Phase 1's drafts and merges (``track_drafts``): in time mode a Phase 1 cut
by its deadline still hands its paths above the first the drafts no merge reached
(``drafts_left_out``).
"""

from __future__ import annotations

from events.base import Event
from events.core import SolutionEvaluated
from events.phase1 import CandidateEvaluated, MergeDecided
from events.score import Score
from events.values import SolutionScript
from handlers.workflow import Workflow
from replay.best import BestEvaluated

KEY = "mle-star/best-so-far"
DRAFTS_KEY = "mle-star/phase1-drafts"


class BestSoFar:
    def __init__(self, rule: Score) -> None:
        self.rule = rule
        self.current = BestEvaluated()

    @property
    def best(self) -> tuple[float, str] | None:
        """(score, solution_id) of the best still-current evaluation, or None."""
        score, sid = self.current.score, self.current.solution_id
        return None if score is None or sid is None else (score, sid)

    def observe(self, event: Event) -> None:
        if isinstance(event, SolutionEvaluated):
            self.current.offer(self.rule, solution_id=event.solution_id, score=event.score,
                               is_executable=event.is_executable, purpose=event.purpose,
                               scored_rows=event.scored_rows)


def track_best(wf: Workflow) -> BestSoFar:
    """The run's tracker, made (and set to observe every later decision) on first use: a
    strategy calls this before its first evaluation."""
    def make() -> BestSoFar:
        tracker = BestSoFar(Score(wf.start.task.metric_direction))
        wf.observe(tracker.observe)
        return tracker
    return wf.shared(KEY, make)


def rebase_best(wf: Workflow, solution_id: str, score: float) -> None:
    """From now on the run-wide best starts from ``solution_id``: what was evaluated before is no
    longer current (e.g. versions Phase 1's safety checks replaced)."""
    track_best(wf).current.restart(solution_id, score)


def best_solution_id(wf: Workflow) -> str | None:
    """The id of the run's best still-current solution (the one finalization would get now)."""
    best = track_best(wf).best
    return None if best is None else best[1]


def best_so_far(wf: Workflow) -> tuple[SolutionScript, float] | None:
    """The best evaluated solution of the run that is still current, with its score, or None."""
    best = track_best(wf).best
    if best is None:
        return None
    score, sid = best
    return wf.solution(sid).model_copy(update={"score": score}), score


class Phase1Drafts:
    """Phase 1's scored drafts (by index, as recorded), the ones a merge took into s_0, and
    whether a merge was refused (which ends the merging by the algorithm, lines 15-16)."""

    def __init__(self) -> None:
        self.scored: dict[int, tuple[str, float]] = {}
        self.merged: list[int] = []
        self.refused = False

    def observe(self, event: Event) -> None:
        if isinstance(event, CandidateEvaluated) and event.solution_id and event.score is not None:
            self.scored[event.index] = (event.solution_id, event.score)
        elif isinstance(event, MergeDecided):
            self.merged.append(event.candidate_index)
            self.refused = self.refused or not event.accepted


def track_drafts(wf: Workflow) -> Phase1Drafts:
    """The run's record of Phase 1's drafts, made (and observing) on first use, before Phase 1."""
    def make() -> Phase1Drafts:
        drafts = Phase1Drafts()
        wf.observe(drafts.observe)
        return drafts
    return wf.shared(DRAFTS_KEY, make)


def drafts_left_out(wf: Workflow, handed_on_id: str) -> list[SolutionScript]:
    """Phase 1's scored drafts in neither the solution it handed on nor a merge into it, best
    first: what its paths above the first start from when Phase 1 stopped before merging them.
    The best draft is always in: it is s_0, or the base every merge started from. None once a
    merge was refused: the algorithm had ended the merging there, as a Phase 1 that finishes
    hands on no draft then either."""
    drafts = track_drafts(wf)
    if drafts.refused:
        return []
    indices = sorted(drafts.scored)
    order = Score(wf.start.task.metric_direction).ranked([drafts.scored[i][1] for i in indices])
    left = [indices[j] for j in order[1:] if indices[j] not in drafts.merged]
    return [wf.solution(drafts.scored[i][0]).model_copy(update={"score": drafts.scored[i][1]})
            for i in left if drafts.scored[i][0] != handed_on_id]
