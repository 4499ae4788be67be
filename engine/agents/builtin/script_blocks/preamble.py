"""The start of every script: its imports, the task's constants and the metric it prints.

It is the same for every solution of a run (only the kind, metric and seed vary by run), so a
gene merge that keeps the primary parent's preamble never loses an import another gene needs.
The renderer writes the script's title and its ``# builtin-spec`` line above it, and the metric's
lines (``metrics.py``) at ``# insert score``.
"""

# The imports are the whole script's (F401), the slow ones after SCRIPT_STARTED on purpose (E402),
# grouped as the scripts have always written them (I001):
# ruff: noqa: E402, F401, I001
# mypy: allow-untyped-defs
# Without LightGBM its two class names are None (the agent then proposes no LightGBM member):
# mypy: disable-error-code="misc, assignment"

# --- script ---
import time

# Before the imports below, which take seconds: the final run's estimate counts them.
SCRIPT_STARTED = time.monotonic()
import os
import warnings

# The cores the engine gave this script (ENGINE_EVAL_CORES; one when run by hand): one while the
# search runs scripts side by side, every evaluation core when it runs alone. OpenMP's threads
# follow them unless the caller set its own: threads beyond the cores spin-waiting made boosting
# ten times slower on a busy machine.
try:
    CORES = max(1, int(os.environ.get("ENGINE_EVAL_CORES", "1")))
except ValueError:
    CORES = 1
os.environ.setdefault("OMP_NUM_THREADS", str(CORES))

import numpy as np
import pandas as pd
from sklearn import metrics
from sklearn.base import clone
from sklearn.compose import ColumnTransformer, TransformedTargetRegressor
from sklearn.ensemble import (ExtraTreesClassifier, ExtraTreesRegressor, GradientBoostingClassifier,
                              GradientBoostingRegressor, HistGradientBoostingClassifier,
                              HistGradientBoostingRegressor, RandomForestClassifier,
                              RandomForestRegressor)
from sklearn.impute import SimpleImputer
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.model_selection import KFold, StratifiedKFold, cross_val_predict, train_test_split
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor
from sklearn.neural_network import MLPClassifier, MLPRegressor
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import (FunctionTransformer, OneHotEncoder, OrdinalEncoder,
                                   QuantileTransformer, RobustScaler, StandardScaler,
                                   TargetEncoder)
from sklearn.svm import SVC, SVR

try:  # optional: the agent proposes LightGBM members only where it is installed
    from lightgbm import LGBMClassifier, LGBMRegressor
except ImportError:
    LGBMClassifier = LGBMRegressor = None

warnings.filterwarnings("ignore")
SEED = 0
np.random.seed(SEED)
TASK_KIND = "classification"
METRIC = "accuracy"
GREATER_IS_BETTER = True


def score_predictions(y_true, pred):
    """The task metric on encoded targets; pred holds class probabilities or values."""
    # insert score
