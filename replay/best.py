"""The run's best evaluated solution so far: one rule for every view of it.

``SolutionEvaluated`` decisions are folded in log order. One counts when its solution ran
(``is_executable``), its score is usable (``events.score``: not None, not NaN) and its purpose may
become a best (an ablation's printout never does, REQ-P2O-020); it then replaces the best when it
is at least as good (the paper's ``>=``, REQ-DM-029: later ties win, so the solution kept for a
score is the latest that reached it) and is on no fewer rows (``SolutionEvaluated.scored_rows``).

The CLI's best score (``replay.state.PipelineState``), the audit's fallback for a run's final
solution (``engine.audit.lineage``) and MLE-STAR's run-wide fallback
(``handlers.mlestar.bestsofar``, which also restarts it when Phase 1's checks replace what came
before) all fold through :meth:`BestEvaluated.offer`.
"""

from __future__ import annotations

from dataclasses import dataclass

from events.score import Score, counts_toward_best


@dataclass
class BestEvaluated:
    score: float | None = None
    solution_id: str | None = None
    scored_rows: int | None = None   # the rows ``score`` is on when fewer than all

    def offer(self, rule: Score, *, solution_id: str, score: float | None, is_executable: bool,
              purpose: str, scored_rows: int | None = None) -> bool:
        """Fold one evaluation; whether it became the best (a score on fewer rows never replaces
        one on more, ``events.score``)."""
        if not is_executable or not counts_toward_best(purpose) or not rule.at_least(
                score, self.score, new_rows=scored_rows, old_rows=self.scored_rows):
            return False
        self.score, self.solution_id, self.scored_rows = score, solution_id, scored_rows
        return True

    def restart(self, solution_id: str, score: float) -> None:
        """From now on the best starts from this solution (what came before no longer counts);
        its score is on every row (Phase 1's checked s_0)."""
        self.score, self.solution_id, self.scored_rows = score, solution_id, None


__all__ = ["BestEvaluated"]
