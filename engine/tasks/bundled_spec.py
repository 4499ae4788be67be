"""What a bundled task is: which packaged dataset, what to predict, how it is scored."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

from events.domain import DataModality, TaskType

# A reference model's score: (scoring, train, test features, answers) -> the metric's value.
ReferenceFn = Callable[..., float]


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
    # What the rows hold besides numbers and categories: free text, or images (then ``load``
    # gives the label and ``SOURCE_ROW``, and ``images`` the pixels of every row of ``load``).
    modality: DataModality = DataModality.tabular
    images: Callable[[], np.ndarray] | None = None
    # A model suited to the modality (TF-IDF for text); None: engine.tasks.reference's.
    reference: ReferenceFn | None = None


# The column of an image spec's ``load()`` naming each row's image in ``images()``; never written.
SOURCE_ROW = "source_row"


