"""Scoring with the metric registry (engine/tasks/metric_registry.py): aligned predictions → a score.

Scoring works on frames already aligned row by row with the answers (same ids, same order);
checking the submission's shape is the grader's job. Two error kinds keep blame straight:
``SubmissionError`` means the predictions are unusable (the submission is invalid), while
``TaskError`` means the task's own answers or metadata cannot support the metric.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.metrics import (
    accuracy_score,
    balanced_accuracy_score,
    f1_score,
    mean_absolute_error,
    mean_squared_error,
    r2_score,
    roc_auc_score,
)

from engine.tasks.metric_math import (
    mean_average_precision_at_k,
    mean_columnwise_auc,
    quadratic_weighted_kappa,
    rmsle,
)
from engine.tasks.metric_registry import (
    MAP_AT_K,
    METRICS,
    MetricInfo,
    MetricKind,
    canonical_metric,
    known_metrics,
    map_k,
    metric_info,
)
from engine.tasks.model import ScoringSpec, TaskError, label_str

# Kaggle clips probabilities by this much before taking logs; an overconfident wrong answer
# then costs ~34.5 instead of infinity.
_LOGLOSS_EPS = 1e-15


__all__ = [  # the registry, re-exported: callers import metrics from here
    "MAP_AT_K", "METRICS", "MetricInfo", "MetricKind", "SubmissionError", "canonical_metric", "form_problem",
    "known_metrics", "map_k", "metric_info", "positive_class_of", "score_predictions", "truth_column",
    "truth_labels",
]


class SubmissionError(ValueError):
    """The predictions cannot be scored; the message is the submission's rejection reason."""


# --- column helpers ---------------------------------------------------------------------


def _numeric(frame: pd.DataFrame, column: str) -> np.ndarray:
    values = pd.to_numeric(frame[column], errors="coerce")
    bad = values.isna() | ~np.isfinite(values.to_numpy(dtype=float, na_value=np.nan))
    if bad.any():
        example = frame[column][bad].iloc[0]
        raise SubmissionError(
            f"column {column!r} has {int(bad.sum())} missing or non-numeric value(s), "
            f"e.g. {example!r}"
        )
    return values.to_numpy(dtype=float)


def _labels(series: pd.Series, what: str) -> np.ndarray:
    if series.isna().any():
        raise SubmissionError(f"column {what!r} has {int(series.isna().sum())} empty value(s)")
    return np.array([label_str(v) for v in series], dtype=object)


def truth_column(spec: ScoringSpec, answers: pd.DataFrame, column: str) -> pd.Series:
    """Answers normally use the submission's column name; otherwise the declared answer
    column, otherwise the answers file's only non-id column."""
    if column in answers.columns:
        return answers[column]
    if spec.answer_column and spec.answer_column in answers.columns:
        return answers[spec.answer_column]
    others = [c for c in answers.columns if c != spec.id_column]
    if len(others) == 1:
        return answers[others[0]]
    raise TaskError(
        f"answers have no column {column!r} and no single answer column among {others}; "
        "set `answer_column` in task.yaml"
    )


def truth_labels(spec: ScoringSpec, answers: pd.DataFrame, column: str) -> np.ndarray:
    series = truth_column(spec, answers, column)
    if series.isna().any():
        raise TaskError(f"answers column {series.name!r} has empty values")
    return np.array([label_str(v) for v in series], dtype=object)


def positive_class_of(spec: ScoringSpec, truth: np.ndarray) -> str:
    if spec.positive_class is not None:
        return spec.positive_class
    if set(truth) <= {"0", "1"}:
        return "1"
    raise TaskError(
        f"cannot tell the positive class among {sorted(set(truth))}; "
        "set `positive_class` in task.yaml"
    )


# --- the submission's form ------------------------------------------------------------


def form_problem(metric: str, predictions: pd.DataFrame, target_columns: list[str]) -> str | None:
    """Why these prediction columns are not what ``metric`` scores, or None (also for a metric
    outside the registry, which nothing here can judge). The harness asks this of a run's final
    submission; grading applies the same rules while it scores."""
    if canonical_metric(metric) is None or not target_columns:
        return None
    info = metric_info(metric)
    try:
        for column in target_columns:
            _check_column_form(info, predictions, column)
    except SubmissionError as exc:
        return f"{exc} ({info.name} needs {info.form})"
    return None


