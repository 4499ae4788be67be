"""The arithmetic of the metrics that scikit-learn does not name the way Kaggle does.

Every function takes arrays already aligned row by row and already checked (numeric where
numbers are needed); the registry in ``engine/tasks/metrics.py`` decides which one a task uses.
"""

from __future__ import annotations

import numpy as np
from sklearn.metrics import cohen_kappa_score, roc_auc_score


def quadratic_weighted_kappa(truth: np.ndarray, predicted: np.ndarray) -> float:
    """Cohen's kappa with quadratic weights over the ordered labels seen in either array.

    Labels are ordered numerically when they all are numbers (ratings 1..6), else as text.
    """
    labels = sorted(set(truth) | set(predicted), key=_ordinal_key)
    if len(labels) < 2:
        return 1.0  # one rating everywhere, on both sides: perfect agreement
    return float(cohen_kappa_score(truth, predicted, labels=labels, weights="quadratic"))


def _ordinal_key(label: object) -> tuple[int, float, str]:
    try:
        return 0, float(str(label)), ""
    except ValueError:
        return 1, 0.0, str(label)


def rmsle(truth: np.ndarray, predicted: np.ndarray) -> float:
    """sqrt(mean((log1p(p) - log1p(y))^2)); both must be > -1 (the caller checks)."""
    return float(np.sqrt(np.mean((np.log1p(predicted) - np.log1p(truth)) ** 2)))


def mean_average_precision_at_k(truth: list[str], ranked: list[list[str]], k: int) -> float:
    """MAP@k with one true label per row: 1/rank of the true label in the first k, else 0."""
    total = 0.0
    for answer, guesses in zip(truth, ranked, strict=True):
        seen: list[str] = []
        for guess in guesses[:k]:
            if guess not in seen:  # a repeated guess earns nothing a second time, as on Kaggle
                seen.append(guess)
        if answer in seen:
            total += 1.0 / (seen.index(answer) + 1)
    return total / len(truth) if truth else 0.0


def mean_columnwise_auc(truth: np.ndarray, predicted: np.ndarray, columns: list[str]) -> float:
    """The mean over columns of each column's ROC AUC (multi-label: one 0/1 truth per column).

    A column whose answers hold a single class has no AUC; it is left out, as Kaggle's
    Jigsaw scorer does. If every column is like that there is nothing to score.
    """
    aucs = [
        roc_auc_score(truth[:, j], predicted[:, j])
        for j in range(len(columns))
        if 0 < truth[:, j].sum() < len(truth)
    ]
    if not aucs:
        raise ValueError("every answer column holds one class only, so no ROC AUC exists")
    return float(np.mean(aucs))
