"""galaxy-velocity, held out from 2026-11-27 in athlete-weight's place and a development task
since stop 50, when its runs were read (docs/heldout-protocol.md): a regression with text columns from a package no other task uses (pyongc's OpenNGC catalogue).
It prepares offline, has the rows, columns, target and metric it should, splits the same way
every time and keeps out what would give the answer away.

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

NAME = "galaxy-velocity"
# name: (rows, columns with the target, target, metric)
EXPECTED = {NAME: (9980, 15, "radial_velocity_kms", "rmse")}


def test_it_became_a_development_task_when_its_runs_were_read():
    assert NAME in DEVELOPMENT and NAME not in HELD_OUT


def test_the_table_has_its_rows_columns_target_and_metric():
    check_table(NAME, EXPECTED)


def test_the_galaxies_keep_text_levels_gaps_and_a_long_tailed_velocity():
    galaxies = SPECS[NAME].load()
    assert galaxies["constellation"].nunique() == 84 and galaxies["constellation"].notna().all()
    assert galaxies["hubble_type"].nunique() == 30 and galaxies["hubble_type"].isna().sum() == 228
    assert galaxies["catalogue"].value_counts().to_dict() == {"NGC": 6256, "IC": 3684, "ESO": 32, "PGC": 5, "UGC": 3}
    assert galaxies["v_mag"].isna().mean() > 0.6                                   # V known for a third
    assert 0.05 < galaxies[["j_mag", "h_mag", "k_mag"]].isna().mean().max() < 0.08
    assert galaxies["ra_deg"].between(0, 360).all() and galaxies["dec_deg"].between(-90, 90).all()
    velocity = galaxies["radial_velocity_kms"]
    assert velocity.min() < 0 < velocity.median() < 6000 and velocity.max() > 50000    # towards us too
    assert velocity.mean() > velocity.median()                                          # right tail


def test_nothing_that_gives_the_velocity_away_is_kept():
    """The redshift is the same velocity over c; the notes quote it for a few galaxies ("RC3 gives
    V = 1640 +- 60 km/sec"); the names and identifiers are one per galaxy."""
    columns = {c.lower() for c in SPECS[NAME].load().columns}
    assert not {"redshift", "nednotes", "ongcnotes", "notes", "name", "identifiers", "commonnames", "messier"} & columns
    assert not [c for c in columns if "redshift" in c or "note" in c or c.startswith("z")]


def test_the_vendored_file_is_written_without_a_timestamp():
    with (resources.files("engine.tasks") / "data" / "pyongc_galaxies.csv.gz").open("rb") as handle:
        raw = handle.read()
    assert raw[4:8] == b"\0\0\0\0" and raw[10:30] == b"pyongc_galaxies.csv\0"     # mtime 0, its name
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
