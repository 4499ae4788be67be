"""Boosted members sized by early stopping on an inner split (TRAINING_TRICKS gene ``early_stop``).

The rounds a table needs differ by orders of magnitude (a Poisson loss or a low learning rate
needs many more), so a fixed count under- or over-fits most tables. The MODEL gene's size
(n_estimators, or max_iter) becomes the expected size, and boosting may go on to ROUNDS_HEADROOM
times that while the held-out tenth improves. Below 1,000 rows the given size stays: sizing from
fewer rows was measured worse. ``SEARCH_ROWS`` is the search's sample (0: this is the search).
The engine's deadline goes in at ``# insert deadline`` (``deadline.py``).
"""

# The script's own imports, spaced as the scripts have always written them:
# ruff: noqa: I001
# mypy: allow-untyped-defs
# Scripts carry no annotations: their empty collections are filled further down.
# mypy: disable-error-code="var-annotated"

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # a block of its own, apart from the imports the script itself starts with
    from engine.agents.builtin.script_blocks.names import DEADLINE, SEED, clone, np, train_test_split

# --- script ---
import time

from sklearn.base import BaseEstimator


ROUNDS_HEADROOM = 4
# A boosting round on K > 2 classes grows K trees: past TEN_CLASSES the headroom shrinks in
# proportion (never below the size given), so a fit on fifty classes costs what one on ten does.
TEN_CLASSES = 10
MIN_STOPPING_ROWS = 100  # a stopping point read off fewer held-out rows is noise
# The stopping point of each member, found once per script (on the first training rows it is
# fit on) and reused by its later fits (the other folds, the final fit): probing every fold
# again costs as much as the fits themselves, on many classes more than the run can give.
# key -> (rounds, the rows they were read on, the seconds reading them took)
STOPPING_ROUNDS = {}
# A fit on RESIZE_ROWS times those rows or more (the submitted model, fit on every row after the
# search scored a sample) reads its own: more rows carry more rounds before the held-out part
# stops improving (flight-delay at 120 s: 3,600 rows sized a model fit on 35,000). It does so
# when the time the engine gave the script (ENGINE_EVAL_DEADLINE) holds RESIZE_COST times the
# first reading scaled to its rows: the reading and the longer refits after it.
RESIZE_ROWS = 2
RESIZE_COST = 3
# There the size of each tree is read too: leaves sized on the search's sample under-fit every
# row (population-by-age, 119,000 rows: 15 leaves read on 3,600 scored an RMSE of 580,000 on its
# test rows, 63 leaves 349,000, 255 leaves 272,000). The leaves grow CAPACITY_STEP-fold while the
# held-out tenth's loss improves and the time left holds RESIZE_COST times the last reading,
# CAPACITY_COST times as long (bigger trees, and the refit after).
CAPACITY_PARAMS = ("num_leaves", "max_leaf_nodes")
CAPACITY_STEP = 4
CAPACITY_COST = 2
MAX_LEAVES = 1024
CAPACITY = {}  # key -> the tree size read on the most rows, when bigger trees did better there
READING_S = [0.0]  # the seconds every reading took so far (a fit's own time is the rest)
# insert deadline


