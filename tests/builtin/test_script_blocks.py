"""The script blocks (engine/agents/builtin/script_blocks/) as code: how the renderer fills them,
and what their code does when run — each block executed on its own, with the names the blocks
before it would have defined, on small real data."""

from __future__ import annotations

import ast
from importlib import resources
from typing import Any

import numpy as np
import pandas as pd
import pytest
from sklearn import metrics
from sklearn.ensemble import RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import Pipeline

from engine.agents.builtin import blocks
from engine.agents.builtin.blocks import BlockError, block, body, fill, insert, regions, script_text, set_constants
from engine.agents.builtin.catalog import FAMILIES, ROW_BAGGED_CLASSES, SEED_VARYING_CLASSES, example_code
from engine.agents.builtin.render_data import FEATURE_OPTIONS, render_preamble
from engine.agents.builtin.render_train import COMBINE_METHODS
from engine.agents.builtin.spec import (
    CLASSIFICATION_METRICS,
    LOWER_IS_BETTER,
    REGRESSION_METRICS,
    SUBSAMPLE_BEGIN,
    SUBSAMPLE_END,
)

BLOCK_FILES = sorted(p.name[:-3] for p in resources.files("engine.agents.builtin.script_blocks").iterdir()
                     if p.name.endswith(".py") and p.name not in ("__init__.py", "names.py"))


def run(code: str, **names: Any) -> dict[str, Any]:
    """Execute a block's code with the names earlier blocks would have defined; its namespace."""
    namespace = {"np": np, "pd": pd, "metrics": metrics, "SEED": 0, **names}
    exec(compile(code, "<block>", "exec"), namespace)
    return namespace


# --- how blocks are read and filled ---------------------------------------------------------------


@pytest.mark.parametrize("name", BLOCK_FILES)
def test_every_block_says_where_its_script_text_starts_and_that_text_parses(name: str) -> None:
    assert blocks.source(name).count(blocks.SCRIPT_MARK + "\n") == 1
    text = blocks.script_text(name)
    assert "script_blocks.names" not in text
    ast.parse(text)


def test_a_constant_is_rewritten_keeping_its_comment_and_must_be_there_once() -> None:
    text = "A = 1\nB = 2  # why\nAB = 3\n"
    assert set_constants(text, A="10", B="'x'") == "A = 10\nB = 'x'  # why\nAB = 3\n"
    with pytest.raises(BlockError, match="C is set 0 times"):
        set_constants(text, C="1")


def test_every_placeholder_must_be_filled() -> None:
    assert fill('f(__ARGS__, "__NAME__.csv")\n', ARGS="a=1", NAME="x", UNUSED="y") == 'f(a=1, "x.csv")\n'
    with pytest.raises(BlockError, match="__NAME__ is not filled"):
        fill("__NAME__\n")
    assert fill("def __init__(self): pass\n") == "def __init__(self): pass\n"   # dunders are not placeholders


def test_an_insertion_point_takes_the_lines_at_its_indentation_or_goes() -> None:
    text = "def f():\n    a = 1\n    # insert more\n    return a\n"
    assert insert(text, more="b = 2\n\nc = 3") == "def f():\n    a = 1\n    b = 2\n\n    c = 3\n    return a\n"
    assert insert(text, more="") == "def f():\n    a = 1\n    return a\n"
    with pytest.raises(BlockError, match="more is not given"):
        insert(text)


def test_a_region_is_kept_or_dropped_and_its_markers_never_stay() -> None:
    text = "a\n# when extra:\nb\n# end extra\n# when not extra:\nc\n# end extra\nd\n"
    assert regions(text, extra=True) == "a\nb\nd\n"
    assert regions(text, extra=False) == "a\nc\nd\n"
    with pytest.raises(BlockError, match="region extra is not decided"):
        regions(text)
    with pytest.raises(BlockError, match="no region for"):
        regions(text, extra=True, other=False)


def test_a_function_body_comes_one_level_out() -> None:
    assert body("features", "missing_count") == 'out["fe_missing_count"] = df[FEATURES].isna().sum(axis=1)'
    with pytest.raises(BlockError, match="defines no function"):
        body("features", "no_such_feature")


