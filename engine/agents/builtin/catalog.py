"""The model families the builtin agent knows: constructors, defaults, search spaces, snippets.

Everything a role needs to know about "a random forest" lives here, so retrieval, rendering,
planning and mutation agree on names, default hyper-parameters and which gene (MODEL or
REGULARIZATION) each hyper-parameter belongs to.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass, field
from typing import Any

from engine.agents.builtin.blocks import block, fill

# Preprocessing a family works best with; a member whose family prefers something else than the
# solution's DATA gene carries its own override.
TREE_PREP = {"num_impute": "median", "indicators": False, "scale": "none", "encode": "ordinal"}
# The boosters split on a missing value themselves (each split sends the gaps to the side that
# does better), so numeric gaps reach them as gaps ("native"): a median in their place makes a
# galaxy without a V magnitude (two thirds of galaxy-velocity's rows, the faint and far ones) look
# like a typical one. LightGBM's cross-validated RMSE there 2724 with medians, 2705 native.
BOOSTER_PREP = {**TREE_PREP, "num_impute": "native"}
# The families whose numeric gaps may reach them as NaN (``num_impute="native"``); any other
# member of a solution with that DATA gene gets medians (``make_preprocessor``).
NATIVE_MISSING_FAMILIES = ("lightgbm", "hist_gradient_boosting")
DENSE_PREP = {"num_impute": "median", "indicators": True, "scale": "standard", "encode": "onehot"}


@dataclass(frozen=True)
class Family:
    key: str
    title: str
    clf_class: str | None
    reg_class: str | None
    module: str
    # MODEL-gene hyper-parameters (searched), per task kind.
    model_params: dict[str, dict[str, Any]]
    # REGULARIZATION-gene hyper-parameters (searched), per task kind.
    reg_params: dict[str, dict[str, Any]]
    # Ordered candidate values per hyper-parameter: the planner moves along these lists.
    space: dict[str, list[Any]]
    # Keyword arguments always passed, never searched (rendered as code, not stored in genes).
    fixed: dict[str, dict[str, str]]
    prep: dict[str, Any]
    class_weight: bool
    keywords: tuple[str, ...]
    tag: str = ""
    notes: dict[str, str] = field(default_factory=dict)
    # Fits differ from seed to seed (row or column draws, random initial weights), so averaging
    # fits under several seeds lowers the error (``seeds`` in the TRAINING_TRICKS gene).
    seed_varies: bool = False
    # A booster whose fits the seed does not change (no row or column draws): a bag fits it on
    # seeded samples of the rows instead (``bags_rows``), which varies it as a seed would.
    row_bagged: bool = False


def _both(d: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {"classification": dict(d), "regression": dict(d)}


def _forest(*, key: str, title: str, estimator: str, n_estimators: int, regression_max_features: float,
            space: dict[str, list[Any]], keywords: tuple[str, ...], tag: str) -> Family:
    """A scikit-learn forest (``<estimator>Classifier`` and ``<estimator>Regressor``): what the
    two forests share, their size, features per split and search space apart."""
    return Family(
        key=key,
        title=title,
        clf_class=f"{estimator}Classifier",
        reg_class=f"{estimator}Regressor",
        module="sklearn.ensemble",
        model_params={
            "classification": {"n_estimators": n_estimators, "max_features": "sqrt"},
            "regression": {"n_estimators": n_estimators, "max_features": regression_max_features},
        },
        reg_params=_both({"min_samples_leaf": 1, "max_depth": None}),
        space=space,
        # One job: threaded forests sum tree probabilities in timing-dependent order, so the
        # same script could print a score that differs in its last digits from run to run.
        fixed=_both({"n_jobs": "1", "random_state": "SEED"}),
        prep=TREE_PREP,
        class_weight=True,
        keywords=keywords,
        tag=tag,
        seed_varies=True,
    )


FAMILIES: dict[str, Family] = {
    f.key: f
    for f in [
        Family(
            key="lightgbm",
            title="LightGBM gradient-boosted trees",
            clf_class="LGBMClassifier",
            reg_class="LGBMRegressor",
            module="lightgbm",
            # A low learning rate with a few hundred small, well-regularised trees: noisy
            # competition tables with a few thousand rows punish deep, lightly regularised boosting.
            model_params=_both({"n_estimators": 400, "learning_rate": 0.03, "num_leaves": 15}),
            reg_params=_both({"min_child_samples": 40, "reg_lambda": 5.0, "subsample": 0.8,
                              "colsample_bytree": 0.7}),
            space={
                "n_estimators": [200, 400, 600, 1000, 1500],
                "learning_rate": [0.01, 0.02, 0.03, 0.05, 0.1],
                "num_leaves": [7, 15, 31, 63],
                "min_child_samples": [5, 10, 20, 40, 80],
                "reg_lambda": [0.0, 1.0, 5.0, 20.0],
                "subsample": [0.6, 0.7, 0.8, 1.0],
                "colsample_bytree": [0.4, 0.5, 0.7, 0.9, 1.0],
            },
            # subsample_freq=1 turns row bagging on. Its threads are the script's cores (one while
            # scripts run side by side); for a given count of threads its fits are reproducible.
            fixed=_both({"subsample_freq": "1", "n_jobs": "CORES", "verbose": "-1", "random_state": "SEED"}),
            prep=BOOSTER_PREP,
            class_weight=True,
            keywords=("lightgbm", "lgbm"),
            tag="LightGBM",
            seed_varies=True,
        ),
        Family(
            key="hist_gradient_boosting",
            title="Histogram gradient boosting (LightGBM-style GBDT)",
            clf_class="HistGradientBoostingClassifier",
            reg_class="HistGradientBoostingRegressor",
            module="sklearn.ensemble",
            model_params=_both({"max_iter": 300, "learning_rate": 0.06, "max_leaf_nodes": 31}),
            reg_params=_both({"l2_regularization": 0.0, "min_samples_leaf": 20}),
            space={
                "max_iter": [100, 200, 300, 500, 800],
                "learning_rate": [0.02, 0.04, 0.06, 0.1, 0.15],
                "max_leaf_nodes": [15, 31, 63, 127],
                "l2_regularization": [0.0, 0.1, 1.0, 5.0],
                "min_samples_leaf": [5, 10, 20, 40, 80],
            },
            fixed=_both({"early_stopping": "False", "random_state": "SEED"}),
            prep=BOOSTER_PREP,
            class_weight=True,
            row_bagged=True,
            keywords=("histgradient", "hist gradient", "lightgbm", "lgbm", "xgboost", "xgb", "catboost", "gbdt", "histogram"),
            tag="HistGBM",
        ),
        _forest(
            key="random_forest",
            title="Random forest",
            estimator="RandomForest",
            n_estimators=300,
            regression_max_features=0.5,
            space={
                "n_estimators": [100, 200, 300, 500, 800],
                "max_features": ["sqrt", 0.3, 0.5, 0.8, 1.0],
                "min_samples_leaf": [1, 2, 4, 8],
                "max_depth": [None, 24, 16, 10, 6],
            },
            keywords=("random forest", "randomforest", " rf "),
            tag="RandomForest",
        ),
        _forest(
            key="extra_trees",
            title="Extremely randomized trees",
            estimator="ExtraTrees",
            n_estimators=400,
            regression_max_features=0.7,
            space={
                "n_estimators": [100, 200, 400, 600, 900],
                "max_features": ["sqrt", 0.3, 0.5, 0.7, 1.0],
                "min_samples_leaf": [1, 2, 4, 8],
                "max_depth": [None, 24, 16, 10],
            },
            keywords=("extra tree", "extratree", "extremely randomized"),
            tag="ExtraTrees",
        ),
        Family(
            key="gradient_boosting",
            title="Gradient boosting (scikit-learn GBM)",
            clf_class="GradientBoostingClassifier",
            reg_class="GradientBoostingRegressor",
            module="sklearn.ensemble",
            model_params=_both({"n_estimators": 200, "learning_rate": 0.05, "max_depth": 3}),
            reg_params=_both({"subsample": 0.9, "min_samples_leaf": 5}),
            space={
                "n_estimators": [100, 200, 300, 500],
                "learning_rate": [0.02, 0.05, 0.1, 0.2],
                "max_depth": [2, 3, 4, 5, 6],
                "subsample": [0.6, 0.8, 0.9, 1.0],
                "min_samples_leaf": [1, 3, 5, 10, 20],
            },
            fixed=_both({"random_state": "SEED"}),
            prep=TREE_PREP,
            class_weight=False,
            row_bagged=True,
            keywords=("gradient boosting", "gradientboosting", "gbm", "boosted trees"),
            tag="GBM",
        ),
        Family(
            key="linear",
            title="Regularised linear model (logistic / ridge regression)",
            clf_class="LogisticRegression",
            reg_class="Ridge",
            module="sklearn.linear_model",
            model_params={"classification": {"max_iter": 2000}, "regression": {}},
            reg_params={"classification": {"C": 1.0}, "regression": {"alpha": 1.0}},
            space={
                "max_iter": [1000, 2000],
                "C": [0.01, 0.1, 0.3, 1.0, 3.0, 10.0],
                "alpha": [0.01, 0.1, 1.0, 3.0, 10.0, 30.0],
            },
            fixed={"classification": {"random_state": "SEED"}, "regression": {}},
            prep=DENSE_PREP,
            class_weight=True,
            keywords=("logistic", "ridge", "linear", "lasso", "elastic"),
            tag="Linear",
        ),
        Family(
            key="knn",
            title="k-nearest neighbours",
            clf_class="KNeighborsClassifier",
            reg_class="KNeighborsRegressor",
            module="sklearn.neighbors",
            model_params=_both({"n_neighbors": 15, "weights": "distance"}),
            reg_params=_both({}),
            space={"n_neighbors": [5, 10, 15, 25, 40, 60], "weights": ["distance", "uniform"]},
            fixed=_both({}),
            prep=DENSE_PREP,
            class_weight=False,
            keywords=("knn", "nearest neighbo", "k-nn"),
            tag="kNN",
        ),
        Family(
            key="svm",
            title="Support vector machine (RBF kernel)",
            clf_class="SVC",
            reg_class="SVR",
            module="sklearn.svm",
            model_params={"classification": {"gamma": "scale"}, "regression": {"gamma": "scale", "epsilon": 0.1}},
            reg_params=_both({"C": 1.0}),
            space={
                "gamma": ["scale", "auto"],
                "epsilon": [0.01, 0.05, 0.1, 0.2],
                "C": [0.1, 0.3, 1.0, 3.0, 10.0, 30.0],
            },
            fixed={"classification": {"probability": "True", "random_state": "SEED"}, "regression": {}},
            prep=DENSE_PREP,
            class_weight=True,
            keywords=("svm", "svc", "svr", "support vector"),
            tag="SVM",
        ),
        Family(
            key="mlp",
            title="Multi-layer perceptron",
            clf_class="MLPClassifier",
            reg_class="MLPRegressor",
            module="sklearn.neural_network",
            model_params=_both({"hidden_layer_sizes": [64, 32], "learning_rate_init": 0.001, "max_iter": 300}),
            reg_params=_both({"alpha": 0.0001}),
            space={
                "hidden_layer_sizes": [[32], [64, 32], [128, 64], [256, 128]],
                "learning_rate_init": [0.0003, 0.001, 0.003],
                "max_iter": [200, 300, 500],
                "alpha": [0.00001, 0.0001, 0.001, 0.01, 0.1],
            },
            fixed=_both({"early_stopping": "True", "random_state": "SEED"}),
            prep=DENSE_PREP,
            class_weight=False,
            keywords=("mlp", "perceptron", "neural", "deep", "pytorch", "tabnet", "realmlp", "resnet"),
            tag="MLP",
            seed_varies=True,
        ),
    ]
}

# LightGBM is optional (extra ``ml``): proposed only where it is installed, so every script the
# agent writes runs; scikit-learn's histogram GBM is the fallback.
LIGHTGBM_INSTALLED = importlib.util.find_spec("lightgbm") is not None
if not LIGHTGBM_INSTALLED:
    del FAMILIES["lightgbm"]

# Best-first order per task kind: what a sensible engineer would try first on tabular data.
PREFERENCE = {
    "classification": ["lightgbm", "hist_gradient_boosting", "random_forest", "extra_trees", "linear",
                       "gradient_boosting", "svm", "knn", "mlp"],
    "regression": ["lightgbm", "hist_gradient_boosting", "random_forest", "extra_trees", "gradient_boosting",
                   "linear", "svm", "knn", "mlp"],
}
PREFERENCE = {kind: [k for k in keys if k in FAMILIES] for kind, keys in PREFERENCE.items()}

# Retrieval pairs the first booster with a regularised linear model, the model least like it:
# a second booster adds little to a blend. Measured at --time-limit 120 (bench_automl, seed 0):
# iris logloss 0.84 -> 0.09, diabetes RMSE 58.8 -> 56.1, credit-default AUC 0.946 -> 0.953,
# wage-education logloss 1.367 -> 1.361; bike-sharing, where the linear model loses, unchanged.
#
# A boosting round on K classes grows K trees; a forest's tree serves every class. Past
# MANY_CLASSES a booster's draft costs many times a forest's, so the forests lead: zip-state
# (52 classes) at --time-limit 120 spent 21 s of Phase 1's 11 on LightGBM's draft and never
# drafted a forest, which scores higher on it at a tenth of the cost.
MANY_CLASSES = 10
FORESTS = ("random_forest", "extra_trees")


def retrieval_order(kind: str, classes: int | None = None) -> list[str]:
    """PREFERENCE for this kind with the linear model second; forests first on many classes."""
    keys = PREFERENCE[kind]
    if kind == "classification" and classes is not None and classes > MANY_CLASSES:
        keys = [k for k in keys if k in FORESTS] + [k for k in keys if k not in FORESTS]
    order = [k for k in keys if k != "linear"]
    return order[:1] + ["linear"] + order[1:] if "linear" in keys else order


def family_for_name(text: str) -> Family | None:
    """Map a free-form model name (ours or another retriever's) onto a family, or None.

    Estimator class names first, longest first ("HistGradientBoostingClassifier" contains
    "GradientBoostingClassifier"), then keywords, then family keys and broad words.
    """
    low = f" {text.lower()} "
    classes = sorted(((c.lower(), f) for f in FAMILIES.values() for c in (f.clf_class, f.reg_class) if c),
                     key=lambda item: -len(item[0]))
    for name, family in classes:
        if name in low.replace(" ", ""):
            return family
    for family in FAMILIES.values():
        if any(word in low for word in family.keywords):
            return family
    for key in FAMILIES:
        if key in low or key.replace("_", " ") in low:
            return FAMILIES[key]
    if "tree" in low or "forest" in low:
        return FAMILIES["random_forest"]
    if "boost" in low:
        return FAMILIES["hist_gradient_boosting"]
    return None


def estimator_class(family: Family, kind: str) -> str:
    name = family.clf_class if kind == "classification" else family.reg_class
    assert name is not None
    return name


def example_code(family: Family, kind: str) -> str:
    """A short snippet that runs on synthetic data: the retriever's 'example code'
    (``script_blocks/example.py``)."""
    cls = estimator_class(family, kind)
    params = {**family.model_params[kind], **family.reg_params[kind]}
    args = ", ".join(f"{k}={py_literal(k, v)}" for k, v in params.items())
    # The script's own names (its seed, its cores) as the values a standalone snippet runs with.
    standalone = {"SEED": "0", "CORES": "1"}
    fixed = ", ".join(f"{k}={standalone.get(v, v)}" for k, v in family.fixed[kind].items())
    args = ", ".join(a for a in (args, fixed) if a)
    maker = "make_classification" if kind == "classification" else "make_regression"
    scoring = "roc_auc" if kind == "classification" else "neg_root_mean_squared_error"
    return fill(block("example"), MAKER=maker, MODULE=family.module, ESTIMATOR=cls, ARGS=args, SCORING=repr(scoring))


def py_literal(name: str, value: Any) -> str:
    """Python source for a hyper-parameter value (JSON has no tuples; sklearn wants one here)."""
    if name == "hidden_layer_sizes" and isinstance(value, list):
        return repr(tuple(value))
    return repr(value)


def varies_with_seed(family: Family, params: dict[str, Any]) -> bool:
    """Whether fits of this model differ from seed to seed: a family that draws in every fit,
    or boosting on a row sample (``subsample`` below 1, in the MODEL or REGULARIZATION gene).
    A seed-bagged script applies the same rule to its estimators (render_train's
    ``varies_with_seed``, from ``SEED_VARYING_CLASSES``)."""
    subsample = params.get("subsample")
    return family.seed_varies or (isinstance(subsample, (int, float)) and subsample < 1)


def bags_rows(family: Family, params: dict[str, Any]) -> bool:
    """Whether a bag fits this model on seeded row samples: a booster the seed does not change.
    The script applies the same rule (render_bag's ``bags_rows``, from ``ROW_BAGGED_CLASSES``)."""
    return family.row_bagged and not varies_with_seed(family, params)


# The estimator classes of the families that draw in every fit.
SEED_VARYING_CLASSES = tuple(sorted({cls for f in FAMILIES.values() if f.seed_varies
                                     for cls in (f.clf_class, f.reg_class) if cls}))
ROW_BAGGED_CLASSES = tuple(sorted({cls for f in FAMILIES.values() if f.row_bagged
                                   for cls in (f.clf_class, f.reg_class) if cls}))
