"""The names the blocks of a builtin script define and read from one another, declared for the
linters: each block imports from here what the blocks before it define, so ruff and mypy read
it as code. Nothing imports this module at run time (a script defines these names itself).

The preamble's imports are imported here as the preamble imports them; the names the script's
own code defines are declared with their types. ``__NAME__`` names are placeholders that the
renderer fills with code (``engine.agents.builtin.blocks.fill``).
"""

# The preamble's imports, re-exported for the blocks:
# ruff: noqa: F401

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from sklearn import metrics
from sklearn.base import BaseEstimator, clone
from sklearn.compose import ColumnTransformer, TransformedTargetRegressor
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.model_selection import KFold, StratifiedKFold, cross_val_predict, train_test_split
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import (
    OneHotEncoder,
    OrdinalEncoder,
    QuantileTransformer,
    RobustScaler,
    StandardScaler,
    TargetEncoder,
)

# preamble.py
SCRIPT_STARTED: float
CORES: int
SEED: int
TASK_KIND: str
METRIC: str
GREATER_IS_BETTER: bool
score_predictions: Callable[[Any, Any], float]

# data.py
train_df: pd.DataFrame
test_df: pd.DataFrame
sample_sub: pd.DataFrame
ID_COL: str
SUB_COLS: list[str]
PER_CLASS_COLUMNS: bool
TARGET: str
TRAIN_ROWS: int
FEATURES: list[str]
BASE_NUM: list[str]
DATE_PATTERN: str
DATE_COLS: list[str]
text_columns: Callable[[Callable[[pd.Series], bool]], list[str]]
NAME_COLS: list[str]
NAME_RANK_COLS: list[str]
X: pd.DataFrame
X_test: pd.DataFrame
NUM_COLS: list[str]
CAT_COLS: list[str]
y: Any
CLASSES: Any
stratify: Any
X_tr: pd.DataFrame
X_val: pd.DataFrame
y_tr: Any
y_val: Any

# preprocessor.py, model.py, the LOSS and REGULARIZATION genes
PREP: dict[str, Any]
make_preprocessor: Callable[..., Any]
category_kwargs: Callable[..., dict[str, Any]]
make_members: Callable[[], list[tuple[str, Any]]]
loss_kwargs: Callable[[str], dict[str, Any]]
wrap_target: Callable[[Any], Any]
reg_kwargs: Callable[[str, str], dict[str, Any]]

# training.py, the blends, early_stop.py or not_sized.py, seed_bag.py
FINAL_FIT: str
BLEND_ROUNDS: int
META_C: float
predict_values: Callable[[Any, Any], Any]
in_target_range: Callable[[Any], Any]
fit_blender: Callable[[Any, Any], Any]
blend: Callable[[Any, Any], Any]
sized: Callable[[Any], Any]
SEARCH_ROWS: int
STOPPING_ROUNDS: dict[str, tuple[int, int, float]]
RESIZE_ROWS: int
DEADLINE: float
members: list[tuple[str, Any]]
SeedBagged: Any
GROW_SEEDS: int
GROW_MARGIN: float
FINISH_S: float

# cv.py, validation.py, calibration.py, full_fit.py
X_cv: pd.DataFrame
y_cv: Any
CV_STARTED: float
cv_splits: list[tuple[Any, Any]]
val_preds: list[Any]
y_score: Any
blender: Any
val_blend: Any
val_score: float
crossfit: Any
calibrate: Callable[[Any, Any], Any]
calibration: Any
FIT_STARTED: float
FIT_ENDED: float
test_blend: Any

# submission_file.py
submission: pd.DataFrame

# Placeholders the renderer fills with code.
__ARGS__: Any
__ESTIMATOR__: Any
__PREP__: Any
__FOLDS__: int
__SCORED__: Any
__SCORES_AGAIN__: bool
__ROW_BAG__: Any
__SCORING__: str
run_variant___INDEX__: Callable[[], float]
results: list[tuple[str, float]]

# Several targets (multi_target_score.py, multi_target_data.py, multi_target_model.py):
from sklearn.ensemble import (  # noqa: E402 (the preamble imports them; declared here for these blocks)
    ExtraTreesClassifier,
    ExtraTreesRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor  # noqa: E402

VAL_SIZE: float
add_features: Callable[[pd.DataFrame], pd.DataFrame]
TARGET_COLUMNS: list[Any]
score_target: Callable[[Any, Any], float]
TARGETS: list[str]
TARGET_CLASSES: list[Any]
PerTarget: Any
per_target_members: Callable[[list[tuple[str, Any]]], list[tuple[str, Any]]]