def test_the_subsample_block_is_between_the_markers_finalization_removes() -> None:
    text = block("subsample").rstrip("\n")
    assert text.startswith(SUBSAMPLE_BEGIN) and text.endswith(SUBSAMPLE_END)


def test_the_features_offered_are_the_functions_of_the_features_block() -> None:
    assert FEATURE_OPTIONS == ("missing_count", "row_stats", "log1p", "dates", "name_words", "interactions")


def test_each_blend_method_has_its_block_and_each_metric_its_function() -> None:
    for method in COMBINE_METHODS:
        assert {"fit_blender", "blend"} <= set(blocks.functions(f"blend_{method}"))
    assert set(CLASSIFICATION_METRICS | REGRESSION_METRICS) < set(blocks.functions("metrics"))


# --- the blocks' code, run ------------------------------------------------------------------------


@pytest.mark.parametrize("metric", sorted(CLASSIFICATION_METRICS | REGRESSION_METRICS))
def test_score_predictions_is_the_metric_itself(metric: str) -> None:
    """The preamble's score_predictions, run, scores as scikit-learn does (never negated), on
    proper probabilities. Only the function runs here: the rest of the preamble sets the process's
    environment (OMP_NUM_THREADS), which the scripts the other tests start would inherit."""
    kind = "classification" if metric in CLASSIFICATION_METRICS else "regression"
    preamble = render_preamble({"kind": kind, "metric": metric, "seed": 0, "title": "t"})
    assert f"\nGREATER_IS_BETTER = {metric not in LOWER_IS_BETTER}\n" in preamble
    script = run(preamble[preamble.index("def score_predictions("):])
    rng = np.random.RandomState(0)
    if kind == "classification":
        y = np.array([0, 1, 2, 1, 0, 2, 2, 1, 0, 1])
        proba = rng.dirichlet(np.ones(3), size=len(y)) * 3    # rows that do not sum to one
        proper = proba / proba.sum(axis=1, keepdims=True)
        expected = {"accuracy": metrics.accuracy_score(y, proper.argmax(1)),
                    "balanced_accuracy": metrics.balanced_accuracy_score(y, proper.argmax(1)),
                    "logloss": metrics.log_loss(y, proper), "f1": metrics.f1_score(y, proper.argmax(1), average="macro"),
                    "mcc": metrics.matthews_corrcoef(y, proper.argmax(1)),
                    "qwk": metrics.cohen_kappa_score(y, proper.argmax(1), weights="quadratic"),
                    "roc_auc": metrics.roc_auc_score(y, proper, multi_class="ovr")}[metric]
        assert script["score_predictions"](y, proba) == pytest.approx(expected)
    else:
        y, pred = rng.uniform(1, 5, 20), rng.uniform(1, 5, 20)
        expected = {"rmse": np.sqrt(metrics.mean_squared_error(y, pred)), "mse": metrics.mean_squared_error(y, pred),
                    "mae": metrics.mean_absolute_error(y, pred), "medae": metrics.median_absolute_error(y, pred),
                    "r2": metrics.r2_score(y, pred),
                    "rmsle": np.sqrt(metrics.mean_squared_log_error(y, pred))}[metric]
        assert script["score_predictions"](y, list(pred)) == pytest.approx(expected)


def test_the_features_are_row_wise_and_named_as_the_model_reads_them() -> None:
    df = pd.DataFrame({"a": [1.0, 4.0, None], "b": [2.0, 0.0, 3.0], "when": ["2024-01-31", "2023-06-01", None],
                       "who": ["Ford Model T", "Volvo Amazon", "Ford Focus"]})
    names = {"FEATURES": list(df.columns), "BASE_NUM": ["a", "b"], "DATE_COLS": ["when"], "NAME_COLS": ["who"],
             "DATE_PATTERN": r"\d{4}[-/.]\d{1,2}[-/.]\d{1,2}"}
    code = "def add_features(df, out):\n" + "".join(
        "    " + line + "\n" for feature in FEATURE_OPTIONS for line in body("features", feature).split("\n"))
    out = df.copy()
    run(code, **names)["add_features"](df, out)
    assert out["fe_missing_count"].tolist() == [0, 0, 2]
    assert out["fe_row_mean"].tolist() == [1.5, 2.0, 3.0]
    assert out["fe_when_year"].tolist()[:2] == [2024, 2023] and np.isnan(out["fe_when_year"][2])
    assert out["who_first_word"].tolist() == ["ford", "volvo", "ford"] and out["who_last_word"][0] == "t"
    assert out["fe_a_x_b"].tolist()[:2] == [2.0, 0.0]
    assert "fe_log_a" in out and "fe_log_b" in out