def _check_column_form(info: MetricInfo, predictions: pd.DataFrame, column: str) -> None:
    if info.kind == "label":
        labels = _labels(predictions[column].replace("", np.nan), column)
        if info.name == "quadratic_weighted_kappa":
            _ratings(labels, column)
    elif info.kind == "ranking":
        _ranked(predictions[column].fillna("").astype(str), column, map_k(info.name))
    else:
        values = _numeric(predictions, column)
        if info.kind == "probability":
            _probabilities(values, [column])
        elif info.name == "rmsle" and (values <= -1).any():
            raise SubmissionError(f"column {column!r} has value(s) <= -1, which RMSLE cannot score")


# --- scoring ---------------------------------------------------------------------------


def score_predictions(spec: ScoringSpec, answers: pd.DataFrame, predictions: pd.DataFrame) -> float:
    """Score ``predictions`` against ``answers``; both are aligned row by row."""
    info = metric_info(spec.metric)
    if info.name == "mean_columnwise_roc_auc":
        return _score_columnwise_auc(spec, answers, predictions)
    if info.kind == "ranking":
        return _score_ranking(info, spec, answers, predictions)
    if info.kind == "probability":
        if len(spec.target_columns) == 1:
            return _score_binary_probability(info, spec, answers, predictions)
        return _score_class_probabilities(info, spec, answers, predictions)
    # Several label/value columns (multi-target) score as the mean over columns.
    scores = [
        _score_labels(info, spec, answers, predictions, column)
        if info.kind == "label"
        else _score_values(info, spec, answers, predictions, column)
        for column in spec.target_columns
    ]
    return float(np.mean(scores))


def _score_labels(info: MetricInfo, spec: ScoringSpec, answers: pd.DataFrame,
                  predictions: pd.DataFrame, column: str) -> float:
    truth = truth_labels(spec, answers, column)
    predicted = _labels(predictions[column], column)
    if info.name == "accuracy":
        return float(accuracy_score(truth, predicted))
    if info.name == "balanced_accuracy":
        return float(balanced_accuracy_score(truth, predicted))
    if info.name == "quadratic_weighted_kappa":
        _ratings(predicted, column)
        return quadratic_weighted_kappa(truth, predicted)
    classes = sorted(set(truth))
    if info.name == "f1" and len(classes) <= 2:
        # Binary F1 is the F1 of the positive class, as Kaggle means it.
        positive = positive_class_of(spec, truth)
        return float(f1_score(truth, predicted, pos_label=positive, average="binary"))
    # Multiclass "f1" and f1_macro: unweighted mean over the classes in the answers.
    return float(f1_score(truth, predicted, labels=classes, average="macro", zero_division=0))


def _score_values(info: MetricInfo, spec: ScoringSpec, answers: pd.DataFrame,
                  predictions: pd.DataFrame, column: str) -> float:
    truth_series = truth_column(spec, answers, column)
    truth = pd.to_numeric(truth_series, errors="coerce").to_numpy(dtype=float)
    if np.isnan(truth).any():
        raise TaskError(f"answers column {truth_series.name!r} is not numeric")
    predicted = _numeric(predictions, column)
    if info.name in ("rmse", "mcrmse"):  # mcrmse: this per column, averaged by the caller
        return float(np.sqrt(mean_squared_error(truth, predicted)))
    if info.name == "rmsle":
        if (predicted <= -1).any():
            raise SubmissionError(f"column {column!r} has value(s) <= -1, which RMSLE cannot score")
        if (truth <= -1).any():
            raise TaskError(f"answers column {truth_series.name!r} has value(s) <= -1; RMSLE cannot score it")
        return rmsle(truth, predicted)
    if info.name == "mse":
        return float(mean_squared_error(truth, predicted))
    if info.name == "mae":
        return float(mean_absolute_error(truth, predicted))
    return float(r2_score(truth, predicted))


def _score_ranking(info: MetricInfo, spec: ScoringSpec, answers: pd.DataFrame,
                   predictions: pd.DataFrame) -> float:
    """MAP@k: the one target column holds up to k labels separated by spaces, best first."""
    column = spec.target_columns[0]
    truth = list(truth_labels(spec, answers, column))
    k = map_k(info.name)
    ranked = _ranked(predictions[column].fillna("").astype(str), column, k)
    return mean_average_precision_at_k(truth, ranked, k)


