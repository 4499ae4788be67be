"""Reference models: the score a sound, untuned scikit-learn model reaches on a task.

Used only when preparing bundled tasks, to place medal thresholds (see ``leaderboard``). Two
models with fixed seeds — a linear one and a random forest — behind the same preprocessing
(median imputation and scaling for numbers, most-frequent imputation and one-hot for text);
the better of the two is the reference. Single-threaded, so the result is reproducible; on
tables above 20,000 training rows both learn from a seeded sample of that many.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from engine.tasks.metrics import metric_info, positive_class_of, score_predictions, truth_column
from engine.tasks.model import ScoringSpec, TaskError, label_str
from events.score import Score, Ties

# The reference models learn from at most this many training rows (a seeded sample of larger
# tables): enough for a sound out-of-the-box score, and a 50k-row task prepares in seconds.
REFERENCE_ROWS = 20000


def _features(train: pd.DataFrame, test: pd.DataFrame,
              id_column: str) -> tuple[ColumnTransformer, pd.DataFrame, pd.DataFrame]:
    columns = [c for c in test.columns if c != id_column]
    numeric = [c for c in columns if pd.api.types.is_numeric_dtype(train[c])]
    text = [c for c in columns if c not in numeric]
    prep = ColumnTransformer([
        ("num", make_pipeline(SimpleImputer(strategy="median"), StandardScaler()), numeric),
        ("txt", make_pipeline(SimpleImputer(strategy="most_frequent"),
                              OneHotEncoder(handle_unknown="ignore")), text),
    ])

    def frame(df: pd.DataFrame) -> pd.DataFrame:
        out = df[columns].copy()
        for c in text:  # plain objects: the imputer and encoder treat NaN as missing
            out[c] = out[c].astype(object).where(out[c].notna(), np.nan)
        return out

    return prep, frame(train), frame(test)


def predictions_of(model: Pipeline, spec: ScoringSpec, kind: str, x_test: pd.DataFrame | np.ndarray,
                   ids: pd.Series) -> pd.DataFrame:
    out = pd.DataFrame({spec.id_column: np.asarray(ids)})
    columns = list(spec.target_columns)
    if kind != "probability":
        out[columns[0]] = model.predict(x_test)
        return out
    proba = model.predict_proba(x_test)
    classes = [label_str(c) for c in model.classes_]
    if len(columns) == 1:
        out[columns[0]] = proba[:, classes.index(spec.positive_class or "1")]
    else:
        for column in columns:
            out[column] = proba[:, classes.index(label_str(column))]
    return out


def reference_score(spec: ScoringSpec, train: pd.DataFrame, test: pd.DataFrame,
                    answers: pd.DataFrame) -> float:
    """Best score of the two reference models trained on ``train``, scored on ``answers``."""
    info = metric_info(spec.metric)
    if info.kind == "value":
        target = pd.to_numeric(truth_column(spec, train, spec.target_columns[0]))
        models = [Ridge(alpha=1.0),
                  RandomForestRegressor(n_estimators=200, min_samples_leaf=3, random_state=0)]
    else:
        target = truth_column(spec, train, spec.target_columns[0]).map(label_str)
        if info.kind == "probability" and len(spec.target_columns) == 1:
            spec = ScoringSpec(**{**spec.__dict__, "positive_class": positive_class_of(
                spec, target.to_numpy())})
        models = [LogisticRegression(max_iter=5000),
                  RandomForestClassifier(n_estimators=200, random_state=0)]
    if len(train) > REFERENCE_ROWS:  # a seeded sample: the forest on 35k rows took many minutes
        keep = np.sort(np.random.default_rng(0).permutation(len(train))[:REFERENCE_ROWS])
        train, target = train.iloc[keep].reset_index(drop=True), target.iloc[keep].reset_index(drop=True)
    scores = []
    for estimator in models:
        prep, x_train, x_test = _features(train, test, spec.id_column)
        model = make_pipeline(prep, estimator).fit(x_train, target)
        predictions = predictions_of(model, spec, info.kind, x_test, test[spec.id_column])
        scores.append(score_predictions(spec, answers, predictions))
    best = Score(info.direction).best_index(scores, Ties.FIRST_WINS)
    if best is None:
        raise TaskError(f"neither reference model produced a usable {info.name} score (got {scores}), "
                        "so no medal thresholds can be placed")
    return float(scores[best])
