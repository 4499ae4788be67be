"""A score on part of the validation rows never replaces one on every row (``events.score``'s rows
rule, REQ-DM-028/029, REQ-P3-025, REQ-OR-043).

A Phase 3 ensemble script whose cross-validation the deadline cut to some of its folds scores on
those folds' rows alone and says so (``Validation Rows: <scored> of <total>``,
``handlers.script_lines``). athlete-weight at 120 s (seed 0) showed why the count matters: a
stacking round scored 9.307 RMSE on its two folds' 1,440 rows and was picked over rounds and paths
that scored 9.756 on all 3,600 with the same models. The count travels from the script's output
(the harness: ``EvaluationCompleted.scored_rows``) through the evaluation sub-flow
(``SolutionEvaluated.scored_rows``) and Phase 3's rounds (``EnsembleRoundCompleted.scored_rows``)
to the one comparison rule, which every choice of a best uses.
"""

from __future__ import annotations

import textwrap

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.harness import EvalContext, run_evaluation
from engine.run.replayer import read_export
from events.base import load_event
from events.core import EvaluationCompleted, EvaluationRequested, SolutionEvaluated
from events.domain import EnsembleAttempt, MetricDirection, SolutionPhase, SolutionScript, solution_id_of
from events.phase3 import EnsembleRoundCompleted, Phase3Outcome
from events.score import Score, Ties
from handlers.mlestar.finalchoice import best_round, choose_final, picked_rows
from handlers.script_lines import scored_rows
from replay.best import BestEvaluated
from tests.replays.fixtures import FIXTURES, downgrade_to_before_rows

RMSE = Score(MetricDirection.minimize)
AUC = Score(MetricDirection.maximize)
scores = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False)
rows = st.one_of(st.none(), st.integers(min_value=1, max_value=10_000))


def _script(text: str, score: float | None = None) -> SolutionScript:
    return SolutionScript(content=text, phase=SolutionPhase.ensemble, score=score, is_executable=True)


# --- the script's line --------------------------------------------------------------------------


@pytest.mark.parametrize(("stdout", "expected"), [
    ("Final Validation Performance: 9.3\nValidation Rows: 1440 of 3600\n", 1440),
    ("Validation Rows: 3600 of 3600\n", None),                       # every row: no cut
    ("Validation Rows: 1440 of 3600\nValidation Rows: 2160 of 3600\n", 2160),   # the last line decides
    ("Validation Rows: 1440 of 3600\nValidation Rows: all of them\n", None),    # ... even unreadable
    ("Validation Rows: 0 of 3600\n", None),
    ("Validation Rows: 5000 of 3600\n", None),                       # more than all: not a cut
    ("no line at all\n", None),
])
def test_REQ_EX_011_the_rows_are_read_off_the_last_line(stdout: str, expected: int | None) -> None:
    assert scored_rows(stdout) == expected


# --- the rule -----------------------------------------------------------------------------------


@given(new=scores, old=scores, new_rows=st.integers(1, 10_000), old_rows=rows, ties=st.sampled_from(Ties))
def test_REQ_DM_028_029_a_score_on_fewer_rows_never_replaces_one_on_more(new, old, new_rows, old_rows, ties) -> None:
    if old_rows is None or new_rows < old_rows:
        assert not RMSE.better(new, old, ties, new_rows=new_rows, old_rows=old_rows)
        assert not AUC.better(new, old, ties, new_rows=new_rows, old_rows=old_rows)
        # ... and the one on more rows replaces it, whatever the two values.
        assert RMSE.better(old, new, ties, new_rows=old_rows, old_rows=new_rows)


@given(new=scores, old=scores, same=rows, ties=st.sampled_from(Ties))
def test_REQ_DM_028_029_on_the_same_rows_the_values_decide(new, old, same, ties) -> None:
    assert RMSE.better(new, old, ties, new_rows=same, old_rows=same) == RMSE.better(new, old, ties)


