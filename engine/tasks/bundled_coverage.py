"""Bundled tasks that widen coverage (issue 28): many classes, counts, high-cardinality text
categoricals, 50k rows, missing values. Which of them are development tasks and which are held
out is ``engine.tasks.protocol``'s business, not this catalogue's.
"""

from __future__ import annotations

from engine.tasks import bundled_vega as vega
from engine.tasks.bundled_spec import BundledSpec
from events.domain import TaskType

COVERAGE_SPECS: tuple[BundledSpec, ...] = (
    BundledSpec(
        name="digits",
        title="Handwritten Digits",
        one_liner="recognise a handwritten digit (ten classes) from an 8x8 grey-level image",
        load=vega.digits,
        target="digit",
        metric="accuracy",
        task_type=TaskType.classification,
        overview=(
            "Each row is a scanned handwritten digit, reduced to 8x8 blocks of grey levels. "
            "Predict the digit (`digit`: 0 to 9)."
        ),
        features="`pixel_R_C`: the grey level (0-16) of the block in row R and column C.",
        seed=31,
    ),
    BundledSpec(
        name="seattle-weather",
        title="Seattle Weather Type",
        one_liner="give the probabilities of five weather types of a day in Seattle from its measurements",
        load=vega.seattle_weather,
        target="weather",
        metric="logloss",
        task_type=TaskType.classification,
        overview=(
            "Each row is one day in Seattle, 2012-2015. For every day, give the probability of "
            "each of five weather types: drizzle, fog, rain, snow and sun. Rain and sun are common; "
            "snow is rare."
        ),
        features=(
            "`date` (text, YYYY-MM-DD), `precipitation` (mm), `temp_max` and `temp_min` (degrees "
            "Celsius) and `wind` (m/s)."
        ),
        seed=32,
        per_class_probabilities=True,
    ),
    BundledSpec(
        name="football-goals",
        title="Goals in a Football Match",
        one_liner="predict how many goals a European league match has, from the teams and the date",
        load=vega.football_goals,
        target="goals",
        metric="rmse",
        task_type=TaskType.regression,
        overview=(
            "Each row is a match of one of five European football leagues, 2013-2018. Predict "
            "`goals`, the number of goals both teams scored together (a small count)."
        ),
        features=(
            "`date` (text, YYYY-MM-DD), `division` (the league, text) and `home_team` and "
            "`away_team` (text: over a hundred clubs)."
        ),
        seed=33,
    ),
    BundledSpec(
        name="flight-delay",
        title="Flight Delays",
        one_liner="predict a US domestic flight's delay in minutes from its time, distance and airports",
        load=vega.flight_delay,
        target="delay",
        metric="rmse",
        task_type=TaskType.regression,
        overview=(
            "Each row is a US domestic flight in the first half of 2001 (50,000 drawn at random). "
            "Predict `delay`, the arrival delay in minutes: negative when early, mostly small, "
            "with a long right tail."
        ),
        features=(
            "`date` (text, YYYY-MM-DD), `dep_time` (scheduled departure, local time as hhmm, e.g. "
            "1320 = 13:20), `distance` (miles), `origin` and `destination` (text: airport codes, "
            "over two hundred each)."
        ),
        seed=34,
    ),
    BundledSpec(
        name="zip-state",
        title="State From Coordinates",
        one_liner="tell which US state a zip code lies in from its latitude and longitude (about fifty classes)",
        load=vega.zip_state,
        target="state",
        metric="accuracy",
        task_type=TaskType.classification,
        overview=(
            "Each row is a US zip code. Predict `state`, the two-letter code of the state (or the "
            "District of Columbia) it belongs to, from where it lies."
        ),
        features="`latitude` and `longitude` (degrees) of the zip code's centre.",
        seed=35,
    ),
    BundledSpec(
        name="bird-strike-damage",
        title="Bird Strike Damage",
        one_liner="predict whether a bird striking an aircraft damaged it, from the flight and the bird",
        load=vega.bird_strike_damage,
        target="damaged",
        metric="roc_auc",
        task_type=TaskType.classification,
        overview=(
            "Each row is a collision between wildlife and an aircraft reported to the US Federal "
            "Aviation Administration. About one strike in ten damaged the aircraft. Predict the "
            "probability that it did (`damaged` = 1). Some speeds were not recorded and are left empty."
        ),
        features=(
            "`airport_name`, `aircraft_make_model` (text: over two hundred models), `flight_date`, "
            "`aircraft_airline_operator`, `origin_state`, `phase_of_flight`, `wildlife_size`, "
            "`wildlife_species` and `time_of_day` (all text) and `speed_ias_in_knots`."
        ),
        seed=36,
        positive_class="1",
    ),
    BundledSpec(
        name="airport-state",
        title="State of an Airport",
        one_liner="tell which US state an airport is in from its name, city and coordinates (43 classes)",
        load=vega.airport_state,
        target="state",
        metric="accuracy",
        task_type=TaskType.classification,
        overview=(
            "Each row is an airport, heliport or airfield in the United States. Predict `state`, "
            "the two-letter code of the state it is in. States with fewer than 20 airports are "
            "not in the table."
        ),
        features=(
            "`name` (text: the airport's name), `city` (text: thousands of towns, some names shared "
            "by several states), `latitude` and `longitude` (degrees)."
        ),
        seed=37,
    ),
    BundledSpec(
        name="earthquake-magnitude",
        title="Earthquake Magnitude",
        one_liner="predict an earthquake's magnitude from where, when and how the network recorded it",
        load=vega.earthquake_magnitude,
        target="mag",
        metric="rmse",
        task_type=TaskType.regression,
        overview=(
            "Each row is a seismic event of one week (31 January to 7 February 2018) from the US "
            "Geological Survey's real-time feed of all earthquakes worldwide. Predict `mag`, its "
            "magnitude (from below zero for the smallest tremors to above six)."
        ),
        features=(
            "`time` (UTC, text), `latitude`, `longitude`, `depth` (km), `place` (text: where, "
            "e.g. \"4km W of Castaic, CA\"), `net` (the network that reported it), `status` "
            "(automatic or reviewed), `type` (earthquake, quarry blast, ...), `nst` (stations used), "
            "`dmin` (degrees to the nearest station), `rms` (travel-time residual, s), `gap` "
            "(largest azimuthal gap between stations, degrees) and `mag_type` (how the magnitude "
            "was measured). Some station figures are missing."
        ),
        seed=38,
    ),
    BundledSpec(
        name="car-origin",
        title="Origin of a Car",
        one_liner="give the probabilities that a 1970s-80s car model was made in the USA, Europe or Japan",
        load=vega.car_origin,
        target="origin",
        metric="logloss",
        task_type=TaskType.classification,
        overview=(
            "Each row is a car model sold in the USA between 1970 and 1982. For every car, give the "
            "probability of each origin: USA, Europe and Japan. Most are American."
        ),
        features=(
            "`miles_per_gallon`, `cylinders`, `displacement` (cubic inches), `horsepower`, "
            "`weight_in_lbs`, `acceleration` (seconds from 0 to 60 mph) and `year` (text, "
            "YYYY-01-01). A few fuel consumptions and horsepowers are missing."
        ),
        seed=39,
        per_class_probabilities=True,
    ),
    BundledSpec(
        name="species-habitat",
        title="Year-Round Habitat by County",
        one_liner="predict the share of a US county that is year-round habitat for one of four species",
        load=vega.species_habitat,
        target="habitat_yearround_pct",
        metric="rmse",
        task_type=TaskType.regression,
        overview=(
            "Each row is one species in one county of the contiguous United States, from the US "
            "Geological Survey's Gap Analysis Project habitat maps. Predict "
            "`habitat_yearround_pct`, the fraction (0 to 1) of the county's area that is year-round "
            "habitat for the species."
        ),
        features=(
            "`common_name` (American robin, white-tailed deer, American bullfrog or common "
            "gartersnake) and `county_id` (the county's five-digit FIPS code: its first two digits "
            "are the state's; about three thousand counties)."
        ),
        seed=40,
    ),
    BundledSpec(
        name="movie-genre",
        title="Genre of a Film",
        one_liner="give the probabilities of eleven genres of a film from its budget, takings, ratings and makers",
        load=vega.movie_genre,
        target="genre",
        metric="logloss",
        task_type=TaskType.classification,
        overview=(
            "Each row is a film released in the USA, most of them between 1990 and 2010. For every "
            "film, give the probability of each of eleven genres: action, adventure, black_comedy, "
            "comedy, documentary, drama, horror, musical, romantic_comedy, thriller_suspense and "
            "western. Drama and comedy are common; black comedies and westerns are rare. Many "
            "fields were not recorded and are left empty, and some release dates are wrong."
        ),
        features=(
            "`us_gross`, `worldwide_gross` and `us_dvd_sales` (dollars taken), `production_budget` "
            "(dollars), `release_date` (text, e.g. \"Jun 12 1998\"), `mpaa_rating` (text: G, PG, "
            "PG-13, R, ...), `running_time_min`, `distributor` (text: over 150 studios), `source` "
            "(text: original screenplay, based on a book, ...), `creative_type` (text: contemporary "
            "fiction, fantasy, ...), `director` (text: over 500 names), `rotten_tomatoes_rating` "
            "(critics, 0-100), `imdb_rating` (viewers, 1-10) and `imdb_votes`."
        ),
        seed=41,
        per_class_probabilities=True,
    ),
    BundledSpec(
        name="life-expectancy",
        title="Life Expectancy of a Country",
        one_liner="predict a country's life expectancy at birth in a given year from its population and fertility",
        load=vega.life_expectancy,
        target="life_expect",
        metric="rmse",
        task_type=TaskType.regression,
        overview=(
            "Each row is one of 62 countries in one year from 1955 to 2005, every five years, from "
            "the Gapminder Foundation's figures. Predict `life_expect`, the life expectancy at "
            "birth in years."
        ),
        features=(
            "`year`, `country` (text), `cluster` (a code, 0-5, of the country's world region), "
            "`pop` (population) and `fertility` (babies per woman)."
        ),
        seed=42,
    ),
    BundledSpec(
        name="industry-unemployment",
        title="Unemployed by Industry",
        one_liner="predict how many thousand workers of a US industry were unemployed in a month, 2000-2010",
        load=vega.industry_unemployment,
        target="unemployed",
        metric="rmse",
        task_type=TaskType.regression,
        overview=(
            "Each row is one month, January 2000 to February 2010, of one of fourteen industries "
            "in the US Current Population Survey. Predict `unemployed`, the number of unemployed "
            "people who last worked in that industry, in thousands (a count, from 2 in mining in "
            "good months to 2,440 in construction at the worst)."
        ),
        features=(
            "`series` (text: the industry, e.g. Construction, Finance, Self-employed), `year` and "
            "`month` (1-12)."
        ),
        seed=43,
    ),
    BundledSpec(
        name="annual-precipitation",
        title="Annual Precipitation on a World Grid",
        one_liner="predict the year's precipitation at a point of a one-degree world grid from where it lies",
        load=vega.annual_precipitation,
        target="precipitation",
        metric="rmse",
        task_type=TaskType.regression,
        overview=(
            "Each row is a point of a one-degree grid covering the world from 87 degrees north to "
            "80 degrees south, land and sea (60,480 points), from the Climate Forecast System "
            "(NOAA's CFSv2 model) for 2016. Predict `precipitation`, the year's total "
            "(millimetres, as the values suggest; the source states no unit): mostly a few "
            "hundred to two thousand, with a long right tail."
        ),
        features="`longitude` and `latitude` (whole degrees) of the grid point.",
        seed=44,
    ),
)
