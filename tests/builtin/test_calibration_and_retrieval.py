"""Issue 19: what a careful engineer checks before choosing models and submitting probabilities.

* Retrieval proposes a regularised linear model second, where a second gradient booster would
  add little to a blend (iris: test logloss 0.84 -> 0.09 at --time-limit 120).
* For log-loss tasks the final script calibrates its class probabilities (temperature and a
  floor) on out-of-fold predictions and reports a cross-fitted score; graded on held-out
  answers, the calibrated submission beats the same script without calibration.
"""

from __future__ import annotations

import pandas as pd
import pytest
from conftest import Env
from sklearn.metrics import log_loss

from engine.agents.builtin.catalog import PREFERENCE, retrieval_order
from engine.agents.builtin.render import render_section
from engine.agents.builtin.spec import parse_spec, section_block
from events.agent_outputs import RetrieverOutput
from events.domain import PipelineConfig


@pytest.fixture(scope="module")
def noisy(tmp_path_factory) -> Env:
    return Env("noisy-logloss", tmp_path_factory.mktemp("noisy"), PipelineConfig(subsample_limit=30000))


@pytest.mark.parametrize("kind", ["classification", "regression"])
def test_retrieval_pairs_the_first_booster_with_the_linear_model(kind):
    order = retrieval_order(kind)
    assert order[0] == PREFERENCE[kind][0] and order[1] == "linear"
    assert sorted(order) == sorted(PREFERENCE[kind])


def test_retriever_proposes_the_linear_model_second(noisy):
    out = RetrieverOutput.model_validate(noisy.ok("retriever", task_description="", M=2).structured)
    assert "LogisticRegression" in out.models[1].model_name


def _grade(env: Env, submission: pd.DataFrame) -> float:
    answers = pd.read_csv(env.data_dir.parent / "answers.csv").merge(submission, on="id")
    classes = sorted(answers["label"].unique())
    return log_loss(answers["label"], answers[classes].to_numpy(), labels=classes)


def test_final_script_calibrates_logloss_probabilities_on_out_of_fold_predictions(noisy):
    script = noisy.ok("init", task_description="", model_name="random forest", example_code="").code
    calibrated = noisy.ok("test", **{"task description": "", "final solution": script}).code
    assert "calibration = fit_calibration(val_blend, y_score)" in calibrated
    assert "calibrate" not in script            # search scripts compare raw out-of-fold scores
    # The same final script without calibration, to grade both on the held-out answers.
    spec = parse_spec(calibrated)
    spec["train"]["calibrate"] = False
    plain = calibrated.replace(section_block(calibrated, "TRAINING_TRICKS"), render_section(spec, "TRAINING_TRICKS"), 1)
    assert "fit_calibration" not in plain and 'FINAL_FIT = "full"' in plain
    with_cal, without = noisy.run(calibrated), noisy.run(plain)
    assert with_cal.rc == 0 and without.rc == 0, with_cal.stderr + without.stderr
    assert "Calibration (temperature, floor)" in with_cal.stdout
    proba = with_cal.submission[["high", "low", "mid"]].to_numpy()
    assert (proba > 0).all() and abs(proba.sum(axis=1) - 1).max() < 1e-9
    assert _grade(noisy, with_cal.submission) < _grade(noisy, without.submission) - 0.02
