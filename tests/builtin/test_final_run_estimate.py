"""The builtin search script's estimate of its test version's run (issue 28, REQ-OR-034): real
scikit-learn scripts, run for real, print the line the time plan sizes finalization from."""

from __future__ import annotations

import json
import time

from conftest import Env

from engine.agents.builtin.render_train import render_train
from engine.agents.builtin.spec import parse_spec
from engine.harness.results import take_final_run_estimate
from events.domain import EvaluationResult, PipelineConfig
from handlers.script_lines import FINAL_RUN_LABEL, labelled_value
from handlers.timebudget import Measured


def _solution(env, model: str) -> str:
    return env.ok("init", task_description="", model_name=model, example_code="").code


def test_a_search_run_estimates_its_test_run_from_its_own_parts_without_its_cross_validation(multiclass):
    """One model on every row (no subsample) whose test version does not score again: the estimate
    is the run's start-up, its refit and its predictions, so it is less than the whole run, which
    also cross-validated five folds; the time plan reads it for the solution."""
    script = _solution(multiclass, "random forest")
    started = time.monotonic()
    run = multiclass.run(script)
    took = time.monotonic() - started
    assert run.rc == 0, run.stderr
    estimate = labelled_value(run.stdout, FINAL_RUN_LABEL)
    assert estimate is not None and 0 < estimate < took
    # The harness takes the line out of the recorded output (it is time, not output) and the time
    # plan reads the value.
    result, taken = take_final_run_estimate(EvaluationResult(score=run.score, stdout=run.stdout, stderr="",
                                                             exit_code=0, duration_seconds=took, is_error=False))
    assert taken == estimate and FINAL_RUN_LABEL not in result.stdout
    assert result.stdout == "".join(line for line in run.stdout.splitlines(keepends=True)
                                    if not line.startswith(FINAL_RUN_LABEL))
    measured = Measured()
    measured.evaluation(result, "forest", taken)
    assert measured.final_run_s == {"forest": estimate}


_PARTS = ('print("PARTS", json.dumps({"start_s": CV_STARTED - SCRIPT_STARTED, "refit_s": FIT_ENDED - FIT_STARTED, '
          '"rows": TRAIN_ROWS, "fitted_on": len(X), "rest_s": time.monotonic() - FIT_ENDED, '
          '"readings": [list(r) for r in globals().get("STOPPING_ROUNDS", {}).values()]}))\n    ')


def _parts(env, script: str) -> tuple[dict, float | None]:
    """Run ``script`` with its timed parts printed just before its estimate; both, as it saw them."""
    probe = script.replace(f'print(f"{FINAL_RUN_LABEL}', "import json\n    " + _PARTS + f'print(f"{FINAL_RUN_LABEL}')
    run = env.run(probe)
    assert run.rc == 0, run.stderr
    return json.loads(run.stdout.split("PARTS ")[1].split("\n")[0]), labelled_value(run.stdout, FINAL_RUN_LABEL)


# The rest is timed again after the PARTS line, so the estimate's can only have grown; the line
# rounds to hundredths.
ROUNDING_S = 0.006


def test_the_estimate_scales_the_refit_to_every_training_row(binary):
    """The search fits on 800 of the 960 rows (the subsample block): the script knows the rows its
    test version fits on (TRAIN_ROWS, outside the block finalization removes) and scales its refit
    by them. Checked on the script's own figures: with the refit's time and the rows given, the
    estimate is what the formula says."""
    script = _solution(binary, "random forest")
    assert "TRAIN_ROWS = len(train_df)" in script and script.index("TRAIN_ROWS = len(train_df)") < script.index(
        "SUBSAMPLE_LIMIT")
    parts, estimate = _parts(binary, script)
    assert (parts["rows"], parts["fitted_on"]) == (960, 800)
    assert estimate is not None
    assert estimate >= parts["start_s"] + parts["refit_s"] * 960 / 800 + parts["rest_s"] - ROUNDING_S


def test_an_ablation_study_and_a_test_script_print_no_estimate(binary):
    """Only a search run's estimate sizes finalization: an ablation study compares variants and a
    test script is the run being estimated."""
    script = _solution(binary, "random forest")
    assert FINAL_RUN_LABEL not in render_train(parse_spec(script), mode="ablation")
    test_script = binary.ok("test", **{"task description": "", "final solution": script}).code
    run = binary.run(test_script)
    assert run.rc == 0, run.stderr
    assert FINAL_RUN_LABEL not in run.stdout


def test_an_early_stopped_booster_s_reading_on_every_row_is_counted_twice(tmp_path):
    """A LightGBM member read its stopping point on a fold of the 1,500-row sample (1,080 rows); the
    test version fits on all 2,400 rows, twice those, so it reads again there and refits with the
    rounds found (flight-delay at 120 s: 9.8 s of fits where the refit scaled said 2 s). The
    estimate counts that reading, scaled to the rows, twice, on top of the scaled refit."""
    env = Env("dated-counts-3k", tmp_path, PipelineConfig(subsample_limit=1500))
    script = _solution(env, "lightgbm")
    assert "class EarlyStopped" in script
    parts, estimate = _parts(env, script)
    rows, fitted_on, readings = parts["rows"], parts["fitted_on"], parts["readings"]
    assert (rows, fitted_on) == (2400, 1500) and readings
    assert all(rows >= 2 * read_on for _, read_on, _ in readings)
    reading_s = sum(2 * took * rows / read_on for _, read_on, took in readings)
    assert estimate is not None
    assert estimate >= parts["start_s"] + parts["refit_s"] * rows / fitted_on + reading_s + parts["rest_s"] - ROUNDING_S
