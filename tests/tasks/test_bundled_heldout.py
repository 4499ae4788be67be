"""The tables of 2026-11-27's fourth held-out rotation (docs/heldout-protocol.md): three tables from
three packages no run of the agent had seen, held out beside athlete-weight
(tests/tasks/test_bundled_third_heldout.py checks its table). Two of them (airport-elevation,
town-country) were read after their first run and are development tasks since. Each prepares
offline, has the rows, columns, target and metric it should, splits the same way every time and
keeps out what would give the answer away.

Only the tables and the prepared files are looked at here, never a model's score on them.
"""

from __future__ import annotations

import pytest

from engine.tasks import bundled
from engine.tasks.bundled_data import SPECS
from engine.tasks.protocol import DEVELOPMENT, HELD_OUT
from tests.tasks.bundled_checks import check_prepared, check_same_bytes, check_split, check_table, prepare_offline

# name: (rows, columns with the target, target, metric)
EXPECTED = {
    "film-oscar": (17472, 19, "won_oscar", "roc_auc"),
    "airport-elevation": (28298, 9, "elevation", "rmse"),
    "town-country": (73868, 5, "country", "logloss"),
}
# The reference models of all three take from half a minute (film-oscar) to five minutes
# (airport-elevation: 16,000 city and 28,000 airport names one-hot) and are the same code for every
# task, so all three are prepared with the reference model stubbed.
STUBBED = sorted(EXPECTED)


def test_the_held_out_set_keeps_the_tables_no_run_was_read_for_and_none_is_a_development_task():
    """Issue 28's held-out protocol: a set reported apart, of tables no run has been read for.
    airport-elevation and town-country were run once held out, then read: development tasks."""
    assert "film-oscar" in set(HELD_OUT)
    assert {"airport-elevation", "town-country"} <= set(DEVELOPMENT)
    assert not set(HELD_OUT) & set(DEVELOPMENT)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_table_has_its_rows_columns_target_and_metric(name):
    check_table(name, EXPECTED)


def test_the_films_are_a_rare_binary_class_with_gaps_and_nothing_that_gives_the_answer_away():
    films = SPECS["film-oscar"].load()
    assert sorted(films["won_oscar"].unique()) == [0, 1] and 0.03 < films["won_oscar"].mean() < 0.05
    assert films["director"].nunique() > 7000 and films["production"].nunique() > 3000   # text, many levels
    assert films[["mpaa_rating", "box_office_usd", "metacritic"]].isna().mean().min() > 0.5   # mostly gaps
    assert not {"oscars", "awards", "cast", "imdbid", "id"} & {c.lower() for c in films.columns}   # the answer, ids


def test_the_airports_keep_text_that_reads_like_a_gap_as_text():
    airports = SPECS["airport-elevation"].load()
    assert (airports["country"] == "NA").sum() > 50 and airports["country"].notna().all()   # Namibia, not a gap
    assert airports["country"].nunique() == 234 and airports["subd"].nunique() > 2000
    assert airports["iata"].isna().mean() > 0.7 and airports["city"].isna().any()
    assert airports["elevation"].min() < 0 < airports["elevation"].max()   # below sea level too
    assert not {"icao", "lid"} & set(airports.columns)                      # identifiers, one per row


def test_the_towns_are_many_classes_on_many_rows_without_the_time_zone():
    towns = SPECS["town-country"].load()
    counts = towns["country"].value_counts()
    assert len(counts) == 41 and counts.min() >= 30 and len(towns) > 50000
    assert counts.index.str.fullmatch(r"[a-z]{2}").all()                  # a submission's column per class
    assert not {"timezone", "geonameid", "admin1code", "alternatenames"} & set(towns.columns)
    assert towns["name"].nunique() > 0.9 * len(towns)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_split_is_the_same_every_time_and_holds_out_three_tenths(name):
    check_split(name)


@pytest.fixture(scope="module")
def prepared(tmp_path_factory) -> dict:
    return prepare_offline(tmp_path_factory.mktemp("heldout"), [], STUBBED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_task_prepares_offline_with_its_answers_private(name, prepared):
    check_prepared(name, EXPECTED, prepared, [])


def test_a_held_out_task_prepares_to_the_same_bytes_twice(prepared, tmp_path, monkeypatch):
    monkeypatch.setattr(bundled, "reference_score", lambda scoring, train, features, answers: 1.0)
    check_same_bytes("town-country", prepared["town-country"], tmp_path)
