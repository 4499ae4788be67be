"""The metrics Kaggle grades MLE-bench's competitions by, against scikit-learn or by hand, through
`engine grade` exactly as a user calls it; and their names as Kaggle's pages spell them."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import typer
from sklearn.metrics import (
    balanced_accuracy_score,
    cohen_kappa_score,
    f1_score,
    mean_absolute_error,
    mean_squared_error,
    mean_squared_log_error,
    roc_auc_score,
)
from typer.testing import CliRunner

from engine.cli.tasks import grade_cmd
from engine.tasks import load_task
from engine.tasks.metrics import canonical_metric, metric_info
from events.domain import MetricDirection
from tests.tasks.helpers import write_split_task

runner = CliRunner()
RNG = np.random.default_rng(7)
N = 60
IDS = list(range(1000, 1000 + N))


@pytest.fixture(scope="module")
def app() -> typer.Typer:
    app = typer.Typer()
    app.command("grade")(grade_cmd)
    app.command("noop")(lambda: None)  # a second command keeps `grade` a sub-command
    return app


def _grade(app, tmp_path, metric: str, answers: pd.DataFrame, submission: pd.DataFrame) -> dict:
    sample = answers.copy()
    root = write_split_task(tmp_path / "task", answers, sample, meta={"evaluation_metric": metric})
    submission.to_csv(tmp_path / "submission.csv", index=False)
    result = runner.invoke(app, ["grade", "--task", str(root), "--submission", str(tmp_path / "submission.csv"),
                                 "--json"])
    assert result.exit_code in (0, 1), result.output
    return json.loads(result.stdout)


def _frame(**columns: object) -> pd.DataFrame:
    return pd.DataFrame({"id": IDS, **columns})


def test_two_ordinal_targets_by_quadratic_weighted_kappa(app, tmp_path):
    quality, sweetness = RNG.integers(3, 9, N), RNG.integers(0, 4, N)
    guess_q = np.clip(quality + RNG.integers(-1, 2, N), 3, 8)
    guess_s = np.clip(sweetness + RNG.integers(-1, 2, N), 0, 3)
    report = _grade(app, tmp_path, "Quadratic Weighted Kappa", _frame(quality=quality, sweetness=sweetness),
                    _frame(quality=guess_q, sweetness=guess_s))
    expected = np.mean([cohen_kappa_score(quality, guess_q, weights="quadratic"),
                        cohen_kappa_score(sweetness, guess_s, weights="quadratic")])
    assert report["valid_submission"] and report["score"] == pytest.approx(expected)
    assert report["metric"] == "quadratic_weighted_kappa" and not report["is_lower_better"]


def test_class_probabilities_in_a_kappa_submission_are_invalid(app, tmp_path):
    """The issue's wine run: probabilities of `quality` in both columns is not a QWK submission."""
    quality = RNG.integers(3, 9, N)
    report = _grade(app, tmp_path, "qwk", _frame(quality=quality), _frame(quality=RNG.uniform(size=N)))
    assert not report["valid_submission"] and "not a whole rating" in report["reason"]


def test_rmsle(app, tmp_path):
    truth, guess = RNG.uniform(0, 100, N), RNG.uniform(0, 100, N)
    report = _grade(app, tmp_path, "Root Mean Squared Logarithmic Error", _frame(price=truth), _frame(price=guess))
    assert report["score"] == pytest.approx(np.sqrt(mean_squared_log_error(truth, guess)))
    bad = _grade(app, tmp_path / "b", "rmsle", _frame(price=truth), _frame(price=guess - 200))
    assert not bad["valid_submission"] and "<= -1" in bad["reason"]


def test_map_at_3_by_hand(app, tmp_path):
    answers = pd.DataFrame({"id": [1, 2, 3, 4], "place": ["a", "b", "c", "d"]})
    guesses = pd.DataFrame({"id": [1, 2, 3, 4], "place": ["a b c", "c b a", "x y c", "a b c"]})
    report = _grade(app, tmp_path, "MAP@3", answers, guesses)
    assert report["metric"] == "map@3" and report["score"] == pytest.approx((1 + 1 / 2 + 1 / 3 + 0) / 4)
    too_many = guesses.assign(place="a b c d")
    assert not _grade(app, tmp_path / "b", "map@3", answers, too_many)["valid_submission"]