def test_an_unusable_score_never_wins_on_any_rows() -> None:
    assert RMSE.better(9.0, None, new_rows=10, old_rows=None)
    assert not RMSE.better(None, 9.0, new_rows=None, old_rows=10)
    assert not RMSE.better(float("nan"), 9.0, new_rows=None, old_rows=10)


@given(values=st.lists(st.tuples(st.one_of(st.none(), scores), rows), max_size=8), ties=st.sampled_from(Ties))
def test_REQ_P3_025_best_index_takes_the_best_of_the_most_rows(values, ties) -> None:
    """The pick is the best by value among the usable scores on the most rows."""
    got = RMSE.best_index([s for s, _ in values], ties, [r for _, r in values])
    usable = [(i, s, r) for i, (s, r) in enumerate(values) if s is not None]
    if not usable:
        assert got is None
        return
    most = max(float("inf") if r is None else r for _, _, r in usable)
    pool = [(i, s) for i, s, r in usable if (float("inf") if r is None else r) == most]
    assert got == pool[RMSE.best_index([s for _, s in pool], ties)][0]


def test_best_index_wants_one_count_per_score() -> None:
    with pytest.raises(ValueError, match="3 scores but 2 row counts"):
        RMSE.best_index([1.0, 2.0, 3.0], Ties.FIRST_WINS, [None, 5])


# --- where the rule decides ---------------------------------------------------------------------


def test_REQ_OR_043_a_cut_round_is_not_the_final_over_a_path_scored_on_every_row() -> None:
    """athlete-weight's case: the stacking round's 9.307 on 1,440 rows against the paths' 9.757
    on all 3,600. The paths' best is the final; the same round on every row would have won."""
    paths = [_script("path 0", 9.757446), _script("path 1", 9.757446)]
    stacked = _script("stacking round", 9.307)
    cut = choose_final(RMSE, paths, stacked, 9.307, 1440)
    assert not cut.from_phase3 and cut.input_index == 1 and cut.score == 9.757446
    whole = choose_final(RMSE, paths, stacked, 9.307, None)
    assert whole.from_phase3 and whole.score == 9.307


def test_REQ_P3_025_among_rounds_one_on_every_row_beats_a_cut_one() -> None:
    rounds = [EnsembleAttempt(plan="mean", score=9.756, solution=_script("r0")),
              EnsembleAttempt(plan="stacking", score=9.307, solution=_script("r1"), scored_rows=1440),
              EnsembleAttempt(plan="failed", score=None, solution=_script("r2"))]
    assert best_round(rounds, RMSE).plan == "mean"
    outcome = Phase3Outcome(input_solutions=[], ensemble_plans=[a.plan for a in rounds],
                            ensemble_scores=[a.score for a in rounds], best_ensemble=rounds[1].solution,
                            best_ensemble_score=9.307, attempts=rounds, best_round=1)
    assert picked_rows(outcome) == 1440
    assert picked_rows(outcome.model_copy(update={"best_round": None})) is None   # REQ-P3-026's fallback


def test_the_run_wide_best_keeps_the_score_on_more_rows() -> None:
    """``replay.best``: what the CLI shows, the audit's fallback and MLE-STAR's run-wide best."""
    best = BestEvaluated()
    assert best.offer(RMSE, solution_id="full", score=9.756, is_executable=True, purpose="ensemble")
    assert not best.offer(RMSE, solution_id="cut", score=9.307, is_executable=True, purpose="ensemble",
                          scored_rows=1440)
    assert best.solution_id == "full"
    fresh = BestEvaluated()
    fresh.offer(RMSE, solution_id="cut", score=9.307, is_executable=True, purpose="ensemble", scored_rows=1440)
    assert fresh.offer(RMSE, solution_id="worse but whole", score=9.9, is_executable=True, purpose="ensemble")
    assert (fresh.solution_id, fresh.scored_rows) == ("worse but whole", None)


