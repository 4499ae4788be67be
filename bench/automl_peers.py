"""The AutoML peers of bench/bench_automl.py: FLAML and AutoGluon-Tabular, one fit per process.

    python bench/automl_peers.py JOB.json

JOB.json (written by bench_automl.py) names the peer (``flaml``, ``ag-medium``, ``ag-best``), the
task's public train.csv and test.csv, its columns and metric, the seed, the time limit and where
to write the submission. This module imports neither the engine nor anything beyond pandas and
the peer's own package, so it runs in whichever interpreter holds that peer: AutoGluon pins an
older pandas than the engine's, so ``make bench-automl`` installs it into a venv of its own
(``.venv-automl``) and the bench runs this file there.

Each peer is given the whole limit for its fit (FLAML ``time_budget``, AutoGluon ``time_limit``);
its wall time, prediction included, is measured by the caller.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

PEERS = ("flaml", "ag-medium", "ag-best")
AG_PRESETS = {"ag-medium": "medium_quality", "ag-best": "best_quality"}
FLAML_METRIC = {"roc_auc": "roc_auc", "logloss": "log_loss", "accuracy": "accuracy", "rmse": "rmse",
                "mse": "mse", "mae": "mae", "r2": "r2", "f1": "f1", "f1_macro": "macro_f1"}
AG_METRIC = {"roc_auc": "roc_auc", "logloss": "log_loss", "accuracy": "accuracy",
             "rmse": "root_mean_squared_error", "mse": "mean_squared_error", "mae": "mean_absolute_error",
             "r2": "r2", "f1": "f1", "f1_macro": "f1_macro"}


def _frames(job: dict[str, Any]) -> tuple[pd.DataFrame, pd.Series, pd.DataFrame, pd.Series]:
    train, test = pd.read_csv(job["train"]), pd.read_csv(job["test"])
    target, id_column = job["target"], job["id_column"]
    features = [c for c in train.columns if c not in (id_column, target)]
    return train[features], train[target], test[features], test[id_column]


def _submission(job: dict[str, Any], ids: pd.Series, classes: list[Any], proba: np.ndarray | None,
                values: np.ndarray | None) -> pd.DataFrame:
    """The task's submission layout from class probabilities (``classes`` in column order) or values."""
    out = pd.DataFrame({job["id_column"]: ids})
    columns = job["target_columns"]
    if job["kind"] == "regression" or job["metric_kind"] == "label":
        out[columns[0]] = values
        return out
    assert proba is not None
    names = [str(c) for c in classes]
    if len(columns) > 1:  # one probability column per class
        for column in columns:
            out[column] = proba[:, names.index(str(column))]
    else:
        positive = job["positive_class"] or names[-1]
        out[columns[0]] = proba[:, names.index(str(positive))]
    return out


def run_flaml(job: dict[str, Any]) -> pd.DataFrame:
    from flaml import AutoML

    X, y, X_test, ids = _frames(job)
    for column in X.columns:  # text columns as categories, which FLAML's learners use natively
        if not pd.api.types.is_numeric_dtype(X[column]):
            kinds = sorted(set(X[column].dropna().astype(str)) | set(X_test[column].dropna().astype(str)))
            X = X.assign(**{column: pd.Categorical(X[column].astype("string"), categories=kinds)})
            X_test = X_test.assign(**{column: pd.Categorical(X_test[column].astype("string"), categories=kinds)})
    classification = job["kind"] == "classification"
    automl = AutoML()
    automl.fit(X, y.astype(str) if classification else y, task=job["kind"], time_budget=int(job["limit"]),
               metric=FLAML_METRIC[job["metric"]], seed=int(job["seed"]), verbose=0)
    if not classification:
        return _submission(job, ids, [], None, automl.predict(X_test))
    if job["metric_kind"] == "label":
        labels = {str(v): v for v in y.unique()}
        return _submission(job, ids, [], None, np.array([labels.get(str(v), v) for v in automl.predict(X_test)]))
    return _submission(job, ids, list(automl.classes_), automl.predict_proba(X_test), None)


def run_autogluon(job: dict[str, Any], work: Path) -> pd.DataFrame:
    from autogluon.tabular import TabularPredictor

    X, y, X_test, ids = _frames(job)
    target = job["target"]
    train = X.assign(**{target: y})
    # AutoGluon seeds its models with 0 whatever happens; the seed reaches it as the order of
    # the training rows, which decides its hold-out and bagging folds.
    train = train.iloc[np.random.default_rng(int(job["seed"])).permutation(len(train))].reset_index(drop=True)
    if job["kind"] == "regression":
        problem = "regression"
    else:
        problem = "binary" if y.nunique() == 2 else "multiclass"
    predictor = TabularPredictor(label=target, problem_type=problem, eval_metric=AG_METRIC[job["metric"]],
                                 path=str(work), verbosity=0)
    predictor.fit(train, time_limit=float(job["limit"]), presets=AG_PRESETS[job["peer"]])
    if job["kind"] == "regression" or job["metric_kind"] == "label":
        return _submission(job, ids, [], None, predictor.predict(X_test).to_numpy())
    proba = predictor.predict_proba(X_test, as_multiclass=True)
    return _submission(job, ids, list(proba.columns), proba.to_numpy(), None)


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit("usage: automl_peers.py JOB.json (written by bench/bench_automl.py)")
    job_file = Path(sys.argv[1])
    job = json.loads(job_file.read_text())
    if job.get("peer") not in PEERS:
        sys.exit(f"{job_file}: peer must be one of {', '.join(PEERS)}, not {job.get('peer')!r}")
    if job["peer"] == "flaml":
        submission = run_flaml(job)
    else:
        submission = run_autogluon(job, job_file.parent / f"{job_file.stem}-models")
    submission.to_csv(job["out"], index=False)


if __name__ == "__main__":
    main()