def _ranked(cells: pd.Series, column: str, k: int) -> list[list[str]]:
    ranked = [[label_str(g) for g in cell.split()] for cell in cells]
    too_many = [i for i, guesses in enumerate(ranked) if len(guesses) > k]
    if too_many:
        raise SubmissionError(
            f"column {column!r} has more than {k} labels in {len(too_many)} row(s), "
            f"e.g. {cells.iloc[too_many[0]]!r}; MAP@{k} takes at most {k}, separated by spaces"
        )
    return ranked


def _score_columnwise_auc(spec: ScoringSpec, answers: pd.DataFrame, predictions: pd.DataFrame) -> float:
    columns = list(spec.target_columns)
    absent = [c for c in columns if c not in answers.columns]
    if absent:
        raise TaskError(f"answers have no column(s) {absent}; column-wise ROC AUC needs one 0/1 column per label")
    truth = np.column_stack([_binary_truth(answers, c) for c in columns])
    matrix = np.column_stack([_numeric(predictions, c) for c in columns])
    try:
        return mean_columnwise_auc(truth, matrix, columns)
    except ValueError as exc:
        raise TaskError(str(exc)) from exc


def _binary_truth(answers: pd.DataFrame, column: str) -> np.ndarray:
    values = {label_str(v) for v in answers[column]}
    if not values <= {"0", "1"}:
        raise TaskError(f"answers column {column!r} is not 0/1 (found {sorted(values)[:5]})")
    return np.array([label_str(v) == "1" for v in answers[column]], dtype=int)


def _ratings(predicted: np.ndarray, column: str) -> None:
    """QWK compares ordinal ratings: a probability or a fraction is not one."""
    for value in predicted:
        try:
            whole = float(value).is_integer()
        except ValueError:
            whole = True  # a text rating (e.g. "low") is a label like any other
        if not whole:
            raise SubmissionError(
                f"column {column!r} holds {value!r}, not a whole rating; quadratic weighted kappa "
                "compares integer ratings (e.g. 3), not probabilities or fractions"
            )


def _probabilities(matrix: np.ndarray, columns: list[str]) -> None:
    if ((matrix < 0) | (matrix > 1)).any():
        raise SubmissionError(f"probabilities in {list(columns)} must lie in [0, 1]")


def _score_binary_probability(info: MetricInfo, spec: ScoringSpec, answers: pd.DataFrame,
                              predictions: pd.DataFrame) -> float:
    column = spec.target_columns[0]
    truth = truth_labels(spec, answers, column)
    positive = positive_class_of(spec, truth)
    y = (truth == positive).astype(int)
    p = _numeric(predictions, column)
    _probabilities(p, [column])
    if info.name == "roc_auc":
        if len(set(y)) < 2:
            raise TaskError("ROC AUC needs both classes in the answers")
        return float(roc_auc_score(y, p))
    p = np.clip(p, _LOGLOSS_EPS, 1 - _LOGLOSS_EPS)
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))


def _score_class_probabilities(info: MetricInfo, spec: ScoringSpec, answers: pd.DataFrame,
                               predictions: pd.DataFrame) -> float:
    """One probability column per class; the column names are the class labels."""
    columns = list(spec.target_columns)
    classes = [label_str(c) for c in columns]
    if all(c in answers.columns for c in columns):
        # One-hot answers (common on Kaggle): the true class is the hot column.
        onehot = answers[columns].to_numpy(dtype=float)
        truth = np.array([classes[i] for i in onehot.argmax(axis=1)], dtype=object)
    else:
        truth = truth_labels(spec, answers, columns[0])
    unknown = sorted(set(truth) - set(classes))
    if unknown:
        raise TaskError(f"answers contain classes {unknown} with no submission column")
    matrix = np.column_stack([_numeric(predictions, c) for c in columns])
    _probabilities(matrix, columns)
    index = np.array([classes.index(t) for t in truth])
    if info.name == "roc_auc":
        # One-vs-rest macro average over the classes present in the answers.
        aucs = [
            roc_auc_score(index == k, matrix[:, k])
            for k in range(len(classes))
            if 0 < (index == k).sum() < len(index)
        ]
        return float(np.mean(aucs))
    # Kaggle's multi-class log loss: clip, renormalise each row, mean -log p(true class).
    clipped = np.clip(matrix, _LOGLOSS_EPS, 1 - _LOGLOSS_EPS)
    clipped = clipped / clipped.sum(axis=1, keepdims=True)
    return float(-np.mean(np.log(clipped[np.arange(len(index)), index])))
