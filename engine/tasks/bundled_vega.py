"""Loaders for the bundled tasks built from vega-datasets' tables (vendored in ``engine/tasks/data``).

vega-datasets (the npm package of the Vega project's example data) ships these tables; small
extracts are copied here gzip-compressed (``data/LICENSE-vega.txt`` says which file came from
where, under which licence, and how each extract was made), so preparing a task downloads
nothing. Each loader returns features plus the target column in the original row order.
"""

from __future__ import annotations

import re

import pandas as pd
from sklearn import datasets as skd

from engine.tasks.bundled_islp import read_vendored

# Zip codes of places with fewer rows than this (overseas territories, the smallest of them
# with a single zip code) are left out: a class seen once cannot be split into train and test.
MIN_ZIPS_PER_STATE = 50
# Likewise the states with fewer airports (Delaware has 6, some territories 1 or 2).
MIN_AIRPORTS_PER_STATE = 20
# And the genres with fewer films (Concert/Performance has 5).
MIN_FILMS_PER_GENRE = 20


def _snake(name: str) -> str:
    return re.sub(r"[^0-9a-z]+", "_", name.lower()).strip("_")


def football_goals() -> pd.DataFrame:
    frame = read_vendored("vega_football.csv.gz").dropna(subset=["home_score", "away_score"])
    goals = (frame.pop("home_score") + frame.pop("away_score")).astype(int)
    frame["goals"] = goals
    return frame.reset_index(drop=True)


def flight_delay() -> pd.DataFrame:
    frame = read_vendored("vega_flights.csv.gz")
    delay = frame.pop("delay")
    frame["delay"] = delay
    return frame


def _target_last(frame: pd.DataFrame, target: str) -> pd.DataFrame:
    """``frame`` with ``target`` as its last column (where the bundled tasks expect the answer)."""
    if target not in frame.columns:
        raise ValueError(f"vendored table has no column {target!r}; it has {', '.join(frame.columns)}")
    return frame[[c for c in frame.columns if c != target] + [target]]


def _common_classes_last(frame: pd.DataFrame, target: str, least: int) -> pd.DataFrame:
    """The rows whose ``target`` class has at least ``least`` rows, with ``target`` as the last column."""
    counts = frame[target].value_counts()
    return _target_last(frame[frame[target].isin(counts.index[counts >= least])], target).reset_index(drop=True)


def zip_state() -> pd.DataFrame:
    return _common_classes_last(read_vendored("vega_zipcodes.csv.gz"), "state", MIN_ZIPS_PER_STATE)


def bird_strike_damage() -> pd.DataFrame:
    frame = read_vendored("vega_birdstrikes.csv.gz").rename(columns=_snake)
    # An empty damage field is a strike that did no damage (the FAA's "None").
    damaged = frame.pop("effect_amount_of_damage").notna().astype(int)
    frame["damaged"] = damaged
    return frame


def airport_state() -> pd.DataFrame:
    return _common_classes_last(read_vendored("vega_airports.csv.gz"), "state", MIN_AIRPORTS_PER_STATE)


def earthquake_magnitude() -> pd.DataFrame:
    return read_vendored("vega_earthquakes.csv.gz")


def car_origin() -> pd.DataFrame:
    # The model name gives the maker away (and with it the origin), so it is left out.
    frame = read_vendored("vega_cars.csv.gz").drop(columns=["Name"]).rename(columns=_snake)
    origin = frame.pop("origin")
    frame["origin"] = origin
    return frame


def species_habitat() -> pd.DataFrame:
    return read_vendored("vega_species.csv.gz")


def movie_genre() -> pd.DataFrame:
    # The extract leaves the title out (free text, all but unique per film); a film with no genre
    # has no answer, so it is not a row of the task.
    frame = read_vendored("vega_movies.csv.gz").rename(columns=_snake).rename(columns={"major_genre": "genre"})
    frame = frame.dropna(subset=["genre"])
    # The genres become column names of the submission: "Thriller/Suspense" -> "thriller_suspense".
    frame = frame.assign(genre=frame["genre"].map(_snake))
    return _common_classes_last(frame, "genre", MIN_FILMS_PER_GENRE)


def life_expectancy() -> pd.DataFrame:
    return _target_last(read_vendored("vega_gapminder.csv.gz"), "life_expect")


def industry_unemployment() -> pd.DataFrame:
    # The extract leaves the unemployment rate out: with the industry's workforce, which the
    # industry all but fixes, it gives the count away.
    return _target_last(read_vendored("vega_unemployment.csv.gz").rename(columns={"count": "unemployed"}), "unemployed")


def annual_precipitation() -> pd.DataFrame:
    return _target_last(read_vendored("vega_annual_precip.csv.gz"), "precipitation")


def occupation_workers() -> pd.DataFrame:
    # The extract leaves the share of the year's workforce out: with the year's total, which the
    # year fixes, it gives the count away.
    return _target_last(read_vendored("vega_jobs.csv.gz").rename(columns={"count": "workers"}), "workers")


def seattle_weather() -> pd.DataFrame:
    return read_vendored("vega_seattle_weather.csv.gz")


def digits() -> pd.DataFrame:
    """scikit-learn's bundled 8x8 handwritten digits (no vendored file)."""
    bunch = skd.load_digits(as_frame=True)
    frame = bunch.frame.rename(columns=lambda c: "digit" if c == "target" else _snake(c))
    digit = frame.pop("digit")
    frame["digit"] = digit
    return frame