# --- the harness records it ---------------------------------------------------------------------


@pytest.mark.anyio
async def test_the_harness_records_the_rows_a_real_script_says_its_score_is_on(tiny_eval_context: EvalContext) -> None:
    ctx = tiny_eval_context
    outputs = {}
    for name, line in (("cut", "Validation Rows: 1440 of 3600"), ("whole", "")):
        code = textwrap.dedent(f"""
            print("Final Validation Performance: 9.307")
            print({line!r})
        """)
        request = EvaluationRequested(effect_id=f"phase3/round-{name}/eval", solution_id=solution_id_of(code),
                                      purpose="ensemble", timeout_s=60)
        outputs[name] = await run_evaluation(request, code, ctx)
    assert isinstance(outputs["cut"], EvaluationCompleted)
    assert outputs["cut"].scored_rows == 1440 and outputs["cut"].result.score == pytest.approx(9.307)
    assert "Validation Rows: 1440 of 3600" in outputs["cut"].result.stdout   # the output says what the score is
    assert outputs["whole"].scored_rows is None


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


# --- old logs -----------------------------------------------------------------------------------


def test_old_events_load_with_every_score_on_every_row() -> None:
    """The versions before ``scored_rows`` upcast to None: no script of theirs said otherwise."""
    done = load_event("EvaluationCompleted", 3, {
        "effect_id": "e", "elapsed_s": 1.0, "final_run_estimate_s": None, "sandbox": None,
        "result": {"score": 0.5, "stdout": "", "stderr": "", "exit_code": 0, "duration_seconds": 1.0,
                   "is_error": False}})
    assert isinstance(done, EvaluationCompleted) and done.scored_rows is None
    evaluated = load_event("SolutionEvaluated", 1, {"solution_id": "s", "requested_solution_id": "s",
                                                    "score": 0.5, "is_executable": True, "purpose": "ensemble"})
    assert isinstance(evaluated, SolutionEvaluated) and evaluated.scored_rows is None
    settled = load_event("EnsembleRoundCompleted", 1, {"round": 0, "plan": "mean", "score": 0.5,
                                                       "solution_id": "s", "status": "evaluated"})
    assert isinstance(settled, EnsembleRoundCompleted) and settled.scored_rows is None


def test_the_recorded_fixtures_predate_the_rows_and_still_load() -> None:
    """The replay fixtures stored as from before ``scored_rows`` (which ``tests/replays`` replays
    decision for decision): their v3 evaluations, v1 verdicts and v1 rounds load through the
    upcasters."""
    seen: dict[str, int] = {}
    for spec in (spec for spec in FIXTURES if spec.before_rows):
        for envelope in read_export(spec.path):
            if envelope.type in ("EvaluationCompleted", "SolutionEvaluated", "EnsembleRoundCompleted"):
                assert "scored_rows" not in envelope.payload
                assert envelope.event().scored_rows is None
                seen[envelope.type] = seen.get(envelope.type, 0) + 1
    assert set(seen) == {"EvaluationCompleted", "SolutionEvaluated", "EnsembleRoundCompleted"}, seen


def test_a_fixture_is_stored_as_old_only_where_an_old_engine_could_have_written_it() -> None:
    """The rewrite to the schema from before ``scored_rows`` drops the field only where it says
    "every row": a score on fewer rows has no old form, and the rewrite refuses it by name."""
    spec = next(spec for spec in FIXTURES if spec.before_rows)
    old = next(e for e in read_export(spec.path) if e.type == "EvaluationCompleted")
    new = old.model_copy(update={"version": 4, "payload": {**old.payload, "scored_rows": None}})
    (again,) = downgrade_to_before_rows([new])
    assert again.version == 3 and again.payload == old.payload and again.event() == new.event()
    partial = new.model_copy(update={"payload": {**new.payload, "scored_rows": 40}})
    with pytest.raises(ValueError, match="scored_rows=40"):
        downgrade_to_before_rows([partial])
