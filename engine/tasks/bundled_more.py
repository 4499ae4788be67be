"""More bundled tasks that widen coverage (issue 28), from four packages' tables: a count that is
zero on a quarter of its rows over 255 occupations as text, 150,000 rows of population by age
and sex over 237 countries as text, six regimes' probabilities over 200 countries, and a wide
table of speech frames whose later cells are empty. Which of them are development tasks and
which are held out is ``engine.tasks.protocol``'s business, not this catalogue's.

The tables are extracts vendored gzip-compressed in ``engine/tasks/data``; ``LICENSE-vega.txt``,
``LICENSE-bokeh-sampledata.txt``, ``LICENSE-lifelines.txt`` and ``LICENSE-sktime.txt`` say which
file came from where, under which licence, and how it was cut, so preparing a task downloads
nothing. Each loader returns features plus the target column in the original row order.
"""

from __future__ import annotations

import pandas as pd

from engine.tasks import bundled_vega as vega
from engine.tasks.bundled_islp import read_vendored
from engine.tasks.bundled_spec import BundledSpec
from events.domain import TaskType

# The Democracy and Dictatorship data's regime codes, as column names of the submission.
REGIMES = {
    "Parliamentary Dem": "parliamentary_democracy",
    "Mixed Dem": "mixed_democracy",
    "Presidential Dem": "presidential_democracy",
    "Civilian Dict": "civilian_dictatorship",
    "Military Dict": "military_dictatorship",
    "Monarchy": "monarchy",
}
# JapaneseVowels: twelve LPC cepstrum coefficients per analysis frame, up to 29 frames.
VOWEL_COEFFICIENTS = 12
VOWEL_FRAMES = 29


def population_by_age() -> pd.DataFrame:
    frame = read_vendored("bokeh_population.csv.gz").rename(columns={
        "Location": "country", "Year": "year", "Sex": "sex", "AgeGrp": "age_group",
        "AgeGrpStart": "age_group_start", "Value": "population",
    })
    return vega._target_last(frame, "population")


def regime_type() -> pd.DataFrame:
    frame = read_vendored("lifelines_dd.csv.gz").rename(columns={
        "ctryname": "country", "un_region_name": "region", "un_continent_name": "continent",
    })
    unknown = set(frame["regime"]) - set(REGIMES)
    if unknown:
        raise ValueError(f"vendored table has regimes {sorted(unknown)} with no class name")
    return vega._target_last(frame.assign(regime=frame["regime"].map(REGIMES)), "regime")


def vowel_speaker() -> pd.DataFrame:
    """One row per utterance: its number of frames, every frame's coefficients side by side
    (``fT_cK``, empty past the utterance's last frame) and the speaker."""
    long = read_vendored("sktime_japanese_vowels.csv.gz")
    coefficients = [f"c{k}" for k in range(1, VOWEL_COEFFICIENTS + 1)]
    wide = long.pivot(index="utterance", columns="frame", values=coefficients)
    wide = wide.reindex(columns=pd.MultiIndex.from_product([coefficients, range(1, VOWEL_FRAMES + 1)]))
    order = [(c, t) for t in range(1, VOWEL_FRAMES + 1) for c in coefficients]
    wide = wide[order]
    wide.columns = [f"f{t}_{c}" for c, t in order]
    utterances = long.groupby("utterance", sort=True)
    frame = pd.concat([utterances["frame"].max().rename("frames"), wide,
                       utterances["speaker"].first()], axis=1)
    return frame.reset_index(drop=True)


