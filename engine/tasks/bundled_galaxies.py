"""A bundled task from OpenNGC's catalogue of the NGC and IC objects (held out from 2026-11-27, when
athlete-weight became a development task): how fast a galaxy recedes from us, from where it lies
in the sky, its morphology, its size and its brightness in five bands. Whether it is a development
task or held out is ``engine.tasks.protocol``'s business.

The table is an extract vendored gzip-compressed in ``engine/tasks/data``;
``LICENSE-pyongc.txt`` says where it came from, under which licence, and how it was cut. Left
out: the redshift (the same velocity divided by the speed of light), the catalogue's free-text
notes (a few quote the velocity) and the identifiers, one set per galaxy. The loader returns
features plus the target column in the original row order.
"""

from __future__ import annotations

import pandas as pd

from engine.tasks.bundled_islp import read_vendored
from engine.tasks.bundled_spec import BundledSpec
from events.domain import TaskType


def galaxy_velocity() -> pd.DataFrame:
    return read_vendored("pyongc_galaxies.csv.gz")


GALAXY_SPECS: tuple[BundledSpec, ...] = (
    BundledSpec(
        name="galaxy-velocity",
        title="How Fast a Galaxy Recedes",
        one_liner="predict a galaxy's radial velocity from its place in the sky, its type, its size and its magnitudes",
        load=galaxy_velocity,
        target="radial_velocity_kms",
        metric="rmse",
        task_type=TaskType.regression,
        overview=(
            "Each row is one of 9,980 galaxies of the New General Catalogue and the Index "
            "Catalogues (NGC and IC) whose radial velocity is known, as the OpenNGC database "
            "compiles them from NED, HyperLEDA and SIMBAD. Predict `radial_velocity_kms`, the "
            "speed in km/s at which the galaxy moves away from the Sun along the line of sight "
            "(heliocentric; negative: towards it): -483 to 52,025, half of them under 5,141, a "
            "long right tail. By Hubble's law it grows with the galaxy's distance."
        ),
        features=(
            "`catalogue` (text: `NGC`, `IC`, or a few `ESO`, `PGC` and `UGC` objects the database "
            "adds), `constellation` (text: the IAU abbreviation, 84 of them), `ra_deg` and "
            "`dec_deg` (right ascension and declination, J2000, in degrees), `hubble_type` (text: "
            "the morphological type, 30 of them from `E` for elliptical to `Sm` and `IB`; "
            "missing for 228 galaxies), `major_axis_arcmin` and `minor_axis_arcmin` (the apparent "
            "size), `position_angle_deg` (the major axis' direction, 0-180; missing for 15), "
            "`b_mag`, `v_mag`, "
            "`j_mag`, `h_mag` and `k_mag` (apparent magnitudes in the B, V, J, H and K bands: "
            "smaller is brighter; V missing for two thirds of the galaxies, J, H and K for about "
            "6 %) and `surface_brightness` (the mean B-band surface brightness within the 25 mag "
            "per square arcsecond isophote, in mag per square arcsecond; missing for 196; `b_mag` "
            "for 21)."
        ),
        seed=71,
    ),
)
