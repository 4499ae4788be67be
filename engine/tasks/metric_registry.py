"""The metric registry: every metric's canonical name, the spellings Kaggle uses for it, its
direction and the submission form it needs. ``engine start`` (through the task loader and check),
the agents' prompts (the canonical name the loader records) and ``engine grade`` all read this one
table; ``engine/tasks/metrics.py`` scores with it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from engine.tasks.model import TaskError
from events.domain import MetricDirection, TaskType

MetricKind = Literal["label", "value", "probability", "ranking"]


@dataclass(frozen=True)
class MetricInfo:
    name: str
    direction: MetricDirection
    kind: MetricKind  # what a submission holds: class labels, numbers, probabilities, ranked labels
    task_type: TaskType
    form: str = ""  # the submission this metric needs, in words (for `engine tasks check` and docs)


_MAX, _MIN = MetricDirection.maximize, MetricDirection.minimize
_CLS, _REG = TaskType.classification, TaskType.regression
_LABEL = "one class label per row in each target column"
_VALUE = "one number per row in each target column"
_PROBA = ("the probability of the positive class in the one target column, or one probability "
          "column per class (the column names are the classes)")
MAP_AT_K = "map@k"  # stands for map@1, map@2, …: k is part of the name (`map@3`)

METRICS: dict[str, MetricInfo] = {
    m.name: m
    for m in (
        MetricInfo("roc_auc", _MAX, "probability", _CLS, _PROBA),
        MetricInfo("mean_columnwise_roc_auc", _MAX, "probability", _CLS,
                   "one probability per label column (multi-label: each column is its own 0/1 target)"),
        MetricInfo("logloss", _MIN, "probability", _CLS, _PROBA),
        MetricInfo("accuracy", _MAX, "label", _CLS, _LABEL),
        MetricInfo("balanced_accuracy", _MAX, "label", _CLS, _LABEL),
        MetricInfo("f1", _MAX, "label", _CLS, _LABEL),
        MetricInfo("f1_macro", _MAX, "label", _CLS, _LABEL),
        MetricInfo("quadratic_weighted_kappa", _MAX, "label", _CLS,
                   "one ordinal rating (an integer class) per row in each target column"),
        MetricInfo(MAP_AT_K, _MAX, "ranking", _CLS,
                   "up to k class labels per row, best first, separated by spaces, in the one target column"),
        MetricInfo("rmse", _MIN, "value", _REG, _VALUE),
        MetricInfo("mcrmse", _MIN, "value", _REG,
                   "one number per row in each target column; the score is the mean of the columns' RMSE"),
        MetricInfo("rmsle", _MIN, "value", _REG, "one number > -1 (usually >= 0) per row in each target column"),
        MetricInfo("mse", _MIN, "value", _REG, _VALUE),
        MetricInfo("mae", _MIN, "value", _REG, _VALUE),
        MetricInfo("r2", _MAX, "value", _REG, _VALUE),
    )
}

# Spellings seen on Kaggle's evaluation pages and in MLE-bench's competitions, normalised the
# way ``canonical_metric`` normalises a name (lower case, runs of spaces/dashes/slashes → "_").
_ALIASES = {
    "auc": "roc_auc",
    "rocauc": "roc_auc",
    "roc": "roc_auc",
    "area_under_the_roc_curve": "roc_auc",
    "area_under_the_receiver_operating_characteristic_curve": "roc_auc",
    "mean_column_wise_roc_auc": "mean_columnwise_roc_auc",
    "mean_columnwise_auc": "mean_columnwise_roc_auc",
    "column_wise_roc_auc": "mean_columnwise_roc_auc",
    "columnwise_roc_auc": "mean_columnwise_roc_auc",
    "mcauc": "mean_columnwise_roc_auc",
    "log_loss": "logloss",
    "multi_logloss": "logloss",
    "binary_logloss": "logloss",
    "multiclass_logloss": "logloss",
    "multi_class_logarithmic_loss": "logloss",
    "multi_class_log_loss": "logloss",
    "multiclass_loss": "logloss",
    "cross_entropy": "logloss",
    "acc": "accuracy",
    "classification_accuracy": "accuracy",
    "categorization_accuracy": "accuracy",
    "balanced_acc": "balanced_accuracy",
    "balanced_accuracy_score": "balanced_accuracy",
    "f1_score": "f1",
    "macro_f1": "f1_macro",
    "macro_f1_score": "f1_macro",
    "mean_f1": "f1_macro",
    "f1_macro_score": "f1_macro",
    "qwk": "quadratic_weighted_kappa",
    "kappa": "quadratic_weighted_kappa",
    "quadratic_kappa": "quadratic_weighted_kappa",
    "quadratic_weighted_cohen_kappa": "quadratic_weighted_kappa",
    "cohen_kappa_quadratic": "quadratic_weighted_kappa",
    "root_mean_squared_error": "rmse",
    "root_mean_square_error": "rmse",
    "mean_columnwise_root_mean_squared_error": "mcrmse",
    "mean_column_wise_root_mean_squared_error": "mcrmse",
    "column_wise_rmse": "mcrmse",
    "root_mean_squared_logarithmic_error": "rmsle",
    "root_mean_squared_log_error": "rmsle",
    "root_mean_square_logarithmic_error": "rmsle",
    "mean_squared_error": "mse",
    "mean_absolute_error": "mae",
    "r2_score": "r2",
}
_MAP_AT = re.compile(r"^(?:map|mean_average_precision)_?@_?(\d+)$|^map_?(\d+)$|^map_at_(\d+)$")


def canonical_metric(name: str) -> str | None:
    """The canonical name of a known metric (``"ROC AUC"`` → ``"roc_auc"``, ``"MAP@3"`` →
    ``"map@3"``), else None."""
    key = re.sub(r"[\s\-/]+", "_", name.strip().lower())
    match = _MAP_AT.match(key)
    if match:
        k = int(next(g for g in match.groups() if g))
        return f"map@{k}" if k >= 1 else None
    key = _ALIASES.get(key, key)
    return key if key in METRICS and key != MAP_AT_K else None


def map_k(name: str) -> int:
    """k of a canonical ``map@k`` name."""
    return int(name.split("@", 1)[1])


def known_metrics() -> str:
    """The registry's names, for messages that list them."""
    return ", ".join(sorted(METRICS))


def metric_info(name: str) -> MetricInfo:
    canonical = canonical_metric(name)
    if canonical is None:
        raise TaskError(f"unknown evaluation_metric {name!r}; known metrics: {known_metrics()}")
    if canonical.startswith("map@"):
        generic = METRICS[MAP_AT_K]
        return MetricInfo(canonical, generic.direction, generic.kind, generic.task_type,
                          generic.form.replace("up to k", f"up to {map_k(canonical)}"))
    return METRICS[canonical]
