"""The DATA gene, part 2: how each model's rows reach it (its preprocessor, built unfitted).

Numeric gaps are imputed (or, for a booster that splits on gaps, kept: ``KeepObserved``), numbers
scaled as the gene says, narrow categories one-hot or ordinal coded, wide ones (more levels than
MANY_LEVELS) replaced by their levels' target means, cross-fitted, names past MANY_CLASSES
classes by their alphabetical rank (``AlphabeticalRank``); ``category_kwargs`` tells a
booster which columns are categories when the gene encodes them "native". ``PREP`` is the gene's
preprocessing, which a member without its own passes to ``make_preprocessor``.
"""

# The scikit-learn base classes are imported where and as the script imports them (see the comment
# there):
# ruff: noqa: E402, I001
# mypy: allow-untyped-defs
# Scripts carry no annotations: their empty collections are filled further down.
# mypy: disable-error-code="var-annotated"

from engine.agents.builtin.script_blocks.names import (
    CAT_COLS,
    NAME_RANK_COLS,
    NUM_COLS,
    SEED,
    TASK_KIND,
    ColumnTransformer,
    KFold,
    OneHotEncoder,
    OrdinalEncoder,
    Pipeline,
    QuantileTransformer,
    RobustScaler,
    SimpleImputer,
    StandardScaler,
    StratifiedKFold,
    TargetEncoder,
    X,
    np,
)

# --- script ---


# A category column with more levels than one-hot keeps columns for reaches the model (unless
# a booster takes it natively) as its levels' target means, cross-fitted on the model's training
# rows: one-hot would lump most levels into one column and ordinal codes put them in an arbitrary
# order (regime-type's 196 countries: LightGBM's cross-validated logloss 0.76 on codes, 0.62 on
# target means; a linear model's 0.95 on twenty one-hot columns, 0.65).
MANY_LEVELS = 20
RANK_COLS = [c for c in CAT_COLS if c in NAME_RANK_COLS]
WIDE_CAT_COLS = [c for c in CAT_COLS if X[c].nunique() > MANY_LEVELS and c not in RANK_COLS]
NARROW_CAT_COLS = [c for c in CAT_COLS if c not in WIDE_CAT_COLS and c not in RANK_COLS]


NATIVE_MISSING_FAMILIES = ('lightgbm', 'hist_gradient_boosting')


# Imported here, under names of its own: an ablation study renders this gene inside a function that
# imports BaseEstimator further down, which would make the name local to the whole function.
from sklearn.base import BaseEstimator as _Estimator, TransformerMixin as _Transformer


class KeepObserved(_Estimator, _Transformer):
    """The numeric columns with their gaps, but for a column with no value in the training rows:
    it has nothing to split on, and scikit-learn's histogram booster cannot bin it."""

    def fit(self, X, y=None):
        self.keep_ = ~np.isnan(np.asarray(X, dtype=float)).all(axis=0)
        return self

    def transform(self, X):
        return np.asarray(X, dtype=float)[:, self.keep_]


class AlphabeticalRank(_Estimator, _Transformer):
    """Each value's place among the training rows' values in alphabetical order, in [0, 1]. A name
    never seen in training still lands among its neighbours (a Polish town's name among the Polish
    ones), where an ordinal code would make every such name the same unknown -1."""

    def fit(self, X, y=None):
        self.levels_ = [np.unique(column) for column in np.asarray(X, dtype=str).T]
        return self

    def transform(self, X):
        columns = np.asarray(X, dtype=str).T
        return np.column_stack([np.searchsorted(levels, column) / len(levels)
                                for levels, column in zip(self.levels_, columns)])


def make_preprocessor(num_impute="median", indicators=False, scale="none", encode="ordinal", family=None):
    """Built unfitted into each model's Pipeline, so it only ever sees that model's training rows.
    num_impute="native": numeric gaps stay gaps for a family that splits on them itself
    (NATIVE_MISSING_FAMILIES: the gap is information, a median hides it); medians for any other."""
    def scaler():
        return {
            "none": "passthrough",
            "standard": StandardScaler(),
            "robust": RobustScaler(),
            "quantile": QuantileTransformer(n_quantiles=200, output_distribution="normal", random_state=SEED),
        }[scale]

    if num_impute == "native" and family in NATIVE_MISSING_FAMILIES:
        impute = KeepObserved()
    else:
        impute = SimpleImputer(strategy="median" if num_impute == "native" else num_impute, add_indicator=indicators)
    numeric = Pipeline([("impute", impute),
                        ("scale", scaler())])
    # A float target of whole numbers would pass for classes: say what the target is. Class
    # shares are left in [0, 1] as one-hot columns are (scaled, movie-genre's 33 of them over-fit
    # a linear model: logloss 1.37 -> 1.45); means of a regression target are in its units.
    classes = TASK_KIND == "classification"
    kind = {"target_type": "auto" if classes else "continuous"}
    if TargetEncoder().get_params()["shuffle"] == "deprecated":  # scikit-learn 1.9 takes the folds
        means = TargetEncoder(**kind, cv=(StratifiedKFold if classes else KFold)(5, shuffle=True, random_state=SEED))
    else:
        means = TargetEncoder(**kind, shuffle=True, random_state=SEED)
    wide = Pipeline([("encode", means), ("scale", "passthrough" if classes else scaler())])
    if encode == "onehot":
        encoder = OneHotEncoder(handle_unknown="infrequent_if_exist", max_categories=MANY_LEVELS, sparse_output=False)
    else:
        encoder = OrdinalEncoder(handle_unknown="use_encoded_value", unknown_value=-1)
    categorical = Pipeline([("impute", SimpleImputer(strategy="most_frequent")), ("encode", encoder)])
    if encode == "native":
        # Codes first, so a booster can be told which leading columns are categories.
        # Every category goes to the booster as it is, however many levels it has (the search weighs
        # this against target means: 30 stores, native better; 196 countries, target means).
        return ColumnTransformer([("cat", categorical, CAT_COLS), ("num", numeric, NUM_COLS)])
    ranks = Pipeline([("impute", SimpleImputer(strategy="most_frequent")), ("rank", AlphabeticalRank())])
    return ColumnTransformer([("num", numeric, NUM_COLS), ("cat", categorical, NARROW_CAT_COLS),
                              ("wide", wide, WIDE_CAT_COLS), ("rank", ranks, RANK_COLS)])


def category_kwargs(prep, family="lightgbm"):
    """With encode="native" a booster splits on sets of categories of the leading code columns
    (unseen ones arrive as -1, which both boosters treat as missing), instead of on their
    arbitrary order. scikit-learn's histogram booster takes a column of at most HIST_LEVELS
    levels (a bin each); one of more stays ordinal codes to it."""
    if prep.get("encode") != "native" or not CAT_COLS:
        return {}
    if family == "hist_gradient_boosting":
        fits = [i for i, c in enumerate(CAT_COLS) if X[c].nunique() <= HIST_LEVELS]
        return {"categorical_features": fits} if fits else {}
    return {"categorical_feature": list(range(len(CAT_COLS)))}


HIST_LEVELS = 255  # HistGradientBoosting's default max_bins, which no gene changes


PREP = {}
