"""Script templates, part 1: the preamble (imports, task constants, metric) and the DATA gene.

The preamble is identical for every solution of a run (only kind/metric/seed vary by run), so a
gene merge that keeps the primary parent's preamble never loses an import another gene needs.
"""

from __future__ import annotations

from typing import Any

from engine.agents.builtin.catalog import MANY_CLASSES, NATIVE_MISSING_FAMILIES
from engine.agents.builtin.spec import LOWER_IS_BETTER, SUBSAMPLE_BEGIN, SUBSAMPLE_END, dumps, py_repr

# Metric code per canonical metric: the printed number is the metric itself (never negated).
_METRIC_CODE = {
    "roc_auc": [
        "if proba.shape[1] == 2:",
        "    return metrics.roc_auc_score(y_true, proba[:, 1])",
        "return metrics.roc_auc_score(y_true, proba, multi_class=\"ovr\", labels=list(range(proba.shape[1])))",
    ],
    "accuracy": ["return metrics.accuracy_score(y_true, proba.argmax(axis=1))"],
    "balanced_accuracy": ["return metrics.balanced_accuracy_score(y_true, proba.argmax(axis=1))"],
    "logloss": ["return metrics.log_loss(y_true, proba, labels=list(range(proba.shape[1])))"],
    "f1": [
        "average = \"binary\" if proba.shape[1] == 2 else \"macro\"",
        "return metrics.f1_score(y_true, proba.argmax(axis=1), average=average)",
    ],
    "mcc": ["return metrics.matthews_corrcoef(y_true, proba.argmax(axis=1))"],
    "qwk": ["return metrics.cohen_kappa_score(y_true, proba.argmax(axis=1), weights=\"quadratic\")"],
    "rmse": ["return float(np.sqrt(metrics.mean_squared_error(y_true, pred)))"],
    "mse": ["return metrics.mean_squared_error(y_true, pred)"],
    "mae": ["return metrics.mean_absolute_error(y_true, pred)"],
    "medae": ["return metrics.median_absolute_error(y_true, pred)"],
    "r2": ["return metrics.r2_score(y_true, pred)"],
    "rmsle": ["return float(np.sqrt(np.mean((np.log1p(np.clip(pred, 0, None)) - np.log1p(y_true)) ** 2)))"],
}

_IMPORTS = """\
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
"""


def render_preamble(spec: dict[str, Any]) -> str:
    head = {k: spec[k] for k in ("kind", "metric", "seed", "title")}
    metric = spec["metric"]
    body = _METRIC_CODE[metric]
    if spec["kind"] == "classification":
        prep = [
            "# Probabilities may not sum to one after blending; the metric needs proper rows.",
            "proba = np.clip(np.asarray(pred, dtype=float), 1e-15, None)",
            "proba = proba / proba.sum(axis=1, keepdims=True)",
        ]
    else:
        prep = ["pred = np.asarray(pred, dtype=float)"]
    lines = [
        f'"""{spec["title"]} (written by the builtin offline agent)."""',
        f"# builtin-spec: {dumps(head)}",
        _IMPORTS,
        'warnings.filterwarnings("ignore")',
        f"SEED = {int(spec['seed'])}",
        "np.random.seed(SEED)",
        f'TASK_KIND = "{spec["kind"]}"',
        f'METRIC = "{metric}"',
        f"GREATER_IS_BETTER = {metric not in LOWER_IS_BETTER}",
        "",
        "",
        "def score_predictions(y_true, pred):",
        '    """The task metric on encoded targets; pred holds class probabilities or values."""',
        *("    " + line for line in prep + body),
    ]
    return "\n".join(lines) + "\n"


def render_subsample_block(limit: int) -> str:
    return "\n".join([
        SUBSAMPLE_BEGIN,
        "# Cap the training rows so every search run stays fast; finalization removes this block.",
        f"SUBSAMPLE_LIMIT = {int(limit)}",
        "if len(train_df) > SUBSAMPLE_LIMIT:",
        "    train_df = train_df.sample(n=SUBSAMPLE_LIMIT, random_state=SEED).reset_index(drop=True)",
        SUBSAMPLE_END,
    ])


