"""The final choice on the rows a run held back from its search (docs/final-choice-slice.md).

The real MLE-STAR handlers run on the in-memory simulator with the scripted agent, whose every
refinement scores 0.01 better on validation. The evaluator stands in for the harness: it answers
with the ``hidden_score`` the harness would record after grading the held-back rows of the
submission a script wrote, here a function of the script's validation score.
"""

from __future__ import annotations

import re

from events.base import load_event
from events.core import EvaluationCompleted, EvaluationRequested, PhaseCompleted
from events.hidden import FinalChoiceMade, HiddenSliceDrawn
from handlers.mlestar.pipeline import main
from tests.pipeline import scripted_agent as sa
from tests.pipeline.test_phase1_extension import config
from tests.support.sim import SimRun, simulate_clock

SCORE = re.compile(r"score = ([0-9.]+)")


def _run(hidden_of) -> tuple[SimRun, dict[str, float]]:
    """A whole run; ``hidden_of(validation score)``: the held-back grade (None: not graded).
    Returns the run and the validation score of the script each evaluation ran."""
    scores: dict[str, float] = {}

    def evaluate(req: EvaluationRequested, code: str) -> EvaluationCompleted:
        done = sa.evaluate(req, code)
        found = SCORE.search(code)
        if found:
            scores[req.effect_id] = float(found.group(1))
        if done.result.score is None or req.purpose == "submission":
            return done
        return done.model_copy(update={"hidden_score": hidden_of(done.result.score)})

    return simulate_clock(main, agent=sa.answer, evaluate=evaluate, config=config(2)), scores


def _finalized_score(sim: SimRun, scores: dict[str, float]) -> float:
    """The validation score of the solution finalization's test script was made from."""
    (request,) = [r for r in sim.of(EvaluationRequested) if r.purpose == "submission"]
    return scores[request.effect_id]


def _phase1_score(sim: SimRun) -> float:
    (done,) = [e for e in sim.of(PhaseCompleted) if e.phase == "phase1"]
    return done.result["initial_score"]


def test_the_final_is_the_finalist_best_on_the_held_back_rows():
    # Each refinement overfits: the better on validation, the worse on the held-back rows.
    sim, scores = _run(lambda score: 1.0 - score)
    (choice,) = sim.of(FinalChoiceMade)
    origins = [f.origin for f in choice.finalists]
    # both paths reach the same script here: one finalist, under the later path's name
    assert origins == ["phase1", "phase2/path-1", "phase3"]
    assert choice.chosen != choice.validation_best
    best_hidden = max(f.hidden_score for f in choice.finalists if f.hidden_score is not None)
    chosen = next(f for f in choice.finalists if f.solution_id == choice.chosen)
    assert chosen.hidden_score == best_hidden and chosen.origin == "phase1"
    assert _finalized_score(sim, scores) == _phase1_score(sim)
    assert "the validation rule alone would have taken" in choice.reason


def test_when_both_grades_agree_the_validation_pick_stays():
    sim, scores = _run(lambda score: score)
    (choice,) = sim.of(FinalChoiceMade)
    assert choice.chosen == choice.validation_best
    assert _finalized_score(sim, scores) == max(f.score for f in choice.finalists)


def test_ties_on_the_held_back_rows_go_to_the_validation_pick():
    sim, _ = _run(lambda score: 0.5)
    (choice,) = sim.of(FinalChoiceMade)
    assert choice.chosen == choice.validation_best


def test_without_held_back_grades_nothing_is_recorded_and_validation_decides():
    sim, scores = _run(lambda score: None)
    assert sim.of(FinalChoiceMade) == []
    plain, plain_scores = _run(lambda score: None)
    assert _finalized_score(sim, scores) == _finalized_score(plain, plain_scores)
    assert sim.decisions() == plain.decisions()
    # the validation pick: the best refined script, above Phase 1's
    assert _finalized_score(sim, scores) > _phase1_score(sim)


def test_a_v5_evaluation_loads_ungraded_and_the_new_events_round_trip():
    payload = {"effect_id": "e", "elapsed_s": 1.0, "final_run_estimate_s": None, "sandbox": None,
               "scored_rows": None, "score_groups": None,
               "result": {"score": 0.5, "stdout": "", "stderr": "", "exit_code": 0, "duration_seconds": 1.0,
                          "is_error": False}}
    done = load_event("EvaluationCompleted", 5, payload)
    assert isinstance(done, EvaluationCompleted) and done.hidden_score is None
    drawn = HiddenSliceDrawn(rows=300, of_rows=3000, view_dir="/r/hidden-slice/public",
                             answers="/r/hidden-slice/answers.csv", ids_digest="ab" * 32)
    assert load_event("HiddenSliceDrawn", 1, drawn.payload()) == drawn
    sim, _ = _run(lambda score: 1.0 - score)
    (choice,) = sim.of(FinalChoiceMade)
    assert load_event("FinalChoiceMade", 1, choice.payload()) == choice
