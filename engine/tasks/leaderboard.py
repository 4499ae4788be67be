"""Medal thresholds: how they are derived (the grader compares a score with them through
``events.score.Score``, like every other score comparison).

Two derivations:

* **Gap fractions** (bundled tasks, which have no public leaderboard). Let ``b`` be the naive
  baseline (majority class / class priors / training mean) and ``r`` the best of two standard,
  untuned scikit-learn reference models (a linear model and a random forest, fixed seeds)
  trained on train.csv and scored on the private answers. A threshold closes a fraction of the
  gap from ``b`` to ``r``: median 90 %, bronze 97 %, silver 99 %, gold 100 %. So merely beating
  the naive baseline is not enough for anything; a solid model passes the median; a medal needs
  to come within a few percent of a sound out-of-the-box model; gold means matching it.
* **Kaggle ranks** (an MLE-bench competition directory with a ``leaderboard.csv``). Kaggle's
  published progression rules give the rank a team must reach for each medal depending on the
  number of teams; the threshold is the score at that rank, and the median is the median score.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from engine.tasks.model import Leaderboard
from events.domain import MetricDirection
from events.score import Score

GAP_FRACTIONS = {"median": 0.90, "bronze": 0.97, "silver": 0.99, "gold": 1.00}
_ROUND = 6  # thresholds are stored rounded so task.json is stable and readable


def from_gap(baseline: float, reference: float) -> Leaderboard:
    """Thresholds at fixed fractions of the gap from the naive baseline to the reference."""
    values = {
        name: round(baseline + fraction * (reference - baseline), _ROUND)
        for name, fraction in GAP_FRACTIONS.items()
    }
    return Leaderboard(
        **values,
        method=(
            "gap fractions from naive baseline to reference model: "
            + ", ".join(f"{k} {v:.0%}" for k, v in GAP_FRACTIONS.items())
        ),
        naive_baseline=round(baseline, _ROUND),
        reference_score=round(reference, _ROUND),
    )


def _medal_ranks(teams: int) -> tuple[int, int, int]:
    """(gold, silver, bronze) rank cut-offs from Kaggle's competition progression rules."""
    if teams < 100:
        return (max(1, math.ceil(0.1 * teams)), max(1, math.ceil(0.2 * teams)),
                max(1, math.ceil(0.4 * teams)))
    gold = 10 + math.floor(0.002 * teams) if teams >= 250 else 10
    if teams < 250:
        return gold, math.ceil(0.2 * teams), math.ceil(0.4 * teams)
    if teams < 1000:
        return gold, 50, 100
    return gold, math.ceil(0.05 * teams), math.ceil(0.1 * teams)


def from_kaggle_leaderboard(path: Path, direction: MetricDirection) -> Leaderboard:
    """Thresholds from a Kaggle private leaderboard CSV with a ``score`` column."""
    scores = pd.to_numeric(pd.read_csv(path)["score"], errors="coerce").dropna()
    values = scores.to_list()
    ranked = [values[i] for i in Score(direction).ranked(values)]  # best first
    if not ranked:
        return Leaderboard(method=f"{path}: no scores")
    gold, silver, bronze = (ranked[min(k, len(ranked)) - 1] for k in _medal_ranks(len(ranked)))
    return Leaderboard(
        gold=float(gold), silver=float(silver), bronze=float(bronze),
        median=float(scores.median()),
        method=f"Kaggle medal ranks over {len(ranked)} teams in {path.name}",
    )