class EarlyStopped(BaseEstimator):
    """Boost on nine tenths of the rows until PATIENCE rounds bring no gain on the last tenth
    (at most ROUNDS_HEADROOM times the size given), then refit on all rows with the best number
    of rounds. With fewer than MIN_STOPPING_ROWS in that tenth, the given size stays."""

    def __init__(self, estimator, patience=50):
        self.estimator = estimator
        self.patience = patience

    def fit(self, X, y):
        size_param = "max_iter" if "max_iter" in self.estimator.get_params() else "n_estimators"
        size = int(self.estimator.get_params()[size_param])
        classify = hasattr(self.estimator, "predict_proba")
        # The seed is not part of the key: the fits of a seed bag share one stopping point.
        key = repr(sorted(kv for kv in self.estimator.get_params().items() if kv[0] != "random_state"))
        found = STOPPING_ROUNDS.get(key)
        if len(X) < 10 * MIN_STOPPING_ROWS:
            self.n_rounds_ = size
        else:
            if found is None or _worth_reading_again(found, len(X)):
                # past its first reading, or (a test version) past the search's sample
                resized = found is not None or 0 < SEARCH_ROWS * RESIZE_ROWS <= len(X)
                classes = len(np.unique(y)) if classify else 1
                cap = max(size, ROUNDS_HEADROOM * size * min(classes, TEN_CLASSES) // max(classes, 1))
                started = time.monotonic()
                rounds, loss = self._stopping_round(X, y, size_param, cap, classify, {})
                took = time.monotonic() - started
                if resized and loss is not None:
                    CAPACITY[key], rounds = self._read_capacity(X, y, size_param, cap, classify, rounds, loss, took)
                found = STOPPING_ROUNDS[key] = (rounds, len(X), took)
                READING_S[0] += time.monotonic() - started
            self.n_rounds_ = found[0]
        sized_as = {size_param: self.n_rounds_, **CAPACITY.get(key, {})}
        self.estimator_ = clone(self.estimator).set_params(**sized_as).fit(X, y)
        if hasattr(self.estimator_, "classes_"):
            self.classes_ = self.estimator_.classes_
        return self

    def _stopping_round(self, X, y, size_param, cap, classify, params):
        """The best number of rounds (`params` set) and the held-out loss there (None when the
        booster does not report one)."""
        # A class of one row cannot be split into a stratified held-out tenth (scikit-learn's
        # boosters always stratify theirs): the reading leaves it out, the fit after keeps it.
        keep = np.bincount(y)[y] >= 2 if classify else None
        if keep is not None and not keep.all():
            X, y = (X.iloc[keep] if hasattr(X, "iloc") else X[keep]), y[keep]
        if type(self.estimator).__module__.startswith("lightgbm"):
            from lightgbm import early_stopping

            strata = y if classify else None
            X_a, X_b, y_a, y_b = train_test_split(X, y, test_size=0.1, random_state=SEED, stratify=strata)
            probe = clone(self.estimator).set_params(**{size_param: cap, **params}).fit(
                X_a, y_a, eval_set=[(X_b, y_b)], callbacks=[early_stopping(self.patience, verbose=False)])
            losses = list(probe.best_score_.get("valid_0", {}).values())
            return max(1, int(probe.best_iteration_ or cap)), (float(losses[0]) if losses else None)
        # scikit-learn's boosters hold out their own tenth (stratified for classes) and stop once
        # PATIENCE rounds brought no gain on it; the best round is the one before those.
        stopping = {size_param: cap, "n_iter_no_change": self.patience, "validation_fraction": 0.1, **params}
        if "early_stopping" in self.estimator.get_params():
            stopping["early_stopping"] = True
        probe = clone(self.estimator).set_params(**stopping).fit(X, y)
        fitted = int(getattr(probe, "n_iter_", None) or probe.n_estimators_)
        scores = getattr(probe, "validation_score_", None)   # HistGB: minus its loss on the tenth
        loss = -float(np.max(scores)) if scores is not None and len(scores) else None
        return (cap if fitted >= cap else max(1, fitted - self.patience)), loss

    def _read_capacity(self, X, y, size_param, cap, classify, rounds, loss, took):
        """Bigger trees while they do better on the held-out tenth and the time holds their
        reading (module comment above): the tree size to refit with ({} for the given one) and
        its rounds."""
        given = self.estimator.get_params()
        name = next((p for p in CAPACITY_PARAMS if type(given.get(p)) is int), None)
        if name is None:
            return {}, rounds
        best, leaves = {}, given[name]
        while leaves * CAPACITY_STEP <= MAX_LEAVES and RESIZE_COST * CAPACITY_COST * took < DEADLINE - time.time():
            trial, started = {name: leaves * CAPACITY_STEP}, time.monotonic()
            trial_rounds, trial_loss = self._stopping_round(X, y, size_param, cap, classify, trial)
            took = time.monotonic() - started
            if trial_loss is None or not trial_loss < loss:
                break
            best, rounds, loss, leaves = trial, trial_rounds, trial_loss, trial[name]
        if best:
            print(f"Trees grown on {len(X)} rows: {name} = {leaves} (given {given[name]}), held-out loss {loss:.6g}")
        return best, rounds

    def predict(self, X):
        return self.estimator_.predict(X)

    def predict_proba(self, X):
        return self.estimator_.predict_proba(X)


def _worth_reading_again(found, rows):
    _, read_on, took = found
    return rows >= RESIZE_ROWS * read_on and RESIZE_COST * took * rows / read_on < DEADLINE - time.time()


def sized(estimator):
    return EarlyStopped(estimator)
SEARCH_ROWS = 0  # the search's sample (0: this is the search)
