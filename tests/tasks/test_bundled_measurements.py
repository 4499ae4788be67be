"""The tables of 2026-11-27's fifth held-out rotation (docs/heldout-protocol.md): three tables from
two packages no run of the agent had seen a table of (river) or had seen another table of (pvlib's
weather files, where solar-module-technology took pvlib's module list), held out beside
athlete-weight and film-oscar. Each prepares offline, has the rows, columns, target and metric it
should, splits the same way every time and keeps out what would give the answer away.

Only the tables and the prepared files are looked at here, never a model's score on them.
"""

from __future__ import annotations

import pytest

from engine.tasks.bundled_data import SPECS
from engine.tasks.protocol import DEVELOPMENT, HELD_OUT
from tests.tasks.bundled_checks import check_prepared, check_split, check_table, prepare_offline

# name: (rows, columns with the target, target, metric)
EXPECTED = {
    "hourly-sunlight": (9527, 21, "ghi_wm2", "rmse"),
    "yeast-gene-function": (2417, 104, "class1", "roc_auc"),
    "image-segment": (2310, 19, "category", "logloss"),
}


def test_the_fifth_rotation_holds_out_its_three_tables_beside_film_oscar():
    """Issue 28's held-out protocol: the new tables are held out, none is a development task
    (athlete-weight, held out beside them, became one on stop 49)."""
    assert set(EXPECTED) | {"film-oscar"} <= set(HELD_OUT)
    assert not set(HELD_OUT) & set(DEVELOPMENT)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_table_has_its_rows_columns_target_and_metric(name):
    check_table(name, EXPECTED)


def test_the_sunlight_is_daylight_hours_without_the_other_measures_of_the_same_light():
    hours = SPECS["hourly-sunlight"].load()
    assert (hours["extraterrestrial_wm2"] > 0).all()                     # night hours left out
    assert hours["station"].value_counts().to_dict() == {"sand_point_ak": 4776, "greensboro_nc": 4751}
    assert hours["ghi_wm2"].between(0, 1100).all() and hours["ghi_wm2"].median() < 200
    # The other irradiances and the flags that say how the irradiance was got carry the answer.
    assert not [c for c in hours.columns if any(k in c.lower() for k in ("dni", "dhi", "illum", "source", "uncert", "etrn"))]
    assert not (hours == -9900).any().any()                              # the files' missing code is a gap
    assert hours["precip_depth_mm"].isna().any() and hours["visibility_m"].isna().any()


def test_the_yeast_genes_are_wide_unnamed_numbers_without_the_other_functional_classes():
    genes = SPECS["yeast-gene-function"].load()
    assert list(genes.columns[:-1]) == [f"att{i}" for i in range(1, 104)]
    assert genes.drop(columns="class1").dtypes.map(lambda d: d.kind == "f").all()
    assert sorted(genes["class1"].unique()) == [0, 1] and 0.3 < genes["class1"].mean() < 0.33
    assert not [c for c in genes.columns if c.startswith("class") and c != "class1"]


def test_the_image_regions_are_seven_balanced_kinds():
    regions = SPECS["image-segment"].load()
    assert regions["category"].value_counts().to_dict() == dict.fromkeys(
        ["brickface", "cement", "foliage", "grass", "path", "sky", "window"], 330)
    assert not [c for c in regions.columns if "-" in c]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_split_is_the_same_every_time_and_holds_out_three_tenths(name):
    check_split(name)


@pytest.fixture(scope="module")
def prepared(tmp_path_factory) -> dict:
    # Small tables: prepared in full, the reference model too.
    return prepare_offline(tmp_path_factory.mktemp("heldout"), sorted(EXPECTED), [])


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_task_prepares_offline_with_its_answers_private(name, prepared):
    check_prepared(name, EXPECTED, prepared, sorted(EXPECTED))