def _preprocessor(X: pd.DataFrame, num: list[str], cat: list[str], ranked: list[str]) -> dict[str, Any]:
    """preprocessor.py run with the names data.py would have defined for X."""
    from sklearn import compose, impute, model_selection, pipeline, preprocessing
    return run(script_text("preprocessor"), X=X, NUM_COLS=num, CAT_COLS=cat, NAME_RANK_COLS=ranked,
               TASK_KIND="classification", ColumnTransformer=compose.ColumnTransformer, KFold=model_selection.KFold,
               StratifiedKFold=model_selection.StratifiedKFold, Pipeline=pipeline.Pipeline,
               SimpleImputer=impute.SimpleImputer, **{name: getattr(preprocessing, name) for name in (
                   "OneHotEncoder", "OrdinalEncoder", "QuantileTransformer", "RobustScaler", "StandardScaler",
                   "TargetEncoder")})


def test_names_past_ten_classes_reach_the_models_as_their_alphabetical_rank() -> None:
    """One column a name, not one of target means per class: an unseen name lands among its
    alphabetical neighbours, a missing one is the most frequent name's place."""
    towns = ["Aachen", "Berlin", "Bonn", "Krakow", "Lodz", "Poznan", "Warsaw", "Zagreb", "Split", "Bremen"] * 8
    X = pd.DataFrame({"name": [f"{town} {i}" for i, town in enumerate(towns)], "x": np.arange(80.0)})
    y = np.arange(80) % 16  # sixteen classes: target means would give a column for each
    ranked = _preprocessor(X, ["x"], ["name"], ["name"])
    assert ranked["WIDE_CAT_COLS"] == [] and ranked["NARROW_CAT_COLS"] == []
    prep = ranked["make_preprocessor"]().fit(X, y)
    unseen = pd.DataFrame({"name": ["Kiel", "A", "Zz", None], "x": [0.0, 0.0, 0.0, 0.0]})
    out = prep.transform(unseen)
    assert out.shape == (4, 2)
    levels = sorted(X["name"])
    assert out[0, 1] == pytest.approx(np.searchsorted(levels, "Kiel") / 80) and 0 < out[0, 1] < 1
    assert out[1, 1] == 0.0 and out[2, 1] == 1.0
    means = _preprocessor(X, ["x"], ["name"], [])["make_preprocessor"]().fit(X, y)
    assert means.transform(unseen).shape == (4, 1 + 16)


@pytest.mark.parametrize("method", ["mean", "median", "rank"])
def test_a_fixed_blend_learns_nothing_and_keeps_the_shape(method: str) -> None:
    script = run(block(f"blend_{method}"), TASK_KIND="classification")
    preds = [np.array([[0.2, 0.8], [0.6, 0.4]]), np.array([[0.4, 0.6], [0.9, 0.1]]), np.array([[0.3, 0.7], [0.0, 1.0]])]
    assert script["fit_blender"](preds, np.array([1, 0])) is None
    blended = script["blend"](preds, None)
    assert blended.shape == (2, 2)
    if method == "mean":
        assert blended == pytest.approx(np.mean(preds, axis=0))
    if method == "median":
        assert blended == pytest.approx(np.array([[0.3, 0.7], [0.6, 0.4]]))


def test_the_weighted_blend_gives_the_better_member_the_weight() -> None:
    y = np.array([0.0, 1.0, 2.0, 3.0])
    good, bad = y + 0.1, y[::-1].copy()
    script = run(block("blend_weighted"), BLEND_ROUNDS=10, GREATER_IS_BETTER=False,
                 score_predictions=lambda y_true, pred: float(np.mean((y_true - pred) ** 2)))
    weights = script["fit_blender"]([good, bad], y)
    assert weights.sum() == pytest.approx(1.0) and weights[0] > 0.5
    assert script["blend"]([good, bad], weights) == pytest.approx(weights[0] * good + weights[1] * bad)


