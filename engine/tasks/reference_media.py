"""Reference models for bundled text and image tasks: the first model a practitioner fits.

Like ``engine.tasks.reference`` they only place medal thresholds, when a bundled task is prepared
(``leaderboard.from_gap``). One-hot encoding, that module's treatment of text, turns each distinct
sentence into a column of its own and says nothing about what a sound text model reaches; pixels
are no columns of a table at all. So text columns get a word TF-IDF (unigrams and bigrams,
sublinear counts) beside the scaled numbers, images their raw pixels scaled to [0, 1], both into
one logistic regression with fixed settings, on one BLAS thread: deterministic, and on a busy
machine not slowed by threads that wait for each other (a 3,072-pixel fit took over ten minutes
so under a load of 20 on 2 cores, a minute on one thread).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, StandardScaler
from threadpoolctl import threadpool_limits

from engine.tasks.metrics import metric_info, score_predictions, truth_column
from engine.tasks.model import ScoringSpec, TaskError, label_str
from engine.tasks.reference import predictions_of

# Enough vocabulary for 20k short texts; more only slows the fit down.
TEXT_VOCABULARY = 50000


def _labels(spec: ScoringSpec, train: pd.DataFrame) -> pd.Series:
    if metric_info(spec.metric).kind == "value":
        raise TaskError(f"the text and image reference models classify; {spec.metric} needs a regressor")
    return truth_column(spec, train, spec.target_columns[0]).map(label_str)


def text_reference_score(spec: ScoringSpec, train: pd.DataFrame, test: pd.DataFrame,
                         answers: pd.DataFrame) -> float:
    """TF-IDF of every text column (one vectorizer each) and the scaled numbers, into a logistic
    regression trained on ``train`` and scored on ``answers``."""
    columns = [c for c in test.columns if c != spec.id_column]
    text = [c for c in columns if not pd.api.types.is_numeric_dtype(train[c])]
    numeric = [c for c in columns if c not in text]
    parts = [(f"text_{c}", TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True,
                                           max_features=TEXT_VOCABULARY), c) for c in text]
    if numeric:
        parts.append(("numbers", StandardScaler(), numeric))
    model = make_pipeline(ColumnTransformer(parts), LogisticRegression(max_iter=1000))

    def frame(df: pd.DataFrame) -> pd.DataFrame:
        out = df[columns].copy()
        for c in text:
            out[c] = out[c].fillna("").astype(str)
        return out

    with threadpool_limits(1):
        model.fit(frame(train), _labels(spec, train))
        predictions = predictions_of(model, spec, metric_info(spec.metric).kind, frame(test), test[spec.id_column])
    return score_predictions(spec, answers, predictions)


def pixel_reference_score(spec: ScoringSpec, train: pd.DataFrame, train_pixels: np.ndarray,
                          test_ids: pd.Series, test_pixels: np.ndarray, answers: pd.DataFrame) -> float:
    """Raw pixels (flattened, scaled to [0, 1]) into a logistic regression."""
    def flat(pixels: np.ndarray) -> np.ndarray:
        return pixels.reshape(len(pixels), -1).astype(np.float64)

    model = make_pipeline(FunctionTransformer(lambda x: x / 255.0), LogisticRegression(C=0.1, max_iter=1000))
    with threadpool_limits(1):
        model.fit(flat(train_pixels), _labels(spec, train))
        predictions = predictions_of(model, spec, metric_info(spec.metric).kind, flat(test_pixels), test_ids)
    return score_predictions(spec, answers, predictions)
