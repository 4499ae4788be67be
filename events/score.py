"""What "a better score" means, in one place (REQ-DM-028/029).

Every comparison of validation scores — the phases' ``>=`` steps, the pipeline's choice between
paths, the run-wide best-so-far, the projection the CLI shows and the evolution strategy's
fitness — goes through :class:`Score`, so the direction of the metric, what counts as no score
(``None`` and NaN) and the two tie rules are written exactly once.

*Scored rows.* A script may score on part of its validation rows (a cross-validation the deadline
cut to some of its folds, ``handlers.script_lines``); such a score is recorded with the number of
rows it is on (``scored_rows``; ``None``: every row). Scores on different rows are not compared:
a score on fewer rows never replaces one on more, and one on more rows replaces one on fewer
whatever the two values (9.307 on a cut cross-validation's 1,440 rows is not better than 9.756 on
all 3,600: the rows differ, not the models). Equal counts are compared by value: the builtin
scripts' folds come in one seeded order, so the same count is the same rows.

The two tie rules, named after what they do with equal scores:

* ``LATER_WINS`` — the paper's ``>=`` (Algorithms 1-3, REQ-DM-029): a new score equal to the best
  replaces it. Used wherever the algorithm moves on to the newer solution on a tie.
* ``FIRST_WINS`` — strict ``>`` (REQ-DM-028): the first of equal scores is kept. Used where
  "improved" must mean strictly better, and to report the best of results already ranked.

A score that is ``None`` or NaN is never better than anything and is beaten by any usable score.

*Validation noise* (``Score.clears_noise``). A refinement scored on the same folds as the
solution it would replace wins or loses partly by chance, and a long run that takes every win by
a hair keeps the luckiest of many near-equals: the winner's validation score flatters it more at
each step, and its validation score can improve while its held-out grade gets worse. A script may
print its metric on fixed
groups of its validation rows (``handlers.script_lines``); two scores on the same rows are then
compared paired, group by group, and a newcomer must win by more than ``margin`` standard errors
of the paired difference: the one-standard-error rule of model selection, with the standard error
measured on the run's own rows rather than guessed per table.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TypeVar

from events.enums import MetricDirection

T = TypeVar("T")


class Ties(str, Enum):
    LATER_WINS = "later_wins"   # >=: an equal newcomer replaces the best
    FIRST_WINS = "first_wins"   # > : the first of equals is kept


def usable(score: float | None) -> bool:
    """A score that can be compared: not None and not NaN."""
    return score is not None and not (isinstance(score, float) and math.isnan(score))


@dataclass(frozen=True)
class Score:
    """The comparison rule of one metric direction."""

    direction: MetricDirection

    @classmethod
    def of(cls, direction: MetricDirection | str) -> Score:
        return cls(MetricDirection(direction))

    @property
    def maximize(self) -> bool:
        return self.direction == MetricDirection.maximize

    def fitness(self, score: float | None) -> float | None:
        """The score as "higher is better" (``-score`` when minimising); None when unusable."""
        if not usable(score):
            return None
        assert score is not None
        return float(score) if self.maximize else -float(score)

    def better(self, new: float | None, old: float | None, ties: Ties = Ties.FIRST_WINS, *,
               new_rows: int | None = None, old_rows: int | None = None) -> bool:
        """Whether ``new`` beats ``old`` under ``ties``. An unusable ``new`` never does; a usable
        ``new`` always beats an unusable ``old``. ``new_rows``/``old_rows``: the rows each score is
        on (``None``: every row); on different rows, the one on more rows wins (module doc)."""
        a, b = self.fitness(new), self.fitness(old)
        if a is None:
            return False
        if b is None:
            return True
        if rows_rank(new_rows) != rows_rank(old_rows):
            return rows_rank(new_rows) > rows_rank(old_rows)
        return a >= b if ties is Ties.LATER_WINS else a > b

    def improves(self, new: float | None, old: float | None, *,
                 new_rows: int | None = None, old_rows: int | None = None) -> bool:
        """Strictly better (REQ-DM-028)."""
        return self.better(new, old, Ties.FIRST_WINS, new_rows=new_rows, old_rows=old_rows)

    def at_least(self, new: float | None, old: float | None, *,
                 new_rows: int | None = None, old_rows: int | None = None) -> bool:
        """Better or equal (REQ-DM-029): the paper's ``>=``."""
        return self.better(new, old, Ties.LATER_WINS, new_rows=new_rows, old_rows=old_rows)

    def clears_noise(self, new: float | None, old: float | None, *, margin: float,
                     new_groups: Sequence[float | None] | None = None,
                     old_groups: Sequence[float | None] | None = None) -> bool:
        """Whether ``new`` beats ``old`` by more than ``margin`` standard errors of their paired
        group differences (module doc). True when the noise cannot be measured (``margin`` 0, no
        groups on either side, too few usable pairs) or ``old`` is unusable: the plain rule then
        decides alone. False for an unusable ``new``."""
        a, b = self.fitness(new), self.fitness(old)
        if a is None:
            return False
        if b is None or margin <= 0:
            return True
        noise = paired_noise(self, new_groups, old_groups)
        return noise is None or a - b > margin * noise

    def best_index(self, scores: Sequence[float | None], ties: Ties,
                   rows: Sequence[int | None] | None = None) -> int | None:
        """Index of the best usable score (None when there is none), ties broken by ``ties``;
        ``rows``: the rows each score is on (``None``: every score on every row)."""
        on = list(rows) if rows is not None else [None] * len(scores)
        if len(on) != len(scores):
            raise ValueError(f"{len(scores)} scores but {len(on)} row counts")
        best: int | None = None
        for i, score in enumerate(scores):
            if best is None and usable(score) or best is not None and self.better(
                    score, scores[best], ties, new_rows=on[i], old_rows=on[best]):
                best = i
        return best

    def best(self, items: Iterable[T], key: Callable[[T], float | None], ties: Ties) -> T | None:
        """The item with the best usable ``key`` (None when no item has one)."""
        listed = list(items)
        i = self.best_index([key(item) for item in listed], ties)
        return None if i is None else listed[i]

    def ranked(self, scores: Sequence[float | None]) -> list[int]:
        """Indices of the usable scores, best first; equal scores keep their order (stable)."""
        keyed = [(i, self.fitness(s)) for i, s in enumerate(scores)]
        return [i for i, f in sorted(((i, f) for i, f in keyed if f is not None), key=lambda p: -p[1])]


