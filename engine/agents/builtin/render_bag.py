"""Script templates: seed bagging, the members part of the TRAINING_TRICKS gene (``seeds``)."""

from __future__ import annotations

from typing import Any

from engine.agents.builtin.catalog import ROW_BAGGED_CLASSES, SEED_VARYING_CLASSES

# Seed bagging (train gene ``seeds``): each member whose fits vary with the seed (the catalog's
# ``varies_with_seed``: row and column draws, random initial weights) is fit once per seed and its
# predictions averaged; a booster the seed does not change (scikit-learn's HistGB, its GBM without
# a row sample: ``bags_rows``) is fit on a seeded nine tenths of the rows per seed instead, so a
# Phase 3 of such models has bags to try too (football-goals at 300 s: two HistGB members, no
# bag, Phase 3 out of plans at 68 % of the limit). It lowers the variance part of the error,
# costs a fit per seed, and needs no choice the validation rows could overfit; Phase 3 tries it
# once the blends are known.
# The script tells which members vary itself, from their estimators: this section depends only on
# its gene and the task, whatever MODEL section it is joined with (a gene merge, a block rewrite).
_SEED_BAG = [
    "class SeedBagged(BaseEstimator):",
    '    """The model fit under `seeds` seeds (SEED, SEED + 1, ...), its predictions averaged. With',
    '    `rows` below 1 each fit also learns from its own seeded sample of that share of the rows:',
    '    a booster the seed does not change differs from fit to fit that way. With `whole_first`,',
    '    the first fit learns from every row (the model the run validated) and only the fits',
    '    grown after it from samples."""',
    "",
    "    def __init__(self, estimator, seeds=2, rows=1.0, whole_first=False):",
    "        self.estimator = estimator",
    "        self.seeds = seeds",
    "        self.rows = rows",
    "        self.whole_first = whole_first",
    "",
    "    def fit(self, X, y, fit_by=None):",
    '        """`fit_by` (a Unix time): no further fit starts that would not end by it, as long as',
    '        the last one took; the bag keeps the fits done, at least one."""',
    "        params = self.estimator.get_params()",
    '        self.seeded_ = [k for k, v in params.items() if k.endswith("random_state") and isinstance(v, int)]',
    "        self.varies_ = bool(self.seeded_) or self.rows < 1",
    "        count = self.seeds if self.varies_ else 1",
    "        self.estimators_, self.last_ = [], 0.0",
    "        for i in range(count):",
    "            if i and fit_by is not None and time.time() + self.last_ > fit_by:",
    '                print(f"Seed bag cut to {i} of {count} fits: the engine\'s deadline leaves no time for more")',
    "                break",
    "            self._fit_one(X, y)",
    '        if hasattr(self.estimators_[0], "classes_"):',
    "            self.classes_ = np.unique(y)",
    "        return self",
    "",
    "    def grow(self, X, y, fit_by):",
    '        """One more fit, when the bag\'s fits vary, it holds fewer than GROW_SEEDS and the fit,',
    '        GROW_MARGIN times as long as the last, would end by `fit_by`; whether it was fit."""',
    "        if not self.varies_ or len(self.estimators_) >= GROW_SEEDS or time.time() + GROW_MARGIN * self.last_ > fit_by:",
    "            return False",
    "        self._fit_one(X, y)",
    "        return True",
    "",
    "    def _fit_one(self, X, y):",
    "        # A booster's first fit also reads its size (EarlyStopped); the fits after it do not, so",
    "        # `last_` is the fit alone.",
    '        reading = globals().get("READING_S", [0.0])',
    "        i, started, read_before = len(self.estimators_), time.time(), reading[0]",
    "        X_i, y_i = X, y",
    "        if self.rows < 1 and not (self.whole_first and i == 0):",
    "            keep = np.sort(np.random.RandomState(SEED + i).permutation(len(X))[:max(1, int(self.rows * len(X)))])",
    '            X_i, y_i = (X.iloc[keep] if hasattr(X, "iloc") else X[keep]), y[keep]',
    "        params = self.estimator.get_params()",
    "        self.estimators_.append(clone(self.estimator).set_params(**{k: params[k] + i for k in self.seeded_}).fit(X_i, y_i))",
    "        self.last_ = time.time() - started - (reading[0] - read_before)",
    "",
    "    def predict(self, X):",
    "        return np.mean([m.predict(X) for m in self.estimators_], axis=0)",
    "",
    "    def predict_proba(self, X):",
    "        # A row sample may miss a rare class: each fit's columns go where its classes are.",
    "        out = np.zeros((len(X), len(self.classes_)))",
    "        for m in self.estimators_:",
    "            out[:, np.searchsorted(self.classes_, m.classes_)] += m.predict_proba(X)",
    "        return out / len(self.estimators_)",
    "",
    "",
    "def varies_with_seed(model):",
    '    """A model drawing rows, columns or initial weights at random, or boosting on a row sample."""',
    "    params = model.get_params()",
    "    return (any(type(v).__name__ in SEED_VARYING for v in params.values())",
    '            or any(k.split("__")[-1] == "subsample" and isinstance(v, (int, float)) and v < 1',
    "                   for k, v in params.items()))",
    "",
    "",
    "def bags_rows(model):",
    '    """A booster the seed does not change: bagged on row samples instead."""',
    "    return any(type(v).__name__ in ROW_BAGGED for v in model.get_params().values())",
]