def test_mean_columnwise_roc_auc_of_six_labels(app, tmp_path):
    names = ["toxic", "severe", "obscene", "threat", "insult", "hate"]
    truth = {c: RNG.integers(0, 2, N) for c in names}
    guess = {c: np.clip(0.5 * truth[c] + RNG.uniform(size=N) * 0.7, 0, 1) for c in names}
    report = _grade(app, tmp_path, "mean column-wise ROC AUC", _frame(**truth), _frame(**guess))
    expected = np.mean([roc_auc_score(truth[c], guess[c]) for c in names])
    assert report["valid_submission"] and report["score"] == pytest.approx(expected)


def test_mcrmse_of_two_targets(app, tmp_path):
    a, b = RNG.normal(size=N), RNG.normal(size=N)
    ga, gb = a + RNG.normal(0, 0.3, N), b + RNG.normal(0, 0.5, N)
    report = _grade(app, tmp_path, "MCRMSE", _frame(formation=a, bandgap=b), _frame(formation=ga, bandgap=gb))
    expected = np.mean([np.sqrt(mean_squared_error(a, ga)), np.sqrt(mean_squared_error(b, gb))])
    assert report["score"] == pytest.approx(expected) and report["is_lower_better"]


@pytest.mark.parametrize("metric,score", [
    ("Mean Absolute Error", lambda t, g: mean_absolute_error(t.astype(float), g.astype(float))),
    ("Macro F1 Score", lambda t, g: f1_score(t, g, average="macro")),
    ("Balanced Accuracy", balanced_accuracy_score),
])
def test_label_and_value_metrics(app, tmp_path, metric, score):
    truth = RNG.integers(0, 4, N)
    guess = np.where(RNG.uniform(size=N) < 0.6, truth, RNG.integers(0, 4, N))
    report = _grade(app, tmp_path, metric, _frame(y=truth), _frame(y=guess))
    assert report["score"] == pytest.approx(score(truth, guess))


@pytest.mark.parametrize("spelling,canonical", [
    ("Quadratic Weighted Kappa", "quadratic_weighted_kappa"), ("QWK", "quadratic_weighted_kappa"),
    ("Root Mean Squared Logarithmic Error", "rmsle"), ("RMSLE", "rmsle"),
    ("MAP@3", "map@3"), ("Mean Average Precision @ 5", "map@5"), ("map@12", "map@12"),
    ("Mean Column-wise ROC AUC", "mean_columnwise_roc_auc"), ("mean columnwise AUC", "mean_columnwise_roc_auc"),
    ("Multi-class Log Loss", "logloss"), ("MCRMSE", "mcrmse"), ("Mean Absolute Error", "mae"),
    ("Macro F1", "f1_macro"), ("Balanced Accuracy", "balanced_accuracy"),
])
def test_metric_names_as_kaggle_spells_them(spelling, canonical):
    assert canonical_metric(spelling) == canonical


def test_every_metric_has_a_direction_and_a_submission_form():
    for name in ("quadratic_weighted_kappa", "rmsle", "map@3", "mean_columnwise_roc_auc", "logloss",
                 "mcrmse", "mae", "f1_macro", "balanced_accuracy"):
        info = metric_info(name)
        assert info.form and isinstance(info.direction, MetricDirection)
    assert metric_info("map@3").form.startswith("up to 3 class labels")


def test_the_loader_and_the_grader_share_the_registry(tmp_path):
    answers = _frame(quality=RNG.integers(3, 9, N))
    root = write_split_task(tmp_path / "t", answers, answers, meta={"evaluation_metric": "Quadratic Weighted Kappa"})
    assert load_task(root).metric == "quadratic_weighted_kappa"
