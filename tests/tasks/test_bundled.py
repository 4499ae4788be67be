"""Bundled tasks: layout, determinism, no leak of answers, baselines, leaderboards."""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import accuracy_score, log_loss, mean_squared_error

from engine.tasks import (
    TaskError,
    bundled_names,
    list_bundled,
    load_task,
    naive_baseline_score,
    prepare_bundled,
    resolve_task,
)
from tests.tasks.helpers import BUNDLED

FILES = [
    "prepared/public/train.csv",
    "prepared/public/test.csv",
    "prepared/public/sample_submission.csv",
    "prepared/public/description.md",
    "prepared/private/answers.csv",
    "prepared/task.json",
]


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_list_bundled_covers_the_required_kinds():
    infos = {i.name: i for i in list_bundled()}
    assert set(BUNDLED) <= set(infos)
    assert (infos["breast-cancer"].metric, infos["breast-cancer"].rows) == ("roc_auc", 569)
    assert (infos["wine"].metric, infos["wine"].rows) == ("accuracy", 178)
    assert (infos["diabetes"].metric, infos["diabetes"].task_type) == ("rmse", "regression")
    assert (infos["penguins"].metric, infos["penguins"].rows) == ("accuracy", 344)
    assert all(i.description for i in infos.values())
    assert bundled_names() == list(infos)  # the names alone, in the listing's order, without reading data


@pytest.mark.parametrize("name", BUNDLED)
def test_prepare_is_deterministic_and_complete(name, prepared, tmp_path):
    again = prepare_bundled(name, tmp_path / name)
    first, second = _tree(prepared[name]), _tree(again)
    assert sorted(first) == sorted(FILES)
    assert first == second  # same bytes, file for file


@pytest.mark.parametrize("name", BUNDLED)
def test_answers_never_reach_public(name, prepared):
    task = load_task(prepared[name])
    public = {p.name for p in task.public_dir.rglob("*")}
    assert public == {"train.csv", "test.csv", "sample_submission.csv", "description.md"}
    assert not task.answers.is_relative_to(task.public_dir)
    train, test = pd.read_csv(task.train_file), pd.read_csv(task.test_file)
    answers = pd.read_csv(task.answers)
    truth = [c for c in answers.columns if c != "id"]
    assert not set(truth) & set(test.columns)
    assert not set(test["id"]) & set(train["id"])
    assert sorted(test["id"]) == sorted(answers["id"])
    # Ids are shuffled: the test set is not a contiguous block of ids.
    assert test["id"].max() - test["id"].min() + 1 > len(test)
    assert "Final Validation Performance" not in (task.public_dir / "description.md").read_text()


def test_prepare_is_idempotent_and_repairs(tmp_path):
    dest = prepare_bundled("wine", tmp_path / "wine")
    answers = dest / "prepared/private/answers.csv"
    stamp = answers.stat().st_mtime_ns
    os.utime(answers, ns=(stamp - 10**9, stamp - 10**9))
    before = answers.stat().st_mtime_ns
    assert prepare_bundled("wine", dest) == dest
    assert answers.stat().st_mtime_ns == before  # nothing rewritten
    original = answers.read_bytes()
    answers.write_text("id,cultivar\n")  # tampered: the next prepare rewrites it
    prepare_bundled("wine", dest)
    assert answers.read_bytes() == original


def test_prepare_refuses_a_directory_holding_another_task(tmp_path):
    prepare_bundled("wine", tmp_path / "x")
    with pytest.raises(TaskError, match="already holds bundled task 'wine'"):
        prepare_bundled("iris", tmp_path / "x")


def test_unknown_bundled_name_lists_the_known_ones(tmp_path):
    with pytest.raises(TaskError) as err:
        prepare_bundled("titanic", tmp_path)
    assert "unknown bundled task 'titanic'" in str(err.value)
    assert all(name in str(err.value) for name in BUNDLED)


def test_penguins_keeps_missing_values_and_text_columns(prepared):
    train = pd.read_csv(prepared["penguins"] / "prepared/public/train.csv")
    test = pd.read_csv(prepared["penguins"] / "prepared/public/test.csv")
    both = pd.concat([train, test])
    assert both["sex"].isna().sum() == 11
    assert both["bill_length_mm"].isna().sum() == 2
    assert not pd.api.types.is_numeric_dtype(both["island"])
    assert set(train["species"]) == {"Adelie", "Chinstrap", "Gentoo"}


