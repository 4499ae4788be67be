"""``evolve``'s final node on the rows a run held back from its search (docs/final-choice-slice.md):
among the best valid nodes, the best held-back grade; with no grades, the best valid node as
before (docs/decisions/0002-evolve-final-node.md)."""

from __future__ import annotations

from events.core import EvaluationCompleted, EvaluationRequested
from events.evolution import FinalNodeSelected
from events.hidden import FinalChoiceMade
from events.values import solution_id_of
from handlers.evolution import main
from handlers.evolution.search import HELD_BACK_FINALISTS
from tests.evolution.helpers import config, journal_of
from tests.evolution.scripted import World
from tests.evolution.scripted import evaluate as scripted_evaluate
from tests.support.sim import make_task, simulate


def _run(hidden_of):
    def evaluate(req: EvaluationRequested, code: str):
        done = scripted_evaluate(req, code)
        if isinstance(done, EvaluationCompleted):
            return done  # the test script: it reads the task's own data, nothing is held back there
        completed = EvaluationCompleted(effect_id=req.effect_id, result=done)
        if done.is_error or done.score is None:
            return completed
        return completed.model_copy(update={"hidden_score": hidden_of(done.score)})

    return simulate(main, agent=World(), evaluate=evaluate, config=config(), task=make_task("maximize"),
                    timers_last=True)


def test_the_final_node_is_the_best_on_the_held_back_rows_among_the_best_valid_nodes():
    sim = _run(lambda score: -score)   # the higher on validation, the worse on the held-back rows
    (choice,) = sim.of(FinalChoiceMade)
    (final,) = sim.of(FinalNodeSelected)
    journal = journal_of(sim)
    best = journal.best(only_valid=True)
    assert best is not None and choice.validation_best == solution_id_of(best.code)
    assert len(choice.finalists) <= HELD_BACK_FINALISTS
    chosen = next(f for f in choice.finalists if f.solution_id == choice.chosen)
    assert chosen.hidden_score == max(f.hidden_score for f in choice.finalists)
    assert chosen.score == min(f.score for f in choice.finalists)
    assert final.score == chosen.score and "held-back" in final.reason


def test_without_grades_the_best_valid_node_stays_and_nothing_is_recorded():
    sim = _run(lambda score: None)
    plain = _run(lambda score: None)
    assert sim.of(FinalChoiceMade) == []
    (final,) = sim.of(FinalNodeSelected)
    best = journal_of(sim).best(only_valid=True)
    assert best is not None and final.node_id == best.id
    assert sim.decisions() == plain.decisions()
