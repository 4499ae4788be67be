"""The catalogue of bundled tasks: which packaged dataset, what to predict, how it is scored.

Only datasets that ship inside packages are used (scikit-learn's ``load_*`` readers,
palmerpenguins' CSV and ISLP's tables vendored in ``data/``), never ``fetch_*``, so preparing a
task needs no network. The ISLP tasks are the competition-like ones: thousands of rows, text
categoricals, missing values, an imbalanced binary target, five classes, a skewed count.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pandas as pd
from sklearn import datasets as skd
from sklearn.utils import Bunch

from engine.tasks import bundled_islp as islp
from engine.tasks.bundled_baseball import BASEBALL_SPECS
from engine.tasks.bundled_coverage import COVERAGE_SPECS
from engine.tasks.bundled_films_places import FILMS_PLACES_SPECS
from engine.tasks.bundled_galaxies import GALAXY_SPECS
from engine.tasks.bundled_heldout2 import HELDOUT2_SPECS
from engine.tasks.bundled_heldout3 import HELDOUT3_SPECS
from engine.tasks.bundled_image import IMAGE_SPECS
from engine.tasks.bundled_measurements import MEASUREMENT_SPECS
from engine.tasks.bundled_more import MORE_SPECS
from engine.tasks.bundled_spec import BundledSpec
from engine.tasks.bundled_text import TEXT_SPECS
from events.domain import TaskType


def _snake(name: str) -> str:
    return re.sub(r"[^0-9a-z]+", "_", name.lower()).strip("_")


def _sklearn(loader: Callable[..., Bunch], target: str, mapping: Callable[[pd.Series], pd.Series] | None = None,
             **kwargs: object) -> Callable[[], pd.DataFrame]:
    def load() -> pd.DataFrame:
        bunch = loader(as_frame=True, **kwargs)
        frame = bunch.frame.rename(columns=lambda c: "target" if c == "target" else _snake(c))
        values = frame.pop("target")
        frame[target] = mapping(values) if mapping else values
        return frame

    return load


def _penguins() -> pd.DataFrame:
    from palmerpenguins import load_penguins

    frame = load_penguins()
    species = frame.pop("species")
    # Missing measurements and sexes are kept on purpose: handling them is part of the task.
    frame["species"] = species
    return frame


def _iris_species(codes: pd.Series) -> pd.Series:
    return codes.map({0: "setosa", 1: "versicolor", 2: "virginica"})


SPECS: dict[str, BundledSpec] = {
    spec.name: spec
    for spec in (
        BundledSpec(
            name="breast-cancer",
            title="Breast Cancer Diagnosis",
            one_liner="predict whether a breast mass is malignant from 30 cell-nucleus measurements",
            load=_sklearn(skd.load_breast_cancer, "malignant",
                          mapping=lambda t: (1 - t).astype(int)),
            target="malignant",
            metric="roc_auc",
            task_type=TaskType.classification,
            overview=(
                "Each row describes the cell nuclei seen in a digitized image of a fine needle "
                "aspirate of a breast mass. Predict the probability that the mass is malignant "
                "(`malignant` = 1) rather than benign (`malignant` = 0)."
            ),
            features=(
                "Ten characteristics of the nuclei (radius, texture, perimeter, area, smoothness, "
                "compactness, concavity, concave points, symmetry, fractal dimension), each given "
                "as its mean (`mean_*`), standard error (`*_error`) and worst value (`worst_*`)."
            ),
            seed=11,
            positive_class="1",
        ),
        BundledSpec(
            name="wine",
            title="Wine Cultivar Recognition",
            one_liner="identify which of three cultivars a wine comes from, from its chemistry",
            load=_sklearn(skd.load_wine, "cultivar"),
            target="cultivar",
            metric="accuracy",
            task_type=TaskType.classification,
            overview=(
                "The rows are chemical analyses of wines grown in the same region of Italy from "
                "three different cultivars. Predict the cultivar (`cultivar`: 0, 1 or 2)."
            ),
            features="Thirteen constituents, e.g. alcohol, malic acid, flavanoids, colour "
                     "intensity, hue and proline.",
            seed=12,
        ),
        BundledSpec(
            name="diabetes",
            title="Diabetes Progression",
            one_liner="predict disease progression one year after baseline for diabetes patients",
            load=_sklearn(skd.load_diabetes, "progression",
                          scaled=False),
            target="progression",
            metric="rmse",
            task_type=TaskType.regression,
            overview=(
                "Each row is a diabetes patient measured at baseline. Predict `progression`, a "
                "quantitative measure of how far the disease progressed one year later."
            ),
            features=(
                "`age` (years), `sex` (1 or 2), `bmi` (body mass index), `bp` (average blood "
                "pressure) and six blood serum measurements `s1`…`s6` (total cholesterol, LDL, "
                "HDL, total cholesterol / HDL, log of triglycerides, blood sugar)."
            ),
            seed=13,
        ),
        BundledSpec(
            name="penguins",
            title="Palmer Penguins Species",
            one_liner="identify a penguin's species from island and body measurements, with gaps",
            load=_penguins,
            target="species",
            metric="accuracy",
            task_type=TaskType.classification,
            overview=(
                "Penguins were observed on three islands of the Palmer Archipelago, Antarctica. "
                "Predict each penguin's `species` (Adelie, Chinstrap or Gentoo). Some "
                "measurements and sexes were not recorded and are left empty."
            ),
            features=(
                "`island` (text), `bill_length_mm`, `bill_depth_mm`, `flipper_length_mm`, "
                "`body_mass_g`, `sex` (text: male / female) and `year` of observation."
            ),
            seed=14,
        ),
        BundledSpec(
            name="iris",
            title="Iris Species Probabilities",
            one_liner="give calibrated species probabilities for iris flowers from four measurements",
            load=_sklearn(skd.load_iris, "species",
                          mapping=_iris_species),
            target="species",
            metric="logloss",
            task_type=TaskType.classification,
            overview=(
                "Each row is an iris flower. For every flower, give the probability that it "
                "belongs to each of the three species: setosa, versicolor and virginica."
            ),
            features="`sepal_length_cm`, `sepal_width_cm`, `petal_length_cm`, `petal_width_cm`.",
            seed=15,
            per_class_probabilities=True,
        ),
        BundledSpec(
            name="wage-education",
            title="Education From Wage Survey",
            one_liner="give the probabilities of five education levels of workers from a wage survey",
            load=islp.wage_education,
            target="education",
            metric="logloss",
            task_type=TaskType.classification,
            overview=(
                "Each row is a male worker from the Mid-Atlantic region of the United States, "
                "surveyed between 2003 and 2009. For every worker, give the probability of each "
                "of five education levels: below_hs, hs_grad, some_college, college_grad and "
                "advanced_degree. Some answers were not recorded and are left empty."
            ),
            features=(
                "`year` of the survey, `age`, `maritl` (marital status, text), `race` (text), "
                "`region` (text), `jobclass` (industrial / information), `health` (text), "
                "`health_ins` (whether insured, text) and `wage` (raw wage, thousands of dollars)."
            ),
            seed=21,
            per_class_probabilities=True,
        ),
        BundledSpec(
            name="bike-sharing",
            title="Hourly Bike Rentals",
            one_liner="predict how many bikes are rented in an hour from calendar and weather",
            load=islp.bike_sharing,
            target="bikers",
            metric="rmse",
            task_type=TaskType.regression,
            overview=(
                "Each row is one hour of a city bike-sharing system in 2011. Predict `bikers`, "
                "the number of bikes rented during that hour (a count with a long right tail)."
            ),
            features=(
                "`season` (1-4), `mnth` (text: Jan...Dec), `day` (day of the year), `hr` (hour, "
                "0-23), `holiday`, `weekday` (0-6), `workingday`, `weathersit` (text: clear, "
                "cloudy/misty, light rain/snow, heavy rain/snow), normalised `temp`, `atemp` "
                "(felt temperature), `hum` (humidity) and `windspeed`."
            ),
            seed=22,
        ),
        BundledSpec(
            name="caravan-insurance",
            title="Caravan Insurance Buyers",
            one_liner="find the rare customers who buy caravan insurance, from 85 socio-demographic fields",
            load=islp.caravan_insurance,
            target="purchase",
            metric="roc_auc",
            task_type=TaskType.classification,
            overview=(
                "Each row is a customer of an insurance company. About 6 % of them bought a "
                "caravan insurance policy. Predict the probability that a customer bought one "
                "(`purchase` = 1)."
            ),
            features=(
                "85 fields: `MOSTYPE` (customer subtype, text) and `MOSHOOFD` (customer main "
                "type, text); 41 more `M*` fields describe the customer's postal-code area "
                "(shares of household types, education, income, ... as integer levels); the "
                "`P*` fields are contributions to and the `A*` fields numbers of other policies."
            ),
            seed=23,
            positive_class="1",
        ),
        BundledSpec(
            name="credit-default",
            title="Credit Card Default",
            one_liner="predict which credit card holders default, from balance, income and status",
            load=islp.credit_default,
            target="default",
            metric="roc_auc",
            task_type=TaskType.classification,
            overview=(
                "Each row is a credit card customer. About 3 % of them defaulted on their debt. "
                "Predict the probability that a customer defaults (`default` = 1). Some incomes "
                "and student statuses were not recorded and are left empty."
            ),
            features=(
                "`student` (text: Yes / No), `balance` (average balance left on the card after "
                "the monthly payment) and `income` (yearly income)."
            ),
            seed=24,
            positive_class="1",
        ),
        *COVERAGE_SPECS,
        *MORE_SPECS,
        *FILMS_PLACES_SPECS,
        *MEASUREMENT_SPECS,
        *GALAXY_SPECS,
        *BASEBALL_SPECS,
        *HELDOUT2_SPECS,
        *HELDOUT3_SPECS,
        *TEXT_SPECS,
        *IMAGE_SPECS,
    )
}
