"""The held-out set since 2026-11-26 (docs/heldout-protocol.md): four vega-datasets tables no run
of the agent had seen. Each prepares offline, has the rows, columns, target and metric it should,
splits the same way every time and keeps out what would give the answer away.

Only the tables and the prepared files are looked at here, never a model's score on them.
"""

from __future__ import annotations

import socket

import pandas as pd
import pytest

from engine.tasks import load_task, prepare_bundled
from engine.tasks.bundled import TEST_FRACTION, _split
from engine.tasks.bundled_data import SPECS
from engine.tasks.protocol import DEVELOPMENT, HELD_OUT

# name: (rows, columns with the target, target, metric)
EXPECTED = {
    "movie-genre": (2921, 15, "genre", "logloss"),
    "life-expectancy": (682, 6, "life_expect", "rmse"),
    "industry-unemployment": (1708, 4, "unemployed", "rmse"),
    "annual-precipitation": (60480, 3, "precipitation", "rmse"),
}


def test_the_held_out_set_is_the_four_new_tables_and_none_is_a_development_task():
    assert sorted(HELD_OUT) == sorted(EXPECTED)
    assert not set(HELD_OUT) & set(DEVELOPMENT)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_table_has_its_rows_columns_target_and_metric(name):
    rows, columns, target, metric = EXPECTED[name]
    spec, frame = SPECS[name], SPECS[name].load()
    assert frame.shape == (rows, columns)
    assert spec.target == target == frame.columns[-1] and spec.metric == metric
    assert frame[target].notna().all()
    assert spec.seed not in {s.seed for s in SPECS.values() if s.name != name}    # its own split


def test_the_tables_widen_coverage_with_nothing_that_gives_the_answer_away():
    movies = SPECS["movie-genre"].load()
    genres = movies["genre"].value_counts()
    assert len(genres) == 11 and genres.min() >= 20                          # many classes, each splittable
    assert genres.index.str.fullmatch(r"[a-z_]+").all()                      # usable as column names
    assert movies["director"].nunique() > 500 and movies["distributor"].nunique() > 150   # high cardinality
    assert movies[["running_time_min", "mpaa_rating", "director"]].isna().any().all()    # missing values
    assert not {"title", "major_genre"} & set(movies.columns)                 # unique per film; the answer
    life = SPECS["life-expectancy"].load()
    assert life["country"].nunique() == 62 and sorted(life["year"].unique()) == list(range(1955, 2006, 5))
    jobs = SPECS["industry-unemployment"].load()
    assert jobs["series"].nunique() == 14 and not {"rate", "count", "date"} & set(jobs.columns)
    assert pd.api.types.is_integer_dtype(jobs["unemployed"]) and jobs["unemployed"].min() > 0     # a count
    rain = SPECS["annual-precipitation"].load()
    assert len(rain) > 50000 and rain["precipitation"].skew() > 2            # a large table, a long tail
    assert rain[["longitude", "latitude"]].duplicated().sum() == 0
    assert (rain["longitude"].min(), rain["longitude"].max()) == (-180, 179)
    assert (rain["latitude"].min(), rain["latitude"].max()) == (-80, 87)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_split_is_the_same_every_time_and_holds_out_three_tenths(name):
    spec = SPECS[name]
    (train, test), (train_again, test_again) = _split(spec), _split(spec)
    pd.testing.assert_frame_equal(train, train_again)
    pd.testing.assert_frame_equal(test, test_again)
    assert abs(len(test) / (len(train) + len(test)) - TEST_FRACTION) < 0.01
    assert not set(train["id"]) & set(test["id"])
    if spec.task_type.value == "classification":
        assert set(train[spec.target]) == set(test[spec.target])              # every class on both sides


def _no_network(*args, **kwargs):
    raise AssertionError("preparing a bundled task tried to open a network connection")


@pytest.fixture(scope="module")
def prepared(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("heldout")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(socket.socket, "connect", _no_network)
        return {name: prepare_bundled(name, root / name) for name in EXPECTED}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_task_prepares_offline_with_its_answers_private(name, prepared):
    task = load_task(prepared[name])
    train, test, answers = pd.read_csv(task.train_file), pd.read_csv(task.test_file), pd.read_csv(task.answers)
    rows, columns, target, metric = EXPECTED[name]
    assert len(train) + len(test) == rows and target in train.columns and target not in test.columns
    assert list(test.columns) == ["id", *[c for c in train.columns if c not in ("id", target)]]
    assert list(test["id"]) == list(answers["id"])
    if SPECS[name].per_class_probabilities:                                  # one column per genre
        assert sorted(task.target_columns) == sorted(train[target].unique())
    assert task.metric == metric and task.bundled == name
    board = task.leaderboard
    assert board.reference_score is not None and board.naive_baseline is not None


def test_a_held_out_task_prepares_to_the_same_bytes_twice(prepared, tmp_path):
    again = prepare_bundled("life-expectancy", tmp_path / "life-expectancy")
    for rel in ("public/train.csv", "public/test.csv", "public/sample_submission.csv", "public/description.md",
                "private/answers.csv", "task.json"):
        assert (prepared["life-expectancy"] / "prepared" / rel).read_bytes() == (again / "prepared" / rel).read_bytes(), rel
