"""The bundled tasks that widen coverage and the held-out protocol (issue 28): many classes, a
count, high-cardinality text, 50k rows, missing values; every task in exactly one set."""

from __future__ import annotations

import pandas as pd
import pytest

from engine.tasks import list_bundled, load_task, prepare_bundled
from engine.tasks.bundled import TEST_FRACTION, _split
from engine.tasks.bundled_data import SPECS
from engine.tasks.protocol import DEVELOPMENT, HELD_OUT, MEDIA_DEVELOPMENT, MEDIA_HELD_OUT, SETS, set_of

# Prepared in the tests (zip-state and flight-delay take longer: their loaders are checked instead).
PREPARED = ["digits", "seattle-weather", "football-goals", "bird-strike-damage", "earthquake-magnitude", "car-origin",
            "movie-genre", "life-expectancy", "industry-unemployment", "annual-precipitation"]
# Held out from 2026-11-25 to 2026-11-26.
FORMER_HELD_OUT = ("airport-state", "earthquake-magnitude", "car-origin", "species-habitat")
# Held out on 2026-11-26 until the second rotation that day (the held-out set of today:
# test_bundled_heldout.py). name: (rows, columns with the target, target, metric)
SECOND_HELD_OUT = {
    "movie-genre": (2921, 15, "genre", "logloss"),
    "life-expectancy": (682, 6, "life_expect", "rmse"),
    "industry-unemployment": (1708, 4, "unemployed", "rmse"),
    "annual-precipitation": (60480, 3, "precipitation", "rmse"),
}


def test_every_bundled_task_is_in_exactly_one_set_of_the_protocol():
    # The text and image tasks' sets are the protocol's too (issue 62; tests/tasks/test_bundled_media.py).
    assert sorted(SPECS) == sorted(DEVELOPMENT + HELD_OUT + MEDIA_DEVELOPMENT + MEDIA_HELD_OUT)
    assert not set(DEVELOPMENT) & set(HELD_OUT)
    assert {set_of(name) for name in DEVELOPMENT} == {"dev"} and {set_of(name) for name in HELD_OUT} == {"heldout"}
    assert set_of("my-own-task") is None and set(SETS) == {"dev", "heldout"}


def test_the_new_tasks_cover_what_the_old_ones_lacked():
    infos = {i.name: i for i in list_bundled()}
    frames = {name: SPECS[name].load() for name in ("digits", "football-goals", "flight-delay", "zip-state",
                                                      "bird-strike-damage")}
    assert frames["digits"]["digit"].nunique() == 10
    assert frames["zip-state"]["state"].nunique() >= 50                       # many classes
    assert infos["flight-delay"].rows >= 50000                                # a large table
    delay = frames["flight-delay"]["delay"]
    assert delay.min() < 0 and delay.skew() > 3                               # skewed, not a count
    goals = frames["football-goals"]["goals"]
    assert goals.min() == 0 and (goals == goals.round()).all()                # a count
    assert frames["football-goals"]["home_team"].nunique() > 100              # high-cardinality text
    assert frames["flight-delay"]["origin"].nunique() > 200
    birds = frames["bird-strike-damage"]
    assert birds["aircraft_make_model"].nunique() > 200 and birds["speed_ias_in_knots"].isna().any()
    assert 0.05 < birds["damaged"].mean() < 0.2                               # a rare positive class
    assert not any(c.startswith("cost") for c in birds.columns)               # costs would give damage away


def test_the_tasks_held_out_until_2026_11_26_have_nothing_that_gives_the_answer_away():
    """The second held-out set, development tasks since its runs were read (docs/heldout-protocol.md)."""
    frames = {name: SPECS[name].load() for name in FORMER_HELD_OUT}
    assert set(FORMER_HELD_OUT) <= set(DEVELOPMENT)
    airports = frames["airport-state"]
    counts = airports["state"].value_counts()
    assert len(counts) >= 40 and counts.min() >= 20                           # many classes, each splittable
    assert airports["city"].nunique() > 1000 and "iata" not in airports.columns
    quakes = frames["earthquake-magnitude"]
    assert quakes["mag"].min() < 0 < 6 < quakes["mag"].max()
    assert quakes[["nst", "dmin", "gap"]].isna().any().all()                 # missing station figures
    assert not {"title", "sig", "felt", "cdi", "mmi", "alert"} & set(quakes.columns)   # they state or follow from it
    cars = frames["car-origin"]
    assert sorted(cars["origin"].unique()) == ["Europe", "Japan", "USA"] and "name" not in cars.columns
    assert cars["horsepower"].isna().any() and len(cars) < 500               # small, with gaps
    habitat = frames["species-habitat"]
    assert habitat["common_name"].nunique() == 4 and habitat["county_id"].nunique() > 3000
    assert habitat["habitat_yearround_pct"].between(0, 1).all() and len(habitat) > 10000


@pytest.mark.parametrize("name", sorted(SECOND_HELD_OUT))
def test_the_tasks_held_out_until_the_second_rotation_keep_their_rows_target_and_split(name):
    """The third held-out set, development tasks since its runs were read (docs/heldout-protocol.md)."""
    rows, columns, target, metric = SECOND_HELD_OUT[name]
    spec, frame = SPECS[name], SPECS[name].load()
    assert set_of(name) == "dev"
    assert frame.shape == (rows, columns)
    assert spec.target == target == frame.columns[-1] and spec.metric == metric
    assert frame[target].notna().all()
    (train, test), (train_again, test_again) = _split(spec), _split(spec)
    pd.testing.assert_frame_equal(train, train_again)
    pd.testing.assert_frame_equal(test, test_again)
    assert abs(len(test) / (len(train) + len(test)) - TEST_FRACTION) < 0.01
    assert not set(train["id"]) & set(test["id"])
    if spec.task_type.value == "classification":
        assert set(train[spec.target]) == set(test[spec.target])              # every class on both sides


def test_the_tasks_held_out_until_the_second_rotation_have_nothing_that_gives_the_answer_away():
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


@pytest.fixture(scope="module")
def prepared(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("coverage")
    return {name: prepare_bundled(name, root / name) for name in PREPARED}


def test_a_new_task_prepares_to_the_same_bytes_twice(prepared, tmp_path):
    again = prepare_bundled("digits", tmp_path / "digits")
    for rel in ("public/train.csv", "public/test.csv", "private/answers.csv", "task.json"):
        assert (prepared["digits"] / "prepared" / rel).read_bytes() == (again / "prepared" / rel).read_bytes(), rel


@pytest.mark.parametrize("name", PREPARED)
def test_answers_stay_private_and_medal_thresholds_are_placed(name, prepared):
    task = load_task(prepared[name])
    test, answers = pd.read_csv(task.test_file), pd.read_csv(task.answers)
    assert SPECS[name].target not in test.columns
    assert list(test["id"]) == list(answers["id"])
    if SPECS[name].per_class_probabilities:                                  # one column per class
        assert sorted(task.target_columns) == sorted(pd.read_csv(task.train_file)[SPECS[name].target].unique())
    board = task.leaderboard
    assert board.reference_score is not None and board.naive_baseline is not None
    assert board.reference_score != board.naive_baseline
