"""The builtin scripts' metrics agree with `engine grade`'s (engine/tasks/metrics.py) on the
registry's metrics, one target or several, and the agent reads its metric names from the one
registry (engine/tasks/metric_registry.py)."""

from __future__ import annotations

import functools
import os
from unittest import mock

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.agents.builtin import blocks
from engine.agents.builtin.render_data import render_preamble
from engine.agents.builtin.spec import canonical_metric, metric_function, task_kind_and_metric
from engine.tasks.metric_registry import MAP_AT_K, METRICS
from engine.tasks.metrics import score_predictions as grade_scores
from engine.tasks.model import ScoringSpec
from events.domain import TaskType


@functools.cache
def _rendered_score(metric: str, kind: str, several: bool):
    """score_predictions and TARGET_COLUMNS of a rendered script's preamble."""
    spec = {"kind": kind, "metric": metric, "seed": 0, "title": "t"} | ({"targets": ["a", "b"]} if several else {})
    space: dict[str, object] = {}
    # The preamble sets the process's environment (OMP_NUM_THREADS) as a script's first lines do;
    # run here, that would reach every script this test worker starts later.
    with mock.patch.dict(os.environ):
        exec(render_preamble(spec), space)
    return space["score_predictions"], space.get("TARGET_COLUMNS", [])


def _script_metric(metric: str, kind: str, columns: list[object] | None = None):
    """The script's score_predictions for ``metric`` (several targets: ``columns``)."""
    score, target_columns = _rendered_score(metric, kind, bool(columns))
    target_columns[:] = columns or []
    return score


def test_every_registry_metric_has_a_script_name_and_kind():
    for name, info in METRICS.items():
        registry_name = "map@3" if name == MAP_AT_K else name
        script = canonical_metric(registry_name)
        assert script is not None, name
        assert metric_function(script) in blocks.functions("metrics"), name

        class Task:
            evaluation_metric = registry_name
            task_type = info.task_type
        kind, _ = task_kind_and_metric(Task)
        assert kind == ("regression" if info.task_type == TaskType.regression else "classification")


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from([1, 2, 3]))
def test_several_value_targets_score_as_graded(seed, targets):
    rng = np.random.default_rng(seed)
    truth, pred = rng.normal(5, 2, (30, targets)), rng.normal(5, 2, (30, targets))
    names = [f"t{i}" for i in range(targets)]
    spec = ScoringSpec(metric="mcrmse", id_column="id", target_columns=tuple(names))
    graded = grade_scores(spec, pd.DataFrame(truth, columns=names), pd.DataFrame(pred, columns=names))
    assert _script_metric("mcrmse", "regression", list(range(targets)))(truth, pred) == pytest.approx(graded)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000))
def test_multi_label_auc_scores_as_graded(seed):
    rng = np.random.default_rng(seed)
    truth = np.column_stack([np.r_[0, 1, rng.integers(0, 2, 28)] for _ in range(3)])
    positive = rng.random((30, 3))
    names = ["a", "b", "c"]
    spec = ScoringSpec(metric="mean_columnwise_roc_auc", id_column="id", target_columns=tuple(names))
    graded = grade_scores(spec, pd.DataFrame(truth, columns=names), pd.DataFrame(positive, columns=names))
    # The script holds each label's two class probabilities side by side.
    side_by_side = np.column_stack([np.column_stack([1 - positive[:, j], positive[:, j]]) for j in range(3)])
    columns = [slice(0, 2), slice(2, 4), slice(4, 6)]
    assert _script_metric("mean_columnwise_roc_auc", "classification", columns)(truth, side_by_side) == pytest.approx(graded)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000))
def test_qwk_and_map3_score_as_graded(seed):
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 5, 40)
    proba = rng.random((40, 5))
    labels = np.array([1, 2, 3, 4, 5])   # the classes' codes 0..4 stand for ratings 1..5
    qwk = ScoringSpec(metric="quadratic_weighted_kappa", id_column="id", target_columns=("r",))
    graded = grade_scores(qwk, pd.DataFrame({"r": labels[truth]}), pd.DataFrame({"r": labels[proba.argmax(axis=1)]}))
    assert _script_metric("qwk", "classification")(truth, proba) == pytest.approx(graded)
    ranked = [" ".join(str(labels[c]) for c in row) for row in np.argsort(-proba, axis=1, kind="stable")[:, :3]]
    map3 = ScoringSpec(metric="map@3", id_column="id", target_columns=("r",))
    graded = grade_scores(map3, pd.DataFrame({"r": labels[truth]}), pd.DataFrame({"r": ranked}))
    assert _script_metric("map@3", "classification")(truth, proba) == pytest.approx(graded)
