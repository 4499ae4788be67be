"""The competition-like bundled tasks built from ISLP's vendored tables (issue 19).

They must look like real competitions: 1k-50k rows, text categoricals, missing values, an
imbalanced binary target, >= 5 classes, a skewed regression target; prepared offline, byte for
byte the same twice, and never carrying answers into public files.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from engine.grading.grader import grade_submission
from engine.tasks import list_bundled, load_task, naive_baseline_score, prepare_bundled
from engine.tasks.bundled_islp import blank_cells

COMPETITION = ["wage-education", "bike-sharing", "caravan-insurance", "credit-default"]


@pytest.fixture(scope="module")
def islp_tasks(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("islp")
    return {name: prepare_bundled(name, root / name) for name in COMPETITION}


def _frames(root: Path) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    base = root / "prepared"
    return (pd.read_csv(base / "public/train.csv"), pd.read_csv(base / "public/test.csv"),
            pd.read_csv(base / "private/answers.csv"))


def test_competition_tasks_are_listed_with_their_metrics():
    infos = {i.name: i for i in list_bundled()}
    assert {n: (infos[n].metric, infos[n].task_type) for n in COMPETITION} == {
        "wage-education": ("logloss", "classification"),
        "bike-sharing": ("rmse", "regression"),
        "caravan-insurance": ("roc_auc", "classification"),
        "credit-default": ("roc_auc", "classification"),
    }
    assert all(1000 <= infos[n].rows <= 50000 for n in COMPETITION)


def test_prepared_twice_gives_the_same_bytes(islp_tasks, tmp_path):
    again = prepare_bundled("wage-education", tmp_path / "again")
    for rel in ("public/train.csv", "public/test.csv", "private/answers.csv", "task.json"):
        first = (islp_tasks["wage-education"] / "prepared" / rel).read_bytes()
        assert first == (again / "prepared" / rel).read_bytes(), rel


@pytest.mark.parametrize("name", COMPETITION)
def test_test_features_hold_no_target_and_ids_match_answers(name, islp_tasks):
    train, test, answers = _frames(islp_tasks[name])
    target = answers.columns[1]
    assert target in train.columns and target not in test.columns
    assert list(test["id"]) == list(answers["id"])
    assert set(train["id"]).isdisjoint(test["id"])


def test_the_set_covers_the_kinds_a_competition_has(islp_tasks):
    wage_train, _, _ = _frames(islp_tasks["wage-education"])
    assert wage_train["education"].nunique() == 5
    assert (wage_train[["maritl", "health", "health_ins", "wage"]].isna().mean() > 0.02).all()
    assert not pd.api.types.is_numeric_dtype(wage_train["region"])

    caravan, _, _ = _frames(islp_tasks["caravan-insurance"])
    assert 0.03 < caravan["purchase"].mean() < 0.1  # imbalanced binary
    assert caravan["MOSTYPE"].str.startswith("subtype_").all()

    credit, _, credit_answers = _frames(islp_tasks["credit-default"])
    assert credit["default"].mean() < 0.05
    assert credit["income"].isna().mean() > 0.05 and credit["student"].isna().any()
    assert credit_answers["default"].mean() == pytest.approx(credit["default"].mean(), abs=0.005)

    bikes, _, _ = _frames(islp_tasks["bike-sharing"])
    assert bikes["bikers"].skew() > 1.0  # a long right tail
    assert {"casual", "registered"}.isdisjoint(bikes.columns)  # they add up to the target
    assert not pd.api.types.is_numeric_dtype(bikes["weathersit"])


@pytest.mark.parametrize("name", COMPETITION)
def test_leaderboard_beats_the_naive_baseline(name, islp_tasks):
    task = load_task(islp_tasks[name])
    sign = 1 if task.direction.value == "maximize" else -1
    assert sign * (task.leaderboard.reference_score - naive_baseline_score(task)) > 0


def test_blank_cells_is_seeded_and_leaves_other_columns_alone():
    frame = pd.DataFrame({"a": range(1000), "b": ["x"] * 1000, "c": range(1000)})
    first = blank_cells(frame, {"a": 0.1, "b": 0.2}, seed=5)
    assert first.equals(blank_cells(frame, {"a": 0.1, "b": 0.2}, seed=5))
    assert 0.07 < first["a"].isna().mean() < 0.13 and 0.16 < first["b"].isna().mean() < 0.24
    assert first["c"].equals(frame["c"]) and not frame.isna().any(axis=None)


@pytest.mark.parametrize("name", COMPETITION)
def test_the_sample_and_a_perfect_submission_grade(name, islp_tasks, tmp_path):
    """Grading works on each task: the sample submission is valid and no better than a perfect
    one built from the answers (which scores the metric's best)."""
    task = load_task(islp_tasks[name])
    public = islp_tasks[name] / "prepared" / "public"
    sample = pd.read_csv(public / "sample_submission.csv")
    _, _, answers = _frames(islp_tasks[name])
    target = answers.columns[1]
    perfect = sample.copy()
    if len(sample.columns) > 2:  # one probability column per class
        for col in sample.columns[1:]:
            perfect[col] = (answers[target].astype(str) == str(col)).astype(float).to_numpy()
    else:
        perfect[sample.columns[1]] = answers[target].to_numpy()
    perfect.to_csv(tmp_path / "perfect.csv", index=False)

    baseline = grade_submission(task, public / "sample_submission.csv")
    best = grade_submission(task, tmp_path / "perfect.csv")
    assert baseline.valid_submission and best.valid_submission, (baseline, best)
    expected = {"roc_auc": 1.0, "rmse": 0.0, "logloss": 0.0}[task.scoring.metric]
    assert best.score == pytest.approx(expected, abs=1e-6)
    sign = 1 if task.direction.value == "maximize" else -1
    assert sign * (best.score - baseline.score) > 0
