"""Loaders for the bundled tasks built from ISLP's data sets (vendored in ``engine/tasks/data``).

ISLP (the PyPI package of *An Introduction to Statistical Learning with Python*) ships these
tables as CSV files; they are copied here gzip-compressed, with the package's BSD licence in
``data/LICENSE-ISLP.txt``, so preparing a task neither downloads anything nor depends on
ISLP's heavy requirements (torch, lightning). Each loader returns features plus the target
column in the original row order.

Two tasks get missing values on purpose, as a real competition table would have: a seeded,
fixed share of cells in the named columns is blanked (MCAR). The mask depends only on the
seed, so preparing a task twice gives the same bytes.
"""

from __future__ import annotations

from importlib import resources

import numpy as np
import pandas as pd

_EDUCATION = {
    "1. < HS Grad": "below_hs",
    "2. HS Grad": "hs_grad",
    "3. Some College": "some_college",
    "4. College Grad": "college_grad",
    "5. Advanced Degree": "advanced_degree",
}


def read_vendored(name: str, only_empty_is_missing: bool = False) -> pd.DataFrame:
    """A gzip-compressed CSV from ``engine/tasks/data``. ``only_empty_is_missing`` for tables where
    text such as "NA" (Namibia's country code) or "None" is a value, not a gap."""
    options = {"keep_default_na": False, "na_values": [""]} if only_empty_is_missing else {}
    with (resources.files("engine.tasks") / "data" / name).open("rb") as handle:
        return pd.read_csv(handle, compression="gzip", **options)


def blank_cells(frame: pd.DataFrame, fractions: dict[str, float], seed: int) -> pd.DataFrame:
    """``frame`` with a seeded ``fraction`` of each named column's cells set missing."""
    rng = np.random.default_rng(seed)
    frame = frame.copy()
    for column, fraction in fractions.items():
        mask = rng.random(len(frame)) < fraction
        frame[column] = frame[column].where(~mask)
    return frame


def wage_education() -> pd.DataFrame:
    frame = read_vendored("islp_wage.csv.gz").drop(columns=["logwage"])
    education = frame.pop("education").map(_EDUCATION)
    frame = blank_cells(frame, {"maritl": 0.06, "health": 0.08, "health_ins": 0.05, "wage": 0.04},
                        seed=2101)
    frame["education"] = education
    return frame


def bike_sharing() -> pd.DataFrame:
    return read_vendored("islp_bikeshare.csv.gz")


def caravan_insurance() -> pd.DataFrame:
    frame = read_vendored("islp_caravan.csv.gz")
    # The customer subtype and main type are codes of unordered groups: given as text.
    frame["MOSTYPE"] = "subtype_" + frame["MOSTYPE"].astype(str)
    frame["MOSHOOFD"] = "maintype_" + frame["MOSHOOFD"].astype(str)
    purchase = frame.pop("Purchase")
    frame["purchase"] = (purchase == "Yes").astype(int)
    return frame


def credit_default() -> pd.DataFrame:
    frame = read_vendored("islp_default.csv.gz")
    target = (frame.pop("default") == "Yes").astype(int)
    frame = blank_cells(frame, {"income": 0.1, "student": 0.03}, seed=2104)
    frame["default"] = target
    return frame
