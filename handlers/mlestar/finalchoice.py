"""Which solution MLE-STAR hands to finalization after Phase 3 (docs/decisions/0001-final-choice.md),
and, when the run held rows back from its search, the choice on them (``final_on_held_back``).

The final is the best solution on validation among the solutions Phase 3 received (each Phase 2
path's own best) and the ensembles Phase 3 scored — one rule, whether Phase 3 completed, failed
or was cut:

* completed: Phase 3's own pick (REQ-P3-025: its best round, last of equals; REQ-P3-026: the best
  input when every round failed) stands against the inputs;
* failed or cut: its best round settled before it stopped (same REQ-P3-025 rule) stands against
  the inputs; with no scored round the best input is the final (REQ-OR-041/030).

A round scored on part of its rows (its cross-validation cut by the deadline) never beats a
candidate scored on every row, whatever the two values (``events.score``'s rows rule): the inputs
are, so such a round is the final only when Phase 3 received nothing with a usable score.

Ties go to the later candidate (``Ties.LATER_WINS``, the paper's ``>=``, REQ-DM-029), the
inputs in path order and the ensemble last: an ensemble that equals the best path's score is
taken, as every other step of the pipeline (and the run-wide best, ``replay.best``, and
``evolve``'s final node) moves on to the newer solution on a tie. An ensemble that is worse
than a path's own best is never submitted (REQ-OR-043: the best solution), which REQ-P3-025
alone (the best *ensemble*) would allow.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from events.errors import PipelineError
from events.phase3 import Phase3Outcome
from events.results import EnsembleAttempt, Phase1Result, Phase2Result, Phase3Result
from events.score import Score, Ties
from events.values import SolutionScript, solution_id_of
from handlers.hidden_choice import Candidate, choose_on_held_back
from handlers.mlestar.phase3 import best_index
from handlers.toolkit import score_rule
from handlers.workflow import Workflow


@dataclass(frozen=True)
class FinalChoice:
    solution: SolutionScript
    score: float
    from_phase3: bool          # the ensemble side won (else: ``input_index``'s path best)
    input_index: int | None    # which input won, when one did


def best_round(rounds: Sequence[EnsembleAttempt], rule: Score) -> EnsembleAttempt | None:
    """The rounds' best by REQ-P3-025's rule (the one ``phase3.select_best`` applies)."""
    r = best_index([a.score for a in rounds], rule, [a.scored_rows for a in rounds])
    return None if r is None else rounds[r]


def picked_rows(result: Phase3Result) -> int | None:
    """The rows Phase 3's own pick is scored on: its winning round's (``None``, every row, for the
    REQ-P3-026 fallback to an input, and for a result that carries no rounds)."""
    if isinstance(result, Phase3Outcome) and result.best_round is not None:
        return result.attempts[result.best_round].scored_rows
    return None


def choose_final(rule: Score, inputs: Sequence[SolutionScript], phase3_pick: SolutionScript | None,
                 phase3_score: float | None, phase3_rows: int | None = None) -> FinalChoice:
    """The best of ``inputs`` (each carrying its score, on every row) and Phase 3's pick (on
    ``phase3_rows`` rows, ``None``: every row), by ``rule`` with later ties winning (the pick is
    last). ``phase3_pick`` is None when Phase 3 yielded nothing scored; then the best input is
    the final."""
    candidates: list[tuple[SolutionScript, float | None, int | None]] = [(s, s.score, None) for s in inputs]
    if phase3_pick is not None:
        candidates.append((phase3_pick, phase3_score, phase3_rows))
    i = rule.best_index([score for _, score, _ in candidates], Ties.LATER_WINS,
                        [rows for _, _, rows in candidates])
    if i is None:
        raise PipelineError("no candidate for the final solution carries a usable score")
    solution, score, _ = candidates[i]
    assert score is not None
    won = phase3_pick is not None and i == len(inputs)
    return FinalChoice(solution=solution.model_copy(update={"score": score}), score=score, from_phase3=won,
                       input_index=None if won else i)


def final_on_held_back(wf: Workflow, phase1: Phase1Result, phase2_results: Sequence[Phase2Result],
                       best: SolutionScript, best_score: float) -> tuple[SolutionScript, float]:
    """The solution to finalize: the validation rule's ``best`` (above), or, when the run held rows
    back from its search, the best on those rows among Phase 1's solution, each path's best and
    ``best`` (``handlers.hidden_choice``)."""
    candidates = [Candidate(phase1.initial_solution.model_copy(update={"score": phase1.initial_score}), "phase1")]
    candidates += [Candidate(r.best_solution.model_copy(update={"score": r.best_score}), f"phase2/path-{i}")
                   for i, r in enumerate(phase2_results)]
    best_id = solution_id_of(best.content)
    origin = next((c.origin for c in reversed(candidates) if solution_id_of(c.solution.content) == best_id), "phase3")
    pick = Candidate(best.model_copy(update={"score": best_score}), origin)
    chosen = choose_on_held_back(wf, score_rule(wf), candidates, pick)
    score = chosen.solution.score
    assert score is not None  # only candidates with a validation score compete
    return chosen.solution, score


__all__ = ["FinalChoice", "best_round", "choose_final", "final_on_held_back", "picked_rows"]