MORE_SPECS: tuple[BundledSpec, ...] = (
    BundledSpec(
        name="occupation-workers",
        title="Workers in an Occupation",
        one_liner="predict how many US men or women worked in an occupation in a census year, 1850-2000",
        load=vega.occupation_workers,
        target="workers",
        metric="rmse",
        task_type=TaskType.regression,
        overview=(
            "Each row is one of 255 occupations, for men or for women, in one US census from 1850 "
            "to 2000 (every ten years; the 1890 census is missing), from IPUMS USA's harmonised "
            "census samples. Predict `workers`, the estimated number of people of that sex who "
            "worked in that occupation: a count that is zero on over a quarter of the rows (no "
            "women in most trades of 1850, no blacksmiths left by 1980) and reaches eleven million "
            "(male managers and owners in 2000)."
        ),
        features=(
            "`job` (text: the occupation, e.g. \"Accountant / Auditor\", \"Farmer\"; 255 of them), "
            "`sex` (men or women) and `year` (the census)."
        ),
        seed=51,
    ),
    BundledSpec(
        name="population-by-age",
        title="Population by Age and Sex",
        one_liner="predict how many people of one sex and age group lived in a country in a year, 1950-2020",
        load=population_by_age,
        target="population",
        metric="rmse",
        task_type=TaskType.regression,
        overview=(
            "Each row is one five-year age group (0-4 to 95-99, and 100 and over) of the men or of "
            "the women of one of 237 countries and areas, every five years from 1950 to 2020, from "
            "the United Nations' World Population Prospects 2024 estimates (149,310 rows). Predict "
            "`population`, the number of people in that group: from none (the oldest groups of "
            "small islands) to seventy million (boys under five in India), with a very long right "
            "tail."
        ),
        features=(
            "`country` (text: 237 countries and areas), `year`, `sex` (Female or Male), "
            "`age_group` (text, e.g. \"25-29\" or \"100+\") and `age_group_start` (the group's "
            "first age: 0, 5, ..., 100)."
        ),
        seed=52,
    ),
    BundledSpec(
        name="regime-type",
        title="Regime of a Leader's Rule",
        one_liner="give the probabilities of six kinds of regime a country's leader ruled in, 1946-2008",
        load=regime_type,
        target="regime",
        metric="logloss",
        task_type=TaskType.classification,
        overview=(
            "Each row is the spell in office of one head of government of one of 200 countries, "
            "1946 to 2008, from Cheibub, Gandhi and Vreeland's Democracy and Dictatorship data "
            "(\"Democracy and Dictatorship Revisited\", Public Choice, 2010). For every spell, give "
            "the probability of each of six regimes: parliamentary_democracy, mixed_democracy, "
            "presidential_democracy, civilian_dictatorship, military_dictatorship and monarchy. "
            "Parliamentary democracies are the most common; monarchies are rare."
        ),
        features=(
            "`country` (text: 200 countries), `region` (text: the UN subregion, 22 of them), "
            "`continent` (text), `start_year` (when the spell began), `duration` (its length in "
            "years) and `observed` (1 when the leader left office, 0 when the leader died in "
            "office or was still in office at the end of 2008)."
        ),
        seed=53,
        per_class_probabilities=True,
    ),
    BundledSpec(
        name="vowel-speaker",
        title="Speaker of a Japanese Vowel",
        one_liner="tell which of nine men said a Japanese vowel from its speech frames (348 columns, many empty)",
        load=vowel_speaker,
        target="speaker",
        metric="accuracy",
        task_type=TaskType.classification,
        overview=(
            "Each row is one utterance of the Japanese vowels /a/ and /e/, said in succession by "
            "one of nine men (Kudo, Toyama and Shimbo, 1999), analysed into 7 to 29 short frames "
            "of twelve linear-prediction cepstrum coefficients each. Predict `speaker` (1 to 9). "
            "The utterances differ in length, so the cells of the frames after an utterance's "
            "last are empty; only one utterance reaches 29 frames."
        ),
        features=(
            "`frames` (the utterance's number of frames, 7 to 29) and `fT_cK` (348 columns): the "
            "K-th of the twelve coefficients (K = 1 to 12) of the T-th frame (T = 1 to 29), empty "
            "when the utterance has fewer than T frames."
        ),
        seed=54,
    ),
)
