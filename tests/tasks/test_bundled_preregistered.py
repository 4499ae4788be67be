"""The pre-registered held-out set of issue 64 (docs/heldout-protocol.md, "The pre-registered
held-out set"): every new task prepares offline and the same way every time, the set covers
every kind the criteria ask for, and no task ever registered held out leaves the protocol.

Only the tables and the prepared files are looked at here, never a model's score on them.
"""

from __future__ import annotations

import gzip
import json
from importlib import resources

import pandas as pd
import pytest

from engine.tasks import bundled
from engine.tasks.bundled_data import SPECS
from engine.tasks.bundled_heldout2 import HELDOUT2_SPECS
from engine.tasks.bundled_heldout3 import HELDOUT3_SPECS
from engine.tasks.bundled_islp import read_vendored
from engine.tasks.protocol import BURNED, DEVELOPMENT, EVER_HELD_OUT, HELD_OUT
from tests.tasks.bundled_checks import check_prepared, check_same_bytes, check_split, check_table, prepare_offline

# name: (rows, columns with the target, target, metric)
EXPECTED = {
    "census-occupation": (30709, 14, "occupation", "accuracy"),
    "bike-trip-duration": (4212, 9, "trip_seconds", "rmse"),
    "thyroid-hypothyroid": (3163, 19, "hypothyroid", "roc_auc"),
    "wine-low-quality": (1599, 12, "quality_4", "roc_auc"),
    "software-defects": (2109, 22, "defective", "roc_auc"),
    "german-credit-risk": (1000, 21, "bad", "roc_auc"),
    "batter-stolen-bases": (113082, 29, "stolen_bases", "rmse"),
    "player-salary": (26428, 30, "salary", "rmse"),
    "fielder-position": (47808, 28, "position", "accuracy"),
    "pitcher-strikeouts": (25050, 34, "strikeouts", "rmse"),
}
NEW = sorted(EXPECTED)
FILES = {
    "census-occupation": "mglearn_adult_occupation.csv.gz", "bike-trip-duration": "mglearn_citibike_trips.csv.gz",
    "thyroid-hypothyroid": "idb_hypothyroid.csv.gz", "wine-low-quality": "idb_winequality_red_4.csv.gz",
    "software-defects": "idb_kc1.csv.gz", "german-credit-risk": "idb_german_credit.csv.gz",
    "batter-stolen-bases": "lahman_batting_steals.csv.gz", "player-salary": "lahman_salaries.csv.gz",
    "fielder-position": "lahman_positions.csv.gz", "pitcher-strikeouts": "lahman_pitching_strikeouts.csv.gz",
}
REGISTRY = resources.files("engine.tasks") / "heldout_registry.json"


def test_the_new_tasks_are_the_modules_tasks_and_held_out():
    assert sorted(s.name for s in (*HELDOUT2_SPECS, *HELDOUT3_SPECS)) == NEW
    assert set(NEW) <= set(HELD_OUT) and not set(NEW) & set(DEVELOPMENT)
    assert len(NEW) >= 10


@pytest.mark.parametrize("name", NEW)
def test_the_table_has_its_rows_columns_target_and_metric(name):
    check_table(name, EXPECTED)


@pytest.mark.parametrize("name", NEW)
def test_the_split_is_the_same_every_time_and_holds_out_three_tenths(name):
    check_split(name)


def _frames() -> dict:
    return {name: SPECS[name].load() for name in NEW}


