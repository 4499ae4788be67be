"""A bundled task from nk_datasets' tables of Japanese professional baseball (held out from
2026-11-27, in galaxy-velocity's place when it became a development task): how many home runs a
batter hit in a season, from the rest of his season's line, his league, team and position, and
who he is (born when and where, how tall and heavy, which side he bats and throws from). Whether
it is a development task or held out is ``engine.tasks.protocol``'s business.

The table is an extract vendored gzip-compressed in ``engine/tasks/data``;
``LICENSE-nk-datasets.txt`` says where it came from, under which licence, and how it was cut.
Left out: every column that counts the home runs in or follows from them (hits, total bases,
runs, runs batted in, the batting, slugging and on-base averages, OPS, BABIP, wRC+, the offensive
runs and WAR), two shares that are another column over the plate appearances, and the names and
identifiers, one set per player or row. The loader returns features plus the target column in
the original row order.
"""

from __future__ import annotations

import pandas as pd

from engine.tasks.bundled_islp import read_vendored
from engine.tasks.bundled_spec import BundledSpec
from events.domain import TaskType


def batter_home_runs() -> pd.DataFrame:
    return read_vendored("nk_npb_batting.csv.gz")


BASEBALL_SPECS: tuple[BundledSpec, ...] = (
    BundledSpec(
        name="batter-home-runs",
        title="Home Runs in a Japanese Baseball Season",
        one_liner="predict how many home runs a batter hit in a Japanese professional baseball season "
                  "from the rest of his season's line, his team and who he is",
        load=batter_home_runs,
        target="home_runs",
        metric="rmse",
        task_type=TaskType.regression,
        overview=(
            "Each row is one player's batting season with one team in Japanese professional "
            "baseball: the Japan Baseball League of 1936-1949 and Nippon Professional Baseball's "
            "Central and Pacific Leagues of 1950-2025 (33,805 seasons with at least one plate "
            "appearance, pitchers' included; in 1936-1938 the league played a spring and a fall "
            "season, with a row for each). Predict `home_runs`, the home runs he hit that season: "
            "0 to 60, none on 55 % of the rows, a mean of 3.3: a count with a long right tail."
        ),
        features=(
            "The season: `season` (the year), `league` (text: `CL`, `PL` or `JBL`), `team` (text: "
            "56 club names, e.g. `YOMIURI`, `HANSHIN`), `position` (text: his position that "
            "season, 12 of them from `P` for pitcher to `DH` and `PH` for pinch hitter), `games`, "
            "`plate_appearances`, `at_bats`, `walks`, `intentional_walks`, `hit_by_pitch`, "
            "`strikeouts`, `sacrifice_hits`, `sacrifice_flies`, `stolen_bases`, `caught_stealing`, "
            "`double_plays` (grounded into), `baserunning_runs` and `fielding_runs` (runs above "
            "average from running the bases and from fielding). Gaps: `caught_stealing`, "
            "`double_plays`, `sacrifice_flies` and `intentional_walks` were not recorded in the "
            "early years (up to 1941, 1949, 1953 and 1954; missing for 4, 8, 11 and 17 % of the "
            "rows), and `position`, the two run figures and `intentional_walks` are missing for "
            "about 1,150 rows of recent seasons (nearly all 2023-2025). The player: `birth_year`, "
            "`birth_country` (text: 32 countries, `Japan` on nine rows in ten; missing for 267), "
            "`height_in` and `weight_lb` (inches and pounds; missing for 329 and 343), `bats` "
            "(text: `R`, `L`, `S` for switch, a few `B`), `throws` (text: `R` or `L`) and "
            "`primary_position` (text: his position over his career, 13 of them, e.g. `Pitcher`, "
            "`Shortstop`, `Pinch Hitter`)."
        ),
        seed=72,
    ),
)
