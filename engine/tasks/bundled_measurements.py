"""Bundled tasks from three tables of instrument measurements (issue 28's fifth held-out rotation,
2026-11-27): the sunlight reaching the ground in an hour at two US weather stations, from the
weather observed and the sun's height; whether a yeast gene has the first of fourteen functions,
from 103 measurements of its expression and its presence in other genomes; and what an image
region shows (seven kinds), from 18 measurements of its pixels. Which of them are development
tasks and which are held out is ``engine.tasks.protocol``'s business.

The tables are extracts vendored gzip-compressed in ``engine/tasks/data``;
``LICENSE-pvlib.txt`` and ``LICENSE-river.txt`` say which file came from where, under which
licence, and how it was cut. Each loader returns features plus the target column in the original
row order.
"""

from __future__ import annotations

import pandas as pd

from engine.tasks.bundled_islp import read_vendored
from engine.tasks.bundled_spec import BundledSpec
from events.domain import TaskType


def hourly_sunlight() -> pd.DataFrame:
    return read_vendored("pvlib_tmy3_daylight.csv.gz")


def yeast_gene_function() -> pd.DataFrame:
    return read_vendored("river_yeast.csv.gz")


def image_segment() -> pd.DataFrame:
    return read_vendored("river_segment.csv.gz")


MEASUREMENT_SPECS: tuple[BundledSpec, ...] = (
    BundledSpec(
        name="hourly-sunlight",
        title="Sunlight on the Ground, Hour by Hour",
        one_liner="predict the sunlight reaching the ground in an hour at two weather stations, from the weather and the sun's height",
        load=hourly_sunlight,
        target="ghi_wm2",
        metric="rmse",
        task_type=TaskType.regression,
        overview=(
            "Each row is one daylight hour of a typical meteorological year (NREL's TMY3: each "
            "month taken from one real year between 1976 and 2005) at one of two US weather "
            "stations, Greensboro in North Carolina and Sand Point in Alaska: 9,527 hours. "
            "Predict `ghi_wm2`, the global horizontal irradiance, the mean power of sunlight "
            "falling on a horizontal square metre during the hour, in W/m² (0 to 1,013, half of "
            "the hours under 170)."
        ),
        features=(
            "`station` (text: `greensboro_nc` or `sand_point_ak`), `month`, `day`, `hour_ending` "
            "(the hour that ends at that local standard time, 1-24), `extraterrestrial_wm2` (the "
            "sunlight a horizontal square metre would get above the atmosphere that hour: how "
            "high the sun is), `total_cloud_tenths` and `opaque_cloud_tenths` (sky covered, in "
            "tenths), `dry_bulb_c` and `dew_point_c` (°C), `rel_humidity_pct`, `pressure_mbar` (the "
            "same 1012 on every hour at Sand Point), "
            "`wind_dir_deg`, `wind_speed_ms`, `visibility_m` (missing for 15 % of the hours), `ceiling_height_m` "
            "(the cloud base; 77777 means unlimited), `precipitable_water_cm`, "
            "`aerosol_optical_depth` and `albedo` (both 0 at Greensboro, where they were not "
            "recorded), `precip_depth_mm` and `precip_period_hr` (the liquid precipitation and "
            "the hours it was measured over; missing for most hours at Sand Point)."
        ),
        seed=62,
    ),
    BundledSpec(
        name="yeast-gene-function",
        title="Function of a Yeast Gene",
        one_liner="find the yeast genes of the first of fourteen functional classes, from 103 measurements of each gene",
        load=yeast_gene_function,
        target="class1",
        metric="roc_auc",
        task_type=TaskType.classification,
        overview=(
            "Each row is one of 2,417 genes of baker's yeast (Saccharomyces cerevisiae), "
            "described by micro-array expression levels and a phylogenetic profile (whether the "
            "gene has a counterpart in other genomes), 103 numbers in all, as Elisseeff and Weston "
            "(2001) prepared them. A gene can have several of fourteen functional classes; predict "
            "the probability that it has the first (`class1` = 1; 31 % of the genes do)."
        ),
        features="`att1` to `att103`: the 103 measurements (real numbers, -0.8 to 0.73), unnamed.",
        seed=63,
        positive_class="1",
    ),
    BundledSpec(
        name="image-segment",
        title="What an Image Region Shows",
        one_liner="give the probabilities of seven kinds of outdoor scene for a 3x3 pixel region, from measurements of its pixels",
        load=image_segment,
        target="category",
        metric="logloss",
        task_type=TaskType.classification,
        per_class_probabilities=True,
        overview=(
            "Each row is a 3x3 pixel region drawn at random from seven hand-segmented outdoor "
            "images (the Vision Group of the University of Massachusetts, 1990), described by 18 "
            "measurements of its pixels: 2,310 regions, 330 of each kind. For every region, give "
            "the probability of each kind: `brickface`, `cement`, `foliage`, `grass`, `path`, "
            "`sky` and `window`."
        ),
        features=(
            "`region_centroid_col` and `region_centroid_row` (where the region's centre lies in "
            "its image), `short_line_density_5` and `short_line_density_2` (how many lines of "
            "low or high contrast pass through it), `vedge_mean`, `vegde_sd`, `hedge_mean` and "
            "`hedge_sd` (the contrast of vertically and horizontally adjacent pixels), "
            "`intensity_mean`, `rawred_mean`, `rawblue_mean` and `rawgreen_mean`, `exred_mean`, "
            "`exblue_mean` and `exgreen_mean` (each colour's excess over the mean), and "
            "`value_mean`, `saturation_mean` and `hue_mean` (the HSV transform)."
        ),
        seed=64,
    ),
)
