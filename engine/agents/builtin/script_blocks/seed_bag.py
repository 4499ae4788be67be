"""Seed bagging, the members part of the TRAINING_TRICKS gene (``seeds``, ``grow_seeds``).

Each member whose fits vary with the seed (row and column draws, random initial weights:
``SEED_VARYING``, from the catalog's ``varies_with_seed``) is fit once per seed (``BAG_SEEDS``)
and its predictions averaged; a booster the seed does not change (``ROW_BAGGED``: scikit-learn's
HistGB, its GBM without a row sample) is fit on a seeded nine tenths of the rows per fit instead
(``__ROW_BAG__``: the bag's arguments; a test version that grows its bags starts them at one fit
on every row). It lowers the variance part of the error, costs a fit per seed, and needs no
choice the validation rows could overfit. The script tells which members vary from their
estimators, so this section depends only on its gene and the task, whatever MODEL section it is
joined with. ``GROW_SEEDS``: the fits a bag may grow to in the time the engine gave a test
version; ``GROW_MARGIN``: a fit on every row varies by more than its predecessor took, and a fit
the engine kills costs the whole test run. Without early stopping, the imports and the deadline
that ``early_stop.py`` would have brought come first.
"""

# The script's own imports, spaced as the scripts have always written them:
# ruff: noqa: I001
# mypy: allow-untyped-defs
# Scripts carry no annotations: their empty collections are filled further down.
# mypy: disable-error-code="var-annotated"

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # a block of its own, apart from the imports the script itself starts with
    from engine.agents.builtin.script_blocks.names import __ROW_BAG__, SEED, clone, make_members, np

# --- script ---
# when not early_stop:
import time

from sklearn.base import BaseEstimator


# insert deadline
# end early_stop
SEED_VARYING = ()
ROW_BAGGED = ()
BAG_SEEDS = 1
BAG_ROWS = 0.9
GROW_SEEDS = 0  # fits a bag may grow to in the time left
GROW_MARGIN = 1.5
FINISH_S = 2.0  # what predicting the test rows and writing the submission may take


class SeedBagged(BaseEstimator):
    """The model fit under `seeds` seeds (SEED, SEED + 1, ...), its predictions averaged. With
    `rows` below 1 each fit also learns from its own seeded sample of that share of the rows:
    a booster the seed does not change differs from fit to fit that way. With `whole_first`,
    the first fit learns from every row (the model the run validated) and only the fits
    grown after it from samples."""

    def __init__(self, estimator, seeds=2, rows=1.0, whole_first=False):
        self.estimator = estimator
        self.seeds = seeds
        self.rows = rows
        self.whole_first = whole_first

    def fit(self, X, y, fit_by=None):
        """`fit_by` (a Unix time): no further fit starts that would not end by it, as long as
        the last one took; the bag keeps the fits done, at least one."""
        params = self.estimator.get_params()
        self.seeded_ = [k for k, v in params.items() if k.endswith("random_state") and isinstance(v, int)]
        self.varies_ = bool(self.seeded_) or self.rows < 1
        count = self.seeds if self.varies_ else 1
        self.estimators_, self.last_ = [], 0.0
        for i in range(count):
            if i and fit_by is not None and time.time() + self.last_ > fit_by:
                print(f"Seed bag cut to {i} of {count} fits: the engine's deadline leaves no time for more")
                break
            self._fit_one(X, y)
        if hasattr(self.estimators_[0], "classes_"):
            self.classes_ = np.unique(y)
        return self

    def grow(self, X, y, fit_by):
        """One more fit, when the bag's fits vary, it holds fewer than GROW_SEEDS and the fit,
        GROW_MARGIN times as long as the last, would end by `fit_by`; whether it was fit."""
        if not self.varies_ or len(self.estimators_) >= GROW_SEEDS or time.time() + GROW_MARGIN * self.last_ > fit_by:
            return False
        self._fit_one(X, y)
        return True

    def _fit_one(self, X, y):
        # A booster's first fit also reads its size (EarlyStopped); the fits after it do not, so
        # `last_` is the fit alone.
        reading = globals().get("READING_S", [0.0])
        i, started, read_before = len(self.estimators_), time.time(), reading[0]
        X_i, y_i = X, y
        if self.rows < 1 and not (self.whole_first and i == 0):
            keep = np.sort(np.random.RandomState(SEED + i).permutation(len(X))[:max(1, int(self.rows * len(X)))])
            X_i, y_i = (X.iloc[keep] if hasattr(X, "iloc") else X[keep]), y[keep]
        params = self.estimator.get_params()
        self.estimators_.append(clone(self.estimator).set_params(**{k: params[k] + i for k in self.seeded_}).fit(X_i, y_i))
        self.last_ = time.time() - started - (reading[0] - read_before)

    def predict(self, X):
        return np.mean([m.predict(X) for m in self.estimators_], axis=0)

    def predict_proba(self, X):
        # A row sample may miss a rare class: each fit's columns go where its classes are.
        out = np.zeros((len(X), len(self.classes_)))
        for m in self.estimators_:
            out[:, np.searchsorted(self.classes_, m.classes_)] += m.predict_proba(X)
        return out / len(self.estimators_)


def varies_with_seed(model):
    """A model drawing rows, columns or initial weights at random, or boosting on a row sample."""
    params = model.get_params()
    return (any(type(v).__name__ in SEED_VARYING for v in params.values())
            or any(k.split("__")[-1] == "subsample" and isinstance(v, (int, float)) and v < 1
                   for k, v in params.items()))


def bags_rows(model):
    """A booster the seed does not change: bagged on row samples instead."""
    return any(type(v).__name__ in ROW_BAGGED for v in model.get_params().values())


members = [(name, SeedBagged(model, BAG_SEEDS) if varies_with_seed(model) else
           SeedBagged(model, __ROW_BAG__) if bags_rows(model) else model)
           for name, model in make_members()]