_FEATURE_CODE = {
    "missing_count": ["out[\"fe_missing_count\"] = df[FEATURES].isna().sum(axis=1)"],
    "row_stats": [
        "num = df[BASE_NUM].astype(float)",
        "out[\"fe_row_mean\"] = num.mean(axis=1)",
        "out[\"fe_row_std\"] = num.std(axis=1)",
        "out[\"fe_row_max\"] = num.max(axis=1)",
        "out[\"fe_row_min\"] = num.min(axis=1)",
    ],
    "log1p": [
        "for col in BASE_NUM:",
        "    values = df[col].astype(float)",
        "    if values.min() >= 0:",
        "        out[f\"fe_log_{col}\"] = np.log1p(values)",
    ],
    "dates": [
        "for col in DATE_COLS:",
        "    # A text column whose training values look like dates becomes calendar numbers: as a",
        "    # category, a test date never seen in training would be an unknown code.",
        "    text = df[col].astype(str)",
        "    stamp = pd.to_datetime(text.where(text.str.fullmatch(DATE_PATTERN)), errors=\"coerce\", format=\"mixed\")",
        "    out[f\"fe_{col}_year\"] = stamp.dt.year",
        "    out[f\"fe_{col}_month\"] = stamp.dt.month",
        "    out[f\"fe_{col}_dayofweek\"] = stamp.dt.day_of_week",
        "    out[f\"fe_{col}_dayofyear\"] = stamp.dt.day_of_year",
        "    out[f\"fe_{col}_hour\"] = stamp.dt.hour + stamp.dt.minute / 60",
        "    out[f\"fe_{col}_days\"] = (stamp - pd.Timestamp(\"1970-01-01\")) / pd.Timedelta(days=1)",
    ],
    "name_words": [
        "for col in NAME_COLS:",
        "    # A text column whose values nearly all differ (a name, a title) says nothing as a category:",
        "    # out of fold its levels' target means are the prior. Its words often do: a maker comes first",
        "    # (\"chevrolet chevelle malibu\", a solar module's maker and model), a kind last (\"... Field\").",
        "    words = df[col].astype(str).where(df[col].notna()).str.lower().str.findall(r\"[^\\W\\d_]+\")",
        "    out[f\"{col}_first_word\"] = words.str[0]",
        "    out[f\"{col}_last_word\"] = words.str[-1]",
        "    out[f\"fe_{col}_words\"] = words.str.len()",
    ],
    "interactions": [
        "for i, a in enumerate(BASE_NUM[:4]):",
        "    for b in BASE_NUM[i + 1:4]:",
        "        out[f\"fe_{a}_x_{b}\"] = df[a].astype(float) * df[b].astype(float)",
    ],
}
FEATURE_OPTIONS = tuple(_FEATURE_CODE)


