"""The MODEL gene, several targets: each member fits a model per target or one multi-output
model, whichever scores better on the hold-out split (``per_target_members``).

Only scikit-learn's multi-output learners (``JOINT_LEARNERS``) can fit every target at once;
the others always fit one model per target. The TRAINING_TRICKS gene wraps its members
(``per_target.py``) after building them, seed bags included, so everything inside a member
(early stopping, target transforms, bags) still sees one target at a time.
"""

# The block's own import sits below its script mark:
# ruff: noqa: I001
# mypy: allow-untyped-defs

from engine.agents.builtin.script_blocks.names import (
    CLASSES,
    GREATER_IS_BETTER,
    METRIC,
    TARGET_COLUMNS,
    TASK_KIND,
    ExtraTreesClassifier,
    ExtraTreesRegressor,
    KNeighborsClassifier,
    KNeighborsRegressor,
    Pipeline,
    RandomForestClassifier,
    RandomForestRegressor,
    Ridge,
    X_tr,
    X_val,
    clone,
    np,
    predict_values,
    score_predictions,
    y_tr,
    y_val,
)

# --- script ---
from sklearn.base import BaseEstimator

JOINT_LEARNERS = (RandomForestClassifier, RandomForestRegressor, ExtraTreesClassifier, ExtraTreesRegressor,
                  KNeighborsClassifier, KNeighborsRegressor, Ridge)


class PerTarget(BaseEstimator):
    """A model per target, or (``joint``) one model of every target at once; predictions in
    the script's one shape (a column per target, or every target's class probabilities)."""

    def __init__(self, estimator, joint=False):
        self.estimator = estimator
        self.joint = joint

    def fit(self, X, y):
        y = np.asarray(y)
        parts = [y] if self.joint else [y[:, t] for t in range(y.shape[1])]
        self.models_ = [clone(self.estimator).fit(X, part) for part in parts]
        if TASK_KIND == "classification":
            self.classes_ = np.arange(len(CLASSES))
        return self

    def predict(self, X):
        if self.joint:
            return np.asarray(self.models_[0].predict(X), dtype=float).reshape(len(X), -1)
        return np.column_stack([model.predict(X) for model in self.models_])

    def predict_proba(self, X):
        if self.joint:
            parts = list(zip(self.models_[0].classes_, self.models_[0].predict_proba(X)))
        else:
            parts = [(model.classes_, model.predict_proba(X)) for model in self.models_]
        out = np.zeros((len(X), len(CLASSES)))
        for cols, (classes, proba) in zip(TARGET_COLUMNS, parts):
            out[:, cols.start + np.asarray(classes, dtype=int)] = proba
        return out


def fits_jointly(model):
    """Whether the member's learner takes every target at once."""
    learner = model.steps[-1][1] if isinstance(model, Pipeline) else None
    return isinstance(getattr(learner, "regressor", learner), JOINT_LEARNERS)


def per_target_members(members):
    """Each member as a model per target, or as one multi-output model where its learner can be
    one and that scores better on the hold-out split (a tie keeps a model per target)."""
    chosen = []
    for name, model in members:
        joint = False
        if fits_jointly(model):
            scores = [score_predictions(y_val, predict_values(PerTarget(model, joint=form).fit(X_tr, y_tr), X_val))
                      for form in (False, True)]
            # Rounded: ridge fits the same coefficients either way, and rounding noise must not choose.
            joint_score, own_score = round(scores[1], 9), round(scores[0], 9)
            joint = joint_score > own_score if GREATER_IS_BETTER else joint_score < own_score
            print(f"Member {name}: validation {METRIC} per target {scores[0]:.6f}, as one multi-output "
                  f"model {scores[1]:.6f}: {'one multi-output model' if joint else 'a model per target'}")
        chosen.append((name, PerTarget(model, joint=joint)))
    return chosen
