"""Phase 3's ensemble scripts fit their cross-validation to the window the engine gave them
(REQ-OR-026: a phase works within its share; ``engine.agents.builtin.render_cv``). Real
scikit-learn scripts, run for real; the deadline is long past or an hour away, so no verdict
depends on how fast the machine is."""

from __future__ import annotations

import json
import re
import textwrap
import time

from engine.agents.builtin.render import render_solution
from engine.agents.builtin.spec import parse_spec
from handlers.script_lines import scored_rows

PASSED = {"ENGINE_EVAL_DEADLINE": "0"}   # a Unix time long gone: every fold check finds no room
# Appended to a script: the score of its blend on the rows of its first two folds, as the script
# itself scores predictions.
TWO_FOLDS_SCORE = textwrap.dedent("""
    rows = np.sort(np.concatenate([va for _, va in cv_splits[:2]]))
    print("TWO FOLDS", float(score_predictions(y_score[rows], np.asarray(val_blend)[rows])))
""")


def _ensemble(env, plan: dict) -> str:
    sols = [env.ok("init", task_description="", model_name=model, example_code="").code
            for model in ("random forest", "logistic regression")]
    text = f"x [builtin-ensemble: {json.dumps(plan, sort_keys=True)}]"
    return env.ok("ensembler", solutions=sols, plan=text).code


def test_an_ensemble_out_of_time_scores_on_the_rows_of_two_folds_as_the_full_run_would(multiclass):
    """With the deadline passed, the script fits two of its five folds, says so, and scores its
    blend on their rows: the same score the full run's blend has on those rows (each row predicted
    by the same fold's models), so the cut costs rows, not honesty. It still refits on every row
    and writes its submission."""
    script = _ensemble(multiclass, {"combine": "mean"})
    assert parse_spec(script)["train"]["window_folds"] is True
    full = multiclass.run(script + TWO_FOLDS_SCORE)
    cut = multiclass.run(script, env=PASSED)
    assert full.rc == 0 and cut.rc == 0, full.stderr + cut.stderr
    assert "Cross-validation cut" not in full.stdout
    stated = re.search(r"cut to 2 of 5 folds by the engine's deadline: the score is on their (\d+) of (\d+) rows",
                       cut.stdout)
    assert stated is not None, cut.stdout
    assert 0.3 * int(stated.group(2)) < int(stated.group(1)) < 0.5 * int(stated.group(2))
    # The engine reads the rows off the script's own line (EvaluationCompleted.scored_rows); the
    # full run says nothing, so its score counts as on every row.
    assert scored_rows(cut.stdout) == int(stated.group(1))
    assert scored_rows(full.stdout) is None
    two_folds = float(re.search(r"TWO FOLDS ([\d.e-]+)", full.stdout).group(1))
    assert cut.score == two_folds
    assert len(cut.submission) == len(full.submission) > 0


def test_a_learned_blend_out_of_time_cross_fits_on_the_folds_it_fit(multiclass):
    """Weights learned by greedy selection are scored cross-fitted (each fold's rows blended with
    weights learned on the other folds): after a cut, between the two folds that were fit."""
    cut = multiclass.run(_ensemble(multiclass, {"combine": "weighted"}), env=PASSED)
    assert cut.rc == 0, cut.stderr
    assert "cut to 2 of 5 folds" in cut.stdout
    in_sample = float(re.search(r"Blend learned and scored on the same rows: accuracy = ([\d.]+)", cut.stdout).group(1))
    assert cut.score is not None and cut.score != in_sample


def test_a_window_that_holds_every_fold_scores_as_the_script_without_the_gene(multiclass):
    """The gene changes nothing when there is time: the same folds, the same fits, the same score
    and submission as the same ensemble rendered without it."""
    script = _ensemble(multiclass, {"combine": "stacking"})
    spec = parse_spec(script)
    spec["train"] = {k: v for k, v in spec["train"].items() if k != "window_folds"}
    plain = render_solution(spec)
    assert "room_for_another_fold" in script and "room_for_another_fold" not in plain
    far = {"ENGINE_EVAL_DEADLINE": str(time.time() + 3600)}
    windowed, unwindowed = multiclass.run(script, env=far), multiclass.run(plain, env=far)
    assert windowed.rc == 0 and unwindowed.rc == 0, windowed.stderr + unwindowed.stderr
    assert windowed.score == unwindowed.score is not None
    assert windowed.submission.equals(unwindowed.submission)


def test_search_scripts_keep_every_fold(multiclass):
    """Phase 1 and 2 compare a step's score with its path's best, scored on every row: only an
    ensemble script (whose round is otherwise lost whole) trades rows for time."""
    single = multiclass.ok("init", task_description="", model_name="random forest", example_code="").code
    assert "window_folds" not in parse_spec(single)["train"]
    run = multiclass.run(single, env=PASSED)
    assert run.rc == 0 and "Cross-validation cut" not in run.stdout