def render_data(spec: dict[str, Any], *, indent: str = "") -> str:
    data = spec["data"]
    gene = {k: v for k, v in data.items() if k != "subsample"}
    lines = [f"# builtin-gene: {dumps(gene)}",
             'train_df = pd.read_csv("./input/train.csv")',
             'test_df = pd.read_csv("./input/test.csv")',
             'sample_sub = pd.read_csv("./input/sample_submission.csv")']
    for name in data.get("extra_train", []):
        lines += ["# Extra labelled rows shipped with the task: same columns as train.csv.",
                  f'train_df = pd.concat([train_df, pd.read_csv("./input/{name}")], ignore_index=True)']
    for join in data.get("extra_join", []):
        lines += [f"# Side table keyed by {join['key']}: joined onto both train and test rows.",
                  f'side = pd.read_csv("./input/{join["file"]}")',
                  f'train_df = train_df.merge(side, on="{join["key"]}", how="left")',
                  f'test_df = test_df.merge(side, on="{join["key"]}", how="left")']
    lines += [
        "ID_COL = sample_sub.columns[0]",
        "SUB_COLS = list(sample_sub.columns[1:])",
        "# One submission column that train.csv also has is the target; otherwise the sample asks",
        "# for one probability column per class and the target is the train column test lacks.",
        "PER_CLASS_COLUMNS = not (len(SUB_COLS) == 1 and SUB_COLS[0] in train_df.columns)",
        "if PER_CLASS_COLUMNS:",
        "    TARGET = [c for c in train_df.columns if c not in test_df.columns and c != ID_COL][0]",
        "else:",
        "    TARGET = SUB_COLS[0]",
        "train_df = train_df.dropna(subset=[TARGET]).reset_index(drop=True)",
        "TRAIN_ROWS = len(train_df)  # every labelled row: what the test version fits on",
    ]
    if data.get("subsample"):
        lines.append(render_subsample_block(int(data["subsample"])))
    lines += [
        "FEATURES = [c for c in train_df.columns if c not in (ID_COL, TARGET) and c in test_df.columns]",
        "BASE_NUM = [c for c in FEATURES if pd.api.types.is_numeric_dtype(train_df[c])",
        "            and not pd.api.types.is_bool_dtype(train_df[c])]",
        "DATE_PATTERN = r\"\\d{4}[-/.]\\d{1,2}[-/.]\\d{1,2}([ T]\\d{1,2}:\\d{2}(:\\d{2}(\\.\\d+)?)?)?\"",
        "",
        "",
        "def text_columns(looks_right):",
        '    """The text columns whose training values (their first 500 that are not missing) look right."""',
        "    found = []",
        "    for col in [c for c in FEATURES if c not in BASE_NUM]:",
        "        seen = train_df[col].dropna().astype(str).head(500)",
        "        if len(seen) and looks_right(seen):",
        "            found.append(col)",
        "    return found",
        "",
        "",
        "DATE_COLS = text_columns(lambda seen: seen.str.fullmatch(DATE_PATTERN).mean() >= 0.9)",
        "# Names: text that is not a date, eight in ten of whose values differ. A word's target means",
        "# take a column per class: past MANY_CLASSES they cost more than they tell (airport-state's 43",
        "# classes: its forest's draft 18.9 s -> over 31 s, cut in Phase 1; test accuracy 0.83 -> 0.64).",
        f"MANY_CLASSES = {MANY_CLASSES}",
        "NAME_COLS = [c for c in text_columns(lambda seen: seen.nunique() >= 0.8 * len(seen)) if c not in DATE_COLS]",
        "if TASK_KIND == \"classification\" and train_df[TARGET].nunique() > MANY_CLASSES:",
        "    NAME_COLS = []",
        "",
        "",
        "def add_features(df):",
        '    """Row-wise features only: nothing is computed across rows, so nothing leaks."""',
        "    out = df[FEATURES].copy()",
    ]
    for feature in data.get("features", []):
        lines += ["    " + line for line in _FEATURE_CODE[feature]]
    lines += [
        "    for col in out.columns:",
        "        if col not in BASE_NUM and not str(col).startswith(\"fe_\"):",
        "            # Categorical: strings throughout, missing values kept for the imputer.",
        "            out[col] = out[col].where(out[col].isna(), out[col].astype(str)).astype(object)",
        "    return out",
        "",
        "",
        "X = add_features(train_df)",
        "X_test = add_features(test_df)",
        "NUM_COLS = [c for c in X.columns if c in BASE_NUM or str(c).startswith(\"fe_\")]",
        "CAT_COLS = [c for c in X.columns if c not in NUM_COLS]",
        "if TASK_KIND == \"classification\":",
        "    y, CLASSES = pd.factorize(train_df[TARGET], sort=True)",
        "    CLASSES = np.asarray(CLASSES)",
        "    counts = np.bincount(y)",
        "    stratify = y if counts.min() >= 2 else None",
        "else:",
        "    y = train_df[TARGET].to_numpy(dtype=float)",
        "    stratify = None",
        f"VAL_SIZE = {float(data.get('val_size', 0.2))}",
        "X_tr, X_val, y_tr, y_val = train_test_split(X, y, test_size=VAL_SIZE, random_state=SEED,",
        "                                            stratify=stratify)",
        "",
        "",
        "# A category column with more levels than one-hot keeps columns for reaches the model (unless",
        "# a booster takes it natively) as its levels' target means, cross-fitted on the model's training",
        "# rows: one-hot would lump most levels into one column and ordinal codes put them in an arbitrary",
        "# order (regime-type's 196 countries: LightGBM's cross-validated logloss 0.76 on codes, 0.62 on",
        "# target means; a linear model's 0.95 on twenty one-hot columns, 0.65).",
        "MANY_LEVELS = 20",
        "WIDE_CAT_COLS = [c for c in CAT_COLS if X[c].nunique() > MANY_LEVELS]",
        "NARROW_CAT_COLS = [c for c in CAT_COLS if c not in WIDE_CAT_COLS]",
        "",
        "",
        f"NATIVE_MISSING_FAMILIES = {NATIVE_MISSING_FAMILIES!r}",
        "",
        "",
        "# Imported here, under names of its own: an ablation study renders this gene inside a function that",
        "# imports BaseEstimator further down, which would make the name local to the whole function.",
        "from sklearn.base import BaseEstimator as _Estimator, TransformerMixin as _Transformer",
        "",
        "",
        "class KeepObserved(_Estimator, _Transformer):",
        '    """The numeric columns with their gaps, but for a column with no value in the training rows:',
        '    it has nothing to split on, and scikit-learn\'s histogram booster cannot bin it."""',
        "",
        "    def fit(self, X, y=None):",
        "        self.keep_ = ~np.isnan(np.asarray(X, dtype=float)).all(axis=0)",
        "        return self",
        "",
        "    def transform(self, X):",
        "        return np.asarray(X, dtype=float)[:, self.keep_]",
        "",
        "",
        "def make_preprocessor(num_impute=\"median\", indicators=False, scale=\"none\", encode=\"ordinal\", family=None):",
        '    """Built unfitted into each model\'s Pipeline, so it only ever sees that model\'s training rows.',
        '    num_impute="native": numeric gaps stay gaps for a family that splits on them itself',
        '    (NATIVE_MISSING_FAMILIES: the gap is information, a median hides it); medians for any other."""',
        "    def scaler():",
        "        return {",
        "            \"none\": \"passthrough\",",
        "            \"standard\": StandardScaler(),",
        "            \"robust\": RobustScaler(),",
        "            \"quantile\": QuantileTransformer(n_quantiles=200, output_distribution=\"normal\", random_state=SEED),",
        "        }[scale]",
        "",
        "    if num_impute == \"native\" and family in NATIVE_MISSING_FAMILIES:",
        "        impute = KeepObserved()",
        "    else:",
        "        impute = SimpleImputer(strategy=\"median\" if num_impute == \"native\" else num_impute, add_indicator=indicators)",
        "    numeric = Pipeline([(\"impute\", impute),",
        "                        (\"scale\", scaler())])",
        "    # A float target of whole numbers would pass for classes: say what the target is. Class",
        "    # shares are left in [0, 1] as one-hot columns are (scaled, movie-genre's 33 of them over-fit",
        "    # a linear model: logloss 1.37 -> 1.45); means of a regression target are in its units.",
        "    classes = TASK_KIND == \"classification\"",
        "    kind = {\"target_type\": \"auto\" if classes else \"continuous\"}",
        "    if TargetEncoder().get_params()[\"shuffle\"] == \"deprecated\":  # scikit-learn 1.9 takes the folds",
        "        means = TargetEncoder(**kind, cv=(StratifiedKFold if classes else KFold)(5, shuffle=True, random_state=SEED))",
        "    else:",
        "        means = TargetEncoder(**kind, shuffle=True, random_state=SEED)",
        "    wide = Pipeline([(\"encode\", means), (\"scale\", \"passthrough\" if classes else scaler())])",
        "    if encode == \"onehot\":",
        "        encoder = OneHotEncoder(handle_unknown=\"infrequent_if_exist\", max_categories=MANY_LEVELS, sparse_output=False)",
        "    else:",
        "        encoder = OrdinalEncoder(handle_unknown=\"use_encoded_value\", unknown_value=-1)",
        "    categorical = Pipeline([(\"impute\", SimpleImputer(strategy=\"most_frequent\")), (\"encode\", encoder)])",
        "    if encode == \"native\":",
        "        # Codes first, so a booster can be told which leading columns are categories.",
        "        # Every category goes to the booster as it is, however many levels it has (the search weighs",
        "        # this against target means: 30 stores, native better; 196 countries, target means).",
        "        return ColumnTransformer([(\"cat\", categorical, CAT_COLS), (\"num\", numeric, NUM_COLS)])",
        "    return ColumnTransformer([(\"num\", numeric, NUM_COLS), (\"cat\", categorical, NARROW_CAT_COLS),",
        "                              (\"wide\", wide, WIDE_CAT_COLS)])",
        "",
        "",
        "def category_kwargs(prep, family=\"lightgbm\"):",
        '    """With encode="native" a booster splits on sets of categories of the leading code columns',
        '    (unseen ones arrive as -1, which both boosters treat as missing), instead of on their',
        "    arbitrary order. scikit-learn's histogram booster takes a column of at most HIST_LEVELS",
        '    levels (a bin each); one of more stays ordinal codes to it."""',
        "    if prep.get(\"encode\") != \"native\" or not CAT_COLS:",
        "        return {}",
        "    if family == \"hist_gradient_boosting\":",
        "        fits = [i for i, c in enumerate(CAT_COLS) if X[c].nunique() <= HIST_LEVELS]",
        "        return {\"categorical_features\": fits} if fits else {}",
        "    return {\"categorical_feature\": list(range(len(CAT_COLS)))}",
        "",
        "",
        "HIST_LEVELS = 255  # HistGradientBoosting's default max_bins, which no gene changes",
        "",
        "",
        f"PREP = {py_repr(data['prep'])}",
    ]
    return "\n".join(indent + line if line else line for line in "\n".join(lines).split("\n"))