# Fewer paired groups than this and the standard error is itself too noisy to act on: the plain
# comparison decides.
MIN_NOISE_GROUPS = 8


def paired_noise(rule: Score, new_groups: Sequence[float | None] | None,
                 old_groups: Sequence[float | None] | None) -> float | None:
    """The standard error of the mean paired difference between two scores' group values (the
    same groups of the same rows), None when it cannot be measured: either side has no groups,
    their counts differ, or fewer than MIN_NOISE_GROUPS groups have a usable value on both."""
    if not new_groups or not old_groups or len(new_groups) != len(old_groups):
        return None
    diffs = []
    for new, old in zip(new_groups, old_groups, strict=True):
        a, b = rule.fitness(new), rule.fitness(old)
        if a is not None and b is not None and math.isfinite(a) and math.isfinite(b):
            diffs.append(a - b)
    if len(diffs) < MIN_NOISE_GROUPS:
        return None
    mean = math.fsum(diffs) / len(diffs)
    variance = math.fsum((d - mean) ** 2 for d in diffs) / (len(diffs) - 1)
    return math.sqrt(variance / len(diffs))


def rows_rank(scored_rows: int | None) -> float:
    """How many rows a score is on, for comparison: ``None`` (every row) above any count."""
    return math.inf if scored_rows is None else float(scored_rows)


# An ablation study's printout is never a validation score (REQ-P2O-020): its evaluations are
# left out of every best-so-far (the run-wide fallback and the projection the CLI shows).
UNSCORED_PURPOSES = frozenset({"ablation"})


def counts_toward_best(purpose: str) -> bool:
    """Whether an evaluation of this purpose may become the run's best."""
    return purpose not in UNSCORED_PURPOSES


__all__ = ["MIN_NOISE_GROUPS", "UNSCORED_PURPOSES", "Score", "Ties", "counts_toward_best", "paired_noise", "rows_rank",
           "usable"]
