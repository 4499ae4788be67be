"""Script templates: seed bagging, the members part of the TRAINING_TRICKS gene (``seeds``)."""

from __future__ import annotations

from typing import Any

from engine.agents.builtin.catalog import SEED_VARYING_CLASSES

# Seed bagging (train gene ``seeds``): each member whose fits vary with the seed (the catalog's
# ``varies_with_seed``: row and column draws, random initial weights) is fit once per seed and its
# predictions averaged. It lowers the variance part of the error, costs a fit per seed, and
# needs no choice the validation rows could overfit; Phase 3 tries it once the blends are known.
# The script tells which members vary itself, from their estimators: this section depends only on
# its gene and the task, whatever MODEL section it is joined with (a gene merge, a block rewrite).
_SEED_BAG = [
    "class SeedBagged(BaseEstimator):",
    '    """The model fit under `seeds` seeds (SEED, SEED + 1, ...), its predictions averaged."""',
    "",
    "    def __init__(self, estimator, seeds=2):",
    "        self.estimator = estimator",
    "        self.seeds = seeds",
    "",
    "    def fit(self, X, y):",
    "        params = self.estimator.get_params()",
    '        seeded = [k for k, v in params.items() if k.endswith("random_state") and isinstance(v, int)]',
    "        self.estimators_ = [",
    "            clone(self.estimator).set_params(**{k: params[k] + i for k in seeded}).fit(X, y)",
    "            for i in range(self.seeds if seeded else 1)",
    "        ]",
    '        if hasattr(self.estimators_[0], "classes_"):',
    "            self.classes_ = self.estimators_[0].classes_",
    "        return self",
    "",
    "    def predict(self, X):",
    "        return np.mean([m.predict(X) for m in self.estimators_], axis=0)",
    "",
    "    def predict_proba(self, X):",
    "        return np.mean([m.predict_proba(X) for m in self.estimators_], axis=0)",
    "",
    "",
    "def varies_with_seed(model):",
    '    """A model drawing rows, columns or initial weights at random, or boosting on a row sample."""',
    "    params = model.get_params()",
    "    return (any(type(v).__name__ in SEED_VARYING for v in params.values())",
    '            or any(k.split("__")[-1] == "subsample" and isinstance(v, (int, float)) and v < 1',
    "                   for k, v in params.items()))",
]


def members_code(train: dict[str, Any]) -> list[str]:
    """The lines that build ``members``: the MODEL gene's, each seed-varying one bagged when asked."""
    seeds = train.get("seeds", 1)
    if not isinstance(seeds, int) or seeds <= 1:   # one seed, or a value no bag can be made of
        return ["members = make_members()"]
    # The early-stopping code (written above it) imports BaseEstimator already.
    imports = [] if train.get("early_stop") else ["from sklearn.base import BaseEstimator", "", ""]
    return [
        *imports,
        f"SEED_VARYING = {SEED_VARYING_CLASSES!r}",
        f"BAG_SEEDS = {seeds}",
        "",
        "",
        *_SEED_BAG,
        "",
        "",
        "members = [(name, SeedBagged(model, BAG_SEEDS) if varies_with_seed(model) else model)",
        "           for name, model in make_members()]",
    ]
