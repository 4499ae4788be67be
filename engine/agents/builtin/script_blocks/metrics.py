"""The task metrics, one function each, whose body the script's ``score_predictions`` holds.

A classification script's ``score_predictions`` first makes its blended probabilities proper
(``proper_probabilities``), a regression script's reads plain values (``plain_values``); the
metric's own lines follow. The printed number is the metric itself, never negated. The name of
each metric function is the canonical metric name (``spec.canonical_metric``; ``map_at_k`` for
"map@k", ``spec.metric_function``). A task with several targets scores each target by its metric
(``score_target``, script_blocks/multi_target_score.py) and prints their mean
(``mean_over_targets``), as `engine grade` scores several target columns
(engine/tasks/metrics.py); MCRMSE is RMSE and column-wise ROC AUC is ROC AUC on each target.
"""

# mypy: allow-untyped-defs

from engine.agents.builtin.script_blocks.names import METRIC, TARGET_COLUMNS, metrics, np, score_target


# --- script ---
def proper_probabilities(pred):
    # Probabilities may not sum to one after blending; the metric needs proper rows.
    proba = np.clip(np.asarray(pred, dtype=float), 1e-15, None)
    proba = proba / proba.sum(axis=1, keepdims=True)


def plain_values(pred):
    pred = np.asarray(pred, dtype=float)


def roc_auc(y_true, proba):
    if proba.shape[1] == 2:
        return metrics.roc_auc_score(y_true, proba[:, 1])
    return metrics.roc_auc_score(y_true, proba, multi_class="ovr", labels=list(range(proba.shape[1])))


def accuracy(y_true, proba):
    return metrics.accuracy_score(y_true, proba.argmax(axis=1))


def balanced_accuracy(y_true, proba):
    return metrics.balanced_accuracy_score(y_true, proba.argmax(axis=1))


def logloss(y_true, proba):
    return metrics.log_loss(y_true, proba, labels=list(range(proba.shape[1])))


def f1(y_true, proba):
    average = "binary" if proba.shape[1] == 2 else "macro"
    return metrics.f1_score(y_true, proba.argmax(axis=1), average=average)


def f1_macro(y_true, proba):
    return metrics.f1_score(y_true, proba.argmax(axis=1), average="macro")


def map_at_k(y_true, proba):
    # One true class per row: 1/rank of it among the k likeliest classes, else 0.
    k = int(METRIC.split("@")[1])
    ranked = np.argsort(-proba, axis=1, kind="stable")[:, :k]
    hits = ranked == np.asarray(y_true)[:, None]
    return float(np.mean((hits / np.arange(1, ranked.shape[1] + 1)).sum(axis=1)))


def mean_over_targets(y_true, pred):
    pred = np.asarray(pred, dtype=float)
    return float(np.mean([score_target(y_true[:, t], pred[:, cols]) for t, cols in enumerate(TARGET_COLUMNS)]))


def mcc(y_true, proba):
    return metrics.matthews_corrcoef(y_true, proba.argmax(axis=1))


def qwk(y_true, proba):
    return metrics.cohen_kappa_score(y_true, proba.argmax(axis=1), weights="quadratic")


def rmse(y_true, pred):
    return float(np.sqrt(metrics.mean_squared_error(y_true, pred)))


def mse(y_true, pred):
    return metrics.mean_squared_error(y_true, pred)


def mae(y_true, pred):
    return metrics.mean_absolute_error(y_true, pred)


def medae(y_true, pred):
    return metrics.median_absolute_error(y_true, pred)


def r2(y_true, pred):
    return metrics.r2_score(y_true, pred)


def rmsle(y_true, pred):
    return float(np.sqrt(np.mean((np.log1p(np.clip(pred, 0, None)) - np.log1p(y_true)) ** 2)))