def test_split_is_stratified(prepared):
    train = pd.read_csv(prepared["wine"] / "prepared/public/train.csv")
    answers = pd.read_csv(prepared["wine"] / "prepared/private/answers.csv")
    full = pd.concat([train["cultivar"], answers["cultivar"]]).value_counts()
    test_share = answers["cultivar"].value_counts() / full
    assert np.allclose(test_share, 0.3, atol=0.02)


def test_sample_submissions_are_trivial_and_well_formed(prepared):
    bc = pd.read_csv(prepared["breast-cancer"] / "prepared/public/sample_submission.csv")
    assert list(bc.columns) == ["id", "malignant"] and (bc["malignant"] == 0.5).all()
    iris = pd.read_csv(prepared["iris"] / "prepared/public/sample_submission.csv")
    assert list(iris.columns) == ["id", "setosa", "versicolor", "virginica"]
    diabetes = pd.read_csv(prepared["diabetes"] / "prepared/public/sample_submission.csv")
    assert (diabetes["progression"] == 0).all()
    test = pd.read_csv(prepared["diabetes"] / "prepared/public/test.csv")
    assert list(diabetes["id"]) == list(test["id"])


def _train_answers(prepared, name, target):
    root = prepared[name] / "prepared"
    return pd.read_csv(root / "public/train.csv")[target], pd.read_csv(root / "private/answers.csv")


def test_naive_baselines_match_hand_computation(prepared):
    assert naive_baseline_score(load_task(prepared["breast-cancer"])) == 0.5

    train, answers = _train_answers(prepared, "wine", "cultivar")
    majority = train.value_counts().idxmax()
    expected = accuracy_score(answers["cultivar"], [majority] * len(answers))
    assert naive_baseline_score(load_task(prepared["wine"])) == pytest.approx(expected)

    train, answers = _train_answers(prepared, "diabetes", "progression")
    expected = math.sqrt(mean_squared_error(answers["progression"], [train.mean()] * len(answers)))
    assert naive_baseline_score(load_task(prepared["diabetes"])) == pytest.approx(expected)

    train, answers = _train_answers(prepared, "penguins", "species")
    expected = (answers["species"] == train.value_counts().idxmax()).mean()
    assert naive_baseline_score(load_task(prepared["penguins"])) == pytest.approx(expected)

    train, answers = _train_answers(prepared, "iris", "species")
    classes = ["setosa", "versicolor", "virginica"]
    priors = train.value_counts(normalize=True)[classes].to_numpy()
    expected = log_loss(answers["species"], np.tile(priors, (len(answers), 1)), labels=classes)
    assert naive_baseline_score(load_task(prepared["iris"])) == pytest.approx(expected)


@pytest.mark.parametrize("name", BUNDLED)
def test_leaderboard_is_ordered_between_baseline_and_reference(name, prepared):
    task = load_task(prepared[name])
    board = task.leaderboard
    sign = 1 if task.direction.value == "maximize" else -1
    steps = [board.naive_baseline, board.median, board.bronze, board.silver, board.gold]
    assert all(sign * (b - a) >= 0 for a, b in zip(steps, steps[1:]))
    assert sign * (board.median - board.naive_baseline) > 0  # beating the floor is not enough
    assert board.gold == board.reference_score
    assert board.naive_baseline == pytest.approx(naive_baseline_score(task), abs=1e-6)


def test_resolve_task_prepares_a_name_and_loads_a_path(tmp_path, prepared):
    by_name = resolve_task("diabetes", tmp_path / "cache")
    assert by_name.root == (tmp_path / "cache" / "diabetes").resolve()
    assert by_name.metric == "rmse" and by_name.direction.value == "minimize"
    by_path = resolve_task(str(prepared["wine"]), tmp_path / "unused")
    assert by_path.competition_id == "wine"
    assert not (tmp_path / "unused").exists()
    with pytest.raises(TaskError, match="neither a bundled task"):
        resolve_task("no-such-task", tmp_path)
