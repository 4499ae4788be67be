"""What a bundled task is: which packaged dataset, what to predict, how it is scored."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from events.domain import TaskType


@dataclass(frozen=True)
class BundledSpec:
    name: str
    title: str
    one_liner: str
    load: Callable[[], pd.DataFrame]  # features + the target column, original row order
    target: str
    metric: str
    task_type: TaskType
    overview: str
    features: str
    seed: int
    # For probability-per-class submissions: the submission has one column per class and the
    # answers keep the single label column ``target``.
    per_class_probabilities: bool = False
    positive_class: str | None = None