def test_calibration_keeps_proper_probabilities_and_its_floor() -> None:
    code = body("calibration", "calibrate")
    script = run("def calibrate(pred, setting):\n" + "".join("    " + line + "\n" for line in code.split("\n")))
    proba = np.array([[0.999999, 0.000001], [0.5, 0.5]])
    calibrated = script["calibrate"](proba, (2.0, 0.1))
    assert calibrated.sum(axis=1) == pytest.approx([1.0, 1.0])
    assert calibrated.min() >= 0.05 and calibrated[0, 0] < proba[0, 0]
    assert script["calibrate"](proba, (1.0, 0.0)) == pytest.approx(proba)


def _seed_bag(**gene: Any) -> dict[str, Any]:
    """seed_bag.py run after early_stop.py would have run (its imports and deadline in place)."""
    import time

    from sklearn.base import BaseEstimator, clone
    code = regions(block("seed_bag", SEED_VARYING=repr(SEED_VARYING_CLASSES), ROW_BAGGED=repr(ROW_BAGGED_CLASSES),
                         BAG_SEEDS=str(gene.get("seeds", 3))), early_stop=True)
    return run(fill(code, ROW_BAG="BAG_SEEDS, rows=BAG_ROWS"), time=time, BaseEstimator=BaseEstimator, clone=clone,
               DEADLINE=float("inf"), make_members=gene["members"])


def test_a_seed_bag_fits_each_seed_of_a_model_that_varies_and_one_of_one_that_does_not() -> None:
    """Members are pipelines, as make_members builds them: the bag finds the seeded step."""
    X, y = np.random.RandomState(0).normal(size=(60, 3)), np.arange(60) % 2
    linear = Pipeline([("model", LogisticRegression())])
    script = _seed_bag(members=lambda: [("forest", Pipeline([("model", RandomForestClassifier(n_estimators=5,
                                                                                             random_state=0))])),
                                        ("linear", linear)])
    (_, forest), (_, kept) = script["members"]
    assert type(forest).__name__ == "SeedBagged" and kept is linear
    forest.fit(X, y)
    assert [m.named_steps["model"].random_state for m in forest.estimators_] == [0, 1, 2]
    proba = forest.predict_proba(X)
    assert proba.shape == (60, 2) and proba.sum(axis=1) == pytest.approx(np.ones(60))


def test_the_example_code_runs_alone(capsys: pytest.CaptureFixture[str]) -> None:
    """The retriever's example, a block with nothing before it, runs as it is written."""
    run(example_code(FAMILIES["random_forest"], "classification"))
    assert 0.5 < float(capsys.readouterr().out) <= 1.0


@pytest.mark.parametrize("columns", [4, 100, 274, 766])
def test_a_boosted_tree_reads_fewer_columns_and_bins_only_on_a_wide_matrix(columns: int) -> None:
    """The gene's colsample_bytree holds up to COLUMNS_PER_TREE columns a tree; past that the
    fraction shrinks to that many and the bins to WIDE_BINS. Other families are never touched."""
    gene = {"lightgbm": {"colsample_bytree": 0.7, "reg_lambda": 5.0}, "linear": {"C": 1.0}}
    script = run(block("regularization", REG_CFG=repr(gene)), X_tr=np.zeros((3, columns)))
    per_tree, wide_bins = script["COLUMNS_PER_TREE"], script["WIDE_BINS"]
    booster = script["reg_kwargs"]("lightgbm", "lightgbm")
    assert script["reg_kwargs"]("linear", "linear") == {"C": 1.0}
    if columns < script["FEW_COLUMNS"]:
        assert booster == {"reg_lambda": 5.0}
    elif 0.7 * columns <= per_tree:
        assert booster == gene["lightgbm"]
    else:
        assert booster["colsample_bytree"] * columns == pytest.approx(per_tree, abs=0.1)
        assert booster["max_bin"] == wide_bins and booster["reg_lambda"] == 5.0
