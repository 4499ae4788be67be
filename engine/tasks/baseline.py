"""Naive baselines: the score of a submission that ignores every feature.

The naive prediction depends only on the training target: the majority class for label
metrics (ties go to the smallest label, for determinism), the class frequencies for
probability metrics (so ROC AUC is exactly 0.5), the mean for squared-error metrics and the
median for MAE (the constant that minimises each). It is the floor any real model must beat.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from engine.tasks.metrics import (
    metric_info,
    positive_class_of,
    score_predictions,
    truth_column,
    truth_labels,
)
from engine.tasks.model import LoadedTask, ScoringSpec, TaskError, label_str


def naive_predictions(spec: ScoringSpec, train: pd.DataFrame, ids: pd.Series) -> pd.DataFrame:
    """A constant submission for ``ids`` learned from ``train``'s target column(s) only."""
    info = metric_info(spec.metric)
    frame = pd.DataFrame({spec.id_column: ids.to_numpy()})
    columns = list(spec.target_columns)
    if info.kind == "probability" and len(columns) > 1:
        if all(c in train.columns for c in columns):  # one-hot training target
            priors = {label_str(c): float(train[c].mean()) for c in columns}
        else:
            labels = pd.Series(truth_labels(spec, train, columns[0]))
            priors = labels.value_counts(normalize=True).to_dict()
        for column in columns:
            frame[column] = priors.get(label_str(column), 0.0)
    elif info.kind == "probability":
        labels = truth_labels(spec, train, columns[0])
        frame[columns[0]] = float(np.mean(labels == positive_class_of(spec, labels)))
    elif info.kind == "label":
        for column in columns:
            counts = pd.Series(truth_labels(spec, train, column)).value_counts()
            top = counts[counts == counts.max()].index
            frame[column] = sorted(top)[0]
    else:
        for column in columns:
            values = pd.to_numeric(truth_column(spec, train, column), errors="coerce").dropna()
            frame[column] = float(values.median() if info.name == "mae" else values.mean())
    return frame


def naive_baseline_score(task: LoadedTask) -> float:
    """Score of the naive constant submission against the task's private answers."""
    if task.answers is None:
        raise TaskError(f"task {task.competition_id} has no private answers to score a baseline on")
    if task.train_file is None:
        raise TaskError(
            f"task {task.competition_id} has no train.csv to learn a naive baseline from; "
            "set `train_file` in task.yaml"
        )
    train = pd.read_csv(task.train_file)
    answers = pd.read_csv(task.answers)
    predictions = naive_predictions(task.scoring, train, answers[task.id_column])
    return score_predictions(task.scoring, answers, predictions)
