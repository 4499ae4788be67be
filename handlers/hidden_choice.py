"""The final choice on the held-back rows (events/hidden.py, docs/final-choice-slice.md).

Every step of the search picks on the same validation folds, so the solution the search ends
with is partly the luckiest on those folds. When the run held rows back from the search, the
final solution is chosen among the search's best candidates (each phase's and path's best, and
the one the validation rule picked) by their grade on those rows, which no step has seen.

* Only candidates graded on the held-back rows and scored on validation compete; with none, the
  validation pick stands and nothing is recorded (every run without a slice, so every run
  recorded before slices existed decides as it did).
* Ties on the held-back grade go to the validation pick, then to the later candidate.
* The decision is one ``FinalChoiceMade`` event, so replay reproduces it and an audit shows both
  grades of every finalist.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from events.hidden import FinalChoiceMade, Finalist
from events.score import Score, Ties, usable
from events.values import SolutionScript, solution_id_of
from handlers.evaluation import hidden_score_of
from handlers.workflow import Workflow


@dataclass(frozen=True)
class Candidate:
    solution: SolutionScript   # carrying its validation score
    origin: str                # where the search left it ("phase1", "phase2/path-0", "phase3")


def choose_on_held_back(wf: Workflow, rule: Score, candidates: Sequence[Candidate],
                        validation_pick: Candidate) -> Candidate:
    """The final among ``candidates`` and ``validation_pick`` by the held-back grade (the module's
    rules); ``validation_pick`` itself when no candidate was graded on the held-back rows."""
    finalists = _finalists(wf, [*candidates, validation_pick])
    graded = [(c, f) for c, f in finalists if usable(f.hidden_score) and usable(f.score)]
    if not graded:
        return validation_pick
    pick_id = solution_id_of(validation_pick.solution.content)
    # The validation pick goes last, so "later wins" hands it every tie it is part of.
    ordered = sorted(graded, key=lambda cf: cf[1].solution_id == pick_id)
    i = rule.best_index([f.hidden_score for _, f in ordered], Ties.LATER_WINS)
    assert i is not None
    chosen, finalist = ordered[i]
    moved = finalist.solution_id != pick_id
    wf.record(FinalChoiceMade(
        finalists=tuple(f for _, f in finalists), chosen=finalist.solution_id, validation_best=pick_id,
        reason=(f"{chosen.origin}'s solution graded best on the held-back rows ({finalist.hidden_score:.6g}); "
                f"the validation rule alone would have taken {validation_pick.origin}'s" if moved else
                f"{chosen.origin}'s solution, the validation rule's pick, also graded best on the held-back rows "
                f"({finalist.hidden_score:.6g})")))
    return chosen


def _finalists(wf: Workflow, candidates: Sequence[Candidate]) -> list[tuple[Candidate, Finalist]]:
    """Each distinct solution once, in the order first met; a later entry of the same solution
    replaces the earlier (the validation pick comes last, so its entry is the pick itself)."""
    by_id: dict[str, tuple[Candidate, Finalist]] = {}
    for c in candidates:
        sid = solution_id_of(c.solution.content)
        by_id[sid] = (c, Finalist(solution_id=sid, origin=c.origin, score=c.solution.score,
                                  hidden_score=hidden_score_of(wf, sid)))
    return list(by_id.values())


__all__ = ["Candidate", "choose_on_held_back"]
