"""MLE-STAR's run-wide best-so-far: the fallback when a phase is cut or fails (REQ-OR-030/043).

A fold of the strategy's own ``SolutionEvaluated`` decisions (``Workflow.observe``), kept per
run (``Workflow.shared``), by the one rule of the run's best (``replay.best``: executable, scored,
later ties winning, ablation printouts never counting) that the CLI's best score folds too.

It ranges only over solutions that are still current: when Phase 1's safety checks replace the
candidates and merges by the checked s_0 (REQ-P1-030/031), :func:`rebase_best` restarts it from
s_0, so no fallback can bring back a version a check replaced. (The CLI's ``best_score`` is the
best ever evaluated, ``replay.state``; it differs from this one exactly by such rebases.)
"""

from __future__ import annotations

from events.base import Event
from events.core import SolutionEvaluated
from events.domain import SolutionScript
from events.score import Score
from handlers.workflow import Workflow
from replay.best import BestEvaluated

KEY = "mle-star/best-so-far"


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
