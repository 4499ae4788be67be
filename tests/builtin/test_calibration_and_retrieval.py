"""Issue 19: what a careful engineer checks before choosing models and submitting probabilities.

* Retrieval proposes a regularised linear model second, where a second gradient booster would
  add little to a blend (iris: test logloss 0.84 -> 0.09 at --time-limit 120).
* On many classes the forests lead: a boosting round grows a tree per class, a forest's tree
  serves them all (zip-state, 52 classes: LightGBM's draft took twice Phase 1's window at 120 s).
* For log-loss tasks the final script calibrates its class probabilities (temperature and a
  floor) on out-of-fold predictions and reports a cross-fitted score; graded on held-out
  answers, the calibrated submission beats the same script without calibration.
"""

from __future__ import annotations

import pandas as pd
import pytest
from conftest import Env
from sklearn.metrics import log_loss

from engine.agents.builtin.catalog import FORESTS, MANY_CLASSES, PREFERENCE, retrieval_order
from engine.agents.builtin.render import render_section
from engine.agents.builtin.spec import parse_spec, section_block
from engine.agents.builtin.target_classes import class_count
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


@pytest.mark.parametrize("kind", ["classification", "regression"])
@pytest.mark.parametrize("classes", [None, 2, MANY_CLASSES])
def test_retrieval_order_is_unchanged_up_to_many_classes(kind, classes):
    assert retrieval_order(kind, classes) == retrieval_order(kind)


def test_retrieval_puts_the_forests_first_past_many_classes():
    order = retrieval_order("classification", MANY_CLASSES + 1)
    assert order[0] == FORESTS[0] and order[1] == "linear" and order[2] == FORESTS[1]
    assert order[3:] == [k for k in retrieval_order("classification") if k not in (*FORESTS, "linear")]
    assert retrieval_order("regression", 500) == retrieval_order("regression")  # a count is no class


def test_retriever_reads_the_class_count_off_the_task_files_and_drafts_a_forest_first(tmp_path_factory):
    regions = Env("regions", tmp_path_factory.mktemp("regions"))
    assert class_count(regions.data_dir) == 16
    out = RetrieverOutput.model_validate(regions.ok("retriever", task_description="", M=3).structured)
    assert ["RandomForestClassifier" in out.models[0].model_name, "LogisticRegression" in out.models[1].model_name,
            "ExtraTreesClassifier" in out.models[2].model_name] == [True, True, True]


def test_class_count_finds_the_target_as_the_scripts_do(tmp_path):
    def task(train: str, sample: str) -> int | None:
        d = tmp_path / str(len(list(tmp_path.iterdir())))
        d.mkdir()
        (d / "train.csv").write_text(train)
        (d / "sample_submission.csv").write_text(sample)
        return class_count(d)

    # one label column that train has: its distinct non-empty values (the id column is not it)
    assert task("id,x,y\n1,0,a\n2,1,b\n3,2,a\n4,3,\n5,4,\"c, d\"\n", "id,y\n9,a\n") == 3
    # one probability column per class: the columns are the classes
    assert task("id,x,label\n1,0,p\n", "id,p,q,r,s\n9,.25,.25,.25,.25\n") == 4
    # nothing to read: no count, and the default order follows
    assert task("id,x,y\n", "id,y\n") is None
    assert class_count(tmp_path / "missing") is None
    binary = tmp_path / "binary"
    binary.mkdir()
    (binary / "train.csv").write_text("id,y\n1,a\n")
    (binary / "sample_submission.csv").write_bytes(b"\xff\xfe\x00i\x00d\n")  # not text: no count
    assert class_count(binary) is None


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
