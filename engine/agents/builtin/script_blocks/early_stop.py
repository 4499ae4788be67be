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
    from engine.agents.builtin.script_blocks.names import DEADLINE, SEED, clone, np, os, train_test_split

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
# Paced to the window the engine asks a script to fit (ENGINE_EVAL_FIT_BY, a Unix time, sooner than
# its deadline; only Phase 1's drafts are given one: docs/decisions/0032): a first reading whose
# rounds, timed past its first PACE_ROUNDS, show that this member's work at its longest (the
# reading to its cap, then FITS_AFTER_READING fits that long: the folds and the refit), with
# PACE_MARGIN for the rest of the script, would not end by then starts again learning up to
# MAX_SPEEDUP times faster in as many times fewer rounds. A draft that fits its window does better
# than the same draft cut at its end (Phase 1 cuts it, and the run goes on with a weaker model).
# The longest, not the size given: a faster rate often still stops near its cap, and a pace read
# off the size given left wesnoth-unit-race's draft three times over its window. Only the first
# reading is paced; the readings and tree sizes of a fit on more rows keep to the deadline.
PACE_ROUNDS = 10
FITS_AFTER_READING = 6
PACE_MARGIN = 1.5
MAX_SPEEDUP = 8
SPED_UP = {}  # key -> the learning rate given instead of the member's own
FIT_BY = float(os.environ.get("ENGINE_EVAL_FIT_BY", "inf"))
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
                if found is None and not resized:
                    rounds, loss, cap = self._paced_reading(X, y, size_param, cap, classify, key)
                else:
                    rounds, loss = self._stopping_round(X, y, size_param, cap, classify, dict(SPED_UP.get(key, {})))
                took = time.monotonic() - started
                if resized and loss is not None:
                    CAPACITY[key], rounds = self._read_capacity(X, y, size_param, cap, classify, rounds, loss, took,
                                                                SPED_UP.get(key, {}))
                found = STOPPING_ROUNDS[key] = (rounds, len(X), took)
                READING_S[0] += time.monotonic() - started
            self.n_rounds_ = found[0]
        sized_as = {size_param: self.n_rounds_, **SPED_UP.get(key, {}), **CAPACITY.get(key, {})}
        self.estimator_ = clone(self.estimator).set_params(**sized_as).fit(X, y)
        if hasattr(self.estimator_, "classes_"):
            self.classes_ = self.estimator_.classes_
        return self

    def _paced_reading(self, X, y, size_param, cap, classify, key):
        """The first reading, paced to FIT_BY (the comment at PACE_ROUNDS): its rounds, loss and
        the cap it read up to."""
        try:
            return (*self._stopping_round(X, y, size_param, cap, classify, {}, pace=True), cap)
        except TooSlow as slow:
            speedup = min(MAX_SPEEDUP, slow.speedup)
            rate = self.estimator.get_params()["learning_rate"] * speedup
            SPED_UP[key] = {"learning_rate": rate}
            print(f"Learning {speedup:.2f} times faster to fit the window given: learning_rate {rate:.4g}")
            cap = max(1, int(cap / speedup))
            return (*self._stopping_round(X, y, size_param, cap, classify, dict(SPED_UP[key])), cap)

    def _stopping_round(self, X, y, size_param, cap, classify, params, pace=False):
        """The best number of rounds (`params` set) and the held-out loss there (None when the
        booster does not report one). ``pace``: raise TooSlow when this member's work at the pace
        of the first rounds would not end by FIT_BY (LightGBM only: scikit-learn's boosters take
        no callback)."""
        # A class of one row cannot be split into a stratified held-out tenth (scikit-learn's
        # boosters always stratify theirs): the reading leaves it out, the fit after keeps it.
        keep = np.bincount(y)[y] >= 2 if classify else None
        if keep is not None and not keep.all():
            X, y = (X.iloc[keep] if hasattr(X, "iloc") else X[keep]), y[keep]
        if type(self.estimator).__module__.startswith("lightgbm"):
            from lightgbm import early_stopping

            strata = y if classify else None
            X_a, X_b, y_a, y_b = train_test_split(X, y, test_size=0.1, random_state=SEED, stratify=strata)
            callbacks = [early_stopping(self.patience, verbose=False)]
            if pace and FIT_BY < float("inf"):
                callbacks.append(_pacer((1 + FITS_AFTER_READING) * cap + self.patience))
            probe = clone(self.estimator).set_params(**{size_param: cap, **params}).fit(
                X_a, y_a, eval_set=[(X_b, y_b)], callbacks=callbacks)
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

    def _read_capacity(self, X, y, size_param, cap, classify, rounds, loss, took, sped_up):
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
            trial_rounds, trial_loss = self._stopping_round(X, y, size_param, cap, classify, {**sped_up, **trial})
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


class TooSlow(Exception):
    def __init__(self, speedup):
        super().__init__(f"{speedup:.2f} times too slow for the deadline")
        self.speedup = speedup


def _pacer(rounds):
    """A LightGBM callback timing the rounds after the first (which also bins the data): past
    PACE_ROUNDS, TooSlow when ``rounds`` of them would not end by FIT_BY."""
    began = []

    def pace(env):
        done = env.iteration - env.begin_iteration
        if done == 0:
            began.append(time.monotonic())
        elif done == PACE_ROUNDS:
            per_round = (time.monotonic() - began[0]) / PACE_ROUNDS
            need, left = PACE_MARGIN * per_round * (rounds - done), FIT_BY - time.time()
            if need > left:
                raise TooSlow(need / max(left, 1e-3))
    return pace


def _worth_reading_again(found, rows):
    _, read_on, took = found
    return rows >= RESIZE_ROWS * read_on and RESIZE_COST * took * rows / read_on < DEADLINE - time.time()


def sized(estimator):
    return EarlyStopped(estimator)
SEARCH_ROWS = 0  # the search's sample (0: this is the search)
