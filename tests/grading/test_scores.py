"""Grading matches scikit-learn computed by hand on fixed predictions, for every metric."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import (
    accuracy_score,
    f1_score,
    log_loss,
    mean_absolute_error,
    mean_squared_error,
    roc_auc_score,
)

from engine.grading.grader import grade_submission
from engine.tasks import load_task
from tests.tasks.helpers import write_split_task


def _answers(prepared, name):
    return pd.read_csv(prepared[name] / "prepared/private/answers.csv")


def _grade(task, frame, path):
    frame.to_csv(path, index=False)
    report = grade_submission(task, path)
    assert report.valid_submission and report.submission_exists, report.reason
    return report


def test_breast_cancer_roc_auc(prepared, tmp_path):
    answers = _answers(prepared, "breast-cancer")
    p = np.random.default_rng(0).uniform(size=len(answers))
    p = np.clip(0.6 * answers["malignant"] + 0.4 * p, 0, 1)
    sub = pd.DataFrame({"id": answers["id"], "malignant": p})
    report = _grade(load_task(prepared["breast-cancer"]), sub, tmp_path / "s.csv")
    assert report.score == pytest.approx(roc_auc_score(answers["malignant"], p))
    assert report.is_lower_better is False


@pytest.mark.parametrize("name,target", [("wine", "cultivar"), ("penguins", "species")])
def test_accuracy(prepared, tmp_path, name, target):
    answers = _answers(prepared, name)
    labels = sorted(answers[target].unique())
    rng = np.random.default_rng(1)
    predicted = np.where(rng.uniform(size=len(answers)) < 0.7, answers[target],
                         rng.choice(labels, size=len(answers)))
    sub = pd.DataFrame({"id": answers["id"], target: predicted})
    report = _grade(load_task(prepared[name]), sub, tmp_path / "s.csv")
    assert report.score == pytest.approx(accuracy_score(answers[target], predicted))


def test_diabetes_rmse(prepared, tmp_path):
    answers = _answers(prepared, "diabetes")
    predicted = answers["progression"] + np.random.default_rng(2).normal(0, 40, len(answers))
    sub = pd.DataFrame({"id": answers["id"], "progression": predicted})
    report = _grade(load_task(prepared["diabetes"]), sub, tmp_path / "s.csv")
    expected = math.sqrt(mean_squared_error(answers["progression"], predicted))
    assert report.score == pytest.approx(expected)
    assert report.is_lower_better is True


def test_iris_multiclass_logloss(prepared, tmp_path):
    answers = _answers(prepared, "iris")
    classes = ["setosa", "versicolor", "virginica"]
    raw = np.random.default_rng(3).dirichlet([1, 1, 1], size=len(answers))
    onehot = (answers["species"].to_numpy()[:, None] == np.array(classes)).astype(float)
    proba = 0.5 * raw + 0.5 * onehot
    sub = pd.DataFrame(proba, columns=classes)
    sub.insert(0, "id", answers["id"])
    report = _grade(load_task(prepared["iris"]), sub, tmp_path / "s.csv")
    assert report.score == pytest.approx(log_loss(answers["species"], proba, labels=classes))


def test_row_order_of_the_submission_does_not_matter(prepared, tmp_path):
    answers = _answers(prepared, "diabetes")
    predicted = answers["progression"] * 0.9
    sub = pd.DataFrame({"id": answers["id"], "progression": predicted})
    task = load_task(prepared["diabetes"])
    straight = _grade(task, sub, tmp_path / "a.csv").score
    shuffled = _grade(task, sub.sample(frac=1, random_state=0), tmp_path / "b.csv").score
    assert straight == pytest.approx(shuffled)


def test_perfect_and_naive_submissions_against_medals(prepared, tmp_path):
    task = load_task(prepared["wine"])
    answers = _answers(prepared, "wine")
    perfect = _grade(task, answers, tmp_path / "p.csv")
    assert perfect.score == 1.0
    assert perfect.gold_medal and perfect.any_medal and perfect.above_median
    assert not (perfect.silver_medal or perfect.bronze_medal)  # medals are exclusive
    sample = pd.read_csv(task.sample_submission)
    naive = _grade(task, sample, tmp_path / "n.csv")
    assert not (naive.any_medal or naive.above_median)
    assert naive.gold_threshold == task.leaderboard.gold


# --- metrics used by no bundled task, on hand-built tasks --------------------------------

BINARY = pd.DataFrame({"id": range(8), "label": [0, 1, 1, 0, 1, 0, 1, 1]})
PROBS = np.array([0.2, 0.7, 0.4, 0.1, 0.9, 0.6, 0.8, 0.3])


def _task(tmp_path, metric, answers, sample, **meta):
    return load_task(write_split_task(tmp_path / "t", answers, sample,
                                      meta={"evaluation_metric": metric, **meta}))


def test_binary_logloss(tmp_path):
    sub = pd.DataFrame({"id": BINARY["id"], "label": PROBS})
    task = _task(tmp_path, "logloss", BINARY, sub)
    expected = log_loss(BINARY["label"], PROBS)
    assert _grade(task, sub, tmp_path / "s.csv").score == pytest.approx(expected)


def test_binary_f1_and_mae(tmp_path):
    labels = (PROBS > 0.5).astype(int)
    sub = pd.DataFrame({"id": BINARY["id"], "label": labels})
    task = _task(tmp_path / "f1", "f1", BINARY, sub)
    assert _grade(task, sub, tmp_path / "f.csv").score == pytest.approx(f1_score(BINARY["label"], labels))
    values = pd.DataFrame({"id": BINARY["id"], "label": PROBS * 2})
    task = _task(tmp_path / "mae", "mae", BINARY, values)
    expected = mean_absolute_error(BINARY["label"], PROBS * 2)
    assert _grade(task, values, tmp_path / "m.csv").score == pytest.approx(expected)


def test_multiclass_ovr_auc_and_macro_f1(tmp_path):
    answers = pd.DataFrame({"id": range(9), "kind": list("abcabcabc")})
    proba = np.random.default_rng(4).dirichlet([1, 1, 1], size=9)
    sub = pd.DataFrame(proba, columns=["a", "b", "c"])
    sub.insert(0, "id", answers["id"])
    task = _task(tmp_path / "auc", "roc_auc", answers, sub, answer_column="kind")
    expected = roc_auc_score(answers["kind"], proba, multi_class="ovr", labels=["a", "b", "c"])
    assert _grade(task, sub, tmp_path / "a.csv").score == pytest.approx(expected)

    labels = np.array(list("abcaacbbc"))
    sub = pd.DataFrame({"id": answers["id"], "kind": labels})
    task = _task(tmp_path / "f1", "f1", answers, sub)
    expected = f1_score(answers["kind"], labels, average="macro")
    assert _grade(task, sub, tmp_path / "f.csv").score == pytest.approx(expected)


def test_REQ_DM_029_a_threshold_reached_exactly_earns_the_medal_but_the_median_must_be_beaten(tmp_path):
    """Medals through ``events.score.Score``: reaching a threshold, ties included, is ``at_least``;
    ``above_median`` is strictly better; a task without a threshold awards nothing for it."""
    values = pd.DataFrame({"id": BINARY["id"], "label": BINARY["label"] + 0.5})   # MAE 0.5 (lower is better)
    tied = _task(tmp_path / "tied", "mae", BINARY, values,
                 leaderboard={"gold": 0.5, "silver": 0.6, "bronze": 0.7, "median": 0.5})
    report = _grade(tied, values, tmp_path / "t.csv")
    assert report.score == pytest.approx(0.5)
    assert report.gold_medal and not report.above_median
    worse = _task(tmp_path / "worse", "mae", BINARY, values, leaderboard={"silver": 0.4, "bronze": 0.6, "median": 0.7})
    report = _grade(worse, values, tmp_path / "w.csv")
    assert report.bronze_medal and not (report.gold_medal or report.silver_medal) and report.above_median
