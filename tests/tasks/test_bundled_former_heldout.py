"""The held-out set of 2026-11-26's second rotation, development tasks since its third
(docs/heldout-protocol.md): four tables from four packages, run once at 120 s on e01d6d6 before
the agent changed. The checks that held them out are kept: each prepares offline, has the rows,
columns, target and metric it should, splits the same way every time and keeps out what would
give the answer away.
"""

from __future__ import annotations

import pandas as pd
import pytest

from engine.tasks.bundled_data import SPECS
from engine.tasks.bundled_more import REGIMES, VOWEL_COEFFICIENTS, VOWEL_FRAMES
from engine.tasks.protocol import DEVELOPMENT, HELD_OUT
from tests.tasks.bundled_checks import check_prepared, check_same_bytes, check_split, check_table, prepare_offline

# name: (rows, columns with the target, target, metric)
EXPECTED = {
    "occupation-workers": (7650, 4, "workers", "rmse"),
    "population-by-age": (149310, 6, "population", "rmse"),
    "regime-type": (1808, 7, "regime", "logloss"),
    "vowel-speaker": (640, 2 + VOWEL_COEFFICIENTS * VOWEL_FRAMES, "speaker", "accuracy"),
}
# Prepared in full here. population-by-age's reference forest (200 trees on 20,000 rows with 237
# countries one-hot) takes minutes, so it is prepared with the reference model stubbed instead.
PREPARED = ["occupation-workers", "regime-type", "vowel-speaker"]


def test_the_second_rotations_tables_are_development_tasks_now():
    assert set(EXPECTED) <= set(DEVELOPMENT)
    assert not set(EXPECTED) & set(HELD_OUT)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_table_has_its_rows_columns_target_and_metric(name):
    check_table(name, EXPECTED)


def test_the_tables_widen_coverage_with_nothing_that_gives_the_answer_away():
    jobs = SPECS["occupation-workers"].load()
    assert jobs["job"].nunique() == 255 and jobs.groupby("job").size().eq(30).all()   # high cardinality
    assert pd.api.types.is_integer_dtype(jobs["workers"]) and jobs["workers"].min() == 0
    assert 0.25 < (jobs["workers"] == 0).mean() < 0.3 and jobs["workers"].skew() > 5  # zeros, a long tail
    assert not {"perc", "count"} & set(jobs.columns)                          # the share gives it away
    assert 1890 not in set(jobs["year"]) and jobs[["job", "sex", "year"]].duplicated().sum() == 0
    people = SPECS["population-by-age"].load()
    assert len(people) > 100000 and people["country"].nunique() == 237      # a large table, 237 names
    assert not {"World", "Africa", "Europe", "Asia"} & set(people["country"])  # no sums of other rows
    assert people["year"].max() == 2020                                       # estimates, no projections
    assert people["population"].min() == 0 and people["population"].skew() > 10
    assert people[["country", "year", "sex", "age_group"]].duplicated().sum() == 0
    regimes = SPECS["regime-type"].load()
    counts = regimes["regime"].value_counts()
    assert sorted(counts.index) == sorted(REGIMES.values()) and counts.min() >= 50   # each splittable
    assert counts["monarchy"] / len(regimes) < 0.05 and regimes["country"].nunique() == 200
    assert not {"democracy", "leaderspellreg", "ehead"} & set(regimes.columns)   # the answer, or a name
    vowels = SPECS["vowel-speaker"].load()
    assert sorted(vowels["speaker"].unique()) == list(range(1, 10))
    assert vowels["frames"].between(7, 29).all()
    late = [f"f{vowels['frames'].max()}_c{k}" for k in range(1, VOWEL_COEFFICIENTS + 1)]
    assert vowels[late].notna().sum().eq(1).all()                             # 29 frames: one utterance
    for frames, row in vowels.groupby("frames").head(1).set_index("frames").iterrows():   # empty past the end
        cells = row[[c for c in vowels.columns if c.startswith("f") and c != "frames"]]
        assert cells.notna().sum() == frames * VOWEL_COEFFICIENTS
        assert cells[[f"f{frames}_c{k}" for k in range(1, VOWEL_COEFFICIENTS + 1)]].notna().all()


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_split_is_the_same_every_time_and_holds_out_three_tenths(name):
    check_split(name)



@pytest.fixture(scope="module")
def prepared(tmp_path_factory) -> dict:
    return prepare_offline(tmp_path_factory.mktemp("second_rotation"), PREPARED, ["population-by-age"])


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_task_prepares_offline_with_its_answers_private(name, prepared):
    check_prepared(name, EXPECTED, prepared, PREPARED)


def test_a_former_held_out_task_prepares_to_the_same_bytes_twice(prepared, tmp_path):
    check_same_bytes("regime-type", prepared["regime-type"], tmp_path)
