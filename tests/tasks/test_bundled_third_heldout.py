"""The held-out set of 2026-11-26's third rotation (docs/heldout-protocol.md): four tables from
four packages that no run of the agent had seen. Three of them (route-airline, senator-tenure,
solar-module-technology) are development tasks since the fourth rotation, 2026-11-27, and
athlete-weight since stop 49 (its runs read for a failure that came and went with the seed). The checks that held them out are kept: each prepares offline, has the rows,
columns, target and metric it should, splits the same way every time and keeps out what would give
the answer away.
"""

from __future__ import annotations

import pandas as pd
import pytest

from engine.tasks.bundled_data import SPECS
from engine.tasks.bundled_more import TECHNOLOGIES
from engine.tasks.protocol import DEVELOPMENT, HELD_OUT
from tests.tasks.bundled_checks import check_prepared, check_same_bytes, check_split, check_table, prepare_offline

# name: (rows, columns with the target, target, metric)
EXPECTED = {
    "athlete-weight": (10879, 9, "weight", "rmse"),
    "route-airline": (9161, 11, "airline", "logloss"),
    "senator-tenure": (831, 6, "tenure_days", "rmse"),
    "solar-module-technology": (21535, 18, "technology", "accuracy"),
}
# Prepared in full here. The reference models of athlete-weight (201 nationalities one-hot) and
# solar-module-technology (15,000 module names one-hot) take most of a minute each, so those two
# are prepared with the reference model stubbed instead.
PREPARED = ["route-airline", "senator-tenure"]
STUBBED = ["athlete-weight", "solar-module-technology"]


def test_the_third_rotations_tables_are_all_development_tasks_now():
    assert sorted(EXPECTED) == sorted(PREPARED + STUBBED)
    assert set(EXPECTED) <= set(DEVELOPMENT)
    assert not set(EXPECTED) & set(HELD_OUT)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_table_has_its_rows_columns_target_and_metric(name):
    check_table(name, EXPECTED)


def test_the_tables_widen_coverage_with_nothing_that_gives_the_answer_away():
    athletes = SPECS["athlete-weight"].load()
    assert athletes["nationality"].nunique() == 201 and athletes["sport"].nunique() == 27   # text categories
    assert "boxing" not in set(athletes["sport"])                             # no boxer's weight was given
    assert athletes["height"].isna().any() and athletes["date_of_birth"].str.fullmatch(r"\d{4}-\d\d-\d\d").all()
    assert pd.api.types.is_integer_dtype(athletes["weight"]) and athletes["weight"].between(31, 170).all()
    assert not {"id", "name", "info"} & set(athletes.columns)                 # identifiers; weight classes in text
    routes = SPECS["route-airline"].load()
    carriers = routes["airline"].value_counts()
    assert len(carriers) == 12 and carriers.min() > 300                       # many classes, each splittable
    assert len(set(routes["origin"]) | set(routes["destination"])) == 352     # high-cardinality text
    assert routes[["origin", "destination", "airline"]].duplicated().sum() == 0
    assert routes[["origin", "destination"]].duplicated().sum() > 1000        # pairs flown by several airlines
    assert routes.notna().all().all()
    assert not {"AirlineID", "airline_id", "SourceID", "DestinationID"} & set(routes.columns)   # codes of the answer
    senators = SPECS["senator-tenure"].load()
    assert sorted(senators["reason"].unique()) == ["Death", "Resignation", "Retirement"]
    assert senators["tenure_days"].min() > 0 and senators["tenure_days"].max() > 15000
    assert senators["advised_by"].nunique() == 22 and senators["province"].nunique() == 16
    assert not {"end_date", "Term (yyyy.mm.dd)", "Name", "observed"} & set(senators.columns)   # they give it away
    modules = SPECS["solar-module-technology"].load()
    counts = modules["technology"].value_counts()
    assert sorted(counts.index) == sorted(TECHNOLOGIES.values()) and counts.min() >= 8   # two rare classes
    assert counts["cigs"] < 10 and counts["cdte"] < 30
    assert counts.index.str.fullmatch(r"[a-z_]+").all()
    assert modules["name"].is_unique                                          # free text, one per row
    assert modules[["length_m", "width_m", "bipv"]].isna().any().all()        # missing values
    fitted = {"a_ref", "I_L_ref", "I_o_ref", "R_s", "R_sh_ref", "Adjust"}     # SAM's fit used the technology
    assert not {c.lower() for c in fitted} & {c.lower() for c in modules.columns}
    assert len(modules) > 20000                                               # a large table


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_split_is_the_same_every_time_and_holds_out_three_tenths(name):
    check_split(name)



@pytest.fixture(scope="module")
def prepared(tmp_path_factory) -> dict:
    return prepare_offline(tmp_path_factory.mktemp("heldout"), PREPARED, STUBBED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_task_prepares_offline_with_its_answers_private(name, prepared):
    check_prepared(name, EXPECTED, prepared, PREPARED)


def test_a_held_out_task_prepares_to_the_same_bytes_twice(prepared, tmp_path):
    check_same_bytes("senator-tenure", prepared["senator-tenure"], tmp_path)