def test_the_set_covers_every_kind_the_criteria_ask_for():
    """Skewed and count regressions, a rare class, many classes, high-cardinality text, a table
    of 50k rows or more, missing values (docs/heldout-protocol.md)."""
    frames, regressions = _frames(), [n for n in NEW if SPECS[n].task_type.value == "regression"]
    target = {n: frames[n][SPECS[n].target] for n in NEW}
    assert target["player-salary"].skew() > 1 and target["bike-trip-duration"].skew() > 1   # skewed
    assert "player-salary" in regressions and "bike-trip-duration" in regressions
    steals = target["batter-stolen-bases"]                                                 # a count
    assert "batter-stolen-bases" in regressions and (steals >= 0).all() and (steals == steals.round()).all()
    assert any(SPECS[n].positive_class and 0 < target[n].mean() <= 0.10 for n in NEW)
    assert any(target[n].nunique() >= 10 for n in NEW if SPECS[n].task_type.value == "classification")
    assert any(frames[n][c].nunique() >= 300 for n in NEW for c in frames[n].columns
               if frames[n][c].dtype == object or str(frames[n][c].dtype).startswith("str"))
    assert any(len(frames[n]) >= 50_000 for n in NEW)
    assert sum(frames[n].drop(columns=SPECS[n].target).isna().any().any() for n in NEW) >= 3


def test_nothing_that_gives_the_target_away_is_kept():
    columns = {n: set(SPECS[n].load().columns) for n in ("bike-trip-duration", "batter-stolen-bases",
                                                         "fielder-position", "census-occupation")}
    assert "stoptime" not in columns["bike-trip-duration"]                          # start + duration
    assert "caught_stealing" not in columns["batter-stolen-bases"]                  # attempts - steals
    assert not [c for c in columns["fielder-position"] if c.startswith("g_")]       # games per position
    assert not {"playerid", "player_id", "name_first", "name_last", "bikeid"} & set().union(*columns.values())


@pytest.mark.parametrize("name", NEW)
def test_the_vendored_file_is_written_without_a_timestamp(name):
    file = FILES[name]
    pd.testing.assert_frame_equal(SPECS[name].load(), read_vendored(file))          # the task's table
    with (resources.files("engine.tasks") / "data" / file).open("rb") as handle:
        raw = handle.read()
    assert raw[4:8] == b"\0\0\0\0" and raw[10:10 + len(file) - 3] == file[:-3].encode()
    assert gzip.decompress(raw).count(b"\r") == 0


def test_every_task_ever_registered_held_out_is_still_in_the_protocol():
    """Rule 5: the registry only grows, and protocol.py keeps every task in it held out
    (burned ones included); a task that did badly cannot quietly leave."""
    registered = json.loads(REGISTRY.read_text(encoding="utf-8"))["tasks"]
    assert len(registered) == len(set(registered))
    assert set(registered) <= set(EVER_HELD_OUT), set(registered) - set(EVER_HELD_OUT)
    assert set(EVER_HELD_OUT) <= set(registered), "register the new held-out task in heldout_registry.json"


def test_burned_tasks_stay_registered_and_the_new_set_is_blind():
    assert set(BURNED) <= set(DEVELOPMENT) | set(HELD_OUT)
    assert {"athlete-weight", "galaxy-velocity"} <= set(BURNED) & set(DEVELOPMENT)  # read and moved before
    assert "film-oscar" in set(BURNED) & set(HELD_OUT)                             # decided 0028, still run
    # Added blind (rule 7): a task of the set burned since was read only after the set's first run
    # (2026-11-29), and its reason says when.
    assert all(BURNED[task][:10] > "2026-11-29" for task in set(NEW) & set(BURNED))
    assert all(reason.strip() for reason in BURNED.values())
    assert set(EVER_HELD_OUT) == set(HELD_OUT) | set(BURNED) and len(set(EVER_HELD_OUT)) == len(EVER_HELD_OUT)


# The reference model (the same code for every task) is stubbed: no model is fit on a held-out
# table here, so no score on it exists before its held-out run.
@pytest.fixture(scope="module")
def prepared(tmp_path_factory) -> dict:
    return prepare_offline(tmp_path_factory.mktemp("preregistered"), [], NEW)


@pytest.mark.parametrize("name", NEW)
def test_it_prepares_offline_with_its_answers_private(prepared, name):
    check_prepared(name, EXPECTED, prepared, [])


@pytest.mark.parametrize("name", NEW)
def test_preparing_it_twice_gives_the_same_bytes(prepared, name, tmp_path, monkeypatch):
    monkeypatch.setattr(bundled, "reference_score", lambda scoring, train, features, answers: 1.0)
    check_same_bytes(name, prepared[name], tmp_path)