# A time-driven test version of a booster the seed does not change had nothing to grow and left
# the time the script's estimate held back idle (galaxy-velocity at 120 s with seed 1, two HistGB
# members: 2.5 s of the 10.5 s given taken, the run ended at 89 % of its limit). Grown fits on
# nine tenths of the rows beside the fit on every row, on development test rows (HistGB Phase 1
# drafts, 12 s given): galaxy-velocity RMSE 2610 -> 2580, earthquake-magnitude 0.4111 -> 0.3967,
# bird-strike-damage AUC 0.7922 -> 0.8005, credit-default 0.9388 -> 0.9383.
GROWN_ROW_BAG = "SeedBagged(model, 1, rows=BAG_ROWS, whole_first=True) if bags_rows(model) else "


def _more_than_one(value: Any) -> bool:
    """A gene's count of fits that asks for more than one: a whole number above 1 (a plan's odd
    value, a flag, means one)."""
    return isinstance(value, int) and not isinstance(value, bool) and value > 1


def bagged(train: dict[str, Any]) -> bool:
    """Whether the TRAINING_TRICKS gene asks for seed bags (``seeds``)."""
    return _more_than_one(train.get("seeds", 1))


def grows(train: dict[str, Any]) -> bool:
    """Whether the gene's bags grow into the time the engine gave the script (``grow_seeds``: a
    time-driven run's test version, ``render_final.test_gene``)."""
    return _more_than_one(train.get("grow_seeds"))


def reads_deadline(train: dict[str, Any]) -> bool:
    """Whether the script's early-stopping or seed-bag code defines ``DEADLINE`` (the engine's
    deadline) already, so later code reads it rather than defining it again."""
    return bool(train.get("early_stop")) or bagged(train) or grows(train)


def members_code(train: dict[str, Any]) -> list[str]:
    """The lines that build ``members``: the MODEL gene's, each seed-varying one (or booster the seed
    does not change) bagged when asked. A test version that grows its bags wraps each member of an
    unbagged gene that can vary in a bag of one fit on every row, which then grows: a seed-varying
    one by seeds, a booster the seed does not change by fits on a tenth fewer rows
    (``GROWN_ROW_BAG``)."""
    if not (bagged(train) or grows(train)):
        return ["members = make_members()"]
    seeds = train["seeds"] if bagged(train) else 1
    # The early-stopping code (written above it) imports BaseEstimator and time and reads the
    # engine's deadline already.
    imports = [] if train.get("early_stop") else [
        "import time", "", "from sklearn.base import BaseEstimator", "", "",
        'DEADLINE = float(os.environ.get("ENGINE_EVAL_DEADLINE", "inf"))']
    row_bagged = ("SeedBagged(model, BAG_SEEDS, rows=BAG_ROWS) if bags_rows(model) else " if bagged(train)
                  else GROWN_ROW_BAG if grows(train) else "")
    return [
        *imports,
        f"SEED_VARYING = {SEED_VARYING_CLASSES!r}",
        f"ROW_BAGGED = {ROW_BAGGED_CLASSES!r}",
        f"BAG_SEEDS = {seeds}",
        "BAG_ROWS = 0.9",
        f"GROW_SEEDS = {int(train['grow_seeds']) if grows(train) else 0}  # fits a bag may grow to in the time left",
        # A fit on every row varies by more than its predecessor took (a busier machine, a deeper
        # tree), and a fit the engine kills costs the whole test run, not just that fit.
        "GROW_MARGIN = 1.5",
        "FINISH_S = 2.0  # what predicting the test rows and writing the submission may take",
        "",
        "",
        *_SEED_BAG,
        "",
        "",
        "members = [(name, SeedBagged(model, BAG_SEEDS) if varies_with_seed(model) else",
        f"           {row_bagged}model)",
        "           for name, model in make_members()]",
    ]
