"""batter-home-runs, held out from 2026-11-27 in galaxy-velocity's place (docs/heldout-protocol.md):
a regression with text columns and gaps from a package no other task uses (nk_datasets' Japanese
baseball seasons). It prepares offline, has the rows, columns, target and metric it should, splits
the same way every time and keeps out what would give the answer away.

Only the table and the prepared files are looked at here, never a model's score on them.
"""

from __future__ import annotations

import gzip
from importlib import resources

import pytest

from engine.tasks import bundled
from engine.tasks.bundled_data import SPECS
from engine.tasks.protocol import DEVELOPMENT, HELD_OUT
from tests.tasks.bundled_checks import check_prepared, check_same_bytes, check_split, check_table, prepare_offline

NAME = "batter-home-runs"
# name: (rows, columns with the target, target, metric)
EXPECTED = {NAME: (33805, 26, "home_runs", "rmse")}


def test_it_is_held_out():
    assert NAME in HELD_OUT and NAME not in DEVELOPMENT


def test_the_table_has_its_rows_columns_target_and_metric():
    check_table(NAME, EXPECTED)


def test_the_seasons_keep_text_levels_gaps_and_a_long_tailed_count():
    seasons = SPECS[NAME].load()
    assert seasons["league"].value_counts().to_dict() == {"CL": 17135, "PL": 14098, "JBL": 2572}
    assert seasons["team"].nunique() == 56 and seasons["team"].notna().all()
    assert seasons["position"].nunique() == 12 and seasons["position"].isna().sum() == 1150
    assert seasons["birth_country"].nunique() == 32 and seasons["birth_country"].isna().sum() == 267
    assert seasons["primary_position"].nunique() == 13
    assert (seasons["season"].min(), seasons["season"].max()) == (1936, 2025)
    assert 0.15 < seasons["intentional_walks"].isna().mean() < 0.2                # early and recent years
    assert seasons["double_plays"][seasons["season"] < 1950].isna().all()        # not recorded then
    assert seasons[["height_in", "weight_lb"]].isna().sum().to_dict() == {"height_in": 329, "weight_lb": 343}
    assert (seasons[["height_in", "weight_lb"]].dropna() > 0).all().all()        # 0 meant unknown
    assert (seasons["plate_appearances"] >= 1).all()
    runs = seasons["home_runs"]
    assert runs.min() == 0 and runs.max() == 60 and (runs == runs.round()).all()  # a count
    assert 0.5 < (runs == 0).mean() < 0.6 and runs.skew() > 2                     # a long right tail


def test_nothing_that_gives_the_home_runs_away_is_kept():
    """Hits, total bases, runs and runs batted in count the home runs in; the averages, OPS,
    BABIP, wRC+, the offensive runs and WAR follow from them; names and ids are one per player."""
    columns = {c.lower() for c in SPECS[NAME].load().columns}
    assert not {"h", "2b", "3b", "tb", "r", "rbi", "avg", "slg", "obp", "ops", "babip", "wrc+", "roff", "war",
                "bb_pct", "k_pct", "npbbid", "playerid", "namelast", "namefirst", "namegiven"} & columns
    assert not {"hits", "doubles", "triples", "total_bases", "runs", "runs_batted_in", "batting_average",
                "slugging", "on_base", "offensive_runs", "player_id", "name"} & columns
    assert [c for c in columns if "home" in c or c.lower() == "hr"] == ["home_runs"]


def test_the_vendored_file_is_written_without_a_timestamp():
    with (resources.files("engine.tasks") / "data" / "nk_npb_batting.csv.gz").open("rb") as handle:
        raw = handle.read()
    assert raw[4:8] == b"\0\0\0\0" and raw[10:29] == b"nk_npb_batting.csv\0"      # mtime 0, its name
    assert gzip.decompress(raw).count(b"\r") == 0


def test_the_split_is_the_same_every_time_and_holds_out_three_tenths():
    check_split(NAME)


# The reference model (the same code for every task) is stubbed: no model is fit on a held-out
# table here, so no score on it exists before its held-out run.
@pytest.fixture(scope="module")
def prepared(tmp_path_factory) -> dict:
    return prepare_offline(tmp_path_factory.mktemp("heldout"), [], [NAME])


def test_it_prepares_offline_with_its_answers_private(prepared):
    check_prepared(NAME, EXPECTED, prepared, [])


def test_preparing_it_twice_gives_the_same_bytes(prepared, tmp_path, monkeypatch):
    monkeypatch.setattr(bundled, "reference_score", lambda scoring, train, features, answers: 1.0)
    check_same_bytes(NAME, prepared[NAME], tmp_path)
