"""More bundled tasks that widen coverage (issue 28), from seven packages' tables: a count that is
zero on a quarter of its rows over 255 occupations as text, 150,000 rows of population by age
and sex over 237 countries as text, six regimes' probabilities over 200 countries, a wide table
of speech frames whose later cells are empty, athletes' weights over 201 nationalities and 27
sports, twelve airlines' probabilities for routes between 352 airports as text, senators' tenures
from a small table, and the cell technology of 21,535 solar modules whose names are free text
(two technologies of under 30 modules). Which of them are development tasks and which are held
out is ``engine.tasks.protocol``'s business, not this catalogue's.

The tables are extracts vendored gzip-compressed in ``engine/tasks/data``; ``LICENSE-vega.txt``,
``LICENSE-bokeh-sampledata.txt``, ``LICENSE-lifelines.txt``, ``LICENSE-sktime.txt``,
``LICENSE-observablehq-sample-datasets.txt`` and ``LICENSE-pvlib.txt`` say which file came from
where, under which licence, and how it was cut, so preparing a task downloads nothing. Each
loader returns features plus the target column in the original row order.
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
# The CEC list's cell technologies, as class names.
TECHNOLOGIES = {
    "Mono-c-Si": "mono_c_si", "Multi-c-Si": "multi_c_si", "Thin Film": "thin_film", "CdTe": "cdte", "CIGS": "cigs",
}


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


def athlete_weight() -> pd.DataFrame:
    return vega._target_last(read_vendored("observable_olympians.csv.gz"), "weight")


def route_airline() -> pd.DataFrame:
    """One row per route: its two airports (IATA codes), where each lies, and the carrier."""
    routes = read_vendored("bokeh_routes.csv.gz")
    airports = read_vendored("bokeh_airports.csv.gz").set_index("IATA")
    frame = pd.DataFrame({"origin": routes["Source"], "destination": routes["Destination"]})
    for end, column in (("origin", "Source"), ("destination", "Destination")):
        missing = set(routes[column]) - set(airports.index)
        if missing:
            raise ValueError(f"vendored routes have airports {sorted(missing)} with no location")
        for field, name in (("Latitude", "latitude"), ("Longitude", "longitude"), ("Altitude", "altitude_ft"),
                            ("Type", "type")):
            frame[f"{end}_{name}"] = routes[column].map(airports[field]).to_numpy()
    frame["airline"] = routes["Airline"]
    return frame


def senator_tenure() -> pd.DataFrame:
    return vega._target_last(read_vendored("lifelines_senators.csv.gz").rename(columns={
        "Political Affiliation at Appointment": "party", "Province / Territory": "province",
        "Appointed on the advice of": "advised_by", "diff_days": "tenure_days",
    }), "tenure_days")


def solar_module_technology() -> pd.DataFrame:
    frame = read_vendored("pvlib_cec_modules.csv.gz").rename(columns={
        "Name": "name", "Bifacial": "bifacial", "STC": "stc_w", "PTC": "ptc_w", "A_c": "area_m2",
        "Length": "length_m", "Width": "width_m", "N_s": "cells_in_series", "I_sc_ref": "i_sc_a",
        "V_oc_ref": "v_oc_v", "I_mp_ref": "i_mp_a", "V_mp_ref": "v_mp_v", "alpha_sc": "alpha_sc_a_per_c",
        "beta_oc": "beta_oc_v_per_c", "T_NOCT": "t_noct_c", "gamma_r": "gamma_pmp_pct_per_c", "BIPV": "bipv",
        "Technology": "technology",
    })
    unknown = set(frame["technology"]) - set(TECHNOLOGIES)
    if unknown:
        raise ValueError(f"vendored table has technologies {sorted(unknown)} with no class name")
    return vega._target_last(frame.assign(technology=frame["technology"].map(TECHNOLOGIES)), "technology")


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
    BundledSpec(
        name="athlete-weight",
        title="Weight of an Olympian",
        one_liner="predict an athlete's weight at the 2016 Olympic Games from sport, sex, height and nationality",
        load=athlete_weight,
        target="weight",
        metric="rmse",
        task_type=TaskType.regression,
        overview=(
            "Each row is one of the athletes of the 2016 Summer Olympic Games in Rio de Janeiro, "
            "as the Games' official website listed them (Matt Riggott's collection; its flaws "
            "are kept). Predict `weight`, the athlete's weight in kilograms (whole numbers, 31 "
            "to 170). Athletes whose weight the site did not give are left out, boxers among them."
        ),
        features=(
            "`nationality` (text: the IOC code of one of 201 teams), `sex` (male or female), "
            "`date_of_birth` (text, YYYY-MM-DD), `height` (metres; empty for a few athletes), "
            "`sport` (text: one of 27 sports, e.g. \"athletics\", \"weightlifting\") and `gold`, "
            "`silver` and `bronze` (how many medals of each the athlete won at these Games)."
        ),
        seed=55,
    ),
    BundledSpec(
        name="route-airline",
        title="Airline of a Route",
        one_liner="give the probabilities of twelve US airlines flying a nonstop route between two airports",
        load=route_airline,
        target="airline",
        metric="logloss",
        task_type=TaskType.classification,
        overview=(
            "Each row is one nonstop route flown in July 2026 by one of twelve US airlines that "
            "report their flights to the Bureau of Transportation Statistics (a carrier, an origin "
            "and a destination seen at least four times that month). For every route, give the "
            "probability of each airline by its code: AA, AS, B6, DL, F9, G4, MQ, OH, OO, UA, WN "
            "and YX. A pair of airports flown by several airlines has one row for each, and a "
            "route flown both ways has one row for each direction."
        ),
        features=(
            "`origin` and `destination` (text: the airports' IATA codes, 352 of them), and for "
            "each end its `_latitude`, `_longitude`, `_altitude_ft` and `_type` (large_airport, "
            "medium_airport or small_airport), from OurAirports."
        ),
        seed=56,
        per_class_probabilities=True,
    ),
    BundledSpec(
        name="senator-tenure",
        title="Tenure of a Canadian Senator",
        one_liner="predict how many days a Canadian senator sat, from appointment, party and how the term ended",
        load=senator_tenure,
        target="tenure_days",
        metric="rmse",
        task_type=TaskType.regression,
        overview=(
            "Each row is one term of a senator of Canada appointed from 1867 to 2010 whose term "
            "has ended by death, resignation or retirement (senators still sitting when the table "
            "was made are left out). Predict `tenure_days`, the length of the term in days (67 to "
            "17,731). Senators appointed before June 1965 sat for life; those appointed since must "
            "retire at 75."
        ),
        features=(
            "`party` (text: the political affiliation at appointment, 16 of them), `province` "
            "(text: the province or territory represented), `advised_by` (text: the prime "
            "minister on whose advice the senator was appointed, or \"Royal Proclamation\" for "
            "the first senators of 1867), `start_date` (text: the day of appointment) and "
            "`reason` (how the term ended: Death, Resignation or Retirement)."
        ),
        seed=57,
    ),
    BundledSpec(
        name="solar-module-technology",
        title="Cell Technology of a Solar Module",
        one_liner="tell a solar module's cell technology (five, two of them rare) from its name and datasheet figures",
        load=solar_module_technology,
        target="technology",
        metric="accuracy",
        task_type=TaskType.classification,
        overview=(
            "Each row is a photovoltaic module on the California Energy Commission's list of "
            "eligible modules (as of early 2019). Predict its cell technology, `technology`: "
            "mono_c_si (monocrystalline silicon), multi_c_si (multicrystalline silicon), "
            "thin_film, cdte (cadmium telluride) or cigs (copper indium gallium selenide). "
            "Nearly all modules are silicon; cdte and cigs have under 30 modules each."
        ),
        features=(
            "`name` (text: the manufacturer and the model, different on every row), "
            "`bifacial` (1 or 0), `stc_w` and `ptc_w` (rated power in watts at standard test "
            "conditions and at PVUSA test conditions), `area_m2`, `length_m` and `width_m` (the "
            "last two empty for some modules), `cells_in_series`, `i_sc_a`, `v_oc_v`, `i_mp_a` and "
            "`v_mp_v` (short-circuit current, open-circuit voltage and the maximum-power point at "
            "standard conditions), `alpha_sc_a_per_c` and `beta_oc_v_per_c` (their temperature "
            "coefficients), `t_noct_c` (nominal operating cell temperature), "
            "`gamma_pmp_pct_per_c` (the power's temperature coefficient, % per degree) and `bipv` "
            "(Y for building-integrated modules, N otherwise; empty for a few)."
        ),
        seed=58,
    ),
)
